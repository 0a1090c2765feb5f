// Runs one generated kernel on the host stand-in API (api/dataflow/dataflow_api.h).
// Usage: harness ARGS [key=path ...]
//   ARGS: comma-separated runtime args; @dram, @dram_out and @scratch are the addresses of those buffers.
//   dram=FILE (input buffer), dram_out=BYTES:FILE (output buffer, written back), feed=FILE (pages consumers
//   wait for), pushed=FILE (pages producers push), scratch=FILE (1024 words written back), page=BYTES.
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "api/dataflow/dataflow_api.h"

void kernel_main();

namespace {
uint8_t* low_memory(size_t bytes) {
    void* p = mmap(nullptr, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        std::exit(2);
    }
    return static_cast<uint8_t*>(p);
}
std::vector<uint8_t> slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}
void spill(const std::string& path, const uint8_t* data, size_t size) {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data), size);
}
}  // namespace

int main(int argc, char** argv) {
    harness::cb_memory = low_memory(32 * harness::kCbRegion);
    harness::semaphores = low_memory(4096);
    uint8_t* scratch = low_memory(4096);
    uint8_t* dram = nullptr;
    uint8_t* dram_out = nullptr;
    size_t dram_out_size = 0;
    std::string pushed_path, scratch_path, dram_out_path;
    for (int i = 2; i < argc; ++i) {
        std::string option(argv[i]);
        std::string key = option.substr(0, option.find('=')), value = option.substr(option.find('=') + 1);
        if (key == "dram") {
            std::vector<uint8_t> bytes = slurp(value);
            dram = low_memory(bytes.size());
            std::copy(bytes.begin(), bytes.end(), dram);
        } else if (key == "dram_out") {
            dram_out_size = std::stoul(value.substr(0, value.find(':')));
            dram_out_path = value.substr(value.find(':') + 1);
            dram_out = low_memory(dram_out_size);
        } else if (key == "feed") {
            harness::feed = slurp(value);
        } else if (key == "pushed") {
            pushed_path = value;
        } else if (key == "scratch") {
            scratch_path = value;
        } else if (key == "page") {
            harness::cb_page_size = std::stoul(value);
        }
    }
    std::string args(argv[1]);
    size_t start = 0;
    while (start < args.size()) {
        size_t end = args.find(',', start);
        std::string token = args.substr(start, end == std::string::npos ? std::string::npos : end - start);
        uint32_t value = token == "@dram"       ? harness::address(dram)
                         : token == "@dram_out" ? harness::address(dram_out)
                         : token == "@scratch"  ? harness::address(scratch)
                                                : static_cast<uint32_t>(std::stoul(token));
        harness::runtime_args.push_back(value);
        start = end == std::string::npos ? args.size() : end + 1;
    }
    kernel_main();
    if (!pushed_path.empty()) spill(pushed_path, harness::pushed.data(), harness::pushed.size());
    if (!scratch_path.empty()) spill(scratch_path, scratch, 4096);
    if (!dram_out_path.empty()) spill(dram_out_path, dram_out, dram_out_size);
    return 0;
}

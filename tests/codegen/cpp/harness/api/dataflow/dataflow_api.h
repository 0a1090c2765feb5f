// A host stand-in for the TT-Metalium data-movement API, so tests can run generated kernels with g++.
// Memory is real host memory below 4 GiB (mmap MAP_32BIT), so 32-bit L1 addresses and 64-bit
// NOC addresses are plain pointers. Circular buffers are single regions: every cb_push_back
// appends the pushed pages to a log, every cb_wait_front fills the region from a feed.
// NOC reads and writes are memcpy; calls with no data effect are logged to stdout.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#define tt_l1_ptr

#ifndef CT_ARGS
#define CT_ARGS 0
#endif
constexpr uint32_t kCompileTimeArgs[] = {CT_ARGS};
#define get_compile_time_arg_val(i) kCompileTimeArgs[i]

namespace harness {
inline std::vector<uint32_t> runtime_args;
inline std::vector<uint32_t> common_runtime_args;
inline uint8_t* cb_memory = nullptr;  // 32 regions of kCbRegion bytes
constexpr uint32_t kCbRegion = 1 << 16;
inline uint32_t cb_page_size = 2048;
inline std::vector<uint8_t> pushed;    // every page pushed, in order
inline std::vector<uint8_t> feed;      // pages consumers wait for, in order
inline size_t feed_position = 0;
inline uint8_t* semaphores = nullptr;
inline uint32_t address(const void* p) { return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p)); }
inline void* pointer(uint64_t a) { return reinterpret_cast<void*>(static_cast<uintptr_t>(a)); }
}  // namespace harness

inline uint8_t noc_index = 0;
inline uint8_t my_x[2] = {3, 3};
inline uint8_t my_y[2] = {5, 5};

template <typename T>
T get_arg_val(int i) { return static_cast<T>(harness::runtime_args.at(i)); }
template <typename T>
T get_common_arg_val(int i) { return static_cast<T>(harness::common_runtime_args.at(i)); }

inline uint32_t get_write_ptr(uint32_t cb) { return harness::address(harness::cb_memory + cb * harness::kCbRegion); }
inline uint32_t get_read_ptr(uint32_t cb) { return get_write_ptr(cb); }
inline uint32_t get_tile_size(uint32_t) { return harness::cb_page_size; }
inline void cb_reserve_back(uint32_t, uint32_t) {}
inline void cb_push_back(uint32_t cb, uint32_t pages) {
    const uint8_t* start = harness::cb_memory + cb * harness::kCbRegion;
    harness::pushed.insert(harness::pushed.end(), start, start + pages * harness::cb_page_size);
}
inline void cb_wait_front(uint32_t cb, uint32_t pages) {
    const size_t bytes = pages * harness::cb_page_size;
    std::memcpy(harness::cb_memory + cb * harness::kCbRegion, harness::feed.data() + harness::feed_position, bytes);
}
inline void cb_pop_front(uint32_t, uint32_t pages) { harness::feed_position += pages * harness::cb_page_size; }

template <std::size_t CTA_OFFSET, std::size_t CRTA_OFFSET = 0>
struct TensorAccessorArgs {
    static constexpr uint32_t next_compile_time_args_offset() { return CTA_OFFSET + 2; }
};

struct TensorAccessor {
    uint32_t base;
    uint32_t page_size;
    template <typename Args>
    TensorAccessor(const Args&, uint32_t base_address, uint32_t page) : base(base_address), page_size(page) {}
};

inline uint64_t get_noc_addr(uint32_t id, const TensorAccessor& s, uint32_t offset = 0) {
    return uint64_t(s.base) + uint64_t(id) * s.page_size + offset;
}
inline uint64_t get_noc_addr(uint32_t x, uint32_t y, uint32_t addr) {
    std::printf("get_noc_addr %u %u\n", x, y);
    return addr;
}
inline uint64_t get_noc_multicast_addr(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1, uint32_t addr) {
    std::printf("get_noc_multicast_addr %u %u %u %u\n", x0, y0, x1, y1);
    return addr;
}
inline void noc_async_read(uint64_t src, uint32_t dst, uint32_t size) {
    std::memcpy(harness::pointer(dst), harness::pointer(src), size);
}
inline void noc_async_write(uint32_t src, uint64_t dst, uint32_t size) {
    std::memcpy(harness::pointer(dst), harness::pointer(src), size);
}
inline void noc_async_read_page(uint32_t id, const TensorAccessor& s, uint32_t dst, uint32_t offset = 0) {
    noc_async_read(get_noc_addr(id, s, offset), dst, s.page_size);
}
inline void noc_async_write_page(uint32_t id, const TensorAccessor& s, uint32_t src, uint32_t size = 0,
                                 uint32_t offset = 0) {
    noc_async_write(src, get_noc_addr(id, s, offset), size ? size : s.page_size);
}
inline void noc_async_read_barrier() {}
inline void noc_async_write_barrier() { std::printf("noc_async_write_barrier\n"); }
inline void noc_async_writes_flushed() {}

inline uint32_t get_semaphore(uint32_t id) { return harness::address(harness::semaphores + 16 * id); }
inline void noc_semaphore_set(volatile uint32_t* sem, uint32_t value) { *sem = value; }
inline void noc_semaphore_wait(volatile uint32_t* sem, uint32_t value) {
    std::printf("noc_semaphore_wait %u %s\n", value, *sem == value ? "ready" : "would block");
}
inline void noc_semaphore_set_multicast(uint32_t src, uint64_t dst, uint32_t num_dests, bool linked = false) {
    std::printf("noc_semaphore_set_multicast %u %u %s\n", *static_cast<uint32_t*>(harness::pointer(src)), num_dests,
                linked ? "linked" : "unlinked");
    (void)dst;
}

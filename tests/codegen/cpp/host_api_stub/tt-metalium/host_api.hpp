// Declarations of the TT-Metalium 0.69 host API that tilefold's generated main.cpp uses, written
// from the public headers (host_api.hpp, kernel_types.hpp, circular_buffer_config.hpp, buffer.hpp,
// core_coord.hpp) so tests can type-check main.cpp (g++ -fsyntax-only) without the host SDK.
// Only the names, types and member order matter here; nothing is defined.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tt {
enum class DataFormat : uint8_t {
    Float32 = 0, Float16 = 1, Bfp8 = 2, Bfp4 = 3, Tf32 = 4, Float16_b = 5, Bfp8_b = 6, Bfp4_b = 7, Int32 = 8,
    UInt16 = 9, Lf8 = 10, Bfp2 = 11, Int8 = 14, Bfp2_b = 15, UInt32 = 24, UInt8 = 30, Invalid = 0xff
};
}  // namespace tt

struct CoreCoord {
    std::size_t x = 0;
    std::size_t y = 0;
    constexpr CoreCoord() = default;
    constexpr CoreCoord(std::size_t x, std::size_t y) : x(x), y(y) {}
};

class CoreRange {
public:
    CoreRange(const CoreCoord& start, const CoreCoord& end);
};

class CoreRangeSet {
public:
    CoreRangeSet(const CoreRange& core_range);
    CoreRangeSet(std::vector<CoreRange>&& core_ranges);
};

enum class MathFidelity : uint8_t { LoFi = 0, HiFi2 = 2, HiFi3 = 3, HiFi4 = 4, Invalid = 0xff };

namespace tt::tt_metal {

enum class BufferType { DRAM, L1, SYSTEM_MEMORY, L1_SMALL, TRACE };
enum class TensorMemoryLayout { INTERLEAVED = 0, HEIGHT_SHARDED = 2, WIDTH_SHARDED = 3, BLOCK_SHARDED = 4 };
enum class ShardOrientation { ROW_MAJOR, COL_MAJOR };
enum class ShardDistributionStrategy { ROUND_ROBIN_1D, GRID_2D };
enum class DataMovementProcessor { RISCV_0 = 0, RISCV_1 = 1 };
enum NOC : uint8_t { RISCV_0_default = 0, RISCV_1_default = 1, NOC_0 = 0, NOC_1 = 1 };

class Shape {
public:
    Shape(std::initializer_list<uint32_t> dims);
};

struct ShardSpecBuffer {
    ShardSpecBuffer(const CoreRangeSet& core_sets, const std::array<uint32_t, 2>& shard_shape,
                    const ShardOrientation& shard_orientation, const std::array<uint32_t, 2>& page_shape,
                    const std::array<uint32_t, 2>& tensor2d_shape_in_pages);
};

class BufferDistributionSpec {
public:
    BufferDistributionSpec(const Shape& tensor_shape_in_pages, const Shape& shard_shape_in_pages,
                           const CoreRangeSet& core_range_set, ShardOrientation shard_orientation,
                           ShardDistributionStrategy strategy = ShardDistributionStrategy::ROUND_ROBIN_1D);
};

class BufferShardingArgs {
public:
    BufferShardingArgs() = default;
    BufferShardingArgs(std::nullopt_t);
    BufferShardingArgs(BufferDistributionSpec buffer_distribution_spec);
    BufferShardingArgs(ShardSpecBuffer shard_spec, TensorMemoryLayout buffer_layout);
};

class Buffer;

using KernelHandle = std::uint32_t;
using CBHandle = uintptr_t;

struct DataMovementConfig {
    DataMovementProcessor processor = DataMovementProcessor::RISCV_0;
    NOC noc = NOC::RISCV_0_default;
    uint8_t noc_mode = 0;
    std::vector<uint32_t> compile_args;
    std::map<std::string, std::string> defines;
};

struct ComputeConfig {
    MathFidelity math_fidelity = MathFidelity::HiFi4;
    bool fp32_dest_acc_en = false;
    bool dst_full_sync_en = false;
    std::vector<uint8_t> unpack_to_dest_mode;
    bool bfp8_pack_precise = false;
    bool math_approx_mode = false;
    std::vector<uint32_t> compile_args;
    std::map<std::string, std::string> defines;
};

class Program {
public:
    Program();
    Program(Program&& other) noexcept;
    Program(const Program& other) = delete;
};

Program CreateProgram();

KernelHandle CreateKernel(Program& program, const std::string& file_name,
                          const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
                          const std::variant<DataMovementConfig, ComputeConfig>& config);

class CircularBufferConfig {
public:
    CircularBufferConfig(uint32_t total_size, const std::map<uint8_t, tt::DataFormat>& data_format_spec);
    CircularBufferConfig& set_page_size(uint8_t buffer_index, uint32_t page_size);
    CircularBufferConfig& set_globally_allocated_address(const Buffer& buffer);
};

CBHandle CreateCircularBuffer(Program& program, const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
                              const CircularBufferConfig& config);

uint32_t CreateSemaphore(Program& program, const std::variant<CoreRange, CoreRangeSet>& core_spec,
                         uint32_t initial_value);

void SetRuntimeArgs(const Program& program, KernelHandle kernel,
                    const std::variant<CoreCoord, CoreRange, CoreRangeSet>& core_spec,
                    std::initializer_list<uint32_t> runtime_args);

void SetCommonRuntimeArgs(const Program& program, KernelHandle kernel_id, std::initializer_list<uint32_t> runtime_args);

}  // namespace tt::tt_metal

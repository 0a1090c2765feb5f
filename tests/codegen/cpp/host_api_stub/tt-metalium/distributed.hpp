// Declarations of the TT-Metalium 0.69 mesh API that tilefold's generated main.cpp uses (see host_api.hpp).
#pragma once

#include <tt-metalium/host_api.hpp>

namespace tt::tt_metal::distributed {

using DeviceAddr = uint64_t;

class MeshShape {};

class MeshCoordinateRange {
public:
    explicit MeshCoordinateRange(const MeshShape& shape);
};

class MeshCommandQueue;

class MeshDevice {
public:
    static std::shared_ptr<MeshDevice> create_unit_mesh(int device_id);
    MeshCommandQueue& mesh_command_queue(std::optional<uint8_t> cq_id = std::nullopt);
    const MeshShape& shape() const;
    CoreCoord worker_core_from_logical_core(const CoreCoord& logical_core) const;
    bool close();
};

struct DeviceLocalBufferConfig {
    DeviceAddr page_size = 0;
    BufferType buffer_type = BufferType::DRAM;
    BufferShardingArgs sharding_args;
    std::optional<bool> bottom_up;
};

struct ReplicatedBufferConfig {
    DeviceAddr size = 0;
};

using MeshBufferConfig = std::variant<ReplicatedBufferConfig>;

class MeshBuffer {
public:
    static std::shared_ptr<MeshBuffer> create(const MeshBufferConfig& mesh_buffer_config,
                                              const DeviceLocalBufferConfig& device_local_config,
                                              MeshDevice* mesh_device,
                                              std::optional<DeviceAddr> address = std::nullopt);
    DeviceAddr address() const;
    Buffer* get_reference_buffer() const;
};

class MeshWorkload {
public:
    MeshWorkload();
    void add_program(const MeshCoordinateRange& device_range, Program&& program);
};

template <typename DType>
void EnqueueWriteMeshBuffer(MeshCommandQueue& mesh_cq, std::shared_ptr<MeshBuffer>& mesh_buffer,
                            const std::vector<DType>& src, bool blocking = false);

template <typename DType>
void EnqueueReadMeshBuffer(MeshCommandQueue& mesh_cq, std::vector<DType>& dst,
                           std::shared_ptr<MeshBuffer>& mesh_buffer, bool blocking = true);

void EnqueueMeshWorkload(MeshCommandQueue& mesh_cq, MeshWorkload& mesh_workload, bool blocking);

void Finish(MeshCommandQueue& mesh_cq);

}  // namespace tt::tt_metal::distributed

// Declaration of the TT-Metalium 0.69 TensorAccessorArgs host class (see host_api.hpp).
#pragma once

#include <tt-metalium/distributed.hpp>

namespace tt::tt_metal {

class TensorAccessorArgs {
public:
    explicit TensorAccessorArgs(const distributed::MeshBuffer& buffer);
    void append_to(std::vector<uint32_t>& compile_time_args) const;
};

}  // namespace tt::tt_metal

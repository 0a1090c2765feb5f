"""The host-side Program model shared by the C++ host emitter and the simulator."""

from tilefold.program.args import BufferAddress, NocX, NocY, TensorAccessorArgsRef
from tilefold.program.buffers import Buffer
from tilefold.program.circular_buffers import CircularBuffer
from tilefold.program.kernels import ComputeConfig, DataMovementConfig, Kernel
from tilefold.program.program import Program, Semaphore, core_range_set

__all__ = [
    "BufferAddress", "NocX", "NocY", "TensorAccessorArgsRef", "Buffer", "CircularBuffer", "ComputeConfig",
    "DataMovementConfig", "Kernel", "Program", "Semaphore", "core_range_set",
]

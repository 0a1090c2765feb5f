"""The host-side Program model shared by the C++ host emitter and the simulator.

Names are imported from their submodules on first use, so a module needing only
:mod:`.buffers` does not import the IR (xDSL) that kernels carry."""

import importlib

_EXPORTS = {
    "args": ("BufferAddress", "HalfWords", "NocX", "NocY", "TensorAccessorArgsRef"),
    "buffers": ("Buffer",),
    "circular_buffers": ("CircularBuffer",),
    "kernels": ("ComputeConfig", "DataMovementConfig", "Kernel"),
    "program": ("Program", "Semaphore", "core_range_set"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'tilefold.program' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tilefold.program.{module}"), name)
    globals()[name] = value
    return value


__all__ = list(_MODULE_OF)

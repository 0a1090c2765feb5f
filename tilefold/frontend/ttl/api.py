"""The names a TT-Lang script uses: ``ttl.operation``, ``ttl.compute``, ``ttl.copy``, ``ttl.math`` ...

Reads: nothing. Writes: nothing. :mod:`tilefold.ttl` re-exports these names so that a script
written for TT-Lang runs with ``import tilefold.ttl as ttl`` (or, under ``tilefold sim``, with
its own ``import ttl``).

Functions used in the operation's body run there (``make_dataflow_buffer_like``, ``grid_size``,
``node``, ``Pipe``, ``PipeNet``); functions that describe device work (``copy``, the block
functions, ``GroupTransfer``, ``signpost``, ``call_extern_func``) are recognized by the front end inside kernel
functions and raise an error when Python calls them anywhere else.
"""

from __future__ import annotations

import types
from typing import Generic, Tuple, TypeVar, Union

from tilefold.errors import KernelError
from tilefold.frontend.ttl.capture import current
from tilefold.frontend.ttl.dataflow_buffers import (DataflowBuffer, DFBAllocationGroup, make_dataflow_buffer_like,
                                                    make_dfb, make_dfb_allocation_group, make_tensor_backed_dfb)
from tilefold.frontend.ttl.devices import (AllToAllTransfer, AxisNeighborTransfer, DeviceDomain, DeviceRange, DeviceRef,
                                          DomainComponent, Fabric1D, Fabric2D, GatherTransfer, ScatterTransfer,
                                          StencilTransfer, TransferEdge, TransferGraph)
from tilefold.frontend.ttl.extern_calls import (DFBAccess, DFBEffect, DispatchCondition, ScalarType, call_extern_func,
                                                dfb_descriptor, get_dfb_id, raw_addr)
from tilefold.frontend.ttl.dfb_boundaries import (DFBReconfiguration, DFBReset, reconfigure_dfbs,
                                                 reset_all_dfbs, reset_dataflow_buffers, reset_dfbs)
from tilefold.frontend.ttl.device_calls import GroupTransfer, copy, copy_tensor_page, signpost, static_range, wait_any
from tilefold.frontend.ttl.dispatch import DispatchAccess, DispatchArgument, DispatchStorage, ResolvedDispatcher
from tilefold.frontend.ttl.grid import grid_size, node
from tilefold.frontend.ttl.kernels import PIPE_SOURCE_KERNEL, Kernel, KernelKind, compute, datamovement
from tilefold.frontend.ttl.math_api import UnsupportedName, block, math, top_level, unsafe
from tilefold.frontend.ttl.operation import Operation, operation
from tilefold.frontend.ttl.pipes import Pipe, PipeMapping, PipeNet
from tilefold.frontend.ttl.runtime_resources import (CoreRuntimeArgs, KernelDefine, KernelRuntimeResources,
                                                     ProgramRuntimeResources)
from tilefold.frontend.ttl.semaphores import Semaphore
from tilefold.caller import checked_arguments, missing_name, user_location
from tilefold.frontend.ttl.host_types import ROW_MAJOR_LAYOUT, TILE_LAYOUT

# the classes a script makes in an operation's body or at module level: arguments their constructors
# cannot take are one error at the user's line (functions are checked where they are defined)
for _cls, _name in ((Pipe, "ttl.Pipe"), (PipeMapping, "ttl.PipeMapping"), (Semaphore, "ttl.Semaphore"),
                    (DeviceDomain, "ttl.DeviceDomain"), (DeviceRange, "ttl.DeviceRange"),
                    (TransferEdge, "ttl.TransferEdge"), (AxisNeighborTransfer, "ttl.AxisNeighborTransfer"),
                    (StencilTransfer, "ttl.StencilTransfer"), (GatherTransfer, "ttl.GatherTransfer"),
                    (ScatterTransfer, "ttl.ScatterTransfer"), (AllToAllTransfer, "ttl.AllToAllTransfer"),
                    (Fabric1D, "ttl.Fabric1D"), (DFBReset, "ttl.DFBReset"),
                    (DFBReconfiguration, "ttl.DFBReconfiguration"), (Kernel, "ttl.Kernel")):
    if not getattr(_cls.__init__, "__wrapped__", None):
        _cls.__init__ = checked_arguments(_name)(_cls.__init__)
del _cls, _name

TILE_SHAPE = (32, 32)
TILE_SIZE = 32

# The type names TT-Lang's annotations use.
Size = int
Shape = Tuple[int, ...]
NodeCoord = Union[int, Tuple[int, ...]]
NodeRange = Tuple[Union[int, slice], ...]
DstT = TypeVar("DstT")


def Program(*kernels, grid=None, pipenets=None):  # noqa: N802 - TT-Lang's name
    """``ttl.Program(compute, dm0, dm1)(*tensors)`` at the end of an operation's body (the pre-1.0
    spelling): the operation already runs the kernel functions its body defines, so the call only
    checks that they are kernel functions of this operation."""
    location = user_location()
    op = current("ttl.Program")
    for k in kernels:
        if not any(k is d or k is d.function for d in op.kernels):
            raise KernelError(f"ttl.Program takes the @ttl.compute() / @ttl.datamovement() functions of this "
                              f"operation, not {getattr(k, '__name__', type(k).__name__)}", location)

    def run(*args, **kwargs):
        return None

    return run


class SrcPipeIdentity(Generic[DstT]):
    """The pipe an ``if_src`` body runs for (``pipe.dst``); for annotations — kernels receive it."""


class DstPipeIdentity:
    """The pipe an ``if_dst`` body runs for (``pipe.src``); for annotations — kernels receive it."""


# Deprecated spellings kept for older scripts (pre-1.0 TT-Lang): ttl.kernel is ttl.operation,
# ttl.core is ttl.node, circular buffers are dataflow buffers (buffer_factor= is block_count=).
make_circular_buffer_like = make_dataflow_buffer_like
CircularBuffer = DataflowBuffer
kernel = operation
core = node
# ttl.atom is the older spelling of an operation whose body has no kernel functions (its
# statements are split into kernels); ttl.DFB is the dataflow buffer type in annotations of
# operations called from other operations' bodies (inlined, :mod:`.inlining`).
atom = operation
DFB = DataflowBuffer


class _KernelValueType(type):
    """The type of a value a kernel works with, for annotations (``blk: ttl.TensorBlock``) and
    ``isinstance``: an instance is a value of the front end's class of that name in
    :mod:`.values` (loaded when first asked, as kernels are built)."""

    def __instancecheck__(cls, value) -> bool:
        from tilefold.frontend.ttl import values

        return cls.matches(value, values)


class TensorBlock(metaclass=_KernelValueType):
    """``ttl.TensorBlock``: a block of a dataflow buffer (``dfb.reserve()``, ``dfb.wait()``, a subview)."""

    @staticmethod
    def matches(value, values) -> bool:
        return isinstance(value, values.Block)


class CopyTransferHandler(metaclass=_KernelValueType):
    """``ttl.CopyTransferHandler``: what ``ttl.copy`` returns, to ``wait()`` on."""

    @staticmethod
    def matches(value, values) -> bool:
        return isinstance(value, (values.Transfer, values.GroupTransfer))


class ReceiveRequest(metaclass=_KernelValueType):
    """``ttl.ReceiveRequest``: a posted receive from a pipe (``ttl.copy(pipe, blk)``), as ``ttl.wait_any`` takes."""

    @staticmethod
    def matches(value, values) -> bool:
        return isinstance(value, values.Transfer) and value.kind == "recv"


class ReadyReceive(metaclass=_KernelValueType):
    """``ttl.ReadyReceive``: what ``ttl.wait_any`` returns (``index()``: the receive it completed)."""

    @staticmethod
    def matches(value, values) -> bool:
        return isinstance(value, values.ReadyReceive)


class IndexType:
    """``ttl.IndexType`` (pre-1.0): how a ``ttl.TensorAccessor`` indexes its tensor."""

    TILE = "TILE"


def TensorAccessor(tensor, index_type=IndexType.TILE):  # noqa: N802 - TT-Lang's name
    """``ttl.TensorAccessor(t, index_type=ttl.IndexType.TILE)`` (pre-1.0): indexing it in tiles is
    indexing the tensor itself, as 1.x writes it (``ttl.copy(t[r0:r1, c], blk)``), so the accessor is
    the tensor."""
    if index_type != IndexType.TILE:
        raise KernelError(f"ttl.TensorAccessor(index_type={index_type!r}): only ttl.IndexType.TILE exists; in 1.x "
                          "index the tensor itself in tiles (ttl.copy(t[r, c], blk))", user_location())
    return tensor


# Pre-1.0 names without a 1.x meaning to map to: using one is one error naming what 1.x writes.
PRE_1_0_NAMES = {
    "is_tiled": "ttl.is_tiled(t, shape) is pre-1.0 TT-Lang; 1.x checks a tensor's layout as "
                "t.layout == ttnn.TILE_LAYOUT",
    "pykernel_gen": "ttl.pykernel_gen is pre-1.0 TT-Lang; 1.x writes @ttl.operation(grid=...)",
    "dma": "ttl.dma is pre-1.0 TT-Lang; 1.x writes ttl.copy(src, dst).wait()",
}

# the classes TT-Lang 1.x programs import from ``ttl.ttl_api`` (the module of its API's classes)
TTL_API_CLASSES = ("DataflowBuffer", "CircularBuffer", "TensorBlock", "CopyTransferHandler", "ReceiveRequest",
                   "ReadyReceive", "Program")


def pre_1_0_api_module(name: str) -> types.ModuleType:
    """``ttl.ttl_api`` or ``ttlang...``, the modules of TT-Lang before 1.0 (``pykernel_gen``, ``dma``,
    ``TensorAccessor``): importing a name from one is one clear error naming the 1.x spelling."""
    module = types.ModuleType(name)

    def __getattr__(attr):  # noqa: N807 - a module's __getattr__
        if attr.startswith("__") and attr != "__all__":
            raise AttributeError(attr)
        if name == "ttl.ttl_api" and attr in TTL_API_CLASSES:     # TT-Lang 1.x keeps its classes there too
            return globals()[attr]
        if attr.startswith("_") and attr != "__all__":     # a private function of TT-Lang's implementation
            raise KernelError(f"ttl.ttl_api.{attr} is a private function of TT-Lang's own implementation, which "
                              "tilefold does not have; use the public ttl and ttnn names", user_location())
        raise KernelError(f"{name} (pykernel_gen, dma, TensorAccessor) is TT-Lang's API before 1.0, which "
                          "tilefold does not accept; write `import ttl` with @ttl.operation, "
                          "@ttl.compute() / @ttl.datamovement() kernels and ttl.copy", user_location())

    module.__getattr__ = __getattr__
    module.__path__ = []            # a package too: ``import ttlang.utils.correctness`` finds its parts here
    return module


__all__ = [
    "operation", "Operation", "compute", "datamovement", "make_dataflow_buffer_like", "make_circular_buffer_like",
    "DataflowBuffer", "CircularBuffer", "grid_size", "node", "copy", "copy_tensor_page", "wait_any", "GroupTransfer", "Pipe", "PipeNet", "PipeMapping",
    "signpost", "static_range", "math", "block", "unsafe", "TILE_SHAPE", "TILE_SIZE", "TILE_LAYOUT", "ROW_MAJOR_LAYOUT", "Program",
    "SrcPipeIdentity", "DstPipeIdentity", "Semaphore", "Kernel", "KernelKind", "PIPE_SOURCE_KERNEL", "make_dfb",
    "make_dfb_allocation_group", "make_tensor_backed_dfb", "NodeCoord", "NodeRange", "Shape", "Size", "DstT",
    "kernel", "core", "TensorAccessor", "IndexType", "atom", "DFB", "DeviceDomain", "DeviceRange", "DeviceRef",
    "TransferGraph", "TransferEdge", "DomainComponent", "AxisNeighborTransfer", "StencilTransfer", "GatherTransfer",
    "ScatterTransfer", "AllToAllTransfer", "Fabric1D", "Fabric2D", "DFBReset", "DFBReconfiguration", "reset_dataflow_buffers", "reset_dfbs", "reset_all_dfbs", "reconfigure_dfbs",
    "call_extern_func", "get_dfb_id", "dfb_descriptor", "raw_addr", "ScalarType", "DFBAccess", "DFBEffect", "DispatchCondition",
    "ProgramRuntimeResources", "KernelRuntimeResources", "CoreRuntimeArgs", "KernelDefine",
    "DFBAllocationGroup", "TensorBlock", "CopyTransferHandler", "ReceiveRequest", "ReadyReceive",
    "DispatchArgument", "DispatchAccess", "DispatchStorage", "ResolvedDispatcher",
]


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    functions = top_level()            # ttl.exp, ttl.sub, ttl.transpose ...: block functions
    if name in functions:
        return functions[name]
    if name in PRE_1_0_NAMES:
        raise UnsupportedName(PRE_1_0_NAMES[name], user_location())
    raise UnsupportedName(missing_name("ttl", name, [*globals(), *functions]), user_location())

"""What one call of a TT-Lang operation collects while its Python body runs.

Reads: the operation's tensors, grid and device. Writes: an :class:`OperationCapture` holding
the dataflow buffers, kernel functions and pipe nets the body creates, in creation order.

The body of ``@ttl.operation`` is ordinary Python that runs once per call, on the host: it
computes sizes from the tensors' shapes, makes dataflow buffers and pipe nets, and defines
the kernel functions. Those calls find the operation they belong to with :func:`current`.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

from tilefold.arch import Arch
from tilefold.errors import KernelError, OutsideOperationError, SourceLocation
from tilefold.caller import user_location


@dataclass
class TensorArgument:
    """One tensor argument of the operation."""

    index: int
    name: str
    tensor: object          # tilefold.ttnn.Tensor


@dataclass(frozen=True)
class Mailbox:
    """The DRAM buffer a pipe net whose receives all land in tensor slices sends its blocks into
    (instead of a landing buffer in L1): ``depth`` blocks for each receive slot of each node of the
    grid, one block of ``block_pages`` pages of ``page_size`` bytes in ``data_format`` each."""

    net: int
    depth: int
    slots: int
    block_pages: int
    page_size: int
    data_format: object
    tile: tuple[int, int]

    def pages(self, nodes: int) -> int:
        return nodes * self.slots * self.depth * self.block_pages

    @property
    def buffer_name(self) -> str:
        return f"pipe_net{self.net}_mailbox"


@dataclass
class OperationCapture:
    name: str
    grid: tuple[int, int]           # (columns, rows)
    arch: Arch
    tensors: list[TensorArgument]
    location: SourceLocation | None
    dataflow_buffers: list = field(default_factory=list)
    kernels: list = field(default_factory=list)
    pipe_nets: list = field(default_factory=list)
    bound_nets: dict = field(default_factory=dict)    # id of a ttl.PipeNet -> the net on this grid
    constants: dict = field(default_factory=dict)     # compile-time arguments of the call, by name
    landing: dict = field(default_factory=dict)       # net index -> its landing buffer (pipes.needs_landing)
    mailboxes: dict = field(default_factory=dict)     # net index -> its DRAM Mailbox (instead of a landing buffer)
    barriers: dict = field(default_factory=dict)      # (kernel, hub kernel) -> its meeting's token buffers
    semaphores: list = field(default_factory=list)    # ttl.Semaphore objects, in order
    semaphore_rects: list = field(default_factory=list)   # (x0, y0, x1, y1) of their multicast handles
    grid_dims: tuple = ()           # the grid as written, (d0, ..., dn); (columns, rows) when 2-D
    device_domain: object = None    # the ttl.DeviceDomain the operation spans (each device one chip of grid_dims)
    device_pieces: dict = field(default_factory=dict)   # tensor name -> its mesh tensor's pieces, one per device
    resource_semaphores: object = None  # first free id -> semaphores of runtime_resource_factory= (runtime_resources)
    l1_arena: int = 0               # bytes per node of the L1 area buffers of dfb_reuse.l1_arena take turns in
    shard_twins: dict = field(default_factory=dict)   # tensor-backed buffer index -> the hidden twin stores go through
    mesh_chip: int | None = None    # a grid with mesh axes over mesh tensors: the chip this call runs (its nodes,
                                    # and the whole tensors' indices on its pieces, :meth:`Operation._call`)

    def __post_init__(self):
        self.grid_dims = tuple(self.grid_dims) or tuple(self.grid)

    def device_buffer(self, name: str, device: int) -> str:
        """The name of the buffer of tensor ``name`` on ``device`` of the device domain: each piece
        of a mesh tensor is a buffer of its own; another tensor is one buffer all devices read."""
        return f"{name}@{device}" if device and name in self.device_pieces else name

    def tensor_argument(self, tensor) -> TensorArgument | None:
        for arg in self.tensors:
            if arg.tensor is tensor:
                return arg
        return None

    def not_a_tensor_hint(self, value, name: str | None = None) -> str:
        """When ``value`` was passed to the call as a compile-time argument (``name``, or any): a
        clause saying so, for an error about something that needs a tensor there; else ""."""
        given = [n for n, v in self.constants.items() if v is value and (name is None or n == name)]
        return f"; the operation was called with {value!r} for {given[0]!r}: pass a ttnn tensor there" if given else ""

    def add_dataflow_buffer(self, dfb) -> int:
        """Register a dataflow buffer; returns its provisional circular-buffer index (its position).
        Buffers no kernel uses are dropped and the rest renumbered once the kernels are built
        (``operation.allocate_buffers``), where the limit of circular buffers per node is checked."""
        self.dataflow_buffers.append(dfb)
        return len(self.dataflow_buffers) - 1


_STACK: list[OperationCapture] = []


def current(what: str) -> OperationCapture:
    """The operation whose body is running; ``what`` names the caller for the error message."""
    if not _STACK:
        noun = what.split(".")[-1].replace("grid_size", "grid")
        raise OutsideOperationError(f"{what}: {noun} not available outside a @ttl.operation; it can only be used "
                                    "inside the body of a @ttl.operation function", user_location())
    return _STACK[-1]


def active() -> OperationCapture | None:
    return _STACK[-1] if _STACK else None


_LAST: list[OperationCapture] = []     # the operation whose body ran last (host-side ttl.grid_size)


@contextmanager
def capturing(capture: OperationCapture):
    _STACK.append(capture)
    try:
        yield capture
    finally:
        _STACK.pop()
        _LAST[:] = [capture]


def current_or_last(what: str) -> OperationCapture:
    """The operation whose body is running; on the host, after a call, the operation called last
    (its grid is what ``ttl.grid_size`` reports there)."""
    if _STACK or not _LAST:
        return current(what)
    return _LAST[0]

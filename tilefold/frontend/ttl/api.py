"""The names a TT-Lang script uses: ``ttl.operation``, ``ttl.compute``, ``ttl.copy``, ``ttl.math`` ...

Reads: nothing. Writes: nothing. :mod:`tilefold.ttl` re-exports these names so that a script
written for TT-Lang runs with ``import tilefold.ttl as ttl`` (or, under ``tilefold sim``, with
its own ``import ttl``).

Functions used in the operation's body run there (``make_dataflow_buffer_like``, ``grid_size``,
``node``, ``Pipe``, ``PipeNet``); functions that describe device work (``copy``, the block
functions, ``GroupTransfer``, ``signpost``) are recognized by the front end inside kernel
functions and raise an error when Python calls them anywhere else.
"""

from __future__ import annotations

from tilefold.errors import KernelError
from tilefold.frontend.ttl.dataflow_buffers import DataflowBuffer, make_dataflow_buffer_like
from tilefold.frontend.ttl.device_calls import GroupTransfer, copy, signpost
from tilefold.frontend.ttl.grid import grid_size, node
from tilefold.frontend.ttl.kernels import compute, datamovement
from tilefold.frontend.ttl.math_api import block, math
from tilefold.frontend.ttl.operation import Operation, operation
from tilefold.frontend.ttl.pipes import Pipe, PipeNet
from tilefold.caller import user_location

TILE_SHAPE = (32, 32)
TILE_SIZE = 32


# Deprecated spelling kept for older scripts.
make_circular_buffer_like = make_dataflow_buffer_like
CircularBuffer = DataflowBuffer

__all__ = [
    "operation", "Operation", "compute", "datamovement", "make_dataflow_buffer_like", "make_circular_buffer_like",
    "DataflowBuffer", "CircularBuffer", "grid_size", "node", "copy", "GroupTransfer", "Pipe", "PipeNet",
    "signpost", "math", "block", "TILE_SHAPE", "TILE_SIZE",
]

"""Symbolic argument values a host resolves when it launches a program.

Reads: nothing. Writes: nothing. A runtime argument is an ``int`` or one of these: the
device address of a buffer (known only after allocation), the NOC coordinates of a logical
core (``worker_core_from_logical_core``). A compile-time argument list may hold
:class:`TensorAccessorArgsRef`, which expands to the buffer's ``TensorAccessorArgs``
(``TensorAccessorArgs(buffer).append_to(compile_args)`` on the host).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilefold.arch.cores import CoreCoord


@dataclass(frozen=True)
class BufferAddress:
    """``buffer->address()``: the base address of a buffer on the device."""

    buffer: str

    def __str__(self) -> str:
        return f"{self.buffer}.address"


@dataclass(frozen=True)
class NocX:
    """``worker_core_from_logical_core(core).x``."""

    core: CoreCoord

    def __str__(self) -> str:
        return f"noc_x{self.core}"


@dataclass(frozen=True)
class NocY:
    """``worker_core_from_logical_core(core).y``."""

    core: CoreCoord

    def __str__(self) -> str:
        return f"noc_y{self.core}"


@dataclass(frozen=True)
class TensorAccessorArgsRef:
    """In a compile-time argument list: the TensorAccessorArgs of ``buffer``."""

    buffer: str

    def __str__(self) -> str:
        return f"TensorAccessorArgs({self.buffer})"


RuntimeArg = int | BufferAddress | NocX | NocY
CompileArg = int | TensorAccessorArgsRef

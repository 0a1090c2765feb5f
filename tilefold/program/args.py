"""Symbolic argument values a host resolves when it launches a program.

Reads: nothing. Writes: nothing. A runtime argument is an ``int`` or one of these: the
device address of a buffer (known only after allocation), the NOC coordinates of a logical
core (``worker_core_from_logical_core``), two of those small values in one word. A compile-time argument list may hold
:class:`TensorAccessorArgsRef`, which expands to the buffer's ``TensorAccessorArgs``
(``TensorAccessorArgs(buffer).append_to(compile_args)`` on the host).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilefold.arch import HALF_WORD
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
class HalfWords:
    """Two values below 2**16 in one runtime argument, ``low | high << 16`` (each an int or a NOC
    coordinate): a kernel with more arguments than the table holds packs its small ones."""

    low: int | NocX | NocY
    high: int | NocX | NocY

    def __post_init__(self) -> None:
        for v in (self.low, self.high):
            if not (isinstance(v, (NocX, NocY)) or isinstance(v, int) and 0 <= v < HALF_WORD):
                raise ValueError(f"HalfWords({self.low!r}, {self.high!r}): each half is a NOC coordinate or an int "
                                 f"below {HALF_WORD}")

    def __str__(self) -> str:
        return f"({self.low} | {self.high} << 16)"

    def resolved(self, resolve=None) -> int:
        """The word, ``resolve`` giving each symbolic half's value."""
        low, high = (v if isinstance(v, int) else resolve(v) for v in (self.low, self.high))
        return low | high << 16

    def packed(self) -> "int | HalfWords":
        """The word as an int when both halves are ints, else itself (the host resolves it)."""
        return self.resolved() if isinstance(self.low, int) and isinstance(self.high, int) else self


@dataclass(frozen=True)
class TensorAccessorArgsRef:
    """In a compile-time argument list: the TensorAccessorArgs of ``buffer``."""

    buffer: str

    def __str__(self) -> str:
        return f"TensorAccessorArgs({self.buffer})"


RuntimeArg = int | BufferAddress | NocX | NocY
CompileArg = int | TensorAccessorArgsRef

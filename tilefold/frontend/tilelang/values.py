"""What names in a TileLang kernel body stand for while it is being compiled.

Reads: nothing. Writes: ``arith`` ops, through the builder that is active (:func:`active`).

- :class:`Index` — an ``i32`` integer expression: a constant plus a linear combination of
  symbols (block indices, loop variables, ``T.Parallel`` indices, or opaque values made by
  ``//``, ``%`` or a product of two symbols). Linear forms are kept symbolic, so copy offsets
  can be checked for tile alignment and simplified before any op is built; they support the
  Python operators, so ``T.ceildiv`` and user helpers work on them.
- :class:`BufferRef` — a global tensor parameter or a local (shared / fragment) buffer.
- :class:`Region` — ``A[i, j]`` or ``A[a:b, c:d]``: a block of a buffer at element offsets.
- :class:`Elem` — an ``f32`` element value inside ``T.Parallel`` (``i1`` for comparisons).
- :class:`Cond` — an ``i1`` condition on indices outside ``T.Parallel`` (``if bx * 64 < M:``).
- :class:`ConstVar` — a ``T.const`` / ``T.dynamic`` name of an eager kernel not bound yet.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, i32
from xdsl.ir import SSAValue

from tilefold.errors import KernelError
from tilefold.layout.formats import DataFormat

_BUILDERS: list = []


def active():
    """The builder of the kernel being compiled (for ops an :class:`Index` operation needs)."""
    if not _BUILDERS:
        raise KernelError("block indices and loop variables can only be used inside a kernel body")
    return _BUILDERS[-1]


def push_builder(builder) -> None:
    _BUILDERS.append(builder)


def pop_builder() -> None:
    _BUILDERS.pop()


@dataclass(eq=False)
class Symbol:
    """An ``i32`` SSA value an index expression depends on."""

    value: SSAValue
    name: str
    kind: str          # "grid" | "loop" | "parallel" | "opaque" | "thread"
    extent: int | None = None
    multiple: int = 1  # the value is always a multiple of this (opaque values: e.g. (32 * k) % 64)
    bounds: tuple[int, int] | None = None  # the least and greatest value, when known (a loop's range)

    def __repr__(self) -> str:
        return self.name

    def value_range(self) -> tuple[int, int] | None:
        """The least and greatest value: ``0 .. extent-1`` for block, parallel and thread indices."""
        if self.bounds is not None:
            return self.bounds
        if self.kind in ("grid", "parallel", "thread") and self.extent:
            return 0, self.extent - 1
        return None


@dataclass(eq=False)
class Index:
    """``const + Σ coef · symbol`` over ``i32``."""

    terms: dict[Symbol, int] = field(default_factory=dict)
    const: int = 0

    @staticmethod
    def of(value) -> Index:
        if isinstance(value, Index):
            return value
        if isinstance(value, Symbol):
            return Index({value: 1})
        if isinstance(value, bool) or not isinstance(value, int):
            raise KernelError(f"{value!r} is not an integer index")
        return Index({}, int(value))

    @property
    def is_constant(self) -> bool:
        return not self.terms

    def symbols(self) -> list[Symbol]:
        return list(self.terms)

    def divisible_by(self, n: int) -> bool:
        """True when the value is a multiple of ``n`` for every value of its symbols."""
        return self.const % n == 0 and all((c * s.multiple) % n == 0 for s, c in self.terms.items())

    def value_range(self) -> tuple[int, int] | None:
        """The least and greatest value over its symbols' ranges, or None when one is unknown."""
        lo = hi = self.const
        for s, c in self.terms.items():
            r = s.value_range()
            if r is None:
                return None
            a, b = c * r[0], c * r[1]
            lo, hi = lo + min(a, b), hi + max(a, b)
        return lo, hi

    def multiple(self) -> int:
        """The largest number the value is known to be a multiple of (0 for the constant 0)."""
        g = abs(self.const)
        for s, c in self.terms.items():
            g = math.gcd(g, abs(c) * s.multiple)
        return g

    # -- arithmetic --------------------------------------------------------------------------

    def _combine(self, other, sign: int) -> Index:
        o = Index.of(other)
        terms = dict(self.terms)
        for s, c in o.terms.items():
            terms[s] = terms.get(s, 0) + sign * c
            if terms[s] == 0:
                del terms[s]
        return Index(terms, self.const + sign * o.const)

    def __add__(self, other):
        return self._combine(other, 1) if isinstance(other, (int, Index, Symbol)) else NotImplemented

    __radd__ = __add__

    def __sub__(self, other):
        return self._combine(other, -1) if isinstance(other, (int, Index, Symbol)) else NotImplemented

    def __rsub__(self, other):
        return Index.of(other)._combine(self, -1) if isinstance(other, int) else NotImplemented

    def __neg__(self):
        return Index({s: -c for s, c in self.terms.items()}, -self.const)

    def __mul__(self, other):
        if isinstance(other, bool):
            return NotImplemented
        if isinstance(other, int):
            if other == 0:
                return Index()
            return Index({s: c * other for s, c in self.terms.items()}, self.const * other)
        if isinstance(other, (Index, Symbol)):
            o = Index.of(other)
            if o.is_constant:
                return self * o.const
            if self.is_constant:
                return o * self.const
            return active().opaque_index("muli", self, o)
        return NotImplemented

    __rmul__ = __mul__

    def __floordiv__(self, other):
        if isinstance(other, int) and not isinstance(other, bool):
            if other <= 0:
                raise KernelError(f"index division by {other}; divide by a positive constant")
            if self.divisible_by(other):
                return Index({s: c // other for s, c in self.terms.items()}, self.const // other)
            return active().opaque_index("divui", self, Index.of(other))
        if isinstance(other, (Index, Symbol)):
            o = Index.of(other)
            if o.is_constant:
                return self // o.const
            return active().opaque_index("divui", self, o)
        return NotImplemented

    def __rfloordiv__(self, other):
        if isinstance(other, int):
            return Index.of(other) // self
        return NotImplemented

    def __mod__(self, other):
        if isinstance(other, int) and not isinstance(other, bool):
            if other <= 0:
                raise KernelError(f"index modulo {other}; use a positive constant")
            if self.is_constant:
                return Index({}, self.const % other)
            if self.divisible_by(other):
                return Index()
            return active().opaque_index("remui", self, Index.of(other))
        if isinstance(other, (Index, Symbol)):
            o = Index.of(other)
            if o.is_constant:
                return self % o.const
            return active().opaque_index("remui", self, o)
        return NotImplemented

    def __bool__(self):
        if self.is_constant:
            return bool(self.const)
        raise KernelError("a block index or loop variable has no value while the kernel is compiled; compare it "
                          "(`if bx * 64 < M:`) to branch on it")

    def __index__(self):
        if self.is_constant:
            return self.const
        raise KernelError("a block index or loop variable is used where a Python integer is needed (a shape, a "
                          "range bound); use a constant there")

    def __repr__(self) -> str:
        parts = [f"{c}*{s.name}" if c != 1 else s.name for s, c in self.terms.items()]
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts)


def constant(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(int(value), i32))


@dataclass(eq=False)
class BufferRef:
    """A tensor of the kernel: a global parameter (``scope == "global"``) or a local buffer."""

    name: str
    shape: tuple[int, ...]
    dtype: DataFormat
    scope: str          # "global" | "shared" | "fragment"
    value: SSAValue | None   # None until the kernel function of an eager kernel is created
    dtype_name: str = ""     # the TileLang dtype the user wrote

    @property
    def is_global(self) -> bool:
        return self.scope == "global"

    def describe(self) -> str:
        dims = "x".join(map(str, self.shape))
        return f"{self.scope} buffer {self.name} ({dims})"


@dataclass(eq=False)
class Region:
    """``buffer[starts...]`` (extents taken from the other side of a copy) or with slices."""

    buffer: BufferRef
    starts: list[Index]
    extents: list[int | None]

    def __bool__(self):
        raise KernelError(f"an element of {self.buffer.name} read outside T.Parallel has no value while the "
                          "kernel is compiled; branch on indices, or compute with T.if_then_else inside T.Parallel")


@dataclass(eq=False)
class Elem:
    """An element value inside ``T.Parallel`` (``f32``; ``i1`` for a comparison). ``narrowed``
    names the narrower float type a ``T.cast`` asked for: the value itself is not rounded to it."""

    value: SSAValue
    is_bool: bool = False
    narrowed: str | None = None


@dataclass(eq=False)
class Cond:
    """An ``i1`` condition on block indices and loop variables, outside ``T.Parallel``."""

    value: SSAValue

    def __bool__(self):
        raise KernelError("a condition on block indices or loop variables has no value while the kernel is "
                          "compiled; use it in an `if` statement or T.if_then_else")


@dataclass(eq=False)
class ConstVar:
    """A ``T.const("M")`` name of an eager kernel whose value no tensor annotation has given yet."""

    name: str

    def _unbound(self, *args):
        raise KernelError(f"T.const {self.name!r} is used before a tensor annotation gives its value; annotate the "
                          f"tensors (A: T.Tensor(({self.name}, ...), dtype)) first, or pass {self.name}=... to "
                          ".compile()")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __floordiv__ = __rfloordiv__ = _unbound
    __mod__ = __rmod__ = __truediv__ = __rtruediv__ = __index__ = __int__ = __bool__ = _unbound

    def __repr__(self) -> str:
        return self.name


__all__ = ["Symbol", "Index", "BufferRef", "Region", "Elem", "Cond", "ConstVar", "active", "push_builder",
           "pop_builder", "constant"]

"""The block functions of TT-Lang: ``ttl.math.*`` and ``ttl.block.*``.

Reads: nothing. Writes: :class:`BlockFunction` markers. A kernel calls them on blocks and block
expressions (``ttl.math.exp(a_blk)``, ``ttl.math.reduce_sum(x, dims=[-1], shape=(r, 1))``); the
front end recognizes the marker and builds the block op (see
:mod:`tilefold.frontend.ttl.block_expressions`). Called outside a kernel they raise an error:
they describe device computation, they do not compute on the host.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from tilefold.errors import KernelError
from tilefold.caller import missing_name, user_location


class UnsupportedName(KernelError, AttributeError):
    """A TT-Lang name tilefold does not provide (an ``AttributeError``, so ``hasattr`` stays usable)."""


class Namespace:
    """``ttl.math`` / ``ttl.block``: the names tilefold provides; any other name is a clear error."""

    def __init__(self, prefix: str, members: Callable[[], dict]):
        self._members = members          # made on first use (``import tilefold.ttl`` stays light)
        self._prefix = prefix

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("_members", "_prefix"):
            raise AttributeError(name)
        members = self._members()
        if name in members:
            return members[name]
        raise UnsupportedName(missing_name(self._prefix, name, members), user_location())

    def __repr__(self) -> str:
        return f"<{self._prefix}>"


@cache
def sfpu_functions() -> tuple[dict[str, str], dict[str, str]]:
    """``ttl.math`` name -> the ttl tile op it builds, of the one-argument functions (the SFPU
    unary functions without parameters, and TT-Lang's spelling logp1 of log1p) and of the
    comparisons of two blocks (the binary SFPU functions of the compare family): read from
    :mod:`tilefold.ir.sfpu` through the ttl tile ops, on first use."""
    from tilefold.ir.sfpu import SFPU_CALLS
    from tilefold.ir.ttl import TILE_OPS

    unary = {**{name: name for name, info in TILE_OPS.items()
                if info.kind == "sfpu_unary" and not info.params and info.call in SFPU_CALLS
                and name not in VARIANTS},
             "logp1": "log1p"}
    binary = {name: name for name, info in TILE_OPS.items()
              if info.kind == "sfpu_binary" and info.call in SFPU_CALLS and SFPU_CALLS[info.call].cost == "compare"}
    return unary, binary


# tile ops that are variants of a function, chosen by its keywords (``ttl.math.exp(x, approx=True)``)
VARIANTS = ("exp_approx",)

# functions with compile-time number parameters: name -> ((parameter, default or None), ...)
PARAMETRIC = {
    "elu": (("alpha", 1.0),),
    "celu": (("alpha", 1.0), ("alpha_recip", None)),
    "selu": (("scale", 1.0507009873554805), ("alpha", 1.6732632423543772)),
    "leaky_relu": (("slope", 0.01),),
    "prelu": (("alpha", 0.25),),
    "softplus": (("beta", 1.0), ("beta_reciprocal", None), ("threshold", 20.0)),
    "round": (("decimals", 0),),
}
SPECIAL = ("max", "min", "clamp", "pow", "rsub", "relu_max", "relu_min", "where", "fill", "broadcast", "transpose",
           "matmul", "reduce_sum", "reduce_max", "hardtanh", "threshold", "typecast")


class BlockFunction:
    """A TT-Lang block function; only meaningful inside a kernel function."""

    def __init__(self, name: str, namespace: str):
        self.name = name
        self.namespace = namespace         # "math", "block", "unsafe", or "" for a name of ttl itself
        self.__name__ = name

    @property
    def prefix(self) -> str:
        return f"ttl.{self.namespace}." if self.namespace else "ttl."

    @property
    def qualname(self) -> str:
        return self.prefix + self.name

    def __call__(self, *args, **kwargs):
        raise KernelError(f"{self.qualname} computes on blocks on the device; call it inside a "
                          "@ttl.compute() kernel function", user_location())

    def __repr__(self) -> str:
        return f"<{self.qualname}>"


def _namespace(namespace: str, names: Callable[[], list[str]]) -> Namespace:
    return Namespace(f"ttl.{namespace}", cache(lambda: {name: BlockFunction(name, namespace) for name in names()}))


# Block functions TT-Lang kept in ttl.math before 1.0 and moved to ttl.block (broadcast, fill,
# where and transpose are in SPECIAL): their pre-1.0 names are the same functions.
MOVED_TO_BLOCK = ("mask", "mask_posinf", "squeeze", "unsqueeze")


def _math_names() -> list[str]:
    unary, binary = sfpu_functions()
    return [*unary, *binary, *PARAMETRIC, *SPECIAL, *MOVED_TO_BLOCK]


math = _namespace("math", _math_names)
block = _namespace("block", lambda: ["broadcast", "fill", "where", "transpose", "mask", "mask_posinf", "squeeze",
                                     "unsqueeze", "subview"])
# The element-wise functions TT-Lang also provides as names of ttl itself (``ttl.exp(x)``,
# ``ttl.sub(a, b)``, ``ttl.transpose(x)``): the same block functions as their ttl.math / ttl.block names.
TOP_LEVEL = ("add", "sub", "mul", "div", "eq", "ne", "gt", "lt", "max", "min", "exp", "exp2", "log", "sqrt", "rsqrt",
             "tanh", "abs", "neg", "relu", "sigmoid", "floor", "recip", "sin", "cos", "tan", "asin", "acos", "atan",
             "ceil", "sign", "gelu", "silu", "hardsigmoid", "expm1", "square", "softsign", "signbit", "frac", "trunc",
             "transpose", "matmul")
# ttl.raw_element_read / ttl.raw_element_write: float elements of a block in a data movement kernel;
# ttl.read_index: such an element as an integer (truncated toward zero), a runtime index
RAW_ELEMENT = ("raw_element_read", "raw_element_write", "read_index")
# ttl.element_read / ttl.element_write: TT-Lang's earlier names of ttl.unsafe.element_read / element_write
top_level = cache(lambda: {**{name: BlockFunction(name, "") for name in TOP_LEVEL + RAW_ELEMENT},
                           **{name: BlockFunction(name, "unsafe") for name in ("element_read", "element_write")}})
unsafe = _namespace("unsafe", lambda: ["element_read", "element_write"])

"""The block functions of TT-Lang: ``ttl.math.*`` and ``ttl.block.*``.

Reads: nothing. Writes: :class:`BlockFunction` markers. A kernel calls them on blocks and block
expressions (``ttl.math.exp(a_blk)``, ``ttl.math.reduce_sum(x, dims=[-1], shape=(r, 1))``); the
front end recognizes the marker and builds the block op (see
:mod:`tilefold.frontend.ttl.block_expressions`). Called outside a kernel they raise an error:
they describe device computation, they do not compute on the host.
"""

from __future__ import annotations

from types import SimpleNamespace

from tilefold.errors import KernelError
from tilefold.caller import user_location

# name -> how it is built: ("unary", tile op) / ("binary", tile op) / special handler names
UNARY = {
    "exp": "exp", "exp2": "exp2", "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt", "recip": "recip",
    "square": "square", "tanh": "tanh", "sigmoid": "sigmoid", "relu": "relu", "gelu": "gelu", "silu": "silu",
    "sin": "sin", "cos": "cos", "abs": "abs", "neg": "neg", "floor": "floor", "ceil": "ceil", "sign": "sign",
}
BINARY = {"gt": "gt", "lt": "lt", "ge": "ge", "le": "le", "eq": "eq", "ne": "ne"}
SPECIAL = ("max", "min", "clamp", "pow", "rsub", "relu_max", "relu_min", "where", "fill", "broadcast", "transpose",
           "reduce_sum", "reduce_max", "hardtanh")


class BlockFunction:
    """A TT-Lang block function; only meaningful inside a kernel function."""

    def __init__(self, name: str, namespace: str):
        self.name = name
        self.namespace = namespace
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        raise KernelError(f"ttl.{self.namespace}.{self.name} computes on blocks on the device; call it inside a "
                          "@ttl.compute() kernel function", user_location())

    def __repr__(self) -> str:
        return f"<ttl.{self.namespace}.{self.name}>"


def _namespace(namespace: str, names) -> SimpleNamespace:
    return SimpleNamespace(**{name: BlockFunction(name, namespace) for name in names})


math = _namespace("math", [*UNARY, *BINARY, *SPECIAL])
block = _namespace("block", ["broadcast", "fill", "where", "transpose"])

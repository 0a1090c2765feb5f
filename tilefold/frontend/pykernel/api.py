"""The names a PyKernel author calls: one stub per TT-Metalium device function, and helpers.

Reads: the API table of :mod:`tilefold.ir.ttkernel_api`. Writes: nothing.

Every row of the table becomes a :class:`DeviceFunction` of the same name whose Python
signature (parameter names, defaults, keyword-only template parameters) is derived from
the table, so ``help(cb_reserve_back)`` and editors show the real call. The stubs do
nothing when called from Python: the kernel builder recognises them inside a
``@reader_kernel`` / ``@writer_kernel`` / ``@compute_kernel`` function and turns each
call into a ``ttkernel`` op. Calling one directly raises :class:`KernelError`.

Besides the table there are the calls that are not plain API functions
(``get_compile_time_arg_val``, ``TensorAccessorArgs``, ``TensorAccessor``, ``my_x``,
``my_y``), the kernel-language helpers (``array``, ``l1_ptr``, the element types and
casts ``uint32`` / ``uint64``), the ``tt::CBIndex`` enum as :class:`CBIndex`, and the
``@inline`` decorator for helper functions that a kernel calls.
"""

from __future__ import annotations

import enum
import functools
import inspect
from dataclasses import dataclass, field

from tilefold.errors import KernelError
from tilefold.ir.ttkernel_api import API, ApiFunction
from tilefold.caller import user_location

KERNEL_DECORATORS = "@reader_kernel, @writer_kernel or @compute_kernel"

CBIndex = enum.IntEnum("CBIndex", {f"c_{i}": i for i in range(32)}, module=__name__)
CBIndex.__doc__ = "``tt::CBIndex``: the 32 circular buffers of a core, ``CBIndex.c_0`` ... ``CBIndex.c_31``."


@dataclass(frozen=True, eq=False)
class DeviceFunction:
    """A function that only exists inside a kernel.

    ``kind`` is ``"api"`` for a row of the API table (``api`` holds the row) or the name
    of a kernel-language construct (``"tensor_accessor_args"``, ``"array"``, ...).
    """

    name: str
    kind: str
    signature: inspect.Signature
    doc: str = ""
    api: ApiFunction | None = None

    def __post_init__(self):
        # look like a function to help(), inspect.signature() and editors
        for attr, value in (("__name__", self.name), ("__qualname__", self.name), ("__doc__", self.doc),
                            ("__signature__", self.signature)):
            object.__setattr__(self, attr, value)

    def __call__(self, *args, **kwargs):
        raise KernelError(
            f"{self.name}() is a device function: it only works inside a {KERNEL_DECORATORS} "
            f"function, which tilefold compiles to a kernel instead of running it in Python",
            user_location(),
        )

    def __repr__(self) -> str:
        return f"<device function {self.name}{self.signature}>"


def _api_signature(fn: ApiFunction) -> inspect.Signature:
    params = []
    for p in fn.params:
        default = inspect.Parameter.empty if p.default is None else p.default
        params.append(inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default))
    for t in fn.templates:
        default = inspect.Parameter.empty if t.default is None else t.default
        params.append(inspect.Parameter(t.name, inspect.Parameter.KEYWORD_ONLY, default=default))
    return inspect.Signature(params)


def _api_doc(fn: ApiFunction) -> str:
    cpp = fn.cpp_function
    if fn.cpp_type_template:
        cpp += f"<{fn.cpp_type_template}>"
    kind = {"noc": "data-movement", "compute": "compute", "any": "any"}[fn.thread]
    lines = [f"``{cpp}`` ({kind} kernels; ``#include \"{fn.header}\"``)." if fn.header else
             f"``{cpp}`` ({kind} kernels)."]
    if fn.doc:
        lines.append(fn.doc)
    if fn.templates:
        lines.append("Template parameters: " + ", ".join(
            (t.name if t.default is None else f"{t.name}={t.default!r}") + (f" (one of {', '.join(t.choices)})" if t.choices else "")
            for t in fn.templates))
    return "\n\n".join(lines)


API_FUNCTIONS: dict[str, DeviceFunction] = {
    name: DeviceFunction(name, "api", _api_signature(fn), _api_doc(fn), fn) for name, fn in API.items()
}


def _special(name: str, kind: str, params: list[inspect.Parameter], doc: str) -> DeviceFunction:
    return DeviceFunction(name, kind, inspect.Signature(params), doc)


_POS = inspect.Parameter.POSITIONAL_OR_KEYWORD
_KW = inspect.Parameter.KEYWORD_ONLY


def _p(name: str, default=inspect.Parameter.empty, kind=_POS) -> inspect.Parameter:
    return inspect.Parameter(name, kind, default=default)


get_compile_time_arg_val = _special(
    "get_compile_time_arg_val", "get_compile_time_arg_val", [_p("arg_index")],
    "``get_compile_time_arg_val(i)``: compile-time argument ``i`` of the kernel (``i`` must be a constant).")
TensorAccessorArgs = _special(
    "TensorAccessorArgs", "tensor_accessor_args", [_p("cta_offset", None), _p("crta_offset", None),
                                                   _p("after", None, _KW)],
    "``TensorAccessorArgs<cta_offset>()``: a buffer's distribution, read from the compile-time args at a "
    "constant offset; ``TensorAccessorArgs(after=prev)`` starts where ``prev`` ends "
    "(``prev.next_compile_time_args_offset()``).")
TensorAccessor = _special(
    "TensorAccessor", "tensor_accessor", [_p("args"), _p("bank_base_address"), _p("page_size")],
    "``TensorAccessor(args, bank_base_address, page_size)``: maps page ids of a buffer to NOC addresses.")
my_x = _special("my_x", "my_x", [], "``my_x[noc_index]``: this core's NOC x coordinate (data-movement kernels).")
my_y = _special("my_y", "my_y", [], "``my_y[noc_index]``: this core's NOC y coordinate (data-movement kernels).")
l1_ptr = _special(
    "l1_ptr", "l1_ptr", [_p("addr"), _p("width", 32)],
    "``reinterpret_cast<volatile tt_l1_ptr uintW_t*>(addr)``: index it to load (``p[i]``) or store "
    "(``p[i] = v``) ``width``-bit words of L1 (width 8, 16 or 32).")
array = _special(
    "array", "array", [_p("dtype"), _p("size")],
    "``dtype name[size]``: a fixed-size local array (``array(uint64, 32)``), indexed with ``a[i]``.")
uint32 = _special("uint32", "uint32", [_p("value")],
                  "``uint32_t``: element type for ``array``, or a cast to 32 bits (truncates a 64-bit value).")
uint64 = _special("uint64", "uint64", [_p("value")],
                  "``uint64_t``: element type for ``array``, or a cast to 64 bits (zero-extends).")

SPECIAL_FUNCTIONS: dict[str, DeviceFunction] = {
    f.name: f for f in (get_compile_time_arg_val, TensorAccessorArgs, TensorAccessor, my_x, my_y, l1_ptr, array,
                        uint32, uint64)
}
ELEMENT_TYPES = {"uint32": 32, "uint64": 64}


@dataclass(eq=False)
class InlineFunction:
    """A helper function that kernels call; its body is inlined at every call site."""

    python_function: object
    cache: dict = field(default_factory=dict, repr=False)   # the builder keeps the parsed source here

    def __post_init__(self):
        functools.update_wrapper(self, self.python_function)

    @property
    def name(self) -> str:
        return self.python_function.__name__

    def __call__(self, *args, **kwargs):
        raise KernelError(
            f"{self.name}() is an @inline kernel helper: call it from inside a {KERNEL_DECORATORS} function, "
            f"where its body is inlined",
            user_location(),
        )


def inline(fn):
    """Mark a module-level function as a kernel helper, inlined where a kernel calls it."""
    if isinstance(fn, InlineFunction):
        return fn
    if not inspect.isfunction(fn):
        raise KernelError(f"@inline decorates a plain def function, not {type(fn).__name__}", user_location())
    return InlineFunction(fn)


__all__ = [
    *API_FUNCTIONS,
    *SPECIAL_FUNCTIONS,
    "CBIndex",
    "inline",
]

globals().update(API_FUNCTIONS)

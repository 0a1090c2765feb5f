"""C++ identifiers for generated code: the user's names when they are valid and free, else fresh ones.

Reads: preferred names (SSA name hints, buffer and kernel names). Writes: unique C++ identifiers.
An :class:`Identifiers` table hands out names scope by scope, the way C++ sees them: a name is
taken while a declaration of it is visible (in the current scope or an enclosing one), so two
sibling loops may both call their induction variable ``i``. Names that C++ or the environment
already use (keywords; in kernels the API functions, ``noc_index``, ``my_x`` ...; in the host
program ``mesh``, ``program`` ...) are never handed out.
"""

from __future__ import annotations

import re

from tilefold.ir.ttkernel_api import API

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

CPP_KEYWORDS = frozenset("""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
    compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
    default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
    int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    register reinterpret_cast requires return short signed sizeof static static_assert static_cast struct
    switch template this thread_local throw true try typedef typeid typename union unsigned using virtual void
    volatile wchar_t while xor xor_eq
""".split())

_COMMON = frozenset("int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t std tt".split())

# Names a kernel sees: the API functions, the kernel environment's globals and macros.
KERNEL_RESERVED = CPP_KEYWORDS | _COMMON | frozenset(fn.cpp_function for fn in API.values()) | frozenset(API) | \
    frozenset("""kernel_main noc_index my_x my_y tt_l1_ptr tt_reg_ptr FORCE_INLINE ALWI NAMESPACE MAIN ckernel
                 get_compile_time_arg_val TensorAccessor TensorAccessorArgs PoolType ReduceDim""".split())

# Names the host program uses besides the user's buffers and kernels.
HOST_RESERVED = CPP_KEYWORDS | _COMMON | frozenset("""main mesh cq program workload pass distributed PROJECT_DIR
    read_bytes write_bytes compare_output host_checks""".split())


def is_cpp_identifier(name: str | None) -> bool:
    """True when ``name`` is spelled as a C++ identifier a program may declare (not ``__x`` or
    ``_X``, which C++ reserves)."""
    if not name or not _IDENTIFIER.match(name):
        return False
    return not (name.startswith("__") or (name.startswith("_") and name[1:2].isupper()))


def sanitize(text: str) -> str:
    """A C++ identifier spelled like ``text`` (invalid characters become ``_``)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", text).strip("_") or "value"
    return "v" + name if name[0].isdigit() else name


class Identifiers:
    """Unique names in nested scopes (see the module docstring); ``reserved`` names are never given."""

    def __init__(self, reserved: frozenset[str] = KERNEL_RESERVED, fallback_prefix: str = "v"):
        self._scopes: list[set[str]] = [set()]
        self._reserved = reserved
        self._prefix = fallback_prefix
        self._counter = 0

    def push_scope(self) -> None:
        self._scopes.append(set())

    def pop_scope(self) -> None:
        self._scopes.pop()

    def is_taken(self, name: str) -> bool:
        return name in self._reserved or any(name in scope for scope in self._scopes)

    def _claim(self, name: str) -> str:
        self._scopes[-1].add(name)
        return name

    def fresh(self) -> str:
        """The next free ``v0``, ``v1``, ..."""
        while True:
            name = f"{self._prefix}{self._counter}"
            self._counter += 1
            if not self.is_taken(name):
                return self._claim(name)

    def unique(self, preferred: str | None) -> str:
        """``preferred`` when it is a C++ identifier that is free here; ``preferred_1``,
        ``preferred_2``, ... when it is taken (or reserved); else a fresh ``vN``."""
        if not is_cpp_identifier(preferred):
            return self.fresh()
        if not self.is_taken(preferred):
            return self._claim(preferred)
        n = 1
        while self.is_taken(f"{preferred}_{n}"):
            n += 1
        return self._claim(f"{preferred}_{n}")

    def unique_from_text(self, text: str) -> str:
        """Like :meth:`unique` for free text (a buffer or kernel name): sanitized first."""
        return self.unique(sanitize(text))


def file_stem(text: str) -> str:
    """A file name spelled like ``text`` (only letters, digits, ``_``, ``-`` and ``.``)."""
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", text).lstrip(".")
    return stem or "unnamed"

"""Binding the arguments of a call in a kernel to a device function's or helper's signature.

Reads: the :class:`inspect.Signature` of a device function (derived from the API table)
or of an ``@inline`` helper. Writes: nothing. Positional and keyword arguments are
matched the way Python matches them; defaults come from the signature, so an API
parameter the table gives a default (``offset=0``) may be left out. A mismatch becomes a
:class:`KernelError` that shows the full signature and, for a misspelt keyword, the
closest parameter names.
"""

from __future__ import annotations

import ast
import difflib
import inspect
from dataclasses import dataclass



def suggest(name: str, candidates, n: int = 3) -> str:
    """``" (did you mean a or b?)"`` for the closest candidates, or ``""``."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=n, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def signature_text(name: str, signature: inspect.Signature) -> str:
    return f"{name}{signature}"


@dataclass(frozen=True)
class Argument:
    """One bound argument: its value and the AST node it came from (the call for a default)."""

    value: object
    node: ast.AST
    given: bool


def bind(name: str, signature: inspect.Signature, positional: list[tuple[object, ast.AST]],
         keywords: list[tuple[str, object, ast.AST]], call: ast.Call, error) -> dict[str, Argument]:
    """Match a call's arguments to ``signature``; ``error(node, message)`` builds the KernelError."""
    names = list(signature.parameters)
    for keyword, _value, node in keywords:
        if keyword not in signature.parameters:
            raise error(node, f"{name}() has no parameter {keyword!r}{suggest(keyword, names)}; it takes "
                              f"{signature_text(name, signature)}")
    try:
        bound = signature.bind(*positional, **{k: (v, n) for k, v, n in keywords})
    except TypeError as exc:
        raise error(call, f"wrong arguments to {name}(): {exc}; it takes "
                          f"{signature_text(name, signature)}") from None
    result: dict[str, Argument] = {}
    for param in signature.parameters.values():
        if param.name in bound.arguments:
            value, node = bound.arguments[param.name]
            result[param.name] = Argument(value, node, True)
        else:
            result[param.name] = Argument(param.default, call, False)
    return result

"""Messages for the Python constructs a kernel cannot use, each saying what to write instead.

Reads: an AST node. Writes: nothing. The builder raises ``KernelError(unsupported(node))``
at the node's line when it meets one of these.
"""

from __future__ import annotations

import ast

_HELPER = "define a module-level function decorated with @inline and call it"
_LITERAL = ("{} literals are not supported in a kernel; use array(uint32, n) for a fixed-size local array, "
            "or separate variables")

_MESSAGES: dict[type, str] = {
    ast.FunctionDef: f"nested function definitions are not supported in a kernel; {_HELPER}",
    ast.AsyncFunctionDef: f"nested function definitions are not supported in a kernel; {_HELPER}",
    ast.ClassDef: "classes are not supported in a kernel; use module-level constants and @inline helper functions",
    ast.Lambda: f"lambda is not supported in a kernel; {_HELPER}",
    ast.ListComp: "comprehensions are not supported in a kernel; use a for loop over range(...) filling an "
                  "array(uint32, n)",
    ast.SetComp: "comprehensions are not supported in a kernel; use a for loop over range(...)",
    ast.DictComp: "comprehensions are not supported in a kernel; use a for loop over range(...)",
    ast.GeneratorExp: "generator expressions are not supported in a kernel; use a for loop over range(...)",
    ast.Try: "try/except is not supported in a kernel: device code has no exceptions; test conditions with if",
    ast.With: "with statements are not supported in a kernel; call the API functions explicitly "
              "(for example tile_regs_acquire() ... tile_regs_release())",
    ast.AsyncWith: "async with is not supported in a kernel; kernels are plain sequential code",
    ast.Raise: "raise is not supported in a kernel: device code has no exceptions",
    ast.Assert: "assert is not supported in a kernel: device code has no exceptions; check the condition on the "
                "host before launching the program",
    ast.Yield: "yield is not supported in a kernel: a kernel is not a generator",
    ast.YieldFrom: "yield from is not supported in a kernel: a kernel is not a generator",
    ast.Await: "await is not supported in a kernel; blocking API calls (cb_wait_front, barriers) already wait",
    ast.AsyncFor: "async for is not supported in a kernel; use for ... in range(...)",
    ast.Break: "break is not supported in a kernel; restructure the loop with a while condition "
               "(for example: while i < n and not done:)",
    ast.Continue: "continue is not supported in a kernel; put the rest of the loop body under an if, or "
                  "restructure the loop with a while condition",
    ast.Global: "global is not supported in a kernel; kernels read module-level constants directly and keep "
                "their state in local variables",
    ast.Nonlocal: "nonlocal is not supported in a kernel; kernels keep their state in local variables",
    ast.Delete: "del is not supported in a kernel; local variables live until the kernel ends",
    ast.Import: "import inside a kernel is not supported; import at the top of the module",
    ast.ImportFrom: "import inside a kernel is not supported; import at the top of the module",
    ast.Match: "match is not supported in a kernel; use if / elif / else",
    ast.List: _LITERAL.format("list"),
    ast.Tuple: _LITERAL.format("tuple"),
    ast.Set: _LITERAL.format("set"),
    ast.Dict: _LITERAL.format("dict"),
    ast.JoinedStr: "f-strings are not supported in a kernel: kernels have no strings",
    ast.NamedExpr: "the := operator is not supported in a kernel; assign in a separate statement",
    ast.Starred: "*expressions are not supported in a kernel; pass arguments one by one",
    ast.Slice: "slices are not supported in a kernel; index one element at a time (a[i])",
}


def unsupported(node: ast.AST) -> str:
    """What to tell the user who wrote ``node`` in a kernel."""
    message = _MESSAGES.get(type(node))
    if message is not None:
        return message
    return (f"{type(node).__name__} ({ast.unparse(node)[:40]!r}) is not supported in a kernel; kernels use "
            f"assignments, if/while/for-range, integer arithmetic and calls")

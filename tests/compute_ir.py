"""A compute kernel written as ttkernel IR, for tests of the passes and analyses that read one."""

from __future__ import annotations

from tilefold.ir.context import parse_module


def compute_kernel(body: str, cbs: tuple[str, ...] = ("cb",), upper: int = 4):
    """A module with one compute kernel: CB values ``%<name>`` for ``cbs`` (compile-time arguments
    0, 1, ...), the index constants ``%c0``, ``%c1`` and ``%c4`` (= ``upper``), ``%t`` (true), then
    ``body``."""
    lines = []
    for i, name in enumerate(cbs):
        lines += [f"%arg{i} = ttkernel.get_compile_time_arg_val({i} : i32) : i32", f"%{name} = ttkernel.cb(%arg{i}) : i32"]
    lines += ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
              f"%c4 = arith.constant {upper} : index", "%t = arith.constant true", body, "func.return"]
    text = "\n".join(lines)
    return parse_module('builtin.module {\n  func.func @compute() attributes {ttkernel.thread = "compute", '
                        'ttl.kernel_role = "compute"} {\n' + text + "\n  }\n}\n")

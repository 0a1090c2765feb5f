"""The pass registry and the pipeline driver's verification."""

import subprocess
import sys

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, i32
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from tilefold.compiler import run_pipeline
from tilefold.passes.pipelines import PIPELINES
from tilefold.passes.registry import all_passes, pass_class


def test_every_pipeline_pass_is_registered_once():
    passes = all_passes()
    for names in PIPELINES.values():
        for name in names:
            assert pass_class(name) is passes[name]


def test_a_ttl_pipeline_does_not_import_the_tilelang_passes():
    code = ("import sys; from tilefold.passes.pipelines import pipeline_passes; pipeline_passes('ttl', 'n150'); "
            "print(sorted(m for m in sys.modules if m.startswith('tilefold.passes.tilelang.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


class _BreakReturnType(ModulePass):
    """Leaves a function whose return does not match its type."""

    name = "test-break-return-type"

    def apply(self, ctx, op: ModuleOp) -> None:
        fn = next(o for o in op.walk() if isinstance(o, func.FuncOp))
        fn.function_type = func.FunctionType.from_lists([], [i32])


class _Nothing(ModulePass):
    name = "test-nothing"

    def apply(self, ctx, op: ModuleOp) -> None:
        pass


def _module() -> ModuleOp:
    block = Block()
    block.add_op(func.ReturnOp())
    return ModuleOp([func.FuncOp("f", ((), ()), Region(block))])


@pytest.mark.parametrize("each", [False, True])
def test_invalid_ir_is_caught_after_the_last_pass_whether_or_not_each_pass_is_verified(each):
    with pytest.raises(VerifyException):
        run_pipeline(_module(), (_BreakReturnType(), _Nothing()), verify_each_pass=each)
    run_pipeline(_module(), (_Nothing(),), verify_each_pass=each)

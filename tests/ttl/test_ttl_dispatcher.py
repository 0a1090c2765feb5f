"""``@ttl.operation(dispatcher=True)``: a control-only schedule of other operations, and the
argument contracts (``dispatch_arguments=``) its resolution checks.

The schedule is read from the dispatcher's body (static ``if``s resolved), emitted as IR
(``ttl.dispatch.target`` / ``ttl.dispatch.invoke``), resolved and read back as a
``ttl.ResolvedDispatcher``; every misuse is one error at the user's line.
"""

from __future__ import annotations

import ast

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, marked_line

HANDOFF_IN = ttl.DispatchArgument("read", "handoff")
HANDOFF_OUT = ttl.DispatchArgument("write", "handoff")


@ttl.operation(grid=(1, 1), dispatch_arguments={"source": HANDOFF_IN, "destination": HANDOFF_OUT})
def scale(source, destination):
    pass


@ttl.operation(grid=(1, 1), dispatch_arguments={"source": HANDOFF_IN, "destination": HANDOFF_OUT})
def shift(source, destination):
    pass


@ttl.operation(grid=(1, 1))
def unused_child():
    pass


ENABLED = False


@ttl.operation(dispatcher=True)
def pipeline(a, b, c):
    scale(a, b)
    if ENABLED:
        unused_child()
    else:
        shift(source=b, destination=c)
    scale(c, b)


def _tensor(value=1.0):
    return ttnn.from_numpy(np.full((32, 64), value, np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def test_the_schedule_keeps_the_calls_of_the_branches_its_static_ifs_take():
    assert pipeline.dispatcher and pipeline._ttl_operation_kind == "dispatcher"
    body = ast.unparse(pipeline.dispatcher_ast)
    assert "scale(a, b)" in body and "shift(source=b, destination=c)" in body
    assert "if ENABLED" not in body and "unused_child" not in body
    assert tuple(pipeline.dispatch_targets.values()) == (scale, shift)
    assert tuple(pipeline.dispatch_targets) == (scale.operation_identity, shift.operation_identity)
    with pytest.raises(TypeError):
        pipeline.dispatch_targets["other"] = scale
    pipeline.dispatcher_ast.body.clear()                # a copy: the schedule stays
    assert pipeline.dispatcher_ast.body
    assert not scale.dispatcher and scale.dispatcher_ast is None and not scale.dispatch_targets


def test_emitted_ir_declares_each_target_once_and_invokes_them_in_order():
    text = str(pipeline.emit_dispatch_ir(_tensor(), _tensor(), _tensor()))
    assert text.count("ttl.dispatch.target") == 2 and text.count("ttl.dispatch.invoke") == 3, text
    tile = "tensor<1x2x!ttcore.tile<32x32, bf16>>"
    assert f"func.func @pipeline(%arg0: {tile}, %arg1: {tile}, %arg2: {tile}) attributes {{ttl.dispatcher}}" in text
    first = text.index(f"ttl.dispatch.invoke @scale(%arg0, %arg1 : {tile}, {tile})")
    second = text.index("ttl.dispatch.invoke @shift(%arg1, %arg2 :")
    third = text.index("ttl.dispatch.invoke @scale(%arg2, %arg1 :")
    assert first < second < third
    assert scale.operation_identity in text and '"read:handoff", "write:handoff"' in text


def test_a_resolved_schedule_reads_back_as_targets_and_invocations():
    module = pipeline.resolve_dispatch_ir(_tensor(), _tensor(), _tensor())
    assert "attributes {ttl.dispatch.resolved, ttl.dispatcher}" in str(module)
    resolved = ttl.ResolvedDispatcher(module)
    assert resolved.name == "pipeline" and len(resolved.argument_types) == 3
    assert [t.symbol for t in resolved.targets] == ["scale", "shift"]
    assert resolved.targets[0].argument_contracts == (HANDOFF_IN, HANDOFF_OUT)
    assert [i.target.symbol for i in resolved.invocations] == ["scale", "shift", "scale"]
    assert [i.dispatcher_argument_indices for i in resolved.invocations] == [(0, 1), (1, 2), (2, 1)]
    assert resolved.invocations[1].argument_bindings == (("source", 1), ("destination", 2))
    assert repr(pipeline.resolve_dispatch(_tensor(), _tensor(), _tensor())) == \
        "ResolvedDispatcher(pipeline: scale, shift, scale)"
    with pytest.raises(ValueError, match="has not been resolved"):
        ttl.ResolvedDispatcher(pipeline.emit_dispatch_ir(_tensor(), _tensor(), _tensor()))


def test_calling_a_dispatcher_is_one_error_at_the_call():
    expect_error(lambda: pipeline(_tensor(), _tensor(), _tensor()),  # error
                 test_calling_a_dispatcher_is_one_error_at_the_call, KernelError, "control-only", "resolve_dispatch")


def test_an_ordinary_value_read_by_a_later_image_is_one_error_at_the_reading_call():
    @ttl.operation(grid=(1, 1), dispatch_arguments={"value": ttl.DispatchArgument("write", "ordinary")})
    def producer(value):
        pass

    @ttl.operation(grid=(1, 1), dispatch_arguments={"value": ttl.DispatchArgument("read", "ordinary")})
    def consumer(value):
        pass

    @ttl.operation(dispatcher=True)
    def invalid(value):
        producer(value)
        consumer(value)  # error

    expect_error(lambda: invalid.resolve_dispatch(_tensor()),
                 test_an_ordinary_value_read_by_a_later_image_is_one_error_at_the_reading_call, ttl.ir.MLIRError,
                 "'value' is written by 'producer' and read by 'consumer'", "declare handoff or persistent_state")


def test_a_value_kept_as_persistent_state_crosses_images():
    state = ttl.DispatchArgument("read_write", "persistent_state", state="kv")

    @ttl.operation(grid=(1, 1), dispatch_arguments={"cache": state})
    def step(cache):
        pass

    @ttl.operation(dispatcher=True)
    def steps(cache):
        step(cache)
        step(cache)

    assert len(steps.resolve_dispatch(_tensor()).invocations) == 2


def test_a_dispatcher_body_that_is_not_a_straight_line_of_calls_is_one_error():
    @ttl.operation(dispatcher=True)
    def assigns(source, destination):
        temporary = source  # error
        scale(temporary, destination)

    expect_error(lambda: assigns.emit_dispatch_ir(_tensor(), _tensor()),
                 test_a_dispatcher_body_that_is_not_a_straight_line_of_calls_is_one_error, KernelError,
                 "unsupported straight-line statement Assign")

    @ttl.operation(dispatcher=True)
    def computed(source, destination):
        scale(source, destination if True else source)

    with pytest.raises(KernelError, match="must be one of the dispatcher's own parameters"):
        computed.emit_dispatch_ir(_tensor(), _tensor())
    with pytest.raises(KernelError, match="'scale' is not a dispatcher"):
        scale.emit_dispatch_ir(_tensor(), _tensor())


def test_a_target_without_a_grid_is_one_error_at_its_call():
    @ttl.operation()
    def expand_only():
        pass

    def make():
        @ttl.operation(dispatcher=True)
        def invalid():
            expand_only()  # error

    expect_error(make, test_a_target_without_a_grid_is_one_error_at_its_call, KernelError,
                 "dispatcher target 'expand_only' must declare a grid")


def test_a_condition_that_is_not_a_compile_time_value_is_one_error():
    def make():
        @ttl.operation(dispatcher=True)
        def invalid(a, b):
            if a.shape[0] > 1:  # error
                scale(a, b)

    expect_error(make, test_a_condition_that_is_not_a_compile_time_value_is_one_error, KernelError,
                 "'a.shape[0] > 1' is not a compile-time value")


def test_kernel_functions_in_a_dispatcher_and_a_dispatcher_in_an_operation_are_errors():
    with pytest.raises(ValueError, match="dispatcher=True requires a unified operation body"):
        @ttl.operation(dispatcher=True)
        def with_kernels():
            @ttl.compute()
            def compute():
                pass

    with pytest.raises(ValueError, match="cannot compose dispatcher operation 'pipeline'"):
        @ttl.operation(grid=(1, 1))
        def composes(a, b, c):
            pipeline(a, b, c)

    with pytest.raises(TypeError, match="dispatcher must be a bool"):
        ttl.operation(dispatcher=1)


def test_a_dispatcher_bound_after_the_operation_calling_it_is_refused_at_the_call():
    @ttl.operation(grid=(1, 1))
    def outer(a, b):
        later(a, b)  # error

    global later
    later = pipeline
    try:
        expect_error(lambda: outer(_tensor(), _tensor()),
                     test_a_dispatcher_bound_after_the_operation_calling_it_is_refused_at_the_call, KernelError,
                     "cannot compose dispatcher operation 'pipeline' into 'outer'")
    finally:
        del later


@pytest.mark.parametrize("make, error, fragment", [
    (lambda: ttl.DispatchArgument("read_write", "persistent_state"), ValueError, "non-empty state name"),
    (lambda: ttl.DispatchArgument("write", "immutable_image_state"), ValueError, "must be read-only"),
    (lambda: ttl.DispatchArgument("read", "handoff", state="x"), ValueError, "only persistent_state"),
    (lambda: ttl.DispatchArgument("peek"), TypeError, "'read', 'write' or 'read_write'"),
    (lambda: ttl.DispatchArgument("read", "forever"), TypeError, "'handoff'"),
])
def test_a_contract_that_cannot_hold_is_one_error(make, error, fragment):
    with pytest.raises(error, match=fragment):
        make()


def test_contracts_of_parameters_an_operation_does_not_have_are_one_error():
    line = marked_line(test_contracts_of_parameters_an_operation_does_not_have_are_one_error)
    with pytest.raises(KernelError, match="'missing', which are not parameters of op") as info:
        @ttl.operation(grid=(1, 1), dispatch_arguments={"missing": HANDOFF_IN})
        def op(x):  # error
            pass
    assert f"test_ttl_dispatcher.py:{line - 1}: " in str(info.value)      # the decorator's line

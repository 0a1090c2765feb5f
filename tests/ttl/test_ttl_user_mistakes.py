"""Mistakes kernel authors make, each one error at their line saying what to do instead: host
functions (ttnn, torch, math, random, files) called in kernels, kernels calling kernels, buffers
made inside a kernel, chained calls on a result that has none, an operation's return value used as
a tensor, and a race between two cores of one call naming both cores."""

from __future__ import annotations

import inspect
import math
import random

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError, LayoutError, NocHazardError
from ttl_helpers import copy_kernels, expect_error, tile_tensor, zeros


def _adding_operation(compute_body):
    """An operation over one tile: a reader of x, the compute ``compute_body(x_dfb, y_dfb)`` and a writer of y."""

    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
        compute_body(x_dfb, y_dfb)
        copy_kernels(x_dfb, y_dfb, x, y)

    return op


def _run(op):
    return lambda: op(tile_tensor((32, 32), seed=1), zeros((32, 32)))


def test_ttnn_function_in_a_kernel_names_ttl_math():
    def body(x_dfb, y_dfb):
        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as o:
                o.store(ttnn.relu(a))  # error

    expect_error(_run(_adding_operation(body)), test_ttnn_function_in_a_kernel_names_ttl_math, KernelError,
                 "ttnn.relu() runs on the host", "ttl.math.relu")


def test_math_module_on_a_block_names_ttl_math():
    def body(x_dfb, y_dfb):
        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as o:
                o.store(math.exp(a))  # error

    expect_error(_run(_adding_operation(body)), test_math_module_on_a_block_names_ttl_math, KernelError,
                 "math.exp() computes on Python numbers", "ttl.math.exp")


def test_str_of_a_runtime_value_points_at_print():
    def body(x_dfb, y_dfb):
        @ttl.compute()
        def compute():
            for i in range(ttl.node(dims=1) + 1):
                label = "row " + str(i)  # error
                print(label)
            with x_dfb.wait() as a, y_dfb.reserve() as o:
                o.store(a)

    expect_error(_run(_adding_operation(body)), test_str_of_a_runtime_value_points_at_print, KernelError,
                 "str() of a runtime integer", "print('row', r)")


def test_random_numbers_in_a_kernel_are_refused():
    def body(x_dfb, y_dfb):
        @ttl.compute()
        def compute():
            for _ in range(random.randint(1, 1)):  # error
                with x_dfb.wait() as a, y_dfb.reserve() as o:
                    o.store(a)

    expect_error(_run(_adding_operation(body)), test_random_numbers_in_a_kernel_are_refused, KernelError,
                 "random.randint() in a kernel would run once, while the kernel is built")


def test_dataflow_buffer_made_in_a_kernel():
    def body(x_dfb, y_dfb):
        @ttl.compute()
        def compute():
            spare = ttl.make_dfb(ttnn.bfloat16, shape=(1, 1), block_count=2)  # error
            with x_dfb.wait() as a, y_dfb.reserve() as o:
                o.store(a)

    expect_error(_run(_adding_operation(body)), test_dataflow_buffer_made_in_a_kernel, KernelError,
                 "ttl.make_dfb() in a kernel function", "make dataflow buffers in the operation body")


def test_kernel_calling_a_kernel():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()

        @ttl.datamovement()
        def write():
            read()  # error
            with x_dfb.wait() as blk:
                ttl.copy(blk, y[0, 0]).wait()

    expect_error(_run(op), test_kernel_calling_a_kernel, KernelError,
                 "kernel function read is called from a kernel", "plain helper function")


def test_method_on_a_chained_call_result():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait().wait()  # error

        @ttl.datamovement()
        def write():
            with x_dfb.wait() as blk:
                ttl.copy(blk, y[0, 0]).wait()

    expect_error(_run(op), test_method_on_a_chained_call_result, KernelError,
                 "returns no value", "keep ttl.copy(x[0, 0], blk) in a name")


def test_an_operation_result_is_not_a_tensor():
    def body(x_dfb, y_dfb):
        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as o:
                o.store(a)

    op = _adding_operation(body)
    result = op(tile_tensor((32, 32), seed=1), zeros((32, 32)))
    with pytest.raises(LayoutError, match="not what an operation call returns"):
        ttnn.to_numpy(result)


def test_two_cores_of_one_write_race_names_both():
    @ttl.operation(grid=(2, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            nx = ttl.node(dims=1)
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, nx], blk).wait()

        @ttl.datamovement()
        def write():
            with x_dfb.wait() as blk:
                ttl.copy(blk, y[0, 0]).wait()  # error

    with pytest.raises(NocHazardError) as info:
        op(tile_tensor((32, 64), seed=1), zeros((32, 64)))
    message = str(info.value)
    assert "that core (0,0) also writes" in message and "on core (1,0))" in message, message


@pytest.mark.parametrize("lookup, expected", [
    (lambda: ttnn.TILE, "ttnn.TILE is not supported by tilefold yet (did you mean ttnn.TILE_SIZE or ttnn.TILE_LAYOUT?)"),
    (lambda: ttnn.bfloat61, "(did you mean ttnn.bfloat16?)"),
    (lambda: ttl.math.expp, "(did you mean ttl.math.exp?)"),
    (lambda: ttl.opertion, "(did you mean ttl.operation?)"),
    (lambda: ttnn.frobnicate, "ttnn.frobnicate is not supported by tilefold yet"),
])
def test_a_misspelt_name_gets_the_close_one(lookup, expected):
    with pytest.raises(AttributeError) as info:
        lookup()
    assert str(info.value).endswith(expected), str(info.value)


def test_concat_of_two_data_types_is_refused_as_in_ttnn():
    a = ttnn.from_numpy(np.ones((32, 32), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    b = ttnn.from_numpy(np.ones((32, 32), np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    with pytest.raises(LayoutError, match="joins tensors of one data type, not bfloat16 and float32"):
        ttnn.concat([a, b], dim=0)
    assert ttnn.to_numpy(ttnn.concat([a, a], dim=0)).shape == (64, 32)


def test_block_kept_across_loop_iterations_says_why():
    def body(x_dfb, y_dfb):
        @ttl.compute()
        def compute():
            for i in range(ttl.node(dims=1) + 1):
                with x_dfb.wait() as a, y_dfb.reserve() as o:
                    if i > 0:
                        o.store(prev + a)  # error
                    else:
                        o.store(a)
                    prev = a

    expect_error(_run(_adding_operation(body)), test_block_kept_across_loop_iterations_says_why, KernelError,
                 "name 'prev' is not defined here", "not a block acquired in a with")


@pytest.mark.filterwarnings("ignore:dfb x_dfb is declared but no kernel uses it")
def test_kernel_without_its_decorator_warns_at_its_def():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        def read():  # warned
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()

        @ttl.datamovement()
        def write():
            pass

    with pytest.warns(UserWarning, match=r"read\(\) uses dataflow buffers but has no @ttl.compute\(\)") as record:
        op(tile_tensor((32, 32), seed=1), zeros((32, 32)))
    lines = {w.lineno for w in record if "no @ttl.compute()" in str(w.message)}
    source, first = inspect.getsourcelines(test_kernel_without_its_decorator_warns_at_its_def)
    assert lines == {first + next(i for i, text in enumerate(source) if "# warned" in text)}


def test_semaphore_call_outside_a_kernel():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        sem = ttl.Semaphore(0)
        sem.set(1)  # error

    expect_error(_run(op), test_semaphore_call_outside_a_kernel, KernelError,
                 "runs outside every kernel function", "move the call into a @ttl.datamovement kernel function")

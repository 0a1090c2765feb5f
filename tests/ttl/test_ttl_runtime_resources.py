"""``@ttl.operation(runtime_resource_factory=f)``: the host program adds the semaphores ``f``
describes, after the compiler's own (``first_free_semaphore_id``), for C++ its kernels call; the
operation still runs on the simulated device against numpy; the host program passes check-host;
a factory that fails or returns what tilefold cannot place is one error at the operation's line."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros

SEEN = {}


def _semaphores(*, tensors, core_ranges, first_free_semaphore_id):
    SEEN.update(tensors=tensors, core_ranges=core_ranges, first=first_free_semaphore_id)
    return ttl.ProgramRuntimeResources(semaphore_descriptors=[
        ttnn.SemaphoreDescriptor(first_free_semaphore_id + i, core_ranges=core_ranges, initial_value=7 + i)
        for i in range(3)])


def _make(factory):
    @ttl.operation(grid=(2, 1), runtime_resource_factory=factory)  # error
    def double(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
        ready = ttl.Semaphore(initial_value=0)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(a * 2.0)

        @ttl.datamovement()
        def read():
            col, _ = ttl.node(dims=2)
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, col], blk).wait()
            ready.set(1)

        @ttl.datamovement()
        def write():
            col, _ = ttl.node(dims=2)
            ready.wait_eq(1)
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0, col]).wait()

    return double


def test_the_factory_sees_the_call_and_its_semaphores_follow_the_compilers():
    x, y = tile_tensor((32, 64), seed=2), zeros((32, 64))
    _make(_semaphores)(x, y)
    np.testing.assert_allclose(y.host_values, x.host_values * 2)
    assert SEEN["tensors"] == (x, y)
    assert [(r.start.x, r.start.y, r.end.x, r.end.y) for r in SEEN["core_ranges"].ranges()] == [(0, 0, 1, 0)]
    program = compiled(_make(_semaphores), x, y).program
    first = SEEN["first"]
    assert first == 1                                  # the operation's ttl.Semaphore comes first
    assert [s.initial_value for s in program.semaphores] == [0, 7, 8, 9]
    assert [s.id for s in program.semaphores[first:]] == [1, 2, 3]


def test_the_host_program_creates_them_and_passes_check_host(tmp_path):
    import tilefold.run.ttl as runner
    from checkhost import check_hosts, require_hosts_accepted
    from tilefold.frontend.ttl import session

    with session.configured(project_dir=tmp_path / "projects"):
        _make(_semaphores)(tile_tensor((32, 64)), zeros((32, 64)))
    mains = sorted((tmp_path / "projects").glob("*/main.cpp"))
    text = mains[0].read_text()
    assert text.count("CreateSemaphore(") == 4, text
    assert runner is not None
    require_hosts_accepted(check_hosts(mains))


def _returns(value):
    return lambda **_: value


@pytest.mark.parametrize("factory, fragment", [
    (_returns(None), "must return ttl.ProgramRuntimeResources, not NoneType"),
    (lambda **_: 1 / 0, "runtime_resource_factory failed: ZeroDivisionError"),
    (_returns(ttl.ProgramRuntimeResources(kernel_resources=(ttl.KernelRuntimeResources(kernel=None),))),
     "kernel_resources=...) from runtime_resource_factory is not supported by tilefold yet"),
    (_returns(ttl.ProgramRuntimeResources(semaphore_descriptors=[ttnn.SemaphoreDescriptor(5)])),
     "have ids [5]; they take the ids from first_free_semaphore_id (1) on"),
])
def test_a_factory_tilefold_cannot_follow_is_one_error_at_the_operation(factory, fragment):
    expect_error(lambda: _make(factory)(tile_tensor((32, 64)), zeros((32, 64))), _make, KernelError, fragment)

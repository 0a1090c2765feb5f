"""Every row of the TT-Metalium API table has one simulator implementation, and every SFPU
function has its numerics and a cost on every device."""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.arch.costs import BLACKHOLE_COSTS, WORMHOLE_COSTS
from tilefold.ir.sfpu import SFPU_OPS
from tilefold.ir.ttkernel_api import API
from tilefold.sim.compute_api import IMPLEMENTATIONS, ComputeApi
from tilefold.sim.device import ComputeContext, DataMovementContext


def contexts(thread: str) -> list[type]:
    return {"compute": [ComputeContext], "noc": [DataMovementContext]}.get(thread, [ComputeContext,
                                                                                    DataMovementContext])


@pytest.mark.parametrize("name", sorted(API))
def test_every_api_row_is_implemented_by_the_simulator(name):
    fn = API[name]
    for cls in contexts(fn.thread):
        assert callable(getattr(cls, name, None)), f"{cls.__name__} does not implement {name}"


def test_each_compute_row_has_exactly_one_implementation():
    compute = {f.name for f in API.values() if f.thread == "compute"}
    assert set(IMPLEMENTATIONS) == compute
    for name, how in IMPLEMENTATIONS.items():
        fn = API[name]
        # a row the table marks as SFPU or as configuration has no second, hand-written method
        if how == "method":
            assert fn.sfpu is None or name == "cumsum_tile", name
        assert how != "sfpu" or fn.sfpu is not None
        assert how != "configure" or fn.configures


def test_configuration_only_rows_do_nothing_but_configure():
    for name, how in IMPLEMENTATIONS.items():
        assert (how == "configure") == bool(getattr(getattr(ComputeApi, name), "configures_only", False))


@pytest.mark.parametrize("costs", [WORMHOLE_COSTS, BLACKHOLE_COSTS], ids=["wormhole", "blackhole"])
def test_every_sfpu_row_has_a_cost(costs):
    for op in SFPU_OPS:
        assert costs.sfpu(op.cost) > 0, op.name


def test_every_sfpu_row_is_an_api_row_with_its_init():
    for op in SFPU_OPS:
        assert API[op.call].sfpu == op.name
        assert API[op.init].configures, op.init


@pytest.mark.parametrize("op", [o for o in SFPU_OPS if o.values is not None], ids=lambda o: o.name)
def test_every_sfpu_function_computes_float32_values(op):
    x = np.linspace(-0.9, 0.9, 64, dtype=np.float32)
    params = [0x3F000000] * len(op.params)          # the bits of 0.5
    args = (x, x[::-1]) if op.arity == "binary" else (x, *params)
    with np.errstate(all="ignore"):
        out = np.asarray(op.values(*args), dtype=np.float32)
    assert out.shape == x.shape


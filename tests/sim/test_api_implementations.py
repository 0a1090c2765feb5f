"""Every row of the TT-Metalium API table has one simulator implementation and a cost (the
simulator charges exactly that cost), and every SFPU function has its numerics and a cost on
every device."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from tilefold.arch import get_arch
from tilefold.arch.costs import BLACKHOLE_COSTS, WORMHOLE_COSTS
from tilefold.ir.sfpu import SFPU_OPS
from tilefold.ir.ttkernel_api import API, COSTS
from tilefold.sim.compute_api import IMPLEMENTATIONS, ComputeApi
from tilefold.sim.device import ComputeContext, DataMovementContext


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


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
        assert (how == "eltwise") == (fn.eltwise is not None), name


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



FREE = {"get_arg_val", "get_common_arg_val", "get_tile_size", "get_absolute_logical_x", "get_absolute_logical_y"}


@pytest.mark.parametrize("arch", ["wormhole_b0", "blackhole"])
def test_every_api_row_has_a_cost(arch):
    """Each row names its cost-model term, and only the calls that read a value the core holds are free."""
    a = get_arch(arch)
    for name, fn in API.items():
        assert fn.cost in COSTS, name
        assert (fn.cost == "sfpu") == (fn.cost_family is not None), name
        cycles = a.call_cycles(fn.cost, fn.cost_family)
        assert cycles == 0 if name in FREE else cycles > 0, (name, fn.cost, cycles)
    assert {n for n, f in API.items() if f.cost == "free"} == FREE


def _example(path: str, factory: str, *args):
    spec = importlib.util.spec_from_file_location(Path(path).stem, EXAMPLES / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, factory)(*args)


TRACED = [("tilelang/gemm.py", "matmul", 64, 64, 64, 32, 32, 32), ("tilelang/softmax.py", "softmax", 64, 64),
          ("tilelang/elementwise.py", "fused_relu", 64, 64, 32, 32),
          ("tilelang/cumsum_transpose.py", "transpose_primitive", 64, 64, 32)]


# terms that scale with the bytes moved: one bfloat16 tile / one packet is the row's cost
SCALED = {"pack", "noc_issue"}


@pytest.mark.parametrize("case", TRACED, ids=[f"{c[0]}:{c[1]}" for c in TRACED])
def test_the_simulator_charges_each_call_its_table_cost(case, tmp_path):
    """Every API call of a traced run costs the cycles of its row's term; a pack or NOC transfer
    costs a positive number of cycles that grows with its bytes."""
    from tilefold.compiler import compile_prim_func
    from tilefold.program import ComputeConfig

    func = _example(*case)
    kernel = compile_prim_func(getattr(func, "prim", func))
    rng = np.random.default_rng(0)
    kernel.simulate({t.name: rng.standard_normal(t.shape).astype(np.float32) for t in kernel.tensors
                     if t.role in ("input", "inout")}, trace=tmp_path / "trace.json")
    fidelity = next(k.config.math_fidelity for k in kernel.program.kernels if isinstance(k.config, ComputeConfig))
    seen = set()
    for event in json.loads((tmp_path / "trace.json").read_text())["traceEvents"]:
        fn = API.get(event.get("name"))
        if event["ph"] != "X" or fn is None:
            continue
        cycles = event["dur"] * kernel.arch.clock_hz / 1e6
        want = kernel.arch.call_cycles(fn.cost, fn.cost_family, fidelity)
        if fn.cost in SCALED:
            assert cycles > 0, fn.name
        else:
            assert cycles == pytest.approx(want, abs=1e-3), fn.name
        seen.add(fn.cost)
    assert len(seen) >= 5, seen

"""tt.plan.json: emitted from the compiled kernel, loaded, validated; broken plans name their rule."""

import copy
import json

import pytest
from tilelang_helpers import load_example

import tilefold.language as T
from tilefold.codegen.plan import RULES, emit_tt_plan, load_tt_plan, validate_plan
from tilefold.errors import PlanError
from tilefold.run.jit import jit


@pytest.fixture(scope="module")
def gemm_plan(tmp_path_factory):
    kernel = load_example("gemm").matmul(256, 192, 128, 64, 64, 32)
    path = tmp_path_factory.mktemp("plan") / "tt.plan.json"
    emit_tt_plan(kernel.compiled.function, path)
    return path


def test_plan_schema(gemm_plan):
    plan = load_tt_plan(gemm_plan, params=["A", "B", "C"], grid_tiles=[8, 6])
    assert set(plan) == {"core_grid", "grid", "cores", "schedule", "core_ranges", "work_partition", "layouts"}
    assert plan["core_grid"] == [8, 8]
    assert plan["grid"] == {"x": 8, "y": 8, "total_tiles": 64}   # as TileLang-TT scripts read it
    assert plan["cores"]["num_cores"] == 12 and plan["cores"]["topology"] == "grid"
    assert plan["cores"]["assignments"][:2] == [{"core_id": 0, "start_tile": 0, "count": 1},
                                                {"core_id": 1, "start_tile": 1, "count": 1}]
    assert plan["schedule"] == {"policy": "contiguous", "order": "row_major"}
    # 4x3 blocks of 2x2 tiles on 12 cores, one block each
    assert plan["core_ranges"] == [{"start": [0, 0], "extent": [8, 1]}, {"start": [0, 1], "extent": [4, 1]}]
    assert plan["work_partition"]["(0,0)"] == [
        {"io": r, "jo": c, "len_k": 128, "tile_order": "row_major"} for r in (0, 1) for c in (0, 1)]
    assert plan["work_partition"]["(3,0)"][0] == {"io": 2, "jo": 0, "len_k": 128, "tile_order": "row_major"}
    assert plan["layouts"]["A"] == {"shard": "DRAM", "interleave": True, "tile_id_order": "row_major"}


def test_local_shard_plan_assigns_each_core_its_shard():
    @T.prim_func
    def copy(A: T.Tensor((128, 128), "bfloat16"), C: T.Tensor((128, 128), "bfloat16")):
        with T.Kernel(4, 4) as (bx, by):
            a = T.alloc_shared((32, 32), "bfloat16")
            T.copy(A[by * 32, bx * 32], a)
            T.copy(a, C[by * 32, bx * 32])

    layout = {"C": {"memory": "L1", "layout": "sharded", "nd_shard": {"grid": [2, 2]}}}
    plan = jit(T.annotate_tt_layout(copy, layout)).compiled.plan()
    assert validate_plan(plan, ["A", "C"], [4, 4]) == []
    assert plan["core_ranges"] == [{"start": [0, 0], "extent": [2, 2]}]
    assert sorted((w["io"], w["jo"]) for w in plan["work_partition"]["(1,0)"]) == [(0, 2), (0, 3), (1, 2), (1, 3)]
    assert plan["layouts"]["C"]["shard"] == "L1" and plan["layouts"]["C"]["nd_shard"]["projected_grid"] == [2, 2]


def broken(path, change):
    plan = json.loads(path.read_text())
    change(plan)
    return plan


@pytest.mark.parametrize("rule, change, fragment", [
    (1, lambda p: p["core_ranges"].append({"start": [6, 7], "extent": [3, 1]}), "is not inside the 8x8 core grid"),
    (2, lambda p: p["core_ranges"].append({"start": [2, 0], "extent": [1, 1]}), "overlap at (2,0)"),
    (3, lambda p: p["work_partition"]["(0,0)"].pop(), "assigned to no core, first (io=1, jo=1)"),
    (4, lambda p: p["layouts"]["B"].update(shard="HBM"), "layout of 'B' has shard 'HBM'"),
    (5, lambda p: p["layouts"].update(D={"shard": "DRAM"}), "names buffer 'D', which is not a parameter"),
])
def test_broken_plans_name_their_rule(gemm_plan, tmp_path, rule, change, fragment):
    plan = broken(gemm_plan, change)
    errors = validate_plan(plan, params=["A", "B", "C"])
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"rule {rule} ({RULES[rule]}): ") and fragment in errors[0]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(plan))
    with pytest.raises(PlanError) as info:
        load_tt_plan(path, params=["A", "B", "C"])
    assert f"rule {rule} ({RULES[rule]})" in str(info.value)


def test_a_tile_given_to_two_cores(gemm_plan):
    plan = broken(gemm_plan, lambda p: p["work_partition"]["(1,0)"].append(copy.deepcopy(p["work_partition"]["(0,0)"][0])))
    assert any("is assigned to (0,0) and (1,0)" in e for e in validate_plan(plan))


def test_load_tt_plan_reports_bad_json(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text("{\n  \"core_grid\": [8, 8],\n  oops\n}")
    with pytest.raises(PlanError) as info:
        load_tt_plan(path)
    assert str(info.value).startswith(f"{path}:3: not valid JSON")

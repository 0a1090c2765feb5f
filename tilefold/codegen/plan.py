"""``tt.plan.json``: the execution plan of a compiled TileLang kernel (TileLang-TT architecture, Appendix A; docs/references.md).

Reads: the TileLang function's ``tt.*`` attributes after the pipeline. Writes: a plan dict /
JSON file::

    {"core_grid": [gx, gy],
     "grid": {"x": gx, "y": gy, "total_tiles": gx * gy},     # the core grid as TileLang-TT's v4 plans give it
     "cores": {"num_cores": n, "topology": "grid",            # and its cores, each a run of blocks
               "assignments": [{"core_id": i, "start_tile": s, "count": c}, ...]},
     "schedule": {"policy": "contiguous", "order": "row_major"},
     "core_ranges": [{"start": [x, y], "extent": [w, h]}, ...],
     "work_partition": {"(x,y)": [{"io": m, "jo": n, "len_k": K, "tile_order": "row_major"}, ...]},
     "layouts": {"A": {"shard": "DRAM", "interleave": true, "tile_id_order": "row_major"}, ...}}

``work_partition`` lists, per core, the output tiles (``io`` row, ``jo`` column, in tiles)
of the blocks it computes, in the order it computes them; ``len_k`` is the K extent in
elements of a matmul. :func:`validate_plan` checks the five rules of the seed and returns
one message per violation, each naming its rule; :func:`load_tt_plan` reads a plan and
raises :class:`PlanError` when a rule is broken.
"""

from __future__ import annotations

import json
from pathlib import Path

from tilefold.errors import PlanError
from tilefold.ir.attributes import get_attr, param_names
from tilefold.layout.block_orders import block_at

RULES = {
    1: "core ranges within grid bounds",
    2: "non-overlapping ranges",
    3: "complete tile coverage",
    4: "valid layout shards",
    5: "consistent buffer references",
}
SHARDS = ("DRAM", "L1")


def _rule(n: int, message: str) -> str:
    return f"rule {n} ({RULES[n]}): {message}"


def plan_from_kernel(function) -> dict:
    """The plan of a lowered TileLang function (the ``func.func`` with ``tt.*`` attributes)."""
    mt, nt = get_attr(function, "tt.grid_tiles")
    bm, bn = get_attr(function, "tt.block_tiles")
    order = get_attr(function, "tt.schedule")["order"]
    mode = get_attr(function, "tt.partition_mode")
    len_k = get_attr(function, "tt.k_elems", None)
    work: dict[str, list[dict]] = {}
    assignments = []
    for core_id, row in enumerate(get_attr(function, "tt.core_runtime_args")):
        x, y, start, count = row[:4]
        assignments.append({"core_id": core_id, "start_tile": start, "count": count})
        if mode == "local_shard":
            sm, sn, _, _, sy, sx = row[7:13]
            blocks = [(sy * sm + t // sn, sx * sn + t % sn) for t in range(start, start + count)]
        else:
            raster = get_attr(function, "tt.raster", None)
            if raster:
                plane = raster["rows"] * raster["cols"]
                blocks = [block_at(t % plane, raster["rows"], raster["cols"], raster["order"], raster["k"])
                          for t in range(start, start + count)]
            else:
                blocks = [(t // nt, t % nt) for t in range(start, start + count)]
        items = []
        for m, n in blocks:
            for r in range(bm):
                for c in range(bn):
                    item = {"io": m * bm + r, "jo": n * bn + c}
                    if len_k:
                        item["len_k"] = len_k
                    item["tile_order"] = order
                    items.append(item)
        work[f"({x},{y})"] = items
    layouts = {}
    for name in param_names(function):
        entry = get_attr(function, f"tt.buffer.{name}")
        layout = {"shard": entry["memory"], "interleave": entry["layout"] == "interleaved",
                  "tile_id_order": "row_major"}
        if entry["layout"] == "sharded":
            nd = entry["nd_shard"]
            layout["nd_shard"] = {k: nd[k] for k in ("axes", "grid", "shard_shape_elems", "projected_grid",
                                                     "projected_shard_tiles")}
        layouts[name] = layout
    gx, gy = get_attr(function, "tt.core_grid")
    return {
        "core_grid": [gx, gy],
        "grid": {"x": gx, "y": gy, "total_tiles": gx * gy},
        "cores": {"num_cores": len(assignments), "topology": "grid", "assignments": assignments},
        "schedule": {"policy": "contiguous", "order": order},
        "core_ranges": [{"start": [x0, y0], "extent": [x1 - x0 + 1, y1 - y0 + 1]}
                        for x0, y0, x1, y1 in get_attr(function, "tt.core_ranges")],
        "work_partition": work,
        "layouts": layouts,
    }


def emit_tt_plan(function, out_path=None) -> dict:
    """The plan of a lowered TileLang function; written as JSON to ``out_path`` when given."""
    plan = plan_from_kernel(function)
    errors = validate_plan(plan)
    if errors:
        raise PlanError("the compiled kernel's plan breaks the plan rules: " + "; ".join(errors))
    if out_path is not None:
        Path(out_path).write_text(json.dumps(plan, indent=2) + "\n")
    return plan


def _pair(value, what: str) -> tuple[int, int]:
    if not isinstance(value, (list, tuple)) or len(value) != 2 or \
            not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ValueError(f"{what} must be two integers, not {value!r}")
    return int(value[0]), int(value[1])


def _core_key(key: str) -> tuple[int, int] | None:
    text = key.strip()
    if not (text.startswith("(") and text.endswith(")")):
        return None
    parts = text[1:-1].split(",")
    try:
        x, y = (int(p) for p in parts)
    except ValueError:
        return None
    return x, y


def validate_plan(plan: dict, params=None, grid_tiles=None) -> list[str]:
    """Messages for every broken rule of ``plan`` (empty when it is valid). ``params`` (the
    kernel's parameter names) enables rule 5; ``grid_tiles`` ([rows, cols] of output tiles)
    makes rule 3 check against it instead of the extent the work items span."""
    errors: list[str] = []
    missing = [k for k in ("core_grid", "core_ranges", "work_partition", "layouts") if k not in plan]
    if missing:
        return [f"the plan has no {', '.join(missing)}; a plan has core_grid, core_ranges, work_partition and layouts"]
    try:
        gx, gy = _pair(plan["core_grid"], "core_grid")
    except ValueError as exc:
        return [_rule(1, str(exc))]
    rects = []
    for i, rng in enumerate(plan["core_ranges"]):
        try:
            (x, y), (w, h) = _pair(rng.get("start"), "start"), _pair(rng.get("extent"), "extent")
        except (ValueError, AttributeError) as exc:
            errors.append(_rule(1, f"core range #{i}: {exc}"))
            continue
        if x < 0 or y < 0 or w <= 0 or h <= 0 or x + w > gx or y + h > gy:
            errors.append(_rule(1, f"core range #{i} (start ({x},{y}), extent {w}x{h}) is not inside the {gx}x{gy} "
                                   "core grid"))
        rects.append((i, x, y, w, h))
    for a in range(len(rects)):
        for b in range(a + 1, len(rects)):
            i, x0, y0, w0, h0 = rects[a]
            j, x1, y1, w1, h1 = rects[b]
            if x0 < x1 + w1 and x1 < x0 + w0 and y0 < y1 + h1 and y1 < y0 + h0:
                errors.append(_rule(2, f"core ranges #{i} and #{j} overlap at ({max(x0, x1)},{max(y0, y1)})"))
    seen: dict[tuple[int, int], str] = {}
    for key, items in plan["work_partition"].items():
        core = _core_key(key)
        if core is None:
            errors.append(_rule(3, f"work_partition key {key!r} is not a core \"(x,y)\""))
            continue
        if not any(x <= core[0] < x + w and y <= core[1] < y + h for _, x, y, w, h in rects):
            errors.append(_rule(3, f"core {key} has work but is in no core range"))
        for item in items:
            try:
                tile = (int(item["io"]), int(item["jo"]))
            except (KeyError, TypeError, ValueError):
                errors.append(_rule(3, f"work item {item!r} of core {key} needs integer io and jo"))
                continue
            if tile in seen:
                errors.append(_rule(3, f"output tile (io={tile[0]}, jo={tile[1]}) is assigned to {seen[tile]} and "
                                       f"{key}"))
            seen[tile] = key
    if seen:
        rows, cols = grid_tiles or (max(t[0] for t in seen) + 1, max(t[1] for t in seen) + 1)
        gaps = [(r, c) for r in range(rows) for c in range(cols) if (r, c) not in seen]
        if gaps:
            errors.append(_rule(3, f"{len(gaps)} of the {rows}x{cols} output tiles are assigned to no core, first "
                                   f"(io={gaps[0][0]}, jo={gaps[0][1]})"))
        outside = [t for t in seen if not (0 <= t[0] < rows and 0 <= t[1] < cols)]
        if outside:
            errors.append(_rule(3, f"output tile (io={outside[0][0]}, jo={outside[0][1]}) is outside the "
                                   f"{rows}x{cols} output tiles"))
    elif grid_tiles:
        errors.append(_rule(3, "no output tile is assigned to any core"))
    for name, layout in plan["layouts"].items():
        shard = layout.get("shard") if isinstance(layout, dict) else None
        if shard not in SHARDS:
            errors.append(_rule(4, f"layout of {name!r} has shard {shard!r}; use \"DRAM\" or \"L1\""))
    if params is not None:
        for name in plan["layouts"]:
            if name not in params:
                errors.append(_rule(5, f"layout names buffer {name!r}, which is not a parameter of the kernel "
                                       f"({', '.join(params)})"))
    return errors


def load_tt_plan(path, params=None, grid_tiles=None) -> dict:
    """Read a ``tt.plan.json``; raise :class:`PlanError` (naming the rules) when it is invalid."""
    p = Path(path)
    try:
        plan = json.loads(p.read_text())
    except OSError as exc:
        raise PlanError(f"cannot read plan {p}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise PlanError(f"{p}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    if not isinstance(plan, dict):
        raise PlanError(f"{p}: a plan is a JSON object with core_grid, core_ranges, work_partition and layouts")
    errors = validate_plan(plan, params, grid_tiles)
    if errors:
        raise PlanError(f"{p} breaks the plan rules:\n  " + "\n  ".join(errors))
    return plan


__all__ = ["RULES", "emit_tt_plan", "plan_from_kernel", "load_tt_plan", "validate_plan"]

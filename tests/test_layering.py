"""The package layering of docs/design.md holds: no module imports upward, and no imports form a cycle.

Imports are read with ``ast`` from every module of ``tilefold``, including imports inside
functions (those are for start-up time only, never to hide a cycle).
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "tilefold"

# Modules every layer may use: errors, the user's source location, progress bars, the collector pause,
# numpy's huge-page advice.
BASE = {"errors", "caller", "progress", "frozen_gc", "huge_pages"}

# layer -> the layers it may import (besides itself and BASE)
ALLOWED = {
    "arch": set(),
    "layout": {"arch"},
    "ir": {"layout", "arch"},
    "passes": {"ir", "layout", "arch"},
    "program": {"ir", "layout", "arch"},
    "codegen": {"ir", "program", "layout", "arch"},
    "sim": {"ir", "program", "layout", "arch"},
    "compiler": {"passes", "program", "codegen", "sim", "ir", "layout", "arch"},
    # front ends only build IR: ir, and of the foundation below it only FRONTEND_FOUNDATION
    "frontend": {"ir", "layout", "arch"},
    # running what a front end built: the driver, the simulator, the results back to the user
    "run": {"frontend", "compiler", "codegen", "sim", "program", "ir", "layout", "arch"},
    "autotuner": {"run", "frontend", "compiler", "codegen", "sim", "program", "ir", "layout", "arch"},
}
# ``arch`` and ``layout`` are the foundation: descriptions of the device and of data (they import
# nothing of tilefold above them), which the IR itself is parameterised by (its tile types carry a
# DataFormat, its verifiers read the Arch). A front end names only those two facts: the device it
# builds for (``tilefold.arch``) and the data formats of its values (``tilefold.layout.formats``).
FRONTEND_FOUNDATION = {"tilefold.arch", "tilefold.layout.formats"}

# Facades and tools on top (the public modules, program factories, the CLI, the demo) may import
# anything; nothing below them may import them.
TOP = {"language", "profiler", "testing", "ttl", "ttl_submodules", "ttl_utils", "ttl_dtype_utils", "ttl_diagnostics", "ttl_ir", "ttl_sram_storage", "pykernel", "ttnn", "ttnn_ops", "ttnn_cache_ops", "uncaught", "ops", "cli", "demo", "utils", "carver", "__main__",
       "__init__"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    return parts[1]


def imports(path: Path) -> list[tuple[str, int]]:
    """Every ``tilefold`` module ``path`` imports (at any depth in the file), with its line."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.append((target, node.lineno))
            # ``from tilefold.x import y`` may name a submodule y
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                if (ROOT.parent / candidate.replace(".", "/")).with_suffix(".py").exists() or \
                        (ROOT.parent / candidate.replace(".", "/") / "__init__.py").exists():
                    out.append((candidate, node.lineno))
    return [(target, line) for target, line in out if target == "tilefold" or target.startswith("tilefold.")]


@functools.cache
def graph() -> dict[str, list[tuple[str, int]]]:
    return {module_name(p): imports(p) for p in sorted(ROOT.rglob("*.py"))}


def test_no_upward_imports():
    wrong = []
    for module, targets in graph().items():
        source = layer(module)
        if source in TOP or source in BASE:
            if source in BASE:
                wrong += [f"{module}:{line} imports {t}" for t, line in targets if layer(t) not in BASE]
            continue
        allowed = ALLOWED[source] | BASE | {source}
        wrong += [f"{module}:{line} imports {t} ({source} may import {', '.join(sorted(ALLOWED[source]))})"
                  for t, line in targets if layer(t) not in allowed]
    assert not wrong, "upward imports:\n" + "\n".join(wrong)


def test_front_ends_import_ir_and_only_the_device_and_data_formats_below_it():
    """A front end builds IR: it imports ``ir`` and, of the foundation, the device description and
    the data formats only — never a pass, an emitter, the simulator, a Program or the driver."""
    wrong = [f"{module}:{line} imports {t}" for module, targets in graph().items() if layer(module) == "frontend"
             for t, line in targets
             if layer(t) in ("arch", "layout") and t not in FRONTEND_FOUNDATION]
    assert not wrong, "front ends reach below ir past the device and data formats:\n" + "\n".join(wrong)


def test_every_package_has_a_layer():
    layers = {layer(m) for m in graph()}
    assert layers <= set(ALLOWED) | TOP | BASE, layers - (set(ALLOWED) | TOP | BASE)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def _module_edges() -> dict[str, set[str]]:
    g = graph()
    edges = defaultdict(set)
    for module, targets in g.items():
        for target, _ in targets:
            # importing a.b.c runs a/__init__ and a/b/__init__ too: the package, not its parents, is the edge
            if target in g and target != module and not module.startswith(target + "."):
                edges[module].add(target)
    return edges


@pytest.mark.parametrize("level", ["layers", "modules"])
def test_no_import_cycles(level):
    edges = _module_edges()
    if level == "layers":
        layered = defaultdict(set)
        for module, targets in edges.items():
            layered[layer(module)] |= {layer(t) for t in targets if layer(t) != layer(module)}
        edges = layered
    cycles = _cycles(edges)
    assert not cycles, "import cycles:\n" + "\n".join(" ⇄ ".join(c) for c in cycles)

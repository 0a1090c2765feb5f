"""After both pipelines, every piece of metadata on the lowered module is typed: no bare
dictionary attribute, and no string encoding fields (``"pipe:<net>:src:<slot>:<field>"``)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr

from tilefold import compiler
from tilefold.cli.ttl_scripts import compile_script
from tilefold.compiler import compile_prim_func

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ENCODED = re.compile(r"^\w+:[^:]*:\w+:")


def _untyped(module: ModuleOp) -> list[str]:
    bad = []

    def check(where: str, attr) -> None:
        if isinstance(attr, DictionaryAttr):
            bad.append(f"{where} is an untyped dictionary")
        elif isinstance(attr, StringAttr) and ENCODED.match(attr.data):
            bad.append(f"{where} encodes fields in a string: {attr.data!r}")
        elif isinstance(attr, ArrayAttr):
            for item in attr.data:
                check(where, item)

    for op in module.walk():
        for key, attr in [*op.attributes.items(), *op.properties.items()]:
            check(f"{op.name} {key}", attr)
    return bad


def test_the_lowered_tilelang_module_holds_typed_metadata_only():
    spec = importlib.util.spec_from_file_location("gemm_example", EXAMPLES / "tilelang" / "gemm.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    kernel = compile_prim_func(example.matmul(64, 64, 64, 32, 32, 32).prim)
    assert kernel.module.ops.first is not None
    assert not _untyped(kernel.module)


def test_the_lowered_ttl_modules_hold_typed_metadata_only(tmp_path):
    compiler._TTL_CACHE.clear()
    compile_script(EXAMPLES / "ttl" / "pipe_multicast.py", tmp_path)
    modules = [c.module for c in compiler._TTL_CACHE.values()]
    assert modules
    for module in modules:
        assert not _untyped(module)

"""Device kernels from ttkernel IR: snapshots reviewed like code, and every kernel compiled by
check-kernel against the real TT-Metalium 0.69 headers."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkkernel import check_kernels, require_accepted
from tilefold.codegen.cpp import emit_kernel, kernel_headers
from tilefold.errors import CompileError
from tilefold.ir.context import parse_module
from tilefold.ir.verify import verify_kernel_module

IR = Path(__file__).parent / "ir"
KERNELS = sorted(p.stem for p in IR.glob("*.mlir"))
DEPRECATED = ("noc_async_read_tile", "noc_async_write_tile", "InterleavedAddrGen", "acquire_dst", "release_dst",
              "namespace NAMESPACE", "void MAIN")
# compile-time args each kernel reads: CB index / stick size, then TensorAccessorArgs of a DRAM buffer
CT_ARGS = {"reader_tiles": [0, 2, 2048], "writer_tiles": [16, 2, 2048], "tilize_reader": [128, 2, 128],
           "eltwise_add": [4], "reduce_rows": [2, 4]}


def load_kernel(name: str):
    module = parse_module((IR / f"{name}.mlir").read_text(), f"{name}.mlir")
    verify_kernel_module(module)
    return list(module.ops)[0]


@pytest.fixture(scope="module")
def emitted(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("kernels")
    paths = {}
    for name in KERNELS:
        paths[name] = folder / f"{name}.cpp"
        paths[name].write_text(emit_kernel(load_kernel(name)))
    return paths


@pytest.fixture(scope="module")
def checked(emitted) -> dict:
    """check-kernel results of every emitted kernel, run in parallel once."""
    jobs = []
    for name, path in emitted.items():
        role = "compute" if "compute" in path.read_text().splitlines()[0] else "reader"
        jobs.append((path, role, CT_ARGS.get(name)))
    return dict(zip(emitted, check_kernels(jobs)))


@pytest.mark.parametrize("name", KERNELS)
def test_kernel_snapshot(name, cpp_snapshot):
    assert emit_kernel(load_kernel(name)) == cpp_snapshot


@pytest.mark.parametrize("name", KERNELS)
def test_kernel_compiles_against_the_real_headers(name, checked):
    require_accepted(checked[name])


@pytest.mark.parametrize("name", KERNELS)
def test_no_deprecated_api(name, emitted):
    text = emitted[name].read_text()
    assert "void kernel_main() {" in text
    for word in DEPRECATED:
        assert word not in text


def test_broken_kernels_are_rejected(tmp_path):
    """check-kernel is a real check: an unknown API name and a wrong argument count fail."""
    good = "#include \"api/dataflow/dataflow_api.h\"\n\nvoid kernel_main() {\n    %s\n}\n"
    (tmp_path / "unknown.cpp").write_text(good % "noc_async_read_everything(0, 1);")
    (tmp_path / "arity.cpp").write_text(good % "cb_push_back(0);")
    (tmp_path / "fine.cpp").write_text(good % "cb_push_back(0, 1);")
    results = check_kernels([(tmp_path / "unknown.cpp", "brisc"), (tmp_path / "arity.cpp", "brisc"),
                             (tmp_path / "fine.cpp", "brisc")])
    for result in results:
        if result.returncode == 2:
            pytest.skip(f"check-kernel could not run: {result.output[-300:]}")
    assert [r.returncode for r in results] == [1, 1, 0]
    assert "noc_async_read_everything" in results[0].output


def test_broken_compute_kernels_are_rejected(tmp_path):
    """Compute kernels are checked too, with the SFPI headers: an SFPU call with a wrong argument
    count and an unknown init fail, the same kernel written correctly passes."""
    kernel = ("#include \"api/compute/common.h\"\n#include \"api/compute/eltwise_unary/eltwise_unary.h\"\n"
              "#include \"api/compute/eltwise_unary/exp.h\"\n"
              "#include \"api/compute/tile_move_copy.h\"\n\nvoid kernel_main() {\n"
              "    init_sfpu(0, 16);\n    %s\n    tile_regs_acquire();\n    copy_tile(0, 0, 0);\n"
              "    %s\n    tile_regs_commit();\n}\n")
    (tmp_path / "arity.cpp").write_text(kernel % ("exp_tile_init();", "exp_tile(0, 1, 2, 3);"))
    (tmp_path / "unknown.cpp").write_text(kernel % ("exp_tile_init_everything();", "exp_tile(0);"))
    (tmp_path / "fine.cpp").write_text(kernel % ("exp_tile_init();", "exp_tile(0);"))
    results = check_kernels([(tmp_path / name, "compute") for name in ("arity.cpp", "unknown.cpp", "fine.cpp")])
    for result in results:
        if result.returncode == 2:
            pytest.skip(f"check-kernel could not run: {result.output[-300:]}")
    assert [r.returncode for r in results] == [1, 1, 0], [r.output[-1500:] for r in results]
    assert "exp_tile_init_everything" in results[1].output


def test_source_comments_name_the_users_lines():
    kernel = load_kernel("reader_tiles")
    with_comments = emit_kernel(kernel)
    assert "uint32_t src_addr = get_arg_val<uint32_t>(0);  // reader_tiles.py:8" in with_comments
    assert "for (uint32_t i = 0; i < num_tiles; ++i) {  // reader_tiles.py:15" in with_comments
    # one comment per user line: the page id computed on line 18 is folded into the call on line 18
    assert with_comments.count("reader_tiles.py:18") == 1
    without = emit_kernel(kernel, source_comments=False)
    assert "//" not in without.split("void kernel_main()")[1]
    assert [line.split("  //")[0] for line in with_comments.splitlines()[2:]] == without.splitlines()[2:]


def test_compute_headers_are_the_used_ones_sorted():
    assert kernel_headers(load_kernel("eltwise_add")) == [
        "api/compute/common.h", "api/compute/eltwise_binary.h", "api/compute/pack.h", "api/compute/reg_api.h"]
    assert kernel_headers(load_kernel("reader_tiles")) == ["api/dataflow/dataflow_api.h"]


KERNEL_WITH_ARG = """
func.func @takes_an_argument(%x: i32) attributes {ttkernel.thread = "noc"} {
  func.return
}
"""
UNLOWERED = """
func.func @unlowered() attributes {ttkernel.thread = "noc"} {
  %0 = arith.constant 1.0 : f32
  %1 = arith.maximumf %0, %0 : f32
  %c0 = arith.constant 0 : i32
  %cb_c0 = ttkernel.cb(%c0) : i32
  %2 = arith.fptoui %1 : f32 to i32
  ttkernel.cb_push_back(%cb_c0, %2) : !ttkernel.cb, i32
  func.return
}
"""


def test_kernels_with_arguments_are_refused():
    with pytest.raises(CompileError, match="takes arguments"):
        emit_kernel(list(parse_module(KERNEL_WITH_ARG).ops)[0])


def test_ops_the_emitter_cannot_print_are_named():
    with pytest.raises(CompileError, match="arith.maximumf"):
        emit_kernel(list(parse_module(UNLOWERED).ops)[0])


UNMARKED = """
func.func @unmarked() {
  %c0 = arith.constant 0 : i32
  %cb_c0 = ttkernel.cb(%c0) : i32
  %c1 = arith.constant 1 : i32
  ttkernel.cb_wait_front(%cb_c0, %c1) : !ttkernel.cb, i32
  %KIND
  func.return
}
"""


def test_the_kernel_kind_follows_its_calls_when_unmarked():
    compute = list(parse_module(UNMARKED.replace("%KIND", "ttkernel.tile_regs_acquire()")).ops)[0]
    assert kernel_headers(compute) == ["api/compute/common.h", "api/compute/reg_api.h"]
    dataflow = list(parse_module(UNMARKED.replace("%KIND", "ttkernel.noc_async_read_barrier()")).ops)[0]
    assert kernel_headers(dataflow) == ["api/dataflow/dataflow_api.h"]
    neither = list(parse_module(UNMARKED.replace("%KIND", "")).ops)[0]
    with pytest.raises(CompileError, match='set its ttkernel.thread attribute to "noc" or "compute"'):
        emit_kernel(neither)

"""The test matrix of the TileLang-TT architecture: DRAM interleaved, DRAM sharded, L1 sharded, ND shard
projection, halo, L1 overflow and the TensorAccessor guardrail — compiled and run."""

from pathlib import Path

import numpy as np
import pytest
from tilelang_helpers import bf16, random_bf16

import tilefold.language as T
from tilefold.errors import CompileError, L1OverflowError
from tilefold.compiler import compile_prim_func
from tilefold.run.jit import jit
from tilefold.ir.attributes import get_attr
from tilefold.program import TensorAccessorArgsRef


def add_kernel(layout=None, M=256, N=256, bm=64, bn=64):
    @T.prim_func
    def add(A: T.Tensor((M, N), "bfloat16"), B: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm)) as (bx, by):
            a = T.alloc_shared((bm, bn), "bfloat16")
            b = T.alloc_shared((bm, bn), "bfloat16")
            c = T.alloc_fragment((bm, bn), "bfloat16")
            T.copy(A[by * bm, bx * bn], a)
            T.copy(B[by * bm, bx * bn], b)
            for i, j in T.Parallel(bm, bn):
                c[i, j] = a[i, j] + b[i, j]
            T.copy(c, C[by * bm, bx * bn])

    return T.annotate_tt_layout(add, layout) if layout else add


def check_add(kernel, M=256, N=256):
    a, b = random_bf16((M, N), 20), random_bf16((M, N), 21)
    c = kernel(a, b)
    np.testing.assert_array_equal(c.astype(np.float32), bf16(a.astype(np.float32) + b.astype(np.float32)))


def attr(kernel, name):
    return get_attr(kernel.compiled.function, name)


def test_dram_interleaved_default():
    kernel = jit(add_kernel())
    check_add(kernel)
    assert attr(kernel, "tt.partition_mode") == "global"
    program = kernel.compiled.program
    reader = program.kernels[0]
    assert reader.compile_args == [TensorAccessorArgsRef("A"), TensorAccessorArgsRef("B")]
    assert all(not program.buffer(n).is_sharded for n in "ABC")
    for name in "AB":
        assert attr(kernel, f"tt.tensor_accessor.{name}")["compile_time_args"] == 2
    cbs = {cb.name: (cb.index, cb.num_pages, cb.page_size) for cb in program.circular_buffers}
    assert cbs == {"a": (0, 8, 2048), "b": (1, 8, 2048), "c": (16, 8, 2048)}  # 2x2-tile blocks, double-buffered


def test_dram_sharded():
    layout = {"A": {"memory": "DRAM", "layout": "sharded", "nd_shard": {"grid": [4, 2]}}}
    kernel = jit(add_kernel(layout))
    check_add(kernel)
    assert attr(kernel, "tt.partition_mode") == "global"
    assert [a["name"] for a in attr(kernel, "tt.runtime_args")] == ["start_id", "count", "Mt", "Kt", "Nt"]
    program = kernel.compiled.program
    assert program.buffer("A").is_sharded and program.buffer("A").buffer_type == "DRAM"
    assert attr(kernel, "tt.tensor_accessor.A")["kind"] == "sharded"
    main = __import__("tilefold.codegen.cpp", fromlist=["emit_host"]).emit_host(program, kernel.compiled.host_data())
    assert "BufferShardingArgs(BufferDistributionSpec(" in main


def test_l1_sharded_output_is_local_shard():
    layout = {"C": {"memory": "L1", "layout": "sharded", "nd_shard": {"grid": [4, 4]}}}
    kernel = jit(add_kernel(layout))
    check_add(kernel)
    assert attr(kernel, "tt.partition_mode") == "local_shard"
    assert attr(kernel, "tt.shard_grid") == [4, 4]
    assert attr(kernel, "tt.core_ranges") == [[0, 0, 3, 3]]
    names = [a["name"] for a in attr(kernel, "tt.runtime_args")]
    assert names[-6:] == ["Sm", "Sn", "Gy", "Gx", "sy", "sx"]
    for x, y, *values in attr(kernel, "tt.core_runtime_args"):
        args = dict(zip(names, values))
        assert (args["sy"], args["sx"]) == (y, x) and args["start_id"] == 0 and args["count"] == 1
    assert kernel.compiled.program.buffer("C").buffer_type == "L1"


def test_l1_sharded_inputs_and_output_with_several_blocks_per_shard():
    l1 = {"memory": "L1", "layout": "sharded", "nd_shard": {"grid": [2, 2]}}
    kernel = jit(add_kernel({"A": l1, "B": l1, "C": l1}))
    check_add(kernel)
    assert attr(kernel, "tt.local_shape_tiles") == [2, 2]
    assert attr(kernel, "tt.core_ranges") == [[0, 0, 1, 1]]


def test_nd_shard_projection_runs():
    """A rank-3 tensor sharded along its batch and row axes, projected onto the 2-D compute view."""
    @T.prim_func
    def scale(A: T.Tensor((4, 64, 64), "float32"), C: T.Tensor((4, 64, 64), "float32")):
        with T.Kernel(2, 8) as (bx, by):
            a = T.alloc_shared((32, 32), "float32")
            c = T.alloc_fragment((32, 32), "float32")
            T.copy(A[by // 2, (by % 2) * 32, bx * 32], a)
            for i, j in T.Parallel(32, 32):
                c[i, j] = a[i, j] * 2.0
            T.copy(c, C[by // 2, (by % 2) * 32, bx * 32])

    layout = {"A": {"memory": "DRAM", "layout": "sharded", "nd_shard": {"axes": ["B", "M", "N"], "grid": [2, 2, 1]}}}
    kernel = jit(T.annotate_tt_layout(scale, layout))
    x = np.random.default_rng(22).standard_normal((4, 64, 64)).astype(np.float32)
    np.testing.assert_array_equal(kernel(x), x * 2.0)
    nd = attr(kernel, "tt.buffer.A")["nd_shard"]
    assert nd["projected_grid"] == [4, 1] and nd["projected_shard_tiles"] == [2, 2]


def test_negative_halo():
    layout = {"A": {"memory": "L1", "layout": "sharded", "nd_shard": {"grid": [2, 2], "halo": [1, 0]}}}
    with pytest.raises(CompileError) as info:
        compile_prim_func(add_kernel(layout))
    assert "halo unsupported" in str(info.value)


def test_l1_overflow_of_a_shard():
    layout = {"A": {"memory": "L1", "layout": "sharded", "nd_shard": {"grid": [1, 1]}}}
    with pytest.raises(L1OverflowError) as info:
        compile_prim_func(add_kernel(layout, M=1024, N=1024))
    assert "need 2097152 B" in str(info.value) and "L1 free" in str(info.value)


def test_l1_overflow_of_circular_buffers():
    with pytest.raises(L1OverflowError) as info:
        compile_prim_func(add_kernel(M=1024, N=1024, bm=512, bn=512))
    assert "of circular buffers" in str(info.value)
    # the error points at the allocation of the biggest buffer (the first named; a, b and c tie)
    source = Path(__file__).read_text().splitlines()
    line = next(i for i, text in enumerate(source, 1) if "a = T.alloc_shared((bm, bn)" in text)
    assert (Path(info.value.location.file).name, info.value.location.line) == (Path(__file__).name, line)


def test_guardrail_every_accessor_has_its_args():
    kernel = jit(add_kernel())
    for k in kernel.compiled.program.kernels:
        names = get_attr(k.function, "tt.compile_args", [])
        assert [a.buffer for a in k.compile_args] == names
        source = kernel.compiled.kernel_sources()[k.source_file]
        assert source.count("TensorAccessorArgs<") == len(names)

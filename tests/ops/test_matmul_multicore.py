"""The multi-core matmul: the split of the output into equal per-core blocks, the blocking chosen
within L1, each core's runtime args, and simulated results against numpy on full and partial
grids, with bfloat16 and float32 accumulation and sizes that are not multiples of 32."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from factory_helpers import build, run
from tilefold.arch import get_arch
from tilefold.arch.cores import CoreCoord
from tilefold.errors import LayoutError, ProgramError
from tilefold.ops.base import pcc
from tilefold.ops.matmul import accumulation_error_bound
from tilefold.ops.matmul_multicore import matmul_multi_core, multicore_matmul_config
from tilefold.program import BufferAddress


def test_split_gives_every_core_the_same_block():
    c = multicore_matmul_config(2048, 2048, 2048, fp32_dest_acc_en=True)
    assert (c.per_core_M, c.per_core_N, c.grid) == (8, 8, (8, 8))
    odd = multicore_matmul_config(512, 64, 96)                   # 16 x 3 output tiles on 8 x 8
    assert (odd.per_core_M, odd.per_core_N, odd.grid) == (2, 1, (3, 8))
    prime = multicore_matmul_config(17 * 32, 64, 64)            # 17 tile rows: no divisor fits 8 rows
    assert (prime.per_core_M, prime.grid) == (17, (2, 1))
    small = multicore_matmul_config(256, 256, 256, grid=(2, 3))   # 8 tile rows over 3 rows of cores
    assert (small.per_core_M, small.per_core_N, small.grid) == (4, 4, (2, 2))


def test_blocking_fits_l1_and_reads_each_operand_once_when_it_can():
    arch = get_arch(None)
    for fp32 in (False, True):
        c = multicore_matmul_config(2048, 2048, 2048, fp32_dest_acc_en=fp32)
        assert sum(c.cb_pages()) * c.tile_size <= arch.l1_free
        assert c.out_subblock_h * c.out_subblock_w <= arch.dst_capacity(fp32)
        assert c.in1_block_w == c.per_core_N                      # B columns once, so A rows once
        assert c.tiles_read() == c.per_core_M * c.Kt + c.Kt * c.per_core_N


def test_runtime_args_give_each_core_its_block():
    c = multicore_matmul_config(256, 128, 384, grid=(3, 2))      # 8 x 12 tiles: 4 x 4 per core
    program = matmul_multi_core(c)
    k = {kernel.name: kernel for kernel in program.kernels}
    assert len(k["reader"].runtime_args) == 6
    h, w, width = c.out_subblock_h, c.out_subblock_w, c.in1_block_w
    assert k["reader"].runtime_args[CoreCoord(2, 1)] == [BufferAddress("src0"), BufferAddress("src1"), 4, 4, 4, h,
                                                         width, 4, 8, 12]
    assert k["writer"].runtime_args[CoreCoord(1, 0)] == [BufferAddress("dst"), 4, 4, h, w, width, 0, 4, 12]
    assert k["compute"].compile_args == [4 // width, 4 // h, width // w, 4, h, w]


@pytest.mark.parametrize("argv", [
    ("--shape", "256,512,256", "--no-fp32-dest-acc-en"),
    ("--shape", "256,512,256", "--fp32-dest-acc-en", "--grid", "4,2"),
    ("--shape", "200,100,168", "--fp32-dest-acc-en"),              # padded to 7 x 4 @ 4 x 6 tiles
    ("--shape", "128,256,192", "--dtype", "float32", "--grid", "3,2"),
], ids=["bf16-dst", "fp32-dst-4x2", "padded", "float32"])
def test_results_match_numpy(argv):
    instance = build("matmul_multicore", *argv)
    result = run(instance.program, instance.inputs)
    out = result.outputs["dst"]
    a, b = instance.inputs["src0"], instance.inputs["src1"]
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert out.shape == exact.shape
    assert pcc(out, exact) >= 0.9999
    assert all(c.passed for c in instance.check({"dst": out}))
    reader = next(k for k in instance.program.kernels if k.name == "reader")
    assert result.perf.cores_used == len(reader.runtime_args) > 1


def test_float32_dst_is_within_its_bound_and_matches_the_single_core_factory():
    multi = build("matmul_multicore", "--shape", "256,512,256", "--fp32-dest-acc-en")
    single = build("matmul", "--shape", "256,512,256", "--fp32-dest-acc-en")
    a, b = multi.inputs["src0"], multi.inputs["src1"]
    out = run(multi.program, multi.inputs).outputs["dst"]
    bound = accumulation_error_bound(a, b, multicore_matmul_config(256, 512, 256, fp32_dest_acc_en=True))
    assert np.all(np.abs(out - a.astype(np.float64) @ b.astype(np.float64)) <= bound)
    np.testing.assert_allclose(out, run(single.program, single.inputs).outputs["dst"], rtol=2 ** -7, atol=1e-3)


def test_bad_options_are_clear_errors():
    with pytest.raises(LayoutError, match="dtype"):
        multicore_matmul_config(64, 64, 64, "bfloat8_b")
    with pytest.raises(ProgramError, match="use a smaller K"):
        multicore_matmul_config(64, 32 * 1024, 64)
    with pytest.raises(ProgramError, match="does not fit"):
        multicore_matmul_config(64, 64, 64, grid=(9, 9))

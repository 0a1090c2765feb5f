"""The 2-D multicast matmul: results against numpy for every input format, with and without packer
L1 accumulation and a float32 DST; DRAM serving each A and B tile once; the semaphore handshake
(a receiver that does not wait for the data is a simulator hazard); its kernels through
check-kernel and its host program through check-host."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from checkkernel import CHECK_KERNEL, accessor_compile_args, check_kernels, require_accepted
from factory_helpers import build, run
from tilefold.codegen.cpp import emit_kernel, project_files
from tilefold.errors import DeadlockError, NocHazardError, ProgramError
from tilefold.ops import host_data
from tilefold.ops import matmul_mcast as mm
from tilefold.ops.base import pcc, random_input
from tilefold.ops.kernels import reader_bmm_in0_mcast as in0_kernels
from tilefold.pykernel import *
from tilefold.sim import Device

CHECK_HOST = CHECK_KERNEL.parent / "check-host"


@pytest.mark.parametrize("argv", [
    ("--shape", "256,768,256", "--grid", "4,4", "--in0-block-w", "8"),                 # L1 accumulation on
    ("--shape", "256,768,256", "--grid", "4,4", "--in0-block-w", "4", "--no-packer-l1-acc"),
    ("--shape", "128,512,192", "--dtype", "float32", "--grid", "3,2"),
    ("--shape", "256,512,256", "--dtype", "bfloat8_b", "--math-fidelity", "LoFi", "--grid", "4,4"),
    ("--shape", "128,256,128", "--dtype", "bfloat4_b", "--math-fidelity", "LoFi", "--out-dtype", "bfloat16"),
    ("--shape", "200,100,168", "--fp32-dest-acc-en", "--grid", "3,1", "--in0-block-w", "1"),
], ids=["l1-acc", "reload", "float32", "bfp8-lofi", "bfp4", "padded-one-row"])
def test_results_match_numpy(argv):
    instance = build("matmul_mcast", *argv)
    result = run(instance.program, instance.inputs)
    out = result.outputs["dst"]
    a, b = instance.inputs["src0"], instance.inputs["src1"]
    assert pcc(out, a.astype(np.float64) @ b.astype(np.float64)) >= 0.999
    assert all(c.passed for c in instance.check({"dst": out}))


def test_dram_serves_each_operand_tile_once():
    c = mm.mcast_matmul_config(256, 512, 384, grid=(3, 4))
    instance = build("matmul_mcast", "--shape", "256,512,384", "--grid", "3,4")
    counters = run(instance.program, instance.inputs).perf.counters
    tile = 2048
    assert counters.dram_read_bytes == (c.Mt * c.Kt + c.Kt * c.Nt) * tile
    assert counters.dram_write_bytes == c.Mt * c.Nt * tile


def test_blocking_fits_l1_and_fills_dst():
    for dtype, fp32 in (("bfloat16", False), ("bfloat16", True), ("bfloat8_b", False)):
        c = mm.mcast_matmul_config(4096, 4096, 4096, dtype, fp32_dest_acc_en=fp32)
        assert c.l1_bytes() <= Device().arch.l1_free
        assert (c.per_core_M, c.per_core_N, c.grid) == (16, 16, (8, 8))
        assert c.out_subblock_h * c.out_subblock_w == (4 if fp32 else 8)
    with pytest.raises(ProgramError, match="divisor"):
        mm.mcast_matmul_config(256, 256, 256, in0_block_w=3)


@reader_kernel
def in0_receiver_without_wait():
    per_core_M = get_arg_val(0)
    in0_block_w = get_arg_val(1)
    num_blocks = get_arg_val(2)
    sender_x = get_arg_val(3)
    sender_y = get_arg_val(4)
    sender_sem = get_semaphore(get_arg_val(5))
    receiver_sem = get_semaphore(get_arg_val(6))
    block_tiles = per_core_M * in0_block_w
    sender_sem_noc = get_noc_addr_xy(sender_x, sender_y, sender_sem)
    for b in range(num_blocks):
        cb_reserve_back(CBIndex.c_0, block_tiles)
        noc_semaphore_set(receiver_sem, 0)
        noc_semaphore_inc(sender_sem_noc, 1)
        cb_push_back(CBIndex.c_0, block_tiles)        # no noc_semaphore_wait for the data


@pytest.mark.parametrize("K, error", [(256, NocHazardError), (1024, DeadlockError)], ids=["one-block", "blocks"])
def test_receiver_that_does_not_wait_is_a_hazard(monkeypatch, K, error):
    monkeypatch.setattr(in0_kernels, "in0_receiver", in0_receiver_without_wait)
    c = mm.mcast_matmul_config(128, K, 128, grid=(4, 4), in0_block_w=8)
    program = mm.matmul_mcast(c)
    inputs = {"src0": random_input((128, K), "bfloat16"), "src1": random_input((K, 128), "bfloat16", seed=1)}
    with pytest.raises(error) as caught:
        Device().run(program, inputs)
    if error is NocHazardError:
        assert "noc_semaphore_wait" in str(caught.value) and "reader_bmm_in0_mcast.py" in str(caught.value)
    else:
        assert "noc_semaphore_wait" in str(caught.value)


@pytest.fixture(scope="module")
def project():
    instance = build("matmul_mcast", "--shape", "256,512,256", "--grid", "4,4", "--dtype", "bfloat8_b")
    return instance, project_files(instance.program, host_data(instance))


def test_kernels_pass_check_kernel(project, tmp_path):
    instance, _ = project
    program = instance.program
    jobs, seen = [], set()
    for kernel in program.kernels:
        if kernel.source_file in seen:
            continue
        seen.add(kernel.source_file)
        path = tmp_path / Path(kernel.source_file).name
        path.write_text(emit_kernel(kernel.function))
        role = "compute" if kernel.is_compute else ("reader" if kernel.processor == "RISCV_0" else "writer")
        jobs.append((path, role, accessor_compile_args(program, kernel)))
    assert len(jobs) == 5
    for result in check_kernels(jobs):
        require_accepted(result)


def test_host_program_passes_check_host(project, tmp_path):
    _, files = project
    if not CHECK_HOST.exists() or shutil.which("g++") is None:
        pytest.skip(f"needs {CHECK_HOST} and g++")
    for relative, content in files.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    done = subprocess.run([str(CHECK_HOST), str(tmp_path / "main.cpp")], capture_output=True, text=True, timeout=600)
    if done.returncode == 2:
        pytest.skip(f"check-host could not run: {done.stdout[-500:]}{done.stderr[-500:]}")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

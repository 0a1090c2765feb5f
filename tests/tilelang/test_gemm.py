"""GEMM end to end: TileLang-TT architecture §6 and canonical TileLang GEMMs compile to the kernels the TileLang-TT architecture
shows (0.69 API), pass check-kernel, and compute A @ B on the simulated device."""

import numpy as np
import pytest
from checkkernel import accessor_compile_args, check_kernels, require_accepted
from tilelang_helpers import filecheck, load_example, matmul_reference, random_bf16

import tilefold.language as T
from tilefold.run.jit import jit
from tilefold.ir.attributes import get_attr

DEPRECATED = ("noc_async_read_tile", "noc_async_write_tile", "acquire_dst", "release_dst", "InterleavedAddrGen")


@pytest.fixture(scope="module")
def tile_notation_matmul():
    return jit(load_example("matmul_256").matmul_256x256)


@pytest.fixture(scope="module")
def gemm_factory():
    return load_example("gemm").matmul


def run_gemm(kernel, m, n, k, seed=0, dtype="bfloat16"):
    a, b = random_bf16((m, k), seed), random_bf16((k, n), seed + 1)
    c = kernel(a, b)
    assert c.shape == (m, n) and c.dtype == np.dtype(dtype)
    ref = matmul_reference(a, b)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=1e-2, atol=1e-2)
    return c


def test_tile_notation_matmul_matches_numpy(tile_notation_matmul):
    """The seed's float16 tensors are stored as IEEE half (Float16 tiles) and come back as float16."""
    run_gemm(tile_notation_matmul, 256, 256, 256, dtype="float16")


def test_tile_notation_matmul_reader_structure(tile_notation_matmul):
    """The blocks of A a grid row shares are read by its first core and multicast to the others."""
    src = tile_notation_matmul.compiled.kernel_sources()
    filecheck(src["reader.cpp"], """
CHECK:      #include "api/dataflow/dataflow_api.h"
CHECK:      void kernel_main() {
CHECK:        constexpr auto A_args = TensorAccessorArgs<0>();
CHECK:        const auto A = TensorAccessor(A_args, A_addr, 2048);
CHECK:        constexpr auto B_args = TensorAccessorArgs<A_args.next_compile_time_args_offset()>();
CHECK:        for (uint32_t i = 0; i < count; ++i) {
CHECK:          uint32_t m = tid / Nt;
CHECK:          uint32_t n = tid % Nt;
CHECK:          for (uint32_t kt = 0; kt < 8; ++kt) {
CHECK:            cb_reserve_back(0, 1);
CHECK-NEXT:       if (A_tile_role == 2) {
CHECK-NEXT:         noc_semaphore_set({{.*}}A_tile_receiver_sem), 0);
CHECK-NEXT:         noc_semaphore_inc(get_noc_addr(A_tile_start_noc_x, A_tile_start_noc_y, A_tile_sender_sem), 1);
CHECK-NEXT:         noc_semaphore_wait({{.*}}A_tile_receiver_sem), 1);
CHECK-NEXT:       } else {
CHECK-NEXT:         uint32_t l1_write_addr = get_write_ptr(0);
CHECK-NEXT:         noc_async_read_page({{.*}}, A, l1_write_addr);
CHECK-NEXT:         noc_async_read_barrier();
CHECK-NEXT:         if (A_tile_role == 1) {
CHECK-NEXT:           noc_semaphore_wait({{.*}}A_tile_sender_sem), A_tile_receivers);
CHECK-NEXT:           noc_semaphore_set({{.*}}A_tile_sender_sem), 0);
CHECK:                noc_async_write_multicast({{.*}}, 2048, A_tile_receivers);
CHECK:                noc_semaphore_set_multicast(A_tile_receiver_sem, {{.*}}, A_tile_receivers);
CHECK:            cb_push_back(0, 1);
CHECK:            cb_reserve_back(1, 1);
CHECK:            noc_async_read_page({{.*}}, B, {{.*}});
CHECK-NEXT:       noc_async_read_barrier();
CHECK:            cb_push_back(1, 1);
CHECK:        noc_async_write_barrier();
""")


def test_tile_notation_matmul_compute_structure(tile_notation_matmul):
    """The TileLang-TT architecture's K-loop pattern, in 0.69 calls: acquire before the K loop, pack after it."""
    filecheck(tile_notation_matmul.compiled.kernel_sources()["compute.cpp"], """
CHECK:      #include "api/compute/matmul.h"
CHECK:      #include "api/compute/reg_api.h"
CHECK:      void kernel_main() {
CHECK:        compute_kernel_hw_startup(
CHECK:        mm_block_init_short(0, 1);
CHECK:        for (uint32_t i = 0; i < count; ++i) {
CHECK-NEXT:     tile_regs_acquire();
CHECK-NEXT:     for (uint32_t kt = 0; kt < 8; ++kt) {
CHECK-NEXT:       cb_wait_front(0, 1);
CHECK-NEXT:       cb_wait_front(1, 1);
CHECK-NEXT:       matmul_block(0, 1, 0, 0, 0, 0, 1, 1, 1);
CHECK-NEXT:       cb_pop_front(1, 1);
CHECK-NEXT:       cb_pop_front(0, 1);
CHECK-NEXT:     }
CHECK-NEXT:     cb_reserve_back(16, 1);
CHECK-NEXT:     tile_regs_commit();
CHECK-NEXT:     tile_regs_wait();
CHECK-NEXT:     pack_tile<false>(0, 16);
CHECK-NEXT:     tile_regs_release();
CHECK-NEXT:     cb_push_back(16, 1);
CHECK-NEXT:   }
""")


def test_tile_notation_matmul_writer_structure(tile_notation_matmul):
    filecheck(tile_notation_matmul.compiled.kernel_sources()["writer.cpp"], """
CHECK:        for (uint32_t i = 0; i < count; ++i) {
CHECK:          cb_wait_front(16, 1);
CHECK-NEXT:     uint32_t l1_read_addr = get_read_ptr(16);
CHECK-NEXT:     noc_async_write_page({{.*}}, C, l1_read_addr);
CHECK-NEXT:     noc_async_writes_flushed();
CHECK-NEXT:     cb_pop_front(16, 1);
CHECK-NEXT:   }
CHECK-NEXT:   noc_async_write_barrier();
""")


def test_generated_kernels_use_the_069_api(tile_notation_matmul, gemm_factory):
    for kernel in (tile_notation_matmul, gemm_factory(256, 256, 256, 128, 128, 64)):
        for name, source in kernel.compiled.kernel_sources().items():
            for call in DEPRECATED:
                assert call not in source, f"{name} uses deprecated {call}"


def test_canonical_gemm_accumulates_partials_in_l1_and_matches(gemm_factory):
    kernel = gemm_factory(256, 256, 256, 128, 128, 64, num_stages=3)
    run_gemm(kernel, 256, 256, 256, seed=4)
    program = kernel.compiled.program
    depth = {cb.name: cb.num_pages for cb in program.circular_buffers}
    # T.Pipelined(num_stages=3): three 4x2-tile A blocks and 2x4-tile B blocks in flight
    assert depth["A_shared"] == 3 * 8 and depth["B_shared"] == 3 * 8
    assert depth["C_local_partials"] == 16
    compute = kernel.compiled.kernel_sources()["compute.cpp"]
    # four K steps: the packer accumulates the partial sums in L1 over the first three, the
    # block is popped unread after all but the last two, and the last step reloads it once
    filecheck(compute, """
CHECK:   for (uint32_t k = 0; k < 3; ++k) {
CHECK:     cb_wait_front(0, 8);
CHECK:     pack_reconfig_l1_acc(static_cast<uint32_t>(k > 0));
CHECK:     for (uint32_t sub = 0; sub < 4; ++sub) {
CHECK:       tile_regs_acquire();
CHECK-NOT:   copy_tile
CHECK:       for (uint32_t kk = 0; kk < 2; ++kk) {
CHECK-NEXT:    matmul_block(0, 1, {{.*}}, {{.*}}, 0, 0, 2, 2, 2);
CHECK:       cb_reserve_back(24, 4);
CHECK:       pack_tile_block(0, 24, 4);
CHECK:     if (k + 1 < 3) {
CHECK-NEXT:  cb_wait_front(24, 16);
CHECK-NEXT:  cb_pop_front(24, 16);
CHECK:   cb_reserve_back(16, 16);
CHECK:   pack_reconfig_l1_acc(0);
CHECK:     cb_wait_front(24, 4);
CHECK:     copy_tile(24, 0, 0);
CHECK:     pack_tile<true>(0, 16,
""")


def test_gemm_over_two_k_steps_reloads_its_partials(gemm_factory):
    kernel = gemm_factory(128, 128, 256, 128, 128, 128)
    run_gemm(kernel, 128, 128, 256, seed=5)
    compute = kernel.compiled.kernel_sources()["compute.cpp"]
    assert "pack_reconfig_l1_acc" not in compute
    # the first step spills its sums, the second reloads them before its own K tiles
    filecheck(compute, """
CHECK:       pack_tile_block(0, 24, 4);
CHECK:       cb_push_back(24, 4);
CHECK:       cb_wait_front(24, 4);
CHECK:       copy_tile(24, 0, 0);
CHECK:       matmul_block(
CHECK:       pack_tile<true>(0, 16,
""")


def test_transposed_operand_packs_plainly_between_l1_accumulating_steps():
    """T.gemm(transpose_B=True) over four K steps into a float16 C: the transpose of each B block is
    packed with L1 accumulation off (the packer only adds onto float32 / bfloat16 tiles)."""
    @T.prim_func
    def tb(A: T.Tensor((128, 128), "float16"), B: T.Tensor((128, 128), "float16"),
           C: T.Tensor((128, 128), "float16")):
        with T.Kernel(2, 2) as (bx, by):
            a = T.alloc_shared((64, 32), "float16")
            b = T.alloc_shared((64, 32), "float16")
            c = T.alloc_fragment((64, 64), "float32")
            T.clear(c)
            for ko in T.Pipelined(4, num_stages=0):
                T.copy(A[by * 64, ko * 32], a)
                T.copy(B[bx * 64, ko * 32], b)
                T.gemm(a, b, c, transpose_B=True)
            T.copy(c, C[by * 64, bx * 64])

    rng = np.random.default_rng(21)
    a, b = (rng.standard_normal((128, 128)).astype(np.float16) for _ in range(2))
    kernel = jit(tb)
    c = kernel(a, b).astype(np.float32)
    want = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(c, want, rtol=0, atol=np.abs(want).max() * 2e-3)
    filecheck(kernel.compiled.kernel_sources()["compute.cpp"], """
CHECK:     pack_reconfig_l1_acc(static_cast<uint32_t>(ko > 0));
CHECK:     pack_reconfig_l1_acc(0);
CHECK:     transpose_wh_tile
""")


def test_gemm_with_shapes_not_multiple_of_the_block(gemm_factory):
    run_gemm(gemm_factory(200, 168, 100, 64, 64, 32), 200, 168, 100, seed=6)


def test_gemm_1024x2048x512(gemm_factory):
    kernel = gemm_factory(1024, 2048, 512, 128, 256, 64)
    run_gemm(kernel, 1024, 2048, 512, seed=8)
    perf = kernel.last_result.perf
    assert perf.counters.matmul_flops == 2 * 1024 * 2048 * 512


def test_gemm_on_blackhole(gemm_factory):
    kernel = jit(gemm_factory(256, 192, 128, 64, 64, 64).prim, arch="blackhole")
    run_gemm(kernel, 256, 192, 128, seed=10)
    assert kernel.compiled.program.arch.name == "blackhole"


def test_check_kernel_accepts_the_kernels(tile_notation_matmul, gemm_factory, tmp_path):
    jobs = []
    for tag, kernel in (("seed", tile_notation_matmul), ("gemm", gemm_factory(256, 256, 256, 128, 128, 64))):
        program = kernel.compiled.program
        for k in program.kernels:
            path = tmp_path / f"{tag}_{k.source_file}"
            path.write_text(kernel.compiled.kernel_sources()[k.source_file])
            role = "compute" if k.is_compute else ("reader" if k.processor == "RISCV_0" else "writer")
            jobs.append((path, role, accessor_compile_args(program, k) or None))
    for result in check_kernels(jobs):
        require_accepted(result)


def test_gemm_from_zero_without_a_loop():
    """A single K block: C = A @ B with no K loop (bK = K)."""
    @T.prim_func
    def one_block(A: T.Tensor((128, 64), "bfloat16"), B: T.Tensor((64, 128), "bfloat16"),
                  C: T.Tensor((128, 128), "float32")):
        with T.Kernel(2, 2) as (bx, by):
            a = T.alloc_shared((64, 64), "bfloat16")
            b = T.alloc_shared((64, 64), "bfloat16")
            c = T.alloc_fragment((64, 64), "float32")
            T.copy(A[by * 64, 0], a)
            T.copy(B[0, bx * 64], b)
            T.gemm(a, b, c, clear_accum=True)
            T.copy(c, C[by * 64, bx * 64])

    a, b = random_bf16((128, 64), 12), random_bf16((64, 128), 13)
    c = jit(one_block)(a, b)
    assert c.dtype == np.float32
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-4)


def test_bfloat16_accumulator_rounds_each_k_tile():
    """With a bfloat16 fragment DST holds bfloat16: each 32-wide K step is rounded, as on the device."""
    kernel = load_example("gemm").matmul(64, 64, 128, 64, 64, 64, accum_dtype="bfloat16")
    a, b = random_bf16((64, 128), 14), random_bf16((128, 64), 15)
    c = kernel(a, b).astype(np.float32)
    assert not kernel.compiled.program.kernels[1].config.fp32_dest_acc_en
    acc = np.zeros((64, 64), np.float32)
    af, bf = a.astype(np.float32), b.astype(np.float32)
    for k0 in range(0, 128, 32):
        acc = (acc + af[:, k0:k0 + 32] @ bf[k0:k0 + 32]).astype(a.dtype).astype(np.float32)
    np.testing.assert_allclose(c, acc, rtol=0, atol=np.abs(acc).max() * 2.0 ** -8)


def test_uneven_work_split_runs_on_two_lane_groups():
    @T.prim_func
    def scale(A: T.Tensor((416, 416), "float32"), C: T.Tensor((416, 416), "float32")):
        with T.Kernel(13, 13) as (bx, by):
            a = T.alloc_shared((32, 32), "float32")
            c = T.alloc_fragment((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], a)
            for i, j in T.Parallel(32, 32):
                c[i, j] = a[i, j] * 3.0 + 1.0
            T.copy(c, C[by * 32, bx * 32])

    x = np.random.default_rng(16).standard_normal((416, 416)).astype(np.float32)
    kernel = jit(scale)
    np.testing.assert_array_equal(kernel(x), x * np.float32(3.0) + np.float32(1.0))
    counts = [row[3] for row in get_attr(kernel.compiled.function, "tt.core_runtime_args")]
    assert counts == [3] * 41 + [2] * 23


def test_annotate_tt_compute_sets_the_math_fidelity(gemm_factory):
    """HiFi2 (T.annotate_tt_compute) runs half the multiplier passes of the default HiFi4."""
    fast, full = gemm_factory(256, 256, 256, 128, 128, 64, math_fidelity="HiFi2"), gemm_factory(256, 256, 256, 128, 128, 64)
    a, b = random_bf16((256, 256), 12), random_bf16((256, 256), 13)
    ref = matmul_reference(a, b)
    assert np.abs(fast(a, b).astype(np.float32) - ref).max() <= 0.02 * np.abs(ref).max()   # fewer mantissa bits
    np.testing.assert_allclose(full(a, b).astype(np.float32), ref, rtol=1e-2, atol=1e-2)
    assert get_attr(fast.compiled.function, "tt.compute_config")["math_fidelity"] == "HiFi2"
    assert get_attr(full.compiled.function, "tt.compute_config")["math_fidelity"] == "HiFi4"
    assert "MathFidelity::HiFi2" in fast.compiled.artifacts()["main.cpp"]
    assert fast.last_result.perf.seconds < full.last_result.perf.seconds

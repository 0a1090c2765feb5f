"""The tile IR tilefold.language builds: structure, source locations, MLIR round trip."""

import inspect

from tilelang_helpers import filecheck, load_example

import tilefold.language as T
from tilefold.ir.context import parse_module, print_ir


def test_canonical_gemm_ir():
    prim = load_example("gemm").matmul(256, 256, 256, 128, 128, 64, num_stages=3).prim
    filecheck(prim.ir(), """
CHECK:      func.func @gemm(%A: memref<256x256xbf16>, %B: memref<256x256xbf16>, %C: memref<256x256xbf16>) attributes {tile.params = ["A", "B", "C"], tt.user_compute = #ttkernel.compute_config<math_fidelity = "HiFi4">} {
CHECK-NEXT:   tile.kernel attributes {grid = array<i32: 2, 2>} {
CHECK-NEXT:   ^bb0(%bx: i32, %by: i32):
CHECK-NEXT:     %A_shared = tile.alloc {name = "A_shared", scope = "shared"} : memref<128x64xbf16, "shared">
CHECK-NEXT:     %B_shared = tile.alloc {name = "B_shared", scope = "shared"} : memref<64x128xbf16, "shared">
CHECK-NEXT:     %C_local = tile.alloc {name = "C_local", scope = "fragment"} : memref<128x128xf32, "fragment">
CHECK-NEXT:     tile.fill %C_local {value = 0.000000e+00 : f32}
CHECK:          tile.for %{{.*}} to %{{.*}} attributes {step = 1 : i32, kind = "pipelined", num_stages = 3 : i32} {
CHECK-NEXT:     ^bb0(%k: i32):
CHECK:            %[[ROW:.*]] = arith.muli %by, %{{.*}} : i32
CHECK:            %[[K:.*]] = arith.muli %k, %{{.*}} : i32
CHECK-NEXT:       tile.copy %A, %A_shared[%[[ROW]], %[[K]]]
CHECK:            tile.copy %B, %B_shared[
CHECK-NEXT:       tile.gemm %A_shared, %B_shared, %C_local {transpose_a = false, transpose_b = false, clear_accum = false}
CHECK:          tile.copy %C_local, %C[
CHECK:      func.return
""")


def test_ops_carry_the_users_lines():
    gemm = load_example("gemm")
    prim = gemm.matmul(64, 64, 64, 32, 32, 32).prim
    text = prim.ir(debuginfo=True)
    lines, start = inspect.getsourcelines(prim.python_function)
    gemm_line = start + next(i for i, line in enumerate(lines) if "T.gemm(" in line)
    assert f'loc("{gemm.__file__}":{gemm_line}:' in text.split("tile.gemm")[1].split("\n")[0]


def test_round_trip_with_locations():
    prim = load_example("softmax").softmax(64, 64).prim
    for debuginfo in (False, True):
        text = prim.ir(debuginfo=debuginfo)
        assert print_ir(parse_module(text), debuginfo=debuginfo) == text


def leaky(x, slope):
    """A helper: built in place where a kernel calls it."""
    return T.if_then_else(x > 0.0, x, x * slope)


def test_helpers_are_built_in_place():
    @T.prim_func
    def k(A: T.Tensor((32, 32), "float32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1) as bx:
            a = T.alloc_shared((32, 32), "float32")
            b = T.alloc_fragment((32, 32), "float32")
            T.copy(A[0, 0], a)
            for i, j in T.Parallel(32, 32):
                b[i, j] = leaky(a[i, j], 0.125)
            T.copy(b, B[0, 0])

    text = k.ir(debuginfo=True)
    filecheck(text, """
CHECK:      tile.parallel
CHECK:        %[[X:.*]] = tile.load %a[%i, %j]
CHECK:        %[[C:.*]] = arith.cmpf ogt, %[[X]], %{{.*}} : f32
CHECK:        %[[S:.*]] = arith.mulf %[[X]], %{{.*}} : f32
CHECK-NEXT:   %[[R:.*]] = arith.select %[[C]], %[[X]], %[[S]] : f32
CHECK-NEXT:   tile.store %[[R]], %b[%i, %j]
""")
    helper_line = inspect.getsourcelines(leaky)[1] + 2
    assert f":{helper_line}:" in text.split("arith.select")[1].split("\n")[0]

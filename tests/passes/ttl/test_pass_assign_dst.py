"""ttl-assign-dst: DST slots of a compute body, the footprint, sub-blocks, and the overflow error."""

import pytest

from tilefold.errors import CompileError
from ttl_pass_helpers import T, cb, compute_kernel, filecheck, run

IDENTITY = "affine_map<(d0, d1) -> (d0, d1)>"


def compute(shape: str, body: str, inputs: int = 2, attrs: str = "") -> str:
    """A kernel holding one compute over ``inputs`` blocks of ``shape`` tiles with ``body`` (tile ops on
    %x, %y, ... ending in ``ttl.yield``), stored into a reserved block."""
    tt = f"tensor<{shape.replace(', ', 'x')}x{T}>"
    binds = [(i, shape, 2, T) for i in range(inputs + 1)]
    names = ["x", "y", "z"][:inputs]
    waits = "\n".join(f"  %{n} = ttl.cb_wait %cb{i} : {cb(shape)} -> {tt}" for i, n in enumerate(names))
    maps = ", ".join([IDENTITY] * (inputs + 1))
    args = ", ".join(f"%{n}t: {T}" for n in names) + f", %out: {T}"
    return compute_kernel(f"""{waits}
  %o = ttl.cb_reserve %cb{inputs} : {cb(shape)} -> {tt}
  %empty = tensor.empty() : {tt}
  %oa = ttl.attach_cb %empty, %cb{inputs} : {tt}, {cb(shape)} -> {tt}
  %r = ttl.compute ins({", ".join("%" + n for n in names)} : {", ".join([tt] * inputs)}) outs(%oa : {tt}) attributes {{indexing_maps = [{maps}], iterator_types = ["parallel", "parallel"]}} {{
  ^bb0({args}):
{body}
  }} -> {tt}
  ttl.store %r, %o : {tt}, {tt}""", binds, attrs)


def test_binary_takes_a_fresh_slot_unary_works_in_place_result_at_footprint_plus_index():
    text = compute("2, 2", f"""    %s = ttl.tile_add %xt, %yt : {T}
    %e = ttl.tile_exp %s : {T}
    ttl.yield %e : {T}""")
    filecheck(run(text, "ttl-assign-dst"), f"""
    CHECK: ttl.compute
    CHECK-SAME: ttl.dst_footprint = 2 : i32
    CHECK: %[[OUT:.+]] = ttl.linearized_index affine_map<(d0, d1) -> (((d0 * 2) + d1))> {{{{.*}}}}ttl.dst_output_index
    CHECK: %[[I:.+]] = ttl.linearized_index affine_map<(d0, d1) -> (((d0 * 2) + d1))> {{ttl.operand = 0 : i32}}
    CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : index
    CHECK-NEXT: ttl.copy_tile %xt, %[[I]], %[[C0]]
    CHECK: %[[C1:.+]] = arith.constant 1 : index
    CHECK-NEXT: ttl.copy_tile %yt, %{{{{.+}}}}, %[[C1]]
    CHECK-NEXT: ttl.tile_add {{{{.*}}}} {{dst_idx = 2 : i32, ttl.dst_output}}
    CHECK-NEXT: ttl.tile_exp {{{{.*}}}} {{dst_idx = 2 : i32, ttl.dst_output}}
    """)


def test_value_with_a_later_consumer_is_copied_before_an_in_place_op():
    text = compute("1, 1", f"""    %p = ttl.tile_mul %xt, %yt : {T}
    %e = ttl.tile_exp %p : {T}
    %s = ttl.tile_add %e, %p : {T}
    ttl.yield %s : {T}""")
    filecheck(run(text, "ttl-assign-dst"), f"""
    CHECK: ttl.dst_footprint = 2 : i32
    CHECK: %[[P:.+]] = ttl.tile_mul {{{{.*}}}} {{dst_idx = 0 : i32}}
    CHECK-NEXT: %[[C:.+]] = ttl.copy_dst %[[P]] {{dst_idx = 1 : i32}}
    CHECK-NEXT: %[[E:.+]] = ttl.tile_exp %[[C]] {{dst_idx = 1 : i32}}
    CHECK-NEXT: ttl.tile_add %[[E]], %[[P]] {{dst_idx = 2 : i32, ttl.dst_output}}
    """)


def test_slots_are_reused_after_their_last_use():
    """x is read twice, so the first in-place op works on a copy; y and the copy's slots are taken over
    in place after their last use; the last read of x works in x's own slot."""
    text = compute("1, 1", f"""    %a = ttl.tile_add_scalar %xt {{value = 1.0 : f32}} : {T}
    %b = ttl.tile_add_scalar %yt {{value = 2.0 : f32}} : {T}
    %m = ttl.tile_mul %a, %b : {T}
    %c = ttl.tile_add_scalar %xt {{value = 3.0 : f32}} : {T}
    ttl.yield %m : {T}""")
    filecheck(run(text, "ttl-assign-dst"), """
    CHECK: ttl.dst_footprint = 3 : i32
    CHECK: ttl.copy_dst {{.*}}dst_idx = 1 : i32
    CHECK-NEXT: ttl.tile_add_scalar {{.*}}dst_idx = 1 : i32
    CHECK: ttl.copy_tile %yt, %{{.+}}, %[[C2:.+]] :
    CHECK-NEXT: ttl.tile_add_scalar {{.*}}dst_idx = 2 : i32
    CHECK-NEXT: ttl.tile_mul {{.*}}dst_idx = 3 : i32, ttl.dst_output
    CHECK-NEXT: ttl.tile_add_scalar {{.*}}dst_idx = 0 : i32
    """)


def test_an_input_is_copied_into_dst_just_before_its_first_reader():
    """(x * y + z) * 0.001: x * y is written over x, z is copied after y is consumed into y's slot,
    so the expression needs 2 slots plus the result: sub-blocks of 2 tiles in one fp32
    tile_regs_acquire of 4."""
    text = compute("1, 4", f"""    %p = ttl.tile_mul %xt, %yt : {T}
    %s = ttl.tile_add %p, %zt : {T}
    %m = ttl.tile_mul_scalar %s {{value = 0.001 : f32}} : {T}
    ttl.yield %m : {T}""", inputs=3, attrs=', ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = '
                   '"HiFi4", fp32_dest_acc_en = true, dst_full_sync_en = false, math_approx_mode = false>')
    filecheck(run(text, "ttl-assign-dst"), f"""
    CHECK: scf.for
    CHECK: ttl.compute ins(%{{{{.+}}}} : tensor<1x2x{T}>, tensor<1x2x{T}>, tensor<1x2x{T}>)
    CHECK-SAME: ttl.dst_footprint = 2 : i32
    CHECK: ttl.copy_tile %xt
    CHECK: ttl.copy_tile %yt
    CHECK-NEXT: ttl.tile_mul {{{{.*}}}} {{dst_idx = 0 : i32}}
    CHECK: %[[Z1:.+]] = arith.constant 1 : index
    CHECK-NEXT: ttl.copy_tile %zt, %{{{{.+}}}}, %[[Z1]]
    CHECK-NEXT: ttl.tile_add {{{{.*}}}} {{dst_idx = 2 : i32, ttl.dst_output}}
    CHECK-NEXT: ttl.tile_mul_scalar {{{{.*}}}}dst_idx = 2 : i32, ttl.dst_output
    """)


def test_a_block_larger_than_dst_is_split_into_sub_blocks():
    text = compute("4, 4", f"""    %s = ttl.tile_add %xt, %yt : {T}
    ttl.yield %s : {T}""")
    filecheck(run(text, "ttl-assign-dst"), f"""
    CHECK: scf.for %[[SB:.+]] = %{{{{.+}}}} to %{{{{.+}}}} step %{{{{.+}}}} {{
    CHECK: %[[X:.+]] = ttl.block_slice %x[%[[SB]], %{{{{.+}}}}] {{sizes = array<i64: 1, 4>}}
    CHECK: ttl.compute ins(%[[X]], %{{{{.+}}}} : tensor<1x4x{T}>, tensor<1x4x{T}>)
    CHECK-SAME: ttl.dst_footprint = 2 : i32
    CHECK: ttl.linearized_index affine_map<(d0, d1) -> (((d0 * 4) + d1))> {{{{.*}}}}ttl.dst_output_index
    CHECK: ttl.linearized_index affine_map<(d0, d1)[s0, s1] -> ((((d0 * 4) + (s0 * 4)) + (d1 + s1)))>[%[[SB]], %{{{{.+}}}}]
    CHECK: %[[OS:.+]] = ttl.block_slice %o[%[[SB]], %{{{{.+}}}}]
    CHECK: ttl.store %{{{{.+}}}}, %[[OS]]
    CHECK: }} {{ttl.subblock_loop}}
    """)


def test_one_output_tile_needing_more_slots_than_dst_has_is_an_error_at_the_users_line():
    """A balanced product of sixteen values (x + 1 ... x + 16) needs x and four partial products live
    at once in any order: more than a float32 acquire's 4 slots, even with the result in one of them."""
    leaves = [f"    %a{i} = ttl.tile_add_scalar %xt {{value = {i}.0 : f32}} : {T}" for i in range(1, 17)]
    leaves[0] += ' loc("user.py":7:0)'
    level, names, lines, n = 0, [f"%a{i}" for i in range(1, 17)], [], 0
    while len(names) > 1:
        pairs = []
        for left, right in zip(names[::2], names[1::2]):
            n += 1
            lines.append(f"    %p{n} = ttl.tile_mul {left}, {right} : {T}")
            pairs.append(f"%p{n}")
        names = pairs
    body = "\n".join(leaves + lines + [f"    ttl.yield {names[0]} : {T}"])
    text = compute("1, 1", body, inputs=1, attrs=', ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", '
                   'fp32_dest_acc_en = true, dst_full_sync_en = false, math_approx_mode = false>')
    text = text.replace(f'  }} -> tensor<1x1x{T}>\n', f'  }} -> tensor<1x1x{T}> loc("user.py":12:0)\n')
    with pytest.raises(CompileError) as info:
        run(text, "ttl-assign-dst")
    message = str(info.value)
    assert message.startswith("user.py:12: ")
    assert "needs 6 DST tiles for each output tile (5 for intermediate values" in message and "gives 4" in message


def test_matmul_larger_than_dst_is_split_into_rt_by_ct_sub_blocks():
    a, b, o = f"tensor<4x2x{T}>", f"tensor<2x4x{T}>", f"tensor<4x4x{T}>"
    text = compute_kernel(f"""
  %a = ttl.cb_wait %cb0 : {cb("4, 2")} -> {a}
  %b = ttl.cb_wait %cb1 : {cb("2, 4")} -> {b}
  %o = ttl.cb_reserve %cb2 : {cb("4, 4")} -> {o}
  %m = ttl.matmul %a, %b : {a}, {b} -> {o}
  ttl.store %m, %o : {o}, {o}""", [(0, "4, 2", 2, T), (1, "2, 4", 2, T), (2, "4, 4", 2, T)])
    filecheck(run(text, "convert-ttl-to-compute", "ttl-assign-dst"), f"""
    CHECK: scf.for %[[SB:.+]] =
    CHECK: %[[A:.+]] = ttl.block_slice %a[%[[SB]], %{{{{.+}}}}] {{sizes = array<i64: 2, 2>}}
    CHECK: ttl.compute ins(%[[A]], %b : tensor<2x2x{T}>, tensor<2x4x{T}>)
    CHECK-SAME: ttl.dst_footprint = 0 : i32
    CHECK: ttl.tile_matmul {{{{.*}}}}dst_idx = 0 : i32, ttl.dst_output
    CHECK: }} -> tensor<2x4x{T}>
    """)


def test_the_operand_needing_more_slots_is_computed_first():
    """GELU's tanh form of h = x + y, 0.5·h·(1 + tanh(0.798·(h + 0.045·h³))), written left to
    right holds 0.5·h while the right side is computed: 4 slots and the result, more than a float32
    acquire gives. The heavier right side first needs 3."""
    text = compute("1, 1", f"""    %h = ttl.tile_add %xt, %yt : {T}
    %c0 = ttl.tile_fill {{value = 0.5 : f32}} : {T}
    %l = ttl.tile_mul %c0, %h : {T}
    %h2 = ttl.tile_mul %h, %h : {T}
    %h3 = ttl.tile_mul %h2, %h : {T}
    %c1 = ttl.tile_fill {{value = 0.044715 : f32}} : {T}
    %s = ttl.tile_mul %c1, %h3 : {T}
    %a = ttl.tile_add %h, %s : {T}
    %c2 = ttl.tile_fill {{value = 0.7978845608 : f32}} : {T}
    %i = ttl.tile_mul %c2, %a : {T}
    %t = ttl.tile_tanh %i : {T}
    %c3 = ttl.tile_fill {{value = 1.0 : f32}} : {T}
    %r = ttl.tile_add %c3, %t : {T}
    %g = ttl.tile_mul %l, %r : {T}
    ttl.yield %g : {T}""", attrs=', ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = '
                   '"HiFi4", fp32_dest_acc_en = true, dst_full_sync_en = false, math_approx_mode = false>')
    filecheck(run(text, "ttl-assign-dst"), f"""
    CHECK: ttl.dst_footprint = 3 : i32
    CHECK: ttl.tile_tanh
    CHECK: ttl.tile_fill {{{{.*}}}}value = 5.000000e-01
    CHECK: %l = ttl.tile_mul
    CHECK-NEXT: ttl.tile_mul %l, %{{{{.+}}}} {{dst_idx = 3 : i32, ttl.dst_output}}
    """)

"""verify_tt_ir: the device kernels and their resources are ones a Tenstorrent device runs.

Reads: the ``@reader`` / ``@compute`` / ``@writer`` kernels and the TileLang function's
``tt.*`` attributes.
Checks: every op verifies and each compute kernel keeps the tile-register protocol
(:func:`tilefold.ir.verify.verify_kernel_module`); no ``tile`` op is left in a kernel; the
core ranges lie on the device's grid; at most 32 circular buffers with distinct indices;
the circular buffers and L1 shards of a core fit its L1; each data-movement kernel builds
exactly one TensorAccessor per tensor in its ``tt.compile_args`` (the guardrail against a
default-constructed TensorAccessorArgs); a multicast circular buffer (``tt.multicast_groups``)
keeps its handshake: its semaphores are in ``tt.sync_barriers``, its groups' cores are active
and their runtime arguments name their roles, and the reader makes as many sender waits,
resets, block multicasts and VALID multicasts as receiver announcements and waits
(:func:`check_multicast_protocol`).
Writes: nothing. Errors: :class:`KernelError` / :class:`CompileError` /
:class:`L1OverflowError` naming the line or the buffer.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from tilefold.errors import CompileError, L1OverflowError
from tilefold.ir.locations import source_location
from tilefold.ir.ttkernel import TensorAccessorArgsOp, TensorAccessorOp, constant_int
from tilefold.ir.verify import verify_kernel_module
from tilefold.ir.attributes import get_attr, kernel_function, location_of
from tilefold.passes.tilelang.configure_tensor_accessor import device_kernels
from tilefold.ir.attributes import cb_entries
from tilefold.passes.device_pass import DevicePass


def _align(n: int, a: int) -> int:
    return -(-n // a) * a


@dataclass(frozen=True)
class VerifyTTIR(DevicePass):
    """Final checks of the lowered program (see the module docstring)."""

    name = "verify-tt-ir"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        arch = self.arch
        host = kernel_function(op)
        kernels = device_kernels(op)
        for kernel in kernels:
            for inner in kernel.walk():
                if inner.name.startswith("tile."):
                    raise CompileError(f"{inner.name} was not lowered in kernel @{kernel.sym_name.data}",
                                       source_location(inner))
        verify_kernel_module(op)
        gx, gy = arch.grid
        for x0, y0, x1, y1 in get_attr(host, "tt.core_ranges"):
            if x1 >= gx or y1 >= gy or x0 < 0 or y0 < 0:
                raise CompileError(f"core range ({x0},{y0})-({x1},{y1}) lies outside the {gx}x{gy} grid of "
                                   f"{arch.board}")
        cbs = cb_entries(host)
        indices = [cb["index"] for cb in cbs.values()]
        if len(indices) > arch.max_circular_buffers or len(set(indices)) != len(indices):
            raise CompileError(f"the kernel uses {len(indices)} circular buffers (indices {sorted(indices)}); at most "
                               f"{arch.max_circular_buffers}, each index once")
        self._check_l1(host, cbs, arch)
        check_multicast_protocol(op)
        for kernel in kernels:
            names = get_attr(kernel, "tt.compile_args", [])
            args = [o for o in kernel.walk() if isinstance(o, TensorAccessorArgsOp)]
            accessors = [o for o in kernel.walk() if isinstance(o, TensorAccessorOp)]
            if len(args) != len(names) or len(accessors) != len(names):
                raise CompileError(f"TensorAccessor guardrail: kernel @{kernel.sym_name.data} builds {len(args)} "
                                   f"TensorAccessorArgs for the {len(names)} tensors in its compile-time args "
                                   f"({', '.join(names) or 'none'}); each tensor needs exactly one",
                                   source_location(kernel))

    def _check_l1(self, host, cbs: dict, arch) -> None:
        total = sum(_align(cb["page_size"] * cb["depth"], arch.l1_alignment) for cb in cbs.values())
        shards = 0
        for name in get_attr(host, "tile.params"):
            entry = get_attr(host, f"tt.buffer.{name}")
            if entry["memory"] == "L1" and entry["layout"] == "sharded":
                sm, sn = entry["nd_shard"]["projected_shard_tiles"]
                page = _align(cbs_page(entry), arch.l1_alignment)
                shards += sm * sn * page
        if total + shards > arch.l1_free:
            biggest = sorted(cbs.items(), key=lambda kv: -kv[1]["page_size"] * kv[1]["depth"])[:3]
            detail = ", ".join(f"{n} {cb['depth']} x {cb['page_size']} B" for n, cb in biggest)
            raise L1OverflowError(f"a core needs {total} B of circular buffers ({detail}) and {shards} B of L1 shards "
                                  f"but {arch.board} has {arch.l1_free} B of L1 free; use smaller blocks or fewer "
                                  "pipeline stages",
                                  location_of(biggest[0][1]) or source_location(host))


def cbs_page(entry: dict) -> int:
    from tilefold.ir.buffer_layouts import entry_format

    return entry_format(entry).tile_size(32, 32)


def _semaphore_id(value) -> int | None:
    """The id of the ``get_semaphore(id)`` an address comes from (through ``get_noc_addr`` /
    ``get_noc_multicast_addr``), else None."""
    owner = value.owner
    name = getattr(owner, "name", "")
    if name in ("ttkernel.get_noc_addr_xy", "ttkernel.get_noc_multicast_addr"):
        return _semaphore_id(owner.operands[-1])
    if name == "ttkernel.get_semaphore":
        return constant_int(owner.operands[0])
    return None


def check_multicast_protocol(module: ModuleOp) -> None:
    """The sender / receiver handshake of every multicast circular buffer (see the module docstring)."""
    host = kernel_function(module)
    groups = get_attr(host, "tt.multicast_groups", {})
    if not groups:
        return
    barriers = {b["id"]: b for b in get_attr(host, "tt.sync_barriers", {}).values()}
    active = {(x, y) for x0, y0, x1, y1 in get_attr(host, "tt.core_ranges")
              for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)}
    names = [a["name"] for a in get_attr(host, "tt.runtime_args")]
    rows = {(r[0], r[1]): dict(zip(names, r[2:])) for r in get_attr(host, "tt.core_runtime_args")}
    reader = next(k for k in device_kernels(module) if k.sym_name.data == get_attr(host, "tt.kernels")["reader"])
    calls = [o for o in reader.walk() if o.name.startswith("ttkernel.")]
    for buffer, g in groups.items():
        where = f"multicast of {buffer} (circular buffer {g['cb']})"
        for sem, side in ((g["sender_sem"], "sender"), (g["receiver_sem"], "receiver")):
            b = barriers.get(sem)
            if b is None or b["buffer"] != buffer or b["side"] != side:
                raise CompileError(f"{where}: semaphore {sem} is not its {side} semaphore in tt.sync_barriers")
        for sx, sy, x0, y0, x1, y1 in g["groups"]:
            cores = [(sx, sy)] + [(x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)]
            if not set(cores) <= active:
                raise CompileError(f"{where}: group {[sx, sy, x0, y0, x1, y1]} reaches past the active cores")
            want = {(sx, sy): [1, x0, y0, x1, y1, len(cores) - 1]}
            want.update({c: [2, sx, sy, sx, sy, 0] for c in cores[1:]})
            for core, values in want.items():
                got = [rows.get(core, {}).get(f"{buffer}_mcast_{s}") for s in
                       ("role", "start_noc_x", "start_noc_y", "end_noc_x", "end_noc_y", "receivers")]
                if got != values:
                    raise CompileError(f"{where}: core {core}'s runtime arguments {got} do not match its group "
                                       f"(expected {values})")

        def count(name: str, operand: int, sem: int) -> int:
            return sum(1 for o in calls if o.name == f"ttkernel.{name}" and _semaphore_id(o.operands[operand]) == sem)

        steps = {
            "sender waits for its receivers": count("noc_semaphore_wait", 0, g["sender_sem"]),
            "sender resets its semaphore": count("noc_semaphore_set", 0, g["sender_sem"]),
            "receivers announce free pages": count("noc_semaphore_inc", 0, g["sender_sem"]),
            "receivers wait for the block": count("noc_semaphore_wait", 0, g["receiver_sem"]),
            "sender multicasts VALID": count("noc_semaphore_set_multicast", 1, g["receiver_sem"]),
            "sender multicasts the block": sum(
                1 for o in calls if o.name == "ttkernel.noc_async_write_multicast"
                and getattr(o.operands[0].owner, "name", "") == "ttkernel.get_write_ptr"
                and constant_int(o.operands[0].owner.operands[0]) == g["cb"]),
        }
        if len(set(steps.values())) != 1 or not next(iter(steps.values())):
            detail = ", ".join(f"{k}: {v}" for k, v in steps.items())
            raise CompileError(f"{where}: the reader's semaphore handshake is broken; every block needs each step "
                               f"once ({detail})", source_location(reader))

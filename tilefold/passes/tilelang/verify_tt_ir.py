"""verify_tt_ir: the device kernels and their resources are ones a Tenstorrent device runs.

Reads: the ``@reader`` / ``@compute`` / ``@writer`` kernels and the TileLang function's
``tt.*`` attributes.
Checks: every op verifies and each compute kernel keeps the tile-register protocol
(:func:`tilefold.ir.verify.verify_kernel_module`); no ``tile`` op is left in a kernel; the
core ranges lie on the device's grid; at most 32 circular buffers with distinct indices;
the circular buffers and L1 shards of a core fit its L1; each data-movement kernel builds
exactly one TensorAccessor per tensor in its ``tt.compile_args`` (the guardrail against a
default-constructed TensorAccessorArgs).
Writes: nothing. Errors: :class:`KernelError` / :class:`CompileError` /
:class:`L1OverflowError` naming the line or the buffer.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from tilefold.errors import CompileError, L1OverflowError
from tilefold.ir.locations import source_location
from tilefold.ir.ttkernel import TensorAccessorArgsOp, TensorAccessorOp
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

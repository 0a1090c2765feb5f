"""finalize_persistent_signature (Stage E1): each kernel's runtime-argument list, by index.

Reads: ``tile.runtime_arg`` ops in the device kernels, ``tt.runtime_args`` (the canonical
per-core arguments: ``start_id, count, Mt, Kt, Nt`` and, for local_shard, ``Sm, Sn, Gy, Gx,
sy, sx``).
Writes: every kernel takes the canonical arguments first, at the same indices, then the
base addresses of the tensors it moves (a ``tile.runtime_arg`` with a ``tensor``) in order of
first use; each ``tile.runtime_arg`` becomes ``ttkernel.get_arg_val(index)``, and each kernel
records its list as ``tt.runtime_args`` (the addresses with role ``address``). The kernels are then tidied
(:mod:`tilefold.passes.tidy`): constants folded, repeated values shared (CSE), and unused index
arithmetic and runtime-argument reads dropped (every kernel keeps the same argument list).
Errors: more than 341 runtime arguments (0.69's max_runtime_args).
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.builder import Builder
from xdsl.rewriter import InsertPoint, Rewriter

from tilefold.arch import Arch
from tilefold.errors import CompileError
from tilefold.ir import tile
from tilefold.ir.locations import source_location
from tilefold.ir.ttkernel import api_call
from tilefold.passes.tilelang.affine import constant_op
from tilefold.ir.attributes import get_attr, kernel_function, set_attr
from tilefold.passes.tilelang.configure_tensor_accessor import device_kernels
from tilefold.passes.tidy import tidy_kernels

MAX_RUNTIME_ARGS = Arch.max_runtime_args       # TT-Metalium 0.69's max_runtime_args (unique and common together)


class FinalizePersistentSignature(ModulePass):
    """Runtime-argument indices of the device kernels (see the module docstring)."""

    name = "finalize-persistent-signature"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        canonical = get_attr(kernel_function(op), "tt.runtime_args")
        for kernel in device_kernels(op):
            uses = [o for o in kernel.walk() if isinstance(o, tile.RuntimeArgOp)]
            args = list(canonical)
            names = [a["name"] for a in args]
            for use in uses:
                name = use.arg_name.data
                if name in names:
                    continue
                if use.tensor is None:
                    raise CompileError(f"kernel @{kernel.sym_name.data} reads runtime argument {name}, which is "
                                       "neither canonical (tt.runtime_args) nor a tensor's address",
                                       source_location(use))
                names.append(name)
                args.append({"name": name, "role": "address", "tensor": use.tensor.data})
            if len(names) > MAX_RUNTIME_ARGS:
                raise CompileError(f"kernel @{kernel.sym_name.data} needs {len(names)} runtime arguments; at most "
                                   f"{MAX_RUNTIME_ARGS} are allowed", source_location(kernel))
            for use in uses:
                index = constant_op(names.index(use.arg_name.data))
                call = api_call("get_arg_val", [index.result])
                call.results[0].name_hint = use.result.name_hint
                Builder(InsertPoint.before(use)).insert(index)
                index.location = use.location
                call.location = use.location
                Rewriter.replace_op(use, call)
            set_attr(kernel, "tt.runtime_args", args)
        tidy_kernels(ctx, op)     # unused runtime arguments too: get_arg_val is pure

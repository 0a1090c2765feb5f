"""configure_tensor_accessor (Stage D2): each data-movement kernel builds its TensorAccessors.

Reads: ``tile.read_block`` / ``tile.write_block`` / ``tile.read_element`` in the ``@reader`` /
``@writer`` kernels,
``tt.tensor_accessor.<name>`` of the TileLang function.
Writes, at the top of each data-movement kernel, per tensor it moves (in order of first
use)::

    %A_addr = tile.runtime_arg "A_addr"
    %A_args = ttkernel.tensor_accessor_args() {cta_offset = 0}     // then (%prev_args) for the next
    %A      = ttkernel.tensor_accessor(%A_args, %A_addr, %page_size)

gives each block transfer its accessor, and records the kernel's compile-time arguments as
``tt.compile_args`` = [tensor names] (the host appends each tensor's
``TensorAccessorArgs(buffer)`` in that order).

Errors (the TensorAccessor guardrail): a tensor a kernel moves pages of without
``tt.tensor_accessor`` metadata, whose TensorAccessorArgs would be default-constructed.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.builder import Builder
from xdsl.rewriter import InsertPoint, Rewriter

from tilefold.errors import CompileError
from tilefold.ir import tile
from tilefold.ir.locations import source_location
from tilefold.ir.ttkernel import THREAD_ATTR, TensorAccessorArgsOp, TensorAccessorOp
from tilefold.passes.tilelang.affine import constant_op
from tilefold.ir.attributes import get_attr, kernel_function, set_attr


def device_kernels(module: ModuleOp) -> list[func.FuncOp]:
    return [op for op in module.ops if isinstance(op, func.FuncOp) and THREAD_ATTR in op.attributes]


class ConfigureTensorAccessor(ModulePass):
    """TensorAccessor construction in the data-movement kernels (see the module docstring)."""

    name = "configure-tensor-accessor"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        host = kernel_function(op)
        for kernel in device_kernels(op):
            transfers = [o for o in kernel.walk() if isinstance(o, tile.TRANSFERS)
                         or (isinstance(o, tile.ReadElementOp) and kernel.attributes[THREAD_ATTR].data == "noc")]
            names = list(dict.fromkeys(t.buffer_name for t in transfers))
            accessors = {}
            prev = None
            entry = kernel.body.block.first_op
            for name in names:
                meta = get_attr(host, f"tt.tensor_accessor.{name}", None)
                if not meta or "page_size" not in meta:
                    first = next(t for t in transfers if t.buffer_name == name)
                    raise CompileError(f"TensorAccessor guardrail: kernel @{kernel.sym_name.data} moves pages of "
                                       f"{name} but {name} has no tt.tensor_accessor metadata, so its "
                                       "TensorAccessorArgs would be default-constructed; run attach_tensor_accessor "
                                       "before splitting the kernel", source_location(first))
                at = InsertPoint.before(entry)
                addr = tile.RuntimeArgOp(f"{name}_addr", tensor=name)
                addr.result.name_hint = f"{name}_addr"
                args = TensorAccessorArgsOp(0) if prev is None else TensorAccessorArgsOp(prev=prev)
                args.result.name_hint = f"{name}_args"
                page = constant_op(meta["page_size"])
                accessor = TensorAccessorOp(args.result, addr.result, page.result)
                accessor.result.name_hint = name
                for new in (addr, args, page, accessor):
                    Builder(at).insert(new)
                    new.location = kernel.location
                prev = args.result
                accessors[name] = accessor.result
            for t in transfers:
                new = t.rebuilt(accessor=accessors[t.buffer_name]) if isinstance(t, tile.ReadElementOp) \
                    else t.with_accessor(accessors[t.buffer_name])
                new.location = t.location
                Rewriter.replace_op(t, new)
            set_attr(kernel, "tt.compile_args", names)

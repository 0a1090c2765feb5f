"""attach_tensor_accessor (Stage A3): TensorAccessor metadata for every global tensor.

Reads: ``tt.buffer.<name>``. Writes: ``tt.tensor_accessor.<name>`` = {kind (interleaved |
sharded), is_dram, page_size, aligned_page_size, compile_time_args (how many words
``TensorAccessorArgs(buffer).append_to`` adds)}. Building the accessor arguments here
checks that the layout can exist on the device (shards on real cores / banks, pages that
fit a bank).
Errors: a layout the device cannot hold (:class:`CompileError` at the annotation's line).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from tilefold.errors import CompileError, LayoutError
from tilefold.ir.attributes import get_attr, kernel_function, location_of, param_names, set_attr
from tilefold.ir.buffer_layouts import accessor_args, buffer_layout
from tilefold.passes.device_pass import DevicePass


@dataclass(frozen=True)
class AttachTensorAccessor(DevicePass):
    """``tt.tensor_accessor.<name>`` for each global tensor (see the module docstring)."""

    name = "attach-tensor-accessor"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        arch = self.arch
        kernel = kernel_function(op)
        user_layout = get_attr(kernel, "tt.user_layout", {})
        for name in param_names(kernel):
            entry = get_attr(kernel, f"tt.buffer.{name}")
            try:
                layout = buffer_layout(entry, arch)
                args = accessor_args(entry, arch)
            except LayoutError as err:
                raise CompileError(f"the layout of {name} cannot be built on {arch.board}: {err.message}",
                                   location_of(user_layout.get(name))) from None
            set_attr(kernel, f"tt.tensor_accessor.{name}", {
                "kind": "sharded" if layout.is_sharded else "interleaved",
                "is_dram": layout.is_dram,
                "page_size": layout.page_size,
                "aligned_page_size": layout.aligned_page_size(arch),
                "compile_time_args": len(args),
            })

"""The host Program of a lowered TileLang module (the end of Stage E).

Reads: the TileLang function's ``tt.*`` attributes (``tt.buffer.*``, ``tt.cb.*``,
``tt.core_ranges``, ``tt.core_runtime_args``, ``tt.global_roles``, ``tt.compute_config``)
and the ``@reader`` / ``@compute`` / ``@writer`` kernels (``tt.compile_args``,
``tt.runtime_args``).
Writes: a :class:`~tilefold.program.Program`: one buffer per tensor (its padded shape,
interleaved or ND-sharded in DRAM or L1; role input / output / inout), one CB per
``tt.cb`` entry on the active cores, the reader on RISCV_0 and the writer on RISCV_1 with
each tensor's ``TensorAccessorArgs`` as compile-time args, the compute kernel with the
kernel's ComputeConfig, and per-core runtime args by each ``#tt.runtime_arg``'s role: the
canonical values of ``tt.core_runtime_args`` (the ``noc_x`` / ``noc_y`` pair of one core names a
logical core and passes its NOC coordinates) then the ``address`` of each tensor the kernel moves; the semaphores of
``tt.sync_barriers`` on the active cores, in id order.
Errors: what :meth:`Program.validate` raises (L1 overflow, ...).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tilefold.arch import get_arch
from tilefold.arch.cores import CoreCoord, CoreRange, CoreRangeSet
from tilefold.layout.formats import data_format
from tilefold.ir.attributes import get_attr, kernel_function, param_names
from tilefold.ir.buffer_layouts import entry_format, memory_config
from tilefold.ir.attributes import cb_entries
from tilefold.ir.metadata import noc_cores
from tilefold.program import ComputeConfig, DataMovementConfig, NocX, NocY, Program
from tilefold.program.unpack_to_dest import unpack_to_dest_mode

ROLES = {"input": "input", "output": "output", "inout": "inout", "unused": "scratch"}
KERNEL_CONFIGS = {"reader": DataMovementConfig("RISCV_0"), "writer": DataMovementConfig("RISCV_1")}


def noc_coordinates(runtime_args: list[dict], values: list[int]) -> list:
    """Canonical runtime args with each ``noc_x`` / ``noc_y`` pair of one core (a logical core)
    as the NOC coordinates of that core."""
    args: list = list(values)
    for x, y in noc_cores(runtime_args).values():
        core = CoreCoord(values[x], values[y])
        args[x], args[y] = NocX(core), NocY(core)
    return args


def build_program(module: ModuleOp, arch=None) -> Program:
    arch = get_arch(arch)
    host = kernel_function(module)
    program = Program(name=host.sym_name.data, arch=arch)
    roles = get_attr(host, "tt.global_roles")
    for name in param_names(host):
        entry = get_attr(host, f"tt.buffer.{name}")
        program.add_buffer(name, entry["padded_shape"], entry_format(entry), "TILE", entry["memory"],
                           role=ROLES[roles[name]], memory_config=memory_config(entry, arch),
                           logical_shape=entry["shape"])
    cores = CoreRangeSet([CoreRange((x0, y0), (x1, y1)) for x0, y0, x1, y1 in get_attr(host, "tt.core_ranges")])
    for name, cb in sorted(cb_entries(host).items(), key=lambda kv: kv[1]["index"]):
        program.create_circular_buffer(cores, cb["index"], cb["page_size"], cb["depth"],
                                       data_format(cb["data_format"]), name=name)
    for _, sem in sorted(get_attr(host, "tt.sync_barriers", {}).items(), key=lambda kv: kv[1]["id"]):
        program.create_semaphore(cores, sem["initial_value"])
    arg_names = get_attr(host, "tt.runtime_args")
    per_core = {CoreCoord(row[0], row[1]): noc_coordinates(arg_names, row[2:])
                for row in get_attr(host, "tt.core_runtime_args")}
    config = get_attr(host, "tt.compute_config")
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    for role, fname in get_attr(host, "tt.kernels").items():
        fn = functions[fname]
        kernel_config = KERNEL_CONFIGS.get(role)
        if kernel_config is None:
            formats = {cb.index: cb.data_format for cb in program.circular_buffers}
            modes = unpack_to_dest_mode(fn, formats, bool(config.get("fp32_dest_acc_en")))
            kernel_config = ComputeConfig(**config, unpack_to_dest_mode=modes)
        compile_args = [program.buffer(n).accessor_args for n in get_attr(fn, "tt.compile_args", [])]
        kernel = program.create_kernel(fn, cores, kernel_config, compile_args, name=fname)
        addresses = [program.buffer(a["tensor"]).address for a in get_attr(fn, "tt.runtime_args")
                     if a.get("role") == "address"]
        for core, values in per_core.items():
            args = list(values) + addresses
            program.set_runtime_args(kernel, core, args)
    program.validate()
    return program

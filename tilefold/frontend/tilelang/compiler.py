"""Compile a ``@T.prim_func``: the TileLang pipeline, the host Program, the artifacts, a run.

Reads: a :class:`PrimFunc`. Writes: a :class:`CompiledKernel` holding the lowered module
(the TileLang function with its ``tt.*`` metadata and the ``@reader`` / ``@compute`` /
``@writer`` kernels) and the :class:`~tilefold.program.Program`; it runs on the simulated
device (host arrays of the tensors' logical shapes are padded to the device shapes and
results cropped back) and writes the TT-Metalium project: ``reader.cpp``, ``compute.cpp``,
``writer.cpp``, ``main.cpp``, ``CMakeLists.txt``, ``host_checks.hpp``, ``data/*.bin``,
``tt.plan.json`` and the lowered IR (``<kernel>.mlir``).

With ``print_ir_after_all`` the module is printed after every pass, each dump headed
``// -----// IR Dump After <pass> //----- //`` as MLIR tools do.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import ml_dtypes
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tilefold.arch import ARCHS, Arch, get_arch
from tilefold.errors import ProgramError
from tilefold.ir.context import make_context, print_ir
from tilefold.layout.formats import DataFormat
from tilefold.passes.pipelines import build_pipeline
from tilefold.ir.attributes import get_attr, kernel_function, param_names
from tilefold.passes.tilelang.build_program import build_program
from tilefold.program import Program


def arch_key(arch: Arch) -> str:
    """A name :func:`get_arch` maps back to ``arch`` (the passes take device names)."""
    return next((key for key, value in ARCHS.items() if value is arch), arch.name)


def run_pipeline(module: ModuleOp, arch: Arch, print_ir_after_all: bool = False,
                 stream: TextIO | None = None) -> ModuleOp:
    """Run every pass of the TileLang pipeline on ``module`` (in place)."""
    ctx = make_context()
    out = stream or sys.stdout
    for p in build_pipeline("tilelang", arch_key(arch)):
        p.apply(ctx, module)
        module.verify()
        if print_ir_after_all:
            out.write(f"// -----// IR Dump After {p.name} //----- //\n")
            out.write(print_ir(module))
    return module


@dataclass
class Tensor:
    """A kernel parameter as the host sees it."""

    name: str
    shape: tuple[int, ...]          # logical
    padded_shape: tuple[int, ...]   # on the device
    data_format: DataFormat
    role: str                       # input | output | inout | unused


@dataclass
class CompiledKernel:
    """A TileLang kernel lowered for one device."""

    prim: object
    arch: Arch
    module: ModuleOp
    program: Program
    tensors: list[Tensor] = field(default_factory=list)
    last_result: object = None
    views: dict[str, tuple[str, tuple[int, ...]]] = field(default_factory=dict)  # view -> (tensor, shape)
    safe_values: dict[str, float] = field(default_factory=dict)  # tensor -> the value its padding holds

    def roles(self) -> dict[str, str]:
        """Each parameter's role as the caller sees it: a tensor read or written through a view
        (``T.Tensor(shape, dtype, X.data)``) is read or written itself."""
        roles = {t.name: t.role for t in self.tensors}
        for view, (base, _) in self.views.items():
            reads = {r for r in (roles[base], roles[view]) if r in ("input", "inout")}
            writes = {r for r in (roles[base], roles[view]) if r in ("output", "inout")}
            roles[base] = "inout" if reads and writes else "input" if reads else "output" if writes else roles[base]
        return roles

    @property
    def name(self) -> str:
        return self.prim.name

    @property
    def function(self) -> func.FuncOp:
        return kernel_function(self.module)

    def kernel_sources(self) -> dict[str, str]:
        """``{"reader.cpp": ..., "compute.cpp": ..., "writer.cpp": ...}``."""
        from tilefold.codegen.cpp import emit_kernel

        return {k.source_file: emit_kernel(k.function) for k in self.program.kernels}

    def artifacts(self, kernel_only: bool = False) -> dict[str, str]:
        """The device kernels, and unless ``kernel_only`` the host program ``main.cpp`` (reading
        its inputs from ``data/``) and ``tt.plan.json``, by file name."""
        from tilefold.codegen.cpp import HostData, emit_host

        files = dict(self.kernel_sources())
        if kernel_only:
            return files
        inputs = {b.name: bytes(b.size) for b in self.program.buffers.values() if b.role in ("input", "inout")}
        files["main.cpp"] = emit_host(self.program, HostData(inputs))
        import json

        files["tt.plan.json"] = json.dumps(self.plan(), indent=2)
        return files

    def plan(self) -> dict:
        from tilefold.codegen.plan import emit_tt_plan

        return emit_tt_plan(self.function)

    def ir(self) -> str:
        return print_ir(self.module)

    # -- running ----------------------------------------------------------------------------------

    def device_inputs(self, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Host arrays of the logical shapes → zero-padded arrays of the device shapes (float32,
        or bfloat16 as given: the device converts on the way in; unpadded arrays are not copied)."""
        arrays = dict(arrays)
        for view, (base, shape) in self.views.items():
            if base in arrays:
                arrays[view] = np.asarray(arrays[base]).reshape(shape)
        out = {}
        for t in self.tensors:
            if t.role not in ("input", "inout"):
                continue
            if t.name not in arrays:
                raise ProgramError(f"kernel {self.name} needs input {t.name!r} of shape {t.shape}")
            a = np.asarray(arrays[t.name])
            if t.data_format.is_float:
                if a.dtype not in (np.float32, ml_dtypes.bfloat16):
                    a = a.astype(np.float32)
            elif a.dtype != t.data_format.numpy_dtype:
                a = (np.trunc(a) if a.dtype.kind == "f" else a).astype(t.data_format.numpy_dtype)
            if a.shape != t.shape:
                raise ProgramError(f"input {t.name!r} of kernel {self.name} has shape {a.shape}; the kernel was "
                                   f"compiled for {t.shape}")
            a = a.reshape(device_view(t.shape))
            if a.shape == tuple(t.padded_shape):
                out[t.name] = a
                continue
            padded = np.full(t.padded_shape, self.safe_values.get(t.name, 0), a.dtype)
            padded[tuple(slice(0, s) for s in a.shape)] = a
            out[t.name] = padded
        return out

    def simulate(self, arrays: dict[str, np.ndarray], trace=None) -> dict[str, np.ndarray]:
        """Run on the simulated device; outputs (logical shapes, bfloat16 tensors as bfloat16,
        float32 ones as float32) by parameter name."""
        from tilefold.sim import Device

        result = Device(self.arch).run(self.program, self.device_inputs(arrays), trace=trace)
        self.last_result = result
        shapes = {t.name: t.shape for t in self.tensors}
        out = {}
        for name in result.outputs:
            view = device_view(shapes[name])
            value = result.outputs.native(name)[tuple(slice(0, s) for s in view)]
            out[name] = np.ascontiguousarray(value).reshape(shapes[name])
        for view, (base, _) in self.views.items():
            if view in out:
                out[base] = out.pop(view).reshape(shapes[base])
        return out

    # -- artifacts --------------------------------------------------------------------------------

    def host_data(self, arrays: dict[str, np.ndarray] | None = None, seed: int = 0):
        """Input bytes and golden output bytes for ``main.cpp``: the given inputs (or seeded
        random ones) and the simulated device's outputs for them."""
        from tilefold.codegen.cpp import Golden, HostData
        from tilefold.layout.host import to_device_pages

        rng = np.random.default_rng(seed)
        arrays = dict(arrays or {})
        for t in self.tensors:
            if t.role in ("input", "inout") and t.name not in arrays:
                arrays[t.name] = rng.standard_normal(t.shape).astype(np.float32)
        device_inputs = self.device_inputs(arrays)
        from tilefold.sim import Device

        result = Device(self.arch).run(self.program, device_inputs)
        inputs = {n: to_device_pages(a, self.program.buffer(n).data_format).tobytes()
                  for n, a in device_inputs.items()}
        goldens = {n: Golden(to_device_pages(a, self.program.buffer(n).data_format).tobytes())
                   for n, a in result.outputs.items()}
        return HostData(inputs, goldens)

    def write(self, out_dir, arrays: dict[str, np.ndarray] | None = None) -> list[Path]:
        """Write the TT-Metalium project and ``tt.plan.json`` into ``out_dir``."""
        from tilefold.codegen.cpp import write_project
        from tilefold.codegen.plan import emit_tt_plan

        root = Path(out_dir)
        paths = write_project(self.program, root, self.host_data(arrays))
        plan = root / "tt.plan.json"
        emit_tt_plan(self.function, plan)
        ir = root / f"{self.name}.mlir"
        ir.write_text(print_ir(self.module))
        return paths + [plan, ir]


def device_view(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape a tensor has on the device: a 1-D tensor of n values is one row, (1, n)."""
    return (1, shape[0]) if len(shape) == 1 else tuple(shape)


def compile_prim_func(prim, arch=None, print_ir_after_all: bool = False, stream: TextIO | None = None
                      ) -> CompiledKernel:
    """Lower ``prim`` through the TileLang pipeline and build its host Program."""
    arch = get_arch(arch)
    module = prim.module()
    run_pipeline(module, arch, print_ir_after_all, stream)
    program = build_program(module, arch)
    host = kernel_function(module)
    roles = get_attr(host, "tt.global_roles")
    names = param_names(host)
    types = {p.name: p.type for p in prim.params}
    views = {view: (base, tuple(shape)) for view, (base, shape) in get_attr(host, "tile.views", {}).items()}
    tensors = []
    for name in names:
        entry = get_attr(host, f"tt.buffer.{name}")
        shape, fmt = (views[name][1], types[views[name][0]].dtype) if name in views else \
            (types[name].shape, types[name].dtype)
        tensors.append(Tensor(name, shape, tuple(entry["padded_shape"]), fmt, roles[name]))
    return CompiledKernel(prim, arch, module, program, tensors, views=views,
                          safe_values=get_attr(host, "tile.safe_values", {}))

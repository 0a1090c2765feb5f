"""The compile driver: front-end IR → its pass pipeline → host Program → C++ or a simulated run.

Reads: a front end's module (``tile`` IR of a ``@T.prim_func``, ``ttl`` IR of a TT-Lang operation
call) and the device. Writes: the lowered module, its :class:`~tilefold.program.Program`, the IR
after every pass when asked, and — on request — the TT-Metalium project or the simulated run.

Every front end, the CLI and the benches compile through this module; front ends only build IR.
:func:`run_pipeline` runs a pipeline of :mod:`tilefold.passes.pipelines` (or any pass spec the
:mod:`~tilefold.passes.registry` parses) as one xDSL ``PassPipeline`` whose callback verifies the
module after the last pass (after every pass when asked, or when the IR is printed) and, with
``print_ir_after_all``, prints it to stderr headed
``// -----// IR Dump After <pass> //----- //`` as MLIR tools do — the same for every front end.

TileLang: :func:`compile_prim_func` gives a :class:`CompiledKernel` (the TileLang function with
its ``tt.*`` metadata and the ``@reader`` / ``@compute`` / ``@writer`` kernels, the Program and
the host tensors); it runs on the simulated device (host arrays of the tensors' logical shapes
are padded to the device shapes and results cropped back) and writes the TT-Metalium project:
``reader.cpp``, ``compute.cpp``, ``writer.cpp``, ``main.cpp``, ``CMakeLists.txt``,
``host_checks.hpp``, ``data/*.bin``, ``tt.plan.json`` and the lowered IR (``<kernel>.mlir``).

TT-Lang: :func:`compile_ttl` lowers one operation call (cached by its IR and its tensors' layouts),
:func:`run_ttl` runs it with the tensors' device pages and :func:`write_ttl_project` writes its
project with the IR after every pass (``ir/NN-<pass>.mlir``).

The emitters and the simulator are imported when first used, so that importing a front end
stays fast (``import tilefold.ttl`` does not load them).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import ml_dtypes
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline

from tilefold.arch import Arch, get_arch
from tilefold.errors import ProgramError
from tilefold.ir.attributes import get_attr, kernel_function, param_names
from tilefold.frozen_gc import frozen_gc
from tilefold.ir.context import make_context, print_ir
from tilefold.ir.verify import verify_kernel_module
from tilefold.passes.pipelines import pipeline_passes
from tilefold.program import Program
from tilefold.program.from_tilelang import build_program as build_tilelang_program
from tilefold.program.from_ttl import build_program as build_ttl_program

# set (to anything) to verify the module after every pass of every pipeline
VERIFY_EACH_PASS_ENV = "TILEFOLD_VERIFY_EACH_PASS"
IR_DUMP_HEADER = "// -----// IR Dump After {name} //----- //\n"

# the cost model's device time of every kernel run so far (a benchmark subtracts two readings)
MODELED_DEVICE_SECONDS = [0.0]


def ir_dump(name: str, text: str) -> str:
    """One ``--print-ir-after-all`` dump: the header line and the module's IR."""
    return IR_DUMP_HEADER.format(name=name) + text


def run_pipeline(module: ModuleOp, pipeline: str | tuple[ModulePass, ...], arch: Arch | str | None = None, *,
                 print_ir_after_all: bool = False, stream: TextIO | None = None,
                 dumps: list[tuple[str, str]] | None = None, verify_each_pass: bool | None = None) -> ModuleOp:
    """Run ``pipeline`` (a pipeline name, a pass spec, or pass instances) on ``module`` in place.
    The module is verified after the last pass, and after every pass when ``verify_each_pass``
    (by default: when the IR is printed or kept after every pass, or ``TILEFOLD_VERIFY_EACH_PASS``
    is set, as the test suite does; xDSL's verifier costs about as much as the passes themselves);
    with ``print_ir_after_all`` it is printed after every pass to ``stream`` (stderr by default);
    ``dumps`` (when given) collects ``(pass, IR text)``."""
    passes = pipeline_passes(pipeline, arch) if isinstance(pipeline, str) else tuple(pipeline)
    if verify_each_pass is None:
        verify_each_pass = print_ir_after_all or dumps is not None or bool(os.environ.get(VERIFY_EACH_PASS_ENV))

    def after_each(previous: ModulePass | None, op: ModuleOp, _next: ModulePass | None) -> None:
        if previous is None:
            return
        if verify_each_pass or _next is None:
            op.verify()
        if print_ir_after_all or dumps is not None:
            text = print_ir(op)
            if print_ir_after_all:
                (stream or sys.stderr).write(ir_dump(previous.name, text))
            if dumps is not None:
                dumps.append((previous.name, text))

    with frozen_gc():
        PassPipeline(passes, after_each).apply(make_context(), module)
    if not passes:
        module.verify()
    return module


# --- TileLang ---------------------------------------------------------------------------------------

@dataclass
class Tensor:
    """A kernel parameter as the host sees it."""

    name: str
    shape: tuple[int, ...]          # logical
    padded_shape: tuple[int, ...]   # on the device
    data_format: DataFormat
    role: str                       # input | output | inout | unused
    lead: tuple[int, ...] = ()      # padding before the first element, per device dim


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
        its inputs from ``data/``), ``tt.plan.json`` and ``CMakeLists.txt``, by file name."""
        from tilefold.codegen.cpp import HostData, emit_cmake, emit_host

        files = dict(self.kernel_sources())
        if kernel_only:
            return files
        inputs = {b.name: bytes(b.size) for b in self.program.buffers.values() if b.role in ("input", "inout")}
        files["main.cpp"] = emit_host(self.program, HostData(inputs))
        import json

        files["tt.plan.json"] = json.dumps(self.plan(), indent=2)
        files["CMakeLists.txt"] = emit_cmake(self.program.name)
        return files

    def plan(self) -> dict:
        from tilefold.codegen.plan import emit_tt_plan

        return emit_tt_plan(self.function)

    def ir(self) -> str:
        return print_ir(self.module)

    # -- running ----------------------------------------------------------------------------------

    def device_inputs(self, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Host arrays of the logical shapes → zero-padded arrays of the device shapes (float32,
        or bfloat16 as given: the device converts on the way in; unpadded arrays are not copied):
        every input, and each output given (TileLang keeps a passed tensor's values where the
        kernel does not write)."""
        arrays = dict(arrays)
        for view, (base, shape) in self.views.items():
            if base in arrays:
                arrays[view] = np.asarray(arrays[base]).reshape(shape)
        out = {}
        for t in self.tensors:
            # an output the caller passed keeps its values where the kernels do not write it
            if t.role not in ("input", "inout") and not (t.role == "output" and t.name in arrays):
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
            lead = t.lead or (0,) * a.ndim
            padded[tuple(slice(l, l + s) for l, s in zip(lead, a.shape))] = a
            out[t.name] = padded
        return out

    def simulate(self, arrays: dict[str, np.ndarray], trace=None) -> dict[str, np.ndarray]:
        """Run on the simulated device; outputs (logical shapes, bfloat16 tensors as bfloat16,
        float32 ones as float32) by parameter name."""
        from tilefold.sim import Device

        result = Device(self.arch).run(self.program, self.device_inputs(arrays), trace=trace)
        self.last_result = result
        MODELED_DEVICE_SECONDS[0] += result.perf.seconds
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
    run_pipeline(module, "tilelang", arch, print_ir_after_all=print_ir_after_all, stream=stream)
    program = build_tilelang_program(module, arch)
    host = kernel_function(module)
    roles = get_attr(host, "tt.global_roles")
    names = param_names(host)
    types = {p.name: p.type for p in prim.params}
    views = {view: (v["base"], tuple(v["shape"])) for view, v in get_attr(host, "tile.views", {}).items()}
    leads = get_attr(host, "tt.lead_pads", {})
    tensors = []
    for name in names:
        entry = get_attr(host, f"tt.buffer.{name}")
        shape, fmt = (views[name][1], types[views[name][0]].dtype) if name in views else \
            (types[name].shape, types[name].dtype)
        tensors.append(Tensor(name, shape, tuple(entry["padded_shape"]), fmt, roles[name], tuple(leads.get(name, ()))))
    return CompiledKernel(prim, arch, module, program, tensors, views=views,
                          safe_values=get_attr(host, "tile.safe_values", {}))


# --- TT-Lang ----------------------------------------------------------------------------------------

@dataclass
class CompiledOperation:
    """One TT-Lang operation call lowered for one device."""

    module: ModuleOp
    program: Program
    dumps: list[tuple[str, str]]        # ("ttl", input IR), then (pass, IR after it)

    def kernel_sources(self) -> dict[str, str]:
        """The C++ of each kernel, by source file name."""
        from tilefold.codegen.cpp import emit_kernel

        return {k.source_file: emit_kernel(k.function) for k in self.program.kernels}


_TTL_CACHE: dict = {}


def compile_ttl(built, arch: Arch, keep_dumps: bool = False, print_ir_after_all: bool = False) -> CompiledOperation:
    """Lower a call's ``ttl`` module (a front end's built operation: its module and capture) and
    build its Program. The result is cached by the IR (with its source locations) and the tensors'
    layouts; the IR after each pass is kept when ``keep_dumps`` and printed when
    ``print_ir_after_all`` (also on a cache hit)."""
    with frozen_gc():       # the front end's objects (its lazy imports, the built module) stay out of collections
        return _compile_ttl(built, arch, keep_dumps or print_ir_after_all, print_ir_after_all)


def _compile_ttl(built, arch: Arch, keep_dumps: bool, print_ir_after_all: bool) -> CompiledOperation:
    key = (print_ir(built.module, debuginfo=True),
           tuple((a.name, tuple(a.tensor.shape), a.tensor.dtype.name, str(a.tensor.layout),
                  str(a.tensor.memory_config())) for a in built.capture.tensors),
           arch.name, arch.board, arch.l1_unreserved_base, keep_dumps, _runtime_key(built.capture))
    hit = _TTL_CACHE.get(key)
    if hit is not None:
        if print_ir_after_all:
            print_dumps(hit.dumps[1:])
        return hit
    module = built.module.clone()
    dumps = [("ttl", print_ir(module))] if keep_dumps else None
    run_pipeline(module, "ttl", arch, print_ir_after_all=print_ir_after_all, dumps=dumps)
    verify_kernel_module(module)
    program = build_ttl_program(module, built, arch)
    compiled = CompiledOperation(module, program, dumps or [])
    _TTL_CACHE[key] = compiled
    return compiled


def _runtime_key(capture) -> tuple:
    """What a call's runtime arguments and semaphores come from besides its IR: the pipe nets'
    routes (a unicast and a multicast net lower to the same IR), the semaphores, the grid, the
    tensors and byte offsets of tensor-backed buffers, and the operation's runtime_resource_factory
    (the function itself: it is kept alive with the entry)."""
    nets = tuple((n.index, tuple(n.routes), tuple(tuple(r) for r in n.pipe_routes))
                 for n in getattr(capture, "pipe_nets", ()))
    semaphores = tuple(s.initial_value for s in getattr(capture, "semaphores", ()))
    backed = tuple((d.index, d.backing.index, d.byte_offset) for d in getattr(capture, "dataflow_buffers", ())
                   if getattr(d, "backing", None) is not None)
    factory = getattr(getattr(capture, "resource_semaphores", None), "factory", None)    # runtime_resource_factory=
    return (nets, semaphores, repr(getattr(capture, "semaphore_rects", None)), getattr(capture, "grid", None), backed,
            factory)


def print_dumps(dumps: list[tuple[str, str]], stream: TextIO | None = None) -> None:
    """Print kept ``(pass, IR)`` dumps as ``--print-ir-after-all`` does."""
    out = stream or sys.stderr
    for name, text in dumps:
        out.write(ir_dump(name, text))


def run_ttl(compiled: CompiledOperation, tensors: dict, arch: Arch, trace=None):
    """Run a compiled call on the simulated device. ``tensors`` are the call's device tensors by
    name (they give their device pages and take the results back). Returns the run's result and
    the input pages it used."""
    from tilefold.sim import Device

    program = compiled.program
    inputs = input_pages(compiled, tensors)
    result = Device(arch).run(program, inputs, trace=trace)
    for name, pages in result.pages.items():
        tensors[name].set_device_pages(pages, program.buffer(name))
    return result, inputs


def input_pages(compiled: CompiledOperation, tensors: dict) -> dict:
    """The device pages of a call's input and in/out buffers, from its device tensors by name."""
    from tilefold.sim import DevicePages

    return {name: DevicePages(tensors[name].device_pages(buf)) for name, buf in compiled.program.buffers.items()
            if buf.role in ("input", "inout")}


def write_ttl_project(compiled: CompiledOperation, folder: Path, inputs, output_pages,
                      not_simulated: str | None = None) -> list[Path]:
    """The TT-Metalium project of a call in ``folder``; its data files are the device pages the run
    used and produced (the simulated result is the golden the host program compares with), and
    ``ir/NN-<pass>.mlir`` the IR after every pass. A call that was not simulated (``output_pages``
    None, ``not_simulated`` saying why: ``"calls C++ from ext.hpp"``) has no golden: its host program
    writes the outputs without checking them."""
    from tilefold.codegen.cpp import Golden, HostData, write_project

    outputs = {} if output_pages is None else {n: Golden(pages.tobytes()) for n, pages in output_pages.items()}
    data = HostData(inputs={n: p.pages.tobytes() for n, p in inputs.items()}, outputs=outputs,
                    not_simulated=not_simulated)
    written = write_project(compiled.program, folder, data)
    ir_dir = folder / "ir"
    ir_dir.mkdir(parents=True, exist_ok=True)
    for i, (name, text) in enumerate(compiled.dumps):
        path = ir_dir / f"{i:02d}-{name}.mlir"
        path.write_text(text)
        written.append(path)
    return written

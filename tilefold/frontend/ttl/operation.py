"""``@ttl.operation(grid=...)``: the operation object, and what one call of it does.

Reads: the decorated function, its tensor arguments (:class:`tilefold.ttnn.Tensor`) and the
session settings (:mod:`.session`). Writes: the tensors the kernels write, and — under
``tilefold compile`` — a TT-Metalium project per call.

A call runs the function's body on the host (:mod:`.capture`), builds each kernel function into
``ttl`` IR (:mod:`.builder`) in one module and hands it to the session's runner
(:func:`.session.runner`, installed by :mod:`tilefold.ttl`), which lowers it with the TT-Lang
pipeline, builds its :class:`~tilefold.program.Program` and runs it on the simulated device. The builder is imported on the first call, so that ``import
tilefold.ttl`` does not load it. A call whose body made the same kernels, buffers and tensor layouts
as an earlier one (:mod:`.fingerprint`) reuses that call's program without building IR again.
With ``TTLANG_COMPILE_ONLY=1`` in the environment a call compiles (its IR and C++) and does not run, and takes torch
tensors (their shape and dtype, in tile layout) as well as device tensors.

An operation called as a statement of another operation's body is inlined there (:mod:`.inlining`).

Errors: a call with something that is not a device tensor (or with a tensor for a dataflow buffer
parameter), a grid that does not fit the device,
pipe nets whose send and receive blocks differ, and every error of the steps above.
"""

from __future__ import annotations

import copy
import inspect
import os
import types
from dataclasses import dataclass, field

from tilefold.arch import NOC_COLUMNS, get_arch, mesh_of
from tilefold.errors import (KernelArgumentError, KernelError, KernelValueError, SourceLocation, TilefoldError,
                             warn_at)
from tilefold.frontend.ttl import session
from tilefold.frontend.ttl.session import compile_only
from tilefold.frontend.ttl.capture import OperationCapture, TensorArgument, capturing
from tilefold.frontend.ttl.dataflow_buffers import DataflowBuffer
from tilefold.frontend.ttl.fingerprint import operation_key
from tilefold.frontend.ttl.grid import board_for_grid, mesh_chips, resolve_grid, with_node_builtins
from tilefold.frontend.ttl.pipes import active_rectangles
from tilefold.frontend.ttl.runtime_resources import resource_semaphores
from tilefold.frontend.ttl.shared_tensors import SharedWrites
from tilefold.frontend.ttl.host_types import conversion_hint
from tilefold.caller import user_location
from tilefold.frozen_gc import frozen_gc

PIPE_NETS_ATTR = "ttl.pipe_nets"
GRID_ATTR = "ttl.grid"
OPTION_ATTRS = {"fp32_dest_acc_en": "ttl.fp32_dest_acc_en", "dst_full_sync_en": "ttl.dst_full_sync_en",
                "math_fidelity": "ttl.math_fidelity", "math_approx_mode": "ttl.math_approx_mode",
                "matmul_full_fp32": "ttl.matmul_full_fp32", "reduce_full_fp32": "ttl.reduce_full_fp32",
                "fpu_binary_ops": "ttl.fpu_binary_ops"}


@dataclass
class BuiltOperation:
    """The front end's output for one call: the ttl module and what the program needs besides it."""

    capture: OperationCapture
    module: ModuleOp
    reads: set[int] = field(default_factory=set)
    writes: set[int] = field(default_factory=set)

    @property
    def text(self) -> str:
        from tilefold.ir.context import print_ir

        return print_ir(self.module)


def _captured_at_decoration(function):
    """``function`` with the operations its closure names bound now, as TT-Lang binds the callees
    of an operation when it is decorated: operations made in a loop, each calling the loop's
    previous one through a loop variable, keep the one they were made with. Other names of the
    closure (values a body reads) are read at each call."""
    if not function.__closure__:
        return function
    cells, frozen = [], False
    for cell in function.__closure__:
        try:
            value = cell.cell_contents
        except ValueError:          # not bound yet
            value = None
        if getattr(value, "is_ttl_operation", False) is True:
            cells.append(types.CellType(value))
            frozen = True
        else:
            cells.append(cell)
    if not frozen:
        return function
    bound = types.FunctionType(function.__code__, function.__globals__, function.__name__, function.__defaults__,
                               tuple(cells))
    bound.__kwdefaults__, bound.__qualname__ = function.__kwdefaults__, function.__qualname__
    bound.__dict__.update(function.__dict__)
    bound.__wrapped__ = function
    return bound


class Operation:
    """A TT-Lang operation: call it with device tensors (inputs and outputs)."""

    is_ttl_operation = True         # how kernel builders recognize one without importing this module
    device_domain = None            # the ttl.DeviceDomain of @ttl.operation(device_domain=...)
    placements = None               # mesh_program_placements=: the devices (indices) whose nodes run kernels
    resource_factory = None         # runtime_resource_factory=: semaphores the host program adds
    _mesh_chip = None               # the chip a call of a grid with mesh axes runs now (_call)
    dispatch = None                 # dispatcher=True: its body's schedule (tilefold.frontend.ttl.dispatch)
    dispatch_contracts: tuple = ()  # dispatch_arguments=: one ttl.DispatchArgument per parameter
    grid_declared = True            # grid= was given (a dispatcher's targets must give it)

    def __init__(self, function, grid, options: dict, location: SourceLocation | None):
        self.function = _captured_at_decoration(function)
        self.grid = grid
        self.options = options
        self.location = location
        self.name = function.__name__.lstrip("_") or "operation"
        self.__name__ = function.__name__
        self.__doc__ = function.__doc__
        self._cache: dict = {}
        self._warned: dict = {}         # the warnings registry of unused buffers: each warned once

    # -- dispatchers (tilefold.frontend.ttl.dispatch) ----------------------------------------

    @property
    def dispatcher(self) -> bool:
        return self.dispatch is not None

    @property
    def _ttl_operation_kind(self) -> str:
        return "dispatcher" if self.dispatcher else "unified"

    @property
    def operation_identity(self) -> str:
        """A name of this operation that stays the same across runs: module, name, file and line."""
        code = self.function.__code__
        return f"{self.function.__module__}.{self.function.__qualname__}@{code.co_filename}:{code.co_firstlineno}"

    @property
    def dispatcher_ast(self):
        """A dispatcher's body with its static ``if`` statements resolved (a copy); None otherwise."""
        return copy.deepcopy(self.dispatch.tree) if self.dispatcher else None

    @property
    def dispatch_targets(self) -> types.MappingProxyType:
        """identity -> operation of each operation a dispatcher calls, in order (read-only)."""
        return types.MappingProxyType(dict(self.dispatch.targets) if self.dispatcher else {})

    def _dispatch_body(self):
        if not self.dispatcher:
            raise KernelValueError(f"{self.__name__!r} is not a dispatcher; dispatch IR is made of "
                                   "@ttl.operation(dispatcher=True) operations", user_location())
        return self.dispatch

    def emit_dispatch_ir(self, *args, **kwargs):
        """A dispatcher's schedule for tensors like these, as IR (:mod:`tilefold.ir.dispatch`)."""
        return self._dispatch_body().emit(args, kwargs)

    def resolve_dispatch_ir(self, *args, **kwargs):
        """:meth:`emit_dispatch_ir` with the argument contracts checked, marked resolved."""
        return self._dispatch_body().resolve(args, kwargs)

    def resolve_dispatch(self, *args, **kwargs):
        """The resolved schedule as a ``ttl.ResolvedDispatcher``."""
        from tilefold.frontend.ttl.dispatch import ResolvedDispatcher

        return ResolvedDispatcher(self.resolve_dispatch_ir(*args, **kwargs))

    # -- the call ---------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        from tilefold.frontend.ttl.inlining import show_user_names

        if self.dispatcher:
            raise KernelValueError(f"dispatcher {self.__name__!r} is control-only: it schedules the operations it "
                                   "calls and does not run itself; call them, or read its schedule with "
                                   f"{self.__name__}.resolve_dispatch(...)", user_location())
        with frozen_gc():         # the objects alive before the call stay out of its cycle collections
            try:
                return self._call(args, kwargs)
            except TilefoldError as err:
                show_user_names(err)
                raise

    def _call(self, args, kwargs):
        _warn_unsupported_environment()
        if "options" in kwargs and "options" not in inspect.signature(self.function).parameters:
            # options given to one call: honoured for that call (over the decorator's)
            honoured = compiler_options(kwargs.pop("options"), user_location())
            saved = self.options
            self.options = {**saved, **honoured}
            try:
                return self._call_with_options(args, kwargs)
            finally:
                self.options = saved
        return self._call_with_options(args, kwargs)

    def _call_with_options(self, args, kwargs):
        from tilefold.frontend.ttl.mesh import MeshTensor

        if compile_only():       # a torch tensor's shape and dtype are all a compile reads
            args = tuple(_as_tile_tensor(a) for a in args)
            kwargs = {k: _as_tile_tensor(v) for k, v in kwargs.items()}
        meshes = {id(v.mesh): v.mesh for v in (*args, *kwargs.values()) if isinstance(v, MeshTensor)}
        if self.device_domain is not None:
            return self._call_on_domain(args, kwargs, list(meshes.values()))
        if not meshes:
            return self._call_on_one_device(args, kwargs)
        if len(meshes) > 1:
            raise KernelError(f"{self.function.__name__}(): the tensors are spread over different meshes; give one "
                              "mesh device to all of them", user_location())
        if not next(iter(meshes.values())).is_open:
            raise KernelError(f"{self.function.__name__}(): the tensors' mesh device was closed (ttnn.close_device) "
                              "before this call; close it after its last operation", user_location())
        mesh = next(iter(meshes.values()))
        mesh_axes = self._has_mesh_axes(mesh, (*args, *kwargs.values()))

        def piece(v, chip):
            return v.pieces[chip] if isinstance(v, MeshTensor) else v

        # one simulated device per chip, each on its own pieces; a tensor that is not a mesh tensor is
        # one buffer every chip reads. A grid with mesh axes runs on chip k the nodes whose leading
        # coordinates are its mesh position, and its kernels index each mesh tensor as the whole
        # (its piece's origin subtracted), as TT-Lang's programs do; an index outside the chip's
        # piece is an error at the copy.
        bound = inspect.signature(self.function).bind_partial(*args, **kwargs).arguments
        shared = frozenset(name for name, value in bound.items() if _is_device_tensor(value))
        # with mesh axes, a tensor that is not a mesh tensor is one tensor of the whole mesh, which
        # each chip may write its own pages of (merged after the last chip)
        writes = SharedWrites(self.function.__name__) if mesh_axes else None
        location = user_location()
        results = []
        for chip in range(mesh.shape.num_devices):
            self._mesh_chip = chip if mesh_axes else None
            try:
                results.append(self._call_on_one_device(tuple(piece(a, chip) for a in args),
                                                        {k: piece(v, chip) for k, v in kwargs.items()},
                                                        report=False, shared=shared, shared_writes=writes))
            except BaseException:
                if writes is not None:
                    writes.restore()
                raise
            finally:
                self._mesh_chip = None
        if any(r is None for r in results):
            return None
        if writes is not None:
            writes.merge(location)
        self._report_mesh(mesh, results)
        return None

    def _has_mesh_axes(self, mesh, values) -> bool:
        """Whether the grid's leading dimensions are the axes of ``mesh`` (TT-Lang: a grid's last two
        dimensions are each device's nodes, any before them device-mesh axes) and every mesh tensor
        knows where its pieces lie in the whole."""
        from tilefold.frontend.ttl.mesh import MeshTensor

        dims = self.grid if isinstance(self.grid, tuple) else ()
        if len(dims) < 3 or mesh_chips(dims) != mesh.shape.num_devices:
            return False
        if len(dims) == 4 and tuple(dims[:2]) != tuple(mesh.shape):
            return False
        return all(getattr(p, "mesh_origin", None) is not None for v in values if isinstance(v, MeshTensor)
                   for p in v.pieces)

    def _call_on_domain(self, args, kwargs, meshes):
        """A call of an operation over a device domain: one simulated device of the domain's chips,
        each running the grid on its own pieces of the mesh tensors."""
        from tilefold.frontend.ttl.mesh import MeshStep, num_available_devices, record_step

        domain = self.device_domain
        location = user_location()
        if len(meshes) > 1:
            raise KernelError(f"{self.function.__name__}(): the tensors are spread over different meshes; give one "
                              "mesh device to all of them", location)
        available = num_available_devices()
        if domain.size > available and not compile_only():     # a compile runs nothing: any number of chips
            raise KernelError(f"{self.function.__name__}() runs over {domain!r}, {domain.size} devices, but "
                              f"{available} chip{'s are' if available != 1 else ' is'} simulated; run with "
                              f"--num-devices {domain.size} (or call ttnn.set_num_devices({domain.size}))", location)
        if meshes:
            shape = tuple(meshes[0].shape)
            rank = len(domain.shape)
            fits = (shape == domain.shape if rank == 2 else shape in ((1, domain.size), (domain.size, 1)) if rank == 1
                    else meshes[0].shape.num_devices == domain.size)
            if not fits:
                raise KernelError(f"{self.function.__name__}(): the tensors are on a {shape[0]}x{shape[1]} mesh, and "
                                  f"the operation runs over {domain!r}; open a mesh of the domain's extents "
                                  f"(ttnn.open_mesh_device(ttnn.MeshShape({domain.shape!r})))", location)
        result = self._call_on_one_device(args, kwargs)
        if result is not None:
            record_step(MeshStep("operation", self.name, (result.perf.seconds,)))
        return None

    def _report_mesh(self, mesh_device, results) -> None:
        """Record the call as one step of the multi-chip run and print one summary for all chips."""
        from tilefold.frontend.ttl.mesh import MeshStep, record_step

        seconds = tuple(r.perf.seconds for r in results)
        record_step(MeshStep("operation", self.name, seconds))
        if not session.settings().report:
            return
        slowest = max(range(len(results)), key=lambda i: seconds[i])
        rows, cols = mesh_device.shape
        perf = results[slowest].perf
        print(f"ttl.operation {self.name} on a {rows}x{cols} mesh of {perf.arch_name} chips, simulated "
              f"(one device per chip, all chips at once):")
        print(f"  modeled time: {seconds[slowest] * 1e6:,.1f} us (the slowest chip, {slowest}; fastest "
              f"{min(seconds) * 1e6:,.1f} us)")
        print(f"  chip {slowest}: " + perf.summary().replace("\n", "\n  "))

    def _call_on_one_device(self, args, kwargs, report: bool = True, shared: frozenset = frozenset(),
                            shared_writes: SharedWrites | None = None):
        """Build (or take from the cache), compile and run one call on one device. ``shared``: the
        tensors one call per chip of a mesh reads as one buffer, which its kernels must not write
        unless ``shared_writes`` merges the chips' pages (a grid with mesh axes)."""
        runner = session.runner()
        capture = self.capture(args, kwargs)
        if not capture.kernels:         # a body of setup only (TT-Lang allows it): nothing runs on the device
            session.settings().not_run += 1
            if report and session.settings().report:
                print(f"ttl.operation {self.name} defines no kernel function: nothing runs on the device")
            return None
        key, pinned = operation_key(capture, self.options)
        if key is not None:
            key = (key, compile_only())     # a compile-only build accepts kernels a run rejects
        if key is not None and key in self._cache:
            compiled, _ = self._cache[key]
        else:
            built = self.build_capture(capture)
            with frozen_gc():           # what building made (the front end's lazy imports) stays out of collections
                compiled = runner.compile_built(built, capture.arch)
            if key is not None:
                self._cache[key] = (compiled, pinned)
        written = sorted(name for name in shared if compiled.program.buffers.get(name) is not None
                         and compiled.program.buffers[name].role == "inout")
        if written and shared_writes is None:
            raise KernelError(f"{self.function.__name__}() runs on each chip of the mesh of its mesh tensors and "
                              f"writes tensor {written[0]!r}, which is one device tensor that every chip would "
                              "write; give a mesh tensor (ttnn.from_torch(..., device=mesh_device, mesh_mapper=...)) "
                              "so that each chip writes its own piece", user_location())
        if compile_only():
            session.settings().not_run += 1
            runner.emit_kernels(compiled)       # the C++ is built too (its errors at the user's lines)
            if report and session.settings().report:
                print(f"ttl.operation {self.name} compiled; not run (TTLANG_COMPILE_ONLY is set)")
            return None
        if session.preparing():           # SRAMStorage.prepare_operation: compiled for later calls
            return None
        if written:
            shared_writes.before_run({a.name: a.tensor for a in capture.tensors}, compiled.program.buffers, written)
        result = runner.run_operation(self, capture, compiled, report)
        if written:
            shared_writes.after_run(self._mesh_chip)
        return result

    def tensor_arguments(self, args, kwargs) -> tuple[list[TensorArgument], dict]:
        """The device tensors among the call's arguments, and the compile-time constants (numbers,
        strings, tuples of them ...) the body and kernels read as Python values."""
        try:
            bound = inspect.signature(self.function).bind(*args, **kwargs)
        except TypeError as exc:
            raise KernelError(f"{self.function.__name__}(): {exc}", user_location()) from None
        out, constants = [], {}
        for name, value in bound.arguments.items():
            if (_is_device_tensor(value) or _is_constant(value)) and name in self.buffer_parameters():
                given = "a tensor" if _is_device_tensor(value) else repr(value)[:40]
                raise KernelError(f"{self.function.__name__}(): parameter {name!r} is a dataflow buffer (ttl.DFB), "
                                  f"not {given}; call this operation from another operation's body with dataflow "
                                  "buffers (it is inlined there)", user_location())
            if _is_device_tensor(value):
                storage = getattr(value, "sram_storage", None)
                if storage is not None and not session.preparing():
                    storage.check_usable(name, user_location())
                out.append(TensorArgument(len(out), name, value))
            elif _is_constant(value):
                constants[name] = value
            elif isinstance(value, DataflowBuffer):
                raise KernelError(f"{self.function.__name__}(): argument {name!r} is a dataflow buffer; an operation "
                                  "takes dataflow buffers only as a statement of another operation's body without "
                                  "kernel functions, where it is inlined", user_location())
            else:
                kind = conversion_hint(value)
                kind = f"{kind}; " if kind else ""
                raise KernelError(f"{self.function.__name__}(): argument {name!r} is {type(value).__name__}; {kind}"
                                  "a TT-Lang operation takes device tensors (ttnn.from_torch / from_numpy) and "
                                  "compile-time constants (numbers, strings, tuples and lists of them)", user_location())
        self._check_devices(out)
        return out, constants

    def _check_devices(self, tensors: list[TensorArgument]) -> None:
        """The tensors' devices: open, and one device (a tensor without one is a host tensor)."""
        placed = []
        for t in tensors:
            device = t.tensor.device() if callable(getattr(t.tensor, "device", None)) else None
            if device is None:
                continue
            if getattr(device, "is_open", True) is False:
                raise KernelError(f"{self.function.__name__}(): argument {t.name!r} is on a device that was closed "
                                  "(ttnn.close_device) before this call; close the device after its last "
                                  "operation", user_location())
            placed.append((t.name, getattr(device, "device_id", None)))
        ids = {device_id for _, device_id in placed}
        if len(ids) > 1:
            where = ", ".join(f"{name!r} on device {device_id}" for name, device_id in placed)
            raise KernelError(f"{self.function.__name__}(): the tensors are on different devices ({where}); an "
                              "operation runs on one device: make them all on it", user_location())

    def buffer_parameters(self) -> set[str]:
        """The parameters that are dataflow buffers (:func:`.inlining.buffer_parameters`)."""
        if not hasattr(self, "_buffer_parameters"):
            from tilefold.frontend.ttl.inlining import buffer_parameters

            self._buffer_parameters = buffer_parameters(self.function)
        return self._buffer_parameters

    def capture(self, args, kwargs) -> OperationCapture:
        """Run the body: collect its dataflow buffers, pipe nets and kernel functions."""
        chosen = session.settings().arch
        arch = board_for_grid(self.grid, get_arch(chosen), chosen is not None, self.location)
        grid, dims = resolve_grid(self.grid, arch, self.location)
        domain = self.device_domain
        pieces = {}
        if domain is not None:
            args, kwargs, pieces = self._device_pieces(args, kwargs)
        tensors, constants = self.tensor_arguments(args, kwargs)
        if domain is not None:
            if grid[0] > arch.grid[0]:
                raise KernelError(f"@ttl.operation(grid={self.grid!r}, device_domain={domain!r}): the grid is each "
                                  f"device's, and must fit one chip ({arch.grid[0]}x{arch.grid[1]} on {arch.board})",
                                  self.location)
            if domain.size * grid[0] + 1 >= NOC_COLUMNS:
                raise KernelError(f"@ttl.operation(grid={self.grid!r}, device_domain={domain!r}): the {domain.size} "
                                  f"devices' grids take {domain.size * grid[0]} node columns together, and the "
                                  f"simulated mesh holds at most {NOC_COLUMNS - 2}; give each device fewer columns",
                                  self.location)
            arch = mesh_of(arch, domain.size, grid)
            capture = OperationCapture(self.name, (domain.size * grid[0], grid[1]), arch, tensors, self.location,
                                       grid_dims=dims, device_domain=domain, device_pieces=pieces)
        elif self._mesh_chip is not None:     # one chip of a grid with mesh axes: its own nodes
            capture = OperationCapture(self.name, (dims[-2], dims[-1]), arch, tensors, self.location, grid_dims=dims,
                                       mesh_chip=self._mesh_chip)
        else:
            if grid[0] > arch.grid[0]:          # an n-D grid over several chips: one device for the mesh
                arch = mesh_of(arch, mesh_chips(dims), (dims[-2], dims[-1]))
            capture = OperationCapture(self.name, grid, arch, tensors, self.location, grid_dims=dims)
        capture.constants = constants
        capture.placements = self.placements
        if self.resource_factory is not None:
            capture.resource_semaphores = resource_semaphores(
                self.resource_factory, self.name, tuple(t.tensor for t in tensors), grid, self.location,
                chips=domain.size if domain is not None else 1)
        with capturing(capture):
            result = with_node_builtins(self._body(), grid=tuple(dims))(*args, **kwargs)
        if result is not None:
            raise KernelError(f"operation {self.function.__name__} returns {type(result).__name__}; an operation "
                              "writes its output tensors and returns None", self.location)
        _add_body_tensors(capture)
        if capture.mesh_chip is not None and capture.pipe_nets:
            raise KernelError(f"@ttl.operation(grid={self.grid!r}) called with mesh tensors runs one chip's nodes on "
                              "each chip; pipes between the chips of such a grid are not supported by tilefold yet "
                              "(an operation over a ttl.DeviceDomain sends between devices)", self.location)
        return capture

    def _device_pieces(self, args, kwargs):
        """The call's arguments with each mesh tensor replaced by its first piece (what the body and
        kernels see: one device's tensor), and the pieces of each by parameter name."""
        from tilefold.frontend.ttl.mesh import MeshTensor

        try:
            bound = inspect.signature(self.function).bind(*args, **kwargs)
        except TypeError as exc:
            raise KernelError(f"{self.function.__name__}(): {exc}", user_location()) from None
        pieces = {}
        for name, value in bound.arguments.items():
            if compile_only() and _is_device_tensor(value):     # nothing runs: a tensor stands for each device's
                pieces[name] = [value] * self.device_domain.size
            if not isinstance(value, MeshTensor):
                continue
            first = value.pieces[0]
            for p in value.pieces[1:]:
                if tuple(p.shape) != tuple(first.shape) or p.dtype != first.dtype:
                    raise KernelError(f"{self.function.__name__}(): the pieces of mesh tensor {name!r} differ in shape "
                                      f"or data type ({tuple(first.shape)} and {tuple(p.shape)}); an operation over "
                                      "a device domain needs equal pieces", user_location())
            pieces[name] = list(value.pieces)
            bound.arguments[name] = first
        return bound.args, bound.kwargs, pieces

    def _body(self):
        """The function to run: a body without kernel functions is split into kernels once (again
        when a name it calls as an operation is rebound; :mod:`.implicit_kernels`), and reads its
        module's names as they are at each call."""
        from tilefold.frontend.ttl import implicit_kernels

        if not hasattr(self, "_split") or self._split is not None and not self._split[1].unchanged():
            from tilefold.frontend.source import FunctionSource
            from tilefold.frontend.ttl.inlining import Inliner

            source = FunctionSource.of(self.function, "operation")
            inliner = Inliner(self.function, source, Operation)
            tree = inliner.expand()
            implicit_kernels.warn_undecorated_kernels(tree, source.file)
            if implicit_kernels.needs_split(tree):
                self._split = (implicit_kernels.split(self.function, source, tree, inliner.values()), inliner)
            elif inliner.inlined and implicit_kernels.defines_kernels(tree):
                raise KernelError(f"operation {self.function.__name__} calls another operation, and one of their bodies "
                                  "defines @ttl.compute() / @ttl.datamovement() functions; an operation is inlined only "
                                  "into a body without kernel functions, and only when its own body has none",
                                  inliner.first_call)
            elif inliner.inlined:
                raise KernelError(f"operation {self.function.__name__} calls another operation, but neither body has "
                                  "anything for the device to do (no dataflow buffer, ttl.copy or block math); give the "
                                  "operation it calls a body that reads or writes its tensors", inliner.first_call)
            else:
                self._split = None
        if self._split is None:
            return self.function
        body, inliner = self._split
        return implicit_kernels.rebind(body, self.function, inliner.values())

    def build(self, args, kwargs) -> BuiltOperation:
        """Run the body and build every kernel into one ttl module."""
        return self.build_capture(self.capture(args, kwargs))

    def build_capture(self, capture: OperationCapture) -> BuiltOperation:
        """Build the kernels of a call's body into one ttl module."""
        if not capture.kernels:
            raise KernelError(f"operation {self.function.__name__} defines no kernel function; add @ttl.compute() "
                              "and @ttl.datamovement() functions to its body", self.location)
        from tilefold.frontend.ttl.builder import build_kernel
        from tilefold.frontend.ttl.dfb_boundaries import POINT_ATTR, keep_drained_checks, restored_buffers
        from tilefold.frontend.ttl.meeting_check import check_meeting_counts
        from tilefold.frontend.ttl.protocol_check import check_block_counts
        from tilefold.ir.verify import verify_ops
        from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i32

        module = ModuleOp([])
        built = BuiltOperation(capture, module)
        pipe_uses = []
        unread = []
        releases = []
        in_cpp = set()                  # buffers whose blocks called C++ functions move themselves
        with capturing(capture):
            for definition in capture.kernels:
                kernel, builder = build_kernel(definition, capture, self.options)
                self._apply_options(kernel)
                module.body.block.add_op(kernel)
                built.reads |= builder.read_tensors
                built.writes |= builder.written_tensors
                pipe_uses += builder.pipe_uses
                unread += builder.unread_pushes
                releases += builder.releases
                in_cpp |= builder.extern_effects
        grid = capture.grid
        restored = restored_buffers(module)
        user_buffers = [d for d in capture.dataflow_buffers if not d.hidden and d.index not in in_cpp]
        active = active_rectangles(capture.pipe_nets, grid) if capture.device_domain is None else None
        nodes = [(x, y) for x in range(grid[0]) for y in range(grid[1])
                 if active is None or any(x0 <= x <= x1 and y0 <= y <= y1 for x0, y0, x1, y1 in active)]
        check_meeting_counts(module, {d.index: d.name for d in user_buffers},
                             {d.index: d.block_count for d in user_buffers}, restored, POINT_ATTR, nodes)
        keep_drained_checks(module, restored)
        _mailbox_nets(capture, module, pipe_uses)
        _deepen_landing_buffers(capture, module, pipe_uses)
        allocate_buffers(capture, module, self._warned, self.options.get("reuse_user_dfbs") is not False)
        module.attributes[GRID_ATTR] = ArrayAttr([IntegerAttr(grid[0], i32), IntegerAttr(grid[1], i32)])
        module.attributes[PIPE_NETS_ATTR] = _pipe_net_table(capture, pipe_uses)
        from tilefold.ir.ttl_metadata import ACTIVE_NODES_ATTR, STAGING_BUFFERS_ATTR

        if active is not None:
            module.attributes[ACTIVE_NODES_ATTR] = ArrayAttr([ArrayAttr([IntegerAttr(v, i32) for v in rect])
                                                              for rect in active])
            idle = grid[0] * grid[1] - sum((x1 - x0 + 1) * (y1 - y0 + 1) for x0, y0, x1, y1 in active)
            warn_at(f"{idle} of the {grid[0] * grid[1]} nodes of operation {capture.name!r} "
                    f"{'is' if idle == 1 else 'are'} neither a source "
                    "nor a destination of any of its pipes, so they run none of its kernels (TT-Lang's PipeNet active "
                    "set)", self.location, registry=self._warned)
        verify_ops(module)
        check_block_counts(module, {d.index: d.name for d in capture.dataflow_buffers}, in_cpp)
        pushes, waited = _pushes_and_waited_buffers(module)
        waited |= in_cpp
        check_tokens_unread(releases)
        untouched = [t for t in capture.tensors if t.index not in built.reads | built.writes]
        _check_results_used(waited, unread, writes_a_tensor=bool(built.writes), reads_a_tensor=bool(built.reads),
                            untouched_tensor=bool(untouched))
        staging = _drop_unconsumed_pushes(pushes, waited | {d.index for d in capture.dataflow_buffers
                                                            if d.backing is not None})
        if staging:
            module.attributes[STAGING_BUFFERS_ATTR] = ArrayAttr([IntegerAttr(i, i32) for i in sorted(staging)])
        return built

    def _apply_options(self, kernel) -> None:
        for key, attr in OPTION_ATTRS.items():
            value = self.options.get(key)
            if value is None:
                continue
            from xdsl.dialects.builtin import BoolAttr, StringAttr

            kernel.attributes[attr] = BoolAttr.from_bool(bool(value)) if isinstance(value, bool) else StringAttr(str(value))

    def __repr__(self) -> str:
        return f"<ttl.operation {self.function.__name__} grid={self.grid!r}>"


_MISSING = object()


def _is_constant(value) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (tuple, list)):
        return all(_is_constant(v) for v in value)
    if isinstance(value, dict):
        return all(_is_constant(k) and _is_constant(v) for k, v in value.items())
    return isinstance(value, slice) or type(value).__module__ in ("tilefold.ttnn", "ttnn") and not callable(value)


def _names_read(fn):
    """``(name, value)`` of every closure variable and global a kernel function (or a function
    nested in it) reads."""
    code = fn.__code__
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            yield name, cell.cell_contents
        except ValueError:          # a cell not yet filled
            continue
    codes = [code]
    while codes:
        c = codes.pop()
        codes += [k for k in c.co_consts if inspect.iscode(k)]
        for name in c.co_names:
            if name in fn.__globals__:
                yield name, fn.__globals__[name]


def _add_body_tensors(capture: OperationCapture) -> None:
    """Device tensors the kernel functions read that are not arguments of the call — made in the
    operation's body (``ttnn.repeat`` of an argument, ``ttnn.from_torch`` ...) or at module level —
    become further inputs of the operation, after its arguments."""
    known = {id(a.tensor) for a in capture.tensors}
    for definition in capture.kernels:
        for name, value in _names_read(definition.function):
            if id(value) not in known and _is_device_tensor(value):
                known.add(id(value))
                capture.tensors.append(TensorArgument(len(capture.tensors), name, value))


def _as_tile_tensor(value):
    """A torch tensor as a device tensor of its shape and dtype in tile layout; anything else as it is."""
    if type(value).__module__.startswith("torch") and hasattr(value, "shape") and hasattr(value, "dtype"):
        return session.tile_tensor(value)
    return value


def _is_device_tensor(value) -> bool:
    # getattr_static: looking must not evaluate a property (host_values reads the device's pages)
    return all(inspect.getattr_static(value, a, _MISSING) is not _MISSING
               for a in ("shape", "dtype", "layout", "host_values"))


def allocate_buffers(capture: OperationCapture, module: ModuleOp, registry: dict | None = None,
                     reuse: bool = True) -> None:
    """Give circular buffers only to the dataflow buffers the built kernels use (a ``ttl.bind_cb``
    or a converting copy's staging buffer; the compiler's own buffers are always used), numbered
    in the order they were made; warn at the line of each buffer no kernel uses. When they are more
    than a node has circular buffers, or need more L1 than it has, buffers of disjoint lifetimes
    share one (``reuse``, :mod:`.dfb_reuse`); still more is an error at the line of the first one
    past the limit (too much L1, when the program is built)."""
    from xdsl.dialects.builtin import IntegerAttr, i32

    from tilefold.frontend.ttl.dfb_reuse import shared_circular_buffers
    from tilefold.ir import ttl

    binds = [op for op in module.walk() if isinstance(op, ttl.BindCBOp)]
    staged = [op for op in module.walk() if ttl.STAGING_CB_ATTR in op.attributes]
    staged_indices = {op.attributes[ttl.STAGING_CB_ATTR].value.data for op in staged}
    used = {op.index for op in binds} | staged_indices
    kept = [d for d in capture.dataflow_buffers
            if d.hidden and not getattr(d, "dropped", False) or d.index in used]
    limit = capture.arch.max_circular_buffers
    shared: dict[int, int] = {}
    arch = capture.arch
    l1 = sum(_l1_bytes(d, arch) for d in kept if d.backing is None)
    if (len(kept) > limit or l1 > arch.l1_free) and reuse:
        shared = shared_circular_buffers(module, {d.index for d in kept if not d.hidden and d.backing is None
                                                  and d.index not in staged_indices})
    owners = [d for d in kept if shared.get(d.index, d.index) == d.index]
    if len(owners) > limit:
        extra = owners[limit]
        if extra.hidden:
            purpose = f" {extra.purpose}" if extra.purpose else ""
            raise KernelError(f"{extra.name} needs a dataflow buffer of its own{purpose}, but the operation's kernels "
                              f"already use all {limit}; use fewer buffers", extra.location)
        raise KernelError(f"this is dataflow buffer number {limit + 1} of those the kernels of operation {capture.name!r} use, "
                          f"but a node has at most {limit} (circular buffers c_0-c_{limit - 1}); reuse buffers or "
                          "make fewer", extra.location)
    for d in capture.dataflow_buffers:
        if d not in kept and d.location is not None and not getattr(d, "dropped", False):
            warn_at(f"dfb {d.name} is declared but no kernel uses it; it is not allocated", d.location,
                    registry=registry)
    arena = _arena_offsets(capture, module, owners, staged_indices, reuse)
    renumbered = {d.index: i for i, d in enumerate(owners)}
    renumbered.update({d.index: renumbered[shared[d.index]] for d in kept if d.index not in renumbered})
    for d in kept:
        d.arena_offset = arena.get(shared.get(d.index, d.index))
        d.index = renumbered[d.index]
    capture.dataflow_buffers[:] = kept
    for op in binds:
        op.properties["cb_index"] = IntegerAttr(renumbered[op.index], i32)
    for op in staged:
        op.attributes[ttl.STAGING_CB_ATTR] = IntegerAttr(renumbered[op.attributes[ttl.STAGING_CB_ATTR].value.data], i32)


def _l1_bytes(dfb, arch) -> int:
    """The L1 a buffer's circular buffer takes (its bytes, aligned)."""
    return -(-dfb.total_size // arch.l1_alignment) * arch.l1_alignment


def _arena_offsets(capture: OperationCapture, module: ModuleOp, owners: list, staged: set[int],
                   reuse: bool) -> dict[int, int]:
    """The offsets in the node's L1 arena (by buffer index before renumbering) of the buffers that
    take turns there — allocation groups always, buffers of disjoint lifetimes when the circular
    buffers would not fit L1 otherwise (:func:`.dfb_reuse.l1_arena`); sets ``capture.l1_arena``."""
    from tilefold.frontend.ttl.dfb_reuse import l1_arena

    capture.l1_arena = 0
    arch = capture.arch
    own = [d for d in owners if not d.hidden and d.backing is None and d.index not in staged]
    grouped = any(d.allocation_group is not None for d in own)
    l1 = sum(_l1_bytes(d, arch) for d in owners if d.backing is None)
    if not reuse or not (grouped or l1 > arch.l1_free):
        return {}
    sizes = [(d.index, _l1_bytes(d, arch), d.allocation_group) for d in own]
    offsets, capture.l1_arena = l1_arena(module, sizes, l1 > arch.l1_free, arch.l1_alignment)
    return offsets


def _pushes_and_waited_buffers(module: ModuleOp) -> tuple[list, set[int]]:
    """The module's ``ttl.cb_push`` ops, and the indices of the buffers some kernel waits on or pops."""
    from tilefold.ir import ttl

    pushes, waited = [], set()
    for op in module.walk():
        if isinstance(op, ttl.CBPushOp):
            pushes.append(op)
        elif isinstance(op, (ttl.CBWaitOp, ttl.CBPopOp)):
            waited.add(op.cb.owner.index)
    return pushes, waited


def _check_results_used(waited: set[int], unread, writes_a_tensor: bool = True, reads_a_tensor: bool = True,
                        untouched_tensor: bool = True) -> None:
    """A block written and pushed without being read into a buffer no kernel waits on (``waited``
    holds those some kernel does): the pushed data is dropped (a staging block is read before it is
    pushed; a tensor-backed buffer's blocks are the tensor's pages). When a tensor of the operation
    is touched by no kernel, that is most likely a writer kernel that lost its ``wait()``: an error
    at the line that wrote the block. Otherwise (every tensor is read or written: a dead store, a
    load nothing uses) a warning there, as TT-Lang runs such programs; so too for tiles loaded by an
    operation that writes no tensor and results of one that touches no tensor at all (a kernel timed
    on its own). A result is never dropped in silence."""
    for dfb, name, where, computed in unread:
        if dfb.index in waited or dfb.backing is not None or dfb.hidden:
            continue
        message = (f"what is written into {name} here is never used: {name} is pushed into {dfb.name}, which no "
                   f"kernel waits on, so the data is dropped; wait on {dfb.name} in the kernel that uses it "
                   f"(with {dfb.name}.wait() as blk: ...), e.g. to copy it to a tensor")
        if untouched_tensor and (writes_a_tensor or (computed and reads_a_tensor)):
            raise KernelError(message + " (a tensor of the operation is read or written by no kernel)", where)
        if not writes_a_tensor:
            message += " (the operation writes no tensor)"
        warn_at(message, where)
        return


def _refuse_returned_values(function) -> None:
    """An operation's body that returns a value is refused where it is decorated, as TT-Lang does
    (a ``return`` in the body itself, not in its kernel functions, of something that is neither
    None nor a call — ``return ttl.Program(...)(x, y)`` of the pre-1.0 API returns None); the
    value a body returns is checked again when it is called."""
    import ast

    from tilefold.frontend.source import FunctionSource

    try:
        source = FunctionSource.of(function, "operation")
    except KernelError:
        return
    stack = list(source.tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return) and node.value is not None and not isinstance(node.value, ast.Call) and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            raise KernelError(f"operation {function.__name__} returns {ast.unparse(node.value)[:40]}; an operation "
                              "writes its output tensors and returns None", source.location(node))
        stack.extend(ast.iter_child_nodes(node))


def check_tokens_unread(releases: list) -> None:
    """Blocks pushed with nothing written into them are tokens (TT-Lang's "done" signals): their
    consumer may wait on them and pop them, not read them. ``releases``: the kernels' blocks
    leaving their FIFOs, in order (``KernelBuilder.releases``). Where a buffer's blocks are all
    acquired outside loops and branches, the i-th wait gets the i-th push; otherwise the first
    read of a block is taken to get the first token. A read of a buffer whose every push is a
    token sees only what the pages held before (zeros in the simulator, whatever was in L1 on a
    device): an error at the read (a warning with TTLANG_COMPILE_ONLY); a read of a buffer also
    pushed written, a warning there."""
    from tilefold.frontend.ttl.session import compile_only_or_raise

    ends: dict[int, tuple[list, list]] = {}
    for release in releases:
        ends.setdefault(id(release.dfb), ([], []))[not release.pushed].append(release)
    for pushed, popped in ends.values():
        tokens = [p for p in pushed if not p.filled]
        if not tokens:
            continue
        if all(r.level == 0 for r in pushed + popped):
            pairs = [(wait, push) for wait, push in zip(popped, pushed) if wait.filled and not push.filled]
        else:
            pairs = list(zip([w for w in popped if w.filled][:1], tokens[:1]))
        for read, token in pairs[:1]:
            message = (f"{read.name} is read here, but {token.name} was pushed into {read.dfb.name} at {token.where} "
                       "with nothing written into it, so this reads whatever its pages held before; store() or copy "
                       f"into {token.name} before it is pushed, or only wait on and pop blocks used as tokens")
            if len(tokens) < len(pushed):
                warn_at(message, read.where)
            else:
                compile_only_or_raise(message, read.where)


def _drop_unconsumed_pushes(pushes: list, kept: set[int]) -> set[int]:
    """A buffer nothing waits on is a staging area (reserve, copy in, copy out): its blocks are never
    handed to a consumer, so the reserves reuse the same space instead of pushing blocks that would
    stay in the buffer — when the blocks pushed on any node fit the buffer (every ``if`` counted as
    taken). Otherwise the pushes stay and the run stops at the reserve that would wait forever, as
    on the device; those buffers are returned (their pages left at the end are staging blocks, no
    news). ``kept``: the buffers whose pushes stay (waited on, or tensor-backed: their blocks are
    the tensor's pages)."""
    from tilefold.frontend.ttl.protocol_check import block_count_of, executions

    by_buffer: dict[int, list] = {}
    for op in pushes:
        if op.cb.owner.index not in kept:
            by_buffer.setdefault(op.cb.owner.index, []).append(op)
    staging = set()
    for index, ops in by_buffer.items():
        most = [executions(op, at_most=True) for op in ops]
        if None in most or sum(n * op.blocks for n, op in zip(most, ops)) > block_count_of(ops[0].cb):
            staging.add(index)
            continue
        for op in ops:
            op.detach()
            op.erase()
    return staging


# a net's DRAM mailbox may take at most this many bytes (else its blocks land in L1 as before)
MAX_MAILBOX_BYTES = 256 << 20


def _mailbox_nets(capture: OperationCapture, module, uses) -> None:
    """A landing net whose pipes each reach one other node and whose receives all land in tensor
    slices (``ttl.copy(pipe, t[...], shape=...)``) sends into a DRAM mailbox instead of an L1
    landing buffer: its receivers' regions are disjoint DRAM, so TT-Lang's sends there never wait
    for a receiver to reach its receive, and a relay ring sending several chunks before its
    successor receives the first must not either. The mailbox holds, per node and receive slot, as
    many blocks as the receives can take — the fewer of the blocks their tensors hold and the
    receives the kernels' constant loops can make — so a sender only waits where the receiver's
    tensor could not hold another block. A net whose receives all fit its L1 landing buffer (as deep as
    its deepest buffer, :func:`_deepen_landing_buffers`) keeps it. Drops the net's landing buffer
    (its bindings) and records the :class:`Mailbox`."""
    from tilefold.frontend.ttl.capture import Mailbox
    from tilefold.ir import ttl as ttl_ir

    cols, rows = capture.grid
    for net in capture.pipe_nets:
        landing = capture.landing.get(net.index)
        if landing is None or not getattr(landing, "unicast", False):
            continue
        mine = [u for u in uses if u[0] is net]
        receivers = {id(dfb): dfb for n, kind, dfb, _, _ in mine if kind == "recv"}
        if not receivers or any(getattr(d, "tensor_blocks", None) is None for d in receivers.values()):
            continue
        # whole blocks only (a ttl.block.subview sent travels with its own bytes as byte_count)
        whole = next(iter(receivers.values())).block_bytes
        if any(u[4] is not None and u[4] != whole for u in mine):
            continue
        binds = [op for op in module.walk() if isinstance(op, ttl_ir.BindCBOp) and op.index == landing.index]
        if any(op.result.uses for op in binds):
            continue
        receives = [op for op in module.walk() if isinstance(op, ttl_ir.PipeRecvOp) and op.net_index == net.index]
        bounds = [_constant_trips(op) for op in receives]
        depth = sum(max(1, d.tensor_blocks) for d in receivers.values())
        if all(b is not None for b in bounds):
            depth = min(depth, sum(bounds))
            # the L1 landing buffer holds every block the receives take: no sender ever waits there
            # either, and its blocks skip the trip through DRAM
            if depth <= max([dfb.block_count for _, _, dfb, _, _ in mine] + [landing.depth]):
                continue
        first = next(iter(receivers.values()))
        mailbox = Mailbox(net.index, max(1, depth), max(net.landing_slots()) + 1, first.block_pages, first.page_size,
                          first.data_format, tuple(first.tile))
        if mailbox.pages(cols * rows) * mailbox.page_size > MAX_MAILBOX_BYTES:
            continue
        for op in binds:
            op.detach()
            op.erase()
        landing.dropped = True
        capture.landing[net.index] = None
        capture.mailboxes[net.index] = mailbox


def _constant_trips(op) -> int | None:
    """How many times ``op`` runs at most: the product of the trip counts of the ``scf.for`` loops
    around it, or None when one of them is not constant (or a ``while`` loop is around it)."""
    from xdsl.dialects import scf

    from tilefold.frontend.ttl.protocol_check import trip_count

    trips = 1
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, scf.WhileOp):
            return None
        if isinstance(parent, scf.ForOp):
            n = trip_count(parent)
            if n is None:
                return None
            trips *= n
        parent = parent.parent_op()
    return trips


def _deepen_landing_buffers(capture: OperationCapture, module, uses) -> None:
    """A deep landing net (its pipes each reach one other node) holds as many blocks a slot as the
    deepest buffer its kernels send from or receive into, not only the first one built: a relay
    receiving into a tensor slice (a one-block buffer) and sending from a two-block buffer sends two
    blocks ahead. Retypes the landing buffer's bindings in the kernels already built."""
    from tilefold.ir import ttl as ttl_ir

    for net in capture.pipe_nets:
        landing = capture.landing.get(net.index)
        if landing is None or not getattr(landing, "unicast", False):
            continue
        depth = landing.depth
        wanted = max([dfb.block_count for n, _, dfb, _, _ in uses if n is net] + [depth])
        if wanted == depth:
            continue
        landing.block_count = landing.block_count // depth * wanted
        landing.depth = wanted
        binds = [op for op in module.walk() if isinstance(op, ttl_ir.BindCBOp) and op.index == landing.index]
        for op in binds:
            old = op.result.type
            name = op.buffer_name.data if op.buffer_name is not None else None
            new = ttl_ir.BindCBOp(landing.index, ttl_ir.CircularBufferType(
                [d.data for d in old.shape.data], old.element_type, landing.block_count), name)
            new.location = getattr(op, "location", None)
            op.parent_block().insert_op_before(new, op)
            new.result.name_hint = op.result.name_hint
            op.result.replace_all_uses_with(new.result)
            op.detach()
            op.erase()


def _pipe_net_table(capture: OperationCapture, uses) -> ArrayAttr:
    """Per pipe net: the buffer blocks are received into (a sender writes at its own write pointer
    of that buffer, which every node advances in step) and the block size in bytes."""
    from xdsl.dialects.builtin import ArrayAttr

    from tilefold.ir.ttl_metadata import PipeNetAttr

    entries = []
    for net in capture.pipe_nets:
        sends = [(dfb, loc) for n, kind, dfb, loc, _ in uses if n is net and kind == "send"]
        recvs = [(dfb, loc) for n, kind, dfb, loc, _ in uses if n is net and kind == "recv"]
        # what travels: a block's first byte_count bytes (ttl.copy(..., byte_count=n)), or all of it
        counts = [(n_bytes if n_bytes is not None else dfb.block_bytes, n_bytes, loc)
                  for n, kind, dfb, loc, n_bytes in uses if n is net]
        if not sends and not recvs:
            continue
        if sends and not recvs:
            raise KernelError("this pipe net is sent into (ttl.copy(block, pipe)) but nothing receives from it; add "
                              "ttl.copy(pipe, block) in net.if_dst's body", sends[0][1])
        if recvs and not sends:
            raise KernelError("this pipe net is received from (ttl.copy(pipe, block)) but nothing sends into it; add "
                              "ttl.copy(block, pipe) in net.if_src's body", recvs[0][1])
        receiver = recvs[0][0]
        block_bytes = receiver.block_bytes
        # a sender writes where its receivers posted their block, so receives of one net may take
        # blocks of several buffers of one block size (a multicast writes one address on every
        # receiver: each receive checks the address written is its own block's; a node sending to
        # itself then writes where its own receive posted its block too)
        for dfb, loc in recvs[1:]:
            if dfb is not receiver and dfb.block_bytes != block_bytes:
                raise KernelError(f"blocks of this pipe net are received into {receiver.name} ({block_bytes} B) and "
                                  f"into {dfb.name} ({dfb.block_bytes} B); receive every pipe of a net into buffers "
                                  "of one block size", loc)
        receivers = len({id(dfb) for dfb, _ in recvs})
        partial = [c for c in counts if c[1] is not None]
        if partial:
            moved, _, first = partial[0]
            for size, n_bytes, loc in counts:
                if size != moved:
                    given = f"byte_count={n_bytes}" if n_bytes is not None else f"a whole block ({size} B)"
                    raise KernelError(f"this pipe net moves {moved} bytes at {first} (byte_count=) but {given} here; "
                                      "give every send and receive of a net the same byte_count", loc)
        if not partial:                 # with byte_count= what travels fits each block (checked at its copy)
            for dfb, loc in sends:
                if dfb.block_bytes != block_bytes:
                    raise KernelError(f"the block sent here ({dfb.name}, {dfb.block_bytes} B) differs from the block "
                                      f"received ({receiver.name}, {block_bytes} B); send and receive blocks of the "
                                      "same shape and data type", loc)
        entry = {"net": net.index, "recv_cb": receiver.index, "block_bytes": block_bytes,
                 "ready_slots": max(1, net.max_sources())}
        if receivers > 1:
            entry["receive_buffers"] = receivers
        landing = capture.landing.get(net.index)
        mailbox = capture.mailboxes.get(net.index)
        if mailbox is not None:
            entry.update(mailbox_depth=mailbox.depth, landing_slots=mailbox.slots,
                         receive_slots=net.max_destinations())
        elif landing is not None:
            depth = getattr(landing, "depth", 1)
            entry.update(landing_cb=landing.index, landing_slots=landing.block_count // depth,
                         receive_slots=net.max_destinations())
            if depth > 1:
                entry["landing_depth"] = depth
        else:                          # a valid semaphore per receive slot: one node's pipes never share one
            entry["valid_slots"] = max(net.landing_slots()) + 1
        entries.append(PipeNetAttr.from_dict(entry))
    return ArrayAttr(entries)


# TT-Lang's compiler option names (``--ttl-NAME`` / ``--no-ttl-NAME``): mostly tuning of TT-Lang's own
# code generation, which tilefold accepts and makes its own choices for; honoured when given to
# ``@ttl.operation(options=...)``: ``matmul-full-fp32`` (on by default: a compute kernel with a matmul
# gets a 32-bit DST), ``reduce-full-fp32`` (on by default: on Blackhole, reductions other than row
# reductions run in full float32), ``fpu-binary-ops`` (on by default: ``a + b`` of two buffer tiles is the FPU's
# ``add_tiles``) and ``reuse-user-dfbs``
COMPILER_OPTIONS = ("maximize-dst", "fpu-binary-ops", "block-matmul", "subblock-sync", "combine-pack-tiles",
                    "reduce-full-fp32", "matmul-full-fp32", "strict-f32-acc", "compiler-dfbs", "l1-budget",
                    "reuse-user-dfbs", "specialize-cores", "pipe-global-semaphores-only", "pipe-computed-addresses",
                    "pipe-capacity-sync", "relax-dfb-spsc")
# options that take a value (``--ttl-NAME=VALUE``): how TT-Lang stores and accumulates blocks, which
# tilefold decides itself; the known values of each (None: TT-Lang's set of values is open)
VALUED_COMPILER_OPTIONS = {"memory-model": ("metal-cb", "compiler-l1", "compiler-sram"),
                           "accumulation-strategy": None, "l1-allocation-strategy": None, "force-subblock": None,
                           "sram-allocation-mode": None, "sram-allocation-strategy": None, "pipe-batch-tiles": None}


def compiler_options(value, location) -> dict:
    """Check a TT-Lang compiler option string (``options="--no-ttl-maximize-dst"``, after those of the
    ``TTLANG_COMPILER_OPTIONS`` environment variable and those on the script's command line,
    ``python script.py --no-ttl-reuse-user-dfbs``); the options tilefold honours, as
    ``{"matmul_full_fp32": False}`` (later tokens win)."""
    honoured: dict = {}
    for source, text in (("TTLANG_COMPILER_OPTIONS", os.environ.get("TTLANG_COMPILER_OPTIONS", "").strip()),
                         ("the script's command line", _command_line_options())):
        if text:
            try:
                _parse_options(text, None, honoured)
            except KernelValueError as exc:
                raise KernelValueError(f"{source}: {exc.message}", location) from None
    if value is None:
        return honoured
    if not isinstance(value, str):
        raise KernelArgumentError(f"options={value!r}: give TT-Lang compiler options as one string, e.g. "
                                  "options=\"--no-ttl-maximize-dst\"", location)
    return _parse_options(value, location, honoured)


# the options tilefold honours, and what each decides
_HONOURED = {"matmul-full-fp32": "a compute kernel with a matmul gets a 32-bit DST (on)",
             "reduce-full-fp32": "on Blackhole, reductions other than row reductions run in full float32 (on)",
             "fpu-binary-ops": "a + b, a - b, a * b of two buffer tiles run on the FPU (on)",
             "reuse-user-dfbs": "dataflow buffers of disjoint lifetimes share circular buffers when needed (on)"}


def compiler_options_usage() -> str:
    """What ``--ttl-help`` on a script's command line prints: TT-Lang's compiler options, those
    tilefold honours with what they decide, the others as accepted."""
    lines = ["TTL compiler options (tilefold): on the command line, in options=\"...\" or in "
             "TTLANG_COMPILER_OPTIONS", ""]
    for name in COMPILER_OPTIONS:
        what = _HONOURED.get(name, "accepted; tilefold makes this choice itself")
        lines.append(f"  --ttl-{name} / --no-ttl-{name}: {what}")
    for name, values in VALUED_COMPILER_OPTIONS.items():
        lines.append(f"  --ttl-{name}={'|'.join(values) if values else 'VALUE'}: accepted; tilefold makes this "
                     "choice itself")
    return "\n".join(lines)


def _command_line_options() -> str:
    """The TT-Lang compiler options among the script's arguments (``sys.argv``): ``--ttl-NAME`` /
    ``--no-ttl-NAME`` of a known option (with ``=VALUE`` or the next argument for the valued ones);
    the script's other arguments are its own."""
    import sys

    argv, found = sys.argv[1:], []
    if "--ttl-help" in argv:
        print(compiler_options_usage())
        raise SystemExit(0)             # as TT-Lang does: the list, then the script stops
    for i, token in enumerate(argv):
        if not token.startswith(("--ttl-", "--no-ttl-")):
            continue
        name = token.split("=", 1)[0].removeprefix("--no-ttl-").removeprefix("--ttl-")
        if name in COMPILER_OPTIONS:
            found.append(token)
        elif name in VALUED_COMPILER_OPTIONS and token.startswith("--ttl-"):
            found.append(token if "=" in token or i + 1 >= len(argv) else f"{token}={argv[i + 1]}")
    return " ".join(found)


def _parse_options(value: str, location, honoured: dict) -> dict:
    """Add the options of ``value`` that tilefold honours to ``honoured``; an unknown one is an error."""
    tokens = value.split()
    for i, token in enumerate(tokens):
        name = token.split("=", 1)[0].removeprefix("--").removeprefix("no-").removeprefix("ttl-")
        if not token.startswith("--") and i and tokens[i - 1].removeprefix("--ttl-") in VALUED_COMPILER_OPTIONS:
            continue                    # the value of ``--ttl-NAME VALUE``
        if token.startswith("--ttl-") and name in VALUED_COMPILER_OPTIONS:
            known = VALUED_COMPILER_OPTIONS[name]
            given = token.split("=", 1)[1] if "=" in token else (tokens[i + 1] if i + 1 < len(tokens) else "")
            if not given or given.startswith("--") or known is not None and given not in known:
                raise KernelValueError(f"options={value!r}: {token!r}: --ttl-{name} takes a value, "
                                       + (f"one of {', '.join(known)}" if known else f"--ttl-{name}=VALUE"), location)
            continue
        if not token.startswith("--") or name not in COMPILER_OPTIONS:
            raise KernelValueError(f"options={value!r}: {token!r} is not a TT-Lang compiler option; they are "
                                   + ", ".join(f"--ttl-{n}" for n in COMPILER_OPTIONS)
                                   + " (or --no-ttl-...), " + ", ".join(f"--ttl-{n}=..." for n in VALUED_COMPILER_OPTIONS),
                                   location)
        if name not in ("matmul-full-fp32", "reduce-full-fp32", "reuse-user-dfbs", "fpu-binary-ops"):
            continue
        enabled = not token.startswith("--no-")
        if "=" in token:                # --ttl-NAME=true / =false (or 1 / 0), as TT-Lang's on/off options take
            given = token.split("=", 1)[1].lower()
            if not enabled or given not in ("true", "false", "1", "0"):
                raise KernelValueError(f"options={value!r}: {token!r}: --ttl-{name} is on or off: write --ttl-{name}, "
                                       f"--no-ttl-{name} or --ttl-{name}=true|false", location)
            enabled = given in ("true", "1")
        honoured[name.replace("-", "_")] = enabled
    return honoured


# TT-Lang's environment variables that ask for files tilefold does not write
_UNSUPPORTED_ENVIRONMENT = {
    "TTLANG_EMIT_RUNNER": "standalone runner of the compiled operation",
    "TTLANG_INITIAL_MLIR": "MLIR file", "TTLANG_FINAL_MLIR": "MLIR file",
}
_WARNED_ENVIRONMENT: set[str] = set()


def _warn_unsupported_environment() -> None:
    """One warning per process for each TT-Lang environment variable of :data:`_UNSUPPORTED_ENVIRONMENT`
    that is set: tilefold writes no such file (``tilefold compile SCRIPT -o DIR`` writes a TT-Metalium
    project of each call, ``--print-ir-after-all`` its IR)."""
    for name, what in _UNSUPPORTED_ENVIRONMENT.items():
        if os.environ.get(name) and name not in _WARNED_ENVIRONMENT:
            _WARNED_ENVIRONMENT.add(name)
            warn_at(f"{name} is set, but tilefold writes no {what}; tilefold compile SCRIPT -o DIR writes a "
                    "TT-Metalium project of each call (--print-ir-after-all prints its IR)", user_location())


def _unknown_options(unknown: dict) -> str:
    """The error for keywords ``@ttl.operation`` does not take, naming what 1.x writes for the
    pre-1.0 ones (``compute_config=``; extra keywords the pre-1.0 ``@ttl.kernel`` made names in the
    body, as ``granularity=2``)."""
    if "compute_config" in unknown:
        return ("@ttl.operation(compute_config=...) is pre-1.0 TT-Lang; 1.x gives the compute settings as "
                "@ttl.operation(fp32_dest_acc_en=..., dst_full_sync_en=..., math_fidelity=..., math_approx_mode=...)")
    names = ", ".join(repr(k) for k in sorted(unknown))
    message = (f"@ttl.operation() got an unexpected keyword argument {names}; it takes grid, fp32_dest_acc_en, "
               "dst_full_sync_en, math_fidelity, math_approx_mode, memory_space, tiled, options, num_outs, "
               "indexing_maps, iterator_types, device_domain, mesh_program_placements, runtime_resource_factory, "
               "factory_cache, factory_cache_key, dispatcher, dispatch_arguments")
    constants = {k: v for k, v in sorted(unknown.items()) if isinstance(v, (int, float, str, tuple))}
    if constants:
        name, value = next(iter(constants.items()))
        message += (f" (pre-1.0 TT-Lang made {name}= a name in the body; 1.x takes such compile-time values from "
                    f"the enclosing scope: set {name} = {value!r} before the operation and drop the argument)")
    return message


def operation(fn=None, *, grid=None, fp32_dest_acc_en: bool | None = None, dst_full_sync_en: bool | None = None,
              math_fidelity: str | None = None, math_approx_mode: bool | None = None, memory_space: str | None = None,
              tiled: bool = True, options: str | None = None, num_outs: int = 1, indexing_maps=None,
              iterator_types=None, device_domain=None, mesh_program_placements=None, runtime_resource_factory=None,
              factory_cache=None, factory_cache_key=None, dispatcher=False, dispatch_arguments=None, **unknown):
    """``@ttl.operation(grid=(columns, rows) | (d0, ..., dn) | "full" | "auto")``: a TT-Lang operation.
    ``memory_space`` ("L1" or "DRAM") and ``tiled=True`` are accepted: each tensor's own memory
    and layout decide how it is read and written; so are TT-Lang's compiler ``options`` (here or per
    call), which tune TT-Lang's own code generation (:data:`COMPILER_OPTIONS`), and ``num_outs=1``,
    ``indexing_maps`` and ``iterator_types``, which TT-Lang checks and its kernels do not read.
    ``device_domain=ttl.DeviceDomain(...)`` runs the grid on every device of the domain (see
    :meth:`Operation.capture`); ``mesh_program_placements=[device, ...]`` only on those devices (the
    nodes of the others run no kernel). ``runtime_resource_factory`` adds semaphores to the host
    program for C++ the kernels call (:mod:`tilefold.frontend.ttl.runtime_resources`).
    ``factory_cache=`` / ``factory_cache_key=`` (TT-Lang's compilation cache shared between
    operations) are accepted: tilefold keeps each operation's compiled calls itself.
    ``dispatcher=True`` makes a control-only dispatcher of the operations its body calls, whose
    parameters ``dispatch_arguments={name: ttl.DispatchArgument(...)}`` give contracts
    (:mod:`tilefold.frontend.ttl.dispatch`). Without ``grid=`` an operation runs on the full grid."""
    location = user_location()
    grid_declared = grid is not None
    grid = "full" if grid is None else grid
    if not isinstance(grid, str):
        from tilefold.frontend.ttl.grid import grid_dimensions

        grid_dimensions(grid, location)      # a grid naming no node is refused here, as TT-Lang does
    if not isinstance(dispatcher, bool):
        raise KernelArgumentError(f"@ttl.operation(dispatcher={dispatcher!r}): dispatcher must be a bool (True or "
                                  "False)", location)
    from tilefold.frontend.ttl.devices import DeviceDomain

    if device_domain is not None and not isinstance(device_domain, DeviceDomain):
        raise KernelValueError(f"@ttl.operation(device_domain={device_domain!r}): give one ttl.DeviceDomain(extents) "
                               "(an operation spans at most one domain)", location)
    honoured = compiler_options(options, location)
    placements = None
    if mesh_program_placements is not None:
        if device_domain is None:
            raise KernelValueError("@ttl.operation(mesh_program_placements=...) names devices of the operation's "
                                   "device domain; give device_domain=ttl.DeviceDomain(...) too", location)
        if not isinstance(mesh_program_placements, (list, tuple)) or not mesh_program_placements:
            raise KernelValueError(f"@ttl.operation(mesh_program_placements={mesh_program_placements!r}): give a "
                                   "list of devices of the domain", location)
        placements = sorted({device_domain.index(d, f"mesh_program_placements: item {i}", location)
                             for i, d in enumerate(mesh_program_placements)})
        placements = None if len(placements) == device_domain.size else placements
    if unknown:
        raise KernelArgumentError(_unknown_options(unknown), location)
    if runtime_resource_factory is not None and not callable(runtime_resource_factory):
        raise KernelValueError(f"@ttl.operation(runtime_resource_factory={runtime_resource_factory!r}): give a "
                               "function of tensors=, core_ranges= and first_free_semaphore_id=", location)
    if num_outs != 1:
        raise KernelValueError(f"@ttl.operation(num_outs={num_outs!r}): num_outs must be 1, as in TT-Lang; drop it — "
                               "every tensor a kernel writes is an output", location)
    if iterator_types is not None and indexing_maps is None:
        raise KernelValueError("@ttl.operation(iterator_types=...): indexing_maps must be set when iterator_types is "
                               "set", location)
    for indexing_map in indexing_maps or ():
        if iterator_types is not None and len(inspect.signature(indexing_map).parameters) != len(iterator_types):
            raise KernelValueError(f"@ttl.operation(indexing_maps=...): a map takes "
                                   f"{len(inspect.signature(indexing_map).parameters)} dimensions but iterator_types "
                                   f"names {len(iterator_types)}", location)
    if memory_space is not None and memory_space not in ("L1", "DRAM"):
        raise KernelValueError(f"@ttl.operation(memory_space={memory_space!r}): memory_space is 'L1' or 'DRAM' — or "
                               "drop it: each tensor is read and written where it lives (its memory_config)", location)
    if tiled is not True:
        raise KernelValueError(f"@ttl.operation(tiled={tiled!r}): only tiled=True is supported; drop the argument — "
                               "each tensor's layout (ttnn.TILE_LAYOUT or ROW_MAJOR_LAYOUT) comes from the tensor",
                               location)
    for flag, value in (("fp32_dest_acc_en", fp32_dest_acc_en), ("dst_full_sync_en", dst_full_sync_en),
                        ("math_approx_mode", math_approx_mode)):
        if value is not None and not isinstance(value, bool):     # 'no' would be true
            raise KernelValueError(f"@ttl.operation({flag}={value!r}): give True or False (or drop it for the "
                                   "default)", location)
    if isinstance(getattr(math_fidelity, "name", None), str):     # ttnn.MathFidelity.HiFi4
        math_fidelity = math_fidelity.name
    if math_fidelity is not None and math_fidelity not in ("LoFi", "HiFi2", "HiFi3", "HiFi4"):
        raise KernelValueError(f"@ttl.operation(math_fidelity={math_fidelity!r}): use LoFi, HiFi2, HiFi3 or HiFi4",
                               location)
    options = {"fp32_dest_acc_en": fp32_dest_acc_en, "dst_full_sync_en": dst_full_sync_en,
               "math_fidelity": math_fidelity, "math_approx_mode": math_approx_mode,
               "matmul_full_fp32": honoured.get("matmul_full_fp32"), "reduce_full_fp32": honoured.get("reduce_full_fp32"),
               "reuse_user_dfbs": honoured.get("reuse_user_dfbs"),
               "fpu_binary_ops": honoured.get("fpu_binary_ops")}

    def decorate(function):
        if not inspect.isfunction(function):
            raise KernelError(f"@ttl.operation decorates a def function, not {type(function).__name__}", location)
        code = function.__code__
        from tilefold.frontend.ttl.dispatch import (DispatcherBody, argument_contracts, composition_error,
                                                    dispatcher_operations_named)

        here = SourceLocation(code.co_filename, code.co_firstlineno)
        _refuse_returned_values(function)
        composed = dispatcher_operations_named(function)
        if composed and not dispatcher:
            raise composition_error(composed[0].__name__, function.__name__, here)
        op = Operation(function, grid, options, here)
        op.grid_declared = grid_declared
        op.dispatch_contracts = argument_contracts(function, dispatch_arguments, here)
        if dispatcher:
            op.dispatch = DispatcherBody(function, function.__name__, here)
        op.device_domain = device_domain
        op.placements = placements
        op.resource_factory = runtime_resource_factory
        return op

    return decorate(fn) if fn is not None else decorate

"""The host program (``main.cpp``) of a Program, for the TT-Metalium 0.69 mesh dispatch API.

Reads: a :class:`~tilefold.program.Program` and its :class:`HostData`. Writes: the text of
``main.cpp``. One commented block per step, in the order a TT-Metalium host runs them:

1. open device 0 as a 1x1 mesh (``MeshDevice::create_unit_mesh``) and its command queue;
2. create every buffer (``MeshBuffer::create`` with ``ReplicatedBufferConfig`` and a
   ``DeviceLocalBufferConfig``; sharded buffers carry ``BufferShardingArgs``);
3. write each input from ``data/<name>.bin`` (``EnqueueWriteMeshBuffer``);
4. ``CreateProgram``, circular buffers, semaphores, kernels (``<file>.cpp`` next to ``main.cpp``; compile-time
   arguments with ``TensorAccessorArgs(*buffer).append_to``), runtime arguments;
5. run it as a ``MeshWorkload`` on the whole mesh and ``Finish``;
6. read each output back (``EnqueueReadMeshBuffer``), save it as ``data/<name>.out.bin`` and
   compare it with ``data/<name>.golden.bin`` (helpers in ``host_checks.hpp``, see
   :mod:`tilefold.codegen.cpp.host_checks`); print PASS / FAIL, close the mesh, exit 0 / 1.
   A program that was not simulated (``HostData.not_simulated``: its kernels call a user's C++)
   has no expected values: each output is saved and its checksum printed, unchecked; exit 0.

Kernel and data paths start with ``PROJECT_DIR``, which ``CMakeLists.txt`` sets to the
project folder. Names in the C++ are the user's buffer and kernel names.

Errors: what :meth:`Program.validate` and :meth:`HostData.check` raise; :class:`ProgramError`
for a sharded buffer whose memory config does not fit its shape.
"""

from __future__ import annotations

from tilefold.arch.cores import CoreRangeSet
from tilefold.codegen.cpp.host_data import HostData
from tilefold.codegen.cpp.host_checks import HOST_CHECKS_HEADER
from tilefold.codegen.cpp.names import HOST_RESERVED, Identifiers, file_stem
from tilefold.errors import LayoutError, ProgramError
from tilefold.layout.tensor_spec import TensorSpec
from tilefold.program import BufferAddress, HalfWords, NocX, Program, TensorAccessorArgsRef
from tilefold.program.buffers import Buffer
from tilefold.program.kernels import ComputeConfig, DataMovementConfig, Kernel

INDENT = "    "
DATA_DIR = "data"


def kernel_path(kernel: Kernel) -> str:
    """Where the project keeps the kernel's source, relative to ``main.cpp`` (next to it)."""
    return kernel.source_file


def input_path(name: str) -> str:
    return f"{DATA_DIR}/{file_stem(name)}.bin"


def golden_path(name: str) -> str:
    return f"{DATA_DIR}/{file_stem(name)}.golden.bin"


def output_path(name: str) -> str:
    return f"{DATA_DIR}/{file_stem(name)}.out.bin"


def cpp_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _project_path(path: str) -> str:
    return f'PROJECT_DIR "/{path}"'


def core_spec(cores: CoreRangeSet, single_core_as_coord: bool = True) -> str:
    """C++ for a set of logical cores: ``CoreCoord{x, y}``, ``CoreRange(...)`` or ``CoreRangeSet(...)``."""
    ranges = cores.ranges
    if len(ranges) == 1:
        r = ranges[0]
        if single_core_as_coord and r.num_cores == 1:
            return f"CoreCoord{{{r.start.x}, {r.start.y}}}"
        return f"CoreRange({{{r.start.x}, {r.start.y}}}, {{{r.end.x}, {r.end.y}}})"
    inner = ", ".join(f"CoreRange({{{r.start.x}, {r.start.y}}}, {{{r.end.x}, {r.end.y}}})" for r in ranges)
    return f"CoreRangeSet(std::vector<CoreRange>{{{inner}}})"


def _int(value: int) -> str:
    return f"{value}u" if value > 0x7FFFFFFF else str(value)


class HostPrinter:
    """Prints ``main.cpp`` for one program (see the module docstring)."""

    def __init__(self, program: Program, data: HostData):
        self.program = program
        self.data = data
        self.names = Identifiers(HOST_RESERVED)
        stems: dict[str, str] = {}
        for buf in program.buffers.values():
            other = stems.setdefault(file_stem(buf.name), buf.name)
            if other != buf.name:
                raise ProgramError(f"buffers {other!r} and {buf.name!r} would share the data file "
                                   f"{input_path(buf.name)}; rename one", buf.defined_at)
        self.buffer_names = {b.name: self.names.unique_from_text(b.name) for b in program.buffers.values()}
        self.kernel_names = {k.id: self.names.unique_from_text(k.name) for k in program.kernels}
        self.lines: list[str] = []

    def emit(self, text: str = "", depth: int = 1) -> None:
        self.lines.append(INDENT * depth + text if text else "")

    def section(self, comment: str) -> None:
        self.emit()
        self.emit(f"// {comment}")

    # -- buffers ------------------------------------------------------------------------------

    def _sharding_args(self, buf: Buffer) -> str:
        """``BufferShardingArgs`` of a sharded buffer: a 2-D ``ShardSpecBuffer`` with its memory layout,
        or an N-D ``BufferDistributionSpec`` (shapes in pages)."""
        config = buf.memory_config
        try:
            spec = TensorSpec(buf.shape, buf.data_format, buf.layout, config, buf.tile)
        except LayoutError as err:
            raise ProgramError(f"buffer {buf.name!r}: {err.message}", buf.defined_at) from None
        shard_spec, nd_spec = getattr(config, "shard_spec", None), getattr(config, "nd_shard_spec", None)
        if shard_spec is not None:
            shard_h, shard_w = spec.physical_shard_shape
            page_h, page_w = spec.page_shape
            pages_h, pages_w = spec.tensor_shape_in_pages
            return (f"BufferShardingArgs(\n"
                    f"ShardSpecBuffer(CoreRangeSet({core_spec(shard_spec.grid, False)}), {{{shard_h}, {shard_w}}}, "
                    f"ShardOrientation::{shard_spec.orientation.name},\n"
                    f"{{{page_h}, {page_w}}}, {{{pages_h}, {pages_w}}}),\n"
                    f"TensorMemoryLayout::{config.memory_layout.name})")
        distribution = spec.distribution_spec()
        tensor_pages = ", ".join(map(str, distribution.tensor_shape_in_pages))
        shard_pages = ", ".join(map(str, distribution.shard_shape_in_pages))
        return (f"BufferShardingArgs(BufferDistributionSpec(\n"
                f"tt::tt_metal::Shape({{{tensor_pages}}}), tt::tt_metal::Shape({{{shard_pages}}}),\n"
                f"CoreRangeSet({core_spec(nd_spec.grid, False)}), ShardOrientation::{nd_spec.orientation.name},\n"
                f"ShardDistributionStrategy::{nd_spec.distribution.name}))")

    def print_buffers(self) -> None:
        self.section("Buffers: one per tensor, the same on every device of the mesh.")
        for buf in self.program.buffers.values():
            name = self.buffer_names[buf.name]
            layout = self.names.unique(f"{name}_layout")
            self.emit(f"// {buf.describe()}")
            fields = [f".page_size = {buf.page_size}", f".buffer_type = BufferType::{buf.buffer_type}"]
            if buf.is_sharded:
                sharding = self._sharding_args(buf).split("\n")
                self.emit(f"distributed::DeviceLocalBufferConfig {layout}{{")
                for f in fields:
                    self.emit(f + ",", depth=2)
                self.emit(f".sharding_args = {sharding[0]}", depth=2)
                for line in sharding[1:]:
                    self.emit(line, depth=3)
                self.emit("};")
            else:
                self.emit(f"distributed::DeviceLocalBufferConfig {layout}{{{', '.join(fields)}}};")
            self.emit(f"std::shared_ptr<distributed::MeshBuffer> {name} = distributed::MeshBuffer::create(")
            self.emit(f"distributed::ReplicatedBufferConfig{{.size = {buf.size}}}, {layout}, mesh.get());",
                      depth=2)

    def print_inputs(self) -> None:
        if not self.data.inputs:
            return
        self.section("Inputs: device-format bytes from data/<name>.bin.")
        for buffer_name in self.data.inputs:
            buf = self.program.buffer(buffer_name)
            name = self.buffer_names[buffer_name]
            data = self.names.unique(f"{name}_input")
            self.emit(f"std::vector<uint8_t> {data} = read_bytes({_project_path(input_path(buffer_name))}, {buf.size});")
            self.emit(f"distributed::EnqueueWriteMeshBuffer(cq, {name}, {data}, false);")

    # -- program ------------------------------------------------------------------------------

    def print_circular_buffers(self) -> None:
        if not self.program.circular_buffers:
            return
        self.section("Circular buffers.")
        for cb in self.program.circular_buffers:
            self.emit(f"// {cb.describe()}")
            config = (f"CircularBufferConfig({cb.total_size}, {{{{{cb.index}, {cb.data_format.cpp}}}}})"
                      f".set_page_size({cb.index}, {cb.page_size})")
            if cb.tile != (32, 32):
                config += f".set_tile_dims({cb.index}, tt::tt_metal::Tile({{{cb.tile[0]}, {cb.tile[1]}}}))"
            if cb.backing_buffer is not None and cb.backing_offset:
                # a CB from an offset into its L1 buffer: the descriptor form carries the offset
                ranges = core_spec(cb.cores, False)
                if not ranges.startswith("CoreRangeSet"):
                    ranges = f"CoreRangeSet({ranges})"
                descriptor = self.names.unique(f"cb_{cb.index}_descriptor")
                self.emit(f"CBDescriptor {descriptor}{{.total_size = {cb.total_size}, .core_ranges = {ranges},")
                self.emit(f".format_descriptors = {{CBFormatDescriptor{{.buffer_index = {cb.index}, "
                          f".data_format = {cb.data_format.cpp}, .page_size = {cb.page_size}}}}},", depth=2)
                self.emit(f".buffer = {self.buffer_names[cb.backing_buffer]}->get_reference_buffer(), "
                          f".address_offset = {cb.backing_offset}}};", depth=2)
                config = f"CircularBufferConfig({descriptor})"
            elif cb.backing_buffer is not None:
                config += f".set_globally_allocated_address(*{self.buffer_names[cb.backing_buffer]}" \
                          "->get_reference_buffer())"
            self.emit(f"CreateCircularBuffer(program, {core_spec(cb.cores)},")
            self.emit(f"{config});", depth=2)

    def print_semaphores(self) -> None:
        if not self.program.semaphores:
            return
        self.section("Semaphores: kernels receive these ids in their arguments.")
        for sem in self.program.semaphores:
            name = self.names.unique(f"semaphore_{sem.id}")
            self.emit(f"const uint32_t {name} = CreateSemaphore(program, {core_spec(sem.cores, False)}, "
                      f"{sem.initial_value});")
            self.emit(f"if ({name} != {sem.id}) {{")
            self.emit(f'std::fprintf(stderr, "semaphore {sem.id} was created with id %u\\n", {name});', depth=2)
            self.emit("return 1;", depth=2)
            self.emit("}")

    def _compile_args(self, kernel: Kernel, name: str) -> str | None:
        if not kernel.compile_args:
            return None
        vector = self.names.unique(f"{name}_compile_args")
        leading = []
        args = list(kernel.compile_args)
        while args and isinstance(args[0], int):
            leading.append(_int(args.pop(0)))
        self.emit(f"std::vector<uint32_t> {vector} = {{{', '.join(leading)}}};")
        for arg in args:
            if isinstance(arg, TensorAccessorArgsRef):
                self.emit(f"TensorAccessorArgs(*{self.buffer_names[arg.buffer]}).append_to({vector});")
            else:
                self.emit(f"{vector}.push_back({_int(arg)});")
        return vector

    def _unpack_modes(self, kernel: Kernel, name: str) -> str | None:
        """The per-CB ``UnpackToDestMode`` vector of a compute kernel, when a CB is not ``Default``."""
        config = kernel.config
        if not isinstance(config, ComputeConfig) or not config.unpack_to_dest_mode:
            return None
        vector = self.names.unique(f"{name}_unpack_to_dest_mode")
        self.emit(f"std::vector<UnpackToDestMode> {vector}(NUM_CIRCULAR_BUFFERS, UnpackToDestMode::Default);")
        for cb, mode in config.unpack_to_dest_mode:
            self.emit(f"{vector}[{cb}] = UnpackToDestMode::{mode};")
        return vector

    def _config(self, kernel: Kernel, compile_args: str | None, unpack_modes: str | None = None) -> list[str]:
        config = kernel.config
        if isinstance(config, ComputeConfig):
            fields = [f".math_fidelity = MathFidelity::{config.math_fidelity}",
                      f".fp32_dest_acc_en = {'true' if config.fp32_dest_acc_en else 'false'}",
                      f".dst_full_sync_en = {'true' if config.dst_full_sync_en else 'false'}",
                      *([f".unpack_to_dest_mode = {unpack_modes}"] if unpack_modes else []),
                      f".math_approx_mode = {'true' if config.math_approx_mode else 'false'}"]
            type_name = "ComputeConfig"
        else:
            assert isinstance(config, DataMovementConfig)
            noc = f"NOC::{config.noc}" if config.noc else f"NOC::{config.processor}_default"
            fields = [f".processor = DataMovementProcessor::{config.processor}", f".noc = {noc}"]
            type_name = "DataMovementConfig"
        if compile_args:
            fields.append(f".compile_args = {compile_args}")
        if kernel.defines:
            defines = ", ".join(f"{{{cpp_string(k)}, {cpp_string(str(v))}}}" for k, v in kernel.defines.items())
            fields.append(f".defines = {{{defines}}}")
        return [f"{type_name}{{", *[f + "," for f in fields[:-1]], fields[-1], "}"]

    def print_kernels(self) -> None:
        self.section("Kernels: sources next to main.cpp, compile-time arguments, configuration.")
        for kernel in self.program.kernels:
            name = self.kernel_names[kernel.id]
            n = kernel.cores.num_cores
            where = "compute" if kernel.is_compute else f"data movement on {kernel.processor}"
            self.emit(f"// {kernel.name}: {where}, {n} core{'s' if n != 1 else ''}")
            compile_args = self._compile_args(kernel, name)
            config = self._config(kernel, compile_args, self._unpack_modes(kernel, name))
            handle = f"KernelHandle {name} = " if kernel.runtime_args or kernel.common_runtime_args else ""
            self.emit(f"{handle}CreateKernel(program, {_project_path(kernel_path(kernel))}, {core_spec(kernel.cores)},")
            self.emit(config[0], depth=2)
            for line in config[1:-1]:
                self.emit(line, depth=3)
            self.emit(config[-1] + ");", depth=2)

    def _runtime_values(self) -> dict:
        """C++ names for buffer addresses and NOC coordinates used as runtime arguments."""
        values: dict = {}
        for kernel in self.program.kernels:
            for args in [kernel.common_runtime_args, *kernel.runtime_args.values()]:
                for arg in (h for a in args for h in ((a.low, a.high) if isinstance(a, HalfWords) else (a,))):
                    if isinstance(arg, int) or arg in values:
                        continue
                    if isinstance(arg, BufferAddress):
                        values[arg] = self.names.unique(f"{self.buffer_names[arg.buffer]}_address")
                    else:
                        axis = "x" if isinstance(arg, NocX) else "y"
                        values[arg] = self.names.unique(f"core_{arg.core.x}_{arg.core.y}_noc_{axis}")
        return values

    def print_runtime_args(self) -> None:
        values = self._runtime_values()
        if values:
            self.section("Device addresses and NOC coordinates passed as runtime arguments.")
            for arg, name in values.items():
                if isinstance(arg, BufferAddress):
                    text = f"{self.buffer_names[arg.buffer]}->address()"
                else:
                    axis = "x" if isinstance(arg, NocX) else "y"
                    text = (f"mesh->worker_core_from_logical_core(CoreCoord{{{arg.core.x}, {arg.core.y}}})"
                            f".{axis}")
                self.emit(f"const uint32_t {name} = static_cast<uint32_t>({text});")
        if not any(k.runtime_args or k.common_runtime_args for k in self.program.kernels):
            return
        self.section("Runtime arguments.")

        def text(a) -> str:
            if isinstance(a, HalfWords):        # two small values in one word
                return f"({text(a.low)} | ({text(a.high)} << 16))"
            return _int(a) if isinstance(a, int) else values[a]

        def arg_list(args) -> str:
            return "{" + ", ".join(text(a) for a in args) + "}"

        for kernel in self.program.kernels:
            name = self.kernel_names[kernel.id]
            if kernel.common_runtime_args:
                self.emit(f"SetCommonRuntimeArgs(program, {name}, {arg_list(kernel.common_runtime_args)});")
            for core in sorted(kernel.runtime_args, key=lambda c: (c.y, c.x)):
                self.emit(f"SetRuntimeArgs(program, {name}, CoreCoord{{{core.x}, {core.y}}}, "
                          f"{arg_list(kernel.runtime_args[core])});")

    def print_run(self) -> None:
        self.section("Run the program on every device of the mesh and wait for it.")
        self.emit("distributed::MeshWorkload workload;")
        self.emit("workload.add_program(distributed::MeshCoordinateRange(mesh->shape()), std::move(program));")
        self.emit("distributed::EnqueueMeshWorkload(cq, workload, false);")
        self.emit("distributed::Finish(cq);")

    def print_outputs(self) -> None:
        unchecked = self.data.not_simulated is not None
        if unchecked:
            self.section("Outputs: read back and saved as data/<name>.out.bin, NOT CHECKED: tilefold did not simulate")
            self.emit(f"// this program (it {self.data.not_simulated}), so there are no expected values; each output's")
            self.emit("// size and checksum are printed.")
        else:
            self.section("Outputs: read back, save as data/<name>.out.bin, compare with data/<name>.golden.bin.")
            self.emit("bool pass = true;")
        for buf in self.program.buffers.values():
            if buf.role not in ("output", "inout"):
                continue
            name = self.buffer_names[buf.name]
            output = self.names.unique(f"{name}_output")
            self.emit(f"std::vector<uint8_t> {output}({buf.size});")
            self.emit(f"distributed::EnqueueReadMeshBuffer(cq, {output}, {name}, true);")
            self.emit(f"write_bytes({_project_path(output_path(buf.name))}, {output});")
            if unchecked:
                self.emit(f"print_checksum({cpp_string(buf.name)}, {output}, {_project_path(output_path(buf.name))});")
                continue
            golden = self.data.outputs.get(buf.name)
            if golden is None:
                continue
            expected = self.names.unique(f"{name}_golden")
            self.emit(f"std::vector<uint8_t> {expected} = read_bytes({_project_path(golden_path(buf.name))}, "
                      f"{buf.size});")
            self.emit(f"pass = compare_output({cpp_string(buf.name)}, {output}, {expected}, "
                      f"{buf.data_format.cpp}, {buf.tile.height * buf.tile.width},")
            self.emit(f"{golden.rtol!r}, {golden.atol!r}, {golden.min_pcc!r}) && pass;", depth=2)

    def text(self) -> str:
        program = self.program
        if self.data.not_simulated is None:
            purpose = ["// Builds the program, writes its inputs from data/*.bin, runs it on device 0 and compares",
                       "// every output that has data/<name>.golden.bin. Prints PASS or FAIL; exits 0 or 1."]
        else:
            purpose = ["// Builds the program, writes its inputs from data/*.bin, runs it on device 0 and writes every",
                       "// output to data/<name>.out.bin with its checksum, WITHOUT CHECKING THEM: this program",
                       f"// {self.data.not_simulated}, which tilefold cannot simulate, so there are no expected",
                       "// values (no data/*.golden.bin). Prints DONE; exits 0 once the outputs are written."]
        head = [
            f"// main.cpp of {program.name}: host program generated by tilefold for TT-Metalium 0.69.",
            *purpose,
            "",
            "#include <cstdint>",
            "#include <cstdio>",
            "#include <memory>",
            "#include <vector>",
            "",
            "#include <tt-metalium/distributed.hpp>",
            "#include <tt-metalium/host_api.hpp>",
            "#include <tt-metalium/tensor_accessor_args.hpp>",
            "",
            "using namespace tt;",
            "using namespace tt::tt_metal;",
            "",
            "#ifndef PROJECT_DIR",
            '#define PROJECT_DIR "."  // the folder holding the kernel sources and data/; CMakeLists.txt sets it',
            "#endif",
            "",
            f'#include "{HOST_CHECKS_HEADER}"  // read_bytes, write_bytes, compare_output',
            "",
            "int main() {",
            "    // Device 0 as a 1x1 mesh, and its command queue.",
            "    std::shared_ptr<distributed::MeshDevice> mesh = distributed::MeshDevice::create_unit_mesh(0);",
            "    distributed::MeshCommandQueue& cq = mesh->mesh_command_queue();",
        ]
        self.print_buffers()
        self.print_inputs()
        self.section(f"The program, laid out for {program.arch.name} {program.arch.board}.")
        self.emit("Program program = CreateProgram();")
        self.print_circular_buffers()
        self.print_semaphores()
        self.print_kernels()
        self.print_runtime_args()
        self.print_run()
        self.print_outputs()
        self.emit()
        self.emit("mesh->close();")
        if self.data.not_simulated is not None:
            self.emit('std::printf("DONE: outputs written, not checked\\n");')
            self.emit("return 0;")
        else:
            self.emit('std::printf("%s\\n", pass ? "PASS" : "FAIL");')
            self.emit("return pass ? 0 : 1;")
        return "\n".join(head + self.lines + ["}"]) + "\n"


def emit_host(program: Program, data: HostData) -> str:
    """The text of ``main.cpp`` for ``program`` run with ``data``."""
    program.validate()
    data.check(program)
    return HostPrinter(program, data).text()

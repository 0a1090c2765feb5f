"""``ttl.call_extern_func``: a kernel calls a C++ function of a user's header. The C++ includes the
header and calls the function with the given arguments (a scalar result is a runtime integer the
kernel uses later) and passes check-kernel with a real header; ``TTLANG_COMPILE_ONLY=1`` builds it
without running; the simulator stops at the call's line; misuse is an error at the user's line;
a project copies a header given by a relative path and refuses one that is not on disk."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import CompileError, KernelError, SimulationError
from ttl_helpers import compiled, expect_error, filecheck, marked_line, tile_tensor, zeros

FAKE_HEADER = "/dev/null/not_a_header.hpp"

HEADER = """#pragma once
#include <cstdint>

namespace ext {
// the number of pages of a buffer's block times a factor, as a signed result
inline int32_t scaled_pages(uint32_t cb, uint32_t factor) { return static_cast<int32_t>(cb * 0u + factor); }
inline void consume(uint32_t value) { (void)value; }
template <typename Out, int Shift, bool Flag, uint32_t Bits>
inline void describe(uint32_t in_cb) {
    static_assert(Out::block_count == 2, "two blocks");
    static_assert(Out::pages_per_block == 1, "one tile per block");
    static_assert(Out::page_size_bytes == 2048, "bfloat16 tiles");
    static_assert(Shift == -3 && Flag, "template values");
    (void)in_cb;
    (void)Out::index;
}
template <uint32_t Cb>
inline void by_index() { static_assert(Cb < 32, "a circular buffer index"); }
}  // namespace ext
"""


def _extern_op(header):
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with in_dfb.wait() as i, out_dfb.reserve() as o:
                count = ttl.call_extern_func(header, "ext::scaled_pages", func_args=[in_dfb, 3],
                                             result_type=ttl.ScalarType.I32)
                ttl.call_extern_func(header, "ext::consume", func_args=[count + 1])
                ttl.call_extern_func(header, "ext::describe", func_args=[in_dfb],
                                     template_args=[ttl.dfb_descriptor(out_dfb), -3, True, 1.5])
                o.store(ttl.math.abs(i))

        @ttl.datamovement()
        def read():
            with in_dfb.reserve() as b:
                ttl.copy(inp[0, 0], b).wait()
            ttl.call_extern_func(header, "ext::by_index", template_args=[ttl.get_dfb_id(in_dfb)],
                                 kernel=ttl.KernelKind.DATA_MOVEMENT)

        @ttl.datamovement()
        def write():
            with out_dfb.wait() as b:
                ttl.copy(b, out[0, 0]).wait()

    return op


def _sources(op, *tensors) -> dict[str, str]:
    from tilefold.codegen.cpp import emit_kernel

    return {k.source_file: emit_kernel(k.function) for k in compiled(op, *tensors).program.kernels}


def _jobs(op, folder, check_kernel) -> list:
    """check-kernel jobs (path, role, compile args) of the op's compute and reader kernels."""
    from tilefold.codegen.cpp import emit_kernel

    program = compiled(op, tile_tensor((32, 32)), zeros((32, 32))).program
    jobs = []
    for k in program.kernels:
        if k.is_compute or k.processor == "RISCV_0":
            path = folder / k.source_file
            path.write_text(emit_kernel(k.function))
            jobs.append((path, "compute" if k.is_compute else "reader", check_kernel.accessor_compile_args(program, k)))
    return jobs


def test_the_cpp_includes_the_header_and_calls_the_function(tmp_path):
    header = tmp_path / "ext.hpp"
    header.write_text(HEADER)
    sources = _sources(_extern_op(str(header)), tile_tensor((32, 32)), zeros((32, 32)))
    filecheck(sources["compute.cpp"], f"""
CHECK: struct DFBDescriptor {{
CHECK: #include "{header}"
CHECK: void kernel_main() {{
CHECK: constexpr uint32_t [[IN:in_dfb]] = get_compile_time_arg_val(0);
CHECK: constexpr uint32_t [[OUT:out_dfb]] = get_compile_time_arg_val(1);
CHECK: int32_t [[COUNT:count]] = ext::scaled_pages([[IN]], 3);
CHECK-NEXT: ext::consume([[COUNT]] + 1);
CHECK-NEXT: ext::describe<ttlang::DFBDescriptor<[[OUT]], 1, 2, 2048>, -3, true, 1069547520U>([[IN]]);
CHECK: cb_push_back([[OUT]], 1);
""")
    filecheck(sources["read.cpp"], f"""
CHECK: #include "{header}"
CHECK: constexpr uint32_t [[IN:in_dfb]] = get_compile_time_arg_val(0);
CHECK: noc_async_read_barrier();
CHECK: ext::by_index<[[IN]]>();
""")
    assert "#include" not in sources["write.cpp"].split('dataflow_api.h"')[1]


def test_the_kernels_pass_check_kernel_with_a_real_header(tmp_path, check_kernel):
    header = tmp_path / "ext.hpp"
    header.write_text(HEADER)
    jobs = _jobs(_extern_op(str(header)), tmp_path, check_kernel)
    assert sorted(j[1] for j in jobs) == ["compute", "reader"]
    for result in check_kernel.check_kernels(jobs):        # compute (TRISCs) and reader (BRISC, NCRISC)
        check_kernel.require_accepted(result)


def test_a_wrong_call_is_rejected_by_check_kernel(tmp_path, check_kernel):
    """check-kernel really compiles the call against the header: a wrong template value fails."""
    header = tmp_path / "ext.hpp"
    header.write_text(HEADER.replace("Out::block_count == 2", "Out::block_count == 3"))
    jobs = _jobs(_extern_op(str(header)), tmp_path, check_kernel)
    compute = next(j for j in jobs if j[1] == "compute")
    result = check_kernel.check_kernel(compute[0], "trisc1", compute[2])
    if result.returncode in (check_kernel.SETUP_FAILED, check_kernel.SKIPPED):
        pytest.skip(result.output[-300:])
    assert result.rejected and "two blocks" in result.output


def test_compile_only_builds_the_operation_and_its_cpp_without_running(monkeypatch):
    import tilefold.run.ttl as runner

    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    emitted = []
    original = runner.emit_kernels
    monkeypatch.setattr(runner, "emit_kernels", lambda c: emitted.append(original(c)) or emitted[-1])
    out = zeros((32, 32))
    assert _extern_op(FAKE_HEADER)(tile_tensor((32, 32)), out) is None
    assert not ttnn.to_numpy(out).any()                     # not run
    assert f'#include "{FAKE_HEADER}"' in emitted[0]["compute"]
    assert "ext::scaled_pages(in_dfb, 3)" in emitted[0]["compute"]


def _simulated_op(header):
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with in_dfb.wait() as i, out_dfb.reserve() as o:
                o.store(ttl.math.abs(i))
            with in_dfb.wait(), out_dfb.reserve():
                ttl.call_extern_func(header, "ext_add", func_args=[in_dfb, out_dfb])  # error

        @ttl.datamovement()
        def read():
            for _ in range(2):
                with in_dfb.reserve() as b:
                    ttl.copy(inp[0, 0], b).wait()

        @ttl.datamovement()
        def write():
            for _ in range(2):
                with out_dfb.wait() as b:
                    ttl.copy(b, out[0, 0]).wait()

    return op


def test_the_simulator_stops_at_the_call_naming_the_function_and_header(monkeypatch):
    monkeypatch.delenv("TTLANG_COMPILE_ONLY", raising=False)
    expect_error(lambda: _simulated_op(FAKE_HEADER)(tile_tensor((32, 32)), zeros((32, 32))), _simulated_op,
                 SimulationError, f"the simulator cannot run C++ from {FAKE_HEADER}; ext_add()", "TTLANG_COMPILE_ONLY")


def _misuse_op(kind):
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with in_dfb.wait() as blk:
                if kind == "header":
                    ttl.call_extern_func(42, "f")  # error
                elif kind == "result":
                    ttl.call_extern_func(FAKE_HEADER, "f", result_type="i32")  # error
                elif kind == "arg":
                    ttl.call_extern_func(FAKE_HEADER, "f", func_args=[blk])  # error
                elif kind == "name":
                    ttl.call_extern_func(FAKE_HEADER, "not a name")  # error
                elif kind == "template":
                    ttl.call_extern_func(FAKE_HEADER, "f", template_args=[in_dfb])  # error
                elif kind == "kernel":
                    ttl.call_extern_func(FAKE_HEADER, "f", kernel=ttl.KernelKind.DATA_MOVEMENT)  # error
                elif kind == "tensor":
                    ttl.call_extern_func(FAKE_HEADER, "f", func_args=[inp])  # error
                elif kind == "keyword":
                    ttl.call_extern_func(FAKE_HEADER, "f", arguments=[1])  # error
                elif kind == "raw_addr":
                    ttl.call_extern_func(FAKE_HEADER, "f", func_args=[ttl.raw_addr(in_dfb)])  # error

        @ttl.datamovement()
        def read():
            with in_dfb.reserve() as b:
                ttl.copy(inp[0, 0], b).wait()

    return op


@pytest.mark.parametrize("kind, fragments", [
    ("header", ["the header must be a string", "not int 42"]),
    ("result", ["result_type must be a ttl.ScalarType (I32, I64, U32, BOOL) or None", "'i32'"]),
    ("arg", ["func_args[0] must be a scalar", "or a dataflow buffer, not block blk"]),
    ("name", ["the function name must be a C++ name"]),
    ("template", ["template_args[0] is dataflow buffer in_dfb, which is ambiguous", "ttl.get_dfb_id(in_dfb)"]),
    ("kernel", ["kernel= selects a data movement kernel, but this is a compute kernel"]),
    ("keyword", ["has no argument arguments="]),
    ("raw_addr", ["ttl.raw_addr(tensor) takes one tensor argument of the operation"]),
    ("tensor", ["func_args[0] is tensor inp, which the C++ gets as its TensorAccessor",
                "make the call in a @ttl.datamovement() kernel"]),
])
def test_misuse_is_an_error_at_the_users_line(monkeypatch, kind, fragments):
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")

    def run():
        _misuse_op(kind)(tile_tensor((32, 32)), zeros((32, 32)))

    with pytest.raises(KernelError) as info:
        run()
    import inspect

    lines, start = inspect.getsourcelines(_misuse_op)
    line = next(start + i for i, text in enumerate(lines) if f'"{kind}":' in text) + 1
    message = str(info.value)
    assert message.startswith(f"{inspect.getsourcefile(_misuse_op)}:{line}: "), message
    for fragment in fragments:
        assert fragment in message, message


def test_outside_a_kernel_function_it_is_an_error():
    with pytest.raises(KernelError, match="ttl.call_extern_func describes work on the device"):
        ttl.call_extern_func(FAKE_HEADER, "f")


def test_a_body_without_kernel_functions_places_calls_by_kernel(monkeypatch):
    @ttl.operation()
    def helper():
        flag: int = ttl.call_extern_func(FAKE_HEADER, "flag", result_type=ttl.ScalarType.I64,
                                         kernel=(ttl.KernelKind.COMPUTE, ttl.KernelKind.DATA_MOVEMENT))
        if flag:
            ttl.call_extern_func(FAKE_HEADER, "consume", func_args=[flag],
                                 kernel=(ttl.KernelKind.COMPUTE, ttl.KernelKind.DATA_MOVEMENT))

    @ttl.operation(grid=(1, 1))
    def composed(inp):
        helper()

    @ttl.operation(grid=(1, 1))
    def unified(inp, out):
        in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
        with in_dfb.reserve() as b:
            ttl.copy(inp[0, 0], b).wait()
        with in_dfb.wait(), out_dfb.reserve():
            ttl.call_extern_func(FAKE_HEADER, "ext_add", func_args=[in_dfb, out_dfb])
        ttl.call_extern_func(FAKE_HEADER, "mark", kernel=ttl.KernelKind.DATA_MOVEMENT)
        with out_dfb.wait() as b:
            ttl.copy(b, out[0, 0]).wait()

    sources = _sources(composed, tile_tensor((32, 32)))
    assert sorted(sources) == ["composed_compute.cpp", "composed_read.cpp"]
    for text in sources.values():
        filecheck(text, """
CHECK: int64_t [[F:.*]] = flag();
CHECK-NEXT: if ([[F]] != 0) {
CHECK-NEXT: consume([[F]]);
""")
    sources = _sources(unified, tile_tensor((32, 32)), zeros((32, 32)))
    assert "ext_add(in_dfb, out_dfb);" in sources["unified_compute.cpp"]
    assert "mark();" in sources["unified_read.cpp"]
    assert "mark()" not in sources["unified_compute.cpp"] + sources["unified_write.cpp"]


READER = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)


def test_a_kernel_selector_and_buffer_effects_in_a_composed_body(monkeypatch):
    """``kernel=`` naming a ``ttl.Kernel`` of the module goes to that kernel of a body without kernel
    functions; ``ttl.DFBAccess`` / ``ttl.DFBEffect`` describe the C++'s buffer use (no C++ of their
    own) and ``condition_result=ttl.DispatchCondition(type)`` gives the call a result of that type."""
    active = ttl.DispatchCondition(ttl.ScalarType.I64)

    @ttl.operation()
    def helper(source: ttl.DFB):
        ttl.call_extern_func(FAKE_HEADER, "reader_entry", func_args=[source], kernel=READER,
                             dfb_accesses=[ttl.DFBAccess.inspect(source)],
                             dfb_effects=[ttl.DFBEffect.repeat(2, [ttl.DFBEffect.reserve(source, tiles=1),
                                                                   ttl.DFBEffect.push(source, tiles=1)])])
        go: int = ttl.call_extern_func(FAKE_HEADER, "active", condition_result=active,
                                       kernel=ttl.KernelKind.COMPUTE)
        if go:
            ttl.call_extern_func(FAKE_HEADER, "consume", func_args=[go], kernel=ttl.KernelKind.COMPUTE)

    @ttl.operation(grid=(1, 1))
    def composed(inp):
        source = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        helper(source)
        helper(source)

    sources = _sources(composed, tile_tensor((32, 32)))
    assert sources["composed_read.cpp"].count("reader_entry(") == 2
    assert "reader_entry" not in sources["composed_compute.cpp"]
    filecheck(sources["composed_compute.cpp"], """
CHECK: int64_t [[F:.*]] = active();
CHECK-NEXT: if ([[F]] != 0) {
CHECK-NEXT: consume([[F]]);
""")

    @ttl.operation(grid=(1, 1))
    def wrong(inp):
        source = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            ttl.call_extern_func(FAKE_HEADER, "f", dfb_effects=[ttl.DFBEffect.wait(source, tiles=-1)])  # error

    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    expect_error(lambda: wrong(tile_tensor((32, 32))), test_a_kernel_selector_and_buffer_effects_in_a_composed_body,
                 KernelError, "ttl.DFBEffect.wait(dfb, tiles=...) takes a non-negative integer")


def test_a_project_copies_a_header_given_by_a_relative_path(tmp_path, monkeypatch):
    from tilefold.codegen.cpp import HostData, write_project

    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "ext.hpp").write_text(HEADER)
    monkeypatch.chdir(folder)                       # a relative header is found in the working folder too
    program = compiled(_extern_op("ext.hpp"), tile_tensor((32, 32)), zeros((32, 32))).program
    data = HostData(inputs={"inp": bytes(2048), "out": bytes(2048)})
    project = tmp_path / "project"
    write_project(program, project, data)
    assert (project / "ext.hpp").read_text() == HEADER
    assert '#include "ext.hpp"' in (project / "compute.cpp").read_text()


def test_a_project_refuses_a_header_that_is_not_on_disk(tmp_path):
    from tilefold.codegen.cpp import HostData, write_project

    program = compiled(_simulated_op(FAKE_HEADER), tile_tensor((32, 32)), zeros((32, 32))).program
    data = HostData(inputs={"inp": bytes(2048), "out": bytes(2048)})
    with pytest.raises(CompileError) as info:
        write_project(program, tmp_path / "project", data)
    import inspect

    assert str(info.value).startswith(f"{inspect.getsourcefile(_simulated_op)}:{marked_line(_simulated_op)}: ")
    assert f"the header {FAKE_HEADER!r} of ext_add() (ttl.call_extern_func) is not a file on disk" in str(info.value)
    assert not (tmp_path / "project").exists()


def test_template_arguments_spread_from_a_captured_tuple():
    extra = (17, False)

    @ttl.operation(grid=(1, 1))
    def op(inp):
        scratch = ttl.make_dataflow_buffer_like(inp, shape=(2, 1), block_count=3)

        @ttl.compute()
        def compute():
            ttl.call_extern_func(FAKE_HEADER, "shim", template_args=[ttl.dfb_descriptor(scratch), *extra, -1.0,
                                                                     ttl.get_dfb_id(scratch)])

    text = _sources(op, tile_tensor((32, 32)))["compute.cpp"]
    assert "shim<ttlang::DFBDescriptor<scratch, 2, 3, 2048>, 17, false, 3212836864U, scratch>();" in text


ACCESSOR_HEADER = """#pragma once
#include <cstdint>

namespace ext {
// the NOC address of a tensor's page, through the TensorAccessor the kernel passes
template <typename Accessor>
inline uint64_t page_address(const Accessor& tensor, uint32_t page) { return tensor.get_noc_addr(page); }
}  // namespace ext
"""


def _tensor_argument_op(header):
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def read():
            address = ttl.call_extern_func(header, "ext::page_address", func_args=[inp, 0],
                                           result_type=ttl.ScalarType.U32)
            with in_dfb.reserve() as b:
                ttl.copy(inp[0, 0], b).wait()
            ttl.call_extern_func(header, "ext::page_address", func_args=[out, address])

        @ttl.datamovement()
        def write():
            with in_dfb.wait() as b:
                ttl.copy(b, out[0, 0]).wait()

    return op


def test_a_tensor_argument_is_passed_as_its_tensor_accessor(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    header = tmp_path / "ext.hpp"
    header.write_text(ACCESSOR_HEADER)
    program = compiled(_tensor_argument_op(str(header)), tile_tensor((32, 32)), zeros((32, 32))).program
    reader = next(k for k in program.kernels if k.name == "read")
    source = emit_kernel(reader.function)
    filecheck(source, f"""
CHECK: #include "{header}"
CHECK: const auto [[IN:inp]] = TensorAccessor(
CHECK: const auto [[OUT:out]] = TensorAccessor(
CHECK: uint32_t [[ADDRESS:address]] = ext::page_address([[IN]], 0);
CHECK: noc_async_read_page(
CHECK: ext::page_address([[OUT]], [[ADDRESS]]);
""")
    path = tmp_path / "read.cpp"
    path.write_text(source)
    for result in check_kernel.check_kernels([(path, "reader", check_kernel.accessor_compile_args(program, reader))]):
        check_kernel.require_accepted(result)


ADDRESS_HEADER = """#pragma once
#include <cstdint>

namespace ext {
inline void note_address(uint32_t address, uint32_t cb) { (void)address; (void)cb; }
}  // namespace ext
"""


def _raw_address_op(header):
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def read():
            with in_dfb.reserve() as b:
                ttl.copy(inp[0, 0], b).wait()

        @ttl.datamovement()
        def write():
            with in_dfb.wait() as b:
                ttl.copy(b, out[0, 0]).wait()
            ttl.call_extern_func(header, "ext::note_address", func_args=[ttl.raw_addr(out), in_dfb])

    return op


def test_raw_addr_is_the_tensors_address_the_host_passes(tmp_path, check_kernel):
    from tilefold.codegen.cpp import HostData, emit_kernel, write_project
    from checkhost import check_hosts, require_hosts_accepted

    header = tmp_path / "ext.hpp"
    header.write_text(ADDRESS_HEADER)
    program = compiled(_raw_address_op(str(header)), tile_tensor((32, 32)), zeros((32, 32))).program
    writer = next(k for k in program.kernels if k.name == "write")
    source = emit_kernel(writer.function)
    filecheck(source, """
CHECK: uint32_t [[ADDR:out_addr]] = get_arg_val<uint32_t>(0);
CHECK: const auto out = TensorAccessor(out_args, [[ADDR]], 2048);
CHECK: ext::note_address([[ADDR]], in_dfb);
""")
    path = tmp_path / "write.cpp"
    path.write_text(source)
    for result in check_kernel.check_kernels([(path, "writer", check_kernel.accessor_compile_args(program, writer))]):
        check_kernel.require_accepted(result)
    project = tmp_path / "project"
    write_project(program, project, HostData(inputs={"inp": bytes(2048), "out": bytes(2048)}))
    require_hosts_accepted(check_hosts([project / "main.cpp"]))


def test_a_composed_helper_importing_names_from_ttl_in_another_module(monkeypatch, tmp_path):
    """A helper operation whose module imports ``call_extern_func`` by name, called from an
    operation of another module: its inlined calls are still recognized as kernel statements."""
    import importlib
    import sys
    import textwrap

    import tilefold.run.ttl as runner

    (tmp_path / "helper_of_another_module.py").write_text(textwrap.dedent(f'''
        from tilefold.ttl import KernelKind, ScalarType, call_extern_func, operation

        @operation()
        def helper():
            predicate = call_extern_func(
                "{FAKE_HEADER}",
                "alias_result",
                result_type=ScalarType.I64,
                kernel=KernelKind.COMPUTE,
            )
            call_extern_func(
                "{FAKE_HEADER}", "alias_consume", func_args=[predicate], kernel=KernelKind.COMPUTE
            )
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    helper = importlib.import_module("helper_of_another_module").helper
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    emitted = []
    original = runner.emit_kernels
    monkeypatch.setattr(runner, "emit_kernels", lambda c: emitted.append(original(c)) or emitted[-1])

    @ttl.operation(grid=(1, 1))
    def caller(inp):
        helper()

    try:
        caller(tile_tensor((32, 32)))
    finally:
        sys.modules.pop("helper_of_another_module", None)
    assert any("alias_consume(" in source for source in emitted[0].values()), emitted


def test_a_buffer_whose_blocks_the_cpp_moves_is_left_to_the_cpp(monkeypatch):
    """``dfb_effects=``: the C++ waits on and pops ``in_dfb`` and reserves and pushes ``res_dfb``; the
    reader's pushes into ``in_dfb`` stay (they are not a dropped result) and the writer's wait on
    ``res_dfb`` is no count mismatch."""
    import tilefold.run.ttl as runner

    @ttl.operation(grid=(1, 1))
    def extern_copy(inp, out):
        in_dfb = ttl.make_dfb("bf16", shape=(1, 1), block_count=2)
        res_dfb = ttl.make_dfb("bf16", shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def read():
            with in_dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()

        @ttl.datamovement()
        def write():
            ttl.call_extern_func(FAKE_HEADER, "copy_dfb",
                                 template_args=[ttl.dfb_descriptor(in_dfb), ttl.dfb_descriptor(res_dfb)],
                                 dfb_effects=[ttl.DFBEffect.repeat(1, [ttl.DFBEffect.reserve(res_dfb, tiles=1),
                                                                       ttl.DFBEffect.wait(in_dfb, tiles=1)]),
                                              ttl.DFBEffect.push(res_dfb, tiles=1), ttl.DFBEffect.pop(in_dfb, tiles=1)])
            with res_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    emitted = []
    original = runner.emit_kernels
    monkeypatch.setattr(runner, "emit_kernels", lambda c: emitted.append(original(c)) or emitted[-1])
    extern_copy(tile_tensor((32, 32)), zeros((32, 32)))
    assert "cb_push_back" in emitted[0]["read"] and "copy_dfb<" in emitted[0]["write"]


def test_kernels_made_in_the_body_are_the_reader_then_the_writer_and_a_third_is_an_error(monkeypatch):
    """``ttl.Kernel(DATA_MOVEMENT)`` objects made in a body without kernel functions select kernels
    as those of the module do: the first one selected is the reader, the second the writer; a node
    runs two data movement kernels, so a third is an error at its ``kernel=``."""
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    first = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)

    @ttl.operation(grid=(1, 1))
    def two(inp):
        second = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
        ttl.call_extern_func(FAKE_HEADER, "first_entry", kernel=first)
        ttl.call_extern_func(FAKE_HEADER, "second_entry", kernel=second)
        ttl.call_extern_func(FAKE_HEADER, "both_entry", kernel=(first, second))

    sources = _sources(two, tile_tensor((32, 32)))
    read, write = sources["two_read.cpp"], sources["two_write.cpp"]
    assert "first_entry();" in read and "second_entry" not in read and "both_entry();" in read
    assert "second_entry();" in write and "first_entry" not in write and "both_entry();" in write

    @ttl.operation(grid=(1, 1))
    def three(inp):
        a = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
        b = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
        c = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
        ttl.call_extern_func(FAKE_HEADER, "f", kernel=a)
        ttl.call_extern_func(FAKE_HEADER, "f", kernel=b)
        ttl.call_extern_func(FAKE_HEADER, "f", kernel=c)  # error

    expect_error(lambda: three(tile_tensor((32, 32))),
                 test_kernels_made_in_the_body_are_the_reader_then_the_writer_and_a_third_is_an_error, KernelError,
                 "third data movement ttl.Kernel", "a node runs two data movement kernels")


def test_a_call_selecting_other_kernels_inside_a_block_one_kernel_holds_is_an_error(monkeypatch):
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")

    @ttl.operation(grid=(1, 1))
    def op(inp):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
        with dfb.reserve() as b:
            ttl.copy(inp[0, 0], b).wait()
        with dfb.wait() as blk:
            ttl.copy(blk, inp[0, 0]).wait()
            ttl.call_extern_func(FAKE_HEADER, "f", kernel=(ttl.KernelKind.COMPUTE, ttl.KernelKind.DATA_MOVEMENT))  # error

    expect_error(lambda: op(tile_tensor((32, 32))),
                 test_a_call_selecting_other_kernels_inside_a_block_one_kernel_holds_is_an_error, KernelError,
                 "selects the compute kernel", "inside a statement the writer kernel runs")


def test_interface_preserved_access_and_an_unknown_access_name(monkeypatch):
    """``ttl.DFBAccess.interface_preserved(dfb)`` (the C++ reads the buffer's interface and leaves
    it as it was) builds like ``inspect``; a name ``ttl.DFBAccess`` lacks is one clear error."""
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")

    @ttl.operation(grid=(1, 1))
    def op(inp):
        fmt = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

        @ttl.compute()
        def compute():
            ttl.call_extern_func(FAKE_HEADER, "inspect_dfb_interface", template_args=[ttl.dfb_descriptor(fmt)],
                                 dfb_accesses=[ttl.DFBAccess.interface_preserved(fmt)])

        @ttl.datamovement()
        def read():
            pass

    assert "inspect_dfb_interface<" in _sources(op, tile_tensor((32, 32)))["compute.cpp"]

    @ttl.operation(grid=(1, 1))
    def unknown(inp):
        fmt = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

        @ttl.compute()
        def compute():
            ttl.call_extern_func(FAKE_HEADER, "f", dfb_accesses=[ttl.DFBAccess.frobnicate(fmt)])  # error

        @ttl.datamovement()
        def read():
            pass

    expect_error(lambda: unknown(tile_tensor((32, 32))), test_interface_preserved_access_and_an_unknown_access_name,
                 KernelError, "ttl.DFBAccess.frobnicate is not supported by tilefold yet")


def test_kernel_selectors_written_every_way_tt_lang_allows(monkeypatch):
    """A ``ttl.Kernel`` made from a kind held in a variable, a name bound to a ``ttl.KernelKind`` in
    the body, ``ttl.Kernel(...)`` written in the call, kinds joined with ``|``, and a body name made
    a second ``ttl.Kernel`` (a kernel of its own) all select as written."""
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    kind = ttl.KernelKind.DATA_MOVEMENT

    @ttl.operation(grid=(1, 1))
    def op(inp):
        from_variable = ttl.Kernel(kind)
        dm = ttl.KernelKind.DATA_MOVEMENT
        ttl.call_extern_func(FAKE_HEADER, "variable_entry", kernel=from_variable)
        ttl.call_extern_func(FAKE_HEADER, "alias_entry", kernel=dm)
        ttl.call_extern_func(FAKE_HEADER, "both_entry", kernel=ttl.KernelKind.COMPUTE | ttl.KernelKind.DATA_MOVEMENT)
        ttl.call_extern_func(FAKE_HEADER, "inline_entry", kernel=ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT))

    sources = _sources(op, tile_tensor((32, 32)))
    read, write, compute = sources["op_read.cpp"], sources["op_write.cpp"], sources["op_compute.cpp"]
    assert all(f"{name}();" in read for name in ("variable_entry", "alias_entry", "both_entry"))
    assert "both_entry();" in compute and "variable_entry" not in compute
    assert "inline_entry();" in write                  # a second data movement ttl.Kernel: the writer

    @ttl.operation(grid=(1, 1))
    def rebound(inp):
        again = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
        ttl.call_extern_func(FAKE_HEADER, "first_entry", kernel=again)
        again = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
        ttl.call_extern_func(FAKE_HEADER, "second_entry", kernel=again)

    sources = _sources(rebound, tile_tensor((32, 32)))
    assert "first_entry();" in sources["rebound_read.cpp"] and "second_entry();" in sources["rebound_write.cpp"]

    @ttl.operation(grid=(1, 1))
    def inside(inp):
        r = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
        w = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
        ttl.call_extern_func(FAKE_HEADER, "r_entry", kernel=r)
        ttl.call_extern_func(FAKE_HEADER, "w_entry", kernel=w)
        with dfb.reserve() as b:
            ttl.copy(inp[0, 0], b).wait()
            ttl.call_extern_func(FAKE_HEADER, "inside", kernel=w)  # error
        with dfb.wait() as b:
            ttl.copy(b, inp[0, 0]).wait()

    expect_error(lambda: inside(tile_tensor((32, 32))), test_kernel_selectors_written_every_way_tt_lang_allows,
                 KernelError, "selects the writer kernel", "inside a statement the reader kernel runs")


def test_release_selectors_in_a_body_without_kernel_functions(monkeypatch):
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")

    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        r = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
        w = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
        ttl.call_extern_func(FAKE_HEADER, "r_entry", kernel=r)
        ttl.call_extern_func(FAKE_HEADER, "w_entry", kernel=w)
        b = dfb.reserve()
        ttl.copy(inp[0, 0], b).wait()
        b.push(kernel=r)
        c = dfb.wait()
        ttl.copy(c, out[0, 0]).wait()
        c.pop(kernel=w)

    sources = _sources(op, tile_tensor((32, 32)), zeros((32, 32)))
    assert "cb_push_back" in sources["op_read.cpp"] and "cb_pop_front" in sources["op_write.cpp"]


@pytest.mark.parametrize("handed", ["get_dfb_id", "dfb_descriptor", "unknown_dfb_access"])
def test_a_buffer_handed_to_cpp_without_a_description_is_left_out_of_the_block_counts(handed, monkeypatch):
    """The C++ may push into a buffer it is handed (its index or descriptor type) when the call does
    not say what it does with it, or into any buffer with ``unknown_dfb_access=True``: a consumer
    waiting for blocks no kernel of the operation pushes is then not a mistake when it is built. A
    description of the call's effects keeps the buffer counted (a compile-only build warns of it)."""
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")

    def operation(described: bool):
        @ttl.operation(grid=(1, 1))
        def op(out):
            out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

            @ttl.datamovement()
            def dm():
                accesses = [ttl.DFBAccess.inspect(out_dfb)] if described else []
                if handed == "get_dfb_id":
                    ttl.call_extern_func(FAKE_HEADER, "produce", template_args=[ttl.get_dfb_id(out_dfb)],
                                         dfb_accesses=accesses)
                elif handed == "dfb_descriptor":
                    ttl.call_extern_func(FAKE_HEADER, "produce", template_args=[ttl.dfb_descriptor(out_dfb)],
                                         dfb_accesses=accesses)
                else:
                    ttl.call_extern_func(FAKE_HEADER, "produce", unknown_dfb_access=not described)
                blk = out_dfb.wait()
                ttl.copy(blk, out[0, 0]).wait()
                blk.pop()

        return op

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")          # left out: not even the warning of a compile-only build
        compiled(operation(described=False), zeros((32, 32)))
    # counted: the compile-only build warns (and goes on, as TT-Lang builds such kernels)
    with pytest.warns(UserWarning, match="out_dfb is waited for 1 time but its producer pushes only 0 blocks"):
        compiled(operation(described=True), zeros((32, 32)))

"""TT-Metalium 0.69 device kernels (.cpp) from ttkernel functions.

Reads: one ``func.func`` of a ttkernel module (``ttkernel.thread`` = ``noc`` or ``compute``).
Writes: the text of one kernel source file: the ``#include`` lines the kernel needs and
``void kernel_main() { ... }`` (the 0.69 form for data-movement and compute kernels alike).

Data-movement kernels include ``api/dataflow/dataflow_api.h``; compute kernels include the
``api/compute/...`` header of every API function they call (from the API table),
deduplicated and sorted (a header that needs another before it, ``HEADER_PREREQUISITES``, comes
after it), with ``api/compute/common.h`` for the calls every kernel kind has
(runtime arguments, circular buffers), preceded by ``#define`` lines for the macros a header
reads (``HEADER_MACROS``: ``REDUCE_OP`` / ``REDUCE_DIM`` for ``reduce.h``). The body is printed by
:class:`tilefold.codegen.cpp.statements.BodyPrinter`.

A kernel with external calls (``ttl.call_extern_func``) then defines ``ttlang::DFBDescriptor``
and includes the user's headers, each as the user wrote its path.

Errors: :class:`CompileError` for a function that is not a kernel (no thread kind and no
API call that tells it) or that holds ops the emitter does not print.
"""

from __future__ import annotations

from xdsl.dialects import func

from tilefold.codegen.cpp.statements import BodyPrinter
from tilefold.errors import CompileError
from tilefold.ir.locations import source_location
from tilefold.ir.ttkernel import (ApiCallOp, AssertInRangeOp, DPrintCBOp, DPrintOp, DPrintTilesOp, ExternCallOp,
                                  KernelAssertOp, kernel_thread)
from tilefold.ir.ttkernel_api import HEADER_MACROS, HEADER_PREREQUISITES

DATAFLOW_HEADER = "api/dataflow/dataflow_api.h"
COMPUTE_COMMON_HEADER = "api/compute/common.h"
ASSERT_HEADER = "api/debug/assert.h"
DPRINT_HEADER = "api/debug/dprint.h"
# before the headers of external calls: a dataflow buffer as a C++ type (``ttl.dfb_descriptor``)
DFB_DESCRIPTOR_PRELUDE = """#include <cstdint>

namespace ttlang {
// a dataflow buffer as a type: circular buffer index, pages per block, block count, page bytes
template <uint32_t Index, uint32_t PagesPerBlock, uint32_t BlockCount, uint32_t PageSizeBytes>
struct DFBDescriptor {
    static constexpr uint32_t index = Index;
    static constexpr uint32_t pages_per_block = PagesPerBlock;
    static constexpr uint32_t block_count = BlockCount;
    static constexpr uint32_t page_size_bytes = PageSizeBytes;
};
}  // namespace ttlang"""


def thread_kind(kernel: func.FuncOp) -> str:
    """``noc`` or ``compute``: the function's ``ttkernel.thread``, else what its API calls imply."""
    thread = kernel_thread(kernel)
    if thread in ("noc", "compute"):
        return thread
    threads = {op.api.thread for op in kernel.walk() if isinstance(op, ApiCallOp)} - {"any"}
    if len(threads) == 1:
        return threads.pop()
    raise CompileError(f"@{kernel.sym_name.data} is not marked as a data-movement or compute kernel; set its "
                       "ttkernel.thread attribute to \"noc\" or \"compute\"", source_location(kernel))


def kernel_headers(kernel: func.FuncOp) -> list[str]:
    """The headers a kernel includes, in include order."""
    ops = list(kernel.walk())
    asserts = [ASSERT_HEADER] if any(isinstance(op, (AssertInRangeOp, KernelAssertOp)) for op in ops) else []
    asserts += [DPRINT_HEADER] if any(isinstance(op, (DPrintOp, DPrintTilesOp, DPrintCBOp)) for op in ops) else []
    if thread_kind(kernel) == "noc":
        return [DATAFLOW_HEADER, *asserts]
    headers = {op.api.header or COMPUTE_COMMON_HEADER for op in kernel.walk() if isinstance(op, ApiCallOp)}
    ordered = [h for header in sorted(headers or {COMPUTE_COMMON_HEADER})
               for h in (*HEADER_PREREQUISITES.get(header, ()), header)]
    return list(dict.fromkeys(ordered)) + asserts


def extern_headers(kernel: func.FuncOp) -> list[str]:
    """The user's headers of the kernel's external calls (``ttl.call_extern_func``), as written,
    in order of first use."""
    return list(dict.fromkeys(op.header.data for op in kernel.walk() if isinstance(op, ExternCallOp)))


def header_macros(kernel: func.FuncOp, headers: list[str]) -> list[str]:
    """``#define`` lines for the macros the included headers read (``HEADER_MACROS``), each set
    to the template value of the kernel's first call that has that template parameter."""
    calls = [op for op in kernel.walk() if isinstance(op, ApiCallOp)]
    lines = []
    for header in headers:
        for macro, template in HEADER_MACROS.get(header, ()):
            value = next((op.template_values()[template.name] for op in calls
                          if template in op.api.templates), template.default)
            lines.append(f"#define {macro} {template.kind}::{value}")
    return lines


def emit_kernel(kernel: func.FuncOp, source_comments: bool = True) -> str:
    """The C++ source of one kernel. With ``source_comments``, the first statement printed from
    each line of the user's Python source is preceded by ``// file.py:LINE``."""
    kind = "compute" if thread_kind(kernel) == "compute" else "data-movement"
    body = BodyPrinter(kernel, source_comments).lines()
    headers = kernel_headers(kernel)
    lines = [f"// {kernel.sym_name.data}: {kind} kernel generated by tilefold.", ""]
    macros = header_macros(kernel, headers)
    lines += [*macros, ""] if macros else []
    lines += [f'#include "{header}"' for header in headers]
    external = extern_headers(kernel)
    if external:
        lines += ["", DFB_DESCRIPTOR_PRELUDE, "", *[f'#include "{header}"' for header in external]]
    lines += ["", "void kernel_main() {", *body, "}"]
    return "\n".join(lines) + "\n"

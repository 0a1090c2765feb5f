"""Test helper: check generated TT-Metalium kernels with ``check-kernel`` (g++ against the real 0.69 headers).

Reads: kernel .cpp files. Writes: nothing. ``check_kernels`` runs many checks at once (one
process each, in parallel); ``require_accepted`` turns a result into a test outcome: accepted
passes, rejected fails with g++'s errors, "skipped" (exit 3: compute kernels without the SFPI
headers) fails when the SFPI headers are bundled beside the tool (``check-kernel.d/sfpi-*``) or
named by ``$SFPI_INCLUDE`` and skips otherwise, and setup failures (exit 2, e.g. no network for
the first download) skip with the tool's own message — never a pass. ``accessor_compile_args`` expands a Program kernel's
compile-time arguments the way ``TensorAccessorArgs(*buffer).append_to`` does on the host, for
``CT_ARGS``.

Use from a test file: ``from checkkernel import check_kernels, require_accepted`` (the
``tests/`` folder is put on ``sys.path`` by ``tests/codegen/conftest.py``; other test folders
can do the same or use its ``check_kernel`` fixture).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

def _find_check_kernel() -> Path:
    """``$CHECK_KERNEL``, else ``shared/tools/check-kernel`` beside the checkout or any folder above it."""
    if os.environ.get("CHECK_KERNEL"):
        return Path(os.environ["CHECK_KERNEL"])
    repo = Path(__file__).resolve().parents[1]
    for folder in repo.parents:
        candidate = folder / "shared" / "tools" / "check-kernel"
        if candidate.exists():
            return candidate
    return repo.parent / "shared" / "tools" / "check-kernel"


CHECK_KERNEL = _find_check_kernel()
# the SFPI headers compute kernels need: bundled beside check-kernel, or named by $SFPI_INCLUDE
SFPI_HEADERS = [Path(os.environ["SFPI_INCLUDE"])] if os.environ.get("SFPI_INCLUDE") else \
    sorted((CHECK_KERNEL.parent / "check-kernel.d").glob("sfpi-*"))
ACCEPTED, REJECTED, SETUP_FAILED, SKIPPED = 0, 1, 2, 3
ROLES = ("reader", "writer", "dataflow", "compute", "brisc", "ncrisc", "trisc0", "trisc1", "trisc2")


@dataclass(frozen=True)
class CheckResult:
    path: Path
    role: str
    returncode: int
    output: str

    @property
    def accepted(self) -> bool:
        return self.returncode == ACCEPTED

    @property
    def rejected(self) -> bool:
        return self.returncode == REJECTED


def _run(path: Path, role: str, ct_args: list[int] | None, timeout: float) -> CheckResult:
    if not CHECK_KERNEL.exists():
        return CheckResult(path, role, SETUP_FAILED, f"check-kernel not found at {CHECK_KERNEL}")
    if shutil.which("g++") is None:
        return CheckResult(path, role, SETUP_FAILED, "g++ is not installed")
    env = dict(os.environ)
    if ct_args is not None:
        env["CT_ARGS"] = ",".join(str(int(a)) for a in (ct_args or [0]))
    try:
        proc = subprocess.run([str(CHECK_KERNEL), str(path), role], capture_output=True, text=True, env=env,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return CheckResult(path, role, SETUP_FAILED, f"check-kernel took longer than {timeout} s")
    return CheckResult(path, role, proc.returncode, (proc.stdout + proc.stderr).strip())


def check_kernels(jobs, timeout: float = 300.0, workers: int | None = None) -> list[CheckResult]:
    """Run ``check-kernel`` for each ``(path, role)`` or ``(path, role, ct_args)`` job, in parallel."""
    normalized = []
    for job in jobs:
        path, role, *rest = job
        if role not in ROLES:
            raise ValueError(f"role {role!r} is not one of {', '.join(ROLES)}")
        normalized.append((Path(path), role, rest[0] if rest else None))
    workers = workers or max(1, min(len(normalized), os.cpu_count() or 1, 8))
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda j: _run(*j, timeout), normalized))


def check_kernel(path, role: str, ct_args: list[int] | None = None) -> CheckResult:
    return check_kernels([(path, role, ct_args)])[0]


def require_accepted(result: CheckResult) -> None:
    """Pass when accepted; fail when rejected, or skipped although the SFPI headers exist; skip
    when check-kernel skipped without them or could not set up."""
    if result.returncode == SKIPPED and SFPI_HEADERS:
        pytest.fail(f"check-kernel skipped {result.path.name} although the SFPI headers are at {SFPI_HEADERS[0]}: "
                    f"{result.output[-500:]}")
    if result.returncode == SKIPPED:
        pytest.skip(f"check-kernel skipped {result.path.name}: {result.output.splitlines()[-1]}")
    if result.returncode == SETUP_FAILED:
        pytest.skip(f"check-kernel could not run for {result.path.name}: {result.output[-500:]}")
    if result.returncode != ACCEPTED:
        pytest.fail(f"check-kernel rejected {result.path.name} ({result.role}):\n{result.output[-4000:]}")


def accessor_compile_args(program, kernel) -> list[int]:
    """A kernel's compile-time arguments with each buffer's ``TensorAccessorArgs`` expanded, as the
    host's ``TensorAccessorArgs(*buffer).append_to(args)`` does."""
    from tilefold.layout.addressing import tensor_accessor_args

    out: list[int] = []
    for arg in kernel.compile_args:
        if isinstance(arg, int):
            out.append(arg)
        else:
            out += tensor_accessor_args(program.buffer(arg.buffer).buffer_layout(), program.arch)
    return out


def compiled_kernel_jobs(compiled, folder, tag: str = "") -> list:
    """check-kernel jobs ``(path, role, compile args)`` for every kernel of a compiled program
    (``program`` and ``kernel_sources()``), its sources written into ``folder``."""
    program, sources = compiled.program, compiled.kernel_sources()
    jobs = []
    for k in program.kernels:
        path = folder / (f"{tag}_{k.source_file}" if tag else k.source_file)
        path.write_text(sources[k.source_file])
        role = "compute" if k.is_compute else ("reader" if k.processor == "RISCV_0" else "writer")
        jobs.append((path, role, accessor_compile_args(program, k) or None))
    return jobs

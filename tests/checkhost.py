"""Test helper: check generated host programs (``main.cpp``) with ``check-host`` (g++ against the
real TT-Metalium 0.69 host API headers).

Reads: ``main.cpp`` files and the quoted headers next to them. Writes: one batch file in a
temporary folder. Parsing the host headers takes most of a check (seconds per file), so
:func:`check_hosts` checks many programs as one translation unit: the ``#include <...>`` lines of
every program and of its quoted headers first, then each program, its quoted headers pasted in,
inside a namespace of its own (its ``int main`` becomes that namespace's function). When the batch is rejected, each program
is checked alone, so every result names its own file and g++'s errors.

:func:`require_hosts_accepted` turns results into a test outcome: accepted passes; rejected fails
with g++'s errors; a missing ``check-host`` or g++ also fails (the headers are bundled with the
tool, so nothing needs a network) — never a skip and never a pass.

Use from a test file: ``from checkhost import check_host, check_hosts, require_hosts_accepted``
(``tests/`` is on ``sys.path``, see ``tests/conftest.py``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from checkkernel import ACCEPTED, SETUP_FAILED, CheckResult


def _find_check_host() -> Path:
    """``$CHECK_HOST``, else ``shared/tools/check-host`` beside the checkout or any folder above it."""
    if os.environ.get("CHECK_HOST"):
        return Path(os.environ["CHECK_HOST"])
    repo = Path(__file__).resolve().parents[1]
    for folder in repo.parents:
        candidate = folder / "shared" / "tools" / "check-host"
        if candidate.exists():
            return candidate
    return repo.parent / "shared" / "tools" / "check-host"


CHECK_HOST = _find_check_host()
_SYSTEM_INCLUDE = re.compile(r"^\s*#\s*include\s*<[^>]+>", re.M)
_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def _run(path: Path, timeout: float) -> CheckResult:
    if not CHECK_HOST.exists():
        return CheckResult(path, "host", SETUP_FAILED, f"check-host not found at {CHECK_HOST}")
    if shutil.which("g++") is None:
        return CheckResult(path, "host", SETUP_FAILED, "g++ is not installed")
    try:
        proc = subprocess.run([str(CHECK_HOST), str(path)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return CheckResult(path, "host", SETUP_FAILED, f"check-host took longer than {timeout} s")
    return CheckResult(path, "host", proc.returncode, (proc.stdout + proc.stderr).strip())


def check_host(path, timeout: float = 600.0) -> CheckResult:
    """``check-host`` on one ``main.cpp``, as it is."""
    return _run(Path(path), timeout)


def _inlined(path: Path, includes: list[str]) -> list[str]:
    """A program's lines with its quoted headers pasted in (``#line`` keeps g++'s file:line right)
    and its system includes moved into ``includes``."""
    out = [f'#line 1 "{path}"']
    for number, line in enumerate(path.read_text().splitlines(), 1):
        local = _LOCAL_INCLUDE.match(line)
        if _SYSTEM_INCLUDE.match(line):
            includes.append(line.strip()) if line.strip() not in includes else None
            out.append("")
        elif re.match(r"^\s*#\s*pragma\s+once", line):
            out.append("")
        elif local and (path.parent / local.group(1)).exists():
            out += _inlined(path.parent / local.group(1), includes) + [f'#line {number + 1} "{path}"']
        else:
            out.append(line)
    return out


def _batch_text(paths: list[Path]) -> str:
    """One translation unit: every system include first, then each program in its own namespace."""
    includes: list[str] = []
    units = []
    for i, path in enumerate(paths):
        units += [f"namespace host_program_{i} {{", *_inlined(path.resolve(), includes), "}"]
    return "\n".join(includes + [""] + units) + "\n"


def check_hosts(paths, timeout: float = 600.0) -> list[CheckResult]:
    """``check-host`` results for many ``main.cpp`` files: one batch check, and one check per file
    only when the batch is rejected."""
    paths = [Path(p) for p in paths]
    if len(paths) <= 1:
        return [_run(p, timeout) for p in paths]
    with tempfile.TemporaryDirectory(prefix="check-host-") as folder:
        batch = Path(folder) / "all_main.cpp"
        batch.write_text(_batch_text(paths))
        result = _run(batch, timeout)
    if result.returncode in (ACCEPTED, SETUP_FAILED):
        return [CheckResult(p, "host", result.returncode, result.output) for p in paths]
    with ThreadPoolExecutor(min(len(paths), os.cpu_count() or 1, 4)) as pool:
        return list(pool.map(lambda p: _run(p, timeout), paths))


def require_hosts_accepted(results: list[CheckResult]) -> None:
    """Pass when every program is accepted; fail otherwise (rejected, or check-host could not run)."""
    assert results, "no host program was checked"
    bad = [r for r in results if r.returncode != ACCEPTED]
    if bad:
        pytest.fail("\n\n".join(f"check-host {'could not check' if r.returncode == SETUP_FAILED else 'rejected'} "
                                f"{r.path}:\n{r.output[-3000:]}" for r in bad))

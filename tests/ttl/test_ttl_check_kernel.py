"""The C++ kernels emitted for every TT-Lang example pass ``check-kernel`` (g++ against the real
TT-Metalium 0.69 headers, with the kernels' real compile-time arguments), and their host programs
pass ``check-host``.

Data-movement kernels are checked on BRISC / NCRISC, compute kernels on the three TRISCs with the
SFPI headers ``check-kernel`` bundles; a check that could not run is a skip, never a pass.
"""

from __future__ import annotations

import pytest

import tilefold.run.ttl as runner
from checkhost import check_hosts, require_hosts_accepted
from tilefold.frontend.ttl import session
from tilefold.codegen.cpp import emit_kernel
from ttl_helpers import load_example

EXAMPLES = {
    "add_multitile": {},
    "eltwise_multitile": {"shape": (128, 128)},
    "eltwise_full_grid": {"shape": (128, 128)},
    "matmul_single_node": {"m": 64, "k": 128, "n": 64},
    "matmul_multinode": {"m": 64, "k": 64, "n": 64},
    "broadcast": {"n": 64, "m": 64},
    "fused_chain": {"shape": (64, 128)},
    "softmax": {"shape": (64, 64)},
    "pipe_multicast": {"rows": 32},
    "matmul_mcast": {"m": 128, "k": 128, "n": 128},
    "row_standardize": {"shape": (2048, 64)},
    "bfp8_inputs": {"shape": (128, 128)},
    "pipe_scatter_gather": {"cols": 1},
    "batched_matmul_bias": {"batches": 2, "m": 32, "k": 64, "n": 32},
    "eltwise_1d_broadcast": {"n": 100},
}


@pytest.fixture(scope="module")
def kernel_checks(tmp_path_factory, check_kernel):
    """Emit every kernel of every example and run check-kernel on all of them at once."""
    programs = []
    original = runner.run_operation

    def recording(operation, capture, compiled, *rest):
        programs.append((capture.name, compiled.program))
        return original(operation, capture, compiled, *rest)

    runner.run_operation = recording
    projects = tmp_path_factory.mktemp("ttl_projects")
    try:
        with session.configured(project_dir=projects):
            for name, kwargs in EXAMPLES.items():
                load_example(name).main(**kwargs)
    finally:
        runner.run_operation = original
    out = tmp_path_factory.mktemp("ttl_kernels")
    jobs, names = [], []
    for op_name, program in programs:
        for k in program.kernels:
            path = out / f"{op_name}__{k.name}.cpp"
            path.write_text(emit_kernel(k.function))
            role = "compute" if k.is_compute else ("reader" if k.processor == "RISCV_0" else "writer")
            jobs.append((path, role, check_kernel.accessor_compile_args(program, k)))
            names.append((op_name, k.name, role))
    return list(zip(names, check_kernel.check_kernels(jobs))), sorted(projects.glob("*/main.cpp"))


def test_data_movement_kernels_are_accepted(kernel_checks, check_kernel):
    checked = [(n, r) for n, r in kernel_checks[0] if n[2] != "compute"]
    assert len(checked) >= 2 * len(EXAMPLES) - 1
    setup = [r for _, r in checked if r.returncode == check_kernel.SETUP_FAILED]
    if setup:
        pytest.skip(f"check-kernel could not run: {setup[0].output[-300:]}")
    rejected = [(n, r.output[-2000:]) for n, r in checked if r.returncode != check_kernel.ACCEPTED]
    assert not rejected, rejected[0]


def test_compute_kernels_are_accepted(kernel_checks, check_kernel):
    checked = [r for n, r in kernel_checks[0] if n[2] == "compute"]
    assert len(checked) == len(EXAMPLES)
    for result in checked:
        check_kernel.require_accepted(result)


def test_host_programs_pass_check_host(kernel_checks):
    """The main.cpp ``tilefold compile`` writes for every example's operation calls."""
    mains = kernel_checks[1]
    assert len(mains) >= len(EXAMPLES)
    require_hosts_accepted(check_hosts(mains))

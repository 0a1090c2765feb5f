"""Scripts written for TT-Lang's tools run unchanged: ``tilefold sim`` (run_script) gives them
``import ttl`` / ``import ttnn``; ``tilefold compile`` (compile_script) writes a project per operation
call with the IR after every pass."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tilefold.errors import KernelError
from tilefold.cli.ttl_scripts import compile_script, run_script, tt_lang_modules

SCRIPTS = Path(__file__).parent / "scripts"
ROOT = Path(__file__).resolve().parents[2]


def _plain_script(tmp_path, body: str) -> Path:
    """``prog.py``: the imports of a script moved to tilefold, an operation ``body`` defining ``op(x)``
    (its first line is the script's line 5), and a call of it on one zero tile."""
    script = tmp_path / "prog.py"
    script.write_text("import numpy as np\nimport tilefold.ttl as ttl\nimport tilefold.ttnn as ttnn\n\n" + body
                      + "\nx = ttnn.from_numpy(np.zeros((32, 32), np.float32), dtype=ttnn.bfloat16, "
                        "layout=ttnn.TILE_LAYOUT)\nop(x)\n")
    return script


def _run_plain(script: Path, full_traceback: bool = False):
    """``python script`` as a user runs it (tilefold importable), with TILEFOLD_TRACEBACK=1 or without."""
    import os
    import subprocess

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("TILEFOLD_TRACEBACK", None)
    if full_traceback:
        env["TILEFOLD_TRACEBACK"] = "1"
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "ttl"


def test_tt_lang_style_script_runs_with_its_own_imports(capsys):
    assert run_script(SCRIPTS / "tt_lang_style_eltwise.py") == 0
    out = capsys.readouterr().out
    assert "PASSED 0.0" in out
    assert "ttl.operation tutorial_operation on a 2x2 grid of n150, simulated:" in out
    assert "estimated device time (cost model)" in out


def test_modules_are_restored_after_the_script():
    before = sys.modules.get("ttl")
    with tt_lang_modules():
        import ttl
        import ttnn

        assert ttl.make_dataflow_buffer_like and ttnn.from_numpy
    assert sys.modules.get("ttl") is before


def test_run_on_blackhole(capsys):
    assert run_script(EXAMPLES / "eltwise_single_tile.py", arch="blackhole") == 0
    assert "of p150" in capsys.readouterr().out


def test_compile_writes_a_project_and_the_ir_after_every_pass(tmp_path):
    paths = compile_script(EXAMPLES / "add_multitile.py", tmp_path, print_ir_after_all=False)
    names = {p.relative_to(tmp_path).as_posix() for p in paths}
    folder = "add_multitile_kernel"
    for kernel in ("add_compute.cpp", "dm_read.cpp", "dm_write.cpp"):
        assert any(n.startswith(folder) and n.endswith(kernel) for n in names), names
    for expected in ("main.cpp", "CMakeLists.txt", "data/lhs.bin", "data/rhs.bin", "data/out.golden.bin",
                     "ir/00-ttl.mlir", "ir/03-ttl-assign-dst.mlir", "ir/08-lower-affine.mlir"):
        assert f"{folder}/{expected}" in names
    assert "ttl.dst_footprint = 2" in (tmp_path / folder / "ir" / "03-ttl-assign-dst.mlir").read_text()
    main = (tmp_path / folder / "main.cpp").read_text()
    assert "CreateCircularBuffer" in main and "EnqueueMeshWorkload" in main


def test_print_ir_after_all_prints_every_stage(tmp_path, capsys):
    compile_script(EXAMPLES / "add_multitile.py", tmp_path, print_ir_after_all=True)
    err = capsys.readouterr().err
    for stage in ("convert-ttl-to-compute", "ttl-assign-dst", "ttl-lower-to-loops", "lower-affine"):
        assert f"// -----// IR Dump After {stage} //----- //" in err


def test_compile_of_a_script_without_an_operation(tmp_path):
    script = tmp_path / "nothing.py"
    script.write_text("import ttl\nx = 1\n")
    with pytest.raises(KernelError) as info:
        compile_script(script, tmp_path / "out")
    assert "ran no TT-Lang operation" in str(info.value)


def test_tutorials_of_the_tt_lang_simulator_if_torch_is_installed(tmp_path):
    torch = pytest.importorskip("torch")
    del torch
    script = tmp_path / "torch_script.py"
    script.write_text((SCRIPTS / "tt_lang_style_eltwise.py").read_text()
                      .replace("import numpy as np", "import numpy as np\nimport torch"))
    assert run_script(script) == 0


HOST_ONLY = """\
import numpy as np, ttnn

device = ttnn.open_device(device_id=0)
a = np.linspace(-2, 2, 64 * 64, dtype=np.float32).reshape(64, 64)
b = np.linspace(1, 3, 64 * 64, dtype=np.float32).reshape(64, 64)
ta = ttnn.from_numpy(a, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
tb = ttnn.from_numpy(b, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
c = ttnn.to_numpy(ttnn.add(ttnn.exp(ta), tb))
np.save(OUT, c)
ttnn.close_device(device)
"""


def test_a_script_of_host_ttnn_calls_only_runs_under_sim(tmp_path, capsys):
    """No operation, no ``import ttl``: ``tilefold sim`` still runs it (host TT-NN) with numbers
    that match numpy within bfloat16 rounding."""
    import numpy as np

    from tilefold.cli.main import main

    out = tmp_path / "c.npy"
    script = tmp_path / "host_only.py"
    script.write_text(f"OUT = {str(out)!r}\n" + HOST_ONLY)
    assert main(["sim", str(script)]) == 0
    assert "ran no TT-Lang operation" in capsys.readouterr().out
    a = np.linspace(-2, 2, 64 * 64, dtype=np.float32).reshape(64, 64)
    b = np.linspace(1, 3, 64 * 64, dtype=np.float32).reshape(64, 64)
    np.testing.assert_allclose(np.load(out), np.exp(a) + b, rtol=2e-2, atol=2e-2)


def test_a_torch_script_of_host_ttnn_calls_only_runs_under_sim(tmp_path, capsys):
    pytest.importorskip("torch")
    from tilefold.cli.main import main

    script = tmp_path / "host_torch.py"
    script.write_text("import torch\nimport ttnn\n\n"
                      "device = ttnn.open_device(device_id=0)\n"
                      "a = torch.linspace(-2, 2, 4096).reshape(64, 64)\n"
                      "t = ttnn.from_torch(a, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)\n"
                      "c = ttnn.to_torch(ttnn.add(ttnn.exp(t), t))\n"
                      "err = (c.float() - (torch.exp(a) + a)).abs().max().item()\n"
                      "assert err < 0.1, err\n"
                      "print('host max error', err)\n")
    assert main(["sim", str(script)]) == 0
    assert "host max error" in capsys.readouterr().out


SIM_PACKAGE = '''
import numpy as np
from sim import ttl, ttnn
from sim.testing import assert_pcc
from sim.typedefs import Pipe
assert Pipe is ttl.Pipe


@ttl.operation(grid=(1, 1))
def double(x, y):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        with x_dfb.reserve() as blk:
            ttl.copy(x[0, 0], blk).wait()

    @ttl.compute()
    def compute():
        with x_dfb.wait() as a, y_dfb.reserve() as b:
            b.store(a + a)

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as blk:
            ttl.copy(blk, y[0, 0]).wait()


v = np.linspace(-1, 1, 32 * 32, dtype=np.float32).reshape(32, 32)
x = ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT)
y = ttnn.empty((32, 32), dtype=ttnn.float32)
double(x, y)
assert_pcc(2 * v, y)
assert_pcc(2 * v, ttnn.to_numpy(y), pcc=0.9999)
try:
    assert_pcc(2 * v, -ttnn.to_numpy(y))
except AssertionError:
    print("anticorrelated rejected")
'''


def test_scripts_importing_tt_langs_simulator_package_run(tmp_path, capsys):
    """``from sim import ttl, ttnn`` and ``sim.testing.assert_pcc``, as the examples in TT-Lang's
    repository write them for its simulator."""
    from tilefold.cli.main import main

    script = tmp_path / "sim_package.py"
    script.write_text(SIM_PACKAGE)
    assert main(["sim", str(script)]) == 0
    out = capsys.readouterr().out
    assert "ttl.operation double" in out and "anticorrelated rejected" in out
    import sys
    assert "sim" not in sys.modules or sys.modules["sim"].__name__ != "tilefold.cli.sim_package"


def test_a_multi_line_import_from_the_simulator_package_is_a_tt_lang_script(tmp_path, capsys):
    from tilefold.cli.main import main

    script = tmp_path / "sim_multiline.py"
    script.write_text(SIM_PACKAGE.replace("from sim import ttl, ttnn", "from sim import (\n    ttl,\n    ttnn,\n)"))
    assert main(["sim", str(script)]) == 0
    assert "ttl.operation double" in capsys.readouterr().out


def test_the_simulator_wheels_spelling_ttl_sim_is_the_same_package(tmp_path, capsys):
    """``from ttl.sim import ttl, ttnn`` (tt-lang-sim's own wheel) and ``ttl.sim.testing``."""
    from tilefold.cli.main import main

    script = tmp_path / "ttl_sim.py"
    script.write_text(SIM_PACKAGE.replace("from sim import ttl, ttnn", "from ttl.sim import ttl, ttnn")
                      .replace("from sim.testing", "from ttl.sim.testing").replace("from sim.typedefs", "from ttl.sim.typedefs"))
    assert main(["sim", str(script)]) == 0
    assert "ttl.operation double" in capsys.readouterr().out
    import sys
    assert "ttl.sim" not in sys.modules


@pytest.mark.parametrize("line, module", [("from sim import ttl\nfrom sim.ttnnsim import Tensor", "sim.ttnnsim"),
                                          ("from ttl.sim.ttnnsim import Tensor", "ttl.sim.ttnnsim")])
def test_another_module_of_the_simulator_package_is_one_error_at_its_import(tmp_path, line, module):
    script = tmp_path / "sim_module.py"
    script.write_text(f"import numpy\n{line}\n")
    with pytest.raises(KernelError) as err:
        run_script(script)
    message = str(err.value)
    assert message.startswith(f"{script}:{line.count(chr(10)) + 2}: {module} (a module of TT-Lang's simulator "
                              "package) is not supported by tilefold"), message


ADD_SCRIPT = '''
import numpy as np
import ttl, ttnn


@ttl.operation(grid=(1, 1))
def add(x, y, out):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        with x_dfb.reserve() as a, y_dfb.reserve() as b:
            ttl.copy(x[0, 0], a).wait()
            ttl.copy(y[0, 0], b).wait()

    @ttl.compute()
    def compute():
        with x_dfb.wait() as a, y_dfb.wait() as b, o_dfb.reserve() as o:
            o.store(a + b)

    @ttl.datamovement()
    def write():
        with o_dfb.wait() as o:
            ttl.copy(o, out[0, 0]).wait()


v = np.ones((32, 32), np.float32)
x = ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
y = ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
add(x, y, ttnn.empty((32, 32), dtype=ttnn.bfloat16))
'''


@pytest.mark.parametrize("arguments, sfpu", [([], 0), (["--no-ttl-fpu-binary-ops"], 1),
                                             (["--flag", "--no-ttl-fpu-binary-ops"], 1)])
def test_compiler_options_on_the_scripts_command_line_hold_for_its_operations(tmp_path, capsys, arguments, sfpu):
    """``python script.py --no-ttl-fpu-binary-ops`` (TT-Lang reads its options from ``sys.argv``);
    the script's other arguments are its own."""
    from tilefold.cli.main import main

    script = tmp_path / "add.py"
    script.write_text(ADD_SCRIPT)
    assert main(["sim", str(script), *arguments]) == 0
    assert f"{sfpu} SFPU" in capsys.readouterr().out


def test_ttl_help_on_the_scripts_command_line_lists_the_compiler_options_and_stops(tmp_path, capsys):
    from tilefold.cli.main import main

    script = tmp_path / "add.py"
    script.write_text(ADD_SCRIPT)
    assert main(["sim", str(script), "--ttl-help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("TTL compiler options")
    assert "--ttl-fpu-binary-ops / --no-ttl-fpu-binary-ops: a + b" in out
    assert "--ttl-maximize-dst / --no-ttl-maximize-dst: accepted" in out
    assert "SFPU" not in out                    # the operation did not run


def test_a_name_of_the_simulator_package_before_1_0_is_one_error_at_its_import(tmp_path):
    script = tmp_path / "sim_dma.py"
    script.write_text("import numpy\nfrom sim import ttl, dma\n")
    with pytest.raises(KernelError) as err:
        run_script(script)
    message = str(err.value)
    assert message.startswith(f"{script}:2: sim.dma is not part of TT-Lang's simulator package"), message
    assert "TT-Lang's API before 1.0" in message and "\n" not in message


@pytest.mark.parametrize("line", ["from ttl.ttl_api import *", "from ttl.ttl_api import pykernel_gen"])
def test_the_api_before_1_0_is_one_error_naming_the_1_x_spelling(tmp_path, line):
    script = tmp_path / "old_api.py"
    script.write_text(f"import numpy\n{line}\n\nprint('ran')\n")
    with pytest.raises(KernelError) as err:
        run_script(script)
    message = str(err.value)
    assert message.startswith(f"{script}:2: ttl.ttl_api") and "@ttl.operation" in message
    assert "\n" not in message
    assert "ttl.ttl_api" not in sys.modules


def test_submodules_of_the_ttl_package_import_as_its_namespaces(tmp_path, capsys):
    """``import ttl.math``, ``from ttl.block import ...`` and the classes TT-Lang 1.x keeps in
    ``ttl.ttl_api`` import; the package is a module again after the script."""
    import tilefold.ttl

    script = tmp_path / "submodules.py"
    script.write_text("import ttl\nimport ttl.math as m\nfrom ttl.block import fill\n"
                      "from ttl.ttl_api import DataflowBuffer, TensorBlock\n"
                      "from ttl.pipe import Pipe, PipeNet\n"
                      "from ttl.version import __version__, build_info\n"
                      "from ttl.dtype_utils import tile_bytes_from_dtype\n"
                      "from ttl.config import HAS_TT_DEVICE\n"
                      "print(m.exp is ttl.math.exp, fill is ttl.block.fill, DataflowBuffer is ttl.DataflowBuffer,"
                      " TensorBlock is ttl.TensorBlock, Pipe is ttl.Pipe, PipeNet is ttl.PipeNet,"
                      " build_info()['version'] == __version__ == ttl.__version__, sorted(build_info()),"
                      " tile_bytes_from_dtype(ttl.dtype_utils.format_name_to_ttnn_dtype('bf16')), HAS_TT_DEVICE)\n")
    run_script(script)
    assert ("True True True True True True True ['tt_metal', 'tt_metal_tag', 'ttlang', 'version'] 2048 True"
            in capsys.readouterr().out)
    assert getattr(tilefold.ttl, "__path__", []) == [] and "ttl.math" not in sys.modules


OP_LIBRARY_MODULE = """
import ttl


def make_scale(factor):
    \"\"\"An operation factory as an op library writes one: out = x * factor, one tile at a time.\"\"\"
    @ttl.operation(grid=(1, 1))
    def scale(x, out):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
        for c in range(x.shape[1] // 32):
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, c], blk).wait()
            with x_dfb.wait() as xv, o_dfb.reserve() as o:
                o.store(xv * ttl.block.fill(factor, shape=(1, 1)))
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[0, c]).wait()

    return scale
"""


def test_the_op_library_runs_from_a_tt_lang_tree_on_the_path(tmp_path, monkeypatch, capsys):
    """``from ttl.ops.X import ...`` loads TT-Lang's op library (TT-Lang code) from a TT-Lang
    package folder on the path, its ``import ttl`` giving tilefold's; without one it is one error."""
    script = tmp_path / "uses_ops.py"
    script.write_text("import numpy as np\nimport ttl\nimport ttnn\nfrom ttl.ops.scale import make_scale\n\n"
                      "x = np.arange(32 * 64, dtype=np.float32).reshape(32, 64) / 100\n"
                      "a = ttnn.from_numpy(x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)\n"
                      "o = ttnn.from_numpy(np.zeros_like(x), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)\n"
                      "make_scale(3.0)(a, o)\n"
                      "print('max error', float(np.abs(ttnn.to_numpy(o) - x * 3).max()))\n")
    with pytest.raises(KernelError, match=f"^{script}:4: ttl.ops .* was not found"):
        run_script(script)
    tree = tmp_path / "tt-lang" / "python"
    (tree / "ttl" / "ops").mkdir(parents=True)
    (tree / "ttl" / "ops" / "__init__.py").write_text('"""An op library."""\n')
    (tree / "ttl" / "ops" / "scale.py").write_text(OP_LIBRARY_MODULE)
    monkeypatch.syspath_prepend(str(tree))
    assert run_script(script) == 0
    assert "max error 0.0" in capsys.readouterr().out
    assert "ttl.ops" not in sys.modules and "ttl.ops.scale" not in sys.modules


@pytest.mark.parametrize("line, says", [
    ("import ttl.kernel_runner", "ttl.kernel_runner (a module of TT-Lang's own implementation) is not supported"),
])
def test_a_module_of_tt_lang_that_tilefold_lacks_is_one_error_at_its_import(tmp_path, line, says):
    script = tmp_path / "lacking.py"
    script.write_text(f"import ttl\n{line}\n")
    with pytest.raises(KernelError) as err:
        run_script(script)
    assert str(err.value).startswith(f"{script}:2: {says}"), str(err.value)
    assert "\n" not in str(err.value)


def test_a_name_the_math_namespace_lacks_is_an_import_error_naming_it(tmp_path):
    """``from ttl.math import x`` of a name tilefold lacks is Python's ImportError naming it, and
    the namespace is the package's own afterwards (a missing name inside a kernel still names
    the kernel's line)."""
    import tilefold.ttl

    namespace = tilefold.ttl.math
    script = tmp_path / "lacking.py"
    script.write_text("import ttl\nfrom ttl.math import no_such_function\n")
    with pytest.raises(ImportError, match="cannot import name 'no_such_function' from 'ttl.math'"):
        run_script(script)
    assert tilefold.ttl.math is namespace and "ttl.math" not in sys.modules
    script.write_text("import ttl.pipe\n")
    run_script(script)
    assert "pipe" not in vars(tilefold.ttl)


def test_sim_num_devices_sets_the_chips_a_script_sees(capsys):
    from tilefold.cli.main import main
    from tilefold.frontend.ttl.mesh import num_available_devices, set_num_devices

    try:
        assert main(["sim", str(SCRIPTS / "mesh_of_available_chips.py"), "--num-devices", "4"]) == 0
    finally:
        set_num_devices(None)
    assert "chips 4 sum 10" in capsys.readouterr().out
    assert num_available_devices() == 4              # no board named: TT-Lang's simulator's 4 chips


def test_a_script_sees_the_chips_of_the_board_it_names(capsys):
    from tilefold.cli.main import main

    assert main(["sim", str(SCRIPTS / "mesh_of_available_chips.py"), "--arch", "n300"]) == 0
    assert "chips 2 sum 3" in capsys.readouterr().out
    assert main(["sim", str(SCRIPTS / "mesh_of_available_chips.py")]) == 0
    assert "chips 4 sum 10" in capsys.readouterr().out


def test_an_uncaught_error_in_a_plain_python_script_is_one_line(tmp_path):
    """``python prog.py`` with ``import tilefold.ttl as ttl``: a mistake prints as one line naming
    the user's file:line, without a traceback; TILEFOLD_TRACEBACK=1 brings the traceback back."""
    script = _plain_script(tmp_path, "@ttl.operation(grid=(2, 1))\n"
                                     "def op(x):\n"
                                     "    @ttl.compute()\n"
                                     "    def compute():\n"
                                     "        assert ttl.node(dims=1) < 1, 'only node 0 computes'\n")
    done = _run_plain(script)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"tilefold: {script}:9: assertion failed: only node 0 computes (compute kernel compute on core (1,0))"]
    done = _run_plain(script, full_traceback=True)
    assert "Traceback" in done.stderr and "KernelAssertError" in done.stderr


def test_a_failed_result_check_of_the_simulator_package_shows_only_the_scripts_frames(tmp_path, capsys):
    """``sim.testing.assert_pcc`` failing under ``tilefold sim`` reads like the script's own
    ``assert``: the script's frames and the message, none of tilefold's."""
    from tilefold.cli.main import main

    script = tmp_path / "check.py"
    script.write_text("import numpy as np\nimport ttnn\nfrom sim.testing import assert_pcc\n\n"
                      "def main():\n"
                      "    a = ttnn.from_numpy(np.zeros((32, 32), np.float32), layout=ttnn.TILE_LAYOUT)\n"
                      "    b = ttnn.from_numpy(np.ones((32, 32), np.float32), layout=ttnn.TILE_LAYOUT)\n"
                      "    assert_pcc(a, b, rtol=1e-4, atol=1e-4)\n\nmain()\n")
    assert main(["sim", str(script)]) == 1
    err = capsys.readouterr().err
    assert f'File "{script}", line 8, in main' in err and "AssertionError: assert_pcc: values differ by up to 1" in err
    assert "tilefold/" not in err.replace("tilefold sim:", "")


def test_a_script_gets_the_arguments_after_its_name(tmp_path, capsys):
    """``tilefold sim script.py mode --arch n300 -- --flag``: the script's ``sys.argv`` is its name
    and ``mode --flag``, as ``python script.py mode --flag`` gives it; tilefold's options stay
    tilefold's."""
    from tilefold.cli.main import main

    script = tmp_path / "modes.py"
    script.write_text("import sys\nimport ttnn\nprint('args', sys.argv[1:], ttnn.GetNumAvailableDevices())\n")
    assert main(["sim", str(script), "mode", "--arch", "n300", "--", "--flag"]) == 0
    assert "args ['mode', '--flag'] 2" in capsys.readouterr().out
    assert main(["sim", str(script), "--no-ttl-maximize-dst"]) == 0            # an option tilefold does not have
    assert "args ['--no-ttl-maximize-dst'] 4" in capsys.readouterr().out
    assert main(["sim", str(script)]) == 0
    assert "args [] 4" in capsys.readouterr().out


def test_a_script_whose_ttnn_imports_are_in_its_own_package_runs(tmp_path, capsys):
    """``tilefold sim main.py`` where main.py only imports its own package, whose module imports
    ``ttnn`` (as TT-Lang's multi-device examples are laid out): the TT-Lang front end runs it."""
    from tilefold.cli.main import main

    package = tmp_path / "helpers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "ops.py").write_text("import ttnn\n\ndef chips():\n    return ttnn.GetNumAvailableDevices()\n")
    script = tmp_path / "main.py"
    script.write_text("from helpers.ops import chips\n\nprint('chips', chips())\n")
    assert main(["sim", str(script)]) == 0
    assert "chips 4" in capsys.readouterr().out


def test_a_script_importing_a_package_found_through_pythonpath_runs(tmp_path, capsys, monkeypatch):
    """A test script that only imports an example package found through ``PYTHONPATH`` (TT-Lang's
    tests import ``examples.<name>.__main__`` with the repository root on the path): the package's
    modules import ``ttnn``, so the TT-Lang front end runs it."""
    from tilefold.cli.main import main

    root = tmp_path / "repo"
    package = root / "examples" / "gather"
    package.mkdir(parents=True)
    (root / "examples" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text("from examples.gather.ops import chips\n")
    (package / "ops.py").write_text("import ttnn\n\ndef chips():\n    return ttnn.GetNumAvailableDevices()\n")
    tests = tmp_path / "tests"
    tests.mkdir()
    script = tests / "test_gather.py"
    script.write_text("from examples.gather.__main__ import chips\n\nprint('chips', chips())\n")
    monkeypatch.setenv("PYTHONPATH", str(root))
    monkeypatch.syspath_prepend(str(root))
    assert main(["sim", str(script)]) == 0
    assert "chips 4" in capsys.readouterr().out


def test_a_script_whose_operation_defines_no_kernel_says_only_that(tmp_path, capsys):
    """An operation body of setup only runs nothing on the device: the summary says so once, and
    not also that the script ran no operation."""
    from tilefold.cli.main import main

    script = tmp_path / "body_only.py"
    script.write_text("import ttl\n\n\n@ttl.operation(grid=(2, 1))\ndef setup_only():\n    x, y = ttl.node(dims=2)\n\n\n"
                      "setup_only()\n")
    assert main(["sim", str(script)]) == 0
    out = capsys.readouterr().out
    assert "defines no kernel function: nothing runs on the device" in out
    assert "ran no TT-Lang operation" not in out


def test_a_script_given_by_a_relative_path_sees_its_absolute_file(tmp_path, monkeypatch, capsys):
    """``__file__`` of the script is absolute, as python sets it, so a script finding its data next
    to itself (``Path(__file__).parent / ...``) finds it from any working folder."""
    (tmp_path / "where.py").write_text("import os\nimport ttnn\nprint('file', __file__, os.path.isabs(__file__))\n")
    monkeypatch.chdir(tmp_path)
    run_script("where.py")
    assert f"file {tmp_path / 'where.py'} True" in capsys.readouterr().out


def test_from_ttl_import_of_a_name_tilefold_lacks_is_one_line_at_the_import(tmp_path, capsys):
    """``from ttl import kernel_runner`` (a module of TT-Lang's runtime): Python's ImportError names
    tilefold's module; the command reports tilefold's refusal at the import's line instead."""
    from tilefold.cli.main import main

    script = tmp_path / "from_import.py"
    script.write_text("import ttl\nfrom ttl import kernel_runner\n")
    assert main(["sim", str(script)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == f"tilefold sim: {script}:2: ttl.kernel_runner is not supported by tilefold yet", err


def test_a_python_error_of_the_users_own_body_shows_only_the_users_frames(tmp_path):
    """``python prog.py``: a ZeroDivisionError the operation's body raises is the user's own; its
    traceback goes through the user's frames only, as ``tilefold sim`` shows it, not through the
    frames of tilefold that run the body."""
    script = _plain_script(tmp_path, "@ttl.operation(grid=(1, 1))\n"
                                     "def op(x):\n"
                                     "    rows = x.shape[0] // 0\n")
    root = str(ROOT)
    done = _run_plain(script)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert lines[0] == "Traceback (most recent call last):" and lines[-1].startswith("ZeroDivisionError")
    assert f'File "{script}", line 7, in op' in done.stderr and "tilefold" not in done.stderr.replace(root, "")
    assert root + "/tilefold" not in done.stderr
    done = _run_plain(script, full_traceback=True)
    assert root + "/tilefold" in done.stderr


TF32_BROADCAST = '''\
import numpy as np
import ttl
import ttnn


@ttl.operation(grid=(1, 1))
def spread(c, out):
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with c_dfb.wait() as cb, o_dfb.reserve() as o:
            o.store(ttl.block.broadcast(cb, dims=[0], shape=(1, 1)))

    @ttl.datamovement()
    def read():
        with c_dfb.reserve() as blk:
            ttl.copy(c[0, 0], blk).wait()

    @ttl.datamovement()
    def write():
        with o_dfb.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()


c = np.full((32, 32), 1 + 2.0 ** -20, np.float32)
out = ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
spread(ttnn.from_numpy(c, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT), out)
assert (ttnn.to_numpy(out) == c[0]).all(), "not exact"
'''


def test_a_failed_assert_after_a_tf32_read_of_float32_names_the_read_and_the_fast_numerics(tmp_path, capsys):
    script = tmp_path / "tf32.py"
    script.write_text(TF32_BROADCAST)
    with pytest.raises(AssertionError, match="not exact"):
        run_script(script)
    err = capsys.readouterr().err
    assert "note: spread read float32 operands as the device's source registers hold them, cut to TF32" in err
    assert "by unary_bcast" in err and "--numerics fast" in err


def test_the_tf32_note_also_precedes_a_failed_assert_of_a_script_run_with_python(tmp_path):
    script = tmp_path / "tf32_plain.py"
    script.write_text(TF32_BROADCAST.replace("import ttl\n", "import tilefold.ttl as ttl\n")
                      .replace("import ttnn\n", "import tilefold.ttnn as ttnn\n"))
    result = _run_plain(script)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith("note: spread read float32 operands") and "AssertionError: not exact" in lines[-1]

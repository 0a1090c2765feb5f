"""TT-Lang's module names reach tilefold's modules however a script was moved over: ``from ttl.X import``
rewritten to ``from tilefold.ttl.X import`` (TT-Lang's public modules are views of the package, its
helpers its own; a module of TT-Lang's implementation is Python's ModuleNotFoundError), and, under
``tilefold sim``, ``from utils.X import`` as TT-Lang's source tree spells its helper package (unless
the script has a ``utils`` of its own). TT-Lang's older helper names keep their results."""

from __future__ import annotations

import sys

import pytest

import tilefold.ttl as ttl
from tilefold.cli.ttl_scripts import run_script
from tilefold.ttl_utils.block_allocation import get_number_of_cores, split_work_to_cores, split_work_to_nodes


@pytest.fixture
def forgets_the_views():
    """The modules the test imports under tilefold.ttl go again, and with them the package's attributes
    the imports bound (other tests read the package as it was)."""
    before, names = set(sys.modules), set(vars(ttl))
    yield
    for name in set(sys.modules) - before:
        if name.startswith("tilefold.ttl."):
            del sys.modules[name]
    for name in set(vars(ttl)) - names:
        delattr(ttl, name)


def test_tt_langs_module_names_under_tilefold_ttl(forgets_the_views):
    from tilefold.ttl.config import HAS_TT_DEVICE
    from tilefold.ttl.dtype_utils import torch_dtype_to_ttnn_datatype
    from tilefold.ttl.pipe import Pipe, PipeNet
    from tilefold.ttl.utils.correctness import assert_with_ulp
    import tilefold.ttl.dataflow_buffer as dataflow_buffer

    assert HAS_TT_DEVICE is True
    assert torch_dtype_to_ttnn_datatype is ttl.dtype_utils.torch_dtype_to_ttnn_datatype
    assert (Pipe, PipeNet) == (ttl.Pipe, ttl.PipeNet)
    assert dataflow_buffer.make_dataflow_buffer_like is ttl.make_dataflow_buffer_like
    assert callable(assert_with_ulp)


def test_a_module_of_tt_langs_implementation_is_pythons_module_error():
    with pytest.raises(ModuleNotFoundError, match="No module named 'tilefold.ttl.kernel_runner'"):
        from tilefold.ttl.kernel_runner import build_cb_descriptors  # noqa: F401


def test_the_older_work_split_names_give_each_group_as_its_first_and_last_node():
    assert split_work_to_cores((8, 8), 100) == (64, ((0, 0), (4, 3)), ((4, 4), (7, 7)), 2, 1)
    assert split_work_to_cores((8, 8), 10) == (10, ((0, 0), (1, 1)), (), 1, 0)
    assert split_work_to_cores((8, 8), 128) == (64, ((0, 0), (7, 7)), (), 2, 0)
    assert split_work_to_cores((16,), 20) == (16, ((0,), (3,)), ((4,), (15,)), 2, 1)
    for grid, units in (((8, 8), 100), ((4, 6), 7), ((16,), 20)):
        used, group1, group2, per1, per2 = split_work_to_nodes(grid, units)
        assert split_work_to_cores(grid, units)[0::3] == (used, per1)
    assert get_number_of_cores((8, 8)) == 64


_UTILS_SCRIPT = """
import ttl
import ttnn
from utils.block_allocation import split_work_to_nodes
from utils.correctness import assert_with_ulp
print("helpers", split_work_to_nodes((2, 2), 3)[0], assert_with_ulp.__module__)
"""


def test_tilefold_sim_gives_the_helper_package_of_tt_langs_source_tree(tmp_path, capsys):
    script = tmp_path / "uses_utils.py"
    script.write_text(_UTILS_SCRIPT)
    assert run_script(script) == 0
    assert "helpers 3 tilefold.ttl_utils.correctness" in capsys.readouterr().out
    assert "utils" not in sys.modules or sys.modules["utils"].__name__ != "tilefold.ttl_utils"


def test_a_script_with_its_own_utils_keeps_it(tmp_path, capsys):
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "block_allocation.py").write_text("def split_work_to_nodes(*a):\n    return ('mine',)\n")
    (tmp_path / "utils" / "correctness.py").write_text("def assert_with_ulp(*a):\n    pass\n")
    script = tmp_path / "own_utils.py"
    script.write_text(_UTILS_SCRIPT)
    for name in ("utils", "utils.block_allocation", "utils.correctness"):
        sys.modules.pop(name, None)
    try:
        assert run_script(script) == 0
        assert "helpers mine utils.correctness" in capsys.readouterr().out
    finally:
        for name in ("utils", "utils.block_allocation", "utils.correctness"):
            sys.modules.pop(name, None)

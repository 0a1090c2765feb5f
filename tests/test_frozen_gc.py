"""frozen_gc leaves the objects older than a compile or a run out of cycle collections, and only for its body."""

import gc
import subprocess
import sys
import weakref

from tilefold.frozen_gc import frozen_gc


class _Node:
    pass


def _cycle():
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_objects_older_than_the_body_are_frozen_only_inside_it_and_a_nested_body_freezes_again():
    before = gc.get_freeze_count()
    with frozen_gc():
        assert gc.get_freeze_count() > before
        made = [_Node() for _ in range(100)]          # made by the outer body
        outer = gc.get_freeze_count()
        with frozen_gc():                 # nested: what the outer body made is frozen too
            inner = gc.get_freeze_count()
            assert inner >= outer + len(made)
        assert gc.get_freeze_count() > outer          # still frozen: thawed only at the outermost exit
    assert gc.get_freeze_count() == before


def test_garbage_made_inside_is_collected_inside_and_older_garbage_after():
    old = _cycle()                        # unreachable already, but older than the body
    with frozen_gc():
        young = _cycle()
        gc.collect()
        assert young() is None            # the body's own cycles are still collected
        assert old() is not None          # the older one is left alone while the body runs
    gc.collect()
    assert old() is None


def test_an_error_in_the_body_still_thaws():
    before = gc.get_freeze_count()
    try:
        with frozen_gc():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.get_freeze_count() == before


def test_a_process_that_used_it_freezes_its_objects_when_it_exits(tmp_path):
    # an atexit handler registered before tilefold's runs after it (last in, first out)
    script = tmp_path / "exits.py"
    script.write_text(
        "import atexit, gc\n"
        "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"
        "from tilefold.frozen_gc import frozen_gc\n"
        "with frozen_gc():\n"
        "    pass\n"
        "print('frozen after the body:', gc.get_freeze_count() > 0)\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["frozen after the body: False", "frozen at exit: True"]

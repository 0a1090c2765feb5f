"""Host configurations a device (or its watcher) rejects: processor names, runtime-arg counts,
multicast rectangles. Each gives one error naming the user's line."""

from __future__ import annotations

import pytest

from tilefold.arch.cores import CoreCoord, CoreRange, CoreRangeSet
from tilefold.errors import DramAccessError, NocHazardError, ProgramError, RuntimeArgError
from tilefold.program import DataMovementConfig, NocX, NocY, Program
from tilefold.sim import Device

from simhelpers import grid, random_tiles, where
from test_device import A, mcast_receiver, mcast_sender, write_own_tile
from test_hazards import copy_reader

HERE = __file__


def _line(text: str) -> str:
    import inspect

    lines, start = inspect.getsourcelines(inspect.currentframe().f_back.f_code)
    return f"{HERE}:{start + next(i for i, line in enumerate(lines) if text in line)}"


@pytest.mark.parametrize("processor", ["RISCV_2", "BRISC", "riscv_0"])
def test_data_movement_processor_must_be_riscv_0_or_1(processor):
    prog = Program("p")
    with pytest.raises(ProgramError) as err:
        prog.create_kernel(copy_reader, grid(1), DataMovementConfig(processor))
    assert str(err.value).startswith(_line("prog.create_kernel(copy_reader"))
    assert f"processor {processor!r}" in str(err.value) and "RISCV_0 (BRISC) or RISCV_1 (NCRISC)" in str(err.value)


def test_unique_and_common_runtime_args_share_the_limit():
    prog = Program("p")
    k = prog.create_kernel(copy_reader, grid(1), DataMovementConfig("RISCV_0"))
    prog.set_runtime_args(k, (0, 0), [1] * 200)
    with pytest.raises(RuntimeArgError) as err:
        prog.set_common_runtime_args(k, [2] * 142)
    text = str(err.value)
    assert text.startswith(_line("prog.set_common_runtime_args(k, [2] * 142)"))
    assert "200 runtime args on core (0,0) and 142 common runtime args; at most 341 are allowed in all" in text
    prog.set_common_runtime_args(k, [2] * 141)              # 341 in all: fine
    with pytest.raises(RuntimeArgError):
        prog.set_runtime_args(k, (0, 0), [1] * 201)


def _mcast_program(first: CoreCoord, last: CoreCoord, receivers: int = 3, processor: str = "RISCV_0"):
    prog = Program("mcast")
    src = prog.add_buffer("src", (32, 32), "bfloat16")
    dst = prog.add_buffer("dst", (32, 128), "bfloat16", role="output")
    everyone = grid(4, 1)
    sender = CoreRangeSet([CoreCoord(0, 0)])
    rx = CoreRangeSet([CoreRange((1, 0), (3, 0))])
    prog.create_circular_buffer(everyone, A, src.page_size, 1, "bfloat16")
    prog.create_semaphore(everyone, 0)
    prog.create_semaphore(everyone, 0)
    ct = [src.accessor_args, dst.accessor_args]
    ks = prog.create_kernel(mcast_sender, sender, DataMovementConfig(processor), ct)
    kr = prog.create_kernel(mcast_receiver, rx, DataMovementConfig(processor), ct)
    kw = prog.create_kernel(write_own_tile, everyone,
                            DataMovementConfig("RISCV_1" if processor == "RISCV_0" else "RISCV_0"), ct)
    prog.set_runtime_args(ks, (0, 0), [src.address, NocX(first), NocY(first), NocX(last), NocY(last), receivers])
    for core in rx:
        prog.set_runtime_args(kr, core, [NocX(CoreCoord(0, 0)), NocY(CoreCoord(0, 0))])
    for i, core in enumerate(everyone):
        prog.set_runtime_args(kw, core, [dst.address, i])
    return Device().run(prog, {"src": random_tiles((32, 32), 9)})


def test_multicast_rectangle_with_start_after_end():
    with pytest.raises(NocHazardError) as err:
        _mcast_program(CoreCoord(3, 0), CoreCoord(1, 0))
    text = str(err.value)
    assert text.startswith(where(mcast_sender, "noc_async_write_multicast(addr"))
    assert "on NOC 0 the start is the top-left, end bottom-right" in text


def test_multicast_on_noc_1_starts_at_the_far_corner():
    result = _mcast_program(CoreCoord(3, 0), CoreCoord(1, 0), processor="RISCV_1")
    assert result.hazards == []
    with pytest.raises(NocHazardError, match="on NOC 1 the start is the bottom-right"):
        _mcast_program(CoreCoord(1, 0), CoreCoord(3, 0), processor="RISCV_1")


def test_multicast_rectangle_covering_cores_outside_the_program():
    # (1,0)-(5,0): cores 4 and 5 are not part of the program (no L1 of it there)
    with pytest.raises(DramAccessError) as err:
        _mcast_program(CoreCoord(1, 0), CoreCoord(5, 0))
    text = str(err.value)
    assert text.startswith(where(mcast_sender, "noc_async_write_multicast(addr"))
    assert "covers node" in text and "not a worker core of this program" in text

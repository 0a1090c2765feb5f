"""L1 overflow points at the allocation that does not fit: the circular buffer or L1 buffer
that crosses the budget (in the order they were made)."""

import pytest

from tilefold.errors import L1OverflowError
from tilefold.program import Program

from simhelpers import grid

HERE = __file__


def _line(text: str) -> str:
    import inspect

    lines, start = inspect.getsourcelines(inspect.currentframe().f_back.f_code)
    return f"{HERE}:{start + next(i for i, line in enumerate(lines) if text in line)}"


def test_host_overflow_names_the_circular_buffer_that_crosses():
    prog = Program("big")
    cores = grid(1)
    prog.create_circular_buffer(cores, 0, 2048, 8, "bfloat16")
    prog.create_circular_buffer(cores, 1, 2048, 300, "bfloat16")
    prog.create_circular_buffer(cores, 2, 2048, 500, "bfloat16")      # crosses 1.3 MiB here
    prog.create_circular_buffer(cores, 3, 2048, 4, "bfloat16")
    with pytest.raises(L1OverflowError) as err:
        prog.validate()
    text = str(err.value)
    assert text.startswith(_line("prog.create_circular_buffer(cores, 2, 2048, 500"))
    assert "circular buffer c_2 (1024000 B) is the allocation that does not fit" in text


def test_host_overflow_names_the_l1_buffer_that_crosses():
    from test_hazards import copy_reader
    from tilefold.program import DataMovementConfig

    prog = Program("big")
    cores = grid(1)
    prog.create_circular_buffer(cores, 0, 2048, 8, "bfloat16")
    prog.add_buffer("scratch", (32 * 64 * 12, 32 * 64), "bfloat16", buffer_type="L1")    # 768 tiles per core
    prog.create_kernel(copy_reader, cores, DataMovementConfig("RISCV_0"))
    with pytest.raises(L1OverflowError) as err:
        prog.validate()
    text = str(err.value)
    assert text.startswith(_line('prog.add_buffer("scratch"'))
    assert "L1 buffer 'scratch'" in text and "is the allocation that does not fit" in text

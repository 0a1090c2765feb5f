"""The data a generated host program runs with: input bytes and golden output bytes.

Reads: a :class:`~tilefold.program.Program` (to check names and sizes). Writes: nothing; the
project writer stores the bytes as ``data/<name>.bin`` and ``data/<name>.golden.bin`` next to
``main.cpp``. All bytes are in device page format (tilized, block-float packed ...), exactly
what the buffer holds on the device.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tilefold.errors import ProgramError
from tilefold.program import Program

_READ_BACK = ("output", "inout")
_WRITTEN = ("input", "inout")


def _as_bytes(data, what: str) -> bytes:
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).tobytes()
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise ProgramError(f"{what} must be bytes or a numpy array of device bytes, not {type(data).__name__}")


@dataclass(frozen=True)
class Golden:
    """Expected bytes of an output buffer and how close the device result must be: every value
    within ``atol + rtol * |golden|`` and a Pearson correlation of at least ``min_pcc``."""

    data: bytes
    rtol: float = 0.01
    atol: float = 0.01
    min_pcc: float = 0.999

    def __post_init__(self):
        object.__setattr__(self, "data", _as_bytes(self.data, "Golden.data"))
        if self.rtol < 0 or self.atol < 0:
            raise ProgramError(f"Golden tolerances must be non-negative (rtol={self.rtol}, atol={self.atol})")
        if not -1.0 <= self.min_pcc <= 1.0:
            raise ProgramError(f"Golden.min_pcc must be within -1..1, not {self.min_pcc}")


@dataclass
class HostData:
    """``inputs``: buffer name → bytes written before the run; ``outputs``: buffer name →
    :class:`Golden` the result read back after the run is compared with. ``not_simulated``: why
    there are no expected outputs at all (``"calls C++ from ext.hpp"``); the host program then
    writes every output and its checksum without checking them."""

    inputs: dict[str, bytes] = field(default_factory=dict)
    outputs: dict[str, Golden] = field(default_factory=dict)
    not_simulated: str | None = None

    def __post_init__(self):
        self.inputs = {name: _as_bytes(b, f"HostData.inputs[{name!r}]") for name, b in self.inputs.items()}
        self.outputs = {name: g if isinstance(g, Golden) else Golden(g) for name, g in self.outputs.items()}

    def check(self, program: Program) -> None:
        """Raise :class:`ProgramError` unless every name is a buffer of ``program`` with the right
        role and every byte string has the buffer's size."""
        for name, data in self.inputs.items():
            buf = program.buffer(name)
            if buf.role not in _WRITTEN:
                raise ProgramError(f"HostData.inputs[{name!r}]: buffer {name!r} has role {buf.role!r}; only "
                                   "input and inout buffers are written before the run")
            if len(data) != buf.size:
                raise ProgramError(f"HostData.inputs[{name!r}] holds {len(data)} bytes but buffer {name!r} is "
                                   f"{buf.size} bytes ({buf.num_pages} pages of {buf.page_size} B); pass its "
                                   "bytes in device page format")
        if self.not_simulated is not None and self.outputs:
            raise ProgramError(f"HostData has golden outputs ({', '.join(self.outputs)}) but says the program was not "
                               f"simulated ({self.not_simulated}); give one or the other")
        for name, golden in self.outputs.items():
            buf = program.buffer(name)
            if buf.role not in _READ_BACK:
                raise ProgramError(f"HostData.outputs[{name!r}]: buffer {name!r} has role {buf.role!r}; only "
                                   "output and inout buffers are read back after the run")
            if len(golden.data) != buf.size:
                raise ProgramError(f"HostData.outputs[{name!r}] holds {len(golden.data)} golden bytes but buffer "
                                   f"{name!r} is {buf.size} bytes")
        for buf in program.buffers.values():
            if buf.role in _WRITTEN and buf.name not in self.inputs:
                raise ProgramError(f"buffer {buf.name!r} is an {buf.role} buffer but HostData.inputs has no bytes "
                                   f"for it; add HostData.inputs[{buf.name!r}]")

"""Debug prints of circular buffers: ``DPRINT << TileSlice(...)`` rows of tiles and
``print_cb_details``, for data movement and compute threads alike.

Reads: the lanes' circular buffer states (pointers, sizes, formats) and the L1 bytes of the
tiles printed. Writes: the device's printed lines, one per tile row and lane
(``KernelContext.printed``, with the unpacker's or packer's clock). Nothing else changes:
a print neither waits nor charges time (TT-Metal's prints cost the core's time only when the
program is built with them on).
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from tilefold.arch.cores import CoreCoord
from tilefold.errors import CircularBufferError
from tilefold.sim import tile_math as tm

PRINT_CORES_VARIABLE = "TT_METAL_DPRINT_CORES"

CB_ADDR_SHIFT = 4          # the circular buffer interface keeps addresses and sizes in 16-byte units


def cores_to_print(value: str | None) -> frozenset[CoreCoord] | None:
    """The cores whose debug prints show, from TT-Metal's ``TT_METAL_DPRINT_CORES``: ``x,y``, a list
    ``(x,y),(x,y)``, a range ``(x1,y1)-(x2,y2)`` (logical coordinates), or ``all`` / ``worker``. None
    means every core, also when the variable is unset (TT-Metal then prints nothing; a simulator
    run shows its prints)."""
    text = (value or "").replace(" ", "")
    if not text or text.lower() in ("all", "worker", "workers"):
        return None
    if re.fullmatch(r"\d+,\d+", text):
        return frozenset([CoreCoord(*map(int, text.split(",")))])
    box = re.fullmatch(r"\((\d+),(\d+)\)-\((\d+),(\d+)\)", text)
    if box:
        x0, y0, x1, y1 = map(int, box.groups())
        return frozenset(CoreCoord(x, y) for x in range(min(x0, x1), max(x0, x1) + 1)
                         for y in range(min(y0, y1), max(y0, y1) + 1))
    if re.fullmatch(r"\(\d+,\d+\)(,\(\d+,\d+\))*", text):
        return frozenset(CoreCoord(int(x), int(y)) for x, y in re.findall(r"\((\d+),(\d+)\)", text))
    warnings.warn(f"{PRINT_CORES_VARIABLE}={value!r} is not a core list TT-Metal reads (x,y | (x,y),(x,y) | "
                  "(x1,y1)-(x2,y2) | all): debug prints show from every core", stacklevel=2)
    return None


class DebugPrintApi:
    def dprint_tiles(self, cb, first: int, count: int, side: str) -> None:
        """``count`` tiles of CB ``cb`` from tile ``first`` past its read pointer (``side`` "front")
        or write pointer ("back"), each as TT-Metal's ``print_full_tile`` prints it: a line
        ``======``, a line ``R : v0 v1 ...`` per row (values as C++ prints floats, six significant
        digits), a line ``++++++``."""
        call = "DPRINT << TileSlice"
        cb, st = self._cb(cb, call)
        fmt = self.dev.cb_formats.get(cb)
        if fmt is None or int(st.page_size[self.row0]) < fmt.tile_size():
            raise self.fail(CircularBufferError, f"{call}: c_{cb} holds no whole 32x32 tiles to print")
        pointer = st.rd if side == "front" else st.wr
        clock = self.print_clock("unpack" if side == "front" else "pack")
        for lane, row in enumerate(self.row_idx):
            page = int(st.page_size[row])
            start = int(st.base[row]) + int(pointer[row]) * page
            raw = self.dev.l1.read(np.array([row]), start + first * page, page * count).reshape(count, page)
            values = tm.faces_to_rows(tm.unpack(raw[:, :fmt.tile_size()], fmt))
            for t in range(count):
                self.printed(clock, lane, "======")
                for r in range(values.shape[1]):
                    text = " ".join(format(float(v), "g") for v in values[t, r])
                    self.printed(clock, lane, f"{r} : {text}")
                self.printed(clock, lane, "++++++")

    def dprint_cb(self, cb) -> None:
        """One line of CB ``cb``'s interface as ``print_cb_details`` prints it (sizes and pointers in
        16-byte units, its page count, the tile a sequential ``pack_tile`` writes next)."""
        cb, st = self._cb(cb, "print_cb_details")
        for lane, row in enumerate(self.row_idx):
            page, base, size = int(st.page_size[row]), int(st.base[row]), int(st.capacity[row])
            fields = {"size": size * page >> CB_ADDR_SHIFT, "limit": (base + size * page) >> CB_ADDR_SHIFT,
                      "page_size": page >> CB_ADDR_SHIFT, "num_pages": size,
                      "rd_ptr": (base + int(st.rd[row]) * page) >> CB_ADDR_SHIFT,
                      "wr_ptr": (base + int(st.wr[row]) * page) >> CB_ADDR_SHIFT,
                      "wr_tile_ptr": int(st.pack_seq[row])}      # the next tile a sequential pack_tile writes
            text = ", ".join(f"{k}: {v}" for k, v in fields.items())
            self.printed(self.print_clock("unpack"), lane, f"cb_id {cb}: {{ {text} }}")


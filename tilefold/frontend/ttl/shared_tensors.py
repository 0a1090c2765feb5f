"""One device tensor written by every chip of a mesh call: the chips' pages merged into it.

Reads: the device pages of a tensor that is not a mesh tensor (``device_pages`` /
``set_device_pages`` of the host tensor), before each chip's run and after it. Writes: the
tensor, once every chip has run.

An operation whose grid has mesh axes runs chip by chip (:mod:`tilefold.frontend.ttl.operation`).
A tensor that is not a mesh tensor is then one tensor of the whole mesh, as TT-Lang's simulator
treats it: every chip starts from the values it held before the call, and each page takes the
bytes of the chip that changed it. Two chips changing one page is a race (which chip's bytes
land is undefined on a device), an error at the call that leaves the tensor as it was (a page a
chip rewrites with the bytes it held is not seen as changed).
"""

from __future__ import annotations

import numpy as np

from tilefold.errors import KernelError


class SharedWrites:
    """The pages each chip of one mesh call left in the shared tensors its kernels write."""

    def __init__(self, operation: str):
        self.operation = operation
        self.base: dict[str, tuple] = {}    # name -> (tensor, buffer, pages before the call)
        self.changed: dict[str, list] = {}  # name -> [(chip, pages after its run)]

    def before_run(self, tensors: dict, buffers: dict, written) -> None:
        """Give the next chip's run the values the ``written`` tensors held before the call."""
        for name in written:
            if name not in self.base:
                tensor, buffer = tensors[name], buffers[name]
                self.base[name] = (tensor, buffer, tensor.device_pages(buffer).copy())
                self.changed[name] = []
            else:
                tensor, buffer, pages = self.base[name]
                tensor.set_device_pages(pages.copy(), buffer)

    def after_run(self, chip: int) -> None:
        for name, (tensor, buffer, _) in self.base.items():
            self.changed[name].append((chip, tensor.device_pages(buffer).copy()))

    def restore(self) -> None:
        """Put back the values the shared tensors held before the call (a call that failed)."""
        for tensor, buffer, pages in self.base.values():
            tensor.set_device_pages(pages, buffer)

    def merge(self, where) -> None:
        """Write each shared tensor with every chip's changed pages; two chips changing one page
        is a :class:`KernelError` at ``where``."""
        for name, (tensor, buffer, base) in self.base.items():
            merged = base.copy()
            owner = np.full(len(base), -1, dtype=np.int64)
            for chip, pages in self.changed[name]:
                changed = (pages != base).any(axis=1)
                clash = np.flatnonzero(changed & (owner >= 0))
                if clash.size:
                    self.restore()
                    page = int(clash[0])
                    raise KernelError(f"{self.operation}() writes tensor {name!r} from chips {int(owner[page])} and "
                                      f"{chip} at its page {page}: which chip's bytes land is undefined; let each "
                                      "chip write its own pages (index the tensor by the node's mesh coordinates), "
                                      "or give a mesh tensor (ttnn.from_torch(..., mesh_mapper=...))", where)
                merged[changed] = pages[changed]
                owner[changed] = chip
            tensor.set_device_pages(merged, buffer)

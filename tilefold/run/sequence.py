"""A TileLang kernel of several ``with T.Kernel`` grids, run one grid after another.

Reads: the :class:`CompiledKernel` of each grid (:meth:`PrimFunc.grids`: every grid takes the
kernel's tensors and its ``T.alloc_global`` scratch tensors). Writes: what one CompiledKernel
gives a :class:`JITKernel` — the tensors' roles, a ``simulate`` that runs the grids in order
on the simulated device (each grid sees what the ones before wrote; the scratch tensors start
as zeros and are not returned), and the artifacts (the first grid's under their own names, the
others' under ``grid<k>/``).
"""

from __future__ import annotations

import numpy as np


class KernelSequence:
    """The compiled grids of one kernel, in program order."""

    def __init__(self, prim, parts: list):
        self.prim = prim
        self.parts = parts
        self.scratch = {p.name: p.type.shape for p in parts[0].prim.params if p.name in parts[0].prim.scratch}

    @property
    def name(self) -> str:
        return self.prim.name

    @property
    def last_result(self):
        return self.parts[-1].last_result

    def roles(self) -> dict[str, str]:
        """A tensor is an input when no grid writes it, an output when the first grid to touch it
        writes it without reading it, and in/out otherwise."""
        roles: dict[str, str] = {}
        for part in self.parts:
            for name, role in part.roles().items():
                if name in self.scratch:
                    continue
                before = roles.get(name)
                if before in (None, "unused"):      # the first grid that touches it decides
                    roles[name] = role
                elif before == "input" and role in ("output", "inout"):
                    roles[name] = "inout"
        return roles

    def simulate(self, arrays: dict[str, np.ndarray], trace=None) -> dict[str, np.ndarray]:
        state = dict(arrays)
        for name, shape in self.scratch.items():
            state[name] = np.zeros(shape, np.float32)
        out: dict[str, np.ndarray] = {}
        for part in self.parts:
            results = part.simulate(state, trace=trace)
            state.update(results)
            out.update(results)
        return {name: value for name, value in out.items() if name not in self.scratch}

    def kernel_sources(self) -> dict[str, str]:
        return self._merged(lambda part: part.kernel_sources())

    def artifacts(self, kernel_only: bool = False) -> dict[str, str]:
        return self._merged(lambda part: part.artifacts(kernel_only))

    def _merged(self, files_of) -> dict[str, str]:
        files = dict(files_of(self.parts[0]))
        for k, part in enumerate(self.parts[1:], 1):
            files.update({f"grid{k}/{name}": text for name, text in files_of(part).items()})
        return files

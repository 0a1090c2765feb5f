"""``from sim import ttl, ttnn`` (and ``from ttl.sim import ttl, ttnn``, as the simulator's own wheel
spells it): the spelling of TT-Lang's examples that run on the simulator in TT-Lang's own
repository, ``sim.testing.assert_pcc`` and the type names of ``sim.typedefs``.

Reads: nothing. Writes: nothing. While a TT-Lang script runs under ``tilefold sim`` / ``run`` /
``compile``, ``sim`` and ``ttl.sim`` are this module (see :mod:`tilefold.cli.ttl_scripts` and
:mod:`tilefold.cli.tt_lang_submodules`).
"""

from __future__ import annotations

import sys
import types

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.caller import user_location
from tilefold.errors import LayoutError


def _values(tensor) -> np.ndarray:
    if isinstance(tensor, ttnn.Tensor):
        return ttnn.to_numpy(tensor).astype(np.float64)
    if hasattr(tensor, "detach"):
        return tensor.detach().float().cpu().numpy().astype(np.float64)
    return np.asarray(tensor, dtype=np.float64)


def assert_pcc(expected, actual, pcc: float = 0.99, *, rtol: float | None = None, atol: float | None = None) -> None:
    """Assert two tensors (torch, numpy or device tensors) of one shape agree: elementwise within
    ``rtol`` / ``atol`` when either is given (as ``allclose``), else by a Pearson correlation of
    at least ``pcc`` (equal tensors pass, constant ones must match to 1e-6 relative)."""
    a, b = _values(expected), _values(actual)
    if a.shape != b.shape:
        raise LayoutError(f"assert_pcc: the tensors have shapes {a.shape} and {b.shape}", user_location())
    if rtol is not None or atol is not None:
        rtol, atol = 1e-5 if rtol is None else rtol, 1e-8 if atol is None else atol
        assert np.allclose(b, a, rtol=rtol, atol=atol), \
            f"assert_pcc: values differ by up to {float(np.max(np.abs(a - b))):.3g} (rtol={rtol}, atol={atol})"
        return
    a, b = a.ravel(), b.ravel()
    if np.array_equal(a, b):
        return
    sa, sb = a.std(), b.std()
    if sa == 0 or sb == 0:
        assert np.allclose(a, b, rtol=1e-6, atol=1e-6), "assert_pcc: a constant tensor differs from the other"
        return
    value = float(np.mean((a - a.mean()) * (b - b.mean())) / (sa * sb))
    assert value >= pcc, f"assert_pcc: correlation {value:.6f} is below {pcc}"


testing = types.ModuleType("sim.testing", "Testing helpers of TT-Lang's simulator package.")
testing.assert_pcc = assert_pcc

typedefs = types.ModuleType("sim.typedefs", "The type names of TT-Lang's simulator package.")
for _name in ("Pipe", "PipeNet", "Shape", "Size", "NodeCoord", "NodeRange"):
    setattr(typedefs, _name, getattr(ttl, _name))
typedefs.CoreCoord, typedefs.CoreRange, typedefs.Index, typedefs.Count = ttl.NodeCoord, ttl.NodeRange, int, int

TILE_SHAPE = ttl.TILE_SHAPE


def __getattr__(name: str):
    """A name the package had before TT-Lang 1.0 (``dma``, ``TensorAccessor``, ``CircularBuffer``,
    ``core_index`` ...): one error at the user's line naming the 1.x API."""
    if name.startswith("__"):
        raise AttributeError(name)
    from tilefold.errors import KernelError

    raise KernelError(f"sim.{name} is not part of TT-Lang's simulator package as tilefold runs it (`from sim import "
                      "ttl, ttnn`); names such as dma, TensorAccessor, CircularBuffer and core_index are TT-Lang's "
                      "API before 1.0: write @ttl.operation with @ttl.compute() / @ttl.datamovement() kernels, "
                      "ttl.make_dataflow_buffer_like and ttl.copy", user_location())


MODULES = {"sim": sys.modules[__name__], "sim.testing": testing, "sim.typedefs": typedefs}
__path__ = []   # a package: ``import sim.X`` asks the finder of tilefold.cli.tt_lang_submodules, which names what exists

__all__ = ["ttl", "ttnn", "testing", "typedefs", "assert_pcc"]

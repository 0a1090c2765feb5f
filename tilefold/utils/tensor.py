"""``tilelang.utils.tensor`` as tilefold gives it: input supplies and a closeness check with an
allowed share of mismatched elements, on torch tensors (numpy arrays when torch is not installed).

Reads: tensors and kernel parameters (anything with ``shape`` and ``dtype``). Writes: new tensors.
"""

from __future__ import annotations

import numpy as np

from tilefold.run.jit import TensorSupplyType
from tilefold.ttl_utils.correctness import values


def map_torch_type(name: str):
    """The torch data type of a TileLang dtype name (``"float16"``, ``"e4m3_float8"`` ...)."""
    import torch

    aliases = {"e4m3_float8": "float8_e4m3fn", "e5m2_float8": "float8_e5m2", "e4m3fnuz_float8": "float8_e4m3fnuz"}
    return getattr(torch, aliases.get(name, name))


def get_tensor_supply(supply_type: TensorSupplyType = TensorSupplyType.Integer):
    """A function making an input for a parameter (anything with ``shape`` and ``dtype``): small
    integers (``Integer``; 0-2 for unsigned and bool), uniform in [-1, 1), normal, ``randn``, zeros or
    ones; ``Auto`` is uniform for floats and integers otherwise."""

    def supply(param):
        shape = [int(s) for s in param.shape]
        dtype = param.dtype
        try:
            import torch
        except ImportError:
            torch = None
        name = str(dtype).replace("torch.", "")
        unsigned = name.startswith("uint") or name == "bool"
        floating = name.startswith(("float", "bfloat"))
        kind = supply_type
        if kind == TensorSupplyType.Auto:
            kind = TensorSupplyType.Uniform if floating else TensorSupplyType.Integer
        rng = np.random.default_rng()
        if kind == TensorSupplyType.Integer:
            values = rng.integers(0 if unsigned else -2, 3, shape)
        elif kind == TensorSupplyType.Uniform:
            values = rng.uniform(-1.0, 1.0, shape)
        elif kind in (TensorSupplyType.Normal, TensorSupplyType.Randn):
            values = rng.standard_normal(shape)
        elif kind == TensorSupplyType.Zero:
            values = np.zeros(shape)
        else:
            values = np.ones(shape)
        if torch is None:
            return values.astype(np.dtype(name) if name != "bfloat16" else np.float32)
        return torch.from_numpy(np.asarray(values, np.float64)).to(dtype if isinstance(dtype, torch.dtype)
                                                                   else map_torch_type(name))

    return supply


def torch_assert_close(tensor_a, tensor_b, rtol=1e-2, atol=1e-3, max_mismatched_ratio=0.001, verbose=False,
                       equal_nan=True, base_name="LHS", ref_name="RHS", **_checks):
    """``tensor_a`` is close to ``tensor_b`` (``|a - b| <= atol + rtol * |b|``) except for at most
    ``max_mismatched_ratio`` of the elements; an AssertionError naming how many differ and the first
    one otherwise. Returns True."""
    a = values(tensor_a).astype(np.float64)
    b = values(tensor_b).astype(np.float64)
    if a.shape != b.shape:
        raise AssertionError(f"{base_name} has shape {a.shape} and {ref_name} {b.shape}")
    bad = ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    count, allowed = int(bad.sum()), int(a.size * max_mismatched_ratio)
    if verbose:
        print(f"Number of mismatched elements: {count} / {a.size} (allowed: {allowed})")
    if count > allowed:
        first = np.unravel_index(int(np.argmax(bad)), a.shape)
        raise AssertionError(f"Too many mismatched elements: {count} > {allowed} ({max_mismatched_ratio:.2%} allowed); "
                             f"first at index {tuple(int(i) for i in first)}: {base_name}={a[first]:.6f}, "
                             f"{ref_name}={b[first]:.6f}; greatest absolute difference "
                             f"{float(np.nanmax(np.abs(a - b))):.6g}")
    return True


__all__ = ["TensorSupplyType", "get_tensor_supply", "map_torch_type", "torch_assert_close"]

"""``tilelang.testing`` as tilefold gives it: what TileLang's language tests import around their
kernels — ``main()`` (runs the calling script's ``test_*`` functions), ``set_random_seed``, the
CUDA requirement decorators (tilefold runs every kernel on its simulated device, so they keep the
test) and ``torch_assert_close``.

Reads: the calling module's globals. Writes: nothing.
"""

from __future__ import annotations

import inspect
import random

import numpy as np

from tilefold.utils.tensor import torch_assert_close


def main() -> None:
    """Run every ``test_*`` function of the calling script, in the order they are defined."""
    caller = inspect.stack()[1].frame.f_globals
    tests = [f for name, f in caller.items() if name.startswith("test_") and inspect.isfunction(f)
             and f.__module__ == caller.get("__name__")]
    for test in tests:
        test()
    print(f"{len(tests)} test{'s' * (len(tests) != 1)} passed")


def set_random_seed(seed: int = 42) -> None:
    random.seed(seed)
    np.random.seed(seed)
    try:
        import torch
    except ImportError:
        return
    torch.manual_seed(seed)


def _keep(*args, **_kwargs):
    """A requirement decorator (``@requires_cuda``, ``@requires_cuda_compute_version_ge(8, 9)``): the
    test runs, on the simulated device."""
    if len(args) == 1 and callable(args[0]) and not _kwargs:
        return args[0]
    return lambda f: f


requires_cuda = requires_cuda_compute_version = requires_cuda_compute_version_ge = _keep
requires_cuda_compute_version_eq = requires_cuda_compute_version_gt = requires_cuda_compute_version_lt = _keep
requires_cuda_compute_version_le = requires_package = _keep

__all__ = ["main", "set_random_seed", "requires_cuda", "requires_cuda_compute_version_ge", "torch_assert_close"]

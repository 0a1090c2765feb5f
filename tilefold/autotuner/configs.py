"""The configurations a sweep tries, and what each one is.

Reads: ``configs`` as the user wrote it: a list of dicts, a dict of lists (every combination),
or a function of the tuned call's arguments returning either. Writes: a list of plain dicts,
each a complete set of keyword arguments for one candidate, in a fixed order (the order the
user gave, combinations in row-major order of the dict's keys).

Errors: :class:`~tilefold.errors.KernelError` for a configuration that is not a dict of
keyword arguments, or an empty sweep.
"""

from __future__ import annotations

import inspect
import itertools

from tilefold.errors import KernelError


def expand(configs, args: tuple, kwargs: dict, location=None) -> list[dict]:
    """The configurations of one tuned call, as a list of keyword-argument dicts."""
    if callable(configs) and not isinstance(configs, (list, tuple, dict)):
        configs = _call_generator(configs, args, kwargs)
    if isinstance(configs, dict):
        keys = list(configs)
        values = [v if isinstance(v, (list, tuple, range)) else [v] for v in configs.values()]
        configs = [dict(zip(keys, combo)) for combo in itertools.product(*values)]
    try:
        configs = list(configs)
    except TypeError:
        raise KernelError(f"configs must be a list of dicts, a dict of lists or a function returning one, not "
                          f"{type(configs).__name__}", location) from None
    for i, config in enumerate(configs):
        if not isinstance(config, dict) or not all(isinstance(k, str) for k in config):
            raise KernelError(f"configuration {i} is {config!r}; each configuration is a dict of keyword arguments "
                              "(for example {'block_M': 64, 'block_N': 64})", location)
    if not configs:
        raise KernelError("the autotuner was given no configurations", location)
    return [dict(c) for c in configs]


def _call_generator(generator, args: tuple, kwargs: dict):
    """TileLang's ``configs=get_configs`` takes the tuned call's arguments (or some of them)."""
    try:
        params = inspect.signature(generator).parameters
    except (TypeError, ValueError):
        return generator(*args, **kwargs)
    if any(p.kind is p.VAR_POSITIONAL for p in params.values()):
        return generator(*args, **kwargs)
    positional = [p for p in params.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    take_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    chosen_kwargs = {k: v for k, v in kwargs.items() if take_kwargs or k in params}
    return generator(*args[:len(positional)], **chosen_kwargs)


def describe(config: dict) -> str:
    """``block_M=64 block_N=128`` — a configuration on one line."""
    return " ".join(f"{k}={v}" for k, v in config.items())


__all__ = ["expand", "describe"]

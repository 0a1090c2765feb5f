"""``from tilelang.carver.arch import driver``: the device queries of persistent kernels.

Reads: the default device (:func:`tilefold.arch.get_arch`). Writes: nothing. A GPU's streaming
multiprocessors are a Tensix device's worker cores: ``driver.get_num_sms()`` is their number (64
on an n150), the grid a persistent kernel (``T.Kernel(sm_num)``) spreads over.
"""

from tilefold.arch import get_arch


class _Driver:
    """The device queries TileLang's examples make."""

    @staticmethod
    def get_num_sms(device_id: int = 0) -> int:
        """The number of worker cores of the default device."""
        return get_arch().num_cores


driver = _Driver()

__all__ = ["driver"]

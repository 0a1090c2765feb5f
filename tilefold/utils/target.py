"""Compilation targets as TileLang names them. Reads / writes nothing.

tilefold compiles every kernel for Tenstorrent devices, so ``TENSTORRENT_TARGET`` (what
tilelang-tt's examples pass as ``target=``) is the one target and ``determine_target`` returns it.
"""

TENSTORRENT_TARGET = "tenstorrent"


def determine_target(target: str = "auto", return_object: bool = False) -> str:
    """The target a kernel compiles for: always Tenstorrent."""
    return TENSTORRENT_TARGET


__all__ = ["TENSTORRENT_TARGET", "determine_target"]

"""The TT-NN host value types that TT-Lang kernels and :mod:`tilefold.ttnn` share.

Reads / writes: nothing. Layouts (``TILE_LAYOUT`` / ``ROW_MAJOR_LAYOUT``, compared by identity)
and core coordinates, as TT-NN spells them; ``ttl.*`` and ``ttnn.*`` re-export them. Also how a
host array given where a ttnn tensor goes is converted (:func:`conversion_hint`).
"""

from __future__ import annotations


class Layout:
    """A TT-NN layout (``ttnn.TILE_LAYOUT`` / ``ttnn.ROW_MAJOR_LAYOUT``)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"Layout.{self.name}"


TILE_LAYOUT = Layout("TILE")
ROW_MAJOR_LAYOUT = Layout("ROW_MAJOR")
Layout.TILE, Layout.ROW_MAJOR = TILE_LAYOUT, ROW_MAJOR_LAYOUT      # ttnn.Layout.TILE spells TILE_LAYOUT


class CoreCoord:
    def __init__(self, x: int, y: int):
        self.x, self.y = x, y

    def __repr__(self) -> str:
        return f"CoreCoord(x={self.x}, y={self.y})"


def conversion_hint(value) -> str:
    """How to make a ttnn tensor of ``value`` when it is a torch tensor or a numpy array (else "")."""
    return {"torch": "a torch tensor: convert it with ttnn.from_torch(...) first",
            "numpy": "a numpy array: convert it with ttnn.from_numpy(...) first"}.get(
        type(value).__module__.split(".")[0], "")

"""The parts of TileLang's ``tilelang.carver`` that kernels written for TileLang import (``arch.driver``)."""

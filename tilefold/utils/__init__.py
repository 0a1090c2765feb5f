"""The parts of TileLang's ``tilelang.utils`` that kernels written for TileLang import (``target``)."""

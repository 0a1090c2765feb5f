"""TileLang's element functions come from the one SFPU table: each ``T.<fn>`` is a row of
:mod:`tilefold.ir.sfpu` marked ``tilelang`` (or a logarithm computed from ``log``), and a call on
Python numbers folds to what that row computes."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.language as T
from tilefold.frontend.tilelang import api
from tilefold.frontend.tilelang.elements import _fold
from tilefold.ir.sfpu import SFPU, TILELANG_FUNCTIONS, TILELANG_LOGARITHMS


def test_every_element_function_is_an_intrinsic_of_the_language():
    for fn in (*TILELANG_FUNCTIONS, *TILELANG_LOGARITHMS):
        assert api.INTRINSICS[fn] is getattr(T, fn) and fn in T.__all__
        assert fn in TILELANG_LOGARITHMS or SFPU[fn].arity == "unary" and not SFPU[fn].params


@pytest.mark.parametrize("fn", TILELANG_FUNCTIONS)
def test_folding_on_the_host_agrees_with_the_sfpu_row(fn):
    for x in (0.25, 0.75, 2.5):
        device = float(SFPU[fn].values(np.float32(x)))
        assert _fold(fn, x) == pytest.approx(device, rel=1e-6, abs=1e-7), (fn, x)


def test_logarithms_fold_to_their_base():
    assert _fold("log2", 8.0) == 3.0 and _fold("log10", 1000.0) == 3.0

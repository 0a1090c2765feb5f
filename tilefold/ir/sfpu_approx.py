"""The SFPU's own approximations of some compute-API functions, as TT-Metalium 0.69 implements them.

Reads: nothing. Writes: nothing. Each function takes float32 DST values (any shape) and
``fp32_dest`` (whether DST holds float32; with a 16-bit DST the kernels pick lower-degree
polynomials and round their result to bfloat16 themselves) and returns float32 values computed
with the same steps as the SFPU microcode (``ckernel_sfpu_trigonometry.h``, ``ckernel_sfpu_exp.h``,
``ckernel_sfpu_expm1.h``, ``ckernel_sfpu_elu.h`` ...): the same reductions, coefficients and
operation order, in float32.

* ``exp_21f`` — ``exp`` as ``2**(x / ln 2)`` from the integer and fractional parts of
  ``x / ln 2 + 127`` scaled by ``2**23``, the fraction refined by a 2nd-degree polynomial
  (Moroz et al. 2022, ``exp_21f``); the building block of ``sinh``, ``cosh``, ``elu``, ``selu``,
  ``celu`` and ``expm1`` on a 16-bit DST.
* ``asin`` / ``acos`` — ``asin(|x|) = |x| P(x**2)`` up to ``|x| = 5/8`` and
  ``pi/2 - 2 asin(sqrt((1 - |x|) / 2))`` above (the square root from the ``0x5f37`` seed and two
  Newton steps), ``P`` a degree-3 minimax polynomial for a 16-bit DST and the Maclaurin series to
  ``x**19`` for float32; ``acos = pi/2 - asin``; NaN outside ``[-1, 1]``.
* ``atan`` — a minimax odd polynomial (degree 7 for a 16-bit DST, 17 for float32) on
  ``[0, 1]``, with ``pi/2 - atan(1/|x|)`` above 1.
* ``tan`` — a four-part Cody-Waite reduction by ``pi/2`` and an odd polynomial (degree 7 for a
  16-bit DST, 15 for float32), ``-1/tan`` in odd quadrants (the device refines a quadratic
  estimate of that reciprocal with Newton steps; here it is the float32 reciprocal).
* ``sinh`` / ``cosh`` — ``(exp_21f(x) -+ exp_21f(-x)) / 2``: for small ``|x|`` ``sinh`` loses
  the digits two nearly equal exponentials cancel, as on the device.
* ``expm1`` — with a 16-bit DST, ``x (1 + x (1/2 + 0.166 x))`` below 0.4 and ``exp_21f(x) - 1``
  above; with float32, its accurate fp32 path (modeled by numpy's ``expm1``).
* ``elu`` / ``selu`` / ``celu`` — ``exp_21f(x) - 1`` for negative inputs, scaled.

The other SFPU functions are computed exactly in float32 and rounded to DST's precision (see
:mod:`tilefold.ir.sfpu`).
"""

from __future__ import annotations

import numpy as np

F = np.float32
PI_2 = F(1.5707964)
FRAC_2_PI = F(0.636619747)


def _bits(x) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)


def _from_bits(b) -> np.ndarray:
    return np.ascontiguousarray(b, dtype=np.uint32).view(np.float32)


def to_bf16(x) -> np.ndarray:
    """``float_to_fp16b(x, 0)``: round to bfloat16, nearest even (NaN stays NaN), kept in float32."""
    b = _bits(x).astype(np.uint64)
    rounded = ((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return np.where(np.isnan(x), np.float32(np.nan), _from_bits(rounded))


def _dest(y, fp32_dest: bool) -> np.ndarray:
    return y if fp32_dest else to_bf16(y)


def _mad(a, b, c) -> np.ndarray:
    """The SFPU's fused ``a * b + c``: one rounding to float32."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)).astype(np.float32)


def _horner(x, *coefficients) -> np.ndarray:
    """``c0 + x (c1 + x (c2 + ...))`` in float32 fused multiply-adds (``PolynomialEvaluator::eval``)."""
    acc = np.full_like(x, F(coefficients[-1]))
    for c in reversed(coefficients[:-1]):
        acc = _mad(acc, x, F(c))
    return acc


def exp_21f(x, fp32_dest: bool = False) -> np.ndarray:
    """``_sfpu_exp_21f_bf16_``: ``exp(x)``."""
    x = np.asarray(x, np.float32)
    xlog2 = np.clip(_mad(x, F(1.4426950216293334961), F(127.0)), F(0.0), F(255.0))
    xlog2 = np.where(np.isnan(xlog2), F(0.0), xlog2)
    z = np.floor(xlog2.astype(np.float64) * (1 << 23)).astype(np.int64)
    exponent = (z >> 23) & 0xFF
    frac = (z & 0x7FFFFF).astype(np.float32)
    p = _horner(frac, 1.0017248, 7.839635491371155e-08, 4.791750143340323e-15)
    y = _from_bits((_bits(p) & np.uint32(0x807FFFFF)) | (exponent.astype(np.uint32) << np.uint32(23)))
    # the clamp of x / ln 2 + 127 to [0, 255] gives 0 below about -88.5 and +inf above 88.5
    y = np.where(exponent == 0, F(0.0), np.where(exponent == 255, F(np.inf), y))
    return _dest(np.where(np.isnan(x), np.float32(np.nan), y), fp32_dest)


def sinh(x, fp32_dest: bool = False) -> np.ndarray:
    return (exp_21f(x, fp32_dest) - exp_21f(-np.asarray(x, np.float32), fp32_dest)) * F(0.5)


def cosh(x, fp32_dest: bool = False) -> np.ndarray:
    return (exp_21f(x, fp32_dest) + exp_21f(-np.asarray(x, np.float32), fp32_dest)) * F(0.5)


# asin(z) / z as a polynomial in z**2: a degree-3 minimax fit on [0, 5/8] for a 16-bit DST, the
# Maclaurin series to z**19 for float32
_ASIN_BF16 = (0.999978601932525634765625, 0.16771225631237030029296875, 0.06381262838840484619140625,
              0.083148844540119171142578125)
_ASIN_FP32 = (1.0, 0.16666666666666666, 0.075, 0.044642857142857144, 0.030381944444444444, 0.022372159090909091,
              0.017352764423076923, 0.01396484375, 0.011551800896139705, 0.009761609529194078)


def _sqrt_custom(x) -> np.ndarray:
    """``sfpu_sqrt_custom``: the 0x5f37 inverse square-root seed, two Newton steps, times ``x``."""
    x = np.asarray(x, np.float32)
    approx = _from_bits(np.uint32(0x5F370000) - (_bits(x) >> np.uint32(1)))
    neg_half = x * F(-0.5)
    with np.errstate(over="ignore", invalid="ignore"):      # the seed of 0 overflows; its lanes keep x
        for _ in range(2):
            approx = _mad(approx * approx, neg_half, F(1.5)) * approx
        return np.where(x != 0, approx * x, x)


def _asin_abs(a, fp32_dest: bool) -> np.ndarray:
    """``asin(|x|)``: the polynomial up to 5/8, ``pi/2 - 2 asin(sqrt((1 - |x|) / 2))`` above."""
    small = a <= F(0.625)
    root = _sqrt_custom(np.where(small, F(0.0), (F(1.0) - a) * F(0.5)))
    z = np.where(small, a, root)
    p = z * _horner(z * z, *(_ASIN_FP32 if fp32_dest else _ASIN_BF16))
    return np.where(small, p, PI_2 - F(2.0) * p)


def _asin_acos(x, fp32_dest: bool, acos: bool) -> np.ndarray:
    x = np.asarray(x, np.float32)
    a = np.copysign(_asin_abs(np.abs(x), fp32_dest), x)
    y = PI_2 - a if acos else a
    return _dest(np.where(np.abs(x) <= 1, y, np.float32(np.nan)), fp32_dest)


def asin(x, fp32_dest: bool = False) -> np.ndarray:
    return _asin_acos(x, fp32_dest, acos=False)


def acos(x, fp32_dest: bool = False) -> np.ndarray:
    return _asin_acos(x, fp32_dest, acos=True)


_ATAN_BF16 = (0.999787867069244384765625, -0.325808584690093994140625, 0.1555790007114410400390625,
              -4.4326744973659515380859375e-2)
_ATAN_FP32 = (1.0, -0.3333314359188079833984375, 0.19993579387664794921875, -0.14209578931331634521484375,
              0.1066047251224517822265625, -7.5408883392810821533203125e-2, 4.3082617223262786865234375e-2,
              -1.62907354533672332763671875e-2, 2.90188402868807315826416015625e-3)


def atan(x, fp32_dest: bool = False) -> np.ndarray:
    x = np.asarray(x, np.float32)
    t0 = np.abs(x)
    big = t0 > 1
    t0 = np.where(big, F(1.0) / np.where(big, t0, F(1.0)), t0)
    t1 = _horner(t0 * t0, *(_ATAN_FP32 if fp32_dest else _ATAN_BF16)) * t0
    t1 = np.where(big, PI_2 - t1, t1)
    return _dest(np.where(np.isnan(x), np.float32(np.nan), np.copysign(t1, x)), fp32_dest)


_TAN_BF16 = (float.fromhex("0x1.55953p-2"), float.fromhex("0x1.02b98p-3"), float.fromhex("0x1.4f1f4ep-4"))
_TAN_FP32 = tuple(float.fromhex(h) for h in ("0x1.555556p-2", "0x1.111072p-3", "0x1.ba5716p-5", "0x1.620abcp-6",
                                             "0x1.4787dp-7", "0x1.2b404p-10", "0x1.fa9f82p-9"))
# -pi/2 as four parts (Cody-Waite): P0 and P1 in the kernel, P2 and P3 in programmable constants
_PIO2_PARTS = tuple(F(float.fromhex(h)) for h in ("-0x1.92p+0", "-0x1.fbp-12", "-0x1.51p-22", "-0x1.0b4612p-34"))


def tan(x, fp32_dest: bool = False) -> np.ndarray:
    v = np.asarray(x, np.float32)
    bias = F(12582912.0)                       # 1.5 * 2**23: adding it rounds to an integer
    j = _mad(v, FRAC_2_PI, bias)
    odd = (_bits(j) & np.uint32(1)).astype(bool)
    j = j - bias
    a = v
    for part in _PIO2_PARTS:
        a = _mad(j, part, a)
    s = a * a
    t = _horner(s, *(_TAN_FP32 if fp32_dest else _TAN_BF16)) * s
    r = _mad(t, a, a)
    with np.errstate(divide="ignore"):
        r = np.where(odd, F(-1.0) / r, r)
    return _dest(r, fp32_dest)


def expm1(x, fp32_dest: bool = False) -> np.ndarray:
    x = np.asarray(x, np.float32)
    if fp32_dest:
        return np.expm1(x).astype(np.float32)
    small = x * _mad(x, _mad(x, F(0.166), F(0.5)), F(1.0))
    return to_bf16(np.where(np.abs(x) < F(0.4), small, exp_21f(x, True) - F(1.0)))


def _exp_minus_one(x) -> np.ndarray:
    return exp_21f(np.minimum(x, F(0.0)), True) - F(1.0)


def elu(x, alpha, fp32_dest: bool = False) -> np.ndarray:
    x = np.asarray(x, np.float32)
    return np.where(x < 0, _dest(F(alpha) * _exp_minus_one(x), fp32_dest), x)


def selu(x, scale, alpha, fp32_dest: bool = False) -> np.ndarray:
    x = np.asarray(x, np.float32)
    return np.where(x < 0, _dest(_exp_minus_one(x) * F(alpha) * F(scale), fp32_dest), x * F(scale))


def celu(x, alpha, alpha_recip, fp32_dest: bool = False) -> np.ndarray:
    x = np.asarray(x, np.float32)
    negative = F(alpha) * _exp_minus_one(x * F(alpha_recip))
    return np.where(x < 0, _dest(negative, fp32_dest), x)


__all__ = ["exp_21f", "sinh", "cosh", "asin", "acos", "atan", "tan", "expm1", "elu", "selu", "celu", "to_bf16"]

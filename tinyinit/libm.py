"""The C library's natural log, bit for bit, for a whole numpy array at once.

Why this exists: the spec's Box-Muller takes ln(1 - u0) in float64, and C, Rust
and Python's `math.log` all call the C library's `log`. numpy's `np.log` is
faster but rounds differently in about one value in 300, and calling
`math.log` once per element costs a Python call each. So we compute the log
to about 60 bits ourselves, round it, and ask `math.log` only where rounding
is too close to call.

The argument: glibc's log errs by at most 0.533 units in the last place (ulp,
from its own error analysis, worst for |ln x| just above 1/32). So if ln(x)
lies farther than 0.033 ulp from the midpoint between two doubles, the C
library must return the nearest double. Our estimate y + t of ln(x) is good
to better than 0.01 ulp, so whenever |t| < 0.45 ulp(y), y is what the C
library returns. The other ~10% go to math.log.

How the 60 bits come (the classic table method):
    x = 2**k * m            with m in [sqrt(1/2), sqrt(2))
    m = c * (1 + r)         with c = 1 + i/256 the nearest grid point, |r| <= 2**-9
    ln x = k ln 2 + ln c + ln(1 + r)
ln 2 and the 182 values ln c are stored as pairs of doubles (hi + lo, about
106 bits, from `decimal`); r is an exact pair r_hi + r_lo; ln(1 + r) is its
Taylor series, which needs only 8 terms when |r| <= 2**-9.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np

GRID = 256
_I_MIN, _I_MAX = -76, 107  # c = 1 + i/256 covers [sqrt(1/2), sqrt(2)) with |m - c| <= 1/512
_MARGIN = 0.45  # in ulps: 0.5 - 0.033 (C library) - 0.01 (our estimate) - slack


def _log_pair(value: Decimal) -> tuple[float, float]:
    """ln(value) as hi + lo, two doubles, about 106 bits together."""
    with localcontext() as ctx:
        ctx.prec = 50
        exact = value.ln()
        hi = float(exact)
        return hi, float(exact - Decimal(hi))


def _tables():
    i = np.arange(_I_MIN, _I_MAX + 1)
    pairs = [_log_pair(Decimal(1) + Decimal(int(k)) / GRID) for k in i]
    ln_c_hi, ln_c_lo = (np.array(col) for col in zip(*pairs))
    # ln 2 cut to 40 bits, so that k * LN2_HI is exact for every |k| < 2**13.
    ln2 = _log_pair(Decimal(2))[0]
    ln2_hi = math.ldexp(math.floor(math.ldexp(ln2, 40)), -40)
    with localcontext() as ctx:
        ctx.prec = 50
        ln2_lo = float(Decimal(2).ln() - Decimal(ln2_hi))
    return ln_c_hi, ln_c_lo, ln2_hi, ln2_lo


LN_C_HI, LN_C_LO, LN2_HI, LN2_LO = _tables()
_SQRT_HALF = math.sqrt(0.5)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp: a = hi + lo exactly, hi with 26 significant bits."""
    t = a * 134217729.0  # 2**27 + 1
    hi = t - (t - a)
    return hi, a - hi


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s + e == a + b exactly, s = fl(a + b) (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def log(x: np.ndarray) -> np.ndarray:
    """ln(x) for positive finite float64 x, equal to math.log element by element.

    >>> import math
    >>> x = np.array([0.5, 0.3823075195178809, 1.0])
    >>> bool(np.all(log(x) == [math.log(v) for v in x]))
    True
    """
    x = np.asarray(x, dtype=np.float64)
    f, e = np.frexp(x)  # x = f * 2**e, f in [0.5, 1)
    low = f < _SQRT_HALF
    m = np.where(low, 2.0 * f, f)
    k = (e - low).astype(np.float64)

    i = np.rint((m - 1.0) * GRID)
    c = 1.0 + i / GRID
    d = m - c  # exact: m and c are within a factor 2 of each other
    r_hi = d / c
    a_hi, a_lo = _split(r_hi)  # c has <= 9 bits, so a_hi * c and a_lo * c are exact
    r_lo = ((d - a_hi * c) - a_lo * c) / c  # d - r_hi * c, exactly, then / c

    # ln(1 + r) - r for r = r_hi + r_lo: Taylor to r**8 (next term < 2**-72 |r|).
    r = r_hi
    poly = -0.5 + r * (1 / 3 + r * (-0.25 + r * (0.2 + r * (-1 / 6 + r * (1 / 7 - r / 8)))))
    tail = r * r * poly - r_hi * r_lo

    j = i.astype(np.intp) - _I_MIN
    s, e1 = _two_sum(k * LN2_HI, LN_C_HI[j])
    hi, e2 = _two_sum(s, r_hi)
    lo = e1 + e2 + (k * LN2_LO + LN_C_LO[j] + r_lo + tail)
    y = hi + lo
    t = lo - (y - hi)  # y + t == hi + lo to about 2**-106 |y|

    # Too close to a rounding midpoint (or at a binade edge, where ulp changes): ask math.log.
    unsure = np.flatnonzero(
        (np.abs(t) >= _MARGIN * np.spacing(np.abs(y))) | (np.abs(np.frexp(y)[0]) == 0.5)
    )
    y[unsure] = np.fromiter(map(math.log, x[unsure].tolist()), np.float64, len(unsure))
    return y

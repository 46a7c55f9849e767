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

How the 60 bits come (the table method of glibc's own log, without its FMA):
    x = 2**k * z            z in [0.6875, 1.375), cut out of x's bits
    z * g = 1 + r           g ~ 1/z from a table of 256, with only 9 bits
    ln x = k ln 2 - ln g + ln(1 + r)
The bits of x after subtracting those of 0.6875 give k (the top 12) and the
table index i (the next 8), with no floating-point work. g has 9 significant
bits, so r = z * g - 1 is exact (see `_reduce`), and |r| < 2**-8. ln 2 and
the 256 values -ln g are stored as hi + lo pairs (about 97 bits); hi is cut
short so that w = k ln2_hi - ln g_hi is exact, and w + r is split exactly
into a double and its rounding error (Fast2Sum, as |w| >= |r| wherever
w != 0). ln(1 + r) - r is the Taylor series to r**8 (the next term is below
2**-75).

Where the 0.01 ulp comes from. Every step is exact except (a) the Taylor
tail r**2 * P(r), computed to 3 roundings of itself, |tail| <= r**2/2 <= 2**-17,
(b) the few additions of the small parts, and (c) the 2**-97 of the tables.
Near x = 1 (g = 1, k = 0) ln x ~ r and (a) is at most 1.5 * 2**-53 * r**2,
that is 1.5 * 2**-61 |ln x| at |r| < 2**-8: under 0.006 ulp. Elsewhere
|ln x| >= 2**-9 and (a) + (b) stay below 2**-68, again under 0.01 ulp.
tests/test_libm.py measures the estimate against 40-digit logs.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np

TABLE_BITS = 8
_OFF = 0x3FE6000000000000  # the bits of 0.6875: z in [0.6875, 1.375), 1.0 starts an interval
_SHIFT = 52 - TABLE_BITS
_MARGIN = 0.45  # in ulps: 0.5 - 0.033 (C library) - 0.01 (our estimate) - slack
_G_BITS = 9  # significant bits of g: z_hi (53 - 9 bits) * g and z_lo (9 bits) * g are exact
_HI_QUANTUM = 2.0**-43  # ln2_hi and ln_g_hi are multiples of it, so k ln2_hi + ln_g_hi is exact


def _ln(value) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 50
        return Decimal(value).ln()


def _hi_lo(exact: Decimal, quantum: float) -> tuple[float, float]:
    """exact = hi + lo: hi a multiple of quantum, lo the nearest double to the rest."""
    hi = float(round(exact / Decimal(quantum))) * quantum
    with localcontext() as ctx:
        ctx.prec = 50
        return hi, float(exact - Decimal(hi))


def _short(value: float, bits: int) -> float:
    """value rounded to `bits` significant bits."""
    m, e = math.frexp(value)
    return math.ldexp(round(math.ldexp(m, bits)), e - bits)


def _interval(i: int) -> tuple[float, float]:
    """The smallest and largest z of table interval i."""
    start = _OFF + (i << _SHIFT)
    bits = np.array([start, start + (1 << _SHIFT) - 1], dtype=np.int64)
    lo, hi = bits.view(np.float64).tolist()
    return lo, hi


def _choose_g(lo: float, hi: float) -> float:
    """The 9-bit g with the smallest |z * g - 1| over [lo, hi]; 1 next to z = 1."""
    if lo <= 1.0 <= hi or hi == math.nextafter(1.0, 0.0):
        return 1.0  # so that ln x = ln(1 + r) with nothing to cancel near x = 1
    centre = _short(2.0 / (lo + hi), _G_BITS)
    candidates = [_short(centre * (1 + s * 2.0**-_G_BITS), _G_BITS) for s in (-1, 0, 1)]
    return min(candidates, key=lambda g: max(abs(lo * g - 1), abs(hi * g - 1)))


def _tables():
    g = np.array([_choose_g(*_interval(i)) for i in range(1 << TABLE_BITS)])
    pairs = [_hi_lo(-_ln(v), _HI_QUANTUM) for v in g.tolist()]
    ln_g_hi, ln_g_lo = (np.array(col) for col in zip(*pairs))  # of -ln g
    ln2_hi, ln2_lo = _hi_lo(_ln(2), 2 * _HI_QUANTUM)  # 42 bits: k * ln2_hi exact for |k| < 2**11
    return g, ln_g_hi, ln_g_lo, ln2_hi, ln2_lo


G, MINUS_LN_G_HI, MINUS_LN_G_LO, LN2_HI, LN2_LO = _tables()


def _reduce(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(k, i, r) with x = 2**k * z and z * G[i] = 1 + r exactly, from the bits of x.

    Micro-optimized: integer work on the bits and in-place updates. Why r is
    exact without a fused multiply-add: z_hi (z with its last 9 bits cleared)
    has 44 bits and g 9, so z_hi * g is exact, and so are z_hi * g - 1
    (Sterbenz) and z_lo * g. z is a multiple of 2**-53 (2**-52 when z >= 1,
    where g < 1 is a multiple of 2**-9; when z < 1, g >= 1 is a multiple of
    2**-8), so all three are multiples of 2**-61; with |r| < 2**-8 their sum
    r fits in 53 bits: exact too.
    """
    ix = x.view(np.int64)
    tmp = ix - _OFF
    i = (tmp >> _SHIFT) & ((1 << TABLE_BITS) - 1)
    tmp >>= 52  # k: the exponent, counted from z's binade
    k = tmp
    iz = ix - (k << 52)
    z = iz.view(np.float64)
    iz_hi = iz & -(1 << _G_BITS)
    z_hi = iz_hi.view(np.float64)
    g = G[i]
    r = z_hi * g
    r -= 1.0
    z_lo = z - z_hi
    z_lo *= g
    r += z_lo
    return k, i, r


def _log1p_tail(r: np.ndarray) -> np.ndarray:
    """ln(1 + r) - r for |r| < 2**-8: the Taylor series -r**2/2 + r**3/3 - ... + ... - r**8/8."""
    p = r * (-1 / 8)
    for n in (7, 6, 5, 4, 3, 2):
        p += (-1) ** (n + 1) / n
        p *= r
    p *= r  # r**2 * (-1/2 + r/3 - ...)
    return p


def log_estimate(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(y, t): y = fl(ln x) and y + t = ln x to better than 0.01 ulp, for positive normal x."""
    k, i, r = _reduce(x)
    kf = k.astype(np.float64)
    w = kf * LN2_HI
    w += MINUS_LN_G_HI[i]  # exact: both are multiples of 2**-43 and |w| < 2**10
    hi = w + r
    w -= hi
    w += r  # the rounding error of hi = w + r, exact since |w| >= |r| or w = 0 (Fast2Sum)
    lo = kf
    lo *= LN2_LO
    lo += MINUS_LN_G_LO[i]
    lo += _log1p_tail(r)
    lo += w
    y = hi + lo
    hi -= y
    hi += lo  # t: y + t = hi + lo exactly (Fast2Sum)
    return y, hi


def log(x: np.ndarray) -> np.ndarray:
    """ln(x) for positive finite float64 x, equal to math.log element by element.

    >>> import math
    >>> x = np.array([0.5, 0.3823075195178809, 1.0])
    >>> bool(np.all(log(x) == [math.log(v) for v in x]))
    True
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    y, t = log_estimate(x)
    # Sure: y + t/0.9 rounds back to y, that is |t| <= 0.45 of the gap to y's neighbour on
    # t's side (at a power of two that is the smaller gap, so binade edges need no care).
    t *= 0.5 / _MARGIN
    t += y
    unsure = t != y
    unsure |= x < 2.2250738585072014e-308  # subnormal (or not positive): outside the table's reach
    unsure = np.flatnonzero(unsure)
    y[unsure] = np.fromiter(map(math.log, x[unsure].tolist()), np.float64, len(unsure))
    return y

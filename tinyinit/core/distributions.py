"""Numbers from a generator: uniforms and the spec's Box-Muller normals.

Any object with a `uniform()` method is a generator here (a course's frozen
scalar PCG32 has nothing else). A `PCG32` of this package is also accepted and
takes the fast path: blocks of uniforms computed with vector arithmetic, spread
over the CPUs this process may use (`tinyinit.core.parallel`), each block starting
where the previous one ends thanks to jump-ahead. Both paths give the same numbers,
bit for bit.

About the last bit of a normal. The spec computes r = sqrt(-2 ln(1 - u0)),
cos(2 pi u1) and sin(2 pi u1) in float64 with the C library's functions, as
C, Rust and Python's `math` do; numpy's own `np.log` rounds differently in
about one value in 300. `tinyinit.core.libm` gives the C library's results for
whole arrays, so the normals here are the same doubles as in any other
implementation of the spec.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from . import libm
from .arguments import KindError, generator, instance, integer, number, real_array, shown
from .parallel import run_all
from .pcg32 import PCG32, TABLE_SIZE, advanced_state, uniforms_at

__all__ = [
    "box_muller",
    "normal",
    "uniform_float32",
    "uniforms",
]

# Normal pairs per block, one block per task of the thread pool (`parallel.run_all`):
# 2**16 pairs, 512 KiB per float64 column (see pcg32.TABLE_SIZE for why not smaller).
PAIRS_PER_BLOCK = TABLE_SIZE


def _check_rng(rng) -> None:
    """rng refused unless it has a uniform() method; what that returns is checked as it is
    drawn (`_uniforms_of`), as nothing may be drawn before a call's arguments are all taken."""
    generator("rng", rng)


def _uniforms_of(rng, size: int) -> np.ndarray:
    """size >= 1 calls of rng.uniform() as float64, refused unless each is a float in [0, 1).

    The kind of the first value is checked as returned (float() would take the str "0.5" or
    a bool), and the range of all of them at once, by numpy: nanoseconds a value, against
    the microsecond of a call to a Python uniform(). A later value float() cannot take at all
    is refused in numpy's words.
    """
    draws = (rng.uniform() for _ in range(size))
    first = next(draws)
    accepted = "a generator whose uniform() returns floats in [0, 1), such as tinyinit.PCG32(seed)"
    if not isinstance(first, (float, np.floating)):
        raise KindError(
            f"rng must be {accepted}, got {shown(rng)}, whose uniform() returned {shown(first)}"
        )
    try:
        u = np.fromiter(itertools.chain((first,), draws), np.float64, size)
    except (TypeError, ValueError) as error:  # a value that is no number, after a float
        raise KindError(
            f"rng must be {accepted}, got {shown(rng)}, whose uniform() returned a value that "
            f"is no float ({error})"
        ) from None
    inside = (u >= 0) & (u < 1)  # False for NaN
    if not inside.all():
        value = float(u[np.argmin(inside)])
        raise ValueError(
            f"rng must be {accepted}, got {shown(rng)}, whose uniform() returned {shown(value)}"
        )
    return u


def _draw(rng, n: int, transform, dtype=np.float64, every: int = 1) -> np.ndarray:
    """transform(...) of the next n uniforms, block by block, into one new array.

    transform(*columns, out) takes `every` columns of a block of uniforms u:
    u[0::every], u[1::every], ... (so Box-Muller gets its u0 and u1 apart) and
    writes as many values into out, the block's slice of the result (no
    temporary as big as a block, and no second copy). A PCG32 is never touched by the workers:
    each column is computed from the generator's state jumped to its first
    word (two words per uniform), and the generator itself jumps over all n
    uniforms at the end, exactly where n calls of uniform() leave it. Memory
    beyond the output is a few blocks, whatever n is.
    """
    out = np.empty(n, dtype=dtype)
    block = every * PAIRS_PER_BLOCK
    starts = range(0, n, block)
    if isinstance(rng, PCG32):

        def fill(start: int) -> None:
            size = min(block, n - start)
            first = advanced_state(rng.state, rng.inc, 2 * start)
            columns = [
                uniforms_at(advanced_state(first, rng.inc, 2 * j), rng.inc, size // every, every)
                for j in range(every)
            ]
            transform(*columns, out=out[start : start + size])

        if len(starts) > 1:
            run_all(fill, starts)
        elif starts:
            fill(0)  # one block: here, with no hand-over to a thread
        rng.state = advanced_state(rng.state, rng.inc, 2 * n)
    else:
        for start in starts:
            size = min(block, n - start)
            u = _uniforms_of(rng, size)
            transform(*(u[j::every] for j in range(every)), out=out[start : start + size])
    return out


def uniforms(rng, n: int) -> np.ndarray:
    """n uniforms in [0, 1) as float64, equal to n calls of rng.uniform().

    >>> uniforms(PCG32(0), 2)
    array([0.28031228, 0.48922414])
    """
    _check_rng(rng)
    return _draw(rng, integer("n", n, minimum=0), lambda u, out: np.copyto(out, u))


def uniform_float32(rng, n: int, low: float, high: float) -> np.ndarray:
    """float32(low + (high - low) * u_k) for the next n uniforms u_k: U(low, high).

    >>> uniform_float32(PCG32(0), 2, -1.0, 1.0)
    array([-0.43937546, -0.02155171], dtype=float32)
    """
    _check_rng(rng)
    low, high = number("low", low), number("high", high)
    if not math.isfinite(high - low):
        raise ValueError(f"high - low must be finite, got low={low!r} and high={high!r}")
    return _uniform_float32(rng, integer("n", n, minimum=0), low, high)


def _uniform_float32(rng, n: int, low: float, high: float) -> np.ndarray:
    width = high - low

    def weights(u, out):
        with np.errstate(over="ignore"):  # beyond float32 is inf, the package's overflow
            out[:] = low + width * u  # in float64, rounded to float32 once

    return _draw(rng, n, weights, np.float32)


# --- the draws of the initializers, trusting the arguments their doors checked -------------


def scaled_uniform_float32(rng, n: int, a: float) -> np.ndarray:
    """float32(-a + 2a * u_k) for the next n uniforms u_k: U(-a, a), spec section 4.

    The draw of every symmetric uniform initializer (xavier_uniform, kaiming_uniform) and of
    `tinyinit.physics.variance`'s uniform weights, which check their arguments first: rng a
    generator, n >= 0, a >= 0 (a bound past float range, whose 2a is not finite, is refused
    here). a - (-a) is 2a exactly, so this is uniform_float32(rng, n, -a, a), bit for bit.

    >>> scaled_uniform_float32(PCG32(0), 2, 0.5)
    array([-0.21968773, -0.01077586], dtype=float32)
    """
    if not math.isfinite(2.0 * a):
        raise ValueError(f"a must be a finite real number with 2a finite too, got {a!r}")
    return _uniform_float32(rng, n, -a, a)


def _cos_and_sin_terms(u0: np.ndarray, u1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(r cos t, r sin t) for each pair, r = sqrt(-2 ln(1 - u0)), t = 2 pi u1, in float64."""
    r = libm.unchecked("log", 1.0 - u0)  # 1 - u0 is exact and in (0, 1]: the log is finite
    r *= -2.0
    np.sqrt(r, out=r)
    t = (2.0 * math.pi) * u1
    cos_t = libm.unchecked("cos", t)  # t in [0, 2 pi): finite
    cos_t *= r
    sin_t = libm.unchecked("sin", t)
    sin_t *= r
    return cos_t, sin_t


def box_muller(u0: np.ndarray, u1: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Standard normals from pairs of uniforms (u0, u1), spec section 3.

    Each pair gives r cos(t), then r sin(t), with r = sqrt(-2 ln(1 - u0)) and
    t = 2 pi u1: 2 * len(u0) values, into `out` if given.

    >>> box_muller(np.array([0.2803122753265841]), np.array([0.4892241428740438]))
    array([-0.809237  ,  0.05487465])
    """
    u0, u1 = real_array("u0", u0, ndim=1), real_array("u1", u1, ndim=1)
    for name, u in (("u0", u0), ("u1", u1)):
        if u.shape != u0.shape or not ((u >= 0) & (u < 1)).all():
            raise ValueError(f"{name} must hold uniforms in [0, 1), as many as u0, got {shown(u)}")
    if out is not None:
        instance("out", out, np.ndarray, "None or a float64 array for the 2 * len(u0) normals")
        if out.dtype != np.float64 or out.shape != (2 * len(u0),):
            raise ValueError(
                f"out must be a float64 array of shape ({2 * len(u0)},), got {shown(out)}"
            )
    return _box_muller(u0, u1, out)


def _box_muller(u0: np.ndarray, u1: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    if out is None:
        out = np.empty(2 * len(u0))
    out[0::2], out[1::2] = _cos_and_sin_terms(u0, u1)
    return out


def normal(rng, n: int) -> np.ndarray:
    """n standard normals as float64, by Box-Muller on pairs of uniforms.

    ceil(n / 2) pairs are drawn; for odd n the last sine is dropped, but the
    generator still moves past the whole pair. So normal(rng, 3) then
    normal(rng, 1) is not normal(rng, 4): draw a whole tensor in one call.

    >>> normal(PCG32(0), 3)
    array([-0.809237  ,  0.05487465, -0.74574252])
    """
    _check_rng(rng)
    return normal_float64(rng, integer("n", n, minimum=0))


def normal_float64(rng, n: int) -> np.ndarray:
    """normal(rng, n): n standard normals in float64, trusting that rng and n were checked.

    The draw of orthogonal_init, whose door checked them, and of `normal` after its own.

    >>> normal_float64(PCG32(0), 3)
    array([-0.809237  ,  0.05487465, -0.74574252])
    """
    return _draw(rng, 2 * ((n + 1) // 2), _box_muller, every=2)[:n]


def scaled_normal_float32(
    rng, n: int, std: float, mean: float = 0.0, bounds: tuple[float, float] | None = None
) -> np.ndarray:
    """float32(normal(rng, n) * std + mean): a normal weight, computed in float64, cast once.

    A mean of 0 is not added (so that -0.0 stays -0.0, as in the spec). With
    bounds (a, b), a < b, the mean is always added, and a value outside [a, b], as
    tested in float64, comes out as NaN: the truncated normal's rejections. Beyond float32
    is inf, without a warning (the package's overflow). The draw of every normal initializer,
    which checks the arguments first: rng a generator, n >= 0, std >= 0, mean a number, a < b.

    >>> scaled_normal_float32(PCG32(0), 3, 2.0, mean=1.0)
    array([-0.618474  ,  1.1097493 , -0.49148503], dtype=float32)
    """

    def weights(u0, u1, out):
        for j, z in enumerate(_cos_and_sin_terms(u0, u1)):
            z *= std
            if mean or bounds is not None:
                z += mean
            if bounds is not None:
                z[(z < bounds[0]) | (z > bounds[1])] = np.nan
            with np.errstate(over="ignore"):  # beyond float32 is inf
                out[j::2] = z  # rounded to float32 once

    return _draw(rng, 2 * ((n + 1) // 2), weights, np.float32, every=2)[:n]

"""Numbers from a generator: uniforms and the spec's Box-Muller normals.

Any object with a `uniform()` method is a generator here (a course's frozen
scalar PCG32 has nothing else). A `PCG32` of this package is also accepted and
takes the fast path: blocks of uniforms computed with vector arithmetic, spread
over the machine's cores, each block starting where the previous one ends
thanks to jump-ahead. Both paths give the same numbers, bit for bit.

About the last bit of a normal. The spec computes r = sqrt(-2 ln(1 - u0)) in
float64 with the C library's log, as C, Rust and Python's `math` do; numpy's
own `np.log` rounds differently in about one value in 300. `tinyinit.libm.log`
gives the C library's result for a whole array, so the normals here are the
same doubles as in any other implementation of the spec.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .libm import log
from .pcg32 import PCG32, _count

# Normal pairs per block: 2**14 pairs are 2**15 uniforms (256 KiB of float64),
# small enough for the cache, large enough that numpy's per-call cost vanishes.
PAIRS_PER_BLOCK = 1 << 14

_pool: ThreadPoolExecutor | None = None


def _workers() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="tinyinit")
    return _pool


def _check_rng(rng) -> None:
    if not callable(getattr(rng, "uniform", None)):
        raise ValueError(
            f"rng must be a generator with a uniform() method, such as tinyinit.PCG32(seed); "
            f"got {rng!r}"
        )


def _draw(rng, n: int, transform, dtype=np.float64) -> np.ndarray:
    """transform(u) for the next n uniforms u, block by block, into one new array.

    transform maps a block of uniforms to as many values. A PCG32 is never
    touched by the workers: each block draws from a copy of it advanced to the
    block's start (two words per uniform), and the generator itself jumps over
    all n uniforms at the end, exactly where n calls of uniform() leave it.
    Memory beyond the output is a few blocks, whatever n is.
    """
    out = np.empty(n, dtype=dtype)
    block = 2 * PAIRS_PER_BLOCK
    starts = range(0, n, block)
    if isinstance(rng, PCG32):

        def fill(start: int) -> None:
            size = min(block, n - start)
            u = rng.copy().advance(2 * start).uniforms(size)
            out[start : start + size] = transform(u)

        if len(starts) > 1:
            list(_workers().map(fill, starts))
        elif n:
            fill(0)
        rng.advance(2 * n)
    else:
        for start in starts:
            size = min(block, n - start)
            u = np.fromiter((rng.uniform() for _ in range(size)), np.float64, size)
            out[start : start + size] = transform(u)
    return out


def uniforms(rng, n: int) -> np.ndarray:
    """n uniforms in [0, 1) as float64, equal to n calls of rng.uniform().

    >>> uniforms(PCG32(0), 2)
    array([0.28031228, 0.48922414])
    """
    _check_rng(rng)
    return _draw(rng, _count("n", n), lambda u: u)


def scaled_uniform_float32(rng, n: int, a: float) -> np.ndarray:
    """float32(-a + 2a * u_k) for the next n uniforms u_k: U(-a, a), spec section 4."""
    _check_rng(rng)
    return _draw(rng, _count("n", n), lambda u: -a + 2.0 * a * u, np.float32)


def box_muller(u: np.ndarray) -> np.ndarray:
    """Standard normals from an even number of uniforms, spec section 3.

    Each pair (u0, u1) gives r cos(t), then r sin(t), with
    r = sqrt(-2 ln(1 - u0)) and t = 2 pi u1. 1 - u0 is in (0, 1]: the log is finite.
    """
    u0, u1 = u[0::2], u[1::2]
    r = np.sqrt(-2.0 * log(1.0 - u0))
    t = 2.0 * math.pi * u1
    z = np.empty_like(u)
    z[0::2] = r * np.cos(t)
    z[1::2] = r * np.sin(t)
    return z


def normal(rng, n: int) -> np.ndarray:
    """n standard normals as float64, by Box-Muller on pairs of uniforms.

    ceil(n / 2) pairs are drawn; for odd n the last sine is dropped, but the
    generator still moves past the whole pair. So normal(rng, 3) then
    normal(rng, 1) is not normal(rng, 4): draw a whole tensor in one call.

    >>> normal(PCG32(0), 3)
    array([-0.809237  ,  0.05487465, -0.74574252])
    """
    _check_rng(rng)
    n = _count("n", n)
    return _draw(rng, 2 * ((n + 1) // 2), box_muller)[:n]


def scaled_normal_float32(rng, n: int, std: float) -> np.ndarray:
    """float32(std * normal(rng, n)): a normal weight, computed in float64, cast once."""
    _check_rng(rng)
    n = _count("n", n)

    def weights(u):
        return (std * box_muller(u)).astype(np.float32)

    return _draw(rng, 2 * ((n + 1) // 2), weights, np.float32)[:n]

"""The C library's log, cos and sin over whole numpy arrays, bit for bit.

Why this exists: the spec's Box-Muller takes ln(1 - u0), cos(2 pi u1) and
sin(2 pi u1) in float64 with the C library's functions, as C, Rust and
Python's `math` do. `math.log` costs a Python call per element (about 60 ns);
numpy's `np.log` loops in C, but on CPUs with AVX-512 it runs numpy's own
vector log, which rounds differently from the C library in about one value
in 300. One different last bit in r changes a weight.

numpy takes that vector loop only when it reads the input forwards. Handed
the array backwards, x[::-1], it calls the C library's function once per
element, still in C (about 4 ns each for log). So

    log(x) = np.log(x[::-1])[::-1]

is the C library's log of every element of x, at array speed (numpy 2.1 and
later; numpy 2.0 and 1.x vectorize backward reads too). cos and sin go the
same way: numpy takes them from the C library in either direction today, and
reading backwards keeps them so if a later numpy vectorizes them forwards.

This is how numpy is built, not something it promises. So each function is
checked once, on first use, against `math` on 2**16 values (a vector log
differs on some 200 of them); where the check fails, that function falls back
to `math` element by element: still exact, and normals are drawn about 4 times
slower. `backwards_is_exact(name)` tells which way you get.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from .arguments import function, real_array

__all__ = [
    "cos",
    "log",
    "sin",
]

PROBE_SIZE = 1 << 16

# name: (numpy's ufunc, the C library's function as Python exposes it, what to check it on)
_FUNCTIONS = {
    "log": (np.log, math.log, lambda u: 1.0 - u),  # Box-Muller's arguments, in (0, 1]
    "cos": (np.cos, math.cos, lambda u: 2.0 * math.pi * u),  # and its angles, in [0, 2 pi)
    "sin": (np.sin, math.sin, lambda u: 2.0 * math.pi * u),
}


def _backwards(ufunc, x: np.ndarray) -> np.ndarray:
    """ufunc(x), computed by walking x from its last element to its first."""
    out = np.empty_like(x)
    ufunc(x[::-1], out=out)  # out[j] = f(x[n - 1 - j]): the output is written forwards
    return out[::-1]


def _one_by_one(scalar, x: np.ndarray) -> np.ndarray:
    return np.fromiter(map(scalar, x.tolist()), np.float64, x.size)


def agrees(vectorized, scalar, x: np.ndarray) -> bool:
    """Whether vectorized(x) equals scalar(v) for every element v of x, bit for bit.

    >>> agrees(np.sqrt, math.sqrt, np.array([2.0, 3.0]))  # sqrt is correctly rounded everywhere
    True
    """
    vectorized, scalar = function("vectorized", vectorized), function("scalar", scalar)
    x = real_array("x", x, ndim=1)
    return np.array_equal(vectorized(x), _one_by_one(scalar, x))


@cache
def backwards_is_exact(name: str) -> bool:
    """Whether numpy's backward loop gives the C library's `name` on this machine.

    >>> backwards_is_exact("log")
    True
    """
    ufunc, scalar, arguments = _FUNCTIONS[name]
    probe = arguments(np.random.default_rng(0).random(PROBE_SIZE))
    return agrees(lambda x: _backwards(ufunc, x), scalar, probe)


def unchecked(name: str, x: np.ndarray) -> np.ndarray:
    """The C library's "log", "cos" or "sin" of every element of x, checking nothing: the
    twin of `log`, `cos` and `sin` for the draws, whose arguments are in range by construction.

    >>> unchecked("cos", np.array([2.0]))[0] == math.cos(2.0)
    np.True_
    """
    x = np.asarray(x, dtype=np.float64)
    flat = np.ascontiguousarray(x).reshape(-1)  # forwards in memory, so flat[::-1] is backwards
    if backwards_is_exact(name):
        y = _backwards(_FUNCTIONS[name][0], flat)
    else:
        y = _one_by_one(_FUNCTIONS[name][1], flat)
    return y.reshape(x.shape)


def log(x) -> np.ndarray:
    """ln(x) of positive float64 x, equal to math.log element by element.

    >>> x = np.array([0.5, 0.3823075195178809, 1.0])
    >>> bool(np.all(log(x) == [math.log(v) for v in x]))
    True
    """
    x = real_array("x", x)
    if x.size and not x.min() > 0:  # `not >` also catches NaN
        bad = float(x.reshape(-1)[~(x.reshape(-1) > 0)][0])
        raise ValueError(f"x must hold positive numbers only (log's domain), got {bad!r}")
    return unchecked("log", x)


def cos(x) -> np.ndarray:
    """cos(x) of finite float64 x, equal to math.cos element by element.

    >>> bool(cos(np.array([2.0]))[0] == math.cos(2.0))
    True
    """
    return unchecked("cos", real_array("x", x, finite=True))


def sin(x) -> np.ndarray:
    """sin(x) of finite float64 x, equal to math.sin element by element.

    >>> bool(sin(np.array([2.0]))[0] == math.sin(2.0))
    True
    """
    return unchecked("sin", real_array("x", x, finite=True))

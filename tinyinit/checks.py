"""Argument checks: each returns the value it accepts, or raises a ValueError that says
what was wrong, the value given and what is accepted.

The messages, for an argument called `name` given the value v:

* `integer(name, v)`: "name must be an integer, got v";
  with minimum=0, "name must be a non-negative integer, got v";
  with minimum=m (m >= 1), "name must be an integer >= m, got v".
  A bool is refused (True is not a count), a numpy integer accepted.
* `number(name, v)`: "name must be a finite real number, got v";
  with minimum=m, "name must be a finite real number >= m, got v";
  with above=m, "name must be a finite real number > m, got v".
  A bool, a string, None, NaN and the infinities are refused.
* `one_of(name, v, choices)`: "name must be one of a, b, c; got v", listing every choice
  in its order.

v is always shown with repr(), so a string reads 'relu' and a float 1.0.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Hashable, Iterable
from numbers import Real

import numpy as np


def is_integer(value) -> bool:
    """Whether value is an integer, Python's or numpy's, and not a bool (True is not a count).

    >>> is_integer(3), is_integer(np.int8(3)), is_integer(True), is_integer(3.0)
    (True, True, False, False)
    """
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def integer(name: str, value, *, minimum: int | None = None) -> int:
    """value as an int, if it is an integer (Python's or numpy's, not a bool) >= minimum.

    >>> integer("n_layers", np.int64(12), minimum=1)
    12
    >>> integer("n_layers", 0, minimum=1)
    Traceback (most recent call last):
    ...
    ValueError: n_layers must be an integer >= 1, got 0
    >>> integer("n", -1, minimum=0)
    Traceback (most recent call last):
    ...
    ValueError: n must be a non-negative integer, got -1
    >>> integer("seed", 1.0)
    Traceback (most recent call last):
    ...
    ValueError: seed must be an integer, got 1.0
    """
    if not is_integer(value) or (minimum is not None and value < minimum):
        if minimum is None:
            accepted = "an integer"
        elif minimum == 0:
            accepted = "a non-negative integer"
        else:
            accepted = f"an integer >= {minimum}"
        raise ValueError(f"{name} must be {accepted}, got {value!r}")
    return operator.index(value)


def number(name: str, value, *, minimum: float | None = None, above: float | None = None) -> float:
    """value as a float, if it is a finite real number (not a bool), >= minimum or > above.

    >>> number("gain", 1)
    1.0
    >>> number("gain", -1.0, minimum=0)
    Traceback (most recent call last):
    ...
    ValueError: gain must be a finite real number >= 0, got -1.0
    >>> number("std", 0, above=0)
    Traceback (most recent call last):
    ...
    ValueError: std must be a finite real number > 0, got 0
    >>> number("mean", "0")
    Traceback (most recent call last):
    ...
    ValueError: mean must be a finite real number, got '0'
    """
    is_number = isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)
    if (
        not is_number
        or (minimum is not None and value < minimum)
        or (above is not None and value <= above)
    ):
        accepted = "a finite real number"
        if minimum is not None:
            accepted += f" >= {minimum}"
        if above is not None:
            accepted += f" > {above}"
        raise ValueError(f"{name} must be {accepted}, got {value!r}")
    return float(value)


def one_of(name: str, value, choices: Iterable):
    """value, if it is one of choices (a list or another unhashable value never is).

    >>> one_of("layer", "conv", ("linear", "conv"))
    'conv'
    >>> one_of("layer", "Conv", ("linear", "conv"))
    Traceback (most recent call last):
    ...
    ValueError: layer must be one of linear, conv; got 'Conv'
    """
    choices = tuple(choices)
    if not (isinstance(value, Hashable) and value in choices):
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}; got {value!r}")
    return value

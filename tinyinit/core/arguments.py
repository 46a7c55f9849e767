"""Argument checks: each returns the value it accepts, or raises an error that says what was
wrong, the value given and what is accepted, in one wording:

    "<name> must be <what is accepted>, got <the value>"

A value of the wrong kind (a string where a number goes, a bool where a count goes, None)
raises TypeError; a value of the right kind out of its range (a negative count, a NaN std,
an unknown name) raises ValueError, as Python's own `int(None)` and `int("x")` do. Numpy's
integers and floats are numbers like Python's.

The TypeError is a `KindError`, which is a ValueError too: torch.nn.init raises ValueError for
a leaky_relu slope that is not a number, the module card's test catalog asks the same of
`calculate_gain`, and code written for either goes on catching it (numpy's AxisError is a
ValueError and an IndexError for the same reason). `except TypeError` catches the wrong kinds
alone.

For an argument called `name` given the value v:

* `integer(name, v)`: "name must be an integer, got v";
  with minimum=0, "name must be a non-negative integer, got v";
  with minimum=m (m >= 1), "name must be an integer >= m, got v";
  with maximum=M too, "name must be an integer from m to M, got v".
  A bool is refused (True is not a count), a numpy integer accepted.
* `number(name, v)`: "name must be a finite real number, got v";
  with minimum=m, "... >= m"; with above=m, "... > m"; with maximum=M, "... <= M";
  with minimum and maximum, "... from m to M".
  A bool, a string and None are of the wrong kind; NaN and the infinities out of range, and
  an integer past float range (10**400: "..., one a float can hold").
* `one_of(name, v, choices)`: "name must be one of a, b, c, got v", listing every choice
  in its order.
* `flag(name, v)`: "name must be True or False, got v".
* `instance(name, v, kinds, what)`: "name must be <what>, got v".
* `function(name, v)`: "name must be a callable, got v".
* `generator(name, v)`: "name must be a generator with a uniform() method, ..., got v".
* `real_array(name, v, ndim=...)`: "name must be <a real array ...>, got <its shape>".
* `integers(name, v)`: "name must be a sequence of integers, got v".
* `float_dtype(name, v)`: "name must be a float dtype (np.float64, np.float32), got v".
* `shape(name, v)`: "name must be a tuple of non-negative integers, got v"; past
  MAX_ELEMENTS, "..., each and their product at most M (2**31), got v, of n elements".

v is shown with repr(), so a string reads 'relu' and a float 1.0; an array by its shape and
dtype, and a long repr cut short.

>>> number("gain", -1.0, minimum=0)
Traceback (most recent call last):
...
ValueError: gain must be a finite real number >= 0, got -1.0
>>> number("gain", "1")
Traceback (most recent call last):
...
tinyinit.core.arguments.KindError: gain must be a finite real number, got '1'
"""

from __future__ import annotations

import inspect
import math
import operator
from collections.abc import Callable, Hashable, Iterable
from numbers import Real

import numpy as np

__all__ = [
    "KindError",
    "MAX_ELEMENTS",
    "flag",
    "float_dtype",
    "function",
    "generator",
    "instance",
    "integer",
    "integers",
    "is_integer",
    "is_number",
    "number",
    "one_of",
    "real_array",
    "shape",
    "shown",
]

# A repr longer than this is cut, so that a message stays one readable line.
SHOWN_CHARACTERS = 80

# The most elements an array shape may have, and the most in any one dimension (numpy refuses
# an empty array with a huge dimension too): 8 GiB of float32 weights, drawn from 16 GiB of
# float64 normals. Beyond, numpy raises MemoryError on most machines, and past 2**63 it
# cannot even describe the array; a shape is refused here instead, before anything is drawn.
MAX_ELEMENTS = 2**31


def shown(value) -> str:
    """value as an error message shows it: repr(), an array by shape and dtype, cut short.

    >>> shown("relu"), shown(np.zeros((2, 3)))
    ("'relu'", 'an array of shape (2, 3) and dtype float64')
    >>> len(shown(list(range(100)))) <= SHOWN_CHARACTERS
    True
    """
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    try:
        text = repr(value)
    except Exception:  # a value whose repr fails is still named by its type
        text = f"a {type(value).__name__}"
    if len(text) > SHOWN_CHARACTERS:
        text = text[: SHOWN_CHARACTERS - 4] + " ..."
    return text


class KindError(TypeError, ValueError):
    """An argument of the wrong kind: a TypeError, and a ValueError for torch's callers.

    >>> issubclass(KindError, TypeError), issubclass(KindError, ValueError)
    (True, True)
    """


def _refuse(kind: type[Exception], name: str, accepted: str, value) -> Exception:
    return kind(f"{name} must be {accepted}, got {shown(value)}")


def is_integer(value) -> bool:
    """Whether value is an integer, Python's or numpy's, and not a bool (True is not a count).

    >>> is_integer(3), is_integer(np.int8(3)), is_integer(True), is_integer(3.0)
    (True, True, False, False)
    """
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_number(value) -> bool:
    """Whether value is a real number, Python's or numpy's, and not a bool (finite or not).

    >>> is_number(1), is_number(np.float32(0.5)), is_number(True), is_number("1")
    (True, True, False, False)
    """
    if type(value) is float or type(value) is int:  # the usual case, without the ABC's cost
        return True
    return isinstance(value, Real) and not isinstance(value, (bool, np.bool_))


def integer(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """value as an int, if it is an integer (Python's or numpy's, not a bool) in range.

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
    tinyinit.core.arguments.KindError: seed must be an integer, got 1.0
    """
    if not is_integer(value):
        raise _refuse(KindError, name, _integer_words(minimum, maximum), value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise _refuse(ValueError, name, _integer_words(minimum, maximum), value)
    return operator.index(value)


def _integer_words(minimum, maximum) -> str:
    # The words are made only for a refusal: a check on a hot path costs a type test or two.
    if maximum is not None:
        return f"an integer from {minimum} to {maximum}"
    if minimum is None:
        return "an integer"
    if minimum == 0:
        return "a non-negative integer"
    return f"an integer >= {minimum}"


def number(
    name: str,
    value,
    *,
    minimum: float | None = None,
    above: float | None = None,
    maximum: float | None = None,
    finite: bool = True,
) -> float:
    """value as a float, if it is a finite real number (not a bool) >= minimum, > above, <= maximum.

    finite=False lets +-inf through too (never NaN): "a real number ..., inf allowed".

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
    tinyinit.core.arguments.KindError: mean must be a finite real number, got '0'
    """
    if not is_number(value):
        raise _refuse(KindError, name, _number_words(minimum, above, maximum, finite), value)
    try:
        refused = (
            math.isnan(value)
            or (finite and math.isinf(value))
            or (minimum is not None and value < minimum)
            or (above is not None and value <= above)
            or (maximum is not None and value > maximum)
        )
    except OverflowError:  # an integer (or a Fraction) past float range: no float holds it
        accepted = _number_words(minimum, above, maximum, finite) + ", one a float can hold"
        raise _refuse(ValueError, name, accepted, value) from None
    if refused:
        raise _refuse(ValueError, name, _number_words(minimum, above, maximum, finite), value)
    return float(value)


def _number_words(minimum, above, maximum, finite: bool) -> str:
    accepted = "a finite real number" if finite else "a real number"
    if minimum is not None and maximum is not None:
        accepted += f" from {minimum} to {maximum}"
    else:
        limits = ((">=", minimum), (">", above), ("<=", maximum))
        bounds = [f"{word} {bound}" for word, bound in limits if bound is not None]
        accepted += " " + " and ".join(bounds) if bounds else ""
    if not finite:
        accepted += ", inf allowed"
    return accepted


def one_of(name: str, value, choices: Iterable):
    """value, if it is one of choices; TypeError if it is not even of their kind.

    A value none of whose types the choices have (a number among names, a list) is of the
    wrong kind; a value of their kind that is not among them (a misspelt name) is out of range.

    >>> one_of("layer", "conv", ("linear", "conv"))
    'conv'
    >>> one_of("layer", "Conv", ("linear", "conv"))
    Traceback (most recent call last):
    ...
    ValueError: layer must be one of linear, conv, got 'Conv'
    >>> one_of("layer", 3, ("linear", "conv"))
    Traceback (most recent call last):
    ...
    tinyinit.core.arguments.KindError: layer must be one of linear, conv, got 3
    """
    choices = tuple(choices)
    if type(value) is str and value in choices:  # the usual case: a name among names
        return value
    accepted = f"one of {', '.join(map(str, choices))}"
    if not isinstance(value, Hashable) or not isinstance(value, tuple(map(type, choices))):
        raise _refuse(KindError, name, accepted, value)
    if value not in choices:
        raise _refuse(ValueError, name, accepted, value)
    return value


def flag(name: str, value) -> bool:
    """value as a bool, if it is one (Python's or numpy's): 1 and "yes" are not.

    >>> flag("scaled", np.True_)
    True
    >>> flag("scaled", 1)
    Traceback (most recent call last):
    ...
    tinyinit.core.arguments.KindError: scaled must be True or False, got 1
    """
    if not isinstance(value, (bool, np.bool_)):
        raise _refuse(KindError, name, "True or False", value)
    return bool(value)


def instance(name: str, value, kinds: type | tuple[type, ...], what: str):
    """value, if it is an instance of kinds; `what` says what is accepted in words.

    >>> instance("rng", None, float, "a float")
    Traceback (most recent call last):
    ...
    tinyinit.core.arguments.KindError: rng must be a float, got None
    """
    if not isinstance(value, kinds):
        raise _refuse(KindError, name, what, value)
    return value


def generator(name: str, value):
    """value, if it is a random generator: anything with a uniform() method that takes no
    argument, as a PCG32 has (a course's frozen scalar PCG32 has nothing else). Python's
    random.Random is not one: its uniform(a, b) needs a range.

    >>> generator("rng", None)
    Traceback (most recent call last):
    ...
    tinyinit.core.arguments.KindError: rng must be a generator with a uniform() method, such as tinyinit.PCG32(seed), got None
    """  # noqa: E501
    uniform = getattr(value, "uniform", None)
    if not callable(uniform) or not _takes_no_argument(uniform):
        accepted = "a generator with a uniform() method, such as tinyinit.PCG32(seed)"
        raise _refuse(KindError, name, accepted, value)
    return value


def _takes_no_argument(method: Callable) -> bool:
    """Whether method() can be called as it is; a method whose signature cannot be read (one
    written in C) is taken at its word."""
    try:
        inspect.signature(method).bind()
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def function(name: str, value) -> Callable:
    """value, if it can be called.

    >>> function("phi", abs) is abs
    True
    """
    if not callable(value):
        raise _refuse(KindError, name, "a callable", value)
    return value


def real_array(
    name: str,
    value,
    *,
    ndim: int | None = None,
    finite: bool = False,
    what: str = "",
    float64: bool = True,
) -> np.ndarray:
    """value as a float64 array (a copy only where needed), if it holds real numbers.

    ndim: the number of dimensions it must have; finite: refuse NaN and the infinities;
    what: the words for what is accepted, when the default ones say too little;
    float64=False: keep the array's own dtype (float32 stays float32). Lists and tuples of
    numbers are arrays too; strings, None, objects and booleans are not.

    >>> real_array("x", [[1, 2]], ndim=2)
    array([[1., 2.]])
    >>> real_array("x", [1.0, 2.0], ndim=2)
    Traceback (most recent call last):
    ...
    ValueError: x must be a real array of 2 dimensions, got an array of shape (2,) and dtype float64
    """

    def refuse(kind: type[Exception], got) -> Exception:
        accepted = what or "a real array" + (f" of {ndim} dimensions" if ndim is not None else "")
        if finite and not what:
            accepted += " of finite numbers"
        return _refuse(kind, name, accepted, got)

    if value is None or isinstance(value, (str, bytes)):
        raise refuse(KindError, value)
    try:
        array = np.asarray(value)
    except Exception:  # ragged lists and other things numpy cannot make one array of
        raise refuse(KindError, value) from None
    if array.dtype.kind not in "iuf":
        raise refuse(KindError, value)
    if float64:
        array = array.astype(np.float64, copy=False)
    if ndim is not None and array.ndim != ndim:
        raise refuse(ValueError, array)
    if finite and not np.isfinite(array).all():
        raise refuse(ValueError, array)
    return array


def shape(name: str, value) -> tuple[int, ...]:
    """value as an array shape: an integer, or a tuple, list or 1-D array of them, all >= 0,
    each and their product (the number of elements) at most MAX_ELEMENTS.

    >>> shape("shape", 3), shape("shape", [4, np.int64(3)])
    ((3,), (4, 3))
    >>> shape("shape", (4, -3))
    Traceback (most recent call last):
    ...
    ValueError: shape must be a tuple of non-negative integers, got (4, -3)
    >>> shape("shape", (2**31, 2))
    Traceback (most recent call last):
    ...
    ValueError: shape must be a tuple of non-negative integers, each and their product at most 2147483648 (2**31), got (2147483648, 2), of 4294967296 elements
    """  # noqa: E501
    accepted = "a tuple of non-negative integers"
    if is_integer(value):
        dims = (value,)
    elif isinstance(value, np.ndarray) and value.ndim == 1:
        dims = tuple(value.tolist())
    elif isinstance(value, (tuple, list)):
        dims = tuple(value)
    else:
        dims = None
    if dims is None or not all(is_integer(d) for d in dims):
        raise _refuse(KindError, name, accepted, value)
    if any(d < 0 for d in dims):
        raise _refuse(ValueError, name, accepted, value)
    dims = tuple(operator.index(d) for d in dims)
    size = math.prod(dims)
    if size > MAX_ELEMENTS or max(dims, default=0) > MAX_ELEMENTS:
        # an int of thousands of digits has no str(): it is said by its power of 2
        count = str(size) if size.bit_length() <= 256 else f"more than 2**{size.bit_length() - 1}"
        raise ValueError(
            f"{name} must be {accepted}, each and their product at most {MAX_ELEMENTS} "
            f"(2**{MAX_ELEMENTS.bit_length() - 1}), got {shown(dims)}, of {count} elements"
        )
    return dims


def integers(name: str, value, *, minimum: int | None = None) -> tuple[int, ...]:
    """value as a tuple of ints, if it is a list, tuple, range or 1-D array of integers.

    >>> integers("seeds", range(3)), integers("seeds", np.arange(2))
    ((0, 1, 2), (0, 1))
    >>> integers("seeds", [0, 1.5])
    Traceback (most recent call last):
    ...
    tinyinit.core.arguments.KindError: seeds must be a sequence of integers, got [0, 1.5]
    """
    accepted = "a sequence of integers"
    if minimum is not None:
        accepted += f" >= {minimum}"
    if isinstance(value, np.ndarray):
        items = value.tolist() if value.ndim == 1 and value.dtype.kind in "iu" else None
    elif isinstance(value, (list, tuple, range)):
        items = value
    else:
        items = None
    if items is None or not all(is_integer(item) for item in items):
        raise _refuse(KindError, name, accepted, value)
    if minimum is not None and any(item < minimum for item in items):
        raise _refuse(ValueError, name, accepted, value)
    return tuple(operator.index(item) for item in items)


def float_dtype(name: str, value) -> np.dtype:
    """value as a numpy dtype, if it names a float one (np.float32, "float64", np.dtype("f4")).

    >>> float_dtype("dtype", np.float32)
    dtype('float32')
    >>> float_dtype("x", "int8")
    Traceback (most recent call last):
    ...
    tinyinit.core.arguments.KindError: x must be a float dtype (np.float64, np.float32), got 'int8'
    """
    try:
        dtype = np.dtype(value) if value is not None else None  # np.dtype(None) is float64
    except (TypeError, ValueError):  # not a dtype at all ("bogus", an object, True)
        dtype = None
    if dtype is None or dtype.kind != "f":
        raise _refuse(KindError, name, "a float dtype (np.float64, np.float32)", value)
    return dtype

"""The wire format between the checker and the student's process: one message, one line of JSON.

`tinyinit.course.checker` judges a student's file from its own process and runs the student's
code in another (`tinyinit.course.student_process`); both sides write and read their messages
in the format of this module, and nothing else passes between them. From the checker, on the
student's process's standard input:

    {"id": 1, "hello": true}                       # answered by "ready", once imported
    {"id": 3, "call": "xavier_uniform", "args": [<value>, ...], "kwargs": {...}, "timeout": 30}
    {"id": 4, "probe": "fans", "args": [...]}      # a call whose only question: is it written?

and back, on its standard output (what the student's code prints goes to standard error):

    {"started": true}                              # before the file is imported
    {"id": 1, "ready": true, "functions": {"fans": "yours", "kaiming_normal": "tinyinit's"}}
    {"problem": "importing it raised ...", "where": "my_init.py:3 in <module>", "code": "..."}
    {"id": 3, "value": <value>, "rngs": [[state, inc]], "printed": "..."}
    {"id": 3, "raised": {"type": "ValueError", "message": "...", ...}, "rngs": [...], ...}

`encode(value)` turns a value into a JSON-able dict tagged with its kind (`{"t": "array",
"dtype": "<f4", "shape": [4, 3], "order": "C", "data": <base64>}`, `{"t": "float", "v":
"0x1.8000000000000p+1"}`, ...); `decode` turns it back, checking every field, so that a malformed
message raises `WireError` instead of anything else. No pickle: nothing that arrives can run
code on the side that reads it. The limits (`MAX_TEXT`, `MAX_ARRAY_BYTES`, ...) bound what a
message may hold, and `shorten` cuts a text to them.

This file needs numpy and nothing of tinyinit: the student's Python, which has no tinyinit on
its path, loads it from its file beside student_process.py.

>>> import numpy as np
>>> decode(encode((3, 4)))
(3, 4)
>>> w = decode(encode(np.arange(6, dtype=np.float32).reshape(2, 3)))
>>> w.dtype, w.shape, w.flags.c_contiguous
(dtype('float32'), (2, 3), True)
>>> decode(encode(object()))
<object: not a plain value>
"""

from __future__ import annotations

import base64
import math
import numbers

import numpy as np

__all__ = [
    "DTYPES",
    "Foreign",
    "MAX_ARRAY_BYTES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_ITEMS",
    "MAX_PRINTED",
    "MAX_TEXT",
    "PCG32State",
    "WireError",
    "decode",
    "decode_integer",
    "encode",
    "shorten",
]

# How large the parts of a message may be: enough for every call of the card's tests, far
# less than what would make the checker slow or short of memory.
MAX_TEXT = 500  # characters of an exception's message, a repr, a string
MAX_PRINTED = 2000  # characters of what one call printed
MAX_ITEMS = 64  # items of a tuple or list
MAX_DEPTH = 4  # tuples in tuples
MAX_ARRAY_BYTES = 64 * 2**20
MAX_INT_DIGITS = 100
DTYPES = frozenset(
    np.dtype(t).str
    for t in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128",
    )
)  # fmt: skip


class WireError(ValueError):
    """A message that is not what the protocol says: malformed, too large, of no known kind.

    `decode` raises it, and nothing else, for whatever does not follow the wire format:

    >>> decode({"t": "float", "v": "three"})
    Traceback (most recent call last):
    ...
    tinyinit.course.wire_format.WireError: not a float in hex
    >>> issubclass(WireError, ValueError)
    True
    """


class Foreign:
    """What a student's function returned that is not a plain value, as its type and repr.

    >>> Foreign("MyWeights", "MyWeights(4, 3)")
    <MyWeights: MyWeights(4, 3)>
    """

    def __init__(self, type_name: str, text: str):
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return f"<{self.type_name}: {self.text}>"


def shorten(text: str, limit: int = MAX_TEXT) -> str:
    """text cut to `limit` characters, saying how many more there were.

    >>> shorten("x" * 10, 4)
    'xxxx… (6 more characters)'
    """
    if isinstance(limit, bool) or not isinstance(limit, numbers.Integral) or limit < 0:
        # checks' wording, written out: this file runs in a process without the rest of tinyinit
        kind = ValueError if isinstance(limit, numbers.Integral) and limit < 0 else TypeError
        raise kind(f"limit must be a non-negative integer, got {limit!r}")
    text = str(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def _order(a: np.ndarray) -> str:
    if a.flags.c_contiguous:
        return "C"
    return "F" if a.flags.f_contiguous else "strided"


def encode(value, depth: int = 0) -> dict:
    """A value as a JSON-able dict tagged with its kind (see the module's docstring).

    A float travels in hex, so that it comes back bit for bit; `decode` turns it back:

    >>> encode(3.0)
    {'t': 'float', 'v': '0x1.8000000000000p+1'}
    >>> encode([1, "a"])
    {'t': 'list', 'v': [{'t': 'int', 'v': '1'}, {'t': 'str', 'v': 'a'}]}
    >>> decode(encode([1, "a"])), decode(encode(0.1)) == 0.1
    ([1, 'a'], True)
    """
    if value is None:
        return {"t": "none"}
    if isinstance(value, bool):
        return {"t": "bool", "v": value}
    # A subclass (a namedtuple, an IntEnum) travels as the plain value it holds.
    if isinstance(value, int):
        text = str(int(value)) if abs(value) < 10**MAX_INT_DIGITS else None
        return {"t": "int", "v": text} if text else _foreign(value)
    if isinstance(value, float):
        return {"t": "float", "v": float(value).hex()}
    if isinstance(value, str):
        return {"t": "str", "v": shorten(str(value))}
    if isinstance(value, tuple | list) and depth < MAX_DEPTH and len(value) <= MAX_ITEMS:
        kind = "tuple" if isinstance(value, tuple) else "list"
        return {"t": kind, "v": [encode(v, depth + 1) for v in value]}
    if isinstance(value, np.ndarray) and value.dtype.str in DTYPES:
        if value.nbytes > MAX_ARRAY_BYTES:
            return _foreign(value, f"an array of {value.nbytes} bytes, more than the checker reads")
        data = base64.b64encode(np.ascontiguousarray(value).tobytes()).decode("ascii")
        return {
            "t": "array",
            "dtype": value.dtype.str,
            "shape": list(value.shape),
            "order": _order(value),
            "data": data,
        }
    if isinstance(value, np.generic) and value.dtype.str in DTYPES:
        data = base64.b64encode(value.tobytes()).decode("ascii")
        return {"t": "scalar", "dtype": value.dtype.str, "data": data}
    if type(value).__name__ == "PCG32" and hasattr(value, "state") and hasattr(value, "inc"):
        return {"t": "pcg32", "state": str(value.state), "inc": str(value.inc)}
    return _foreign(value)


def _foreign(value, text: str | None = None) -> dict:
    try:
        name = type(value).__qualname__
    except Exception:  # noqa: BLE001 - a student's class may do anything
        name = "object"
    if text is None:
        try:
            text = repr(value) if type(value).__repr__ is not object.__repr__ else ""
        except Exception:  # noqa: BLE001
            text = ""
        text = text or "not a plain value"
    return {"t": "other", "type": shorten(str(name), 80), "v": shorten(str(text), 200)}


def _field(obj: dict, key: str, kind: type):
    value = obj.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise WireError(f"field {key!r} is not a {kind.__name__}")
    return value


def decode_integer(text: str, digits: int = MAX_INT_DIGITS) -> int:
    """The wire format's integer: decimal digits, a minus sign before them or not, at most
    `digits` of them (a longer one would take Python long to read); anything else a WireError.

    >>> decode_integer("-42")
    -42
    >>> decode_integer("1e3")
    Traceback (most recent call last):
    ...
    tinyinit.course.wire_format.WireError: not an integer: '1e3'
    """
    body = text[1:] if text[:1] == "-" else text
    if not (0 < len(body) <= digits and body.isascii() and body.isdigit()):
        raise WireError(f"not an integer: {shorten(text, 40)!r}")
    return int(text)


def _bytes(obj: dict, expected: int) -> bytes:
    try:
        data = base64.b64decode(_field(obj, "data", str), validate=True)
    except (ValueError, TypeError) as error:
        raise WireError(f"data is not base64: {error}") from None
    if len(data) != expected:
        raise WireError(f"{len(data)} bytes of data where the shape holds {expected}")
    return data


def _dtype(obj: dict) -> np.dtype:
    text = _field(obj, "dtype", str)
    if text not in DTYPES:
        raise WireError(f"dtype {shorten(text, 40)!r} is not one the checker reads")
    return np.dtype(text)


def _array(obj: dict) -> np.ndarray:
    dtype = _dtype(obj)
    shape = _field(obj, "shape", list)
    if len(shape) > 32 or not all(type(d) is int and 0 <= d <= MAX_ARRAY_BYTES for d in shape):
        raise WireError("shape is not a list of sizes the checker reads")
    count = math.prod(shape)
    if count * dtype.itemsize > MAX_ARRAY_BYTES:
        raise WireError("the array is larger than the checker reads")
    flat = np.frombuffer(_bytes(obj, count * dtype.itemsize), dtype=dtype)
    a = flat.reshape(shape).copy()
    order = obj.get("order")
    if order == "F":
        return np.asfortranarray(a)
    if order == "strided" and a.ndim and a.size > 1:
        wide = np.zeros((*a.shape[:-1], 2 * a.shape[-1]), dtype=a.dtype)
        wide[..., ::2] = a
        return wide[..., ::2]  # the same values, not contiguous, as they were
    if order not in ("C", "F", "strided"):
        raise WireError("order is not C, F or strided")
    return a


def decode(obj, depth: int = 0):
    """The value `encode` made `obj` from; WireError for anything that is not such a dict.

    >>> decode({"t": "tuple", "v": [{"t": "int", "v": "4"}, {"t": "int", "v": "3"}]})
    (4, 3)
    >>> decode(encode((4, 3, "fan_in")))
    (4, 3, 'fan_in')
    >>> decode({"t": "pickle", "v": "gASV..."})
    Traceback (most recent call last):
    ...
    tinyinit.course.wire_format.WireError: no value is of kind 'pickle'
    """
    if not isinstance(obj, dict) or depth > MAX_DEPTH + 1:
        raise WireError("a value is not a tagged dict")
    kind = obj.get("t")
    if kind == "none":
        return None
    if kind == "bool":
        return _field(obj, "v", bool)
    if kind == "int":
        return decode_integer(_field(obj, "v", str))
    if kind == "float":
        try:
            return float.fromhex(_field(obj, "v", str)[:40])
        except (ValueError, OverflowError):  # 0x1p+99999 is too large for a float
            raise WireError("not a float in hex") from None
    if kind == "str":
        return shorten(_field(obj, "v", str), 2 * MAX_TEXT)
    if kind in ("tuple", "list"):
        items = _field(obj, "v", list)
        if len(items) > MAX_ITEMS:
            raise WireError(f"more than {MAX_ITEMS} items")
        values = [decode(v, depth + 1) for v in items]
        return tuple(values) if kind == "tuple" else values
    if kind == "array":
        return _array(obj)
    if kind == "scalar":
        dtype = _dtype(obj)
        return np.frombuffer(_bytes(obj, dtype.itemsize), dtype=dtype)[0]
    if kind == "pcg32":
        return PCG32State(
            decode_integer(_field(obj, "state", str)), decode_integer(_field(obj, "inc", str))
        )
    if kind == "other":
        return Foreign(shorten(_field(obj, "type", str), 80), shorten(_field(obj, "v", str), 200))
    raise WireError(f"no value is of kind {shorten(str(kind), 20)!r}")


class PCG32State(tuple):
    """A generator's (state, inc) as it travels: the receiving side makes its own PCG32.

    >>> from tinyinit import PCG32
    >>> rng = PCG32(42)
    >>> sent = decode(encode(rng))
    >>> type(sent).__name__, sent == (rng.state, rng.inc)
    ('PCG32State', True)
    >>> twin = PCG32(0)
    >>> twin.state, twin.inc = sent                   # the receiving side's own generator
    >>> twin.next_u32() == rng.next_u32()
    True
    >>> PCG32State(2**64, 1)
    Traceback (most recent call last):
    ...
    tinyinit.course.wire_format.WireError: a generator's state is not 64 bits
    """

    def __new__(cls, state: int, inc: int):
        if not (0 <= state < 2**64 and 0 <= inc < 2**64):
            raise WireError("a generator's state is not 64 bits")
        return super().__new__(cls, (state, inc))

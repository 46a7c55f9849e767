"""The student's side of the checker: a process that imports my_init.py and only answers calls.

`tinyinit.course.checker` judges a student's file without ever running it in its own process. It
runs this file in a Python of its own, isolated and without site-packages (`python -I -S
-c <bootstrap>`, given numpy's folder, which then loads this file by its path), and sends
it one call at a time: a function's name and plain arguments. This process calls the
student's function and answers with what came back, as plain data: an array's dtype, shape
and bytes, a number, or the text of the exception. Every test, every expected value and the
verdict stay in the checker's process, where the student's code cannot reach them; what it
does here (patch a module, write to a pipe, exit, print megabytes) changes no verdict.

What the student's code finds here:

* from tinyinit, only the generator and its draws, `PCG32`, `normal` and `uniforms` (the
  card's M06.3 and M07.0, which the seven functions build on); every other name of tinyinit
  is a stand-in that, called, says it is tinyinit's and not the student's, so an initializer
  of the package handed in as the student's own is refused, however it was imported;
* no file can be written (its size limit is 0 bytes, on systems that have one), and no
  module is written to disk as bytecode.

The wire format, `encode` and `decode`, is this module's too, so that both sides read it
from one place. One message is one line of JSON. From the checker, on standard input:

    {"id": 1, "hello": true}                       # answered by "ready", once imported
    {"id": 3, "call": "xavier_uniform", "args": [<value>, ...], "kwargs": {...}, "timeout": 30}
    {"id": 4, "probe": "fans", "args": [...]}      # a call whose only question: is it written?

and back, on standard output (what the student's code prints goes to standard error):

    {"started": true}                              # before the file is imported
    {"id": 1, "ready": true, "functions": {"fans": "yours", "kaiming_normal": "tinyinit's"}}
    {"problem": "importing it raised ...", "where": "my_init.py:3 in <module>", "code": "..."}
    {"id": 3, "value": <value>, "rngs": [[state, inc]], "printed": "..."}
    {"id": 3, "raised": {"type": "ValueError", "message": "...", ...}, "rngs": [...], ...}

`encode(value)` turns a value into a JSON-able dict tagged with its kind (`{"t": "array",
"dtype": "<f4", "shape": [4, 3], "order": "C", "data": <base64>}`, `{"t": "float", "v":
"0x1.8000000000000p+1"}`, ...); `decode` turns it back, checking every field, so that a malformed
message raises `WireError` instead of anything else. No pickle: nothing that arrives can run
code on the side that reads it.

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
import contextlib
import faulthandler
import importlib.abc
import importlib.machinery
import importlib.util
import io
import json
import math
import numbers
import os
import sys
import traceback
import types

import numpy as np

__all__ = [
    "StandIn",
    "BorrowedCall",
    "DTYPES",
    "FORMER_MODULES",
    "FUNCTIONS",
    "Foreign",
    "MAX_ARRAY_BYTES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_ITEMS",
    "MAX_PRINTED",
    "MAX_TEXT",
    "NEEDED_MODULES",
    "OWN_MODULES",
    "OWN_NAMES",
    "PCG32State",
    "WireError",
    "decode",
    "decode_integer",
    "encode",
    "serve",
    "shorten",
]

# The card's seven functions, in its order (section 4).
FUNCTIONS = (
    "fans",
    "calculate_gain",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_normal",
    "normal_init",
    "scaled_residual_std",
)
# What a student's file may take from tinyinit: the generator and its draws.
OWN_NAMES = ("PCG32", "normal", "uniforms")
OWN_MODULES = ("tinyinit.core.pcg32", "tinyinit.core.distributions")
# ... and what those need to run (loaded from the package, never offered by name).
NEEDED_MODULES = ("tinyinit.core.arguments", "tinyinit.core.libm", "tinyinit.core.parallel")
# The spellings of the card's examples, from before the package had layers (`from
# tinyinit.pcg32 import PCG32`): a student's file may still use them, for the same modules.
FORMER_MODULES = {
    "tinyinit.pcg32": "tinyinit.core.pcg32",
    "tinyinit.distributions": "tinyinit.core.distributions",
}

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
    tinyinit.course.student_process.WireError: not a float in hex
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


# --- values on the wire ----------------------------------------------------------------------


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
    tinyinit.course.student_process.WireError: not an integer: '1e3'
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
    tinyinit.course.student_process.WireError: no value is of kind 'pickle'
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
    tinyinit.course.student_process.WireError: a generator's state is not 64 bits
    """

    def __new__(cls, state: int, inc: int):
        if not (0 <= state < 2**64 and 0 <= inc < 2**64):
            raise WireError("a generator's state is not 64 bits")
        return super().__new__(cls, (state, inc))


# --- the student's process -----------------------------------------------------------------


class StandIn:
    """Stands in for a name of tinyinit other than the generator's: calling it is refused.

    In the student's process, `from tinyinit.core.init import kaiming_normal` gives one of these:

    >>> stand_in = StandIn("tinyinit.core.init", "kaiming_normal")
    >>> stand_in
    <tinyinit's kaiming_normal>
    >>> stand_in((4, 3), "fan_in", "relu", None)
    Traceback (most recent call last):
    ...
    tinyinit.course.student_process.BorrowedCall: tinyinit.core.init.kaiming_normal
    """

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        raise BorrowedCall(f"{self.module}.{self.name}")

    def __repr__(self) -> str:
        return f"<tinyinit's {self.name}>"


class BorrowedCall(Exception):
    """A call of one of tinyinit's own functions, which a student's file may not hand in.

    Its message is the function's full name, which the answer carries back as "refused":

    >>> try:
    ...     StandIn("tinyinit", "fans")((4, 3))
    ... except BorrowedCall as call:
    ...     print(f"refused: {call}")
    refused: tinyinit.fans
    """


def _borrowed_module(name: str, names: list[str]) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__all__ = list(names)

    def attribute(attr: str):  # PEP 562
        if f"{name}.{attr}" in OWN_MODULES + NEEDED_MODULES:  # `from . import libm` in core
            return importlib.import_module(f"{name}.{attr}")
        return StandIn(name, attr)

    module.__getattr__ = attribute
    return module


class _Tinyinit(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `tinyinit.*` in the student's process: the generator's modules from their files
    in the package's folders (`tinyinit.core.pcg32` from core/pcg32.py), a module of stand-ins
    for any other name. A stand-in is a package (its `__path__` empty), so that a name under
    it is served too: `tinyinit.core` holds the generator's modules."""

    def __init__(self, package_dir: str, public: dict[str, list[str]]):
        self.package_dir, self.public = package_dir, public

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("tinyinit."):
            return None
        if fullname in OWN_MODULES + NEEDED_MODULES:
            file = os.path.join(self.package_dir, *fullname.split(".")[1:]) + ".py"
            return importlib.util.spec_from_file_location(fullname, file)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        return _borrowed_module(spec.name, self.public.get(spec.name, []))

    def exec_module(self, module):
        pass


def _install_tinyinit(package_dir: str, public: dict[str, list[str]]) -> None:
    finder = _Tinyinit(package_dir, public)
    sys.meta_path.insert(0, finder)
    package = types.ModuleType("tinyinit")
    package.__path__ = []  # a package whose submodules only the finder above provides
    package.__all__ = list(public.get("tinyinit", OWN_NAMES))
    sys.modules["tinyinit"] = package
    from tinyinit.core.distributions import normal, uniforms
    from tinyinit.core.pcg32 import PCG32

    own = {"PCG32": PCG32, "normal": normal, "uniforms": uniforms}
    for former, current in FORMER_MODULES.items():
        sys.modules[former] = sys.modules[current]
        setattr(package, former.rpartition(".")[2], sys.modules[current])

    def attribute(name: str):
        if name in own:
            return own[name]
        if name.startswith("__"):
            raise AttributeError(name)
        return StandIn("tinyinit", name)

    package.__getattr__ = attribute
    package.__dict__.update(own)


def _set_limits(limits: dict[str, int]) -> None:
    """The limits the checker asks for (`tinyinit.course.sandbox.LIMITS`, inside the sandbox), each
    hard as well as soft; without a sandbox, only this: no file can be written from here on
    (the size limit of a written file is 0 bytes)."""
    try:
        import resource
        import signal
    except ImportError:  # Windows has neither
        return
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write fails (EFBIG), the process lives
    for name, value in (limits or {"RLIMIT_FSIZE": 0}).items():
        with contextlib.suppress(ValueError, OSError, AttributeError):
            resource.setrlimit(getattr(resource, name), (value, value))


def _where(error: BaseException, path: str) -> tuple[str, str]:
    """file:line in function, and the line, of the last frame of the student's file."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if _same_file(f.filename, path)]
    if not frames:
        return "", ""
    f = frames[-1]
    return f"{os.path.basename(path)}:{f.lineno} in {f.name}", (f.line or "").strip()


def _same_file(filename: str, path: str) -> bool:
    try:
        return os.path.samefile(filename, path)
    except OSError:
        return False


def _raised(error: BaseException, path: str) -> dict:
    where, code = _where(error, path)
    try:
        message = str(error)
    except Exception:  # noqa: BLE001
        message = ""
    return {
        "type": shorten(type(error).__qualname__, 80),
        "message": shorten(message),
        "where": shorten(where, 200),
        "code": shorten(code, 200),
        "not_implemented": isinstance(error, NotImplementedError),
        "value_error": isinstance(error, ValueError),
        "refused": str(error) if isinstance(error, BorrowedCall) else None,
    }


def _status(module, name: str) -> str:
    fn = getattr(module, name, None)
    if isinstance(fn, StandIn):
        return "tinyinit's"
    return "yours" if callable(fn) else "missing"


class _Printed(io.StringIO):
    """What the student's code prints, kept up to a limit (a print of megabytes is cut)."""

    def write(self, text) -> int:
        if self.tell() < 4 * MAX_PRINTED:
            super().write(str(text)[: 4 * MAX_PRINTED])
        return len(text)


def serve(argv: list[str]) -> None:
    """Import the student's file, then answer the checker's calls until its input ends.

    argv: the package's folder, the student's file, tinyinit's public names by module (JSON)
    and the seconds its import may take. It reads the calls on standard input, answers on
    standard output, and forbids file writes for the rest of its process: it runs in a
    Python of its own (`tinyinit.course.checker` starts one), never in the process that judges.

    >>> import json, os, pathlib, subprocess, sys, tempfile
    >>> from tinyinit.course import student_process
    >>> folder = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(folder.name) / "my_init.py"
    >>> _ = path.write_text(
    ...     "def fans(shape):\\n"
    ...     "    print('fans of', shape)\\n"
    ...     "    return shape[1], shape[0]\\n"
    ... )
    >>> calls = [{"id": 1, "hello": True}, {"id": 2, "call": "fans", "args": [encode((4, 3))]}]
    >>> run = subprocess.run(
    ...     [sys.executable, "-I", student_process.__file__,
    ...      os.path.dirname(os.path.dirname(student_process.__file__)),
    ...      str(path), "{}", "30"],
    ...     input="".join(json.dumps(c) + "\\n" for c in calls),
    ...     capture_output=True, text=True, timeout=60,
    ... )
    >>> started, ready, answer = (json.loads(line) for line in run.stdout.splitlines())
    >>> started, ready["functions"]["fans"], ready["functions"]["kaiming_normal"]
    ({'started': True}, 'yours', 'missing')
    >>> decode(answer["value"]), answer["printed"]
    ((3, 4), 'fans of (4, 3)\\n')
    >>> folder.cleanup()
    """
    package_dir, path, public, startup = argv[0], argv[1], json.loads(argv[2]), float(argv[3])
    limits = json.loads(argv[4]) if len(argv) > 4 else {}
    # The answers go on a copy of standard output; what the student's code writes to file
    # descriptor 1 goes to standard error, with faulthandler's word on where it was stuck.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    trace = sys.__stderr__

    def send(message: dict) -> None:
        answers.write(json.dumps(message) + "\n")
        answers.flush()

    sys.dont_write_bytecode = True
    _install_tinyinit(package_dir, public)
    _set_limits(limits)
    send({"started": True})
    sys.path.insert(0, os.path.dirname(path))  # so that the file can import its neighbours
    printed = _Printed()
    faulthandler.dump_traceback_later(startup, file=trace)
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            spec = importlib.util.spec_from_file_location("my_init", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules["my_init"] = module
            spec.loader.exec_module(module)
    except BaseException as error:  # noqa: BLE001 - SyntaxError, SystemExit, anything
        send({"problem": _raised(error, path), "printed": shorten(printed.getvalue(), MAX_PRINTED)})
        return
    finally:
        faulthandler.cancel_dump_traceback_later()
    functions = {name: _status(module, name) for name in FUNCTIONS}
    hello = json.loads(sys.stdin.readline())  # its id, new, shows that this "ready" is ours
    printed = shorten(printed.getvalue(), MAX_PRINTED)
    send({"id": hello["id"], "ready": True, "functions": functions, "printed": printed})
    from tinyinit.core.pcg32 import PCG32

    for line in sys.stdin:
        request = json.loads(line)
        name = request.get("call") or request.get("probe")
        args = [decode(a) for a in request["args"]]
        kwargs = {k: decode(v) for k, v in request.get("kwargs", {}).items()}
        args = [_generator(PCG32, a) for a in args]
        kwargs = {k: _generator(PCG32, v) for k, v in kwargs.items()}
        rngs = [a for a in [*args, *kwargs.values()] if isinstance(a, PCG32)]
        printed = _Printed()
        answer: dict = {"id": request["id"]}
        faulthandler.dump_traceback_later(float(request.get("timeout", startup)), file=trace)
        try:
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
                value = getattr(module, name)(*args, **kwargs)
            answer["value"] = encode(value)
        except BaseException as error:  # noqa: BLE001 - every exception is the student's answer
            answer["raised"] = _raised(error, path)
        finally:
            faulthandler.cancel_dump_traceback_later()
        answer["rngs"] = [[str(r.state), str(r.inc)] for r in rngs]
        answer["printed"] = shorten(printed.getvalue(), MAX_PRINTED)
        send(answer)


def _generator(PCG32, value):
    if isinstance(value, PCG32State):
        rng = PCG32(0)
        rng.state, rng.inc = value
        return rng
    return value


if __name__ == "__main__":
    serve(sys.argv[1:])

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

The messages both sides read and write, and the limits on what they hold, are
`tinyinit.course.wire_format`'s. Here, where tinyinit is not on the path, that module is loaded
from its file beside this one; in the checker's process it is imported as any other.
"""

from __future__ import annotations

import contextlib
import faulthandler
import importlib.abc
import importlib.machinery
import importlib.util
import io
import json
import os
import sys
import traceback
import types

if __package__:  # imported as tinyinit.course.student_process, in the checker's process
    from . import wire_format as wire
else:  # loaded by its path in the student's Python, which has no tinyinit on its path
    _spec = importlib.util.spec_from_file_location(
        "tinyinit_wire_format", os.path.join(os.path.dirname(__file__), "wire_format.py")
    )
    wire = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(wire)

__all__ = [
    "StandIn",
    "BorrowedCall",
    "FORMER_MODULES",
    "FUNCTIONS",
    "NEEDED_MODULES",
    "OWN_MODULES",
    "OWN_NAMES",
    "serve",
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
        "type": wire.shorten(type(error).__qualname__, 80),
        "message": wire.shorten(message),
        "where": wire.shorten(where, 200),
        "code": wire.shorten(code, 200),
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
        if self.tell() < 4 * wire.MAX_PRINTED:
            super().write(str(text)[: 4 * wire.MAX_PRINTED])
        return len(text)


def serve(argv: list[str]) -> None:
    """Import the student's file, then answer the checker's calls until its input ends.

    argv: the package's folder, the student's file, tinyinit's public names by module (JSON)
    and the seconds its import may take. It reads the calls on standard input, answers on
    standard output, and forbids file writes for the rest of its process: it runs in a
    Python of its own (`tinyinit.course.checker` starts one), never in the process that judges.

    >>> import json, os, pathlib, subprocess, sys, tempfile
    >>> from tinyinit.course import student_process
    >>> from tinyinit.course.wire_format import decode, encode
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
        send(
            {
                "problem": _raised(error, path),
                "printed": wire.shorten(printed.getvalue(), wire.MAX_PRINTED),
            }
        )
        return
    finally:
        faulthandler.cancel_dump_traceback_later()
    functions = {name: _status(module, name) for name in FUNCTIONS}
    hello = json.loads(sys.stdin.readline())  # its id, new, shows that this "ready" is ours
    printed = wire.shorten(printed.getvalue(), wire.MAX_PRINTED)
    send({"id": hello["id"], "ready": True, "functions": functions, "printed": printed})
    from tinyinit.core.pcg32 import PCG32

    for line in sys.stdin:
        request = json.loads(line)
        name = request.get("call") or request.get("probe")
        args = [wire.decode(a) for a in request["args"]]
        kwargs = {k: wire.decode(v) for k, v in request.get("kwargs", {}).items()}
        args = [_generator(PCG32, a) for a in args]
        kwargs = {k: _generator(PCG32, v) for k, v in kwargs.items()}
        rngs = [a for a in [*args, *kwargs.values()] if isinstance(a, PCG32)]
        printed = _Printed()
        answer: dict = {"id": request["id"]}
        faulthandler.dump_traceback_later(float(request.get("timeout", startup)), file=trace)
        try:
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
                value = getattr(module, name)(*args, **kwargs)
            answer["value"] = wire.encode(value)
        except BaseException as error:  # noqa: BLE001 - every exception is the student's answer
            answer["raised"] = _raised(error, path)
        finally:
            faulthandler.cancel_dump_traceback_later()
        answer["rngs"] = [[str(r.state), str(r.inc)] for r in rngs]
        answer["printed"] = wire.shorten(printed.getvalue(), wire.MAX_PRINTED)
        send(answer)


def _generator(PCG32, value):
    if isinstance(value, wire.PCG32State):
        rng = PCG32(0)
        rng.state, rng.inc = value
        return rng
    return value


if __name__ == "__main__":
    serve(sys.argv[1:])

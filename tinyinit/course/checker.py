"""`check_init`: the card's eleven tests on a student's file, judged where the file cannot reach.

    python -m tinyinit check my_init.py          # exit status 0 only when all eleven pass

The module card's "exit code is the verdict" holds only if nothing in the student's file can
write that verdict. So the file never runs here. A process of its own
(`tinyinit/course/student_process.py`) imports it and answers calls, one at a time: a function's
name and
plain arguments in, an array, a number or an exception's text out, as plain data (the messages
of `tinyinit/course/wire_format.py`, which both sides read). The tests
of `tinyinit.course.catalog`, their expected values, the pitfall diagnosis of
`tinyinit.course.pitfalls`
and the verdict all run in this process, on `StudentModule`, a stand-in whose seven functions
are calls to that process. Whatever the file does there (patch any module, write to any file
descriptor, exit, print megabytes, raise an exception of any size, return an object of any
kind) reaches this side as one of those answers, or as no answer: each is reported as the
student's, and the next test runs in a new process.

Before any of it, the file is read here, not run (`screen`): a syntax error is shown with
its caret; a file that reaches for the system or the interpreter (os, sys, subprocess,
exec, `__globals__`, ...) is not run at all; and each of the seven functions bound to
tinyinit's own (`from tinyinit.core.init import *`, `from tinyinit import fans`) is refused by
name. In the student's process tinyinit offers only the generator and its draws; every other
name of it is a stand-in that refuses to be called, so an initializer of the package handed
in by any other route (an alias, a wrapper) is refused too: "this is tinyinit's
kaiming_normal, not yours".

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "my_init.py"
>>> _ = path.write_text(
...     "import math\\n"
...     "import numpy as np\\n"
...     "from tinyinit import normal\\n"
...     "def normal_init(shape, std, rng):\\n"
...     "    if std < 0:\\n"
...     "        raise ValueError(f'std {std}')\\n"
...     "    return (std * normal(rng, math.prod(shape))).astype(np.float32).reshape(shape)\\n"
...     "def scaled_residual_std(base_std, n_layers):\\n"
...     "    if base_std < 0 or n_layers < 1:\\n"
...     "        raise ValueError(f'base_std {base_std}, n_layers {n_layers}')\\n"
...     "    return base_std / math.sqrt(2 * n_layers)\\n"
... )
>>> print(check_init(path, tests=["test_scaled_residual_keeps_the_stream_bounded"]))
my_init.py: 1 of 1 test passed
  ✓ passed           test_scaled_residual_keeps_the_stream_bounded
"""

from __future__ import annotations

import ast
import collections
import contextlib
import html
import importlib.util
import io
import json
import os
import queue
import re
import secrets
import signal
import stat
import subprocess
import sys
import threading
import time
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from numbers import Real
from pathlib import Path

import numpy as np

from ..core.arguments import KindError, instance, number, shown
from ..core.pcg32 import PCG32
from . import student_process, wire_format
from .catalog import ADVICE, NAMES, TESTS, CatalogTest, WrongReturn, call_text, torch_golden
from .pitfalls import ARRAY_FUNCTIONS, CARD_PITFALLS, PITFALLS, check_initializer
from .sandbox import (
    LIMITS,
    Sandbox,
    SandboxUnavailable,
    Unavailable,
    find_sandbox,
    python_command,
)
from .student_process import FORMER_MODULES, FUNCTIONS, OWN_MODULES, OWN_NAMES
from .wire_format import Foreign, WireError, decode, encode, shorten

__all__ = ["NotPassed", "NotWrittenYet", "Report", "Result", "check_init", "screen"]

# Each test takes a fraction of a second with numpy; a student's loop of one rng.uniform()
# per weight takes a few seconds on the largest one (20 layers of 256 x 256).
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 600.0  # seconds: --timeout is bounded, so a typo cannot hold a grader for hours
# Python, numpy and the student's process start within this (the student's time starts after).
STARTUP = 120.0
# Once a call's time is up, the process writes where it was stuck: how long to wait for it.
DUMP_WAIT = 2.0
ENDLESS = (
    "a loop that never ends? If your code is only slow, draw all n values in one call "
    "(normal(rng, n)), or allow more time (check_init's timeout, or --timeout)"
)

PASSED, FAILED, NOT_WRITTEN, ERROR, TIMED_OUT = (
    "passed",
    "failed",
    "not written yet",
    "error",
    "timed out",
)
TEST_STATUSES = (PASSED, FAILED, NOT_WRITTEN, ERROR, TIMED_OUT)
# A symbol beside each word, never instead of it.
MARKS = {PASSED: "✓", FAILED: "✗", NOT_WRITTEN: "○", ERROR: "✗", TIMED_OUT: "✗"}
CARD_IDS = {key: card_id for card_id, key in CARD_PITFALLS.items()}

# What each of the seven functions is, in a report: the student's, still a stub, ...
YOURS, STUB, MISSING, BORROWED, UNFINISHED = (
    "yours",
    "not written yet",
    "missing",
    "tinyinit's",
    "did not finish",
)
# One valid call of each function, to see whether it is written (no NotImplementedError).
FIRST_CALLS = {
    "fans": ((4, 3),),
    "calculate_gain": ("relu",),
    "xavier_uniform": ((4, 3), 1.0, "rng"),
    "xavier_normal": ((4, 3), 1.0, "rng"),
    "kaiming_normal": ((4, 3), "fan_in", "relu", "rng"),
    "normal_init": ((4, 3), 0.02, "rng"),
    "scaled_residual_std": (0.02, 12),
}


# --- reading the file before it runs ---------------------------------------------------------

# What the card's seven functions never need: a way into the system, the interpreter or the
# checker. A file that uses one is not run (nothing it could do there would be a test's answer).
SYSTEM_MODULES = frozenset(
    """os sys subprocess signal ctypes importlib builtins gc inspect threading _thread
    multiprocessing concurrent asyncio socket select selectors runpy marshal pickle shelve
    shutil pathlib io tempfile mmap fcntl resource atexit faulthandler site types code codeop
    pty posix nt sysconfig zipimport pkgutil webbrowser urllib http ftplib smtplib ctypeslib
    """.split()
)
SYSTEM_NAMES = frozenset(
    "__import__ exec eval compile open breakpoint globals vars locals input __builtins__".split()
)
SYSTEM_ATTRIBUTES = (
    frozenset(
        """__code__ __globals__ __builtins__ __subclasses__ __class__ __bases__ __mro__ __dict__
    __loader__ __spec__ __import__ __getattribute__ __closure__ __func__ __self__ __module__
    __defaults__ __kwdefaults__ __wrapped__ __reduce__ __reduce_ex__ __setattr__ __delattr__
    __traceback__ __qualname__ f_globals f_locals f_builtins f_back tb_frame gi_frame cr_frame
    ag_frame tofile save savez savez_compressed savetxt memmap open_memmap DataSource""".split()
    )
    | SYSTEM_MODULES
)


@dataclass(frozen=True)
class Screening:
    """What reading the file found: a problem that stops it from running (with its line), and
    which of the seven functions it binds to tinyinit's own (name -> how, for the report)."""

    problem: str | None = None
    borrowed: dict = field(default_factory=dict)


def screen(source: str, file: Path) -> Screening:
    """Read a student's file without running it.

    >>> s = screen("from tinyinit.core.init import kaiming_normal\\ndef fans(shape):\\n  pass\\n",
    ...            Path("my_init.py"))
    >>> s.problem, s.borrowed
    (None, {'kaiming_normal': 'my_init.py:1 imports it from tinyinit.core.init'})
    >>> print(screen("import os\\n", Path("my_init.py")).problem.splitlines()[0])
    my_init.py:1 uses os
    """
    try:
        instance("source", source, str, "the file's text")
        file = Path(instance("file", file, (str, os.PathLike), "the file's path"))
        tree = ast.parse(source, filename=str(file))
    except SyntaxError as error:
        return Screening(problem=_syntax_problem(error, file))
    for node in ast.walk(tree):
        used = _system_use(node)
        if used:
            return Screening(
                problem=f"{file.name}:{node.lineno} uses {used}\n"
                "The card's seven functions need numbers (math, numpy) and tinyinit's generator "
                f"({', '.join(OWN_NAMES)}), nothing of the system, the interpreter or the "
                "checker: a file that reaches there is not run. Take that line out."
            )
    return Screening(borrowed=_borrowed_bindings(tree, file))


def _system_use(node: ast.AST) -> str | None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] in SYSTEM_MODULES:
                return alias.name
    if isinstance(node, ast.ImportFrom) and node.module:
        if node.module.split(".")[0] in SYSTEM_MODULES:
            return node.module
        for alias in node.names:
            if alias.name in SYSTEM_MODULES:
                return f"{node.module}.{alias.name}"
    if isinstance(node, ast.Name) and node.id in SYSTEM_NAMES:
        return node.id
    if isinstance(node, ast.Attribute) and node.attr in SYSTEM_ATTRIBUTES:
        return f".{node.attr}"
    return None


def _tinyinit_module(module: str | None) -> bool:
    return module is not None and (module == "tinyinit" or module.startswith("tinyinit."))


def _borrowed_bindings(tree: ast.Module, file: Path) -> dict[str, str]:
    """The seven functions whose last top-level binding is an import of tinyinit's own."""
    last: dict[str, str | None] = {}

    def visit(statements) -> None:
        for node in statements:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                last[node.name] = None
            elif isinstance(node, ast.ImportFrom) and _tinyinit_module(node.module):
                for alias in node.names:
                    names = FUNCTIONS if alias.name == "*" else (alias.asname or alias.name,)
                    if alias.name in OWN_NAMES or node.module in (*OWN_MODULES, *FORMER_MODULES):
                        continue
                    for name in names:
                        last[name] = f"{file.name}:{node.lineno} imports it from {node.module}"
            elif isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    last[alias.asname or alias.name.split(".")[0]] = None
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            last[name.id] = None  # whatever it is, the process says
            elif isinstance(node, ast.If | ast.Try | ast.With):
                for part in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(node, part, [])
                    visit([s for h in inner for s in h.body] if part == "handlers" else inner)

    visit(tree.body)
    return {name: how for name, how in last.items() if name in FUNCTIONS and how}


def _syntax_problem(error: SyntaxError, file: Path) -> str:
    text = (error.text or "").rstrip("\n")
    caret = ""
    if text and error.offset:
        stripped = text.lstrip()
        caret = "\n    " + " " * max(error.offset - 1 - (len(text) - len(stripped)), 0) + "^"
        text = stripped
    return f"{type(error).__name__} at {file.name}:{error.lineno}: {error.msg}" + (
        f"\n    {text}{caret}" if text else ""
    )


# --- the student's process, and the calls it answers ------------------------------------------


class Fault(BaseException):
    """A call of the student's that did not give an answer: not an exception of the student's
    code but the end of the test, so no `except Exception` in a check can take it for one."""


class NotWritten(Fault):
    """The student's file lacks a function a test needs."""

    def __init__(self, function: str, message: str):
        super().__init__(message)
        self.function = function


class Stuck(Fault):
    """A function that did not finish in an earlier test, and is not called again."""

    def __init__(self, function: str, earlier: dict):
        super().__init__(function)
        self.function, self.earlier = function, earlier


class Borrowed(Fault):
    """A call that reached one of tinyinit's own functions: not the student's work.

    function is the student's function the test called, borrowed the name of tinyinit's
    that answered it (the same name when the file hands in tinyinit's own), how where.
    """

    def __init__(self, function: str, borrowed: str, how: str = "", called: bool = False):
        self.function, self.borrowed, self.how, self.called = function, borrowed, how, called
        super().__init__(self.text())

    def text(self) -> str:
        how = f" ({self.how})" if self.how else ""
        if self.borrowed == self.function and not self.called:
            return f"this is tinyinit's {self.function}, not yours{how}"
        return f"your {self.function} calls tinyinit's {self.borrowed}{how}: that part is not yours"


class StudentRaised(Exception):
    """The student's function raised: its type's name, message, and where in their file."""

    def __init__(self, call: str, raised: dict):
        self.call = call
        self.type_name = raised["type"]
        self.message = raised["message"]
        self.where, self.code = raised["where"], raised["code"]
        super().__init__(f"{self.type_name}: {self.message}".rstrip(": "))


class StudentValueError(StudentRaised, ValueError):
    """A ValueError the student's function raised: what the card asks for a bad argument."""


class StudentNotImplemented(StudentRaised, NotImplementedError):
    """A stub's NotImplementedError: the function is not written yet."""


class ProcessFault(Fault):
    """The student's process did not answer a call: it timed out, ended, or wrote garbage."""

    def __init__(self, function: str, message: str, where: str = "", code: str = "", printed=""):
        super().__init__(message)
        self.function, self.where, self.code, self.printed = function, where, code, printed


class TimedOut(ProcessFault):
    """A call that did not finish in the time left to its test."""


_EOF = object()


class _Process:
    """One run of tinyinit/course/student_process.py: it imports the student's file and answers
    calls.

    Its answers come on its standard output, one JSON line each, read by a thread that keeps
    no more than a line's limit; what the student's code writes to a file descriptor (its
    standard output is sent to its standard error) and faulthandler's dumps are drained by
    another thread into a bounded buffer (a print of megabytes costs nothing here). `request`
    waits for one answer at most the time given, then stops the process.
    """

    LINE_LIMIT = 2 * wire_format.MAX_ARRAY_BYTES  # base64 of the largest array, and some

    def __init__(self, file: Path, timeout: float, sandbox: Sandbox | None):
        self.file = file
        package_dir = Path(student_process.__file__).resolve().parent.parent  # tinyinit's folder
        limits = LIMITS.for_process(timeout) if sandbox else {}
        argv = [str(package_dir), str(file.resolve()), json.dumps(_public_names()),
                repr(timeout), json.dumps(limits)]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k.startswith(_KEPT_ENVIRONMENT)}
        env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        python = python_command() if sandbox else sys.executable
        command = [python, "-I", "-S", "-c", _BOOTSTRAP, _numpy_folder(), *argv]
        if sandbox:
            command = sandbox.command(
                command, student_file=file, package_dir=package_dir, environment=env
            )
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=str(file.parent),
            env=env,
            start_new_session=True,  # its own process group: stopped whole, spared a Ctrl-C
        )
        self.answers: queue.Queue = queue.Queue()
        self.trace = _Bounded(64_000, keep="last")  # what the student's code writes, and dumps
        self.ended = False
        self.readers = [
            threading.Thread(target=self._read_answers, args=(self.process.stdout,), daemon=True),
            threading.Thread(target=self._drain, args=(self.process.stderr,), daemon=True),
        ]
        for reader in self.readers:
            reader.start()

    def _read_answers(self, pipe) -> None:
        line = bytearray()
        too_long = False
        while chunk := _read_or_end(pipe):
            while chunk:
                end = chunk.find(b"\n")
                part, chunk = (chunk, b"") if end < 0 else (chunk[:end], chunk[end + 1 :])
                if not too_long:
                    line += part
                    too_long = len(line) > self.LINE_LIMIT
                    if too_long:
                        line.clear()
                if end >= 0:
                    self.answers.put(None if too_long else bytes(line))
                    line.clear()
                    too_long = False
        self.answers.put(_EOF)

    def _drain(self, stream) -> None:
        while chunk := _read_or_end(stream):
            self.trace.add(chunk.decode("utf-8", "replace"))

    def receive(self, seconds: float, function: str):
        """The next message (a dict); ProcessFault when none comes in time or it is garbled."""
        try:
            raw = self.answers.get(timeout=max(seconds, 0.0) + 0.05)
        except queue.Empty:
            self._wait_for_dump()
            self.stop()
            where, code = self.stuck_at()
            raise TimedOut(function, f"stopped after {seconds:g} s", where, code) from None
        if raw is _EOF:
            self.process.wait()
            self.ended = True
            raise ProcessFault(
                function,
                f"the process running your code ended (exit status {self.process.returncode})",
                printed=self.trace.text(),
            )
        try:
            if raw is None:
                raise WireError("a line longer than any answer")
            message = json.loads(raw)
            if not isinstance(message, dict):
                raise WireError("not a JSON object")
            return message
        except (ValueError, WireError, RecursionError) as error:
            self.stop()
            raise ProcessFault(
                function,
                "the answer that came back was not one the checker sent for "
                f"({shorten(str(error), 80)}): does your code write to a file descriptor it "
                "does not own, or print from a thread?",
            ) from None

    def request(
        self, message: dict, seconds: float, function: str, problem_ok: bool = False
    ) -> dict:
        # A new random id each call: an answer written before the call cannot carry it.
        message = {"id": secrets.token_hex(8), **message}
        try:
            self.process.stdin.write((json.dumps(message) + "\n").encode())
            self.process.stdin.flush()
        except OSError:
            pass  # the process is gone: receive() says how it ended
        answer = self.receive(seconds, function)
        if answer.get("id") != message["id"] and not (problem_ok and "problem" in answer):
            self.stop()
            raise ProcessFault(
                function,
                "the answer that came back was not the one to this call: does your code write "
                "to a file descriptor it does not own?",
            )
        return answer

    def _wait_for_dump(self) -> None:
        deadline = time.perf_counter() + DUMP_WAIT
        while time.perf_counter() < deadline and self.process.poll() is None:
            if "most recent call first" in self.trace.text():
                time.sleep(0.05)  # the rest of the dump
                return
            time.sleep(0.02)

    def stuck_at(self) -> tuple[str, str]:
        """Where in the student's file the process was when its time ran out: file:line in
        function, and that line (faulthandler's dump, on its standard error)."""
        frames = []  # (line, function), most recent call first
        for line in self.trace.text().splitlines():
            m = re.match(r'\s*File "(.*)", line (\d+) in (\S+)', line)
            if m and _same_file(m.group(1), self.file):
                frames.append((int(m.group(2)), m.group(3)))
            elif frames and not line.startswith(" "):
                break  # the next thread's stack
        if not frames:
            return "", ""
        lineno, function = frames[0]
        return f"{self.file.name}:{lineno} in {function}", _source_line(self.file, lineno)

    def stop(self) -> None:
        """Kill the process and its group (in the sandbox: all it started, with its
        namespace). A process that left the group outside a sandbox may live on: `close`
        does not wait for it."""
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.ended = True

    def close(self) -> None:
        self.stop()
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        # A pipe is closed only once its reader has seen its end: closing it under a reader
        # waits for that read, which a process the student's code left running (outside a
        # sandbox) can hold open for ever. The reader is a daemon; it ends with that process.
        for reader, stream in zip(self.readers, (self.process.stdout, self.process.stderr)):
            reader.join(timeout=0.5)
            if not reader.is_alive():
                with contextlib.suppress(OSError):
                    stream.close()


def _read_or_end(pipe) -> bytes:
    """What the pipe has, up to 64 KiB; b"" at its end, or once `close` has closed it under a
    reader (a process the student's code started may hold the pipe open after it)."""
    try:
        return pipe.read1(1 << 16)
    except (OSError, ValueError):
        return b""


# Passed to the student's process: how numpy finds its threads' limits and the locale.
_KEPT_ENVIRONMENT = ("OPENBLAS", "OMP_", "MKL_", "LANG", "LC_", "PATH", "SYSTEMROOT", "TMP", "TEMP")


# The student's Python: isolated (-I: no environment variables, no user site, not even the
# current folder on its path) and without site-packages (-S), it is given numpy's folder and
# runs tinyinit/course/student_process.py, loaded from its file so that no other module of tinyinit
# is on its path (it loads its one neighbour, wire_format.py, from its file too).
_BOOTSTRAP = (
    "import sys, importlib.util as u; sys.path.append(sys.argv.pop(1)); "
    "s = u.spec_from_file_location('tinyinit_student_process', "
    "sys.argv[1] + '/course/student_process.py'); "
    "m = u.module_from_spec(s); s.loader.exec_module(m); m.serve(sys.argv[1:])"
)


def _numpy_folder() -> str:
    """The folder numpy is installed in (with -S the student's Python has no site-packages)."""
    return str(Path(np.__file__).resolve().parent.parent)


def _public_names() -> dict[str, list[str]]:
    """tinyinit's public names by module, for the stand-ins of `from tinyinit... import *`."""
    import tinyinit
    import tinyinit.core.init

    return {
        "tinyinit": list(tinyinit.__all__),
        "tinyinit.core.init": [n for n in dir(tinyinit.core.init) if not n.startswith("_")],
    }


class _Bounded:
    """Text kept up to a limit: the first characters, or the last ones."""

    def __init__(self, limit: int, keep: str = "first"):
        self.limit, self.keep = limit, keep
        self.parts: collections.deque = collections.deque()
        self.size = 0
        self.dropped = 0
        self.lock = threading.Lock()

    def add(self, text: str) -> None:
        with self.lock:
            if self.keep == "first":
                room = self.limit - self.size
                self.parts.append(text[:room])
                self.size += min(len(text), room)
                self.dropped += max(len(text) - room, 0)
                return
            self.parts.append(text)
            self.size += len(text)
            while self.size > self.limit and self.parts:
                self.size -= len(self.parts.popleft())

    def text(self) -> str:
        with self.lock:
            text = "".join(self.parts)
        return text + (f"… ({self.dropped} more characters)" if self.dropped else "")


class StudentModule:
    """The student's file as the tests see it: the card's seven functions, each a call to the
    student's process, which is started on the first call and again after it ended.

    A function the file does not define raises NotWritten; one it binds to tinyinit's own
    raises Borrowed; one that did not finish in an earlier test raises Stuck (it is not
    called again). Each call has the time left to the current test (`begin`).
    """

    def __init__(
        self, file: Path, timeout: float, screening: Screening, sandbox: Sandbox | None = None
    ):
        self.file, self.timeout, self.screening = file.resolve(), timeout, screening
        self.sandbox = sandbox
        self.process: _Process | None = None
        self.functions: dict[str, str] = {}  # name -> YOURS, MISSING, BORROWED (the process's)
        self.problem: str | None = None  # the file could not be imported
        self.stuck: dict[str, dict] = {}
        self.left, self.test = timeout, ""
        self.printed: list[str] = []

    # -- the process --

    def _start(self) -> _Process:
        if self.process is not None and not self.process.ended:
            return self.process
        if self.process is not None:
            self.process.close()
        self.process = process = _Process(self.file, self.timeout, self.sandbox)
        try:
            started = process.receive(STARTUP, "import")
            if started.get("started") is not True:
                raise ProcessFault("import", "the student's process did not start as it should")
            ready = process.request({"hello": True}, self.timeout, "import", problem_ok=True)
        except TimedOut as fault:
            at = f"\nstopped at {fault.where}: {fault.code}" if fault.where else ""
            self.problem = (
                f"importing it did not finish within {self.timeout:g} s{at}\nhint: {ENDLESS}"
            )
            raise
        except ProcessFault as fault:
            self.problem = f"importing it: {fault}" + _printed_line(fault.printed)
            raise
        if "problem" in ready:
            try:
                raised = _checked_raised(ready.get("problem"))
            except WireError as error:  # a forged line, not the process's own report
                process.stop()
                self.problem = f"your code sent an answer the checker did not ask for ({error})"
                raise ProcessFault("import", self.problem) from None
            self.problem = _import_problem(raised, self.file)
            raise ProcessFault("import", self.problem)
        statuses = ready.get("functions")
        if not ready.get("ready") or not isinstance(statuses, dict):
            process.stop()
            self.problem = "the process importing it did not say it was ready"
            raise ProcessFault("import", self.problem)
        self.functions = {
            name: statuses.get(name)
            if statuses.get(name) in (YOURS, MISSING, BORROWED)
            else MISSING
            for name in FUNCTIONS
        }
        return process

    def close(self) -> None:
        if self.process is not None:
            self.process.close()

    def begin(self, seconds: float, test: str) -> None:
        """The time the next test's calls may take together, and the test's name."""
        self.left, self.test = seconds, test

    # -- the functions --

    def __getattr__(self, name: str):
        if name not in FUNCTIONS:
            raise AttributeError(name)
        return _Function(self, name)

    def call(self, name: str, args: tuple, kwargs: dict, *, probe: bool = False):
        if name in self.stuck:
            raise Stuck(name, self.stuck[name])
        if self.problem is not None:
            raise ProcessFault("import", self.problem)
        if name in self.screening.borrowed:
            raise Borrowed(name, name, self.screening.borrowed[name])
        process = self._start()
        status = self.functions[name]
        if status == MISSING:
            raise NotWritten(name, f"{self.file.name} has no function {name}")
        if status == BORROWED:
            raise Borrowed(name, name, f"{self.file.name} binds {name} to tinyinit's")
        if self.left <= 0:  # the test's earlier calls, each answered in time, used it all
            raise TimedOut(name, f"stopped after {self.timeout:g} s", "", "")
        rngs = [a for a in (*args, *kwargs.values()) if isinstance(a, PCG32)]
        message = {
            "probe" if probe else "call": name,
            "args": [encode(a) for a in args],
            "kwargs": {k: encode(v) for k, v in kwargs.items()},
            "timeout": self.left,
        }
        shown = call_text(name, args, kwargs)
        start = time.perf_counter()
        try:
            answer = process.request(message, self.left, name)
        except TimedOut as fault:
            self.stuck[name] = dict(
                test=self.test, seconds=self.timeout, where=fault.where, code=fault.code
            )
            raise
        finally:
            self.left -= time.perf_counter() - start
        return self._answer(answer, name, shown, rngs)

    def _answer(self, answer: dict, name: str, shown: str, rngs: list[PCG32]):
        try:
            states = answer.get("rngs", [])
            if not isinstance(states, list) or len(states) != len(rngs):
                raise WireError("the generators' states are missing")
            for rng, state in zip(rngs, states):
                if not (isinstance(state, list) and len(state) == 2):
                    raise WireError("a generator's state is not a pair")
                rng.state, rng.inc = wire_format.PCG32State(
                    *(wire_format.decode_integer(s) for s in state)
                )
            printed = answer.get("printed", "")
            if isinstance(printed, str) and printed.strip():
                self.printed.append(shorten(printed, wire_format.MAX_PRINTED))
            if "raised" in answer:
                raised = _checked_raised(answer["raised"])
            else:
                return decode(answer.get("value"))
        except (WireError, TypeError, KeyError, ValueError, OverflowError) as error:
            self.process.stop()
            raise ProcessFault(
                name, f"the answer to {shown} was not readable ({shorten(str(error), 80)})"
            ) from None
        if raised["refused"]:
            borrowed = raised["refused"].rsplit(".", 1)[-1]
            raise Borrowed(name, borrowed, raised["where"], called=bool(raised["where"]))
        if raised["not_implemented"]:
            raise StudentNotImplemented(shown, raised)
        if raised["value_error"]:
            raise StudentValueError(shown, raised)
        raise StudentRaised(shown, raised)

    def inventory(self) -> dict[str, str]:
        """What each of the seven functions is: the student's, a stub still, missing,
        tinyinit's (refused), or one that did not finish. Calls each once (`FIRST_CALLS`)."""
        found = {}
        for name in FUNCTIONS:
            args = tuple(PCG32(0) if a == "rng" else a for a in FIRST_CALLS[name])
            self.begin(self.timeout, "its first call")
            try:
                self.call(name, args, {}, probe=True)
                found[name] = YOURS
            except StudentNotImplemented:
                found[name] = STUB
            except NotWritten:
                found[name] = MISSING
            except Borrowed:
                found[name] = BORROWED
            except (TimedOut, Stuck):
                found[name] = UNFINISHED
            except StudentRaised:
                found[name] = YOURS  # written: whether it is right is the tests' business
            except ProcessFault:
                if self.problem is not None:
                    return {n: MISSING for n in FUNCTIONS}
                found[name] = UNFINISHED
        return found

    def pitfalls(self, kinds: Iterable[str]) -> tuple[dict, ...]:
        """The card's pitfalls tinyinit.course.pitfalls finds in these functions (one entry
        each)."""
        found: dict[str, dict] = {}
        for kind in kinds:
            if (
                kind in self.stuck
                or self.functions.get(kind) != YOURS
                or kind in self.screening.borrowed
            ):
                continue
            self.begin(self.timeout, f"the search for {kind}'s pitfall")
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    d = check_initializer(_Function(self, kind), kind)
            except (Exception, Fault):  # noqa: BLE001 - a diagnosis is a bonus, never a crash
                continue
            if d.pitfall not in CARD_IDS:
                continue
            card_id = CARD_IDS[d.pitfall]
            if card_id in found:
                found[card_id]["functions"].append(kind)
                continue
            p = PITFALLS[d.pitfall]
            measured = next(
                (line.split("measured:", 1)[1].strip() for line in d.message.splitlines()
                 if line.strip().startswith("measured:")),
                "",
            )  # fmt: skip
            found[card_id] = dict(
                id=card_id, title=p.title, symptom=p.symptom, fix=p.fix, functions=[kind],
                measured=shorten(measured, 200),
            )  # fmt: skip
        return tuple(found.values())


class _Function:
    """One of the student's functions, called through their process; checks what it returns
    (a function returning None or the wrong kind fails saying so, not deep in a test)."""

    def __init__(self, student: StudentModule, name: str):
        self.student, self.__name__ = student, name

    def __call__(self, *args, **kwargs):
        value = self.student.call(self.__name__, args, kwargs)
        if self.__name__ in ARRAY_FUNCTIONS:
            ok, what = isinstance(value, np.ndarray), "a numpy array (the weights)"
        elif self.__name__ == "fans":
            ok, what = isinstance(value, tuple) and len(value) == 2, "a tuple (fan_in, fan_out)"
        else:
            ok, what = isinstance(value, Real) and not isinstance(value, bool), "a number"
        if not ok:
            shown = repr(value) if len(repr(value)) < 60 else type(value).__name__
            if isinstance(value, Foreign):
                shown = repr(value)
            call = call_text(self.__name__, args, kwargs)
            raise WrongReturn(f"{call} returned {shown}, not {what}", value)
        return value


def _checked_raised(raised) -> dict:
    """An exception's description from the student's process, every field checked."""
    if not isinstance(raised, dict):
        raise WireError("an exception is not described")
    out = {}
    for key in ("type", "message", "where", "code"):
        value = raised.get(key, "")
        if not isinstance(value, str):
            raise WireError(f"{key} is not text")
        out[key] = shorten(value, wire_format.MAX_TEXT)
    for key in ("not_implemented", "value_error"):
        out[key] = raised.get(key) is True
    refused = raised.get("refused")
    out["refused"] = shorten(refused, 120) if isinstance(refused, str) else None
    return out


def _import_problem(raised: dict, file: Path) -> str:
    exception = f"{raised['type']}: {raised['message']}".rstrip(": ")
    if raised["refused"]:
        name = raised["refused"].rsplit(".", 1)[-1]
        return (
            f"importing it called tinyinit's {name} ({raised['refused']}); the checker checks "
            f"your functions, so it cannot run a file that runs tinyinit's"
            + (f"\nat {raised['where']}: {raised['code']}" if raised["where"] else "")
        )
    if raised["where"]:
        return f"importing it raised {exception}\nat {raised['where']}: {raised['code']}"
    return f"importing it raised {exception}"


def _printed_line(printed: str) -> str:
    lines = [line for line in printed.strip().splitlines() if line.strip()]
    return "\nprinted: " + " | ".join(shorten(line, 120) for line in lines[-3:]) if lines else ""


def _source_line(file: Path, lineno: int) -> str:
    try:
        return _read(file).splitlines()[lineno - 1].strip()
    except (OSError, IndexError):  # UnreadableFile among them
        return ""


def _same_file(filename: str, path: Path) -> bool:
    try:
        return os.path.samefile(filename, path)
    except OSError:
        return False


# --- one test's verdict ----------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """One test's verdict on a student's file: its status, and what a student reads next to it.

    status is one of TEST_STATUSES. measured says what the test found (failed), the exception
    (error), the function still to write (not written yet) or where it was stopped (timed
    out); where is file:line in the student's file and code its line; pitfalls are the
    card's pitfalls found in the functions this test uses (dicts: id, title, symptom, fix,
    functions, measured); advice, what torch does beyond the card (never a failure);
    printed is what the student's code printed during the test.

    >>> r = Result("test_shapes_and_dtype", FAILED, "normal_init (7,): float64", "cast once")
    >>> r.passed, r.lines()
    (False, ['measured: normal_init (7,): float64', 'hint: cast once'])
    """

    test: str
    status: str
    measured: str = ""
    hint: str = ""
    where: str = ""
    code: str = ""
    pitfalls: tuple = ()
    printed: str = ""
    advice: tuple = ()
    seconds: float = field(default=0.0, compare=False)

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def lines(self) -> list[str]:
        """The details under the test's line, in the order a student reads them."""
        out = []
        if self.measured:
            label = {FAILED: "measured", NOT_WRITTEN: "", TIMED_OUT: ""}.get(self.status, "")
            out.append(f"{label}: {self.measured}" if label else self.measured)
        if self.where:
            out.append(f"at {self.where}" + (f": {self.code}" if self.code else ""))
        for p in self.pitfalls:
            out.append(f"pitfall {p['id']}: {p['title']}")
            out.append(f"  symptom: {p['symptom']}")
            if p["measured"]:
                out.append(f"  found in {', '.join(p['functions'])}: {p['measured']}")
            out.append(f"  fix: {p['fix']}")
        if self.hint and not self.pitfalls:
            out.append(f"hint: {self.hint}")
        out += [f"advice: {a}" for a in self.advice]
        if self.printed:
            lines = [shorten(line, 120) for line in self.printed.strip().splitlines()[:5]]
            out.append("printed: " + " | ".join(lines))
        return out


def run_test(test: CatalogTest, student: StudentModule, timeout: float) -> Result:
    """Run one catalog test on the student's functions and judge it, all in this process.

    A failure's pitfalls are looked for afterwards (`StudentModule.pitfalls`), in their own
    time: they call the student's functions again.
    """
    student.begin(timeout, test.name)
    student.printed = []
    advice: list[str] = []
    token = ADVICE.set(advice)
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            test.check(student)
    except BaseException as error:  # noqa: BLE001 - whatever the student's code did
        if isinstance(error, KeyboardInterrupt):
            raise
        printed = list(student.printed)  # the test's, not the pitfall search's after it
        result = _judge(test, student, error)
        student.printed = printed
    else:
        result = Result(test.name, PASSED, seconds=time.perf_counter() - start)
    finally:
        ADVICE.reset(token)
    printed = "\n".join(student.printed)
    return replace(result, printed=shorten(printed, wire_format.MAX_PRINTED), advice=tuple(advice))


def _judge(test: CatalogTest, student: StudentModule, error: BaseException) -> Result:
    name = test.name
    if isinstance(error, Stuck):
        earlier = error.earlier
        return Result(
            name,
            TIMED_OUT,
            measured=f"not run: {error.function} did not finish in {earlier['test']} "
            f"(stopped after {earlier['seconds']:g} s)",
            hint=ENDLESS,
            where=earlier["where"],
            code=earlier["code"],
        )
    if isinstance(error, TimedOut):
        return Result(
            name,
            TIMED_OUT,
            f"stopped after {student.timeout:g} s: the test did not finish",
            ENDLESS,
            error.where,
            error.code,
        )
    if isinstance(error, ProcessFault):
        if student.problem is not None:
            return Result(name, ERROR, "your file could not be imported (see above)")
        hint = "does your code call exit() or os._exit(), or crash Python?"
        measured = f"{error} while {error.function} ran"
        return Result(name, ERROR, measured, hint, printed=_printed_line(error.printed).strip())
    if isinstance(error, NotWritten):
        return Result(
            name,
            NOT_WRITTEN,
            measured=f"{error} yet",
            hint=f"write {error.function} in {student.file.name}",
        )
    if isinstance(error, Borrowed):
        return Result(
            name,
            FAILED,
            measured=error.text(),
            hint=f"write {error.function} yourself; from tinyinit use only {', '.join(OWN_NAMES)}",
        )
    if isinstance(error, StudentNotImplemented):
        inner = error.where.rsplit(" in ", 1)[-1] if error.where else error.call.split("(")[0]
        outer = error.call.split("(")[0]
        needed = "" if inner == outer else f" (called by {outer})"
        return Result(
            name,
            NOT_WRITTEN,
            measured=f"{inner} is not written yet: it raises NotImplementedError{needed}",
            hint=f"write {inner} in {student.file.name}, in place of raise NotImplementedError()",
            where=error.where,
        )
    if isinstance(error, StudentRaised):
        return Result(
            name,
            ERROR,
            measured=f"your code raised {shorten(str(error), 200)} (in {error.call})",
            hint=test.hint,
            where=error.where,
            code=error.code,
        )
    if isinstance(error, AssertionError):
        result = Result(name, FAILED, measured=str(error) or "failed", hint=test.hint)
        if test.suspects:
            result = replace(result, pitfalls=student.pitfalls(test.suspects))
        return result
    # a test that broke on what the student's functions returned (a wrong kind of value)
    return Result(
        name,
        ERROR,
        measured=f"{type(error).__name__}: {shorten(str(error), 300)}, in the test, on what "
        "your functions returned",
        hint=test.hint,
    )


# --- the report ------------------------------------------------------------------------------


class NotPassed(AssertionError):
    """A check cell's tests did not all pass: shown as the report, without a traceback.

    It is an AssertionError, so nbgrader and pytest count the cell as failed.

    >>> issubclass(NotPassed, AssertionError)
    True
    """

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[1;31m✗ {self}\x1b[0m"]


class NotWrittenYet(NotImplementedError):
    """A check cell's tests wait for functions still to write: shown as the report.

    A NotImplementedError, as the stubs raise: the exercise is not answered yet.

    >>> issubclass(NotWrittenYet, NotImplementedError)
    True
    """

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[1;33m… {self}\x1b[0m"]


@dataclass(frozen=True)
class Report:
    """The verdict of check_init: one Result per test run, in the card's order.

    problem is set (and no test ran) when the file could not be read or imported;
    functions says what each of the seven functions is (YOURS, STUB, MISSING, BORROWED,
    UNFINISHED). A notebook shows the report as a table (_repr_html_), a terminal as text,
    each verdict in words.

    >>> report = Report("my_init.py", (
    ...     Result("test_shapes_and_dtype", PASSED),
    ...     Result("test_rejects_bad_arguments", NOT_WRITTEN, "fans is not written yet"),
    ... ))
    >>> report.ok
    False
    >>> print(report)
    my_init.py: 1 of 2 tests passed; 1 not written yet
      ✓ passed           test_shapes_and_dtype
      ○ not written yet  test_rejects_bad_arguments
                         fans is not written yet
    """

    path: str
    results: tuple[Result, ...] = ()
    problem: str | None = None
    functions: dict = field(default_factory=dict, compare=False)
    seconds: float = field(default=0.0, compare=False)
    # Why the file did not run in the sandbox ("" when it did, or never ran).
    not_isolated: str = field(default="", compare=False)

    @property
    def ok(self) -> bool:
        """True only when every selected test passed."""
        return self.problem is None and bool(self.results) and all(r.passed for r in self.results)

    def __getitem__(self, test: str) -> Result:
        for result in self.results:
            if result.test == test:
                return result
        raise KeyError(f"test {test!r} was not run; run: {', '.join(self.names)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.test for r in self.results)

    def summary(self) -> str:
        name = Path(self.path).name
        if self.problem is not None:
            return f"{name} could not be run, so no test ran"
        n, passed = len(self.results), sum(r.passed for r in self.results)
        text = f"{name}: {passed} of {n} test{'s' if n != 1 else ''} passed"
        others = [
            f"{count} {status}"
            for status in TEST_STATUSES[1:]
            if (count := sum(r.status == status for r in self.results))
        ]
        return text + ("; " + ", ".join(others) if others else "")

    def borrowed(self) -> list[str]:
        return [name for name, status in self.functions.items() if status == BORROWED]

    def __str__(self) -> str:
        lines = [self.summary()]
        if self.problem is not None:
            lines += ["  " + line for line in self.problem.splitlines()]
        width = max(len(s) for s in TEST_STATUSES)
        for r in self.results:
            lines.append(f"  {MARKS[r.status]} {r.status:<{width}}  {r.test}")
            lines += [" " * (width + 6) + line for line in r.lines()]
        if self.borrowed():
            lines.append(f"  tinyinit's, not yours (refused): {', '.join(self.borrowed())}")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        e = html.escape
        head = f"<p><strong>{e(self.summary())}</strong></p>"
        if self.problem is not None:
            return f"<div>{head}<pre>{e(self.problem)}</pre></div>"
        cell = 'style="text-align:left;vertical-align:top;padding:2px 8px"'
        rows = []
        for r in self.results:
            colour = {PASSED: "#1a7f37", NOT_WRITTEN: "#57606a"}.get(r.status, "#b3261e")
            details = "<br>".join(  # a line indented under the one above stays indented
                ("&emsp;" if line.startswith(" ") else "") + e(line.strip()) for line in r.lines()
            )
            rows.append(
                f"<tr><td {cell}><code>{e(r.test)}</code></td>"
                f'<td {cell}><strong style="color:{colour}">{MARKS[r.status]} {e(r.status)}'
                f"</strong></td><td {cell}>{details}</td></tr>"
            )
        refused = self.borrowed()
        foot = f"<p>tinyinit's, not yours (refused): {e(', '.join(refused))}</p>" if refused else ""
        return (
            f"<div>{head}<table><caption style='text-align:left'>The module card's tests, "
            f"in its order</caption><thead><tr><th scope='col' {cell}>test</th>"
            f"<th scope='col' {cell}>result</th><th scope='col' {cell}>details</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>{foot}</div>"
        )

    def require(self) -> Report:
        """The report itself when every test passed; else raise, showing the report.

        A notebook's check cell ends with it, so that a grader (nbgrader, pytest) counts a
        test not passed yet as a failed cell: `NotPassed` (an AssertionError) when a test
        failed, raised an error or timed out, `NotWrittenYet` (a NotImplementedError) when
        the only trouble is functions still to write. Either shows as the report's text,
        with no traceback.

        >>> Report("my_init.py", (Result("test_shapes_and_dtype", PASSED),)).require().ok
        True
        >>> Report("my_init.py", (Result("test_shapes_and_dtype", NOT_WRITTEN),)).require()
        Traceback (most recent call last):
        ...
        tinyinit.course.checker.NotWrittenYet: my_init.py: 0 of 1 test passed; 1 not written yet
          ○ not written yet  test_shapes_and_dtype
        """
        if self.ok:
            return self
        written = self.problem is None and all(
            r.status in (PASSED, NOT_WRITTEN) for r in self.results
        )
        raise (NotWrittenYet if written and self.results else NotPassed)(str(self))


# --- check_init --------------------------------------------------------------------------------


class UnreadableFile(OSError, ValueError):
    """The path given is not a Python file the checker can read (the command line's exit 2).

    An OSError, as open()'s own, and a ValueError: the path is an argument out of range."""


def student_file(path) -> Path:
    """The student's file as a Path; UnreadableFile (or ValueError for a wrong kind of
    argument) saying what is wrong with it: an empty path, one that does not exist, a folder,
    something other than a regular file (a FIFO or a device, which a read would wait on or
    never finish), a name not ending in .py."""
    instance("path", path, (str, os.PathLike), "a file name such as 'my_init.py'")
    text = os.fspath(path)
    give = (
        "give the Python file that holds your seven functions, e.g. 'my_init.py' next to the "
        "notebooks"
    )
    if not text:  # Path("") is Path("."), the folder the command runs in
        raise UnreadableFile(f"path is empty: {give}")
    file = Path(text)
    try:
        mode = file.stat().st_mode
    except ValueError:  # a null character, which no file system takes in a name
        raise UnreadableFile(
            f"path {text!r} holds a null character, which no file name can: {give}"
        ) from None
    except (FileNotFoundError, NotADirectoryError):
        where = "" if file.is_absolute() else f" in {Path.cwd()}"
        raise UnreadableFile(f"path {text!r} does not exist{where}: {give}") from None
    except OSError as error:  # a folder on the way that may not be entered, a name too long
        raise UnreadableFile(f"path {text!r} cannot be read: {error.strerror or error}") from None
    if stat.S_ISDIR(mode):
        raise UnreadableFile(f"path {text!r} is a folder, not a file: {give}")
    if not stat.S_ISREG(mode):
        kinds = [
            (stat.S_ISFIFO, "a FIFO"),
            (stat.S_ISCHR, "a character device"),
            (stat.S_ISBLK, "a block device"),
            (stat.S_ISSOCK, "a socket"),
        ]
        kind = next((name for is_kind, name in kinds if is_kind(mode)), "a special file")
        raise UnreadableFile(f"path {text!r} is not a regular file ({kind}): {give}")
    if file.suffix != ".py":
        raise UnreadableFile(f"path must be a Python file ending in .py, got {text!r}")
    return file


def _read(file: Path) -> str:
    """The file's text as Python reads it: in the encoding its coding line names (UTF-8
    without one), a byte-order mark dropped, any line end read as a newline."""
    try:
        data = file.read_bytes()
    except OSError as error:
        raise UnreadableFile(f"path {str(file)!r} cannot be read: {error.strerror}") from None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return importlib.util.decode_source(data)
    except SyntaxError as error:  # a coding line naming no codec Python has, or a BOM beside one
        if not error.msg.startswith("invalid or missing encoding"):
            raise UnreadableFile(f"path {str(file)!r}: {error.msg}") from None
        encoding = "utf-8"  # no coding line, and the first lines are not UTF-8
        try:
            data.decode(encoding)
        except UnicodeDecodeError as undecodable:
            error = undecodable
        raise UnreadableFile(
            f"path {str(file)!r} is not text in UTF-8 (byte {error.start}): save it as UTF-8"
        ) from None
    except UnicodeDecodeError as error:
        raise UnreadableFile(
            f"path {str(file)!r} is not text in {encoding.removesuffix('-sig').upper()} "
            f"(byte {error.start}): save it as UTF-8"
        ) from None


def selected_tests(tests) -> tuple[str, ...]:
    """The names asked for, in the card's order; ValueError for a name not in the catalog."""
    if tests is None:
        return NAMES
    if isinstance(tests, str):
        tests = [tests]
    accepted = f"None or a list of the card's test names ({', '.join(NAMES)})"
    if not isinstance(tests, (list, tuple)) or not all(isinstance(t, str) for t in tests):
        raise KindError(f"tests must be {accepted}, got {shown(tests)}")
    if not tests or any(t not in NAMES for t in tests):
        raise ValueError(f"tests must be {accepted}, got {shown(list(tests))}")
    return tuple(name for name in NAMES if name in tests)


def checked_timeout(timeout) -> float:
    """The seconds one test may take: a number in (0, MAX_TIMEOUT]."""
    return number("timeout", timeout, above=0, maximum=MAX_TIMEOUT)


def check_init(
    path="my_init.py", tests=None, timeout: float = DEFAULT_TIMEOUT, sandbox: bool | None = None
) -> Report:
    """Run the card's tests on the functions of your file; a Report says how each went.

    path is the file holding the card's seven functions; tests a list of test names
    (None: all eleven, always in the card's order); timeout the seconds one test (or the
    import of the file) may take before it is stopped. Your file runs in a process of its
    own that only answers calls; the tests and the verdict run here.

    sandbox: True runs that process in the sandbox (`tinyinit.course.sandbox`) or raises
    SandboxUnavailable; False runs it as a plain process; None (the default) uses the
    sandbox where one can be made, and requires it under a grader (`grading()`).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "my_init.py"
    >>> _ = path.write_text("def fans(shape):\\n    raise NotImplementedError()\\n")
    >>> report = check_init(path, tests=["test_hand_example_linear_4x3"])
    >>> report.ok, report["test_hand_example_linear_4x3"].measured
    (False, 'fans is not written yet: it raises NotImplementedError')
    """
    file = student_file(path)
    names = selected_tests(tests)
    limit = checked_timeout(timeout)
    wall = chosen_sandbox(sandbox)
    torch_golden()  # what the tests judge by is read before the student's code runs
    start = time.perf_counter()
    screening = screen(_read(file), file)
    if screening.problem is not None:
        return Report(str(path), (), screening.problem, {}, time.perf_counter() - start)
    student = StudentModule(file, limit, screening, wall or None)
    not_isolated = "" if wall else wall.reason
    try:
        functions = student.inventory()
        if student.problem is not None:
            seconds = time.perf_counter() - start
            return Report(str(path), (), student.problem, {}, seconds, not_isolated)
        results = [run_test(TESTS[name], student, limit) for name in names]
    finally:
        student.close()
    seconds = time.perf_counter() - start
    return Report(str(path), tuple(results), None, functions, seconds, not_isolated)


# Set by whatever grades (a grading job, CI): every check must then run in the sandbox.
REQUIRE_SANDBOX_VARIABLE = "TINYINIT_REQUIRE_SANDBOX"


def grading() -> bool:
    """Whether this process grades: nbgrader's autograde (which sets NBGRADER_EXECUTION in
    the kernels it runs) or a grader that set TINYINIT_REQUIRE_SANDBOX=1."""
    required = os.environ.get(REQUIRE_SANDBOX_VARIABLE, "").strip().lower()
    return os.environ.get("NBGRADER_EXECUTION") == "autograde" or required not in (
        "",
        "0",
        "no",
        "false",
    )


def chosen_sandbox(sandbox: bool | None):
    """The Sandbox to run the student's process in, or an Unavailable saying why it runs as a
    plain process; SandboxUnavailable where the sandbox is required and cannot be made."""
    instance("sandbox", sandbox, (bool, type(None)), "True, False or None")
    if sandbox is False:
        return Unavailable("the check was asked to run without its sandbox")
    found = find_sandbox()
    if not found and (sandbox or grading()):
        raise SandboxUnavailable(f"this check must run in a sandbox, and {found.reason}")
    return found

"""The verdict holds against a hostile file: whatever the student's code does inside the
sandbox, the check ends with its report and a non-zero exit, in seconds, the installed package
unchanged, nothing left running, and the next student's file judged as before.

Each hostile file here is the student edition's stubs (the seven functions not written yet,
so that an honest verdict is exit 1) and an attack run as the file is imported. The attacks
get past the screen of the source the way a determined student would (`os` from a module of
tinyinit that imports it, `__import__` from `sys.modules`), so that what is tested is the
wall, not the screen. They run through the command line with --require-sandbox, as a grader
runs them.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy
import pytest
from scripts_loader import FIXTURES, ROOT, load_script

import tinyinit
from tinyinit.course.checker import check_init
from tinyinit.course.sandbox import GENERATOR_FILES, LIMITS

TEACHER = ROOT / "notebooks" / "my_init.py"
CARD_ONLY = FIXTURES / "card_only_init.py"
PACKAGE = Path(tinyinit.__file__).resolve().parent
SITE_PACKAGES = Path(numpy.__file__).resolve().parent.parent  # the environment's own

make_student = load_script("make_student")
STUBS = make_student.fill_solutions(TEACHER.read_text(), make_student.CODE_STUB)

# Past the screen: `os` as an attribute of a module of tinyinit's generator that imports it,
# and __import__ from the interpreter's table of modules. Inside the sandbox both work.
PRELUDE = """
import tinyinit.core.parallel as _parallel
_os = getattr(_parallel, "o" + "s")
_load = getattr(getattr(_os, "s" + "ys").modules["builtins"], "__imp" + "ort__")
"""

pytestmark = pytest.mark.usefixtures("sandbox")


def installed_state() -> dict[str, str]:
    """A hash of every file of the installed package, the environment's .pth files, the
    teacher's solution; and the names in site-packages (a new .pth is a new name)."""
    files = [p for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    files += [*SITE_PACKAGES.glob("*.pth"), TEACHER]
    state = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
    state["site-packages"] = " ".join(sorted(p.name for p in SITE_PACKAGES.iterdir()))
    return state


def hostile(tmp_path: Path, attack: str, name: str = "my_init.py") -> Path:
    """The stubs and `attack`, run at import; an attack that fails is caught, so that only a
    success could change the verdict."""
    indented = "\n".join("    " + line for line in attack.strip().splitlines())
    path = tmp_path / name
    path.write_text(f"{STUBS}\n{PRELUDE}\ntry:\n{indented}\nexcept BaseException:\n    pass\n")
    return path


def check(path: Path, *options: str, env: dict | None = None, timeout: float = 120):
    return subprocess.run(
        [sys.executable, "-m", "tinyinit", "check", str(path), "--require-sandbox", *options],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=path.parent,
        env=env,
    )


def running_with(marker: str) -> list[str]:
    """The command lines of the processes of this machine that mention `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in line:
                found.append(f"{entry.name}: {line}")
    return found


def assert_none_left(marker: str, seconds: float = 5) -> None:
    """No process mentions marker once the kernel has had a few seconds to reap the killed."""
    deadline = time.monotonic() + seconds
    while running_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert running_with(marker) == []


def assert_held(run, path: Path, before: dict[str, str]) -> None:
    """The check ended with a report and exit 1 (the stubs are not written yet), and the
    attack left nothing behind: the package as it was, no process, the next file judged."""
    assert run.returncode == 1, (run.returncode, run.stdout, run.stderr)
    assert re.match(r"my_init\.py: 0 of 11 tests passed; 11 not written yet", run.stdout), run
    assert "Traceback" not in run.stdout + run.stderr, run.stderr
    assert installed_state() == before
    assert_none_left(str(path))
    later = path.parent / "next" / "my_init.py"
    later.parent.mkdir()
    later.write_text(STUBS)
    again = check(later, "--test", "test_fans_and_gains_match_torch")
    assert again.returncode == 1 and "not written yet" in again.stdout, again


@pytest.fixture
def before():
    return installed_state()


def test_writes_by_open_link_symlink_and_memory_map_reach_nothing(tmp_path, before):
    token = secrets.token_hex(6)
    targets = [
        PACKAGE / f"attack_{token}.py",
        SITE_PACKAGES / f"attack_{token}.pth",
        tmp_path / f"attack_{token}.txt",  # the file's own folder
        Path.home() / f"attack_{token}.txt",
        Path("/tmp") / f"attack_{token}.txt",
    ]
    victim = PACKAGE / "checker.py"
    attack = f"""
for target in {[str(t) for t in targets]!r}:
    for how in range(3):
        try:
            if how == 0:
                fd = _os.open(target, _os.O_WRONLY | _os.O_CREAT, 0o644)
                _os.write(fd, b"import sys; sys.exit(0)\\n")
            elif how == 1:
                getattr(_os, "li" + "nk")(__file__, target)
            else:
                getattr(_os, "sym" + "link")(__file__, target)
        except BaseException:
            pass
import numpy as _np
try:
    mapped = getattr(_np, "mem" + "map")({str(victim)!r}, mode="r+")
    mapped[:6] = _np.frombuffer(b"import", dtype=_np.uint8)[::-1]
    mapped.flush()
except BaseException:
    pass
try:
    fd = _os.open({str(victim)!r}, _os.O_WRONLY | _os.O_TRUNC)
except BaseException:
    pass
"""
    path = hostile(tmp_path, attack)
    run = check(path)
    for target in targets:
        assert not target.exists() and not target.is_symlink(), target
    assert_held(run, path, before)


def test_the_teachers_solution_and_the_packages_source_cannot_be_read_and_handed_in(
    tmp_path, before
):
    attack = f"""
me = getattr(_os, "sys").modules["my_init"]
loaders = _load("_frozen_importlib_external")
for source in ({str(TEACHER)!r}, {str(PACKAGE / "init.py")!r}):
    try:
        module = loaders.SourceFileLoader("borrowed", source).load_module()
        for name in ("fans", "calculate_gain", "xavier_uniform", "xavier_normal",
                     "kaiming_normal", "normal_init", "scaled_residual_std"):
            setattr(me, name, getattr(module, name))
    except BaseException:
        pass
for source in ({str(TEACHER)!r}, {str(PACKAGE / "init.py")!r}):
    try:
        text = _load("_io").open(source).read()
        exec_ = getattr(getattr(_os, "sys").modules["builtins"], "ex" + "ec")
        exec_(text, getattr(me, "__di" + "ct__"))
    except BaseException:
        pass
"""
    path = hostile(tmp_path, attack)
    run = check(path)
    assert_held(run, path, before)


def test_the_checker_cannot_be_found_read_or_signalled(tmp_path, before):
    attack = """
sig = _load("signal")
me = _os.getpid()
for pid in [int(p) for p in _os.listdir("/proc") if p.isdigit()] + [_os.getppid(), 1]:
    if pid == me:
        continue
    try:
        _os.open("/proc/%d/mem" % pid, _os.O_RDWR)
    except BaseException:
        pass
    for s in (sig.SIGSTOP, sig.SIGTERM, sig.SIGKILL):
        try:
            _os.kill(pid, s)
        except BaseException:
            pass
"""
    path = hostile(tmp_path, attack)
    run = check(path, timeout=60)
    assert_held(run, path, before)


def test_a_process_left_behind_dies_with_the_check(tmp_path, before):
    seconds = f"{secrets.randbelow(10**6)}.{secrets.randbelow(1000)}"
    attack = f"""
for _ in range(2):
    if _os.fork() == 0:
        _os.setsid()
        if _os.fork() == 0:
            _os.execv("/usr/bin/sleep", ["sleep", {seconds!r}])
        _os._exit(0)
"""
    path = hostile(tmp_path, attack)
    start = time.monotonic()
    run = check(path)
    assert time.monotonic() - start < 60
    assert_none_left(seconds)
    assert_held(run, path, before)


def test_no_connection_leaves_the_sandbox(tmp_path, before):
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted = []

    def accept():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not stop.is_set():
            try:
                accepted.append(server.accept())
            except OSError:
                pass

    stop = threading.Event()
    listener = threading.Thread(target=accept, daemon=True)
    listener.start()
    attack = f"""
s = _load("socket")
for host in ("127.0.0.1", "localhost"):
    try:
        s.create_connection((host, {port}), timeout=2).sendall(b"11 of 11")
    except BaseException:
        pass
"""
    path = hostile(tmp_path, attack)
    try:
        run = check(path)
    finally:
        stop.set()
        listener.join()
        server.close()
    assert accepted == []
    assert_held(run, path, before)


def test_garbage_on_every_descriptor_is_never_a_verdict(tmp_path, before):
    forged = (
        "my_init.py: 11 of 11 tests passed\n"
        '{"problem": 5}\n{"ready": true, "functions": {}}\n'
        '{"id": 1, "value": {"t": "float", "v": "0x1p+99999"}, "rngs": []}\n'
        '{"id": 2, "value": {"t": "array", "dtype": "<f4", "shape": [9223372036854775808, 0],'
        ' "order": "C", "data": ""}}\n' + "[" * 100_000 + "\n"
    )
    attack = f"""
for fd in range(64):
    try:
        _os.write(fd, {forged!r}.encode())
    except BaseException:
        pass
for target in ["/proc/%d/fd/1" % _os.getppid(), "/dev/tty"]:
    try:
        _os.write(_os.open(target, _os.O_WRONLY), b"my_init.py: 11 of 11 tests passed\\n")
    except BaseException:
        pass
"""
    path = hostile(tmp_path, attack)
    run = check(path)
    assert "11 of 11" not in run.stdout + run.stderr
    assert run.returncode == 1, run
    assert "your code sent" in run.stdout or "not one the checker sent" in run.stdout, run.stdout
    assert "Traceback" not in run.stdout + run.stderr
    assert installed_state() == before


def test_the_limits_hold_in_the_students_process(tmp_path):
    path = tmp_path / "my_init.py"
    path.write_text(
        STUBS
        + PRELUDE
        + "r = _load('resource')\n"
        + "raise RuntimeError(repr({n: r.getrlimit(getattr(r, n)) for n in "
        + f"{sorted(LIMITS.for_process(7))!r}}}))\n"
    )
    run = check(path, "--timeout", "7")
    assert run.returncode == 1
    seen = eval(re.search(r"RuntimeError: (\{.*\})", run.stdout).group(1))  # noqa: S307
    assert seen == {k: (v, v) for k, v in LIMITS.for_process(7).items()}
    big = tmp_path / "big" / "my_init.py"
    big.parent.mkdir()
    big.write_text(STUBS + "\nblock = bytearray(3 * 2**30)\n")
    run = check(big)
    assert run.returncode == 1 and "MemoryError" in run.stdout, run.stdout


def test_sigterm_or_ctrl_c_ends_the_check_with_one_line_and_nothing_left(tmp_path):
    path = tmp_path / "my_init.py"
    path.write_text(CARD_ONLY.read_text() + "\ndef fans(shape):\n    while True:\n        pass\n")
    for sent in (signal.SIGTERM, signal.SIGINT):
        checker = subprocess.Popen(
            [sys.executable, "-m", "tinyinit", "check", str(path), "--require-sandbox"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        # Until the student's process runs (its fans loops for 30 s): a process other than the
        # checker, whose own command line names the file from its start, before its imports.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not [
            line for line in running_with(str(path)) if not line.startswith(f"{checker.pid}:")
        ]:
            time.sleep(0.1)
        time.sleep(1)
        checker.send_signal(sent)
        stdout, stderr = checker.communicate(timeout=30)
        assert checker.returncode == 2, (stdout, stderr)
        assert stderr.strip().splitlines() == [
            f"python -m tinyinit check: stopped by {sent.name}: no verdict"
        ]
        assert_none_left(str(path))


@pytest.mark.parametrize(
    "form",
    ["byte-order mark", "CRLF", "namedtuple", "latin-1 with a coding line"],
)
def test_an_honest_file_passes_as_python_reads_it(tmp_path, form):
    source = CARD_ONLY.read_text()
    data = source.encode()
    if form == "byte-order mark":
        data = b"\xef\xbb\xbf" + data
    elif form == "CRLF":
        data = source.replace("\n", "\r\n").encode()
    elif form == "namedtuple":
        data = (
            source
            + "\nfrom collections import namedtuple\n_Fans = namedtuple('Fans', 'fan_in fan_out')\n"
            + "_card_fans = fans\ndef fans(shape):\n    return _Fans(*_card_fans(shape))\n"
        ).encode()
    else:
        data = ("# -*- coding: latin-1 -*-\n# café\n" + source).encode("latin-1")
    path = tmp_path / "my_init.py"
    path.write_bytes(data)
    run = check(path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("my_init.py: 11 of 11 tests passed"), run.stdout


def test_a_coding_line_cannot_hide_an_import_from_the_screen(tmp_path):
    path = tmp_path / "my_init.py"
    hidden = "import os".encode("utf-7")
    path.write_bytes(b"# coding: utf-7\n" + hidden.replace(b" ", b"+ACA-") + b"\n")
    report = check_init(path, tests=["test_fans_and_gains_match_torch"])
    assert report.problem is not None and "uses os" in report.problem, report


def test_without_a_sandbox_require_sandbox_refuses_in_one_line(tmp_path):
    path = tmp_path / "my_init.py"
    path.write_text(STUBS)
    env = {k: v for k, v in os.environ.items() if k != "TINYINIT_REQUIRE_SANDBOX"}
    env["PATH"] = str(tmp_path)  # no bwrap on it
    run = check(path, env=env)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.splitlines() == [
        "python -m tinyinit check: error: this check must run in a sandbox, and bubblewrap is "
        "not installed: install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)"
    ]
    plain = subprocess.run(
        [sys.executable, "-m", "tinyinit", "check", str(path), "--test", "test_shapes_and_dtype"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert plain.returncode == 1 and "not written yet" in plain.stdout
    assert plain.stderr.splitlines() == [
        "python -m tinyinit check: this run is not isolated (bubblewrap is not installed: "
        "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)): fine for "
        "practice; a grade needs the sandbox"
    ]


def test_a_grader_requires_the_sandbox(monkeypatch, tmp_path):
    from tinyinit.course import checker
    from tinyinit.course.sandbox import SandboxUnavailable, Unavailable

    path = tmp_path / "my_init.py"
    path.write_text(STUBS)
    monkeypatch.setattr(checker, "find_sandbox", lambda: Unavailable("no bubblewrap here"))
    monkeypatch.delenv("TINYINIT_REQUIRE_SANDBOX", raising=False)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(SandboxUnavailable, match="must run in a sandbox, and no bubblewrap"):
        check_init(path)
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")  # a student's own validation
    assert check_init(path, tests=["test_shapes_and_dtype"]).not_isolated == "no bubblewrap here"


def test_the_sandbox_shows_only_what_the_students_process_needs(tmp_path):
    path = tmp_path / "my_init.py"
    path.write_text(
        PRELUDE + "seen = {'uid': _os.getuid(), 'pids': sorted(p for p in _os.listdir('/proc') "
        "if p.isdigit()), 'here': _os.listdir('.'), 'home': _os.environ.get('HOME')}\n"
        # every file under the package's folder, as a path relative to it
        "top = _os.path.dirname(_os.path.dirname(_parallel.__file__))\n"
        "seen['package'] = sorted(_os.path.relpath(_os.path.join(d, f), top) "
        "for d, _, files in _os.walk(top) for f in files)\n"
        "raise RuntimeError(repr(seen))\n"
    )
    run = check(path)
    seen = eval(re.search(r"RuntimeError: (\{.*\})", run.stdout).group(1))  # noqa: S307
    assert seen == {
        "uid": 65534,
        "pids": ["1", "2"],
        "package": sorted(GENERATOR_FILES),
        "here": ["my_init.py"],
        "home": "/scratch",
    }


def test_the_readme_and_the_classroom_page_state_the_limits_the_sandbox_sets():
    from conftest import ROOT

    for page in (ROOT / "README.md", ROOT / "docs" / "teaching" / "classroom.md"):
        text = " ".join(page.read_text(encoding="utf-8").split())
        for limit in LIMITS.text().split(", "):
            assert limit.replace("--timeout", "`--timeout`") in text, (page.name, limit)

"""The wall around a student's code: bubblewrap, the sandbox Flatpak runs its apps in.

The checker's verdict is only as good as the boundary between the code it judges and
itself. A screen of the source cannot be that boundary (Python offers too many ways to the
same door), nor can a process of the same user (it can read the checker's memory, signal it,
rewrite the installed package). So on Linux the student's process runs inside bubblewrap
(`bwrap`, Debian's package `bubblewrap`), which the operating system enforces:

* its own user, pid, network, IPC, UTS and cgroup namespaces: it runs as `nobody`, sees no
  process but its own, and has no network but an unconnected loopback;
* a file system that is read-only and holds only what it needs: the system's libraries,
  Python's standard library (no site-packages), numpy, tinyinit's generator
  (`GENERATOR_FILES`, the files the student's process loads) and the student's file. Not the
  rest of tinyinit, not the notebooks or the teacher's `my_init.py`, not the home folder. A
  scratch folder, `/scratch` (its HOME and TMPDIR), is the only place it can write, and it
  vanishes with the process;
* limits (`LIMITS`) that a file implementing the card never meets;
* death with the checker: when the checker stops it, or dies, everything the student's code
  started dies with it (the pid namespace ends with its first process).

Where bubblewrap cannot run (macOS, Windows, a Linux without it or without user namespaces),
`find_sandbox()` says why, and the checker runs the student's process as a plain process;
a grade needs the sandbox (`check --require-sandbox`, `python -m tinyinit grade`).

>>> sandbox = find_sandbox()
>>> isinstance(sandbox, Sandbox) or isinstance(sandbox, Unavailable)
True
>>> print(LIMITS.text())  # doctest: +NORMALIZE_WHITESPACE
memory 2 GiB, CPU time 60 s + 12 s per second of --timeout, 64 processes, 64 open files,
files of 16 MiB, 64 MiB of scratch space
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "GENERATOR_FILES",
    "INSTALL",
    "LIMITS",
    "Limits",
    "Sandbox",
    "SandboxUnavailable",
    "Unavailable",
    "find_sandbox",
    "protect_this_process",
    "python_command",
]

# The files of tinyinit the student's process loads: its own server and the messages' format,
# then the generator and what the generator imports. Nothing else of the package is inside the wall.
# Each relative to the package's folder; bwrap makes the folders between.
GENERATOR_FILES = (
    "course/student_process.py",
    "course/wire_format.py",
    "core/pcg32.py",
    "core/distributions.py",
    "core/arguments.py",
    "core/libm.py",
    "core/parallel.py",
)
INSTALL = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)"
SCRATCH = "/scratch"  # the student's HOME and TMPDIR, inside the wall: the one place to write
MiB = 2**20


@dataclass(frozen=True)
class Limits:
    """What the student's process may use. A correct file uses far less of each: numpy and
    the largest test's weights take about 200 MiB, the eleven tests a few seconds of CPU.

    >>> LIMITS.cpu_seconds(30), LIMITS.for_process(30)["RLIMIT_NPROC"]
    (420, 64)
    """

    memory: int = 2048 * MiB  # address space, bytes
    cpu_base: int = 60  # seconds of CPU, plus cpu_per_timeout x the test's timeout
    cpu_per_timeout: int = 12  # the eleven tests' time, and one more
    processes: int = 64  # threads count as processes for the kernel
    open_files: int = 64
    file_size: int = 16 * MiB  # the largest file it may write (in the scratch folder)
    scratch: int = 64 * MiB  # the scratch folder's size

    def cpu_seconds(self, timeout: float) -> int:
        return int(self.cpu_base + self.cpu_per_timeout * timeout)

    def for_process(self, timeout: float) -> dict[str, int]:
        """The resource limits the student's process sets on itself before it imports the
        file (hard and soft alike: without capabilities it cannot raise them again)."""
        return {
            "RLIMIT_AS": self.memory,
            "RLIMIT_CPU": self.cpu_seconds(timeout),
            "RLIMIT_NPROC": self.processes,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_FSIZE": self.file_size,
            "RLIMIT_CORE": 0,
        }

    def text(self) -> str:
        return (
            f"memory {self.memory // 2**30} GiB, CPU time {self.cpu_base} s + "
            f"{self.cpu_per_timeout} s per second of --timeout, {self.processes} processes, "
            f"{self.open_files} open files, files of {self.file_size // MiB} MiB, "
            f"{self.scratch // MiB} MiB of scratch space"
        )


LIMITS = Limits()


@dataclass(frozen=True)
class Unavailable:
    """No sandbox here, and why (one line, naming what to install where that is the cure).

    It is false, as a missing sandbox should read:

    >>> missing = Unavailable("bubblewrap is not installed")
    >>> bool(missing), missing.reason
    (False, 'bubblewrap is not installed')
    """

    reason: str

    def __bool__(self) -> bool:
        return False


class SandboxUnavailable(RuntimeError):
    """A check that must run in the sandbox, on a machine where none can be made.

    >>> issubclass(SandboxUnavailable, RuntimeError)
    True
    """


@dataclass(frozen=True)
class Sandbox:
    """bubblewrap, found and tried: `command` wraps the student's Python in it.

    >>> wall = Sandbox("/usr/bin/bwrap")
    >>> argv = wall.command(["python3", "-c", "pass"], student_file=Path("/home/s/my_init.py"),
    ...                     package_dir=Path("/opt/tinyinit"))
    >>> argv[:2], argv[-4:]
    (['/usr/bin/bwrap', '--unshare-all'], ['--', 'python3', '-c', 'pass'])
    >>> "--die-with-parent" in argv, argv[argv.index("--chdir") + 1]
    (True, '/home/s')
    """

    bwrap: str

    def command(
        self,
        python: list[str],
        *,
        student_file: Path,
        package_dir: Path,
        environment: dict[str, str] | None = None,
    ) -> list[str]:
        """`python` (an interpreter and its arguments) run inside the wall, in the folder of
        `student_file`, seeing that file, numpy and tinyinit's generator; `environment` is all
        the environment it has, with HOME and TMPDIR its scratch folder."""
        student_file = Path(student_file).resolve()
        package_dir = Path(package_dir).resolve()
        numpy_dirs = _numpy_dirs()
        args = [
            self.bwrap,
            "--unshare-all",  # user, pid, network, IPC, UTS, cgroup
            "--uid", "65534", "--gid", "65534",  # nobody
            "--cap-drop", "ALL",
            "--die-with-parent",
            "--new-session",  # no terminal to push keystrokes into
            "--proc", "/proc",
            "--dev", "/dev",
            # First, so that what is bound below shows through it even from under it.
            "--size", str(LIMITS.scratch), "--tmpfs", SCRATCH,
        ]  # fmt: skip
        args += _machine_binds()
        if _inside_any(str(package_dir), _bound_trees() + numpy_dirs):
            args += ["--tmpfs", str(package_dir)]
        for name in GENERATOR_FILES:
            file = str(package_dir / name)
            args += ["--ro-bind", file, file]
        args += ["--ro-bind", str(student_file), str(student_file)]
        args += ["--remount-ro", "/", "--chdir", str(student_file.parent)]
        environment = {
            **(environment or {}),
            "HOME": SCRATCH,
            "TMPDIR": SCRATCH,
            "PATH": "/usr/bin:/bin",
        }
        args.append("--clearenv")
        for name, value in sorted(environment.items()):
            args += ["--setenv", name, value]
        return [*args, "--", *python]


@functools.cache
def _machine_binds() -> tuple[str, ...]:
    """What every student's process sees of this machine, the same for each (worked out once
    per checker, not at each process's start): the system, the interpreter's tree, every
    site-packages in them shown empty, and numpy back on top."""
    args = _system_binds()
    for tree in _python_trees():
        args += ["--ro-bind", tree, tree]
    for folder in _site_folders():
        if _inside_any(folder, _bound_trees()):
            args += ["--tmpfs", folder]
    for folder in _numpy_dirs():
        args += ["--ro-bind", folder, folder]
    return tuple(args)


def _system_binds() -> list[str]:
    """/usr read-only, and the top-level links into it (/bin, /lib, ...) as they are here;
    the dynamic linker's cache, so that libraries are found as outside."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/", name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    if Path("/etc/ld.so.cache").is_file():
        args += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    return args


def _python_trees() -> list[str]:
    """The installation of the interpreter the student's code runs on (where not in /usr)."""
    trees = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.base_exec_prefix)}
    return sorted(t for t in trees if not _inside_any(t, ["/usr"]))


def _bound_trees() -> list[str]:
    return ["/usr", *_python_trees()]


def _site_folders() -> list[str]:
    """Folders of installed packages the interpreter knows (the base's, the system's)."""
    folders = set()
    for scheme_vars in ({"base": sys.base_prefix, "platbase": sys.base_exec_prefix}, None):
        for key in ("purelib", "platlib"):
            folders.add(sysconfig.get_path(key, vars=scheme_vars))
    folders.update(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    return sorted(os.path.realpath(f) for f in folders if f and os.path.isdir(f))


def _numpy_dirs() -> list[str]:
    """numpy's folder and, for a wheel, the folder of the libraries it bundles."""
    import numpy

    folder = Path(numpy.__file__).resolve().parent
    dirs = [str(folder)]
    libs = folder.parent / "numpy.libs"
    if libs.is_dir():
        dirs.append(str(libs))
    return dirs


def _inside_any(path: str, trees: list[str]) -> bool:
    return any(path == t or path.startswith(t.rstrip("/") + "/") for t in trees)


def python_command() -> str:
    """The interpreter itself (not a virtual environment's link to it): with -I -S it needs
    nothing of the environment, whose folder stays outside the wall.

    >>> Path(python_command()).is_file()
    True
    """
    base = getattr(sys, "_base_executable", None) or sys.executable
    return os.path.realpath(base)


@functools.cache
def find_sandbox() -> Sandbox | Unavailable:
    """bubblewrap if it is installed and can make a sandbox here, else why not.

    It is tried once per process: a Linux without unprivileged user namespaces (some
    hardened kernels, some containers) has bwrap but cannot use it.

    >>> found = find_sandbox()
    >>> bool(found) == isinstance(found, Sandbox)
    True
    """
    if not sys.platform.startswith("linux"):
        return Unavailable(f"the sandbox needs Linux (this is {sys.platform})")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Unavailable(f"bubblewrap is not installed: {INSTALL}")
    sandbox = Sandbox(bwrap)
    trial = sandbox.command(
        [python_command(), "-I", "-S", "-c", "pass"],
        student_file=Path(__file__),
        package_dir=Path(__file__).parent.parent,  # tinyinit's folder
    )
    try:
        run = subprocess.run(trial, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Unavailable(f"bubblewrap did not start ({error})")
    if run.returncode != 0:
        said = run.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"exit status {run.returncode}"
        return Unavailable(f"bubblewrap cannot make a sandbox here: {why}")
    return sandbox


PR_SET_DUMPABLE = 4  # <linux/prctl.h>


def protect_this_process() -> bool:
    """Make this process (the checker) one that no other process of its user can trace or
    read (/proc/PID/mem) or take a core dump of: prctl(PR_SET_DUMPABLE, 0), a second line
    behind the sandbox, which already hides it. True where it was done (Linux). The command
    line's check calls it; a library call of check_init leaves its caller's process as it is.

    >>> callable(protect_this_process)
    True
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False

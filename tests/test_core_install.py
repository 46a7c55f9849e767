"""`pip install tinyinit`, the core alone, as a user gets it: a fresh venv, the package built from
this checkout (not editable), no extras. The initializers' doctests pass there, the figure
command draws and the check command runs, with neither the widgets, JupyterLab nor Voila
installed.

15 s of CPU (a new venv, numpy and matplotlib from pip's cache, five short runs), a minute of
wall time on two busy cores. Marked `install`, so that `-m "not install"` leaves it out of a
quick run; `make test` runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The generator, the distributions and the initializers: the top level's modules.
DOCTESTED = ("tinyinit", "tinyinit.core.init", "tinyinit.core.pcg32", "tinyinit.core.distributions")
NOT_IN_CORE = (
    "ipywidgets",
    "ipympl",
    "ipython",
    "ipykernel",
    "jupyterlab",
    "notebook",
    "scikit-learn",
    "voila",
    "anywidget",
)
PNG = b"\x89PNG\r\n\x1a\n"

pytestmark = pytest.mark.install


def _tracked() -> list[str]:
    """This checkout's files as a release would hold them: tracked, or new and not ignored."""
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    return [f for f in listing.stdout.decode().split("\0") if f and (ROOT / f).is_file()]


@pytest.fixture(scope="module")
def core(tmp_path_factory) -> Path:
    """The Python of a fresh venv holding `pip install <this checkout>`, no extras."""
    tmp = tmp_path_factory.mktemp("core-install")
    source = tmp / "source"  # a copy: pip builds in the source tree, which must stay clean
    for name in _tracked():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    # This Python's pip installs into the new venv (--python), which saves installing pip
    # there; --no-compile leaves the .pyc files to the first import. A third of the time.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", tmp / "venv"], check=True)
    python = tmp / "venv" / "bin" / "python"
    install = _pip(python, "install", "--quiet", "--no-compile", str(source), timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    return python


def _pip(python: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`pip args...` on the venv of `python`."""
    return _run(Path(sys.executable), "-m", "pip", "--python", str(python), *args, timeout=timeout)


def _run(python: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python args...` outside this checkout, with no PYTHONPATH: the installed tinyinit only."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(python), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tempfile.gettempdir(),
        env=env,
    )


def test_the_core_install_holds_numpy_and_matplotlib_not_jupyter(core):
    listing = _pip(core, "list", "--format=json")
    installed = {p["name"].lower().replace("_", "-") for p in json.loads(listing.stdout)}
    assert {"tinyinit", "numpy", "matplotlib"} <= installed
    assert not installed & set(NOT_IN_CORE), installed & set(NOT_IN_CORE)
    where = _run(core, "-c", "import tinyinit; print(tinyinit.__file__)").stdout.strip()
    assert "site-packages" in where and not where.startswith(str(ROOT)), where


def test_the_initializers_doctests_pass_in_the_core_install(core):
    # The stdlib's doctest (pytest is not in the core), with pytest's default ELLIPSIS.
    script = (
        "import doctest, importlib, json\n"
        f"for name in {DOCTESTED!r}:\n"
        "    failed, tried = doctest.testmod(importlib.import_module(name),"
        " optionflags=doctest.ELLIPSIS)\n"
        "    print(json.dumps([name, failed, tried]))\n"
    )
    run = _run(core, "-c", script)
    assert run.returncode == 0, run.stderr
    results = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("[")]
    assert [name for name, _, _ in results] == list(DOCTESTED), run.stdout
    for name, failed, tried in results:
        assert failed == 0 and tried > 0, f"{name}: {failed} of {tried} failed\n{run.stdout}"


def test_the_figure_command_draws_in_the_core_install(core, tmp_path):
    out = tmp_path / "depth.png"
    args = ["figure", "--n-layers", "3", "--width", "8", "--seeds", "2", "-o", str(out)]
    run = _run(core, "-m", "tinyinit", *args)
    assert run.returncode == 0, run.stderr
    assert out.read_bytes()[:8] == PNG


def test_the_check_command_runs_in_the_core_install(core, tmp_path, sandbox):
    # The catalog's torch table is package data: this test reads it. The sandbox shows the
    # student's process the installed generator's files, as it does an editable install's.
    shutil.copy2(ROOT / "notebooks" / "my_init.py", tmp_path / "my_init.py")
    test = "test_fans_and_gains_match_torch"
    file = str(tmp_path / "my_init.py")
    run = _run(core, "-m", "tinyinit", "check", file, "--test", test, "--require-sandbox")
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"passed           {test}" in run.stdout
    package = Path(_run(core, "-c", "import tinyinit; print(tinyinit.__file__)").stdout).parent
    target = package / "course" / "checker.py"
    before = target.read_bytes()
    (tmp_path / "my_init.py").write_text(
        "import tinyinit.core.parallel as p\n"
        "o = getattr(p, 'o' + 's')\n"
        f"o.write(o.open({str(target)!r}, o.O_WRONLY | o.O_TRUNC), b'ok = True')\n"
    )
    run = _run(core, "-m", "tinyinit", "check", file, "--test", test, "--require-sandbox")
    assert run.returncode == 1 and "No such file or directory" in run.stdout, run.stdout  # unseen
    assert target.read_bytes() == before


def test_the_widgets_name_their_extra_in_the_core_install(core):
    explorer = _run(core, "-c", "import tinyinit.views.explorers")
    assert explorer.returncode == 1
    assert explorer.stderr.splitlines()[-1] == (
        "ModuleNotFoundError: the explorer needs ipywidgets: pip install 'tinyinit[lab]'"
    )
    present = _run(core, "-m", "tinyinit", "present", "--no-browser")
    assert present.returncode == 2
    assert present.stderr.strip() == (
        "python -m tinyinit present: error: the presentation app needs anywidget: "
        "pip install 'tinyinit[present]'"
    )
    student = _run(core, "-m", "tinyinit", "student", "course")
    assert student.returncode == 2
    assert student.stderr.strip() == (
        "python -m tinyinit student: error: the student edition needs nbformat: "
        "pip install 'tinyinit[lab]'"
    )


def test_the_wheel_holds_every_file_of_the_package(core):
    # Data read at run time (templates, tables) must be listed as package data to ship.
    where = _run(core, "-c", "import tinyinit; print(tinyinit.__file__)").stdout.strip()
    package = Path(where).parent
    shipped = {
        str(p.relative_to(package.parent))
        for p in package.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    wanted = {name for name in _tracked() if name.startswith("tinyinit/")}
    assert wanted - shipped == set(), "not in the wheel: list them under package-data"

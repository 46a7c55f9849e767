"""The course with pip alone: a wheel of this checkout installed with `[lab]` into a fresh venv,
then `python -m tinyinit student DIR`, as a student without the repository does it. The edition
it writes is the one `make student` writes, its my_init.py is "not written yet" for the check,
and its notebook 01 runs.

About 30 s of wall time: the wheel (setuptools in pip's build environment), the venv filled from
uv's cache (offline; pip's when uv is absent), and 01 run by nbclient in the venv's kernel.
Marked `install`, as tests/test_core_install.py is.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tinyinit.course import student_edition

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
FIRST = "01_variance_of_a_sum.ipynb"
# What a student edition's cell may raise before the student writes anything: an exercise
# still `raise NotImplementedError()`, its check finding no answer, the checker finding
# my_init.py's stubs (tests/test_student.py holds each notebook to the same).
UNANSWERED = ("NotImplementedError", "Unanswered", "NotWrittenYet")

pytestmark = pytest.mark.install


def _tracked() -> list[str]:
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    return [f for f in listing.stdout.decode().split("\0") if f and (ROOT / f).is_file()]


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """A command outside this checkout, with no PYTHONPATH: the installed tinyinit only."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tempfile.gettempdir(),
        env=env,
    )


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Path:
    """The Python of a fresh venv holding `pip install "<a wheel of this checkout>[lab]"`."""
    tmp = tmp_path_factory.mktemp("lab-install")
    source = tmp / "source"  # a copy: the build writes into its source tree
    for name in _tracked():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    wheel = _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", tmp, source)
    assert wheel.returncode == 0, wheel.stdout + wheel.stderr
    [built] = tmp.glob("tinyinit-*.whl")
    _run(sys.executable, "-m", "venv", "--without-pip", tmp / "venv").check_returncode()
    python = tmp / "venv" / "bin" / "python"
    wanted = f"{built}[lab]"
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if uv:  # from uv's cache, which `make .venv/.test` filled with the same packages
        install = _run(uv, "pip", "install", "--quiet", "--offline", "--python", python, wanted)
    else:
        install = _run(sys.executable, "-m", "pip", "--python", python, "install", "-q", wanted)
    assert install.returncode == 0, install.stdout + install.stderr
    return python


@pytest.fixture(scope="module")
def edition(lab, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    folder = tmp_path_factory.mktemp("course") / "my course"  # a space, as a home folder has
    return folder, _run(lab, "-m", "tinyinit", "student", folder)


def test_the_wheel_ships_the_notebooks_of_the_checkout(lab):
    where = _run(lab, "-c", "import tinyinit; print(tinyinit.__file__)").stdout.strip()
    shipped = Path(where).parent / "notebooks"
    assert "site-packages" in str(shipped), shipped
    names = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert sorted(p.name for p in shipped.glob("*.ipynb")) == names
    assert all(filecmp.cmp(NOTEBOOKS / n, shipped / n, shallow=False) for n in names)


def test_student_writes_the_edition_make_student_writes_and_says_what_next(edition, tmp_path):
    folder, run = edition
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"Open it with: jupyter lab '{folder}'" in run.stdout, run.stdout
    assert "student notebooks" in run.stdout and "my_init.py (solutions stubbed)" in run.stdout
    student_edition.make_student(NOTEBOOKS, tmp_path)  # make student's code, from the checkout
    made = sorted(p.name for p in tmp_path.iterdir())
    assert sorted(p.name for p in folder.iterdir()) == made
    beside = {p.name for p in NOTEBOOKS.glob("*.py")}  # my_init.py, and what helps run it
    assert {p.name for p in NOTEBOOKS.glob("*.ipynb")} | beside == set(made)
    assert "my_init.py" in beside
    for name in made:
        assert filecmp.cmp(folder / name, tmp_path / name, shallow=False), name


def test_the_check_says_the_editions_my_init_is_not_written_yet(lab, edition):
    folder, _ = edition
    run = _run(lab, "-m", "tinyinit", "check", folder / "my_init.py")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "my_init.py: 0 of 11 tests passed; 11 not written yet" in run.stdout, run.stdout


def test_the_editions_first_notebook_runs_in_the_venv(lab, edition):
    folder, _ = edition
    script = (
        "import sys, nbformat\n"
        "from nbclient import NotebookClient\n"
        "nb = nbformat.read(sys.argv[1], 4)\n"
        "NotebookClient(nb, timeout=600, kernel_name='python3', allow_errors=True,\n"
        "               resources={'metadata': {'path': sys.argv[2]}}).execute()\n"
        "errors = [o for c in nb.cells for o in c.get('outputs', []) if o.output_type == 'error']\n"
        "print('ran', sum(c.cell_type == 'code' for c in nb.cells), 'cells')\n"
        "for o in errors:\n"
        "    print('error', o.ename, o.evalue.splitlines()[0] if o.evalue else '')\n"
    )
    run = _run(lab, "-c", script, folder / FIRST, folder, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("ran "), run.stdout
    errors = [line.split()[1] for line in run.stdout.splitlines() if line.startswith("error ")]
    assert [e for e in errors if e not in UNANSWERED] == [], run.stdout


def test_student_never_writes_over_a_students_work(lab, tmp_path):
    folder = tmp_path / "course"
    assert _run(lab, "-m", "tinyinit", "student", folder).returncode == 0
    mine = folder / "my_init.py"
    work = mine.read_text().replace("raise NotImplementedError()", "return (3, 4)", 1)
    mine.write_text(work)
    again = _run(lab, "-m", "tinyinit", "student", folder)
    assert again.returncode == 1
    assert "already holds work of yours (my_init.py differs" in again.stderr, again.stderr
    assert "--force" in again.stderr and mine.read_text() == work
    forced = _run(lab, "-m", "tinyinit", "student", folder, "--force")
    assert forced.returncode == 0 and "return (3, 4)" not in mine.read_text()

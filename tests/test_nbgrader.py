"""nbgrader takes the teacher notebooks as they are.

A course is built in a temporary folder the way nbgrader expects it: `source/tinyinit/` holds
the teacher notebooks, unchanged, and the student's `my_init.py` with its solutions stubbed
(scripts/make_student.py). nbgrader's own `generate_assignment` must accept every notebook and
leave nothing of a solution in `release/`; `autograde` must give the teacher notebooks, submitted
as they are (with the teacher's my_init.py), full marks on each graded cell, and the student
edition, submitted unsolved, zero on each, with no error in the grader itself.

nbgrader runs as its own command, configured by an nbgrader_config.py in the course folder, with
Jupyter's config, data and runtime folders and the gradebook (SQLite) inside the temporary
folder: nothing outside it is read or written.

Autograding executes every notebook it grades, from the top, twice (teacher and student): all
twelve take 5 min 45 s on an idle 2-core machine, a third of the whole suite's budget. So
`generate_assignment` and the leak checks cover every notebook, and `autograde` the notebooks
AUTOGRADED: the core path, 01 to 04, the module a student hands in (its exercises and the
my_init.py functions its check cells grade, a point per function), and notebook 10: 1 min 20 s
on the same machine. What
autograding adds over tests/test_student.py, which runs every check of every notebook against
the stub, the teacher's answer and a typical wrong one, is nbgrader's own pipeline: the metadata
it reads, the locked cells it puts back, the execution in autograded/ and the scores. That
pipeline is the same for the going-further notebooks; a notebook whose metadata nbgrader would
not accept already fails `generate_assignment` here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook  # nbgrader is in the test extra
from scripts_loader import load_script

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
TEACHER = sorted(NOTEBOOKS.glob("*.ipynb"))
ASSIGNMENT = "tinyinit"
# The notebooks with exercises: the inventory's sittings (00, 04b) have none.
LESSONS = [p for p in TEACHER if "_inventory_" not in p.name]
AUTOGRADED = [p.stem for p in LESSONS if p.name[:2] in {"01", "02", "03", "04", "10"}]
MY_INIT = NOTEBOOKS / "my_init.py"
NOT_WRITTEN = ("NotImplementedError", "Unanswered", "NotWrittenYet")  # work not written yet


ms = load_script("make_student")
meta = load_script("nbgrader_metadata")


def nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    jupyter = course / ".jupyter"
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(jupyter / "config"),
        JUPYTER_DATA_DIR=str(jupyter / "data"),
        JUPYTER_RUNTIME_DIR=str(jupyter / "runtime"),
        # nbgrader calls the `alembic` command of its own environment to set the gradebook up
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def grader_errors(run: subprocess.CompletedProcess) -> list[str]:
    return [line for line in (run.stdout + run.stderr).splitlines() if "| ERROR]" in line]


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """The course folder after `nbgrader generate_assignment` on every teacher notebook."""
    course = tmp_path_factory.mktemp("course")
    source = course / "source" / ASSIGNMENT
    source.mkdir(parents=True)
    for path in TEACHER:
        shutil.copy2(path, source)
    stubbed = ms.student_module(MY_INIT.read_text(encoding="utf-8"))
    (source / "my_init.py").write_text(stubbed, encoding="utf-8")
    config = {
        "CourseDirectory": {
            "root": str(course),
            "course_id": ASSIGNMENT,
            "db_url": f"sqlite:///{course / 'gradebook.db'}",
        },
        # the student's my_init.py is their work: autograde must not put the stub back over it
        "Autograde": {"exclude_overwriting": {ASSIGNMENT: ["my_init.py"]}},
        "Execute": {"timeout": 600},
    }
    (course / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        + "".join(
            f"c.{section}.{key} = {value!r}\n"
            for section, values in config.items()
            for key, value in values.items()
        ),
        encoding="utf-8",
    )
    run = nbgrader(course, "generate_assignment", ASSIGNMENT)
    assert run.returncode == 0 and not grader_errors(run), run.stdout + run.stderr
    return course


def secret_lines(text_by_cell: list[str]) -> list[str]:
    """Lines of the solutions that appear nowhere else (comments and blank lines left out)."""
    given = {
        line.strip()
        for source in text_by_cell
        if ms.BEGIN not in source
        for line in source.splitlines()
    }
    given |= {
        line.strip()
        for source in text_by_cell
        for line in ms.fill_solutions(source, []).splitlines()
    }
    lines = [line.strip() for source in text_by_cell for line in ms.solution_lines(source)]
    return [line for line in lines if line and not line.startswith("#") and line not in given]


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_release_keeps_nothing_of_a_solution(course, path):
    released = course / "release" / ASSIGNMENT / path.name
    assert released.exists(), f"generate_assignment did not release {path.name}"
    text = released.read_text(encoding="utf-8")
    assert ms.BEGIN not in text and ms.END not in text
    secret = secret_lines([c.source for c in nbformat.read(path, as_version=4).cells])
    assert secret, f"{path.stem}: no solution lines found"
    kept = {
        line.strip()
        for cell in nbformat.reads(text, as_version=4).cells
        for line in cell.source.splitlines()
    }
    assert [line for line in secret if line in kept] == []


def test_release_my_init_keeps_nothing_of_a_solution(course):
    released = (course / "release" / ASSIGNMENT / "my_init.py").read_text(encoding="utf-8")
    teacher = MY_INIT.read_text(encoding="utf-8")
    assert ms.BEGIN not in released and ms.END not in released
    secret = secret_lines([teacher])
    assert secret
    assert [line for line in released.splitlines() if line.strip() in secret] == []
    assert released.count("raise NotImplementedError()") == len(ms.solution_regions(teacher))


@pytest.fixture(scope="module")
def autograded(course, tmp_path_factory) -> Path:
    """`nbgrader autograde` on two submissions of the AUTOGRADED notebooks: "teacher", the
    teacher notebooks as they are with the teacher's my_init.py, and "student", the student
    edition (scripts/make_student.py) unsolved."""
    edition = tmp_path_factory.mktemp("edition")
    ms.make_student(NOTEBOOKS, edition)
    stubbed = ms.student_module(MY_INIT.read_text(encoding="utf-8"))
    submitted = course / "submitted"
    for student, folder, my_init in [
        ("teacher", NOTEBOOKS, MY_INIT.read_text(encoding="utf-8")),
        ("student", edition, stubbed),
    ]:
        target = submitted / student / ASSIGNMENT
        target.mkdir(parents=True)
        for stem in AUTOGRADED:
            shutil.copy2(folder / f"{stem}.ipynb", target)
        (target / "my_init.py").write_text(my_init, encoding="utf-8")
    run = nbgrader(course, "autograde", ASSIGNMENT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert not grader_errors(run), "\n".join(grader_errors(run))
    return course


def grades(course: Path, student: str, stem: str) -> dict[str, tuple[float, float]]:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", ASSIGNMENT) as gb:
        notebook = gb.find_submission_notebook(stem, ASSIGNMENT, student)
        return {g.name: (g.score, g.max_score) for g in notebook.grades}


def graded_ids(stem: str) -> set[str]:
    nb = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    return {
        cell.metadata["nbgrader"]["grade_id"]
        for cell in nb.cells
        if cell.metadata.get("nbgrader", {}).get("grade")
    }


def errors_in(course: Path, student: str, stem: str) -> dict[int, str]:
    path = course / "autograded" / student / ASSIGNMENT / f"{stem}.ipynb"
    nb = nbformat.read(path, as_version=4)
    return {
        i: f"{o.ename}: {o.evalue}"
        for i, cell in enumerate(nb.cells)
        for o in cell.get("outputs", [])
        if o.output_type == "error"
    }


@pytest.mark.parametrize("stem", AUTOGRADED)
def test_teacher_notebooks_as_they_are_get_full_marks(autograded, stem):
    scores = grades(autograded, "teacher", stem)
    assert set(scores) == graded_ids(stem) and scores
    assert {name: s for name, s in scores.items() if s[0] != s[1] or s[1] <= 0} == {}
    assert errors_in(autograded, "teacher", stem) == {}


@pytest.mark.parametrize("stem", AUTOGRADED)
def test_unsolved_student_edition_gets_zero_on_each_exercise(autograded, stem):
    scores = grades(autograded, "student", stem)
    assert set(scores) == graded_ids(stem)
    assert {name: s for name, s in scores.items() if s[0] != 0} == {}
    # What fails is what the student has not written yet (an answer cell's stub, a check that
    # finds no answer, a cell calling a my_init.py function still stubbed), nothing else.
    errors = errors_in(autograded, "student", stem)
    nb = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    kept = ms.kept_cells(nb)
    unwritten = {f"cell {kept[i]}": e for i, e in errors.items() if not e.startswith(NOT_WRITTEN)}
    assert unwritten == {}, stem
    for e in ms.exercises(nb):
        assert kept.index(e.check) in errors, f"{stem} {e.name}: its check passed unanswered"


# --- the metadata nbgrader reads -----------------------------------------------------------


@pytest.mark.parametrize("path", TEACHER, ids=[p.stem for p in TEACHER])
def test_every_exercise_cell_has_its_nbgrader_metadata(path):
    nb = nbformat.read(path, as_version=4)
    lacking = meta.missing(nb)
    assert not lacking, (
        f"{path.name}: cells {lacking} lack their nbgrader metadata; "
        f"run python scripts/nbgrader_metadata.py --write {path.relative_to(ROOT)}"
    )
    for e in ms.exercises(nb):
        answer = nb.cells[e.answer].metadata["nbgrader"]
        check = nb.cells[e.check].metadata["nbgrader"]
        assert answer["solution"] and not answer["grade"], f"{path.stem} cell {e.answer}"
        assert check["grade"] and check["points"] > 0 and check["locked"], path.stem
    ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if "nbgrader" in c.metadata]
    assert len(ids) == len(set(ids)), f"{path.stem}: grade ids repeat: {ids}"


def test_metadata_script_is_idempotent_and_leaves_correct_notebooks_alone(tmp_path):
    for path in TEACHER:
        shutil.copy2(path, tmp_path)
    copies = sorted(tmp_path.glob("*.ipynb"))
    lacking = {p.name for p in copies if meta.missing(nbformat.read(p, as_version=4))}
    changed = {p.name for p in copies if meta.write(p)}
    assert changed == lacking
    after = {p: p.read_bytes() for p in copies}
    assert not any(meta.write(p) for p in copies)
    assert {p: p.read_bytes() for p in copies} == after
    for p in copies:
        nb = nbformat.read(p, as_version=4)
        assert meta.missing(nb) == []
        original = nbformat.read(NOTEBOOKS / p.name, as_version=4)
        # only nbgrader's metadata changes
        for before, cell in zip(original.cells, nb.cells, strict=True):
            assert {k: v for k, v in cell.items() if k != "metadata"} == {
                k: v for k, v in before.items() if k != "metadata"
            }
            assert {k: v for k, v in cell.metadata.items() if k != "nbgrader"} == {
                k: v for k, v in before.metadata.items() if k != "nbgrader"
            }


def test_metadata_script_on_notebooks_it_has_not_seen(tmp_path):
    v4 = nbformat.v4
    taken = {"grade": False, "grade_id": "ex1", "locked": True, "schema_version": 3}
    nb = v4.new_notebook(
        cells=[
            v4.new_code_cell("x = 1", metadata={"nbgrader": dict(taken, solution=False)}),
            v4.new_code_cell("### BEGIN SOLUTION\nanswer_1 = 1\n### END SOLUTION"),
            v4.new_code_cell('with Check("Exercise 1"):\n    check(answer_1 == 1, "one")'),
            v4.new_markdown_cell("Why?\n\n### BEGIN SOLUTION\nBecause.\n### END SOLUTION"),
            v4.new_code_cell("### BEGIN SOLUTION\nanswer_2 = 2\n### END SOLUTION"),
            v4.new_code_cell(
                'with Check("Exercise 2"):\n    check(answer_2 == 2, "two")',
                metadata={"nbgrader": {"grade": True, "grade_id": "mine", "points": 3}},
            ),
        ]
    )
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    assert meta.write(path) and not meta.write(path)
    cells = nbformat.read(path, as_version=4).cells
    got = [c.metadata.get("nbgrader", {}) for c in cells]
    assert got[0] == dict(taken, solution=False), "a cell that is no exercise is left alone"
    assert got[1]["grade_id"] == "ex1_2", "a grade id already taken is not given twice"
    assert (got[2]["grade_id"], got[2]["points"], got[2]["locked"]) == ("ex1_check", 1, True)
    assert got[3]["solution"] and got[3]["grade"] and got[3]["points"] == 1  # graded by hand
    assert (got[5]["grade_id"], got[5]["points"]) == ("mine", 3), "what a cell has is kept"
    assert got[4]["grade_id"] == "ex2" and got[4]["solution"] and not got[4]["grade"]
    empty = tmp_path / "plain.ipynb"
    nbformat.write(v4.new_notebook(cells=[v4.new_code_cell("1 + 1")]), empty)
    assert not meta.write(empty)
    broken = tmp_path / "broken.ipynb"
    nbformat.write(v4.new_notebook(cells=[nbformat.v4.new_code_cell(nb.cells[1].source)]), broken)
    with pytest.raises(ValueError, match="broken.ipynb: cell 0: an answer cell must be followed"):
        meta.write(broken)
    assert json.loads(broken.read_text(encoding="utf-8"))["cells"][0]["metadata"] == {}


def test_a_cell_requiring_the_cards_tests_is_graded_a_point_per_function_it_checks():
    v4 = nbformat.v4
    asks = v4.new_markdown_cell("Write fans and calculate_gain.")
    asks.metadata["tags"] = ["write:fans", "write:calculate_gain"]
    shown_only = v4.new_code_cell('check_init("my_init.py", tests=["test_shapes_and_dtype"])')
    required = v4.new_code_cell('check_init("my_init.py", tests=["x"]).require()')
    last = v4.new_code_cell('check_init("my_init.py").require()')
    nb = v4.new_notebook(cells=[asks, shown_only, required, last])
    expected = load_script("nbgrader_metadata").expected_metadata(nb)
    assert sorted(expected) == [2, 3]  # a report that does not require its tests grades nothing
    assert (expected[2]["grade_id"], expected[2]["points"]) == ("my_init_fans_calculate_gain", 2)
    assert (expected[3]["grade_id"], expected[3]["points"]) == ("my_init_all", 1)
    assert all(m["grade"] and m["locked"] and not m["solution"] for m in expected.values())

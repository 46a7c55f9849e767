"""Give every exercise the nbgrader cell metadata that nbgrader's own tools read.

    python scripts/nbgrader_metadata.py                  # which notebooks lack it (exit 1 if any)
    python scripts/nbgrader_metadata.py --write          # add it to notebooks/*.ipynb, in place
    python scripts/nbgrader_metadata.py --write a.ipynb  # or to the notebooks named

nbgrader's `generate_assignment` refuses a notebook whose solution region (`### BEGIN
SOLUTION` ... `### END SOLUTION`) sits in a cell without nbgrader metadata, and `autograde`
scores only the cells marked as graded. The exercises are found as scripts/make_student.py
finds them (an answer cell, then its `with Check("Exercise N"):` cell), and marked as
nbgrader's "create assignment" toolbar would mark them:

* the answer cell: an autograded answer, `{solution: true, grade: false, locked: false}`;
* its check cell: autograder tests, `{grade: true, points: 1, locked: true}` (locked: the
  grader runs the teacher's version of it, whatever a student did to it);
* a Markdown cell holding a solution region: a manually graded answer, `{solution: true,
  grade: true, points: 1}` (nbgrader accepts no other kind of Markdown answer);
* a code cell that runs the card's tests on the student's my_init.py and requires them
  (`check_init(...).require()`): autograder tests, `{grade: true, locked: true}`, worth a point
  for each function the Markdown above it asked for (its `write:NAME` tags, since the previous
  such cell), at least one.

Each gets `schema_version: 3` and a `grade_id`: the one it has, or `exN` (`exN_check` for the
check) from its exercise's number, made unique in the notebook. Points a cell already has are
kept. A notebook with no exercise is not changed, and a second run changes nothing, so the
script is safe to run on any notebook.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_VERSION = 3
POINTS = 1


def _make_student():
    if "make_student" not in sys.modules:
        path = ROOT / "scripts" / "make_student.py"
        spec = importlib.util.spec_from_file_location("make_student", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules["make_student"]


def _metadata(old: dict, grade_id: str, *, solution: bool, grade: bool, locked: bool) -> dict:
    meta = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": SCHEMA_VERSION,
        "solution": solution,
        "task": False,
    }
    if grade:
        meta["points"] = old.get("points", POINTS)
    return dict(sorted(meta.items()))


def expected_metadata(nb) -> dict[int, dict]:
    """The nbgrader metadata each exercise cell of the notebook should carry, by cell index.

    Raises ValueError (from make_student.exercises) where an answer cell has no check after it.

    >>> v4 = nbformat.v4
    >>> nb = v4.new_notebook(cells=[
    ...     v4.new_code_cell("### BEGIN SOLUTION\\nanswer_1 = 1\\n### END SOLUTION"),
    ...     v4.new_code_cell('with Check("Exercise 1"):\\n    check(answer_1 == 1, "one")'),
    ... ])
    >>> for i, meta in expected_metadata(nb).items():
    ...     print(i, meta["grade_id"], meta["solution"], meta["grade"], meta.get("points"))
    0 ex1 True False None
    1 ex1_check False True 1
    """
    ms = _make_student()
    cells = nb.cells
    taken = {c.metadata["nbgrader"].get("grade_id") for c in cells if "nbgrader" in c.metadata}

    def fresh(wanted: str) -> str:
        name, k = wanted, 2
        while name in taken:
            name, k = f"{wanted}_{k}", k + 1
        taken.add(name)
        return name

    def old(i: int) -> dict:
        return dict(cells[i].metadata.get("nbgrader", {}))

    expected = {}
    for k, exercise in enumerate(ms.exercises(nb), 1):
        digits = re.search(r"\d+", exercise.name)
        base = f"ex{digits.group() if digits else k}"
        answer, check = old(exercise.answer), old(exercise.check)
        expected[exercise.answer] = _metadata(
            answer,
            answer.get("grade_id") or fresh(base),
            solution=True,
            grade=False,
            locked=False,
        )
        expected[exercise.check] = _metadata(
            check,
            check.get("grade_id") or fresh(f"{base}_check"),
            solution=False,
            grade=True,
            locked=True,
        )
    asked: list[str] = []
    for i, cell in enumerate(cells):
        tags = cell.metadata.get("tags", [])
        asked += [t.split(":", 1)[1] for t in tags if t.startswith("write:")]
        if i not in expected and cell.cell_type == "code" and _requires_the_catalog(cell):
            meta = old(i)
            meta.setdefault("points", max(len(asked), 1))
            expected[i] = _metadata(
                meta,
                meta.get("grade_id") or fresh("my_init_" + ("_".join(asked) or "all")),
                solution=False,
                grade=True,
                locked=True,
            )
            asked = []
    for i, cell in enumerate(cells):
        if cell.cell_type == "markdown" and ms.has_solution(cell):
            meta = old(i)
            expected[i] = _metadata(
                meta,
                meta.get("grade_id") or fresh(f"answer_{i}"),
                solution=True,
                grade=True,
                locked=False,
            )
    return expected


def _requires_the_catalog(cell) -> bool:
    """A cell that runs check_init on my_init.py and fails unless its tests pass."""
    return "check_init(" in cell.source and ".require()" in cell.source


def missing(nb) -> list[int]:
    """Indices of the exercise cells whose nbgrader metadata is absent or not as expected."""
    return [
        i
        for i, meta in expected_metadata(nb).items()
        if nb.cells[i].metadata.get("nbgrader") != meta
    ]


def write(path: Path) -> bool:
    """Add the metadata to the notebook at `path`, in place; True if the file changed."""
    text = Path(path).read_text(encoding="utf-8")
    nb = nbformat.reads(text, as_version=4)
    try:
        expected = expected_metadata(nb)
    except ValueError as error:
        raise ValueError(f"{Path(path).name}: {error}") from None
    for i, meta in expected.items():
        nb.cells[i].metadata["nbgrader"] = meta
    new = nbformat.writes(nb) + "\n"
    if new == text:
        return False
    Path(path).write_text(new, encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    parser.add_argument("--write", action="store_true", help="add the metadata, in place")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    lacking = 0
    for path in paths:
        if args.write:
            if write(path):
                print(f"updated {path}")
        else:
            cells = missing(nbformat.read(path, as_version=4))
            if cells:
                lacking += 1
                print(f"{path}: cells {cells} lack their nbgrader metadata (run with --write)")
    return 1 if lacking else 0


if __name__ == "__main__":
    sys.exit(main())

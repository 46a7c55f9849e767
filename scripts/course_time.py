"""How long each notebook takes a student, estimated from what it holds, and which part it is of.

    python scripts/course_time.py            # a table of every notebook, and the core path's total

The estimate counts, at a student's pace (stated here once, used by the notebooks'
first cells, the README and the site's index):

* prose: the Markdown's words (a formula between $ signs counts as one word) at
  WORDS_PER_MINUTE;
* code: each code cell that is not an exercise or a prediction, CODE_CELL minutes
  (read it, run it, look at what it prints or draws);
* each exercise (an answer cell and its check), EXERCISE minutes: think, write, run the
  check, read the hint, try again;
* each "predict, then run" question, PREDICTION minutes;

and rounds the sum up to 5 minutes. The part: notebooks 01-04 are the core path, those after
are "going further", and an appendix says so in its name.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
WORDS_PER_MINUTE = 100
CODE_CELL = 0.75
EXERCISE = 6.0
PREDICTION = 1.5
CORE_LAST = 4  # notebooks 01 to 04
STATED = re.compile(r"estimated time:\s*(\d+)\s*minutes", re.IGNORECASE)
PART_LABEL = {"core": "Core path", "further": "Going further", "appendix": "Appendix"}


def _exercises(nb):
    path = ROOT / "scripts" / "make_student.py"
    spec = importlib.util.spec_from_file_location("make_student", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module.exercises(nb)


def counts(nb) -> dict[str, int]:
    """Words of prose, plain code cells, exercises and predictions of a notebook."""
    found = _exercises(nb)
    exercise_cells = {e.answer for e in found} | {e.check for e in found}
    words = sum(
        len(re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " x ", c.source, flags=re.S).split())
        for c in nb.cells
        if c.cell_type == "markdown"
    )
    predictions = sum(
        c.cell_type == "code" and "predict(" in c.source and i not in exercise_cells
        for i, c in enumerate(nb.cells)
    )
    code = sum(c.cell_type == "code" for c in nb.cells) - len(exercise_cells) - predictions
    return {"words": words, "code": code, "exercises": len(found), "predictions": predictions}


def estimate_minutes(nb) -> int:
    """The estimated time of a notebook, in minutes, a multiple of 5.

    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("word " * 350)])
    >>> estimate_minutes(nb)
    5
    """
    n = counts(nb)
    minutes = (
        n["words"] / WORDS_PER_MINUTE
        + n["code"] * CODE_CELL
        + n["exercises"] * EXERCISE
        + n["predictions"] * PREDICTION
    )
    return 5 * math.ceil(minutes / 5)


def part(path: Path) -> str:
    """ "core", "further" or "appendix", from the notebook's name.

    >>> [part(Path(n)) for n in ["03_a.ipynb", "07_b.ipynb", "10_appendix_c.ipynb"]]
    ['core', 'further', 'appendix']
    """
    if "appendix" in path.stem:
        return "appendix"
    number = re.match(r"(\d+)", path.name)
    return "core" if number and int(number.group(1)) <= CORE_LAST else "further"


def stated_minutes(nb) -> int | None:
    """The time the notebook's first cell states ("estimated time: 45 minutes"), or None."""
    match = STATED.search(nb.cells[0].source) if nb.cells else None
    return int(match.group(1)) if match else None


def main() -> int:
    total = 0
    print(f"{'notebook':45} {'part':9} {'words':>5} {'code':>4} {'ex.':>3} {'pred.':>5} {'min':>4}")
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        n, minutes = counts(nb), estimate_minutes(nb)
        total += minutes if part(path) == "core" else 0
        print(
            f"{path.stem:45} {part(path):9} {n['words']:5} {n['code']:4} {n['exercises']:3} "
            f"{n['predictions']:5} {minutes:4}"
        )
    print(f"core path: {total} minutes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

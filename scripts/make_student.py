"""Write the student edition: each notebook with its exercises' solutions taken out.

    python scripts/make_student.py                    # notebooks/*.ipynb -> student/
    python scripts/make_student.py --output /tmp/hw   # elsewhere

The teacher notebooks mark each answer the way nbgrader does, between the lines
`### BEGIN SOLUTION` and `### END SOLUTION`. Here, as in nbgrader's release step
(its ClearSolutions preprocessor), each such region becomes

    # YOUR CODE HERE
    raise NotImplementedError()

at the region's indentation (in Markdown: YOUR ANSWER HERE). The outputs of the
exercise cells (the answer cells, and the check cell after each, which would show
the answer's value) are cleared; every other cell is kept with its stored outputs,
so a student reads the plots before running anything.

An exercise is an answer cell followed by its check: the next code cell, which
runs `with Check("Exercise N"):` from tinyinit.quiz.
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
CODE_STUB = ["# YOUR CODE HERE", "raise NotImplementedError()"]
MARKDOWN_STUB = ["YOUR ANSWER HERE"]
CHECK_NAME = re.compile(r"""\bCheck\(\s*["']([^"']+)["']""")


@dataclass(frozen=True)
class Exercise:
    """One exercise of a notebook: its name, its answer cell and its check cell (indices)."""

    name: str
    answer: int
    check: int


def has_solution(cell) -> bool:
    return BEGIN in cell.source


def solution_regions(source: str) -> list[tuple[int, int]]:
    """(begin, end) line numbers of each marked region, markers included.

    >>> solution_regions("x = 1\\n### BEGIN SOLUTION\\ny = 2\\n### END SOLUTION")
    [(1, 3)]
    """
    regions, begin = [], None
    for number, line in enumerate(source.splitlines()):
        if line.strip() == BEGIN:
            if begin is not None:
                raise ValueError(f"line {number + 1}: {BEGIN} inside a solution region")
            begin = number
        elif line.strip() == END:
            if begin is None:
                raise ValueError(f"line {number + 1}: {END} without {BEGIN}")
            regions.append((begin, number))
            begin = None
    if begin is not None:
        raise ValueError(f"line {begin + 1}: {BEGIN} without {END}")
    return regions


def fill_solutions(source: str, replacement: list[str]) -> str:
    """The source with each solution region (markers included) replaced by `replacement`,
    indented like the region's BEGIN marker.

    >>> body = "    ### BEGIN SOLUTION\\n    return 1\\n    ### END SOLUTION"
    >>> print(fill_solutions("def f():\\n" + body, CODE_STUB))
    def f():
        # YOUR CODE HERE
        raise NotImplementedError()
    """
    lines = source.splitlines()
    for begin, end in reversed(solution_regions(source)):
        indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
        lines[begin : end + 1] = [indent + r if r else r for r in replacement]
    return "\n".join(lines)


def solution_lines(source: str) -> list[str]:
    """The lines inside the solution regions (markers excluded)."""
    lines = source.splitlines()
    return [line for b, e in solution_regions(source) for line in lines[b + 1 : e]]


def exercises(nb) -> list[Exercise]:
    """The notebook's exercises in order: each answer cell and the check cell after it.

    Raises ValueError where an answer cell is not followed by a check cell.
    """
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not has_solution(cell):
            continue
        later = range(i + 1, len(nb.cells))
        after = next((j for j in later if nb.cells[j].cell_type == "code"), None)
        name = CHECK_NAME.search(nb.cells[after].source) if after is not None else None
        if name is None:
            raise ValueError(
                f"cell {i}: an answer cell must be followed by a check cell "
                '(`with Check("Exercise N"):`), got '
                f"{nb.cells[after].source[:60]!r}"
                if after is not None
                else f"cell {i}: an answer cell must be followed by a check cell, got none"
            )
        found.append(Exercise(name.group(1), i, after))
    return found


def student_notebook(nb):
    """A copy of the teacher notebook as a student receives it."""
    nb = copy.deepcopy(nb)
    found = exercises(nb)
    exercise_cells = {e.answer for e in found} | {e.check for e in found}
    for i, cell in enumerate(nb.cells):
        if has_solution(cell):
            stub = CODE_STUB if cell.cell_type == "code" else MARKDOWN_STUB
            cell.source = fill_solutions(cell.source, stub)
        if i in exercise_cells:
            cell.outputs = []
            cell.execution_count = None
    return nb


def make_student(notebooks: Path, output: Path) -> list[Path]:
    """Write the student edition of notebooks/*.ipynb into output/; return the files written."""
    sources = sorted(Path(notebooks).glob("*.ipynb"))
    if not sources:
        raise FileNotFoundError(f"no notebooks (*.ipynb) in {notebooks}")
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    written = []
    for source in sources:
        try:
            student = student_notebook(nbformat.read(source, as_version=4))
        except ValueError as error:
            raise ValueError(f"{source.name}: {error}") from None
        nbformat.write(student, output / source.name)
        written.append(output / source.name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--notebooks", type=Path, default=ROOT / "notebooks", help="folder of teacher notebooks"
    )
    parser.add_argument("--output", type=Path, default=ROOT / "student", help="folder to write")
    args = parser.parse_args(argv)
    written = make_student(args.notebooks, args.output)
    count = sum(len(exercises(nbformat.read(args.notebooks / p.name, 4))) for p in written)
    print(f"wrote {len(written)} student notebooks ({count} exercises) to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

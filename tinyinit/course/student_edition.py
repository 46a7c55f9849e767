"""The student edition: each notebook with its exercises' solutions taken out.

    python -m tinyinit student DIR           # a student, from the installed package
    make student                             # the repository: notebooks/ -> student/

Both write the edition of the course's notebooks (`course_notebooks`: notebooks/ of the
checkout, or the copy the package ships) with `make_student`.

The teacher notebooks mark each answer the way nbgrader does, between the lines
`### BEGIN SOLUTION` and `### END SOLUTION`. Here, as in nbgrader's release step
(its ClearSolutions preprocessor), each such region becomes

    # YOUR CODE HERE
    raise NotImplementedError()

at the region's indentation (in Markdown: YOUR ANSWER HERE). The Python files beside
the notebooks (the teacher's `my_init.py`, which holds the solutions of the functions a
student writes) are written the same way: each region stubbed, the docstrings and
everything else kept, so the edition's `my_init.py` is the file the student fills in.

What a student must not read before answering is taken out too:

* cells tagged `teacher` (cell metadata `tags`) are dropped: Markdown meant for the
  teacher only, such as a note that this copy holds the solutions;
* the outputs of the exercise cells (the answer cells, and the check cell after each,
  which would show the answer's value) are cleared, and so are those of the cells that
  answer a prediction: cells tagged `measured` (a measurement printed right after its
  question) and cells that call `.reveal(`. The stored widget models only those outputs
  showed go too, so the answer is not left in the notebook's widget state;
* the outputs of every cell that runs the student's my_init.py are cleared: what they
  stored is what the teacher's solutions did, not what the student's stubs do. Those are
  the cells tagged `yours` (an experiment drawn with the student's functions) and the
  cells that call `check_init(` or `yours(` or import my_init.

Every other cell is kept with its stored outputs, so a student reads the plots that do not
depend on their file before running anything.

An exercise is an answer cell followed by its check: the next code cell, which
runs `with Check("Exercise N"):` from tinyinit.course.quiz.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path

from .._extras import extra

with extra("lab", "the student edition"):
    import nbformat

PACKAGE = Path(__file__).resolve().parent.parent
BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
CODE_STUB = ["# YOUR CODE HERE", "raise NotImplementedError()"]
MARKDOWN_STUB = ["YOUR ANSWER HERE"]
CHECK_NAME = re.compile(r"""\bCheck\(\s*["']([^"']+)["']""")
TEACHER_TAG = "teacher"  # a cell only the teacher's copy keeps
MEASURED_TAG = "measured"  # a cell whose output answers a prediction
REVEAL_CALL = re.compile(r"\.reveal\(")
YOURS_TAG = "yours"  # a cell whose output comes from the student's my_init.py
RUNS_MY_INIT = re.compile(r"\bcheck_init\(|\byours\(|\bimport my_init\b|\bfrom my_init import\b")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
MODEL_REF = re.compile(r"IPY_MODEL_([0-9a-f]{32})")


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


def tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def answers_a_prediction(cell) -> bool:
    """A cell whose stored output gives a prediction's answer away: tagged `measured`, or a
    code cell calling `.reveal(`."""
    return MEASURED_TAG in tags(cell) or (
        cell.cell_type == "code" and bool(REVEAL_CALL.search(cell.source))
    )


def runs_my_init(cell) -> bool:
    """A code cell whose output comes from the student's my_init.py: tagged `yours`, or
    calling the checker (`check_init(`, `yours(`) or importing the file."""
    return cell.cell_type == "code" and (
        YOURS_TAG in tags(cell) or bool(RUNS_MY_INIT.search(cell.source))
    )


def _widget_models(outputs, state: dict) -> set[str]:
    """The widget models these outputs show, and every model they refer to."""
    views = [o["data"][WIDGET_VIEW] for o in outputs if WIDGET_VIEW in o.get("data", {})]
    stack = [view["model_id"] for view in views]
    seen: set[str] = set()
    while stack:
        model = stack.pop()
        if model not in seen:
            seen.add(model)
            stack += MODEL_REF.findall(json.dumps(state.get(model, {})))
    return seen


def kept_cells(nb) -> list[int]:
    """The index, in the teacher notebook, of each cell the student edition keeps (in order)."""
    return [i for i, cell in enumerate(nb.cells) if TEACHER_TAG not in tags(cell)]


def student_notebook(nb):
    """A copy of the teacher notebook as a student receives it."""
    nb = copy.deepcopy(nb)
    found = exercises(nb)
    exercise_cells = {e.answer for e in found} | {e.check for e in found}
    cleared = []
    for i, cell in enumerate(nb.cells):
        if has_solution(cell):
            stub = CODE_STUB if cell.cell_type == "code" else MARKDOWN_STUB
            cell.source = fill_solutions(cell.source, stub)
        cleared_cell = i in exercise_cells or answers_a_prediction(cell) or runs_my_init(cell)
        if cell.cell_type == "code" and cleared_cell:
            cleared += cell.outputs
            cell.outputs = []
            cell.execution_count = None
    kept = kept_cells(nb)
    cleared += [o for i, c in enumerate(nb.cells) if i not in kept for o in c.get("outputs", [])]
    nb.cells = [nb.cells[i] for i in kept]
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state")
    if state and cleared:
        shown = _widget_models([o for c in nb.cells for o in c.get("outputs", [])], state)
        for model in _widget_models(cleared, state) - shown:
            state.pop(model, None)
    return nb


def student_module(source: str) -> str:
    """A Python file as a student receives it: each solution region stubbed, the rest kept.

    >>> teacher = "def f(x):\\n    ### BEGIN SOLUTION\\n    return 2 * x\\n    ### END SOLUTION\\n"
    >>> print(student_module(teacher), end="")
    def f(x):
        # YOUR CODE HERE
        raise NotImplementedError()
    """
    stubbed = fill_solutions(source, CODE_STUB)
    return stubbed + "\n" if source.endswith("\n") else stubbed


def course_notebooks() -> Path:
    """The folder of the teacher notebooks the edition is written from: the copy a wheel of
    the package ships (tinyinit/notebooks, pyproject.toml's package data), else notebooks/
    of the checkout the package runs from. Both are the repository's notebooks/."""
    for folder in (PACKAGE / "notebooks", PACKAGE.parent / "notebooks"):
        if any(folder.glob("*.ipynb")):
            return folder
    raise FileNotFoundError(
        f"no course notebooks beside the package: neither {PACKAGE / 'notebooks'} nor "
        f"{PACKAGE.parent / 'notebooks'} holds a .ipynb; reinstall tinyinit"
    )


class WouldOverwrite(FileExistsError):
    """The output folder holds a student's work: files that differ from a fresh edition."""

    def __init__(self, output: Path, changed: list[str]):
        self.output, self.changed = output, changed
        verb = "differs" if len(changed) == 1 else "differ"
        super().__init__(
            f"{output} already holds work of yours ({', '.join(changed)} {verb} from a fresh "
            "edition); nothing was written"
        )


def _notebook_text(nb) -> str:
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"  # as nbformat.write writes it


def make_student(notebooks: Path, output: Path, *, force: bool = False) -> list[Path]:
    """Write the student edition of notebooks/*.ipynb, and of the Python files beside them
    (my_init.py), into output/; return the files written.

    A file already in output/ that differs from the fresh edition is a student's work (their
    my_init.py, their answers): nothing is written then, and WouldOverwrite names the files,
    unless `force`. Writing the edition again over an untouched one changes nothing.
    """
    notebooks = Path(notebooks)
    sources = sorted(notebooks.glob("*.ipynb"))
    if not sources:
        raise FileNotFoundError(f"no notebooks (*.ipynb) in {notebooks}")
    output = Path(output)
    if output.exists() and not output.is_dir():
        raise NotADirectoryError(f"{str(output)!r} is a file, not a folder to write into")
    texts = {}
    for source in sources:
        try:
            texts[output / source.name] = _notebook_text(
                student_notebook(nbformat.read(source, as_version=4))
            )
        except ValueError as error:
            raise ValueError(f"{source.name}: {error}") from None
    for source in sorted(notebooks.glob("*.py")):
        try:
            texts[output / source.name] = student_module(source.read_text(encoding="utf-8"))
        except ValueError as error:
            raise ValueError(f"{source.name}: {error}") from None
    changed = [
        path.name
        for path, text in texts.items()
        if path.is_file() and path.read_text(encoding="utf-8") != text
    ]
    if changed and not force:
        raise WouldOverwrite(output, changed)
    output.mkdir(parents=True, exist_ok=True)
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")
    return list(texts)


def edition_summary(notebooks: Path, output: Path, written: list[Path]) -> str:
    """One line on what `make_student` wrote: the notebooks, their exercises, the other files.

    >>> edition_summary(course_notebooks(), Path("hw"), [Path("hw/my_init.py")])
    'wrote 0 student notebooks (0 exercises) and my_init.py (solutions stubbed) to hw'
    """
    books = [p for p in written if p.suffix == ".ipynb"]
    count = sum(len(exercises(nbformat.read(Path(notebooks) / p.name, 4))) for p in books)
    files = [p.name for p in written if p.suffix != ".ipynb"]
    also = f" and {', '.join(files)} (solutions stubbed)" if files else ""
    return f"wrote {len(books)} student notebooks ({count} exercises){also} to {output}"

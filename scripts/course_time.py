"""How long each notebook takes a student, estimated from what it holds, and which part it is of.

    python scripts/course_time.py            # a table of every notebook, and the core path's total
    python scripts/course_time.py --write    # put the estimates into the notebooks and their page

The estimate counts, at a student's pace (stated here once; the notebooks' first cells, the
page of the notebooks, docs/teaching/notebooks.md, and the site's index state what it gives,
and tests/test_course.py keeps them in step):

* prose: the words of the Markdown at WORDS_PER_MINUTE. A word is a whitespace-separated
  piece holding a letter or a digit (so `#`, `|` or `—` alone are not words). A formula
  (between `$` or `$$`) is read slower than prose, so it counts its tokens: each name,
  number and LaTeX command, split on whitespace, operators and brackets, leaving out the
  commands that only lay it out (`\\mathrm`, `\\left`, ...): `$\\mathrm{Var}(z) = n\\sigma^2$`
  is 5 words (Var, z, n, \\sigma, 2);
* code: the words of every code cell as the student edition shows it (an exercise's answer
  stubbed, its check, a prediction's question, a plot's code), at WORDS_PER_MINUTE too: a word
  of code is a whitespace-separated piece holding a letter or a digit, so a line
  `ax.set(xlabel="layer")` is one word and `x = f(a, b)` three; read at the pace of prose, and no
  time of its own for running the cell and looking at what it prints or draws;
* exercises, EXERCISE minutes each (think, write, run the check, read the hint, try again):
  each answer cell with nbgrader's solution markers and its check, and each function of the
  student's `my_init.py` that the notebook asks for, named by a Markdown cell's tag
  `write:NAME`;
* each "predict, then run" question (a code cell calling `predict(` or `predict_number(`),
  PREDICTION minutes;

and rounds the sum up to 5 minutes. Markdown a student never sees (cells tagged `teacher`,
which the student edition drops) is not counted.

The concept inventory's two sittings (notebooks named `NN_inventory_...`, one before 01 and one
after 04) are read on the core path but counted apart from it: each fits SITTING_BUDGET
minutes, and their time is not in the core path's. A sitting's prose is its Markdown and the
words of the items it shows (each `sitting(` call shows every item's question and choices,
from tinyinit.course.inventory); the answers and explanations the second sitting shows once
submitted are read after it, at the student's pace, and are not counted.

The part, from the notebook's name: 01-04 (and the sittings before and after them) are the
core path, a notebook whose name says `appendix` is the appendix, every other one goes further.
The reading order is by part (core, going further, appendix), then by number, so a
going-further notebook numbered after the appendix is still read before it. The core path
fits the module's CORE_BUDGET minutes.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
WORDS_PER_MINUTE = 60
EXERCISE = 8.0
PREDICTION = 2.0
CORE_LAST = 4  # notebooks 01 to 04
CORE_BUDGET = 180  # minutes: the module is 2 to 3 hours
PARTS = ("core", "further", "appendix")  # in reading order
PART_LABEL = {"core": "Core path", "further": "Going further", "appendix": "Appendix"}
STATED = re.compile(r"(estimated time:\s*)(\d+)(\s*minutes)", re.IGNORECASE)
# The page that lists the notebooks with their times (docs/teaching/notebooks.md).
PAGE = ROOT / "docs" / "teaching" / "notebooks.md"
STATED_TOTAL = re.compile(r"(Estimated time of the core path: )(\d+)( minutes)")
FORMULA = re.compile(r"\$\$.*?\$\$|\$[^$]*\$", re.S)
FORMULA_TOKEN = re.compile(r"\\[A-Za-z]+|[A-Za-z]+|\d+(?:\.\d+)?")
LAYOUT_COMMANDS = {
    r"\begin", r"\end", r"\left", r"\right", r"\big", r"\Big", r"\bigg", r"\Bigg",
    r"\mathrm", r"\mathbf", r"\mathbb", r"\mathcal", r"\mathit", r"\boldsymbol",
    r"\operatorname", r"\text", r"\textrm", r"\displaystyle", r"\quad", r"\qquad",
}  # fmt: skip
PREDICTION_CALL = re.compile(r"\bpredict(?:_number)?\(")
SITTING_NAME = "_inventory_"  # a sitting of the concept inventory: 00_inventory_..., 04b_...
SITTING_CALL = re.compile(r"\bsitting\(")
SITTING_BUDGET = 10  # minutes, each sitting, outside the core path's CORE_BUDGET
SITTING_LABEL = "Concept inventory"
WRITE_TAG = "write:"
TEACHER_TAG = "teacher"


def _make_student():
    path = ROOT / "scripts" / "make_student.py"
    if "make_student" not in sys.modules:
        spec = importlib.util.spec_from_file_location("make_student", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules["make_student"]


def words(markdown: str) -> int:
    """Words of a Markdown text, a formula counted by its tokens (see the module's docstring).

    >>> words("The variance $\\\\mathrm{Var}(z) = n\\\\sigma^2$ grows, | see #")
    9
    """
    tokens = sum(
        token not in LAYOUT_COMMANDS
        for formula in FORMULA.findall(markdown)
        for token in FORMULA_TOKEN.findall(formula)
    )
    prose = FORMULA.sub(" ", markdown).split()
    return tokens + sum(any(ch.isalnum() for ch in piece) for piece in prose)


def tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def functions_to_write(nb) -> list[str]:
    """The functions of my_init.py the notebook asks for: its Markdown cells' `write:NAME` tags.

    >>> cell = nbformat.v4.new_markdown_cell("Write fans.", metadata={"tags": ["write:fans"]})
    >>> functions_to_write(nbformat.v4.new_notebook(cells=[cell]))
    ['fans']
    """
    names = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for tag in tags(cell):
                name = tag[len(WRITE_TAG) :]
                if tag.startswith(WRITE_TAG) and name and name not in names:
                    names.append(name)
    return names


def code_words(source: str) -> int:
    """Words of a code cell: whitespace-separated pieces holding a letter or a digit.

    >>> code_words('ax.set(xlabel="layer")  # one word\\nx = f(a, b)')
    6
    """
    return sum(any(ch.isalnum() for ch in piece) for piece in source.split())


def is_sitting(path: Path) -> bool:
    """Whether the notebook is a sitting of the concept inventory, from its name.

    >>> [is_sitting(Path(n)) for n in ["00_inventory_before.ipynb", "01_variance.ipynb"]]
    [True, False]
    """
    return SITTING_NAME in Path(path).name


def inventory_words() -> int:
    """The words a sitting shows: every item's question and its choices."""
    from tinyinit.course.inventory import ITEMS

    return sum(words(item.stem) + sum(map(words, item.choices.values())) for item in ITEMS)


def counts(nb) -> dict[str, int]:
    """Words of prose (a sitting's items too) and of code as the student edition shows them,
    exercises and predictions of a notebook."""
    found = _make_student().exercises(nb)
    exercise_cells = {e.answer for e in found} | {e.check for e in found}
    prose = sum(
        words(c.source)
        for c in nb.cells
        if c.cell_type == "markdown" and TEACHER_TAG not in tags(c)
    )
    sittings = sum(
        c.cell_type == "code" and TEACHER_TAG not in tags(c) and bool(SITTING_CALL.search(c.source))
        for c in nb.cells
    )
    if sittings:
        prose += sittings * inventory_words()
    predictions = sum(
        c.cell_type == "code" and bool(PREDICTION_CALL.search(c.source)) and i not in exercise_cells
        for i, c in enumerate(nb.cells)
    )
    shown = _make_student().student_notebook(nb).cells
    return {
        "words": prose,
        "code": sum(code_words(c.source) for c in shown if c.cell_type == "code"),
        "exercises": len(found) + len(functions_to_write(nb)),
        "predictions": predictions,
    }


def estimate_minutes(nb) -> int:
    """The estimated time of a notebook, in minutes, a multiple of 5.

    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("word " * 290)])
    >>> estimate_minutes(nb)
    5
    """
    n = counts(nb)
    minutes = (
        (n["words"] + n["code"]) / WORDS_PER_MINUTE
        + n["exercises"] * EXERCISE
        + n["predictions"] * PREDICTION
    )
    return 5 * math.ceil(minutes / 5)


def number(path: Path) -> int | None:
    match = re.match(r"(\d+)", Path(path).name)
    return int(match.group(1)) if match else None


def part(path: Path) -> str:
    """ "core", "further" or "appendix", from the notebook's name.

    >>> [part(Path(n)) for n in ["03_a.ipynb", "07_b.ipynb", "10_appendix_c.ipynb", "11_d.ipynb"]]
    ['core', 'further', 'appendix', 'further']
    """
    if "appendix" in Path(path).stem:
        return "appendix"
    n = number(path)
    return "core" if n is not None and n <= CORE_LAST else "further"


def reading_order(paths) -> list[Path]:
    """The notebooks as a student reads them: by part (core, going further, appendix), then
    by number (2 before 10), unnumbered ones last in their part.

    >>> [p.name for p in reading_order(map(Path, ["11_d.ipynb", "10_appendix.ipynb", "2_a.ipynb"]))]
    ['2_a.ipynb', '11_d.ipynb', '10_appendix.ipynb']
    """

    def key(path: Path):
        n = number(path)
        return (PARTS.index(part(path)), n is None, n or 0, path.name)

    return sorted((Path(p) for p in paths), key=key)


def stated_minutes(nb) -> int | None:
    """The time the notebook's first cell states ("estimated time: 45 minutes"), or None."""
    match = STATED.search(nb.cells[0].source) if nb.cells else None
    return int(match.group(2)) if match else None


def notebooks(folder: Path = ROOT / "notebooks") -> list[Path]:
    return reading_order(Path(folder).glob("*.ipynb"))


def estimates(paths) -> dict[Path, int]:
    return {p: estimate_minutes(nbformat.read(p, as_version=4)) for p in paths}


def core_minutes(minutes: dict[Path, int]) -> int:
    """The core path's minutes: its notebooks', the inventory's sittings left out."""
    return sum(m for p, m in minutes.items() if part(p) == "core" and not is_sitting(p))


def write_notebook(path: Path, minutes: int) -> bool:
    """Put `minutes` into the notebook's first cell; True if the file changed.

    Raises ValueError when the first cell states no "estimated time: N minutes".
    """
    text = Path(path).read_text(encoding="utf-8")
    nb = nbformat.reads(text, as_version=4)
    if stated_minutes(nb) is None:
        raise ValueError(f"{Path(path).name}: the first cell states no 'Estimated time: N minutes'")
    nb.cells[0].source = STATED.sub(rf"\g<1>{minutes}\g<3>", nb.cells[0].source, count=1)
    new = nbformat.writes(nb) + "\n"
    if new == text:
        return False
    Path(path).write_text(new, encoding="utf-8")
    return True


def write_page(page: Path, minutes: dict[Path, int]) -> bool:
    """Put each notebook's time into its row of the page of the notebooks (`| NN min |`, the
    row that links notebooks/NAME.ipynb) and the core path's total into "Estimated time of
    the core path: N minutes"; True if the file changed.

    Raises ValueError naming a notebook that has no row, or a page without the total.
    """
    text = Path(page).read_text(encoding="utf-8")
    lines = text.split("\n")
    for path, m in minutes.items():
        link = f"notebooks/{path.name}"
        row = re.compile(rf"\]\((?:\.\./)*{re.escape(link)}\)")
        rows = [i for i, line in enumerate(lines) if line.startswith("|") and row.search(line)]
        if not rows:
            raise ValueError(f"{Path(page).name}: no table row links {link}")
        for i in rows:
            lines[i] = re.sub(r"\|\s*\d+ min\s*\|", f"| {m} min |", lines[i], count=1)
    new, found = STATED_TOTAL.subn(rf"\g<1>{core_minutes(minutes)}\g<3>", "\n".join(lines))
    if not found:
        raise ValueError(f"{Path(page).name}: no 'Estimated time of the core path: N minutes'")
    if new == text:
        return False
    Path(page).write_text(new, encoding="utf-8")
    return True


def write(folder: Path = ROOT / "notebooks", page: Path = PAGE) -> list[Path]:
    """Bring every notebook's first cell and the page of the notebooks in step with the
    estimates; return the files changed. Running it twice changes nothing the second time."""
    minutes = estimates(notebooks(folder))
    changed = [p for p, m in minutes.items() if write_notebook(p, m)]
    return changed + ([Path(page)] if write_page(page, minutes) else [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebooks", type=Path, default=ROOT / "notebooks")
    parser.add_argument("--page", type=Path, default=PAGE, help="the page of the notebooks")
    parser.add_argument(
        "--write",
        action="store_true",
        help="rewrite each notebook's first-cell 'Estimated time' and their page's times",
    )
    args = parser.parse_args(argv)
    if args.write:
        for path in write(args.notebooks, args.page):
            print(f"updated {path}")
    paths = notebooks(args.notebooks)
    minutes = estimates(paths)
    print(f"{'notebook':45} {'part':9} {'words':>5} {'code':>5} {'ex.':>3} {'pred.':>5} {'min':>4}")
    for path in paths:
        n = counts(nbformat.read(path, as_version=4))
        shown = "inventory" if is_sitting(path) else part(path)
        print(
            f"{path.stem:45} {shown:9} {n['words']:5} {n['code']:5} {n['exercises']:3} "
            f"{n['predictions']:5} {minutes[path]:4}"
        )
    total = core_minutes(minutes)
    print(f"core path: {total} minutes (budget {CORE_BUDGET})")
    sittings = [f"{p.stem[:3].rstrip('_')} {m}" for p, m in minutes.items() if is_sitting(p)]
    if sittings:
        print(
            f"inventory sittings, outside it: {', '.join(sittings)} minutes "
            f"(budget {SITTING_BUDGET} each)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

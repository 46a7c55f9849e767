"""Grading a class: the card's eleven tests on every student's my_init.py, in the sandbox.

    python -m tinyinit grade submitted/ --out grades/

SUBMISSIONS is nbgrader's `submitted/` folder (`STUDENT/ASSIGNMENT/my_init.py`), a folder of
folders (`STUDENT/my_init.py`), of files (`STUDENT.py`), or of the zips students pack with
`python -m tinyinit submit` (`STUDENT.zip`, `tinyinit.course.handin`). Each submission is checked
as `python -m tinyinit check --require-sandbox` checks it (`tinyinit.course.checker.check_init` with
the sandbox required), several at once on a machine with several cores, and the class's
results are written to DIR:

* `grades.csv`: one row per student: the tests passed of eleven, the verdict, the card's
  pitfalls named, the first test not passed, and why a submission could not be run;
* `feedback/STUDENT.txt`: the report that student would have seen;
* `report.html`, with its figures beside it as PNG files with text alternatives: the class's
  pass rate per test, the pitfalls hit and by how many, the distribution of scores.

A submission that is missing, empty, not Python, a syntax error, hostile or endless is a row
with its reason; it never stops the others or changes their verdicts (each runs in its own
sandbox). Running again on the same folder writes the same files (but for the line an endless
loop of several lines happened to be on when it was stopped).

>>> row = Row("ada", passed=11, tests=11, verdict=PASS)
>>> row.csv()["verdict"], row.csv()["passed"]
('pass', '11')
"""

from __future__ import annotations

import csv
import html
import io
import os
import sys
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from multiprocessing import get_context
from pathlib import Path
from typing import TextIO

from ..core.arguments import instance, integer
from ..core.parallel import usable_cpus
from .catalog import NAMES
from .checker import DEFAULT_TIMEOUT, PASSED, UnreadableFile, check_init
from .handin import unpack
from .inventory import (
    FILE,
    ITEMS,
    MISCONCEPTIONS,
    InventoryError,
    class_statistics,
    read_answers,
    score,
)
from .pitfalls import CARD_PITFALLS, PITFALLS

__all__ = ["COLUMNS", "Row", "find_submissions", "grade_class", "grade_one", "inventory_of"]

# The verdicts: every test passed; some did not; the file could not be run (missing,
# unreadable, a syntax error, an import that raised or never ended), the reason beside it.
PASS, FAIL, UNCHECKED = "pass", "fail", "not run"
COLUMNS = (
    "student", "passed", "tests", "verdict", "pitfalls", "first_not_passed", "reason",
    "inventory_pre", "inventory_post",
)  # fmt: skip
SOLUTION = "my_init.py"


@dataclass(frozen=True)
class Row:
    """One student's line of grades.csv, and the report they would have seen.

    >>> Row("bob", passed=8, verdict=FAIL, pitfalls=("s01", "s03")).csv()["pitfalls"]
    's01 s03'
    """

    student: str
    passed: int = 0
    tests: int = len(NAMES)
    verdict: str = UNCHECKED
    pitfalls: tuple[str, ...] = ()
    first_not_passed: str = ""
    reason: str = ""
    feedback: str = field(default="", compare=False)
    statuses: dict = field(default_factory=dict, compare=False)  # test -> status
    # The concept inventory's answers ({"pre": {...}, "post": {...}}), or why they were left out.
    inventory: dict = field(default_factory=dict, compare=False)
    inventory_problem: str = field(default="", compare=False)

    def csv(self) -> dict[str, str]:
        """The row as grades.csv holds it (text; the pitfalls joined by spaces; the concept
        inventory's scores in percent, empty where not sat)."""
        values = asdict(self)
        values["pitfalls"] = " ".join(self.pitfalls)
        for sitting in ("pre", "post"):
            answers = self.inventory.get(sitting)
            values[f"inventory_{sitting}"] = f"{score(answers):.0f}" if answers else ""
        return {key: str(values[key]) for key in COLUMNS}


def find_submissions(folder) -> dict[str, Path | None]:
    """Each student's my_init.py (None where their folder holds none), by student name.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for where in ("ada/ps1/my_init.py", "bob/ps1/notes.txt", "cy.py"):
    ...     (root / where).parent.mkdir(parents=True, exist_ok=True)
    ...     _ = (root / where).write_text("")
    >>> {name: path and path.relative_to(root).as_posix()
    ...  for name, path in find_submissions(root).items()}
    {'ada': 'ada/ps1/my_init.py', 'bob': None, 'cy': 'cy.py'}
    """
    root = Path(instance("submissions", folder, (str, os.PathLike), "a folder"))
    if not root.is_dir():
        raise UnreadableFile(f"submissions {str(folder)!r} is not a folder of submissions")
    found: dict[str, Path | None] = {}
    for entry in sorted(root.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            files = sorted(entry.rglob(SOLUTION))  # STUDENT/my_init.py or STUDENT/ASSIGNMENT/...
            found[entry.name] = files[0] if files else None
        elif entry.suffix in (".py", ".zip"):  # a zip: what `python -m tinyinit submit` packs
            found[entry.stem] = entry
    return found


def grade_one(student: str, path: Path | None, timeout: float = DEFAULT_TIMEOUT) -> Row:
    """One submission checked in the sandbox (SandboxUnavailable where none can be made),
    with the concept inventory's answers found beside it (`inventory_of`).

    >>> row = grade_one("cy", None)
    >>> row.verdict, row.reason
    ('not run', 'no my_init.py in the submission')
    """
    if path is not None and path.suffix == ".zip":
        with tempfile.TemporaryDirectory() as folder:
            return grade_one(student, unpack(path, Path(folder) / student), timeout)
    row = _check_one(student, path, timeout)
    answers, problem = inventory_of(student, path)
    return replace(row, inventory=answers, inventory_problem=problem)


def _check_one(student: str, path: Path | None, timeout: float) -> Row:
    if path is None:
        return Row(student, reason=f"no {SOLUTION} in the submission")
    try:
        report = check_init(path, timeout=timeout, sandbox=True)
    except UnreadableFile as error:
        return Row(student, reason=str(error).replace(str(path), path.name))
    if report.problem is not None:
        first_line = report.problem.strip().splitlines()[0]
        return Row(student, reason=first_line, feedback=str(report))
    passed = sum(r.passed for r in report.results)
    pitfalls = sorted({p["id"] for r in report.results for p in r.pitfalls})
    first = next((r.test for r in report.results if not r.passed), "")
    return Row(
        student,
        passed=passed,
        tests=len(report.results),
        verdict=PASS if report.ok else FAIL,
        pitfalls=tuple(pitfalls),
        first_not_passed=first,
        feedback=str(report),
        statuses={r.test: r.status for r in report.results},
    )


def inventory_of(student: str, path: Path | None) -> tuple[dict, str]:
    """The concept inventory's answers handed in with a submission, and what was wrong with
    them ("" when nothing was): `inventory.json` beside my_init.py, or STUDENT.json beside a
    STUDENT.py. A partial or malformed file is left out, its problem said.

    >>> inventory_of("cy", None)
    ({}, '')
    """
    if path is None:
        return {}, ""
    file = path.parent / (FILE if path.name == SOLUTION else f"{student}.json")
    if not file.is_file():
        return {}, ""
    try:
        return read_answers(file), ""
    except InventoryError as error:
        return {}, f"{file.name} left out: {error}"


def grade_class(
    submissions,
    out,
    *,
    jobs: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    progress: TextIO | None = None,
) -> list[Row]:
    """Check every submission in `submissions` (`find_submissions`) and write `out`:
    grades.csv, feedback/STUDENT.txt and report.html with its figures. jobs: checks at once
    (default: the CPUs this process may use). Returns the rows, by student.

    >>> import tempfile
    >>> empty_class = Path(tempfile.mkdtemp())
    >>> grade_class(empty_class, empty_class / "grades")
    []
    >>> (empty_class / "grades" / "grades.csv").read_text().splitlines() == [",".join(COLUMNS)]
    True
    """
    found = find_submissions(submissions)
    jobs = integer("jobs", jobs, minimum=1) if jobs is not None else usable_cpus()
    out = Path(instance("out", out, (str, os.PathLike), "a folder to write the grades into"))
    rows: dict[str, Row] = {}
    if jobs == 1 or len(found) <= 1:
        for name, path in found.items():
            rows[name] = grade_one(name, path, timeout)
            _tick(progress, len(rows), len(found), name)
    else:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
            futures = {pool.submit(grade_one, n, p, timeout): n for n, p in found.items()}
            for future in as_completed(futures):
                name = futures[future]
                rows[name] = future.result()
                _tick(progress, len(rows), len(found), name)
    ordered = [rows[name] for name in sorted(rows)]
    write_results(ordered, out)
    return ordered


def _tick(progress: TextIO | None, done: int, total: int, name: str) -> None:
    if progress is None:
        return
    if progress.isatty():
        bar = "#" * (30 * done // max(total, 1))
        end = "\n" if done == total else ""
        progress.write(f"\r[{bar:<30}] {done}/{total} checked{end}")
    progress.flush()


def write_results(rows: list[Row], out: Path) -> None:
    """grades.csv, feedback/STUDENT.txt, report.html and its figures, in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(row.csv() for row in rows)
    feedback = out / "feedback"
    feedback.mkdir(exist_ok=True)
    for row in rows:
        text = row.feedback or f"{row.student}: {row.reason}"
        (feedback / f"{row.student}.txt").write_text(text + "\n", encoding="utf-8")
    figures = class_figures(rows, out)
    (out / "report.html").write_text(report_page(rows, figures), encoding="utf-8")


def summary(rows: list[Row]) -> str:
    """One line: how many passed, failed, could not be run.

    >>> summary([Row("a", 11, verdict=PASS), Row("b", 7, verdict=FAIL), Row("c")])
    '3 submissions: 1 passed all eleven tests, 1 did not, 1 could not be run'
    """
    counts = Counter(row.verdict for row in rows)
    return (
        f"{len(rows)} submission{'s' if len(rows) != 1 else ''}: {counts[PASS]} passed all "
        f"eleven tests, {counts[FAIL]} did not, {counts[UNCHECKED]} could not be run"
    )


# --- the class's picture ----------------------------------------------------------------------


def pass_rates(rows: list[Row]) -> dict[str, float]:
    """Each test's share of the checked submissions that passed it."""
    checked = [row for row in rows if row.verdict != UNCHECKED]
    return {
        test: sum(row.statuses.get(test) == PASSED for row in checked) / max(len(checked), 1)
        for test in NAMES
    }


def pitfall_counts(rows: list[Row]) -> list[tuple[str, int]]:
    """The card's pitfalls named in the class, most students first (ties by id)."""
    counts = Counter(p for row in rows for p in row.pitfalls)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def class_figures(rows: list[Row], out: Path) -> list[tuple[str, str]]:
    """The report's three figures as PNG files in `out`: (file name, text alternative)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    checked = [row for row in rows if row.verdict != UNCHECKED]
    rates = pass_rates(rows)
    pitfalls = pitfall_counts(rows)
    figures = []

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    ax.barh([t.removeprefix("test_") for t in NAMES][::-1], [100 * rates[t] for t in NAMES][::-1],
            color="#1f5fa8")  # fmt: skip
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"students who passed it, % of the {len(checked)} checked")
    ax.set_title("Pass rate per test")
    fig.tight_layout()
    fig.savefig(out / "pass_rate_per_test.png", metadata={"Software": None})
    plt.close(fig)
    hardest = min(NAMES, key=lambda t: (rates[t], NAMES.index(t)))
    figures.append((
        "pass_rate_per_test.png",
        f"Bar chart of the share of the {len(checked)} checked submissions that passed each of "
        f"the card's eleven tests; the lowest is {hardest} at {100 * rates[hardest]:.0f}%.",
    ))  # fmt: skip

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    if pitfalls:
        ax.barh([f"{p}: {_title(p)}" for p, _ in pitfalls][::-1], [n for _, n in pitfalls][::-1],
                color="#b3261e")  # fmt: skip
        ax.xaxis.get_major_locator().set_params(integer=True)
    else:
        ax.text(0.5, 0.5, "no pitfall named", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("students")
    ax.set_title("The card's pitfalls in the class")
    fig.tight_layout()
    fig.savefig(out / "pitfalls.png", metadata={"Software": None})
    plt.close(fig)
    named = ", ".join(f"{p} by {n}" for p, n in pitfalls) or "none"
    alt = f"Bar chart of the card's pitfalls named, by students: {named}."
    figures.append(("pitfalls.png", alt))

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    scores = [row.passed for row in checked]
    ax.hist(scores, bins=range(0, len(NAMES) + 2), align="left", rwidth=0.8, color="#1a7f37")
    ax.set_xticks(range(0, len(NAMES) + 1))
    ax.yaxis.get_major_locator().set_params(integer=True)  # students come whole
    ax.set_xlabel("tests passed, of eleven")
    ax.set_ylabel("students")
    ax.set_title("Scores")
    fig.tight_layout()
    fig.savefig(out / "scores.png", metadata={"Software": None})
    plt.close(fig)
    spread = Counter(scores)
    words = ", ".join(f"{n} with {s}" for s, n in sorted(spread.items(), reverse=True)) or "none"
    figures.append(("scores.png", f"Histogram of the tests passed per student: {words}."))
    return figures


def _title(pitfall_id: str) -> str:
    key = CARD_PITFALLS.get(pitfall_id)
    return PITFALLS[key].title if key else ""


def report_page(rows: list[Row], figures: list[tuple[str, str]]) -> str:
    """report.html: the summary, the figures with their text alternatives, and the table."""
    e = html.escape
    body = io.StringIO()
    body.write(f"<p>{e(summary(rows))}.</p>\n")
    for name, alt in figures:
        body.write(f'<figure><img src="{e(name)}" alt="{e(alt)}" width="800" height="450">'
                   f"<figcaption>{e(alt)}</figcaption></figure>\n")  # fmt: skip
    body.write(inventory_section(rows))
    body.write(
        _scrolls("Grades") + "<table><caption>Grades, one row per student</caption><thead><tr>"
    )
    body.write("".join(f'<th scope="col">{e(c.replace("_", " "))}</th>' for c in COLUMNS))
    body.write("</tr></thead><tbody>\n")
    for row in rows:
        cells = row.csv()
        body.write("<tr>" + "".join(f"<td>{e(cells[c])}</td>" for c in COLUMNS) + "</tr>\n")
    body.write("</tbody></table></div>\n")
    style = (
        "body{font-family:system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem;"
        "color:#1b1b1b;background:#fff}table{border-collapse:collapse}th,td{border:1px solid "
        "#767676;padding:.25rem .5rem;text-align:left;vertical-align:top}img{max-width:100%;"
        "height:auto}figure{margin:1rem 0}.scrolls{overflow-x:auto;max-width:100%}"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>M07.3: the class's check</title><style>{style}</style></head>\n"
        f"<body><main><h1>M07.3: the class's check</h1>\n{body.getvalue()}</main></body></html>\n"
    )


def inventory_section(rows: list[Row]) -> str:
    """The concept inventory in the report: the class's scores before and after, Hake's g
    with its interval, each item's difficulty and discrimination, the misconceptions most
    chosen, and the files left out ("" when no student handed any in)."""
    answers = {row.student: row.inventory for row in rows if row.inventory}
    left_out = [(row.student, row.inventory_problem) for row in rows if row.inventory_problem]
    if not answers and not left_out:
        return ""
    e = html.escape
    stats = class_statistics(answers)
    out = io.StringIO()
    out.write("<h2>What the class learned: the concept inventory</h2>\n")
    if stats["matched"]:
        low, high = stats["g_interval"]
        out.write(
            f"<p>{stats['matched']} students sat it before and after: {stats['pre']:.0f}% "
            f"right before, {stats['post']:.0f}% after; Hake's normalized gain g = "
            f"{stats['g']:.2f} (95% bootstrap interval {low:.2f} to {high:.2f}). Interactive "
            "courses average about 0.48, lecture courses about 0.23.</p>\n"
        )
    else:
        out.write("<p>No student sat it both before and after: no gain to compute.</p>\n")
    out.write(
        _scrolls("The concept inventory's items")
        + "<table><caption>Each item: the share right (difficulty) and the top 27% by score "
        "minus the bottom 27% (discrimination)</caption><thead><tr><th scope='col'>item</th>"
        "<th scope='col'>right before</th><th scope='col'>right after</th>"
        "<th scope='col'>discrimination before</th><th scope='col'>discrimination after</th>"
        "</tr></thead><tbody>\n"
    )
    for item in ITEMS:
        pre, post = stats["pre_items"][item.id], stats["post_items"][item.id]
        cells = [_share(pre["difficulty"]), _share(post["difficulty"]),
                 _number(pre["discrimination"]), _number(post["discrimination"])]  # fmt: skip
        out.write(
            f"<tr><td>{e(item.id)}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>\n"
        )
    out.write("</tbody></table></div>\n")
    for sitting, words in (("pre", "before"), ("post", "after")):
        chosen = stats[f"{sitting}_misconceptions"][:5]
        listed = "".join(
            f"<li>{e(MISCONCEPTIONS[m])}: chosen {n} time{'s' if n != 1 else ''}</li>"
            for m, n in chosen
        )
        out.write(
            f"<p>Misconceptions most chosen {words}:</p><ul>{listed or '<li>none</li>'}</ul>\n"
        )
    if left_out:
        listed = "".join(f"<li>{e(student)}: {e(problem)}</li>" for student, problem in left_out)
        out.write(f"<p>Answers left out:</p><ul>{listed}</ul>\n")
    return out.getvalue()


def _scrolls(label: str) -> str:
    """A region a wide table scrolls in on a narrow screen, the page staying put (and that
    the keyboard reaches, so that it scrolls without a mouse too)."""
    return f'<div class="scrolls" role="region" aria-label="{html.escape(label)}" tabindex="0">'


def _share(value: float) -> str:
    return "" if value != value else f"{100 * value:.0f}%"


def _number(value: float) -> str:
    return "" if value != value else f"{value:.2f}"


def grade_from_command_line(args, stderr: TextIO = sys.stderr) -> int:
    """`python -m tinyinit grade`: exit 0 when every submission was checked (whatever its
    verdict), 2 when the folder or the sandbox is missing."""
    rows = grade_class(
        args.submissions, args.out, jobs=args.jobs, timeout=args.timeout, progress=stderr
    )
    stderr.write(f"{summary(rows)}; wrote {args.out}/grades.csv, report.html, feedback/\n")
    return 0

"""The course's shape: a core path that fits the module, the rest labelled, times kept in step.

Each notebook's first cell states its part and its estimated time; the tables of the page of
the notebooks (docs/teaching/notebooks.md), the core path's total and the site's index state
the same numbers; scripts/course_time.py computes them all (and
`python scripts/course_time.py --write` puts them in place).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest
from scripts_loader import load_script

ROOT = Path(__file__).resolve().parent.parent
ct = load_script("course_time")
PAGE = ct.PAGE.read_text(encoding="utf-8")
NOTEBOOKS = ct.notebooks()


def read(path: Path):
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_first_cell_states_the_part_and_the_estimated_time(path):
    nb = read(path)
    first = nb.cells[0].source
    minutes = ct.estimate_minutes(nb)
    label = ct.SITTING_LABEL if ct.is_sitting(path) else ct.PART_LABEL[ct.part(path)]
    assert ct.stated_minutes(nb) == minutes, (
        f"{path.name}: the first cell should say 'estimated time: {minutes} minutes' "
        f"(python scripts/course_time.py --write), it says {ct.stated_minutes(nb)}"
    )
    assert label in first, f"{path.name}: the first cell should say {label!r}"
    number = path.name.split("_")[0]  # 04b: the sitting after 04
    assert re.match(rf"# {number} · ", first), f"{path.name}: title numbered as the file"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_the_notebooks_page_lists_each_notebook_with_its_time_in_its_part(path):
    minutes = ct.estimate_minutes(read(path))
    link = f"../../notebooks/{path.name})"
    row = next((line for line in PAGE.splitlines() if link in line), None)
    assert row is not None, f"{ct.PAGE.name} has no row for {path.name}"
    assert f"| {minutes} min |" in row, (
        f"{ct.PAGE.name}: {path.name} should show {minutes} min "
        "(python scripts/course_time.py --write)"
    )
    heading = {
        "core": "## The core path",
        "further": "## Going further",
        "appendix": "## Appendix",
    }
    sections = re.split(r"\n(?=## )", PAGE)
    section = next(s for s in sections if link in s)
    assert section.startswith(heading[ct.part(path)]), f"{path.name} is under the wrong heading"


def core_path_minutes() -> int:
    return ct.core_minutes(ct.estimates(NOTEBOOKS))


def test_core_path_total_is_stated():
    total = core_path_minutes()
    stated = ct.STATED_TOTAL.search(PAGE)
    assert stated and int(stated.group(2)) == total, f"{ct.PAGE.name} should state {total} minutes"


def test_core_path_fits_the_module():
    minutes = ct.estimates(NOTEBOOKS)
    core = {p.stem: m for p, m in minutes.items() if ct.part(p) == "core" and not ct.is_sitting(p)}
    assert sum(core.values()) <= ct.CORE_BUDGET, (
        f"the core path takes {sum(core.values())} minutes, over the module's "
        f"{ct.CORE_BUDGET}: {core}"
    )


def test_each_sitting_of_the_inventory_fits_its_budget_outside_the_core_path():
    """A sitting's estimate counts the items it shows, at the same 60 words a minute; its time
    is not the core path's."""
    minutes = ct.estimates(NOTEBOOKS)
    sittings = {p.stem: m for p, m in minutes.items() if ct.is_sitting(p)}
    assert len(sittings) == 2 and all(m <= ct.SITTING_BUDGET for m in sittings.values()), sittings
    for path in minutes:
        if ct.is_sitting(path):
            assert ct.counts(read(path))["words"] > ct.inventory_words()  # the items are read
    everything = sum(m for p, m in minutes.items() if ct.part(p) == "core")
    assert ct.core_minutes(minutes) == everything - sum(sittings.values())


def test_the_notebooks_page_states_the_rates_the_script_counts():
    for rate in [
        f"{ct.WORDS_PER_MINUTE} words",
        "and of code",
        f"{ct.EXERCISE:g} minutes per exercise",
        f"{ct.PREDICTION:g} per prediction",
    ]:
        assert rate in PAGE, f"{ct.PAGE.name} should say how the estimate counts: {rate!r}"


# --- what the estimate counts --------------------------------------------------------------


def test_estimate_counts_what_a_student_does():
    md = nbformat.v4.new_markdown_cell
    nb = nbformat.v4.new_notebook(
        cells=[
            md("word " * 200 + "$\\sum_j w_j x_j$"),  # 200 words, a formula of 6 tokens
            md("Write them.", metadata={"tags": ["write:fans", "write:calculate_gain"]}),
            md("Only the teacher reads this.", metadata={"tags": ["teacher"]}),
            nbformat.v4.new_code_cell("x = 1"),
            nbformat.v4.new_code_cell("q = predict('?', ['a', 'b'])"),
            nbformat.v4.new_code_cell("q2 = predict_number('how much?', rel_tol=0.1)"),
            nbformat.v4.new_code_cell("q.reveal(answer='a', measured='m')"),
            nbformat.v4.new_code_cell("### BEGIN SOLUTION\nanswer_1 = 1\n### END SOLUTION"),
            nbformat.v4.new_code_cell('with Check("Exercise 1"):\n    check(answer_1 == 1, "h")'),
        ]
    )
    # 2 words for "Write them."; the teacher's cell is not counted. Code as the student edition
    # shows it: x 1 (2); q predict('?', ['a', 'b']) (4); q2 predict_number(...) (4);
    # q.reveal(...) (2); the stub's YOUR CODE HERE raise NotImplementedError() (5); the check (6)
    assert ct.counts(nb) == {"words": 208, "code": 23, "exercises": 3, "predictions": 2}
    # (208 + 23) / 60 + 3 * 8 + 2 * 2 = 31.85 minutes, rounded up to 35
    assert ct.estimate_minutes(nb) == 35


def test_code_is_read_at_the_pace_of_prose():
    """A notebook's time grows with the code it shows: 600 more words of code, 10 minutes."""
    short = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    long = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1\n" + "y " * 600)])
    assert ct.counts(long)["code"] - ct.counts(short)["code"] == 600
    assert ct.estimate_minutes(long) - ct.estimate_minutes(short) == 10


def test_a_formula_counts_its_tokens():
    assert ct.words("$x$") == 1
    assert ct.words(r"$\mathrm{Var}(z) = n\,\sigma^2\,\mathbb{E}[x^2]$") == 8
    assert ct.words(r"$$\frac{a}{b} \le 2.5$$ and | — # **1.**") == 7  # \frac a b \le 2.5, and, 1.
    assert ct.words("a $b$ c $$d + e$$ f") == 6


def test_a_function_asked_twice_counts_once():
    md = nbformat.v4.new_markdown_cell
    nb = nbformat.v4.new_notebook(
        cells=[
            md("Write fans.", metadata={"tags": ["write:fans"]}),
            md("Finish fans.", metadata={"tags": ["write:fans", "other"]}),
        ]
    )
    assert ct.functions_to_write(nb) == ["fans"]
    assert ct.counts(nb)["exercises"] == 1


def test_predict_then_run_before_the_key_results_of_01_and_03():
    for stem in ("01_variance_of_a_sum", "03_signal_through_depth"):
        assert ct.counts(read(ROOT / "notebooks" / f"{stem}.ipynb"))["predictions"] >= 3, stem


# --- parts and reading order ---------------------------------------------------------------


def test_parts_and_reading_order_with_a_going_further_notebook_after_the_appendix():
    names = [
        "11_more_going_further.ipynb",
        "10_appendix_generator_bits.ipynb",
        "02_hand.ipynb",
        "05_gains.ipynb",
        "01_variance.ipynb",
        "notes.ipynb",
        "04_train.ipynb",
        "12_appendix_more.ipynb",
    ]
    order = [p.name for p in ct.reading_order(Path(n) for n in names)]
    assert order == [
        "01_variance.ipynb",
        "02_hand.ipynb",
        "04_train.ipynb",
        "05_gains.ipynb",
        "11_more_going_further.ipynb",
        "notes.ipynb",
        "10_appendix_generator_bits.ipynb",
        "12_appendix_more.ipynb",
    ]
    assert [ct.part(Path(n)) for n in order] == ["core"] * 3 + ["further"] * 3 + ["appendix"] * 2


def test_the_course_is_read_core_then_further_then_appendix():
    parts = [ct.part(p) for p in NOTEBOOKS]
    assert parts == sorted(parts, key=ct.PARTS.index)
    core = [p.stem.split("_")[0] for p in NOTEBOOKS if ct.part(p) == "core"]
    assert core == ["00", "01", "02", "03", "04", "04b"]  # the inventory's sittings around 01-04
    assert [p.stem[:3] for p in NOTEBOOKS if ct.is_sitting(p)] == ["00_", "04b"]


# --- --write ---------------------------------------------------------------------------------


def test_write_brings_first_cells_and_the_page_in_step_and_changes_nothing_twice(tmp_path):
    folder = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", folder, ignore=shutil.ignore_patterns("*.py", ".*"))
    page = tmp_path / "notebooks.md"
    # Every stated time made wrong first, so that each has to be rewritten.
    page.write_text(
        re.sub(r"\| \d+ min \|", "| 1 min |", ct.STATED_TOTAL.sub(r"\g<1>1\g<3>", PAGE)),
        encoding="utf-8",
    )
    for path in folder.glob("*.ipynb"):
        nb = read(path)
        nb.cells[0].source = ct.STATED.sub(r"\g<1>1\g<3>", nb.cells[0].source)
        nbformat.write(nb, path)
    before = {p.name: read(p) for p in folder.glob("*.ipynb")}

    changed = ct.write(folder, page)
    assert {p.name for p in changed} == {p.name for p in folder.glob("*.ipynb")} | {page.name}
    minutes = ct.estimates(ct.notebooks(folder))
    text = page.read_text(encoding="utf-8")
    for path, m in minutes.items():
        nb = read(path)
        assert ct.stated_minutes(nb) == m
        # only the number changed, in the first cell only
        assert nb.cells[1:] == before[path.name].cells[1:]
        row = next(line for line in text.splitlines() if f"notebooks/{path.name})" in line)
        assert f"| {m} min |" in row
    assert f"Estimated time of the core path: {ct.core_minutes(minutes)} minutes" in text
    assert text.count("\n") == PAGE.count("\n")

    files = {p: p.read_bytes() for p in [page, *folder.glob("*.ipynb")]}
    assert ct.write(folder, page) == []
    assert {p: p.read_bytes() for p in files} == files


def test_write_names_a_notebook_that_states_no_time(tmp_path):
    path = tmp_path / "01_x.ipynb"
    nbformat.write(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 01 · X")]), path
    )
    with pytest.raises(ValueError, match="01_x.ipynb: the first cell states no"):
        ct.write_notebook(path, 5)
    page = tmp_path / "notebooks.md"
    page.write_text("| [01](../../notebooks/02_y.ipynb) | 5 min | y |\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"no table row links notebooks/01_x.ipynb$"):
        ct.write_page(page, {path: 5})


# --- the site's index ----------------------------------------------------------------------


def test_site_index_states_each_estimate_and_the_core_total():
    """The index page's source as scripts/build_site.py writes it for Sphinx."""
    builder = load_script("build_site")
    text = builder.index_markdown(builder.course_pages(ROOT / "notebooks"))
    minutes = ct.estimates(NOTEBOOKS)
    for path, m in minutes.items():
        assert f"]({path.stem}.ipynb)** ({m} min)" in text, (
            f"the index should give {path.stem} {m} min"
        )
    assert f"## Core path: {ct.core_minutes(minutes)} minutes in all" in text

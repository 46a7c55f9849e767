"""The course's shape: a core path that fits the module, the rest labelled, times kept in step.

Each notebook's first cell states its part and its estimated time; the README's tables and the
core path's total state the same numbers; scripts/course_time.py computes them all.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
README = (ROOT / "README.md").read_text(encoding="utf-8")
MODULE_MINUTES = 180  # the module is 2 to 3 hours


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


ct = load("course_time")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_first_cell_states_the_part_and_the_estimated_time(path):
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0].source
    minutes = ct.estimate_minutes(nb)
    label = ct.PART_LABEL[ct.part(path)]
    assert ct.stated_minutes(nb) == minutes, (
        f"{path.name}: the first cell should say 'estimated time: {minutes} minutes' "
        f"(scripts/course_time.py), it says {ct.stated_minutes(nb)}"
    )
    assert label in first, f"{path.name}: the first cell should say {label!r}"
    assert re.match(rf"# {path.name[:2]} · ", first), f"{path.name}: title numbered as the file"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_readme_lists_each_notebook_with_its_time_in_its_part(path):
    minutes = ct.estimate_minutes(nbformat.read(path, as_version=4))
    row = next((line for line in README.splitlines() if f"(notebooks/{path.name})" in line), None)
    assert row is not None, f"README.md has no row for {path.name}"
    assert f"| {minutes} min |" in row, f"README.md: {path.name} should show {minutes} min"
    heading = {
        "core": "### The core path",
        "further": "### Going further",
        "appendix": "### Appendix",
    }
    sections = re.split(r"\n(?=### )", README)
    section = next(s for s in sections if f"(notebooks/{path.name})" in s)
    assert section.startswith(heading[ct.part(path)]), f"{path.name} is under the wrong heading"


def core_path_minutes() -> int:
    core = [p for p in NOTEBOOKS if ct.part(p) == "core"]
    return sum(ct.estimate_minutes(nbformat.read(p, as_version=4)) for p in core)


def test_core_path_total_is_stated():
    total = core_path_minutes()
    stated = re.search(r"Estimated time of the core path: (\d+) minutes", README)
    assert stated and int(stated.group(1)) == total, f"README should state {total} minutes"


def test_core_path_fits_the_module():
    assert core_path_minutes() <= MODULE_MINUTES, "the core path takes over 3 hours"


def test_estimate_counts_what_a_student_does():
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("word " * 200 + "$\\sum_j w_j x_j$"),  # 201 words
            nbformat.v4.new_code_cell("x = 1"),
            nbformat.v4.new_code_cell("predict('?', ['a', 'b'], 'a', 'm')"),
            nbformat.v4.new_code_cell("### BEGIN SOLUTION\nanswer_1 = 1\n### END SOLUTION"),
            nbformat.v4.new_code_cell('with Check("Exercise 1"):\n    check(answer_1 == 1, "h")'),
        ]
    )
    assert ct.counts(nb) == {"words": 201, "code": 1, "exercises": 1, "predictions": 1}
    # 2.01 + 0.75 + 6 + 1.5 = 10.26 minutes, rounded up to 15
    assert ct.estimate_minutes(nb) == 15


def test_predict_then_run_before_the_key_results_of_01_and_03():
    for stem in ("01_variance_of_a_sum", "03_signal_through_depth"):
        nb = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
        assert ct.counts(nb)["predictions"] >= 3, stem

"""A predict-then-run question in a real JupyterLab: click a prediction, see the verdict."""

from __future__ import annotations

import pytest

from .lab import notebook_errors, open_notebook, run_all_cells

pytestmark = pytest.mark.browser

NOTEBOOK = "01_variance_of_a_sum.ipynb"
QUESTION = ".tinyinit-predict"


def test_a_prediction_is_recorded_and_the_measured_answer_revealed(page, console, lab_server):
    open_notebook(page, lab_server, NOTEBOOK)
    run_all_cells(page, timeout=240)
    question = page.locator(QUESTION).first
    question.wait_for(timeout=60_000)
    fold = question.locator("details")
    assert fold.count() == 1  # before a choice, the answer is folded away
    question.locator("button").first.click()
    reveal = question.locator(".widget-html").last
    reveal.get_by_text("Your prediction: (a)").wait_for(timeout=30_000)
    text = reveal.inner_text()
    assert "Measured: Var(z) =" in text and ("Right." in text or "Not quite" in text)
    assert all(b.is_disabled() for b in question.locator("button").all())
    assert notebook_errors(page) == [] and console.messages == []

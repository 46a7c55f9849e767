"""A predict-then-run question in a real JupyterLab: the answer waits for a prediction."""

from __future__ import annotations

import pytest

from .lab import notebook_errors, open_notebook, run_all_cells

pytestmark = pytest.mark.browser

NOTEBOOK = "01_variance_of_a_sum.ipynb"
QUESTION = ".tinyinit-predict"
REVEAL = ".tinyinit-reveal"


def test_the_answer_waits_for_a_prediction_and_opens_when_one_is_made(page, console, lab_server):
    open_notebook(page, lab_server, NOTEBOOK)
    run_all_cells(page, timeout=240)
    question = page.locator(QUESTION).first
    question.wait_for(timeout=60_000)
    reveal = page.locator(REVEAL).first
    reveal.get_by_text("Make your prediction above first").wait_for(timeout=30_000)
    question.locator("button").first.click()
    reveal.get_by_text("Your prediction: (a)").wait_for(timeout=30_000)
    text = reveal.inner_text()
    assert "Measured:" in text and ("Right." in text or "Not quite" in text)
    assert all(b.is_disabled() for b in question.locator("button").all())
    assert notebook_errors(page) == [] and console.messages == []

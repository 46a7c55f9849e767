"""Every notebook with live widgets is driven in a real browser by one of the browser tests.

A notebook holds live widgets when its stored outputs hold a widget view other than a
predict-then-run question (those are driven by test_lab_predict.py). Notebook 03's
explorer has test_lab_explorer.py, notebook 11's training explorer test_lab_training.py, the
concept inventory's sittings (00, 04b) test_lab_inventory.py; the
slider apps of the others are listed in
test_lab_sliders.py, which runs each notebook, moves its slider and flips its toggle. A new
notebook with widgets fails here until it is added there.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from .test_lab_inventory import NOTEBOOKS as INVENTORY_NOTEBOOKS
from .test_lab_sliders import SLIDER_APPS
from .test_lab_training import NOTEBOOK as TRAINING_NOTEBOOK

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
EXPLORER_NOTEBOOK = "03_signal_through_depth.ipynb"


# A prediction's question and the answer its reveal cell shows are the quiz's, not an app.
QUIZ_TEXTS = ("Predict, then run:", "Make your prediction above first", "Your prediction:")


def is_app(output) -> bool:
    data = output.get("data", {})
    quiz = data.get("text/plain", "").startswith(QUIZ_TEXTS)
    return WIDGET_VIEW in data and not quiz


def widget_notebooks() -> set[str]:
    return {
        path.name
        for path in NOTEBOOKS.glob("*.ipynb")
        if any(
            is_app(output)
            for cell in nbformat.read(path, as_version=4).cells
            for output in cell.get("outputs", [])
        )
    }


def test_every_widget_notebook_is_driven_in_the_browser():
    found = widget_notebooks()
    assert {EXPLORER_NOTEBOOK, TRAINING_NOTEBOOK} <= found
    driven = {EXPLORER_NOTEBOOK, TRAINING_NOTEBOOK, *INVENTORY_NOTEBOOKS} | set(SLIDER_APPS)
    assert found - driven == set(), "add them to SLIDER_APPS"
    assert set(SLIDER_APPS) <= found, "SLIDER_APPS names a notebook without widgets"

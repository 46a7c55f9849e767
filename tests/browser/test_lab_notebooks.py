"""Every notebook with live widgets is driven in a real browser by one of the browser tests.

A notebook holds live widgets when its stored outputs hold a widget view other than a "predict,
then run" question (tinyinit.quiz: a few buttons, tested in tests/test_quiz.py). Notebook 03's
explorer has test_lab_explorer.py; the slider apps of the others are listed in
test_lab_sliders.py, which runs each notebook, moves its slider and flips its toggle. A new
notebook with widgets fails here until it is added there.
"""

from __future__ import annotations

import json
from pathlib import Path

from .test_lab_sliders import SLIDER_APPS

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
EXPLORER_NOTEBOOK = "03_signal_through_depth.ipynb"


QUESTION_CLASS = "tinyinit-predict"


def has_live_widgets(path: Path) -> bool:
    nb = json.loads(path.read_text(encoding="utf-8"))
    widgets = nb["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    models = widgets.get("state", {})
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                continue
            classes = models.get(view["model_id"], {}).get("state", {}).get("_dom_classes", [])
            if QUESTION_CLASS not in classes:
                return True
    return False


def widget_notebooks() -> set[str]:
    return {path.name for path in NOTEBOOKS.glob("*.ipynb") if has_live_widgets(path)}


def test_every_widget_notebook_is_driven_in_the_browser():
    found = widget_notebooks()
    assert EXPLORER_NOTEBOOK in found
    assert found - {EXPLORER_NOTEBOOK} - set(SLIDER_APPS) == set(), "add them to SLIDER_APPS"
    assert set(SLIDER_APPS) <= found, "SLIDER_APPS names a notebook without widgets"

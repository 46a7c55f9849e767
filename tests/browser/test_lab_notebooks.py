"""Every notebook with live widgets runs top to bottom in JupyterLab with nothing red on screen.

nbval checks what the kernel computes; this checks what the student sees: the
labextensions load, every widget renders (no "Error displaying widget", none
left "Loading widget..."), no cell writes to stderr, the page raises nothing.
A notebook is picked when its stored outputs hold a widget view; notebook 03
has its own, deeper test (test_lab_explorer.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .lab import kernel_status, notebook_errors, open_notebook, run_all_cells

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
DEEPER_TESTS = {"03_signal_through_depth.ipynb"}


def widget_notebooks() -> list[str]:
    return [
        path.name
        for path in sorted(NOTEBOOKS.glob("*.ipynb"))
        if WIDGET_VIEW in path.read_text(encoding="utf-8") and path.name not in DEEPER_TESTS
    ]


@pytest.mark.browser
@pytest.mark.parametrize("notebook", widget_notebooks())
def test_widget_notebook_runs_clean_in_lab(notebook, page, console, lab_server):
    open_notebook(page, lab_server, notebook)
    run_all_cells(page, timeout=180)
    page.locator(
        ".jp-NotebookPanel .widget-container, .jp-NotebookPanel .jupyter-widgets"
    ).first.wait_for(timeout=30_000)
    page.wait_for_function(
        "() => !document.querySelector('.jp-NotebookPanel').innerText.includes('Loading widget')",
        polling=100,
        timeout=30_000,
    )
    problems = notebook_errors(page) + console.messages
    assert not problems, "\n".join(problems)
    assert kernel_status(page) == "idle"

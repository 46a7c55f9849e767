"""The depth explorer of notebook 03 works in a real JupyterLab, under a real keyboard.

A student opens the notebook, runs all cells, moves the depth slider and picks
another activation: the figure must redraw, the readout must follow, and
nothing may go wrong on the way (no traceback, no stderr, no widget that
fails to render, no uncaught error in the page).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .lab import (
    kernel_status,
    labextensions,
    mpl_canvas,
    notebook_errors,
    open_notebook,
    press_on_slider,
    run_all_cells,
    slider_handle,
    wait_for_screenshot_change,
    wait_for_stable_screenshot,
)

pytestmark = pytest.mark.browser

NOTEBOOK = "03_signal_through_depth.ipynb"
EXPLORER = ".tinyinit-explorer"
TIMEOUT_MS = 30_000


def depth_value(page) -> int:
    return int(float(slider_handle(page, "tinyinit-depth").get_attribute("aria-valuenow")))


def assert_no_errors(page, console):
    errors = notebook_errors(page) + console.messages
    assert not errors, "\n".join(errors)


def test_depth_explorer_redraws_on_keyboard_and_dropdown(
    page, console, external_requests, lab_server
):
    if not (lab_server.root / NOTEBOOK).exists():
        pytest.fail(f"notebooks/{NOTEBOOK} is missing")
    open_notebook(page, lab_server, NOTEBOOK)
    # The isolated data dir must not hide the extensions pip put under sys.prefix.
    assert {"@jupyter-widgets/jupyterlab-manager", "jupyter-matplotlib"} <= set(labextensions(page))
    run_all_cells(page)
    assert_no_errors(page, console)

    explorer = page.locator(EXPLORER).first
    expect(explorer).to_be_visible(timeout=TIMEOUT_MS)
    canvas = mpl_canvas(page, EXPLORER)
    expect(canvas).to_be_visible(timeout=TIMEOUT_MS)
    readout = explorer.locator(".tinyinit-readout").first
    expect(readout).to_contain_text(re.compile(r"measured.*theory", re.S), timeout=TIMEOUT_MS)
    explorer.scroll_into_view_if_needed()
    handle = slider_handle(page, "tinyinit-depth")
    assert (handle.get_attribute("aria-valuemin"), handle.get_attribute("aria-valuemax")) in {
        ("1", "100"),
        ("1.0", "100.0"),
    }

    def changes(action, expected_depth):
        """Do `action`; the depth lands where expected, figure and readout both change."""
        picture, text = wait_for_stable_screenshot(canvas), readout.inner_text()
        action()
        expect(handle).to_have_attribute(
            "aria-valuenow", re.compile(rf"^{expected_depth}(\.0)?$"), timeout=TIMEOUT_MS
        )
        expect(readout).not_to_have_text(text, timeout=TIMEOUT_MS)
        wait_for_screenshot_change(canvas, picture, timeout=TIMEOUT_MS / 1000)

    # Later cells of the notebook drive the explorer too, so the run leaves the
    # depth anywhere: Home first gives the keys below a known start.
    if depth_value(page) != 1:
        changes(lambda: press_on_slider(page, "tinyinit-depth", "Home"), 1)
    changes(lambda: press_on_slider(page, "tinyinit-depth", "ArrowRight"), 2)
    changes(lambda: press_on_slider(page, "tinyinit-depth", "ArrowLeft"), 1)
    changes(lambda: press_on_slider(page, "tinyinit-depth", "End"), 100)
    activation = explorer.locator(".tinyinit-activation select").first
    before = activation.input_value()
    after = "tanh" if before != "tanh" else "relu"
    changes(lambda: activation.select_option(after), 100)
    assert activation.input_value() == after

    assert_no_errors(page, console)
    assert kernel_status(page) == "idle"
    assert external_requests == []

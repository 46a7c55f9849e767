"""The sliders of every notebook beyond the depth explorer work in a real JupyterLab.

For each app: run the notebook, move its slider with the keyboard and flip its
toggle; each time the figure must redraw and the readout must follow, with no
error on the page. (Notebook 03's explorer has its own test.)
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .lab import (
    assert_kernel_comes_back_idle,
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

TIMEOUT_MS = 30_000

# notebook -> (the app's container class, its slider's class, its toggle's class)
SLIDER_APPS = {
    "06_residual_stream.ipynb": ("tinyinit-residual", "tinyinit-blocks", "tinyinit-scaling"),
}


@pytest.mark.parametrize("notebook", sorted(SLIDER_APPS))
def test_slider_and_toggle_redraw_the_plot(notebook, page, console, lab_server):
    container, slider, toggle = SLIDER_APPS[notebook]
    open_notebook(page, lab_server, notebook)
    run_all_cells(page, timeout=180)

    app = page.locator(f".{container}").first
    expect(app).to_be_visible(timeout=TIMEOUT_MS)
    app.scroll_into_view_if_needed()
    canvas = mpl_canvas(page, f".{container}")
    readout = app.locator(".tinyinit-readout").first
    expect(canvas).to_be_visible(timeout=TIMEOUT_MS)

    def changes(action):
        picture, text = wait_for_stable_screenshot(canvas), readout.inner_text()
        action()
        expect(readout).not_to_have_text(text, timeout=TIMEOUT_MS)
        wait_for_screenshot_change(canvas, picture, timeout=TIMEOUT_MS / 1000)

    # The notebook's own cells leave the slider anywhere: go to the far end first.
    handle = slider_handle(page, slider)
    at_max = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
    changes(lambda: press_on_slider(page, slider, "Home" if at_max else "End"))
    changes(lambda: press_on_slider(page, slider, "End" if at_max else "Home"))
    changes(lambda: press_on_slider(page, slider, "ArrowLeft" if at_max else "ArrowRight"))
    changes(lambda: app.locator(f".{toggle}").first.click())

    assert_kernel_comes_back_idle(page)
    problems = notebook_errors(page) + console.messages
    assert not problems, "\n".join(problems)


def test_a_kernel_that_stays_busy_fails_and_one_that_settles_passes():
    class Toolbar:  # the execution indicator of a page, read through the same locator calls
        def __init__(self, statuses):
            self.statuses = iter(statuses)

        def locator(self, selector):
            return self

        @property
        def first(self):
            return self

        def get_attribute(self, name):
            return next(self.statuses)

    assert_kernel_comes_back_idle(Toolbar(["busy", "busy", "idle"]), timeout=5)
    with pytest.raises(AssertionError, match="kernel still 'busy' after 0 s"):
        assert_kernel_comes_back_idle(Toolbar(iter(lambda: "busy", None)), timeout=0.3)

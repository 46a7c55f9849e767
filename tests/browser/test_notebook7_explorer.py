"""The depth explorer works the same in Jupyter Notebook 7 (the single-document interface).

Notebook 7 is JupyterLab's machinery in another shell: its own pages (/tree,
/notebooks/<path>), menus and toolbar. A student opens a notebook there, runs
the explorer's cell, and drags the depth slider with the mouse: the readout and
the plot must follow, and land on the value where the drag let go.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .lab import (
    EXPLORER,
    ConsoleLog,
    mpl_canvas,
    run_the_cell_in_notebook_7,
    serve_one_cell,
    slider_handle,
    wait_for_screenshot_change,
    wait_for_stable_screenshot,
)

pytestmark = pytest.mark.browser

TIMEOUT_MS = 60_000
CELL = (
    "%matplotlib widget\nfrom tinyinit.views.explorers import depth_explorer\n"
    "depth_explorer(width=64)"
)


@pytest.fixture(scope="module")
def notebook_server(chromium, tmp_path_factory):
    """`jupyter notebook` (version 7) serving one notebook with the explorer's cell."""
    root = tmp_path_factory.mktemp("nb7") / "notebooks"
    server = serve_one_cell(root, "explorer.ipynb", CELL, app="notebook")
    yield server
    server.stop()


def test_explorer_in_notebook_7_follows_a_mouse_drag(notebook_server, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    console = ConsoleLog(page)
    try:
        run_the_cell_in_notebook_7(page, notebook_server, "explorer.ipynb", console)

        canvas = mpl_canvas(page, EXPLORER)
        expect(canvas).to_be_visible(timeout=TIMEOUT_MS)
        readout = page.locator(f"{EXPLORER} .tinyinit-readout").first
        expect(readout).to_contain_text("layer 20: measured", timeout=TIMEOUT_MS)
        before = wait_for_stable_screenshot(canvas)

        # A drag to the right, in small steps as a hand makes them, then let go.
        handle = slider_handle(page, "tinyinit-depth")
        box = handle.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        for step in range(1, 11):
            page.mouse.move(x + 6 * step, y)
        page.mouse.up()
        released = int(float(handle.get_attribute("aria-valuenow")))
        assert released > 20, "the drag did not move the slider"

        # The kernel answers the value where the drag let go, and the plot follows.
        expect(readout).to_contain_text(
            re.compile(rf"^layer {released}: measured"), timeout=TIMEOUT_MS
        )
        wait_for_screenshot_change(canvas, before, timeout=TIMEOUT_MS / 1000)
        assert page.locator(".jupyter-widgets-error-widget, .jp-OutputArea-stderr").count() == 0
        assert console.messages == [], "\n".join(console.messages)
    except Exception:
        print(f"end of the notebook server log:\n{notebook_server.log_tail()}")
        raise
    finally:
        context.close()

"""The depth explorer of notebook 03 works in a real JupyterLab, under a real keyboard.

A student opens the notebook, runs all cells, moves the depth slider, picks
another activation and types gains: the figure must redraw with its data on it,
the readout must follow, and nothing may go wrong on the way (no traceback, no
stderr, no widget that fails to render, no uncaught error in the page).

Depth and activation move the axes (a full redraw); a gain a hair away keeps
them, so only the data is redrawn over the kept frame (blitting).
"""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import expect

from .lab import (
    EXPLORER,
    FIGURE_CANVAS,
    assert_kernel_comes_back_idle,
    labextensions,
    mpl_canvas,
    notebook_errors,
    open_notebook,
    press_on_slider,
    run_all_cells,
    run_last_cell,
    slider_handle,
    wait_for_screenshot_change,
    wait_for_stable_screenshot,
)

pytestmark = pytest.mark.browser

NOTEBOOK = "03_signal_through_depth.ipynb"
TIMEOUT_MS = 30_000


def depth_value(page) -> int:
    return int(float(slider_handle(page, "tinyinit-depth").get_attribute("aria-valuenow")))


def median_line_pixels(png: bytes) -> int:
    """Pixels of an initializer's colour (the measured median, the bars) in a screenshot."""
    from matplotlib.colors import to_rgb

    from tinyinit.views.style import INITIALIZER_COLORS

    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)
    colours = {tuple(round(255 * c) for c in to_rgb(h)) for h in INITIALIZER_COLORS.values()}
    return int(sum((np.abs(rgb - c).sum(axis=-1) < 40).sum() for c in colours))


def type_gain(page, value: str) -> None:
    """Type a gain into the slider's readout, as a student fine-tunes it."""
    readout = page.locator(".tinyinit-gain .widget-readout").first
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(value)
    page.keyboard.press("Enter")


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
    run_all_cells(page, timeout=240)  # a loaded machine runs notebook 03 slowly
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
        drawn = wait_for_stable_screenshot(canvas)
        assert median_line_pixels(drawn) > 100, "the figure redrew without its data"

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
    changes(lambda: type_gain(page, "1.2"), 100)
    changes(lambda: type_gain(page, "1.201"), 100)  # same axes: the blitted update

    assert_kernel_comes_back_idle(page)
    assert_no_errors(page, console)
    assert external_requests == []


def faded_pin_pixels(png: bytes) -> int:
    """Pixels of the first pin's colour (PIN_COLORS[0], faded by PIN_ALPHA) in a screenshot."""
    from matplotlib.colors import to_rgb

    from tinyinit.views.style import PIN_ALPHA, PIN_COLORS

    faded = PIN_ALPHA * 255 * np.array(to_rgb(PIN_COLORS[0])) + (1 - PIN_ALPHA) * 255
    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)
    return int((np.abs(rgb - faded).sum(axis=-1) < 30).sum())


def test_pins_and_the_histogram_view_work_in_the_browser(page, console, lab_server):
    open_notebook(page, lab_server, NOTEBOOK)
    # The explorer's cell alone: the test above runs the whole notebook in Lab once.
    run_last_cell(page)
    explorer = page.locator(EXPLORER).first
    expect(explorer).to_be_visible(timeout=TIMEOUT_MS)
    assert_no_errors(page, console)
    explorer.scroll_into_view_if_needed()
    canvas = mpl_canvas(page, EXPLORER)
    readout = explorer.locator(".tinyinit-readout").first
    caption = explorer.locator(".tinyinit-caption").first
    expect(readout).to_contain_text("measured", timeout=TIMEOUT_MS)

    # Pin the curve, change the initializer: the old curve stays, faded, and is compared.
    explorer.locator(".tinyinit-pin").first.click()
    expect(caption).to_contain_text("pinned:", timeout=TIMEOUT_MS)
    picture = wait_for_stable_screenshot(canvas)
    select = explorer.locator("select").first  # the initializer: Xavier uniform, after reset
    kaiming = 2  # Xavier uniform, Xavier normal, Kaiming normal fan_in, ...
    select.select_option(index=kaiming if select.evaluate("e => e.selectedIndex") != kaiming else 1)
    expect(readout).to_contain_text(re.compile(r"ends .*\(pin 1\) at layer"), timeout=TIMEOUT_MS)
    wait_for_screenshot_change(canvas, picture, timeout=TIMEOUT_MS / 1000)
    assert faded_pin_pixels(wait_for_stable_screenshot(canvas)) > 100, "no pinned curve drawn"
    explorer.locator(".tinyinit-clear-pins").first.click()
    expect(caption).not_to_contain_text("pinned:", timeout=TIMEOUT_MS)

    # The histogram view: its own canvas comes up, and the depth slider drives it.
    explorer.locator(".tinyinit-view button", has_text="histograms").first.click()
    expect(caption).to_contain_text("rms at layers", timeout=TIMEOUT_MS)
    # The view is the layout's last child: its canvas is the explorer's last one.
    histograms = page.locator(f"{EXPLORER} {FIGURE_CANVAS}").last
    expect(histograms).to_be_visible(timeout=TIMEOUT_MS)
    shot, text = wait_for_stable_screenshot(histograms), caption.inner_text()
    press_on_slider(page, "tinyinit-depth", "ArrowLeft")
    expect(caption).not_to_have_text(text, timeout=TIMEOUT_MS)
    wait_for_screenshot_change(histograms, shot, timeout=TIMEOUT_MS / 1000)
    assert median_line_pixels(wait_for_stable_screenshot(histograms)) > 100, "no bars drawn"
    # Each panel's words over its panel, left to right: its layer and its zero entries.
    words = explorer.locator(".tinyinit-panel-row span")
    expect(words).to_have_count(4, timeout=TIMEOUT_MS)
    expect(words.first).to_contain_text("layer 1")
    expect(words.first).to_contain_text("h = 0:")
    expect(words.last).to_contain_text("layer 19")
    frame = histograms.bounding_box()
    lefts = [words.nth(k).bounding_box()["x"] for k in range(4)]
    assert lefts == sorted(lefts)
    assert frame["x"] < lefts[0] and lefts[-1] < frame["x"] + frame["width"]

    assert_kernel_comes_back_idle(page)
    assert_no_errors(page, console)

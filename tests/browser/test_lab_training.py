"""The training explorer at the end of notebook 11 in a real JupyterLab, and in Notebook 7.

A student runs the explorer's cell and presses play: the network trains in the kernel while the
loss figure redraws and the caption counts the steps. Every control answers meanwhile: a
new initializer starts a new run that goes on playing. Pause stops it where it is; one step,
pin and reset do what they say; the buttons pressed from the keyboard (a control focused,
then Enter), with a live region that says what happened.
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from .lab import (
    ConsoleLog,
    assert_kernel_comes_back_idle,
    mpl_canvas,
    notebook_errors,
    open_notebook,
    run_last_cell,
    run_the_cell_in_notebook_7,
    serve_one_cell,
    wait_for_screenshot_change,
    wait_for_stable_screenshot,
)
from .test_lab_explorer import faded_pin_pixels

pytestmark = pytest.mark.browser

NOTEBOOK = "11_training_in_depth.ipynb"
APP = ".tinyinit-training"
TIMEOUT_MS = 60_000
STEP = re.compile(r"^step (\d+):", re.M)


def shown_step(page) -> int:
    """The step the caption says the figures show (-1 while it says none yet)."""
    found = STEP.search(page.locator(f"{APP} .tinyinit-caption").first.inner_text())
    return int(found.group(1)) if found else -1


def wait_for_step(page, condition, timeout: float = 60.0) -> int:
    """Until the caption's step satisfies condition(step); that step."""
    deadline = time.monotonic() + timeout
    while True:
        step = shown_step(page)
        if condition(step):
            return step
        assert time.monotonic() < deadline, f"the caption stays at step {step}"
        time.sleep(0.1)


def status(page):
    return page.locator(f"{APP} .tinyinit-train-status").first


def press(page, css: str, key: str = "Enter") -> None:
    """Focus the button with class `css` (as Tab would) and press `key` on it."""
    button = page.locator(f"{APP} button.{css}, {APP} .{css} button").first
    button.focus()
    page.keyboard.press(key)


def test_notebook_11s_explorer_trains_live_and_answers_every_control(page, console, lab_server):
    open_notebook(page, lab_server, NOTEBOOK)
    # The explorer's cell, the notebook's last, needs none before it: run it alone (the
    # notebook's own training runs take a minute, and nbval runs them).
    run_last_cell(page)
    app = page.locator(APP).first
    expect(app).to_be_visible(timeout=TIMEOUT_MS)
    app.scroll_into_view_if_needed()
    canvas = mpl_canvas(page, APP)
    expect(canvas).to_be_visible(timeout=TIMEOUT_MS)
    wait_for_step(page, lambda s: s == 0)
    errors = notebook_errors(page) + console.messages
    assert not errors, "\n".join(errors)
    live = status(page).locator(".widget-html-content")
    expect(live).to_have_attribute("aria-live", "polite", timeout=TIMEOUT_MS)

    # As fast as it can, then play by the keyboard: the figure redraws as the steps go by.
    page.locator(f"{APP} .tinyinit-train-speed select").select_option(label="as fast as it can")
    before = wait_for_stable_screenshot(canvas)
    press(page, "tinyinit-train-play")
    expect(live).to_contain_text("training: relu, Xavier normal", timeout=TIMEOUT_MS)
    first = wait_for_step(page, lambda s: s > 0)
    wait_for_step(page, lambda s: s > first)
    wait_for_screenshot_change(canvas, before, timeout=TIMEOUT_MS / 1000)

    # A control moved while it trains: a new run, Kaiming's, that goes on playing.
    page.locator(f"{APP} .tinyinit-train-initializer select").select_option(
        label="Kaiming normal, fan_in"
    )
    expect(live).to_contain_text("new run: relu, Kaiming normal, fan_in (gain 1.41)",
                                 timeout=TIMEOUT_MS)  # fmt: skip
    expect(page.locator(f"{APP} .tinyinit-train-gain .widget-readout").first).to_have_text("1.414")
    caption = page.locator(f"{APP} .tinyinit-caption").first
    expect(caption).to_contain_text("relu, Kaiming normal, fan_in (gain 1.41)")
    restarted = shown_step(page)
    wait_for_step(page, lambda s: s > restarted)  # and it goes on training

    # Pause: it stops where the status says, and stays there.
    press(page, "tinyinit-train-play")
    expect(live).to_contain_text(re.compile(r"^paused: step \d+"), timeout=TIMEOUT_MS)
    stopped = int(re.search(r"step (\d+)", live.inner_text()).group(1))
    time.sleep(1.0)
    assert shown_step(page) == stopped

    # One step, by Enter; a pin, then a reset: the pinned run stays on the figure, faded.
    press(page, "tinyinit-train-step")
    expect(live).to_contain_text(re.compile(r"^took a step: step \d+:"), timeout=TIMEOUT_MS)
    stepped = int(re.search(r"step (\d+)", live.inner_text()).group(1))
    assert stepped > stopped and shown_step(page) == stepped  # (exactly one: test_live_training)
    press(page, "tinyinit-train-pin")
    expect(live).to_contain_text("pinned run 1: relu, Kaiming normal", timeout=TIMEOUT_MS)
    press(page, "tinyinit-train-reset")
    expect(live).to_contain_text("reset: step 0:", timeout=TIMEOUT_MS)
    expect(caption).to_contain_text(f"pin 1: step {stepped}:")
    assert faded_pin_pixels(wait_for_stable_screenshot(canvas)) > 100, "no pinned run drawn"

    assert_kernel_comes_back_idle(page)
    errors = notebook_errors(page) + console.messages
    assert not errors, "\n".join(errors)


# --- Notebook 7 ------------------------------------------------------------------------------

CELL = (
    "%matplotlib widget\nfrom tinyinit.views.live_training import training_explorer\n"
    "training_explorer(hidden_layers=6, speed=100)"
)


@pytest.fixture(scope="module")
def notebook_server(chromium, tmp_path_factory):
    """`jupyter notebook` (version 7) serving one notebook with the explorer's cell."""
    root = tmp_path_factory.mktemp("nb7-training") / "notebooks"
    server = serve_one_cell(root, "training.ipynb", CELL, app="notebook")
    yield server
    server.stop()


def test_the_explorer_trains_in_notebook_7_too(notebook_server, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    console = ConsoleLog(page)
    try:
        run_the_cell_in_notebook_7(page, notebook_server, "training.ipynb", console)
        canvas = mpl_canvas(page, APP)
        expect(canvas).to_be_visible(timeout=TIMEOUT_MS)
        before = wait_for_stable_screenshot(canvas)
        page.locator(
            f"{APP} button.tinyinit-train-play, {APP} .tinyinit-train-play button"
        ).first.click()
        wait_for_step(page, lambda s: s >= 20)
        wait_for_screenshot_change(canvas, before, timeout=TIMEOUT_MS / 1000)
        page.locator(f"{APP} .tinyinit-train-activation select").select_option("tanh")
        expect(status(page)).to_contain_text("new run: tanh", timeout=TIMEOUT_MS)
        wait_for_step(page, lambda s: 0 < s < 1000)
        page.locator(
            f"{APP} button.tinyinit-train-play, {APP} .tinyinit-train-play button"
        ).first.click()
        expect(status(page)).to_contain_text("paused: step", timeout=TIMEOUT_MS)
        assert page.locator(".jupyter-widgets-error-widget, .jp-OutputArea-stderr").count() == 0
        assert console.messages == [], "\n".join(console.messages)
    except Exception:
        print(f"end of the notebook server log:\n{notebook_server.log_tail(200)}")
        raise
    finally:
        context.close()

"""Presentation mode in a real Chromium: Voila serves the app as `make present` does.

The server is started with the very command `python -m tinyinit present` runs
(`tinyinit.present.voila_command`), with a share URL as `--share-url` passes it,
on 127.0.0.1 and a free port, with its own Jupyter folders, and stopped by
process id together with its kernels.

At 1280x720 and 1920x1080 a presenter's walk is checked and photographed: the
screenshots go to build/screenshots/ (not committed) for a person to look at,
with the measured boxes and font sizes in build/screenshots/measurements.json.
"""

from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path

import psutil
import pytest

from tests.browser.lab import (
    BENIGN_CONSOLE,
    ConsoleLog,
    LabServer,
    free_port,
    mpl_canvas,
    notebook_errors,
    open_notebook,
    press_on_slider,
    run_all_cells,
    spawn_server,
    wait_for_screenshot_change,
    wait_for_stable_screenshot,
)
from tinyinit.present import PRESETS, SHARE_URL_VARIABLE, app_notebook, app_path, voila_command

pytestmark = pytest.mark.browser

# The app serves its own Font Awesome and MathJax (tinyinit.present.offline_template), and
# tests/browser/test_offline.py refuses the web outright. Tolerated here: a blank frame, and
# MathJax probing for web fonts of its own that the package does not ship (it then uses the
# STIX ones it has). Anything else that fails to load is a finding.
OFFLINE_CDN: tuple[str, ...] = ("about:blank", "/voila/static/mathjax/fonts/")
NET_ERROR = "Failed to load resource: net::ERR_"
# What MathJax's font probing logs offline: a blocked about:blank font, and 403s from the
# static handler for the TeX font files the packaged MathJax does not ship (see OFFLINE_CDN).
MATHJAX_FONT_PROBE = ("Access to font at 'about:blank'", "status of 403 (Forbidden)")

SHARE_URL = "https://hub.example.edu/hub/user-redirect/voila/render/tinyinit/apps/present.ipynb"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
PROJECTORS = [(1280, 720), (1920, 1080)]

DEPTH_READOUT = ".tinyinit-explorer .tinyinit-readout"
TRAINING_HEADLINE = ".tinyinit-training .tinyinit-headline"
RESIDUAL_READOUT = ".tinyinit-residual .tinyinit-readout"
ERROR_TEXTS = ("Traceback", "Error displaying widget", "There was an error", "Error rendering")


def start_voila(home: Path, timeout: float = 90.0) -> LabServer:
    """Voila on 127.0.0.1, a free port, no token, no browser; returned once it takes connections."""
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()

    def running(server: LabServer) -> bool:
        # GET / would start a kernel; "running at" in the log and an open port do not.
        return "running at" in server.log_tail() and _port_open(port)

    command = voila_command(app_path(), port=port, browser=False)
    return without_kernels_api(spawn_server(
        command, name="voila", root=home, home=home, port=port, ready=running, timeout=timeout,
        env={SHARE_URL_VARIABLE: SHARE_URL},  # as `present --share-url` sets it
    ))  # fmt: skip


def without_kernels_api(server: LabServer) -> LabServer:
    """`server`, a Voila, stopped without asking for its kernels: Voila has no kernels API (a
    GET of api/kernels is a file it refuses, and says so in its log), and shuts its kernels
    down itself on the SIGTERM that stop() sends."""
    server.shutdown_kernels = lambda: None
    return server


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def page_problems(page) -> list[str]:
    """What the class would see as a failure: tracebacks, error outputs, broken widgets."""
    problems = []
    text = page.locator("body").inner_text()
    for needle in ERROR_TEXTS:
        if needle in text:
            at = text.index(needle)
            problems.append(f"page shows {needle!r}: {text[max(0, at - 100) : at + 300]!r}")
    for selector in (
        ".jupyter-widgets-error-widget",
        "[data-mime-type='application/vnd.jupyter.error']",
        "[data-mime-type='application/vnd.jupyter.stderr']",
    ):
        if page.locator(selector).count():
            problems.append(f"{selector}: {page.locator(selector).first.inner_text()[:300]}")
    return problems


def choose(select, name: str) -> None:
    """Pick the dropdown entry `name` (ipywidgets draws its spaces as no-break spaces)."""
    texts = [t.replace("\xa0", " ") for t in select.locator("option").all_inner_texts()]
    select.select_option(index=texts.index(name))


def readout(page, selector: str) -> str:
    return page.locator(selector).first.inner_text()


def wait_for_text(page, selector: str, pattern: str, timeout: float = 30.0) -> str:
    """Wait until the element's text matches `pattern` (a regex); return the text."""
    deadline = time.monotonic() + timeout
    while True:
        text = readout(page, selector)
        if re.search(pattern, text):
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"{selector} never matched {pattern!r}; it shows {text!r}")
        time.sleep(0.1)


def test_presentation_loads_and_presets_and_sliders_move_the_plot(voila, browser):
    # One page, one walk through the app, as a teacher would go.
    context = browser.new_context(viewport={"width": 1600, "height": 1200})
    page = context.new_page()
    console = ConsoleLog(page)
    failed = []
    page.on("requestfailed", lambda r: failed.append(r.url))
    try:
        page.goto(voila.url, timeout=120_000)
        page.locator(".tinyinit-present").wait_for(timeout=120_000)
        # The app opens on the students' link; the first demonstration brings up the plot.
        page.locator(".tinyinit-qr svg").wait_for(state="visible", timeout=60_000)
        select = page.locator(".tinyinit-preset select")
        choose(select, "Xavier + ReLU: collapse")
        depth_canvas = mpl_canvas(page, ".tinyinit-explorer")
        depth_canvas.wait_for(state="visible", timeout=60_000)
        # The full readout is folded away with the less used controls; unfold it.
        page.locator(".tinyinit-explorer").get_by_text("more controls").click()
        page.locator(DEPTH_READOUT).wait_for(state="visible")
        wait_for_text(page, DEPTH_READOUT, r"theory 9\.54e-07")
        first = wait_for_stable_screenshot(depth_canvas)
        assert page_problems(page) == []

        # An app, not a notebook: no code, and type readable from the back of the room.
        assert page.locator(".jp-CodeCell .jp-InputArea, .jp-CodeMirrorEditor").count() == 0
        assert "from tinyinit" not in page.locator("body").inner_text()
        assert float(select.evaluate("e => getComputedStyle(e).fontSize")[:-2]) >= 20
        label = page.locator(".tinyinit-depth .widget-label").first
        assert float(label.evaluate("e => getComputedStyle(e).fontSize")[:-2]) >= 20
        assert depth_canvas.bounding_box()["width"] >= 900
        options = [o.replace("\xa0", " ") for o in select.locator("option").all_inner_texts()]
        assert set(PRESETS) <= set(options)

        # A preset sets the controls, and the plot and the readout follow.
        before = readout(page, DEPTH_READOUT)
        choose(select, "Kaiming + ReLU: kept")
        text = wait_for_text(page, DEPTH_READOUT, r"theory 1\b")
        assert text != before
        kaiming = wait_for_screenshot_change(depth_canvas, first)
        kaiming = wait_for_stable_screenshot(depth_canvas)
        selected = page.locator(".tinyinit-explorer select").first
        assert selected.evaluate("e => e.options[e.selectedIndex].text").startswith("Kaiming")

        # A slider moved by hand: the plot and the readout follow too.
        press_on_slider(page, "tinyinit-depth", "End")
        wait_for_text(page, DEPTH_READOUT, r"^layer 100:")
        wait_for_screenshot_change(depth_canvas, kaiming)

        # A two-step demonstration: gain 1, then the button for gain 5/3.
        choose(select, "tanh: gain 1 vs 5/3")
        gain_1 = wait_for_text(page, DEPTH_READOUT, r"^layer 20:")
        shot = wait_for_stable_screenshot(depth_canvas)
        page.locator(".tinyinit-step button", has_text="gain 5/3").click()
        gain_53 = wait_for_text(page, DEPTH_READOUT, rf"^(?!{re.escape(gain_1)}$)layer 20:")
        # tanh with gain 5/3 settles near 0.4 (module card); with gain 1 it drains to ~0.03.
        assert re.search(r"theory 0\.[34]", gain_53), gain_53
        wait_for_screenshot_change(depth_canvas, shot)
        # It ends with both curves on one plot: gain 1 pinned, in grey, under gain 5/3.
        wait_for_text(page, DEPTH_READOUT, r"gain 1\.67 ends 2\^[0-9.]+ above gain 1 \(pin 1\)")
        assert "pinned:" in readout(page, ".tinyinit-explorer .tinyinit-caption")

        # The residual stream: its own tab comes up, and its toggle is a step.
        choose(select, "Residual stream: with and without 1/sqrt(2N)")
        residual_canvas = mpl_canvas(page, ".tinyinit-residual")
        residual_canvas.wait_for(state="visible", timeout=30_000)
        unscaled = wait_for_text(page, RESIDUAL_READOUT, r"N = 48 blocks.*× 1\.000")
        shot = wait_for_stable_screenshot(residual_canvas)
        page.locator(".tinyinit-step button", has_text="with 1/√(2N)").first.click()
        scaled = wait_for_text(page, RESIDUAL_READOUT, r"N = 48 blocks.*× 0\.102")
        assert scaled != unscaled
        # Both settings on one axis: the unscaled stream stays, for comparison.
        wait_for_text(page, RESIDUAL_READOUT, r"without 1/√\(2N\): \d+\.\d\d")
        wait_for_screenshot_change(residual_canvas, shot)

        assert page_problems(page) == []
        unexpected = [u for u in failed if not any(cdn in u for cdn in OFFLINE_CDN)]
        assert unexpected == [], f"requests failed: {unexpected}"
        # MathJax's font probing (see OFFLINE_CDN) also logs: a blocked about:blank font, and
        # 403s from the static handler for the font files that are not there.
        probing = bool(failed) and all(any(c in u for c in OFFLINE_CDN) for u in failed)
        errors = [
            m
            for m in console.messages
            if not any(b in m for b in BENIGN_CONSOLE)
            and not (NET_ERROR in m and failed)
            and not (probing and any(p in m for p in MATHJAX_FONT_PROBE))
        ]
        assert errors == [], "\n".join(errors)
    except Exception:
        page.screenshot(path=str(voila.home / "failure.png"), full_page=True)
        print(voila.log_tail(60))
        raise
    finally:
        context.close()


# --- on a projector: everything in view, driven by a clicker ------------------------------------

# Every text box on the page, where it is drawn and where its scrolling or clipping ancestors
# let it be seen: text cut off by the window or by a box it overflows is a finding.
TEXT_BOXES = """() => {
  const boxes = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const element = node.parentElement;
    if (!node.textContent.trim() || !element || element.closest("script, style, select")) continue;
    if (!element.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
    let clip = { left: 0, top: 0, right: window.innerWidth, bottom: window.innerHeight };
    for (let a = element; a && a !== document.documentElement; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (style.overflowX !== "visible" || style.overflowY !== "visible") {
        const b = a.getBoundingClientRect();
        clip = { left: Math.max(clip.left, b.left), top: Math.max(clip.top, b.top),
                 right: Math.min(clip.right, b.right), bottom: Math.min(clip.bottom, b.bottom) };
      }
    }
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const r of range.getClientRects()) {
      if (r.width < 1 || r.height < 1) continue;
      const inside = r.left >= clip.left - 1 && r.top >= clip.top - 1
        && r.right <= clip.right + 1 && r.bottom <= clip.bottom + 1;
      boxes.push({ text: node.textContent.trim().slice(0, 50), inside,
                   box: [r.left, r.top, r.right, r.bottom].map(Math.round) });
    }
  }
  return boxes;
}"""

# The headline's text whenever the caption changes: what the plot says as the room reads it.
RECORD_CAPTIONS = """() => {
  window.tinyinitCaptions = [];
  const says = document.querySelector(".tinyinit-says .widget-html-content");
  new MutationObserver(() => {
    const shown = [...document.querySelectorAll(".tinyinit-headline")]
      .find((h) => h.offsetParent !== null);
    window.tinyinitCaptions.push([says.innerText, shown ? shown.innerText : ""]);
  }).observe(says, { childList: true, characterData: true, subtree: true });
}"""


def texts_outside(page) -> list[dict]:
    """The text boxes of the page that are not wholly in view."""
    return [box for box in page.evaluate(TEXT_BOXES) if not box["inside"]]


def says(name: str, step: int = 0) -> str:
    return PRESETS[name].steps[step].says


def wait_for_says(page, text: str, one_line: bool = True, timeout: float = 30.0) -> None:
    """Wait until the caption shows exactly `text` (the kernel has taken the step)."""
    wait_for_text(page, ".tinyinit-says", rf"^{re.escape(text)}$", timeout=timeout)
    if one_line:  # as the room should read it on a projector
        caption = page.locator(".tinyinit-says .widget-html-content")
        lines = caption.evaluate(
            "e => e.getClientRects().length && e.getBoundingClientRect().height"
            " / parseFloat(getComputedStyle(e).lineHeight)"
        )
        assert lines < 1.5, f"the caption {text!r} takes {lines:.1f} lines"


def box_in_view(locator, width: int, height: int) -> dict:
    """The element's bounding box, asserted to lie wholly inside the viewport."""
    box = locator.bounding_box()
    assert box is not None, "not displayed"
    inside = (
        box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= width + 0.5
        and box["y"] + box["height"] <= height + 0.5
    )
    assert inside, f"{box} runs out of the {width}x{height} viewport"
    return {k: round(v, 1) for k, v in box.items()}


def font_px(locator) -> float:
    return float(locator.evaluate("e => getComputedStyle(e).fontSize")[:-2])


def focused_class(page) -> str:
    return page.evaluate("() => document.activeElement.className || ''")


@pytest.fixture(scope="module")
def expected_headlines() -> dict[tuple[str, int], str]:
    """The first line of each step's headline, from the step's curves computed here."""
    from tinyinit.present import Presentation
    from tinyinit.views.naming import log2_text

    app = Presentation(warm=False)
    lines = {}
    for name, k in app.every_step():
        state = app.state(name, k)
        app_name = PRESETS[name].steps[k].app
        if app_name == "depth":
            lines[name, k] = f"layer {state.end_layer}: 2{log2_text(state.measured_end)}"
        elif app_name == "residual":
            lines[name, k] = f"variance {state[0][0][-1]:.1f}"
        else:  # a run trained live: its words, from its first step on
            lines[name, k] = "test accuracy"
    return lines


@pytest.mark.parametrize(("width", "height"), PROJECTORS, ids=lambda v: str(v))
def test_projector_shows_every_step_in_view_and_a_clicker_steps_through(
    voila, browser, width, height, expected_headlines
):
    size = f"{width}x{height}"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    console = ConsoleLog(page)
    measured: dict = {}
    steps = list(expected_headlines)
    try:
        page.goto(voila.url, timeout=120_000)
        page.locator(".tinyinit-present").wait_for(timeout=120_000)

        # Before the first demonstration: the students' link, its QR code as large as the plot.
        qr = page.locator(".tinyinit-qr svg")
        qr.wait_for(state="visible", timeout=60_000)
        assert SHARE_URL in page.locator(".tinyinit-share").inner_text()
        # Sized for this screen once the page has told the kernel how large it is.
        page.wait_for_function(
            "() => document.querySelector('.tinyinit-qr svg').getBoundingClientRect().height"
            " >= 0.6 * window.innerHeight",
            timeout=30_000,
        )
        # ... and laid out to fit: the rule under it in view too.
        page.wait_for_function(
            "() => document.querySelector('.tinyinit-rule').getBoundingClientRect().bottom"
            " <= window.innerHeight",
            timeout=30_000,
        )
        measured["qr"] = box_in_view(qr, width, height)
        box_in_view(page.locator(".tinyinit-share a"), width, height)
        assert texts_outside(page) == []
        page.screenshot(path=str(SCREENSHOTS / f"share-{size}.png"))
        # Every step's curves are computed in the background once the page is there.
        page.locator(".tinyinit-present.tinyinit-warm").wait_for(timeout=60_000)
        page.evaluate(RECORD_CAPTIONS)

        # PageDown, as a clicker sends it with nothing focused: the first demonstration.
        page.keyboard.press("PageDown")
        wait_for_says(page, says(*steps[0]))
        canvas = mpl_canvas(page, ".tinyinit-explorer")
        canvas.wait_for(state="visible", timeout=30_000)
        wait_for_text(page, ".tinyinit-explorer .tinyinit-headline", r"^layer 20: 2−2\d\.\d")
        # The page has laid itself out for this screen: the canvas, resized, is drawn.
        wait_for_stable_screenshot(canvas, settle=1.0)
        measured["canvas"] = plot = box_in_view(canvas, width, height)
        assert plot["width"] * plot["height"] >= width * height / 3, (plot, size)
        scroll = page.evaluate(
            "() => [document.scrollingElement.scrollWidth, document.scrollingElement.scrollHeight]"
        )
        assert scroll[0] <= width and scroll[1] <= height, f"the page scrolls: {scroll}"

        # The menu, its one-line caption, the headline, the rule and the most used controls.
        menu = page.locator(".tinyinit-preset select")
        caption = page.locator(".tinyinit-says .widget-html-content")
        headline = page.locator(".tinyinit-explorer .tinyinit-headline .widget-html-content")
        rule = page.locator(".tinyinit-rule .widget-html-content")
        for name, locator in [
            ("menu", menu), ("caption", caption), ("headline", headline), ("rule", rule),
            ("initializer", page.locator(".tinyinit-explorer .tinyinit-side select").first),
            ("activation", page.locator(".tinyinit-activation select")),
            ("gain", page.locator(".tinyinit-gain .noUi-target")),
            ("depth", page.locator(".tinyinit-depth .noUi-target")),
        ]:  # fmt: skip
            measured[name] = box_in_view(locator, width, height)
        # Beside the plot, not under it; the rule under it.
        assert measured["headline"]["x"] >= plot["x"] + plot["width"]
        assert measured["headline"]["y"] < plot["y"] + plot["height"] / 2
        assert measured["rule"]["y"] >= plot["y"] + plot["height"]
        measured["font_px"] = {
            "controls": font_px(page.locator(".tinyinit-depth .widget-label").first),
            "menu": font_px(menu),
            "caption": font_px(caption),
            "rule": font_px(rule),
            "headline": font_px(headline),
        }
        scale = min(width / 1280, height / 720)
        assert measured["font_px"]["controls"] >= 20 * scale
        assert measured["font_px"]["rule"] >= measured["font_px"]["caption"] >= 24 * scale
        assert measured["font_px"]["headline"] >= 40 * scale
        assert texts_outside(page) == []

        # Every step, by the clicker (→ as some clickers send it): all of its text in view.
        wait_for_stable_screenshot(canvas)
        for number, (name, k) in enumerate(steps[1:], 1):
            page.keyboard.press("ArrowRight" if number == 2 else "PageDown")
            wait_for_says(page, says(name, k))
            app = {"depth": "explorer"}.get(PRESETS[name].steps[k].app, PRESETS[name].steps[k].app)
            if app == "training":  # two figures, the loss and the histograms, both in view
                figures = page.locator(".tinyinit-training .jupyter-matplotlib-canvas-div canvas")
                figures.last.wait_for(state="visible", timeout=30_000)
                wait_for_text(page, TRAINING_HEADLINE, r"^test accuracy \d+%\s+step [1-9]")
                measured["training_canvas"] = box_in_view(figures.first, width, height)
                measured["histograms"] = box_in_view(figures.last, width, height)
                measured["training_headline"] = box_in_view(
                    page.locator(f"{TRAINING_HEADLINE} .widget-html-content"), width, height
                )
                play = page.locator(".tinyinit-training .tinyinit-side button.tinyinit-train-play")
                box_in_view(play, width, height)
            else:
                shown = mpl_canvas(page, f".tinyinit-{app}")
                shown.wait_for(state="visible", timeout=30_000)
                wait_for_stable_screenshot(shown)
                measured[f"{app}_canvas"] = box = box_in_view(shown, width, height)
                assert box["width"] * box["height"] >= width * height / 3
            outside = texts_outside(page)
            assert outside == [], f"{name}, step {k}: {outside}"
            page.screenshot(path=str(SCREENSHOTS / f"step-{number}-{size}.png"))

        # The last demonstration, trained live: Xavier's run, trained on to 300 steps, is
        # pinned at chance; Kaiming's, beside it, learns (waited for at one size: it is the
        # same kernel's training at both).
        learn = "Xavier + ReLU: it does not learn"
        assert steps[-1] == (learn, 1)
        pinned = wait_for_text(page, TRAINING_HEADLINE, r"pin 1: \d+% at step 300")
        xavier = int(re.search(r"pin 1: (\d+)% at step 300", pinned).group(1))
        assert xavier < 20, pinned  # 300 steps of Xavier + ReLU + SGD: still near chance
        if (width, height) == PROJECTORS[0]:
            wait_for_text(page, TRAINING_HEADLINE, r"^test accuracy ([5-9]\d|100)%", timeout=120)
            page.screenshot(path=str(SCREENSHOTS / f"training-kaiming-{size}.png"))

        # No step's caption ever came before its plot: the headline the room saw with each
        # caption is the step's own.
        seen = page.evaluate("() => window.tinyinitCaptions")
        for (text, headline_text), (name, k) in zip(seen, steps):
            assert text == says(name, k)
            assert headline_text.startswith(expected_headlines[name, k]), (name, k, headline_text)
        # A further press at the end stays there.
        page.keyboard.press("PageDown")
        page.wait_for_timeout(500)
        assert caption.inner_text() == says(*steps[-1])

        # Home goes back to step one, End to the last step (the training demonstration's).
        page.keyboard.press("Home")
        wait_for_says(page, says(*steps[0]))
        wait_for_stable_screenshot(canvas)
        page.keyboard.press("End")
        wait_for_says(page, says(*steps[-1]))
        training_figure = page.locator(".tinyinit-training .jupyter-matplotlib-canvas-div canvas")
        training_figure.first.wait_for(state="visible", timeout=30_000)
        page.keyboard.press("Home")
        wait_for_says(page, says(*steps[0]))

        # A focused slider keeps its arrows, but a clicker's PageDown steps all the same.
        press_on_slider(page, "tinyinit-depth", "ArrowRight")
        wait_for_text(page, ".tinyinit-explorer .tinyinit-headline", r"^layer 21:")
        assert "noUi-handle" in focused_class(page)
        page.keyboard.press("PageDown")
        wait_for_says(page, says(*steps[1]))
        # A slider dragged with the mouse lets go when the button is released: → steps again.
        handle = page.locator(".tinyinit-explorer .tinyinit-depth .noUi-handle")
        box = handle.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.mouse.move(box["x"] + 60, box["y"] + box["height"] / 2, steps=5)
        page.mouse.up()
        wait_for_text(page, ".tinyinit-explorer .tinyinit-headline", r"^layer (?!20:)\d+:")
        page.wait_for_function(  # the slider let go of the keys when the button came up
            "() => !(document.activeElement?.classList.contains('noUi-handle'))", timeout=10_000
        )
        page.keyboard.press("ArrowRight")
        wait_for_says(page, says(*steps[2]))
        assert "noUi-handle" not in focused_class(page)
        # Esc lets go of a slider reached by keys, and the clicker has the arrows back.
        press_on_slider(page, "tinyinit-depth", "ArrowLeft")
        page.keyboard.press("Escape")
        assert "noUi-handle" not in focused_class(page)
        page.keyboard.press("ArrowLeft")
        wait_for_says(page, says(*steps[1]))

        # B blanks the screen; the next key brings the app back and does nothing else.
        page.keyboard.press("b")
        blank = page.locator(".tinyinit-blank")
        measured["blank"] = box = box_in_view(blank, width, height)
        assert box["width"] >= width and box["height"] >= height
        assert blank.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(0, 0, 0)"
        page.keyboard.press("PageDown")
        blank.wait_for(state="detached", timeout=5_000)
        page.wait_for_timeout(500)
        assert caption.inner_text() == says(*steps[1])

        # A demonstration picked with the mouse: the menu lets go, so the clicker goes on.
        choose(menu, "Kaiming + ReLU: kept")
        wait_for_says(page, says("Kaiming + ReLU: kept"))
        page.keyboard.press("ArrowRight")
        wait_for_says(page, says("tanh: gain 1 vs 5/3", 0))

        assert page_problems(page) == []
        errors = [
            m
            for m in console.messages
            if NET_ERROR not in m and not any(p in m for p in MATHJAX_FONT_PROBE)
        ]
        assert errors == [], "\n".join(errors)
    except Exception:
        page.screenshot(path=str(SCREENSHOTS / f"failure-{size}.png"))
        print(voila.log_tail(60))
        raise
    finally:
        context.close()
        record = SCREENSHOTS / "measurements.json"
        known = json.loads(record.read_text()) if record.exists() else {}
        known[size] = measured
        record.write_text(json.dumps(known, indent=1))


# --- serving: closed pages' kernels culled, the server stopped by SIGTERM ------------------------


def kernels_of(pid: int) -> list[psutil.Process]:
    """The kernel processes a server started (ipykernel_launcher), wherever they sit below it."""
    return [
        p
        for p in psutil.Process(pid).children(recursive=True)
        if "ipykernel" in " ".join(p.cmdline())
    ]


# Long enough for a loaded machine to render the page before its kernel counts as left alone
# (the kernel has no connection from the end of its run until the page connects).
CULL_IDLE = 12


def test_present_culls_closed_pages_kernels_and_stops_with_sigterm(chromium, browser, tmp_path):
    import os
    import signal
    import sys

    home = tmp_path / "present"
    home.mkdir()
    port = free_port()
    command = [sys.executable, "-m", "tinyinit", "present", "--no-browser", "--port", str(port)]
    command += ["--cull-idle", str(CULL_IDLE)]
    server = without_kernels_api(spawn_server(
        command, name="present", root=home, home=home, port=port, timeout=90,
        ready=lambda s: "running at" in s.log_tail() and _port_open(port),
    ))  # fmt: skip
    try:
        # A page that stays open keeps its kernel, however long the class talks.
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        page = context.new_page()
        page.goto(server.url, timeout=120_000)
        page.locator(".tinyinit-present").wait_for(timeout=120_000)
        [kernel] = kernels_of(server.pid)
        time.sleep(CULL_IDLE + 5)
        assert kernel.is_running()
        # Closed, its kernel is shut down once idle that long.
        context.close()
        _, alive = psutil.wait_procs([kernel], timeout=CULL_IDLE + 60)
        assert alive == [], "the closed page's kernel was not culled"
        # SIGTERM to `tinyinit present` alone, as a service manager sends it: Voila and the
        # kernel of the page still open stop with it.
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        page = context.new_page()
        page.goto(server.url, timeout=120_000)
        page.locator(".tinyinit-present").wait_for(timeout=120_000)
        tree = [psutil.Process(server.pid), *psutil.Process(server.pid).children(recursive=True)]
        assert len(kernels_of(server.pid)) == 1 and len(tree) >= 3  # present, voila, kernel
        os.kill(server.pid, signal.SIGTERM)
        _, alive = psutil.wait_procs(tree, timeout=40)
        assert alive == [], f"still running after SIGTERM: {alive}"
        context.close()
    finally:
        server.stop()


def test_the_clicker_keys_step_the_app_inside_jupyterlab_too(lab_server, page, console):
    # The same app in a notebook: Lab has key bindings of its own, and the page's
    # listener must neither lose the keys to them nor take keys typed into a cell.
    name = "presentation_in_lab.ipynb"
    notebook = {"type": "notebook", "format": "json", "content": app_notebook()}
    lab_server.api(f"api/contents/{name}", method="PUT", body=notebook)
    open_notebook(page, lab_server, name)
    run_all_cells(page)
    assert notebook_errors(page) == []
    page.locator(".tinyinit-present .tinyinit-says").wait_for(timeout=60_000)
    # A click on the app's caption: Lab's command mode, no control focused.
    page.locator(".tinyinit-present .tinyinit-says").click()
    page.keyboard.press("PageDown")
    wait_for_says(page, says("Xavier + ReLU: collapse"), one_line=False)
    page.keyboard.press("PageDown")
    wait_for_says(page, says("Kaiming + ReLU: kept"), one_line=False)
    page.keyboard.press("PageUp")
    wait_for_says(page, says("Xavier + ReLU: collapse"), one_line=False)
    # In the cell's editor, → moves the cursor and steps nothing.
    page.locator(".jp-Cell .cm-content").first.click()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("PageDown")
    page.wait_for_timeout(1000)
    assert page.locator(".tinyinit-says").inner_text() == says("Xavier + ReLU: collapse")
    assert console.messages == []


# --- type a room can read, a menu shown whole, a console with nothing to say -------------------

# The smallest type the app draws (its legends and the training panels' words, LEGEND_EM of the
# controls' 20 px), at 1280x720; nothing on the page or in a figure is smaller.
SMALLEST_PX = 17

# Every visible text of the app with its font size; the menu's widest entry, the room its box
# leaves for it and the arrow's width in its right padding; each figure's canvas: its CSS
# width and its bitmap's.
MEASURE = """() => {
  const app = document.querySelector(".tinyinit-present");
  const texts = [];
  const walker = document.createTreeWalker(app, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode, element = node.parentElement;
    if (!node.textContent.trim() || !element || element.closest("style, script, option")) continue;
    if (!element.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
    const box = element.getBoundingClientRect();
    if (box.width < 1 || box.height < 1) continue;
    const px = parseFloat(getComputedStyle(element).fontSize);
    texts.push([px, node.textContent.trim().slice(0, 40)]);
  }
  const menu = app.querySelector(".tinyinit-preset select"), style = getComputedStyle(menu);
  const context = document.createElement("canvas").getContext("2d");
  context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const widest = Math.max(...[...menu.options].map((o) => context.measureText(o.text).width));
  const room = menu.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const canvases = [...app.querySelectorAll(".jupyter-matplotlib-canvas-div canvas:first-child")]
    .filter((c) => c.checkVisibility()).map((c) => [c.getBoundingClientRect().width, c.width]);
  return { texts, widest, room, arrow: parseFloat(style.backgroundSize),
           padding: parseFloat(style.paddingRight), font: parseFloat(style.fontSize), canvases,
           ratio: window.devicePixelRatio };
}"""

# A line of the server's log that says something went wrong, or might: what the teacher would
# have to wonder about. Voila's own lines that say what it does ("Kernel started") are fine,
# and so is the culling of a closed page's kernel, which jupyter_server says as a warning: the
# teacher caused it, closing or reloading a page (as this module's other tests do).
SERVER_TROUBLE = re.compile(
    r"warn|error|traceback|deprecat|not trusted|\b[45]\d\d (GET|POST|PUT|PATCH|DELETE)\b", re.I
)
CLOSED_PAGE = re.compile(
    r"WARNING \| Culling 'idle' kernel '\w+' \([-0-9a-f]+\) with 0 connections"
)


@pytest.fixture(scope="module")
def smallest_figure_pt() -> dict[tuple[str, int], float]:
    """The smallest font, in points, of the figures each step shows, as the kernel draws them
    for a 1280x720 page (the app's first look: fonts at scale 1)."""
    from matplotlib.text import Text

    from tinyinit.present import Presentation

    app = Presentation(warm=False)
    smallest = {}
    for name, k in app.every_step():
        app.show(name, k)
        shown = PRESETS[name].steps[k].app
        if shown == "training":
            app.training.step(2)
            app.training.frame()
            figures = [app.training.plot.figure, app.training.histogram.figure]
        else:
            figures = [app.explorer(shown).figure]
        sizes = [
            text.get_fontsize()
            for figure in figures
            for text in figure.findobj(Text)
            if text.get_visible() and text.get_text().strip()
        ]
        smallest[name, k] = min(sizes)
    return smallest


def test_every_step_has_large_type_an_uncut_menu_and_a_console_with_nothing_to_say(
    voila, browser, smallest_figure_pt
):
    # One run through the steps at 1280x720, by the clicker: every text on the page, and every
    # figure's text as its canvas is shown, 17 px or more; the menu's longest entry beside its
    # arrow; not a warning or an error in the browser's console or the server's terminal.
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    console = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda error: console.append(f"pageerror: {error}"))
    try:
        page.goto(voila.url, timeout=120_000)
        page.locator(".tinyinit-present.tinyinit-warm").wait_for(timeout=120_000)
        for name, k in smallest_figure_pt:
            page.keyboard.press("PageDown")
            wait_for_says(page, says(name, k), one_line=False)
            if PRESETS[name].steps[k].app == "training":  # its run has drawn a frame
                wait_for_text(page, TRAINING_HEADLINE, r"step [1-9]")
            shown = page.evaluate(MEASURE)
            small = [(px, text) for px, text in shown["texts"] if px < SMALLEST_PX]
            assert small == [], (name, k, small)
            assert shown["canvases"], (name, k)
            for width, bitmap in shown["canvases"]:
                # The kernel draws at 100 dpi times the page's pixel ratio; the page shows the
                # bitmap at width / bitmap of its size.
                px = smallest_figure_pt[name, k] / 72 * 100 * shown["ratio"] * width / bitmap
                assert px >= SMALLEST_PX, (name, k, px)
            # The entry in its box, and between it and the arrow a gap of a quarter of its type
            # (the arrow is drawn inside the box's right padding).
            assert shown["widest"] <= shown["room"], (name, shown)
            assert shown["padding"] - shown["arrow"] >= shown["font"] / 4, shown
        trouble = [m for m in console if m.startswith(("warning", "error", "pageerror"))]
        assert trouble == [], "\n".join(trouble)
        log = voila.log_path.read_text(errors="replace").splitlines()
        trouble = [line for line in log if SERVER_TROUBLE.search(line)]
        assert [line for line in trouble if not CLOSED_PAGE.search(line)] == []
    except Exception:
        page.screenshot(path=str(voila.home / "failure-type.png"))
        print(voila.log_tail(60))
        raise
    finally:
        context.close()

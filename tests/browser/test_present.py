"""Presentation mode in a real Chromium: Voila serves the app as `make present` does.

The server is started with the very command `python -m tinyinit present` runs
(`tinyinit.present.voila_command`), on 127.0.0.1 and a free port, with its own
Jupyter folders, and stopped by process id together with its kernels.
"""

from __future__ import annotations

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
    press_on_slider,
    spawn_server,
    wait_for_screenshot_change,
    wait_for_stable_screenshot,
)
from tinyinit.present import PRESETS, app_path, voila_command

pytestmark = pytest.mark.browser

# The app serves its own Font Awesome and MathJax (tinyinit.present.offline_template), and
# tests/browser/test_offline.py refuses the web outright. Tolerated here: a blank frame, and
# MathJax probing for web fonts of its own that the package does not ship (it then uses the
# STIX ones it has). Anything else that fails to load is a finding.
OFFLINE_CDN: tuple[str, ...] = ("about:blank", "/voila/static/mathjax/fonts/")
NET_ERROR = "Failed to load resource: net::ERR_"

DEPTH_READOUT = ".tinyinit-explorer .tinyinit-readout"
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
    return spawn_server(
        command, name="voila", root=home, home=home, port=port, ready=running, timeout=timeout
    )


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


@pytest.fixture(scope="module")
def voila(chromium, tmp_path_factory):
    """The app server; asks for `chromium` first, so a missing browser skips before it starts."""
    server = start_voila(tmp_path_factory.mktemp("voila"))
    yield server
    processes = [psutil.Process(server.pid), *psutil.Process(server.pid).children(recursive=True)]
    server.stop()
    # Nothing of it is left: neither the server nor any kernel it started.
    _, alive = psutil.wait_procs(processes, timeout=10)
    assert alive == [], f"still running after stop(): {alive}"


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
        depth_canvas = mpl_canvas(page, ".tinyinit-explorer")
        depth_canvas.wait_for(state="visible", timeout=60_000)
        first = wait_for_stable_screenshot(depth_canvas)
        assert page_problems(page) == []

        # An app, not a notebook: no code, and type readable from the back of the room.
        assert page.locator(".jp-CodeCell .jp-InputArea, .jp-CodeMirrorEditor").count() == 0
        assert "from tinyinit" not in page.locator("body").inner_text()
        select = page.locator(".tinyinit-preset select")
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
        # It ends with both curves on one plot: gain 1 pinned, faded, under gain 5/3.
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
        # Both settings on one axis: the unscaled stream stays, faded, for comparison.
        wait_for_text(page, RESIDUAL_READOUT, r"without 1/√\(2N\): \d+\.\d\d")
        wait_for_screenshot_change(residual_canvas, shot)

        assert page_problems(page) == []
        unexpected = [u for u in failed if not any(cdn in u for cdn in OFFLINE_CDN)]
        assert unexpected == [], f"requests failed: {unexpected}"
        # MathJax's font probing (see OFFLINE_CDN) also logs: a blocked about:blank font, and
        # 403s from the static handler for the font files that are not there.
        probing = bool(failed) and all(any(c in u for c in OFFLINE_CDN) for u in failed)
        font_probe = ("Access to font at 'about:blank'", "status of 403 (Forbidden)")
        errors = [
            m
            for m in console.messages
            if not any(b in m for b in BENIGN_CONSOLE)
            and not (NET_ERROR in m and failed)
            and not (probing and any(p in m for p in font_probe))
        ]
        assert errors == [], "\n".join(errors)
    except Exception:
        page.screenshot(path=str(voila.home / "failure.png"), full_page=True)
        print(voila.log_tail(60))
        raise
    finally:
        context.close()

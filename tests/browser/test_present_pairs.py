"""A step of the presentation app shown again shows what it showed the first time: from every
step to every other, in a real Chromium, on the Voila server `make present` runs (the module's
own, as tests/browser/test_present.py has its own). A file of its own, the longest of the app's
browser tests, so that `make test` runs it beside the others rather than after them.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.browser.lab import ConsoleLog
from tests.browser.test_present import NET_ERROR, choose, page_problems, says, wait_for_says
from tinyinit.present import PRESETS

pytestmark = pytest.mark.browser

# --- a step shown again shows what it showed the first time -------------------------------------

# What the room sees of the app, read off the page: the menu, the step, the caption, the open
# tab's controls (every slider's readout, menu and toggle, folded ones included), its headline,
# readout and caption, and a digest of each of its figures' pixels.
SHOWN = """(withPixels) => {
  const text = (e) => (e ? e.textContent.replace(/\\s+/g, " ").trim() : null);
  const app = document.querySelector(".tinyinit-present");
  const view = [...app.querySelectorAll(".tinyinit-view")].find((v) => v.offsetParent !== null);
  const menu = app.querySelector(".tinyinit-preset select");
  const shown = {
    menu: menu.options[menu.selectedIndex].text,
    step: text(app.querySelector(".tinyinit-step button.mod-active")),
    says: text(app.querySelector(".tinyinit-says")),
    view: view ? [...view.classList].filter((c) => c !== "tinyinit-view").join(" ") : null,
  };
  if (!view) return shown;
  shown.sliders = [...view.querySelectorAll(".widget-slider")].map(
    (s) => `${text(s.querySelector(".widget-label"))}=${text(s.querySelector(".widget-readout"))}`);
  shown.menus = [...view.querySelectorAll("select")].map((s) => s.options[s.selectedIndex]?.text);
  shown.toggles = [...view.querySelectorAll(".widget-toggle-button, .widget-toggle-buttons button")]
    .map((b) => `${text(b)}:${b.classList.contains("mod-active")}`);
  for (const part of ["headline", "readout", "caption"]) {
    shown[part] = [...view.querySelectorAll(`.tinyinit-${part}`)].map(text);
  }
  if (withPixels) {
    shown.pixels = [...view.querySelectorAll(".jupyter-matplotlib-canvas-div canvas:first-child")]
      .map((canvas) => {
        const url = canvas.toDataURL();
        let hash = 2166136261;
        for (let i = 0; i < url.length; i++) hash = Math.imul(hash ^ url.charCodeAt(i), 16777619);
        return `${canvas.width}x${canvas.height}:${hash >>> 0}`;
      });
  }
  return shown;
}"""


def every_ordered_pair(n: int) -> list[int]:
    """A walk through 0 .. n-1 that goes from every one to every other exactly once (an
    Euler circuit of the complete directed graph, by Hierholzer's algorithm), from 0 to 0.

    >>> every_ordered_pair(3)
    [0, 2, 1, 2, 0, 1, 0]
    """
    left = {i: [j for j in range(n) if j != i] for i in range(n)}
    stack, walk = [0], []
    while stack:
        if left[stack[-1]]:
            stack.append(left[stack[-1]].pop())
        else:
            walk.append(stack.pop())
    return walk[::-1]


def what_is_shown(page, app: str) -> dict:
    """The page's SHOWN, less what a training run changes as it plays: its figures, and its
    headline and captions but for the pinned runs (those are trained, and fixed, at once)."""
    shown = page.evaluate(SHOWN, app != "training")
    if app == "training":
        pins = [re.findall(r"pin \d+: \d+% at step \d+", h) for h in shown.pop("headline")]
        shown["headline"] = pins
        del shown["readout"], shown["caption"]
    return shown


def wait_until_shown(page, expected: dict, app: str, timeout: float = 30.0) -> None:
    """Wait until the page shows `expected`; then, a moment later, that it still does (a
    page that answered a step with an old value would change it back)."""
    deadline = time.monotonic() + timeout
    while (shown := what_is_shown(page, app)) != expected:
        if time.monotonic() > deadline:
            diff = {k: (shown.get(k), v) for k, v in expected.items() if shown.get(k) != v}
            raise AssertionError(f"shown again, the step differs (now, first time): {diff}")
        time.sleep(0.1)
    time.sleep(0.2)
    shown = what_is_shown(page, app)
    assert shown == expected, f"changed after the step settled: {shown} != {expected}"


def settled(page, app: str, timeout: float = 30.0, quiet: float = 0.5) -> dict:
    """What the page shows once it has stayed the same for `quiet` seconds."""
    deadline = time.monotonic() + timeout
    before = what_is_shown(page, app)
    while True:
        time.sleep(quiet)
        now = what_is_shown(page, app)
        if now == before:
            return now
        assert time.monotonic() < deadline, f"the page never settled: {now}"
        before = now


def drag_a_slider(page, app: str, shown: dict) -> None:
    """A hand on the open explorer's main slider, 80 px to the left with the mouse, until the
    kernel has answered it: the headline no longer says what `shown` says, and stays.

    (A clicker pressed before the page has sent the drag's last value, which ipywidgets holds
    back until the kernel has answered the one before, would see that value arrive after
    the step: a hand and a clicker at once, which a class does not see.)"""
    slider = {"depth": "tinyinit-gain", "residual": "tinyinit-blocks"}.get(app)
    if slider is None:
        return
    handle = page.locator(f".tinyinit-view:visible .{slider} .noUi-handle")
    box = handle.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] / 2, y)
    page.mouse.down()
    page.mouse.move(box["x"] - 80, y, steps=4)
    page.mouse.up()
    deadline = time.monotonic() + 30
    while not kernel_has_the_slider(what_is_shown(page, app), shown, app):
        assert time.monotonic() < deadline, f"the kernel never took the drag on {slider}"
        time.sleep(0.1)


def kernel_has_the_slider(now: dict, shown: dict, app: str) -> bool:
    """Whether the kernel has drawn the value the page's slider holds, moved from `shown`'s:
    the gain in the depth explorer's caption, the blocks in the residual stream's readout."""
    if now["headline"] == shown["headline"]:
        return False
    if app == "depth":
        slider = next(s for s in now["sliders"] if s.startswith("gain="))
        kernel = re.search(r"\(gain ([0-9.]+)", now["caption"][0])
        return kernel is not None and abs(float(kernel[1]) - float(slider[5:])) < 6e-4
    slider = next(s for s in now["sliders"] if s.startswith("blocks N="))
    kernel = re.search(r"N = (\d+) blocks", now["readout"][0])
    return kernel is not None and kernel[1] == slider[9:]


def test_every_step_shown_again_from_every_other_shows_what_it_showed_first(voila, browser):
    # From every step to every other, by the clicker's keys after a hand has dragged a slider,
    # then by the menu and the step buttons: the page's controls follow the kernel, and the
    # step shows the controls, headline and plot it showed the first time.
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    console = ConsoleLog(page)
    from tinyinit.present import Presentation

    steps = Presentation.every_step(None)
    apps = [PRESETS[name].steps[k].app for name, k in steps]
    started = time.monotonic()
    try:
        page.goto(voila.url, timeout=120_000)
        page.locator(".tinyinit-present.tinyinit-warm").wait_for(timeout=120_000)
        first = []
        for (name, k), app in zip(steps, apps):  # the first time, by the clicker
            page.keyboard.press("PageDown")
            wait_for_says(page, says(name, k), one_line=False)
            # Quiet for 1.5 s: on a busy machine the first step's figure is drawn once before
            # the page has reported its tab's area, and again at that area a second later.
            first.append(settled(page, app, quiet=1.5))
        walk = every_ordered_pair(len(steps))
        at = len(steps) - 1
        page.keyboard.press("Home")
        wait_until_shown(page, first[0], apps[0])
        at = 0
        for way in ("key", "menu"):
            print(f"first time and {way}s from {time.monotonic() - started:.0f} s")
            for to in walk[1:]:
                if way == "key":  # a hand on a slider, then the clicker
                    drag_a_slider(page, apps[at], first[at])
                if way == "key":
                    for _ in range(abs(to - at)):
                        page.keyboard.press("PageDown" if to > at else "PageUp")
                else:
                    name, k = steps[to]
                    if name != steps[at][0]:  # its first step, then its own buttons
                        choose(page.locator(".tinyinit-preset select"), name)
                        wait_for_says(page, says(name), one_line=False)
                    if k or name == steps[at][0]:
                        label = PRESETS[name].steps[k].label
                        page.locator(".tinyinit-step button", has_text=label).click()
                try:
                    wait_until_shown(page, first[to], apps[to])
                except AssertionError as error:
                    raise AssertionError(f"{way}, {steps[at]} -> {steps[to]}: {error}") from None
                at = to
        print(f"every ordered pair of {len(steps)} steps, both ways: "
              f"{time.monotonic() - started:.0f} s")  # fmt: skip
        assert page_problems(page) == []
        errors = [m for m in console.messages if NET_ERROR not in m]
        assert errors == [], "\n".join(errors)
    except Exception:
        page.screenshot(path=str(voila.home / "failure-pairs.png"))
        print(voila.log_tail(60))
        raise
    finally:
        context.close()

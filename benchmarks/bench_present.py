"""How long does a step of the presentation app take, cold and warm, and how soon is every
step warm once the app's page opens?

    python benchmarks/bench_present.py [--rounds 3]            # in this process
    python benchmarks/bench_present.py --browser               # and in Voila and Chromium

In this process (no page, the figures rendered to PNG as the app does without a live
canvas), for each step of every demonstration in the clicker's order:

  - cold: a fresh `Presentation(warm=False)` walked step by step, each step computing
    its curves (`Presentation.state`) and redrawing: what a class met before the app
    computed its steps ahead;
  - warm: another fresh app after `Presentation.warm()`: each step a lookup and a redraw.

The ratio warm / cold per step is the number to read (absolute milliseconds vary
threefold between machines); so is `warm()`'s own time against a peer run here, the
plain `tinyinit.physics.propagation.simulate` of the first step (no cache), which is what one
cold step costs at least.

With --browser, `make present`'s Voila serves the app to Chromium at 1280x720: the time
from the page's navigation to the app on screen and to the app's tinyinit-warm class
(every step computed, in the background), then each step's time from the key press
(PageDown) to its caption and to the last picture drawn into its canvas. Target:
every step warm within one second of the app appearing on the page.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WARM_TARGET_S = 1.0


def walk(app) -> list[float]:
    """Seconds per step of the clicker's walk through every demonstration."""
    times = []
    for name, k in app.every_step():
        start = time.perf_counter()
        app.choose(name, k)
        times.append(time.perf_counter() - start)
    return times


def in_process(rounds: int) -> dict:
    import matplotlib

    matplotlib.use("Agg")  # the app without a page: every update rendered to a PNG
    from tinyinit.physics.propagation import simulate
    from tinyinit.present import PRESETS, Presentation

    cold, warm, warm_ups, peers = [], [], [], []
    for _ in range(rounds):
        app = Presentation(warm=False)
        cold.append(walk(app))
        app = Presentation(warm=False)
        start = time.perf_counter()
        app.warm()
        warm_ups.append(time.perf_counter() - start)
        warm.append(walk(app))
        first = PRESETS[next(iter(PRESETS))].steps[0].settings
        start = time.perf_counter()
        simulate(first["activation"], first["initializer"], gain=first["gain"],
                 n_layers=first["n_layers"], width=first["width"], seeds=first["seeds"],
                 batch=16)  # fmt: skip
        peers.append(time.perf_counter() - start)
    steps = app.every_step()
    per_step = [
        (name, k, statistics.median(c[i] for c in cold), statistics.median(w[i] for w in warm))
        for i, (name, k) in enumerate(steps)
    ]
    return {
        "steps": per_step,
        "warm_up": statistics.median(warm_ups),
        "peer": statistics.median(peers),
    }


CLOCK = """() => {
  const probe = { key: 0, caption: 0, draws: [] };
  window.tinyinitClock = probe;
  document.addEventListener("keydown", () => { probe.key = performance.now(); probe.caption = 0;
    probe.draws = []; }, true);
  const says = document.querySelector(".tinyinit-says .widget-html-content");
  new MutationObserver(() => { probe.caption = performance.now(); })
    .observe(says, { childList: true, characterData: true, subtree: true });
  const drawImage = CanvasRenderingContext2D.prototype.drawImage;
  CanvasRenderingContext2D.prototype.drawImage = function (...args) {
    if (probe.key) probe.draws.push(performance.now());
    return drawImage.apply(this, args);
  };
}"""


def in_browser(rounds: int) -> dict:
    from playwright.sync_api import sync_playwright

    from tests.browser.lab import chromium_path, launch_chromium
    from tests.browser.test_present import start_voila
    from tinyinit.present import PRESETS

    steps = [(n, k) for n, p in PRESETS.items() for k in range(len(p.steps))]
    shown, warm, keys = [], [], {step: ([], []) for step in steps}
    server = start_voila(Path(tempfile.mkdtemp(prefix="bench-present-")))
    try:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright, chromium_path())
            for _ in range(rounds):
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                start = time.perf_counter()
                page.goto(server.url, timeout=120_000)
                page.locator(".tinyinit-present").wait_for(timeout=120_000)
                shown.append(time.perf_counter() - start)
                page.locator(".tinyinit-present.tinyinit-warm").wait_for(timeout=120_000)
                warm.append(time.perf_counter() - start)
                page.wait_for_timeout(2000)  # the page has laid itself out
                page.evaluate(CLOCK)
                for step in steps:
                    says = PRESETS[step[0]].steps[step[1]].says
                    page.keyboard.press("PageDown")
                    page.wait_for_function(
                        "t => document.querySelector('.tinyinit-says').innerText === t", arg=says
                    )
                    page.wait_for_timeout(1000)  # every picture of the step is in
                    probe = page.evaluate("() => window.tinyinitClock")
                    keys[step][0].append(probe["caption"] - probe["key"])
                    keys[step][1].append(max(probe["draws"], default=probe["key"]) - probe["key"])
                page.close()
            browser.close()
    finally:
        server.stop()
    return {
        "shown": statistics.median(shown),
        "warm": statistics.median(warm),
        "keys": {s: tuple(statistics.median(v) for v in keys[s]) for s in steps},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="fresh apps per measurement")
    parser.add_argument("--browser", action="store_true", help="also in Voila and Chromium")
    args = parser.parse_args()
    print(__doc__.splitlines()[0])
    result = in_process(args.rounds)
    print(f"\nIn this process, median of {args.rounds} fresh apps (ms; ratio warm / cold):")
    print(f"  {'demonstration, step':<58} {'cold':>7} {'warm':>7} {'ratio':>6}")
    for name, k, cold, warm in result["steps"]:
        print(f"  {name[:50] + f', {k + 1}':<58} {cold * 1e3:7.1f} {warm * 1e3:7.1f} "
              f"{warm / cold:6.2f}")  # fmt: skip
    colds = [c for *_, c, _ in result["steps"]]
    warms = [w for *_, w in result["steps"]]
    print(f"  {'median step':<58} {statistics.median(colds) * 1e3:7.1f} "
          f"{statistics.median(warms) * 1e3:7.1f} "
          f"{statistics.median(warms) / statistics.median(colds):6.2f}")  # fmt: skip
    print(f"  {'slowest step':<58} {max(colds) * 1e3:7.1f} {max(warms) * 1e3:7.1f} "
          f"{max(warms) / max(colds):6.2f}")  # fmt: skip
    peer = result["peer"]
    print(
        f"\nwarm(), every step computed: {result['warm_up'] * 1e3:.0f} ms, "
        f"{result['warm_up'] / peer:.1f} x the plain simulate of one step ({peer * 1e3:.0f} ms)"
    )
    status = 0
    if args.browser:
        found = in_browser(args.rounds)
        late = found["warm"] - found["shown"]
        print(f"\nIn Chromium at 1280x720 (median of {args.rounds} pages):")
        print(
            f"  app on screen {found['shown']:.2f} s after navigation; every step warm "
            f"{late:+.2f} s after that (target: within {WARM_TARGET_S:.0f} s)"
        )
        print(f"  {'demonstration, step':<58} {'caption':>8} {'picture':>8}  (ms after the key)")
        for (name, k), (caption, picture) in found["keys"].items():
            print(f"  {name[:50] + f', {k + 1}':<58} {caption:8.0f} {picture:8.0f}")
        if late > WARM_TARGET_S:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())

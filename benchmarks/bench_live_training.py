"""Does watching the training slow it down, and does a control answer while the network trains?

    python benchmarks/bench_live_training.py [--seconds 4] [--rounds 3] [--moves 10]

A real kernel (this Python's ipykernel, through jupyter_client) runs the training explorer of
tinyinit.views.live_training under %matplotlib widget, as a notebook does; this script stands in
for the page: it tells both canvases that the page is there (ipympl's "initialized"), takes
every message the kernel sends (the pictures included) and moves controls by the messages a
page sends. Two ratios, each of two peers measured in the same kernel, in turn:

1. Steps per second, live against the same training without display. Live: the explorer
   plays "as fast as it can" for --seconds (a step, then the kernel's messages; a frame when
   one is due: the test set's forward pass, both figures, their pictures sent). Without
   display: the same Trainer stepping for --seconds in a plain loop on one BLAS thread.
   --rounds of each, alternately (a fresh run from step 0 before each); the ratio of the
   medians, per wall second and per CPU second of the kernel (its own work only, steady on a
   machine that others share). Target: the display costs at most a fifth of the kernel's
   time, live / without display >= 0.8 per CPU second.
2. A control's response, while training against idle: the time from the message that moves
   a control to the kernel's word that it has answered (the status line's new text) and to
   the loss figure's next picture, which shows it, for the learning rate (the same run, a
   new frame) and the initializer (a new run: new weights, its first frame), --moves times
   each, paused and while it trains; the ratio of the medians of the pictures (1 would be:
   training costs a control nothing). Idle, the frame is drawn at once; while training,
   after the step under way (so a burst of changes keeps to the display's budget too).
   Between two moves the script waits a random 0.1 to 0.3 s, so a move lands anywhere in a
   step or a frame.

Absolute steps per second and milliseconds vary threefold between machines; the ratios are
what is compared. The load average is printed: on a busy machine, run it twice.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import statistics
import threading
import time

from jupyter_client.manager import start_new_kernel

SETUP = """\
%matplotlib widget
import asyncio, json, time
from threadpoolctl import ThreadpoolController
from tinyinit.views.live_training import training_explorer

ex = training_explorer(speed=0)  # as fast as it can
blas = ThreadpoolController()
print(json.dumps({
    "canvases": [ex.plot.figure.canvas.model_id, ex.histogram.figure.canvas.model_id],
    "status": ex.status.model_id,
    "learning_rate": ex.learning_rate.model_id,
    "initializer": ex.initializer.model_id,
    "rates": [v for _, v in ex.learning_rate.options],
    "initializers": [v for _, v in ex.initializer.options],
}))
"""

LIVE = """\
ex.reset()
steps, frames = ex.trainer.steps, ex.frames
start, cpu = time.perf_counter(), time.process_time()
ex.play()
await asyncio.sleep({seconds})
ex.playing = False  # stop after this step; pause() would draw one frame more
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
await asyncio.sleep(0.05)
done = ex.trainer.steps - steps
print(json.dumps([done / elapsed, done / cpu, (ex.frames - frames) / elapsed, ex.frame_cpu]))
ex.pause()
"""

HEADLESS = """\
ex.reset()
trainer, steps = ex.trainer, ex.trainer.steps
start, cpu = time.perf_counter(), time.process_time()
with blas.limit(limits=1, user_api="blas"):
    while time.perf_counter() - start < {seconds}:
        trainer.step()
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps([(trainer.steps - steps) / elapsed, (trainer.steps - steps) / cpu]))
"""


class Page:
    """The kernel's other end: runs cells, sends a page's widget messages, hears the kernel."""

    def __init__(self):
        self.manager, self.client = start_new_kernel(kernel_name="python3")
        self.heard: queue.Queue = queue.Queue()
        self._listening = True
        self._listener = threading.Thread(target=self._listen, daemon=True)
        self._listener.start()

    def _listen(self) -> None:
        # Every message the kernel publishes is taken at once, as a page takes its pictures.
        while self._listening:
            try:
                self.heard.put(self.client.get_iopub_msg(timeout=0.2))
            except queue.Empty:
                continue

    def run(self, code: str, timeout: float = 300) -> str:
        """Execute a cell; what it printed (an error raises)."""
        msg_id = self.client.execute(code)
        printed, deadline = [], time.monotonic() + timeout
        while True:
            message = self.heard.get(timeout=max(deadline - time.monotonic(), 0.01))
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "stream":
                printed.append(content["text"])
            elif kind == "error":
                raise RuntimeError("\n".join(content["traceback"]))
            elif kind == "status" and content["execution_state"] == "idle":
                return "".join(printed)

    def send(self, model_id: str, data: dict) -> None:
        self.client.shell_channel.send(
            self.client.session.msg("comm_msg", {"comm_id": model_id, "data": data})
        )

    def set_state(self, model_id: str, state: dict) -> None:
        self.send(model_id, {"method": "update", "state": state, "buffer_paths": []})

    def drain(self) -> None:
        while True:
            try:
                self.heard.get_nowait()
            except queue.Empty:
                return

    def wait_for(self, model_id: str, heard, timeout: float = 30) -> None:
        """Until the kernel sends widget `model_id` a message that heard(message) accepts."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.heard.get(timeout=max(deadline - time.monotonic(), 0.01))
            content = message["content"]
            if message["msg_type"] == "comm_msg" and content.get("comm_id") == model_id:
                if heard(message):
                    return

    def stop(self) -> None:
        self._listening = False
        self._listener.join()
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def says(prefix: str):
    """A message that sets a widget's value to a text starting with `prefix`."""

    def heard(message) -> bool:
        value = message["content"]["data"].get("state", {}).get("value", "")
        return isinstance(value, str) and value.startswith(prefix)

    return heard


def picture(message) -> bool:
    """A canvas's picture (ipympl sends it as a binary buffer)."""
    return bool(message.get("buffers"))


def responses(page: Page, ids: dict, moves: int) -> dict[str, list[tuple[float, float]]]:
    """(seconds to the words, seconds to the picture) of each move: the learning rate and the
    initializer, in turn. The status line says the change is made; the loss figure's next
    picture, which follows it, shows it."""
    rate_index = {r: k for k, r in enumerate(ids["rates"])}
    init_index = {name: k for k, name in enumerate(ids["initializers"])}
    times: dict[str, list[tuple[float, float]]] = {"learning rate": [], "initializer": []}
    for move in range(moves):
        rate = (0.05, 0.02)[move % 2]
        initializer = ("kaiming_normal", "xavier_normal")[move % 2]
        for name, model, state, answer in (
            ("learning rate", ids["learning_rate"], {"index": rate_index[rate]},
             f"learning rate {rate:g} from step"),
            ("initializer", ids["initializer"], {"index": init_index[initializer]},
             "new run: relu, " + ("Kaiming" if initializer.startswith("kaiming") else "Xavier")),
        ):  # fmt: skip
            time.sleep(random.uniform(0.1, 0.3))
            page.drain()
            start = time.perf_counter()
            page.set_state(model, state)
            page.wait_for(ids["status"], says(answer))
            words = time.perf_counter() - start
            page.wait_for(ids["canvases"][0], picture)
            times[name].append((words, time.perf_counter() - start))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="of each round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--moves", type=int, default=10, help="of each control, each way")
    args = parser.parse_args()
    random.seed(0)
    print(__doc__.splitlines()[0])
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores\n")
    page = Page()
    try:
        ids = json.loads(page.run(SETUP))
        for canvas in ids["canvases"]:  # the page is there: pictures drawn and sent at once
            page.send(canvas, {"method": "custom", "content": {"type": "initialized"}})
        page.run("ex.step(3)")  # the first frames, drawn whole

        live, live_cpu, headless, headless_cpu, fps, frame_ms = [], [], [], [], [], []
        for _ in range(args.rounds):
            rate, per_cpu, frames, frame = json.loads(page.run(LIVE.format(seconds=args.seconds)))
            live.append(rate)
            live_cpu.append(per_cpu)
            fps.append(frames)
            frame_ms.append(1e3 * frame)
            rate, per_cpu = json.loads(page.run(HEADLESS.format(seconds=args.seconds)))
            headless.append(rate)
            headless_cpu.append(per_cpu)
        median = statistics.median
        print(f"1. Steps per second ({args.rounds} rounds of {args.seconds:g} s each, in turn):")
        for name, wall, cpu in (("live", live, live_cpu), ("without display", headless,
                                                             headless_cpu)):  # fmt: skip
            rounds = ", ".join(f"{r:.0f}" for r in wall)
            print(
                f"   {name}: {rounds} (median {median(wall):.0f}); per CPU second of the "
                f"kernel {median(cpu):.0f}"
            )
        print(
            f"   live: {median(fps):.1f} frames a second, the last of {median(frame_ms):.0f} ms "
            "of the kernel's CPU"
        )
        ratio, cpu_ratio = median(live) / median(headless), median(live_cpu) / median(headless_cpu)
        verdict = "met" if cpu_ratio >= 0.8 else "MISSED"
        print(
            f"   live / without display = {ratio:.2f} a wall second, {cpu_ratio:.2f} a CPU second "
            f"of the kernel (target >= 0.80: {verdict})\n"
        )

        page.run("ex.pause(); ex.reset()")
        idle = responses(page, ids, args.moves)
        page.run("ex.play()")
        time.sleep(1.0)  # well into the run
        training = responses(page, ids, args.moves)
        page.run("ex.pause()")
        print(f"2. A control's response ({args.moves} moves each; median ms to its words, and")
        print("   to the new picture of the loss figure):")
        for name in idle:
            (still_words, still), (moving_words, moving) = (
                [median(t[k] for t in times[name]) for k in (0, 1)] for times in (idle, training)
            )
            worst = max(t[1] for t in training[name])
            print(
                f"   {name:<14} idle {1e3 * still_words:5.0f}, {1e3 * still:5.0f}; while training "
                f"{1e3 * moving_words:5.0f}, {1e3 * moving:5.0f} (slowest {1e3 * worst:.0f}): "
                f"picture while training / idle = {moving / still:.2f}"
            )
        print(
            "\nlive: steps a second while playing, frames drawn and sent; without display: the"
            "\nsame Trainer's steps in a loop. A CPU second is the kernel's own (its threads"
            "\nincluded): steady where other work shares the cores, the target's measure; a wall"
            "\nsecond is what a student sees. response: from the message that moves the control"
            "\nto the status line's new text, and to the loss figure's next picture."
        )
    finally:
        page.stop()


if __name__ == "__main__":
    main()

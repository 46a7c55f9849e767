"""The training explorer driven from code: play, pause, step, reset, pin, and controls moved
while it trains; what it shows is what tinyinit.networks computes, and it says so in
words."""

from __future__ import annotations

import asyncio
import math
import re
import subprocess
import sys
import threading
import time

import matplotlib

matplotlib.use("Agg")

import ipywidgets as widgets  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from event_loop import in_event_loop, without_event_loop  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from tinyinit import PCG32, kaiming_normal, xavier_normal  # noqa: E402
from tinyinit.networks.digits import load_digits_split  # noqa: E402
from tinyinit.networks.mlp import evaluate, init_params  # noqa: E402
from tinyinit.networks.training import train  # noqa: E402
from tinyinit.views.a11y import LIVE, Accessible  # noqa: E402
from tinyinit.views.live_training import (  # noqa: E402
    DISPLAY_SHARE,
    MAX_PINS,
    SETTINGS,
    TRAINING_CONTROLS,
    TrainingExplorer,
    frame_wait,
    settings_line,
    step_due,
    training_explorer,
)

FIELDS = ("losses", "mean_square", "saturated", "dead", "grad_norm", "update_ratio")


@pytest.fixture(scope="module")
def digits():
    return load_digits_split()


@pytest.fixture
def ex(digits):
    """A small explorer: notebook 04's network, 4 hidden layers deep."""
    return TrainingExplorer(hidden_layers=4, digits=digits)


async def until(condition, timeout: float = 30.0) -> None:
    """Yield to the loop until condition() holds (the explorer trains meanwhile)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        await asyncio.sleep(0.01)


def pick_in_page(dropdown, value) -> None:
    """What the page sends when a student picks `value` from a menu: its index."""
    values = [v for _, v in dropdown.options]
    dropdown.set_state({"index": values.index(value)})


def all_widgets(root) -> list:
    found, stack = [], [root]
    while stack:
        widget = stack.pop()
        found.append(widget)
        stack.extend(getattr(widget, "children", ()))
    return found


# --- what it shows is what training computes -------------------------------------------------


def test_the_default_trains_notebook_04s_xavier_network_bit_for_bit(digits):
    ex = training_explorer(digits=digits)
    s = ex.run_settings
    assert (s["initializer"], s["gain"], s["activation"], s["optimizer"]) == (
        "xavier_normal", 1.0, "relu", "sgd",
    )  # fmt: skip
    assert (s["learning_rate"], s["hidden_layers"], ex.seed) == (0.02, 20, 0)
    ex.step(200)
    # Notebook 04's run: the same weights, minibatches and steps.
    params = init_params([64] + [64] * 20 + [10], lambda z, r: xavier_normal(z, 1.0, r), PCG32(0))
    run = train(params, digits.x_train, digits.labels_train, "relu", lr=0.02, steps=200)
    mine = ex.trainer.run()
    for field in FIELDS:
        np.testing.assert_array_equal(getattr(mine, field), getattr(run, field))
    test = evaluate(run.params, digits.x_test, digits.labels_test, "relu")
    assert ex.accuracy == test.accuracy < 0.2  # Xavier + ReLU + SGD: near chance
    assert ex.test_steps == [0, 200] and ex.test_losses[-1] == test.loss
    assert f"test accuracy {100 * test.accuracy:.0f}%" in ex.status.value
    assert ex.status.value.startswith("took 200 steps: step 200: train loss")


def test_kaiming_learns_where_xavier_does_not_and_the_gain_follows_the_activation(ex):
    ex.initializer.value = "kaiming_normal"
    assert ex.gain.value == math.sqrt(2) and ex.run_settings["gain"] == math.sqrt(2)
    ex.activation.value = "tanh"
    assert ex.gain.value == pytest.approx(5 / 3)
    ex.activation.value = "relu"
    ex.step(100)
    assert ex.accuracy > 0.5
    ex.initializer.value = "xavier_normal"  # Xavier's gain is 1, whatever the activation
    assert ex.gain.value == 1.0 and ex.trainer.steps == 0


def test_the_figures_show_the_runs_numbers(ex):
    ex.step(30)
    curves = ex.curves()
    np.testing.assert_array_equal(curves.losses, ex.trainer.run().losses)
    np.testing.assert_array_equal(
        curves.update_ratio, np.median(ex.trainer.run().update_ratio[-20:], axis=0)
    )
    assert len(ex.plot.train_line.get_xdata()) == 30
    np.testing.assert_array_equal(ex.plot.test_line.get_ydata(), ex.test_losses)
    assert len(ex.plot.ratio_line.get_ydata()) == 5  # 4 hidden layers and the output layer
    # The histograms: the test set's activations at the layers named in their caption (on one
    # BLAS thread, as the explorer computes them: another splits the sums otherwise).
    with threadpool_limits(limits=1, user_api="blas"):
        h = evaluate(ex.trainer.params, ex.digits.x_test, ex.digits.labels_test, "relu").forward.h
    assert ex.layers == [1, 2, 3, 4]
    for layer in ex.layers:
        np.testing.assert_array_equal(ex.samples[layer], h[layer].ravel())
    assert "at layers 1, 2, 3, 4 on the 449 test digits, step 30" in ex.histogram_caption.value
    rms = math.sqrt(np.mean(h[4] ** 2))
    assert f"{rms:.3g}" in ex.histogram_caption.value
    assert settings_line(ex.run_settings) in ex.caption.value


# --- acting: step, reset, pin -----------------------------------------------------------------


def test_reset_starts_the_same_run_again(ex):
    ex.step(25)
    first = ex.trainer.losses
    ex.reset()
    assert ex.trainer.steps == 0 and ex.test_steps == [0]
    assert ex.status.value.startswith("reset: step 0:")
    ex.step(25)
    np.testing.assert_array_equal(ex.trainer.losses, first)


def test_a_pin_keeps_the_run_faded_and_the_caption_compares(ex):
    ex.step(40)
    ex.pin()
    assert "pinned run 1: relu, Xavier normal (gain 1)" in ex.status.value
    pinned_train, pinned_test, pinned_ratio = ex.plot.pin_lines[0]
    assert len(pinned_train.get_xdata()) == 40 and pinned_ratio.get_visible()
    assert all(bars.get_visible() for bars in ex.histogram.pin_bars[0])  # outlined histograms
    ex.initializer.value = "kaiming_normal"
    ex.step(40)
    assert "pin 1: relu, Xavier normal (gain 1)" in ex.caption.value
    assert "pin 1: step 40: train loss" in ex.caption.value
    assert len(ex.plot.train_line.get_xdata()) == 40  # the current run, not the pin
    ex.clear_pins()
    assert ex.pins == [] and not pinned_train.get_visible()
    assert not any(bars.get_visible() for bars in ex.histogram.pin_bars[0])
    assert "pin 1" not in ex.caption.value


def test_at_most_four_pins_the_oldest_first_out(ex):
    for gain in (0.5, 1.0, 1.5, 2.0, 2.5):
        ex.gain.value = gain
        ex.step(2)
        ex.pin()
    assert len(ex.pins) == MAX_PINS == 4
    assert [p.settings["gain"] for p in ex.pins] == [1.0, 1.5, 2.0, 2.5]


def test_pinned_histograms_are_outlined_only_beside_the_same_layers(ex):
    ex.step(3)
    ex.pin()
    ex.hidden_layers.value = 8  # layers 1, 3, 6, 8 now: the pin's 1-4 are not there
    assert ex.histogram.pins == [] and ex.plot.pins  # its loss and ratios still are
    ex.hidden_layers.value = 4
    assert [slot for slot, _ in ex.histogram.pins] == [0]


def test_apply_sets_several_controls_as_one_new_run(ex):
    runs = ex.runs
    ex.apply(dict(initializer="kaiming_normal", activation="tanh", optimizer="adam"))
    assert ex.runs == runs + 1
    s = ex.run_settings
    assert (s["gain"], s["learning_rate"]) == (pytest.approx(5 / 3), 1e-3)  # both followed
    ex.apply(dict(initializer="kaiming_normal", gain=1.0))  # an explicit gain wins
    assert ex.run_settings["gain"] == 1.0 and ex.runs == runs + 2
    with pytest.raises(
        ValueError, match=r"settings must be one of initializer, .*, speed, got 'depth'"
    ):
        ex.apply(dict(depth=3))


def test_a_diverging_run_stops_and_says_where(digits):
    ex = TrainingExplorer(initializer="normal_init", std=1.0, learning_rate=1.0, hidden_layers=5,
                          digits=digits)  # fmt: skip
    with np.errstate(all="ignore"):
        ex.step(30)
    t = ex.trainer.diverged_at
    assert t is not None and ex.trainer.steps == t < 30
    assert f"the loss of step {t + 1} is not finite" in ex.status.value
    assert "beyond the axis" in ex.caption.value  # its losses went above the loss axis


# --- playing: the kernel's event loop trains, and every control answers meanwhile -------------


def test_play_trains_between_messages_and_pause_stops_it(ex):
    ex.speed.value = 0  # as fast as it can

    async def scenario():
        ex.play()
        assert ex.playing and ex.play_button.value and ex.play_button.description == "pause"
        assert ex.status.value.startswith("training: relu, Xavier normal")
        frames = ex.frames
        await until(lambda: ex.trainer.steps >= 30 and ex.frames > frames)
        ex.pause()
        stopped = ex.trainer.steps
        assert ex.status.value.startswith(f"paused: step {stopped}:")
        await asyncio.sleep(0.2)
        assert ex.trainer.steps == stopped and not ex.playing
        assert ex.play_button.description == "play" and ex._task is None  # its loop ended
        ex.step_button.click()  # the step button: exactly one step, and where it is
        assert ex.trainer.steps == stopped + 1 and ex.test_steps[-1] == stopped + 1
        assert ex.status.value.startswith(f"took a step: step {stopped + 1}:")
        stopped += 1
        ex.play_button.value = True  # the button, as a click or the space bar
        await until(lambda: ex.trainer.steps > stopped)
        ex.play_button.value = False
        assert not ex.playing

    in_event_loop(scenario)
    assert ex.test_steps[-1] == ex.trainer.steps  # the last frame shows where it stopped


def test_a_pause_from_another_thread_shows_the_step_where_it_stopped(ex):
    """JupyterLab may deliver the buttons' messages on a kernel subshell, a thread of its own,
    while the loop trains on the kernel's main thread: a pause that comes in during a step
    waits for it, and the status, the caption and the histograms all name the same step.
    A play from that thread's loop moves the training there: one loop trains at a time."""
    ex.speed.value = 0
    pauses = []
    in_step = threading.Event()
    step = ex.trainer.step

    def slow_step():  # a step long enough that the message surely comes during it
        in_step.set()
        time.sleep(0.005)
        try:
            return step()
        finally:
            in_step.clear()

    ex.trainer.step = slow_step

    def pause_during_a_step():
        assert in_step.wait(timeout=10)
        pauses.append(pause_and_read())

    async def scenario():
        for _ in range(10):
            ex.play()
            subshell = threading.Thread(target=pause_during_a_step)
            subshell.start()
            while subshell.is_alive():  # the loop goes on training while the message comes
                await asyncio.sleep(0)
            subshell.join()
            steps, caption, status, histogram = pauses[-1]
            assert caption == status == histogram == steps, "they name different steps"
            await asyncio.sleep(0.02)
            assert ex.trainer.steps == steps, "a step was taken after the pause"
        # Play from a loop of another thread (a subshell's) while this loop's task lives: the
        # training moves there, and this loop's task ends, so that one loop trains.
        ex.play()
        await until(lambda: ex.trainer.steps > pauses[-1][0] + 2)
        first = ex._task
        other = asyncio.new_event_loop()
        subshell = threading.Thread(target=other.run_forever)
        subshell.start()
        try:
            second = await asyncio.wrap_future(
                asyncio.run_coroutine_threadsafe(in_other(ex.play), other)
            )
            assert second is not first and second.get_loop() is other and ex.playing
            await until(first.done)
            steps = ex.trainer.steps
            await until(lambda: ex.trainer.steps > steps + 2)  # trained on by the other loop
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(in_other(ex.pause), other))
            stopped = ex.trainer.steps
            await asyncio.sleep(0.2)
            assert not ex.playing and ex.trainer.steps == stopped
        finally:
            other.call_soon_threadsafe(other.stop)
            subshell.join(timeout=30)
            other.close()

    async def in_other(action):
        action()
        return ex._task

    def pause_and_read():
        ex.pause()
        caption = re.search(r"<br>step (\d+):", ex.caption.value)
        status = re.match(r"paused: step (\d+):", ex.status.value)
        histogram = re.search(r", step (\d+):", ex.histogram_caption.value)
        return ex.trainer.steps, int(caption[1]), int(status[1]), int(histogram[1])

    in_event_loop(scenario)


def test_a_play_trains_on_its_own_loop_when_the_last_one_does_not_turn(ex):
    """A loop that is running but does not turn (a test runner's, which turns only when its
    thread asks it to, as Playwright's does): a play there, then a play on a loop that turns,
    trains on the second."""
    ex.speed.value = 0
    stuck, release = asyncio.new_event_loop(), threading.Event()
    thread = threading.Thread(target=stuck.run_forever)
    thread.start()
    try:

        async def play_there():
            ex.play()

        asyncio.run_coroutine_threadsafe(play_there(), stuck).result(timeout=30)
        stuck.call_soon_threadsafe(release.wait)  # running, and turning no more
        assert ex._task.get_loop() is stuck

        async def scenario():
            ex.play()
            await until(lambda: ex.trainer.steps >= 3)
            ex.pause()

        in_event_loop(scenario)
    finally:
        release.set()
        stuck.call_soon_threadsafe(stuck.stop)
        thread.join(timeout=30)
        stuck.close()


def test_a_control_moved_while_training_starts_a_new_run_that_goes_on_playing(ex):
    ex.speed.value = 0

    async def scenario():
        ex.play()
        await until(lambda: ex.trainer.steps >= 20)
        # What the page sends when a student picks Kaiming: applied between two steps.
        pick_in_page(ex.initializer, "kaiming_normal")
        await until(lambda: ex.run_settings["initializer"] == "kaiming_normal", timeout=5)
        assert ex.run_settings["gain"] == math.sqrt(2) and ex.playing
        assert ex.status.value.startswith("new run: relu, Kaiming normal, fan_in (gain 1.41)")
        await until(lambda: ex.trainer.steps >= 20)  # the new run trains on
        trainer = ex.trainer
        pick_in_page(ex.learning_rate, 0.05)
        await until(lambda: ex.trainer.lr == 0.05, timeout=5)
        assert ex.trainer is trainer  # the same run, at the new rate
        assert ex.status.value.startswith("learning rate 0.05 from step")
        ex.pause()

    in_event_loop(scenario)


def test_a_drag_from_the_browser_is_one_new_run(ex):
    async def scenario():
        runs = ex.runs
        for gain in (1.1, 1.2, 1.3, 1.4):  # a slider dragged: a message per value
            ex.gain.set_state({"value": gain})
        assert ex.runs == runs  # deferred while the messages are still coming
        await asyncio.sleep(0)
        assert ex.runs == runs + 1 and ex.run_settings["gain"] == 1.4

    in_event_loop(scenario)
    runs = ex.runs
    ex.gain.value = 0.9  # from a notebook cell: at once
    assert ex.runs == runs + 1


def test_playing_waits_for_each_step_at_the_speed_chosen(ex, monkeypatch):
    # A clock of our own: every look at it is a millisecond of work, a wait passes at once.
    import tinyinit.views.live_training as live

    clock, waits, real_sleep = [100.0], [], asyncio.sleep

    def perf_counter():
        clock[0] += 0.001
        return clock[0]

    async def sleep(delay):
        waits.append(delay)
        clock[0] += delay
        await real_sleep(0)

    monkeypatch.setattr(live.time, "perf_counter", perf_counter)
    monkeypatch.setattr(live.asyncio, "sleep", sleep)

    async def scenario():
        ex.speed.value = 10  # steps a second
        ex.play(until=12)
        while ex.playing:
            await real_sleep(0)
        paced = list(waits)
        waits.clear()
        ex.speed.value = 0  # as fast as it can: never a wait
        ex.play(until=24)
        while ex.playing:
            await real_sleep(0)
        return paced

    paced = []
    in_event_loop(lambda: _returning(scenario, paced))
    # A step, then a wait to the next tenth of a second: less what the step took.
    assert len(paced) == 11 and all(0.08 < w < 0.1 for w in paced[1:]), paced
    assert waits and all(w == 0 for w in waits)
    assert ex.trainer.steps == 24


async def _returning(coroutine_function, into: list):
    into.extend(await coroutine_function())


def test_a_failure_while_playing_is_said_where_one_looks(ex):
    def broken():
        raise FloatingPointError("the step broke")

    ex.trainer.step = broken

    async def scenario():
        ex.play()
        with pytest.raises(FloatingPointError):
            await ex._task

    in_event_loop(scenario)
    assert not ex.playing and not ex.play_button.value
    assert "training stopped: FloatingPointError(&#x27;the step broke&#x27;)" in ex.status.value


def test_play_without_an_event_loop_says_what_to_do(ex):
    with pytest.raises(RuntimeError, match=r"running asyncio event loop.*use step\(n\)"):
        without_event_loop(ex.play)
    assert not ex.playing


def test_the_display_gets_at_most_its_share_of_the_kernel():
    for cost in (0.001, 0.005, 0.01, 0.02, 0.05, 0.2, 1.0):
        wait = frame_wait(cost)
        assert cost / (wait + cost) == pytest.approx(DISPLAY_SHARE)
    assert step_due(5.0, 5.001, 0) == 5.001  # as fast as it can: at once
    assert step_due(5.0, 5.01, 20) == 5.05
    assert step_due(5.0, 9.0, 20) == pytest.approx(8.9)  # a long stall is not made up


# --- words, keys and pictures -----------------------------------------------------------------


def test_every_control_says_what_it_does_and_is_in_the_layout(ex):
    shown = all_widgets(ex.app)
    for row in TRAINING_CONTROLS:
        control = getattr(ex, row.name)
        assert control in shown, row.name
        assert control.tooltip and len(control.tooltip) > 15, row.name
        assert control.description, row.name
    assert "tinyinit-training" in ex.app._dom_classes
    assert LIVE in ex.status._dom_classes  # a screen reader reads what happened
    assert any(isinstance(w, Accessible) for w in shown)
    assert set(SETTINGS) <= {row.name for row in TRAINING_CONTROLS}


def test_without_a_live_canvas_each_figure_is_a_picture_with_its_words(ex):
    assert isinstance(ex.plot_view, widgets.Image) and isinstance(ex.histogram_view, widgets.Image)
    before = ex.plot_view.value
    ex.step(5)
    assert ex.plot_view.value[:4] == b"\x89PNG" and ex.plot_view.value != before
    assert ex.plot_view.tooltip.startswith("Loss over the steps and update ratio per layer: step 5")
    assert ex.histogram_view.tooltip.startswith("Histograms of the activations at four layers")


def test_live_canvases_under_ipympl_blit_a_frame():
    code = (
        "import matplotlib; matplotlib.use('module://ipympl.backend_nbagg')\n"
        "import ipywidgets as w\n"
        "from tinyinit.views.live_training import training_explorer\n"
        "ex = training_explorer(hidden_layers=3)\n"
        "assert isinstance(ex.plot.figure.canvas, w.DOMWidget)\n"
        "assert ex.plot.figure.canvas in ex.app.children\n"
        "assert ex.histogram.figure.canvas in ex.app.children\n"
        "for plot in (ex.plot, ex.histogram):\n"
        "    c = plot.figure.canvas\n"
        "    c.send = lambda content, buffers=None: None\n"
        "    c._handle_message(c, {'type': 'initialized'}, [])\n"
        "draws = []\n"
        "ex.plot.figure.canvas.mpl_connect('draw_event', lambda e: draws.append(1))\n"
        "ex.step(1); ex.step(1)\n"
        "assert len(draws) <= 1, draws  # the frame kept: the second step blits its data\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", code],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.stdout.strip() == "ok", done.stderr


def test_kaiming_at_torch_gain_is_kaiming_normal(digits):
    ex = TrainingExplorer(initializer="kaiming_normal", hidden_layers=2, digits=digits)
    kaiming = init_params(
        [64, 64, 64, 10], lambda z, r: kaiming_normal(z, "fan_in", "relu", r), PCG32(0)
    )
    for (W, _), (K, _) in zip(ex.trainer.params, kaiming):
        np.testing.assert_array_equal(W, K)


@pytest.mark.parametrize("gain", [1.0, 0.5])
def test_lsuv_starts_from_the_networks_lsuv_on_the_first_training_examples(digits, gain):
    """The explorer's LSUV is tinyinit.networks.lsuv's: an orthonormal start from the run's
    seed, each layer rescaled on the first LSUV_EXAMPLES training examples to Var(z) = gain**2."""
    from tinyinit import orthogonal_init
    from tinyinit.networks.lsuv import lsuv
    from tinyinit.views.live_training import LSUV_EXAMPLES

    ex = TrainingExplorer(initializer="lsuv", activation="tanh", gain=gain, hidden_layers=3,
                          digits=digits)  # fmt: skip
    start = init_params([64, 64, 64, 64, 10], lambda z, r: orthogonal_init(z, 1.0, r), PCG32(0))
    seen = digits.x_train[:LSUV_EXAMPLES]
    expected = lsuv(start, seen, "tanh", gain=gain)
    for (W, _), (L, _) in zip(ex.trainer.params, expected.params):
        np.testing.assert_array_equal(W, L)
    np.testing.assert_allclose(expected.variances, gain**2, rtol=0.1)
    assert "LSUV" in ex.caption.value  # the run says how it started


def test_normalization_is_every_kind_of_the_network_and_rescues_xavier(digits):
    from tinyinit.networks.normalization import NORMS

    ex = TrainingExplorer(normalization="batch", digits=digits)
    assert [key for _, key in ex.normalization.options] == list(NORMS)
    ex.step(200)
    run = train(
        init_params([64] + [64] * 20 + [10], lambda z, r: xavier_normal(z, 1.0, r), PCG32(0)),
        digits.x_train, digits.labels_train, "relu", lr=0.02, steps=200, norm="batch",
    )  # fmt: skip
    np.testing.assert_array_equal(ex.trainer.losses, run.losses)
    with threadpool_limits(limits=1, user_api="blas"):
        test = evaluate(run.params, digits.x_test, digits.labels_test, "relu", norm=run.norm)
    assert ex.accuracy == test.accuracy > 0.6  # Xavier + BatchNorm learns: plain Xavier does not
    assert "BatchNorm" in ex.caption.value and "running statistics" in ex.histogram_caption.value
    ex.normalization.value = "layer"
    assert ex.trainer.norm.kind == "layer" and ex.trainer.steps == 0


def test_play_until_a_step_stops_there_and_says_so(ex):
    ex.speed.value = 0

    async def scenario():
        ex.play(until=25)
        await until(lambda: not ex.playing)
        assert ex.trainer.steps == 25 and not ex.play_button.value
        assert ex.status.value.startswith("stopped at step 25: step 25:")
        with pytest.raises(ValueError, match="until must be an integer >= 1, got 0"):
            ex.play(until=0)
        assert not ex.playing

    in_event_loop(scenario)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"initializer": "he"}, "initializer must be one of xavier_uniform, "),
        ({"activation": "softplus"}, "activation must be one of linear, relu, "),
        ({"optimizer": "rmsprop"}, "optimizer must be one of sgd, adam, got 'rmsprop'"),
        ({"normalization": "group"}, "normalization must be one of none, batch, layer"),
        ({"speed": 7}, "speed must be one of 10, 30, 100, 0, got 7"),
        ({"gain": -1.0}, "gain must be a finite real number >= 0, got -1.0"),
        ({"std": 0.0}, "std must be a finite real number > 0, got 0.0"),
        ({"learning_rate": 0}, "learning_rate must be a finite real number > 0, got 0"),
        ({"hidden_layers": 2.0}, "hidden_layers must be an integer >= 1, got 2.0"),
    ],
)
def test_a_bad_start_value_is_refused_by_name(digits, settings, message):
    with pytest.raises(ValueError) as info:
        TrainingExplorer(digits=digits, **settings)
    assert message in str(info.value)


def test_a_start_value_beyond_a_controls_range_widens_it(digits):
    ex = TrainingExplorer(initializer="normal_init", std=1e-4, gain=5.0, learning_rate=0.07,
                          hidden_layers=2, digits=digits)  # fmt: skip
    assert (ex.gain.value, ex.std.value, ex.learning_rate.value) == (5.0, 1e-4, 0.07)
    assert ex.run_settings["learning_rate"] == ex.trainer.lr == 0.07
    assert np.std(ex.trainer.params[0][0]) < 2e-4  # the weights have the std asked for

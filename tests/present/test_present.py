"""Presentation mode without a browser: each preset shows what its name promises."""

from __future__ import annotations

import html
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from event_loop import in_event_loop, without_event_loop
from scripts_loader import ROOT

from tinyinit.present import (
    PRESETS,
    PROJECTOR_FONTS,
    PROJECTOR_LINE_WIDTH,
    REPO_APP,
    RULE,
    SHARE_TITLE,
    SHARE_URL_VARIABLE,
    Look,
    Presentation,
    app_notebook,
    check_share_url,
    presentation,
    qr_svg,
    style_figure,
    voila_command,
)
from tinyinit.present.app import APPS
from tinyinit.views.naming import power_of_two


@pytest.fixture(scope="module")
def app():
    return Presentation()  # without a share URL, whatever the environment says


def test_the_classic_demonstrations_are_offered(app):
    assert list(PRESETS) == [
        "Xavier + ReLU: collapse",
        "Kaiming + ReLU: kept",
        "tanh: gain 1 vs 5/3",
        "Residual stream: with and without 1/sqrt(2N)",
        "Xavier vs Kaiming + ReLU",
        "Xavier + ReLU: it does not learn",
    ]
    assert set(PRESETS) <= set(app.preset.options)


def test_xavier_relu_collapses_and_kaiming_keeps(app):
    app.choose("Xavier + ReLU: collapse")
    assert app.tabs.selected_index == 0
    assert app.depth.initializer.value == "xavier_uniform" and app.depth.gain.value == 1.0
    # Halved per layer: about 2**-20 after 20 layers, in theory and measured.
    assert app.depth.result.theory_end == pytest.approx(2.0**-20, rel=1e-9)
    assert app.depth.result.measured_end < 2.0**-18

    app.choose("Kaiming + ReLU: kept")
    assert app.depth.initializer.value == "kaiming_normal"
    assert app.depth.gain.value == pytest.approx(math.sqrt(2.0), abs=1e-12)
    assert app.depth.result.theory_end == pytest.approx(1.0, rel=1e-9)
    assert 0.25 < app.depth.result.measured_end < 4
    assert "theory 1" in app.depth.readout.value


def test_tanh_gain_1_drains_and_5_3_settles(app):
    app.choose("tanh: gain 1 vs 5/3")
    assert app.step.options == ("gain 1", "gain 5/3")
    assert (app.depth.activation.value, app.depth.gain.value) == ("tanh", 1.0)
    drained = app.depth.result.theory_end
    app.step.index = 1  # the second button, as a click would
    assert app.depth.gain.value == pytest.approx(5 / 3)
    settled = app.depth.result.theory_end
    # Module card: about 0.026 after 20 layers with gain 1, near 0.42 with 5/3.
    assert drained == pytest.approx(0.026, abs=0.003)
    assert settled == pytest.approx(0.42, abs=0.03)
    # The demonstration ends with both curves on one plot: gain 1 pinned under 5/3.
    [pinned] = app.depth.pins
    assert (pinned.activation, pinned.gain, pinned.theory_end) == ("tanh", 1.0, drained)
    assert "gain 1.67 ends 2^" in app.depth.readout.value
    app.step.index = 0  # back to the first step: nothing pinned
    assert app.depth.pins == []


def test_xavier_against_kaiming_ends_with_both_curves(app):
    app.choose("Xavier vs Kaiming + ReLU", step=1)
    [xavier] = app.depth.pins
    assert xavier.initializer == "xavier_uniform"
    assert app.depth.result.initializer == "kaiming_normal"
    assert len(app.depth.plot.pin_lines[0].get_xdata()) == 21  # drawn, layers 0 .. 20
    assert "above Xavier (pin 1)" in app.depth.readout.value
    app.choose("Xavier + ReLU: collapse")  # another demonstration starts clean
    assert app.depth.pins == []


def test_residual_stream_grows_without_the_scaling_and_not_with_it(app):
    app.choose("Residual stream: with and without 1/sqrt(2N)")
    assert app.tabs.selected_index == 1
    assert (app.residual.n_layers.value, app.residual.scaling.value) == (48, False)
    grown = app.residual.final_variance
    app.step.index = 1
    assert app.residual.scaling.value is True
    kept = app.residual.final_variance
    assert grown == pytest.approx(1 + 2 * 48, rel=0.1)  # 1 + 2N
    assert kept == pytest.approx(2.0, rel=0.1)  # Var(x0) + 1
    assert "1/√(2N)" in app.says.value
    # Both curves end on one plot, on the y axis of the unscaled one.
    assert app.residual.both.value is True
    assert app.residual.other_line.get_ydata()[-1] == pytest.approx(grown)
    assert app.residual.ax.get_ylim()[1] > grown


def test_every_caption_fits_one_line_on_a_projector():
    # At 24 px, 95 characters fill the 1250 px a 1280x720 screen leaves (the browser
    # tests measure it); a longer caption would be cut off in front of the class.
    too_long = [s.says for p in PRESETS.values() for s in p.steps if len(s.says) > 95]
    assert too_long == []


def test_one_preset_costs_one_redraw(app):
    app.choose("Xavier + ReLU: collapse")
    before = app.depth.updates
    app.choose("Kaiming + ReLU: kept")  # initializer, gain: still one update
    assert app.depth.updates == before + 1


class PageRecorder:
    """A widget's comm that keeps the states the kernel sends the page."""

    kernel = "a kernel"
    comm_id = "page"

    def __init__(self):
        self.sent: list[dict] = []

    def send(self, data, buffers=None):
        self.sent.append(data["state"])

    def on_msg(self, callback):
        pass


def test_a_step_tells_the_page_each_control_once_as_the_step_leaves_it():
    # Choosing Kaiming while tanh is still chosen sets the gain to 5/3 on the way to √2:
    # a page told 5/3 answers it (its slider holds 1.666666666666667) after the kernel
    # has moved on, and that answer must never reach the kernel as the gain.
    app = Presentation(warm=False)
    app.choose("tanh: gain 1 vs 5/3")
    pages = {name: PageRecorder() for name in ("gain", "initializer", "activation")}
    for name, page in pages.items():
        getattr(app.depth, name).comm = page
    app.choose("Kaiming + ReLU: kept")
    assert [s["value"] for s in pages["gain"].sent] == [2**0.5]
    assert [s["index"] for s in pages["activation"].sent] == [
        app.depth.activation.options.index("relu")
    ]
    assert len(pages["initializer"].sent) == 1
    app.depth.gain.set_state({"value": 1.666666666666667})  # the answer to a 5/3 of before
    assert app.depth.gain.value == 2**0.5 and app.depth.result.gain == 2**0.5


def test_controls_stay_live_after_a_preset(app):
    app.choose("Kaiming + ReLU: kept")
    app.depth.n_layers.value = 50
    assert app.depth.result.n_layers == 50
    assert app.depth.readout.value.startswith("layer 50:")


def test_figures_use_large_type(app):
    for figure in (app.depth.figure, app.residual.figure):
        ax = figure.axes[0]
        assert ax.xaxis.label.get_fontsize() >= 16
        assert all(t.get_fontsize() >= 14 for t in ax.get_xticklabels())
    # The title is rewritten at every update; the size must survive that.
    app.depth.n_layers.value = 21
    assert app.depth.figure.axes[0].title.get_fontsize() >= 16


def test_style_figure_reaches_legends_and_notes():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    ax.plot([0, 1], label="a")
    ax.legend()
    fig.legend(["b"])
    fig.text(0, 0, "note")
    style_figure(fig)
    sizes = [t.get_fontsize() for t in ax.get_legend().get_texts() + fig.legends[0].get_texts()]
    assert min(sizes) >= 14 and fig.texts[0].get_fontsize() >= 14


def test_committed_app_is_the_generated_one():
    committed = nbformat.read(REPO_APP, as_version=4)
    generated = app_notebook()
    assert [(c.cell_type, c.source) for c in committed.cells] == [
        (c.cell_type, c.source) for c in generated.cells
    ]
    assert all(not c.get("outputs") for c in committed.cells)


# --- the assets: files shipped with the package ---------------------------------------------------

ASSETS = ROOT / "tinyinit" / "present"


def test_the_clicker_module_parses_as_javascript(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the clicker's keys.js is not checked here")
    module = tmp_path / "keys.mjs"  # .mjs: parsed as the ES module anywidget loads it as
    shutil.copyfile(ASSETS / "keys.js", module)
    run = subprocess.run([node, "--check", str(module)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


def test_the_style_sheet_names_every_size_the_look_fills_in():
    look = Look.for_page(1280, 720, top=150)
    template = (ASSETS / "projector.css").read_text(encoding="utf-8")
    named = set(re.findall(r"\$\{(\w+)\}", template))
    assert named == set(look.sizes()) and "$" not in look.css()


def test_make_present_runs_the_present_command():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\npresent:", 1)[1].split("\n\n", 1)[0]
    assert "-m tinyinit present" in recipe


def test_voila_command_hides_code_and_tracebacks():
    command = voila_command(Path("app.ipynb"), port=9999, browser=False)
    assert command[:3] == [sys.executable, "-m", "tinyinit.present.server"]  # Voila's own
    assert "--VoilaConfiguration.strip_sources=True" in command
    assert "--VoilaConfiguration.show_tracebacks=False" in command
    assert "--no-browser" in command and command[-1] == "app.ipynb"


def test_present_help_names_its_options():
    run = subprocess.run(
        [sys.executable, "-m", "tinyinit", "present", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0
    for option in ("--port", "--ip", "--no-browser", "--share-url"):
        assert option in run.stdout


# --- the clicker: step by step through every demonstration -------------------------------------


def every_step() -> list[tuple[str, str]]:
    return [(name, step.label) for name, p in PRESETS.items() for step in p.steps]


def where(app) -> tuple[str, str]:
    return app.preset.value, app.step.value


# Walks through a training demonstration run where no event loop does (a script's case: it
# shows its step 0 and does not play), in a thread of their own (see event_loop).


def test_next_walks_every_step_of_every_demonstration_in_order(app):
    def walk():
        app.preset.value = "choose a demonstration"
        walked = []
        for _ in every_step():
            app.next()
            walked.append(where(app))
        assert walked == every_step()
        runs, steps = app.training.runs, app.training.trainer.steps
        app.next()  # past the end: the last step stays on screen, its run not started again
        assert where(app) == every_step()[-1]
        assert (app.training.runs, app.training.trainer.steps) == (runs, steps)

    without_event_loop(walk)


def test_a_training_step_shown_again_starts_its_run_again_from_step_0(app):
    def walk():
        learn = "Xavier + ReLU: it does not learn"
        app.choose(learn)
        app.training.step(5)
        app.choose("Kaiming + ReLU: kept")
        app.choose(learn)  # the same network as the run left paused at step 5
        assert app.training.trainer.steps == 0
        assert app.training.run_settings["initializer"] == "xavier_normal"

    without_event_loop(walk)


def test_previous_walks_back_to_the_first_step(app):
    def walk():
        app.choose(list(PRESETS)[-1], step=len(PRESETS[list(PRESETS)[-1]].steps) - 1)
        walked = [where(app)]
        for _ in every_step()[1:]:
            app.previous()
            walked.append(where(app))
        assert walked == every_step()[::-1]
        app.previous()
        assert where(app) == every_step()[0]

    without_event_loop(walk)


def test_a_step_changes_the_caption_and_the_plot(app):
    app.choose("Xavier + ReLU: collapse")
    caption, end = app.says.value, app.depth.result.measured_end
    app._on_key(app.keys, {"step": 1}, [])  # PageDown, as the page sends it
    assert app.preset.value == "Kaiming + ReLU: kept"
    assert app.says.value != caption and app.depth.result.measured_end != end
    app._on_key(app.keys, {"step": -1}, [])  # PageUp
    assert app.says.value == caption
    app._on_key(app.keys, {"something": "else"}, [])  # anything else is ignored
    assert app.preset.value == "Xavier + ReLU: collapse"


def test_choose_names_a_step_that_is_not_there(app):
    with pytest.raises(
        ValueError, match=r"step of 'Kaiming \+ ReLU: kept' must be an integer from 0 to 0, got 1"
    ):
        app.choose("Kaiming + ReLU: kept", step=1)


# --- the layout: the plot in view on a projector ------------------------------------------------


@pytest.mark.parametrize(("width", "height", "top"), [(1280, 720, 134), (1920, 1080, 172)])
def test_the_plot_takes_a_third_of_a_projector_and_stays_on_it(width, height, top):
    look = Look.for_page(width, height, top)
    canvas_w, canvas_h = look.canvas_px
    assert canvas_w * canvas_h >= width * height / 3
    assert canvas_w + look.side_px <= width and top + canvas_h <= height


def test_type_grows_with_the_screen_and_not_past_one_and_a_half():
    assert Look.for_page(1280, 720, 150).font_px == 20
    assert Look.for_page(1920, 1080, 200).font_px == 30
    assert Look.for_page(3840, 2160, 300).font_px == 30
    assert Look.for_page(1024, 600, 150).font_px == 20  # never smaller than at 1280x720


def test_the_page_size_sent_by_the_browser_resizes_plots_and_type():
    app = Presentation()
    app.keys.page = {"width": 1920, "height": 1080, "top": 172}
    look = Look.for_page(1920, 1080, 172)
    assert app.look == look and "font-size: 30px" in app.style.value
    for figure in (app.depth.figure, app.residual.figure):
        size = tuple(round(v) for v in figure.get_size_inches() * figure.dpi)
        assert size == look.canvas_px
        assert figure.axes[0].xaxis.label.get_fontsize() == PROJECTOR_FONTS["label"] * 1.5


def test_projector_lines_are_thick_and_markers_large(app):
    median = app.depth.plot.median_line
    assert median.get_linewidth() >= PROJECTOR_LINE_WIDTH and median.get_markersize() >= 9
    assert app.residual.measured_line.get_linewidth() >= PROJECTOR_LINE_WIDTH


def test_the_headline_is_the_last_layer_as_a_power_of_two(app):
    app.choose("Xavier + ReLU: collapse")
    exponent = math.log2(app.depth.result.measured_end)
    expected = f"layer 20: 2<sup>{exponent:.1f}</sup>".replace("-", "−")
    assert app.depth.headline.value.startswith(expected)
    assert "theory 2<sup>−20.0</sup>" in app.depth.headline.value


# --- the students' link -------------------------------------------------------------------------

SHARE = "https://hub.example.edu/hub/user-redirect/voila/render/tinyinit/apps/present.ipynb"


def test_the_share_url_gets_a_tab_with_its_qr_code_open_at_the_start():
    app = presentation(share_url=SHARE)
    assert app.tabs.titles[-1] == SHARE_TITLE and app.tabs.selected_index == 3
    qr, link = app.tabs.children[-1].children
    assert qr.value == qr_svg(SHARE) and qr.value.startswith("<svg")
    assert SHARE in link.value
    app.next()  # the first demonstration takes over the screen
    assert app.tabs.selected_index == 0


def test_the_share_url_comes_from_the_environment_the_command_sets(monkeypatch):
    import tinyinit.present

    built = []
    monkeypatch.setattr(tinyinit.present, "Presentation", lambda **kw: built.append(kw))
    monkeypatch.setenv(SHARE_URL_VARIABLE, SHARE)
    presentation()
    presentation(share_url="https://example.org/")  # given: it wins
    monkeypatch.delenv(SHARE_URL_VARIABLE)
    presentation()
    assert [kw["share_url"] for kw in built] == [SHARE, "https://example.org/", None]


def test_without_a_share_url_there_is_no_link_tab(app):
    assert app.share_url is None and list(app.tabs.titles) == [
        "Signal through depth",
        "Residual stream",
        "Training live",
    ]


BAD_URLS = ["hub.example.edu/x", "ftp://example.org/", "https://", "https://a b"]


@pytest.mark.parametrize("bad", BAD_URLS)
def test_a_share_url_that_is_no_web_address_is_refused(bad):
    with pytest.raises(ValueError, match=rf"share_url must be an http.*got {re.escape(repr(bad))}"):
        check_share_url(bad)


def test_present_passes_the_share_url_to_the_app(monkeypatch):
    import io

    import tinyinit.present
    from tinyinit import cli

    seen = {}

    def serve_voila(command, env):
        seen.update(command=command, env=env)
        return 0

    monkeypatch.setattr(tinyinit.present, "serve_voila", serve_voila)
    stderr = io.StringIO()
    assert cli.main(["present", "--no-browser", "--share-url", SHARE], stderr=stderr) == 0
    assert seen["env"][SHARE_URL_VARIABLE] == SHARE
    assert f"students open: {SHARE}" in stderr.getvalue()


def test_present_sets_how_long_a_closed_pages_kernel_lives(monkeypatch):
    import io

    import tinyinit.present
    from tinyinit import cli

    seen = {}
    monkeypatch.setattr(
        tinyinit.present, "serve_voila", lambda command, env: seen.update(c=command)
    )
    cli.main(["present", "--no-browser", "--cull-idle", "600"], stderr=io.StringIO())
    assert "--MappingKernelManager.cull_idle_timeout=600" in seen["c"]
    cli.main(["present", "--no-browser"], stderr=io.StringIO())
    assert "--MappingKernelManager.cull_idle_timeout=120" in seen["c"]  # the default


def test_present_refuses_a_bad_share_url():
    run = subprocess.run(
        [sys.executable, "-m", "tinyinit", "present", "--share-url", "hub.example.edu"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "--share-url must be an http:// or https:// address" in run.stderr


@pytest.mark.parametrize("name", ["gelu", "silu"])
def test_the_gain_note_beside_the_slider_says_gelu_and_silu_are_unstable_over_depth(name):
    from tinyinit.physics.gains import single_layer_gain
    from tinyinit.physics.mean_field import q_map_slope

    app = Presentation()
    explorer = app.depth
    with explorer.hold():
        explorer.initializer.value = "kaiming_normal"
        explorer.activation.value = name
    side = list(explorer.projector_view().children[1].children)
    note = explorer.gain_hint.value
    assert side.index(explorer.gain_hint) == side.index(explorer.gain) + 1  # beside the slider
    slope = q_map_slope(name, single_layer_gain(name), 1.0)
    assert "unstable over depth" in note and f"{slope:.3g} &gt; 1" in note
    end = explorer.result.theory[-1]  # the dashed curve's last point, in the note
    assert f"gives {end:.2g} at layer {explorer.n_layers.value}" in note


# --- every step computed before it is shown, on one axis, its curves named ------------------------


def depth_steps(name: str) -> list[int]:
    return [k for k, step in enumerate(PRESETS[name].steps) if step.app == "depth"]


@pytest.mark.parametrize("name", [n for n in PRESETS if len(depth_steps(n)) > 1])
def test_the_steps_of_a_demonstration_share_their_y_axis(app, name):
    limits = set()
    for k in depth_steps(name):
        app.choose(name, k)
        limits.add(app.depth.plot.ax.get_ylim())
    assert len(limits) == 1, limits


def test_kaiming_alone_is_drawn_on_the_axis_of_the_collapse(app):
    app.choose("Xavier + ReLU: collapse")
    collapse = app.depth.plot.ax.get_ylim()
    app.choose("Kaiming + ReLU: kept")
    # Seed noise of 0.7 to 1.5 is a flat line on 10^-7 .. 10, not a wobble on 10^-1 .. 10.
    assert app.depth.plot.ax.get_ylim() == collapse
    assert collapse[0] <= 1e-7 and collapse[1] >= 10


def test_the_caption_never_runs_ahead_of_its_plot():
    app = Presentation(warm=False)
    seen = []

    def on_caption(change):  # what the plot shows when the caption changes
        seen.append(
            (
                change["new"],
                app.tabs.selected_index,
                app.depth.result,
                app.residual.scaling.value,
                app.residual.final_variance,
            )
        )

    app.says.observe(on_caption, names="value")
    for _ in app.every_step():
        without_event_loop(app.next)  # a training step trains only where a loop runs
    assert len(seen) == len(app.every_step())
    for (says, tab, result, scaled, variance), (name, k) in zip(seen, app.every_step()):
        step = PRESETS[name].steps[k]
        assert says == html.escape(step.says)
        assert tab == APPS[step.app]
        if step.app == "depth":
            # the step's own curves, computed before the caption came
            np.testing.assert_array_equal(result.per_seed, app.state(name, k).per_seed)
        elif step.app == "residual":
            assert scaled is step.settings["scaled"]
            grown = 1 + 2 * step.settings["n_layers"]
            assert variance == pytest.approx(2.0 if scaled else grown, rel=0.1)


def test_once_warm_every_step_is_a_lookup(monkeypatch):
    app = Presentation(warm=False)
    app.warm()
    assert "tinyinit-warm" in app.app._dom_classes and app.warm_seconds > 0
    for explorer in (app.depth, app.residual):  # nothing is computed again
        monkeypatch.setattr(explorer, "result_for", lambda settings: pytest.fail("computed"))
    for name, k in app.every_step():
        without_event_loop(app.choose, name, k)
        if PRESETS[name].steps[k].app == "depth":
            np.testing.assert_array_equal(app.depth.result.per_seed, app.state(name, k).per_seed)


def test_the_kernel_warms_every_step_in_the_background():
    import asyncio

    async def open_app():
        app = Presentation()  # as in a kernel: an event loop runs
        assert app.warm_seconds is None  # not yet: the page is answered first
        turns = 0
        while app.warm_seconds is None and turns < 12_000:  # a loaded machine: up to 2 min
            await asyncio.sleep(0.01)
            turns += 1
        return app, turns

    app, turns = in_event_loop(open_app)  # the test runner may have a loop running here
    assert app.warm_seconds is not None
    assert turns > 1  # one step a turn: the loop answered in between
    assert set(app._states) == set(app.every_step())


def test_a_comparison_names_its_curves_on_the_plot_and_states_the_gap(app):
    app.choose("Xavier vs Kaiming + ReLU", step=1)
    plot = app.depth.plot
    pinned, current = plot.pin_names[0], plot.current_name
    assert pinned.get_visible() and current.get_visible()
    xavier, kaiming = app.depth.pins[0], app.depth.result
    assert pinned.get_text() == f"Xavier: {power_of_two(xavier.measured_end, markup='unicode')}"
    assert current.get_text().startswith("Kaiming: 2")
    gap = math.log2(kaiming.measured_end / xavier.measured_end)
    assert f"2<sup>{gap:.1f}</sup> above Xavier" in app.depth.headline.value
    app.choose("Xavier + ReLU: collapse")  # alone on the plot: no names
    assert not plot.pin_names[0].get_visible() and not plot.current_name.get_visible()


def test_the_residual_comparison_names_both_curves_and_states_the_gap(app):
    app.choose("Residual stream: with and without 1/sqrt(2N)", step=1)
    names = [n.get_text() for n in app.residual.names if n.get_visible()]
    assert [n.split(":")[0] for n in names] == ["with 1/√(2N)", "without 1/√(2N)"]
    assert app.residual.ax.get_legend() is None
    assert (
        "without 1/√(2N): " in app.residual.headline.value
        and "× more" in app.residual.headline.value
    )


def figure_inside(figure) -> bool:
    figure.canvas.draw()
    drawn = figure.get_tightbbox(figure.canvas.get_renderer())
    w, h = figure.get_size_inches()
    return drawn.x0 >= -0.01 and drawn.y0 >= -0.01 and drawn.x1 <= w + 0.01 and drawn.y1 <= h + 0.01


@pytest.mark.parametrize(("width", "height", "top"), [(1280, 720, 134), (1920, 1080, 200)])
def test_every_text_of_every_step_lies_inside_its_figure(width, height, top):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    app = Presentation(warm=False)
    app.fit(Look.for_page(width, height, top))
    for name, k in app.every_step():
        app.choose(name, k)
        figure = app.depth.figure if PRESETS[name].steps[k].app == "depth" else app.residual.figure
        FigureCanvasAgg(figure)  # a canvas of its own to measure on, as the page's would
        assert figure_inside(figure), (name, k)


def test_an_explorer_is_drawn_for_a_look_once(monkeypatch):
    # Each explorer lays itself out for the first look as it is made; the app, made with the
    # same look, and a page that asks for the look it has, draw nothing again.
    from matplotlib.figure import Figure

    from tinyinit.present.look import FIRST_LOOK

    draws = []
    draw = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda self, r: draws.append(self) or draw(self, r))
    app = Presentation(warm=False)
    assert app.look == FIRST_LOOK and all(app.explorer(a).look == FIRST_LOOK for a in APPS)
    figures = {id(f) for f in draws}
    made = len(draws)
    for name in APPS:
        app.explorer(name).fit(FIRST_LOOK)
    assert len(draws) == made
    app.fit(Look.for_page(1920, 1080, 200))
    assert len(draws) > made and {id(f) for f in draws[made:]} <= figures


def test_the_rule_is_in_the_app_as_large_as_the_caption(app):
    assert app.rule in app.app.children and app.rule.value == RULE
    css = app.style.value
    says = re.search(r"tinyinit-says \.widget-html-content \{ font-size: (\d+)px", css).group(1)
    rule = re.search(r"tinyinit-rule \.widget-html-content \{ font-size: (\d+)px", css).group(1)
    assert int(rule) >= int(says) >= 24


def test_home_and_end_go_to_the_first_and_the_last_step(app):
    app.choose("tanh: gain 1 vs 5/3", step=1)
    app._on_key(app.keys, {"step": "first"}, [])  # Home, as the page sends it
    assert where(app) == every_step()[0]
    app._on_key(app.keys, {"step": "last"}, [])  # End
    assert where(app) == every_step()[-1]


def test_the_room_under_the_plot_is_what_the_page_measured():
    app = Presentation(warm=False)
    app.keys.page = {"width": 1280, "height": 720, "top": 134, "below": 80}
    assert app.look == Look.for_page(1280, 720, 134, 80)
    assert app.look.canvas_px[1] == int(720 - 134 - 80 - 20)


# --- serving: idle kernels culled, the server stopped by SIGTERM as by Ctrl+C ---------------------


def test_voila_culls_the_kernels_of_closed_pages_and_keeps_open_ones():
    command = voila_command(Path("app.ipynb"), browser=False, cull_idle=60, cull_interval=10)
    assert "--MappingKernelManager.cull_idle_timeout=60" in command
    assert "--MappingKernelManager.cull_interval=10" in command
    assert "--MappingKernelManager.cull_connected=False" in command


SERVER = """\
import signal, sys, time
from pathlib import Path
Path(sys.argv[1]).write_text("started")
signal.signal(signal.SIGTERM, lambda *a: (Path(sys.argv[1]).write_text("stopped"), sys.exit(0)))
time.sleep(120)
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_serve_stops_its_server_when_it_is_asked_to_stop(tmp_path, sig):
    import signal
    import time

    import psutil

    mark = tmp_path / "server"
    script = (
        "import sys; from tinyinit.present.voila import serve_voila; "
        f"sys.exit(serve_voila([sys.executable, '-c', {SERVER!r}, {str(mark)!r}]))"
    )
    # Started with SIGINT ignored, as a background job is (and as some test runners leave
    # their workers): serve_voila must answer Ctrl+C all the same.
    parent = subprocess.Popen(
        [sys.executable, "-c", script],
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        deadline = time.monotonic() + 60
        while not (mark.exists() and mark.read_text() == "started"):
            assert time.monotonic() < deadline, "the server never started"
            time.sleep(0.05)
        [child] = psutil.Process(parent.pid).children()
        parent.send_signal(getattr(signal, sig))
        assert parent.wait(timeout=30) == 0
        assert mark.read_text() == "stopped"  # told to stop, and given the time to
        assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
    finally:
        parent.kill()
        parent.wait()


# --- training live: Xavier + ReLU does not learn, Kaiming does ---------------------------------

IT_DOES_NOT_LEARN = "Xavier + ReLU: it does not learn"


def test_xavier_does_not_learn_and_kaiming_learns_beside_its_pinned_run(app):
    without_event_loop(app.choose, IT_DOES_NOT_LEARN)
    training = app.training
    assert app.tabs.titles[app.tabs.selected_index] == "Training live"
    s = training.run_settings
    assert (s["initializer"], s["gain"], s["activation"], s["hidden_layers"]) == (
        "xavier_normal", 1.0, "relu", 20,
    )  # fmt: skip
    assert training.trainer.steps == 0 and not training.playing  # no event loop there: shown
    without_event_loop(app.next)  # Kaiming: Xavier's run, trained on to 300 steps, pinned
    (pinned,) = training.pins
    assert pinned.settings["initializer"] == "xavier_normal" and pinned.curves.steps == 300
    assert pinned.accuracy < 0.2 and abs(pinned.curves.test_losses[-1] - math.log(10)) < 0.05
    assert training.run_settings["gain"] == math.sqrt(2) and training.trainer.steps == 0
    training.step(300)
    assert training.accuracy > 0.7  # the same network, Kaiming's start: it learns the digits
    assert "pin 1: relu, Xavier normal (gain 1)" in training.caption.value
    assert f"pin 1: {100 * pinned.accuracy:.0f}% at step 300" in training.headline.value
    assert training.headline.value.startswith(f"test accuracy {100 * training.accuracy:.0f}%")


def test_the_run_watched_is_the_one_pinned(app):
    without_event_loop(app.choose, IT_DOES_NOT_LEARN)
    app.training.step(340)  # the class watched Xavier for 340 steps
    losses = app.training.trainer.losses
    without_event_loop(app.next)
    np.testing.assert_array_equal(app.training.pins[0].curves.losses, losses)
    without_event_loop(app.previous)  # back to Xavier alone: no pin, a new run
    assert app.training.pins == [] and app.training.trainer.steps == 0


def test_a_training_demonstration_plays_and_another_one_pauses_it(app):
    import asyncio

    async def walk():
        app.choose("Kaiming + ReLU: kept")
        app.choose(IT_DOES_NOT_LEARN)
        assert app.training.playing  # the kernel's event loop runs here: it trains
        for _ in range(3000):  # until it has taken a step (30 s at most)
            if app.training.trainer.steps:
                break
            await asyncio.sleep(0.01)
        assert app.training.trainer.steps > 0
        app.choose("Kaiming + ReLU: kept")
        assert not app.training.playing and app.tabs.selected_index == 0

    in_event_loop(walk)

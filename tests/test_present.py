"""Presentation mode without a browser: each preset shows what its name promises."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tinyinit.present import (
    PRESETS,
    REPO_APP,
    app_notebook,
    presentation,
    style_figure,
    voila_command,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def app():
    return presentation()


def test_the_classic_demonstrations_are_offered(app):
    assert list(PRESETS) == [
        "Xavier + ReLU: collapse",
        "Kaiming + ReLU: kept",
        "Xavier vs Kaiming + ReLU",
        "tanh: gain 1 vs 5/3",
        "Residual stream: with and without 1/sqrt(2N)",
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
    assert app.depth.initializer.value == "kaiming_fan_in"
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
    assert app.depth.result.initializer == "kaiming_fan_in"
    assert len(app.depth.plot.pin_lines[0].get_xdata()) == 21  # drawn, layers 0 .. 20
    assert "above Xavier uniform" in app.depth.readout.value
    app.choose("Xavier + ReLU: collapse")  # another demonstration starts clean
    assert app.depth.pins == []


def test_residual_stream_grows_without_the_scaling_and_not_with_it(app):
    app.choose("Residual stream: with and without 1/sqrt(2N)")
    assert app.tabs.selected_index == 1
    assert (app.residual.blocks.value, app.residual.scaling.value) == (48, False)
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


def test_one_preset_costs_one_redraw(app):
    app.choose("Xavier + ReLU: collapse")
    before = app.depth.updates
    app.choose("Kaiming + ReLU: kept")  # initializer, gain: still one update
    assert app.depth.updates == before + 1


def test_controls_stay_live_after_a_preset(app):
    app.choose("Kaiming + ReLU: kept")
    app.depth.depth.value = 50
    assert app.depth.result.n_layers == 50
    assert app.depth.readout.value.startswith("layer 50:")


def test_figures_use_large_type(app):
    for figure in (app.depth.figure, app.residual.fig):
        ax = figure.axes[0]
        assert ax.xaxis.label.get_fontsize() >= 16
        assert all(t.get_fontsize() >= 14 for t in ax.get_xticklabels())
    # The title is rewritten at every update; the size must survive that.
    app.depth.depth.value = 21
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


def test_make_present_runs_the_present_command():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\npresent:", 1)[1].split("\n\n", 1)[0]
    assert "-m tinyinit present" in recipe


def test_voila_command_hides_code_and_tracebacks():
    command = voila_command(Path("app.ipynb"), port=9999, browser=False)
    assert command[:3] == [sys.executable, "-m", "voila"]
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
    for option in ("--port", "--ip", "--no-browser"):
        assert option in run.stdout

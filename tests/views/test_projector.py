"""Figures for a room: curves named where they end, the labelled comparison, and
`python -m tinyinit figure --compare/--slide/--ylim` writing it with its text alternative."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tinyinit.physics.propagation import simulate
from tinyinit.views.naming import curve_name, curve_names, gap_exponent, gap_words, power_of_two
from tinyinit.views.plots import DepthPlot
from tinyinit.views.projector import (
    PROJECTOR_FONTS,
    PROJECTOR_LINE_WIDTH,
    accessible_svg,
    comparison_alt,
    comparison_figure,
    curve_end,
    end_label_artist,
    place_end_labels,
)
from tinyinit.views.style import log_limits

SVG = "{http://www.w3.org/2000/svg}"


def relu(initializer: str, **kw):
    gain = math.sqrt(2.0) if initializer.startswith("kaiming") else 1.0
    return simulate("relu", initializer, gain=gain, n_layers=20, width=64, seeds=2, **kw)


@pytest.fixture(scope="module")
def xavier_kaiming():
    return [relu("xavier_uniform"), relu("kaiming_normal")]


def inside(inner, outer, slack: float = 0.5) -> bool:
    return (
        inner.x0 >= outer.x0 - slack
        and inner.y0 >= outer.y0 - slack
        and inner.x1 <= outer.x1 + slack
        and inner.y1 <= outer.y1 + slack
    )


def drawn_inside(fig) -> bool:
    """Whether everything the figure draws (texts, ticks, names) lies inside it."""
    fig.canvas.draw()
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())  # inches
    return (
        drawn.x0 >= -0.01
        and drawn.y0 >= -0.01
        and drawn.x1 <= fig.get_figwidth() + 0.01
        and (drawn.y1 <= fig.get_figheight() + 0.01)
    )


# --- names and gaps -----------------------------------------------------------------------


def test_a_curve_is_named_by_what_tells_it_apart(xavier_kaiming):
    xavier, kaiming = xavier_kaiming
    assert (curve_name(xavier, kaiming), curve_name(kaiming, xavier)) == ("Xavier", "Kaiming")
    tanh = [simulate("tanh", "xavier_normal", gain=g, n_layers=5, width=32) for g in (1, 5 / 3)]
    assert curve_names(tanh) == ["gain 1", "gain 1.67"]
    deep = simulate("relu", "xavier_uniform", n_layers=30, width=64, seeds=2)
    assert curve_name(deep, xavier) == "depth 30"


def test_the_gap_is_the_log2_ratio_of_the_medians_where_both_end(xavier_kaiming):
    xavier, kaiming = xavier_kaiming
    expected = math.log2(kaiming.median[20] / xavier.median[20])
    assert gap_exponent(kaiming, xavier) == pytest.approx(expected)
    assert gap_exponent(xavier, kaiming) == pytest.approx(-expected)
    assert gap_words(kaiming, xavier, "Xavier") == f"2^{expected:.1f} above Xavier"
    assert gap_words(xavier, kaiming, "Kaiming") == f"2^{expected:.1f} below Kaiming"


def test_powers_of_two_say_overflow_and_underflow_in_words():
    assert power_of_two(math.inf) == "inf (overflow)"
    assert power_of_two(0.0, markup="html") == "0 (underflow)"
    assert power_of_two(2.0**-20.74) == "2^−20.7"


# --- names on the plot ----------------------------------------------------------------------


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_end_labels_sit_beside_their_curves_inside_the_axes_and_apart(direction):
    runs = [
        simulate("relu", i, gain=g, n_layers=20, width=64, seeds=2, direction=direction)
        for i, g in [("xavier_uniform", 1.0), ("xavier_uniform", 1.02), ("kaiming_normal", 1.41)]
    ]
    plot = DepthPlot()
    plot.update(runs[-1], draw=False)
    plot.ax.set_ylim(*log_limits(*[r.median for r in runs]))
    labels = [end_label_artist(plot.ax, "black", 14) for _ in runs]
    for label, name in zip(labels, curve_names(runs)):
        label.set_text(name)
    place_end_labels(plot.ax, labels, [curve_end(r) for r in runs])
    plot.figure.canvas.draw()
    renderer = plot.figure.canvas.get_renderer()
    boxes = [label.get_window_extent(renderer) for label in labels]
    axes = plot.ax.get_window_extent(renderer)
    assert all(inside(box, axes) for box in boxes)
    # The two Xavier curves end at almost the same place: their names do not overlap.
    for a in range(len(boxes)):
        for b in range(a + 1, len(boxes)):
            assert not boxes[a].overlaps(boxes[b]), (labels[a].get_text(), labels[b].get_text())
    # Each name stands within a few label heights of the end of its curve, on its side.
    end_x = 20 if direction == "forward" else 0
    for label, box, run in zip(labels, boxes, runs):
        x, y = plot.ax.transData.transform((end_x, run.measured_end))
        assert abs((box.y0 + box.y1) / 2 - y) < 4 * box.height, label.get_text()
        if direction == "forward":
            assert abs(box.x1 - x) < 10
        else:
            assert abs(box.x0 - x) < 10


# --- the comparison figure ----------------------------------------------------------------------


def test_the_comparison_names_each_curve_at_its_end_and_states_the_gap(xavier_kaiming):
    fig = comparison_figure(xavier_kaiming)
    ax = fig.axes[0]
    assert ax.get_legend() is None  # the names are on the curves
    names = [t.get_text() for t in ax.texts]
    assert names[0].startswith("Xavier: 2⁻²") and names[1].startswith("Kaiming: 2")
    gap = gap_exponent(*xavier_kaiming[::-1])
    gap_text = power_of_two(2.0**gap, markup="unicode")
    assert f"Kaiming ends {gap_text} above Xavier" in ax.get_title()
    assert ax.get_title().splitlines()[0] == (
        "Xavier collapses a 20-layer ReLU network; Kaiming keeps it"
    )
    assert [float(x) for x in ax.get_xlim()] == [0.0, 20.0]  # the axis ends at the last layer
    assert drawn_inside(fig)


def test_the_default_title_says_what_the_numbers_show():
    def curves(gains, activation="relu", initializer="kaiming_normal"):
        return [simulate(activation, initializer, gain=g, n_layers=20, width=64, seeds=2)
                for g in gains]  # fmt: skip

    def title(results):
        return comparison_figure(results).axes[0].get_title().splitlines()[0]

    # A gain of 2 where √2 keeps the signal: it explodes, and the title says so.
    assert title(curves([2**0.5, 2.0])) == (
        "gain 1.41 keeps a 20-layer ReLU network; gain 2 explodes it"
    )
    assert (
        title(curves([2**0.5, 1.45])) == "gain 1.41 and gain 1.45 both keep a 20-layer ReLU network"
    )
    assert title(curves([1.0, 5 / 3], "tanh", "xavier_normal")) == (
        "gain 1 shrinks a 20-layer tanh network; gain 1.67 keeps it"
    )


def test_a_slide_is_16_by_9_in_projector_type(xavier_kaiming):
    fig = comparison_figure(xavier_kaiming, slide=True, size=(13.333, 7.5))
    width, height = fig.get_size_inches()
    assert width / height == pytest.approx(16 / 9, rel=1e-3)
    ax = fig.axes[0]
    assert ax.xaxis.label.get_fontsize() > PROJECTOR_FONTS["label"]
    assert min(line.get_linewidth() for line in ax.get_lines() if line.get_linestyle() == "-") >= (
        PROJECTOR_LINE_WIDTH
    )
    assert drawn_inside(fig)


def test_ylim_fixes_the_axis_exactly(xavier_kaiming):
    fig = comparison_figure(xavier_kaiming, ylim=(2.0**-24, 2.0**4))
    assert fig.axes[0].get_ylim() == pytest.approx((2.0**-24, 2.0**4))


def test_the_text_alternative_says_where_each_curve_ends_and_the_gap(xavier_kaiming):
    alt = comparison_alt(xavier_kaiming, ["Xavier", "Kaiming"])
    xavier, kaiming = xavier_kaiming
    assert f"Xavier ends at {power_of_two(xavier.measured_end)} of the input" in alt
    assert f"Kaiming ends at {power_of_two(kaiming.measured_end)}" in alt
    assert "Kaiming ends 2^" in alt and "above Xavier" in alt


def test_an_svg_is_named_for_a_screen_reader():
    for svg in [
        '<svg xmlns="http://www.w3.org/2000/svg"/>',
        f'<svg xmlns="{SVG[1:-1]}"><g/></svg>',
    ]:
        root = ET.fromstring(accessible_svg(svg, "T", "D"))
        assert [child.tag for child in root][:2] == [f"{SVG}title", f"{SVG}desc"]
    assert root.get("role") == "img"
    assert root.get("aria-labelledby") == "figure-title figure-desc"
    assert [child.tag for child in root][:2] == [f"{SVG}title", f"{SVG}desc"]


def test_the_comparison_refuses_what_it_cannot_draw(xavier_kaiming):
    with pytest.raises(ValueError, match=r"names must be a list of 2 texts, one per result, got "):
        comparison_figure(xavier_kaiming, ["only one"])
    backward = simulate("relu", n_layers=3, width=8, direction="backward")
    with pytest.raises(ValueError, match="results must be .*, all forward or all backward, got "):
        comparison_figure([xavier_kaiming[0], backward])


# --- the command line ----------------------------------------------------------------------------

QUICK = ["--n-layers", "8", "--width", "32", "--seeds", "2"]


def run_figure(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tinyinit", "figure", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_compare_writes_a_labelled_svg_with_its_title_and_description(tmp_path):
    out = tmp_path / "slide.svg"
    run = run_figure(
        *QUICK, "--compare", "xavier_uniform,kaiming_normal", "--slide", "-o", str(out)
    )
    assert run.returncode == 0, run.stderr
    root = ET.parse(out).getroot()
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert root.get("role") == "img" and title is not None and desc is not None
    assert re.search(r"Kaiming ends 2[⁰¹²³⁴⁵⁶⁷⁸⁹⁻·]+ above Xavier", title.text), title.text
    assert desc.text.startswith("Plot of the mean square of the activations per layer")
    texts = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]  # text, editable
    assert any(t.startswith("Xavier: 2⁻") for t in texts) and any(
        t.startswith("Kaiming") for t in texts
    )
    width, height = (float(root.get(k).rstrip("pt")) for k in ("width", "height"))
    assert width / height == pytest.approx(16 / 9, rel=1e-3)
    assert re.findall(r"curve (\d)/2, seed 2/2", run.stderr) == ["1", "2"]


def test_compare_takes_activations_and_gains_and_a_fixed_axis(tmp_path):
    out = tmp_path / "tanh.png"
    curves = "xavier_normal+tanh@1,xavier_normal+tanh@5/3,relu+kaiming_normal"
    run = run_figure(*QUICK, "--compare", curves, "--ylim", "1e-3,10", "-o", str(out))
    assert run.returncode == 0, run.stderr
    from PIL import Image

    info = Image.open(out).info
    assert "Xavier, tanh, gain 1.67 ends at" in info["Description"]
    assert "Kaiming, relu" in info["Description"]


def test_the_single_figure_carries_its_description_too(tmp_path):
    out = tmp_path / "one.svg"
    run = run_figure(*QUICK, "--slide", "--ylim", "2^-24,2^4", "-o", str(out))
    assert run.returncode == 0, run.stderr
    root = ET.parse(out).getroot()
    assert root.find(f"{SVG}desc").text.startswith("Plot of the mean square")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--compare", "xavier_uniform"], "at least two curves"),
        (["--compare", "xavier_uniform,he_normal"], "got 'he_normal'; initializers: "),
        (["--compare", "relu+tanh,relu"], "INITIALIZER+ACTIVATION"),
        (["--compare", "relu@x,tanh"], "must be a number"),
        (["--ylim", "10,1"], "0 < LOW < HIGH"),
        (["--ylim", "0,1"], "0 < LOW < HIGH"),
        (["--ylim", "1e-3"], "LOW,HIGH"),
    ],
)
def test_bad_comparisons_exit_2_saying_what_is_accepted(tmp_path, args, says):
    run = run_figure(*QUICK, *args, "-o", str(tmp_path / "x.png"))
    assert run.returncode == 2
    assert says in run.stderr


def test_the_figure_help_names_the_new_options():
    run = subprocess.run(
        [sys.executable, "-m", "tinyinit", "figure", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    for option in ("--compare", "--slide", "--ylim"):
        assert option in run.stdout


def test_a_figure_of_the_app_style_keeps_its_texts_in_view():
    fig = Figure(figsize=(8.4, 5.6), dpi=100)
    FigureCanvasAgg(fig)
    plot = DepthPlot(fig)
    plot.update(relu("xavier_uniform"))
    assert drawn_inside(fig)


# --- the words: one place names curves and gaps -------------------------------------------------


def test_a_curve_label_keeps_its_name_apart_from_its_value():
    from tinyinit.views.naming import end_label

    tanh = simulate("tanh", "xavier_normal", gain=1.0, n_layers=20, width=64, seeds=1)
    label = end_label("gain 1", tanh)
    name, value = label.split(": ")
    assert name == "gain 1" and value == power_of_two(tanh.measured_end, markup="unicode")


def test_every_medium_writes_a_power_of_two_from_one_function():
    from tinyinit.present.demonstrations import DEMONSTRATIONS
    from tinyinit.views.naming import SUPERSCRIPT

    # Text a reader sees as typeset (the app's captions) writes no caret: 2²⁰, as the figures.
    for row in DEMONSTRATIONS:
        assert "2^" not in row[3], row[3]
    assert power_of_two(2.0**20, markup="unicode") == "2" + "20.0".translate(SUPERSCRIPT)

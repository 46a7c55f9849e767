"""`python -m tinyinit figure` writes the plot as a real png, svg or pdf; bad input exits 2."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from tinyinit.cli import (
    MAX_PIXELS,
    build_parser,
    depth_figure,
    main,
    mathtext_error,
    seeds_reported,
)
from tinyinit.core.activations import ACTIVATIONS
from tinyinit.core.init import INITIALIZERS
from tinyinit.physics.propagation import simulate

# Small networks: the file format is under test here, not the physics.
QUICK = ["--n-layers", "6", "--width", "32", "--seeds", "3"]

EVERY_OPTION = [
    "--initializer",
    "--activation",
    "--gain",
    "--std",
    "--n-layers",
    "--width",
    "--seeds",
    "--batch",
    "--backward",
    "--theory",
    "--no-theory",
    "--title",
    "--math-title",
    "--dpi",
    "--size",
    "--output",
    "--format",
    "--compare",
    "--slide",
    "--aspect",
    "--ylim",
]


def run_figure(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tinyinit", "figure", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_png_has_the_asked_size_and_a_real_picture(tmp_path):
    import matplotlib.image

    out = tmp_path / "collapse.png"
    run = run_figure(*QUICK, "--dpi", "50", "--size", "6x4", "-o", str(out))
    assert run.returncode == 0, run.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (300, 200)  # dpi * size
    pixels = matplotlib.image.imread(out)
    assert pixels.shape[:2] == (200, 300)
    rgb = pixels[..., :3]
    assert rgb.std() > 0.05, "the picture is blank"
    colors = np.unique((rgb * 255).round().astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colors) > 20, f"only {len(colors)} distinct colors"
    # The median line's blue (C0) is there: the curve was drawn, not just the axes.
    c0 = np.array([0x1F, 0x77, 0xB4]) / 255
    assert (np.abs(rgb - c0).max(axis=-1) < 0.05).sum() > 20


def test_svg_is_xml_with_paths_and_the_title_as_text(tmp_path):
    out = tmp_path / "kept.svg"
    title = "Kaiming keeps the signal"
    run = run_figure(*QUICK, "--initializer", "kaiming_normal", "--title", title, "-o", str(out))
    assert run.returncode == 0, run.stderr
    root = ET.parse(out).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    ns = {"svg": "http://www.w3.org/2000/svg"}
    assert len(root.findall(".//svg:path", ns)) > 10
    texts = ["".join(t.itertext()) for t in root.findall(".//svg:text", ns)]
    assert title in texts
    assert any("theory" in t for t in texts)


def test_pdf_has_a_page(tmp_path):
    out = tmp_path / "tanh.pdf"
    run = run_figure(*QUICK, "--activation", "tanh", "--gain", "5/3", "-o", str(out))
    assert run.returncode == 0, run.stderr
    data = out.read_bytes()
    assert data.startswith(b"%PDF-")
    assert len(re.findall(rb"/Type\s*/Page(?!s)", data)) >= 1
    assert data.rstrip().endswith(b"%%EOF")


def test_format_option_overrides_a_missing_extension(tmp_path):
    out = tmp_path / "figure_for_slide_3"
    run = run_figure(*QUICK, "--format", "svg", "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert ET.parse(out).getroot().tag.endswith("svg")


def test_progress_names_each_seed_on_stderr(tmp_path):
    out = str(tmp_path / "p.png")
    run = run_figure("--n-layers", "4", "--width", "16", "--seeds", "4", "-o", out)
    assert run.returncode == 0, run.stderr
    assert re.findall(r"seed (\d)/4", run.stderr) == ["1", "2", "3", "4"]
    assert run.stdout == ""  # stdout stays clean for scripts


def test_help_a_refused_option_and_check_answer_without_loading_matplotlib(tmp_path):
    """Only drawing needs matplotlib: the help, a refused option and `check` answer at once."""
    script = (
        "import contextlib, io, sys\n"
        "from tinyinit.cli import main\n"
        "for argv in (['figure', '--help'], ['figure', '--std', '-1'],\n"
        "             ['check', sys.argv[1], '--test', 'test_fans_and_gains_match_torch']):\n"
        "    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "        main(argv, stderr=io.StringIO())\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))\n"
    )
    stub = tmp_path / "my_init.py"
    stub.write_text("")
    run = subprocess.run(
        [sys.executable, "-c", script, str(stub)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_help_lists_every_option():
    run = run_figure("--help")
    assert run.returncode == 0
    for option in EVERY_OPTION:
        assert re.search(rf"(^|[\s\[,]){re.escape(option)}\b", run.stdout), option
    # And every accepted value of the choice options, so nobody has to read code.
    for name in [*INITIALIZERS, *ACTIVATIONS, "png", "svg", "pdf"]:
        assert name in run.stdout, name
    # Nothing the parser accepts is missing from the list above.
    figure = build_parser()._subparsers._group_actions[0].choices["figure"]
    declared = {s for a in figure._actions for s in a.option_strings if s.startswith("--")}
    assert declared - {"--help"} == set(EVERY_OPTION)


BAD_INPUT = [
    (["--n-layers", "0"], "--n-layers", "1 to 1000"),
    (["--width", "many"], "--width", "1 to 2048"),
    (["--seeds", "-1"], "--seeds", "1 to 64"),
    (["--activation", "swish"], "--activation", "relu"),
    (["--initializer", "he"], "--initializer", "kaiming_normal"),
    (["--gain", "big"], "--gain", "5/3"),
    (["--std", "-0.1"], "--std", ">= 0"),
    (["--size", "huge"], "--size", "8x5"),
    (["--dpi", "0"], "--dpi", "10 to 1200"),
    (["--format", "jpg"], "--format", "png"),
    (["-o", "figure.jpg"], "--output", ".png, .svg or .pdf"),
    (["-o", "no/such/folder/f.png"], "--output", "does not exist"),
    (["--format", "pdf", "-o", "f.png"], "--format", ".png"),
    (["--n-layers", "1000", "--width", "2048"], "--n-layers/--width", "at most"),
    (["--dpi", "1200", "--size", "40x40"], "--dpi/--size", f"at most {MAX_PIXELS:,} pixels"),
    (["--dpi", "1000", "--size", "8x5.01"], "--dpi/--size", "8000 x 5010"),
    (["-o", "."], "--output", "is a folder"),
    (["--math-title", "--title", "$x^$"], "--title", "not valid mathtext"),
]


@pytest.mark.parametrize("args, option, accepted", BAD_INPUT, ids=[b[1] for b in BAD_INPUT])
def test_bad_input_exits_2_naming_the_option_and_what_is_accepted(tmp_path, args, option, accepted):
    run = run_figure(*args, cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stderr.count("\n") == 1, run.stderr  # one line: not the usage text
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("python -m tinyinit figure: error:"), last
    assert option in last and accepted in last, last
    assert list(tmp_path.iterdir()) == []  # nothing half-written


USAGE_ERRORS = [
    (["figure", "--std", "-1"], "figure", "argument --std: must be a number >= 0; got '-1'"),
    (["figure", "extra"], "figure", "unrecognized arguments: extra"),
    (["figure", "--n-layers", "3", "--bogus", "1"], "figure", "unrecognized arguments: --bogus 1"),
    (
        ["present", "--port", "1"],
        "present",
        "argument --port: must be a whole number from 1024 to 65535; got '1'",
    ),
    (["present", "x"], "present", "unrecognized arguments: x"),
    (["check", "my_init.py", "extra"], "check", "unrecognized arguments: extra"),
    (["check", "--timeout"], "check", "argument --timeout: expected one argument"),
]


@pytest.mark.parametrize(
    "argv, command, message", USAGE_ERRORS, ids=[" ".join(a) for a, *_ in USAGE_ERRORS]
)
def test_every_commands_usage_error_is_one_line_and_exit_2(argv, command, message, capsys):
    # an argument too many too: argparse says that one in the top parser's usage text
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert capsys.readouterr() == ("", f"python -m tinyinit {command}: error: {message}\n")


def test_no_command_is_an_error_that_lists_figure():
    run = subprocess.run(
        [sys.executable, "-m", "tinyinit"], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 2
    assert "figure" in run.stderr


# --- the figure is the explorer's plot, for the settings given ------------------------------


def test_figure_shows_the_simulated_median_and_theory():
    settings = dict(
        activation="tanh", initializer="xavier_normal", gain=5 / 3, n_layers=8, width=32
    )
    result = simulate(seeds=3, **settings)
    fig = depth_figure(result)
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    ydata = [np.asarray(line.get_ydata(), dtype=float) for line in lines.values()]
    assert any(np.allclose(y, result.median) for y in ydata if len(y) == 9)
    assert any(np.allclose(y, result.theory) for y in ydata if len(y) == 9)
    assert ax.get_yscale() == "log"


def test_no_theory_hides_the_curve_and_its_legend_entry():
    result = simulate("relu", n_layers=4, width=16, seeds=2)
    shown = depth_figure(result)
    hidden = depth_figure(result, theory=False)
    legend = [t.get_text() for t in hidden.legends[0].get_texts()]
    assert "theory" in [t.get_text() for t in shown.legends[0].get_texts()]
    assert "theory" not in legend and len(legend) == 3
    visible = [
        np.asarray(line.get_ydata(), dtype=float)
        for line in hidden.axes[0].get_lines()
        if line.get_visible() and len(line.get_ydata()) == 5
    ]
    assert not any(np.allclose(y, result.theory) for y in visible)


def test_the_progress_wraps_simulates_seeds_and_reports_each_when_it_is_done():
    calls, done = [], []
    settings = dict(activation="relu", initializer="xavier_uniform", n_layers=5, width=16)

    def seeds():  # as simulate takes them: the report of seed k comes before seed k + 1
        for seed in seeds_reported(3, lambda k, n: calls.append((k, n))):
            done.append(list(calls))
            yield seed

    stepwise = simulate(seeds=seeds(), **settings)
    assert calls == [(1, 3), (2, 3), (3, 3)] and done == [[], [(1, 3)], [(1, 3), (2, 3)]]
    at_once = simulate(seeds=3, **settings)
    assert stepwise.seeds == at_once.seeds
    np.testing.assert_array_equal(stepwise.per_seed, at_once.per_seed)


def assert_same_result(a, b):
    """Every field of two DepthResults equal: rows, theory, weight gradients, samples."""
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, dict):
            assert x.keys() == y.keys(), field.name
            for layer in x:
                np.testing.assert_array_equal(x[layer], y[layer], err_msg=f"samples[{layer}]")
        elif isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=field.name)
        else:
            assert x == y, field.name


@pytest.mark.parametrize("direction", ["forward", "backward"])
@pytest.mark.parametrize("sample_layers", [(), (0, 2, 4)])
def test_seed_by_seed_equals_simulate_in_every_view(direction, sample_layers):
    settings = dict(
        activation="tanh", initializer="xavier_normal", n_layers=4, width=8, batch=4,
        direction=direction, sample_layers=sample_layers,
    )  # fmt: skip
    stepwise = simulate(seeds=seeds_reported(2, lambda k, n: None), **settings)
    at_once = simulate(seeds=2, **settings)
    assert_same_result(stepwise, at_once)
    if direction == "backward":
        assert stepwise.weight_per_seed.shape == (2, 5)


def test_kaiming_auto_gain_for_gelu_and_silu_is_the_quadrature_gain():
    from tinyinit.cli import resolve_gain
    from tinyinit.physics.gains import single_layer_gain

    for name in ("gelu", "silu"):
        assert name in ACTIVATIONS
        assert resolve_gain(None, "kaiming_normal", name) == single_layer_gain(name)
        assert resolve_gain(None, "xavier_normal", name) == 1.0  # Xavier's own default


# --- what can go wrong after the options are read: one line, exit 2, never a traceback -------


def unwritable_folder(tmp_path):
    """A folder this process cannot write into: a read-only one, or for root (who writes
    into those) the kernel's /sys."""
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        return locked
    if not os.path.isdir("/sys/kernel"):
        pytest.skip("root, and no /sys to be refused by")
    return "/sys"


def test_an_unwritable_output_is_one_line_and_exit_2_before_any_seed_runs(tmp_path):
    run = run_figure(*QUICK, "-o", os.path.join(unwritable_folder(tmp_path), "f.png"))
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.count("\n") == 1, run.stderr  # one line: no usage, no progress
    assert run.stderr.startswith(
        "python -m tinyinit figure: error: argument -o/--output: cannot write"
    )


def test_a_writable_output_is_left_as_it_was_by_the_check(tmp_path):
    from tinyinit.cli import unwritable

    existing = tmp_path / "kept.png"
    existing.write_bytes(b"old")
    assert unwritable(existing) is None and existing.read_bytes() == b"old"
    assert unwritable(tmp_path / "new.png") is None and not (tmp_path / "new.png").exists()


def test_an_output_the_system_refuses_is_one_line_and_exit_2(tmp_path):
    # a name too long for any file system: refused when written, whoever runs it (root too)
    out = tmp_path / ("x" * 300 + ".png")
    run = run_figure(*QUICK, "-o", str(out))
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("python -m tinyinit figure: error: argument -o/--output: cannot write")
    assert "File name too long" in last


def test_a_title_is_text_as_typed_unless_math_is_asked(tmp_path):
    out = tmp_path / "t.svg"
    run = run_figure(*QUICK, "--title", "$x^$ costs $5", "-o", str(out))
    assert run.returncode == 0, run.stderr
    ns = {"svg": "http://www.w3.org/2000/svg"}
    texts = ["".join(t.itertext()) for t in ET.parse(out).getroot().findall(".//svg:text", ns)]
    assert "$x^$ costs $5" in texts
    run = run_figure(*QUICK, "--math-title", "--title", r"gain $\sqrt{2}$", "-o", str(out))
    assert run.returncode == 0, run.stderr
    drawn = ["".join(t.itertext()) for t in ET.parse(out).getroot().findall(".//svg:text", ns)]
    assert r"gain $\sqrt{2}$" not in drawn  # typeset, not text (the <title> keeps it as typed)
    assert r"gain $\sqrt{2}$" in ET.parse(out).getroot().find("svg:title", ns).text


def test_depth_figure_refuses_what_the_command_line_refuses():
    result = simulate("relu", n_layers=2, width=8, seeds=1)
    with pytest.raises(ValueError, match=r"^title must be valid mathtext"):
        depth_figure(result, title="$x^$", math_title=True)
    with pytest.raises(TypeError, match=r"^result must be a DepthResult"):
        depth_figure(None)
    assert mathtext_error("$x^2$") is None and "char 2" in mathtext_error("$x^$")


# --- a slide: its size, its title, its axis, the app's numbers ------------------------------


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.parametrize(
    "aspect, pixels, points",
    [
        ([], (1920, 1080), ("960pt", "540pt")),
        (["--aspect", "4:3"], (1440, 1080), ("720pt", "540pt")),
    ],
)
def test_a_figure_is_a_slide_of_exactly_1920x1080_or_1440x1080_pixels(
    tmp_path, aspect, pixels, points
):
    png, svg, pdf = (tmp_path / f"slide.{ext}" for ext in ("png", "svg", "pdf"))
    for out in (png, svg, pdf):
        code = main(["figure", *QUICK, *aspect, "-o", str(out)], stderr=open(os.devnull, "w"))
        assert code == 0
    assert png_size(png) == pixels
    root = ET.parse(svg).getroot()
    assert (root.get("width"), root.get("height")) == points
    box = re.search(rb"/MediaBox \[ *0 0 ([0-9.]+) ([0-9.]+) *\]", pdf.read_bytes())
    assert (float(box.group(1)), float(box.group(2))) == tuple(float(p[:-2]) for p in points)


def test_an_aspect_with_a_size_is_refused():
    run = run_figure(*QUICK, "--aspect", "4:3", "--size", "8x5", "-o", "x.png")
    assert run.returncode == 2
    assert run.stderr.strip().endswith(
        "argument --aspect: not with --size, which gives the size itself"
    )


def test_the_default_title_says_what_the_numbers_show_and_the_axis_ends_at_the_last_layer(tmp_path):
    def title(*options) -> str:
        out = tmp_path / "t.svg"
        main(["figure", "--width", "64", *options, "-o", str(out)], stderr=open(os.devnull, "w"))
        return ET.parse(out).getroot().find("{http://www.w3.org/2000/svg}title").text

    assert title().startswith("Xavier collapses a 20-layer ReLU network: relu, Xavier uniform")
    assert title("--initializer", "kaiming_normal").startswith("Kaiming keeps a 20-layer ReLU")
    assert title("--compare", "xavier_uniform,kaiming_normal").startswith(
        "Xavier collapses a 20-layer ReLU network; Kaiming keeps it: at layer 20, Kaiming ends 2"
    )
    # The same comparison with a gain that overshoots: the title follows the numbers.
    assert title("--compare", "kaiming_normal@sqrt(2),kaiming_normal@2").startswith(
        "gain 1.41 keeps a 20-layer ReLU network; gain 2 explodes it"
    )
    result = simulate("relu", n_layers=20, width=16, seeds=1)
    assert [float(x) for x in depth_figure(result).axes[0].get_xlim()] == [0.0, 20.0]


def test_the_figure_draws_the_numbers_the_app_shows_for_the_same_settings():
    from tinyinit.present.demonstrations import START
    from tinyinit.present.explorers import LargeDepthExplorer
    from tinyinit.views.naming import end_label

    args = build_parser().parse_args(["figure"])
    app = LargeDepthExplorer()
    step = START["depth"]
    assert (args.initializer, args.activation, args.n_layers, args.width, args.seeds) == (
        step["initializer"], step["activation"], step["n_layers"], step["width"], step["seeds"]
    )  # fmt: skip
    assert args.batch == app.batch
    shown = app.result_for(step)
    drawn = simulate(
        args.activation, args.initializer, gain=1.0, std=args.std, n_layers=args.n_layers,
        width=args.width, seeds=args.seeds, batch=args.batch,
    )  # fmt: skip
    np.testing.assert_allclose(drawn.median, shown.median, rtol=1e-6)  # the fast path's rounding
    assert end_label("Xavier", drawn) == end_label("Xavier", shown) == "Xavier: 2⁻²⁰·⁷"

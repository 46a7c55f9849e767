"""`python -m tinyinit figure`: the depth explorer's plot as a file, for slides and handouts.

    python -m tinyinit figure --initializer xavier_uniform --activation relu -o collapse.png
    python -m tinyinit figure --activation tanh --gain 5/3 --depth 50 -o tanh.svg
    python -m tinyinit figure --compare xavier_uniform,kaiming_fan_in --slide -o slide.svg
    python -m tinyinit figure --help

The figure is the explorer's own (`tinyinit.plots.DepthPlot`): the median of
the mean square per layer over the seeds, the min-to-max band, and the
mean-field theory, for the settings given on the command line. With --compare,
several curves on one axis, each named where it ends and the gap in the title
(`tinyinit.projector.comparison_figure`); --slide draws it for a 16:9 slide in
projector type, --ylim fixes its y axis. Every file carries the figure's text
alternative (an SVG as its <title> and <desc>).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .activations import ACTIVATIONS
from .depth_result import DepthResult
from .projector import (
    SLIDE_SCALE,
    SLIDE_SIZE,
    comparison_alt,
    comparison_figure,
    curve_name,
    curve_names,
    fix_ylim,
    projector_style,
    save_figure,
    scaled_fonts,
    style_figure,
)
from .propagation import simulate
from .stack import SCHEMES, scheme

__all__ = ["depth_figure", "main", "parse_gain", "resolve_gain", "simulate_with_progress"]

FORMATS = ("png", "svg", "pdf")
MAX_LAYERS = 1000
MAX_WIDTH = 2048
MAX_SEEDS = 64
# Unit matrices of one (kind, width, seed) stay in memory for the whole stack:
# n_layers * width**2 float64 numbers, capped at 1 GiB.
MAX_WEIGHT_NUMBERS = 2**27


# --- the pieces, usable without the command line ------------------------------------------


def parse_gain(text: str) -> float | None:
    """A gain as a teacher types it: a number, a fraction, sqrt(x), or "auto" (None).

    >>> parse_gain("5/3"), parse_gain("sqrt(2)"), parse_gain("1.0"), parse_gain("auto")
    (1.6666666666666667, 1.4142135623730951, 1.0, None)
    """
    s = text.strip().lower().replace(" ", "")
    if s == "auto":
        return None
    try:
        if m := re.fullmatch(r"sqrt\((.+)\)", s):
            value = math.sqrt(_number(m.group(1)))
        else:
            value = _number(s)
    except (ValueError, ZeroDivisionError):
        raise ValueError(
            f"gain must be a number >= 0 (e.g. 1, 1.414, 5/3, sqrt(2)) or auto; got {text!r}"
        ) from None
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"gain must be a finite number >= 0 or auto; got {text!r}")
    return value


def _number(s: str) -> float:
    if "/" in s:
        top, bottom = s.split("/")
        return float(top) / float(bottom)
    return float(s)


def resolve_gain(gain: float | None, initializer: str, activation: str) -> float:
    """The gain to use: `gain` if given; "auto" (None) follows torch's defaults.

    torch.nn.init.kaiming_* takes its gain from the nonlinearity (sqrt(2) for
    relu); xavier_* defaults to gain 1, whatever the activation (the point of
    the "Xavier + ReLU" demonstration). The normal initializer has no gain.
    (`tinyinit.stack.Scheme.initial_gain`, the explorer's rule.)

    >>> round(resolve_gain(None, "kaiming_fan_in", "relu"), 6)
    1.414214
    >>> resolve_gain(None, "xavier_normal", "relu"), resolve_gain(5 / 3, "xavier_normal", "tanh")
    (1.0, 1.6666666666666667)
    """
    if gain is not None:
        return float(gain)
    return scheme(initializer).initial_gain(activation)


def simulate_with_progress(
    *, seeds: int, progress: Callable[[int, int], None] | None = None, **settings
) -> DepthResult:
    """simulate(..., seeds=n) one seed at a time, calling progress(k, n) after seed k.

    Each seed's rows (and, backward, its weight gradients; its samples) are what
    simulate computes for that seed alone (seeds are independent), so the result
    equals simulate(..., seeds=n) in every view.

    >>> r = simulate_with_progress(seeds=2, activation="relu", n_layers=3, width=8)
    >>> bool((r.per_seed == simulate("relu", n_layers=3, width=8, seeds=2).per_seed).all())
    True
    """
    parts = []
    for k in range(seeds):
        parts.append(simulate(seeds=[k], **settings))
        if progress is not None:
            progress(k + 1, seeds)
    first = parts[0]
    weights = None
    if first.weight_per_seed is not None:
        weights = np.concatenate([part.weight_per_seed for part in parts])
    samples = None
    if first.samples is not None:  # simulate puts the seeds' values one after another
        samples = {k: np.concatenate([part.samples[k] for part in parts]) for k in first.samples}
    return dataclasses.replace(
        first,
        seeds=tuple(range(seeds)),
        per_seed=np.concatenate([part.per_seed for part in parts]),
        weight_per_seed=weights,
        samples=samples,
    )


def depth_figure(
    result: DepthResult,
    *,
    theory: bool = True,
    title: str | None = None,
    size: tuple[float, float] = (7.5, 4.6),
    dpi: int = 100,
) -> Figure:
    """The explorer's plot of `result` as a stand-alone matplotlib Figure (no pyplot).

    theory=False hides the mean-field curve and its legend entry; title=None
    keeps the explorer's title (the settings), "" removes it.

    >>> fig = depth_figure(simulate("relu", "xavier_uniform", n_layers=4, width=16, seeds=2))
    >>> fig.get_size_inches().tolist(), fig.axes[0].get_yscale()
    ([7.5, 4.6], 'log')
    """
    from .plots import DepthPlot  # the explorer's figure code, so a slide shows the same plot

    fig = Figure(figsize=size, dpi=dpi)
    FigureCanvasAgg(fig)
    plot = DepthPlot(fig)
    plot.update(result, draw=False)
    if not theory:
        plot.theory_line.set_visible(False)
        _drop_legend_entry(plot, "theory")
    if title is not None:
        plot.ax.set_title(title, fontsize=plot.ax.title.get_fontsize())
    return fig


def _drop_legend_entry(plot, label: str) -> None:
    """Rebuild the figure legend without `label`, in the same place and style."""
    old = plot.legend
    pairs = [
        (h, t.get_text())
        for h, t in zip(old.legend_handles, old.get_texts())
        if not t.get_text().startswith(label)
    ]
    size = old.get_texts()[0].get_fontsize()
    old.remove()
    plot.legend = plot.figure.legend(
        [h for h, _ in pairs],
        [t for _, t in pairs],
        loc="lower center",
        ncols=len(pairs),
        fontsize=size,
        frameon=False,
    )


# --- the command line ------------------------------------------------------------------------


def _int_in(lo: int, hi: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(
                f"must be a whole number from {lo} to {hi}; got {text!r}"
            )
        return value

    return parse


def _nonnegative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a number >= 0; got {text!r}")
    return value


def _gain(text: str) -> float | None:
    try:
        return parse_gain(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("gain ")) from None


def _size(text: str) -> tuple[float, float]:
    m = re.fullmatch(r"\s*([0-9.]+)\s*[x,]\s*([0-9.]+)\s*", text)
    try:
        w, h = (float(m.group(1)), float(m.group(2))) if m else (math.nan, math.nan)
    except ValueError:
        w = h = math.nan
    if not (0.5 <= w <= 40 and 0.5 <= h <= 40):
        raise argparse.ArgumentTypeError(
            f"must be WIDTHxHEIGHT in inches, each from 0.5 to 40 (e.g. 8x5); got {text!r}"
        )
    return w, h


def _curves(text: str) -> list[dict]:
    """--compare's curves: comma-separated, each NAME[+NAME][@GAIN], the names an initializer
    and/or an activation (in either order); what a curve leaves out comes from --initializer,
    --activation and --gain."""
    curves = []
    for item in text.split(","):
        spec, _, gain = item.strip().partition("@")
        curve: dict = {}
        for name in filter(None, (n.strip() for n in spec.split("+"))):
            kind = "initializer" if name in SCHEMES else "activation" if name in ACTIVATIONS else ""
            if not kind or kind in curve:
                raise argparse.ArgumentTypeError(
                    f"each curve is INITIALIZER, ACTIVATION or INITIALIZER+ACTIVATION, with "
                    f"@GAIN if wanted (e.g. xavier_normal+tanh@5/3); got {item.strip()!r}; "
                    f"initializers: {', '.join(SCHEMES)}; activations: {', '.join(ACTIVATIONS)}"
                )
            curve[kind] = name
        if gain:
            curve["gain"] = _gain(gain)
        if not curve:
            raise argparse.ArgumentTypeError(f"a curve is empty in {text!r}")
        curves.append(curve)
    if len(curves) < 2:
        raise argparse.ArgumentTypeError(f"give at least two curves, comma-separated; got {text!r}")
    return curves


def _ylim(text: str) -> tuple[float, float]:
    """--ylim LOW,HIGH: two numbers 0 < LOW < HIGH, each a decimal or a power (1e-7, 2^-24)."""

    def value(part: str) -> float:
        part = part.strip()
        if m := re.fullmatch(r"(2|10)\^([-+]?[0-9.]+)", part):
            return float(m.group(1)) ** float(m.group(2))
        return float(part)

    try:
        low, high = (value(part) for part in text.split(","))
    except ValueError:
        low = high = math.nan
    if not (0 < low < high < math.inf):
        raise argparse.ArgumentTypeError(
            f"must be LOW,HIGH with 0 < LOW < HIGH, e.g. 1e-7,10 or 2^-24,2^4; got {text!r}"
        )
    return low, high


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tinyinit",
        description="tinyinit from the command line: figures for slides and handouts.",
    )
    commands = parser.add_subparsers(
        dest="command", metavar="{figure,present,check}", required=True
    )
    fig = commands.add_parser(
        "figure",
        help="write the depth explorer's plot for given settings to a png, svg or pdf file",
        description="Write the depth explorer's plot (mean square per layer: median over "
        "seeds, min-to-max band, mean-field theory) for the given settings to a file.",
        epilog="examples:\n"
        "  python -m tinyinit figure --initializer xavier_uniform --activation relu "
        "-o collapse.png\n"
        "  python -m tinyinit figure --initializer kaiming_fan_in --activation relu "
        "-o kept.svg\n"
        "  python -m tinyinit figure --activation tanh --gain 5/3 --depth 50 -o tanh.pdf\n"
        "  python -m tinyinit figure --compare xavier_uniform,kaiming_fan_in --slide "
        "-o slide.svg\n"
        "  python -m tinyinit figure --compare xavier_normal+tanh@1,xavier_normal+tanh@5/3 "
        "--ylim 1e-2,10 -o tanh.png",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fig.set_defaults(run=figure_command, subparser=fig)
    net = fig.add_argument_group("network")
    net.add_argument(
        "--initializer",
        choices=list(SCHEMES),
        default="xavier_uniform",
        help="how the weights are drawn (default: %(default)s)",
    )
    net.add_argument(
        "--activation",
        choices=list(ACTIVATIONS),
        default="relu",
        help="the nonlinearity after every layer (default: %(default)s)",
    )
    net.add_argument(
        "--gain",
        type=_gain,
        default=None,
        metavar="GAIN",
        help="multiplies the weights' std: a number, a fraction (5/3) or sqrt(2); "
        "auto (default) is torch's: the activation's gain for kaiming_*, 1 for xavier_*",
    )
    net.add_argument(
        "--std",
        type=_nonnegative,
        default=0.02,
        help="the weights' std for --initializer normal (default: %(default)s)",
    )
    net.add_argument(
        "--depth",  # the explorer's word on its slider, for n_layers
        dest="n_layers",
        metavar="DEPTH",
        type=_int_in(1, MAX_LAYERS),
        default=20,
        help=f"number of layers, 1 to {MAX_LAYERS} (default: %(default)s)",
    )
    net.add_argument(
        "--width",
        type=_int_in(1, MAX_WIDTH),
        default=256,
        help=f"units per layer, 1 to {MAX_WIDTH} (default: %(default)s)",
    )
    net.add_argument(
        "--seeds",
        type=_int_in(1, MAX_SEEDS),
        default=8,
        help=f"how many seeds (networks) to measure, 1 to {MAX_SEEDS} (default: %(default)s)",
    )
    net.add_argument(
        "--batch",
        type=_int_in(1, 4096),
        default=32,
        help="inputs pushed through each network (default: %(default)s)",
    )
    net.add_argument(
        "--backward",
        action="store_true",
        help="follow the gradient from the top layer down instead of the signal up",
    )
    look = fig.add_argument_group("figure")
    look.add_argument(
        "--theory",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="draw the mean-field theory curve (default: on)",
    )
    look.add_argument(
        "--title", default=None, help='title above the plot (default: the settings; "" for none)'
    )
    look.add_argument(
        "--dpi", type=_int_in(10, 1200), default=150, help="dots per inch (default: %(default)s)"
    )
    look.add_argument(
        "--size",
        type=_size,
        default=None,
        metavar="WxH",
        help="figure size in inches, e.g. 8x5 (default: 8x5; with --slide 13.333x7.5)",
    )
    look.add_argument(
        "--compare",
        type=_curves,
        default=None,
        metavar="CURVES",
        help="several curves on one axis, comma-separated, each named where it ends: "
        "initializers (xavier_uniform,kaiming_fan_in), activations (relu,tanh) or both "
        "(xavier_normal+tanh@5/3, @ a gain); the rest from the options above",
    )
    look.add_argument(
        "--slide",
        action="store_true",
        help="for a 16:9 slide: 13.333x7.5 inches, projector type (large fonts, thick lines)",
    )
    look.add_argument(
        "--ylim",
        type=_ylim,
        default=None,
        metavar="LOW,HIGH",
        help="the y axis, fixed (e.g. 1e-7,10 or 2^-24,2^4), so that slides compare; "
        "default: whole decades around the curves",
    )
    look.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path("depth.png"),
        help="file to write; its extension (.png, .svg, .pdf) sets the format "
        "(default: %(default)s)",
    )
    look.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="png, svg or pdf, when the output's extension does not say",
    )
    show = commands.add_parser(
        "present",
        help="serve the live explorers as a classroom app (Voila: controls and plots, no code)",
        description="Serve the presentation app with Voila: the depth and residual-stream "
        "explorers in large type, with a dropdown of the classic demonstrations. "
        "Stop it with Ctrl+C.",
    )
    show.set_defaults(run=present_command, subparser=show)
    show.add_argument(
        "--port", type=_int_in(1024, 65535), default=8866, help="port (default: %(default)s)"
    )
    show.add_argument(
        "--ip",
        default="127.0.0.1",
        help="address to listen on (default: %(default)s, this computer only; "
        "0.0.0.0 lets others on the network connect)",
    )
    show.add_argument(
        "--no-browser", action="store_true", help="only print the address, open no browser"
    )
    show.add_argument(
        "--cull-idle",
        type=_int_in(0, 86400),
        default=None,
        metavar="SECONDS",
        help="shut down the kernel of a closed page after this long idle (default: 120; "
        "0: never); a page that stays open keeps its kernel",
    )
    show.add_argument(
        "--share-url",
        type=_share_url,
        default=None,
        metavar="URL",
        help="where students open the same explorer (a Binder or hub link): the app shows "
        "it with its QR code, in a tab of its own that is open at the start",
    )
    add_check_command(commands)
    return parser


# --- python -m tinyinit check my_init.py ------------------------------------------------------


def add_check_command(commands) -> None:
    from .catalog import DEFAULT_TIMEOUT, NAMES

    check = commands.add_parser(
        "check",
        help="run the module card's eleven tests on your my_init.py (exit 0 when all pass)",
        description="Run the module card's test catalog (M07.3, section 4) on the seven\n"
        "functions of your file. Each test prints passed, failed (what it measured, a hint,\n"
        "the card's pitfall), not written yet, error (your line) or timed out.\n"
        "Exit status: 0 when every test run passed, 1 when one did not, 2 for bad arguments.",
        epilog="examples:\n"
        "  python -m tinyinit check my_init.py\n"
        "  python -m tinyinit check my_init.py --test test_fans_and_gains_match_torch\n"
        "\nthe card's tests, in its order:\n  " + "\n  ".join(NAMES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.set_defaults(run=check_command, subparser=check)
    check.add_argument(
        "path",
        nargs="?",
        default="my_init.py",
        metavar="FILE",
        type=_student_file,
        help="the Python file holding your seven functions (default: %(default)s)",
    )
    check.add_argument(
        "--test",
        action="append",
        dest="tests",
        type=_test_name,
        metavar="NAME",
        help="run only this test of the card (repeatable; default: all eleven)",
    )
    check.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT,
        help="seconds one test may take before it is stopped (default: %(default)g)",
    )


def _student_file(text: str):
    from .catalog import student_file

    try:
        return student_file(text)
    except (OSError, ValueError) as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("path ")) from None


def _test_name(text: str) -> str:
    from .catalog import NAMES

    if text not in NAMES:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a test of the card; its tests are {', '.join(NAMES)}"
        )
    return text


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0; got {text!r}")
    return value


def check_command(args, parser, stderr: TextIO) -> int:
    from .catalog import check_init

    report = check_init(args.path, tests=args.tests, timeout=args.timeout)
    text = str(report) + "\n"
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    sys.stdout.write(text.encode(encoding, "replace").decode(encoding))  # a console without ✓
    return 0 if report.ok else 1


def _share_url(text: str) -> str:
    try:
        from .present import check_share_url
    except ModuleNotFoundError as error:  # not in the core install: the error names the extra
        raise argparse.ArgumentTypeError(str(error)) from None

    try:
        return check_share_url(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).replace("share_url", "--share-url")) from None


def present_command(args, parser, stderr: TextIO) -> int:
    import os

    try:
        from .present import SHARE_URL_VARIABLE, app_path, serve, voila_command
    except ModuleNotFoundError as error:  # not in the core install: the error names the extra
        parser.exit(2, f"{parser.prog}: error: {error}\n")

    culling = {} if args.cull_idle is None else {"cull_idle": args.cull_idle}
    command = voila_command(
        app_path(), port=args.port, ip=args.ip, browser=not args.no_browser, **culling
    )
    print(f"serving the presentation at http://{args.ip}:{args.port}/  (Ctrl+C stops it)",
          file=stderr)  # fmt: skip
    env = dict(os.environ)
    if args.share_url is not None:
        env[SHARE_URL_VARIABLE] = args.share_url  # the app's kernel reads it
        print(f"students open: {args.share_url}", file=stderr)
    return serve(command, env=env)  # Ctrl+C and SIGTERM stop the server and its kernels


def output_format(parser: argparse.ArgumentParser, output: Path, given: str | None) -> str:
    """The format from --format, else from the extension; a parser error if neither fits."""
    suffix = output.suffix.lower().lstrip(".")
    if given is not None:
        if suffix and suffix != given and suffix in FORMATS:
            parser.error(f"argument --format: {given} does not match the output's .{suffix}")
        return given
    if suffix not in FORMATS:
        parser.error(
            f"argument -o/--output: cannot tell the format from {output.name!r}; "
            f"end it in .png, .svg or .pdf, or give --format png|svg|pdf"
        )
    return suffix


def figure_command(args, parser, stderr: TextIO) -> int:
    fmt = output_format(parser, args.output, args.format)
    if args.n_layers * args.width**2 > MAX_WEIGHT_NUMBERS:
        parser.error(
            f"argument --depth/--width: depth * width**2 must be at most {MAX_WEIGHT_NUMBERS} "
            f"(1 GiB of weights); got {args.n_layers} * {args.width}**2"
        )
    if not args.output.parent.is_dir():
        parser.error(f"argument -o/--output: folder {str(args.output.parent)!r} does not exist")
    size = args.size or (SLIDE_SIZE if args.slide else (8.0, 5.0))
    end = "\r" if stderr.isatty() else "\n"
    curves = args.compare or [{}]
    results = []
    for number, curve in enumerate(curves, 1):
        initializer = curve.get("initializer", args.initializer)
        activation = curve.get("activation", args.activation)
        gain = resolve_gain(curve.get("gain", args.gain), initializer, activation)
        which = f"curve {number}/{len(curves)}, " if len(curves) > 1 else ""

        def progress(k: int, n: int, which=which) -> None:
            print(f"{which}seed {k}/{n}", end=end if k < n else "\n", file=stderr, flush=True)

        results.append(
            simulate_with_progress(
                activation=activation,
                initializer=initializer,
                gain=gain,
                std=args.std,
                n_layers=args.n_layers,
                width=args.width,
                seeds=args.seeds,
                batch=args.batch,
                direction="backward" if args.backward else "forward",
                progress=progress,
            )
        )
    if args.compare:
        names = curve_names(results)
        fig = comparison_figure(
            results, names, title=args.title, theory=args.theory, size=size, dpi=args.dpi,
            slide=args.slide, ylim=args.ylim,
        )  # fmt: skip
    else:
        fig = depth_figure(
            results[0], theory=args.theory, title=args.title, size=size, dpi=args.dpi
        )
        names = [curve_name(results[0])]
        if args.slide:
            style_figure(fig, scaled_fonts(SLIDE_SCALE))
            projector_style(fig, SLIDE_SCALE)
        if args.ylim is not None:
            fix_ylim(fig.axes[0], args.ylim)
    title = fig.axes[0].get_title().replace("\n", ": ") or "tinyinit: mean square per layer"
    save_figure(
        fig, args.output, fmt, dpi=args.dpi, title=title, alt=comparison_alt(results, names)
    )
    print(f"wrote {args.output}", file=stderr)
    return 0


def main(argv: list[str] | None = None, stderr: TextIO | None = None) -> int:
    """Run the command line with `argv`; returns the exit code (bad input: SystemExit(2)).

    >>> import io, tempfile
    >>> from pathlib import Path
    >>> out = str(Path(tempfile.mkdtemp()) / "relu.svg")
    >>> main(["figure", "--depth", "3", "--width", "8", "--seeds", "2", "-o", out],
    ...      stderr=io.StringIO())
    0
    >>> Path(out).read_text().count("<svg") >= 1
    True
    """
    args = build_parser().parse_args(argv)
    return args.run(args, args.subparser, stderr or sys.stderr)

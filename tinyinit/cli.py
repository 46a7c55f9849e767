"""`python -m tinyinit figure`: the depth explorer's plot as a file, for slides and handouts.

    python -m tinyinit figure --initializer xavier_uniform --activation relu -o collapse.png
    python -m tinyinit figure --activation tanh --gain 5/3 --n-layers 50 -o tanh.svg
    python -m tinyinit figure --compare xavier_uniform,kaiming_normal --slide -o slide.svg
    python -m tinyinit figure --compare xavier_uniform,kaiming_normal --aspect 4:3 -o slide.png
    python -m tinyinit figure --help

The figure is the explorer's own (`tinyinit.views.plots.DepthPlot`): the median of
the mean square per layer over the seeds, the min-to-max band, and the
mean-field theory, for the settings given on the command line (by default the
presentation app's: `tinyinit.views.defaults.DEPTH_START`), under a title that says what
the numbers show ("Xavier collapses a 20-layer ReLU network"). With --compare, several
curves on one axis, each named where it ends and the gap in the title
(`tinyinit.views.projector.comparison_figure`). The file is a slide: 16:9 at 1920x1080
pixels, or 4:3 at 1440x1080 (--aspect); --slide draws it in projector type, --ylim fixes
its y axis. Every file carries the figure's text alternative (an SVG as its <title> and
<desc>).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import math
import re
import signal
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .core.activations import ACTIVATIONS
from .core.arguments import flag, function, instance, integer, number
from .core.init import INITIALIZERS
from .physics.depth_result import DepthResult, as_result
from .physics.gains import initial_gain
from .physics.propagation import simulate
from .views.defaults import DEPTH_START, FORMATS, SLIDE_DPI, SLIDE_SIZES

# matplotlib (and the figure code built on it) is imported by the functions that draw: `check`,
# `present`, --help and a refused option answer without loading it (a second on a laptop).
if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["build_parser", "depth_figure", "main", "parse_gain", "resolve_gain", "seeds_reported"]

MAX_LAYERS = 1000
MAX_WIDTH = 2048
MAX_SEEDS = 64
# Unit matrices of one (kind, width, seed) stay in memory for the whole stack:
# n_layers * width**2 float64 numbers, capped at 1 GiB.
MAX_WEIGHT_NUMBERS = 2**27
# A png's pixels, dpi**2 * width * height: 8x5 inches at 1000 dpi, about 1 s to write. Each of
# --dpi and --size alone allows far more (1200 dpi at 40x40 inches: 2.3 billion pixels).
MAX_PIXELS = 40_000_000


# --- the pieces, usable without the command line ------------------------------------------


def parse_gain(gain: str) -> float | None:
    """A gain as a teacher types it: a number, a fraction, sqrt(x), or "auto" (None).

    >>> parse_gain("5/3"), parse_gain("sqrt(2)"), parse_gain("1.0"), parse_gain("auto")
    (1.6666666666666667, 1.4142135623730951, 1.0, None)
    """
    text = instance("gain", gain, str, "the text of a gain, such as '5/3', 'sqrt(2)' or 'auto'")
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
    (`tinyinit.physics.gains.initial_gain`, the explorer's rule.)

    >>> round(resolve_gain(None, "kaiming_normal", "relu"), 6)
    1.414214
    >>> resolve_gain(None, "xavier_normal", "relu"), resolve_gain(5 / 3, "xavier_normal", "tanh")
    (1.0, 1.6666666666666667)
    """
    if gain is not None:
        return number("gain", gain, minimum=0)
    return initial_gain(initializer, activation)


def seeds_reported(n: int, report: Callable[[int, int], None]) -> Iterator[int]:
    """Seeds 0 .. n-1, one at a time, calling report(k, n) once the k-th is done.

    simulate takes each seed as it starts on it, so the next one is asked for when the one
    before is done: passed as simulate's seeds, this is a progress bar wrapped around its
    loop, as tqdm wraps one, and simulate itself is unchanged.

    >>> r = simulate("relu", n_layers=2, width=8, seeds=seeds_reported(2, print))
    1 2
    2 2
    >>> r.seeds
    (0, 1)
    """
    n, report = integer("n", n, minimum=1), function("report", report)
    for seed in range(n):
        yield seed
        report(seed + 1, n)


def mathtext_error(text: str) -> str | None:
    """Why matplotlib's mathtext cannot typeset `text`, in one line, or None if it can.

    >>> mathtext_error("$x^2$") is None, mathtext_error("$x^$")
    (True, 'found end of text at char 2')
    """
    from matplotlib.mathtext import MathTextParser

    try:
        MathTextParser("path").parse(text)
    except ValueError as error:  # pyparsing's message: the text, a caret, then what it expected
        last = " ".join(str(error).split("\n")[-1].split()).split(": ", 1)[-1]
        found = re.search(r"found .*? \(at char \d+\)", last)
        return (found.group(0).replace(" (", " ").rstrip(")") if found else last)[:120]
    return None


def depth_figure(
    result: DepthResult,
    *,
    theory: bool = True,
    title: str | None = None,
    size: tuple[float, float] = (7.5, 4.6),
    dpi: int = 100,
    math_title: bool = False,
) -> Figure:
    """The explorer's plot of `result` as a stand-alone matplotlib Figure (no pyplot).

    theory=False hides the mean-field curve and its legend entry; title=None
    keeps the explorer's title (the settings), "" removes it. A title is text as typed:
    "$" is a dollar sign, unless math_title=True asks for matplotlib's mathtext ($x^2$).

    >>> fig = depth_figure(simulate("relu", "xavier_uniform", n_layers=4, width=16, seeds=2))
    >>> fig.get_size_inches().tolist(), fig.axes[0].get_yscale()
    ([7.5, 4.6], 'log')
    >>> [float(x) for x in fig.axes[0].get_xlim()]  # layer 0 to the last
    [0.0, 4.0]
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from .views.plots import DepthPlot  # the explorer's figure code, so a slide shows the same plot
    from .views.projector import layer_axis

    as_result(result)
    theory, math_title = flag("theory", theory), flag("math_title", math_title)
    if title is not None:
        instance("title", title, str, "a str or None")
        if math_title and (why := mathtext_error(title)):
            raise ValueError(f"title must be valid mathtext with math_title=True ({why}), got "
                             f"{title!r}")  # fmt: skip
    if not (isinstance(size, (tuple, list)) and len(size) == 2):
        instance("size", None, tuple, "(width, height) in inches")
    size = tuple(number("size", inches, above=0, maximum=1000) for inches in size)
    dpi = integer("dpi", dpi, minimum=1, maximum=10_000)
    fig = Figure(figsize=size, dpi=dpi)
    FigureCanvasAgg(fig)
    plot = DepthPlot(fig)
    plot.update(result, draw=False)
    layer_axis(plot.ax, [result])
    if not theory:
        plot.theory_line.set_visible(False)
        _drop_legend_entry(plot, "theory")
    if title is not None:
        title_text = plot.ax.set_title(title, fontsize=plot.ax.title.get_fontsize())
        title_text.set_parse_math(math_title)
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
            kinds = {"initializer": INITIALIZERS, "activation": ACTIVATIONS}
            kind = next((k for k, names in kinds.items() if name in names), "")
            if not kind or kind in curve:
                raise argparse.ArgumentTypeError(
                    f"each curve is INITIALIZER, ACTIVATION or INITIALIZER+ACTIVATION, with "
                    f"@GAIN if wanted (e.g. xavier_normal+tanh@5/3); got {item.strip()!r}; "
                    f"initializers: {', '.join(INITIALIZERS)}; "
                    f"activations: {', '.join(ACTIVATIONS)}"
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
    """The command line's parser: the figure, present and check commands with their options.

    >>> args = build_parser().parse_args(["figure", "--n-layers", "50", "-o", "deep.svg"])
    >>> args.n_layers, args.output.name, args.math_title
    (50, 'deep.svg', False)
    """
    parser = argparse.ArgumentParser(
        prog="python -m tinyinit",
        description="tinyinit from the command line: figures for slides and handouts.",
    )
    commands = parser.add_subparsers(
        dest="command",
        metavar="{figure,present,check,grade,inventory,submit,student}",
        required=True,
    )
    fig = commands.add_parser(
        "figure",
        help="write the depth explorer's plot for given settings to a png, svg or pdf file",
        description="Write the depth explorer's plot (mean square per layer: median over "
        "seeds, min-to-max band, mean-field theory) for the given settings to a file.",
        epilog="examples:\n"
        "  python -m tinyinit figure --initializer xavier_uniform --activation relu "
        "-o collapse.png\n"
        "  python -m tinyinit figure --initializer kaiming_normal --activation relu "
        "-o kept.svg\n"
        "  python -m tinyinit figure --activation tanh --gain 5/3 --n-layers 50 -o tanh.pdf\n"
        "  python -m tinyinit figure --compare xavier_uniform,kaiming_normal --slide "
        "-o slide.svg\n"
        "  python -m tinyinit figure --compare xavier_uniform,kaiming_normal --aspect 4:3 "
        "-o slide.png\n"
        "  python -m tinyinit figure --compare xavier_normal+tanh@1,xavier_normal+tanh@5/3 "
        "--ylim 1e-2,10 -o tanh.png",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _one_line_errors(fig)
    fig.set_defaults(run=figure_command, subparser=fig)
    net = fig.add_argument_group("network")
    net.add_argument(
        "--initializer",
        choices=list(INITIALIZERS),
        default=DEPTH_START["initializer"],
        help="how the weights are drawn (default: %(default)s)",
    )
    net.add_argument(
        "--activation",
        choices=list(ACTIVATIONS),
        default=DEPTH_START["activation"],
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
        default=DEPTH_START["std"],
        help="the weights' std for --initializer normal (default: %(default)s)",
    )
    net.add_argument(
        "--n-layers",
        metavar="N",
        type=_int_in(1, MAX_LAYERS),
        default=DEPTH_START["n_layers"],
        help=f"number of layers, 1 to {MAX_LAYERS} (default: %(default)s)",
    )
    net.add_argument(
        "--width",
        type=_int_in(1, MAX_WIDTH),
        default=DEPTH_START["width"],
        help=f"units per layer, 1 to {MAX_WIDTH} (default: %(default)s)",
    )
    net.add_argument(
        "--seeds",
        type=_int_in(1, MAX_SEEDS),
        default=DEPTH_START["seeds"],
        help=f"how many seeds (networks) to measure, 1 to {MAX_SEEDS} (default: %(default)s)",
    )
    net.add_argument(
        "--batch",
        type=_int_in(1, 4096),
        default=DEPTH_START["batch"],
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
        "--title",
        default=None,
        help="title above the plot, as typed (default: what the numbers show, e.g. 'Xavier "
        'collapses a 20-layer ReLU network\'; "" for none)',
    )
    look.add_argument(
        "--math-title",
        action="store_true",
        help="typeset $...$ in the title as math (matplotlib's mathtext), e.g. '$x^2$'",
    )
    look.add_argument(
        "--dpi",
        type=_int_in(10, 1200),
        default=SLIDE_DPI,
        help="dots per inch (default: %(default)s, a slide's 1920x1080 pixels)",
    )
    look.add_argument(
        "--aspect",
        choices=list(SLIDE_SIZES),
        default=None,
        help="the slide's shape: 16:9 (default, 13.33x7.5 inches: 1920x1080 pixels at 144 dpi) "
        "or 4:3 (10x7.5 inches: 1440x1080)",
    )
    look.add_argument(
        "--size",
        type=_size,
        default=None,
        metavar="WxH",
        help="figure size in inches, e.g. 8x5 for a handout (default: the slide's, --aspect)",
    )
    look.add_argument(
        "--compare",
        type=_curves,
        default=None,
        metavar="CURVES",
        help="several curves on one axis, comma-separated, each named where it ends: "
        "initializers (xavier_uniform,kaiming_normal), activations (relu,tanh) or both "
        "(xavier_normal+tanh@5/3, @ a gain); the rest from the options above",
    )
    look.add_argument(
        "--slide",
        action="store_true",
        help="projector type: large fonts, thick lines, black axes (the presentation app's)",
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
    _one_line_errors(show)
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
    add_grade_command(commands)
    add_inventory_command(commands)
    add_submit_command(commands)
    add_student_command(commands)
    return parser


# --- python -m tinyinit check my_init.py ------------------------------------------------------


def add_check_command(commands) -> None:
    from .course.catalog import NAMES
    from .course.checker import DEFAULT_TIMEOUT, MAX_TIMEOUT, REQUIRE_SANDBOX_VARIABLE
    from .course.sandbox import LIMITS

    check = commands.add_parser(
        "check",
        help="run the module card's eleven tests on your my_init.py (exit 0 when all pass)",
        description="Run the module card's test catalog (M07.3, section 4) on the seven\n"
        "functions of your file. Each test prints passed, failed (what it measured, a hint,\n"
        "the card's pitfall), not written yet, error (your line) or timed out. Your file runs\n"
        "in a process of its own that only answers calls; the tests and the verdict run here.\n"
        "On Linux with bubblewrap, that process runs in a sandbox: its own user, process,\n"
        "network and IPC namespaces, a read-only file system showing only Python, numpy,\n"
        "tinyinit's generator and your file (a scratch folder is all it can write), and limits:\n"
        f"{_wrapped(LIMITS.text())}.\n"
        "Elsewhere it runs as a plain process, and says so: fine for practice, not a grade.\n"
        "Exit status: 0 when every test run passed, 1 when one did not, 2 when the file\n"
        "cannot be read (missing, a folder, not UTF-8), an option is wrong, no sandbox can be\n"
        "made where one is required, or the check was stopped (Ctrl+C, SIGTERM).",
        epilog="examples:\n"
        "  python -m tinyinit check my_init.py\n"
        "  python -m tinyinit check my_init.py --test test_fans_and_gains_match_torch\n"
        "\nthe card's tests, in its order:\n  " + "\n  ".join(NAMES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # A wrong file or option is one line, not the usage text: the student reads one thing.
    _one_line_errors(check)
    check.set_defaults(run=check_command, subparser=check)
    check.add_argument(
        "path",
        nargs="?",
        default="my_init.py",
        metavar="FILE",
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
        "--require-sandbox",
        action="store_true",
        help="refuse (exit 2) where the sandbox cannot be made, as a grade must; "
        f"also when {REQUIRE_SANDBOX_VARIABLE}=1 or under nbgrader's autograde",
    )
    check.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT,
        help=f"seconds one test may take before it is stopped, at most {MAX_TIMEOUT:g} "
        "(default: %(default)g)",
    )


def add_grade_command(commands) -> None:
    from .course.checker import DEFAULT_TIMEOUT
    from .course.sandbox import LIMITS

    grade = commands.add_parser(
        "grade",
        help="check a whole class's my_init.py files in the sandbox and write grades, "
        "feedback and a report",
        description="Check every submission in SUBMISSIONS as `check --require-sandbox` does,\n"
        "several at once, and write into DIR: grades.csv (one row per student), feedback/\n"
        "STUDENT.txt (the report the student would see) and report.html (pass rate per test,\n"
        "the card's pitfalls, scores). SUBMISSIONS is nbgrader's submitted/ folder\n"
        "(STUDENT/ASSIGNMENT/my_init.py), a folder of STUDENT/my_init.py, of STUDENT.py, or\n"
        "of the STUDENT.zip files that `python -m tinyinit submit` packs.\n"
        "A missing, broken, hostile or endless file is a row with its reason. Each student's\n"
        f"process has its own sandbox and limits: {_wrapped(LIMITS.text())}.\n"
        "Exit status: 0 when every submission was checked (whatever its verdict), 2 when\n"
        "the folder is missing or no sandbox can be made here.",
        epilog="example:\n  python -m tinyinit grade course/submitted --out grades",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _one_line_errors(grade)
    grade.set_defaults(run=grade_command, subparser=grade)
    grade.add_argument("submissions", metavar="SUBMISSIONS", help="the folder of submissions")
    grade.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="DIR",
        help="the folder to write grades.csv, feedback/ and report.html into",
    )
    grade.add_argument(
        "--jobs",
        type=_positive_integer,
        default=None,
        help="checks at once (default: the CPUs this process may use)",
    )
    grade.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT,
        help="seconds one test may take before it is stopped (default: %(default)g)",
    )


def add_inventory_command(commands) -> None:
    inventory = commands.add_parser(
        "inventory",
        help="the concept inventory's items, or the teacher's key (--key)",
        description="The module's concept inventory: thirteen multiple-choice items a student\n"
        "answers before notebook 01 and after 04 (saved as inventory.json beside the\n"
        "notebooks). --key prints the teacher's key as JSON: each item's id, its right\n"
        "choice and the misconception behind each wrong one. Without --key, the items are\n"
        "printed without their answers.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _one_line_errors(inventory)
    inventory.set_defaults(run=inventory_command, subparser=inventory)
    inventory.add_argument("--key", action="store_true", help="print the teacher's key (JSON)")


def inventory_command(args, parser, stderr: TextIO) -> int:
    import json

    from .course.inventory import ITEMS, key

    if args.key:
        print(json.dumps(key(), indent=1, ensure_ascii=False))
        return 0
    for index, item in enumerate(ITEMS, 1):
        print(f"{index}. [{item.id}] {item.stem}")
        for letter, text in item.choices.items():
            print(f"   ({letter}) {text}")
    return 0


def add_submit_command(commands) -> None:
    submit = commands.add_parser(
        "submit",
        help="pack my_init.py, its check report and inventory.json into NAME.zip to hand in",
        description="Check my_init.py in the folder given (default: this one), then pack it,\n"
        "the report and the concept inventory's answers (inventory.json, when there) into\n"
        "NAME.zip beside it, the one file to hand in. The teacher checks it again; the\n"
        "report in the zip is your copy. Exit status: 0 when the zip is written, 2 when\n"
        "there is no my_init.py or the name is not one a file can carry.",
        epilog="example:\n  python -m tinyinit submit --name ada_lovelace",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _one_line_errors(submit)
    submit.set_defaults(run=submit_command, subparser=submit)
    submit.add_argument("--name", required=True, help="your name as the course files it")
    submit.add_argument(
        "folder", nargs="?", default=".", type=Path, metavar="FOLDER",
        help="the folder of your my_init.py (default: this one)",
    )  # fmt: skip


def submit_command(args, parser, stderr: TextIO) -> int:
    from .course.checker import UnreadableFile, check_init
    from .course.handin import pack, student_name

    def work() -> int:
        name = student_name(args.name)
        report = check_init(args.folder / "my_init.py")
        where = (
            f"checked as a plain process ({report.not_isolated})"
            if report.not_isolated
            else "checked in the sandbox"
        )
        packed = pack(args.folder, name, f"{where}\n{report}\n")
        stderr.write(f"{report.summary()}\nwrote {packed}: hand this file in\n")
        return 0

    return in_one_line(work, parser, stderr, (UnreadableFile, ValueError), "nothing packed")


# --- python -m tinyinit student DIR ----------------------------------------------------------


def add_student_command(commands) -> None:
    student = commands.add_parser(
        "student",
        help="write the course's student edition into a folder: notebooks and my_init.py",
        description="Write the student edition of the course into FOLDER: every notebook,\n"
        "its exercises waiting for your answers, and my_init.py, the seven functions you\n"
        "write, stubbed. It never writes over your work: where FOLDER holds a file that\n"
        "differs from a fresh edition, nothing is written (exit status 1) unless --force.\n"
        "Then open the folder with JupyterLab. Needs pip install 'tinyinit[lab]'.",
        epilog="example:\n  python -m tinyinit student tinyinit-course\n"
        "  jupyter lab tinyinit-course",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _one_line_errors(student)
    student.set_defaults(run=student_command, subparser=student)
    student.add_argument("folder", type=Path, metavar="FOLDER", help="the folder to write into")
    student.add_argument(
        "--force", action="store_true", help="write the edition anew over files you changed"
    )


def student_command(args, parser, stderr: TextIO) -> int:
    import shlex

    try:
        from .course.student_edition import (
            WouldOverwrite,
            course_notebooks,
            edition_summary,
            make_student,
        )
    except ModuleNotFoundError as error:  # not in the core install: the error names the extra
        _fail(parser, str(error))
    notebooks = course_notebooks()
    folder = shlex.quote(str(args.folder))
    try:
        written = make_student(notebooks, args.folder, force=args.force)
    except WouldOverwrite as error:
        stderr.write(
            f"{parser.prog}: {error}. Open it with: jupyter lab {folder}   (or move it away, "
            f"or write the edition anew over it with --force)\n"
        )
        return 1
    except NotADirectoryError as error:  # a file where the folder should be
        _fail(parser, f"argument FOLDER: {error}")
    except OSError as error:  # a read-only place, a name the system refuses
        _fail(parser, f"argument FOLDER: cannot write {str(args.folder)!r}: "
                      f"{error.strerror or error}")  # fmt: skip
    print(edition_summary(notebooks, args.folder, written))
    print(f"Open it with: jupyter lab {folder}")
    return 0


def _positive_integer(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1; got {text!r}")
    return value


def grade_command(args, parser, stderr: TextIO) -> int:
    from .course.checker import UnreadableFile, chosen_sandbox
    from .course.grading import grade_from_command_line
    from .course.sandbox import SandboxUnavailable, protect_this_process

    protect_this_process()

    def work() -> int:
        chosen_sandbox(True)
        return grade_from_command_line(args, stderr)

    refused = (UnreadableFile, SandboxUnavailable)
    # A stop comes in the middle of the progress bar's line: the one line starts a new one.
    return in_one_line(work, parser, stderr, refused, "no grades written", after_progress=True)


def _test_name(text: str) -> str:
    from .course.catalog import NAMES

    if text not in NAMES:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a test of the card; its tests are {', '.join(NAMES)}"
        )
    return text


def _seconds(text: str) -> float:
    from .course.checker import checked_timeout

    try:
        return checked_timeout(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of seconds > 0 and <= {_max_timeout():g}"
        ) from None


def _max_timeout() -> float:
    from .course.checker import MAX_TIMEOUT

    return MAX_TIMEOUT


def check_command(args, parser, stderr: TextIO) -> int:
    from .course.checker import UnreadableFile, check_init
    from .course.sandbox import SandboxUnavailable, protect_this_process

    protect_this_process()

    def work() -> int:
        sandbox = True if args.require_sandbox else None
        report = check_init(args.path, tests=args.tests, timeout=args.timeout, sandbox=sandbox)
        text = str(report) + "\n"
        encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
        sys.stdout.write(text.encode(encoding, "replace").decode(encoding))  # a console without ✓
        if report.not_isolated:
            stderr.write(
                f"{parser.prog}: this run is not isolated ({report.not_isolated}): fine for "
                "practice; a grade needs the sandbox\n"
            )
        return 0 if report.ok else 1

    return in_one_line(work, parser, stderr, (UnreadableFile, SandboxUnavailable), "no verdict")


def in_one_line(
    work: Callable[[], int],
    parser: argparse.ArgumentParser,
    stderr: TextIO,
    refused: tuple[type[Exception], ...],
    when_stopped: str,
    after_progress: bool = False,
) -> int:
    """Run a command that checks students' code (check, grade, submit) so that whatever ends
    it early ends it in one line and exit 2: an input it refuses (an exception of `refused`)
    as `PROG: error: ...`, Ctrl+C or SIGTERM as `PROG: stopped by SIGINT: {when_stopped}`,
    after its students' processes are killed. Otherwise the command's own exit code."""
    try:
        with stopped_by_signals():
            return work()
    except refused as error:
        stderr.write(f"{parser.prog}: error: {error}\n")
    except Stopped as stop:
        lead = "\n" if after_progress else ""
        stderr.write(f"{lead}{parser.prog}: stopped by {stop}: {when_stopped}\n")
    return 2


class Stopped(BaseException):
    """Ctrl+C or SIGTERM during a check: the check ends, its student's process with it."""


@contextlib.contextmanager
def stopped_by_signals():
    """Within it, SIGINT and SIGTERM raise Stopped (named by the signal), so that the check's
    clean-up runs (its student's process is killed) and the command says one line."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(number, frame):
        raise Stopped(signal.Signals(number).name)

    kept = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in kept.items():
            signal.signal(s, handler)


def _wrapped(text: str) -> str:
    return textwrap.fill(text, 88)


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
        from .present import SHARE_URL_VARIABLE, app_path, serve_voila, voila_command
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
    return serve_voila(command, env=env)  # Ctrl+C and SIGTERM stop the server and its kernels


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


def _fail(parser: argparse.ArgumentParser, message: str) -> None:
    """Stop with one line on stderr and exit status 2, as a bad option does, without usage."""
    parser.exit(2, f"{parser.prog}: error: {message}\n")


def _one_line_errors(parser: argparse.ArgumentParser) -> None:
    """Every error of a command's parser is one line and exit status 2 (`_fail`), not the usage
    text followed by the error: whoever typed the command reads one thing, what was wrong."""
    parser.error = functools.partial(_fail, parser)


def check_figure_options(parser: argparse.ArgumentParser, args) -> str:
    """The checks no single option can make; the output's format. A parser error if one fails."""
    try:
        is_folder, parent_exists = args.output.is_dir(), args.output.parent.is_dir()
    except OSError as error:  # a name the system refuses (too long, ...)
        parser.error(f"argument -o/--output: cannot write {str(args.output)!r}: {error.strerror}")
    if is_folder:
        parser.error(f"argument -o/--output: {str(args.output)!r} is a folder; name a file in it")
    fmt = output_format(parser, args.output, args.format)
    if args.n_layers * args.width**2 > MAX_WEIGHT_NUMBERS:
        parser.error(
            f"argument --n-layers/--width: n_layers * width**2 must be at most "
            f"{MAX_WEIGHT_NUMBERS} (1 GiB of weights); got {args.n_layers} * {args.width}**2"
        )
    width, height = (round(inches * args.dpi) for inches in args.size)
    if fmt == "png" and width * height > MAX_PIXELS:
        parser.error(
            f"argument --dpi/--size: a png of at most {MAX_PIXELS:,} pixels; got {width} x "
            f"{height} = {width * height:,} (--size {args.size[0]:g}x{args.size[1]:g} at "
            f"--dpi {args.dpi})"
        )
    if not parent_exists:
        parser.error(f"argument -o/--output: folder {str(args.output.parent)!r} does not exist")
    if args.math_title and args.title is not None and (why := mathtext_error(args.title)):
        parser.error(f"argument --title: not valid mathtext for --math-title ({why})")
    if why := unwritable(args.output):  # before the simulation, not after it
        _fail(parser, f"argument -o/--output: cannot write {str(args.output)!r}: {why}")
    return fmt


def unwritable(path: Path) -> str | None:
    """Why `path` cannot be written, or None if it can: tried, leaving nothing behind.

    A file there is opened for writing without being changed; a new one is made and removed.
    (Asking the permissions is not enough: root may write anywhere they say, and still not
    into /proc or a read-only disk.)
    """
    try:
        if path.exists():
            with open(path, "r+b"):
                pass
        else:
            with open(path, "xb"):
                pass
            path.unlink()
    except OSError as error:
        return error.strerror or str(error)
    return None


def figure_command(args, parser, stderr: TextIO) -> int:
    from .views.naming import curve_name, curve_names, point_title, settings_title
    from .views.projector import (
        SLIDE_SCALE,
        comparison_alt,
        comparison_figure,
        fit_title,
        fix_ylim,
        projector_style,
        save_figure,
        scaled_fonts,
        style_figure,
    )

    if args.aspect is not None and args.size is not None:
        parser.error("argument --aspect: not with --size, which gives the size itself")
    if args.size is None:
        args.size = SLIDE_SIZES[args.aspect or "16:9"]
    fmt = check_figure_options(parser, args)
    end = "\r" if stderr.isatty() else "\n"
    curves = args.compare or [{}]
    results = []
    for i, curve in enumerate(curves, 1):
        initializer = curve.get("initializer", args.initializer)
        activation = curve.get("activation", args.activation)
        gain = resolve_gain(curve.get("gain", args.gain), initializer, activation)
        which = f"curve {i}/{len(curves)}, " if len(curves) > 1 else ""

        def progress(k: int, n: int, which=which) -> None:
            print(f"{which}seed {k}/{n}", end=end if k < n else "\n", file=stderr, flush=True)

        results.append(
            simulate(
                activation,
                initializer,
                gain=gain,
                std=args.std,
                n_layers=args.n_layers,
                width=args.width,
                seeds=seeds_reported(args.seeds, progress),
                batch=args.batch,
                direction="backward" if args.backward else "forward",
            )
        )
    if args.compare:
        names = curve_names(results)
        fig = comparison_figure(
            results, names, title=args.title, theory=args.theory, size=args.size, dpi=args.dpi,
            slide=args.slide, ylim=args.ylim, math_title=args.math_title,
        )  # fmt: skip
    else:
        names = [curve_name(results[0])]
        title = args.title
        if title is None:  # what the numbers show, then the settings
            title = f"{point_title(results, names)}\n{settings_title(results[0])}"
        fig = depth_figure(
            results[0], theory=args.theory, title=title, size=args.size, dpi=args.dpi,
            math_title=args.math_title,
        )  # fmt: skip
        if args.slide:
            style_figure(fig, scaled_fonts(SLIDE_SCALE))
            projector_style(fig, SLIDE_SCALE)
        fit_title(fig)
        if args.ylim is not None:
            fix_ylim(fig.axes[0], args.ylim)
    title = fig.axes[0].get_title().replace("\n", ": ") or "tinyinit: mean square per layer"
    try:
        save_figure(
            fig, args.output, fmt, dpi=args.dpi, title=title, alt=comparison_alt(results, names)
        )
    except OSError as error:  # a read-only folder, a full disk, a name the system refuses
        _fail(parser, f"argument -o/--output: cannot write {str(args.output)!r}: "
                      f"{error.strerror or error}")  # fmt: skip
    print(f"wrote {args.output}", file=stderr)
    return 0


def main(argv: list[str] | None = None, stderr: TextIO | None = None) -> int:
    """Run the command line with `argv`; returns the exit code (bad input: SystemExit(2)).

    >>> import io, tempfile
    >>> from pathlib import Path
    >>> out = str(Path(tempfile.mkdtemp()) / "relu.svg")
    >>> main(["figure", "--n-layers", "3", "--width", "8", "--seeds", "2", "-o", out],
    ...      stderr=io.StringIO())
    0
    >>> Path(out).read_text().count("<svg") >= 1
    True
    """
    args, extras = build_parser().parse_known_args(argv)
    if extras:  # argparse would say so in the usage text of the top parser: one line instead
        args.subparser.error(f"unrecognized arguments: {' '.join(extras)}")
    return args.run(args, args.subparser, stderr or sys.stderr)

"""The static figures: drawn once, shown in a notebook with their text alternative, or saved.

Several depth experiments on one log axis (`compare_figure`, tinyinit.physics.propagation),
the residual stream's two panels (`residual_figure`, tinyinit.physics.residual), and muP's
coordinate checks and learning-rate sweeps (`plot_coordinate_check`, `plot_lr_sweep`,
tinyinit.networks.mup); and how any figure reaches a reader: `show` (a notebook's output, its
alt text with it) and `png_bytes` (a picture for a widget or a page).

Their colours, type and words are every figure's (`tinyinit.views.style`); the plots the
explorers redraw while a slider moves are in `tinyinit.views.plots`.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

import numpy as np
from matplotlib import colormaps, ticker
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .._extras import extra
from ..core.arguments import flag, instance, integer, integers, real_array, shown
from ..physics.depth_result import DepthResult
from ..physics.residual import ResidualStack, block_variances
from .naming import curve_names_checked, results_checked
from .style import (
    MIN_DPI,
    TICK_FONTSIZE,
    curve_colors,
    figure_checked,
    initializer_color,
    log_drawable,
    quantity_label,
    size_pair,
)

__all__ = [
    "compare_figure",
    "plot_coordinate_check",
    "plot_lr_sweep",
    "png_bytes",
    "residual_figure",
    "show",
]


def compare_figure(
    results: Sequence[DepthResult],
    names: Sequence[str],
    title: str = "",
    figsize=(7.5, 4.2),
    theory: bool = True,
) -> Figure:
    """A static figure of several results on one log axis: median, band and theory each.

    Each result in its colour (`curve_colors`), named in the legend by `names`;
    theory=False leaves the dashed theory curves out. Made without pyplot, so it is never
    shown twice and works under any backend.

    >>> from tinyinit.physics.propagation import simulate
    >>> runs = [simulate("relu", i, n_layers=3, width=16, seeds=2)
    ...         for i in ("xavier_uniform", "kaiming_normal")]
    >>> fig = compare_figure(runs, ["Xavier", "Kaiming"], title="ReLU, 3 layers")
    >>> [text.get_text() for text in fig.axes[0].get_legend().get_texts()]
    ['Xavier', 'Kaiming', 'theory (dashed)']
    """
    results = results_checked(results)
    names = curve_names_checked(names, len(results))
    instance("title", title, str, "a text")
    figsize, theory = size_pair("figsize", figsize), flag("theory", theory)
    fig = Figure(figsize=figsize, dpi=100)
    ax = fig.add_subplot()
    ax.set_yscale("log")
    ax.tick_params(labelsize=TICK_FONTSIZE)
    for result, name, color in zip(results, names, curve_colors(results)):
        layers = result.layers
        ax.fill_between(layers, log_drawable(result.low), log_drawable(result.high), color=color,
                        alpha=0.2, lw=0)  # fmt: skip
        ax.plot(layers, log_drawable(result.median), "o-", ms=3, color=color, label=name)
        if theory:
            ax.plot(layers, log_drawable(result.theory), "--", color=color, lw=1)
    ax.axhline(1.0, color="0.45", lw=0.9, ls=":")
    if theory:
        ax.plot([], [], "--", color="0.3", lw=1, label="theory (dashed)")
    ax.set_xlabel("layer ℓ")
    ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    ax.set_ylabel(quantity_label(results[0].direction))
    ax.set_title(title, fontsize=11)
    ax.legend(fontsize=10)
    ax.grid(True, which="major", alpha=0.25)
    fig.tight_layout()
    return fig


def png_bytes(fig: Figure, dpi: int = 100) -> bytes:
    """The figure as PNG bytes (for IPython.display.Image or an ipywidgets.Image).

    >>> png_bytes(Figure(figsize=(1, 1)), dpi=20)[:4]
    b'\\x89PNG'
    """
    figure_checked("fig", fig)
    dpi = integer("dpi", dpi, minimum=MIN_DPI)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def show(fig: Figure, alt: str) -> None:
    """Show a figure in a notebook with its text alternative, then close it.

    The picture is the one the inline backend would store (IPython's `print_figure`, PNG,
    tight bounding box), and `alt` travels with it twice: as the PNG's `alt` metadata, which
    nbconvert, MyST-NB and JupyterLab put on the `<img>`, and as the output's text/plain, what a
    terminal, a screen reader on a text view and strict nbval read. Say what the figure shows
    and what it concludes, with the numbers of its title computed, not typed:

        show(fig, f"Mean square per layer of a 20-layer ReLU network: Xavier falls to "
                  f"2^{np.log2(xavier[-1]):.1f} of the input, Kaiming stays at {kaiming[-1]:.2g}")

    It never opens a window, whatever the backend: the picture is rendered to PNG. Outside a
    notebook (a script, a doctest) IPython prints the output, alt included, instead of
    displaying it:

    >>> import contextlib, io
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(2, 1.5))
    >>> _ = ax.plot([1, 2, 3])
    >>> with contextlib.redirect_stdout(io.StringIO()) as printed:
    ...     show(fig, "A straight line rising from 1 to 3 over three points")
    >>> "rising from 1 to 3" in printed.getvalue(), plt.fignum_exists(fig.number)
    (True, False)
    """
    with extra("lab", "figures.show"):
        from IPython.core.pylabtools import print_figure
        from IPython.display import display

    figure_checked("fig", fig)
    accepted = "a sentence (15 characters or more) saying what the figure shows and concludes"
    instance("alt", alt, str, accepted)
    if len(alt.strip()) < 15:
        raise ValueError(
            "alt must be a sentence (15 characters or more) saying what the figure shows and "
            f"concludes, got {alt!r}"
        )

    data = print_figure(fig, "png", base64=True, bbox_inches="tight")
    display({"image/png": data, "text/plain": alt}, raw=True, metadata={"image/png": {"alt": alt}})
    import matplotlib.pyplot as plt

    plt.close(fig)


# --- the residual stream (tinyinit.physics.residual) ---------------------------------------------


def residual_figure(stack: ResidualStack, n_layers: int, depths: Iterable[int]):
    """Two panels: the stream after each block for n_layers, and the final variance vs N.

    Measured (markers) against theory (lines), without and with the 1/sqrt(2N) scaling.
    Linear axes: growth like 1 + 2N is a straight line there, where a log axis would bend it
    into what looks like saturation. Made with pyplot: close it, or `show` it, when done.

    >>> import matplotlib.pyplot as plt
    >>> from tinyinit import PCG32
    >>> from tinyinit.physics.residual import draw_residual_stack
    >>> fig = residual_figure(draw_residual_stack(4, 32, 32, 16, PCG32(0)), 4, depths=[1, 2, 4])
    >>> [ax.get_title() for ax in fig.axes]
    ['N = 4 blocks', '1 + 2N unscaled, 2 scaled']
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt

    instance("stack", stack, ResidualStack, "a ResidualStack (draw_residual_stack)")
    n_layers = integer("n_layers", n_layers, minimum=1, maximum=stack.max_layers)
    depths = integers("depths", depths, minimum=1)
    if not depths or max(depths) > stack.max_layers:
        raise ValueError(f"depths must be numbers of blocks from 1 to {stack.max_layers}, "
                         f"got {depths}")  # fmt: skip
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    # Unscaled blocks are Kaiming's variance-preserving sublayers; scaled ones GPT-2's.
    colors = (
        (False, initializer_color("kaiming")),
        (True, initializer_color("scaled_residual")),
    )
    b = np.arange(n_layers + 1)
    for scaled, color in colors:
        label = "scaled 1/√(2N)" if scaled else "unscaled"
        measured, theory = block_variances(stack, n_layers, scaled)
        left.plot(b, measured, "o", ms=3, color=color, label=f"{label}, measured")
        left.plot(b, theory, "-", color=color, lw=1, label=f"{label}, theory")
    left.set(xlabel="block b", ylabel="Var(stream)", title=f"N = {n_layers} blocks")
    depths = np.array(sorted(depths))
    for scaled, color in colors:
        curves = [block_variances(stack, n, scaled) for n in depths]
        right.plot(depths, [measured[-1] for measured, _ in curves], "o", color=color)
        right.plot(depths, [theory[-1] for _, theory in curves], "-", color=color, lw=1)
    right.set(
        xlabel="number of blocks N",
        ylabel="Var(stream) after the last block",
        title="1 + 2N unscaled, 2 scaled",
    )
    left.legend(fontsize=10)
    for ax in (left, right):
        ax.tick_params(labelsize=TICK_FONTSIZE)
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
    fig.tight_layout()
    return fig


# --- muP: coordinate checks and learning-rate sweeps (tinyinit.networks.mup) ----------------------


def plot_coordinate_check(ax, widths, sizes: np.ndarray, title: str = "") -> None:
    """One line per step t: coordinate size of one layer against width, log-log.

    sizes has shape (len(widths), steps + 1), e.g. coordinate_check(...)[:, :, -1]
    for the output. Missing points are diverged runs (NaN).

    >>> from tinyinit.networks.mup import coordinate_check
    >>> sizes = coordinate_check((64, 256), 1, "sp", "adam", 0.01)[:, :, -1]
    >>> ax = Figure().add_subplot()
    >>> plot_coordinate_check(ax, [64, 256], sizes, "SP: output y")
    >>> [line.get_label() for line in ax.get_lines()], ax.get_xscale(), ax.get_yscale()
    (['t=0', 't=1'], 'log', 'log')
    """
    instance("ax", ax, Axes, "a matplotlib Axes")
    widths = integers("widths", widths, minimum=1)
    sizes = real_array("sizes", sizes, ndim=2, what=f"a real array of {len(widths)} rows")
    if len(sizes) != len(widths):
        raise ValueError(
            f"sizes must have one row per width of widths ({len(widths)}), got {shown(sizes)}"
        )
    if not ((sizes > 0) | np.isnan(sizes)).all() or not (sizes > 0).any():
        raise ValueError(f"sizes must be rms values > 0 (NaN where a run diverged), got {sizes}")
    instance("title", title, str, "a text")
    colors = colormaps["viridis"](np.linspace(0, 0.9, sizes.shape[1]))
    for t, color in enumerate(colors):
        ax.plot(widths, sizes[:, t], "o-", color=color, ms=3, label=f"t={t}")
    ax.set(xscale="log", yscale="log", xlabel="width n", ylabel="rms", title=title)
    ax.set_xticks(widths, [str(w) for w in widths])
    ax.minorticks_off()


def plot_lr_sweep(ax, widths, lrs, losses: np.ndarray, title: str = "") -> None:
    """Final training loss against global learning rate, one line per width.

    A star marks each width's best learning rate; diverged runs (NaN) are gaps.

    >>> from tinyinit.networks.mup import lr_sweep
    >>> lrs = 2.0 ** np.arange(-10, -3, 2)
    >>> losses = lr_sweep((32, 256), lrs, "sp", "adam", 5, base_width=32)
    >>> ax = Figure().add_subplot()
    >>> plot_lr_sweep(ax, [32, 256], lrs, losses, "SP: loss after 5 Adam steps")
    >>> stars = [line for line in ax.get_lines() if line.get_marker() == "*"]
    >>> [float(np.log2(star.get_xdata()[0])) for star in stars]     # each width's best lr
    [-6.0, -10.0]
    """
    instance("ax", ax, Axes, "a matplotlib Axes")
    widths = integers("widths", widths, minimum=1)
    lrs = real_array("lrs", lrs, ndim=1, finite=True)
    losses = real_array("losses", losses, ndim=2)
    if losses.shape != (len(widths), len(lrs)):
        raise ValueError(f"losses must have shape (widths, lrs) = {(len(widths), len(lrs))}, "
                         f"got {shown(losses)}")  # fmt: skip
    instance("title", title, str, "a text")
    colors = colormaps["plasma"](np.linspace(0, 0.85, len(widths)))
    for width, row, color in zip(widths, losses, colors, strict=True):
        ax.plot(lrs, row, "o-", color=color, ms=3, label=f"n={width}")
        best = np.nanargmin(row)
        ax.plot(lrs[best], row[best], "*", color=color, ms=14, mec="k")
    ax.set(xscale="log", yscale="log", xlabel="global learning rate", ylabel="loss", title=title)

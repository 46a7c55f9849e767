"""The residual stream: what N Transformer blocks add up to, and GPT-2's 1/sqrt(2N).

A pre-LN block adds two sublayer outputs to a running stream,

    x <- x + attn(LN(x)),    x <- x + mlp(LN(x)),

2N additions for N blocks. LN gives every sublayer the same unit-size input,
so each addition has the same variance s**2 whatever the stream holds; if they
are roughly independent, the variances add:

    Var(x_k) = Var(x_0) + k * s**2,     k = 0 .. 2N.

A variance-preserving sublayer (s**2 = 1) makes the stream grow like 1 + 2N.
Scaling the output projections' std by 1/sqrt(2N) (`scaled_residual_std`)
makes s**2 = 1/(2N), and the 2N additions sum to 1 whatever N is.

Pure functions first (a stack drawn once, the stream it makes, the theory, a
checker for a model's output projections), then a thin live explorer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from .distributions import normal
from .init import calculate_gain, kaiming_normal, kaiming_std, normal_init, scaled_residual_std

# --- a stack of residual sublayers, drawn once -------------------------------------------


def normalize(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """LayerNorm at init (gain 1, bias 0): each row to mean 0, mean square 1.

    LN(x)_i = (x_i - mean(x)) / sqrt(var(x) + eps), over the last axis.

    >>> normalize(np.array([[1.0, 3.0]]))
    array([[-0.999995,  0.999995]])
    """
    x = np.asarray(x, dtype=np.float64)
    centered = x - x.mean(axis=-1, keepdims=True)
    return centered / np.sqrt((centered**2).mean(axis=-1, keepdims=True) + eps)


@dataclass(frozen=True)
class ResidualStack:
    """2 * max_blocks two-layer sublayers f(x) = W_out relu(W_in x), and an input x_0.

    w_in:  (2 * max_blocks, hidden, width), Kaiming (ReLU, fan_in): std sqrt(2 / width)
    w_out: (2 * max_blocks, width, hidden), N(0, 1 / hidden): variance preserving,
           so each sublayer adds variance 1 before any residual scaling
    x0:    (tokens, width), standard normals: Var(x_0) = 1

    Sublayers 2b and 2b + 1 play the attention and MLP of block b.
    """

    w_in: np.ndarray
    w_out: np.ndarray
    x0: np.ndarray

    @property
    def max_blocks(self) -> int:
        return self.w_in.shape[0] // 2


def draw_residual_stack(
    max_blocks: int, width: int, hidden: int, tokens: int, rng
) -> ResidualStack:
    """Draw a ResidualStack from rng, in this order: x_0, then W_in, W_out per sublayer.

    >>> from tinyinit import PCG32
    >>> draw_residual_stack(2, 8, 16, 4, PCG32(0)).w_in.shape
    (4, 16, 8)
    """
    if isinstance(max_blocks, bool) or not isinstance(max_blocks, (int, np.integer)):
        raise ValueError(f"max_blocks must be an integer >= 1, got {max_blocks!r}")
    if max_blocks < 1:
        raise ValueError(f"max_blocks must be an integer >= 1, got {max_blocks!r}")
    x0 = normal(rng, tokens * width).reshape(tokens, width)
    w_in, w_out = [], []
    for _ in range(2 * max_blocks):
        w_in.append(kaiming_normal((hidden, width), "fan_in", "relu", rng))
        w_out.append(normal_init((width, hidden), 1.0 / math.sqrt(hidden), rng))
    return ResidualStack(np.stack(w_in), np.stack(w_out), x0)


def stream_variance(x: np.ndarray) -> float:
    """The variance of the stream: np.var over every entry (all tokens, all features)."""
    return float(np.var(x))


def stream_variances(
    stack: ResidualStack, n_blocks: int, out_scale: float = 1.0, *, pre_norm: bool = True
) -> np.ndarray:
    """Var(x_k) after each of the 2N additions x <- x + out_scale * f(LN(x)); shape (2N + 1,).

    Entry 0 is the input; entry 2b is the stream after b whole blocks. out_scale
    multiplies every output projection (1 / sqrt(2N) for GPT-2's scaling): the
    weights are drawn once and rescaled, never redrawn. pre_norm=False feeds
    the raw stream to f, as a residual network without LayerNorm does.

    >>> from tinyinit import PCG32
    >>> stack = draw_residual_stack(2, 128, 128, 128, PCG32(0))
    >>> stream_variances(stack, 2).round(1)         # theory 1, 2, 3, 4, 5
    array([1. , 2. , 3. , 3.8, 4.7])
    """
    if not 1 <= n_blocks <= stack.max_blocks:
        raise ValueError(f"n_blocks must be in 1 .. {stack.max_blocks}, got {n_blocks!r}")
    x = stack.x0.astype(np.float64)
    variances = [stream_variance(x)]
    for k in range(2 * n_blocks):
        h = np.maximum((normalize(x) if pre_norm else x) @ stack.w_in[k].T, 0.0)
        x = x + out_scale * (h @ stack.w_out[k].T)
        variances.append(stream_variance(x))
    return np.array(variances)


def residual_variance_theory(
    n_blocks: int, *, scaled: bool, x0_var: float = 1.0, addition_var: float = 1.0
) -> np.ndarray:
    """Var(x_k) = Var(x_0) + k * s**2 for k = 0 .. 2N; shape (2N + 1,).

    s**2 = addition_var, divided by 2N when the output projections are scaled
    by 1/sqrt(2N): then the last entry is x0_var + addition_var whatever N is.

    >>> residual_variance_theory(2, scaled=False)
    array([1., 2., 3., 4., 5.])
    >>> residual_variance_theory(2, scaled=True)
    array([1.  , 1.25, 1.5 , 1.75, 2.  ])
    """
    s2 = addition_var / (2 * n_blocks) if scaled else addition_var
    return x0_var + s2 * np.arange(2 * n_blocks + 1)


def out_scale(n_blocks: int, scaled: bool) -> float:
    """The factor on every output projection's std: 1/sqrt(2N) if scaled, else 1."""
    return scaled_residual_std(1.0, n_blocks) if scaled else 1.0


# --- compounding: a small error per layer, raised to the depth -------------------------


def compounded(per_layer: float, depth: int) -> np.ndarray:
    """per_layer ** k for k = 0 .. depth: what a constant per-layer factor does.

    >>> float(compounded(0.95, 48)[-1].round(4))
    0.0853
    """
    return float(per_layer) ** np.arange(depth + 1)


def relu_stack_mean_squares(
    width: int, depth: int, variance_factor: float, rng, tokens: int = 256
) -> np.ndarray:
    """E[x**2] after each of `depth` ReLU layers with Var(W) = variance_factor * 2 / width.

    E[relu(z)**2] = Var(z) / 2 = variance_factor * E[x**2]: each layer multiplies
    the mean square by variance_factor (1 is Kaiming). Shape (depth + 1,).
    """
    x = normal(rng, tokens * width).reshape(tokens, width)
    std = kaiming_std(width, calculate_gain("relu")) * math.sqrt(variance_factor)
    mean_squares = [float(np.mean(x**2))]
    for _ in range(depth):
        x = np.maximum(x @ normal_init((width, width), std, rng).T.astype(np.float64), 0.0)
        mean_squares.append(float(np.mean(x**2)))
    return np.array(mean_squares)


# --- checker: did the 1/sqrt(2N) reach every output projection? ---------------------------

# One regex per residual output, its group the block index; matched at the end of
# a name so prefixes such as "transformer." or "model." do not matter.
GPT2_PATTERNS = {
    "attn": r"(?:^|\.)h\.(\d+)\.attn\.c_proj\.weight$",
    "mlp": r"(?:^|\.)h\.(\d+)\.mlp\.c_proj\.weight$",
}
LLAMA_PATTERNS = {
    "attn": r"(?:^|\.)layers\.(\d+)\.attention\.wo\.weight$",
    "mlp": r"(?:^|\.)layers\.(\d+)\.feed_forward\.w2\.weight$",
}

STATUSES = {
    "ok": "matches base/sqrt(2N)",
    "unscaled": "left at the base std: the 1/sqrt(2N) scaling did not reach it",
    "wrong": "matches neither the scaled nor the base std",
    "inconclusive": "too few weights to tell the scaled std from the base std",
    "missing": "no parameter of this name",
    "unexpected": "block index beyond n_layers",
}


@dataclass(frozen=True)
class ProjectionCheck:
    """One output projection: what was measured, what was expected, and the verdict."""

    layer: int
    kind: str
    name: str | None
    size: int
    std: float
    expected: float
    tolerance: float
    status: str

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class ResidualScalingReport:
    """The result of check_residual_scaling: one ProjectionCheck per (layer, kind).

    expected_std = base_std / sqrt(2 n_layers); ok when every check is "ok", and
    problems holds the others. Printed, it says what was found and where.

    >>> from tinyinit import PCG32
    >>> params = toy_gpt2_parameters(2, 32, PCG32(0), unscaled=[(1, "mlp")])
    >>> report = check_residual_scaling(params, 2)
    >>> report.ok, [(c.layer, c.kind, c.status) for c in report.problems]
    (False, [(1, 'mlp', 'unscaled')])
    >>> print(report)
    residual scaling, N = 2: expected std 0.02/sqrt(4) = 0.01000
    4 output projections: 3 ok, 1 unscaled
      UNSCALED    h.1.mlp.c_proj.weight: std 0.01978 (expected 0.01000 +- 0.00055)
    FAIL: 1 problem(s)
    """

    n_layers: int
    base_std: float
    expected_std: float
    checks: tuple[ProjectionCheck, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def problems(self) -> tuple[ProjectionCheck, ...]:
        return tuple(c for c in self.checks if not c.ok)

    def count(self, status: str) -> int:
        return sum(c.status == status for c in self.checks)

    def __str__(self) -> str:
        head = (
            f"residual scaling, N = {self.n_layers}: expected std "
            f"{self.base_std:g}/sqrt({2 * self.n_layers}) = {self.expected_std:.5f}"
        )
        counts = ", ".join(f"{self.count(s)} {s}" for s in STATUSES if self.count(s))
        lines = [head, f"{len(self.checks)} output projections: {counts}"]
        shown = self.problems or self.checks[:4]
        for c in shown:
            where = c.name or f"(block {c.layer}, {c.kind})"
            if c.status == "missing":
                lines.append(f"  MISSING     {where}")
                continue
            lines.append(
                f"  {c.status.upper():<11} {where}: std {c.std:.5f} "
                f"(expected {c.expected:.5f} +- {c.tolerance:.5f})"
            )
        if not self.problems and len(self.checks) > len(shown):
            lines.append(f"  ... and {len(self.checks) - len(shown)} more, all ok")
        lines.append("PASS" if self.ok else f"FAIL: {len(self.problems)} problem(s)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))


def _as_float_array(p) -> np.ndarray:
    if hasattr(p, "detach"):  # a torch tensor
        p = p.detach().cpu().numpy()
    return np.asarray(p, dtype=np.float64)


def check_residual_scaling(
    named_params,
    n_layers: int,
    base_std: float = 0.02,
    *,
    patterns: Mapping[str, str] = GPT2_PATTERNS,
    n_sigmas: float = 5.0,
) -> ResidualScalingReport:
    """Check that every residual output projection has std base_std / sqrt(2 n_layers).

    named_params: (name, array) pairs, as torch's model.named_parameters(), or a dict.
    patterns: {kind: regex}, the regex's one group the block index (GPT2_PATTERNS,
    LLAMA_PATTERNS, or your own). Every block 0 .. n_layers - 1 must have one
    parameter of each kind.

    The std of n normal draws has a standard error of about std / sqrt(2n), so a
    measured std within n_sigmas of that around the expected value is "ok"; one
    within it around base_std is "unscaled" (the scaling missed it). Uniform or
    truncated draws vary less, so the tolerance is on the safe side for them.

    >>> from tinyinit import PCG32
    >>> params = toy_gpt2_parameters(2, 32, PCG32(0))
    >>> check_residual_scaling(params, 2).ok
    True
    """
    expected = scaled_residual_std(base_std, n_layers)
    compiled = {}
    for kind, pattern in patterns.items():
        regex = re.compile(pattern)
        if regex.groups != 1:
            raise ValueError(
                f"pattern for {kind!r} must have exactly one group (the block index), "
                f"got {pattern!r}"
            )
        compiled[kind] = regex
    items = named_params.items() if isinstance(named_params, Mapping) else named_params

    found: dict[tuple[int, str], list[ProjectionCheck]] = {}
    extra = []
    for name, param in items:
        for kind, regex in compiled.items():
            match = regex.search(name)
            if match is None:
                continue
            layer = int(match.group(1))
            check = _check_one(
                layer, kind, name, _as_float_array(param), expected, base_std, n_sigmas
            )
            if layer >= n_layers:
                extra.append(_replace_status(check, "unexpected"))
            else:
                found.setdefault((layer, kind), []).append(check)

    checks = []
    for layer in range(n_layers):
        for kind in compiled:
            if (layer, kind) in found:
                checks.extend(found[(layer, kind)])
            else:
                checks.append(
                    ProjectionCheck(layer, kind, None, 0, math.nan, expected, 0, "missing")
                )
    return ResidualScalingReport(n_layers, base_std, expected, tuple(checks + extra))


def _check_one(layer, kind, name, w, expected, base_std, n_sigmas) -> ProjectionCheck:
    std = float(np.std(w)) if w.size else math.nan
    # the std of n normal draws: relative standard error 1/sqrt(2n)
    rel = 1.0 / math.sqrt(2 * max(w.size, 1))
    tol_expected, tol_base = n_sigmas * rel * expected, n_sigmas * rel * base_std
    near_expected = abs(std - expected) <= tol_expected
    near_base = abs(std - base_std) <= tol_base
    if near_expected and near_base:
        status = "inconclusive"
    elif near_expected:
        status = "ok"
    elif near_base:
        status = "unscaled"
    else:
        status = "wrong"
    return ProjectionCheck(layer, kind, name, int(w.size), std, expected, tol_expected, status)


def _replace_status(check: ProjectionCheck, status: str) -> ProjectionCheck:
    return ProjectionCheck(**{**check.__dict__, "status": status})


NAMINGS = {
    "gpt2": {
        "attn_in": "h.{i}.attn.c_attn.weight",
        "attn": "h.{i}.attn.c_proj.weight",
        "mlp_in": "h.{i}.mlp.c_fc.weight",
        "mlp": "h.{i}.mlp.c_proj.weight",
    },
    "llama": {
        "attn_in": "layers.{i}.attention.wq.weight",
        "attn": "layers.{i}.attention.wo.weight",
        "mlp_in": "layers.{i}.feed_forward.w1.weight",
        "mlp": "layers.{i}.feed_forward.w2.weight",
    },
}


def toy_gpt2_parameters(
    n_layers: int,
    width: int,
    rng,
    *,
    base_std: float = 0.02,
    unscaled: Iterable[tuple[int, str]] = (),
    naming: str = "gpt2",
) -> list[tuple[str, np.ndarray]]:
    """(name, weight) pairs of a toy GPT-2 initialized as GPT-2 is: N(0, base_std**2)
    everywhere, base_std / sqrt(2N) on the two output projections of each block.

    unscaled: (layer, kind) pairs, kind "attn" or "mlp", left at base_std, to
    make the mistakes the checker should catch. naming: "gpt2" or "llama".
    Drawn block by block in the order of NAMINGS[naming].
    """
    if naming not in NAMINGS:
        raise ValueError(f"naming must be one of {', '.join(NAMINGS)}; got {naming!r}")
    unscaled = set(unscaled)
    scaled = scaled_residual_std(base_std, n_layers)
    shapes = {
        "attn_in": (3 * width if naming == "gpt2" else width, width),
        "attn": (width, width),
        "mlp_in": (4 * width, width),
        "mlp": (width, 4 * width),
    }
    params = []
    for i in range(n_layers):
        for kind, template in NAMINGS[naming].items():
            std = scaled if kind in ("attn", "mlp") and (i, kind) not in unscaled else base_std
            params.append((template.format(i=i), normal_init(shapes[kind], std, rng)))
    return params


# --- the live explorer: a thin layer over stream_variances ---------------------------------


class ResidualStreamExplorer:
    """Stream variance after each block, measured and in theory, for N blocks, scaled or not.

    The figure, its lines and the widgets are built once; moving the slider or
    the toggle recomputes the stream from the same drawn weights (rescaled) and
    updates the lines in place (set_data + draw_idle). Results are cached per
    (N, scaled), so going back to a setting is instant.

    The y axis is the same for both settings of the toggle (it reaches the
    higher of the two curves for this N), so flipping it changes the curve and
    nothing else: what 1/sqrt(2N) does is what moves on screen. "show both"
    draws the other setting too, faded, with its theory.

    CSS classes: container tinyinit-residual, slider tinyinit-blocks, toggles
    tinyinit-scaling and tinyinit-both, readout tinyinit-readout.
    """

    def __init__(
        self, stack: ResidualStack, n_blocks: int = 12, scaled: bool = True, both: bool = False
    ):
        import ipywidgets as widgets
        import matplotlib.pyplot as plt

        self.stack = stack
        self._cache: dict[tuple[int, bool], tuple[np.ndarray, np.ndarray]] = {}
        self.n_updates = 0

        with plt.ioff():
            self.fig, self.ax = plt.subplots(figsize=(6.4, 3.6))
        (self.other_theory_line,) = self.ax.plot([], [], "--", color="C3", lw=1.2, alpha=0.5)
        (self.other_line,) = self.ax.plot([], [], "o-", ms=2.5, color="C3", alpha=0.5)
        (self.theory_line,) = self.ax.plot([], [], "k--", lw=1.5, label="theory 1 + 2b s²")
        (self.measured_line,) = self.ax.plot([], [], "o-", ms=3, color="C0", label="measured")
        self.ax.set_xlabel("block b")
        self.ax.set_ylabel("Var(stream) after block b")
        self.ax.set_xlim(0, stack.max_blocks)
        self.ax.grid(alpha=0.3)
        self.fig.tight_layout()

        self.blocks = widgets.IntSlider(
            value=n_blocks,
            min=1,
            max=stack.max_blocks,
            description="blocks N",
            tooltip="number of Transformer blocks (2 residual additions each)",
            continuous_update=True,
        )
        self.scaling = widgets.ToggleButton(
            value=scaled,
            description="scale by 1/√(2N)",
            tooltip="multiply every output projection's std by 1/sqrt(2N), as GPT-2 does",
            icon="check",
        )
        self.both = widgets.ToggleButton(
            value=both,
            description="show both",
            tooltip="also draw the other setting of the scaling, faded: "
            "with and without 1/sqrt(2N) on one plot",
        )
        self.both.add_class("tinyinit-both")
        self.readout = widgets.HTML(tooltip="final stream variance, measured and in theory")
        self.blocks.add_class("tinyinit-blocks")
        self.scaling.add_class("tinyinit-scaling")
        self.readout.add_class("tinyinit-readout")
        canvas = self.fig.canvas
        if not isinstance(canvas, widgets.DOMWidget):  # not ipympl: a static fallback
            canvas = widgets.Output()
        else:
            canvas.header_visible = False
        self.widget = widgets.VBox(
            [widgets.HBox([self.blocks, self.scaling, self.both]), self.readout, canvas]
        )
        self.widget.add_class("tinyinit-residual")

        self.blocks.observe(self._on_change, names="value")
        self.scaling.observe(self._on_change, names="value")
        self.both.observe(self._on_change, names="value")
        self.update()

    def _on_change(self, _change) -> None:
        self.update()

    def curves(self, n_blocks: int, scaled: bool) -> tuple[np.ndarray, np.ndarray]:
        """(measured, theory) stream variance after each block 0 .. N, shape (N + 1,)."""
        key = (n_blocks, scaled)
        if key not in self._cache:
            measured = stream_variances(self.stack, n_blocks, out_scale(n_blocks, scaled))
            x0_var = stream_variance(self.stack.x0)
            theory = residual_variance_theory(n_blocks, scaled=scaled, x0_var=x0_var)
            self._cache[key] = (measured[::2], theory[::2])
        return self._cache[key]

    def update(self) -> None:
        n, scaled, both = self.blocks.value, self.scaling.value, self.both.value
        measured, theory = self.curves(n, scaled)
        other, other_theory = self.curves(n, not scaled)
        b = np.arange(n + 1)
        self.measured_line.set_data(b, measured)
        self.theory_line.set_data(b, theory)
        shown = b if both else []
        self.other_line.set_data(shown, other if both else [])
        self.other_theory_line.set_data(shown, other_theory if both else [])
        # One y axis for both settings: the toggle moves the curve, not the axis.
        top = max(measured.max(), theory.max(), other.max(), other_theory.max())
        self.ax.set_ylim(0, 1.08 * top)
        name = "with 1/√(2N)" if scaled else "without 1/√(2N)"
        other_name = "without 1/√(2N)" if scaled else "with 1/√(2N)"
        self.measured_line.set_label(f"measured, {name}" if both else "measured")
        self.other_line.set_label(f"measured, {other_name}" if both else "_other")
        self.ax.legend(loc="upper left")
        self.scaling.icon = "check" if scaled else ""
        self.both.icon = "check" if both else ""
        factor = out_scale(n, scaled)
        self.readout.value = (
            f"N = {n} blocks, 2N = {2 * n} additions, output std × {factor:.3f}: "
            f"final variance <b>{measured[-1]:.2f}</b> (theory {theory[-1]:.2f})"
        )
        if both:
            self.readout.value += f"; {other_name}: {other[-1]:.2f} (theory {other_theory[-1]:.2f})"
        self.fig.canvas.draw_idle()
        self.n_updates += 1

    @property
    def final_variance(self) -> float:
        return float(self.measured_line.get_ydata()[-1])

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


# --- a static figure for readers ----------------------------------------------------------


def residual_figure(stack: ResidualStack, n_blocks: int, depths: Iterable[int]):
    """Two panels: the stream after each block for n_blocks, and the final variance vs N.

    Measured (markers) against theory (lines), without and with the 1/sqrt(2N) scaling.
    """
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    x0_var = stream_variance(stack.x0)
    b = np.arange(n_blocks + 1)
    for scaled, color in ((False, "C3"), (True, "C0")):
        label = "scaled 1/√(2N)" if scaled else "unscaled"
        measured = stream_variances(stack, n_blocks, out_scale(n_blocks, scaled))[::2]
        theory = residual_variance_theory(n_blocks, scaled=scaled, x0_var=x0_var)[::2]
        left.plot(b, measured, "o", ms=3, color=color, label=f"{label}, measured")
        left.plot(b, theory, "-", color=color, lw=1, label=f"{label}, theory")
    left.set(xlabel="block b", ylabel="Var(stream)", yscale="log", title=f"N = {n_blocks} blocks")
    depths = np.array(sorted(depths))
    for scaled, color in ((False, "C3"), (True, "C0")):
        finals = [stream_variances(stack, n, out_scale(n, scaled))[-1] for n in depths]
        theory = [residual_variance_theory(n, scaled=scaled, x0_var=x0_var)[-1] for n in depths]
        right.plot(depths, finals, "o", color=color)
        right.plot(depths, theory, "-", color=color, lw=1)
    right.set(
        xlabel="number of blocks N",
        ylabel="Var(stream) after the last block",
        xscale="log",
        yscale="log",
        title="1 + 2N unscaled, 2 scaled",
    )
    left.legend(fontsize=8)
    for ax in (left, right):
        ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig

"""The residual stream: what N Transformer blocks add up to, and GPT-2's 1/sqrt(2N).

A pre-LN block adds two sublayer outputs to a running stream,

    x <- x + attn(LN(x)),    x <- x + mlp(LN(x)),

2N additions for N blocks. (N is `n_layers` throughout the package, as in
`scaled_residual_std(base_std, n_layers)`: a block, attention and MLP, is one
layer.) LN gives every sublayer the same unit-size input, so each addition
has the same variance s**2 whatever the stream holds; if they are roughly
independent, the variances add:

    Var(x_k) = Var(x_0) + k * s**2,     k = 0 .. 2N.

A variance-preserving sublayer (s**2 = 1) makes the stream grow like 1 + 2N.
Scaling the output projections' std by 1/sqrt(2N) (`scaled_residual_std`)
makes s**2 = 1/(2N), and the 2N additions sum to 1 whatever N is.

Pure functions only (a stack drawn once, the stream it makes, the theory, a
checker for a model's output projections): the live explorer over them is
`tinyinit.views.explorers.ResidualStreamExplorer`, the static figure
`tinyinit.views.plots.residual_figure`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from ..core.activations import relu
from ..core.arguments import (
    KindError,
    flag,
    generator,
    instance,
    integer,
    is_integer,
    number,
    one_of,
    real_array,
    shown,
)
from ..core.distributions import normal
from ..core.init import (
    calculate_gain,
    kaiming_normal,
    kaiming_std,
    normal_init,
    scaled_residual_std,
)
from ..networks.normalization import standardize
from .propagation import mean_squares_by_layer

__all__ = [
    "ProjectionCheck",
    "ResidualScalingReport",
    "ResidualStack",
    "block_variances",
    "check_residual_scaling",
    "compounded",
    "draw_residual_stack",
    "name_pattern",
    "normalize",
    "out_scale",
    "relu_stack_mean_squares",
    "residual_variance_theory",
    "stream_variance",
    "stream_variances",
    "toy_gpt2_parameters",
]

# --- a stack of residual sublayers, drawn once -------------------------------------------


def normalize(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """LayerNorm at init (gain 1, bias 0): each row to mean 0, mean square 1.

    LN(x)_i = (x_i - mean(x)) / sqrt(var(x) + eps), over the last axis.

    >>> normalize(np.array([[1.0, 3.0]]))
    array([[-0.999995,  0.999995]])
    """
    x = real_array("x", x)
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"x must have features along its last axis, got {shown(x)}")
    return standardize(x, axis=-1, eps=number("eps", eps, above=0))


@dataclass(frozen=True)
class ResidualStack:
    """2 * max_layers two-layer sublayers f(x) = W_out relu(W_in x), and an input x_0.

    w_in:  (2 * max_layers, hidden, width), Kaiming (ReLU, fan_in): std sqrt(2 / width)
    w_out: (2 * max_layers, width, hidden), N(0, 1 / hidden): variance preserving,
           so each sublayer adds variance 1 before any residual scaling
    x0:    (tokens, width), standard normals: Var(x_0) = 1

    Sublayers 2b and 2b + 1 play the attention and MLP of block b.

    >>> from tinyinit import PCG32
    >>> stack = draw_residual_stack(3, 8, 16, 4, PCG32(0))
    >>> stack.max_layers, stack.w_out.shape, stack.x0.shape
    (3, (6, 8, 16), (4, 8))
    """

    w_in: np.ndarray
    w_out: np.ndarray
    x0: np.ndarray

    @property
    def max_layers(self) -> int:
        return self.w_in.shape[0] // 2


def draw_residual_stack(
    max_layers: int, width: int, hidden: int, tokens: int, rng
) -> ResidualStack:
    """Draw a ResidualStack from rng, in this order: x_0, then W_in, W_out per sublayer.

    >>> from tinyinit import PCG32
    >>> draw_residual_stack(2, 8, 16, 4, PCG32(0)).w_in.shape
    (4, 16, 8)
    """
    integer("max_layers", max_layers, minimum=1)
    width, hidden = integer("width", width, minimum=1), integer("hidden", hidden, minimum=1)
    tokens = integer("tokens", tokens, minimum=1)
    generator("rng", rng)
    x0 = normal(rng, tokens * width).reshape(tokens, width)
    w_in, w_out = [], []
    for _ in range(2 * max_layers):
        w_in.append(kaiming_normal((hidden, width), "fan_in", "relu", rng))
        w_out.append(normal_init((width, hidden), 1.0 / math.sqrt(hidden), rng))
    return ResidualStack(np.stack(w_in), np.stack(w_out), x0)


def stream_variance(x: np.ndarray) -> float:
    """The variance of the stream: np.var over every entry (all tokens, all features).

    >>> stream_variance(np.array([[1.0, 3.0]]))
    1.0
    """
    x = real_array("x", x)
    if not x.size:
        raise ValueError("x must hold at least one number, got an empty array")
    with np.errstate(all="ignore"):  # a stream beyond float64: inf
        v = float(np.var(x))
    return math.inf if math.isnan(v) else v


LAYER_NORM_PLACES = ("pre", "post", "none")


def stream_variances(
    stack: ResidualStack, n_layers: int, out_scale: float = 1.0, *, layer_norm: str = "pre"
) -> np.ndarray:
    """Var(x_k) after each of the 2N additions of sublayer outputs; shape (2N + 1,).

    Entry 0 is the input; entry 2b is the stream after b whole blocks. out_scale
    multiplies every output projection (1 / sqrt(2N) for GPT-2's scaling): the
    weights are drawn once and rescaled, never redrawn. layer_norm says where LayerNorm sits:

        "pre"   x <- x + out_scale * f(LN(x))    GPT-2 and most modern decoders
        "post"  x <- LN(x + out_scale * f(x))    the original Transformer, BERT
        "none"  x <- x + out_scale * f(x)        a residual network without LayerNorm

    >>> from tinyinit import PCG32
    >>> stack = draw_residual_stack(2, 128, 128, 128, PCG32(0))
    >>> stream_variances(stack, 2).round(1)         # theory 1, 2, 3, 4, 5
    array([1. , 2. , 3. , 3.8, 4.7])
    >>> stream_variances(stack, 2, layer_norm="post").round(1)  # renormalized after each addition
    array([1., 1., 1., 1., 1.])
    """
    _stack(stack)
    n_layers = integer("n_layers", n_layers, minimum=1, maximum=stack.max_layers)
    out_scale = number("out_scale", out_scale, minimum=0)
    one_of("layer_norm", layer_norm, LAYER_NORM_PLACES)
    x = stack.x0.astype(np.float64)
    variances = [stream_variance(x)]
    with np.errstate(all="ignore"):  # a stream beyond float64 is inf (its variance says so)
        for k in range(2 * n_layers):
            h = relu((normalize(x) if layer_norm == "pre" else x) @ stack.w_in[k].T)
            x = x + out_scale * (h @ stack.w_out[k].T)
            if layer_norm == "post":
                x = normalize(x)
            variances.append(stream_variance(x))
    return np.array(variances)


def residual_variance_theory(
    n_layers: int, *, scaled: bool, x0_var: float = 1.0, addition_var: float = 1.0
) -> np.ndarray:
    """Var(x_k) = Var(x_0) + k * s**2 for k = 0 .. 2N; shape (2N + 1,).

    s**2 = addition_var, divided by 2N when the output projections are scaled
    by 1/sqrt(2N): then the last entry is x0_var + addition_var whatever N is.

    >>> residual_variance_theory(2, scaled=False)
    array([1., 2., 3., 4., 5.])
    >>> residual_variance_theory(2, scaled=True)
    array([1.  , 1.25, 1.5 , 1.75, 2.  ])
    """
    n_layers, scaled = integer("n_layers", n_layers, minimum=1), flag("scaled", scaled)
    x0_var = number("x0_var", x0_var, minimum=0)
    addition_var = number("addition_var", addition_var, minimum=0)
    s2 = addition_var / (2 * n_layers) if scaled else addition_var
    return x0_var + s2 * np.arange(2 * n_layers + 1)


def out_scale(n_layers: int, scaled: bool) -> float:
    """The factor on every output projection's std: 1/sqrt(2N) if scaled, else 1.

    >>> out_scale(2, scaled=True), out_scale(2, scaled=False)
    (0.5, 1.0)
    """
    n_layers = integer("n_layers", n_layers, minimum=1)
    return scaled_residual_std(1.0, n_layers) if flag("scaled", scaled) else 1.0


def block_variances(
    stack: ResidualStack, n_layers: int, scaled: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(measured, theory): Var(x_2b) after each block b = 0 .. N; each of shape (N + 1,).

    measured: the stream of `stack`, the output projections times 1/sqrt(2N) if `scaled`;
    theory: Var(x_0) + 2b * s**2, with s**2 = 1 unscaled and 1/(2N) scaled.

    >>> from tinyinit import PCG32
    >>> stack = draw_residual_stack(2, 128, 128, 128, PCG32(0))
    >>> measured, theory = block_variances(stack, 2, scaled=False)
    >>> measured.round(1), theory.round(2)
    (array([1. , 3. , 4.7]), array([0.97, 2.97, 4.97]))
    """
    _stack(stack)
    measured = stream_variances(stack, n_layers, out_scale(n_layers, scaled))
    theory = residual_variance_theory(n_layers, scaled=scaled, x0_var=stream_variance(stack.x0))
    return measured[::2], theory[::2]


# --- compounding: a small error per layer, raised to the depth -------------------------


def compounded(per_layer: float, n_layers: int) -> np.ndarray:
    """per_layer ** k for k = 0 .. n_layers: what a constant per-layer factor does.

    >>> float(compounded(0.95, 48)[-1].round(4))
    0.0853
    """
    per_layer = number("per_layer", per_layer, minimum=0)
    n_layers = integer("n_layers", n_layers, minimum=0)
    with np.errstate(over="ignore", under="ignore"):  # beyond float64: inf, or 0
        return per_layer ** np.arange(n_layers + 1)


def relu_stack_mean_squares(
    width: int, n_layers: int, variance_factor: float, rng, tokens: int = 256
) -> np.ndarray:
    """E[x**2] after each of `n_layers` ReLU layers with Var(W) = variance_factor * 2 / width.

    E[relu(z)**2] = Var(z) / 2 = variance_factor * E[x**2]: each layer multiplies
    the mean square by variance_factor (1 is Kaiming). Shape (n_layers + 1,).

    >>> from tinyinit import PCG32
    >>> relu_stack_mean_squares(256, 3, 0.5, PCG32(0)).round(2)     # half Kaiming's: halves
    array([0.99, 0.48, 0.26, 0.14])
    """
    width, n_layers = integer("width", width, minimum=1), integer("n_layers", n_layers, minimum=0)
    variance_factor = number("variance_factor", variance_factor, minimum=0)
    generator("rng", rng)
    tokens = integer("tokens", tokens, minimum=1)
    x = normal(rng, tokens * width).reshape(tokens, width).T  # one column per token
    std = kaiming_std(width, calculate_gain("relu")) * math.sqrt(variance_factor)
    weights = (normal_init((width, width), std, rng) for _ in range(n_layers))  # after x
    return mean_squares_by_layer(weights, "relu", x)


# --- checker: did the 1/sqrt(2N) reach every output projection? ---------------------------

# The weights of block i by their names: GPT-2's as nanoGPT and Hugging Face spell
# them (nanoGPT's model adds the prefix "transformer."), and Llama's. "attn" and
# "mlp" are the two residual output projections, the ones that take 1/sqrt(2N).
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
RESIDUAL_OUTPUTS = ("attn", "mlp")


def name_pattern(template: str) -> str:
    r"""The regex of a NAMINGS template, its one group the block index {i}.

    Matched at the end of a name, so prefixes such as "transformer." or "model."
    do not matter.

    >>> print(name_pattern("h.{i}.mlp.c_proj.weight"))
    (?:^|\.)h\.(\d+)\.mlp\.c_proj\.weight$
    """
    instance("template", template, str, "a parameter name with {i} for the block index")
    if template.count("{i}") != 1:
        raise ValueError(f"template must hold {{i}} once (the block index), got {template!r}")
    return r"(?:^|\.)" + template.replace(".", r"\.").replace("{i}", r"(\d+)") + "$"


# One regex per residual output, for check_residual_scaling.
GPT2_PATTERNS = {kind: name_pattern(NAMINGS["gpt2"][kind]) for kind in RESIDUAL_OUTPUTS}
LLAMA_PATTERNS = {kind: name_pattern(NAMINGS["llama"][kind]) for kind in RESIDUAL_OUTPUTS}

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
    """One output projection: what was measured, what was expected, and the verdict.

    >>> from tinyinit import PCG32
    >>> first = check_residual_scaling(toy_gpt2_parameters(2, 32, PCG32(0)), 2).checks[0]
    >>> first.name, first.status, first.ok
    ('h.0.attn.c_proj.weight', 'ok', True)
    """

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
    checks: tuple[ProjectionCheck, ...]

    @property
    def expected_std(self) -> float:
        return scaled_residual_std(self.base_std, self.n_layers)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def problems(self) -> tuple[ProjectionCheck, ...]:
        return tuple(c for c in self.checks if not c.ok)

    def count(self, status: str) -> int:
        """How many checks have this status (a key of STATUSES).

        >>> from tinyinit import PCG32
        >>> check_residual_scaling(toy_gpt2_parameters(2, 32, PCG32(0)), 2).count("ok")
        4
        """
        return sum(c.status == one_of("status", status, STATUSES) for c in self.checks)

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
    return real_array("named_params", p, what="(name, array) pairs, the arrays of numbers")


def _named(named_params) -> list[tuple[str, object]]:
    """named_params as (name, parameter) pairs: a dict, or pairs as torch gives them."""
    accepted = "(name, array) pairs, as model.named_parameters() gives, or a dict"
    if isinstance(named_params, Mapping):
        pairs = list(named_params.items())
    elif isinstance(named_params, (str, bytes, np.ndarray)) or not isinstance(
        named_params, Iterable
    ):
        raise KindError(f"named_params must be {accepted}, got {shown(named_params)}")
    else:
        pairs = list(named_params)
    for pair in pairs:
        if not (isinstance(pair, tuple | list) and len(pair) == 2 and isinstance(pair[0], str)):
            raise KindError(f"named_params must be {accepted}, got an item {shown(pair)}")
    return pairs


def _stack(stack) -> ResidualStack:
    return instance("stack", stack, ResidualStack, "a ResidualStack (draw_residual_stack's)")


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
    n_sigmas = number("n_sigmas", n_sigmas, above=0)
    instance("patterns", patterns, Mapping, "a dict {kind: regex}, such as GPT2_PATTERNS")
    if not patterns:
        raise ValueError("patterns must name at least one kind of output projection, got {}")
    compiled = {}
    for kind, pattern in patterns.items():
        instance("patterns", pattern, str, "a dict {kind: regex}, such as GPT2_PATTERNS")
        try:
            regex = re.compile(pattern)
        except re.error as error:
            raise ValueError(f"patterns must hold regexes, got {pattern!r} ({error})") from None
        if regex.groups != 1:
            raise ValueError(
                f"pattern for {kind!r} must have exactly one group (the block index), "
                f"got {pattern!r}"
            )
        compiled[kind] = regex
    items = _named(named_params)

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
    return ResidualScalingReport(n_layers, base_std, tuple(checks + extra))


def _unscaled(unscaled, n_layers: int) -> set[tuple[int, str]]:
    accepted = f"(layer, kind) pairs, layer in 0 .. {n_layers - 1}, kind attn or mlp"
    if isinstance(unscaled, (str, bytes, dict)) or not isinstance(unscaled, Iterable):
        raise KindError(f"unscaled must be {accepted}, got {shown(unscaled)}")
    pairs = set()
    for pair in unscaled:
        if not (isinstance(pair, tuple | list) and len(pair) == 2 and is_integer(pair[0])):
            raise KindError(f"unscaled must be {accepted}, got an item {shown(pair)}")
        if not (0 <= pair[0] < n_layers and pair[1] in RESIDUAL_OUTPUTS):
            raise ValueError(f"unscaled must be {accepted}, got {shown(pair)}")
        pairs.add((int(pair[0]), pair[1]))
    return pairs


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

    >>> from tinyinit import PCG32
    >>> [name for name, _ in toy_gpt2_parameters(1, 8, PCG32(0), naming="llama")][:2]
    ['layers.0.attention.wq.weight', 'layers.0.attention.wo.weight']
    """
    one_of("naming", naming, NAMINGS)
    n_layers, width = integer("n_layers", n_layers, minimum=1), integer("width", width, minimum=1)
    generator("rng", rng)
    unscaled = _unscaled(unscaled, n_layers)
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
            residual = kind in RESIDUAL_OUTPUTS and (i, kind) not in unscaled
            std = scaled if residual else base_std
            params.append((template.format(i=i), normal_init(shapes[kind], std, rng)))
    return params

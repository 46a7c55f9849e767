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

Pure functions only (a stack drawn once, the stream it makes, the theory): the
live explorer over them is `tinyinit.views.explorers.ResidualStreamExplorer`, the
static figure `tinyinit.views.figures.residual_figure`. Whether a real model's
output projections got the 1/sqrt(2N) is audited by their names in
`tinyinit.networks.residual_audit`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.activations import relu
from ..core.arguments import (
    flag,
    generator,
    instance,
    integer,
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
    "ResidualStack",
    "block_variances",
    "compounded",
    "draw_residual_stack",
    "normalize",
    "out_scale",
    "relu_stack_mean_squares",
    "residual_variance_theory",
    "stream_variance",
    "stream_variances",
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


def _stack(stack) -> ResidualStack:
    return instance("stack", stack, ResidualStack, "a ResidualStack (draw_residual_stack's)")


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

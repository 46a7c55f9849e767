"""Init and learning rate together: standard parametrization (SP) against muP.

A weight's effect on the network is its initial value plus how far the optimizer
moves it. For a layer z = W h over n inputs whose coordinates are O(1), one
step changes the output by

    dz = dW h = sum_j dW_ij h_j,

and the n terms of that sum are *correlated* (the update is built from the very
h it multiplies), so they add up like n, not like sqrt(n). Adam moves every
entry by about lr whatever the gradient's size, so dz ~ n * lr: with one
global learning rate, wider layers change their outputs more per step. muP
(Yang et al. 2022, "Tensor Programs V", Table 3) picks init variance and
learning rate per kind of layer so that, as width grows, every activation and
every update of it stays O(1). The table implemented here, with fan_in and
fan_out those of the weight and eta the one global learning rate:

    layer kind         input (d_in -> n)   hidden (n -> n)    output (n -> d_out)
    init variance   SP    1/fan_in            1/fan_in           1/fan_in
                    muP   1/fan_in            1/fan_in           1/fan_in**2
    SGD lr          SP    eta                 eta                eta
                    muP   eta * fan_out       eta                eta / fan_in
    Adam lr         SP    eta                 eta                eta
                    muP   eta                 eta / fan_in       eta / fan_in

The table fixes how each entry *scales* with width; the constants are free.
As in the `mup` package, the constants are fixed at a base width n0: every
width factor is written as m = width / n0, so at width n0 muP and SP are the
same network with the same learning rates, and they differ only as width
grows. Input and hidden layers feed a ReLU and get Kaiming's gain sqrt(2).
Adam's eps stays 1e-8 at every width (muP would shrink it too, which matters
only once gradients come near eps; here they stay far above it).

The network is a bias-free ReLU MLP (biases would follow the "input" column)
written out by hand: `relu_mlp_forward`, `relu_mlp_backward` (tinyinit.networks.mlp's
layer loops, without biases), `sgd_step`, `adam_step`, all in float64 and all
pure (new arrays out, arguments untouched). Its weights are
drawn with tinyinit's initializers, so the same seed gives the same network.

The network has L = n_layers weight matrices (an input layer, n_layers - 2 hidden ones, an
output layer), as the digits MLP (`tinyinit.networks.mlp`).

>>> from tinyinit import PCG32
>>> [w.shape for w in init_mlp(3, 8, 2, "mup", PCG32(0), n_layers=3, base_width=4)]
[(8, 3), (8, 8), (2, 8)]
>>> layer_learning_rates(0.01, "mup", "adam", n_layers=3, width=8, base_width=4)
[0.01, 0.005, 0.005]
"""

from __future__ import annotations

import math

import numpy as np

from ..core.activations import activation
from ..core.arguments import generator, instance, integer, number, one_of, real_array
from ..core.distributions import normal
from ..core.init import kaiming_normal, kaiming_std, normal_init
from ..core.pcg32 import PCG32
from ..physics.variance import root_mean_square

# The digits MLP's layer loops, and one formula for each optimizer: the ones that train it.
from .mlp import backward_layers, forward_layers
from .optimizers import (  # noqa: F401
    OPTIMIZERS,
    AdamState,
    adam_init,
    adam_step,
    sgd_step,
)

PARAMETRIZATIONS = ("sp", "mup")
RELU = activation("relu")
# A run whose loss passes this (or stops being finite) has diverged: it is stopped
# and its remaining losses are NaN, which keeps overflow out of the arithmetic.
DIVERGED_LOSS = 1e10


__all__ = [
    "coordinate_check",
    "init_mlp",
    "layer_learning_rates",
    "layer_shapes",
    "lr_sweep",
    "make_regression",
    "mse_loss",
    "relu_mlp_backward",
    "relu_mlp_forward",
    "train_regression",
]


def _sizes(n_layers: int, width: int, base_width: int = 1) -> tuple[int, int, int]:
    return (
        integer("n_layers", n_layers, minimum=2),  # an input and an output layer at least
        integer("width", width, minimum=1),
        integer("base_width", base_width, minimum=1),
    )


def _weights(name: str, weights) -> list[np.ndarray]:
    """weights checked: a list of (out, in) matrices whose shapes chain, input layer first."""
    instance(name, weights, (list, tuple), "a list of (out, in) weight matrices")
    arrays = [real_array(name, w, ndim=2) for w in weights]
    if not arrays or any(a.shape[0] != b.shape[1] for a, b in zip(arrays, arrays[1:])):
        raise ValueError(
            f"{name} must be (out, in) matrices whose shapes chain, input layer first, got "
            f"shapes {[a.shape for a in arrays]}"
        )
    return arrays


# --- the parametrization: an init std and a learning rate for every layer ------------


def layer_shapes(d_in: int, width: int, d_out: int, *, n_layers: int) -> list[tuple[int, int]]:
    """Weight shapes (out, in) of an MLP of n_layers matrices, its hidden layers `width` wide.

    >>> layer_shapes(3, 8, 2, n_layers=4)
    [(8, 3), (8, 8), (8, 8), (2, 8)]
    """
    n_layers, width, _ = _sizes(n_layers, width)
    d_in, d_out = integer("d_in", d_in, minimum=1), integer("d_out", d_out, minimum=1)
    return [(width, d_in)] + [(width, width)] * (n_layers - 2) + [(d_out, width)]


def init_mlp(
    d_in: int,
    width: int,
    d_out: int,
    parametrization: str,
    rng,
    *,
    n_layers: int,
    base_width: int = 64,
) -> list[np.ndarray]:
    """Weights of the MLP, drawn layer by layer (input first) from `rng`, as float64.

    Input and hidden layers: kaiming_normal(fan_in, relu), std = sqrt(2 / fan_in),
    under both parametrizations. Output layer: std = 1/sqrt(fan_in) under SP;
    under muP std = sqrt(n0) / fan_in (variance n0 / fan_in**2), equal to SP's
    at the base width n0 and shrinking like 1/fan_in beyond it.

    >>> from tinyinit import PCG32
    >>> sp = init_mlp(3, 8, 2, "sp", PCG32(0), n_layers=3, base_width=2)
    >>> mup = init_mlp(3, 8, 2, "mup", PCG32(0), n_layers=3, base_width=2)
    >>> bool(np.allclose(mup[-1], sp[-1] * (2 / 8) ** 0.5))  # same draws, smaller std
    True
    """
    one_of("parametrization", parametrization, PARAMETRIZATIONS)
    _, width, base_width = _sizes(n_layers, width, base_width)
    shapes = layer_shapes(d_in, width, d_out, n_layers=n_layers)
    generator("rng", rng)
    weights = [kaiming_normal(shape, "fan_in", "relu", rng) for shape in shapes[:-1]]
    out_std = kaiming_std(width, 1.0)
    if parametrization == "mup":
        out_std *= math.sqrt(base_width / width)
    weights.append(normal_init(shapes[-1], out_std, rng))
    return [w.astype(np.float64) for w in weights]


def layer_learning_rates(
    lr: float,
    parametrization: str,
    optimizer: str,
    *,
    n_layers: int,
    width: int,
    base_width: int,
) -> list[float]:
    """One learning rate per weight matrix, input layer first (Table 3 above).

    With m = width / base_width, muP multiplies the global lr by
    SGD: m (input), 1 (hidden), 1/m (output); Adam: 1, 1/m, 1/m. SP: 1 everywhere.

    >>> layer_learning_rates(0.1, "mup", "sgd", n_layers=4, width=128, base_width=64)
    [0.2, 0.1, 0.1, 0.05]
    """
    lr = number("lr", lr, above=0)
    one_of("parametrization", parametrization, PARAMETRIZATIONS)
    one_of("optimizer", optimizer, OPTIMIZERS)
    n_layers, width, base_width = _sizes(n_layers, width, base_width)
    if parametrization == "sp":
        return [lr] * n_layers
    m = width / base_width
    if optimizer == "sgd":
        # SGD's step is proportional to the gradient, which muP already makes small
        # where the layer is wide: only the two ends need correcting.
        return [lr * m] + [lr] * (n_layers - 2) + [lr / m]
    # Adam's step is ~lr per entry whatever the gradient: every matrix that sums
    # over `width` inputs needs lr / m to keep its output's change O(1).
    return [lr] + [lr / m] * (n_layers - 1)


# --- the network, by hand ------------------------------------------------------------


def relu_mlp_forward(
    weights: list[np.ndarray], x: np.ndarray
) -> tuple[np.ndarray, list[np.ndarray]]:
    """y = W_L relu(... relu(W_1 x)), for a batch x of shape (batch, d_in).

    Returns the output (batch, d_out) and the activations [x, h_1, ..., h_{L-1}]
    that `relu_mlp_backward` needs: the input of every weight matrix.

    >>> w = [np.eye(2), np.array([[1.0, -1.0]])]
    >>> relu_mlp_forward(w, np.array([[2.0, -3.0]]))[0]
    array([[2.]])
    """
    weights, x = _network_and_batch(weights, x)
    out = forward_layers([(w, None) for w in weights], x, RELU)
    return out.logits, out.h


def _network_and_batch(weights, x) -> tuple[list[np.ndarray], np.ndarray]:
    weights = _weights("weights", weights)
    return weights, _batch("x", x, weights[0].shape[1])


def _batch(name: str, x, width: int) -> np.ndarray:
    """x checked: a (batch, width) array of real numbers."""
    x = real_array(name, x, ndim=2)
    if x.shape[1] != width:
        raise ValueError(f"{name} must have shape (batch, {width}), got shape {x.shape}")
    return x


def relu_mlp_backward(
    weights: list[np.ndarray], activations: list[np.ndarray], dy: np.ndarray
) -> list[np.ndarray]:
    """Gradients dL/dW of every matrix, given dy = dL/dy and relu_mlp_forward's activations.

    For z = h W^T: dL/dW = dz^T h and dL/dh = dz W; through the ReLU,
    dz = dh * [h > 0] (h = relu(z) is positive exactly where z is).

    >>> w = [np.eye(2), np.array([[1.0, -1.0]])]
    >>> y, acts = relu_mlp_forward(w, np.array([[2.0, -3.0]]))
    >>> relu_mlp_backward(w, acts, np.ones_like(y))[1]
    array([[2., 0.]])
    """
    weights, activations, dy = _backward_arguments(weights, activations, dy)
    slopes = [(h > 0).astype(h.dtype) for h in activations[1:]]
    return backward_layers(weights, activations, dy, slopes)[0]


def _backward_arguments(weights, activations, dy):
    """relu_mlp_backward's arguments checked: the weights, one input per matrix, dy."""
    weights = _weights("weights", weights)
    instance("activations", activations, (list, tuple), "relu_mlp_forward's activations")
    if len(activations) != len(weights):
        raise ValueError(
            f"activations must hold one array per weight matrix ({len(weights)}), the input of "
            f"each, got {len(activations)}"
        )
    activations = [_batch("activations", h, w.shape[1]) for h, w in zip(activations, weights)]
    dy = _batch("dy", dy, weights[-1].shape[0])
    if any(len(h) != len(dy) for h in activations):
        raise ValueError(f"dy must have one row per sample ({len(activations[0])}), got {len(dy)}")
    return weights, activations, dy


def mse_loss(y: np.ndarray, target: np.ndarray) -> tuple[float, np.ndarray]:
    """L = sum((y - target)**2) / (2 * batch), and dL/dy = (y - target) / batch.

    >>> mse_loss(np.array([[1.0], [3.0]]), np.array([[0.0], [0.0]]))
    (2.5, array([[0.5],
           [1.5]]))
    """
    y, target = real_array("y", y, ndim=2), real_array("target", target, ndim=2)
    if target.shape != y.shape or not len(y):
        raise ValueError(f"target must have y's shape {y.shape} (a batch), got {target.shape}")
    diff = y - target
    return float(np.sum(diff**2) / (2 * len(y))), diff / len(y)


# --- experiments ---------------------------------------------------------------------


def _widths(widths) -> list[int]:
    instance("widths", widths, (list, tuple, range, np.ndarray), "a sequence of widths")
    return [integer("widths", width, minimum=1) for width in np.ravel(widths).tolist()]


def _experiment(parametrization, optimizer, n_layers, base_width, seed, batch, d_in, d_out):
    """The arguments every width shares, checked before the first width is run."""
    one_of("parametrization", parametrization, PARAMETRIZATIONS)
    one_of("optimizer", optimizer, OPTIMIZERS)
    _sizes(n_layers, 1, base_width)
    integer("seed", seed)
    for name, size in (("batch", batch), ("d_in", d_in), ("d_out", d_out)):
        integer(name, size, minimum=1)


def make_regression(rng, n_samples: int, d_in: int, d_out: int) -> tuple[np.ndarray, np.ndarray]:
    """A small task: x ~ N(0, 1)^d_in, target = sin(x V) with V ~ N(0, 1/d_in).

    x and V come from one normal() draw each (x first), so the task is fixed by the seed.

    >>> from tinyinit import PCG32
    >>> x, target = make_regression(PCG32(0), 5, 3, 2)
    >>> x.shape, target.shape
    ((5, 3), (5, 2))
    """
    generator("rng", rng)
    n_samples = integer("n_samples", n_samples, minimum=1)
    d_in, d_out = integer("d_in", d_in, minimum=1), integer("d_out", d_out, minimum=1)
    x = normal(rng, n_samples * d_in).reshape(n_samples, d_in)
    v = normal(rng, d_in * d_out).reshape(d_in, d_out) / math.sqrt(d_in)
    return x, np.sin(x @ v)


def train_regression(
    weights: list[np.ndarray],
    x: np.ndarray,
    target: np.ndarray,
    lrs: list[float],
    optimizer: str,
    steps: int,
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Full-batch training for `steps` steps; the weights given are not modified.

    Returns (final weights, losses, sizes): losses[t] and sizes[t] are measured
    after t steps, t = 0..steps; sizes[t] holds the rms (variance.root_mean_square,
    a coordinate's typical size) of every hidden
    activation h_1..h_{L-1} and of the output y, in layer order. A run whose
    loss passes DIVERGED_LOSS stops there; its later entries are NaN.

    >>> from tinyinit import PCG32
    >>> x, target = make_regression(PCG32(0), 8, 3, 2)
    >>> w = init_mlp(3, 16, 2, "sp", PCG32(1), n_layers=2)
    >>> _, losses, sizes = train_regression(w, x, target, [0.05, 0.05], "adam", 3)
    >>> losses.shape, sizes.shape, bool(losses[-1] < losses[0])
    ((4,), (4, 2), True)
    """
    weights, x = _network_and_batch(weights, x)
    target = _batch("target", target, weights[-1].shape[0])
    if len(target) != len(x):
        raise ValueError(f"target must have one row per row of x ({len(x)}), got {len(target)}")
    instance("lrs", lrs, (list, tuple), "a list of learning rates, one per weight matrix")
    if len(lrs) != len(weights):
        raise ValueError(f"lrs must hold {len(weights)} learning rates, got {len(lrs)}")
    lrs = [number("lrs", lr, above=0) for lr in lrs]
    one_of("optimizer", optimizer, OPTIMIZERS)
    steps = integer("steps", steps, minimum=0)
    losses = np.full(steps + 1, np.nan)
    sizes = np.full((steps + 1, len(weights)), np.nan)
    state = adam_init(weights) if optimizer == "adam" else None
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging run stops below, quietly
        for t in range(steps + 1):
            y, activations = relu_mlp_forward(weights, x)
            loss, dy = mse_loss(y, target)
            if not loss < DIVERGED_LOSS:  # also catches NaN
                break
            losses[t] = loss
            sizes[t] = [root_mean_square(h) for h in activations[1:]] + [root_mean_square(y)]
            if t == steps:
                break
            grads = relu_mlp_backward(weights, activations, dy)
            if optimizer == "sgd":
                weights = sgd_step(weights, grads, lrs)
            else:
                weights, state = adam_step(weights, grads, state, lrs)
    return weights, losses, sizes


def coordinate_check(
    widths,
    steps: int,
    parametrization: str,
    optimizer: str,
    lr: float,
    *,
    n_layers: int = 3,
    d_in: int = 16,
    d_out: int = 4,
    batch: int = 64,
    base_width: int = 64,
    seed: int = 0,
) -> np.ndarray:
    """Coordinate sizes of every layer after t = 0..steps steps, for each width.

    Returns sizes of shape (len(widths), steps + 1, n_layers), with
    sizes[i, t, l] = rms(h) = sqrt(mean(h**2)) of h_1..h_{n_layers - 1} and of the
    output y at widths[i] after t steps. The batch is the same for every
    width (PCG32(seed, stream=1)); each width's weights come from PCG32(seed).
    Under muP every column should be flat in width; under SP, after a step,
    it grows.

    >>> sp = coordinate_check((64, 256), 1, "sp", "adam", 0.01)
    >>> sp.shape                                  # 2 widths, t = 0 and 1, (h_1, h_2, y)
    (2, 2, 3)
    >>> sp[:, 1, -1].round(1)                     # SP: one step moves y more when wider
    array([0.6, 4.7])
    >>> coordinate_check((64, 256), 1, "mup", "adam", 0.01)[:, 1, -1].round(1)   # muP: flat
    array([0.6, 0.6])
    """
    widths = _widths(widths)
    steps, lr = integer("steps", steps, minimum=0), number("lr", lr, above=0)
    _experiment(parametrization, optimizer, n_layers, base_width, seed, batch, d_in, d_out)
    x, target = make_regression(PCG32(seed, stream=1), batch, d_in, d_out)
    sizes = []
    for width in widths:
        weights = init_mlp(
            d_in, width, d_out, parametrization, PCG32(seed), n_layers=n_layers,
            base_width=base_width,
        )  # fmt: skip
        lrs = layer_learning_rates(
            lr, parametrization, optimizer, n_layers=n_layers, width=width, base_width=base_width
        )
        sizes.append(train_regression(weights, x, target, lrs, optimizer, steps)[2])
    return np.array(sizes)


def lr_sweep(
    widths,
    lrs,
    parametrization: str,
    optimizer: str,
    steps: int,
    *,
    n_layers: int = 3,
    d_in: int = 16,
    d_out: int = 4,
    batch: int = 64,
    base_width: int = 64,
    seed: int = 0,
) -> np.ndarray:
    """Training loss after `steps` steps for every (width, global lr) pair.

    Returns losses of shape (len(widths), len(lrs)), losses[i, j] the loss
    L = sum((y - target)**2) / (2 batch) at widths[i] trained with global lr
    lrs[j], NaN where the run diverged.
    Every width trains on the same batch, and every lr at one width starts from
    the same weights, so the only thing that changes along a row is the lr.

    >>> import numpy as np
    >>> lrs = 2.0 ** np.arange(-10, -3, 2)            # 2**-10, 2**-8, 2**-6, 2**-4
    >>> sp = lr_sweep((32, 256), lrs, "sp", "adam", 5, base_width=32)
    >>> sp.shape
    (2, 4)
    >>> np.log2(lrs[np.nanargmin(sp, axis=1)])        # SP: the best lr moves with width
    array([ -6., -10.])
    >>> mup = lr_sweep((32, 256), lrs, "mup", "adam", 5, base_width=32)
    >>> np.log2(lrs[np.nanargmin(mup, axis=1)])       # muP: it stays
    array([-6., -6.])
    """
    widths = _widths(widths)
    instance("lrs", lrs, (list, tuple, np.ndarray), "a sequence of learning rates")
    lrs = np.array([number("lrs", lr, above=0) for lr in np.ravel(lrs)])
    steps = integer("steps", steps, minimum=0)
    _experiment(parametrization, optimizer, n_layers, base_width, seed, batch, d_in, d_out)
    x, target = make_regression(PCG32(seed, stream=1), batch, d_in, d_out)
    losses = np.empty((len(widths), len(lrs)))
    for i, width in enumerate(widths):
        weights = init_mlp(
            d_in, width, d_out, parametrization, PCG32(seed), n_layers=n_layers,
            base_width=base_width,
        )  # fmt: skip
        for j, lr in enumerate(lrs):
            layer_lrs = layer_learning_rates(
                lr, parametrization, optimizer, n_layers=n_layers, width=width,
                base_width=base_width,
            )  # fmt: skip
            losses[i, j] = train_regression(weights, x, target, layer_lrs, optimizer, steps)[1][-1]
    return losses

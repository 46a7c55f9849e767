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
written out by hand: `relu_mlp_forward`, `relu_mlp_backward` (tinyinit.training's
layer loops, without biases), `sgd_step`, `adam_step`, all in float64 and all
pure (new arrays out, arguments untouched). Its weights are
drawn with tinyinit's initializers, so the same seed gives the same network.

>>> from tinyinit import PCG32
>>> [w.shape for w in init_mlp(3, 8, 2, 2, "mup", PCG32(0), base_width=4)]
[(8, 3), (8, 8), (2, 8)]
>>> layer_learning_rates(0.01, 2, "mup", "adam", width=8, base_width=4)
[0.01, 0.005, 0.005]
"""

from __future__ import annotations

import math

import numpy as np

from .activations import activation
from .checks import integer, one_of
from .distributions import normal
from .init import kaiming_normal, kaiming_std, normal_init
from .pcg32 import PCG32

# One formula for each optimizer: the training module's, which also trains the digits MLP.
from .training import (  # noqa: F401
    OPTIMIZERS,
    AdamState,
    adam_init,
    adam_step,
    backward_layers,
    forward_layers,
    sgd_step,
)
from .variance import root_mean_square

PARAMETRIZATIONS = ("sp", "mup")
RELU = activation("relu")
# A run whose loss passes this (or stops being finite) has diverged: it is stopped
# and its remaining losses are NaN, which keeps overflow out of the arithmetic.
DIVERGED_LOSS = 1e10


def _check_sizes(n_hidden: int, width: int, base_width: int) -> None:
    for name, value in (("n_hidden", n_hidden), ("width", width), ("base_width", base_width)):
        integer(name, value, minimum=1)


# --- the parametrization: an init std and a learning rate for every layer ------------


def layer_shapes(d_in: int, width: int, d_out: int, n_hidden: int) -> list[tuple[int, int]]:
    """Weight shapes (out, in) of an MLP with n_hidden ReLU layers of `width` units.

    >>> layer_shapes(3, 8, 2, 3)
    [(8, 3), (8, 8), (8, 8), (2, 8)]
    """
    _check_sizes(n_hidden, width, 1)
    return [(width, d_in)] + [(width, width)] * (n_hidden - 1) + [(d_out, width)]


def init_mlp(
    d_in: int,
    width: int,
    d_out: int,
    n_hidden: int,
    parametrization: str,
    rng,
    *,
    base_width: int = 64,
) -> list[np.ndarray]:
    """Weights of the MLP, drawn layer by layer (input first) from `rng`, as float64.

    Input and hidden layers: kaiming_normal(fan_in, relu), std = sqrt(2 / fan_in),
    under both parametrizations. Output layer: std = 1/sqrt(fan_in) under SP;
    under muP std = sqrt(n0) / fan_in (variance n0 / fan_in**2), equal to SP's
    at the base width n0 and shrinking like 1/fan_in beyond it.

    >>> from tinyinit import PCG32
    >>> sp = init_mlp(3, 8, 2, 2, "sp", PCG32(0), base_width=2)
    >>> mup = init_mlp(3, 8, 2, 2, "mup", PCG32(0), base_width=2)
    >>> bool(np.allclose(mup[-1], sp[-1] * (2 / 8) ** 0.5))  # same draws, smaller std
    True
    """
    one_of("parametrization", parametrization, PARAMETRIZATIONS)
    _check_sizes(n_hidden, width, base_width)
    shapes = layer_shapes(d_in, width, d_out, n_hidden)
    weights = [kaiming_normal(shape, "fan_in", "relu", rng) for shape in shapes[:-1]]
    out_std = kaiming_std(width, 1.0)
    if parametrization == "mup":
        out_std *= math.sqrt(base_width / width)
    weights.append(normal_init(shapes[-1], out_std, rng))
    return [w.astype(np.float64) for w in weights]


def layer_learning_rates(
    lr: float, n_hidden: int, parametrization: str, optimizer: str, *, width: int, base_width: int
) -> list[float]:
    """One learning rate per weight matrix, input layer first (Table 3 above).

    With m = width / base_width, muP multiplies the global lr by
    SGD: m (input), 1 (hidden), 1/m (output); Adam: 1, 1/m, 1/m. SP: 1 everywhere.

    >>> layer_learning_rates(0.1, 3, "mup", "sgd", width=128, base_width=64)
    [0.2, 0.1, 0.1, 0.05]
    """
    one_of("parametrization", parametrization, PARAMETRIZATIONS)
    one_of("optimizer", optimizer, OPTIMIZERS)
    _check_sizes(n_hidden, width, base_width)
    if parametrization == "sp":
        return [lr] * (n_hidden + 1)
    m = width / base_width
    if optimizer == "sgd":
        # SGD's step is proportional to the gradient, which muP already makes small
        # where the layer is wide: only the two ends need correcting.
        return [lr * m] + [lr] * (n_hidden - 1) + [lr / m]
    # Adam's step is ~lr per entry whatever the gradient: every matrix that sums
    # over `width` inputs needs lr / m to keep its output's change O(1).
    return [lr] + [lr / m] * n_hidden


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
    out = forward_layers([(w, None) for w in weights], x, RELU)
    return out.logits, out.h


def relu_mlp_backward(
    weights: list[np.ndarray], activations: list[np.ndarray], dy: np.ndarray
) -> list[np.ndarray]:
    """Gradients dL/dW of every matrix, given dy = dL/dy and relu_mlp_forward's activations.

    For z = h W^T: dL/dW = dz^T h and dL/dh = dz W; through the ReLU,
    dz = dh * [h > 0] (h = relu(z) is positive exactly where z is).
    """
    slopes = [h > 0 for h in activations[1:]]
    return backward_layers(weights, activations, dy, slopes)[0]


def mse_loss(y: np.ndarray, target: np.ndarray) -> tuple[float, np.ndarray]:
    """L = sum((y - target)**2) / (2 * batch), and dL/dy = (y - target) / batch.

    >>> mse_loss(np.array([[1.0], [3.0]]), np.array([[0.0], [0.0]]))
    (2.5, array([[0.5],
           [1.5]]))
    """
    diff = y - target
    return float(np.sum(diff**2) / (2 * len(y))), diff / len(y)


# --- experiments ---------------------------------------------------------------------


def make_regression(rng, n_samples: int, d_in: int, d_out: int) -> tuple[np.ndarray, np.ndarray]:
    """A small task: x ~ N(0, 1)^d_in, target = sin(x V) with V ~ N(0, 1/d_in).

    x and V come from one normal() draw each (x first), so the task is fixed by the seed.

    >>> from tinyinit import PCG32
    >>> x, target = make_regression(PCG32(0), 5, 3, 2)
    >>> x.shape, target.shape
    ((5, 3), (5, 2))
    """
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
    """
    one_of("optimizer", optimizer, OPTIMIZERS)
    losses = np.full(steps + 1, np.nan)
    sizes = np.full((steps + 1, len(weights)), np.nan)
    state = adam_init(weights) if optimizer == "adam" else None
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
    n_hidden: int = 2,
    d_in: int = 16,
    d_out: int = 4,
    batch: int = 64,
    base_width: int = 64,
    seed: int = 0,
) -> np.ndarray:
    """Coordinate sizes of every layer after t = 0..steps steps, for each width.

    Returns sizes of shape (len(widths), steps + 1, n_hidden + 1), with
    sizes[i, t, l] = rms(h) = sqrt(mean(h**2)) of h_1..h_{n_hidden} and of the
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
    x, target = make_regression(PCG32(seed, stream=1), batch, d_in, d_out)
    sizes = []
    for width in widths:
        weights = init_mlp(
            d_in, width, d_out, n_hidden, parametrization, PCG32(seed), base_width=base_width
        )
        lrs = layer_learning_rates(
            lr, n_hidden, parametrization, optimizer, width=width, base_width=base_width
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
    n_hidden: int = 2,
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
    x, target = make_regression(PCG32(seed, stream=1), batch, d_in, d_out)
    losses = np.empty((len(widths), len(lrs)))
    for i, width in enumerate(widths):
        weights = init_mlp(
            d_in, width, d_out, n_hidden, parametrization, PCG32(seed), base_width=base_width
        )
        for j, lr in enumerate(lrs):
            layer_lrs = layer_learning_rates(
                lr, n_hidden, parametrization, optimizer, width=width, base_width=base_width
            )
            losses[i, j] = train_regression(weights, x, target, layer_lrs, optimizer, steps)[1][-1]
    return losses

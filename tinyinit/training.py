"""Does it train? A small MLP classifier in numpy, its backprop written out by hand.

The network has L layers; `params` is a list of (W_l, b_l), W_l shaped (out, in)
as in torch and b_l shaped (out,). For a batch x of shape (B, d_in):

    h_0 = x,    z_l = h_{l-1} W_l^T + b_l,    h_l = phi(z_l)   for l = 1 .. L-1,
    logits = z_L = h_{L-1} W_L^T + b_L                          (no activation),
    loss = mean over the batch of  logsumexp(z_L[i]) - z_L[i, y_i]   (softmax cross-entropy).

Backprop, by the chain rule, from the top down:

    dz_L     = (softmax(z_L) - onehot(y)) / B
    dW_l     = dz_l^T h_{l-1}              db_l = sum over the batch of dz_l
    dz_{l-1} = (dz_l W_l) * phi'(z_{l-1})

`dW_l` is a product of a forward factor (h_{l-1}, the signal reaching layer l)
and a backward one (dz_l, the gradient coming down to it): an init that shrinks
either one shrinks every weight gradient.

Around it: SGD and Adam steps (one formula each, shared with `tinyinit.mup`),
minibatches drawn from a PCG32, a training loop that records per-layer
statistics at every step, and the handwritten digits that scikit-learn ships.

>>> from tinyinit import PCG32, kaiming_normal
>>> kaiming = lambda shape, rng: kaiming_normal(shape, "fan_in", "relu", rng)
>>> params = init_params([64, 32, 10], kaiming, PCG32(0))
>>> [(W.shape, b.shape) for W, b in params]
[((32, 64), (32,)), ((10, 32), (10,))]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import NamedTuple

import numpy as np
from threadpoolctl import threadpool_limits

from ._extras import extra
from .activations import SATURATED_SLOPE, Activation
from .activations import activation as _activation_named
from .checks import integer, number, one_of
from .distributions import scaled_uniform_float32
from .init import normal_init
from .pcg32 import PCG32
from .stack import scheme

__all__ = [
    "AdamState",
    "Digits",
    "Evaluation",
    "Forward",
    "StepStats",
    "Trainer",
    "TrainingRun",
    "accuracy",
    "adam_init",
    "adam_step",
    "backward_layers",
    "cross_entropy",
    "evaluate",
    "forward",
    "forward_layers",
    "init_params",
    "load_digits_split",
    "loss_and_gradients",
    "minibatch_indices",
    "scheme_weights",
    "sgd_step",
    "train",
]

Params = list[tuple[np.ndarray, np.ndarray]]
OPTIMIZERS = ("sgd", "adam")
# A learning rate that trains notebook 04's network with each optimizer (notebook 11's).
LEARNING_RATES = {"sgd": 0.02, "adam": 1e-3}


# --- argument checks: say what was wrong, the value, and what is accepted -------------


def _check_params(params) -> None:
    if not isinstance(params, (list, tuple)) or len(params) == 0:
        raise ValueError(
            f"params must be a non-empty list of (W, b) layers, got {type(params).__name__} "
            f"of length {len(params) if hasattr(params, '__len__') else 'none'}"
        )
    previous_out = None
    for l, layer in enumerate(params):
        if not isinstance(layer, (list, tuple)) or len(layer) != 2:
            raise ValueError(f"params[{l}] must be a pair (W, b), got {type(layer).__name__}")
        W, b = (np.asarray(a) for a in layer)
        if W.ndim != 2 or b.shape != (W.shape[0],):
            raise ValueError(
                f"params[{l}] has W of shape {W.shape} and b of shape {b.shape}; "
                f"accepted: W of shape (out, in) and b of shape (out,)"
            )
        if previous_out is not None and W.shape[1] != previous_out:
            raise ValueError(
                f"params[{l}] has W of shape {W.shape}, which takes {W.shape[1]} inputs, but "
                f"layer {l - 1} has {previous_out} outputs: the shapes must chain"
            )
        previous_out = W.shape[0]


def _check_batch(params, x, labels) -> None:
    d_in, n_classes = params[0][0].shape[1], params[-1][0].shape[0]
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[1] != d_in:
        raise ValueError(f"x must have shape (batch, {d_in}) for this network, got {x.shape}")
    labels = np.asarray(labels)
    if labels.shape != (len(x),):
        raise ValueError(
            f"labels must have shape ({len(x)},), one per row of x, got {labels.shape}"
        )
    if labels.dtype.kind not in "iu":
        raise ValueError(f"labels must be integers, got dtype {labels.dtype}")
    if len(labels) and (labels.min() < 0 or labels.max() >= n_classes):
        bad = labels[(labels < 0) | (labels >= n_classes)][0]
        raise ValueError(f"labels must be in 0 .. {n_classes - 1} (the logits), got {bad}")


def _positive(name: str, value) -> float:
    return number(name, value, above=0)


def _count(name: str, value) -> int:
    return integer(name, value, minimum=1)


def _activation(name: str) -> Activation:
    if not isinstance(name, str):
        raise ValueError(f"activation must be the name of one (a str), got {name!r}")
    return _activation_named(name)


# --- the network ------------------------------------------------------------------------


def init_params(
    sizes: Sequence[int],
    init_weight: Callable[[tuple[int, int], PCG32], np.ndarray],
    rng: PCG32,
    *,
    dtype=np.float64,
) -> Params:
    """An MLP with layer sizes [d_in, n_1, ..., d_out]: weights from init_weight, biases 0.

    Layer l gets W_l = init_weight((sizes[l], sizes[l-1]), rng), drawn in layer
    order from the one generator, and b_l = 0; both are cast to dtype.

    >>> from tinyinit import PCG32, normal_init
    >>> params = init_params([3, 2], lambda s, r: normal_init(s, 1.0, r), PCG32(0))
    >>> params[0][0].round(3), params[0][1]
    (array([[-0.809,  0.055, -0.746],
           [ 1.157,  0.186, -0.395]]), array([0., 0.]))
    """
    sizes = list(sizes)
    if len(sizes) < 2:
        raise ValueError(f"sizes must list at least [d_in, d_out], got {sizes!r}")
    for size in sizes:
        _count("every entry of sizes", size)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        W = np.asarray(init_weight((fan_out, fan_in), rng), dtype=dtype)
        if W.shape != (fan_out, fan_in):
            raise ValueError(f"init_weight returned shape {W.shape} for shape {(fan_out, fan_in)}")
        params.append((W, np.zeros(fan_out, dtype=dtype)))
    return params


def scheme_weights(initializer: str, gain: float = 1.0, std: float = 0.02):
    """`init_weight` for `init_params` from a row of the explorers' initializers
    (`tinyinit.stack.SCHEMES`): W = the row's scale times a unit matrix drawn from rng.

    "normal" rows: normal_init(shape, std) with the row's std (Xavier: gain * sqrt(2 /
    (fan_in + fan_out)), Kaiming: gain / sqrt(fan)); "uniform": U(-a, a), a the row's
    bound. At the same gain these are the weights of tinyinit's own initializers, bit for bit.

    >>> from tinyinit import PCG32, kaiming_normal
    >>> W = scheme_weights("kaiming_fan_in", gain=2**0.5)((3, 4), PCG32(0))
    >>> bool((W == kaiming_normal((3, 4), "fan_in", "relu", PCG32(0))).all())
    True
    """
    row = scheme(initializer)
    gain, std = number("gain", gain, minimum=0), number("std", std, minimum=0)

    def init_weight(shape: tuple[int, int], rng: PCG32) -> np.ndarray:
        fan_out, fan_in = shape
        scale = row.scale(fan_in, fan_out, gain, std)
        if row.kind == "normal":
            return normal_init(shape, scale, rng)
        return scaled_uniform_float32(rng, fan_out * fan_in, scale).reshape(shape)

    return init_weight


class Forward(NamedTuple):
    """What a forward pass leaves for backprop: logits (B, d_out), z_1..z_{L-1}, h_0..h_{L-1}.

    >>> Forward(np.zeros((1, 2)), [], [np.ones((1, 2))]).logits.shape
    (1, 2)
    """

    logits: np.ndarray
    z: list[np.ndarray]  # pre-activations of the hidden layers, z[l-1] = z_l
    h: list[np.ndarray]  # inputs of the layers, h[l] = h_l, h[0] = x


def _affine(h: np.ndarray, W: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    return h @ W.T if b is None else h @ W.T + b


def forward_layers(params, x: np.ndarray, act: Activation) -> Forward:
    """The forward pass of `forward`, unchecked: z_l = h_{l-1} W_l^T + b_l, h_l = phi(z_l).

    params: (W, b) pairs, b None for a layer without bias (tinyinit.mup's);
    act: an Activation. Returns Forward(logits, z, h) as `forward` does.

    >>> from tinyinit.activations import activation
    >>> forward_layers([(np.eye(2), None)], np.array([[1.0, -1.0]]), activation("relu")).logits
    array([[ 1., -1.]])
    """
    z, h = [], [x]
    for W, b in params[:-1]:
        z.append(_affine(h[-1], W, b))
        # Some activations compute in float64 (gelu's erf): keep the network's dtype.
        h.append(act.phi(z[-1]).astype(z[-1].dtype, copy=False))
    W, b = params[-1]
    return Forward(_affine(h[-1], W, b), z, h)


def backward_layers(
    weights: Sequence[np.ndarray], h: Sequence[np.ndarray], dz: np.ndarray, slopes
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Backprop from dz = dloss/dz_L down: ([dW_1 .. dW_L], [dz_1 .. dz_L]).

    dW_l = dz_l^T h_{l-1},  dz_{l-1} = (dz_l W_l) * phi'(z_{l-1}); h = [h_0 .. h_{L-1}]
    as Forward holds them, slopes[l-1] = phi'(z_l) for the hidden layers.
    A bias's gradient is db_l = dz_l summed over the batch.

    >>> dW, dz = backward_layers([np.array([[2.0]])], [np.array([[3.0]])], np.array([[1.0]]), [])
    >>> dW, dz
    ([array([[3.]])], [array([[1.]])])
    """
    n_layers = len(weights)
    weight_grads, dzs = [None] * n_layers, [None] * n_layers
    for l in range(n_layers - 1, -1, -1):
        dzs[l], weight_grads[l] = dz, dz.T @ h[l]
        if l:
            dz = (dz @ weights[l]) * slopes[l - 1]
    return weight_grads, dzs


def forward(params: Params, x: np.ndarray, activation: str) -> Forward:
    """Run the MLP on a batch x (B, d_in): z_l = h_{l-1} W_l^T + b_l, h_l = phi(z_l).

    Returns Forward(logits, z, h): the logits (B, d_out), the hidden
    pre-activations z_1..z_{L-1} and the layer inputs h_0 = x, h_1..h_{L-1}.

    >>> W1, W2 = np.array([[1.0, -1.0], [2.0, 0.0]]), np.array([[1.0, 1.0]])
    >>> out = forward([(W1, np.zeros(2)), (W2, np.zeros(1))], np.array([[1.0, 2.0]]), "relu")
    >>> out.z[0], out.h[1], out.logits
    (array([[-1.,  2.]]), array([[0., 2.]]), array([[2.]]))
    """
    act = _activation(activation)
    _check_params(params)
    x = np.asarray(x)
    d_in = params[0][0].shape[1]
    if x.ndim != 2 or x.shape[1] != d_in:
        raise ValueError(f"x must have shape (batch, {d_in}) for this network, got {x.shape}")
    return forward_layers(params, x, act)


def cross_entropy(logits: np.ndarray, labels: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean softmax cross-entropy over the batch, and its gradient with respect to the logits.

    loss = mean_i [logsumexp(z_i) - z_i[y_i]], computed after subtracting each
    row's maximum (so exp never overflows); dloss/dz = (softmax(z) - onehot(y)) / B.

    >>> loss, dz = cross_entropy(np.array([[0.0, 0.0], [1000.0, 0.0]]), np.array([1, 0]))
    >>> round(loss, 6), dz
    (0.346574, array([[ 0.25, -0.25],
           [ 0.  ,  0.  ]]))
    """
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    rows = np.arange(len(labels))
    loss = -log_probs[rows, labels].mean()
    dz = np.exp(log_probs)
    dz[rows, labels] -= 1
    return float(loss), dz / len(labels)


def _backprop(params: Params, x, labels, act: Activation):
    """Loss, grads, the forward pass and phi'(z_l) of every hidden layer (the loop's statistics)."""
    fwd = forward_layers(params, x, act)
    loss, dz = cross_entropy(fwd.logits, labels)
    # phi' of a float32 z may come back float64 (a Python constant, gelu's erf).
    dphis = [act.dphi(z).astype(dz.dtype, copy=False) for z in fwd.z]
    weight_grads, dzs = backward_layers([W for W, _ in params], fwd.h, dz, dphis)
    grads = [(dW, d.sum(axis=0)) for dW, d in zip(weight_grads, dzs)]
    return loss, grads, fwd, dphis


def loss_and_gradients(
    params: Params, x: np.ndarray, labels: np.ndarray, activation: str
) -> tuple[float, Params]:
    """The loss of the MLP on (x, labels) and its gradient with respect to every parameter.

    Forward as in `forward`, loss as in `cross_entropy`, then backprop (module
    docstring): dW_l = dz_l^T h_{l-1}, db_l = sum_i dz_l[i], dz_{l-1} = (dz_l W_l) * phi'(z_{l-1}).
    grads is a list of (dW, db) with the shapes and dtype of params.

    >>> W1, W2 = np.array([[1.0, -1.0], [2.0, 0.0]]), np.array([[1.0, 1.0], [0.0, 0.0]])
    >>> params = [(W1, np.zeros(2)), (W2, np.zeros(2))]
    >>> loss, grads = loss_and_gradients(params, np.array([[1.0, 2.0]]), np.array([1]), "relu")
    >>> round(loss, 4), grads[1][1].round(4)            # logits (2, 0): softmax (0.881, 0.119)
    (2.1269, array([ 0.8808, -0.8808]))
    """
    act = _activation(activation)
    _check_params(params)
    _check_batch(params, x, labels)
    loss, grads, _, _ = _backprop(params, np.asarray(x), np.asarray(labels), act)
    return loss, grads


def accuracy(params: Params, x: np.ndarray, labels: np.ndarray, activation: str) -> float:
    """The fraction of rows of x whose largest logit is at their label.

    >>> params = [(np.eye(2), np.zeros(2))]
    >>> x = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0]])
    >>> accuracy(params, x, np.array([0, 1, 1]), "linear")
    0.6666666666666666
    """
    return evaluate(params, x, labels, activation).accuracy


class Evaluation(NamedTuple):
    """The network on a whole set: mean cross-entropy, accuracy, and its forward pass.

    >>> Evaluation(2.3, 0.1, Forward(np.zeros((1, 2)), [], [np.zeros((1, 2))])).accuracy
    0.1
    """

    loss: float
    accuracy: float
    forward: Forward


def evaluate(params: Params, x: np.ndarray, labels: np.ndarray, activation: str) -> Evaluation:
    """The loss (`cross_entropy`) and the accuracy (`accuracy`) of the MLP on (x, labels), from one
    forward pass, which comes with them (its h are what a histogram of the activations shows).

    >>> params = [(np.eye(2), np.zeros(2))]
    >>> x = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0]])
    >>> result = evaluate(params, x, np.array([0, 1, 1]), "linear")
    >>> round(result.loss, 4), round(result.accuracy, 4)
    (0.6466, 0.6667)
    """
    fwd = forward(params, x, activation)
    _check_batch(params, x, labels)
    labels = np.asarray(labels)
    loss, _ = cross_entropy(fwd.logits, labels)
    return Evaluation(loss, float(np.mean(fwd.logits.argmax(axis=1) == labels)), fwd)


# --- optimizers: one learning rate per array ------------------------------------------


def sgd_step(
    weights: list[np.ndarray], grads: list[np.ndarray], lrs: list[float]
) -> list[np.ndarray]:
    """W <- W - lr * dL/dW, array by array (new arrays; the arguments are untouched).

    >>> sgd_step([np.ones(2)], [np.array([1.0, -2.0])], [0.5])
    [array([0.5, 2. ])]
    """
    return [w - lr * g for w, g, lr in zip(weights, grads, lrs, strict=True)]


class AdamState(NamedTuple):
    """Adam's running averages of g and g**2 per array, and the number of steps taken.

    >>> AdamState(0, [np.zeros(1)], [np.zeros(1)]).step
    0
    """

    step: int
    m: list[np.ndarray]
    v: list[np.ndarray]


def adam_init(weights: list[np.ndarray]) -> AdamState:
    """Adam's state before the first step: zero moments shaped like the weights, step 0.

    >>> adam_init([np.ones((2, 3))]).m[0].shape
    (2, 3)
    """
    return AdamState(0, [np.zeros_like(w) for w in weights], [np.zeros_like(w) for w in weights])


def adam_step(
    weights: list[np.ndarray],
    grads: list[np.ndarray],
    state: AdamState,
    lrs: list[float],
    *,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
) -> tuple[list[np.ndarray], AdamState]:
    """Kingma & Ba (2015): W <- W - lr * m_hat / (sqrt(v_hat) + eps).

    m_hat / sqrt(v_hat) is about +-1 per entry whatever the gradient's scale, so
    every entry moves by about lr: the first step is exactly lr * sign(g) (up to eps).

    >>> w, s = adam_step([np.zeros(2)], [np.array([1e-3, -5.0])], adam_init([np.zeros(2)]), [0.1])
    >>> w[0].round(4)
    array([-0.1,  0.1])
    """
    t = state.step + 1
    new_weights, new_m, new_v = [], [], []
    for w, g, m, v, lr in zip(weights, grads, state.m, state.v, lrs, strict=True):
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g**2
        m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)
        new_weights.append(w - lr * m_hat / (np.sqrt(v_hat) + eps))
        new_m.append(m)
        new_v.append(v)
    return new_weights, AdamState(t, new_m, new_v)


# --- the training loop ------------------------------------------------------------------


def minibatch_indices(n_samples: int, batch_size: int, steps: int, rng: PCG32) -> np.ndarray:
    """Row indices of `steps` minibatches, shape (steps, batch_size): epochs without replacement.

    Each epoch is a permutation of 0..n_samples-1, the stable argsort of
    rng.uniforms(n_samples), cut into n_samples // batch_size batches (the
    remainder of an epoch is skipped); epochs follow one another until `steps`
    batches are drawn.

    >>> from tinyinit import PCG32
    >>> minibatch_indices(5, 2, 3, PCG32(0))
    array([[4, 0],
           [3, 1],
           [2, 3]])
    """
    n_samples, batch_size, steps = (
        _count("n_samples", n_samples),
        _count("batch_size", batch_size),
        _count("steps", steps),
    )
    if batch_size > n_samples:
        raise ValueError(f"batch_size must be <= n_samples = {n_samples}, got {batch_size}")
    per_epoch = n_samples // batch_size
    epochs = []
    for _ in range(-(-steps // per_epoch)):
        order = np.argsort(rng.uniforms(n_samples), kind="stable")
        epochs.append(order[: per_epoch * batch_size].reshape(per_epoch, batch_size))
    return np.concatenate(epochs)[:steps]


@dataclass(frozen=True)
class TrainingRun:
    """A training run: final params, and per step t (before its update) what each layer did.

    losses[t]                minibatch loss
    mean_square[t, l-1]      mean of h_l**2 over the minibatch, hidden layers l = 1..L-1
    saturated[t, l-1]        fraction of entries of h_l with phi'(z) < SATURATED_SLOPE
                             = 1 - 0.97**2 (|tanh| > 0.97; ReLU: h = 0)
    dead[t, l-1]             fraction of units of layer l saturated on the whole minibatch
    grad_norm[t, l-1]        ||dL/dW_l|| (Frobenius), all layers l = 1..L
    update_ratio[t, l-1]     ||Delta W_l|| / ||W_l||, the step's change against the weight

    A run whose loss stops being finite stops there: later rows are NaN and
    `diverged_at` is that step (None if it never diverged).

    >>> from tinyinit import PCG32, kaiming_normal
    >>> x, y = np.eye(4), np.array([0, 1, 0, 1])
    >>> kaiming = lambda shape, rng: kaiming_normal(shape, "fan_in", "relu", rng)
    >>> params = init_params([4, 8, 2], kaiming, PCG32(0))
    >>> run = train(params, x, y, "relu", optimizer="adam", lr=0.1, steps=20, batch_size=4)
    >>> run.losses.shape, run.grad_norm.shape, run.losses[-1] < run.losses[0]
    ((20,), (20, 2), np.True_)
    """

    params: Params
    losses: np.ndarray
    mean_square: np.ndarray
    saturated: np.ndarray
    dead: np.ndarray
    grad_norm: np.ndarray
    update_ratio: np.ndarray
    diverged_at: int | None


def _flat(params: Params) -> list[np.ndarray]:
    return [a for layer in params for a in layer]


def _unflat(arrays: list[np.ndarray]) -> Params:
    return [(arrays[i], arrays[i + 1]) for i in range(0, len(arrays), 2)]


def _norm(a: np.ndarray) -> float:
    return float(np.linalg.norm(a.astype(np.float64, copy=False)))


def train(
    params: Params,
    x: np.ndarray,
    labels: np.ndarray,
    activation: str,
    *,
    optimizer: str = "sgd",
    lr: float,
    steps: int,
    batch_size: int = 64,
    seed: int = 0,
) -> TrainingRun:
    """Train the MLP for `steps` minibatch steps of SGD or Adam, recording every layer.

    Minibatches come from minibatch_indices(len(x), batch_size, steps,
    PCG32(seed)), so a seed fixes the run bit for bit on one machine. The
    params given are not modified. See TrainingRun for what is recorded.

    >>> from tinyinit import PCG32, xavier_normal
    >>> x, y = np.eye(4), np.array([0, 1, 0, 1])
    >>> params = init_params([4, 8, 2], lambda s, r: xavier_normal(s, 1.0, r), PCG32(0))
    >>> run = train(params, x, y, "tanh", lr=0.5, steps=50, batch_size=2, seed=1)
    >>> round(float(run.losses[0]), 3), accuracy(run.params, x, y, "tanh")
    (0.526, 1.0)
    """
    act = _activation(activation)
    _check_params(params)
    _check_batch(params, x, labels)
    one_of("optimizer", optimizer, OPTIMIZERS)
    lr = _positive("lr", lr)
    steps = _count("steps", steps)
    batches = minibatch_indices(len(x), batch_size, steps, PCG32(seed))
    x, labels = np.asarray(x), np.asarray(labels)

    n_layers = len(params)
    losses = np.full(steps, np.nan)
    hidden = np.full((3, steps, n_layers - 1), np.nan)  # mean_square, saturated, dead
    per_layer = np.full((2, steps, n_layers), np.nan)  # grad_norm, update_ratio
    arrays = _flat(params)
    lrs = [lr] * len(arrays)
    state = adam_init(arrays) if optimizer == "adam" else None
    stats = (losses, hidden, per_layer)
    # Matrices this small run faster on one BLAS thread; on a busy machine two threads that
    # wait for each other made a width-128 run about 15 times slower (measured).
    with threadpool_limits(limits=1, user_api="blas"):
        diverged_at = _run(arrays, x, labels, act, batches, optimizer, lrs, state, stats)
    return TrainingRun(_unflat(arrays), losses, *hidden, *per_layer, diverged_at)


def _run(arrays, x, labels, act, batches, optimizer, lrs, state, stats) -> int | None:
    """The loop of `train`: updates `arrays` in place (the list, not the arrays) and `stats`."""
    losses, hidden, per_layer = stats
    for t, rows in enumerate(batches):
        step = _step(arrays, x[rows], labels[rows], act, optimizer, lrs, state)
        if step is None:
            return t
        arrays[:], state, recorded = step
        losses[t] = recorded.loss
        hidden[:, t] = recorded.mean_square, recorded.saturated, recorded.dead
        per_layer[:, t] = recorded.grad_norm, recorded.update_ratio
    return None


class StepStats(NamedTuple):
    """What one training step records, its row of TrainingRun: the minibatch loss, and per
    hidden layer mean_square, saturated and dead, per layer grad_norm and update_ratio.

    >>> StepStats(2.3, *[np.zeros(1)] * 3, *[np.zeros(2)] * 2).loss
    2.3
    """

    loss: float
    mean_square: np.ndarray
    saturated: np.ndarray
    dead: np.ndarray
    grad_norm: np.ndarray
    update_ratio: np.ndarray


def _step(arrays, x, labels, act, optimizer, lrs, state):
    """One step on the minibatch (x, labels): (the new arrays, the optimizer's state, StepStats),
    or None when the loss is not finite (then nothing is updated)."""
    loss, grads, fwd, dphis = _backprop(_unflat(arrays), x, labels, act)
    if not math.isfinite(loss):
        return None
    hidden = np.empty((3, len(dphis)))
    for l, (dphi, h) in enumerate(zip(dphis, fwd.h[1:])):
        shut = dphi < SATURATED_SLOPE
        hidden[:, l] = np.mean(h * h), np.mean(shut), np.mean(shut.all(axis=0))
    flat_grads = _flat(grads)
    if optimizer == "sgd":
        new = sgd_step(arrays, flat_grads, lrs)
    else:
        new, state = adam_step(arrays, flat_grads, state, lrs)
    per_layer = np.empty((2, len(arrays) // 2))
    for l in range(per_layer.shape[1]):
        old_W, new_W = arrays[2 * l], new[2 * l]
        size = _norm(old_W)
        per_layer[0, l] = _norm(flat_grads[2 * l])
        per_layer[1, l] = _norm(new_W - old_W) / size if size > 0 else np.nan
    return new, state, StepStats(loss, *hidden, *per_layer)


class Trainer:
    """`train`, one step at a time and for as long as it is asked: what a live view runs.

    The same checks, minibatches, updates and statistics as `train`: the minibatches are
    the epochs of `minibatch_indices` from PCG32(seed), drawn when they are needed, so
    that after n steps `run()` equals train(params, ..., steps=n) bit for bit. `lr` may
    change between steps (the steps after use it). A step whose loss is not finite
    updates nothing and ends the run: `diverged_at` says when, and `step` returns None.
    Matrices this small run faster on one BLAS thread: the caller sets it (`train` does,
    with threadpool_limits) around the steps it takes.

    >>> from tinyinit import PCG32, xavier_normal
    >>> x, y = np.eye(4), np.array([0, 1, 0, 1])
    >>> params = init_params([4, 8, 2], lambda s, r: xavier_normal(s, 1.0, r), PCG32(0))
    >>> trainer = Trainer(params, x, y, "tanh", lr=0.5, batch_size=2, seed=1)
    >>> round(trainer.step().loss, 3), trainer.steps      # train(..., seed=1)'s first loss
    (0.526, 1)
    """

    def __init__(
        self,
        params: Params,
        x: np.ndarray,
        labels: np.ndarray,
        activation: str,
        *,
        optimizer: str = "sgd",
        lr: float,
        batch_size: int = 64,
        seed: int = 0,
    ):
        self._act = _activation(activation)
        _check_params(params)
        _check_batch(params, x, labels)
        self.activation = activation
        self.optimizer = one_of("optimizer", optimizer, OPTIMIZERS)
        self.lr = lr
        self.batch_size = _count("batch_size", batch_size)
        self._rng = PCG32(seed)
        self._x, self._labels = np.asarray(x), np.asarray(labels)
        # One epoch now: it checks batch_size against the data as `train` does.
        self._epoch = list(self._next_epoch())
        self._arrays = _flat(params)
        self._state = adam_init(self._arrays) if optimizer == "adam" else None
        self._history: list[StepStats] = []
        self.diverged_at: int | None = None

    @property
    def lr(self) -> float:
        return self._lr

    @lr.setter
    def lr(self, value: float) -> None:
        self._lr = _positive("lr", value)

    @property
    def steps(self) -> int:
        """The steps taken so far."""
        return len(self._history)

    @property
    def params(self) -> Params:
        """The network as it is now."""
        return _unflat(self._arrays)

    def _next_epoch(self) -> np.ndarray:
        n_samples = len(self._x)
        # At least one step: minibatch_indices then refuses a batch_size above n_samples.
        per_epoch = max(n_samples // self.batch_size, 1)
        return minibatch_indices(n_samples, self.batch_size, per_epoch, self._rng)

    def step(self) -> StepStats | None:
        """One minibatch step; its statistics, or None once the run has diverged."""
        if self.diverged_at is not None:
            return None
        if not self._epoch:
            self._epoch = list(self._next_epoch())
        rows = self._epoch.pop(0)
        lrs = [self._lr] * len(self._arrays)
        step = _step(
            self._arrays, self._x[rows], self._labels[rows], self._act, self.optimizer, lrs,
            self._state,
        )  # fmt: skip
        if step is None:
            self.diverged_at = self.steps
            return None
        self._arrays, self._state, recorded = step
        self._history.append(recorded)
        return recorded

    @property
    def losses(self) -> np.ndarray:
        """The minibatch loss of every step so far, shape (steps,)."""
        return np.fromiter((s.loss for s in self._history), float, count=self.steps)

    def recent(self, field: str, steps: int) -> np.ndarray:
        """The last `steps` rows of one of StepStats's per-layer fields, shape (<= steps, L)."""
        rows = [getattr(s, field) for s in self._history[-steps:]]
        return np.array(rows) if rows else np.empty((0, len(self._arrays) // 2))

    def run(self) -> TrainingRun:
        """What `train` returns for the steps taken so far (as many rows as steps)."""
        fields = {
            name: np.array([getattr(s, name) for s in self._history]).reshape(self.steps, -1)
            for name in StepStats._fields[1:]
        }
        return TrainingRun(self.params, self.losses, **fields, diverged_at=self.diverged_at)


# --- data -------------------------------------------------------------------------------


class Digits(NamedTuple):
    """The handwritten digits, split: x (n, 64) standardized pixels, labels (n,) in 0..9.

    >>> d = Digits(np.zeros((1, 64)), np.zeros(1, int), np.zeros((0, 64)), np.zeros(0, int))
    >>> d.x_train.shape
    (1, 64)
    """

    x_train: np.ndarray
    labels_train: np.ndarray
    x_test: np.ndarray
    labels_test: np.ndarray


def load_digits_split(test_fraction: float = 0.25, seed: int = 0, dtype=np.float64) -> Digits:
    """scikit-learn's 1,797 handwritten 8x8 digits, split train/test by a seeded PCG32.

    The split puts the first round(test_fraction * 1797) rows of a permutation
    (the stable argsort of PCG32(seed).uniforms(1797)) in the test set. Every
    pixel is standardized with the training set's mean and standard deviation
    (pixels that are constant there are only centered), so E[x**2] is about 1,
    the input the variance formulas assume. The data ships inside scikit-learn:
    nothing is downloaded.

    >>> digits = load_digits_split()
    >>> digits.x_train.shape, digits.x_test.shape, digits.labels_test[:5]
    ((1348, 64), (449, 64), array([7, 1, 7, 7, 0]))
    """
    with extra("lab", "load_digits_split"):  # the only use of scikit-learn: load on demand
        from sklearn.datasets import load_digits

    if (
        isinstance(test_fraction, bool)
        or not isinstance(test_fraction, Real)
        or not 0 < test_fraction < 1
    ):
        raise ValueError(f"test_fraction must be a number in (0, 1), got {test_fraction!r}")
    data = load_digits()
    x, labels = data.data.astype(np.float64), data.target.astype(np.int64)
    order = np.argsort(PCG32(seed).uniforms(len(x)), kind="stable")
    n_test = round(test_fraction * len(x))
    test, train_rows = order[:n_test], order[n_test:]
    mean, std = x[train_rows].mean(axis=0), x[train_rows].std(axis=0)
    x = (x - mean) / np.where(std > 0, std, 1.0)
    return Digits(
        x[train_rows].astype(dtype), labels[train_rows], x[test].astype(dtype), labels[test]
    )

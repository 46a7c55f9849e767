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

With `norm="batch"` or `"layer"` every hidden layer normalizes its affine output
before the activation (`tinyinit.networks.normalization`, whose gamma and beta train too):

    a_l = h_{l-1} W_l^T + b_l,    z_l = gamma_l * standardize(a_l) + beta_l,    h_l = phi(z_l)

so z_l is always what phi reads, and backprop passes dloss/dz_l through the
normalization's backward to dloss/da_l before dW_l = da_l^T h_{l-1}.

Around it: SGD and Adam steps (one formula each, shared with `tinyinit.networks.mup`),
minibatches drawn from a PCG32, one training step (`train_step`, what a live view
calls) and a training loop over it that records per-layer statistics at every
step, and the handwritten digits that scikit-learn ships.

>>> from tinyinit import PCG32, kaiming_normal
>>> kaiming = lambda shape, rng: kaiming_normal(shape, "fan_in", "relu", rng)
>>> params = init_params([64, 32, 10], kaiming, PCG32(0))
>>> [(W.shape, b.shape) for W, b in params]
[((32, 64), (32,)), ((10, 32), (10,))]
"""

from __future__ import annotations

import gzip
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
from threadpoolctl import threadpool_limits

from .._extras import extra
from ..core.activations import Activation, as_activation
from ..core.arguments import (
    KindError,
    flag,
    float_dtype,
    function,
    generator,
    instance,
    integer,
    integers,
    number,
    one_of,
    real_array,
    shown,
)
from ..core.distributions import scaled_uniform_float32, uniforms
from ..core.init import normal_init
from ..core.pcg32 import PCG32
from ..physics.depth_stack import scheme
from ..physics.diagnostics import dead_fraction, saturated_fraction
from .normalization import (
    NORMS,
    Norm,
    NormCache,
    batch_norm_eval,
    init_norm,
    norm_backward,
    norm_forward,
    running_statistics,
)

__all__ = [
    "AdamState",
    "Digits",
    "Evaluation",
    "Forward",
    "Step",
    "StepStats",
    "TrainState",
    "Trainer",
    "TrainingRun",
    "accuracy",
    "adam_init",
    "adam_step",
    "backward_layers",
    "check_params",
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
    "start_training",
    "train",
    "train_step",
]

Params = list[tuple[np.ndarray, np.ndarray]]
OPTIMIZERS = ("sgd", "adam")
# A learning rate that trains notebook 04's network with each optimizer (notebook 11's).
LEARNING_RATES = {"sgd": 0.02, "adam": 1e-3}


# --- argument checks: say what was wrong, the value, and what is accepted -------------


def check_params(params, *, biases: bool = True) -> None:
    """Refuse params unless it is a non-empty list of (W, b) layers whose shapes chain
    (b may be None where biases is False): the door of every function that takes a network.

    >>> check_params([(np.ones((3, 4)), np.zeros(3)), (np.ones((2, 3)), np.zeros(2))])  # None
    >>> check_params("W")
    Traceback (most recent call last):
    ...
    tinyinit.core.arguments.KindError: params must be a non-empty list of (W, b) layers, got 'W'
    """
    flag("biases", biases)
    if not isinstance(params, (list, tuple)):
        raise KindError(f"params must be a non-empty list of (W, b) layers, got {shown(params)}")
    if len(params) == 0:
        raise ValueError("params must be a non-empty list of (W, b) layers, got an empty one")
    previous_out = None
    for l, layer in enumerate(params):
        if not isinstance(layer, (list, tuple)) or len(layer) != 2:
            raise KindError(f"params[{l}] must be a pair (W, b), got {shown(layer)}")
        W = real_array("params", layer[0])
        b = np.zeros(W.shape[:1]) if layer[1] is None and not biases else layer[1]
        b = real_array("params", b)
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


def _check_x(params, x) -> np.ndarray:
    d_in = np.shape(params[0][0])[1]
    x = real_array("x", x, what=f"a (batch, {d_in}) array for this network", float64=False)
    if x.ndim != 2 or x.shape[1] != d_in:
        raise ValueError(f"x must have shape (batch, {d_in}) for this network, got {x.shape}")
    return x


def _check_batch(params, x, labels) -> None:
    n_classes = np.shape(params[-1][0])[0]
    x = _check_x(params, x)
    _check_labels(labels, len(x), n_classes)


def _check_labels(labels, rows: int, n_classes: int) -> None:
    if labels is None or isinstance(labels, (str, bytes)):
        raise KindError(f"labels must be an integer array, one per row, got {shown(labels)}")
    labels = np.asarray(labels)
    if labels.dtype.kind not in "iu":
        raise KindError(f"labels must be integers, got dtype {labels.dtype}")
    if labels.shape != (rows,):
        raise ValueError(f"labels must have shape ({rows},), one per row of x, got {labels.shape}")
    if len(labels) and (labels.min() < 0 or labels.max() >= n_classes):
        bad = labels[(labels < 0) | (labels >= n_classes)][0]
        raise ValueError(f"labels must be in 0 .. {n_classes - 1} (the logits), got {bad}")


def _arrays(name: str, arrays, like=None) -> list[np.ndarray]:
    """A list of real arrays (one per parameter), of like's shapes when given."""
    instance(name, arrays, (list, tuple), "a list of arrays, one per parameter")
    arrays = [real_array(name, a, float64=False) for a in arrays]
    if like is not None and [a.shape for a in arrays] != [np.shape(w) for w in like]:
        raise ValueError(f"{name} must have the weights' shapes {[np.shape(w) for w in like]}, "
                         f"got {[a.shape for a in arrays]}")  # fmt: skip
    return arrays


def _lrs(lrs, n: int) -> list[float]:
    instance("lrs", lrs, (list, tuple), "a list of learning rates, one per array")
    if len(lrs) != n:
        raise ValueError(f"lrs must hold {n} learning rates, one per array, got {len(lrs)}")
    return [number("lrs", lr, minimum=0) for lr in lrs]


def _positive(name: str, value) -> float:
    return number(name, value, above=0)


def _count(name: str, value) -> int:
    return integer(name, value, minimum=1)


def _activation(activation) -> Activation:
    return as_activation(activation, name="activation")  # a name, a callable or an Activation


def _as_norm(norm, params) -> Norm | None:
    """norm as a Norm for these params: None, a kind of NORMS (fresh layers) or a Norm."""
    widths = [W.shape[0] for W, _ in params[:-1]]
    if norm is None or isinstance(norm, str):
        return init_norm("none" if norm is None else norm, widths, params[0][0].dtype)
    instance("norm", norm, Norm, f"one of {', '.join(NORMS)} or a Norm")
    one_of("norm.kind", norm.kind, NORMS[1:])
    shapes = [np.shape(g) for g in norm.gamma]
    running = len(norm.running_mean) if norm.kind == "batch" else len(widths)
    if shapes != [(n,) for n in widths] or len(norm.beta) != len(widths) or running != len(widths):
        raise ValueError(
            f"norm has gamma of shapes {shapes}; this network's hidden layers need one "
            f"(gamma, beta) pair (and BatchNorm's running statistics) of widths {widths}"
        )
    return norm


# --- the network ------------------------------------------------------------------------


def init_params(
    sizes: Sequence[int],
    init_weight: Callable[[tuple[int, int], PCG32], np.ndarray],
    rng: PCG32,
    *,
    dtype=np.float64,
    init_bias: Callable[[tuple[int], int, PCG32], np.ndarray] | None = None,
) -> Params:
    """An MLP with layer sizes [d_in, n_1, ..., d_out]: weights from init_weight, biases 0.

    Layer l gets W_l = init_weight((sizes[l], sizes[l-1]), rng), drawn in layer
    order from the one generator, and b_l = 0; both are cast to dtype. With
    init_bias, b_l = init_bias((sizes[l],), sizes[l-1], rng) (its shape and its
    layer's fan_in), drawn right after W_l, as torch's nn.Linear draws its own.

    >>> from tinyinit import PCG32, normal_init
    >>> params = init_params([3, 2], lambda s, r: normal_init(s, 1.0, r), PCG32(0))
    >>> params[0][0].round(3), params[0][1]
    (array([[-0.809,  0.055, -0.746],
           [ 1.157,  0.186, -0.395]]), array([0., 0.]))
    """
    sizes = list(integers("sizes", sizes, minimum=1))
    if len(sizes) < 2:
        raise ValueError(f"sizes must list at least [d_in, d_out], got {sizes!r}")
    init_weight, dtype = function("init_weight", init_weight), float_dtype("dtype", dtype)
    if init_bias is not None:
        function("init_bias", init_bias)
    generator("rng", rng)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        W = real_array("init_weight", init_weight((fan_out, fan_in), rng)).astype(dtype)
        if W.shape != (fan_out, fan_in):
            raise ValueError(f"init_weight returned shape {W.shape} for shape {(fan_out, fan_in)}")
        if init_bias is None:
            b = np.zeros(fan_out, dtype=dtype)
        else:
            b = np.asarray(init_bias((fan_out,), fan_in, rng), dtype=dtype)
            if b.shape != (fan_out,):
                raise ValueError(f"init_bias returned shape {b.shape} for shape {(fan_out,)}")
        params.append((W, b))
    return params


def scheme_weights(initializer: str, gain: float = 1.0, std: float = 0.02):
    """`init_weight` for `init_params` from a row of the explorers' initializers
    (`tinyinit.physics.depth_stack.SCHEMES`): W = the row's scale times a unit matrix drawn from
    rng.

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

    norms: with normalization, each hidden layer's NormCache (None in BatchNorm's evaluation).

    >>> Forward(np.zeros((1, 2)), [], [np.ones((1, 2))]).logits.shape
    (1, 2)
    """

    logits: np.ndarray
    z: list[np.ndarray]  # what phi reads in the hidden layers, z[l-1] = z_l
    h: list[np.ndarray]  # inputs of the layers, h[l] = h_l, h[0] = x
    norms: Sequence[NormCache | None] = ()


def _affine(h: np.ndarray, W: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    return h @ W.T if b is None else h @ W.T + b


def forward_layers(
    params, x: np.ndarray, act: Activation, norm: Norm | None = None, *, training: bool = True
) -> Forward:
    """The forward pass of `forward`, unchecked: z_l = h_{l-1} W_l^T + b_l, h_l = phi(z_l).

    params: (W, b) pairs, b None for a layer without bias (tinyinit.networks.mup's);
    act: an Activation; norm: None or a Norm, applied to each hidden layer's
    affine output (BatchNorm with the batch's statistics if training, else with
    its running ones). Returns Forward(logits, z, h, norms) as `forward` does.

    >>> from tinyinit.core.activations import activation
    >>> forward_layers([(np.eye(2), None)], np.array([[1.0, -1.0]]), activation("relu")).logits
    array([[ 1., -1.]])
    """
    act = as_activation(act, name="act")
    if norm is not None:
        instance("norm", norm, Norm, "None or a Norm")
    check_params(params, biases=False)
    x = _check_x(params, x)
    z, h, caches = [], [x], []
    for l, (W, b) in enumerate(params[:-1]):
        a = _affine(h[-1], W, b)
        if norm is not None:
            a, cache = _normalize(norm, l, a, training)
            caches.append(cache)
        z.append(a)
        # Some activations compute in float64 (gelu's erf): keep the network's dtype.
        h.append(act.phi(a).astype(a.dtype, copy=False))
    W, b = params[-1]
    return Forward(_affine(h[-1], W, b), z, h, caches)


def _normalize(norm: Norm, l: int, a: np.ndarray, training: bool):
    """Hidden layer l+1's normalization of its affine output a: (z, its NormCache or None)."""
    gamma, beta = norm.gamma[l], norm.beta[l]
    if norm.kind == "batch" and not training:
        mean, var = norm.running_mean[l], norm.running_var[l]
        return batch_norm_eval(a, gamma, beta, mean, var).astype(a.dtype, copy=False), None
    z, cache = norm_forward(norm.kind, a, gamma, beta)
    return z.astype(a.dtype, copy=False), cache


def backward_layers(
    weights: Sequence[np.ndarray],
    h: Sequence[np.ndarray],
    dz: np.ndarray,
    slopes,
    through: Callable[[int, np.ndarray], np.ndarray] | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Backprop from dz = dloss/dz_L down: ([dW_1 .. dW_L], [dz_1 .. dz_L]).

    dW_l = dz_l^T h_{l-1},  dz_{l-1} = (dz_l W_l) * phi'(z_{l-1}); h = [h_0 .. h_{L-1}]
    as Forward holds them, slopes[l-1] = phi'(z_l) for the hidden layers.
    A bias's gradient is db_l = dz_l summed over the batch. through(l - 1, d), if
    given, takes d = dloss/dz_l, at what phi reads, to the gradient at layer l's
    affine output (a normalization's backward); dzs then holds the latter.

    >>> dW, dz = backward_layers([np.array([[2.0]])], [np.array([[3.0]])], np.array([[1.0]]), [])
    >>> dW, dz
    ([array([[3.]])], [array([[1.]])])
    """
    weights, h, dz, slopes = _backward_arguments(weights, h, dz, slopes)
    n_layers = len(weights)
    weight_grads, dzs = [None] * n_layers, [None] * n_layers
    for l in range(n_layers - 1, -1, -1):
        dzs[l], weight_grads[l] = dz, dz.T @ h[l]
        if l:
            dz = (dz @ weights[l]) * slopes[l - 1]
            if through is not None:
                dz = through(l - 1, dz)
    return weight_grads, dzs


def _backward_arguments(weights, h, dz, slopes):
    """backward_layers' arguments checked: lists of arrays that fit, a dz for the last layer."""
    weights, h = _arrays("weights", weights), _arrays("h", h)
    dz, slopes = real_array("dz", dz, ndim=2, float64=False), _arrays("slopes", slopes)
    if len(h) != len(weights) or len(slopes) != len(weights) - 1:
        raise ValueError(f"h and slopes must hold {len(weights)} and {len(weights) - 1} arrays "
                         f"for {len(weights)} weights, got {len(h)} and {len(slopes)}")  # fmt: skip
    if dz.shape != (len(h[-1]), np.shape(weights[-1])[0]):
        raise ValueError(f"dz must be (batch, out) = ({len(h[-1])}, {np.shape(weights[-1])[0]}) "
                         f"for the last layer, got {dz.shape}")  # fmt: skip
    return weights, h, dz, slopes


def forward(
    params: Params,
    x: np.ndarray,
    activation: str,
    *,
    norm: Norm | str | None = None,
    training: bool = False,
) -> Forward:
    """Run the MLP on a batch x (B, d_in): z_l = h_{l-1} W_l^T + b_l, h_l = phi(z_l).

    Returns Forward(logits, z, h): the logits (B, d_out), the hidden
    pre-activations z_1..z_{L-1} and the layer inputs h_0 = x, h_1..h_{L-1}.
    norm: None, "batch" or "layer" (fresh layers: gamma 1, beta 0) or a Norm (a
    trained one, TrainingRun.norm). BatchNorm uses its running statistics, as in
    evaluation, unless training=True: then the batch's own, as in training.

    >>> W1, W2 = np.array([[1.0, -1.0], [2.0, 0.0]]), np.array([[1.0, 1.0]])
    >>> out = forward([(W1, np.zeros(2)), (W2, np.zeros(1))], np.array([[1.0, 2.0]]), "relu")
    >>> out.z[0], out.h[1], out.logits
    (array([[-1.,  2.]]), array([[0., 2.]]), array([[2.]]))
    """
    act = _activation(activation)
    check_params(params)
    norm, training = _as_norm(norm, params), flag("training", training)
    return forward_layers(params, _check_x(params, x), act, norm, training=training)


def cross_entropy(logits: np.ndarray, labels: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean softmax cross-entropy over the batch, and its gradient with respect to the logits.

    loss = mean_i [logsumexp(z_i) - z_i[y_i]], computed after subtracting each
    row's maximum (so exp never overflows); dloss/dz = (softmax(z) - onehot(y)) / B.

    >>> loss, dz = cross_entropy(np.array([[0.0, 0.0], [1000.0, 0.0]]), np.array([1, 0]))
    >>> round(loss, 6), dz
    (0.346574, array([[ 0.25, -0.25],
           [ 0.  ,  0.  ]]))
    """
    logits = real_array("logits", logits, ndim=2, float64=False)
    if not logits.size:
        raise ValueError(f"logits must be (batch, classes) with both >= 1, got {logits.shape}")
    _check_labels(labels, len(logits), logits.shape[1])
    labels = np.asarray(labels)
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    rows = np.arange(len(labels))
    loss = -log_probs[rows, labels].mean()
    dz = np.exp(log_probs)
    dz[rows, labels] -= 1
    return float(loss), dz / len(labels)


def _backprop(params: Params, x, labels, act: Activation, norm: Norm | None = None):
    """Loss, grads, the forward pass and phi'(z_l) of every hidden layer (the loop's statistics).

    grads: (dW, db) per layer, then with norm (dgamma, dbeta) per hidden layer; the forward
    pass is training's (BatchNorm on the batch's statistics).
    """
    fwd = forward_layers(params, x, act, norm, training=True)
    loss, dz = cross_entropy(fwd.logits, labels)
    # phi' of a float32 z may come back float64 (a Python constant, gelu's erf).
    dphis = [act.dphi(z).astype(dz.dtype, copy=False) for z in fwd.z]
    norm_grads = [None] * len(fwd.norms)

    def through_norm(l, dz_l):
        da_l, dgamma, dbeta = norm_backward(norm.kind, dz_l, norm.gamma[l], fwd.norms[l])
        norm_grads[l] = (dgamma, dbeta)
        return da_l

    weights = [W for W, _ in params]
    through = None if norm is None else through_norm
    weight_grads, dzs = backward_layers(weights, fwd.h, dz, dphis, through)
    grads = [(dW, d.sum(axis=0)) for dW, d in zip(weight_grads, dzs)] + norm_grads
    return loss, grads, fwd, dphis


def loss_and_gradients(
    params: Params,
    x: np.ndarray,
    labels: np.ndarray,
    activation: str,
    *,
    norm: Norm | str | None = None,
) -> tuple[float, Params]:
    """The loss of the MLP on (x, labels) and its gradient with respect to every parameter.

    Forward as in `forward`, loss as in `cross_entropy`, then backprop (module
    docstring): dW_l = dz_l^T h_{l-1}, db_l = sum_i dz_l[i], dz_{l-1} = (dz_l W_l) * phi'(z_{l-1}).
    grads is a list of (dW, db) with the shapes and dtype of params; with norm
    ("batch", "layer" or a Norm, as in training: BatchNorm on the batch's
    statistics), followed by one (dgamma, dbeta) per hidden layer.

    >>> W1, W2 = np.array([[1.0, -1.0], [2.0, 0.0]]), np.array([[1.0, 1.0], [0.0, 0.0]])
    >>> params = [(W1, np.zeros(2)), (W2, np.zeros(2))]
    >>> loss, grads = loss_and_gradients(params, np.array([[1.0, 2.0]]), np.array([1]), "relu")
    >>> round(loss, 4), grads[1][1].round(4)            # logits (2, 0): softmax (0.881, 0.119)
    (2.1269, array([ 0.8808, -0.8808]))
    """
    act = _activation(activation)
    check_params(params)
    norm = _as_norm(norm, params)
    _check_batch(params, x, labels)
    loss, grads, _, _ = _backprop(params, np.asarray(x), np.asarray(labels), act, norm)
    return loss, grads


def accuracy(
    params: Params,
    x: np.ndarray,
    labels: np.ndarray,
    activation: str,
    *,
    norm: Norm | str | None = None,
) -> float:
    """The fraction of rows of x whose largest logit is at their label (norm in evaluation).

    >>> params = [(np.eye(2), np.zeros(2))]
    >>> x = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0]])
    >>> accuracy(params, x, np.array([0, 1, 1]), "linear")
    0.6666666666666666
    """
    return evaluate(params, x, labels, activation, norm=norm).accuracy


class Evaluation(NamedTuple):
    """The network on a whole set: mean cross-entropy, accuracy, and its forward pass.

    >>> Evaluation(2.3, 0.1, Forward(np.zeros((1, 2)), [], [np.zeros((1, 2))])).accuracy
    0.1
    """

    loss: float
    accuracy: float
    forward: Forward


def evaluate(
    params: Params,
    x: np.ndarray,
    labels: np.ndarray,
    activation: str,
    *,
    norm: Norm | str | None = None,
) -> Evaluation:
    """The loss (`cross_entropy`) and the accuracy (`accuracy`) of the MLP on (x, labels), from one
    forward pass, which comes with them (its h are what a histogram of the activations shows);
    norm as in `forward` (evaluation: BatchNorm on its running statistics).

    >>> params = [(np.eye(2), np.zeros(2))]
    >>> x = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0]])
    >>> result = evaluate(params, x, np.array([0, 1, 1]), "linear")
    >>> round(result.loss, 4), round(result.accuracy, 4)
    (0.6466, 0.6667)
    """
    fwd = forward(params, x, activation, norm=norm)
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
    weights = _arrays("weights", weights)
    grads, lrs = _arrays("grads", grads, like=weights), _lrs(lrs, len(weights))
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
    weights = _arrays("weights", weights)
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
    weights = _arrays("weights", weights)
    grads, lrs = _arrays("grads", grads, like=weights), _lrs(lrs, len(weights))
    instance("state", state, AdamState, "an AdamState (adam_init's, then adam_step's)")
    _arrays("state", state.m, like=weights), _arrays("state", state.v, like=weights)
    beta1 = number("beta1", beta1, minimum=0, maximum=0.999999)
    beta2 = number("beta2", beta2, minimum=0, maximum=0.999999)
    eps = number("eps", eps, above=0)
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
    generator("rng", rng)
    per_epoch = n_samples // batch_size
    epochs = []
    for _ in range(-(-steps // per_epoch)):
        order = np.argsort(uniforms(rng, n_samples), kind="stable")
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
    norm                     the trained normalization layers (None without): pass it to
                             `accuracy` and `forward` with the params

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
    norm: Norm | None = None


class TrainState(NamedTuple):
    """Where training stands: the params, their normalization layers (None without), the
    optimizer ("sgd" or "adam") and Adam's running averages (None for SGD).

    >>> from tinyinit import PCG32, kaiming_normal
    >>> kaiming = lambda shape, rng: kaiming_normal(shape, "fan_in", "relu", rng)
    >>> params = init_params([4, 3, 2], kaiming, PCG32(0))
    >>> state = start_training(params, optimizer="adam", norm="batch")
    >>> state.norm.kind, state.adam.step, len(state.adam.m)      # W, b of 2 layers; gamma, beta
    ('batch', 0, 6)
    """

    params: Params
    norm: Norm | None
    optimizer: str
    adam: AdamState | None


class Step(NamedTuple):
    """What one training step saw, before its update.

    loss          the minibatch's loss
    forward       its forward pass (as in training: BatchNorm on the batch's statistics)
    slopes        phi'(z_l) for the hidden layers l = 1..L-1
    grads         (dW, db) per layer, then with normalization (dgamma, dbeta) per hidden layer
    update_ratio  ||Delta W_l|| / ||W_l|| per layer (NaN where W_l = 0; all NaN when the loss
                  was not finite and nothing was updated)

    >>> Step(2.3, None, [], [], np.zeros(1)).loss
    2.3
    """

    loss: float
    forward: Forward
    slopes: list[np.ndarray]
    grads: Params
    update_ratio: np.ndarray


def _flat(params: Params) -> list[np.ndarray]:
    return [a for layer in params for a in layer]


def _unflat(arrays: list[np.ndarray]) -> Params:
    return [(arrays[i], arrays[i + 1]) for i in range(0, len(arrays), 2)]


def _trained(params: Params, norm: Norm | None) -> list[np.ndarray]:
    """Everything the optimizer moves: W_1, b_1, .., W_L, b_L, then gamma_1, beta_1, .."""
    return _flat(params) + ([] if norm is None else _flat(list(zip(norm.gamma, norm.beta))))


def _norm(a: np.ndarray) -> float:
    return float(np.linalg.norm(a.astype(np.float64, copy=False)))


def start_training(
    params: Params, *, optimizer: str = "sgd", norm: Norm | str | None = None
) -> TrainState:
    """The state before the first step: the params given, fresh normalization layers for
    norm="batch" or "layer" (or the Norm given, to continue), and Adam's zero moments.

    >>> params = [(np.eye(2), np.zeros(2)), (np.ones((3, 2)), np.zeros(3))]
    >>> state = start_training(params, norm="layer")
    >>> state.optimizer, state.adam, state.norm.gamma
    ('sgd', None, [array([1., 1.])])
    """
    check_params(params)
    one_of("optimizer", optimizer, OPTIMIZERS)
    norm = _as_norm(norm, params)
    adam = adam_init(_trained(params, norm)) if optimizer == "adam" else None
    return TrainState(list(params), norm, optimizer, adam)


def train_step(
    state: TrainState, x: np.ndarray, labels: np.ndarray, activation: str, *, lr: float
) -> tuple[TrainState, Step]:
    """One step of the state's optimizer on the minibatch (x, labels): (new state, what it saw).

    Every array the optimizer moves gets the learning rate lr: the weights, the biases and
    the normalization's gamma and beta; BatchNorm's running statistics move toward this
    batch's (`tinyinit.networks.normalization.running_statistics`). A step whose loss is not finite
    changes nothing (the state comes back as it was). Nothing given is modified. `train` is
    a loop over this step; a live view calls it once a frame (inside
    threadpoolctl.threadpool_limits(1), as `train` does: these matrices are small).

    >>> from tinyinit import PCG32, kaiming_normal
    >>> x, y = np.eye(4), np.array([0, 1, 0, 1])
    >>> kaiming = lambda shape, rng: kaiming_normal(shape, "fan_in", "relu", rng)
    >>> state = start_training(init_params([4, 8, 2], kaiming, PCG32(0)), norm="layer")
    >>> for _ in range(3):
    ...     state, step = train_step(state, x, y, "relu", lr=0.5)
    ...     print(round(step.loss, 4), step.update_ratio.round(3))
    0.6003 [0.076 0.101]
    0.3418 [0.076 0.107]
    0.1652 [0.032 0.052]
    """
    instance("state", state, TrainState, "a TrainState (start_training)")
    act = _activation(activation)
    _check_batch(state.params, x, labels)
    if state.norm is not None and state.norm.kind == "batch" and len(x) < 2:
        raise ValueError(f"BatchNorm trains on batches of 2 or more examples, got {len(x)}")
    return _step(state, np.asarray(x), np.asarray(labels), act, _positive("lr", lr))


def _step(state: TrainState, x, labels, act: Activation, lr: float) -> tuple[TrainState, Step]:
    """train_step, unchecked."""
    params, norm = state.params, state.norm
    loss, grads, fwd, dphis = _backprop(params, x, labels, act, norm)
    n_layers = len(params)
    if not math.isfinite(loss):
        return state, Step(loss, fwd, dphis, grads, np.full(n_layers, np.nan))
    arrays = _trained(params, norm)
    lrs = [lr] * len(arrays)
    if state.optimizer == "sgd":
        new, adam = sgd_step(arrays, _flat(grads), lrs), None
    else:
        new, adam = adam_step(arrays, _flat(grads), state.adam, lrs)
    ratio = np.full(n_layers, np.nan)
    for l in range(n_layers):
        size = _norm(arrays[2 * l])
        if size > 0:
            ratio[l] = _norm(new[2 * l] - arrays[2 * l]) / size
    if norm is not None:
        trained = _unflat(new[2 * n_layers :])
        running = norm.running_mean, norm.running_var
        if norm.kind == "batch":
            moved = [running_statistics(m, v, c) for m, v, c in zip(*running, fwd.norms)]
            running = [m for m, _ in moved], [v for _, v in moved]
        norm = Norm(norm.kind, [g for g, _ in trained], [b for _, b in trained], *running)
    new_state = TrainState(_unflat(new[: 2 * n_layers]), norm, state.optimizer, adam)
    return new_state, Step(loss, fwd, dphis, grads, ratio)


def _check_batch_norm_batch(norm: Norm | None, batch_size) -> None:
    batch_size = _count("batch_size", batch_size)
    if norm is not None and norm.kind == "batch" and batch_size == 1:
        raise ValueError("batch_size must be >= 2 for BatchNorm (a batch of one has no variance)")


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
    norm: Norm | str | None = None,
) -> TrainingRun:
    """Train the MLP for `steps` minibatch steps of SGD or Adam, recording every layer.

    Minibatches come from minibatch_indices(len(x), batch_size, steps,
    PCG32(seed)), so a seed fixes the run bit for bit on one machine. The
    params given are not modified. norm: None, "batch" or "layer" (fresh layers
    after every hidden layer's affine map) or a Norm to continue from; its
    gamma and beta train with the weights. See TrainingRun for what is recorded.

    >>> from tinyinit import PCG32, xavier_normal
    >>> x, y = np.eye(4), np.array([0, 1, 0, 1])
    >>> params = init_params([4, 8, 2], lambda s, r: xavier_normal(s, 1.0, r), PCG32(0))
    >>> run = train(params, x, y, "tanh", lr=0.5, steps=50, batch_size=2, seed=1)
    >>> round(float(run.losses[0]), 3), accuracy(run.params, x, y, "tanh")
    (0.526, 1.0)
    >>> run = train(params, x, y, "tanh", lr=0.5, steps=50, batch_size=2, seed=1, norm="batch")
    >>> accuracy(run.params, x, y, "tanh", norm=run.norm), run.norm.running_mean[0].shape
    (1.0, (8,))
    """
    act = _activation(activation)
    check_params(params)
    _check_batch(params, x, labels)
    state = start_training(params, optimizer=optimizer, norm=norm)
    lr = _positive("lr", lr)
    steps = _count("steps", steps)
    seed = integer("seed", seed)
    _check_batch_norm_batch(state.norm, batch_size)
    batches = minibatch_indices(len(x), batch_size, steps, PCG32(seed))
    x, labels = np.asarray(x), np.asarray(labels)

    n_layers = len(params)
    losses = np.full(steps, np.nan)
    hidden = np.full((3, steps, n_layers - 1), np.nan)  # mean_square, saturated, dead
    per_layer = np.full((2, steps, n_layers), np.nan)  # grad_norm, update_ratio
    stats = (losses, hidden, per_layer)
    # Matrices this small run faster on one BLAS thread; on a busy machine two threads that
    # wait for each other made a width-128 run about 15 times slower (measured).
    with threadpool_limits(limits=1, user_api="blas"):
        state, diverged_at = _run(state, x, labels, act, batches, lr, stats)
    return TrainingRun(state.params, losses, *hidden, *per_layer, diverged_at, state.norm)


def _run(state: TrainState, x, labels, act, batches, lr, stats):
    """The loop of `train`: steps the state and fills `stats`; (final state, diverged_at)."""
    losses, hidden, per_layer = stats
    n_layers = len(state.params)
    for t, rows in enumerate(batches):
        state, step = _step(state, x[rows], labels[rows], act, lr)
        if not math.isfinite(step.loss):
            return state, t
        recorded = _recorded(step, n_layers)
        losses[t] = recorded.loss
        hidden[:, t] = recorded.mean_square, recorded.saturated, recorded.dead
        per_layer[:, t] = recorded.grad_norm, recorded.update_ratio
    return state, None


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


# StepStats' fields that hold one number per layer (per hidden layer): all but the loss.
PER_LAYER = tuple(StepStats.__annotations__)[1:]


def _recorded(step: Step, n_layers: int) -> StepStats:
    """What `train` records of a step (see TrainingRun)."""
    hidden = np.empty((3, n_layers - 1))
    for l, (dphi, h) in enumerate(zip(step.slopes, step.forward.h[1:])):
        hidden[:, l] = np.mean(h * h), saturated_fraction(dphi), dead_fraction(dphi)
    grad_norm = np.array([_norm(dW) for dW, _ in step.grads[:n_layers]])
    return StepStats(step.loss, *hidden, grad_norm, step.update_ratio)


class Trainer:
    """`train`, one step at a time and for as long as it is asked: what a live view runs.

    The same checks, minibatches, steps (`train_step`) and statistics as `train`: the
    minibatches are the epochs of `minibatch_indices` from PCG32(seed), drawn when they
    are needed, so that after n steps `run()` equals train(params, ..., steps=n) bit for
    bit. `lr` may change between steps (the steps after use it). A step whose loss is
    not finite changes nothing and ends the run: `diverged_at` says when, and `step`
    returns None. Matrices this small run faster on one BLAS thread: the caller sets it
    (`train` does, with threadpool_limits) around the steps it takes.

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
        norm: Norm | str | None = None,
    ):
        self._act = _activation(activation)
        check_params(params)
        _check_batch(params, x, labels)
        self._state = start_training(params, optimizer=optimizer, norm=norm)
        self.activation = activation
        self.lr = lr
        self.batch_size = _count("batch_size", batch_size)
        _check_batch_norm_batch(self.norm, batch_size)
        self._rng = PCG32(seed)
        self._x, self._labels = np.asarray(x), np.asarray(labels)
        # One epoch now: it checks batch_size against the data as `train` does.
        self._epoch = list(self._next_epoch())
        self._history: list[StepStats] = []
        self.diverged_at: int | None = None

    @property
    def lr(self) -> float:
        return self._lr

    @lr.setter
    def lr(self, value: float) -> None:
        self._lr = _positive("lr", value)

    @property
    def optimizer(self) -> str:
        return self._state.optimizer

    @property
    def steps(self) -> int:
        """The steps taken so far."""
        return len(self._history)

    @property
    def params(self) -> Params:
        """The network as it is now."""
        return self._state.params

    @property
    def norm(self) -> Norm | None:
        """Its normalization layers as they are now (None without): `evaluate` takes them."""
        return self._state.norm

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
        state, step = _step(self._state, self._x[rows], self._labels[rows], self._act, self._lr)
        if not math.isfinite(step.loss):
            self.diverged_at = self.steps
            return None
        self._state = state
        recorded = _recorded(step, len(state.params))
        self._history.append(recorded)
        return recorded

    @property
    def losses(self) -> np.ndarray:
        """The minibatch loss of every step so far, shape (steps,)."""
        return np.fromiter((s.loss for s in self._history), float, count=self.steps)

    def recent(self, field: str, steps: int) -> np.ndarray:
        """The last `steps` rows of one of StepStats's per-layer fields, shape (<= steps, L)."""
        one_of("field", field, PER_LAYER)
        steps = _count("steps", steps)
        rows = [getattr(s, field) for s in self._history[-steps:]]
        return np.array(rows) if rows else np.empty((0, len(self.params)))

    def run(self) -> TrainingRun:
        """What `train` returns for the steps taken so far (as many rows as steps)."""
        fields = {
            name: np.array([getattr(s, name) for s in self._history]).reshape(self.steps, -1)
            for name in PER_LAYER
        }
        return TrainingRun(
            self.params, self.losses, **fields, diverged_at=self.diverged_at, norm=self.norm
        )


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


# scikit-learn keeps the digits in sklearn/datasets/data/digits.csv.gz: 1,797 rows of 64 pixels
# and the label. Importing scikit-learn to read them takes a second (a notebook's first cell, a
# Voila page's), reading the file a twentieth of that. The file's place is scikit-learn's own,
# not its API: it is read here only, checked for its shape and labels, and anything else
# (another place, another layout, no scikit-learn) goes through sklearn.datasets.load_digits.
# tests/networks/test_training.py holds the two equal, array for array.
DIGITS_ROWS, DIGITS_PIXELS = 1797, 64


def _digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits: pixels (1797, 64) as float64, labels (1797,) as int64."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("sklearn")  # where it is installed, without importing it
    except (ImportError, ValueError):  # a finder that refuses it, a module put there without one
        spec = None
    if spec is not None and spec.submodule_search_locations:
        path = Path(spec.submodule_search_locations[0]) / "datasets" / "data" / "digits.csv.gz"
        try:
            with gzip.open(path, mode="rt", encoding="utf-8") as file:
                data = np.loadtxt(file, delimiter=",")
        except (OSError, ValueError):
            data = None
        if data is not None and data.shape == (DIGITS_ROWS, DIGITS_PIXELS + 1):
            labels = data[:, -1]
            if np.array_equal(labels, np.round(labels)) and set(labels) == set(range(10)):
                return data[:, :-1].astype(np.float64), labels.astype(np.int64)
    return _digits_from_sklearn()


def _digits_from_sklearn() -> tuple[np.ndarray, np.ndarray]:
    """The same, through scikit-learn's API (the only import of scikit-learn)."""
    with extra("lab", "load_digits_split"):
        from sklearn.datasets import load_digits

    data = load_digits()
    return data.data.astype(np.float64), data.target.astype(np.int64)


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
    test_fraction = number("test_fraction", test_fraction, above=0)
    if not test_fraction < 1:
        raise ValueError(f"test_fraction must be a number in (0, 1), got {test_fraction!r}")
    seed, dtype = integer("seed", seed), float_dtype("dtype", dtype)
    x, labels = _digits()
    order = np.argsort(PCG32(seed).uniforms(len(x)), kind="stable")
    n_test = round(test_fraction * len(x))
    test, train_rows = order[:n_test], order[n_test:]
    mean, std = x[train_rows].mean(axis=0), x[train_rows].std(axis=0)
    x = (x - mean) / np.where(std > 0, std, 1.0)
    return Digits(
        x[train_rows].astype(dtype), labels[train_rows], x[test].astype(dtype), labels[test]
    )

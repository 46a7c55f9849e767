"""The MLP that trains on the digits: its forward pass, its loss, and its backprop by hand.

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

Each public function checks its arguments once and then runs the unchecked passes below it;
`backprop_unchecked` is the one a training step runs (`tinyinit.networks.training`), behind
the door of `train_step` or `Trainer`. The optimizers are in `tinyinit.networks.optimizers`,
the loop in `tinyinit.networks.training`, the data in `tinyinit.networks.digits`.

>>> from tinyinit import PCG32, kaiming_normal
>>> kaiming = lambda shape, rng: kaiming_normal(shape, "fan_in", "relu", rng)
>>> params = init_params([64, 32, 10], kaiming, PCG32(0))
>>> [(W.shape, b.shape) for W, b in params]
[((32, 64), (32,)), ((10, 32), (10,))]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from ..core.activations import Activation, as_activation
from ..core.arguments import (
    KindError,
    flag,
    float_dtype,
    function,
    generator,
    instance,
    integers,
    one_of,
    real_array,
    shown,
)
from ..core.pcg32 import PCG32
from .normalization import (
    NORMS,
    Norm,
    NormCache,
    batch_norm_eval_unchecked,
    init_norm,
    norm_backward_unchecked,
    norm_forward_unchecked,
)

__all__ = [
    "Evaluation",
    "Forward",
    "accuracy",
    "backward_layers",
    "check_batch",
    "check_params",
    "cross_entropy",
    "evaluate",
    "forward",
    "forward_layers",
    "init_params",
    "loss_and_gradients",
]

Params = list[tuple[np.ndarray, np.ndarray]]


# --- argument checks: say what was wrong, the value, and what is accepted -------------


def check_params(params, *, biases: bool = True, norm: Norm | str | None = None) -> Norm | None:
    """Refuse params unless it is a non-empty list of (W, b) layers whose shapes chain
    (b may be None where biases is False): the door of every function that takes a network.
    Then norm, if given: None, a kind of NORMS (fresh layers, gamma 1 and beta 0, after every
    hidden layer) or a Norm whose layers fit these; returned as the Norm they run with.

    >>> check_params([(np.ones((3, 4)), np.zeros(3)), (np.ones((2, 3)), np.zeros(2))])  # None
    >>> check_params([(np.ones((3, 4)), np.zeros(3)), (np.ones((2, 3)), np.zeros(2))],
    ...              norm="layer").gamma
    [array([1., 1., 1.])]
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
    return None if norm is None else _as_norm(norm, params)


def _check_x(params, x) -> np.ndarray:
    d_in = np.shape(params[0][0])[1]
    x = real_array("x", x, what=f"a (batch, {d_in}) array for this network", float64=False)
    if x.ndim != 2 or x.shape[1] != d_in:
        raise ValueError(f"x must have shape (batch, {d_in}) for this network, got {x.shape}")
    return x


def check_batch(params, x, labels, *, norm: Norm | str | None = None):
    """A network and a batch for it checked: (x, labels, norm), x and labels as arrays, norm
    as `check_params` returns it. The door of every function that runs a network on a batch.

    params and norm as `check_params` takes them; x must be (batch, d_in) real numbers;
    labels one integer per row, in 0 .. d_out - 1.

    >>> x, labels, norm = check_batch([(np.ones((2, 3)), np.zeros(2))], [[0, 1, 2]], [1])
    >>> x.shape, labels, norm
    ((1, 3), array([1]), None)
    >>> check_batch([(np.ones((2, 3)), np.zeros(2))], np.ones((1, 3)), [2])
    Traceback (most recent call last):
    ...
    ValueError: labels must be in 0 .. 1 (the logits), got 2
    """
    norm = check_params(params, norm=norm)
    x = _check_x(params, x)
    _check_labels(labels, len(x), np.shape(params[-1][0])[0])
    return x, np.asarray(labels), norm


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
    """The forward pass of `forward`, its activation and normalization given as objects and its
    biases optional: z_l = h_{l-1} W_l^T + b_l, h_l = phi(z_l).

    params: (W, b) pairs, b None for a layer without bias (tinyinit.networks.mup's);
    act: an Activation (or its name); norm: None or a Norm, applied to each hidden layer's
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
    return _forward_pass(params, x, act, norm, flag("training", training))


def _forward_pass(params, x, act: Activation, norm: Norm | None, training: bool) -> Forward:
    """The layers, one after the other, on arguments already checked."""
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
        z = batch_norm_eval_unchecked(a, gamma, beta, mean, var)
        return z.astype(a.dtype, copy=False), None
    z, cache = norm_forward_unchecked(norm.kind, a, gamma, beta)
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
    if through is not None:
        function("through", through)
    return _backward_pass(weights, h, dz, slopes, through)


def _backward_pass(weights, h, dz, slopes, through=None):
    """backward_layers on arguments already checked."""
    n_layers = len(weights)
    weight_grads, dzs = [None] * n_layers, [None] * n_layers
    for l in range(n_layers - 1, -1, -1):
        dzs[l], weight_grads[l] = dz, dz.T @ h[l]
        if l:
            dz = (dz @ weights[l]) * slopes[l - 1]
            if through is not None:
                dz = through(l - 1, dz)
    return weight_grads, dzs


def _real_arrays(name: str, arrays) -> list[np.ndarray]:
    instance(name, arrays, (list, tuple), "a list of arrays, one per layer")
    return [real_array(name, a, float64=False) for a in arrays]


def _backward_arguments(weights, h, dz, slopes):
    """backward_layers' arguments checked: lists of arrays that fit, a dz for the last layer."""
    weights, h = _real_arrays("weights", weights), _real_arrays("h", h)
    dz, slopes = real_array("dz", dz, ndim=2, float64=False), _real_arrays("slopes", slopes)
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
    norm, training = check_params(params, norm=norm), flag("training", training)
    return _forward_pass(params, _check_x(params, x), act, norm, training)


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
    return _cross_entropy(logits, np.asarray(labels))


def _cross_entropy(logits: np.ndarray, labels: np.ndarray) -> tuple[float, np.ndarray]:
    """cross_entropy on arguments already checked."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    rows = np.arange(len(labels))
    loss = -log_probs[rows, labels].mean()
    dz = np.exp(log_probs)
    dz[rows, labels] -= 1
    return float(loss), dz / len(labels)


def backprop_unchecked(params: Params, x, labels, act: Activation, norm: Norm | None = None):
    """Loss, grads, the forward pass and phi'(z_l) of every hidden layer, on arguments a door
    has checked (`loss_and_gradients`, `tinyinit.networks.training.train_step`, `Trainer`): the
    training step runs it as it is, once a step.

    grads: (dW, db) per layer, then with norm (dgamma, dbeta) per hidden layer; the forward
    pass is training's (BatchNorm on the batch's statistics).
    """
    fwd = _forward_pass(params, x, act, norm, True)
    loss, dz = _cross_entropy(fwd.logits, labels)
    # phi' of a float32 z may come back float64 (a Python constant, gelu's erf).
    dphis = [act.dphi(z).astype(dz.dtype, copy=False) for z in fwd.z]
    norm_grads = [None] * len(fwd.norms)

    def through_norm(l, dz_l):
        da_l, dgamma, dbeta = norm_backward_unchecked(norm.kind, dz_l, norm.gamma[l], fwd.norms[l])
        norm_grads[l] = (dgamma, dbeta)
        return da_l

    weights = [W for W, _ in params]
    through = None if norm is None else through_norm
    weight_grads, dzs = _backward_pass(weights, fwd.h, dz, dphis, through)
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
    x, labels, norm = check_batch(params, x, labels, norm=norm)
    loss, grads, _, _ = backprop_unchecked(params, x, labels, act, norm)
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
    return _evaluate(*_evaluation_arguments(params, x, labels, activation, norm)).accuracy


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
    return _evaluate(*_evaluation_arguments(params, x, labels, activation, norm))


def _evaluation_arguments(params, x, labels, activation, norm):
    act = _activation(activation)
    x, labels, norm = check_batch(params, x, labels, norm=norm)
    return params, x, labels, act, norm


def _evaluate(params, x, labels, act: Activation, norm: Norm | None) -> Evaluation:
    fwd = _forward_pass(params, x, act, norm, False)
    loss, _ = _cross_entropy(fwd.logits, labels)
    return Evaluation(loss, float(np.mean(fwd.logits.argmax(axis=1) == labels)), fwd)

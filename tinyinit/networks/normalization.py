"""BatchNorm and LayerNorm: a layer's pre-activations standardized, then scaled and shifted.

For pre-activations z of shape (B, n), a batch of B examples of n units, both compute

    mu = mean of z,    var = mean of (z - mu)**2,    z_hat = (z - mu) / sqrt(var + eps),
    y = gamma * z_hat + beta                             (gamma, beta of shape (n,))

and differ only in what the mean is taken over:

    BatchNorm (Ioffe & Szegedy, 2015)   over the batch, axis 0: each unit standardized across
                                        the examples; in evaluation, the running averages
                                        of mu and var recorded in training replace them
    LayerNorm (Ba, Kiros & Hinton, 2016) over the units, axis 1: each example standardized
                                        on its own; the same in training and evaluation

Either way the next layer reads z_hat of mean square 1 (times gamma**2, 1 at the start),
whatever the scale of the weights that made z: y is unchanged when z is multiplied by any
c > 0 (up to eps). That is why a normalized network stops caring about its init's scale.

Backprop through the standardization, over the N = z.shape[axis] entries it averages
(derived in notebook 13; `tests/networks/test_normalization.py` checks it against finite
differences and torch's autograd):

    dz_hat = gamma * dy
    dz     = (dz_hat - mean(dz_hat) - z_hat * mean(dz_hat * z_hat)) / sqrt(var + eps)
    dgamma = sum over the batch of dy * z_hat,    dbeta = sum over the batch of dy

`Norm` holds a network's normalization layers, one per hidden layer: their gamma, beta
and, for BatchNorm, the running statistics (torch's defaults: eps 1e-5, momentum 0.1,
the running variance unbiased). `tinyinit.networks.mlp` puts one after the affine map of every
hidden layer, before the activation: `train(..., norm="batch")`.

>>> z = np.array([[1.0, 10.0], [3.0, 30.0]])
>>> y, cache = norm_forward("batch", z, np.ones(2), np.zeros(2))
>>> y.round(4)
array([[-1., -1.],
       [ 1.,  1.]])
>>> norm_forward("layer", z, np.ones(2), np.zeros(2))[0].round(4)
array([[-1.,  1.],
       [-1.,  1.]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ..core.arguments import (
    float_dtype,
    instance,
    integer,
    integers,
    number,
    one_of,
    real_array,
    shown,
)

__all__ = [
    "EPS",
    "MOMENTUM",
    "NORMS",
    "Norm",
    "NormCache",
    "batch_norm_eval",
    "init_norm",
    "norm_backward",
    "norm_forward",
    "running_statistics",
    "standardize",
]

NORMS = ("none", "batch", "layer")
AXIS = {"batch": 0, "layer": 1}  # what each one averages over, for z of shape (B, n)
EPS = 1e-5  # torch's default, for both
MOMENTUM = 0.1  # torch's BatchNorm: running = (1 - momentum) * running + momentum * batch's


class NormCache(NamedTuple):
    """What a normalization's forward pass leaves for its backward pass and its running statistics.

    z_hat (B, n) the standardized input; std = sqrt(var + eps), mean and var: the statistics
    used, shaped to broadcast against z ((1, n) for BatchNorm, (B, 1) for LayerNorm).

    >>> NormCache(np.zeros((2, 3)), np.ones((1, 3)), np.zeros((1, 3)), np.ones((1, 3))).std.shape
    (1, 3)
    """

    z_hat: np.ndarray
    std: np.ndarray
    mean: np.ndarray
    var: np.ndarray


def standardize(x: np.ndarray, axis: int, eps: float = EPS) -> np.ndarray:
    """(x - mean) / sqrt(var + eps), the mean and (biased) variance taken along axis.

    The formula of both normalizations, and of `tinyinit.physics.residual.normalize`.

    >>> standardize(np.array([[1.0, 3.0]]), axis=1)
    array([[-0.999995,  0.999995]])
    """
    x = real_array("x", x, float64=False)
    if x.ndim == 0:
        raise ValueError(f"x must be a real array of 1 or more dimensions, got {shown(x)}")
    axis = integer("axis of x", axis, minimum=-x.ndim, maximum=x.ndim - 1)
    return _statistics(x, axis, number("eps", eps, above=0)).z_hat


def _statistics(z: np.ndarray, axis: int, eps: float) -> NormCache:
    mean = z.mean(axis=axis, keepdims=True)
    centered = z - mean
    var = (centered**2).mean(axis=axis, keepdims=True)
    std = np.sqrt(var + eps)
    return NormCache(centered / std, std, mean, var)


def _units(name: str, value, n: int, of: str = "z") -> np.ndarray:
    """value as a real array of shape (n,): one number per unit (column) of the array `of`."""
    accepted = f"a real array of shape ({n},), one per unit of {of}"
    array = real_array(name, value, what=accepted, float64=False)
    if array.shape != (n,):
        raise ValueError(f"{name} must be {accepted}, got shape {array.shape}")
    return array


def _batch(name: str, value) -> np.ndarray:
    return real_array(
        name, value, ndim=2, what="a real array of shape (batch, units)", float64=False
    )


def norm_forward(
    norm: str, z: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = EPS
) -> tuple[np.ndarray, NormCache]:
    """y = gamma * z_hat + beta, z_hat standardized over the batch ("batch") or the units ("layer").

    z: (B, n); gamma, beta: (n,). BatchNorm here uses the batch's own statistics (training);
    `batch_norm_eval` uses the running ones. Returns y (B, n) and the cache for
    `norm_backward` and `running_statistics`.

    >>> y, cache = norm_forward("layer", np.array([[0.0, 2.0, 4.0]]), np.full(3, 2.0), np.ones(3))
    >>> y.round(4), cache.var
    (array([[-1.4495,  1.    ,  3.4495]]), array([[2.66666667]]))
    """
    one_of("norm", norm, AXIS)
    z = _batch("z", z)
    gamma, beta = _units("gamma", gamma, z.shape[1]), _units("beta", beta, z.shape[1])
    if norm == "batch" and len(z) < 2:
        raise ValueError(
            f"BatchNorm in training needs a batch of at least 2 examples (a batch of one has no "
            f"variance to divide by), got batch size {len(z)}"
        )
    return norm_forward_unchecked(norm, z, gamma, beta, number("eps", eps, above=0))


def norm_forward_unchecked(norm: str, z, gamma, beta, eps: float = EPS):
    """norm_forward on arguments a door has checked: what a network's layers run, each step."""
    cache = _statistics(z, AXIS[norm], eps)
    return gamma * cache.z_hat + beta, cache


def norm_backward(
    norm: str, dy: np.ndarray, gamma: np.ndarray, cache: NormCache
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The gradients (dz, dgamma, dbeta) from dy = dloss/dy, for the forward pass that left cache.

    dz = (dz_hat - mean(dz_hat) - z_hat * mean(dz_hat * z_hat)) / std with dz_hat = gamma * dy,
    the means over the axis the forward pass averaged; dgamma, dbeta sum over the batch.

    >>> y, cache = norm_forward("batch", np.array([[0.0], [1.0], [5.0]]), np.ones(1), np.zeros(1))
    >>> dy = np.array([[1.0], [0.0], [0.0]])
    >>> dz, dgamma, dbeta = norm_backward("batch", dy, np.ones(1), cache)
    >>> dz.ravel().round(4), dz.sum().round(12), dgamma.round(4), dbeta
    (array([ 0.1763, -0.2204,  0.0441]), np.float64(0.0), array([-0.9258]), array([1.]))
    """
    one_of("norm", norm, AXIS)
    z_hat = instance("cache", cache, NormCache, "the NormCache of norm_forward").z_hat
    dy = _batch("dy", dy)
    if dy.shape != np.shape(z_hat):
        raise ValueError(f"dy must have the forward pass's shape {np.shape(z_hat)}, "
                         f"got shape {dy.shape}")  # fmt: skip
    gamma = _units("gamma", gamma, dy.shape[1], of="dy")
    return norm_backward_unchecked(norm, dy, gamma, cache)


def norm_backward_unchecked(norm: str, dy, gamma, cache: NormCache):
    """norm_backward on arguments a door has checked: what a network's backprop runs, each step."""
    axis, z_hat = AXIS[norm], cache.z_hat
    dz_hat = gamma * dy
    dz = (
        dz_hat
        - dz_hat.mean(axis=axis, keepdims=True)
        - z_hat * (dz_hat * z_hat).mean(axis=axis, keepdims=True)
    ) / cache.std
    return dz, (dy * z_hat).sum(axis=0), dy.sum(axis=0)


def batch_norm_eval(
    z: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    running_mean: np.ndarray,
    running_var: np.ndarray,
    eps: float = EPS,
) -> np.ndarray:
    """BatchNorm in evaluation: gamma * (z - running_mean) / sqrt(running_var + eps) + beta.

    Every example is normalized by the statistics recorded in training, so its output does
    not depend on the other examples of its batch (torch's `model.eval()`).

    >>> batch_norm_eval(np.array([[3.0]]), np.ones(1), np.zeros(1), np.ones(1), np.full(1, 4.0))
    array([[0.99999875]])
    """
    z = _batch("z", z)
    gamma, beta = _units("gamma", gamma, z.shape[1]), _units("beta", beta, z.shape[1])
    running_mean = _units("running_mean", running_mean, z.shape[1])
    running_var = _units("running_var", running_var, z.shape[1])
    if not (running_var >= 0).all():
        raise ValueError(f"running_var must be variances (>= 0), got {running_var}")
    eps = number("eps", eps, above=0)
    return batch_norm_eval_unchecked(z, gamma, beta, running_mean, running_var, eps)


def batch_norm_eval_unchecked(z, gamma, beta, running_mean, running_var, eps: float = EPS):
    """batch_norm_eval on arguments a door has checked: what a network's layers run."""
    return gamma * (z - running_mean) / np.sqrt(running_var + eps) + beta


def running_statistics(
    running_mean: np.ndarray,
    running_var: np.ndarray,
    cache: NormCache,
    momentum: float = MOMENTUM,
) -> tuple[np.ndarray, np.ndarray]:
    """BatchNorm's running mean and variance after one training batch, as torch updates them.

    running = (1 - momentum) * running + momentum * batch's, the batch's variance unbiased
    (times B / (B - 1)) where the normalization itself used the biased one.

    >>> y, cache = norm_forward("batch", np.array([[1.0], [3.0]]), np.ones(1), np.zeros(1))
    >>> running_statistics(np.zeros(1), np.ones(1), cache)
    (array([0.2]), array([1.1]))
    """
    instance("cache", cache, NormCache, "the NormCache of norm_forward")
    batch, n = np.shape(cache.z_hat)
    if batch < 2:
        raise ValueError(f"cache must be a BatchNorm's of a batch of 2 or more, got {batch}")
    running_mean = _units("running_mean", running_mean, n, of="the cache's batch")
    running_var = _units("running_var", running_var, n, of="the cache's batch")
    momentum = number("momentum", momentum, minimum=0, maximum=1)
    return running_statistics_unchecked(running_mean, running_var, cache, momentum)


def running_statistics_unchecked(running_mean, running_var, cache: NormCache, momentum=MOMENTUM):
    """running_statistics on arguments a door has checked: what a training step runs."""
    batch = len(cache.z_hat)
    mean, var = cache.mean.reshape(-1), cache.var.reshape(-1) * (batch / (batch - 1))
    return (
        (1 - momentum) * running_mean + momentum * mean,
        (1 - momentum) * running_var + momentum * var,
    )


class Norm(NamedTuple):
    """A network's normalization layers, one per hidden layer l = 1 .. L-1 (lists of (n_l,)).

    kind: "batch" or "layer"; gamma, beta: learned, 1 and 0 at the start; running_mean,
    running_var: BatchNorm's statistics for evaluation, 0 and 1 at the start (empty lists for
    LayerNorm, which has none).

    >>> norm = init_norm("batch", [3, 2])
    >>> [g.shape for g in norm.gamma], norm.running_var[1]
    ([(3,), (2,)], array([1., 1.]))
    """

    kind: str
    gamma: list[np.ndarray]
    beta: list[np.ndarray]
    running_mean: list[np.ndarray]
    running_var: list[np.ndarray]


def init_norm(norm: str, widths: Sequence[int], dtype=np.float64) -> Norm | None:
    """Fresh normalization layers for hidden layers of the given widths; None for norm "none".

    gamma = 1, beta = 0 (a pure standardization at the start, as torch's); BatchNorm's running
    mean 0 and variance 1.

    >>> init_norm("none", [4]) is None, init_norm("layer", [4]).running_mean
    (True, [])
    """
    one_of("norm", norm, NORMS)
    if norm == "none":
        return None
    widths, dtype = integers("widths", widths, minimum=1), float_dtype("dtype", dtype)
    gamma = [np.ones(n, dtype) for n in widths]
    beta = [np.zeros(n, dtype) for n in widths]
    if norm == "layer":
        return Norm(norm, gamma, beta, [], [])
    running = [np.zeros(n, dtype) for n in widths], [np.ones(n, dtype) for n in widths]
    return Norm(norm, gamma, beta, *running)

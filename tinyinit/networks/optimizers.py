"""The optimizers, one formula each and one learning rate per array: SGD and Adam.

Both are pure: new arrays out, the arguments untouched. The digits MLP's training step
(`tinyinit.networks.training`) and muP's networks (`tinyinit.networks.mup`) take the same
steps. `sgd_step` and `adam_step` check their arguments at the door; a training step, whose
door has checked the network already, runs `sgd_step_unchecked` and `adam_step_unchecked`.

>>> sgd_step([np.ones(2)], [np.array([1.0, -2.0])], [0.5])
[array([0.5, 2. ])]
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core.arguments import instance, number, real_array

__all__ = ["AdamState", "adam_init", "adam_step", "sgd_step"]

OPTIMIZERS = ("sgd", "adam")
# A learning rate that trains notebook 04's network with each optimizer (notebook 11's).
LEARNING_RATES = {"sgd": 0.02, "adam": 1e-3}


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


def sgd_step(
    weights: list[np.ndarray], grads: list[np.ndarray], lrs: list[float]
) -> list[np.ndarray]:
    """W <- W - lr * dL/dW, array by array (new arrays; the arguments are untouched).

    >>> sgd_step([np.ones(2)], [np.array([1.0, -2.0])], [0.5])
    [array([0.5, 2. ])]
    """
    weights = _arrays("weights", weights)
    grads, lrs = _arrays("grads", grads, like=weights), _lrs(lrs, len(weights))
    return sgd_step_unchecked(weights, grads, lrs)


def sgd_step_unchecked(weights, grads, lrs) -> list[np.ndarray]:
    """sgd_step on arguments a door has checked: the formula itself."""
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
    return adam_step_unchecked(weights, grads, state, lrs, beta1, beta2, eps)


def adam_step_unchecked(
    weights, grads, state: AdamState, lrs, beta1=0.9, beta2=0.999, eps=1e-8
) -> tuple[list[np.ndarray], AdamState]:
    """adam_step on arguments a door has checked: the formula itself."""
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

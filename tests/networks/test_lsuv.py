"""LSUV: orthonormal start, then every layer's output brought to unit variance on the batch,
within its tolerance, in the passes it says it made."""

from __future__ import annotations

import numpy as np
import pytest

from tinyinit import PCG32, kaiming_normal, orthogonal_init
from tinyinit.networks.digits import load_digits_split
from tinyinit.networks.lsuv import lsuv, lsuv_init
from tinyinit.networks.mlp import forward, init_params

X = load_digits_split().x_train[:128]
SIZES = [64] + [64] * 12 + [10]


@pytest.mark.parametrize("activation", ["relu", "tanh", "gelu", "silu"])
def test_every_layer_leaves_with_unit_variance_on_the_batch(activation):
    result = lsuv_init(SIZES, X, activation, PCG32(0))
    fwd = forward(result.params, X, activation)
    outputs = [*fwd.z, fwd.logits]
    variances = np.array([np.var(z) for z in outputs])
    np.testing.assert_allclose(variances, result.variances, rtol=1e-12)
    assert np.all(np.abs(variances - 1) <= 0.1)
    # z is linear in W with zero biases: one rescaling lands on 1, up to rounding
    np.testing.assert_allclose(variances, 1, rtol=1e-9)
    assert list(result.passes) == [2] * len(SIZES[1:])


def test_the_start_is_orthonormal_and_only_rescaled():
    result = lsuv_init(SIZES, X, "tanh", PCG32(3))
    rng = PCG32(3)
    for (W, b), scale in zip(result.params, result.scales):
        Q = orthogonal_init(W.shape, 1.0, rng)
        np.testing.assert_allclose(W, scale * Q, rtol=1e-12)
        assert not b.any()


def test_a_layer_already_within_tolerance_is_left_alone_after_one_pass():
    first = lsuv_init(SIZES, X, "relu", PCG32(0))
    again = lsuv(first.params, X, "relu")
    assert list(again.passes) == [1] * len(SIZES[1:])
    np.testing.assert_array_equal(again.scales, 1.0)


def test_tolerance_and_passes_bound_the_iteration():
    params = init_params(
        [64, 32, 10], lambda s, r: 5 * kaiming_normal(s, "fan_in", "relu", r), PCG32(0)
    )
    # biases that differ between units: Var(z) is no longer proportional to the scale of W
    params = [(W, np.linspace(-0.5, 0.5, len(b))) for W, b in params]
    loose = lsuv(params, X, "relu", tol=0.5)
    assert np.all(np.abs(loose.variances - 1) <= 0.5)
    capped = lsuv(params, X, "relu", tol=1e-12, max_passes=2)
    assert list(capped.passes) == [2, 2] and np.all(np.abs(capped.variances - 1) > 1e-12)
    tight = lsuv(params, X, "relu", tol=1e-6, max_passes=50)
    assert np.all(np.abs(tight.variances - 1) <= 1e-6) and tight.passes.max() > 2


def test_the_params_given_are_not_modified_and_a_zero_layer_stays_zero():
    params = init_params([64, 8, 10], lambda s, r: np.zeros(s), PCG32(0))
    result = lsuv(params, X, "relu")
    assert not params[0][0].any() and not result.params[0][0].any()
    assert result.variances[0] == 0 and result.passes[0] == 1  # nothing a rescaling can fix


def test_the_scales_depend_on_the_batch():
    digits = load_digits_split()
    zeros = digits.x_train[digits.labels_train == 0][:64]
    mixed = lsuv_init(SIZES, digits.x_train[:64], "relu", PCG32(0))
    one_class = lsuv_init(SIZES, zeros, "relu", PCG32(0))
    assert not np.allclose(mixed.scales, one_class.scales, rtol=0.05)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"tol": 0}, "tol must be a finite real number > 0, got 0"),
        ({"max_passes": 0}, "max_passes must be an integer >= 1, got 0"),
        ({"x": np.ones((4, 3))}, r"x must be a batch of shape \(batch >= 2, 64\)"),
        ({"x": np.ones((1, 64))}, r"got shape \(1, 64\)"),
    ],
)
def test_bad_arguments_say_what_is_accepted(kwargs, message):
    params = init_params([64, 8, 10], lambda s, r: orthogonal_init(s, 1.0, r), PCG32(0))
    x = kwargs.pop("x", X)
    with pytest.raises(ValueError, match=message):
        lsuv(params, x, "relu", **kwargs)

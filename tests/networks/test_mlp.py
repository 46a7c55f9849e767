"""The digits MLP of tinyinit.networks.mlp: its handwritten backprop against torch autograd and
finite differences, its forward pass, its evaluation and its bad inputs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scripts_loader import FIXTURES
from small_networks import random_mlp, relu_mlp

from tinyinit import PCG32, xavier_normal
from tinyinit.core.activations import ACTIVATIONS
from tinyinit.networks.digits import load_digits_split
from tinyinit.networks.mlp import (
    accuracy,
    cross_entropy,
    evaluate,
    forward,
    init_params,
    loss_and_gradients,
)
from tinyinit.networks.training import train

GOLDEN = json.loads((FIXTURES / "training_torch.json").read_text(encoding="utf-8"))


def _params(case):
    return [(np.array(W), np.array(b)) for W, b in case["params"]]


# --- backprop -------------------------------------------------------------------------


def test_golden_file_covers_every_activation():
    assert {c["activation"] for c in GOLDEN["cases"]} == set(ACTIVATIONS)


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda c: f"{c['network']}-{c['activation']}")
def test_loss_and_gradients_match_torch_autograd_to_1e_8_relative(case):
    loss, grads = loss_and_gradients(
        _params(case), np.array(case["x"]), np.array(case["labels"]), case["activation"]
    )
    np.testing.assert_allclose(loss, case["loss"], rtol=1e-8, atol=0)
    for (dW, db), (tW, tb) in zip(grads, case["grads"], strict=True):
        # rtol against each array's largest entry: an entry near 0 has no meaningful relative error
        for mine, theirs in ((dW, np.array(tW)), (db, np.array(tb))):
            assert mine.shape == theirs.shape
            np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-8 * np.abs(theirs).max())


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_gradients_match_central_finite_differences(activation):
    params, x, labels = random_mlp([4, 5, 5, 3], seed=7)
    _, grads = loss_and_gradients(params, x, labels, activation)
    h = 1e-6
    for l, (W, b) in enumerate(params):
        for array, grad in ((W, grads[l][0]), (b, grads[l][1])):
            numeric = np.empty_like(array)
            for idx in np.ndindex(array.shape):
                saved = array[idx]
                array[idx] = saved + h
                up = loss_and_gradients(params, x, labels, activation)[0]
                array[idx] = saved - h
                down = loss_and_gradients(params, x, labels, activation)[0]
                array[idx] = saved
                numeric[idx] = (up - down) / (2 * h)
            np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_float32_params_give_float32_gradients_close_to_float64():
    for activation in ACTIVATIONS:
        params, x, labels = random_mlp([6, 8, 8, 4], seed=3)
        params32 = [(W.astype(np.float32), b.astype(np.float32)) for W, b in params]
        loss64, grads64 = loss_and_gradients(params, x, labels, activation)
        loss32, grads32 = loss_and_gradients(params32, x.astype(np.float32), labels, activation)
        assert abs(loss32 - loss64) < 1e-5 * abs(loss64)
        for (dW32, db32), (dW64, db64) in zip(grads32, grads64):
            assert dW32.dtype == db32.dtype == np.float32, activation
            np.testing.assert_allclose(dW32, dW64, atol=1e-5 * np.abs(dW64).max())
            np.testing.assert_allclose(db32, db64, atol=1e-5 * np.abs(db64).max())


def test_cross_entropy_is_finite_for_huge_logits():
    loss, dz = cross_entropy(np.array([[1e300, -1e300, 0.0]]), np.array([1]))
    assert np.isfinite(loss) and loss > 1e299
    np.testing.assert_array_equal(dz, [[1.0, -1.0, 0.0]])


def test_forward_returns_every_layer_input_and_pre_activation():
    params = relu_mlp([4, 6, 5, 3])
    x = np.arange(8.0).reshape(2, 4)
    out = forward(params, x, "relu")
    assert [z.shape for z in out.z] == [(2, 6), (2, 5)]
    assert [h.shape for h in out.h] == [(2, 4), (2, 6), (2, 5)]
    assert out.h[0] is x
    np.testing.assert_array_equal(out.h[2], np.maximum(out.z[1], 0))
    np.testing.assert_array_equal(out.logits, out.h[2] @ params[2][0].T + params[2][1])


# --- bad input ------------------------------------------------------------------------

GOOD = relu_mlp([4, 3, 2])
X, Y = np.ones((5, 4)), np.array([0, 1, 1, 0, 1])


@pytest.mark.parametrize(
    "params, x, labels, activation, message",
    [
        ([], X, Y, "relu", "params must be a non-empty list"),
        ([GOOD[0], GOOD[0]], X, Y, "relu", "takes 4 inputs, but layer 0 has 3 outputs"),
        ([(np.ones((3, 4)), np.ones(4)), GOOD[1]], X, Y, "relu", "b of shape (4,)"),
        ([(np.ones(4), np.ones(4))], X, Y, "relu", "W of shape (4,)"),
        ([np.ones((3, 4))], X, Y, "relu", "params[0] must be a pair (W, b)"),
        (GOOD, np.ones((5, 3)), Y, "relu", "x must have shape (batch, 4)"),
        (GOOD, np.ones(4), Y, "relu", "x must have shape (batch, 4)"),
        (
            GOOD,
            X,
            np.array([0, 1, 2, 0, 1]),
            "relu",
            "labels must be in 0 .. 1 (the logits), got 2",
        ),
        (GOOD, X, np.array([0, 1, -1, 0, 1]), "relu", "got -1"),
        (GOOD, X, Y[:4], "relu", "labels must have shape (5,), one per row of x, got (4,)"),
        (GOOD, X, Y.astype(float), "relu", "labels must be integers, got dtype float64"),
        (GOOD, X, Y, "swish", "activation must be one of linear, relu"),
        (
            GOOD,
            X,
            Y,
            None,
            "activation must be one of linear, relu, leaky_relu, tanh, sigmoid, selu, gelu, silu, "
            "or a callable, got None",
        ),
    ],
)
def test_bad_input_to_loss_and_gradients_names_argument_value_and_what_is_accepted(
    params, x, labels, activation, message
):
    with pytest.raises(ValueError) as info:
        loss_and_gradients(params, x, labels, activation)
    assert message in str(info.value)
    with pytest.raises(ValueError, match=r"\w"):
        train(params, x, labels, activation, lr=0.1, steps=1, batch_size=2)


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match=r"sizes must list at least \[d_in, d_out\], got \[4\]"):
        init_params([4], lambda s, r: np.zeros(s), PCG32(0))
    with pytest.raises(
        ValueError, match=r"sizes must be a sequence of integers >= 1, got \[4, 0, 2\]"
    ):
        init_params([4, 0, 2], lambda s, r: np.zeros(s), PCG32(0))
    with pytest.raises(ValueError, match=r"init_weight returned shape \(2,\)"):
        init_params([4, 2], lambda s, r: np.zeros(s[0]), PCG32(0))


def test_initializers_compose_with_init_params():
    params = init_params([8, 4, 2], lambda s, r: xavier_normal(s, 1.0, r), PCG32(0))
    np.testing.assert_array_equal(params[0][0], xavier_normal((4, 8), 1.0, PCG32(0)))
    assert params[0][0].dtype == np.float64 and not params[1][1].any()


def test_evaluate_is_the_loss_and_accuracy_of_one_forward_pass():
    digits = load_digits_split()
    params = relu_mlp([64, 32, 10])
    result = evaluate(params, digits.x_test, digits.labels_test, "relu")
    fwd = forward(params, digits.x_test, "relu")
    assert result.loss == cross_entropy(fwd.logits, digits.labels_test)[0]
    assert result.accuracy == accuracy(params, digits.x_test, digits.labels_test, "relu")
    np.testing.assert_array_equal(result.forward.h[-1], fwd.h[-1])
    with pytest.raises(ValueError, match="labels must have shape"):
        evaluate(params, digits.x_test, digits.labels_test[:3], "relu")

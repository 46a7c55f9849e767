"""BatchNorm and LayerNorm: the forward pass's definition, the handwritten backward pass against
central finite differences and torch's autograd, the running statistics and evaluation as torch
keeps them, and the digits MLP trained with either one."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scripts_loader import FIXTURES

from tinyinit import PCG32, kaiming_normal
from tinyinit.networks.digits import load_digits_split
from tinyinit.networks.mlp import accuracy, forward, init_params, loss_and_gradients
from tinyinit.networks.normalization import (
    EPS,
    Norm,
    batch_norm_eval,
    init_norm,
    norm_backward,
    norm_forward,
    running_statistics,
    standardize,
)
from tinyinit.networks.training import minibatch_indices, start_training, train, train_step
from tinyinit.physics.residual import normalize

GOLDEN = json.loads((FIXTURES / "training_torch.json").read_text(encoding="utf-8"))
KINDS = ("batch", "layer")


def _layer(seed, shape=(6, 5)):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=shape) * 3 + rng.normal(size=shape[1])  # off-centre, not unit-sized
    return z, 1 + 0.3 * rng.normal(size=shape[1]), 0.2 * rng.normal(size=shape[1])


# --- the forward pass -----------------------------------------------------------------------


@pytest.mark.parametrize("kind, axis", [("batch", 0), ("layer", 1)])
def test_forward_standardizes_over_its_axis_then_scales_and_shifts(kind, axis):
    z, gamma, beta = _layer(0)
    y, cache = norm_forward(kind, z, gamma, beta)
    mean, var = z.mean(axis=axis, keepdims=True), z.var(axis=axis, keepdims=True)
    np.testing.assert_allclose(cache.z_hat, (z - mean) / np.sqrt(var + EPS), rtol=1e-13)
    np.testing.assert_allclose(y, gamma * cache.z_hat + beta, rtol=1e-13)
    np.testing.assert_allclose(cache.z_hat.mean(axis=axis), 0, atol=1e-13)
    np.testing.assert_allclose((cache.z_hat**2).mean(axis=axis), var.ravel() / (var.ravel() + EPS))


@pytest.mark.parametrize("kind", KINDS)
def test_the_output_does_not_depend_on_the_scale_of_the_input(kind):
    z, gamma, beta = _layer(1)
    y = norm_forward(kind, z, gamma, beta)[0]
    for c in (0.3, 7.0, 1e6):  # up to eps: var + eps moves when var is near eps = 1e-5
        np.testing.assert_allclose(norm_forward(kind, c * z, gamma, beta)[0], y, atol=1e-3)


def test_layer_norm_is_the_residual_streams_normalize_bit_for_bit():
    z, _, _ = _layer(2, (4, 9))
    assert np.array_equal(standardize(z, axis=-1), normalize(z))
    y, cache = norm_forward("layer", z, np.ones(9), np.zeros(9))
    assert np.array_equal(cache.z_hat, normalize(z))


def test_batch_norm_refuses_a_batch_of_one_and_bad_arguments():
    with pytest.raises(ValueError, match="at least 2 examples .* got batch size 1"):
        norm_forward("batch", np.ones((1, 3)), np.ones(3), np.zeros(3))
    with pytest.raises(ValueError, match=r"norm must be one of batch, layer, got 'group'"):
        norm_forward("group", np.ones((2, 3)), np.ones(3), np.zeros(3))
    with pytest.raises(
        ValueError,
        match=r"z must be a real array of shape \(batch, units\), got an array of shape \(3,\)",
    ):
        norm_forward("layer", np.ones(3), np.ones(3), np.zeros(3))
    with pytest.raises(ValueError, match="eps must be a finite real number > 0, got 0"):
        norm_forward("layer", np.ones((2, 3)), np.ones(3), np.zeros(3), eps=0)
    with pytest.raises(ValueError, match="norm must be one of none, batch, layer, got 'bn'"):
        init_norm("bn", [3])
    # one sample of a LayerNorm is fine: it normalizes each example on its own
    assert norm_forward("layer", np.array([[1.0, 2.0, 3.0]]), np.ones(3), np.zeros(3))[0].shape


# --- the backward pass ----------------------------------------------------------------------


def _numeric_gradient(f, array, step=1e-6):
    grad = np.empty_like(array)
    for idx in np.ndindex(array.shape):
        saved = array[idx]
        array[idx] = saved + step
        up = f()
        array[idx] = saved - step
        down = f()
        array[idx] = saved
        grad[idx] = (up - down) / (2 * step)
    return grad


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [3, 4])
def test_backward_matches_central_finite_differences(kind, seed):
    z, gamma, beta = _layer(seed)
    dy = np.random.default_rng(seed + 10).normal(size=z.shape)

    def loss():  # a scalar whose gradient with respect to y is dy
        return float(np.sum(dy * norm_forward(kind, z, gamma, beta)[0]))

    dz, dgamma, dbeta = norm_backward(kind, dy, gamma, norm_forward(kind, z, gamma, beta)[1])
    for mine, array in ((dz, z), (dgamma, gamma), (dbeta, beta)):
        np.testing.assert_allclose(mine, _numeric_gradient(loss, array), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kind, axis", [("batch", 0), ("layer", 1)])
def test_the_input_gradient_sums_to_zero_and_is_orthogonal_to_z_hat(kind, axis):
    # y does not move when z shifts, and barely when it scales (only through eps): two
    # directions the gradient never takes
    z, gamma, beta = _layer(5)
    _, cache = norm_forward(kind, z, gamma, beta)
    dz = norm_backward(kind, np.random.default_rng(0).normal(size=z.shape), gamma, cache)[0]
    np.testing.assert_allclose(dz.sum(axis=axis), 0, atol=1e-12)
    along_scale = (dz * cache.z_hat).sum(axis=axis)
    assert np.abs(along_scale).max() < 1e3 * EPS * np.abs(dz).max()


# --- against torch --------------------------------------------------------------------------


def _close(mine, theirs, rtol=1e-8, scale=None):
    """Equal to rtol of scale (the array's largest entry unless given)."""
    theirs = np.array(theirs)
    assert np.shape(mine) == theirs.shape
    scale = np.abs(theirs).max() if scale is None else scale
    np.testing.assert_allclose(mine, theirs, rtol=0, atol=rtol * scale)


def _golden_net(case):
    params = [(np.array(W), np.array(b)) for W, b in case["params"]]
    gamma, beta = ([np.array(a[i]) for a in case["affine"]] for i in (0, 1))
    running = [[], []]
    if case["norm"] == "batch":
        running = [[np.zeros(len(g)) for g in gamma], [np.ones(len(g)) for g in gamma]]
    return params, Norm(case["norm"], gamma, beta, *running)


def test_golden_file_covers_both_normalizations():
    assert {c["norm"] for c in GOLDEN["norm_cases"]} == set(KINDS)


@pytest.mark.parametrize(
    "case",
    GOLDEN["norm_cases"],
    ids=lambda c: f"{c['network']}-{c['activation']}-{c['norm']}",
)
def test_a_normalized_mlp_matches_torch_autograd_running_statistics_and_eval(case):
    params, norm = _golden_net(case)
    x, labels = np.array(case["x"]), np.array(case["labels"])
    loss, grads = loss_and_gradients(params, x, labels, case["activation"], norm=norm)
    np.testing.assert_allclose(loss, case["loss"], rtol=1e-9)
    n_layers = len(params)
    # A bias before BatchNorm has gradient 0 exactly (the normalization subtracts the batch
    # mean), which both sides round to about 1e-17: compare on the scale of the weights' ones.
    scale = max(np.abs(np.array(tW)).max() for tW, _ in case["grads"])
    for (dW, db), (tW, tb) in zip(grads[:n_layers], case["grads"], strict=True):
        _close(dW, tW)
        _close(db, tb, scale=scale)
    for (dgamma, dbeta), (tg, tb) in zip(grads[n_layers:], case["affine_grads"], strict=True):
        _close(dgamma, tg)
        _close(dbeta, tb)
    # one step of SGD records the running statistics of that forward pass, as torch's does
    state = start_training(params, norm=norm)
    state, _ = train_step(state, x, labels, case["activation"], lr=1e-300)
    if case["norm"] == "batch":
        for mean, var, (tm, tv) in zip(*state.norm[3:], case["running"], strict=True):
            _close(mean, tm, 1e-12)
            _close(var, tv, 1e-12)
    # evaluation: the statistics just recorded (the tiny step left the weights as they were)
    evaluated = Norm(norm.kind, norm.gamma, norm.beta, *state.norm[3:])
    logits = forward(params, x, case["activation"], norm=evaluated).logits
    _close(logits, case["eval_logits"], 1e-9)


def test_running_statistics_follow_torchs_momentum_and_unbiased_variance():
    z = np.array([[1.0, 0.0], [3.0, 0.0], [8.0, 6.0]])
    _, cache = norm_forward("batch", z, np.ones(2), np.zeros(2))
    mean, var = running_statistics(np.zeros(2), np.ones(2), cache, momentum=0.25)
    np.testing.assert_allclose(mean, 0.25 * z.mean(axis=0))
    np.testing.assert_allclose(var, 0.75 + 0.25 * z.var(axis=0, ddof=1))
    out = batch_norm_eval(z, np.full(2, 2.0), np.ones(2), mean, var)
    np.testing.assert_allclose(out, 2.0 * (z - mean) / np.sqrt(var + EPS) + 1.0)


# --- the MLP with normalization ------------------------------------------------------------


def _relu_mlp(sizes, gain=1.0, seed=0):
    def init(shape, rng):
        return gain * kaiming_normal(shape, "fan_in", "relu", rng)

    return init_params(sizes, init, PCG32(seed))


@pytest.mark.parametrize("kind", KINDS)
def test_network_gradients_match_finite_differences_through_every_layer(kind):
    params = _relu_mlp([4, 5, 5, 3], seed=3)
    rng = np.random.default_rng(0)
    x, labels = rng.normal(size=(6, 4)), rng.integers(0, 3, size=6)
    norm = init_norm(kind, [5, 5])
    norm.gamma[0][:] = [0.5, 1.5, 1.0, 2.0, 0.8]
    norm.beta[1][:] = [0.3, -0.2, 0.1, 0.0, 0.4]
    _, grads = loss_and_gradients(params, x, labels, "tanh", norm=norm)

    def loss():
        return loss_and_gradients(params, x, labels, "tanh", norm=norm)[0]

    arrays = [a for layer in params for a in layer] + [
        a for pair in zip(norm.gamma, norm.beta) for a in pair
    ]
    for array, grad in zip(arrays, [g for pair in grads for g in pair], strict=True):
        np.testing.assert_allclose(grad, _numeric_gradient(loss, array), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("kind", KINDS)
def test_normalization_makes_the_forward_pass_ignore_the_weights_scale(kind):
    x = load_digits_split().x_train[:128]
    mean_squares = []
    for gain in (0.5, 1.0, 30.0):  # eps is about 1e-3 of var(a) at 0.1: not quite invariant
        h = forward(_relu_mlp([64] * 11 + [10], gain), x, "relu", norm=kind, training=True).h
        mean_squares.append([np.mean(a**2) for a in h[1:]])
    np.testing.assert_allclose(mean_squares[0], mean_squares[1], rtol=1e-3)
    np.testing.assert_allclose(mean_squares[2], mean_squares[1], rtol=1e-3)
    plain = [forward(_relu_mlp([64] * 11 + [10], g), x, "relu").h[-1] for g in (0.1, 30.0)]
    assert np.mean(plain[0] ** 2) < 1e-8 and np.mean(plain[1] ** 2) > 1e12  # without: 0.1**20


def test_training_with_batch_norm_is_reproducible_and_evaluates_with_running_statistics():
    digits = load_digits_split()
    params = _relu_mlp([64, 32, 32, 10])
    runs = [
        train(params, digits.x_train, digits.labels_train, "relu", lr=0.05, steps=60, norm="batch")
        for _ in range(2)
    ]
    assert runs[0].losses.tobytes() == runs[1].losses.tobytes()
    norm = runs[0].norm
    assert norm.kind == "batch" and not np.array_equal(norm.gamma[0], np.ones(32))
    assert not np.allclose(norm.running_var[0], 1)  # moved away from its start
    test = accuracy(runs[0].params, digits.x_test, digits.labels_test, "relu", norm=norm)
    assert test > 0.7
    # evaluation does not depend on the batch: one example at a time gives the same logits
    logits = forward(runs[0].params, digits.x_test[:5], "relu", norm=norm).logits
    one = forward(runs[0].params, digits.x_test[:1], "relu", norm=norm).logits
    np.testing.assert_allclose(one, logits[:1], rtol=1e-12)


def test_layer_norm_trains_where_the_plain_network_cannot_start():
    digits = load_digits_split()
    small = _relu_mlp([64] * 11 + [10], gain=0.25)  # the signal shrinks 16 times a layer
    options = {"lr": 0.05, "steps": 150}
    plain = train(small, digits.x_train, digits.labels_train, "relu", **options)
    normed = train(small, digits.x_train, digits.labels_train, "relu", norm="layer", **options)
    test = (digits.x_test, digits.labels_test)
    assert accuracy(plain.params, *test, "relu") < 0.2
    assert accuracy(normed.params, *test, "relu", norm=normed.norm) > 0.7


def test_train_step_is_the_step_train_takes():
    digits = load_digits_split()
    x, labels = digits.x_train[:256], digits.labels_train[:256]
    params = _relu_mlp([64, 16, 16, 10])
    run = train(params, x, labels, "relu", optimizer="adam", lr=1e-2, steps=5, norm="layer")
    state = start_training(params, optimizer="adam", norm="layer")
    for t, rows in enumerate(minibatch_indices(256, 64, 5, PCG32(0))):
        state, step = train_step(state, x[rows], labels[rows], "relu", lr=1e-2)
        assert step.loss == run.losses[t]
        np.testing.assert_array_equal(step.update_ratio, run.update_ratio[t])
    for (W, b), (W1, b1) in zip(state.params, run.params):
        assert W.tobytes() == W1.tobytes() and b.tobytes() == b1.tobytes()
    assert all(np.array_equal(g, h) for g, h in zip(state.norm.gamma, run.norm.gamma))


def test_a_step_with_a_loss_that_is_not_finite_changes_nothing():
    params = [(np.full((3, 4), 1e200), np.zeros(3)), (np.full((2, 3), 1e200), np.zeros(2))]
    state = start_training(params)
    with np.errstate(all="ignore"):
        new, step = train_step(state, np.ones((2, 4)), np.array([0, 1]), "relu", lr=0.1)
    assert not np.isfinite(step.loss) and new is state and np.isnan(step.update_ratio).all()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda p: forward(p, np.ones((2, 4)), "relu", norm="group"), "norm must be one of none"),
        (lambda p: forward(p, np.ones((2, 4)), "relu", norm=3), "norm must be one of none"),
        (
            lambda p: forward(p, np.ones((2, 4)), "relu", norm=init_norm("batch", [4])),
            r"hidden layers need .* of widths \[3\]",
        ),
        (
            lambda p: train(
                p,
                np.ones((3, 4)),
                np.zeros(3, int),
                "relu",
                lr=0.1,
                steps=1,
                batch_size=1,
                norm="batch",
            ),
            "batch_size must be >= 2 for BatchNorm",
        ),
        (
            lambda p: train_step(None, np.ones((2, 4)), np.zeros(2, int), "relu", lr=0.1),
            "state must be a TrainState",
        ),
        (
            lambda p: train_step(
                start_training(p, norm="batch"), np.ones((1, 4)), np.zeros(1, int), "relu", lr=0.1
            ),
            "BatchNorm trains on batches of 2 or more examples, got 1",
        ),
        (
            lambda p: train_step(
                start_training(p), np.ones((2, 4)), np.zeros(2, int), "relu", lr=0
            ),
            "lr must be a finite real number > 0, got 0",
        ),
    ],
)
def test_bad_normalization_arguments_say_what_is_accepted(call, message):
    params = _relu_mlp([4, 3, 2])
    with pytest.raises(ValueError, match=message):
        call(params)


def test_a_float32_network_stays_float32_through_its_normalization():
    z = np.array([[1.0, 2.0], [3.0, 5.0]], dtype=np.float32)
    gamma, beta = np.ones(2, np.float32), np.zeros(2, np.float32)
    for norm in ("batch", "layer"):
        y, cache = norm_forward(norm, z, gamma, beta)
        assert y.dtype == np.float32 and cache.z_hat.dtype == np.float32
    assert batch_norm_eval(z, gamma, beta, np.zeros(2, np.float32), gamma).dtype == np.float32

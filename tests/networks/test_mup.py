"""tinyinit.networks.mup: the hand-written MLP is right, and muP keeps coordinates O(1) in width."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from tinyinit import PCG32, kaiming_normal, normal_init
from tinyinit.networks.mup import (
    adam_init,
    adam_step,
    coordinate_check,
    init_mlp,
    layer_learning_rates,
    lr_sweep,
    make_regression,
    mse_loss,
    relu_mlp_backward,
    relu_mlp_forward,
    train_regression,
)


def small_problem(seed=3, width=6, n_layers=4):
    x, target = make_regression(PCG32(seed, stream=1), 5, 4, 3)
    weights = init_mlp(4, width, 3, "sp", PCG32(seed), n_layers=n_layers, base_width=width)
    return weights, x, target


def loss_of(weights, x, target):
    return mse_loss(relu_mlp_forward(weights, x)[0], target)[0]


# --- the network: forward, backward, optimizers ----------------------------------------


def test_backward_matches_central_finite_differences():
    weights, x, target = small_problem()
    y, activations = relu_mlp_forward(weights, x)
    grads = relu_mlp_backward(weights, activations, mse_loss(y, target)[1])
    eps = 1e-6
    for k, w in enumerate(weights):
        numeric = np.empty_like(w)
        for idx in np.ndindex(w.shape):
            plus = [v.copy() for v in weights]
            minus = [v.copy() for v in weights]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            numeric[idx] = (loss_of(plus, x, target) - loss_of(minus, x, target)) / (2 * eps)
        assert np.allclose(grads[k], numeric, rtol=1e-6, atol=1e-9), k


def test_forward_and_backward_leave_their_arguments_alone():
    weights, x, target = small_problem()
    before = [w.copy() for w in weights] + [x.copy()]
    y, activations = relu_mlp_forward(weights, x)
    relu_mlp_backward(weights, activations, mse_loss(y, target)[1])
    for a, b in zip(weights + [x], before, strict=True):
        assert np.array_equal(a, b)


def test_mse_loss_gradient_is_residual_over_batch():
    y, target = np.array([[1.0, 2.0], [0.0, -1.0]]), np.zeros((2, 2))
    loss, dy = mse_loss(y, target)
    assert loss == pytest.approx(6.0 / 4) and np.array_equal(dy, y / 2)


# --- initialization: tinyinit draws, the muP output scale ------------------------------


def test_init_draws_each_layer_with_tinyinit_in_order():
    weights = init_mlp(16, 32, 4, "sp", PCG32(7), n_layers=3)
    rng = PCG32(7)
    expected = [
        kaiming_normal((32, 16), "fan_in", "relu", rng),
        kaiming_normal((32, 32), "fan_in", "relu", rng),
        normal_init((4, 32), 1 / math.sqrt(32), rng),
    ]
    for w, e in zip(weights, expected, strict=True):
        assert w.dtype == np.float64 and np.array_equal(w, e.astype(np.float64))
    again = init_mlp(16, 32, 4, "sp", PCG32(7), n_layers=3)
    assert all(np.array_equal(a, b) for a, b in zip(weights, again, strict=True))


def test_mup_output_variance_scales_as_one_over_fan_in_squared():
    width, base = 1024, 64
    sp = init_mlp(16, width, 4, "sp", PCG32(0), n_layers=3, base_width=base)
    mup = init_mlp(16, width, 4, "mup", PCG32(0), n_layers=3, base_width=base)
    for a, b in zip(sp[:-1], mup[:-1], strict=True):
        assert np.array_equal(a, b)  # input and hidden layers: the same under both
    assert np.allclose(mup[-1], sp[-1] * math.sqrt(base / width), rtol=1e-6)
    assert np.var(mup[-1]) == pytest.approx(base / width**2, rel=0.1)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_mup_is_sp_at_the_base_width(optimizer):
    sp = init_mlp(16, 64, 4, "sp", PCG32(2), n_layers=4, base_width=64)
    mup = init_mlp(16, 64, 4, "mup", PCG32(2), n_layers=4, base_width=64)
    assert all(np.array_equal(a, b) for a, b in zip(sp, mup, strict=True))
    kw = dict(width=64, base_width=64)
    assert layer_learning_rates(0.1, "sp", optimizer, n_layers=4, **kw) == layer_learning_rates(
        0.1, "mup", optimizer, n_layers=4, **kw
    )


def test_learning_rates_follow_table_3():
    kw = dict(width=256, base_width=64)  # m = 4
    assert layer_learning_rates(0.1, "sp", "adam", n_layers=4, **kw) == [0.1] * 4
    assert layer_learning_rates(0.1, "sp", "sgd", n_layers=4, **kw) == [0.1] * 4
    assert layer_learning_rates(0.1, "mup", "adam", n_layers=4, **kw) == [0.1, 0.025, 0.025, 0.025]
    assert layer_learning_rates(0.1, "mup", "sgd", n_layers=4, **kw) == [0.4, 0.1, 0.1, 0.025]


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: init_mlp(4, 8, 2, "ntk", PCG32(0), n_layers=3), "'ntk'"),
        (
            lambda: layer_learning_rates(0.1, "mup", "lion", n_layers=3, width=8, base_width=4),
            "'lion'",
        ),
        (
            lambda: init_mlp(4, 0, 2, "sp", PCG32(0), n_layers=3),
            "width must be an integer >= 1, got 0",
        ),
        (lambda: coordinate_check((64,), 1, "sp", "rmsprop", 0.1), "'rmsprop'"),
    ],
)
def test_bad_arguments_say_what_was_wrong(call, needle):
    with pytest.raises(ValueError, match="must be") as info:
        call()
    assert needle in str(info.value)


# --- the experiments --------------------------------------------------------------------


def test_one_adam_step_changes_a_layer_output_in_proportion_to_width():
    # z = w . h with h > 0: Adam's first step is -lr * sign(g), g = dz * h,
    # so z moves by lr * sum(h) = lr * n * mean(h): linear in n.
    changes = []
    for n in (64, 256, 1024):
        h = 0.5 + PCG32(1).uniforms(n)
        w = [np.zeros((1, n))]
        new, _ = adam_step(w, [h[None, :]], adam_init(w), [1e-3])
        change = abs(float(((new[0] - w[0]) @ h)[0]))
        assert change == pytest.approx(1e-3 * h.sum(), rel=1e-6)
        changes.append(change)
    assert np.allclose(np.array(changes[1:]) / changes[:-1], 4.0, rtol=0.1)


WIDTHS = (64, 256, 1024)


@pytest.mark.parametrize("optimizer, lr", [("adam", 0.01), ("sgd", 0.05)])
def test_sp_output_grows_with_width_after_one_step(optimizer, lr):
    sizes = coordinate_check(WIDTHS, 1, "sp", optimizer, lr)
    output_after_one_step = sizes[:, 1, -1]
    assert np.all(np.diff(output_after_one_step) > 0)
    assert output_after_one_step[-1] / output_after_one_step[0] > 20


@pytest.mark.parametrize("optimizer, lr", [("adam", 0.01), ("sgd", 0.05)])
def test_mup_coordinates_stay_within_a_small_factor_across_width(optimizer, lr):
    sizes = coordinate_check(WIDTHS, 2, "mup", optimizer, lr)
    after_steps = sizes[:, 1:, :]  # init's output shrinks like sqrt(n0 / n) by design
    spread = after_steps.max(axis=0) / after_steps.min(axis=0)
    assert np.all(spread[:, :-1] < 1.2)  # hidden layers: flat
    assert np.all(spread[:, -1] < 2.5)  # output: O(1), finite-width wobble


def test_coordinate_check_is_deterministic_and_shaped():
    a = coordinate_check((32, 64), 2, "mup", "adam", 0.01, n_layers=4)
    b = coordinate_check((32, 64), 2, "mup", "adam", 0.01, n_layers=4)
    assert a.shape == (2, 3, 4) and np.array_equal(a, b)


def test_train_stops_a_diverging_run_without_warnings():
    weights, x, target = small_problem(width=32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, losses, sizes = train_regression(weights, x, target, [50.0] * 4, "sgd", 20)
    assert np.isfinite(losses[0]) and np.isnan(losses[-1]) and np.isnan(sizes[-1]).all()


def test_lr_sweep_optimum_drifts_under_sp_and_stays_under_mup():
    widths, lrs = (64, 256), 2.0 ** np.arange(-11, -4)
    best = {}
    for p in ("sp", "mup"):
        losses = lr_sweep(widths, lrs, p, "adam", 10)
        assert losses.shape == (2, len(lrs))
        best[p] = np.log2(lrs[np.nanargmin(losses, axis=1)])
    assert best["sp"][0] - best["sp"][1] >= 2  # octaves
    assert abs(best["mup"][0] - best["mup"][1]) <= 1

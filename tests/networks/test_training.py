"""The digits MLP of tinyinit.networks.training: its handwritten backprop against torch autograd
and finite
differences, its bad inputs, and a training loop that a seed reproduces bit for bit."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scripts_loader import FIXTURES

from tinyinit import PCG32, kaiming_normal, normal_init, xavier_normal, xavier_uniform
from tinyinit.core.activations import ACTIVATIONS
from tinyinit.networks import mup, training
from tinyinit.networks.training import (
    accuracy,
    cross_entropy,
    forward,
    init_params,
    load_digits_split,
    loss_and_gradients,
    minibatch_indices,
    train,
)

GOLDEN = json.loads((FIXTURES / "training_torch.json").read_text(encoding="utf-8"))


def _params(case):
    return [(np.array(W), np.array(b)) for W, b in case["params"]]


def _random_mlp(sizes, seed, scale=1.0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    params = [
        (
            (rng.normal(size=(n_out, n_in)) * scale / np.sqrt(n_in)).astype(dtype),
            (rng.normal(size=n_out) * 0.1).astype(dtype),
        )
        for n_in, n_out in zip(sizes[:-1], sizes[1:])
    ]
    x = rng.normal(size=(7, sizes[0])).astype(dtype)
    labels = rng.integers(0, sizes[-1], size=7)
    return params, x, labels


def _relu_mlp(sizes, seed=0):
    return init_params(sizes, lambda s, r: kaiming_normal(s, "fan_in", "relu", r), PCG32(seed))


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
    params, x, labels = _random_mlp([4, 5, 5, 3], seed=7)
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
        params, x, labels = _random_mlp([6, 8, 8, 4], seed=3)
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
    params = _relu_mlp([4, 6, 5, 3])
    x = np.arange(8.0).reshape(2, 4)
    out = forward(params, x, "relu")
    assert [z.shape for z in out.z] == [(2, 6), (2, 5)]
    assert [h.shape for h in out.h] == [(2, 4), (2, 6), (2, 5)]
    assert out.h[0] is x
    np.testing.assert_array_equal(out.h[2], np.maximum(out.z[1], 0))
    np.testing.assert_array_equal(out.logits, out.h[2] @ params[2][0].T + params[2][1])


def test_optimizers_are_the_ones_mup_uses():
    assert mup.sgd_step is training.sgd_step
    assert mup.adam_step is training.adam_step
    assert mup.adam_init is training.adam_init


# --- bad input ------------------------------------------------------------------------

GOOD = _relu_mlp([4, 3, 2])
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


@pytest.mark.parametrize(
    "options, message",
    [
        ({"lr": 0.0, "steps": 1}, "lr must be a finite real number > 0, got 0.0"),
        ({"lr": -1e-3, "steps": 1}, "got -0.001"),
        ({"lr": float("nan"), "steps": 1}, "got nan"),
        ({"lr": "0.1", "steps": 1}, "got '0.1'"),
        ({"lr": 0.1, "steps": 0}, "steps must be an integer >= 1, got 0"),
        ({"lr": 0.1, "steps": -3}, "got -3"),
        ({"lr": 0.1, "steps": 2.5}, "got 2.5"),
        ({"lr": 0.1, "steps": 1, "batch_size": 0}, "batch_size must be an integer >= 1, got 0"),
        ({"lr": 0.1, "steps": 1, "batch_size": 6}, "batch_size must be <= n_samples = 5, got 6"),
        ({"lr": 0.1, "steps": 1, "optimizer": "rmsprop"}, "optimizer must be one of sgd, adam"),
    ],
)
def test_bad_training_options_name_argument_value_and_what_is_accepted(options, message):
    options = {"batch_size": 2, **options}
    with pytest.raises(ValueError) as info:
        train(GOOD, X, Y, "relu", **options)
    assert message in str(info.value)


def test_bad_sizes_and_split_fraction():
    with pytest.raises(ValueError, match=r"sizes must list at least \[d_in, d_out\], got \[4\]"):
        init_params([4], lambda s, r: np.zeros(s), PCG32(0))
    with pytest.raises(
        ValueError, match=r"sizes must be a sequence of integers >= 1, got \[4, 0, 2\]"
    ):
        init_params([4, 0, 2], lambda s, r: np.zeros(s), PCG32(0))
    with pytest.raises(ValueError, match=r"init_weight returned shape \(2,\)"):
        init_params([4, 2], lambda s, r: np.zeros(s[0]), PCG32(0))
    with pytest.raises(ValueError, match=r"test_fraction must be a number in \(0, 1\), got 1.5"):
        load_digits_split(test_fraction=1.5)


# --- the training loop ----------------------------------------------------------------


def _small_digits():
    digits = load_digits_split()
    return digits.x_train[:300], digits.labels_train[:300]


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_training_is_reproducible_bit_for_bit_from_its_seed(optimizer):
    x, labels = _small_digits()
    params = _relu_mlp([64, 32, 32, 10])
    runs = [
        train(params, x, labels, "relu", optimizer=optimizer, lr=0.01, steps=15, batch_size=32)
        for _ in range(2)
    ]
    for field in ("losses", "mean_square", "saturated", "dead", "grad_norm", "update_ratio"):
        np.testing.assert_array_equal(getattr(runs[0], field), getattr(runs[1], field))
    for (W0, b0), (W1, b1) in zip(runs[0].params, runs[1].params):
        assert W0.tobytes() == W1.tobytes() and b0.tobytes() == b1.tobytes()
    other = train(params, x, labels, "relu", optimizer=optimizer, lr=0.01, steps=15, batch_size=32,
                  seed=1)  # fmt: skip
    assert not np.array_equal(other.losses, runs[0].losses)


def test_training_leaves_the_given_params_untouched_and_learns_the_digits():
    digits = load_digits_split()
    params = _relu_mlp([64, 64, 10])
    before = [(W.copy(), b.copy()) for W, b in params]
    run = train(params, digits.x_train, digits.labels_train, "relu", lr=0.1, steps=200)
    for (W, b), (W0, b0) in zip(params, before):
        np.testing.assert_array_equal(W, W0)
        np.testing.assert_array_equal(b, b0)
    assert accuracy(run.params, digits.x_test, digits.labels_test, "relu") > 0.9
    assert run.diverged_at is None


def test_sgd_update_ratio_is_lr_times_gradient_norm_over_weight_norm():
    x, labels = _small_digits()
    params = _relu_mlp([64, 16, 10])
    run = train(params, x, labels, "relu", lr=0.05, steps=1, batch_size=300)
    rows = run_rows(300, 300)
    _, grads = loss_and_gradients(params, x[rows], labels[rows], "relu")
    for l, ((W, _), (dW, _)) in enumerate(zip(params, grads)):
        assert run.grad_norm[0, l] == pytest.approx(np.linalg.norm(dW), rel=1e-12)
        expected = 0.05 * np.linalg.norm(dW) / np.linalg.norm(W)
        assert run.update_ratio[0, l] == pytest.approx(expected, rel=1e-12)


def run_rows(n, batch_size):
    return minibatch_indices(n, batch_size, 1, PCG32(0))[0]


def test_saturated_and_dead_fractions_follow_their_definitions():
    x, labels = _small_digits()
    huge = init_params([64, 32, 10], lambda s, r: normal_init(s, 1.0, r), PCG32(0))
    run = train(huge, x, labels, "tanh", lr=1e-3, steps=1, batch_size=100)
    h = np.tanh(x[run_rows(300, 100)] @ huge[0][0].T)
    assert run.saturated[0, 0] == np.mean(np.abs(h) > 0.97)
    assert run.saturated[0, 0] > 0.6  # N(0, 1) weights on 64 standardized pixels: most
    # a ReLU unit whose bias is very negative is off for every example: dead
    params = _relu_mlp([64, 4, 10])
    W, b = params[0]
    params[0] = (W, np.array([-1e3, -1e3, 0.0, 0.0]))
    run = train(params, x, labels, "relu", lr=1e-3, steps=1, batch_size=100)
    assert run.dead[0, 0] == 0.5
    assert run.mean_square[0, 0] == pytest.approx(
        np.mean(np.maximum(x[run_rows(300, 100)] @ W.T + params[0][1], 0) ** 2), rel=1e-12
    )


def test_zero_init_keeps_every_hidden_unit_identical():
    x, labels = _small_digits()
    for init in (lambda s, r: np.zeros(s), lambda s, r: np.full(s, 0.05)):
        params = init_params([64, 16, 16, 10], init, PCG32(0))
        run = train(params, x, labels, "tanh", lr=0.1, steps=30, batch_size=50)
        for h in forward(run.params, x, "tanh").h[1:]:
            assert np.ptp(h, axis=1).max() == 0  # every unit of a layer computes the same


def test_a_diverging_run_stops_and_says_when():
    x, labels = _small_digits()
    params = init_params(
        [64, 64, 64, 64, 10], lambda s, r: normal_init(s, 1.0, r), PCG32(0), dtype=np.float32
    )
    with np.errstate(over="ignore", invalid="ignore"):
        run = train(params, x.astype(np.float32), labels, "relu", lr=1.0, steps=20, batch_size=50)
    t = run.diverged_at
    assert t is not None and 0 < t < 20
    assert np.isfinite(run.losses[:t]).all() and np.isnan(run.losses[t:]).all()


def test_minibatches_are_epochs_without_replacement():
    batches = minibatch_indices(10, 3, 7, PCG32(5))
    assert batches.shape == (7, 3)
    for epoch in (batches[0:3], batches[3:6]):  # 10 // 3 = 3 batches per epoch
        assert len(set(epoch.ravel())) == 9
    assert not np.array_equal(batches[0:3], batches[3:6])


def test_digits_split_is_fixed_disjoint_and_standardized():
    a, b = load_digits_split(), load_digits_split()
    np.testing.assert_array_equal(a.x_test, b.x_test)
    assert len(a.x_train) + len(a.x_test) == 1797
    assert sorted(set(a.labels_train)) == list(range(10))
    train_rows = {r.tobytes() for r in a.x_train}
    assert sum(r.tobytes() in train_rows for r in a.x_test) < 5  # the data has a few duplicates
    np.testing.assert_allclose(a.x_train.mean(axis=0), 0, atol=1e-12)
    assert 0.9 < np.mean(a.x_train**2) <= 1.0  # constant pixels are only centered
    other = load_digits_split(seed=1)
    assert not np.array_equal(a.labels_test, other.labels_test)
    assert load_digits_split(dtype=np.float32).x_train.dtype == np.float32


def test_the_digits_read_from_scikit_learns_file_are_its_load_digits_bit_for_bit(monkeypatch):
    import importlib.util

    from sklearn.datasets import load_digits

    from tinyinit.networks import training

    reference = load_digits()
    for x, labels in (training._digits(), training._digits_from_sklearn()):
        assert x.dtype == np.float64 and labels.dtype == np.int64
        np.testing.assert_array_equal(x, reference.data)
        np.testing.assert_array_equal(labels, reference.target)
    # scikit-learn elsewhere (or its file gone): its API answers, with the same split
    split = load_digits_split()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None)
    np.testing.assert_array_equal(load_digits_split().x_test, split.x_test)


def test_initializers_compose_with_init_params():
    params = init_params([8, 4, 2], lambda s, r: xavier_normal(s, 1.0, r), PCG32(0))
    np.testing.assert_array_equal(params[0][0], xavier_normal((4, 8), 1.0, PCG32(0)))
    assert params[0][0].dtype == np.float64 and not params[1][1].any()


def test_an_activation_may_be_your_own_callable_as_in_simulate():
    params, x, labels = _random_mlp([6, 8, 4], seed=5)
    by_name = train(params, x, labels, "tanh", lr=0.1, steps=3, batch_size=4)
    by_callable = train(params, x, labels, np.tanh, lr=0.1, steps=3, batch_size=4)
    assert by_callable.losses[0] == by_name.losses[0]  # the same forward pass
    np.testing.assert_allclose(by_callable.losses, by_name.losses, rtol=1e-6)  # phi' by differences
    with pytest.raises(TypeError, match=r"^activation must be a callable that maps a numpy array"):
        train(params, x, labels, math.tanh, lr=0.1, steps=1, batch_size=4)


# --- one step at a time: the Trainer beside train --------------------------------------

FIELDS = ("losses", "mean_square", "saturated", "dead", "grad_norm", "update_ratio")


@pytest.mark.parametrize(("optimizer", "activation"), [("sgd", "relu"), ("adam", "tanh")])
def test_trainer_after_n_steps_is_train_with_steps_n_bit_for_bit(optimizer, activation):
    x, labels = _small_digits()
    params = _relu_mlp([64, 32, 32, 10])
    # 300 // 32 = 9 steps an epoch: 23 steps cross two epoch boundaries, the last one mid-epoch
    run = train(params, x, labels, activation, optimizer=optimizer, lr=0.01, steps=23,
                batch_size=32, seed=3)  # fmt: skip
    trainer = training.Trainer(params, x, labels, activation, optimizer=optimizer, lr=0.01,
                               batch_size=32, seed=3)  # fmt: skip
    for t in range(23):
        stats = trainer.step()
        assert stats.loss == run.losses[t] and trainer.steps == t + 1
        np.testing.assert_array_equal(stats.update_ratio, run.update_ratio[t])
    stepped = trainer.run()
    for field in FIELDS:
        np.testing.assert_array_equal(getattr(stepped, field), getattr(run, field))
    for (W0, b0), (W1, b1) in zip(stepped.params, run.params):
        assert W0.tobytes() == W1.tobytes() and b0.tobytes() == b1.tobytes()
    np.testing.assert_array_equal(trainer.recent("update_ratio", 5), run.update_ratio[-5:])
    assert stepped.diverged_at is None


def test_trainer_takes_a_new_learning_rate_from_the_next_step():
    x, labels = _small_digits()
    params = _relu_mlp([64, 16, 10])
    trainer = training.Trainer(params, x, labels, "relu", lr=0.05, batch_size=300)
    trainer.step()
    before = trainer.params
    trainer.lr = 0.2
    trainer.step()
    rows = minibatch_indices(300, 300, 2, PCG32(0))[1]
    _, grads = loss_and_gradients(before, x[rows], labels[rows], "relu")
    for (W, b), (W0, b0), (dW, db) in zip(trainer.params, before, grads):
        np.testing.assert_array_equal(W, W0 - 0.2 * dW)
        np.testing.assert_array_equal(b, b0 - 0.2 * db)
    with pytest.raises(ValueError, match="lr must be a finite real number > 0, got -1"):
        trainer.lr = -1
    assert trainer.lr == 0.2


def test_trainer_stops_where_train_stops_a_diverging_run():
    x, labels = _small_digits()
    params = init_params(
        [64, 64, 64, 64, 10], lambda s, r: normal_init(s, 1.0, r), PCG32(0), dtype=np.float32
    )
    x = x.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        run = train(params, x, labels, "relu", lr=1.0, steps=20, batch_size=50)
        trainer = training.Trainer(params, x, labels, "relu", lr=1.0, batch_size=50)
        results = [trainer.step() for _ in range(20)]
    t = run.diverged_at
    assert trainer.diverged_at == t and trainer.steps == t
    assert all(r is not None for r in results[:t]) and all(r is None for r in results[t:])
    np.testing.assert_array_equal(trainer.losses, run.losses[:t])
    for (W0, _), (W1, _) in zip(trainer.params, run.params):
        np.testing.assert_array_equal(W0, W1)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"lr": 0.0}, "lr must be a finite real number > 0, got 0.0"),
        ({"lr": 0.1, "batch_size": 6}, "batch_size must be <= n_samples = 5, got 6"),
        ({"lr": 0.1, "batch_size": 0}, "batch_size must be an integer >= 1, got 0"),
        ({"lr": 0.1, "optimizer": "rmsprop"}, "optimizer must be one of sgd, adam"),
    ],
)
def test_bad_trainer_options_are_refused_as_train_refuses_them(options, message):
    with pytest.raises(ValueError) as info:
        training.Trainer(GOOD, X, Y, "relu", **options)
    assert message in str(info.value)
    with pytest.raises(ValueError, match="must be one of"):
        training.Trainer(GOOD, X, Y, "softplus", lr=0.1, batch_size=2)


def test_evaluate_is_the_loss_and_accuracy_of_one_forward_pass():
    digits = load_digits_split()
    params = _relu_mlp([64, 32, 10])
    result = training.evaluate(params, digits.x_test, digits.labels_test, "relu")
    fwd = forward(params, digits.x_test, "relu")
    assert result.loss == cross_entropy(fwd.logits, digits.labels_test)[0]
    assert result.accuracy == accuracy(params, digits.x_test, digits.labels_test, "relu")
    np.testing.assert_array_equal(result.forward.h[-1], fwd.h[-1])
    with pytest.raises(ValueError, match="labels must have shape"):
        training.evaluate(params, digits.x_test, digits.labels_test[:3], "relu")


@pytest.mark.parametrize("initializer", ["xavier_uniform", "xavier_normal", "kaiming_fan_in",
                                         "kaiming_fan_out", "normal"])  # fmt: skip
def test_scheme_weights_are_the_initializers_own_weights(initializer):
    from tinyinit.physics.depth_stack import SCHEMES

    assert set(SCHEMES) == {"xavier_uniform", "xavier_normal", "kaiming_fan_in",
                            "kaiming_fan_out", "normal"}  # fmt: skip
    shape, gain = (24, 40), 5 / 3
    drawn = training.scheme_weights(initializer, gain=gain, std=0.05)(shape, PCG32(9))
    own = {
        "xavier_uniform": lambda: xavier_uniform(shape, gain, PCG32(9)),
        "xavier_normal": lambda: xavier_normal(shape, gain, PCG32(9)),
        "kaiming_fan_in": lambda: normal_init(shape, gain / np.sqrt(40), PCG32(9)),
        "kaiming_fan_out": lambda: normal_init(shape, gain / np.sqrt(24), PCG32(9)),
        "normal": lambda: normal_init(shape, 0.05, PCG32(9)),
    }[initializer]()
    assert drawn.tobytes() == own.tobytes()
    relu = training.scheme_weights("kaiming_fan_in", gain=np.sqrt(2))((24, 40), PCG32(9))
    assert relu.tobytes() == kaiming_normal((24, 40), "fan_in", "relu", PCG32(9)).tobytes()
    with pytest.raises(ValueError, match="initializer must be one of .*, got 'he'"):
        training.scheme_weights("he")
    with pytest.raises(ValueError, match="gain must be"):
        training.scheme_weights("xavier_normal", gain=-1.0)


@pytest.mark.parametrize("norm", ["batch", "layer"])
def test_trainer_with_normalization_is_train_with_it_bit_for_bit(norm):
    x, labels = _small_digits()
    params = _relu_mlp([64, 32, 32, 10])
    run = train(params, x, labels, "relu", lr=0.05, steps=12, batch_size=32, norm=norm)
    trainer = training.Trainer(params, x, labels, "relu", lr=0.05, batch_size=32, norm=norm)
    for _ in range(12):
        trainer.step()
    stepped = trainer.run()
    for field in FIELDS:
        np.testing.assert_array_equal(getattr(stepped, field), getattr(run, field))
    for mine, theirs in zip(stepped.norm, run.norm):
        if isinstance(mine, str):
            assert mine == theirs == norm
            continue
        for a, b in zip(mine, theirs):
            np.testing.assert_array_equal(a, b)
    if norm == "batch":
        with pytest.raises(ValueError, match="batch_size must be >= 2 for BatchNorm"):
            training.Trainer(params, x, labels, "relu", lr=0.05, batch_size=1, norm=norm)

"""The training loop of tinyinit.networks.training: train is the Trainer's steps, which are
train_step's on the minibatches of its seed, bit for bit; what a run records; its bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from small_networks import random_mlp, relu_mlp

from tinyinit import PCG32, normal_init
from tinyinit.networks import training
from tinyinit.networks.digits import load_digits_split
from tinyinit.networks.mlp import accuracy, forward, init_params, loss_and_gradients
from tinyinit.networks.training import minibatch_indices, start_training, train, train_step

# --- bad input ------------------------------------------------------------------------

GOOD = relu_mlp([4, 3, 2])
X, Y = np.ones((5, 4)), np.array([0, 1, 1, 0, 1])


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


# --- the training loop ----------------------------------------------------------------


def _small_digits():
    digits = load_digits_split()
    return digits.x_train[:300], digits.labels_train[:300]


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_training_is_reproducible_bit_for_bit_from_its_seed(optimizer):
    x, labels = _small_digits()
    params = relu_mlp([64, 32, 32, 10])
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
    params = relu_mlp([64, 64, 10])
    before = [(W.copy(), b.copy()) for W, b in params]
    run = train(params, digits.x_train, digits.labels_train, "relu", lr=0.1, steps=200)
    for (W, b), (W0, b0) in zip(params, before):
        np.testing.assert_array_equal(W, W0)
        np.testing.assert_array_equal(b, b0)
    assert accuracy(run.params, digits.x_test, digits.labels_test, "relu") > 0.9
    assert run.diverged_at is None


def test_sgd_update_ratio_is_lr_times_gradient_norm_over_weight_norm():
    x, labels = _small_digits()
    params = relu_mlp([64, 16, 10])
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
    params = relu_mlp([64, 4, 10])
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


def test_an_activation_may_be_your_own_callable_as_in_simulate():
    params, x, labels = random_mlp([6, 8, 4], seed=5)
    by_name = train(params, x, labels, "tanh", lr=0.1, steps=3, batch_size=4)
    by_callable = train(params, x, labels, np.tanh, lr=0.1, steps=3, batch_size=4)
    assert by_callable.losses[0] == by_name.losses[0]  # the same forward pass
    np.testing.assert_allclose(by_callable.losses, by_name.losses, rtol=1e-6)  # phi' by differences
    with pytest.raises(TypeError, match=r"^activation must be a callable that maps a numpy array"):
        train(params, x, labels, math.tanh, lr=0.1, steps=1, batch_size=4)


# --- one loop: train is the Trainer's steps, train_step's on the seed's minibatches -------

FIELDS = ("losses", "mean_square", "saturated", "dead", "grad_norm", "update_ratio")


@pytest.mark.parametrize(("optimizer", "activation"), [("sgd", "relu"), ("adam", "tanh")])
def test_train_is_train_step_on_the_minibatches_of_its_seed_bit_for_bit(optimizer, activation):
    x, labels = _small_digits()
    params = relu_mlp([64, 32, 32, 10])
    # 300 // 32 = 9 steps an epoch: 23 steps cross two epoch boundaries, the last one mid-epoch
    run = train(params, x, labels, activation, optimizer=optimizer, lr=0.01, steps=23,
                batch_size=32, seed=3)  # fmt: skip
    state = start_training(params, optimizer=optimizer)
    for t, rows in enumerate(minibatch_indices(300, 32, 23, PCG32(3))):
        state, step = train_step(state, x[rows], labels[rows], activation, lr=0.01)
        assert step.loss == run.losses[t]
        np.testing.assert_array_equal(step.update_ratio, run.update_ratio[t])
        assert run.grad_norm[t, 0] == np.linalg.norm(step.grads[0][0])
    for (W0, b0), (W1, b1) in zip(state.params, run.params):
        assert W0.tobytes() == W1.tobytes() and b0.tobytes() == b1.tobytes()
    assert run.diverged_at is None and run.losses.shape == (23,)


def test_a_trainer_shows_the_run_so_far_and_the_last_steps_of_a_field():
    x, labels = _small_digits()
    trainer = training.Trainer(relu_mlp([64, 16, 10]), x, labels, "relu", lr=0.01,
                               batch_size=32)  # fmt: skip
    stats = [trainer.step() for _ in range(4)]
    so_far, padded = trainer.run(), trainer.run(6)
    assert so_far.losses.tolist() == [s.loss for s in stats] and trainer.steps == 4
    assert padded.grad_norm.shape == (6, 2) and padded.dead.shape == (6, 1)
    assert np.isnan(padded.losses[4:]).all() and np.isnan(padded.update_ratio[4:]).all()
    for field in FIELDS:
        np.testing.assert_array_equal(getattr(padded, field)[:4], getattr(so_far, field))
    np.testing.assert_array_equal(trainer.recent("update_ratio", 2), so_far.update_ratio[-2:])
    with pytest.raises(ValueError, match="steps must be an integer >= 4, got 3"):
        trainer.run(3)


def test_trainer_takes_a_new_learning_rate_from_the_next_step():
    x, labels = _small_digits()
    params = relu_mlp([64, 16, 10])
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


def test_a_trainer_that_diverged_takes_no_more_steps():
    x, labels = _small_digits()
    params = init_params(
        [64, 64, 64, 64, 10], lambda s, r: normal_init(s, 1.0, r), PCG32(0), dtype=np.float32
    )
    trainer = training.Trainer(params, x.astype(np.float32), labels, "relu", lr=1.0,
                               batch_size=50)  # fmt: skip
    with np.errstate(over="ignore", invalid="ignore"):
        results = [trainer.step() for _ in range(20)]
    t = trainer.diverged_at
    assert t is not None and trainer.steps == t
    assert all(r is not None for r in results[:t]) and all(r is None for r in results[t:])
    assert np.isfinite(trainer.losses).all() and len(trainer.losses) == t


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


def test_a_trainer_with_batch_norm_refuses_a_batch_of_one():
    x, labels = _small_digits()
    with pytest.raises(ValueError, match="batch_size must be >= 2 for BatchNorm"):
        training.Trainer(relu_mlp([64, 8, 10]), x, labels, "relu", lr=0.05, batch_size=1,
                         norm="batch")  # fmt: skip

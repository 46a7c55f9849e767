"""The training loop: one step of SGD or Adam on a minibatch, and a loop of those steps that
records what every layer did, for the MLP of `tinyinit.networks.mlp` on the digits.

One loop: `Trainer` takes the steps, one at a time and for as long as it is asked (what the live
explorer runs, `tinyinit.views.live_training`); `train` is a Trainer stepped `steps` times.
Each step is `train_step`'s: the loss and gradients by backprop
(`tinyinit.networks.mlp.backprop_unchecked`), then the optimizer
(`tinyinit.networks.optimizers`) on every array, with the update ratio of every layer. The
minibatches are drawn from a PCG32 (`minibatch_indices`), so a seed fixes a run bit for bit.

>>> from tinyinit import PCG32, kaiming_normal
>>> x, y = np.eye(4), np.array([0, 1, 0, 1])
>>> kaiming = lambda shape, rng: kaiming_normal(shape, "fan_in", "relu", rng)
>>> run = train(init_params([4, 8, 2], kaiming, PCG32(0)), x, y, "relu", lr=0.5, steps=3,
...             batch_size=2)
>>> run.losses.round(3)
array([0.764, 0.579, 0.362])
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from threadpoolctl import threadpool_limits

from ..core.activations import Activation, as_activation
from ..core.arguments import generator, instance, integer, number, one_of
from ..core.distributions import uniforms
from ..core.pcg32 import PCG32
from ..physics.diagnostics import dead_fraction, saturated_fraction

# Notebooks 04 and 09 take these from here: the model's, the data's.
from .digits import load_digits_split  # noqa: F401
from .mlp import (  # noqa: F401
    Forward,
    Params,
    accuracy,
    backprop_unchecked,
    check_batch,
    check_params,
    forward,
    init_params,
    loss_and_gradients,
)
from .normalization import Norm, running_statistics_unchecked
from .optimizers import (
    OPTIMIZERS,
    AdamState,
    adam_init,
    adam_step_unchecked,
    sgd_step_unchecked,
)

__all__ = [
    "StepStats",
    "TrainState",
    "Trainer",
    "TrainingRun",
    "TrainingStep",
    "minibatch_indices",
    "start_training",
    "train",
    "train_step",
]


def _positive(name: str, value) -> float:
    return number(name, value, above=0)


def _count(name: str, value) -> int:
    return integer(name, value, minimum=1)


def _activation(activation) -> Activation:
    return as_activation(activation, name="activation")  # a name, a callable or an Activation


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


class TrainingStep(NamedTuple):
    """What one training step saw, before its update.

    loss          the minibatch's loss
    forward       its forward pass (as in training: BatchNorm on the batch's statistics)
    slopes        phi'(z_l) for the hidden layers l = 1..L-1
    grads         (dW, db) per layer, then with normalization (dgamma, dbeta) per hidden layer
    update_ratio  ||Delta W_l|| / ||W_l|| per layer (NaN where W_l = 0; all NaN when the loss
                  was not finite and nothing was updated)

    >>> TrainingStep(2.3, None, [], [], np.zeros(1)).loss
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
    norm = check_params(params, norm=norm)
    one_of("optimizer", optimizer, OPTIMIZERS)
    return _start(params, optimizer, norm)


def _start(params: Params, optimizer: str, norm: Norm | None) -> TrainState:
    adam = adam_init(_trained(params, norm)) if optimizer == "adam" else None
    return TrainState(list(params), norm, optimizer, adam)


def train_step(
    state: TrainState, x: np.ndarray, labels: np.ndarray, activation: str, *, lr: float
) -> tuple[TrainState, TrainingStep]:
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
    x, labels, _ = check_batch(state.params, x, labels, norm=state.norm)
    if state.norm is not None and state.norm.kind == "batch" and len(x) < 2:
        raise ValueError(f"BatchNorm trains on batches of 2 or more examples, got {len(x)}")
    return _step(state, x, labels, act, _positive("lr", lr))


def _step(state: TrainState, x, labels, act: Activation, lr: float):
    """train_step on arguments its door has checked: the step of the loop."""
    params, norm = state.params, state.norm
    loss, grads, fwd, dphis = backprop_unchecked(params, x, labels, act, norm)
    n_layers = len(params)
    if not math.isfinite(loss):
        return state, TrainingStep(loss, fwd, dphis, grads, np.full(n_layers, np.nan))
    arrays = _trained(params, norm)
    lrs = [lr] * len(arrays)
    if state.optimizer == "sgd":
        new, adam = sgd_step_unchecked(arrays, _flat(grads), lrs), None
    else:
        new, adam = adam_step_unchecked(arrays, _flat(grads), state.adam, lrs)
    ratio = np.full(n_layers, np.nan)
    for l in range(n_layers):
        size = _norm(arrays[2 * l])
        if size > 0:
            ratio[l] = _norm(new[2 * l] - arrays[2 * l]) / size
    if norm is not None:
        trained = _unflat(new[2 * n_layers :])
        running = norm.running_mean, norm.running_var
        if norm.kind == "batch":
            moved = [running_statistics_unchecked(m, v, c) for m, v, c in zip(*running, fwd.norms)]
            running = [m for m, _ in moved], [v for _, v in moved]
        norm = Norm(norm.kind, [g for g, _ in trained], [b for _, b in trained], *running)
    new_state = TrainState(_unflat(new[: 2 * n_layers]), norm, state.optimizer, adam)
    return new_state, TrainingStep(loss, fwd, dphis, grads, ratio)


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


def _recorded(step: TrainingStep, n_layers: int) -> StepStats:
    """What `train` records of a step (see TrainingRun)."""
    hidden = np.empty((3, n_layers - 1))
    for l, (dphi, h) in enumerate(zip(step.slopes, step.forward.h[1:])):
        hidden[:, l] = np.mean(h * h), saturated_fraction(dphi), dead_fraction(dphi)
    grad_norm = np.array([_norm(dW) for dW, _ in step.grads[:n_layers]])
    return StepStats(step.loss, *hidden, grad_norm, step.update_ratio)


class Trainer:
    """The training loop, one step at a time and for as long as it is asked: what a live view
    runs, and what `train` runs for its `steps`.

    Each step is `train_step`'s on the next minibatch; the minibatches are the epochs of
    `minibatch_indices` from PCG32(seed), drawn when they are needed, so that after n steps
    `run()` is train(params, ..., steps=n). `lr` may change between steps (the steps after
    use it). A step whose loss is not finite changes nothing and ends the run: `diverged_at`
    says when, and `step` returns None. Matrices this small run faster on one BLAS thread:
    the caller sets it (`train` does, with threadpool_limits) around the steps it takes.

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
        self._x, self._labels, norm = check_batch(params, x, labels, norm=norm)
        one_of("optimizer", optimizer, OPTIMIZERS)
        self._state = _start(params, optimizer, norm)
        self.activation = activation
        self.lr = lr
        self.batch_size = _count("batch_size", batch_size)
        if self.norm is not None and self.norm.kind == "batch" and self.batch_size == 1:
            raise ValueError(
                "batch_size must be >= 2 for BatchNorm (a batch of one has no variance)"
            )
        self._rng = PCG32(integer("seed", seed))
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

    def run(self, steps: int | None = None) -> TrainingRun:
        """The run so far: a row per step taken, or `steps` rows, the ones past the steps
        taken (a run that diverged) NaN.

        >>> from tinyinit import PCG32, kaiming_normal
        >>> kaiming = lambda shape, rng: kaiming_normal(shape, "fan_in", "relu", rng)
        >>> params = init_params([4, 3, 2], kaiming, PCG32(0))
        >>> trainer = Trainer(params, np.eye(4), np.array([0, 1, 0, 1]), "relu", lr=0.1,
        ...                   batch_size=2)
        >>> trainer.step() is not None, trainer.run().losses.shape, trainer.run(3).dead.shape
        (True, (1,), (3, 1))
        """
        rows = self.steps if steps is None else integer("steps", steps, minimum=self.steps)
        losses = np.full(rows, np.nan)
        losses[: self.steps] = self.losses
        n_layers = len(self.params)
        fields = {}
        for name in PER_LAYER:
            width = n_layers if name in ("grad_norm", "update_ratio") else n_layers - 1
            fields[name] = np.full((rows, width), np.nan)
            for t, recorded in enumerate(self._history):
                fields[name][t] = getattr(recorded, name)
        return TrainingRun(
            self.params, losses, **fields, diverged_at=self.diverged_at, norm=self.norm
        )


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
    """Train the MLP for `steps` minibatch steps of SGD or Adam, recording every layer: a
    `Trainer` stepped `steps` times (or until its loss stops being finite), on one BLAS thread.

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
    steps = _count("steps", steps)
    trainer = Trainer(params, x, labels, activation, optimizer=optimizer, lr=lr,
                      batch_size=batch_size, seed=seed, norm=norm)  # fmt: skip
    # Matrices this small run faster on one BLAS thread; on a busy machine two threads that
    # wait for each other made a width-128 run about 15 times slower (measured).
    with threadpool_limits(limits=1, user_api="blas"):
        while trainer.steps < steps and trainer.step() is not None:
            pass
    return trainer.run(steps)

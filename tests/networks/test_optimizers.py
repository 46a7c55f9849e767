"""The optimizers of tinyinit.networks.optimizers: pure, one learning rate per array, Adam as
the textbook writes it, and the same functions in muP's networks."""

from __future__ import annotations

import numpy as np

from tinyinit import PCG32
from tinyinit.networks import mup, optimizers
from tinyinit.networks.optimizers import adam_init, adam_step, sgd_step


def test_optimizers_are_the_ones_mup_uses():
    assert mup.sgd_step is optimizers.sgd_step
    assert mup.adam_step is optimizers.adam_step
    assert mup.adam_init is optimizers.adam_init


def test_sgd_step_is_pure_and_uses_one_lr_per_matrix():
    w, g = [np.ones(2), np.ones(3)], [np.full(2, 2.0), np.full(3, -1.0)]
    new = sgd_step(w, g, [0.5, 0.1])
    assert np.array_equal(new[0], [0.0, 0.0]) and np.allclose(new[1], 1.1)
    assert np.array_equal(w[0], np.ones(2))


def test_adam_first_step_moves_every_entry_by_lr_whatever_the_gradient_size():
    g = np.array([1e-3, -3.0, 250.0])
    new, state = adam_step([np.zeros(3)], [g], adam_init([np.zeros(3)]), [0.01])
    assert np.allclose(new[0], -0.01 * np.sign(g), rtol=1e-4)
    assert state.step == 1


def test_adam_matches_the_textbook_recursion_over_several_steps():
    rng = PCG32(5)
    w = [np.zeros(4)]
    state = adam_init(w)
    m = v = np.zeros(4)
    expected = np.zeros(4)
    for t in range(1, 4):
        g = np.sin(np.arange(4.0) + t)
        w, state = adam_step(w, [g], state, [0.1])
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g**2
        expected = expected - 0.1 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    assert np.allclose(w[0], expected, rtol=1e-12)
    assert rng == PCG32(5)  # no randomness used

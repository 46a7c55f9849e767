"""The checks of the exercises whose check cell would give their answer away.

A check cell sits under its exercise, and a student reads it before trying. Most checks
compare an answer with a number and say what a typical wrong value means: nothing there is
the answer. Some must compute the right answer to compare with, or answer a mistake with the
line that fixes it; written in the cell, that line would be read before the exercise is
tried. Those checks live here, one function each, called from their cell as
`with Check("Exercise 1"): variance_of_a_sum(var_z, relu_ms)`: the hints stay out of the
student's sight until a wrong answer calls for them (a first wrong try gets the idea, a
second one the line too; `tinyinit.quiz.check_value`).

>>> variance_of_a_sum(2.0, 1.0)   # nothing to say: right
>>> variance_of_a_sum(1.0, 1.0)
Traceback (most recent call last):
...
tinyinit.quiz.NotYet: not yet: `var_z` = 1. Hint: About 1 is what inputs centred at 0 give, \
or one weight vector shared by all the sums: x must be 1 + normal, and every sum needs its own \
weights.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .quiz import check, check_value

__all__ = ["mean_squares_loop", "variance_of_a_sum"]


def variance_of_a_sum(var_z, relu_ms) -> None:
    """Notebook 01, exercise 1: Var(z) and E[max(z, 0)^2] for n = 256 weights of std 1/16 and
    inputs 1 + N(0, 1), measured on 20 000 sums. Raises NotYet with a hint, or returns.

    >>> variance_of_a_sum(2.02, 0.99)
    """
    rows = "each row of w and x is one sum: shape (n_samples, n), z = (w * x).sum(axis=1)."
    check_value(
        "var_z",
        var_z,
        2.0,
        tol=0.1,
        wrong={
            1.0: (
                "About 1 is what inputs centred at 0 give, or one weight vector shared by all "
                "the sums: x must be 1 + normal, and every sum needs its own weights.",
                "w = std * normal(rng, n_samples * n).reshape(n_samples, n), x likewise plus 1.",
            ),
            2 / 256: (
                "About 2/256 is the variance of one product w_j x_j (or weights of std "
                "1/256): z adds up the n products of a row, with weights of std 1/16.",
                rows,
            ),
            512.0: ("The weights are standard normal: scale them by std = 1/16.", rows),
            20_000 * 2 / 256: ("You summed over the samples (axis 0), not over the inputs.", rows),
        },
        hint=("z has one value per row: the sum of that row's n products.", rows),
    )
    check_value(
        "relu_ms",
        relu_ms,
        1.0,
        tol=0.07,
        wrong={
            float(var_z): "That is Var(z): take the ReLU first, np.maximum(z, 0), then the mean "
            "square.",
            1 - 1 / np.pi: (
                "That is the variance of max(z, 0): np.var takes its mean out, but the next layer "
                "feels E[h^2], mean included.",
                "relu_ms = np.mean(np.maximum(z, 0) ** 2)",
            ),
            1 / np.sqrt(np.pi): "That is the mean of max(z, 0): square before you average.",
        },
        hint=("The mean square of max(z, 0).", "relu_ms = np.mean(np.maximum(z, 0) ** 2)"),
    )


def mean_squares_loop(mean_squares: Callable) -> np.ndarray:
    """Notebook 03, exercise 1: mean_squares(x, weights, phi) on a small stack whose right
    answer differs from each typical mistake's. Returns what it gave on that stack.

    >>> def mean_squares(x, weights, phi):
    ...     h, m = x, [np.mean(x**2)]
    ...     for W in weights:
    ...         h = phi(W @ h)
    ...         m.append(np.mean(h**2))
    ...     return np.array(m)
    >>> mean_squares_loop(mean_squares).round(3).tolist()
    [3.562, 9.25, 9.25]
    """

    def relu(z):
        return np.maximum(z, 0.0)

    x = np.array([[1.0, -2.0], [3.0, 0.5]])  # 2 units, 2 samples
    w = np.array([[0.0, 2.0], [1.0, -1.0]])  # not symmetric: the transpose is another stack
    got = np.asarray(mean_squares(x, [w, w], relu), dtype=float)
    h1, h1_t = relu(w @ x), relu(w.T @ x)
    right = [np.mean(x**2), np.mean(h1**2), np.mean(relu(w @ h1) ** 2)]
    of_z = [np.mean(x**2), np.mean((w @ x) ** 2), np.mean((w @ h1) ** 2)]
    transposed = [np.mean(x**2), np.mean(h1_t**2), np.mean(relu(w.T @ h1_t) ** 2)]
    check(got.shape == (3,), f"{got.size} values: return L + 1 = 3, the input's m_0 first")
    check(not np.allclose(got, of_z), "that is the mean square of z = W @ h: measure h = phi(z)")
    check(not np.allclose(got, transposed), "W @ h, not W.T @ h: row i of W feeds unit i")
    check(not np.allclose(got, np.sqrt(right)), "a mean square, not its root: np.mean(h**2)")
    check(np.allclose(got, right), f"expected {np.round(right, 3)}, got {np.round(got, 3)}")
    return got

"""The checks of the exercises whose check cell would give their answer away.

A check cell sits under its exercise, and a student reads it before trying. Most checks
compare an answer with a number and say what a typical wrong value means: nothing there is
the answer. Some must compute the right answer to compare with, or answer a mistake with the
line that fixes it; written in the cell, that line would be read before the exercise is
tried. Those checks live here, one function each, called from their cell as
`with Check("Exercise 1"): variance_of_a_sum(var_z, relu_ms)`: the hints stay out of the
student's sight until a wrong answer calls for them (a first wrong try gets the idea, a
second one the line too; `tinyinit.course.quiz.check_value`).

>>> variance_of_a_sum(2.0, 1.0)   # nothing to say: right
>>> variance_of_a_sum(1.0, 1.0)
Traceback (most recent call last):
...
tinyinit.course.quiz.NotYet: not yet: `var_z` = 1. Hint: About 1 is what inputs centred at 0 give, \
or one weight vector shared by all the sums: x must be 1 + normal, and every sum needs its own \
weights.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from ..core.activations import relu
from ..core.arguments import is_integer, is_number
from .quiz import NotYet, Unanswered, check, check_value

__all__ = [
    "adam_first_step",
    "gradient_ratio",
    "elu_gain",
    "first_xavier_weight",
    "gpt_mlp_addition",
    "kaiming_uniform_by_hand",
    "learning_rate_for_the_ratio",
    "mean_squares_loop",
    "scale_that_holds",
    "tanh_gain_for_half",
    "truncation_sigma",
    "variance_of_a_sum",
    "xavier_relu_gain",
    "zero_output_layer",
]


def variance_of_a_sum(var_z, relu_ms) -> None:
    """Notebook 01, exercise 1: Var(z) and E[max(z, 0)^2] for n = 256 weights of std 1/16 and
    inputs 1 + N(0, 1), measured on 20 000 sums. Raises NotYet with a hint, or returns.

    >>> variance_of_a_sum(2.02, 0.99)
    """
    rows = (
        "Each of the n_samples rows of w and of x holds the n terms of one sum: add up each row "
        "(section 3's z = sum_j w_j x_j; the axis of the n inputs)."
    )
    check_value(
        "var_z",
        var_z,
        2.0,
        tol=0.1,
        wrong={
            1.0: (
                "About 1 is what inputs centred at 0 give, or one weight vector shared by all "
                "the sums: x must be 1 + normal, and every sum needs its own weights.",
                "Both arrays hold n_samples * n draws, shape (n_samples, n): w of std 1/16, x the "
                "shifted normals 1 + N(0, 1) of section 2.",
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
                "E[max(z, 0)^2]: square each value of max(z, 0), then average (section 5).",
            ),
            1 / np.sqrt(np.pi): "That is the mean of max(z, 0): square before you average.",
        },
        hint=(
            "The mean square of max(z, 0).",
            "E[max(z, 0)^2]: square each value of max(z, 0), then average (section 5).",
        ),
    )


def scale_that_holds(scale, mean_squares: Callable) -> None:
    """Notebook 01, exercise 1: a scale of the standard normal weights that keeps the mean
    square after 50 layers within 0.5 to 2; mean_squares(scale) is the notebook's experiment,
    the mean square after each layer. Prints what it measured, then raises NotYet or returns.

    >>> scale_that_holds(0.5, lambda scale: 1.1 ** np.arange(1, 51))
    Traceback (most recent call last):
    ...
    tinyinit.course.quiz.NotYet: not yet. Hint: scale 0.5: the mean square after 50 layers is \
117, 1.1 times larger at each layer. The factor of a layer goes as scale^2: try a smaller scale.
    """
    check(is_number(scale) and scale > 0, f"scale must be a number > 0, got {scale!r}")
    squares = np.asarray(_yours("mean_squares", mean_squares, scale), dtype=float)
    check(squares.ndim == 1 and len(squares) >= 2, "mean_squares(scale) must give one per layer")
    with np.errstate(all="ignore"):
        factor = float(np.median(squares[1:11] / squares[:10]))
    end = squares[-1]
    said = f"scale {scale:.4g}: the mean square after {len(squares)} layers is {end:.3g}"
    check(
        np.isfinite(end) and end <= 2,
        f"{said}, {factor:.3g} times larger at each layer. The factor of a layer goes as "
        "scale^2: try a smaller scale.",
    )
    check(
        end >= 0.5,
        f"{said}, {factor:.3g} times smaller at each layer. The factor of a layer goes as "
        "scale^2: try a larger scale.",
    )
    print(f"{said}: it holds.")


def mean_squares_loop(mean_squares: Callable) -> np.ndarray:
    """Notebook 03, exercise 1: mean_squares(x, weights, phi) on a small stack whose right
    answer differs from each typical mistake's, then on 20 Xavier ReLU layers of width 256
    against `simulate` (what it wrote, fast). Returns what it gave on the small stack.

    >>> def mean_squares(x, weights, phi):
    ...     h, m = x, [np.mean(x**2)]
    ...     for W in weights:
    ...         h = phi(W @ h)
    ...         m.append(np.mean(h**2))
    ...     return np.array(m)
    >>> mean_squares_loop(mean_squares).round(3).tolist()
    your loop, Xavier: m_20 = 2^-19.66; simulate, 3 networks: 2^-20.51 to 2^-19.76
    [3.562, 9.25, 9.25]
    """

    x = np.array([[1.0, -2.0], [3.0, 0.5]])  # 2 units, 2 samples
    w = np.array([[0.0, 2.0], [1.0, -1.0]])  # not symmetric: the transpose is another stack
    got = _yours("mean_squares", mean_squares, x, [w, w], relu).astype(float)
    h1, h1_t = relu(w @ x), relu(w.T @ x)
    right = [np.mean(x**2), np.mean(h1**2), np.mean(relu(w @ h1) ** 2)]
    of_z = [np.mean(x**2), np.mean((w @ x) ** 2), np.mean((w @ h1) ** 2)]
    transposed = [np.mean(x**2), np.mean(h1_t**2), np.mean(relu(w.T @ h1_t) ** 2)]
    check(got.shape == (3,), f"{got.size} values: return L + 1 = 3, the input's m_0 first")
    check(not np.allclose(got, of_z), "that is the mean square of z = W @ h: measure h = phi(z)")
    check(not np.allclose(got, transposed), "W @ h, not W.T @ h: row i of W feeds unit i")
    check(not np.allclose(got, np.sqrt(right)), "a mean square, not its root: np.mean(h**2)")
    check(np.allclose(got, right), f"expected {np.round(right, 3)}, got {np.round(got, 3)}")
    _twenty_xavier_layers(mean_squares)
    return got


def _twenty_xavier_layers(mean_squares: Callable) -> None:
    """mean_squares on 20 Xavier ReLU layers of width 256, beside simulate's 3 networks."""
    from ..core.distributions import normal
    from ..core.init import xavier_normal
    from ..core.pcg32 import PCG32
    from ..physics.propagation import simulate

    rng = PCG32(0)
    x = normal(PCG32(1), 256 * 64).reshape(256, 64)
    weights = [xavier_normal((256, 256), 1.0, rng) for _ in range(20)]
    loop = _yours("mean_squares", mean_squares, x / np.sqrt(np.mean(x**2)), weights, relu)
    fast = simulate("relu", "xavier_normal", n_layers=20, width=256, seeds=3)
    print(
        f"your loop, Xavier: m_20 = 2^{np.log2(loop[20]):.2f}; simulate, 3 networks: "
        f"2^{np.log2(fast.low[20]):.2f} to 2^{np.log2(fast.high[20]):.2f}"
    )
    check(
        abs(np.log2(loop[20] / fast.median[20])) < 2, "your m_20 is far from simulate's: m_0 = 1?"
    )


def xavier_relu_gain(gain_squared) -> None:
    """Notebook 02, exercise 1: the g^2 for which Xavier-normal with gain g on the (4, 3) layer,
    inputs of E[x^2] = 1, then a ReLU, give E[relu(z)^2] = 1; exactly, a Fraction.

    The hint grows with each wrong try (`tinyinit.course.quiz.check_value`); the first:

    >>> xavier_relu_gain(Fraction(1, 1))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    tinyinit.course.quiz.NotYet: not yet: `gain_squared` = 1. Hint: Var(z) = n_in sigma^2 E[x^2] \
(card 2.2) with Xavier's sigma^2 times g^2 (card 2.3); then the ReLU keeps half (card 2.2)...
    """
    n_in, n_out = 3, 4
    right = Fraction(2 * (n_in + n_out), 2 * n_in)  # (1/2) n_in g^2 2 / (n_in + n_out) = 1
    where = (
        "Card 2.2: Var(z) = n_in sigma^2 E[x^2], and the ReLU keeps half; card 2.3: Xavier's sigma."
    )
    check(
        not (
            is_number(gain_squared) and math.isclose(gain_squared, math.sqrt(right), rel_tol=1e-6)
        ),
        "that is g, a standard deviation's factor: the question asks for g^2, as a Fraction",
    )
    check_value(
        "gain_squared",
        gain_squared,
        right,
        exact=True,
        wrong={
            right / 2: ("The ReLU keeps half of Var(z): E[relu(z)^2] = Var(z) / 2.", where),
            Fraction(n_in + n_out, n_out): ("Each output sums n_in products, not n_out.", where),
            Fraction(2): (
                "2 is ReLU's g^2 for Kaiming, whose sigma = g / sqrt(n_in); Xavier's "
                "sigma^2 has n_in + n_out below.",
                where,
            ),
            Fraction(n_in + n_out): ("Var(z) adds n_in products: n_in sigma^2 E[x^2].", where),
        },
        hint=(
            "Var(z) = n_in sigma^2 E[x^2] (card 2.2) with Xavier's sigma^2 times g^2 (card 2.3); "
            "then the ReLU keeps half (card 2.2).",
            "Write E[relu(z)^2] with g^2 in it, set it to 1 and solve for g^2.",
        ),
    )


def gradient_ratio(ratio_10) -> None:
    """Notebook 04, exercise 1: section 4's theory of Xavier's per-example weight-gradient norm
    over Kaiming's, for a ReLU MLP of L = 10 square weight matrices; judged by its power of 2.

    >>> gradient_ratio(2 ** -5)
    Traceback (most recent call last):
    ...
    tinyinit.course.quiz.NotYet: not yet: `log2(ratio_10)` = -5. Hint: L matrices have L - 1 ReLU \
layers between them: count the halvings of the layers between the matrices.
    """
    n_matrices = 10
    check(is_number(ratio_10) and ratio_10 > 0, f"ratio_10 must be a number > 0, got {ratio_10!r}")
    count = "forward and backward together lose a factor 2 of the mean square per ReLU layer"
    check_value(
        "log2(ratio_10)",
        math.log2(ratio_10),
        -(n_matrices - 1) / 2,
        tol=0.1,
        wrong={
            -n_matrices / 2: (
                "L matrices have L - 1 ReLU layers between them: count the halvings of the "
                "layers between the matrices."
            ),
            -(n_matrices - 1): ("That is the mean square's ratio: a norm is its root.", count),
            -10: (
                "2^-10 is section 4's network of L = 21 matrices: count for this one's L = 10.",
                count,
            ),
        },
        hint=(f"Section 4: {count}; a norm is the root of a mean square.", count),
    )


# --- notebook 08: init and learning rate --------------------------------------------------


def adam_first_step(answer_2) -> float:
    """Notebook 08, exercise 2: how far Adam's first step (eta = 1e-3) moves z = sum_j w_j h_j
    of a width-4096 layer with inputs h_j = |g_j|. Returns the measured move.

    >>> round(adam_first_step(1e-3 * 4096 * (2 / math.pi) ** 0.5), 3)
    answer 3.268, measured 3.272
    3.272
    """
    from ..core.distributions import normal
    from ..core.pcg32 import PCG32
    from ..networks.mup import adam_init, adam_step

    formula = "|dz| = eta * sum |h_j| = eta * n * E|h|, E|h| = sqrt(2 / pi)"
    check_value(
        "answer_2",
        answer_2,
        1e-3 * 4096 * math.sqrt(2 / math.pi),
        tol=0.1,
        wrong={
            1e-3 * 4096: ("The inputs are |g|, of mean E|g| = sqrt(2/pi), not 1.", formula),
            1e-3 * 64 * math.sqrt(2 / math.pi): (
                "sqrt(n) is init's random-sign sum; the step's n moves all point with h_j.",
                formula,
            ),
            1e-3: ("eta is one weight's move; z sums n of them, each times h_j.", formula),
        },
        hint=(
            "Adam's first step moves each weight by eta with the sign of its gradient, all in "
            "step with h_j.",
            formula,
        ),
    )
    h = np.abs(normal(PCG32(1), 4096))
    w = normal(PCG32(2), 4096) / 64
    measured = float(abs((adam_step([w], [h], adam_init([w]), [1e-3])[0][0] - w) @ h))
    print(f"answer {answer_2:.3f}, measured {measured:.3f}")
    check(abs(answer_2 / measured - 1) < 0.03, "the measured step is printed above")
    return measured


def zero_output_layer(after_one_step, answer_3, x_task, t_task) -> None:
    """Notebook 08, exercise 3: rms(y) after one Adam step from a zero output layer under
    muP, at widths 64, 256 and 1024, and its max/min over the widths, on the task (x_task,
    t_task); the right runs and the typical wrong ones are run here, as the exercise asks.

    >>> from tinyinit import PCG32
    >>> from tinyinit.networks.mup import make_regression
    >>> x, t = make_regression(PCG32(0, stream=1), 64, 16, 4)
    >>> zero_output_layer([0.1931, 0.1723, 0.183], 0.1931 / 0.1723, x, t)
    rms(y) after one step: [0.193 0.172 0.183]  max/min = 1.121
    """
    from ..core.pcg32 import PCG32
    from ..networks.mup import init_mlp, layer_learning_rates, train_regression

    def after_one_adam_step(width: int, parametrization: str, zero_output: bool) -> float:
        weights = init_mlp(16, width, 4, "mup", PCG32(0), n_layers=3)
        if zero_output:
            weights[-1] = np.zeros_like(weights[-1])
        lrs = layer_learning_rates(
            0.01, parametrization, "adam", n_layers=3, width=width, base_width=64
        )
        return float(train_regression(weights, x_task, t_task, lrs, "adam", 1)[2][1, -1])

    x_task, t_task = _task(x_task, t_task)
    given = _numbers(after_one_step)
    ratio = f"{answer_3:.3f}" if is_number(answer_3) else repr(answer_3)
    print("rms(y) after one step:", np.round(given, 3), f" max/min = {ratio}")
    check(
        given.shape == (3,) and (given > 0).all(),
        "after_one_step holds rms(y) after one step for the widths 64, 256 and 1024 "
        "(a zero output layer gives y = 0 before the step, not after it)",
    )
    # before the eight training runs below, which a ratio that is no number would wait for
    check(is_number(answer_3), f"`answer_3` must be a number, got {answer_3!r}")
    runs = (
        "weights = init_mlp(16, width, 4, 'mup', PCG32(0), n_layers=3); weights[-1] = 0; "
        "train_regression(..., 'adam', 1)"
    )
    check_value(
        "after_one_step[0]",
        given[0],
        after_one_adam_step(64, "mup", zero_output=True),
        tol=0.02,
        wrong={
            after_one_adam_step(64, "mup", zero_output=False): (
                "That is the run with its random output layer: set weights[-1] to zeros first.",
                runs,
            )
        },
        hint=("At width 64 muP is SP: one Adam step from a zero output layer, eta = 0.01.", runs),
    )
    widths = (64, 256, 1024)
    mup = [after_one_adam_step(n, "mup", zero_output=True) for n in widths]
    sp = [after_one_adam_step(n, "sp", zero_output=True) for n in widths]
    rates = "layer_learning_rates(0.01, 'mup', 'adam', n_layers=3, width=width, base_width=64)"
    check_value(
        "answer_3",
        answer_3,
        max(mup) / min(mup),
        tol=0.03,
        wrong={
            max(sp) / min(sp): (
                "Under SP's learning rates rms(y) grows with width: use muP's of section 4.",
                rates,
            )
        },
        hint=(
            "max(after_one_step) / min(after_one_step), with muP's init and learning rates.",
            rates,
        ),
    )


# --- notebook 09: pitfalls lab ------------------------------------------------------------


def kaiming_uniform_by_hand(my_kaiming_uniform: Callable) -> None:
    """Notebook 09, exercise 1: my_kaiming_uniform(shape, fan_mode, nonlinearity, rng) against
    tinyinit's kaiming_uniform, on the convolution (8, 4, 3, 3) and two more calls.

    >>> from tinyinit import kaiming_uniform
    >>> kaiming_uniform_by_hand(kaiming_uniform)
    """
    from ..core.init import kaiming_uniform
    from ..core.pcg32 import PCG32

    conv = (8, 4, 3, 3)  # Conv2d(4 -> 8, 3x3): fan_in 4 * 9 = 36, fan_out 8 * 9 = 72
    mine = _yours("my_kaiming_uniform", my_kaiming_uniform, conv, "fan_in", "relu", PCG32(0))
    ref = kaiming_uniform(conv, "fan_in", "relu", PCG32(0))
    check(mine.shape == conv, f"my_kaiming_uniform{conv} must have shape {conv}, got {mine.shape}")
    ratio = mine.astype(np.float64) / ref
    draw = "element k is -a + 2a * u[k], u = uniforms(rng, math.prod(shape)), reshaped row-major"
    check(
        np.allclose(ratio, ratio.mean(), rtol=1e-4),
        f"the weights are not the reference's times one factor: {draw}",
    )
    bound = "a = sqrt(3) * calculate_gain(nonlinearity) / sqrt(fan), fans(shape) for the fans"
    check_value(
        "the bound of my_kaiming_uniform over the reference's",
        float(ratio.mean()),
        1.0,
        tol=0.02,
        wrong={
            3.0: ("The kernel is forgotten: each output sums 4 * 3 * 3 = 36 terms, not 4.", bound),
            1 / math.sqrt(3): ("That bound is the std: U(-a, a) has variance a^2 / 3.", bound),
            math.sqrt(36 / 72): ("fan_out is used where fan_mode asks for fan_in.", bound),
            math.sqrt(2): ("ReLU's gain is sqrt(2); 2 is its variance factor (section 4).", bound),
        },
        hint=("The bound is sqrt(3) times Kaiming's std.", bound),
    )
    check(mine.dtype == np.float32, f"the weights must be float32, got {mine.dtype}")
    for shape, mode in (((8, 4, 3, 3), "fan_out"), ((5, 3), "fan_in")):
        same = np.array_equal(
            _yours("my_kaiming_uniform", my_kaiming_uniform, shape, mode, "tanh", PCG32(1)),
            kaiming_uniform(shape, mode, "tanh", PCG32(1)),
        )
        check(
            same,
            f"my_kaiming_uniform({shape}, {mode!r}, 'tanh', ...) differs from the reference: "
            + bound,
        )


def truncation_sigma(trunc_sigma) -> float:
    """Notebook 09, exercise 3: the sigma whose normal, truncated at +-2 sigma, has std 0.02.
    Returns the std of a fresh draw with it.

    >>> round(truncation_sigma(0.02274), 3)
    trunc_sigma = 0.02274: a fresh draw of 100,000 has std 0.02007
    0.02
    """
    from ..core.init import trunc_normal_init
    from ..core.pcg32 import PCG32

    phi2 = math.exp(-2) / math.sqrt(2 * math.pi)
    keeps = math.sqrt(1 - 4 * phi2 / math.erf(math.sqrt(2)))  # std / sigma at +-2 sigma
    formula = f"the std keeps a fraction {keeps:.3f} of sigma: trunc_sigma = 0.02 / {keeps:.3f}"
    check_value(
        "trunc_sigma",
        trunc_sigma,
        0.02 / keeps,
        tol=3e-4,
        wrong={
            0.02: (
                "Cutting the tails at +-2 sigma lowers the std: pass a larger sigma. "
                "(torch's default cutoffs, +-2 in absolute units, cut nothing.)",
                formula,
            ),
            0.02 * keeps: (
                "That is the std you would get from sigma = 0.02: divide by the fraction kept, "
                "not multiply.",
                formula,
            ),
        },
        hint=("Measure std / s for cutoffs a = -2 s, b = 2 s, then divide 0.02 by it.", formula),
    )
    s = trunc_sigma
    std = float(trunc_normal_init((100_000,), s, PCG32(1), a=-2 * s, b=2 * s).std())
    print(f"trunc_sigma = {trunc_sigma:.5f}: a fresh draw of 100,000 has std {std:.5f}")
    check(abs(std - 0.02) < 3e-4, "a fresh draw should have std 0.02")
    return std


# --- notebook 05: gains from first principles -------------------------------------------------


def elu_gain(answer_1) -> None:
    """Notebook 05, exercise 1: the single-layer gain of ELU (alpha = 1), against an
    independent fine trapezoid over the same integral.

    >>> elu_gain(1.2452)
    ELU gain 1.245200 (a trapezoid on 200,001 points gives 1.245198)
    """
    xi = np.linspace(-12, 12, 200_001)
    elu = np.where(xi > 0, xi, np.expm1(np.minimum(xi, 0)))
    density = np.exp(-(xi**2) / 2) / math.sqrt(2 * math.pi)

    def trapezoid(f):
        return float(np.sum((f[1:] + f[:-1]) / 2 * np.diff(xi)))

    mean_square, mean = trapezoid(elu**2 * density), trapezoid(elu * density)
    right = 1 / math.sqrt(mean_square)
    formula = (
        "gain = 1 / sqrt(E[elu(xi)^2]), xi ~ N(0, 1): single_layer_gain takes a function of z."
    )
    check_value(
        "answer_1",
        answer_1,
        right,
        tol=0.005,
        wrong={
            math.sqrt(2): (
                "That is ReLU's gain: ELU is not ReLU, its negative half is e^z - 1, not 0.",
                formula,
            ),
            1.0: ("That is the linear gain: ELU bends below 0.", formula),
            mean_square: (
                "That is E[elu(xi)^2] itself: the gain is what brings it back to 1.",
                formula,
            ),
            1 / mean_square: (
                "That is g^2, the factor on the mean square: the gain is its root.",
                formula,
            ),
            math.sqrt(mean_square): (
                "That is the root mean square of elu(xi): the gain is its inverse.",
                formula,
            ),
            1 / math.sqrt(mean_square - mean**2): (
                f"That uses Var(elu(xi)): ELU's output has a mean ({mean:.2f}), and the next layer "
                "feels the mean square, mean included.",
                formula,
            ),
        },
        hint=("The gain g makes one layer keep the mean square: g^2 E[elu(xi)^2] = 1.", formula),
    )
    print(f"ELU gain {answer_1:.6f} (a trapezoid on 200,001 points gives {right:.6f})")


def tanh_gain_for_half(answer_2) -> None:
    """Notebook 05, exercise 2: the tanh gain whose deep stack settles where the activations'
    mean square is 0.5.

    >>> tanh_gain_for_half(1.891)
    gain 1.891000 settles at activations' mean square 0.500013
    """
    from ..physics.gains import gain_for_fixed_point, single_layer_gain
    from ..physics.mean_field import activation_mean_square, fixed_point

    # q* by interpolation on a grid (E[tanh^2] grows with q), then its gain.
    grid = np.linspace(1.0, 3.0, 401)
    q_half = float(np.interp(0.5, [activation_mean_square("tanh", q) for q in grid], grid))
    right = gain_for_fixed_point("tanh", q_half)
    at_5_3 = activation_mean_square("tanh", fixed_point("tanh", 5 / 3))
    formula = (
        "Find q* with activation_mean_square('tanh', q*) = 0.5 (bisection on q), "
        "then answer_2 = gain_for_fixed_point('tanh', q*)."
    )
    check_value(
        "answer_2",
        answer_2,
        right,
        tol=0.005,
        wrong={
            gain_for_fixed_point("tanh", 0.5): (
                "0.5 is the activations' mean square E[tanh(z)^2], not the pre-activations' q*.",
                formula,
            ),
            5 / 3: (
                f"5/3 is the usual tanh gain: its stack settles at {at_5_3:.2f}, not 0.5.",
                formula,
            ),
            single_layer_gain("tanh"): (
                "That is the single-layer gain: it holds q = 1 for one layer; a deep stack of it "
                "settles elsewhere.",
                formula,
            ),
            right**2: ("That is g^2: the gain is its root.", formula),
            math.sqrt(q_half): ("That is sqrt(q*): the gain is sqrt(q* / E[tanh(z)^2]).", formula),
            math.sqrt(2): (
                "1 / sqrt(0.5) rescales one layer; ask where the deep stack settles.",
                formula,
            ),
        },
        hint=("A deep stack settles at the q* where g^2 E[tanh(z)^2] = q*, z ~ N(0, q*).", formula),
    )
    settled = activation_mean_square("tanh", fixed_point("tanh", answer_2))
    print(f"gain {answer_2:.6f} settles at activations' mean square {settled:.6f}")
    check(abs(settled - 0.5) < 0.002, "the stack of your gain must settle at mean square 0.5")


# --- notebook 07: a transformer's init -------------------------------------------------------


def gpt_mlp_addition(answer_3, measured: float, *, width: int = 64, n_blocks: int = 24) -> None:
    """Notebook 07, exercise 3: the mean variance one MLP adds to the residual stream of the
    notebook's model (d = `width`) with `n_blocks` blocks, against the trace `measured`.

    >>> gpt_mlp_addition(0.001967, 0.0019)
    answer 0.00197, measured 0.00190
    """
    from ..networks.transformer import gelu_mean_square

    check(
        is_number(measured) and 0 < measured < math.inf, f"measured must be > 0, got {measured!r}"
    )
    for name, count in (("width", width), ("n_blocks", n_blocks)):
        check(is_integer(count) and count >= 1, f"{name} must be a count >= 1, got {count!r}")
    sigma_out, ms = 0.02 / math.sqrt(2 * n_blocks), gelu_mean_square(2.0)
    d = width
    right = 4 * d * sigma_out**2 * ms
    formula = "4d sigma_out^2 E[gelu(z)^2], d = 64, sigma_out = 0.02 / sqrt(2N), z ~ N(0, 2)."
    check_value(
        "answer_3",
        answer_3,
        right,
        tol=0.02 * right,
        wrong={
            4 * d * 0.02**2 * ms: (
                f"With N = {n_blocks} blocks the output projection's std is 0.02 / sqrt(2N), "
                "not 0.02.",
                formula,
            ),
            4 * d * 0.02**2 / n_blocks * ms: (
                "N blocks make 2N additions: sigma_out = 0.02 / sqrt(2N).",
                formula,
            ),
            4 * 512 * sigma_out**2 * ms: (
                "d is this notebook's width, 64, not exercise 1's 512.",
                formula,
            ),
            d * sigma_out**2 * ms: (
                "The MLP's hidden width is 4d: its down-projection sums 4d products.",
                formula,
            ),
            4 * d * sigma_out**2 * 2: (
                "GELU keeps only part of Var(z) = 2: use gelu_mean_square(2.0).",
                formula,
            ),
            4 * d * sigma_out**2 * 1: (
                "That is ReLU's half of Var(z): GELU keeps gelu_mean_square(2.0).",
                formula,
            ),
        },
        hint=("One MLP adds 4d products of hidden units and down-projection weights.", formula),
    )
    print(f"answer {answer_3:.5f}, measured {measured:.5f}")
    check(
        abs(measured / answer_3 - 1) < 0.1,
        "the measured trace disagrees with your answer by more than 10 %",
    )


# --- notebook 10: the generator's bits ---------------------------------------------------------


def first_xavier_weight(answer_w0) -> None:
    """Notebook 10, exercise 1: the first Xavier-uniform weight of a (4, 3) layer drawn from
    PCG32(7), by hand, bit for bit.

    >>> from tinyinit import PCG32, xavier_uniform
    >>> first_xavier_weight(xavier_uniform((4, 3), 1.0, PCG32(7))[0, 0])
    by hand 0.26278072595596313: xavier_uniform's, bit for bit
    """
    from ..core.init import xavier_uniform
    from ..core.pcg32 import PCG32

    expected = xavier_uniform((4, 3), 1.0, PCG32(7))[0, 0]
    check(is_number(answer_w0), f"answer_w0 must be a number, got {answer_w0!r}")
    check(
        abs(float(answer_w0) - float(expected)) < 1e-6,
        "the first word gives the high 27 bits, the second the low 26: uniform_from_words(a, b) "
        "in the order they were drawn; then w = -a + 2a u with a = sqrt(6/7)",
    )
    check(
        answer_w0 == expected,
        "right value, not yet bit for bit: round the float64 result to float32 once, at the end",
    )
    print(f"by hand {answer_w0}: xavier_uniform's, bit for bit")


# --- notebook 13: when initialization stops mattering -----------------------------------------


def learning_rate_for_the_ratio(lr_3, weight_norm: float, grad_norm: float) -> None:
    """Notebook 13, exercise 3: the learning rate whose first SGD step moves a layer by the
    update-to-data ratio UPDATE_RATIO (1e-3), given ||W|| and ||dL/dW|| at step 0.

    >>> learning_rate_for_the_ratio(0.5, 8.0, 0.016)
    """
    from ..physics.diagnostics import UPDATE_RATIO

    for name, norm in (("weight_norm", weight_norm), ("grad_norm", grad_norm)):
        check(is_number(norm) and 0 < norm < math.inf, f"{name} must be a norm > 0, got {norm!r}")
    right = UPDATE_RATIO * weight_norm / grad_norm
    formula = "ratio = lr * ||dL/dW|| / ||W||, so lr = 1e-3 * ||W|| / ||dL/dW||"
    check_value(
        "lr_3",
        lr_3,
        right,
        tol=0.01 * right,
        wrong={
            UPDATE_RATIO * grad_norm / weight_norm: ("The norms are the wrong way round.", formula),
            UPDATE_RATIO: ("1e-3 is the ratio, not the learning rate.", formula),
        },
        hint=("Solve the ratio's formula for lr.", formula),
    )


# --- what a student's answer is made of ------------------------------------------------------


def _yours(name: str, function, *args) -> np.ndarray:
    """What the student's function gives for args, as an array of numbers (its own dtype);
    Unanswered while it raises NotImplementedError (the stub), NotYet if it raises anything
    else or gives something else."""
    check(callable(function), f"{name} must be a function, got {function!r}")
    try:
        got = np.asarray(function(*args))
    except NotImplementedError:  # the stub, as the edition gives it: not answered yet
        raise Unanswered(f"{name} is not written yet") from None
    except Exception as error:  # noqa: BLE001 - the student's code may raise anything
        raise NotYet(f"not yet: {name} raised {type(error).__name__}: {error}") from None
    check(got.dtype.kind in "iuf", f"{name} must return numbers, got {got!r}"[:200])
    return got


def _task(x_task, t_task) -> tuple[np.ndarray, np.ndarray]:
    """Notebook 08's regression task, inputs (n, 16) and targets (n, 4) of finite numbers;
    NotYet if they are not."""
    try:
        x, t = np.asarray(x_task, dtype=float), np.asarray(t_task, dtype=float)
    except (TypeError, ValueError):
        x = t = np.empty(0)
    check(
        x.ndim == 2 and t.ndim == 2 and len(x) == len(t) >= 1
        and x.shape[1] == 16 and t.shape[1] == 4
        and np.isfinite(x).all() and np.isfinite(t).all(),
        "x_task and t_task must be the task of the exercise's cell: "
        "make_regression(PCG32(0, stream=1), 64, 16, 4)",
    )  # fmt: skip
    return x, t


def _numbers(value) -> np.ndarray:
    """value as a 1-D array of finite numbers; NotYet if it is not one."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        array = None
    check(
        array is not None and array.ndim == 1 and np.isfinite(array).all(),
        f"a list of numbers, got {value!r}",
    )
    return array

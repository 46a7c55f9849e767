"""my_init.py: the seven initializers of module card M07.3, written by you.

The notebooks ask for them one at a time, as each idea arrives, and then run their
experiments with them: what you write here draws the curves of 02, 03 and 04. Each
docstring gives the contract (what comes in, what goes out, what raises) and where the
formula is derived; the formula is yours to write.

What every initializer shares (the card, section 2.4): a weight has torch's layout, shape
(out, in, *kernel); it is a new float32 array of exactly that shape, filled in row-major
(C) order with exactly one draw per element from the generator `rng` you are given (a
tinyinit.PCG32), and nothing else is drawn. Uniforms come from rng.uniform() (or
uniforms(rng, n), the same numbers in one call), normals from normal(rng, n), one call for
the whole weight. Compute in float64 and cast to float32 once, at the end. Bad arguments
raise ValueError, before anything is drawn, with a message that names the argument.

From tinyinit, use only the generator and its draws (PCG32, uniforms, normal): the checker
refuses a function of tinyinit's handed in as yours. Check your file against the card's
eleven tests, from a terminal in this folder:

    python -m tinyinit check my_init.py

or from a notebook: `from tinyinit.course.checker import check_init` and `check_init("my_init.py")`.
"""

import math

import numpy as np

from tinyinit import PCG32, normal, uniforms


def fans(shape: tuple[int, ...]) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of shape (out, in, *kernel), torch's layout.

    fan_in counts the inputs that feed one output, fan_out the outputs one input feeds,
    each position of a kernel included (card section 2.3; notebook 01, section 6).
    fans((4, 3)) is (3, 4); fans((8, 4, 3, 3)) is (36, 72).
    ValueError for a shape of fewer than 2 dimensions, or with a fan of 0.
    """
    ### BEGIN SOLUTION
    if len(shape) < 2:
        raise ValueError(f"shape {shape} has no fans: it needs 2 dimensions, (out, in, *kernel)")
    r = math.prod(shape[2:])
    fan_in, fan_out = shape[1] * r, shape[0] * r
    if fan_in == 0 or fan_out == 0:
        raise ValueError(f"shape {shape} has fan_in {fan_in} and fan_out {fan_out}; need >= 1")
    return fan_in, fan_out
    ### END SOLUTION


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The gain g of an activation (std = g / sqrt(fan)), from torch's table.

    The table is the card's section 2.3, quoted in notebook 01, section 6: "linear",
    "conv1d" to "conv3d", "conv_transpose1d" to "conv_transpose3d", "sigmoid", "tanh",
    "relu", "leaky_relu" and "selu", and their gains. For "leaky_relu", param is the
    negative slope (0.01 when None). ValueError for a name the table does not know
    ("gelu"), or a param that is not a number ("0.2"), naming the argument, its value and
    what is accepted.
    """
    ### BEGIN SOLUTION
    table = {
        "linear": 1.0,
        "conv1d": 1.0,
        "conv2d": 1.0,
        "conv3d": 1.0,
        "conv_transpose1d": 1.0,
        "conv_transpose2d": 1.0,
        "conv_transpose3d": 1.0,
        "sigmoid": 1.0,
        "tanh": 5 / 3,
        "relu": math.sqrt(2.0),
        "selu": 3 / 4,
    }
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"param, leaky_relu's negative slope, must be a number: {param!r}")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity not in table:
        raise ValueError(f"unknown nonlinearity {nonlinearity!r}; known: {', '.join(table)}")
    return table[nonlinearity]
    ### END SOLUTION


def xavier_uniform(shape, gain: float, rng: PCG32) -> np.ndarray:
    """Glorot and Bengio's uniform initializer: W ~ U(-a, a), float32 of `shape`.

    a is the bound whose uniform has Xavier's variance times gain**2 (notebook 01,
    sections 4 and 5). Element k, in row-major order, comes from the k-th uniform of rng.
    ValueError for a shape without fans or a negative gain.
    """
    ### BEGIN SOLUTION
    fan_in, fan_out = fans(shape)
    if gain < 0:
        raise ValueError(f"gain must be >= 0, got {gain}")
    a = gain * math.sqrt(6 / (fan_in + fan_out))
    u = uniforms(rng, math.prod(shape))
    return (-a + 2 * a * u).astype(np.float32).reshape(shape)
    ### END SOLUTION


def xavier_normal(shape, gain: float, rng: PCG32) -> np.ndarray:
    """Glorot and Bengio's normal initializer: W ~ N(0, std**2), float32 of `shape`.

    std is Xavier's (notebook 01, section 4) times gain. Element k, in row-major order,
    comes from the k-th normal of rng. ValueError for a shape without fans or a negative
    gain.
    """
    ### BEGIN SOLUTION
    fan_in, fan_out = fans(shape)
    if gain < 0:
        raise ValueError(f"gain must be >= 0, got {gain}")
    std = gain * math.sqrt(2 / (fan_in + fan_out))
    return (std * normal(rng, math.prod(shape))).astype(np.float32).reshape(shape)
    ### END SOLUTION


def kaiming_normal(shape, fan_mode: str, nonlinearity: str, rng: PCG32) -> np.ndarray:
    """He et al.'s normal initializer: W ~ N(0, std**2), float32 of `shape`.

    std keeps the signal's size through a layer of `nonlinearity` (notebook 01, section
    5, with your calculate_gain), counting the fan that fan_mode names: "fan_in" keeps
    the forward signal, "fan_out" the gradients. Element k, in row-major order, comes
    from the k-th normal of rng. ValueError for a shape without fans, a fan_mode other
    than those two, or a nonlinearity your calculate_gain does not know.
    """
    ### BEGIN SOLUTION
    fan_in, fan_out = fans(shape)
    if fan_mode not in ("fan_in", "fan_out"):
        raise ValueError(f"fan_mode must be 'fan_in' or 'fan_out', got {fan_mode!r}")
    gain = calculate_gain(nonlinearity)
    fan = fan_in if fan_mode == "fan_in" else fan_out
    std = gain / math.sqrt(fan)
    return (std * normal(rng, math.prod(shape))).astype(np.float32).reshape(shape)
    ### END SOLUTION


def normal_init(shape, std: float, rng: PCG32) -> np.ndarray:
    """W ~ N(0, std**2), float32 of any `shape`, 1-D and empty ones included (no fans).

    Element k, in row-major order, comes from the k-th normal of rng. ValueError for a
    negative std or a negative dimension.
    """
    ### BEGIN SOLUTION
    if std < 0:
        raise ValueError(f"std must be >= 0, got {std}")
    if any(d < 0 for d in shape):
        raise ValueError(f"shape {shape} has a negative dimension")
    return (std * normal(rng, math.prod(shape))).astype(np.float32).reshape(shape)
    ### END SOLUTION


def scaled_residual_std(base_std: float, n_layers: int) -> float:
    """GPT-2's std for the two output projections of each of n_layers blocks.

    The std s for which everything the blocks add to the residual stream adds up to
    base_std**2, whatever n_layers is (card section 2.5; notebook 04, section 5).
    ValueError for n_layers < 1 or a negative base_std.
    """
    ### BEGIN SOLUTION
    if n_layers < 1:
        raise ValueError(f"n_layers must be >= 1, got {n_layers}")
    if base_std < 0:
        raise ValueError(f"base_std must be >= 0, got {base_std}")
    return base_std / math.sqrt(2 * n_layers)
    ### END SOLUTION

"""The initializers as a table (tinyinit.core.init.INITIALIZERS): each row is an initializer of
init.py with its arguments, and what a row draws is what that initializer returns."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from refusals import assert_refused

from tinyinit import (
    PCG32,
    kaiming_normal,
    normal,
    normal_init,
    orthogonal_init,
    xavier_normal,
    xavier_uniform,
)
from tinyinit.core.arguments import KindError
from tinyinit.core.init import (
    INITIALIZERS,
    LSUV_TOL,
    Initializer,
    calculate_gain,
    initializer_row,
    lsuv_factor,
    trunc_normal_init,
)
from tinyinit.physics.gains import initial_gain, suggested_gain

RELU_GAIN = math.sqrt(2.0)
# Each row as the call of init.py it stands for, at its knob's value in KNOBS (a gain, or a std).
KNOBS = {"kaiming_normal": RELU_GAIN, "kaiming_normal_fan_out": RELU_GAIN}
CALLS = {
    "xavier_uniform": lambda shape, rng: xavier_uniform(shape, 0.7, rng),
    "xavier_normal": lambda shape, rng: xavier_normal(shape, 0.7, rng),
    "kaiming_normal": lambda shape, rng: kaiming_normal(shape, "fan_in", "relu", rng),
    "kaiming_normal_fan_out": lambda shape, rng: kaiming_normal(shape, "fan_out", "relu", rng),
    "orthogonal_init": lambda shape, rng: orthogonal_init(shape, 0.7, rng),
    "normal_init": lambda shape, rng: normal_init(shape, 0.7, rng),
    # LSUV's start: orthonormal weights, each layer's factor then read from the batch
    "lsuv": lambda shape, rng: orthogonal_init(shape, 0.7, rng),
}
# The rows read from a batch, by the function that reads each layer's factor
FROM_BATCH = {"lsuv": lsuv_factor}


def test_every_row_is_an_initializer_of_init_py_and_its_key_spells_that_call():
    assert set(INITIALIZERS) == set(CALLS)
    for key, row in INITIALIZERS.items():
        assert row.key == key
        if key in FROM_BATCH:  # named for the rule that reads it: lsuv_factor
            assert FROM_BATCH[key].__name__ == f"{key}_factor" and row.std is None
        else:
            own = row.init.__name__
            assert key == own or key == f"{own}_{row.kwargs['fan_mode']}"
            assert row.from_batch is None and callable(row.std)
        assert row.knob in ("gain", "std") and row.uses_gain == (row.knob == "gain")


@pytest.mark.parametrize("key", list(CALLS))
@pytest.mark.parametrize("shape", [(5, 5), (3, 7), (7, 3)])
def test_a_row_draws_what_its_initializer_returns_layer_after_layer(key, shape):
    """One generator for the stack, as a model is initialized: the same bits as the calls."""
    draw = INITIALIZERS[key].initializer(KNOBS.get(key, 0.7))
    ours, theirs = PCG32(3), PCG32(3)
    for _ in range(3):
        got, expected = draw(shape, ours), CALLS[key](shape, theirs)
        assert got.dtype == np.float32 and got.shape == shape
        if key in ("orthogonal_init", "lsuv"):  # numpy's QR: exact to float tolerance only
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
        else:
            assert got.tobytes() == expected.tobytes()
    assert ours == theirs  # the generators stand at the same place


@pytest.mark.parametrize("key", [key for key in CALLS if key not in FROM_BATCH])
def test_a_row_s_std_is_what_its_weights_have(key):
    row = INITIALIZERS[key]
    w = row.initializer(0.7)((300, 200), PCG32(1)).astype(np.float64)
    assert math.isclose(math.sqrt(np.mean(w * w)), row.std(200, 300, 0.7), rel_tol=0.01)


def test_the_weights_are_proportional_to_the_knob_which_the_explorer_s_fast_path_uses():
    for row in INITIALIZERS.values():
        unit = row.initializer(1.0)((16, 16), PCG32(2)).astype(np.float64)
        twice = row.initializer(2.0)((16, 16), PCG32(2)).astype(np.float64)
        np.testing.assert_allclose(twice, 2 * unit, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("gain", [1.0, 0.5, 3.0])
def test_lsuv_s_factor_is_lsuv_factor_at_the_knob_and_brings_the_variance_to_gain_squared(gain):
    z = normal(PCG32(4), 600).reshape(20, 30) * 2.5  # Var(z) about 6.25
    factor = INITIALIZERS["lsuv"].batch_factor(gain)
    assert factor(z) == lsuv_factor(z, gain) == gain / np.sqrt(np.var(z))
    assert math.isclose(np.var(factor(z) * z), gain**2, rel_tol=1e-12)
    # already within tol of gain**2 (relative): left alone, as the paper's passes end
    near = z * gain * np.sqrt((1 + 0.9 * LSUV_TOL) / np.var(z))
    assert factor(near) == 1.0
    assert factor(z * gain * np.sqrt((1 + 1.1 * LSUV_TOL) / np.var(z))) < 1.0


def test_lsuv_s_factor_leaves_what_no_factor_can_fix_and_zero_gain_zeroes():
    z = np.array([[1.0, -3.0], [2.0, 0.5]])
    assert lsuv_factor(np.zeros((3, 4))) == 1.0  # a dead layer: nothing to read
    assert lsuv_factor(np.array([1.0, math.inf])) == 1.0  # an overflowed one
    assert lsuv_factor(np.array([1.0, math.nan])) == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and silent, as an overflowed stack is
        assert lsuv_factor(np.array([1e200, -1e200])) == 1.0  # Var(z) beyond float64: inf
        assert lsuv_factor(np.array([1.0, -math.inf])) == 1.0
    # the tolerance is reached on its bound: Var(z) = 4 is within tol = 3 of gain**2 = 1
    assert lsuv_factor(np.array([2.0, -2.0]), tol=3.0) == 1.0
    assert lsuv_factor(np.array([2.0, -2.0]), tol=2.5) == 0.5
    assert lsuv_factor(z, gain=0.0) == 0.0
    assert lsuv_factor(z, gain=1e200) == 1e200 / np.sqrt(np.var(z))  # gain**2 beyond float64
    unit = z / np.sqrt(np.var(z))
    assert lsuv_factor(unit * 1e-150, gain=1e-150) == 1.0  # within tol of gain**2, relative
    assert math.isclose(lsuv_factor(unit * 1e-150), 1e150, rel_tol=1e-12)


def test_lsuv_s_factor_and_a_row_not_read_from_a_batch_are_refused_in_their_own_words():
    assert_refused(
        [
            (lambda: lsuv_factor([]), ValueError,
             "z must hold a layer's output on a batch, at least one number, got an empty array"),
            (lambda: lsuv_factor(np.ones(2), gain=-1.0), ValueError,
             "gain must be a finite real number >= 0, got -1.0"),
            (lambda: lsuv_factor(np.ones(2), tol=math.inf), ValueError,
             "tol must be a finite real number >= 0, got inf"),
            (lambda: INITIALIZERS["kaiming_normal"].batch_factor(1.0), ValueError,
             "kaiming_normal is not read from a batch: its scale is its formula's"),
            (lambda: INITIALIZERS["lsuv"].batch_factor(-2.0), ValueError,
             "value must be a finite real number >= 0, got -2.0"),
        ]
    )  # fmt: skip


def test_a_row_s_title_is_its_label_unless_it_has_its_own():
    assert INITIALIZERS["normal_init"].title == "normal weights"
    row = INITIALIZERS["xavier_normal"]
    assert row.title == row.label == "Xavier normal"
    # and a row made now, as the table's were at import
    same = lambda fan_in, fan_out, std: std  # noqa: E731
    assert Initializer("n", "N", normal_init, {}, "std", same, "s").title == "N"
    assert Initializer("n", "N", normal_init, {}, "std", same, "s", title="T").title == "T"


def test_a_row_whose_function_has_no_unchecked_twin_draws_through_its_door():
    # trunc_normal_init: no unchecked twin (normal_init, which this test used, has one)
    cut = {"mean": 1.0, "a": 0.5, "b": 3.0}
    row = Initializer("t", "T", trunc_normal_init, cut, "std", lambda a, b, s: s, "s")
    np.testing.assert_array_equal(
        row.initializer(0.5)((2, 3), PCG32(0)), trunc_normal_init((2, 3), 0.5, PCG32(0), **cut)
    )


def test_a_row_and_its_knob_are_refused_in_their_own_words():
    assert_refused(
        [
            (
                lambda: initializer_row("kaiming_fan_in"),
                ValueError,
                "initializer must be one of xavier_uniform, xavier_normal, kaiming_normal, "
                "kaiming_normal_fan_out, orthogonal_init, normal_init, lsuv, "
                "got 'kaiming_fan_in'",
            ),
            (
                lambda: INITIALIZERS["xavier_normal"].initializer(-1.0),
                ValueError,
                "value must be a finite real number >= 0, got -1.0",
            ),
            (
                lambda: INITIALIZERS["normal_init"].initializer(math.nan),
                ValueError,
                "value must be a finite real number >= 0, got nan",
            ),
        ]
    )


def test_a_row_refuses_a_field_of_the_wrong_kind_in_the_package_s_words():
    def row(*fields, **named):
        key, label, init, kwargs, knob, std, formula = fields
        return lambda: Initializer(key, label, init, kwargs, knob, std, formula, **named)

    same = lambda fan_in, fan_out, std: std  # noqa: E731
    fields = ("n", "N", normal_init, {}, "std", same, "s")
    assert_refused(
        [
            (row(1, *fields[1:]), KindError, "key must be a str, got 1"),
            (row("n", 2, *fields[2:]), KindError, "label must be a str, got 2"),
            (row(*fields[:6], b"s"), KindError, "formula must be a str, got b's'"),
            (row(*fields, title=3), KindError, "title must be a str, got 3"),
            (row(*fields[:2], 3, *fields[3:]), KindError, "init must be a callable, got 3"),
            (row(*fields[:3], [], *fields[4:]), KindError,
             "kwargs must be a dict of the function's arguments, got []"),
            (row(*fields[:4], "mean", *fields[5:]), ValueError,
             "knob must be one of gain, std, got 'mean'"),
            (row(*fields[:5], None, "s"), KindError, "std must be a callable, got None"),
            (row(*fields, gain_from_activation=1), KindError,
             "gain_from_activation must be True or False, got 1"),
            (row(*fields, from_batch=3), KindError, "from_batch must be a callable, got 3"),
        ]
    )  # fmt: skip
    # A row read from a batch has no formula for its std; one that has both keeps both.
    assert row(*fields[:5], None, "s", from_batch=lsuv_factor)().std is None
    assert row(*fields, from_batch=lsuv_factor)().std is same


@pytest.mark.parametrize("activation", ["relu", "tanh", "leaky_relu", "selu", "gelu", "linear"])
def test_kaiming_starts_from_the_activation_s_gain_and_the_others_from_one(activation):
    for key, row in INITIALIZERS.items():
        expected = suggested_gain(activation)[0] if row.gain_from_activation else 1.0
        assert initial_gain(key, activation) == expected
        assert row.gain_from_activation == key.startswith("kaiming")
    if activation != "gelu":  # torch has no gain for gelu; the quadrature's is tested elsewhere
        assert initial_gain("kaiming_normal", activation) == calculate_gain(activation)
    assert initial_gain("kaiming_normal_fan_out", "relu") == math.sqrt(2.0)


@pytest.mark.parametrize("key", ["kaiming_normal", "kaiming_normal_fan_out", "normal_init"])
def test_at_any_gain_a_row_draws_the_normal_init_of_its_std_which_a_training_run_starts_from(
    key,
):
    """A gain that is no activation's (5/3 for Kaiming) is still the weights of init.py."""
    shape, gain = (24, 40), 5 / 3
    row = INITIALIZERS[key]
    drawn = row.initializer(gain if row.uses_gain else 0.05)(shape, PCG32(9))
    own = {
        "kaiming_normal": lambda: normal_init(shape, gain / np.sqrt(40), PCG32(9)),
        "kaiming_normal_fan_out": lambda: normal_init(shape, gain / np.sqrt(24), PCG32(9)),
        "normal_init": lambda: normal_init(shape, 0.05, PCG32(9)),
    }[key]()
    assert drawn.tobytes() == own.tobytes()

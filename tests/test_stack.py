"""The explorer's table of initializer schemes: a row checks itself, and says its gain."""

from __future__ import annotations

import math

import pytest

from tinyinit.init import calculate_gain
from tinyinit.stack import FANS, KINDS, SCHEMES, Scheme, suggested_gain

ROW = dict(key="k", label="A label", gain_from_activation=False, formula="f")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fan", FANS)
def test_a_row_of_any_known_kind_and_fan_is_made(kind, fan):
    row = Scheme(kind=kind, fan=fan, **ROW)
    assert (row.kind, row.fan, row.uses_gain) == (kind, fan, fan is not None)


@pytest.mark.parametrize(
    "kind, fan, message",
    [
        ("gaussian", "fan_in", "kind must be one of uniform, normal, got 'gaussian'"),
        ("normal", "fan_avg",
         "fan must be one of fan_in, fan_out, fan_in+fan_out, None, got 'fan_avg'"),
        ("gaussian", "fan_avg", "kind must be one of uniform, normal, got 'gaussian'"),
    ],
)  # fmt: skip
def test_a_row_of_an_unknown_kind_or_fan_is_refused_by_name(kind, fan, message):
    with pytest.raises(ValueError) as refusal:
        Scheme(kind=kind, fan=fan, **ROW)
    assert str(refusal.value) == message


def test_a_row_s_title_is_its_label_unless_it_has_its_own():
    assert Scheme(kind="normal", fan=None, **ROW).title == "A label"
    assert Scheme(kind="normal", fan=None, title="A title", **ROW).title == "A title"
    assert SCHEMES["normal"].title == "normal weights"
    assert SCHEMES["xavier_normal"].title == SCHEMES["xavier_normal"].label == "Xavier normal"


@pytest.mark.parametrize("activation", ["relu", "tanh", "leaky_relu", "selu", "gelu", "linear"])
def test_kaiming_starts_from_the_activation_s_gain_and_the_others_from_one(activation):
    for key, row in SCHEMES.items():
        expected = suggested_gain(activation)[0] if key.startswith("kaiming") else 1.0
        assert row.initial_gain(activation) == expected
    if activation != "gelu":  # torch has no gain for gelu; the quadrature's is tested elsewhere
        assert SCHEMES["kaiming_fan_in"].initial_gain(activation) == calculate_gain(activation)
    assert SCHEMES["kaiming_fan_out"].initial_gain("relu") == math.sqrt(2.0)


def test_the_stacks_sizes_start_at_1_and_are_refused_below_in_their_own_words():
    import numpy as np
    from refusals import assert_refused

    from tinyinit.checks import KindError
    from tinyinit.stack import layer_weights, unit_batch, words_per_layer

    # A width and a batch of 1: the least stack, one number per layer and per sample.
    assert layer_weights("xavier_uniform", 1, 1, seed=0).shape == (1, 1)
    assert np.array_equal(unit_batch(1, 1, seed=0, stream=1), [[1.0]])  # mean square 1
    assert (words_per_layer("uniform", 1), words_per_layer("normal", 1)) == (2, 4)
    below = "{} must be an integer >= 1, got 0"
    labels = {**ROW, "kind": "normal", "fan": "fan_in"}
    assert_refused(
        [
            (lambda: layer_weights("xavier_uniform", 0, 1, 0), ValueError, below.format("width")),
            (lambda: unit_batch(0, 3, 0, 1), ValueError, below.format("width")),
            (lambda: unit_batch(3, 0, 0, 1), ValueError, below.format("batch")),
            (lambda: words_per_layer("normal", 0), ValueError, below.format("width")),
            *[
                (
                    lambda name=name: Scheme(**{**labels, name: 3}),
                    KindError,
                    f"{name} must be a str, got 3",
                )
                for name in ("key", "label", "formula", "title")
            ],
        ]
    )

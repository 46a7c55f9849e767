"""The explorer's table of initializer schemes: a row checks itself, and says its gain."""

from __future__ import annotations

import math

import pytest

from tinyinit.core.init import calculate_gain
from tinyinit.physics.depth_stack import FANS, KINDS, SCHEMES, Scheme, suggested_gain

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

    from tinyinit.core.arguments import KindError
    from tinyinit.physics.depth_stack import layer_weights, unit_batch, words_per_layer

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


def test_a_scheme_s_std_takes_gain_1_and_std_0_02_unless_told_and_refuses_at_its_own_door():
    from refusals import assert_refused

    from tinyinit.physics.depth_stack import unit_matrix

    fan_in, fan_out = SCHEMES["kaiming_fan_in"], SCHEMES["kaiming_fan_out"]
    normal = SCHEMES["normal"]
    # gain 1 by default: 1/sqrt(4) and 1/sqrt(9); the "normal" row's std is 0.02 unless set.
    assert (fan_in.std(4, 9), fan_out.std(4, 9), normal.std(4, 9)) == (0.5, 1 / 3, 0.02)
    # Each bound is taken: a gain or a std of 0, fans of 1.
    assert (fan_in.std(1, 1, gain=0), normal.std(1, 1, std=0), normal.std(1, 1)) == (0, 0, 0.02)
    below = "{} must be an integer >= 1, got 0"
    negative = "{} must be a finite real number >= 0, got -1"
    assert_refused(
        [
            # The "normal" row uses neither fan and Kaiming fan_in not fan_out: the row's
            # own door is the only one that sees them.
            (lambda: normal.std(0, 1), ValueError, below.format("fan_in")),
            (lambda: normal.std(1, 0), ValueError, below.format("fan_out")),
            (lambda: fan_in.std(1, 0), ValueError, below.format("fan_out")),
            (lambda: normal.std(1, 1, gain=-1), ValueError, negative.format("gain")),
            (lambda: fan_in.std(1, 1, std=-1), ValueError, negative.format("std")),
            # A unit matrix's width is refused before its layer, and a layer 0 by name.
            (lambda: unit_matrix("normal", 0, 0, 0), ValueError, below.format("width")),
            (lambda: unit_matrix("normal", 2, 0, 0), ValueError, below.format("layer")),
        ]
    )

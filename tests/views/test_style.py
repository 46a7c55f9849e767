"""The look every figure shares: one colour per initializer, from Okabe and Ito's palette."""

import pytest

from tinyinit.core.init import INITIALIZERS
from tinyinit.views.style import INITIALIZER_COLORS, OKABE_ITO, initializer_color


def test_every_initializer_has_one_okabe_ito_colour_and_families_share_theirs():
    offered = list(INITIALIZERS)  # every initializer the explorer offers has a colour
    assert set(INITIALIZER_COLORS.values()) <= set(OKABE_ITO.values())
    # A family each, but for two that never meet in one figure: the palette has 8 colours,
    # and yellow is too light on white for a line (1.1:1)
    apart = {"scaled_residual", "lsuv"}  # residual-stream figures; a plain stack's
    assert len(set(INITIALIZER_COLORS.values())) == len(INITIALIZER_COLORS) - 1
    names = offered + list(INITIALIZER_COLORS)
    for a in names:
        for b in names:
            same = initializer_color(a) == initializer_color(b)
            family = {a.split("_")[0], b.split("_")[0]}
            expected = len(family) == 1 or family == {"scaled", "lsuv"}
            assert same == expected, (a, b)
    assert {initializer_color(name) for name in apart} == {OKABE_ITO["reddish purple"]}
    with pytest.raises(ValueError, match=r"^initializer must be one of 'xavier', .*, got 'he'$"):
        initializer_color("he")

"""The check of a DepthResult handed to a figure, a readout or a caption: one wording."""

from __future__ import annotations

import pytest

from tinyinit.core.arguments import KindError
from tinyinit.physics.depth_result import as_result
from tinyinit.physics.propagation import simulate


def test_a_result_is_given_back_and_anything_else_refused_under_the_asking_argument_s_name():
    r = simulate("relu", n_layers=2, width=4, seeds=1)
    assert as_result(r) is r and as_result(r, name="pinned") is r
    accepted = "a DepthResult (tinyinit.physics.propagation.simulate's)"
    for name, value in (("result", None), ("pinned", 0.5), ("other", "relu")):
        with pytest.raises(KindError) as refusal:
            as_result(value, name=name)
        assert str(refusal.value) == f"{name} must be {accepted}, got {value!r}"

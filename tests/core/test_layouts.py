"""tinyinit.core.layouts: which dimension of a weight is fan-in, counted by running the layer."""

from __future__ import annotations

import numpy as np
import pytest

from tinyinit import PCG32, fans, normal
from tinyinit.core.layouts import apply_layer, counted_fans, layer_fans, weight_shape


@pytest.mark.parametrize(
    "layer, kernel",
    [
        ("linear", ()),
        ("linear_in_out", ()),
        ("conv", (3,)),
        ("conv", (3, 3)),
        ("conv_transpose", (3,)),
        ("conv_transpose", (2, 3)),
    ],
)
def test_counted_fans_are_the_layer_fans(layer, kernel):
    assert counted_fans(layer, 4, 6, kernel) == layer_fans(4, 6, kernel)


def test_fans_reads_a_transposed_conv_and_an_in_out_linear_swapped():
    assert fans(weight_shape("conv_transpose", 4, 6, (3, 3))) == (54, 36)
    assert counted_fans("conv_transpose", 4, 6, (3, 3)) == (36, 54)
    assert fans(weight_shape("linear_in_out", 768, 3072)) == (3072, 768)
    assert fans(weight_shape("conv", 4, 6, (3, 3))) == counted_fans("conv", 4, 6, (3, 3))


def test_a_conv_transpose_layer_is_the_adjoint_of_conv():
    rng = PCG32(3)
    w = normal(rng, 4 * 6 * 9).reshape(4, 6, 3, 3)  # conv_transpose(4 -> 6) weight
    x = normal(rng, 2 * 4 * 5 * 5).reshape(2, 4, 5, 5)
    y = apply_layer("conv_transpose", w, x)  # (2, 6, 7, 7)
    v = normal(rng, y.size).reshape(y.shape)
    # <conv_transpose(x), v> = <x, conv(v)> with the same weight read as conv(6 -> 4)
    assert np.vdot(y, v) == pytest.approx(np.vdot(x, apply_layer("conv", w, v)), rel=1e-12)

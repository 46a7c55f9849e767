"""The residual stream: its growth, GPT-2's 1/sqrt(2N), and the live explorer."""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tinyinit import PCG32, kaiming_normal, normal, normal_init, scaled_residual_std
from tinyinit.physics.residual import (
    compounded,
    draw_residual_stack,
    normalize,
    out_scale,
    relu_stack_mean_squares,
    residual_variance_theory,
    stream_variances,
)
from tinyinit.views.explorers import ResidualStreamExplorer

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def stack():
    return draw_residual_stack(48, 128, 128, 128, PCG32(0))


# --- the stream ------------------------------------------------------------------------


def test_normalize_gives_rows_of_mean_0_and_mean_square_1():
    x = 3.0 + 5.0 * normal(PCG32(1), 40).reshape(4, 10)
    y = normalize(x)
    np.testing.assert_allclose(y.mean(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose((y**2).mean(axis=1), 1, rtol=1e-5)


def test_stack_is_drawn_in_the_documented_order():
    got = draw_residual_stack(2, 8, 16, 4, PCG32(3))
    rng = PCG32(3)
    x0 = normal(rng, 4 * 8).reshape(4, 8)
    np.testing.assert_array_equal(got.x0, x0)
    for k in range(4):
        np.testing.assert_array_equal(got.w_in[k], kaiming_normal((16, 8), "fan_in", "relu", rng))
        np.testing.assert_array_equal(got.w_out[k], normal_init((8, 16), 0.25, rng))
    assert got.max_layers == 2


def test_unscaled_stream_grows_like_1_plus_2N(stack):
    for n in (6, 12, 24):
        final = stream_variances(stack, n)[-1]
        assert final == pytest.approx(1 + 2 * n, rel=0.2)


def test_scaled_stream_stays_near_2_whatever_the_depth(stack):
    for n in (1, 6, 24, 48):
        final = stream_variances(stack, n, out_scale(n, True))[-1]
        assert final == pytest.approx(2.0, rel=0.1)


def test_without_layer_norm_each_addition_doubles_the_variance(stack):
    v = stream_variances(stack, 4, layer_norm="none")
    ratios = v[1:] / v[:-1]
    assert np.all((ratios > 1.6) & (ratios < 2.5))


def test_post_ln_renormalizes_the_stream_so_it_never_grows(stack):
    for n in (1, 12, 48):
        v = stream_variances(stack, n, layer_norm="post")
        assert np.allclose(v[1:], 1.0, atol=1e-4)


def test_stream_variances_rejects_an_unknown_layer_norm(stack):
    accepted = "layer_norm must be one of pre, post, none, got 'pre_ln'"
    with pytest.raises(ValueError, match=accepted):
        stream_variances(stack, 1, layer_norm="pre_ln")


def test_stream_variances_rejects_too_many_blocks(stack):
    with pytest.raises(ValueError, match="n_layers"):
        stream_variances(stack, 49)


@given(st.integers(1, 200), st.floats(0.1, 10.0), st.floats(0.1, 10.0))
def test_scaled_theory_ends_at_x0_plus_one_addition_whatever_N(n, x0_var, addition_var):
    theory = residual_variance_theory(n, scaled=True, x0_var=x0_var, addition_var=addition_var)
    assert len(theory) == 2 * n + 1
    assert theory[-1] == pytest.approx(x0_var + addition_var)
    unscaled = residual_variance_theory(n, scaled=False, x0_var=x0_var, addition_var=addition_var)
    assert unscaled[-1] == pytest.approx(x0_var + 2 * n * addition_var)


def test_out_scale_is_scaled_residual_std_of_1():
    assert out_scale(12, True) == scaled_residual_std(1.0, 12) == 1 / math.sqrt(24)
    assert out_scale(12, False) == 1.0


# --- compounding -------------------------------------------------------------------------


def test_five_percent_per_layer_leaves_a_twelfth_after_48_layers():
    assert compounded(0.95, 48)[-1] == pytest.approx(0.0853, abs=1e-4)
    assert 1 / compounded(0.95, 48)[-1] == pytest.approx(11.7, abs=0.1)


def test_relu_stack_follows_the_compounded_factor():
    short = relu_stack_mean_squares(256, 48, 0.95, PCG32(0))
    kaiming = relu_stack_mean_squares(256, 48, 1.0, PCG32(0))
    # same draws times sqrt(0.95), and relu(c z) = c relu(z): the ratio is exactly 0.95**k
    np.testing.assert_allclose(short / kaiming, 0.95 ** np.arange(49), rtol=1e-4)
    assert 0.5 < kaiming[-1] / kaiming[0] < 2


# --- the live explorer --------------------------------------------------------------------


def test_explorer_updates_lines_in_place_and_never_rebuilds(stack):
    import matplotlib.pyplot as plt

    explorer = ResidualStreamExplorer(stack, n_layers=12, scaled=True)
    fig, line, n_figs = explorer.fig, explorer.measured_line, len(plt.get_fignums())
    first = explorer.readout.value
    assert explorer.final_variance == pytest.approx(2.0, rel=0.1)

    explorer.n_layers.value = 48
    explorer.scaling.value = False
    assert explorer.fig is fig and explorer.measured_line is line
    assert len(plt.get_fignums()) == n_figs
    assert len(line.get_xdata()) == 49
    assert explorer.final_variance == pytest.approx(97, rel=0.2)
    assert explorer.readout.value != first and "97" in explorer.readout.value
    np.testing.assert_allclose(explorer.theory_line.get_ydata(), explorer.curves(48, False)[1])
    assert explorer.n_updates == 3
    plt.close(fig)


def test_explorer_widgets_have_tooltips_and_css_classes(stack):
    import matplotlib.pyplot as plt

    explorer = ResidualStreamExplorer(stack)
    assert "tinyinit-residual" in explorer.widget._dom_classes
    assert "tinyinit-blocks" in explorer.n_layers._dom_classes
    assert "tinyinit-scaling" in explorer.scaling._dom_classes
    assert "tinyinit-readout" in explorer.readout._dom_classes
    for w in (explorer.n_layers, explorer.scaling, explorer.readout):
        assert w.tooltip
    plt.close(explorer.fig)


def test_explorer_keeps_its_y_axis_across_the_toggle_and_can_show_both(stack):
    import matplotlib.pyplot as plt

    explorer = ResidualStreamExplorer(stack, n_layers=24, scaled=False)
    unscaled_limits = explorer.ax.get_ylim()
    explorer.scaling.value = True
    assert explorer.ax.get_ylim() == unscaled_limits  # only the curve moves
    assert unscaled_limits[1] > explorer.curves(24, False)[0].max()
    assert len(explorer.other_line.get_xdata()) == 0
    explorer.both.value = True
    np.testing.assert_array_equal(explorer.other_line.get_ydata(), explorer.curves(24, False)[0])
    labels = [t.get_text() for t in explorer.ax.get_legend().get_texts()]
    assert "measured, with 1/√(2N)" in labels and "measured, without 1/√(2N)" in labels
    assert "without 1/√(2N):" in explorer.readout.value
    assert "tinyinit-both" in explorer.both._dom_classes and explorer.both.tooltip
    plt.close(explorer.fig)

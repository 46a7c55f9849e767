"""The small pre-LN decoder: GELU's variance, the init rules, draw order, and the stream."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tinyinit import (
    PCG32,
    kaiming_normal,
    normal,
    normal_init,
    scaled_residual_std,
    xavier_uniform,
)
from tinyinit.core.activations import gelu
from tinyinit.networks.residual_audit import check_residual_scaling
from tinyinit.networks.transformer import (
    GPTConfig,
    TinyGPT,
    gelu_mean_square,
    init_gpt_params,
    next_token_loss,
    parameter_shapes,
    random_tokens,
)
from tinyinit.physics.mean_field import gaussian_expectation


@pytest.fixture(scope="module")
def tokens():
    return random_tokens(PCG32(1, 7), 4, 33, 256)


# --- GELU ---------------------------------------------------------------------------------


def test_gelu_tanh_approximation_is_close_to_exact():
    x = np.linspace(-6, 6, 241)
    np.testing.assert_allclose(gelu(x, "tanh"), gelu(x, "none"), atol=1e-3)
    with pytest.raises(ValueError, match="approximate"):
        gelu(x, "erf")


def test_quadrature_knows_relu_keeps_half_the_second_moment():
    relu_ms = gaussian_expectation(lambda z: np.maximum(z, 0) ** 2, 2.0)
    assert relu_ms == pytest.approx(1.0, abs=1e-12)  # a panel edge at the kink: exact


def test_gelu_mean_square_at_variance_2_matches_monte_carlo():
    exact = gelu_mean_square(2.0)
    assert exact == pytest.approx(0.9221, abs=1e-4)
    z = math.sqrt(2.0) * normal(PCG32(0), 400_000)
    mc = np.mean(gelu(z, "none") ** 2)
    assert mc == pytest.approx(exact, rel=0.01)


# --- initialization -----------------------------------------------------------------------


def test_parameters_are_float32_with_the_right_shapes_zero_biases_and_unit_gains():
    config = GPTConfig(n_layer=3)
    model = TinyGPT(config, PCG32(0))
    shapes = parameter_shapes(config)
    assert list(dict(model.named_parameters())) == list(shapes)
    for name, p in model.named_parameters():
        assert p.dtype == np.float32 and p.shape == shapes[name] and p.flags.c_contiguous
        if name.endswith(".bias"):
            assert not p.any(), name
        elif ".ln_" in name or name.startswith("ln_f"):
            assert np.all(p == 1), name


def test_weights_are_drawn_in_the_documented_order():
    config = GPTConfig(vocab_size=16, block_size=8, n_layer=2, n_embd=16)
    params = init_gpt_params(config, PCG32(5))
    rng = PCG32(5)
    expected = {
        "wte.weight": normal_init((16, 16), 0.02, rng),
        "wpe.weight": normal_init((8, 16), 0.02, rng),
    }
    out_std = scaled_residual_std(0.02, 2)
    for i in range(2):
        for name in ("q_proj", "k_proj", "v_proj"):
            expected[f"h.{i}.attn.{name}.weight"] = xavier_uniform((16, 16), 1.0, rng)
        expected[f"h.{i}.attn.c_proj.weight"] = normal_init((16, 16), out_std, rng)
        expected[f"h.{i}.mlp.c_fc.weight"] = kaiming_normal((64, 16), "fan_in", "relu", rng)
        expected[f"h.{i}.mlp.c_proj.weight"] = normal_init((16, 64), out_std, rng)
    for name, w in expected.items():
        np.testing.assert_array_equal(params[name], w, err_msg=name)
    again = PCG32(5)
    init_gpt_params(config, again)
    assert again == rng  # nothing else was drawn


def test_same_seed_same_bytes_and_another_seed_differs():
    config = GPTConfig(n_layer=2)
    a, b = init_gpt_params(config, PCG32(0)), init_gpt_params(config, PCG32(0))
    c = init_gpt_params(config, PCG32(1))
    assert all(a[k].tobytes() == b[k].tobytes() for k in a)
    assert a["h.1.mlp.c_fc.weight"].tobytes() != c["h.1.mlp.c_fc.weight"].tobytes()


def test_measured_std_of_every_matrix_matches_its_rule():
    model = TinyGPT(GPTConfig(n_layer=2, n_embd=128), PCG32(0))
    for name, shape, _rule, std, measured in model.init_table():
        if std and len(shape) == 2:
            assert measured == pytest.approx(std, rel=5 / math.sqrt(2 * math.prod(shape))), name


def test_config_rejects_unknown_scheme_and_uneven_heads():
    with pytest.raises(ValueError, match="init must be one of"):
        GPTConfig(init="xavier")
    with pytest.raises(ValueError, match="multiple of n_head"):
        GPTConfig(n_embd=30, n_head=4)


# --- the forward pass ---------------------------------------------------------------------


def test_attention_is_causal(tokens):
    model = TinyGPT(GPTConfig(n_layer=2), PCG32(0))
    changed = tokens.copy()
    changed[:, 20] = (changed[:, 20] + 1) % 256
    a, b = model(tokens[:, :32]).logits, model(changed[:, :32]).logits
    np.testing.assert_array_equal(a[:, :20], b[:, :20])
    assert not np.allclose(a[:, 20:], b[:, 20:])


def test_sequence_longer_than_block_size_is_rejected(tokens):
    with pytest.raises(ValueError, match="block_size"):
        TinyGPT(GPTConfig(n_layer=1), PCG32(0))(tokens)


def test_right_init_keeps_the_stream_bounded_whatever_the_depth(tokens):
    finals = {}
    for n in (6, 24):
        trace = TinyGPT(GPTConfig(n_layer=n), PCG32(0))(tokens[:, :32])
        finals[n] = trace.stream[-1]
        np.testing.assert_allclose(trace.mlp_preact, 2.0, rtol=0.15)  # Kaiming: n_in Var(W) = 2
        assert next_token_loss(trace.logits, tokens[:, 1:]) == pytest.approx(math.log(256), abs=0.1)
    assert 0.7 < finals[24] / finals[6] < 1.3


def test_without_the_scaling_the_stream_grows_with_depth(tokens):
    finals = [
        TinyGPT(GPTConfig(n_layer=n, init="unscaled"), PCG32(0))(tokens[:, :32]).stream[-1]
        for n in (6, 24)
    ]
    assert finals[1] / finals[0] > 2.5


def test_flat_002_starves_a_narrow_mlp_and_unit_init_explodes(tokens):
    flat = TinyGPT(GPTConfig(n_layer=2, init="flat"), PCG32(0))(tokens[:, :32])
    np.testing.assert_allclose(flat.mlp_preact, 64 * 0.02**2, rtol=0.15)
    unit = TinyGPT(GPTConfig(n_layer=2, init="unit"), PCG32(0))(tokens[:, :32])
    assert unit.stream[-1] > 1e3 and next_token_loss(unit.logits, tokens[:, 1:]) > 10


def test_checker_passes_the_model_and_fails_the_naive_ones():
    assert check_residual_scaling(
        TinyGPT(GPTConfig(n_layer=12), PCG32(0)).named_parameters(), 12
    ).ok
    flat = check_residual_scaling(
        TinyGPT(GPTConfig(n_layer=12, init="flat"), PCG32(0)).named_parameters(), 12
    )
    assert flat.count("unscaled") == 24
    unit = check_residual_scaling(
        TinyGPT(GPTConfig(n_layer=12, init="unit"), PCG32(0)).named_parameters(), 12
    )
    assert unit.count("wrong") == 24

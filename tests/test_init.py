"""The test catalog of module card M07.3 (section 4), one test per row, on tinyinit.init.

Each test calls a `check_*` function that takes an implementation: any namespace with
fans, calculate_gain, xavier_uniform, xavier_normal, kaiming_normal, normal_init and
scaled_residual_std. tests/test_mutants.py runs the same checks on the card's
pitfalls (tests/mutants/) and shows that each is caught. A failed check raises
AssertionError.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import reference_pcg32 as ref
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tinyinit.init as impl
from tinyinit import PCG32, normal
from tinyinit.distributions import PAIRS_PER_BLOCK

GOLDEN = Path(__file__).parent / "fixtures" / "init_torch.json"  # scripts/make_torch_golden.py

# Seeds other than 0, so that a generator made inside an initializer cannot pass by luck.
SEEDS = (5, 2**63 + 11)
# Linear and conv weights (out, in, *kernel), non-square and odd-sized.
SHAPES = [(4, 3), (1, 1), (5, 7), (7, 5), (8, 4, 3, 3), (3, 5, 7), (2, 3, 3, 5, 7)]


def bits(x: np.ndarray) -> list[int]:
    """The bit patterns of a float32 array: equal bits, equal weights, no tolerance."""
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).ravel().tolist()


def assert_rejects(call, *args, **kwargs) -> None:
    """call(*args, **kwargs) raises ValueError, or AssertionError says what it accepted."""
    try:
        call(*args, **kwargs)
    except ValueError:
        return
    raise AssertionError(f"{call.__name__}(*{args!r}, **{kwargs!r}) raised no ValueError")


def mean_square(x: np.ndarray) -> float:
    return float(np.mean(np.square(x, dtype=np.float64)))


# --- test_hand_example_linear_4x3 ------------------------------------------------------

# docs/spec.md section 6, and what follows exactly from the formulas
EXACT = {
    "fan_in * kaiming_std**2": 2.0,
    "fan_in * xavier_std**2": 6 / 7,
    "xavier_uniform_bound": 0.9258200997725514,
    "xavier_normal_std": math.sqrt(2 / 7),
    "kaiming_std": math.sqrt(2 / 3),
    "residual_std": 0.02 / math.sqrt(24),
    "u0": 0.2803122753265841,
    "u1": 0.4892241428740438,
    "r": 0.8110954018,
    "cos": -0.9977087764,
    "first_normal": -0.8092370026,
    "first_xavier_uniform_weight": -0.40678263,
    "first_kaiming_weight": -0.66073924,
}
# the module card's section 3, as printed (its r is rounded, so its last digits differ)
CARD = {
    "xavier_uniform_bound": 0.92582,
    "xavier_normal_std": 0.53452,
    "kaiming_std": 0.81650,
    "residual_std": 0.0040825,
    "u0": 0.280312,
    "u1": 0.489224,
    "r": 0.81104,
    "cos": -0.99771,
    "first_normal": -0.80918,
    "first_xavier_uniform_weight": -0.406783,
    "first_kaiming_weight": -0.66071,
}


def check_hand_example_linear_4x3(impl) -> None:
    shape = (4, 3)  # Linear(3 -> 4) stores W as (out, in)
    fan_in, fan_out = impl.fans(shape)
    assert (fan_in, fan_out) == (3, 4), f"fans((4, 3)) = {(fan_in, fan_out)}, expected (3, 4)"
    assert impl.calculate_gain("linear") == 1.0
    assert impl.calculate_gain("relu") == pytest.approx(math.sqrt(2), rel=1e-12)
    assert impl.calculate_gain("tanh") == pytest.approx(5 / 3, rel=1e-12)

    rng = PCG32(0)
    u0, u1 = rng.uniform(), rng.uniform()
    r = math.sqrt(-2 * math.log(1 - u0))
    cos = math.cos(2 * math.pi * u1)
    first_normal = float(normal(PCG32(0), 1)[0])
    assert first_normal == r * cos

    # Each initializer's first weight is its scale times the first uniform or normal,
    # so the weights of PCG32(0) reveal the bound and the stds the code really used.
    w_uniform = impl.xavier_uniform(shape, 1.0, PCG32(0))
    w_xavier = impl.xavier_normal(shape, 1.0, PCG32(0))
    w_kaiming = impl.kaiming_normal(shape, "fan_in", "relu", PCG32(0))
    bound = float(w_uniform[0, 0]) / (2 * u0 - 1)
    xavier_std = float(w_xavier[0, 0]) / first_normal
    kaiming_std = float(w_kaiming[0, 0]) / first_normal
    assert np.all(np.abs(w_uniform) <= np.float32(bound) * (1 + 1e-6))

    measured = {
        "fan_in * kaiming_std**2": fan_in * kaiming_std**2,  # Var(z) for E[x^2] = 1
        "fan_in * xavier_std**2": fan_in * xavier_std**2,
        "xavier_uniform_bound": bound,
        "xavier_normal_std": xavier_std,
        "kaiming_std": kaiming_std,
        "residual_std": impl.scaled_residual_std(0.02, 12),
        "u0": u0,
        "u1": u1,
        "r": r,
        "cos": cos,
        "first_normal": first_normal,
        "first_xavier_uniform_weight": float(w_uniform[0, 0]),
        "first_kaiming_weight": float(w_kaiming[0, 0]),
    }
    for name, value in EXACT.items():
        assert measured[name] == pytest.approx(value, abs=1e-6), f"{name}: spec's exact value"
    for name, value in CARD.items():
        assert measured[name] == pytest.approx(value, abs=1e-4), f"{name}: the card's value"
    assert w_uniform[0, 0] == np.float32(-0.40678263)
    assert w_kaiming[0, 0] == np.float32(-0.66073924)
    # 1e-6 is loose for a number this small: the residual std, relatively
    assert measured["residual_std"] == pytest.approx(0.0040824829046386, rel=1e-9)


def test_hand_example_linear_4x3():
    check_hand_example_linear_4x3(impl)


# --- test_fans_and_gains_match_torch ---------------------------------------------------


def check_fans_and_gains_match_torch(impl) -> None:
    golden = json.loads(GOLDEN.read_text())
    for case in golden["gains"]:
        args = (case["nonlinearity"],) + (() if case["param"] is None else (case["param"],))
        gain = impl.calculate_gain(*args)
        assert gain == pytest.approx(case["gain"], rel=1e-12), f"calculate_gain{args}"
    for case in golden["fans"]:
        shape = tuple(case["shape"])
        expected = (case["fan_in"], case["fan_out"])
        assert impl.fans(shape) == expected, f"fans{shape} of {case['layer'] or 'a weight'}"
    for case in golden["fan_errors"]:  # torch: fewer than 2 dimensions have no fans
        assert_rejects(impl.fans, tuple(case["shape"]))
    for case in golden["gain_errors"]:
        assert_rejects(impl.calculate_gain, case["nonlinearity"], case["param"])


def test_fans_and_gains_match_torch():
    check_fans_and_gains_match_torch(impl)


def test_golden_file_is_torchs_and_covers_the_whole_table():
    golden = json.loads(GOLDEN.read_text())
    assert golden["torch_version"].startswith("2.13.0")
    assert {case["nonlinearity"] for case in golden["gains"]} == set(impl.NONLINEARITIES)
    assert any(len(case["shape"]) == 5 for case in golden["fans"])  # conv3d


# --- test_normal_inits_draw_spec_normals_in_c_order -------------------------------------


def normal_inits(impl) -> dict:
    """Each normal initializer as (draw(shape, rng), its std from (fan_in, fan_out))."""
    return {
        "xavier_normal": (
            lambda s, rng: impl.xavier_normal(s, 1.3, rng),
            lambda fan_in, fan_out: 1.3 * math.sqrt(2 / (fan_in + fan_out)),
        ),
        "kaiming_normal relu fan_in": (
            lambda s, rng: impl.kaiming_normal(s, "fan_in", "relu", rng),
            lambda fan_in, fan_out: math.sqrt(2) / math.sqrt(fan_in),
        ),
        "kaiming_normal leaky_relu(0.2) fan_out": (
            lambda s, rng: impl.kaiming_normal(s, "fan_out", "leaky_relu", rng, param=0.2),
            lambda fan_in, fan_out: math.sqrt(2 / (1 + 0.2**2)) / math.sqrt(fan_out),
        ),
        "kaiming_normal tanh fan_in": (
            lambda s, rng: impl.kaiming_normal(s, "fan_in", "tanh", rng),
            lambda fan_in, fan_out: (5 / 3) / math.sqrt(fan_in),
        ),
        "normal_init": (
            lambda s, rng: impl.normal_init(s, 0.02, rng),
            lambda fan_in, fan_out: 0.02,
        ),
    }


def check_normal_inits_draw_spec_normals_in_c_order(impl) -> None:
    big = (129, 2 * PAIRS_PER_BLOCK // 128 + 1)  # more than one block of the fast path
    cases = [(shape, seed) for shape in SHAPES for seed in SEEDS] + [(big, SEEDS[0])]
    for shape, seed in cases:
        n = math.prod(shape)
        spec_normals = np.array(ref.normal(ref.PCG32(seed), n))
        for name, (draw, std_of) in normal_inits(impl).items():
            rng = PCG32(seed)
            w = draw(shape, rng)
            std = std_of(*ref.fans(shape))
            expected = (std * spec_normals).astype(np.float32).reshape(shape)  # row-major
            assert bits(w) == bits(expected), f"{name} {shape}: not float32(std * normals)"
            pairs = (n + 1) // 2  # two uniforms per pair, two words per uniform
            assert rng == PCG32(seed).advance(4 * pairs), f"{name} {shape}: drew other than n"
    for n in (1, 6, 7):  # normal_init takes any shape: 1-D, odd sizes
        w = impl.normal_init((n,), 0.5, PCG32(SEEDS[1]))
        expected = (0.5 * np.array(ref.normal(ref.PCG32(SEEDS[1]), n))).astype(np.float32)
        assert bits(w) == bits(expected), f"normal_init(({n},))"


def test_normal_inits_draw_spec_normals_in_c_order():
    check_normal_inits_draw_spec_normals_in_c_order(impl)


def test_initializers_equal_the_scalar_reference():
    """The reference's own initializers (card 2.3 and 2.4, spec 4) agree with tinyinit."""
    calls = [
        lambda m, s, rng: m.xavier_uniform(s, 0.7, rng),
        lambda m, s, rng: m.xavier_normal(s, 0.7, rng),
        lambda m, s, rng: m.kaiming_normal(s, "fan_out", "leaky_relu", rng, param=0.3),
        lambda m, s, rng: m.normal_init(s, 0.02, rng),
    ]
    for shape in SHAPES:
        for call in calls:
            assert bits(call(impl, shape, PCG32(9))) == bits(call(ref, shape, ref.PCG32(9)))
    assert impl.scaled_residual_std(0.02, 7) == ref.scaled_residual_std(0.02, 7)


def test_normal_init_adds_its_mean_to_each_scaled_normal():
    for shape in SHAPES:
        n = math.prod(shape)
        z = ref.normal(ref.PCG32(9), n)
        expected = np.array([0.02 * z_k + 0.5 for z_k in z]).astype(np.float32).reshape(shape)
        assert bits(impl.normal_init(shape, 0.02, PCG32(9), mean=0.5)) == bits(expected)


# --- test_uniform_uses_one_draw_per_element ------------------------------------------------


def check_uniform_uses_one_draw_per_element(impl) -> None:
    for shape in SHAPES:
        for seed in SEEDS:
            for gain in (1.0, 0.25, impl.calculate_gain("relu")):
                rng, scalar = PCG32(seed), ref.PCG32(seed)
                first = impl.xavier_uniform(shape, gain, rng)
                n = math.prod(shape)
                fan_in, fan_out = ref.fans(shape)
                a = gain * math.sqrt(6 / (fan_in + fan_out))
                u = [scalar.uniform() for _ in range(n)]
                expected = np.array([-a + 2 * a * u_k for u_k in u]).astype(np.float32)
                assert bits(first) == bits(expected.reshape(shape)), f"xavier_uniform {shape}"
                assert rng == PCG32(seed).advance(2 * n), f"{shape}: not one uniform per element"
                # a second layer from the same generator starts right after the first
                second = impl.xavier_uniform(shape, gain, rng)
                assert bits(second) == bits(ref.xavier_uniform(shape, gain, scalar))


def test_uniform_uses_one_draw_per_element():
    check_uniform_uses_one_draw_per_element(impl)


# --- test_same_seed_same_weights ---------------------------------------------------------


def initializers(impl) -> dict:
    """Every initializer as draw(shape, rng)."""
    return {
        "xavier_uniform": lambda s, rng: impl.xavier_uniform(s, 1.0, rng),
        "xavier_normal": lambda s, rng: impl.xavier_normal(s, 1.0, rng),
        "kaiming_normal": lambda s, rng: impl.kaiming_normal(s, "fan_in", "relu", rng),
        "normal_init": lambda s, rng: impl.normal_init(s, 0.02, rng),
    }


weight_shapes = st.tuples(st.integers(1, 6), st.integers(1, 6)) | st.tuples(
    st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3)
)


def check_same_seed_same_weights(impl) -> None:
    @settings(max_examples=15, deadline=None, database=None)
    @given(seed=st.integers(0, 2**64 - 1), other=st.integers(0, 2**64 - 1), shape=weight_shapes)
    def same_seed_same_weights(seed, other, shape):
        assume(seed != other)
        for name, draw in initializers(impl).items():
            weights = draw(shape, PCG32(seed)).tobytes()
            assert draw(shape, PCG32(seed)).tobytes() == weights, f"{name}: same seed differs"
            assert draw(shape, PCG32(other)).tobytes() != weights, f"{name}: seed does nothing"
            rng = PCG32(seed)
            first, second = draw(shape, rng), draw(shape, rng)
            assert second.tobytes() != first.tobytes(), f"{name}: second layer = first"

    same_seed_same_weights()


def test_same_seed_same_weights():
    check_same_seed_same_weights(impl)


# --- test_empirical_variance_matches_the_formula -------------------------------------------

# Shapes with fan_in != fan_out, and their fans written out by hand: (fan_in, fan_out).
VARIANCE_SHAPES = {(300, 200): (200, 300), (64, 32, 3, 3): (288, 576)}


def check_empirical_variance_matches_the_formula(impl) -> None:
    for shape, (fan_in, fan_out) in VARIANCE_SHAPES.items():
        variants = {
            "xavier_uniform": (impl.xavier_uniform(shape, 1.0, PCG32(1)), 2 / (fan_in + fan_out)),
            "xavier_normal": (impl.xavier_normal(shape, 1.0, PCG32(2)), 2 / (fan_in + fan_out)),
            "kaiming_normal fan_in": (
                impl.kaiming_normal(shape, "fan_in", "relu", PCG32(3)),
                2 / fan_in,
            ),
            "kaiming_normal fan_out": (
                impl.kaiming_normal(shape, "fan_out", "relu", PCG32(4)),
                2 / fan_out,
            ),
        }
        for name, (w, variance) in variants.items():
            w = w.astype(np.float64).ravel()
            n = w.size
            mean_error = math.sqrt(variance / n)
            assert abs(w.mean()) < 4 * mean_error, f"{name} {shape}: mean {w.mean():.3g}"
            # the standard error of a variance estimate: sd(w**2) / sqrt(n)
            variance_error = float(np.std(w**2)) / math.sqrt(n)
            assert abs(w.var() - variance) < 4 * variance_error, (
                f"{name} {shape}: variance {w.var():.4g}, formula {variance:.4g} "
                f"(standard error {variance_error:.2g})"
            )


def test_empirical_variance_matches_the_formula():
    check_empirical_variance_matches_the_formula(impl)


# --- signal propagation: relu, tanh, residual -----------------------------------------------

WIDTH, BATCH, DEPTH = 256, 64, 20


def final_mean_square(init, activation, seed: int = 1) -> float:
    """Mean square of h_DEPTH / that of x, for h_l = activation(h_{l-1} W_l^T), h_0 = x.

    x is a batch of standard normal inputs; every W_l comes from one generator.
    """
    x = normal(PCG32(seed), BATCH * WIDTH).reshape(BATCH, WIDTH)
    rng = PCG32(seed + 1)
    h = x
    for _ in range(DEPTH):
        w = init((WIDTH, WIDTH), rng).astype(np.float64)
        # z = W h for each input; einsum's single-threaded loop, as BLAS's threads
        # fight the draws' threads (and everyone else's) on a small machine
        h = activation(np.einsum("bi,oi->bo", h, w))
    return mean_square(h) / mean_square(x)


def relu(z: np.ndarray) -> np.ndarray:
    return np.maximum(z, 0.0)


def check_relu_signal_survives_20_layers(impl) -> None:
    kaiming = final_mean_square(lambda s, rng: impl.kaiming_normal(s, "fan_in", "relu", rng), relu)
    assert 1 / 16 < kaiming < 16, f"Kaiming: mean square x {kaiming:.3g} after {DEPTH} layers"
    for name in ("xavier_normal", "xavier_uniform"):
        xavier = getattr(impl, name)
        ms = final_mean_square(lambda s, rng, xavier=xavier: xavier(s, 1.0, rng), relu)
        assert ms < 1e-4, f"{name}: mean square x {ms:.3g}, expected a collapse (about 2**-20)"


def test_relu_signal_survives_20_layers():
    check_relu_signal_survives_20_layers(impl)


def check_tanh_signal_survives_with_xavier(impl) -> None:
    gain = impl.calculate_gain("tanh")
    with_gain = final_mean_square(lambda s, rng: impl.xavier_normal(s, gain, rng), np.tanh)
    without = final_mean_square(lambda s, rng: impl.xavier_normal(s, 1.0, rng), np.tanh)
    assert 0.1 < with_gain < 1, f"gain {gain:.4g}: mean square {with_gain:.3g} (about 0.42)"
    assert without < with_gain / 2, f"gain 1: mean square {without:.3g} (about 0.02)"


def test_tanh_signal_survives_with_xavier():
    check_tanh_signal_survives_with_xavier(impl)


def check_scaled_residual_keeps_the_stream_bounded(impl) -> None:
    for base_std in (0.02, 1.0):
        for n_layers in (1, 2, 3, 6, 12, 48, 96):
            s = impl.scaled_residual_std(base_std, n_layers)
            assert 2 * n_layers * s**2 == pytest.approx(base_std**2, rel=1e-12), (
                f"2L s**2 with L={n_layers}: {2 * n_layers * s**2:.6g} != {base_std**2:.6g}"
            )
    # The stream itself: x_0 plus 2L independent outputs of std s ends at twice Var(x_0).
    width, base_std = 20_000, 0.02
    for n_layers in (2, 12, 48):
        rng = PCG32(n_layers)
        s = impl.scaled_residual_std(base_std, n_layers)
        x = impl.normal_init((width,), base_std, rng).astype(np.float64)
        for _ in range(n_layers):
            x += impl.normal_init((width,), s, rng)  # attention's output projection
            x += impl.normal_init((width,), s, rng)  # the MLP's
        ratio = mean_square(x) / (2 * base_std**2)
        assert abs(ratio - 1) < 0.1, f"L={n_layers}: stream variance {ratio:.3f} x expected"


def test_scaled_residual_keeps_the_stream_bounded():
    check_scaled_residual_keeps_the_stream_bounded(impl)


# --- test_shapes_and_dtype ----------------------------------------------------------------


def check_shapes_and_dtype(impl) -> None:
    for shape in SHAPES:
        for name, draw in initializers(impl).items():
            w = draw(shape, PCG32(3))
            assert w.dtype == np.float32, f"{name} {shape}: {w.dtype}"
            assert w.flags.c_contiguous, f"{name} {shape}: not C-contiguous"
            assert w.shape == shape, f"{name}: shape {w.shape} != {shape}"
    for shape in [(7,), (1,), (0,), (2, 3, 0)]:  # normal_init takes any shape, 1-D included
        w = impl.normal_init(shape, 0.02, PCG32(3))
        assert w.dtype == np.float32 and w.flags.c_contiguous and w.shape == shape
    assert impl.normal_init((5,), 0.02, PCG32(3)).ndim == 1


def test_shapes_and_dtype():
    check_shapes_and_dtype(impl)


# --- test_rejects_bad_arguments -------------------------------------------------------------


def check_rejects_bad_arguments(impl) -> None:
    rng = PCG32(0)
    for shape in [(), (5,), (0, 3), (4, 0), (4, 3, 0)]:  # no fan
        assert_rejects(impl.fans, shape)
        assert_rejects(impl.xavier_uniform, shape, 1.0, rng)
        assert_rejects(impl.xavier_normal, shape, 1.0, rng)
        assert_rejects(impl.kaiming_normal, shape, "fan_in", "relu", rng)
    assert_rejects(impl.calculate_gain, "gelu")
    assert_rejects(impl.kaiming_normal, (4, 3), "fan_in", "gelu", rng)
    assert_rejects(impl.kaiming_normal, (4, 3), "fan_avg", "relu", rng)
    assert_rejects(impl.xavier_uniform, (4, 3), -1.0, rng)
    assert_rejects(impl.xavier_normal, (4, 3), -1.0, rng)
    assert_rejects(impl.normal_init, (4, 3), -0.02, rng)
    assert_rejects(impl.normal_init, (-4,), 0.02, rng)
    assert_rejects(impl.scaled_residual_std, 0.02, 0)
    assert_rejects(impl.scaled_residual_std, 0.02, -12)
    assert_rejects(impl.scaled_residual_std, -0.02, 12)
    assert rng == PCG32(0), "a rejected call drew from the generator"


def test_rejects_bad_arguments():
    check_rejects_bad_arguments(impl)


# The catalog of the module card (section 4), in its order; CHECKS maps each test to
# its check, for tests/test_mutants.py.
CATALOG = (
    "test_hand_example_linear_4x3",
    "test_fans_and_gains_match_torch",
    "test_normal_inits_draw_spec_normals_in_c_order",
    "test_uniform_uses_one_draw_per_element",
    "test_same_seed_same_weights",
    "test_empirical_variance_matches_the_formula",
    "test_relu_signal_survives_20_layers",
    "test_tanh_signal_survives_with_xavier",
    "test_scaled_residual_keeps_the_stream_bounded",
    "test_shapes_and_dtype",
    "test_rejects_bad_arguments",
)
CHECKS = {name: globals()[name.replace("test_", "check_", 1)] for name in CATALOG}


def test_every_catalog_test_is_here():
    assert all(callable(globals()[name]) for name in CATALOG)


def test_normal_init_at_std_0_keeps_the_sign_of_each_normal():
    """A mean of 0 is not added: 0.0 * z is -0.0 for a negative z, as in the spec."""
    w = impl.normal_init((4, 3), 0.0, PCG32(0))
    z = ref.normal(ref.PCG32(0), 12)
    assert not w.any() and np.signbit(w).ravel().tolist() == [z_k < 0 for z_k in z]

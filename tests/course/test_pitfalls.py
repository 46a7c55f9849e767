"""The pitfall checker names each mutant's pitfall, and passes correct implementations."""

from __future__ import annotations

import math

import mutants
import numpy as np
import pytest
from mutants import MUTANTS

import tinyinit
from tinyinit import normal
from tinyinit.course.pitfalls import FUNCTIONS, PITFALLS, Diagnosis, check_initializer, check_module

# --- an independent, naive implementation: loops, one draw at a time ------------------


def naive_fans(shape):
    receptive = 1
    for k in shape[2:]:
        receptive *= k
    return shape[1] * receptive, shape[0] * receptive


def naive_gain(nonlinearity, param=None):
    table = {"linear": 1.0, "sigmoid": 1.0, "tanh": 5.0 / 3, "relu": math.sqrt(2.0), "selu": 0.75}
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    return table[nonlinearity]


def _fill(shape, values):
    out = np.empty(math.prod(shape), dtype=np.float32)
    for k, v in enumerate(values):  # flat index k in C order takes value k
        out[k] = v
    return out.reshape(shape)


def _normals(rng, n):
    z = []
    while len(z) < n:
        u0, u1 = rng.uniform(), rng.uniform()
        r = math.sqrt(-2.0 * math.log(1.0 - u0))
        z += [r * math.cos(2 * math.pi * u1), r * math.sin(2 * math.pi * u1)]
    return z[:n]


def naive_xavier_uniform(shape, gain, rng):
    fan_in, fan_out = naive_fans(shape)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return _fill(shape, [-a + 2.0 * a * rng.uniform() for _ in range(math.prod(shape))])


def naive_xavier_normal(shape, gain, rng):
    fan_in, fan_out = naive_fans(shape)
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    return _fill(shape, [std * z for z in _normals(rng, math.prod(shape))])


def naive_kaiming_normal(shape, fan_mode, nonlinearity, rng):
    fan_in, fan_out = naive_fans(shape)
    std = naive_gain(nonlinearity) / math.sqrt(fan_in if fan_mode == "fan_in" else fan_out)
    return _fill(shape, [std * z for z in _normals(rng, math.prod(shape))])


def naive_normal_init(shape, std, rng):
    return _fill(shape, [std * z for z in _normals(rng, math.prod(shape))])


def naive_scaled_residual_std(base_std, n_layers):
    return base_std / math.sqrt(2 * n_layers)


NAIVE = {
    "fans": naive_fans,
    "calculate_gain": naive_gain,
    "xavier_uniform": naive_xavier_uniform,
    "xavier_normal": naive_xavier_normal,
    "kaiming_normal": naive_kaiming_normal,
    "normal_init": naive_normal_init,
    "scaled_residual_std": naive_scaled_residual_std,
}


def test_tinyinit_itself_passes_every_check():
    report = check_module(tinyinit)
    assert set(report) == set(FUNCTIONS)
    assert all(d.ok and d.pitfall is None for d in report.values()), report


@pytest.mark.parametrize("kind", FUNCTIONS)
def test_an_independent_naive_implementation_passes(kind):
    d = check_initializer(NAIVE[kind], kind)
    assert d.ok, d


# --- the mutants of tests/mutants: each named by its pitfall --------------------------

EXPECTED = {
    "s01": ("swapped_fans", {"fans", "kaiming_normal"}),  # xavier is symmetric in the fans
    "s02": ("kernel_dims_forgotten", {"fans", "xavier_uniform", "xavier_normal", "kaiming_normal"}),
    "s03": ("uniform_bound_without_sqrt3", {"xavier_uniform"}),
    "s05": ("gain_as_variance", {"calculate_gain", "kaiming_normal"}),
    "s08": ("residual_sqrt_L", {"scaled_residual_std"}),
    "s09": (
        "column_major_fill",
        {"xavier_uniform", "xavier_normal", "kaiming_normal", "normal_init"},
    ),
    "s13": (
        "generator_created_inside",
        {"xavier_uniform", "xavier_normal", "kaiming_normal", "normal_init"},
    ),
}


def test_every_mutant_is_expected():
    assert set(EXPECTED) == set(MUTANTS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_checker_names_each_mutants_pitfall(name):
    pitfall, affected = EXPECTED[name]
    report = check_module(mutants.load(name))
    assert set(report) == set(FUNCTIONS)
    flagged = {kind for kind, d in report.items() if not d.ok}
    assert flagged == affected, report
    for kind in affected:
        assert report[kind].pitfall == pitfall, report[kind]
        assert PITFALLS[pitfall].title in report[kind].message


# --- mistakes the mutants don't make --------------------------------------------------


def float32_xavier_uniform(shape, gain, rng):
    fan_in, fan_out = tinyinit.fans(shape)
    a = np.float32(gain * math.sqrt(6.0 / (fan_in + fan_out)))
    u = tinyinit.uniforms(rng, math.prod(shape)).astype(np.float32)
    return (a * (np.float32(2) * u - np.float32(1))).reshape(shape)  # rounded in float32


def per_row_normal_init(shape, std, rng):
    rows = [std * normal(rng, shape[-1]) for _ in range(math.prod(shape[:-1]))]
    return np.array(rows, dtype=np.float32).reshape(shape)


def copied_rng_normal_init(shape, std, rng):
    return tinyinit.normal_init(shape, std, rng.copy())


def numpy_random_normal_init(shape, std, rng):
    return (std * np.random.default_rng().standard_normal(shape)).astype(np.float32)


def extra_uniform_xavier(shape, gain, rng):
    rng.uniform()  # e.g. a "warm-up" draw
    return tinyinit.xavier_uniform(shape, gain, rng)


def float64_kaiming(shape, fan_mode, nonlinearity, rng):
    return tinyinit.kaiming_normal(shape, fan_mode, nonlinearity, rng).astype(np.float64)


def flat_xavier_normal(shape, gain, rng):
    return tinyinit.xavier_normal(shape, gain, rng).ravel()


def fortran_xavier_normal(shape, gain, rng):
    return np.asfortranarray(tinyinit.xavier_normal(shape, gain, rng))


def variance_std_normal_init(shape, std, rng):
    return tinyinit.normal_init(shape, std**2, rng)


def squared_gain_xavier_normal(shape, gain, rng):
    return tinyinit.xavier_normal(shape, gain**2, rng)


def sine_first_xavier_normal(shape, gain, rng):
    n = math.prod(shape)
    z = normal(rng, 2 * ((n + 1) // 2))
    z[0::2], z[1::2] = z[1::2].copy(), z[0::2].copy()  # r sin(t) first, then r cos(t)
    fan_in, fan_out = tinyinit.fans(shape)
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    return (std * z[:n]).astype(np.float32).reshape(shape)


def torch_style_only_relu(shape, fan_mode, nonlinearity, rng):
    return tinyinit.kaiming_normal(shape, fan_mode, "relu", rng)


def no_tanh_gain(nonlinearity, param=None):
    if nonlinearity == "tanh":
        raise KeyError(nonlinearity)
    return tinyinit.calculate_gain(nonlinearity, param)


def loop_swapped_kaiming(shape, fan_mode, nonlinearity, rng):
    fan_out, fan_in = naive_fans(shape)  # dim 1 taken as out
    std = naive_gain(nonlinearity) / math.sqrt(fan_in if fan_mode == "fan_in" else fan_out)
    return _fill(shape, [std * z for z in _normals(rng, math.prod(shape))])


def loop_kernelless_xavier_uniform(shape, gain, rng):
    fan_in, fan_out = shape[1], shape[0]
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return _fill(shape, [-a + 2.0 * a * rng.uniform() for _ in range(math.prod(shape))])


@pytest.mark.parametrize(
    "fn, kind, pitfall, says",
    [
        (float32_xavier_uniform, "xavier_uniform", "last_bit", "rounding error"),
        (per_row_normal_init, "normal_init", "wrong_draw_count", "words"),
        (copied_rng_normal_init, "normal_init", "generator_created_inside", "0 words drawn"),
        (numpy_random_normal_init, "normal_init", "generator_created_inside", "np.random"),
        (extra_uniform_xavier, "xavier_uniform", "wrong_draw_count", "moved rng by 26 words"),
        (float64_kaiming, "kaiming_normal", "wrong_dtype", "float64"),
        (flat_xavier_normal, "xavier_normal", "wrong_shape", "not (4, 3)"),
        (fortran_xavier_normal, "xavier_normal", "not_contiguous", "C-contiguous"),
        (variance_std_normal_init, "normal_init", "gain_as_variance", "x0.02"),
        (squared_gain_xavier_normal, "xavier_normal", "gain_as_variance", "x1.667"),
        (sine_first_xavier_normal, "xavier_normal", "wrong_values", "not a rescaling"),
        (torch_style_only_relu, "kaiming_normal", "wrong_values", "x1.414"),
        (no_tanh_gain, "calculate_gain", "raises", "KeyError"),
        (loop_swapped_kaiming, "kaiming_normal", "swapped_fans", "x1.183"),
        (loop_kernelless_xavier_uniform, "xavier_uniform", "kernel_dims_forgotten", "x3"),
    ],
)
def test_the_checker_names_a_students_mistake(fn, kind, pitfall, says):
    d = check_initializer(fn, kind)
    assert (d.ok, d.pitfall) == (False, pitfall), d
    assert says in d.message, d.message


def test_extra_uniform_with_generator_drawn_count():
    d = check_initializer(extra_uniform_xavier, "xavier_uniform")
    assert "the reference moves it by 24" in d.message


def test_scalar_pitfalls_written_by_hand():
    assert check_initializer(lambda s: naive_fans(s)[::-1], "fans").pitfall == "swapped_fans"
    assert check_initializer(lambda s: (s[1], s[0]), "fans").pitfall == "kernel_dims_forgotten"
    squared = check_initializer(
        lambda n, p=None: tinyinit.calculate_gain(n, p) ** 2, "calculate_gain"
    )
    assert squared.pitfall == "gain_as_variance"
    assert check_initializer(lambda b, n: b / n, "scaled_residual_std").pitfall == "wrong_values"


def test_diagnosis_reads_well():
    good = check_initializer(tinyinit.normal_init, "normal_init")
    assert repr(good) == "Diagnosis(normal_init: ok, matches tinyinit bit for bit on 4 calls)"
    assert "✔" in good._repr_html_()
    bad = check_initializer(lambda b, n: b / math.sqrt(n), "scaled_residual_std")
    text = repr(bad)
    assert text.startswith("Diagnosis(scaled_residual_std: residual_sqrt_L)\n")
    for line in ("symptom:", "fix:", "measured:"):
        assert line in text
    assert "✘" in bad._repr_html_()
    assert isinstance(bad, Diagnosis) and bad.kind == "scaled_residual_std"


def test_rejects_unknown_kinds_and_non_functions():
    with pytest.raises(ValueError, match="kind must be one of"):
        check_initializer(tinyinit.fans, "orthogonal")
    with pytest.raises(TypeError, match="fn must be a callable, got 3"):
        check_initializer(3, "fans")


def test_the_checker_leaves_no_trace_on_the_global_generator():
    state = np.random.get_state()[1].copy()
    check_initializer(tinyinit.xavier_uniform, "xavier_uniform")
    assert np.array_equal(np.random.get_state()[1], state)


def test_the_diagnosis_is_a_pure_function_of_the_initializer():
    # the check is a pure function of fn: running it twice gives the same diagnosis
    a = check_initializer(per_row_normal_init, "normal_init")
    b = check_initializer(per_row_normal_init, "normal_init")
    assert a == b


def test_stack_mean_squares_shows_the_symptoms():
    from tinyinit import PCG32, kaiming_normal, xavier_normal
    from tinyinit.course.pitfalls import stack_mean_squares

    def kaiming(shape, rng):
        return kaiming_normal(shape, "fan_in", "relu", rng)

    def xavier(shape, rng):
        return xavier_normal(shape, 1.0, rng)

    right = stack_mean_squares(kaiming, [128] * 11, PCG32(0))
    halved = stack_mean_squares(xavier, [128] * 11, PCG32(0))
    assert 0.5 < right[-1] < 2 and halved[-1] < 2.0**-10 * 4
    conv = stack_mean_squares(kaiming, [8, 8, 8], PCG32(1), kernel_size=(3, 3), batch=16)
    assert conv.shape == (3,) and 0.5 < conv[-1] < 2
    biased = stack_mean_squares(kaiming, [128] * 6, PCG32(0), bias_std=1.0)
    assert 3 < biased[-1] < 4  # each ReLU layer adds bias_std**2 / 2: 1 + 5 / 2

"""PyTorch's own tests of torch.nn.init (test/nn/test_init.py), as checks on any implementation.

Same sizes, tolerances and statistical thresholds as torch's: a Kolmogorov-Smirnov
test (scipy's kstest) must give p > 0.0001, orthogonality holds to atol 1e-6,
random sizes and parameters come from Python's `random` seeded with 123 as in
torch's setUp. Each `check_*` takes an implementation `impl` that speaks torch's
vocabulary (a shape and a seed in, a float array out): tests/test_torch_init_translated.py
runs them on tinyinit, scripts/make_torch_golden.py on torch itself. This module
needs numpy and scipy only, so both can import it.

Not translated: torch's float16/bfloat16 and float64 variants (tinyinit makes
float32 only), test_deprecation (tinyinit has no deprecated aliases), and
test_kaiming_*_warning_on_0element_tensor, where tinyinit differs on purpose
(tests/test_torch_init_translated.py checks its ValueError instead).
"""

from __future__ import annotations

import inspect
import math
import random
import string
import sys
from functools import reduce
from operator import mul

import numpy as np
from scipy import stats

# --- torch's helpers ----------------------------------------------------------------------


def is_normal(x, mean, std) -> bool:
    return stats.kstest(np.ravel(x), "norm", args=(mean, std))[1] > 0.0001


def is_trunc_normal(x, mean, std, a, b) -> bool:
    # scipy's truncnorm is for N(0, 1): standardize first, as torch does
    z = (np.ravel(x).astype(np.float64) - mean) / std
    a0, b0 = (a - mean) / std, (b - mean) / std
    return stats.kstest(z, "truncnorm", args=(a0, b0))[1] > 0.0001


def is_uniform(x, a, b) -> bool:
    return stats.kstest(np.ravel(x), "uniform", args=(a, (b - a)))[1] > 0.0001


def random_nd_shape(r: random.Random, dims, size_min, size_max) -> tuple[int, ...]:
    return tuple(r.randint(size_min, size_max) for _ in range(dims))


def random_float(r: random.Random, a, b) -> float:
    return (b - a) * r.random() + a


def fans_of(shape) -> tuple[int, int]:
    receptive = reduce(mul, shape[2:], 1)
    return shape[1] * receptive, shape[0] * receptive


def raises_value_error(call) -> bool:
    try:
        call()
    except ValueError:
        return True
    return False


# --- TestNNInit ---------------------------------------------------------------------------


def check_calculate_gain_linear(impl, r):
    for fn in ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose2d", "conv_transpose3d"]:
        assert impl.calculate_gain(fn) == 1


def check_calculate_gain_nonlinear(impl, r):
    assert impl.calculate_gain("sigmoid") == 1
    assert impl.calculate_gain("tanh") == 1.6666666666666667
    assert impl.calculate_gain("relu") == 1.4142135623730951
    assert impl.calculate_gain("leaky_relu") == 1.4141428569978354
    assert impl.calculate_gain("selu") == 0.75


def check_calculate_gain_leaky_relu(impl, r):
    expected = {None: 1.4141428569978354, 0: 1.4142135623730951, 0.01: 1.4141428569978354}
    expected[10] = 0.14071950894605836
    for param, gain in expected.items():
        assert impl.calculate_gain("leaky_relu", param) == gain, param


def check_calculate_gain_leaky_relu_only_accepts_numbers(impl, r):
    for param in [True, [1], {"a": "b"}]:
        assert raises_value_error(lambda p=param: impl.calculate_gain("leaky_relu", p)), param


def check_calculate_gain_only_accepts_valid_nonlinearities(impl, r):
    for n in [2, 5, 25]:
        name = "".join(r.choice(string.ascii_lowercase) for _ in range(n))
        assert raises_value_error(lambda s=name: impl.calculate_gain(s)), name


def check_uniform(impl, r):
    for seed, dims in enumerate([1, 2, 4]):
        shape = random_nd_shape(r, dims, 30, 50)
        a = random_float(r, -3, 3)
        b = a + random_float(r, 1, 5)
        assert is_uniform(impl.uniform(shape, a, b, seed), a, b), "Expected uniform distribution"


def check_normal(impl, r):
    for seed, dims in enumerate([1, 2, 4]):
        shape = random_nd_shape(r, dims, 30, 50)
        mean = random_float(r, -3, 3)
        std = random_float(r, 1, 5)
        x = impl.normal(shape, mean, std, seed)
        assert is_normal(x, mean, std), "Expected normal distribution"


def check_trunc_normal_generator(impl, r):
    # torch: the same generator seed gives the same values; then its KS check, which uses
    # a=0, b=1 although the draw used the defaults a=-2, b=2 (on 5 values it still passes)
    x = impl.trunc_normal((5,), 0.0, 1.0, -2.0, 2.0, 42)
    assert np.array_equal(x, impl.trunc_normal((5,), 0.0, 1.0, -2.0, 2.0, 42))
    assert is_trunc_normal(x, mean=0, std=1, a=0, b=1), "Expected truncated normal distribution"


def check_constant(impl, r):
    for dims in [1, 2, 4]:
        shape = random_nd_shape(r, dims, 1, 5)
        val = random_float(r, 1, 10)
        x = impl.constant(shape, val)
        assert x.shape == shape and np.array_equal(x, np.full(shape, val, dtype=x.dtype))


def check_ones_and_zeros(impl, r):
    for fill, val in [(impl.ones, 1), (impl.zeros, 0)]:
        for dims in [1, 2, 4]:
            shape = random_nd_shape(r, dims, 1, 5)
            x = fill(shape)
            assert x.shape == shape and np.all(x == val)


def check_eye(impl, r):
    shape = random_nd_shape(r, 2, 1, 5)
    x = impl.eye(shape)
    for i in range(shape[0]):
        for j in range(shape[1]):
            assert x[i][j] == (1 if i == j else 0), f"Expected {int(i == j)} at [{i}][{j}]"


def check_eye_only_works_on_2d_inputs(impl, r):
    for dims in [1, 3]:
        shape = random_nd_shape(r, dims, 1, 3)
        assert raises_value_error(lambda s=shape: impl.eye(s)), shape


def check_dirac_properties(impl, r):
    for dims in [3, 4, 5]:
        for groups in [1, 2, 3]:
            a, c, d, e = (r.randint(1, 5) for _ in range(4))
            b = r.randint(1, 5 * groups)  # same range as a*groups but all range allowed
            shape = (a * groups, b, c, d, e)[:dims]
            x = impl.dirac(shape, groups)
            c_out, c_in = shape[0] // groups, shape[1]
            min_d = min(c_out, c_in)
            assert np.count_nonzero(x) == min_d * groups
            assert x.sum() == min_d * groups


def conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """F.conv1d/2d/3d, no padding or stride: out[b, o, p] = sum_i,k w[o, i, k] x[b, i, p + k]."""
    k = w.ndim - 2
    windows = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], axis=tuple(range(2, 2 + k)))
    spatial = "xyz"[:k]
    kernel = "uvw"[:k]
    return np.einsum(f"bi{spatial}{kernel},oi{kernel}->bo{spatial}", windows, w)


def check_dirac_identity(impl, r):
    rng = np.random.default_rng(0)  # the input signal, torch.randn in torch's test
    for groups in [1, 3]:
        batch, in_c, out_c, size, kernel_size = 8, 3, 9, 5, 3  # in_c, out_c divide by groups
        eff_out_c = out_c // groups
        for k in (1, 2, 3):
            x = rng.standard_normal((batch, in_c) + (size,) * k).astype(np.float32)
            w = impl.dirac((eff_out_c * groups, in_c) + (kernel_size,) * k, groups)
            y = conv(x, w)
            inner = (slice(None), slice(None)) + (slice(1, -1),) * k
            for g in range(groups):
                # in_c outputs are the inputs (per group); the extra outputs are 0
                assert np.allclose(x[inner], y[:, eff_out_c * g : eff_out_c * g + in_c])
                assert np.count_nonzero(y[:, eff_out_c * g + in_c : eff_out_c * (g + 1)]) == 0


def check_dirac_only_works_on_3_4_5d_inputs(impl, r):
    for dims in [1, 2, 6]:
        shape = random_nd_shape(r, dims, 1, 3)
        assert raises_value_error(lambda s=shape: impl.dirac(s)), shape


def check_xavier_uniform_errors_on_inputs_smaller_than_2d(impl, r):
    for dims in [0, 1]:
        shape = random_nd_shape(r, dims, 1, 1)
        assert raises_value_error(lambda s=shape: impl.xavier_uniform(s, 0)), shape


def check_xavier_normal_errors_on_inputs_smaller_than_2d(impl, r):
    for dims in [0, 1]:
        shape = random_nd_shape(r, dims, 1, 1)
        assert raises_value_error(lambda s=shape: impl.xavier_normal(s, 0)), shape


def check_xavier_uniform(impl, r):
    seed = 0
    for use_gain in [True, False]:
        for dims in [2, 4]:
            shape = random_nd_shape(r, dims, 20, 25)
            gain = random_float(r, 0.1, 2) if use_gain else 1
            seed += 1
            x = impl.xavier_uniform(shape, seed, gain)
            fan_in, fan_out = fans_of(shape)
            bounds = gain * math.sqrt(2.0 / (fan_in + fan_out)) * math.sqrt(3)
            assert is_uniform(x, -bounds, bounds), "Expected uniform distribution"


def check_xavier_normal(impl, r):
    seed = 0
    for use_gain in [True, False]:
        for dims in [2, 4]:
            shape = random_nd_shape(r, dims, 20, 25)
            gain = random_float(r, 0.1, 2) if use_gain else 1
            seed += 1
            x = impl.xavier_normal(shape, seed, gain)
            fan_in, fan_out = fans_of(shape)
            assert is_normal(x, 0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def check_kaiming_uniform_errors_on_inputs_smaller_than_2d(impl, r):
    for dims in [0, 1]:
        shape = random_nd_shape(r, dims, 1, 1)
        assert raises_value_error(lambda s=shape: impl.kaiming_uniform(s, 0)), shape


def check_kaiming_normal_errors_on_inputs_smaller_than_2d(impl, r):
    for dims in [0, 1]:
        shape = random_nd_shape(r, dims, 1, 1)
        assert raises_value_error(lambda s=shape: impl.kaiming_normal(s, 0)), shape


def _check_kaiming(impl, r, draw, is_distributed):
    seed = 0
    for use_a in [True, False]:
        for dims in [2, 4]:
            for mode in ["fan_in", "fan_out"]:
                shape = random_nd_shape(r, dims, 20, 25)
                a = random_float(r, 0.1, 2) if use_a else 0
                seed += 1
                x = draw(shape, seed, a=a, mode=mode)
                fan_in, fan_out = fans_of(shape)
                n = fan_in if mode == "fan_in" else fan_out
                expected_std = math.sqrt(2.0 / ((1 + a**2) * n))
                assert is_distributed(x, expected_std), (shape, a, mode)


def check_kaiming_uniform(impl, r):
    def uniform(x, std):
        return is_uniform(x, -std * math.sqrt(3.0), std * math.sqrt(3.0))

    _check_kaiming(impl, r, impl.kaiming_uniform, uniform)


def check_kaiming_normal(impl, r):
    _check_kaiming(impl, r, impl.kaiming_normal, lambda x, std: is_normal(x, 0, std))


def check_sparse_only_works_on_2d_inputs(impl, r):
    for dims in [1, 3]:
        sparsity = random_float(r, 0.1, 0.9)
        shape = random_nd_shape(r, dims, 1, 3)
        assert raises_value_error(lambda s=shape, p=sparsity: impl.sparse(s, p, 0)), shape


def check_sparse_default_std(impl, r):
    for seed, use_random_std in enumerate([True, False]):
        shape = random_nd_shape(r, 2, 30, 35)
        rows = shape[0]
        sparsity = random_float(r, 0.1, 0.2)
        std = random_float(r, 0.01, 0.2) if use_random_std else 0.01  # 0.01: torch's default
        x = impl.sparse(shape, sparsity, seed, std=std)
        for col_idx in range(shape[1]):
            column = x[:, col_idx]
            assert np.count_nonzero(column == 0) >= math.ceil(sparsity * rows)
        assert is_normal(x[x != 0], 0, std), "Expected normal distribution for non-zero elements"


def check_orthogonal(impl, r):
    seed = 0
    for use_gain in [True, False]:
        for shape in [(3, 4), (4, 3), (20, 2, 3, 4), (2, 3, 4, 5)]:
            gain = random_float(r, 0.1, 2) if use_gain else 1.0
            seed += 1
            x = impl.orthogonal(shape, seed, gain)
            rows, cols = shape[0], reduce(mul, shape[1:])
            flat = x.reshape(rows, cols)
            gram = flat.T @ flat if rows > cols else flat @ flat.T
            expected = np.eye(min(rows, cols)) * gain**2
            assert np.allclose(gram, expected, atol=1e-6, rtol=0), shape


# --- TestNNInitDeviceType, float32 ---------------------------------------------------------


def check_trunc_normal_all_dtypes(impl, r):
    for seed, dims in enumerate([1, 2, 4]):
        shape = random_nd_shape(r, dims, 30, 50)
        mean = r.uniform(-3, 3)
        std = r.uniform(0.01, 1)
        a = r.uniform(mean - 2 * std, mean)
        b = r.uniform(mean, mean + 2 * std)
        x = impl.trunc_normal(shape, mean, std, a, b, seed)
        # bounds at the weight's precision: a and b are rounded to float32 too
        assert x.min() >= np.float32(a), f"values below lower bound a={a}"
        assert x.max() <= np.float32(b), f"values above upper bound b={b}"
        assert is_trunc_normal(x, mean, std, a, b), "failed KS test against truncated normal"


def check_trunc_normal_narrow_interval(impl, r):
    mean, std, a, b = 0.0, 1.0, 2.0, 3.0
    x = impl.trunc_normal((10000,), mean, std, a, b, 0)
    assert x.min() >= a and x.max() <= b
    assert is_trunc_normal(x, mean, std, a, b), "failed KS test against truncated normal"


def check_trunc_normal_unique_values(impl, r):
    x = impl.trunc_normal((10000,), 0.0, 1.0, -2.0, 2.0, 0)
    assert x.min() >= -2.0 and x.max() <= 2.0
    assert np.unique(x).size > 5000
    assert np.all(np.isfinite(x))


def check_trunc_normal_no_boundary_values_small_std(impl, r):
    x = impl.trunc_normal((10000,), 0.0, 0.1, -2.0, 2.0, 0)
    assert np.count_nonzero(x == -2.0) == 0 and np.count_nonzero(x == 2.0) == 0


CHECKS = {
    name[len("check_") :]: fn
    for name, fn in inspect.getmembers(sys.modules[__name__], inspect.isfunction)
    if name.startswith("check_")
}


def run_check(name: str, impl) -> None:
    """One of torch's tests on impl, with torch's setUp: random.seed(123)."""
    CHECKS[name](impl, random.Random(123))

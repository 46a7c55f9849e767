"""The module card's test catalog (M07.3, section 4), and `check_init`, which runs it on your file.

The card's eleven tests are eleven functions here, `check_<name>(impl)`, listed in the
card's order in `CATALOG`. `impl` is anything that has the card's seven functions:
tinyinit.init, a pitfall mutant of tests/mutants/, or the module a student writes. A
check returns None, or raises AssertionError saying what it measured. tinyinit's own
tests (tests/test_init.py, tests/test_mutants.py) run exactly these functions, and
`check_init` runs them on a student's file, as the card's `ol check M07.3` does:

    python -m tinyinit check my_init.py          # exit status 0 only when all eleven pass

Expected values come from the card's formulas and the spec's draws (PCG32.uniform()
one at a time, and `normal`), never from the functions under test; torch's gain table
and fan rule ship with the package (data/init_torch.json). Nothing here needs
more than numpy.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "my_init.py"
>>> _ = path.write_text("from tinyinit.init import scaled_residual_std, normal_init\\n")
>>> report = check_init(path, tests=["test_scaled_residual_keeps_the_stream_bounded"])
>>> report.ok
True
>>> print(report)
my_init.py: 1 of 1 test passed
  ✓ passed           test_scaled_residual_keeps_the_stream_bounded
"""

from __future__ import annotations

import collections
import contextlib
import faulthandler
import html
import importlib.util
import io
import json
import math
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from importlib import resources
from numbers import Real
from pathlib import Path

import numpy as np

from .distributions import PAIRS_PER_BLOCK, normal
from .pcg32 import PCG32
from .pitfalls import ARRAY_FUNCTIONS, CARD_PITFALLS, FUNCTIONS, PITFALLS, check_initializer

__all__ = [
    "CATALOG",
    "NAMES",
    "CatalogTest",
    "NotPassed",
    "NotWrittenYet",
    "Report",
    "Result",
    "check_init",
]

# --- what every check uses ------------------------------------------------------------------

# Seeds other than 0, so that a generator made inside an initializer cannot pass by luck.
SEEDS = (5, 2**63 + 11)
# Linear and conv weights (out, in, *kernel), non-square and odd-sized.
SHAPES = [(4, 3), (1, 1), (5, 7), (7, 5), (8, 4, 3, 3), (3, 5, 7), (2, 3, 3, 5, 7)]


def torch_golden() -> dict:
    """torch's gain table and fan rule, as recorded by scripts/make_torch_golden.py."""
    text = resources.files(__package__).joinpath("data/init_torch.json").read_text()
    return json.loads(text)


def bits(x: np.ndarray) -> list[int]:
    """The bit patterns of a float32 array: equal bits, equal weights, no tolerance."""
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).ravel().tolist()


def card_fans(shape: tuple[int, ...]) -> tuple[int, int]:
    """The card's rule, written out for the expected values: (in * r, out * r)."""
    out, in_, *kernel = shape
    return in_ * math.prod(kernel), out * math.prod(kernel)


def uniforms_one_by_one(rng: PCG32, n: int) -> list[float]:
    """The next n rng.uniform(), as the spec defines them: one call per value."""
    return [rng.uniform() for _ in range(n)]


def spec_normals(seed: int, n: int) -> np.ndarray:
    """The first n standard normals of PCG32(seed): Box-Muller on pairs, spec section 3."""
    return normal(PCG32(seed), n)


def close(measured: float, expected: float, *, rel: float = 0.0, abs: float = 0.0) -> bool:
    """|measured - expected| <= max(rel * |expected|, abs)."""
    return math.fabs(measured - expected) <= max(rel * math.fabs(expected), abs)


class WrongReturn(AssertionError):
    """A function under check returned something of the wrong kind (raised by `_Student`)."""

    def __init__(self, message: str, value):
        super().__init__(message)
        self.value = value


def assert_rejects(call: Callable, *args, **kwargs) -> None:
    """call(*args, **kwargs) raises ValueError, or AssertionError says what it did instead."""
    try:
        result = call(*args, **kwargs)
    except ValueError:
        return
    except WrongReturn as wrong:
        result = wrong.value
    shown = "array" if isinstance(result, np.ndarray) else repr(result)
    raise AssertionError(
        f"{_call_text(call.__name__, args, kwargs)} returned {shown} instead of raising ValueError"
    )


def mean_square(x: np.ndarray) -> float:
    return float(np.mean(np.square(x, dtype=np.float64)))


def _call_text(name: str, args: tuple, kwargs: dict | None = None) -> str:
    def text(value) -> str:
        return "rng" if isinstance(value, PCG32) else repr(value)

    shown = [text(a) for a in args] + [f"{k}={text(v)}" for k, v in (kwargs or {}).items()]
    return f"{name}({', '.join(shown)})"


def _bits_differ(name: str, w: np.ndarray, expected: np.ndarray, what: str) -> str:
    """Why two arrays that should be equal bit for bit are not: the message of a failure."""
    if w.shape != expected.shape:
        return f"{name}: shape {w.shape}, expected {expected.shape}"
    got, want = w.astype(np.float64).ravel(), expected.astype(np.float64).ravel()
    k = int(np.flatnonzero(bits(w) != np.array(bits(expected)))[0])
    worst = float(np.max(np.abs(got - want)))
    scale = float(np.max(np.abs(want))) or 1.0
    if worst <= 1e-6 * scale:
        why = f"{worst:.1e} at most: a rounding difference (compute in float64, cast once)"
    else:
        why = f"element {k} (flat, row-major) is {got[k]:.8g}, expected {want[k]:.8g}"
    return f"{name}: {what}; {why}"


# --- test_hand_example_linear_4x3 -----------------------------------------------------------

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
    for name, gain in (("linear", 1.0), ("relu", math.sqrt(2)), ("tanh", 5 / 3)):
        got = impl.calculate_gain(name)
        assert close(got, gain, rel=1e-12, abs=1e-12), (
            f"calculate_gain({name!r}) = {got!r}, expected {gain!r}"
        )

    rng = PCG32(0)
    u0, u1 = rng.uniform(), rng.uniform()
    r = math.sqrt(-2 * math.log(1 - u0))
    cos = math.cos(2 * math.pi * u1)
    first_normal = float(normal(PCG32(0), 1)[0])
    assert first_normal == r * cos, f"the spec's first normal {first_normal!r} != r cos(t)"

    # Each initializer's first weight is its scale times the first uniform or normal,
    # so the weights of PCG32(0) reveal the bound and the stds the code really used.
    w_uniform = impl.xavier_uniform(shape, 1.0, PCG32(0))
    w_xavier = impl.xavier_normal(shape, 1.0, PCG32(0))
    w_kaiming = impl.kaiming_normal(shape, "fan_in", "relu", PCG32(0))
    for name, w in (("xavier_uniform", w_uniform), ("xavier_normal", w_xavier)):
        assert w.shape == shape, f"{name}((4, 3), 1.0, rng) has shape {w.shape}, expected (4, 3)"
    assert w_kaiming.shape == shape, f"kaiming_normal((4, 3), ...) has shape {w_kaiming.shape}"
    bound = float(w_uniform[0, 0]) / (2 * u0 - 1)
    xavier_std = float(w_xavier[0, 0]) / first_normal
    kaiming_std = float(w_kaiming[0, 0]) / first_normal
    assert np.all(np.abs(w_uniform) <= np.float32(bound) * (1 + 1e-6)), (
        f"xavier_uniform((4, 3), 1.0, rng) has weights beyond its own bound {bound:.6g} "
        f"(largest {float(np.max(np.abs(w_uniform))):.6g})"
    )

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
        assert close(measured[name], value, abs=1e-6), (
            f"{name}: {measured[name]:.8g}, the spec's exact value is {value:.8g}"
        )
    for name, value in CARD.items():
        assert close(measured[name], value, abs=1e-4), (
            f"{name}: {measured[name]:.8g}, the card's value is {value}"
        )
    assert w_uniform[0, 0] == np.float32(-0.40678263), (
        f"xavier_uniform's first weight {w_uniform[0, 0]!r}, expected float32 -0.40678263"
    )
    assert w_kaiming[0, 0] == np.float32(-0.66073924), (
        f"kaiming_normal's first weight {w_kaiming[0, 0]!r}, expected float32 -0.66073924"
    )
    # 1e-6 is loose for a number this small: the residual std, relatively
    assert close(measured["residual_std"], 0.0040824829046386, rel=1e-9), (
        f"scaled_residual_std(0.02, 12) = {measured['residual_std']!r}, "
        f"expected 0.02 / sqrt(24) = 0.0040824829046386"
    )


# --- test_fans_and_gains_match_torch --------------------------------------------------------


def check_fans_and_gains_match_torch(impl) -> None:
    golden = torch_golden()
    for case in golden["gains"]:
        args = (case["nonlinearity"],) + (() if case["param"] is None else (case["param"],))
        gain = impl.calculate_gain(*args)
        assert close(gain, case["gain"], rel=1e-12, abs=1e-12), (
            f"{_call_text('calculate_gain', args)} = {gain!r}, torch's is {case['gain']!r}"
        )
    for case in golden["fans"]:
        shape = tuple(case["shape"])
        expected = (case["fan_in"], case["fan_out"])
        got = impl.fans(shape)
        assert got == expected, (
            f"fans{shape} of {case['layer'] or 'a weight'} = {got}, torch's is {expected}"
        )
    for case in golden["fan_errors"]:  # torch: fewer than 2 dimensions have no fans
        assert_rejects(impl.fans, tuple(case["shape"]))
    for case in golden["gain_errors"]:
        assert_rejects(impl.calculate_gain, case["nonlinearity"], case["param"])


# --- test_normal_inits_draw_spec_normals_in_c_order -----------------------------------------


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
        "kaiming_normal leaky_relu fan_out": (
            lambda s, rng: impl.kaiming_normal(s, "fan_out", "leaky_relu", rng),
            lambda fan_in, fan_out: math.sqrt(2 / (1 + 0.01**2)) / math.sqrt(fan_out),
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


def draws_spec_normals_in_c_order(name: str, draw: Callable, std_of: Callable) -> None:
    """draw(shape, rng) is float32(std * the spec's normals), row-major, n normals drawn.

    Run on SHAPES with both SEEDS, and on a shape larger than one block of the fast path.
    """
    big = (129, 2 * PAIRS_PER_BLOCK // 128 + 1)  # more than one block of the fast path
    cases = [(shape, seed) for shape in SHAPES for seed in SEEDS] + [(big, SEEDS[0])]
    for shape, seed in cases:
        n = math.prod(shape)
        rng = PCG32(seed)
        w = draw(shape, rng)
        expected = (std_of(*card_fans(shape)) * spec_normals(seed, n)).astype(np.float32)
        expected = expected.reshape(shape)  # row-major: normal k to flat index k
        if bits(w) != bits(expected):
            raise AssertionError(
                _bits_differ(f"{name} {shape}", w, expected, "not float32(std * normals)")
            )
        pairs = (n + 1) // 2  # two uniforms per pair, two words per uniform
        assert rng == PCG32(seed).advance(4 * pairs), (
            f"{name} {shape}: drew other than n = {n} normals ({pairs} pairs of uniforms)"
        )


def check_normal_inits_draw_spec_normals_in_c_order(impl) -> None:
    for name, (draw, std_of) in normal_inits(impl).items():
        draws_spec_normals_in_c_order(name, draw, std_of)
    for n in (1, 6, 7):  # normal_init takes any shape: 1-D, odd sizes
        w = impl.normal_init((n,), 0.5, PCG32(SEEDS[1]))
        expected = (0.5 * spec_normals(SEEDS[1], n)).astype(np.float32)
        if bits(w) != bits(expected):
            raise AssertionError(
                _bits_differ(f"normal_init(({n},))", w, expected, "not float32(0.5 * normals)")
            )


# --- test_uniform_uses_one_draw_per_element -------------------------------------------------


def check_uniform_uses_one_draw_per_element(impl) -> None:
    for shape in SHAPES:
        for seed in SEEDS:
            for gain in (1.0, 0.25, math.sqrt(2)):
                rng, scalar = PCG32(seed), PCG32(seed)
                first = impl.xavier_uniform(shape, gain, rng)
                n = math.prod(shape)
                fan_in, fan_out = card_fans(shape)
                a = gain * math.sqrt(6 / (fan_in + fan_out))
                expected = np.array([-a + 2 * a * u_k for u_k in uniforms_one_by_one(scalar, n)])
                expected = expected.astype(np.float32).reshape(shape)
                name = f"xavier_uniform {shape} gain {gain:.4g}"
                what = f"not float32(-a + 2a u_k) with a = {a:.6g}"
                if bits(first) != bits(expected):
                    raise AssertionError(_bits_differ(name, first, expected, what))
                assert rng == PCG32(seed).advance(2 * n), (
                    f"xavier_uniform {shape}: not one uniform per element ({n} uniforms)"
                )
                # a second layer from the same generator starts right after the first
                second = impl.xavier_uniform(shape, gain, rng)
                expected = np.array([-a + 2 * a * u_k for u_k in uniforms_one_by_one(scalar, n)])
                expected = expected.astype(np.float32).reshape(shape)
                assert bits(second) == bits(expected), (
                    f"xavier_uniform {shape}: a second layer from the same rng is not the "
                    f"next {n} uniforms"
                )


# --- test_same_seed_same_weights ------------------------------------------------------------


def initializers(impl) -> dict:
    """Every initializer as draw(shape, rng)."""
    return {
        "xavier_uniform": lambda s, rng: impl.xavier_uniform(s, 1.0, rng),
        "xavier_normal": lambda s, rng: impl.xavier_normal(s, 1.0, rng),
        "kaiming_normal": lambda s, rng: impl.kaiming_normal(s, "fan_in", "relu", rng),
        "normal_init": lambda s, rng: impl.normal_init(s, 0.02, rng),
    }


# (seed, other seed, shape): seeds at both ends of the 64 bits, and shapes (out, in) and
# (out, in, kh, kw) from 1 to 6 wide, as tests/test_init.py draws more of them at random.
SAME_SEED_CASES = [
    (0, 1, (1, 1)),
    (1, 0, (6, 6)),
    (5, 2**63 + 11, (2, 5)),
    (2**64 - 1, 2**63, (5, 2)),
    (12345, 54321, (3, 4)),
    (2**32, 2**32 + 1, (1, 6)),
    (7, 8, (1, 1, 1, 1)),
    (99, 2**64 - 2, (4, 4, 3, 3)),
    (2**40 + 3, 17, (2, 3, 1, 2)),
    (31337, 31338, (1, 4, 3, 1)),
]


def same_seed_same_weights(impl, seed: int, other: int, shape: tuple[int, ...]) -> None:
    """Equal seeds give equal bytes, another seed and a second layer give other bytes."""
    for name, draw in initializers(impl).items():
        weights = draw(shape, PCG32(seed)).tobytes()
        assert draw(shape, PCG32(seed)).tobytes() == weights, f"{name}: same seed differs"
        assert draw(shape, PCG32(other)).tobytes() != weights, (
            f"{name}: seed does nothing (PCG32({seed}) and PCG32({other}) give the same {shape})"
        )
        rng = PCG32(seed)
        first, second = draw(shape, rng), draw(shape, rng)
        assert second.tobytes() != first.tobytes(), (
            f"{name}: second layer = first (two draws of {shape} from one rng)"
        )


def check_same_seed_same_weights(impl) -> None:
    for seed, other, shape in SAME_SEED_CASES:
        same_seed_same_weights(impl, seed, other, shape)


# --- test_empirical_variance_matches_the_formula --------------------------------------------

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


def check_tanh_signal_survives_with_xavier(impl) -> None:
    gain = impl.calculate_gain("tanh")
    with_gain = final_mean_square(lambda s, rng: impl.xavier_normal(s, gain, rng), np.tanh)
    without = final_mean_square(lambda s, rng: impl.xavier_normal(s, 1.0, rng), np.tanh)
    assert 0.1 < with_gain < 1, f"gain {gain:.4g}: mean square {with_gain:.3g} (about 0.42)"
    assert without < with_gain / 2, f"gain 1: mean square {without:.3g} (about 0.02)"


def check_scaled_residual_keeps_the_stream_bounded(impl) -> None:
    for base_std in (0.02, 1.0):
        for n_layers in (1, 2, 3, 6, 12, 48, 96):
            s = impl.scaled_residual_std(base_std, n_layers)
            assert close(2 * n_layers * s**2, base_std**2, rel=1e-12, abs=1e-12), (
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


# --- test_shapes_and_dtype ------------------------------------------------------------------


def check_shapes_and_dtype(impl) -> None:
    for shape in SHAPES:
        for name, draw in initializers(impl).items():
            w = draw(shape, PCG32(3))
            assert w.dtype == np.float32, f"{name} {shape}: {w.dtype}"
            assert w.flags.c_contiguous, f"{name} {shape}: not C-contiguous"
            assert w.shape == shape, f"{name}: shape {w.shape} != {shape}"
    for shape in [(7,), (1,), (0,), (2, 3, 0)]:  # normal_init takes any shape, 1-D included
        w = impl.normal_init(shape, 0.02, PCG32(3))
        assert w.dtype == np.float32 and w.flags.c_contiguous and w.shape == shape, (
            f"normal_init({shape}, 0.02, rng): dtype {w.dtype}, shape {w.shape}, "
            f"C-contiguous {w.flags.c_contiguous}"
        )
    assert impl.normal_init((5,), 0.02, PCG32(3)).ndim == 1, "normal_init((5,), ...) is not 1-D"


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


# --- the catalog ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CatalogTest:
    """One row of the card's section 4: its check, what to try when it fails, and which
    functions' pitfalls (tinyinit.pitfalls) can make it fail.

    >>> import tinyinit.init
    >>> test = TESTS["test_fans_and_gains_match_torch"]
    >>> test.check(tinyinit.init)          # None: passed; a failure raises AssertionError
    >>> test.suspects
    ('fans', 'calculate_gain')
    """

    name: str
    check: Callable[[object], None]
    hint: str
    suspects: tuple[str, ...] = ()


CATALOG: tuple[CatalogTest, ...] = (
    CatalogTest(
        "test_hand_example_linear_4x3",
        check_hand_example_linear_4x3,
        "redo the card's section 3 by hand: Linear(3 -> 4) stores W as (4, 3), so fans (3, 4); "
        "a = sqrt(6 / 7) = 0.92582, Xavier std sqrt(2 / 7), Kaiming std sqrt(2 / 3), "
        "residual std 0.02 / sqrt(24); weight [0, 0] is the scale times the first draw of rng",
        (
            "fans",
            "calculate_gain",
            "xavier_uniform",
            "xavier_normal",
            "kaiming_normal",
            "scaled_residual_std",
        ),
    ),  # fmt: skip
    CatalogTest(
        "test_fans_and_gains_match_torch",
        check_fans_and_gains_match_torch,
        "shape is (out, in, *kernel): fan_in = in * r and fan_out = out * r, r the product of "
        "the kernel sizes; gains: 1 for linear, conv*, conv_transpose* and sigmoid, sqrt(2) "
        "relu, sqrt(2 / (1 + s**2)) leaky_relu (s = param, default 0.01, a number), 3/4 selu, "
        "5/3 tanh; ValueError for fewer than 2 dimensions or an unknown name",
        ("fans", "calculate_gain"),
    ),
    CatalogTest(
        "test_normal_inits_draw_spec_normals_in_c_order",
        check_normal_inits_draw_spec_normals_in_c_order,
        "std * normal(rng, n) with n = prod(shape), in float64, then .astype(np.float32) and "
        ".reshape(shape): one normal per element, row-major, from the rng given; "
        "std = gain * sqrt(2 / (fan_in + fan_out)) (Xavier), gain / sqrt(fan) (Kaiming)",
        ("xavier_normal", "kaiming_normal", "normal_init"),
    ),
    CatalogTest(
        "test_uniform_uses_one_draw_per_element",
        check_uniform_uses_one_draw_per_element,
        "element k is -a + 2a * u_k with u_k the k-th rng.uniform(): exactly prod(shape) "
        "calls, row-major, then .astype(np.float32); a = gain * sqrt(6 / (fan_in + fan_out))",
        ("xavier_uniform",),
    ),
    CatalogTest(
        "test_same_seed_same_weights",
        check_same_seed_same_weights,
        "draw from the rng argument and only from it: no PCG32(...) or np.random inside an "
        "initializer, so that a seed fixes the weights and the next layer gets new ones",
        ("xavier_uniform", "xavier_normal", "kaiming_normal", "normal_init"),
    ),
    CatalogTest(
        "test_empirical_variance_matches_the_formula",
        check_empirical_variance_matches_the_formula,
        "Var U(-a, a) = a**2 / 3, so Xavier's bound is a = gain * sqrt(6 / (fan_in + fan_out)); "
        "Xavier's normal std is gain * sqrt(2 / (fan_in + fan_out)); Kaiming's is "
        "sqrt(2) / sqrt(fan), fan = fan_in or fan_out as fan_mode says",
        ("xavier_uniform", "xavier_normal", "kaiming_normal", "fans"),
    ),
    CatalogTest(
        "test_relu_signal_survives_20_layers",
        check_relu_signal_survives_20_layers,
        "ReLU's gain is sqrt(2), a factor on the std (the variance is 2 / fan_in); a factor 2 "
        "too large or too small in variance compounds to 2**20 over 20 layers",
        ("kaiming_normal", "calculate_gain", "xavier_normal", "xavier_uniform"),
    ),
    CatalogTest(
        "test_tanh_signal_survives_with_xavier",
        check_tanh_signal_survives_with_xavier,
        "calculate_gain('tanh') is 5/3, and xavier_normal multiplies its std by the gain",
        ("calculate_gain", "xavier_normal"),
    ),
    CatalogTest(
        "test_scaled_residual_keeps_the_stream_bounded",
        check_scaled_residual_keeps_the_stream_bounded,
        "s = base_std / sqrt(2 * n_layers): each block adds two outputs (attention and MLP), "
        "2L in all, so that 2L s**2 = base_std**2",
        ("scaled_residual_std", "normal_init"),
    ),
    CatalogTest(
        "test_shapes_and_dtype",
        check_shapes_and_dtype,
        "return a new float32 array of exactly `shape`, C-contiguous "
        "(values.astype(np.float32).reshape(shape)); normal_init takes any shape, 1-D and "
        "empty ones too",
    ),
    CatalogTest(
        "test_rejects_bad_arguments",
        check_rejects_bad_arguments,
        "raise ValueError, before drawing anything, for fewer than 2 dimensions or a 0 fan, "
        "a negative dimension, an unknown nonlinearity or fan_mode, a negative gain or std, "
        "n_layers < 1 or a negative base_std",
    ),
)
NAMES = tuple(test.name for test in CATALOG)
TESTS = {test.name: test for test in CATALOG}
CHECKS = {test.name: test.check for test in CATALOG}


# --- a student's file, as the checks see it -------------------------------------------------

PASSED, FAILED, NOT_WRITTEN, ERROR, TIMED_OUT = (
    "passed",
    "failed",
    "not written yet",
    "error",
    "timed out",
)
STATUSES = (PASSED, FAILED, NOT_WRITTEN, ERROR, TIMED_OUT)
# A symbol beside each word, never instead of it.
MARKS = {PASSED: "✓", FAILED: "✗", NOT_WRITTEN: "○", ERROR: "✗", TIMED_OUT: "✗"}
# Each test takes a fraction of a second with numpy; a student's loop of one rng.uniform()
# per weight takes a few seconds on the largest one (20 layers of 256 x 256).
DEFAULT_TIMEOUT = 30.0
CARD_IDS = {key: card_id for card_id, key in CARD_PITFALLS.items()}


class NotWritten(Exception):
    """The student's file lacks a function a test needs."""

    def __init__(self, function: str, message: str):
        super().__init__(message)
        self.function = function


class Stuck(Exception):
    """A function that did not finish in an earlier test, and is not called again."""

    def __init__(self, function: str, earlier: dict):
        super().__init__(function)
        self.function, self.earlier = function, earlier


class _Student:
    """The student's module, each of the card's functions checked for what it returns.

    A function that returns None or the wrong kind of thing fails with a message that
    says so (WrongReturn), instead of a TypeError deep in a test.
    """

    def __init__(self, module, path: Path, stuck: dict | None = None):
        self._module = module
        self._path = path
        self._stuck = stuck or {}  # function -> the test it did not finish, where it was
        self._diagnoses: dict[str, object] = {}

    def __getattr__(self, name: str):
        if name not in FUNCTIONS:
            raise AttributeError(name)
        if name in self._stuck:

            def stuck(*args, **kwargs):
                raise Stuck(name, self._stuck[name])

            return stuck
        fn = getattr(self._module, name, None)
        if not callable(fn):
            raise NotWritten(name, f"{self._path.name} has no function {name}")
        checked = _returning(name, fn)
        setattr(self, name, checked)
        return checked

    def pitfalls(self, kinds: Iterable[str]) -> tuple[dict, ...]:
        """The card's pitfalls tinyinit.pitfalls finds in these functions (one entry each)."""
        found: dict[str, dict] = {}
        for kind in kinds:
            fn = getattr(self._module, kind, None)
            if not callable(fn) or kind in self._stuck:
                continue
            if kind not in self._diagnoses:
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        self._diagnoses[kind] = check_initializer(fn, kind)
                except Exception:  # noqa: BLE001 - a diagnosis is a bonus, never a crash
                    self._diagnoses[kind] = None
            d = self._diagnoses[kind]
            if d is None or d.pitfall not in CARD_IDS:
                continue
            card_id = CARD_IDS[d.pitfall]
            if card_id in found:
                found[card_id]["functions"].append(kind)
                continue
            p = PITFALLS[d.pitfall]
            measured = next(
                (line.split("measured:", 1)[1].strip() for line in d.message.splitlines()
                 if line.strip().startswith("measured:")),
                "",
            )  # fmt: skip
            found[card_id] = dict(
                id=card_id,
                title=p.title,
                symptom=p.symptom,
                fix=p.fix,
                functions=[kind],
                measured=measured if len(measured) <= 200 else measured[:199] + "…",
            )
        return tuple(found.values())


def _returning(name: str, fn: Callable) -> Callable:
    if name in ARRAY_FUNCTIONS:
        ok, what = (lambda v: isinstance(v, np.ndarray)), "a numpy array (the weights)"
    elif name == "fans":
        ok, what = (lambda v: isinstance(v, tuple) and len(v) == 2), "a tuple (fan_in, fan_out)"
    else:
        ok, what = (lambda v: isinstance(v, Real) and not isinstance(v, bool)), "a number"

    def checked(*args, **kwargs):
        value = fn(*args, **kwargs)
        if not ok(value):
            shown = repr(value) if len(repr(value)) < 60 else type(value).__name__
            call = _call_text(name, args, kwargs)
            raise WrongReturn(f"{call} returned {shown}, not {what}", value)
        return value

    checked.__name__ = name
    return checked


def _student_frames(tb, path: Path) -> list[traceback.FrameSummary]:
    return [f for f in traceback.extract_tb(tb) if _same_file(f.filename, path)]


def _same_file(filename: str, path: Path) -> bool:
    try:
        return os.path.samefile(filename, path)
    except OSError:
        return False


def _where(frame: traceback.FrameSummary, path: Path) -> str:
    return f"{path.name}:{frame.lineno} in {frame.name}"


@dataclass(frozen=True)
class Result:
    """One test's verdict on a student's file: its status, and what a student reads next to it.

    status is one of STATUSES. measured says what the test found (failed), the exception
    (error), the function still to write (not written yet) or where it was stopped (timed
    out); where is file:line in the student's file and code its line; pitfalls are the
    card's pitfalls found in the functions this test uses (dicts: id, title, symptom, fix,
    functions, measured); printed is what the student's code printed during the test.

    >>> r = Result("test_shapes_and_dtype", FAILED, "normal_init (7,): float64", "cast once")
    >>> r.passed, r.lines()
    (False, ['measured: normal_init (7,): float64', 'hint: cast once'])
    """

    test: str
    status: str
    measured: str = ""
    hint: str = ""
    where: str = ""
    code: str = ""
    pitfalls: tuple = ()
    printed: str = ""
    seconds: float = field(default=0.0, compare=False)

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def lines(self) -> list[str]:
        """The details under the test's line, in the order a student reads them."""
        out = []
        if self.measured:
            label = {FAILED: "measured", NOT_WRITTEN: "", TIMED_OUT: ""}.get(self.status, "")
            out.append(f"{label}: {self.measured}" if label else self.measured)
        if self.where:
            out.append(f"at {self.where}" + (f": {self.code}" if self.code else ""))
        for p in self.pitfalls:
            out.append(f"pitfall {p['id']}: {p['title']}")
            out.append(f"  symptom: {p['symptom']}")
            if p["measured"]:
                out.append(f"  found in {', '.join(p['functions'])}: {p['measured']}")
            out.append(f"  fix: {p['fix']}")
        if self.hint and not self.pitfalls:
            out.append(f"hint: {self.hint}")
        if self.printed:
            out.append("printed: " + " | ".join(self.printed.strip().splitlines()[:5]))
        return out


def run_test(test: CatalogTest, student: _Student, path: Path) -> Result:
    """Run one catalog test on a student's module (in this process) and judge it.

    A failure's pitfalls are not looked for here (`_Student.pitfalls` does, separately:
    it calls the student's functions again, and may be what gets stuck).
    """
    printed = io.StringIO()
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            test.check(student)
    except Stuck as error:
        earlier = error.earlier
        return Result(
            test.name,
            TIMED_OUT,
            measured=f"not run: {error.function} did not finish in {earlier['test']} "
            f"(stopped after {earlier['seconds']:g} s)",
            hint=ENDLESS,
            where=earlier["where"],
            code=earlier["code"],
        )
    except NotWritten as error:
        return Result(
            test.name,
            NOT_WRITTEN,
            measured=f"{error} yet",
            hint=f"write {error.function} in {path.name}",
            printed=printed.getvalue(),
        )
    except BaseException as error:  # noqa: BLE001 - whatever the student's code does
        result = _judge(test, student, path, error)
        return Result(**{**asdict(result), "printed": printed.getvalue()})
    seconds = time.perf_counter() - start
    return Result(test.name, PASSED, printed=printed.getvalue(), seconds=seconds)


def _judge(test: CatalogTest, student: _Student, path: Path, error: BaseException) -> Result:
    frames = _student_frames(error.__traceback__, path)
    if isinstance(error, NotImplementedError) and frames:
        inner, outer = frames[-1], frames[0]
        needed = "" if inner.name == outer.name else f" (called by {outer.name})"
        return Result(
            test.name,
            NOT_WRITTEN,
            measured=f"{inner.name} is not written yet: it raises NotImplementedError{needed}",
            hint=f"write {inner.name} in {path.name}, in place of raise NotImplementedError()",
            where=_where(inner, path),
        )
    if isinstance(error, AssertionError) and not frames:
        measured = str(error) or traceback.extract_tb(error.__traceback__)[-1].line or "failed"
        return Result(test.name, FAILED, measured=measured, hint=test.hint)
    exception = f"{type(error).__name__}: {error}".rstrip(": ")
    if frames:
        return Result(
            test.name,
            ERROR,
            measured=f"your code raised {exception}",
            hint=test.hint,
            where=_where(frames[-1], path),
            code=(frames[-1].line or "").strip(),
        )
    last = traceback.extract_tb(error.__traceback__)[-1]
    return Result(
        test.name,
        ERROR,
        measured=f"{exception}, in the test, on what your functions returned "
        f"(line {last.lineno} of tinyinit/catalog.py: {(last.line or '').strip()})",
        hint=test.hint,
    )


# --- the report -----------------------------------------------------------------------------


class NotPassed(AssertionError):
    """A check cell's tests did not all pass: shown as the report, without a traceback.

    It is an AssertionError, so nbgrader and pytest count the cell as failed.

    >>> issubclass(NotPassed, AssertionError)
    True
    """

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[1;31m✗ {self}\x1b[0m"]


class NotWrittenYet(NotImplementedError):
    """A check cell's tests wait for functions still to write: shown as the report.

    A NotImplementedError, as the stubs raise: the exercise is not answered yet.

    >>> issubclass(NotWrittenYet, NotImplementedError)
    True
    """

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[1;33m… {self}\x1b[0m"]


@dataclass(frozen=True)
class Report:
    """The verdict of check_init: one Result per test run, in the card's order.

    problem is set (and no test ran) when the file could not be imported. A notebook
    shows it as a table (_repr_html_), a terminal as text, each verdict in words.

    >>> report = Report("my_init.py", (
    ...     Result("test_shapes_and_dtype", PASSED),
    ...     Result("test_rejects_bad_arguments", NOT_WRITTEN, "fans is not written yet"),
    ... ))
    >>> report.ok
    False
    >>> print(report)
    my_init.py: 1 of 2 tests passed; 1 not written yet
      ✓ passed           test_shapes_and_dtype
      ○ not written yet  test_rejects_bad_arguments
                         fans is not written yet
    """

    path: str
    results: tuple[Result, ...] = ()
    problem: str | None = None
    seconds: float = field(default=0.0, compare=False)

    @property
    def ok(self) -> bool:
        """True only when every selected test passed."""
        return self.problem is None and bool(self.results) and all(r.passed for r in self.results)

    def __getitem__(self, test: str) -> Result:
        for result in self.results:
            if result.test == test:
                return result
        raise KeyError(f"test {test!r} was not run; run: {', '.join(self.names)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.test for r in self.results)

    def summary(self) -> str:
        name = Path(self.path).name
        if self.problem is not None:
            return f"{name} could not be imported, so no test ran"
        n, passed = len(self.results), sum(r.passed for r in self.results)
        text = f"{name}: {passed} of {n} test{'s' if n != 1 else ''} passed"
        others = [
            f"{count} {status}"
            for status in STATUSES[1:]
            if (count := sum(r.status == status for r in self.results))
        ]
        return text + ("; " + ", ".join(others) if others else "")

    def __str__(self) -> str:
        lines = [self.summary()]
        if self.problem is not None:
            lines += ["  " + line for line in self.problem.splitlines()]
        width = max(len(s) for s in STATUSES)
        for r in self.results:
            lines.append(f"  {MARKS[r.status]} {r.status:<{width}}  {r.test}")
            lines += [" " * (width + 6) + line for line in r.lines()]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        e = html.escape
        head = f"<p><strong>{e(self.summary())}</strong></p>"
        if self.problem is not None:
            return f"<div>{head}<pre>{e(self.problem)}</pre></div>"
        cell = 'style="text-align:left;vertical-align:top;padding:2px 8px"'
        rows = []
        for r in self.results:
            colour = {PASSED: "#1a7f37", NOT_WRITTEN: "#57606a"}.get(r.status, "#b3261e")
            details = "<br>".join(  # a line indented under the one above stays indented
                ("&emsp;" if line.startswith(" ") else "") + e(line.strip()) for line in r.lines()
            )
            rows.append(
                f"<tr><td {cell}><code>{e(r.test)}</code></td>"
                f'<td {cell}><strong style="color:{colour}">{MARKS[r.status]} {e(r.status)}'
                f"</strong></td><td {cell}>{details}</td></tr>"
            )
        return (
            f"<div>{head}<table><caption style='text-align:left'>The module card's tests, "
            f"in its order</caption><thead><tr><th scope='col' {cell}>test</th>"
            f"<th scope='col' {cell}>result</th><th scope='col' {cell}>details</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
        )

    def require(self) -> Report:
        """The report itself when every test passed; else raise, showing the report.

        A notebook's check cell ends with it, so that a grader (nbgrader, pytest) counts a
        test not passed yet as a failed cell: `NotPassed` (an AssertionError) when a test
        failed, raised an error or timed out, `NotWrittenYet` (a NotImplementedError) when
        the only trouble is functions still to write. Either shows as the report's text,
        with no traceback.

        >>> Report("my_init.py", (Result("test_shapes_and_dtype", PASSED),)).require().ok
        True
        >>> Report("my_init.py", (Result("test_shapes_and_dtype", NOT_WRITTEN),)).require()
        Traceback (most recent call last):
        ...
        tinyinit.catalog.NotWrittenYet: my_init.py: 0 of 1 test passed; 1 not written yet
          ○ not written yet  test_shapes_and_dtype
        """
        if self.ok:
            return self
        written = self.problem is None and all(
            r.status in (PASSED, NOT_WRITTEN) for r in self.results
        )
        raise (NotWrittenYet if written and self.results else NotPassed)(str(self))


# --- check_init: the tests in a child process that a stuck test cannot hold up --------------


def student_file(path) -> Path:
    """The student's file as a Path, or FileNotFoundError/ValueError naming what is wrong."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path must be a file name such as 'my_init.py', got {path!r}")
    file = Path(path)
    if not file.is_file():
        where = "" if file.is_absolute() else f" in {Path.cwd()}"
        what = "is a folder, not a file" if file.is_dir() else f"does not exist{where}"
        raise FileNotFoundError(
            f"path {str(path)!r} {what}: give the Python file that holds your seven "
            f"functions, e.g. 'my_init.py' next to the notebooks"
        )
    if file.suffix != ".py":
        raise ValueError(f"path must be a Python file ending in .py, got {str(path)!r}")
    return file


def selected_tests(tests) -> tuple[str, ...]:
    """The names asked for, in the card's order; ValueError for a name not in the catalog."""
    if tests is None:
        return NAMES
    if isinstance(tests, str):
        tests = [tests]
    tests = list(tests)
    unknown = [t for t in tests if t not in NAMES]
    if unknown or not tests:
        raise ValueError(
            f"tests must be names of the card's tests ({', '.join(NAMES)}); got {tests!r}"
        )
    return tuple(name for name in NAMES if name in tests)


def _timeout(timeout) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, Real) or not 0 < timeout < math.inf:
        raise ValueError(f"timeout must be a number of seconds > 0, got {timeout!r}")
    return float(timeout)


def check_init(path="my_init.py", tests=None, timeout: float = DEFAULT_TIMEOUT) -> Report:
    """Run the card's tests on the functions of your file; a Report says how each went.

    path is the file holding the card's seven functions; tests a list of test names
    (None: all eleven, always in the card's order); timeout the seconds one test (or the
    import of the file) may take before it is stopped. The tests run in a separate Python
    process, so a function that never returns is stopped and the other tests still run.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "my_init.py"
    >>> _ = path.write_text("def fans(shape):\\n    raise NotImplementedError()\\n")
    >>> report = check_init(path, tests=["test_hand_example_linear_4x3"])
    >>> report.ok, report["test_hand_example_linear_4x3"].measured
    (False, 'fans is not written yet: it raises NotImplementedError')
    """
    if os.environ.get(CHILD_VARIABLE):
        raise RuntimeError(
            "check_init was called by the file it is checking: call it from a notebook or "
            "a terminal, not from inside your my_init.py"
        )
    file = student_file(path)
    names = selected_tests(tests)
    limit = _timeout(timeout)
    start = time.perf_counter()
    results: dict[str, Result] = {}
    stuck: dict[str, dict] = {}  # a function stopped once is not called again
    todo = list(names)
    while todo:
        with _Child(file, todo, limit, stuck) as child:
            loaded = child.receive()
            if not (isinstance(loaded, dict) and loaded.get("loaded")):
                problem = loaded["problem"] if isinstance(loaded, dict) else child.import_failure()
                return Report(str(path), (), problem, time.perf_counter() - start)
            while todo:
                name = todo.pop(0)
                message = child.receive()
                if isinstance(message, dict):
                    results[name] = Result(**{**message, "pitfalls": ()})
                    if message["status"] != FAILED or not TESTS[name].suspects:
                        continue
                    message = child.receive()  # the failure's pitfalls, in their own time
                    if isinstance(message, dict):
                        results[name] = replace(results[name], pitfalls=tuple(message["pitfalls"]))
                        continue
                stopped, function = child.test_failure(name)
                results.setdefault(name, stopped)
                if function:  # stopped inside it: the next tests do not call it again
                    stuck[function] = dict(
                        test=name, seconds=limit, where=stopped.where, code=stopped.code
                    )
                break  # the child is gone: a new one runs the rest
    seconds = time.perf_counter() - start
    return Report(str(path), tuple(results[n] for n in names), None, seconds)


# Set in the child: a file that calls check_init itself would otherwise start a chain of them.
CHILD_VARIABLE = "TINYINIT_CHECKING"
# Python, numpy and tinyinit start within this (the student's time limit starts after).
STARTUP = 120.0
# Once a test's time is up, the child writes where it was stuck: how long to wait for it.
DUMP_WAIT = 2.0
_TIMEOUT, _EOF = "timeout", "eof"
ENDLESS = (
    "a loop that never ends? If your code is only slow, draw all n values in one call "
    "(normal(rng, n)), or allow more time (check_init's timeout, or --timeout)"
)


class _Child:
    """A Python process that imports the student's file and runs the tests, one JSON line
    per result; receive() waits for the next line at most the time limit of one test."""

    def __init__(self, file: Path, names: list[str], timeout: float, stuck: dict):
        self.file, self.timeout = file, timeout
        fd, self.trace = tempfile.mkstemp(prefix="tinyinit-check-", suffix=".txt")
        os.close(fd)
        package_root = str(Path(__file__).resolve().parent.parent)
        code = (
            f"import sys; sys.path[0] = {package_root!r}; "
            "from tinyinit.catalog import _worker; _worker()"
        )
        argv = [str(file.resolve()), self.trace, repr(timeout), json.dumps(stuck), *names]
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, *argv],
            env={**os.environ, CHILD_VARIABLE: "1"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,  # not into a notebook's output: kept for a crash's report
            cwd=str(file.resolve().parent),
            text=True,
            encoding="utf-8",
            errors="replace",
        )
        self.lines: queue.Queue = queue.Queue()
        self.errors: collections.deque = collections.deque(maxlen=5)
        self.reason = ""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_errors, daemon=True).start()
        self.started = self._next(STARTUP) == {"started": True}

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_errors(self) -> None:
        for line in self.process.stderr:
            if line.strip():
                self.errors.append(line.rstrip())

    def _next(self, timeout: float):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self._wait_for_dump()
            self.process.kill()
            self.process.wait()
            self.reason = _TIMEOUT
            return _TIMEOUT
        if line is None:
            self.process.wait()
            self.reason = _EOF
            return _EOF
        return json.loads(line)

    def receive(self):
        """The next message (a dict), or _TIMEOUT, or _EOF when the child ended."""
        if not self.started:
            return self.reason or _EOF
        return self._next(self.timeout)

    def _wait_for_dump(self) -> None:
        deadline = time.perf_counter() + DUMP_WAIT
        while time.perf_counter() < deadline and self.process.poll() is None:
            with contextlib.suppress(OSError):
                if os.path.getsize(self.trace):
                    time.sleep(0.05)  # the rest of the dump
                    return
            time.sleep(0.02)

    def test_failure(self, name: str) -> tuple[Result, str]:
        """The Result of a test the child did not finish (stopped, or the process died),
        and which of the card's functions was running when it was stopped."""
        where, code, function = self._stuck_at()
        if self.reason == _TIMEOUT:
            measured = f"stopped after {self.timeout:g} s: the test did not finish"
            return Result(name, TIMED_OUT, measured, ENDLESS, where, code), function
        measured = f"the process running the test ended (exit status {self.process.returncode})"
        hint = "does your code call exit() or os._exit(), or crash Python?"
        printed = "\n".join(self.errors)
        return Result(name, ERROR, measured, hint, where, code, printed=printed), ""

    def import_failure(self) -> str:
        """The problem text when the child did not get through importing the file."""
        where, code, _ = self._stuck_at()
        at = f"\nstopped at {where}: {code}" if where else ""
        if not self.started and self.reason == _TIMEOUT:
            return f"Python did not start within {STARTUP:g} s (is the machine very busy?)"
        if self.reason == _TIMEOUT:
            return f"importing it did not finish within {self.timeout:g} s{at}\nhint: {ENDLESS}"
        return f"the process importing it ended (exit status {self.process.returncode}){at}"

    def _stuck_at(self) -> tuple[str, str, str]:
        """Where in the student's file the child was when its time ran out (faulthandler's
        dump): file:line, the line, and the card's function the test had called."""
        try:
            text = Path(self.trace).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "", "", ""
        frames = []  # (line, function), most recent call first
        for line in text.splitlines():
            m = re.match(r'\s*File "(.*)", line (\d+) in (\S+)', line)
            if m and _same_file(m.group(1), self.file):
                frames.append((int(m.group(2)), m.group(3)))
            elif frames and not line.startswith(" "):
                break  # the next thread's stack
        if not frames:
            return "", "", ""
        lineno, function = frames[0]
        called = next((f for _, f in reversed(frames) if f in FUNCTIONS), "")
        where = f"{self.file.name}:{lineno} in {function}"
        return where, _source_line(self.file, lineno), called

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.process.stdout.close()
        self.process.stderr.close()
        with contextlib.suppress(OSError):
            os.remove(self.trace)


def _source_line(file: Path, lineno: int) -> str:
    try:
        return file.read_text(encoding="utf-8").splitlines()[lineno - 1].strip()
    except (OSError, IndexError, UnicodeDecodeError):
        return ""


def _import_problem(error: BaseException, file: Path) -> str:
    """What went wrong importing the student's file, in a few lines, with the line."""
    if isinstance(error, SyntaxError) and error.filename and _same_file(error.filename, file):
        text = (error.text or "").rstrip("\n")
        caret = ""
        if text and error.offset:
            stripped = text.lstrip()
            caret = "\n    " + " " * max(error.offset - 1 - (len(text) - len(stripped)), 0) + "^"
            text = stripped
        return f"{type(error).__name__} at {file.name}:{error.lineno}: {error.msg}" + (
            f"\n    {text}{caret}" if text else ""
        )
    frames = _student_frames(error.__traceback__, file)
    exception = f"{type(error).__name__}: {error}".rstrip(": ")
    if frames:
        return (
            f"importing it raised {exception}\n"
            f"at {_where(frames[-1], file)}: {(frames[-1].line or '').strip()}"
        )
    return f"importing it raised {exception}"


def _import_student(file: Path):
    name = file.stem if file.stem not in sys.modules else f"_student_{file.stem}"
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(file.parent))  # so that it can import its neighbours
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _worker(argv: list[str] | None = None) -> None:
    """The child's side: import the file, run each named test, one JSON line per result."""
    path, trace_path, timeout, stuck, *names = sys.argv[1:] if argv is None else argv
    file, timeout = Path(path), float(timeout)
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # what the student's code writes to the real stdout goes to stderr

    def send(message: dict) -> None:
        protocol.write(json.dumps(message) + "\n")
        protocol.flush()

    send({"started": True})
    with open(trace_path, "w", encoding="utf-8") as trace:
        faulthandler.dump_traceback_later(timeout, file=trace)
        try:
            with contextlib.redirect_stdout(sys.stderr):
                module = _import_student(file)
        except BaseException as error:  # noqa: BLE001 - SyntaxError, ImportError, SystemExit...
            send({"problem": _import_problem(error, file)})
            return
        finally:
            faulthandler.cancel_dump_traceback_later()
        send({"loaded": True})
        student = _Student(module, file, json.loads(stuck))
        for name in names:
            faulthandler.dump_traceback_later(timeout, file=trace)
            result = run_test(TESTS[name], student, file)
            faulthandler.cancel_dump_traceback_later()
            send(asdict(result))
            if result.status == FAILED and TESTS[name].suspects:
                faulthandler.dump_traceback_later(timeout, file=trace)
                send({"pitfalls": student.pitfalls(TESTS[name].suspects)})
                faulthandler.cancel_dump_traceback_later()

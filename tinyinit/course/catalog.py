"""The module card's test catalog (M07.3, section 4): its eleven tests, as functions.

The card's eleven tests are eleven functions here, `check_<name>(impl)`, listed in the
card's order in `CATALOG`. `impl` is anything that has the card's seven functions:
tinyinit.core.init, a pitfall mutant of tests/mutants/, or the stand-in for a student's file
that `tinyinit.course.checker.check_init` builds, whose functions are calls to the student's own
process. A check returns None, or raises AssertionError saying what it measured. tinyinit's
own tests (tests/core/test_init.py, tests/test_mutants.py) run exactly these functions, and
`check_init` runs them on a student's file, as the card's `ol check M07.3` does:

    python -m tinyinit check my_init.py          # exit status 0 only when all eleven pass

Expected values come from the card's formulas and the spec's draws (PCG32.uniform()
one at a time, and `normal`), never from the functions under test; torch's gain table
and fan rule ship with the package (data/init_torch.json). Where torch refuses more than
the card asks, a check gives advice (`advise`), never a failure. Nothing here needs more
than numpy.

>>> import tinyinit.core.init
>>> check_scaled_residual_keeps_the_stream_bounded(tinyinit.core.init)   # None: passed
"""

from __future__ import annotations

import contextvars
import functools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

import numpy as np

from ..core.arguments import KindError, is_number, shown
from ..core.distributions import PAIRS_PER_BLOCK, normal
from ..core.pcg32 import PCG32
from ..physics.propagation import mean_square, mean_squares_by_layer

__all__ = ["CATALOG", "CHECKS", "NAMES", "TESTS", "CatalogTest", "advise"]

# --- what every check uses ------------------------------------------------------------------

# Seeds other than 0, so that a generator made inside an initializer cannot pass by luck.
SEEDS = (5, 2**63 + 11)
# Linear and conv weights (out, in, *kernel), non-square and odd-sized.
SHAPES = [(4, 3), (1, 1), (5, 7), (7, 5), (8, 4, 3, 3), (3, 5, 7), (2, 3, 3, 5, 7)]


def torch_golden() -> dict:
    """torch's gain table and fan rule, as recorded by scripts/make_torch_golden.py.

    The file is read once, the first time (the checker asks before a student's code runs,
    so that nothing that code does to the file can change what the tests expect)."""
    return json.loads(_torch_golden_text())


@functools.cache
def _torch_golden_text() -> str:
    return resources.files("tinyinit").joinpath("data/init_torch.json").read_text()


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


# Advice a check gives beside its verdict: what torch does that the card does not ask for.
ADVICE: contextvars.ContextVar[list | None] = contextvars.ContextVar("advice", default=None)


def advise(text: str) -> None:
    """Say `text` beside the verdict of the check running now (nothing outside a checker run).

    >>> advice = []
    >>> token = ADVICE.set(advice)
    >>> advise("torch raises ValueError here")
    >>> ADVICE.reset(token); advice
    ['torch raises ValueError here']
    """
    if not isinstance(text, str):
        raise KindError(f"text must be a text, got {shown(text)}")
    advice = ADVICE.get()
    if advice is not None and text not in advice:
        advice.append(text)


class WrongReturn(AssertionError):
    """A function under check returned something of the wrong kind (tinyinit.course.checker raises
    it)."""

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
        f"{call_text(call.__name__, args, kwargs)} returned {shown} instead of raising ValueError"
    )


def call_text(name: str, args: tuple, kwargs: dict | None = None) -> str:
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
    "fan_in * kaiming_std**2": 2,  # Var(z) for E[x^2] = 1: "3 * 2/3 * 1 = 2"
    "fan_in * xavier_std**2": 6 / 7,  # "With Xavier ... Var(z) = 6/7"
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
            f"{call_text('calculate_gain', args)} = {gain!r}, torch's is {case['gain']!r}"
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
        args = (case["nonlinearity"], case["param"])
        if case["nonlinearity"] == "leaky_relu" and not is_number(case["param"]):
            torch_refuses_more(impl.calculate_gain, args, case)  # the card asks a number
        else:
            assert_rejects(impl.calculate_gain, *args)


def torch_refuses_more(call: Callable, args: tuple, case: dict) -> None:
    """torch raises ValueError for a call the card never makes (a leaky_relu slope that is not
    a number): whatever the function does is advice, not a failure."""
    try:
        result = call(*args)
    except ValueError:
        return
    except WrongReturn as wrong:
        did = f"returns {wrong.value!r}"
    except Exception as error:  # noqa: BLE001 - the card allows any answer here
        did = f"raises {getattr(error, 'type_name', type(error).__name__)}"
    else:
        did = f"returns {result!r}"
    advise(
        f"{call_text(call.__name__, args)}: torch raises ValueError ({case['message']}), "
        f"yours {did}. The card asks for no more (not a failure); a ValueError naming the "
        "argument would tell a caller what went wrong"
    )


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
# (out, in, kh, kw) from 1 to 6 wide, as tests/core/test_init.py draws more of them at random.
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


def final_mean_square(init, activation: str, seed: int = 1) -> float:
    """Mean square of h_DEPTH / that of x, for h_l = activation(W_l h_{l-1}), h_0 = x.

    x is a batch of BATCH standard normal inputs, one column each; every W_l comes from one
    generator, layer after layer, as a model is initialized (`forward_values`).
    """
    x = normal(PCG32(seed), BATCH * WIDTH).reshape(BATCH, WIDTH).T
    rng = PCG32(seed + 1)
    weights = (init((WIDTH, WIDTH), rng) for _ in range(DEPTH))
    m = mean_squares_by_layer(weights, activation, x)
    return m[-1] / m[0]


def check_relu_signal_survives_20_layers(impl) -> None:
    kaiming = final_mean_square(
        lambda s, rng: impl.kaiming_normal(s, "fan_in", "relu", rng), "relu"
    )
    assert 1 / 16 < kaiming < 16, f"Kaiming: mean square x {kaiming:.3g} after {DEPTH} layers"
    for name in ("xavier_normal", "xavier_uniform"):
        xavier = getattr(impl, name)
        ms = final_mean_square(lambda s, rng, xavier=xavier: xavier(s, 1.0, rng), "relu")
        assert ms < 1e-4, f"{name}: mean square x {ms:.3g}, expected a collapse (about 2**-20)"


def check_tanh_signal_survives_with_xavier(impl) -> None:
    gain = impl.calculate_gain("tanh")
    with_gain = final_mean_square(lambda s, rng: impl.xavier_normal(s, gain, rng), "tanh")
    without = final_mean_square(lambda s, rng: impl.xavier_normal(s, 1.0, rng), "tanh")
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
    functions' pitfalls (tinyinit.course.pitfalls) can make it fail.

    >>> import tinyinit.core.init
    >>> test = TESTS["test_fans_and_gains_match_torch"]
    >>> test.check(tinyinit.core.init)          # None: passed; a failure raises AssertionError
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

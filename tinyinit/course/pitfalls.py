"""Which pitfall did my initializer fall into? A checker that watches behaviour.

`check_initializer(fn, kind)` calls your function the way the course's tests
do, with PCG32 generators, on a handful of shapes (square, non-square, 3-D and
4-D convolution weights), and holds every answer against tinyinit's reference:
the values bit for bit, the dtype, shape and memory order, and where it leaves
the generator. When something differs it works out *why*, from the outputs and
the generator alone (it never reads your source):

* the same numbers in other places                         -> column_major_fill
* the reference times one factor per shape, and that factor
  is sqrt(fan_in / fan_out)                                -> swapped_fans
  is sqrt(prod(kernel))                                    -> kernel_dims_forgotten
  is 1 / sqrt(3) (uniform)                                 -> uniform_bound_without_sqrt3
  is the gain (or the std) itself                          -> gain_as_variance
* the same weights for different generators, or the generator
  left where it was                                        -> generator_created_inside
* the generator moved by the wrong number of words         -> wrong_draw_count

and for the scalar functions: fans read swapped or without the kernel, a gain
squared, GPT-2's 1/sqrt(L) for 1/sqrt(2L). The answer is a `Diagnosis` that
names the pitfall, its symptom, and the fix.

>>> from tinyinit import xavier_uniform
>>> check_initializer(xavier_uniform, "xavier_uniform")
Diagnosis(xavier_uniform: ok, matches tinyinit bit for bit on 6 calls)
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..core import init as reference
from ..core.arguments import function, generator, integer, integers, number, one_of, real_array
from ..core.init import calculate_gain, fans
from ..core.pcg32 import PCG32
from .student_process import FUNCTIONS  # the card's seven functions, in its order

__all__ = [
    "ARRAY_FUNCTIONS",
    "CARD_PITFALLS",
    "Diagnosis",
    "FUNCTIONS",
    "NONLINEARITY_NAMES",
    "PITFALLS",
    "PROBES",
    "Pitfall",
    "SQRT2",
    "check_initializer",
    "check_module",
    "stack_mean_squares",
]


class Pitfall(NamedTuple):
    """One known mistake of an initializer: what it is, what it does, and how to fix it.

    PITFALLS holds them by name; a `Diagnosis` names one, and its message quotes all three.

    >>> pitfall = PITFALLS["swapped_fans"]
    >>> pitfall.title
    'reading an (out, in) weight as (in, out)'
    >>> print(pitfall.fix)
    torch's layout is (out, in, *kernel): fan_in = shape[1] * r, fan_out = shape[0] * r
    """

    title: str
    symptom: str
    fix: str


PITFALLS: dict[str, Pitfall] = {
    "swapped_fans": Pitfall(
        "reading an (out, in) weight as (in, out)",
        "fan_in and fan_out swap: every non-square layer gets the wrong scale "
        "(square ones hide it)",
        "torch's layout is (out, in, *kernel): fan_in = shape[1] * r, fan_out = shape[0] * r",
    ),
    "kernel_dims_forgotten": Pitfall(
        "ignoring the kernel dimensions",
        "a 3x3 convolution is initialized 9 times too large in variance (Linear layers hide it)",
        "multiply both fans by r = prod(shape[2:]), the receptive field",
    ),
    "uniform_bound_without_sqrt3": Pitfall(
        "using sqrt(2 / (fan_in + fan_out)) as the uniform bound",
        "U(-a, a) has variance a**2 / 3, so the weights' variance is 3 times too small",
        "a = gain * sqrt(6 / (fan_in + fan_out)) = sqrt(3) * std",
    ),
    "gain_as_variance": Pitfall(
        "a gain (or std) used as a variance: ReLU gain 2 instead of sqrt(2)",
        "each ReLU layer doubles the mean square: after 20 layers 2**20 times the input's "
        "(2**19 times the first layer's)",
        "a gain multiplies the standard deviation: std = gain / sqrt(fan)",
    ),
    "residual_sqrt_L": Pitfall(
        "GPT-2's residual scale 1/sqrt(L) instead of 1/sqrt(2L)",
        "each block adds two outputs (attention and MLP): the stream gains 2 * base_std**2, "
        "twice the budget",
        "base_std / sqrt(2 * n_layers)",
    ),
    "column_major_fill": Pitfall(
        "filling in column-major order",
        "same distribution, different weights: code that follows the spec (the Rust port, "
        "the tests) disagrees for the same seed",
        "element k in C (row-major) order takes draw k: draws.reshape(shape)",
    ),
    "generator_created_inside": Pitfall(
        "making a new generator inside the initializer",
        "every layer gets the same weights, and the seed does nothing",
        "draw from the rng argument, and only from it",
    ),
    "wrong_draw_count": Pitfall(
        "too many or too few draws",
        "the generator ends in the wrong place: every layer initialized after this one "
        "differs from the reference",
        "exactly prod(shape) values in one call: prod(shape) uniforms, or normal(rng, prod(shape))",
    ),
    "wrong_dtype": Pitfall(
        "not float32",
        "parameters are float32; another dtype doubles the memory or loses precision",
        "compute in float64, cast once at the end: w.astype(np.float32)",
    ),
    "wrong_shape": Pitfall(
        "wrong shape",
        "the layer cannot use the weight, or silently broadcasts it",
        "return an array of exactly `shape`",
    ),
    "not_contiguous": Pitfall(
        "not C-contiguous",
        "the right values in a Fortran-ordered or strided array: a byte-level save or a "
        "port reads them in another order",
        "np.ascontiguousarray(w)",
    ),
    "last_bit": Pitfall(
        "rounding differs",
        "the right scale and order, but some weights differ in their last bit",
        "compute -a + 2a * u (or std * z) in float64 and cast to float32 once, at the end",
    ),
    "raises": Pitfall(
        "raises on a valid call",
        "the initializer fails where the reference returns weights",
        "accept the reference's arguments: see the signature in tinyinit",
    ),
    "wrong_values": Pitfall(
        "values differ in a way none of the known pitfalls explains",
        "the weights are not the reference's, nor a known mistake of it",
        "compare with the formula and the draw order of docs/spec.md, element by element",
    ),
}

# The module card's section 5 names seven of them, by the mutant that makes each (s01 ...).
CARD_PITFALLS: dict[str, str] = {
    "s01": "swapped_fans",
    "s02": "kernel_dims_forgotten",
    "s03": "uniform_bound_without_sqrt3",
    "s05": "gain_as_variance",
    "s08": "residual_sqrt_L",
    "s09": "column_major_fill",
    "s13": "generator_created_inside",
}


@dataclass(frozen=True)
class Diagnosis:
    """What check_initializer found: ok, or the pitfall, with a message saying why.

    pitfall is a key of PITFALLS (None when ok); message holds the pitfall's
    title, what was measured, its symptom and its fix, one per line.

    >>> import math
    >>> from tinyinit import fans, uniforms
    >>> def my_xavier_uniform(shape, gain, rng):      # the std used as the bound
    ...     fan_in, fan_out = fans(shape)
    ...     a = gain * math.sqrt(2.0 / (fan_in + fan_out))
    ...     return (-a + 2 * a * uniforms(rng, math.prod(shape))).reshape(shape).astype("float32")
    >>> d = check_initializer(my_xavier_uniform, "xavier_uniform")
    >>> d.ok, d.pitfall
    (False, 'uniform_bound_without_sqrt3')
    >>> print(d.message.splitlines()[-1].strip())
    fix:      a = gain * sqrt(6 / (fan_in + fan_out)) = sqrt(3) * std
    """

    kind: str
    ok: bool
    pitfall: str | None
    message: str

    def __repr__(self) -> str:
        if self.ok:
            return f"Diagnosis({self.kind}: ok, {self.message})"
        return f"Diagnosis({self.kind}: {self.pitfall})\n{self.message}"

    def __str__(self) -> str:
        return self.__repr__()

    def _repr_html_(self) -> str:
        color = "#1a7f37" if self.ok else "#b3261e"
        head = "matches the reference" if self.ok else PITFALLS[self.pitfall].title
        body = html.escape(self.message).replace("\n", "<br>")
        return (
            f'<div style="border-left:4px solid {color};padding:4px 10px;">'
            f"<b>{html.escape(self.kind)}</b>: <span style='color:{color}'>"
            f"{'✔' if self.ok else '✘'} {html.escape(head)}</span><br>{body}</div>"
        )


ARRAY_FUNCTIONS = ("xavier_uniform", "xavier_normal", "kaiming_normal", "normal_init")

SQRT2 = math.sqrt(2.0)

# The calls each kind is probed with: (5, 7) is non-square and odd (the last
# Box-Muller sine is dropped), (8, 4, 3, 3) and (6, 2, 5) are convolutions.
PROBES: dict[str, list[tuple]] = {
    "xavier_uniform": [
        ((4, 3), 1.0),
        ((5, 7), 1.0),
        ((5, 7), 5 / 3),
        ((8, 4, 3, 3), 1.0),
        ((6, 2, 5), SQRT2),
        ((3, 6), 1.0),
    ],
    "kaiming_normal": [
        ((4, 3), "fan_in", "relu"),
        ((5, 7), "fan_in", "relu"),
        ((5, 7), "fan_out", "relu"),
        ((5, 7), "fan_in", "linear"),
        ((5, 7), "fan_in", "tanh"),
        ((8, 4, 3, 3), "fan_in", "relu"),
        ((6, 2, 5), "fan_out", "relu"),
    ],
    "normal_init": [((7,), 0.02), ((4, 3), 0.02), ((5, 7), 0.5), ((8, 4, 3, 3), 0.02)],
    "fans": [((4, 3),), ((5, 7),), ((7, 5),), ((8, 4, 3, 3),), ((6, 2, 5),)],
    "calculate_gain": [
        ("linear", None),
        ("relu", None),
        ("tanh", None),
        ("sigmoid", None),
        ("selu", None),
        ("leaky_relu", None),
        ("leaky_relu", 0.2),
    ],
    "scaled_residual_std": [(0.02, 1), (0.02, 12), (0.5, 48), (1.0, 3)],
}
PROBES["xavier_normal"] = PROBES["xavier_uniform"]


def _shape_of(probe: tuple) -> tuple[int, ...]:
    return probe[0]


def _receptive(shape: tuple[int, ...]) -> int:
    return math.prod(shape[2:])


def _call(fn: Callable, probe: tuple, rng: PCG32 | None = None):
    args = probe if rng is None else (*probe, rng)
    if len(probe) == 2 and probe[0] in NONLINEARITY_NAMES and probe[1] is None:
        args = probe[:1]  # calculate_gain(name), as most callers write it
    return fn(*args)


NONLINEARITY_NAMES = frozenset(reference.NONLINEARITIES)


def _describe(kind: str, probe: tuple) -> str:
    args = ", ".join(repr(a) for a in probe if a is not None)
    if kind in ARRAY_FUNCTIONS:
        args += ", rng"
    return f"{kind}({args})"


def _fail(kind: str, pitfall: str, detail: str) -> Diagnosis:
    p = PITFALLS[pitfall]
    message = f"{p.title}.\n  measured: {detail}\n  symptom:  {p.symptom}\n  fix:      {p.fix}"
    return Diagnosis(kind, False, pitfall, message)


def _ok(kind: str, what: str) -> Diagnosis:
    return Diagnosis(kind, True, None, what)


def _raised(kind: str, probe: tuple, error: Exception) -> Diagnosis:
    detail = f"{_describe(kind, probe)} raised {type(error).__name__}: {error}"
    return _fail(kind, "raises", detail)


# --- generator bookkeeping -------------------------------------------------------------


def _words_between(start: PCG32, end: PCG32, limit: int) -> int | None:
    """How many next_u32() steps take `start` to `end` (None beyond `limit`)."""
    probe = start.copy()
    for k in range(limit + 1):
        if probe.state == end.state:
            return k
        probe.next_u32()
    return None


def _seed(i: int) -> int:
    return 1000 + 17 * i


# --- array initializers ----------------------------------------------------------------


def _ratio_hypotheses(kind: str, probe: tuple) -> dict[str, set[float]]:
    """For each pitfall, the factors (student / reference) it would give on this call."""
    out: dict[str, set[float]] = {}
    if kind == "normal_init":
        _, std = probe
        out["gain_as_variance"] = {std}
        return out
    shape = _shape_of(probe)
    fan_in, fan_out = fans(shape)
    r = _receptive(shape)
    if kind == "kaiming_normal":
        _, fan_mode, nonlinearity = probe
        chosen, other = (fan_in, fan_out) if fan_mode == "fan_in" else (fan_out, fan_in)
        gain = calculate_gain(nonlinearity)
        out["swapped_fans"] = {math.sqrt(chosen / other)}
        out["kernel_dims_forgotten"] = {math.sqrt(r)}
        # a squared gain may be everywhere, or only in relu's table entry
        out["gain_as_variance"] = {gain} if nonlinearity == "relu" else {1.0, gain}
    elif kind in ("xavier_uniform", "xavier_normal"):
        _, gain = probe
        out["kernel_dims_forgotten"] = {math.sqrt(r)}
        out["gain_as_variance"] = {gain}
        if kind == "xavier_uniform":
            out["uniform_bound_without_sqrt3"] = {1 / math.sqrt(3)}
    return out


def _close(a: float, b: float, rel: float = 1e-5) -> bool:
    return abs(a - b) <= rel * abs(b)


def _proportional(student: np.ndarray, ref: np.ndarray) -> float | None:
    """The factor c with student = c * ref up to rounding errors, or None.

    Rounding is measured against the weights' scale, not elementwise: a weight
    computed in float32 as a * (2u - 1) near u = 1/2 keeps few correct digits.
    """
    s, r = student.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
    denom = float(r @ r)
    if denom == 0:
        return None
    c = float(s @ r) / denom
    if np.max(np.abs(s - c * r)) <= 1e-5 * np.max(np.abs(c * r)):
        return c
    return None


def _column_major(student: np.ndarray, ref: np.ndarray) -> bool:
    return np.array_equal(student, ref.ravel().reshape(ref.shape, order="F"))


def _check_array_kind(fn: Callable, kind: str) -> Diagnosis:
    ref_fn = getattr(reference, kind)
    probes = PROBES[kind]
    results = []  # (probe, student, reference, words used by student, by reference)
    for i, probe in enumerate(probes):
        rng, ref_rng = PCG32(_seed(i)), PCG32(_seed(i))
        start = rng.copy()
        try:
            w = _call(fn, probe, rng)
        except Exception as error:  # noqa: BLE001 - any failure is the finding
            return _raised(kind, probe, error)
        expected = _call(ref_fn, probe, ref_rng)
        shape = _shape_of(probe)
        if not isinstance(w, np.ndarray) or w.shape != shape:
            got = w.shape if isinstance(w, np.ndarray) else type(w).__name__
            return _fail(kind, "wrong_shape", f"{_describe(kind, probe)} gave {got}, not {shape}")
        if w.dtype != np.float32:
            return _fail(kind, "wrong_dtype", f"{_describe(kind, probe)} gave dtype {w.dtype}")
        used = _words_between(start, rng, limit=4 * 2 * w.size + 64)
        ref_used = _words_between(start, ref_rng, limit=4 * 2 * w.size + 64)
        results.append((probe, w, expected, used, ref_used))

    # The generator: is it the one passed in, and used as the spec says?
    probe = probes[1]
    twice = [_call(fn, probe, PCG32(7)), _call(fn, probe, PCG32(7))]
    if not np.array_equal(twice[0], twice[1]):
        return _fail(
            kind,
            "generator_created_inside",
            "two calls with PCG32(7) gave different weights: it draws from another "
            "source (np.random?), not from rng",
        )
    if np.array_equal(_call(fn, probe, PCG32(1)), _call(fn, probe, PCG32(2))):
        return _fail(
            kind,
            "generator_created_inside",
            "PCG32(1) and PCG32(2) gave identical weights: the rng argument is ignored",
        )
    for probe, _, _, used, ref_used in results:
        if used == 0:
            return _fail(
                kind,
                "generator_created_inside",
                f"{_describe(kind, probe)} left rng where it was (0 words drawn; the "
                f"reference draws {ref_used}): the next layer gets the same weights",
            )
    for probe, w, _, used, ref_used in results:
        if used != ref_used:
            got = "more than " + str(4 * 2 * w.size + 64) if used is None else str(used)
            return _fail(
                kind,
                "wrong_draw_count",
                f"{_describe(kind, probe)} on shape {w.shape} ({w.size} weights) moved rng "
                f"by {got} words; the reference moves it by {ref_used} "
                f"(2 words per uniform)",
            )

    # The values.
    differing = [(p, w, e) for p, w, e, _, _ in results if not np.array_equal(w, e)]
    if differing:
        return _diagnose_values(kind, differing, results)
    for probe, w, _, _, _ in results:
        if not w.flags.c_contiguous:
            return _fail(kind, "not_contiguous", f"{_describe(kind, probe)} is not C-contiguous")
    return _ok(kind, f"matches tinyinit bit for bit on {len(results)} calls")


def _diagnose_values(kind: str, differing, results) -> Diagnosis:
    if all(_column_major(w, e) for _, w, e in differing):
        p, w, e = differing[0]
        return _fail(
            kind,
            "column_major_fill",
            f"{_describe(kind, p)}: the reference's numbers, in column-major places "
            f"(element [0, 1] holds draw {w.shape[0]}, not draw 1)",
        )
    if all(np.array_equal(np.sort(w, axis=None), np.sort(e, axis=None)) for _, w, e in differing):
        p, _, _ = differing[0]
        return _fail(
            kind,
            "column_major_fill",
            f"{_describe(kind, p)}: the reference's numbers in other places (not C order)",
        )
    factors = [(p, _proportional(w, e)) for p, w, e, _, _ in results]
    if all(c is not None for _, c in factors):
        if all(_close(c, 1.0, 1e-5) for _, c in factors):
            n_off = sum(int(np.sum(w != e)) for _, w, e in differing)
            worst = max(float(np.max(np.abs(w.astype(np.float64) - e))) for _, w, e in differing)
            return _fail(
                kind,
                "last_bit",
                f"{n_off} weight(s) differ from the reference by a rounding error "
                f"(at most {worst:.1e})",
            )
        for pitfall in PITFALLS:
            hypotheses = [_ratio_hypotheses(kind, p).get(pitfall) for p, _ in factors]
            if any(h is None for h in hypotheses):
                continue
            fits = all(any(_close(c, h) for h in hs) for (_, c), hs in zip(factors, hypotheses))
            if fits:
                return _fail(kind, pitfall, _factor_report(kind, factors))
        return _fail(kind, "wrong_values", _factor_report(kind, factors))
    p, w, e = differing[0]
    ratio = float(np.std(w.astype(np.float64)) / np.std(e.astype(np.float64)))
    return _fail(
        kind,
        "wrong_values",
        f"{_describe(kind, p)} is not a rescaling or reordering of the reference "
        f"(std ratio {ratio:.3g}); check the distribution and the draw -> element mapping",
    )


def _factor_report(kind: str, factors) -> str:
    parts = [f"x{c:.4g} on {_describe(kind, p)}" for p, c in factors if not _close(c, 1.0)]
    more = f" (and {len(parts) - 3} more)" if len(parts) > 3 else ""
    return "your weights are the reference's " + "; ".join(parts[:3]) + more


# --- scalar functions -------------------------------------------------------------------


def _check_fans(fn: Callable) -> Diagnosis:
    wrong = []
    for probe in PROBES["fans"]:
        try:
            got = tuple(fn(*probe))
        except Exception as error:  # noqa: BLE001
            return _raised("fans", probe, error)
        expected = fans(*probe)
        if got != expected:
            wrong.append((probe[0], got, expected))
    if not wrong:
        return _ok("fans", f"matches tinyinit on {len(PROBES['fans'])} shapes")
    detail = "; ".join(f"fans({s}) = {g}, expected {e}" for s, g, e in wrong)
    if all(g == e[::-1] for _, g, e in wrong):
        return _fail("fans", "swapped_fans", detail)
    if all(g == (s[1], s[0]) and len(s) > 2 for s, g, _ in wrong):
        return _fail("fans", "kernel_dims_forgotten", detail)
    return _fail("fans", "wrong_values", detail)


def _check_calculate_gain(fn: Callable) -> Diagnosis:
    wrong = []
    for probe in PROBES["calculate_gain"]:
        try:
            got = float(_call(fn, probe))
        except Exception as error:  # noqa: BLE001
            return _raised("calculate_gain", probe, error)
        expected = calculate_gain(*probe)
        if not _close(got, expected, 1e-12):
            wrong.append((probe, got, expected))
    if not wrong:
        return _ok("calculate_gain", "matches torch's table")
    detail = "; ".join(
        f"{_describe('calculate_gain', p)} = {g:.6g}, expected {e:.6g}" for p, g, e in wrong
    )
    if all(_close(g, e**2, 1e-12) for _, g, e in wrong):
        return _fail("calculate_gain", "gain_as_variance", detail)
    return _fail("calculate_gain", "wrong_values", detail)


def _check_scaled_residual_std(fn: Callable) -> Diagnosis:
    wrong = []
    for probe in PROBES["scaled_residual_std"]:
        try:
            got = float(fn(*probe))
        except Exception as error:  # noqa: BLE001
            return _raised("scaled_residual_std", probe, error)
        expected = reference.scaled_residual_std(*probe)
        if not _close(got, expected, 1e-12):
            wrong.append((probe, got, expected))
    if not wrong:
        return _ok("scaled_residual_std", "matches base_std / sqrt(2L)")
    detail = "; ".join(f"scaled_residual_std{p} = {g:.6g}, expected {e:.6g}" for p, g, e in wrong)
    if all(_close(g, base / math.sqrt(n), 1e-12) for (base, n), g, _ in wrong):
        return _fail("scaled_residual_std", "residual_sqrt_L", detail)
    return _fail("scaled_residual_std", "wrong_values", detail)


_SCALAR_CHECKS = {
    "fans": _check_fans,
    "calculate_gain": _check_calculate_gain,
    "scaled_residual_std": _check_scaled_residual_std,
}


def check_initializer(fn: Callable, kind: str) -> Diagnosis:
    """Probe `fn` as the reference `kind` is called, and name its pitfall, if any.

    kind is one of FUNCTIONS; fn takes the reference's arguments in the same order:
    xavier_uniform(shape, gain, rng), xavier_normal(shape, gain, rng),
    kaiming_normal(shape, fan_mode, nonlinearity, rng), normal_init(shape, std, rng),
    fans(shape), calculate_gain(nonlinearity, param=None),
    scaled_residual_std(base_std, n_layers).

    >>> def my_residual_std(base_std, n_layers):
    ...     return base_std / n_layers ** 0.5
    >>> check_initializer(my_residual_std, "scaled_residual_std").pitfall
    'residual_sqrt_L'
    """
    one_of("kind", kind, FUNCTIONS)
    function("fn", fn)
    if kind in _SCALAR_CHECKS:
        return _SCALAR_CHECKS[kind](fn)
    return _check_array_kind(fn, kind)


def check_module(api: Any) -> dict[str, Diagnosis]:
    """check_initializer on every function of FUNCTIONS that `api` (a module or a dict) has.

    The diagnoses come by function name, in the card's order; a name `api` lacks is left out.

    >>> import math
    >>> def fans(shape):                                # an (out, in) weight read as (in, out)
    ...     r = math.prod(shape[2:])
    ...     return shape[0] * r, shape[1] * r
    >>> def scaled_residual_std(base_std, n_layers):
    ...     return base_std / math.sqrt(2 * n_layers)
    >>> found = check_module({"scaled_residual_std": scaled_residual_std, "fans": fans})
    >>> {kind: diagnosis.pitfall for kind, diagnosis in found.items()}
    {'fans': 'swapped_fans', 'scaled_residual_std': None}
    """
    if isinstance(api, Mapping):
        found = {k: api[k] for k in FUNCTIONS if k in api}
    else:
        found = {k: getattr(api, k) for k in FUNCTIONS if hasattr(api, k)}
    return {kind: check_initializer(fn, kind) for kind, fn in found.items()}


# --- symptoms: what a pitfall does to a network -------------------------------------------


def stack_mean_squares(
    init: Callable,
    widths: list[int],
    rng,
    *,
    activation: str = "relu",
    kernel_size: tuple[int, ...] = (),
    bias_std: float = 0.0,
    batch: int = 128,
) -> np.ndarray:
    """E[h**2] of the input and after each layer of a stack whose weights come from `init`.

    Layer l maps widths[l] -> widths[l + 1] with W = init(shape, rng), shape
    (out, in) or (out, in, *kernel_size) (valid convolutions, stride 1), then a
    bias drawn as bias_std * normal (0 draws nothing), then the activation
    (a name of tinyinit.core.activations.ACTIVATIONS). The input, standard normal, is drawn
    from rng first; then each layer's weight and bias, in order. Shape
    (len(widths),).

    >>> from tinyinit import PCG32, kaiming_normal
    >>> kaiming = lambda shape, rng: kaiming_normal(shape, "fan_in", "relu", rng)
    >>> stack_mean_squares(kaiming, [256, 256, 256], PCG32(0)).round(1).tolist()
    [1.0, 1.0, 0.9]
    """
    from ..core.activations import as_activation
    from ..core.distributions import normal
    from ..core.layouts import apply_layer
    from ..physics.propagation import mean_squares_by_layer

    init, rng = function("init", init), generator("rng", rng)
    widths = integers("widths", widths, minimum=1)
    if len(widths) < 2:
        raise ValueError(f"widths must list at least an input and an output width, got {widths}")
    act = as_activation(activation, name="activation")
    kernel = integers("kernel_size", kernel_size, minimum=1)
    bias_std, batch = number("bias_std", bias_std, minimum=0), integer("batch", batch, minimum=1)
    n_layers = len(widths) - 1
    spatial = tuple(4 + n_layers * (k - 1) for k in kernel)
    x_shape = (batch, widths[0], *spatial)
    x = normal(rng, math.prod(x_shape)).reshape(x_shape)

    def layers():  # drawn one by one, after the input: each weight, then its bias
        for fan_in, out in zip(widths[:-1], widths[1:]):
            shape = (out, fan_in, *kernel)
            w = real_array("init", init(shape, rng), what=f"a function giving {shape} arrays")
            bias = (bias_std * normal(rng, out)).reshape(out, 1) if bias_std else 0.0
            if kernel:  # a convolution over (batch, channels, *spatial)
                bias = np.reshape(bias, (-1, *[1] * len(kernel)))
                yield lambda h, w=w, bias=bias: apply_layer("conv", w, h) + bias
            elif bias_std:
                yield lambda h, w=w, bias=bias: w @ h + bias
            else:
                yield w

    return mean_squares_by_layer(layers(), act, x if kernel else x.T)

"""The rest of torch.nn.init in tinyinit: each initializer's formula, draw order and edges.

Weights are compared by their bits with values built here from the scalar
reference (tests/reference_pcg32.py), one value at a time in the spec's order;
torch's own numbers come from tinyinit/data/init_torch.json
(scripts/make_torch_golden.py).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import reference_pcg32 as ref
from scripts_loader import ROOT

import tinyinit as ti
from tinyinit import PCG32
from tinyinit.core.init import torch_default_bias

GOLDEN = json.loads((ROOT / "tinyinit" / "data" / "init_torch.json").read_text())
SEEDS = (5, 2**63 + 11)
SHAPES = [(4, 3), (1, 1), (5, 7), (7, 5), (8, 4, 3, 3), (3, 5, 7), (2, 3, 3, 5, 7)]


def bits(x: np.ndarray) -> list[int]:
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).ravel().tolist()


def from_uniforms(low: float, high: float, seed: int, n: int) -> np.ndarray:
    scalar = ref.PCG32(seed)
    return np.array([low + (high - low) * scalar.uniform() for _ in range(n)]).astype(np.float32)


# --- the scales, each formula once ------------------------------------------------------


def test_scales_are_the_formulas_of_the_spec():
    assert ti.xavier_std(3, 4) == math.sqrt(2 / 7)
    assert ti.xavier_std(3, 4, 2.0) == 2.0 * math.sqrt(2 / 7)
    assert ti.xavier_bound(3, 4) == 0.9258200997725514
    assert ti.xavier_bound(5, 7, 0.5) == 0.5 * math.sqrt(6 / 12)
    assert ti.kaiming_std(3, math.sqrt(2)) == math.sqrt(2) / math.sqrt(3)
    assert ti.uniform_bound(0.5) == math.sqrt(3) * 0.5


def test_initializers_use_the_scales():
    """A first weight over its unit draw is the scale the spec names, for each initializer."""
    u = ti.uniforms(PCG32(0), 1)[0]
    z = ti.normal(PCG32(0), 1)[0]
    shape = (5, 7)  # fan_in 7, fan_out 5
    uniform_cases = [
        (ti.xavier_uniform(shape, 0.7, PCG32(0)), ti.xavier_bound(7, 5, 0.7)),
        (
            ti.kaiming_uniform(shape, "fan_out", "tanh", PCG32(0)),
            ti.uniform_bound(ti.kaiming_std(5, 5 / 3)),
        ),
    ]
    for w, a in uniform_cases:
        assert w[0, 0] == np.float32(-a + (a + a) * u)
    normal_cases = [
        (ti.xavier_normal(shape, 0.7, PCG32(0)), ti.xavier_std(7, 5, 0.7)),
        (ti.kaiming_normal(shape, "fan_out", "tanh", PCG32(0)), ti.kaiming_std(5, 5 / 3)),
    ]
    for w, std in normal_cases:
        assert w[0, 0] == np.float32(z * std)


# --- kaiming_uniform and torch's default -------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_kaiming_uniform_is_one_uniform_per_element_at_the_kaiming_bound(shape):
    for seed in SEEDS:
        for mode, nl, param in [("fan_in", "relu", None), ("fan_out", "leaky_relu", 0.3)]:
            rng = PCG32(seed)
            w = ti.kaiming_uniform(shape, mode, nl, rng, param=param)
            fan_in, fan_out = ref.fans(shape)
            fan = fan_in if mode == "fan_in" else fan_out
            a = math.sqrt(3) * (ref.calculate_gain(nl, param) / math.sqrt(fan))
            expected = from_uniforms(-a, a, seed, math.prod(shape)).reshape(shape)
            assert bits(w) == bits(expected)
            assert rng == PCG32(seed).advance(2 * math.prod(shape))


@pytest.mark.parametrize("row", GOLDEN["uniform_scales"], ids=lambda r: f"{r['kind']}{r['shape']}")
def test_kaiming_uniform_bounds_are_torchs(row):
    shape = tuple(row["shape"])
    if row["kind"] == "torch_default":
        w = ti.torch_default_init(shape, PCG32(3))
    else:
        param = row["param"] if row["nonlinearity"] == "leaky_relu" else None
        w = ti.kaiming_uniform(shape, row["fan_mode"], row["nonlinearity"], PCG32(3), param=param)
    unit = ti.uniform_init(shape, -1.0, 1.0, PCG32(3)).astype(np.float64)
    bound = float(np.abs(w).max() / np.abs(unit).max())
    assert bound == pytest.approx(row["bound"], rel=1e-6)  # torch's, read back from float32


@pytest.mark.parametrize("row", GOLDEN["default_layers"], ids=lambda r: r["layer"])
def test_an_untouched_layers_weight_then_bias_are_torchs(row):
    shape, fan_in = tuple(row["weight_shape"]), row["fan_in"]
    assert ti.fans(shape)[0] == fan_in and row["bias_after_weight"]
    rng = PCG32(3)
    w = ti.torch_default_init(shape, rng)
    b = torch_default_bias((shape[0],), fan_in, rng)  # drawn next, from the same generator
    unit = ti.uniform_init((math.prod(shape) + shape[0],), -1.0, 1.0, PCG32(3)).astype(np.float64)
    w_unit, b_unit = unit[: math.prod(shape)], unit[math.prod(shape) :]
    assert float(np.abs(w).max() / np.abs(w_unit).max()) == pytest.approx(
        row["weight_bound"], rel=1e-6
    )
    assert float(np.abs(b).max() / np.abs(b_unit).max()) == pytest.approx(
        row["bias_bound"], rel=1e-6
    )
    np.testing.assert_allclose(b, row["bias_bound"] * b_unit, rtol=1e-6)  # in torch's order


def test_the_default_bias_bound_and_its_bad_arguments():
    assert not torch_default_bias((3,), 0, PCG32(0)).any()  # torch: bound 0 when fan_in is 0
    with pytest.raises(ValueError, match="fan_in must be a non-negative integer, got -1"):
        torch_default_bias((3,), -1, PCG32(0))


def test_torch_default_is_a_third_of_the_variance_that_keeps_the_signal():
    w = ti.torch_default_init((256, 512), PCG32(1))
    assert np.abs(w).max() <= 1 / math.sqrt(512)
    assert float(np.var(w, dtype=np.float64)) * 512 == pytest.approx(1 / 3, rel=0.02)


# --- uniform, constant, zeros, ones ---------------------------------------------------------


@pytest.mark.parametrize("shape", [(), 3, (4, 3), (2, 3, 5), (0,), (2**17 + 3,)], ids=str)
def test_uniform_init_is_low_plus_width_times_u(shape):
    rng = PCG32(SEEDS[1])
    w = ti.uniform_init(shape, -0.3, 1.7, rng)
    dims = (shape,) if isinstance(shape, int) else shape
    n = math.prod(dims)
    assert w.shape == dims and w.dtype == np.float32 and w.flags.c_contiguous
    assert bits(w) == bits(from_uniforms(-0.3, 1.7, SEEDS[1], n))
    assert rng == PCG32(SEEDS[1]).advance(2 * n)


def test_uniform_init_with_low_equal_to_high_is_a_constant_that_still_draws():
    rng = PCG32(0)
    assert np.all(ti.uniform_init((3, 2), 0.5, 0.5, rng) == 0.5)
    assert rng == PCG32(0).advance(12)


def test_constant_zeros_ones_are_new_float32_arrays():
    for w, value in [
        (ti.constant_init((2, 3), -1.25), -1.25),
        (ti.zeros_init((2, 3)), 0.0),
        (ti.ones_init(4), 1.0),
        (ti.constant_init((), 7), 7.0),
    ]:
        assert w.dtype == np.float32 and w.flags.c_contiguous and w.flags.writeable
        assert np.all(w == value)
    assert ti.zeros_init((2, 3)) is not ti.zeros_init((2, 3))
    assert bits(ti.zeros_init(1)) == [0]  # +0.0, not -0.0


@pytest.mark.parametrize("row", GOLDEN["exact_fills"]["constant"], ids=lambda r: str(r["value"]))
def test_constant_init_is_torchs(row):
    w = ti.constant_init(tuple(row["shape"]), row["value"])
    assert w.tolist() == row["values"]


# --- eye and dirac: torch's, exactly ---------------------------------------------------------


@pytest.mark.parametrize("row", GOLDEN["exact_fills"]["eye"], ids=lambda r: str(r["shape"]))
def test_eye_init_is_torchs(row):
    assert ti.eye_init(tuple(row["shape"])).tolist() == row["values"]


@pytest.mark.parametrize(
    "row", GOLDEN["exact_fills"]["dirac"], ids=lambda r: f"{r['shape']}/{r['groups']}"
)
def test_dirac_init_is_torchs(row):
    assert ti.dirac_init(tuple(row["shape"]), row["groups"]).tolist() == row["values"]


# --- trunc_normal: the redraw rule, on the reference's normals -----------------------------


def trunc_normal_reference(n, std, seed, mean, a, b) -> np.ndarray:
    """docs/spec.md's rejection rule, one value at a time on the scalar reference."""
    rng = ref.PCG32(seed)
    x = [mean + std * z for z in ref.normal(rng, n)]
    redraw = [k for k in range(n) if not a <= x[k] <= b]
    while redraw:
        for k, z in zip(redraw, ref.normal(rng, len(redraw))):
            x[k] = mean + std * z
        redraw = [k for k in redraw if not a <= x[k] <= b]
    return np.array(x).astype(np.float32)


@pytest.mark.parametrize(
    "n, std, mean, a, b",
    [(7, 1.0, 0.0, -2.0, 2.0), (1000, 0.02, 0.0, -0.04, 0.04), (501, 1.0, 0.0, 2.0, 3.0),
     (64, 0.5, 1.0, 0.9, 5.0), (3, 2.0, -1.0, -1.5, -0.5)],
)  # fmt: skip
def test_trunc_normal_is_the_specs_redraw_rule(n, std, mean, a, b):
    for seed in SEEDS:
        w = ti.trunc_normal_init((n,), std, PCG32(seed), mean=mean, a=a, b=b)
        assert bits(w) == bits(trunc_normal_reference(n, std, seed, mean, a, b))
        assert w.min() >= np.float32(a) and w.max() <= np.float32(b)


def test_trunc_normal_keeps_what_is_inside_and_moves_the_generator_past_the_redraws():
    rng = PCG32(0)
    w = ti.trunc_normal_init((4,), 1.0, rng, a=-0.5, b=2.0)
    z = ti.normal(PCG32(0), 6)  # two of the first four are out: one more pair
    assert w.tolist() == np.float32([z[4], z[1], z[5], z[3]]).tolist()
    assert rng == PCG32(0).advance(12)


def test_trunc_normal_of_a_wide_interval_is_normal_init():
    w = ti.trunc_normal_init((50, 20), 0.02, PCG32(2), a=-1.0, b=1.0)
    assert bits(w) == bits(ti.normal_init((50, 20), 0.02, PCG32(2)))


# --- orthogonal: torch's algorithm ------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (20, 2, 3, 4), (2, 3, 4, 5), (1, 7)])
def test_orthogonal_init_is_torchs_algorithm_on_the_specs_normals(shape):
    rng = PCG32(SEEDS[0])
    gain = 1.5
    w = ti.orthogonal_init(shape, gain, rng)
    rows = shape[0]
    cols = math.prod(shape) // rows
    n = rows * cols
    assert w.shape == shape and w.dtype == np.float32 and w.flags.c_contiguous
    assert rng == PCG32(SEEDS[0]).advance(4 * ((n + 1) // 2)), "not normal(rng, N)"
    m = np.array(ref.normal(ref.PCG32(SEEDS[0]), n)).reshape(rows, cols)
    flat = w.reshape(rows, cols).astype(np.float64) / gain
    wide = rows < cols
    q, m = (flat.T, m.T) if wide else (flat, m)
    # Q has orthonormal columns, and R = Q^T M is upper triangular with a positive diagonal
    assert np.allclose(q.T @ q, np.eye(q.shape[1]), atol=1e-6)
    r = q.T @ m
    assert np.allclose(np.tril(r, -1), 0, atol=1e-5)
    assert np.all(np.diag(r) > 0)


@pytest.mark.parametrize("row", GOLDEN["orthogonality"], ids=lambda r: str(r["shape"]))
def test_orthogonal_init_is_as_orthogonal_as_torchs(row):
    shape, gain = tuple(row["shape"]), row["gain"]
    flat = ti.orthogonal_init(shape, gain, PCG32(0)).reshape(shape[0], -1).astype(np.float64)
    gram = flat @ flat.T if flat.shape[0] <= flat.shape[1] else flat.T @ flat
    error = float(np.abs(gram - gain**2 * np.eye(len(gram))).max())
    assert error <= max(4 * row["max_error"], 1e-6)


# --- sparse ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape, sparsity", [((3, 2), 0.5), ((30, 33), 0.15), ((5, 4), 0.0),
                                             ((5, 4), 1.0), ((7, 1), 0.3)])  # fmt: skip
def test_sparse_init_zeroes_the_rows_of_the_smallest_keys(shape, sparsity):
    rows, cols = shape
    seed = SEEDS[1]
    rng = PCG32(seed)
    w = ti.sparse_init(shape, sparsity, 0.01, rng)
    scalar = ref.PCG32(seed)
    normals = np.array([0.01 * z for z in ref.normal(scalar, rows * cols)]).astype(np.float32)
    expected = normals.reshape(shape)
    zeros = math.ceil(sparsity * rows)
    for j in range(cols):
        keys = [scalar.uniform() for _ in range(rows)]
        for i in sorted(range(rows), key=lambda i: (keys[i], i))[:zeros]:
            expected[i, j] = 0.0
    assert bits(w) == bits(expected)
    assert all(np.count_nonzero(w[:, j] == 0) == zeros for j in range(cols))
    pairs = (rows * cols + 1) // 2
    assert rng == PCG32(seed).advance(4 * pairs + 2 * rows * cols)


class RepeatingUniforms:
    """A generator whose uniforms repeat a short cycle, so that sparse_init's keys tie."""

    def __init__(self, cycle):
        self.cycle, self.k = cycle, 0

    def uniform(self) -> float:
        self.k += 1
        return self.cycle[(self.k - 1) % len(self.cycle)]


def test_sparse_init_breaks_ties_between_keys_by_row():
    rows, cols, sparsity = 40, 3, 0.5
    cycle = [0.5, 0.25, 0.75]
    w = ti.sparse_init((rows, cols), sparsity, 1.0, RepeatingUniforms(cycle))
    first_key = 2 * ((rows * cols + 1) // 2)  # after the Box-Muller pairs of the weights
    zeros = math.ceil(sparsity * rows)
    for j in range(cols):
        keys = [cycle[(first_key + j * rows + i) % len(cycle)] for i in range(rows)]
        lowest = sorted(range(rows), key=lambda i: (keys[i], i))[:zeros]
        assert np.flatnonzero(w[:, j] == 0).tolist() == sorted(lowest)


# --- every new initializer ------------------------------------------------------------------

NEW = {
    "kaiming_uniform": lambda s, rng: ti.kaiming_uniform(s, "fan_in", "relu", rng),
    "torch_default_init": ti.torch_default_init,
    "uniform_init": lambda s, rng: ti.uniform_init(s, -1.0, 1.0, rng),
    "trunc_normal_init": lambda s, rng: ti.trunc_normal_init(s, 0.02, rng),
    "orthogonal_init": lambda s, rng: ti.orthogonal_init(s, 1.0, rng),
    "sparse_init": lambda s, rng: ti.sparse_init(s[:2], 0.2, 0.01, rng),
}


@pytest.mark.parametrize("name", NEW)
def test_same_seed_same_weights_and_the_next_layer_differs(name):
    draw = NEW[name]
    shape = (6, 5)
    a = draw(shape, PCG32(7))
    assert draw(shape, PCG32(7)).tobytes() == a.tobytes()
    assert draw(shape, PCG32(8)).tobytes() != a.tobytes()
    rng = PCG32(7)
    draw(shape, rng)
    assert draw(shape, rng).tobytes() != a.tobytes()


def test_trunc_normal_cutoffs_are_inclusive():
    """A value equal to a or b is kept: [a, b] is closed, on the first draw and on redraws."""
    z = ti.normal(PCG32(0), 6)  # -0.81, 0.05, -0.75, 1.16, 0.19, -0.39
    w = ti.trunc_normal_init((4,), 1.0, PCG32(0), a=float(z[2]), b=float(z[3]))
    # z0 < a is redrawn (from the next pair: z4); z2 == a and z3 == b are kept
    assert w.tolist() == np.float32([z[4], z[1], z[2], z[3]]).tolist()
    # the redraw of element 0 that lands exactly on a cutoff is kept too
    w = ti.trunc_normal_init((4,), 1.0, PCG32(0), a=float(z[4]), b=float(z[3]))
    assert w[0] == np.float32(z[4]) and w[3] == np.float32(z[3])
    # and one that lands exactly on b: z3 > b = z4 is redrawn, and its redraw is z4
    w = ti.trunc_normal_init((4,), 1.0, PCG32(0), a=-1.0, b=float(z[4]))
    assert w.tolist() == np.float32([z[0], z[1], z[2], z[4]]).tolist()


def test_trunc_normal_refuses_cutoffs_just_below_the_acceptance_threshold():
    # P(z > 3.0) = 0.00135 is accepted; P(z > 3.2) = 0.00069 < 1e-3 is refused
    w = ti.trunc_normal_init((3,), 1.0, PCG32(0), a=3.0, b=10.0)
    assert np.all(w >= 3.0)
    with pytest.raises(ValueError, match=r"^a and b must leave .* \(chance 0\.000687\)"):
        ti.trunc_normal_init((3,), 1.0, PCG32(0), a=3.2, b=10.0)
    # the chance is of N(mean, std**2): shifting everything keeps the verdict
    assert ti.trunc_normal_init((3,), 2.0, PCG32(0), mean=5.0, a=11.0, b=25.0).min() >= 11.0
    # with b and a both measured in stds: P(3 < z < 4) = 0.00132 is accepted
    w = ti.trunc_normal_init((3,), 0.5, PCG32(0), a=1.5, b=2.0)
    assert np.all((w >= 1.5) & (w <= 2.0))


def test_trunc_normal_cuts_at_minus_2_and_2_by_default():
    w = ti.trunc_normal_init((2000,), 10.0, PCG32(1))  # nearly flat on [-2, 2]
    assert -2.0 <= w.min() < -1.9 and 1.9 < w.max() <= 2.0


def test_uniform_init_refuses_a_width_beyond_float64():
    with pytest.raises(ValueError, match=r"^high must be >= low and high - low finite"):
        ti.uniform_init((3,), -1e308, 1e308, PCG32(0))


def test_the_initializers_that_draw_nothing_return_float32_too():
    for w in [
        ti.eye_init((3, 5)),
        ti.dirac_init((4, 2, 3)),
        ti.dirac_init((6, 4, 3, 3), 2),
        ti.constant_init((2, 2), 0.5),
        ti.zeros_init((2,)),
        ti.ones_init((2,)),
    ]:
        assert w.dtype == np.float32 and w.flags.c_contiguous and w.flags.writeable


def test_dirac_init_has_one_group_by_default():
    w = ti.dirac_init((4, 4, 3))
    assert w.tolist() == ti.dirac_init((4, 4, 3), 1).tolist()
    assert [tuple(i) for i in np.argwhere(w)] == [(d, d, 1) for d in range(4)]

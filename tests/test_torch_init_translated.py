"""PyTorch's own tests of torch.nn.init, translated (tests/torch_init_checks.py), pass on tinyinit.

And they pass on torch: scripts/make_torch_golden.py runs the same checks on
torch.nn.init and records the verdicts in tinyinit/data/init_torch.json, which
shows the translation asks what torch's tests ask.

Where tinyinit differs on purpose (docs/developing/reference.md, "torch.nn.init -> tinyinit") the
adapter says so: torch's kaiming default slope a = 0 is passed explicitly; a
zero-element weight, which torch initializes as a no-op with a warning, is a
ValueError here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from torch_init_checks import CHECKS, run_check

import tinyinit as ti
from tinyinit import PCG32
from tinyinit.course.catalog import torch_golden

GOLDEN = torch_golden()  # tinyinit/data/init_torch.json


class Tinyinit:
    """torch.nn.init's calls, answered by tinyinit: a shape and a seed in, a float array out."""

    calculate_gain = staticmethod(ti.calculate_gain)

    def uniform(self, shape, a, b, seed):
        return ti.uniform_init(shape, a, b, PCG32(seed))

    def normal(self, shape, mean, std, seed):
        return ti.normal_init(shape, std, PCG32(seed), mean=mean)

    def trunc_normal(self, shape, mean, std, a, b, seed):
        return ti.trunc_normal_init(shape, std, PCG32(seed), mean=mean, a=a, b=b)

    def constant(self, shape, val):
        return ti.constant_init(shape, val)

    def ones(self, shape):
        return ti.ones_init(shape)

    def zeros(self, shape):
        return ti.zeros_init(shape)

    def eye(self, shape):
        return ti.eye_init(shape)

    def dirac(self, shape, groups=1):
        return ti.dirac_init(shape, groups)

    def xavier_uniform(self, shape, seed, gain=1.0):
        return ti.xavier_uniform(shape, gain, PCG32(seed))

    def xavier_normal(self, shape, seed, gain=1.0):
        return ti.xavier_normal(shape, gain, PCG32(seed))

    # torch's kaiming_*_(a=0, mode, nonlinearity="leaky_relu"): tinyinit's slope default is
    # 0.01 (the card's calculate_gain), so torch's a = 0 is passed explicitly.
    def kaiming_uniform(self, shape, seed, a=0.0, mode="fan_in"):
        return ti.kaiming_uniform(shape, mode, "leaky_relu", PCG32(seed), param=a)

    def kaiming_normal(self, shape, seed, a=0.0, mode="fan_in"):
        return ti.kaiming_normal(shape, mode, "leaky_relu", PCG32(seed), param=a)

    def sparse(self, shape, sparsity, seed, std=0.01):
        return ti.sparse_init(shape, sparsity, std, PCG32(seed))

    def orthogonal(self, shape, seed, gain=1.0):
        return ti.orthogonal_init(shape, gain, PCG32(seed))


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_torch_test_passes_on_tinyinit(name):
    run_check(name, Tinyinit())


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_torch_test_passes_on_torch_as_translated(name):
    """scripts/make_torch_golden.py ran the same check on torch.nn.init and it passed."""
    golden = GOLDEN
    assert golden["translated_tests"].get(name) == "passed", (
        f"{name}: not run on torch, or failed there; rerun scripts/make_torch_golden.py"
    )


# --- torch's test_kaiming_*_warning_on_0element_tensor: a deliberate difference ---------


@pytest.mark.parametrize("init", [ti.kaiming_uniform, ti.kaiming_normal])
def test_kaiming_on_a_zero_element_shape_is_an_error_where_torch_warns(init):
    rng = PCG32(0)
    with pytest.raises(ValueError, match=r"^shape \(0, 1\) has fan_in=1 and fan_out=0"):
        init((0, 1), "fan_in", "relu", rng)
    assert rng == PCG32(0)


def test_every_torch_init_function_has_its_row_in_the_reference():
    root = Path(__file__).resolve().parent.parent
    reference = (root / "docs" / "developing" / "reference.md").read_text(encoding="utf-8")
    section = reference.split("## torch.nn.init → tinyinit")[1].split("\n## ")[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    torch_cells = " ".join(row.split("|")[1] for row in rows)
    functions = GOLDEN["torch_functions"]
    assert "kaiming_uniform_" in functions and len(functions) >= 15
    missing = [name for name in functions if f"`{name}(" not in torch_cells]
    assert not missing, f"the reference's torch.nn.init table has no row for {missing}"

"""The residual-scaling audit: a model's output projections found by name, each measured
against base_std / sqrt(2N)."""

from __future__ import annotations

import math
import re

import pytest

from tinyinit import PCG32, normal_init, scaled_residual_std
from tinyinit.networks.residual_audit import (
    GPT2_PATTERNS,
    LLAMA_PATTERNS,
    NAMINGS,
    check_residual_scaling,
    toy_gpt2_parameters,
)


def test_checker_passes_a_correctly_scaled_toy():
    report = check_residual_scaling(toy_gpt2_parameters(6, 64, PCG32(0)), 6)
    assert report.ok
    assert len(report.checks) == 12
    assert report.expected_std == pytest.approx(0.02 / math.sqrt(12))
    assert "PASS" in str(report)


def test_checker_flags_every_mlp_projection_the_scaling_missed():
    params = toy_gpt2_parameters(6, 64, PCG32(0), unscaled=[(i, "mlp") for i in range(6)])
    report = check_residual_scaling(params, 6)
    assert not report.ok
    assert {(c.layer, c.kind, c.status) for c in report.problems} == {
        (i, "mlp", "unscaled") for i in range(6)
    }
    assert "h.0.mlp.c_proj.weight" in str(report) and "FAIL" in str(report)


def test_checker_flags_one_layer_left_unscaled():
    params = toy_gpt2_parameters(6, 64, PCG32(0), unscaled=[(3, "attn"), (3, "mlp")])
    report = check_residual_scaling(params, 6)
    assert [(c.name, c.status) for c in report.problems] == [
        ("h.3.attn.c_proj.weight", "unscaled"),
        ("h.3.mlp.c_proj.weight", "unscaled"),
    ]


def test_checker_flags_missing_and_unexpected_projections():
    params = [p for p in toy_gpt2_parameters(6, 32, PCG32(0)) if p[0] != "h.2.attn.c_proj.weight"]
    report = check_residual_scaling(params, 5)  # block 5 exists but N says 5 blocks
    statuses = {(c.layer, c.kind): c.status for c in report.problems}
    assert statuses[(2, "attn")] == "missing"
    assert statuses[(5, "attn")] == "unexpected" and statuses[(5, "mlp")] == "unexpected"
    assert "MISSING" in str(report)


def test_checker_calls_the_sqrt_N_mistake_wrong():
    # scaled by 1/sqrt(N) instead of 1/sqrt(2N): std sqrt(2) times too large
    params = toy_gpt2_parameters(12, 64, PCG32(0), base_std=0.02 * math.sqrt(2))
    report = check_residual_scaling(params, 12, base_std=0.02)
    assert report.count("wrong") == 24


def test_checker_with_llama_names_and_a_dict():
    params = dict(toy_gpt2_parameters(4, 64, PCG32(0), naming="llama"))
    assert check_residual_scaling(params, 4, patterns=LLAMA_PATTERNS).ok
    assert check_residual_scaling(params, 4).count("missing") == 8  # GPT-2 names absent


def test_checker_tolerance_shrinks_with_size_and_tiny_matrices_are_inconclusive():
    rng = PCG32(0)
    small = [("h.0.attn.c_proj.weight", normal_init((2, 2), 0.02 / math.sqrt(2), rng))]
    report = check_residual_scaling(small, 1, patterns={"attn": r"h\.(\d+)\.attn\.c_proj"})
    assert report.problems[0].status == "inconclusive"  # 4 weights: +-177 % either way
    big = check_residual_scaling(toy_gpt2_parameters(1, 256, rng), 1)
    mid = check_residual_scaling(toy_gpt2_parameters(1, 16, rng), 1)
    assert big.checks[0].tolerance < mid.checks[0].tolerance


def test_checker_rejects_a_pattern_without_one_group():
    with pytest.raises(ValueError, match="exactly one group"):
        check_residual_scaling([], 2, patterns={"attn": r"attn\.c_proj"})
    with pytest.raises(ValueError, match="n_layers"):
        check_residual_scaling([], 0)


def test_the_patterns_are_read_from_the_naming_table():
    for naming, patterns in (("gpt2", GPT2_PATTERNS), ("llama", LLAMA_PATTERNS)):
        for kind, pattern in patterns.items():
            name = NAMINGS[naming][kind].format(i=7)
            assert re.search(pattern, "transformer." + name).group(1) == "7"
    assert GPT2_PATTERNS["mlp"] == r"(?:^|\.)h\.(\d+)\.mlp\.c_proj\.weight$"


def test_the_report_derives_its_expected_std():
    report = check_residual_scaling(toy_gpt2_parameters(3, 32, PCG32(0)), 3, base_std=0.05)
    assert report.expected_std == scaled_residual_std(0.05, 3)

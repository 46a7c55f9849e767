"""An audit of a model's residual output projections: did GPT-2's 1/sqrt(2N) reach each one?

A checkpoint names its weights block by block (`h.7.mlp.c_proj.weight` in GPT-2,
`layers.7.feed_forward.w2.weight` in Llama). `check_residual_scaling` finds the two residual
output projections of every block by those names (`NAMINGS`, a regex each: `GPT2_PATTERNS`,
`LLAMA_PATTERNS`), measures each one's std and says whether it is base_std / sqrt(2N)
(`scaled_residual_std`), left at base_std, or neither. `toy_gpt2_parameters` makes a checkpoint
initialized as GPT-2 is, with the mistakes the audit should catch on request.

Why the scaling matters, measured on a stream: `tinyinit.physics.residual`. A model whose
parameters this audits: `tinyinit.networks.transformer.TinyGPT`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from ..core.arguments import (
    KindError,
    generator,
    instance,
    integer,
    is_integer,
    number,
    one_of,
    real_array,
    shown,
)
from ..core.init import normal_init, scaled_residual_std

__all__ = [
    "GPT2_PATTERNS",
    "LLAMA_PATTERNS",
    "NAMINGS",
    "STATUSES",
    "ProjectionCheck",
    "ResidualScalingReport",
    "check_residual_scaling",
    "name_pattern",
    "toy_gpt2_parameters",
]

# The weights of block i by their names: GPT-2's as nanoGPT and Hugging Face spell
# them (nanoGPT's model adds the prefix "transformer."), and Llama's. "attn" and
# "mlp" are the two residual output projections, the ones that take 1/sqrt(2N).
NAMINGS = {
    "gpt2": {
        "attn_in": "h.{i}.attn.c_attn.weight",
        "attn": "h.{i}.attn.c_proj.weight",
        "mlp_in": "h.{i}.mlp.c_fc.weight",
        "mlp": "h.{i}.mlp.c_proj.weight",
    },
    "llama": {
        "attn_in": "layers.{i}.attention.wq.weight",
        "attn": "layers.{i}.attention.wo.weight",
        "mlp_in": "layers.{i}.feed_forward.w1.weight",
        "mlp": "layers.{i}.feed_forward.w2.weight",
    },
}
RESIDUAL_OUTPUTS = ("attn", "mlp")


def name_pattern(template: str) -> str:
    r"""The regex of a NAMINGS template, its one group the block index {i}.

    Matched at the end of a name, so prefixes such as "transformer." or "model."
    do not matter.

    >>> print(name_pattern("h.{i}.mlp.c_proj.weight"))
    (?:^|\.)h\.(\d+)\.mlp\.c_proj\.weight$
    """
    instance("template", template, str, "a parameter name with {i} for the block index")
    if template.count("{i}") != 1:
        raise ValueError(f"template must hold {{i}} once (the block index), got {template!r}")
    return r"(?:^|\.)" + template.replace(".", r"\.").replace("{i}", r"(\d+)") + "$"


# One regex per residual output, for check_residual_scaling.
GPT2_PATTERNS = {kind: name_pattern(NAMINGS["gpt2"][kind]) for kind in RESIDUAL_OUTPUTS}
LLAMA_PATTERNS = {kind: name_pattern(NAMINGS["llama"][kind]) for kind in RESIDUAL_OUTPUTS}

STATUSES = {
    "ok": "matches base/sqrt(2N)",
    "unscaled": "left at the base std: the 1/sqrt(2N) scaling did not reach it",
    "wrong": "matches neither the scaled nor the base std",
    "inconclusive": "too few weights to tell the scaled std from the base std",
    "missing": "no parameter of this name",
    "unexpected": "block index beyond n_layers",
}


@dataclass(frozen=True)
class ProjectionCheck:
    """One output projection: what was measured, what was expected, and the verdict.

    >>> from tinyinit import PCG32
    >>> first = check_residual_scaling(toy_gpt2_parameters(2, 32, PCG32(0)), 2).checks[0]
    >>> first.name, first.status, first.ok
    ('h.0.attn.c_proj.weight', 'ok', True)
    """

    layer: int
    kind: str
    name: str | None
    size: int
    std: float
    expected: float
    tolerance: float
    status: str

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True)
class ResidualScalingReport:
    """The result of check_residual_scaling: one ProjectionCheck per (layer, kind).

    expected_std = base_std / sqrt(2 n_layers); ok when every check is "ok", and
    problems holds the others. Printed, it says what was found and where.

    >>> from tinyinit import PCG32
    >>> params = toy_gpt2_parameters(2, 32, PCG32(0), unscaled=[(1, "mlp")])
    >>> report = check_residual_scaling(params, 2)
    >>> report.ok, [(c.layer, c.kind, c.status) for c in report.problems]
    (False, [(1, 'mlp', 'unscaled')])
    >>> print(report)
    residual scaling, N = 2: expected std 0.02/sqrt(4) = 0.01000
    4 output projections: 3 ok, 1 unscaled
      UNSCALED    h.1.mlp.c_proj.weight: std 0.01978 (expected 0.01000 +- 0.00055)
    FAIL: 1 problem(s)
    """

    n_layers: int
    base_std: float
    checks: tuple[ProjectionCheck, ...]

    @property
    def expected_std(self) -> float:
        return scaled_residual_std(self.base_std, self.n_layers)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def problems(self) -> tuple[ProjectionCheck, ...]:
        return tuple(c for c in self.checks if not c.ok)

    def count(self, status: str) -> int:
        """How many checks have this status (a key of STATUSES).

        >>> from tinyinit import PCG32
        >>> check_residual_scaling(toy_gpt2_parameters(2, 32, PCG32(0)), 2).count("ok")
        4
        """
        return sum(c.status == one_of("status", status, STATUSES) for c in self.checks)

    def __str__(self) -> str:
        head = (
            f"residual scaling, N = {self.n_layers}: expected std "
            f"{self.base_std:g}/sqrt({2 * self.n_layers}) = {self.expected_std:.5f}"
        )
        counts = ", ".join(f"{self.count(s)} {s}" for s in STATUSES if self.count(s))
        lines = [head, f"{len(self.checks)} output projections: {counts}"]
        shown = self.problems or self.checks[:4]
        for c in shown:
            where = c.name or f"(block {c.layer}, {c.kind})"
            if c.status == "missing":
                lines.append(f"  MISSING     {where}")
                continue
            lines.append(
                f"  {c.status.upper():<11} {where}: std {c.std:.5f} "
                f"(expected {c.expected:.5f} +- {c.tolerance:.5f})"
            )
        if not self.problems and len(self.checks) > len(shown):
            lines.append(f"  ... and {len(self.checks) - len(shown)} more, all ok")
        lines.append("PASS" if self.ok else f"FAIL: {len(self.problems)} problem(s)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))


def _as_float_array(p) -> np.ndarray:
    if hasattr(p, "detach"):  # a torch tensor
        p = p.detach().cpu().numpy()
    return real_array("named_params", p, what="(name, array) pairs, the arrays of numbers")


def _named(named_params) -> list[tuple[str, object]]:
    """named_params as (name, parameter) pairs: a dict, or pairs as torch gives them."""
    accepted = "(name, array) pairs, as model.named_parameters() gives, or a dict"
    if isinstance(named_params, Mapping):
        pairs = list(named_params.items())
    elif isinstance(named_params, (str, bytes, np.ndarray)) or not isinstance(
        named_params, Iterable
    ):
        raise KindError(f"named_params must be {accepted}, got {shown(named_params)}")
    else:
        pairs = list(named_params)
    for pair in pairs:
        if not (isinstance(pair, tuple | list) and len(pair) == 2 and isinstance(pair[0], str)):
            raise KindError(f"named_params must be {accepted}, got an item {shown(pair)}")
    return pairs


def check_residual_scaling(
    named_params,
    n_layers: int,
    base_std: float = 0.02,
    *,
    patterns: Mapping[str, str] = GPT2_PATTERNS,
    n_sigmas: float = 5.0,
) -> ResidualScalingReport:
    """Check that every residual output projection has std base_std / sqrt(2 n_layers).

    named_params: (name, array) pairs, as torch's model.named_parameters(), or a dict.
    patterns: {kind: regex}, the regex's one group the block index (GPT2_PATTERNS,
    LLAMA_PATTERNS, or your own). Every block 0 .. n_layers - 1 must have one
    parameter of each kind.

    The std of n normal draws has a standard error of about std / sqrt(2n), so a
    measured std within n_sigmas of that around the expected value is "ok"; one
    within it around base_std is "unscaled" (the scaling missed it). Uniform or
    truncated draws vary less, so the tolerance is on the safe side for them.

    >>> from tinyinit import PCG32
    >>> params = toy_gpt2_parameters(2, 32, PCG32(0))
    >>> check_residual_scaling(params, 2).ok
    True
    """
    expected = scaled_residual_std(base_std, n_layers)
    n_sigmas = number("n_sigmas", n_sigmas, above=0)
    instance("patterns", patterns, Mapping, "a dict {kind: regex}, such as GPT2_PATTERNS")
    if not patterns:
        raise ValueError("patterns must name at least one kind of output projection, got {}")
    compiled = {}
    for kind, pattern in patterns.items():
        instance("patterns", pattern, str, "a dict {kind: regex}, such as GPT2_PATTERNS")
        try:
            regex = re.compile(pattern)
        except re.error as error:
            raise ValueError(f"patterns must hold regexes, got {pattern!r} ({error})") from None
        if regex.groups != 1:
            raise ValueError(
                f"pattern for {kind!r} must have exactly one group (the block index), "
                f"got {pattern!r}"
            )
        compiled[kind] = regex
    items = _named(named_params)

    found: dict[tuple[int, str], list[ProjectionCheck]] = {}
    extra = []
    for name, param in items:
        for kind, regex in compiled.items():
            match = regex.search(name)
            if match is None:
                continue
            layer = int(match.group(1))
            check = _check_one(
                layer, kind, name, _as_float_array(param), expected, base_std, n_sigmas
            )
            if layer >= n_layers:
                extra.append(_replace_status(check, "unexpected"))
            else:
                found.setdefault((layer, kind), []).append(check)

    checks = []
    for layer in range(n_layers):
        for kind in compiled:
            if (layer, kind) in found:
                checks.extend(found[(layer, kind)])
            else:
                checks.append(
                    ProjectionCheck(layer, kind, None, 0, math.nan, expected, 0, "missing")
                )
    return ResidualScalingReport(n_layers, base_std, tuple(checks + extra))


def _unscaled(unscaled, n_layers: int) -> set[tuple[int, str]]:
    accepted = f"(layer, kind) pairs, layer in 0 .. {n_layers - 1}, kind attn or mlp"
    if isinstance(unscaled, (str, bytes, dict)) or not isinstance(unscaled, Iterable):
        raise KindError(f"unscaled must be {accepted}, got {shown(unscaled)}")
    pairs = set()
    for pair in unscaled:
        if not (isinstance(pair, tuple | list) and len(pair) == 2 and is_integer(pair[0])):
            raise KindError(f"unscaled must be {accepted}, got an item {shown(pair)}")
        if not (0 <= pair[0] < n_layers and pair[1] in RESIDUAL_OUTPUTS):
            raise ValueError(f"unscaled must be {accepted}, got {shown(pair)}")
        pairs.add((int(pair[0]), pair[1]))
    return pairs


def _check_one(layer, kind, name, w, expected, base_std, n_sigmas) -> ProjectionCheck:
    std = float(np.std(w)) if w.size else math.nan
    # the std of n normal draws: relative standard error 1/sqrt(2n)
    rel = 1.0 / math.sqrt(2 * max(w.size, 1))
    tol_expected, tol_base = n_sigmas * rel * expected, n_sigmas * rel * base_std
    near_expected = abs(std - expected) <= tol_expected
    near_base = abs(std - base_std) <= tol_base
    if near_expected and near_base:
        status = "inconclusive"
    elif near_expected:
        status = "ok"
    elif near_base:
        status = "unscaled"
    else:
        status = "wrong"
    return ProjectionCheck(layer, kind, name, int(w.size), std, expected, tol_expected, status)


def _replace_status(check: ProjectionCheck, status: str) -> ProjectionCheck:
    return ProjectionCheck(**{**check.__dict__, "status": status})


def toy_gpt2_parameters(
    n_layers: int,
    width: int,
    rng,
    *,
    base_std: float = 0.02,
    unscaled: Iterable[tuple[int, str]] = (),
    naming: str = "gpt2",
) -> list[tuple[str, np.ndarray]]:
    """(name, weight) pairs of a toy GPT-2 initialized as GPT-2 is: N(0, base_std**2)
    everywhere, base_std / sqrt(2N) on the two output projections of each block.

    unscaled: (layer, kind) pairs, kind "attn" or "mlp", left at base_std, to
    make the mistakes the checker should catch. naming: "gpt2" or "llama".
    Drawn block by block in the order of NAMINGS[naming].

    >>> from tinyinit import PCG32
    >>> [name for name, _ in toy_gpt2_parameters(1, 8, PCG32(0), naming="llama")][:2]
    ['layers.0.attention.wq.weight', 'layers.0.attention.wo.weight']
    """
    one_of("naming", naming, NAMINGS)
    n_layers, width = integer("n_layers", n_layers, minimum=1), integer("width", width, minimum=1)
    generator("rng", rng)
    unscaled = _unscaled(unscaled, n_layers)
    scaled = scaled_residual_std(base_std, n_layers)
    shapes = {
        "attn_in": (3 * width if naming == "gpt2" else width, width),
        "attn": (width, width),
        "mlp_in": (4 * width, width),
        "mlp": (width, 4 * width),
    }
    params = []
    for i in range(n_layers):
        for kind, template in NAMINGS[naming].items():
            residual = kind in RESIDUAL_OUTPUTS and (i, kind) not in unscaled
            std = scaled if residual else base_std
            params.append((template.format(i=i), normal_init(shapes[kind], std, rng)))
    return params

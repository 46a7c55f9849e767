"""docs/spec.md says what tinyinit computes: its test vectors are tinyinit's numbers.

The vectors are read from the page itself, so a change to the generator, the
normals or an initializer that the page does not follow fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tinyinit
from tinyinit import PCG32

SPEC = Path(__file__).resolve().parent.parent / "docs" / "spec.md"
TEXT = SPEC.read_text()


def table_rows(heading_words: str) -> list[list[str]]:
    """The cells of the Markdown table whose header row contains heading_words."""
    lines = TEXT.splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.startswith("|") and heading_words in line
    )
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


GENERATOR_ROWS = table_rows("first four `next_u32()`")
WEIGHT_ROWS = table_rows("first weights")


def test_the_spec_has_vectors_for_several_seeds_and_streams():
    assert len({(r[0], r[1]) for r in GENERATOR_ROWS}) >= 5
    assert len({r[1] for r in GENERATOR_ROWS}) >= 4
    assert len(WEIGHT_ROWS) >= 8


@pytest.mark.parametrize("row", GENERATOR_ROWS, ids=lambda r: f"seed={r[0]},stream={r[1]}")
def test_generator_vectors_are_tinyinits(row):
    seed, stream = int(row[0]), int(row[1])
    words = [int(w) for w in row[2].split()]
    assert PCG32(seed, stream).words(len(words)).tolist() == words
    uniforms = [float(u) for u in row[3].split()]
    assert tinyinit.uniforms(PCG32(seed, stream), len(uniforms)).tolist() == uniforms
    normals = [float(z) for z in row[4].split()]
    assert tinyinit.normal(PCG32(seed, stream), len(normals)).tolist() == normals


@pytest.mark.parametrize("row", WEIGHT_ROWS, ids=lambda r: r[0].strip("`"))
def test_weight_vectors_are_tinyinits(row):
    call = row[0].strip("`")
    expected = np.array([float(w) for w in row[1].split()], dtype=np.float32)
    weights = eval(call, {**vars(tinyinit), "PCG32": PCG32})  # the call as the page writes it
    got = weights.ravel()[: len(expected)]
    assert got.view(np.uint32).tolist() == expected.view(np.uint32).tolist(), call


def test_every_initializer_has_its_row_in_the_spec():
    section = TEXT.split("### The initializers' formulas")[1].split("## 5.")[0]
    documented = set(re.findall(r"^\| `(\w+)\(", section, flags=re.M))
    documented |= set(re.findall(r"`(\w+_init)\(", section))
    initializers = {
        name
        for name in tinyinit.__all__
        if name.endswith(("_init", "_uniform", "_normal")) and name != "check_initializer"
    }
    assert initializers <= documented, initializers - documented

"""reference/tinyinit_ref.c, the spec in plain C, gives the same bits as tinyinit.

The C program is compiled here with the machine's `cc` and run on several seeds,
streams and sizes (odd ones: the dropped last sine; past one block of 2**16
pairs: the fast path's seams). Words, uniforms and normals are compared as the
bits of their uint32 and float64, weights as the bits of their float32: no
tolerance. Both sides call the same C library's log, cos and sin, which is what
makes the normals equal (see docs/spec.md, "What is exact").

Without a C compiler the tests are skipped, unless TINYINIT_REQUIRE_CC=1 (CI).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tinyinit as ti
from tinyinit import PCG32

SOURCE = Path(__file__).resolve().parent.parent / "reference" / "tinyinit_ref.c"
CC = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")

SEEDS = [(0, 54), (42, 54), (2**64 - 1, 0), (12345, 1), (7, 2**63 + 5)]
SIZES = [1, 2, 3, 7, 1000, 2 * 2**16 + 3]


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    """Run the compiled reference: ref(kind, seed, stream, *args) -> list of ints (the bits)."""
    if CC is None:
        if os.environ.get("TINYINIT_REQUIRE_CC") == "1":
            pytest.fail("TINYINIT_REQUIRE_CC=1 but no C compiler (apt-get install -y gcc)")
        pytest.skip("no C compiler: `apt-get install -y gcc` to check the C reference")
    exe = tmp_path_factory.mktemp("ref") / "tinyinit_ref"
    flags = ["-std=c99", "-O2", "-Wall", "-Werror", "-ffp-contract=off"]
    subprocess.run([CC, *flags, "-o", str(exe), str(SOURCE), "-lm"], check=True)

    def run(kind: str, seed: int, stream: int, *args) -> list[int]:
        argv = [
            str(exe),
            kind,
            str(seed),
            str(stream),
            *(repr(float(a)) if isinstance(a, float) else str(a) for a in args),
        ]
        out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
        return [int(line, 16) for line in out.split()]

    return run


def bits32(x: np.ndarray) -> list[int]:
    return np.ascontiguousarray(x).view(np.uint32).ravel().tolist()


def bits64(x: np.ndarray) -> list[int]:
    return np.ascontiguousarray(x, dtype=np.float64).view(np.uint64).ravel().tolist()


@pytest.mark.parametrize("seed, stream", SEEDS)
@pytest.mark.parametrize("n", SIZES)
def test_words_uniforms_and_normals_agree_bit_for_bit(ref, seed, stream, n):
    assert ref("words", seed, stream, n) == PCG32(seed, stream).words(n).tolist()
    assert ref("uniforms", seed, stream, n) == bits64(ti.uniforms(PCG32(seed, stream), n))
    assert ref("normals", seed, stream, n) == bits64(ti.normal(PCG32(seed, stream), n))


SHAPES = [(4, 3), (5, 7), (1, 1), (3, 5, 7), (8, 4, 3, 3), (2, 3, 3, 5, 7), (513, 257)]

# (C kind, C parameters, tinyinit call) for each initializer that draws
INITIALIZERS = {
    "xavier_uniform": (
        lambda: ("xavier_uniform", 5 / 3),
        lambda s, rng: ti.xavier_uniform(s, 5 / 3, rng),
    ),
    "xavier_normal": (lambda: ("xavier_normal", 1.0), lambda s, rng: ti.xavier_normal(s, 1.0, rng)),
    "kaiming_normal fan_out": (
        lambda: ("kaiming_normal", 1, ti.calculate_gain("relu")),
        lambda s, rng: ti.kaiming_normal(s, "fan_out", "relu", rng),
    ),
    "kaiming_uniform fan_in": (
        lambda: ("kaiming_uniform", 0, ti.calculate_gain("leaky_relu", 0.2)),
        lambda s, rng: ti.kaiming_uniform(s, "fan_in", "leaky_relu", rng, param=0.2),
    ),
    "torch_default_init": (
        lambda: ("kaiming_uniform", 0, ti.calculate_gain("leaky_relu", 5**0.5)),
        ti.torch_default_init,
    ),
    "normal_init": (
        lambda: ("normal_init", 0.02, 0.0),
        lambda s, rng: ti.normal_init(s, 0.02, rng),
    ),
    "normal_init mean": (
        lambda: ("normal_init", 0.3, -1.25),
        lambda s, rng: ti.normal_init(s, 0.3, rng, mean=-1.25),
    ),
    "uniform_init": (
        lambda: ("uniform_init", -0.3, 1.7),
        lambda s, rng: ti.uniform_init(s, -0.3, 1.7, rng),
    ),
    "trunc_normal_init": (
        lambda: ("trunc_normal", 0.5, 0.1, -0.4, 0.9),
        lambda s, rng: ti.trunc_normal_init(s, 0.5, rng, mean=0.1, a=-0.4, b=0.9),
    ),
}


@pytest.mark.parametrize("seed, stream", SEEDS[:3])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", INITIALIZERS)
def test_initializers_agree_bit_for_bit(ref, name, shape, seed, stream):
    c_args, call = INITIALIZERS[name]
    kind, *params = c_args()
    rng = PCG32(seed, stream)
    ours = call(shape, rng)
    assert ref(kind, seed, stream, *params, *shape) == bits32(ours)


@pytest.mark.parametrize("seed, stream", SEEDS)
@pytest.mark.parametrize(
    "shape, sparsity",
    [((4, 3), 0.5), ((7, 5), 0.1), ((30, 33), 0.15), ((1, 9), 1.0), ((6, 2), 0.0)],
)
def test_sparse_init_agrees_bit_for_bit(ref, shape, sparsity, seed, stream):
    ours = ti.sparse_init(shape, sparsity, 0.01, PCG32(seed, stream))
    assert ref("sparse", seed, stream, sparsity, 0.01, *shape) == bits32(ours)

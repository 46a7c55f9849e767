"""How fast does tinyinit draw exact weights, next to numpy's own generator?

    python benchmarks/bench_init.py [--repeat 5]

Each row times a tinyinit draw and its numpy peer in the same run, on the same
machine, and reports the throughput ratio (tinyinit / numpy: 1.0 is numpy's
speed, higher is faster). Peak memory is what the call allocates beyond its own
output, measured with tracemalloc (numpy reports its buffers to it), so a
draw that works in blocks stays flat whatever its size.

Targets: exact normals at >= 0.5x numpy's standard_normal; the uniform
initializers (kaiming_uniform, torch_default_init, uniform_init) as fast as
xavier_uniform, which the last column compares them with; memory beyond the
output <= 64 MiB at any size.
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

import numpy as np

from tinyinit import (
    PCG32,
    kaiming_normal,
    kaiming_uniform,
    normal,
    normal_init,
    orthogonal_init,
    torch_default_init,
    trunc_normal_init,
    uniform_init,
    xavier_uniform,
)

MiB = 1 << 20


def best_and_median(fn, repeat: int) -> tuple[float, float]:
    fn()  # warm up: thread pool, jump tables, page faults of the first output
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def peak_beyond_output(fn) -> float:
    """MiB allocated at the peak of fn(), minus the bytes of what it returns."""
    tracemalloc.start()
    try:
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return (peak - out.nbytes) / MiB


def gpt_like_shapes(d: int = 256, n_layers: int = 12, vocab: int = 8192) -> list[tuple]:
    """The weight shapes of a small decoder: about 10M parameters for the defaults."""
    shapes = [(vocab, d)]
    for _ in range(n_layers):
        shapes += [(3 * d, d), (d, d), (4 * d, d), (d, 4 * d)]
    return shapes


def init_model(shapes) -> list[np.ndarray]:
    rng = PCG32(0)
    return [
        normal_init(s, 0.02, rng) if s[0] > 4096 else kaiming_normal(s, "fan_in", "relu", rng)
        for s in shapes
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per row (median)")
    args = parser.parse_args()

    gen = np.random.default_rng(0)
    n, shape = 2**24, (4096, 4096)
    uniform_peer = ("Generator.random(float32)", lambda: gen.random(shape, dtype=np.float32))
    normal_peer = (
        "Generator.standard_normal(float32)",
        lambda: gen.standard_normal(shape, dtype=np.float32),
    )
    small = (1024, 1024)
    # (name, values drawn, ours, peer's name, peer)
    rows = [
        (
            "normal(PCG32(0), 2**24) float64",
            n,
            lambda: normal(PCG32(0), n),
            "Generator.standard_normal",
            lambda: gen.standard_normal(n),
        ),
        ("xavier_uniform 4096x4096 float32", n, lambda: xavier_uniform(shape, 1.0, PCG32(0)))
        + uniform_peer,
        (
            "kaiming_uniform 4096x4096 float32",
            n,
            lambda: kaiming_uniform(shape, "fan_in", "relu", PCG32(0)),
        )
        + uniform_peer,
        ("torch_default_init 4096x4096 float32", n, lambda: torch_default_init(shape, PCG32(0)))
        + uniform_peer,
        ("uniform_init 4096x4096 float32", n, lambda: uniform_init(shape, -0.1, 0.1, PCG32(0)))
        + uniform_peer,
        (
            "kaiming_normal 4096x4096 float32",
            n,
            lambda: kaiming_normal(shape, "fan_in", "relu", PCG32(0)),
        )
        + normal_peer,
        ("trunc_normal_init 4096x4096 float32", n, lambda: trunc_normal_init(shape, 0.02, PCG32(0)))
        + normal_peer,
        (
            "orthogonal_init 1024x1024 float32",
            small[0] * small[1],
            lambda: orthogonal_init(small, 1.0, PCG32(0)),
            "numpy qr of standard_normal",
            lambda: np.linalg.qr(gen.standard_normal(small))[0].astype(np.float32),
        ),
    ]

    header = ("draw", "Mvalues/s", "peer", "Mvalues/s", "ratio", "extra MiB", "/xavier_u")
    print("{:38s} {:>10s} {:36s} {:>10s} {:>6s} {:>9s} {:>9s}".format(*header))
    xavier_rate = None
    for name, count, ours, peer_name, peer in rows:
        _, t_ours = best_and_median(ours, args.repeat)
        _, t_peer = best_and_median(peer, args.repeat)
        extra = peak_beyond_output(ours)
        rate = count / t_ours
        if name.startswith("xavier_uniform"):
            xavier_rate = rate
        uniform = name.split()[0] in ("kaiming_uniform", "torch_default_init", "uniform_init")
        versus = f"{rate / xavier_rate:8.2f}x" if (uniform or rate == xavier_rate) else ""
        print(
            f"{name:38s} {rate / 1e6:10.1f} {peer_name:36s} {count / t_peer / 1e6:10.1f} "
            f"{t_peer / t_ours:5.2f}x {extra:9.1f} {versus:>9s}"
        )

    print("\nmemory beyond the output, by size (target <= 64 MiB at any size):")
    for k in (16, 20, 24, 26):
        extra = peak_beyond_output(lambda k=k: normal(PCG32(0), 2**k))
        extra_w = peak_beyond_output(
            lambda k=k: kaiming_normal((2 ** (k - 10), 1024), "fan_in", "relu", PCG32(0))
        )
        print(f"  2**{k} values: normal {extra:6.1f} MiB   kaiming_normal {extra_w:6.1f} MiB")

    shapes = gpt_like_shapes()
    params = sum(int(np.prod(s)) for s in shapes)
    _, t_model = best_and_median(lambda: init_model(shapes), args.repeat)
    print(f"\na {params / 1e6:.1f}M-parameter decoder, every weight from PCG32(0): {t_model:.2f} s")


if __name__ == "__main__":
    main()

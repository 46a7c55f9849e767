"""How long notebook 04's training runs take, and what one BLAS thread buys.

    python benchmarks/bench_training.py            # one 200-step run at widths 64 and 128
    python benchmarks/bench_training.py --notebook # also executes notebooks/04 (wall and CPU)

`train` runs its loop on one BLAS thread. The peer, measured in the same run, is the same
200 SGD steps written with `loss_and_gradients` and `sgd_step` under the default BLAS
threads. On a busy machine the peer can be many times slower (threads that wait for each
other); on an idle one they are close. Report the ratio, and whether the machine was busy
(the load average is printed).
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

import numpy as np

from tinyinit import PCG32, kaiming_normal
from tinyinit.training import (
    _flat,
    _unflat,
    init_params,
    load_digits_split,
    loss_and_gradients,
    minibatch_indices,
    sgd_step,
    train,
)

STEPS, BATCH, LR, DEPTH = 200, 64, 0.02, 20


def kaiming(shape, rng):
    return kaiming_normal(shape, "fan_in", "relu", rng)


def peer(params, x, labels) -> None:
    """The same steps with the default BLAS threads: the loop of `train` without its limit."""
    arrays = _flat(params)
    for rows in minibatch_indices(len(x), BATCH, STEPS, PCG32(0)):
        _, grads = loss_and_gradients(_unflat(arrays), x[rows], labels[rows], "relu")
        arrays = sgd_step(arrays, _flat(grads), [LR] * len(arrays))


def timed(fn, *args, **kwargs) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebook", action="store_true", help="also execute notebooks/04")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    digits = load_digits_split()
    x, labels = digits.x_train, digits.labels_train
    for width in (64, 128):
        params = init_params([64] + [width] * DEPTH + [10], kaiming, PCG32(0))
        ours = timed(train, params, x, labels, "relu", lr=LR, steps=STEPS, batch_size=BATCH)
        theirs = timed(peer, params, x, labels)
        print(
            f"width {width:4d}, {DEPTH} hidden layers, {STEPS} steps: train {ours:6.2f} s "
            f"(one BLAS thread, with statistics); peer {theirs:6.2f} s (default threads, "
            f"no statistics); peer / train = {theirs / ours:.2f}"
        )
        assert np.isfinite(ours)
    if args.notebook:
        import nbformat
        from nbclient import NotebookClient

        path = Path(__file__).resolve().parent.parent / "notebooks" / "04_does_it_train.ipynb"
        nb = nbformat.read(path, as_version=4)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        client = NotebookClient(nb, timeout=600, resources={"metadata": {"path": str(path.parent)}})
        client.execute()
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        print(f"notebook 04: {wall:.1f} s wall, {cpu:.1f} s CPU in its kernel (target: < 90 s)")


if __name__ == "__main__":
    main()

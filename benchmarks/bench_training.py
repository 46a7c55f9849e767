"""How long notebook 04's training runs take, and what one BLAS thread buys.

    python benchmarks/bench_training.py            # one 200-step run at widths 64 and 128
    python benchmarks/bench_training.py --notebook # also executes notebooks/04 (wall and CPU)
    python benchmarks/bench_training.py --against DIR   # this tree's steps against DIR's

`--against DIR` (a checkout of another commit, e.g. `git worktree add /tmp/old HEAD~1`)
times notebook 13's runs (20 hidden ReLU layers of 64, 160 SGD steps, plain, BatchNorm and
LayerNorm) in processes that alternate between this tree's tinyinit and DIR's, one BLAS
thread each, and checks that both record the same numbers to the last bit.

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
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from tinyinit import PCG32, kaiming_normal
from tinyinit.networks.digits import load_digits_split
from tinyinit.networks.mlp import init_params, loss_and_gradients
from tinyinit.networks.optimizers import sgd_step
from tinyinit.networks.training import _flat, _unflat, minibatch_indices, train

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


ROOT = Path(__file__).resolve().parent.parent
NORMS = (None, "batch", "layer")

# One process's measurement: CPU seconds of each norm's run, and a digest of all it recorded.
ONE_RUN = f"""
import hashlib, time
from tinyinit import PCG32, kaiming_normal
from tinyinit.networks.digits import load_digits_split
from tinyinit.networks.mlp import init_params
from tinyinit.networks.training import train
digits = load_digits_split()
kaiming = lambda shape, rng: kaiming_normal(shape, "fan_in", "relu", rng)
digest, seconds = hashlib.sha256(), []
for norm in {NORMS!r}:
    params = init_params([64] + [64] * 20 + [10], kaiming, PCG32(0))
    start = time.process_time()
    run = train(params, digits.x_train, digits.labels_train, "relu", norm=norm, lr=0.05,
                steps=160)
    seconds.append(time.process_time() - start)
    for a in (run.losses, run.mean_square, run.saturated, run.dead, run.grad_norm,
              run.update_ratio, *[w for layer in run.params for w in layer]):
        digest.update(a.tobytes())
print(*seconds, digest.hexdigest())
"""


def one_run(tree: Path) -> tuple[list[float], str]:
    environment = dict(os.environ, PYTHONPATH=str(tree), OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-c", ONE_RUN], env=environment, capture_output=True, text=True,
        check=True, cwd=tree,
    ).stdout.split()  # fmt: skip
    return [float(s) for s in out[:-1]], out[-1]


def against(other: Path, rounds: int) -> None:
    """This tree's training steps against another checkout's, in alternating processes."""
    times: dict[Path, list[list[float]]] = {ROOT: [], other: []}
    digests = set()
    for _ in range(rounds):
        for tree in (ROOT, other):
            seconds, digest = one_run(tree)
            times[tree].append(seconds)
            digests.add((tree, digest))
    same = len({d for _, d in digests}) == 1
    print(f"{rounds} alternating rounds, median CPU seconds of a 160-step run; "
          f"the same numbers recorded: {same}")  # fmt: skip
    for i, norm in enumerate(NORMS):
        ours = statistics.median(t[i] for t in times[ROOT])
        theirs = statistics.median(t[i] for t in times[other])
        print(f"{norm or 'plain':6s} this tree {ours:5.2f} s, {other} {theirs:5.2f} s, "
              f"theirs / ours = {theirs / ours:.2f}")  # fmt: skip
    assert same, digests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebook", action="store_true", help="also execute notebooks/04")
    parser.add_argument("--against", type=Path, help="a checkout of another commit to time")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (--against)")
    args = parser.parse_args()
    if args.against:
        against(args.against.resolve(), args.rounds)
        return
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

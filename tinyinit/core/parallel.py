"""A thread pool sized by the CPUs this process may really use, for the draws' blocks.

numpy releases the interpreter inside its array arithmetic, so the blocks of a
large draw (`tinyinit.core.distributions`) run side by side on threads. On two CPUs,
exact normals come at 0.6 to 0.8 times numpy's speed with two threads and 0.2 to
0.45 times with one: benchmarks/bench_init.py's target, half numpy's speed,
needs the threads.

How many threads: os.cpu_count() counts the machine's CPUs, not the ones a
container, a taskset or a batch scheduler lets us run on, and threads beyond
those only queue. So the pool has `usable_cpus()` threads: the affinity mask,
capped by a cgroup v2 CPU quota.

Fork-safe: a forked child (a multiprocessing worker, a grading job) inherits the
pool object but none of its threads, so work handed to it would wait for ever. At
a fork the child forgets the pool (`os.register_at_fork`) and makes its own on
first use.

>>> run_all(abs, [-1, 2, -3])
[1, 2, 3]
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .arguments import function, instance

__all__ = ["cgroup_cpu_quota", "run_all", "usable_cpus", "workers"]

CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")

_pool: ThreadPoolExecutor | None = None


def _forget_the_pool() -> None:
    """In a forked child: the parent's pool has no threads here; the next draw makes one."""
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):  # not on Windows, which does not fork
    os.register_at_fork(after_in_child=_forget_the_pool)


def cgroup_cpu_quota(cpu_max: str) -> float | None:
    """The CPUs a cgroup v2 `cpu.max` line ("quota period") allows, or None if unlimited.

    >>> cgroup_cpu_quota("150000 100000"), cgroup_cpu_quota("max 100000")
    (1.5, None)
    """
    fields = instance("cpu_max", cpu_max, str, "a line of text, as cpu.max holds").split()
    if len(fields) != 2 or fields[0] == "max":
        return None
    try:
        quota, period = int(fields[0]), int(fields[1])
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


def usable_cpus(cpu_max_file: Path = CGROUP_CPU_MAX) -> int:
    """How many CPUs this process may really use: its affinity mask, capped by a container quota.

    The quota rounds up (1.5 CPUs of quota still run 2 threads at once).

    >>> usable_cpus() >= 1
    True
    """
    cpu_max_file = Path(instance("cpu_max_file", cpu_max_file, (str, os.PathLike), "a path"))
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS and Windows have no affinity mask
        cpus = os.cpu_count() or 1
    try:
        quota = cgroup_cpu_quota(cpu_max_file.read_text())
    except OSError:
        quota = None
    if quota is not None:
        cpus = min(cpus, math.ceil(quota))
    return max(cpus, 1)


def workers() -> ThreadPoolExecutor:
    """The package's thread pool, made on first use with `usable_cpus()` threads.

    >>> workers() is workers()
    True
    """
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=usable_cpus(), thread_name_prefix="tinyinit")
    return _pool


def run_all(task: Callable, items: Iterable) -> list:
    """[task(item) for item in items], on the pool's threads when there is more than one item.

    A single task runs in the calling thread: no hand-over for a small draw.

    >>> run_all(len, ["ab", "c"])
    [2, 1]
    """
    task = function("task", task)
    if isinstance(items, (str, bytes)) or not hasattr(items, "__iter__"):
        instance("items", items, list, "an iterable of the tasks' arguments")
    items = list(items)
    if len(items) > 1:
        return list(workers().map(task, items))
    return [task(item) for item in items]

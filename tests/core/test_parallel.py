"""The draws' thread pool: as many threads as CPUs this process may use, and the same
results as one thread."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import re
import signal
import threading
import time

import pytest

from tinyinit import PCG32, normal
from tinyinit.core import parallel
from tinyinit.core.arguments import KindError
from tinyinit.core.distributions import PAIRS_PER_BLOCK
from tinyinit.core.parallel import cgroup_cpu_quota, run_all, usable_cpus


def test_a_cgroup_quota_caps_the_threads(tmp_path, monkeypatch):
    assert cgroup_cpu_quota("max 100000") is None
    assert cgroup_cpu_quota("200000 100000") == 2.0
    assert cgroup_cpu_quota("garbage") is None
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text("150000 100000\n")
    assert usable_cpus(cpu_max) == 2  # 1.5 CPUs of quota: two threads run at once
    cpu_max.write_text("max 100000\n")
    assert usable_cpus(cpu_max) == 4  # no quota: the affinity mask
    assert usable_cpus(tmp_path / "absent") == 4
    cpu_max.write_text("50000 100000\n")
    assert usable_cpus(cpu_max) == 1


def test_a_quota_line_that_is_not_two_positive_integers_is_no_quota():
    assert cgroup_cpu_quota("100000") is None  # one field
    assert cgroup_cpu_quota("100000 100000 1") is None
    assert cgroup_cpu_quota("0 100000") is None
    assert cgroup_cpu_quota("100000 0") is None
    assert cgroup_cpu_quota("1 100000") == 1e-5  # the smallest quota is still a quota
    assert cgroup_cpu_quota("1 1") == 1.0


def test_a_quota_line_or_file_of_the_wrong_kind_is_refused_in_the_packages_words():
    with pytest.raises(
        KindError, match=r"^cpu_max must be a line of text, as cpu\.max holds, got 100000$"
    ):
        cgroup_cpu_quota(100000)
    with pytest.raises(KindError, match=r"^cpu_max_file must be a path, got 3$"):
        usable_cpus(3)


def test_run_all_refuses_a_task_or_items_of_the_wrong_kind_in_the_packages_words():
    with pytest.raises(KindError, match=r"^task must be a callable, got 3$"):
        run_all(3, [1])
    words = "items must be an iterable of the tasks' arguments, got "
    for items in ("ab", b"ab", 5):  # a string is an iterable, but of characters
        with pytest.raises(KindError, match=f"^{re.escape(words + repr(items))}$"):
            run_all(len, items)


def test_a_single_task_runs_in_the_calling_thread_and_several_on_the_pool():
    me = threading.get_ident()
    assert run_all(lambda _: threading.get_ident(), [0]) == [me]  # no hand-over for one
    assert me not in run_all(lambda _: threading.get_ident(), range(4))


def test_without_an_affinity_mask_the_cpu_count_is_used(tmp_path, monkeypatch):
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)  # as on macOS and Windows
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    assert usable_cpus(tmp_path / "absent") == 3
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # "undetermined"
    assert usable_cpus(tmp_path / "absent") == 1


def test_the_pool_has_a_thread_per_usable_cpu_named_after_the_package(monkeypatch):
    monkeypatch.setattr(parallel, "_pool", None)  # a new pool, shut down below
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 3)
    pool = parallel.workers()
    try:
        assert pool._max_workers == 3 and parallel.workers() is pool
        assert pool.submit(lambda: threading.current_thread().name).result().startswith("tinyinit")
    finally:
        pool.shutdown()


def test_run_all_keeps_the_order_of_the_items_on_one_thread_or_many():
    assert run_all(lambda k: k * k, range(7)) == [0, 1, 4, 9, 16, 25, 36]
    assert run_all(lambda k: k, [5]) == [5] and run_all(lambda k: k, []) == []


def test_a_draw_over_several_blocks_is_the_same_on_one_thread(monkeypatch):
    n = 4 * PAIRS_PER_BLOCK + 3
    threaded = normal(PCG32(8), n)

    class OneThread:
        map = staticmethod(map)

    monkeypatch.setattr(parallel, "workers", lambda: OneThread)
    assert normal(PCG32(8), n).tobytes() == threaded.tobytes()


# --- a forked child: its own pool ------------------------------------------------------------

FORK_TIME_LIMIT = 60.0  # seconds; the child's draw takes well under one on two busy CPUs


def run_in_a_forked_child(child, time_limit: float = FORK_TIME_LIMIT) -> bytes:
    """Fork, run child() -> a few bytes in the child and give back what it wrote (less than a
    pipe holds, as it is read once the child is done); fail the test if the child has not
    finished within time_limit seconds (it is killed, not waited for)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        status = 1
        try:
            os.close(read_end)
            os.write(write_end, child())
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    deadline = time.monotonic() + time_limit
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read_end)
            pytest.fail(f"the forked child did not finish its draw within {time_limit:g} s")
        time.sleep(0.02)
    with os.fdopen(read_end, "rb") as pipe:
        written = pipe.read()
    assert os.waitstatus_to_exitcode(status) == 0, "the child failed"
    return written


@pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning")  # Python 3.12 on threads
def test_a_forked_child_draws_after_the_parents_pool_started():
    n = 10**6  # several blocks: the draw goes to the pool
    expected = normal(PCG32(0), n)
    assert parallel._pool is not None  # the parent's pool and its threads are running
    digest = run_in_a_forked_child(lambda: hashlib.sha256(normal(PCG32(0), n)).digest())
    assert digest == hashlib.sha256(expected).digest()  # the same numbers, from its own pool


@pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning")
def test_a_multiprocessing_fork_worker_draws_too():
    normal(PCG32(1), 10**6)  # the parent's pool is running
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as workers:
        result = workers.map_async(_draw_sum, [1, 2])
        sums = result.get(timeout=FORK_TIME_LIMIT)  # a TimeoutError if a worker hangs
    assert sums == [_draw_sum(1), _draw_sum(2)]


def _draw_sum(seed: int) -> float:
    return float(normal(PCG32(seed), 3 * PAIRS_PER_BLOCK).sum())


def test_the_child_forgets_the_pool_and_makes_its_own_on_first_use():
    parallel.workers()
    parallel._forget_the_pool()  # what os.register_at_fork runs in a child
    assert parallel._pool is None
    assert run_all(abs, [-1, -2]) == [1, 2] and parallel._pool is not None

"""The draws' thread pool: as many threads as CPUs this process may use, and the same
results as one thread."""

from __future__ import annotations

import os
import threading

from tinyinit import PCG32, normal, parallel
from tinyinit.distributions import PAIRS_PER_BLOCK
from tinyinit.parallel import cgroup_cpu_quota, run_all, usable_cpus


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

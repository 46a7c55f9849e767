"""One student of `make bench-classroom`, on one JupyterLab: the benchmark still measures.

The benchmark sizes a server for a class, and runs only when someone does (about
40 minutes, a hub and its proxy); here one student does what each does there, from
a folder filled as each home is: runs notebook 03, finds its explorer and moves the
depth slider a few times. A notebook that stops in a student's folder, or an explorer
the page no longer draws as the benchmark looks for it, fails here.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
MOVES = 4


def load_benchmark(name: str):
    """benchmarks/<name>.py, imported once under its own name (dataclasses look it up there)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_one_student_of_the_classroom_benchmark_measures_each_move(browser, tmp_path):
    bench = load_benchmark("bench_classroom")
    result = bench.rehearse(browser, tmp_path, moves=MOVES)
    student = result.student
    assert student.errors == [] and student.ready, student.errors
    assert list(student.steps) == ["open notebook", "run all cells"]
    # every move brought a new plot on screen, after the key press
    assert student.lost == 0 and len(student.samples) == MOVES
    for sample in student.samples:
        assert 0 < sample["redraw"] <= sample["on screen"] < 15_000, sample
        assert sample["draws"] >= 1, sample
    for figure in ("kernel_rss_mb", "kernel_uss_mb", "server_rss_mb", "server_uss_mb"):
        assert getattr(result, figure) > 10, (figure, result)
    assert result.kernel_uss_mb <= result.kernel_rss_mb
    assert 0 < result.cpu_per_move_ms and math.isfinite(result.cpu_per_move_ms), result

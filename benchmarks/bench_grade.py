"""What grading a class costs: `python -m tinyinit grade` on 30 submissions, several checks at
once, against the same 30 checked one after another.

    python benchmarks/bench_grade.py              # 3 rounds
    python benchmarks/bench_grade.py --rounds 5 --students 30

The class: a third the teacher's solution (all eleven tests pass), a third with fan_in and
fan_out swapped (pitfall s01), a third the student edition's stubs. Each round grades it twice,
as `grade --jobs 1` (one check after another, the peer) and as `grade` (as many at once as the
CPUs this process may use), in alternating order; the figure is the whole command's wall
clock, the median over the rounds, and the median ratio one-by-one / at once.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEACHER = ROOT / "notebooks" / "my_init.py"


def student_edition(source: str) -> str:
    spec = importlib.util.spec_from_file_location(
        "make_student", ROOT / "scripts" / "make_student.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.fill_solutions(source, module.CODE_STUB)


def make_class(folder: Path, students: int) -> Path:
    solution = TEACHER.read_text()
    swapped = solution.replace(
        "fan_in, fan_out = shape[1] * r, shape[0] * r",
        "fan_in, fan_out = shape[0] * r, shape[1] * r",
    )
    assert swapped != solution, "the line to swap is no longer in the teacher's file"
    kinds = [solution, swapped, student_edition(solution)]
    submitted = folder / "submitted"
    for i in range(students):
        path = submitted / f"student{i:02d}" / "ps1" / "my_init.py"
        path.parent.mkdir(parents=True)
        path.write_text(kinds[i % 3])
    return submitted


def seconds(submitted: Path, out: Path, jobs: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "tinyinit", "grade", str(submitted), "--out", str(out), *jobs],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--students", type=int, default=30)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        submitted = make_class(Path(tmp), args.students)
        together, one_by_one = [], []
        for round_ in range(args.rounds):
            order = (True, False) if round_ % 2 == 0 else (False, True)
            for at_once in order:
                jobs = [] if at_once else ["--jobs", "1"]
                took = seconds(submitted, Path(tmp) / f"out{round_}{at_once}", jobs)
                (together if at_once else one_by_one).append(took)
    ratios = sorted(o / t for o, t in zip(one_by_one, together))
    print(
        f"grade of {args.students} submissions: at once {statistics.median(together):.1f} s, "
        f"one by one {statistics.median(one_by_one):.1f} s; one-by-one / at once median "
        f"{statistics.median(ratios):.2f} (min {ratios[0]:.2f}, max {ratios[-1]:.2f}), "
        f"{args.rounds} rounds"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

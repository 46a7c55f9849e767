"""What the sandbox costs a check: `check_init` on a correct file, in the sandbox and not.

    python benchmarks/bench_check.py              # 7 rounds
    python benchmarks/bench_check.py --rounds 11

Each round checks the teacher's `notebooks/my_init.py` (all eleven tests pass) twice in this
process, once with its student's process inside bubblewrap and once as a plain process, in
alternating order, so that a machine that slows down slows both. The figure is the wall-clock
time of the whole check (the student's processes' starts, the eleven tests, the verdict), the
median over the rounds, and the median of the ratio sandbox / plain: the target is under 1.5.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from tinyinit.course.checker import check_init
from tinyinit.course.sandbox import find_sandbox

SOLUTION = Path(__file__).resolve().parent.parent / "notebooks" / "my_init.py"


def seconds(sandbox: bool) -> float:
    start = time.perf_counter()
    report = check_init(SOLUTION, sandbox=sandbox)
    elapsed = time.perf_counter() - start
    if not report.ok:
        raise SystemExit(f"the reference file did not pass:\n{report}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    found = find_sandbox()
    if not found:
        print(f"no sandbox here: {found.reason}", file=sys.stderr)
        return 2
    seconds(True), seconds(False)  # warm the file cache for both sides
    boxed, plain = [], []
    for round_ in range(args.rounds):
        order = (True, False) if round_ % 2 == 0 else (False, True)
        for sandbox in order:
            (boxed if sandbox else plain).append(seconds(sandbox))
    ratios = sorted(b / p for b, p in zip(boxed, plain))
    print(
        f"check of a correct file: sandbox {statistics.median(boxed):.2f} s, plain "
        f"{statistics.median(plain):.2f} s; sandbox / plain median "
        f"{statistics.median(ratios):.2f} (min {ratios[0]:.2f}, max {ratios[-1]:.2f}), "
        f"{args.rounds} rounds"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

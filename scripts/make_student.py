"""`make student`: write the student edition of notebooks/ into student/ (or --output).

    python scripts/make_student.py                    # notebooks/ -> student/
    python scripts/make_student.py --output /tmp/hw   # elsewhere

The edition is tinyinit.course.student_edition's, the one `python -m tinyinit student DIR`
writes from the installed package; this script is its caller from the repository, and
offers that module's names to the scripts and tests that read the edition's rules.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tinyinit.course.student_edition import *  # noqa: F403 (the edition's rules, by name)
from tinyinit.course.student_edition import WouldOverwrite, edition_summary, make_student

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--notebooks", type=Path, default=ROOT / "notebooks", help="folder of teacher notebooks"
    )
    parser.add_argument("--output", type=Path, default=ROOT / "student", help="folder to write")
    parser.add_argument(
        "--force", action="store_true", help="write over files a student has changed"
    )
    args = parser.parse_args(argv)
    try:
        written = make_student(args.notebooks, args.output, force=args.force)
    except WouldOverwrite as error:
        print(
            f"make_student: output: {error}. Open it with `make student-lab`, or move it "
            "away, or write the edition anew over it with --force (make student FORCE=1)",
            file=sys.stderr,
        )
        return 1
    print(edition_summary(args.notebooks, args.output, written))
    return 0


if __name__ == "__main__":
    sys.exit(main())

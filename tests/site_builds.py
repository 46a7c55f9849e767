"""The course site's two editions as `make site` builds them from the committed notebooks, each
built once for a whole run of the tests and shared by its processes: the first to ask builds it
under a lock, the others wait for it; the tests read them and never write."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The teacher's edition is built as `make site EDITION=teacher REPO=... HUB=...` builds it,
# with launch buttons for these.
REPOSITORY = "https://github.com/example-university/tinyinit"
HUB = "https://hub.example-university.org"
TEACHER = ("--edition", "teacher", "--repository", REPOSITORY, "--hub", HUB)


def built_once(tmp_path_factory, name: str, options: tuple[str, ...] = ()) -> Path:
    """scripts/build_site.py with `options`, built into the run's folder `name` unless it is
    there already; the site's folder."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, above each process's own
    folder = shared / name
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "built").exists():
            shutil.rmtree(folder, ignore_errors=True)
            build = subprocess.run(
                [sys.executable, str(ROOT / "scripts" / "build_site.py"), "--quiet", *options]
                + ["--output", str(folder / "site"), "--work", str(folder / "work")],
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert build.returncode == 0, build.stdout + build.stderr
            (folder / "built").touch()
    return folder / "site"

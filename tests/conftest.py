"""Shared test set-up: browser tests run where Chromium is, and are required in CI."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from site_builds import TEACHER, built_once

ROOT = Path(__file__).resolve().parent.parent

# $TINYINIT_CHROMIUM picks another Chromium (or hides it: TINYINIT_CHROMIUM=/nonexistent).
CHROMIUM = os.environ.get("TINYINIT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None if Chromium is there."""
    if os.path.exists(CHROMIUM):
        return None
    return (
        f"no Chromium at {CHROMIUM}: `apt-get install -y chromium` "
        "(as .ci/run does) to run the browser tests"
    )


def browser_required() -> bool:
    return os.environ.get("TINYINIT_REQUIRE_BROWSER") == "1"


_MISSING = pytest.StashKey[str]()


# The doors test's quick pass gives each argument an object of no kind, the first of the
# exhaustive pass's bad values: where both are to run, the exhaustive pass alone does (the
# quick pass is there for runs without it, as `make mutation`'s).
QUICK_DOORS = "test_an_object_of_no_kind_is_refused_naming_each_argument"
EXHAUSTIVE_DOORS = "test_every_bad_argument_is_refused_in_the_packages_words_and_nothing_else"


# The files that take longest in `make test`, longest first: its processes are handed whole
# files in the order collected (`--dist loadfile --no-loadscope-reorder`), and these go first,
# so that the last file to start is a short one and no process keeps running long after the
# others have finished. Seconds each took with three processes on two cores (--durations=0),
# the minutes' worth of files; the rest follow in their own order.
LONGEST_FIRST = [
    "tests/test_student.py",  # 480 s
    "tests/browser/test_accessibility.py",  # 360 s
    "tests/browser/test_present.py",  # 195 s
    "tests/browser/test_present_pairs.py",  # 150 s
    "tests/present/test_present.py",  # 140 s
    "notebooks/13_when_init_stops_mattering.ipynb",  # 135 s
    "tests/test_nbgrader.py",  # 120 s
    "tests/test_every_argument.py",  # 105 s
    "tests/views/test_live_training.py",  # 105 s
    "tests/test_cli.py",  # 90 s
    "tests/course/test_sandbox.py",  # 70 s
    "notebooks/11_training_in_depth.ipynb",  # 70 s
    "tests/test_site.py",  # 70 s
    "tests/course/test_grading.py",  # 65 s
    "tests/test_student_install.py",  # 65 s
    "tests/test_core_install.py",  # 65 s
    "tests/browser/test_lab_explorer.py",  # 60 s
    "tests/views/test_explorers.py",  # 60 s
    "tests/course/test_checker.py",  # 55 s
    "tests/browser/test_site.py",  # 55 s
    "tests/course/test_inventory_sittings.py",  # 50 s
    "tests/test_packaging.py",  # 45 s
    "tests/browser/test_lab_training.py",  # 45 s
    "tests/browser/test_classroom_bench.py",  # 35 s
    "tests/browser/test_lab_sliders.py",  # 35 s
    "tests/views/test_projector.py",  # 35 s
    "tests/test_student_lab.py",  # 35 s
    "tests/core/test_distributions.py",  # 30 s
    "notebooks/12_one_layer_measured.ipynb",  # 30 s
]


def longest_first(items: list) -> None:
    """Reorder `items` in place: LONGEST_FIRST's files first, in its order, then the rest in
    theirs; each file's tests keep their order."""
    gone = [path for path in LONGEST_FIRST if not (ROOT / path).is_file()]
    if gone:
        raise pytest.UsageError(f"tests/conftest.py: LONGEST_FIRST names no file at {gone}")
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


@pytest.hookimpl(trylast=True)  # after -m has deselected what it will
def pytest_collection_modifyitems(config, items):
    if os.environ.get("PYTEST_XDIST_WORKER"):  # one process alone runs the files as found
        longest_first(items)
    names = {getattr(item, "originalname", None) for item in items}
    if EXHAUSTIVE_DOORS in names and QUICK_DOORS in names:
        quick = [item for item in items if getattr(item, "originalname", None) == QUICK_DOORS]
        config.hook.pytest_deselected(items=quick)
        left_out = set(map(id, quick))
        items[:] = [item for item in items if id(item) not in left_out]
    reason = browser_missing()
    if reason is None:
        return
    for item in items:
        if "browser" in item.keywords:
            if browser_required():
                item.stash[_MISSING] = reason
            else:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(autouse=True)
def _browser_required(request):
    if _MISSING in request.node.stash:
        pytest.fail(f"TINYINIT_REQUIRE_BROWSER=1 but {request.node.stash[_MISSING]}")


@pytest.fixture(scope="session")
def sandbox():
    """bubblewrap's sandbox for the checker; skips where none can be made, unless
    TINYINIT_REQUIRE_SANDBOX=1 (CI, a grading machine), where that fails instead."""
    from tinyinit.course.checker import grading
    from tinyinit.course.sandbox import find_sandbox

    found = find_sandbox()
    if not found:
        if grading():
            pytest.fail(f"TINYINIT_REQUIRE_SANDBOX=1 but {found.reason}")
        pytest.skip(found.reason)
    return found


@pytest.fixture(scope="session")
def chromium() -> str:
    """The Chromium executable; skips (or, if required, fails) where there is none.

    Session fixtures that start servers depend on this one first, so that a
    missing browser is reported before anything slow begins.
    """
    reason = browser_missing()
    if reason is not None:
        if browser_required():
            pytest.fail(f"TINYINIT_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    return CHROMIUM


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The course site as `make site` builds it (the student edition, no repository or hub),
    from the committed notebooks: built once for the whole run (tests/site_builds.py), and
    read, never written, by the tests of the site's files and the browser's."""
    return built_once(tmp_path_factory, "built-site")


@pytest.fixture(scope="session")
def built_teacher_site(tmp_path_factory) -> Path:
    """`make site EDITION=teacher REPO=... HUB=...` (site_builds.TEACHER), built once for the
    whole run as built_site is: read by the tests of the site's files and the browser's."""
    return built_once(tmp_path_factory, "built-teacher-site", TEACHER)

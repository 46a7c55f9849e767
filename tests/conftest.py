"""Shared test set-up: browser tests run where Chromium is, and are required in CI."""

from __future__ import annotations

import os
import shutil

import pytest

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


def pytest_collection_modifyitems(config, items):
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

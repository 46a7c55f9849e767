"""Shared test set-up: browser tests run where Chromium is, and are required in CI."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def pytest_collection_modifyitems(config, items):
    if os.path.exists(CHROMIUM):
        return
    if os.environ.get("TINYINIT_REQUIRE_BROWSER") == "1":
        marker = pytest.mark.fail_browser
    else:
        marker = pytest.mark.skip(
            reason="no Chromium at /usr/bin/chromium: `apt-get install -y chromium` "
            "(as .ci/run does) to run the browser tests"
        )
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(marker)


@pytest.fixture(autouse=True)
def _browser_required(request):
    if request.node.get_closest_marker("fail_browser"):
        pytest.fail(
            "TINYINIT_REQUIRE_BROWSER=1 but /usr/bin/chromium is missing: "
            "`apt-get install -y chromium`"
        )

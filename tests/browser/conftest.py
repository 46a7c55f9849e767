"""One JupyterLab, one site server, one Voila app and one Chromium for all browser tests (of
a test process), a Voila of its own for each module of the presentation's tests, a fresh
browser context per test."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from .lab import ConsoleLog, free_port, launch_chromium, start_lab

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


@pytest.fixture(scope="session")
def lab_server(chromium, tmp_path_factory):
    """`jupyter lab` serving a scratch copy of notebooks/, so runs never touch the originals."""
    root = tmp_path_factory.mktemp("lab") / "notebooks"
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    server = start_lab(root)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser(chromium):
    """Chromium for the whole session: each test opens its own context (cookies, storage), so
    nothing carries over, and a launch per module (about 3 s with Playwright's start and stop)
    is saved. A module must not run `with sync_playwright()` on its own beside it."""
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    browser = launch_chromium(playwright, chromium)
    yield browser
    browser.close()
    playwright.stop()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.stash[_FAILED] = report.failed
    return report


_FAILED = pytest.StashKey[bool]()


@pytest.fixture
def page(request, browser, lab_server, tmp_path):
    """A new browser page with its own cookies and storage; on failure, a screenshot and log."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(30_000)
    page = context.new_page()
    yield page
    if request.node.stash.get(_FAILED, False):
        shot = tmp_path / "failure.png"
        try:
            page.screenshot(path=shot, full_page=True)
            print(f"\nscreenshot of the page at failure: {shot}")
        except Exception as error:  # a crashed page must not hide the test's own failure
            print(f"\nno screenshot of the page at failure: {error}")
        print(f"end of the jupyter lab log ({lab_server.log_path}):\n{lab_server.log_tail()}")
    context.close()
    lab_server.shutdown_kernels()  # each test starts from no kernels


@pytest.fixture
def console(page) -> ConsoleLog:
    """The page's console errors and uncaught exceptions, collected from the start."""
    return ConsoleLog(page)


@pytest.fixture
def external_requests(page) -> list[str]:
    """URLs the page asked for beyond 127.0.0.1: the lesson must work offline."""
    urls: list[str] = []
    page.on(
        "request",
        lambda request: (
            urls.append(request.url)
            if not request.url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:"))
            else None
        ),
    )
    return urls


@contextlib.contextmanager
def serving(folder: Path):
    """A static site served by http.server on 127.0.0.1, for as long as the block runs."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "http.server did not start"
            time.sleep(0.1)
        yield SiteServer(f"http://127.0.0.1:{port}", folder)
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture(scope="session")
def site_server(chromium, built_site):
    """The course site built from the committed notebooks (scripts/build_site.py, as `make site`
    does), served by http.server on 127.0.0.1; shared by the offline and accessibility tests."""
    with serving(built_site) as server:
        yield server


@pytest.fixture(scope="session")
def teacher_site_server(chromium, built_teacher_site):
    """The teacher's edition (`make site EDITION=teacher REPO=... HUB=...`, built once for the
    run as tests/test_site.py reads it), which adds the pages of docs/ and the launch buttons,
    served as site_server serves the student's."""
    with serving(built_teacher_site) as server:
        yield server


@dataclass(frozen=True)
class SiteServer:
    url: str
    root: Path

    def pages(self) -> list[str]:
        """Every HTML page of the site, relative to its root (the notebooks, index, search, and
        on the teacher's edition the pages of docs/)."""
        pages = [*self.root.glob("*.html"), *self.root.glob("docs/**/*.html")]
        return sorted(str(p.relative_to(self.root)) for p in pages)


@pytest.fixture(scope="module")
def voila(chromium, tmp_path_factory):
    """The presentation app's server for one module (tests/browser/test_present*.py), stopped
    at its end and checked gone; asks for `chromium` first, so a missing browser skips before
    it starts."""
    import psutil

    from .test_present import start_voila

    server = start_voila(tmp_path_factory.mktemp("voila"))
    yield server
    processes = [psutil.Process(server.pid), *psutil.Process(server.pid).children(recursive=True)]
    server.stop()
    # Nothing of it is left: neither the server nor any kernel it started.
    _, alive = psutil.wait_procs(processes, timeout=10)
    assert alive == [], f"still running after stop(): {alive}"


@pytest.fixture(scope="session")
def voila_app(chromium, tmp_path_factory):
    """The presentation app as `make present` serves it (Voila on 127.0.0.1)."""
    from .test_present import start_voila

    server = start_voila(tmp_path_factory.mktemp("voila-app"))
    yield server
    server.stop()

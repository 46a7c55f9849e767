"""Offline: the static site and the Voila app typeset their formulas with nothing from the web.

A real Chromium whose every request outside 127.0.0.1 is refused (a route handler aborts
it and notes its URL) opens the site's page of notebook 01, served from a fresh
`build_site.py` output, and the presentation app as `make present` serves it. Each must show
typeset formulas, no raw `$...$`, and must not have asked for anything it was refused.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.browser.lab import free_port
from tests.browser.test_present import start_voila

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ("127.0.0.1",)
# Raw TeX a reader would see if MathJax never ran: a $ then a backslash command or a ^/_.
RAW_TEX = re.compile(r"\$[^$\n]{0,80}?(\\[a-zA-Z]+|[\^_])[^$\n]{0,80}?\$")


def refuse_the_web(context) -> list[str]:
    """Abort every request not to 127.0.0.1 (data: and blob: stay in the page); return the list
    the refused URLs are noted in."""
    refused: list[str] = []

    def handle(route):
        url = urlparse(route.request.url)
        if url.scheme in ("data", "blob") or url.hostname in LOCAL:
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort("blockedbyclient")

    context.route("**/*", handle)
    return refused


def prose(page) -> str:
    """The visible text of the Markdown (code may hold $ legitimately: matplotlib labels)."""
    return "\n".join(page.locator(".jp-RenderedMarkdown, .jp-RenderedHTMLCommon").all_inner_texts())


def typeset_count(page) -> int:
    """Formulas MathJax 2 has rendered on the page."""
    return page.locator(".MathJax, .MathJax_CHTML, .MathJax_SVG, mjx-container").count()


def wait_for_typesetting(page, minimum: int, timeout: float = 90.0) -> int:
    deadline = time.monotonic() + timeout
    while True:
        done = page.evaluate(
            "() => !!(window.MathJax && MathJax.Hub && MathJax.Hub.queue"
            " && MathJax.Hub.queue.pending === 0 && MathJax.Hub.queue.running === 0)"
        )
        count = typeset_count(page)
        if done and count >= minimum:
            return count
        if time.monotonic() > deadline:
            raise AssertionError(f"MathJax did not finish: {count} formulas typeset, done={done}")
        time.sleep(0.25)


@pytest.fixture(scope="module")
def site_server(chromium, tmp_path_factory):
    """The site built from the committed notebooks, served by http.server on 127.0.0.1."""
    site = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_site.py"), "--output", str(site)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=site,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        import socket

        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "http.server did not start"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_site_page_of_notebook_01_typesets_formulas_offline(site_server, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    refused = refuse_the_web(context)
    page = context.new_page()
    try:
        page.goto(f"{site_server}/01_variance_of_a_sum.html", wait_until="load")
        count = wait_for_typesetting(page, minimum=50)
        text = prose(page)
        assert "Var(z)" in text or "Var" in text
        assert not RAW_TEX.search(text), RAW_TEX.search(text).group(0)
        # The predict-then-run questions are widgets: the renderer loaded from the site too.
        page.locator(".tinyinit-predict").first.wait_for(timeout=30_000)
        assert refused == [], refused
        print(f"site page of 01: {count} formulas typeset, 0 requests refused")
    finally:
        context.close()


def test_site_index_typesets_formulas_offline(site_server, browser):
    context = browser.new_context()
    refused = refuse_the_web(context)
    page = context.new_page()
    try:
        page.goto(f"{site_server}/index.html", wait_until="load")
        wait_for_typesetting(page, minimum=5)
        assert not RAW_TEX.search(page.locator("body").inner_text())
        assert refused == [], refused
    finally:
        context.close()


@pytest.fixture(scope="module")
def voila(chromium, tmp_path_factory):
    server = start_voila(tmp_path_factory.mktemp("voila"))
    yield server
    server.stop()


def test_voila_app_typesets_formulas_offline(voila, browser):
    context = browser.new_context(viewport={"width": 1600, "height": 1200})
    refused = refuse_the_web(context)
    page = context.new_page()
    try:
        page.goto(voila.url, timeout=120_000)
        page.locator(".tinyinit-present").wait_for(timeout=120_000)
        count = wait_for_typesetting(page, minimum=3)
        text = prose(page)
        assert "Behind every demonstration, one rule" in text  # the Markdown below the app
        assert not RAW_TEX.search(text), RAW_TEX.search(text).group(0)
        # Icons come from the app's own Font Awesome: its stylesheet loaded from 127.0.0.1.
        assert page.evaluate(
            "() => [...document.styleSheets].some(s => (s.href || '').includes('fontawesome'))"
        )
        assert refused == [], refused
        print(f"voila app: {count} formulas typeset, 0 requests refused")
    finally:
        context.close()

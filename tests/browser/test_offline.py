"""Offline: the site typesets its formulas and the Voila app works, with nothing from the web.

A real Chromium whose every request outside 127.0.0.1 is refused (a route handler aborts
it and notes its URL) opens the course site (a fresh `build_site.py` output: Sphinx,
MyST-NB, sphinx-book-theme) and the presentation app as `make present` serves it. Pages
must show typeset formulas and no raw `$...$`, the stored widgets rendered, the search
answering a query, and must not have asked for anything they were refused.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

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
    markdown = ".jp-RenderedMarkdown, .jp-RenderedHTMLCommon, article.bd-article section > p"
    return "\n".join(page.locator(markdown).all_inner_texts())


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


def test_site_page_of_notebook_01_typesets_formulas_offline(site_server, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    refused = refuse_the_web(context)
    page = context.new_page()
    try:
        page.goto(f"{site_server.url}/01_variance_of_a_sum.html", wait_until="load")
        count = wait_for_typesetting(page, minimum=50)
        text = prose(page)
        assert "Var" in text
        assert not RAW_TEX.search(text), RAW_TEX.search(text).group(0)
        # The predict-then-run questions are widgets: the renderer loaded from the site too.
        page.locator(".tinyinit-predict").first.wait_for(timeout=30_000)
        assert refused == [], refused
        print(f"site page of 01: {count} formulas typeset, 0 requests refused")
    finally:
        context.close()


def test_site_page_of_notebook_03_shows_the_explorer_offline(site_server, browser):
    # The explorer's stored picture, with its text alternative, and the page's other widgets.
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    refused = refuse_the_web(context)
    page = context.new_page()
    try:
        page.goto(f"{site_server.url}/03_signal_through_depth.html", wait_until="load")
        wait_for_typesetting(page, minimum=10)
        picture = page.locator("figure.tinyinit-stored-picture img")
        picture.wait_for(timeout=30_000)
        assert picture.evaluate("e => e.complete && e.naturalWidth > 100")
        assert "layer 20:" in picture.get_attribute("alt")
        page.locator(".tinyinit-predict").first.wait_for(timeout=30_000)
        assert page.locator(".jupyter-widgets-error-widget").count() == 0
        assert refused == [], refused
    finally:
        context.close()


def test_site_index_typesets_formulas_offline(site_server, browser):
    context = browser.new_context()
    refused = refuse_the_web(context)
    page = context.new_page()
    try:
        page.goto(f"{site_server.url}/index.html", wait_until="load")
        wait_for_typesetting(page, minimum=5)
        assert not RAW_TEX.search(page.locator("article").inner_text())
        assert refused == [], refused
    finally:
        context.close()


def test_site_search_answers_a_query_offline(site_server, browser):
    context = browser.new_context()
    refused = refuse_the_web(context)
    page = context.new_page()
    try:
        page.goto(f"{site_server.url}/search.html?q=kaiming", wait_until="load")
        results = page.locator("#search-results ul.search li a")
        results.first.wait_for(timeout=30_000)
        found = {(a.get_attribute("href") or "").split("?")[0] for a in results.all()}
        assert "03_signal_through_depth.html" in found, found
        assert refused == [], refused
    finally:
        context.close()


def test_voila_app_works_offline(voila_app, browser):
    context = browser.new_context(viewport={"width": 1600, "height": 1200})
    refused = refuse_the_web(context)
    page = context.new_page()
    try:
        page.goto(voila_app.url, timeout=120_000)
        page.locator(".tinyinit-present").wait_for(timeout=120_000)
        # The rule under the plot is the app's own text (no formula left for MathJax).
        rule = page.locator(".tinyinit-rule").inner_text()
        assert rule.startswith("One rule:") and "σ²" in rule
        assert not RAW_TEX.search(rule)
        # Icons come from the app's own Font Awesome: its stylesheet loaded from 127.0.0.1.
        assert page.evaluate(
            "() => [...document.styleSheets].some(s => (s.href || '').includes('fontawesome'))"
        )
        assert refused == [], refused
    finally:
        context.close()

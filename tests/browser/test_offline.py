"""Offline: the site typesets its formulas and the Voila app works, with nothing from the web.

A real Chromium whose every request outside 127.0.0.1 is refused (a route handler aborts
it and notes its URL) opens the course site (a fresh `build_site.py` output: Sphinx,
MyST-NB, sphinx-book-theme) and the presentation app as `make present` serves it. Pages
must show typeset formulas and no raw `$...$`, the stored widgets rendered, the search
answering a query, and must not have asked for anything they were refused.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.browser.lab import wait_for_mathjax

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
    """Formulas MathJax has rendered on the page (MathJax 3's containers)."""
    return page.locator("mjx-container").count()


def wait_for_typesetting(page, minimum: int, timeout: float = 90.0) -> int:
    wait_for_mathjax(page, timeout=timeout)
    count = typeset_count(page)
    assert count >= minimum, f"MathJax typeset {count} formulas, fewer than {minimum}"
    return count


def test_site_page_of_notebook_01_typesets_formulas_offline(site_server, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    refused = refuse_the_web(context)
    page = context.new_page()
    try:
        url = f"{site_server.url}/01_variance_of_a_sum.html"
        # Every formula the page holds (MyST writes each as a span or div of class "math").
        written = len(re.findall(r'class="math[ "]', page.request.get(url).text()))
        assert written >= 20, written
        page.goto(url, wait_until="load")
        count = wait_for_typesetting(page, minimum=written)
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


def test_a_widgets_formula_is_typeset_when_the_widget_renderer_asks(site_server, browser):
    # The widget renderer asks MathJax 2's way, MathJax.Hub.Queue(["Typeset", MathJax.Hub,
    # element]), as it draws a widget, before the widget is in the page: before MathJax has
    # loaded (it is deferred), once it has put its own object in window.MathJax but is not
    # ready (it waits for ui/safe.js, held back here), or after. MathJax 3 typesets each.
    context = browser.new_context()
    page = context.new_page()
    mathjax = re.compile(r"/_static/mathjax/tex-svg-full\.js(\?.*)?$")
    safe = re.compile(r"/_static/mathjax/ui/safe\.js(\?.*)?$")
    held = []
    try:
        page.route(mathjax, lambda route: route.abort())  # held back: the config alone
        page.route(safe, lambda route: held.append(route))
        page.goto(f"{site_server.url}/index.html", wait_until="load")
        ask = """text => {
            const widget = document.createElement('div');
            widget.className = 'jupyter-widgets';
            widget.textContent = text;
            (window.asked = window.asked || []).push(widget);
            MathJax.Hub.Queue(['Typeset', MathJax.Hub, widget]);
        }"""
        page.evaluate(ask, "before: $a^2 + b^2$")
        assert typeset_count(page) == 0
        page.unroute(mathjax)
        page.add_script_tag(url="_static/mathjax/tex-svg-full.js")
        page.wait_for_function("() => MathJax.version && MathJax.startup", timeout=30_000)
        for _ in range(100):  # MathJax has started and asks for ui/safe.js, held back
            if held:
                break
            page.wait_for_timeout(100)
        assert len(held) == 1 and page.evaluate("() => typeof MathJax.typesetPromise") != "function"
        page.evaluate(ask, "between: $e^{i\\pi}$")
        assert typeset_count(page) == 0
        held[0].continue_()
        wait_for_mathjax(page, timeout=60)
        assert page.evaluate("() => MathJax.startup.document.options.safeOptions") is not None
        page.evaluate(ask, "after: $\\sqrt{2}$")
        wait_for_mathjax(page, timeout=60)
        # Put in the page only now: what MathJax typeset of the page itself did not reach them.
        page.evaluate("() => window.asked.forEach(w => w.classList.add('asked')"
                      " || document.querySelector('main').append(w))")  # fmt: skip
        asked = page.locator(".asked")
        assert asked.count() == 3 and typeset_count(page) > 3
        for k in range(3):
            assert asked.nth(k).locator("mjx-container").count() == 1, asked.nth(k).inner_html()
            assert "$" not in asked.nth(k).inner_text()
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

"""The course site in a real Chromium, at a phone's width (390x844) and a projector's (1280x720):
the sidebar and contents buttons open their panels, which close once a link in them is tapped;
tap targets of 44 px; figures whose labels stay legible on the phone; one search box, search
snippets from the page's own text, in words rather than TeX; and a live explorer shown as its
stored picture. That no page is wider than the phone is held with its accessibility
(tests/browser/test_accessibility.py: WCAG's reflow).
"""

from __future__ import annotations

import base64
import re
import struct
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tinyinit.views.style import TICK_FONTSIZE

from . import test_accessibility as a11y
from .test_accessibility import THEME_RULES, THEMES, failing, run_axe, set_theme, settle

axe_source = a11y.axe_source  # axe-core's script, the fixture the accessibility tests use

pytestmark = pytest.mark.browser

PHONE, DESKTOP = (390, 844), (1280, 720)
PAGE = "03_signal_through_depth"
TEX = re.compile(r"\\[a-zA-Z]+|\\\(|\\\)|\\\[|\$\$")


def open_page(browser, site_server, name: str, size: tuple[int, int]):
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    page.goto(f"{site_server.url}/{name}.html", wait_until="load")
    return context, page


# The links under a selector that a reader sees: displayed, and inside the window.
LINKS_IN_VIEW = """s => [...document.querySelectorAll(s + ' a')].filter(a => {
  const r = a.getBoundingClientRect();
  return a.checkVisibility() && r.width > 0 && r.right > 0 && r.left < window.innerWidth
    && r.bottom > 0 && r.top < window.innerHeight;
}).length"""


def visible_links(page, selector: str) -> int:
    return page.evaluate(LINKS_IN_VIEW, selector)


def wait_for_links(page, selector: str, at_least: int = 1, none: bool = False) -> None:
    """Wait until at least `at_least` links under `selector` are in view (or, `none`, no link)."""
    test = f"({LINKS_IN_VIEW})(s) " + ("=== 0" if none else f">= {at_least}")
    page.wait_for_function(f"s => {test}", arg=selector, timeout=10_000)


# The theme's header holds toggles of its own, hidden, first in the page, when it has anything
# else to show (its default configuration puts a search box there): the upstream bug's
# configuration. Put there before any script of the page runs, as the theme would render it.
HEADER_TOGGLES = """new MutationObserver((changes, observer) => {
  if (!document.body) return;
  observer.disconnect();
  for (const kind of ["primary-toggle", "secondary-toggle"]) {
    const hidden = document.createElement("button");
    hidden.className = `pst-navbar-icon sidebar-toggle ${kind}`;
    hidden.style.display = "none";
    document.body.prepend(hidden);
  }
}).observe(document, { childList: true, subtree: true });"""


@pytest.mark.parametrize("header", [False, True], ids=["as built", "with the header's toggles"])
def test_the_sidebar_and_contents_buttons_open_their_panels(site_server, browser, header):
    context = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]})
    if header:
        context.add_init_script(HEADER_TOGGLES)
    page = context.new_page()
    page.goto(f"{site_server.url}/{PAGE}.html", wait_until="load")
    try:
        assert page.locator(".primary-toggle").count() == (2 if header else 1)
        for size in (PHONE, DESKTOP):  # the same page, on a phone, then turned into a desktop
            page.set_viewport_size({"width": size[0], "height": size[1]})
            page.wait_for_timeout(300)
            open_both_panels(page, narrow=size == PHONE)
    finally:
        context.close()


def open_both_panels(page, narrow: bool) -> None:
    """Click the sidebar button and the contents button; each opens its panel."""
    # The pointer leaves the buttons first: a tooltip left showing by the last click (the
    # theme's Bootstrap tooltips) would lie over the button to click next.
    page.mouse.move(0, 0)
    page.evaluate("() => document.activeElement?.blur()")  # a focused button keeps its tooltip
    try:
        page.wait_for_function("() => !document.querySelector('.tooltip.show')", timeout=5_000)
    except PlaywrightTimeout:
        # On a loaded machine Bootstrap may show a tooltip whose delay ran out after the
        # pointer left; it says nothing about the buttons this test is for: take it away.
        page.evaluate("() => document.querySelectorAll('.tooltip').forEach(t => t.remove())")
    menu = page.locator(".primary-toggle:visible")
    assert menu.count() == 1
    if narrow:
        # The navigation is in no sidebar on a phone: the button opens it in a dialog.
        assert visible_links(page, ".bd-docs-nav") == 0
        menu.click()
        dialog = page.locator("#pst-primary-sidebar-modal")
        page.wait_for_function("() => document.getElementById('pst-primary-sidebar-modal').open")
        assert visible_links(page, "#pst-primary-sidebar-modal .bd-docs-nav") >= 5
        dialog.get_by_role("link", name=re.compile("residual stream", re.I)).first.wait_for()
        page.keyboard.press("Escape")
        page.wait_for_function("() => !document.getElementById('pst-primary-sidebar-modal').open")
    else:
        # On a wide screen the sidebar is there; the button folds it away and back.
        nav = "#pst-primary-sidebar .bd-docs-nav"
        assert visible_links(page, nav) >= 5
        menu.click()
        wait_for_links(page, nav, none=True)
        menu.click()
        wait_for_links(page, nav, at_least=5)
    contents = page.locator(".secondary-toggle:visible")
    if narrow:  # the page's contents: a button and a dialog on a phone
        contents.click()
        page.wait_for_function("() => document.getElementById('pst-secondary-sidebar-modal').open")
        assert visible_links(page, "#pst-secondary-sidebar-modal") >= 3
        page.keyboard.press("Escape")
        page.wait_for_function("() => !document.getElementById('pst-secondary-sidebar-modal').open")
    else:  # beside the text on a wide screen, no button needed
        assert contents.count() == 0
        assert visible_links(page, "#pst-secondary-sidebar") >= 3


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["390x844", "1280x720"])
def test_there_is_one_search_box(site_server, browser, size):
    context, page = open_page(browser, site_server, "index", size)
    try:
        boxes = page.evaluate(
            "() => [...document.querySelectorAll('.search-button-field, .search-button,"
            " form.bd-search')].filter(e => e.checkVisibility()).length"
        )
        assert boxes == 1
    finally:
        context.close()


def test_search_snippets_read_as_text_not_tex(site_server, browser):
    context, page = open_page(browser, site_server, "index", DESKTOP)
    try:
        # The site's own conversion, as the search page uses it.
        tex = r"weights from \(\mathcal{N}(0, 1)\), std \(\sigma^2 n_{\text{in}}\)"
        converted = page.evaluate(
            "async t => (await import('./_static/tinyinit-site.js')).plainFormulas(t)", tex
        )
        assert converted == "weights from N(0, 1), std σ² n_in"
        page.goto(f"{site_server.url}/search.html?q=standard+normal+weights", wait_until="load")
        page.locator("#search-results ul.search li p.context").first.wait_for(timeout=30_000)
        page.wait_for_timeout(2000)  # every snippet fetched
        snippets = page.locator("#search-results p.context").all_inner_texts()
        assert len(snippets) >= 3
        assert [s for s in snippets if TEX.search(s)] == []
    finally:
        context.close()


@pytest.mark.parametrize("name", ["03_signal_through_depth", "06_residual_stream"])
def test_a_stored_explorer_says_it_is_a_picture_and_fits_the_page(site_server, browser, name):
    context, page = open_page(browser, site_server, name, PHONE)
    try:
        figure = page.locator("figure.tinyinit-stored-picture")
        img = figure.locator("img")
        assert img.evaluate("e => e.complete && e.naturalWidth > 100")
        assert len(img.get_attribute("alt").split()) >= 5
        caption = figure.locator("figcaption")
        assert caption.inner_text().startswith("A stored picture: to move it, run the notebook")
        assert caption.get_by_role("link", name="Get the course").get_attribute("href") == (
            "get_the_course.html"
        )
        for size in (PHONE, DESKTOP):  # the same page on a phone, then on a desktop
            page.set_viewport_size({"width": size[0], "height": size[1]})
            figure.scroll_into_view_if_needed()
            box = figure.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= size[0], (size, box)
        # Nothing that looks like a control and is not: no slider, no canvas of the explorer.
        assert page.locator(".tinyinit-explorer, .tinyinit-residual").count() == 0
        assert page.locator("canvas:not([aria-label]):not([aria-hidden=true])").count() == 0
    finally:
        context.close()


# --- on a phone: tap targets, panels that close, figures that stay legible ------------------------

TAP = 44  # px, the least a finger hits reliably (WCAG 2.5.5)
# Every control of the header and every link of the two panels, as a reader sees them.
SIZES = """s => [...document.querySelectorAll(s)].filter(e => e.checkVisibility()).map(e => {
  const r = e.getBoundingClientRect();
  return [(e.innerText || e.getAttribute('aria-label') || e.className).trim().slice(0, 40),
          Math.round(r.width), Math.round(r.height)];
})"""
HEADER = ".bd-header-article button, .bd-header-article .btn, .bd-header button, .bd-header .btn"


def too_small(page, selector: str, width: bool = True) -> list:
    return [s for s in page.evaluate(SIZES, selector) if s[2] < TAP or (width and s[1] < TAP)]


def test_on_a_phone_every_tap_target_is_44_px(site_server, browser):
    context, page = open_page(browser, site_server, PAGE, PHONE)
    try:
        assert len(page.evaluate(SIZES, HEADER)) >= 5  # sidebar, download, theme, search, contents
        assert too_small(page, HEADER) == []
        page.get_by_role("button", name="Download this page").click()
        page.locator(".dropdown-menu.show .dropdown-item").first.wait_for()
        items = page.evaluate(SIZES, ".dropdown-menu.show .dropdown-item")
        assert "needs tinyinit[lab]" in [name for name, _, _ in items]
        assert too_small(page, ".dropdown-menu.show .dropdown-item") == []
        page.keyboard.press("Escape")
        for toggle, dialog in (
            (".primary-toggle:visible", "#pst-primary-sidebar-modal"),
            (".secondary-toggle:visible", "#pst-secondary-sidebar-modal"),
        ):
            page.mouse.move(0, 0)
            page.locator(toggle).click()
            page.wait_for_function(f"() => document.querySelector('{dialog}').open")
            links = f"{dialog} nav a"
            assert len(page.evaluate(SIZES, links)) >= 5
            assert too_small(page, links, width=False) == [], dialog  # a line of text wide
            page.keyboard.press("Escape")
            page.wait_for_function(f"() => !document.querySelector('{dialog}').open")
    finally:
        context.close()


def test_a_tap_on_a_link_of_the_contents_closes_the_panel(site_server, browser):
    context, page = open_page(browser, site_server, PAGE, PHONE)
    try:
        page.locator(".secondary-toggle:visible").click()
        dialog = "document.getElementById('pst-secondary-sidebar-modal')"
        page.wait_for_function(f"() => {dialog}.open")
        link = page.locator("#pst-secondary-sidebar-modal nav a").nth(2)
        target = link.get_attribute("href")
        link.click()
        page.wait_for_function(f"() => !{dialog}.open", timeout=5_000)
        assert page.evaluate("location.hash") == target
        # the section tapped is in view, under the header
        top = page.evaluate(f"document.querySelector('{target}').getBoundingClientRect().top")
        assert 0 <= top < PHONE[1] / 2, top
    finally:
        context.close()


def png_dpi(png: bytes) -> float:
    """The resolution a PNG was drawn at, from its pHYs chunk (matplotlib writes it)."""
    at = png.find(b"pHYs")
    assert at > 0, "no pHYs chunk: the figure's resolution is unknown"
    per_metre, _, unit = struct.unpack(">IIB", png[at + 4 : at + 13])
    assert unit == 1  # per metre
    return per_metre * 0.0254


LEGIBLE_PX = 11  # the least height of a figure's tick labels on the page, in CSS px


@pytest.mark.parametrize("name", ["03_signal_through_depth", "04_does_it_train"])
def test_figures_on_a_phone_keep_their_labels_legible(site_server, browser, name):
    context, page = open_page(browser, site_server, name, PHONE)
    try:
        page.evaluate("() => document.querySelectorAll('details.hide').forEach(d => d.open = true)")
        page.wait_for_timeout(500)
        images = page.evaluate(
            """() => [...document.querySelectorAll('.bd-article .cell_output img')].map(i => {
                i.scrollIntoView();
                return [i.getAttribute('src'), i.naturalWidth, i.getBoundingClientRect().width];
            })"""
        )
        assert len(images) >= 2, images  # the reference figures and the rest
        for src, natural, shown in images:
            if src.startswith("data:"):
                png = base64.b64decode(src.split(",", 1)[1])
            else:
                png = (site_server.root / Path(urlsplit(src).path)).read_bytes()
            tick = TICK_FONTSIZE * png_dpi(png) / 72 * shown / natural  # CSS px on the page
            assert tick >= LEGIBLE_PX, f"{name}: {src[:40]} ticks {tick:.1f} px ({shown}/{natural})"
        # wider than the phone, they scroll in their own box: the page does not
        assert page.evaluate("document.scrollingElement.scrollWidth") <= PHONE[0]
    finally:
        context.close()


def test_search_snippets_come_from_the_pages_text(site_server, browser):
    context, page = open_page(browser, site_server, "index", DESKTOP)
    try:
        page.goto(f"{site_server.url}/search.html?q=kaiming", wait_until="load")
        page.locator("#search-results ul.search li p.context").first.wait_for(timeout=30_000)
        page.wait_for_timeout(2000)  # every snippet fetched
        snippets = page.locator("#search-results p.context").all_inner_texts()
        assert len(snippets) >= 3
        chrome = re.compile(r"System Settings|Light Dark|Download this page|\.ipynb \.pdf")
        assert [s for s in snippets if chrome.search(s)] == []
        assert sum("kaiming" in s.lower() for s in snippets) >= len(snippets) // 2, snippets
        # A folded answer is left out of the text a snippet is cut from, as it is on the page.
        cut = page.evaluate(
            """async () => (await import('./_static/tinyinit-site.js')).pageText(
                '<main role="main"><div class="bd-header-article">System Settings</div>'
                + '<article class="bd-article"><p>Predict m_20.</p><details class="hide">'
                + '<p>answer=-20.0</p></details><p>Then   read on.</p></article></main>')"""
        )
        assert cut == "Predict m_20.Then read on."
    finally:
        context.close()


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["390x844", "1280x720"])
def test_a_page_with_its_answers_unfolded_meets_wcag_21_aa_in_both_themes(
    site_server, browser, axe_source, size
):
    # Folded, the answers and their figures are hidden from axe: here they are open.
    context, page = open_page(browser, site_server, PAGE, size)
    try:
        page.locator(".jupyter-widgets").first.wait_for(timeout=30_000)
        for fold in page.locator("details.hide > summary").all():
            fold.click()  # a reader's click, as the keyboard's Enter would
        assert page.locator("details.hide[open]").count() >= 3
        page.locator(".tinyinit-reference-figure img").first.wait_for()
        settle(page)
        seen = {}
        for theme in THEMES:
            set_theme(page, theme)
            seen[theme] = run_axe(page, axe_source, THEME_RULES if theme != THEMES[0] else None)
        assert {t: failing(v) for t, v in seen.items() if failing(v)} == {}
    finally:
        context.close()


def test_on_a_phone_a_prediction_s_buttons_show_their_words_whole(site_server, browser):
    context, page = open_page(browser, site_server, "01_variance_of_a_sum", PHONE)
    try:
        buttons = page.locator(".widget-button:visible, .jupyter-button:visible")
        buttons.first.wait_for(timeout=30_000)  # the stored widgets, drawn by the page's manager
        words = [b.inner_text().strip() for b in buttons.all()]
        assert "Predict" in words, words
        cut = page.evaluate(
            """() => [...document.querySelectorAll('.widget-button, .jupyter-button')]
              .filter(b => b.checkVisibility() && b.scrollWidth > b.clientWidth + 1)
              .map(b => b.textContent.trim())"""
        )
        assert cut == []  # not squeezed to "P…"
    finally:
        context.close()

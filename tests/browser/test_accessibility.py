"""WCAG 2.1 A and AA, checked by axe-core in Chromium, on every page of the site and on the
presentation app, each in the light and the dark theme (and a few pages at a phone's width, with
the navigation open); and the explorer and the app operated with the keyboard alone. A site page's
second theme is checked on the rules a theme can change (THEME_RULES). Every site page also
reflows to a phone's width with nothing to scroll sideways (success criterion 1.4.10, which axe
does not test).

axe-core (Deque's engine, the one in browsers' developer tools) comes from npm beside the
widget renderer (`make test` installs it into build/site-js). A page fails on any violation
of impact serious or critical; the counts of every page are printed (pytest -s shows them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.browser.lab import (
    mpl_canvas,
    notebook_errors,
    open_notebook,
    run_all_cells,
    wait_for_mathjax,
)
from tests.browser.test_present import wait_for_text

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "build" / "site-js" / "node_modules" / "axe-core" / "axe.min.js"
WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
FAILING = ("serious", "critical")
PAGES = ["index", "search", "genindex", "get_the_course"] + sorted(
    p.stem for p in (ROOT / "notebooks").glob("*.ipynb")
)
# The teacher's edition adds the pages of docs/ (scripts/build_site.py's DOC_PARTS).
DOC_PAGES = sorted(
    f"docs/{p.relative_to(ROOT / 'docs').with_suffix('')}" for p in (ROOT / "docs").rglob("*.md")
)
PHONE = (390, 844)
CONTROLS = "select, button, input, [role=slider], [role=tab]"
HEADLINE = ".tinyinit-explorer .tinyinit-headline"


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.exists():
        message = f"no axe-core at {AXE}: `make test` installs it (npm package axe-core)"
        if os.environ.get("TINYINIT_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return AXE.read_text(encoding="utf-8")


# What a site theme changes: the colours, and which elements CSS shows (pydata-sphinx-theme's
# .only-light and .only-dark images, the theme button's icons). The second theme of a page is
# checked on the rules those can break; the first theme's run has already held the page's
# structure (landmarks, headings, labels, ARIA), which a colour scheme does not touch.
THEME_RULES = [
    "color-contrast",
    "link-in-text-block",
    "image-alt",
    "svg-img-alt",
    "role-img-alt",
    "object-alt",
    "input-image-alt",
    "area-alt",
    "button-name",
    "link-name",
]


def run_axe(page, axe_source: str, rules: list[str] | None = None) -> list[dict]:
    """axe's WCAG 2.1 A/AA violations on the page as it is now (only `rules`, when given)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_source)
    # resultTypes: only the violations get their elements' selectors worked out, not every
    # element that passed (axe's own advice for long pages; every rule still runs)
    only = {"type": "rule", "values": rules} if rules else {"type": "tag", "values": WCAG_21_AA}
    result = page.evaluate(
        "only => axe.run(document, {runOnly: only, resultTypes: ['violations']})", only
    )
    return result["violations"]


def failing(violations: list[dict]) -> dict[str, list[str]]:
    """{rule: [the first elements' selectors]} of the serious and critical violations."""
    return {
        v["id"]: [" ".join(map(str, n["target"])) for n in v["nodes"][:5]]
        for v in violations
        if v["impact"] in FAILING
    }


def counts(violations: list[dict]) -> dict[str, int]:
    return {f"{v['id']} ({v['impact']})": len(v["nodes"]) for v in violations}


def settle(page) -> None:
    """Wait until MathJax (when the page has it) and the widget renderer are done."""
    wait_for_mathjax(page)
    page.wait_for_timeout(500)


THEMES = ("light", "dark")


def set_theme(page, theme: str) -> None:
    """Switch the site's theme as its own button does (pydata-sphinx-theme's data-theme)."""
    page.evaluate(
        "t => { localStorage.setItem('theme', t); document.documentElement.dataset.theme = t;"
        " document.documentElement.dataset.mode = t; }",
        theme,
    )
    # The theme's colours change through CSS transitions (the search button's among them):
    # axe must see where they end, not a colour half-way, however slow the machine.
    # getAnimations() recalculates the styles first, so the new transitions are in the list.
    page.wait_for_function(
        "() => document.getAnimations()"
        ".every(a => !(a instanceof CSSTransition) || a.playState === 'finished')",
        timeout=30_000,
    )


def site_page(browser, site_server, name: str, width: int, height: int):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(f"{site_server.url}/{name}.html", wait_until="load")
    if page.locator("script[type='application/vnd.jupyter.widget-state+json']").count():
        page.locator(".jupyter-widgets").first.wait_for(timeout=30_000)
    settle(page)
    return context, page


def scroll_width(page) -> int:
    """The page's width as laid out now (after the next frame), which is more than the
    window's when something makes the reader scroll sideways."""
    return page.evaluate(
        "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() =>"
        " done(document.scrollingElement.scrollWidth))))"
    )


def test_every_page_of_the_site_is_checked(site_server):
    assert sorted(f"{name}.html" for name in PAGES) == site_server.pages()


def test_every_page_of_the_teacher_site_is_checked(teacher_site_server):
    names = sorted(f"{name}.html" for name in PAGES + DOC_PAGES)
    assert names == teacher_site_server.pages()


@pytest.mark.parametrize("name", PAGES)
def test_site_page_meets_wcag_21_aa_in_both_themes_and_reflows_to_a_phone(
    site_server, browser, axe_source, name
):
    check_site_page(site_server, browser, axe_source, name)


@pytest.mark.parametrize("name", DOC_PAGES)
def test_teacher_doc_page_meets_wcag_21_aa_in_both_themes_and_reflows_to_a_phone(
    teacher_site_server, browser, axe_source, name
):
    check_site_page(teacher_site_server, browser, axe_source, name)


def check_site_page(server, browser, axe_source, name) -> None:
    """axe in both themes at a desktop's size, then nothing to scroll sideways on a phone."""
    context, page = site_page(browser, server, name, 1400, 1000)
    try:
        seen = {}
        for theme in THEMES:
            set_theme(page, theme)
            seen[theme] = run_axe(page, axe_source, THEME_RULES if theme != THEMES[0] else None)
            print(f"\naxe {name}, {theme}: {json.dumps(counts(seen[theme]))}")
        assert {t: failing(v) for t, v in seen.items() if failing(v)} == {}, name
        # The same page, formulas typeset and widgets drawn, narrowed to a phone's width.
        page.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
        assert scroll_width(page) <= PHONE[0], f"{name} is wider than a {PHONE[0]} px phone"
    finally:
        context.close()


def test_a_themes_rules_catch_what_a_theme_can_break(site_server, browser, axe_source):
    # Faint text and an image without a text alternative, shown by the dark theme alone: the
    # second theme's run reports both, so a page that passes it has neither.
    context, page = site_page(browser, site_server, "index", 1400, 1000)
    try:
        set_theme(page, "dark")
        page.evaluate(
            """() => {
                const main = document.querySelector('main');
                main.insertAdjacentHTML('afterbegin',
                    '<p style="color: #333 !important">faint on the dark background</p>'
                    + '<img class="only-dark" src="_static/no-such.png" width="20" height="20">');
            }"""
        )
        reported = failing(run_axe(page, axe_source, THEME_RULES))
        assert set(reported) == {"color-contrast", "image-alt"}, reported
    finally:
        context.close()


def test_the_reflow_check_sees_what_a_phone_would_scroll_sideways(site_server, browser):
    # A line that cannot wrap, put in the text: the page, narrowed, is wider than the phone.
    context, page = site_page(browser, site_server, "index", 1400, 1000)
    try:
        page.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
        assert scroll_width(page) <= PHONE[0]
        page.evaluate(
            """() => document.querySelector('main p').insertAdjacentHTML('beforeend',
                '<span style="white-space: nowrap">' + 'too wide '.repeat(60) + '</span>')"""
        )
        assert scroll_width(page) > PHONE[0]
    finally:
        context.close()


@pytest.mark.parametrize(
    "name",
    ["index", "get_the_course", "03_signal_through_depth", "04_does_it_train", "09_pitfalls_lab"],
)
def test_site_page_on_a_phone_meets_wcag_21_aa_with_its_navigation_open(
    site_server, browser, axe_source, name
):
    context, page = site_page(browser, site_server, name, *PHONE)
    try:
        assert scroll_width(page) <= PHONE[0], f"{name} is wider than a {PHONE[0]} px phone"
        seen = {}
        for theme in THEMES:
            set_theme(page, theme)
            seen[theme] = run_axe(page, axe_source, THEME_RULES if theme != THEMES[0] else None)
        page.locator(".primary-toggle:visible").click()
        page.wait_for_function("() => document.getElementById('pst-primary-sidebar-modal').open")
        seen["dark, navigation open"] = run_axe(page, axe_source)
        assert {t: failing(v) for t, v in seen.items() if failing(v)} == {}, name
    finally:
        context.close()


def open_app(browser, voila_app, width: int = 1600, height: int = 1200, theme: str = "light"):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(f"{voila_app.url}?theme={theme}", timeout=120_000)
    page.locator(".tinyinit-present").wait_for(timeout=120_000)
    return context, page


@pytest.mark.parametrize("theme", THEMES)
def test_presentation_app_meets_wcag_21_aa(voila_app, browser, axe_source, theme):
    context, page = open_app(browser, voila_app, theme=theme)
    try:
        settle(page)
        light = page.evaluate("() => document.body.dataset.jpThemeLight")
        assert light == ("true" if theme == "light" else "false")  # Voila's theme, as asked
        seen = {"start": run_axe(page, axe_source)}
        # The first demonstration, then the folded controls unfolded: every control in view.
        page.keyboard.press("PageDown")
        mpl_canvas(page, ".tinyinit-explorer").wait_for(state="visible", timeout=60_000)
        wait_for_text(page, HEADLINE, r"^layer 20:")
        seen["first demonstration"] = run_axe(page, axe_source)
        page.locator(".tinyinit-explorer").get_by_text("more controls").click()
        page.locator(".tinyinit-explorer .tinyinit-readout").wait_for(state="visible")
        seen["more controls"] = run_axe(page, axe_source)
        for state, violations in seen.items():
            print(f"\naxe voila app ({theme}), {state}: {json.dumps(counts(violations))}")
        assert {s: failing(v) for s, v in seen.items() if failing(v)} == {}
    finally:
        context.close()


def focus_walk(page, scope: str, presses: int) -> list[str]:
    """Press Tab `presses` times; the ids (tagged on first visit) of the controls under
    `scope` that took the focus, in order."""
    visited = []
    for press in range(presses + 1):
        if press:  # the first look: the control that has the focus already, if any
            page.keyboard.press("Tab")
        tag = page.evaluate(
            """scope => {
                const e = document.activeElement;
                if (!e || !e.closest(scope)) return null;
                e.dataset.tabbed = e.dataset.tabbed || String(Math.random());
                return e.dataset.tabbed;
            }""",
            scope,
        )
        if tag and tag not in visited:
            visited.append(tag)
    return visited


def visible_controls(page, scope: str) -> list[str]:
    """The tags of the visible, enabled controls under `scope` (after focus_walk tagged them)."""
    return page.evaluate(
        """([scope, controls]) => [...document.querySelectorAll(scope + ' :is(' + controls + ')')]
            .filter(e => e.offsetParent !== null && !e.disabled && e.tabIndex >= 0)
            // ipympl's toolbar is hidden (toolbar_visible=False) until the pointer is over it
            .filter(e => !e.closest('.jupyter-matplotlib-toolbar'))
            .map(e => e.dataset.tabbed || ('untabbed: ' + e.outerHTML.slice(0, 120)))""",
        [scope, CONTROLS],
    )


def test_presentation_app_is_operated_with_the_keyboard_alone(voila_app, browser):
    context, page = open_app(browser, voila_app)
    try:
        page.keyboard.press("PageDown")  # the clicker's key: the first demonstration
        wait_for_text(page, HEADLINE, r"^layer 20:")
        page.locator(".tinyinit-explorer").get_by_text("more controls").click()
        page.locator("body").focus()
        tabbed = focus_walk(page, ".tinyinit-present", presses=150)
        missing = [c for c in visible_controls(page, ".tinyinit-present") if c not in tabbed]
        assert missing == [], f"controls Tab never reaches: {missing}"

        # The depth slider, by Tab and arrows only; the headline (a live region) follows.
        region = page.locator(f"{HEADLINE} .widget-html-content")
        assert region.get_attribute("aria-live") == "polite"
        page.evaluate(
            "s => { document.querySelector(s).dataset.region = 'kept' }",
            f"{HEADLINE} .widget-html-content",
        )
        tab_to(page, ".tinyinit-depth [role=slider]")
        page.keyboard.press("ArrowRight")
        wait_for_text(page, HEADLINE, r"^layer 21:")
        # The same element took the new text: a screen reader announces it.
        assert region.get_attribute("data-region") == "kept"
        # The demonstration menu, by the keyboard: ArrowDown picks the next one.
        tab_to(page, ".tinyinit-preset select")
        before = page.locator(".tinyinit-says").inner_text()
        page.keyboard.press("ArrowDown")
        page.wait_for_function(
            "t => document.querySelector('.tinyinit-says').innerText !== t", arg=before
        )
        # The ▶ button, by Enter: the next step or demonstration.
        tab_to(page, ".tinyinit-bar button[aria-label]")
        assert page.evaluate("() => document.activeElement.getAttribute('aria-label')")
        before = page.locator(".tinyinit-says").inner_text()
        page.keyboard.press("Enter")
        page.wait_for_function(
            "t => document.querySelector('.tinyinit-says').innerText !== t", arg=before
        )
    finally:
        context.close()


def tab_to(page, selector: str, presses: int = 80) -> None:
    """Press Tab until an element matching `selector` has the focus."""
    for _ in range(presses):
        if page.evaluate("s => !!document.activeElement?.matches(s)", selector):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {selector}")


EXPLORER_NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": None,
            "outputs": [],
            "source": "%matplotlib widget\nfrom tinyinit.views.explorers import depth_explorer\n"
            "ex = depth_explorer()\nex",
        }
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def test_explorer_in_jupyterlab_is_operated_with_the_keyboard_alone(lab_server, page):
    name = "explorer_by_keyboard.ipynb"
    body = {"type": "notebook", "format": "json", "content": EXPLORER_NOTEBOOK}
    lab_server.api(f"api/contents/{name}", method="PUT", body=body)
    open_notebook(page, lab_server, name)
    run_all_cells(page)
    assert notebook_errors(page) == []
    explorer = ".jp-NotebookPanel .tinyinit-explorer"
    page.locator(explorer).wait_for(timeout=60_000)
    readout = f"{explorer} .tinyinit-readout"
    wait_for_text(page, readout, r"^layer 20:")
    # Every slider named, the readout a live region.
    page.wait_for_function(
        "s => [...document.querySelectorAll(s + ' [role=slider]')]"
        ".every(h => h.getAttribute('aria-labelledby'))",
        arg=explorer,
        timeout=10_000,
    )
    assert page.locator(f"{readout} .widget-html-content").get_attribute("aria-live") == "polite"

    # From the first control, Tab reaches every other one.
    page.locator(f"{explorer} select").first.focus()
    tabbed = focus_walk(page, explorer, presses=60)
    missing = [c for c in visible_controls(page, explorer) if c not in tabbed]
    assert missing == [], f"controls Tab never reaches: {missing}"

    # Operated by keys alone: the depth slider, the histograms view, the pin button. (A menu's
    # arrow keys go to Lab's notebook commands in Lab; the app's menu is operated below.)
    page.locator(f"{explorer} select").first.focus()
    tab_to(page, ".tinyinit-depth [role=slider]")
    page.keyboard.press("ArrowRight")
    wait_for_text(page, readout, r"^layer 21:")
    tab_to(page, ".tinyinit-pin button, button.tinyinit-pin")
    page.keyboard.press("Enter")
    wait_for_text(page, readout, r"\bpin 1\b")


TRAINING = ".tinyinit-training"


def test_the_training_demonstration_meets_wcag_21_aa_and_is_operated_with_the_keyboard(
    voila_app, browser, axe_source
):
    context, page = open_app(browser, voila_app)
    try:
        texts = [t.replace("\xa0", " ") for t in page.locator(".tinyinit-preset select option")
                 .all_inner_texts()]  # fmt: skip
        page.locator(".tinyinit-preset select").select_option(
            index=texts.index("Xavier + ReLU: it does not learn")
        )
        mpl_canvas(page, TRAINING).wait_for(state="visible", timeout=60_000)
        wait_for_text(page, f"{TRAINING} .tinyinit-headline", r"step [1-9]")  # it trains
        seen = {"training": run_axe(page, axe_source)}
        page.locator(TRAINING).get_by_text("more controls").click()
        status = page.locator(f"{TRAINING} .tinyinit-train-status .widget-html-content")
        status.wait_for(state="visible")
        seen["training, more controls"] = run_axe(page, axe_source)
        for state, violations in seen.items():
            print(f"\naxe voila app, {state}: {json.dumps(counts(violations))}")
        assert {s: failing(v) for s, v in seen.items() if failing(v)} == {}

        # Every control of the view by Tab, the status a live region, play and pause by Enter.
        assert status.get_attribute("aria-live") == "polite"
        page.locator("body").focus()
        tabbed = focus_walk(page, ".tinyinit-present", presses=150)
        missing = [c for c in visible_controls(page, TRAINING) if c not in tabbed]
        assert missing == [], f"controls Tab never reaches: {missing}"
        # The demonstration plays to its last step while axe and the walk run, so whether it
        # still plays by now depends on the machine's speed: a step by Enter pauses it first
        # and takes one step, and from there play and pause are certain.
        page.locator(".tinyinit-preset select").focus()
        tab_to(page, f"{TRAINING} button.tinyinit-train-step")
        page.keyboard.press("Enter")
        wait_for_text(page, f"{TRAINING} .tinyinit-train-status", r"^took a step: step \d+")
        page.locator(".tinyinit-preset select").focus()
        tab_to(page, f"{TRAINING} button.tinyinit-train-play")
        page.keyboard.press("Enter")
        wait_for_text(page, f"{TRAINING} .tinyinit-train-status", r"^training: ")
        page.keyboard.press("Enter")
        wait_for_text(page, f"{TRAINING} .tinyinit-train-status", r"^paused: step \d+")
    finally:
        context.close()


def test_the_grade_report_meets_wcag_21_aa_and_reflows_to_a_phone(browser, axe_source, tmp_path):
    """`python -m tinyinit grade`'s report.html, for a class with every kind of row and the
    concept inventory, as a teacher opens it from disk."""
    from tinyinit.course.catalog import NAMES
    from tinyinit.course.grading import FAIL, PASS, Row, write_results
    from tinyinit.course.inventory import ITEMS

    right = {item.id: item.answer for item in ITEMS}
    wrong = {item.id: min(item.misconceptions) for item in ITEMS}
    rows = [
        Row("ada", 11, verdict=PASS, statuses=dict.fromkeys(NAMES, "passed"),
            inventory={"pre": wrong, "post": right}),
        Row("bob", 8, verdict=FAIL, pitfalls=("s01",), first_not_passed=NAMES[0],
            statuses={**dict.fromkeys(NAMES, "passed"), NAMES[0]: "failed"},
            inventory={"pre": wrong, "post": wrong}),
        Row("cy", reason="SyntaxError at my_init.py:3: invalid syntax",
            inventory_problem="inventory.json left out: pre: 12 of 13 items unanswered"),
    ]  # fmt: skip
    write_results(rows, tmp_path)
    for width, height in ((1280, 800), PHONE):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        page.goto((tmp_path / "report.html").as_uri(), wait_until="load")
        violations = run_axe(page, axe_source)
        assert failing(violations) == {}, json.dumps(counts(violations))
        if width == PHONE[0]:
            assert scroll_width(page) <= width + 1
        context.close()

"""`make site`: a page per notebook, an index in reading order, no dead links."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SCRIPT = ROOT / "scripts" / "build_site.py"


def load_builder():
    spec = importlib.util.spec_from_file_location("build_site", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


class Links(HTMLParser):
    """Collects <a href>, <img src>, what the page loads, and the visible text of a page."""

    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []
        self.pages: list[str] = []  # the index's entries: <a class="page">
        self.imgs: list[str] = []
        self.loads: list[str] = []  # <script src>, <link href>, <img src>, <iframe src>
        self.text: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "img", "iframe") and attrs.get("src"):
            self.loads.append(attrs["src"])
        if tag == "link" and attrs.get("href"):
            self.loads.append(attrs["href"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])
            if attrs.get("class") == "page":
                self.pages.append(attrs["href"])
        if tag == "img":
            self.imgs.append(attrs.get("src") or "")
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip and data.strip():
            self.text.append(data.strip())


def parse(path: Path) -> Links:
    parser = Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def local_target(site: Path, page: Path, href: str) -> Path | None:
    """The file a relative link points at, or None for anchors, data: and web links."""
    url = urlparse(href)
    if url.scheme or href.startswith("#") or not url.path:
        return None
    return (page.parent / unquote(url.path)).resolve()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as `make site` builds it, from the committed notebooks, into a temporary folder."""
    output = tmp_path_factory.mktemp("site")
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--output", str(output)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    return output


def notebook_order() -> list[str]:
    return sorted(
        (p.stem for p in NOTEBOOKS.glob("*.ipynb")),
        key=lambda s: (int(re.match(r"\d+", s).group()) if re.match(r"\d+", s) else 10**9, s),
    )


def test_every_notebook_has_a_page_that_is_not_empty(site):
    stems = notebook_order()
    assert stems, "no notebooks to render"
    for stem in stems:
        page = site / f"{stem}.html"
        assert page.exists(), f"{page.name} missing"
        nb = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
        text = " ".join(parse(page).text)
        markup = page.read_text(encoding="utf-8")
        n_code = sum(c.cell_type == "code" for c in nb.cells)
        # The page shows the notebook's own words and every code cell, not an empty template.
        assert len(text) > 500, f"{page.name} is almost empty"
        assert load_builder().title_and_goal(nb)[0] in text
        assert len(re.findall(r'class="jp-Cell jp-CodeCell', markup)) == n_code


def test_index_links_resolve_and_follow_reading_order(site):
    index = site / "index.html"
    links = parse(index)
    local = [h for h in links.hrefs if local_target(site, index, h) is not None]
    for href in local:
        assert local_target(site, index, href).exists(), f"index links to missing {href}"
    # Every notebook once, in numeric order (01 before 02 ... before 10); a learning goal may
    # link another notebook too.
    assert [Path(h).stem for h in links.pages] == notebook_order()
    assert {Path(h).stem for h in local} == set(notebook_order())


def test_index_shows_each_title_and_learning_goal(site):
    builder = load_builder()
    text = " ".join(parse(site / "index.html").text)
    for stem in notebook_order():
        title, goal = builder.title_and_goal(nbformat.read(NOTEBOOKS / f"{stem}.ipynb", 4))
        assert title and title in text, f"{stem}: title {title!r} not in the index"
        assert goal, f"{stem}: no learning goal ({builder.GOAL_MARK} ...)"
    assert text.count(builder.GOAL_MARK) == len(notebook_order())


def test_every_image_is_embedded_or_exists(site):
    for page in sorted(site.glob("*.html")):
        for src in parse(page).imgs:
            if src.startswith("data:"):
                continue
            target = local_target(site, page, src)
            assert target is not None and target.exists(), f"{page.name}: <img src={src[:80]!r}>"


def test_every_link_between_pages_resolves(site):
    for page in sorted(site.glob("*.html")):
        for href in parse(page).hrefs:
            target = local_target(site, page, href)
            if target is not None:
                assert target.exists(), f"{page.name} links to missing {href}"


def test_reading_order_is_numeric_not_alphabetic(tmp_path):
    # "10_..." sorts before "2_..." as text; the course must not.
    notebooks = tmp_path / "nb"
    notebooks.mkdir()
    for name, heading in [("10_last", "# Ten"), ("2_first", "# Two"), ("notes", "# Notes")]:
        nb = nbformat.v4.new_notebook()
        nb.cells = [
            nbformat.v4.new_markdown_cell(f"{heading}\n\nAfter this notebook you can count."),
            nbformat.v4.new_code_cell("1 + 1"),
        ]
        nbformat.write(nb, notebooks / f"{name}.ipynb")
    pages = load_builder().build_site(notebooks, tmp_path / "out", quiet=True)
    assert [p.title for p in pages] == ["Two", "Ten", "Notes"]
    hrefs = parse(tmp_path / "out" / "index.html").pages
    assert hrefs == ["2_first.html", "10_last.html", "notes.html"]


def test_stored_widget_state_goes_into_the_page(site):
    # Sliders and live figures show as they were left, where the notebook stored their state.
    for stem in notebook_order():
        nb = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
        if "application/vnd.jupyter.widget-state+json" in nb.metadata.get("widgets", {}):
            markup = (site / f"{stem}.html").read_text(encoding="utf-8")
            assert 'type="application/vnd.jupyter.widget-state+json"' in markup, stem


def test_no_page_loads_anything_from_another_host(site):
    # A classroom behind a firewall: every script, style and image comes with the site.
    for page in sorted(site.glob("*.html")):
        for url in parse(page).loads:
            assert not re.match(r"(https?:)?//", url), f"{page.name} loads {url}"
            target = local_target(site, page, url.split("?")[0])
            assert target is None or target.exists(), f"{page.name} loads missing {url}"
        # The widget renderer is added by a script, not a tag: it must be ours too.
        assert "cdn.jsdelivr.net/npm/@jupyter-widgets" not in page.read_text(encoding="utf-8")
    static = site / "static"
    for needed in ["mathjax/MathJax.js", "require.min.js", "html-manager/embed-amd.js"]:
        assert (static / needed).is_file(), needed
    assert (static / "jupyter-matplotlib" / "index.js").is_file()

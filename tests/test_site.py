"""`make site`: a page per notebook in reading order, by part, with its time, goal, previous/next,
downloads, offline search, and no page loading anything from another host. The student edition,
the public site, holds no line of a solution; the teacher's says what it is on every page;
launch buttons appear only where the repository and hub are given; a live explorer is its
stored picture. The teacher's edition adds the pages of docs/, for teachers and for developers."""

from __future__ import annotations

import base64
import html
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import nbformat
import pytest
from scripts_loader import load_script
from site_builds import HUB, REPOSITORY

from tinyinit.course import student_edition as edition

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SCRIPT = ROOT / "scripts" / "build_site.py"
# What nbconvert writes when an image has no alt: it tells a screen-reader user nothing.
PLACEHOLDER_ALT = "No description has been provided for this image"


class Page(HTMLParser):
    """What a page links to, loads and says: hrefs, loads, <img>, the sidebar's captions,
    previous/next, the download menu and the visible text."""

    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []
        self.loads: list[str] = []  # <script src>, <link href>, <img src>, <iframe src>
        self.imgs: list[dict] = []
        self.captions: list[str] = []  # the contents sidebar's parts
        self.sidebar: list[str] = []  # the contents sidebar's links, in order
        self.prev_next: dict[str, str] = {}
        self.text: list[str] = []
        self._skip = 0
        self._caption = False
        self._nav = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag in ("script", "img", "iframe") and attrs.get("src"):
            self.loads.append(attrs["src"])
        if tag == "link" and attrs.get("href") and attrs.get("rel") != "canonical":
            self.loads.append(attrs["href"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])
            for side in ("left-prev", "right-next"):
                if side in classes:
                    self.prev_next[side] = attrs["href"]
            if self._nav and "reference" in classes and "internal" in classes:
                self.sidebar.append(attrs["href"])
        if tag == "img":
            self.imgs.append(attrs)
        if tag == "nav" and "bd-docs-nav" in classes:
            self._nav += 1
        elif tag == "nav" and self._nav:
            self._nav += 1
        if tag == "span" and "caption-text" in classes:
            self._caption = True
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1
        if tag == "span":
            self._caption = False
        if tag == "nav" and self._nav:
            self._nav -= 1

    def handle_data(self, data):
        if self._caption and data.strip():
            self.captions.append(data.strip())
        if not self._skip and data.strip():
            self.text.append(data.strip())


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def local_target(page: Path, href: str) -> Path | None:
    """The file a relative link points at, or None for anchors, data: and web links."""
    url = urlparse(href)
    if url.scheme or href.startswith("#") or not url.path:
        return None
    return (page.parent / unquote(url.path)).resolve()


def build(notebooks: Path, output: Path, work: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--notebooks", str(notebooks), "--output", str(output)]
        + ["--work", str(work), "--quiet", *options],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def site(built_site) -> Path:
    """The site as `make site` builds it (the student edition, no repository or hub given),
    from the committed notebooks (tests/conftest.py builds it once for the run)."""
    return built_site


@pytest.fixture(scope="module")
def teacher_site(built_teacher_site) -> Path:
    """`make site EDITION=teacher REPO=... HUB=...` (tests/conftest.py builds it once for the
    run, with site_builds.REPOSITORY and HUB)."""
    return built_teacher_site


@pytest.fixture(scope="module")
def student_edition(tmp_path_factory) -> Path:
    """What `make student` writes, in a folder of its own."""
    folder = tmp_path_factory.mktemp("student")
    edition.make_student(NOTEBOOKS, folder, force=True)
    return folder


@pytest.fixture(scope="module")
def course():
    """The pages in reading order, as the builder computes them from course_time."""
    return load_script("build_site").course_pages(NOTEBOOKS)


def test_reading_order_follows_the_parts_then_the_numbers(course):
    parts = [p.part for p in course]
    assert parts == sorted(parts, key=("core", "further", "appendix").index)
    for part in set(parts):
        numbers = [int(p.name[:2]) for p in course if p.part == part]
        assert numbers == sorted(numbers), part
    assert {p.source.stem for p in course} == {p.stem for p in NOTEBOOKS.glob("*.ipynb")}


@pytest.mark.parametrize("edition", ["student", "teacher"])
def test_every_notebook_has_a_page_with_its_words_and_every_code_cell(
    site, teacher_site, student_edition, course, edition
):
    built = site if edition == "student" else teacher_site
    for page in course:
        path = built / page.href
        assert path.exists(), f"{page.href} missing"
        folder = student_edition if edition == "student" else NOTEBOOKS
        nb = nbformat.read(folder / page.source.name, as_version=4)
        text = " ".join(parse(path).text)
        markup = path.read_text(encoding="utf-8")
        assert len(text) > 500, f"{page.href} is almost empty"
        assert (edition == "teacher") == ("Teacher's edition" in text), page.href
        assert page.title in text
        n_code = sum(c.cell_type == "code" for c in nb.cells)
        cells = re.findall(r'class="cell (?:tag_\S+ )*docutils container"', markup)
        assert len(cells) == n_code, page.href  # a tagged cell's class names its tags too


def test_the_sidebar_names_the_three_parts_and_lists_the_pages_in_reading_order(site, course):
    captions = {"core": "Core path", "further": "Going further", "appendix": "Appendix"}
    for page in course:
        parsed = parse(site / page.href)
        wanted = [captions[p] for p in dict.fromkeys(p.part for p in course)]
        assert parsed.captions[: len(wanted)] == wanted, page.href
        listed = [Path(h.split("#")[0]).stem or page.name for h in parsed.sidebar]
        listed = [n for n in listed if n != "index"]
        assert listed == ["get_the_course"] + [p.name for p in course], page.href


def test_previous_and_next_follow_the_reading_order(site, course):
    names = ["index", "get_the_course"] + [p.name for p in course]
    for i, name in enumerate(names):
        links = parse(site / f"{name}.html").prev_next
        if i > 0:
            assert links.get("left-prev") == f"{names[i - 1]}.html", name
        if i + 1 < len(names):
            assert links.get("right-next") == f"{names[i + 1]}.html", name
        else:
            assert "right-next" not in links


def test_index_gives_each_notebook_its_part_time_and_learning_goal(site, course):
    builder = load_script("build_site")
    index = site / "index.html"
    text = " ".join(parse(index).text)
    for page in course:
        assert page.title in text
        assert f"({page.minutes} min)" in text, page.name
        assert page.goal, f"{page.name}: no learning goal ({builder.GOAL_MARK} ...)"
    assert text.count(builder.GOAL_MARK) == len(course)
    core = sum(p.minutes for p in course if p.part == "core" and "_inventory_" not in p.name)
    assert f"Core path: {core} minutes in all" in text  # the inventory's sittings counted apart
    for href in parse(index).hrefs:
        target = local_target(index, href)
        assert target is None or target.exists(), f"index links to missing {href}"


def test_the_student_site_downloads_the_student_notebooks_and_my_init(
    site, student_edition, course
):
    for page in course:
        hrefs = parse(site / page.href).hrefs
        for wanted in (f"_sources/{page.source.name}", "student/my_init.py"):
            assert wanted in hrefs, f"{page.href}: no download link {wanted}"
            assert (site / wanted).is_file()
        # The page's own download is what `make student` writes, its explorers live.
        downloaded = (site / "_sources" / page.source.name).read_text(encoding="utf-8")
        assert downloaded == (student_edition / page.source.name).read_text(encoding="utf-8")
        assert f"student/{page.source.name}" not in hrefs  # no second copy to choose from
    for helper in NOTEBOOKS.glob("*.py"):  # the student's my_init.py, if any
        assert (site / "student" / helper.name).read_text() == (
            student_edition / helper.name
        ).read_text()


def test_the_teacher_site_downloads_both_editions_labelled(teacher_site, student_edition, course):
    for page in course:
        path = teacher_site / page.href
        hrefs = parse(path).hrefs
        for wanted in (f"_sources/{page.source.name}", f"student/{page.source.name}"):
            assert wanted in hrefs, f"{page.href}: no download link {wanted}"
            assert (teacher_site / wanted).is_file()
        teacher = (teacher_site / "_sources" / page.source.name).read_text(encoding="utf-8")
        assert teacher == page.source.read_text(encoding="utf-8")  # the notebook as committed
        student = json.loads((teacher_site / "student" / page.source.name).read_text())
        teacher_nb = json.loads(teacher)
        teacher_only = [
            c for c in teacher_nb["cells"] if "teacher" in c["metadata"].get("tags", [])
        ]
        assert len(student["cells"]) == len(teacher_nb["cells"]) - len(teacher_only)
        assert "teacher&#39;s .ipynb" in path.read_text(encoding="utf-8") or (
            "teacher's .ipynb" in " ".join(parse(path).text)
        )


def test_launch_buttons_open_the_given_repository_and_hub(teacher_site, course):
    for page in course:
        hrefs = parse(teacher_site / page.href).hrefs
        path = f"notebooks/{page.source.name}"
        binder = [h for h in hrefs if h.startswith("https://mybinder.org/v2/gh/")]
        hub = [h for h in hrefs if h.startswith(f"{HUB}/hub/user-redirect/git-pull?")]
        assert binder and binder[0].startswith("https://mybinder.org/v2/gh/example-university/")
        assert binder[0].endswith(f"urlpath=lab/tree/{path}"), binder
        assert hub and f"urlpath=lab/tree/tinyinit/{path}" in hub[0], hub
        assert REPOSITORY in hrefs


def test_without_a_repository_there_is_no_launch_button_and_no_placeholder(site):
    for path in sorted(site.glob("*.html")):
        markup = path.read_text(encoding="utf-8")
        hrefs = parse(path).hrefs
        assert not [h for h in hrefs if "mybinder.org" in h or "git-pull" in h], path.name
        assert not [h for h in hrefs if h.startswith("https://github.com/")], path.name
        for placeholder in ("OWNER/", "hub.example.edu"):
            assert placeholder not in markup, f"{path.name} names {placeholder}"


def test_a_repository_that_is_no_web_address_is_refused(tmp_path):
    run = build(NOTEBOOKS, tmp_path / "out", tmp_path / "work", "--repository", "github.com/x")
    assert run.returncode == 2
    assert "--repository: repository must be an http:// or https:// address" in run.stderr


# --- no solution on the student site --------------------------------------------------------------


def secret_lines(student_edition: Path) -> set[str]:
    """The lines of the teacher's solutions (in the notebooks and my_init.py) that the
    student edition does not show anywhere: what must not be on the student site."""
    lines = set()
    for notebook in NOTEBOOKS.glob("*.ipynb"):
        for cell in nbformat.read(notebook, as_version=4).cells:
            lines |= {line.strip() for line in edition.solution_lines(cell.source)}
    for module in NOTEBOOKS.glob("*.py"):
        lines |= {line.strip() for line in edition.solution_lines(module.read_text())}
    shown = "\n".join(
        path.read_text(encoding="utf-8") for path in student_edition.iterdir() if path.is_file()
    )

    def in_edition(line: str) -> bool:  # as it is, or as a notebook's JSON writes it
        return line in shown or json.dumps(line)[1:-1] in shown

    return {line for line in lines if len(line) >= 6 and not in_edition(line)}


def site_text(site: Path) -> dict[str, str]:
    """Every text file of a site, as a reader or a download gets it: HTML without its tags."""
    texts = {}
    for path in site.rglob("*"):
        if path.suffix in (".html", ".ipynb", ".py", ".js", ".txt", ".md", ".json"):
            text = path.read_text(encoding="utf-8", errors="replace")
            if path.suffix == ".html":
                text = html.unescape(re.sub(r"<[^>]+>", "", text))
            if path.suffix == ".ipynb":
                cells = json.loads(text)["cells"]
                text = "\n".join("".join(c["source"]) for c in cells)
            texts[str(path.relative_to(site))] = text
    return texts


def test_the_student_site_holds_no_line_of_a_solution(site, teacher_site, student_edition):
    secrets = secret_lines(student_edition)
    assert len(secrets) >= 20  # the notebooks have solutions: the check checks something
    leaks = {
        name: [line for line in secrets if line in text][:3]
        for name, text in site_text(site).items()
        if any(line in text for line in secrets)
    }
    assert leaks == {}, leaks
    # The same check finds them on the teacher's edition, where they belong.
    teacher = "\n".join(site_text(teacher_site).values())
    assert sum(line in teacher for line in secrets) >= len(secrets) // 2


# --- a live explorer, on a page without a kernel ------------------------------------------------


@pytest.mark.parametrize("name", ["03_signal_through_depth", "06_residual_stream"])
def test_a_stored_explorer_is_its_picture_with_its_alt_and_a_line(site, name):
    builder = load_script("build_site")
    path = site / f"{name}.html"
    markup = path.read_text(encoding="utf-8")
    stored = re.findall(r'<figure class="tinyinit-stored-picture">.*?</figure>', markup, re.S)
    assert len(stored) == 1, name
    [img] = figures(stored[0])
    assert img["src"].startswith("data:image/png;base64,")
    assert real_alt(img.get("alt")) and img["alt"].startswith("Plot of the")
    assert html.escape(builder.STORED_LINE) in stored[0]
    assert '<a href="get_the_course.html">' in stored[0]  # how to run it, one tap away
    # Its controls are gone from the page: no explorer in the stored widget state.
    state = re.search(
        r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', markup, re.S
    )
    models = json.loads(state.group(1))["state"] if state else {}
    classes = {c for m in models.values() for c in m["state"].get("_dom_classes", [])}
    assert not classes & set(builder.EXPLORERS), classes
    # The download keeps the explorer, to run in JupyterLab.
    download = json.loads((site / "_sources" / f"{name}.ipynb").read_text())
    stored = download["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    kept = {c for m in stored.values() for c in m["state"].get("_dom_classes", [])}
    assert kept & set(builder.EXPLORERS)


def test_the_search_index_holds_the_notebooks_words(site):
    index = (site / "searchindex.js").read_text(encoding="utf-8")
    assert (site / "search.html").is_file()
    for word in ("kaiming", "xavier", "residu"):  # stems, as Sphinx stores them
        assert f'"{word}' in index, word


def site_pages(site: Path) -> list[Path]:
    """Every page of a site: the notebooks, the index and search, and the pages of docs/."""
    return sorted(site.glob("*.html")) + sorted(site.glob("docs/**/*.html"))


@pytest.mark.parametrize("edition", ["student", "teacher"])
def test_every_link_and_image_between_pages_resolves(site, teacher_site, edition):
    built = site if edition == "student" else teacher_site
    for path in site_pages(built):
        parsed = parse(path)
        for href in parsed.hrefs + [img.get("src", "") for img in parsed.imgs]:
            target = local_target(path, href)
            if target is not None:
                assert target.exists(), f"{path.relative_to(built)} links to missing {href}"


def test_stored_widget_state_goes_into_the_page(site, course):
    # Widgets show as they were left, where the page's notebook (the download, its live
    # explorers made pictures) stored their state.
    builder = load_script("build_site")
    for page in course:
        nb = nbformat.read(site / "_sources" / page.source.name, as_version=4)
        builder.stored_pictures(nb)
        state = nb.metadata.get("widgets", {}).get(builder.WIDGET_STATE, {}).get("state")
        if state:
            markup = (site / page.href).read_text(encoding="utf-8")
            assert 'type="application/vnd.jupyter.widget-state+json"' in markup, page.name
            assert "html-manager/embed-amd.js" in markup


def test_no_page_loads_anything_from_another_host(site):
    # A classroom behind a firewall: every script, style and image comes with the site.
    for path in sorted(site.glob("*.html")):
        markup = path.read_text(encoding="utf-8")
        for url in parse(path).loads:
            assert not re.match(r"(https?:)?//", url), f"{path.name} loads {url}"
            target = local_target(path, url.split("?")[0])
            assert target is None or target.exists(), f"{path.name} loads missing {url}"
        # Defaults of the theme and of MyST-NB that would reach a CDN, by script or config.
        for cdn in ("cdn.jsdelivr.net", "cdnjs.cloudflare.com", "unpkg.com", "fonts.googleapis"):
            assert cdn not in markup, f"{path.name} names {cdn}"
    static = site / "_static"
    for needed in [
        "mathjax/tex-svg-full.js",
        "mathjax/ui/safe.js",
        "require.min.js",
        "html-manager/embed-amd.js",
        "jupyter-matplotlib/index.js",
        "anywidget/index.js",
        "tinyinit-a11y.js",
    ]:
        assert (static / needed).is_file(), needed


def test_code_is_highlighted_in_an_accessible_style(site):
    css = (site / "_static" / "pygments.css").read_text(encoding="utf-8")
    # accessible-pygments' high-contrast light style: comments in #515151 (7.5:1 on white).
    conf = (ROOT / "site_src" / "conf.py").read_text(encoding="utf-8")
    assert 'pygments_style = "a11y-high-contrast-light"' in conf
    assert ".highlight .c" in css


def png_output(alt: str | None) -> nbformat.NotebookNode:
    pixel = base64.b64encode(
        bytes.fromhex(
            "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
            "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db40000000049454e44ae426082"
        )
    ).decode()
    metadata = {"image/png": {"alt": alt}} if alt else {}
    return nbformat.v4.new_output(
        "display_data", data={"image/png": pixel, "text/plain": alt or ""}, metadata=metadata
    )


def test_a_small_course_builds_in_part_order_with_alt_text_on_its_figures(tmp_path):
    # 11 comes after 09 and before the appendix 10: the part orders, then the number.
    notebooks = tmp_path / "nb"
    notebooks.mkdir()
    alt = "A single pixel: the smallest figure a notebook can show, with its text alternative"
    for name, heading in [
        ("10_appendix_bits", "# Ten"),
        ("02_first", "# Two"),
        ("11_extra", "# Eleven"),
        ("09_pitfalls", "# Nine"),
    ]:
        nb = nbformat.v4.new_notebook(metadata={"language_info": {"name": "python"}})
        code = nbformat.v4.new_code_cell("show(fig, alt)")
        code.outputs = [png_output(alt)]
        nb.cells = [
            nbformat.v4.new_markdown_cell(f"{heading}\n\nAfter this notebook you can count."),
            code,
        ]
        nbformat.write(nb, notebooks / f"{name}.ipynb")
    run = build(notebooks, tmp_path / "out", tmp_path / "work")
    assert run.returncode == 0, run.stdout + run.stderr
    index = parse(tmp_path / "out" / "index.html")
    assert index.captions[:3] == ["Core path", "Going further", "Appendix"]
    order = [Path(h).stem for h in index.sidebar if not h.startswith("#")]
    assert order == ["get_the_course", "02_first", "09_pitfalls", "11_extra", "10_appendix_bits"]
    page = parse(tmp_path / "out" / "11_extra.html")
    assert page.prev_next == {
        "left-prev": "09_pitfalls.html",
        "right-next": "10_appendix_bits.html",
    }
    figures = [img for img in page.imgs if "_images/" in img.get("src", "")]
    assert [img.get("alt") for img in figures] == [alt]


def stored_images(path: Path):
    """(cell index, MIME type, alt or None) of every image a notebook stores in its outputs."""
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            for mime in output.get("data", {}):
                if mime.startswith("image/"):
                    yield i, mime, (output.get("metadata", {}).get(mime) or {}).get("alt")


def real_alt(alt) -> bool:
    """A sentence that says something: not empty, not nbconvert's placeholder, not a file name."""
    return (
        isinstance(alt, str)
        and len(alt.split()) >= 5
        and PLACEHOLDER_ALT not in alt
        and not re.fullmatch(r"[\w./-]+\.(png|jpe?g|svg)", alt.strip())
    )


@pytest.mark.parametrize("notebook", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.stem)
def test_every_stored_figure_has_a_text_alternative(notebook):
    missing = [
        f"cell {i} ({mime}): alt {alt!r}"
        for i, mime, alt in stored_images(notebook)
        if not real_alt(alt)
    ]
    assert missing == [], (
        f"{notebook.name}: figures without a text alternative (show them with "
        f"tinyinit.views.figures.show(fig, alt)): {missing}"
    )


def test_make_site_passes_the_edition_and_the_addresses():
    def recipe(*settings: str) -> str:
        run = subprocess.run(
            ["make", "-n", "site", *settings], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert run.returncode == 0, run.stderr
        return " ".join(run.stdout.split())

    plain = recipe()
    assert "--edition student --output site" in plain and "--repository" not in plain
    assert "--hub" not in plain
    given = recipe("EDITION=teacher", f"REPO={REPOSITORY}", f"HUB={HUB}")
    assert "--edition teacher --output site-teacher" in given
    assert f"--repository '{REPOSITORY}' --repository-path 'notebooks'" in given
    assert f"--hub '{HUB}'" in given


# --- the pages of docs/: in the teacher's edition, in two parts of the sidebar -----------------


def doc_parts() -> list[tuple[str, list[str]]]:
    """(caption, the pages' names under docs/) of each part, as build_site lists them."""
    return [(caption, list(names)) for caption, _, names in load_script("build_site").DOC_PARTS]


def test_the_parts_list_every_page_of_docs():
    listed = {name for _, names in doc_parts() for name in names}
    on_disk = {
        str(p.relative_to(ROOT / "docs").with_suffix("")) for p in (ROOT / "docs").rglob("*.md")
    }
    assert listed == on_disk


def test_the_teacher_site_has_a_part_for_teachers_and_one_for_developers(teacher_site, course):
    parts = doc_parts()
    assert [caption for caption, _ in parts] == ["For teachers", "For developers"]
    names = [f"docs/{name}" for _, pages in parts for name in pages]
    for name in names:
        page = teacher_site / f"{name}.html"
        assert page.is_file(), name
        assert "Teacher's edition" in " ".join(parse(page).text), name
    index = parse(teacher_site / "index.html")
    assert index.captions[-2:] == ["For teachers", "For developers"]
    listed = [h.split("#")[0].removesuffix(".html") for h in index.sidebar]
    assert listed[-len(names) :] == names
    # a page's link to a notebook of notebooks/ leads to the notebook's page
    notebooks = parse(teacher_site / "docs" / "teaching" / "notebooks.html").hrefs
    for page in course:
        assert f"../../{page.href}" in notebooks, page.href


def test_the_student_site_has_no_page_of_docs(site):
    assert not (site / "docs").exists()
    assert "For teachers" not in parse(site / "index.html").captions


# --- getting the course: pip alone, and Binder and a hub where given ----------------------------


def words(markup: str) -> str:
    """The text of an HTML fragment: tags out, entities read, whitespace collapsed."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", markup))).strip()


def test_the_front_page_and_get_the_course_give_the_pip_path(site):
    index = words((site / "index.html").read_text(encoding="utf-8"))
    builder = load_script("build_site")
    for command in (builder.INSTALL, "python -m tinyinit student tinyinit-course"):
        assert command in index, command
    assert "make student-lab" not in index  # a command of the repository, which a reader lacks
    assert "get_the_course.html" in parse(site / "index.html").hrefs
    get = site / "get_the_course.html"
    text = words(get.read_text(encoding="utf-8"))
    for command in (
        builder.INSTALL,
        "python -m tinyinit student tinyinit-course",
        "jupyter lab tinyinit-course",
        "python -m tinyinit check my_init.py",
    ):
        assert command in text, command
    # no repository given: no launch link, and no address that stands for one
    assert not [h for h in parse(get).hrefs if "mybinder.org" in h or "git-pull" in h]
    assert "git+" not in text


def test_get_the_course_opens_binder_and_the_hub_where_given(teacher_site):
    builder = load_script("build_site")
    hrefs = parse(teacher_site / "get_the_course.html").hrefs
    binder = builder.binder_url(REPOSITORY, "notebooks")
    assert binder == (
        "https://mybinder.org/v2/gh/example-university/tinyinit/main?urlpath=lab/tree/notebooks"
    )
    assert binder in hrefs
    hub = [h for h in hrefs if h.startswith(f"{HUB}/hub/user-redirect/git-pull?")]
    assert hub == [builder.hub_url(HUB, REPOSITORY, "notebooks")]
    assert "urlpath=lab/tree/tinyinit/notebooks" in hub[0]
    text = words((teacher_site / "get_the_course.html").read_text(encoding="utf-8"))
    assert f'pip install "tinyinit[lab] @ git+{REPOSITORY}"' in text


def test_a_repository_that_is_not_on_github_is_refused_for_binder():
    builder = load_script("build_site")
    with pytest.raises(ValueError, match=r"https://github.com/OWNER/NAME; got 'https://x.org/a'"):
        builder.binder_url("https://x.org/a", "student")


def test_every_page_says_what_its_notebook_needs(site, course):
    builder = load_script("build_site")
    for page in course:
        path = site / page.href
        markup = path.read_text(encoding="utf-8")
        assert "needs tinyinit[lab]" in words(markup), page.name  # the download menu's entry
        assert parse(path).hrefs.count("get_the_course.html") >= 2, page.name  # menu and note
        note = builder.run_note(None).replace("`", "").split("([")[0]
        assert squeezed(note) in squeezed(markup), page.name


def test_make_binder_badge_prints_the_readmes_badge():
    run = subprocess.run(
        ["make", "-n", "binder-badge", f"REPO={REPOSITORY}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert f"--binder-badge student --repository '{REPOSITORY}'" in run.stdout
    badge = subprocess.run(
        [sys.executable, str(SCRIPT), "--binder-badge", "student", "--repository", REPOSITORY],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert badge.returncode == 0, badge.stderr
    assert badge.stdout.strip() == (
        "[![Binder: the student edition](https://mybinder.org/badge_logo.svg)]"
        "(https://mybinder.org/v2/gh/example-university/tinyinit/main?urlpath=lab/tree/student)"
    )


PLACEHOLDERS = re.compile(r"\bOWNER\b|\bORG/|example\.(?:edu|org|com)\b|<[a-z-]+ address>")


def test_nothing_published_names_a_placeholder(site):
    # The site as published, and the README's links (its text may say "REPO=<its address>").
    found = {
        name: PLACEHOLDERS.findall(text)
        for name, text in site_text(site).items()
        if PLACEHOLDERS.search(text)
    }
    assert found == {}, found
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", readme)
    assert links and [link for link in links if PLACEHOLDERS.search(link)] == []


def test_the_folder_to_publish_holds_only_what_is_published(site):
    hidden = sorted(str(p.relative_to(site)) for p in site.rglob(".*"))
    assert hidden == [], hidden  # no .doctrees (Sphinx's pickles), no .buildinfo
    assert not list(site.rglob("*.doctree")) and not list(site.rglob("*.pickle"))


# --- a student page shows: figures, folded answers, no test machinery ---------------------------

FIGURE = re.compile(r"<img\b[^>]*>")


def figures(markup: str) -> list[dict]:
    """The attributes of each figure a page shows in its cells' outputs: MyST-NB's images
    (_images/) and the pictures a page carries itself (data:)."""
    found = []
    for tag in FIGURE.findall(markup):
        parser = Page()
        parser.feed(tag)
        attrs = parser.imgs[0]
        if attrs.get("src", "").startswith(("_images/", "data:image/")):
            found.append(attrs)
    return found


def test_the_student_core_pages_show_at_least_the_teachers_figures_labelled(
    site, teacher_site, course
):
    builder = load_script("build_site")
    core = [p for p in course if p.part == "core"]
    assert {"01", "02", "03", "04"} <= {p.name[:2] for p in core}  # and the sittings beside
    for page in core:
        teacher = figures((teacher_site / page.href).read_text(encoding="utf-8"))
        markup = (site / page.href).read_text(encoding="utf-8")
        student = figures(markup)
        assert len(student) >= len(teacher), f"{page.name}: {len(student)} < {len(teacher)}"
        assert all(real_alt(f.get("alt")) for f in student), page.name
        # Each figure the student's code draws in the notebook: the teacher's, labelled.
        labelled = re.findall(
            r'<figure class="tinyinit-reference-figure">(.*?)</figure>', markup, re.S
        )
        teacher_alts = {f.get("alt") for f in teacher}
        for figure in labelled:
            assert builder.REFERENCE_LINE in html.unescape(figure), page.name
            [img] = figures(figure)
            assert img["alt"] in teacher_alts, page.name
        cleared = [
            c
            for c in nbformat.read(site / "_sources" / page.source.name, 4).cells
            if c.cell_type == "code" and not c.outputs and edition.runs_my_init(c)
        ]
        drawn = {c.get("id"): c for c in nbformat.read(page.source, 4).cells}
        wanted = sum(
            1
            for c in cleared
            for o in drawn[c.get("id")].get("outputs", [])
            if "image/png" in o.get("data", {})
        )
        assert len(labelled) == wanted, f"{page.name}: {len(labelled)} of {wanted} figures"


def test_the_labelled_figures_come_from_the_teachers_cell_of_the_same_id(tmp_path):
    builder = load_script("build_site")
    teacher = nbformat.v4.new_notebook()
    drawn = nbformat.v4.new_code_cell("mine = yours(check_init('my_init.py'))", id="exp")
    alt = "A single pixel drawn by tinyinit's functions, where yours draw it"
    drawn.outputs = [png_output(alt), nbformat.v4.new_output("stream", text="measured 1.0")]
    other = nbformat.v4.new_code_cell("x = 1", id="plain")
    other.outputs = [png_output("A single pixel that no student's code draws here")]
    teacher.cells = [other, drawn]
    student = edition.student_notebook(teacher)
    assert [c.outputs for c in student.cells][1] == []  # the edition cleared it
    assert builder.reference_figures(student, teacher) == 1
    [shown] = student.cells[1].outputs
    assert builder.REFERENCE_LINE in html.unescape(shown["data"]["text/html"])
    assert f'alt="{html.escape(alt)}"' in shown["data"]["text/html"]
    assert "measured 1.0" not in json.dumps(shown)  # the figures alone: not the teacher's prints
    assert student.cells[0].outputs == teacher.cells[0].outputs  # a kept cell keeps its own


FOLD = re.compile(r'<details class="admonition hide[^"]*"( open)?>(.*?)</details>', re.S)


@pytest.mark.parametrize("edition_name", ["student", "teacher"])
def test_no_answer_is_unfolded_before_its_question(site, teacher_site, course, edition_name):
    built = site if edition_name == "student" else teacher_site
    for page in course:
        markup = (built / page.href).read_text(encoding="utf-8")
        folds = FOLD.findall(markup)
        assert all(opened == "" for opened, _ in folds), f"{page.name}: an answer shows open"
        nb = nbformat.read(built / "_sources" / page.source.name, 4)
        answering = [c for c in nb.cells if edition.answers_a_prediction(c)]
        assert len(folds) == len(answering), page.name
        unfolded = squeezed(FOLD.sub(" ", markup))
        folded = [squeezed(body) for _, body in folds]
        text = squeezed(markup)
        for cell, body in zip(answering, folded):
            first = squeezed(html.escape(next(l for l in cell.source.splitlines() if l.strip())))
            assert first in body and first not in unfolded, f"{page.name}: {first!r}"
            # the question it answers is asked above it
            for name in re.findall(r"\b(\w+)\.reveal\(", cell.source):
                asked = re.search(rf"{name}=predict", text)
                assert asked and asked.start() < text.index(body), f"{page.name}: {name}"


def squeezed(markup: str) -> str:
    """The text of an HTML fragment without any whitespace: code compares as written, however
    its highlighting split it into spans."""
    return re.sub(r"\s+", "", html.unescape(re.sub(r"<[^>]+>", "", markup)))


def test_pages_leave_out_the_comments_that_steer_the_tests(site, teacher_site, course):
    steered = []
    for page in course:
        source = page.source.read_text(encoding="utf-8")
        for built in (site, teacher_site):
            assert "NBVAL_" not in words((built / page.href).read_text(encoding="utf-8"))
        if "NBVAL_" in source:
            steered.append(page.name)
            assert "NBVAL_" in (site / "_sources" / page.source.name).read_text()  # as run
    assert steered  # the notebooks have such comments: the check checks something

"""Build the course as a static web site with Sphinx, MyST-NB and sphinx-book-theme.

    python scripts/build_site.py                          # the student edition -> site/
    python scripts/build_site.py --edition teacher        # the teacher's, solutions in
    python scripts/build_site.py --repository https://github.com/ORG/tinyinit \
        --hub https://hub.example.edu                     # with Binder and hub launch links
    python scripts/build_site.py --binder-badge --repository https://github.com/ORG/tinyinit
                                                          # the README's Binder badge

Two editions. The student edition, the public site, is what `make student` writes
(tinyinit/course/student_edition.py: solutions stubbed, the answers to predictions and
the results of the student's own code cleared): its pages and its downloads are the
student notebooks and the student's my_init.py, so no line of a solution is on it. The
teacher's edition shows the teacher notebooks as they were last executed, says so on
every page, and offers the student edition as downloads beside each notebook.

The stack is Jupyter Book 1's, with its configuration in site_src/conf.py. This
script assembles what Sphinx reads into build/site-work/src (or --work):

* the edition's notebooks, as they were last executed: their stored outputs and widget
  state are the pages (nothing is run). The downloads keep each notebook as it is; its
  page (`page_notebook`) differs where a page without a kernel must: a live explorer's
  stored widgets would look like controls and do nothing, so it is its stored picture,
  with its text alternative and a line saying how to move it (`stored_pictures`); a figure
  the student's own my_init.py draws, which the student edition clears, is the one
  tinyinit's functions drew in the teacher's notebook, labelled so (`reference_figures`);
  a cell that answers a prediction is folded until opened (`fold_answers`); the comments
  that steer the notebook tests (`# NBVAL_...`) are left out (`hide_machinery`); and a
  note under the title says what running the notebook needs (`RUN_NOTE`);
* get_the_course.md: how to get the course with pip alone (`python -m tinyinit student`),
  and, where --repository (and --hub) say where, on Binder and the hub;
* index.md, written from the course: the three parts (core path, going further,
  appendix) and each notebook's estimated time from scripts/course_time.py, each
  title and learning goal ("After this notebook you can ...") from the notebook's
  first cells. The parts are the sidebar's sections and the order of previous/next:
  a part's notebooks by their number, core path first;
* the student edition in student/, the downloads of both editions;

then runs sphinx-build into the output folder (its doctrees stay in the work folder). The
site works offline: no page asks another host (site_src/course_site.py copies require.js,
and MathJax and the widget renderer, which `make site` installs from npm into
build/site-js). Repository, Binder and hub links appear only when --repository (and --hub)
say where.
"""

from __future__ import annotations

import argparse
import copy
import html
import importlib.util
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import nbformat

from tinyinit.course import student_edition

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "site_src"
WORK = ROOT / "build" / "site-work"
GOAL_MARK = "After this notebook you can"
TITLE = "tinyinit: variance propagation and initialization"
EDITIONS = ("student", "teacher")
GET = "get_the_course"  # the page that says how to get the course and run it
INSTALL = 'pip install "tinyinit[lab]"'
INTRO = {
    "student": (
        "The notebooks in reading order, with their stored outputs. The core path fits a "
        "module of 2 to 3 hours; the rest goes further. The exercises are yours to do, and "
        "to run the notebooks and move their sliders you need Python and two commands:\n\n"
        f"```bash\n{INSTALL}\npython -m tinyinit student tinyinit-course\n```\n\n"
        "The second writes every notebook and the `my_init.py` your answers go into; "
        f"[Get the course]({GET}.md) says the rest."
    ),
    "teacher": (
        "**Teacher's edition: the solutions are in.** The notebooks in reading order, with "
        "their stored outputs. The core path fits a module of 2 to 3 hours; the rest goes "
        "further. Each page's download menu gives the notebook (teacher's edition) and its "
        "student edition (exercises to do). The site for students is `make site`, which "
        "holds no solution. To run them and move the sliders, open them in JupyterLab "
        f"(`make lab`); students get their edition with pip ([Get the course]({GET}.md))."
    ),
}
# Under each page's title: what running its notebook needs.
RUN_NOTE = (
    "To run this notebook: `{install}`, then `python -m tinyinit student tinyinit-course` "
    "writes it with every other notebook and your `my_init.py` "
    f"([Get the course]({GET}.md){{launch}})."
)
PART_ORDER = ("core", "further", "appendix")
# The documentation pages of docs/, on the teacher's edition only: the teachers' pages say what
# the demonstrations show (the answers to the notebooks' predictions), and the developers'
# state the formulas the exercises ask students to derive. Each part: its caption, a line on
# what it holds, and its pages (paths in docs/ without .md), in the sidebar's order.
DOCS = ROOT / "docs"
DOC_PARTS = (
    (
        "For teachers",
        "Running the course: a plan for the session, the notebooks, the classroom and its "
        "checker, a hub, the presentation app, figures for slides and this site.",
        ("teaching/guide", "teaching/notebooks", "teaching/classroom", "teaching/jupyterhub",
         "teaching/presentation", "teaching/figures", "teaching/site"),
    ),
    (
        "For developers",
        "Working on tinyinit: its architecture, the reference, bad input, testing, the "
        "specification of every number drawn and mutation testing.",
        ("developing/architecture", "developing/reference", "developing/bad_input",
         "developing/testing", "spec", "mutation"),
    ),
)  # fmt: skip
# A page's link to a notebook of notebooks/ (../../notebooks/01_x.ipynb from docs/teaching/)
NOTEBOOK_LINK = re.compile(r"\]\((?:\.\./)+notebooks/([\w-]+\.ipynb)((?:#[^)]*)?)\)")


def _script(name: str):
    """A module of scripts/ (course_time, make_student), imported by path."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Page:
    """One notebook of the course: its file, its page's name, and what the index says of it."""

    source: Path
    name: str  # the Sphinx document name, which is the page's: 01_x -> 01_x.html
    title: str
    goal: str  # Markdown
    part: str = "core"
    minutes: int = 0

    @property
    def href(self) -> str:
        return f"{self.name}.html"


def reading_key(path: Path) -> tuple[int, str]:
    """Notebooks sort by their leading number (2 before 10); unnumbered ones come last.

    >>> sorted(["10_b.ipynb", "2_a.ipynb", "notes.ipynb"], key=lambda n: reading_key(Path(n)))
    ['2_a.ipynb', '10_b.ipynb', 'notes.ipynb']
    """
    match = re.match(r"(\d+)", path.name)
    return (int(match.group(1)) if match else sys.maxsize, path.name)


def title_and_goal(nb) -> tuple[str, str]:
    """The text of the first Markdown heading, and the paragraph stating the learning goal.

    Either is "" when the notebook has none (the index then uses the file name).
    """
    title, goal = "", ""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            if not title and re.match(r"#{1,6}\s", line):
                title = line.lstrip("#").strip()
        if not goal:
            for paragraph in re.split(r"\n\s*\n", cell.source):
                if GOAL_MARK in paragraph:
                    goal = paragraph.strip()
                    break
        if title and goal:
            break
    return title, goal


def course_pages(notebooks: Path) -> list[Page]:
    """The notebooks in reading order: core path, going further, appendix; by number in each."""
    course_time = _script("course_time")
    pages = []
    for source in sorted(Path(notebooks).glob("*.ipynb"), key=reading_key):
        nb = nbformat.read(source, as_version=4)
        title, goal = title_and_goal(nb)
        part, minutes = course_time.part(source), course_time.estimate_minutes(nb)
        pages.append(Page(source, source.stem, title or source.stem, goal, part, minutes))
    if not pages:
        raise FileNotFoundError(f"no notebooks (*.ipynb) in {notebooks}")
    return sorted(pages, key=lambda p: PART_ORDER.index(p.part))  # stable: numbers stay in order


def index_markdown(pages: list[Page], edition: str = "student") -> str:
    """index.md: per part, a heading, each notebook's link, time and goal, and a hidden
    toctree whose caption names the part in the sidebar."""
    course_time = _script("course_time")
    labels = course_time.PART_LABEL
    lines = [f"# {TITLE}", "", INTRO[edition], ""]
    lines += ["```{toctree}", ":hidden:", "", GET, "```", ""]
    for part in PART_ORDER:
        members = [p for p in pages if p.part == part]
        if not members:
            continue
        heading = labels[part]
        if part == "core":
            total = course_time.core_minutes({p.source: p.minutes for p in pages})
            heading += f": {total} minutes in all"
        lines += [f"## {heading}", ""]
        for page in members:
            goal = re.sub(r"\s*\n\s*", " ", page.goal)
            lines += [f"- **[{page.title}]({page.name}.ipynb)** ({page.minutes} min)", ""]
            if goal:
                lines += [f"  {goal}", ""]
        lines += ["```{toctree}", f":caption: {labels[part]}", ":hidden:", ""]
        lines += [page.name for page in members] + ["```", ""]
    if edition == "teacher":
        for caption, intro, names in DOC_PARTS:
            lines += [f"## {caption}", "", intro, ""]
            lines += ["```{toctree}", f":caption: {caption}", ":maxdepth: 1", ""]
            lines += [f"docs/{name}" for name in names] + ["```", ""]
    return "\n".join(lines)


def doc_page(text: str, depth: int) -> str:
    """A page of docs/ as the site reads it: its links to a notebook of notebooks/ lead to
    that notebook's page, `depth` folders up (the pages sit in docs/ and its folders, the
    notebooks' pages at the top)."""
    return NOTEBOOK_LINK.sub(lambda m: f"]({'../' * depth}{m.group(1)}{m.group(2)})", text)


def copy_docs(docs: Path, sources: Path) -> list[Path]:
    """Copy the pages DOC_PARTS lists from `docs` into `sources`/docs; return them."""
    copied = []
    for _, _, names in DOC_PARTS:
        for name in names:
            target = sources / "docs" / f"{name}.md"
            target.parent.mkdir(parents=True, exist_ok=True)
            text = (docs / f"{name}.md").read_text(encoding="utf-8")
            target.write_text(doc_page(text, name.count("/") + 1), encoding="utf-8")
            copied.append(target)
    return copied


# --- getting the course: pip, Binder, a hub -----------------------------------------------------

BRANCH = "main"  # the repository's branch that Binder and the hub open (course_site's too)


def repository_parts(repository: str) -> tuple[str, str]:
    """(owner, name) of a GitHub repository's address.

    >>> repository_parts("https://github.com/example-university/tinyinit")
    ('example-university', 'tinyinit')
    """
    parts = urlsplit(web_address("repository", repository))
    path = [p for p in parts.path.split("/") if p]
    if parts.netloc != "github.com" or len(path) != 2:
        raise ValueError(
            f"repository must be a GitHub repository's address, https://github.com/OWNER/NAME; "
            f"got {repository!r}"
        )
    return path[0], path[1].removesuffix(".git")


def binder_url(repository: str, path: str) -> str:
    """The Binder address that opens `path` of the repository in JupyterLab, as the pages'
    launch buttons do (sphinx-book-theme builds theirs the same way).

    >>> binder_url("https://github.com/example-university/tinyinit", "student")
    'https://mybinder.org/v2/gh/example-university/tinyinit/main?urlpath=lab/tree/student'
    """
    owner, name = repository_parts(repository)
    return f"https://mybinder.org/v2/gh/{owner}/{name}/{BRANCH}?urlpath=lab/tree/{path}"


def binder_badge(repository: str, path: str) -> str:
    """The README's Binder badge, in Markdown: `make binder-badge REPO=...` prints it."""
    return (
        f"[![Binder: the student edition](https://mybinder.org/badge_logo.svg)]"
        f"({binder_url(repository, path)})"
    )


def hub_url(hub: str, repository: str, path: str) -> str:
    """The nbgitpuller address that copies the repository into a hub user's home and opens
    `path` in it, as the pages' hub buttons do.

    >>> hub_url("https://hub.example.org", "https://github.com/u/tinyinit", "notebooks")
    'https://hub.example.org/hub/user-redirect/git-pull?repo=https%3A//github.com/u/tinyinit&urlpath=lab/tree/tinyinit/notebooks&branch=main'
    """
    from urllib.parse import quote

    _, name = repository_parts(repository)
    return (
        f"{web_address('hub', hub)}/hub/user-redirect/git-pull?repo={quote(repository)}"
        f"&urlpath=lab/tree/{name}/{path}&branch={BRANCH}"
    )


def get_the_course_markdown(
    repository: str | None = None, hub: str | None = None, repository_path: str = "notebooks"
) -> str:
    """get_the_course.md: the course with pip alone, one notebook, and (where the repository
    and hub are given) the course in the browser."""
    version = _package_version()
    lines = [
        "# Get the course",
        "",
        "Every page of this site is a notebook, shown as it was last run. To run the notebooks "
        "(answer the predictions, move the sliders, write and check your `my_init.py`), you "
        "need Python 3.10 or later and the `tinyinit` package with its JupyterLab extra.",
        "",
        "## The whole course, with pip",
        "",
        "In a terminal:",
        "",
        "```bash",
        "python -m venv tinyinit-env              # a virtual environment of its own",
        "source tinyinit-env/bin/activate         # on Windows: tinyinit-env\\Scripts\\activate",
        INSTALL,
        "python -m tinyinit student tinyinit-course",
        "jupyter lab tinyinit-course",
        "```",
        "",
        "`python -m tinyinit student` writes the student edition into the folder you name: every "
        "notebook of this site, each exercise waiting for your answer, and `my_init.py`, the "
        "functions you write, stubbed. Run again over the same folder, it never writes over "
        "your work: it names the files you changed and stops. In that folder, "
        "`python -m tinyinit check my_init.py` runs the module's tests on your functions.",
        "",
    ]
    if repository:
        lines += [
            "If the package is not on your package index, pip installs it from the course's "
            "repository:",
            "",
            "```bash",
            f'pip install "tinyinit[lab] @ git+{repository}"',
            "```",
            "",
        ]
    lines += [
        "Your teacher may hand out the package as a file, a wheel: pip installs it the same "
        "way, with the extra after its name:",
        "",
        "```bash",
        f'pip install "./tinyinit-{version}-py3-none-any.whl[lab]"',
        "```",
        "",
        "## One notebook",
        "",
        "The download menu of each page gives its notebook (`.ipynb`) and `my_init.py`. Put "
        f"both in one folder; the notebook needs the package, `{INSTALL}`, and runs in "
        "JupyterLab (`jupyter lab` in that folder).",
        "",
    ]
    if repository:
        lines += [
            "## In the browser, with nothing to install",
            "",
            "Each page's launch button opens its notebook, and the links below open the course:",
            "",
            f"- [on Binder]({binder_url(repository, repository_path)}), free and public, "
            "for a session (what you write is lost when it ends: download it);",
        ]
        if hub:
            lines += [
                f"- [on the course's JupyterHub]({hub_url(hub, repository, repository_path)}), "
                "where your work stays.",
            ]
        lines += [""]
    return "\n".join(lines)


def _package_version() -> str:
    """tinyinit's version, as installed from pyproject.toml (what a wheel of it is named with)."""
    from importlib.metadata import version

    return version("tinyinit")


# --- a page without a kernel: what differs from the notebook ------------------------------------

# The figure a correct my_init.py draws, where the student edition cleared the student's.
REFERENCE_LINE = "Drawn with tinyinit's functions; in your notebook, yours draw it."
# A cell that answers a prediction, folded until opened (MyST-NB's hide-cell, these prompts).
ANSWER_PROMPTS = {
    "code_prompt_show": "The answer: open it once you have made your prediction",
    "code_prompt_hide": "Fold the answer away",
}
FOLDED_TAG = "hide-cell"
# The comments that steer the notebook tests (nbval), not the lesson.
MACHINERY = re.compile(r"^[ \t]*#[ \t]*NBVAL_[A-Z_]+[ \t]*\n?", re.M)
IMAGES = ("image/png", "image/jpeg")


def reference_figure_html(data: str, mime: str, alt: str) -> str:
    """A figure of the teacher's notebook as a student page shows it: the picture with its
    text alternative, and the line saying whose functions drew it."""
    return (
        '<figure class="tinyinit-reference-figure">'
        + f'<img src="data:{mime};base64,{"".join(data).strip()}" alt="{html.escape(alt)}">'
        + f"<figcaption>{html.escape(REFERENCE_LINE)}</figcaption></figure>"
    )


def reference_figures(nb, teacher) -> int:
    """Give each cell of the student notebook `nb` that runs the student's my_init.py, and whose
    outputs the edition cleared, the figures its cell (the same cell id) drew in the `teacher`
    notebook, with tinyinit's functions: `reference_figure_html`, its text alternative the
    teacher's figure's. Returns how many figures were given."""
    drawn = {cell.get("id"): cell for cell in teacher.cells if cell.cell_type == "code"}
    given = 0
    for cell in nb.cells:
        source = drawn.get(cell.get("id"))
        if cell.cell_type != "code" or cell.outputs or source is None:
            continue
        if not student_edition.runs_my_init(source):
            continue
        for output in source.get("outputs", []):
            mime = next((m for m in IMAGES if m in output.get("data", {})), None)
            if mime is None:
                continue
            alt = (output.get("metadata", {}).get(mime) or {}).get("alt") or ""
            markup = reference_figure_html(output["data"][mime], mime, alt)
            cell.outputs.append(
                nbformat.v4.new_output(
                    "display_data", data={"text/html": markup, "text/plain": alt}
                )
            )
            given += 1
    return given


def fold_answers(nb) -> int:
    """Fold each cell that answers a prediction (its code and what it shows) until the reader
    opens it: the prediction is asked above it, its answer is one click away. Returns how
    many cells were folded."""
    folded = 0
    for cell in nb.cells:
        if cell.cell_type == "code" and student_edition.answers_a_prediction(cell):
            tags = cell.metadata.setdefault("tags", [])
            if FOLDED_TAG not in tags:
                tags.append(FOLDED_TAG)
            cell.metadata.setdefault("mystnb", {}).update(ANSWER_PROMPTS)
            folded += 1
    return folded


def hide_machinery(nb) -> None:
    """Leave out of each code cell the lines that only steer the notebook tests (nbval)."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.source = MACHINERY.sub("", cell.source)


def run_note(repository: str | None) -> str:
    """The line under a page's title: what running its notebook needs."""
    launch = "; the launch button opens it in the browser" if repository else ""
    return RUN_NOTE.format(install=INSTALL, launch=launch)


def page_notebook(nb, teacher=None, repository: str | None = None):
    """The notebook as its page shows it (see the module's docstring). `teacher`: for a
    student notebook, the teacher's executed one, whose figures its cleared cells show."""
    nb = copy.deepcopy(nb)
    if teacher is not None:
        reference_figures(nb, teacher)
    fold_answers(nb)
    hide_machinery(nb)
    stored_pictures(nb)
    first = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"), None)
    note = nbformat.v4.new_markdown_cell(run_note(repository), id="tinyinit-run-note")
    nb.cells.insert(0 if first is None else first + 1, note)
    return nb


# --- the live explorers, on a page without a kernel: their stored picture ---------------------

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
# The explorers, by the class of their layout: what their picture shows.
EXPLORERS = {
    "tinyinit-explorer": "Plot of the mean square per layer",
    "tinyinit-residual": "Plot of the residual stream's variance after each block",
}
STORED_LINE = "A stored picture: to move it, run the notebook"


def _words(markup: str) -> str:
    """The text of an HTML fragment, tags out, entities read, spaces collapsed."""
    text = re.sub(r"<br\s*/?>", "; ", markup)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", text))).strip()


def stored_picture_html(picture: str, alt: str, caption: str = "") -> str:
    """A stored explorer as a page shows it: its picture (a data: URL) with its text
    alternative, the caption it had above it, and the line saying it is a picture."""
    return (
        '<figure class="tinyinit-stored-picture">'
        + (f'<div class="tinyinit-stored-caption">{caption}</div>' if caption else "")
        + f'<img src="{html.escape(picture)}" alt="{html.escape(alt)}">'
        + f'<figcaption>{html.escape(STORED_LINE)} (<a href="{GET}.html">Get the course</a>).'
        + "</figcaption></figure>"
    )


def stored_pictures(nb) -> int:
    """Replace, in `nb`, each live explorer's output (its widgets) by its stored picture
    (`stored_picture_html`): the picture its figure kept for pages without a kernel, and as
    its text alternative what the explorer's readout said. The widget models only those
    outputs showed leave the notebook's widget state. Returns how many were replaced."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    widget_models = student_edition._widget_models
    replaced = []
    for cell in nb.cells:
        for k, output in enumerate(cell.get("outputs", [])):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                continue
            classes = state.get(view["model_id"], {}).get("state", {}).get("_dom_classes", [])
            kind = next((EXPLORERS[c] for c in classes if c in EXPLORERS), None)
            if kind is None:
                continue
            models = [state[m]["state"] for m in widget_models([output], state) if m in state]
            pictures = [m["_data_url"] for m in models if m.get("_data_url")]
            if not pictures:
                continue
            said = [
                _words(m["value"])
                for m in models
                if "tinyinit-readout" in m.get("_dom_classes", []) and m.get("value")
            ]
            captions = [
                m["value"] for m in models if "tinyinit-caption" in m.get("_dom_classes", [])
            ]
            alt = f"{kind}: " + "; ".join(said) if said else kind
            cell.outputs[k] = nbformat.v4.new_output(
                "display_data",
                data={"text/html": stored_picture_html(pictures[0], alt, "".join(captions[:1])),
                      "text/plain": alt},
            )  # fmt: skip
            replaced.append(output)
    if replaced:
        shown = widget_models([o for c in nb.cells for o in c.get("outputs", [])], state)
        for model in widget_models(replaced, state) - shown:
            state.pop(model, None)
    return len(replaced)


# --- assembling and building -----------------------------------------------------------------


def assemble(
    notebooks: Path,
    sources: Path,
    edition: str = "student",
    repository: str | None = None,
    hub: str | None = None,
    repository_path: str = "notebooks",
) -> list[Page]:
    """Write into `sources` what Sphinx reads: the edition's pages (`page_notebook`, and the
    Python files beside them), index.md and get_the_course.md, the student edition in
    student/, and in downloads/ the pages' notebooks as they are (course_site serves them as
    the pages' downloads)."""
    if edition not in EDITIONS:
        raise ValueError(f"edition must be one of {', '.join(EDITIONS)}; got {edition!r}")
    pages = course_pages(notebooks)
    if sources.exists():
        shutil.rmtree(sources)
    sources.mkdir(parents=True)
    student = sources / "student"
    student_edition.make_student(Path(notebooks), student, force=True)
    origin = student if edition == "student" else Path(notebooks)
    (sources / "downloads").mkdir()
    for page in pages:
        shutil.copy2(origin / page.source.name, sources / "downloads" / page.source.name)
        nb = nbformat.read(origin / page.source.name, as_version=4)
        teacher = nbformat.read(page.source, as_version=4) if edition == "student" else None
        nbformat.write(page_notebook(nb, teacher, repository), sources / page.source.name)
    for helper in origin.glob("*.py"):  # my_init.py: a notebook's link to it resolves
        shutil.copy2(helper, sources / helper.name)
    (sources / "index.md").write_text(index_markdown(pages, edition), encoding="utf-8")
    get = get_the_course_markdown(repository, hub, repository_path)
    (sources / f"{GET}.md").write_text(get, encoding="utf-8")
    if edition == "teacher":
        copy_docs(DOCS, sources)
    return pages


def web_address(name: str, url: str) -> str:
    """`url` if it is an http(s) address with a host, else a ValueError naming `name`."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or " " in url:
        raise ValueError(f"{name} must be an http:// or https:// address; got {url!r}")
    return url.rstrip("/")


def build_site(
    notebooks: Path,
    output: Path,
    *,
    edition: str = "student",
    repository: str | None = None,
    hub: str | None = None,
    repository_path: str = "notebooks",
    work: Path = WORK,
    quiet: bool = False,
    widget_renderer: Path | None = None,
) -> list[Page]:
    """Render the `edition` of notebooks/*.ipynb into output/ (index.html, a page per
    notebook, search); return the pages in reading order.

    repository: the GitHub repository the repository and Binder links open (its notebooks
    in `repository_path`); hub: a JupyterHub they open through nbgitpuller (it needs the
    repository too). Without them, those links are left out.

    `work` holds the Sphinx sources (src/), its output (html/, then moved to `output`) and
    MyST-NB's images (jupyter_execute/, which it writes beside its output folder).
    """
    from sphinx.cmd.build import build_main

    if repository is not None:
        repository = web_address("repository", repository)
    if hub is not None:
        hub = web_address("hub", hub)
    work = Path(work).resolve()
    pages = assemble(Path(notebooks), work / "src", edition, repository, hub, repository_path)
    html_folder = work / "html"
    shutil.rmtree(html_folder, ignore_errors=True)
    # The doctrees (Sphinx's pickled pages) stay in the work folder, not in the one to publish.
    args = ["-b", "html", "-c", str(CONF), "-d", str(work / "doctrees"), "-E", "-W"]
    args += ["--keep-going", "-j", "1"]
    args += ["-q"] if quiet else []
    settings = {
        "site_edition": edition,
        "site_repository": repository or "",
        "site_hub": hub or "",
        "site_repository_path": repository_path,
    }
    if widget_renderer is not None:
        settings["site_widget_renderer"] = str(Path(widget_renderer).resolve())
    for name, value in settings.items():
        args += ["-D", f"{name}={value}"]
    status = build_main([*args, str(work / "src"), str(html_folder)])
    if status != 0:
        raise RuntimeError(f"sphinx-build failed with status {status} (its messages are above)")
    output = Path(output)
    shutil.rmtree(output, ignore_errors=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(html_folder, output)
    (output / ".buildinfo").unlink(missing_ok=True)  # Sphinx's note to itself, not a page
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--notebooks", type=Path, default=ROOT / "notebooks", help="folder of .ipynb files"
    )
    parser.add_argument(
        "--edition",
        choices=EDITIONS,
        default="student",
        help="student (default: the public site, no solutions) or teacher (solutions in, "
        "labelled on every page)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="folder to write into (default: site/ for the student edition, site-teacher/ "
        "for the teacher's)",
    )
    parser.add_argument(
        "--repository",
        default=None,
        metavar="URL",
        help="the GitHub repository the repository and Binder buttons open "
        "(default: none, and no such buttons)",
    )
    parser.add_argument(
        "--repository-path",
        default="notebooks",
        metavar="PATH",
        help="where the notebooks are in that repository (default: %(default)s)",
    )
    parser.add_argument(
        "--hub", default=None, metavar="URL", help="a JupyterHub to launch the notebooks on"
    )
    parser.add_argument(
        "--work", type=Path, default=WORK, help="folder for the Sphinx sources and build"
    )
    parser.add_argument(
        "--widget-renderer",
        type=Path,
        default=None,
        help="folder holding @jupyter-widgets/html-manager's embed-amd.js "
        "(default: build/site-js, where `make site` installs it)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="only warnings and errors")
    parser.add_argument(
        "--binder-badge",
        metavar="PATH",
        default=None,
        help="print the README's Binder badge, which opens PATH of --repository (the student "
        "edition that Binder's postBuild writes: student), and build nothing",
    )
    args = parser.parse_args(argv)
    if args.binder_badge is not None:
        if args.repository is None:
            parser.error("argument --binder-badge: needs --repository")
        try:
            print(binder_badge(args.repository, args.binder_badge))
        except ValueError as error:
            parser.error(f"argument --repository: {error}")
        return 0
    output = args.output or ROOT / ("site" if args.edition == "student" else "site-teacher")
    for name in ("repository", "hub"):
        value = getattr(args, name)
        if value is not None:
            try:
                web_address(name, value)
            except ValueError as error:
                parser.error(f"argument --{name}: {error}")
    start = time.perf_counter()
    pages = build_site(
        args.notebooks,
        output,
        edition=args.edition,
        repository=args.repository,
        hub=args.hub,
        repository_path=args.repository_path,
        work=args.work,
        quiet=args.quiet,
        widget_renderer=args.widget_renderer,
    )
    seconds = time.perf_counter() - start
    print(
        f"wrote the {args.edition} edition: {len(pages)} pages and {output / 'index.html'} "
        f"in {seconds:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

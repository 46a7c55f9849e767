"""Build the course as a static web site with Sphinx, MyST-NB and sphinx-book-theme.

    python scripts/build_site.py                     # notebooks/*.ipynb -> site/
    python scripts/build_site.py --output /tmp/site  # elsewhere

The stack is Jupyter Book 1's, with its configuration in site_src/conf.py. This
script assembles what Sphinx reads into build/site-work/src (or --work):

* the notebooks, as they were last executed: their stored outputs and widget state
  are the pages (nothing is run);
* index.md, written from the course: the three parts (core path, going further,
  appendix) and each notebook's estimated time from scripts/course_time.py, each
  title and learning goal ("After this notebook you can ...") from the notebook's
  first cells. The parts are the sidebar's sections and the order of previous/next:
  a part's notebooks by their number, core path first;
* the student edition (scripts/make_student.py) in student/, offered by each page's
  download menu beside the teacher's notebook;

then runs sphinx-build into the output folder. The site works offline: no page asks
another host (site_src/course_site.py copies MathJax, require.js and the widget
renderer, which `make site` installs from npm into build/site-js).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "site_src"
WORK = ROOT / "build" / "site-work"
GOAL_MARK = "After this notebook you can"
TITLE = "tinyinit: variance propagation and initialization"
INTRO = (
    "The notebooks in reading order, with their stored outputs. The core path fits a module "
    "of 2 to 3 hours; the rest goes further. Each page's download menu gives the notebook "
    "and its student edition (exercises to do); its launch menu opens it on Binder or on a "
    "JupyterHub. To run them and move the sliders here, open them in JupyterLab "
    "(`make lab`)."
)
PART_ORDER = ("core", "further", "appendix")


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


def index_markdown(pages: list[Page]) -> str:
    """index.md: per part, a heading, each notebook's link, time and goal, and a hidden
    toctree whose caption names the part in the sidebar."""
    course_time = _script("course_time")
    labels = course_time.PART_LABEL
    lines = [f"# {TITLE}", "", INTRO, ""]
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
    return "\n".join(lines)


def assemble(notebooks: Path, sources: Path) -> list[Page]:
    """Write into `sources` what Sphinx reads: notebooks (and the Python files beside them),
    index.md, the student edition."""
    pages = course_pages(notebooks)
    if sources.exists():
        shutil.rmtree(sources)
    sources.mkdir(parents=True)
    for page in pages:
        shutil.copy2(page.source, sources / page.source.name)
    for helper in Path(notebooks).glob("*.py"):  # my_init.py: a notebook's link to it resolves
        shutil.copy2(helper, sources / helper.name)
    (sources / "index.md").write_text(index_markdown(pages), encoding="utf-8")
    _script("make_student").make_student(Path(notebooks), sources / "student", force=True)
    return pages


def build_site(
    notebooks: Path,
    output: Path,
    *,
    work: Path = WORK,
    quiet: bool = False,
    widget_renderer: Path | None = None,
) -> list[Page]:
    """Render notebooks/*.ipynb into output/ (index.html, a page per notebook, search);
    return the pages in reading order.

    `work` holds the Sphinx sources (src/), its output (html/, then moved to `output`) and
    MyST-NB's images (jupyter_execute/, which it writes beside its output folder).
    """
    from sphinx.cmd.build import build_main

    work = Path(work).resolve()
    pages = assemble(Path(notebooks), work / "src")
    html = work / "html"
    shutil.rmtree(html, ignore_errors=True)
    args = ["-b", "html", "-c", str(CONF), "-E", "-W", "--keep-going", "-j", "1"]
    args += ["-q"] if quiet else []
    if widget_renderer is not None:
        args += ["-D", f"site_widget_renderer={Path(widget_renderer).resolve()}"]
    status = build_main([*args, str(work / "src"), str(html)])
    if status != 0:
        raise RuntimeError(f"sphinx-build failed with status {status} (its messages are above)")
    output = Path(output)
    shutil.rmtree(output, ignore_errors=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(html, output)
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--notebooks", type=Path, default=ROOT / "notebooks", help="folder of .ipynb files"
    )
    parser.add_argument("--output", type=Path, default=ROOT / "site", help="folder to write into")
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
    args = parser.parse_args(argv)
    start = time.perf_counter()
    pages = build_site(
        args.notebooks,
        args.output,
        work=args.work,
        quiet=args.quiet,
        widget_renderer=args.widget_renderer,
    )
    seconds = time.perf_counter() - start
    print(f"wrote {len(pages)} pages and {args.output / 'index.html'} in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

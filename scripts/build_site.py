"""Render the course to a static web site: every notebook as HTML, and an index in reading order.

    python scripts/build_site.py                     # notebooks/*.ipynb -> site/
    python scripts/build_site.py --output /tmp/site  # elsewhere

Each page is the notebook as it was last executed (its stored outputs; nothing
is re-run), with its images embedded in the page and its stored widget state, so
sliders and live figures show as they were left. index.html lists the notebooks
in reading order (by their number, 01 before 02 before 10), each with the title
from its first heading, its part of the course (core path, going further,
appendix), its estimated time and its learning goal ("After this notebook you can ...").

The site works offline: no page asks anything of another host. What the pages
need is copied into static/ from installed packages at build time: MathJax 2
from jupyter-server-mathjax, require.js from Voila, ipympl's figure widget from
ipympl, and the widget renderer (@jupyter-widgets/html-manager) from the npm
package that `make site` installs into build/site-js (or --widget-renderer).
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from jupyter_core.paths import jupyter_path
from nbconvert import HTMLExporter
from nbconvert.filters import markdown2html_mistune

ROOT = Path(__file__).resolve().parent.parent
GOAL_MARK = "After this notebook you can"
WIDGET_RENDERER = (
    ROOT / "build" / "site-js" / "node_modules" / "@jupyter-widgets" / "html-manager" / "dist"
)
MATHJAX_URL = "static/mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
# Where the widget renderer finds the modules of widgets it does not bundle (ipympl's figure):
# here, rather than on a CDN.
REQUIRE_PATHS = (
    '<script>require.config({paths: {"jupyter-matplotlib": "static/jupyter-matplotlib/index"}});'
    "</script>"
)


def _course_time():
    path = ROOT / "scripts" / "course_time.py"
    spec = importlib.util.spec_from_file_location("course_time", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


INDEX_TEMPLATE = """\
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<script type="text/x-mathjax-config">
MathJax.Hub.Config({{
  tex2jax: {{inlineMath: [["$", "$"], ["\\\\(", "\\\\)"]], processEscapes: true}}
}});
</script>
<script src="{mathjax_url}"></script>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 52rem; margin: 2rem auto;
       padding: 0 1rem; line-height: 1.5; color: #222; }}
ol.notebooks > li {{ margin: 0 0 1.2rem 0; }}
ol.notebooks a {{ font-size: 1.2rem; font-weight: 600; }}
.goal {{ margin: 0.3rem 0 0 0; color: #444; }}
.goal p {{ margin: 0; }}
.part {{ color: #555; font-size: 0.95rem; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p>{intro}</p>
{parts}
</body>
</html>
"""

ITEM_TEMPLATE = """\
<li value="{number}"><a class="page" href="{href}">{title}</a>
<span class="part">({label}, {minutes} min)</span>
<div class="goal">{goal}</div></li>"""

PART_HEADINGS = {
    "core": "Core path: {minutes} minutes in all",
    "further": "Going further",
    "appendix": "Appendix",
}


@dataclass(frozen=True)
class Page:
    """One notebook of the course: where it is, where its page goes, what the index says."""

    source: Path
    href: str
    title: str
    goal_html: str
    part: str = "core"
    minutes: int = 0


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


def link_pages(markup: str) -> str:
    """Links between notebooks (`02_x.ipynb`) point at their pages (`02_x.html`).

    >>> link_pages('<a href="02_hand.ipynb#top">02</a> <a href="https://x.org/a.ipynb">x</a>')
    '<a href="02_hand.html#top">02</a> <a href="https://x.org/a.ipynb">x</a>'
    """
    return re.sub(r'href="([\w.-]+)\.ipynb(#[^"]*)?"', r'href="\1.html\2"', markup)


def _installed(*parts: str) -> Path:
    """The first installed Jupyter data file share/jupyter/<parts>."""
    for folder in jupyter_path(*parts):
        if Path(folder).exists():
            return Path(folder)
    raise FileNotFoundError(f"share/jupyter/{'/'.join(parts)} is not installed")


def copy_static(output: Path, widget_renderer: Path = WIDGET_RENDERER) -> None:
    """Copy into output/static/ what the pages load: MathJax, require.js, the widget renderer."""
    import jupyter_server_mathjax

    static = Path(output) / "static"
    static.mkdir(parents=True, exist_ok=True)
    mathjax = Path(jupyter_server_mathjax.__file__).parent / "static"
    shutil.copytree(mathjax, static / "mathjax", dirs_exist_ok=True)
    shutil.copy2(_installed("voila", "templates", "base", "static", "require.min.js"), static)
    matplotlib = _installed("nbextensions", "jupyter-matplotlib", "index.js")
    (static / "jupyter-matplotlib").mkdir(exist_ok=True)
    shutil.copy2(matplotlib, static / "jupyter-matplotlib" / "index.js")
    renderer = Path(widget_renderer) / "embed-amd.js"
    if not renderer.exists():
        raise FileNotFoundError(
            f"widget_renderer: no embed-amd.js in {widget_renderer}; `make site` installs it "
            "(npm package @jupyter-widgets/html-manager)"
        )
    # The renderer loads its fonts and chunks from beside itself: copy its folder (no source maps).
    shutil.copytree(
        widget_renderer,
        static / "html-manager",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("*.map", "*.d.ts"),
    )


def export_notebook(source: Path, destination: Path) -> None:
    """Write the notebook as one HTML file: stored outputs, embedded images, widget state,
    and every script from static/ (copy_static), none from another host."""
    nb = nbformat.read(source, as_version=4)
    exporter = HTMLExporter(
        template_name="lab",
        embed_images=True,
        mathjax_url=MATHJAX_URL,
        require_js_url="static/require.min.js",
        widget_renderer_url="static/html-manager/embed-amd.js",
    )
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": source.stem}})
    require = '<script src="static/require.min.js"></script>'
    if require in body:
        body = body.replace(require, require + "\n" + REQUIRE_PATHS, 1)
    destination.write_text(link_pages(body), encoding="utf-8")


def build_site(
    notebooks: Path, output: Path, *, quiet: bool = False, widget_renderer: Path = WIDGET_RENDERER
) -> list[Page]:
    """Render notebooks/*.ipynb into output/, plus output/index.html; return the pages in order."""
    sources = sorted(Path(notebooks).glob("*.ipynb"), key=reading_key)
    if not sources:
        raise FileNotFoundError(f"no notebooks (*.ipynb) in {notebooks}")
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    copy_static(output, widget_renderer)
    course_time = _course_time()
    pages = []
    for i, source in enumerate(sources, 1):
        if not quiet:
            print(f"[{i}/{len(sources)}] {source.name}", file=sys.stderr)
        href = source.stem + ".html"
        export_notebook(source, output / href)
        nb = nbformat.read(source, as_version=4)
        title, goal = title_and_goal(nb)
        goal_html = link_pages(markdown2html_mistune(goal)) if goal else ""
        part, minutes = course_time.part(source), course_time.estimate_minutes(nb)
        pages.append(Page(source, href, title or source.stem, goal_html, part, minutes))
    sections = []
    for part, heading in PART_HEADINGS.items():
        members = [(i, p) for i, p in enumerate(pages, 1) if p.part == part]
        if not members:
            continue
        items = "\n".join(
            ITEM_TEMPLATE.format(
                number=i,
                href=html.escape(p.href),
                title=html.escape(p.title),
                label=course_time.PART_LABEL[p.part].lower(),
                minutes=p.minutes,
                goal=p.goal_html,
            )
            for i, p in members
        )
        total = sum(p.minutes for _, p in members)
        sections.append(
            f"<h2>{html.escape(heading.format(minutes=total))}</h2>\n"
            f'<ol class="notebooks">\n{items}\n</ol>'
        )
    index = INDEX_TEMPLATE.format(
        title="tinyinit: variance propagation and initialization",
        intro="The notebooks in reading order, with their stored outputs. The core path fits a "
        "module of 2 to 3 hours; the rest goes further. "
        "To run them and move the sliders, open them in JupyterLab (<code>make lab</code>).",
        parts="\n".join(sections),
        mathjax_url=MATHJAX_URL,
    )
    (output / "index.html").write_text(index, encoding="utf-8")
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--notebooks", type=Path, default=ROOT / "notebooks", help="folder of .ipynb files"
    )
    parser.add_argument("--output", type=Path, default=ROOT / "site", help="folder to write into")
    parser.add_argument(
        "--widget-renderer",
        type=Path,
        default=WIDGET_RENDERER,
        help="folder holding @jupyter-widgets/html-manager's embed-amd.js",
    )
    args = parser.parse_args(argv)
    pages = build_site(args.notebooks, args.output, widget_renderer=args.widget_renderer)
    print(f"wrote {len(pages)} pages and {args.output / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Render the course to a static web site: every notebook as HTML, and an index in reading order.

    python scripts/build_site.py                     # notebooks/*.ipynb -> site/
    python scripts/build_site.py --output /tmp/site  # elsewhere

Each page is the notebook as it was last executed (its stored outputs; nothing
is re-run), with its images embedded in the page and its stored widget state, so
sliders and live figures show as they were left. index.html lists the notebooks
in reading order (by their number, 01 before 02 before 10), each with the title
from its first heading and its learning goal ("After this notebook you can ...").
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter
from nbconvert.filters import markdown2html_mistune

ROOT = Path(__file__).resolve().parent.parent
GOAL_MARK = "After this notebook you can"

INDEX_TEMPLATE = """\
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<script>
window.MathJax = {{tex: {{inlineMath: [["$", "$"], ["\\\\(", "\\\\)"]]}}}};
</script>
<script async src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 52rem; margin: 2rem auto;
       padding: 0 1rem; line-height: 1.5; color: #222; }}
ol.notebooks > li {{ margin: 0 0 1.2rem 0; }}
ol.notebooks a {{ font-size: 1.2rem; font-weight: 600; }}
.goal {{ margin: 0.3rem 0 0 0; color: #444; }}
.goal p {{ margin: 0; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p>{intro}</p>
<ol class="notebooks">
{items}
</ol>
</body>
</html>
"""

ITEM_TEMPLATE = """\
<li><a href="{href}">{title}</a>
<div class="goal">{goal}</div></li>"""


@dataclass(frozen=True)
class Page:
    """One notebook of the course: where it is, where its page goes, what the index says."""

    source: Path
    href: str
    title: str
    goal_html: str


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


def export_notebook(source: Path, destination: Path) -> None:
    """Write the notebook as one HTML file: stored outputs, embedded images, widget state."""
    nb = nbformat.read(source, as_version=4)
    exporter = HTMLExporter(template_name="lab", embed_images=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": source.stem}})
    destination.write_text(body, encoding="utf-8")


def build_site(notebooks: Path, output: Path, *, quiet: bool = False) -> list[Page]:
    """Render notebooks/*.ipynb into output/, plus output/index.html; return the pages in order."""
    sources = sorted(Path(notebooks).glob("*.ipynb"), key=reading_key)
    if not sources:
        raise FileNotFoundError(f"no notebooks (*.ipynb) in {notebooks}")
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    pages = []
    for i, source in enumerate(sources, 1):
        if not quiet:
            print(f"[{i}/{len(sources)}] {source.name}", file=sys.stderr)
        href = source.stem + ".html"
        export_notebook(source, output / href)
        title, goal = title_and_goal(nbformat.read(source, as_version=4))
        goal_html = markdown2html_mistune(goal) if goal else ""
        pages.append(Page(source, href, title or source.stem, goal_html))
    items = "\n".join(
        ITEM_TEMPLATE.format(href=html.escape(p.href), title=html.escape(p.title), goal=p.goal_html)
        for p in pages
    )
    index = INDEX_TEMPLATE.format(
        title="tinyinit: variance propagation and initialization",
        intro="The notebooks in reading order, with their stored outputs. "
        "To run them and move the sliders, open them in JupyterLab (<code>make lab</code>).",
        items=items,
    )
    (output / "index.html").write_text(index, encoding="utf-8")
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--notebooks", type=Path, default=ROOT / "notebooks", help="folder of .ipynb files"
    )
    parser.add_argument("--output", type=Path, default=ROOT / "site", help="folder to write into")
    args = parser.parse_args(argv)
    pages = build_site(args.notebooks, args.output)
    print(f"wrote {len(pages)} pages and {args.output / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the course site adds to Sphinx, MyST-NB and sphinx-book-theme.

* the edition (`site_edition`, set by scripts/build_site.py): the student edition, the
  public site, or the teacher's, which says so on every page (a banner, the title, its
  download labelled "teacher's edition, with solutions");
* the repository, Binder and hub buttons, only where `site_repository` (and `site_hub`)
  say where: a button that opens a placeholder is worse than none;
* offline assets: MathJax 3 and the widget renderer (npm's mathjax and
  @jupyter-widgets/html-manager, `make site` installs them), require.js (Voila), ipympl's
  and anywidget's widget modules: copied into _static, so that no page asks another host;
* figure alt text: MyST-NB keeps an image output's width and height from its metadata but
  not its `alt`; tinyinit.views.figures.show stores the figure's text alternative there, and
  `image_alt` puts it on the <img>;
* the downloads: each page's notebook as the edition has it (build_site's downloads/, not
  the page's source, whose live explorers are stored pictures), and in the download menu
  the student's my_init.py, on the teacher's edition the student edition, and what the
  notebook needs to run (tinyinit[lab], and the page that says how to get it);
* a folded answer (MyST-NB's hidden cell): its summary is named by the words it shows,
  not by MyST-NB's "Toggle hidden content" (WCAG 2.5.3, label in name).
"""

from __future__ import annotations

import hashlib
import html
import json
import shutil
from binascii import a2b_base64
from pathlib import Path

from docutils import nodes
from jupyter_core.paths import jupyter_path
from myst_nb.sphinx_ import HideCodeCellNode
from sphinx.application import Sphinx

ROOT = Path(__file__).resolve().parent.parent
WIDGET_RENDERER = (
    ROOT / "build" / "site-js" / "node_modules" / "@jupyter-widgets" / "html-manager" / "dist"
)
# What the pages load of MathJax: the TeX-to-SVG component with every TeX extension in it
# (nothing fetched on demand) and the safe-mode one that mathjax_config.js asks for.
MATHJAX = ROOT / "build" / "site-js" / "node_modules" / "mathjax" / "es5"
MATHJAX_FILES = ("tex-svg-full.js", "ui/safe.js")
STUDENT = "student"  # the student edition's folder, in the sources and in the site
DOWNLOADS = "downloads"  # the pages' notebooks as the edition has them, in the sources
GET = "get_the_course"  # scripts/build_site.py writes this page: how to get the course
NEEDS = "tinyinit[lab]"  # what a downloaded notebook needs installed
TEACHER_BANNER = (
    "Teacher's edition: the solutions are in these pages and their downloads. "
    "The site for students is the student edition (make site)."
)


def configure_edition(app: Sphinx, config) -> None:
    """The theme's options for this edition and these addresses (after -D settings apply)."""
    options = dict(config.html_theme_options)
    repository, hub = config.site_repository, config.site_hub
    options["use_repository_button"] = bool(repository)
    if repository:
        launch = {"binderhub_url": "https://mybinder.org", "notebook_interface": "jupyterlab"}
        if hub:
            launch["jupyterhub_url"] = hub
        options.update(
            repository_url=repository,
            repository_branch="main",
            path_to_docs=config.site_repository_path,
            launch_buttons=launch,
        )
    else:  # Binder and nbgitpuller open a repository: without one, no launch button at all
        options["launch_buttons"] = {}
    if config.site_edition == "teacher":
        options["announcement"] = TEACHER_BANNER
        config.html_title = f"{config.html_title} (teacher's edition)"
    config.html_theme_options = options


def _installed(*parts: str) -> Path:
    """The first installed Jupyter data file or folder share/jupyter/<parts>."""
    for folder in jupyter_path(*parts):
        if Path(folder).exists():
            return Path(folder)
    raise FileNotFoundError(f"share/jupyter/{'/'.join(parts)} is not installed")


def copy_offline_assets(app: Sphinx) -> None:
    """Copy into _static what the pages load beside the theme's own files."""
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    mathjax = Path(app.config.site_mathjax)
    for name in MATHJAX_FILES:
        if not (mathjax / name).exists():
            raise FileNotFoundError(
                f"site_mathjax: no {name} in {mathjax}; "
                "`make site` installs it (npm package mathjax)"
            )
        (static / "mathjax" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(mathjax / name, static / "mathjax" / name)
    shutil.copy2(_installed("voila", "templates", "base", "static", "require.min.js"), static)
    for module, source in [
        ("jupyter-matplotlib", _installed("nbextensions", "jupyter-matplotlib", "index.js")),
        ("anywidget", _installed("nbextensions", "anywidget", "index.js")),
    ]:
        (static / module).mkdir(exist_ok=True)
        shutil.copy2(source, static / module / "index.js")
    renderer = Path(app.config.site_widget_renderer)
    if not (renderer / "embed-amd.js").exists():
        raise FileNotFoundError(
            f"site_widget_renderer: no embed-amd.js in {renderer}; `make site` installs it "
            "(npm package @jupyter-widgets/html-manager)"
        )
    # The renderer loads its fonts and chunks from beside itself: its folder, less source maps.
    shutil.copytree(
        renderer,
        static / "html-manager",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("*.map", "*.d.ts"),
    )
    student = Path(app.srcdir) / STUDENT
    shutil.copy2(ROOT / "tinyinit" / "views" / "a11y.js", static / "tinyinit-a11y.js")
    if student.is_dir():
        shutil.copytree(student, Path(app.outdir) / STUDENT, dirs_exist_ok=True)


def stored_alts(notebook: Path) -> dict[str, str]:
    """{sha256 of the image bytes: alt} for every stored image output with an `alt`."""
    alts = {}
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            for mime, meta in (output.get("metadata") or {}).items():
                data = (output.get("data") or {}).get(mime)
                # MyST-NB names a PNG or JPEG by the sha256 of its decoded bytes.
                if mime in ("image/png", "image/jpeg") and data and (meta or {}).get("alt"):
                    raw = a2b_base64("".join(data))
                    alts[hashlib.sha256(raw).hexdigest()] = meta["alt"]
    return alts


def image_alt(app: Sphinx, doctree: nodes.document) -> None:
    """Give each notebook image the alt its output stored (MyST-NB names it by its sha256)."""
    source = Path(app.env.doc2path(app.env.docname))
    if source.suffix != ".ipynb":
        return
    alts = stored_alts(source)
    for image in doctree.findall(nodes.image):
        digest = Path(image.get("uri", "")).stem
        if digest in alts and not image.get("alt"):
            image["alt"] = alts[digest]


def edition_downloads(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Label the page's notebook download with its edition, and add the student's files: the
    student edition of the notebook (teacher's edition only) and my_init.py."""
    student = Path(app.srcdir) / STUDENT
    notebook = student / f"{pagename}.ipynb"
    if not notebook.exists():
        return
    pathto = context["pathto"]
    teacher = app.config.site_edition == "teacher"
    extra = []
    if teacher:
        extra.append(
            {
                "type": "link",
                "url": pathto(f"{STUDENT}/{notebook.name}", 1),
                "text": "student edition",
                "tooltip": "Download the notebook with the exercises to do",
                "icon": "fas fa-user-graduate",
                "label": "download-student-button",
            }
        )
    for helper in sorted(student.glob("*.py")):
        extra.append(
            {
                "type": "link",
                "url": pathto(f"{STUDENT}/{helper.name}", 1),
                "text": f"{helper.name} (student)" if teacher else helper.name,
                "tooltip": f"Download the student's {helper.name}, next to the notebook",
                "icon": "fas fa-file-code",
                "label": f"download-student-{helper.stem}-button",
            }
        )
    extra.append(
        {
            "type": "link",
            "url": pathto(GET),
            "text": f"needs {NEEDS}",
            "tooltip": f"What the notebook needs to run: pip install {NEEDS} (how to get it)",
            "icon": "fas fa-circle-info",
            "label": "download-needs-button",
        }
    )
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            for button in group["buttons"]:
                if button.get("label") == "download-source-button":
                    button["text"] = "teacher's .ipynb" if teacher else ".ipynb"
                    button["tooltip"] = (
                        "Download the notebook, teacher's edition (with the solutions)"
                        if teacher
                        else "Download the notebook (student edition)"
                    )
            group["buttons"][1:1] = extra


def edition_notebooks(app: Sphinx, exception) -> None:
    """Each page's download, _sources/NAME.ipynb: the notebook as the edition has it."""
    if exception is not None:
        return
    for notebook in (Path(app.srcdir) / DOWNLOADS).glob("*.ipynb"):
        shutil.copy2(notebook, Path(app.outdir) / "_sources" / notebook.name)


def visit_folded(self, node: HideCodeCellNode) -> None:
    """MyST-NB's hidden cell, a <details> whose summary is named by what it shows."""
    classes = " ".join(node["classes"])
    self.body.append(f'<details class="admonition hide {classes}">\n<summary>\n')
    for state, prompt in (("collapsed", node["prompt_show"]), ("expanded", node["prompt_hide"])):
        self.body.append(f'<p class="{state} admonition-title">{html.escape(prompt)}</p>\n')
    self.body.append("</summary>\n")


def depart_folded(self, node: HideCodeCellNode) -> None:
    self.body.append("</details>\n")


def setup(app: Sphinx) -> dict:
    app.add_config_value("site_widget_renderer", str(WIDGET_RENDERER), "html")
    app.add_config_value("site_mathjax", str(MATHJAX), "html")
    app.add_config_value("site_edition", "student", "html")
    app.add_config_value("site_repository", "", "html")
    app.add_config_value("site_hub", "", "html")
    app.add_config_value("site_repository_path", "notebooks", "html")
    app.add_node(HideCodeCellNode, override=True, html=(visit_folded, depart_folded))
    app.connect("config-inited", configure_edition)
    app.connect("builder-inited", copy_offline_assets)
    app.connect("doctree-read", image_alt)
    # After sphinx-book-theme has built its header buttons (priority 501).
    app.connect("html-page-context", edition_downloads, priority=502)
    app.connect("build-finished", edition_notebooks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

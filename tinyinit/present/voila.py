"""Serving the app with Voila: the notebook it serves, the offline template, the command."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from .._extras import extra

APP_SOURCE = """\
# The presentation app: `make present` serves this notebook with Voila (no code shown).
%matplotlib widget
from tinyinit.present import presentation

presentation()"""
# Below the app, out of the projector's view: the one rule behind every demonstration.
APP_RULE = (
    "Behind every demonstration, one rule: a layer multiplies the mean square of its input by "
    "$n_{\\text{in}}\\,\\sigma^2$, and the activation keeps its share, "
    "$\\mathbb{E}[\\phi(z)^2]$ of $z \\sim \\mathcal{N}(0, q)$."
)
REPO_APP = Path(__file__).resolve().parents[2] / "apps" / "present.ipynb"
DEFAULT_PORT = 8866


def app_notebook():
    """The notebook Voila serves: `presentation()` with nothing above it, the rule below.

    >>> [cell.cell_type for cell in app_notebook().cells]
    ['code', 'markdown']
    """
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(APP_SOURCE), nbformat.v4.new_markdown_cell(APP_RULE)]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def app_path(folder: Path | None = None) -> Path:
    """apps/present.ipynb of a source checkout, or a copy written into `folder` (a temp dir).

    >>> app_path().name
    'present.ipynb'
    """
    if REPO_APP.exists():
        return REPO_APP
    import tempfile

    import nbformat

    folder = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="tinyinit-"))
    path = folder / "present.ipynb"
    nbformat.write(app_notebook(), path)
    return path


# Voila's lab template links Font Awesome from a CDN, and its MathJax comes from one: a
# classroom behind a firewall would get neither. The template in voila_template/ serves both
# from installed packages (fontawesomefree, jupyter-server-mathjax) and is otherwise Voila's own.
VOILA_TEMPLATE = Path(__file__).with_name("voila_template")
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"
OFFLINE_TEMPLATE = "tinyinit-offline"


def offline_template(folder: Path | None = None) -> Path:
    """Write the Voila template that serves Font Awesome and MathJax itself; return its folder.

    Voila finds templates by name in the Jupyter data folders, so by default it goes into this
    Python's own, share/jupyter/voila/templates/tinyinit-offline. Its static/ holds copies of
    the installed files, served at /voila/static/.

    >>> sorted(p.name for p in offline_template().iterdir())
    ['conf.json', 'index.html.j2', 'static']
    """
    with extra("present", "the offline Voila template"):
        import fontawesomefree
        import jupyter_server_mathjax

    if folder is None:
        folder = Path(sys.prefix) / "share" / "jupyter" / "voila" / "templates" / OFFLINE_TEMPLATE
    static = Path(folder) / "static"
    static.mkdir(parents=True, exist_ok=True)
    for name in ("conf.json", "index.html.j2"):
        shutil.copyfile(VOILA_TEMPLATE / name, Path(folder) / name)
    # Copies, not links: Voila's static handler refuses files that resolve outside its folders.
    fontawesome = Path(fontawesomefree.__file__).parent / "static" / "fontawesomefree"
    sources = {
        "mathjax": Path(jupyter_server_mathjax.__file__).parent / "static",
        "fontawesome/css": fontawesome / "css",
        "fontawesome/webfonts": fontawesome / "webfonts",
    }
    for name, source in sources.items():
        target = static / name
        if target.is_symlink():
            target.unlink()
        shutil.copytree(source, target, dirs_exist_ok=True)
    return Path(folder)


# Front-end extensions that fail to load inside Voila (a console error, since they ask for
# JupyterLab's file browser or Notebook 7's shell) and have nothing to offer an app: left out
# where installed, as on a teacher's hub with nbgrader.
FOREIGN_EXTENSIONS = ("@jupyter-notebook/lab-extension", "@jupyter/nbgrader")


def voila_command(
    notebook: Path,
    *,
    port: int = DEFAULT_PORT,
    ip: str = "127.0.0.1",
    browser: bool = True,
    template: str = OFFLINE_TEMPLATE,
) -> list[str]:
    """The command that serves `notebook` as an app: no code shown, no tracebacks sent, and
    nothing asked of another host (Voila's template `template`, written by
    `offline_template()` when it is the default).

    Voila's defaults already strip the code cells (strip_sources) and keep
    tracebacks in the server log; they are spelled out so that a config file
    elsewhere cannot turn them off for a class.

    >>> voila_command(Path("present.ipynb"), port=9000, browser=False)[3:6]
    ['--port=9000', '--Voila.port_retries=0', '--Voila.ip=127.0.0.1']
    """
    if template == OFFLINE_TEMPLATE:
        offline_template()
    command = [
        sys.executable, "-m", "voila", f"--port={port}", "--Voila.port_retries=0",
        f"--Voila.ip={ip}", "--VoilaConfiguration.strip_sources=True",
        "--VoilaConfiguration.show_tracebacks=False", "--theme=light",
        f"--template={template}",
        "--Voila.mathjax_url=/voila/static/mathjax/MathJax.js",
        f"--Voila.mathjax_config={MATHJAX_CONFIG}",
        *(f"--VoilaConfiguration.extension_denylist={name}" for name in FOREIGN_EXTENSIONS),
    ]  # fmt: skip
    if not browser:
        command.append("--no-browser")
    return command + [str(notebook)]

"""Serving the app with Voila: the notebook it serves, the offline template, the command."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from .._extras import extra
from ..core.arguments import flag, instance, integer
from .noise import browser_patterns

__all__ = [
    "APP_SOURCE",
    "CULL_IDLE_SECONDS",
    "CULL_INTERVAL_SECONDS",
    "DEFAULT_PORT",
    "FOREIGN_EXTENSIONS",
    "KERNEL_TRANSPORT",
    "MATHJAX_CONFIG",
    "MATHJAX_URL",
    "OFFLINE_TEMPLATE",
    "REPO_APP",
    "TRUST_FOLDER",
    "VOILA_TEMPLATE",
    "app_notebook",
    "app_path",
    "offline_template",
    "serve_voila",
    "trust",
    "voila_command",
]

APP_SOURCE = """\
# The presentation app: `make present` serves this notebook with Voila (no code shown).
%matplotlib widget
from tinyinit.present import presentation

presentation()"""
REPO_APP = Path(__file__).resolve().parents[2] / "apps" / "present.ipynb"
DEFAULT_PORT = 8866


def app_notebook():
    """The notebook Voila serves: `presentation()` and nothing else (the app shows the rule
    behind every demonstration itself, in view).

    >>> [cell.cell_type for cell in app_notebook().cells]
    ['code']
    """
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(APP_SOURCE)]
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
    if folder is not None:
        instance("folder", folder, (str, os.PathLike), "None or a folder's path")
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
# MathJax 2 from the template's own static folder, as the server's settings give it to the
# page (tinyinit.present.server).
MATHJAX_URL = "/voila/static/mathjax/MathJax.js"
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"
OFFLINE_TEMPLATE = "tinyinit-offline"


def offline_template(folder: Path | None = None) -> Path:
    """Write the Voila template that serves Font Awesome and MathJax itself; return its folder.

    Voila finds templates by name in the Jupyter data folders, so by default it goes into this
    Python's own, share/jupyter/voila/templates/tinyinit-offline. Its static/ holds copies of
    the installed files, served at /voila/static/; known_noise.json the patterns of the
    browser's console messages that the page keeps off the console
    (tinyinit.present.noise.KNOWN_NOISE).

    >>> sorted(p.name for p in offline_template().iterdir())
    ['conf.json', 'index.html.j2', 'known_noise.json', 'static']
    """
    if folder is not None:
        instance("folder", folder, (str, os.PathLike), "None or a folder's path")
    with extra("present", "the offline Voila template"):
        import fontawesomefree
        import jupyter_server_mathjax

    if folder is None:
        folder = Path(sys.prefix) / "share" / "jupyter" / "voila" / "templates" / OFFLINE_TEMPLATE
    static = Path(folder) / "static"
    static.mkdir(parents=True, exist_ok=True)
    for name in ("conf.json", "index.html.j2"):
        shutil.copyfile(VOILA_TEMPLATE / name, Path(folder) / name)
    (Path(folder) / "known_noise.json").write_text(browser_patterns(), encoding="utf-8")
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


# The notebook is signed, as `jupyter trust` signs one, so that Voila does not warn at every
# page that it is untrusted; the signature and its key live in a folder of this Python's
# (as the template does), named to the server too, whatever its Jupyter data folder.
TRUST_FOLDER = Path(sys.prefix) / "share" / "jupyter" / "tinyinit-present"


def trust(notebook: Path, folder: Path = TRUST_FOLDER) -> None:
    """Sign `notebook` with the key in `folder` (nbformat's NotebookNotary, as `jupyter trust`).

    >>> trust(app_path())
    """
    instance("notebook", notebook, (str, os.PathLike), "a notebook's path")
    if not Path(notebook).is_file():
        raise ValueError(f"notebook must be a notebook's path, got {str(notebook)!r}: no such file")
    if not str(instance("folder", folder, (str, os.PathLike), "a folder's path")):
        raise ValueError("folder must be a folder's path, got ''")
    import nbformat
    from nbformat.sign import NotebookNotary

    Path(folder).mkdir(parents=True, exist_ok=True)
    notary = NotebookNotary(data_dir=str(folder))
    notary.sign(nbformat.read(notebook, as_version=nbformat.NO_CONVERT))
    notary.store.close()


# The kernel talks to the server through files of their own (IPC) rather than TCP ports,
# so that no other user of the machine can connect to it, and it does not warn that its
# TCP ports are unencrypted. Windows has no such files: there the kernel keeps TCP.
KERNEL_TRANSPORT = "tcp" if os.name == "nt" else "ipc"


# Front-end extensions that fail to load inside Voila (a console error, since they ask for
# JupyterLab's file browser or Notebook 7's shell) and have nothing to offer an app: left out
# where installed, as on a teacher's hub with nbgrader.
FOREIGN_EXTENSIONS = ("@jupyter-notebook/lab-extension", "@jupyter/nbgrader")


# A kernel whose page has closed is shut down after this long idle (Voila starts a kernel
# per page and keeps it otherwise: a morning of reloads held gigabytes). A page still open
# keeps its kernel however long the class talks (cull_connected is False).
CULL_IDLE_SECONDS = 120
CULL_INTERVAL_SECONDS = 30


def voila_command(
    notebook: Path,
    *,
    port: int = DEFAULT_PORT,
    ip: str = "127.0.0.1",
    browser: bool = True,
    template: str = OFFLINE_TEMPLATE,
    cull_idle: int = CULL_IDLE_SECONDS,
    cull_interval: int = CULL_INTERVAL_SECONDS,
) -> list[str]:
    """The command that serves `notebook` as an app: no code shown, no tracebacks sent,
    nothing asked of another host (Voila's template `template`, written by
    `offline_template()` when it is the default), and the kernels of closed pages shut down
    after `cull_idle` seconds idle (0: never), looked for every `cull_interval` seconds (at
    most a quarter of `cull_idle`).

    Voila's defaults already strip the code cells (strip_sources) and keep
    tracebacks in the server log; they are spelled out so that a config file
    elsewhere cannot turn them off for a class. `?theme=dark` in the address
    shows the page in JupyterLab's dark theme (the app itself stays black on white).

    Nothing in the terminal that the teacher did not cause: `notebook`, if it is a file,
    is signed (`trust`); MathJax is set through the server's settings, not Voila's
    deprecated options, and what is left the server's log keeps to itself
    (tinyinit.present.server runs Voila so); the kernel talks over KERNEL_TRANSPORT.

    >>> voila_command(Path("present.ipynb"), port=9000, browser=False)[3:6]
    ['--port=9000', '--Voila.port_retries=0', '--Voila.ip=127.0.0.1']
    """
    instance("notebook", notebook, (str, Path), "a notebook's path")
    port, ip = (
        integer("port", port, minimum=1, maximum=65535),
        instance("ip", ip, str, "an address"),
    )
    browser = flag("browser", browser)
    if not instance("template", template, str, "a Voila template's name"):
        raise ValueError("template must be a Voila template's name, got ''")
    cull_idle = integer("cull_idle", cull_idle, minimum=0)
    cull_interval = integer("cull_interval", cull_interval, minimum=1)
    if template == OFFLINE_TEMPLATE:
        offline_template()
    if Path(notebook).is_file():
        trust(notebook)
    command = [
        sys.executable, "-m", "tinyinit.present.server", f"--port={port}", "--Voila.port_retries=0",
        f"--Voila.ip={ip}", "--VoilaConfiguration.strip_sources=True",
        "--VoilaConfiguration.show_tracebacks=False", "--theme=light",
        "--VoilaConfiguration.allow_theme_override=YES",
        f"--template={template}",
        f"--NotebookNotary.data_dir={TRUST_FOLDER}",
        f"--KernelManager.transport={KERNEL_TRANSPORT}",
        f"--MappingKernelManager.cull_idle_timeout={cull_idle}",
        f"--MappingKernelManager.cull_interval={max(1, min(cull_interval, cull_idle // 4))}",
        "--MappingKernelManager.cull_connected=False",
        *(f"--VoilaConfiguration.extension_denylist={name}" for name in FOREIGN_EXTENSIONS),
    ]  # fmt: skip
    if not browser:
        command.append("--no-browser")
    return command + [str(notebook)]


def serve_voila(command: list[str], env: dict | None = None, grace: float = 15.0) -> int:
    """Run the server `command` until it ends or this process is asked to stop; its exit code.

    Ctrl+C (SIGINT) and SIGTERM, as a service manager or a `kill` sends it, both stop the
    server: it gets SIGTERM, on which Voila shuts its kernels down, and `grace` seconds
    to do so before it is killed (its kernels then follow their parent, as ipykernel's do).
    Without this, SIGTERM would end this process alone and leave the server running. SIGINT
    gets its handler here too: a process started with SIGINT ignored (a background job, some
    test runners) would otherwise not answer Ctrl+C or `kill -INT` at all.

    >>> serve_voila([sys.executable, "-c", "raise SystemExit(3)"])
    3
    """

    def stop(signum, frame):
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        try:
            process = subprocess.Popen(command, env=env)
        except KeyboardInterrupt:
            return 0  # asked to stop before the server started
        return process.wait()
    except KeyboardInterrupt:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # stopping already
        process.terminate()
        try:
            process.wait(timeout=grace)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):  # too slow, or asked again
            process.kill()
            process.wait()
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

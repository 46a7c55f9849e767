"""A real JupyterLab and a real Chromium, for tests and benchmarks that click like a student.

    server = start_lab(tmp_path)            # jupyter lab on 127.0.0.1, free port, no token
    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page()
        open_notebook(page, server, "03_signal_through_depth.ipynb")
        run_all_cells(page)
        assert notebook_errors(page) == []
    server.stop()

The server runs from this Python's environment (so it finds the ipywidgets and
ipympl labextensions under sys.prefix/share/jupyter) with its own config,
data and runtime folders, so nothing on the machine changes what it shows.
It never reaches for the network: no news feed, no update check, a read-only
extension manager. Chromium is Debian's (/usr/bin/chromium, or
$TINYINIT_CHROMIUM); Playwright's own browsers are never downloaded.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil

DEFAULT_CHROMIUM = "/usr/bin/chromium"

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

# Everything that would make Lab fetch from the internet, or pop a dialog over
# the notebook, is turned off; windowing is off so every cell stays in the DOM.
SERVER_CONFIG = """\
c.IdentityProvider.token = ""
c.ServerApp.password = ""
c.ServerApp.open_browser = False
c.ServerApp.terminals_enabled = False
c.ServerApp.jpserver_extensions = {"jupyter_server_terminals": False}
c.LabApp.news_url = None
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"
c.LabApp.extension_manager = "readonly"
"""

# The front end of what the server does not offer (terminals), so that it does not ask.
PAGE_CONFIG = {"disabledExtensions": {"@jupyterlab/terminal-extension": True}}

USER_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "windowingMode": "none",
    },
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {
        "autosave": False,
    },
}

# Console messages that say nothing about the notebook under test.
BENIGN_CONSOLE = (
    "favicon",
    "Failed to load resource: the server responded with a status of 404",
    # ipympl, when frames come faster than the page decodes them (a step's figure swapped on a
    # busy machine): a frame whose image was let go before it loaded is not drawn, and says so;
    # the next frame is (matplotlib/ipympl#472, matplotlib/matplotlib#19116). Tests that need
    # the picture check the canvas's pixels.
    "Error setting state: Failed to execute 'drawImage' on 'CanvasRenderingContext2D': "
    "The HTMLImageElement provided is in the 'broken' state.",
)

# The depth explorer as the page draws it, for the browser tests and the benchmarks alike:
# tinyinit/views/explorers.py gives its widgets these classes (tests/views/test_explorers.py holds
# them), and ipympl draws a figure into a canvas inside a div of its own.
EXPLORER = ".tinyinit-explorer"
READOUT = ".tinyinit-readout"
DEPTH_SLIDER = "tinyinit-depth"  # a class name, as slider_handle takes it
FIGURE_CANVAS = ".jupyter-matplotlib-canvas-div canvas"

# Lab renders both stderr and tracebacks (error outputs) with the stderr MIME type.
STDERR_OUTPUT = '.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]'


def chromium_path() -> str:
    """The Chromium to drive: $TINYINIT_CHROMIUM if set, else the system's (Debian's)."""
    return os.environ.get("TINYINIT_CHROMIUM") or shutil.which("chromium") or DEFAULT_CHROMIUM


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LabServer:
    """A running `jupyter lab`: its base .url, its .pid, and .stop() to end it and its kernels."""

    url: str
    root: Path
    home: Path
    process: subprocess.Popen
    log_path: Path
    page: str = "lab"  # the front page: "lab" for JupyterLab, "tree" for Notebook 7
    _stopped: bool = field(default=False, repr=False)
    _cookies: http.cookiejar.CookieJar | None = field(default=None, repr=False)
    _cookie_opener: urllib.request.OpenerDirector | None = field(default=None, repr=False)

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_tail(self, n_lines: int = 40) -> str:
        """The end of the server's log, to explain a failure."""
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-n_lines:])

    def api(self, path: str, method: str = "GET", body=None, timeout: float = 10.0):
        """Call the server's REST API; returns the decoded JSON (None for an empty reply).

        No token is needed, but writes must echo the _xsrf cookie that any GET hands out.
        """
        headers = {"Content-Type": "application/json"}
        if method != "GET":
            if not self._xsrf():
                self._opener().open(self.url + self.page, timeout=timeout).close()
            headers["X-XSRFToken"] = self._xsrf()
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.url + path.lstrip("/"), data=data, method=method, headers=headers
        )
        with self._opener().open(request, timeout=timeout) as response:
            reply = response.read()
        return json.loads(reply) if reply else None

    def _opener(self):
        if self._cookies is None:
            self._cookies = http.cookiejar.CookieJar()
            self._cookie_opener = urllib.request.build_opener(
                urllib.request.HTTPCookieProcessor(self._cookies)
            )
        return self._cookie_opener

    def _xsrf(self) -> str:
        self._opener()
        return next((c.value for c in self._cookies if c.name == "_xsrf"), "")

    def start_session(self, path: str, kernel_name: str = "python3") -> str:
        """Start (or reuse) the kernel session of notebook `path`; returns the kernel id.

        Opening a notebook whose session already runs spares Lab its "Select Kernel"
        dialog, which it may show when it races the kernelspec list at start-up.
        """
        body = {
            "path": path,
            "type": "notebook",
            "name": Path(path).name,
            "kernel": {"name": kernel_name},
        }
        return self.api("api/sessions", method="POST", body=body, timeout=60.0)["kernel"]["id"]

    def shutdown_kernels(self) -> None:
        """Shut down every kernel (and so its session) the server runs."""
        for kernel in self.api("api/kernels") or []:
            self.api(f"api/kernels/{kernel['id']}", method="DELETE", timeout=30.0)

    def stop(self, timeout: float = 10.0) -> None:
        """End the server: shut its kernels down, SIGTERM its process group, SIGKILL if it lingers.

        Kernels run in their own sessions (jupyter_client starts them so), so the
        process group alone would miss them: they are asked to shut down through
        the API first, and whatever descends from the server is killed at the end.
        """
        if self._stopped:
            return
        self._stopped = True
        try:
            descendants = psutil.Process(self.pid).children(recursive=True)
        except psutil.Error:
            descendants = []
        if self.process.poll() is None:
            try:
                self.shutdown_kernels()
            except (OSError, ValueError):
                pass  # the server is already going; the kill below still runs
            _signal_group(self.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                _signal_group(self.pid, signal.SIGKILL)
                self.process.wait(timeout)
        for proc in _still_running(descendants, timeout / 2):
            try:
                proc.kill()
            except psutil.Error:
                pass

    def __enter__(self) -> LabServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _still_running(processes: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Those of `processes` still running after up to `timeout` seconds.

    psutil waits on a pidfd, and opening one for a process that is just going may fail
    with an error of the kernel's (EINVAL, ENOENT: giampaolo/psutil#2715): then each is
    looked at until it is gone or a zombie.
    """
    try:
        return psutil.wait_procs(processes, timeout=timeout)[1]
    except OSError:
        pass

    def running(proc: psutil.Process) -> bool:
        try:
            return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    deadline = time.monotonic() + timeout
    while (alive := [p for p in processes if running(p)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


def lab_environment(home: Path) -> dict[str, str]:
    """Environment for an isolated Lab: own config/data/runtime dirs, this Python on PATH.

    JUPYTER_DATA_DIR only replaces the *user* data dir; sys.prefix/share/jupyter
    (where pip put the ipywidgets and ipympl labextensions and the python3
    kernelspec) is still searched, so the widgets render.
    """
    env = dict(os.environ)
    for name in ("JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "JUPYTER_PREFER_ENV_PATH"):
        env.pop(name, None)
    env.update(
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(home / "config" / "lab" / "user-settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "config" / "lab" / "workspaces"),
        IPYTHONDIR=str(home / "ipython"),
        PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
        PYTHONUNBUFFERED="1",
    )
    return env


def write_lab_config(
    config_dir: Path, server_config: str = SERVER_CONFIG, page_config: dict = PAGE_CONFIG
) -> None:
    """Write the offline, dialog-free server config and Lab settings into a Jupyter config dir.

    `config_dir` is what JUPYTER_CONFIG_DIR (or ~/.jupyter) points at; Lab's user
    settings go in its lab/user-settings, where Lab looks by default.
    """
    config_dir = Path(config_dir)
    (config_dir / "labconfig").mkdir(parents=True, exist_ok=True)
    (config_dir / "jupyter_server_config.py").write_text(server_config)
    (config_dir / "labconfig" / "page_config.json").write_text(json.dumps(page_config))
    for name, settings in USER_SETTINGS.items():
        path = config_dir / "lab" / "user-settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings))


def start_lab(
    root: Path, *, home: Path | None = None, timeout: float = 90.0, app: str = "lab"
) -> LabServer:
    """Start `python -m jupyter lab` serving `root`; return once it answers HTTP.

    app="notebook" starts Jupyter Notebook 7 instead (the single-document
    interface, built on the same server and the same widgets), whose pages are
    /tree and /notebooks/<path>.

    `home` holds its config, data, runtime and log (default: a sibling of root).
    Raises RuntimeError with the server's log if it exits or stays silent.
    """
    if app not in ("lab", "notebook"):
        raise ValueError(f"app must be 'lab' or 'notebook'; got {app!r}")
    root = Path(root).resolve()
    home = Path(home) if home is not None else root.parent / (root.name + f"-jupyter-{app}")
    # Notebook 7 builds its terminal plugins on Lab's: with those off, its own fail to
    # start, and with its own off its settings break. It never asks for a terminal unasked.
    write_lab_config(home / "config", page_config=PAGE_CONFIG if app == "lab" else {})

    port = free_port()
    command = [
        sys.executable,
        "-m",
        "jupyter",
        app,
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--port-retries=0",
        f"--ServerApp.root_dir={root}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers and CI runners are often root

    def answers(server: LabServer) -> bool:
        try:
            if server.api("api/status", timeout=2.0) is None:
                return False
            server.page = "lab" if app == "lab" else "tree"
            urllib.request.urlopen(server.url + server.page, timeout=10.0).close()
            return True
        except (OSError, ValueError, urllib.error.URLError):
            return False

    return spawn_server(
        command, name=f"jupyter {app}", root=root, home=home, port=port, ready=answers,
        timeout=timeout,
    )  # fmt: skip


def spawn_server(
    command, *, name, root, home, port, ready, timeout: float, env: dict | None = None
) -> LabServer:
    """Run a server `command` in its own process group; return it once ready(server) is true.

    `env`: variables added to its environment. Its output goes to home/<name>.log.
    Raises RuntimeError with the end of that log if the server exits, or is not
    ready within `timeout` seconds.
    """
    log_path = home / f"{name.replace(' ', '-')}.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command,
            cwd=root,
            env={**lab_environment(home), **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so stop() reaches all of it
        )
    server = LabServer(
        url=f"http://127.0.0.1:{port}/", root=root, home=home, process=process, log_path=log_path
    )
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            server.stop()
            raise RuntimeError(f"{name} exited with {process.returncode}:\n{server.log_tail()}")
        if ready(server):
            return server
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"{name} did not start in {timeout:.0f} s:\n{server.log_tail()}")
        time.sleep(0.25)


def launch_chromium(playwright, executable_path: str | None = None, *, headless: bool = True):
    """Debian's Chromium through Playwright, with flags that keep it quiet and offline."""
    return playwright.chromium.launch(
        executable_path=executable_path or chromium_path(), headless=headless, args=CHROMIUM_ARGS
    )


class ConsoleLog:
    """Collects a page's console errors and uncaught exceptions, minus known-benign noise."""

    def __init__(self, page):
        self.messages: list[str] = []
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self.messages.append(f"pageerror: {error}"))

    def _on_console(self, message) -> None:
        if message.type == "error" and not any(b in message.text for b in BENIGN_CONSOLE):
            self.messages.append(f"console.error: {message.text}")

    def clear(self) -> None:
        self.messages.clear()


# MathJax 2 (Voila's, JupyterLab's) is done when its queue is empty; MathJax 3 (the site's,
# site_src/mathjax_config.js) once it has started and the promise that every typesetting
# joins, its first pass's and each widget's after it, has settled and no other has joined.
MATHJAX_DONE = """async timeout => {
    const deadline = Date.now() + timeout;
    const until = async (done, what) => {
        while (!done()) {
            if (Date.now() > deadline) throw new Error(`MathJax: no ${what} in ${timeout} ms`);
            await new Promise(r => setTimeout(r, 50));
        }
    };
    const mathjax = () => window.MathJax;
    if (!mathjax()) return;
    const three = () => String(mathjax().version).startsWith("3.");
    // MathJax 3, or its configuration (which has a startup section) before it has loaded
    if (three() || (!mathjax().version && mathjax().startup)) {
        await until(() => three() && mathjax().startup && mathjax().startup.promise, "start");
        let promise;
        do {
            promise = mathjax().startup.promise;
            await promise;
        } while (promise !== mathjax().startup.promise);
        return;
    }
    if (mathjax().Hub && mathjax().Hub.queue) {  // MathJax 2, loaded
        const queue = mathjax().Hub.queue;
        await until(() => queue.pending === 0 && queue.running === 0, "empty queue");
    }
}"""


def wait_for_mathjax(page, *, timeout: float = 90.0) -> None:
    """Wait until MathJax, where the page has it, has typeset what it has been given."""
    page.evaluate(MATHJAX_DONE, timeout * 1000)


def open_notebook(page, server: LabServer, path: str, *, timeout: float = 60.0) -> None:
    """Open `path` (relative to the server root) in Lab, with its kernel started and idle."""
    server.start_session(path)
    page.goto(f"{server.url}lab/tree/{path}?reset", timeout=timeout * 1000)
    page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(
        state="visible", timeout=timeout * 1000
    )
    wait_for_kernel_idle(page, timeout=timeout)


def labextensions(page) -> list[str]:
    """Names of the prebuilt (pip-installed) labextensions this Lab page loads."""
    config = page.evaluate(
        "() => JSON.parse(document.getElementById('jupyter-config-data').textContent)"
    )
    return sorted(ext["name"] for ext in config.get("federated_extensions", []))


def kernel_status(page) -> str:
    """The notebook kernel's status as the toolbar shows it ('idle', 'busy', 'starting', ...)."""
    indicator = page.locator(".jp-NotebookPanel-toolbar .jp-Notebook-ExecutionIndicator").first
    return indicator.get_attribute("data-status") or ""


def assert_kernel_comes_back_idle(page, *, timeout: float = 30.0) -> None:
    """Assert the kernel ends idle, neither stuck busy nor gone.

    The last redraw of a widget can reach the page before the kernel has gone
    back to idle, so the status is read until it settles, not once.
    """
    deadline = time.monotonic() + timeout
    while (status := kernel_status(page)) != "idle":
        if time.monotonic() > deadline:
            raise AssertionError(f"kernel still {status!r} after {timeout:.0f} s")
        time.sleep(0.2)


def wait_for_kernel_idle(page, *, timeout: float = 60.0) -> None:
    """Wait until the open notebook shows a connected, idle kernel.

    Should Lab still ask which kernel to start, its default (the notebook's own
    kernelspec) is accepted, as a student would.
    """
    deadline = time.monotonic() + timeout
    accept = page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept")
    kernel_name = page.locator(".jp-NotebookPanel-toolbar .jp-Toolbar-kernelName").first
    while True:
        if accept.count():
            accept.first.click()
        if kernel_status(page) == "idle" and "No Kernel" not in kernel_name.inner_text():
            return
        if time.monotonic() > deadline:
            raise AssertionError(
                f"kernel not idle after {timeout:.0f} s (status {kernel_status(page)!r})"
            )
        time.sleep(0.2)


def run_all_cells(page, *, timeout: float = 90.0) -> None:
    """Run > Run All Cells from the menu bar, then wait until the run is over.

    Over means: every code cell shows an execution count ("[3]:", not "[*]:" or
    "[ ]:"), or a cell raised (Lab then skips the rest) and none is still running.
    """
    page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu .lm-Menu-item[data-command='runmenu:run-all']").click()
    page.wait_for_function(
        """(errorSelector) => {
            const prompts = [...document.querySelectorAll(
                '.jp-NotebookPanel .jp-CodeCell .jp-InputArea-prompt')].map(p => p.textContent);
            if (prompts.length === 0 || prompts.some(p => p.includes('*'))) return false;
            return prompts.every(p => /\\[\\d+\\]/.test(p))
                || document.querySelector('.jp-NotebookPanel ' + errorSelector) !== null;
        }""",
        arg=STDERR_OUTPUT,
        polling=100,
        timeout=timeout * 1000,
    )
    wait_for_kernel_idle(page, timeout=timeout)


def run_last_cell(page) -> None:
    """Run the open notebook's last code cell alone (click into it, Shift+Enter): an
    explorer's cell needs nothing before it, and the cells before it are nbval's to run."""
    page.locator(".jp-NotebookPanel .jp-CodeCell .jp-InputArea-editor").last.click()
    page.keyboard.press("Shift+Enter")


def notebook_errors(page) -> list[str]:
    """What a student would see as an error in the open notebook: tracebacks, stderr, widgets."""
    problems = []
    for text in page.locator(f".jp-NotebookPanel {STDERR_OUTPUT}").all_inner_texts():
        what = "error" if "Traceback" in text or "Error" in text else "stderr output"
        problems.append(f"{what}: {text.strip()[-800:]}")
    for text in page.locator(".jp-NotebookPanel .jp-OutputArea-output").all_inner_texts():
        if "Error displaying widget" in text or "Error rendering" in text:
            problems.append(f"widget failed: {text.strip()[:500]}")
    return problems


def slider_handle(page, css_class: str):
    """The handle of the ipywidgets slider with class `css_class`; it takes keyboard focus."""
    return page.locator(f".{css_class} .noUi-handle").first


def press_on_slider(page, css_class: str, key: str) -> None:
    """Focus the slider handle and press `key` (ArrowRight, ArrowLeft, Home, End, PageUp, ...)."""
    handle = slider_handle(page, css_class)
    handle.focus()
    handle.press(key)


def slider_value(page, css_class: str) -> int:
    """The slider's value as its readout shows it."""
    text = page.locator(f".{css_class} .widget-readout").first.inner_text()
    return int(text.strip())


def mpl_canvas(page, container: str = ""):
    """The ipympl figure's drawing canvas (inside `container`, a CSS selector, if given)."""
    return page.locator(f"{container} {FIGURE_CANVAS}".strip()).first


def wait_for_screenshot_change(locator, before: bytes, *, timeout: float = 15.0) -> bytes:
    """Screenshot `locator` until the picture differs from `before`; return the new one."""
    deadline = time.monotonic() + timeout
    while True:
        after = locator.screenshot(animations="disabled")
        if after != before:
            return after
        if time.monotonic() > deadline:
            raise AssertionError(f"the element did not change on screen within {timeout:.0f} s")
        time.sleep(0.1)


def wait_for_stable_screenshot(locator, *, settle: float = 0.4, timeout: float = 15.0) -> bytes:
    """Screenshot `locator` until two shots `settle` seconds apart agree (ipympl may draw twice)."""
    deadline = time.monotonic() + timeout
    shot = locator.screenshot(animations="disabled")
    while True:
        time.sleep(settle)
        again = locator.screenshot(animations="disabled")
        if again == shot or time.monotonic() > deadline:
            return again
        shot = again


def serve_one_cell(root: Path, name: str, source: str, *, app: str = "lab") -> LabServer:
    """`jupyter {app}` serving folder `root` (made here) with notebook `name`: one code cell."""
    import nbformat

    root.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source)]
    nb.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python",
    }  # fmt: skip
    nbformat.write(nb, root / name)
    return start_lab(root, app=app)


def run_the_cell_in_notebook_7(page, server: LabServer, name: str, console: ConsoleLog) -> None:
    """Open notebook `name` in Notebook 7 with its kernel idle, then run its first cell; the
    console log starts with the cell."""
    from playwright.sync_api import expect

    server.start_session(name)  # no kernel dialog
    page.goto(server.url + f"notebooks/{name}")
    status = page.locator(".jp-Notebook-ExecutionIndicator").first
    expect(status).to_have_attribute("data-status", "idle", timeout=60_000)
    # Notebook 7.6 itself reports one error while it loads its settings ("reading 'schema'"),
    # with or without this notebook, and on a busy machine the replies to its first kernel
    # requests (debugger, subshells) may come after "idle": what counts starts with the cell.
    page.wait_for_timeout(2000)
    console.clear()
    page.locator(".jp-Cell .jp-InputArea-editor").first.click()
    page.keyboard.press("Shift+Enter")

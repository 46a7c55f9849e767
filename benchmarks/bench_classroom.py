"""How many students does one server hold? A real JupyterHub, N students in Chromium, notebook 03.

    python benchmarks/bench_classroom.py [--students 1,5,10] [--step 5] [--max-students 30]
        [--duration 60] [--budget 2400] [--markdown FILE]

For each class size N, in a scratch folder that is deleted afterwards:
  - configurable-http-proxy (from npm, `make bench-classroom` installs it into
    build/chp) and JupyterHub (the `classroom` extra) on 127.0.0.1, free ports,
    with the dummy authenticator (any name, any password) and the simple local
    process spawner (no system users: each student's home is a folder here,
    holding a copy of notebooks/, as a hub's course copy leaves it: notebook 03
    and the my_init.py it checks);
  - one headless Chromium (Debian's), one browser context per student: the
    student logs in on the hub's login page, which spawns their server; opens
    the notebook, runs all cells, and brings the depth slider to 20. At most
    `--logins` students do this at once: on this machine their browsers
    share the two cores with the server, which a real class's laptops do not;
  - then all N students move the depth slider together for `--duration`
    seconds, one key press at a time (20 -> 25 -> 20 ...), each press after
    the previous plot has settled. The latency of a move is measured in the
    page, as benchmarks/bench_browser_latency.py does: key press to the new
    plot on screen.
Every process (proxy, hub, Chromium, and what they start: the single-user
servers and their kernels) is started by this script and stopped by process id.

Reported per N: students ready and their setup time (login to notebook run);
p50/p90 of the move latency over all students, and moves lost (no new plot
within --press-timeout); per student memory, RSS and USS (what the process
alone holds, the memory another student adds) of the kernel and the
single-user server, at the end; the kernel CPU that running the notebook took
(with the processes in which its checks run the student's my_init.py);
the server-side CPU (hub, proxy, servers, kernels) per move; CPU over the
sliding minute as % of one core: hub, proxy, per student (server + kernel),
the simulated browsers (which in a real class run on the students' laptops)
and the whole machine (other work included); kernels that died (a kernel
process gone or replaced, or a restart in the hub's log): must be none.
On a machine busy with other work, compare a row with the first row of the
same run (the "p50 / first" column), not with another run.

Class sizes grow (the listed ones, then by --step up to --max-students) while
the previous one held: every student ready, no kernel died, p90 latency at most
--max-p90-ms, and at least --min-free-gb of memory left; and while the next
size fits in what is left of --budget seconds.

Exits with status 1 if a kernel died or a student could not work.

`make test` runs one student of it (rehearse(): one JupyterLab, no hub, a few
moves; tests/browser/test_classroom_bench.py), so that a notebook that no
longer runs in a student's folder, or an explorer the page no longer draws as
the benchmark looks for it, fails there and not in the next class's sizing.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import secrets
import shutil
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_browser_latency import (  # noqa: E402
    NOTEBOOK,
    find_explorer,
    move_depth_to,
    percentile,
    press_and_time,
)

from tests.browser.lab import (  # noqa: E402
    CHROMIUM_ARGS,
    DEPTH_SLIDER,
    ConsoleLog,
    LabServer,
    chromium_path,
    free_port,
    lab_environment,
    notebook_errors,
    open_notebook,
    run_all_cells,
    slider_handle,
    spawn_server,
    start_lab,
    write_lab_config,
)

DEFAULT_PROXY = ROOT / "build" / "chp" / "node_modules" / ".bin" / "configurable-http-proxy"
START_DEPTH = 20
SWING = 5  # presses each way: the depth slider goes 20 -> 25 -> 20 -> ...
SERVICE = "classroom-bench"
MB = 1024 * 1024
VIEWPORT = {"width": 1400, "height": 1000}  # each student's window

# The single-user servers take Lab's offline, dialog-free settings, but not its
# "no token, no password": behind the hub, the hub decides who gets in.
SINGLE_USER_CONFIG = """\
c.ServerApp.terminals_enabled = False
c.ServerApp.jpserver_extensions = {"jupyter_server_terminals": False}
c.LabApp.news_url = None
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"
c.LabApp.extension_manager = "readonly"
"""

HUB_CONFIG = """\
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {proxy_port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.should_start = False
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.JupyterHub.db_url = "sqlite:///{scratch}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{scratch}/jupyterhub_cookie_secret"
c.JupyterHub.authenticator_class = "dummy"
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{scratch}/homes/{{username}}"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.args = {singleuser_args!r}
c.Spawner.default_url = "/lab"
c.Spawner.environment = {environment!r}
c.Spawner.start_timeout = 300
c.Spawner.http_timeout = 300
c.JupyterHub.services = [{{"name": "{service}", "api_token": "{token}"}}]
c.JupyterHub.load_roles = [
    {{"name": "{service}", "scopes": ["access:servers", "list:users"], "services": ["{service}"]}}
]
"""

# A kernel restart or death, as the single-user servers (whose output goes to the hub's log) say.
KERNEL_DEATH = ("restarting kernel", "KernelRestarter", "kernel died", "Kernel died")


# --- the servers ---------------------------------------------------------------------------


@dataclass
class Hub:
    """A running hub: its proxy, the hub itself, and the service token that reaches every server."""

    url: str  # the proxy's public address, as students see it
    scratch: Path
    proxy: LabServer
    hub: LabServer
    token: str

    def student_server(self, name: str) -> StudentServer:
        return StudentServer(url=f"{self.url}user/{name}/", token=self.token)

    def log_text(self) -> str:
        return self.hub.log_path.read_text(errors="replace")

    def stop(self) -> None:
        try:
            self.hub.stop(timeout=60.0)  # the hub stops every single-user server on its way out
        finally:
            self.proxy.stop()


@dataclass
class StudentServer:
    """A student's single-user server, reached through the proxy with the hub's service token."""

    url: str
    token: str

    def api(self, path: str, method: str = "GET", body=None, timeout: float = 10.0):
        """Call the server's REST API; returns the decoded JSON (None for an empty reply)."""
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"token {self.token}", "Content-Type": "application/json"}
        request = urllib.request.Request(
            self.url + path.lstrip("/"), data=data, method=method, headers=headers
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            reply = response.read()
        return json.loads(reply) if reply else None

    # The same request as a standalone Lab's: only the way api() authenticates differs.
    start_session = LabServer.start_session


def answers_http(server: LabServer) -> bool:
    """True once anything answers HTTP at the server's address (an error status counts)."""
    try:
        urllib.request.urlopen(server.url, timeout=2.0).close()
    except urllib.error.HTTPError:
        return True
    except (OSError, ValueError):
        return False
    return True


def fill_home(home: Path) -> None:
    """A student's folder as a hub's course copy leaves it: every notebook and what they read.

    Notebook 03 checks the student's my_init.py beside it and stops there without it, before
    its explorer: the folder holds all of notebooks/, as the README's hub set-ups copy it.
    """
    shutil.copytree(
        ROOT / "notebooks",
        home,
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
        dirs_exist_ok=True,
    )


def start_hub(scratch: Path, proxy_command: str, names: list[str], blas_threads: int | None) -> Hub:
    """The proxy, then the hub, on free ports; a home per student holding the notebooks."""
    for name in names:
        home = scratch / "homes" / name
        write_lab_config(home / ".jupyter", SINGLE_USER_CONFIG)
        fill_home(home)

    token = secrets.token_hex(32)
    proxy_port, proxy_api_port, hub_port = free_port(), free_port(), free_port()
    env = {**lab_environment(scratch / "hub"), "CONFIGPROXY_AUTH_TOKEN": token}
    (scratch / "hub").mkdir(parents=True)
    proxy = spawn_server(
        [
            proxy_command,
            "--ip=127.0.0.1", f"--port={proxy_port}",
            "--api-ip=127.0.0.1", f"--api-port={proxy_api_port}",
            f"--default-target=http://127.0.0.1:{hub_port}",
            f"--error-target=http://127.0.0.1:{hub_port}/hub/error",
        ],
        name="configurable-http-proxy", root=scratch, home=scratch / "hub", port=proxy_port,
        ready=answers_http, timeout=60.0, env=env,
    )  # fmt: skip

    singleuser = shutil.which("jupyterhub-singleuser", path=str(Path(sys.executable).parent))
    if singleuser is None:
        proxy.stop()
        raise RuntimeError("jupyterhub is not installed here: `make bench-classroom` installs it")
    environment = {"OPENBLAS_NUM_THREADS": str(blas_threads)} if blas_threads else {}
    config = HUB_CONFIG.format(
        proxy_port=proxy_port, proxy_api_port=proxy_api_port, hub_port=hub_port,
        scratch=scratch, singleuser=singleuser, environment=environment,
        # containers and CI runners are often root
        singleuser_args=["--allow-root"] if os.geteuid() == 0 else [],
        service=SERVICE, token=token,
    )  # fmt: skip
    (scratch / "jupyterhub_config.py").write_text(config)

    def hub_answers(server: LabServer) -> bool:
        try:
            return "version" in server.api("hub/api/", timeout=2.0)
        except (OSError, ValueError, TypeError):
            return False

    try:
        hub = spawn_server(
            [sys.executable, "-m", "jupyterhub", "-f", str(scratch / "jupyterhub_config.py")],
            name="jupyterhub", root=scratch, home=scratch / "hub", port=hub_port,
            ready=hub_answers, timeout=120.0, env=env,
        )  # fmt: skip
    except Exception:
        proxy.stop()
        raise
    return Hub(
        url=f"http://127.0.0.1:{proxy_port}/", scratch=scratch, proxy=proxy, hub=hub, token=token
    )


def start_chromium(scratch: Path) -> LabServer:
    """One headless Chromium that every student's thread drives over its DevTools port."""
    port = free_port()
    profile = scratch / "chromium"
    profile.mkdir()
    command = [
        chromium_path(), "--headless", *CHROMIUM_ARGS,
        "--remote-debugging-address=127.0.0.1", f"--remote-debugging-port={port}",
        f"--user-data-dir={profile}", "about:blank",
    ]  # fmt: skip

    def answers(server: LabServer) -> bool:
        try:
            return "Browser" in server.api("json/version", timeout=2.0)
        except (OSError, ValueError, TypeError):
            return False

    return spawn_server(
        command, name="chromium", root=scratch, home=scratch, port=port, ready=answers,
        timeout=60.0,
    )  # fmt: skip


# --- one student ---------------------------------------------------------------------------


@dataclass
class Student:
    """What one simulated student did and saw."""

    name: str
    ready_s: float = float("nan")  # login to notebook run and slider at START_DEPTH
    samples: list[dict] = field(default_factory=list)  # one per move, from press_and_time
    lost: int = 0  # moves whose plot did not settle within the press timeout
    steps: dict[str, float] = field(default_factory=dict)  # seconds per setup step
    errors: list[str] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return self.ready_s == self.ready_s and not self.errors


def log_in(page, hub: Hub, name: str, timeout: float) -> None:
    """Log in on the hub's page, as a student would; return once their Lab starts loading."""
    page.goto(f"{hub.url}hub/login", timeout=timeout * 1000)
    page.fill("#username_input", name)
    page.fill("#password_input", "any")  # the dummy authenticator takes any password
    page.click("#login_submit")
    # The hub spawns the server, shows its progress, then sends the student to their Lab.
    page.wait_for_url(f"**/user/{name}/lab**", wait_until="commit", timeout=timeout * 1000)


def get_ready(page, console: ConsoleLog, server, student: Student, started: float, timeout: float):
    """Open notebook 03 on `server`, run all its cells, find its explorer and bring the depth
    to START_DEPTH, timing each step from `started` into student.steps; sets student.ready_s."""
    open_notebook(page, server, NOTEBOOK, timeout=timeout)
    student.steps["open notebook"] = time.monotonic() - started
    run_all_cells(page, timeout=timeout)
    student.steps["run all cells"] = time.monotonic() - started
    canvas = find_explorer(page, console, timeout=timeout)
    move_depth_to(page, canvas, START_DEPTH, timeout=timeout)
    student.ready_s = time.monotonic() - started


def slide(page, console: ConsoleLog, student: Student, press_timeout: float, more) -> None:
    """Move the depth slider one key press at a time (20 -> 25 -> 20 ...) while more() says
    so, each press timed into student.samples (a press with no new plot: student.lost)."""
    from playwright.sync_api import Error as PlaywrightError

    keys = itertools.cycle(["ArrowRight"] * SWING + ["ArrowLeft"] * SWING)
    slider_handle(page, DEPTH_SLIDER).focus()
    while more():
        try:
            student.samples.append(press_and_time(page, next(keys), press_timeout))
        except PlaywrightError:
            student.lost += 1
    problems = notebook_errors(page) + console.messages
    if problems:
        student.errors.append("after the moves: " + "; ".join(problems))


def attend(student: Student, hub: Hub, cdp_url: str, args, logins, start, stop_at) -> None:
    """One student's thread: log in, run notebook 03, then move the depth slider until stop_at[0].

    Every student meets the others at the `start` barrier, ready or not, so the
    sliding minute begins for all at once.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        try:
            with logins:
                browser = playwright.chromium.connect_over_cdp(cdp_url)
                context = browser.new_context(viewport=VIEWPORT)
                context.set_default_timeout(args.setup_timeout * 1000)
                page = context.new_page()
                console = ConsoleLog(page)
                started = time.monotonic()
                log_in(page, hub, student.name, args.setup_timeout)
                student.steps["login and spawn"] = time.monotonic() - started
                server = hub.student_server(student.name)
                get_ready(page, console, server, student, started, args.setup_timeout)
        except Exception as error:  # whatever went wrong, the student still meets the class
            student.errors.append(f"setup: {type(error).__name__}: {str(error).strip()[:400]}")
        try:
            start.wait()
        except threading.BrokenBarrierError:
            student.errors.append("the class never started: another thread broke the barrier")
            return
        if not student.ready:
            return
        try:
            slide(page, console, student, args.press_timeout, lambda: time.monotonic() < stop_at[0])
            context.close()
        except Exception as error:  # a crashed page is a finding, not the end of the run
            student.errors.append(f"moves: {type(error).__name__}: {str(error).strip()[:400]}")


# --- what the machine did ------------------------------------------------------------------


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def kernel_cpu_seconds(kernels: list[psutil.Process]) -> float:
    """The kernels' CPU with that of the processes they ran and waited for: notebook 03's
    checks run the student's my_init.py in processes of their own (tinyinit.course.checker)."""
    total = 0.0
    for kernel in kernels:
        try:
            times = kernel.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def tree(pid: int) -> list[psutil.Process]:
    """A process and all its descendants (those alive now)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def server_and_kernels(server: psutil.Process) -> dict[str, psutil.Process | list]:
    """A Jupyter server's process, and the kernels it runs."""
    kernels = [
        child
        for child in server.children(recursive=True)
        if any("ipykernel" in part for part in child.cmdline())
    ]
    return {"server": server, "kernels": kernels}


def student_processes(hub_pid: int) -> dict[str, dict[str, psutil.Process | list]]:
    """Per student name: their single-user server, and the kernels it runs."""
    found = {}
    for proc in tree(hub_pid)[1:]:
        try:
            if not any("jupyterhub-singleuser" in part for part in proc.cmdline()):
                continue
            found[proc.environ().get("JUPYTERHUB_USER", "")] = server_and_kernels(proc)
        except psutil.Error:
            continue
    return found


def cpu_by_pid(processes: list[psutil.Process]) -> dict[int, float]:
    found = {}
    for proc in processes:
        try:
            found[proc.pid] = cpu_seconds(proc)
        except psutil.Error:
            pass
    return found


def total_cpu(processes: list[psutil.Process]) -> float:
    return sum(cpu_by_pid(processes).values())


def cpu_since(before: dict[int, float], now: dict[int, float]) -> float:
    """CPU seconds that a changing set of processes spent between two readings.

    Chromium starts and ends renderers as pages come and go: a process that ended in
    between takes what it spent with it (not counted), one that began counts whole.
    A sum of the live processes' totals at each end would go down, even below zero.
    """
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in now.items())


def memory_mb(proc: psutil.Process) -> tuple[float, float]:
    """RSS and USS of one process, MB (USS: the pages no other process shares)."""
    info = proc.memory_full_info()
    return info.rss / MB, info.uss / MB


@dataclass
class Snapshot:
    """CPU seconds so far of each process of interest, at one moment."""

    wall: float
    machine_busy: float  # all cores, every process on the machine (others' work included)
    hub: float
    proxy: float
    browser: dict[int, float]  # per process: Chromium's come and go
    servers: dict[str, float]
    kernels: dict[str, float]

    @classmethod
    def take(cls, hub: Hub, chromium: LabServer, students) -> Snapshot:
        machine = psutil.cpu_times()
        return cls(
            wall=time.monotonic(),
            machine_busy=sum(machine) - machine.idle - getattr(machine, "iowait", 0.0),
            hub=total_cpu([psutil.Process(hub.hub.pid)]),
            proxy=total_cpu(tree(hub.proxy.pid)),
            browser=cpu_by_pid(tree(chromium.pid)),
            servers={name: total_cpu([s["server"]]) for name, s in students.items()},
            kernels={name: kernel_cpu_seconds(s["kernels"]) for name, s in students.items()},
        )


# --- one student alone, no hub --------------------------------------------------------------


@dataclass
class Rehearsal:
    """One student's figures on one JupyterLab: what `make test` runs of this benchmark."""

    student: Student
    kernel_rss_mb: float
    kernel_uss_mb: float
    server_rss_mb: float
    server_uss_mb: float
    cpu_per_move_ms: float  # the server's and the kernel's CPU, per move


def rehearse(browser, scratch: Path, moves: int = 4, timeout: float = 240.0) -> Rehearsal:
    """One student does what each does in a class, on a JupyterLab in `scratch` (no hub, no
    proxy: nothing `make test` does not install): a folder filled as each home is, notebook 03
    run, the explorer found, the depth slider moved `moves` times, each press timed.

    `browser`: a Playwright Browser, which gets a context of its own for the student.
    Raises if the notebook cannot be run or its explorer is not found; the moves' problems are
    in the student's errors.
    """
    home = scratch / "home"
    fill_home(home)
    server = start_lab(home, home=scratch / "jupyter")
    context = browser.new_context(viewport=VIEWPORT)
    try:
        context.set_default_timeout(timeout * 1000)
        page = context.new_page()
        console = ConsoleLog(page)
        student = Student("student01")
        get_ready(page, console, server, student, time.monotonic(), timeout)
        processes = server_and_kernels(psutil.Process(server.pid))
        if len(processes["kernels"]) != 1:
            raise RuntimeError(f"{len(processes['kernels'])} kernels run notebook 03, not 1")
        watched = [processes["server"], *processes["kernels"]]
        before = total_cpu(watched)
        slide(page, console, student, 15.0, lambda: len(student.samples) + student.lost < moves)
        spent = total_cpu(watched) - before
        kernel = memory_mb(processes["kernels"][0])
        own = memory_mb(processes["server"])
    finally:
        context.close()
        server.stop()
    return Rehearsal(
        student=student,
        kernel_rss_mb=kernel[0],
        kernel_uss_mb=kernel[1],
        server_rss_mb=own[0],
        server_uss_mb=own[1],
        cpu_per_move_ms=1000.0 * spent / len(student.samples) if student.samples else float("nan"),
    )


# --- one class size ------------------------------------------------------------------------


@dataclass
class Round:
    """The figures of one class size."""

    n: int
    ready: int
    setup_median_s: float
    setup_max_s: float
    moves: int
    lost: int
    p50_ms: float
    p90_ms: float
    kernel_rss_mb: float
    kernel_uss_mb: float
    server_rss_mb: float
    server_uss_mb: float
    hub_cpu: float  # % of one core over the sliding minute
    proxy_cpu: float
    server_cpu: float  # per student, mean
    kernel_cpu: float  # per student, mean
    browser_cpu: float  # all simulated browsers together
    machine_busy: float  # % of all cores, everyone's work
    kernels_died: int
    kernel_run_cpu_s: float  # kernel CPU (checks included) from its start to the sliding
    cpu_per_move_ms: float  # server side (hub, proxy, servers, kernels) CPU per move
    free_gb: float
    seconds: float
    problems: list[str]
    steps: dict[str, float]  # median seconds from login to the end of each setup step
    p50_ratio: float = float("nan")  # p50 over the first (smallest) class's, same run

    @property
    def held(self) -> bool:
        return self.ready == self.n and self.kernels_died == 0 and self.moves > 0

    @property
    def per_student_cpu(self) -> float:
        """Server-side CPU per sliding student, % of one core (hub and proxy shared out)."""
        return self.server_cpu + self.kernel_cpu + (self.hub_cpu + self.proxy_cpu) / self.n


def run_class(n: int, args) -> Round:
    from playwright.sync_api import sync_playwright

    began = time.monotonic()
    names = [f"student{i:02d}" for i in range(1, n + 1)]
    scratch = Path(tempfile.mkdtemp(prefix="tinyinit-classroom-"))
    students = [Student(name) for name in names]
    try:
        hub = start_hub(scratch, args.proxy, names, args.blas_threads)
        try:
            chromium = start_chromium(scratch)
            try:
                return _run_class(n, args, hub, chromium, students, began, sync_playwright)
            finally:
                chromium.stop()
        finally:
            hub.stop()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run_class(n, args, hub, chromium, students, began, sync_playwright) -> Round:
    cdp_url = chromium.url.rstrip("/")
    logins = threading.Semaphore(args.logins)
    stop_at = [float("inf")]
    at_start: dict = {}

    def begin_sliding() -> None:  # run by the last student to arrive, before any slides
        at_start["processes"] = student_processes(hub.hub.pid)
        at_start["snapshot"] = Snapshot.take(hub, chromium, at_start["processes"])
        stop_at[0] = time.monotonic() + args.duration

    start = threading.Barrier(n, action=begin_sliding)
    threads = [
        threading.Thread(
            target=attend, args=(s, hub, cdp_url, args, logins, start, stop_at), daemon=True
        )
        for s in students
    ]
    for thread in threads:
        thread.start()
    # Everyone is ready (or has given up) well within this; then the sliding time, then a last
    # move each. A thread still alive past it is stuck, and counts as a student who failed.
    setup_bound = args.setup_timeout * (3 + n / args.logins)
    deadline = time.monotonic() + setup_bound + args.duration + 2 * args.press_timeout
    while "snapshot" not in at_start and time.monotonic() < deadline:
        time.sleep(0.5)
    if "snapshot" not in at_start:
        start.abort()
    else:
        time.sleep(max(0.0, stop_at[0] - time.monotonic()))
    processes = student_processes(hub.hub.pid)
    end = Snapshot.take(hub, chromium, at_start.get("processes", {}))
    memory = {}
    for name, procs in processes.items():
        try:
            memory[name] = {
                "server": memory_mb(procs["server"]),
                "kernel": [memory_mb(k) for k in procs["kernels"]],
            }
        except psutil.Error:
            pass
    for thread in threads:
        thread.join(timeout=max(1.0, deadline - time.monotonic()))
    problems = [f"{s.name}: {e}" for s in students for e in s.errors]
    problems += [
        f"{s.name}: still busy at the end" for s, t in zip(students, threads) if t.is_alive()
    ]

    died = _kernel_deaths(hub, at_start.get("processes", {}), processes)
    problems += died
    first = at_start.get("snapshot", end)
    wall = max(end.wall - first.wall, 1e-9)

    def pct(seconds: float) -> float:
        return 100.0 * seconds / wall

    on_screen = [sample["on screen"] for s in students for sample in s.samples]
    setup = [s.ready_s for s in students if s.ready]
    kernel_mem = [m["kernel"][0] for m in memory.values() if m["kernel"]]
    server_mem = [m["server"] for m in memory.values()]
    nan = float("nan")

    def median_of(values, i):
        return statistics.median(v[i] for v in values) if values else nan

    names = list(first.servers)
    server_side = (end.hub - first.hub) + (end.proxy - first.proxy)
    server_side += sum(end.servers[k] - first.servers[k] for k in names)
    server_side += sum(end.kernels[k] - first.kernels[k] for k in names)
    return Round(
        n=n,
        ready=sum(s.ready for s in students),
        setup_median_s=statistics.median(setup) if setup else nan,
        setup_max_s=max(setup) if setup else nan,
        moves=len(on_screen),
        lost=sum(s.lost for s in students),
        p50_ms=percentile(on_screen, 0.5) if on_screen else nan,
        p90_ms=percentile(on_screen, 0.9) if on_screen else nan,
        kernel_rss_mb=median_of(kernel_mem, 0),
        kernel_uss_mb=median_of(kernel_mem, 1),
        server_rss_mb=median_of(server_mem, 0),
        server_uss_mb=median_of(server_mem, 1),
        hub_cpu=pct(end.hub - first.hub),
        proxy_cpu=pct(end.proxy - first.proxy),
        server_cpu=pct(sum(end.servers[k] - first.servers[k] for k in names) / max(len(names), 1)),
        kernel_cpu=pct(sum(end.kernels[k] - first.kernels[k] for k in names) / max(len(names), 1)),
        browser_cpu=pct(cpu_since(first.browser, end.browser)),
        machine_busy=pct(end.machine_busy - first.machine_busy) / psutil.cpu_count(),
        kernels_died=len(died),
        kernel_run_cpu_s=(
            statistics.median(first.kernels.values()) if "snapshot" in at_start else nan
        ),
        cpu_per_move_ms=1000.0 * server_side / len(on_screen) if on_screen else nan,
        free_gb=psutil.virtual_memory().available / 1024**3,
        seconds=time.monotonic() - began,
        problems=problems,
        steps={
            step: statistics.median(s.steps[step] for s in students if s.ready)
            for step in (students[0].steps if students[0].ready else {})
        },
    )


def _kernel_deaths(hub: Hub, before: dict, after: dict) -> list[str]:
    """Kernels that died: gone since the sliding began, replaced, or restarted per the hub's log."""
    deaths = []
    for name, procs in before.items():
        kernels = procs["kernels"]
        if len(kernels) != 1:
            deaths.append(f"{name}: {len(kernels)} kernels when the sliding began, not 1")
        for kernel in kernels:
            if not kernel.is_running():
                deaths.append(f"{name}: kernel {kernel.pid} is gone")
        now = {k.pid for k in after.get(name, {}).get("kernels", [])}
        if now - {k.pid for k in kernels}:
            deaths.append(f"{name}: a new kernel {sorted(now)} replaced {[k.pid for k in kernels]}")
    for line in hub.log_text().splitlines():
        if any(word in line for word in KERNEL_DEATH):
            deaths.append(f"hub log: {line.strip()[:200]}")
    return deaths


# --- the report ----------------------------------------------------------------------------

COLUMNS = [
    # header, unit, format, value of a Round
    ("students", "", "{:d}", lambda r: r.n),
    ("ready", "", "{:d}", lambda r: r.ready),
    ("setup p50", "s", "{:.0f}", lambda r: r.setup_median_s),
    ("moves", "", "{:d}", lambda r: r.moves),
    ("lost", "", "{:d}", lambda r: r.lost),
    ("p50", "ms", "{:.0f}", lambda r: r.p50_ms),
    ("p90", "ms", "{:.0f}", lambda r: r.p90_ms),
    ("p50 / first", "", "{:.1f}", lambda r: r.p50_ratio),
    ("kernel RSS", "MB", "{:.0f}", lambda r: r.kernel_rss_mb),
    ("kernel USS", "MB", "{:.0f}", lambda r: r.kernel_uss_mb),
    ("server RSS", "MB", "{:.0f}", lambda r: r.server_rss_mb),
    ("server USS", "MB", "{:.0f}", lambda r: r.server_uss_mb),
    ("run nb CPU", "s", "{:.0f}", lambda r: r.kernel_run_cpu_s),
    ("CPU/move", "ms", "{:.0f}", lambda r: r.cpu_per_move_ms),
    ("hub CPU", "%", "{:.1f}", lambda r: r.hub_cpu),
    ("proxy CPU", "%", "{:.1f}", lambda r: r.proxy_cpu),
    ("per student", "%", "{:.1f}", lambda r: r.per_student_cpu),
    ("browsers CPU", "%", "{:.0f}", lambda r: r.browser_cpu),
    ("machine busy", "%", "{:.0f}", lambda r: r.machine_busy),
    ("kernels died", "", "{:d}", lambda r: r.kernels_died),
]

LEGEND = (
    "setup: login to notebook run (median); moves: depth slider presses by all students "
    "together in the sliding time, lost: no new plot within the press timeout; p50/p90: key "
    "press to the new plot on screen, over all moves; p50 / first: that p50 over the first "
    "class's, same run; memory: per student, median, at the end (USS: what that process alone "
    "holds); run nb CPU: kernel CPU from its start to the sliding (running notebook 03, with "
    "the processes its checks run), median; "
    "CPU/move: hub, proxy, servers and kernels together, per move; CPU %: of one core over the "
    "sliding time; per student: server + kernel (mean) + a share of hub and proxy; "
    "browsers: all simulated students' Chromium together (a real class runs these on its "
    "laptops); machine busy: % of all cores, every process on the machine."
)


def cells(r: Round) -> list[str]:
    out = []
    for _, _, fmt, value in COLUMNS:
        v = value(r)
        out.append("-" if isinstance(v, float) and v != v else fmt.format(v))
    return out


def headers() -> list[str]:
    return [f"{h} ({u})" if u else h for h, u, _, _ in COLUMNS]


def text_table(rounds: list[Round]) -> str:
    rows = [headers()] + [cells(r) for r in rounds]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(c.rjust(w) for c, w in zip(row, widths)).rstrip() for row in rows
    )  # fmt: skip


def markdown_table(rounds: list[Round]) -> str:
    lines = ["| " + " | ".join(headers()) + " |", "|" + " ---: |" * len(COLUMNS)]
    lines += ["| " + " | ".join(cells(r)) + " |" for r in rounds]
    return "\n".join(lines)


def machine_line(args) -> str:
    blas = f"OPENBLAS_NUM_THREADS={args.blas_threads}" if args.blas_threads else "BLAS default"
    return (
        f"{psutil.cpu_count()} cores, {psutil.virtual_memory().total / 1024**3:.0f} GB, "
        f"load average {os.getloadavg()[0]:.1f} at the end; {args.duration:g} s of sliding "
        f"per class size, {args.logins} logins at a time; kernels with {blas}"
    )


# --- the command line ----------------------------------------------------------------------


def class_sizes(listed: list[int], step: int, most: int):
    """The listed sizes, then on by `step`, none above `most`."""
    yield from (n for n in listed if n <= most)
    if step > 0:
        yield from range(listed[-1] + step, most + 1, step)


def positive_ints(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1 or values != sorted(set(values)):
        raise argparse.ArgumentTypeError(
            f"--students must be increasing positive integers separated by commas, got {text!r}"
        )
    return values


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--students",
        type=positive_ints,
        default=[1, 5, 10],
        help="class sizes to measure first (default 1,5,10)",
    )
    parser.add_argument(
        "--step",
        type=int,
        default=5,
        help="then grow the class by this many while it holds (0: no more)",
    )
    parser.add_argument("--max-students", type=int, default=30, help="largest class (default 30)")
    parser.add_argument(
        "--duration",
        type=float,
        default=60.0,
        help="seconds of slider moves per class size (default 60)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=2400.0,
        help="seconds for all class sizes together (default 2400)",
    )
    parser.add_argument(
        "--max-p90-ms",
        type=float,
        default=1000.0,
        help="a class holds while p90 move latency is at most this (default 1000)",
    )
    parser.add_argument(
        "--min-free-gb",
        type=float,
        default=2.0,
        help="a class holds while this much memory is left (default 2)",
    )
    parser.add_argument(
        "--logins",
        type=int,
        default=3,
        help="students who log in and run the notebook at once (default 3)",
    )
    parser.add_argument(
        "--setup-timeout",
        type=float,
        default=240.0,
        help="seconds for each step of a student's setup (default 240)",
    )
    parser.add_argument(
        "--press-timeout",
        type=float,
        default=15.0,
        help="seconds after which a move counts as lost (default 15)",
    )
    parser.add_argument(
        "--blas-threads",
        type=int,
        default=None,
        help="OPENBLAS_NUM_THREADS for the kernels (default: unset, as on a stock hub)",
    )
    parser.add_argument(
        "--proxy",
        default=str(DEFAULT_PROXY),
        help="configurable-http-proxy to run (default: build/chp's, from npm)",
    )
    parser.add_argument("--markdown", type=Path, help="also write the table, as Markdown, here")
    args = parser.parse_args(argv)  # fmt: skip
    for name in ("duration", "budget", "logins", "setup_timeout", "press_timeout"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    if args.step < 0 or args.max_students < 1:
        parser.error(f"--step must be >= 0 and --max-students >= 1, got {args.step}, "
                     f"{args.max_students}")  # fmt: skip
    if args.blas_threads is not None and args.blas_threads < 1:
        parser.error(f"--blas-threads must be at least 1, got {args.blas_threads}")
    return args


def stop_reason(last: Round, args) -> str:
    """Why the class should not grow past `last` (empty: it may)."""
    if not last.held:
        return f"{last.n} students did not hold (see the problems above)"
    if last.p90_ms > args.max_p90_ms:
        return f"p90 latency {last.p90_ms:.0f} ms > {args.max_p90_ms:.0f} ms at {last.n} students"
    if last.free_gb < args.min_free_gb:
        return f"{last.free_gb:.1f} GB left < {args.min_free_gb:g} GB at {last.n} students"
    return ""


def main(argv=None) -> int:
    args = parse_args(argv)
    proxy = shutil.which(args.proxy)
    if proxy is None:
        print(f"no configurable-http-proxy at {args.proxy}: `make bench-classroom` installs it")
        return 2
    args.proxy = str(Path(proxy).resolve())  # the proxy runs in a scratch folder
    if not os.path.exists(chromium_path()):
        print(f"no Chromium at {chromium_path()}: `apt-get install -y chromium`")
        return 2

    print(__doc__.splitlines()[0])
    began = time.monotonic()
    rounds: list[Round] = []
    why = ""
    for n in class_sizes(args.students, args.step, args.max_students):
        if rounds:
            why = stop_reason(rounds[-1], args) if n > args.students[-1] else ""
            if why:
                break
            # Setup grows with the class; the sliding time does not.
            last = rounds[-1]
            expected = args.duration + (last.seconds - args.duration) * n / last.n
            left = args.budget - (time.monotonic() - began)
            if expected > left:
                why = f"{n} students would take about {expected:.0f} s, {left:.0f} s left"
                break
        print(f"\n{n} student(s) ...", flush=True)
        result = run_class(n, args)
        result.p50_ratio = result.p50_ms / rounds[0].p50_ms if rounds else 1.0
        rounds.append(result)
        for problem in result.problems:
            print(f"  problem: {problem}")
        steps = ", ".join(f"{step} {t:.0f} s" for step, t in result.steps.items())
        print(f"  setup, from login (median): {steps}")
        print(text_table([result]).splitlines()[-1], flush=True)
    if not why and rounds:
        why = stop_reason(rounds[-1], args) or (
            f"no larger class asked for (--max-students {args.max_students}, --step {args.step})"
        )

    print(f"\n{machine_line(args)}\n")
    print(text_table(rounds))
    print(f"\nstopped: {why}")
    print("\n" + LEGEND)
    if args.markdown:
        args.markdown.write_text(
            f"{markdown_table(rounds)}\n\n{machine_line(args)}. Stopped: {why}.\n\n{LEGEND}\n"
        )
        print(f"\nwritten: {args.markdown}")
    return 0 if all(r.held for r in rounds) else 1


if __name__ == "__main__":
    sys.exit(main())

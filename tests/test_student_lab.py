"""`make student-lab`: the check command works, as the README writes it, in JupyterLab's terminal.

The test starts JupyterLab the way a student does (`make student-lab`, on an edition of its
own, on 127.0.0.1 and a free port), opens a terminal as JupyterLab's launcher does (the
server's REST API, then the terminal's websocket), types the README's command and reads what
the terminal shows: the card's verdict and its exit status, never "No module named tinyinit".
The student's shell reads its own start-up file (here ~/.bashrc may put pyenv's Python
first), so this is what a student meets. Both ways a shell is started are tried: bash, with a
start-up file of the project's, and any other shell, with PATH.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest
from browser.lab import free_port, lab_environment, write_lab_config
from event_loop import in_event_loop
from scripts_loader import load_script
from tornado.websocket import websocket_connect

ROOT = Path(__file__).resolve().parent.parent
README_COMMAND = "python -m tinyinit check my_init.py"
ms = load_script("make_student")


def test_the_readme_gives_the_command_this_test_types():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert README_COMMAND in readme
    assert "make student-lab" in readme and "make check" in readme


class StudentLab:
    """`make student-lab` running in its own process group, with a token of its own."""

    def __init__(self, edition: Path, home: Path, shell: str):
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}/"
        write_lab_config(home / "config")
        env = lab_environment(home)
        env["SHELL"] = shell
        for name in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS"):  # not the outer make's jobserver
            env.pop(name, None)
        venv = Path(sys.prefix)
        args = f"--no-browser --ip=127.0.0.1 --port-retries=0 --IdentityProvider.token={self.token}"
        self.log = (home / "lab.log").open("w")
        self.process = subprocess.Popen(
            # -o: the venv this test runs in is taken as installed; never reinstall it
            ["make", "student-lab", f"VENV={venv}", "-o", f"{venv}/.lab", f"STUDENT={edition}"]
            + [f"PORT={self.port}", f"LAB_ARGS={args}"],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while not self.answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"JupyterLab did not start:\n{(home / 'lab.log').read_text()}")
            time.sleep(0.5)

    def answers(self) -> bool:
        try:
            self.api("api/status")
            return True
        except (OSError, urllib.error.URLError):
            return False

    def api(self, path: str, body: dict | None = None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method="POST" if body is not None else "GET",
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=10) as reply:
            return json.loads(reply.read() or b"null")

    def terminal(self, command: str, timeout: float = 180.0) -> tuple[str, int]:
        """Open a terminal as the launcher does (in the folder shown: cwd ""), type `command`
        and Enter, and return what the terminal showed and the command's exit status."""
        name = self.api("api/terminals", {"cwd": ""})["name"]
        url = f"ws://127.0.0.1:{self.port}/terminals/websocket/{name}?token={self.token}"

        async def run() -> str:
            socket = await websocket_connect(url)
            await socket.write_message(json.dumps(["stdin", f"{command}; echo EXIT=$?\r"]))
            shown = ""
            while not re.search(r"EXIT=\d+", shown.split("echo EXIT=$?")[-1]):
                message = await asyncio.wait_for(socket.read_message(), timeout)
                if message is None:
                    break
                kind, *data = json.loads(message)
                if kind == "stdout":
                    shown += data[0]
            socket.close()
            return shown

        shown = in_event_loop(run)  # the test session may run a loop in this thread
        status = re.search(r"EXIT=(\d+)", shown.split("echo EXIT=$?")[-1])
        return shown, int(status.group(1)) if status else -1

    def stop(self) -> None:
        """End make, JupyterLab and everything they started (kernels, terminals)."""
        try:
            family = [psutil.Process(self.process.pid)]
            family += family[0].children(recursive=True)
        except psutil.Error:
            family = []
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        _, alive = psutil.wait_procs(family, timeout=10)
        for process in alive:
            try:
                process.kill()
            except psutil.Error:
                pass
        self.log.close()


@pytest.mark.parametrize("shell", ["/bin/bash", "/bin/sh"])
def test_the_readme_command_runs_in_a_jupyterlab_terminal_of_make_student_lab(tmp_path, shell):
    if shutil.which("make") is None or not Path(shell).exists():
        pytest.fail(f"make and {shell} are needed to test `make student-lab`")
    edition = tmp_path / "student"
    ms.make_student(ROOT / "notebooks", edition)
    lab = StudentLab(edition, tmp_path / "jupyter", shell)
    try:
        shown, status = lab.terminal(README_COMMAND)  # the stubs, as the edition starts
        assert "No module named" not in shown, shown
        assert "my_init.py: 0 of 11 tests passed; 11 not written yet" in shown, shown
        assert status == 1, shown
        # the teacher's functions in the student's file: the verdict is "passed", exit 0
        shutil.copy2(ROOT / "notebooks" / "my_init.py", edition / "my_init.py")
        shown, status = lab.terminal(README_COMMAND)
        assert "my_init.py: 11 of 11 tests passed" in shown, shown
        assert status == 0, shown
    finally:
        lab.stop()
    assert lab.process.poll() is not None

"""JupyterLab as `make lab` and `make student-lab` start it (`jupyter lab --config=<this file>`).

Its terminals run in the project's Python. A terminal opened in JupyterLab runs the user's
shell, whose start-up files (~/.bashrc: pyenv, conda, ...) put their own Python first on
PATH, and where the server has no terminal of its own it is a login shell, which resets PATH
from /etc/profile: `python -m tinyinit check my_init.py` would then find a Python without
tinyinit. So the terminal's shell reads the user's start-up file first and then puts this
environment's bin folder first on PATH (the server runs on the .venv's python: sys.executable).
bash and zsh are told so through a start-up file of their own; any other shell gets PATH.
"""

import hashlib
import os
import sys
import tempfile

environment_bin = os.path.dirname(sys.executable)
environment = os.path.dirname(environment_bin)
shell = os.environ.get("SHELL") or "/bin/sh"
activate = f'export PATH="{environment_bin}{os.pathsep}$PATH" VIRTUAL_ENV="{environment}"\n'
# one folder per environment: servers of two checkouts write their own start-up files
key = hashlib.sha256(environment.encode()).hexdigest()[:12]
folder = os.path.join(tempfile.gettempdir(), f"tinyinit-shell-{key}")
os.makedirs(folder, exist_ok=True)


def startup_file(name: str, users: str) -> str:
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f'[ -f "{users}" ] && . "{users}"\n' + activate)
    return path


if os.path.basename(shell) == "bash":
    rcfile = startup_file("bashrc", os.path.expanduser("~/.bashrc"))
    command = [shell, "--rcfile", rcfile, "-i"]
elif os.path.basename(shell) == "zsh":
    startup_file(".zshrc", os.path.expanduser("~/.zshrc"))
    command = ["/usr/bin/env", f"ZDOTDIR={folder}", shell, "-i"]
else:
    path = f"{environment_bin}{os.pathsep}{os.environ.get('PATH', '')}"
    command = ["/usr/bin/env", f"PATH={path}", f"VIRTUAL_ENV={environment}", shell, "-i"]

# `c` is the configuration object that Jupyter hands a config file.
c.ServerApp.terminado_settings = {"shell_command": command}  # noqa: F821

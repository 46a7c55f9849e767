"""check.py: the module card's eleven tests on your my_init.py, from any terminal in this folder.

    python check.py             # checks my_init.py, beside this file
    python check.py other.py    # checks another file

It runs `python -m tinyinit check` with the Python that has tinyinit: this one if it has, or
else the course's environment, the `.venv` folder of the repository this folder is in (the
one `make student` made it from). Its exit code is the checker's: 0 when every test passes,
1 when one fails, 2 when the file could not be checked (or no Python with tinyinit was found:
then it says how to get one).
"""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Where a virtual environment keeps its Python: on Linux and macOS, and on Windows.
VENV_PYTHONS = (Path(".venv", "bin", "python"), Path(".venv", "Scripts", "python.exe"))
NOT_FOUND = """\
check.py: no Python with tinyinit found: this one ({python}) has none, and no .venv in {folder}
or a folder above it. Run the check where the course's environment is: in JupyterLab's terminal
(make student-lab opens one), or after activating it (source .venv/bin/activate in the
repository's folder), or install tinyinit into this Python (pip install -e . there)."""


def course_python(folder: Path) -> Path | None:
    """The Python of the nearest .venv in folder or above it, or None."""
    for place in (folder, *folder.parents):
        for python in VENV_PYTHONS:
            if (place / python).is_file():
                return place / python
    return None


def main(argv: list[str]) -> int:
    file = argv[0] if argv else str(HERE / "my_init.py")
    command = ["-m", "tinyinit", "check", file, *argv[1:]]
    if importlib.util.find_spec("tinyinit") is not None:
        python = Path(sys.executable)
    else:
        python = course_python(HERE)
        if python is None:
            print(NOT_FOUND.format(python=sys.executable, folder=HERE), file=sys.stderr)
            return 2
    return subprocess.run([os.fspath(python), *command], check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

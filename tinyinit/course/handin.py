"""Handing in: what a teacher collects from a student, packed into one file named for them.

    python -m tinyinit submit --name ada_lovelace        # in the folder of my_init.py

writes `ada_lovelace.zip` beside my_init.py, holding

* `my_init.py`, the seven functions;
* `check.txt`, the card's tests' report on it at the time of packing (its first line says
  whether the check ran in the sandbox);
* `inventory.json`, the concept inventory's answers, when the student has sat it.

The teacher collects the zips in one folder (a shared folder, an upload to the course's
learning platform) and grades them all: `python -m tinyinit grade FOLDER --out grades`, which
reads each zip's my_init.py and inventory.json (nothing else of it, and nothing larger than a
source file) and checks the file again in the sandbox: the report in the zip is the
student's copy, never the grade.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "my_init.py").write_text("def fans(shape):\\n    raise NotImplementedError\\n")
>>> packed = pack(folder, "ada", report_text="my_init.py: 0 of 11 tests passed\\n")
>>> packed.name, sorted(zipfile.ZipFile(packed).namelist())
('ada.zip', ['check.txt', 'my_init.py'])
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

from ..core.arguments import instance

__all__ = ["MAX_MEMBER_BYTES", "NAME", "pack", "unpack"]

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
MAX_MEMBER_BYTES = 2**20  # a source file or an answers file is far smaller
SOLUTION, REPORT, ANSWERS = "my_init.py", "check.txt", "inventory.json"
# A zip's members carry a date: a fixed one, so that packing the same files gives the same zip.
STAMP = (2026, 1, 1, 0, 0, 0)


def student_name(name: str) -> str:
    """The name a hand-in is filed under: letters, digits, '_', '.', '-', at most 64.

    >>> student_name("ada_lovelace")
    'ada_lovelace'
    >>> student_name("../x")
    Traceback (most recent call last):
    ...
    ValueError: name must be letters, digits, '_', '.' or '-' (at most 64, starting with a letter or digit), got '../x'
    """  # noqa: E501
    instance("name", name, str, "your name as the course files it, e.g. 'ada_lovelace'")
    if not NAME.fullmatch(name):
        raise ValueError(
            "name must be letters, digits, '_', '.' or '-' (at most 64, starting with a letter "
            f"or digit), got {name!r}"
        )
    return name


def pack(folder, name: str, report_text: str) -> Path:
    """folder/NAME.zip with folder's my_init.py, `report_text` as check.txt and, when there,
    folder's inventory.json. FileNotFoundError naming the file when my_init.py is missing.

    >>> import tempfile
    >>> pack(tempfile.mkdtemp(), "ada", "")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no my_init.py in /...: run this where your file is
    """
    folder = Path(instance("folder", folder, (str, os.PathLike), "a folder"))
    name = student_name(name)
    solution = folder / SOLUTION
    if not solution.is_file():
        raise FileNotFoundError(f"no {SOLUTION} in {folder}: run this where your file is")
    target = folder / f"{name}.zip"
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as packed:
        members = [(SOLUTION, solution.read_bytes()), (REPORT, report_text.encode("utf-8"))]
        if (folder / ANSWERS).is_file():
            members.append((ANSWERS, (folder / ANSWERS).read_bytes()))
        for member, data in members:
            packed.writestr(zipfile.ZipInfo(member, date_time=STAMP), data)
    return target


def unpack(packed: Path, into: Path) -> Path | None:
    """A hand-in's my_init.py (and inventory.json) copied into `into`; the path of the
    my_init.py, or None where the zip holds none. Only those two names are read, each at most
    MAX_MEMBER_BYTES; a zip that is not one reads as holding none.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> bad = folder / "bob.zip"
    >>> _ = bad.write_bytes(b"not a zip")
    >>> unpack(bad, folder / "bob") is None
    True
    """
    into.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(packed) as archive:
            for member in (SOLUTION, ANSWERS):
                try:
                    info = archive.getinfo(member)
                except KeyError:
                    continue
                with archive.open(info) as source:
                    data = source.read(MAX_MEMBER_BYTES + 1)  # whatever size it claims
                if len(data) <= MAX_MEMBER_BYTES:
                    (into / member).write_bytes(data)
    except (zipfile.BadZipFile, OSError, RuntimeError, ValueError):
        return None
    solution = into / SOLUTION
    return solution if solution.is_file() else None

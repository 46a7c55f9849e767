"""`python -m tinyinit check PATH` says what is really wrong with a path that names no Python
file it can read: an empty path, a FIFO or a device (which a read would wait on, or never
finish), a null character. Each is one line and exit status 2, and nothing is opened."""

from __future__ import annotations

import os

import pytest
from refusals import assert_refused

from tinyinit import cli
from tinyinit.course.checker import UnreadableFile, student_file

GIVE = (
    "give the Python file that holds your seven functions, e.g. 'my_init.py' next to the notebooks"
)


def fifo(tmp_path) -> str:
    """A FIFO named as the student's file is: only its kind is wrong (no one writes to it)."""
    path = tmp_path / "my_init.py"
    os.mkfifo(path)
    return str(path)


PATHS = {
    "a FIFO": (fifo, "path {!r} is not a regular file (a FIFO): " + GIVE),
    "a character device": (
        lambda tmp_path: os.devnull,
        "path {!r} is not a regular file (a character device): " + GIVE,
    ),
    "an endless device": (
        lambda tmp_path: "/dev/zero",
        "path {!r} is not a regular file (a character device): " + GIVE,
    ),
    "an empty path": (lambda tmp_path: "", "path is empty: " + GIVE),  # not the folder '.'
    "a null character": (
        lambda tmp_path: "my\0init.py",
        "path {!r} holds a null character, which no file name can: " + GIVE,
    ),
    # as before: these two were already said right
    "a folder": (str, "path {!r} is a folder, not a file: " + GIVE),
    "a missing file": (
        lambda tmp_path: str(tmp_path / "gone.py"),
        "path {!r} does not exist: " + GIVE,
    ),
}


@pytest.mark.parametrize("what", PATHS)
def test_a_path_that_is_no_readable_file_is_refused_for_what_it_is(what, tmp_path):
    make, words = PATHS[what]
    path = make(tmp_path)
    assert_refused([(lambda: student_file(path), UnreadableFile, words.format(path))])


@pytest.mark.parametrize("what", PATHS)
def test_the_command_line_says_it_in_one_line_and_exits_2(what, tmp_path, capsys):
    make, words = PATHS[what]
    path = make(tmp_path)
    assert cli.main(["check", path]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"python -m tinyinit check: error: {words.format(path)}\n")

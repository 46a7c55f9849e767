"""The concept inventory's two sittings in the student edition (notebooks 00 and 04b): the
choices outlive the kernel, the first sitting never shows an answer and cannot change once the
second has begun, the second shows the answers once submitted, a broken inventory.json is said
and never stops the notebook, and what the notebooks write is what `submit` packs and `grade`
reads into Hake's g."""

from __future__ import annotations

import copy
import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from scripts_loader import load_script

from tinyinit.course.inventory import (
    BROKEN,
    FILE,
    FOLDER_VARIABLE,
    ITEMS,
    read_answers,
    save_answers,
    sitting,
)

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
PRE, POST = "00_inventory_before_you_start", "04b_inventory_what_you_learned"
ms = load_script("make_student")
RIGHT = {item.id: item.answer for item in ITEMS}
WRONG = {item.id: min(item.misconceptions) for item in ITEMS}


@pytest.fixture(autouse=True)
def beside_the_notebooks(monkeypatch):
    """The student's setting: no folder named by the environment, answers beside the notebook."""
    monkeypatch.delenv(FOLDER_VARIABLE, raising=False)


def student(stem: str):
    return ms.student_notebook(nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4))


def run(stem: str, folder: Path, *extra: str):
    """The student edition of `stem` run top to bottom in a new kernel in `folder` (a restart:
    nothing is kept but the files), then the `extra` cells; the notebook as it ran."""
    nb = copy.deepcopy(student(stem))
    nb.cells += [nbformat.v4.new_code_cell(source) for source in extra]
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute()
    return nb


def shown(nb) -> str:
    """What the sitting's cell shows, as text."""
    cell = next(c for c in nb.cells if c.cell_type == "code" and "sitting(" in c.source)
    return "".join(o.get("data", {}).get("text/plain", "") for o in cell.outputs)


def printed(nb) -> str:
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))


def answering(answers: dict[str, str], submit: bool = False) -> list[str]:
    cells = [f"inventory.answer({i!r}, {c!r})" for i, c in answers.items()]
    return cells + (["print(inventory.submit())"] if submit else [])


def radios(nb) -> list[dict]:
    """The stored state of the sitting's radio buttons, in the items' order."""
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    found = [m["state"] for m in state.values() if m["model_name"] == "RadioButtonsModel"]
    assert len(found) == len(ITEMS)
    return found


def test_the_choices_outlive_the_kernel_in_the_text_and_in_the_radio_buttons(tmp_path):
    run(PRE, tmp_path, 'inventory.answer("variance_of_a_sum", "b")')
    assert json.loads((tmp_path / FILE).read_text()) == {"pre": {"variance_of_a_sum": "b"}}
    again = run(PRE, tmp_path)  # a new kernel: the notebook re-opened and run again
    text = shown(again)
    assert "   (•) (b) n s^2 Var(x)" in text and text.count("(•)") == 1
    assert "1 of 13 answered" in text
    buttons = radios(again)
    assert buttons[0]["index"] == 1 and all(b["index"] is None for b in buttons[1:])
    assert not any(b["disabled"] for b in buttons)


def test_the_first_sitting_never_shows_an_answer(tmp_path):
    nb = run(PRE, tmp_path, *answering(WRONG, submit=True))
    again = run(PRE, tmp_path)
    everything = nbformat.writes(nb) + nbformat.writes(again)
    for item in ITEMS:
        assert item.explanation not in everything, item.id
    assert "right" not in (printed(nb) + shown(again)).lower()
    assert "This sitting is closed: your answers were submitted." in shown(again)
    assert all(b["disabled"] for b in radios(again))
    assert read_answers(tmp_path / FILE) == {"pre": WRONG}


def test_the_second_sitting_shows_the_answers_once_submitted_and_then_stays(tmp_path):
    save_answers(tmp_path, "pre", WRONG, submit=True)
    half = dict(list(RIGHT.items())[:7] + list(WRONG.items())[7:])
    before = run(POST, tmp_path, *answering(half))
    assert not any(item.explanation in nbformat.writes(before) for item in ITEMS)
    submitted = run(POST, tmp_path, "print(inventory.submit())")
    assert "Submitted: 7 of 13 right. Before notebook 01: 0 of 13." in printed(submitted)
    assert "Hake's g = 0.54" in printed(submitted)  # (7/13 - 0) / (1 - 0)
    again = shown(run(POST, tmp_path, 'print(inventory.answer("the_relu_gain", "c"))'))
    for item in ITEMS:
        assert item.explanation in again, item.id
    assert again.count("✓ Right.") == 7 and again.count("✗ You chose") == 6
    assert read_answers(tmp_path / FILE)["post"] == half  # the change after it was refused


def test_submitting_needs_every_item_and_says_which_are_left(tmp_path):
    nb = run(PRE, tmp_path, *answering(dict(list(WRONG.items())[:11]), submit=True))
    assert "Not submitted: questions 12, 13 are unanswered." in printed(nb)
    assert "submitted" not in json.loads((tmp_path / FILE).read_text())


def test_the_first_sitting_closes_when_the_second_begins(tmp_path):
    pre = sitting("pre", tmp_path)
    pre.answer("variance_of_a_sum", "b")  # not submitted: still open
    post = sitting("post", tmp_path)
    assert "closes the first sitting (before notebook 01) as it is, 1 of 13" in post.status()
    post.answer("variance_of_a_sum", "a")
    said = pre.answer("variance_of_a_sum", "a")  # the first sitting's kernel, still running
    assert said.startswith("This sitting is closed: the second one (after notebook 04) has begun")
    assert read_answers(tmp_path / FILE, partial=True)["pre"] == {"variance_of_a_sum": "b"}
    assert sitting("pre", tmp_path).closed and not sitting("post", tmp_path).closed


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{not json", "cannot be read as JSON"),
        ('{"pre": {"no_such_item": "a"}}', "no item is called 'no_such_item'"),
        ('{"pre": {}, "submitted": "pre"}', "'submitted' must list sittings it holds"),
    ],
)
def test_a_broken_file_is_said_and_kept_aside_never_fatal(tmp_path, text, reason):
    (tmp_path / FILE).write_text(text)
    nb = run(PRE, tmp_path)  # no error: the notebook runs
    assert f"{FILE} could not be read" in shown(nb) and reason in shown(nb)
    nb = run(PRE, tmp_path, 'print(inventory.answer("variance_of_a_sum", "c"))')
    assert f"The unreadable {FILE} was kept as {BROKEN}." in printed(nb)
    assert (tmp_path / BROKEN).read_text() == text
    assert read_answers(tmp_path / FILE, partial=True) == {"pre": {"variance_of_a_sum": "c"}}


def test_a_partial_file_is_read_as_far_as_it_goes(tmp_path):
    save_answers(tmp_path, "post", {"the_relu_gain": "b"})
    text = shown(run(POST, tmp_path))
    assert "1 of 13 answered" in text and "   (•) (b) 2" in text


def test_the_file_is_replaced_whole_and_leaves_nothing_beside_it(tmp_path):
    inventory = sitting("pre", tmp_path)
    for item_id, choice in WRONG.items():
        inventory.answer(item_id, choice)
    assert sorted(p.name for p in tmp_path.iterdir()) == [FILE]
    assert read_answers(tmp_path / FILE) == {"pre": WRONG}


def test_bad_input_is_refused_naming_the_argument(tmp_path):
    inventory = sitting("pre", tmp_path)
    with pytest.raises(ValueError, match="item_id must be one of"):
        inventory.answer("variance", "a")
    with pytest.raises(ValueError, match="choice must be one of a, b, c, d, got 'e'"):
        inventory.answer("variance_of_a_sum", "e")
    with pytest.raises(ValueError, match="sitting must be one of pre, post, got 'during'"):
        sitting("during", tmp_path)
    assert not (tmp_path / FILE).exists()


@pytest.mark.parametrize("stem", [PRE, POST])
def test_the_stored_notebooks_hold_no_answer_and_no_stale_file(tmp_path, stem):
    """The teacher's copy runs as a test with its answers in a new folder: a stale
    inventory.json beside it changes none of its outputs, and neither edition stores an
    answer."""
    teacher = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    for text in (nbformat.writes(teacher), nbformat.writes(student(stem))):
        assert not any(item.explanation in text for item in ITEMS)
    save_answers(tmp_path, "pre", WRONG, submit=True)
    save_answers(tmp_path, "post", RIGHT, submit=True)
    rerun = copy.deepcopy(teacher)
    NotebookClient(
        rerun, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    assert shown(rerun) == shown(teacher)
    assert "0 of 13 answered" in shown(teacher)
    # the student edition has no such cell: its answers go beside the notebooks
    assert not any(FOLDER_VARIABLE in c.source for c in student(stem).cells)


def test_what_the_notebooks_write_is_handed_in_and_graded_into_hakes_g(tmp_path):
    """Two students sit both notebooks, hand in with `submit`, and `grade` reads the zips."""
    hand_ins = tmp_path / "hand_ins"
    hand_ins.mkdir()
    half = dict(list(RIGHT.items())[:7] + list(WRONG.items())[7:])
    for name, pre, post in (("ada", WRONG, RIGHT), ("bob", WRONG, half)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "my_init.py").write_text((NOTEBOOKS / "my_init.py").read_text())
        run(PRE, folder, *answering(pre, submit=True))
        run(POST, folder, *answering(post, submit=True))
        packed = subprocess.run(
            [sys.executable, "-m", "tinyinit", "submit", "--name", name, str(folder)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert packed.returncode == 0, packed.stderr
        (folder / f"{name}.zip").rename(hand_ins / f"{name}.zip")
    out = tmp_path / "grades"
    graded = subprocess.run(
        [sys.executable, "-m", "tinyinit", "grade", str(hand_ins), "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert graded.returncode == 0, graded.stderr
    rows = {row["student"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert (rows["ada"]["inventory_pre"], rows["ada"]["inventory_post"]) == ("0", "100")
    assert (rows["bob"]["inventory_pre"], rows["bob"]["inventory_post"]) == ("0", "54")
    page = (out / "report.html").read_text()
    # pre 0 %, post (100 + 53.8) / 2 = 76.9 %: g = 0.77
    assert re.search(r"2 students sat it before and after: 0% right before, 77% after; "
                     r"Hake's normalized gain g = 0\.77", page)  # fmt: skip

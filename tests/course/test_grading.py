"""`python -m tinyinit grade` on a synthetic class: a correct file, each of the card's pitfalls,
stubs, a syntax error, an empty file, a file that is not text, a missing submission, a hostile
file and an endless one, in nbgrader's layout and as plain files. Each row says what its file
is, the hostile and endless ones change no one else's, and a second run writes the same files.
"""

from __future__ import annotations

import csv
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import mutants
import pytest
from scripts_loader import ROOT, load_script

import tinyinit
from tinyinit.course.catalog import NAMES
from tinyinit.course.grading import COLUMNS, FAIL, PASS, UNCHECKED
from tinyinit.course.inventory import ITEMS, class_statistics, score

TEACHER = ROOT / "notebooks" / "my_init.py"
PACKAGE = Path(tinyinit.__file__).resolve().parent
make_student = load_script("make_student")
STUBS = make_student.fill_solutions(TEACHER.read_text(), make_student.CODE_STUB)

pytestmark = pytest.mark.usefixtures("sandbox")


def package_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class, graded twice into two folders (the second to compare)."""
    root = tmp_path_factory.mktemp("class")
    submitted = root / "submitted"

    def hand_in(student: str, data: bytes | str, nbgrader: bool = True) -> None:
        path = (
            submitted / student / "ps1" / "my_init.py" if nbgrader else submitted / f"{student}.py"
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)

    hand_in("ada", TEACHER.read_text())
    for name in mutants.MUTANTS:
        hand_in(f"pitfall_{name}", mutants.source(name), nbgrader=name != "s05")
    hand_in("stubs", STUBS)
    hand_in("syntax", "def fans(shape)\n    return shape\n")
    hand_in("empty", "", nbgrader=False)
    hand_in("binary", b"\xff\xfe\x00garbage\x9c", nbgrader=False)
    (submitted / "missing" / "ps1").mkdir(parents=True)
    (submitted / "missing" / "ps1" / "notes.txt").write_text("forgot it")
    hand_in(
        "hostile",
        STUBS + "\nimport tinyinit.core.parallel as p\no = getattr(p, 'o' + 's')\n"
        f"o.write(o.open({str(PACKAGE / 'checker.py')!r}, o.O_WRONLY | o.O_TRUNC), b'x')\n",
    )
    hand_in("endless", "while True: pass\n", nbgrader=False)  # stopped on its one line
    # The concept inventory: ada and the s01 student sat it twice, s03 once, s05 (a plain
    # STUDENT.py) twice as STUDENT.json; stubs handed in a broken file, syntax a partial one.
    right = {item.id: item.answer for item in ITEMS}
    wrong = {item.id: min(item.misconceptions) for item in ITEMS}
    half = {item.id: (item.answer if k % 2 else min(item.misconceptions))
            for k, item in enumerate(ITEMS)}  # fmt: skip
    answers = {
        "ada/ps1/inventory.json": {"pre": half, "post": right},
        "pitfall_s01/ps1/inventory.json": {"pre": wrong, "post": half},
        "pitfall_s03/ps1/inventory.json": {"pre": wrong},
        "pitfall_s05.json": {"pre": half, "post": half},
        "stubs/ps1/inventory.json": "{not json",
        "syntax/ps1/inventory.json": {"pre": {"variance_of_a_sum": "a"}},
    }
    for where, data in answers.items():
        text = data if isinstance(data, str) else json.dumps(data)
        (submitted / where).write_text(text)
    # Two hand-ins packed by `python -m tinyinit submit`, and a zip that is not one.
    desk = root / "desk"
    desk.mkdir()
    (desk / "my_init.py").write_text(TEACHER.read_text())
    (desk / "inventory.json").write_text(json.dumps({"pre": right}))
    packed = subprocess.run(
        [sys.executable, "-m", "tinyinit", "submit", "--name", "zed", str(desk)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert packed.returncode == 0, packed.stderr
    assert packed.stderr.splitlines()[-1] == f"wrote {desk / 'zed.zip'}: hand this file in"
    (desk / "zed.zip").rename(submitted / "zed.zip")
    (submitted / "junk.zip").write_bytes(b"PK\x03\x04 and then nothing")
    before = package_hash()
    runs = []
    for out in (root / "grades", root / "again"):
        run = subprocess.run(
            [sys.executable, "-m", "tinyinit", "grade", str(submitted), "--out", str(out),
             "--jobs", "2", "--timeout", "5"],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        runs.append((run, out))
    assert package_hash() == before
    return runs


def rows(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames) == COLUMNS
        return {row["student"]: row for row in reader}


def test_each_row_says_what_its_file_is(graded):
    (run, out), _ = graded
    assert run.returncode == 0, run.stderr
    got = rows(out)
    assert len(got) == 10 + len(mutants.MUTANTS)
    assert got["zed"]["verdict"] == PASS and got["zed"]["inventory_pre"] == "100"
    assert got["ada"]["verdict"] == PASS and got["ada"]["passed"] == str(len(NAMES))
    for name in mutants.MUTANTS:
        row = got[f"pitfall_{name}"]
        assert row["verdict"] == FAIL, row
        assert name in row["pitfalls"].split(), row
        assert row["first_not_passed"] in NAMES
    assert got["stubs"]["verdict"] == FAIL and got["stubs"]["passed"] == "0"
    for student, reason in [
        ("syntax", "SyntaxError at my_init.py:1"),
        ("empty", ""),
        ("binary", "is not text in UTF-8"),
        ("missing", "no my_init.py in the submission"),
        ("junk", "no my_init.py in the submission"),
        ("endless", "importing it did not finish within 5 s"),
        ("hostile", "importing it raised FileNotFoundError"),  # the package is not in its sight
    ]:
        if student == "empty":  # an empty file has none of the functions: not written
            assert got[student]["verdict"] == FAIL and got[student]["passed"] == "0"
            continue
        assert got[student]["verdict"] == UNCHECKED, got[student]
        assert reason in got[student]["reason"], got[student]
    assert run.stderr.splitlines()[-1].startswith(
        f"{len(got)} submissions: 2 passed all eleven tests, "
    )


def test_each_student_gets_the_report_they_would_have_seen(graded):
    (run, out), _ = graded
    feedback = out / "feedback"
    assert sorted(p.stem for p in feedback.iterdir()) == sorted(rows(out))
    ada = (feedback / "ada.txt").read_text()
    assert ada.startswith("my_init.py: 11 of 11 tests passed")
    s01 = (feedback / "pitfall_s01.txt").read_text()
    assert "pitfall s01" in s01
    assert (feedback / "missing.txt").read_text() == "missing: no my_init.py in the submission\n"


def test_the_report_page_counts_the_pitfalls_and_describes_its_figures(graded):
    (run, out), _ = graded
    page = (out / "report.html").read_text()
    for name in ("pass_rate_per_test.png", "pitfalls.png", "scores.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f'src="{name}" alt="' in page
    for name in mutants.MUTANTS:
        assert f"{name} by 1" in page  # each pitfall named by the one student who made it
    assert '<html lang="en">' in page and "<caption>" in page


def test_a_second_run_writes_the_same_files(graded):
    (_, first), (run, second) = graded
    assert run.returncode == 0
    names = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_a_missing_folder_or_sandbox_is_one_line_and_exit_2(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "tinyinit", "grade", str(tmp_path / "nope"), "--out", "x"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        f"python -m tinyinit grade: error: submissions {str(tmp_path / 'nope')!r} is not a "
        "folder of submissions"
    ]


def test_the_concept_inventory_is_scored_and_its_gain_reported(graded):
    (run, out), _ = graded
    got = rows(out)
    half = 100 * (len(ITEMS) // 2) / len(ITEMS)  # the odd-numbered items right
    assert (got["ada"]["inventory_pre"], got["ada"]["inventory_post"]) == (f"{half:.0f}", "100")
    assert got["pitfall_s01"]["inventory_pre"] == "0"
    assert got["pitfall_s01"]["inventory_post"] == f"{half:.0f}"
    assert (got["pitfall_s03"]["inventory_pre"], got["pitfall_s03"]["inventory_post"]) == ("0", "")
    assert got["pitfall_s05"]["inventory_post"] == f"{half:.0f}"
    assert got["stubs"]["inventory_pre"] == got["syntax"]["inventory_pre"] == ""
    page = (out / "report.html").read_text()
    # matched: ada (half -> 100), s01 (0 -> half), s05 (half -> half); s03 sat once
    pre, post = (half + 0 + half) / 3, (100 + half + half) / 3
    g = (post - pre) / (100 - pre)
    assert f"3 students sat it before and after: {pre:.0f}% right before, {post:.0f}% after" in page
    assert f"Hake's normalized gain g = {g:.2f}" in page
    assert "stubs: inventory.json left out: inventory.json cannot be read as JSON" in page
    assert "syntax: inventory.json left out: pre: 12 of 13 items unanswered" in page
    assert "Misconceptions most chosen before" in page


def test_hakes_gain_and_its_interval_from_a_known_class():
    right = {item.id: item.answer for item in ITEMS}
    wrong = {item.id: min(item.misconceptions) for item in ITEMS}
    assert score(right) == 100.0 and score(wrong) == 0.0
    answers = {f"s{k}": {"pre": wrong, "post": right if k < 6 else wrong} for k in range(10)}
    stats = class_statistics(answers)
    assert stats["matched"] == 10 and stats["pre"] == 0.0 and stats["post"] == 60.0
    assert stats["g"] == 0.6
    low, high = stats["g_interval"]
    assert 0.2 < low < 0.6 < high < 1.0
    assert class_statistics(answers)["g_interval"] == (low, high)  # the same every run
    first = stats["post_items"][ITEMS[0].id]
    assert first["difficulty"] == 0.6 and first["discrimination"] == 1.0


def test_submit_refuses_without_a_file_or_with_a_name_no_file_can_carry(tmp_path):
    def submit(*args: str):
        return subprocess.run(
            [sys.executable, "-m", "tinyinit", "submit", *args],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
        )  # fmt: skip

    run = submit("--name", "ada")
    assert run.returncode == 2 and "does not exist" in run.stderr
    (tmp_path / "my_init.py").write_text(STUBS)
    run = submit("--name", "../ada")
    assert run.returncode == 2
    assert run.stderr.startswith("python -m tinyinit submit: error: name must be letters")
    assert not list(tmp_path.glob("*.zip"))

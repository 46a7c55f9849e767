"""The concept inventory: its items are whole (every wrong option a named misconception), the
teacher's key is JSON from the command line, and answers saved survive a new process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tinyinit.course.inventory import (
    FILE,
    ITEMS,
    MISCONCEPTIONS,
    InventoryError,
    hake_gain,
    key,
    read_answers,
    save_answers,
)


def test_ten_to_fifteen_items_each_wrong_option_a_named_misconception():
    assert 10 <= len(ITEMS) <= 15
    assert len({item.id for item in ITEMS}) == len(ITEMS)
    for item in ITEMS:
        assert item.answer in item.choices
        assert set(item.misconceptions) == set(item.choices) - {item.answer}, item.id
        assert set(item.misconceptions.values()) <= set(MISCONCEPTIONS), item.id
        assert len(set(item.choices.values())) == len(item.choices), item.id
    used = {m for item in ITEMS for m in item.misconceptions.values()}
    assert used == set(MISCONCEPTIONS)  # no misconception listed that no option stands for
    for card_pitfall in ("swapped_fans", "kernel_dims_forgotten", "uniform_bound_is_std",
                         "gain_as_variance", "residual_sqrt_L"):  # fmt: skip
        assert card_pitfall in used


def test_the_key_from_the_command_line_is_the_modules():
    run = subprocess.run(
        [sys.executable, "-m", "tinyinit", "inventory", "--key"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert json.loads(run.stdout) == key()
    plain = subprocess.run(
        [sys.executable, "-m", "tinyinit", "inventory"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert "variance_of_a_sum" in plain.stdout
    assert "answer" not in plain.stdout and "explanation" not in plain.stdout


def test_answers_are_saved_sitting_by_sitting_and_read_back(tmp_path):
    pre = {item.id: min(item.misconceptions) for item in ITEMS}
    post = {item.id: item.answer for item in ITEMS}
    save_answers(tmp_path, "pre", pre)
    assert read_answers(tmp_path / FILE) == {"pre": pre}
    save_answers(tmp_path, "post", post)
    assert read_answers(tmp_path / FILE) == {"pre": pre, "post": post}
    save_answers(tmp_path, "pre", pre)  # answering again keeps the other sitting
    assert read_answers(tmp_path / FILE)["post"] == post


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "cannot be read as JSON"),
        ('{"during": {}}', "is not {'pre': ..., 'post': ...}"),
        ('{"pre": {"nope": "a"}}', "pre: no item is called 'nope'"),
        ('{"pre": {"variance_of_a_sum": "z"}}', "pre: variance_of_a_sum's choice 'z' is not one"),
        ('{"pre": {"variance_of_a_sum": "a"}}', "pre: 12 of 13 items unanswered"),
        ('{"pre": []}', "pre: not a table of item -> choice"),
    ],
)
def test_a_malformed_or_partial_file_is_refused_saying_why(tmp_path, text, message):
    (tmp_path / FILE).write_text(text)
    with pytest.raises(InventoryError, match=re_escape(message)):
        read_answers(tmp_path / FILE)


def re_escape(text: str) -> str:
    import re

    return re.escape(text)


def test_hakes_gain():
    assert hake_gain(20.0, 60.0) == 0.5
    assert hake_gain(50.0, 50.0) == 0.0
    assert hake_gain(100.0, 100.0) != hake_gain(100.0, 100.0)  # nan: no room to gain

"""The concept inventory's sittings in a real JupyterLab, as the student edition has them: a
choice made with the keyboard is saved, and after a kernel restart the notebook shows it; the
second sitting, submitted from the keyboard, shows each question's answer and why."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from scripts_loader import load_script

from tinyinit.course.inventory import ITEMS, save_answers

from .lab import notebook_errors, open_notebook, run_all_cells, wait_for_kernel_idle

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "00_inventory_before_you_start.ipynb"
SECOND = "04b_inventory_what_you_learned.ipynb"
NOTEBOOKS = (NOTEBOOK, SECOND)
SITTING = ".tinyinit-inventory"


def student_edition(lab_server, folder_name: str, notebook: str) -> Path:
    """The student edition of `notebook` in a folder of its own under the server's root, where
    its answers are kept beside it."""
    folder = lab_server.root / folder_name
    folder.mkdir()
    teacher = nbformat.read(ROOT / "notebooks" / notebook, as_version=4)
    nbformat.write(load_script("make_student").student_notebook(teacher), folder / notebook)
    return folder


def test_a_choice_made_with_the_keyboard_outlives_a_kernel_restart(page, console, lab_server):
    from playwright.sync_api import expect

    folder = student_edition(lab_server, "first_sitting", NOTEBOOK)
    open_notebook(page, lab_server, f"{folder.name}/{NOTEBOOK}")
    run_all_cells(page, timeout=120)
    sitting = page.locator(SITTING)
    sitting.wait_for(timeout=60_000)
    groups = sitting.locator("[role=radiogroup]")
    groups.first.wait_for()
    assert groups.count() == len(ITEMS)
    named_by = "id => document.getElementById(id).textContent"
    names = [page.evaluate(named_by, g.get_attribute("aria-labelledby")) for g in groups.all()]
    assert all(item.stem[:30] in name for name, item in zip(names, ITEMS)), names
    radios = sitting.locator("input[type=radio]")
    radios.first.focus()
    page.keyboard.press("ArrowDown")  # question 1, choice (b): the arrows move within a group
    sitting.locator(".tinyinit-status").get_by_text("1 of 13 answered").wait_for()
    saved = json.loads((folder / "inventory.json").read_text())
    assert saved == {"pre": {"variance_of_a_sum": "b"}}

    page.evaluate(f"() => document.querySelector('{SITTING}').dataset.before = 'restart'")
    page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", has_text="Kernel").first.click()
    page.locator(".lm-Menu .lm-Menu-item[data-command='kernelmenu:restart']").click()
    page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept").click()
    wait_for_kernel_idle(page, timeout=60)
    run_all_cells(page, timeout=120)
    fresh = page.locator(f"{SITTING}:not([data-before])")  # drawn by the new kernel
    fresh.wait_for(timeout=60_000)
    again = fresh.locator("input[type=radio]")
    expect(again.nth(1)).to_be_checked()
    assert [radio.is_checked() for radio in again.all()].count(True) == 1
    assert "1 of 13 answered" in fresh.locator(".tinyinit-status").inner_text()
    assert notebook_errors(page) == [] and console.messages == []


def test_the_second_sitting_submitted_from_the_keyboard_shows_each_answer(
    page, console, lab_server
):
    folder = student_edition(lab_server, "second_sitting", SECOND)
    last = ITEMS[-1]
    save_answers(folder, "post", {item.id: item.answer for item in ITEMS[:-1]})
    open_notebook(page, lab_server, f"{folder.name}/{SECOND}")
    run_all_cells(page, timeout=120)
    sitting = page.locator(SITTING)
    sitting.get_by_text("12 of 13 answered").wait_for(timeout=60_000)
    assert ITEMS[0].explanation not in sitting.inner_text()
    radios = sitting.locator("input[type=radio]")
    letters = list(last.choices)
    right = letters.index(last.answer)
    sitting.locator("[role=radiogroup]").first.wait_for()
    radios.nth(radios.count() - len(letters) + right).focus()  # the last question's answer
    page.keyboard.press("Space")
    sitting.get_by_text("13 of 13 answered").wait_for()
    page.keyboard.press("Tab")  # out of the question's group, to the submit button
    page.keyboard.press("Enter")
    sitting.get_by_text("Submitted: 13 of 13 right.").wait_for()
    text = sitting.inner_text()
    assert all(item.explanation in text for item in ITEMS)
    assert all(radio.is_disabled() for radio in radios.all())
    assert json.loads((folder / "inventory.json").read_text())["submitted"] == ["post"]
    assert notebook_errors(page) == [] and console.messages == []

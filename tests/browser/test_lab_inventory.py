"""The concept inventory's first sitting in a real JupyterLab, as the student edition has it:
a choice made with the keyboard is saved, and after a kernel restart the notebook shows it."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from scripts_loader import load_script

from .lab import notebook_errors, open_notebook, run_all_cells, wait_for_kernel_idle

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "00_inventory_before_you_start.ipynb"
SITTING = ".tinyinit-inventory"


def test_a_choice_made_with_the_keyboard_outlives_a_kernel_restart(page, console, lab_server):
    from playwright.sync_api import expect

    folder = lab_server.root / "student_sitting"  # the student edition: answers beside it
    folder.mkdir()
    teacher = nbformat.read(ROOT / "notebooks" / NOTEBOOK, as_version=4)
    nbformat.write(load_script("make_student").student_notebook(teacher), folder / NOTEBOOK)
    open_notebook(page, lab_server, f"{folder.name}/{NOTEBOOK}")
    run_all_cells(page, timeout=120)
    sitting = page.locator(SITTING)
    sitting.wait_for(timeout=60_000)
    radios = sitting.locator("input[type=radio]")
    radios.first.focus()
    page.keyboard.press("Tab")  # question 1, choice (b)
    page.keyboard.press("Space")
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

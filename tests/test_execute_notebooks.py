"""`make notebooks` stores widget state whose ids depend only on the notebook's content."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location(
    "execute_notebooks", ROOT / "scripts" / "execute_notebooks.py"
)
execute_notebooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(execute_notebooks)

WITH_WIDGETS = ROOT / "notebooks" / "03_signal_through_depth.ipynb"


def shuffled_ids(nb):
    """The same notebook as a fresh kernel might name it: every model id a new uuid."""
    text = nbformat.writes(nb)
    ids = sorted(set(re.findall(r"[0-9a-f]{32}", text)))
    fresh = {old: f"{(i * 7919 + 12345) % 16**32:032x}"[::-1] for i, old in enumerate(ids)}
    return nbformat.reads(re.sub(r"[0-9a-f]{32}", lambda m: fresh[m.group(0)], text), 4)


def test_renumbered_ids_do_not_depend_on_the_kernels_uuids():
    nb = nbformat.read(WITH_WIDGETS, as_version=4)
    once = nbformat.writes(execute_notebooks.renumber_widget_ids(nb))
    again = nbformat.writes(execute_notebooks.renumber_widget_ids(shuffled_ids(nb)))
    assert once == again


def test_committed_notebooks_carry_renumbered_ids():
    nb = nbformat.read(WITH_WIDGETS, as_version=4)
    assert nbformat.writes(execute_notebooks.renumber_widget_ids(nb)) == nbformat.writes(nb)


def test_every_reference_and_view_names_a_stored_model():
    nb = nbformat.read(WITH_WIDGETS, as_version=4)
    state = nb.metadata["widgets"][execute_notebooks.WIDGET_STATE]["state"]
    assert list(state) == [f"{i:032x}" for i in range(1, len(state) + 1)]
    refs = set(execute_notebooks.MODEL_REF.findall(json.dumps(state)))
    views = {
        out["data"][execute_notebooks.WIDGET_VIEW]["model_id"]
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if execute_notebooks.WIDGET_VIEW in out.get("data", {})
    }
    assert views and refs
    assert refs | views <= set(state)

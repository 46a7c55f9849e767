"""Re-execute notebooks in place, so their stored outputs are what the code computes now.

    python scripts/execute_notebooks.py notebooks/*.ipynb

Each notebook runs top to bottom in a fresh kernel of this Python, with the
notebook's folder as working directory, exactly as nbval will rerun it. Widget
state is stored too, so sliders and live figures show in a static rendering,
with its model ids renumbered in reading order: a re-run of an unchanged
notebook changes no byte.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def coalesce_streams(cell) -> None:
    """Join consecutive stdout (or stderr) pieces: how a kernel flushes a print is timing."""
    merged = []
    for output in cell.get("outputs", []):
        previous = merged[-1] if merged else None
        if (
            output.output_type == "stream"
            and previous is not None
            and previous.output_type == "stream"
            and previous.name == output.name
        ):
            previous.text += output.text
        else:
            merged.append(output)
    cell.outputs = merged


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
MODEL_REF = re.compile(r"IPY_MODEL_([0-9a-f]{32})")


def widget_ids_in_reading_order(nb) -> list[str]:
    """Model ids as a reader meets them: each displayed widget, then what it refers to.

    A kernel names its widget models with random uuids. Walking from the displayed
    views (cells in order) through the IPY_MODEL_ references of each stored model
    (keys sorted) gives every reachable model a place that depends only on the
    notebook's content; unreachable models follow in the order they were created.
    """
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    order: list[str] = []
    seen: set[str] = set()

    def visit(model_id: str) -> None:
        stack = [model_id]
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            order.append(current)
            refs = MODEL_REF.findall(json.dumps(state.get(current, {}), sort_keys=True))
            stack.extend(reversed(refs))

    for cell in nb.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view:
                visit(view["model_id"])
    for model_id in state:
        visit(model_id)
    return order


def renumber_widget_ids(nb):
    """The same notebook with model ids 0000...0001, 0000...0002, ... in reading order."""
    order = widget_ids_in_reading_order(nb)
    if not order:
        return nb
    new = {old: f"{i:032x}" for i, old in enumerate(order, start=1)}
    text = re.sub(r"[0-9a-f]{32}", lambda m: new.get(m.group(0), m.group(0)), nbformat.writes(nb))
    renumbered = nbformat.reads(text, as_version=4)
    widgets = renumbered.metadata.get("widgets", {}).get(WIDGET_STATE)
    if widgets:
        widgets["state"] = dict(sorted(widgets["state"].items()))
    return renumbered


def execute(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:  # no timestamps: a re-run that computes the same changes nothing
        cell.metadata.pop("execution", None)
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=True,
        record_timing=False,
    )
    client.execute()
    for cell in nb.cells:
        if cell.cell_type == "code":
            coalesce_streams(cell)
    nbformat.write(renumber_widget_ids(nb), path)


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__)
        return 2
    for name in paths:
        start = time.perf_counter()
        execute(Path(name))
        print(f"executed {name} in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

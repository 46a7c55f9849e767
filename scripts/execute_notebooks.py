"""Re-execute notebooks in place, so their stored outputs are what the code computes now.

    python scripts/execute_notebooks.py notebooks/*.ipynb

Each notebook runs top to bottom in a fresh kernel of this Python, with the
notebook's folder as working directory, exactly as nbval will rerun it. Widget
state is stored too, so sliders and live figures show in a static rendering.
"""

from __future__ import annotations

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
    nbformat.write(nb, path)


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

"""The keys of a presenter clicker, and the size of the page: keys.js, as an anywidget."""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

KEYS_ESM = Path(__file__).with_name("keys.js").read_text(encoding="utf-8")


class PresenterKeys(anywidget.AnyWidget):
    """The page's clicker keys and size, sent to the kernel; shows nothing itself.

    PageDown and → arrive as a message {"step": 1}, PageUp and ← as {"step": -1},
    unless a focused control (slider, menu, text field, tab) owns the key.
    `page` holds the app's width, the window's height and the top of the plot
    area, in CSS pixels, whenever they change.

    >>> keys = PresenterKeys()
    >>> keys.page
    {}
    """

    _esm = KEYS_ESM
    page = traitlets.Dict().tag(sync=True)

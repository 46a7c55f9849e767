"""The keys of a presenter clicker, and the size of the page: keys.js, as an anywidget."""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

__all__ = [
    "KEYS_ESM",
    "PresenterKeys",
]

KEYS_ESM = Path(__file__).with_name("keys.js").read_text(encoding="utf-8")


class PresenterKeys(anywidget.AnyWidget):
    """The page's clicker keys and size, sent to the kernel; shows nothing itself.

    PageDown and → arrive as a message {"step": 1}, PageUp and ← as {"step": -1},
    Home as {"step": "first"} and End as {"step": "last"}. A clicker's PageDown and
    PageUp step wherever the focus is (but in a text field); the arrows, Home and End
    stay with a focused control that uses them (slider, menu, tab), and a slider
    dragged with the mouse lets go of the focus when the button is released. B (or .)
    blanks the screen black, W (or ,) white, until the next key: on the page alone.
    `page` holds the app's width, the window's height, the top of the plot area and
    the room the app takes below it, in CSS pixels, whenever they change.

    >>> keys = PresenterKeys()
    >>> keys.page
    {}
    """

    _esm = KEYS_ESM
    page = traitlets.Dict().tag(sync=True)

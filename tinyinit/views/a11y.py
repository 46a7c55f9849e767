"""Accessible names and live regions for the explorers' widgets, which ipywidgets 8 leaves out.

A slider's handle gets the slider's description as its accessible name, a button
showing only a symbol gets its tooltip, a RadioButtons widget becomes one radio group
(Tab in and out, arrows within), and a widget with the class `tinyinit-live`
(`live(widget)`) becomes a polite live region, so that a screen reader reads the
readout out after a slider move. `Accessible()` is the anywidget that does it on the
page (a11y.js, no picture of its own): put it in an app's layout once.

>>> import ipywidgets as widgets
>>> readout = live(widgets.HTML("layer 20: 2^-20.7"))
>>> readout._dom_classes
('tinyinit-live',)
"""

from __future__ import annotations

from pathlib import Path

from .._extras import extra
from ..core.arguments import instance

with extra("lab", "the explorers' accessible names"):
    import anywidget
    from ipywidgets import DOMWidget

__all__ = ["Accessible", "live"]

ESM = Path(__file__).with_name("a11y.js")
LIVE = "tinyinit-live"


class Accessible(anywidget.AnyWidget):
    """Names the sliders, symbol buttons and radio groups of the app it is placed in, and makes its
    `tinyinit-live` widgets live regions (see a11y.js). It shows nothing.

    >>> Accessible().layout.display
    'none'
    """

    _esm = ESM.read_text(encoding="utf-8")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.layout.display = "none"  # nothing to see; its module works on the page

    def __repr__(self) -> str:
        # Without an object's address: a notebook's stored text of the app stays the same
        # from one run to the next.
        return "Accessible()"


def live(widget):
    """Mark `widget` (an HTML or Label widget) as a polite live region; returns it.

    >>> import ipywidgets as widgets
    >>> live(widgets.HTML())._dom_classes
    ('tinyinit-live',)
    """
    instance("widget", widget, DOMWidget, "an ipywidgets widget shown on the page (HTML, Label)")
    widget.add_class(LIVE)
    return widget

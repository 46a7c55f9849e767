"""The presentation app: the demonstration menu, the step buttons, the caption, and the
explorers in tabs, walked step by step with a clicker."""

from __future__ import annotations

import dataclasses
import html

import ipywidgets as widgets
import numpy as np

from ..a11y import Accessible
from ..pcg32 import PCG32
from ..residual import ResidualStack, draw_residual_stack
from .demonstrations import CHOOSE, PRESETS, Step
from .explorers import LargeDepthExplorer, LargeResidualExplorer, LargeTrainingExplorer
from .keys import PresenterKeys
from .look import BASE_VIEWPORT, Look
from .share import check_share_url, share_view

# The explorers' tabs in order: the name a Step gives (the app's attribute), the tab's title.
TABS = (("depth", "Signal through depth"), ("residual", "Residual stream"),
        ("training", "Training live"))  # fmt: skip
APPS = {name: index for index, (name, _) in enumerate(TABS)}
TAB_TITLES = tuple(title for _, title in TABS)
SHARE_TITLE = "Link for students"


def astuple_shallow(stack: ResidualStack) -> tuple:
    """The stack's arrays in field order, not copied (dataclasses.astuple would deep-copy)."""
    return tuple(getattr(stack, f.name) for f in dataclasses.fields(stack))


class Presentation:
    """Demonstration menu, step buttons, a one-line caption, and the explorers in tabs.

    next() and previous() walk the demonstrations step by step, as the
    clicker's PageDown and PageUp do. `fit(look)` sizes everything to a page;
    the page reports its size itself (`keys`).

    CSS classes: tinyinit-present (the app), tinyinit-preset (menu),
    tinyinit-step (step buttons), tinyinit-says (the caption), tinyinit-stage
    (the tabs), tinyinit-plot-area (a canvas), tinyinit-side (the column of
    controls beside it), tinyinit-headline (the large readout there).

    >>> app = Presentation()
    >>> app.choose("tanh: gain 1 vs 5/3", step=1)
    >>> app.depth.activation.value, round(app.depth.gain.value, 4), app.step.value
    ('tanh', 1.6667, 'gain 5/3')
    >>> app.next(); app.preset.value, app.tabs.selected_index
    ('Residual stream: with and without 1/sqrt(2N)', 1)
    """

    def __init__(self, residual_blocks: int = 64, share_url: str | None = None):
        self.depth = LargeDepthExplorer()
        # Notebook 06's stack (the same draws from PCG32(0), as many blocks as the slider
        # needs), kept in float64: the same numbers, and a slider move is twice as fast.
        drawn = draw_residual_stack(residual_blocks, 128, 128, 128, PCG32(0))
        stack = ResidualStack(*(np.asarray(a, dtype=np.float64) for a in astuple_shallow(drawn)))
        self.residual = LargeResidualExplorer(stack, n_layers=12, scaled=True)
        self.training = LargeTrainingExplorer()
        self.preset = widgets.Dropdown(
            options=[CHOOSE, *PRESETS],
            value=CHOOSE,
            description="demonstration",
            style={"description_width": "initial"},
            layout=widgets.Layout(width="auto"),
            tooltip="A classic demonstration: sets every control it needs; "
            "the sliders stay live afterwards. PageDown/PageUp step through them",
        )
        self.preset.add_class("tinyinit-preset")
        self.back = widgets.Button(description="◀", tooltip="Previous step (PageUp or ←)")
        self.forward = widgets.Button(
            description="▶", tooltip="Next step, then the next demonstration (PageDown or →)"
        )
        self.back.on_click(lambda button: self.previous())
        self.forward.on_click(lambda button: self.next())
        self.step = widgets.ToggleButtons(options=[], tooltips=[], style={"button_width": "auto"})
        self.step.tooltip = "The steps of this demonstration, one state each"
        self.step.add_class("tinyinit-step")
        self.says = widgets.HTML(
            "Pick a demonstration, or press PageDown (→) for the first one.",
            tooltip="What this demonstration shows",
        )
        self.says.add_class("tinyinit-says")
        self.share_url = None if share_url is None else check_share_url(share_url)
        views = [getattr(self, name).projector_view() for name in APPS]
        titles = list(TAB_TITLES)
        if self.share_url is not None:
            views.append(share_view(self.share_url))
            titles.append(SHARE_TITLE)
        self.tabs = widgets.Tab(children=views, titles=titles)
        # no tooltip on the tabs: ipywidgets 8's TabView fails to render with one
        self.tabs.add_class("tinyinit-stage")
        if self.share_url is not None:
            self.tabs.selected_index = len(views) - 1  # students first open the link
        self.style = widgets.HTML()
        self.style.layout.display = "none"  # rules only, nothing to see
        self.keys = PresenterKeys()
        self.keys.layout.display = "none"
        bar = widgets.HBox([self.preset, self.back, self.step, self.forward])
        bar.add_class("tinyinit-bar")
        # Sliders named and the headlines read out on a screen reader (tinyinit/a11y.js).
        self.app = widgets.VBox([self.style, self.keys, Accessible(), bar, self.says, self.tabs])
        self.app.add_class("tinyinit-present")
        self.look: Look | None = None
        self.fit(Look.for_page(*BASE_VIEWPORT, top=150))
        self.preset.observe(self._on_preset, names="value")
        self.step.observe(self._on_step, names="value")
        self.keys.on_msg(self._on_key)
        self.keys.observe(self._on_page, names="page")

    # --- sizing -----------------------------------------------------------------------------

    def fit(self, look: Look) -> None:
        """Lay the app out for `look`: fonts, the column of controls, both canvases."""
        if look == self.look:
            return
        self.look = look
        self.style.value = f"<style>{look.css()}</style>"
        self.depth.fit(look)
        self.residual.fit(look)
        self.training.fit(look)

    def _on_page(self, change) -> None:
        page = change["new"]
        if {"width", "height", "top"} <= set(page):
            self.fit(Look.for_page(page["width"], page["height"], page["top"]))

    # --- walking the demonstrations ----------------------------------------------------------

    def choose(self, name: str, step: int = 0) -> None:
        """Show demonstration `name` at `step` (0-based), as the dropdown and buttons would."""
        if name not in PRESETS:
            raise ValueError(f"preset must be one of {list(PRESETS)}; got {name!r}")
        n_steps = len(PRESETS[name].steps)
        if not 0 <= step < n_steps:
            raise ValueError(f"step must be in 0..{n_steps - 1} for {name!r}; got {step!r}")
        self.preset.value = name
        self.step.index = step

    def position(self) -> tuple[int, int] | None:
        """(demonstration, step), both 0-based, or None before the first one is chosen."""
        if self.preset.value not in PRESETS:
            return None
        return list(PRESETS).index(self.preset.value), self.step.index or 0

    def next(self) -> None:
        """The next step; after a demonstration's last step, the next demonstration."""
        names = list(PRESETS)
        at = self.position()
        if at is None:
            self.choose(names[0])
        elif at[1] + 1 < len(PRESETS[names[at[0]]].steps):
            self.choose(names[at[0]], at[1] + 1)
        elif at[0] + 1 < len(names):
            self.choose(names[at[0] + 1])
        else:
            steps = PRESETS[names[at[0]]].steps  # the end: show it again
            self.show(steps[at[1]], earlier=steps[: at[1]])

    def previous(self) -> None:
        """The previous step; before a demonstration's first step, the last of the one before."""
        names = list(PRESETS)
        at = self.position()
        if at is None:
            return
        if at[1] > 0:
            self.choose(names[at[0]], at[1] - 1)
        elif at[0] > 0:
            before = names[at[0] - 1]
            self.choose(before, len(PRESETS[before].steps) - 1)
        else:
            self.show(PRESETS[names[0]].steps[0])

    def _on_key(self, widget, content, buffers) -> None:
        step = content.get("step") if isinstance(content, dict) else None
        if step == 1:
            self.next()
        elif step == -1:
            self.previous()

    def _on_preset(self, change) -> None:
        preset = PRESETS.get(change["new"])
        if preset is None:
            self.step.options = []
            return
        labels = [s.label for s in preset.steps]
        self.step.unobserve(self._on_step, names="value")
        self.step.options = labels  # selects the first step
        self.step.tooltips = [s.says for s in preset.steps]
        self.step.index = 0
        self.step.observe(self._on_step, names="value")
        self.show(preset.steps[0])

    def _on_step(self, change) -> None:
        preset = PRESETS.get(self.preset.value)
        if preset is not None and self.step.index is not None:
            k = self.step.index
            self.show(preset.steps[k], earlier=preset.steps[:k])

    def show(self, step: Step, earlier: tuple[Step, ...] = ()) -> None:
        """Bring up the step's explorer and set its controls.

        A depth step after `earlier` ones pins their curves first, so that a
        demonstration ends with all its curves on one plot.
        """
        self.says.value = html.escape(step.says)  # first: the room reads while the plot draws
        self.tabs.selected_index = APPS[step.app]
        self.training.pause()  # a run trains only while its demonstration is shown
        if step.app == "depth":
            with self.depth.hold():  # one update, at the end
                self.depth.clear_pins()
                for before in earlier:
                    self.depth.apply(before.settings)
                    self.depth.pin()
                self.depth.apply(step.settings)
        elif step.app == "training":
            self.training.demonstrate(step.settings, [before.settings for before in earlier])
        else:
            self.residual.apply(step.settings)

    def _repr_mimebundle_(self, **kwargs):
        return self.app._repr_mimebundle_(**kwargs)

"""The presentation app: the demonstration menu, the step buttons, the caption, and the
explorers in tabs, walked step by step with a clicker."""

from __future__ import annotations

import asyncio
import dataclasses
import html
import time

import ipywidgets as widgets
import numpy as np
from threadpoolctl import threadpool_limits

from ..core.arguments import flag, instance, integer, one_of
from ..core.pcg32 import PCG32
from ..physics.residual import ResidualStack, draw_residual_stack
from ..views.a11y import Accessible
from ..views.style import log_limits
from .demonstrations import CHOOSE, PRESETS
from .explorers import LargeDepthExplorer, LargeResidualExplorer, LargeTrainingExplorer
from .keys import PresenterKeys
from .look import FIRST_LOOK, Look
from .share import check_share_url, share_view

__all__ = [
    "APPS",
    "Presentation",
    "RULE",
    "SHARE_TITLE",
    "TABS",
    "TAB_TITLES",
    "WARM",
    "astuple_shallow",
]

# The explorers' tabs in order: the name a Step gives (the app's attribute), the tab's title.
TABS = (("depth", "Signal through depth"), ("residual", "Residual stream"),
        ("training", "Training live"))  # fmt: skip
APPS = {name: index for index, (name, _) in enumerate(TABS)}
TAB_TITLES = tuple(title for _, title in TABS)
SHARE_TITLE = "Link for students"
# Under the plot, in view at any size: the one rule behind every demonstration (the
# mean-field recursion of tinyinit.physics.propagation.mean_field, in words).
RULE = (
    "One rule: a layer multiplies the mean square by <i>n</i><sub>in</sub>&#8239;<i>σ</i>²; "
    "the activation keeps E[<i>φ</i>(<i>z</i>)²], <i>z</i> ~ 𝒩(0, <i>q</i>)."
)
WARM = "tinyinit-warm"  # the app's class once every step's curves are computed


def astuple_shallow(stack: ResidualStack) -> tuple:
    """The stack's arrays in field order, not copied (dataclasses.astuple would deep-copy)."""
    instance("stack", stack, ResidualStack, "a ResidualStack (draw_residual_stack)")
    return tuple(getattr(stack, f.name) for f in dataclasses.fields(stack))


class Presentation:
    """Demonstration menu, step buttons, a one-line caption, the explorers in tabs, and under
    them the one rule behind every demonstration.

    next() and previous() walk the demonstrations step by step, as the
    clicker's PageDown and PageUp do; first() and last() go to either end, as
    Home and End do. `fit(look)` sizes everything to a page; the page reports
    its size itself (`keys`).

    Every step's curves are computed before the step is shown (`state`), so the
    caption never runs ahead of the plot: the plot changes first, then the caption
    that describes it. Once the app is on a page, the kernel computes every step's
    curves in the background, one step at a time between the page's messages
    (`warm`); then the app has the class tinyinit-warm and each step is a cache
    lookup and a redraw. The steps of a demonstration share their y axis (`axis`).

    CSS classes: tinyinit-present (the app), tinyinit-preset (menu),
    tinyinit-step (step buttons), tinyinit-says (the caption), tinyinit-stage
    (the tabs), tinyinit-plot-area (a canvas), tinyinit-side (the column of
    controls beside it), tinyinit-headline (the large readout there),
    tinyinit-rule (the line under the plot).

    >>> app = Presentation()
    >>> app.choose("tanh: gain 1 vs 5/3", step=1)
    >>> app.depth.activation.value, round(app.depth.gain.value, 4), app.step.value
    ('tanh', 1.6667, 'gain 5/3')
    >>> app.next(); app.preset.value, app.tabs.selected_index
    ('Residual stream: with and without 1/sqrt(2N)', 1)
    """

    def __init__(self, residual_blocks: int = 64, share_url: str | None = None, warm: bool = True):
        # Checked before anything is built: three explorers take a second.
        residual_blocks = integer("residual_blocks", residual_blocks, minimum=12)
        share_url = None if share_url is None else check_share_url(share_url)
        warm = flag("warm", warm)
        self._started = time.perf_counter()
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
        self.share_url = share_url
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
        self.rule = widgets.HTML(
            RULE,
            tooltip="The mean-field recursion every curve's theory follows "
            "(tinyinit.physics.propagation.mean_field)",
        )
        self.rule.add_class("tinyinit-rule")
        self.style = widgets.HTML()
        self.style.layout.display = "none"  # rules only, nothing to see
        self.keys = PresenterKeys()
        self.keys.layout.display = "none"
        bar = widgets.HBox([self.preset, self.back, self.step, self.forward])
        bar.add_class("tinyinit-bar")
        # Sliders named and the headlines read out on a screen reader (tinyinit/views/a11y.js).
        self.app = widgets.VBox(
            [self.style, self.keys, Accessible(), bar, self.says, self.tabs, self.rule]
        )
        self.app.add_class("tinyinit-present")
        self.look: Look | None = None
        self.fit(FIRST_LOOK)
        self.preset.observe(self._on_preset, names="value")
        self.step.observe(self._on_step, names="value")
        self.keys.on_msg(self._on_key)
        self.keys.observe(self._on_page, names="page")
        self._states: dict[tuple[str, int], object] = {}
        self.warm_seconds: float | None = None  # from construction to every step computed
        if warm:
            self._warm_in_background()

    # --- sizing -----------------------------------------------------------------------------

    def fit(self, look: Look) -> None:
        """Lay the app out for `look`: fonts, the column of controls, both canvases."""
        if instance("look", look, Look, "a Look (Look.for_page)") == self.look:
            return
        self.look = look
        self.style.value = f"<style>{look.css()}</style>"
        self.depth.fit(look)
        self.residual.fit(look)
        self.training.fit(look)

    def _on_page(self, change) -> None:
        page = change["new"]
        if {"width", "height", "top"} <= set(page):
            below = page.get("below")
            self.fit(Look.for_page(page["width"], page["height"], page["top"], below))

    # --- each step's curves, computed before it is shown ----------------------------------------

    def explorer(self, app: str):
        """The explorer a step names: "depth", "residual" or "training"."""
        return getattr(self, one_of("app", app, APPS))

    def state(self, name: str, step: int):
        """What step `step` of demonstration `name` shows (a DepthResult, or the residual
        stream's curves), computed once and kept; None for a training step, whose run is
        the demonstration: it trains live once shown."""
        key = (name, self._step(name, step))
        if key not in self._states:
            row = PRESETS[name].steps[step]
            # These matrices are small (256 and 128 wide): one BLAS thread computes them
            # fastest, and many times faster where other work shares the cores, whose
            # threads would otherwise wait for each other (benchmarks/bench_present.py).
            with threadpool_limits(limits=1, user_api="blas"):
                live = row.app == "training"
                shown = None if live else self.explorer(row.app).result_for(row.settings)
            self._states[key] = shown
        return self._states[key]

    def axis(self, name: str) -> tuple[float, float] | None:
        """The y axis every depth step of demonstration `name` shares: whole decades around
        all their curves (tinyinit.views.style.log_limits), widened to any step's `ylim`."""
        steps = PRESETS[one_of("name", name, PRESETS)].steps
        curves = [
            curve
            for k, step in enumerate(steps)
            if step.app == "depth"
            for curve in (self.state(name, k).low, self.state(name, k).high,
                          self.state(name, k).theory)
        ]  # fmt: skip
        if not curves:
            return None
        bottom, top = log_limits(*curves)
        for step in steps:
            if step.ylim is not None:
                bottom, top = min(bottom, step.ylim[0]), max(top, step.ylim[1])
        return bottom, top

    def every_step(self) -> list[tuple[str, int]]:
        """(demonstration, step) of every step, in the clicker's order."""
        return [(name, k) for name, preset in PRESETS.items() for k in range(len(preset.steps))]

    def warm(self) -> None:
        """Compute every step's curves now (`state`), in the clicker's order."""
        for name, k in self.every_step():
            self.state(name, k)
        self._warmed()

    def _warmed(self) -> None:
        if self.warm_seconds is None:
            self.warm_seconds = time.perf_counter() - self._started
            self.app.add_class(WARM)

    def _warm_in_background(self) -> None:
        """`warm`, one step per turn of the kernel's event loop, so that the page's messages
        (its size, a key) are answered in between; nothing where no loop runs (a script)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        pending = iter(self.every_step())

        def next_step() -> None:
            for name, k in pending:
                if (name, k) not in self._states:
                    self.state(name, k)
                    loop.call_soon(next_step)
                    return
            self._warmed()

        loop.call_soon(next_step)

    # --- walking the demonstrations ----------------------------------------------------------

    def choose(self, name: str, step: int = 0) -> None:
        """Show demonstration `name` at `step` (0-based), as the dropdown and buttons would."""
        step = self._step(name, step)
        self.preset.value = name
        self.step.index = step

    @staticmethod
    def _step(name: str, step: int) -> int:
        """step, if demonstration `name` has it (0-based)."""
        last = len(PRESETS[one_of("name", name, PRESETS)].steps) - 1
        return integer(f"step of {name!r}", step, minimum=0, maximum=last)

    def position(self) -> tuple[int, int] | None:
        """(demonstration, step), both 0-based, or None before the first one is chosen."""
        if self.preset.value not in PRESETS:
            return None
        return list(PRESETS).index(self.preset.value), self.step.index or 0

    def next(self) -> None:
        """The next step; after a demonstration's last step, the next demonstration; after the
        last step of all, nothing."""
        names = list(PRESETS)
        at = self.position()
        if at is None:
            self.choose(names[0])
        elif at[1] + 1 < len(PRESETS[names[at[0]]].steps):
            self.choose(names[at[0]], at[1] + 1)
        elif at[0] + 1 < len(names):
            self.choose(names[at[0] + 1])
        # At the end it stays: the last step's run, finished, stays on screen.

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
            self.show(names[0], 0)

    def first(self) -> None:
        """The first step of the first demonstration (the Home key)."""
        if self.position() == (0, 0):
            self.show(list(PRESETS)[0], 0)
        else:
            self.choose(list(PRESETS)[0])

    def last(self) -> None:
        """The last step of the last demonstration (the End key)."""
        name = list(PRESETS)[-1]
        self.choose(name, len(PRESETS[name].steps) - 1)

    def _on_key(self, widget, content, buffers) -> None:
        if not isinstance(content, dict):
            return
        action = {1: self.next, -1: self.previous, "first": self.first, "last": self.last}
        if content.get("step") in action:
            action[content["step"]]()

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
        self.show(preset.name, 0)

    def _on_step(self, change) -> None:
        if self.preset.value in PRESETS and self.step.index is not None:
            self.show(self.preset.value, self.step.index)

    def show(self, name: str, step: int) -> None:
        """Bring up step `step` of demonstration `name`: its curves, its explorer, its caption.

        The curves are computed first (`state`, the earlier steps' too); then the plot
        changes, its tab comes up, and the caption that describes it comes last. A depth
        step after earlier ones pins their curves first, so that a demonstration ends with
        all its curves on one plot, on the axis all its steps share (`axis`).
        """
        step = self._step(name, step)
        steps = PRESETS[name].steps
        for k in range(step + 1):
            self.state(name, k)
        row = steps[step]
        self.training.pause()  # a run trains only while its demonstration is shown
        if row.app == "depth":
            self.depth.plot.ylim = self.axis(name)
            with self.depth.hold():  # one update, at the end
                self.depth.clear_pins()
                for before in steps[:step]:
                    if before.app == "depth":
                        self.depth.apply(before.settings)
                        self.depth.pin()
                self.depth.apply(row.settings)
        elif row.app == "training":
            earlier = [before.settings for before in steps[:step] if before.app == "training"]
            self.training.demonstrate(row.settings, earlier)
        else:
            self.residual.apply(row.settings)
        self.tabs.selected_index = APPS[row.app]
        self.says.value = html.escape(row.says)

    def _repr_mimebundle_(self, **kwargs):
        return self.app._repr_mimebundle_(**kwargs)

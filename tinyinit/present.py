"""Presentation mode: the suite's live explorers as one app for a projector.

    make present          # Voila serves apps/present.ipynb: controls and plots, no code

    %matplotlib widget    # or in a notebook
    from tinyinit.present import presentation
    presentation()

Large type everywhere (widgets, readouts and the plots' own fonts), and a
dropdown of the classic demonstrations. Choosing one sets every control of the
explorer it needs; a demonstration told in two steps ("gain 1", then "gain
5/3") has a button per step. The controls stay live, so the class can ask
"and at depth 50?" and the slider answers.

The explorers are the suite's own (`tinyinit.explorer.DepthExplorer`,
`tinyinit.explorer.ResidualStreamExplorer`) with larger fonts: what the class
sees is what the notebooks show.
"""

from __future__ import annotations

import dataclasses
import html
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import ipywidgets as widgets
import numpy as np

from .explorer import DepthExplorer, ResidualStreamExplorer
from .pcg32 import PCG32
from .residual import ResidualStack, draw_residual_stack

__all__ = [
    "PRESETS",
    "Preset",
    "Presentation",
    "Step",
    "app_notebook",
    "app_path",
    "presentation",
    "style_figure",
    "offline_template",
    "voila_command",
]

# --- the demonstrations ------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One state of a demonstration: which explorer, the values of its controls, what to say.

    >>> PRESETS["tanh: gain 1 vs 5/3"].steps[1].settings["gain"]
    1.6666666666666667
    """

    label: str
    app: str  # "depth" or "residual"
    settings: dict = field(default_factory=dict)
    says: str = ""


@dataclass(frozen=True)
class Preset:
    """A classic demonstration: a name for the dropdown and one or more steps.

    >>> [step.label for step in PRESETS["Residual stream: with and without 1/sqrt(2N)"].steps]
    ['without 1/√(2N)', 'with 1/√(2N)']
    """

    name: str
    steps: tuple[Step, ...]


def _depth(label, says, **settings) -> Step:
    base = dict(
        initializer="xavier_uniform", activation="relu", gain=1.0, depth=20, width=256,
        seeds=3, direction="forward",
    )  # fmt: skip
    return Step(label, "depth", {**base, **settings}, says)


def _residual(label, says, **settings) -> Step:
    return Step(label, "residual", {"blocks": 48, "both": False, **settings}, says)


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in [
        Preset(
            "Xavier + ReLU: collapse",
            (
                _depth(
                    "Xavier, gain 1",
                    "ReLU keeps half of E[z²]; Xavier's gain 1 does not give it back: "
                    "the signal halves at every layer.",
                ),
            ),
        ),
        Preset(
            "Kaiming + ReLU: kept",
            (
                _depth(
                    "Kaiming, gain √2",
                    "Kaiming's std √(2/n_in) doubles what ReLU halves: the signal stays at 1.",
                    initializer="kaiming_fan_in",
                    gain=math.sqrt(2.0),
                ),
            ),
        ),
        Preset(
            "Xavier vs Kaiming + ReLU",
            (
                _depth(
                    "Xavier, gain 1",
                    "Xavier with gain 1: ReLU halves the signal at every layer.",
                ),
                _depth(
                    "Kaiming, gain √2",
                    "Kaiming's √2 gives back what ReLU takes: the signal stays at 1, "
                    "2^20 above Xavier's (pinned, faded) after 20 layers.",
                    initializer="kaiming_fan_in",
                    gain=math.sqrt(2.0),
                ),
            ),
        ),
        Preset(
            "tanh: gain 1 vs 5/3",
            (
                _depth(
                    "gain 1",
                    "tanh squashes: with gain 1 the signal drains away, layer after layer.",
                    initializer="xavier_normal",
                    activation="tanh",
                    gain=1.0,
                ),
                _depth(
                    "gain 5/3",
                    "gain 5/3 (torch's calculate_gain('tanh')) makes up for the squashing: "
                    "the signal settles instead of draining.",
                    initializer="xavier_normal",
                    activation="tanh",
                    gain=5.0 / 3.0,
                ),
            ),
        ),
        Preset(
            "Residual stream: with and without 1/sqrt(2N)",
            (
                _residual(
                    "without 1/√(2N)",
                    "Every block adds its variance to the stream: it grows like 1 + 2N.",
                    scaled=False,
                ),
                _residual(
                    "with 1/√(2N)",
                    "GPT-2 scales the output projections by 1/√(2N): the 2N additions "
                    "sum to 1, whatever N is (the unscaled stream, faded, for comparison).",
                    scaled=True,
                    both=True,
                ),
            ),
        ),
    ]
}

CHOOSE = "choose a demonstration"

# --- large type ---------------------------------------------------------------------------------

FONT_PX = 22

# ipywidgets sizes every control from these variables: set inside the app, they
# enlarge its widgets and nothing else on the page.
PRESENTATION_CSS = f"""
.tinyinit-present {{
  --jp-widgets-font-size: {FONT_PX}px;
  --jp-widgets-inline-height: {2 * FONT_PX}px;
  --jp-widgets-inline-label-width: {7 * FONT_PX}px;
  --jp-widgets-inline-width: {17 * FONT_PX}px;
  --jp-widgets-inline-width-short: {11 * FONT_PX}px;
  --jp-widgets-inline-width-tiny: {6 * FONT_PX}px;
  --jp-widgets-slider-handle-size: {FONT_PX}px;
  --jp-ui-font-size1: {FONT_PX}px;
  --jp-content-font-size1: {FONT_PX}px;
  font-size: {FONT_PX}px;
}}
.tinyinit-present .widget-html-content,
.tinyinit-present .widget-label,
.tinyinit-present .widget-readout,
.tinyinit-present select,
.tinyinit-present button,
.tinyinit-present .lm-TabBar-tabLabel {{
  font-size: {FONT_PX}px;
  line-height: 1.35;
}}
.tinyinit-present .widget-html-content {{ height: auto; }}
.tinyinit-present .tinyinit-says .widget-html-content {{ font-size: {round(1.2 * FONT_PX)}px; }}
/* Buttons and tabs as wide as their words, never cut to "forward: a..." */
.tinyinit-present .widget-toggle-button,
.tinyinit-present .widget-button {{ width: auto !important; padding: 0 0.6em; }}
/* Sliders long enough to aim at from a lectern; rows wrap rather than run off the screen */
.tinyinit-present .widget-hslider {{ width: {22 * FONT_PX}px !important; }}
.tinyinit-present .widget-hslider .slider-container {{ min-width: {9 * FONT_PX}px; }}
.tinyinit-present .widget-hbox {{ flex-wrap: wrap; }}
.tinyinit-present .lm-TabBar-tab {{
  min-height: {2 * FONT_PX}px; max-width: none !important; flex: 0 0 auto !important;
}}
"""

# Font sizes in points for the figures: at 100 dpi a 16 pt label is as tall as
# the 22 px widget text beside it.
FIGURE_FONTS = {"title": 17, "label": 18, "ticks": 16, "legend": 15, "note": 14}


def style_figure(figure, fonts: dict | None = None) -> None:
    """Set every text of `figure` to presentation sizes: title, axis labels, ticks, legends.

    Sizes are set on the artists themselves (not through rcParams), so they
    hold when ticks are rebuilt or a title is rewritten at the next update.

    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); ax = fig.add_subplot(); _ = ax.set_xlabel("layer")
    >>> style_figure(fig); ax.xaxis.label.get_fontsize()
    18.0
    """
    fonts = {**FIGURE_FONTS, **(fonts or {})}
    for ax in figure.axes:
        ax.title.set_fontsize(fonts["title"])
        ax.xaxis.label.set_fontsize(fonts["label"])
        ax.yaxis.label.set_fontsize(fonts["label"])
        ax.tick_params(labelsize=fonts["ticks"])
        if ax.get_legend() is not None:
            for text in ax.get_legend().get_texts():
                text.set_fontsize(fonts["legend"])
    for legend in figure.legends:
        for text in legend.get_texts():
            text.set_fontsize(fonts["legend"])
    for text in figure.texts:
        text.set_fontsize(fonts["note"])


# --- the explorers, in large type ------------------------------------------------------------


class LargeDepthExplorer(DepthExplorer):
    """The depth explorer with presentation fonts and a figure sized for a projector."""

    def __init__(self, **settings):
        settings.setdefault("figsize", (11.0, 5.4))
        super().__init__(**settings)
        # Room below the axes for the x label and a note in large type (the title
        # and legend are HTML above the canvas).
        self.figure.subplots_adjust(left=0.1, right=0.98, top=0.95, bottom=0.22)
        style_figure(self.figure)  # sizes set once hold through every update
        self.plot.redraw_all()

    def apply(self, settings: dict) -> None:
        """Set the controls named in `settings` (initializer, gain, depth, ...); one update."""
        order = ["initializer", "activation", "direction", "width", "seeds", "depth", "std", "gain"]
        unknown = set(settings) - set(order)
        if unknown:
            raise ValueError(f"unknown depth explorer controls {sorted(unknown)}; known: {order}")
        with self.hold():
            for name in order:  # the gain last: choosing Kaiming resets it
                if name in settings:
                    getattr(self, name).value = settings[name]


class LargeResidualExplorer(ResidualStreamExplorer):
    """The residual-stream explorer with presentation fonts and a projector-sized figure."""

    def __init__(self, stack, n_layers: int = 12, scaled: bool = True):
        super().__init__(stack, n_layers=n_layers, scaled=scaled)
        self.fig.set_size_inches(11.0, 5.4)
        self.fig.subplots_adjust(left=0.1, right=0.98, top=0.95, bottom=0.14)
        self.update()

    def update(self) -> None:
        super().update()
        style_figure(self.fig)
        self.fig.canvas.draw_idle()

    def apply(self, settings: dict) -> None:
        """Set blocks (N), scaled (the 1/sqrt(2N) toggle) and both from `settings`."""
        unknown = set(settings) - {"blocks", "scaled", "both"}
        if unknown:
            raise ValueError(f"unknown residual explorer controls {sorted(unknown)}")
        if "blocks" in settings:
            self.blocks.value = min(settings["blocks"], self.blocks.max)
        if "scaled" in settings:
            self.scaling.value = settings["scaled"]
        if "both" in settings:
            self.both.value = settings["both"]


def astuple_shallow(stack: ResidualStack) -> tuple:
    """The stack's arrays in field order, not copied (dataclasses.astuple would deep-copy)."""
    return tuple(getattr(stack, f.name) for f in dataclasses.fields(stack))


# --- the app ------------------------------------------------------------------------------------

APPS = {"depth": 0, "residual": 1}
TAB_TITLES = ("Signal through depth", "Residual stream")


class Presentation:
    """Preset dropdown, step buttons, a line to say, and the explorers in tabs.

    CSS classes: tinyinit-present (the app), tinyinit-preset (dropdown),
    tinyinit-step (step buttons), tinyinit-says (the line under them). Each
    explorer keeps its own classes (tinyinit-explorer, tinyinit-residual, ...).

    >>> app = Presentation()
    >>> app.choose("tanh: gain 1 vs 5/3", step=1)
    >>> app.depth.activation.value, round(app.depth.gain.value, 4), app.step.value
    ('tanh', 1.6667, 'gain 5/3')
    """

    def __init__(self, residual_blocks: int = 64):
        self.depth = LargeDepthExplorer()
        # Notebook 06's stack (the same draws from PCG32(0), as many blocks as the slider
        # needs), kept in float64: the same numbers, and a slider move is twice as fast.
        drawn = draw_residual_stack(residual_blocks, 128, 128, 128, PCG32(0))
        stack = ResidualStack(*(np.asarray(a, dtype=np.float64) for a in astuple_shallow(drawn)))
        self.residual = LargeResidualExplorer(stack, n_layers=12, scaled=True)
        self.preset = widgets.Dropdown(
            options=[CHOOSE, *PRESETS],
            value=CHOOSE,
            description="demonstration",
            style={"description_width": "initial"},
            layout=widgets.Layout(width="auto"),
            tooltip="A classic demonstration: sets every control it needs; "
            "the sliders stay live afterwards",
        )
        self.preset.add_class("tinyinit-preset")
        self.step = widgets.ToggleButtons(options=[], tooltips=[], style={"button_width": "auto"})
        self.step.tooltip = "The steps of this demonstration, one state each"
        self.step.add_class("tinyinit-step")
        self.says = widgets.HTML(
            "Pick a demonstration above, or move any control below.",
            tooltip="What this demonstration shows",
        )
        self.says.add_class("tinyinit-says")
        self.tabs = widgets.Tab(
            children=[self.depth.app, self.residual.widget],
            titles=TAB_TITLES,
        )  # no tooltip: ipywidgets 8's TabView fails to render with one
        self.style = widgets.HTML(f"<style>{PRESENTATION_CSS}</style>")
        self.style.layout.display = "none"  # rules only, nothing to see
        self.app = widgets.VBox(
            [self.style, widgets.HBox([self.preset, self.step]), self.says, self.tabs]
        )
        self.app.add_class("tinyinit-present")
        self.preset.observe(self._on_preset, names="value")
        self.step.observe(self._on_step, names="value")

    def choose(self, name: str, step: int = 0) -> None:
        """Show demonstration `name` at `step` (0-based), as the dropdown and buttons would."""
        if name not in PRESETS:
            raise ValueError(f"preset must be one of {list(PRESETS)}; got {name!r}")
        self.preset.value = name
        self.step.index = step

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
        self.tabs.selected_index = APPS[step.app]
        if step.app == "depth":
            with self.depth.hold():  # one update, at the end
                self.depth.clear_pins()
                for before in earlier:
                    self.depth.apply(before.settings)
                    self.depth.pin()
                self.depth.apply(step.settings)
        else:
            self.residual.apply(step.settings)
        self.says.value = html.escape(step.says)

    def _repr_mimebundle_(self, **kwargs):
        return self.app._repr_mimebundle_(**kwargs)


def presentation(**kwargs) -> Presentation:
    """The presentation app (display it, or let Voila serve a notebook that returns it).

    >>> app = presentation()
    >>> app.choose("Kaiming + ReLU: kept")
    >>> app.depth.initializer.value, round(app.depth.gain.value, 4), app.tabs.selected_index
    ('kaiming_fan_in', 1.4142, 0)
    """
    return Presentation(**kwargs)


# --- serving it with Voila ----------------------------------------------------------------------

APP_SOURCE = """\
%matplotlib widget
from tinyinit.present import presentation

presentation()"""
APP_INTRO = (
    "# tinyinit: presentation mode\n\n"
    "Served by `make present` (Voila shows controls and plots, no code). Pick a "
    "demonstration from the dropdown; every slider stays live. Behind each of them, one rule: "
    "a layer multiplies the mean square of its input by $n_{\\text{in}}\\,\\sigma^2$, and the "
    "activation keeps its share, $\\mathbb{E}[\\phi(z)^2]$ of $z \\sim \\mathcal{N}(0, q)$."
)
REPO_APP = Path(__file__).resolve().parent.parent / "apps" / "present.ipynb"
DEFAULT_PORT = 8866


def app_notebook():
    """The notebook Voila serves: a title, and one cell that shows `presentation()`.

    >>> [cell.cell_type for cell in app_notebook().cells]
    ['markdown', 'code']
    """
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(APP_INTRO), nbformat.v4.new_code_cell(APP_SOURCE)]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def app_path(folder: Path | None = None) -> Path:
    """apps/present.ipynb of a source checkout, or a copy written into `folder` (a temp dir).

    >>> app_path().name
    'present.ipynb'
    """
    if REPO_APP.exists():
        return REPO_APP
    import tempfile

    import nbformat

    folder = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="tinyinit-"))
    path = folder / "present.ipynb"
    nbformat.write(app_notebook(), path)
    return path


# Voila's lab template links Font Awesome from a CDN, and its MathJax comes from one: a
# classroom behind a firewall would get neither. This template serves both from installed
# packages (fontawesomefree, jupyter-server-mathjax) and is otherwise Voila's own.
OFFLINE_INDEX = """\
{%- extends 'voila/templates/lab/index.html.j2' -%}
{% import "spinner.macro.html.j2" as spinner %}
{%- block notebook_css -%}
  {% if frontend == "voila" %}
    {{ resources.include_js("static/voila-style.js") }}
  {% endif %}
  {{ spinner.css() }}
  <style>
    .jp-mod-noOutputs.jp-mod-noInput { display: none; }
  </style>
  {%- set fontawesome = resources.base_url ~ "voila/static/fontawesome/css/" %}
  <link rel="stylesheet" href="{{ fontawesome }}all.min.css">
  <link rel="stylesheet" href="{{ fontawesome }}v4-shims.min.css">
  {{ super.super() }}
{%- endblock notebook_css -%}
"""
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"
OFFLINE_TEMPLATE = "tinyinit-offline"


def offline_template(folder: Path | None = None) -> Path:
    """Write the Voila template that serves Font Awesome and MathJax itself; return its folder.

    Voila finds templates by name in the Jupyter data folders, so by default it goes into this
    Python's own, share/jupyter/voila/templates/tinyinit-offline. Its static/ holds copies of
    the installed files, served at /voila/static/.

    >>> sorted(p.name for p in offline_template().iterdir())
    ['conf.json', 'index.html.j2', 'static']
    """
    import json
    import shutil

    import fontawesomefree
    import jupyter_server_mathjax

    if folder is None:
        folder = Path(sys.prefix) / "share" / "jupyter" / "voila" / "templates" / OFFLINE_TEMPLATE
    static = Path(folder) / "static"
    static.mkdir(parents=True, exist_ok=True)
    (Path(folder) / "conf.json").write_text(json.dumps({"base_template": "lab"}))
    (Path(folder) / "index.html.j2").write_text(OFFLINE_INDEX)
    # Copies, not links: Voila's static handler refuses files that resolve outside its folders.
    fontawesome = Path(fontawesomefree.__file__).parent / "static" / "fontawesomefree"
    sources = {
        "mathjax": Path(jupyter_server_mathjax.__file__).parent / "static",
        "fontawesome/css": fontawesome / "css",
        "fontawesome/webfonts": fontawesome / "webfonts",
    }
    for name, source in sources.items():
        target = static / name
        if target.is_symlink():
            target.unlink()
        shutil.copytree(source, target, dirs_exist_ok=True)
    return Path(folder)


def voila_command(
    notebook: Path,
    *,
    port: int = DEFAULT_PORT,
    ip: str = "127.0.0.1",
    browser: bool = True,
    template: str = OFFLINE_TEMPLATE,
) -> list[str]:
    """The command that serves `notebook` as an app: no code shown, no tracebacks sent, and
    nothing asked of another host (Voila's template `template`, written by
    `offline_template()` when it is the default).

    Voila's defaults already strip the code cells (strip_sources) and keep
    tracebacks in the server log; they are spelled out so that a config file
    elsewhere cannot turn them off for a class.

    >>> voila_command(Path("present.ipynb"), port=9000, browser=False)[3:6]
    ['--port=9000', '--Voila.port_retries=0', '--Voila.ip=127.0.0.1']
    """
    if template == OFFLINE_TEMPLATE:
        offline_template()
    command = [
        sys.executable, "-m", "voila", f"--port={port}", "--Voila.port_retries=0",
        f"--Voila.ip={ip}", "--VoilaConfiguration.strip_sources=True",
        "--VoilaConfiguration.show_tracebacks=False", "--theme=light",
        f"--template={template}",
        "--Voila.mathjax_url=/voila/static/mathjax/MathJax.js",
        f"--Voila.mathjax_config={MATHJAX_CONFIG}",
        # Jupyter Notebook 7's front end, where installed, fails to load inside Voila
        # (a console error) and has nothing to offer an app: left out.
        "--VoilaConfiguration.extension_denylist=@jupyter-notebook/lab-extension",
    ]  # fmt: skip
    if not browser:
        command.append("--no-browser")
    return command + [str(notebook)]

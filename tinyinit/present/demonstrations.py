"""The classic demonstrations, as data: one row per step, in the clicker's order.

A demonstration told in two steps ("gain 1", then "gain 5/3") has two rows; choosing a
step sets every control of the explorer it names, from that explorer's START and the
row's settings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..core.arguments import KindError, one_of, shown
from ..views.defaults import DEPTH_START

__all__ = [
    "CHOOSE",
    "DEMONSTRATIONS",
    "KAIMING_RELU",
    "PRESETS",
    "Preset",
    "RELU_AXIS",
    "START",
    "Step",
    "presets",
]

# Every step of an explorer starts from these settings; a row says what differs. Every
# control is named, so that a step's state (the curves it shows) follows from its row alone
# and can be computed before it is shown.
START = {
    # The explorer's own start (what `python -m tinyinit figure` draws too), gain 1 named.
    "depth": {**{k: v for k, v in DEPTH_START.items() if k != "batch"}, "gain": 1.0},
    "residual": dict(n_layers=48, scaled=True, both=False),
    "training": dict(
        initializer="xavier_normal", gain=1.0, activation="relu", optimizer="sgd",
        learning_rate=0.02, normalization="none", hidden_layers=20, speed=30,
    ),
}  # fmt: skip

KAIMING_RELU = dict(initializer="kaiming_normal", gain=math.sqrt(2.0))
# The y axis of the ReLU demonstrations, 10^-7 to 10: Xavier's collapse to 2^-20 and
# Kaiming's level line on one scale, so that "kept" looks as flat as it is (on its own,
# seed noise from 0.7 to 1.5 would fill a 10^-1 .. 10 axis). The steps of a demonstration
# always share their axis (the app widens it to all their curves); `ylim` makes it at least
# this, for demonstrations told one after the other.
RELU_AXIS = dict(ylim=(1e-7, 1e1))

# (demonstration, step, explorer, what the caption says, settings). A caption fits one
# line on a projector: 95 characters at most (tests/present/test_present.py). Settings name the
# controls that differ from START, and may give `ylim`, the least y range of the plot.
DEMONSTRATIONS = (
    ("Xavier + ReLU: collapse", "Xavier, gain 1", "depth",
     "ReLU keeps half of E[z²]; Xavier's gain 1 does not give it back: "
     "the signal halves each layer.",
     RELU_AXIS),
    ("Kaiming + ReLU: kept", "Kaiming, gain √2", "depth",
     "Kaiming's std √(2/n_in) doubles what ReLU halves: the signal stays at 1.",
     {**KAIMING_RELU, **RELU_AXIS}),
    ("tanh: gain 1 vs 5/3", "gain 1", "depth",
     "tanh squashes: with gain 1 the signal drains away, layer after layer.",
     dict(initializer="xavier_normal", activation="tanh", gain=1.0)),
    ("tanh: gain 1 vs 5/3", "gain 5/3", "depth",
     "gain 5/3, torch's calculate_gain('tanh'), makes up for the squashing: the signal settles.",
     dict(initializer="xavier_normal", activation="tanh", gain=5.0 / 3.0)),
    ("Residual stream: with and without 1/sqrt(2N)", "without 1/√(2N)", "residual",
     "Every block adds its variance to the stream: it grows like 1 + 2N.",
     dict(scaled=False)),
    ("Residual stream: with and without 1/sqrt(2N)", "with 1/√(2N)", "residual",
     "GPT-2 scales the outputs by 1/√(2N): the stream stays near 2 (unscaled: the other curve).",
     dict(scaled=True, both=True)),
    ("Xavier vs Kaiming + ReLU", "Xavier, gain 1", "depth",
     "Xavier with gain 1: ReLU halves the signal at every layer.",
     RELU_AXIS),
    ("Xavier vs Kaiming + ReLU", "Kaiming, gain √2", "depth",
     "Kaiming's √2 gives back what ReLU takes: about 2²⁰ above Xavier's (grey) at layer 20.",
     {**KAIMING_RELU, **RELU_AXIS}),
    ("Xavier + ReLU: it does not learn", "Xavier, gain 1", "training",
     "Trained live on the digits: Xavier's collapsed signal leaves the loss at ln 10, a guess.",
     {}),
    ("Xavier + ReLU: it does not learn", "Kaiming, gain √2", "training",
     "The same network from Kaiming's √2: it learns the digits (Xavier's run in grey).",
     KAIMING_RELU),
)  # fmt: skip


@dataclass(frozen=True)
class Step:
    """One state of a demonstration: which explorer, the values of its controls, what to say.

    >>> PRESETS["tanh: gain 1 vs 5/3"].steps[1].settings["gain"]
    1.6666666666666667
    """

    label: str
    app: str  # "depth", "residual" or "training"
    settings: dict = field(default_factory=dict)
    says: str = ""
    ylim: tuple[float, float] | None = None  # the least y range of its plot, if any


@dataclass(frozen=True)
class Preset:
    """A classic demonstration: a name for the dropdown and one or more steps.

    >>> [step.label for step in PRESETS["Residual stream: with and without 1/sqrt(2N)"].steps]
    ['without 1/√(2N)', 'with 1/√(2N)']
    """

    name: str
    steps: tuple[Step, ...]


def presets(rows=DEMONSTRATIONS) -> dict[str, Preset]:
    """The demonstrations of `rows` by name, each with its steps in the rows' order.

    >>> [len(p.steps) for p in presets().values()]
    [1, 1, 2, 2, 2, 2]
    """
    accepted = "a sequence of (name, label, app, says, settings) rows, as DEMONSTRATIONS"
    if not isinstance(rows, (list, tuple)) or not all(
        isinstance(row, tuple) and len(row) == 5 and isinstance(row[4], dict) for row in rows
    ):
        raise KindError(f"rows must be {accepted}, got {shown(rows)}")
    steps: dict[str, list[Step]] = {}
    for name, label, app, says, settings in rows:
        one_of("rows", app, START)
        controls = {k: v for k, v in settings.items() if k != "ylim"}
        step = Step(label, app, {**START[app], **controls}, says, settings.get("ylim"))
        steps.setdefault(name, []).append(step)
    return {name: Preset(name, tuple(s)) for name, s in steps.items()}


PRESETS: dict[str, Preset] = presets()

CHOOSE = "choose a demonstration"

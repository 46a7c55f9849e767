"""The words for curves and gaps: what a curve is called, where it ends, how far apart two end.

One place for every name a figure, a caption, a headline or a readout gives a curve, so that
the explorers, the presentation app and `python -m tinyinit figure` say the same thing the
same way:

- a power of 2, one rendering per medium (`power_of_two`): "text" for plain text (an alt
  text, a readout, a terminal: 2^−20.7), "html" for a page (2<sup>−20.7</sup>), "unicode" for
  a figure (2⁻²⁰·⁷, text that stays text in a saved SVG);
- a curve's settings (`settings_title`, `pin_label`) and the fewest words that tell it from
  others (`curve_name`, `curve_names`);
- a curve's name with where it ends, the name and the value apart (`end_label`: "Xavier:
  2⁻²⁰·⁷", never "gain 1 2⁻⁵·³", which reads as "gain 12");
- the gap between two curves (`gap_exponent`, `gap_words`, `compare_line`);
- what the numbers say, as a title (`fate`, `point_title`: "Xavier collapses a 20-layer ReLU
  network; Kaiming keeps it").

Plain text, no matplotlib: the command line and the widgets read it alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..core.arguments import KindError, instance, integer, is_number, one_of, shown
from ..core.init import INITIALIZERS
from ..physics.depth_result import DepthResult, as_result


def _real(name: str, value) -> float:
    """A real number as a curve's end may be: inf at overflow, 0 at underflow, NaN too."""
    if not is_number(value):
        raise KindError(f"{name} must be a real number, got {shown(value)}")
    return float(value)


MARKUPS = ("text", "html", "unicode")


def results_checked(results) -> list[DepthResult]:
    """results as a list, if it is a non-empty list of DepthResults that all go one direction
    (the curves of one figure); else a KindError or a ValueError naming `results`.

    >>> from tinyinit.physics.propagation import simulate
    >>> len(results_checked([simulate("relu", n_layers=2, width=8, seeds=1)]))
    1
    >>> results_checked([])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: results must be a non-empty list of DepthResults, all forward or all backward, ...
    """
    accepted = "a non-empty list of DepthResults, all forward or all backward"
    if not isinstance(results, (list, tuple)) or not all(
        isinstance(r, DepthResult) for r in results
    ):
        raise KindError(f"results must be {accepted}, got {shown(results)}")
    if not results or len({r.direction for r in results}) != 1:
        raise ValueError(f"results must be {accepted}, got {shown(results)}")
    return list(results)


def curve_names_checked(names, n: int) -> list[str]:
    """names as a list of n texts, one per curve; else a KindError or a ValueError naming
    `names`.

    >>> curve_names_checked(("Xavier", "Kaiming"), 2)
    ['Xavier', 'Kaiming']
    """
    accepted = f"a list of {n} texts, one per result"
    if not isinstance(names, (list, tuple)) or not all(isinstance(x, str) for x in names):
        raise KindError(f"names must be {accepted}, got {shown(names)}")
    if len(names) != n:
        raise ValueError(f"names must be {accepted}, got {shown(names)}")
    return list(names)


def _initializer_words(result: DepthResult) -> tuple[str, list[str]]:
    """The initializer's name, and the numbers it was given (the one that was set first)."""
    row = INITIALIZERS[result.initializer]
    if not row.uses_gain:
        return row.title, [f"std {result.weight_std:.3g}"]
    return row.title, [f"gain {result.gain:.3g}", f"std {result.weight_std:.3g}"]


def settings_title(result: DepthResult) -> str:
    """One line naming what is on the figure: activation, initializer, gain, std, shape.

    >>> from tinyinit.physics.propagation import simulate
    >>> settings_title(simulate("relu", n_layers=2, width=16, seeds=1))
    'relu, Xavier uniform (gain 1, std 0.25): width 16, 1 seed'
    >>> settings_title(simulate("linear", "normal_init", std=0.02, n_layers=2, width=16, seeds=1))
    'linear, normal weights (std 0.02): width 16, 1 seed'
    """
    name, numbers = _initializer_words(as_result(result))
    init = f"{name} ({', '.join(numbers)})"
    seeds = len(result.seeds)
    return f"{result.activation}, {init}: width {result.width}, {seeds} seed{'s' * (seeds != 1)}"


def pin_label(result: DepthResult) -> str:
    """A pinned curve's name in the legend: the settings that tell curves apart, in the
    order of the figure's title (activation, then initializer).

    >>> from tinyinit.physics.propagation import simulate
    >>> pin_label(simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=3, width=16, seeds=1))
    'relu, Kaiming normal, fan_in, gain 1.41, depth 3'
    >>> pin_label(simulate("linear", "normal_init", std=10.0, n_layers=3, width=16, seeds=1))
    'linear, normal weights, std 10, depth 3'
    """
    name, numbers = _initializer_words(as_result(result))
    return f"{result.activation}, {name}, {numbers[0]}, depth {result.n_layers}"


# --- where a curve ends, in powers of 2 ----------------------------------------------------


def log2_text(value: float) -> str:
    """The exponent of 2 that `value` is, to a tenth, with a true minus sign; or the words for
    what a float cannot hold.

    >>> log2_text(2.0**-20.7), log2_text(1.0), log2_text(math.inf), log2_text(0.0)
    ('−20.7', '0.0', 'inf (overflow)', '0 (underflow)')
    """
    value = _real("value", value)
    if math.isinf(value):
        return "inf (overflow)"
    if not value > 0:
        return "0 (underflow)"
    return f"{math.log2(value):.1f}".replace("-", "−")


SUPERSCRIPT = str.maketrans("0123456789−.", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻·")


def power_of_two(value: float, *, markup: str = "text") -> str:
    """`value` as a power of 2 in `markup`: "text" (2^−20.7), "html" (2<sup>−20.7</sup>) or
    "unicode" (2⁻²⁰·⁷, superscript characters: text that stays text in a saved SVG and
    costs a live plot no typesetting); the words where it is inf or 0.

    >>> power_of_two(2.0**-3), power_of_two(0.5, markup="html")
    ('2^−3.0', '2<sup>−1.0</sup>')
    >>> power_of_two(2.0**-20.7, markup="unicode")
    '2⁻²⁰·⁷'
    """
    one_of("markup", markup, MARKUPS)
    exponent = log2_text(value)
    if not (0 < value < math.inf):
        return exponent
    return {
        "text": f"2^{exponent}",
        "html": f"2<sup>{exponent}</sup>",
        "unicode": "2" + exponent.translate(SUPERSCRIPT),
    }[markup]


def shared_layer(result: DepthResult, other: DepthResult) -> int:
    """The layer where two curves are compared: the last both reach going forward, the
    input (0) going backward.

    >>> from tinyinit.physics.propagation import simulate
    >>> shared_layer(simulate("relu", n_layers=3, width=8, seeds=1),
    ...              simulate("relu", n_layers=5, width=8, seeds=1))
    3
    """
    as_result(result), as_result(other, name="other")
    return min(result.n_layers, other.n_layers) if result.direction == "forward" else 0


def gap_exponent(result: DepthResult, other: DepthResult) -> float | None:
    """log2 of how far `result`'s median ends above `other`'s at the layer both reach; None
    where either is inf or 0.

    >>> from tinyinit.physics.propagation import simulate
    >>> x = simulate("relu", "xavier_uniform", n_layers=20, width=64, seeds=1)
    >>> k = simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=20, width=64, seeds=1)
    >>> round(gap_exponent(k, x), 1)
    20.9
    """
    layer = shared_layer(result, other)
    a, b = float(result.median[layer]), float(other.median[layer])
    if not (0 < a < math.inf and 0 < b < math.inf):
        return None
    return math.log2(a / b)


def _family(initializer: str) -> str:
    """The first word of the initializer's name: Xavier, Kaiming, normal."""
    return INITIALIZERS[initializer].label.split()[0].rstrip(",")


# What can tell two curves apart, in the order a name says it.
ASPECTS = ("family", "variant", "activation", "gain", "std", "width", "depth", "seeds", "direction")


def _aspect(result: DepthResult, aspect: str):
    """The value of one aspect of a curve; None where it does not apply (no gain for 'normal')."""
    uses_gain = INITIALIZERS[result.initializer].uses_gain
    return {
        "family": _family(result.initializer),
        "variant": INITIALIZERS[result.initializer].label,
        "activation": result.activation,
        "gain": result.gain if uses_gain else None,
        "std": None if uses_gain else result.weight_std,
        "width": result.width,
        "depth": result.n_layers,
        "seeds": len(result.seeds),
        "direction": result.direction,
    }[aspect]


def _differences(a: DepthResult, b: DepthResult) -> set[str]:
    """The aspects that tell a from b. A gain (or std) counts only within one family, where
    it is what differs: Kaiming's √2 against Xavier's 1 is the family's doing."""
    differ = {x for x in ASPECTS if _aspect(a, x) != _aspect(b, x)}
    if "family" in differ:
        differ -= {"variant", "gain", "std"}
    return differ


def _words(result: DepthResult, aspects: set[str]) -> str:
    spelled = {
        "family": lambda r: _family(r.initializer),
        "variant": lambda r: INITIALIZERS[r.initializer].label,
        "activation": lambda r: r.activation,
        "gain": lambda r: f"gain {r.gain:.3g}",
        "std": lambda r: f"std {r.weight_std:.3g}",
        "width": lambda r: f"width {r.width}",
        "depth": lambda r: f"depth {r.n_layers}",
        "seeds": lambda r: f"{len(r.seeds)} seed{'s' * (len(r.seeds) != 1)}",
        "direction": lambda r: r.direction,
    }
    if "variant" in aspects:
        aspects = aspects - {"family"}
    words = [spelled[a](result) for a in ASPECTS if a in aspects and _aspect(result, a) is not None]
    return ", ".join(words) or _family(result.initializer)


def curve_name(result: DepthResult, other: DepthResult | None = None) -> str:
    """The fewest words that tell `result` from `other` (its initializer's family, else its
    variant, then its activation, gain or std, width, depth, seeds, direction); without
    `other`, its initializer's family.

    >>> from tinyinit.physics.propagation import simulate
    >>> x = simulate("tanh", "xavier_normal", n_layers=3, width=16, seeds=1)
    >>> k = simulate("tanh", "kaiming_normal", gain=5 / 3, n_layers=3, width=16, seeds=1)
    >>> x53 = simulate("tanh", "xavier_normal", gain=5 / 3, n_layers=3, width=16, seeds=1)
    >>> curve_name(x, k), curve_name(x53, x), curve_name(x)
    ('Xavier', 'gain 1.67', 'Xavier')
    """
    as_result(result)
    return _words(
        result, set() if other is None else _differences(result, as_result(other, name="other"))
    )


def curve_names(results: Sequence[DepthResult]) -> list[str]:
    """A name for each curve of a comparison, all told apart along the same aspects.

    >>> from tinyinit.physics.propagation import simulate
    >>> runs = [simulate("tanh", "xavier_normal", gain=g, n_layers=3, width=16, seeds=1)
    ...         for g in (1.0, 5 / 3)]
    >>> runs.append(simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=3, width=16, seeds=1))
    >>> curve_names(runs)
    ['Xavier, tanh, gain 1', 'Xavier, tanh, gain 1.67', 'Kaiming, relu, gain 1.41']
    """
    results = results_checked(results)
    aspects = set().union(*(_differences(a, b) for a in results for b in results))
    return [_words(result, aspects) for result in results]


def end_label(name: str, result: DepthResult, markup: str = "unicode") -> str:
    """A curve's name and where its median ends, a colon between them: "Xavier: 2⁻²⁰·⁷" (a
    name that ends in a number stays apart from the power: "gain 1: 2⁻⁵·³", not "gain 1 2⁻⁵·³").

    >>> from tinyinit.physics.propagation import simulate
    >>> end_label("Xavier", simulate("relu", n_layers=3, width=16, seeds=1), markup="text")
    'Xavier: 2^−2.7'
    """
    instance("name", name, str, "a curve's name")
    return f"{name}: {power_of_two(as_result(result).measured_end, markup=markup)}"


def gap_words(
    result: DepthResult, other: DepthResult, other_name: str, markup: str = "text"
) -> str:
    """How far `result` ends from `other`, for a headline: "2^20.8 above Xavier" (the power
    of 2 in `power_of_two`'s `markup`).

    >>> from tinyinit.physics.propagation import simulate
    >>> x = simulate("relu", "xavier_uniform", n_layers=20, width=64, seeds=1)
    >>> k = simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=20, width=64, seeds=1)
    >>> gap_words(k, x, "Xavier"), gap_words(k, x, "Xavier", "unicode"), gap_words(x, x, "it")
    ('2^20.9 above Xavier', '2²⁰·⁹ above Xavier', 'level with it')
    """
    instance("other_name", other_name, str, "a curve's name")
    one_of("markup", markup, MARKUPS)
    gap = gap_exponent(result, other)
    if gap is None:
        where = other.median[shared_layer(result, other)]
        return f"{other_name} ends at {power_of_two(where, markup=markup)}"
    if abs(gap) < 0.05:
        return f"level with {other_name}"
    where = "above" if gap > 0 else "below"
    return f"{power_of_two(2.0 ** abs(gap), markup=markup)} {where} {other_name}"


def compare_line(result: DepthResult, pinned: DepthResult, number: int) -> str:
    """How far `result` ends from pin `number`, in powers of 2, at the layer both reach: the
    explorer's readout, in plain text.

    >>> from tinyinit.physics.propagation import simulate
    >>> xavier = simulate("relu", "xavier_uniform", n_layers=20, width=64, seeds=1)
    >>> kaiming = simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=20, width=64, seeds=1)
    >>> compare_line(kaiming, xavier, 1)
    'Kaiming ends 2^20.9 above Xavier (pin 1) at layer 20'
    >>> compare_line(xavier, xavier, 2)
    'now ends level with pin 2 at layer 20'
    """
    as_result(result), as_result(pinned, name="pinned")
    number = integer("number", number, minimum=1)
    differ = bool(_differences(result, pinned))
    now = curve_name(result, pinned) if differ else "now"
    then = f"{curve_name(pinned, result)} (pin {number})" if differ else f"pin {number}"
    layer = shared_layer(result, pinned)
    if gap_exponent(result, pinned) is None:
        a, b = (power_of_two(r.median[layer]) for r in (result, pinned))
        return f"{now} ends at {a} and {then} at {b}, at layer {layer}"
    return f"{now} ends {gap_words(result, pinned, then)} at layer {layer}"


# --- what the numbers say --------------------------------------------------------------------

# Where a curve's end, in powers of 2 of where it started, puts it: within 2^2 (a factor of 4,
# wider than three seeds' spread at width 256 over 20 layers) the signal is kept; beyond 2^8
# (a factor of 256) it has collapsed or exploded, between the two it shrinks or grows.
KEPT_WITHIN, LOST_BEYOND = 2.0, 8.0

# An activation's name in a sentence.
ACTIVATION_WORDS = {
    "linear": "linear", "relu": "ReLU", "leaky_relu": "leaky ReLU", "tanh": "tanh",
    "sigmoid": "sigmoid", "selu": "SELU", "gelu": "GELU", "silu": "SiLU",
}  # fmt: skip


def fate(result: DepthResult) -> str:
    """What the network does to the signal, from where its median ends (relative to where it
    started, 1): "collapses" below 2^−8, "shrinks" below 2^−2, "keeps" within a factor of 4,
    "grows" up to 2^8, "explodes" beyond (overflow included).

    >>> from tinyinit.physics.propagation import simulate
    >>> fate(simulate("relu", n_layers=20, width=64, seeds=1))
    'collapses'
    >>> fate(simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=20, width=64, seeds=1))
    'keeps'
    """
    end = as_result(result).measured_end
    if end == 0:
        return "collapses"
    if not math.isfinite(end):
        return "explodes"
    exponent = math.log2(end)
    if abs(exponent) <= KEPT_WITHIN:
        return "keeps"
    if exponent < 0:
        return "collapses" if exponent < -LOST_BEYOND else "shrinks"
    return "explodes" if exponent > LOST_BEYOND else "grows"


def point_title(results: Sequence[DepthResult], names: Sequence[str]) -> str:
    """A figure's point in one sentence, from its numbers: what each curve does to the network
    (`fate`), with what the curves share (their depth, their activation).

    >>> from tinyinit.physics.propagation import simulate
    >>> x = simulate("relu", "xavier_uniform", n_layers=20, width=64, seeds=1)
    >>> k = simulate("relu", "kaiming_normal", gain=2**0.5, n_layers=20, width=64, seeds=1)
    >>> point_title([x, k], ["Xavier", "Kaiming"])
    'Xavier collapses a 20-layer ReLU network; Kaiming keeps it'
    >>> point_title([k, k], ["Kaiming", "again"])
    'Kaiming and again both keep a 20-layer ReLU network'
    """
    results = results_checked(results)
    names = curve_names_checked(names, len(results))
    first = results[0]
    depth = f"{first.n_layers}-layer " if len({r.n_layers for r in results}) == 1 else ""
    same = len({r.activation for r in results}) == 1
    activation = f"{ACTIVATION_WORDS.get(first.activation, first.activation)} " if same else ""
    network = f"a {depth}{activation}network"
    if first.direction == "backward":
        network = f"the gradient through {network}"
    fates = [fate(r) for r in results]
    if len(results) > 1 and len(set(fates)) == 1:
        who = ", ".join(names[:-1]) + " and " + names[-1]
        together = "both" if len(results) == 2 else "all"
        return f"{who} {together} {fates[0].removesuffix('s')} {network}"
    rest = "".join(f"; {name} {verb} it" for name, verb in zip(names[1:], fates[1:]))
    return f"{names[0]} {fates[0]} {network}{rest}"


__all__ = [
    "ACTIVATION_WORDS",
    "ASPECTS",
    "MARKUPS",
    "SUPERSCRIPT",
    "compare_line",
    "curve_name",
    "curve_names",
    "end_label",
    "fate",
    "gap_exponent",
    "gap_words",
    "log2_text",
    "pin_label",
    "point_title",
    "power_of_two",
    "results_checked",
    "settings_title",
    "shared_layer",
]

"""What the class learned: a concept inventory of the module, asked before 01 and after 04.

Thirteen multiple-choice items on the module's ideas, in the manner of physics education's
Force Concept Inventory: each wrong option is a misconception the card's pitfalls or the
notebooks name, so that a class's answers say not only how many were right but what the
others believed. A student answers the same items twice, before the first notebook and after
the fourth; the answers are saved beside the notebooks in `inventory.json`,

    {"pre": {"variance_of_a_sum": "a", ...}, "post": {"variance_of_a_sum": "a", ...}}

items named by stable ids, so that a hand-in carries them. `python -m tinyinit inventory
--key` prints the teacher's key (JSON: each item's right choice and the misconception behind
each wrong one). `python -m tinyinit grade` reads the files it finds and adds the class's
pre and post scores, Hake's normalized gain g = (post - pre) / (100% - pre) with a bootstrap
interval, each item's difficulty and discrimination, and the misconceptions most chosen.

>>> len(ITEMS), ITEMS[0].id
(13, 'variance_of_a_sum')
>>> ITEMS[0].answer, ITEMS[0].misconceptions["b"]
('a', 'variance_not_second_moment')
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..core.arguments import instance
from ..core.pcg32 import PCG32

__all__ = [
    "FILE",
    "ITEMS",
    "MISCONCEPTIONS",
    "InventoryError",
    "Item",
    "class_statistics",
    "hake_gain",
    "key",
    "read_answers",
    "save_answers",
    "score",
]

FILE = "inventory.json"
SITTINGS = ("pre", "post")

# Each misconception once, in the words a teacher reads in the report.
MISCONCEPTIONS = {
    "variance_not_second_moment": "the variance of the input, not its mean square E[x^2], "
    "carries into Var(z) (true only for a zero-mean input)",
    "one_term_only": "a sum of n independent terms has the variance of one term",
    "deviations_add": "standard deviations add (the terms treated as perfectly correlated)",
    "mean_squared": "the square of the mean E[x]^2 measures a signal's size",
    "swapped_fans": "card pitfall s01: a torch weight (out, in) read as (in, out)",
    "kernel_dims_forgotten": "card pitfall s02: a convolution's kernel size left out of its fans",
    "uniform_bound_is_std": "card pitfall s03: the uniform's bound a taken for its standard "
    "deviation (U(-a, a) has variance a^2 / 3)",
    "gain_as_variance": "card pitfall s05: the ReLU gain 2, a variance, used as a standard "
    "deviation",
    "one_gain_for_all": "one gain suits every activation (ReLU's sqrt(2), or none at all)",
    "xavier_is_universal": "Xavier's scale keeps the signal through any activation",
    "depth_does_not_compound": "a factor per layer is paid once, not once per layer",
    "direction_confused": "a network that loses signal per layer gains it (the factor inverted)",
    "linear_near_zero_is_exact": "tanh is linear near 0, so gain 1 keeps its signal exactly",
    "residual_sqrt_L": "card pitfall s08: each block adds one output to the stream, not two",
    "residual_adds_nothing": "a residual stream does not grow with the blocks added to it",
    "log_axis_read_linear": "a log axis read as a linear one",
    "std_for_mean_square": "the mean square and the standard deviation halve together",
    "value_for_mean_square": "a float overflows when its mean square, not its value, passes "
    "the largest float",
    "floats_scale_freely": "floating point has no largest number that matters here",
    "generator_created_inside": "card pitfall s13: a generator made inside the initializer "
    "changes nothing (every layer then gets the same weights)",
    "seed_makes_layers_independent": "a fixed seed gives each layer independent weights "
    "whatever the generator is made",
}


@dataclass(frozen=True)
class Item:
    """One question: its stable id, the stem, the choices (letter -> text), the right letter,
    the misconception behind each wrong letter, and the explanation shown after the second
    sitting.

    >>> item = ITEMS[2]
    >>> item.id, item.choices[item.answer]
    ('fans_of_a_linear_weight', 'fan_in 128, fan_out 256')
    """

    id: str
    stem: str
    choices: dict[str, str]
    answer: str
    misconceptions: dict[str, str]
    explanation: str


ITEMS: tuple[Item, ...] = (
    Item(
        "variance_of_a_sum",
        "z = w_1 x_1 + ... + w_n x_n, each w_i drawn independently of everything, with mean 0 "
        "and variance s^2. What is Var(z)?",
        {"a": "n s^2 E[x^2]", "b": "n s^2 Var(x)", "c": "s^2 E[x^2]", "d": "n^2 s^2 E[x^2]"},
        "a",
        {"b": "variance_not_second_moment", "c": "one_term_only", "d": "deviations_add"},
        "Each term has variance E[w^2] E[x^2] = s^2 E[x^2] (the weight has mean 0), and the n "
        "terms are uncorrelated, so their variances add: n s^2 E[x^2].",
    ),
    Item(
        "why_the_mean_square",
        "The inputs x come out of a ReLU, so their mean is above 0. Which of their numbers "
        "goes into Var(z) of the next layer?",
        {"a": "Var(x)", "b": "E[x^2], the mean square", "c": "E[x]^2", "d": "E[|x|]"},
        "b",
        {
            "a": "variance_not_second_moment",
            "c": "mean_squared",
            "d": "mean_squared",
        },
        "Var(w x) = E[w^2] E[x^2] when w has mean 0: the mean square of x, which for a ReLU's "
        "output is Var(z)/2, not its variance.",
    ),
    Item(
        "fans_of_a_linear_weight",
        "A torch Linear layer's weight has shape (256, 128). What are its fans?",
        {
            "a": "fan_in 128, fan_out 256",
            "b": "fan_in 256, fan_out 128",
            "c": "fan_in 256 x 128, fan_out 1",
            "d": "fan_in 128, fan_out 128",
        },
        "a",
        {"b": "swapped_fans", "c": "kernel_dims_forgotten", "d": "swapped_fans"},
        "torch stores a weight as (out, in): z = W h sums over the 128 inputs, so fan_in = "
        "shape[1] = 128 and fan_out = shape[0] = 256.",
    ),
    Item(
        "fans_of_a_convolution",
        "A convolution's weight has shape (64, 32, 3, 3). What is its fan_in?",
        {"a": "32 x 3 x 3 = 288", "b": "32", "c": "64 x 3 x 3 = 576", "d": "64 x 32 = 2048"},
        "a",
        {"b": "kernel_dims_forgotten", "c": "swapped_fans", "d": "kernel_dims_forgotten"},
        "Each output sums over 32 input channels times a 3 x 3 window: fan_in = shape[1] times "
        "the kernel's size, 288.",
    ),
    Item(
        "the_uniform_bound",
        "Weights drawn from U(-a, a) should have standard deviation s. What is a?",
        {"a": "s", "b": "sqrt(3) s", "c": "s / sqrt(3)", "d": "3 s"},
        "b",
        {"a": "uniform_bound_is_std", "c": "uniform_bound_is_std", "d": "uniform_bound_is_std"},
        "U(-a, a) has variance a^2 / 3, so a standard deviation of s needs a = sqrt(3) s.",
    ),
    Item(
        "the_relu_gain",
        "Kaiming's normal init for ReLU draws std = gain / sqrt(fan_in). What is the gain?",
        {"a": "sqrt(2)", "b": "2", "c": "1", "d": "1 / sqrt(2)"},
        "a",
        {"b": "gain_as_variance", "c": "one_gain_for_all", "d": "direction_confused"},
        "A ReLU keeps half of the mean square, E[relu(z)^2] = Var(z)/2; the weights' variance "
        "makes it up with 2 / fan_in, a standard deviation of sqrt(2) / sqrt(fan_in).",
    ),
    Item(
        "xavier_through_relu",
        "A 20-layer ReLU network of width 256 starts with Xavier's normal init (std "
        "sqrt(2 / (256 + 256)) = 1/16). After 20 layers, the activations' mean square, "
        "relative to the input's, is about:",
        {"a": "1", "b": "2^-20, about 10^-6", "c": "2^20, about 10^6", "d": "1/2"},
        "b",
        {"a": "xavier_is_universal", "c": "direction_confused", "d": "depth_does_not_compound"},
        "Each layer multiplies the mean square by 256 x (1/16)^2 x 1/2 = 1/2: twenty layers "
        "give 2^-20.",
    ),
    Item(
        "kaiming_through_relu",
        "The same 20-layer ReLU network starts with Kaiming's init for ReLU instead. After 20 "
        "layers, the mean square relative to the input's is about:",
        {"a": "1", "b": "2^-20", "c": "2^20", "d": "2^-10"},
        "a",
        {"b": "depth_does_not_compound", "c": "gain_as_variance", "d": "std_for_mean_square"},
        "The variance 2 / fan_in makes each layer's factor 256 x 2/256 x 1/2 = 1: the mean "
        "square stays at its input's, however deep.",
    ),
    Item(
        "a_gain_for_tanh",
        "For a deep tanh network, which gain keeps the signal from fading (torch's choice)?",
        {"a": "sqrt(2)", "b": "5/3", "c": "2", "d": "1, since tanh is linear near 0"},
        "b",
        {"a": "one_gain_for_all", "c": "gain_as_variance", "d": "linear_near_zero_is_exact"},
        "tanh flattens away from 0, so with gain 1 each layer shrinks the signal a little and "
        "it fades with depth; 5/3 makes up for the flattening at the sizes a signal has.",
    ),
    Item(
        "the_residual_scale",
        "A GPT-2-style model has N = 12 blocks; each adds an attention output and an MLP output "
        "to the residual stream. With base std 0.02, what std do the output projections get?",
        {"a": "0.02 / sqrt(12)", "b": "0.02 / sqrt(24)", "c": "0.02 / 12", "d": "0.02"},
        "b",
        {"a": "residual_sqrt_L", "c": "std_for_mean_square", "d": "residual_adds_nothing"},
        "2N = 24 independent outputs add to the stream, their variances adding: 1/sqrt(2N) "
        "keeps the sum's variance at one output's.",
    ),
    Item(
        "reading_a_depth_plot",
        "A plot shows log2 of the mean square against the layer: a straight line falling by 1 "
        "per layer. What happens at each layer?",
        {
            "a": "the mean square halves",
            "b": "the mean square drops by 1",
            "c": "the standard deviation halves",
            "d": "nothing: on a log axis a line is flat",
        },
        "a",
        {"b": "log_axis_read_linear", "c": "std_for_mean_square", "d": "log_axis_read_linear"},
        "One unit of log2 is a factor of 2: the mean square halves per layer, so the standard "
        "deviation falls by sqrt(2).",
    ),
    Item(
        "float32_overflow",
        "With the ReLU gain 2 by mistake, the mean square doubles at every layer. float32's "
        "largest number is about 2^128. After about how many layers does a typical activation "
        "(the square root of the mean square) pass it?",
        {"a": "20", "b": "128", "c": "256", "d": "never: floats scale"},
        "c",
        {"a": "depth_does_not_compound", "b": "value_for_mean_square", "d": "floats_scale_freely"},
        "After L layers the mean square is 2^L, a typical value 2^(L/2): it passes 2^128 at "
        "L = 256. Its square, the mean square itself, overflows already at L = 128.",
    ),
    Item(
        "a_generator_per_call",
        "An initializer makes its own generator, PCG32(seed), each time it is called, and a "
        "network calls it once for each of its 20 layers of the same shape. What happens?",
        {
            "a": "every layer gets the same weights",
            "b": "nothing: the seed only makes the run repeatable",
            "c": "each layer gets its own independent weights",
            "d": "each layer's weights are the previous layer's, shuffled",
        },
        "a",
        {
            "b": "generator_created_inside",
            "c": "seed_makes_layers_independent",
            "d": "seed_makes_layers_independent",
        },
        "A new generator from the same seed starts the same sequence: every call draws the same "
        "numbers, so all 20 layers are equal and the seed the caller passes changes nothing. "
        "The generator is made once, outside, and passed in.",
    ),
)
_BY_ID = {item.id: item for item in ITEMS}


class InventoryError(ValueError):
    """An answers file that is not what `save_answers` writes: malformed, or partial.

    >>> issubclass(InventoryError, ValueError)
    True
    """


def key() -> list[dict]:
    """The teacher's key: each item's id, its right choice and the misconception behind each
    wrong one (with its words).

    >>> k = key()
    >>> k[4]["id"], k[4]["answer"], k[4]["wrong"]["a"]["misconception"]
    ('the_uniform_bound', 'b', 'uniform_bound_is_std')
    """
    return [
        {
            "id": item.id,
            "question": item.stem,
            "choices": dict(item.choices),
            "answer": item.answer,
            "wrong": {
                letter: {"misconception": m, "meaning": MISCONCEPTIONS[m]}
                for letter, m in sorted(item.misconceptions.items())
            },
            "explanation": item.explanation,
        }
        for item in ITEMS
    ]


def save_answers(folder, sitting: str, answers: dict[str, str]) -> Path:
    """Write one sitting's answers into folder/inventory.json, keeping the other sitting's.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> path = save_answers(folder, "pre", {"variance_of_a_sum": "b"})
    >>> json.loads(path.read_text())
    {'pre': {'variance_of_a_sum': 'b'}}
    """
    folder = Path(instance("folder", folder, (str, Path), "a folder"))
    if sitting not in SITTINGS:
        raise ValueError(f"sitting must be 'pre' or 'post', got {sitting!r}")
    checked = _checked_sitting(sitting, answers, partial=True)
    path = folder / FILE
    saved = {}
    if path.is_file():
        try:
            saved = read_answers(path, partial=True)
        except InventoryError:
            saved = {}  # a broken file is replaced by what was answered now
    saved[sitting] = checked
    path.write_text(json.dumps(saved, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def _checked_sitting(sitting: str, answers, partial: bool) -> dict[str, str]:
    if not isinstance(answers, dict):
        raise InventoryError(f"{sitting}: not a table of item -> choice")
    checked = {}
    for item_id, choice in answers.items():
        item = _BY_ID.get(item_id)
        if item is None:
            raise InventoryError(f"{sitting}: no item is called {str(item_id)[:40]!r}")
        if choice not in item.choices:
            raise InventoryError(f"{sitting}: {item_id}'s choice {str(choice)[:10]!r} is not one")
        checked[item_id] = choice
    missing = [item.id for item in ITEMS if item.id not in checked]
    if missing and not partial:
        raise InventoryError(f"{sitting}: {len(missing)} of {len(ITEMS)} items unanswered")
    return checked


def read_answers(path, partial: bool = False) -> dict[str, dict[str, str]]:
    """The sittings in an inventory.json, each checked; InventoryError for a file that is not
    JSON, names an unknown item or choice, or (unless partial) leaves an item unanswered.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / FILE
    >>> _ = path.write_text('{"post": {"the_relu_gain": "b"}}')
    >>> read_answers(path, partial=True)
    {'post': {'the_relu_gain': 'b'}}
    >>> read_answers(path)
    Traceback (most recent call last):
    ...
    tinyinit.course.inventory.InventoryError: post: 12 of 13 items unanswered
    """
    path = Path(instance("path", path, (str, Path), "an inventory.json file"))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise InventoryError(f"{path.name} cannot be read as JSON ({error})") from None
    if not isinstance(data, dict) or not set(data) <= set(SITTINGS):
        raise InventoryError(f"{path.name} is not {{'pre': ..., 'post': ...}}")
    return {s: _checked_sitting(s, data[s], partial) for s in SITTINGS if s in data}


def score(answers: dict[str, str]) -> float:
    """The share of the items answered right, in percent.

    >>> score({item.id: item.answer for item in ITEMS})
    100.0
    """
    right = sum(_BY_ID[i].answer == c for i, c in answers.items() if i in _BY_ID)
    return 100.0 * right / len(ITEMS)


def hake_gain(pre: float, post: float) -> float:
    """Hake's normalized gain of a class: the share of what it could gain that it gained,
    g = (post - pre) / (100 - pre), scores in percent (nan when pre is 100).

    >>> hake_gain(40.0, 70.0)
    0.5
    """
    return (post - pre) / (100.0 - pre) if pre < 100.0 else math.nan


def class_statistics(answers: dict[str, dict], resamples: int = 2000, seed: int = 7) -> dict:
    """What the class's answers say: for the students who sat both (matched), the mean pre
    and post scores and Hake's g with a 95% bootstrap interval (students resampled with
    replacement, from a PCG32 of `seed`: the same interval every run); each item's difficulty
    (the share right) and discrimination (the share right among the top 27% by score minus
    among the bottom 27%), pre and post; the misconceptions chosen, most first.

    >>> right = {i.id: i.answer for i in ITEMS}
    >>> wrong = {i.id: min(i.misconceptions) for i in ITEMS}
    >>> stats = class_statistics({"a": {"pre": wrong, "post": right},
    ...                           "b": {"pre": wrong, "post": wrong}})
    >>> stats["matched"], stats["pre"], stats["post"], stats["g"]
    (2, 0.0, 50.0, 0.5)
    """
    matched = [a for a in answers.values() if set(a) == set(SITTINGS)]
    stats: dict = {"matched": len(matched)}
    for sitting in SITTINGS:
        sat = [a[sitting] for a in answers.values() if sitting in a]
        stats[f"{sitting}_students"] = len(sat)
        stats[f"{sitting}_items"] = {item.id: _item_stats(item, sat) for item in ITEMS}
        chosen = Counter(
            item.misconceptions[a[item.id]]
            for a in sat
            for item in ITEMS
            if a.get(item.id) in item.misconceptions
        )
        stats[f"{sitting}_misconceptions"] = sorted(chosen.items(), key=lambda x: (-x[1], x[0]))
    if not matched:
        stats.update(pre=math.nan, post=math.nan, g=math.nan, g_interval=(math.nan, math.nan))
        return stats
    pre = [score(a["pre"]) for a in matched]
    post = [score(a["post"]) for a in matched]
    stats["pre"], stats["post"] = _mean(pre), _mean(post)
    stats["g"] = hake_gain(stats["pre"], stats["post"])
    rng = PCG32(seed)
    gains = []
    for _ in range(resamples):
        picks = [rng.next_u32() % len(matched) for _ in matched]
        g = hake_gain(_mean([pre[k] for k in picks]), _mean([post[k] for k in picks]))
        if not math.isnan(g):
            gains.append(g)
    gains.sort()
    stats["g_interval"] = (
        (gains[int(0.025 * len(gains))], gains[int(0.975 * len(gains)) - 1])
        if gains
        else (math.nan, math.nan)
    )
    return stats


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _item_stats(item: Item, sat: list[dict[str, str]]) -> dict[str, float]:
    answered = [a for a in sat if item.id in a]
    if not answered:
        return {"difficulty": math.nan, "discrimination": math.nan}
    right = [a[item.id] == item.answer for a in answered]
    ranked = sorted(answered, key=score)
    k = max(1, round(0.27 * len(ranked)))
    low = sum(a[item.id] == item.answer for a in ranked[:k]) / k
    high = sum(a[item.id] == item.answer for a in ranked[-k:]) / k
    return {"difficulty": sum(right) / len(right), "discrimination": high - low}

"""What the class learned: a concept inventory of the module, asked before 01 and after 04.

Thirteen multiple-choice items on the module's ideas, in the manner of physics education's
Force Concept Inventory: each wrong option is a misconception the card's pitfalls or the
notebooks name, so that a class's answers say not only how many were right but what the
others believed. A student answers the same items twice, before the first notebook and after
the fourth; the answers are saved beside the notebooks in `inventory.json`,

    {"pre": {"variance_of_a_sum": "a", ...}, "post": {"variance_of_a_sum": "a", ...}}

items named by stable ids, so that a hand-in carries them. In the notebooks (00 and 04b) the
two sittings are `sitting("pre")` and `sitting("post")`: a radio button per item (or, in code,
`inventory.answer("variance_of_a_sum", "b")`), each choice saved at once, so that a restarted
kernel shows it again; the file also lists the sittings submitted (`"submitted": ["pre"]`),
closed from then on. The first sitting never shows an answer and closes when it is submitted
or when the second one begins, so that nothing the second shows can change it; the second
shows the answers and their explanations once submitted. `python -m tinyinit inventory --key`
prints the teacher's key (JSON: each item's right choice and the misconception behind each
wrong one). `python -m tinyinit grade` reads the files it finds and adds the class's
pre and post scores, Hake's normalized gain g = (post - pre) / (100% - pre) with a bootstrap
interval, each item's difficulty and discrimination, and the misconceptions most chosen.

>>> len(ITEMS), ITEMS[0].id
(13, 'variance_of_a_sum')
>>> ITEMS[0].answer, ITEMS[0].misconceptions["b"]
('a', 'variance_not_second_moment')
"""

from __future__ import annotations

import html
import json
import math
import os
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..core.arguments import instance, one_of
from ..core.pcg32 import PCG32

__all__ = [
    "FILE",
    "ITEMS",
    "MISCONCEPTIONS",
    "InventoryError",
    "Item",
    "Sitting",
    "class_statistics",
    "hake_gain",
    "key",
    "read_answers",
    "save_answers",
    "score",
    "sitting",
]

FILE = "inventory.json"
SITTINGS = ("pre", "post")
SUBMITTED = "submitted"  # the file's list of the sittings submitted, closed from then on
BROKEN = FILE + ".broken"  # where an unreadable file is kept when answers are saved over it
# The folder of inventory.json for the notebooks' sittings; unset, the folder they run in.
FOLDER_VARIABLE = "TINYINIT_INVENTORY"

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
        "The inputs x come out of a ReLU (their mean is above 0). Which of their numbers goes "
        "into the next layer's Var(z)?",
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
        "A 20-layer ReLU network of width 256 starts with Xavier's normal init, std "
        "sqrt(2 / (256 + 256)) = 1/16. After 20 layers, the mean square relative to the "
        "input's is about:",
        {"a": "1", "b": "2^-20, about 10^-6", "c": "2^20, about 10^6", "d": "1/2"},
        "b",
        {"a": "xavier_is_universal", "c": "direction_confused", "d": "depth_does_not_compound"},
        "Each layer multiplies the mean square by 256 x (1/16)^2 x 1/2 = 1/2: twenty layers "
        "give 2^-20.",
    ),
    Item(
        "kaiming_through_relu",
        "The same network starts with Kaiming's init for ReLU instead. After 20 layers, the "
        "mean square relative to the input's is about:",
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
        "A GPT-2-style model has N = 12 blocks, each adding an attention and an MLP output to "
        "the residual stream. Base std 0.02: what std do the output projections get?",
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
        "A ReLU gain of 2 by mistake doubles the mean square at every layer. float32's "
        "largest number is about 2^128. After about how many layers does a typical activation "
        "(the mean square's root) pass it?",
        {"a": "20", "b": "128", "c": "256", "d": "never: floats scale"},
        "c",
        {"a": "depth_does_not_compound", "b": "value_for_mean_square", "d": "floats_scale_freely"},
        "After L layers the mean square is 2^L, a typical value 2^(L/2): it passes 2^128 at "
        "L = 256. Its square, the mean square itself, overflows already at L = 128.",
    ),
    Item(
        "a_generator_per_call",
        "An initializer makes a new generator, PCG32(seed), at each call; a network calls it "
        "for each of its 20 layers, all of one shape. What happens?",
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


def save_answers(folder, sitting: str, answers: dict[str, str], submit: bool = False) -> Path:
    """Write one sitting's answers into folder/inventory.json, keeping the other sitting's,
    and with `submit` mark the sitting submitted. The file is replaced whole (written beside
    it, then renamed), so a kernel stopped halfway leaves the old file or the new one, never
    half of one; an unreadable file is kept as inventory.json.broken, not lost.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> path = save_answers(folder, "pre", {"variance_of_a_sum": "b"})
    >>> json.loads(path.read_text())
    {'pre': {'variance_of_a_sum': 'b'}}
    """
    folder = Path(instance("folder", folder, (str, os.PathLike), "a folder"))
    sitting = one_of("sitting", sitting, SITTINGS)
    checked = _checked_sitting(sitting, answers, partial=True)
    path = folder / FILE
    saved, submitted = {}, set()
    if path.exists():
        try:
            saved, submitted = _read(path, partial=True)
        except InventoryError:
            path.replace(folder / BROKEN)
    saved[sitting] = checked
    if submit:
        submitted.add(sitting)
    data = {s: saved[s] for s in SITTINGS if s in saved}
    if submitted:
        data[SUBMITTED] = [s for s in SITTINGS if s in submitted]
    _replace(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path


def _replace(path: Path, text: str) -> None:
    """path's text becomes `text` in one step: written to a file beside it, then renamed."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


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


def _read(path: Path, partial: bool) -> tuple[dict[str, dict[str, str]], set[str]]:
    """The sittings in the file, each checked, and the set of those submitted."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise InventoryError(f"{path.name} cannot be read as JSON ({error})") from None
    if not isinstance(data, dict) or not set(data) <= {*SITTINGS, SUBMITTED}:
        raise InventoryError(f"{path.name} is not {{'pre': ..., 'post': ...}}")
    submitted = data.get(SUBMITTED, [])
    if not isinstance(submitted, list) or not set(submitted) <= set(data) & set(SITTINGS):
        raise InventoryError(f"{path.name}: 'submitted' must list sittings it holds")
    sittings = {s: _checked_sitting(s, data[s], partial) for s in SITTINGS if s in data}
    return sittings, set(submitted)


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
    path = Path(instance("path", path, (str, os.PathLike), "an inventory.json file"))
    return _read(path, partial)[0]


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


# --- the two sittings, in a notebook -----------------------------------------------------------

TITLE = {"pre": "before notebook 01", "post": "after notebook 04"}
SUBMIT_LABEL = {"pre": "Submit my answers", "post": "Submit and see the answers"}


def sitting(name: str, folder=None) -> Sitting:
    """One sitting of the inventory, "pre" (before 01) or "post" (after 04), its answers kept
    in folder/inventory.json (folder: $TINYINIT_INVENTORY, else the folder the notebook runs
    in). As a cell's last expression it shows each item with a radio button per choice, a
    submit button and a status line; `answer(item_id, choice)` and `submit()` do the same in
    code.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> inventory = sitting("pre", folder)
    >>> inventory.answer("variance_of_a_sum", "b")
    '1 of 13 answered, each saved in inventory.json as you choose. Submit when all 13 are \
answered: no answer is shown in this sitting.'
    >>> sitting("pre", folder).answers   # another kernel, or this one restarted
    {'variance_of_a_sum': 'b'}
    """
    return Sitting(name, folder)


class Sitting:
    """The items of one sitting, the student's choices, and what the sitting shows.

    Every choice is written to inventory.json at once (`save_answers`), so the answers outlive
    the kernel; `submit()` needs all items answered and closes the sitting. The first sitting
    ("pre") shows no answer, ever, and closes too when the second one has begun, so that
    nothing seen in the second can change it. The second ("post") shows, once submitted, the
    right choice and its explanation under each item, and both sittings' scores.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> post = Sitting("post", folder)
    >>> for item in ITEMS:
    ...     _ = post.answer(item.id, item.answer)
    >>> print(post.submit())
    Submitted: 13 of 13 right. Before notebook 01 you did not sit the inventory here. The \
answer and its explanation are under each question.
    >>> post.answer("the_relu_gain", "b")
    'This sitting is closed: your answers were submitted. Nothing was changed.'
    """

    def __init__(self, name: str, folder=None):
        self.name = one_of("sitting", name, SITTINGS)
        if folder is None:
            folder = os.environ.get(FOLDER_VARIABLE) or "."
        self.folder = Path(instance("folder", folder, (str, os.PathLike), "a folder"))
        self.path = self.folder / FILE
        self.problem = ""  # why the file on disk could not be read, if it could not
        self._saved: dict[str, dict[str, str]] = {}
        self._submitted: set[str] = set()
        self._read_file()
        self.answers: dict[str, str] = dict(self._saved.get(self.name, {}))
        self._radios: dict = {}
        self._feedback: dict = {}
        self._button = self._status = None
        self._updating = False
        self.widget = self._build_widget()

    # --- what the file says ---

    def _read_file(self) -> None:
        if not self.path.exists():
            self._saved, self._submitted = {}, set()
            return
        try:
            self._saved, self._submitted = _read(self.path, partial=True)
        except InventoryError as error:
            self._saved, self._submitted = {}, set()
            self.problem = (
                f"{FILE} could not be read ({error}). These questions start unanswered; your "
                f"first answer keeps that file as {BROKEN}."
            )

    @property
    def submitted(self) -> bool:
        """Whether this sitting was submitted (in this kernel or an earlier one)."""
        return self.name in self._submitted

    @property
    def closed(self) -> bool:
        """Whether its answers can no longer change: submitted, or (the first sitting) the
        second sitting has begun."""
        return self.submitted or (self.name == "pre" and "post" in self._saved)

    @property
    def revealed(self) -> bool:
        """Whether the answers are shown: the second sitting, once submitted."""
        return self.name == "post" and self.submitted

    # --- answering ---

    def answer(self, item_id: str, choice: str) -> str:
        """Choose `choice` (a letter) for the item `item_id`, save it, and say where the
        sitting stands. A closed sitting changes nothing and says so."""
        item = _BY_ID[one_of("item_id", item_id, list(_BY_ID))]
        choice = one_of("choice", choice, list(item.choices))
        self._read_file()  # another notebook may have begun the second sitting since
        if self.closed:
            self._update()
            return self._closed_text() + " Nothing was changed."
        self._save({**self.answers, item.id: choice})
        return self.status()

    def submit(self) -> str:
        """Close the sitting when every item is answered (the second one then shows the
        answers); otherwise say which items are left."""
        self._read_file()
        if self.closed:
            self._update()
            return self._closed_text()
        missing = [k for k, item in enumerate(ITEMS, 1) if item.id not in self.answers]
        if missing:
            return (
                f"Not submitted: question{'s' * (len(missing) > 1)} "
                f"{', '.join(map(str, missing))} {'are' if len(missing) > 1 else 'is'} "
                "unanswered. A sitting with a question left out is not counted."
            )
        self._save(self.answers, submit=True)
        return self.status()

    def _save(self, answers: dict[str, str], submit: bool = False) -> None:
        save_answers(self.folder, self.name, answers, submit=submit)
        self.answers = dict(answers)
        if self.problem:
            self.problem = f"The unreadable {FILE} was kept as {BROKEN}."
        self._read_file()
        self._update()

    # --- what it shows ---

    def status(self) -> str:
        """Where the sitting stands, in a sentence or three."""
        n, total = len(self.answers), len(ITEMS)
        lines = [self.problem] if self.problem else []
        if self.revealed:
            lines.append(self._scores())
        elif self.closed:
            lines.append(self._closed_text())
        else:
            lines.append(
                f"{n} of {total} answered, each saved in {FILE} as you choose. Submit when all "
                f"{total} are answered: "
                + (
                    "no answer is shown in this sitting."
                    if self.name == "pre"
                    else "then each question shows its answer and why."
                )
            )
            pre = self._saved.get("pre")
            if self.name == "post" and not n and pre and "pre" not in self._submitted:
                # said only where a first sitting is open: never in a stored run, which has none
                lines.append(
                    f"Your first answer here closes the first sitting (before notebook 01) as "
                    f"it is, {len(pre)} of {len(ITEMS)} answered."
                )
        return " ".join(lines)

    def _closed_text(self) -> str:
        if self.submitted:
            return "This sitting is closed: your answers were submitted."
        return (
            f"This sitting is closed: the second one (after notebook 04) has begun. "
            f"{len(self.answers)} of {len(ITEMS)} answered here."
        )

    def _scores(self) -> str:
        now = round(score(self.answers) * len(ITEMS) / 100)
        said = f"Submitted: {now} of {len(ITEMS)} right."
        pre = self._saved.get("pre")
        if not pre:
            before = " Before notebook 01 you did not sit the inventory here."
        else:
            right = round(score(pre) * len(ITEMS) / 100)
            before = f" Before notebook 01: {right} of {len(ITEMS)}."
            if len(pre) == len(ITEMS) and right < len(ITEMS):
                gain = hake_gain(score(pre), score(self.answers))
                before += f" You gained {gain:.0%} of what you could (Hake's g = {gain:.2f})."
        return said + before + " The answer and its explanation are under each question."

    def _feedback_text(self, item: Item) -> str:
        if not self.revealed:
            return ""
        chosen = self.answers.get(item.id)
        right = f"({item.answer}) {item.choices[item.answer]}"
        verdict = "✓ Right." if chosen == item.answer else f"✗ You chose ({chosen}); it is {right}."
        return f"{verdict} {item.explanation}"

    def text(self) -> str:
        """The sitting as plain text: each item, its choices (the chosen one marked), and
        once revealed its answer and why; then the status."""
        lines = [f"Concept inventory, {TITLE[self.name]}."]
        for k, item in enumerate(ITEMS, 1):
            lines.append(f"{k}. [{item.id}] {item.stem}")
            for letter, choice in item.choices.items():
                mark = "(•)" if self.answers.get(item.id) == letter else "( )"
                lines.append(f"   {mark} ({letter}) {choice}")
            if self.revealed:
                lines.append(f"   {self._feedback_text(item)}")
        lines.append(self.status())
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()

    def _static_html(self) -> str:
        items = []
        for item in ITEMS:
            choices = "".join(
                f"<li>{'☒' if self.answers.get(item.id) == letter else '☐'} ({letter}) "
                f"{html.escape(text)}</li>"
                for letter, text in item.choices.items()
            )
            feedback = html.escape(self._feedback_text(item))
            items.append(
                f'<li><p>{html.escape(item.stem)}</p><ul style="list-style: none">{choices}</ul>'
                + (f"<p>{feedback}</p>" if feedback else "")
                + "</li>"
            )
        return (
            f'<div class="tinyinit-inventory"><ol>{"".join(items)}</ol>'
            f'<p role="status">{html.escape(self.status())}</p></div>'
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": self.text(), "text/html": self._static_html()}
        if self.widget is not None:
            shown = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
            bundle.update({k: v for k, v in shown.items() if k != "text/plain"})
        return bundle

    # --- the widget: a radio button per choice, keyboard-operable ---

    def _build_widget(self):
        try:
            import ipywidgets as widgets

            from ..views.a11y import Accessible  # each question one radio group, named
        except ImportError:  # a plain Python without widgets: answer() and text() still work
            return None
        rows = []
        for k, item in enumerate(ITEMS, 1):
            stem = widgets.HTML(
                f"<b>{k}.</b> {html.escape(item.stem)} <small>(<code>{item.id}</code>)</small>"
            )
            radio = widgets.RadioButtons(
                options=[(f"({letter}) {text}", letter) for letter, text in item.choices.items()],
                value=None,
                tooltip=f"Question {k}: your answer",
                layout=widgets.Layout(width="auto", max_width="100%"),
            )
            radio.observe(lambda change, item=item: self._chosen(item, change.new), names="value")
            feedback = widgets.HTML("")
            self._radios[item.id], self._feedback[item.id] = radio, feedback
            rows.append(widgets.VBox([stem, radio, feedback]))
        self._button = widgets.Button(
            description=SUBMIT_LABEL[self.name],
            tooltip="Submit once every question is answered",
            layout=widgets.Layout(width="auto"),
        )
        self._button.on_click(lambda _: self._show(self.submit()))
        self._status = widgets.HTML("")
        self._status.add_class("tinyinit-status")
        box = widgets.VBox([Accessible(), *rows, self._button, self._status])
        box.add_class("tinyinit-inventory")
        self._update()
        return box

    def _chosen(self, item: Item, choice) -> None:
        if self._updating or choice is None:
            return
        try:
            self._show(self.answer(item.id, choice))
        except OSError as error:  # a folder it may not write: the choice is not kept
            self._update()
            self._show(f"Not saved: {error}. Your answers are kept only in {FILE}.")

    def _show(self, message: str) -> None:
        if self._status is not None:
            self._status.value = f'<p role="status">{html.escape(message)}</p>'

    def _update(self) -> None:
        """Bring the widget in step with the answers: each radio's choice, closed or not,
        and (once revealed) the answer under each item."""
        if self._button is None:  # no widgets here
            return
        self._updating = True
        try:
            for item in ITEMS:
                radio = self._radios[item.id]
                radio.value = self.answers.get(item.id)
                radio.disabled = self.closed
                feedback = self._feedback_text(item)
                self._feedback[item.id].value = (
                    f"<p>{html.escape(feedback)}</p>" if feedback else ""
                )
            self._button.disabled = self.closed
        finally:
            self._updating = False
        self._show(self.status())

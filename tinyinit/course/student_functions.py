"""Your my_init.py as the notebooks run it: your functions where written, tinyinit's where not.

Module M07.3 is a build module: the seven functions you write in `my_init.py` are the
engine of the core path's experiments. `yours(check_init("my_init.py", tests=[...]))` takes
the checker's report (`tinyinit.course.checker`, your file in a process of its own): which of the
card's functions you have written, and what the card's tests say of them; then it imports
your file here and hands out each function: yours once it is written (it no longer raises
NotImplementedError), tinyinit's while it is a stub, missing, refused or stuck. So every cell
runs from the first day, and what a plot shows is what your code draws, right or wrong.
Printed or shown in a notebook, it says in one line whose functions drew the plot, with
the checker's verdict beside it.

>>> import pathlib, tempfile
>>> from tinyinit.course.checker import check_init
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "my_init.py").write_text(
...     "def fans(shape):\\n    return shape[1], shape[0]\\n"
...     "def calculate_gain(nonlinearity, param=None):\\n    raise NotImplementedError()\\n"
... )
>>> mine = yours(check_init(folder / "my_init.py", tests=["test_fans_and_gains_match_torch"]))
>>> mine.fans((4, 3)), mine.is_yours("fans"), mine.is_yours("calculate_gain")
((3, 4), True, False)
>>> print(mine.line("fans", "calculate_gain"))
Drawn with your fans, and tinyinit's calculate_gain (yours is not written yet).
"""

from __future__ import annotations

import html
import importlib.util
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..core import init as tinyinits
from ..core.arguments import KindError, instance, is_number, number, one_of, shown
from ..core.pcg32 import PCG32
from .checker import BORROWED, MISSING, STUB, UNFINISHED, YOURS, Report
from .student_process import FUNCTIONS

__all__ = ["Yours", "yours"]

# Why a function of tinyinit's stands in for yours, in the words of the line above a plot.
WHY_NOT = {
    STUB: "yours is not written yet",
    MISSING: "my_init.py has none",
    BORROWED: "yours is tinyinit's own, refused by the checker",
    UNFINISHED: "yours did not finish when the checker called it",
}


@dataclass
class Yours:
    """The card's seven functions as the notebooks call them (`yours` makes one).

    report is the checker's verdict on your file; status[name] what the checker found
    each function to be (checker.YOURS, STUB, MISSING, BORROWED, UNFINISHED); problem,
    why your file could not be used at all (then every function is tinyinit's).

    >>> from tinyinit.course.checker import Report
    >>> nothing = yours(Report("my_init.py", problem="SyntaxError at my_init.py:3"))
    >>> nothing.is_yours("fans"), nothing.fans((4, 3))   # tinyinit's stands in
    (False, (3, 4))
    >>> print(nothing.line("fans"))
    Drawn with tinyinit's functions: your file could not be run by the checker (see its report)
    """

    path: Path
    report: Report
    functions: dict[str, Callable] = field(repr=False)
    status: dict[str, str]
    problem: str | None = None

    def __getattr__(self, name: str):
        if name in FUNCTIONS:
            return self.functions[name]
        raise AttributeError(name)

    def is_yours(self, name: str) -> bool:
        """Whether `name` runs your code (True) or tinyinit's (False)."""
        one_of("name", name, FUNCTIONS)
        return self.status[name] == YOURS and self.problem is None

    def line(self, *names: str, calls: Sequence[tuple] = ()) -> str:
        """One sentence: whose of these functions draw what follows, and why tinyinit's; with
        `calls` (the experiment's own calls, see `differences`), where yours differ from the
        card's and by how much, or that they draw the card's numbers bit for bit.

        >>> from tinyinit.course.checker import Report
        >>> mine = yours(Report("my_init.py", problem="SyntaxError"))
        >>> calls = [("kaiming_normal", (128, 256), "fan_in", "relu")]
        >>> print(mine.line("kaiming_normal", calls=calls))
        Drawn with tinyinit's functions: your file could not be run by the checker (see its report)
        """
        for name in names:
            one_of("name", name, FUNCTIONS)
        if self.problem is not None:
            return f"Drawn with tinyinit's functions: {self.problem}"
        mine = [n for n in names if self.is_yours(n)]
        theirs = [f"{n} ({WHY_NOT[self.status[n]]})" for n in names if not self.is_yours(n)]
        parts = []
        if mine:
            parts.append("your " + ", ".join(mine))
        if theirs:
            parts.append("tinyinit's " + ", ".join(theirs))
        said = "Drawn with " + ", and ".join(parts) + "."
        if not calls or not mine:
            return said
        found = self.differences(*calls)
        if not found:
            return f"{said} Here yours give the card's numbers, bit for bit."
        return f"{said} Where yours differ from the card's: {'; '.join(found)}."

    def differences(self, *calls: tuple) -> list[str]:
        """Where your functions give other numbers than the card's (tinyinit's), on the calls
        an experiment makes: each call is (name, *arguments), an initializer's without its rng
        (it is called with PCG32(1), yours and the card's alike). Each difference is one
        phrase, by how much and where: "your kaiming_normal's std is 1.41 of the card's at
        256 -> 128"; none when yours give the card's numbers bit for bit.

        >>> import pathlib, tempfile
        >>> from tinyinit.course.checker import check_init
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "my_init.py"
        >>> _ = path.write_text(
        ...     "import math\\ndef scaled_residual_std(base_std, n_layers):\\n"
        ...     "    return base_std / math.sqrt(n_layers)\\n"
        ... )
        >>> mine = yours(check_init(path, tests=["test_scaled_residual_keeps_the_stream_bounded"]))
        >>> mine.differences(("scaled_residual_std", 1.0, 12))
        ["your scaled_residual_std(1, 12) is 1.414 times the card's (0.2887, not 0.2041)"]
        """
        found = []
        for call in calls:
            if not isinstance(call, tuple) or not call:
                raise KindError(f"calls must be tuples (name, *arguments), got {shown(call)}")
            name, args = one_of("name", call[0], FUNCTIONS), call[1:]
            if not self.is_yours(name):
                continue
            difference = _difference(name, self.functions[name], getattr(tinyinits, name), args)
            if difference is not None and difference not in found:
                found.append(difference)
        return found

    def verdicts(self) -> str:
        """The checker's verdict on the tests this was made with, one short line."""
        if self.report.problem is not None:
            return f"Card tests: none ran ({self.report.problem.splitlines()[0]})"
        results = [f"{'✓' if r.passed else '✗'} {r.test} {r.status}" for r in self.report.results]
        pitfalls = {p["id"]: p["title"] for r in self.report.results for p in r.pitfalls}
        named = "".join(f"; pitfall {k}: {v}" for k, v in pitfalls.items())
        return "Card tests on your file: " + ", ".join(results) + named

    def __str__(self) -> str:
        return f"{self.line(*FUNCTIONS)}\n{self.verdicts()}"

    def _repr_html_(self) -> str:
        e = html.escape
        ok = self.report.ok
        colour = "#1a7f37" if ok else "#b3261e"
        return (
            f"<div><p>{e(self.line(*FUNCTIONS))}</p>"
            f'<p style="color:{colour}">{e(self.verdicts())}</p></div>'
        )

    def same_bits(self, *names: str) -> bool:
        """Whether your functions `names` draw what tinyinit's draw, bit for bit.

        Each is called as the notebooks call it, on a square, a non-square and a 1-D
        (normal_init) weight, from PCG32(1); a function of tinyinit's standing in for yours
        is the same by definition.
        """
        for name in names:
            one_of("name", name, FUNCTIONS)
        for name in names:
            for args in SAME_BITS_CALLS.get(name, ()):
                with np.errstate(all="ignore"):
                    mine = self.functions[name](*args, PCG32(1))
                    theirs = getattr(tinyinits, name)(*args, PCG32(1))
                if not (
                    isinstance(mine, np.ndarray)
                    and mine.dtype == theirs.dtype
                    and mine.shape == theirs.shape
                    and mine.tobytes() == theirs.tobytes()
                ):
                    return False
        return True

    def draw(
        self, initializer: str, *, gain: float = 1.0, std: float = 0.02, activation: str = "relu"
    ) -> Callable:
        """draw(shape, rng): one of the explorer's initializers as your functions make it,
        for `tinyinit.physics.propagation.simulate(..., draw=)`.

        "xavier_uniform" and "xavier_normal" take `gain`; "kaiming_normal" and
        "kaiming_normal_fan_out" are your kaiming_normal with that fan_mode for `activation` (its
        gain is your calculate_gain's); "normal_init" is your normal_init with `std`.
        """
        one_of("initializer", initializer, CARD_CALLS)
        gain, std = number("gain", gain, minimum=0), number("std", std, minimum=0)
        instance("activation", activation, str, "a nonlinearity's name for calculate_gain")
        return CARD_CALLS[initializer](self, gain, std, activation)


# The card's functions that draw weights from an rng (their last argument).
DRAWS = ("xavier_uniform", "xavier_normal", "kaiming_normal", "normal_init")


def _where(name: str, args: tuple) -> str:
    """Where a call is made, in the words of a layer: "256 -> 128" for a (128, 256) weight."""
    shape, rest = tuple(args[0]), args[1:]
    at = f"{shape[1]} -> {shape[0]}" if len(shape) == 2 else f"shape {shape}"
    if name in ("xavier_uniform", "xavier_normal") and rest and rest[0] != 1:
        at += f", gain {rest[0]:.3g}"
    if name == "kaiming_normal":
        at += f" ({', '.join(map(str, rest))})"
    return at


def _difference(name: str, mine: Callable, card: Callable, args: tuple) -> str | None:
    """One phrase saying how your `name` differs from the card's on `args`, or None."""
    call = f"{name}({', '.join(f'{a:g}' if isinstance(a, float) else repr(a) for a in args)})"
    with np.errstate(all="ignore"):
        expected = card(*args, PCG32(1)) if name in DRAWS else card(*args)
        try:
            got = mine(*args, PCG32(1)) if name in DRAWS else mine(*args)
        except Exception as error:  # noqa: BLE001 - your code may raise anything
            return f"your {call} raised {type(error).__name__}: {error}"
        if name not in DRAWS:
            if got == expected:
                return None
            if is_number(got) and is_number(expected) and expected and got:
                return (
                    f"your {call} is {got / expected:.4g} times the card's "
                    f"({got:.4g}, not {expected:.4g})"
                )
            return f"your {call} is {got!r}, the card's {expected!r}"
        where = _where(name, args)
        if not isinstance(got, np.ndarray) or got.shape != expected.shape:
            return f"your {name} returns {shown(got)} at {where}, not a {expected.shape} array"
        if got.dtype == expected.dtype and got.tobytes() == expected.tobytes():
            return None
        mine, card = np.float64(got), np.float64(expected)
        ratio = math.sqrt(np.sum(mine**2) / np.sum(card**2))
        if not math.isfinite(ratio):
            return f"your {name} draws weights that are not finite at {where}"
        if np.allclose(mine, ratio * card, rtol=1e-4, atol=0):  # the card's draws, scaled
            return f"your {name}'s std is {ratio:.3g} of the card's at {where}"
        if abs(ratio - 1) > 4 / math.sqrt(2 * card.size):  # beyond 4 standard errors
            return (
                f"your {name} draws other weights, their std about {ratio:.3g} of the card's, "
                f"at {where}"
            )
        return (
            f"your {name} draws other weights than the card's at {where}, with its std (in "
            "another order, or from another generator?)"
        )


# How same_bits calls each initializer (before rng): the notebooks' shapes and settings.
SAME_BITS_CALLS = {
    "xavier_uniform": [((256, 256), 1.0), ((10, 64), 1.0)],
    "xavier_normal": [((256, 256), 1.0), ((10, 64), 5 / 3)],
    "kaiming_normal": [((256, 256), "fan_in", "relu"), ((10, 64), "fan_in", "relu")],
    "normal_init": [((64, 64), 1.0), ((7,), 0.02)],
}

# The explorer's initializers (tinyinit.core.init.INITIALIZERS), each as a call of the card's
# functions.
CARD_CALLS: dict[str, Callable[[Yours, float, float, str], Callable]] = {
    "xavier_uniform": lambda my, gain, std, act: lambda s, rng: my.xavier_uniform(s, gain, rng),
    "xavier_normal": lambda my, gain, std, act: lambda s, rng: my.xavier_normal(s, gain, rng),
    "kaiming_normal": lambda my, gain, std, act: (
        lambda s, rng: my.kaiming_normal(s, "fan_in", act, rng)
    ),
    "kaiming_normal_fan_out": lambda my, gain, std, act: (
        lambda s, rng: my.kaiming_normal(s, "fan_out", act, rng)
    ),
    "normal_init": lambda my, gain, std, act: lambda s, rng: my.normal_init(s, std, rng),
}


def _import(path: Path):
    """Your file, imported anew in this process (a cell run again sees your latest edit)."""
    spec = importlib.util.spec_from_file_location("my_init", path)
    module = importlib.util.module_from_spec(spec)
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # as `import my_init` finds it, and its neighbours
    spec.loader.exec_module(module)
    return module


def yours(report: Report) -> Yours:
    """Your functions where the checker found them written, tinyinit's elsewhere.

    report: check_init's verdict on your file (`check_init("my_init.py", tests=[...])`),
    whose tests are the ones that stand beside what the notebook draws.

    >>> import pathlib, tempfile
    >>> from tinyinit import PCG32
    >>> from tinyinit.course.checker import check_init
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "my_init.py"
    >>> stub = "def normal_init(shape, std, rng):\\n    raise NotImplementedError()\\n"
    >>> _ = path.write_text(stub)
    >>> mine = yours(check_init(path, tests=["test_shapes_and_dtype"]))
    >>> mine.status["normal_init"], mine.normal_init((2,), 0.5, PCG32(0)).dtype
    ('not written yet', dtype('float32'))
    """
    instance("report", report, Report, "check_init's Report on your file")
    file = Path(report.path)
    status = {name: report.functions.get(name, MISSING) for name in FUNCTIONS}
    problem = report.problem and "your file could not be run by the checker (see its report)"
    module = None
    if problem is None and any(s == YOURS for s in status.values()):
        try:
            module = _import(file)
        except Exception as error:  # noqa: BLE001 - your file, run here, may raise anything
            problem = f"importing your file raised {type(error).__name__}: {error}"
    use_yours = module is not None and problem is None
    functions = {
        name: getattr(module, name)
        if use_yours and status[name] == YOURS
        else getattr(tinyinits, name)
        for name in FUNCTIONS
    }
    return Yours(file, report, functions, status, problem)

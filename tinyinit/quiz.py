"""Predict, then run; and checks that speak to a student.

Two small tools shared by the notebooks' exercises:

* `predict(question, options, answer, measured)`: a multiple-choice question shown just before
  a key result. The reader clicks the option they expect; the widget records the choice, says
  whether it was right, and reveals the measured answer (text the notebook computed and passed
  in). In a static page (stored widget state, no kernel) the measured answer sits behind a
  "show" fold; where widgets cannot render, a plain-text version of the question shows instead.
* `Check` and `check`: the cell after an exercise runs its test inside `with Check("Exercise 1"):`
  and states each condition with `check(condition, hint)`. A failed condition stops with
  "not yet" and its hint, no traceback; an answer not written yet (a `NameError`, or the
  `NotImplementedError` of an unsolved exercise) says which name is missing; a correct answer
  prints a tick.

>>> q = predict("Doubling n doubles Var(z)?", ["yes", "no"], answer="yes", measured="ratio 2.00")
>>> q.choose("a")
'Your prediction: (a) yes. Right. Measured: ratio 2.00'
>>> with Check("Exercise 0"):
...     check(2 + 2 == 4, "count again")
✓ Exercise 0: correct.
"""

from __future__ import annotations

import html
import math
import string
from collections.abc import Mapping, Sequence
from fractions import Fraction
from numbers import Real

__all__ = ["Check", "NotYet", "Prediction", "Unanswered", "check", "check_value", "predict"]

LETTERS = string.ascii_lowercase


# --- predict, then run ---------------------------------------------------------------------


class Prediction:
    """A multiple-choice "predict, then run" question: records a choice, then reveals the answer.

    `options` are the choices, shown as (a), (b), ...; `answer` is the right one (an option's
    text, computed by the notebook where it depends on a measurement); `measured` is what the
    notebook measured, revealed once a choice is made. `choice` is the option chosen (None
    before). Display it as the last expression of a cell: a widget in JupyterLab and Voila,
    a fold in a static page, plain text elsewhere.

    >>> q = Prediction("Is 7 prime?", ["yes", "no"], answer="yes", measured="7 = 1 x 7 only")
    >>> print(q.text())
    Predict, then run: Is 7 prime?
      (a) yes
      (b) no
    >>> q.choose("no")
    'Your prediction: (b) no. Not quite: the answer is (a) yes. Measured: 7 = 1 x 7 only'
    >>> q.choice, q.correct
    ('no', False)
    """

    def __init__(self, question: str, options: Sequence[str], answer: str, measured: str):
        options = list(options)
        if len(options) < 2 or len(options) > len(LETTERS):
            raise ValueError(
                f"options: got {len(options)} options, expected between 2 and {len(LETTERS)}"
            )
        if len(set(options)) != len(options):
            raise ValueError(f"options: got {options!r}, expected distinct texts")
        if answer not in options:
            raise ValueError(f"answer: got {answer!r}, expected one of the options {options!r}")
        self.question = question
        self.options = options
        self.answer = answer
        self.measured = measured
        self.choice: str | None = None
        self._buttons: list = []
        self._reveal = None
        self.widget = self._build_widget()

    def label(self, option: str) -> str:
        """The option with its letter: "(b) no"."""
        return f"({LETTERS[self.options.index(option)]}) {option}"

    @property
    def correct(self) -> bool | None:
        """Whether the choice was the answer; None before a choice."""
        return None if self.choice is None else self.choice == self.answer

    def choose(self, option: str) -> str:
        """Record a choice (an option's text or its letter) and return the verdict."""
        if option not in self.options:
            letters = list(LETTERS[: len(self.options)])
            if option not in letters:
                raise ValueError(
                    f"option: got {option!r}, expected one of {self.options!r} or {letters!r}"
                )
            option = self.options[letters.index(option)]
        self.choice = option
        self._show_choice()
        return self.verdict()

    def verdict(self) -> str:
        """What the reader sees after choosing: right or not, then the measured answer."""
        if self.choice is None:
            return f"Choose an option first. Then: {self.reveal_text()}"
        right = self.label(self.answer)
        judged = "Right." if self.correct else f"Not quite: the answer is {right}."
        return f"Your prediction: {self.label(self.choice)}. {judged} Measured: {self.measured}"

    def reveal_text(self) -> str:
        """The answer and the measurement, as a static page reveals them."""
        return f"The answer is {self.label(self.answer)}. Measured: {self.measured}"

    def text(self) -> str:
        """The question as plain text, for places where widgets do not render."""
        lines = [f"Predict, then run: {self.question}"]
        lines += [f"  {self.label(option)}" for option in self.options]
        return "\n".join(lines)

    # The widget: a thin layer over the state above.

    def _fold_html(self) -> str:
        # <details> opens without a kernel: a static page can still hide the answer until asked.
        return (
            "<details><summary>Chosen? Show the measured answer</summary>"
            f"{_html(self.reveal_text())}</details>"
        )

    def _build_widget(self):
        try:
            import ipywidgets as widgets
        except ImportError:  # a plain Python without widgets: the text form still works
            return None
        question = widgets.HTML(
            f"<b>Predict, then run.</b> {_html(self.question)}",
            tooltip="Choose what you expect before you run the cells below",
        )
        self._buttons = [
            widgets.Button(
                description=self.label(option),
                tooltip=f"My prediction: {option}",
                layout=widgets.Layout(width="auto", max_width="100%"),
            )
            for option in self.options
        ]
        for option, button in zip(self.options, self._buttons):
            button.on_click(lambda _, option=option: self.choose(option))
        self._reveal = widgets.HTML(
            self._fold_html(), tooltip="The measured answer: choose an option first"
        )
        box = widgets.VBox([question, widgets.VBox(self._buttons), self._reveal])
        box.add_class("tinyinit-predict")
        return box

    def _show_choice(self) -> None:
        if self.widget is None:
            return
        for option, button in zip(self.options, self._buttons):
            button.disabled = True
            if option == self.answer:
                button.button_style = "success"
            elif option == self.choice:
                button.button_style = "danger"
        self._reveal.value = _html(self.verdict())

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": self.text(), "text/html": self._static_html()}
        if self.widget is not None:
            shown = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
            bundle.update({k: v for k, v in shown.items() if k != "text/plain"})
        return bundle

    def _static_html(self) -> str:
        items = "".join(f"<li>{_html(self.label(o))}</li>" for o in self.options)
        return (
            f'<div class="tinyinit-predict"><p><b>Predict, then run.</b> {_html(self.question)}'
            f'</p><ul style="list-style: none">{items}</ul>{self._fold_html()}</div>'
        )

    def __repr__(self) -> str:
        return self.text()


def predict(question: str, options: Sequence[str], answer: str, measured: str) -> Prediction:
    """Ask the reader to predict a result before the cells that show it.

    Returns a `Prediction`; as a cell's last expression it shows the question, one button per
    option, and, once a button is clicked, whether it was right and the `measured` text.

    >>> q = predict("Var(z) for n = 4, sigma^2 = 1/4, E[x^2] = 1?", ["1", "4"], "1", "0.998")
    >>> print(q.text())
    Predict, then run: Var(z) for n = 4, sigma^2 = 1/4, E[x^2] = 1?
      (a) 1
      (b) 4
    >>> q.choose("b")
    'Your prediction: (b) 4. Not quite: the answer is (a) 1. Measured: 0.998'
    """
    return Prediction(question, options, answer, measured)


def _html(text: str) -> str:
    return html.escape(text).replace("\n", "<br>")


# --- checks that speak to a student ----------------------------------------------------------


class NotYet(AssertionError):
    """A check that failed: says what is wrong and gives a hint, without a traceback.

    It is an `AssertionError`, so graders (nbgrader, pytest) count it as a failed test.

    >>> str(NotYet("Exercise 1: not yet. Hint: count the kernel too."))
    'Exercise 1: not yet. Hint: count the kernel too.'
    """

    def _render_traceback_(self) -> list[str]:
        # IPython shows these lines instead of a traceback: the student needs the hint only.
        return [f"\x1b[1;31m✗ {self}\x1b[0m"]


class Unanswered(NotImplementedError):
    """An exercise not answered yet: its answer is undefined or still raises NotImplementedError.

    >>> issubclass(Unanswered, NotImplementedError)
    True
    """

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[1;33m… {self}\x1b[0m"]


def check(condition: object, hint: str) -> None:
    """Raise `NotYet` with the hint unless the condition holds.

    Write the condition so that every correct answer passes (compare with a tolerance, or
    against a measurement), and the hint for the mistake a student is likely to make.

    >>> check(abs(0.1 + 0.2 - 0.3) < 1e-12, "compare floats with a tolerance")
    >>> check(0.1 + 0.2 == 0.3, "compare floats with a tolerance")
    Traceback (most recent call last):
    ...
    tinyinit.quiz.NotYet: not yet. Hint: compare floats with a tolerance
    """
    if not condition:
        raise NotYet(f"not yet. Hint: {hint}")


class Check:
    """The check of one exercise: `with Check("Exercise 1"):` around its conditions.

    On leaving the block: nothing went wrong, it prints a tick; a `check` failed, its hint
    is raised again as `NotYet`, named after the exercise; a name is undefined (the answer
    cell was not run) or a `NotImplementedError` escaped (the exercise is not solved yet),
    it raises `Unanswered`; any other error computing the check (say a `TypeError` from an
    answer of the wrong kind) becomes `NotYet` with the error and the general `hint`.

    >>> with Check("Exercise 2", hint="the weight is (out, in)"):
    ...     check((2, 5)[1] == 5, "fan_in is the second dimension")
    ✓ Exercise 2: correct.
    >>> with Check("Exercise 3"):
    ...     answer_3 + 1  # the answer cell has not run
    Traceback (most recent call last):
    ...
    tinyinit.quiz.Unanswered: Exercise 3: `answer_3` is not defined yet. Write your answer \
in the cell above, run it, then run this check again.
    """

    def __init__(self, name: str, hint: str = ""):
        self.name = name
        self.hint = hint

    def __enter__(self) -> Check:
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        if kind is None:
            print(f"✓ {self.name}: correct.")
            return False
        if isinstance(error, NotYet):
            raise NotYet(f"{self.name}: {error}") from None
        if isinstance(error, NameError):
            raise Unanswered(
                f"{self.name}: `{error.name}` is not defined yet. Write your answer in the "
                "cell above, run it, then run this check again."
            ) from None
        if isinstance(error, NotImplementedError):
            raise Unanswered(
                f"{self.name}: not answered yet (NotImplementedError). Replace "
                "`raise NotImplementedError()` in the cell above by your answer, run it, "
                "then run this check again."
            ) from None
        hint = f" Hint: {self.hint}" if self.hint else ""
        if isinstance(error, AssertionError):  # a plain assert: the general hint is all we have
            detail = f" ({error})" if str(error) else ""
            raise NotYet(f"{self.name}: not yet{detail}.{hint}") from None
        if isinstance(error, Exception):
            raise NotYet(
                f"{self.name}: not yet. With your answer the check fails: "
                f"{kind.__name__}: {error}.{hint}"
            ) from error
        return False  # KeyboardInterrupt and the like go through untouched


# A hint is one text, or a pair (idea, formula): the idea on a first wrong try, both after.
Hint = str | tuple[str, str]
_wrong_tries: dict[str, int] = {}


def _hint_step(hint: Hint, tries: int) -> str:
    if isinstance(hint, str):
        return hint
    idea, formula = hint
    return idea if tries == 1 else f"{idea} {formula}"


def check_value(
    name: str,
    value: object,
    right: float | Fraction,
    *,
    tol: float = 0.0,
    wrong: Mapping[float, Hint] | None = None,
    hint: Hint = "",
    exact: bool = False,
) -> None:
    """Check one numeric answer, and answer the mistake its value shows.

    `value` passes when it is within `tol` of `right`. Otherwise the hint is that of the
    typical wrong value of `wrong` nearest to it, if one lies within `tol`, else the general
    `hint`. A hint is a text, or a pair (idea, formula): a first wrong try of `name` is told
    the idea, a second one the idea and the formula. With `exact=True`, `right` is a Fraction
    and `value` must be that Fraction: a float of the same value is told to write it exactly.
    Raises `NotYet`; inside `with Check(...)` it is named after the exercise.

    >>> check_value("var_z", 2.01, 2.0, tol=0.1)
    >>> wrong = {1.0: ("Var(x) is not E[x^2].", "E[x^2] = Var(x) + E[x]^2 = 2.")}
    >>> check_value("var_z", 1.02, 2.0, tol=0.1, wrong=wrong, hint="count again")
    Traceback (most recent call last):
    ...
    tinyinit.quiz.NotYet: not yet: `var_z` = 1.02. Hint: Var(x) is not E[x^2].
    >>> check_value("var_z", 0.98, 2.0, tol=0.1, wrong=wrong, hint="count again")
    Traceback (most recent call last):
    ...
    tinyinit.quiz.NotYet: not yet: `var_z` = 0.98. Hint: Var(x) is not E[x^2]. E[x^2] = \
Var(x) + E[x]^2 = 2.
    >>> check_value("var_z", 7.0, 2.0, tol=0.1, wrong=wrong, hint="count again")
    Traceback (most recent call last):
    ...
    tinyinit.quiz.NotYet: not yet: `var_z` = 7. Hint: count again
    >>> check_value("var_z", 2.0, 2.0, tol=0.1)   # a right answer forgets the wrong tries
    >>> check_value("answer", 1.5, Fraction(3, 2), exact=True)  # a float of the right value
    Traceback (most recent call last):
    ...
    tinyinit.quiz.NotYet: not yet: `answer` = 1.5 is a float; the answer is exact: write it \
as a Fraction, e.g. Fraction(1, 3).
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise NotYet(f"not yet: `{name}` must be a number, got {value!r}.")
    inexact = exact and not isinstance(value, Fraction | int)

    def near(w) -> bool:  # a float given for an exact answer still shows which mistake it is
        return abs(value - w) <= tol or (inexact and math.isclose(value, w, rel_tol=1e-9))

    if inexact and near(right):
        raise NotYet(
            f"not yet: `{name}` = {value!r} is a {type(value).__name__}; the answer is exact: "
            "write it as a Fraction, e.g. Fraction(1, 3)."
        )
    if not inexact and abs(value - right) <= tol:
        _wrong_tries.pop(name, None)
        return
    matches = [(abs(value - w), w) for w in (wrong or {}) if near(w)]
    chosen = wrong[min(matches)[1]] if matches else hint
    tries = _wrong_tries[name] = _wrong_tries.get(name, 0) + 1
    shown = value if isinstance(value, Fraction | int) else f"{float(value):.6g}"
    text = _hint_step(chosen, tries)
    raise NotYet(f"not yet: `{name}` = {shown}." + (f" Hint: {text}" if text else ""))

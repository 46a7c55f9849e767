"""Predict, then run; and checks that speak to a student.

Two small tools shared by the notebooks' exercises:

* `predict(question, options)` and `predict_number(question, rel_tol=...)`: a question asked
  before the cells that answer it. The reader clicks an option (or types a number); the cell
  itself holds no answer. The answer comes later, in the cell after the measurement:
  `q.reveal(answer, measured)`. That cell shows the verdict only once a prediction is made:
  run without one, it asks for it first, and opens as soon as the reader chooses. Answering
  from code works too: `q.choose("b")`, `q.enter(2.0)`. A measurement drawn with the
  student's own functions may contradict the answer (a bug in them): `holds=False` says so,
  and the verdict then calls no prediction right or wrong.
* `Check` and `check`: the cell after an exercise runs its test inside `with Check("Exercise 1"):`
  and states each condition with `check(condition, hint)`. A failed condition stops with
  "not yet" and its hint, no traceback; an answer not written yet (a `NameError`, or the
  `NotImplementedError` of an unsolved exercise) says which name is missing; a correct answer
  prints a tick.

>>> q = predict("Doubling n doubles Var(z)?", ["yes", "no"])
>>> q.choose("a")
'Your prediction: (a) yes. Run the cells below: the answer opens after the measurement.'
>>> print(q.reveal("yes", measured="ratio 2.00"))
Your prediction: (a) yes. Right. Measured: ratio 2.00
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

from ..core.arguments import KindError, flag, instance, is_number, number, one_of, shown

__all__ = [
    "Check",
    "NotYet",
    "NumberPrediction",
    "Prediction",
    "Reveal",
    "Unanswered",
    "check",
    "check_value",
    "predict",
    "predict_number",
]

LETTERS = string.ascii_lowercase
HOW_TO_ANSWER = "Choose before you run the cells below; the answer opens after the measurement."


# --- predict, then run ---------------------------------------------------------------------


class _Question:
    """What both kinds of question share: a prediction first, the answer after the run.

    Subclasses say how a prediction is recorded (`_record`), judged (`_judge`) and labelled
    (`_label`), and build their controls (`_controls`).
    """

    kind = "question"

    def __init__(self, question: str):
        if not instance("question", question, str, "the question's text").strip():
            raise ValueError(f"question must be the question's text, got {question!r}")
        self.question = question
        self.choice = None
        self.answer = None
        self.measured: str | None = None
        self.holds = True
        self._reveals: list[Reveal] = []
        self._status = None
        self.widget = self._build_widget()

    @property
    def revealed(self) -> bool:
        """Whether the cell after the measurement has given the answer."""
        return self.measured is not None

    @property
    def correct(self) -> bool | None:
        """Whether the prediction was right; None before a prediction or before the answer."""
        if self.choice is None or not self.revealed:
            return None
        return self._judge(self.choice)

    def verdict(self) -> str:
        """What the reader sees: the prediction, then (once revealed) right or not."""
        if self.choice is None:
            return (
                "Make your prediction above first (click, or answer in code: "
                f"{self._code_hint()}); the answer opens here once you have."
            )
        said = f"Your prediction: {self._label(self.choice)}."
        if not self.revealed:
            return f"{said} Run the cells below: the answer opens after the measurement."
        if not self.holds:
            return (
                f"{said} With the card's functions the answer is {self._answer_text()}, but "
                f"this run, drawn with yours, measured {self.measured}: it contradicts that "
                "answer, so it judges no prediction. The line above the plot says where your "
                "functions differ; fix my_init.py and run the cells again."
            )
        judged = "Right." if self.correct else f"Not quite: the answer is {self._answer_text()}."
        return f"{said} {judged} Measured: {self.measured}"

    def reveal(self, answer, measured: str, *, holds: bool = True) -> Reveal:
        """Give the answer, computed by the cells above; shown once a prediction is made.

        holds: whether the measurement bears the answer out. False where the run, drawn with
        the student's functions, contradicts it: the verdict then says so and calls no
        prediction right (a wrong measurement cannot confirm a right prediction).

        >>> q = predict("Kaiming, 20 ReLU layers: m_20 is about", ["2^-20", "1", "2^20"])
        >>> _ = q.choose("1")
        >>> print(q.reveal("1", "m_20 = 870813.53", holds=False))  # doctest: +NORMALIZE_WHITESPACE
        Your prediction: (b) 1. With the card's functions the answer is (b) 1, but this run, drawn
        with yours, measured m_20 = 870813.53: it contradicts that answer, so it judges no
        prediction. The line above the plot says where your functions differ; fix my_init.py and
        run the cells again.
        """
        self.answer = self._checked_answer(answer)
        self.holds = flag("holds", holds)
        self.measured = str(measured)
        shown = Reveal(self)
        self._reveals.append(shown)
        self._update()
        return shown

    def _prediction_made(self, choice) -> str:
        self.choice = choice
        self._update()
        return self.verdict()

    def _update(self) -> None:
        if self._status is not None:
            self._status.value = _html(self.verdict()) if self.choice is not None else ""
        for reveal in self._reveals:
            reveal.refresh()
        self._lock()

    def _lock(self) -> None:
        """Subclasses disable their controls once a prediction is made."""

    def text(self) -> str:
        """The question as plain text, for places where widgets do not render."""
        return "\n".join([f"Predict, then run: {self.question}", *self._text_lines()])

    def _build_widget(self):
        try:
            import ipywidgets as widgets
        except ImportError:  # a plain Python without widgets: the text form still works
            return None
        question = widgets.HTML(
            f"<b>Predict, then run.</b> {_html(self.question)}",
            tooltip="Predict before you run the cells below",
        )
        how = widgets.HTML(f"<i>{_html(HOW_TO_ANSWER)}</i>", tooltip="How to answer")
        self._status = widgets.HTML("", tooltip="Your prediction")
        self._status.add_class("tinyinit-status")
        box = widgets.VBox([question, self._controls(widgets), how, self._status])
        box.add_class("tinyinit-predict")
        return box

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": self.text(), "text/html": self._static_html()}
        if self.widget is not None:
            shown = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
            bundle.update({k: v for k, v in shown.items() if k != "text/plain"})
        return bundle

    def _static_html(self) -> str:
        items = "".join(f"<li>{_html(line.strip())}</li>" for line in self._text_lines())
        return (
            f'<div class="tinyinit-predict"><p><b>Predict, then run.</b> {_html(self.question)}'
            f'</p><ul style="list-style: none">{items}</ul></div>'
        )

    def __repr__(self) -> str:
        return self.text()


class Prediction(_Question):
    """A multiple-choice "predict, then run" question.

    `options` are the choices, shown as (a), (b), ...; no option may be the answer's
    reasoning, and the answer itself is given only later, by `reveal`. `choice` is the option
    chosen (None before). Display it as the last expression of a cell: a widget in JupyterLab
    and Voila, plain text elsewhere.

    >>> q = Prediction("Is 7 prime?", ["yes", "no"])
    >>> print(q.text())
    Predict, then run: Is 7 prime?
      (a) yes
      (b) no
    >>> q.choose("no")
    'Your prediction: (b) no. Run the cells below: the answer opens after the measurement.'
    >>> print(q.reveal("yes", "7 = 1 x 7 only"))
    Your prediction: (b) no. Not quite: the answer is (a) yes. Measured: 7 = 1 x 7 only
    >>> q.choice, q.correct
    ('no', False)
    """

    kind = "option"

    def __init__(self, question: str, options: Sequence[str]):
        accepted = f"a list of 2 to {len(LETTERS)} distinct texts"
        if not isinstance(options, (list, tuple)) or not all(isinstance(o, str) for o in options):
            raise KindError(f"options must be {accepted}, got {shown(options)}")
        if not 2 <= len(options) <= len(LETTERS) or len(set(options)) != len(options):
            raise ValueError(f"options must be {accepted}, got {shown(options)}")
        self.options = list(options)
        self._buttons: list = []
        super().__init__(question)

    def label(self, option: str) -> str:
        """The option with its letter: "(b) no"."""
        return f"({LETTERS[self.options.index(one_of('option', option, self.options))]}) {option}"

    _label = label

    def _option(self, option: str, name: str) -> str:
        letters = list(LETTERS[: len(self.options)])
        if one_of(name, option, [*self.options, *letters]) in self.options:
            return option
        return self.options[letters.index(option)]

    def choose(self, option: str) -> str:
        """Record a prediction (an option's text or its letter) and return what it shows."""
        return self._prediction_made(self._option(option, "option"))

    def _checked_answer(self, answer):
        return self._option(answer, "answer")

    def _judge(self, choice) -> bool:
        return choice == self.answer

    def _answer_text(self) -> str:
        return self.label(self.answer)

    def _code_hint(self) -> str:
        return '.choose("a")'

    def _text_lines(self) -> list[str]:
        return [f"  {self.label(option)}" for option in self.options]

    def _controls(self, widgets):
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
        return widgets.VBox(self._buttons)

    def _lock(self) -> None:
        if self.choice is None:
            return
        for option, button in zip(self.options, self._buttons):
            button.disabled = True
            if self.revealed and option == self.answer:
                button.button_style = "success"
            elif option == self.choice:
                button.button_style = "danger" if self.revealed else "info"


class NumberPrediction(_Question):
    """A "predict, then run" question whose answer is a number, typed into a box.

    A prediction within `rel_tol` of the answer (a fraction: 0.1 is 10 %), or within
    `abs_tol` of it, counts as right; the widget states the tolerance.

    >>> q = NumberPrediction("Var(z) for n = 3, sigma^2 = 2/3, E[x^2] = 1?", rel_tol=0.05)
    >>> q.enter(2)
    'Your prediction: 2. Run the cells below: the answer opens after the measurement.'
    >>> print(q.reveal(2.0, measured="Var(z) = 1.998 over 40,000 samples"))
    Your prediction: 2. Right. Measured: Var(z) = 1.998 over 40,000 samples
    >>> q.tolerance_text()
    'within 5 % of the answer counts as right'
    """

    kind = "number"

    def __init__(
        self, question: str, *, rel_tol: float | None = None, abs_tol: float | None = None
    ):
        for name, tol in (("rel_tol", rel_tol), ("abs_tol", abs_tol)):
            if tol is not None:
                number(name, tol, minimum=0)
        if rel_tol is None and abs_tol is None:
            raise ValueError("rel_tol must be a tolerance >= 0 when abs_tol is None, got None")
        self.rel_tol = rel_tol
        self.abs_tol = abs_tol
        self._entry = self._submit = None
        super().__init__(question)

    def tolerance_text(self) -> str:
        """The tolerance, as the student reads it."""
        parts = []
        if self.rel_tol is not None:
            parts.append(f"within {self.rel_tol * 100:g} % of the answer")
        if self.abs_tol is not None:
            parts.append(f"within {self.abs_tol:g} of it")
        return " or ".join(parts) + " counts as right"

    def enter(self, value: float) -> str:
        """Record a predicted number and return what it shows."""
        return self._prediction_made(number("value", value))

    def _checked_answer(self, answer):
        return number("answer", answer)

    def _judge(self, choice) -> bool:
        return math.isclose(
            choice, self.answer, rel_tol=self.rel_tol or 0.0, abs_tol=self.abs_tol or 0.0
        )

    def _label(self, choice) -> str:
        return f"{choice:.4g}"

    def _answer_text(self) -> str:
        return f"{self.answer:.4g} ({self.tolerance_text()})"

    def _code_hint(self) -> str:
        return ".enter(2.5)"

    def _text_lines(self) -> list[str]:
        return [f"  Your number ({self.tolerance_text()})"]

    def _controls(self, widgets):
        self._entry = widgets.FloatText(
            value=0.0,
            description="Your number",
            tooltip="Type the number you predict, then press Predict",
            style={"description_width": "initial"},
        )
        self._submit = widgets.Button(
            description="Predict",
            tooltip="Record my number",
            layout=widgets.Layout(width="auto", flex="0 0 auto"),  # its word whole, never "P…"
        )
        self._submit.on_click(lambda _: self.enter(self._entry.value))
        note = widgets.HTML(f"({_html(self.tolerance_text())})", tooltip="The tolerance")
        # On a phone's width the row wraps: the button goes under the entry, not inside it.
        return widgets.HBox(
            [self._entry, self._submit, note], layout=widgets.Layout(flex_flow="row wrap")
        )

    def _lock(self) -> None:
        if self.choice is not None and self._entry is not None:
            self._entry.disabled = self._submit.disabled = True


class Reveal:
    """The answer to a prediction, displayed by the cell after the measurement.

    It shows the verdict once a prediction is made, and until then asks for it (and changes
    by itself when the reader then chooses). A page without a kernel keeps the answer behind a
    fold that the reader opens on purpose.

    >>> q = predict("Does ReLU keep half the second moment?", ["yes", "no"])
    >>> shown = q.reveal("yes", "E[relu(z)^2] / E[z^2] = 0.501")
    >>> str(shown).startswith("Make your prediction above first")
    True
    >>> q.choose("yes")
    'Your prediction: (a) yes. Right. Measured: E[relu(z)^2] / E[z^2] = 0.501'
    >>> print(shown)
    Your prediction: (a) yes. Right. Measured: E[relu(z)^2] / E[z^2] = 0.501
    """

    def __init__(self, question: _Question):
        what = "a question of predict or predict_number, answered by its reveal()"
        if not instance("question", question, _Question, what).revealed:
            raise ValueError(f"question must be {what}, got {shown(question)}")
        self.question = question
        self.widget = None
        try:
            import ipywidgets as widgets
        except ImportError:
            return
        self.widget = widgets.HTML(self._html(), tooltip="The answer, once you have predicted")
        self.widget.add_class("tinyinit-reveal")

    def _fold_html(self) -> str:
        q = self.question
        answer = f"The answer is {q._answer_text()}. Measured: {q.measured}"
        if not q.holds:
            answer += " (drawn with your functions: it contradicts the answer)"
        return (
            "<details><summary>Reading without a kernel? Show the answer</summary>"
            f"{_html(answer)}</details>"
        )

    def _html(self) -> str:
        text = _html(self.question.verdict())
        if self.question.choice is None:
            return f'<p role="status">{text}</p>{self._fold_html()}'
        return f'<p role="status">{text}</p>'

    def refresh(self) -> None:
        if self.widget is not None:
            self.widget.value = self._html()

    def __str__(self) -> str:
        return self.question.verdict()

    __repr__ = __str__

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": str(self), "text/html": self._html()}
        if self.widget is not None:
            shown = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
            bundle.update({k: v for k, v in shown.items() if k != "text/plain"})
        return bundle


def predict(question: str, options: Sequence[str]) -> Prediction:
    """Ask the reader to predict a result, by choosing an option, before the cells that show it.

    Returns a `Prediction`; as a cell's last expression it shows the question and one button
    per option. The cell after the measurement gives the answer: `q.reveal(answer, measured)`.

    >>> q = predict("Var(z) for n = 4, sigma^2 = 1/4, E[x^2] = 1?", ["1", "4"])
    >>> print(q.text())
    Predict, then run: Var(z) for n = 4, sigma^2 = 1/4, E[x^2] = 1?
      (a) 1
      (b) 4
    >>> print(q.reveal("1", "0.998"))  # run before a prediction: the answer waits
    Make your prediction above first (click, or answer in code: .choose("a")); the answer \
opens here once you have.
    >>> q.choose("b")
    'Your prediction: (b) 4. Not quite: the answer is (a) 1. Measured: 0.998'
    """
    return Prediction(question, options)


def predict_number(
    question: str, *, rel_tol: float | None = None, abs_tol: float | None = None
) -> NumberPrediction:
    """Ask the reader to predict a number, typed into a box, before the cells that show it.

    The tolerance is stated beside the box; `q.reveal(answer, measured)` after the measurement.

    >>> q = predict_number("Var(relu(z)) for Var(z) = 2?", abs_tol=0.05)
    >>> q.enter(2.0)
    'Your prediction: 2. Run the cells below: the answer opens after the measurement.'
    >>> print(q.reveal(1.0, "E[relu(z)^2] = 1.003"))
    Your prediction: 2. Not quite: the answer is 1 (within 0.05 of it counts as right). \
Measured: E[relu(z)^2] = 1.003
    """
    return NumberPrediction(question, rel_tol=rel_tol, abs_tol=abs_tol)


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
    tinyinit.course.quiz.NotYet: not yet. Hint: compare floats with a tolerance
    """
    try:
        holds = bool(condition)
    except Exception:  # noqa: BLE001 - an answer with no truth value (an array) does not hold
        holds = False
    if not holds:
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
    tinyinit.course.quiz.Unanswered: Exercise 3: `answer_3` is not defined yet. Write your answer \
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
    tinyinit.course.quiz.NotYet: not yet: `var_z` = 1.02. Hint: Var(x) is not E[x^2].
    >>> check_value("var_z", 0.98, 2.0, tol=0.1, wrong=wrong, hint="count again")
    Traceback (most recent call last):
    ...
    tinyinit.course.quiz.NotYet: not yet: `var_z` = 0.98. Hint: Var(x) is not E[x^2]. E[x^2] = \
Var(x) + E[x]^2 = 2.
    >>> check_value("var_z", 7.0, 2.0, tol=0.1, wrong=wrong, hint="count again")
    Traceback (most recent call last):
    ...
    tinyinit.course.quiz.NotYet: not yet: `var_z` = 7. Hint: count again
    >>> check_value("var_z", 2.0, 2.0, tol=0.1)   # a right answer forgets the wrong tries
    >>> check_value("answer", 1.5, Fraction(3, 2), exact=True)  # a float of the right value
    Traceback (most recent call last):
    ...
    tinyinit.course.quiz.NotYet: not yet: `answer` = 1.5 is a float; the answer is exact: write it \
as a Fraction, e.g. Fraction(1, 3).
    """
    instance("name", name, str, "the answer's name")
    tol, exact = number("tol", tol, minimum=0), flag("exact", exact)
    if not (isinstance(right, Fraction) or is_number(right)) or (exact and type(right) is float):
        raise KindError(f"right must be a number (a Fraction when exact), got {shown(right)}")
    instance("wrong", wrong, (Mapping, type(None)), "None or a dict of wrong values and hints")
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
    given = value if isinstance(value, Fraction | int) else f"{float(value):.6g}"
    text = _hint_step(chosen, tries)
    raise NotYet(f"not yet: `{name}` = {given}." + (f" Hint: {text}" if text else ""))

"""`tinyinit.course.quiz`: predict-then-run questions and the checks that speak to a student."""

from __future__ import annotations

import sys
from fractions import Fraction

import nbformat
import pytest
from nbclient import NotebookClient

from tinyinit.course.quiz import (
    Check,
    NotYet,
    Prediction,
    Unanswered,
    check,
    check_value,
    predict,
    predict_number,
)

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def depth_question() -> Prediction:
    return predict(
        "After 20 ReLU layers with Xavier init, the mean square of the signal is",
        ["about the same", "about 1e-6 of the input's", "about 1e6 times larger"],
    )


ANSWER, MEASURED = "about 1e-6 of the input's", "9.5e-07 of the input's"


# --- predict -------------------------------------------------------------------------------


def test_the_question_cell_holds_no_answer_and_a_choice_waits_for_the_measurement():
    q = depth_question()
    assert q.choice is None and q.correct is None and not q.revealed
    said = q.choose("about the same")
    assert q.choice == "about the same" and q.correct is None  # not judged before the answer
    assert "9.5e-07" not in said and "Run the cells below" in said
    shown = q.reveal(ANSWER, MEASURED)
    assert q.correct is False
    assert "Not quite: the answer is (b) about 1e-6 of the input's" in str(shown)
    assert "9.5e-07" in str(shown)
    assert q.choose("b") == q.verdict() and q.correct is True  # letters work, a re-choice counts


def test_a_reveal_before_a_prediction_asks_for_it_and_opens_when_it_is_made():
    q = depth_question()
    shown = q.reveal(ANSWER, MEASURED)
    assert str(shown).startswith("Make your prediction above first")
    assert "9.5e-07" not in str(shown) and '.choose("a")' in str(shown)
    assert "<details>" in shown.widget.value  # only a deliberate click opens it without a kernel
    summary = shown.widget.value.split("</summary>")[0]
    assert "9.5e-07" not in summary
    q.widget.children[1].children[2].click()
    assert q.choice == "about 1e6 times larger"
    assert "<details>" not in shown.widget.value and "Not quite" in shown.widget.value
    assert "9.5e-07" in shown.widget.value


def test_clicking_a_button_locks_the_question_and_colours_it_once_revealed():
    q = depth_question()
    buttons = q.widget.children[1].children
    buttons[2].click()
    assert all(b.disabled for b in buttons)
    assert [b.button_style for b in buttons] == ["", "", "info"]  # chosen, not yet judged
    status = q.widget.children[3].value
    assert "Your prediction: (c)" in status and "9.5e-07" not in status
    q.reveal(ANSWER, MEASURED)
    assert [b.button_style for b in buttons] == ["", "success", "danger"]
    assert "Not quite" in q.widget.children[3].value


def test_the_question_says_how_to_answer_and_shows_as_text_where_widgets_do_not_render():
    q = depth_question()
    assert "Choose before you run the cells below" in q.widget.children[2].value
    bundle = q._repr_mimebundle_()
    assert WIDGET_VIEW in bundle
    text = bundle["text/plain"]
    assert text.splitlines()[0].startswith("Predict, then run: After 20 ReLU")
    assert "  (c) about 1e6 times larger" in text


def test_without_ipywidgets_the_text_form_still_works(monkeypatch):
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import fails
    q = depth_question()
    assert q.widget is None
    assert WIDGET_VIEW not in q._repr_mimebundle_()
    q.choose("a")
    shown = q.reveal(ANSWER, MEASURED)
    assert shown.widget is None and WIDGET_VIEW not in shown._repr_mimebundle_()
    assert str(shown).startswith("Your prediction: (a) about the same. Not quite")


def test_texts_are_escaped_in_the_widget():
    q = predict("Is a < b?", ["<yes>", "no"])
    assert "a &lt; b" in q.widget.children[0].value
    assert "&lt;yes&gt;" in q.widget.children[1].children[0].description.replace(
        "<", "&lt;"
    ).replace(">", "&gt;")
    q.choose("a")
    assert "&lt;yes&gt;" in q.reveal("<yes>", "a & b").widget.value


@pytest.mark.parametrize(
    "options, message",
    [
        (["only one"], r"options must be a list of 2 to 26 distinct texts, got \['only one'\]"),
        (["same", "same"], r"options must be .* distinct texts, got \['same', 'same'\]"),
    ],
)
def test_a_malformed_question_is_refused_with_what_is_accepted(options, message):
    with pytest.raises(ValueError, match=message):
        predict("?", options)


def test_an_unknown_choice_or_answer_is_refused_with_what_is_accepted():
    accepted = r"option must be one of .*, a, b, c, got 'z'"
    with pytest.raises(ValueError, match=accepted):
        depth_question().choose("z")
    with pytest.raises(ValueError, match=r"answer must be one of .*, got 'maybe'"):
        depth_question().reveal("maybe", "measured")
    with pytest.raises(ValueError, match=r"question must be the question's text, got ''"):
        predict("", ["a", "b"])


# --- predict_number ------------------------------------------------------------------------


def test_a_number_is_judged_within_its_stated_tolerance():
    q = predict_number("Mean square after one Kaiming ReLU layer?", rel_tol=0.1)
    assert "within 10 % of the answer counts as right" in q.text()
    q.enter(1.05)
    assert q.correct is None
    assert str(q.reveal(1.0, "0.998 over 40,000 samples")).startswith(
        "Your prediction: 1.05. Right."
    )
    q.enter(0.5)  # a second try is judged again
    assert q.correct is False and "the answer is 1 (within 10 %" in q.verdict()


def test_a_number_can_be_typed_into_the_box_and_submitted():
    q = predict_number("2^-20 in bits?", abs_tol=0.5)
    entry, submit, note = q.widget.children[1].children
    assert entry.description == "Your number" and "within 0.5 of it" in note.value
    entry.value = -20.0
    submit.click()
    assert q.choice == -20.0 and entry.disabled and submit.disabled
    shown = q.reveal(-20, "-20.7 bits measured")
    assert "Right." in shown.widget.value


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, "rel_tol must be a tolerance >= 0 when abs_tol is None, got None"),
        ({"rel_tol": -0.1}, r"rel_tol must be a finite real number >= 0, got -0.1"),
        ({"abs_tol": "1"}, r"abs_tol must be a finite real number >= 0, got '1'"),
    ],
)
def test_a_number_question_without_a_valid_tolerance_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        predict_number("?", **kwargs)


@pytest.mark.parametrize("value", ["2", float("nan"), True])
def test_a_prediction_that_is_not_a_finite_number_is_refused(value):
    with pytest.raises(ValueError, match=r"value must be a finite real number, got "):
        predict_number("?", rel_tol=0.1).enter(value)


# --- check and Check -----------------------------------------------------------------------


def test_a_correct_answer_gets_a_tick(capsys):
    with Check("Exercise 1"):
        check(True, "unused")
    assert capsys.readouterr().out == "✓ Exercise 1: correct.\n"


def test_a_failed_condition_says_not_yet_with_its_hint(capsys):
    with pytest.raises(NotYet) as raised, Check("Exercise 1", hint="general"):
        check(1 == 1, "first hint")
        check(1 == 2, "count the kernel too")
    assert str(raised.value) == "Exercise 1: not yet. Hint: count the kernel too"
    assert capsys.readouterr().out == ""  # no tick


def test_an_answer_not_yet_written_is_unanswered_and_names_it():
    with pytest.raises(Unanswered, match=r"Exercise 2: `answer_2` is not defined yet"):
        with Check("Exercise 2"):
            answer_2  # noqa: B018, F821
    with pytest.raises(Unanswered, match="not answered yet"):
        with Check("Exercise 2"):
            raise NotImplementedError()
    assert issubclass(Unanswered, NotImplementedError)


def test_an_answer_of_the_wrong_kind_fails_with_the_error_and_the_general_hint():
    with pytest.raises(NotYet) as raised, Check("Exercise 3", hint="a number, not a string"):
        "0.5" + 1  # noqa: B018
    message = str(raised.value)
    assert message.startswith("Exercise 3: not yet. With your answer the check fails: TypeError")
    assert message.endswith("Hint: a number, not a string")
    with pytest.raises(NotYet, match=r"^Exercise 3: not yet\. Hint: a number$"):
        with Check("Exercise 3", hint="a number"):
            raise AssertionError()  # a bare assert in a notebook (no pytest rewriting)


def test_an_interrupt_is_not_turned_into_a_verdict():
    with pytest.raises(KeyboardInterrupt), Check("Exercise 4"):
        raise KeyboardInterrupt


# --- in a kernel, as a student sees them -----------------------------------------------------


@pytest.fixture(scope="module")
def executed():
    cells = [
        "from tinyinit.course.quiz import Check, check, predict",
        "q = predict('2 + 2?', ['4', '5'])\nq",
        "with Check('Exercise 1'):\n    check(answer_1 == 4, 'add again')",
        "answer_1 = 5",
        "with Check('Exercise 1'):\n    check(answer_1 == 4, 'add again')",
        "answer_1 = 4",
        "with Check('Exercise 1'):\n    check(answer_1 == 4, 'add again')",
        "q.reveal('4', measured='4, exactly')",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=120, allow_errors=True, store_widget_state=True).execute()
    return nb


def test_in_a_kernel_a_failed_check_shows_its_message_without_a_traceback(executed):
    unanswered, wrong = executed.cells[2].outputs[0], executed.cells[4].outputs[0]
    assert (unanswered.output_type, unanswered.ename) == ("error", "Unanswered")
    assert (wrong.output_type, wrong.ename) == ("error", "NotYet")
    assert len(wrong.traceback) == 1
    assert "Exercise 1: not yet. Hint: add again" in wrong.traceback[0]
    assert "`answer_1` is not defined yet" in unanswered.traceback[0]
    assert executed.cells[6].outputs[0].text == "✓ Exercise 1: correct.\n"


def test_in_a_kernel_the_question_is_a_widget_whose_state_is_stored(executed):
    data = executed.cells[1].outputs[0].data
    assert data["text/plain"].startswith("Predict, then run: 2 + 2?")
    model_id = data[WIDGET_VIEW]["model_id"]
    state = executed.metadata.widgets["application/vnd.jupyter.widget-state+json"]["state"]
    assert model_id in state  # a static page renders it from the notebook alone
    reveal = executed.cells[7].outputs[0].data
    assert reveal["text/plain"].startswith("Make your prediction above first")
    assert state[reveal[WIDGET_VIEW]["model_id"]]["state"]["value"].count("4, exactly") == 1
    folded = state[reveal[WIDGET_VIEW]["model_id"]]["state"]["value"]
    assert folded.index("<details>") < folded.index("4, exactly")  # behind a fold a page opens


# --- check_value: the hint answers the mistake -----------------------------------------------

MISTAKES = {
    1.0: ("Var(x) is not E[x^2].", "E[x^2] = 1 + 1."),
    0.0078: "that is a variance used as a standard deviation",
}


def failure(name, value, **kwargs) -> str:
    with pytest.raises(NotYet) as caught:
        check_value(name, value, 2.0, tol=0.1, wrong=MISTAKES, **kwargs)
    return str(caught.value)


def test_a_right_value_passes_within_its_tolerance():
    check_value("v_right", 2.09, 2.0, tol=0.1)
    assert "not yet" in failure("v_right", 2.2, hint="general")


def test_a_typical_wrong_value_gets_its_own_hint_first_the_idea_then_the_formula():
    first = failure("v_two_steps", 1.03, hint="general")
    assert first.endswith("Hint: Var(x) is not E[x^2].")
    second = failure("v_two_steps", 0.97, hint="general")
    assert second.endswith("Hint: Var(x) is not E[x^2]. E[x^2] = 1 + 1.")
    assert "general" not in first + second


def test_the_nearest_wrong_value_is_the_one_answered_and_others_get_the_general_hint():
    assert "variance used as a standard deviation" in failure("v_near", 0.01, hint="general")
    assert failure("v_far", 30.0, hint="general").endswith("Hint: general")


def test_a_right_answer_starts_the_two_steps_again():
    failure("v_again", 1.0)
    check_value("v_again", 2.0, 2.0, tol=0.1)
    assert failure("v_again", 1.0).endswith("Var(x) is not E[x^2].")


def test_exact_means_a_fraction():
    check_value("v_exact", Fraction(6, 7), Fraction(6, 7), exact=True)
    with pytest.raises(NotYet, match="is a float; the answer is exact"):
        check_value("v_exact", 6 / 7, Fraction(6, 7), exact=True)
    with pytest.raises(NotYet, match="Hint: two thirds"):
        check_value("v_exact", Fraction(2, 3), Fraction(6, 7), exact=True, hint="two thirds")
    halved = {Fraction(3, 7): "the ReLU"}
    with pytest.raises(NotYet, match="Hint: the ReLU"):  # a float still names its mistake
        check_value("v_exact", 3 / 7, Fraction(6, 7), exact=True, wrong=halved)


def test_a_value_that_is_not_a_number_says_so():
    for value in ("2", None, True, [2.0]):
        with pytest.raises(NotYet, match="must be a number"):
            check_value("v_kind", value, 2.0, tol=0.1)


def test_inside_check_the_message_is_named_after_the_exercise():
    with pytest.raises(NotYet, match=r"^Exercise 9: not yet: `v_named` = 1\. Hint: Var\(x\)"):
        with Check("Exercise 9"):
            check_value("v_named", 1.0, 2.0, tol=0.1, wrong=MISTAKES)


def test_an_exercise_refuses_an_answer_that_is_no_number_before_it_computes_the_right_one(
    monkeypatch,
):
    import tinyinit.networks.mup
    from tinyinit import PCG32
    from tinyinit.course.exercises import zero_output_layer

    x, t = tinyinit.networks.mup.make_regression(PCG32(0, stream=1), 64, 16, 4)

    def no_training(*args, **kwargs):
        raise AssertionError("trained before looking at answer_3")

    monkeypatch.setattr(tinyinit.networks.mup, "train_regression", no_training)
    for value in ("1.12", None, True, [1.12]):
        with pytest.raises(NotYet, match=r"`answer_3` must be a number"):
            zero_output_layer([0.1931, 0.1723, 0.183], value, x, t)

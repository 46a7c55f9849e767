"""The argument checks: what each accepts, and the exact message for what it refuses."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tinyinit.core.arguments import (
    SHOWN_CHARACTERS,
    KindError,
    flag,
    float_dtype,
    function,
    generator,
    instance,
    integer,
    integers,
    number,
    one_of,
    real_array,
    shape,
    shown,
)


@pytest.mark.parametrize(
    "value, bounds, error, message",
    [
        (1.0, {}, TypeError, "n must be an integer, got 1.0"),
        (True, {}, TypeError, "n must be an integer, got True"),
        ("3", {}, TypeError, "n must be an integer, got '3'"),
        (None, {"minimum": 0}, TypeError, "n must be a non-negative integer, got None"),
        (-1, {"minimum": 0}, ValueError, "n must be a non-negative integer, got -1"),
        (0, {"minimum": 1}, ValueError, "n must be an integer >= 1, got 0"),
        (2, {"minimum": 3}, ValueError, "n must be an integer >= 3, got 2"),
        (9, {"minimum": 1, "maximum": 8}, ValueError, "n must be an integer from 1 to 8, got 9"),
        (0, {"minimum": 1, "maximum": 8}, ValueError, "n must be an integer from 1 to 8, got 0"),
    ],
)
def test_integer_refuses_a_wrong_kind_as_type_and_a_wrong_value_as_value(
    value, bounds, error, message
):
    with pytest.raises(error) as refusal:
        integer("n", value, **bounds)
    assert isinstance(refusal.value, TypeError) == (error is TypeError)
    assert str(refusal.value) == message


def test_integer_accepts_python_and_numpy_integers_at_the_minimum():
    assert integer("n", 0, minimum=0) == 0 and type(integer("n", np.int64(3))) is int
    assert integer("n", 3, minimum=3) == 3 and integer("n", -5) == -5


@pytest.mark.parametrize(
    "value, bounds, error, message",
    [
        ("0", {}, TypeError, "x must be a finite real number, got '0'"),
        (None, {}, TypeError, "x must be a finite real number, got None"),
        (True, {}, TypeError, "x must be a finite real number, got True"),
        (np.True_, {}, TypeError, "x must be a finite real number, got np.True_"),
        (1j, {}, TypeError, "x must be a finite real number, got 1j"),
        (math.nan, {}, ValueError, "x must be a finite real number, got nan"),
        (math.inf, {"minimum": 0}, ValueError, "x must be a finite real number >= 0, got inf"),
        (-0.5, {"minimum": 0}, ValueError, "x must be a finite real number >= 0, got -0.5"),
        (0, {"above": 0}, ValueError, "x must be a finite real number > 0, got 0"),
        (-1.0, {"above": -1.0}, ValueError, "x must be a finite real number > -1.0, got -1.0"),
        (2.5, {"maximum": 2}, ValueError, "x must be a finite real number <= 2, got 2.5"),
        (
            -(10**400),  # past float range: float() of it raises OverflowError
            {"minimum": 0},
            ValueError,
            "x must be a finite real number >= 0, one a float can hold, got -1" + "0" * 74 + " ...",
        ),
    ],
)
def test_number_refuses_a_wrong_kind_as_type_and_a_wrong_value_as_value(
    value, bounds, error, message
):
    with pytest.raises(error) as refusal:
        number("x", value, **bounds)
    assert isinstance(refusal.value, TypeError) == (error is TypeError)
    assert str(refusal.value) == message


def test_number_accepts_finite_reals_on_and_past_the_bounds():
    assert number("x", 0, minimum=0) == 0.0 and type(number("x", 1)) is float
    assert number("x", 1e-300, above=0) == 1e-300 and number("x", np.float32(2.5)) == 2.5
    assert number("x", -7) == -7.0


@pytest.mark.parametrize(
    "value, choices, error",
    [
        ("Conv", ("linear", "conv"), ValueError),  # a name, misspelt
        (["linear"], ("linear", "conv"), TypeError),  # a list is not a name
        (None, ("linear", "conv"), TypeError),
        (1, ("linear", "conv", None), TypeError),
        ("conv2", ("linear", "conv", None), ValueError),
    ],
)
def test_one_of_names_every_choice_in_order(value, choices, error):
    with pytest.raises(error) as refusal:
        one_of("layer", value, choices)
    assert isinstance(refusal.value, TypeError) == (error is TypeError)
    shown = ", ".join(map(str, choices))
    assert str(refusal.value) == f"layer must be one of {shown}, got {value!r}"


def test_one_of_gives_back_the_value_itself():
    choice = ("a", 1)
    assert one_of("pair", choice, [choice, ("b", 2)]) is choice
    assert one_of("fan", None, ("fan_in", None)) is None


def test_flag_takes_bools_only():
    assert flag("scaled", True) is True and flag("scaled", np.False_) is False
    for value in (1, 0, "True", None):
        with pytest.raises(TypeError) as refusal:
            flag("scaled", value)
        assert str(refusal.value) == f"scaled must be True or False, got {value!r}"


def test_shown_names_a_value_whose_repr_fails_by_its_type():
    class Broken:
        def __repr__(self):
            raise RuntimeError("no repr")

    assert shown(Broken()) == "a Broken"
    assert shown("x" * 76) == repr("x" * 76)  # 78 characters: whole
    assert shown("x" * 79) == repr("x" * 79)[:76] + " ..."  # 81: cut to 80


def test_shown_keeps_a_repr_of_exactly_the_limit_whole():
    text = "x" * (SHOWN_CHARACTERS - 2)  # its repr, quotes included, is the limit
    assert shown(text) == repr(text) and len(shown(text)) == SHOWN_CHARACTERS
    assert shown(text + "x").endswith(" ...")


def test_instance_and_function_name_the_argument():
    assert instance("w", 1.5, float, "a float") == 1.5 and function("f", len) is len
    with pytest.raises(TypeError, match=r"^w must be a float, got '1.5'$"):
        instance("w", "1.5", float, "a float")
    with pytest.raises(TypeError, match=r"^f must be a callable, got 3$"):
        function("f", 3)


@pytest.mark.parametrize(
    "value, error",
    [(None, TypeError), ("12", TypeError), ([[1], [2, 3]], TypeError), ([True], TypeError),
     ([1.0, 2.0], ValueError), ([[1.0, np.nan]], ValueError)],
)  # fmt: skip
def test_real_array_refuses_what_is_not_a_finite_matrix(value, error):
    with pytest.raises(error, match=r"^x must be a real array of 2 dimensions of finite numbers, "):
        real_array("x", value, ndim=2, finite=True)


def test_real_array_gives_float64_and_keeps_float64_arrays():
    a = np.ones((2, 2))
    assert real_array("x", a, ndim=2) is a and real_array("x", [[1]]).dtype == np.float64


@pytest.mark.parametrize(
    "value, error",
    [(3, TypeError), ("01", TypeError), ([0, 1.0], TypeError), (np.zeros(2), TypeError),
     ([0, True], TypeError), ([0, -1], ValueError)],
)  # fmt: skip
def test_integers_wants_a_sequence_of_integers(value, error):
    with pytest.raises(error, match=r"^seeds must be a sequence of integers >= 0, got "):
        integers("seeds", value, minimum=0)


def test_shown_cuts_a_long_value_and_names_an_array_by_its_shape():
    assert shown("x" * 200).endswith(" ...") and len(shown("x" * 200)) == SHOWN_CHARACTERS
    assert shown(np.zeros(3, np.float32)) == "an array of shape (3,) and dtype float32"


def test_a_wrong_kind_is_a_type_error_that_code_written_for_torch_still_catches():
    with pytest.raises(ValueError) as refusal:  # torch.nn.init raises ValueError here
        number("param", "0.2")
    assert isinstance(refusal.value, TypeError) and type(refusal.value) is KindError
    with pytest.raises(ValueError) as refusal:
        number("param", -1.0, minimum=0)
    assert not isinstance(refusal.value, TypeError)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: instance("w", 3, str, "a name"), "w must be a name, got 3"),
        (lambda: function("f", "abs"), "f must be a callable, got 'abs'"),
        (
            lambda: generator("rng", 42),
            "rng must be a generator with a uniform() method, such as tinyinit.PCG32(seed), got 42",
        ),
        (lambda: real_array("x", "12"), "x must be a real array, got '12'"),
        (lambda: real_array("x", [[1], [2, 3]]), "x must be a real array, got [[1], [2, 3]]"),
        (lambda: real_array("x", [1.0], ndim=2), "x must be a real array of 2 dimensions, "
                                                   "got an array of shape (1,) and dtype float64"),
        (lambda: real_array("x", [np.inf], finite=True), "x must be a real array of finite "
                                                          "numbers, got an array of shape (1,) and "
                                                          "dtype float64"),
        (lambda: real_array("x", None, what="a batch"), "x must be a batch, got None"),
        (lambda: real_array("x", ["a", "b"]), "x must be a real array, got ['a', 'b']"),
        (lambda: number("std", "1", above=0), "std must be a finite real number > 0, got '1'"),
        (lambda: integers("s", 3), "s must be a sequence of integers, got 3"),
        (lambda: float_dtype("dtype", "int8"), "dtype must be a float dtype (np.float64, "
                                               "np.float32), got 'int8'"),
        (lambda: float_dtype("dtype", None), "dtype must be a float dtype (np.float64, "
                                             "np.float32), got None"),
        (lambda: float_dtype("dtype", "bogus"), "dtype must be a float dtype (np.float64, "
                                                "np.float32), got 'bogus'"),
        (lambda: integers("s", np.zeros((2, 2), int)), "s must be a sequence of integers, "
                                                        "got an array of shape (2, 2) and dtype "
                                                        "int64"),
        (lambda: shape("shape", "3"), "shape must be a tuple of non-negative integers, got '3'"),
        (lambda: shape("shape", [2.0]), "shape must be a tuple of non-negative integers, got "
                                          "[2.0]"),
        (lambda: shape("shape", (2**16, 2**15 + 1)), "shape must be a tuple of non-negative "
                                                     "integers, each and their product at most "
                                                     "2147483648 (2**31), got (65536, 32769), of "
                                                     "2147549184 elements"),
        (lambda: shape("shape", (0, 2**31 + 1)), "shape must be a tuple of non-negative "
                                                 "integers, each and their product at most "
                                                 "2147483648 (2**31), got (0, 2147483649), of 0 "
                                                 "elements"),
        (lambda: shape("shape", (2**20000,) * 2), "shape must be a tuple of non-negative "  # no
                                                  "integers, each and their product at most "  # str
                                                  "2147483648 (2**31), got a tuple, of more than "
                                                  "2**40000 elements"),
        (lambda: number("q", -1.0, minimum=0, finite=False),
         "q must be a real number >= 0, inf allowed, got -1.0"),
        (lambda: number("q", math.nan, above=0, maximum=1),
         "q must be a finite real number > 0 and <= 1, got nan"),
        (lambda: number("q", 2.0, minimum=0, maximum=1),
         "q must be a finite real number from 0 to 1, got 2.0"),
    ],
)  # fmt: skip
def test_every_check_words_its_refusal_to_the_letter(call, message):
    with pytest.raises((TypeError, ValueError)) as refusal:
        call()
    assert str(refusal.value) == message


def test_a_generator_whose_uniform_needs_a_range_is_refused_and_numpys_taken():
    """Python's random.Random has uniform(a, b): refused at the door, not deep in a draw."""
    import random

    with pytest.raises(KindError, match=r"^rng must be a generator with a uniform\(\) method, "
                       r"such as tinyinit\.PCG32\(seed\), got <random\.Random object"):  # fmt: skip
        generator("rng", random.Random(0))
    numpys = np.random.default_rng(0)  # uniform(low=0.0, high=1.0): callable as it is
    assert generator("rng", numpys) is numpys


def test_the_checks_give_back_the_value_they_accept_in_its_plain_form():
    rng = object.__new__(type("G", (), {"uniform": lambda self: 0.5}))
    assert generator("rng", rng) is rng and instance("w", "a", str, "a name") == "a"
    assert integers("s", np.array([3, 4])) == (3, 4) and type(integers("s", [np.int8(1)])[0]) is int
    assert (
        shape("shape", np.array([2, 3])) == (2, 3) and type(shape("shape", [np.int64(2)])[0]) is int
    )
    assert shape("shape", (2**16, 2**15)) == (2**16, 2**15) and shape("s", (0, 2**31)) == (0, 2**31)
    kept = np.ones(2, np.float32)
    assert (
        real_array("x", kept, float64=False) is kept and real_array("x", kept).dtype == np.float64
    )
    assert number("q", math.inf, finite=False) == math.inf and number("q", 3, maximum=3) == 3.0
    assert integer("n", 8, minimum=1, maximum=8) == 8
    assert float_dtype("dtype", "f4") == np.dtype(np.float32)
    assert float_dtype("dtype", np.dtype(np.float64)) is np.dtype(np.float64)

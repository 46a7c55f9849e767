"""Each pitfall of module card M07.3 is caught by the catalog test the card names.

A mutant (tests/mutants) is the teacher's my_init.py with one pitfall made in it; the
catalog's checks (tinyinit/course/catalog.py) run on it as on tinyinit.core.init. A catalog that
passed
a mutant would not protect anyone from that mistake.
"""

from __future__ import annotations

import inspect

import mutants
import numpy as np
import pytest
from mutants import EDITS, MUTANTS

import tinyinit.core.init as impl
from tinyinit import PCG32
from tinyinit.course.catalog import CHECKS, NAMES
from tinyinit.course.pitfalls import FUNCTIONS

# The card's section 5, "Caught by": the catalog test, and how its failure reads.
CAUGHT_BY = {
    "s01": {
        "test_hand_example_linear_4x3": r"fans\(\(4, 3\)\) = \(4, 3\)",
        "test_fans_and_gains_match_torch": r"fans\(4, 3\) of Linear",
    },
    "s02": {"test_fans_and_gains_match_torch": r"fans\(8, 4, 3\) of Conv1d"},
    "s03": {"test_empirical_variance_matches_the_formula": r"xavier_uniform .*: variance"},
    "s05": {"test_relu_signal_survives_20_layers": r"Kaiming: mean square"},
    "s08": {"test_scaled_residual_keeps_the_stream_bounded": r"2L s\*\*2 with L=1: 0.0008"},
    "s09": {"test_normal_inits_draw_spec_normals_in_c_order": r"not float32\(std \* normals\)"},
    "s13": {"test_same_seed_same_weights": r"seed does nothing|second layer = first"},
}


def mutant(name: str):
    return mutants.load(name)


@pytest.mark.parametrize(
    ("name", "test", "reason"),
    [(name, test, reason) for name, tests in CAUGHT_BY.items() for test, reason in tests.items()],
)
def test_the_named_catalog_test_catches_the_pitfall(name, test, reason):
    with pytest.raises(AssertionError, match=reason):
        CHECKS[test](mutant(name))


@pytest.mark.parametrize("test", NAMES)
def test_every_catalog_check_passes_on_the_real_implementation(test):
    CHECKS[test](impl)


# The teacher's my_init.py is every mutant minus its pitfall: if it passes the whole
# catalog, a mutant fails only because of the lines it changes.
TEACHER = mutants.load_teacher()


@pytest.mark.parametrize("test", NAMES)
def test_every_catalog_check_passes_on_the_teachers_my_init(test):
    CHECKS[test](TEACHER)


def test_every_pitfall_of_the_card_has_a_mutant():
    assert set(MUTANTS) == set(EDITS) == set(CAUGHT_BY)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_a_mutant_exposes_the_whole_api_and_names_its_pitfall(name):
    module = mutant(name)
    for function in FUNCTIONS:
        assert callable(getattr(module, function)), f"{name} has no {function}"
        assert getattr(module, function).__name__ == function
    doc = inspect.getdoc(module)
    assert doc.startswith(f"{name}: ")
    assert "Symptom:" in doc and "Caught by:" in doc
    assert all(test in doc for test in CAUGHT_BY[name])


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_a_mutant_differs_from_the_teachers_file_only_in_its_edits(name):
    teacher = mutants.MY_INIT.read_text().splitlines()
    mutated = mutants.source(name).splitlines()[-len(teacher) :]  # after the mutant's docstring
    changed = [(a, b) for a, b in zip(teacher, mutated) if a != b]
    assert changed
    assert all(any(old in a for old, _, _ in EDITS[name][3]) for a, _ in changed)


def test_s13_ignores_the_generator_it_is_given():
    rng = PCG32(5)
    mutant("s13").normal_init((4, 3), 0.02, rng)
    assert rng == PCG32(5)  # never drawn from: the pitfall, made visible


def test_s09_is_the_transpose_of_the_right_weights():
    """Column-major fill: same values, other places (for a 2-D weight, the transpose's)."""
    right = impl.xavier_normal((4, 3), 1.0, PCG32(5))
    wrong = mutant("s09").xavier_normal((4, 3), 1.0, PCG32(5))
    assert np.array_equal(wrong, right.reshape(3, 4).T)

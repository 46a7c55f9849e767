"""The handwritten digits of tinyinit.networks.digits: a split a seed fixes, standardized, read
from scikit-learn's file as its load_digits reads them."""

from __future__ import annotations

import numpy as np
import pytest

from tinyinit.networks import digits
from tinyinit.networks.digits import load_digits_split


def test_digits_split_is_fixed_disjoint_and_standardized():
    a, b = load_digits_split(), load_digits_split()
    np.testing.assert_array_equal(a.x_test, b.x_test)
    assert len(a.x_train) + len(a.x_test) == 1797
    assert sorted(set(a.labels_train)) == list(range(10))
    train_rows = {r.tobytes() for r in a.x_train}
    assert sum(r.tobytes() in train_rows for r in a.x_test) < 5  # the data has a few duplicates
    np.testing.assert_allclose(a.x_train.mean(axis=0), 0, atol=1e-12)
    assert 0.9 < np.mean(a.x_train**2) <= 1.0  # constant pixels are only centered
    other = load_digits_split(seed=1)
    assert not np.array_equal(a.labels_test, other.labels_test)
    assert load_digits_split(dtype=np.float32).x_train.dtype == np.float32


def test_the_digits_read_from_scikit_learns_file_are_its_load_digits_bit_for_bit(monkeypatch):
    import importlib.util

    from sklearn.datasets import load_digits

    reference = load_digits()
    for x, labels in (digits._digits(), digits._digits_from_sklearn()):
        assert x.dtype == np.float64 and labels.dtype == np.int64
        np.testing.assert_array_equal(x, reference.data)
        np.testing.assert_array_equal(labels, reference.target)
    # scikit-learn elsewhere (or its file gone): its API answers, with the same split
    split = load_digits_split()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None)
    np.testing.assert_array_equal(load_digits_split().x_test, split.x_test)


def test_a_split_fraction_outside_0_1_is_refused():
    with pytest.raises(ValueError, match=r"test_fraction must be a number in \(0, 1\), got 1.5"):
        load_digits_split(test_fraction=1.5)

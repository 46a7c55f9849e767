"""The handwritten digits that scikit-learn ships: the task the MLP of
`tinyinit.networks.mlp` trains on, split into training and test sets by a PCG32.

>>> digits = load_digits_split()
>>> digits.x_train.shape, sorted(set(digits.labels_train.tolist())) == list(range(10))
((1348, 64), True)
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .._extras import extra
from ..core.arguments import float_dtype, integer, number
from ..core.pcg32 import PCG32

__all__ = ["Digits", "load_digits_split"]


class Digits(NamedTuple):
    """The handwritten digits, split: x (n, 64) standardized pixels, labels (n,) in 0..9.

    >>> d = Digits(np.zeros((1, 64)), np.zeros(1, int), np.zeros((0, 64)), np.zeros(0, int))
    >>> d.x_train.shape
    (1, 64)
    """

    x_train: np.ndarray
    labels_train: np.ndarray
    x_test: np.ndarray
    labels_test: np.ndarray


# scikit-learn keeps the digits in sklearn/datasets/data/digits.csv.gz: 1,797 rows of 64 pixels
# and the label. Importing scikit-learn to read them takes a second (a notebook's first cell, a
# Voila page's), reading the file a twentieth of that. The file's place is scikit-learn's own,
# not its API: it is read here only, checked for its shape and labels, and anything else
# (another place, another layout, no scikit-learn) goes through sklearn.datasets.load_digits.
# tests/networks/test_training.py holds the two equal, array for array.
DIGITS_ROWS, DIGITS_PIXELS = 1797, 64


def _digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits: pixels (1797, 64) as float64, labels (1797,) as int64."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("sklearn")  # where it is installed, without importing it
    except (ImportError, ValueError):  # a finder that refuses it, a module put there without one
        spec = None
    if spec is not None and spec.submodule_search_locations:
        path = Path(spec.submodule_search_locations[0]) / "datasets" / "data" / "digits.csv.gz"
        try:
            with gzip.open(path, mode="rt", encoding="utf-8") as file:
                data = np.loadtxt(file, delimiter=",")
        except (OSError, ValueError):
            data = None
        if data is not None and data.shape == (DIGITS_ROWS, DIGITS_PIXELS + 1):
            labels = data[:, -1]
            if np.array_equal(labels, np.round(labels)) and set(labels) == set(range(10)):
                return data[:, :-1].astype(np.float64), labels.astype(np.int64)
    return _digits_from_sklearn()


def _digits_from_sklearn() -> tuple[np.ndarray, np.ndarray]:
    """The same, through scikit-learn's API (the only import of scikit-learn)."""
    with extra("lab", "load_digits_split"):
        from sklearn.datasets import load_digits

    data = load_digits()
    return data.data.astype(np.float64), data.target.astype(np.int64)


def load_digits_split(test_fraction: float = 0.25, seed: int = 0, dtype=np.float64) -> Digits:
    """scikit-learn's 1,797 handwritten 8x8 digits, split train/test by a seeded PCG32.

    The split puts the first round(test_fraction * 1797) rows of a permutation
    (the stable argsort of PCG32(seed).uniforms(1797)) in the test set. Every
    pixel is standardized with the training set's mean and standard deviation
    (pixels that are constant there are only centered), so E[x**2] is about 1,
    the input the variance formulas assume. The data ships inside scikit-learn:
    nothing is downloaded.

    >>> digits = load_digits_split()
    >>> digits.x_train.shape, digits.x_test.shape, digits.labels_test[:5]
    ((1348, 64), (449, 64), array([7, 1, 7, 7, 0]))
    """
    test_fraction = number("test_fraction", test_fraction, above=0)
    if not test_fraction < 1:
        raise ValueError(f"test_fraction must be a number in (0, 1), got {test_fraction!r}")
    seed, dtype = integer("seed", seed), float_dtype("dtype", dtype)
    x, labels = _digits()
    order = np.argsort(PCG32(seed).uniforms(len(x)), kind="stable")
    n_test = round(test_fraction * len(x))
    test, train_rows = order[:n_test], order[n_test:]
    mean, std = x[train_rows].mean(axis=0), x[train_rows].std(axis=0)
    x = (x - mean) / np.where(std > 0, std, 1.0)
    return Digits(
        x[train_rows].astype(dtype), labels[train_rows], x[test].astype(dtype), labels[test]
    )

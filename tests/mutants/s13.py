"""s13: making a new generator inside the initializer.

Symptom: the rng passed in is ignored, so every layer gets the same weights and the
seed does nothing (and the caller's generator never advances).
Caught by: test_same_seed_same_weights.
"""

from __future__ import annotations

from tinyinit import PCG32

try:
    from ._scaffold import Initializers
except ImportError:  # loaded by file path, outside the tests.mutants package
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _scaffold import Initializers


class FreshGenerator(Initializers):
    def source(self, rng):
        return PCG32(0)  # the pitfall: a generator of its own, rng ignored


(
    fans,
    calculate_gain,
    xavier_uniform,
    xavier_normal,
    kaiming_normal,
    normal_init,
    scaled_residual_std,
) = FreshGenerator().api()

"""s03: using sqrt(2 / (fan_in + fan_out)) as the bound of Xavier's uniform.

Symptom: that is the normal's std, but U(-a, a) has variance a**2 / 3, so the
weights' variance is 3 times too small.
Caught by: test_empirical_variance_matches_the_formula.
"""

from __future__ import annotations

import math

try:
    from ._scaffold import Initializers
except ImportError:  # loaded by file path, outside the tests.mutants package
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _scaffold import Initializers


class BoundIsTheStd(Initializers):
    def uniform_bound(self, gain, fan_in, fan_out):
        return gain * math.sqrt(2.0 / (fan_in + fan_out))  # the pitfall: sqrt(3) missing


(
    fans,
    calculate_gain,
    xavier_uniform,
    xavier_normal,
    kaiming_normal,
    normal_init,
    scaled_residual_std,
) = BoundIsTheStd().api()

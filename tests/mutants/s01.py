"""s01: reading an (out, in) weight as (in, out).

Symptom: fan-in and fan-out swap, so every non-square layer gets the wrong scale
(Linear(3 -> 4), stored (4, 3), gets fans (4, 3) instead of (3, 4)).
Caught by: test_hand_example_linear_4x3, test_fans_and_gains_match_torch.
"""

from __future__ import annotations

try:
    from ._scaffold import Initializers
except ImportError:  # loaded by file path, outside the tests.mutants package
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _scaffold import Initializers


class SwappedFans(Initializers):
    def fans(self, shape):
        fan_in, fan_out = super().fans(shape)
        return fan_out, fan_in  # the pitfall: dim 0 taken as in, dim 1 as out


(
    fans,
    calculate_gain,
    xavier_uniform,
    xavier_normal,
    kaiming_normal,
    normal_init,
    scaled_residual_std,
) = SwappedFans().api()

"""s08: GPT-2's residual scale 1/sqrt(L) instead of 1/sqrt(2L).

Symptom: each block adds two outputs (attention and MLP), 2L in all, so the
stream's added variance is 2 base_std**2 instead of base_std**2: twice as large.
Caught by: test_scaled_residual_keeps_the_stream_bounded.
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


class OneAdditionPerBlock(Initializers):
    def scaled_residual_std(self, base_std, n_layers):
        super().scaled_residual_std(base_std, n_layers)  # the same argument checks
        return base_std / math.sqrt(n_layers)  # the pitfall: L additions, not 2L


(
    fans,
    calculate_gain,
    xavier_uniform,
    xavier_normal,
    kaiming_normal,
    normal_init,
    scaled_residual_std,
) = OneAdditionPerBlock().api()

"""s02: ignoring the kernel dimensions.

Symptom: a 3x3 convolution gets fans (in, out) instead of (9 in, 9 out), so it is
initialized 9 times too large in variance.
Caught by: test_fans_and_gains_match_torch.
"""

from __future__ import annotations

try:
    from ._scaffold import Initializers
except ImportError:  # loaded by file path, outside the tests.mutants package
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _scaffold import Initializers


class KernelIgnored(Initializers):
    def fans(self, shape):
        super().fans(shape)  # the same argument checks
        return shape[1], shape[0]  # the pitfall: no receptive field factor


(
    fans,
    calculate_gain,
    xavier_uniform,
    xavier_normal,
    kaiming_normal,
    normal_init,
    scaled_residual_std,
) = KernelIgnored().api()

"""s05: ReLU gain 2 (a variance) instead of sqrt(2) (a standard deviation).

Symptom: Kaiming's weights have twice the variance, so a ReLU stack doubles its
mean square every layer: 2**19 or more after 20 layers.
Caught by: test_relu_signal_survives_20_layers.
"""

from __future__ import annotations

try:
    from ._scaffold import Initializers
except ImportError:  # loaded by file path, outside the tests.mutants package
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _scaffold import Initializers


class ReluGainIsAVariance(Initializers):
    def calculate_gain(self, nonlinearity, param=None):
        gain = super().calculate_gain(nonlinearity, param)
        return 2.0 if nonlinearity == "relu" else gain  # the pitfall: 2, not sqrt(2)


(
    fans,
    calculate_gain,
    xavier_uniform,
    xavier_normal,
    kaiming_normal,
    normal_init,
    scaled_residual_std,
) = ReluGainIsAVariance().api()

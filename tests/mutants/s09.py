"""s09: filling the weight in column-major (Fortran) order.

Symptom: the same distribution but different weights: value k goes to the k-th
element in column-major order, so Python and the Rust port disagree for one seed.
Caught by: test_normal_inits_draw_spec_normals_in_c_order.
"""

from __future__ import annotations

import numpy as np

try:
    from ._scaffold import Initializers
except ImportError:  # loaded by file path, outside the tests.mutants package
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _scaffold import Initializers


class ColumnMajorFill(Initializers):
    def fill(self, values, shape):
        # the pitfall: order="F"; still returned C-contiguous, as the API promises
        return np.ascontiguousarray(values.astype(np.float32).reshape(shape, order="F"))


(
    fans,
    calculate_gain,
    xavier_uniform,
    xavier_normal,
    kaiming_normal,
    normal_init,
    scaled_residual_std,
) = ColumnMajorFill().api()

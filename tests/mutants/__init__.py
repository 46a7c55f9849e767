"""Mutants of the M07.3 initializers: one module per pitfall of the module card (section 5).

Each module exposes the whole public API (fans, calculate_gain, xavier_uniform,
xavier_normal, kaiming_normal, normal_init, scaled_residual_std) with exactly that
pitfall wrong; tests/test_mutants.py shows that the catalog test the card names
catches it. Importable as `tests.mutants.s01` or by file path.
"""

MUTANTS = {
    "s01": "reading an (out, in) weight as (in, out): fan-in and fan-out swap",
    "s02": "ignoring the kernel dimensions: a 3x3 convolution gets 9 times the variance",
    "s03": "sqrt(2 / (fan_in + fan_out)) as the uniform bound: variance 3 times too small",
    "s05": "ReLU gain 2 (a variance) instead of sqrt(2): mean square doubles per layer",
    "s08": "residual std base / sqrt(L) instead of base / sqrt(2L): the stream ends twice as large",
    "s09": "filling in column-major order: same distribution, different weights for a seed",
    "s13": "a new generator inside the initializer: every layer the same, the seed does nothing",
}

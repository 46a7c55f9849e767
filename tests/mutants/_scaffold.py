"""A correct M07.3 implementation, cut into the pieces the pitfalls get wrong.

Each mutant (s01.py, ...) subclasses `Initializers` and overrides exactly one piece;
the public API it exports is `Initializers.api()`, so its initializers really run
through the wrong piece. The pieces:

    fans(shape)                       -> (fan_in, fan_out)           s01, s02
    calculate_gain(nonlinearity, p)   -> the gain table              s05
    uniform_bound(gain, fan_in, fan_out)  -> a of U(-a, a)           s03
    scaled_residual_std(base, n)      -> GPT-2's residual std        s08
    fill(values, shape)               -> the k-th value to flat index k  s09
    source(rng)                       -> the generator drawn from    s13

Built on tinyinit's primitives: `tinyinit.normal` and `tinyinit.uniforms` draw (the
spec's float64 path, not the initializers' float32 fast path), and tinyinit's own
functions check the arguments, so a mutant rejects what tinyinit rejects and differs
from it in its pitfall only.
"""

from __future__ import annotations

import math

import numpy as np

import tinyinit
from tinyinit.checks import number
from tinyinit.init import FAN_MODES, _check_rng, _shape

API = (
    "fans",
    "calculate_gain",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_normal",
    "normal_init",
    "scaled_residual_std",
)


class Initializers:
    """fans, gains and the four initializers of the card, right in every piece."""

    # --- the pieces ------------------------------------------------------------------

    def fans(self, shape) -> tuple[int, int]:
        return tinyinit.fans(shape)

    def calculate_gain(self, nonlinearity: str, param: float | None = None) -> float:
        return tinyinit.calculate_gain(nonlinearity, param)

    def uniform_bound(self, gain: float, fan_in: int, fan_out: int) -> float:
        return gain * math.sqrt(6.0 / (fan_in + fan_out))  # Var U(-a, a) = a**2 / 3

    def scaled_residual_std(self, base_std: float, n_layers: int) -> float:
        return tinyinit.scaled_residual_std(base_std, n_layers)

    def fill(self, values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        return values.astype(np.float32).reshape(shape)  # row-major: value k to flat index k

    def source(self, rng):
        return rng

    # --- the initializers, assembled from the pieces -----------------------------------

    def xavier_uniform(self, shape, gain: float, rng) -> np.ndarray:
        fan_in, fan_out = self.fans(shape)
        gain = number("gain", gain, minimum=0)
        _check_rng(rng)
        a = self.uniform_bound(gain, fan_in, fan_out)
        u = tinyinit.uniforms(self.source(rng), math.prod(shape))
        return self.fill(-a + 2.0 * a * u, tuple(shape))

    def xavier_normal(self, shape, gain: float, rng) -> np.ndarray:
        fan_in, fan_out = self.fans(shape)
        gain = number("gain", gain, minimum=0)
        _check_rng(rng)
        return self._normal(tuple(shape), gain * math.sqrt(2.0 / (fan_in + fan_out)), rng)

    def kaiming_normal(
        self, shape, fan_mode: str, nonlinearity: str, rng, *, param: float | None = None
    ) -> np.ndarray:
        fan_in, fan_out = self.fans(shape)
        if fan_mode not in FAN_MODES:
            raise ValueError(f"fan_mode must be 'fan_in' or 'fan_out', got {fan_mode!r}")
        gain = self.calculate_gain(nonlinearity, param)
        _check_rng(rng)
        fan = fan_in if fan_mode == "fan_in" else fan_out
        return self._normal(tuple(shape), gain / math.sqrt(fan), rng)

    def normal_init(self, shape, std: float, rng) -> np.ndarray:
        shape = _shape(shape)
        std = number("std", std, minimum=0)
        _check_rng(rng)
        return self._normal(shape, std, rng)

    def _normal(self, shape: tuple[int, ...], std: float, rng) -> np.ndarray:
        return self.fill(std * tinyinit.normal(self.source(rng), math.prod(shape)), shape)

    def api(self) -> tuple:
        """The public functions, in the order of `API`, for a module to export."""
        return tuple(getattr(self, name) for name in API)

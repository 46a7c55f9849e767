"""A slow, scalar reference for docs/spec.md and the M07.3 formulas, to test tinyinit against.

Written from the spec alone: plain Python integers for the generator, `math` for
Box-Muller, one value at a time, in the order the spec states. No numpy until the
final float32 cast of an initializer. Obviously correct beats fast here.
"""

from __future__ import annotations

import math

import numpy as np

MULT = 6364136223846793005
MASK = 2**64 - 1


class PCG32:
    """PCG-XSH-RR 64/32 with pcg32_srandom_r's seeding (spec section 1)."""

    def __init__(self, seed: int, stream: int = 54):
        self.inc = ((stream << 1) | 1) & MASK
        self.state = 0
        self.next_u32()
        self.state = (self.state + seed) & MASK
        self.next_u32()

    def next_u32(self) -> int:
        old = self.state
        self.state = (old * MULT + self.inc) & MASK
        xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & 0xFFFFFFFF

    def uniform(self) -> float:
        """Spec section 2: 27 bits of one word and 26 of the next, over 2**53."""
        a = self.next_u32()
        b = self.next_u32()
        return ((a >> 5) * 67108864 + (b >> 6)) / 9007199254740992


def jumped_state(state: int, inc: int, k: int) -> int:
    """The state k LCG steps after `state`, in closed form (spec section 5).

    s_k = MULT**k * s + inc * (MULT**k - 1) / (MULT - 1)  (mod 2**64). The division
    is exact over the integers, so compute MULT**k mod 2**64 * (MULT - 1) and divide.
    """
    k %= 2**64  # the period: a negative k goes back
    modulus = (MULT - 1) << 64
    geometric = ((pow(MULT, k, modulus) - 1) % modulus) // (MULT - 1)
    return (pow(MULT, k, 2**64) * state + inc * geometric) & MASK


def normal(rng, n: int) -> list[float]:
    """n standard normals by Box-Muller on pairs of uniforms (spec section 3)."""
    out: list[float] = []
    while len(out) < n:
        u0 = rng.uniform()
        u1 = rng.uniform()
        r = math.sqrt(-2 * math.log(1 - u0))
        t = 2 * math.pi * u1
        out += [r * math.cos(t), r * math.sin(t)]
    return out[:n]


# --- the initializers: card sections 2.3 and 2.4, spec section 4 -------------------

GAINS = {
    "linear": 1.0,
    "conv1d": 1.0,
    "conv2d": 1.0,
    "conv3d": 1.0,
    "conv_transpose1d": 1.0,
    "conv_transpose2d": 1.0,
    "conv_transpose3d": 1.0,
    "sigmoid": 1.0,
    "tanh": 5 / 3,
    "relu": math.sqrt(2),
    "selu": 3 / 4,
}


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2 / (1 + slope**2))
    return GAINS[nonlinearity]


def fans(shape) -> tuple[int, int]:
    """(fan_in, fan_out) = (in * r, out * r) for shape (out, in, *kernel)."""
    out, in_, *kernel = shape
    r = math.prod(kernel)
    return in_ * r, out * r


def _weights(values: list[float], shape) -> np.ndarray:
    """Float64 values, k-th to flat C index k, cast to float32 once."""
    return np.array(values, dtype=np.float64).astype(np.float32).reshape(shape)


def uniform_init(shape, a: float, rng) -> np.ndarray:
    return _weights([-a + 2 * a * rng.uniform() for _ in range(math.prod(shape))], shape)


def normal_init(shape, std: float, rng) -> np.ndarray:
    return _weights([std * z for z in normal(rng, math.prod(shape))], shape)


def xavier_uniform(shape, gain: float, rng) -> np.ndarray:
    fan_in, fan_out = fans(shape)
    return uniform_init(shape, gain * math.sqrt(6 / (fan_in + fan_out)), rng)


def xavier_normal(shape, gain: float, rng) -> np.ndarray:
    fan_in, fan_out = fans(shape)
    return normal_init(shape, gain * math.sqrt(2 / (fan_in + fan_out)), rng)


def kaiming_normal(shape, fan_mode: str, nonlinearity: str, rng, *, param=None) -> np.ndarray:
    fan_in, fan_out = fans(shape)
    fan = fan_in if fan_mode == "fan_in" else fan_out
    return normal_init(shape, calculate_gain(nonlinearity, param) / math.sqrt(fan), rng)


def scaled_residual_std(base_std: float, n_layers: int) -> float:
    return base_std / math.sqrt(2 * n_layers)

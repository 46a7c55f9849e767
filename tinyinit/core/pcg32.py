"""PCG32 (PCG-XSH-RR 64/32): the generator every weight of tinyinit comes from.

The generator makes 32-bit words and nothing else; `uniform()` turns two words
into a float in [0, 1). This is O'Neill's minimal PCG32 (pcg-c-basic), so a seed
gives the same words in C, Rust or Python.

The state moves by an affine step, s' = MULT * s + inc (mod 2**64). Composing k
steps is again affine, s_k = A_k * s + C_k, which gives two things for free:

* `advance(k)` jumps k steps ahead in O(log k) multiplications;
* `words(n)` computes a whole block of states at once with numpy's wrapping
  uint64 arithmetic, instead of a Python loop per word.

Both are speed only: they give exactly the sequence of `next_u32()`.
"""

from __future__ import annotations

import copy as _copy
from functools import lru_cache

import numpy as np

from .arguments import integer

__all__ = [
    "PCG32",
]

MULT = 6364136223846793005
MASK64 = (1 << 64) - 1
DEFAULT_STREAM = 54

# Words computed per vectorized block: 2**14 uint64 states are 128 KiB, so the
# temporaries of one block stay in cache and memory stays flat at any size.
BLOCK_WORDS = 1 << 14
# Entries of a strided jump table (see `uniforms_at`), and so the uniforms of one
# task of the fast path: 2**16 of them, 512 KiB of float64. Smaller blocks fit
# the cache better, but two threads then spend their time handing each other
# the interpreter between short numpy calls; measured end to end (bench_init.py),
# 2**16 draws normals about 25% faster than 2**13, and memory stays a few MiB.
TABLE_SIZE = 1 << 16


def _as_uint(name: str, value, bits: int = 64) -> int:
    """An integer argument reduced mod 2**bits, refusing floats and bools.

    A Python int, what every seed of the package's own is, is taken as it is; any other value
    goes through `integer`, which takes a numpy integer and refuses the rest in its words.
    """
    if type(value) is not int:  # noqa: E721 (exactly int: a bool is refused by integer)
        value = integer(name, value)
    return value & ((1 << bits) - 1)


def _output(old: int) -> int:
    """XSH-RR: xorshift the high bits down, then rotate by the top 5 bits."""
    xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
    rot = old >> 59
    return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & 0xFFFFFFFF


def _jump(k: int, inc: int) -> tuple[int, int]:
    """(A_k, C_k) with s_k = A_k * s + C_k: k LCG steps as one affine map.

    Square-and-multiply on affine maps (Brown 1994, pcg32_advance_r), O(log k).
    """
    acc_mult, acc_plus = 1, 0
    cur_mult, cur_plus = MULT, inc
    while k > 0:
        if k & 1:
            acc_mult = (acc_mult * cur_mult) & MASK64
            acc_plus = (acc_plus * cur_mult + cur_plus) & MASK64
        cur_plus = ((cur_mult + 1) * cur_plus) & MASK64
        cur_mult = (cur_mult * cur_mult) & MASK64
        k >>= 1
    return acc_mult, acc_plus


def advanced_state(state: int, inc: int, k: int) -> int:
    """The state k words after `state` (k >= 0) of the generator of increment inc.

    A pure function of its arguments, trusted as they are (PCG32.advance checks k), so that
    the draws' blocks can each find their start.

    >>> rng = PCG32(0)
    >>> advanced_state(rng.state, rng.inc, 3) == rng.advance(3).state
    True
    """
    mult, plus = _jump(k, inc)
    return (mult * state + plus) & MASK64


@lru_cache(maxsize=16)
def _jump_tables(inc: int, stride: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """A_k and C_k for k = 0, stride, 2 * stride, ... (size of them).

    numpy's uint64 multiply and add wrap mod 2**64, which is exactly the LCG's
    arithmetic, so `A * s + C` is the state k steps after s for every k at once.
    A stride of 2 gives the first word of each uniform, 4 of every other one.
    """
    step_mult, step_plus = _jump(stride, inc)
    mult = np.full(size, step_mult, dtype=np.uint64)
    mult[0] = 1
    a = np.multiply.accumulate(mult)  # A_(stride j) = A_stride**j
    c = np.zeros(size, dtype=np.uint64)
    c[1:] = np.add.accumulate(a[:-1]) * np.uint64(step_plus)  # C_stride * (1 + ... + A**(j-1))
    a.setflags(write=False)
    c.setflags(write=False)
    return a, c


def _uniforms_from_first_words(first: np.ndarray, inc: int) -> np.ndarray:
    """The uniforms whose first words come from the uint64 states `first`, as float64.

    Micro-optimized, as it runs for every value drawn: each uniform is the
    integer (a >> 5) * 2**26 + (b >> 6) < 2**53, so its float64 and the scaling by
    2**-53 are exact, and equal the spec's division. The states are overwritten.
    """
    second = first * np.uint64(MULT)
    second += np.uint64(inc)
    high = _output_block(first, 5)
    high <<= np.uint64(26)
    high |= _output_block(second, 6)
    u = high.view(np.int64).astype(np.float64)  # int64 converts faster than uint64
    u *= 2.0**-53
    return u


def _output_block(old: np.ndarray, shift: int = 0) -> np.ndarray:
    """`_output(old) >> shift` for an array of uint64 states, as uint64.

    The 32-bit rotation is done in 64 bits: x * (2**32 + 1) holds two copies of
    x side by side, and shifting that right by rot leaves x rotated in the low
    32 bits, with no second shift and no negation for the left part.

    >>> old = np.array([0, 1, 2**64 - 1], dtype=np.uint64)
    >>> _output_block(old).tolist() == [_output(int(s)) for s in old]
    True
    >>> _output_block(old, 5).tolist() == [_output(int(s)) >> 5 for s in old]
    True
    """
    x = old >> np.uint64(18)
    x ^= old
    x >>= np.uint64(27)
    x &= np.uint64(0xFFFFFFFF)
    x *= np.uint64(0x100000001)
    x >>= old >> np.uint64(59)
    x >>= np.uint64(shift)
    x &= np.uint64(0xFFFFFFFF >> shift)
    return x


def uniforms_at(state: int, inc: int, count: int, every: int = 1) -> np.ndarray:
    """Uniforms number 0, every, 2 * every, ... of a generator at `state`; count <= TABLE_SIZE.

    A pure function of the state, so threads can each compute their own block.
    """
    a, c = _jump_tables(inc, 2 * every, TABLE_SIZE)
    first = a[:count] * np.uint64(state)
    first += c[:count]
    return _uniforms_from_first_words(first, inc)


class PCG32:
    """O'Neill's PCG32 with the seeding of pcg32_srandom_r.

    >>> rng = PCG32(0)
    >>> [rng.next_u32() for _ in range(2)]
    [1203932051, 3113183783]
    >>> PCG32(0).uniform()
    0.2803122753265841
    """

    __slots__ = ("state", "inc")

    def __init__(self, seed: int, stream: int = DEFAULT_STREAM):
        seed = _as_uint("seed", seed)
        stream = _as_uint("stream", stream)
        self.inc = ((stream << 1) | 1) & MASK64
        self.state = 0
        self.next_u32()
        self.state = (self.state + seed) & MASK64
        self.next_u32()

    def __repr__(self) -> str:
        return f"PCG32(state={self.state:#018x}, inc={self.inc:#018x})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, PCG32):
            return NotImplemented
        return (self.state, self.inc) == (other.state, other.inc)

    __hash__ = None  # mutable: equal now, different after the next draw

    # --- the scalar definition (spec section 1 and 2) -------------------------

    def next_u32(self) -> int:
        """The next 32-bit word; the state takes one LCG step."""
        old = self.state
        self.state = (old * MULT + self.inc) & MASK64
        return _output(old)

    def uniform(self) -> float:
        """A float64 in [0, 1) from two words: 27 high bits of a, 26 of b."""
        a = self.next_u32()
        b = self.next_u32()
        return ((a >> 5) * 67108864 + (b >> 6)) / 9007199254740992

    # --- jump-ahead and blocks (spec section 5): speed, same sequence ---------

    def advance(self, k: int) -> PCG32:
        """Move k words ahead in O(log k); negative k moves back (period 2**64)."""
        self.state = advanced_state(self.state, self.inc, _as_uint("k", k))
        return self

    def words(self, n: int) -> np.ndarray:
        """The next n words as uint32, equal to n calls of `next_u32()`."""
        n = integer("n", n, minimum=0)
        out = np.empty(n, dtype=np.uint32)
        a, c = _jump_tables(self.inc, 1, BLOCK_WORDS)
        block_mult, block_plus = _jump(BLOCK_WORDS, self.inc)
        for start in range(0, n, BLOCK_WORDS):
            k = min(BLOCK_WORDS, n - start)
            states = a[:k] * np.uint64(self.state) + c[:k]
            out[start : start + k] = _output_block(states)
            if k == BLOCK_WORDS:
                self.state = (block_mult * self.state + block_plus) & MASK64
            else:
                self.state = (int(states[-1]) * MULT + self.inc) & MASK64
        return out

    def uniforms(self, n: int) -> np.ndarray:
        """The next n uniforms as float64, equal to n calls of `uniform()`."""
        n = integer("n", n, minimum=0)
        out = np.empty(n, dtype=np.float64)
        for start in range(0, n, TABLE_SIZE):
            k = min(TABLE_SIZE, n - start)
            out[start : start + k] = uniforms_at(self.state, self.inc, k)
            self.advance(2 * k)
        return out

    # --- snapshots --------------------------------------------------------------

    def copy(self) -> PCG32:
        """An independent generator at the same point of the same sequence."""
        return _copy.copy(self)

    def __copy__(self) -> PCG32:
        twin = PCG32.__new__(PCG32)
        twin.state, twin.inc = self.state, self.inc
        return twin

    def __deepcopy__(self, memo) -> PCG32:
        return self.__copy__()

    def __getstate__(self):
        return (self.state, self.inc)

    def __setstate__(self, state) -> None:
        self.state, self.inc = state

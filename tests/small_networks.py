"""Small MLPs the network tests share: random ones with biases (numpy's generator, any scale and
dtype) and ReLU ones drawn as the package draws them (Kaiming normal from a PCG32)."""

from __future__ import annotations

import numpy as np

from tinyinit import PCG32, kaiming_normal
from tinyinit.networks.mlp import init_params


def random_mlp(sizes, seed, scale=1.0, dtype=np.float64):
    """Weights (out, in) of std scale/sqrt(in), biases of std 0.1, and a batch of 7 with labels."""
    rng = np.random.default_rng(seed)
    params = [
        (
            (rng.normal(size=(n_out, n_in)) * scale / np.sqrt(n_in)).astype(dtype),
            (rng.normal(size=n_out) * 0.1).astype(dtype),
        )
        for n_in, n_out in zip(sizes[:-1], sizes[1:])
    ]
    x = rng.normal(size=(7, sizes[0])).astype(dtype)
    labels = rng.integers(0, sizes[-1], size=7)
    return params, x, labels


def relu_mlp(sizes, seed=0):
    """A ReLU MLP of these sizes, Kaiming-normal from PCG32(seed)."""
    return init_params(sizes, lambda s, r: kaiming_normal(s, "fan_in", "relu", r), PCG32(seed))

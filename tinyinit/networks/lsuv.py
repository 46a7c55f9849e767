"""LSUV, layer-sequential unit-variance initialization (Mishkin & Matas, 2016, "All you need is
a good init"): the scale of every layer read from one batch of data instead of a formula.

1. Start every weight orthonormal: `orthogonal_init(shape, 1.0, rng)`.
2. For l = 1 .. L in turn, on one batch x: compute layer l's output z_l = h_{l-1} W_l^T + b_l
   (the layers below are final, so h_{l-1} is computed once); while |Var(z_l) - 1| > tol and
   fewer than max_passes passes were made, W_l <- W_l / sqrt(Var(z_l)): the step
   `tinyinit.core.init.lsuv_factor`, which is also the depth experiment's row "lsuv".

Var(z_l) is over every entry of z_l (the batch and the units), as the paper's Var(B_L). With
b_l = 0, z_l is linear in W_l, so one rescaling brings Var(z_l) to 1 up to rounding: a layer
takes two passes (measure, rescale and measure again), unless its first is already within tol.
Every layer gets its own gain, whatever the activation: where no single gain holds a deep
stack (GELU and SiLU, notebook 05), the batch corrects each layer in turn. What it costs: a
batch of data, 2L evaluations of one layer on it (about two forward passes of the network),
and a result that depends on that batch.

>>> from tinyinit import PCG32
>>> x = PCG32(1).uniforms(64 * 8).reshape(64, 8) * 4.0
>>> result = lsuv_init([8, 16, 16, 4], x, "tanh", PCG32(0))
>>> result.variances.round(6), result.passes
(array([1., 1., 1.]), array([2, 2, 2]))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ..core.activations import as_activation
from ..core.arguments import integer, number, real_array
from ..core.init import LSUV_TOL, lsuv_factor, orthogonal_init
from ..core.pcg32 import PCG32
from .mlp import Params, check_params, init_params

__all__ = ["LSUVResult", "lsuv", "lsuv_init"]

MAX_PASSES = 10  # the paper's T_max


class LSUVResult(NamedTuple):
    """LSUV's rescaled params and, per layer l = 1..L: Var(z_l) on the batch after its passes,
    the passes made (one evaluation of layer l on the batch each) and the factor W_l got.

    >>> LSUVResult([], np.ones(1), np.array([2]), np.ones(1)).passes.sum()
    np.int64(2)
    """

    params: Params
    variances: np.ndarray
    passes: np.ndarray
    scales: np.ndarray


def lsuv(
    params: Params,
    x: np.ndarray,
    activation: str,
    *,
    gain: float = 1.0,
    tol: float = LSUV_TOL,
    max_passes: int = MAX_PASSES,
) -> LSUVResult:
    """Rescale each layer of params in turn until its output has variance within tol of 1 on x
    (of gain**2, for another target than the paper's).

    params: (W, b) pairs as tinyinit.networks.mlp's (not modified); x: the batch, (B, d_in);
    activation: between the layers. Layer l's output z_l = h_{l-1} W_l^T + b_l, and
    h_l = phi(z_l) with the rescaled W_l feeds layer l + 1. The last layer is rescaled too
    (the paper's rule; its output is the logits).

    >>> from tinyinit import PCG32, kaiming_normal
    >>> from tinyinit.networks.mlp import init_params
    >>> kaiming = lambda shape, rng: 3 * kaiming_normal(shape, "fan_in", "relu", rng)
    >>> params = init_params([4, 6, 2], kaiming, PCG32(0))
    >>> x = PCG32(1).uniforms(32 * 4).reshape(32, 4) * 3.4 - 1.7
    >>> result = lsuv(params, x, "relu")
    >>> result.scales.round(3), [float(np.var(z).round(6)) for z in (x @ result.params[0][0].T,)]
    (array([0.312, 0.254]), [1.0])
    """
    act = as_activation(activation, name="activation")
    check_params(params)
    gain = number("gain", gain, minimum=0)
    tol = number("tol", tol, above=0)
    max_passes = integer("max_passes", max_passes, minimum=1)
    x = real_array("x", x, what="a batch of shape (batch >= 2, d_in)", float64=False)
    if x.ndim != 2 or x.shape[1] != params[0][0].shape[1] or len(x) < 2:
        raise ValueError(
            f"x must be a batch of shape (batch >= 2, {params[0][0].shape[1]}) for these params, "
            f"got shape {x.shape}"
        )
    h, rescaled = x, []
    variances, passes, scales = (np.zeros(len(params)) for _ in range(3))
    for l, (W, b) in enumerate(params):
        scale = 1.0
        with np.errstate(all="ignore"):  # beyond float64 is inf, the package's overflow
            for k in range(1, max_passes + 1):
                z = h @ (scale * W).T + (0 if b is None else b)
                factor = lsuv_factor(z, gain, tol)
                if factor == 1.0 or k == max_passes:
                    break  # close enough, out of passes, or nothing a rescaling can fix (0, inf)
                scale *= factor
            var = float(np.var(z))
        rescaled.append(((scale * W).astype(W.dtype), b))
        variances[l], passes[l], scales[l] = var, k, scale
        h = act.phi(z).astype(z.dtype, copy=False)
    return LSUVResult(rescaled, variances, passes.astype(int), scales)


def lsuv_init(
    sizes: Sequence[int],
    x: np.ndarray,
    activation: str,
    rng: PCG32,
    *,
    gain: float = 1.0,
    tol: float = LSUV_TOL,
    max_passes: int = MAX_PASSES,
    dtype=np.float64,
) -> LSUVResult:
    """The whole of LSUV: orthonormal weights drawn from rng in layer order
    (`init_params` with `orthogonal_init(shape, 1.0, rng)`, biases 0), then `lsuv` on x.

    >>> from tinyinit import PCG32
    >>> x = PCG32(1).uniforms(64 * 8).reshape(64, 8) - 0.5
    >>> lsuv_init([8, 8, 3], x, "relu", PCG32(0)).scales.round(3)
    array([3.417, 1.617])
    """
    params = init_params(sizes, lambda s, r: orthogonal_init(s, 1.0, r), rng, dtype=dtype)
    return lsuv(params, x, activation, gain=gain, tol=tol, max_passes=max_passes)

"""Layer layouts: how a weight is stored, and which of its dimensions is fan-in.

torch's `fans(shape)` reads fan_in from dimension 1 and fan_out from dimension 0
of an (out, in, *kernel) weight. That is right for a Linear stored (out, in)
and for a convolution, but not for a weight stored (in, out) (x @ W in JAX,
Keras and many numpy codes) nor for a transposed convolution, whose torch
weight (in, out / groups, *kernel) makes `fans` read the two fans swapped.
`counted_fans` settles it by running the layer: it counts the terms of each
output's sum and the outputs each input feeds.

>>> weight_shape("conv_transpose", 4, 6, (3, 3))
(4, 6, 3, 3)
>>> counted_fans("conv_transpose", 4, 6, (3, 3))    # torch's fans() says (54, 36)
(36, 54)
"""

from __future__ import annotations

import math

import numpy as np

from . import arguments
from .arguments import integer, one_of, real_array, shown

__all__ = ["LAYERS", "apply_layer", "counted_fans", "layer_fans", "weight_shape"]

LAYERS = ("linear", "linear_in_out", "conv", "conv_transpose")


def _layer(layer, in_channels, out_channels, kernel_size) -> tuple[int, ...]:
    """The checked kernel of a layer: () for a linear one, 1 to 3 sizes >= 1 for a convolution."""
    one_of("layer", layer, LAYERS)
    integer("in_channels", in_channels, minimum=1)
    integer("out_channels", out_channels, minimum=1)
    if layer in ("linear", "linear_in_out"):
        if arguments.shape("kernel_size", kernel_size):
            raise ValueError(f"kernel_size must be () for a {layer} layer, got {kernel_size!r}")
        return ()
    return _kernel(kernel_size, 1)


def _kernel(kernel_size, fewest: int) -> tuple[int, ...]:
    kernel = arguments.shape("kernel_size", kernel_size)
    if not (fewest <= len(kernel) <= 3 and all(k >= 1 for k in kernel)):
        raise ValueError(f"kernel_size must be {fewest} to 3 sizes >= 1, got {kernel_size!r}")
    return kernel


def weight_shape(
    layer: str, in_channels: int, out_channels: int, kernel_size: tuple[int, ...] = ()
) -> tuple[int, ...]:
    """The shape a weight is stored with.

    linear: (out, in), torch's nn.Linear; linear_in_out: (in, out), a weight
    used as x @ W (JAX, Keras, many numpy codes); conv: (out, in, *kernel);
    conv_transpose: (in, out, *kernel), torch's ConvTranspose (groups = 1).

    >>> weight_shape("linear", 3, 4), weight_shape("linear_in_out", 3, 4)
    ((4, 3), (3, 4))
    """
    kernel = _layer(layer, in_channels, out_channels, kernel_size)
    if layer == "linear":
        return (out_channels, in_channels)
    if layer == "linear_in_out":
        return (in_channels, out_channels)
    if layer == "conv":
        return (out_channels, in_channels, *kernel)
    return (in_channels, out_channels, *kernel)  # conv_transpose


def layer_fans(
    in_channels: int, out_channels: int, kernel_size: tuple[int, ...] = ()
) -> tuple[int, int]:
    """The fans a layer really has (stride 1, groups 1): inputs per output, outputs per input.

    Every output sums in_channels * prod(kernel) terms, whatever the layout.

    >>> layer_fans(4, 6, (3, 3))
    (36, 54)
    """
    integer("in_channels", in_channels, minimum=1)
    integer("out_channels", out_channels, minimum=1)
    receptive = math.prod(_kernel(kernel_size, 0))
    return in_channels * receptive, out_channels * receptive


def apply_layer(layer: str, weight: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Run one layer on a batch x of shape (batch, in, *spatial); stride 1, no bias.

    conv is a valid cross-correlation; conv_transpose scatters every input
    through the kernel ("full" output, spatial + kernel - 1).

    >>> apply_layer("linear", np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))   # x @ W.T
    array([[11.]])
    """
    one_of("layer", layer, LAYERS)
    weight, x = real_array("weight", weight), real_array("x", x)
    linear = layer in ("linear", "linear_in_out")
    if weight.ndim != 2 if linear else not 3 <= weight.ndim <= 5:
        dims = "2 dimensions" if linear else "3 to 5 dimensions, 1 to 3 of them the kernel's"
        raise ValueError(f"weight must be a {layer} weight of {dims}, got {shown(weight)}")
    fan_axis = {"linear": 1, "linear_in_out": 0, "conv": 1, "conv_transpose": 0}[layer]
    spatial = weight.ndim - 2
    if x.ndim != 2 + spatial or x.shape[1] != weight.shape[fan_axis]:
        raise ValueError(
            f"x must be (batch, {weight.shape[fan_axis]}, *{spatial} spatial) for this weight, "
            f"got {shown(x)}"
        )
    if layer == "conv" and any(n < k for n, k in zip(x.shape[2:], weight.shape[2:])):
        raise ValueError(
            f"x must be at least as wide as the kernel {weight.shape[2:]}, got {shown(x)}"
        )
    if layer == "linear":
        return x @ weight.T
    if layer == "linear_in_out":
        return x @ weight
    if layer == "conv_transpose":
        # A stride-1 transposed convolution is a convolution of the zero-padded
        # input with the kernel flipped and its two channel axes exchanged.
        kdims = weight.shape[2:]
        pad = [(0, 0), (0, 0), *[(k - 1, k - 1) for k in kdims]]
        flipped = np.flip(weight, axis=tuple(range(2, weight.ndim))).swapaxes(0, 1)
        return apply_layer("conv", flipped, np.pad(x, pad))
    kdims = weight.shape[2:]  # conv
    axes = tuple(range(2, x.ndim))
    windows = np.lib.stride_tricks.sliding_window_view(x, kdims, axis=axes)
    # windows: (batch, in, *out_spatial, *kernel) -> contract in and kernel
    letters = "ijklmn"[: len(kdims)]
    spatial = "uvw"[: len(kdims)]
    spec = f"bc{spatial}{letters},oc{letters}->bo{spatial}"
    return np.einsum(spec, windows, weight, optimize=True)


def counted_fans(
    layer: str, in_channels: int, out_channels: int, kernel_size: tuple[int, ...] = ()
) -> tuple[int, int]:
    """(fan_in, fan_out) counted by running the layer with every weight equal to 1.

    fan_in: feed all ones; an output away from the border is the number of
    terms in its sum. fan_out: feed a single 1 (first channel, middle
    position); the outputs it reaches are the ones it feeds.

    >>> counted_fans("conv_transpose", 4, 6, (3, 3))    # torch's fans() says (54, 36)
    (36, 54)
    """
    kernel = _layer(layer, in_channels, out_channels, kernel_size)
    spatial = tuple(4 * k for k in kernel)
    weight = np.ones(weight_shape(layer, in_channels, out_channels, kernel))
    fan_in = apply_layer(layer, weight, np.ones((1, in_channels, *spatial))).max()
    one_hot = np.zeros((1, in_channels, *spatial))
    one_hot[(0, 0, *[n // 2 for n in spatial])] = 1.0
    fan_out = np.count_nonzero(apply_layer(layer, weight, one_hot))
    return int(round(fan_in)), int(fan_out)

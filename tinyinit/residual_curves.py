"""The residual stream block by block: the curves the figure and the live explorer draw.

`tinyinit.residual.stream_variances` and `residual_variance_theory` give the stream after
each of the 2N additions; a plot over blocks keeps every second entry, the stream after
whole blocks. Both `tinyinit.plots.residual_figure` and
`tinyinit.explorer.ResidualStreamExplorer` ask `block_variances`, so they draw the same
numbers.
"""

from __future__ import annotations

import numpy as np

from .residual import (
    ResidualStack,
    out_scale,
    residual_variance_theory,
    stream_variance,
    stream_variances,
)


def block_variances(
    stack: ResidualStack, n_layers: int, scaled: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(measured, theory): Var(x_2b) after each block b = 0 .. N; each of shape (N + 1,).

    measured: the stream of `stack`, the output projections times 1/sqrt(2N) if `scaled`;
    theory: Var(x_0) + 2b * s**2, with s**2 = 1 unscaled and 1/(2N) scaled.

    >>> from tinyinit import PCG32
    >>> from tinyinit.residual import draw_residual_stack
    >>> stack = draw_residual_stack(2, 128, 128, 128, PCG32(0))
    >>> measured, theory = block_variances(stack, 2, scaled=False)
    >>> measured.round(1), theory.round(2)
    (array([1. , 3. , 4.7]), array([0.97, 2.97, 4.97]))
    """
    measured = stream_variances(stack, n_layers, out_scale(n_layers, scaled))
    theory = residual_variance_theory(n_layers, scaled=scaled, x0_var=stream_variance(stack.x0))
    return measured[::2], theory[::2]

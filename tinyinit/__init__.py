"""tinyinit: how large should the initial weights of a neural network be?

The top level is what `torch.nn.init` is to torch: the generator (`PCG32`),
the numbers it makes (`uniforms`, `normal`), the initializers (the module's
and the rest of torch.nn.init) and the scales and helpers they are built on
(`fans`, `calculate_gain`, `xavier_std`, ...), bit for bit as in docs/spec.md. Everything else is
reached through its submodule: `tinyinit.propagation.simulate`,
`tinyinit.explorer.depth_explorer`, `tinyinit.gaussian.fixed_point`, ...
(the README's repository map lists them).

>>> from tinyinit import PCG32, fans, kaiming_normal
>>> fans((4, 3))
(3, 4)
>>> kaiming_normal((4, 3), "fan_in", "relu", PCG32(0)).dtype
dtype('float32')
"""

from .distributions import normal, uniforms
from .init import (
    calculate_gain,
    constant_init,
    dirac_init,
    eye_init,
    fans,
    kaiming_normal,
    kaiming_std,
    kaiming_uniform,
    normal_init,
    ones_init,
    orthogonal_init,
    scaled_residual_std,
    sparse_init,
    torch_default_init,
    trunc_normal_init,
    uniform_bound,
    uniform_init,
    xavier_bound,
    xavier_normal,
    xavier_std,
    xavier_uniform,
    zeros_init,
)
from .pcg32 import PCG32

__all__ = [
    "PCG32",
    "calculate_gain",
    "constant_init",
    "dirac_init",
    "eye_init",
    "fans",
    "kaiming_normal",
    "kaiming_std",
    "kaiming_uniform",
    "normal",
    "normal_init",
    "ones_init",
    "orthogonal_init",
    "scaled_residual_std",
    "sparse_init",
    "torch_default_init",
    "trunc_normal_init",
    "uniform_bound",
    "uniform_init",
    "uniforms",
    "xavier_bound",
    "xavier_normal",
    "xavier_std",
    "xavier_uniform",
    "zeros_init",
]
__version__ = "0.1.0"

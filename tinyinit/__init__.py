"""tinyinit: how large should the initial weights of a neural network be?

The top level is what `torch.nn.init` is to torch: the generator (`PCG32`),
the numbers it makes (`uniforms`, `normal`), the initializers of module M07.3
and the helpers they are built on (`fans`, `calculate_gain`,
`scaled_residual_std`), bit for bit as in spec/pcg32.md. Everything else is
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
    fans,
    kaiming_normal,
    normal_init,
    scaled_residual_std,
    xavier_normal,
    xavier_uniform,
)
from .pcg32 import PCG32

__all__ = [
    "PCG32",
    "calculate_gain",
    "fans",
    "kaiming_normal",
    "normal",
    "normal_init",
    "scaled_residual_std",
    "uniforms",
    "xavier_normal",
    "xavier_uniform",
]
__version__ = "0.1.0"

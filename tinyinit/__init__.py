"""tinyinit: how large should the initial weights of a neural network be?

The top level is what `torch.nn.init` is to torch: the generator (`PCG32`),
the numbers it makes (`uniforms`, `normal`), the initializers (the module's
and the rest of torch.nn.init) and the scales and helpers they are built on
(`fans`, `calculate_gain`, `xavier_std`, ...), bit for bit as in docs/spec.md. Everything else is
reached through its submodule: `tinyinit.physics.propagation.simulate`,
`tinyinit.views.explorers.depth_explorer`, `tinyinit.physics.mean_field.fixed_point`, ...
(docs/developing/architecture.md lists them).

>>> from tinyinit import PCG32, fans, kaiming_normal
>>> fans((4, 3))
(3, 4)
>>> kaiming_normal((4, 3), "fan_in", "relu", PCG32(0)).dtype
dtype('float32')
"""

from .core import init
from .core.distributions import normal, uniforms
from .core.init import *  # noqa: F403  the initializers and their scales: init.__all__, listed once
from .core.pcg32 import PCG32

__all__ = ["PCG32", "normal", "uniforms", *init.__all__]
__version__ = "0.1.0"

"""tinyinit: how large should the initial weights of a neural network be?

The generator (`PCG32`), the numbers it makes (`uniforms`, `normal`), and the
initializers of module M07.3 and the rest of torch.nn.init, bit for bit as in
docs/spec.md.

>>> from tinyinit import PCG32, fans, kaiming_normal
>>> fans((4, 3))
(3, 4)
>>> kaiming_normal((4, 3), "fan_in", "relu", PCG32(0)).dtype
dtype('float32')
"""

from .distributions import normal, uniforms
from .gains import fixed_point, single_layer_gain
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
from .mup import coordinate_check, init_mlp, layer_learning_rates, lr_sweep
from .pcg32 import PCG32
from .pitfalls import Diagnosis, check_initializer
from .propagation import ACTIVATIONS, DepthResult, UnitWeights, layer_weights, mean_field, simulate
from .residual import ResidualScalingReport, check_residual_scaling
from .transformer import GPTConfig, TinyGPT
from .variance import predicted_variance, sample_sums, variance_of

__all__ = [
    "ACTIVATIONS",
    "DepthExplorer",
    "DepthPlot",
    "DepthResult",
    "UnitWeights",
    "depth_explorer",
    "layer_weights",
    "mean_field",
    "simulate",
    "Diagnosis",
    "GPTConfig",
    "PCG32",
    "ResidualScalingReport",
    "TinyGPT",
    "calculate_gain",
    "constant_init",
    "dirac_init",
    "eye_init",
    "kaiming_std",
    "kaiming_uniform",
    "ones_init",
    "orthogonal_init",
    "sparse_init",
    "torch_default_init",
    "trunc_normal_init",
    "uniform_bound",
    "uniform_init",
    "xavier_bound",
    "xavier_std",
    "zeros_init",
    "check_initializer",
    "check_residual_scaling",
    "coordinate_check",
    "fans",
    "fixed_point",
    "init_mlp",
    "kaiming_normal",
    "layer_learning_rates",
    "lr_sweep",
    "normal",
    "normal_init",
    "predicted_variance",
    "sample_sums",
    "scaled_residual_std",
    "single_layer_gain",
    "uniforms",
    "variance_of",
    "xavier_normal",
    "xavier_uniform",
]
__version__ = "0.1.0"

# The figure and the widgets load matplotlib and ipywidgets: only when asked for.
_LAZY = {"DepthPlot": ".plots", "DepthExplorer": ".explorer", "depth_explorer": ".explorer"}


def __getattr__(name):
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""Write tinyinit/data/init_torch.json: what torch.nn.init computes, for tinyinit's tests.

Recorded: torch's gain table and fan rule; the scales torch's initializers use (bounds and
stds, read back from weights drawn with a known generator); the bounds of an untouched
nn.Linear's or nn.Conv's weight and bias, and their draw order; eye_, dirac_ and constant_
exactly; and the verdict of every check of tests/torch_init_checks.py run on
torch itself, which is what shows that translation of torch's own tests is faithful.

The tests read only the JSON; torch is never a dependency of tinyinit or its tests.
To regenerate it (torch 2.13.0, CPU, numpy and scipy, in a virtualenv of its own),
from the repository's root:

    python3 -m venv /tmp/torchvenv
    /tmp/torchvenv/bin/pip install torch==2.13.0 numpy scipy
    PYTHONPATH=. /tmp/torchvenv/bin/python scripts/make_torch_golden.py

The output is stable (sorted keys, fixed indentation), so a rerun with the same torch
changes nothing, and a diff after a torch upgrade shows exactly what torch changed.
"""

from __future__ import annotations

import json
import math
import sys
import traceback
from pathlib import Path

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tinyinit" / "data" / "init_torch.json"
sys.path.insert(0, str(ROOT / "tests"))
import torch_init_checks as translated  # noqa: E402 - needs tests/ on the path

NONLINEARITIES = [
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
    "tanh",
    "relu",
    "leaky_relu",
    "selu",
]
# leaky_relu's negative slope: the default, 0, the usual ones, an int, a negative, > 1
LEAKY_RELU_SLOPES = [None, 0.0, 0.01, 0.1, 0.2, 0.5, 1, 3, -0.2, 2.5]
# torch ignores param for every other nonlinearity
IGNORED_PARAMS = [("relu", 0.5), ("tanh", 0.3), ("linear", 7)]

# Weights of real layers; a layer is recorded by its repr.
LAYERS = [
    nn.Linear(3, 4),
    nn.Linear(512, 128),
    nn.Linear(1, 1),
    nn.Embedding(10, 6),
    nn.Conv1d(4, 8, kernel_size=3),
    nn.Conv1d(3, 5, kernel_size=7),
    nn.Conv2d(4, 8, kernel_size=3),
    nn.Conv2d(3, 16, kernel_size=(3, 5)),
    nn.Conv2d(6, 9, kernel_size=1),
    nn.Conv2d(8, 12, kernel_size=3, groups=4),
    nn.Conv3d(2, 4, kernel_size=(3, 5, 7)),
    # a transposed convolution stores (in, out / groups, *kernel): torch still reads dim 0 as out
    nn.ConvTranspose1d(4, 8, kernel_size=3),
    nn.ConvTranspose2d(4, 8, kernel_size=(3, 5)),
    nn.ConvTranspose2d(6, 9, kernel_size=3, groups=3),
    nn.ConvTranspose3d(2, 5, kernel_size=3),
]
# Raw shapes too: torch's rule is on the shape alone, (out, in, *kernel).
SHAPES = [(7, 5), (5, 7), (2, 3, 1), (2, 3, 4, 5, 6)]
NO_FANS = [(), (5,), (1,)]
BAD_GAINS = [("gelu", None), ("Relu", None), ("leaky_relu", "0.2"), ("leaky_relu", True)]


def error(call) -> dict:
    """The exception torch raises for a call, by type and message."""
    try:
        call()
    except Exception as e:  # noqa: BLE001 - any error is recorded as it is
        return {"error": type(e).__name__, "message": str(e)}
    raise AssertionError("torch accepted an input recorded as an error")


def fan_entry(shape, layer: str | None = None) -> dict:
    fan_in, fan_out = nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    return {"layer": layer, "shape": list(shape), "fan_in": fan_in, "fan_out": fan_out}


# --- the rest of torch.nn.init ------------------------------------------------------------


def _draw(shape, fill, seed: int = 0) -> np.ndarray:
    """torch.empty(shape) initialized in place by fill(tensor, generator), as float64."""
    t = torch.empty(shape)
    fill(t, torch.Generator().manual_seed(seed))
    return t.double().numpy()


def _scale(shape, fill, unit) -> float:
    """The factor torch's initializer applied to the same generator's unit draws."""
    w, u = _draw(shape, fill), _draw(shape, unit)
    return float(np.abs(w).max() / np.abs(u).max())


# The uniform initializers' bounds, read back: torch.uniform_(-a, a) = a * uniform_(-1, 1).
UNIFORM_SCALES = [
    ("kaiming_uniform", (4, 3), "fan_in", "relu", None),
    ("kaiming_uniform", (8, 4, 3, 3), "fan_out", "relu", None),
    ("kaiming_uniform", (5, 7), "fan_in", "leaky_relu", 0.2),
    ("kaiming_uniform", (5, 7), "fan_in", "tanh", None),
    ("torch_default", (4, 3), "fan_in", "leaky_relu", math.sqrt(5)),
    ("torch_default", (16, 3, 5, 5), "fan_in", "leaky_relu", math.sqrt(5)),
]


def uniform_scales() -> list[dict]:
    unit = lambda t, g: t.uniform_(-1, 1, generator=g)  # noqa: E731
    rows = []
    for kind, shape, mode, nonlinearity, a in UNIFORM_SCALES:
        if kind == "torch_default":
            layer = nn.Linear(3, 4) if len(shape) == 2 else nn.Conv2d(3, 16, 5)
            assert tuple(layer.weight.shape) == shape
            # reset_parameters() is kaiming_uniform_(a=sqrt(5)): draw it with our generator
            fill = lambda t, g: nn.init.kaiming_uniform_(t, a=math.sqrt(5), generator=g)  # noqa: E731
        else:
            fill = lambda t, g, m=mode, n=nonlinearity, a=a: nn.init.kaiming_uniform_(  # noqa: E731
                t, a=0 if a is None else a, mode=m, nonlinearity=n, generator=g
            )
        rows.append(
            {
                "kind": kind,
                "shape": list(shape),
                "fan_mode": mode,
                "nonlinearity": nonlinearity,
                "param": a,
                "bound": _scale(shape, fill, unit),
            }
        )
    return rows


# Layers whose reset_parameters() draws a weight and then a bias from the global generator.
DEFAULT_LAYERS = [
    lambda: nn.Linear(3, 4),
    lambda: nn.Linear(256, 256),
    lambda: nn.Linear(512, 128),
    lambda: nn.Conv1d(4, 8, kernel_size=3),
    lambda: nn.Conv2d(3, 16, kernel_size=5),
]


def default_layers() -> list[dict]:
    """An untouched layer's weight and bias bounds, read back against the same generator's
    uniform_(-1, 1) draws of the same shapes in the same order, and whether that order (the
    weight, then the bias) reproduces the bias."""
    rows = []
    for make in DEFAULT_LAYERS:
        torch.manual_seed(7)
        layer = make()
        torch.manual_seed(7)
        w_unit = torch.empty(layer.weight.shape).uniform_(-1, 1)
        b_unit = torch.empty(layer.bias.shape).uniform_(-1, 1)
        w, b = layer.weight.detach(), layer.bias.detach()
        weight_bound = float(w.abs().max() / w_unit.abs().max())
        bias_bound = float(b.abs().max() / b_unit.abs().max())
        fan_in, _ = nn.init._calculate_fan_in_and_fan_out(layer.weight)
        rows.append(
            {
                "layer": repr(layer),
                "weight_shape": list(w.shape),
                "fan_in": fan_in,
                "weight_bound": weight_bound,
                "bias_bound": bias_bound,
                "bias_after_weight": bool(torch.allclose(b, bias_bound * b_unit, rtol=1e-5)),
            }
        )
    return rows


def exact_fills() -> dict:
    """The initializers that draw nothing, element by element."""
    eye = [
        {"shape": list(s), "values": nn.init.eye_(torch.empty(s)).tolist()}
        for s in [(3, 5), (4, 2), (1, 1)]
    ]
    dirac = [
        {"shape": list(s), "groups": g, "values": nn.init.dirac_(torch.empty(s), g).tolist()}
        for s, g in [((2, 2, 3), 1), ((6, 4, 3, 3), 2), ((3, 5, 2, 4), 1), ((4, 2, 3, 3, 3), 2)]
    ]
    constant = [
        {"shape": [2, 3], "value": v, "values": nn.init.constant_(torch.empty(2, 3), v).tolist()}
        for v in [0.5, -1.25, 1e-3]
    ]
    return {"eye": eye, "dirac": dirac, "constant": constant}


def orthogonality() -> list[dict]:
    """max |W W^T - gain^2 I| (or W^T W for tall ones) of torch's orthogonal_, float32."""
    rows = []
    for shape, gain in [((3, 5), 1.0), ((5, 3), 1.0), ((20, 2, 3, 4), 2.0), ((64, 64), 0.5)]:
        w = _draw(shape, lambda t, g, gain=gain: nn.init.orthogonal_(t, gain, generator=g))
        flat = w.reshape(shape[0], -1)
        gram = flat @ flat.T if flat.shape[0] <= flat.shape[1] else flat.T @ flat
        error = float(np.abs(gram - gain**2 * np.eye(len(gram))).max())
        rows.append({"shape": list(shape), "gain": gain, "max_error": error})
    return rows


class Torch:
    """The translated checks' vocabulary, answered by torch.nn.init (tests' Tinyinit, for torch)."""

    calculate_gain = staticmethod(nn.init.calculate_gain)

    @staticmethod
    def _fill(shape, fill, seed=None):
        t = torch.empty(shape)
        g = None if seed is None else torch.Generator().manual_seed(seed)
        return (fill(t, g) if seed is not None else fill(t)).numpy()

    def uniform(self, shape, a, b, seed):
        return self._fill(shape, lambda t, g: nn.init.uniform_(t, a, b, generator=g), seed)

    def normal(self, shape, mean, std, seed):
        return self._fill(shape, lambda t, g: nn.init.normal_(t, mean, std, generator=g), seed)

    def trunc_normal(self, shape, mean, std, a, b, seed):
        def fill(t, g):
            return nn.init.trunc_normal_(t, mean, std, a, b, generator=g)

        return self._fill(shape, fill, seed)

    def constant(self, shape, val):
        return self._fill(shape, lambda t: nn.init.constant_(t, val))

    def ones(self, shape):
        return self._fill(shape, nn.init.ones_)

    def zeros(self, shape):
        return self._fill(shape, nn.init.zeros_)

    def eye(self, shape):
        return self._fill(shape, nn.init.eye_)

    def dirac(self, shape, groups=1):
        return self._fill(shape, lambda t: nn.init.dirac_(t, groups))

    def xavier_uniform(self, shape, seed, gain=1.0):
        return self._fill(shape, lambda t, g: nn.init.xavier_uniform_(t, gain, generator=g), seed)

    def xavier_normal(self, shape, seed, gain=1.0):
        return self._fill(shape, lambda t, g: nn.init.xavier_normal_(t, gain, generator=g), seed)

    def kaiming_uniform(self, shape, seed, a=0.0, mode="fan_in"):
        def fill(t, g):
            return nn.init.kaiming_uniform_(t, a=a, mode=mode, generator=g)

        return self._fill(shape, fill, seed)

    def kaiming_normal(self, shape, seed, a=0.0, mode="fan_in"):
        def fill(t, g):
            return nn.init.kaiming_normal_(t, a=a, mode=mode, generator=g)

        return self._fill(shape, fill, seed)

    def sparse(self, shape, sparsity, seed, std=0.01):
        torch.manual_seed(seed)  # sparse_'s randperm takes no generator
        return self._fill(shape, lambda t, g: nn.init.sparse_(t, sparsity, std, generator=g), seed)

    def orthogonal(self, shape, seed, gain=1.0):
        return self._fill(shape, lambda t, g: nn.init.orthogonal_(t, gain, generator=g), seed)


def translated_tests() -> dict[str, str]:
    """Each check of tests/torch_init_checks.py, run on torch: "passed" or the error."""
    verdicts = {}
    for name in sorted(translated.CHECKS):
        try:
            translated.run_check(name, Torch())
            verdicts[name] = "passed"
        except Exception:  # noqa: BLE001 - a failure is recorded, and reported below
            verdicts[name] = traceback.format_exc(limit=2).strip().splitlines()[-1]
    return verdicts


def golden() -> dict:
    gains = [
        {"nonlinearity": name, "param": None, "gain": nn.init.calculate_gain(name)}
        for name in NONLINEARITIES
        if name != "leaky_relu"
    ]
    gains += [
        {"nonlinearity": "leaky_relu", "param": s, "gain": nn.init.calculate_gain("leaky_relu", s)}
        for s in LEAKY_RELU_SLOPES
    ]
    gains += [
        {"nonlinearity": name, "param": p, "gain": nn.init.calculate_gain(name, p)}
        for name, p in IGNORED_PARAMS
    ]
    fans = [fan_entry(tuple(layer.weight.shape), repr(layer)) for layer in LAYERS]
    fans += [fan_entry(shape) for shape in SHAPES]
    fan_errors = [
        {"shape": list(shape), **error(lambda s=shape: fan_entry(s))} for shape in NO_FANS
    ]
    gain_errors = [
        {
            "nonlinearity": name,
            "param": p,
            **error(lambda n=name, p=p: nn.init.calculate_gain(n, p)),
        }
        for name, p in BAD_GAINS
    ]
    return {
        "torch_version": torch.__version__,
        "generated_by": "scripts/make_torch_golden.py",
        "gains": gains,
        "fans": fans,
        "fan_errors": fan_errors,
        "gain_errors": gain_errors,
        "uniform_scales": uniform_scales(),
        "default_layers": default_layers(),
        "exact_fills": exact_fills(),
        "orthogonality": orthogonality(),
        "translated_tests": translated_tests(),
        # torch.nn.init's public functions, without the deprecated aliases (no trailing _)
        "torch_functions": sorted(
            name
            for name in dir(nn.init)
            if not name.startswith("_")
            and callable(getattr(nn.init, name))
            and (name.endswith("_") or name == "calculate_gain")
        ),
    }


def main() -> None:
    data = golden()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    print(f"wrote {OUT}")
    failed = {k: v for k, v in data["translated_tests"].items() if v != "passed"}
    for name, error in failed.items():
        print(f"translated test {name} FAILED on torch: {error}")
    print(f"translated tests on torch: {len(data['translated_tests']) - len(failed)} passed")


if __name__ == "__main__":
    main()

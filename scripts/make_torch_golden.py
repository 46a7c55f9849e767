"""Write tests/fixtures/init_torch.json: torch's gain table and fan rule, as torch computes them.

The tests read only the JSON; torch is never a dependency of tinyinit or its tests.
To regenerate it (torch 2.13.0, CPU, in a virtualenv of its own):

    python3 -m venv /tmp/torchvenv
    /tmp/torchvenv/bin/pip install torch==2.13.0 numpy
    /tmp/torchvenv/bin/python scripts/make_torch_golden.py

The output is stable (sorted keys, fixed indentation), so a rerun with the same torch
changes nothing, and a diff after a torch upgrade shows exactly what torch changed.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from torch import nn

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "init_torch.json"

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
    }


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(golden(), indent=2, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

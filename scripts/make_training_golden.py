"""Write tests/fixtures/training_torch.json: an MLP's loss and gradients from torch autograd.

Each case is a small MLP (W shaped (out, in), b shaped (out,)), a batch x, integer labels, an
activation after every layer but the last, and the mean softmax cross-entropy: the inputs and
torch's loss and gradients, all in float64. tests/test_training.py checks that
tinyinit.training.loss_and_gradients, written by hand, gives the same numbers to 1e-8 relative.
The tests read only the JSON; torch is never a dependency of tinyinit or its tests.

To regenerate it (torch 2.13.0, CPU, in a virtualenv of its own):

    python3 -m venv /tmp/torchvenv
    /tmp/torchvenv/bin/pip install torch==2.13.0 numpy
    /tmp/torchvenv/bin/python scripts/make_training_golden.py

Inputs come from numpy's default_rng with fixed seeds and floats are written with repr (exact
round trip), so a rerun with the same torch changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "training_torch.json"

# torch's own functions, not formulas copied from tinyinit: the point is an independent check.
ACTIVATIONS = {
    "linear": lambda z: z,
    "relu": torch.relu,
    "leaky_relu": lambda z: F.leaky_relu(z, 0.01),
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "selu": F.selu,
    "gelu": F.gelu,  # exact, with erf
    "silu": F.silu,
}

# (name, layer sizes [d_in, ..., d_out], batch size, weight scale)
NETWORKS = [
    ("three_layers", [5, 7, 6, 4], 8, 0.8),
    ("one_layer", [6, 3], 5, 1.0),
    ("deep_narrow", [3, 4, 4, 4, 4, 4, 5], 6, 1.2),
    ("large_logits", [4, 6, 3], 4, 6.0),  # softmax far from uniform: the stable path matters
]


def case(name: str, sizes: list[int], batch: int, scale: float, activation: str, seed: int):
    rng = np.random.default_rng(seed)
    params = [
        (
            rng.normal(size=(n_out, n_in)) * scale / np.sqrt(n_in),
            rng.normal(size=n_out) * 0.1,
        )
        for n_in, n_out in zip(sizes[:-1], sizes[1:])
    ]
    x = rng.normal(size=(batch, sizes[0]))
    labels = rng.integers(0, sizes[-1], size=batch)

    tensors = [
        (torch.tensor(W, requires_grad=True), torch.tensor(b, requires_grad=True))
        for W, b in params
    ]
    h = torch.tensor(x)
    phi = ACTIVATIONS[activation]
    for k, (W, b) in enumerate(tensors):
        h = h @ W.T + b
        if k < len(tensors) - 1:
            h = phi(h)
    loss = F.cross_entropy(h, torch.tensor(labels))
    loss.backward()
    return {
        "network": name,
        "activation": activation,
        "params": [[W.tolist(), b.tolist()] for W, b in params],
        "x": x.tolist(),
        "labels": labels.tolist(),
        "loss": loss.item(),
        "grads": [[W.grad.tolist(), b.grad.tolist()] for W, b in tensors],
    }


def main() -> None:
    torch.set_default_dtype(torch.float64)
    cases = [
        case(name, sizes, batch, scale, activation, seed)
        for seed, ((name, sizes, batch, scale), activation) in enumerate(
            (network, activation) for network in NETWORKS for activation in ACTIVATIONS
        )
    ]
    text = json.dumps({"torch": torch.__version__, "cases": cases}, indent=1, sort_keys=True)
    OUT.write_text(text + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")


if __name__ == "__main__":
    main()

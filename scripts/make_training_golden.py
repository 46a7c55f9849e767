"""Write tests/fixtures/training_torch.json: an MLP's loss and gradients from torch autograd.

Each case is a small MLP (W shaped (out, in), b shaped (out,)), a batch x, integer labels, an
activation after every layer but the last, and the mean softmax cross-entropy: the inputs and
torch's loss and gradients, all in float64. tests/networks/test_mlp.py checks that
tinyinit.networks.mlp.loss_and_gradients, written by hand, gives the same numbers to 1e-8
relative.
The norm cases put torch's BatchNorm1d or LayerNorm (with random gamma and beta) after every
hidden layer's affine map: their gradients too, BatchNorm's running statistics after the
training forward pass, and the logits in evaluation (tests/networks/test_normalization.py reads
them).
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


NORM_NETWORKS = [
    ("three_layers", [5, 7, 6, 4], 8, 0.8),
    ("large_scale", [4, 6, 6, 3], 5, 30.0),  # normalization undoes the weights' scale
]
NORM_ACTIVATIONS = ["relu", "tanh", "gelu"]


def norm_case(name, sizes, batch, scale, activation, kind, seed):
    rng = np.random.default_rng(1000 + seed)
    params = [
        (rng.normal(size=(n_out, n_in)) * scale / np.sqrt(n_in), rng.normal(size=n_out) * 0.1)
        for n_in, n_out in zip(sizes[:-1], sizes[1:])
    ]
    affine = [(1 + 0.3 * rng.normal(size=n), 0.2 * rng.normal(size=n)) for n in sizes[1:-1]]
    x = rng.normal(size=(batch, sizes[0]))
    labels = rng.integers(0, sizes[-1], size=batch)

    linears = [torch.nn.Linear(n_in, n_out) for n_in, n_out in zip(sizes[:-1], sizes[1:])]
    norms = [
        torch.nn.BatchNorm1d(n) if kind == "batch" else torch.nn.LayerNorm(n) for n in sizes[1:-1]
    ]
    with torch.no_grad():
        for layer, (W, b) in zip(linears, params):
            layer.weight.copy_(torch.tensor(W))
            layer.bias.copy_(torch.tensor(b))
        for layer, (gamma, beta) in zip(norms, affine):
            layer.weight.copy_(torch.tensor(gamma))
            layer.bias.copy_(torch.tensor(beta))
    phi = ACTIVATIONS[activation]

    def run(x):
        h = torch.tensor(x)
        for k, layer in enumerate(linears):
            h = layer(h)
            if k < len(norms):
                h = phi(norms[k](h))
        return h

    loss = F.cross_entropy(run(x), torch.tensor(labels))  # training mode: the batch's statistics
    loss.backward()
    for layer in norms:
        layer.eval()
    with torch.no_grad():
        eval_logits = run(x)
    return {
        "network": name,
        "activation": activation,
        "norm": kind,
        "params": [[W.tolist(), b.tolist()] for W, b in params],
        "affine": [[g.tolist(), b.tolist()] for g, b in affine],
        "x": x.tolist(),
        "labels": labels.tolist(),
        "loss": loss.item(),
        "grads": [[m.weight.grad.tolist(), m.bias.grad.tolist()] for m in linears],
        "affine_grads": [[m.weight.grad.tolist(), m.bias.grad.tolist()] for m in norms],
        "running": [[m.running_mean.tolist(), m.running_var.tolist()] for m in norms]
        if kind == "batch"
        else [],
        "eval_logits": eval_logits.tolist(),
    }


def main() -> None:
    torch.set_default_dtype(torch.float64)
    cases = [
        case(name, sizes, batch, scale, activation, seed)
        for seed, ((name, sizes, batch, scale), activation) in enumerate(
            (network, activation) for network in NETWORKS for activation in ACTIVATIONS
        )
    ]
    norm_cases = [
        norm_case(name, sizes, batch, scale, activation, kind, seed)
        for seed, ((name, sizes, batch, scale), activation, kind) in enumerate(
            (network, activation, kind)
            for network in NORM_NETWORKS
            for activation in NORM_ACTIVATIONS
            for kind in ("batch", "layer")
        )
    ]
    golden = {"torch": torch.__version__, "cases": cases, "norm_cases": norm_cases}
    OUT.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(cases)} cases and {len(norm_cases)} with normalization to {OUT}")


if __name__ == "__main__":
    main()

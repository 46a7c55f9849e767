"""A small pre-LN decoder in numpy, initialized the right way with tinyinit. Forward only.

Per block, as in GPT-2 (pre-LN), with torch's Linear layout W: (out, in), y = x W^T + b:

    x <- x + W_O attn(LN_1(x))                    attention: Xavier-uniform Q, K, V
    x <- x + W_down gelu(W_up LN_2(x))            W_up: Kaiming (fan_in, gain sqrt 2)

(gelu in GPT-2's tanh form: tinyinit.core.activations.gelu(x, approximate="tanh")).

W_O and W_down add into the residual stream: std base_std / sqrt(2N). Biases 0,
LayerNorm gains 1 and biases 0, embeddings N(0, base_std**2) (a lookup has no
fan-in), a final LayerNorm, and logits from the tied token embedding.

Every matrix is drawn from one PCG32 in the order of `named_parameters()`:
wte, wpe, then per block q, k, v, attn.c_proj, mlp.c_fc, mlp.c_proj. Constants
(gains, biases) draw nothing. Same seed, same config: the same bytes.

Weights are float32 like every parameter; the forward pass computes in float64.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ..core.activations import gelu
from ..core.arguments import (
    KindError,
    generator,
    instance,
    integer,
    number,
    one_of,
    real_array,
    shown,
)
from ..core.distributions import uniforms
from ..core.init import (
    calculate_gain,
    kaiming_normal,
    kaiming_std,
    normal_init,
    scaled_residual_std,
    xavier_std,
    xavier_uniform,
)
from ..physics.mean_field import activation_mean_square
from ..physics.residual import normalize
from .mlp import cross_entropy
from .residual_audit import GPT2_PATTERNS, NAMINGS

__all__ = [
    "GPTConfig",
    "GPTTrace",
    "TinyGPT",
    "gelu_mean_square",
    "gpt_forward",
    "init_gpt_params",
    "init_rule",
    "layer_norm",
    "next_token_loss",
    "parameter_shapes",
    "random_tokens",
]

# --- GELU and what it does to a variance ---------------------------------------------------


def gelu_mean_square(var: float, approximate: str = "none") -> float:
    """E[gelu(z)**2] for z ~ N(0, var): what the next layer's fan-in sum sees.

    ReLU keeps exactly var / 2; GELU keeps a little less, 0.461 var at var = 2.
    The exact form is tinyinit.physics.mean_field.activation_mean_square("gelu", var).

    >>> round(gelu_mean_square(2.0), 4)
    0.9221
    """
    var = number("var", var, minimum=0)
    if one_of("approximate", approximate, ("none", "tanh")) == "none":
        return activation_mean_square("gelu", var)
    return activation_mean_square(lambda z: gelu(z, approximate), var)


# --- configuration and initialization ------------------------------------------------------

INIT_SCHEMES = {
    "tinyinit": "Xavier-uniform Q/K/V, Kaiming W_up, base_std/sqrt(2N) on W_O and W_down",
    "unscaled": "as tinyinit, but W_O and W_down at base_std: no 1/sqrt(2N)",
    "flat": "every matrix N(0, base_std^2), no residual scaling (a naive 0.02)",
    "unit": "every matrix N(0, 1)",
}


@dataclass(frozen=True)
class GPTConfig:
    """Sizes and the init scheme of a TinyGPT (names as in nanoGPT).

    Each of the n_layer blocks has n_head heads of size n_embd / n_head, an MLP of
    width 4 n_embd, and (init "tinyinit") output projections of std
    base_std / sqrt(2 n_layer); init is a key of INIT_SCHEMES. The fields keep nanoGPT's
    (GPT-2's) names, so that a config reads as theirs: n_layer is what the rest of the
    package calls n_layers, the number of blocks.

    >>> config = GPTConfig(n_layer=2, n_head=2, n_embd=16)
    >>> config.n_embd // config.n_head, parameter_shapes(config)["h.0.mlp.c_fc.weight"]
    (8, (64, 16))
    >>> init_rule("residual_out", config)             # 0.02 / sqrt(2 * 2)
    ('N(0, (0.02/sqrt(2N))^2)', 0.01)
    >>> GPTConfig(n_head=4, n_embd=10)
    Traceback (most recent call last):
    ...
    ValueError: n_embd must be a multiple of n_head, got n_embd=10, n_head=4
    """

    vocab_size: int = 256
    block_size: int = 32
    n_layer: int = 12
    n_head: int = 4
    n_embd: int = 64
    base_std: float = 0.02
    init: str = "tinyinit"

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            integer(name, getattr(self, name), minimum=1)
        number("base_std", self.base_std, minimum=0)
        one_of("init", self.init, INIT_SCHEMES)
        if self.n_embd % self.n_head:
            raise ValueError(
                f"n_embd must be a multiple of n_head, got n_embd={self.n_embd}, "
                f"n_head={self.n_head}"
            )


# What a parameter does: the keys of init_rule.
ROLES = ("bias", "ln_gain", "embedding", "qkv", "mlp_up", "residual_out")


def _config(config) -> GPTConfig:
    return instance("config", config, GPTConfig, "a GPTConfig")


def _role(name: str) -> str:
    """What a parameter does, from its name: the key of the init rule it gets."""
    if name.endswith(".bias"):
        return "bias"
    if ".ln_" in name or name.startswith("ln_f"):
        return "ln_gain"
    if name.startswith(("wte", "wpe")):
        return "embedding"
    if any(re.search(pattern, name) for pattern in GPT2_PATTERNS.values()):
        return "residual_out"
    if "attn." in name:
        return "qkv"
    return "mlp_up"


def init_rule(role: str, config: GPTConfig) -> tuple[str, object]:
    """(description, target std) of a parameter role under config.init.

    >>> init_rule("residual_out", GPTConfig(n_layer=12))
    ('N(0, (0.02/sqrt(2N))^2)', 0.004082482904638631)
    """
    one_of("role", role, ROLES)
    base, scheme = _config(config).base_std, config.init
    d = config.n_embd
    if role == "bias":
        return "zeros", 0.0
    if role == "ln_gain":
        return "ones", 0.0
    if scheme == "unit":
        return "N(0, 1)", 1.0
    if scheme == "flat" or role == "embedding":
        return f"N(0, {base:g}^2)", base
    if role == "qkv":
        return "Xavier-uniform, gain 1", xavier_std(d, d)
    if role == "mlp_up":
        return "Kaiming-normal, fan_in, gain sqrt 2", kaiming_std(d, calculate_gain("relu"))
    if scheme == "unscaled":
        return f"N(0, {base:g}^2)", base
    return f"N(0, ({base:g}/sqrt(2N))^2)", scaled_residual_std(base, config.n_layer)


def _linear_shapes(weight: str, out: int, fan_in: int) -> dict[str, tuple[int, ...]]:
    return {weight: (out, fan_in), weight.removesuffix("weight") + "bias": (out,)}


def parameter_shapes(config: GPTConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape, in the order they are drawn.

    GPT-2's names (residual_audit.NAMINGS["gpt2"], as nanoGPT), except that attention's
    query, key and value are three (d, d) matrices q_proj, k_proj, v_proj, each
    with its own Xavier fans, where GPT-2 fuses them into one c_attn.

    >>> list(parameter_shapes(GPTConfig(n_layer=1)))[:3]
    ['wte.weight', 'wpe.weight', 'h.0.ln_1.weight']
    """
    d, h = _config(config).n_embd, 4 * config.n_embd
    names = NAMINGS["gpt2"]
    shapes = {"wte.weight": (config.vocab_size, d), "wpe.weight": (config.block_size, d)}
    for i in range(config.n_layer):
        p = f"h.{i}."
        shapes |= {p + "ln_1.weight": (d,), p + "ln_1.bias": (d,)}
        for name in ("q_proj", "k_proj", "v_proj"):
            shapes |= _linear_shapes(p + f"attn.{name}.weight", d, d)
        shapes |= _linear_shapes(names["attn"].format(i=i), d, d)
        shapes |= {p + "ln_2.weight": (d,), p + "ln_2.bias": (d,)}
        shapes |= _linear_shapes(names["mlp_in"].format(i=i), h, d)
        shapes |= _linear_shapes(names["mlp"].format(i=i), d, h)
    shapes |= {"ln_f.weight": (d,), "ln_f.bias": (d,)}
    return shapes


def init_gpt_params(config: GPTConfig, rng) -> dict[str, np.ndarray]:
    """All parameters of a TinyGPT, float32, drawn from rng in parameter_shapes order.

    >>> from tinyinit import PCG32
    >>> params = init_gpt_params(GPTConfig(n_layer=2), PCG32(0))
    >>> round(float(params["h.1.mlp.c_proj.weight"].std()), 4)   # 0.02 / sqrt(4)
    0.0099
    """
    _config(config)
    generator("rng", rng)
    params = {}
    for name, shape in parameter_shapes(config).items():
        kind = _role(name)
        std = init_rule(kind, config)[1]
        if kind == "bias":
            params[name] = np.zeros(shape, np.float32)
        elif kind == "ln_gain":
            params[name] = np.ones(shape, np.float32)
        elif config.init in ("tinyinit", "unscaled") and kind == "qkv":
            params[name] = xavier_uniform(shape, 1.0, rng)
        elif config.init in ("tinyinit", "unscaled") and kind == "mlp_up":
            params[name] = kaiming_normal(shape, "fan_in", "relu", rng)
        else:
            params[name] = normal_init(shape, std, rng)
    return params


# --- the forward pass ----------------------------------------------------------------------


@dataclass(frozen=True)
class GPTTrace:
    """What a forward pass records, as float64 variances (np.var over every entry).

    stream:      (N + 1,) the residual stream after the embeddings and after each block
    attn_logits: (N,) the attention scores q.k / sqrt(d_head) (causal entries only)
    attn_add:    (N,) the attention sublayer's addition to the stream
    mlp_preact:  (N,) W_up LN_2(x), the GELU's input
    mlp_add:     (N,) the MLP sublayer's addition to the stream
    logits:      (batch, seq, vocab) from the tied token embedding

    >>> from tinyinit import PCG32
    >>> model = TinyGPT(GPTConfig(vocab_size=8, block_size=4, n_layer=2, n_head=2, n_embd=4),
    ...                 PCG32(0))
    >>> model(np.array([[1, 2, 3]])).attn_add.shape
    (2,)
    """

    stream: np.ndarray
    attn_logits: np.ndarray
    attn_add: np.ndarray
    mlp_preact: np.ndarray
    mlp_add: np.ndarray
    logits: np.ndarray


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """LN(x) = normalize(x) * weight + bias, over the last axis (eps 1e-5, as torch).

    >>> layer_norm(np.array([[1.0, 3.0]]), np.array([2.0, 2.0]), np.array([0.0, 1.0]))
    array([[-1.99999,  2.99999]])
    """
    normalized = normalize(x)
    features = normalized.shape[-1:]
    weight, bias = real_array("weight", weight), real_array("bias", bias)
    for name, a in (("weight", weight), ("bias", bias)):
        if a.shape != features:
            raise ValueError(
                f"{name} must have shape {features}, one per feature of x, got {shown(a)}"
            )
    return normalized * weight + bias


def _linear(x, params, name):
    return x @ params[name + ".weight"].T.astype(np.float64) + params[name + ".bias"]


def _causal_self_attention(x, params, prefix, n_head):
    """Multi-head causal attention of x (B, T, d); returns (output before W_O's add, scores)."""
    B, T, d = x.shape
    dh = d // n_head

    def heads(name):  # (B, T, d) -> (B, H, T, dh)
        return _linear(x, params, prefix + name).reshape(B, T, n_head, dh).transpose(0, 2, 1, 3)

    q, k, v = heads("q_proj"), heads("k_proj"), heads("v_proj")
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)
    causal = np.tril(np.ones((T, T), dtype=bool))
    att = np.where(causal, scores, -np.inf)
    att = np.exp(att - att.max(axis=-1, keepdims=True))
    att /= att.sum(axis=-1, keepdims=True)
    y = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, d)
    return _linear(y, params, prefix + "c_proj"), scores[..., causal]


def gpt_forward(params: dict[str, np.ndarray], config: GPTConfig, idx: np.ndarray) -> GPTTrace:
    """Run token ids idx (batch, seq) through the model, recording the variances.

    >>> from tinyinit import PCG32
    >>> config = GPTConfig(vocab_size=8, block_size=4, n_layer=1, n_head=2, n_embd=4)
    >>> trace = gpt_forward(init_gpt_params(config, PCG32(0)), config, np.array([[1, 2, 3]]))
    >>> trace.logits.shape, trace.stream.shape
    ((1, 3, 8), (2,))
    """
    _config(config)
    _params(params, config)
    idx = _tokens("idx", idx, config.vocab_size, ndim=2)
    B, T = idx.shape
    if not 1 <= T <= config.block_size:
        raise ValueError(f"idx must have 1 to block_size = {config.block_size} columns, got {T}")
    x = params["wte.weight"][idx].astype(np.float64) + params["wpe.weight"][:T]
    rec = {key: [] for key in ("attn_logits", "attn_add", "mlp_preact", "mlp_add")}
    stream = [np.var(x)]
    for i in range(config.n_layer):
        p = f"h.{i}."
        h = layer_norm(x, params[p + "ln_1.weight"], params[p + "ln_1.bias"])
        attn, scores = _causal_self_attention(h, params, p + "attn.", config.n_head)
        x = x + attn
        h = layer_norm(x, params[p + "ln_2.weight"], params[p + "ln_2.bias"])
        preact = _linear(h, params, p + "mlp.c_fc")
        mlp = _linear(gelu(preact, approximate="tanh"), params, p + "mlp.c_proj")
        x = x + mlp
        for key, value in zip(rec, (scores, attn, preact, mlp)):
            rec[key].append(np.var(value))
        stream.append(np.var(x))
    x = layer_norm(x, params["ln_f.weight"], params["ln_f.bias"])
    logits = x @ params["wte.weight"].T.astype(np.float64)
    return GPTTrace(np.array(stream), *(np.array(v) for v in rec.values()), logits)


def next_token_loss(logits: np.ndarray, targets: np.ndarray) -> float:
    """Mean -log softmax(logits)[target] over every position; ln(vocab_size) for uniform ones.

    logits (..., vocab), targets (...): tinyinit.networks.mlp.cross_entropy's loss, its
    gradient left out, over the positions flattened into one batch.

    >>> round(next_token_loss(np.zeros((1, 2, 4)), np.array([[0, 3]])), 6)   # ln 4
    1.386294
    """
    logits = real_array("logits", logits)
    if logits.ndim < 2 or not logits.size:
        raise ValueError(f"logits must be (..., vocab), at least 2-D, got {shown(logits)}")
    vocab = logits.shape[-1]
    targets = _tokens("targets", targets, vocab, ndim=logits.ndim - 1, whose="logits'")
    if targets.shape != logits.shape[:-1]:
        raise ValueError(
            f"targets must have shape {logits.shape[:-1]}, one per position of logits, got "
            f"{targets.shape}"
        )
    return cross_entropy(logits.reshape(-1, vocab), np.ravel(targets))[0]


def random_tokens(rng, batch: int, seq: int, vocab_size: int) -> np.ndarray:
    """(batch, seq) token ids, uniform over the vocabulary: floor(u * vocab_size).

    >>> from tinyinit import PCG32
    >>> random_tokens(PCG32(0), 1, 4, 10)
    array([[2, 4, 6, 3]])
    """
    generator("rng", rng)
    batch, seq = integer("batch", batch, minimum=1), integer("seq", seq, minimum=1)
    vocab_size = integer("vocab_size", vocab_size, minimum=1)
    return (uniforms(rng, batch * seq) * vocab_size).astype(np.int64).reshape(batch, seq)


def _tokens(name: str, ids, vocab_size: int, ndim: int, whose: str = "config's") -> np.ndarray:
    """ids checked: an integer array of ndim dimensions, every id in 0 .. vocab_size - 1 (a -1
    would silently read the last row of the embedding)."""
    accepted = (
        f"an integer array of {ndim} dimensions, ids from 0 to {vocab_size - 1} (the {whose} "
        f"vocabulary)"
    )
    if isinstance(ids, (str, bytes)) or ids is None:
        raise KindError(f"{name} must be {accepted}, got {shown(ids)}")
    ids = np.asarray(ids)
    if ids.dtype.kind not in "iu":
        raise KindError(f"{name} must be {accepted}, got {shown(ids)}")
    if ids.ndim != ndim or not ids.size or ids.min() < 0 or ids.max() >= vocab_size:
        raise ValueError(f"{name} must be {accepted}, got {shown(ids)}")
    return ids


def _params(params, config: GPTConfig) -> None:
    """params checked: every parameter of config, by name, with its shape."""
    instance("params", params, dict, "a dict of parameters, as init_gpt_params gives")
    for name, shape in parameter_shapes(config).items():
        if name not in params or np.shape(params[name]) != shape:
            got = np.shape(params[name]) if name in params else "nothing"
            raise ValueError(f"params must hold {name} of shape {shape} for this config, got {got}")
        if np.asarray(params[name]).dtype.kind != "f":
            raise KindError(f"params must hold float arrays, got {name} {shown(params[name])}")


class TinyGPT:
    """A pre-LN decoder: parameters drawn once from rng, then forward passes.

    >>> from tinyinit import PCG32
    >>> model = TinyGPT(GPTConfig(n_layer=2), PCG32(0))
    >>> next(iter(model.named_parameters()))[0]
    'wte.weight'
    """

    def __init__(self, config: GPTConfig, rng):
        self.config = _config(config)
        self.params = init_gpt_params(config, rng)

    def named_parameters(self):
        """(name, float32 array) pairs in draw order, as torch's Module.named_parameters()."""
        return iter(self.params.items())

    @property
    def n_params(self) -> int:
        return sum(p.size for p in self.params.values())

    def __call__(self, idx: np.ndarray) -> GPTTrace:
        return gpt_forward(self.params, self.config, idx)

    def init_table(self) -> list[tuple[str, tuple[int, ...], str, float, float]]:
        """(name, shape, rule, target std, measured std) for block 0 and the rest."""
        rows = []
        for name, p in self.params.items():
            if name.startswith("h.") and not name.startswith("h.0."):
                continue
            rule, std = init_rule(_role(name), self.config)
            rows.append((name, p.shape, rule, std, float(np.std(p))))
        return rows

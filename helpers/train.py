"""A tiny decoder trained by hand in numpy: train short, test long (notebook 13_train_short).

Everything a model needs to learn, written out: the task (an order-2 Markov chain), the
model (decoder-only, pre-LayerNorm, 2 layers, 4 heads, d_model 64, a 4x GELU MLP, an untied
output), its forward pass and its backward pass by hand, one function per layer with its
gradient beside it, and Adam with warm-up, cosine decay and gradient clipping.

Read a layer as its formula (the comment above each line), then the same line backwards in
its ``*_backward`` twin. Shapes: ``B`` sequences, ``T`` positions, ``d`` model width, ``H``
heads of width ``dh = d / H``, ``V`` tokens, ``F = 4 d`` the MLP's width.

The positional schemes (``Config.scheme``):

- ``"none"``: no positions at all (NoPE; order leaks in through the causal mask only);
- ``"sinusoidal"``: ``x_t += PE[t]``, the table of Vaswani et al. (``sinusoidal_pe``);
- ``"learned"``: ``x_t += P[t]``, a trained table of ``train_len`` rows; a position past it
  reads the last row (clamped: the table has nothing there);
- ``"rope"``: queries and keys rotated by their position (``apply_rope``, Su et al.);
- ``"alibi"``: ``-slope_h * (i - j)`` added to the scores (``alibi_bias``, Press et al.);
- ``"t5"``: a trained scalar per head and per bucket of ``j - i`` added to the scores, one
  table shared by the layers (``t5_bucket``, Raffel et al.), ``max_distance`` a setting.

The encodings themselves are callables (``Encodings``): the learner's own functions of the
earlier notebooks, or, when none is given, the reference's.

Training runs on one BLAS thread (``threadpoolctl``): on a small CPU, two threads fighting
over matrices this small were several times slower than one. Two cores train two models at
once instead (``train_many``: each in a process of its own, a fork of the caller). Everything
is deterministic for a seed on one machine: the data, the initial weights and the order of
operations, whichever process trains a model.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from helpers.session import taught_in
from helpers.smoothing import BREAK_WINDOW, smooth  # noqa: F401 - train.smooth in 13's cells

SCHEMES = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")
TASKS = ("chain", "needle")
BOS_NAME = "BOS"
LN_EPS = 1e-5
GELU_C = math.sqrt(2.0 / math.pi)  # the tanh approximation of GELU


# ----------------------------------------------------------------------------------------
# Settings


@dataclass(frozen=True)
class Config:
    """One model, one task, one training run."""

    scheme: str = "none"
    vocab: int = 16  # V: the chain's tokens; the input also has BOS (token V)
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    mlp_mult: int = 4
    train_len: int = 32
    batch: int = 16
    steps: int = 1500
    lr: float = 3e-3
    warmup: int = 100
    min_lr: float = 3e-4  # the cosine ends here
    clip: float = 1.0  # the largest global gradient norm
    beta1: float = 0.9
    beta2: float = 0.99
    init_std: float = 0.02  # the linears' initial weights: N(0, init_std)
    seed: int = 0
    task_seed: int = 0  # the chain's table (the same task for every model)
    t5_buckets: int = 32
    t5_max_distance: int | None = None  # None: the training length
    rope_base: float = 10000.0
    sinusoidal_base: float = 10000.0
    # "chain": predict every next token of the chain; "needle": the far probe, one answer
    # per sequence, the key token near its start (needle_sequences)
    task: str = "chain"

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {SCHEMES}, got {self.scheme!r}")
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ValueError(
                f"d_model / n_heads must be an even integer, got {self.d_model} / {self.n_heads}"
            )

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @property
    def max_distance(self) -> int:
        return self.train_len if self.t5_max_distance is None else int(self.t5_max_distance)


@dataclass
class Encodings:
    """The position functions the models use (None: the reference's, loaded when needed).

    Their signatures are the course's: ``sinusoidal_pe(max_len, d, base)``,
    ``apply_rope(vec, pos, base)``, ``alibi_bias(n_heads, seq_len, causal)``,
    ``t5_bucket(rel, bidirectional, num_buckets, max_distance)``.
    """

    sinusoidal_pe: Callable | None = None
    apply_rope: Callable | None = None
    alibi_bias: Callable | None = None
    t5_bucket: Callable | None = None
    rope_thetas: np.ndarray | None = None  # RoPE made longer: these rates, not apply_rope's
    rope_scale: float = 1.0  # YaRN's attention factor, on q and k both
    # a temperature on the queries, for reading only (no backward): query i's scores times
    # max(1, log(i + 1) / log(log_scale_len)) (log-length scaling) ...
    log_scale_len: int | None = None
    # ... and times head_temps[layer, head] (a temperature per head, Wang et al. 2024)
    head_temps: np.ndarray | None = None

    def get(self, name: str) -> Callable:
        fn = getattr(self, name)
        if fn is not None:
            return fn
        try:
            from helpers import reference
        except ImportError as exc:  # the classroom build ships no reference
            raise RuntimeError(
                f"no {name} given and this installation has no reference: "
                "write it in the recap cell"
            ) from exc
        return getattr(reference, name)


# ----------------------------------------------------------------------------------------
# The task: an order-2 Markov chain with a BOS token


def markov_table(vocab: int = 16, seed: int = 0, uniform: float = 0.02) -> np.ndarray:
    """A sparse order-2 transition table, ``table[a, b, c] = P(next = c | a, b)``.

    Each context (a, b) has 2 to 4 likely successors with Dirichlet weights; a little
    uniform mass (``uniform``) makes the chain irreducible and aperiodic.
    # shape: (V, V, V), rows summing to 1
    """
    rng = np.random.default_rng(seed)
    table = np.zeros((vocab, vocab, vocab))
    for a in range(vocab):
        for b in range(vocab):
            k = int(rng.integers(2, 5))
            nexts = rng.choice(vocab, size=k, replace=False)
            table[a, b, nexts] = rng.dirichlet(np.ones(k))
    return (1.0 - uniform) * table + uniform / vocab


def pair_stationary(table: np.ndarray) -> np.ndarray:
    """The stationary distribution of the pair chain (a, b) -> (b, c).
    # shape: (V, V)
    """
    V = table.shape[0]
    # P[(a, b), (b, c)] = table[a, b, c]
    P = np.zeros((V, V, V, V))
    for b in range(V):
        P[:, b, b, :] = table[:, b, :]
    P = P.reshape(V * V, V * V)
    # pi (P - I) = 0 with sum(pi) = 1: one equation replaced by the sum
    A = P.T - np.eye(V * V)
    A[-1, :] = 1.0
    rhs = np.zeros(V * V)
    rhs[-1] = 1.0
    pi = np.clip(np.linalg.solve(A, rhs), 0.0, None)
    return (pi / pi.sum()).reshape(V, V)


def sample_sequences(
    table: np.ndarray, n: int, length: int, rng: np.random.Generator
) -> np.ndarray:
    """``n`` chains of ``length`` tokens, the first pair from the stationary distribution.
    # shape: (n, length), int64
    """
    V = table.shape[0]
    pi = pair_stationary(table).ravel()
    out = np.empty((n, length), dtype=np.int64)
    first = rng.choice(V * V, size=n, p=pi)
    out[:, 0], out[:, 1] = first // V, first % V
    cum = np.cumsum(table, axis=-1)  # (V, V, V)
    for t in range(2, length):
        u = rng.random(n)[:, None]
        rows = cum[out[:, t - 2], out[:, t - 1]]  # (n, V)
        out[:, t] = np.minimum((u > rows).sum(axis=1), V - 1)
    return out


def inputs_targets(seqs: np.ndarray, vocab: int) -> tuple[np.ndarray, np.ndarray]:
    """Inputs ``[BOS, x0, ..., x_{T-2}]`` and targets ``[x0, ..., x_{T-1}]``: position t
    predicts token t having seen the ones before it."""
    bos = np.full((seqs.shape[0], 1), vocab, dtype=np.int64)
    return np.concatenate([bos, seqs[:, :-1]], axis=1), seqs


# The far probe: a needle in the chain. The key token KEY_c (one of V tokens of its own, c a
# chain token) sits at one of the positions 1 .. NEEDLE_LAST, the query token at the last
# position, and the answer at the query is c. Everything else is the chain, a haystack that
# says nothing about c: only the key does, however far back it is.
NEEDLE_LAST = 8


def input_tokens(cfg: Config) -> int:
    """How many tokens the model reads: the chain's V and BOS (token V); for the far probe
    also its query (token V + 1) and the keys KEY_c (token V + 2 + c)."""
    return 2 * cfg.vocab + 2 if cfg.task == "needle" else cfg.vocab + 1


def needle_sequences(
    cfg: Config, n: int, length: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` inputs of the far probe, ``length`` tokens each: BOS, the chain, the query.

    inputs[:, 0] = BOS, inputs[:, length - 1] = QUERY, inputs[b, key[b]] = KEY_answer[b]
    with key[b] uniform in 1 .. NEEDLE_LAST, answer[b] uniform in 0 .. V - 1, drawn apart
    from the chain; every other position holds the chain's tokens in order. The query is
    ``length - 1 - key`` positions after the key: 23 to 30 at length 32, more than 32 from
    length 64 on.
    # shapes: inputs (n, length), answer (n,), key (n,)
    """
    V = cfg.vocab
    last = min(NEEDLE_LAST, length - 2)
    if last < 1:
        raise ValueError(f"a needle sequence needs at least 3 tokens, got length {length}")
    table = markov_table(V, cfg.task_seed)
    inputs = np.empty((n, length), dtype=np.int64)
    inputs[:, 0] = V
    inputs[:, 1:] = sample_sequences(table, n, length - 1, rng)
    inputs[:, -1] = V + 1
    answer = rng.integers(0, V, size=n)
    key = rng.integers(1, last + 1, size=n)
    inputs[np.arange(n), key] = V + 2 + answer
    return inputs, answer, key


def best_loss_per_position(entropies: tuple[float, float, float], length: int) -> np.ndarray:
    """The exact best expected loss at each position: h0, h1, then h_rest.
    # shape: (length,)
    """
    h0, h1, h_rest = entropies
    best = np.full(length, float(h_rest))
    best[0] = h0
    if length > 1:
        best[1] = h1
    return best


# ----------------------------------------------------------------------------------------
# Layers: each forward returns (output, cache); each backward takes d(output) and the cache


def sum_last(x):
    # sum_k x_k over the last axis, kept as (..., 1): a product with a column of ones, which
    # BLAS does several times faster than numpy's sum over rows of 32 or 64 numbers
    return x @ np.ones((x.shape[-1], 1), dtype=x.dtype)


def mean_last(x):
    # mean_k x_k over the last axis, kept as (..., 1)
    return sum_last(x) * (1.0 / x.shape[-1])


def rows_times(x, W):
    # x W over every leading axis at once                   x (..., n), W (n, m)
    # as one product of a (rows, n) matrix: numpy multiplies a (B, T, n) array by W as B
    # products of (T, n), a quarter slower here
    return (x.reshape(-1, x.shape[-1]) @ W).reshape(*x.shape[:-1], W.shape[-1])


def linear(x, W, b=None):
    # y = x W + b                                  x (..., n_in), W (n_in, n_out)
    y = rows_times(x, W)
    if b is not None:
        y += b
    return y, x


def linear_backward(dy, x, W, has_bias=True):
    # dW = x^T dy (summed over every leading axis), db = sum dy, dx = dy W^T
    x2, dy2 = x.reshape(-1, x.shape[-1]), dy.reshape(-1, dy.shape[-1])
    dW = x2.T @ dy2  # (n_in, n_out)
    db = dy2.sum(axis=0) if has_bias else None  # (n_out,)
    dx = rows_times(dy, W.T)  # (..., n_in)
    return dx, dW, db


def layer_norm(x, g, b):
    # mu = mean_k x_k,  var = mean_k (x_k - mu)^2          (..., 1)
    mu = mean_last(x)
    xc = x - mu
    var = mean_last(xc * xc)
    # rstd = 1 / sqrt(var + eps)                            (..., 1)
    rstd = 1.0 / np.sqrt(var + LN_EPS)
    # xhat = (x - mu) rstd,  y = g * xhat + b               (..., d)
    xhat = xc * rstd
    return g * xhat + b, (xhat, rstd, g)


def layer_norm_backward(dy, cache):
    xhat, rstd, g = cache
    # dg = sum dy * xhat,  db = sum dy                      (d,)
    dg = (dy * xhat).reshape(-1, xhat.shape[-1]).sum(axis=0)
    db = dy.reshape(-1, dy.shape[-1]).sum(axis=0)
    # dxhat = dy * g
    dxhat = dy * g
    # dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat * xhat))    (..., d)
    dx = dxhat - mean_last(dxhat)
    dx -= xhat * mean_last(dxhat * xhat)
    dx *= rstd
    return dx, dg, db


def gelu(x):
    # gelu(x) = x (1 + tanh u) / 2,  u = c (x + 0.044715 x^3),  c = sqrt(2 / pi)
    #         = x sigma(2 u),  sigma(z) = 1 / (1 + exp(-z))    (the same number: exp is
    # about twice as fast as tanh here; x*x*x, as numpy's float32 power of 3 is 200x slower)
    e = x * x * x
    e *= -2.0 * 0.044715 * GELU_C
    e -= (2.0 * GELU_C) * x  # e = -2 u
    with np.errstate(over="ignore"):  # exp(-2u) = inf for very negative x: sigma = 0
        np.exp(e, out=e)
    e += 1.0
    s = np.reciprocal(e, out=e)  # s = sigma(2 u)   (written over e: one array fewer)
    return x * s, (x, s)


def gelu_backward(dy, cache):
    x, s = cache
    # d gelu / dx = (1 + t) / 2 + x (1 - t^2) c (1 + 3 * 0.044715 x^2) / 2,  t = tanh u
    #             = s + 2 c x s (1 - s) (1 + 3 * 0.044715 x^2),  as t = 2 s - 1
    slope = x * x
    slope *= 3.0 * 0.044715
    slope += 1.0
    slope *= x
    slope *= 2.0 * GELU_C
    r = 1.0 - s
    r *= s
    slope *= r
    slope += s
    slope *= dy
    return slope


def split_heads(x, H):
    # (B, T, d) -> (B, H, T, dh)
    B, T, d = x.shape
    return x.reshape(B, T, H, d // H).transpose(0, 2, 1, 3)


def merge_heads(x):
    # (B, H, T, dh) -> (B, T, d)
    B, H, T, dh = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * dh)


def rotate(x, R):
    # x'_t = x_t R_t: each position's own rotation           x (B, H, T, dh), R (T, dh, dh)
    # one matrix product per position t, over every sequence and head at once:
    # (T, B H, dh) @ (T, dh, dh)
    B, H, T, dh = x.shape
    xt = x.transpose(2, 0, 1, 3).reshape(T, B * H, dh)
    return (xt @ R).reshape(T, B, H, dh).transpose(1, 2, 0, 3)


def rotate_backward(dx_rot, R):
    # dx_t = dx'_t R_t^T
    return rotate(dx_rot, np.swapaxes(R, -1, -2))


def attention(q, k, v, bias, mask):
    """Causal attention of one layer, every head at once.

    q, k, v (B, H, T, dh); bias (H, T, T) or (T, T) or None; mask (T, T), True where j > i,
    or None when the bias already holds -inf there.
    """
    dh = q.shape[-1]
    # s_ij = q_i . k_j / sqrt(dh) + bias_ij                  (B, H, T, T)
    s = q @ np.swapaxes(k, -1, -2)
    s *= 1.0 / math.sqrt(dh)
    if bias is not None:
        s += bias
    # s_ij = -inf for j > i (a key after the query)
    if mask is not None:
        np.copyto(s, -np.inf, where=mask)
    # p_ij = exp(s_ij - max_j s) / sum_j exp(s_ij - max_j s)   (each step written over s)
    s -= s.max(axis=-1, keepdims=True)
    p = np.exp(s, out=s)
    p /= sum_last(p)
    # o_i = sum_j p_ij v_j                                   (B, H, T, dh)
    return p @ v, (q, k, v, p)


def attention_backward(do, cache):
    q, k, v, p = cache
    dh = q.shape[-1]
    # dv = p^T do,  dp = do v^T
    dv = np.swapaxes(p, -1, -2) @ do
    dp = do @ np.swapaxes(v, -1, -2)
    # ds_ij = p_ij (dp_ij - sum_j' p_ij' dp_ij')             (B, H, T, T); also d bias
    dp -= sum_last(p * dp)
    ds = np.multiply(p, dp, out=dp)
    # dq = ds k / sqrt(dh),  dk = ds^T q / sqrt(dh)
    scale = 1.0 / math.sqrt(dh)
    dq = ds @ k
    dq *= scale
    dk = np.swapaxes(ds, -1, -2) @ q
    dk *= scale
    return dq, dk, dv, ds


def cross_entropy(logits, targets):
    """Mean next-token loss and the loss at each position.

    logits (B, T, V), targets (B, T) -> (mean, (B, T) losses, cache)
    """
    # loss_t = logsumexp(z_t) - z_t[target]   (the maximum subtracted first)
    m = logits.max(axis=-1, keepdims=True)
    e = np.exp(logits - m)
    se = e.sum(axis=-1, keepdims=True)
    lse = (m + np.log(se))[..., 0]
    picked = np.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    losses = lse - picked
    e /= se
    return losses.mean(), losses, (e, targets)


def cross_entropy_backward(cache):
    probs, targets = cache
    # d mean / dz = (softmax(z) - onehot(target)) / (B T)
    d = probs.copy()
    np.put_along_axis(d, targets[..., None], np.take_along_axis(d, targets[..., None], -1) - 1, -1)
    d /= targets.size
    return d


# ----------------------------------------------------------------------------------------
# Positions


class Positions:
    """What a scheme adds, for sequences of length T: cached per T."""

    def __init__(self, cfg: Config, enc: Encodings, dtype):
        self.cfg, self.enc, self.dtype = cfg, enc, dtype
        self._cache: dict[int, dict] = {}

    def at(self, T: int) -> dict:
        if T not in self._cache:
            self._cache[T] = self._build(T)
        return self._cache[T]

    def _build(self, T: int) -> dict:
        cfg, enc, out = self.cfg, self.enc, {}
        pos = np.arange(T)
        # the causal mask: True where the key comes after the query
        out["mask"] = pos[None, :] > pos[:, None]  # (T, T)
        # the same mask as what the scores get added: -inf where it is True, else 0
        out["causal"] = np.where(out["mask"], -np.inf, 0.0).astype(self.dtype)  # (T, T)
        if enc.log_scale_len is not None or enc.head_temps is not None:
            # lambda_{l,h,i} = temp_{l,h} * max(1, log(i + 1) / log(L)): query i's scores times
            # lambda (q_i scaled: the same as scaling s_ij for every key j)   (n_layers, H, T, 1)
            lam = np.ones(T)
            if enc.log_scale_len is not None:
                lam = np.maximum(1.0, np.log(pos + 1.0) / math.log(enc.log_scale_len))
            temps = np.ones((cfg.n_layers, cfg.n_heads))
            if enc.head_temps is not None:
                temps = np.broadcast_to(np.asarray(enc.head_temps, np.float64), temps.shape)
            out["qscale"] = (temps[:, :, None] * lam[None, None, :])[..., None].astype(self.dtype)
        if cfg.scheme == "sinusoidal":
            pe = enc.get("sinusoidal_pe")(T, cfg.d_model, cfg.sinusoidal_base)
            out["pe"] = np.asarray(pe, dtype=np.float64).astype(self.dtype)  # (T, d)
        elif cfg.scheme == "learned":
            # positions past the table read its last row
            out["rows"] = np.minimum(pos, cfg.train_len - 1)  # (T,)
            # which row each position reads, as a matrix: d P = onehot^T dx   (T, train_len)
            out["rows_onehot"] = (out["rows"][:, None] == np.arange(cfg.train_len)).astype(
                self.dtype
            )
        elif cfg.scheme == "rope":
            out["R"] = rope_matrices(T, cfg.head_dim, cfg.rope_base, enc).astype(self.dtype)
        elif cfg.scheme == "alibi":
            bias = np.asarray(enc.get("alibi_bias")(cfg.n_heads, T, True), dtype=np.float64)
            # the bias on and below the diagonal, -inf above it (the mask, added once here)
            out["bias"] = np.where(out["mask"], -np.inf, bias).astype(self.dtype)  # (H, T, T)
        elif cfg.scheme == "t5":
            rel = pos[None, :] - pos[:, None]  # j - i
            bucket = enc.get("t5_bucket")(rel, False, cfg.t5_buckets, cfg.max_distance)
            out["bucket"] = np.asarray(bucket, dtype=np.int64)  # (T, T)
            # which bucket each (i, j) falls in, as a matrix: d table = onehot^T d bias
            flat = out["bucket"].reshape(-1)
            out["bucket_onehot"] = (flat[:, None] == np.arange(cfg.t5_buckets)).astype(
                self.dtype
            )  # (T T, n_buckets)
        return out


def rope_matrices(T: int, dh: int, base: float, enc: Encodings) -> np.ndarray:
    """Each position's rotation as a matrix: row k of R_t is apply_rope(e_k, t).

    A rotation is linear, so x R_t = apply_rope(x, t) for every x; computing it once per
    length from the given function keeps the model faithful to that function.
    With ``enc.rope_thetas``: pair i turned by t * theta_i (RoPE made longer), scaled by
    ``enc.rope_scale``.
    # shape: (T, dh, dh)
    """
    pos = np.arange(T)
    if enc.rope_thetas is not None:
        theta = np.asarray(enc.rope_thetas, dtype=np.float64)  # (dh / 2,)
        a = pos[:, None] * theta[None, :]  # (T, dh / 2)
        c, s = np.cos(a), np.sin(a)
        R = np.zeros((T, dh, dh))
        i = np.arange(dh // 2)
        # (x0, x1) -> (x0 c - x1 s, x0 s + x1 c): row 2i is where x0 goes, row 2i+1 x1's
        R[:, 2 * i, 2 * i], R[:, 2 * i, 2 * i + 1] = c, s
        R[:, 2 * i + 1, 2 * i], R[:, 2 * i + 1, 2 * i + 1] = -s, c
        return R * enc.rope_scale
    eye = np.broadcast_to(np.eye(dh), (T, dh, dh))  # (T, k, dh): e_k at every t
    tpos = np.broadcast_to(pos[:, None], (T, dh))
    R = enc.get("apply_rope")(np.array(eye), np.array(tpos), base)
    return np.asarray(R, dtype=np.float64) * enc.rope_scale


# ----------------------------------------------------------------------------------------
# The model


def init_params(cfg: Config, rng: np.random.Generator, dtype=np.float32) -> dict:
    """Weights: N(0, 0.02) linears (the output projections shrunk by 1/sqrt(2 n_layers), as
    GPT-2), unit LayerNorm gains, zero biases, N(0, 0.5) embeddings, a zero T5 table."""
    d, F, V = cfg.d_model, cfg.mlp_mult * cfg.d_model, cfg.vocab
    std = cfg.init_std
    proj = std / math.sqrt(2 * cfg.n_layers)
    # V tokens + BOS; the far probe's inputs also have its query token and V key tokens
    p = {"tok_emb": rng.normal(0, 0.5, (input_tokens(cfg), d))}
    if cfg.scheme == "learned":
        p["pos_emb"] = rng.normal(0, 0.5, (cfg.train_len, d))
    if cfg.scheme == "t5":
        p["t5_table"] = np.zeros((cfg.t5_buckets, cfg.n_heads))
    for l in range(cfg.n_layers):
        p[f"{l}.ln1_g"], p[f"{l}.ln1_b"] = np.ones(d), np.zeros(d)
        p[f"{l}.Wqkv"] = rng.normal(0, std, (d, 3 * d))  # [Wq | Wk | Wv]
        p[f"{l}.Wo"] = rng.normal(0, proj, (d, d))
        p[f"{l}.ln2_g"], p[f"{l}.ln2_b"] = np.ones(d), np.zeros(d)
        p[f"{l}.W1"], p[f"{l}.b1"] = rng.normal(0, std, (d, F)), np.zeros(F)
        p[f"{l}.W2"], p[f"{l}.b2"] = rng.normal(0, proj, (F, d)), np.zeros(d)
    p["lnf_g"], p["lnf_b"] = np.ones(d), np.zeros(d)
    p["W_out"], p["b_out"] = rng.normal(0, std, (d, V)), np.zeros(V)
    return {k: v.astype(dtype) for k, v in p.items()}


def forward(params: dict, cfg: Config, positions: Positions, inputs: np.ndarray):
    """Logits of the next token at every position, and what the backward pass needs.

    inputs (B, T) int -> logits (B, T, V)
    """
    _B, T = inputs.shape
    H = cfg.n_heads
    pos = positions.at(T)
    caches: dict = {"inputs": inputs, "layers": []}
    # x_t = E[token_t]                                        (B, T, d)
    x = params["tok_emb"][inputs]
    if cfg.scheme == "sinusoidal":
        # x_t += PE[t]
        x += pos["pe"]
    elif cfg.scheme == "learned":
        # x_t += P[min(t, train_len - 1)]
        x += params["pos_emb"][pos["rows"]]
    # what every score s_ij gets added: the scheme's bias, and -inf where j > i (the mask)
    if cfg.scheme == "alibi":
        bias = pos["bias"]  # (H, T, T), -slope_h (i - j)
    elif cfg.scheme == "t5":
        # bias_hij = table[bucket(j - i), h], one table for every layer
        bias = params["t5_table"][pos["bucket"]].transpose(2, 0, 1) + pos["causal"]  # (H, T, T)
    else:
        bias = pos["causal"]  # (T, T)
    attn_maps = []
    for l in range(cfg.n_layers):
        c: dict = {}
        # a = LN1(x)
        a, c["ln1"] = layer_norm(x, params[f"{l}.ln1_g"], params[f"{l}.ln1_b"])
        # [q | k | v] = a [Wq | Wk | Wv], each split into heads   (B, H, T, dh)
        qkv = rows_times(a, params[f"{l}.Wqkv"])
        d = cfg.d_model
        q, k, v = (split_heads(qkv[..., i * d : (i + 1) * d], H) for i in range(3))
        c["a"] = a
        if cfg.scheme == "rope":
            # q_t <- q_t R_t, k_t <- k_t R_t
            q, k = rotate(q, pos["R"]), rotate(k, pos["R"])
        if "qscale" in pos:
            # q_i <- lambda_{l,h,i} q_i (a temperature: read only, no backward)
            q = q * pos["qscale"][l]
        o, c["attn"] = attention(q, k, v, bias, mask=None)  # the bias holds the mask
        attn_maps.append(c["attn"][3])
        # x = x + merge(o) Wo
        om = merge_heads(o)
        c["om"] = om
        x += rows_times(om, params[f"{l}.Wo"])
        # m = LN2(x)
        m, c["ln2"] = layer_norm(x, params[f"{l}.ln2_g"], params[f"{l}.ln2_b"])
        # h = gelu(m W1 + b1)                                  (B, T, F)
        z, c["m"] = linear(m, params[f"{l}.W1"], params[f"{l}.b1"])
        h, c["gelu"] = gelu(z)
        # x = x + h W2 + b2
        y, c["h"] = linear(h, params[f"{l}.W2"], params[f"{l}.b2"])
        x += y
        caches["layers"].append(c)
    # logits = LNf(x) W_out + b_out                            (B, T, V)
    f, caches["lnf"] = layer_norm(x, params["lnf_g"], params["lnf_b"])
    logits, caches["f"] = linear(f, params["W_out"], params["b_out"])
    caches["attn_maps"] = attn_maps
    return logits, caches


def backward(dlogits: np.ndarray, params: dict, cfg: Config, positions: Positions, caches):
    """The gradient of the loss for every parameter, from d loss / d logits."""
    H = cfg.n_heads
    inputs = caches["inputs"]
    T = inputs.shape[1]
    pos = positions.at(T)
    g = {}
    df, g["W_out"], g["b_out"] = linear_backward(dlogits, caches["f"], params["W_out"])
    dx, g["lnf_g"], g["lnf_b"] = layer_norm_backward(df, caches["lnf"])
    dbias = None
    for l in reversed(range(cfg.n_layers)):
        c = caches["layers"][l]
        # x = x + h W2 + b2: the residual passes dx on
        dh_, g[f"{l}.W2"], g[f"{l}.b2"] = linear_backward(dx, c["h"], params[f"{l}.W2"])
        dz = gelu_backward(dh_, c["gelu"])
        dm, g[f"{l}.W1"], g[f"{l}.b1"] = linear_backward(dz, c["m"], params[f"{l}.W1"])
        dx_ln2, g[f"{l}.ln2_g"], g[f"{l}.ln2_b"] = layer_norm_backward(dm, c["ln2"])
        dx = dx + dx_ln2
        # x = x + merge(o) Wo
        dom, g[f"{l}.Wo"], _ = linear_backward(dx, c["om"], params[f"{l}.Wo"], has_bias=False)
        do = split_heads(dom, H)
        dq, dk, dv, ds = attention_backward(do, c["attn"])
        if cfg.scheme == "t5":
            # every layer adds the same bias: its gradient is the sum of the layers' ds
            ds_sum = ds.sum(axis=0)  # (H, T, T)
            dbias = ds_sum if dbias is None else dbias + ds_sum
        if cfg.scheme == "rope":
            dq, dk = rotate_backward(dq, pos["R"]), rotate_backward(dk, pos["R"])
        # d [q | k | v]                                           (B, T, 3 d)
        dqkv = np.concatenate([merge_heads(dq), merge_heads(dk), merge_heads(dv)], axis=-1)
        da, g[f"{l}.Wqkv"], _ = linear_backward(dqkv, c["a"], params[f"{l}.Wqkv"], False)
        dx_ln1, g[f"{l}.ln1_g"], g[f"{l}.ln1_b"] = layer_norm_backward(da, c["ln1"])
        dx = dx + dx_ln1
    if cfg.scheme == "t5":
        # d table[b, h] = sum of dbias_hij over the (i, j) in bucket b       (n_buckets, H)
        g["t5_table"] = pos["bucket_onehot"].T @ dbias.reshape(H, T * T).T
    if cfg.scheme == "learned":
        # d P[r] = sum over the positions t reading row r                   (train_len, d)
        g["pos_emb"] = pos["rows_onehot"].T @ dx.sum(axis=0)
    # d E[v] = sum over the positions whose token is v
    V1 = params["tok_emb"].shape[0]
    onehot = (inputs.reshape(-1)[:, None] == np.arange(V1)[None, :]).astype(dx.dtype)
    g["tok_emb"] = onehot.T @ dx.reshape(-1, dx.shape[-1])
    return g


def loss_and_grads(params, cfg, positions, inputs, targets):
    """Mean loss and every parameter's gradient, for one batch.

    The chain: targets (B, T), the loss at every position. The far probe (``task`` "needle"):
    targets (B,), the answers, the loss at the last position only (the query's).
    """
    logits, caches = forward(params, cfg, positions, inputs)
    if cfg.task == "needle":
        # loss = mean_b -log softmax(z_{b, T-1})[answer_b]; d loss / dz = 0 elsewhere
        loss, _, ce = cross_entropy(logits[:, -1:], targets[:, None])
        dlogits = np.zeros_like(logits)
        dlogits[:, -1:] = cross_entropy_backward(ce)
    else:
        loss, _, ce = cross_entropy(logits, targets)
        dlogits = cross_entropy_backward(ce)
    return loss, backward(dlogits, params, cfg, positions, caches)


# ----------------------------------------------------------------------------------------
# Training


def learning_rate(step: int, cfg: Config) -> float:
    """Linear warm-up to ``lr``, then a cosine down to ``min_lr``."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    done = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1.0 + math.cos(math.pi * done))


class Adam:
    """Adam (Kingma and Ba): m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
    w -= lr * m_hat / (sqrt(v_hat) + eps)."""

    def __init__(self, params: dict, cfg: Config, eps: float = 1e-8):
        self.cfg, self.eps, self.t = cfg, eps, 0
        # every parameter's moments side by side in one vector: one update a step, not one
        # per parameter; self.parts says where each parameter's entries are
        self.parts, start = {}, 0
        for k, w in params.items():
            self.parts[k] = slice(start, start + w.size)
            start += w.size
        dtype = next(iter(params.values())).dtype
        self.m, self.v = np.zeros(start, dtype), np.zeros(start, dtype)

    def step(self, params: dict, grads: dict, lr: float) -> None:
        b1, b2 = self.cfg.beta1, self.cfg.beta2
        self.t += 1
        c1, c2 = 1.0 - b1**self.t, 1.0 - b2**self.t
        g = np.concatenate([grads[k].ravel() for k in self.parts])
        # m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2
        self.m *= b1
        self.m += (1.0 - b1) * g
        self.v *= b2
        self.v += (1.0 - b2) * (g * g)
        # w -= lr m_hat / (sqrt(v_hat) + eps),  m_hat = m / c1,  v_hat = v / c2
        denom = np.sqrt(self.v * (1.0 / c2))
        denom += self.eps
        update = self.m * (lr / c1)
        update /= denom
        for k, part in self.parts.items():
            params[k] -= update[part].reshape(params[k].shape)


def clip_gradients(grads: dict, max_norm: float) -> float:
    """Scale every gradient by min(1, max_norm / ||g||): returns ||g|| before clipping."""
    norm = math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))
    if norm > max_norm:
        for g in grads.values():
            g *= max_norm / norm
    return norm


@dataclass
class Model:
    """A trained model: its settings, weights, encodings and what training cost."""

    cfg: Config
    params: dict
    enc: Encodings = field(default_factory=Encodings)
    losses: list = field(default_factory=list)
    train_s: float = 0.0  # wall-clock seconds of training
    train_cpu_s: float = 0.0  # this process's CPU seconds (what a busy machine does not stretch)

    def positions(self, enc: Encodings | None = None) -> Positions:
        return Positions(self.cfg, enc or self.enc, self.params["tok_emb"].dtype)


def one_thread():
    """A context in which BLAS uses one thread (threadpoolctl)."""
    from threadpoolctl import threadpool_limits

    keep_freed_memory()
    return threadpool_limits(limits=1, user_api="blas")


_MEMORY_KEPT = []


def keep_freed_memory() -> bool:
    """Ask the C library to keep the memory numpy frees, for the next step to reuse.

    A training step makes a few hundred temporary arrays of 256 to 512 KB. glibc gives blocks
    that large back to the system when they are freed, and takes them back at the next step,
    one page fault per 4 KB: about a thousand faults a step, a fifth of the step's time.
    Raising its two thresholds (``mallopt``) keeps them; the kernel then holds a few tens of
    megabytes more. Where the C library is not glibc (macOS), nothing changes. Once per
    process; returns whether the thresholds are raised.
    """
    if not _MEMORY_KEPT:
        import ctypes

        try:
            mallopt = ctypes.CDLL(None).mallopt  # glibc's; absent elsewhere
        except (OSError, AttributeError):
            _MEMORY_KEPT.append(False)
        else:
            m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's malloc.h
            _MEMORY_KEPT.append(
                bool(mallopt(m_mmap_threshold, 32 << 20))
                and bool(mallopt(m_trim_threshold, 64 << 20))
            )
    return _MEMORY_KEPT[0]


def train(
    cfg: Config,
    enc: Encodings | None = None,
    params: dict | None = None,
    progress: Callable[[int, float], None] | None = None,
) -> Model:
    """Train one model on the chain (``cfg.steps`` batches of ``cfg.batch`` sequences of
    ``cfg.train_len`` tokens); ``params`` to go on from given weights (a fine-tune)."""
    enc = enc or Encodings()
    rng = np.random.default_rng([cfg.seed, 1])
    data_rng = np.random.default_rng([cfg.seed, 2])
    table = markov_table(cfg.vocab, cfg.task_seed)
    if params is None:
        params = init_params(cfg, rng)
    else:
        params = {k: v.copy() for k, v in params.items()}
    model = Model(cfg, params, enc)
    positions = model.positions()
    opt = Adam(params, cfg)
    if cfg.task == "needle":
        # its own stream of data: a needle run and a chain run of one seed share no batch
        all_inputs, all_targets, _ = needle_sequences(
            cfg, cfg.steps * cfg.batch, cfg.train_len, np.random.default_rng([cfg.seed, 3])
        )
    else:
        seqs = sample_sequences(table, cfg.steps * cfg.batch, cfg.train_len, data_rng)
        all_inputs, all_targets = inputs_targets(seqs, cfg.vocab)
    start, cpu_start = time.perf_counter(), time.process_time()
    with one_thread():
        for step in range(cfg.steps):
            batch = slice(step * cfg.batch, (step + 1) * cfg.batch)
            inputs, targets = all_inputs[batch], all_targets[batch]
            loss, grads = loss_and_grads(params, cfg, positions, inputs, targets)
            clip_gradients(grads, cfg.clip)
            opt.step(params, grads, learning_rate(step, cfg))
            model.losses.append(float(loss))
            if progress is not None:
                progress(step, float(loss))
    model.train_s = time.perf_counter() - start
    model.train_cpu_s = time.process_time() - cpu_start
    return model


def evaluate(
    model: Model,
    length: int,
    n: int = 64,
    enc: Encodings | None = None,
    seed: int = 12345,
    chunk: int = 16,
) -> np.ndarray:
    """The model's mean loss at each position of ``n`` fresh chains of ``length`` tokens.
    # shape: (length,)
    """
    cfg = model.cfg
    seqs = eval_sequences(cfg, length, n, seed)
    positions = model.positions(enc)
    total = np.zeros(length)
    with one_thread():
        for s in range(0, n, chunk):
            inputs, targets = inputs_targets(seqs[s : s + chunk], cfg.vocab)
            logits, _ = forward(model.params, cfg, positions, inputs)
            _, losses, _ = cross_entropy(logits.astype(np.float64), targets)
            total += losses.sum(axis=0)
    return total / n


def eval_sequences(cfg: Config, length: int, n: int, seed: int = 12345) -> np.ndarray:
    """The ``n`` fresh chains of ``length`` tokens every read of that length scores (the
    models' and the optimum's: the same sequences, so their losses pair up).
    # shape: (n, length)
    """
    table = markov_table(cfg.vocab, cfg.task_seed)
    return sample_sequences(table, n, length, np.random.default_rng([seed, length]))


def optimum_curve(cfg: Config, length: int, n: int = 64, seed: int = 12345) -> np.ndarray:
    """The exact best predictor's mean loss at each position, on the very sequences
    ``evaluate`` reads: its expectation is the best loss (``best_loss_per_position``), its
    spread around it is the noise of ``n`` sequences.

    loss_0 = -log pi(x0), loss_1 = -log pi(x1 | x0), loss_t = -log table[x_{t-2}, x_{t-1}, x_t]
    # shape: (length,)
    """
    table = markov_table(cfg.vocab, cfg.task_seed)
    pi = pair_stationary(table)  # (V, V)
    pa = pi.sum(axis=1)  # pi(a)
    x = eval_sequences(cfg, length, n, seed)
    loss = np.empty(x.shape)
    loss[:, 0] = -np.log(pa[x[:, 0]])
    if length > 1:
        loss[:, 1] = -np.log(pi[x[:, 0], x[:, 1]] / pa[x[:, 0]])
        loss[:, 2:] = -np.log(table[x[:, :-2], x[:, 1:-1], x[:, 2:]])
    return loss.mean(axis=0)


def n_params(params: dict) -> int:
    """How many numbers a model learns."""
    return int(sum(np.size(w) for w in params.values()))


def attention_maps(
    model: Model, length: int, n: int = 8, seed: int = 777, enc: Encodings | None = None
) -> list[np.ndarray]:
    """Each layer's attention weights on ``n`` chains of ``length`` tokens.
    # shapes: n_layers x (n, H, length, length)
    """
    cfg = model.cfg
    seqs = eval_sequences(cfg, length, n, seed)
    inputs, _ = inputs_targets(seqs, cfg.vocab)
    with one_thread():
        _, caches = forward(model.params, cfg, model.positions(enc), inputs)
    return [np.asarray(p, dtype=np.float64) for p in caches["attn_maps"]]


def near_mass(weights: np.ndarray, keys: int = 2) -> np.ndarray:
    """Each query's attention on its ``keys`` nearest keys (j = i, i - 1, ...): with inputs
    [BOS, x0, ...], the keys i and i - 1 hold the two tokens the chain's next one depends on.
    weights (..., T, T) -> (..., T)
    """
    w = np.asarray(weights, dtype=np.float64)
    T = w.shape[-1]
    i = np.arange(T)
    near = (i[None, :] <= i[:, None]) & (i[None, :] > i[:, None] - keys)  # (T, T)
    return (w * near).sum(axis=-1)


def with_scheme(cfg: Config, **changes) -> Config:
    """The same settings with some changed (``with_scheme(cfg, scheme="rope")``)."""
    return replace(cfg, **changes)


# ----------------------------------------------------------------------------------------
# The experiment of 13_train_short: every scheme trained at one length, read at four

# The course's test suite runs notebook 13 many times (English and Korean, nbgrader's
# validation, the learner build, the browser): all but one of those runs set this variable
# and train a quick version of the experiment, the same code on fewer steps and sequences,
# whose numbers mean nothing. A learner's kernel never has it set (docs/authoring.md).
QUICK_ENV = "COURSE_TRAIN_QUICK"


def quick() -> bool:
    """Whether to train the quick experiment: ``COURSE_TRAIN_QUICK`` set (and not 0), or
    nbgrader validating or autograding the notebook (``NBGRADER_EXECUTION``): its verdicts
    come from the graded functions, never from the models, so the Validate button and
    autograding train 20 steps a model instead of 1500 (seconds, not minutes, whatever the
    laptop's load), and nbgrader's per-cell timeout is never near."""
    if os.environ.get("NBGRADER_EXECUTION"):
        return True
    return os.environ.get(QUICK_ENV, "").strip() not in ("", "0")


def experiment_config() -> Config:
    """The settings of the notebook's experiment: ``Config()``, or in a quick run 20 steps
    of 4 sequences (the same model, the same length)."""
    if quick():
        return Config(steps=20, batch=4, warmup=5)
    return Config()


# (name, scheme, T5's max_distance): the names of artifacts/train_short.json
EXPERIMENT = (
    ("nope", "none", None),
    ("sinusoidal", "sinusoidal", None),
    ("learned", "learned", None),
    ("rope", "rope", None),
    ("alibi", "alibi", None),
    ("t5", "t5", None),
    ("t5_md128", "t5", 128),
)
FACTORS = (1, 2, 4, 8)
FAR_PREFIX = "far "  # a far-probe model's name in train_many: "far rope"


# Calls like the experiment's own (small): a pasted or written function is judged on them
# against the reference.
def _calls(name: str) -> list[tuple[tuple, dict]]:
    rel = np.arange(40)[None, :] - np.arange(40)[:, None]  # j - i
    eye = np.broadcast_to(np.eye(16), (8, 16, 16)).copy()  # rope_matrices' call, 8 positions
    tpos = np.broadcast_to(np.arange(8)[:, None], (8, 16)).copy()
    sticky = np.array([[[0.9 if c == b else 0.1 for c in range(2)] for b in range(2)]] * 2)
    calls = {
        "sinusoidal_pe": [((40, 64, 10000.0), {})],
        "apply_rope": [((eye, tpos, 10000.0), {})],
        "alibi_bias": [((4, 12, True), {})],
        "t5_bucket": [((rel, False, 32, 32), {}), ((rel, False, 32, 128), {})],
        "yarn_thetas": [((16, 10000.0, 2, 32, 32, 1), {}), ((16, 10000.0, 8, 32, 2, 1), {})],
        "chain_entropy": [((markov_table(4, seed=3),), {}), ((sticky,), {})],
        "attention_entropy": [((np.tril(np.ones((5, 5))) / np.arange(1, 6)[:, None],), {})],
        "breaking_point": [
            ((np.r_[np.zeros(32), [0.05, 0.2, 0.3, 0.3, 0.3]], 32), {}),
            ((np.r_[np.zeros(32), [0.2, 0.0, 0.3, 0.3, 0.3, 0.0]], 32), {"window": 2}),
        ],
    }
    return calls[name]


def _wrong(name: str, fn: Callable) -> str | None:
    """What the course's checks say ``fn`` gets wrong on the experiment's kind of calls
    (with the mistake's name where they know it), or None: the reference's answers where
    the checks are installed, the public checks' in the classroom build."""
    from helpers.session import judged  # the grader's judge (set as helpers.grader loads)

    calls = [(fn, args, kwargs) for args, kwargs in _calls(name)]
    with np.errstate(all="ignore"):
        try:
            return judged(name, calls)
        except Exception:  # noqa: BLE001 - no checks here, or a check that cannot run
            return None


def _has_reference() -> bool:
    try:
        from helpers import reference  # noqa: F401
    except ImportError:  # the classroom build ships no reference
        return False
    return True


def yours_or_reference(name: str, fn: Callable | None) -> tuple[Callable | None, str]:
    """The learner's ``fn`` where it runs and is right, else None (the reference's), and a
    line saying whose the experiment uses, and why.

    A function not written yet (it raises NotImplementedError) or one that fails is left
    out; one the checks find wrong is left out too, with what is wrong and where it is
    taught, so that a pasted mistake never passes for a finding of the experiment. Where
    there is no reference (the classroom build) a wrong function is used, and said to be.
    """
    where = taught_in(name)
    if fn is None:
        return None, f"{name}: the reference's"
    try:
        with np.errstate(all="ignore"):
            args, kwargs = _calls(name)[0]
            fn(*args, **kwargs)
    except NotImplementedError:
        return None, f"{name}: the reference's (yours is not written yet: {where})"
    except Exception as exc:  # noqa: BLE001 - a recap may be a stub or wrong
        return None, f"{name}: the reference's (yours raised {type(exc).__name__}: {where})"
    wrong = _wrong(name, fn)
    if wrong is None:
        return fn, f"{name}: yours"
    said = " ".join(str(wrong).split())
    if not _has_reference():
        return fn, f"{name}: yours, and it is wrong ({where}): {said}"
    return None, f"{name}: the reference's, as yours is wrong ({where}): {said}"


def reference_of(name: str, fn: Callable | None) -> Callable:
    """``fn`` itself, or the reference's ``name`` where ``yours_or_reference`` left it out."""
    if fn is not None:
        return fn
    if not _has_reference():
        raise RuntimeError(
            f"{name} is not written yet and this installation has no reference: "
            f"write it ({taught_in(name)}), then run this cell again"
        )
    from helpers import reference

    return getattr(reference, name)


def encodings_of(**functions) -> tuple[Encodings, list[str]]:
    """The learner's position functions where they run and are right, the reference's
    where they do not (``yours_or_reference``): the encodings and one line per function
    saying whose it is."""
    chosen, lines = {}, []
    for name, fn in functions.items():
        mine, line = yours_or_reference(name, fn)
        if mine is not None:
            chosen[name] = mine
        lines.append(line)
    return Encodings(**chosen), lines


def excess_at(curve: np.ndarray, best: np.ndarray, train_len: int) -> dict[int, float]:
    """Mean excess over the best loss on the first k * train_len positions, k in FACTORS."""
    return {k: float((curve[: k * train_len] - best[: k * train_len]).mean()) for k in FACTORS}


def workers_here() -> int:
    """How many models to train at once here: one per core, at most two, and one where a
    process cannot be forked (each worker is a copy of this process, the learner's functions
    and all; spawning a fresh one would need them importable)."""
    import multiprocessing
    import sys

    if (
        not sys.platform.startswith("linux")
        or "fork" not in multiprocessing.get_all_start_methods()
    ):
        return 1
    return max(1, min(2, len(os.sched_getaffinity(0))))


def _train_and_read(cfg: Config, enc: Encodings, read_len: int, read_n: int, report) -> tuple:
    """One job of ``train_many``: the model's weights, losses, seconds and its curve (for a
    far-probe model, its reads at every factor, ``read_far``, with their seconds)."""
    model = train(cfg, enc, progress=report)
    if cfg.task == "needle":
        start = time.perf_counter()
        far = read_far(model, n=read_n)
        far["read_s"] = time.perf_counter() - start
        return model.params, model.losses, model.train_s, model.train_cpu_s, far
    curve = evaluate(model, read_len, n=read_n)
    return model.params, model.losses, model.train_s, model.train_cpu_s, curve


def _every_100(name: str, cfg: Config, say: Callable[[str, int, float], None]):
    """train's progress callback that passes (name, step, loss) on every 100 steps and at
    the last."""

    def report(step: int, loss: float) -> None:
        if (step + 1) % 100 == 0 or step + 1 == cfg.steps:
            say(name, step, loss)

    return report


def _worker(conn, cfgs: dict, enc: Encodings, read_len: int, read_n: int) -> None:
    # a forked copy of the caller: takes a name, trains and reads that model, sends it back;
    # every 100 steps it sends (name, step, loss); None ends it
    import signal
    import traceback

    # an interrupt of the kernel reaches its whole process group: the caller stops the
    # workers (train_many), which would otherwise each print a KeyboardInterrupt of their own
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    while (name := conn.recv()) is not None:
        report = _every_100(name, cfgs[name], lambda *msg: conn.send(("step", *msg)))
        try:
            conn.send(("done", name, _train_and_read(cfgs[name], enc, read_len, read_n, report)))
        except Exception:  # noqa: BLE001 - sent to the caller, which raises it
            conn.send(("error", name, traceback.format_exc()))


def train_many(
    cfgs: dict[str, Config],
    enc: Encodings,
    read_len: int,
    read_n: int,
    workers: int = 1,
    progress: Callable[[str, int, float], None] | None = None,
) -> dict[str, tuple[Model, np.ndarray]]:
    """Train each model of ``cfgs`` and read it on ``read_len`` positions: ``workers`` at a
    time, each in a process of its own (forked from this one) on one BLAS thread.

    Each training depends only on its settings, so the models are the same whatever the
    number of workers; two cores train two at once in the time of one. ``progress(name,
    step, loss)`` every 100 steps. Returns ``{name: (model, curve)}`` in the order of
    ``cfgs``.
    """
    out: dict = {}

    def finished(name: str, result: tuple) -> None:
        params, losses, train_s, cpu_s, curve = result
        model = Model(cfgs[name], params, enc, losses, train_s, cpu_s)
        out[name] = (model, curve)

    if workers <= 1 or len(cfgs) <= 1:
        for name, cfg in cfgs.items():
            report = None if progress is None else _every_100(name, cfg, progress)
            finished(name, _train_and_read(cfg, enc, read_len, read_n, report))
        return out

    import multiprocessing
    from multiprocessing.connection import wait

    ctx = multiprocessing.get_context("fork")
    waiting = list(cfgs)
    procs, conns = [], []
    try:
        for _ in range(min(workers, len(cfgs))):
            here, there = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(there, cfgs, enc, read_len, read_n))
            proc.daemon = True
            proc.start()
            there.close()
            here.send(waiting.pop(0))
            procs.append(proc)
            conns.append(here)
        busy = set(conns)
        while busy:
            for conn in wait(list(busy)):
                try:
                    message = conn.recv()
                except EOFError:
                    raise RuntimeError("a training process ended without its model") from None
                kind, name = message[0], message[1]
                if kind == "step":
                    if progress is not None:
                        progress(name, message[2], message[3])
                    continue
                if kind == "error":
                    raise RuntimeError(f"training {name} failed:\n{message[2]}")
                finished(name, message[2])
                if waiting:
                    conn.send(waiting.pop(0))
                else:
                    conn.send(None)
                    busy.discard(conn)
    except BaseException:  # an error, or the learner interrupting the kernel: stop them all
        for proc in procs:
            proc.terminate()
        raise
    finally:
        for proc in procs:
            proc.join()
    return {name: out[name] for name in cfgs}


def run_experiment(
    enc: Encodings | None = None,
    seed: int = 0,
    base: Config | None = None,
    eval_n: int | None = None,
    names: tuple[str, ...] | None = None,
    progress: Callable[[str], None] | str | None = "bar",
    chain_entropy: Callable | None = None,
    workers: int | None = None,
    far: bool = True,
) -> dict:
    """Train every scheme of EXPERIMENT at ``train_len`` and read each at 8 x train_len.

    Returns the best loss per position, each model's loss per position, its excess at 1x,
    2x, 4x and 8x, its training seconds and milliseconds per step, the models, the settings
    (``config``, the scheme aside) and how many sequences were read (``eval_n``).
    ``chain_entropy`` gives the best loss (the learner's, or the reference's when None).
    Also the optimum's loss per position on the same sequences (``optimum``: the exact best
    predictor, the noise floor) and the models' size (``n_params``). ``progress``: ``"bar"``,
    tqdm's bar (``TrainingBar``); a function, which gets a line now and then; None, silence.

    With ``far`` (the default), the same call also trains a far-probe model of each scheme
    (``far_config``: the needle task, FAR_STEPS steps) after the seven, and reads it at 1x to
    8x (``read_far`` on ``eval_n`` sequences a factor): ``far`` has its reads by name,
    ``far_models`` the models, ``far_s`` the seconds each took to train and read.
    """
    if chain_entropy is None:
        from helpers.reference import chain_entropy

    base = base or experiment_config()
    if eval_n is None:
        eval_n = 8 if quick() else 64  # sequences read at 8x
    enc = enc or Encodings()
    L = base.train_len
    best = best_loss_per_position(chain_entropy(markov_table(base.vocab, base.task_seed)), 8 * L)
    out: dict = {"best": best, "curves": {}, "excess": {}, "train_s": {}, "ms_per_step": {}}
    out["config"], out["eval_n"] = base, eval_n
    out["cpu_ms_per_step"] = {}
    out["models"] = {}
    cfgs = {
        name: replace(base, scheme=scheme, t5_max_distance=md, seed=seed)
        for name, scheme, md in EXPERIMENT
        if names is None or name in names
    }
    if far:
        cfgs.update({FAR_PREFIX + name: far_config(c) for name, c in list(cfgs.items())})
    report, bar = None, None
    if progress == "bar":
        bar = TrainingBar(cfgs)
        report = bar.report
    elif progress is not None:
        at: dict[str, str] = {}

        def report(name: str, step: int, loss: float) -> None:
            # one line of the models training now, written over itself
            at[name] = f"{name} {step + 1}/{cfgs[name].steps} loss {loss:.3f}"
            if step + 1 == cfgs[name].steps:
                at.pop(name)
                # a line that stays: the model is trained
                progress(f"{name:>10}: {step + 1} steps, loss {loss:.3f}".ljust(60) + "\n")
            elif at:
                progress("training " + ", ".join(at.values()) + "  ")

    if workers is None:
        workers = workers_here()
    started = time.perf_counter()
    try:
        done = train_many(cfgs, enc, 8 * L, eval_n, workers, report)
    finally:
        if bar is not None:
            bar.close()
    out["wall_s"] = time.perf_counter() - started  # what the learner waits: trainings and reads
    out["optimum"] = optimum_curve(base, 8 * L, eval_n)
    if far:
        out["far"], out["far_models"], out["far_s"] = {}, {}, {}
        for name in [n for n in done if n.startswith(FAR_PREFIX)]:
            model, reads = done.pop(name)
            name = name[len(FAR_PREFIX) :]
            out["far_s"][name] = model.train_s + reads.pop("read_s")
            out["far"][name], out["far_models"][name] = reads, model
    for name, (model, curve) in done.items():
        out["models"][name] = model
        out["curves"][name] = curve
        out["excess"][name] = excess_at(curve, best, L)
        out["train_s"][name] = model.train_s
        out["ms_per_step"][name] = 1000.0 * model.train_s / model.cfg.steps
        out["cpu_ms_per_step"][name] = 1000.0 * model.train_cpu_s / model.cfg.steps
    out["workers"] = workers
    out["n_params"] = {name: n_params(m.params) for name, m in out["models"].items()}
    return out


class TrainingBar:
    """The experiment's progress as one bar (tqdm's: in a notebook, its widget on
    ipywidgets; elsewhere, a text line that tqdm rewrites cleanly): every step of every model
    a unit, "model k of n" with the models training now, and the time left as tqdm
    estimates it from the steps done."""

    def __init__(self, cfgs: dict[str, Config]):
        from tqdm.auto import tqdm

        from helpers.i18n import tr

        self.cfgs, self.started, self.done = cfgs, [], 0
        self.at: dict[str, int] = {}
        # tqdm fills in {elapsed} and {remaining}: the template is translated as it is
        left = tr("{elapsed} so far, about {remaining} left")
        self.bar = tqdm(
            total=sum(c.steps for c in cfgs.values()),
            unit="step",
            desc=tr("model {k} of {n}", k=1, n=len(cfgs)),
            bar_format="{desc} {bar} {percentage:3.0f}% · " + left,
            mininterval=0.5,
        )

    def report(self, name: str, step: int, loss: float) -> None:
        """train_many's progress: ``name`` has done ``step + 1`` steps, at loss ``loss``."""
        if name not in self.started:
            self.started.append(name)
        before = self.at.get(name, 0)
        self.at[name] = step + 1
        self.bar.update(step + 1 - before)
        if step + 1 == self.cfgs[name].steps:
            self.done += 1
        now = [n for n in self.started if self.at[n] < self.cfgs[n].steps]
        k = min(len(self.cfgs), self.done + max(1, len(now)))
        from helpers.i18n import tr

        self.bar.set_description_str(
            tr("model {k} of {n}", k=k, n=len(self.cfgs)) + (f" ({', '.join(now)})" if now else ""),
            refresh=False,
        )

    def close(self) -> None:
        self.bar.close()


# ----------------------------------------------------------------------------------------
# RoPE made longer (notebook 10_long_context's formulas, on the trained RoPE model)

# (name, what it does): the rows of longer_rope's table
LONGER = (
    ("rope", "plain RoPE, read past its length"),
    ("pi", "position interpolation: every rate divided by the factor"),
    ("ntk", "NTK-aware: the base raised to base * factor ** (d / (d - 2))"),
    ("yarn_paper", "YaRN with the paper's ramp gamma(r), linear in each pair's turns"),
    ("yarn", "YaRN with transformers' ramp over pair indices (yarn_thetas of 10)"),
    ("pi_finetune", "position interpolation after a short fine-tune"),
)
PAPER_RAMP = (32.0, 1.0)  # YaRN's (beta_fast, beta_slow), Peng et al. 2023


def yarn_paper_rates(
    dh: int, base: float, factor: float, train_len: int, alpha: float = 1.0, beta: float = 32.0
) -> tuple[np.ndarray, float]:
    """YaRN as the paper defines it (Peng et al. 2023, Definition 2): the rates and the
    attention factor.

    r_i = train_len / lambda_i = train_len theta_i / (2 pi), the turns of pair i in the
    training length; gamma(r) = 0 for r < alpha, 1 for r > beta, (r - alpha) / (beta - alpha)
    between; h(theta_i) = (1 - gamma(r_i)) theta_i / s + gamma(r_i) theta_i. The attention
    factor sqrt(1/t) = 0.1 ln s + 1 (1 for s <= 1). transformers' ramp (``yarn_thetas`` of
    notebook 10) runs linearly over pair *indices* between floor and ceil of the dimensions
    where pairs turn beta and alpha times, its start clamped at pair 0: with 8 pairs and
    5.1 turns for the fastest, it keeps pair 0 where the paper's gamma mostly interpolates it.
    # shapes: (dh / 2,), float
    """
    theta = base ** (-np.arange(0, dh, 2, dtype=np.float64) / dh)
    r = train_len * theta / (2.0 * math.pi)
    gamma = np.clip((r - alpha) / (beta - alpha), 0.0, 1.0)
    rates = (1.0 - gamma) * theta / factor + gamma * theta
    return rates, (0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0)


def rope_rates(cfg: Config) -> np.ndarray:
    """The rates the RoPE model was trained with: theta_i = base ** (-2 i / dh).
    # shape: (dh / 2,)
    """
    return cfg.rope_base ** (-np.arange(0, cfg.head_dim, 2, dtype=np.float64) / cfg.head_dim)


def longer_encodings(
    cfg: Config,
    method: str,
    factor: float,
    yarn_thetas: Callable | None = None,
    ramp: tuple[float, float] = PAPER_RAMP,
) -> Encodings:
    """The rotary rates (and YaRN's attention factor) of one way to read ``factor`` x longer.

    ``pi``: theta_i / factor (Chen et al.); ``ntk``: the base raised to
    base * factor ** (dh / (dh - 2)) (bloc97); ``yarn``: ``yarn_thetas(dh, base, factor,
    train_len, beta_fast, beta_slow)`` with ``ramp = (beta_fast, beta_slow)`` (transformers'
    ramp over pair indices: the learner's function, or the reference's when None);
    ``yarn_paper``: the paper's gamma(r) with alpha, beta = beta_slow, beta_fast
    (``yarn_paper_rates``); ``rope``: the rates unchanged.
    """
    dh, base, th = cfg.head_dim, cfg.rope_base, rope_rates(cfg)
    if method == "rope":
        return Encodings(rope_thetas=th)
    if method == "pi":
        return Encodings(rope_thetas=th / factor)
    if method == "ntk":
        new_base = base * factor ** (dh / (dh - 2))
        return Encodings(rope_thetas=new_base ** (-np.arange(0, dh, 2) / dh))
    if method == "yarn_paper":
        rates, scale = yarn_paper_rates(dh, base, factor, cfg.train_len, ramp[1], ramp[0])
        return Encodings(rope_thetas=rates, rope_scale=scale)
    if method == "yarn":
        if yarn_thetas is None:
            try:
                from helpers.reference import yarn_thetas
            except ImportError as exc:  # the classroom build ships no reference
                raise RuntimeError(
                    "no yarn_thetas given and this installation has no reference: "
                    "write it in the recap cell"
                ) from exc
        rates, scale = yarn_thetas(dh, base, factor, cfg.train_len, ramp[0], ramp[1])
        return Encodings(rope_thetas=np.asarray(rates, dtype=np.float64), rope_scale=float(scale))
    raise ValueError(f"method must be rope, pi, ntk, yarn_paper or yarn, got {method!r}")


def finetune_pi(
    model: Model, factor: int = 2, steps: int = 30, batch: int = 8, lr: float = 1e-3
) -> Model:
    """Go on training the RoPE model at ``factor`` x its length with position interpolation
    (rates / factor): ``steps`` batches, a short warm-up, the cosine down to lr / 10."""
    cfg = replace(
        model.cfg,
        train_len=factor * model.cfg.train_len,
        steps=steps,
        batch=batch,
        lr=lr,
        min_lr=lr / 10,
        warmup=max(1, steps // 10),
        seed=model.cfg.seed + 1000,
    )
    tuned = train(cfg, longer_encodings(model.cfg, "pi", factor), params=model.params)
    tuned.cfg = replace(tuned.cfg, train_len=model.cfg.train_len)
    return tuned


def yarn_of(yarn_thetas: Callable | None) -> tuple[Callable | None, str]:
    """The learner's ``yarn_thetas`` if it runs and is right, else None (the reference's),
    and a line saying whose it is: as ``encodings_of`` for the other recaps."""
    return yours_or_reference("yarn_thetas", yarn_thetas)


BETA_FAST = tuple(2.0**k for k in range(-2, 7))  # the explorer's beta_fast: 0.25 .. 64


class _Reads:
    """Forward passes of one model, each kept by (length, rates, scale): two ways that give
    the same rates (two ramps rounded to the same pairs) are read once."""

    def __init__(self, best: np.ndarray, eval_n: int):
        self.best, self.eval_n, self.done = best, eval_n, {}

    def curve(self, model: Model, length: int, enc: Encodings) -> np.ndarray:
        rates = np.asarray(enc.rope_thetas, dtype=np.float64)
        key = (id(model), length, rates.round(12).tobytes(), round(enc.rope_scale, 12))
        if key not in self.done:
            self.done[key] = evaluate(model, length, n=self.eval_n, enc=enc)
        return self.done[key]

    def excess(self, model: Model, length: int, enc: Encodings) -> float:
        return float((self.curve(model, length, enc) - self.best[:length]).mean())


def longer_rope(
    model: Model,
    best: np.ndarray,
    yarn_thetas: Callable | None = None,
    finetune_steps: int | None = None,
    finetune_factor: int = 2,
    eval_n: int | None = None,
    beta_fast: tuple[float, ...] = BETA_FAST,
) -> dict:
    """The trained RoPE model read at 1x, 2x, 4x and 8x its length, six ways (LONGER).

    Forward passes only, one per method and factor, at factor x train_len positions with
    the rates of that factor, and one short fine-tune (``finetune_pi``), which is then read
    with its own rates, theta / max(finetune_factor, factor). For the explorer, YaRN at 2x,
    4x and 8x with each ``beta_fast`` (beta_slow 1). Returns the excess over ``best`` per
    method and factor, the curves, the rates of each YaRN, and the seconds spent.
    By default 60 fine-tune steps and 16 sequences a read; in a quick run
    (``COURSE_TRAIN_QUICK``) 3 steps and 2 sequences, whose numbers mean nothing.
    """
    if finetune_steps is None:
        finetune_steps = 3 if quick() else 60
    if eval_n is None:
        eval_n = 2 if quick() else 16
    cfg, L = model.cfg, model.cfg.train_len
    out: dict = {"excess": {name: {} for name, _ in LONGER}, "curves": {}, "yarn": {}}
    start = time.perf_counter()
    tuned = finetune_pi(model, finetune_factor, finetune_steps)
    out["finetune_s"] = time.perf_counter() - start
    out["finetune_steps"] = finetune_steps
    start = time.perf_counter()
    reads = _Reads(best, eval_n)
    plain = Encodings(rope_thetas=rope_rates(cfg))
    for k in FACTORS:
        ways = {
            "rope": (model, plain),
            "pi": (model, longer_encodings(cfg, "pi", k)),
            "ntk": (model, longer_encodings(cfg, "ntk", k)),
            "yarn_paper": (model, longer_encodings(cfg, "yarn_paper", k)),
            "yarn": (model, longer_encodings(cfg, "yarn", k, yarn_thetas)),
            "pi_finetune": (tuned, longer_encodings(cfg, "pi", max(finetune_factor, k))),
        }
        for name, (m, enc) in ways.items():
            out["excess"][name][k] = reads.excess(m, k * L, enc)
            if k == FACTORS[-1]:
                out["curves"][name] = reads.curve(m, k * L, enc)
    # the explorer: YaRN with each beta_fast, its curve at the smallest factor that covers,
    # and the optimum's loss on the same sequences
    floors = {k: optimum_curve(cfg, k * L, eval_n) for k in FACTORS[1:]} if beta_fast else {}
    for b in beta_fast:
        for k in FACTORS[1:]:
            enc = longer_encodings(cfg, "yarn", k, yarn_thetas, (b, 1.0))
            out["yarn"][(b, k)] = {
                "rates": np.asarray(enc.rope_thetas) / rope_rates(cfg),
                "curve": reads.curve(model, k * L, enc),
                "optimum": floors[k],
            }
    out["read_s"] = time.perf_counter() - start
    out["reads"] = len(reads.done)
    out["tuned"] = tuned
    return out


# ----------------------------------------------------------------------------------------
# Reading the trained models: per head, past the training length


def heads_past(
    model: Model,
    attention_entropy: Callable,
    length: int | None = None,
    n: int = 8,
    near: int = 2,
    enc: Encodings | None = None,
) -> dict:
    """Each head's attention inside the training length and at its far end: the entropy of
    its rows (``attention_entropy``, the learner's) and its weight on the ``near`` nearest
    keys (``near_mass``), averaged over queries t in [2, L) and over the last L queries of
    ``length`` (8 L by default), and over ``n`` sequences.

    Returns ``{"entropy": (layers, H, 2), "near": (layers, H, 2), "uniform": (2,)}``, the
    last pair the mean of log(t + 1) over the same queries (a row spread evenly).
    """
    L = model.cfg.train_len
    length = length or 8 * L
    inside, far = slice(2, L), slice(length - L, length)
    ent, mass = [], []
    for w in attention_maps(model, length, n, enc=enc):
        h = np.asarray(attention_entropy(w), dtype=np.float64).mean(axis=0)  # (H, T)
        m = near_mass(w, near).mean(axis=0)  # (H, T)
        ent.append(np.stack([h[:, inside].mean(-1), h[:, far].mean(-1)], axis=-1))
        mass.append(np.stack([m[:, inside].mean(-1), m[:, far].mean(-1)], axis=-1))
    t = np.arange(length)
    uniform = np.array([np.log(t[inside] + 1).mean(), np.log(t[far] + 1).mean()])
    return {"entropy": np.array(ent), "near": np.array(mass), "uniform": uniform}


# NoPE's temperatures tried (Wang et al. 2024): each a scale on layer 0's and layer 1's
# queries, with or without log-length scaling (query i's scores times log(i + 1) / log L)
TEMPERATURES = (
    ("none", (1.0, 1.0), False),
    ("log-length", (1.0, 1.0), True),
    ("layer 1 x1.5", (1.0, 1.5), False),
    ("layer 1 x2", (1.0, 2.0), False),
    ("layer 1 x3", (1.0, 3.0), False),
    ("both x1.5", (1.5, 1.5), False),
)


def temperatures(model: Model, factor: int = 2, n: int | None = None) -> dict[str, float]:
    """The NoPE model read at ``factor`` x its length with each of TEMPERATURES: the mean
    excess over the optimum on the same ``n`` sequences (16; 2 in a quick run)."""
    if n is None:
        n = 2 if quick() else 16
    cfg = model.cfg
    length = factor * cfg.train_len
    floor = optimum_curve(cfg, length, n)
    out = {}
    for name, (t0, t1), log_len in TEMPERATURES:
        temps = np.array([[t0] * cfg.n_heads, [t1] * cfg.n_heads])[: cfg.n_layers]
        enc = Encodings(head_temps=temps, log_scale_len=cfg.train_len if log_len else None)
        out[name] = float((evaluate(model, length, n=n, enc=enc) - floor).mean())
    return out


def breaks(curves: dict, floor: np.ndarray, breaking_point: Callable, train_len: int) -> dict:
    """Each curve's break over ``floor`` (the optimum's loss on the same sequences):
    ``breaking_point(curve - floor, train_len, window=BREAK_WINDOW)``."""
    return {
        name: breaking_point(np.asarray(c) - floor[: len(c)], train_len, window=BREAK_WINDOW)
        for name, c in curves.items()
    }


# ----------------------------------------------------------------------------------------
# The far probe: a token more than train_len back (needle_sequences)

FAR_STEPS = 200  # the probe models' steps (of batch sequences of train_len tokens)


def far_config(base: Config, steps: int | None = None) -> Config:
    """The settings of a far-probe model: ``base`` with the needle task, FAR_STEPS steps
    (or ``base``'s, when fewer: a quick run's 20) and a warm-up of at most a quarter."""
    steps = min(FAR_STEPS, base.steps) if steps is None else steps
    return replace(base, task="needle", steps=steps, warmup=min(base.warmup, max(1, steps // 4)))


def far_score(logits: np.ndarray, answer: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The probe's score of each query: right (argmax z = answer) and its loss
    -log softmax(z)[answer], in nats.
    logits (n, V), answer (n,) -> (n,) bool, (n,) float64
    """
    z = np.asarray(logits, dtype=np.float64)
    m = z.max(axis=-1, keepdims=True)
    lse = (m + np.log(np.exp(z - m).sum(axis=-1, keepdims=True)))[:, 0]
    picked = z[np.arange(len(z)), answer]
    return z.argmax(axis=-1) == answer, lse - picked


def read_far(
    model: Model,
    n: int = 64,
    seed: int = 4321,
    chunk: int = 16,
    factors: tuple[int, ...] = FACTORS,
    hide_key: bool = False,
) -> dict:
    """A far-probe model read at each factor x its length: ``n`` fresh needle sequences of
    factor x train_len tokens (the key near the start, the query at the end), scored at the
    query. ``hide_key``: the key token replaced by a chain token (the answer then nowhere in
    the input: chance, 1 / V, is all a model can score).

    Returns ``{factor: {"acc", "loss", "key_mass", "rows", "key"}}``: the share of right
    answers, the mean loss at the query, each head's mean attention weight of the query on
    the key's position (layers, H), the query's attention rows (layers, n, H, length) and
    where the key was (n,).
    """
    cfg = model.cfg
    positions = model.positions()
    out: dict = {}
    with one_thread():
        for k in factors:
            length = k * cfg.train_len
            inputs, answer, key = needle_sequences(
                cfg, n, length, np.random.default_rng([seed, length])
            )
            if hide_key:
                inputs[np.arange(n), key] = answer  # a chain token in its place
            right, loss, rows = [], [], []
            for s in range(0, n, chunk):
                logits, caches = forward(model.params, cfg, positions, inputs[s : s + chunk])
                r, lo = far_score(logits[:, -1], answer[s : s + chunk])
                right.append(r)
                loss.append(lo)
                # each layer's attention of the query (the last row)    (layers, b, H, length)
                rows.append(np.stack([p[:, :, -1, :] for p in caches["attn_maps"]]))
            rows = np.concatenate(rows, axis=1).astype(np.float64)
            rows /= rows.sum(axis=-1, keepdims=True)  # float32 rows summed again in float64
            on_key = rows[:, np.arange(n), :, key]  # (n, layers, H)
            out[k] = {
                "acc": float(np.concatenate(right).mean()),
                "loss": float(np.concatenate(loss).mean()),
                "key_mass": on_key.mean(axis=0),
                "rows": rows,
                "key": key,
            }
    return out


def far_kept(far: dict) -> list[tuple[float, float, int]]:
    """In each layer, the head with the most weight on the key at 1x: (its weight at the
    largest factor, at 1x, which head).
    # one (float, float, int) per layer
    """
    ks = sorted(far)
    first, last = far[ks[0]]["key_mass"], far[ks[-1]]["key_mass"]  # (layers, H)
    top = first.argmax(axis=1)
    return [(float(last[l, h]), float(first[l, h]), int(h)) for l, h in enumerate(top)]


def far_heads(far: dict, attention_entropy: Callable) -> dict:
    """Each head of one probe model, at the query: its weight on the key and the entropy of
    its row (``attention_entropy``, the learner's), averaged over the sequences, at each
    factor; and log(t + 1) for the query t = k train_len - 1 (a row spread evenly).

    Returns ``{"key_mass": (layers, H, factors), "entropy": (layers, H, factors),
    "uniform": (factors,)}``.
    """
    ks = sorted(far)
    mass = np.stack([far[k]["key_mass"] for k in ks], axis=-1)
    ent = np.stack(
        [np.asarray(attention_entropy(far[k]["rows"]), dtype=np.float64).mean(axis=1) for k in ks],
        axis=-1,
    )
    uniform = np.array([math.log(far[k]["rows"].shape[-1]) for k in ks])
    return {"key_mass": mass, "entropy": ent, "uniform": uniform}


# every claim the notebook prints (claims, show_claims), each in the catalogue
# (helpers/messages/train_short.yaml)
CLAIM_TEXTS = (
    "ALiBi's excess is below 0.1 at 1x, 2x, 4x and 8x",
    "sinusoidal at 8x: mean loss above ln 16",
    "learned at 8x: mean loss above ln 16",
    "rope at 8x: mean loss above ln 16",
    "every model's mean excess on positions 0-31 is within 0.1",
    "NoPE at 8x: better than sinusoidal, learned and RoPE, worse than ALiBi and T5",
    "T5 (max_distance 32): excess below 0.1 at 2x, above 0.1 at 4x",
    "the optimum breaks with window 3 (over the best expected loss), never with window 8",
    "over the optimum, window 8: ALiBi never breaks",
    "over the optimum, window 8: NoPE, sinusoidal, learned, RoPE, T5 and T5-128 break",
    "sinusoidal and learned break by position 34",
    "T5-128's buckets 22-31 are exactly 0",
    "T5-128's buckets 16-21 are below 0 (mean over heads)",
    "ALiBi's steepest head keeps its weight on the two nearest keys (within 0.05)",
    "ALiBi's flattest head spreads: its entropy rises by more than 1 nat",
    "ALiBi's head-averaged entropy rises too (by more than 0.5 nat in layer 0)",
    "NoPE's and RoPE's heads all lose the two nearest keys (weight below 0.1 at 8x)",
    "NoPE's first layer spreads evenly: its entropy within 0.15 of log(t + 1)",
    "no temperature tried lowers NoPE's 2x excess by more than 0.1",
    "plain RoPE at 2x: excess above 0.2",
    "PI alone at 2x: excess above 0.2",
    "NTK-aware at 2x: below plain RoPE, above 0.1",
    "YaRN, transformers' ramp, at 2x: excess below 0.1",
    "YaRN, the paper's ramp, at 2x: excess above 0.2",
    "PI fine-tuned at 2x: excess below 0.1",
    "PI fine-tuned at 1x: worse than before",
    "every way at 8x: excess above 0.5",
    "every probe model answers at 1x (right answers above 0.95)",
    "NoPE, learned, ALiBi, T5 and T5-128 answer the probe at every length to 8x (above 0.95)",
    "RoPE's probe at 8x: right answers below 0.95",
    "ALiBi's head most on the key at 1x (layer 0) keeps more than 0.8 of its weight there at 8x",
    "RoPE's head most on the key at 1x (layer 0) loses more than 0.25 of it by 8x",
    "ALiBi's two steep heads (slopes 1/4, 1/16) put less than 0.05 on the key at 1x, in both layers",
)


def claims(
    results: dict,
    longer: dict | None = None,
    heads: dict | None = None,
    temps: dict | None = None,
    breaking_point: Callable | None = None,
) -> list[tuple[str, str, bool]]:
    """Every claim the notebook's text makes, measured on these models: (group, claim,
    holds), the group the notebook's cell that prints it (``show_claims``).

    ``results`` from ``run_experiment``; ``longer`` from ``longer_rope``; ``heads`` a dict
    of ``heads_past`` by scheme (nope, rope, alibi); ``temps`` from ``temperatures``. The
    benchmark checks the same list on three seeds.
    """
    if breaking_point is None:
        from helpers.reference import breaking_point
    L, best, curves, ex = (
        results["config"].train_len,
        results["best"],
        results["curves"],
        results["excess"],
    )
    floor = results["optimum"]
    ln_v = math.log(results["config"].vocab)
    out: list[tuple[str, str, bool]] = []

    def say(text: str, holds) -> None:
        if text not in CLAIM_TEXTS:
            raise ValueError(f"a claim not in CLAIM_TEXTS: {text!r}")
        out.append((_group_of(text), text, bool(holds)))

    say("ALiBi's excess is below 0.1 at 1x, 2x, 4x and 8x", max(ex["alibi"].values()) < 0.1)
    for name in ("sinusoidal", "learned", "rope"):
        say(f"{name} at 8x: mean loss above ln 16", float(curves[name].mean()) > ln_v)
    below = max(abs(float((c[:L] - best[:L]).mean())) for c in curves.values())
    say("every model's mean excess on positions 0-31 is within 0.1", below < 0.1)
    e8 = {n: ex[n][8] for n in ex}
    say(
        "NoPE at 8x: better than sinusoidal, learned and RoPE, worse than ALiBi and T5",
        all(e8["nope"] < e8[n] for n in ("sinusoidal", "learned", "rope"))
        and all(e8["nope"] > e8[n] for n in ("alibi", "t5")),
    )
    say(
        "T5 (max_distance 32): excess below 0.1 at 2x, above 0.1 at 4x",
        ex["t5"][2] < 0.1 < ex["t5"][4],
    )
    noise = floor - best
    say(
        "the optimum breaks with window 3 (over the best expected loss), never with window 8",
        breaking_point(noise, L) is not None
        and breaking_point(noise, L, window=BREAK_WINDOW) is None,
    )
    broke = breaks(curves, floor, breaking_point, L)
    say("over the optimum, window 8: ALiBi never breaks", broke["alibi"] is None)
    say(
        "over the optimum, window 8: NoPE, sinusoidal, learned, RoPE, T5 and T5-128 break",
        all(broke[n] is not None for n in broke if n != "alibi"),
    )
    say(
        "sinusoidal and learned break by position 34",
        all(broke[n] is not None and broke[n] <= 34 for n in ("sinusoidal", "learned")),
    )
    md = results["models"]["t5_md128"].params["t5_table"] if "models" in results else None
    if md is not None:
        say("T5-128's buckets 22-31 are exactly 0", bool(np.all(md[22:] == 0)))
        say(
            "T5-128's buckets 16-21 are below 0 (mean over heads)",
            bool(np.all(md[16:22].mean(1) < 0)),
        )
    if heads is not None:
        al, no, ro = heads["alibi"], heads["nope"], heads["rope"]
        keep = np.abs(al["near"][:, 0, 1] - al["near"][:, 0, 0])
        say(
            "ALiBi's steepest head keeps its weight on the two nearest keys (within 0.05)",
            np.all(keep < 0.05),
        )
        spread = al["entropy"][:, -1, 1] - al["entropy"][:, -1, 0]
        say(
            "ALiBi's flattest head spreads: its entropy rises by more than 1 nat",
            np.all(spread > 1),
        )
        mean_rise = al["entropy"][:, :, 1].mean(1) - al["entropy"][:, :, 0].mean(1)
        say(
            "ALiBi's head-averaged entropy rises too (by more than 0.5 nat in layer 0)",
            mean_rise[0] > 0.5,
        )
        say(
            "NoPE's and RoPE's heads all lose the two nearest keys (weight below 0.1 at 8x)",
            np.all(no["near"][..., 1] < 0.1) and np.all(ro["near"][..., 1] < 0.1),
        )
        say(
            "NoPE's first layer spreads evenly: its entropy within 0.15 of log(t + 1)",
            np.all(np.abs(no["entropy"][0] - no["uniform"]) < 0.15),
        )
    if temps is not None:
        gain = temps["none"] - min(temps.values())
        say("no temperature tried lowers NoPE's 2x excess by more than 0.1", gain < 0.1)
    if "far" in results:
        acc = {n: {k: r[k]["acc"] for k in r} for n, r in results["far"].items()}
        say(
            "every probe model answers at 1x (right answers above 0.95)",
            all(a[1] > 0.95 for a in acc.values()),
        )
        say(
            "NoPE, learned, ALiBi, T5 and T5-128 answer the probe at every length to 8x (above 0.95)",
            all(
                min(acc[n].values()) > 0.95 for n in ("nope", "learned", "alibi", "t5", "t5_md128")
            ),
        )
        say("RoPE's probe at 8x: right answers below 0.95", acc["rope"][8] < 0.95)
        kept = {n: far_kept(r) for n, r in results["far"].items()}
        say(
            "ALiBi's head most on the key at 1x (layer 0) keeps more than 0.8 of its weight there at 8x",
            kept["alibi"][0][0] > 0.8,
        )
        say(
            "RoPE's head most on the key at 1x (layer 0) loses more than 0.25 of it by 8x",
            kept["rope"][0][1] - kept["rope"][0][0] > 0.25,
        )
        say(
            "ALiBi's two steep heads (slopes 1/4, 1/16) put less than 0.05 on the key at 1x, in both layers",
            np.all(results["far"]["alibi"][1]["key_mass"][:, :2] < 0.05),
        )
    if longer is not None:
        lx = longer["excess"]
        say("plain RoPE at 2x: excess above 0.2", lx["rope"][2] > 0.2)
        say("PI alone at 2x: excess above 0.2", lx["pi"][2] > 0.2)
        say("NTK-aware at 2x: below plain RoPE, above 0.1", 0.1 < lx["ntk"][2] < lx["rope"][2])
        say("YaRN, transformers' ramp, at 2x: excess below 0.1", lx["yarn"][2] < 0.1)
        say("YaRN, the paper's ramp, at 2x: excess above 0.2", lx["yarn_paper"][2] > 0.2)
        say("PI fine-tuned at 2x: excess below 0.1", lx["pi_finetune"][2] < 0.1)
        say("PI fine-tuned at 1x: worse than before", lx["pi_finetune"][1] > lx["rope"][1])
        say("every way at 8x: excess above 0.5", min(e[8] for e in lx.values()) > 0.5)
    return out


# which cell of the notebook prints a claim (show_claims): the first key its text contains
CLAIM_GROUPS = (
    ("ALiBi's excess is below 0.1", "experiment"),
    ("at 8x: mean loss above ln 16", "experiment"),
    ("every model's mean excess", "experiment"),
    ("NoPE at 8x: better", "experiment"),
    ("T5 (max_distance 32): excess", "experiment"),
    ("the optimum breaks with window 3", "breaks"),
    ("ALiBi never breaks", "breaks"),
    ("T5 and T5-128 break", "breaks"),
    ("sinusoidal and learned break by", "breaks"),
    ("buckets 22-31", "t5"),
    ("buckets 16-21", "t5"),
    ("steepest head", "heads"),
    ("flattest head", "heads"),
    ("head-averaged entropy", "heads"),
    ("lose the two nearest keys", "heads"),
    ("first layer spreads evenly", "heads"),
    ("no temperature tried", "nope"),
    ("probe", "far"),
    ("on the key", "far"),
)


def _group_of(text: str) -> str:
    return next((g for key, g in CLAIM_GROUPS if key in text), "longer")


def show_claims(found: list[tuple[str, str, bool]], group: str) -> None:
    """Print the claims of one group, each with its verdict on these models."""
    from helpers.i18n import tr

    for g, text, holds in found:
        if g == group:
            print(tr("claim holds") if holds else tr("claim DOES NOT HOLD"), "·", tr(text))

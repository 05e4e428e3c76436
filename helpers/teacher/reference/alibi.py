"""The reference maths of 07_alibi: linear biases.

Conventions of the whole reference: ``helpers.teacher.reference``.
"""

from __future__ import annotations

import numpy as np

from helpers import validate
from helpers.teacher.reference.order import attention

__all__ = [  # noqa: RUF022  (in the order the notebook teaches them)
    "alibi_slopes",
    "alibi_bias",
    "alibi_attention",
    "mean_attention_distance",
]

ASSIGNMENT = "07_alibi"


def alibi_slopes(n_heads) -> np.ndarray:
    """Head slopes of ALiBi (Press et al. 2022) (notebook 07_alibi).

    A power of two n: the geometric sequence 2^(-8/n), 2^(-16/n), ..., 2^(-8)
    (n=8: 1/2 ... 1/256). Otherwise: the slopes of the closest smaller power of two p,
    then every other slope of 2p, for the n - p heads left.
    # shape: (n_heads,)
    """
    n = validate.count(n_heads, "n_heads")
    p = 1 << (n.bit_length() - 1)  # largest power of two <= n

    def geometric(m: int) -> np.ndarray:
        return 2.0 ** (-8.0 * np.arange(1, m + 1) / m)

    if p == n:
        return geometric(n)
    return np.concatenate([geometric(p), geometric(2 * p)[0::2][: n - p]])


def _alibi_from_slopes(slopes: np.ndarray, seq_len: int, causal: bool) -> np.ndarray:
    i = np.arange(seq_len)
    dist = np.abs(i[:, None] - i[None, :]).astype(np.float64)  # (L, L)
    bias = -slopes[:, None, None] * dist
    if causal:
        bias = np.where(i[None, :] > i[:, None], -np.inf, bias)
    return bias


def alibi_bias(n_heads, seq_len, causal: bool = True) -> np.ndarray:
    """ALiBi's linear distance penalty, one matrix per head (notebook 07_alibi).

    bias[h, i, j] = -slope_h * (i - j) for j <= i;  for j > i: -inf (causal) or -slope_h * (j - i)
    # shape: (n_heads, seq_len, seq_len)
    """
    seq_len = validate.count(seq_len, "seq_len")
    return _alibi_from_slopes(alibi_slopes(n_heads), seq_len, bool(causal))


def alibi_attention(Q, K, V, slopes, causal: bool = True) -> np.ndarray:
    """Attention with linear biases, per head (notebook 07_alibi).

    out[h] = softmax(Q[h] K[h]^T / sqrt(d) + bias[h]) V[h]
    # shapes: Q, K, V (h, L, d), slopes (h,) -> (h, L, d)
    """
    Q = validate.matrix(Q, "Q", ndim=3)
    K = validate.matrix(K, "K", ndim=3)
    V = validate.matrix(V, "V", ndim=3)
    if not (Q.shape[:2] == K.shape[:2] == V.shape[:2]) or Q.shape[2] != K.shape[2]:
        raise ValueError(
            f"Q, K and V must share (heads, seq_len) and Q, K their d, got {Q.shape}, {K.shape}, {V.shape}"
        )
    s = validate.matrix(slopes, "slopes", ndim=1)
    if s.shape[0] != Q.shape[0]:
        raise ValueError(f"slopes must have one value per head ({Q.shape[0]}), got shape {s.shape}")
    return attention(Q, K, V, bias=_alibi_from_slopes(s, Q.shape[1], bool(causal)))


def mean_attention_distance(weights) -> np.ndarray:
    """How far each head looks on average (notebook 07_alibi).

    dist_h = sum_{i,j} w[h, i, j] |i - j| / L
    # shapes: weights (h, L, L) -> (h,)
    """
    w = validate.matrix(weights, "weights", ndim=3)
    L = w.shape[1]
    if w.shape[2] != L or L == 0:
        raise ValueError(f"weights must have shape (h, L, L), got {w.shape}")
    i = np.arange(L)
    dist = np.abs(i[:, None] - i[None, :])
    return np.sum(w * dist, axis=(1, 2)) / L

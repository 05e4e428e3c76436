"""The reference maths of 09_families: learned, relative and no positions.

Conventions of the whole reference: ``helpers.teacher.reference``.
"""

from __future__ import annotations

import math

import numpy as np

from helpers import validate
from helpers.teacher.reference.order import _permutation, attention

__all__ = [  # noqa: RUF022  (in the order the notebook teaches them)
    "learned_lookup",
    "relative_positions",
    "t5_bucket",
    "t5_bias",
    "shaw_scores",
    "causal_attention",
    "causal_order_gap",
]

ASSIGNMENT = "09_families"


def learned_lookup(table, positions) -> np.ndarray:
    """A learned absolute position table, read row by row (notebook 09_families).

    out[..., :] = table[positions[...], :]   (GPT-2 / BERT style; 512 x 32 = 16,384 parameters)
    There is no row past the last one: a position < 0 or >= max_len is a ValueError,
    never wrapped around, never clipped to the last row.
    # shapes: table (max_len, d), positions any shape -> positions.shape + (d,); a new array
    """
    table = validate.matrix(table, "table", ndim=2)
    max_len = table.shape[0]
    p = validate.positions(positions, "positions", allow_negative=True)
    outside = (p < 0) | (p >= max_len)
    if np.any(outside):
        bad = sorted({int(v) for v in p[outside].ravel()[:5]})
        raise ValueError(
            f"positions must lie in 0 .. max_len - 1 = {max_len - 1}: the table has "
            f"max_len={max_len} rows and no row for position(s) {bad}"
        )
    return table[p.astype(np.int64)]


def relative_positions(q_len, k_len) -> np.ndarray:
    """Key position minus query position (notebook 09_families).

    rel[i, j] = j - i   (T5's memory_position - context_position)
    # shape: (q_len, k_len), int64
    """
    return _key_minus_query(validate.count(q_len, "q_len"), validate.count(k_len, "k_len"))


def _key_minus_query(n: int, m: int) -> np.ndarray:
    return np.arange(m, dtype=np.int64)[None, :] - np.arange(n, dtype=np.int64)[:, None]


def _t5_settings(num_buckets, max_distance) -> tuple[int, int]:
    num_buckets = validate.count(num_buckets, "num_buckets", minimum=4)
    if num_buckets % 2:
        raise ValueError(f"num_buckets must be an even integer >= 4, got {num_buckets!r}")
    max_distance = validate.count(max_distance, "max_distance", minimum=num_buckets // 2 + 1)
    return num_buckets, max_distance


def t5_bucket(rel, bidirectional: bool = True, num_buckets=32, max_distance=128) -> np.ndarray:
    """T5's bucket of each relative position rel = j - i (notebook 09_families).

    Bidirectional: nb = num_buckets // 2 buckets per sign, rel > 0 shifted by nb, r = |rel|;
    unidirectional: nb = num_buckets, r = -min(rel, 0) (future keys fall in bucket 0).
    With e = nb // 2 exact buckets:
        bucket(r) = r                                                          if r < e
        bucket(r) = min(nb - 1, e + floor(log(r / e) / log(max_distance / e) * (nb - e)))
    as Hugging Face transformers' ``T5Attention._relative_position_bucket``.
    # shape: same as rel, int64
    """
    num_buckets, max_distance = _t5_settings(num_buckets, max_distance)
    r = validate.positions(rel, "rel", allow_negative=True).astype(np.int64)
    nb = num_buckets
    if bidirectional:
        nb //= 2
        offset = np.where(r > 0, nb, 0)
        r = np.abs(r)
    else:
        offset = np.zeros_like(r)
        r = -np.minimum(r, 0)
    exact = nb // 2
    logs = np.log(np.maximum(r, exact) / exact) / math.log(max_distance / exact)
    large = np.minimum(exact + np.floor(logs * (nb - exact)).astype(np.int64), nb - 1)
    return (offset + np.where(r < exact, r, large)).astype(np.int64)


def t5_bias(bucket_bias, q_len, k_len, bidirectional: bool = True, max_distance=128) -> np.ndarray:
    """T5's learned scalar bias, one per bucket and head (notebook 09_families).

    bias[h, i, j] = bucket_bias[t5_bucket(j - i), h],  num_buckets = bucket_bias.shape[0]
    # shapes: bucket_bias (num_buckets, n_heads) -> (n_heads, q_len, k_len)
    """
    bb = validate.matrix(bucket_bias, "bucket_bias", ndim=2)
    if bb.shape[0] < 4 or bb.shape[0] % 2:
        raise ValueError(
            "bucket_bias must have an even number >= 4 of rows (one per bucket), "
            f"got shape {bb.shape}"
        )
    buckets = t5_bucket(relative_positions(q_len, k_len), bidirectional, bb.shape[0], max_distance)
    return np.moveaxis(bb[buckets], -1, 0)  # (q_len, k_len, n_heads) -> (n_heads, q_len, k_len)


def shaw_scores(Q, K, rel_k, max_rel) -> np.ndarray:
    """Shaw, Uszkoreit and Vaswani's relative scores (notebook 09_families).

    e[i, j] = Q[i] . (K[j] + rel_k[clip(j - i, -max_rel, max_rel) + max_rel]) / sqrt(d)
    # shapes: Q (n, d), K (m, d), rel_k (2 max_rel + 1, d) -> (n, m)
    """
    Q = validate.matrix(Q, "Q", ndim=2)
    K = validate.matrix(K, "K", ndim=2)
    R = validate.matrix(rel_k, "rel_k", ndim=2)
    max_rel = validate.count(max_rel, "max_rel", minimum=0)
    n, d = Q.shape
    m = K.shape[0]
    if K.shape[1] != d:
        raise ValueError(f"Q and K must share d, got shapes {Q.shape} and {K.shape}")
    if R.shape != (2 * max_rel + 1, d):
        raise ValueError(
            f"rel_k must have shape (2 * max_rel + 1, d) = {(2 * max_rel + 1, d)}, got {R.shape}"
        )
    rows = np.clip(_key_minus_query(n, m), -max_rel, max_rel) + max_rel  # (n, m)
    rel_part = np.take_along_axis(Q @ R.T, rows, axis=1)  # Q[i] . rel_k[rows[i, j]]
    return (Q @ K.T + rel_part) / np.sqrt(d)


def causal_attention(Q, K, V) -> np.ndarray:
    """Attention with a causal mask: query i sees keys j <= i only (notebook 09_families).

    causal_attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + M) V,  M[i, j] = -inf for j > i, else 0
    # shapes: Q (n, d_k), K (m, d_k), V (m, d_v) -> (n, d_v)
    """
    Q = validate.matrix(Q, "Q")
    K = validate.matrix(K, "K")
    if Q.ndim < 2 or K.ndim < 2:
        raise ValueError(
            f"Q and K must be at least 2-dimensional, got shapes {Q.shape} and {K.shape}"
        )
    mask = np.where(_key_minus_query(Q.shape[-2], K.shape[-2]) > 0, -np.inf, 0.0)
    return attention(Q, K, V, bias=mask)


def _projections(X, Wq, Wk, Wv) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X Wq, X Wk, X Wv), with the shape checks of self_attention."""
    X = validate.matrix(X, "X", ndim=2)
    out = []
    for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
        W = validate.matrix(W, name, ndim=2)
        if W.shape[0] != X.shape[1]:
            raise ValueError(f"{name} must have {X.shape[1]} rows to match X, got shape {W.shape}")
        out.append(X @ W)
    return out[0], out[1], out[2]


def causal_order_gap(X, Wq, Wk, Wv, perm) -> float:
    """Order leaks in through the causal mask, with no positions at all (notebook 09_families).

    gap = max |CSA(X[perm]) - CSA(X)[perm]|,  CSA(X) = causal_attention(X Wq, X Wk, X Wv)
    (clearly > 0 for any perm but the identity: the NoPE observation)
    """
    X = validate.matrix(X, "X", ndim=2)
    p = _permutation(perm, X.shape[0])
    shuffled = causal_attention(*_projections(X[p], Wq, Wk, Wv))
    unshuffled = causal_attention(*_projections(X, Wq, Wk, Wv))[p]
    return float(np.max(np.abs(shuffled - unshuffled)))

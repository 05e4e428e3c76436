"""The reference maths of 01_order: why attention loses order.

Conventions of the whole reference: ``helpers.teacher.reference``.
"""

from __future__ import annotations

import numpy as np

from helpers import validate

__all__ = [  # noqa: RUF022  (in the order the notebook teaches them)
    "softmax",
    "attention",
    "self_attention",
    "permutation_gap",
    "order_gap_with_pe",
]

ASSIGNMENT = "01_order"


def softmax(x, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax (notebook 01_order).

    softmax(x)_j = exp(x_j - max x) / sum_k exp(x_k - max x), along ``axis``.
    Subtracting the max keeps ``exp`` from overflowing: ``[1000, 1000] -> [0.5, 0.5]``.
    A row of ``-inf`` with one finite entry gives a one-hot row.
    # shape: same as x
    """
    x = validate.matrix(x, "x")
    if x.ndim == 0:
        raise ValueError(f"x must have at least one dimension, got a scalar {x!r}")
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def attention(Q, K, V, bias=None) -> np.ndarray:
    """Scaled dot-product attention (notebook 01_order).

    attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + bias) V
    # shapes: Q (n, d_k), K (m, d_k), V (m, d_v), bias broadcastable to (n, m) -> (n, d_v)
    Leading batch axes are allowed on Q, K and V (e.g. heads).
    """
    Q = validate.matrix(Q, "Q")
    K = validate.matrix(K, "K")
    V = validate.matrix(V, "V")
    for name, arr in (("Q", Q), ("K", K), ("V", V)):
        if arr.ndim < 2:
            raise ValueError(f"{name} must be at least 2-dimensional, got shape {arr.shape}")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must share d_k, got shapes {Q.shape} and {K.shape}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must have as many rows, got shapes {K.shape} and {V.shape}")
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if bias is not None:
        bias = validate.matrix(bias, "bias")
        try:
            scores = scores + bias
        except ValueError as exc:
            raise ValueError(
                f"bias must broadcast to the scores' shape {scores.shape}, got shape {bias.shape}"
            ) from exc
    return softmax(scores, axis=-1) @ V


def self_attention(X, Wq, Wk, Wv) -> np.ndarray:
    """Self-attention without positions (notebook 01_order).

    self_attention(X) = attention(X Wq, X Wk, X Wv)
    # shapes: X (n, d), Wq (d, d_k), Wk (d, d_k), Wv (d, d_v) -> (n, d_v)
    """
    X = validate.matrix(X, "X", ndim=2)
    mats = {}
    for name, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv)):
        W = validate.matrix(W, name, ndim=2)
        if W.shape[0] != X.shape[1]:
            raise ValueError(f"{name} must have {X.shape[1]} rows to match X, got shape {W.shape}")
        mats[name] = W
    return attention(X @ mats["Wq"], X @ mats["Wk"], X @ mats["Wv"])


def _permutation(perm, n: int) -> np.ndarray:
    p = np.asarray(perm)
    if p.shape != (n,) or p.dtype.kind not in "iu" or not np.array_equal(np.sort(p), np.arange(n)):
        raise ValueError(f"perm must be a permutation of 0..{n - 1}, got {perm!r}")
    return p


def permutation_gap(X, Wq, Wk, Wv, perm) -> float:
    """How far self-attention is from permutation equivariance (notebook 01_order).

    gap = max |self_attention(X[perm]) - self_attention(X)[perm]|   (about 1e-16 in float64)
    """
    X = validate.matrix(X, "X", ndim=2)
    p = _permutation(perm, X.shape[0])
    return float(
        np.max(np.abs(self_attention(X[p], Wq, Wk, Wv) - self_attention(X, Wq, Wk, Wv)[p]))
    )


def order_gap_with_pe(X, P, Wq, Wk, Wv, perm) -> float:
    """The same gap when positions are added after shuffling (notebook 01_order).

    gap = max |self_attention(X[perm] + P) - self_attention(X + P)[perm]|   (clearly > 0)
    # shapes: X (n, d), P (>= n, d); the first n rows of P are used
    """
    X = validate.matrix(X, "X", ndim=2)
    P = validate.matrix(P, "P", ndim=2)
    n, d = X.shape
    if P.shape[1] != d or P.shape[0] < n:
        raise ValueError(f"P must have at least {n} rows and {d} columns, got shape {P.shape}")
    P = P[:n]
    p = _permutation(perm, n)
    shuffled_then_placed = self_attention(X[p] + P, Wq, Wk, Wv)
    placed_then_shuffled = self_attention(X + P, Wq, Wk, Wv)[p]
    return float(np.max(np.abs(shuffled_then_placed - placed_then_shuffled)))

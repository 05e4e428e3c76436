"""The reference maths of 13_train_short: what a trained model does past its length.

Conventions of the whole reference: ``helpers.teacher.reference``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [  # noqa: RUF022  (in the order the notebook teaches them)
    "next_token_loss",
    "chain_entropy",
    "attention_entropy",
    "breaking_point",
]

ASSIGNMENT = "13_train_short"


def _real_array(x, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of real numbers, got {x!r}") from exc
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got a value that is inf or nan")
    return arr


def next_token_loss(logits, targets) -> np.ndarray:
    """The loss of each next-token prediction, in nats (notebook 13_train_short).

    loss_t = -log softmax(z_t)[y_t] = logsumexp(z_t) - z_t[y_t],
    logsumexp(z) = max(z) + log sum_v exp(z_v - max(z))   (never inf for finite z)
    # shapes: logits (..., T, V), targets (..., T) -> (..., T)
    """
    z = _real_array(logits, "logits")
    if z.ndim < 2:
        raise ValueError(f"logits must have shape (..., T, V), got shape {z.shape}")
    V = z.shape[-1]
    if V < 2:
        raise ValueError(f"logits need V >= 2 tokens on their last axis, got V = {V}")
    y_in = np.asarray(targets)
    if y_in.dtype == bool or not (
        np.issubdtype(y_in.dtype, np.integer)
        or (np.issubdtype(y_in.dtype, np.floating) and np.all(y_in == np.round(y_in)))
    ):
        raise ValueError(f"targets must be integers in [0, {V}), got {targets!r}")
    if y_in.shape != z.shape[:-1]:
        raise ValueError(
            f"targets must have the shape of logits without its last axis, {z.shape[:-1]}, "
            f"got {y_in.shape}"
        )
    y = y_in.astype(np.int64)
    if np.any((y < 0) | (y >= V)):
        raise ValueError(f"targets must be integers in [0, {V}), got {targets!r}")
    m = z.max(axis=-1, keepdims=True)
    lse = m[..., 0] + np.log(np.exp(z - m).sum(axis=-1))
    return lse - np.take_along_axis(z, y[..., None], axis=-1)[..., 0]


def _entropy(p: np.ndarray) -> np.ndarray:
    """-sum p log p over the last axis, 0 log 0 = 0."""
    safe = np.where(p > 0, p, 1.0)
    return -(p * np.log(safe)).sum(axis=-1) + 0.0  # + 0.0: no -0.0


def chain_entropy(table) -> tuple[float, float, float]:
    """The best possible expected loss of an order-2 chain, by position (notebook 13_train_short).

    pi(a, b): the stationary distribution of the pair chain (a, b) -> (b, c), pi = pi P;
    h0 = H(pi(a)),  h1 = sum_a pi(a) H(pi(b | a)),  h_rest = sum_{a,b} pi(a, b) H(table[a, b])
    # shapes: table (V, V, V) -> three floats, nats
    """
    t = _real_array(table, "table")
    if t.ndim != 3 or not (t.shape[0] == t.shape[1] == t.shape[2]):
        raise ValueError(f"table must have shape (V, V, V), got {t.shape}")
    V = t.shape[0]
    if V < 2:
        raise ValueError(f"table needs V >= 2 tokens, got V = {V}")
    if np.any(t < 0):
        raise ValueError("table must have no negative entries")
    sums = t.sum(axis=-1)
    if np.any(np.abs(sums - 1.0) > 1e-9):
        raise ValueError("every row table[a, b] must sum to 1 (within 1e-9)")
    # P[(a, b), (b, c)] = table[a, b, c]
    P = np.zeros((V, V, V, V))
    for b in range(V):
        P[:, b, b, :] = t[:, b, :]
    P = P.reshape(V * V, V * V)
    # pi (P - I) = 0 and sum(pi) = 1: the last equation replaced by the sum
    A = P.T - np.eye(V * V)
    A[-1, :] = 1.0
    rhs = np.zeros(V * V)
    rhs[-1] = 1.0
    pi = np.clip(np.linalg.solve(A, rhs), 0.0, None).reshape(V, V)
    pi /= pi.sum()
    pa = pi.sum(axis=1)  # pi(a)
    h0 = float(_entropy(pa))
    cond = pi / np.where(pa > 0, pa, 1.0)[:, None]  # pi(b | a)
    h1 = float((pa * _entropy(cond)).sum())
    h_rest = float((pi * _entropy(t)).sum())
    return h0, h1, h_rest


def attention_entropy(weights) -> np.ndarray:
    """The entropy of each query's attention row, in nats (notebook 13_train_short).

    H_i = -sum_j w_ij log w_ij,  0 log 0 = 0
    # shapes: weights (..., T, S) -> (..., T)
    """
    w = _real_array(weights, "weights")
    if w.ndim < 1:
        raise ValueError(f"weights must have shape (..., T, S), got shape {w.shape}")
    if np.any(w < 0):
        raise ValueError("weights must not be negative")
    if np.any(np.abs(w.sum(axis=-1) - 1.0) > 1e-6):
        raise ValueError("every row of weights must sum to 1 (within 1e-6)")
    return _entropy(w)


def breaking_point(excess, train_len, threshold=0.1, window=3):
    """Where a model breaks past its training length (notebook 13_train_short).

    The first p >= train_len with excess[p], ..., excess[p + window - 1] all > threshold;
    None if there is none.
    # shapes: excess (T,) -> int or None
    """
    e = _real_array(excess, "excess")
    if e.ndim != 1:
        raise ValueError(f"excess must have shape (T,), got shape {e.shape}")
    T = e.shape[0]
    if (
        isinstance(train_len, bool)
        or not isinstance(train_len, numbers.Integral)
        or not 0 <= train_len < T
    ):
        raise ValueError(f"train_len must be an integer in [0, {T}), got {train_len!r}")
    if isinstance(window, bool) or not isinstance(window, numbers.Integral) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, numbers.Real)
        or not math.isfinite(float(threshold))
        or threshold < 0
    ):
        raise ValueError(f"threshold must be a finite number >= 0, got {threshold!r}")
    # full[p]: positions p .. p + window - 1 all above the threshold   (T - window + 1,)
    if window > T:
        return None
    full = np.lib.stride_tricks.sliding_window_view(e > threshold, int(window)).all(axis=-1)
    hits = np.flatnonzero(full[int(train_len) :])
    return int(train_len) + int(hits[0]) if hits.size else None

"""The reference maths of the course: every graded function, under its spec name.

One function per graded function of COURSE_SPEC.md, vectorised numpy in float64.
Each docstring carries the formula, the shapes and the notebook that builds it.
Bad input raises ``ValueError`` naming the argument and the value.

Conventions: pair ``i`` is dimensions ``(2i, 2i+1)``; its angle rate is
``theta_i = base ** (-2 i / d)``; rotations are counter-clockwise.

This module is the teacher's: the learner build of ``helpers`` leaves it out.
"""

from __future__ import annotations

import json
import math
import numbers
from pathlib import Path

import numpy as np

from helpers import validate
from helpers.teacher.reference_rope_today import (
    layer_rope_bases,
    llama4_attn_scales,
    longrope_thetas,
    mla_cache_values,
    partial_thetas,
    proportional_thetas,
    rerotate_keys,
    sink_cache_update,
)

__all__ = [  # noqa: RUF022  (in teaching order, notebook by notebook)
    # 01_order
    "softmax",
    "attention",
    "self_attention",
    "permutation_gap",
    "order_gap_with_pe",
    # 02_sincos
    "angle_rates",
    "sinusoidal_pe",
    "wavelengths",
    "embed_with_positions",
    "text_heatmap",
    # 03_norm
    "pe_norms",
    "expected_norm",
    "min_pairwise_distance",
    "embedding_to_position_ratio",
    # 04_decay
    "dot_profile",
    "closed_form_dot",
    "first_rebound",
    "rope_decay_bound",
    # 05_rotation
    "rotation_2d",
    "rotate_pair",
    "shift_matrix",
    "shift_error",
    # 06_rope
    "DIM",
    "THETA_BASE",
    "demo_vectors",
    "dot",
    "thetas",
    "apply_rope",
    "rope_score",
    "turns",
    "slow_pairs",
    "rope_half",
    "interleaved_to_half",
    # 07_alibi
    "alibi_slopes",
    "alibi_bias",
    "alibi_attention",
    "mean_attention_distance",
    # 08_offsets
    "sin_pos",
    "add_score",
    "offset_scan",
    "spread",
    "rope_report",
    "write_report",
    # 09_families
    "learned_lookup",
    "relative_positions",
    "t5_bucket",
    "t5_bias",
    "shaw_scores",
    "causal_attention",
    "causal_order_gap",
    # 10_long_context
    "pi_thetas",
    "ntk_base",
    "ntk_thetas",
    "dynamic_ntk_thetas",
    "yarn_thetas",
    "llama3_thetas",
    "unseen_angle_pairs",
    # 12_rope_today (helpers/teacher/reference_rope_today.py)
    "partial_thetas",
    "proportional_thetas",
    "longrope_thetas",
    "layer_rope_bases",
    "llama4_attn_scales",
    "rerotate_keys",
    "sink_cache_update",
    "mla_cache_values",
]

DIM = 64
THETA_BASE = 10000.0
DEFAULT_BASE = 10000.0


# --------------------------------------------------------------------------- 01_order


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


# --------------------------------------------------------------------------- 02_sincos


def angle_rates(d, base=DEFAULT_BASE) -> np.ndarray:
    """Angle rate of each pair (notebook 02_sincos).

    theta_i = base ** (-2 i / d) = exp(-(2 i / d) * ln(base)),  i = 0 .. d/2 - 1
    computed in log space so that large d and base stay exact to the last digit.
    # shape: (d // 2,)
    """
    d = validate.dim(d)
    base = validate.base(base)
    i = np.arange(d // 2, dtype=np.float64)
    return np.exp(-(2.0 * i / d) * math.log(base))


def _pe_rows(pos: np.ndarray, d: int, base: float) -> np.ndarray:
    angles = pos[..., None] * angle_rates(d, base)  # shape: pos.shape + (d/2,)
    out = np.empty(pos.shape + (d,), dtype=np.float64)
    out[..., 0::2] = np.sin(angles)
    out[..., 1::2] = np.cos(angles)
    return out


def sinusoidal_pe(max_len, d, base=DEFAULT_BASE) -> np.ndarray:
    """The sinusoidal position table of "Attention Is All You Need" (notebook 02_sincos).

    PE[pos, 2i] = sin(pos * theta_i),  PE[pos, 2i+1] = cos(pos * theta_i)
    # shape: (max_len, d)
    """
    max_len = validate.count(max_len, "max_len")
    d = validate.dim(d)
    base = validate.base(base)
    return _pe_rows(np.arange(max_len, dtype=np.float64), d, base)


def wavelengths(d, base=DEFAULT_BASE) -> np.ndarray:
    """Wavelength of each pair in tokens (notebook 02_sincos).

    lambda_i = 2 pi / theta_i   (d=4: 6.28 and 628.32)
    # shape: (d // 2,)
    """
    return 2.0 * np.pi / angle_rates(d, base)


def embed_with_positions(token_emb, base=DEFAULT_BASE) -> np.ndarray:
    """Token embeddings scaled by sqrt(d), plus positions (notebook 02_sincos).

    z = token_emb * sqrt(d) + PE[:n]
    # shapes: token_emb (n, d) -> (n, d)
    """
    emb = validate.matrix(token_emb, "token_emb", ndim=2)
    n, d = emb.shape
    validate.dim(d, "token_emb's last dimension")
    if n == 0:
        raise ValueError("token_emb must have at least one row, got shape (0, d)")
    return emb * np.sqrt(d) + sinusoidal_pe(n, d, base)


def text_heatmap(pe, ramp: str = " .:-=+*#%@") -> str:
    """A position table drawn with characters (notebook 02_sincos).

    level(v) = min(len(ramp) - 1, floor((v + 1) / 2 * len(ramp))); one line per row.
    """
    pe = validate.matrix(pe, "pe", ndim=2)
    if not isinstance(ramp, str) or len(ramp) == 0:
        raise ValueError(f"ramp must be a non-empty string, got {ramp!r}")
    n = len(ramp)
    levels = np.clip(np.floor((pe + 1.0) / 2.0 * n), 0, n - 1).astype(int)
    chars = np.array(list(ramp))[levels]
    return "\n".join("".join(row) for row in chars)


# --------------------------------------------------------------------------- 03_norm


def pe_norms(pe) -> np.ndarray:
    """Euclidean norm of each row (notebook 03_norm).

    ||PE[pos]|| = sqrt(sum_j PE[pos, j]^2) = sqrt(d / 2) for every pos
    # shape: (max_len,)
    """
    pe = validate.matrix(pe, "pe", ndim=2)
    return np.sqrt(np.sum(pe * pe, axis=1))


def expected_norm(d) -> float:
    """The norm every position has: d/2 pairs of sin^2 + cos^2 = 1 (notebook 03_norm).

    expected_norm(d) = sqrt(d / 2)   (d=32: 4.0)
    """
    d = validate.dim(d)
    return math.sqrt(d / 2)


def min_pairwise_distance(pe) -> float:
    """Smallest distance between two different rows (notebook 03_norm).

    min_{a != b} ||PE[a] - PE[b]||   (d=32, 100 rows: 1.1716)
    Squared distances come from the Gram matrix; the closest candidates are then
    measured again directly so that the answer is exact to the last digits.
    """
    pe = validate.matrix(pe, "pe", ndim=2)
    n = pe.shape[0]
    if n < 2:
        raise ValueError(f"pe must have at least two rows, got shape {pe.shape}")
    sq = np.sum(pe * pe, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (pe @ pe.T)
    a, b = np.triu_indices(n, k=1)
    cand = d2[a, b]
    k = min(cand.size, 32)
    best = np.argpartition(cand, k - 1)[:k]
    exact = np.linalg.norm(pe[a[best]] - pe[b[best]], axis=1)
    return float(np.min(exact))


def embedding_to_position_ratio(token_emb, scale: bool = True) -> float:
    """How loud the words are against the positions (notebook 03_norm).

    ratio = mean_rows ||token_emb[row]|| * (sqrt(d) if scale else 1) / sqrt(d / 2)
    """
    emb = validate.matrix(token_emb, "token_emb", ndim=2)
    d = validate.dim(emb.shape[1], "token_emb's last dimension")
    if emb.shape[0] == 0:
        raise ValueError("token_emb must have at least one row, got shape (0, d)")
    mean_norm = float(np.mean(np.linalg.norm(emb, axis=1)))
    if scale:
        mean_norm *= math.sqrt(d)
    return mean_norm / expected_norm(d)


# --------------------------------------------------------------------------- 04_decay


def dot_profile(pe, pos, offsets) -> np.ndarray:
    """Dot product of one position with the positions after it (notebook 04_decay).

    profile[k] = PE[pos] . PE[pos + k]   for k in offsets
    (d=32, pos=25, offsets 0,1,2,3,5,8,10,15,20: 16.00 15.31 13.73 ... 8.41 10.47)
    # shape: (len(offsets),)
    """
    pe = validate.matrix(pe, "pe", ndim=2)
    p = validate.positions(pos, "pos")
    if p.ndim != 0:
        raise ValueError(f"pos must be a single integer, got {pos!r}")
    p = int(p)
    ks = validate.positions(offsets, "offsets", allow_negative=True)
    if ks.ndim != 1:
        raise ValueError(f"offsets must be a list of integers, got {offsets!r}")
    rows = p + ks.astype(np.int64)
    if p >= pe.shape[0] or np.any(rows < 0) or np.any(rows >= pe.shape[0]):
        raise ValueError(
            f"offsets must keep pos + k inside the table of {pe.shape[0]} rows, "
            f"got pos={p} and offsets={list(ks.astype(int))}"
        )
    return pe[rows] @ pe[p]


def closed_form_dot(offsets, d, base=DEFAULT_BASE) -> np.ndarray:
    """The dot product as a function of the offset alone (notebook 04_decay).

    PE[p] . PE[p + k] = sum_i (sin a sin b + cos a cos b) = sum_i cos(k theta_i)
    # shape: (len(offsets),)
    """
    ks = validate.positions(offsets, "offsets", allow_negative=True)
    if ks.ndim != 1:
        raise ValueError(f"offsets must be a list of integers, got {offsets!r}")
    return np.sum(np.cos(ks[:, None] * angle_rates(d, base)), axis=1)


def first_rebound(offsets, profile):
    """The first offset whose value is larger than the previous one's (notebook 04_decay).

    Returns offsets[t] for the smallest t with profile[t] > profile[t-1], else None.
    (the table of the positional-encoding article rises again at 20)
    """
    ks = list(offsets)
    vals = validate.matrix(profile, "profile", ndim=1)
    if len(ks) != vals.shape[0]:
        raise ValueError(
            f"offsets and profile must have the same length, got {len(ks)} and {vals.shape[0]}"
        )
    up = np.nonzero(vals[1:] > vals[:-1])[0]
    if up.size == 0:
        return None
    return ks[int(up[0]) + 1]


def rope_decay_bound(d, max_dist, base=DEFAULT_BASE) -> np.ndarray:
    """RoFormer's long-term decay bound (section 3.4.3) for distances 0..max_dist (notebook 04_decay).

    bound(r) = (1 / (d/2)) * sum_{j=1}^{d/2} |S_j|,  S_j = sum_{i=0}^{j-1} exp(1j * r * theta_i)
    # shape: (max_dist + 1,)
    """
    d = validate.dim(d)
    max_dist = validate.count(max_dist, "max_dist", minimum=0)
    r = np.arange(max_dist + 1, dtype=np.float64)
    S = np.cumsum(np.exp(1j * r[:, None] * angle_rates(d, base)), axis=1)  # (R, d/2)
    return np.mean(np.abs(S), axis=1)


# --------------------------------------------------------------------------- 05_rotation


def rotation_2d(angle) -> np.ndarray:
    """Counter-clockwise rotation by ``angle`` radians (notebook 05_rotation).

    R(a) = [[cos a, -sin a], [sin a, cos a]]
    # shape: (2, 2), or angle.shape + (2, 2) for an array of angles
    """
    a = validate.matrix(angle, "angle")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"angle must be finite, got {angle!r}")
    c, s = np.cos(a), np.sin(a)
    return np.stack([np.stack([c, -s], axis=-1), np.stack([s, c], axis=-1)], axis=-2)


def rotate_pair(x0, x1, angle) -> tuple[float, float]:
    """Rotate the point (x0, x1) counter-clockwise (notebook 05_rotation).

    (x0, x1) -> (x0 cos a - x1 sin a, x0 sin a + x1 cos a);  rotate_pair(1, 0, pi/2) = (0, 1)
    """
    vals = [validate.matrix(v, name) for v, name in ((x0, "x0"), (x1, "x1"), (angle, "angle"))]
    for v, name in zip(vals, ("x0", "x1", "angle")):
        if v.ndim != 0 or not np.isfinite(v):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    x0, x1, a = (float(v) for v in vals)
    c, s = math.cos(a), math.sin(a)
    return (x0 * c - x1 * s, x0 * s + x1 * c)


def shift_matrix(k, d, base=DEFAULT_BASE) -> np.ndarray:
    """The fixed linear map that moves a position table k steps (notebook 05_rotation).

    Block i acts on the [sin, cos] pair (2i, 2i+1):
        [[cos(k theta_i),  sin(k theta_i)],
         [-sin(k theta_i), cos(k theta_i)]]
    so that PE[pos + k] = M @ PE[pos] for every pos.
    # shape: (d, d)
    """
    k = validate.positions(k, "k", allow_negative=True)
    if k.ndim != 0:
        raise ValueError(f"k must be a single integer, got {k!r}")
    d = validate.dim(d)
    a = float(k) * angle_rates(d, base)
    c, s = np.cos(a), np.sin(a)
    M = np.zeros((d, d))
    i = np.arange(0, d, 2)
    M[i, i] = c
    M[i, i + 1] = s
    M[i + 1, i] = -s
    M[i + 1, i + 1] = c
    return M


def shift_error(k, d, max_len, base=DEFAULT_BASE) -> float:
    """How exactly the shift matrix moves the table (notebook 05_rotation).

    max_{pos + k < max_len} |M(k) PE[pos] - PE[pos + k]|
    """
    kk = validate.positions(k, "k")
    if kk.ndim != 0:
        raise ValueError(f"k must be a single integer, got {k!r}")
    kk = int(kk)
    max_len = validate.count(max_len, "max_len")
    if kk >= max_len:
        raise ValueError(f"k must be smaller than max_len={max_len}, got {kk}")
    pe = sinusoidal_pe(max_len, d, base)
    M = shift_matrix(kk, d, base)
    return float(np.max(np.abs(pe[: max_len - kk] @ M.T - pe[kk:])))


# --------------------------------------------------------------------------- 06_rope


def demo_vectors() -> tuple[np.ndarray, np.ndarray]:
    """The fixed query and key of the RoPE exercise (notebook 06_rope).

    q[j] = cos(0.7 j + 0.3),  k[j] = sin(0.4 j + 1.1),  j = 0 .. DIM - 1
    """
    j = np.arange(DIM, dtype=np.float64)
    return np.cos(0.7 * j + 0.3), np.sin(0.4 * j + 1.1)


def dot(a, b):
    """Dot product along the last axis (notebook 06_rope): sum_j a_j b_j.

    Returns a float for two vectors, an array for batches.
    """
    a = validate.matrix(a, "a")
    b = validate.matrix(b, "b")
    if a.ndim == 0 or b.ndim == 0 or a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"a and b must be vectors of the same length, got shapes {a.shape} and {b.shape}"
        )
    out = np.sum(a * b, axis=-1)
    return float(out) if out.ndim == 0 else out


def thetas(d, base=THETA_BASE) -> np.ndarray:
    """Rotation speed of each pair (notebook 06_rope): theta_i = base ** (-2 i / d); first value 1.0.

    # shape: (d // 2,)
    """
    return angle_rates(d, base)


def _rotate_pairs(x: np.ndarray, even, odd, angles: np.ndarray) -> np.ndarray:
    c, s = np.cos(angles), np.sin(angles)
    out = np.empty_like(x)
    x0, x1 = x[..., even], x[..., odd]
    out[..., even] = x0 * c - x1 * s
    out[..., odd] = x0 * s + x1 * c
    return out


def _rope_angles(vec, pos, base):
    x, d = validate.vector_dim(vec, "vec")
    p = validate.positions(pos, "pos")
    if p.ndim and p.shape != x.shape[:-1]:
        raise ValueError(
            f"pos must be a scalar or have shape vec.shape[:-1] = {x.shape[:-1]}, got shape {p.shape}"
        )
    return x, d, p[..., None] * thetas(d, base)


def _same_width(q, k) -> tuple[np.ndarray, np.ndarray, int]:
    q, d = validate.vector_dim(q, "q")
    k, dk = validate.vector_dim(k, "k")
    if d != dk:
        raise ValueError(f"q and k must have the same length d, got {d} and {dk}")
    return q, k, d


def apply_rope(vec, pos, base=THETA_BASE) -> np.ndarray:
    """Rotary position embedding, interleaved pairs (notebook 06_rope).

    pair i = (vec[2i], vec[2i+1]) is rotated counter-clockwise by pos * theta_i:
        out[2i]   = vec[2i] cos(pos theta_i) - vec[2i+1] sin(pos theta_i)
        out[2i+1] = vec[2i] sin(pos theta_i) + vec[2i+1] cos(pos theta_i)
    # shapes: vec (..., d), pos scalar or vec.shape[:-1] -> (..., d); a new array
    """
    x, _, angles = _rope_angles(vec, pos, base)
    return _rotate_pairs(x, slice(0, None, 2), slice(1, None, 2), angles)


def rope_score(q, k, m, n, base=THETA_BASE):
    """Attention score of a query at m and a key at n under RoPE (notebook 06_rope).

    score = dot(R(m) q, R(n) k) = dot(q, R(n - m) k); no 1/sqrt(d).
    """
    _same_width(q, k)
    validate.positions(m, "m")
    validate.positions(n, "n")
    return dot(apply_rope(q, m, base), apply_rope(k, n, base))


def turns(d, delta, base=THETA_BASE) -> np.ndarray:
    """How many full turns each pair makes over a distance delta (notebook 06_rope).

    turns_i = delta * theta_i / (2 pi)
    # shape: (d // 2,)
    """
    dl = validate.positions(delta, "delta")
    if dl.ndim != 0:
        raise ValueError(f"delta must be a single integer, got {delta!r}")
    return float(dl) * thetas(d, base) / (2.0 * np.pi)


def slow_pairs(d, delta, base=THETA_BASE) -> int:
    """Number of pairs that make less than one turn over delta (notebook 06_rope).

    (d=64, deltas 1, 16, 256, 4096: 32, 28, 19, 9)
    """
    return int(np.count_nonzero(turns(d, delta, base) < 1.0))


def rope_half(vec, pos, base=THETA_BASE) -> np.ndarray:
    """RoPE in the half-split layout of GPT-NeoX and the Llama ports (notebook 06_rope).

    pair i = (vec[i], vec[i + d/2]), rotated counter-clockwise by pos * theta_i.
    # shapes: vec (..., d) -> (..., d)
    """
    x, d, angles = _rope_angles(vec, pos, base)
    return _rotate_pairs(x, slice(0, d // 2), slice(d // 2, d), angles)


def interleaved_to_half(vec) -> np.ndarray:
    """The permutation P from the interleaved to the half-split layout (notebook 06_rope).

    (P x)[i] = x[2i],  (P x)[i + d/2] = x[2i + 1];  rope_half(P x, pos) = P apply_rope(x, pos)
    # shapes: (..., d) -> (..., d)
    """
    x, _ = validate.vector_dim(vec, "vec")
    return np.concatenate([x[..., 0::2], x[..., 1::2]], axis=-1)


# --------------------------------------------------------------------------- 07_alibi


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


# --------------------------------------------------------------------------- 08_offsets


def sin_pos(pos, d, base=THETA_BASE) -> np.ndarray:
    """The additive position vector of the RoPE exercise (notebook 08_offsets).

    angle_j = pos / base ** (2 (j // 2) / d);  sin(angle_j) at even j, cos(angle_j) at odd j
    # shape: (d,), or pos.shape + (d,)
    """
    p = validate.positions(pos, "pos")
    d = validate.dim(d)
    base = validate.base(base)
    return _pe_rows(p, d, base)


def add_score(q, k, m, n, base=THETA_BASE):
    """Attention score with additive positions on both sides (notebook 08_offsets).

    score = dot(q + sin_pos(m), k + sin_pos(n))
    """
    q, k, d = _same_width(q, k)
    validate.positions(m, "m")
    validate.positions(n, "n")
    return dot(q + sin_pos(m, d, base), k + sin_pos(n, d, base))


def offset_scan(q, k, offset, starts, base=THETA_BASE) -> list[tuple[int, float, float]]:
    """One offset measured at several starts (notebook 08_offsets).

    For each s in starts: (s, rope_score(q, k, s + offset, s), add_score(q, k, s + offset, s))
    """
    st = validate.positions(starts, "starts")
    if st.ndim != 1:
        raise ValueError(f"starts must be a list of integers, got {starts!r}")
    off = validate.positions(offset, "offset", allow_negative=True)
    if off.ndim != 0 or np.any(st + off < 0):
        raise ValueError(f"offset must keep every query position >= 0, got {offset!r}")
    q_pos, k_pos = st + off, st
    q = validate.matrix(q, "q")
    k = validate.matrix(k, "k")
    rope = rope_score(
        np.broadcast_to(q, st.shape + q.shape),
        np.broadcast_to(k, st.shape + k.shape),
        q_pos,
        k_pos,
        base,
    )
    add = add_score(q, k, q_pos, k_pos, base)
    return [
        (int(s), float(r), float(a)) for s, r, a in zip(st, np.atleast_1d(rope), np.atleast_1d(add))
    ]


def spread(values) -> float:
    """max - min of a list of numbers (notebook 08_offsets)."""
    v = validate.matrix(values, "values")
    if v.size == 0:
        raise ValueError("values must not be empty")
    return float(np.max(v) - np.min(v))


REPORT_OFFSET = 2
REPORT_STARTS = (3, 10, 100, 4000)
REPORT_NORM_POSITIONS = (0, 1, 7, 100, 4096)
REPORT_DELTAS = (1, 16, 256, 4096)


def rope_report() -> dict:
    """The measured report of the RoPE exercise (notebook 08_offsets).

    On demo_vectors() with offset 2, starts 3, 10, 100, 4000, norm positions
    0, 1, 7, 100, 4096 and deltas 1, 16, 256, 4096 at DIM = 64, THETA_BASE = 1e4.
    """
    q, k = demo_vectors()
    scan = offset_scan(q, k, REPORT_OFFSET, list(REPORT_STARTS))
    rope_scores = [r for _, r, _ in scan]
    add_scores = [a for _, _, a in scan]
    norm_before = float(np.linalg.norm(q))
    rotated = apply_rope(
        np.broadcast_to(q, (len(REPORT_NORM_POSITIONS), DIM)), np.array(REPORT_NORM_POSITIONS)
    )
    norm_max_gap = float(np.max(np.abs(np.linalg.norm(rotated, axis=1) - norm_before)))
    all_turns = [turns(DIM, delta) for delta in REPORT_DELTAS]
    return {
        "dim": DIM,
        "base": THETA_BASE,
        "offset": REPORT_OFFSET,
        "starts": list(REPORT_STARTS),
        "rope_scores": rope_scores,
        "rope_spread": spread(rope_scores),
        "add_scores": add_scores,
        "add_spread": spread(add_scores),
        "norm_before": norm_before,
        "norm_max_gap": norm_max_gap,
        "deltas": list(REPORT_DELTAS),
        "slow_pairs": [slow_pairs(DIM, delta) for delta in REPORT_DELTAS],
        "turns_first": [float(t[0]) for t in all_turns],
        "turns_last": [float(t[-1]) for t in all_turns],
    }


def write_report(json_path, md_path) -> dict:
    """Write rope_report() as JSON and as a Markdown table (notebook 08_offsets); returns it."""
    report = rope_report()
    Path(json_path).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    lines = ["| key | value |", "| --- | --- |"]
    for key, value in report.items():
        lines.append(f"| {key} | {json.dumps(value)} |")
    Path(md_path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return report


# --------------------------------------------------------------------------- 09_families


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


# --------------------------------------------------------------------------- 10_long_context


def _factor(factor) -> float:
    if isinstance(factor, bool) or not isinstance(factor, numbers.Real):
        raise ValueError(f"factor must be a finite number >= 1, got {factor!r}")  # noqa: TRY004
    value = float(factor)
    if not math.isfinite(value) or value < 1:
        raise ValueError(f"factor must be a finite number >= 1, got {factor!r}")
    return value


def _positive(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")  # noqa: TRY004
    out = float(value)
    if not math.isfinite(out) or out <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return out


def _ntk_dim(d) -> int:
    d = validate.dim(d)
    if d < 4:
        raise ValueError(f"d must be an even integer >= 4 for NTK scaling (d / (d - 2)), got {d!r}")
    return d


def pi_thetas(d, base, factor) -> np.ndarray:
    """Position interpolation (Chen et al. 2023) (notebook 10_long_context).

    theta'_i = theta_i / factor   (Hugging Face rope_type="linear")
    # shape: (d // 2,)
    """
    return thetas(d, base) / _factor(factor)


def ntk_base(base, factor, d) -> float:
    """The base of NTK-aware scaling (bloc97 2023) (notebook 10_long_context).

    base' = base * factor ** (d / (d - 2))
    """
    base = validate.base(base)
    factor = _factor(factor)
    d = _ntk_dim(d)
    return base * factor ** (d / (d - 2))


def ntk_thetas(d, base, factor) -> np.ndarray:
    """NTK-aware rates: the usual rates with the base ntk_base(base, factor, d) (notebook 10_long_context).

    theta'_i = ntk_base(base, factor, d) ** (-2 i / d)
    # shape: (d // 2,)
    """
    return thetas(d, ntk_base(base, factor, d))


def dynamic_ntk_thetas(d, base, factor, seq_len, original_max) -> np.ndarray:
    """Dynamic NTK scaling, the base grows with the sequence (notebook 10_long_context).

    s = max(seq_len, original_max)
    base' = base * (factor * s / original_max - (factor - 1)) ** (d / (d - 2))
    theta'_i = base' ** (-2 i / d)   (Hugging Face rope_type="dynamic")
    # shape: (d // 2,)
    """
    d = _ntk_dim(d)
    base = validate.base(base)
    factor = _factor(factor)
    seq_len = validate.count(seq_len, "seq_len")
    original_max = validate.count(original_max, "original_max")
    s = max(seq_len, original_max)
    return thetas(d, base * (factor * s / original_max - (factor - 1)) ** (d / (d - 2)))


def yarn_thetas(
    d, base, factor, original_max, beta_fast=32, beta_slow=1
) -> tuple[np.ndarray, float]:
    """YaRN (Peng et al. 2023): a ramp between extrapolated and interpolated pairs (notebook 10_long_context).

    Correction dim of b rotations over original_max: c(b) = d ln(original_max / (2 pi b)) / (2 ln base)
    low = max(floor(c(beta_fast)), 0),  high = min(ceil(c(beta_slow)), d - 1)  (high += 0.001 if equal)
    ramp_i = clip((i - low) / (high - low), 0, 1)
    theta'_i = theta_i / factor * ramp_i + theta_i * (1 - ramp_i)
    attention_factor = 0.1 ln(factor) + 1   (1.0 when factor <= 1)
    As Hugging Face rope_type="yarn" with its defaults (truncate=True, no mscale).
    # shape: ((d // 2,), float)
    """
    d = validate.dim(d)
    base = validate.base(base)
    factor = _factor(factor)
    original_max = validate.count(original_max, "original_max")
    beta_fast = _positive(beta_fast, "beta_fast")
    beta_slow = _positive(beta_slow, "beta_slow")

    def correction_dim(rotations: float) -> float:
        return d * math.log(original_max / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low = max(math.floor(correction_dim(beta_fast)), 0)
    high = min(math.ceil(correction_dim(beta_slow)), d - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(d // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
    th = thetas(d, base)
    attention_factor = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
    return th / factor * ramp + th * (1.0 - ramp), attention_factor


def llama3_thetas(
    d, base, factor, original_max, low_freq_factor=1.0, high_freq_factor=4.0
) -> np.ndarray:
    """Llama 3's rates: slow pairs interpolated, fast pairs kept, smooth between (notebook 10_long_context).

    wavelength w_i = 2 pi / theta_i
    w_i > original_max / low_freq_factor:   theta'_i = theta_i / factor
    w_i < original_max / high_freq_factor:  theta'_i = theta_i
    otherwise, s = (original_max / w_i - low_freq_factor) / (high_freq_factor - low_freq_factor):
        theta'_i = (1 - s) theta_i / factor + s theta_i
    As Hugging Face rope_type="llama3".
    # shape: (d // 2,)
    """
    th = thetas(d, base)
    factor = _factor(factor)
    original_max = validate.count(original_max, "original_max")
    low = _positive(low_freq_factor, "low_freq_factor")
    high = _positive(high_freq_factor, "high_freq_factor")
    if high <= low:
        raise ValueError(
            f"high_freq_factor must be greater than low_freq_factor={low_freq_factor!r}, "
            f"got {high_freq_factor!r}"
        )
    w = 2 * np.pi / th
    smooth = (original_max / w - low) / (high - low)
    medium = th * ((1.0 - smooth) / factor + smooth)
    return np.where(
        w > original_max / low, th / factor, np.where(w < original_max / high, th, medium)
    )


def unseen_angle_pairs(train_thetas, new_thetas, train_len, new_len) -> int:
    """How many pairs meet angles the training never came near (notebook 10_long_context).

    Pair i counts when it never finished a turn in training, (train_len - 1) theta_i < 2 pi,
    and at new_len goes past the angle of the first unseen position:
        (new_len - 1) theta'_i > train_len theta_i (1 + 1e-12)
    (d = 128, base 1e4, train_len 4096, new_len = factor * 4096 for factors 2 .. 32:
    plain RoPE 18, NTK-aware 17, position interpolation, YaRN and Llama 3 0)
    """
    old = validate.matrix(train_thetas, "train_thetas", ndim=1)
    new = validate.matrix(new_thetas, "new_thetas", ndim=1)
    if new.shape != old.shape:
        raise ValueError(
            f"new_thetas must have the length of train_thetas ({old.shape[0]}), got shape {new.shape}"
        )
    train_len = validate.count(train_len, "train_len")
    new_len = validate.count(new_len, "new_len")
    slow = (train_len - 1) * old < 2 * np.pi
    beyond = (new_len - 1) * new > train_len * old * (1 + 1e-12)
    return int(np.count_nonzero(slow & beyond))

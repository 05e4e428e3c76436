"""The known wrong answers of COURSE_SPEC.md, as runnable wrong implementations.

Each function here has the signature of the graded function it imitates and returns
what a learner who made that mistake would return. ``helpers.checks`` compares a
learner's wrong output with these to name the mistake in plain words; the fake
submissions of the grading tests use them too. Built on ``helpers.reference``.

This module is the teacher's: the learner build of ``helpers`` leaves it out.
"""

from __future__ import annotations

import math

import numpy as np

from helpers import reference as ref

THETA_BASE = ref.THETA_BASE
DEFAULT_BASE = ref.DEFAULT_BASE


def _rotate(x: np.ndarray, even, odd, angles: np.ndarray) -> np.ndarray:
    """Rotate the pairs (x[even], x[odd]) counter-clockwise by ``angles`` (a new array)."""
    c, s = np.cos(angles), np.sin(angles)
    out = np.array(x, dtype=np.float64, copy=True)
    x0, x1 = x[..., even], x[..., odd]
    out[..., even] = x0 * c - x1 * s
    out[..., odd] = x0 * s + x1 * c
    return out


def _rope_with_rates(vec, pos, rates: np.ndarray) -> np.ndarray:
    x = np.asarray(vec, dtype=np.float64)
    p = np.asarray(pos, dtype=np.float64)
    return _rotate(x, slice(0, None, 2), slice(1, None, 2), p[..., None] * rates)


# --------------------------------------------------------------------------- 01_order


def softmax_no_max(x, axis: int = -1) -> np.ndarray:
    """softmax without subtracting the max: exp overflows to inf and inf / inf is nan."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x)
        return e / np.sum(e, axis=axis, keepdims=True)


def attention_unscaled(Q, K, V, bias=None) -> np.ndarray:
    """attention without the 1/sqrt(d_k) scale: softmax(Q K^T + bias) V."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2)
    if bias is not None:
        scores = scores + np.asarray(bias, dtype=np.float64)
    return ref.softmax(scores) @ V


def attention_divided_by_dk(Q, K, V, bias=None) -> np.ndarray:
    """attention divided by d_k instead of sqrt(d_k): softmax(Q K^T / d_k + bias) V."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]
    if bias is not None:
        scores = scores + np.asarray(bias, dtype=np.float64)
    return ref.softmax(scores) @ V


def order_gap_positions_first(X, P, Wq, Wk, Wv, perm) -> float:
    """Positions added before shuffling: the positions move with the tokens (gap about 0)."""
    X = np.asarray(X, dtype=np.float64)
    Z = X + np.asarray(P, dtype=np.float64)[: X.shape[0]]
    p = np.asarray(perm)
    gap = ref.self_attention(Z[p], Wq, Wk, Wv) - ref.self_attention(Z, Wq, Wk, Wv)[p]
    return float(np.max(np.abs(gap)))


# --------------------------------------------------------------------------- 02_sincos


def _table(pos: np.ndarray, rates: np.ndarray, d: int, swap: bool = False) -> np.ndarray:
    angles = pos[:, None] * rates  # shape: (max_len, d/2)
    out = np.empty((pos.shape[0], d))
    first, second = (np.cos, np.sin) if swap else (np.sin, np.cos)
    out[:, 0::2] = first(angles)
    out[:, 1::2] = second(angles)
    return out


def angle_rates_half_exponent(d, base=DEFAULT_BASE) -> np.ndarray:
    """theta_i = base ** (-i / d): the exponent i/d instead of 2i/d."""
    return np.exp(-(np.arange(d // 2) / d) * math.log(base))


def angle_rates_per_dimension(d, base=DEFAULT_BASE) -> np.ndarray:
    """One rate per dimension j (base ** (-j / d), length d) instead of one per pair."""
    return np.exp(-(np.arange(d) / d) * math.log(base))


def sinusoidal_pe_swapped(max_len, d, base=DEFAULT_BASE) -> np.ndarray:
    """cos on the even dimensions and sin on the odd ones."""
    return _table(np.arange(max_len, dtype=np.float64), ref.angle_rates(d, base), d, swap=True)


def sinusoidal_pe_half_exponent(max_len, d, base=DEFAULT_BASE) -> np.ndarray:
    """Pair i turns at base ** (-i / d) (the exponent i/d instead of 2i/d)."""
    return _table(np.arange(max_len, dtype=np.float64), angle_rates_half_exponent(d, base), d)


def sinusoidal_pe_per_dimension(max_len, d, base=DEFAULT_BASE) -> np.ndarray:
    """Dimension j uses its own angle pos / base ** (j / d), so a pair's sin and cos disagree."""
    pos = np.arange(max_len, dtype=np.float64)
    angles = pos[:, None] * angle_rates_per_dimension(d, base)  # shape: (max_len, d)
    out = np.empty((max_len, d))
    out[:, 0::2] = np.sin(angles[:, 0::2])
    out[:, 1::2] = np.cos(angles[:, 1::2])
    return out


def sinusoidal_pe_from_one(max_len, d, base=DEFAULT_BASE) -> np.ndarray:
    """Rows for positions 1 .. max_len instead of 0 .. max_len - 1."""
    return _table(np.arange(1, max_len + 1, dtype=np.float64), ref.angle_rates(d, base), d)


def embed_unscaled(token_emb, base=DEFAULT_BASE) -> np.ndarray:
    """token_emb + PE[:n], without the sqrt(d) scale."""
    emb = np.asarray(token_emb, dtype=np.float64)
    return emb + ref.sinusoidal_pe(emb.shape[0], emb.shape[1], base)


# --------------------------------------------------------------------------- 03_norm


def expected_norm_sqrt_d(d) -> float:
    """sqrt(d) instead of sqrt(d / 2)."""
    return math.sqrt(d)


def min_pairwise_with_self(pe) -> float:
    """Every row compared with itself as well: the smallest distance is always 0."""
    return 0.0


# --------------------------------------------------------------------------- 05_rotation


def rotation_2d_clockwise(angle) -> np.ndarray:
    """[[cos, sin], [-sin, cos]]: a clockwise rotation."""
    return np.swapaxes(ref.rotation_2d(angle), -1, -2)


def rotate_pair_clockwise(x0, x1, angle) -> tuple[float, float]:
    """(x0 cos a + x1 sin a, -x0 sin a + x1 cos a): a clockwise rotation."""
    c, s = math.cos(angle), math.sin(angle)
    return (x0 * c + x1 * s, -x0 * s + x1 * c)


def shift_matrix_clockwise(k, d, base=DEFAULT_BASE) -> np.ndarray:
    """Blocks [[cos, -sin], [sin, cos]] on the [sin, cos] pairs: the table moves k steps back."""
    return ref.shift_matrix(k, d, base).T


# --------------------------------------------------------------------------- 06_rope


def apply_rope_clockwise(vec, pos, base=THETA_BASE) -> np.ndarray:
    """Every pair rotated clockwise (by -pos * theta_i)."""
    d = np.shape(vec)[-1]
    return _rope_with_rates(vec, pos, -ref.thetas(d, base))


def apply_rope_per_dimension(vec, pos, base=THETA_BASE) -> np.ndarray:
    """The dimension index 2i used where the pair index i belongs: pair i at base ** (-4i / d)."""
    d = np.shape(vec)[-1]
    return _rope_with_rates(vec, pos, ref.thetas(d, base) ** 2)


def apply_rope_half_exponent(vec, pos, base=THETA_BASE) -> np.ndarray:
    """Pair i at base ** (-i / d): the exponent i/d instead of 2i/d."""
    d = np.shape(vec)[-1]
    return _rope_with_rates(vec, pos, angle_rates_half_exponent(d, base))


def apply_rope_angle_per_element(vec, pos, base=THETA_BASE) -> np.ndarray:
    """Dimension j gets its own angle pos / base ** (j / d), so a pair's two outputs disagree."""
    x = np.asarray(vec, dtype=np.float64)
    d = x.shape[-1]
    p = np.asarray(pos, dtype=np.float64)
    a = p[..., None] * angle_rates_per_dimension(d, base)  # shape: (..., d)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x0 * np.cos(a[..., 0::2]) - x1 * np.sin(a[..., 0::2])
    out[..., 1::2] = x0 * np.sin(a[..., 1::2]) + x1 * np.cos(a[..., 1::2])
    return out


def apply_rope_pair0_angle(vec, pos, base=THETA_BASE) -> np.ndarray:
    """Pair 0's angle (pos * 1.0) used for every pair."""
    d = np.shape(vec)[-1]
    return _rope_with_rates(vec, pos, np.ones(d // 2))


def apply_rope_half_split(vec, pos, base=THETA_BASE) -> np.ndarray:
    """Pairs (i, i + d/2) of the half-split layout instead of the interleaved (2i, 2i+1)."""
    return ref.rope_half(vec, pos, base)


def apply_rope_in_place(vec, pos, base=THETA_BASE):
    """The right numbers, but written into the argument itself (which then changes)."""
    out = ref.apply_rope(vec, pos, base)
    if isinstance(vec, np.ndarray):
        vec[...] = out
        return vec

    def write(target, values) -> None:
        for idx, value in enumerate(values):
            if isinstance(target[idx], list):
                write(target[idx], value)
            else:
                target[idx] = float(value)

    write(vec, out.tolist())
    return vec


def rope_score_query_only(q, k, m, n, base=THETA_BASE):
    """Only the query rotated: dot(apply_rope(q, m), k)."""
    return ref.dot(ref.apply_rope(q, m, base), k)


def turns_without_2pi(d, delta, base=THETA_BASE) -> np.ndarray:
    """delta * theta_i, the angle in radians, not divided by 2 pi."""
    return float(delta) * ref.thetas(d, base)


# --------------------------------------------------------------------------- 07_alibi


def alibi_slopes_power_of_two_rule(n_heads) -> np.ndarray:
    """2 ** (-8 h / n) for every n, also when n is not a power of two."""
    return 2.0 ** (-8.0 * np.arange(1, n_heads + 1) / n_heads)


def alibi_bias_positive(n_heads, seq_len, causal: bool = True) -> np.ndarray:
    """+slope * |i - j|: the sign flipped, so far tokens are favoured."""
    b = ref.alibi_bias(n_heads, seq_len, causal)
    return np.where(np.isinf(b), b, -b)


def alibi_bias_row_constant(n_heads, seq_len, causal: bool = True) -> np.ndarray:
    """+slope * j (the row constant -slope * i dropped), masked above the diagonal if causal."""
    slopes = ref.alibi_slopes(n_heads)
    i = np.arange(seq_len)
    bias = slopes[:, None, None] * np.broadcast_to(
        i[None, :].astype(np.float64), (seq_len, seq_len)
    )
    if causal:
        bias = np.where(i[None, :] > i[:, None], -np.inf, bias)
    return bias


# --------------------------------------------------------------------------- 08_offsets


def add_score_query_side_only(q, k, m, n, base=THETA_BASE):
    """sin_pos(m) added to q, nothing added to k."""
    q = np.asarray(q, dtype=np.float64)
    return ref.dot(q + ref.sin_pos(m, q.shape[-1], base), k)


def add_score_key_side_only(q, k, m, n, base=THETA_BASE):
    """sin_pos(n) added to k, nothing added to q."""
    k = np.asarray(k, dtype=np.float64)
    return ref.dot(q, k + ref.sin_pos(n, k.shape[-1], base))


def offset_scan_swapped(q, k, offset, starts, base=THETA_BASE) -> list[tuple[int, float, float]]:
    """The query at start and the key at start + offset (the positions swapped)."""
    return [
        (
            int(s),
            ref.rope_score(q, k, s, s + offset, base),
            ref.add_score(q, k, s, s + offset, base),
        )
        for s in starts
    ]

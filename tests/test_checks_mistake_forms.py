"""Every catalogued mistake is named however it is written: two wrong implementations each.

COURSE_SPEC.md (Grading): a catalogued mistake is diagnosed by name whether the learner wrote
it with -inf or a large negative number, np.where or a loop, in one band or in every band.
For each mistake of the course (the spec's table and the lists of 09 and 10) this file writes
two wrong implementations of its own, in two different forms, none of them taken from the
checks module, and runs them on the fixed cases and on random cases of the function's check:
wherever one of them is wrong, the grader must name that mistake and no other. Right answers
written in other forms (a mask of -1e9, a loop) are never named.
"""

from __future__ import annotations

import cmath
import copy
import math

import numpy as np
import pytest

from helpers.teacher import checks as C
from helpers.teacher import reference as ref
from helpers.teacher.calling import call
from tests.test_checks_rope_nd import FORMS as ROPE_ND_FORMS
from tests.test_checks_rope_today import WRONG as ROPE_TODAY_FORMS
from tests.test_checks_train_short import WRONG as TRAIN_SHORT_FORMS

SEEDS = (1, 2, 3)
BIG = -1e9  # a large negative number for a masked score, instead of -inf


def f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


# --------------------------------------------------------------------------- 01_order


def stable_softmax(x, axis=-1):
    x = f64(x)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_no_max_numpy(x, axis=-1):
    e = np.exp(f64(x))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_no_max_loop(x, axis=-1):
    x = f64(x)
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension")

    def one(row):
        out = np.empty_like(row)
        total = 0.0
        for j, v in enumerate(row):
            out[j] = np.exp(v)
            total += out[j]
        return out / total

    return np.apply_along_axis(one, axis, x)


def _attention_with(scale):
    def attention(Q, K, V, bias=None):
        Q, K, V = f64(Q), f64(K), f64(V)
        s = Q @ K.T * scale(Q.shape[-1])
        if bias is not None:
            s = s + f64(bias)
        return stable_softmax(s) @ V

    return attention


def _attention_loop_with(scale):
    def attention(Q, K, V, bias=None):
        Q, K, V = f64(Q), f64(K), f64(V)
        b = (
            np.zeros((Q.shape[0], K.shape[0]))
            if bias is None
            else np.broadcast_to(f64(bias), (Q.shape[0], K.shape[0]))
        )
        out = np.zeros((Q.shape[0], V.shape[1]))
        for i in range(Q.shape[0]):
            scores = [
                float(np.dot(Q[i], K[j])) * scale(Q.shape[1]) + b[i, j] for j in range(K.shape[0])
            ]
            w = stable_softmax(scores)
            for j in range(K.shape[0]):
                out[i] += w[j] * V[j]
        return out

    return attention


def _self_attention(X, Wq, Wk, Wv):
    X = f64(X)
    return ref.attention(X @ f64(Wq), X @ f64(Wk), X @ f64(Wv))


def order_gap_positions_first(X, P, Wq, Wk, Wv, perm):
    X, P = f64(X), f64(P)[: len(X)]
    p = np.asarray(perm)
    placed = X + P
    return float(
        np.max(
            np.abs(_self_attention(placed[p], Wq, Wk, Wv) - _self_attention(placed, Wq, Wk, Wv)[p])
        )
    )


def order_gap_positions_first_loop(X, P, Wq, Wk, Wv, perm):
    X, P = f64(X), f64(P)
    rows = [X[i] + P[i] for i in range(len(X))]  # positions added to the tokens first
    shuffled = np.array([rows[j] for j in perm])
    a = _self_attention(shuffled, Wq, Wk, Wv)
    b = _self_attention(np.array(rows), Wq, Wk, Wv)
    return max(
        abs(float(a[i, c] - b[perm[i], c])) for i in range(len(X)) for c in range(a.shape[1])
    )


# --------------------------------------------------------------------------- 02_sincos, 03_norm


def rates_half_exponent(d, base=10000.0):
    return float(base) ** (-np.arange(d // 2) / d)


def rates_half_exponent_loop(d, base=10000.0):
    return np.array([math.exp(-(i / d) * math.log(base)) for i in range(d // 2)])


def _pe(max_len, d, base, rates, first=0, swap=False):
    pos = np.arange(first, first + max_len)[:, None]
    a = pos * rates(d, base)[None, :]
    out = np.empty((max_len, d))
    out[:, 0::2], out[:, 1::2] = (np.cos(a), np.sin(a)) if swap else (np.sin(a), np.cos(a))
    return out


def pe_swapped(max_len, d, base=10000.0):
    return _pe(max_len, d, base, ref.angle_rates, swap=True)


def pe_swapped_loop(max_len, d, base=10000.0):
    out = np.zeros((max_len, d))
    for pos in range(max_len):
        for i in range(d // 2):
            angle = pos / base ** (2 * i / d)
            out[pos, 2 * i], out[pos, 2 * i + 1] = math.cos(angle), math.sin(angle)
    return out


def pe_half_exponent(max_len, d, base=10000.0):
    return _pe(max_len, d, base, rates_half_exponent)


def pe_half_exponent_loop(max_len, d, base=10000.0):
    out = np.zeros((max_len, d))
    for pos in range(max_len):
        for i in range(d // 2):
            angle = pos * math.exp(-(i / d) * math.log(base))
            out[pos, 2 * i], out[pos, 2 * i + 1] = math.sin(angle), math.cos(angle)
    return out


def pe_from_one(max_len, d, base=10000.0):
    return _pe(max_len, d, base, ref.angle_rates, first=1)


def pe_from_one_drop_row(max_len, d, base=10000.0):
    return ref.sinusoidal_pe(max_len + 1, d, base)[1:]


def embed_unscaled(token_emb, base=10000.0):
    t = f64(token_emb)
    return t + ref.sinusoidal_pe(t.shape[0], t.shape[1], base)


def embed_unscaled_loop(token_emb, base=10000.0):
    t = f64(token_emb)
    pe = ref.sinusoidal_pe(t.shape[0], t.shape[1], base)
    return np.array([t[i] + pe[i] for i in range(t.shape[0])]).reshape(t.shape)


def norm_sqrt_d(d):
    return math.sqrt(d)


def norm_sqrt_d_numpy(d):
    return float(np.linalg.norm(np.ones(d)))


def min_distance_with_self(pe):
    pe = f64(pe)
    return float(np.sqrt(((pe[:, None, :] - pe[None, :, :]) ** 2).sum(-1)).min())


def min_distance_with_self_loop(pe):
    pe = f64(pe)
    return min(math.dist(a, b) for a in pe for b in pe)


# --------------------------------------------------------------------------- 05_rotation, 06_rope


def rotation_cw(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, s], [-s, c]])


def rotation_cw_transpose(angle):
    return ref.rotation_2d(angle).T.copy()


def rotate_pair_cw(x0, x1, angle):
    c, s = math.cos(angle), math.sin(angle)
    return (x0 * c + x1 * s, -x0 * s + x1 * c)


def rotate_pair_cw_complex(x0, x1, angle):
    z = complex(x0, x1) * cmath.exp(-1j * angle)
    return (z.real, z.imag)


def shift_cw_loop(k, d, base=10000.0):
    M = np.zeros((d, d))
    for i, th in enumerate(ref.angle_rates(d, base)):
        c, s = math.cos(k * th), math.sin(k * th)
        M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, -s], [s, c]]
    return M


def shift_cw_transpose(k, d, base=10000.0):
    return ref.shift_matrix(k, d, base).T.copy()


def _rope_rates(vec, pos, rates):
    x = f64(vec)
    a = f64(pos)[..., None] * rates
    out = np.empty_like(x, shape=x.shape) if x.flags.c_contiguous else np.empty(x.shape)
    out[..., 0::2] = x[..., 0::2] * np.cos(a) - x[..., 1::2] * np.sin(a)
    out[..., 1::2] = x[..., 0::2] * np.sin(a) + x[..., 1::2] * np.cos(a)
    return out


def _rope_loop(vec, pos, rate_of_pair, clockwise=False):
    x = f64(vec)
    d = x.shape[-1]
    flat = x.reshape(-1, d)
    p = np.broadcast_to(f64(pos), x.shape[:-1]).reshape(-1)
    out = np.empty_like(flat)
    sign = -1.0 if clockwise else 1.0
    for r in range(flat.shape[0]):
        for i in range(d // 2):
            a = sign * p[r] * rate_of_pair(i, d)
            c, s = math.cos(a), math.sin(a)
            x0, x1 = flat[r, 2 * i], flat[r, 2 * i + 1]
            out[r, 2 * i], out[r, 2 * i + 1] = x0 * c - x1 * s, x0 * s + x1 * c
    return out.reshape(x.shape)


def _theta(base):
    return lambda i, d: base ** (-2 * i / d)


def rope_cw(vec, pos, base=10000.0):
    return _rope_rates(vec, -f64(pos), ref.thetas(np.shape(vec)[-1], base))


def rope_cw_loop(vec, pos, base=10000.0):
    return _rope_loop(vec, pos, _theta(base), clockwise=True)


def rope_per_dimension(vec, pos, base=10000.0):
    d = np.shape(vec)[-1]
    return _rope_rates(vec, pos, float(base) ** (-2 * (2 * np.arange(d // 2)) / d))


def rope_per_dimension_loop(vec, pos, base=10000.0):
    return _rope_loop(vec, pos, lambda i, d: base ** (-i / d))


def rope_pair0(vec, pos, base=10000.0):
    return _rope_rates(vec, pos, np.ones(np.shape(vec)[-1] // 2))


def rope_pair0_loop(vec, pos, base=10000.0):
    return _rope_loop(vec, pos, lambda i, d: base**0.0)


def rope_half_split(vec, pos, base=10000.0):
    return ref.rope_half(vec, pos, base)


def rope_half_split_loop(vec, pos, base=10000.0):
    x = f64(vec)
    d = x.shape[-1]
    flat = x.reshape(-1, d)
    p = np.broadcast_to(f64(pos), x.shape[:-1]).reshape(-1)
    out = np.empty_like(flat)
    for r in range(flat.shape[0]):
        for i in range(d // 2):
            a = p[r] * base ** (-2 * i / d)
            x0, x1 = flat[r, i], flat[r, i + d // 2]
            out[r, i] = x0 * math.cos(a) - x1 * math.sin(a)
            out[r, i + d // 2] = x0 * math.sin(a) + x1 * math.cos(a)
    return out.reshape(x.shape)


def rope_in_place(vec, pos, base=10000.0):
    out = ref.apply_rope(vec, pos, base)
    if isinstance(vec, np.ndarray):
        vec[...] = out
        return vec
    vec[:] = out.tolist()
    return out


def rope_copyto(vec, pos, base=10000.0):
    out = ref.apply_rope(vec, pos, base)
    if isinstance(vec, np.ndarray):
        np.copyto(vec, out)
    else:
        for i, v in enumerate(out.tolist()):
            vec[i] = v
    return out


def score_query_only(q, k, m, n, base=10000.0):
    return float(np.dot(ref.apply_rope(q, m, base), f64(k)))


def score_query_only_loop(q, k, m, n, base=10000.0):
    rq = _rope_loop(q, m, _theta(base))
    return float(sum(a * b for a, b in zip(rq, f64(k))))


def turns_radians(d, delta, base=10000.0):
    return float(delta) * ref.thetas(d, base)


def turns_radians_loop(d, delta, base=10000.0):
    return np.array([delta * base ** (-2 * i / d) for i in range(d // 2)])


def _rope_half_with(rate_of_pair, clockwise=False):
    """rope_half written with numpy: the halves x[:d/2], x[d/2:] as the pairs."""

    def rope_half(vec, pos, base=10000.0):
        x = f64(vec)
        d = x.shape[-1]
        a = f64(pos)[..., None] * np.array([rate_of_pair(i, d, base) for i in range(d // 2)])
        a = -a if clockwise else a
        lo, hi = x[..., : d // 2], x[..., d // 2 :]
        return np.concatenate(
            [lo * np.cos(a) - hi * np.sin(a), lo * np.sin(a) + hi * np.cos(a)], -1
        )

    return rope_half


def _rope_half_loop_with(rate_of_pair, clockwise=False):
    """rope_half written with loops over rows and pairs."""

    def rope_half(vec, pos, base=10000.0):
        x = f64(vec)
        d = x.shape[-1]
        flat = x.reshape(-1, d)
        p = np.broadcast_to(f64(pos), x.shape[:-1]).reshape(-1)
        out = np.empty_like(flat)
        for r in range(flat.shape[0]):
            for i in range(d // 2):
                a = p[r] * rate_of_pair(i, d, base) * (-1 if clockwise else 1)
                x0, x1 = flat[r, i], flat[r, i + d // 2]
                out[r, i] = x0 * math.cos(a) - x1 * math.sin(a)
                out[r, i + d // 2] = x0 * math.sin(a) + x1 * math.cos(a)
        return out.reshape(x.shape)

    return rope_half


def _right_rate(i, d, base):
    return base ** (-2 * i / d)


def rope_half_adjacent_numpy(vec, pos, base=10000.0):
    d = np.shape(vec)[-1]
    return _rope_rates(vec, pos, base ** (-2 * np.arange(d // 2) / d))


def rope_half_adjacent_loop(vec, pos, base=10000.0):
    return _rope_loop(vec, pos, _theta(base))


def rope_half_in_place(vec, pos, base=10000.0):
    out = ref.rope_half(vec, pos, base)
    if isinstance(vec, np.ndarray):
        vec[...] = out
        return vec
    vec[:] = out.tolist()
    return out


def rope_half_copyto(vec, pos, base=10000.0):
    out = ref.rope_half(vec, pos, base)
    if isinstance(vec, np.ndarray):
        np.copyto(vec, out)
    else:
        for i, v in enumerate(out.tolist()):
            vec[i] = v
    return out


# --------------------------------------------------------------------------- 07_alibi


def slopes_pow2(n_heads):
    return 2.0 ** (-8.0 * np.arange(1, n_heads + 1) / n_heads)


def slopes_pow2_loop(n_heads):
    start = 2 ** (-8 / n_heads)
    return np.array([start * start**h for h in range(n_heads)])


def _distance(L):
    i = np.arange(L)
    return i[:, None] - i[None, :]  # i - j


def bias_positive_where(n_heads, seq_len, causal=True):
    dist = _distance(seq_len)
    b = ref.alibi_slopes(n_heads)[:, None, None] * np.abs(dist)[None]
    return np.where(dist[None] < 0, -np.inf, b) if causal else b


def bias_positive_loop_big(n_heads, seq_len, causal=True):
    slopes = ref.alibi_slopes(n_heads)
    out = np.zeros((n_heads, seq_len, seq_len))
    for h in range(n_heads):
        for i in range(seq_len):
            for j in range(seq_len):
                out[h, i, j] = BIG if causal and j > i else slopes[h] * abs(i - j)
    return out


def bias_row_constant_where(n_heads, seq_len, causal=True):
    j = np.arange(seq_len)
    b = ref.alibi_slopes(n_heads)[:, None, None] * np.broadcast_to(j[None, :], (seq_len, seq_len))
    return np.where(_distance(seq_len)[None] < 0, -np.inf, b) if causal else b


def bias_row_constant_loop_big(n_heads, seq_len, causal=True):
    slopes = ref.alibi_slopes(n_heads)
    out = np.zeros((n_heads, seq_len, seq_len))
    for h in range(n_heads):
        for i in range(seq_len):
            for j in range(seq_len):
                masked = causal and j > i
                out[h, i, j] = BIG if masked else slopes[h] * (j - (seq_len - 1))
    return out


# --------------------------------------------------------------------------- 08_offsets


def add_query_side(q, k, m, n, base=10000.0):
    d = len(q)
    return float(np.dot(f64(q) + ref.sin_pos(m, d, base), f64(k)))


def add_key_side_loop(q, k, m, n, base=10000.0):
    d = len(q)
    p = ref.sin_pos(n, d, base)
    return float(sum(q[j] * (k[j] + p[j]) for j in range(d)))


def scan_swapped(q, k, offset, starts, base=10000.0):
    return [
        (s, ref.rope_score(q, k, s, s + offset, base), ref.add_score(q, k, s, s + offset, base))
        for s in starts
    ]


def scan_swapped_loop(q, k, offset, starts, base=10000.0):
    out = []
    for s in starts:
        qr, kr = _rope_loop(q, s, _theta(base)), _rope_loop(k, s + offset, _theta(base))
        d = len(q)
        add = float(
            np.dot(f64(q) + ref.sin_pos(s, d, base), f64(k) + ref.sin_pos(s + offset, d, base))
        )
        out.append((s, float(qr @ kr), add))
    return out


# --------------------------------------------------------------------------- 09_families


def lookup_wraps(table, positions):
    t = f64(table)
    return t[np.asarray(positions) % t.shape[0]]


def lookup_wraps_take(table, positions):
    return np.take(f64(table), np.asarray(positions), axis=0, mode="wrap")


def lookup_clips(table, positions):
    t = f64(table)
    return t[np.clip(np.asarray(positions), 0, t.shape[0] - 1)]


def lookup_clips_take(table, positions):
    return np.take(f64(table), np.asarray(positions), axis=0, mode="clip")


def _t5(rel, bidirectional, nb, max_distance, exact_half=True, offset=True, sign=1):
    """T5's buckets written out per entry, with switches for the catalogued slips."""
    rel = sign * np.asarray(rel, dtype=np.int64)
    out = np.zeros(rel.shape, dtype=np.int64)
    for idx, x in np.ndenumerate(rel):
        n, b = nb, 0
        if bidirectional:
            n //= 2
            b = n if (x > 0 and offset) else 0
            r = abs(int(x))
        else:
            r = max(-int(x), 0)
        e = n // 2
        if exact_half and r < e:
            out[idx] = b + r
            continue
        if exact_half:
            v = e + math.floor(math.log(r / e) / math.log(max_distance / e) * (n - e))
        else:
            v = math.floor(math.log(r + 1) / math.log(max_distance + 1) * n)
        out[idx] = b + min(n - 1, v)
    return out


def t5_sign_loop(rel, bidirectional=True, num_buckets=32, max_distance=128):
    return _t5(rel, bidirectional, num_buckets, max_distance, sign=-1)


def t5_sign_of_transpose(rel, bidirectional=True, num_buckets=32, max_distance=128):
    return ref.t5_bucket(-np.asarray(rel), bidirectional, num_buckets, max_distance)


def t5_no_offset_loop(rel, bidirectional=True, num_buckets=32, max_distance=128):
    return _t5(rel, bidirectional, num_buckets, max_distance, offset=False)


def t5_no_offset_abs(rel, bidirectional=True, num_buckets=32, max_distance=128):
    rel = np.asarray(rel)
    if not bidirectional:
        return ref.t5_bucket(rel, False, num_buckets, max_distance)
    return ref.t5_bucket(-np.abs(rel), True, num_buckets, max_distance)


def t5_all_log_plus_one(rel, bidirectional=True, num_buckets=32, max_distance=128):
    return _t5(rel, bidirectional, num_buckets, max_distance, exact_half=False)


def t5_all_log_base2(rel, bidirectional=True, num_buckets=32, max_distance=128):
    rel = np.asarray(rel, dtype=np.int64)
    nb = num_buckets // 2 if bidirectional else num_buckets
    off = np.where(rel > 0, nb, 0) if bidirectional else np.zeros_like(rel)
    r = np.abs(rel) if bidirectional else -np.minimum(rel, 0)
    v = np.floor(np.log2(np.maximum(r, 1)) / np.log2(max_distance) * nb).astype(np.int64)
    return off + np.minimum(nb - 1, v)


def _shaw(Q, K, rel_k, max_rel, rows):
    Q, K, R = f64(Q), f64(K), f64(rel_k)
    return (Q @ K.T + np.einsum("id,ijd->ij", Q, R[rows])) / math.sqrt(Q.shape[1])


def shaw_no_clip(Q, K, rel_k, max_rel):
    rows = ref.relative_positions(len(Q), len(K)) + max_rel
    return _shaw(Q, K, rel_k, max_rel, rows % len(rel_k))


def shaw_no_clip_take(Q, K, rel_k, max_rel):
    rows = ref.relative_positions(len(Q), len(K)) + max_rel
    R = np.take(f64(rel_k), rows, axis=0, mode="wrap")
    Q, K = f64(Q), f64(K)
    return (Q @ K.T + (Q[:, None, :] * R).sum(-1)) / math.sqrt(Q.shape[1])


def shaw_no_offset(Q, K, rel_k, max_rel):
    return _shaw(
        Q, K, rel_k, max_rel, np.clip(ref.relative_positions(len(Q), len(K)), -max_rel, max_rel)
    )


def shaw_no_offset_loop(Q, K, rel_k, max_rel):
    Q, K, R = f64(Q), f64(K), f64(rel_k)
    out = np.zeros((len(Q), len(K)))
    for i in range(len(Q)):
        for j in range(len(K)):
            out[i, j] = (
                Q[i] @ (K[j] + R[max(-max_rel, min(max_rel, j - i))]) / math.sqrt(Q.shape[1])
            )
    return out


def causal_diagonal_inf(Q, K, V):
    Q, K, V = f64(Q), f64(K), f64(V)
    i = np.arange(len(Q))
    mask = np.where(i[None, :] >= i[:, None], -np.inf, 0.0)
    s = Q @ K.T / math.sqrt(Q.shape[1]) + mask
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) @ V


def causal_diagonal_big_triu(Q, K, V):
    Q, K, V = f64(Q), f64(K), f64(V)
    s = Q @ K.T / math.sqrt(Q.shape[1]) + np.triu(np.full((len(Q), len(K)), BIG))
    return stable_softmax(s) @ V


def causal_diagonal_loop(Q, K, V):
    Q, K, V = f64(Q), f64(K), f64(V)
    out = np.zeros((len(Q), V.shape[1]))
    for i in range(len(Q)):
        if i == 0:
            continue  # no key before the first query
        w = stable_softmax(K[:i] @ Q[i] / math.sqrt(Q.shape[1]))
        out[i] = w @ V[:i]
    return out


# --------------------------------------------------------------------------- 10_long_context


def pi_times(d, base, factor):
    return ref.thetas(d, base) * factor


def pi_times_loop(d, base, factor):
    return np.array([factor * base ** (-2 * i / d) for i in range(d // 2)])


def ntk_plus_two(base, factor, d):
    return float(base) * factor ** (d / (d + 2))


def ntk_plus_two_log(base, factor, d):
    return math.exp(math.log(base) + d / (d + 2) * math.log(factor))


def ntk_factor_only(base, factor, d):
    return float(base) * factor


def ntk_factor_only_numpy(base, factor, d):
    return float(np.multiply(base, factor))


def _yarn_ramp(d, base, factor, original_max, beta_fast, beta_slow):
    def dim(rot):
        return d * math.log(original_max / (rot * 2 * math.pi)) / (2 * math.log(base))

    low, high = max(math.floor(dim(beta_fast)), 0), min(math.ceil(dim(beta_slow)), d - 1)
    if low == high:
        high += 0.001
    return np.clip((np.arange(d // 2) - low) / (high - low), 0, 1)


def yarn_no_attention(d, base, factor, original_max, beta_fast=32, beta_slow=1):
    return ref.yarn_thetas(d, base, factor, original_max, beta_fast, beta_slow)[0], 1.0


def yarn_no_attention_own(d, base, factor, original_max, beta_fast=32, beta_slow=1):
    ramp = _yarn_ramp(d, base, factor, original_max, beta_fast, beta_slow)
    th = ref.thetas(d, base)
    return th / factor * ramp + th * (1 - ramp), 1


def yarn_swapped_arguments(d, base, factor, original_max, beta_fast=32, beta_slow=1):
    return ref.yarn_thetas(d, base, factor, original_max, beta_slow, beta_fast)


def yarn_ramp_reversed(d, base, factor, original_max, beta_fast=32, beta_slow=1):
    """The other way to run the ramp backwards: 1 - ramp, fast pairs interpolated."""
    ramp = 1.0 - _yarn_ramp(d, base, factor, original_max, beta_fast, beta_slow)
    th = ref.thetas(d, base)
    return th / factor * ramp + th * (1 - ramp), 0.1 * math.log(factor) + 1 if factor > 1 else 1.0


def _llama3_blend(d, base, factor, original_max, low, high):
    th = ref.thetas(d, base)
    w = 2 * math.pi / th
    smooth = (original_max / w - low) / (high - low)
    return th, w, (1 - smooth) * th / factor + smooth * th


def llama3_every_band(d, base, factor, original_max, low_freq_factor=1.0, high_freq_factor=4.0):
    """Every band turned round: fast divided, slow kept, the blend reversed."""
    th, w, _ = _llama3_blend(d, base, factor, original_max, low_freq_factor, high_freq_factor)
    smooth = (original_max / w - low_freq_factor) / (high_freq_factor - low_freq_factor)
    reversed_blend = smooth * th / factor + (1 - smooth) * th
    return np.where(
        w < original_max / high_freq_factor,
        th / factor,
        np.where(w > original_max / low_freq_factor, th, reversed_blend),
    )


def llama3_one_band_loop(d, base, factor, original_max, low_freq_factor=1.0, high_freq_factor=4.0):
    """As llama-models' apply_scaling, with the two outer bands' rules exchanged, blend kept."""
    th, w, blended = _llama3_blend(d, base, factor, original_max, low_freq_factor, high_freq_factor)
    out = []
    for i, freq in enumerate(th):
        if w[i] < original_max / high_freq_factor:
            out.append(freq / factor)
        elif w[i] > original_max / low_freq_factor:
            out.append(freq)
        else:
            out.append(blended[i])
    return np.array(out)


# --------------------------------------------------------------------------- the catalogue

# (function, mistake name as the grader names it) -> two wrong implementations of their own
FORMS = {
    ("softmax", "no max subtraction"): (softmax_no_max_numpy, softmax_no_max_loop),
    ("attention", "missing 1/sqrt(d_k)"): (
        _attention_with(lambda dk: 1.0),
        _attention_loop_with(lambda dk: 1.0),
    ),
    ("attention", "dividing by d_k"): (
        _attention_with(lambda dk: 1.0 / dk),
        _attention_loop_with(lambda dk: 1.0 / math.sqrt(dk) ** 2),
    ),
    ("order_gap_with_pe", "adding positions before shuffling"): (
        order_gap_positions_first,
        order_gap_positions_first_loop,
    ),
    ("angle_rates", "exponent i/d instead of 2i/d"): (
        rates_half_exponent,
        rates_half_exponent_loop,
    ),
    ("sinusoidal_pe", "sin and cos swapped"): (pe_swapped, pe_swapped_loop),
    ("sinusoidal_pe", "exponent i/d instead of 2i/d"): (pe_half_exponent, pe_half_exponent_loop),
    ("sinusoidal_pe", "positions starting at 1"): (pe_from_one, pe_from_one_drop_row),
    ("embed_with_positions", "missing the sqrt(d) scale"): (embed_unscaled, embed_unscaled_loop),
    ("expected_norm", "sqrt(d) instead of sqrt(d/2)"): (norm_sqrt_d, norm_sqrt_d_numpy),
    ("min_pairwise_distance", "a row compared with itself"): (
        min_distance_with_self,
        min_distance_with_self_loop,
    ),
    ("rotation_2d", "clockwise rotation"): (rotation_cw, rotation_cw_transpose),
    ("rotate_pair", "clockwise rotation"): (rotate_pair_cw, rotate_pair_cw_complex),
    ("shift_matrix", "clockwise rotation"): (shift_cw_loop, shift_cw_transpose),
    ("apply_rope", "clockwise rotation"): (rope_cw, rope_cw_loop),
    ("apply_rope", "an angle per dimension instead of per pair"): (
        rope_per_dimension,
        rope_per_dimension_loop,
    ),
    ("apply_rope", "pair 0's angle for every pair"): (rope_pair0, rope_pair0_loop),
    ("apply_rope", "half-split pairs instead of interleaved"): (
        rope_half_split,
        rope_half_split_loop,
    ),
    ("rope_half", "clockwise rotation"): (
        _rope_half_with(_right_rate, clockwise=True),
        _rope_half_loop_with(_right_rate, clockwise=True),
    ),
    ("rope_half", "an angle per dimension instead of per pair"): (
        _rope_half_with(lambda i, d, base: base ** (-4 * i / d)),
        _rope_half_loop_with(lambda i, d, base: base ** (-i / d)),
    ),
    ("rope_half", "pair 0's angle for every pair"): (
        _rope_half_with(lambda i, d, base: 1.0),
        _rope_half_loop_with(lambda i, d, base: 1.0),
    ),
    ("rope_half", "adjacent pairs instead of half-split"): (
        rope_half_adjacent_numpy,
        rope_half_adjacent_loop,
    ),
    ("rope_score", "only the query rotated"): (score_query_only, score_query_only_loop),
    ("turns", "not divided by 2*pi"): (turns_radians, turns_radians_loop),
    ("alibi_slopes", "the power-of-two formula for any head count"): (
        slopes_pow2,
        slopes_pow2_loop,
    ),
    ("alibi_bias", "positive instead of negative bias"): (
        bias_positive_where,
        bias_positive_loop_big,
    ),
    ("alibi_bias", "the per-row constant shortcut"): (
        bias_row_constant_where,
        bias_row_constant_loop_big,
    ),
    ("add_score", "the position added to one side only"): (add_query_side, add_key_side_loop),
    ("offset_scan", "query and key positions swapped"): (scan_swapped, scan_swapped_loop),
    ("learned_lookup", "wraps around past the table"): (lookup_wraps, lookup_wraps_take),
    ("learned_lookup", "clips to the last row past the table"): (lookup_clips, lookup_clips_take),
    ("t5_bucket", "the sign of j - i swapped"): (t5_sign_loop, t5_sign_of_transpose),
    ("t5_bucket", "no num_buckets // 2 offset for rel > 0"): (t5_no_offset_loop, t5_no_offset_abs),
    ("t5_bucket", "every bucket log-spaced (no exact half)"): (
        t5_all_log_plus_one,
        t5_all_log_base2,
    ),
    ("shaw_scores", "no clip of j - i to [-max_rel, max_rel]"): (shaw_no_clip, shaw_no_clip_take),
    ("shaw_scores", "no + max_rel offset into rel_k"): (shaw_no_offset, shaw_no_offset_loop),
    ("causal_attention", "the diagonal masked too (j < i)"): (
        causal_diagonal_inf,
        causal_diagonal_big_triu,
        causal_diagonal_loop,
    ),
    ("pi_thetas", "multiplied by factor instead of divided"): (pi_times, pi_times_loop),
    ("ntk_base", "exponent d / (d + 2) instead of d / (d - 2)"): (ntk_plus_two, ntk_plus_two_log),
    ("ntk_base", "base times factor, without the exponent"): (
        ntk_factor_only,
        ntk_factor_only_numpy,
    ),
    ("yarn_thetas", "no attention factor"): (yarn_no_attention, yarn_no_attention_own),
    ("yarn_thetas", "beta_fast and beta_slow swapped"): (
        yarn_swapped_arguments,
        yarn_ramp_reversed,
    ),
    ("llama3_thetas", "the high-frequency pairs scaled instead of the low ones"): (
        llama3_every_band,
        llama3_one_band_loop,
    ),
}
FORMS |= ROPE_ND_FORMS  # 11_rope_nd's, written in tests/test_checks_rope_nd.py
FORMS.update(ROPE_TODAY_FORMS)  # 12_rope_today's two forms: tests/test_checks_rope_today.py
FORMS.update(TRAIN_SHORT_FORMS)  # 13_train_short's: tests/test_checks_train_short.py
MUTATION_FORMS = {
    ("apply_rope", "input changed in place"): (rope_in_place, rope_copyto),
    ("rope_half", "input changed in place"): (rope_half_in_place, rope_half_copyto),
}


def _no_small_distance(case: C.Case) -> bool:
    """No distance below max_exact in the case: the missing exact half cannot show there."""
    rel = np.asarray(case.args[0])
    nb = case.kwargs.get("num_buckets", 32)
    if case.kwargs.get("bidirectional", True):
        r, exact = np.abs(rel), nb // 4
    else:
        r, exact = -np.minimum(rel, 0), nb // 2
    return not np.any((r > 0) & (r < exact))


# Cases on which a mistake leaves no trace of its own (its wrong numbers could be any slip).
UNSEEN = {("t5_bucket", "every bucket log-spaced (no exact half)"): _no_small_distance}


def _cases(check: C.FunctionCheck) -> list[C.Case]:
    found = list(check.fixed())
    for seed in SEEDS:
        found.extend(check.random(np.random.default_rng(seed)))
    return found


def _mistake(function: str, name: str) -> C.Mistake:
    found = [m for m in C.CHECKS[function].mistakes if m.name == name]
    assert found, f"{function} has no catalogued mistake {name!r}"
    return found[0]


def test_every_catalogued_mistake_has_two_forms_here():
    catalogued = {(f, m.name) for f, c in C.CHECKS.items() for m in c.mistakes}
    assert catalogued == set(FORMS) | set(MUTATION_FORMS)
    assert all(len(forms) >= 2 for forms in (*FORMS.values(), *MUTATION_FORMS.values()))


@pytest.mark.parametrize(("function", "name"), list(FORMS), ids=lambda v: str(v))
def test_each_form_of_a_mistake_is_named(function, name):
    check, mistake = C.CHECKS[function], _mistake(function, name)
    for impl in FORMS[(function, name)]:
        named = 0
        for case in _cases(check):
            refused = False
            try:
                want = C.expected(check, case)
            except ValueError:
                if function != "learned_lookup":
                    continue  # bad input: a wrong implementation that accepts it names nothing
                want, refused = None, True  # past the table: the wrap or the clip is the answer
            with np.errstate(all="ignore"):
                try:
                    got = C.normalize(
                        check.kind, impl(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
                    )
                except Exception:  # noqa: BLE001, S112  (refused or failed: no output to read)
                    continue
            if not refused and C.agree(check.kind, got, want)[0]:
                continue  # (breaking_point's right answer may be None: no break)
            if (function, name) in UNSEEN and UNSEEN[(function, name)](case):
                continue
            found = C.diagnose(check, case, got)
            if found is not mistake and found is not None and _same_output(check, case, found, got):
                continue  # two mistakes that give this very output here: either name is true
            alike = [m for m in check.mistakes if m.name in mistake.alike]
            if any(_same_output(check, case, m, got) for m in alike):
                assert found is None, f"{impl.__name__} on {case.label}: {found}"
                continue  # mistakes declared alike give this output here: neither is named
            assert found is mistake, (
                f"{impl.__name__} on {case.label}: named {getattr(found, 'name', None)!r}"
            )
            named += 1
        assert named, f"{impl.__name__} is never wrong on the cases of {function}"


def _same_output(check, case, other: C.Mistake, got) -> bool:
    """Whether ``other``'s own wrong implementation gives exactly ``got`` on this case."""
    wrong = other.impl(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
    return C.agree(check.kind, got, wrong, nan_equal=True)[0]


@pytest.mark.parametrize(("function", "name"), list(MUTATION_FORMS), ids=lambda v: str(v))
def test_each_form_of_an_in_place_change_is_named(function, name):
    check, mistake = C.CHECKS[function], _mistake(function, name)
    for impl in MUTATION_FORMS[(function, name)]:
        changed = 0
        for case in (c for c in check.fixed() if isinstance(c.args[0], np.ndarray | list)):
            try:
                C.expected(check, case)
            except ValueError:
                continue
            out = call(impl, check.kind, copy.deepcopy(case.args), dict(case.kwargs), True)
            if out.get("mutated"):
                changed += 1
                assert C.mutation_mistake(check) is mistake
        assert changed, impl.__name__


# --------------------------------------------------------------------------- right answers


def causal_right_big(Q, K, V):
    Q, K, V = f64(Q), f64(K), f64(V)
    s = Q @ K.T / math.sqrt(Q.shape[1]) + np.triu(np.full((len(Q), len(K)), BIG), k=1)
    return stable_softmax(s) @ V


def causal_right_loop(Q, K, V):
    Q, K, V = f64(Q), f64(K), f64(V)
    return np.array(
        [
            stable_softmax(K[: i + 1] @ Q[i] / math.sqrt(Q.shape[1])) @ V[: i + 1]
            for i in range(len(Q))
        ]
    ).reshape(len(Q), V.shape[1])


def llama3_right_loop(d, base, factor, original_max, low_freq_factor=1.0, high_freq_factor=4.0):
    th, w, blended = _llama3_blend(d, base, factor, original_max, low_freq_factor, high_freq_factor)
    return np.array(
        [
            f
            if w[i] < original_max / high_freq_factor
            else f / factor
            if w[i] > original_max / low_freq_factor
            else blended[i]
            for i, f in enumerate(th)
        ]
    )


def softmax_right_loop(x, axis=-1):
    x = f64(x)
    return np.apply_along_axis(lambda r: np.exp(r - max(r)) / np.sum(np.exp(r - max(r))), axis, x)


RIGHT_FORMS = {
    "causal_attention": (causal_right_big, causal_right_loop),
    "llama3_thetas": (llama3_right_loop,),
    "softmax": (softmax_right_loop,),
}


@pytest.mark.parametrize("function", list(RIGHT_FORMS))
def test_right_answers_in_other_forms_are_never_named(function):
    check = C.CHECKS[function]
    for impl in RIGHT_FORMS[function]:
        for case in _cases(check):
            try:
                want = C.expected(check, case)
            except ValueError:
                continue
            got = impl(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
            assert C.agree(check.kind, got, want)[0], f"{impl.__name__} on {case.label}"
            assert C.diagnose(check, case, got) is None


def test_properties_do_not_name_an_output_of_another_shape_or_kind():
    """A mistake's property reads the output it was given; anything else names nothing."""
    for function in ("causal_attention", "alibi_bias", "llama3_thetas", "yarn_thetas", "softmax"):
        check = C.CHECKS[function]
        case = check.fixed()[0]
        for other in (np.zeros((1,)), np.full((2, 2), np.nan)):
            assert C.diagnose(check, case, other if check.kind != "tuple" else (other, 1.0)) is None

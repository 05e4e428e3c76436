"""Wrong implementations that the grader recognises by name, for 09_families and 10_long_context.

The known mistakes of COURSE_SPEC.md for these two notebooks, as runnable wrong code:
each function has the signature of the graded function it imitates (its name begins with
that function's name) and returns what a learner who made that mistake would return.
Built on ``helpers.teacher.reference``. Each moves beside its message into the checks
module of its notebook (``helpers.teacher.checks``) when that notebook is written.
"""

from __future__ import annotations

import math

import numpy as np

from helpers.teacher import reference as ref

# --------------------------------------------------------------------------- 09_families


def learned_lookup_wraps(table, positions) -> np.ndarray:
    """Positions past the table wrap around: table[pos % max_len] (position 512 reads row 0)."""
    table = np.asarray(table, dtype=np.float64)
    return table[np.asarray(positions, dtype=np.int64) % table.shape[0]]


def learned_lookup_clips(table, positions) -> np.ndarray:
    """Positions past the table read its last row: table[clip(pos, 0, max_len - 1)]."""
    table = np.asarray(table, dtype=np.float64)
    return table[np.clip(np.asarray(positions, dtype=np.int64), 0, table.shape[0] - 1)]


def t5_bucket_sign_swapped(rel, bidirectional=True, num_buckets=32, max_distance=128) -> np.ndarray:
    """The bucket of i - j instead of j - i: past and future keys trade places."""
    return ref.t5_bucket(-np.asarray(rel, dtype=np.int64), bidirectional, num_buckets, max_distance)


def _exact_then_log(r: np.ndarray, nb: int, max_distance) -> np.ndarray:
    """T5's buckets of distances r >= 0: nb // 2 exact ones, then log-spaced up to max_distance."""
    exact = nb // 2
    logs = np.log(np.maximum(r, exact) / exact) / math.log(max_distance / exact)
    large = np.minimum(nb - 1, exact + np.floor(logs * (nb - exact)).astype(np.int64))
    return np.where(r < exact, r, large)


def t5_bucket_no_offset(rel, bidirectional=True, num_buckets=32, max_distance=128) -> np.ndarray:
    """Bidirectional without the num_buckets // 2 offset for rel > 0: rel and -rel share a bucket."""
    rel = np.asarray(rel, dtype=np.int64)
    if not bidirectional:
        return ref.t5_bucket(rel, False, num_buckets, max_distance)
    return _exact_then_log(np.abs(rel), num_buckets // 2, max_distance)


def t5_bucket_all_log(rel, bidirectional=True, num_buckets=32, max_distance=128) -> np.ndarray:
    """Every bucket log-spaced (no exact half): min(nb - 1, floor(log(r) / log(max_distance) * nb))."""
    rel = np.asarray(rel, dtype=np.int64)
    nb = num_buckets
    if bidirectional:
        nb //= 2
        offset = np.where(rel > 0, nb, 0)
        r = np.abs(rel)
    else:
        offset = np.zeros_like(rel)
        r = -np.minimum(rel, 0)
    logs = np.log(np.maximum(r, 1)) / math.log(max_distance)
    return offset + np.minimum(nb - 1, np.floor(logs * nb).astype(np.int64))


def _shaw(Q, K, rel_k, rows: np.ndarray, mode: str) -> np.ndarray:
    Q, K, R = (np.asarray(a, dtype=np.float64) for a in (Q, K, rel_k))
    rel = np.take(R, rows, axis=0, mode=mode)  # (n, m, d)
    return (Q @ K.T + np.einsum("id,ijd->ij", Q, rel)) / np.sqrt(Q.shape[1])


def shaw_scores_no_clip(Q, K, rel_k, max_rel) -> np.ndarray:
    """rel_k[j - i + max_rel] without the clip: distances past max_rel wrap around the table."""
    n, m = np.shape(Q)[0], np.shape(K)[0]
    rows = np.arange(m)[None, :] - np.arange(n)[:, None] + max_rel
    return _shaw(Q, K, rel_k, rows, mode="wrap")


def shaw_scores_no_offset(Q, K, rel_k, max_rel) -> np.ndarray:
    """rel_k[clip(j - i, -max_rel, max_rel)] without + max_rel: negative distances index from the end."""
    n, m = np.shape(Q)[0], np.shape(K)[0]
    rows = np.clip(np.arange(m)[None, :] - np.arange(n)[:, None], -max_rel, max_rel)
    return _shaw(Q, K, rel_k, rows, mode="wrap")


def causal_attention_masks_diagonal(Q, K, V) -> np.ndarray:
    """Keys j < i only (the diagonal masked too): query 0 sees nothing and gets nan."""
    Q = np.asarray(Q, dtype=np.float64)
    n, m = Q.shape[-2], np.shape(K)[-2]
    mask = np.where(np.arange(m)[None, :] >= np.arange(n)[:, None], -np.inf, 0.0)
    with np.errstate(invalid="ignore"):
        return ref.attention(Q, K, V, bias=mask)


# --------------------------------------------------------------------------- 10_long_context


def pi_thetas_times_factor(d, base, factor) -> np.ndarray:
    """theta_i * factor: the rates sped up instead of slowed down."""
    return ref.thetas(d, base) * factor


def ntk_base_plus_two(base, factor, d) -> float:
    """base * factor ** (d / (d + 2)) instead of d / (d - 2)."""
    return base * factor ** (d / (d + 2))


def ntk_base_factor_only(base, factor, d) -> float:
    """base * factor, without the exponent d / (d - 2)."""
    return base * factor


def yarn_thetas_no_attention_factor(
    d, base, factor, original_max, beta_fast=32, beta_slow=1
) -> tuple[np.ndarray, float]:
    """The right rates, but the attention factor left out (1.0 instead of 0.1 ln(factor) + 1)."""
    th, _ = ref.yarn_thetas(d, base, factor, original_max, beta_fast, beta_slow)
    return th, 1.0


def yarn_thetas_betas_swapped(
    d, base, factor, original_max, beta_fast=32, beta_slow=1
) -> tuple[np.ndarray, float]:
    """beta_fast and beta_slow swapped: the ramp runs backwards, fast pairs get interpolated."""
    return ref.yarn_thetas(d, base, factor, original_max, beta_slow, beta_fast)


def llama3_thetas_high_scaled(
    d, base, factor, original_max, low_freq_factor=1.0, high_freq_factor=4.0
) -> np.ndarray:
    """The high-frequency pairs (short wavelengths) divided by factor, the low ones kept."""
    th = ref.thetas(d, base)
    w = 2 * np.pi / th
    s = (original_max / w - low_freq_factor) / (high_freq_factor - low_freq_factor)
    medium = th * (s / factor + (1.0 - s))
    low_wl, high_wl = original_max / low_freq_factor, original_max / high_freq_factor
    return np.where(w < high_wl, th / factor, np.where(w > low_wl, th, medium))

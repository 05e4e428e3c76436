"""The reference maths of 12_rope_today: RoPE in today's models.

Partial and proportional rotary (GPT-NeoX, Gemma 4), Qwen3.5's partial interleaved M-RoPE, LongRoPE's per-pair factors (Phi-3),
per-layer RoPE plans (Gemma 3, Llama 4) and Llama 4's attention temperature, the
re-rotation of cached keys (StreamingLLM's sink cache), gpt-oss's learned attention sinks and the cache size of multi-head
latent attention (DeepSeek-V3). Vectorised numpy, float64; pairs are interleaved, pair
``i`` is dimensions ``(2i, 2i+1)``; rotations are counter-clockwise. Conventions of the
whole reference: ``helpers.teacher.reference``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from helpers import validate
from helpers.teacher.reference.rope import _rotate_pairs, thetas
from helpers.teacher.reference.rope_nd import interleaved_axes

__all__ = [  # noqa: RUF022  (in the order the notebook teaches them)
    "partial_thetas",
    "qwen35_rope_angles",
    "proportional_thetas",
    "longrope_thetas",
    "layer_rope_bases",
    "llama4_attn_scales",
    "rerotate_keys",
    "sink_cache_update",
    "sink_softmax",
    "mla_cache_values",
]

ASSIGNMENT = "12_rope_today"


def _fraction(p) -> float:
    """A rotary fraction in (0, 1]."""
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise ValueError(f"partial_rotary_factor must be a number in (0, 1], got {p!r}")  # noqa: TRY004
    value = float(p)
    if not math.isfinite(value) or not 0.0 < value <= 1.0:
        raise ValueError(f"partial_rotary_factor must be a number in (0, 1], got {p!r}")
    return value


def _real(value, name: str, allowed: str) -> float:
    """A finite real number (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")  # noqa: TRY004
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return out


def partial_thetas(d, base, partial_rotary_factor) -> np.ndarray:
    """Partial rotary, GPT-NeoX's ``rotary_pct`` (notebook 12_rope_today).

    rot = int(d * p)   (Python's truncation, as Hugging Face)
    theta_i = base ** (-2 i / rot)   for i < rot / 2   (a rot-dim RoPE)
    theta_i = 0                      for the other pairs (they pass through unrotated)
    (GPT-NeoX-20B, d = 96, p = 0.25: 12 of 48 pairs rotate, 1.0, 0.464159, ..., 2.15443e-4)
    # shape: (d // 2,)
    """
    d = validate.dim(d)
    base = validate.base(base)
    p = _fraction(partial_rotary_factor)
    rot = int(d * p)
    if rot < 2 or rot % 2:
        raise ValueError(
            f"int(d * partial_rotary_factor) must be an even number >= 2 of rotated dims, "
            f"got int({d} * {partial_rotary_factor!r}) = {rot}"
        )
    out = np.zeros(d // 2)
    out[: rot // 2] = thetas(rot, base)
    return out


def qwen35_rope_angles(
    position_ids, head_dim, partial_rotary_factor, base, mrope_section
) -> np.ndarray:
    """Qwen3.5's text rotary: interleaved M-RoPE on a partially rotated head (12_rope_today).

    rot = int(head_dim * p) dims rotate, at a rot-dim RoPE's rates r_j = base ** (-2 j / rot);
    pair j < rot/2 turns with the height id when j % 3 == 1 and j < 3 s_h, with the width id
    when j % 3 == 2 and j < 3 s_w, with the temporal id otherwise (11's interleave):
        angle[n, j] = position_ids[axis_j, n] * r_j
    mrope_section = [s_t, s_h, s_w] adds up to rot/2, 3 s_h <= rot/2 + 1, 3 s_w <= rot/2;
    the other head_dim - rot dims pass through unrotated.
    (Qwen3.5: head_dim 256, p 0.25, [11, 11, 10], base 1e7: 32 pairs, h on 1, 4, ..., 31)
    # shapes: position_ids (3, N) -> (N, rot // 2)
    """
    ids = validate.positions(position_ids, "position_ids")
    if ids.ndim != 2 or ids.shape[0] != 3:
        raise ValueError(
            f"position_ids must have shape (3, N) (temporal, height, width), got {ids.shape}"
        )
    head_dim = validate.dim(head_dim, "head_dim")
    p = _fraction(partial_rotary_factor)
    base = validate.base(base)
    rot = int(head_dim * p)
    if rot < 2 or rot % 2:
        raise ValueError(
            f"int(head_dim * partial_rotary_factor) must be an even number >= 2 of rotated dims, "
            f"got int({head_dim} * {partial_rotary_factor!r}) = {rot}"
        )
    half = rot // 2
    sec = list(mrope_section) if isinstance(mrope_section, (list, tuple, np.ndarray)) else None
    if (
        sec is None
        or len(sec) != 3
        or any(isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0 for v in sec)
        or sum(sec) != half
    ):
        raise ValueError(
            f"mrope_section must be 3 integers >= 0 adding up to rot/2 = {half} (rot = "
            f"int(head_dim * partial_rotary_factor) = {rot}), got {mrope_section!r}"
        )
    which = interleaved_axes(half, int(sec[1]), int(sec[2]), mrope_section, "rot/2")
    return ids[which, :].T * thetas(rot, base)


def proportional_thetas(d, base, partial_rotary_factor, factor=1.0) -> np.ndarray:
    """Proportional RoPE, Gemma 4's global layers (notebook 12_rope_today).

    k = int(p * d // 2)   (Hugging Face's expression)
    theta_i = base ** (-2 i / d) / factor   for i < k   (the full head's rates: the fast end)
    theta_i = 0                             for the other pairs (the slow end is dropped)
    (Gemma 4, d = 512, base 1e6, p = 0.25: 64 of 256 pairs, 1.0, 0.947464, ..., 0.0333762)
    # shape: (d // 2,)
    """
    d = validate.dim(d)
    base = validate.base(base)
    p = _fraction(partial_rotary_factor)
    f = _real(factor, "factor", "a finite number >= 1")
    if f < 1:
        raise ValueError(f"factor must be a finite number >= 1, got {factor!r}")
    k = int(p * d // 2)
    if k < 1:
        raise ValueError(
            f"int(partial_rotary_factor * d // 2) must be at least 1 rotated pair, "
            f"got int({partial_rotary_factor!r} * {d} // 2) = {k}"
        )
    out = np.zeros(d // 2)
    out[:k] = thetas(d, base)[:k] / f
    return out


def _factor_list(values, name: str, n: int) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a list of {n} positive numbers, got {values!r}") from exc
    if arr.shape != (n,) or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(
            f"{name} must be a list of d/2 = {n} positive numbers, got {np.shape(values)} {values!r}"
        )
    return arr


def longrope_thetas(
    d, base, short_factor, long_factor, original_max, max_position, seq_len=None
) -> tuple[np.ndarray, float]:
    """LongRoPE (Ding et al. 2024), as Phi-3 uses it (notebook 12_rope_today).

    ext = long_factor when seq_len > original_max, else short_factor (also for seq_len=None)
    theta_i = 1 / (ext_i * base ** (2 i / d))
    s = max_position / original_max
    attention_factor = sqrt(1 + ln(s) / ln(original_max))   (1.0 when s <= 1)
    (Phi-3 at 128k, original 4096, max 131072: attention_factor = sqrt(17/12) = 1.19024)
    # shape: ((d // 2,), float)
    """
    d = validate.dim(d)
    base = validate.base(base)
    short = _factor_list(short_factor, "short_factor", d // 2)
    long = _factor_list(long_factor, "long_factor", d // 2)
    original_max = validate.count(original_max, "original_max", minimum=2)
    max_position = validate.count(max_position, "max_position")
    if seq_len is not None:
        seq_len = validate.count(seq_len, "seq_len")
    ext = long if seq_len is not None and seq_len > original_max else short
    s = max_position / original_max
    attention_factor = math.sqrt(1 + math.log(s) / math.log(original_max)) if s > 1 else 1.0
    return thetas(d, base) / ext, attention_factor


def layer_rope_bases(n_layers, every, base, every_base) -> np.ndarray:
    """The RoPE base of every layer (notebook 12_rope_today).

    layer i (from 0) uses every_base when (i + 1) % every == 0, else base;
    every_base = 0.0: that layer has no RoPE.
    Gemma 3: (n, 6, 1e4, 1e6) (every 6th layer global); Llama 4: (n, 4, 5e5, 0.0).
    # shape: (n_layers,)
    """
    n_layers = validate.count(n_layers, "n_layers")
    every = validate.count(every, "every")
    base = validate.base(base)
    eb = _real(every_base, "every_base", "0.0 (no RoPE) or a finite number > 1")
    if eb != 0.0 and eb <= 1:
        raise ValueError(
            f"every_base must be 0.0 (no RoPE) or a finite number > 1, got {every_base!r}"
        )
    i = np.arange(n_layers)
    return np.where((i + 1) % every == 0, eb, base)


def llama4_attn_scales(positions, floor_scale=8192, attn_scale=0.1) -> np.ndarray:
    """Llama 4's attention temperature on its layers without RoPE (notebook 12_rope_today).

    scale(pos) = 1 + attn_scale * ln(1 + floor((pos + 1) / floor_scale))
    (floor_scale 8192, attn_scale 0.1: 1.0 up to position 8190, 1.0693147 at 8191)
    # shape: positions.shape
    """
    pos = validate.positions(positions, "positions")
    fs = _real(floor_scale, "floor_scale", "a finite number > 0")
    if fs <= 0:
        raise ValueError(f"floor_scale must be a finite number > 0, got {floor_scale!r}")
    a = _real(attn_scale, "attn_scale", "a finite number")
    return 1.0 + a * np.log1p(np.floor((pos + 1.0) / fs))


def rerotate_keys(keys, shift, base=10000.0) -> np.ndarray:
    """Turn cached keys back by the number of slots they moved (notebook 12_rope_today).

    every interleaved pair i turned clockwise by shift * theta_i:
        rerotate_keys(apply_rope(k, p), s) == apply_rope(k, p - s)
    # shapes: keys (..., d), shift an integer or broadcastable to keys.shape[:-1] -> (..., d)
    """
    x, d = validate.vector_dim(keys, "keys")
    s = validate.positions(shift, "shift")
    try:
        s = np.broadcast_to(s, x.shape[:-1])
    except ValueError:
        raise ValueError(
            f"shift must be an integer or broadcast to keys.shape[:-1] = {x.shape[:-1]}, "
            f"got shape {np.shape(shift)}"
        ) from None
    return _rotate_pairs(x, slice(0, None, 2), slice(1, None, 2), -s[..., None] * thetas(d, base))


def sink_cache_update(cache, new_keys, num_sink, base=10000.0) -> np.ndarray:
    """One step of StreamingLLM's sink cache (Xiao et al. 2023) (notebook 12_rope_today).

    cache: a full window, slot i holds a key rotated at position i; new_keys: n raw keys.
        out[:num_sink]        = cache[:num_sink]                      (the sinks stay)
        out[num_sink:W - n]   = rerotate_keys(cache[num_sink + n:], n)  (n oldest dropped)
        out[W - n:]           = apply_rope(new_keys, [W - n, ..., W - 1])
    # shapes: cache (W, d), new_keys (n, d) -> (W, d); a new array
    """
    c = validate.matrix(cache, "cache", ndim=2)
    new = validate.matrix(new_keys, "new_keys", ndim=2)
    W, d = c.shape
    if d == 0 or d % 2:
        raise ValueError(
            f"cache must have an even, positive number of columns d, got shape {c.shape}"
        )
    if new.shape[1] != d:
        raise ValueError(f"new_keys must have d = {d} columns like cache, got shape {new.shape}")
    if (
        isinstance(num_sink, bool)
        or not isinstance(num_sink, numbers.Integral)
        or not 0 <= num_sink < W
    ):
        raise ValueError(f"num_sink must be an integer in 0 .. W - 1 = {W - 1}, got {num_sink!r}")
    n = new.shape[0]
    if not 1 <= n <= W - num_sink:
        raise ValueError(f"new_keys must hold 1 .. W - num_sink = {W - num_sink} keys, got {n}")
    th = thetas(d, base)
    even, odd = slice(0, None, 2), slice(1, None, 2)
    out = np.empty_like(c)
    out[:num_sink] = c[:num_sink]
    out[num_sink : W - n] = _rotate_pairs(c[num_sink + n :], even, odd, -n * th)  # back by n
    out[W - n :] = _rotate_pairs(new, even, odd, np.arange(W - n, W)[:, None] * th)
    return out


def sink_softmax(scores, sink_logits) -> np.ndarray:
    """gpt-oss's learned attention sinks: a softmax whose denominator holds one more logit per
    head (notebook 12_rope_today).

    w[..., h, t, j] = exp(s_tj - m) / (sum_k exp(s_tk - m) + exp(sink_h - m)),
    m = max(max_k s_tk, sink_h)   (the sink inside the maximum: stable, and a row whose keys
    are all hidden, -inf, gives zeros); each row sums to less than 1, the rest went to the sink.
    # shapes: scores (..., H, T, S), sink_logits (H,) -> (..., H, T, S)
    """
    s = validate.matrix(scores, "scores")
    if s.ndim < 3:
        raise ValueError(
            f"scores must have shape (..., H, T, S) (heads, queries, keys), got {s.shape}"
        )
    sink = validate.matrix(sink_logits, "sink_logits")
    if sink.shape != (s.shape[-3],):
        raise ValueError(
            f"sink_logits must hold one logit per head, shape ({s.shape[-3]},) for scores of "
            f"shape {s.shape}, got {sink.shape}"
        )
    for name, x in (("scores", s), ("sink_logits", sink)):
        if np.any(np.isnan(x)) or np.any(x == np.inf):
            raise ValueError(f"{name} must be finite or -inf (a hidden key), got nan or +inf")
    sink = sink[:, None, None]  # (H, 1, 1): broadcast over queries and keys
    m = np.maximum(s.max(axis=-1, keepdims=True, initial=-np.inf), sink)  # (..., H, T, 1)
    if np.any(np.isneginf(m)):
        raise ValueError(
            "a row whose keys are all hidden (-inf) and whose head's sink is -inf has no weights"
        )
    e = np.exp(s - m)
    return e / (e.sum(axis=-1, keepdims=True) + np.exp(sink - m))


def mla_cache_values(kv_lora_rank, qk_rope_head_dim, n_heads, head_dim) -> tuple[int, int]:
    """Values cached per token and layer: multi-head latent attention vs multi-head attention (notebook 12_rope_today).

    mla = kv_lora_rank + qk_rope_head_dim   (the latent and one rotated key shared by the heads)
    mha = 2 * n_heads * head_dim            (a key and a value per head)
    (DeepSeek-V3: 512 + 64 = 576 against 2 * 128 * 128 = 32768, 56.9x fewer)
    """
    r = validate.count(kv_lora_rank, "kv_lora_rank")
    k = validate.count(qk_rope_head_dim, "qk_rope_head_dim")
    h = validate.count(n_heads, "n_heads")
    hd = validate.count(head_dim, "head_dim")
    return r + k, 2 * h * hd

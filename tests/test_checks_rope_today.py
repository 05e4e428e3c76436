"""12_rope_today's named mistakes, each written two different ways, as learners write them.

A mistake is recognised by what it does to the output, so two wrong implementations that
share the mistake but not the code (a loop and numpy, ``**`` and ``exp``, ``np.where`` and
slicing, a helper called or inlined) must both be named, on the fixed cases and on fresh
random cases, and a right answer or another wrong one must not be. Expected values come
from the spec's numbers written here (GPT-NeoX-20B's second rate 0.825404 when wrong,
0.464159 when right, and so on), not from the code under test.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from helpers.teacher import checks as C

# --------------------------------------------------------------------------- wrong answers


def partial_over_d_loop(d, base, partial_rotary_factor):
    rot = int(d * partial_rotary_factor)
    if rot < 2 or rot % 2 or not 0 < partial_rotary_factor <= 1 or d % 2 or base <= 1:
        raise ValueError("bad input")
    out = [0.0] * (d // 2)
    for i in range(rot // 2):
        out[i] = base ** (-2 * i / d)  # the head's d where rot belongs
    return np.array(out)


def partial_over_d_proportional(d, base, partial_rotary_factor):
    rot = int(d * partial_rotary_factor)
    if rot < 2 or rot % 2 or not 0 < partial_rotary_factor <= 1 or d % 2 or base <= 1:
        raise ValueError("bad input")
    rates = np.exp(-np.arange(0, d, 2) / d * math.log(base))
    return np.where(np.arange(d // 2) < rot // 2, rates, 0.0)


def proportional_over_rot_loop(d, base, partial_rotary_factor, factor=1.0):
    k = int(partial_rotary_factor * d // 2)
    if k < 1 or factor < 1 or d % 2 or base <= 1 or not 0 < partial_rotary_factor <= 1:
        raise ValueError("bad input")
    rot = int(d * partial_rotary_factor)
    out = np.zeros(d // 2)
    for i in range(k):
        out[i] = 1.0 / base ** (2 * i / rot) / factor
    return out


def proportional_over_rot_concat(d, base, partial_rotary_factor, factor=1.0):
    k = int(partial_rotary_factor * d // 2)
    if k < 1 or factor < 1 or d % 2 or base <= 1 or not 0 < partial_rotary_factor <= 1:
        raise ValueError("bad input")
    fast = base ** (-np.arange(k) / k) / factor  # 2i / (2k)
    return np.concatenate([fast, np.zeros(d // 2 - k)])


def longrope_ge_where(d, base, short_factor, long_factor, original_max, max_position, seq_len=None):
    use_long = seq_len is not None and seq_len >= original_max
    if seq_len is not None and seq_len < 1:
        raise ValueError("seq_len")
    if len(short_factor) != d // 2 or len(long_factor) != d // 2:
        raise ValueError("factors")
    ext = np.asarray(long_factor if use_long else short_factor, dtype=float)
    s = max_position / original_max
    att = math.sqrt(1 + math.log(s) / math.log(original_max)) if s > 1 else 1.0
    return 1.0 / (ext * base ** (np.arange(0, d, 2) / d)), att


def longrope_ge_not_lt(
    d, base, short_factor, long_factor, original_max, max_position, seq_len=None
):
    if seq_len is not None and seq_len < 1:
        raise ValueError("seq_len")
    if len(short_factor) != d // 2 or len(long_factor) != d // 2:
        raise ValueError("factors")
    ext = short_factor if (seq_len is None or not seq_len >= original_max) else long_factor
    rates = [1 / (e * base ** (2 * i / d)) for i, e in enumerate(ext)]
    s = max_position / original_max
    att = (1 + math.log(s) / math.log(original_max)) ** 0.5 if s > 1 else 1.0
    return np.array(rates), att


def _layer_args(n_layers, every, base, every_base):
    if n_layers < 1 or every < 1 or base <= 1 or (every_base != 0 and every_base <= 1):
        raise ValueError("bad input")


def layers_from_zero_loop(n_layers, every, base, every_base):
    _layer_args(n_layers, every, base, every_base)
    return np.array([every_base if i % every == 0 else base for i in range(n_layers)], float)


def layers_from_zero_slice(n_layers, every, base, every_base):
    _layer_args(n_layers, every, base, every_base)
    out = np.full(n_layers, float(base))
    out[::every] = every_base  # layers 0, every, 2 every, ...
    return out


def layers_swapped_hf(n_layers, every, base, every_base):
    """Llama 4's no_rope_layers built as HF does, then read as 1 = no RoPE."""
    _layer_args(n_layers, every, base, every_base)
    flags = [int((i + 1) % every != 0) for i in range(n_layers)]
    return np.array([every_base if f else base for f in flags], float)


def layers_swapped_where(n_layers, every, base, every_base):
    _layer_args(n_layers, every, base, every_base)
    special = (np.arange(1, n_layers + 1) % every) == 0
    return np.where(~special, float(every_base), float(base))


def scales_floor_loop(positions, floor_scale=8192, attn_scale=0.1):
    pos = np.asarray(positions, dtype=float)
    if np.any(pos < 0) or floor_scale <= 0:
        raise ValueError("bad input")
    flat = [1 + attn_scale * math.log(1 + math.floor(p / floor_scale)) for p in pos.ravel()]
    return np.array(flat).reshape(pos.shape)


def scales_floor_divide(positions, floor_scale=8192, attn_scale=0.1):
    pos = np.asarray(positions, dtype=float)
    if np.any(pos < 0) or floor_scale <= 0:
        raise ValueError("bad input")
    return np.log1p(pos // floor_scale) * attn_scale + 1.0


def _rates(d, base):
    return base ** (-np.arange(0, d, 2) / d)


def _keys_args(keys, shift):
    x = np.array(keys, dtype=float)
    s = np.asarray(shift)
    if x.shape[-1] % 2 or np.any(s < 0):
        raise ValueError("bad input")
    return x, np.broadcast_to(s, x.shape[:-1]).astype(float)


def forward_complex(keys, shift, base=10000.0):
    """Pairs as complex numbers, multiplied by exp(+i s theta): counter-clockwise."""
    x, s = _keys_args(keys, shift)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * s[..., None] * _rates(x.shape[-1], base))
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def forward_pairs_loop(keys, shift, base=10000.0):
    x, s = _keys_args(keys, shift)
    out = x.copy()
    th = _rates(x.shape[-1], base)
    for idx in np.ndindex(x.shape[:-1]):
        for i, t in enumerate(th):
            a = s[idx] * t
            x0, x1 = x[idx][2 * i], x[idx][2 * i + 1]
            out[idx][2 * i] = x0 * math.cos(a) - x1 * math.sin(a)
            out[idx][2 * i + 1] = x0 * math.sin(a) + x1 * math.cos(a)
    return out


def _sink_args(cache, new_keys, num_sink):
    c, new = np.array(cache, dtype=float), np.array(new_keys, dtype=float)
    if c.ndim != 2 or new.ndim != 2 or c.shape[1] != new.shape[1] or c.shape[1] % 2:
        raise ValueError("bad input")
    if not 0 <= num_sink < len(c) or not 1 <= len(new) <= len(c) - num_sink:
        raise ValueError("bad input")
    return c, new


def sink_forward_complex(cache, new_keys, num_sink, base=10000.0):
    c, new = _sink_args(cache, new_keys, num_sink)
    W, n = len(c), len(new)
    kept = forward_complex(c[num_sink + n :], n, base)  # should turn back
    fresh = forward_complex(new, np.arange(W - n, W), base)
    return np.vstack([c[:num_sink], kept, fresh])


def sink_forward_rolled(cache, new_keys, num_sink, base=10000.0):
    """Rolls the non-sink slots and rotates every kept key by +n with a rotation matrix."""
    c, new = _sink_args(cache, new_keys, num_sink)
    W, n, d = len(c), len(new), c.shape[1]
    out = c.copy()
    body = np.roll(c[num_sink:], -n, axis=0)
    th = _rates(d, base)
    R = np.zeros((d, d))
    for i, t in enumerate(th):
        a = n * t
        R[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [
            [math.cos(a), -math.sin(a)],
            [math.sin(a), math.cos(a)],
        ]
    body[: W - num_sink - n] = body[: W - num_sink - n] @ R.T
    for j in range(n):
        body[W - num_sink - n + j] = forward_complex(new[j], W - n + j, base)
    out[num_sink:] = body
    return out


def _qwen35_args(position_ids, head_dim, partial_rotary_factor, base, mrope_section):
    ids = np.asarray(position_ids, dtype=float)
    rot = int(head_dim * partial_rotary_factor)
    half = rot // 2
    s_t, s_h, s_w = mrope_section
    if (
        ids.ndim != 2
        or ids.shape[0] != 3
        or np.any(ids < 0)
        or rot % 2
        or half < 1
        or s_t + s_h + s_w != half
        or 3 * s_h > half + 1
        or 3 * s_w > half
    ):
        raise ValueError("bad input")
    return ids, rot, half


def _interleave_axis(j, s_h, s_w):
    if j % 3 == 1 and j < 3 * s_h:
        return 1
    if j % 3 == 2 and j < 3 * s_w:
        return 2
    return 0


def qwen35_full_head_loop(position_ids, head_dim, partial_rotary_factor, base, mrope_section):
    """The interleave right, each rate over head_dim (Gemma 4's rule), written as a loop."""
    ids, _rot, half = _qwen35_args(
        position_ids, head_dim, partial_rotary_factor, base, mrope_section
    )
    out = np.empty((ids.shape[1], half))
    for j in range(half):
        out[:, j] = ids[_interleave_axis(j, *mrope_section[1:])] * base ** (-2 * j / head_dim)
    return out


def qwen35_whole_head_then_cut(position_ids, head_dim, partial_rotary_factor, base, mrope_section):
    """The interleave over all head_dim/2 pairs with the head's rates, then rot/2 columns."""
    ids, _rot, half = _qwen35_args(
        position_ids, head_dim, partial_rotary_factor, base, mrope_section
    )
    j = np.arange(head_dim // 2)
    axis = np.where((j % 3 == 1) & (j < 3 * mrope_section[1]), 1, 0)
    axis = np.where((j % 3 == 2) & (j < 3 * mrope_section[2]), 2, axis)
    rates = np.exp(-np.arange(0, head_dim, 2) / head_dim * math.log(base))
    return (ids[axis].T * rates)[:, :half]


def qwen35_blocks_repeat(position_ids, head_dim, partial_rotary_factor, base, mrope_section):
    """Qwen2-VL's blocks at the rotated part's rates."""
    ids, rot, _half = _qwen35_args(
        position_ids, head_dim, partial_rotary_factor, base, mrope_section
    )
    return ids[np.repeat([0, 1, 2], mrope_section)].T * base ** (-np.arange(0, rot, 2) / rot)


def qwen35_blocks_loop(position_ids, head_dim, partial_rotary_factor, base, mrope_section):
    ids, rot, half = _qwen35_args(
        position_ids, head_dim, partial_rotary_factor, base, mrope_section
    )
    out = np.zeros((ids.shape[1], half))
    j = 0
    for axis, size in enumerate(mrope_section):
        for _ in range(size):
            out[:, j] = ids[axis] / base ** (2 * j / rot)
            j += 1
    return out


def _sink_args_check(scores, sink_logits):
    s, sink = np.array(scores, dtype=float), np.array(sink_logits, dtype=float)
    if s.ndim < 3 or sink.shape != (s.shape[-3],) or np.isnan(s).any() or np.isnan(sink).any():
        raise ValueError("bad input")
    return s, sink


def sink_extra_key_renormalised(scores, sink_logits):
    """The sink as one more key, softmax, the sink dropped, the row divided by its sum."""
    s, sink = _sink_args_check(scores, sink_logits)
    col = np.broadcast_to(sink.reshape(-1, 1, 1), s.shape[:-1] + (1,))
    z = np.concatenate([s, col], axis=-1)
    e = np.exp(z - z.max(axis=-1, keepdims=True))[..., :-1]
    return e / e.sum(axis=-1, keepdims=True)


def sink_plus_scores_loop(scores, sink_logits):
    """sink_h added to every score of head h, then a softmax per row (loops)."""
    s, sink = _sink_args_check(scores, sink_logits)
    out = np.empty_like(s)
    for idx in np.ndindex(s.shape[:-1]):
        row = s[idx] + sink[idx[-2]]
        e = np.exp(row - np.max(row))
        out[idx] = e / e.sum()
    return out


def sink_naive_exp(scores, sink_logits):
    s, sink = _sink_args_check(scores, sink_logits)
    e = np.exp(s)
    return e / (e.sum(-1, keepdims=True) + np.exp(sink)[:, None, None])


def sink_max_of_keys_loop(scores, sink_logits):
    """The maximum over the keys only: a row of hidden keys gives nan."""
    s, sink = _sink_args_check(scores, sink_logits)
    out = np.empty_like(s)
    for idx in np.ndindex(s.shape[:-1]):
        m = np.max(s[idx])
        e = np.exp(s[idx] - m)
        out[idx] = e / (e.sum() + np.exp(sink[idx[-2]] - m))
    return out


def sink_first_head_loop(scores, sink_logits):
    """Head 0's sink for every head, written with loops."""
    s, sink = _sink_args_check(scores, sink_logits)
    out = np.empty_like(s)
    for idx in np.ndindex(s.shape[:-1]):
        m = max(np.max(s[idx]), sink[0])
        e = np.exp(s[idx] - m)
        out[idx] = e / (e.sum() + math.exp(sink[0] - m))
    return out


def sink_largest_for_all(scores, sink_logits):
    """One sink, the largest, broadcast to every head."""
    s, sink = _sink_args_check(scores, sink_logits)
    one = float(np.max(sink))
    m = np.maximum(s.max(axis=-1, keepdims=True), one)
    e = np.exp(s - m)
    return e / (e.sum(axis=-1, keepdims=True) + np.exp(one - m))


WRONG = {
    ("partial_thetas", "the rates of the full head (2i/d) instead of a rot-dim RoPE (2i/rot)"): (
        partial_over_d_loop,
        partial_over_d_proportional,
    ),
    (
        "proportional_thetas",
        "the rates of a rot-dim RoPE (2i/rot) instead of the full head's (2i/d)",
    ): (proportional_over_rot_loop, proportional_over_rot_concat),
    ("longrope_thetas", "the long factors from seq_len = original_max on"): (
        longrope_ge_where,
        longrope_ge_not_lt,
    ),
    ("layer_rope_bases", "every n-th layer counted from layer 0 (i % every == 0)"): (
        layers_from_zero_loop,
        layers_from_zero_slice,
    ),
    ("layer_rope_bases", "the two bases swapped (HF's no_rope_layers read as 1 = no RoPE)"): (
        layers_swapped_hf,
        layers_swapped_where,
    ),
    ("llama4_attn_scales", "floor(pos / floor_scale) without the + 1"): (
        scales_floor_loop,
        scales_floor_divide,
    ),
    ("rerotate_keys", "the keys turned forward instead of back"): (
        forward_complex,
        forward_pairs_loop,
    ),
    ("sink_cache_update", "the kept keys turned forward instead of back"): (
        sink_forward_complex,
        sink_forward_rolled,
    ),
    (
        "qwen35_rope_angles",
        "the rates of the full head (2j/head_dim) instead of the rotated part's (2j/rot)",
    ): (qwen35_full_head_loop, qwen35_whole_head_then_cut),
    ("qwen35_rope_angles", "the sections taken as contiguous blocks (Qwen2-VL's rule)"): (
        qwen35_blocks_repeat,
        qwen35_blocks_loop,
    ),
    ("sink_softmax", "the sink has no effect (the rows sum to 1)"): (
        sink_extra_key_renormalised,
        sink_plus_scores_loop,
    ),
    ("sink_softmax", "no maximum subtracted that includes the sink (overflow or nan)"): (
        sink_naive_exp,
        sink_max_of_keys_loop,
    ),
    ("sink_softmax", "one sink for all heads (the sinks broadcast on the wrong axis)"): (
        sink_first_head_loop,
        sink_largest_for_all,
    ),
}


def _call(fn, case):
    with np.errstate(all="ignore"):
        return fn(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))


def test_every_catalogued_mistake_of_the_notebook_has_two_wrong_implementations_here():
    catalogued = {(c.name, m.name) for c in C.checks_for("12_rope_today") for m in c.mistakes}
    assert catalogued == set(WRONG)


@pytest.mark.parametrize(("key", "impl"), [(k, f) for k, fs in WRONG.items() for f in fs])
def test_each_wrong_implementation_is_named_on_every_case_it_gets_wrong(key, impl):
    name, mistake_name = key
    check = C.CHECKS[name]
    named, cases = 0, C.cases(check, np.random.default_rng(7))
    for case in cases:
        if case.label.startswith("bad input"):
            continue
        wrong = _call(impl, case)
        if C.agree(check.kind, wrong, C.expected(check, case))[0]:
            continue  # the mistake does not show on this case
        found = C.diagnose(check, case, wrong)
        if found is not None and found.name == SINK_NO_EFFECT and sinks_take_nothing(case, wrong):
            continue  # one sink for all heads, whose share is below round-off: no effect indeed
        if found is not None and found.name != mistake_name and both_mistakes_give(case, wrong):
            continue  # a case on which the two mistakes give the same numbers
        assert found is not None and found.name == mistake_name, (impl.__name__, case.label, found)
        named += 1
    assert named >= 1, f"{impl.__name__} is never wrong on the notebook's cases"


SINK_NO_EFFECT = "the sink has no effect (the rows sum to 1)"


def both_mistakes_give(case, wrong) -> bool:
    """sink_softmax on one key per query, scores of 1000 and a query whose keys are all
    hidden: a sink without effect and a maximum without the sink both give [1] and nan."""
    check = C.CHECKS["sink_softmax"]
    outs = [_call(m.impl, case) for m in check.mistakes[:2]]
    return all(C.agree("array", wrong, o, nan_equal=True)[0] for o in outs)


def sinks_take_nothing(case, wrong) -> bool:
    """The weights are the plain softmax over the keys (within the course tolerance): what
    one sink for all heads gives when that sink's share is below round-off."""
    s = np.asarray(case.args[0], dtype=float)
    with np.errstate(all="ignore"):  # a row of hidden keys gives nan, as the mistake does
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return bool(C.agree("array", wrong, e / e.sum(axis=-1, keepdims=True))[0])


def test_the_spec_numbers_of_the_mistakes():
    """What each mistake does to the numbers the notebook shows (COURSE_SPEC.md)."""
    assert partial_over_d_loop(96, 1e4, 0.25)[1] == pytest.approx(0.825404, abs=1e-6)
    assert proportional_over_rot_loop(512, 1e6, 0.25)[1] == pytest.approx(0.805842, abs=1e-6)
    th, _ = longrope_ge_where(8, 1e4, [1, 1.1, 1.5, 2], [1, 2, 8, 30], 4096, 131072, 4096)
    np.testing.assert_allclose(th[:2], [1, 0.05])
    plan = layers_from_zero_loop(12, 6, 1e4, 1e6)
    assert plan[0] == 1e6 and plan[5] == 1e4
    assert scales_floor_loop([8191])[0] == 1.0
    np.testing.assert_allclose(forward_complex([1, 0], 1), [0.540302, 0.841471], atol=1e-6)
    # Qwen3.5 (head_dim 256, 0.25, [11, 11, 10], 1e7): the height's fastest pair, pair 1, turns at
    # 1e7 ** (-2/64) = 0.604296 when right, at 1e7 ** (-2/256) = 0.881683 over the full head;
    # in blocks the height starts at pair 11, 1e7 ** (-22/64) = 0.003924
    unit = np.eye(3)
    assert qwen35_full_head_loop(unit, 256, 0.25, 1e7, [11, 11, 10])[1, 1] == pytest.approx(
        0.881683, abs=1e-6
    )
    assert qwen35_blocks_repeat(unit, 256, 0.25, 1e7, [11, 11, 10])[1].max() == pytest.approx(
        0.003924, abs=1e-6
    )
    # gpt-oss's sink: [[0, 0]] with sink 0 is [1/3, 1/3]; without effect [1/2, 1/2]
    np.testing.assert_allclose(sink_extra_key_renormalised([[[0.0, 0.0]]], [0.0]), [[[0.5, 0.5]]])
    with np.errstate(all="ignore"):
        assert np.isnan(sink_naive_exp([[[1000.0, 1000.0]]], [0.0])).all()  # exp(1000) overflows


def test_a_sink_cache_built_on_the_forward_turn_fails_at_every_step():
    check = C.CHECKS["sink_cache_update"]
    rng = np.random.default_rng(3)
    raw = rng.normal(size=(12, 8))
    from helpers.reference import apply_rope, sink_cache_update

    good = wrong = apply_rope(raw[:6], np.arange(6))
    for t in range(6, 12):
        case = C.Case((wrong, raw[t : t + 1], 2), {}, f"step {t - 5}")
        wrong_next = sink_forward_complex(wrong, raw[t : t + 1], 2)
        assert not C.agree("array", wrong_next, C.expected(check, case))[0], t
        assert (
            C.diagnose(check, case, wrong_next).name
            == "the kept keys turned forward instead of back"
        )
        good, wrong = sink_cache_update(good, raw[t : t + 1], 2), wrong_next
    assert np.max(np.abs(good - apply_rope(raw[[0, 1, 8, 9, 10, 11]], np.arange(6)))) < 1e-14
    assert np.max(np.abs(wrong - good)) > 0.1


def test_right_answers_written_differently_are_never_named():
    """A right rerotate_keys through complex numbers, exp(-i s theta), agrees and is not named."""

    def back_complex(keys, shift, base=10000.0):
        x, s = _keys_args(keys, shift)
        z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(
            -1j * s[..., None] * _rates(x.shape[-1], base)
        )
        out = np.empty_like(x)
        out[..., 0::2], out[..., 1::2] = z.real, z.imag
        return out

    check = C.CHECKS["rerotate_keys"]
    for case in C.cases(check, np.random.default_rng(11)):
        if case.label.startswith("bad input"):
            continue
        got = _call(back_complex, case)
        assert C.agree("array", got, C.expected(check, case))[0], case.label
        assert C.diagnose(check, case, got) is None


# --------------------------------------------------------------------------- other forms


def partial_all_pairs_full_head(d, base, partial_rotary_factor):
    """2i/d, and the zeros forgotten as well: every pair at the head's rate."""
    return base ** (-np.arange(0, d, 2) / d)


def proportional_over_rot_no_factor(d, base, partial_rotary_factor, factor=1.0):
    """2i/rot, and the factor forgotten as well."""
    k, rot = int(partial_rotary_factor * d // 2), int(d * partial_rotary_factor)
    out = np.zeros(d // 2)
    out[:k] = base ** (-2 * np.arange(k) / rot)
    return out


def longrope_ge_no_attention(
    d, base, short_factor, long_factor, original_max, max_position, seq_len=None
):
    """>= original_max, and the attention factor left at 1.0."""
    th, _ = longrope_ge_where(
        d, base, short_factor, long_factor, original_max, max_position, seq_len
    )
    return th, 1.0


def layers_from_zero_swapped(n_layers, every, base, every_base):
    """i % every == 0, and a third value on those layers (the base halved)."""
    return np.array([base / 2 if i % every == 0 else base for i in range(n_layers)], float)


def sink_forward_new_at_start(cache, new_keys, num_sink, base=10000.0):
    """Kept keys turned forward, and the new keys rotated at slots 0 .. n - 1 as well."""
    c, new = _sink_args(cache, new_keys, num_sink)
    n = len(new)
    kept = forward_complex(c[num_sink + n :], n, base)
    return np.vstack([c[:num_sink], kept, forward_complex(new, np.arange(n), base)])


OTHER_FORMS = [
    ("partial_thetas", partial_all_pairs_full_head),
    ("proportional_thetas", proportional_over_rot_no_factor),
    ("longrope_thetas", longrope_ge_no_attention),
    ("layer_rope_bases", layers_from_zero_swapped),
    ("sink_cache_update", sink_forward_new_at_start),
]


@pytest.mark.parametrize(("name", "impl"), OTHER_FORMS, ids=[n for n, _ in OTHER_FORMS])
def test_a_mistake_is_named_by_its_property_beside_a_second_slip(name, impl):
    """The mistake together with another slip matches no wrong implementation exactly; its
    property (the rates of the other rule, long factors at original_max, the plan one layer
    early, the kept keys turned forward) still names it."""
    check = C.CHECKS[name]
    named = 0
    for case in C.cases(check, np.random.default_rng(5)):
        if case.label.startswith("bad input"):
            continue
        try:
            wrong = _call(impl, case)
        except ValueError:
            continue
        if C.agree(check.kind, wrong, C.expected(check, case))[0]:
            continue
        found = C.diagnose(check, case, wrong)
        if found is not None:
            assert found is check.mistakes[0], (case.label, found.name)
            named += 1
    assert named >= 1, f"{impl.__name__} was never named"


def test_the_properties_name_nothing_of_another_shape_or_kind():
    for name in ("partial_thetas", "proportional_thetas", "layer_rope_bases", "sink_cache_update"):
        check = C.CHECKS[name]
        case = check.fixed()[0]
        for other in (np.zeros((1,)), np.full((2, 2), np.nan), np.zeros((0,))):
            assert C.diagnose(check, case, other) is None, (name, other.shape)
    check = C.CHECKS["longrope_thetas"]
    for other in ((np.zeros(1), 1.0), (np.full((2, 2), np.nan), 1.0)):
        assert C.diagnose(check, check.fixed()[0], other) is None

"""How 12_rope_today (RoPE in today's models) is graded.

For each graded function of the notebook, in notebook order: its fixed cases (the numbers
the notebook shows, the edges, bad input), its random cases over the spec's ranges (d 4 ..
512, bases 1e2 .. 1e6, fractions 0.02 .. 1, LongRoPE lists with original lengths 512 ..
8192, 1 .. 80 layers, floor_scale 1024 .. 16384 and positions up to 5e5, windows of 4 .. 40
with 0 .. 4 sinks, scores of 1 .. 8 heads with hidden keys), and its known mistakes. A
mistake is recognised by what it does to the output (the rates of the other fraction rule,
the M-RoPE axes in blocks, the long factors already at original_max, the plan shifted by one
layer or its two bases swapped, the scale without the + 1, the keys turned forward, rows
that sum to 1 or hold nan, another head's sink), so any way of writing it is named; beside
each message sits the wrong output it recognises.
"""

from __future__ import annotations

import numpy as np

from helpers.i18n import tr
from helpers.teacher import reference as ref
from helpers.teacher.checks.base import Case, FunctionCheck, Mistake, fmt, maybe_list
from helpers.teacher.reference.rope_nd import interleaved_axes

# The notebook's settings.
NEOX_D, GEMMA4_D = 96, 512
SHORT, LONG = [1.0, 1.1, 1.5, 2.0], [1.0, 2.0, 8.0, 30.0]
LLAMA4_POSITIONS = [0, 8190, 8191, 16383, 65535, 999999]
QWEN35 = (256, 0.25, 1e7, [11, 11, 10])  # head_dim, partial_rotary_factor, base, mrope_section


def rate_base(rng: np.random.Generator) -> float:
    """A base in 1e2 .. 1e6, log-uniform."""
    return float(10.0 ** rng.uniform(2.0, 6.0))


def head_dim(rng: np.random.Generator, lo: int = 4, hi: int = 512) -> int:
    """An even head dimension in lo .. hi."""
    return int(2 * rng.integers(lo // 2, hi // 2 + 1))


def fraction(rng: np.random.Generator) -> float:
    """A rotary fraction in 0.02 .. 1: the models' 0.25, 0.5, 1 half of the time."""
    if rng.random() < 0.5:
        return float(rng.choice([0.25, 0.5, 1.0]))
    return float(rng.uniform(0.02, 1.0))


def _label(d, base, p, **more) -> str:
    extra = "".join(f", {k}={v}" for k, v in more.items())
    return f"d={d}, base={fmt(base)}, partial_rotary_factor={fmt(p)}{extra}"


# --------------------------------------------------------------------------- partial_thetas


def _partial_fixed() -> list[Case]:
    return [
        Case((NEOX_D, 1e4, 0.25), {}, tr("{case} (GPT-NeoX-20B)", case=_label(NEOX_D, 1e4, 0.25))),
        Case((GEMMA4_D, 1e6, 0.25), {}, _label(GEMMA4_D, 1e6, 0.25)),
        Case(
            (64, 1e4, 1.0), {}, tr("{case} (every pair rotates)", case=_label(64, 1e4, 1.0)), "edge"
        ),
        Case(
            (4, 100.0, 0.5), {}, tr("{case} (one pair rotates)", case=_label(4, 100.0, 0.5)), "edge"
        ),
        Case((64, 1e4, 0.3), {}, tr("bad input: d=64, partial_rotary_factor=0.3 (19 dims, odd)")),
        Case((64, 1e4, 0.0), {}, tr("bad input: partial_rotary_factor=0")),
        Case((63, 1e4, 0.5), {}, tr("bad input: d=63 (odd)")),
    ]


def _partial_random(rng: np.random.Generator, n: int = 6) -> list[Case]:
    cases = []
    while len(cases) < n:
        d, base, p = head_dim(rng), rate_base(rng), fraction(rng)
        rot = int(d * p)
        if rot >= 2 and rot % 2 == 0:
            cases.append(Case((d, base, p), {}, _label(d, base, p)))
    return cases


def partial_over_d(d, base, partial_rotary_factor) -> np.ndarray:
    """The first rot/2 pairs at the full head's rates base ** (-2i/d): proportional's rule."""
    ref.partial_thetas(d, base, partial_rotary_factor)  # refuses what the reference refuses
    rot = int(d * partial_rotary_factor)
    out = np.zeros(d // 2)
    out[: rot // 2] = ref.thetas(d, base)[: rot // 2]
    return out


def partial_shows_full_head_rates(case: Case, got: np.ndarray, want) -> bool:
    """The rotated pairs (the nonzero rates, however many) follow the full head's rates
    base ** (-2i/d), where they should be a rot-dim RoPE's: written with a loop, ``**`` or
    ``exp``, with or without the zeros after them."""
    d, base = case.args[0], case.args[1]
    m = int(np.count_nonzero(got))
    if want is None or got.shape != (d // 2,) or m < 2 or np.any(got[m:] != 0):
        return False
    return bool(np.allclose(got[:m], ref.thetas(d, base)[:m], rtol=1e-6, atol=1e-12))


M_PARTIAL_OVER_D = Mistake(
    "the rates of the full head (2i/d) instead of a rot-dim RoPE (2i/rot)",
    "your rotated pairs turn at base ** (-2i/d), the rates of the whole head, so they stop at "
    "the fast end of the spectrum (GPT-NeoX-20B's second rate 0.825404 instead of 0.464159). "
    "Partial rotary is a RoPE of rot = int(d * p) dims: theta_i = base ** (-2i/rot) for the "
    "first rot/2 pairs, 0 for the others. Keeping the full head's rates is Gemma 4's "
    "proportional RoPE, the next exercise.",
    partial_over_d,
    shows=partial_shows_full_head_rates,
)


PARTIAL_THETAS = FunctionCheck(
    name="partial_thetas",
    kind="array",
    fixed=_partial_fixed,
    random=_partial_random,
    mistakes=(M_PARTIAL_OVER_D,),
)


# --------------------------------------------------------------------------- qwen35_rope_angles


def _qwen35_label(ids, head_dim, p, base, section) -> str:
    n = np.shape(ids)[-1] if np.ndim(ids) == 2 else "?"
    return (
        f"{n} tokens, head_dim={head_dim}, partial_rotary_factor={fmt(p)}, base={fmt(base)}, "
        f"mrope_section={list(section)}"
    )


def _qwen35_fixed() -> list[Case]:
    image = ref.mrope_position_ids([("text", 1), ("image", (4, 4)), ("text", 1)])
    example = ref.mrope_position_ids([("text", 2), ("image", (4, 6)), ("text", 2)])
    p = np.arange(6)
    return [
        Case(
            (np.eye(3, dtype=np.int64), *QWEN35),
            {},
            tr("ids 1 on one axis each, Qwen3.5's setting (head_dim 256, 0.25, [11, 11, 10], 1e7)"),
        ),
        Case((image, *QWEN35), {}, tr("an image of 2 x 2 tokens, Qwen3.5's setting")),
        Case(
            (np.stack([p, p, p]).tolist(), 16, 0.5, 1e4, [2, 1, 1]),
            {},
            tr("text only, head_dim 16, half rotated, [2, 1, 1], lists"),
        ),
        Case(
            (example, 8, 1.0, 1e4, [2, 1, 1]),
            {},
            tr("every dim rotates (factor 1): 11's interleave, d=8, [2, 1, 1]"),
            "edge",
        ),
        Case(
            (example, 64, 0.25, 1e4, [2, 3, 3]),
            {},
            tr("bad input: a width section of 3 pairs on 8 (3 * 3 > 8)"),
        ),
        Case(
            (image, 256, 0.25, 1e7, [44, 44, 40]),
            {},
            tr("bad input: sections of head_dim/2 = 128 pairs, not rot/2 = 32"),
        ),
        Case(
            (example, 64, 0.3, 1e4, [3, 3, 3]),
            {},
            tr("bad input: head_dim=64, factor 0.3 (19 dims)"),
        ),
        Case((example[:2], *QWEN35), {}, tr("bad input: ids of 2 rows")),
    ]


def _qwen35_random(rng: np.random.Generator, n: int = 6) -> list[Case]:
    cases = []
    while len(cases) < n:
        hd, p = head_dim(rng), fraction(rng)
        rot = int(hd * p)
        half = rot // 2
        if rot % 2 or half < 2:
            continue
        s_h = int(rng.integers(0, (half + 1) // 3 + 1))
        s_w = int(rng.integers(0, min(half // 3, half - s_h) + 1))
        section = [half - s_h - s_w, s_h, s_w]
        base = float(10.0 ** rng.uniform(2.0, 7.0))
        ids = rng.integers(0, 4097, size=(3, int(rng.integers(1, 9))))
        cases.append(
            Case(
                (maybe_list(rng, ids), hd, p, base, section),
                {},
                _qwen35_label(ids, hd, p, base, section),
            )
        )
    return cases


def _qwen35_parts(position_ids, head_dim, partial_rotary_factor, base, mrope_section):
    """The ids (3, N), rot, the rotated part's rates and the full head's first rot/2 rates."""
    ref.qwen35_rope_angles(position_ids, head_dim, partial_rotary_factor, base, mrope_section)
    ids = np.asarray(position_ids, dtype=np.float64)
    rot = int(head_dim * partial_rotary_factor)
    return ids, rot, ref.thetas(rot, base), ref.thetas(head_dim, base)[: rot // 2]


def qwen35_full_head_rates(position_ids, head_dim, partial_rotary_factor, base, mrope_section):
    """The right axes at the full head's rates base ** (-2j / head_dim): Gemma 4's rule."""
    ids, rot, _, full = _qwen35_parts(
        position_ids, head_dim, partial_rotary_factor, base, mrope_section
    )
    which = interleaved_axes(rot // 2, mrope_section[1], mrope_section[2], mrope_section, "")
    return ids[which].T * full


def qwen35_interleave_then_cut(position_ids, head_dim, partial_rotary_factor, base, mrope_section):
    """11's interleave over all head_dim/2 pairs (the temporal section padded), then the first
    rot/2 columns kept: the same full-head rates."""
    ids, rot, _, _ = _qwen35_parts(
        position_ids, head_dim, partial_rotary_factor, base, mrope_section
    )
    pad = [mrope_section[0] + (head_dim - rot) // 2, mrope_section[1], mrope_section[2]]
    return ref.mrope_interleaved_angles(ids.astype(np.int64), head_dim, base, pad)[:, : rot // 2]


def qwen35_in_blocks(position_ids, head_dim, partial_rotary_factor, base, mrope_section):
    """The sections as contiguous blocks t, h, w (Qwen2-VL's rule) at the rotated part's rates."""
    ids, _, rates, _ = _qwen35_parts(
        position_ids, head_dim, partial_rotary_factor, base, mrope_section
    )
    return ids[np.repeat(np.arange(3), mrope_section)].T * rates


def _columns_follow(got, ids, rates, axes=None) -> bool:
    """Every column j of got is ids[axis] * rates[j], for the given axis of j (or any axis)."""
    if got.shape != (ids.shape[1], rates.size):
        return False
    for j in range(rates.size):
        choices = range(3) if axes is None else (int(axes[j]),)
        if not any(
            np.allclose(got[:, j], ids[a] * rates[j], rtol=1e-6, atol=1e-9) for a in choices
        ):
            return False
    return True


def qwen35_shows_full_head_rates(case: Case, got: np.ndarray, want) -> bool:
    """Every column turns at the full head's rate base ** (-2j / head_dim), whichever axis it
    follows: the rates of Gemma 4's rule, or an interleave run over the whole head and cut."""
    if want is None:
        return False
    ids, _rot, rates, full = _qwen35_parts(*case.args)
    if np.allclose(rates, full):
        return False  # factor 1: both rules give the same rates
    return _columns_follow(got, ids, full)


def qwen35_shows_blocks(case: Case, got: np.ndarray, want) -> bool:
    """Column j follows the axis of contiguous blocks t, h, w (at either rule's rates): the
    interleave left out."""
    if want is None:
        return False
    ids, rot, rates, full = _qwen35_parts(*case.args)
    blocks = np.repeat(np.arange(3), case.args[4])
    right = interleaved_axes(rot // 2, case.args[4][1], case.args[4][2], case.args[4], "")
    if np.array_equal(blocks, right) or np.allclose(ids[blocks], ids[right]):
        return False  # the blocks and the interleave give the same axes here
    return _columns_follow(got, ids, rates, blocks) or _columns_follow(got, ids, full, blocks)


M_QWEN35_FULL_HEAD = Mistake(
    "the rates of the full head (2j/head_dim) instead of the rotated part's (2j/rot)",
    "your pairs turn at base ** (-2j / head_dim), the rates of the whole head (Gemma 4's "
    "proportional rule, or 11's interleave run over all head_dim/2 pairs and cut after), so "
    "Qwen3.5's 32 pairs stop at the fast end of a 128-pair spectrum. Qwen3.5 rotates a RoPE of "
    "rot = int(head_dim * p) dims: pair j < rot/2 turns at base ** (-2j / rot), its axis from "
    "the interleave over those rot/2 pairs.",
    qwen35_full_head_rates,
    variants=(qwen35_interleave_then_cut,),
    shows=qwen35_shows_full_head_rates,
)

M_QWEN35_BLOCKS = Mistake(
    "the sections taken as contiguous blocks (Qwen2-VL's rule)",
    "your pairs turn in three blocks, the first s_t with the temporal id, then s_h with the "
    "height, then s_w with the width, as Qwen2-VL's mrope_angles does, so the width gets only "
    "the slowest rates. Qwen3.5 interleaves them as Qwen3-VL does: pair j turns with the height "
    "when j % 3 == 1 and j < 3 * s_h, with the width when j % 3 == 2 and j < 3 * s_w, with the "
    "temporal id otherwise.",
    qwen35_in_blocks,
    shows=qwen35_shows_blocks,
)


QWEN35_ROPE_ANGLES = FunctionCheck(
    name="qwen35_rope_angles",
    kind="array",
    fixed=_qwen35_fixed,
    random=_qwen35_random,
    mistakes=(M_QWEN35_FULL_HEAD, M_QWEN35_BLOCKS),
    check_mutation=True,
)


# --------------------------------------------------------------------------- proportional_thetas


def _proportional_fixed() -> list[Case]:
    return [
        Case(
            (GEMMA4_D, 1e6, 0.25),
            {},
            tr("{case} (Gemma 4's global layers)", case=_label(GEMMA4_D, 1e6, 0.25)),
        ),
        Case((8, 1e4, 0.5), {}, _label(8, 1e4, 0.5)),
        Case((64, 1e4, 1.0), {"factor": 2.0}, _label(64, 1e4, 1.0, factor=2), "edge"),
        Case((64, 1e4, 0.01), {}, tr("bad input: d=64, partial_rotary_factor=0.01 (no pair)")),
        Case((64, 1e4, 0.5), {"factor": 0.5}, tr("bad input: factor=0.5 (below 1)")),
    ]


def _proportional_random(rng: np.random.Generator, n: int = 6) -> list[Case]:
    cases = []
    while len(cases) < n:
        d, base, p = head_dim(rng), rate_base(rng), fraction(rng)
        if int(p * d // 2) < 1:
            continue
        f = float(rng.choice([1.0, 1.0, 2.0, rng.uniform(1.0, 32.0)]))
        cases.append(Case((d, base, p), {"factor": f}, _label(d, base, p, factor=fmt(f))))
    return cases


def proportional_over_rot(d, base, partial_rotary_factor, factor=1.0) -> np.ndarray:
    """The k pairs at the rates of a rot-dim RoPE, base ** (-2i/rot), rot = int(d * p):
    partial rotary's rule."""
    ref.proportional_thetas(d, base, partial_rotary_factor, factor)  # refuses the same input
    k, rot = int(partial_rotary_factor * d // 2), int(d * partial_rotary_factor)
    out = np.zeros(d // 2)
    out[:k] = base ** (-2.0 * np.arange(k) / rot) / factor
    return out


def proportional_over_2k(d, base, partial_rotary_factor, factor=1.0) -> np.ndarray:
    """The same rule over 2k (= rot, or rot - 1 when rot is odd): thetas(2k, base)[:k]."""
    ref.proportional_thetas(d, base, partial_rotary_factor, factor)  # refuses the same input
    k = int(partial_rotary_factor * d // 2)
    out = np.zeros(d // 2)
    out[:k] = ref.thetas(2 * k, base) / factor
    return out


def proportional_shows_rot_spectrum(case: Case, got: np.ndarray, want) -> bool:
    """The k rotated pairs step down by base ** (-2/r) with r about 2k (a rot-dim RoPE's
    spectrum) instead of base ** (-2/d), whatever scale (factor) they were given."""
    d, base, p = case.args[:3]
    k = int(p * d // 2)
    if want is None or got.shape != (d // 2,) or k < 2 or np.any(got[:k] <= 0):
        return False
    steps = got[1:k] / got[: k - 1]
    if not np.allclose(steps, steps[0], rtol=1e-6):
        return False
    return any(
        np.isclose(steps[0], base ** (-2.0 / r), rtol=1e-6)
        for r in {2 * k - 1, 2 * k, 2 * k + 1, int(d * p)}
        if r > 0 and r != d
    )


M_PROPORTIONAL_OVER_ROT = Mistake(
    "the rates of a rot-dim RoPE (2i/rot) instead of the full head's (2i/d)",
    "your k rotated pairs span the whole spectrum of a RoPE of 2k dims, down to its slowest "
    "rate (Gemma 4's second rate 0.805842 instead of 0.947464). Proportional RoPE keeps the "
    "full head's rates base ** (-2i/d) / factor for the first k = int(p * d // 2) pairs: the "
    "fast end stays, the slow pairs go.",
    proportional_over_rot,
    variants=(proportional_over_2k,),
    shows=proportional_shows_rot_spectrum,
)


PROPORTIONAL_THETAS = FunctionCheck(
    name="proportional_thetas",
    kind="array",
    fixed=_proportional_fixed,
    random=_proportional_random,
    mistakes=(M_PROPORTIONAL_OVER_ROT,),
)


# --------------------------------------------------------------------------- longrope_thetas


def _longrope_fixed() -> list[Case]:
    ex = (8, 1e4, SHORT, LONG, 4096, 131072)
    phi3 = (96, 1e4, [1.0] * 48, [1.0] * 48, 4096, 131072)
    return [
        Case(ex, {"seq_len": 4096}, tr("d=8, the example factors, seq_len=4096 (= original_max)")),
        Case(ex, {"seq_len": 4097}, tr("d=8, the example factors, seq_len=4097")),
        Case(ex, {}, tr("d=8, the example factors, seq_len=None")),
        Case(phi3, {}, tr("Phi-3 at 128k: original_max=4096, max_position=131072")),
        Case(
            (8, 1e4, SHORT, LONG, 4096, 2048),
            {"seq_len": 1},
            tr("max_position=2048 below original_max=4096, seq_len=1"),
            "edge",
        ),
        Case((8, 1e4, SHORT[:3], LONG, 4096, 8192), {}, tr("bad input: 3 short factors for d=8")),
        Case((8, 1e4, SHORT, LONG, 4096, 8192), {"seq_len": 0}, tr("bad input: seq_len=0")),
    ]


def _longrope_random(rng: np.random.Generator, n: int = 6) -> list[Case]:
    cases = []
    for _ in range(n):
        d, base = head_dim(rng, 4, 256), rate_base(rng)
        L = int(rng.integers(512, 8193))
        max_pos = max(1, int(L * rng.uniform(0.5, 32.0)))
        short = rng.uniform(1.0, 3.0, d // 2)
        long = rng.uniform(1.0, 60.0, d // 2)
        seq = [None, L, L + 1, int(rng.integers(1, 40 * L))][int(rng.integers(0, 4))]
        kwargs = {} if seq is None else {"seq_len": seq}
        cases.append(
            Case(
                (d, base, maybe_list(rng, short), maybe_list(rng, long), L, max_pos),
                kwargs,
                f"d={d}, base={fmt(base)}, original_max={L}, max_position={max_pos}, seq_len={seq}",
            )
        )
    return cases


def longrope_from_original_max(
    d, base, short_factor, long_factor, original_max, max_position, seq_len=None
) -> tuple[np.ndarray, float]:
    """The long factors from seq_len >= original_max on (one position too early)."""
    th, af = ref.longrope_thetas(
        d, base, short_factor, long_factor, original_max, max_position, seq_len
    )
    if seq_len is not None and seq_len >= original_max:
        th = ref.thetas(d, base) / np.asarray(long_factor, dtype=np.float64)
    return th, af


def longrope_shows_long_at_original(case: Case, got: tuple, want) -> bool:
    """At seq_len == original_max the rates are those of the long factors (whatever the
    attention factor came out as)."""
    d, base, _, long_factor, original_max = case.args[:5]
    if want is None or case.kwargs.get("seq_len") != original_max:
        return False
    rates = got[0]
    long_rates = ref.thetas(d, base) / np.asarray(long_factor, dtype=np.float64)
    return rates.shape == long_rates.shape and bool(np.allclose(rates, long_rates, rtol=1e-6))


M_LONGROPE_AT_ORIGINAL = Mistake(
    "the long factors from seq_len = original_max on",
    "at seq_len = original_max your rates use the long factors (the example at 4096 gives "
    "[1, 0.05, ...] instead of [1, 0.0909091, ...]). The model was trained on original_max "
    "positions, so that length is still short: the long factors start at "
    "seq_len > original_max.",
    longrope_from_original_max,
    shows=longrope_shows_long_at_original,
)


LONGROPE_THETAS = FunctionCheck(
    name="longrope_thetas",
    kind="tuple",
    fixed=_longrope_fixed,
    random=_longrope_random,
    mistakes=(M_LONGROPE_AT_ORIGINAL,),
    check_mutation=True,
)


# --------------------------------------------------------------------------- layer_rope_bases


def _layers_fixed() -> list[Case]:
    return [
        Case((12, 6, 1e4, 1e6), {}, tr("12 layers, every 6th global (Gemma 3's pattern)")),
        Case((62, 6, 1e4, 1e6), {}, tr("Gemma 3 27B: 62 layers")),
        Case((48, 4, 5e5, 0.0), {}, tr("Llama 4: 48 layers, every 4th without RoPE")),
        Case((1, 1, 1e4, 1e6), {}, tr("1 layer, every=1 (every layer global)"), "edge"),
        Case((5, 6, 1e4, 1e6), {}, tr("5 layers, every=6 (no global layer)"), "edge"),
        Case((12, 0, 1e4, 1e6), {}, tr("bad input: every=0")),
        Case((12, 6, 1e4, 0.5), {}, tr("bad input: every_base=0.5")),
    ]


def _layers_random(rng: np.random.Generator, n: int = 6) -> list[Case]:
    cases = []
    for _ in range(n):
        layers, every = int(rng.integers(1, 81)), int(rng.integers(1, 9))
        base = rate_base(rng)
        every_base = 0.0 if rng.random() < 0.4 else rate_base(rng)
        cases.append(
            Case(
                (layers, every, base, every_base),
                {},
                f"n_layers={layers}, every={every}, base={fmt(base)}, every_base={fmt(every_base)}",
            )
        )
    return cases


def layers_from_zero(n_layers, every, base, every_base) -> np.ndarray:
    """Layer i uses every_base when i % every == 0: the plan one layer early (layer 0 special)."""
    ref.layer_rope_bases(n_layers, every, base, every_base)  # refuses the same input
    i = np.arange(n_layers)
    return np.where(i % every == 0, float(every_base), float(base))


def layers_swapped(n_layers, every, base, every_base) -> np.ndarray:
    """Every layer's base swapped: every_base on the ordinary layers, base on every n-th one."""
    ref.layer_rope_bases(n_layers, every, base, every_base)  # refuses the same input
    i = np.arange(n_layers)
    return np.where((i + 1) % every == 0, float(base), float(every_base))


def layers_shows_counted_from_zero(case: Case, got: np.ndarray, want) -> bool:
    """The layers that differ from base are 0, every, 2 every, ...: the plan one layer early,
    whichever value those layers were given."""
    n_layers, every, base = case.args[:3]
    if want is None or got.shape != (n_layers,) or every < 2:
        return False
    i = np.arange(n_layers)
    return bool(np.array_equal(got != float(base), i % every == 0))


M_LAYERS_OFF_BY_ONE = Mistake(
    "every n-th layer counted from layer 0 (i % every == 0)",
    "your special layers are 0, every, 2 every, ...: one layer early (with Gemma 3's plan "
    "layer 0 becomes global and layer 5 local). Layers count from 0, and the n-th layer is "
    "layer n - 1: layer i is special when (i + 1) % every == 0.",
    layers_from_zero,
    shows=layers_shows_counted_from_zero,
)

M_LAYERS_SWAPPED = Mistake(
    "the two bases swapped (HF's no_rope_layers read as 1 = no RoPE)",
    "your ordinary layers got every_base and the special ones base: the plan is upside down. "
    "In Hugging Face's Llama4TextConfig, no_rope_layers[i] == 1 means layer i uses RoPE; "
    "layer i takes every_base only when (i + 1) % every == 0.",
    layers_swapped,
)


LAYER_ROPE_BASES = FunctionCheck(
    name="layer_rope_bases",
    kind="array",
    fixed=_layers_fixed,
    random=_layers_random,
    mistakes=(M_LAYERS_OFF_BY_ONE, M_LAYERS_SWAPPED),
)


# --------------------------------------------------------------------------- llama4_attn_scales


def _scales_fixed() -> list[Case]:
    return [
        Case((LLAMA4_POSITIONS,), {}, tr("positions 0 .. 999999, Llama 4's settings")),
        Case(
            (np.array([[0, 1023], [1024, 5000]]),),
            {"floor_scale": 1024, "attn_scale": 0.2},
            tr("a 2 x 2 array of positions, floor_scale=1024, attn_scale=0.2"),
        ),
        Case((0,), {}, tr("position 0 alone (a scalar)"), "edge"),
        Case(([3, -1],), {}, tr("bad input: a negative position")),
        Case(([3],), {"floor_scale": 0}, tr("bad input: floor_scale=0")),
    ]


def _scales_random(rng: np.random.Generator, n: int = 6) -> list[Case]:
    cases = []
    for _ in range(n):
        fs = int(rng.integers(1024, 16385))
        a = float(rng.uniform(0.01, 1.0))
        pos = rng.integers(0, 500001, size=int(rng.integers(1, 9)))
        pos[0] = fs - 1  # the first position whose scale grows
        cases.append(
            Case(
                (maybe_list(rng, pos),),
                {"floor_scale": fs, "attn_scale": a},
                f"{len(pos)} positions up to {int(pos.max())}, floor_scale={fs}, attn_scale={a:.4g}",
            )
        )
    return cases


def scales_without_plus_one(positions, floor_scale=8192, attn_scale=0.1) -> np.ndarray:
    """1 + attn_scale * ln(1 + floor(pos / floor_scale)): position 8191 still gets 1.0."""
    ref.llama4_attn_scales(positions, floor_scale, attn_scale)  # refuses the same input
    pos = np.asarray(positions, dtype=np.float64)
    return 1.0 + attn_scale * np.log1p(np.floor(pos / floor_scale))


M_SCALES_NO_PLUS_ONE = Mistake(
    "floor(pos / floor_scale) without the + 1",
    "your scale grows one position late (position 8191 gives 1.0 instead of 1.0693147). "
    "Llama 4 counts tokens, not positions: floor((pos + 1) / floor_scale), so the 8192nd "
    "token (position 8191) is the first one scaled.",
    scales_without_plus_one,
)


LLAMA4_ATTN_SCALES = FunctionCheck(
    name="llama4_attn_scales",
    kind="array",
    fixed=_scales_fixed,
    random=_scales_random,
    mistakes=(M_SCALES_NO_PLUS_ONE,),
    check_mutation=True,
)


# --------------------------------------------------------------------------- rerotate_keys


def _keys(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape)


def _rerotate_fixed() -> list[Case]:
    k = ref.apply_rope(_keys(12, 4, 8), np.array([5, 6, 7, 8]))
    return [
        Case(([1.0, 0.0], 1), {}, tr("the key [1, 0] turned back by 1")),
        Case((k, 3), {}, tr("4 keys of d=8 at positions 5 .. 8, shift 3")),
        Case((k, np.array([0, 1, 2, 8])), {}, tr("4 keys, one shift per key")),
        Case((k, 0), {}, tr("shift 0 (nothing moves)"), "edge"),
        Case((k, -1), {}, tr("bad input: shift=-1")),
        Case((k, np.array([1, 2])), {}, tr("bad input: 2 shifts for 4 keys")),
        Case(([1.0, 0.0, 1.0], 1), {}, tr("bad input: d=3 (odd)")),
    ]


def _rerotate_random(rng: np.random.Generator, n: int = 6) -> list[Case]:
    cases = []
    for _ in range(n):
        d, base = head_dim(rng, 2, 256), rate_base(rng)
        rows = int(rng.integers(1, 9))
        keys = rng.normal(size=(rows, d))
        if rng.random() < 0.5:
            shift = int(rng.integers(0, 4097))
            what = f"shift={shift}"
        else:
            shift = rng.integers(0, 4097, size=rows)
            what = tr("one shift per key")
        cases.append(
            Case(
                (maybe_list(rng, keys), shift),
                {"base": base},
                f"{rows} x {d} keys, {what}, base={fmt(base)}",
            )
        )
    return cases


def rerotate_forward(keys, shift, base=10000.0) -> np.ndarray:
    """The keys turned forward (counter-clockwise) by shift * theta_i instead of back."""
    ref.rerotate_keys(keys, shift, base)  # refuses the same input
    x = np.asarray(keys, dtype=np.float64)
    s = np.broadcast_to(np.asarray(shift, dtype=np.float64), x.shape[:-1])
    return ref.apply_rope(x, s, base)


M_REROTATE_FORWARD = Mistake(
    "the keys turned forward instead of back",
    "your keys were turned forward, counter-clockwise, by shift * theta_i ([1, 0] by 1 gives "
    "[0.540302, 0.841471] instead of [0.540302, -0.841471]). A key that moves shift slots "
    "towards the start must lose that rotation: turn every pair back, clockwise, by "
    "shift * theta_i, so that rerotate_keys(apply_rope(k, p), s) == apply_rope(k, p - s).",
    rerotate_forward,
)


REROTATE_KEYS = FunctionCheck(
    name="rerotate_keys",
    kind="array",
    fixed=_rerotate_fixed,
    random=_rerotate_random,
    mistakes=(M_REROTATE_FORWARD,),
    check_mutation=True,
)


# --------------------------------------------------------------------------- sink_cache_update


def full_window(seed: int, W: int, d: int, base: float = 10000.0) -> np.ndarray:
    """A full cache: W raw keys rotated at slots 0 .. W - 1."""
    return ref.apply_rope(_keys(seed, W, d), np.arange(W), base)


def _sink_fixed() -> list[Case]:
    cache = full_window(0, 6, 8)
    return [
        Case(
            (cache, _keys(1, 1, 8), 2),
            {},
            tr("W=6, 2 sinks, d=8: one new token"),
        ),
        Case((cache, _keys(2, 3, 8), 2), {}, tr("W=6, 2 sinks, d=8: three new tokens")),
        Case(
            (full_window(3, 16, 8), _keys(4, 2, 8), 4),
            {},
            tr("W=16, 4 sinks, d=8: two new tokens"),
        ),
        Case((cache, _keys(5, 1, 8), 0), {}, tr("no sink (num_sink=0)"), "edge"),
        Case((cache, _keys(6, 4, 8), 2), {}, tr("every slot but the sinks replaced"), "edge"),
        Case((cache, _keys(7, 1, 8), 6), {}, tr("bad input: num_sink=6 for W=6")),
        Case((cache, _keys(8, 5, 8), 2), {}, tr("bad input: 5 new keys, room for 4")),
        Case((cache, _keys(9, 1, 6), 2), {}, tr("bad input: new keys of d=6 for a cache of d=8")),
    ]


def _sink_random(rng: np.random.Generator, n: int = 6) -> list[Case]:
    cases = []
    for _ in range(n):
        W = int(rng.integers(4, 41))
        S = int(rng.integers(0, min(4, W - 1) + 1))
        new = int(rng.integers(1, W - S + 1))
        d, base = head_dim(rng, 2, 64), rate_base(rng)
        cache = ref.apply_rope(rng.normal(size=(W, d)), np.arange(W), base)
        cases.append(
            Case(
                (maybe_list(rng, cache), rng.normal(size=(new, d)), S),
                {"base": base},
                f"W={W}, num_sink={S}, d={d}, {new} new, base={fmt(base)}",
            )
        )
    return cases


def sink_forward(cache, new_keys, num_sink, base=10000.0) -> np.ndarray:
    """The kept keys turned forward by n instead of back; sinks and new keys right."""
    ref.sink_cache_update(cache, new_keys, num_sink, base)  # refuses the same input
    c = np.asarray(cache, dtype=np.float64)
    new = np.asarray(new_keys, dtype=np.float64)
    W, n = c.shape[0], new.shape[0]
    return np.concatenate(
        [
            c[:num_sink],
            ref.apply_rope(c[num_sink + n :], n, base),
            ref.apply_rope(new, np.arange(W - n, W), base),
        ]
    )


def sink_shows_forward_turn(case: Case, got: np.ndarray, want) -> bool:
    """The keys kept in slots num_sink .. W - n - 1 are cache[num_sink + n:] turned forward
    by n, whatever the sinks and the new keys came out as."""
    cache, new_keys, num_sink = case.args[:3]
    c = np.asarray(cache, dtype=np.float64)
    n, W = np.shape(new_keys)[0], c.shape[0]
    if want is None or got.shape != c.shape or W - num_sink - n < 1:
        return False
    forward = ref.apply_rope(c[num_sink + n :], n, case.kwargs.get("base", 10000.0))
    moved = got[num_sink : W - n]
    if np.allclose(forward, want[num_sink : W - n], rtol=1e-6, atol=1e-9):
        return False  # a turn by n is a turn back by n here: nothing tells them apart
    return bool(np.allclose(moved, forward, rtol=1e-6, atol=1e-9))


M_SINK_FORWARD = Mistake(
    "the kept keys turned forward instead of back",
    "the keys your cache keeps were turned forward by n: each of them moved n slots towards "
    "the start and must lose that rotation (rerotate_keys turns back, clockwise). Every step "
    "then adds 2 n theta_i of error, so the cache drifts further from apply_rope of its raw "
    "keys.",
    sink_forward,
    shows=sink_shows_forward_turn,
)


SINK_CACHE_UPDATE = FunctionCheck(
    name="sink_cache_update",
    kind="array",
    fixed=_sink_fixed,
    random=_sink_random,
    mistakes=(M_SINK_FORWARD,),
    check_mutation=True,
)


# --------------------------------------------------------------------------- sink_softmax


def _causal(T: int, S: int) -> np.ndarray:
    """True where query t may not see key j (keys after S - T + t): the hidden keys."""
    return np.arange(S)[None, :] > (S - T + np.arange(T))[:, None]


def _sink_softmax_fixed() -> list[Case]:
    rng = np.random.default_rng(21)
    block = np.where(_causal(3, 4), -np.inf, rng.normal(size=(2, 3, 4)))
    hidden_row = np.array([[[-np.inf, -np.inf, -np.inf], [0.5, -1.0, -np.inf]]])
    return [
        Case(([[[0.0, 0.0]]], [0.0]), {}, tr("scores [[0, 0]], sink 0")),
        Case(([[[1.0, 2.0, 3.0]]], [-np.inf]), {}, tr("a sink of -inf (the plain softmax)")),
        Case(([[[1000.0, 1000.0]]], [0.0]), {}, tr("scores [[1000, 1000]], sink 0 (no overflow)")),
        Case((block, [0.5, -1.0]), {}, tr("2 heads, 3 queries, 4 keys, causal, sinks [0.5, -1]")),
        Case(
            (hidden_row, [0.7]),
            {},
            tr("a query whose keys are all hidden (the sink takes everything)"),
            "edge",
        ),
        Case(
            (rng.normal(size=(2, 3, 2, 5)), [0.0, 1.0, -2.0]),
            {},
            tr("a batch of 2, 3 heads, lists of sinks"),
            "edge",
        ),
        Case((block, [0.5, -1.0, 0.0]), {}, tr("bad input: 3 sinks for 2 heads")),
        Case(([[[0.0, np.nan]]], [0.0]), {}, tr("bad input: nan in the scores")),
        Case(([[0.0, 1.0]], [0.0]), {}, tr("bad input: scores of 2 axes (no head axis)")),
    ]


def _sink_softmax_random(rng: np.random.Generator, n: int = 6) -> list[Case]:
    cases = []
    for _ in range(n):
        lead = tuple(int(v) for v in rng.integers(1, 3, size=int(rng.integers(0, 3))))
        H, T, S = int(rng.integers(2, 9)), int(rng.integers(1, 7)), int(rng.integers(1, 9))
        scale = float(rng.choice([1.0, 3.0, 30.0, 1000.0]))
        scores = rng.normal(scale=scale, size=(*lead, H, T, S))
        if rng.random() < 0.5:
            scores = np.where(_causal(T, S), -np.inf, scores)
        sinks = rng.normal(scale=float(rng.choice([1.0, 5.0, 50.0])), size=H)
        cases.append(
            Case(
                (maybe_list(rng, scores), maybe_list(rng, sinks)),
                {},
                f"scores of shape {scores.shape}, scale {fmt(scale)}",
            )
        )
    return cases


def _sink_parts(scores, sink_logits):
    ref.sink_softmax(scores, sink_logits)  # refuses the same input
    return np.asarray(scores, dtype=np.float64), np.asarray(sink_logits, dtype=np.float64)


def _softmax_keys(s: np.ndarray) -> np.ndarray:
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    return e / e.sum(axis=-1, keepdims=True)


def sink_as_key_renormalised(scores, sink_logits) -> np.ndarray:
    """The sink appended as a key, the softmax taken, the sink dropped and the row
    renormalised over the keys: the plain softmax, as if there were no sink."""
    s, sink = _sink_parts(scores, sink_logits)
    col = np.broadcast_to(sink[:, None, None], (*s.shape[:-1], 1))
    w = _softmax_keys(np.concatenate([s, col], axis=-1))[..., :-1]
    return w / w.sum(axis=-1, keepdims=True)


def sink_added_to_scores(scores, sink_logits) -> np.ndarray:
    """softmax(scores + sink_h): the sink shifts every score of the row, which the softmax
    cancels."""
    s, sink = _sink_parts(scores, sink_logits)
    return _softmax_keys(s + sink[:, None, None])


def sink_no_max(scores, sink_logits) -> np.ndarray:
    """exp(s) / (sum exp(s) + exp(sink)) without any maximum subtracted."""
    s, sink = _sink_parts(scores, sink_logits)
    e = np.exp(s)
    return e / (e.sum(axis=-1, keepdims=True) + np.exp(sink[:, None, None]))


def sink_row_max_only(scores, sink_logits) -> np.ndarray:
    """The maximum of the keys subtracted, not the sink's: a row whose keys are all hidden
    gives -inf - -inf = nan."""
    s, sink = _sink_parts(scores, sink_logits)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    return e / (e.sum(axis=-1, keepdims=True) + np.exp(sink[:, None, None] - m))


def _with_sinks(s: np.ndarray, sink: np.ndarray) -> np.ndarray:
    """The right formula with sink broadcast against s as given (any shape)."""
    m = np.maximum(s.max(axis=-1, keepdims=True), sink)
    e = np.exp(s - m)
    return e / (e.sum(axis=-1, keepdims=True) + np.exp(sink - m))


def sink_of_head_0(scores, sink_logits) -> np.ndarray:
    """One sink for all heads: head 0's."""
    s, sink = _sink_parts(scores, sink_logits)
    return _with_sinks(s, np.full((1, 1, 1), sink[0]))


def _row_sums(got, s):
    """Rows where a key is visible, with their sums (the weights not given to the sink)."""
    visible = np.isfinite(s).any(axis=-1)
    return visible, got.sum(axis=-1)


def sink_shows_no_effect(case: Case, got: np.ndarray, want) -> bool:
    """Every finite row with a visible key sums to 1 where the right weights leave a share to
    the sink: the sink has no effect (a row of hidden keys may come out as nan beside it)."""
    if want is None or got.shape != want.shape:
        return False
    s = np.asarray(case.args[0], dtype=np.float64)
    visible, sums = _row_sums(got, s)
    rows = visible & np.isfinite(got).all(axis=-1)
    if not np.any(rows & (want.sum(axis=-1) < 1 - 1e-6)):
        return False
    return bool(np.allclose(sums[rows], 1.0, atol=1e-9))


def sink_shows_overflow(case: Case, got: np.ndarray, want) -> bool:
    """nan or inf where the right weights are finite, and the right weights wherever the
    answer is finite: no maximum that includes the sink, and nothing else wrong."""
    if want is None or got.shape != want.shape or not np.all(np.isfinite(want)):
        return False
    finite = np.isfinite(got)
    if np.all(finite):
        return False
    return bool(np.allclose(got[finite], want[finite], rtol=1e-6, atol=1e-9))


def sink_shows_other_heads_sink(case: Case, got: np.ndarray, want) -> bool:
    """Each row is the softmax of its scores times a share left to a sink, but the sink that
    share implies is not its head's: the sinks broadcast on the wrong axis, or one for all."""
    if want is None or got.shape != want.shape or not np.all(np.isfinite(got)):
        return False
    s = np.asarray(case.args[0], dtype=np.float64)
    sink = np.asarray(case.args[1], dtype=np.float64)
    if sink.size < 2 or np.ptp(sink) < 1e-6:
        return False
    visible, r = _row_sums(got, s)
    ok = visible & (r > 1e-290) & (r < 1 - 1e-6)  # a share to the sink that can be read
    if not np.any(ok):
        return False
    with np.errstate(all="ignore"):
        rows = np.where(ok[..., None], s, 0.0)  # the rows read below; hidden keys stay -inf
        shape = np.where(ok[..., None], got / np.where(ok, r, 1.0)[..., None], 0.0)
        plain = _softmax_keys(rows)
        if not np.allclose(shape[ok], plain[ok], rtol=1e-6, atol=1e-9):
            return False  # not the softmax of the scores with a share taken off
        m = rows.max(axis=-1)
        lse = m + np.log(np.exp(rows - m[..., None]).sum(axis=-1))
        implied = lse + np.log1p(-r) - np.log(r)  # exp(sink) = (1 - r) / r * sum_k exp(s_k)
    own = np.broadcast_to(sink[:, None], implied.shape)
    return bool(np.any(np.abs(implied - own)[ok] > 1e-4 * (1 + np.abs(own[ok]))))


M_SINK_NO_EFFECT = Mistake(
    "the sink has no effect (the rows sum to 1)",
    "every row of your weights sums to 1, as a plain softmax over the keys does: the sink "
    "takes nothing. That happens when the sink is kept as a key and the row renormalised over "
    "the keys, or when sink_h is added to the scores (the softmax cancels a shift of the whole "
    "row). The sink belongs in the denominator only: w_j = exp(s_j) / (sum_k exp(s_k) + "
    "exp(sink_h)), so the row sums to less than 1 ([[0, 0]] with sink 0 gives [1/3, 1/3]).",
    sink_as_key_renormalised,
    variants=(sink_added_to_scores,),
    shows=sink_shows_no_effect,
)

M_SINK_OVERFLOW = Mistake(
    "no maximum subtracted that includes the sink (overflow or nan)",
    "your weights hold nan or inf where the right ones are finite: exp of a score of 1000 "
    "overflows, and a query whose keys are all hidden gives -inf - (-inf) = nan. Subtract "
    "m = max(max_k s_k, sink_h) from every score and from the sink before exp: the result is "
    "the same, and exp never sees a number above 0.",
    sink_no_max,
    variants=(sink_row_max_only,),
    shows=sink_shows_overflow,
)

M_SINK_WRONG_HEAD = Mistake(
    "one sink for all heads (the sinks broadcast on the wrong axis)",
    "the share your rows leave to the sink is not their own head's: one sink serves every "
    "head, or sink_logits was broadcast against the keys instead of the heads. sink_logits "
    "holds one logit per head, for the axis H of scores (..., H, T, S): reshape it to "
    "(H, 1, 1) so that head h's rows use sink_h.",
    sink_of_head_0,
    shows=sink_shows_other_heads_sink,
)


SINK_SOFTMAX = FunctionCheck(
    name="sink_softmax",
    kind="array",
    fixed=_sink_softmax_fixed,
    random=_sink_softmax_random,
    mistakes=(M_SINK_OVERFLOW, M_SINK_NO_EFFECT, M_SINK_WRONG_HEAD),
    check_mutation=True,
)


# --------------------------------------------------------------------------- mla_cache_values


def _mla_fixed() -> list[Case]:
    return [
        Case(
            (512, 64, 128, 128), {}, tr("DeepSeek-V3: rank 512, 64 rotated dims, 128 heads of 128")
        ),
        Case((1, 1, 1, 1), {}, tr("everything 1"), "edge"),
        Case((512, 64, 0, 128), {}, tr("bad input: n_heads=0")),
        Case((512.0, 64, 128, 128), {}, tr("bad input: kv_lora_rank=512.0 (not an int)")),
    ]


def _mla_random(rng: np.random.Generator, n: int = 4) -> list[Case]:
    cases = []
    for _ in range(n):
        r, k = int(rng.integers(1, 1025)), int(2 * rng.integers(1, 65))
        h, hd = int(rng.integers(1, 129)), int(2 * rng.integers(1, 129))
        cases.append(Case((r, k, h, hd), {}, f"{r}, {k}, {h} heads of {hd}"))
    return cases


MLA_CACHE_VALUES = FunctionCheck(
    name="mla_cache_values",
    kind="tuple",
    fixed=_mla_fixed,
    random=_mla_random,
)


ASSIGNMENT = "12_rope_today"
# The graded functions in notebook order.
CHECKS = (
    PARTIAL_THETAS,
    QWEN35_ROPE_ANGLES,
    PROPORTIONAL_THETAS,
    LONGROPE_THETAS,
    LAYER_ROPE_BASES,
    LLAMA4_ATTN_SCALES,
    REROTATE_KEYS,
    SINK_CACHE_UPDATE,
    SINK_SOFTMAX,
    MLA_CACHE_VALUES,
)

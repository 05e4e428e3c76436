"""How 06_rope (rotary position embedding) is graded.

For each graded function of the notebook, in notebook order: its fixed cases (the
numbers the notebook shows, the edges), its random cases, its known mistakes (the
message and, beside it, the wrong implementation that recognises it) and its declaration.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from helpers.i18n import tr
from helpers.teacher import reference as ref
from helpers.teacher.checks.base import (
    Case,
    FunctionCheck,
    Mistake,
    d_base_random,
    even_d,
    fmt,
    log_base,
    maybe_list,
    no_cases,
    position,
    single_call,
    spread_positions,
    words,
)
from helpers.teacher.checks.rotation import CLOCKWISE_TEXT
from helpers.teacher.checks.sincos import angle_rates_half_exponent, angle_rates_per_dimension
from helpers.teacher.reference.rope import THETA_BASE


def _demo_fixed() -> list[Case]:
    return [Case((), {}, "demo_vectors()")]


SEED_DELTAS = (1, 16, 256, 4096)


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


# --------------------------------------------------------------------------- DIM


DIM_CHECK = FunctionCheck(
    name="DIM",
    kind="constant",
    fixed=single_call,
    random=no_cases,
)


# --------------------------------------------------------------------------- THETA_BASE


THETA_BASE_CHECK = FunctionCheck(
    name="THETA_BASE",
    kind="constant",
    fixed=single_call,
    random=no_cases,
)


# --------------------------------------------------------------------------- demo_vectors


DEMO_VECTORS = FunctionCheck(
    name="demo_vectors",
    kind="tuple",
    fixed=_demo_fixed,
    random=no_cases,
)


# --------------------------------------------------------------------------- dot


def _dot_fixed() -> list[Case]:
    q, k = ref.demo_vectors()
    return [
        Case((q, k), {}, tr("the demo vectors q and k")),
        Case(([1.0, 2.0], [3.0, -4.0]), {}, tr("[1, 2] . [3, -4] as lists")),
        Case((np.stack([q, k]), np.stack([k, k])), {}, tr("a batch of 2 vectors of 64 numbers")),
        Case(([1.0, 2.0], [1.0, 2.0, 3.0]), {}, tr("bad input: vectors of 2 and 3 numbers")),
    ]


def _dot_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for t in range(5):
        d = even_d(rng)
        shape = (d,) if t % 2 == 0 else (int(rng.integers(1, 5)), d)
        a, b = rng.normal(size=shape), rng.normal(size=shape)
        label = tr("a and b {shape}", shape=words(a))
        cases.append(Case((maybe_list(rng, a), maybe_list(rng, b)), {}, label))
    return cases


DOT = FunctionCheck(
    name="dot",
    kind="array",
    fixed=_dot_fixed,
    random=_dot_random,
    check_mutation=True,
)


# --------------------------------------------------------------------------- thetas


def _thetas_fixed() -> list[Case]:
    return [
        Case((64,), {}, "d=64"),
        Case((2,), {}, "d=2", part="edge"),
        Case((8,), {"base": 100.0}, "d=8, base=100"),
        Case((7,), {}, tr("bad input: an odd d=7")),
    ]


THETAS = FunctionCheck(
    name="thetas",
    kind="array",
    fixed=_thetas_fixed,
    random=d_base_random,
)


# --------------------------------------------------------------------------- apply_rope


def _rope_fixed() -> list[Case]:
    q, _ = ref.demo_vectors()
    batch = np.stack([q, q[::-1], np.cos(np.arange(64.0))])
    return [
        Case((q, 0), {}, tr("d=64, pos=0 (the demo q)"), part="edge"),
        Case((q, 4096), {}, tr("d=64, pos=4096 (the demo q)")),
        Case((q.tolist(), 7), {"base": 500.0}, tr("d=64, pos=7, base=500, the demo q as a list")),
        Case(([0.6, -0.8], 3), {}, tr("d=2, pos=3, a list of 2 numbers"), part="edge"),
        Case(
            (batch, np.array([0, 5, 4096])),
            {},
            tr("d=64, a batch of 3 vectors, positions [0, 5, 4096]"),
        ),
        Case((batch[:2].tolist(), 11), {}, tr("d=64, a batch of 2 vectors as a list, one pos=11")),
        Case(([1.0, 2.0, 3.0], 1), {}, tr("bad input: an odd last dimension (3 numbers)")),
        Case((q, -1), {}, tr("bad input: pos=-1")),
    ]


def _rope_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for t in range(7):
        d, base = even_d(rng), log_base(rng)
        if t % 3 == 2:
            n = int(rng.integers(1, 5))
            vec = rng.normal(size=(n, d))
            pos = spread_positions(rng, n)
            label = tr(
                "d={d}, a batch of {n} vectors, positions {positions}, base={base}",
                d=d,
                n=n,
                positions=pos.tolist(),
                base=fmt(base),
            )
        else:
            vec, pos = rng.normal(size=d), position(rng)
            label = f"d={d}, pos={pos}, base={fmt(base)}"
        as_list = rng.random() < 0.5
        args = (vec.tolist() if as_list else vec, pos.tolist() if as_list and t % 3 == 2 else pos)
        if as_list:
            label = tr("{label} as lists", label=label)
        cases.append(Case(args, {"base": base}, label))
    return cases


def apply_rope_clockwise(vec, pos, base=THETA_BASE) -> np.ndarray:
    """Every pair rotated clockwise (by -pos * theta_i)."""
    d = np.shape(vec)[-1]
    return _rope_with_rates(vec, pos, -ref.thetas(d, base))


M_ROPE_CW = Mistake("clockwise rotation", CLOCKWISE_TEXT, apply_rope_clockwise)


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


M_ROPE_PER_DIM = Mistake(
    "an angle per dimension instead of per pair",
    "your angles were counted per dimension (an index or exponent of dimension j where the "
    "pair number i belongs). There is one rate per pair, theta_i = base ** (-2i/d) for "
    "i = 0 .. d/2 - 1, and both numbers of pair i are rotated by the same pos * theta_i.",
    apply_rope_per_dimension,
    variants=(apply_rope_half_exponent, apply_rope_angle_per_element),
)


def apply_rope_pair0_angle(vec, pos, base=THETA_BASE) -> np.ndarray:
    """Pair 0's angle (pos * 1.0) used for every pair."""
    d = np.shape(vec)[-1]
    return _rope_with_rates(vec, pos, np.ones(d // 2))


M_ROPE_PAIR0 = Mistake(
    "pair 0's angle for every pair",
    "every pair of your vector is rotated by the same angle pos * theta_0 = pos. Each pair has "
    "its own speed: pair i is rotated by pos * theta_i with theta_i = base ** (-2i/d).",
    apply_rope_pair0_angle,
)


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


M_ROPE_MUTATION = Mistake(
    "input changed in place",
    "your apply_rope wrote the rotated values into the vector it was given, so the caller's "
    "vector changed. Return a new array (out = np.empty_like(x) with x = np.array(vec, "
    "dtype=float)) and leave vec as it was.",
    apply_rope_in_place,
    detect="mutation",
)


def apply_rope_half_split(vec, pos, base=THETA_BASE) -> np.ndarray:
    """Pairs (i, i + d/2) of the half-split layout instead of the interleaved (2i, 2i+1)."""
    return ref.rope_half(vec, pos, base)


M_ROPE_HALF = Mistake(
    "half-split pairs instead of interleaved",
    "your pairs are (i, i + d/2), the half-split layout of GPT-NeoX. This course pairs "
    "neighbours: pair i is (vec[2i], vec[2i+1]).",
    apply_rope_half_split,
)


APPLY_ROPE = FunctionCheck(
    name="apply_rope",
    kind="array",
    fixed=_rope_fixed,
    random=_rope_random,
    mistakes=(M_ROPE_CW, M_ROPE_PER_DIM, M_ROPE_PAIR0, M_ROPE_MUTATION, M_ROPE_HALF),
    check_mutation=True,
)


# --------------------------------------------------------------------------- rope_score


def _rope_score_fixed() -> list[Case]:
    q, k = ref.demo_vectors()
    return [
        Case((q, k, 5, 3), {}, tr("the demo q at m=5, k at n=3")),
        Case((q.tolist(), k.tolist(), 4096, 0), {}, tr("the demo vectors as lists, m=4096, n=0")),
        Case(
            ([1.0, 0.0], [0.0, 1.0], 0, 2), {"base": 100.0}, "d=2, m=0, n=2, base=100", part="edge"
        ),
    ]


def _rope_score_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(6):
        d, base, m, n = even_d(rng), log_base(rng), position(rng), position(rng)
        q, k = rng.normal(size=d), rng.normal(size=d)
        cases.append(
            Case(
                (maybe_list(rng, q), k, m, n),
                {"base": base},
                f"d={d}, m={m}, n={n}, base={fmt(base)}",
            )
        )
    return cases


def rope_score_query_only(q, k, m, n, base=THETA_BASE):
    """Only the query rotated: dot(apply_rope(q, m), k)."""
    return ref.dot(ref.apply_rope(q, m, base), k)


M_SCORE_QUERY_ONLY = Mistake(
    "only the query rotated",
    "your score rotates the query but not the key. Rotate both, each by its own position: "
    "dot(apply_rope(q, m), apply_rope(k, n)).",
    rope_score_query_only,
)


ROPE_SCORE = FunctionCheck(
    name="rope_score",
    kind="float",
    fixed=_rope_score_fixed,
    random=_rope_score_random,
    mistakes=(M_SCORE_QUERY_ONLY,),
    check_mutation=True,
)


# --------------------------------------------------------------------------- turns


def _turns_fixed() -> list[Case]:
    return [Case((64, delta), {}, f"d=64, delta={delta}") for delta in SEED_DELTAS] + [
        Case((2, 0), {"base": 100.0}, "d=2, delta=0, base=100", part="edge"),
        Case((64, -1), {}, tr("bad input: delta=-1")),
    ]


def _turns_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        d, delta, base = even_d(rng), position(rng), log_base(rng)
        cases.append(Case((d, delta), {"base": base}, f"d={d}, delta={delta}, base={fmt(base)}"))
    return cases


def turns_without_2pi(d, delta, base=THETA_BASE) -> np.ndarray:
    """delta * theta_i, the angle in radians, not divided by 2 pi."""
    return float(delta) * ref.thetas(d, base)


M_TURNS_NO_2PI = Mistake(
    "not divided by 2*pi",
    "your values are the angles delta * theta_i in radians. One turn is 2*pi radians: "
    "turns = delta * theta_i / (2*pi).",
    turns_without_2pi,
)


TURNS = FunctionCheck(
    name="turns",
    kind="array",
    fixed=_turns_fixed,
    random=_turns_random,
    mistakes=(M_TURNS_NO_2PI,),
)


# --------------------------------------------------------------------------- slow_pairs


SLOW_PAIRS = FunctionCheck(
    name="slow_pairs",
    kind="int",
    fixed=_turns_fixed,
    random=_turns_random,
)


# --------------------------------------------------------------------------- rope_half


def _rope_half_fixed() -> list[Case]:
    q, _ = ref.demo_vectors()
    return [
        Case((q, 4096), {}, tr("d=64, pos=4096 (the demo q)")),
        Case((q.tolist(), 0), {}, tr("d=64, pos=0, as a list"), part="edge"),
        Case(
            (np.stack([q, q[::-1]]), np.array([1, 100])),
            {"base": 500.0},
            tr("a batch of 2, positions [1, 100], base=500"),
        ),
    ]


def _half_to_interleaved(x: np.ndarray) -> np.ndarray:
    """The inverse of ``interleaved_to_half``: (x[i], x[i + d/2]) back to (2i, 2i + 1)."""
    d = x.shape[-1]
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = x[..., : d // 2], x[..., d // 2 :]
    return out


def _in_half_layout(wrong):
    """An ``apply_rope`` mistake written in the half-split layout: pairs (i, i + d/2)."""

    def rope(vec, pos, base=THETA_BASE) -> np.ndarray:
        x = np.asarray(vec, dtype=np.float64)
        return ref.interleaved_to_half(wrong(_half_to_interleaved(x), pos, base))

    rope.__name__ = f"rope_half_{wrong.__name__.removeprefix('apply_rope_')}"
    return rope


def rope_half_adjacent(vec, pos, base=THETA_BASE) -> np.ndarray:
    """Neighbours (2i, 2i + 1) paired, as apply_rope does, where rope_half pairs (i, i + d/2)."""
    return ref.apply_rope(vec, pos, base)


M_ROPE_HALF_ADJACENT = Mistake(
    "adjacent pairs instead of half-split",
    "your pairs are neighbours (vec[2i], vec[2i+1]), the interleaved layout of apply_rope. "
    "rope_half pairs the halves: pair i is (vec[i], vec[i + d/2]), rotated by pos * theta_i.",
    rope_half_adjacent,
)


def rope_half_in_place(vec, pos, base=THETA_BASE):
    """The right numbers, but written into the argument itself (which then changes)."""
    out = ref.rope_half(vec, pos, base)
    if isinstance(vec, np.ndarray):
        vec[...] = out
        return vec
    flat = out.reshape(len(vec), -1).tolist() if np.ndim(vec) > 1 else out.tolist()
    for idx, value in enumerate(flat):
        vec[idx] = [float(v) for v in value] if isinstance(vec[idx], list) else float(value)
    return vec


M_ROPE_HALF_MUTATION = Mistake(
    "input changed in place",
    "your rope_half wrote the rotated values into the vector it was given, so the caller's "
    "vector changed. Return a new array (out = np.empty_like(x) with x = np.array(vec, "
    "dtype=float)) and leave vec as it was.",
    rope_half_in_place,
    detect="mutation",
)


def _mirrored(mistake: Mistake) -> Mistake:
    """``mistake`` of apply_rope, its wrong implementations in the half-split layout."""
    return dataclasses.replace(
        mistake,
        impl=_in_half_layout(mistake.impl),
        variants=tuple(_in_half_layout(v) for v in mistake.variants),
    )


ROPE_HALF = FunctionCheck(
    name="rope_half",
    kind="array",
    fixed=_rope_half_fixed,
    random=_rope_random,
    mistakes=(
        _mirrored(M_ROPE_CW),
        _mirrored(M_ROPE_PER_DIM),
        _mirrored(M_ROPE_PAIR0),
        M_ROPE_HALF_MUTATION,
        M_ROPE_HALF_ADJACENT,
    ),
    check_mutation=True,
)


# --------------------------------------------------------------------------- interleaved_to_half


def _interleave_fixed() -> list[Case]:
    return [
        Case(([0.0, 1.0, 2.0, 3.0, 4.0, 5.0],), {}, tr("[0, 1, 2, 3, 4, 5] as a list")),
        Case((np.arange(8.0).reshape(2, 4),), {}, tr("a batch of 2 vectors of 4 numbers")),
        Case((np.array([1.0, 2.0]),), {}, "d=2", part="edge"),
        Case(([1.0, 2.0, 3.0],), {}, tr("bad input: an odd last dimension (3 numbers)")),
    ]


def _interleave_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for t in range(4):
        d = even_d(rng)
        shape = (d,) if t % 2 == 0 else (int(rng.integers(1, 4)), d)
        vec = rng.normal(size=shape)
        cases.append(Case((maybe_list(rng, vec),), {}, tr("vec {shape}", shape=words(vec))))
    return cases


INTERLEAVED_TO_HALF = FunctionCheck(
    name="interleaved_to_half",
    kind="array",
    fixed=_interleave_fixed,
    random=_interleave_random,
    check_mutation=True,
)

ASSIGNMENT = "06_rope"
# The graded functions in notebook order.
CHECKS = (
    DIM_CHECK,
    THETA_BASE_CHECK,
    DEMO_VECTORS,
    DOT,
    THETAS,
    APPLY_ROPE,
    ROPE_SCORE,
    TURNS,
    SLOW_PAIRS,
    ROPE_HALF,
    INTERLEAVED_TO_HALF,
)

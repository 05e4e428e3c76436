"""How 11_rope_nd (RoPE beyond one dimension) is graded.

For each graded function of the notebook, in notebook order: its fixed cases (the
numbers the notebook shows, the edges, bad input), its random cases, its known mistakes
(the message and, beside it, the wrong implementation that recognises it by the output
it gives) and its declaration. A 2D position is (row, col) = (y, x). Random cases take
the spec's ranges: d every multiple of 4 up to 256, bases 1e2 .. 1e6 (RoPE-Mixed 2 .. 1e4),
grids up to 32 x 32, positions up to 4096, layouts of up to 6 segments with merge sizes 1
to 3.
"""

from __future__ import annotations

import math

import numpy as np

from helpers.i18n import tr
from helpers.teacher import reference as ref
from helpers.teacher.checks.base import Case, FunctionCheck, Mistake, fmt, log_base, maybe_list


def d4(rng: np.random.Generator, hi: int = 256) -> int:
    """A multiple of 4 in 4 .. hi."""
    return int(4 * rng.integers(1, hi // 4 + 1))


def mixed_base(rng: np.random.Generator) -> float:
    """A base of RoPE-Mixed in 2 .. 1e4, log-uniform."""
    return float(10.0 ** rng.uniform(math.log10(2.0), 4.0))


def some_positions(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """(row, col) positions of that shape + (2,): on a grid up to 32 x 32, or up to 4096."""
    if rng.random() < 0.5:
        h, w = int(rng.integers(1, 33)), int(rng.integers(1, 33))
        return np.stack(
            [rng.integers(0, h, size=shape), rng.integers(0, w, size=shape)], axis=-1
        ).astype(np.int64)
    return rng.integers(0, 4097, size=(*shape, 2))


def some_freqs(rng: np.random.Generator, d: int) -> tuple[np.ndarray, np.ndarray, str]:
    """Axial (Pixtral) or mixed (RoPE-Mixed, a random phi) frequencies, with a label."""
    if rng.random() < 0.5:
        base = log_base(rng)
        return (*ref.axial_freqs(d, base), f"axial_freqs({d}, {fmt(base)})")
    base, phi = mixed_base(rng), float(rng.uniform(0.0, 2 * math.pi))
    return (*ref.mixed_freqs(d, base, phi), f"mixed_freqs({d}, {fmt(base)}, phi={phi:.3f})")


# --------------------------------------------------------------------------- axial_freqs


def _axial_fixed() -> list[Case]:
    return [
        Case((8, 1e4), {}, "axial_freqs(8, 1e4)"),
        Case((64, 1e4), {}, tr("d=64, base=1e4 (Pixtral-12B's encoder)")),
        Case((4, 100.0), {}, "d=4, base=100", "edge"),
        Case((6, 1e4), {}, tr("bad input: d=6 (not a multiple of 4)")),
        Case((8, 1.0), {}, tr("bad input: base=1")),
    ]


def _axial_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        d, base = d4(rng), log_base(rng)
        cases.append(Case((d,), {"base": base}, f"d={d}, base={fmt(base)}"))
    return cases


def axial_freqs_halves(d, base=10000.0) -> tuple[np.ndarray, np.ndarray]:
    """The height block takes the first half of the rates, the width block the second."""
    ref.axial_freqs(d, base)  # refuses what the reference refuses
    th = ref.thetas(d, base)
    q = d // 4
    fx, fy = np.zeros(d // 2), np.zeros(d // 2)
    fy[:q], fx[q:] = th[:q], th[q:]
    return fx, fy


M_AXIAL_HALVES = Mistake(
    "height gets the first half of the rates, width the second",
    "your height block turns with the fast half of the rates and your width block with the "
    "slow half, so the columns are told apart only by slow pairs. Pixtral gives each axis "
    "every other rate, fast to slow: the height block theta[0::2], the width block theta[1::2].",
    axial_freqs_halves,
)

AXIAL_FREQS = FunctionCheck(
    name="axial_freqs",
    kind="tuple",
    fixed=_axial_fixed,
    random=_axial_random,
    mistakes=(M_AXIAL_HALVES,),
)


# --------------------------------------------------------------------------- mixed_freqs


def _mixed_fixed() -> list[Case]:
    return [
        Case((8, 10.0), {}, "mixed_freqs(8, 10.0)"),
        Case((8, 10.0, math.pi / 4), {}, "mixed_freqs(8, 10.0, pi/4)"),
        Case((64, 10.0, math.pi / 4), {}, "d=64, base=10, phi=pi/4"),
        Case((4, 100.0, -2.5), {}, "d=4, base=100, phi=-2.5", "edge"),
        Case((10, 10.0, 0.0), {}, tr("bad input: d=10 (not a multiple of 4)")),
        Case((8, 10.0, math.nan), {}, tr("bad input: phi=nan")),
    ]


def _mixed_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        d, base, phi = d4(rng), mixed_base(rng), float(rng.uniform(0.0, 2 * math.pi))
        cases.append(Case((d, base, phi), {}, f"d={d}, base={fmt(base)}, phi={phi:.4f}"))
    return cases


MIXED_FREQS = FunctionCheck(
    name="mixed_freqs",
    kind="tuple",
    fixed=_mixed_fixed,
    random=_mixed_random,
)


# --------------------------------------------------------------------------- patch_positions


def _patches_fixed() -> list[Case]:
    return [
        Case((2, 3), {}, "patch_positions(2, 3)"),
        Case((4, 4), {}, "patch_positions(4, 4)"),
        Case((1, 5), {}, tr("one row of 5 patches"), "edge"),
        Case((1, 1), {}, tr("one patch"), "edge"),
        Case((0, 3), {}, tr("bad input: grid_h=0")),
        Case((2, 2.5), {}, tr("bad input: grid_w=2.5")),
    ]


def _patches_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(4):
        h, w = int(rng.integers(1, 33)), int(rng.integers(1, 33))
        cases.append(Case((h, w), {}, f"grid_h={h}, grid_w={w}"))
    return cases


def patch_positions_column_major(grid_h, grid_w) -> np.ndarray:
    """Patch i is (i % grid_h, i // grid_h): the grid read column by column."""
    ref.patch_positions(grid_h, grid_w)  # refuses what the reference refuses
    i = np.arange(grid_h * grid_w)
    return np.stack([i % grid_h, i // grid_h], axis=-1).astype(np.int64)


M_PATCHES_COLUMN_MAJOR = Mistake(
    "patches numbered column by column",
    "your patches go down the first column before the second: patch 1 of a 2 x 3 grid is "
    "(1, 0). Patches are numbered row by row, like the pixels of an image: patch "
    "r * grid_w + c is (r, c), so patch 1 is (0, 1) (meshgrid with indexing='ij').",
    patch_positions_column_major,
)

PATCH_POSITIONS = FunctionCheck(
    name="patch_positions",
    kind="array",
    fixed=_patches_fixed,
    random=_patches_random,
    mistakes=(M_PATCHES_COLUMN_MAJOR,),
)


# --------------------------------------------------------------------------- rope_2d_angles


def _angles_fixed() -> list[Case]:
    fx, fy = ref.axial_freqs(8, 1e4)
    mx, my = ref.mixed_freqs(8, 10.0, math.pi / 4)
    return [
        Case(
            (ref.patch_positions(2, 3), fx, fy),
            {},
            "rope_2d_angles(patch_positions(2, 3), *axial_freqs(8, 1e4))",
        ),
        Case(
            ([[0, 1], [3, 0]], mx.tolist(), my.tolist()),
            {},
            tr("mixed_freqs(8, 10.0, pi/4), lists"),
        ),
        Case(([5, 7], fx, fy), {}, tr("one position (5, 7)"), "edge"),
        Case(
            (np.zeros((2, 3, 2), dtype=np.int64), fx, fy), {}, tr("a 2 x 3 batch at (0, 0)"), "edge"
        ),
        Case(([[1, 2, 3]], fx, fy), {}, tr("bad input: positions with 3 coordinates")),
        Case(([[1, -1]], fx, fy), {}, tr("bad input: a negative position")),
    ]


def _angles_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for t in range(5):
        d = d4(rng)
        fx, fy, label = some_freqs(rng, d)
        shape = (int(rng.integers(1, 9)),) if t % 2 == 0 else (2, int(rng.integers(1, 5)))
        pos = some_positions(rng, shape)
        cases.append(
            Case(
                (maybe_list(rng, pos), fx, fy),
                {},
                tr(
                    "{n} positions of shape {shape}, {freqs}",
                    n=pos[..., 0].size,
                    shape=pos.shape,
                    freqs=label,
                ),
            )
        )
    return cases


def rope_2d_angles_swapped(positions, freqs_x, freqs_y) -> np.ndarray:
    """freqs_x times the row and freqs_y times the column: (row, col) read as (x, y)."""
    ref.rope_2d_angles(positions, freqs_x, freqs_y)  # refuses what the reference refuses
    pos = np.asarray(positions, dtype=np.float64)
    fx, fy = np.asarray(freqs_x, dtype=np.float64), np.asarray(freqs_y, dtype=np.float64)
    return pos[..., 0:1] * fx + pos[..., 1:2] * fy


M_ANGLES_SWAPPED = Mistake(
    "row and column swapped",
    "your angles use the row where the column belongs: freqs_x times the row and freqs_y "
    "times the column, so patch (0, 1) turns the height block. A position is (row, col) = "
    "(y, x): angle = freqs_x * col + freqs_y * row, with col = positions[..., 1].",
    rope_2d_angles_swapped,
)

ROPE_2D_ANGLES = FunctionCheck(
    name="rope_2d_angles",
    kind="array",
    fixed=_angles_fixed,
    random=_angles_random,
    mistakes=(M_ANGLES_SWAPPED,),
    check_mutation=True,
)


# --------------------------------------------------------------------------- apply_rope_2d


def _apply_fixed() -> list[Case]:
    fx, fy = ref.axial_freqs(8, 1e4)
    q, _ = ref.demo_vectors()
    mx, my = ref.mixed_freqs(64, 10.0, math.pi / 4)
    ones = np.tile([1.0, 0.0], 4)
    return [
        Case(([ones.tolist()], [[1, 2]], fx, fy), {}, tr("[1, 0, 1, 0, ...] at (1, 2), axial d=8")),
        Case((q, [3, 2], mx, my), {}, tr("the demo q at (3, 2), mixed_freqs(64, 10, pi/4)")),
        Case(
            (np.stack([ones, ones]), [[0, 0], [0, 0]], fx, fy), {}, tr("a batch at (0, 0)"), "edge"
        ),
        Case((q[:8], [4096, 4096], fx, fy), {}, tr("position (4096, 4096)"), "edge"),
        Case((np.ones(6), [1, 2], fx, fy), {}, tr("bad input: 6 numbers, 4 pairs of frequencies")),
        Case((np.ones((2, 8)), [1, 2], fx, fy), {}, tr("bad input: 2 vectors, 1 position")),
    ]


def _apply_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for t in range(5):
        d = d4(rng)
        fx, fy, label = some_freqs(rng, d)
        shape = () if t == 0 else (int(rng.integers(1, 6)),)
        vec = rng.normal(size=(*shape, d))
        pos = some_positions(rng, shape)
        cases.append(
            Case(
                (maybe_list(rng, vec), maybe_list(rng, pos), fx, fy),
                {},
                tr("vec {shape}, {freqs}", shape=vec.shape, freqs=label),
            )
        )
    return cases


APPLY_ROPE_2D = FunctionCheck(
    name="apply_rope_2d",
    kind="array",
    fixed=_apply_fixed,
    random=_apply_random,
    check_mutation=True,
)


# --------------------------------------------------------------------------- interaction_term


def _interaction_fixed() -> list[Case]:
    q, k = ref.demo_vectors()
    return [
        Case(
            (q, k, 3, 2, *ref.axial_freqs(64, 100.0)),
            {},
            tr("demo vectors, dx=3, dy=2, axial_freqs(64, 100)"),
        ),
        Case(
            (q, k, 3, 2, *ref.mixed_freqs(64, 10.0, math.pi / 4)),
            {},
            tr("demo vectors, dx=3, dy=2, mixed_freqs(64, 10, pi/4)"),
        ),
        Case(
            (q.tolist(), k.tolist(), -5, 4.0, *ref.mixed_freqs(64, 10.0, 1.0)),
            {},
            tr("lists, dx=-5, dy=4.0, phi=1"),
            "edge",
        ),
        Case((q, k, 0, 7, *ref.mixed_freqs(64, 10.0, 1.0)), {}, tr("dx=0: no interaction"), "edge"),
        Case((q, k, 4.5, 2, *ref.axial_freqs(64, 100.0)), {}, tr("bad input: dx=4.5")),
        Case(
            (q, k[:32], 3, 2, *ref.axial_freqs(64, 100.0)),
            {},
            tr("bad input: q and k of 64 and 32 numbers"),
        ),
    ]


def _interaction_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        d = d4(rng)
        fx, fy, label = some_freqs(rng, d)
        q, k = rng.normal(size=d), rng.normal(size=d)
        dx, dy = int(rng.integers(-64, 65)), int(rng.integers(-64, 65))
        cases.append(
            Case(
                (maybe_list(rng, q), maybe_list(rng, k), dx, dy, fx, fy),
                {},
                tr("random q and k, dx={dx}, dy={dy}, {freqs}", dx=dx, dy=dy, freqs=label),
            )
        )
    return cases


INTERACTION_TERM = FunctionCheck(
    name="interaction_term",
    kind="array",
    fixed=_interaction_fixed,
    random=_interaction_random,
    check_mutation=True,
)


# --------------------------------------------------------------------------- mrope_position_ids

SPEC_LAYOUT = [("text", 2), ("image", (4, 6)), ("text", 2)]


def _ids_fixed() -> list[Case]:
    return [
        Case((SPEC_LAYOUT,), {"spatial_merge_size": 2}, tr("text 2, image 4 x 6, text 2 (m = 2)")),
        Case(([("text", 5)],), {}, tr("text only"), "edge"),
        Case(
            ([("image", (2, 6)), ("text", 1)],),
            {"spatial_merge_size": 1},
            tr("an image first, m = 1"),
        ),
        Case(
            ([("text", 1), ("image", (6, 9)), ("text", 2), ("image", (3, 9)), ("text", 1)],),
            {"spatial_merge_size": 3},
            tr("two images, m = 3"),
        ),
        Case(([],), {}, tr("bad input: no segments")),
        Case(
            ([("text", 2), ("image", (3, 4))],),
            {"spatial_merge_size": 2},
            tr("bad input: grid 3 x 4 with m = 2"),
        ),
    ]


def _layout(rng: np.random.Generator, m: int) -> list:
    segments: list = [("text", int(rng.integers(1, 8)))]
    for _ in range(int(rng.integers(0, 3))):
        segments.append(("image", (m * int(rng.integers(1, 9)), m * int(rng.integers(1, 9)))))
        segments.append(("text", int(rng.integers(1, 8))))
    return segments


def _ids_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        m = int(rng.integers(1, 4))
        segments = _layout(rng, m)
        cases.append(
            Case(
                (segments,),
                {"spatial_merge_size": m},
                tr("{n} segments, m = {m}", n=len(segments), m=m) + f": {segments}",
            )
        )
    return cases


def mrope_position_ids_token_count(segments, spatial_merge_size=2) -> np.ndarray:
    """After an image the start moves on by its token count h * w instead of max(h, w)."""
    ref.mrope_position_ids(segments, spatial_merge_size)  # refuses what the reference refuses
    m = spatial_merge_size
    parts, s = [], 0
    for kind, value in segments:
        if kind == "text":
            parts.append(np.tile(s + np.arange(value), (3, 1)))
            s += value
        else:
            h, w = value[0] // m, value[1] // m
            r, c = np.divmod(np.arange(h * w), w)
            parts.append(np.stack([np.full(h * w, s), s + r, s + c]))
            s += h * w
    return np.concatenate(parts, axis=1).astype(np.int64)


M_IDS_TOKEN_COUNT = Mistake(
    "start moved on by h * w after an image",
    "after an image your next token starts h * w positions later, as if the image were a "
    "line of text (the example ends [8, 9] instead of [5, 6]). An image of h x w tokens "
    "spans only max(h, w) positions on each axis: the text after it continues at "
    "s + max(h, w).",
    mrope_position_ids_token_count,
)

MROPE_POSITION_IDS = FunctionCheck(
    name="mrope_position_ids",
    kind="array",
    fixed=_ids_fixed,
    random=_ids_random,
    mistakes=(M_IDS_TOKEN_COUNT,),
    check_mutation=True,
)


# --------------------------------------------------------------------------- mrope_angles


def _angles_m_fixed() -> list[Case]:
    ids = ref.mrope_position_ids(SPEC_LAYOUT)
    p = np.arange(6)
    return [
        Case((ids, 8, 1e4, [2, 1, 1]), {}, tr("the ids of the example, d=8, base=1e4, [2, 1, 1]")),
        Case(
            (np.stack([p, p, p]), 128, 1e6, [16, 24, 24]),
            {},
            tr("text only, Qwen2-VL's d=128, base=1e6, [16, 24, 24]"),
        ),
        Case(
            (np.stack([p, p, p]).tolist(), 8, 1e4, [2, 1, 1]),
            {},
            tr("text only, d=8, [2, 1, 1], lists"),
        ),
        Case((ids, 8, 1e4, [0, 4, 0]), {}, tr("one section of 4 pairs: [0, 4, 0]"), "edge"),
        Case((ids, 8, 1e4, [2, 1, 2]), {}, tr("bad input: sections adding up to 5, not 4")),
        Case((ids[:2], 8, 1e4, [2, 1, 1]), {}, tr("bad input: ids of 2 rows")),
    ]


def _angles_m_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        d = int(2 * rng.integers(2, 129))
        a = int(rng.integers(0, d // 2 + 1))
        b = int(rng.integers(0, d // 2 - a + 1))
        section = [a, b, d // 2 - a - b]
        ids = rng.integers(0, 4097, size=(3, int(rng.integers(1, 9))))
        base = log_base(rng)
        cases.append(
            Case(
                (maybe_list(rng, ids), d, base, section),
                {},
                f"{ids.shape[1]} tokens, d={d}, base={fmt(base)}, mrope_section={section}",
            )
        )
    return cases


def mrope_angles_restarted(position_ids, d, base, mrope_section) -> np.ndarray:
    """Each section's rates start again: thetas(2 * size, base) in every section."""
    ref.mrope_angles(position_ids, d, base, mrope_section)  # refuses what the reference refuses
    ids = np.asarray(position_ids, dtype=np.float64)
    blocks = [
        ids[s][:, None] * ref.thetas(2 * size, base)
        for s, size in enumerate(mrope_section)
        if size > 0
    ]
    return np.concatenate(blocks, axis=1)


def mrope_angles_restarted_at_one(position_ids, d, base, mrope_section) -> np.ndarray:
    """Each section's rates start again at 1.0 with the full spectrum's steps: thetas(d)[:size]."""
    ref.mrope_angles(position_ids, d, base, mrope_section)  # refuses what the reference refuses
    ids = np.asarray(position_ids, dtype=np.float64)
    th = ref.thetas(d, base)
    blocks = [ids[s][:, None] * th[:size] for s, size in enumerate(mrope_section) if size > 0]
    return np.concatenate(blocks, axis=1)


def restarted_rates_show(case: Case, got, want) -> bool:
    """The property of the mistake, however the rates were restarted: the first pair of every
    section after the first turns at rate 1.0 (angle = its id), where one spectrum has
    thetas(d, base)[start] < 1; and at least one such id is not 0, so that it shows."""
    if want is None:
        return False
    ids, _, _, section = case.args
    ids, got = np.asarray(ids, dtype=np.float64), np.asarray(got, dtype=np.float64)
    if got.shape != np.shape(want):
        return False
    starts = np.cumsum([0, *section[:-1]])
    later = [(s, int(j)) for s, (j, n) in enumerate(zip(starts, section)) if n > 0 and j > 0]
    if not later or not any(np.any(ids[s] != 0) for s, _ in later):
        return False
    return all(np.allclose(got[:, j], ids[s], rtol=1e-6, atol=1e-9) for s, j in later)


M_ANGLES_RESTARTED = Mistake(
    "the rates start again in each section",
    "your sections each start again at the fastest rate 1.0, so text, whose three ids are "
    "equal, no longer turns as 1D RoPE (d = 8, [2, 1, 1], position 1: [1, 0.01, 1, 1] "
    "instead of [1, 0.1, 0.01, 0.001]). The sections slice one spectrum: pair j turns at "
    "thetas(d, base)[j], whichever id it takes.",
    mrope_angles_restarted,
    variants=(mrope_angles_restarted_at_one,),
    shows=restarted_rates_show,
)

MROPE_ANGLES = FunctionCheck(
    name="mrope_angles",
    kind="array",
    fixed=_angles_m_fixed,
    random=_angles_m_random,
    mistakes=(M_ANGLES_RESTARTED,),
    check_mutation=True,
)


# --------------------------------------------------------------------------- mrope_interleaved_angles


def _interleaved_fixed() -> list[Case]:
    ids = ref.mrope_position_ids(SPEC_LAYOUT)
    image = ref.mrope_position_ids([("text", 1), ("image", (4, 4)), ("text", 1)])
    p = np.arange(6)
    return [
        Case((ids, 8, 1e4, [2, 1, 1]), {}, tr("the ids of the example, d=8, base=1e4, [2, 1, 1]")),
        Case(
            (image, 128, 1e6, [24, 20, 20]),
            {},
            tr("an image of 2 x 2 tokens, Qwen3-VL's d=128, base=1e6, [24, 20, 20]"),
        ),
        Case(
            (np.stack([p, p, p]).tolist(), 8, 1e4, [2, 1, 1]),
            {},
            tr("text only, d=8, [2, 1, 1], lists"),
        ),
        Case((ids, 12, 1e4, [2, 2, 2]), {}, tr("sections at the limit: [2, 2, 2], d=12"), "edge"),
        Case(
            (ids, 16, 1e4, [3, 3, 2]),
            {},
            tr("a height section at its bound: 3 * 3 = d/2 + 1, d=16, [3, 3, 2]"),
            "edge",
        ),
        Case((ids, 8, 1e4, [2, 2, 0]), {}, tr("bad input: a height section of 2 pairs at d=8")),
        Case((ids[:2], 8, 1e4, [2, 1, 1]), {}, tr("bad input: ids of 2 rows")),
    ]


def _interleaved_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        d = int(2 * rng.integers(3, 129))
        half = d // 2
        s_h = int(rng.integers(0, (half + 1) // 3 + 1))  # 3 s_h <= d/2 + 1
        s_w = int(rng.integers(0, min(half // 3, half - s_h) + 1))
        section = [half - s_h - s_w, s_h, s_w]
        ids = rng.integers(0, 4097, size=(3, int(rng.integers(1, 9))))
        base = log_base(rng)
        cases.append(
            Case(
                (maybe_list(rng, ids), d, base, section),
                {},
                f"{ids.shape[1]} tokens, d={d}, base={fmt(base)}, mrope_section={section}",
            )
        )
    return cases


def mrope_interleaved_in_blocks(position_ids, d, base, mrope_section) -> np.ndarray:
    """The sections left in blocks: Qwen2-VL's M-RoPE (mrope_angles)."""
    ref.mrope_interleaved_angles(position_ids, d, base, mrope_section)  # refuses the same
    return ref.mrope_angles(position_ids, d, base, mrope_section)


def _interleaved_from(position_ids, d, base, mrope_section, h_at: int, w_at: int):
    ref.mrope_interleaved_angles(position_ids, d, base, mrope_section)  # refuses the same
    ids = np.asarray(position_ids, dtype=np.float64)
    th = ref.thetas(d, base)
    j = np.arange(d // 2)
    which = np.zeros(d // 2, dtype=int)
    which[(j % 3 == h_at) & (j < 3 * mrope_section[1])] = 1
    which[(j % 3 == w_at) & (j < 3 * mrope_section[2])] = 2
    return ids[which].T * th


def mrope_interleaved_wrong_start(position_ids, d, base, mrope_section) -> np.ndarray:
    """The interleave started at the height: h on j % 3 == 0, w on 1, t on 2."""
    return _interleaved_from(position_ids, d, base, mrope_section, 0, 1)


def mrope_interleaved_wrong_start_hw_t(position_ids, d, base, mrope_section) -> np.ndarray:
    """The interleave started at the height, width after the temporal: h 0, t 1, w 2."""
    return _interleaved_from(position_ids, d, base, mrope_section, 0, 2)


M_INTERLEAVED_BLOCKS = Mistake(
    "the sections left in blocks",
    "your pairs turn in three blocks, t then h then w, as Qwen2-VL's mrope_angles does, so the "
    "width gets only the slowest rates (the example's token 3 gives [2, 0.2, 0.02, 0.003] "
    "instead of [2, 0.2, 0.03, 0.002]). Qwen3-VL interleaves them: pair j turns with the height "
    "when j % 3 == 1 and j < 3 * s_h, with the width when j % 3 == 2 and j < 3 * s_w, with the "
    "temporal id otherwise.",
    mrope_interleaved_in_blocks,
)

M_INTERLEAVED_WRONG_START = Mistake(
    "the interleave started at the wrong axis",
    "your interleave gives pair 0 to the height, so the fastest pair no longer turns with the "
    "temporal id. The pattern starts with t: pair j turns with the height when j % 3 == 1, with "
    "the width when j % 3 == 2 (while j < 3 * s_h, 3 * s_w), with the temporal id otherwise.",
    mrope_interleaved_wrong_start,
    variants=(mrope_interleaved_wrong_start_hw_t,),
)

MROPE_INTERLEAVED_ANGLES = FunctionCheck(
    name="mrope_interleaved_angles",
    kind="array",
    fixed=_interleaved_fixed,
    random=_interleaved_random,
    mistakes=(M_INTERLEAVED_BLOCKS, M_INTERLEAVED_WRONG_START),
    check_mutation=True,
)

ASSIGNMENT = "11_rope_nd"
# The graded functions in notebook order.
CHECKS = (
    AXIAL_FREQS,
    MIXED_FREQS,
    PATCH_POSITIONS,
    ROPE_2D_ANGLES,
    APPLY_ROPE_2D,
    INTERACTION_TERM,
    MROPE_POSITION_IDS,
    MROPE_ANGLES,
    MROPE_INTERLEAVED_ANGLES,
)

"""How 04_decay (dot product against distance) is graded.

For each graded function of the notebook, in notebook order: its fixed cases (the
numbers the notebook shows, the edges), its random cases, its known mistakes (the
message and, beside it, the wrong implementation that recognises it) and its declaration.
"""

from __future__ import annotations

import numpy as np

from helpers.i18n import tr
from helpers.teacher import reference as ref
from helpers.teacher.checks.base import (
    Case,
    FunctionCheck,
    even_d,
    fmt,
    log_base,
    maybe_list,
    normal,
    spread_positions,
    words,
)

SEED_OFFSETS = [0, 1, 2, 3, 5, 8, 10, 15, 20]


# --------------------------------------------------------------------------- dot_profile


def _dot_profile_fixed() -> list[Case]:
    return [
        Case(
            (ref.sinusoidal_pe(46, 32), 25, SEED_OFFSETS),
            {},
            tr("pe = sinusoidal_pe(46, 32), pos=25, the article's offsets"),
        ),
        Case(
            (ref.sinusoidal_pe(3, 2).tolist(), 0, [0, 2]),
            {},
            tr("pe = sinusoidal_pe(3, 2) as a list, pos=0"),
        ),
        Case((ref.sinusoidal_pe(8, 4), 7, [0]), {}, tr("the last row, offset 0"), part="edge"),
        Case(
            (ref.sinusoidal_pe(8, 4), 5, [0, 3]),
            {},
            tr("pos=5 in a table of 8 rows, offset 3 past the end"),
        ),
    ]


def _dot_profile_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        L, d = int(rng.integers(2, 65)), even_d(rng, 64)
        pe = ref.sinusoidal_pe(L, d, log_base(rng))
        pos = int(rng.integers(0, L))
        offsets = sorted({int(k) for k in rng.integers(0, L - pos, size=int(rng.integers(1, 8)))})
        cases.append(
            Case(
                (maybe_list(rng, pe), pos, offsets),
                {},
                tr(
                    "pe {what}, pos={pos}, offsets {offsets}",
                    what=words(pe),
                    pos=pos,
                    offsets=offsets,
                ),
            )
        )
    return cases


DOT_PROFILE = FunctionCheck(
    name="dot_profile",
    kind="array",
    fixed=_dot_profile_fixed,
    random=_dot_profile_random,
    check_mutation=True,
)


# --------------------------------------------------------------------------- closed_form_dot


def _closed_form_fixed() -> list[Case]:
    return [
        Case((SEED_OFFSETS, 32), {}, tr("the article's offsets, d=32")),
        Case(([0, 4096], 2), {"base": 100.0}, tr("offsets [0, 4096], d=2, base=100"), part="edge"),
    ]


def _closed_form_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        d, base = even_d(rng), log_base(rng)
        offsets = [int(k) for k in spread_positions(rng, int(rng.integers(1, 10)))]
        cases.append(
            Case(
                (offsets, d),
                {"base": base},
                tr("offsets {offsets}, d={d}, base={base}", offsets=offsets, d=d, base=fmt(base)),
            )
        )
    return cases


CLOSED_FORM_DOT = FunctionCheck(
    name="closed_form_dot",
    kind="array",
    fixed=_closed_form_fixed,
    random=_closed_form_random,
    check_mutation=True,
)


# --------------------------------------------------------------------------- first_rebound


def _rebound_fixed() -> list[Case]:
    seed_profile = [16.00, 15.31, 13.73, 12.27, 11.78, 10.52, 10.06, 8.41, 10.47]
    return [
        Case((SEED_OFFSETS, seed_profile), {}, tr("the article's table (rebounds at 20)")),
        Case(
            ([0, 1, 2, 3], [4.0, 3.0, 2.0, 1.0]),
            {},
            tr("a decreasing profile (no rebound)"),
            part="edge",
        ),
        Case(
            ([0, 1, 2], [3.0, 3.0, 2.0]),
            {},
            tr("an equal step then a drop (no rebound)"),
            part="edge",
        ),
        Case(([0, 5], np.array([1.0, 2.0])), {}, tr("two values, the second larger")),
        Case(([7], [1.0]), {}, tr("a single value"), part="edge"),
        Case(([0, 1, 2], [1.0, 2.0]), {}, tr("bad input: 3 offsets and 2 values")),
    ]


def _rebound_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for t in range(5):
        n = int(rng.integers(2, 12))
        offsets = sorted({int(k) for k in rng.integers(0, 200, size=n)})
        prof = np.sort(normal(rng, len(offsets)))[::-1] if t == 0 else normal(rng, len(offsets))
        cases.append(
            Case(
                (offsets, maybe_list(rng, prof)),
                {},
                tr("offsets {offsets}, a profile {what}", offsets=offsets, what=words(prof)),
            )
        )
    return cases


FIRST_REBOUND = FunctionCheck(
    name="first_rebound",
    kind="optional",
    fixed=_rebound_fixed,
    random=_rebound_random,
    check_mutation=True,
)


# --------------------------------------------------------------------------- rope_decay_bound


def _decay_bound_fixed() -> list[Case]:
    return [
        Case((32, 20), {}, "d=32, max_dist=20"),
        Case((2, 0), {}, "d=2, max_dist=0", part="edge"),
    ]


def _decay_bound_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(4):
        d, r, base = even_d(rng, 128), int(rng.integers(0, 200)), log_base(rng)
        cases.append(Case((d, r), {"base": base}, f"d={d}, max_dist={r}, base={fmt(base)}"))
    return cases


ROPE_DECAY_BOUND = FunctionCheck(
    name="rope_decay_bound",
    kind="array",
    fixed=_decay_bound_fixed,
    random=_decay_bound_random,
)

ASSIGNMENT = "04_decay"
# The graded functions in notebook order.
CHECKS = (DOT_PROFILE, CLOSED_FORM_DOT, FIRST_REBOUND, ROPE_DECAY_BOUND)

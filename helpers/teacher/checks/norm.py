"""How 03_norm (the norm property) is graded.

For each graded function of the notebook, in notebook order: its fixed cases (the
numbers the notebook shows, the edges), its random cases, its known mistakes (the
message and, beside it, the wrong implementation that recognises it) and its declaration.
"""

from __future__ import annotations

import math

import numpy as np

from helpers.i18n import tr
from helpers.teacher import reference as ref
from helpers.teacher.checks.base import (
    Case,
    FunctionCheck,
    Mistake,
    even_d,
    log_base,
    maybe_list,
    normal,
    words,
)


def _table_random(rng: np.random.Generator, n: int = 5, rows: tuple = (1, 65)) -> list[Case]:
    cases = []
    for t in range(n):
        L, d = int(rng.integers(*rows)), even_d(rng, 64)
        pe = ref.sinusoidal_pe(L, d, log_base(rng)) if t % 2 else normal(rng, L, d)
        what = tr("a sinusoidal table") if t % 2 else tr("random values")
        cases.append(
            Case((maybe_list(rng, pe),), {}, tr("pe {what} ({kind})", what=words(pe), kind=what))
        )
    return cases


# --------------------------------------------------------------------------- pe_norms


def _pe_norms_fixed() -> list[Case]:
    return [
        Case((ref.sinusoidal_pe(5, 32),), {}, tr("pe = sinusoidal_pe(5, 32) (norm 4.0 each)")),
        Case(([[3.0, 4.0], [0.0, 0.0], [1.0, -1.0]],), {}, tr("a 3x2 list"), part="edge"),
        Case(([1.0, 2.0],), {}, tr("bad input: a 1-dimensional pe")),
    ]


PE_NORMS = FunctionCheck(
    name="pe_norms",
    kind="array",
    fixed=_pe_norms_fixed,
    random=_table_random,
    check_mutation=True,
)


# --------------------------------------------------------------------------- expected_norm


def _expected_norm_fixed() -> list[Case]:
    return [
        Case((32,), {}, "d=32"),
        Case((2,), {}, "d=2", part="edge"),
        Case((512,), {}, "d=512"),
        Case((7,), {}, tr("bad input: an odd d=7")),
        Case((True,), {}, tr("bad input: d=True")),
    ]


def _expected_norm_random(rng: np.random.Generator) -> list[Case]:
    return [Case((d,), {}, f"d={d}") for d in (even_d(rng) for _ in range(5))]


def expected_norm_sqrt_d(d) -> float:
    """sqrt(d) instead of sqrt(d / 2)."""
    return math.sqrt(d)


M_NORM_SQRT_D = Mistake(
    "sqrt(d) instead of sqrt(d/2)",
    "your norm is sqrt(d). A row has d/2 pairs and each pair contributes sin^2 + cos^2 = 1, so "
    "the squared norm is d/2 and the norm sqrt(d/2) (d=32: 4.0).",
    expected_norm_sqrt_d,
)


EXPECTED_NORM = FunctionCheck(
    name="expected_norm",
    kind="float",
    fixed=_expected_norm_fixed,
    random=_expected_norm_random,
    mistakes=(M_NORM_SQRT_D,),
)


# --------------------------------------------------------------------------- min_pairwise_distance


def _min_distance_fixed() -> list[Case]:
    return [
        Case(
            (ref.sinusoidal_pe(100, 32),),
            {},
            tr("pe = sinusoidal_pe(100, 32) (the article's 1.1716)"),
        ),
        Case(([[0.0, 0.0], [3.0, 4.0]],), {}, tr("two rows [0, 0] and [3, 4]")),
        Case(
            ([[1.0, 1.0], [1.0, 1.0], [2.0, 1.0]],),
            {},
            tr("two equal rows among three (distance 0)"),
            part="edge",
        ),
        Case(([[1.0, 2.0]],), {}, tr("bad input: a single row")),
    ]


def _min_distance_random(rng: np.random.Generator) -> list[Case]:
    return _table_random(rng, 5, rows=(2, 41))


def min_pairwise_with_self(pe) -> float:
    """Every row compared with itself as well: the smallest distance is always 0."""
    return 0.0


M_MIN_DISTANCE_SELF = Mistake(
    "a row compared with itself",
    "your smallest distance is 0 because each row was also compared with itself. Only compare "
    "two different rows (a != b), e.g. skip the diagonal of the distance matrix.",
    min_pairwise_with_self,
    atol=1e-6,
)


MIN_PAIRWISE_DISTANCE = FunctionCheck(
    name="min_pairwise_distance",
    kind="float",
    fixed=_min_distance_fixed,
    random=_min_distance_random,
    mistakes=(M_MIN_DISTANCE_SELF,),
    check_mutation=True,
)


# --------------------------------------------------------------------------- embedding_to_position_ratio


def _ratio_fixed() -> list[Case]:
    r = np.random.default_rng(4)
    emb = r.normal(scale=0.02, size=(6, 32))
    return [
        Case((emb,), {}, tr("token_emb 6x32 with std 0.02, scale=True")),
        Case((emb.tolist(),), {"scale": False}, tr("token_emb 6x32 as a list, scale=False")),
        Case(([[3.0, 4.0]],), {}, tr("one row [3, 4]"), part="edge"),
        Case(([3.0, 4.0],), {}, tr("bad input: a 1-dimensional token_emb")),
    ]


def _ratio_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        n, d = int(rng.integers(1, 20)), even_d(rng, 64)
        emb = normal(rng, n, d, scale=float(rng.choice([0.02, 1.0])))
        scale = bool(rng.random() < 0.5)
        cases.append(
            Case(
                (maybe_list(rng, emb),),
                {"scale": scale},
                tr("token_emb {what}, scale={scale}", what=words(emb), scale=scale),
            )
        )
    return cases


EMBEDDING_TO_POSITION_RATIO = FunctionCheck(
    name="embedding_to_position_ratio",
    kind="float",
    fixed=_ratio_fixed,
    random=_ratio_random,
    check_mutation=True,
)

ASSIGNMENT = "03_norm"
# The graded functions in notebook order.
CHECKS = (PE_NORMS, EXPECTED_NORM, MIN_PAIRWISE_DISTANCE, EMBEDDING_TO_POSITION_RATIO)

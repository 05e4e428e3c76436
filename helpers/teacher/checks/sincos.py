"""How 02_sincos (sin/cos by hand) is graded.

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
    d_base_random,
    even_d,
    fmt,
    log_base,
    maybe_list,
    normal,
    words,
)
from helpers.teacher.reference.sincos import DEFAULT_BASE


def _table(pos: np.ndarray, rates: np.ndarray, d: int, swap: bool = False) -> np.ndarray:
    angles = pos[:, None] * rates  # shape: (max_len, d/2)
    out = np.empty((pos.shape[0], d))
    first, second = (np.cos, np.sin) if swap else (np.sin, np.cos)
    out[:, 0::2] = first(angles)
    out[:, 1::2] = second(angles)
    return out


# --------------------------------------------------------------------------- angle_rates


def _angle_rates_fixed() -> list[Case]:
    return [
        Case((4,), {}, tr("d=4 (rates 1 and 0.01)")),
        Case((2,), {}, "d=2", part="edge"),
        Case((64,), {"base": 500.0}, "d=64, base=500"),
        Case((256,), {"base": 1e6}, "d=256, base=1e6"),
        Case((7,), {}, tr("bad input: an odd d=7")),
        Case((8,), {"base": 1.0}, tr("bad input: base=1")),
    ]


def angle_rates_half_exponent(d, base=DEFAULT_BASE) -> np.ndarray:
    """theta_i = base ** (-i / d): the exponent i/d instead of 2i/d."""
    return np.exp(-(np.arange(d // 2) / d) * math.log(base))


def angle_rates_per_dimension(d, base=DEFAULT_BASE) -> np.ndarray:
    """One rate per dimension j (base ** (-j / d), length d) instead of one per pair."""
    return np.exp(-(np.arange(d) / d) * math.log(base))


M_RATES_EXPONENT = Mistake(
    "exponent i/d instead of 2i/d",
    "your angle rates use the exponent i/d (an angle per dimension). Pair i (dimensions 2i and "
    "2i+1) has one rate, theta_i = base ** (-2i/d): for d=4 the rates are 1 and 1/base**0.5 "
    "(0.01 for base 10000).",
    angle_rates_half_exponent,
    variants=(angle_rates_per_dimension,),
)


ANGLE_RATES = FunctionCheck(
    name="angle_rates",
    kind="array",
    fixed=_angle_rates_fixed,
    random=d_base_random,
    mistakes=(M_RATES_EXPONENT,),
)


# --------------------------------------------------------------------------- sinusoidal_pe


def _sinusoidal_fixed() -> list[Case]:
    return [
        Case((4, 4), {}, tr("max_len=4, d=4 (the article's table)")),
        Case((1, 2), {}, "max_len=1, d=2", part="edge"),
        Case((24, 16), {}, "max_len=24, d=16"),
        Case((3, 8), {"base": 100.0}, "max_len=3, d=8, base=100"),
    ]


def _sinusoidal_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(6):
        n, d, base = int(rng.integers(1, 65)), even_d(rng, 64), log_base(rng)
        cases.append(Case((n, d), {"base": base}, f"max_len={n}, d={d}, base={fmt(base)}"))
    return cases


def sinusoidal_pe_swapped(max_len, d, base=DEFAULT_BASE) -> np.ndarray:
    """cos on the even dimensions and sin on the odd ones."""
    return _table(np.arange(max_len, dtype=np.float64), ref.angle_rates(d, base), d, swap=True)


M_PE_SWAPPED = Mistake(
    "sin and cos swapped",
    "your table has cos in the even dimensions and sin in the odd ones. Even dimensions 2i hold "
    "sin(pos * theta_i), odd dimensions 2i+1 hold cos(pos * theta_i): row 0 is [0, 1, 0, 1, ...].",
    sinusoidal_pe_swapped,
)


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


M_PE_EXPONENT = Mistake(
    "exponent i/d instead of 2i/d",
    "your table uses the exponent i/d (an angle per dimension). Pair i (dimensions 2i and 2i+1) "
    "shares one angle, pos * theta_i with theta_i = base ** (-2i/d): sin in dimension 2i, cos "
    "in dimension 2i+1.",
    sinusoidal_pe_half_exponent,
    variants=(sinusoidal_pe_per_dimension,),
)


def sinusoidal_pe_from_one(max_len, d, base=DEFAULT_BASE) -> np.ndarray:
    """Rows for positions 1 .. max_len instead of 0 .. max_len - 1."""
    return _table(np.arange(1, max_len + 1, dtype=np.float64), ref.angle_rates(d, base), d)


M_PE_FROM_ONE = Mistake(
    "positions starting at 1",
    "your first row is position 1. Positions start at 0: row 0 is [0, 1, 0, 1, ...] "
    "(sin 0 = 0, cos 0 = 1), row pos is position pos.",
    sinusoidal_pe_from_one,
)


SINUSOIDAL_PE = FunctionCheck(
    name="sinusoidal_pe",
    kind="array",
    fixed=_sinusoidal_fixed,
    random=_sinusoidal_random,
    mistakes=(M_PE_SWAPPED, M_PE_EXPONENT, M_PE_FROM_ONE),
)


# --------------------------------------------------------------------------- wavelengths


WAVELENGTHS = FunctionCheck(
    name="wavelengths",
    kind="array",
    fixed=_angle_rates_fixed,
    random=d_base_random,
)


# --------------------------------------------------------------------------- embed_with_positions


def _embed_fixed() -> list[Case]:
    r = np.random.default_rng(3)
    emb = r.normal(scale=0.02, size=(5, 8))
    return [
        Case((emb,), {}, tr("token_emb 5x8, small values")),
        Case((emb[:1].tolist(),), {"base": 100.0}, tr("one token (1x8) as a list, base=100")),
        Case(([[0.1, -0.2]],), {}, "token_emb 1x2", part="edge"),
    ]


def _embed_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        n, d, base = int(rng.integers(1, 33)), even_d(rng, 64), log_base(rng)
        emb = normal(rng, n, d, scale=0.1)
        cases.append(
            Case(
                (maybe_list(rng, emb),),
                {"base": base},
                tr("token_emb {what}, base={base}", what=words(emb), base=fmt(base)),
            )
        )
    return cases


def embed_unscaled(token_emb, base=DEFAULT_BASE) -> np.ndarray:
    """token_emb + PE[:n], without the sqrt(d) scale."""
    emb = np.asarray(token_emb, dtype=np.float64)
    return emb + ref.sinusoidal_pe(emb.shape[0], emb.shape[1], base)


M_EMBED_UNSCALED = Mistake(
    "missing the sqrt(d) scale",
    "your result is token_emb + PE: multiply the token embeddings by sqrt(d) first, "
    "token_emb * sqrt(d) + PE[:n], so that small embeddings are not drowned by the positions.",
    embed_unscaled,
)


EMBED_WITH_POSITIONS = FunctionCheck(
    name="embed_with_positions",
    kind="array",
    fixed=_embed_fixed,
    random=_embed_random,
    mistakes=(M_EMBED_UNSCALED,),
    check_mutation=True,
)


# --------------------------------------------------------------------------- text_heatmap


def _heatmap_fixed() -> list[Case]:
    return [
        Case(
            (ref.sinusoidal_pe(24, 16),),
            {},
            tr("pe = sinusoidal_pe(24, 16) (the article's picture)"),
        ),
        Case(
            (ref.sinusoidal_pe(4, 4).tolist(),),
            {"ramp": "01"},
            tr("pe = sinusoidal_pe(4, 4) as a list, ramp '01'"),
        ),
        Case(
            ([[-1.0, 1.0, 0.0, -0.99, 0.99]],),
            {},
            tr("one row with -1, 1, 0, -0.99, 0.99"),
            part="edge",
        ),
    ]


def _heatmap_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    ramps = [" .:-=+*#%@", "ab", "0123456789", " #"]
    for _ in range(5):
        n, m = int(rng.integers(1, 30)), int(rng.integers(1, 30))
        pe = rng.uniform(-1.0, 1.0, size=(n, m))
        ramp = str(rng.choice(ramps))
        cases.append(
            Case(
                (maybe_list(rng, pe),),
                {"ramp": ramp},
                tr("pe {what}, ramp {ramp!r}", what=words(pe), ramp=ramp),
            )
        )
    return cases


TEXT_HEATMAP = FunctionCheck(
    name="text_heatmap",
    kind="str",
    fixed=_heatmap_fixed,
    random=_heatmap_random,
    check_mutation=True,
)

ASSIGNMENT = "02_sincos"
# The graded functions in notebook order.
CHECKS = (ANGLE_RATES, SINUSOIDAL_PE, WAVELENGTHS, EMBED_WITH_POSITIONS, TEXT_HEATMAP)

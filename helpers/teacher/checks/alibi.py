"""How 07_alibi (linear biases) is graded.

For each graded function of the notebook, in notebook order: its fixed cases (the
numbers the notebook shows, the edges), its random cases, its known mistakes (the
message and, beside it, the wrong implementation that recognises it) and its declaration.
"""

from __future__ import annotations

import numpy as np

from helpers.i18n import tr
from helpers.teacher import reference as ref
from helpers.teacher.checks.base import Case, FunctionCheck, Mistake, maybe_list, words


def _weights_tensor(rng: np.random.Generator, h: int, L: int) -> np.ndarray:
    return ref.softmax(rng.normal(scale=2.0, size=(h, L, L)))


# --------------------------------------------------------------------------- alibi_slopes


def _slopes_fixed() -> list[Case]:
    shown = [Case((n,), {}, f"n_heads={n}", "edge" if n == 1 else "") for n in (8, 1, 2, 6, 12)]
    return [*shown, Case((0,), {}, tr("bad input: n_heads=0"))]


def _slopes_random(rng: np.random.Generator) -> list[Case]:
    return [Case((n,), {}, f"n_heads={n}") for n in (int(v) for v in rng.integers(1, 65, size=5))]


def alibi_slopes_power_of_two_rule(n_heads) -> np.ndarray:
    """2 ** (-8 h / n) for every n, also when n is not a power of two."""
    return 2.0 ** (-8.0 * np.arange(1, n_heads + 1) / n_heads)


M_SLOPES_POW2 = Mistake(
    "the power-of-two formula for any head count",
    "your slopes use 2 ** (-8h/n) for every n. That rule is for a power of two only; otherwise "
    "take the slopes of the closest smaller power of two p, then every other slope of 2p "
    "(the first n - p of them).",
    alibi_slopes_power_of_two_rule,
)


ALIBI_SLOPES = FunctionCheck(
    name="alibi_slopes",
    kind="array",
    fixed=_slopes_fixed,
    random=_slopes_random,
    mistakes=(M_SLOPES_POW2,),
)


# --------------------------------------------------------------------------- alibi_bias


def _bias_fixed() -> list[Case]:
    return [
        Case((8, 4), {}, tr("n_heads=8, seq_len=4, causal")),
        Case((6, 5), {"causal": False}, tr("n_heads=6, seq_len=5, not causal")),
        Case((1, 1), {}, tr("one head, seq_len=1"), part="edge"),
        Case((2, 0), {}, tr("bad input: seq_len=0")),
    ]


def _bias_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        h, L, causal = int(rng.integers(1, 9)), int(rng.integers(1, 17)), bool(rng.random() < 0.5)
        cases.append(Case((h, L), {"causal": causal}, f"n_heads={h}, seq_len={L}, causal={causal}"))
    return cases


def alibi_bias_positive(n_heads, seq_len, causal: bool = True) -> np.ndarray:
    """+slope * |i - j|: the sign flipped, so far tokens are favoured."""
    b = ref.alibi_bias(n_heads, seq_len, causal)
    return np.where(np.isinf(b), b, -b)


# A masked score, however it was written: -inf, or a number no softmax weight survives.
MASKED = -1e3


def _bias_parts(case: Case, got: np.ndarray, want: np.ndarray):
    """(lower, upper, causal): the masks j <= i and j > i of got's shape, and the causal flag."""
    if want is None or got.shape != want.shape or got.ndim != 3:
        raise ValueError("not a bias of the asked shape")
    causal = bool(case.kwargs.get("causal", case.args[2] if len(case.args) > 2 else True))
    i = np.arange(got.shape[1])
    lower = np.broadcast_to(i[None, :] <= i[:, None], got.shape)
    return lower, ~lower, causal


def _masked_or(got: np.ndarray, upper: np.ndarray, causal: bool, other: np.ndarray) -> bool:
    """The keys after the query: masked when causal (-inf or a large negative number), else
    equal to ``other`` there."""
    if causal:
        return bool(np.all(got[upper] <= MASKED))
    return bool(np.allclose(got[upper], other[upper], rtol=1e-6, atol=1e-9))


def alibi_bias_shows_positive(case: Case, got: np.ndarray, want) -> bool:
    """+slope * distance where the reference has -slope * distance, the future masked as asked."""
    lower, upper, causal = _bias_parts(case, got, want)
    flipped = np.where(np.isinf(want), want, -want)
    return (
        bool(np.any(want[lower] != 0))
        and bool(np.allclose(got[lower], flipped[lower], rtol=1e-6, atol=1e-9))
        and _masked_or(got, upper, causal, flipped)
    )


def _in_one_mode(wrong, causal_mode: bool):
    """``wrong`` where ``causal`` is ``causal_mode``, the reference in the other mode: the
    mistake written in one branch of an ``if causal:`` only."""

    def bias(n_heads, seq_len, causal: bool = True) -> np.ndarray:
        if bool(causal) == causal_mode:
            return wrong(n_heads, seq_len, causal)
        return ref.alibi_bias(n_heads, seq_len, causal)

    bias.__name__ = f"{wrong.__name__}_{'causal' if causal_mode else 'not_causal'}_only"
    return bias


M_BIAS_POSITIVE = Mistake(
    "positive instead of negative bias",
    "your bias is +slope * distance, which rewards far tokens. ALiBi penalises distance: "
    "bias[h, i, j] = -slope_h * (i - j) for j <= i.",
    alibi_bias_positive,
    variants=(
        _in_one_mode(alibi_bias_positive, True),
        _in_one_mode(alibi_bias_positive, False),
    ),
    shows=alibi_bias_shows_positive,
)


def alibi_bias_row_constant(n_heads, seq_len, causal: bool = True) -> np.ndarray:
    """+slope * j (the row constant -slope * i dropped), masked above the diagonal if causal."""
    slopes = ref.alibi_slopes(n_heads)
    i = np.arange(seq_len)
    bias = slopes[:, None, None] * np.broadcast_to(
        i[None, :].astype(np.float64), (seq_len, seq_len)
    )
    if causal:
        bias = np.where(i[None, :] > i[:, None], -np.inf, bias)
    return bias


def alibi_bias_shows_row_constant(case: Case, got: np.ndarray, want) -> bool:
    """Keys j <= i off by one constant per row (not the same in every row), the keys after the
    query masked when causal: slope * j, slope * (j - L + 1) or any other shortcut the softmax cannot see."""
    lower, upper, causal = _bias_parts(case, got, want)
    diff = np.where(lower, got - np.where(lower, want, 0.0), np.nan)
    first = np.nanmax(diff, axis=2, keepdims=True)
    same_in_row = np.allclose(np.where(lower, diff - first, 0.0), 0.0, atol=1e-9)
    # one constant for the whole matrix is no shortcut per row: the rows' constants differ
    rows_differ = bool(np.any(np.abs(first - first[:, :1]) > 1e-9))
    # without the mask the shortcut also moves the keys after the query: only j <= i is read
    return same_in_row and rows_differ and (not causal or _masked_or(got, upper, causal, want))


M_BIAS_ROW_CONSTANT = Mistake(
    "the per-row constant shortcut",
    "your bias differs from -slope * (i - j) by a constant in each row (as the shortcut "
    "+slope * j does), which softmax ignores, but the bias itself is asked for. Use "
    "bias[h, i, j] = -slope_h * (i - j) (0 on the diagonal, more negative further left).",
    alibi_bias_row_constant,
    variants=(
        _in_one_mode(alibi_bias_row_constant, True),
        _in_one_mode(alibi_bias_row_constant, False),
    ),
    shows=alibi_bias_shows_row_constant,
)


ALIBI_BIAS = FunctionCheck(
    name="alibi_bias",
    kind="array",
    fixed=_bias_fixed,
    random=_bias_random,
    mistakes=(M_BIAS_POSITIVE, M_BIAS_ROW_CONSTANT),
)


# --------------------------------------------------------------------------- alibi_attention


def _alibi_attention_fixed() -> list[Case]:
    r = np.random.default_rng(5)
    Q, K, V = (r.normal(size=(2, 4, 8)) for _ in range(3))
    slopes = ref.alibi_slopes(2)
    return [
        Case((Q, K, V, slopes), {}, tr("2 heads, L=4, d=8, causal")),
        Case(
            (Q.tolist(), K.tolist(), V.tolist(), slopes.tolist()),
            {"causal": False},
            tr("the same as lists, not causal"),
        ),
        Case((Q[:1, :1], K[:1, :1], V[:1, :1], [0.5]), {}, tr("one head, one token"), part="edge"),
        Case((Q, K, V, [0.5]), {}, tr("bad input: one slope for 2 heads")),
    ]


def _alibi_attention_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(4):
        h, L, d = int(rng.integers(1, 5)), int(rng.integers(1, 9)), int(rng.integers(1, 9))
        Q, K, V = (rng.normal(size=(h, L, d)) for _ in range(3))
        slopes = ref.alibi_slopes(h)
        causal = bool(rng.random() < 0.5)
        label = tr("{h} heads, L={L}, d={d}, causal={causal}", h=h, L=L, d=d, causal=causal)
        cases.append(Case((maybe_list(rng, Q), K, V, slopes), {"causal": causal}, label))
    return cases


ALIBI_ATTENTION = FunctionCheck(
    name="alibi_attention",
    kind="array",
    fixed=_alibi_attention_fixed,
    random=_alibi_attention_random,
    check_mutation=True,
)


# --------------------------------------------------------------------------- mean_attention_distance


def _mad_fixed() -> list[Case]:
    eye = np.eye(3)[None]
    uniform = np.full((1, 4, 4), 0.25)
    return [
        Case((eye,), {}, tr("one head that looks only at itself (L=3)"), part="edge"),
        Case((uniform.tolist(),), {}, tr("one uniform head (L=4) as a list")),
        Case((_weights_tensor(np.random.default_rng(6), 3, 5),), {}, tr("3 heads, L=5")),
        Case((np.eye(3),), {}, tr("bad input: a 2-dimensional weights array")),
    ]


def _mad_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(4):
        h, L = int(rng.integers(1, 6)), int(rng.integers(1, 13))
        w = _weights_tensor(rng, h, L)
        cases.append(Case((maybe_list(rng, w),), {}, tr("weights {shape}", shape=words(w))))
    return cases


MEAN_ATTENTION_DISTANCE = FunctionCheck(
    name="mean_attention_distance",
    kind="array",
    fixed=_mad_fixed,
    random=_mad_random,
    check_mutation=True,
)

ASSIGNMENT = "07_alibi"
# The graded functions in notebook order.
CHECKS = (ALIBI_SLOPES, ALIBI_BIAS, ALIBI_ATTENTION, MEAN_ATTENTION_DISTANCE)

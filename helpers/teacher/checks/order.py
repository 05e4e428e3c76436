"""How 01_order (why attention loses order) is graded.

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
    Mistake,
    even_d,
    log_base,
    maybe_list,
    normal,
    words,
)


def _weights(rng: np.random.Generator, d: int, dk: int, dv: int) -> tuple:
    return (
        normal(rng, d, dk, scale=0.6),
        normal(rng, d, dk, scale=0.6),
        normal(rng, d, dv, scale=0.6),
    )


def _order_inputs(seed: int, n: int, d: int) -> tuple:
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, d))
    Wq, Wk, Wv = _weights(r, d, d, d)
    perm = [int(p) for p in r.permutation(n)]
    return X, Wq, Wk, Wv, perm


# --------------------------------------------------------------------------- softmax


def _softmax_fixed() -> list[Case]:
    return [
        Case(([1000.0, 1000.0],), {}, tr("x = [1000, 1000] (large equal values)")),
        Case(
            ([[1.0, 2.0, 3.0], [1000.0, 1001.0, 1002.0]],),
            {},
            tr("a 2 x 3 list whose second row has values near 1000"),
        ),
        Case(
            ([[-np.inf, 0.0, -np.inf], [-np.inf, -np.inf, 5.0]],),
            {},
            tr("rows of -inf except one entry"),
            part="edge",
        ),
        Case((np.array([0.0, 1.0, 2.0]),), {}, tr("x = [0, 1, 2] as an array")),
        Case(
            (np.array([[0.5, -1.0], [2.0, 3.0], [0.0, 0.0]]),),
            {"axis": 0},
            tr("a 3 x 2 array, axis=0"),
        ),
        Case(
            (np.array([[710.0, 0.0], [-3.0, 720.0]]),),
            {},
            tr("a 2 x 2 array with values above 709"),
            part="edge",
        ),
        Case((3.0,), {}, tr("bad input: a scalar x = 3.0")),
    ]


def _softmax_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(6):
        n, m = int(rng.integers(1, 8)), int(rng.integers(1, 12))
        x = normal(rng, n, m, scale=float(rng.choice([1.0, 10.0, 400.0])))
        axis = int(rng.choice([-1, 0, 1]))
        cases.append(
            Case(
                (maybe_list(rng, x),),
                {"axis": axis},
                tr("x {what}, axis={axis}", what=words(x), axis=axis),
            )
        )
    x = normal(rng, int(rng.integers(2, 10))) + 1000.0
    cases.append(Case((x,), {}, tr("x {what} around 1000", what=words(x))))
    return cases


def softmax_no_max(x, axis: int = -1) -> np.ndarray:
    """softmax without subtracting the max: exp overflows to inf and inf / inf is nan."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x)
        return e / np.sum(e, axis=axis, keepdims=True)


M_SOFTMAX_NO_MAX = Mistake(
    "no max subtraction",
    "your softmax returns nan for large inputs such as [1000, 1000]: exp(1000) overflows to inf "
    "and inf / inf is nan. Subtract the largest value of each row (along axis) before exp; "
    "the result does not change, and exp never sees a number above 0.",
    softmax_no_max,
    shows=lambda case, got, want: softmax_shows_overflow(case, got, want),
)


def softmax_shows_overflow(case: Case, got: np.ndarray, want) -> bool:
    """exp overflowed: every slice whose largest value is past what exp can hold (about 709.78)
    is nan, inf or 0 (inf / inf, x / inf), every other slice right. That is
    what any softmax without the max subtraction returns, written with numpy or a loop."""
    x = np.asarray(case.args[0], dtype=np.float64)
    axis = case.kwargs.get("axis", case.args[1] if len(case.args) > 1 else -1)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != x.shape or not np.all(np.isfinite(want)):
        return False
    overflow = np.broadcast_to(np.max(x, axis=axis, keepdims=True) > EXP_LIMIT, x.shape)
    wrong = ~np.isclose(got, want, rtol=1e-6, atol=1e-9) | ~np.isfinite(got)
    overflowed = ~np.isfinite(got) | (got == 0.0)  # inf / inf, x / inf
    return (
        bool(np.any(wrong))
        and not bool(np.any(wrong & ~overflow))
        and bool(np.all(overflowed[overflow]))
    )


# The largest x whose exp is a finite float64.
EXP_LIMIT = float(np.log(np.finfo(np.float64).max))


SOFTMAX = FunctionCheck(
    name="softmax",
    kind="array",
    fixed=_softmax_fixed,
    random=_softmax_random,
    mistakes=(M_SOFTMAX_NO_MAX,),
    check_mutation=True,
)


# --------------------------------------------------------------------------- attention


def _attention_fixed() -> list[Case]:
    j = np.arange(24.0)
    Q = np.cos(0.7 * j[:8] + 0.3).reshape(2, 4)
    K = np.sin(0.4 * j[:12] + 1.1).reshape(3, 4) * 2.0
    V = np.cos(0.5 * j[:6]).reshape(3, 2)
    causal = np.array([[0.0, -np.inf, -np.inf], [0.0, 0.0, -np.inf]])
    return [
        Case((Q, K, V), {}, tr("Q 2x4, K 3x4, V 3x2 (d_k = 4), no bias")),
        Case(
            (Q.tolist(), K.tolist(), V.tolist()),
            {"bias": [0.5, -1.0, 0.0]},
            tr("the same as lists, bias a row of 3"),
        ),
        Case((Q, K, V), {"bias": causal}, tr("Q 2x4, K 3x4, V 3x2 with a -inf mask as bias")),
        Case((Q[:1], K[:1], V[:1]), {}, tr("one query and one key (d_k = 4)"), part="edge"),
        Case((Q, K[:, :3], V), {}, tr("bad input: Q 2x4 and K 3x3 (different widths)")),
    ]


def _attention_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for t in range(6):
        n, m = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        dk, dv = int(rng.integers(1, 17)), int(rng.integers(1, 9))
        Q, K, V = normal(rng, n, dk), normal(rng, m, dk, scale=2.0), normal(rng, m, dv)
        kwargs = {}
        label = f"Q {n}x{dk}, K {m}x{dk}, V {m}x{dv}"
        if t % 2:
            kwargs["bias"] = maybe_list(rng, normal(rng, n, m))
            label += f", bias {n}x{m}"
        as_list = bool(t % 3 == 0)
        args = (Q.tolist(), K.tolist(), V.tolist()) if as_list else (Q, K, V)
        cases.append(Case(args, kwargs, label + (tr(" as lists") if as_list else "")))
    return cases


def attention_unscaled(Q, K, V, bias=None) -> np.ndarray:
    """attention without the 1/sqrt(d_k) scale: softmax(Q K^T + bias) V."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2)
    if bias is not None:
        scores = scores + np.asarray(bias, dtype=np.float64)
    return ref.softmax(scores) @ V


M_ATTENTION_UNSCALED = Mistake(
    "missing 1/sqrt(d_k)",
    "your scores are Q K^T without the scale: divide them by sqrt(d_k) (d_k = the number of "
    "columns of Q and K) before the softmax.",
    attention_unscaled,
)


def attention_divided_by_dk(Q, K, V, bias=None) -> np.ndarray:
    """attention divided by d_k instead of sqrt(d_k): softmax(Q K^T / d_k + bias) V."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    scores = Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]
    if bias is not None:
        scores = scores + np.asarray(bias, dtype=np.float64)
    return ref.softmax(scores) @ V


M_ATTENTION_DK = Mistake(
    "dividing by d_k",
    "your scores are divided by d_k; the scale is 1/sqrt(d_k): Q K^T / sqrt(d_k).",
    attention_divided_by_dk,
)


ATTENTION = FunctionCheck(
    name="attention",
    kind="array",
    fixed=_attention_fixed,
    random=_attention_random,
    mistakes=(M_ATTENTION_UNSCALED, M_ATTENTION_DK),
    check_mutation=True,
)


# --------------------------------------------------------------------------- self_attention


def _self_attention_fixed() -> list[Case]:
    X, Wq, Wk, Wv, _ = _order_inputs(0, 5, 4)
    return [
        Case((X, Wq, Wk, Wv), {}, tr("X 5x4, square weights 4x4")),
        Case(
            (X[:1].tolist(), Wq.tolist(), Wk.tolist(), Wv[:, :2].tolist()),
            {},
            tr("one token as lists, Wv 4x2"),
            part="edge",
        ),
    ]


def _self_attention_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        n, d, dk, dv = (int(v) for v in rng.integers(1, 9, size=4))
        X = normal(rng, n, d)
        Wq, Wk, Wv = _weights(rng, d, dk, dv)
        cases.append(
            Case((maybe_list(rng, X), Wq, Wk, Wv), {}, f"X {n}x{d}, Wq/Wk {d}x{dk}, Wv {d}x{dv}")
        )
    return cases


SELF_ATTENTION = FunctionCheck(
    name="self_attention",
    kind="array",
    fixed=_self_attention_fixed,
    random=_self_attention_random,
    check_mutation=True,
)


# --------------------------------------------------------------------------- permutation_gap


def _permutation_gap_fixed() -> list[Case]:
    X, Wq, Wk, Wv, perm = _order_inputs(1, 6, 8)
    return [
        Case((X, Wq, Wk, Wv, perm), {}, f"X 6x8, perm {perm}"),
        Case((X[:1], Wq, Wk, Wv, [0]), {}, tr("one token, perm [0]"), part="edge"),
        # the true gap is float noise: a perm that is not a permutation must be refused
        Case(
            (X, Wq, Wk, Wv, [0, 0, 1, 2, 3, 4]),
            {},
            tr("bad input: perm [0, 0, 1, 2, 3, 4], not a permutation"),
        ),
    ]


def _permutation_gap_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        n, d = int(rng.integers(2, 10)), int(rng.integers(1, 12))
        X = normal(rng, n, d)
        perm = [int(p) for p in rng.permutation(n)]
        cases.append(
            Case((maybe_list(rng, X), *_weights(rng, d, d, d), perm), {}, f"X {n}x{d}, perm {perm}")
        )
    return cases


PERMUTATION_GAP = FunctionCheck(
    name="permutation_gap",
    kind="float",
    fixed=_permutation_gap_fixed,
    random=_permutation_gap_random,
    check_mutation=True,
)


# --------------------------------------------------------------------------- order_gap_with_pe


def _order_gap_fixed() -> list[Case]:
    X, Wq, Wk, Wv, _ = _order_inputs(2, 6, 8)
    P = ref.sinusoidal_pe(6, 8)
    return [
        Case(
            (X, P, Wq, Wk, Wv, [5, 4, 3, 2, 1, 0]),
            {},
            tr("X 6x8, P a table of 6 positions of 8 numbers, reversed order"),
        ),
        Case(
            (X.tolist(), ref.sinusoidal_pe(10, 8).tolist(), Wq, Wk, Wv, [1, 0, 2, 3, 4, 5]),
            {},
            tr("X 6x8 as a list, P with 10 rows, first two tokens swapped"),
        ),
        Case(
            (X, P[:3], Wq, Wk, Wv, [5, 4, 3, 2, 1, 0]),
            {},
            tr("bad input: P with 3 rows for 6 tokens"),
        ),
    ]


def _order_gap_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        n, d = int(rng.integers(2, 10)), even_d(rng, 16)
        X = normal(rng, n, d, scale=0.5)
        P = ref.sinusoidal_pe(n + int(rng.integers(0, 3)), d, log_base(rng))
        perm = [int(p) for p in rng.permutation(n)]
        if perm == sorted(perm):
            perm = perm[::-1]
        label = f"X {n}x{d}, P {P.shape[0]}x{d}, perm {perm}"
        cases.append(Case((maybe_list(rng, X), P, *_weights(rng, d, d, d), perm), {}, label))
    return cases


def order_gap_positions_first(X, P, Wq, Wk, Wv, perm) -> float:
    """Positions added before shuffling: the positions move with the tokens (gap about 0)."""
    X = np.asarray(X, dtype=np.float64)
    Z = X + np.asarray(P, dtype=np.float64)[: X.shape[0]]
    p = np.asarray(perm)
    gap = ref.self_attention(Z[p], Wq, Wk, Wv) - ref.self_attention(Z, Wq, Wk, Wv)[p]
    return float(np.max(np.abs(gap)))


M_ORDER_GAP = Mistake(
    "adding positions before shuffling",
    "your gap is about 0 because the positions were added before the tokens were shuffled, so "
    "they moved with the tokens. Shuffle first and add P to the shuffled tokens: "
    "self_attention(X[perm] + P) against self_attention(X + P)[perm].",
    order_gap_positions_first,
)


ORDER_GAP_WITH_PE = FunctionCheck(
    name="order_gap_with_pe",
    kind="float",
    fixed=_order_gap_fixed,
    random=_order_gap_random,
    mistakes=(M_ORDER_GAP,),
    check_mutation=True,
)

ASSIGNMENT = "01_order"
# The graded functions in notebook order.
CHECKS = (SOFTMAX, ATTENTION, SELF_ATTENTION, PERMUTATION_GAP, ORDER_GAP_WITH_PE)

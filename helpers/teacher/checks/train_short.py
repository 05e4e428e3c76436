"""How 13_train_short (train short, test long) is graded.

For each graded function of the notebook, in notebook order: its fixed cases (the
numbers the notebook shows, the edges), its random cases, its known mistakes (the
message, the property of the output that recognises it, and a wrong implementation
beside it) and its declaration.
"""

from __future__ import annotations

import math

import numpy as np

from helpers.i18n import tr
from helpers.teacher import reference as ref
from helpers.teacher.checks.base import Case, FunctionCheck, Mistake, maybe_list, words

LN2 = math.log(2.0)


def _entropy_rows(p: np.ndarray, axis: int = -1) -> np.ndarray:
    safe = np.where(p > 0, p, 1.0)
    return -(p * np.log(safe)).sum(axis=axis)


def _close(a, b) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-6, atol=1e-9))


def _log2_shows(case: Case, got, want) -> bool:
    """The reference's value divided by ln 2 (bits, not nats), where it is not 0."""
    if want is None:
        return False
    w = np.concatenate([np.ravel(x) for x in want]) if isinstance(want, tuple) else want
    g = np.concatenate([np.ravel(x) for x in got]) if isinstance(got, tuple) else got
    return bool(np.any(np.abs(w) > 1e-6)) and _close(g, np.asarray(w) / LN2)


def _log2_message(name: str) -> str:
    return (
        f"your {name} is in bits (log base 2): every value is the right one divided by ln 2. "
        "The course measures in nats: use np.log."
    )


# --------------------------------------------------------------------------- next_token_loss


def _ntl_fixed() -> list[Case]:
    r = np.random.default_rng(13)
    return [
        Case(([[0, 0]], [0]), {}, "next_token_loss([[0, 0]], [0])"),
        Case(([[1000, 0]], [1]), {}, "next_token_loss([[1000, 0]], [1])"),
        Case(([[1000, 1000]], [0]), {}, "next_token_loss([[1000, 1000]], [0])"),
        Case((r.normal(size=(2, 5, 16)) * 3, r.integers(0, 16, (2, 5))), {}, tr("B=2, T=5, V=16")),
        Case(([[-800.0, 800.0, 0.0]], [0]), {}, tr("a target 1600 below the best"), part="edge"),
        Case(([[0, 0]], [2]), {}, tr("bad input: a target outside [0, V)")),
        Case(([[0, 0], [1, 1]], [0]), {}, tr("bad input: shapes that do not match")),
        Case(([[0.0]], [0]), {}, tr("bad input: V = 1")),
        Case(([[0, 0]], [0.5]), {}, tr("bad input: a target that is not an integer")),
    ]


def _ntl_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        shape = tuple(int(n) for n in rng.integers(1, 6, size=int(rng.integers(0, 3))))
        T, V = int(rng.integers(1, 12)), int(rng.integers(2, 40))
        scale = float(10.0 ** rng.uniform(-1, 3.2))  # up to about 1600: exp overflows
        z = rng.normal(size=(*shape, T, V)) * scale
        y = rng.integers(0, V, size=(*shape, T))
        label = tr("logits {shape}, scale {scale:.3g}", shape=words(z), scale=scale)
        cases.append(Case((maybe_list(rng, z), y), {}, label))
    return cases


def next_token_loss_no_max(logits, targets) -> np.ndarray:
    """log(sum exp z) - z[y] with nothing subtracted: inf - inf = nan on large logits."""
    ref.next_token_loss(logits, targets)  # refuses what the reference refuses
    z = np.asarray(logits, dtype=np.float64)
    y = np.asarray(targets, dtype=np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        lse = np.log(np.exp(z).sum(axis=-1))
    return lse - np.take_along_axis(z, y[..., None], axis=-1)[..., 0]


def next_token_loss_shows_no_max(case: Case, got, want) -> bool:
    """Not finite where the right loss is."""
    return want is not None and bool(np.any(~np.isfinite(got) & np.isfinite(want)))


M_NTL_NO_MAX = Mistake(
    "no maximum subtracted",
    "your loss is inf or nan on large logits: exp(1000) overflows. Subtract each row's "
    "maximum first: logsumexp(z) = max(z) + log(sum(exp(z - max(z)))).",
    next_token_loss_no_max,
    shows=next_token_loss_shows_no_max,
)


def next_token_loss_mean(logits, targets) -> np.ndarray:
    """The mean over positions, one number per sequence."""
    return ref.next_token_loss(logits, targets).mean(axis=-1)


def next_token_loss_shows_mean(case: Case, got, want) -> bool:
    """The mean of the right losses over the positions' axis (one number, not T)."""
    if want is None or want.shape[-1] < 2:
        return False
    mean = want.mean(axis=-1)
    g = np.asarray(got, dtype=np.float64)
    return g.size == mean.size and _close(g.ravel(), mean.ravel())


M_NTL_MEAN = Mistake(
    "the mean over positions instead of one loss per position",
    "your next_token_loss returns the mean over the positions. It should give one loss per "
    "position, shape (..., T): the notebook averages them itself, and reads them one by one.",
    next_token_loss_mean,
    shows=next_token_loss_shows_mean,
)


def next_token_loss_log2(logits, targets) -> np.ndarray:
    return ref.next_token_loss(logits, targets) / LN2


M_NTL_LOG2 = Mistake(
    "log base 2",
    _log2_message("next_token_loss"),
    next_token_loss_log2,
    shows=_log2_shows,
)


NEXT_TOKEN_LOSS = FunctionCheck(
    name="next_token_loss",
    kind="array",
    fixed=_ntl_fixed,
    random=_ntl_random,
    mistakes=(M_NTL_NO_MAX, M_NTL_MEAN, M_NTL_LOG2),
    check_mutation=True,
)


# --------------------------------------------------------------------------- chain_entropy


def _sparse_table(rng: np.random.Generator, V: int) -> np.ndarray:
    """Each context 1 to 3 likely successors plus a little uniform mass (irreducible)."""
    t = np.zeros((V, V, V))
    for a in range(V):
        for b in range(V):
            k = int(rng.integers(1, min(3, V) + 1))
            t[a, b, rng.choice(V, size=k, replace=False)] = rng.dirichlet(np.ones(k))
    eps = float(rng.uniform(0.02, 0.2))
    return (1 - eps) * t + eps / V


def _ce_fixed() -> list[Case]:
    sticky = np.array([[[0.9 if c == b else 0.1 for c in range(2)] for b in range(2)]] * 2)
    skewed = _sparse_table(np.random.default_rng(21), 3)
    bad_rows = np.full((2, 2, 2), 0.5)
    bad_rows[0, 0] = [0.6, 0.6]
    negative = np.full((2, 2, 2), 0.5)
    negative[1, 1] = [1.5, -0.5]
    return [
        Case((sticky,), {}, tr("V = 2, table[a, b, c] = 0.9 if c == b else 0.1")),
        Case((np.full((2, 2, 2), 0.5).tolist(),), {}, tr("V = 2, 0.5 everywhere")),
        Case((skewed,), {}, tr("V = 3, a sparse table")),
        Case((np.full((4, 4, 4), 0.25),), {}, tr("V = 4, uniform"), part="edge"),
        Case((np.full((2, 2, 3), 1 / 3),), {}, tr("bad input: shape (2, 2, 3)")),
        Case((negative,), {}, tr("bad input: a negative entry")),
        Case((bad_rows,), {}, tr("bad input: a row summing to 1.2")),
        Case((np.ones((1, 1, 1)),), {}, tr("bad input: V = 1")),
    ]


def _ce_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(4):
        V = int(rng.integers(2, 9))
        t = _sparse_table(rng, V)
        cases.append(Case((maybe_list(rng, t),), {}, tr("a sparse table of V = {V}", V=V)))
    return cases


def chain_entropy_equal_pairs(table):
    """h_rest with every pair (a, b) weighted 1 / V^2 instead of pi(a, b)."""
    h0, h1, _ = ref.chain_entropy(table)
    return h0, h1, float(_entropy_rows(np.asarray(table, dtype=np.float64)).mean())


def chain_entropy_shows_equal_pairs(case: Case, got, want) -> bool:
    """h_rest is the plain mean of the rows' entropies, not weighted by pi."""
    if want is None:
        return False
    t = np.asarray(case.args[0], dtype=np.float64)
    plain = float(_entropy_rows(t).mean())
    return abs(plain - float(want[2])) > 1e-6 and _close(np.ravel(got[2]), [plain])


M_CE_EQUAL_PAIRS = Mistake(
    "pairs weighted equally instead of by pi",
    "your h_rest averages the entropy of every context (a, b) with the same weight. A chain "
    "visits some pairs more than others: weight each by pi(a, b), the stationary distribution "
    "of the pair chain (a, b) -> (b, c).",
    chain_entropy_equal_pairs,
    shows=chain_entropy_shows_equal_pairs,
)


def chain_entropy_marginal_h1(table):
    """h1 as H(X1), the unconditional entropy of the second token."""
    h0, _, h_rest = ref.chain_entropy(table)
    return h0, h0, h_rest


def chain_entropy_shows_marginal_h1(case: Case, got, want) -> bool:
    """h1 equal to the entropy of a token's marginal (h0), where the conditional one is less."""
    if want is None:
        return False
    return (
        abs(float(want[1]) - float(want[0])) > 1e-6
        and _close(np.ravel(got[1]), np.ravel(want[0]))
        and _close(np.ravel(got[0]), np.ravel(want[0]))
    )


M_CE_MARGINAL = Mistake(
    "h1 as the entropy of the marginal (unconditional)",
    "your h1 is the entropy of the second token's marginal distribution. At position 1 the "
    "model has seen the first token: h1 = H(X1 | X0) = sum_a pi(a) H(pi(b | a)), with "
    "pi(b | a) = pi(a, b) / pi(a).",
    chain_entropy_marginal_h1,
    shows=chain_entropy_shows_marginal_h1,
    alike=("pi as the right eigenvector (uniform) instead of the left",),
)


def chain_entropy_uniform_pi(table):
    """pi from the right eigenvector of the pair chain (P x = x: every pair the same)."""
    ref.chain_entropy(table)  # refuses what the reference refuses
    t = np.asarray(table, dtype=np.float64)
    V = t.shape[0]
    pa = np.full(V, 1.0 / V)
    return float(_entropy_rows(pa)), float(_entropy_rows(pa)), float(_entropy_rows(t).mean())


def chain_entropy_shows_uniform_pi(case: Case, got, want) -> bool:
    """Every pair weighted 1 / V^2 in all three numbers: h0 = h1 = ln V and h_rest the plain
    mean of the rows' entropies."""
    if want is None:
        return False
    t = np.asarray(case.args[0], dtype=np.float64)
    lnV = math.log(t.shape[0])
    uniform = [lnV, lnV, float(_entropy_rows(t).mean())]
    return not _close(np.ravel(want), uniform) and _close(np.ravel(got), uniform)


M_CE_UNIFORM_PI = Mistake(
    "pi as the right eigenvector (uniform) instead of the left",
    "your pi weights every pair the same: h0 and h1 are both ln V. The all-ones vector solves "
    "P x = x for any chain (each row of P sums to 1); the stationary distribution is the "
    "left eigenvector, pi P = pi: solve with P's transpose.",
    chain_entropy_uniform_pi,
    shows=chain_entropy_shows_uniform_pi,
    alike=("h1 as the entropy of the marginal (unconditional)",),
)


def chain_entropy_log2(table):
    return tuple(h / LN2 for h in ref.chain_entropy(table))


M_CE_LOG2 = Mistake(
    "log base 2", _log2_message("chain_entropy"), chain_entropy_log2, shows=_log2_shows
)


CHAIN_ENTROPY = FunctionCheck(
    name="chain_entropy",
    kind="tuple",
    fixed=_ce_fixed,
    random=_ce_random,
    mistakes=(M_CE_EQUAL_PAIRS, M_CE_MARGINAL, M_CE_UNIFORM_PI, M_CE_LOG2),
    check_mutation=True,
)


# --------------------------------------------------------------------------- attention_entropy


def _causal_rows(rng: np.random.Generator, shape: tuple, T: int, sharp: float) -> np.ndarray:
    s = rng.normal(size=(*shape, T, T)) * sharp
    s = np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, s)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _ae_fixed() -> list[Case]:
    uniform = np.tril(np.ones((4, 4))) / np.arange(1, 5)[:, None]
    return [
        Case(([[1, 0], [0.5, 0.5]],), {}, "attention_entropy([[1, 0], [0.5, 0.5]])"),
        Case((uniform,), {}, tr("uniform causal rows, T = 4")),
        Case(
            (_causal_rows(np.random.default_rng(8), (2, 4), 6, 2.0),), {}, tr("2 x 4 heads, T = 6")
        ),
        Case(([[1.0]],), {}, tr("one key"), part="edge"),
        Case(([[1.5, -0.5]],), {}, tr("bad input: a negative weight")),
        Case(([[0.5, 0.4]],), {}, tr("bad input: a row summing to 0.9")),
    ]


def _ae_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        shape = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(0, 3))))
        T = int(rng.integers(2, 12))
        w = _causal_rows(rng, shape, T, float(10.0 ** rng.uniform(-1, 1.5)))
        cases.append(Case((maybe_list(rng, w),), {}, tr("weights {shape}", shape=words(w))))
    return cases


def attention_entropy_nan(weights) -> np.ndarray:
    """-sum w log w with log 0 = -inf left in: 0 * -inf = nan."""
    ref.attention_entropy(weights)  # refuses what the reference refuses
    w = np.asarray(weights, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -(w * np.log(w)).sum(axis=-1)


def attention_entropy_shows_nan(case: Case, got, want) -> bool:
    """nan (or inf) where the right entropy is a number."""
    return want is not None and bool(np.any(~np.isfinite(got) & np.isfinite(want)))


M_AE_NAN = Mistake(
    "nan at zero weights",
    "your attention_entropy gives nan where a weight is 0: 0 * log(0) is 0 * -inf = nan in "
    "numpy. Count a zero weight as 0 (0 log 0 = 0): take the log only where w > 0.",
    attention_entropy_nan,
    shows=attention_entropy_shows_nan,
)


def attention_entropy_columns(weights) -> np.ndarray:
    """The entropy of each key's column instead of each query's row."""
    ref.attention_entropy(weights)  # refuses what the reference refuses
    return _entropy_rows(np.asarray(weights, dtype=np.float64), axis=-2)


def attention_entropy_shows_columns(case: Case, got, want) -> bool:
    """-sum_i w_ij log w_ij over the queries (a column), not over the keys of a row."""
    w = np.asarray(case.args[0], dtype=np.float64)
    if want is None or w.ndim < 2:
        return False
    cols = _entropy_rows(w, axis=-2)
    return not _close(cols, want) and _close(got, cols)


M_AE_COLUMNS = Mistake(
    "entropy over keys' columns instead of each query's row",
    "your attention_entropy sums over the queries (a column of the weights). A row of "
    "weights is one query's distribution over the keys: sum over the last axis.",
    attention_entropy_columns,
    shows=attention_entropy_shows_columns,
)


def attention_entropy_log2(weights) -> np.ndarray:
    return ref.attention_entropy(weights) / LN2


M_AE_LOG2 = Mistake(
    "log base 2", _log2_message("attention_entropy"), attention_entropy_log2, shows=_log2_shows
)


ATTENTION_ENTROPY = FunctionCheck(
    name="attention_entropy",
    kind="array",
    fixed=_ae_fixed,
    random=_ae_random,
    mistakes=(M_AE_NAN, M_AE_COLUMNS, M_AE_LOG2),
    check_mutation=True,
)


# --------------------------------------------------------------------------- breaking_point


def _shown_excess() -> np.ndarray:
    return np.concatenate([np.zeros(32), [0.05, 0.2, 0.3, 0.3, 0.3]])


def _bp_fixed() -> list[Case]:
    dip = np.concatenate([np.zeros(8), [0.5, 0.5, 0.0, 0.5, 0.5, 0.5, 0.5]])
    early = np.concatenate([[0.3, 0.3, 0.3, 0.3], np.zeros(4), [0.0, 0.4, 0.4, 0.4]])
    return [
        Case((_shown_excess(), 32), {}, tr("32 zeros then [0.05, 0.2, 0.3, 0.3, 0.3]")),
        Case((np.zeros(40).tolist(), 32), {}, tr("all zeros")),
        Case((dip, 8), {}, tr("a dip inside the first window, train_len 8")),
        Case((early, 8), {}, tr("above the threshold before train_len only, then from 9")),
        Case(
            (np.full(5, 1.0), 4),
            {"window": 3},
            tr("a window longer than what is left"),
            part="edge",
        ),
        Case((np.zeros(10), 10), {}, tr("bad input: train_len = T")),
        Case((np.zeros(10), 2), {"window": 0}, tr("bad input: window 0")),
        Case((np.zeros(10), 2), {"threshold": -0.1}, tr("bad input: a negative threshold")),
    ]


def _bp_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(6):
        L = int(rng.integers(4, 40))
        T = L * int(rng.integers(2, 9))
        e = np.abs(rng.normal(0, 0.05, T))
        e[: L // 2] += rng.random() < 0.5  # sometimes broken early, before train_len
        start = int(rng.integers(L, T + 5))
        e[start:] += np.abs(rng.normal(0.3, 0.3, max(0, T - start)))
        spikes = rng.integers(L, T, size=3)
        e[spikes] += 0.5
        threshold, window = float(rng.choice([0.1, 0.2, 0.05])), int(rng.integers(1, 5))
        excess = maybe_list(rng, e)
        label = _bp_label(excess, L, threshold, window)
        cases.append(Case((excess, L), {"threshold": threshold, "window": window}, label))
    return cases


SHOWN_RUNS = 6  # runs above the threshold a case's label lists


def _bp_label(excess, train_len: int, threshold: float, window: int) -> str:
    """A random case in words: each input as passed (its type shows: 39, 0.05, a list or
    an array) and the runs of positions from train_len on where excess > threshold."""
    e = np.asarray(excess, dtype=np.float64)
    above = np.flatnonzero(e[train_len:] > threshold) + train_len
    # runs of consecutive positions: split where the next one is not p + 1
    runs = np.split(above, np.flatnonzero(np.diff(above) > 1) + 1) if above.size else []
    shown = ", ".join(str(r[0]) if r.size == 1 else f"{r[0]}-{r[-1]}" for r in runs[:SHOWN_RUNS])
    if not runs:
        shown = tr("none")
    elif len(runs) > SHOWN_RUNS:
        shown = tr("{shown} and {n} more runs", shown=shown, n=len(runs) - SHOWN_RUNS)
    return tr(
        "excess = {excess} (T = {T}), train_len = {L!r}, threshold = {threshold!r}, "
        "window = {window!r} (excess > threshold from train_len on: {runs})",
        excess=words(excess),
        T=e.shape[0],
        L=train_len,
        threshold=threshold,
        window=window,
        runs=shown,
    )


def _bp_args(case: Case):
    e = np.asarray(case.args[0], dtype=np.float64)
    train_len = case.args[1]
    threshold = case.kwargs.get("threshold", 0.1)
    window = case.kwargs.get("window", 3)
    return e, train_len, threshold, window


def breaking_point_anywhere(excess, train_len, threshold=0.1, window=3):
    """The first break anywhere, before train_len too."""
    ref.breaking_point(excess, train_len, threshold, window)  # refuses what it refuses
    e = np.asarray(excess, dtype=np.float64)
    for p in range(len(e) - window + 1):
        if np.all(e[p : p + window] > threshold):
            return p
    return None


def breaking_point_shows_anywhere(case: Case, got, want) -> bool:
    """A break before train_len."""
    _, train_len, _, _ = _bp_args(case)
    return got is not None and got < train_len


M_BP_ANYWHERE = Mistake(
    "the first position anywhere (before train_len)",
    "your breaking_point found a break before train_len. The model was trained on those "
    "positions; look from p = train_len on.",
    breaking_point_anywhere,
    shows=breaking_point_shows_anywhere,
)


def breaking_point_from_train_len(excess, train_len, threshold=0.1, window=3):
    p = ref.breaking_point(excess, train_len, threshold, window)
    return None if p is None else p - train_len


def breaking_point_shows_from_train_len(case: Case, got, want) -> bool:
    """The right position minus train_len (counted from where training stopped)."""
    _, train_len, _, _ = _bp_args(case)
    return got is not None and want is not None and train_len > 0 and got == want - train_len


M_BP_FROM_TRAIN_LEN = Mistake(
    "the position counted from train_len",
    "your breaking_point counts from train_len (it gives 1 where the answer is "
    "train_len + 1). Give the position itself, an index into excess.",
    breaking_point_from_train_len,
    shows=breaking_point_shows_from_train_len,
)


def breaking_point_no_window(excess, train_len, threshold=0.1, window=3):
    """One position above the threshold taken as the break."""
    ref.breaking_point(excess, train_len, threshold, window)  # refuses what it refuses
    e = np.asarray(excess, dtype=np.float64)
    hits = np.flatnonzero(e[train_len:] > threshold)
    return int(train_len + hits[0]) if hits.size else None


def breaking_point_shows_no_window(case: Case, got, want) -> bool:
    """The first single position above the threshold, where the window asks for more."""
    e, train_len, threshold, window = _bp_args(case)
    if window == 1:
        return False
    first = breaking_point_no_window(e, train_len, threshold)
    return first is not None and got == first and first != want


M_BP_NO_WINDOW = Mistake(
    "one position above the threshold taken as the break (window ignored)",
    "your breaking_point stops at the first position above the threshold. A break is `window` "
    "positions in a row all above it: one spike is not a break.",
    breaking_point_no_window,
    shows=breaking_point_shows_no_window,
)


BREAKING_POINT = FunctionCheck(
    name="breaking_point",
    kind="position",
    fixed=_bp_fixed,
    random=_bp_random,
    mistakes=(M_BP_ANYWHERE, M_BP_FROM_TRAIN_LEN, M_BP_NO_WINDOW),
    check_mutation=True,
)

ASSIGNMENT = "13_train_short"
# The graded functions in notebook order.
CHECKS = (NEXT_TOKEN_LOSS, CHAIN_ENTROPY, ATTENTION_ENTROPY, BREAKING_POINT)

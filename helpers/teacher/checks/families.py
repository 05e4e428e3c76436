"""How 09_families (learned, relative and no positions) is graded.

For each graded function of the notebook, in notebook order: its fixed cases (the
numbers the notebook shows, the edges), its random cases, its known mistakes (the
message and, beside it, the wrong implementation that recognises it) and its declaration.
"""

from __future__ import annotations

import math

import numpy as np

from helpers.i18n import tr
from helpers.teacher import reference as ref
from helpers.teacher.checks.base import Case, FunctionCheck, Mistake, maybe_list, normal, words

# The learned table of the positional-encoding article, section 7: nn.Embedding(512, 32).
# Its values do not matter here, only its shape: small whole numbers keep the case short.
ARTICLE_ROWS, ARTICLE_D = 512, 32


def article_table() -> np.ndarray:
    """A 512 x 32 table (16,384 numbers); row p holds (32 p + j) mod 97 - 48. # shape: (512, 32)"""
    return (np.arange(ARTICLE_ROWS * ARTICLE_D) % 97 - 48.0).reshape(ARTICLE_ROWS, ARTICLE_D)


def _small_table() -> np.ndarray:
    """An 8 x 4 table whose row p is p + [0, 0.1, 0.2, 0.3]. # shape: (8, 4)"""
    return np.arange(8.0)[:, None] + np.array([0.0, 0.1, 0.2, 0.3])


def _qkv(seed: int, n: int, m: int, d: int, dv: int) -> tuple:
    r = np.random.default_rng(seed)
    return r.normal(size=(n, d)), r.normal(size=(m, d)), r.normal(size=(m, dv))


# --------------------------------------------------------------------------- learned_lookup


def _lookup_fixed() -> list[Case]:
    table, small = article_table(), _small_table()
    return [
        Case((table, [0, 1, 511]), {}, tr("the article's 512 x 32 table, positions [0, 1, 511]")),
        Case(
            (table, [511, 512]),
            {},
            tr("the article's 512 x 32 table, positions [511, 512]: 512 is past the end"),
        ),
        Case(
            (small.tolist(), [[0, 7], [3, 3]]),
            {},
            tr("an 8 x 4 table as a list, positions [[0, 7], [3, 3]]"),
        ),
        Case((small, 5), {}, tr("an 8 x 4 table, one position 5")),
        Case(
            (small, [3, 8, 9]), {}, tr("an 8 x 4 table, positions [3, 8, 9]: 8 and 9 past the end")
        ),
        Case((small, np.array([2, -1])), {}, tr("bad input: an 8 x 4 table, positions [2, -1]")),
    ]


def _lookup_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for t in range(5):
        max_len, d = int(rng.integers(1, 65)), int(rng.integers(1, 17))
        table = normal(rng, max_len, d)
        shape = [(), (int(rng.integers(1, 9)),), (2, int(rng.integers(1, 5)))][t % 3]
        pos = rng.integers(0, max_len, size=shape)
        positions = int(pos) if pos.ndim == 0 else maybe_list(rng, pos)
        label = tr(
            "a {rows} x {d} table, positions {positions}",
            rows=max_len,
            d=d,
            positions=np.asarray(pos).tolist(),
        )
        cases.append(Case((maybe_list(rng, table), positions), {}, label))
    return cases


def learned_lookup_wraps(table, positions) -> np.ndarray:
    """Positions past the table wrap around: table[pos % max_len] (position 512 reads row 0)."""
    table = np.asarray(table, dtype=np.float64)
    return table[np.asarray(positions, dtype=np.int64) % table.shape[0]]


M_LOOKUP_WRAPS = Mistake(
    "wraps around past the table",
    "a position past the last row came back as an early row (position max_len read row 0, as "
    "pos % max_len or numpy's negative indexing does). A learned table has no row for a "
    "position it never had: raise ValueError naming max_len instead.",
    learned_lookup_wraps,
    on_random=False,
)


def learned_lookup_clips(table, positions) -> np.ndarray:
    """Positions past the table read its last row: table[clip(pos, 0, max_len - 1)]."""
    table = np.asarray(table, dtype=np.float64)
    return table[np.clip(np.asarray(positions, dtype=np.int64), 0, table.shape[0] - 1)]


M_LOOKUP_CLIPS = Mistake(
    "clips to the last row past the table",
    "a position past the last row came back as the last row (as np.clip or min(pos, "
    "max_len - 1) does). Every later position would then share one vector, silently. A "
    "learned table has no row there: raise ValueError naming max_len instead.",
    learned_lookup_clips,
    on_random=False,
)


LEARNED_LOOKUP = FunctionCheck(
    name="learned_lookup",
    kind="array",
    fixed=_lookup_fixed,
    random=_lookup_random,
    mistakes=(M_LOOKUP_WRAPS, M_LOOKUP_CLIPS),
    check_mutation=True,
)


# --------------------------------------------------------------------------- relative_positions


def _relative_fixed() -> list[Case]:
    return [
        Case((3, 5), {}, "q_len=3, k_len=5"),
        Case((1, 1), {}, "q_len=1, k_len=1"),
        Case((4, 2), {}, "q_len=4, k_len=2"),
    ]


def _relative_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(4):
        n, m = int(rng.integers(1, 65)), int(rng.integers(1, 65))
        cases.append(Case((n, m), {}, f"q_len={n}, k_len={m}"))
    return cases


RELATIVE_POSITIONS = FunctionCheck(
    name="relative_positions",
    kind="array",
    fixed=_relative_fixed,
    random=_relative_random,
)


# --------------------------------------------------------------------------- t5_bucket

NOTEBOOK_RELS = [-5000, -128, -17, -8, -1, 0, 1, 7, 8, 9, 127, 128, 5000]


def _bucket_fixed() -> list[Case]:
    return [
        Case((np.arange(-200, 201),), {}, tr("rel = -200 .. 200, the defaults (32 buckets, 128)")),
        Case(
            (NOTEBOOK_RELS,),
            {"bidirectional": False},
            tr("rel = {rel} as a list, bidirectional=False", rel=NOTEBOOK_RELS),
        ),
        Case(
            (ref.relative_positions(4, 6),),
            {"num_buckets": 8, "max_distance": 20},
            "rel = relative_positions(4, 6), num_buckets=8, max_distance=20",
        ),
        Case(
            (np.arange(-5000, 5001, 37),),
            {"num_buckets": 64, "max_distance": 1000},
            tr("rel = -5000 .. 5000 in steps of 37, num_buckets=64, max_distance=1000"),
        ),
        Case(([-3, 0, 3],), {"num_buckets": 7}, tr("bad input: num_buckets=7 (odd)")),
    ]


def _bucket_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(6):
        nb = int(2 * rng.integers(2, 33))
        max_distance = int(rng.integers(nb // 2 + 1, 2001))
        bidirectional = bool(rng.random() < 0.5)
        rel = rng.integers(-5000, 5001, size=int(rng.integers(1, 60)))
        rel[: min(3, rel.size)] = rng.integers(-20, 21, size=min(3, rel.size))  # small ones too
        cases.append(
            Case(
                (maybe_list(rng, rel),),
                {"bidirectional": bidirectional, "num_buckets": nb, "max_distance": max_distance},
                tr(
                    "rel {shape} in -5000 .. 5000, bidirectional={bidirectional}, "
                    "num_buckets={nb}, max_distance={max_distance}",
                    shape=words(rel),
                    bidirectional=bidirectional,
                    nb=nb,
                    max_distance=max_distance,
                ),
            )
        )
    return cases


def t5_bucket_sign_swapped(rel, bidirectional=True, num_buckets=32, max_distance=128) -> np.ndarray:
    """The bucket of i - j instead of j - i: past and future keys trade places."""
    return ref.t5_bucket(-np.asarray(rel, dtype=np.int64), bidirectional, num_buckets, max_distance)


M_BUCKET_SIGN = Mistake(
    "the sign of j - i swapped",
    "your buckets are those of i - j: keys before the query land where keys after it belong. "
    "T5 buckets rel = j - i (key minus query, memory_position - context_position): a key "
    "after the query has rel > 0 and, bidirectionally, the upper half of the buckets.",
    t5_bucket_sign_swapped,
)


def _exact_then_log(r: np.ndarray, nb: int, max_distance) -> np.ndarray:
    """T5's buckets of distances r >= 0: nb // 2 exact ones, then log-spaced up to max_distance."""
    exact = nb // 2
    logs = np.log(np.maximum(r, exact) / exact) / math.log(max_distance / exact)
    large = np.minimum(nb - 1, exact + np.floor(logs * (nb - exact)).astype(np.int64))
    return np.where(r < exact, r, large)


def t5_bucket_no_offset(rel, bidirectional=True, num_buckets=32, max_distance=128) -> np.ndarray:
    """Bidirectional without the num_buckets // 2 offset for rel > 0: rel and -rel share a bucket."""
    rel = np.asarray(rel, dtype=np.int64)
    if not bidirectional:
        return ref.t5_bucket(rel, False, num_buckets, max_distance)
    return _exact_then_log(np.abs(rel), num_buckets // 2, max_distance)


M_BUCKET_NO_OFFSET = Mistake(
    "no num_buckets // 2 offset for rel > 0",
    "a key 3 after the query and a key 3 before it got the same bucket. Bidirectionally the "
    "buckets are split in two halves: rel <= 0 uses buckets 0 .. num_buckets//2 - 1, and "
    "rel > 0 adds num_buckets // 2 to its bucket.",
    t5_bucket_no_offset,
)


def t5_bucket_all_log(rel, bidirectional=True, num_buckets=32, max_distance=128) -> np.ndarray:
    """Every bucket log-spaced (no exact half): min(nb - 1, floor(log(r) / log(max_distance) * nb))."""
    rel = np.asarray(rel, dtype=np.int64)
    nb = num_buckets
    if bidirectional:
        nb //= 2
        offset = np.where(rel > 0, nb, 0)
        r = np.abs(rel)
    else:
        offset = np.zeros_like(rel)
        r = -np.minimum(rel, 0)
    logs = np.log(np.maximum(r, 1)) / math.log(max_distance)
    return offset + np.minimum(nb - 1, np.floor(logs * nb).astype(np.int64))


def t5_bucket_shows_no_exact_half(case: Case, got: np.ndarray, want) -> bool:
    """The halves and the far end right, but the small distances without a bucket each.

    Whatever log formula was used for every bucket (log r, log(r + 1), another base), its
    buckets stay whole numbers in the right half, grow with the distance and end in the last
    bucket, while some distance below max_exact = nb // 2 is not its own bucket.
    """
    rel = np.asarray(case.args[0], dtype=np.int64)
    bidirectional = case.kwargs.get("bidirectional", True)
    nb = case.kwargs.get("num_buckets", 32)
    max_distance = case.kwargs.get("max_distance", 128)
    if want is None or got.shape != rel.shape or not np.all(got == np.round(got)):
        return False
    if bidirectional:
        nb //= 2
        offset, r = np.where(rel > 0, nb, 0), np.abs(rel)
    else:
        offset, r = np.zeros_like(rel), -np.minimum(rel, 0)
    inside, r = (got - offset).ravel(), r.ravel()
    if np.any((inside < 0) | (inside > nb - 1)):
        return False
    order = np.argsort(r, kind="stable")
    if np.any(np.diff(inside[order]) < 0) or np.any(inside[r >= max_distance] != nb - 1):
        return False
    small = r < nb // 2
    return bool(np.any(inside[small] != r[small]))


M_BUCKET_ALL_LOG = Mistake(
    "every bucket log-spaced (no exact half)",
    "your small distances do not have a bucket each. T5 keeps the first half of the buckets "
    "(max_exact = nb // 2) for the exact distances 0, 1, ..., max_exact - 1 and spaces only "
    "the rest logarithmically, from max_exact up to max_distance.",
    t5_bucket_all_log,
    shows=t5_bucket_shows_no_exact_half,
)


T5_BUCKET = FunctionCheck(
    name="t5_bucket",
    kind="array",
    fixed=_bucket_fixed,
    random=_bucket_random,
    mistakes=(M_BUCKET_SIGN, M_BUCKET_NO_OFFSET, M_BUCKET_ALL_LOG),
    check_mutation=True,
)


# --------------------------------------------------------------------------- t5_bias


def _bias_fixed() -> list[Case]:
    return [
        Case(
            (np.arange(64.0).reshape(32, 2), 4, 6),
            {},
            "bucket_bias 32 x 2 (bias[b, h] = 2b + h), q_len=4, k_len=6",
        ),
        Case(
            ((np.arange(24.0).reshape(8, 3) / 10).tolist(), 5, 5),
            {"bidirectional": False, "max_distance": 20},
            tr(
                "bucket_bias 8 x 3 as a list, q_len=5, k_len=5, bidirectional=False, max_distance=20"
            ),
        ),
        Case(
            (np.linspace(-1.0, 1.0, 32)[:, None], 1, 300),
            {},
            tr("bucket_bias 32 x 1, one query and 300 keys (distances past 128)"),
        ),
    ]


def _bias_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        nb, heads = int(2 * rng.integers(2, 17)), int(rng.integers(1, 5))
        n, m = int(rng.integers(1, 41)), int(rng.integers(1, 41))
        max_distance = int(rng.integers(nb // 2 + 1, 201))
        bidirectional = bool(rng.random() < 0.5)
        bb = normal(rng, nb, heads)
        cases.append(
            Case(
                (maybe_list(rng, bb), n, m),
                {"bidirectional": bidirectional, "max_distance": max_distance},
                f"bucket_bias {nb} x {heads}, q_len={n}, k_len={m}, "
                f"bidirectional={bidirectional}, max_distance={max_distance}",
            )
        )
    return cases


T5_BIAS = FunctionCheck(
    name="t5_bias",
    kind="array",
    fixed=_bias_fixed,
    random=_bias_random,
    check_mutation=True,
)


# --------------------------------------------------------------------------- shaw_scores


def _shaw_fixed() -> list[Case]:
    Q, K, _ = _qkv(3, 6, 6, 4, 1)
    R = np.random.default_rng(4).normal(size=(5, 4))
    Q2, K2, _ = _qkv(5, 3, 7, 4, 1)
    R2 = np.random.default_rng(6).normal(size=(7, 4))
    return [
        Case((Q, K, R, 2), {}, "Q 6x4, K 6x4, rel_k 5x4, max_rel=2"),
        Case(
            (Q2.tolist(), K2, R2.tolist(), 3),
            {},
            tr("Q 3x4 as a list, K 7x4, rel_k 7x4 as a list, max_rel=3"),
        ),
        Case((Q[:4], K[:4], R[2:3], 0), {}, "Q 4x4, K 4x4, rel_k 1x4, max_rel=0"),
        Case((Q, K, R[:4], 2), {}, tr("bad input: rel_k 4x4 with max_rel=2 (5 rows needed)")),
    ]


def _shaw_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        n, m, d = (int(v) for v in rng.integers(1, 13, size=3))
        max_rel = int(rng.integers(0, 7))
        Q, K, R = normal(rng, n, d), normal(rng, m, d), normal(rng, 2 * max_rel + 1, d)
        cases.append(
            Case(
                (maybe_list(rng, Q), K, maybe_list(rng, R), max_rel),
                {},
                f"Q {n}x{d}, K {m}x{d}, rel_k {2 * max_rel + 1}x{d}, max_rel={max_rel}",
            )
        )
    return cases


def _shaw(Q, K, rel_k, rows: np.ndarray, mode: str) -> np.ndarray:
    Q, K, R = (np.asarray(a, dtype=np.float64) for a in (Q, K, rel_k))
    rel = np.take(R, rows, axis=0, mode=mode)  # (n, m, d)
    return (Q @ K.T + np.einsum("id,ijd->ij", Q, rel)) / np.sqrt(Q.shape[1])


def shaw_scores_no_clip(Q, K, rel_k, max_rel) -> np.ndarray:
    """rel_k[j - i + max_rel] without the clip: distances past max_rel wrap around the table."""
    n, m = np.shape(Q)[0], np.shape(K)[0]
    rows = np.arange(m)[None, :] - np.arange(n)[:, None] + max_rel
    return _shaw(Q, K, rel_k, rows, mode="wrap")


M_SHAW_NO_CLIP = Mistake(
    "no clip of j - i to [-max_rel, max_rel]",
    "a distance larger than max_rel read a row of rel_k that belongs to another distance "
    "(python indexing wrapped it around). Shaw et al. clip: every distance beyond max_rel "
    "uses the last vector, rel_k[clip(j - i, -max_rel, max_rel) + max_rel].",
    shaw_scores_no_clip,
)


def shaw_scores_no_offset(Q, K, rel_k, max_rel) -> np.ndarray:
    """rel_k[clip(j - i, -max_rel, max_rel)] without + max_rel: negative distances index from the end."""
    n, m = np.shape(Q)[0], np.shape(K)[0]
    rows = np.clip(np.arange(m)[None, :] - np.arange(n)[:, None], -max_rel, max_rel)
    return _shaw(Q, K, rel_k, rows, mode="wrap")


M_SHAW_NO_OFFSET = Mistake(
    "no + max_rel offset into rel_k",
    "you indexed rel_k with the clipped distance itself, so distance 0 read row 0 and negative "
    "distances read rows from the end. Row r of rel_k belongs to the distance r - max_rel: "
    "add max_rel to the clipped j - i.",
    shaw_scores_no_offset,
)


SHAW_SCORES = FunctionCheck(
    name="shaw_scores",
    kind="array",
    fixed=_shaw_fixed,
    random=_shaw_random,
    mistakes=(M_SHAW_NO_CLIP, M_SHAW_NO_OFFSET),
    check_mutation=True,
)


# --------------------------------------------------------------------------- causal_attention


def _causal_fixed() -> list[Case]:
    Q, K, V = _qkv(7, 5, 5, 4, 3)
    return [
        Case((Q, K, V), {}, "Q 5x4, K 5x4, V 5x3"),
        Case(
            (Q[:3].tolist(), K[:3].tolist(), V[:3].tolist()),
            {},
            tr("Q, K, V of 3 tokens as lists"),
        ),
        Case((Q[:1], K[:1], V[:1]), {}, tr("one token")),
    ]


def _causal_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        n, dk, dv = int(rng.integers(1, 9)), int(rng.integers(1, 17)), int(rng.integers(1, 9))
        Q, K, V = normal(rng, n, dk), normal(rng, n, dk, scale=2.0), normal(rng, n, dv)
        cases.append(Case((maybe_list(rng, Q), K, V), {}, f"Q {n}x{dk}, K {n}x{dk}, V {n}x{dv}"))
    return cases


def causal_attention_masks_diagonal(Q, K, V) -> np.ndarray:
    """Keys j < i only (the diagonal masked too): query 0 sees nothing and gets nan."""
    Q = np.asarray(Q, dtype=np.float64)
    n, m = Q.shape[-2], np.shape(K)[-2]
    mask = np.where(np.arange(m)[None, :] >= np.arange(n)[:, None], -np.inf, 0.0)
    with np.errstate(invalid="ignore"):
        return ref.attention(Q, K, V, bias=mask)


def causal_attention_shows_diagonal_masked(case: Case, got: np.ndarray, want) -> bool:
    """The diagonal's weight is 0: every query i >= 1 is attention over the keys j < i only.

    That is what a mask of j >= i does, whether its masked scores are -inf or a large negative
    number, and whether it was built with np.where, np.triu or a loop. The first query has no
    key left: its row is nan (-inf), zeros (a loop over no keys) or an average over the future
    keys (a large negative number), none of which says more, so it is not read.
    """
    if want is None:
        return False  # input the reference refuses: no attention to compare with
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in case.args)
    n = Q.shape[0]
    if got.shape != (n, V.shape[1]) or n < 2:
        return (
            n == 1
            and got.shape == V.shape
            and not np.allclose(got, V)
            and (bool(np.all(np.isnan(got))) or bool(np.all(got == 0.0)))
        )
    for i in range(1, n):
        seen = ref.attention(Q[i : i + 1], K[:i], V[:i])[0]
        if not np.allclose(got[i], seen, rtol=1e-6, atol=1e-9):
            return False
    return True


M_CAUSAL_DIAGONAL = Mistake(
    "the diagonal masked too (j < i)",
    "your mask hides the query's own key as well: every query misses itself, and the first "
    "one sees no key at all (nan with a mask of -inf, an average of the keys after it with a "
    "large negative number). Causal attention lets query i see keys j <= i: mask only j > i.",
    causal_attention_masks_diagonal,
    shows=causal_attention_shows_diagonal_masked,
)


CAUSAL_ATTENTION = FunctionCheck(
    name="causal_attention",
    kind="array",
    fixed=_causal_fixed,
    random=_causal_random,
    mistakes=(M_CAUSAL_DIAGONAL,),
    check_mutation=True,
)


# --------------------------------------------------------------------------- causal_order_gap


def _gap_inputs(seed: int, n: int, d: int) -> tuple:
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, d))
    Wq, Wk, Wv = (r.normal(scale=0.6, size=(d, d)) for _ in range(3))
    return X, Wq, Wk, Wv


def _gap_fixed() -> list[Case]:
    X, Wq, Wk, Wv = _gap_inputs(0, 6, 8)
    return [
        Case((X, Wq, Wk, Wv, [5, 4, 3, 2, 1, 0]), {}, "X 6x8, perm [5, 4, 3, 2, 1, 0]"),
        Case(
            (X.tolist(), Wq, Wk, Wv, [1, 0, 2, 3, 4, 5]),
            {},
            tr("X 6x8 as a list, perm [1, 0, 2, 3, 4, 5]"),
        ),
        Case((X, Wq, Wk, Wv, [0, 1, 2, 3, 4, 5]), {}, tr("X 6x8, the identity perm")),
        Case((X, Wq, Wk, Wv, [0, 0, 1, 2, 3, 4]), {}, tr("bad input: perm [0, 0, 1, 2, 3, 4]")),
    ]


def _gap_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        n, d = int(rng.integers(2, 10)), int(rng.integers(1, 12))
        X = normal(rng, n, d)
        W = [normal(rng, d, d, scale=0.6) for _ in range(3)]
        perm = [int(p) for p in rng.permutation(n)]
        if perm == sorted(perm):
            perm = perm[::-1]
        cases.append(Case((maybe_list(rng, X), *W, perm), {}, f"X {n}x{d}, perm {perm}"))
    return cases


CAUSAL_ORDER_GAP = FunctionCheck(
    name="causal_order_gap",
    kind="float",
    fixed=_gap_fixed,
    random=_gap_random,
    check_mutation=True,
)

ASSIGNMENT = "09_families"
# The graded functions in notebook order.
CHECKS = (
    LEARNED_LOOKUP,
    RELATIVE_POSITIONS,
    T5_BUCKET,
    T5_BIAS,
    SHAW_SCORES,
    CAUSAL_ATTENTION,
    CAUSAL_ORDER_GAP,
)

"""The reference of 09_families against transformers' T5 buckets and independent formulations.

``tests/data/transformers_rope_t5.json`` holds what Hugging Face transformers'
``T5Attention._relative_position_bucket`` returns for every rel in [-5000, 5000] under
several settings (recorded once by bench/record_transformers.py; no torch needed here).
The other expected values come from the spec's numbers, double loops and a plain-Python
Shaw et al. score written here from the paper's formula, never from the code under test.
Each known mistake of the spec (helpers.teacher.checks.families) must differ from the reference.

transformers takes the log in float32. Where log(r / e) / log(max_distance / e) * (nb - e)
is an integer in exact arithmetic, float32 and float64 may floor it to neighbouring
buckets: a scan of 6,038 settings (every even num_buckets 4..128, max_distance up to 5000)
found 19 such settings, each off at 1 to 6 rels, none of them T5's default; the settings
recorded here have none, and the reference follows float64 there.
"""

from __future__ import annotations

import copy
import inspect
import itertools
import json
import math
import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from helpers import reference as ref
from helpers.teacher.checks import families as wrong
from helpers.teacher.checks.base import Mistake

DATA = Path(__file__).parent / "data" / "transformers_rope_t5.json"


@cache
def recorded() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


def hf_buckets(setting: dict) -> np.ndarray:
    """The recorded buckets of rel = -5000 .. 5000, expanded from their runs."""
    return np.concatenate([np.full(count, bucket) for _, bucket, count in setting["runs"]])


def hf_bucket_of(setting: dict):
    lo = recorded()["rel_range"][0]
    table = hf_buckets(setting)
    return lambda rel: int(table[rel - lo])


def setting_id(s: dict) -> str:
    direction = "bi" if s["bidirectional"] else "uni"
    return f"{direction}-{s['num_buckets']}-{s['max_distance']}"


def raises_naming(fn, arg: str, value=None) -> str:
    """``fn()`` raises ValueError whose message names ``arg`` (and shows ``value``)."""
    with pytest.raises(ValueError) as info:
        fn()
    msg = str(info.value)
    assert re.search(rf"(^|\W){re.escape(arg)}(\W|$)", msg), f"{msg!r} does not name {arg!r}"
    if value is not None:
        assert repr(value) in msg or str(value) in msg, f"{msg!r} does not show {value!r}"
    return msg


# --------------------------------------------------------------------------- T5 buckets


def test_recorded_buckets_cover_the_spec_range_and_settings():
    data = recorded()
    lo, hi = data["rel_range"]
    assert (lo, hi) == (-5000, 5000)
    settings = data["t5_buckets"]
    for s in settings:
        runs = s["runs"]
        assert runs[0][0] == lo, setting_id(s)
        for (start, _, count), (nxt, _, _) in itertools.pairwise(runs):
            assert start + count == nxt, f"{setting_id(s)}: runs are not contiguous"
        assert runs[-1][0] + runs[-1][2] - 1 == hi, setting_id(s)
    keys = {(s["bidirectional"], s["num_buckets"], s["max_distance"]) for s in settings}
    assert {(True, 32, 128), (False, 32, 128)} <= keys  # T5's default, both directions
    assert {nb for _, nb, _ in keys} >= {4, 8, 16, 32, 64}
    assert all((b, nb, nb // 2 + 1) in keys for b, nb, _ in keys)  # just above nb // 2
    assert all((b, nb, 5000) in keys for b, nb, _ in keys)  # large


@pytest.mark.parametrize("setting", recorded()["t5_buckets"], ids=setting_id)
def test_t5_bucket_equals_transformers(setting):
    lo, hi = recorded()["rel_range"]
    rel = np.arange(lo, hi + 1)
    got = ref.t5_bucket(
        rel, setting["bidirectional"], setting["num_buckets"], setting["max_distance"]
    )
    expected = hf_buckets(setting)
    assert got.dtype == np.int64 and got.shape == rel.shape
    bad = np.nonzero(got != expected)[0]
    assert bad.size == 0, (
        f"{setting_id(setting)}: {bad.size} rels differ, first rel={rel[bad[0]]}: "
        f"got {got[bad[0]]}, transformers {expected[bad[0]]}"
    )


def test_t5_bucket_by_hand():
    """T5's default (32 buckets, max_distance 128), bidirectional: 16 per sign, 8 exact."""
    rel = np.array([0, -1, -7, -8, 1, 7, 8, -127, -128, -5000, 128, 5000])
    expected = [0, 1, 7, 8, 17, 23, 24, 15, 15, 15, 31, 31]
    np.testing.assert_array_equal(ref.t5_bucket(rel), expected)
    # unidirectional: future keys in bucket 0, 16 exact distances, then log-spaced to 31
    np.testing.assert_array_equal(
        ref.t5_bucket(np.array([5, 0, -1, -15, -16, -127, -128, -5000]), bidirectional=False),
        [0, 0, 1, 15, 16, 31, 31, 31],
    )


def test_t5_bucket_keeps_shape():
    rel = ref.relative_positions(3, 5)
    out = ref.t5_bucket(rel.tolist())
    assert out.shape == (3, 5) and out.dtype == np.int64
    assert ref.t5_bucket(-3).shape == ()


# --------------------------------------------------------------------------- relative positions


@pytest.mark.parametrize(("q_len", "k_len"), [(1, 1), (4, 4), (3, 7), (6, 2)])
def test_relative_positions_is_key_minus_query(q_len, k_len):
    expected = [[j - i for j in range(k_len)] for i in range(q_len)]
    got = ref.relative_positions(q_len, k_len)
    assert got.dtype.kind == "i"
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("q_len", "k_len"), [(5, 5), (3, 9), (9, 3)])
def test_t5_bias_equals_a_loop_over_transformers_buckets(bidirectional, q_len, k_len):
    setting = next(
        s
        for s in recorded()["t5_buckets"]
        if (s["bidirectional"], s["num_buckets"], s["max_distance"]) == (bidirectional, 8, 5)
    )
    bucket = hf_bucket_of(setting)
    rng = np.random.default_rng(q_len * 10 + k_len)
    bucket_bias = rng.normal(size=(8, 3))  # 8 buckets, 3 heads
    expected = np.empty((3, q_len, k_len))
    for h in range(3):
        for i in range(q_len):
            for j in range(k_len):
                expected[h, i, j] = bucket_bias[bucket(j - i), h]
    got = ref.t5_bias(bucket_bias, q_len, k_len, bidirectional, max_distance=5)
    np.testing.assert_array_equal(got, expected)


def test_t5_bias_default_settings():
    bucket_bias = np.arange(64.0).reshape(32, 2)
    got = ref.t5_bias(bucket_bias, 2, 300)
    assert got.shape == (2, 2, 300)
    assert got[0, 0, 0] == bucket_bias[0, 0] and got[1, 1, 0] == bucket_bias[1, 1]  # rel 0, -1
    assert got[0, 0, 299] == bucket_bias[31, 0]  # rel 299 >= 128: the last bucket


# --------------------------------------------------------------------------- learned table


def test_learned_table_of_the_article():
    """The positional-encoding article, section 7: 512 x 32 = 16,384 parameters, no row 512."""
    rng = np.random.default_rng(7)
    table = rng.normal(size=(512, 32))
    assert table.size == 16_384
    out = ref.learned_lookup(table, np.arange(512))
    np.testing.assert_array_equal(out, table)
    assert not np.shares_memory(out, table)
    raises_naming(lambda: ref.learned_lookup(table, 512), "max_len", 512)
    raises_naming(lambda: ref.learned_lookup(table, [0, 3, 600]), "max_len", 512)
    raises_naming(lambda: ref.learned_lookup(table, -1), "max_len")


def test_learned_lookup_shapes():
    table = np.arange(20.0).reshape(10, 2)
    positions = np.array([[0, 9, 3], [4, 4, 1]])
    out = ref.learned_lookup(table, positions)
    assert out.shape == (2, 3, 2) and out.dtype == np.float64
    for idx in itertools.product(range(2), range(3)):
        np.testing.assert_array_equal(out[idx], table[positions[idx]])
    np.testing.assert_array_equal(ref.learned_lookup(table.tolist(), 7), [14.0, 15.0])


# --------------------------------------------------------------------------- Shaw et al.


def shaw_loop(Q, K, rel_k, max_rel) -> list[list[float]]:
    """Shaw, Uszkoreit, Vaswani 2018, eq. (4) with a_ij^K = w^K_clip(j - i, k): plain Python."""
    Q, K, rel_k = (np.asarray(a).tolist() for a in (Q, K, rel_k))
    d = len(Q[0])
    out = []
    for i, q in enumerate(Q):
        row = []
        for j, k in enumerate(K):
            dist = max(-max_rel, min(max_rel, j - i))
            a = rel_k[dist + max_rel]
            row.append(sum(q[t] * (k[t] + a[t]) for t in range(d)) / math.sqrt(d))
        out.append(row)
    return out


@pytest.mark.parametrize(
    ("n", "m", "d", "max_rel"),
    [(5, 5, 4, 2), (3, 8, 6, 3), (8, 3, 2, 1), (4, 4, 8, 0), (6, 6, 4, 9)],
)
def test_shaw_scores_equal_the_papers_formula(n, m, d, max_rel):
    rng = np.random.default_rng(n * 100 + m * 10 + d)
    Q, K = rng.normal(size=(n, d)), rng.normal(size=(m, d))
    rel_k = rng.normal(size=(2 * max_rel + 1, d))
    got = ref.shaw_scores(Q, K, rel_k, max_rel)
    assert got.shape == (n, m)
    np.testing.assert_allclose(got, shaw_loop(Q, K, rel_k, max_rel), rtol=1e-12, atol=1e-12)


def test_shaw_scores_with_zero_relative_vectors_are_plain_scores():
    rng = np.random.default_rng(3)
    Q, K = rng.normal(size=(4, 6)), rng.normal(size=(5, 6))
    got = ref.shaw_scores(Q, K, np.zeros((7, 6)), 3)
    np.testing.assert_allclose(got, Q @ K.T / math.sqrt(6), rtol=1e-12)


# --------------------------------------------------------------------------- causal attention


@pytest.mark.parametrize(("n", "d_k", "d_v"), [(1, 3, 2), (5, 4, 3), (8, 2, 6)])
def test_causal_attention_is_attention_with_a_minus_inf_mask(n, d_k, d_v):
    rng = np.random.default_rng(n + 10 * d_k)
    Q, K, V = rng.normal(size=(n, d_k)), rng.normal(size=(n, d_k)), rng.normal(size=(n, d_v))
    mask = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if j > i:
                mask[i, j] = -math.inf
    got = ref.causal_attention(Q, K, V)
    np.testing.assert_allclose(got, ref.attention(Q, K, V, bias=mask), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got[0], V[0], rtol=1e-12)  # query 0 sees key 0 alone
    # query i is a weighted mean of V[0..i] only: changing later values leaves it alone
    V2 = V.copy()
    V2[-1] += 100.0
    np.testing.assert_allclose(ref.causal_attention(Q, K, V2)[:-1], got[:-1], rtol=1e-12)


def _weights(seed: int, n: int = 4, d: int = 6):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), *rng.normal(size=(3, d, d))


def test_causal_order_gap_is_positive_for_every_shuffle():
    """NoPE: without positions, the causal mask alone makes the output depend on order."""
    X, Wq, Wk, Wv = _weights(11)
    for perm in itertools.permutations(range(4)):
        gap = ref.causal_order_gap(X, Wq, Wk, Wv, list(perm))
        if perm == (0, 1, 2, 3):
            assert gap <= 1e-12, f"identity: gap {gap}"
        else:
            assert gap > 1e-3, f"perm {perm}: gap {gap}"
            # the same shuffle without the mask is permutation-equivariant
            assert ref.permutation_gap(X, Wq, Wk, Wv, list(perm)) <= 1e-12


def test_causal_order_gap_by_definition():
    X, Wq, Wk, Wv = _weights(5, n=6)
    perm = [2, 0, 5, 1, 4, 3]

    def csa(Z):
        return ref.causal_attention(Z @ Wq, Z @ Wk, Z @ Wv)

    expected = np.max(np.abs(csa(X[perm]) - csa(X)[perm]))
    assert ref.causal_order_gap(X, Wq, Wk, Wv, perm) == pytest.approx(expected, rel=1e-12)


# --------------------------------------------------------------------------- bad input

T = np.ones((10, 4))
Q3 = np.ones((3, 4))

ERROR_CASES = {
    "learned_lookup past the end": (lambda: ref.learned_lookup(T, [2, 10]), "max_len", 10),
    "learned_lookup negative": (lambda: ref.learned_lookup(T, -3), "max_len", 10),
    "learned_lookup float position": (lambda: ref.learned_lookup(T, 1.5), "positions", 1.5),
    "learned_lookup 1-d table": (lambda: ref.learned_lookup(np.ones(4), 0), "table", None),
    "relative_positions q_len": (lambda: ref.relative_positions(0, 3), "q_len", 0),
    "relative_positions k_len": (lambda: ref.relative_positions(3, 2.0), "k_len", 2.0),
    "t5_bucket odd num_buckets": (lambda: ref.t5_bucket([1], num_buckets=31), "num_buckets", 31),
    "t5_bucket 2 buckets": (lambda: ref.t5_bucket([1], num_buckets=2), "num_buckets", 2),
    "t5_bucket float num_buckets": (
        lambda: ref.t5_bucket([1], num_buckets=32.0),
        "num_buckets",
        32.0,
    ),
    "t5_bucket max_distance at nb//2": (
        lambda: ref.t5_bucket([1], num_buckets=32, max_distance=16),
        "max_distance",
        16,
    ),
    "t5_bucket max_distance 0": (lambda: ref.t5_bucket([1], max_distance=0), "max_distance", 0),
    "t5_bucket float max_distance": (
        lambda: ref.t5_bucket([1], max_distance=128.5),
        "max_distance",
        128.5,
    ),
    "t5_bucket float rel": (lambda: ref.t5_bucket([0.5]), "rel", None),
    "t5_bias odd bucket rows": (lambda: ref.t5_bias(np.ones((7, 2)), 3, 3), "bucket_bias", None),
    "t5_bias 1-d": (lambda: ref.t5_bias(np.ones(8), 3, 3), "bucket_bias", None),
    "t5_bias q_len": (lambda: ref.t5_bias(np.ones((8, 2)), 0, 3), "q_len", 0),
    "t5_bias max_distance": (
        lambda: ref.t5_bias(np.ones((8, 2)), 3, 3, max_distance=4),
        "max_distance",
        4,
    ),
    "shaw_scores rel_k rows": (lambda: ref.shaw_scores(Q3, Q3, np.ones((4, 4)), 2), "rel_k", None),
    "shaw_scores rel_k width": (lambda: ref.shaw_scores(Q3, Q3, np.ones((5, 3)), 2), "rel_k", None),
    "shaw_scores max_rel": (lambda: ref.shaw_scores(Q3, Q3, np.ones((1, 4)), -1), "max_rel", -1),
    "shaw_scores K width": (lambda: ref.shaw_scores(Q3, np.ones((3, 2)), np.ones((1, 4)), 0), "K"),
    "causal_attention 1-d Q": (lambda: ref.causal_attention(np.ones(4), Q3, Q3), "Q", None),
    "causal_attention V rows": (lambda: ref.causal_attention(Q3, Q3, np.ones((2, 4))), "V", None),
    "causal_order_gap perm": (
        lambda: ref.causal_order_gap(Q3, *np.eye(4)[None].repeat(3, 0), [0, 1, 1]),
        "perm",
        None,
    ),
    "causal_order_gap Wk": (
        lambda: ref.causal_order_gap(Q3, np.eye(4), np.ones((3, 4)), np.eye(4), [0, 1, 2]),
        "Wk",
        None,
    ),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_bad_input_raises_a_value_error_naming_the_argument(case):
    fn, arg, *value = ERROR_CASES[case]
    raises_naming(fn, arg, value[0] if value else None)


# --------------------------------------------------------------------------- no mutation


def _args() -> dict[str, tuple]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 6))
    W = rng.normal(size=(3, 6, 6))
    return {
        "learned_lookup": (rng.normal(size=(12, 4)), np.array([[0, 11], [5, 5]])),
        "relative_positions": (3, 4),
        "t5_bucket": (np.array([-300, -5, 0, 5, 300]), False, 16, 40),
        "t5_bias": (rng.normal(size=(8, 2)), 4, 6, True, 20),
        "shaw_scores": (X, X[:4], rng.normal(size=(5, 6)), 2),
        "causal_attention": (X, X, X[:, :3]),
        "causal_order_gap": (X, *W, np.array([4, 3, 2, 1, 0])),
    }


@pytest.mark.parametrize("func", list(_args()))
def test_arguments_are_not_modified(func):
    args = _args()[func]
    for a in args:
        if isinstance(a, np.ndarray):
            a.setflags(write=False)  # an in-place write would raise here
    before = copy.deepcopy(args)
    out = getattr(ref, func)(*args)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)
    for a in args:
        if isinstance(a, np.ndarray) and isinstance(out, np.ndarray):
            assert not np.shares_memory(out, a), f"{func} returned a view of its argument"


def test_lists_are_not_modified():
    table = [[float(i), float(-i)] for i in range(6)]
    positions = [[5, 0], [2, 2]]
    before = copy.deepcopy((table, positions))
    ref.learned_lookup(table, positions)
    rel = [-4, 0, 4]
    ref.t5_bucket(rel)
    assert (table, positions) == before and rel == [-4, 0, 4]


# --------------------------------------------------------------------------- known mistakes

FAMILY_FUNCTIONS = (
    "learned_lookup",
    "relative_positions",
    "t5_bucket",
    "t5_bias",
    "shaw_scores",
    "causal_attention",
    "causal_order_gap",
)


def _imitated(name: str) -> str:
    return next(f for f in FAMILY_FUNCTIONS if name.startswith(f + "_"))


def _mistake_inputs() -> dict[str, list[tuple]]:
    """Ordinary inputs on which each mistake must differ from the reference."""
    rng = np.random.default_rng(9)
    Q, K = rng.normal(size=(2, 6, 4))
    shaw = (Q, K, rng.normal(size=(5, 4)), 2)
    rel = np.arange(-200, 201)
    return {
        "t5_bucket_sign_swapped": [(rel,), (rel, False)],
        "t5_bucket_no_offset": [(rel,), (rel, True, 8, 20)],
        "t5_bucket_all_log": [(rel,), (rel, False)],
        "shaw_scores_no_clip": [shaw],
        "shaw_scores_no_offset": [shaw],
        "causal_attention_masks_diagonal": [(Q, K, rng.normal(size=(6, 3)))],
    }


LOOKUP_MISTAKES = ["learned_lookup_wraps", "learned_lookup_clips"]


def test_every_mistake_of_the_notebook_is_tested_here():
    # a mistake's ``shows`` recognises it by its output: a property, not a wrong implementation
    properties = {m.shows for m in vars(wrong).values() if isinstance(m, Mistake) and m.shows}
    names = {
        n
        for n, f in vars(wrong).items()
        if inspect.isfunction(f) and not n.startswith("_") and f not in properties
    }
    family = {n for n in names if any(n.startswith(f + "_") for f in FAMILY_FUNCTIONS)}
    assert family == set(_mistake_inputs()) | set(LOOKUP_MISTAKES)


@pytest.mark.parametrize("name", LOOKUP_MISTAKES + list(_mistake_inputs()))
def test_mistake_has_the_graded_signature(name):
    graded = _imitated(name)
    want = list(inspect.signature(getattr(ref, graded)).parameters)
    assert list(inspect.signature(getattr(wrong, name)).parameters) == want


@pytest.mark.parametrize("name", list(_mistake_inputs()))
def test_mistake_differs_from_the_reference_on_ordinary_input(name):
    graded = _imitated(name)
    for args in _mistake_inputs()[name]:
        got = np.asarray(getattr(wrong, name)(*args), dtype=np.float64)
        expected = getattr(ref, graded)(*args)
        assert got.shape == expected.shape, name
        assert not np.allclose(got, expected), f"{name} agrees with {graded} on {args!r}"


@pytest.mark.parametrize("name", LOOKUP_MISTAKES)
def test_lookup_mistakes_answer_where_the_reference_refuses(name):
    """Past the table the reference raises; the mistakes return a row (and agree inside it)."""
    table, positions = np.random.default_rng(4).normal(size=(8, 4)), np.array([3, 8, 9])
    out = getattr(wrong, name)(table, positions)
    assert out.shape == (3, 4)
    raises_naming(lambda: ref.learned_lookup(table, positions), "max_len")
    np.testing.assert_array_equal(
        getattr(wrong, name)(table, np.arange(8)), ref.learned_lookup(table, np.arange(8))
    )


def test_diagonal_mask_mistake_breaks_the_first_query():
    (Q, K, V), *_ = _mistake_inputs()["causal_attention_masks_diagonal"]
    out = wrong.causal_attention_masks_diagonal(Q, K, V)
    assert np.all(np.isnan(out[0]))
    assert not np.allclose(out[1:], ref.causal_attention(Q, K, V)[1:])

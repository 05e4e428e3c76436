"""Bad input raises ValueError naming the argument and the value; arguments stay unchanged."""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable

import numpy as np
import pytest

from helpers import reference as ref

X8 = np.linspace(-1.0, 1.0, 8)
Q4 = np.arange(12.0).reshape(4, 3) / 10  # (n=4, d_k=3)


def raises_naming(fn: Callable[[], object], arg: str, value: object = None) -> str:
    """``fn()`` raises ValueError whose message names ``arg`` (and shows ``value``)."""
    with pytest.raises(ValueError) as info:
        fn()
    msg = str(info.value)
    assert re.search(rf"(^|\W){re.escape(arg)}(\W|$)", msg), f"{msg!r} does not name {arg!r}"
    if value is not None:
        assert repr(value) in msg or str(value) in msg, f"{msg!r} does not show {value!r}"
    return msg


# --------------------------------------------------------------------------- d

BAD_D = [7, 0, -2, 4.0, True, "4", None, 2.5]
# every function whose argument `d` is a model dimension, called with that d
D_FUNCS = {
    "angle_rates": lambda d: ref.angle_rates(d),
    "sinusoidal_pe": lambda d: ref.sinusoidal_pe(5, d),
    "wavelengths": lambda d: ref.wavelengths(d),
    "expected_norm": lambda d: ref.expected_norm(d),
    "closed_form_dot": lambda d: ref.closed_form_dot([0, 1], d),
    "rope_decay_bound": lambda d: ref.rope_decay_bound(d, 5),
    "shift_matrix": lambda d: ref.shift_matrix(1, d),
    "shift_error": lambda d: ref.shift_error(1, d, 5),
    "thetas": lambda d: ref.thetas(d),
    "turns": lambda d: ref.turns(d, 1),
    "slow_pairs": lambda d: ref.slow_pairs(d, 1),
    "sin_pos": lambda d: ref.sin_pos(1, d),
}


@pytest.mark.parametrize("func", list(D_FUNCS))
@pytest.mark.parametrize("d", BAD_D, ids=repr)
def test_bad_d(func, d):
    raises_naming(lambda: D_FUNCS[func](d), "d", d)


@pytest.mark.parametrize("func", list(D_FUNCS))
def test_numpy_integer_d_is_accepted(func):
    D_FUNCS[func](np.int64(8))


@pytest.mark.parametrize("length", [7, 1, 0])
@pytest.mark.parametrize("func", ["apply_rope", "rope_half", "interleaved_to_half"])
def test_vector_with_odd_or_empty_length(func, length):
    f = getattr(ref, func)
    call = (
        (lambda: f(np.ones(length)))
        if func == "interleaved_to_half"
        else (lambda: f(np.ones(length), 1))
    )
    raises_naming(call, "vec")


@pytest.mark.parametrize("func", ["embed_with_positions", "embedding_to_position_ratio"])
def test_token_emb_with_odd_width(func):
    raises_naming(lambda: getattr(ref, func)(np.ones((3, 5))), "token_emb")


# --------------------------------------------------------------------------- base

BAD_BASE = [1, 1.0, 0.5, 0, -10.0, math.nan, math.inf, True, "10000"]
BASE_FUNCS = {
    "angle_rates": lambda b: ref.angle_rates(8, b),
    "sinusoidal_pe": lambda b: ref.sinusoidal_pe(5, 8, b),
    "wavelengths": lambda b: ref.wavelengths(8, b),
    "embed_with_positions": lambda b: ref.embed_with_positions(np.ones((3, 8)), b),
    "closed_form_dot": lambda b: ref.closed_form_dot([0, 1], 8, b),
    "rope_decay_bound": lambda b: ref.rope_decay_bound(8, 5, b),
    "shift_matrix": lambda b: ref.shift_matrix(1, 8, b),
    "shift_error": lambda b: ref.shift_error(1, 8, 5, b),
    "thetas": lambda b: ref.thetas(8, b),
    "apply_rope": lambda b: ref.apply_rope(X8, 1, b),
    "rope_score": lambda b: ref.rope_score(X8, X8, 1, 2, b),
    "turns": lambda b: ref.turns(8, 1, b),
    "slow_pairs": lambda b: ref.slow_pairs(8, 1, b),
    "rope_half": lambda b: ref.rope_half(X8, 1, b),
    "sin_pos": lambda b: ref.sin_pos(1, 8, b),
    "add_score": lambda b: ref.add_score(X8, X8, 1, 2, b),
    "offset_scan": lambda b: ref.offset_scan(X8, X8, 2, [0, 3], b),
}


@pytest.mark.parametrize("func", list(BASE_FUNCS))
@pytest.mark.parametrize("base", BAD_BASE, ids=repr)
def test_bad_base(func, base):
    raises_naming(lambda: BASE_FUNCS[func](base), "base", base)


# --------------------------------------------------------------------------- positions

POSITION_CASES = {
    "apply_rope pos": (lambda: ref.apply_rope(X8, -1), "pos", -1),
    "rope_half pos": (lambda: ref.rope_half(X8, -3), "pos", -3),
    "apply_rope pos array": (
        lambda: ref.apply_rope(np.ones((2, 8)), np.array([0, -1])),
        "pos",
        None,
    ),
    "rope_score m": (lambda: ref.rope_score(X8, X8, -1, 0), "m", -1),
    "rope_score n": (lambda: ref.rope_score(X8, X8, 0, -2), "n", -2),
    "add_score m": (lambda: ref.add_score(X8, X8, -1, 0), "m", -1),
    "add_score n": (lambda: ref.add_score(X8, X8, 0, -2), "n", -2),
    "sin_pos pos": (lambda: ref.sin_pos(-1, 8), "pos", -1),
    "dot_profile pos": (lambda: ref.dot_profile(ref.sinusoidal_pe(10, 8), -1, [0]), "pos", -1),
    "offset_scan starts": (lambda: ref.offset_scan(X8, X8, 2, [3, -1]), "starts", None),
    "offset_scan offset": (lambda: ref.offset_scan(X8, X8, -5, [3, 10]), "offset", -5),
    "turns delta": (lambda: ref.turns(8, -1), "delta", -1),
    "slow_pairs delta": (lambda: ref.slow_pairs(8, -16), "delta", -16),
    "shift_error k": (lambda: ref.shift_error(-1, 8, 10), "k", -1),
    # non-integer positions
    "apply_rope float pos": (lambda: ref.apply_rope(X8, 1.5), "pos", 1.5),
    "apply_rope bool pos": (lambda: ref.apply_rope(X8, True), "pos", True),
    "apply_rope str pos": (lambda: ref.apply_rope(X8, "3"), "pos", "3"),
    "apply_rope nan pos": (lambda: ref.apply_rope(X8, math.nan), "pos", None),
    "sin_pos float pos": (lambda: ref.sin_pos(0.5, 8), "pos", 0.5),
    "rope_score float m": (lambda: ref.rope_score(X8, X8, 0.5, 1), "m", 0.5),
    "shift_matrix float k": (lambda: ref.shift_matrix(1.5, 8), "k", 1.5),
    "closed_form_dot float offsets": (lambda: ref.closed_form_dot([0, 0.5], 8), "offsets", None),
    # counts
    "sinusoidal_pe max_len 0": (lambda: ref.sinusoidal_pe(0, 8), "max_len", 0),
    "sinusoidal_pe max_len float": (lambda: ref.sinusoidal_pe(5.0, 8), "max_len", 5.0),
    "rope_decay_bound max_dist": (lambda: ref.rope_decay_bound(8, -1), "max_dist", -1),
    "alibi_bias seq_len": (lambda: ref.alibi_bias(2, 0), "seq_len", 0),
    "shift_error max_len": (lambda: ref.shift_error(3, 8, 3), "max_len", 3),
}


@pytest.mark.parametrize("case", list(POSITION_CASES))
def test_bad_positions_and_counts(case):
    fn, arg, value = POSITION_CASES[case]
    raises_naming(fn, arg, value)


# --------------------------------------------------------------------------- table bounds


@pytest.mark.parametrize(("pos", "offsets"), [(25, [0, 100]), (9, [1]), (10, [0]), (3, [-4])])
def test_offsets_past_the_table(pos, offsets):
    pe = ref.sinusoidal_pe(10, 8)
    raises_naming(lambda: ref.dot_profile(pe, pos, offsets), "offsets")


# --------------------------------------------------------------------------- shapes

SHAPE_CASES = {
    "attention Q/K width": (lambda: ref.attention(Q4, np.ones((4, 2)), np.ones((4, 3))), "K"),
    "attention K/V rows": (lambda: ref.attention(Q4, Q4, np.ones((5, 3))), "V"),
    "attention 1-d Q": (lambda: ref.attention(np.ones(3), Q4, Q4), "Q"),
    "attention bias": (lambda: ref.attention(Q4, Q4, Q4, bias=np.ones((3, 3))), "bias"),
    "self_attention Wq": (
        lambda: ref.self_attention(Q4, np.ones((2, 3)), np.eye(3), np.eye(3)),
        "Wq",
    ),
    "self_attention Wv": (
        lambda: ref.self_attention(Q4, np.eye(3), np.eye(3), np.ones((4, 3))),
        "Wv",
    ),
    "permutation_gap perm": (
        lambda: ref.permutation_gap(Q4, *np.eye(3)[None].repeat(3, 0), [0, 1, 1, 2]),
        "perm",
    ),
    "permutation_gap perm length": (
        lambda: ref.permutation_gap(Q4, *np.eye(3)[None].repeat(3, 0), [0, 1, 2]),
        "perm",
    ),
    "order_gap_with_pe P": (
        lambda: ref.order_gap_with_pe(
            Q4, np.ones((2, 3)), *np.eye(3)[None].repeat(3, 0), [0, 1, 2, 3]
        ),
        "P",
    ),
    "dot lengths": (lambda: ref.dot(np.ones(4), np.ones(6)), "b"),
    "rope_score q/k lengths": (lambda: ref.rope_score(np.ones(4), np.ones(6), 0, 1), "k"),
    "add_score q/k lengths": (lambda: ref.add_score(np.ones(4), np.ones(6), 0, 1), "k"),
    "apply_rope pos shape": (lambda: ref.apply_rope(np.ones((3, 8)), np.array([0, 1])), "pos"),
    "text_heatmap 1-d": (lambda: ref.text_heatmap(np.ones(5)), "pe"),
    "text_heatmap ramp": (lambda: ref.text_heatmap(np.ones((2, 2)), ramp=""), "ramp"),
    "pe_norms 1-d": (lambda: ref.pe_norms(np.ones(5)), "pe"),
    "min_pairwise_distance one row": (lambda: ref.min_pairwise_distance(np.ones((1, 4))), "pe"),
    "first_rebound lengths": (lambda: ref.first_rebound([0, 1, 2], [1.0, 2.0]), "profile"),
    "alibi_attention slopes": (
        lambda: ref.alibi_attention(*np.ones((3, 2, 4, 8)), [0.5]),
        "slopes",
    ),
    "alibi_attention 2-d Q": (
        lambda: ref.alibi_attention(np.ones((4, 8)), np.ones((1, 4, 8)), np.ones((1, 4, 8)), [0.5]),
        "Q",
    ),
    "mean_attention_distance": (lambda: ref.mean_attention_distance(np.ones((2, 3, 4))), "weights"),
    "spread empty": (lambda: ref.spread([]), "values"),
    "softmax scalar": (lambda: ref.softmax(3.0), "x"),
    "softmax text": (lambda: ref.softmax(["a", "b"]), "x"),
    "rotation_2d nan": (lambda: ref.rotation_2d(math.nan), "angle"),
    "rotate_pair vector": (lambda: ref.rotate_pair([1.0, 2.0], 0.0, 1.0), "x0"),
}


@pytest.mark.parametrize("case", list(SHAPE_CASES))
def test_mismatched_shapes(case):
    fn, arg = SHAPE_CASES[case]
    raises_naming(fn, arg)


# --------------------------------------------------------------------------- heads


@pytest.mark.parametrize("n_heads", [0, -1, -8])
def test_head_count_below_one(n_heads):
    raises_naming(lambda: ref.alibi_slopes(n_heads), "n_heads", n_heads)
    raises_naming(lambda: ref.alibi_bias(n_heads, 4), "n_heads", n_heads)


@pytest.mark.parametrize("n_heads", [8.0, 2.5, True, "8", None])
def test_head_count_not_an_integer(n_heads):
    raises_naming(lambda: ref.alibi_slopes(n_heads), "n_heads", n_heads)
    raises_naming(lambda: ref.alibi_bias(n_heads, 4), "n_heads", n_heads)


# --------------------------------------------------------------------------- no mutation


def _args() -> dict[str, tuple]:
    """Fresh arguments for every graded function that takes arrays (read-only where numpy)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, 8))
    W = rng.normal(size=(3, 8, 8))
    pe = ref.sinusoidal_pe(30, 8)
    heads = rng.normal(size=(3, 2, 6, 4))
    weights = ref.softmax(rng.normal(size=(2, 6, 6)))
    q, k = rng.normal(size=(2, 8))
    return {
        "softmax": (X,),
        "attention": (X, X, X, np.zeros((5, 5))),
        "self_attention": (X, *W),
        "permutation_gap": (X, *W, np.array([4, 3, 2, 1, 0])),
        "order_gap_with_pe": (X, pe, *W, [4, 3, 2, 1, 0]),
        "embed_with_positions": (X,),
        "text_heatmap": (pe,),
        "pe_norms": (pe,),
        "min_pairwise_distance": (pe,),
        "embedding_to_position_ratio": (X,),
        "dot_profile": (pe, 3, np.array([0, 1, 5])),
        "closed_form_dot": (np.array([0, 1, 5]), 8),
        "first_rebound": ([0, 1, 2], np.array([3.0, 1.0, 2.0])),
        "rotation_2d": (np.array([0.1, 0.2]),),
        "dot": (q, k),
        "apply_rope": (np.stack([q, k]), np.array([3, 4000])),
        "rope_score": (q, k, 5, 9),
        "rope_half": (q, 7),
        "interleaved_to_half": (q,),
        "alibi_attention": (*heads, np.array([0.5, 0.25])),
        "mean_attention_distance": (weights,),
        "sin_pos": (np.array([0, 3, 9]), 8),
        "add_score": (q, k, 5, 9),
        "offset_scan": (q, k, 2, [3, 10, 100]),
        "spread": ([3.0, 1.0, 2.0],),
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
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b
    # the result is a new array, never a view of an argument
    for a in args:
        if isinstance(a, np.ndarray) and isinstance(out, np.ndarray):
            assert not np.shares_memory(out, a), f"{func} returned a view of its argument"


def test_lists_are_not_modified():
    q, k = (list(v) for v in ref.demo_vectors())
    before = (list(q), list(k))
    ref.apply_rope(q, 5)
    ref.rope_score(q, k, 3, 1)
    ref.add_score(q, k, 3, 1)
    ref.offset_scan(q, k, 2, [3, 10])
    assert (q, k) == before


def test_pos_zero_returns_an_equal_copy():
    x = np.array(X8)
    out = ref.apply_rope(x, 0)
    np.testing.assert_array_equal(out, x)
    out[0] = 99.0
    np.testing.assert_array_equal(x, X8)

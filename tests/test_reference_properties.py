"""Properties of the reference that hold for every input (hypothesis, bounded examples)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import reference as ref

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)

dims = st.integers(1, 128).map(lambda h: 2 * h)
bases = st.floats(100.0, 1e6)
positions = st.integers(0, 4096)
seeds = st.integers(0, 2**32 - 1)


def vectors(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape)


@SETTINGS
@given(d=dims, base=bases, m=positions, n=positions, shift=st.integers(-4096, 4096), seed=seeds)
def test_rope_score_depends_only_on_n_minus_m(d, base, m, n, shift, seed):
    shift = max(shift, -min(m, n))  # keep both positions >= 0
    q, k = vectors(seed, 2, d)
    scale = float(np.linalg.norm(q) * np.linalg.norm(k))
    a = ref.rope_score(q, k, m, n, base)
    b = ref.rope_score(q, k, m + shift, n + shift, base)
    assert abs(a - b) <= 1e-9 * (1.0 + scale)
    # and equals the score of the key alone rotated by the difference: <q, R(n - m) k>
    if n >= m:
        c = ref.dot(q, ref.apply_rope(k, n - m, base))
        assert abs(a - c) <= 1e-9 * (1.0 + scale)


@SETTINGS
@given(d=dims, base=bases, pos=positions, batch=st.integers(1, 5), seed=seeds)
def test_rope_preserves_norms(d, base, pos, batch, seed):
    x = vectors(seed, batch, d)
    pos_arr = np.random.default_rng(seed + 1).integers(0, 4097, size=batch)
    for out in (
        ref.apply_rope(x, pos, base),
        ref.apply_rope(x, pos_arr, base),
        ref.rope_half(x, pos, base),
    ):
        np.testing.assert_allclose(
            np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12
        )


@SETTINGS
@given(
    n=st.integers(1, 12), d=st.integers(1, 16), d_v=st.integers(1, 8), seed=seeds, data=st.data()
)
def test_attention_without_positions_is_permutation_equivariant(n, d, d_v, seed, data):
    perm = np.array(data.draw(st.permutations(range(n))))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Wq, Wk = rng.normal(size=(2, d, d)) / math.sqrt(d)
    Wv = rng.normal(size=(d, d_v))
    out = ref.self_attention(X, Wq, Wk, Wv)
    np.testing.assert_allclose(
        ref.self_attention(X[perm], Wq, Wk, Wv), out[perm], rtol=1e-12, atol=1e-12
    )
    assert ref.permutation_gap(X, Wq, Wk, Wv, perm) <= 1e-12 * (1.0 + np.abs(out).max())


@SETTINGS
@given(d=dims, base=st.floats(1.0001, 1e9), max_len=st.integers(1, 300))
def test_pe_norms_are_sqrt_half_d(d, base, max_len):
    pe = ref.sinusoidal_pe(max_len, d, base)
    np.testing.assert_allclose(np.linalg.norm(pe, axis=1), math.sqrt(d / 2), rtol=1e-13)
    np.testing.assert_allclose(ref.pe_norms(pe), math.sqrt(d / 2), rtol=1e-13)
    assert ref.expected_norm(d) == math.sqrt(d / 2)


@SETTINGS
@given(d=dims, base=bases, max_len=st.integers(2, 400), data=st.data())
def test_closed_form_equals_dot_profile(d, base, max_len, data):
    pos = data.draw(st.integers(0, max_len - 1))
    offsets = data.draw(st.lists(st.integers(-pos, max_len - 1 - pos), min_size=1, max_size=10))
    pe = ref.sinusoidal_pe(max_len, d, base)
    np.testing.assert_allclose(
        ref.dot_profile(pe, pos, offsets),
        ref.closed_form_dot(offsets, d, base),
        rtol=0,
        atol=1e-10 * d,
    )


@SETTINGS
@given(d=dims, base=bases, pos=positions, seed=seeds)
def test_half_split_is_the_permuted_interleaved_rope(d, base, pos, seed):
    x = vectors(seed, d)
    np.testing.assert_allclose(
        ref.rope_half(ref.interleaved_to_half(x), pos, base),
        ref.interleaved_to_half(ref.apply_rope(x, pos, base)),
        rtol=0,
        atol=1e-12 * (1 + np.abs(x).max()),
    )


@SETTINGS
@given(x=st.lists(st.floats(-1e300, 1e300), min_size=1, max_size=20))
def test_softmax_is_a_distribution(x):
    p = ref.softmax(x)
    assert np.all(np.isfinite(p)) and np.all(p >= 0)
    assert abs(p.sum() - 1.0) < 1e-12
    assert np.argmax(p) == np.argmax(x)

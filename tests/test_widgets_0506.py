"""The explorers of 05_rotation and 06_rope, driven headless.

Each explorer is built on the reference functions, its sliders are moved, and the data of
its artists is compared with values computed here independently (plain trigonometry, RoPE
as complex multiplication). The figure and its artists must be the same objects after every
move (updated in place), and the factories must return None while nbgrader runs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import helpers.reference as ref
from helpers.widgets import rope, rotation
from helpers.widgets.base import Explorer

PNG = b"\x89PNG\r\n\x1a\n"


def png(explorer: Explorer) -> bytes:
    """The explorer's current frame (the Image widget holds a memoryview)."""
    return bytes(explorer.image.value)


def rates(d: int, base: float) -> np.ndarray:
    """theta_i = base ** (-2i/d), written out directly."""
    return np.array([base ** (-2.0 * i / d) for i in range(d // 2)])


def tips(segments) -> np.ndarray:
    """(x, y) of the far end of each hand segment."""
    return np.array([np.asarray(seg)[-1] for seg in segments])


def centres_of(segments) -> np.ndarray:
    return np.array([np.asarray(seg)[0] for seg in segments])


# --------------------------------------------------------------------------- 05_rotation


def make_shift(**defaults) -> rotation.ShiftExplorer:
    ex = rotation.shift_explorer(
        sinusoidal_pe=ref.sinusoidal_pe,
        shift_matrix=ref.shift_matrix,
        shift_error=ref.shift_error,
        **defaults,
    )
    assert isinstance(ex, rotation.ShiftExplorer)
    return ex


def test_shift_hands_follow_the_table():
    ex = make_shift()
    fig, after = ex.fig, ex.after
    ex.controls["d"].value = 8
    ex.controls["k"].value = 3
    ex.controls["pos"].value = 5
    assert ex.message.value == ""
    assert ex.fig is fig and ex.after is after, "the figure and its artists are updated in place"
    theta = rates(8, 10000.0)
    assert rotation.shown_pairs(8).tolist() == [0, 1, 2, 3]
    centres = centres_of(ex.before.get_segments())
    r = rotation._RADIUS
    before = (tips(ex.before.get_segments()) - centres) / r
    after = (tips(ex.after.get_segments()) - centres) / r
    np.testing.assert_allclose(
        before, np.stack([np.sin(5 * theta), np.cos(5 * theta)], 1), atol=1e-12
    )
    np.testing.assert_allclose(
        after, np.stack([np.sin(8 * theta), np.cos(8 * theta)], 1), atol=1e-12
    )
    # seed 000: the first two pairs of M(3) @ PE(5) are [0.98936, -0.14550], [0.71736, 0.69671]
    np.testing.assert_allclose(after[:2].ravel(), [0.98936, -0.14550, 0.71736, 0.69671], atol=5e-6)
    x, y = ex.target.get_data()
    np.testing.assert_allclose((np.stack([x, y], 1) - centres) / r, after, atol=1e-12)


def test_shift_arcs_sweep_k_theta_clockwise():
    ex = make_shift(d=8, k=1, pos=0)
    arcs = [np.asarray(a) for a in ex.arcs.get_segments()]
    centres = centres_of(ex.before.get_segments())
    theta = rates(8, 10000.0)
    for arc, c, th in zip(arcs, centres, theta):
        start, end = arc[0] - c, arc[-1] - c
        a0, a1 = math.atan2(start[1], start[0]), math.atan2(end[1], end[0])
        assert a0 == pytest.approx(math.pi / 2)  # pos 0: every hand at twelve o'clock
        assert (a0 - a1) % (2 * math.pi) == pytest.approx(th, abs=1e-9)  # clockwise by k theta


def test_shift_error_panel_measures_every_position():
    ex = make_shift(d=16, k=5, pos=100, base=500.0)
    xs, ys = ex.err_line.get_data()
    assert len(xs) == rotation.MAX_LEN
    assert np.all(np.asarray(ys) < 1e-12)
    assert list(ex.err_mark.get_xdata()) == [100, 100]
    assert "max error" in ex.err_title.get_text()


def test_shift_error_panel_shows_a_clockwise_matrix():
    def clockwise(k, d, base=10000.0):
        return ref.shift_matrix(k, d, base).T  # the known mistake: the other direction

    ex = rotation.ShiftExplorer(
        sinusoidal_pe=ref.sinusoidal_pe,
        shift_matrix=clockwise,
        shift_error=ref.shift_error,
        d=8,
        k=3,
        pos=5,
    )
    _, ys = ex.err_line.get_data()
    # each pair lands at pos - 3 instead of pos + 3: sin(a - b) - sin(a + b) = -2 cos a sin b,
    # cos(a - b) - cos(a + b) = 2 sin a sin b, with a = pos theta_i and b = 3 theta_i
    a = np.multiply.outer(np.arange(rotation.MAX_LEN), rates(8, 10000.0))
    b = 3 * rates(8, 10000.0)
    want = np.max(
        np.maximum(np.abs(2 * np.cos(a) * np.sin(b)), np.abs(2 * np.sin(a) * np.sin(b))), axis=1
    )
    np.testing.assert_allclose(ys, want, atol=1e-12)
    assert np.min(ys) > 0.1, "a clockwise matrix is wrong at every position"


def test_shift_labels_follow_d_and_stub_is_reported():
    ex = make_shift(d=512)
    labels = [t.get_text() for t in ex.labels]
    assert labels[0] == "pair 0" and labels[-1] == "pair 255"
    ex.controls["d"].value = 4
    assert [t.get_text() for t in ex.labels] == ["pair 0", "pair 1"] + [""] * 6

    def stub(k, d, base=10000.0):
        raise NotImplementedError

    broken = rotation.ShiftExplorer(
        sinusoidal_pe=ref.sinusoidal_pe, shift_matrix=stub, shift_error=ref.shift_error
    )
    assert "NotImplementedError" in broken.message.value
    assert png(broken).startswith(PNG)


def test_shift_image_changes_with_every_move():
    ex = make_shift()
    first = png(ex)
    assert first.startswith(PNG)
    ex.controls["pos"].value = 77
    second = png(ex)
    assert second.startswith(PNG) and second != first
    ex.controls["base"].value = 100.0
    assert png(ex) != second


# --------------------------------------------------------------------------- 06_rope


def complex_score(q, k, m, n, base):
    """RoPE written with complex numbers: pair i is q[2i] + 1j q[2i+1], turned by e^{i pos theta}."""
    theta = rates(len(q), base)
    zq = (q[0::2] + 1j * q[1::2]) * np.exp(1j * np.multiply.outer(m, theta))
    zk = (k[0::2] + 1j * k[1::2]) * np.exp(1j * np.multiply.outer(n, theta))
    return np.sum((np.conj(zq) * zk).real, axis=-1)


def make_rope(**defaults) -> rope.RopeExplorer:
    ex = rope.rope_explorer(
        apply_rope=ref.apply_rope,
        rope_score=ref.rope_score,
        turns=ref.turns,
        slow_pairs=ref.slow_pairs,
        demo_vectors=ref.demo_vectors,
        **defaults,
    )
    assert isinstance(ex, rope.RopeExplorer)
    return ex


def test_rope_score_is_flat_at_the_seed_value():
    ex = make_rope()
    assert (ex.controls["m"].value, ex.controls["n"].value, ex.controls["d"].value) == (5, 3, 64)
    _, ys = ex.now.get_data()
    assert ys[0] == pytest.approx(1.3679447, abs=1e-7)  # seed 004
    s, both = ex.both_line.get_data()
    assert len(s) == rope.MAX_LEN
    np.testing.assert_allclose(both, 1.3679447, atol=1e-7)
    assert "1.3679447" in ex.score_title.get_text()


def test_rope_lines_follow_the_sliders():
    ex = make_rope()
    fig, line = ex.fig, ex.both_line
    ex.controls["d"].value = 16
    ex.controls["base"].value = 100.0
    ex.controls["m"].value = 40
    ex.controls["n"].value = 90
    assert ex.message.value == "" and ex.fig is fig and ex.both_line is line
    base = ex.controls["base"].value
    j = np.arange(16.0)
    q, k = np.cos(0.7 * j + 0.3), np.sin(0.4 * j + 1.1)
    s = np.arange(rope.MAX_LEN)
    np.testing.assert_allclose(
        ex.both_line.get_data()[1], complex_score(q, k, 40 + s, 90 + s, base), atol=1e-9
    )
    q_only = complex_score(q, k, 40 + s, np.zeros_like(s), base)
    np.testing.assert_allclose(ex.q_only_line.get_data()[1], q_only, atol=1e-9)
    assert np.ptp(q_only) > 1.0, "rotating only the query must not give a flat line"
    low, high = ex.ax.get_ylim()
    assert low <= np.min(q_only) and np.max(q_only) <= high


@pytest.mark.parametrize(("delta", "slow"), [(1, 32), (16, 28), (256, 19), (4096, 9)])
def test_rope_turns_panel_counts_seed_slow_pairs(delta, slow):
    ex = make_rope()
    ex.controls["n"].value = 0
    ex.controls["m"].value = delta
    xs_slow, ys_slow = ex.slow_dots.get_data()
    xs_fast, ys_fast = ex.fast_dots.get_data()
    assert len(xs_slow) == slow and len(xs_fast) == 32 - slow  # seed 004
    turns = delta * rates(64, 10000.0) / (2 * math.pi)
    np.testing.assert_allclose(ys_slow, turns[turns < 1], rtol=1e-12)
    np.testing.assert_allclose(ys_fast, turns[turns >= 1], rtol=1e-12)
    assert f"slow_pairs = {slow} of 32" in ex.turns_title.get_text()


def test_rope_d_change_resizes_the_turns_axis():
    ex = make_rope()
    ex.controls["d"].value = 512
    assert ex.turns_ax.get_xlim() == pytest.approx((-0.5, 255.5))
    assert len(ex.slow_dots.get_data()[0]) + len(ex.fast_dots.get_data()[0]) == 256


def test_rope_learner_function_for_one_vector_only_still_draws():
    def one_vector(vec, pos, base=10000.0):
        vec = np.asarray(vec, dtype=np.float64)
        if vec.ndim != 1:
            raise ValueError("vec must be one vector")
        return ref.apply_rope(vec, pos, base)

    ex = rope.RopeExplorer(
        apply_rope=one_vector,
        rope_score=ref.rope_score,
        turns=ref.turns,
        slow_pairs=ref.slow_pairs,
        demo_vectors=ref.demo_vectors,
        d=8,
        max_len=64,
    )
    assert ex.message.value == ""
    np.testing.assert_allclose(ex.both_line.get_data()[1], ex.now.get_data()[1][0], atol=1e-9)


def test_rope_stub_is_reported():
    def stub(*args, **kwargs):
        raise NotImplementedError

    ex = rope.RopeExplorer(
        apply_rope=stub, rope_score=stub, turns=stub, slow_pairs=stub, demo_vectors=stub
    )
    assert "NotImplementedError" in ex.message.value
    assert png(ex).startswith(PNG)


# --------------------------------------------------------------------------- both


def test_factories_draw_nothing_while_nbgrader_runs(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert (
        rotation.shift_explorer(
            sinusoidal_pe=ref.sinusoidal_pe,
            shift_matrix=ref.shift_matrix,
            shift_error=ref.shift_error,
        )
        is None
    )
    assert (
        rope.rope_explorer(
            apply_rope=ref.apply_rope,
            rope_score=ref.rope_score,
            turns=ref.turns,
            slow_pairs=ref.slow_pairs,
            demo_vectors=ref.demo_vectors,
        )
        is None
    )


@pytest.mark.parametrize("d", [2, 8, 64])
def test_apply_rows_block_path_and_dense_path(d):
    rng = np.random.default_rng(d)
    rows = rng.normal(size=(7, d))
    block = ref.shift_matrix(5, d, 300.0)
    dense = rng.normal(size=(d, d))
    for M in (block, block.T, dense):
        np.testing.assert_allclose(rotation.apply_rows(M, rows), rows @ M.T, atol=1e-12)
    with pytest.raises(ValueError, match="M must have shape"):
        rotation.apply_rows(np.eye(d + 2), rows)


def test_shift_headline_is_the_learners_shift_error():
    def fixed(k, d, max_len, base=10000.0):
        return 0.125

    ex = rotation.ShiftExplorer(
        sinusoidal_pe=ref.sinusoidal_pe, shift_matrix=ref.shift_matrix, shift_error=fixed, d=8
    )
    assert ex.message.value == ""
    assert "1.2e-01" in ex.err_title.get_text()


def test_rope_vectors_and_slow_count_are_the_learners():
    """Given vectors are cut or repeated to d; the green dots are the learner's slow count."""
    ones = np.ones(4)

    def vectors():
        return ones, 2 * ones

    ex = rope.RopeExplorer(
        apply_rope=ref.apply_rope,
        rope_score=ref.rope_score,
        turns=ref.turns,
        slow_pairs=lambda d, delta, base=10000.0: 3,
        demo_vectors=vectors,
        d=6,
        m=4,
        n=4,
        max_len=16,
    )
    assert ex.message.value == ""
    # the same position for both: the score is q . k = 2 * 6 at every shift
    np.testing.assert_allclose(ex.both_line.get_data()[1], 12.0, atol=1e-12)
    assert list(ex.slow_dots.get_data()[0]) == [0, 1, 2]  # the last 3 of 3 pairs
    assert len(ex.fast_dots.get_data()[0]) == 0
    assert "slow_pairs = 3 of 3" in ex.turns_title.get_text()

"""The explorers of 09_families and 10_long_context, driven headless.

Each explorer is built on the reference functions, its sliders are moved, and the data of
its artists is compared with values computed here independently (T5's bucket boundaries
of the default settings written out, rates written as plain powers, the angle ratio by its
definition). The figure and its artists must be the same objects after every move (updated
in place), a learner's stub must be reported, and the factories must return None while
nbgrader runs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import helpers.reference as ref
from helpers.widgets import families, long_context
from helpers.widgets.base import Explorer

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def interactive_session(monkeypatch):
    """The explorers draw only outside nbgrader: make sure the variable is not inherited."""
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


def png(explorer: Explorer) -> bytes:
    return bytes(explorer.image.value)


def rates(d: int, base: float) -> np.ndarray:
    """theta_i = base ** (-2i/d), written out directly."""
    return np.array([base ** (-2.0 * i / d) for i in range(d // 2)])


def stub(*args, **kwargs):
    raise NotImplementedError


# --------------------------------------------------------------------------- 09_families


def make_families(**defaults) -> families.FamiliesExplorer:
    ex = families.families_explorer(t5_bucket=ref.t5_bucket, t5_bias=ref.t5_bias, **defaults)
    assert isinstance(ex, families.FamiliesExplorer)
    return ex


def test_bucket_dots_hold_t5s_default_buckets():
    ex = make_families()
    assert ex.message.value == ""
    xs_exact, ys_exact = ex.exact_dots.get_data()
    xs_log, ys_log = ex.log_dots.get_data()
    rel = np.concatenate([xs_exact, xs_log])
    assert sorted(rel.tolist()) == list(range(-families.REL_RANGE, families.REL_RANGE + 1))
    # the exact buckets: |rel| < 8, bucket |rel| below the query, 16 + rel above it
    want_exact = np.where(
        np.asarray(xs_exact) > 0, 16 + np.asarray(xs_exact), -np.asarray(xs_exact)
    )
    np.testing.assert_array_equal(ys_exact, want_exact)
    assert np.all(np.abs(xs_exact) < 8) and np.all(np.abs(xs_log) >= 8)
    bucket = dict(zip(np.asarray(xs_log).tolist(), np.asarray(ys_log).tolist()))
    # transformers' buckets (COURSE_SPEC.md, notebook 09): 8..11 -> 24, 91 and past -> 31
    assert bucket[8] == bucket[11] == 24 and bucket[12] == 25
    assert bucket[90] == 30 and bucket[91] == bucket[300] == 31
    assert bucket[-91] == bucket[-300] == 15
    assert "starts 91 back" in ex.last_text.get_text()


def test_bucket_sliders_change_layout_and_direction():
    ex = make_families()
    fig, dots = ex.fig, ex.log_dots
    ex.controls["bidirectional"].value = False
    assert ex.fig is fig and ex.log_dots is dots
    xs, ys = ex.exact_dots.get_data()
    future = np.asarray(xs) > 0
    assert np.all(np.asarray(ys)[future] == 0), "future keys fall in bucket 0 of a decoder"
    assert "starts 113 back" in ex.last_text.get_text()
    ex.controls["num_buckets"].value = 8
    ex.controls["max_distance"].value = 40
    assert ex.message.value == ""
    assert ex.ax.get_ylim() == (-1.0, 8.0)
    segments = [np.asarray(s) for s in ex.limits.get_segments()]
    assert sorted(s[0, 0] for s in segments) == [-40.0, 40.0]
    rel = np.arange(-families.REL_RANGE, families.REL_RANGE + 1)
    np.testing.assert_array_equal(ex.buckets, ref.t5_bucket(rel, False, 8, 40))


def test_bias_matrix_is_the_stand_in_table_by_distance():
    ex = make_families(num_buckets=16, max_distance=64)
    shown = np.asarray(ex.matrix.get_array())
    assert shown.shape == (families.SIZE, families.SIZE)
    table = families.stand_in_bias(16, True)[:, 0]
    for i, j in [(0, 0), (10, 3), (3, 10), (63, 0), (0, 63)]:
        assert shown[i, j] == table[int(ref.t5_bucket(j - i, True, 16, 64))]
    # constant along diagonals: the bias depends on j - i only
    for offset in (-20, -1, 0, 5):
        assert np.ptp(np.diagonal(shown, offset=offset)) == 0.0
    assert shown[5, 5] == 0.0 and shown[5, 4] < 0.0 and shown[4, 5] < 0.0


def test_stand_in_bias_falls_with_distance_and_halves_the_future():
    table = families.stand_in_bias(8, True)[:, 0]
    np.testing.assert_allclose(table[:4], -np.log1p(np.arange(4)))
    np.testing.assert_allclose(table[4:], -0.5 * np.log1p(np.arange(4)))
    np.testing.assert_allclose(families.stand_in_bias(6, False)[:, 0], -np.log1p(np.arange(6)))
    assert families.exact_mask(np.array([-3, 0, 3, 9]), 16, True).tolist() == [
        True,
        True,
        True,
        False,
    ]


def test_families_stub_and_wrong_shape_are_reported():
    ex = families.FamiliesExplorer(t5_bucket=stub, t5_bias=stub)
    assert "NotImplementedError" in ex.message.value
    assert png(ex).startswith(PNG)
    flat = families.FamiliesExplorer(t5_bucket=lambda rel, *a: np.zeros(3), t5_bias=ref.t5_bias)
    assert "shape" in flat.message.value


# --------------------------------------------------------------------------- 10_long_context


def make_long(**defaults) -> long_context.LongContextExplorer:
    ex = long_context.long_context_explorer(
        thetas=ref.thetas,
        pi_thetas=ref.pi_thetas,
        ntk_thetas=ref.ntk_thetas,
        dynamic_ntk_thetas=ref.dynamic_ntk_thetas,
        yarn_thetas=ref.yarn_thetas,
        llama3_thetas=ref.llama3_thetas,
        unseen_angle_pairs=ref.unseen_angle_pairs,
        **defaults,
    )
    assert isinstance(ex, long_context.LongContextExplorer)
    return ex


SPEC_UNSEEN = {  # COURSE_SPEC.md: d = 128, base 1e4, L = 4096, factors 2 .. 32
    "plain RoPE": 18,
    "position interpolation": 0,
    "NTK-aware": 17,
    "dynamic NTK": 0,
    "YaRN": 0,
    "Llama 3": 0,
}


@pytest.mark.parametrize("factor", [2, 8, 32])
def test_unseen_counts_are_the_spec_table(factor):
    ex = make_long()
    ex.controls["factor"].value = factor
    assert ex.message.value == ""
    assert ex.unseen == SPEC_UNSEEN
    text = ex.counts.get_text()
    assert "of 18 slow pairs" in text and "NTK-aware" in text and " 17" in text


def test_rate_lines_are_each_methods_rates():
    ex = make_long()
    fig, lines = ex.fig, list(ex.rate_lines)
    ex.controls["d"].value = 64
    ex.controls["base"].value = 500000.0
    ex.controls["factor"].value = 4
    assert ex.fig is fig and ex.rate_lines == lines and ex.message.value == ""
    base = ex.controls["base"].value
    plain = rates(64, base)
    by_label = {label: line for (label, _), line in zip(long_context.METHODS, ex.rate_lines)}
    np.testing.assert_allclose(by_label["plain RoPE"].get_data()[1], plain, rtol=1e-12)
    np.testing.assert_allclose(
        by_label["position interpolation"].get_data()[1], plain / 4, rtol=1e-12
    )
    ntk = rates(64, base * 4 ** (64 / 62))
    np.testing.assert_allclose(by_label["NTK-aware"].get_data()[1], ntk, rtol=1e-12)
    dynamic = rates(64, base * (4 * 4 - 3) ** (64 / 62))  # seq_len = 4 L: effective factor 13
    np.testing.assert_allclose(by_label["dynamic NTK"].get_data()[1], dynamic, rtol=1e-12)
    assert ex.ax_rate.get_xlim() == pytest.approx((-0.5, 31.5))


def test_ratio_lines_and_slow_band_follow_the_training_length():
    ex = make_long(d=64, factor=4, train_len=1024)
    theta = rates(64, 10000.0)
    slow = np.flatnonzero(1023 * theta < 2 * math.pi)
    x0 = ex.slow_band.get_x()
    assert x0 == slow[0] - 0.5 and ex.slow_band.get_width() == 32 - slow[0]
    by_label = {label: line for (label, _), line in zip(long_context.METHODS, ex.ratio_lines)}
    # plain RoPE: (4 L - 1) theta / (L theta) = 4095 / 1024 for every pair
    np.testing.assert_allclose(by_label["plain RoPE"].get_data()[1], 4095 / 1024, rtol=1e-12)
    np.testing.assert_allclose(
        by_label["position interpolation"].get_data()[1], 4095 / 4096, rtol=1e-12
    )
    ex.controls["train_len"].value = 8192
    slow_long = np.flatnonzero(8191 * theta < 2 * math.pi)
    assert ex.slow_band.get_x() == slow_long[0] - 0.5 and slow_long.size < slow.size
    assert f"of {slow_long.size} slow pairs" in ex.counts.get_text()


def test_a_stub_method_is_left_out_and_named():
    ex = long_context.LongContextExplorer(
        thetas=ref.thetas,
        pi_thetas=ref.pi_thetas,
        ntk_thetas=stub,
        dynamic_ntk_thetas=ref.dynamic_ntk_thetas,
        yarn_thetas=stub,
        llama3_thetas=ref.llama3_thetas,
        unseen_angle_pairs=ref.unseen_angle_pairs,
    )
    assert "ntk_thetas (NotImplementedError)" in ex.message.value
    assert "yarn_thetas (NotImplementedError)" in ex.message.value
    assert "dynamic_ntk_thetas" not in ex.message.value
    assert set(ex.unseen) == {"plain RoPE", "position interpolation", "dynamic NTK", "Llama 3"}
    by_label = {label: line for (label, _), line in zip(long_context.METHODS, ex.rate_lines)}
    assert len(by_label["YaRN"].get_data()[0]) == 0
    assert png(ex).startswith(PNG)
    everything = long_context.LongContextExplorer(*(stub,) * 7)
    assert "thetas (NotImplementedError)" in everything.message.value


def test_long_context_image_changes_with_every_move():
    ex = make_long()
    first = png(ex)
    ex.controls["factor"].value = 2
    second = png(ex)
    assert second.startswith(PNG) and second != first
    ex.controls["d"].value = 32
    assert png(ex) != second


# --------------------------------------------------------------------------- both


def test_factories_draw_nothing_while_nbgrader_runs(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert families.families_explorer(t5_bucket=ref.t5_bucket, t5_bias=ref.t5_bias) is None
    assert (
        long_context.long_context_explorer(
            thetas=ref.thetas,
            pi_thetas=ref.pi_thetas,
            ntk_thetas=ref.ntk_thetas,
            dynamic_ntk_thetas=ref.dynamic_ntk_thetas,
            yarn_thetas=ref.yarn_thetas,
            llama3_thetas=ref.llama3_thetas,
            unseen_angle_pairs=ref.unseen_angle_pairs,
        )
        is None
    )


def test_importing_the_explorer_modules_loads_no_matplotlib():
    """The grading kernel imports these modules with the answer cells' notebook but draws
    nothing: matplotlib and ipywidgets must wait until an explorer is built."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from helpers.widgets import families, long_context\n"
        "print(sorted(m for m in ('matplotlib', 'ipywidgets') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["[]"]

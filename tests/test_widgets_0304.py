"""The explorers and static figures of 03_norm and 04_decay, driven headless.

Each explorer is built on the reference functions, its sliders are moved, and the data of
its artists is compared with values computed here independently (direct formulas, the
seed 000 numbers of COURSE_SPEC.md), never with the code under test.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import helpers.reference as ref
from helpers import plots
from helpers.widgets import base, decay, norm

SEED_OFFSETS = [0, 1, 2, 3, 5, 8, 10, 15, 20]
SEED_DOTS = [16.00, 15.31, 13.73, 12.27, 11.78, 10.52, 10.06, 8.41, 10.47]


def direct_pe(max_len: int, d: int, base: float = 10000.0) -> np.ndarray:
    """The sinusoidal table straight from the paper's formula: pos / base ** (2i / d)."""
    pos = np.arange(max_len, dtype=np.float64)[:, None]
    i = np.arange(d // 2, dtype=np.float64)[None, :]
    angle = pos / base ** (2 * i / d)
    out = np.zeros((max_len, d))
    out[:, 0::2] = np.sin(angle)
    out[:, 1::2] = np.cos(angle)
    return out


def direct_bound(d: int, max_dist: int, base: float = 10000.0) -> np.ndarray:
    """RoFormer's relative bound with explicit partial sums (loops: small d only)."""
    out = []
    for r in range(max_dist + 1):
        partial, total = 0j, 0.0
        for i in range(d // 2):
            partial += complex(
                math.cos(r * base ** (-2 * i / d)), math.sin(r * base ** (-2 * i / d))
            )
            total += abs(partial)
        out.append(total / (d // 2))
    return np.array(out)


def make_norm(**kwargs) -> norm.NormExplorer:
    explorer = norm.norm_explorer(
        sinusoidal_pe=ref.sinusoidal_pe,
        pe_norms=ref.pe_norms,
        expected_norm=ref.expected_norm,
        min_pairwise_distance=ref.min_pairwise_distance,
        **kwargs,
    )
    assert explorer is not None and explorer.message.value == ""
    return explorer


def make_decay(**kwargs) -> decay.DecayExplorer:
    explorer = decay.decay_explorer(
        sinusoidal_pe=ref.sinusoidal_pe,
        dot_profile=ref.dot_profile,
        closed_form_dot=ref.closed_form_dot,
        first_rebound=ref.first_rebound,
        rope_decay_bound=ref.rope_decay_bound,
        **kwargs,
    )
    assert explorer is not None and explorer.message.value == ""
    return explorer


# --------------------------------------------------------------------------- norm explorer


def test_norm_explorer_starts_on_the_seed_setting():
    ex = make_norm()
    x, y = ex.norm_line.get_data()
    assert np.array_equal(x, np.arange(100))
    assert np.allclose(y, 4.0, atol=1e-12)  # seed 000: every norm is 4.0 at d = 32
    assert np.allclose(ex.target_line.get_ydata(), 4.0)
    assert "1.1716" in ex.dist_text.get_text()  # seed 000: the closest two rows
    assert bytes(ex.image.value).startswith(b"\x89PNG")


def test_norm_explorer_sliders_update_the_artists_in_place():
    ex = make_norm()
    fig, line, image, png = ex.fig, ex.norm_line, ex.dist_image, bytes(ex.image.value)
    ex.controls["d"].value = 8
    ex.controls["max_len"].value = 40
    ex.controls["base"].value = 100.0
    assert ex.message.value == ""
    assert ex.fig is fig and ex.norm_line is line and ex.dist_image is image
    assert ex.fig.axes == [ex.ax_norm, ex.ax_dist]  # nothing added on the way
    assert bytes(ex.image.value) != png

    pe = direct_pe(40, 8, 100.0)
    x, y = line.get_data()
    assert np.array_equal(x, np.arange(40))
    assert np.allclose(y, math.sqrt(4.0), atol=1e-12)
    assert np.allclose(ex.target_line.get_ydata(), 2.0)
    brute = np.linalg.norm(pe[:, None, :] - pe[None, :, :], axis=2)
    shown = np.asarray(image.get_array())
    assert shown.shape == (40, 40)
    assert np.allclose(shown, brute, atol=1e-7)
    off_diagonal = brute[~np.eye(40, dtype=bool)]
    assert f"{off_diagonal.min():.4f}" in ex.dist_text.get_text()
    assert image.get_extent() == [-0.5, 39.5, 39.5, -0.5]


def test_norm_explorer_shows_long_tables_with_a_stride():
    ex = make_norm(d=16, max_len=300)
    pe = direct_pe(300, 16)
    brute = np.linalg.norm(pe[:, None, :] - pe[None, :, :], axis=2)
    shown = np.asarray(ex.dist_image.get_array())
    assert shown.shape == (150, 150)
    assert np.allclose(shown, brute[::2, ::2], atol=1e-7)
    assert ex.dist_image.get_extent() == [-0.5, 299.5, 299.5, -0.5]


def test_blitting_keeps_the_background_until_the_limits_change():
    ex = make_norm()
    background = ex._background
    ex.controls["base"].value = 1000.0  # same axes: only the dynamic artists are redrawn
    assert ex._background is background
    layer = ex._layer
    ex.controls["d"].value = 64  # sqrt(d/2) moves the y-limits: the moving axis is redrawn
    assert ex._background is background and ex._layer is not layer
    assert ex.ax_norm.get_ylim() != (0.0, 5.0)
    fresh = make_norm(d=64, base=1000.0)  # a figure drawn directly at the same values
    assert bytes(ex.image.value) == bytes(fresh.image.value)
    full = bytes(ex.image.value)
    ex.controls["base"].value = 10000.0
    ex.controls["base"].value = 1000.0  # back to the same state through the blitted path
    assert bytes(ex.image.value) == full


def test_nice_ceil_rounds_up_to_a_short_list_of_values():
    assert base.nice_ceil(5.0) == 5.0
    assert base.nice_ceil(5.01) == 6.0
    assert base.nice_ceil(17.6) == 20.0
    assert base.nice_ceil(0.034) == pytest.approx(0.04)
    assert base.nice_ceil(81.0) == 100.0
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="x"):
            base.nice_ceil(bad)


def test_norm_explorer_marks_a_closest_pair():
    ex = make_norm(d=4, max_len=100)
    pe = direct_pe(100, 4)
    (b, a), _ = ex.closest.get_offsets()
    brute = np.linalg.norm(pe[:, None, :] - pe[None, :, :], axis=2) + np.diag(np.full(100, np.inf))
    assert abs(np.linalg.norm(pe[int(a)] - pe[int(b)]) - brute.min()) < 1e-9
    assert a != b


def test_pairwise_distances_matches_the_direct_differences():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(30, 6))
    direct = np.linalg.norm(x[:, None, :] - x[None, :, :], axis=2)
    norms = np.sqrt(np.sum(x * x, axis=1))
    assert np.allclose(norm.pairwise_distances(x, norms), direct, atol=1e-9)
    assert np.all(np.diag(norm.pairwise_distances(x, norms)) == 0)
    with pytest.raises(ValueError, match="pe"):
        norm.pairwise_distances(np.zeros(5), np.zeros(5))
    with pytest.raises(ValueError, match="norms"):
        norm.pairwise_distances(x, norms[:-1])


# --------------------------------------------------------------------------- decay explorer


def test_decay_explorer_reproduces_the_seed_table():
    ex = make_decay(d=32, pos=25, max_offset=20)
    ks, measured = ex.measured_line.get_data()
    assert np.array_equal(ks, np.arange(21))
    assert np.allclose(np.asarray(measured)[SEED_OFFSETS], SEED_DOTS, atol=0.005)
    _, closed = ex.closed_line.get_data()
    assert np.allclose(np.asarray(closed)[SEED_OFFSETS], SEED_DOTS, atol=0.005)
    # Full resolution: the profile first rises between k = 4 and k = 5 (computed here).
    direct = direct_pe(46, 32)
    profile = direct[25 + np.arange(21)] @ direct[25]
    first_up = 1 + int(np.nonzero(np.diff(profile) > 0)[0][0])
    assert ex.rebound_line.get_xdata()[0] == first_up
    assert ex.rebound_line.get_visible()
    assert abs(ex.bound_line.get_ydata()[0] - 8.5) < 1e-12  # (d/2 + 1) / 2


def test_decay_explorer_sliders_update_the_artists_in_place():
    ex = make_decay()
    fig, measured_line, bound_line = ex.fig, ex.measured_line, ex.bound_line
    png = bytes(ex.image.value)
    ex.controls["d"].value = 12
    ex.controls["base"].value = 1000.0
    ex.controls["pos"].value = 3000
    ex.controls["max_offset"].value = 60
    assert ex.message.value == ""
    assert ex.fig is fig and ex.measured_line is measured_line and ex.bound_line is bound_line
    assert ex.fig.axes == [ex.ax_dot, ex.ax_bound]
    assert bytes(ex.image.value) != png

    table = direct_pe(3061, 12, 1000.0)
    expected = table[3000:3061] @ table[3000]
    ks, measured = measured_line.get_data()
    assert np.array_equal(ks, np.arange(61))
    assert np.allclose(measured, expected, atol=1e-9)
    i = np.arange(6)
    closed = np.cos(np.arange(61)[:, None] / 1000.0 ** (2 * i / 12)).sum(axis=1)
    assert np.allclose(ex.closed_line.get_data()[1], closed, atol=1e-9)
    assert np.allclose(bound_line.get_ydata(), direct_bound(12, 60, 1000.0), atol=1e-9)
    assert ex.ax_dot.get_xlim() == (0.0, 60.0)


def test_decay_explorer_profile_does_not_depend_on_pos():
    ex = make_decay(d=16, max_offset=40)
    first = np.array(ex.measured_line.get_data()[1])
    ex.controls["pos"].value = 2500
    second = np.array(ex.measured_line.get_data()[1])
    assert np.allclose(first, second, atol=1e-10)
    i = np.arange(8)
    assert np.allclose(second, np.cos(np.arange(41)[:, None] / 1e4 ** (2 * i / 16)).sum(axis=1))


def test_decay_explorer_hides_the_rebound_line_when_there_is_none():
    def never_rises(offsets, profile):
        return None

    ex = decay.DecayExplorer(
        ref.sinusoidal_pe, ref.dot_profile, ref.closed_form_dot, never_rises, ref.rope_decay_bound
    )
    assert ex.message.value == ""
    assert not ex.rebound_line.get_visible()


# --------------------------------------------------------------------------- both


def stub(*args, **kwargs):
    raise NotImplementedError()


def test_a_stub_is_reported_not_raised():
    ex = norm.norm_explorer(
        sinusoidal_pe=ref.sinusoidal_pe,
        pe_norms=stub,
        expected_norm=ref.expected_norm,
        min_pairwise_distance=ref.min_pairwise_distance,
    )
    assert "NotImplementedError" in ex.message.value
    ex = decay.decay_explorer(
        sinusoidal_pe=ref.sinusoidal_pe,
        dot_profile=ref.dot_profile,
        closed_form_dot=stub,
        first_rebound=ref.first_rebound,
        rope_decay_bound=ref.rope_decay_bound,
    )
    assert "NotImplementedError" in ex.message.value
    assert bytes(ex.image.value).startswith(b"\x89PNG")


@pytest.mark.parametrize("value", ["validate", "autograde"])
def test_factories_draw_nothing_under_nbgrader(monkeypatch, value):
    monkeypatch.setenv("NBGRADER_EXECUTION", value)
    assert (
        norm.norm_explorer(
            sinusoidal_pe=stub, pe_norms=stub, expected_norm=stub, min_pairwise_distance=stub
        )
        is None
    )
    assert (
        decay.decay_explorer(
            sinusoidal_pe=stub,
            dot_profile=stub,
            closed_form_dot=stub,
            first_rebound=stub,
            rope_decay_bound=stub,
        )
        is None
    )
    assert plots.ratio_figure([32], [0.25], [1.41])._repr_png_() is None


def test_widget_modules_do_not_import_the_reference():
    for module in (norm, decay, plots):
        assert "helpers.reference" not in Path(module.__file__).read_text(encoding="utf-8")


# --------------------------------------------------------------------------- static figures


def test_pair_energy_bars_stack_to_one():
    pe = direct_pe(30, 8)
    fig = plots.pair_energy_figure(pe, [0, 25]).fig
    assert len(fig.axes) == 2
    sin_bars, cos_bars = fig.axes[1].containers
    tops = [s.get_height() + c.get_height() for s, c in zip(sin_bars, cos_bars)]
    assert np.allclose(tops, 1.0)
    assert np.allclose([s.get_height() for s in sin_bars], pe[25, 0::2] ** 2)
    with pytest.raises(ValueError, match="positions"):
        plots.pair_energy_figure(pe, [30])
    with pytest.raises(ValueError, match="pe"):
        plots.pair_energy_figure(np.zeros((3, 5)), [0])


def test_ratio_and_profile_figures():
    fig = plots.ratio_figure([32, 512], [0.25, 0.0625], [1.414, 1.414]).fig
    heights = [bar.get_height() for bar in fig.axes[0].patches]
    assert np.allclose(heights, [0.25, 0.0625, 1.414, 1.414])
    with pytest.raises(ValueError, match="same"):
        plots.ratio_figure([32], [0.25, 0.1], [1.4])
    ks = np.arange(50)
    picture = plots.profile_figure(
        {"d = 8": (ks, np.cos(ks))}, (SEED_OFFSETS, SEED_DOTS), log_k=True
    )
    fig = picture.fig
    line, points = fig.axes[0].lines[:2]
    assert np.allclose(line.get_ydata(), np.cos(ks))
    assert np.allclose(points.get_ydata(), SEED_DOTS)
    assert fig.axes[0].get_xscale() == "symlog"
    with pytest.raises(ValueError, match="curves"):
        plots.profile_figure({})
    image = picture._repr_png_()
    assert image is not None and image.startswith(b"\x89PNG")


def test_norm_explorer_circles_follow_the_learners_minimum():
    """The circles mark the pair at the learner's distance: 0 (a row against itself) is shown."""

    def with_itself(pe):  # the known mistake: the diagonal is included
        pe = np.asarray(pe)
        return float(np.min(np.linalg.norm(pe[:, None, :] - pe[None, :, :], axis=2)))

    ex = norm.NormExplorer(
        ref.sinusoidal_pe, ref.pe_norms, ref.expected_norm, with_itself, d=8, max_len=30
    )
    assert ex.message.value == ""
    (x, y), _ = ex.closest.get_offsets()
    assert x == y
    assert "yours: min 0.0000" in ex.dist_text.get_text()

"""The explorers of 11_rope_nd, driven headless.

Each explorer is built on the reference functions, its sliders are moved, and the data of
its artists is compared with values computed here another way (the score of the demo
vectors from complex numbers, Qwen2-VL's ids of the spec's example written out). The
figure and its artists must be the same objects after every move (updated in place), a
learner's stub must be reported, and the factories must return None while nbgrader runs.
"""

from __future__ import annotations

import numpy as np
import pytest

import helpers.reference as ref
from helpers.widgets import rope_nd

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def interactive_session(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


def stub(*args, **kwargs):
    raise NotImplementedError


def make_patches(**defaults) -> rope_nd.PatchScoreExplorer:
    ex = rope_nd.patch_score_explorer(
        patch_positions=ref.patch_positions,
        apply_rope_2d=ref.apply_rope_2d,
        axial_freqs=ref.axial_freqs,
        mixed_freqs=ref.mixed_freqs,
        **defaults,
    )
    assert isinstance(ex, rope_nd.PatchScoreExplorer)
    return ex


def complex_scores(fx, fy, grid, r, c) -> np.ndarray:
    """Re(sum_j conj(z_q,j) z_k,j e^{i (angle of the key - angle of the query)}) / (|q| |k|)."""
    d = 2 * len(fx)
    j = np.arange(d)
    q, k = np.cos(0.7 * j + 0.3), np.sin(0.4 * j + 1.1)
    zq, zk = q[0::2] + 1j * q[1::2], k[0::2] + 1j * k[1::2]
    rows, cols = np.mgrid[0:grid, 0:grid]
    delta = (cols - c)[..., None] * fx + (rows - r)[..., None] * fy
    s = np.real(np.sum(np.conj(zq) * zk * np.exp(1j * delta), axis=-1))
    return s / (np.linalg.norm(q) * np.linalg.norm(k))


def test_score_maps_are_the_scores_of_every_patch():
    ex = make_patches(grid=12, row=3, col=7, d=32, base=100.0, phi=0.6)
    assert ex.message.value == "" and bytes(ex.image.value).startswith(PNG)
    axial = complex_scores(*ref.axial_freqs(32, 100.0), 12, 3, 7)
    mixed = complex_scores(*ref.mixed_freqs(32, 10.0, 0.6), 12, 3, 7)
    np.testing.assert_allclose(ex.scores["axial"], axial, atol=1e-12)
    np.testing.assert_allclose(ex.scores["mixed"], mixed, atol=1e-12)
    np.testing.assert_allclose(ex.maps[0].get_array(), axial, atol=1e-12)
    assert ex.marks[0].get_data()[0][0] == pytest.approx(7.5 / 12)


def test_the_map_follows_the_query_and_axial_has_no_interaction():
    ex = make_patches(grid=16, row=5, col=5, d=64)
    fig, maps = ex.fig, list(ex.maps)
    before = ex.scores["axial"].copy()
    ex.controls["row"].value = 8
    ex.controls["col"].value = 9
    assert ex.fig is fig and ex.maps == maps and ex.message.value == ""
    # only the offset counts: the map moved by (3, 4)
    np.testing.assert_allclose(ex.scores["axial"][3:, 4:], before[:-3, :-4], atol=1e-12)
    assert ex.interaction["axial"] < 1e-12
    assert ex.interaction["mixed"] > 0.05
    assert "e-" in ex.notes[0].get_text()
    ex.controls["phi"].value = 0.0  # RoPE-Axial: no interaction either
    assert ex.interaction["mixed"] < 1e-12


def test_a_query_outside_a_smaller_grid_is_clipped():
    ex = make_patches(grid=16, row=15, col=15)
    ex.controls["grid"].value = 4
    assert ex.message.value == "" and ex.scores["axial"].shape == (4, 4)
    assert ex.marks[0].get_data()[0][0] == pytest.approx(3.5 / 4)


def test_a_stub_is_reported_and_the_other_map_drawn():
    ex = rope_nd.PatchScoreExplorer(ref.patch_positions, ref.apply_rope_2d, ref.axial_freqs, stub)
    assert "mixed_freqs" in ex.message.value and "NotImplementedError" in ex.message.value
    assert "axial" in ex.scores and "mixed" not in ex.scores


def test_a_one_vector_apply_rope_2d_works_too():
    def one_at_a_time(vec, positions, freqs_x, freqs_y):
        if np.ndim(vec) != 1:
            raise ValueError("one vector at a time")
        return ref.apply_rope_2d(vec, positions, freqs_x, freqs_y)

    ex = rope_nd.PatchScoreExplorer(
        ref.patch_positions, one_at_a_time, ref.axial_freqs, ref.mixed_freqs, grid=6, d=16
    )
    assert ex.message.value == ""
    np.testing.assert_allclose(
        ex.scores["axial"], complex_scores(*ref.axial_freqs(16, 100.0), 6, 5, 5), atol=1e-12
    )


def make_mrope(**defaults) -> rope_nd.MropeExplorer:
    ex = rope_nd.mrope_explorer(mrope_position_ids=ref.mrope_position_ids, **defaults)
    assert isinstance(ex, rope_nd.MropeExplorer)
    return ex


def test_mrope_lines_are_the_spec_example():
    ex = make_mrope(text_before=2, grid_h=4, grid_w=6, merge=2, text_after=2)
    assert ex.message.value == ""
    want = [
        [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
        [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
        [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
    ]
    for line, row in zip(ex.id_lines, want):
        assert line.get_data()[1].tolist() == row
    assert ex.count_line.get_xdata()[0] == 8  # the first token after the image
    assert ex.count_mark.get_data()[1][0] == 8  # h * w = 6 after s = 2
    text = ex.note.get_text()
    assert "starts at 5 = s + max(h, w)" in text and "s + h·w = 8" in text


def test_mrope_moves_update_in_place_and_round_the_grid():
    ex = make_mrope()
    fig, lines = ex.fig, list(ex.id_lines)
    ex.controls["merge"].value = 3
    ex.controls["grid_h"].value = 7  # rounded down to 6
    assert ex.fig is fig and ex.id_lines == lines and ex.message.value == ""
    assert "6 x 12 patches merged 3 x 3 = 2 x 4 = 8 tokens" in ex.note.get_text()
    assert ex.ids[:, 4 + 8].tolist() == [8, 8, 8]  # 4 + max(2, 4)
    ex.controls["text_after"].value = 10
    assert ex.ids.shape == (3, 4 + 8 + 10)
    assert ex.ax.get_xlim() == pytest.approx((-0.5, 21.5))


def test_mrope_stub_is_reported():
    ex = rope_nd.MropeExplorer(stub)
    assert "mrope_position_ids" in ex.message.value


def test_factories_draw_nothing_while_nbgrader_runs(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert rope_nd.patch_score_explorer(stub, stub, stub, stub) is None
    assert rope_nd.mrope_explorer(stub) is None


def make_budget(**defaults) -> rope_nd.MropeExplorer:
    return make_mrope(
        mrope_angles=ref.mrope_angles,
        mrope_interleaved_angles=ref.mrope_interleaved_angles,
        grid_h=32,
        grid_w=32,
        merge=2,
        **defaults,
    )


def test_budget_panel_toggles_between_the_two_layouts():
    """Blocks: the width follows the 24 slowest pairs (40 .. 63) and its fastest pair turns
    15 * 1.78e-4 = 0.0027 rad across a 16 x 16 image; the toggle shows Qwen3-VL's interleave:
    t, h, w in turn up to pair 59 and the width's fastest pair (pair 2) at 15 * 0.649."""
    ex = make_budget()
    assert ex.message.value == "" and len(ex.bars) == 64
    axis, turn = ex.turns
    assert np.flatnonzero(axis == 2).tolist() == list(range(40, 64))
    assert turn[axis == 2].max() == pytest.approx(15 * 1e6 ** (-80 / 128), rel=1e-12)
    assert "0.0027 across 16 columns (w)" in ex.budget_note.get_text()
    bars = list(ex.bars)
    ex.controls["interleaved"].value = True
    assert ex.bars == bars and ex.message.value == ""  # the same bars, updated in place
    axis, turn = ex.turns
    assert axis[:60].tolist() == [0, 1, 2] * 20 and axis[60:].tolist() == [0] * 4
    assert turn[2] == pytest.approx(15 * 1e6 ** (-4 / 128), rel=1e-12)
    assert "interleaved (Qwen3-VL) [24, 20, 20]" in ex.budget_note.get_text()
    assert ex.bars[2].get_height() == pytest.approx(turn[2])


def test_budget_panel_follows_the_image():
    ex = make_budget(interleaved=True)
    ex.controls["grid_w"].value = 8  # 4 columns of tokens: the width turns over 3 steps
    axis, turn = ex.turns
    assert axis[2] == 2  # pair 2 follows the width
    assert turn[2] == pytest.approx(3 * 1e6 ** (-4 / 128), rel=1e-12)


def test_budget_panel_reports_a_stub_and_keeps_the_ids():
    ex = make_mrope(mrope_angles=ref.mrope_angles, mrope_interleaved_angles=stub)
    assert ex.message.value == "" and ex.ids is not None  # blocks drawn; interleave not asked
    ex.controls["interleaved"].value = True
    assert "mrope_interleaved_angles" in ex.message.value
    assert ex.ids is not None  # the id panel is still drawn

"""The explorers of 01_order and 02_sincos, driven headless, and their static figures.

Each explorer is built with the reference functions, its sliders are moved, and the data
of its artists is compared with values computed here from the formulas (softmax, the
sin/cos table, clock hands), never read back from the code under test.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from PIL import Image

import helpers.reference as ref
from helpers.plots import Picture, norm_bars, pe_heatmaps, wavelength_figure
from helpers.widgets import order, sincos
from helpers.widgets.base import Explorer


def table(n: int, d: int, base: float = 10000.0, start: int = 0) -> np.ndarray:
    """The sin/cos table from its definition, one entry at a time (positions start..)."""
    out = np.zeros((n, d))
    for row in range(n):
        for j in range(d):
            angle = (start + row) / base ** (2 * (j // 2) / d)
            out[row, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return out


def weights(Z: np.ndarray, Wq: np.ndarray, Wk: np.ndarray) -> np.ndarray:
    """Attention weights exp(s) / sum exp(s), s = Z Wq (Z Wk)^T / sqrt(d_k), row by row."""
    s = (Z @ Wq) @ (Z @ Wk).T / math.sqrt(Wq.shape[1])
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


def set_values(explorer: Explorer, **values) -> None:
    for name, value in values.items():
        explorer.controls[name].value = value


# --------------------------------------------------------------------------- 01_order


def order_inputs(explorer, n, d):
    """The word vectors and projections the explorer holds, sliced as documented."""
    X = explorer.words_full[:n, :d]
    W = explorer.w_full[:, :d, : min(d, order.HEAD_DIM)] / math.sqrt(d)
    return X, W


def test_order_without_positions_the_maps_agree():
    explorer = order.order_explorer(
        attention=ref.attention, position_table=ref.sinusoidal_pe, n=4, d=8, shuffle=0
    )
    assert isinstance(explorer, order.OrderExplorer)
    fig, images = explorer.fig, list(explorer.images)
    set_values(explorer, n=5, shuffle=3)
    assert explorer.message.value == ""
    X, W = order_inputs(explorer, 5, 8)
    expected = weights(X, W[0], W[1])
    original, put_back, diff = (np.asarray(im.get_array()) for im in explorer.images)
    assert original.shape == (5, 5)
    np.testing.assert_allclose(original, expected, rtol=1e-12, atol=1e-15)
    perm = explorer.last["perm"]
    assert sorted(perm) == list(range(5)) and list(perm) != list(range(5))
    shuffled = weights(X[perm], W[0], W[1])
    inv = np.argsort(perm)
    np.testing.assert_allclose(put_back, shuffled[np.ix_(inv, inv)], rtol=1e-12, atol=1e-15)
    assert np.max(diff) < 1e-12  # permutation equivariance
    assert explorer.fig is fig and explorer.images == images  # updated in place
    assert explorer.images[0].get_extent() == [-0.5, 4.5, 4.5, -0.5]


def test_order_positions_after_shuffling_change_the_map():
    explorer = order.OrderExplorer(ref.attention, ref.sinusoidal_pe, n=6, d=16, shuffle=2)
    before = explorer.image.value
    set_values(explorer, positions=True, base=100.0, pos=7)
    assert explorer.image.value != before
    X, W = order_inputs(explorer, 6, 16)
    P = table(6, 16, base=100.0, start=7)
    perm = explorer.last["perm"]
    inv = np.argsort(perm)
    original = weights(X + P, W[0], W[1])
    put_back = weights(X[perm] + P, W[0], W[1])[np.ix_(inv, inv)]
    np.testing.assert_allclose(explorer.images[0].get_array(), original, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(explorer.images[1].get_array(), put_back, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        explorer.images[2].get_array(), np.abs(put_back - original), rtol=1e-9, atol=1e-12
    )
    assert np.max(np.abs(put_back - original)) > 1e-3
    # the output gap in the title, from the outputs A V
    V = (X + P) @ W[2]
    Vs = (X[perm] + P) @ W[2]
    gap = np.max(np.abs(weights(X[perm] + P, W[0], W[1]) @ Vs - (original @ V)[perm]))
    assert f"{gap:.1e}" in explorer.suptitle.get_text()


def test_order_long_sentences_show_every_other_token_of_the_full_maps():
    """Over MAX_PIXELS tokens the maps show a stride of the full weights (asked for only
    at the shown columns); the output gap is still over every token."""
    n, d = 300, 16
    explorer = order.OrderExplorer(ref.attention, ref.sinusoidal_pe, n=n, d=d, shuffle=5)
    set_values(explorer, positions=True, pos=3)
    X, W = order_inputs(explorer, n, d)
    P = table(n, d, start=3)
    perm = explorer.last["perm"]
    inv = np.argsort(perm)
    original = weights(X + P, W[0], W[1])
    put_back = weights(X[perm] + P, W[0], W[1])[np.ix_(inv, inv)]
    for image, full in zip(explorer.images, (original, put_back, np.abs(put_back - original))):
        np.testing.assert_allclose(image.get_array(), full[::2, ::2], rtol=1e-9, atol=1e-12)
    V, Vs = (X + P) @ W[2], (X[perm] + P) @ W[2]
    gap = np.max(np.abs(weights(X[perm] + P, W[0], W[1]) @ Vs - (original @ V)[perm]))
    assert f"{gap:.1e}" in explorer.suptitle.get_text()


def test_order_head_width_is_capped_at_64():
    explorer = order.OrderExplorer(ref.attention, ref.sinusoidal_pe, n=3, d=128, shuffle=0)
    X, W = order_inputs(explorer, 3, 128)
    assert W.shape == (3, 128, 64)
    np.testing.assert_allclose(explorer.images[0].get_array(), weights(X, W[0], W[1]), rtol=1e-12)


def test_order_blitted_frame_equals_a_full_draw():
    moved = order.OrderExplorer(ref.attention, ref.sinusoidal_pe, n=6, d=16, shuffle=1)
    set_values(moved, shuffle=4, positions=True, base=300.0)
    fresh = order.OrderExplorer(
        ref.attention, ref.sinusoidal_pe, n=6, d=16, shuffle=4, positions=True, base=300.0
    )
    a, b = pixels(moved.image.value), pixels(fresh.image.value)
    assert a.shape == b.shape
    assert np.count_nonzero(np.any(a != b, axis=2)) == 0  # the same picture, pixel for pixel


def test_order_reports_a_stub_instead_of_raising():
    def stub(Q, K, V, bias=None):
        raise NotImplementedError()

    explorer = order.OrderExplorer(stub, ref.sinusoidal_pe)
    assert "NotImplementedError" in explorer.message.value
    assert explorer.image.value  # a picture is still shown


def test_order_factory_draws_nothing_under_nbgrader(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    assert order.order_explorer(attention=ref.attention, position_table=ref.sinusoidal_pe) is None


def test_order_helpers_reject_bad_input():
    explorer = order.OrderExplorer(ref.attention, ref.sinusoidal_pe, n=4, d=8)
    with pytest.raises(ValueError, match="d must be a positive even integer, got 7"):
        explorer.table(4, 7, 10000.0, 0)
    with pytest.raises(ValueError, match="base"):
        explorer.table(4, 8, 1.0, 0)
    with pytest.raises(ValueError, match="pos"):
        explorer.table(4, 8, 100.0, -1)
    with pytest.raises(ValueError, match="shuffle"):
        order.shuffle_order(4, -1)
    np.testing.assert_allclose(explorer.table(5, 8, 50.0, 3), table(5, 8, 50.0, 3))


def test_order_positions_come_from_the_given_table_and_attention():
    """A table of another shape is reported; the weights are the given attention's."""
    wrong = order.OrderExplorer(ref.attention, lambda n, d, base: np.zeros((d, n)), positions=True)
    assert "position_table" in wrong.message.value and "shape" in wrong.message.value

    def uniform(Q, K, V, bias=None):  # every key weighted 1/m, whatever the scores
        return np.full((len(Q), len(K)), 1.0 / len(K)) @ np.asarray(V)

    flat = order.OrderExplorer(uniform, ref.sinusoidal_pe, n=5, d=8, shuffle=2)
    assert flat.message.value == ""
    np.testing.assert_allclose(flat.images[0].get_array(), np.full((5, 5), 0.2), atol=1e-15)


# --------------------------------------------------------------------------- 02_sincos


def test_sincos_sliders_update_every_artist():
    explorer = sincos.sincos_explorer(sinusoidal_pe=ref.sinusoidal_pe, wavelengths=ref.wavelengths)
    assert isinstance(explorer, sincos.SincosExplorer)
    fig, heat = explorer.fig, explorer.heat
    set_values(explorer, d=8, max_len=20, base=100.0, pos=3)
    assert explorer.message.value == ""
    expected = table(20, 8, base=100.0)
    np.testing.assert_allclose(explorer.heat.get_array(), expected, atol=1e-12)
    assert list(explorer.marker.get_ydata()) == [3, 3]
    x_sin, y_sin = explorer.sin_line.get_data()
    x_cos, y_cos = explorer.cos_line.get_data()
    assert list(x_sin) == [0, 2, 4, 6] and list(x_cos) == [1, 3, 5, 7]
    np.testing.assert_allclose(y_sin, expected[3, 0::2], atol=1e-12)
    np.testing.assert_allclose(y_cos, expected[3, 1::2], atol=1e-12)
    # d = 8: four pairs, all drawn; hand i ends at length * (sin 3 theta_i, cos 3 theta_i)
    for k, hand in enumerate(explorer.hands):
        theta = 100.0 ** (-2 * k / 8)
        x, y = hand.get_data()
        length = sincos.HAND_LENGTHS[k]
        np.testing.assert_allclose(
            [x[1], y[1]], [length * math.sin(3 * theta), length * math.cos(3 * theta)], atol=1e-12
        )
        assert hand.get_visible()
        assert f"{2 * math.pi / theta:,.1f}" in explorer.hand_labels[k].get_text()
    assert explorer.fig is fig and explorer.heat is heat
    assert explorer.ax_map.get_xlim() == (-0.5, 7.5)


def test_sincos_small_d_hides_missing_hands_and_clamps_pos():
    explorer = sincos.SincosExplorer(ref.sinusoidal_pe, ref.wavelengths, d=64, max_len=100, pos=20)
    set_values(explorer, d=2, max_len=10, pos=50)
    assert [h.get_visible() for h in explorer.hands] == [True, False, False, False]
    assert list(explorer.marker.get_ydata()) == [9, 9]  # pos clamped to the last row
    x, y = explorer.hands[0].get_data()
    np.testing.assert_allclose([x[1], y[1]], [math.sin(9.0), math.cos(9.0)], atol=1e-12)
    assert sincos.hand_pairs(64) == [0, 1, 16, 31]
    assert sincos.hand_pairs(4) == [0, 1]


def test_sincos_blitted_frame_equals_a_full_draw():
    moved = sincos.SincosExplorer(ref.sinusoidal_pe, ref.wavelengths, d=32, max_len=50, pos=5)
    set_values(moved, pos=30, base=500.0)
    fresh = sincos.SincosExplorer(
        ref.sinusoidal_pe, ref.wavelengths, d=32, max_len=50, pos=30, base=500.0
    )
    a, b = pixels(moved.image.value), pixels(fresh.image.value)
    assert a.shape == b.shape
    assert np.count_nonzero(np.any(a != b, axis=2)) == 0


def test_sincos_wrong_shape_is_reported():
    explorer = sincos.SincosExplorer(
        lambda max_len, d, base=10000.0: np.zeros((d, max_len)), ref.wavelengths
    )
    assert "must have shape" in explorer.message.value


def test_sincos_factory_draws_nothing_under_nbgrader(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert (
        sincos.sincos_explorer(sinusoidal_pe=ref.sinusoidal_pe, wavelengths=ref.wavelengths) is None
    )


# --------------------------------------------------------------------------- static figures


def test_static_figures_render_png():
    pictures = [
        wavelength_figure(ref.wavelengths, ds=(8, 64)),
        pe_heatmaps([("small", ref.sinusoidal_pe(24, 16))]),
        norm_bars([("d = 64", 1.0, 8.0, math.sqrt(32))]),
    ]
    for picture in pictures:
        assert isinstance(picture, Picture)
        assert picture._repr_png_().startswith(b"\x89PNG")
    # the wavelength curve of d = 8 is the learner's function, plotted unchanged
    line = pictures[0].fig.axes[0].lines[0]
    np.testing.assert_allclose(line.get_ydata(), 2 * np.pi * 10000.0 ** (np.arange(4) / 4))
    with pytest.raises(ValueError, match="tables"):
        pe_heatmaps([])


def test_static_figures_display_sharp_at_their_css_size(monkeypatch):
    """The notebook gets twice the pixels and the CSS size (90 px per inch of figure)."""
    picture = norm_bars([("d = 64", 1.0, 8.0, math.sqrt(32))])
    data, meta = picture._repr_mimebundle_()
    width, height = picture.fig.get_size_inches() * Picture.dpi
    assert meta["image/png"] == {"width": round(width), "height": round(height)}
    shown = Image.open(io.BytesIO(data["image/png"]))
    assert shown.size == (round(2 * width), round(2 * height))
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert picture._repr_mimebundle_() is None and picture._repr_png_() is None


def test_sincos_wavelength_labels_are_the_learners():
    """The clock labels print the given wavelengths, not a formula of the explorer."""

    def fake(d, base=10000.0):
        return np.arange(d // 2) + 0.25

    explorer = sincos.SincosExplorer(ref.sinusoidal_pe, fake, d=8, max_len=10, pos=3)
    assert explorer.message.value == ""
    assert [t.get_text() for t in explorer.hand_labels] == [
        "pair 0: \u03bb = 0.2",
        "pair 1: \u03bb = 1.2",
        "pair 2: \u03bb = 2.2",
        "pair 3: \u03bb = 3.2",
    ]
    short = sincos.SincosExplorer(ref.sinusoidal_pe, lambda d, base=1e4: np.ones(3), d=8)
    assert "wavelengths(8) must have shape (4,)" in short.message.value


def test_order_long_sentences_name_their_first_and_last_token_on_every_map():
    """Past the 16 words the maps' ticks are the first and last token's numbers (0 and
    n - 1), also on the first map after it showed the words of a short sentence."""
    explorer = order.OrderExplorer(ref.attention, ref.sinusoidal_pe, n=6, d=16, shuffle=2)
    assert [t.get_text() for t in explorer.axes[0].get_xticklabels()][:2] == ["I", "ate"]
    set_values(explorer, n=300)
    for ax in explorer.axes:
        for ticks, labels in (
            (ax.get_xticks(), ax.get_xticklabels()),
            (ax.get_yticks(), ax.get_yticklabels()),
        ):
            assert list(ticks) == [0, 299]
            assert [t.get_text() for t in labels] == ["0", "299"], ax.get_title()
    set_values(explorer, n=6)
    assert [t.get_text() for t in explorer.axes[0].get_yticklabels()] == list(order.WORDS[:6])

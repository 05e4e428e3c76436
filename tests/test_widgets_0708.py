"""The explorers of notebooks 07_alibi and 08_offsets, driven headless.

Each explorer is built on the reference functions, its sliders are moved, and the data of
its artists is compared with values computed here independently: ALiBi's bias with plain
loops and the paper's slopes written out by hand; RoPE scores as complex multiplication;
additive scores from seed 004's per-index formula. Seed numbers (1.3679447, 13.8416) are
the ground truth where they apply.
"""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest

import helpers.reference as ref
from helpers.widgets import alibi, offsets

# The paper's slopes, written out: 6 heads = the 4-head slopes, then slopes 1 and 3 of 8 heads.
SLOPES_6 = [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8]
SLOPES_8 = [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]


def loop_bias(slopes, L: int, causal: bool) -> np.ndarray:
    """ALiBi's bias, one entry at a time."""
    out = np.empty((len(slopes), L, L))
    for h, m in enumerate(slopes):
        for i in range(L):
            for j in range(L):
                if j <= i:
                    out[h, i, j] = -m * (i - j)
                else:
                    out[h, i, j] = -math.inf if causal else -m * (j - i)
    return out


def loop_weights_row(slope: float, L: int, pos: int, causal: bool) -> np.ndarray:
    """Attention of a query with no content at pos: exp(-slope * |pos - j|), normalised."""
    keys = range(pos + 1) if causal else range(L)
    raw = np.zeros(L)
    for j in keys:
        raw[j] = math.exp(-slope * abs(pos - j))
    return raw / raw.sum()


def loop_mean_distance(slope: float, L: int, causal: bool) -> float:
    return (
        sum(
            float(np.dot(loop_weights_row(slope, L, i, causal), np.abs(i - np.arange(L))))
            for i in range(L)
        )
        / L
    )


def make_alibi(**kwargs) -> alibi.AlibiExplorer:
    return alibi.AlibiExplorer(
        ref.alibi_slopes, ref.alibi_bias, ref.mean_attention_distance, ref.softmax, **kwargs
    )


# --------------------------------------------------------------------------- 07_alibi


def test_alibi_explorer_updates_artists_in_place():
    ex = make_alibi(heads=8, seq_len=64)
    assert ex.message.value == ""
    fig, mosaic, lines, points = ex.fig, ex.mosaic, list(ex.row_lines), ex.dist_points
    first_png = ex.image.value
    ex.controls["heads"].value = 6
    ex.controls["seq_len"].value = 20
    ex.controls["pos"].value = 12
    assert ex.message.value == ""
    # the same figure and artists, new data and a new picture
    assert ex.fig is fig and ex.mosaic is mosaic and ex.dist_points is points
    assert all(a is b for a, b in zip(ex.row_lines, lines))
    assert bytes(ex.image.value) != bytes(first_png) and bytes(ex.image.value).startswith(
        b"\x89PNG"
    )

    want = loop_bias(SLOPES_6, 20, causal=True)
    image = np.asarray(ex.mosaic.get_array().filled(np.nan), dtype=float)
    # 6 heads: 2 rows of 3 tiles of 20 pixels, each row under a band for the slopes' labels
    band = int(np.flatnonzero(~np.isnan(image).all(axis=1))[0])
    assert band > 0 and image.shape == (2 * (band + 21) - 1, 3 * 21 - 1)
    for h in range(6):
        r, c = divmod(h, 3)
        top = r * (band + 21) + band
        tile = image[top : top + 20, c * 21 : c * 21 + 20]
        shown = np.where(np.isinf(want[h]), alibi.MASKED, np.maximum(want[h], alibi.BIAS_FLOOR))
        np.testing.assert_allclose(tile, shown, rtol=0, atol=1e-12)
    # the gap and the band between the two rows of tiles
    assert np.all(np.isnan(image[band + 20 : band + 21 + band, :]))

    for h, line in enumerate(ex.row_lines):
        assert line.get_visible() == (h < 6)
    for h in range(6):
        x, y = ex.row_lines[h].get_data()
        row = loop_weights_row(SLOPES_6[h], 20, 12, causal=True)
        np.testing.assert_array_equal(x, np.arange(20))
        np.testing.assert_allclose(np.nan_to_num(y), row, rtol=1e-12, atol=1e-300)
        assert np.all(np.isnan(y[13:]))  # keys after the query are not drawn

    offsets_xy = ex.dist_points.get_offsets()
    np.testing.assert_allclose(offsets_xy[:, 0], [-math.log2(m) for m in SLOPES_6])
    want_dist = [loop_mean_distance(m, 20, causal=True) for m in SLOPES_6]
    np.testing.assert_allclose(offsets_xy[:, 1], want_dist, rtol=1e-12)
    # uniform causal attention looks (L - 1) / 4 tokens back
    assert ex.uniform_line.get_ydata()[0] == pytest.approx((20 - 1) / 4, rel=1e-12)


def test_alibi_explorer_symmetric_bias_and_uniform_line():
    ex = make_alibi(heads=8, seq_len=12, causal=True)
    ex.controls["causal"].value = False
    assert ex.message.value == ""
    want = loop_bias(SLOPES_8, 12, causal=False)
    np.testing.assert_allclose(ex.bias, want, rtol=0, atol=1e-15)
    image = np.asarray(ex.mosaic.get_array().filled(np.nan), dtype=float)
    assert not np.any(image == alibi.MASKED)  # nothing masked without the causal mask
    L = 12
    assert ex.uniform_line.get_ydata()[0] == pytest.approx((L * L - 1) / (3 * L), rel=1e-12)
    _, y = ex.row_lines[0].get_data()  # pos defaults to the last query
    np.testing.assert_allclose(y, loop_weights_row(SLOPES_8[0], L, L - 1, causal=False))


def test_alibi_explorer_keeps_pos_inside_the_sequence():
    ex = make_alibi(heads=4, seq_len=100, pos=90)
    ex.controls["seq_len"].value = 30
    assert ex.controls["pos"].max == 29 and ex.controls["pos"].value == 29
    assert ex.message.value == ""
    assert ex.pos_line.get_xdata()[0] == 29


def test_alibi_explorer_reports_a_stub_instead_of_raising():
    def stub(n_heads):
        raise NotImplementedError()

    ex = alibi.AlibiExplorer(stub, ref.alibi_bias, ref.mean_attention_distance, ref.softmax)
    assert "NotImplementedError" in ex.message.value
    assert bytes(ex.image.value).startswith(b"\x89PNG")


def test_bias_mosaic_samples_long_sequences_down():
    bias = loop_bias(SLOPES_8[:2], 200, causal=True)
    image, rows, cols = alibi.bias_mosaic(bias, tile=50)
    assert (rows, cols) == (1, 2) and image.shape == (50, 101)
    assert image[49, 0] == pytest.approx(max(-0.5 * 199, alibi.BIAS_FLOOR))  # last row, first key
    assert image[0, 49] == alibi.MASKED


# --------------------------------------------------------------------------- 08_offsets


def alibi_score(q, k, m, n, slope=0.5):
    """The notebook's ALiBi score, written here: q . k - slope * |m - n|."""
    return float(np.dot(q, k)) - slope * abs(m - n)


def make_offsets(**kwargs) -> offsets.OffsetsExplorer:
    return offsets.OffsetsExplorer(
        ref.offset_scan, ref.spread, alibi_score, ref.demo_vectors, **kwargs
    )


def rope_score_complex(q, k, m: int, n: int, base: float) -> float:
    """RoPE as complex multiplication: pair i is q[2i] + 1j q[2i+1], turned by exp(1j pos theta_i)."""
    d = len(q)
    total = 0j
    for i in range(d // 2):
        theta = base ** (-2 * i / d)
        zq = complex(q[2 * i], q[2 * i + 1]) * cmath.exp(1j * m * theta)
        zk = complex(k[2 * i], k[2 * i + 1]) * cmath.exp(1j * n * theta)
        total += zq * zk.conjugate()
    return total.real


def add_score_seed(q, k, m: int, n: int, base: float) -> float:
    """Seed 004's additive score, index by index."""
    d = len(q)
    total = 0.0
    for j in range(d):
        a_m = m / base ** ((2 * (j // 2)) / d)
        a_n = n / base ** ((2 * (j // 2)) / d)
        pm = math.sin(a_m) if j % 2 == 0 else math.cos(a_m)
        pn = math.sin(a_n) if j % 2 == 0 else math.cos(a_n)
        total += (q[j] + pm) * (k[j] + pn)
    return total


def test_offsets_explorer_reproduces_seed_004():
    ex = make_offsets()
    assert ex.message.value == ""
    x, y = ex.markers["RoPE"].get_data()
    assert list(x) == [3, 10, 100, 4000]
    assert all(abs(v - 1.3679447) < 1e-6 for v in y)  # seed 004: one score at every start
    assert ex.spreads["additive"] == pytest.approx(13.8416, abs=1e-4)
    assert ex.spreads["RoPE"] < 1e-12
    assert ex.spreads["ALiBi"] == 0.0
    assert "13.8" in ex.titles["additive"].get_text()
    assert "0 (exact)" in ex.titles["ALiBi"].get_text()


def test_offsets_explorer_follows_the_sliders():
    ex = make_offsets()
    fig, curves = ex.fig, dict(ex.curves)
    ex.controls["d"].value = 16
    ex.controls["base"].value = 500.0
    ex.controls["offset"].value = 5
    ex.controls["starts"].value = "0, 7, 50"
    assert ex.message.value == ""
    assert ex.fig is fig and all(ex.curves[n] is curves[n] for n in curves)
    j = np.arange(16)
    q, k = np.cos(0.7 * j + 0.3), np.sin(0.4 * j + 1.1)
    starts = [0, 7, 50]
    x, rope = ex.markers["RoPE"].get_data()
    assert list(x) == starts
    want_rope = [rope_score_complex(q, k, s + 5, s, 500.0) for s in starts]
    np.testing.assert_allclose(rope, want_rope, rtol=1e-9, atol=1e-12)
    _, add = ex.markers["additive"].get_data()
    want_add = [add_score_seed(q, k, s + 5, s, 500.0) for s in starts]
    np.testing.assert_allclose(add, want_add, rtol=1e-9, atol=1e-12)
    _, ali = ex.markers["ALiBi"].get_data()
    np.testing.assert_allclose(ali, [float(q @ k) - 0.5 * 5] * 3, rtol=1e-12)
    assert ex.spreads["additive"] == pytest.approx(max(want_add) - min(want_add), rel=1e-9)
    # the background curves run over every start up to past the last listed one
    cx, cy = ex.curves["additive"].get_data()
    assert cx[0] == 0 and cx[-1] >= 50 and len(cx) == len(cy)
    for s, a in zip(starts, want_add):
        assert cy[list(cx).index(s)] == pytest.approx(a, rel=1e-9)


def test_offsets_explorer_bad_starts_give_a_message():
    ex = make_offsets()
    ex.controls["starts"].value = "3, ten"
    assert "starts must be integers" in ex.message.value
    ex.controls["starts"].value = "4, 2"
    assert ex.message.value == ""


def test_parse_starts():
    assert offsets.parse_starts("3, 10, 100, 4000") == [3, 10, 100, 4000]
    assert offsets.parse_starts("5 0;2") == [5, 0, 2]
    for bad in ("", "1, -2", "1.5"):
        with pytest.raises(ValueError, match="starts"):
            offsets.parse_starts(bad)


# --------------------------------------------------------------------------- both


def test_factories_draw_nothing_under_nbgrader(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert (
        alibi.alibi_explorer(
            alibi_slopes=ref.alibi_slopes,
            alibi_bias=ref.alibi_bias,
            mean_attention_distance=ref.mean_attention_distance,
            softmax=ref.softmax,
        )
        is None
    )
    assert (
        offsets.offsets_explorer(
            offset_scan=ref.offset_scan,
            spread=ref.spread,
            alibi_score=alibi_score,
            demo_vectors=ref.demo_vectors,
        )
        is None
    )


def test_factories_build_explorers_outside_nbgrader(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    ex = alibi.alibi_explorer(
        alibi_slopes=ref.alibi_slopes,
        alibi_bias=ref.alibi_bias,
        mean_attention_distance=ref.mean_attention_distance,
        softmax=ref.softmax,
    )
    assert isinstance(ex, alibi.AlibiExplorer)
    assert isinstance(
        offsets.offsets_explorer(
            offset_scan=ref.offset_scan,
            spread=ref.spread,
            alibi_score=alibi_score,
            demo_vectors=ref.demo_vectors,
        ),
        offsets.OffsetsExplorer,
    )


# --------------------------------------------------------------------------- static figures


def test_distance_by_length_figure_draws_the_measured_numbers():
    from helpers.plots import distance_by_length_figure

    lengths = [16, 64, 256]
    dist = np.array([[1.2, 3.3], [1.45, 9.4], [1.52, 13.9]])
    fig = distance_by_length_figure(lengths, dist, [1 / 2, 1 / 16]).fig
    ax = fig.axes[0]
    x, y = ax.lines[0].get_data()
    assert list(x) == lengths and list(y) == [1.2, 1.45, 1.52]
    # the dotted limit of the slope-1/2 head: 1 / (e^0.5 - 1) = 1.5415
    limits = [line.get_ydata()[0] for line in ax.lines if line.get_linestyle() == ":"]
    assert limits[0] == pytest.approx(1 / (math.exp(0.5) - 1))
    with pytest.raises(ValueError, match="distances"):
        distance_by_length_figure(lengths, dist[:2], [1 / 2, 1 / 16])


def test_figures_render_nothing_under_nbgrader(monkeypatch):
    from helpers.plots import turns_figure

    picture = turns_figure(ref.turns, ref.slow_pairs, 8, [1, 16])
    assert picture._repr_png_().startswith(b"\x89PNG")
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert picture._repr_png_() is None
    assert picture.png().startswith(b"\x89PNG")  # rendering on request still works


def test_turns_figure_counts_the_slow_pairs():
    from helpers.plots import turns_figure

    deltas = [1, 16, 256, 4096]
    rows = [
        [delta * 10000.0 ** (-2 * i / 64) / (2 * math.pi) for i in range(32)] for delta in deltas
    ]
    fig = turns_figure(ref.turns, ref.slow_pairs, 64, deltas).fig
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    for delta, slow in zip(deltas, (32, 28, 19, 9)):  # seed 004
        assert f"delta = {delta}: {slow} pairs under one turn" in labels
    for line, row in zip(fig.axes[0].lines, rows):
        np.testing.assert_allclose(line.get_ydata(), row, rtol=1e-12)
    with pytest.raises(ValueError, match="turns"):
        turns_figure(lambda d, delta: np.ones(3), ref.slow_pairs, 64, deltas)
    with pytest.raises(ValueError, match="deltas"):
        turns_figure(ref.turns, ref.slow_pairs, 64, [])


def test_offsets_explorer_uses_the_given_vectors():
    def vectors():
        return np.zeros(8), np.zeros(8)

    ex = offsets.OffsetsExplorer(ref.offset_scan, ref.spread, alibi_score, vectors, d=4)
    assert ex.message.value == ""
    _, rope_scores = ex.markers["RoPE"].get_data()
    np.testing.assert_allclose(rope_scores, 0.0, atol=1e-15)  # zero vectors rotate to zero
    _, ali = ex.markers["ALiBi"].get_data()
    np.testing.assert_allclose(ali, -0.5 * 2)  # q . k = 0, offset 2, slope 1/2


def test_alibi_explorer_uses_the_given_softmax():
    def flat(scores):  # every visible key the same weight
        scores = np.asarray(scores)
        seen = np.isfinite(scores)
        return seen / seen.sum(axis=-1, keepdims=True)

    ex = alibi.AlibiExplorer(
        ref.alibi_slopes, ref.alibi_bias, ref.mean_attention_distance, flat, heads=2, seq_len=9
    )
    assert ex.message.value == ""
    np.testing.assert_allclose(ex.distances, (9 - 1) / 4 * np.ones(2), rtol=1e-12)


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("seq_len", [1, 2, 7, 64, 1000])
def test_uniform_distance_is_the_mean_distance_of_uniform_weights(seq_len, causal):
    """The dashed line of the distance panel: closed form against the weights themselves."""
    bias = ref.alibi_bias(1, seq_len, causal=causal)
    uniform = ref.softmax(np.where(np.isneginf(bias), -np.inf, 0.0))
    expected = float(ref.mean_attention_distance(uniform)[0])
    assert alibi.uniform_distance(seq_len, causal) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_alibi_large_moves_show_the_biases_first_then_the_distances():
    """Past PROGRESSIVE entries a move sends two frames: biases and the query's weights
    (softmax asked for that row only), then the distances; the last frame is the full one."""
    shapes = []

    def softmax(x):
        shapes.append(np.shape(x))
        return ref.softmax(x)

    def build(**start):
        return alibi.AlibiExplorer(
            ref.alibi_slopes, ref.alibi_bias, ref.mean_attention_distance, softmax, **start
        )

    ex = build(heads=16, seq_len=64)
    before = ex.dist_points.get_offsets().copy()
    frames, points = [], []

    def on_frame(change):
        frames.append(bytes(change["new"]))
        points.append((ex.dist_points.get_alpha(), ex.dist_points.get_offsets().copy()))

    ex.image.observe(on_frame, names="value")
    shapes.clear()
    ex.controls["seq_len"].value = 600
    assert 16 * 600**2 > alibi.PROGRESSIVE
    assert len(frames) == 2 and frames[0] != frames[1]
    assert shapes == [(16, 1, 600), (16, 600, 600)]
    # the first frame keeps the distances of 64 tokens, faded; the second shows 600's
    assert points[0][0] == alibi.STALE_ALPHA
    np.testing.assert_array_equal(points[0][1], before)
    assert points[1][0] is None
    want = [loop_mean_distance(m, 600, causal=True) for m in ref.alibi_slopes(16)]
    np.testing.assert_allclose(points[1][1][:, 1], want, rtol=1e-9)
    assert ex.message.value == ""
    fresh = build(heads=16, seq_len=600, pos=63)
    assert frames[-1] == bytes(fresh.image.value)
    frames.clear()
    ex.controls["pos"].value = 10  # no new measurement: one frame
    assert len(frames) == 1


def _tile_boxes(ex) -> list:
    """Each head's tile on the page, in figure pixels: the mosaic's pixels that hold its
    biases (the image's non-NaN blocks), placed by the image's extent."""
    from matplotlib.transforms import Bbox

    image = np.asarray(ex.mosaic.get_array().filled(np.nan), dtype=float)
    x0, x1, y0, y1 = ex.mosaic.get_extent()  # (left, right, bottom, top) in data units
    sx, sy = (x1 - x0) / image.shape[1], (y0 - y1) / image.shape[0]
    filled = ~np.isnan(image)
    boxes = []
    # the tiles: runs of filled rows and columns
    rows = np.flatnonzero(filled.any(axis=1))
    cols = np.flatnonzero(filled.any(axis=0))
    row_runs = np.split(rows, np.flatnonzero(np.diff(rows) > 1) + 1)
    col_runs = np.split(cols, np.flatnonzero(np.diff(cols) > 1) + 1)
    to_px = ex.ax_bias.transData
    for rr in row_runs:
        for cc in col_runs:
            if not filled[rr[0], cc[0]]:
                continue
            corners = [
                (x0 + cc[0] * sx, y1 + rr[0] * sy),
                (x0 + (cc[-1] + 1) * sx, y1 + (rr[-1] + 1) * sy),
            ]
            boxes.append(Bbox(to_px.transform(corners)))
    return boxes


@pytest.mark.parametrize(("heads", "seq_len"), [(16, 2), (16, 3), (16, 64), (4, 2), (1, 2)])
def test_alibi_slope_labels_leave_every_tile_uncovered(heads, seq_len):
    """Each head's slope is written beside its tile, never over a bias of it."""
    ex = make_alibi(heads=heads, seq_len=seq_len)
    assert ex.message.value == ""
    renderer = ex.fig.canvas.get_renderer()
    ex.fig.draw_without_rendering()
    tiles = _tile_boxes(ex)
    assert len(tiles) == heads
    labels = [t for t in ex.tile_labels if t.get_visible()]
    assert len(labels) == heads and all(t.get_text().startswith("1/") for t in labels)
    for label in labels:
        box = label.get_window_extent(renderer)
        patch = label.get_bbox_patch()
        if patch is not None:
            box = patch.get_window_extent(renderer)
        for tile in tiles:
            assert not box.overlaps(tile), (label.get_text(), box, tile)

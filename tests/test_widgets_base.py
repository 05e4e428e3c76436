"""The explorer machinery of helpers.widgets.base: PNG frames, the cached background and layer.

The frames are decoded with PIL (an independent PNG reader) and compared with the canvas
pixels; a frame reached through the cached background or layer must equal, pixel for
pixel, the frame of an explorer built directly at the same slider values.
"""

from __future__ import annotations

import importlib
import io
import zlib

import numpy as np
import pytest
from PIL import Image

import helpers.reference as ref
from helpers.widgets import alibi, base, rope, sincos


def pixels(frame) -> np.ndarray:
    image = Image.open(io.BytesIO(bytes(frame)))
    assert image.format == "PNG" and image.mode == "RGB"
    return np.asarray(image, dtype=np.int16)


def make_alibi(**start) -> alibi.AlibiExplorer:
    return alibi.AlibiExplorer(
        ref.alibi_slopes, ref.alibi_bias, ref.mean_attention_distance, ref.softmax, **start
    )


def test_png_frame_is_the_canvas():
    explorer = sincos.SincosExplorer(ref.sinusoidal_pe, ref.wavelengths, d=16, max_len=20)
    rgba = np.asarray(explorer.fig.canvas.buffer_rgba())
    assert np.array_equal(pixels(explorer.image.value), rgba[..., :3])
    # one IDAT chunk compressed with zlib: it inflates to height rows of 1 + 3 * width bytes
    png = bytes(explorer.image.value)
    start = png.index(b"IDAT") + 4
    length = int.from_bytes(png[start - 8 : start - 4], "big")
    raw = zlib.decompress(png[start : start + length])
    assert len(raw) == rgba.shape[0] * (1 + 3 * rgba.shape[1])


def test_layer_moves_keep_the_background_and_match_a_fresh_draw():
    moved = make_alibi(heads=4, seq_len=30, pos=10)
    background, layer = moved._background, moved._layer
    moved.controls["pos"].value = 20  # per-update artists only
    assert moved._background is background and moved._layer is layer
    moved.controls["heads"].value = 6  # the layer of heads is drawn again, not the axes
    assert moved._background is background and moved._layer is not layer
    fresh = make_alibi(heads=6, seq_len=30, pos=20)
    assert np.count_nonzero(np.any(pixels(moved.image.value) != pixels(fresh.image.value), 2)) == 0
    layer = moved._layer
    moved.controls["seq_len"].value = 40  # new x-limits: the moving axis is drawn in the layer
    assert moved._background is background and moved._layer is not layer
    fresh = make_alibi(heads=6, seq_len=40, pos=20)
    assert np.count_nonzero(np.any(pixels(moved.image.value) != pixels(fresh.image.value), 2)) == 0


def test_a_failed_update_does_not_keep_a_stale_layer():
    calls = {"n": 0}

    def flaky_slopes(n_heads):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("not now")
        return ref.alibi_slopes(n_heads)

    explorer = alibi.AlibiExplorer(
        flaky_slopes, ref.alibi_bias, ref.mean_attention_distance, ref.softmax, heads=4
    )
    explorer.controls["heads"].value = 8
    assert "RuntimeError" in explorer.message.value
    explorer.controls["heads"].value = 6
    assert explorer.message.value == ""
    fresh = make_alibi(heads=6)
    assert np.array_equal(pixels(explorer.image.value), pixels(fresh.image.value))


def test_resized_cuts_or_repeats():
    v = np.arange(4.0)
    assert base.resized(v, 2).tolist() == [0.0, 1.0]
    assert base.resized(v, 6).tolist() == [0.0, 1.0, 2.0, 3.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="d must be a positive integer, got 0"):
        base.resized(v, 0)
    with pytest.raises(ValueError, match="vec must be a non-empty vector"):
        base.resized(np.zeros((2, 2)), 2)


def test_interactive_follows_nbgrader(monkeypatch):
    assert base.interactive()
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    assert not base.interactive()


def test_importing_the_figure_modules_loads_no_matplotlib():
    """The imports cell of every notebook imports helpers.plots and an explorer module;
    matplotlib and ipywidgets load only when a figure or an explorer is built, so that
    the grading kernel, which runs no teaching cell, never pays for them."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import helpers, helpers.grader, helpers.plots\n"
        "from helpers.widgets import alibi, decay, norm, offsets, order, rope, rotation, sincos\n"
        "print(sorted(m for m in ('matplotlib', 'ipywidgets') if m in sys.modules))\n"
        "import helpers.reference as ref\n"
        "helpers.plots.norm_bars([('d = 8', 2.0, 2.0, 2.0)])\n"
        "print(sorted(m for m in ('matplotlib', 'ipywidgets') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["[]", "['matplotlib']"]


def make_rope(**functions) -> rope.RopeExplorer:
    kwargs = {
        "apply_rope": ref.apply_rope,
        "rope_score": ref.rope_score,
        "turns": ref.turns,
        "slow_pairs": ref.slow_pairs,
        "demo_vectors": ref.demo_vectors,
    }
    return rope.RopeExplorer(**(kwargs | functions))


def test_frames_have_two_device_pixels_per_css_pixel():
    explorer = make_rope()
    width_in, height_in = explorer.fig.get_size_inches()
    assert explorer.image.layout.width == f"{round(width_in * base.Explorer.dpi)}px"
    assert explorer.image.layout.max_width == "100%"
    frame = pixels(explorer.image.value)
    assert frame.shape[:2] == (int(2 * height_in * 72), int(2 * width_in * 72))


def test_controls_wrap_onto_rows_and_keep_their_width():
    explorer = make_alibi()
    box = explorer.widget()
    controls = box.children[1]
    assert controls.layout.flex_flow == "row wrap"
    for control in controls.children:
        assert control.layout.flex == "0 0 auto"
    pairs = [c for c in controls.children if "pe-control" in c._dom_classes]
    sliders = [pair.children[0] for pair in pairs]
    assert sliders and all(c.layout.width == base.SLIDER_WIDTH for c in sliders)
    assert int(base.SLIDER_WIDTH.removesuffix("px")) >= 80 + 200  # label, track
    assert all(pair.children[1].layout.width == base.BOX_WIDTH for pair in pairs)
    assert explorer.controls["causal"].layout.width == "auto"  # a checkbox is not cut off


def test_a_long_label_gets_a_wider_label_and_the_same_track():
    """A label longer than 80 px of JupyterLab's font ("evaluation length", 17 letters of
    about 7.5 px) widens its slider instead of being cut; the track keeps its 250 px."""
    for text in ("evaluation length", "T5 max_distance 128", "평가 길이 (토큰, 학습 길이의 배수)"):
        width, label = (int(w.removesuffix("px")) for w in base.slider_widths(text))
        assert label >= 7 * len(text) and width - label == 250, (text, width, label)
    assert base.slider_widths("pos") == (base.SLIDER_WIDTH, base.DESCRIPTION_WIDTH)


def test_a_typed_value_sets_the_slider_exactly_and_a_clamp_is_said():
    """The box beside ``pos`` (0 to 4096 on about 240 px) reaches every position; a value
    out of range or off the steps is brought in, and the note says so, with the range."""
    explorer = make_rope()
    box = explorer.boxes[explorer.controls["m"]]
    box.box.value = 2777  # no pixel of the track is exactly 2777: the box reaches it
    assert explorer.controls["m"].value == 2777 and explorer.typed_note.value.count("<br>") == 0
    box.box.value = 100000
    assert explorer.controls["m"].value == 4096 and box.box.value == 4096
    note = explorer.typed_note.value
    assert "m (query): 100000 is outside 0 to 4096; set to 4096." in note, note  # its label
    d = explorer.boxes[explorer.controls["d"]]
    d.box.value = 63  # d moves in steps of 2 from 2: 63 is not a value it can take
    assert explorer.controls["d"].value in (62, 64) and d.box.value == explorer.controls["d"].value
    assert "d moves in steps of 2 from 2: 63 is set to" in explorer.typed_note.value
    d.box.value = 1
    assert explorer.controls["d"].value == 2 and "1 is outside 2 to 512; set to 2." in (
        explorer.typed_note.value
    )
    explorer.controls["d"].value = 40  # a drag: the box follows, and nothing is said
    assert d.box.value == 40
    base_box = explorer.boxes[explorer.controls["base"]]
    base_box.box.value = 12345.0  # any base in the range, not only the slider's steps
    assert explorer.controls["base"].value == 12345.0
    base_box.box.value = 5.0
    assert explorer.controls["base"].value == 10.0 and "5 is outside 10 to 1e+06" in (
        explorer.typed_note.value
    )


def test_every_explorer_shows_its_controls_their_boxes_and_the_note():
    """The whole widget of every explorer: each slider beside its box, the note under them
    (a subclass's own attributes never take the place of the machinery's)."""
    import ipywidgets as widgets

    bench = importlib.import_module("bench.widget_update")
    for _, cls in bench.explorer_classes():
        explorer = bench.build(cls)
        box = explorer.widget()
        assert explorer.typed_note in box.children, cls.__name__
        assert isinstance(explorer.typed_note, widgets.HTML), cls.__name__
        pairs = [c for c in box.children[1].children if "pe-control" in c._dom_classes]
        sliders = [c for c in explorer.controls.values() if c in explorer.boxes]
        assert [p.children[0] for p in pairs] == sliders, cls.__name__


def test_a_slider_whose_range_follows_another_is_clamped_to_its_range_now():
    explorer = make_alibi(heads=4, seq_len=30, pos=10)
    explorer.controls["seq_len"].value = 20  # pos now runs 0 to 19
    pos = explorer.boxes[explorer.controls["pos"]]
    pos.box.value = 25
    assert explorer.controls["pos"].value == pos.box.value <= 19
    assert "25 is outside 0 to 19" in explorer.typed_note.value


def _region(explorer, ax) -> np.ndarray:
    """The pixels of ``ax`` and its labels: the bounding box in device pixels."""
    frame = pixels(explorer.image.value)
    box = ax.get_tightbbox(explorer.fig.canvas.get_renderer())
    height = frame.shape[0]
    x0, x1 = int(box.x0) - 2, int(box.x1) + 2
    y0, y1 = height - int(box.y1) - 2, height - int(box.y0) + 2
    return frame[max(y0, 0) : y1, max(x0, 0) : x1]


def test_a_failing_learner_function_is_named_and_the_other_panels_drawn():
    def stub(*args, **kwargs):
        raise NotImplementedError("write rope_score first")

    broken = make_rope(rope_score=stub)
    message = broken.message.value
    assert "cannot draw:" in message and "your `rope_score` raised NotImplementedError" in message
    assert "write rope_score first" in message
    whole = make_rope()
    # the turns panel does not need rope_score: drawn as in a working explorer
    assert np.array_equal(_region(broken, broken.turns_ax), _region(whole, whole.turns_ax))
    # the line of apply_rope alone (only q rotated) is still drawn, the RoPE line is not
    assert id(broken.q_only_line) not in broken._failed
    assert id(broken.both_line) in broken._failed
    assert not np.array_equal(_region(broken, broken.ax), _region(whole, whole.ax))
    # the panel says why it lacks a curve; the panel drawn whole says nothing
    note = broken._why[broken.ax]
    assert note.get_visible() and note.get_text().startswith("partly drawn:")
    assert broken.turns_ax not in broken._why
    # once the function works, the message goes and the picture is the working one
    broken.rope_score = base.learner("rope_score", ref.rope_score)
    broken.refresh()
    assert broken.message.value == "" and not note.get_visible()
    assert np.array_equal(pixels(broken.image.value), pixels(whole.image.value))


def test_learner_errors_inside_the_explorer_code_are_not_blamed_on_the_learner():
    explorer = sincos.SincosExplorer(
        lambda max_len, d, base=10000.0: np.zeros((d, max_len)), ref.wavelengths, d=8
    )
    assert "ValueError: sinusoidal_pe(100, 8) must have shape (100, 8)" in explorer.message.value
    assert "your" not in explorer.message.value


def test_frames_through_the_band_cache_are_the_canvas():
    """Bands of rows that did not change keep their compressed bytes; every frame still
    decodes (with PIL) to the canvas, and a frame is as small as one compressed whole."""
    explorer = sincos.SincosExplorer(ref.sinusoidal_pe, ref.wavelengths, d=64, max_len=100)
    for values in ({"pos": 40}, {"base": 500.0}, {"d": 16}, {"pos": 3}):
        for name, value in values.items():
            explorer.controls[name].value = value
        rgba = np.asarray(explorer.fig.canvas.buffer_rgba())
        assert np.array_equal(pixels(explorer.image.value), rgba[..., :3])
    fresh = base.png_bytes(explorer.fig.canvas)
    assert np.array_equal(pixels(fresh), pixels(explorer.image.value))
    whole = len(zlib.compress(np.asarray(explorer.fig.canvas.buffer_rgba())[..., :3].tobytes(), 1))
    assert len(explorer.image.value) < 1.3 * whole


@pytest.mark.parametrize(("n1", "n2"), [(0, 5), (5, 0), (100_000, 70_000), (3, 65521 * 3 + 7)])
def test_adler32_combine_matches_zlib(n1, n2):
    rng = np.random.default_rng(n1 + n2)
    a, b = rng.bytes(n1), rng.bytes(n2)
    combined = base._adler32_combine(zlib.adler32(a), zlib.adler32(b), len(b))
    assert combined == zlib.adler32(a + b)


@pytest.mark.parametrize("rotation", [0, 90])
def test_the_canvas_draws_a_text_where_matplotlib_does(rotation):
    """The explorers' canvas draws a plain text as one bitmap: the same ink as matplotlib's
    own Agg canvas, within a device pixel (matplotlib 3.11 does not hint a turned glyph:
    the strokes differ a little); mathtext is left to matplotlib."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from helpers.widgets.canvas import Canvas, Renderer

    def ink(canvas_class) -> tuple[np.ndarray, np.ndarray]:
        fig = Figure(figsize=(4, 2), dpi=144)
        canvas = canvas_class(fig)
        fig.text(0.1, 0.2, "rate θ'ᵢ, n − m = 5: ≥ 1 turn", rotation=rotation, fontsize=10)
        fig.text(0.6, 0.5, "$10^{-3}$", fontsize=10)
        canvas.draw()
        dark = np.asarray(canvas.buffer_rgba())[..., 0] < 128
        rows, cols = np.nonzero(dark)
        return np.array([rows.min(), rows.max(), cols.min(), cols.max()]), dark

    fig = Figure()
    assert isinstance(Canvas(fig).get_renderer(), Renderer)
    (box, dark), (want_box, want_dark) = ink(Canvas), ink(FigureCanvasAgg)
    assert np.abs(box - want_box).max() <= 1, (box, want_box)
    assert abs(int(dark.sum()) - int(want_dark.sum())) <= 0.1 * want_dark.sum()


def test_the_canvas_lays_out_texts_as_matplotlib_does():
    """The font heights the canvas's renderer keeps give every text the extent that
    matplotlib's own renderer gives it (one line, several lines, turned, bold), and a text
    drawn twice is drawn the same from the kept bitmap."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from helpers.widgets.canvas import Canvas

    def extents(canvas_class):
        fig = Figure(dpi=144)
        canvas = canvas_class(fig)
        texts = [
            fig.text(0.1, 0.1, "unseen_angle_pairs\n(of 18 slow pairs):\nYaRN: 0", fontsize=8.5),
            fig.text(0.5, 0.5, "rate θ'ᵢ", rotation=90, fontsize=12, weight="bold"),
            fig.text(0.3, 0.3, "lp", linespacing=2),
        ]
        renderer = canvas.get_renderer()
        return [t.get_window_extent(renderer).bounds for t in texts], canvas

    mine, canvas = extents(Canvas)
    assert mine == extents(FigureCanvasAgg)[0]
    canvas.draw()
    first = np.asarray(canvas.buffer_rgba()).copy()
    canvas.draw()
    assert np.array_equal(np.asarray(canvas.buffer_rgba()), first)


@pytest.mark.parametrize("origin", ["upper", "lower"])
def test_nearest_images_are_matplotlibs_pixels(origin):
    """An explorer's heatmaps are resampled by indexing (NearestImage): the picture of
    matplotlib's AxesImage but at a tie (a pixel's centre on a cell's edge), bad cells in
    the colormap's bad colour; an image that is not a nearest one is left to matplotlib."""
    from matplotlib.figure import Figure
    from matplotlib.image import AxesImage

    from helpers.widgets.canvas import Canvas, NearestImage

    rng = np.random.default_rng(3)
    data = rng.standard_normal((37, 53))
    data[5, 7] = np.nan
    fig = Figure(figsize=(4, 3), dpi=144)
    canvas = Canvas(fig)
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    image = ax.imshow(data, cmap="magma", interpolation="nearest", origin=origin, aspect="auto")
    image.set_extent((-0.5, 52.5, 36.5, -0.5) if origin == "upper" else (-0.5, 52.5, -0.5, 36.5))
    renderer = canvas.get_renderer()
    want, *want_place = image.make_image(renderer)
    image.__class__ = NearestImage
    got, *got_place = image.make_image(renderer)
    assert got.shape == want.shape and got_place[:2] == want_place[:2]
    differ = np.any(got != want, axis=2)
    assert differ.mean() < 0.01, differ.mean()
    image.set_interpolation("bilinear")
    assert np.array_equal(image.make_image(renderer)[0], AxesImage.make_image(image, renderer)[0])


def test_an_explorer_carries_the_note_of_a_restarted_kernel_hidden_until_then():
    """The note sits above the figure; its own style hides it unless the widget manager has
    marked the view disconnected (JupyterLab does on a kernel restart: the browser test
    restarts one); it speaks the notebook's language."""
    from helpers.i18n import speaking

    explorer = make_rope()
    box = explorer.widget()
    notes = [c for c in box.children if "pe-stale" in c._dom_classes]
    assert notes == [explorer.stale_note]
    assert box.children[box.children.index(explorer.image) - 1] is explorer.stale_note
    html = explorer.stale_note.value
    hidden, shown = html.split("</style>")[0].split("}", 1)
    assert (
        hidden == "<style>.pe-stale:not(.jupyter-widgets-disconnected),.pe-stale-text{display:none"
    )
    assert shown.startswith(".jupyter-widgets-disconnected .pe-stale-text,")
    assert "display:block" in shown
    assert "Run the first cell (helpers.start) again, then this cell." in html
    with speaking("ko"):
        korean = make_rope().widget()
    said = next(c for c in korean.children if "pe-stale" in c._dom_classes).value
    assert "첫 셀(helpers.start)을 다시 실행한 뒤, 이 셀을 실행하세요." in said


def test_a_decimal_typed_for_a_whole_number_is_read_as_typed_and_said():
    """07's heads: 2.5 typed is 2.5 (the box is a number box that keeps the point), set to
    the nearest whole number 3, and the note says so; never 25 clamped to 16."""
    explorer = make_alibi(heads=8, seq_len=16)
    heads = explorer.boxes[explorer.controls["heads"]]
    heads.box.value = 2.5
    assert explorer.controls["heads"].value == 3 and heads.box.value == 3
    note = explorer.typed_note.value
    assert "heads takes whole numbers: 2.5 is set to 3." in note, note
    heads.box.value = 12
    assert explorer.controls["heads"].value == 12
    assert "whole numbers" not in explorer.typed_note.value
    heads.box.value = 2.4
    assert explorer.controls["heads"].value == 2

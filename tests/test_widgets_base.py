"""The explorer machinery of helpers.widgets.base: PNG frames, the cached background and layer.

The frames are decoded with PIL (an independent PNG reader) and compared with the canvas
pixels; a frame reached through the cached background or layer must equal, pixel for
pixel, the frame of an explorer built directly at the same slider values.
"""

from __future__ import annotations

import io
import zlib

import numpy as np
import pytest
from PIL import Image

import helpers.reference as ref
from helpers.widgets import alibi, base, sincos


@pytest.fixture(autouse=True)
def interactive_session(monkeypatch):
    """The explorers draw only outside nbgrader: make sure the variable is not inherited."""
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


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

"""The Agg canvas the explorers draw on: a plain text is one bitmap, kept for the next draw.

matplotlib 3.11 draws a text glyph by glyph from Python (a FreeType transform, a render
and a blend per glyph): the tick labels, titles and readouts an explorer draws again at a
move cost a few milliseconds each. ``Canvas`` draws a plain text as matplotlib did up to
3.10: FreeType lays out and renders the whole string into one bitmap in a single call,
which is placed at the nearest device pixel and blended once (a y label is turned by
exactly 90 degrees, other angles by the renderer). At 2 device pixels per CSS pixel the
difference is under a quarter of a CSS pixel in the text's position. The layout of a
string costs far more than its blend, and the texts drawn again are mostly the same
strings (tick labels, axis labels): the bitmaps of the last strings are kept. The heights
of a font (ascent, descent, line gap), which ``Text`` reads from the font's tables for
every layout, are read once per font and size. Mathtext (``$...$``, as in log-axis tick
labels), TeX and texts with font features or a language keep matplotlib's own path.

Imported when the first explorer is built: it imports matplotlib.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Hashable

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag
from matplotlib.font_manager import fontManager, get_font
from matplotlib.image import AxesImage
from matplotlib.transforms import Affine2D, Bbox, IdentityTransform, TransformedBbox

__all__ = ["Canvas", "NearestImage", "Renderer"]


class Renderer(RendererAgg):
    """``RendererAgg`` drawing a plain text as one FreeType bitmap, kept for the next time.

    The bitmaps of the last ``CACHED`` strings are kept (by string, font, dpi and
    antialiasing): FreeType's layout of a string costs far more than blending it, and the
    strings an explorer draws again are mostly the same (tick labels, axis labels).
    """

    CACHED = 512

    def __init__(self, width, height, dpi):
        super().__init__(width, height, dpi)
        self._bitmaps: OrderedDict[Hashable, tuple[np.ndarray, float, float, float]] = OrderedDict()
        self._heights: dict[Hashable, tuple[float, float, float]] = {}

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if ismath or _has_features(mtext):
            return super().draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
        image, descent, xo, yo = self._bitmap(s, prop, gc.get_antialiased())
        rad = math.radians(angle)
        x = round(x + xo + descent * math.sin(rad))
        y = round(y + yo + descent * math.cos(rad))
        if angle % 360 == 90:  # a y label: turned exactly, without resampling
            x, image, angle = x - image.shape[0], np.ascontiguousarray(np.rot90(image)), 0
        self._renderer.draw_text_image(image, x, y + 1, angle, gc)
        return None

    def _bitmap(self, s: str, prop, antialiased: bool) -> tuple[np.ndarray, float, float, float]:
        """The string's bitmap, its descent and the bitmap's offset, in device pixels."""
        flags = get_hinting_flag()
        key = (s, prop, self.dpi, bool(antialiased), flags)
        found = self._bitmaps.get(key)
        if found is not None:
            self._bitmaps.move_to_end(key)
            return found
        font = self._prepare_font(prop)
        font.set_text(s, 0, flags=flags)  # turned at drawing time, in raster space
        font.draw_glyphs_to_bitmap(antialiased=antialiased)
        xo, yo = font.get_bitmap_offset()
        image = np.array(font.get_image())  # a copy: the font's buffer is reused
        found = (image, font.get_descent() / 64.0, xo / 64.0, yo / 64.0)
        self._bitmaps[(s, prop.copy(), *key[2:])] = found  # a copy: props are mutable
        if len(self._bitmaps) > self.CACHED:
            self._bitmaps.popitem(last=False)
        return found

    def _get_font_height_metrics(self, prop) -> tuple[float, float, float]:
        """The ascent, descent and line gap of the font of ``prop``, in device pixels.

        ``Text`` asks a renderer for these (matplotlib >= 3.11) when it has this method and
        otherwise reads the font's tables for every text it lays out; they are the same
        numbers, read once per font and size.
        """
        key = (prop, self.dpi)
        found = self._heights.get(key)
        if found is None:
            found = _height_metrics(prop, self.dpi)
            self._heights[(prop.copy(), self.dpi)] = found
        return found


def _height_metrics(prop, dpi: float) -> tuple[float, float, float]:
    """Ascent, descent and line gap of the font of ``prop`` at ``dpi``, as ``Text`` reads them
    (the OS/2 table, else hhea); ``(None, None, None)`` lets ``Text`` measure instead."""
    font = get_font(fontManager._find_fonts_by_props(prop))
    tables = (
        ("OS/2", "sTypoLineGap", "sTypoAscender", "sTypoDescender"),
        ("hhea", "lineGap", "ascent", "descent"),
    )
    for name, gap, ascent, descent in tables:
        table = font.get_sfnt_table(name)
        if table is None:
            continue
        scale = prop.get_size_in_points() * dpi / 72 / font.get_sfnt_table("head")["unitsPerEm"]
        return table[ascent] * scale, -table[descent] * scale, table[gap] * scale
    return None, None, None


def _has_features(mtext) -> bool:
    """True when the text asks for font features or a language (matplotlib >= 3.11)."""
    if mtext is None:
        return False
    features = getattr(mtext, "get_fontfeatures", lambda: None)()
    language = getattr(mtext, "get_language", lambda: None)()
    return bool(features) or bool(language)


class Canvas(FigureCanvasAgg):
    """``FigureCanvasAgg`` drawing with ``Renderer``."""

    def get_renderer(self) -> Renderer:
        w, h = self.get_width_height(physical=True)
        key = w, h, self.figure.dpi
        if self._lastKey != key or not isinstance(getattr(self, "renderer", None), Renderer):
            self.renderer = Renderer(w, h, self.figure.dpi)
            self._lastKey = key
        return self.renderer


class NearestImage(AxesImage):
    """An ``AxesImage`` shown with nearest interpolation, resampled by indexing.

    matplotlib resamples the data and its mask to the screen's pixels (Agg), then
    normalizes and colours every screen pixel. For a nearest image on linear axes the
    screen pixel takes the colour of the data cell under its centre: this colours the
    data cells once and picks them by index (a tie, a centre on a cell's edge, goes to
    the lower cell as in matplotlib). Anything else (other interpolations, an alpha
    array, RGB data, a turned transform, no clipping) is left to ``AxesImage``.
    """

    def make_image(self, renderer, magnification=1.0, unsampled=False):
        data, trans = self._A, self.get_transform()
        if (
            unsampled
            or data is None
            or data.ndim != 2
            or self.get_interpolation() != "nearest"
            or np.ndim(self.get_alpha()) > 0
            or not trans.is_affine
        ):
            return super().make_image(renderer, magnification, unsampled)
        x1, x2, y1, y2 = self.get_extent()
        in_bbox = Bbox(np.array([[x1, y1], [x2, y2]]))
        if not self.get_clip_on():
            return super().make_image(renderer, magnification, unsampled)
        clip = self.get_clip_box() or self.axes.bbox
        clipped = Bbox.intersection(TransformedBbox(in_bbox, trans), clip)
        if clipped is None:
            return None, 0, 0, None
        # the output's pixel box, rounded as matplotlib rounds it
        e = clipped.extents * magnification
        x0, y0 = np.floor(e[0] + 0.5), np.ceil(e[1] - 0.5 - 1e-8)
        width = int(np.floor(e[2] + 0.5 + 1e-8) - x0)
        height = int(np.ceil(e[3] - 0.5) - y0)
        if width <= 0 or height <= 0:
            return None, 0, 0, None
        rows, cols = data.shape
        if self.origin == "upper":
            t = Affine2D().translate(0, -rows).scale(1, -1)
        else:
            t = IdentityTransform()
        t += Affine2D().scale(in_bbox.width / cols, in_bbox.height / rows)
        t += Affine2D().translate(in_bbox.x0, in_bbox.y0) + trans
        t += Affine2D().scale(magnification).translate(-x0, -y0)
        m = t.get_matrix()  # data cell (column, row) -> output pixel (x, y)
        if m[0, 1] != 0 or m[1, 0] != 0:
            return super().make_image(renderer, magnification, unsampled)
        # the cell under each pixel's centre; output row 0 is the bottom, as matplotlib's
        col = np.ceil((np.arange(width) + 0.5 - m[0, 2]) / m[0, 0]).astype(np.intp) - 1
        row = np.ceil((np.arange(height) + 0.5 - m[1, 2]) / m[1, 1]).astype(np.intp) - 1
        colours = self.to_rgba(data, bytes=True)  # shape: (rows, cols, 4)
        out = colours[np.clip(row, 0, rows - 1)][:, np.clip(col, 0, cols - 1)]
        out[(row < 0) | (row >= rows)] = 0  # outside the data: transparent
        out[:, (col < 0) | (col >= cols)] = 0
        alpha = self._get_scalar_alpha()
        if alpha != 1:
            out[..., 3] = (out[..., 3] * alpha).astype(np.uint8)
        return out, x0 / magnification, y0 / magnification, t

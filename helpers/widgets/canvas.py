"""The Agg canvas the explorers draw on: plain text drawn as one bitmap per string.

matplotlib 3.11 draws a text glyph by glyph from Python (a FreeType transform, a render
and a blend per glyph): the tick labels, titles and readouts an explorer draws again at a
move cost a few milliseconds each. ``Canvas`` draws a plain text as matplotlib did up to
3.10: FreeType lays out and renders the whole string into one bitmap in a single call,
which is placed at the nearest device pixel and blended once (rotated by the renderer when
the text is). At 2 device pixels per CSS pixel the difference is under a quarter of a CSS
pixel in the text's position. Mathtext (``$...$``, as in log-axis tick labels), TeX and
texts with font features or a language keep matplotlib's own path.

Imported when the first explorer is built: it imports matplotlib.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag

__all__ = ["Canvas", "Renderer"]


class Renderer(RendererAgg):
    """``RendererAgg`` drawing a plain text as one FreeType bitmap."""

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if ismath or _has_features(mtext):
            return super().draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
        font = self._prepare_font(prop)
        font.set_text(s, 0, flags=get_hinting_flag())  # rotated below, in raster space
        font.draw_glyphs_to_bitmap(antialiased=gc.get_antialiased())
        descent = font.get_descent() / 64.0
        xo, yo = font.get_bitmap_offset()
        rad = math.radians(angle)
        x = round(x + xo / 64.0 + descent * math.sin(rad))
        y = round(y + yo / 64.0 + descent * math.cos(rad))
        image = np.asarray(font.get_image())
        if angle % 360 == 90:  # a y label: turned exactly, without resampling
            x, image, angle = x - image.shape[0], np.ascontiguousarray(np.rot90(image)), 0
        self._renderer.draw_text_image(image, x, y + 1, angle, gc)
        return None


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

"""The explorer every notebook's widgets are built on.

An explorer is a matplotlib ``Figure`` drawn once, sliders, and an ``Image`` widget.
Moving a slider calls ``update(**values)``, which changes the data of the existing
artists (``set_data``, ``set_ydata``, ...) and re-renders the same figure into the same
image: nothing is re-created, so nothing flickers, and no JupyterLab extension is needed.

``Explorer`` is the one blitting explorer of the course: the artists an update changes
(``animate``) are drawn over a cached background that holds everything else (axes,
ticks, labels, legends). The background is drawn again only when something static
changed: the limits or scales of any axes (found automatically), or the subclass's own
``layout_key()``. Artists that follow only some sliders can sit in a second cached layer
(``animate(..., slow=[...])`` and ``slow_key()``). Frames are sent as PNG at zlib level 1
(lossless and fast to encode).

While nbgrader validates or autogrades (``NBGRADER_EXECUTION`` is set) the factories
return ``None`` and draw nothing. matplotlib and ipywidgets are imported when the first
explorer is built, not when a module of ``helpers.widgets`` is imported: the imports cell
of a notebook stays fast when nbgrader runs it without the teaching cells.
"""

from __future__ import annotations

import math
import os
import struct
import zlib
from collections.abc import Hashable, Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import ipywidgets as widgets
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.text import Text

__all__ = [
    "Explorer",
    "int_slider",
    "interactive",
    "log_slider",
    "nice_ceil",
    "png_bytes",
    "resized",
    "subtitle",
]


def interactive() -> bool:
    """False while nbgrader runs the notebook: explorers then draw nothing."""
    return "NBGRADER_EXECUTION" not in os.environ


class Explorer:
    """Sliders that update one figure in place, redrawing only what changes.

    Subclasses build their artists in ``draw(fig)`` once, mark the ones ``update`` changes
    with ``self.animate([...])`` and change their data in ``update(**values)``.
    ``controls`` maps a parameter name to its widget; tests set
    ``explorer.controls["d"].value = 32`` and read the artists' data afterwards.

    Rendering: the figure without the animated artists is drawn once and kept as a
    background while ``static_key()`` stays the same (the limits and scales of every axes,
    the dpi, plus ``layout_key()`` for anything else static a subclass changes, such as
    tick labels). An update restores the background and draws the animated artists on
    top, in the order given to ``animate``. Artists that change with some sliders only
    (``animate(..., slow=[...])``) are kept in a second cached layer, drawn again when
    ``slow_key()`` changes.
    """

    dpi = 72

    def __init__(
        self,
        controls: Mapping[str, widgets.ValueWidget],
        figsize: tuple[float, float] = (9, 4),
        title: str = "",
    ):
        import ipywidgets as widgets
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.controls = dict(controls)
        self.fig = Figure(figsize=figsize, dpi=self.dpi)
        FigureCanvasAgg(self.fig)
        self.image = widgets.Image(format="png")
        self.message = widgets.HTML()
        self.title = title
        self.dynamic: list[Artist] = []
        self.slow: list[Artist] = []
        self._background = None
        self._background_key: Hashable = None
        self._layer = None
        self._layer_key: Hashable = None
        self.draw(self.fig)
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.refresh()

    # -- to implement ---------------------------------------------------------------
    def draw(self, fig: Figure) -> None:
        """Build every artist once; call ``self.animate([...])`` with the changing ones."""
        raise NotImplementedError

    def update(self, **values) -> None:
        """Change the data of the existing artists for the given slider values."""
        raise NotImplementedError

    def layout_key(self) -> Hashable:
        """Anything static besides the axis limits and scales that an update may change."""
        return ()

    def slow_key(self) -> Hashable:
        """What the ``slow`` artists (see ``animate``) depend on."""
        return ()

    # -- machinery ------------------------------------------------------------------
    def animate(self, artists: Iterable[Artist], slow: Iterable[Artist] = ()) -> None:
        """Mark the artists ``update`` changes (both lists are left out of the background).

        ``artists`` are drawn at every update; ``slow`` ones only when ``slow_key()``
        changed, into a cached layer over the background (a heatmap that follows ``base``
        but not ``pos``, say): a move that changes neither the axes nor ``slow_key`` draws
        ``artists`` only.
        """
        self.dynamic = list(artists)
        self.slow = list(slow)
        for artist in self.dynamic + self.slow:
            artist.set_animated(True)
        self._background, self._background_key = None, None
        self._layer, self._layer_key = None, None

    def static_key(self) -> Hashable:
        """What the background depends on: every axes' limits and scales, dpi, layout_key."""
        axes = tuple(
            (ax.get_xlim(), ax.get_ylim(), ax.get_xscale(), ax.get_yscale()) for ax in self.fig.axes
        )
        return (axes, self.fig.dpi, self.layout_key())

    def values(self) -> dict:
        """The current value of every control, by name."""
        return {name: control.value for name, control in self.controls.items()}

    def refresh(self) -> None:
        """Recompute from the current slider values and redraw into the same image."""
        try:
            self.update(**self.values())
            self.message.value = ""
        except Exception as exc:  # noqa: BLE001 - a learner's function may still be a stub
            self.message.value = f"<b>cannot draw:</b> {type(exc).__name__}: {exc}"
        self.render()

    def render(self) -> None:
        """Background (drawn again only when ``static_key`` changed), animated artists, PNG."""
        fig = self.fig
        if fig.dpi != self.dpi:
            fig.set_dpi(self.dpi)
        canvas = fig.canvas
        key = self.static_key()
        if self._background is None or key != self._background_key:
            canvas.draw()  # animated artists are left out
            self._background = canvas.copy_from_bbox(fig.bbox)
            self._background_key = self.static_key()  # drawing may settle limits
            self._layer = None
        elif not self.slow:
            canvas.restore_region(self._background)
        renderer = canvas.get_renderer()
        if self.slow:
            slow_key = self.slow_key()
            if self._layer is None or slow_key != self._layer_key:
                canvas.restore_region(self._background)
                for artist in self.slow:
                    if artist.get_visible():
                        artist.draw(renderer)
                self._layer, self._layer_key = canvas.copy_from_bbox(fig.bbox), slow_key
            else:
                canvas.restore_region(self._layer)
        for artist in self.dynamic:
            if artist.get_visible():
                artist.draw(renderer)
        self.image.value = png_bytes(canvas)

    def _on_change(self, _change) -> None:
        self.refresh()

    def widget(self) -> widgets.Widget:
        """Title, controls, picture and message in one box."""
        import ipywidgets as widgets

        rows = [widgets.HTML(f"<b>{self.title}</b>")] if self.title else []
        controls = widgets.HBox(list(self.controls.values()))
        return widgets.VBox([*rows, controls, self.image, self.message])

    def _repr_mimebundle_(self, **kwargs):
        return self.widget()._repr_mimebundle_(**kwargs)


def png_bytes(canvas: FigureCanvasAgg) -> bytes:
    """The canvas as an opaque 8-bit RGB PNG, zlib level 1, no row filter.

    Written directly (signature, IHDR, one IDAT, IEND): about 40 % faster than PIL at
    ``compress_level=1`` on these figures, and smaller, since PIL's row filters do not pay
    off on flat plot colours.
    """
    rgba = np.asarray(canvas.buffer_rgba())  # shape: (height, width, 4)
    height, width = rgba.shape[:2]
    rows = np.zeros((height, 1 + 3 * width), dtype=np.uint8)  # filter byte 0 on every row
    rows[:, 1:].reshape(height, width, 3)[...] = rgba[..., :3]
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _chunk(b"IHDR", header),
            _chunk(b"IDAT", zlib.compress(rows.tobytes(), 1)),
            _chunk(b"IEND", b""),
        ]
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def int_slider(description: str, value: int, lo: int, hi: int, step: int = 1) -> widgets.IntSlider:
    """An integer slider that updates when released."""
    import ipywidgets as widgets

    return widgets.IntSlider(
        value=value,
        min=lo,
        max=hi,
        step=step,
        description=description,
        continuous_update=False,
    )


def log_slider(description: str, value: float, lo: float, hi: float) -> widgets.FloatLogSlider:
    """A slider for ``base``: 10**lo .. 10**hi on a log scale."""
    import ipywidgets as widgets

    return widgets.FloatLogSlider(
        value=value,
        base=10,
        min=lo,
        max=hi,
        step=0.05,
        description=description,
        continuous_update=False,
    )


def nice_ceil(x: float) -> float:
    """The smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten that is >= x (x > 0).

    Axis limits rounded up this way stay the same over most slider steps, so that the
    background of an ``Explorer`` is kept.
    """
    x = float(x)
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"x must be a finite number > 0, got {x!r}")
    power = 10.0 ** math.floor(math.log10(x))
    for m in (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0):
        if m * power >= x * (1 - 1e-12):
            return m * power
    return 10.0 * power


def subtitle(ax: Axes) -> Text:
    """A one-line text just under the axes' title, for the numbers that change.

    The title is placed at a fixed height (``y=1.0``, as every explorer title is): an
    automatic title position costs a measure of every tick label at each full redraw.
    """
    ax.set_title(ax.get_title(), pad=20, y=1.0)
    return ax.text(0.5, 1.015, "", transform=ax.transAxes, ha="center", va="bottom")


def resized(vec, d: int, name: str = "vec") -> np.ndarray:
    """``vec`` cut to its first ``d`` entries, or repeated from the start up to length ``d``.

    The explorers of 06_rope and 08_offsets use it to run the learner's ``demo_vectors()``
    at any model dimension. # shape: (d,)
    """
    arr = np.asarray(vec, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty vector, got shape {arr.shape}")
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    return np.resize(arr, int(d))

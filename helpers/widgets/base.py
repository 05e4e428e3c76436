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
(``animate(..., slow=[...])`` and ``slow_key()``). Frames are sent as PNG at deflate level 1,
compressed by zlib-ng (lossless, and about 3 times faster to encode than the standard
library's zlib).

Frames are rendered at ``scale`` (2) device pixels per CSS pixel and shown at the figure's
CSS size (``figsize`` times ``dpi`` = 72), so text stays sharp on high-density screens. The
figure's canvas is ``helpers.widgets.canvas.Canvas``, which draws a plain text in one piece;
the animated images shown with nearest interpolation become ``canvas.NearestImage``
(resampled by indexing the coloured cells).
Axes whose limits follow a slider are ``moving``: their axis lines, ticks and labels are
left out of the background and drawn into a cached layer of their own (under the layer of
slow artists), so a move that changes those limits redraws a few texts, not the whole
figure.

Learner functions are wrapped with ``learner(name, fn)``: an error inside one is reported
as "cannot draw: your `name` raised ...". ``with self.panel(*artists):`` fences the part
of an update that draws one panel: an error there hides that panel's artists and the
other panels are still drawn.

Sliders update the figure while they are dragged (``continuous_update``). A drag sends
more values than a kernel draws: ipywidgets keeps one update in flight per widget and
merges the values moved meanwhile into the next one, so a frame drawn is always of the
newest value and stale ones are dropped, not queued behind each other. Each frame takes
at most 50 ms (``bench/widget_update.py``).

While nbgrader validates or autogrades (``NBGRADER_EXECUTION`` is set) the factories
return ``None`` and draw nothing. matplotlib and ipywidgets are imported when the first
explorer is built, not when a module of ``helpers.widgets`` is imported: the imports cell
of a notebook stays fast when nbgrader runs it without the teaching cells.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import struct
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from zlib_ng import zlib_ng

from helpers.i18n import tr

if TYPE_CHECKING:
    import ipywidgets as widgets
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.text import Text

__all__ = [
    "FONT",
    "Explorer",
    "LearnerError",
    "PngEncoder",
    "ValueBox",
    "checkbox",
    "int_slider",
    "interactive",
    "learner",
    "log_slider",
    "nice_ceil",
    "png_bytes",
    "resized",
    "subtitle",
]


SLIDER_WIDTH = "330px"  # a slider with a short label (see slider_widths); its number box beside it
DESCRIPTION_WIDTH = "80px"
BOX_WIDTH = "92px"
# The font of an explorer's figure, in points: its tick labels, axis labels, legends and panel
# titles, and the smallest text it has. A figure is shown at 72 CSS pixels per inch, so this is
# 12 CSS pixels at 100 % zoom (tests/test_widgets_text.py measures every text). Figures are
# built and drawn with it as matplotlib's ``font.size`` (``Explorer.style``).
FONT = 12


def interactive() -> bool:
    """False while nbgrader runs the notebook: explorers then draw nothing."""
    return "NBGRADER_EXECUTION" not in os.environ


class LearnerError(Exception):
    """An exception raised inside a learner's function, with the function's name."""

    def __init__(self, name: str, error: BaseException):
        self.name, self.error = name, error
        kind = type(error).__name__
        if str(error):
            said = tr("your `{name}` raised {type}: {error}", name=name, type=kind, error=error)
        else:  # NotImplementedError(): nothing to add after the type
            said = tr("your `{name}` raised {type}", name=name, type=kind)
        super().__init__(said)


def learner(name: str, fn: Callable) -> Callable:
    """``fn`` (a learner's function) whose exceptions become ``LearnerError(name, ...)``."""
    if getattr(fn, "_learner_name", None) == name:
        return fn

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except LearnerError:
            raise
        except Exception as exc:
            raise LearnerError(name, exc) from exc

    call._learner_name = name
    return call


def describe(exc: BaseException) -> str:
    """One line for the message under the figure."""
    if isinstance(exc, LearnerError):
        return tr("<b>cannot draw:</b> {message}", message=_html(str(exc)))
    return tr(
        "<b>cannot draw:</b> {type}: {message}", type=type(exc).__name__, message=_html(str(exc))
    )


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class _Missing(Exception):
    """An input of a panel is missing because an earlier panel failed."""


class Explorer:
    """Sliders that update one figure in place, redrawing only what changes.

    Subclasses build their artists in ``draw(fig)`` once, mark the ones ``update`` changes
    with ``self.animate([...])`` and change their data in ``update(**values)``.
    ``controls`` maps a parameter name to its widget; tests set
    ``explorer.controls["d"].value = 32`` and read the artists' data afterwards.

    Rendering: the figure without the animated artists is drawn once and kept as a
    background while ``static_key()`` stays the same (the limits and scales of every axes
    that is not ``moving``, the dpi, plus ``layout_key()`` for anything else static a
    subclass changes). An update restores the background and draws the animated artists
    on top, in the order given to ``animate``. The axis artists of ``moving`` axes are
    kept in a cached layer over the background, drawn again when their limits change; the
    ``slow`` artists (``animate(..., slow=[...])``) in a cached layer over that one, drawn
    again when ``slow_key()`` or the layer under it changed.
    """

    dpi = 72  # CSS pixels per inch: the figure is shown at figsize * dpi CSS pixels
    scale = 2  # device pixels per CSS pixel in the frames (sharp on high-density screens)

    def __init__(
        self,
        controls: Mapping[str, widgets.ValueWidget],
        figsize: tuple[float, float] = (9, 4),
        title: str = "",
    ):
        import ipywidgets as widgets
        from matplotlib.figure import Figure

        from helpers import fonts
        from helpers.widgets.canvas import Canvas

        fonts.ensure()  # Hangul in Korean titles and labels
        self.controls = dict(controls)
        self.fig = Figure(figsize=figsize, dpi=self.dpi * self.scale)
        Canvas(self.fig)  # plain text drawn in one piece: see helpers.widgets.canvas
        width = round(figsize[0] * self.dpi)  # CSS pixels; the height follows the aspect
        self.image = widgets.Image(
            format="png",
            layout=widgets.Layout(width=f"{width}px", max_width="100%", height="auto"),
        )
        self.message = widgets.HTML()
        self.typed_note = widgets.HTML(_note_html(""))
        self.typed_note.add_class("pe-note")
        # hidden while the kernel that drew the figure is there; JupyterLab's widget manager
        # marks every view "jupyter-widgets-disconnected" when that kernel restarts
        self.stale_note = widgets.HTML(_stale_html())
        self.stale_note.add_class("pe-stale")
        self.boxes = {
            control: ValueBox(control.description or name, control, self._noted)
            for name, control in self.controls.items()
            if isinstance(control, (widgets.IntSlider, widgets.FloatSlider, widgets.FloatLogSlider))
        }
        # the figure in words under the image, and the sliders' names for a screen reader
        self.words = words(
            tr("The figure in words"),
            {
                control.description: {"base": control.base}
                if isinstance(control, widgets.FloatLogSlider)
                else {}
                for control in self.boxes
            },
        )
        self.title = title
        self.dynamic: list[Artist] = []
        self.slow: list[Artist] = []
        self.moving_axis: list[Axis] = []
        self.errors: list[str] = []
        self._failed: set[int] = set()
        self._background = None
        self._background_key: Hashable = None
        self._layer = None
        self._layer_key: Hashable = None
        self._axes_layer = None
        self._axes_key: Hashable = None
        self._png = PngEncoder()
        self._kept: dict[str, tuple[Hashable, object]] = {}
        self._why: dict[Axes, Text] = {}  # the note of a panel left undrawn
        with self.style():
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
    @staticmethod
    def style() -> contextlib.AbstractContextManager:
        """matplotlib's settings while a figure is built and updated: every text that gives
        no size of its own (ticks, axis labels, legends, titles) is ``FONT`` points."""
        import matplotlib

        return matplotlib.rc_context({"font.size": FONT, "axes.titlesize": FONT})

    def animate(
        self,
        artists: Iterable[Artist],
        slow: Iterable[Artist] = (),
        moving: Iterable[Axes | Axis] = (),
    ) -> None:
        """Mark the artists ``update`` changes (all are left out of the background).

        ``artists`` are drawn at every update; ``slow`` ones only when ``slow_key()``
        changed, into a cached layer over the background (a heatmap that follows ``base``
        but not ``pos``, say). ``moving`` axes (or single ``ax.xaxis`` / ``ax.yaxis``)
        have limits that follow the sliders: those axis artists (ticks, tick labels,
        grid) are drawn into a cached layer of their own, between the background and the
        slow layer, whenever their limits change, so the background never depends on
        them and a move of ``base`` does not draw tick labels again.
        """
        from matplotlib.axes import Axes
        from matplotlib.image import AxesImage

        from helpers.widgets.canvas import NearestImage

        axis_artists = []
        for item in moving:
            axis_artists += [item.xaxis, item.yaxis] if isinstance(item, Axes) else [item]
        self.moving_axis = axis_artists
        self.dynamic = list(artists)
        self.slow = list(slow)
        for artist in self.dynamic + self.slow + self.moving_axis:
            artist.set_animated(True)
            if type(artist) is AxesImage:  # drawn again at every move: resampled by indexing
                artist.__class__ = NearestImage
        self._background, self._background_key = None, None
        self._axes_layer, self._axes_key = None, None
        self._layer, self._layer_key = None, None

    def _limits(self, ax: Axes) -> tuple:
        """The limits and scales of ``ax`` the background depends on (not the moving ones)."""
        x = (ax.get_xlim(), ax.get_xscale())
        y = (ax.get_ylim(), ax.get_yscale())
        moving = {id(axis) for axis in self.moving_axis}
        return (None if id(ax.xaxis) in moving else x, None if id(ax.yaxis) in moving else y)

    def static_key(self) -> Hashable:
        """What the background depends on: still limits and scales, dpi, layout_key."""
        return (tuple(self._limits(ax) for ax in self.fig.axes), self.fig.dpi, self.layout_key())

    def moving_key(self) -> Hashable:
        """What the layer of moving axes depends on: their limits and scales."""
        return tuple(
            (axis.get_view_interval().tolist(), axis.get_scale()) for axis in self.moving_axis
        )

    def full_slow_key(self) -> Hashable:
        """What the cached layers depend on: moving limits, ``slow_key``, failed panels."""
        failed = tuple(i for i, a in enumerate(self.slow) if id(a) in self._failed)
        return (self.moving_key(), self.slow_key(), failed)

    def kept(self, name: str, key: Hashable, compute: Callable[[], object]):
        """``compute()``, or the value it gave last time if that was for the same ``key``.

        For a value that does not follow every slider (``key``: the parameters it depends
        on): a move of another slider does not compute it again. An error is not kept.
        """
        found = self._kept.get(name)
        if found is not None and found[0] == key:
            return found[1]
        value = compute()
        self._kept[name] = (key, value)
        return value

    def values(self) -> dict:
        """The current value of every control, by name."""
        return {name: control.value for name, control in self.controls.items()}

    @contextlib.contextmanager
    def panel(self, *artists: Artist) -> Iterator[None]:
        """Fence the drawing of one panel: an error hides ``artists`` and is reported.

        The rest of ``update`` goes on, so one failing learner function leaves the other
        panels drawn.
        """
        try:
            yield
        except _Missing:  # an input failed earlier and was reported there
            self._failed.update(id(a) for a in artists)
        except Exception as exc:  # noqa: BLE001 - a learner's function may still be a stub
            self.errors.append(describe(exc))
            self._failed.update(id(a) for a in artists)

    @staticmethod
    def need(*inputs) -> None:
        """Inside ``panel``: leave the panel undrawn, silently, when an input is missing
        (``None``: the function computing it failed and its panel reported the error)."""
        if any(x is None for x in inputs):
            raise _Missing

    def refresh(self) -> None:
        """Recompute from the current slider values and redraw into the same image."""
        self.errors, self._failed = [], set()
        with self.style():
            try:
                self.update(**self.values())
            except Exception as exc:  # noqa: BLE001 - a learner's function may still be a stub
                self.errors.append(describe(exc))
                self._failed = {id(a) for a in self.dynamic + self.slow}
            self.message.value = "<br>".join(dict.fromkeys(self.errors))
            self._say_why_empty()
            self.render()
        self.say()

    def say(self) -> None:
        """The figure in words, as it is drawn now (``helpers.figure_words``)."""
        from helpers import figure_words

        self.words.alt = " ".join([self.title, figure_words.title(self.fig)]).strip()
        self.words.summary = figure_words.describe(self.fig)

    def _say_why_empty(self) -> None:
        """A panel left undrawn, or drawn in part, says so in its middle; the reason is
        under the figure."""
        animated = [a for a in self.dynamic + self.slow if getattr(a, "axes", None) is not None]
        failed = {a.axes for a in animated if id(a) in self._failed}
        whole = {a.axes for a in animated if id(a) not in self._failed}
        for ax in failed - set(self._why):
            text = ax.text(
                0.5, 0.5, "", transform=ax.transAxes, ha="center", va="center", color="0.3"
            )
            text.set_fontsize(FONT)
            text.set_animated(True)
            self._why[ax] = text
            self.dynamic.append(text)
        for ax, text in self._why.items():
            text.set_visible(ax in failed)
            if ax in whole:
                text.set_text(tr("partly drawn: see the message under the figure"))
            else:
                text.set_text(tr("not drawn: see the message under the figure"))

    def _drawn(self, artist: Artist) -> bool:
        return artist.get_visible() and id(artist) not in self._failed

    def render(self) -> None:
        """Background (drawn again only when ``static_key`` changed), layer, animated artists."""
        fig = self.fig
        if fig.dpi != self.dpi * self.scale:
            fig.set_dpi(self.dpi * self.scale)
        canvas = fig.canvas
        key = self.static_key()
        held = None  # the cached buffer the canvas holds now, if any: no need to restore it
        if self._background is None or key != self._background_key:
            canvas.draw()  # animated artists are left out
            self._background = held = canvas.copy_from_bbox(fig.bbox)
            self._background_key = self.static_key()  # drawing may settle limits
            self._axes_layer = self._layer = None
        renderer = canvas.get_renderer()
        below = self._background  # what the next layer is drawn over
        if self.moving_axis:
            axes_key = self.moving_key()
            if self._axes_layer is None or axes_key != self._axes_key:
                if held is not self._background:
                    canvas.restore_region(self._background)
                for axis in self.moving_axis:
                    axis.draw(renderer)
                self._axes_layer = held = canvas.copy_from_bbox(fig.bbox)
                self._axes_key, self._layer = axes_key, None
            below = self._axes_layer
        top = below
        if self.slow:
            slow_key = self.full_slow_key()
            if self._layer is None or slow_key != self._layer_key:
                if held is not below:
                    canvas.restore_region(below)
                for artist in self.slow:
                    if self._drawn(artist):
                        artist.draw(renderer)
                self._layer = held = canvas.copy_from_bbox(fig.bbox)
                self._layer_key = slow_key
            top = self._layer
        elif self.moving_axis:
            self._layer = self._axes_layer
        if held is not top:
            canvas.restore_region(top)
        for artist in self.dynamic:
            if self._drawn(artist):
                artist.draw(renderer)
        self.image.value = self._png.encode(canvas)

    def _on_change(self, _change) -> None:
        self.refresh()

    def _noted(self, said: str) -> None:
        """Show what became of a typed value (``""``: nothing to say), above the hint."""
        self.typed_note.value = _note_html(said)

    def widget(self) -> widgets.Widget:
        """Title, controls (wrapped onto rows), the note on typing values, picture and
        message in one box. Each slider has a number box beside it (``ValueBox``)."""
        import ipywidgets as widgets

        rows = [widgets.HTML(f"<b>{self.title}</b>")] if self.title else []
        items = []
        for control in self.controls.values():
            control.layout.flex = "0 0 auto"  # keep its width; the row wraps instead
            # but never wider than the output (zoomed in): its 2-pixel margins included
            control.layout.max_width = "calc(100% - 4px)"
            if control in self.boxes:
                # the box goes under its slider when the two do not fit side by side
                pair = widgets.HBox(
                    [control, self.boxes[control].box],
                    layout=widgets.Layout(
                        flex="0 0 auto",
                        align_items="center",
                        flex_flow="row wrap",
                        max_width="100%",
                    ),
                )
                pair.add_class("pe-control")
                items.append(pair)
            else:
                items.append(control)
        controls = widgets.HBox(
            items,
            layout=widgets.Layout(flex_flow="row wrap", align_items="center", width="100%"),
        )
        parts = [*rows, controls]
        if self.boxes:
            parts.append(self.typed_note)
        box = widgets.VBox(
            [*parts, self.stale_note, self.image, self.words, self.message],
            layout=widgets.Layout(width="100%", overflow="hidden"),
        )
        box.add_class("pe-explorer")
        return box

    def _repr_mimebundle_(self, **kwargs):
        return self.widget()._repr_mimebundle_(**kwargs)


# What an explorer tells a screen reader and a keyboard, in a few lines of script (access.js)
# run by an anywidget that sits in the explorer's box, under its image (ipywidgets 8.1 has no
# option for any of it):
# - a "The figure in words" disclosure with ``summary`` (``helpers.figure_words.describe``),
#   one click away, and the same text in a polite live region, so that a screen reader reads
#   the new numbers after a move redraws the figure;
# - the explorer's image gets ``alt`` (the figure's name) and is described by ``summary``;
# - each slider's handle is named after its slider's label and announces the value its
#   number box shows (``sliders``: the base of a log slider, whose handle moves on exponents).
ACCESS_SCRIPT = Path(__file__).with_name("access.js")


@functools.lru_cache(maxsize=1)
def _words_class() -> type:
    import anywidget
    import traitlets

    class Words(anywidget.AnyWidget):
        _esm = ACCESS_SCRIPT
        summary = traitlets.Unicode("").tag(sync=True)
        alt = traitlets.Unicode("").tag(sync=True)
        caption = traitlets.Unicode("").tag(sync=True)
        box_hint = traitlets.Unicode("").tag(sync=True)
        sliders = traitlets.Dict().tag(sync=True)

    return Words


def words(caption: str, sliders: dict[str, dict]) -> widgets.Widget:
    """The explorer's words and names (see ``ACCESS_SCRIPT``); ``sliders`` maps a slider's
    label to ``{"base": b}`` for a log slider, ``{}`` for a linear one."""
    return _words_class()(caption=caption, sliders=sliders, box_hint=tr("type a value, then Enter"))


def _note_html(said: str) -> str:
    """The line under the controls: what became of a typed value, then how to aim."""
    hint = tr(
        "Drag a slider to get near; type an exact value in the box beside it and press Enter; "
        "or click a slider and press ← → to move it one step."
    )
    shown = f'<span style="color:#a33">{_html(said)}</span><br>' if said else ""
    return f'{shown}<span style="color:#555;font-size:90%">{_html(hint)}</span>'


# The note of an explorer whose kernel is gone: shown only under the class the widget
# manager gives a view whose comm is dead (the style travels with the note itself).
STALE_STYLE = (
    "<style>.pe-stale:not(.jupyter-widgets-disconnected),.pe-stale-text{display:none}"
    ".jupyter-widgets-disconnected .pe-stale-text,"
    ".jupyter-widgets-disconnected.pe-stale .pe-stale-text"
    "{display:block;color:#a33;font-weight:bold;padding:4px 0}</style>"
)


def _stale_html() -> str:
    """The note an explorer shows once the kernel that drew it has restarted."""
    said = tr(
        "The kernel that drew this figure has restarted: the sliders no longer redraw it. "
        "Run the first cell (helpers.start) again, then this cell."
    )
    return f'{STALE_STYLE}<div class="pe-stale-text">{_html(said)}</div>'


def _plain(value: float) -> str:
    """A value as a learner would type it: ``4096``, ``0.5``, ``10000``, ``1.122e+06``."""
    return f"{value:.6g}" if isinstance(value, float) else str(value)


class ValueBox:
    """The number box beside a slider: it shows the slider's value, and a value typed into
    it (then Enter) sets the slider to exactly that value.

    A typed value the slider cannot take is brought to the nearest one it can (inside its
    range, on its steps) and ``said`` is called with a sentence saying so, with the range:
    nothing is clamped without a word. A slider's range may change while it is shown (07's
    ``pos`` follows ``seq_len``): the range is read when a value is typed.

    The box is a FloatText for every slider, integer ones too: the page's IntText drops a
    typed "." (2.5 arrived as 25), where a FloatText sends 2.5, which an integer slider
    then takes as its nearest whole number, and says so.
    """

    def __init__(self, name: str, slider: widgets.ValueWidget, said: Callable[[str], None]):
        import ipywidgets as widgets

        self.name, self.slider, self.said = name, slider, said
        self.integer = isinstance(slider, widgets.IntSlider)
        self.box = widgets.FloatText(
            value=self._shown(slider.value),
            layout=widgets.Layout(width=BOX_WIDTH),
            tooltip=tr("{name}: type a value, then Enter", name=name),  # its accessible name
        )
        self.box.add_class("pe-value")
        self._busy = False
        self.box.observe(self._typed, names="value")
        slider.observe(self._moved, names="value")

    def bounds(self) -> tuple[float, float]:
        """The smallest and largest value of the slider now."""
        s = self.slider
        if hasattr(s, "base"):  # a log slider: its range is of exponents
            return s.base**s.min, s.base**s.max
        return s.min, s.max

    def nearest(self, typed: float) -> float:
        """The value the slider takes for ``typed``: inside its range, on its steps."""
        lo, hi = self.bounds()
        value = min(max(typed, lo), hi)
        if self.integer:
            step = self.slider.step
            value = lo + math.floor((value - lo) / step + 0.5) * step  # halves go up
            value = int(value if value <= hi else value - step)
        return value

    def _shown(self, value):
        return int(value) if self.integer else float(f"{value:.4g}")

    def _typed(self, change) -> None:
        if self._busy:
            return
        typed = change["new"]
        value = self.nearest(typed)
        lo, hi = self.bounds()
        if value != typed:
            if typed < lo or typed > hi:
                said = tr(
                    "{name}: {typed} is outside {lo} to {hi}; set to {value}.",
                    name=self.name,
                    typed=_plain(typed),
                    lo=_plain(lo),
                    hi=_plain(hi),
                    value=_plain(value),
                )
            elif self.integer and self.slider.step == 1:
                said = tr(
                    "{name} takes whole numbers: {typed} is set to {value}.",
                    name=self.name,
                    typed=_plain(typed),
                    value=_plain(value),
                )
            else:
                said = tr(
                    "{name} moves in steps of {step} from {lo}: {typed} is set to {value}.",
                    name=self.name,
                    step=self.slider.step,
                    lo=_plain(lo),
                    typed=_plain(typed),
                    value=_plain(value),
                )
        else:
            said = ""
        self.said(said)
        self._busy = True
        try:
            self.box.value = value
            self.slider.value = value
        finally:
            self._busy = False

    def _moved(self, change) -> None:
        if self._busy:
            return
        self._busy = True
        try:
            self.box.value = self._shown(change["new"])
        finally:
            self._busy = False


def png_bytes(canvas: FigureCanvasAgg) -> bytes:
    """The canvas as an opaque 8-bit RGB PNG, deflate level 1, no row filter."""
    return PngEncoder().encode(canvas)


class PngEncoder:
    """PNG frames of one canvas, re-compressing only the bands of rows that changed.

    Written directly (signature, IHDR, one IDAT, IEND), with zlib-ng's deflate at level 1:
    faster than PIL at ``compress_level=1`` on these figures, since PIL's row filters do
    not pay off on flat plot colours and zlib-ng's level 1 is about 3 times as fast as
    zlib's. The IDAT stream is one zlib stream made of independently compressed bands
    of ``band`` rows (each ends on a full flush, so they can be joined; the Adler-32
    checksums of the bands are combined). A band whose pixels equal the
    previous frame's keeps its compressed bytes and checksum: a slider move changes the
    rows of a panel or two, the rest of the frame costs a comparison.
    """

    band = 32

    def __init__(self) -> None:
        self._pixels: np.ndarray | None = None  # the last frame, one uint32 per pixel
        self._bands: list[tuple[bytes, int, int]] = []  # (deflate bytes, adler32, length)

    def encode(self, canvas: FigureCanvasAgg) -> bytes:
        rgba = np.asarray(canvas.buffer_rgba())  # shape: (height, width, 4)
        height, width = rgba.shape[:2]
        # one uint32 per pixel: comparing bands costs a quarter of comparing bytes
        pixels = rgba.reshape(height, 4 * width).view(np.uint32)
        previous = self._pixels
        if previous is not None and previous.shape != pixels.shape:
            previous = None
        bands = []
        for k, start in enumerate(range(0, height, self.band)):
            stop = min(start + self.band, height)
            if previous is not None and np.array_equal(pixels[start:stop], previous[start:stop]):
                bands.append(self._bands[k])
                continue
            rows = np.empty((stop - start, 1 + 3 * width), dtype=np.uint8)
            rows[:, 0] = 0  # filter byte 0 (none) on every row
            rgb = rows[:, 1:].reshape(stop - start, width, 3)
            for channel in range(3):  # one channel at a time: 3 times faster than [..., :3]
                rgb[..., channel] = rgba[start:stop, :, channel]
            raw = zlib_ng.compressobj(1, zlib_ng.DEFLATED, -15)  # raw deflate: no header
            data = raw.compress(rows) + raw.flush(zlib_ng.Z_FULL_FLUSH)
            bands.append((data, zlib_ng.adler32(rows), rows.size))
        self._pixels, self._bands = pixels.copy(), bands
        checksum = 1  # the Adler-32 of nothing
        for _, adler, length in bands:
            checksum = _adler32_combine(checksum, adler, length)
        # zlib header (deflate, level 1), the bands, an empty final block, the Adler-32
        parts = [b"\x78\x01", *(data for data, _, _ in bands), b"\x03\x00"]
        stream = b"".join([*parts, struct.pack(">I", checksum)])
        header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
        return b"".join(
            [
                b"\x89PNG\r\n\x1a\n",
                _chunk(b"IHDR", header),
                _chunk(b"IDAT", stream),
                _chunk(b"IEND", b""),
            ]
        )


def _adler32_combine(adler1: int, adler2: int, length2: int) -> int:
    """The Adler-32 of ``a + b`` from those of ``a`` and ``b`` (zlib's adler32_combine)."""
    base = 65521
    rem = length2 % base
    sum1 = adler1 & 0xFFFF
    sum2 = (rem * sum1) % base
    sum1 = (sum1 + (adler2 & 0xFFFF) + base - 1) % base
    sum2 = (sum2 + ((adler1 >> 16) & 0xFFFF) + ((adler2 >> 16) & 0xFFFF) + base - rem) % base
    return sum1 | (sum2 << 16)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib_ng.crc32(kind + data))
    )


def slider_widths(description: str) -> tuple[str, str]:
    """``(slider width, description width)`` for a slider labelled ``description``:
    ``SLIDER_WIDTH`` and ``DESCRIPTION_WIDTH``, the label wider when its text needs it
    (JupyterLab's 13 px interface font: about 7.5 px a Latin letter, 13 px a Hangul
    syllable), so that no label is cut to "evaluatio..." (``tests/test_browser.py`` reads
    every label's width in the page)."""
    import unicodedata

    least = int(DESCRIPTION_WIDTH.removesuffix("px"))
    track = int(SLIDER_WIDTH.removesuffix("px")) - least
    text = sum(13.0 if unicodedata.east_asian_width(c) in "WF" else 7.5 for c in description)
    label = max(least, int(text + 12.99))
    return f"{label + track}px", f"{label}px"


def int_slider(description: str, value: int, lo: int, hi: int, step: int = 1) -> widgets.IntSlider:
    """An integer slider that updates the figure while it is dragged.

    The arrow keys move its focused handle by one ``step`` (PageUp and PageDown by five).
    It has no readout of its own: an ``Explorer`` shows a number box beside it
    (``ValueBox``) where a typed value sets it exactly, so on a long range (positions 0 to
    4096, about 17 positions a pixel) a drag gets near and the box picks the exact value.
    """
    import ipywidgets as widgets

    width, label = slider_widths(description)
    return widgets.IntSlider(
        value=value,
        min=lo,
        max=hi,
        step=step,
        description=description,
        readout=False,
        continuous_update=True,
        layout=widgets.Layout(width=width, flex="0 0 auto"),
        style={"description_width": label},
    )


def checkbox(description: str, value: bool) -> widgets.Checkbox:
    """A checkbox that keeps its width when the controls wrap."""
    import ipywidgets as widgets

    return widgets.Checkbox(
        value=bool(value),
        description=description,
        indent=False,
        layout=widgets.Layout(width="auto", flex="0 0 auto", margin="2px 16px"),
    )


def log_slider(description: str, value: float, lo: float, hi: float) -> widgets.FloatLogSlider:
    """A slider for ``base``: 10**lo .. 10**hi on a log scale, updating while dragged.

    Steps of 10**0.01 (about 2.3 %) when dragged; the number box an ``Explorer`` shows
    beside it (``ValueBox``) takes any value in the range and shows four significant digits.
    """
    import ipywidgets as widgets

    width, label = slider_widths(description)
    return widgets.FloatLogSlider(
        value=value,
        base=10,
        min=lo,
        max=hi,
        step=0.01,
        readout=False,
        description=description,
        continuous_update=True,
        layout=widgets.Layout(width=width, flex="0 0 auto"),
        style={"description_width": label},
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
        raise ValueError(
            tr("{name} must be a non-empty vector, got shape {shape}", name=name, shape=arr.shape)
        )
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    return np.resize(arr, int(d))

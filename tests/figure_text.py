"""What a reader sees of a figure's text: each visible text's size in CSS pixels and box.

An explorer's figure is shown at ``figsize * 72`` CSS pixels (``Explorer.dpi``) and a static
``Picture`` at ``figsize * 90``; a point of font is then 1 or 1.25 CSS pixels, times the
factor by which the page shrinks the picture to fit its output (the browser test measures
it). ``texts`` lists what is drawn: titles, labels, tick labels inside the axis limits,
legends, colour-bar labels and free texts; empty or hidden ones are left out.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

# The smallest text a figure may show, in CSS pixels at 100 % zoom (docs/accessibility.md).
MIN_PX = 12.0


@dataclass(frozen=True)
class Shown:
    text: str
    size: float  # CSS pixels, at the figure's own CSS size
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in CSS pixels

    def __str__(self) -> str:
        return f"{self.text!r} ({self.size:.1f} px)"


def _ticks(fig) -> tuple[set[int], set[int]]:
    """(ids of every tick label, ids of those drawn: the ticks inside the axis limits)."""
    every, drawn = set(), set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.majorTicks + axis.minorTicks:
                every.update({id(tick.label1), id(tick.label2)})
            if ax.get_visible() and ax.axison and axis.get_visible():
                for tick in axis._update_ticks():
                    drawn.update({id(tick.label1), id(tick.label2)})
    return every, drawn


def _shown(text) -> bool:
    """``text`` and its axes are visible."""
    holders = [text, getattr(text, "axes", None)]
    return all(h is None or h.get_visible() for h in holders)


def texts(fig, css_per_inch: float) -> list[Shown]:
    """Every visible, non-empty text of ``fig``, its size and box in CSS pixels."""
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()
    per_pixel = css_per_inch / fig.dpi  # CSS pixels per device pixel of the canvas
    tick_labels, drawn = _ticks(fig)
    hidden = set()  # the texts of hidden legends
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is not None and not legend.get_visible():
            hidden.update(id(t) for t in legend.findobj(Text))
    found = []
    for text in fig.findobj(Text):
        shown = text.get_text().strip()
        if not shown or id(text) in hidden or not _shown(text):
            continue
        if id(text) in tick_labels and id(text) not in drawn:
            continue
        box = text.get_window_extent(renderer)
        if box.width <= 0 or box.height <= 0:
            continue
        size = text.get_fontsize() * css_per_inch / 72.0
        corners = (box.x0, box.y0, box.x1, box.y1)
        found.append(Shown(shown, size, tuple(c * per_pixel for c in corners)))
    return found


def outside(found: list[Shown], fig, css_per_inch: float, margin: float = 0.5) -> list[Shown]:
    """The texts that do not lie wholly inside the figure (cut off at its edge)."""
    width, height = fig.get_size_inches() * css_per_inch
    return [
        t
        for t in found
        if t.box[0] < -margin
        or t.box[1] < -margin
        or t.box[2] > width + margin
        or t.box[3] > height + margin
    ]


def scaled(found: list[Shown], factor: float) -> list[Shown]:
    """The texts as a page shows them when it scales the picture by ``factor``."""
    return [Shown(t.text, t.size * factor, tuple(c * factor for c in t.box)) for t in found]


def overlaps(found: list[Shown], margin: float = 0.5) -> list[tuple[Shown, Shown]]:
    """The pairs of texts whose boxes, each shrunk by ``margin`` CSS pixels, intersect."""
    pairs = []
    for a, b in itertools.combinations(found, 2):
        ax0, ay0, ax1, ay1 = a.box
        bx0, by0, bx1, by1 = b.box
        if (
            min(ax1, bx1) - max(ax0, bx0) > 2 * margin
            and min(ay1, by1) - max(ay0, by0) > 2 * margin
        ):
            pairs.append((a, b))
    return pairs

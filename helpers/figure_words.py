"""A figure in words: what a screen reader says for a figure of the course.

``title(fig)`` is the figure's name (its titles, the short ``alt`` of its image);
``describe(fig)`` says what every panel shows, read from the artists themselves, so it
follows the data the figure was drawn from (and an explorer's redraws)::

    Dot product against distance. Panel 1: PE[pos] . PE[pos+k]. x: distance k, 0 to 100.
    y: dot product, -4 to 16. closed form: 101 points, 16 at k = 0 to -1.2 at k = 100;
    highest 16 at 0, lowest -3.9 at 37. first rebound: at x = 12. ...

A labelled line gives its ends and its extremes; a horizontal or vertical line its place;
bars their heights by tick label; an image its size and value range; a labelled scatter its
count and ranges; the axes' own texts (subtitles with the numbers) are read out as they are.
Unlabelled lines (grids, guides) are left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from helpers.i18n import tr

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["describe", "title"]


def _num(x: float) -> str:
    """A number as a reader needs it: three significant digits, plain where it can be."""
    x = float(x)
    if not np.isfinite(x):
        return str(x)
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    return f"{x:.3g}"


def _labelled(label: str | None) -> bool:
    return bool(label) and not str(label).startswith("_")


def _texts(fig: Figure) -> list[str]:
    """The figure's own titles: suptitle and the titles of its axes, in order."""
    said = []
    sup = getattr(fig, "_suptitle", None)
    if sup is not None and sup.get_visible() and sup.get_text().strip():
        said.append(sup.get_text().strip())
    return said


def title(fig: Figure) -> str:
    """The figure's name: its suptitle, else the titles of its panels joined."""
    said = _texts(fig)
    if said:
        return " ".join(said[0].split())
    titles = [" ".join(ax.get_title().split()) for ax in fig.axes if ax.get_title().strip()]
    return "; ".join(titles) or tr("figure")


def _number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def _axis_label(ax: Axes, which: str) -> str:
    return " ".join((ax.get_xlabel() if which == "x" else ax.get_ylabel()).split())


def _axis(ax: Axes, which: str) -> str:
    label = _axis_label(ax, which)
    lo, hi = ax.get_xlim() if which == "x" else ax.get_ylim()
    scale = ax.get_xscale() if which == "x" else ax.get_yscale()
    said = tr(
        "{axis}: {label}, {lo} to {hi}",
        axis=which,
        label=label,
        lo=_num(lo),
        hi=_num(hi),
    )
    if scale != "linear":
        said += tr(" ({scale} scale)", scale=scale)
    return said


def _line(line, xname: str) -> str | None:
    label = line.get_label()
    if not (_labelled(label) and line.get_visible()):
        return None
    x = np.asarray(line.get_xdata(), dtype=np.float64).ravel()
    y = np.asarray(line.get_ydata(), dtype=np.float64).ravel()
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if y.size == 0:
        return None
    if y.size <= 2 and np.all(y == y[0]) and not np.all(x == x[0]):  # a horizontal line
        return tr("{label}: at y = {value}", label=label, value=_num(y[0]))
    if x.size <= 2 and np.all(x == x[0]):  # a vertical line
        return tr("{label}: at x = {value}", label=label, value=_num(x[0]))
    if y.size == 1:
        return tr("{label}: one point, {y} at {x}", label=label, y=_num(y[0]), x=_num(x[0]))
    top, low = int(np.argmax(y)), int(np.argmin(y))
    said = tr(
        "{label}: {n} points, {y0} at {x} = {x0} to {y1} at {x} = {x1}",
        label=label,
        n=y.size,
        x=xname,
        y0=_num(y[0]),
        x0=_num(x[0]),
        y1=_num(y[-1]),
        x1=_num(x[-1]),
    )
    if {top, low} != {0, y.size - 1}:  # not monotonic: say where it turns
        said += tr(
            "; highest {top} at {xtop}, lowest {low} at {xlow}",
            top=_num(y[top]),
            xtop=_num(x[top]),
            low=_num(y[low]),
            xlow=_num(x[low]),
        )
    return said


def _bars(ax: Axes) -> list[str]:
    from matplotlib.container import BarContainer

    said, ticks = [], None
    for container in ax.containers:
        if not isinstance(container, BarContainer):
            continue
        if ticks is None:  # only for bars: placing the ticks costs a few ms
            ticks = [t.get_text() for t in ax.get_xticklabels()]
        heights = [p.get_height() for p in container.patches]
        label = container.get_label()
        name = label if _labelled(label) else tr("bars")
        if len(heights) == len(ticks) and any(ticks):
            values = ", ".join(f"{t} {_num(h)}" for t, h in zip(ticks, heights))
        elif len(heights) > 12:
            values = tr(
                "{n} bars from {low} to {high}",
                n=len(heights),
                low=_num(min(heights)),
                high=_num(max(heights)),
            )
        else:
            values = ", ".join(_num(h) for h in heights)
        said.append(f"{name}: {values}")
    return said


def _images(ax: Axes) -> list[str]:
    said = []
    for image in ax.get_images():
        if not image.get_visible():
            continue
        raw = image.get_array()
        if raw is None or np.ndim(raw) < 2 or np.size(raw) == 0:
            continue
        values = np.asarray(np.ma.getdata(raw), dtype=np.float64)
        if values.ndim == 3:  # an RGB(A) picture: no values to say
            continue
        shown = np.isfinite(values) & ~np.ma.getmaskarray(raw)
        count = int(shown.sum())
        if count == 0:
            continue
        drawn = values[shown] if count < values.size else values
        said.append(
            tr(
                "a map of {rows} by {cols} values from {low} to {high}",
                rows=values.shape[0],
                cols=values.shape[1],
                low=_num(drawn.min()),
                high=_num(drawn.max()),
            )
        )
        if count < values.size:
            said.append(tr("{n} of its cells drawn", n=count))
    return said


def _scatters(ax: Axes) -> list[str]:
    from matplotlib.collections import PathCollection

    said = []
    for coll in ax.collections:
        label = coll.get_label()
        if not (isinstance(coll, PathCollection) and _labelled(label) and coll.get_visible()):
            continue
        xy = np.asarray(coll.get_offsets(), dtype=np.float64).reshape(-1, 2)
        if not xy.size:
            continue
        said.append(
            tr(
                "{label}: {n} points, x {x0} to {x1}, y {y0} to {y1}",
                label=label,
                n=len(xy),
                x0=_num(xy[:, 0].min()),
                x1=_num(xy[:, 0].max()),
                y0=_num(xy[:, 1].min()),
                y1=_num(xy[:, 1].max()),
            )
        )
    return said


def _panel(ax: Axes) -> list[str]:
    said = []
    if ax.get_title().strip():
        said.append(" ".join(ax.get_title().split()))
    said += [
        " ".join(t.get_text().split())
        for t in ax.texts
        if t.get_visible() and t.get_text().strip() and not _number(t.get_text())
    ]  # a number alone is a bar's label: the bars say it
    if ax.axison:
        said += [_axis(ax, which) for which in "xy" if _axis_label(ax, which)]
    xname = " ".join(ax.get_xlabel().split()[:1]) or "x"
    said += [s for s in (_line(line, xname) for line in ax.lines) if s]
    said += _bars(ax) + _images(ax) + _scatters(ax)
    said += _legend(ax.get_legend(), " ".join(said))
    return said


def _legend(legend, said: str) -> list[str]:
    """The entries of a legend that the words above did not name (patches of colour)."""
    if legend is None:
        return []
    names = [" ".join(t.get_text().split()) for t in legend.get_texts()]
    names = [n for n in names if n and n not in said]
    return [tr("legend: {names}", names=", ".join(names))] if names else []


def describe(fig: Figure) -> str:
    """Every panel of ``fig`` in words (see the module's docstring)."""
    said = _texts(fig)
    panels = [ax for ax in fig.axes if ax.get_visible() and not _is_colorbar(ax)]
    for k, ax in enumerate(panels, 1):
        parts = _panel(ax)
        if not parts:
            continue
        head = tr("Panel {k}:", k=k) if len(panels) > 1 else ""
        said.append(" ".join(filter(None, [head, " ".join(_sentence(p) for p in parts)])))
    for legend in fig.legends:
        said += _legend(legend, " ".join(said))
    for ax in fig.axes:
        if _is_colorbar(ax):
            lo, hi = ax.get_ylim() if ax.get_ylim() != (0, 1) else ax.get_xlim()
            label = (ax.get_ylabel() or ax.get_xlabel()).strip()
            said.append(
                tr("colour scale {label}: {lo} to {hi}", label=label, lo=_num(lo), hi=_num(hi))
            )
    return " ".join(_sentence(s) for s in said if s)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".?!:" else text + "."


def _is_colorbar(ax: Axes) -> bool:
    return getattr(ax, "_colorbar", None) is not None or ax.get_label() == "<colorbar>"

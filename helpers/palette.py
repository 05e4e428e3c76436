"""The course's colours: one colour-blind-safe palette, with a line style, a marker and a
hatch per series, for every figure and explorer (``helpers.plots`` re-exports them)."""

from __future__ import annotations

__all__ = [
    "BAR_HATCHES",
    "SERIES_COLOURS",
    "SERIES_DASHES",
    "SERIES_MARKERS",
    "bar_style",
    "series_style",
]

# One palette for every figure of the course: Okabe and Ito's colours ("Color Universal
# Design", 2008), chosen to stay apart under the common colour-vision deficiencies, in the
# order the series of a figure take them (the yellow, faint on white, last). Each series also
# has a line style and a marker of its own, so that no figure tells its curves apart by colour
# alone; a thing keeps its index, and so its look, in every figure of a notebook.
SERIES_COLOURS = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#D55E00",  # vermilion
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#F0E442",  # yellow
)
SERIES_DASHES = (
    "-",
    "--",
    "-.",
    ":",
    (0, (5, 1, 1, 1, 1, 1)),
    (0, (3, 1)),
    (0, (1, 1)),
    (0, (8, 2)),
)
SERIES_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def series_style(k: int) -> dict[str, object]:
    """The colour, line style and marker of the ``k``-th series (matplotlib keywords)."""
    k %= len(SERIES_COLOURS)
    return {"color": SERIES_COLOURS[k], "linestyle": SERIES_DASHES[k], "marker": SERIES_MARKERS[k]}


# Bars of a series: its colour and a hatch of its own, so bars side by side differ in more
# than colour.
BAR_HATCHES = ("", "//", "..", "xx", "\\\\", "++", "--", "oo")


def bar_style(k: int) -> dict[str, object]:
    """The fill, hatch and edge of the ``k``-th series of bars (matplotlib keywords; a legend's
    ``Patch`` takes them too, where ``color`` with ``edgecolor`` would warn)."""
    k %= len(SERIES_COLOURS)
    return {"facecolor": SERIES_COLOURS[k], "hatch": BAR_HATCHES[k], "edgecolor": "white"}

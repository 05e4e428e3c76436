"""Static figures of notebooks 01_order and 02_sincos.

Each function takes the learner's own functions or tables and returns a ``Picture``: a
matplotlib figure (built without pyplot, so nothing global changes) that a notebook
shows as a PNG when it is the last expression of a cell.
"""

from __future__ import annotations

import io

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from helpers import validate


class Picture:
    """A figure that Jupyter displays as a PNG (``fig`` holds the matplotlib figure)."""

    dpi = 90

    def __init__(self, fig: Figure):
        self.fig = fig

    def png(self) -> bytes:
        """The figure rendered as PNG bytes."""
        buf = io.BytesIO()
        self.fig.savefig(buf, format="png", dpi=self.dpi)
        return buf.getvalue()

    def _repr_png_(self) -> bytes:
        return self.png()


def _figure(figsize) -> Figure:
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def pe_heatmaps(tables: list[tuple[str, np.ndarray]]) -> Picture:
    """Position tables side by side: positions down, dimensions across, -1 blue .. +1 red.

    ``tables`` is a list of ``(title, pe)`` with ``pe`` of shape ``(max_len, d)``.
    """
    if not tables:
        raise ValueError("tables must hold at least one (title, pe) pair, got []")
    fig = _figure((4.2 * len(tables) + 0.8, 4.2))
    axes = np.atleast_1d(fig.subplots(1, len(tables)))
    im = None
    for ax, (title, pe) in zip(axes, tables):
        pe = validate.matrix(pe, "pe", ndim=2)
        im = ax.imshow(pe, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("dimension j  (pair i = j // 2)")
        ax.set_ylabel("position pos")
        ax.xaxis.set_major_locator(MaxNLocator(nbins=8, integer=True))
    fig.colorbar(im, ax=list(axes), label="PE[pos, j]", shrink=0.9)
    return Picture(fig)


def wavelength_figure(wavelengths, ds=(16, 64, 512), base: float = 10000.0) -> Picture:
    """Wavelength of every pair against its index, one curve per ``d``, on a log scale.

    ``wavelengths`` is the learner's ``wavelengths(d, base)``; the x axis is ``i / (d/2)``
    so that tables of different widths share it.
    """
    fig = _figure((7.5, 3.8))
    ax = fig.subplots()
    styles = [{"marker": "s", "ms": 8, "ls": "none"}, {"marker": "o", "ms": 4, "ls": "none"}]
    for k, d in enumerate(sorted(ds)):
        lam = np.asarray(wavelengths(d, base), dtype=np.float64)
        frac = np.arange(lam.size) / lam.size
        style = styles[k] if k < len(styles) else {"lw": 1.5}
        ax.plot(frac, lam, label=f"d = {d}: {lam.size} pairs", zorder=3 - k, **style)
    ax.set_yscale("log")
    ax.set_ylim(2.0, 2 * np.pi * base * 6)
    for value, text in ((2 * np.pi, "2 pi: the second hand"), (2 * np.pi * base, "2 pi base")):
        ax.axhline(value, color="0.6", lw=0.8, ls="--")
        ax.text(0.99, value * 1.3, text, fontsize=8, color="0.35", ha="right")
    ax.set_xlabel("pair index i / (d/2)")
    ax.set_ylabel("wavelength (tokens)")
    ax.set_title(
        f"One geometric ladder of wavelengths for every d (base {base:g}): more pairs, more rungs",
        fontsize=10,
    )
    ax.legend(fontsize=8, loc="upper left")
    return Picture(fig)


def norm_bars(rows: list[tuple[str, float, float, float]]) -> Picture:
    """Mean norm of the word part with and without the sqrt(d) scale, against the positions.

    ``rows`` holds ``(label, word_norm, scaled_word_norm, position_norm)``, one group each.
    """
    if not rows:
        raise ValueError("rows must hold at least one group, got []")
    fig = _figure((7.0, 3.6))
    ax = fig.subplots()
    x = np.arange(len(rows))
    width = 0.26
    parts = (
        ("word, no scale", 1, "tab:gray"),
        ("word x sqrt(d)", 2, "tab:orange"),
        ("position", 3, "tab:blue"),
    )
    for k, (label, col, colour) in enumerate(parts):
        values = [row[col] for row in rows]
        bars = ax.bar(x + (k - 1) * width, values, width, label=label, color=colour)
        ax.bar_label(bars, fmt="%.1f", fontsize=8)
    ax.set_xticks(x, [row[0] for row in rows])
    ax.set_ylabel("mean vector norm")
    ax.set_title("Who is louder: the word or its position?", fontsize=10)
    ax.legend(fontsize=8)
    return Picture(fig)

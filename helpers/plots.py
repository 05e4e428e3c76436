"""Static figures of the course notebooks, one function per figure.

Every function takes the learner's own functions, or numbers the notebook measured with
them, and returns a ``Picture``: a matplotlib figure built without pyplot (nothing global
changes) that a notebook shows as a PNG when it is the last expression of a cell. While
nbgrader runs the notebook (``NBGRADER_EXECUTION`` is set) a ``Picture`` renders nothing.

| notebook | figures |
| --- | --- |
| 02_sincos | ``pe_heatmaps``, ``wavelength_figure``, ``norm_bars`` |
| 03_norm | ``pair_energy_figure``, ``ratio_figure`` |
| 04_decay | ``profile_figure`` |
| 06_rope | ``layout_figure`` |
| 07_alibi | ``distance_by_length_figure`` |
| 08_offsets | ``turns_figure`` |

13_train_short draws its own figures in its cells, on ``figure(figsize)``, and shows them as
``Picture(fig)``, with ``train_short_style`` and ``label_ends``.

Every figure has a text alternative made from its artists (``helpers.figure_words``): its
name as the image's alt text and, one click away under it, what it shows in words and numbers.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from helpers import validate
from helpers.i18n import tr
from helpers.palette import (
    BAR_HATCHES,
    SERIES_COLOURS,
    SERIES_DASHES,
    SERIES_MARKERS,
    bar_style,
    series_style,
)
from helpers.widgets.base import interactive

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Text

__all__ = [
    "BAR_HATCHES",
    "MAX_WIDTH",
    "SERIES_COLOURS",
    "SERIES_DASHES",
    "SERIES_MARKERS",
    "SMALL",
    "TRAIN_SHORT_SERIES",
    "Picture",
    "bar_style",
    "distance_by_length_figure",
    "figure",
    "label_ends",
    "layout_figure",
    "norm_bars",
    "pair_energy_figure",
    "pe_heatmaps",
    "profile_figure",
    "ratio_figure",
    "series_style",
    "train_short_style",
    "turns_figure",
    "wavelength_figure",
]


class Picture:
    """A figure that Jupyter displays as a PNG (``fig`` holds the matplotlib figure).

    ``png()`` always renders at ``dpi``; the notebook display renders at ``scale`` times
    that many pixels and tells the front end the size in CSS pixels (``figsize * dpi``),
    so the picture is sharp on high-density screens. Nothing is rendered for the notebook
    while nbgrader runs it.
    """

    dpi = 90  # CSS pixels per inch
    scale = 2  # device pixels per CSS pixel in the displayed PNG

    def __init__(self, fig: Figure):
        self.fig = fig

    def png(self, dpi: float | None = None) -> bytes:
        """The figure rendered as PNG bytes (at ``dpi``, by default ``self.dpi``)."""
        buf = io.BytesIO()
        self.fig.savefig(buf, format="png", dpi=self.dpi if dpi is None else dpi)
        return buf.getvalue()

    def _repr_png_(self) -> bytes | None:
        return self.png() if interactive() else None

    def alt(self) -> str:
        """The figure's name, the alt text of its image (``helpers.figure_words.title``)."""
        from helpers import figure_words

        return figure_words.title(self.fig)

    def words(self) -> str:
        """What the figure shows, in words and numbers (``helpers.figure_words.describe``)."""
        from helpers import figure_words

        return figure_words.describe(self.fig)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The PNG with its alt text and, one click away, the figure in words (HTML); the
        PNG alone for a front end without HTML; the words as the plain text."""
        if not interactive():
            return None
        import base64
        import html

        width, height = self.fig.get_size_inches() * self.dpi
        data = self.png(dpi=self.dpi * self.scale)
        size = {"width": round(float(width)), "height": round(float(height))}
        words = self.words()
        page = (
            f'<figure class="pe-figure" style="margin:0">'
            f'<img src="data:image/png;base64,{base64.b64encode(data).decode()}" '
            f'width="{size["width"]}" style="max-width:100%;height:auto" '
            f'alt="{html.escape(self.alt())}">'
            f"<figcaption><details><summary>{html.escape(tr('The figure in words'))}</summary>"
            f"<p>{html.escape(words)}</p></details></figcaption></figure>"
        )
        bundle = {"text/html": page, "image/png": data, "text/plain": words}
        return bundle, {"image/png": size}

    def __repr__(self) -> str:
        titles = [ax.get_title() for ax in self.fig.axes if ax.get_title()]
        suptitle = self.fig.get_suptitle() if hasattr(self.fig, "get_suptitle") else ""
        return f"Picture({(suptitle or '; '.join(titles) or 'figure')!r})"


# The widest a figure is shown, in CSS pixels: narrower than a notebook's output in a
# 1400-pixel window with the file browser open, so the page never shrinks it and its text
# stays as large as its font sizes say (SMALL points and up: 12.5 CSS pixels and up).
MAX_WIDTH = 860
# The smallest font of a figure, in points (legends, bar labels, notes): a Picture is shown at
# 90 CSS pixels per inch, so this is 12.5 CSS pixels at 100 % (tests/test_widgets_text.py
# measures every text); matplotlib's default font (ticks, axis labels) is the same size.
SMALL = 10


def figure(figsize: tuple[float, float], layout: str | None = "constrained") -> Figure:
    """A new figure of ``figsize`` inches, no wider than ``MAX_WIDTH``, made without pyplot:
    shown once, as ``Picture(fig)``, with its alt text and its words."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from helpers import fonts

    fonts.ensure()  # Hangul in Korean titles and labels
    width, height = figsize
    fig = Figure(figsize=(min(width, MAX_WIDTH / Picture.dpi), height), layout=layout)
    FigureCanvasAgg(fig)
    return fig


# --------------------------------------------------------------------------- 02_sincos


def pe_heatmaps(tables: list[tuple[str, np.ndarray]]) -> Picture:
    """Position tables side by side: positions down, dimensions across, -1 blue .. +1 red.

    ``tables`` is a list of ``(title, pe)`` with ``pe`` of shape ``(max_len, d)``.
    """
    if not tables:
        raise ValueError("tables must hold at least one (title, pe) pair, got []")
    from matplotlib.ticker import MaxNLocator

    fig = figure((4.2 * len(tables) + 0.8, 4.2))
    axes = np.atleast_1d(fig.subplots(1, len(tables)))
    im = None
    for ax, (title, pe) in zip(axes, tables):
        pe = validate.matrix(pe, "pe", ndim=2)
        im = ax.imshow(pe, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(tr("dimension j  (pair i = j // 2)"))
        ax.set_ylabel(tr("position pos"))
        ax.xaxis.set_major_locator(MaxNLocator(nbins=8, integer=True))
    fig.colorbar(im, ax=list(axes), label="PE[pos, j]", shrink=0.9)
    return Picture(fig)


def wavelength_figure(wavelengths, ds=(16, 64, 512), base: float = 10000.0) -> Picture:
    """Wavelength of every pair against its index, one curve per ``d``, on a log scale.

    ``wavelengths`` is the learner's ``wavelengths(d, base)``; the x axis is ``i / (d/2)``
    so that tables of different widths share it.
    """
    fig = figure((7.5, 3.8))
    ax = fig.subplots()
    for k, d in enumerate(sorted(ds)):
        lam = np.asarray(wavelengths(d, base), dtype=np.float64)
        frac = np.arange(lam.size) / lam.size
        style = series_style(k)
        if lam.size > 64:  # a line with a marker every few pairs
            style |= {"lw": 1.5, "ms": 5, "markevery": max(1, lam.size // 16)}
        else:  # the pairs themselves, large to small so that each stays visible
            style |= {"linestyle": "none", "ms": max(4, 8 - 2 * k)}
        ax.plot(frac, lam, label=tr("d = {d}: {n} pairs", d=d, n=lam.size), zorder=3 - k, **style)
    ax.set_yscale("log")
    ax.set_ylim(2.0, 2 * np.pi * base * 6)
    for value, text in (
        (2 * np.pi, tr("2 pi: the second hand")),
        (2 * np.pi * base, tr("2 pi base")),
    ):
        ax.axhline(value, color="0.6", lw=0.8, ls="--")
        ax.text(0.99, value * 1.3, text, fontsize=SMALL, color="0.35", ha="right")
    ax.set_xlabel(tr("pair index i / (d/2)"))
    ax.set_ylabel(tr("wavelength (tokens)"))
    ax.set_title(
        tr(
            "One geometric ladder of wavelengths for every d (base {base:g}): more pairs, more rungs",
            base=base,
        ),
        fontsize=10,
    )
    ax.legend(fontsize=SMALL, loc="upper left")
    return Picture(fig)


def norm_bars(rows: list[tuple[str, float, float, float]]) -> Picture:
    """Mean norm of the word part with and without the sqrt(d) scale, against the positions.

    ``rows`` holds ``(label, word_norm, scaled_word_norm, position_norm)``, one group each.
    """
    if not rows:
        raise ValueError("rows must hold at least one group, got []")
    fig = figure((7.0, 3.6))
    ax = fig.subplots()
    x = np.arange(len(rows))
    width = 0.26
    parts = (("word, no scale", 1), ("word x sqrt(d)", 2), ("position", 3))
    for k, (label, col) in enumerate(parts):
        values = [row[col] for row in rows]
        bars = ax.bar(x + (k - 1) * width, values, width, label=label, **bar_style(k))
        ax.bar_label(bars, fmt="%.1f", fontsize=SMALL)
    ax.set_xticks(x, [row[0] for row in rows])
    ax.set_ylabel(tr("mean vector norm"))
    ax.set_title(tr("Who is louder: the word or its position?"), fontsize=10)
    ax.legend(fontsize=SMALL)
    return Picture(fig)


# --------------------------------------------------------------------------- 03_norm, 04_decay


def pair_energy_figure(pe, positions: Sequence[int]) -> Picture:
    """Stacked bars of ``sin^2`` and ``cos^2`` for every pair of a few rows of a PE table.

    Each pair ``i`` of row ``pos`` is a bar of height ``PE[pos, 2i]^2 + PE[pos, 2i+1]^2``
    (1 for a sinusoidal table), split into its ``sin^2`` and ``cos^2`` parts.
    """
    pe = np.asarray(pe, dtype=np.float64)
    if pe.ndim != 2 or pe.shape[1] % 2:
        raise ValueError(f"pe must be a table of shape (max_len, even d), got shape {pe.shape}")
    positions = [int(p) for p in positions]
    bad = [p for p in positions if not 0 <= p < pe.shape[0]]
    if not positions or bad:
        raise ValueError(f"positions must be rows of the table (0..{pe.shape[0] - 1}), got {bad}")
    from matplotlib.ticker import MaxNLocator

    fig = figure((3.4 * len(positions) + 0.6, 3.2))
    axes = fig.subplots(1, len(positions), sharey=True, squeeze=False)[0]
    pairs = np.arange(pe.shape[1] // 2)
    for ax, pos in zip(axes, positions):
        s2, c2 = pe[pos, 0::2] ** 2, pe[pos, 1::2] ** 2
        ax.bar(pairs, s2, label=tr("sin² (dim 2i)"), **bar_style(0))
        ax.bar(pairs, c2, bottom=s2, label=tr("cos² (dim 2i+1)"), **bar_style(1))
        total = float(np.sum(s2 + c2))
        ax.set_title(tr("pos = {pos}: sum of the bars = {total:.6g}", pos=pos, total=total))
        ax.set_xlabel(tr("pair i"))
        ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    axes[0].set_ylabel(tr("sin² + cos² of pair i"))
    axes[0].set_ylim(0, 1.25)
    axes[-1].legend(loc="upper right", fontsize=SMALL, ncols=2)
    return Picture(fig)


def ratio_figure(ds: Sequence[int], unscaled: Sequence[float], scaled: Sequence[float]) -> Picture:
    """Word loudness over position loudness, without and with the ``sqrt(d)`` scale."""
    ds = [int(d) for d in ds]
    if not (len(ds) == len(unscaled) == len(scaled)) or not ds:
        raise ValueError(
            f"ds, unscaled and scaled must have the same non-zero length, got "
            f"{len(ds)}, {len(unscaled)}, {len(scaled)}"
        )
    fig = figure((6.4, 3.4))
    ax = fig.add_subplot()
    x = np.arange(len(ds))
    ax.bar(x - 0.2, unscaled, width=0.4, label=tr("token_emb (no scale)"), **bar_style(0))
    ax.bar(x + 0.2, scaled, width=0.4, label=tr("token_emb * sqrt(d)"), **bar_style(1))
    ax.axhline(1.0, color="black", ls="--", lw=1, label=tr("words as loud as positions"))
    for xi, u, s in zip(x, unscaled, scaled):
        ax.annotate(f"{u:.3f}", (xi - 0.2, u), ha="center", va="bottom", fontsize=SMALL)
        ax.annotate(f"{s:.3f}", (xi + 0.2, s), ha="center", va="bottom", fontsize=SMALL)
    ax.set_yscale("log")
    ax.set_xticks(x, [f"d = {d}" for d in ds])
    ax.set_ylabel(tr("mean word norm / sqrt(d/2)"))
    ax.set_title(tr("How loud the words are against the positions"))
    ax.legend(loc="upper left", fontsize=SMALL)
    ax.set_ylim(0.02, 40)  # room for the legend above the labels of the bars
    return Picture(fig)


def profile_figure(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    points: tuple[Sequence[float], Sequence[float]] | None = None,
    title: str = "",
    ylabel: str | None = None,
    log_k: bool = False,
) -> Picture:
    """Dot-product profiles against the distance k, one line per label; optional marked points.

    ``log_k`` puts k on a symmetric log axis (linear below 1), so that k = 0 stays visible.
    """
    if not curves:
        raise ValueError("curves must hold at least one (ks, values) pair, got none")
    fig = figure((8.0, 3.6))
    ax = fig.add_subplot()
    for k, (label, (ks, values)) in enumerate(curves.items()):
        every = max(1, len(ks) // 12)
        ax.plot(ks, values, lw=1.4, ms=5, markevery=every, label=label, **series_style(k))
    if points is not None:
        ax.plot(
            points[0],
            points[1],
            "o",
            ms=7,
            color="black",
            mfc="none",
            mec="black",
            mew=1.5,
            label=tr("the positional-encoding article's table (d = 32, pos = 25)"),
        )
    ax.axhline(0.0, color="gray", lw=0.8)
    if log_k:
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xlim(0, max(float(np.max(ks)) for ks, _ in curves.values()))
    ax.set_xlabel(tr("distance k (log scale above 1)") if log_k else tr("distance k"))
    ax.set_ylabel(tr("dot product / (d/2)") if ylabel is None else ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left", fontsize=SMALL)
    return Picture(fig)


# --------------------------------------------------------------------------- 06_rope


def layout_figure(interleaved_to_half: Callable, d: int = 8) -> Picture:
    """Where each dimension goes between the two RoPE memory layouts.

    Top row: the interleaved layout of RoFormer, pair i = dims (2i, 2i+1). Bottom row:
    ``interleaved_to_half`` applied to the labels 0 .. d-1, i.e. the half-split layout of
    GPT-NeoX and the Llama ports, pair i = dims (i, i + d/2). Colours mark the pairs; the
    lines follow each number from one layout to the other.
    """
    d = validate.dim(d)
    labels = np.arange(d, dtype=np.float64)
    moved = np.asarray(interleaved_to_half(labels), dtype=np.float64)
    if moved.shape != (d,) or sorted(moved.tolist()) != labels.tolist():
        raise ValueError(
            f"interleaved_to_half must permute the {d} labels 0..{d - 1}, got {moved!r}"
        )
    src = moved.astype(int)  # src[t]: which interleaved dimension sits at half-split slot t
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Rectangle

    fig = figure((max(6.0, 0.75 * d + 1.5), 3.0), layout=None)
    ax = fig.add_axes((0.19, 0.04, 0.79, 0.8))
    ax.set_xlim(-0.6, d - 0.4)
    ax.set_ylim(-0.6, 2.1)
    ax.axis("off")
    # colour of interleaved dim j: its pair (the pair's number is written in each box too)
    colours = [SERIES_COLOURS[(j // 2) % len(SERIES_COLOURS)] for j in range(d)]
    rows = (
        (1.5, np.arange(d), tr("interleaved\n(RoFormer)")),
        (0.0, src, tr("half-split\n(GPT-NeoX, Llama)")),
    )
    for y, dims, name in rows:
        for slot, j in enumerate(dims):
            ax.add_patch(
                Rectangle(
                    (slot - 0.4, y - 0.3),
                    0.8,
                    0.6,
                    facecolor=colours[j],
                    alpha=0.35,
                    edgecolor=colours[j],
                    lw=1.5,
                )
            )
            ax.text(slot, y, f"x{j}", ha="center", va="center", fontsize=10)
        ax.text(-0.75, y, name, ha="right", va="center", fontsize=SMALL)
    where = np.argsort(src)  # slot of interleaved dim j in the half-split row
    ax.add_collection(
        LineCollection(
            [[(j, 1.2), (where[j], 0.3)] for j in range(d)],
            colors=colours,
            linewidths=1.2,
            alpha=0.8,
        )
    )
    ax.text(-0.75, 0.75, "P  ↓", ha="right", va="center", fontsize=11, weight="bold")
    fig.suptitle(tr("the same pairs in two layouts (d = {d}): colour = pair i", d=d), fontsize=11)
    return Picture(fig)


# --------------------------------------------------------------------------- 07_alibi, 08_offsets


def distance_by_length_figure(lengths: Sequence[int], distances, slopes) -> Picture:
    """Mean attention distance of each head against the sequence length (notebook 07_alibi).

    ``distances`` has shape ``(len(lengths), heads)``; dashed lines mark each head's limit
    for a query with no content, ``1 / (exp(slope) - 1)`` tokens, and the grey line the
    distance of uniform causal attention, ``(L - 1) / 4``.
    """
    lengths = np.asarray(lengths, dtype=np.float64)
    distances = np.asarray(distances, dtype=np.float64)
    slopes = np.asarray(slopes, dtype=np.float64)
    if distances.shape != (lengths.size, slopes.size):
        raise ValueError(
            f"distances must have shape (len(lengths), len(slopes)) = "
            f"{(lengths.size, slopes.size)}, got {distances.shape}"
        )
    from helpers.widgets.alibi import head_colours

    fig = figure((8, 4.2))
    ax = fig.add_subplot()
    # the explorer's colours (dark: steepest, light: flattest), and a marker per head
    colours = head_colours(slopes)
    for h, slope in enumerate(slopes):
        marker = SERIES_MARKERS[h % len(SERIES_MARKERS)]
        label = f"1/{1 / slope:.4g}"
        ax.plot(lengths, distances[:, h], marker=marker, ms=5, color=colours[h], label=label)
        ax.axhline(1.0 / np.expm1(slope), color=colours[h], ls=":", lw=1)
    # light grey: apart from every shade of the heads under each colour-vision deficiency
    ax.plot(lengths, (lengths - 1) / 4, color="0.7", lw=2.5, label=tr("no bias: (L-1)/4"))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(tr("sequence length L"))
    ax.set_ylabel(tr("mean attention distance (tokens)"))
    ax.set_title(tr("Each head stops at its own range (dotted: 1/(exp(slope) - 1))"))
    ax.legend(title=tr("slope"), fontsize=SMALL, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.grid(alpha=0.3, which="both")
    return Picture(fig)


def turns_figure(turns: Callable, slow_pairs: Callable, d: int, deltas: Sequence[int]) -> Picture:
    """Turns of every pair over each distance delta (notebook 08_offsets).

    Row t is the learner's ``turns(d, deltas[t])``, labelled with the learner's
    ``slow_pairs(d, deltas[t])``. Pairs under the dashed line (one full turn) have not
    wrapped around yet: they still tell distances apart at that range.
    """
    d = validate.dim(d)
    if len(deltas) == 0:
        raise ValueError(f"deltas must hold at least one distance, got {deltas!r}")
    fig = figure((8, 4.8))
    ax = fig.add_subplot()
    for t, delta in enumerate(deltas):
        row = np.asarray(turns(d, delta), dtype=np.float64)
        if row.shape != (d // 2,):
            raise ValueError(f"turns({d}, {delta}) must have shape {(d // 2,)}, got {row.shape}")
        slow = int(slow_pairs(d, delta))
        ax.plot(
            np.arange(d // 2),
            row,
            ms=4,
            label=tr("delta = {delta}: {slow} pairs under one turn", delta=delta, slow=slow),
            **series_style(t),
        )
    ax.axhline(1.0, color="black", ls="--", lw=1, label=tr("one full turn"))
    ax.set_yscale("log")
    ax.set_xlabel(tr("pair i"))
    ax.set_ylabel(tr("turns over the distance (log scale)"))
    ax.set_title(tr("Slow pairs keep counting where fast pairs have wrapped around"))
    # under the axes: in the upper right it would hide the slowest rows' fast pairs
    ax.legend(fontsize=SMALL, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncols=2)
    ax.grid(alpha=0.3)
    return Picture(fig)


# --------------------------------------------------------------------------- 13_train_short

# Each model of 13 and each way of reading RoPE longer keeps one look in every figure and in
# the explorer: plain RoPE is the rope model's look, YaRN with transformers' ramp the
# explorer's rope+YaRN.
TRAIN_SHORT_SERIES = {
    "nope": 0,
    "sinusoidal": 1,
    "learned": 2,
    "rope": 3,
    "alibi": 4,
    "t5": 5,
    "t5_md128": 6,
    "rope+YaRN": 7,
    "yarn": 7,
    "pi": 0,
    "ntk": 1,
    "yarn_paper": 2,
    "pi_finetune": 5,
    "optimum": 6,
}


def train_short_style(name: str, every: int = 32) -> dict[str, object]:
    """The look of one of 13's series: its colour, line style, and a marker every ``every``
    points (a marker at each of 256 positions would hide the line)."""
    return {**series_style(TRAIN_SHORT_SERIES.get(name, 0)), "markevery": every, "ms": 5}


def label_ends(ax: Axes, lines: Iterable, fontsize: float = 10) -> list[Text]:
    """Each line named at its right end, in its colour (direct labels, not a legend); labels
    that would overlap are pushed apart vertically."""
    ends = []
    for line in lines:
        x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
        ok = np.isfinite(y)
        if not ok.any():
            continue
        ends.append([float(x[ok][-1]), float(y[ok][-1]), line])
    lo, hi = ax.get_ylim()
    gap = 0.045 * (hi - lo)
    ends.sort(key=lambda e: e[1])
    for prev, cur in itertools.pairwise(ends):
        cur[1] = max(cur[1], prev[1] + gap)
    return [
        ax.annotate(
            line.get_label(),
            (x, y),
            xytext=(4, 0),
            textcoords="offset points",
            color=line.get_color(),
            fontsize=fontsize,
            va="center",
            annotation_clip=False,
        )
        for x, y, line in ends
    ]

"""Static figures of notebooks 05_rotation and 06_rope.

Each function takes the learner's own functions and returns a ``Picture`` (see
``helpers.plots_0102``): a matplotlib figure built without pyplot that a notebook shows
as a PNG when it is the last expression of a cell.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from helpers import validate
from helpers.plots_0102 import Picture


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

    fig = Figure(figsize=(max(6.0, 0.75 * d + 1.5), 3.0))
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.19, 0.04, 0.79, 0.8))
    ax.set_xlim(-0.6, d - 0.4)
    ax.set_ylim(-0.6, 2.1)
    ax.axis("off")
    colours = [f"C{(j // 2) % 10}" for j in range(d)]  # colour of interleaved dim j: its pair
    rows = (
        (1.5, np.arange(d), "interleaved\n(RoFormer)"),
        (0.0, src, "half-split\n(GPT-NeoX, Llama)"),
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
        ax.text(-0.75, y, name, ha="right", va="center", fontsize=9)
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
    fig.suptitle(f"the same pairs in two layouts (d = {d}): colour = pair i", fontsize=11)
    return Picture(fig)

"""Static figures of notebooks 07_alibi and 08_offsets.

Each function takes numbers the notebook has already measured with the learner's own
functions and only draws them. Figures are made with ``pyplot`` (imported when a figure is
drawn, never at import time) so that Jupyter shows them under the cell that made them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["distance_by_length_figure", "turns_figure"]


def distance_by_length_figure(lengths: Sequence[int], distances, slopes):
    """Mean attention distance of each head against the sequence length (notebook 07_alibi).

    ``distances`` has shape ``(len(lengths), heads)``; dashed lines mark each head's limit
    for a query with no content, ``1 / (exp(slope) - 1)`` tokens, and the grey line the
    distance of uniform causal attention, ``(L - 1) / 4``.
    """
    import matplotlib.pyplot as plt
    from matplotlib import colormaps

    lengths = np.asarray(lengths, dtype=np.float64)
    distances = np.asarray(distances, dtype=np.float64)
    slopes = np.asarray(slopes, dtype=np.float64)
    if distances.shape != (lengths.size, slopes.size):
        raise ValueError(
            f"distances must have shape (len(lengths), len(slopes)) = "
            f"{(lengths.size, slopes.size)}, got {distances.shape}"
        )
    fig, ax = plt.subplots(figsize=(8, 4.2), layout="constrained")
    colours = colormaps["viridis"](np.linspace(0.0, 0.9, slopes.size))
    for h, slope in enumerate(slopes):
        ax.plot(lengths, distances[:, h], "o-", ms=4, color=colours[h], label=f"1/{1 / slope:.4g}")
        ax.axhline(1.0 / np.expm1(slope), color=colours[h], ls=":", lw=1)
    ax.plot(lengths, (lengths - 1) / 4, color="0.5", lw=2, alpha=0.6, label="no bias: (L-1)/4")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length L")
    ax.set_ylabel("mean attention distance (tokens)")
    ax.set_title("Each head stops at its own range (dotted: 1/(exp(slope) - 1))")
    ax.legend(title="slope", fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.grid(alpha=0.3, which="both")
    return fig


def turns_figure(deltas: Sequence[int], turn_rows, limit: float = 1.0):
    """Turns of every pair over each distance delta (notebook 08_offsets).

    ``turn_rows`` has shape ``(len(deltas), d // 2)``: row t is ``turns(d, deltas[t])``.
    Pairs under the line ``limit`` (one full turn) have not wrapped around yet: they still
    tell distances apart at that range.
    """
    import matplotlib.pyplot as plt
    from matplotlib import colormaps

    rows = np.asarray(turn_rows, dtype=np.float64)
    if rows.ndim != 2 or rows.shape[0] != len(deltas):
        raise ValueError(
            f"turn_rows must have one row per delta ({len(deltas)}), got shape {rows.shape}"
        )
    fig, ax = plt.subplots(figsize=(8, 4.2), layout="constrained")
    colours = colormaps["plasma"](np.linspace(0.0, 0.85, len(deltas)))
    pairs = np.arange(rows.shape[1])
    for t, delta in enumerate(deltas):
        slow = int(np.count_nonzero(rows[t] < limit))
        ax.plot(
            pairs,
            rows[t],
            "o-",
            ms=3,
            color=colours[t],
            label=f"delta = {delta}: {slow} pairs under one turn",
        )
    ax.axhline(limit, color="black", ls="--", lw=1, label="one full turn")
    ax.set_yscale("log")
    ax.set_xlabel("pair i")
    ax.set_ylabel("turns over the distance (log scale)")
    ax.set_title("Slow pairs keep counting where fast pairs have wrapped around")
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(alpha=0.3)
    return fig

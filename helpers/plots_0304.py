"""Static figures of notebooks 03_norm and 04_decay.

Every function takes numbers the learner's own functions computed and returns a
matplotlib ``Figure`` (no pyplot, no global state); ``show(fig)`` turns it into an
image for the notebook, or ``None`` while nbgrader runs the notebook.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from helpers.widgets.base import interactive

__all__ = ["pair_energy_figure", "profile_figure", "ratio_figure", "show"]


def _figure(figsize: tuple[float, float]) -> Figure:
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def show(fig: Figure, dpi: int = 80):
    """The figure as an ``IPython.display.Image`` (PNG); ``None`` under nbgrader."""
    if not interactive():
        return None
    from IPython.display import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return Image(data=buf.getvalue(), format="png")


def pair_energy_figure(pe, positions: Sequence[int]) -> Figure:
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
    fig = _figure((3.4 * len(positions) + 0.6, 3.2))
    axes = fig.subplots(1, len(positions), sharey=True, squeeze=False)[0]
    pairs = np.arange(pe.shape[1] // 2)
    for ax, pos in zip(axes, positions):
        s2, c2 = pe[pos, 0::2] ** 2, pe[pos, 1::2] ** 2
        ax.bar(pairs, s2, color="tab:blue", label="sin² (dim 2i)")
        ax.bar(pairs, c2, bottom=s2, color="tab:orange", label="cos² (dim 2i+1)")
        total = float(np.sum(s2 + c2))
        ax.set_title(f"pos = {pos}: sum of the bars = {total:.6g}")
        ax.set_xlabel("pair i")
        ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    axes[0].set_ylabel("sin² + cos² of pair i")
    axes[0].set_ylim(0, 1.25)
    axes[-1].legend(loc="upper right", fontsize="small", ncols=2)
    return fig


def ratio_figure(ds: Sequence[int], unscaled: Sequence[float], scaled: Sequence[float]) -> Figure:
    """Word loudness over position loudness, without and with the ``sqrt(d)`` scale."""
    ds = [int(d) for d in ds]
    if not (len(ds) == len(unscaled) == len(scaled)) or not ds:
        raise ValueError(
            f"ds, unscaled and scaled must have the same non-zero length, got "
            f"{len(ds)}, {len(unscaled)}, {len(scaled)}"
        )
    fig = _figure((6.4, 3.4))
    ax = fig.add_subplot()
    x = np.arange(len(ds))
    ax.bar(x - 0.2, unscaled, width=0.4, color="tab:gray", label="token_emb (no scale)")
    ax.bar(x + 0.2, scaled, width=0.4, color="tab:green", label="token_emb * sqrt(d)")
    ax.axhline(1.0, color="black", ls="--", lw=1, label="words as loud as positions")
    for xi, u, s in zip(x, unscaled, scaled):
        ax.annotate(f"{u:.3f}", (xi - 0.2, u), ha="center", va="bottom", fontsize="small")
        ax.annotate(f"{s:.3f}", (xi + 0.2, s), ha="center", va="bottom", fontsize="small")
    ax.set_yscale("log")
    ax.set_xticks(x, [f"d = {d}" for d in ds])
    ax.set_ylabel("mean word norm / sqrt(d/2)")
    ax.set_title("How loud the words are against the positions")
    ax.legend(loc="upper left", fontsize="small")
    ax.set_ylim(0.02, 8)
    return fig


def profile_figure(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    points: tuple[Sequence[float], Sequence[float]] | None = None,
    title: str = "",
    ylabel: str = "dot product / (d/2)",
    log_k: bool = False,
) -> Figure:
    """Dot-product profiles against the distance k, one line per label; optional marked points.

    ``log_k`` puts k on a symmetric log axis (linear below 1), so that k = 0 stays visible.
    """
    if not curves:
        raise ValueError("curves must hold at least one (ks, values) pair, got none")
    fig = _figure((8.0, 3.6))
    ax = fig.add_subplot()
    for label, (ks, values) in curves.items():
        ax.plot(ks, values, lw=1.4, alpha=0.85, label=label)
    if points is not None:
        ax.plot(
            points[0],
            points[1],
            "o",
            ms=7,
            mfc="none",
            mec="black",
            mew=1.5,
            label="seed 000 table (d = 32, pos = 25)",
        )
    ax.axhline(0.0, color="gray", lw=0.8)
    if log_k:
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xlim(0, max(float(np.max(ks)) for ks, _ in curves.values()))
    ax.set_xlabel("distance k (log scale above 1)" if log_k else "distance k")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left", fontsize="small")
    return fig

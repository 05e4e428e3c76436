"""Explorer of notebook 03_norm: every row of the sinusoidal table has the same length.

``norm_explorer(sinusoidal_pe=..., pe_norms=..., expected_norm=..., min_pairwise_distance=...)``
draws, for the learner's own functions, the norm of every row against ``sqrt(d/2)`` and the
matrix of distances between rows (zero on the diagonal only: all positions are distinct).
Sliders: ``d``, ``max_len`` and ``base``.

The distance matrix is built from the learner's ``pe_norms`` (``||a - b||^2 = ||a||^2 +
||b||^2 - 2 a . b``); the circles mark the pair whose distance is the learner's
``min_pairwise_distance``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from helpers.i18n import tr
from helpers.palette import SERIES_COLOURS
from helpers.widgets.base import (
    Explorer,
    int_slider,
    interactive,
    learner,
    log_slider,
    nice_ceil,
    subtitle,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["NormExplorer", "norm_explorer", "pairwise_distances"]


# The distance matrix is shown with at most this many rows and columns (every stride-th one).
MAX_PIXELS = 256


def pairwise_distances(pe: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """Distance between every two rows from their norms: ``D[a, b] = ||pe[a] - pe[b]||``.

    ``norms`` holds ``||pe[a]||`` (the learner's ``pe_norms(pe)``); with the Gram matrix,
    ``||x - y||^2 = ||x||^2 + ||y||^2 - 2 x . y``; the diagonal is 0 and tiny negative
    round-off is clipped to 0. # shape: (max_len, max_len)
    """
    pe = np.asarray(pe, dtype=np.float64)
    if pe.ndim != 2:
        raise ValueError(f"pe must be 2-dimensional, got shape {pe.shape}")
    norms = np.asarray(norms, dtype=np.float64)
    if norms.shape != (pe.shape[0],):
        raise ValueError(f"norms must have shape {(pe.shape[0],)}, got {norms.shape}")
    sq = norms * norms
    d2 = sq[:, None] + sq[None, :] - 2.0 * (pe @ pe.T)
    np.fill_diagonal(d2, 0.0)
    return np.sqrt(np.clip(d2, 0.0, None))


class NormExplorer(Explorer):
    """Row norms against ``sqrt(d/2)`` (left) and the distance matrix of the rows (right)."""

    def __init__(
        self,
        sinusoidal_pe: Callable,
        pe_norms: Callable,
        expected_norm: Callable,
        min_pairwise_distance: Callable,
        d: int = 32,
        max_len: int = 100,
        base: float = 10000.0,
    ):
        self.fns = {
            name: learner(name, fn)
            for name, fn in (
                ("sinusoidal_pe", sinusoidal_pe),
                ("pe_norms", pe_norms),
                ("expected_norm", expected_norm),
                ("min_pairwise_distance", min_pairwise_distance),
            )
        }
        controls = {
            "d": int_slider("d", d, 2, 512, 2),
            "max_len": int_slider("max_len", max_len, 2, 512),
            "base": log_slider("base", base, 1.0, 6.0),
        }
        super().__init__(controls, figsize=(10.5, 4.6), title=tr("Norms and distances of PE rows"))

    def draw(self, fig: Figure) -> None:
        # Fixed axes and few tick labels: text is most of the drawing time of an update.
        from matplotlib.ticker import MaxNLocator

        fig.set_layout_engine(None)
        self.ax_norm = fig.add_axes((0.075, 0.25, 0.47, 0.6))
        self.ax_dist = fig.add_axes((0.62, 0.12, 0.36, 0.73))
        ax = self.ax_norm
        (self.norm_line,) = ax.plot(
            [], [], color=SERIES_COLOURS[0], lw=2.5, label=tr("measured: pe_norms(pe)")
        )
        self.target_line = ax.axhline(
            0.0, color=SERIES_COLOURS[4], ls="--", lw=1.5, label=tr("expected: sqrt(d/2)")
        )
        ax.set_xlabel(tr("position pos"))
        ax.set_ylabel(tr("norm of the row  ||PE[pos]||"))
        # under the axes: a wrong answer may put the lines anywhere
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2, frameon=False)
        # resampled as data, then coloured: 4 to 5 times faster to draw than the default
        self.dist_image = self.ax_dist.imshow(
            np.zeros((2, 2)),
            cmap="magma",
            origin="upper",
            interpolation="nearest",
            interpolation_stage="data",
            aspect="auto",
        )
        self.closest = self.ax_dist.scatter(
            [], [], s=70, facecolors="none", edgecolors="cyan", linewidths=1.5
        )
        self.ax_dist.set_xlabel(tr("position b"))
        self.ax_dist.set_ylabel(tr("position a"))
        for axis in (ax.xaxis, ax.yaxis, self.ax_dist.xaxis, self.ax_dist.yaxis):
            axis.set_major_locator(MaxNLocator(4, integer=axis is not ax.yaxis))
        ax.set_title(tr("Norm of every row against sqrt(d/2)"), y=1.0)
        self.ax_dist.set_title(tr("||PE[a] - PE[b]||  (black: 0)"), y=1.0)
        self.norm_text, self.dist_text = subtitle(ax), subtitle(self.ax_dist)
        # d and max_len set the limits of both panels: their axes move (the cached layer)
        self.animate(
            [
                self.norm_line,
                self.target_line,
                self.norm_text,
                self.dist_image,
                self.closest,
                self.dist_text,
            ],
            moving=[self.ax_norm, self.ax_dist],  # d: the norms' y-axis; max_len: the rest
        )

    def update(self, d: int, max_len: int, base: float) -> None:
        f = self.fns
        pos = np.arange(max_len)
        self.ax_norm.set_xlim(0, max(max_len - 1, 1))
        self.ax_dist.set_xlim(-0.5, max_len - 0.5)
        self.ax_dist.set_ylim(max_len - 0.5, -0.5)
        everything = [self.norm_line, self.target_line, self.norm_text]
        everything += [self.dist_image, self.closest, self.dist_text]
        pe = None
        with self.panel(*everything):
            pe = np.asarray(f["sinusoidal_pe"](max_len, d, base), dtype=np.float64)
        norms = target = dist = None
        with self.panel(self.norm_line, self.norm_text, self.dist_image, self.dist_text):
            self.need(pe)
            norms = np.asarray(f["pe_norms"](pe), dtype=np.float64)
            self.norm_line.set_data(pos, norms)
        with self.panel(self.target_line, self.norm_text):
            target = float(f["expected_norm"](d))
            self.target_line.set_ydata([target, target])
        heights = [x for x in (target, norms) if x is not None]
        top = max([float(np.max(h)) for h in heights if np.size(h)] + [1e-12])
        # Rounded-up limits: most slider moves keep them.
        self.ax_norm.set_ylim(0.0, nice_ceil(1.25 * top) if np.isfinite(top) else 1.0)
        with self.panel(self.norm_text):
            self.need(norms, target)
            gap = float(np.max(np.abs(norms - target)))
            self.norm_text.set_text(
                tr("sqrt(d/2) = {target:.4f}, largest gap {gap:.1e}", target=target, gap=gap)
            )

        with self.panel(self.dist_image, self.closest, self.dist_text):
            self.need(pe, norms)
            dist = pairwise_distances(pe, norms)
            # The panel is about 270 pixels wide: show at most MAX_PIXELS rows and columns.
            stride = -(-max_len // MAX_PIXELS)
            self.dist_image.set_data(dist[::stride, ::stride])
            self.dist_image.set_extent((-0.5, max_len - 0.5, max_len - 0.5, -0.5))
            self.dist_image.set_clim(0.0, max(float(dist.max()), 1e-12))
        with self.panel(self.closest, self.dist_text):
            self.need(pe, dist)
            dmin = float(f["min_pairwise_distance"](pe))
            # the circles: the entry closest to the learner's own answer
            a, b = np.unravel_index(int(np.argmin(np.abs(dist - dmin))), dist.shape)
            self.closest.set_offsets([[b, a], [a, b]])
            self.dist_text.set_text(
                tr(
                    "yours: min {dmin:.4f} (circles: {a}, {b}), max {dmax:.2f}",
                    dmin=dmin,
                    a=min(a, b),
                    b=max(a, b),
                    dmax=float(dist.max()),
                )
            )


def norm_explorer(
    *,
    sinusoidal_pe: Callable,
    pe_norms: Callable,
    expected_norm: Callable,
    min_pairwise_distance: Callable,
    d: int = 32,
    max_len: int = 100,
    base: float = 10000.0,
) -> NormExplorer | None:
    """The explorer of 03_norm built on the learner's functions; ``None`` under nbgrader."""
    if not interactive():
        return None
    return NormExplorer(
        sinusoidal_pe,
        pe_norms,
        expected_norm,
        min_pairwise_distance,
        d=d,
        max_len=max_len,
        base=base,
    )

"""Explorer of notebook 03_norm: every row of the sinusoidal table has the same length.

``norm_explorer(sinusoidal_pe=..., pe_norms=..., expected_norm=..., min_pairwise_distance=...)``
draws, for the learner's own functions, the norm of every row against ``sqrt(d/2)`` and the
matrix of distances between rows (zero on the diagonal only: all positions are distinct).
Sliders: ``d``, ``max_len`` and ``base``.

``BlitExplorer`` (used by 03_norm and 04_decay) re-renders only the artists that change when
the axes keep their limits: tick labels and legends, most of the drawing time, are drawn
once per set of limits.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import numpy as np
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import MaxNLocator
from PIL import Image

from helpers.widgets.base import Explorer, int_slider, interactive, log_slider

__all__ = [
    "BlitExplorer",
    "NormExplorer",
    "bench_explorers",
    "nice_ceil",
    "norm_explorer",
    "pairwise_distances",
    "subtitle",
]


def nice_ceil(x: float) -> float:
    """The smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 times a power of ten that is >= x (x > 0).

    Axis limits rounded up this way stay the same over most slider steps, so that the
    background of a ``BlitExplorer`` is kept.
    """
    x = float(x)
    if not np.isfinite(x) or x <= 0:
        raise ValueError(f"x must be a finite number > 0, got {x!r}")
    power = 10.0 ** np.floor(np.log10(x))
    for m in (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0):
        if m * power >= x * (1 - 1e-12):
            return m * power
    return 10.0 * power


def subtitle(ax) -> Text:
    """A one-line text just under the axes' title, for the numbers that change."""
    ax.set_title(ax.get_title(), pad=20)
    return ax.text(0.5, 1.015, "", transform=ax.transAxes, ha="center", va="bottom")


# The distance matrix is shown with at most this many rows and columns (every stride-th one).
MAX_PIXELS = 256


class BlitExplorer(Explorer):
    """An ``Explorer`` that redraws only its changing artists while the axes keep their limits.

    A subclass lists the artists that ``update`` changes (lines, images, titles) in
    ``self.dynamic`` at the end of ``draw``. The rest of the figure (axes, ticks, labels,
    legends) is drawn once for each set of axis limits and kept as a background: an update
    restores it and draws the dynamic artists on top. The figure and its artists are never
    re-created; the PNG is the canvas itself, at ``dpi``.
    """

    dynamic: list[Artist]

    def static_key(self) -> tuple:
        """What the background depends on: the limits and scales of every axes."""
        return tuple(
            (tuple(ax.get_xlim()), tuple(ax.get_ylim()), ax.get_xscale(), ax.get_yscale())
            for ax in self.fig.axes
        )

    def animate(self, artists: list[Artist]) -> None:
        """Mark ``artists`` as the dynamic ones (left out of the background)."""
        self.dynamic = list(artists)
        for artist in self.dynamic:
            artist.set_animated(True)
        self._background, self._background_key = None, None

    def render(self) -> None:
        """Background (redrawn only when the limits changed), dynamic artists, PNG."""
        fig = self.fig
        fig.set_dpi(self.dpi)
        canvas = fig.canvas
        key = self.static_key()
        if self._background is None or key != self._background_key:
            canvas.draw()  # animated artists are left out
            self._background = canvas.copy_from_bbox(fig.bbox)
            self._background_key = key
        else:
            canvas.restore_region(self._background)
        renderer = canvas.get_renderer()
        for artist in self.dynamic:
            artist.draw(renderer)
        buf = io.BytesIO()
        rgb = np.ascontiguousarray(np.asarray(canvas.buffer_rgba())[..., :3])  # opaque figure
        Image.fromarray(rgb).save(buf, format="png", compress_level=1)
        self.image.value = buf.getvalue()


def pairwise_distances(pe: np.ndarray) -> np.ndarray:
    """Distance between every two rows: ``D[a, b] = ||pe[a] - pe[b]||``.

    From the Gram matrix, ``||x - y||^2 = ||x||^2 + ||y||^2 - 2 x . y``; tiny negative
    round-off is clipped to 0. # shape: (max_len, max_len)
    """
    pe = np.asarray(pe, dtype=np.float64)
    if pe.ndim != 2:
        raise ValueError(f"pe must be 2-dimensional, got shape {pe.shape}")
    sq = np.einsum("ij,ij->i", pe, pe)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (pe @ pe.T)
    np.fill_diagonal(d2, 0.0)
    return np.sqrt(np.clip(d2, 0.0, None))


class NormExplorer(BlitExplorer):
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
            "sinusoidal_pe": sinusoidal_pe,
            "pe_norms": pe_norms,
            "expected_norm": expected_norm,
            "min_pairwise_distance": min_pairwise_distance,
        }
        controls = {
            "d": int_slider("d", d, 2, 512, 2),
            "max_len": int_slider("max_len", max_len, 2, 512),
            "base": log_slider("base", base, 1.0, 6.0),
        }
        super().__init__(controls, figsize=(10, 4.2), title="Norms and distances of PE rows")

    def draw(self, fig: Figure) -> None:
        # Fixed axes and few tick labels: text is most of the drawing time of an update.
        fig.set_layout_engine(None)
        self.ax_norm = fig.add_axes((0.075, 0.13, 0.47, 0.71))
        self.ax_dist = fig.add_axes((0.62, 0.13, 0.36, 0.71))
        ax = self.ax_norm
        (self.norm_line,) = ax.plot(
            [], [], color="tab:blue", lw=2.5, label="measured: pe_norms(pe)"
        )
        self.target_line = ax.axhline(
            0.0, color="tab:red", ls="--", lw=1.5, label="expected: sqrt(d/2)"
        )
        ax.set_xlabel("position pos")
        ax.set_ylabel("norm of the row  ||PE[pos]||")
        ax.legend(loc="lower right")
        self.dist_image = self.ax_dist.imshow(
            np.zeros((2, 2)), cmap="magma", origin="upper", interpolation="nearest", aspect="auto"
        )
        self.closest = self.ax_dist.scatter(
            [], [], s=70, facecolors="none", edgecolors="cyan", linewidths=1.5
        )
        self.ax_dist.set_xlabel("position b")
        self.ax_dist.set_ylabel("position a")
        for axis in (ax.xaxis, ax.yaxis, self.ax_dist.xaxis, self.ax_dist.yaxis):
            axis.set_major_locator(MaxNLocator(4, integer=axis is not ax.yaxis))
        ax.set_title("Norm of every row against sqrt(d/2)")
        self.ax_dist.set_title("||PE[a] - PE[b]||  (black: 0)")
        self.norm_text, self.dist_text = subtitle(ax), subtitle(self.ax_dist)
        fig.set_dpi(self.dpi)
        # The legend stays in the background: the lines run at 1/2 to 4/5 of the height.
        self.animate(
            [
                self.norm_line,
                self.target_line,
                self.norm_text,
                self.dist_image,
                self.closest,
                self.dist_text,
            ]
        )

    def update(self, d: int, max_len: int, base: float) -> None:
        f = self.fns
        pe = np.asarray(f["sinusoidal_pe"](max_len, d, base), dtype=np.float64)
        norms = np.asarray(f["pe_norms"](pe), dtype=np.float64)
        target = float(f["expected_norm"](d))
        dmin = float(f["min_pairwise_distance"](pe))
        dist = pairwise_distances(pe)

        pos = np.arange(max_len)
        self.norm_line.set_data(pos, norms)
        self.target_line.set_ydata([target, target])
        self.ax_norm.set_xlim(0, max(max_len - 1, 1))
        # Rounded-up limits: most slider moves keep the axes (and the background).
        self.ax_norm.set_ylim(0.0, nice_ceil(1.25 * max(target, float(np.max(norms)), 1e-12)))
        gap = float(np.max(np.abs(norms - target)))
        self.norm_text.set_text(f"sqrt(d/2) = {target:.4f}, largest gap {gap:.1e}")

        # The panel is about 250 pixels wide: show at most MAX_PIXELS rows and columns.
        stride = -(-max_len // MAX_PIXELS)
        self.dist_image.set_data(dist[::stride, ::stride])
        self.dist_image.set_extent((-0.5, max_len - 0.5, max_len - 0.5, -0.5))
        self.dist_image.set_clim(0.0, max(float(dist.max()), 1e-12))
        off = dist + np.diag(np.full(max_len, np.inf))
        a, b = np.unravel_index(int(np.argmin(off)), off.shape)
        self.closest.set_offsets([[b, a], [a, b]])
        self.dist_text.set_text(
            f"min over a != b: {dmin:.4f} (circles: {min(a, b)}, {max(a, b)}), "
            f"max {float(dist.max()):.2f}"
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


def bench_explorers(ref) -> list[tuple[str, Explorer, dict]]:
    """Explorers on the reference module ``ref`` at d = 512, max_len = 512, and new values.

    Two moves: ``base`` keeps the axes (blitted update), ``d`` changes them (full redraw).
    """

    def build() -> NormExplorer:
        return NormExplorer(
            ref.sinusoidal_pe,
            ref.pe_norms,
            ref.expected_norm,
            ref.min_pairwise_distance,
            d=512,
            max_len=512,
            base=10000.0,
        )

    return [
        ("norm_explorer[base]", build(), {"base": 1000.0}),
        ("norm_explorer[d]", build(), {"d": 256}),
    ]

"""Explorer of notebook 09_families: T5's buckets and the bias matrix they give.

``families_explorer(t5_bucket=..., t5_bias=...)`` draws, with the learner's own functions:

1. the bucket of every relative position ``rel = j - i`` from ``-REL_RANGE`` to ``REL_RANGE``
   (exact buckets and log-spaced ones in two colours, ``±max_distance`` dotted), and where
   the last bucket begins;
2. the bias matrix of one head over ``SIZE`` queries and keys, for a stand-in
   ``bucket_bias`` that decreases with the distance a bucket stands for (``stand_in_bias``).

Sliders: ``num_buckets``, ``max_distance`` and the direction (``bidirectional``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from helpers.i18n import tr
from helpers.palette import series_style
from helpers.widgets.base import FONT, Explorer, int_slider, interactive, subtitle

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "FamiliesExplorer",
    "exact_mask",
    "families_explorer",
    "stand_in_bias",
]

REL_RANGE = 300  # rel runs over -REL_RANGE .. REL_RANGE
SIZE = 64  # queries and keys of the bias matrix
BIAS_LOW = -float(np.log(64.0))  # the colour scale: stand-in biases lie in [BIAS_LOW, 0]


def stand_in_bias(num_buckets: int, bidirectional: bool) -> np.ndarray:
    """A one-head ``bucket_bias`` that falls with the bucket's distance. # shape: (num_buckets, 1)

    Bucket ``b`` stands for distance rank ``r`` (``b`` itself, or ``b - num_buckets // 2`` in
    the upper, future half of a bidirectional layout); its bias is ``-ln(1 + r)``, halved for
    future keys so that the two directions look different.
    """
    b = np.arange(num_buckets)
    if bidirectional:
        half = num_buckets // 2
        rank = b % half
        scale = np.where(b >= half, 0.5, 1.0)
    else:
        rank, scale = b, np.ones(num_buckets)
    return (-np.log1p(rank) * scale)[:, None]


def exact_mask(rel: np.ndarray, num_buckets: int, bidirectional: bool) -> np.ndarray:
    """True where T5 gives a distance its own bucket (``r < nb // 2``), False where log-spaced."""
    nb = num_buckets // 2 if bidirectional else num_buckets
    r = np.abs(rel) if bidirectional else -np.minimum(rel, 0)
    return r < nb // 2


class FamiliesExplorer(Explorer):
    """Buckets against ``rel`` and the bias matrix of one head.

    Artists the tests read: ``exact_dots`` and ``log_dots`` (rel, bucket), ``limits`` (the
    dotted ``±max_distance`` lines), ``matrix`` (the bias image) and ``last_text``.
    """

    def __init__(
        self,
        t5_bucket: Callable,
        t5_bias: Callable,
        num_buckets: int = 32,
        max_distance: int = 128,
        bidirectional: bool = True,
    ):
        import ipywidgets as widgets

        self.t5_bucket = t5_bucket
        self.t5_bias = t5_bias
        self.buckets = self.bias = None
        controls = {
            "num_buckets": int_slider("num_buckets", num_buckets, 4, 64, step=2),
            "max_distance": int_slider("max_distance", max_distance, 33, 1000),
            "bidirectional": widgets.Checkbox(value=bidirectional, description="bidirectional"),
        }
        super().__init__(
            controls, figsize=(11.5, 4.2), title=tr("T5: relative positions in buckets")
        )

    def draw(self, fig: Figure) -> None:
        from matplotlib import colormaps

        fig.set_layout_engine("none")  # fixed axes: no layout pass per frame
        ax = fig.add_axes((0.06, 0.22, 0.5, 0.63))
        ax_bias = fig.add_axes((0.62, 0.13, 0.28, 0.72))
        ax_bar = fig.add_axes((0.915, 0.2, 0.012, 0.58))
        self.ax, self.ax_bias = ax, ax_bias
        (self.log_dots,) = ax.plot(
            [], [], ms=3, label=tr("log-spaced"), **(series_style(1) | {"linestyle": "none"})
        )
        (self.exact_dots,) = ax.plot(
            [], [], ms=4, label=tr("exact"), **(series_style(0) | {"linestyle": "none"})
        )
        self.limits = ax.vlines([0, 0], 0, 1, colors="0.3", linestyles=":", lw=1)
        ax.set_xlim(-REL_RANGE, REL_RANGE)
        ax.set_xlabel(tr("rel = j − i (key minus query)"))
        ax.set_ylabel(tr("bucket"))
        ax.grid(True, alpha=0.3)
        # under the axes: a decoder's buckets reach the upper left corner
        ax.legend(
            loc="upper center",
            bbox_to_anchor=(0.5, -0.17),
            ncol=2,
            fontsize=FONT,
            frameon=False,
            markerscale=2,
        )
        ax.set_title(tr("your t5_bucket"), fontsize=FONT, y=1.0)
        self.last_text = subtitle(ax)
        self.matrix = ax_bias.imshow(
            np.zeros((SIZE, SIZE)),
            cmap=colormaps["viridis"],
            vmin=BIAS_LOW,
            vmax=0.0,
            interpolation="nearest",
        )
        ax_bias.set_xlabel(tr("key j"))
        ax_bias.set_ylabel(tr("query i"))
        ax_bias.set_title(tr("your t5_bias, one head"), fontsize=FONT, y=1.0)
        bar = fig.colorbar(self.matrix, cax=ax_bar)
        bar.ax.tick_params(labelsize=FONT)
        bar.set_label("stand-in bias", fontsize=FONT)
        # num_buckets sets the y-limits: that axis moves (a cached layer, not the background)
        self.animate(
            [self.log_dots, self.exact_dots, self.limits, self.last_text, self.matrix],
            moving=[ax.yaxis],
        )

    def update(self, num_buckets: int, max_distance: int, bidirectional: bool) -> None:
        rel = np.arange(-REL_RANGE, REL_RANGE + 1)
        buckets = np.asarray(
            self.t5_bucket(rel, bidirectional, num_buckets, max_distance), dtype=np.float64
        )
        if buckets.shape != rel.shape:
            raise ValueError(f"t5_bucket returned shape {buckets.shape}, expected {rel.shape}")
        exact = exact_mask(rel, num_buckets, bidirectional)
        self.buckets = buckets
        self.exact_dots.set_data(rel[exact], buckets[exact])
        self.log_dots.set_data(rel[~exact], buckets[~exact])
        top = num_buckets - 0.5
        self.limits.set_segments(
            [
                [(-max_distance, -0.5), (-max_distance, top)],
                [(max_distance, -0.5), (max_distance, top)],
            ]
        )
        past = rel <= 0
        last = buckets[past].max()
        start = int(-rel[past][buckets[past] == last].max())
        self.last_text.set_text(
            tr("the last past bucket ({last}) starts {start} back", last=int(last), start=start)
        )
        if self.ax.get_ylim() != (-1.0, float(num_buckets)):
            self.ax.set_ylim(-1.0, float(num_buckets))

        bias = np.asarray(
            self.t5_bias(
                stand_in_bias(num_buckets, bidirectional), SIZE, SIZE, bidirectional, max_distance
            ),
            dtype=np.float64,
        )
        if bias.shape != (1, SIZE, SIZE):
            raise ValueError(f"t5_bias returned shape {bias.shape}, expected {(1, SIZE, SIZE)}")
        self.bias = bias[0]
        self.matrix.set_data(bias[0])


def families_explorer(
    t5_bucket: Callable, t5_bias: Callable, **defaults
) -> FamiliesExplorer | None:
    """Sliders num_buckets, max_distance and the direction over the learner's T5 functions.

    ``defaults`` sets the starting values (``num_buckets``, ``max_distance``,
    ``bidirectional``). Returns ``None`` while nbgrader runs the notebook.
    """
    if not interactive():
        return None
    return FamiliesExplorer(t5_bucket=t5_bucket, t5_bias=t5_bias, **defaults)

"""Explorer of notebook 07_alibi: ALiBi's bias matrices and how far each head looks.

``alibi_explorer(alibi_slopes=..., alibi_bias=..., mean_attention_distance=...,
softmax=...)`` draws, for ``heads`` heads and ``seq_len`` tokens, with the learner's own
functions (``softmax`` is the notebook's row-wise softmax, ``softmax_rows`` in 07_alibi):

1. the bias matrix of every head, tiled into one image (masked entries in grey);
2. the attention weights of the query at ``pos`` over the keys, one line per head, for a
   query with no content preference (weights = softmax of the bias row): straight lines
   on a log axis, because the bias is linear in the distance;
3. the mean attention distance of each head against its slope: steep heads look locally.

Sliders: ``heads``, ``seq_len``, ``pos`` (the query shown in panel 2) and ``causal``.
A move that makes heads x seq_len^2 larger than ``PROGRESSIVE`` is shown in two frames:
panels 1 and 2 at once (``softmax`` asked for the row of the query at ``pos`` only), then
panel 3, whose distances need the weights of every query; panel 3 keeps the last
distances, faded, in between.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from helpers.i18n import tr
from helpers.widgets.base import FONT, Explorer, checkbox, int_slider, interactive, learner

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["AlibiExplorer", "alibi_explorer", "bias_mosaic"]

MAX_HEADS = 16
TILE = 64  # pixels per head tile: longer sequences are sampled down to this
BIAS_FLOOR = -8.0  # biases below this get the darkest colour (exp(-8) = 3e-4)
MASKED = BIAS_FLOOR - 1.0  # stand-in for -inf, drawn in the colormap's "under" colour
WEIGHT_FLOOR = 1e-6  # the lowest weight panel 2 shows
PROGRESSIVE = 1_000_000  # heads x seq_len^2 above which a move is shown in two frames
STALE_ALPHA = 0.3  # the last distances, while the new ones are computed
LABEL_PAD = 1  # points around a slope label, inside its box


def bias_mosaic(bias: np.ndarray, tile: int = TILE, band: int = 0) -> tuple[np.ndarray, int, int]:
    """Tile per-head bias matrices ``(h, L, L)`` into one image ``(rows, cols)`` of tiles.

    Each matrix is sampled down to at most ``tile`` evenly spaced rows and columns,
    finite values are clipped at ``BIAS_FLOOR``, ``-inf`` becomes ``MASKED`` and the
    one-pixel gaps between tiles are NaN, as are the ``band`` rows above each row of tiles
    (where the explorer writes each head's slope). Heads fill the tiles row by row.
    """
    h, L, _ = bias.shape
    cols = math.ceil(math.sqrt(h))
    rows = math.ceil(h / cols)
    idx = np.unique(np.linspace(0, L - 1, min(L, tile)).round().astype(int))
    t = idx.size
    small = bias[:, idx[:, None], idx[None, :]]
    shown = np.where(np.isneginf(small), MASKED, np.maximum(small, BIAS_FLOOR))
    pitch = band + t + 1  # one row of tiles: its band, its tiles, the gap under them
    image = np.full((rows * pitch - 1, cols * (t + 1) - 1), np.nan)
    for head in range(h):  # one copy per head tile (at most MAX_HEADS)
        r, c = divmod(head, cols)
        top = r * pitch + band
        image[top : top + t, c * (t + 1) : c * (t + 1) + t] = shown[head]
    return image, rows, cols


def label_band(heads: int, seq_len: int, height_px: float, label_px: float) -> int:
    """The rows of mosaic pixels above each row of tiles that hold a label ``label_px``
    high, on a mosaic drawn ``height_px`` high (its larger side fills that height)."""
    cols = math.ceil(math.sqrt(heads))
    rows = math.ceil(heads / cols)
    t = min(int(seq_len), TILE)
    width = cols * (t + 1) - 1
    band = 0
    while band * height_px / max(width, rows * (band + t + 1) - 1) < label_px:
        band += 1
    return band


def slope_label(slope: float, cols: int) -> str:
    """A head's slope as its tile says it, ``1/<1/slope>``: three significant digits, or,
    where four tiles or more share a row (16 heads), two below 10 and whole numbers above,
    so that a label of 12 pixels fits its tile (``1/1.41`` became ``1/1.4``)."""
    inverse = 1 / slope
    if cols < 4:
        return f"1/{inverse:.3g}"
    return f"1/{inverse:.2g}" if inverse < 10 else f"1/{inverse:.0f}"


def uniform_distance(seq_len: int, causal: bool) -> float:
    """Mean attention distance without a bias (uniform weights over the allowed keys).

    Causal: query i spreads over keys 0..i, mean distance i/2, so (L - 1)/4 on average;
    symmetric: the mean of |i - j| over all pairs, (L^2 - 1) / (3 L).
    """
    L = int(seq_len)
    return (L - 1) / 4 if causal else (L * L - 1) / (3 * L)


def head_colours(slopes: np.ndarray) -> np.ndarray:
    """One colour per head, dark for the steepest slope, light for the flattest."""
    from matplotlib import colormaps

    rank = np.argsort(np.argsort(-np.log2(slopes)))  # 0 for the steepest head
    return colormaps["viridis"](np.linspace(0.0, 0.9, len(slopes)))[rank]


class AlibiExplorer(Explorer):
    """Bias heatmaps per head, one query's weights, and the mean distance of each head."""

    def __init__(
        self,
        alibi_slopes: Callable,
        alibi_bias: Callable,
        mean_attention_distance: Callable,
        softmax: Callable,
        heads: int = 8,
        seq_len: int = 64,
        pos: int | None = None,
        causal: bool = True,
    ):
        self.alibi_slopes = learner("alibi_slopes", alibi_slopes)
        self.alibi_bias = learner("alibi_bias", alibi_bias)
        self.mean_attention_distance = learner("mean_attention_distance", mean_attention_distance)
        self.softmax = learner("softmax", softmax)
        self._quiet = False
        self._key = self._bias_key = self._mosaic_key = None
        self._first_pass = False
        self.row_weights = None
        self.slopes = self.bias = self.weights = self.distances = None
        self.uniform_distance = None
        pos = seq_len - 1 if pos is None else pos
        controls = {
            "heads": int_slider("heads", heads, 1, MAX_HEADS),
            "seq_len": int_slider("seq_len", seq_len, 2, 1024),
            "pos": int_slider("pos", pos, 0, seq_len - 1),
            "causal": checkbox("causal", causal),
        }
        super().__init__(
            controls, figsize=(12.5, 4.4), title=tr("ALiBi: a distance penalty per head")
        )

    # -- drawing ----------------------------------------------------------------------
    def draw(self, fig: Figure) -> None:
        # Fixed axes (no layout engine): the layout is not recomputed at every move.
        from matplotlib import colormaps
        from matplotlib.ticker import MaxNLocator

        fig.set_layout_engine(None)
        ax_bias = fig.add_axes((0.01, 0.06, 0.25, 0.80))
        ax_bar = fig.add_axes((0.265, 0.16, 0.008, 0.60))
        ax_row = fig.add_axes((0.40, 0.15, 0.29, 0.71))
        ax_dist = fig.add_axes((0.785, 0.15, 0.205, 0.71))
        self.ax_bias, self.ax_row, self.ax_dist = ax_bias, ax_row, ax_dist

        cmap = colormaps["magma"].with_extremes(under="#c8c8c8", bad="white")
        self.mosaic = ax_bias.imshow(
            np.zeros((2, 2)),
            cmap=cmap,
            vmin=BIAS_FLOOR,
            vmax=0.0,
            interpolation="nearest",
            interpolation_stage="data",
        )
        ax_bias.set_axis_off()
        # fixed limits: the mosaic is scaled into the unit square, whatever its tiles
        ax_bias.set_xlim(0.0, 1.0)
        ax_bias.set_ylim(1.0, 0.0)
        ax_bias.set_autoscale_on(False)
        bar = fig.colorbar(self.mosaic, cax=ax_bar, extend="min", ticks=[-8, -4, 0])
        bar.ax.tick_params(labelsize=FONT)
        bar.set_label("bias (grey: -inf)", fontsize=FONT)
        self.bias_title = ax_bias.set_title("", fontsize=FONT, y=1.0)
        self.tile_labels = [
            ax_bias.text(
                0,
                0,
                "",
                color="white",
                fontsize=FONT,
                va="top",
                ha="left",
                bbox={"facecolor": "black", "alpha": 0.5, "pad": LABEL_PAD, "lw": 0},
            )
            for _ in range(MAX_HEADS)
        ]

        self.row_lines = [ax_row.plot([], [], lw=1.4)[0] for _ in range(MAX_HEADS)]
        self.pos_line = ax_row.axvline(0, color="0.4", ls=":", lw=1)
        ax_row.set_yscale("log")
        ax_row.set_ylim(WEIGHT_FLOOR, 1.5)
        ax_row.set_yticks([1e-6, 1e-4, 1e-2, 1.0], ["1e-6", "1e-4", "0.01", "1"])
        ax_row.minorticks_off()
        ax_row.xaxis.set_major_locator(MaxNLocator(6, integer=True, steps=[1, 2, 5, 10]))
        ax_row.set_xlabel(tr("key position j  (dark: steepest slope, light: flattest)"))
        ax_row.set_ylabel(tr("attention weight (log scale)"))
        self.row_title = ax_row.set_title("", fontsize=FONT, y=1.0)

        self.dist_points = ax_dist.scatter([], [], s=36, zorder=3, edgecolors="black", lw=0.5)
        self.uniform_line = ax_dist.axhline(1.0, color="0.4", ls="--", lw=1)
        self.uniform_text = ax_dist.text(
            0.6, 1.0, tr("no bias (uniform)"), ha="left", va="bottom", fontsize=FONT, color="0.3"
        )
        ax_dist.set_yscale("log")
        ax_dist.set_ylim(0.3, 1500)
        ax_dist.set_yticks([1, 10, 100, 1000], ["1", "10", "100", "1000"])
        ax_dist.minorticks_off()
        ax_dist.set_xlim(0.4, 8.6)
        ax_dist.set_xticks([1, 3, 5, 7], ["1/2", "1/8", "1/32", "1/128"])
        ax_dist.set_xlabel(tr("slope (log scale)"))
        ax_dist.set_ylabel(tr("mean attention distance (tokens)"))
        ax_dist.grid(alpha=0.3)
        ax_dist.set_title(tr("steep heads look locally"), fontsize=FONT, y=1.0)
        # The mosaic changes with heads, seq_len and causal only: a cached layer (see
        # slow_key). The weights and the distances are drawn at every frame, so that the
        # second frame of a large move (see refresh) redraws the distances only.
        self.animate(
            [
                *self.row_lines,
                self.pos_line,
                self.row_title,
                self.dist_points,
                self.uniform_line,
                self.uniform_text,
            ],
            moving=[ax_row.xaxis],  # seq_len sets its x-limits
            slow=[self.mosaic, *self.tile_labels, self.bias_title],
        )

    def update(self, heads: int, seq_len: int, pos: int, causal: bool) -> None:
        pos = min(int(pos), int(seq_len) - 1)
        key = (int(heads), int(seq_len), bool(causal))
        self.ax_row.set_xlim(-0.5, seq_len - 0.5)
        if key != self._key:
            self._key = None  # until every function of the learner has answered
            if self.measure(heads, seq_len, causal, pos, first_pass=self._first_pass):
                self._key = key
            self.draw_heads(heads, seq_len, causal)

        with self.panel(*self.row_lines):
            if self.weights is None:  # the first of two frames: the query's row only
                self.need(self.row_weights)
                rows = self.row_weights
            else:
                rows = self.weights[:, pos]
            colours = self.colours(heads)
            j = np.arange(seq_len)
            for h, line in enumerate(self.row_lines):
                line.set_visible(h < heads)
                if h < heads:
                    row = rows[h]
                    line.set_data(j, np.where(row > 0, row, np.nan))
                    line.set_color(colours[h])
        self.pos_line.set_xdata([pos, pos])
        self.row_title.set_text(tr("weights of the query at pos = {pos}, no content", pos=pos))

    def colours(self, heads: int) -> np.ndarray:
        """One colour per head from the learner's slopes (by head number without them)."""
        if self.slopes is not None and self.slopes.shape == (heads,):
            return head_colours(self.slopes)
        from matplotlib import colormaps

        return colormaps["viridis"](np.linspace(0.0, 0.9, heads))

    def slow_key(self) -> tuple | None:
        """The bias mosaic changes with heads, seq_len and causal only."""
        return self._mosaic_key

    def refresh(self) -> None:
        """Redraw; a large new measurement (heads x seq_len^2 over ``PROGRESSIVE``) is
        shown in two frames: the biases and the query's weights at once (the distances of
        the last measurement stay, faded), then the mean distances of the heads, which need
        the weights of every query."""
        values = self.values()
        key = (int(values["heads"]), int(values["seq_len"]), bool(values["causal"]))
        if key != self._key and key[0] * key[1] ** 2 > PROGRESSIVE:
            self._first_pass = True
            try:
                super().refresh()
            finally:
                self._first_pass = False
        super().refresh()

    def measure(
        self, heads: int, seq_len: int, causal: bool, pos: int = 0, first_pass: bool = False
    ) -> bool:
        """Slopes, bias, weights of a query with no content, mean distances (learner's code).

        Each function of the learner is called in its own panel: the panels that do not
        need a failing one are still drawn. True when every function answered. The first
        pass of a large measurement (see ``refresh``) asks ``softmax`` for the row of the
        query at ``pos`` only and leaves the distances out; the second pass keeps the
        slopes and biases of the first.
        """
        key = (heads, seq_len, causal)
        self.weights = self.row_weights = self.distances = None
        self.uniform_distance = uniform_distance(seq_len, causal)
        tiles, row = [self.mosaic, *self.tile_labels, self.bias_title], self.row_lines
        dist = [self.dist_points, self.uniform_line, self.uniform_text]
        if self._bias_key != key:
            self.slopes = self.bias = self._bias_key = None
            with self.panel(*self.tile_labels, self.dist_points):
                self.slopes = np.asarray(self.alibi_slopes(heads), dtype=np.float64)
            with self.panel(*tiles, *row, *dist):
                bias = self.alibi_bias(heads, seq_len, causal=causal)
                self.bias = np.asarray(bias, dtype=np.float64)
            if self.slopes is not None and self.bias is not None:
                self._bias_key = key
        if first_pass:
            with self.panel(*row):
                self.need(self.bias)
                # the query's row of the bias: softmax works row by row
                weights = self.softmax(self.bias[:, pos : pos + 1, :])
                self.row_weights = np.asarray(weights, dtype=np.float64)[:, 0]
            return False
        with self.panel(*row, *dist):
            self.need(self.bias)
            self.weights = np.asarray(self.softmax(self.bias), dtype=np.float64)  # no content
        with self.panel(*dist):
            self.need(self.weights)
            self.distances = np.asarray(
                self.mean_attention_distance(self.weights), dtype=np.float64
            )
        return not self.errors

    def draw_heads(self, heads: int, seq_len: int, causal: bool) -> None:
        """The mosaic of biases (the cached layer) and the mean distance of each head.

        Without distances yet (the first of two frames) the last ones stay, faded."""
        slopes, bias, distances = self.slopes, self.bias, self.distances
        mosaic_key = (heads, seq_len, causal, bias is not None, slopes is not None)
        if mosaic_key != self._mosaic_key:
            self._mosaic_key = mosaic_key
            self.draw_mosaic(heads, seq_len, causal)
        self.uniform_line.set_ydata([self.uniform_distance] * 2)
        self.uniform_text.set_y(self.uniform_distance)
        if slopes is not None and distances is not None:
            steepness = -np.log2(slopes)  # 1 for slope 1/2, 8 for slope 1/256
            self.dist_points.set_offsets(np.column_stack([steepness, distances]))
            self.dist_points.set_facecolor(self.colours(heads))
            self.dist_points.set_alpha(None)
        else:
            self.dist_points.set_alpha(STALE_ALPHA)

    def draw_mosaic(self, heads: int, seq_len: int, causal: bool) -> None:
        """The bias matrix of every head in one image, its title and the tiles' slopes."""
        slopes, bias = self.slopes, self.bias
        if causal:
            said = tr("causal bias of {heads} heads, L = {seq_len}", heads=heads, seq_len=seq_len)
        else:
            said = tr(
                "symmetric bias of {heads} heads, L = {seq_len}", heads=heads, seq_len=seq_len
            )
        self.bias_title.set_text(said)
        cols, below = 1, 0.0
        if bias is not None:
            # each row of tiles under a band as high as a label: no slope covers a bias
            side, label_px = self.label_sizes()
            band = label_band(heads, bias.shape[-1], side, label_px)
            # a label's box starts a point under the gap above its band
            below = (LABEL_PAD + 1) * self.fig.dpi / 72 / side
            image, rows, cols = bias_mosaic(bias, band=band)
            self.mosaic.set_data(image)
            unit = 1.0 / max(image.shape)  # one pixel of the mosaic, in axes units
            self.mosaic.set_extent((0.0, image.shape[1] * unit, image.shape[0] * unit, 0.0))
            step = (image.shape[1] + 1) / cols * unit
            pitch = (image.shape[0] + 1) / rows * unit
        for h, label in enumerate(self.tile_labels):
            label.set_visible(h < heads and bias is not None and slopes is not None)
            if label.get_visible():
                r, c = divmod(h, cols)
                label.set_position((c * step, r * pitch + below))
                label.set_text(slope_label(slopes[h], cols))

    def label_sizes(self) -> tuple[float, float]:
        """The mosaic's height on the canvas and a slope label's (box and a margin), in pixels:
        the unit square of the axes is drawn square, as high as its shorter side."""
        box = self.ax_bias.get_position()
        width, height = self.fig.get_size_inches() * self.fig.dpi
        side = min(box.width * width, box.height * height)
        points = FONT * 1.3 + 2 * LABEL_PAD + 3  # a line of text, its box's padding, a margin
        return side, points * self.fig.dpi / 72

    # -- keep pos inside the sequence ---------------------------------------------------
    def _on_change(self, change) -> None:
        if self._quiet:
            return
        if change["owner"] is self.controls["seq_len"]:
            self._quiet = True
            try:
                self.controls["pos"].max = int(change["new"]) - 1
            finally:
                self._quiet = False
        self.refresh()


def alibi_explorer(
    *,
    alibi_slopes: Callable,
    alibi_bias: Callable,
    mean_attention_distance: Callable,
    softmax: Callable,
    heads: int = 8,
    seq_len: int = 64,
    pos: int | None = None,
    causal: bool = True,
) -> AlibiExplorer | None:
    """The ALiBi explorer built on the learner's functions, or None while nbgrader runs.

    ``softmax`` is a row-wise softmax over the last axis (``softmax_rows`` of 07_alibi).
    """
    if not interactive():
        return None
    return AlibiExplorer(
        alibi_slopes, alibi_bias, mean_attention_distance, softmax, heads, seq_len, pos, causal
    )

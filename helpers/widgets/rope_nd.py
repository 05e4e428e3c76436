"""Explorers of notebook 11_rope_nd: the score map of a query patch, and an M-RoPE sequence.

``patch_score_explorer(patch_positions=..., apply_rope_2d=..., axial_freqs=...,
mixed_freqs=...)`` draws, with the learner's own functions, the score of a query patch
against every patch of a ``grid`` x ``grid`` image, for Pixtral's axial layout (left) and
RoPE-Mixed's start turned by ``phi`` (right). The query is 06's demo q and every patch
holds 06's demo k, so the map is the score of each offset, moved with the query. Under each
map, the largest |interaction term| ``s(a, b) - s(a, 0) - s(0, b) + s(0, 0)`` over the
map: 0 up to rounding for the axial layout (a row pattern plus a column pattern), not for
the mixed one. Sliders: ``grid``, the query's ``row`` and ``col``, ``d``, the axial
``base`` and the mixed ``phi`` (RoPE-Mixed's base is the paper's 10).

``mrope_explorer(mrope_position_ids=...)`` draws the three rows of Qwen2-VL ids (temporal,
height, width) of a prompt of ``text_before`` tokens, one image of ``grid_h`` x ``grid_w``
patches merged ``merge`` x ``merge``, and ``text_after`` tokens, token by token, the image's
tokens shaded; a dashed line shows where the text after the image would start if the image
counted as h * w tokens of text. Given ``mrope_angles`` and ``mrope_interleaved_angles`` too, a
second panel shows the 64 pairs of a head of 128 (base 1e6), coloured by the axis each follows,
as bars of how far each pair turns across the image (the height's pairs over its h rows, the
width's over its w columns, the temporal pairs over 8 frames); the ``interleaved`` checkbox
switches from Qwen2-VL's blocks ([16, 24, 24], ``mrope_angles``) to Qwen3-VL's interleaved
layout ([24, 20, 20], ``mrope_interleaved_angles``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from helpers.i18n import tr
from helpers.palette import SERIES_COLOURS, bar_style, series_style
from helpers.widgets.base import (
    FONT,
    Explorer,
    checkbox,
    int_slider,
    interactive,
    learner,
    log_slider,
)

if TYPE_CHECKING:
    import ipywidgets as widgets
    from matplotlib.figure import Figure

__all__ = ["MropeExplorer", "PatchScoreExplorer", "mrope_explorer", "patch_score_explorer"]

MAX_GRID = 32
MAX_D = 256
MIXED_BASE = 10.0  # RoPE-Mixed's default base in the authors' code


def angle_slider(description: str, value: float) -> widgets.FloatSlider:
    """An angle in radians, 0 .. pi, updating the figure while it is dragged."""
    import ipywidgets as widgets

    from helpers.widgets.base import slider_widths

    width, label = slider_widths(description)

    return widgets.FloatSlider(
        value=value,
        min=0.0,
        max=round(math.pi, 2),
        step=0.01,
        description=description,
        readout=False,  # the explorer's number box beside it shows and takes the value
        continuous_update=True,
        layout=widgets.Layout(width=width, flex="0 0 auto"),
        style={"description_width": label},
    )


def demo_pair(d: int) -> tuple[np.ndarray, np.ndarray]:
    """06's demo vectors at dimension d: q_j = cos(0.7 j + 0.3), k_j = sin(0.4 j + 1.1)."""
    j = np.arange(d, dtype=np.float64)
    return np.cos(0.7 * j + 0.3), np.sin(0.4 * j + 1.1)


def rotated_keys(
    patch_positions: Callable, apply_rope_2d: Callable, freqs: tuple, grid: int
) -> tuple[np.ndarray, np.ndarray]:
    """06's demo k rotated at every patch of the grid, row-major like ``patch_positions``:
    (keys (grid * grid, d), the frequencies as float64). A learner's ``apply_rope_2d`` that
    takes one vector at a time works too."""
    fx, fy = (np.asarray(f, dtype=np.float64) for f in freqs)
    _, k = demo_pair(2 * fx.size)
    pos = np.asarray(patch_positions(grid, grid))
    if pos.shape != (grid * grid, 2):
        raise ValueError(f"patch_positions returned shape {pos.shape}, expected {(grid * grid, 2)}")
    batch = np.broadcast_to(k, (pos.shape[0], k.size))
    try:
        keys = np.asarray(apply_rope_2d(batch, pos, fx, fy), dtype=np.float64)
    except Exception:  # noqa: BLE001 - a learner's apply_rope_2d may take one vector only
        keys = None
    if keys is None or keys.shape != batch.shape:
        keys = np.stack([np.asarray(apply_rope_2d(k, p, fx, fy), dtype=np.float64) for p in pos])
    return keys, np.stack([fx, fy])


def score_map(
    apply_rope_2d: Callable, keys: np.ndarray, freqs: np.ndarray, grid: int, query: tuple
) -> np.ndarray:
    """The score of the query (06's q) at ``query`` against the rotated keys, divided by
    |q| |k|: shape (grid, grid)."""
    q, k = demo_pair(keys.shape[1])
    rotated = np.asarray(apply_rope_2d(q, np.asarray(query), freqs[0], freqs[1]), dtype=np.float64)
    scores = (keys @ rotated).reshape(grid, grid)
    return scores / (np.linalg.norm(q) * np.linalg.norm(k))


def interaction_map(scores: np.ndarray, query: tuple[int, int]) -> np.ndarray:
    """s(a, b) - s(a, 0) - s(0, b) + s(0, 0) for every key of a score map of one query.

    The key at patch (pr, pc) sees the query a = c - pc columns and b = r - pr rows away:
    s(a, 0) is the key in the query's row, s(0, b) the key in its column.
    """
    r, c = query
    return scores - scores[r, :][None, :] - scores[:, c][:, None] + scores[r, c]


class PatchScoreExplorer(Explorer):
    """Two score maps of one query patch: Pixtral's axial layout and RoPE-Mixed at ``phi``.

    Artists the tests read: ``maps`` (the two images), ``marks`` (the query's cross on
    each) and ``notes`` (the line under each map). ``scores`` holds the last maps drawn
    (divided by |q| |k|) and ``interaction`` the largest |interaction term| of each.
    """

    def __init__(
        self,
        patch_positions: Callable,
        apply_rope_2d: Callable,
        axial_freqs: Callable,
        mixed_freqs: Callable,
        grid: int = 16,
        row: int = 5,
        col: int = 9,
        d: int = 64,
        base: float = 100.0,
        phi: float = 0.79,
    ):
        self.patch_positions = learner("patch_positions", patch_positions)
        self.apply_rope_2d = learner("apply_rope_2d", apply_rope_2d)
        self.axial_freqs = learner("axial_freqs", axial_freqs)
        self.mixed_freqs = learner("mixed_freqs", mixed_freqs)
        self.scores: dict[str, np.ndarray] = {}
        self.interaction: dict[str, float] = {}
        d = int(min(max(4 * (int(d) // 4), 8), MAX_D))
        controls = {
            "grid": int_slider("grid", grid, 2, MAX_GRID),
            "row": int_slider("row", row, 0, MAX_GRID - 1),
            "col": int_slider("col", col, 0, MAX_GRID - 1),
            "d": int_slider("d", d, 8, MAX_D, step=4),
            "base": log_slider("base", base, 1, 6),
            "phi": angle_slider("phi", phi),
        }
        super().__init__(
            controls, figsize=(11.0, 5.0), title=tr("2D RoPE: the score map of a query patch")
        )

    def draw(self, fig: Figure) -> None:
        from matplotlib import colormaps

        fig.set_layout_engine("none")  # fixed axes: no layout pass per frame
        cmap = colormaps["RdBu_r"]
        axes = (fig.add_axes((0.05, 0.14, 0.38, 0.7)), fig.add_axes((0.52, 0.14, 0.38, 0.7)))
        bar_ax = fig.add_axes((0.93, 0.2, 0.012, 0.58))
        self.maps, self.marks, self.notes = [], [], []
        titles = (tr("axial (Pixtral): a row part plus a column part"), tr("RoPE-Mixed at phi"))
        for ax, title in zip(axes, titles):
            image = ax.imshow(
                np.zeros((2, 2)),
                cmap=cmap,
                vmin=-1.0,
                vmax=1.0,
                extent=(0.0, 1.0, 1.0, 0.0),
                interpolation="nearest",
                interpolation_stage="data",
            )
            ax.set_xlim(0.0, 1.0)
            ax.set_ylim(1.0, 0.0)
            ax.set_autoscale_on(False)
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_xlabel(tr("column (x) →"))
            ax.set_ylabel(tr("← row (y)"))
            ax.set_title(title, fontsize=FONT, y=1.0)
            (mark,) = ax.plot([], [], "+", color="k", ms=12, mew=2)
            note = ax.text(0.5, -0.08, "", transform=ax.transAxes, ha="center", va="top")
            self.maps.append(image)
            self.marks.append(mark)
            self.notes.append(note)
        from matplotlib.cm import ScalarMappable
        from matplotlib.colors import Normalize

        # a colour bar of its own: the maps' colour limits follow each frame, the bar does not
        scale = ScalarMappable(norm=Normalize(-1.0, 1.0), cmap=cmap)
        bar = fig.colorbar(scale, cax=bar_ax, ticks=[])
        bar.set_label(tr("score: red > 0, blue < 0"), fontsize=FONT)
        self.axes = axes
        self.animate([*self.maps, *self.marks, *self.notes])

    def update(self, grid: int, row: int, col: int, d: int, base: float, phi: float) -> None:
        grid = int(grid)
        r, c = min(int(row), grid - 1), min(int(col), grid - 1)
        layouts = (
            ("axial", (grid, int(d), float(base)), lambda: self.axial_freqs(int(d), float(base))),
            (
                "mixed",
                (grid, int(d), float(phi)),
                lambda: self.mixed_freqs(int(d), MIXED_BASE, phi),
            ),
        )
        self.scores, self.interaction = {}, {}
        for (name, key, freqs_of), image, mark, note in zip(
            layouts, self.maps, self.marks, self.notes
        ):
            with self.panel(image, mark, note):
                # the keys follow the grid and the layout, not the query: kept over its moves
                keys, freqs = self.kept(
                    name,
                    key,
                    lambda freqs_of=freqs_of: rotated_keys(
                        self.patch_positions, self.apply_rope_2d, freqs_of(), grid
                    ),
                )
                scores = score_map(self.apply_rope_2d, keys, freqs, grid, (r, c))
                self.scores[name] = scores
                image.set_data(scores)
                top = float(np.max(np.abs(scores))) or 1.0
                image.set_clim(-top, top)
                mark.set_data([(c + 0.5) / grid], [(r + 0.5) / grid])
                largest = float(np.max(np.abs(interaction_map(scores, (r, c)))))
                self.interaction[name] = largest
                note.set_text(
                    tr(
                        "query ({r}, {c}); largest |interaction term| on the map: {value:.1e}",
                        r=r,
                        c=c,
                        value=largest,
                    )
                )


def patch_score_explorer(
    patch_positions: Callable,
    apply_rope_2d: Callable,
    axial_freqs: Callable,
    mixed_freqs: Callable,
    **defaults,
) -> PatchScoreExplorer | None:
    """Sliders grid, row, col, d, base and phi over the learner's 2D RoPE functions.

    ``defaults`` sets the starting values. Returns ``None`` while nbgrader runs the notebook.
    """
    if not interactive():
        return None
    return PatchScoreExplorer(
        patch_positions=patch_positions,
        apply_rope_2d=apply_rope_2d,
        axial_freqs=axial_freqs,
        mixed_freqs=mixed_freqs,
        **defaults,
    )


# each row of position ids: its colour, line style and marker (the course palette)
ROWS = tuple((name, series_style(k)) for k, name in enumerate(("t", "h", "w")))
BUDGET_D, BUDGET_BASE, FRAMES = 128, 1e6, 8  # the head of the frequency-budget panel
LAYOUTS = {False: [16, 24, 24], True: [24, 20, 20]}  # Qwen2-VL's blocks, Qwen3-VL's interleave


class MropeExplorer(Explorer):
    """The three M-RoPE id rows of text, one image and text, token by token.

    Artists the tests read: ``id_lines`` (t, h, w), ``image_band`` (the image's tokens),
    ``count_line`` (where the text after would start if the image were h * w text tokens)
    and ``note``. ``ids`` holds the last ids drawn. With the two angle functions: ``bars``
    (one per pair, coloured by its axis), ``budget_note``, and ``turns`` (axis, turn of each
    pair across the image) of the last layout drawn.
    """

    def __init__(
        self,
        mrope_position_ids: Callable,
        text_before: int = 4,
        grid_h: int = 8,
        grid_w: int = 12,
        merge: int = 2,
        text_after: int = 4,
        mrope_angles: Callable | None = None,
        mrope_interleaved_angles: Callable | None = None,
        interleaved: bool = False,
    ):
        self.mrope_position_ids = learner("mrope_position_ids", mrope_position_ids)
        self.layouts = None
        if mrope_angles is not None and mrope_interleaved_angles is not None:
            self.layouts = {
                False: learner("mrope_angles", mrope_angles),
                True: learner("mrope_interleaved_angles", mrope_interleaved_angles),
            }
        self.ids = None
        self.turns = None
        controls = {
            "text_before": int_slider("text_before", text_before, 1, 32),
            "grid_h": int_slider("grid_h", grid_h, 1, MAX_GRID),
            "grid_w": int_slider("grid_w", grid_w, 1, MAX_GRID),
            "merge": int_slider("merge", merge, 1, 4),
            "text_after": int_slider("text_after", text_after, 1, 32),
        }
        if self.layouts is not None:
            controls["interleaved"] = checkbox(tr("interleaved (Qwen3-VL)"), interleaved)
        super().__init__(
            controls,
            figsize=(11.0, 8.0 if self.layouts is not None else 4.6),
            title=tr("M-RoPE: three ids per token (Qwen2-VL)"),
        )

    def draw(self, fig: Figure) -> None:
        from matplotlib.patches import Rectangle

        fig.set_layout_engine("none")
        two = self.layouts is not None
        ax = fig.add_axes((0.07, 0.62, 0.9, 0.26) if two else (0.07, 0.14, 0.9, 0.6))
        self.ax = ax
        self.image_band = Rectangle((0, 0), 0, 1, color="0.88", lw=0, zorder=0)
        ax.add_patch(self.image_band)
        self.id_lines = [
            ax.plot(
                [],
                [],
                drawstyle="steps-mid",
                lw=1.6,
                ms=5,
                markevery=0.08,
                label=tr("{row} id", row=name),
                **style,
            )[0]
            for name, style in ROWS
        ]
        self.count_line = ax.axvline(0, color=SERIES_COLOURS[4], ls="--", lw=1.2)
        (self.count_mark,) = ax.plot(
            [],
            [],
            "x",
            color=SERIES_COLOURS[4],
            ms=8,
            mew=2,
            label=tr("the next id if the image counted h·w tokens"),
        )
        ax.set_xlabel(tr("token index (grey: the image's tokens)"))
        ax.set_ylabel(tr("position id"))
        ax.grid(True, alpha=0.3)
        fig.legend(
            handles=[*self.id_lines, self.count_mark],
            loc="upper left",
            bbox_to_anchor=(0.07, 0.995 if two else 0.99),
            ncol=4,
            fontsize=FONT,
            frameon=False,
        )
        # the notes wrap at the figure's edge: two lines at most
        self.note = fig.text(0.07, 0.95 if two else 0.9, "", fontsize=FONT, va="top", wrap=True)
        artists = [self.image_band, *self.id_lines, self.count_line, self.count_mark, self.note]
        moving = [ax.xaxis, ax.yaxis]
        self.bars = []
        if two:
            bx = fig.add_axes((0.07, 0.085, 0.9, 0.375))
            self.budget_ax = bx
            pairs = np.arange(BUDGET_D // 2)
            self.bars = list(bx.bar(pairs, np.ones(pairs.size), width=0.8, color="0.7", log=True))
            bx.set_xlim(-0.7, pairs.size - 0.3)
            bx.set_ylim(1e-6, 100.0)
            bx.set_xlabel(tr("pair j of a head of 128 (base 1e6)"))
            bx.set_ylabel(tr("turn across the image (rad)"))
            bx.grid(True, axis="y", alpha=0.3)
            from matplotlib.patches import Patch

            bx.legend(
                handles=[
                    Patch(label=tr("{row} pairs", row=n), **bar_style(k))
                    for k, (n, _) in enumerate(ROWS)
                ],
                loc="upper right",
                ncol=3,
                fontsize=FONT,
                frameon=False,
            )
            self.budget_note = fig.text(0.07, 0.535, "", fontsize=FONT, va="top", wrap=True)
            artists += [*self.bars, self.budget_note]
        self.animate(artists, moving=moving)

    def update(
        self,
        text_before: int,
        grid_h: int,
        grid_w: int,
        merge: int,
        text_after: int,
        interleaved: bool = False,
    ) -> None:
        m = int(merge)
        gh, gw = max(m, m * (int(grid_h) // m)), max(m, m * (int(grid_w) // m))
        segments = [("text", int(text_before)), ("image", (gh, gw)), ("text", int(text_after))]
        ids = np.asarray(self.mrope_position_ids(segments, spatial_merge_size=m))
        if ids.ndim != 2 or ids.shape[0] != 3:
            raise ValueError(f"mrope_position_ids returned shape {ids.shape}, expected (3, N)")
        self.ids = ids
        h, w = gh // m, gw // m
        start, n_img = int(text_before), h * w
        tokens = np.arange(ids.shape[1])
        for line, row in zip(self.id_lines, ids):
            line.set_data(tokens, row)
        self.image_band.set_bounds(start - 0.5, -1e6, n_img, 2e6)
        after = start + n_img
        self.count_line.set_xdata([after, after])
        self.count_mark.set_data([after], [start + n_img])
        nxt = int(ids[0, after]) if after < ids.shape[1] else None
        self.note.set_text(
            tr(
                "image: {gh} x {gw} patches merged {m} x {m} = {h} x {w} = {n} tokens at s = {s}; "
                "the text after it starts at {nxt} = s + max(h, w), not s + h·w = {count}",
                gh=gh,
                gw=gw,
                m=m,
                h=h,
                w=w,
                n=n_img,
                s=start,
                nxt=nxt,
                count=start + n_img,
            )
        )
        top = max(float(ids.max()), start + n_img) + 1
        self.ax.set_xlim(-0.5, ids.shape[1] - 0.5)
        self.ax.set_ylim(-0.5, top + 0.5)
        if self.layouts is not None:
            with self.panel(*self.bars, self.budget_note):
                self.draw_budget(bool(interleaved), h, w)

    def draw_budget(self, interleaved: bool, h: int, w: int) -> None:
        """Bars: how far each pair turns across the image (h rows, w columns, 8 frames)."""
        section = LAYOUTS[interleaved]
        spans = (FRAMES - 1, h - 1, w - 1)
        unit = np.asarray(
            self.layouts[interleaved](np.eye(3, dtype=np.int64), BUDGET_D, BUDGET_BASE, section),
            dtype=np.float64,
        )  # token a: id 1 on axis a only, so row a holds the rates of a's pairs
        if unit.shape != (3, BUDGET_D // 2):
            raise ValueError(f"the angles have shape {unit.shape}, expected (3, {BUDGET_D // 2})")
        axis = np.argmax(unit, axis=0)
        turn = unit[axis, np.arange(unit.shape[1])] * np.asarray(spans, dtype=float)[axis]
        self.turns = (axis, turn)
        for bar, a, t in zip(self.bars, axis, turn):
            bar.set_height(max(float(t), 1e-6))
            style = bar_style(int(a))
            bar.set_facecolor(style["facecolor"])
            bar.set_hatch(style["hatch"])
            bar.set_edgecolor(style["edgecolor"])
        fastest = [float(turn[axis == a].max()) if np.any(axis == a) else 0.0 for a in range(3)]
        self.budget_note.set_text(
            tr(
                "{layout} {section}: the fastest pair turns {t:.2g} rad across {frames} frames "
                "(t), {hh:.2g} across {h} rows (h), {ww:.2g} across {w} columns (w)",
                layout=tr("interleaved (Qwen3-VL)") if interleaved else tr("blocks (Qwen2-VL)"),
                section=section,
                t=fastest[0],
                frames=FRAMES,
                hh=fastest[1],
                h=h,
                ww=fastest[2],
                w=w,
            )
        )


def mrope_explorer(
    mrope_position_ids: Callable,
    mrope_angles: Callable | None = None,
    mrope_interleaved_angles: Callable | None = None,
    **defaults,
) -> MropeExplorer | None:
    """Sliders text_before, grid_h, grid_w, merge and text_after over the learner's ids; with
    both angle functions, the frequency-budget panel and its ``interleaved`` checkbox.

    ``defaults`` sets the starting values. Returns ``None`` while nbgrader runs the notebook.
    """
    if not interactive():
        return None
    return MropeExplorer(
        mrope_position_ids=mrope_position_ids,
        mrope_angles=mrope_angles,
        mrope_interleaved_angles=mrope_interleaved_angles,
        **defaults,
    )

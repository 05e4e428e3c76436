"""Explorer of notebook 05_rotation: a k-step shift is one fixed rotation per pair.

Each ``[sin, cos]`` pair of a position vector is drawn as a clock hand: at pos 0 it points
to twelve o'clock and it turns clockwise as pos grows. The learner's ``shift_matrix(k, d,
base)`` moves every hand at once; the ring marks where ``sinusoidal_pe`` says the hand of
``pos + k`` is. The right panel measures the same matrix at every position of the table.

The headline number is the learner's own ``shift_error`` over the same 512 positions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from helpers.i18n import tr
from helpers.palette import SERIES_COLOURS
from helpers.widgets.base import (
    FONT,
    Explorer,
    int_slider,
    interactive,
    learner,
    log_slider,
    subtitle,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAX_LEN = 512  # positions 0 .. MAX_LEN - 1 are measured in the right panel
N_CLOCKS = 8  # clock faces drawn: pairs spread evenly from the fastest to the slowest
_COLS = 4
_ROW = 1.3  # vertical distance between two rows of clocks (room for the labels)
_RADIUS = 0.42
_CIRCLE = np.linspace(0.0, 2.0 * np.pi, 61)
_FLOOR = 1e-18  # an exact zero error is drawn at this height on the log axis


def shown_pairs(d: int, n: int = N_CLOCKS) -> np.ndarray:
    """Indices of the pairs drawn as clocks: up to ``n``, evenly spread over ``0 .. d/2 - 1``."""
    return np.unique(np.round(np.linspace(0, d // 2 - 1, min(n, d // 2))).astype(int))


def clock_centres(count: int) -> np.ndarray:
    """Centres of ``count`` clock faces laid out in rows of four.

    # shape: (count, 2)
    """
    idx = np.arange(count)
    return np.stack([idx % _COLS + 0.5, -(idx // _COLS) * _ROW - 0.5], axis=1)


def apply_rows(M: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``rows @ M.T``: M applied to every row, block by block when M is 2x2 block-diagonal.

    A block-diagonal M (the right answer) costs O(rows * d) this way instead of a dense
    product, which also keeps multi-threaded BLAS (slow on a busy machine) out of the update.
    Any other M, a wrong answer included, is applied as the dense matrix it is.
    # shapes: M (d, d), rows (L, d) -> (L, d)
    """
    d = rows.shape[1]
    if M.shape != (d, d):
        raise ValueError(f"M must have shape ({d}, {d}), got {M.shape}")
    i = np.arange(d // 2)
    blocks = M.reshape(d // 2, 2, d // 2, 2)[i, :, i, :]  # shape: (d/2, 2, 2)
    if np.count_nonzero(M) != np.count_nonzero(blocks):  # something outside the blocks
        return rows @ M.T
    x0, x1 = rows[:, 0::2], rows[:, 1::2]  # shape: (L, d/2) each
    out = np.empty_like(rows)
    out[:, 0::2] = blocks[:, 0, 0] * x0 + blocks[:, 0, 1] * x1
    out[:, 1::2] = blocks[:, 1, 0] * x0 + blocks[:, 1, 1] * x1
    return out


def _face(centre: np.ndarray) -> np.ndarray:
    return np.stack(
        [centre[0] + _RADIUS * np.cos(_CIRCLE), centre[1] + _RADIUS * np.sin(_CIRCLE)], axis=1
    )


class ShiftExplorer(Explorer):
    """Clock hands of each pair before and after ``shift_matrix(k)``, and its error at every pos.

    Artists the tests read: ``before``, ``after`` (hand segments from the centre to the tip),
    ``target`` (ring at ``PE(pos + k)``), ``err_line`` (error against pos).
    """

    def __init__(
        self,
        sinusoidal_pe: Callable,
        shift_matrix: Callable,
        shift_error: Callable,
        d: int = 16,
        k: int = 3,
        pos: int = 5,
        base: float = 10000.0,
        max_len: int = MAX_LEN,
    ):
        self.sinusoidal_pe = learner("sinusoidal_pe", sinusoidal_pe)
        self.shift_matrix = learner("shift_matrix", shift_matrix)
        self.shift_error = learner("shift_error", shift_error)
        self.max_len = int(max_len)
        controls = {
            "k": int_slider("k", k, 0, 64),
            "pos": int_slider("pos", pos, 0, self.max_len - 1),
            "d": int_slider("d", d, 2, 512, step=2),
            "base": log_slider("base", base, 1, 6),
        }
        super().__init__(controls, figsize=(10, 4.4), title=tr("A k-step shift is a rotation"))

    def draw(self, fig: Figure) -> None:
        from matplotlib.collections import LineCollection

        fig.set_layout_engine("none")  # fixed axes: a layout pass per frame costs ~100 ms
        ax = fig.add_axes((0.0, 0.0, 0.56, 0.84))
        err_ax = fig.add_axes((0.66, 0.13, 0.32, 0.66))
        self.ax, self.err_ax = ax, err_ax
        ax.set_aspect("equal")
        ax.set_xlim(-0.03, _COLS + 0.03)  # room for the hands' line width
        ax.set_ylim(-_ROW - 1.05, 0.02)
        ax.axis("off")
        self.faces = LineCollection([], colors="0.7", linewidths=1.0)
        self.arcs = LineCollection(
            [], colors=SERIES_COLOURS[2], linewidths=1.5, label=tr("swept angle k·θᵢ")
        )
        self.before = LineCollection([], colors="0.55", linewidths=2.5, label=tr("PE(pos)"))
        self.after = LineCollection(
            [], colors=SERIES_COLOURS[0], linewidths=2.5, label=tr("M(k) @ PE(pos)")
        )
        for artist in (self.faces, self.arcs, self.before, self.after):
            ax.add_collection(artist)
        (self.target,) = ax.plot(
            [], [], "o", ms=10, mfc="none", mec=SERIES_COLOURS[1], mew=2, label=tr("PE(pos + k)")
        )
        self.labels = [
            ax.text(c[0], c[1] - _RADIUS - 0.05, "", ha="center", va="top", fontsize=FONT)
            for c in clock_centres(N_CLOCKS)
        ]
        fig.legend(
            handles=[self.before, self.after, self.target, self.arcs],
            loc="upper left",
            bbox_to_anchor=(0.0, 0.93),
            ncol=4,
            fontsize=FONT,
            frameon=False,
            handlelength=1.5,
        )
        self.heading = fig.text(0.01, 0.975, "", fontsize=FONT, va="top", weight="bold")
        self.pairs_note = fig.text(
            0.56, 0.975, "", fontsize=FONT, va="top", ha="right", color="0.3"
        )
        self._labelled_d = None

        (self.err_line,) = err_ax.plot([], [], color=SERIES_COLOURS[0], lw=1)
        self.err_mark = err_ax.axvline(0, color=SERIES_COLOURS[1], lw=1.2, ls="--")
        err_ax.set_yscale("log")
        err_ax.set_ylim(_FLOOR / 3, 30)
        err_ax.set_xlim(0, self.max_len - 1)
        err_ax.set_xlabel("pos")
        err_ax.set_ylabel(tr("max |M(k) PE(pos) − PE(pos + k)|"), fontsize=FONT)
        err_ax.grid(True, which="major", alpha=0.3)
        err_ax.set_title(tr("one M(k) for every pos"), fontsize=FONT, y=1.0)
        self.err_title = subtitle(err_ax)  # above the data, which may reach any height
        self.animate(
            [
                self.faces,
                self.arcs,
                self.before,
                self.after,
                self.target,
                self.heading,
                self.err_line,
                self.err_mark,
                self.err_title,
            ],
            slow=[*self.labels, self.pairs_note],  # they follow d only: the cached layer
        )

    def slow_key(self) -> int | None:
        """The pair labels and the note above the clocks change with ``d`` only."""
        return self._labelled_d

    def _measure(self, k: int, d: int, base: float):
        """The table, the shifted table and the error at every pos (kept while only pos moves)."""

        def measure():
            length = self.max_len + k  # every pos of the panel has its pos + k in the table
            pe = np.asarray(self.sinusoidal_pe(length, d, base), dtype=np.float64)
            M = np.asarray(self.shift_matrix(k, d, base), dtype=np.float64)  # shape: (d, d)
            moved = apply_rows(M, pe[: self.max_len])  # row pos is M @ PE(pos)
            err = np.max(np.abs(moved - pe[k:]), axis=1)  # shape: (max_len,)
            return pe, moved, err

        return self.kept("measure", (k, d, base), measure)

    def update(self, k: int, pos: int, d: int, base: float) -> None:
        pairs = shown_pairs(d)
        centres = clock_centres(len(pairs))
        if d != self._labelled_d:  # the labels only change with d: the layer is drawn again
            for label, i in zip(self.labels, pairs):
                label.set_text(tr("pair {i}", i=i))
            for label in self.labels[len(pairs) :]:
                label.set_text("")
            self.pairs_note.set_text(
                tr(
                    "{shown} of the {pairs} pairs, fastest to slowest",
                    shown=len(pairs),
                    pairs=d // 2,
                )
            )
            self._labelled_d = d
        self.faces.set_segments([_face(c) for c in centres])
        self.heading.set_text(tr("PE({pos}) shifted by k = {k}", pos=pos, k=k))
        with self.panel(self.before, self.target):
            pe = np.asarray(self.sinusoidal_pe(pos + k + 1, d, base), dtype=np.float64)
            before = pe[pos].reshape(-1, 2)[pairs]  # (clocks, 2): the (sin, cos) of each pair
            target = pe[pos + k].reshape(-1, 2)[pairs]
            self.before.set_segments(
                [np.stack([c, c + _RADIUS * v]) for c, v in zip(centres, before)]
            )
            self.target.set_data(
                centres[:, 0] + _RADIUS * target[:, 0], centres[:, 1] + _RADIUS * target[:, 1]
            )
        with self.panel(self.after, self.arcs, self.err_line, self.err_mark):
            table, moved, err = self._measure(k, d, base)
            before = table[pos].reshape(-1, 2)[pairs]
            after = moved[pos].reshape(-1, 2)[pairs]
            self.after.set_segments(
                [np.stack([c, c + _RADIUS * v]) for c, v in zip(centres, after)]
            )
            start = np.arctan2(before[:, 1], before[:, 0])
            sweep = np.mod(start - np.arctan2(after[:, 1], after[:, 0]), 2.0 * np.pi)  # clockwise
            t = np.linspace(0.0, 1.0, 24)
            self.arcs.set_segments(
                [
                    np.stack(
                        [c[0] + 0.28 * np.cos(a0 - s * t), c[1] + 0.28 * np.sin(a0 - s * t)], 1
                    )
                    for c, a0, s in zip(centres, start, sweep)
                ]
            )
            self.err_line.set_data(np.arange(self.max_len), np.maximum(err, _FLOOR))
            self.err_mark.set_xdata([pos, pos])
        with self.panel(self.err_title):
            # the headline: the learner's shift_error over the same positions pos < max_len
            worst = self._worst(k, d, base)
            self.err_title.set_text(tr("max error (shift_error) {worst:.1e}", worst=worst))

    def _worst(self, k: int, d: int, base: float) -> float:
        """The learner's ``shift_error`` (kept while only pos moves)."""
        return self.kept(
            "worst", (k, d, base), lambda: float(self.shift_error(k, d, self.max_len + k, base))
        )


def shift_explorer(
    sinusoidal_pe: Callable, shift_matrix: Callable, shift_error: Callable, **defaults
) -> ShiftExplorer | None:
    """Sliders k, pos, d and base over the learner's ``sinusoidal_pe``, ``shift_matrix``, ``shift_error``.

    ``defaults`` sets the starting slider values (``d``, ``k``, ``pos``, ``base``).
    Returns ``None`` while nbgrader runs the notebook.
    """
    if not interactive():
        return None
    return ShiftExplorer(
        sinusoidal_pe=sinusoidal_pe,
        shift_matrix=shift_matrix,
        shift_error=shift_error,
        **defaults,
    )

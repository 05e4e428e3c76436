"""Explorer of notebook 02_sincos: the sin/cos table, one highlighted position, its clock hands.

Three panels: the table ``PE`` as a heatmap (positions down, dimensions across) with the
highlighted position marked; that position's row (sin at even dimensions, cos at odd
ones); and the clock: pair ``i`` drawn as a hand from the centre to ``(sin a, cos a)``,
``a = pos * theta_i``, which starts at twelve o'clock and turns clockwise as ``pos`` grows.
The fast pair is the long second hand, the slowest pair the short hour hand; each hand is
labelled with its wavelength from the learner's ``wavelengths``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from helpers import validate
from helpers.i18n import tr
from helpers.palette import SERIES_COLOURS
from helpers.widgets.base import FONT, Explorer, int_slider, interactive, learner, log_slider

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAX_LEN = 512
MAX_D = 512
HAND_LENGTHS = (1.0, 0.82, 0.64, 0.46)
HAND_COLOURS = SERIES_COLOURS[:4]  # each hand is also told by its length and its label


def hand_pairs(d: int) -> list[int]:
    """The pairs drawn as clock hands: the fastest, the next, the middle and the slowest."""
    d = validate.dim(d)
    half = d // 2
    out = []
    for i in (0, 1, half // 2, half - 1):
        if 0 <= i < half and i not in out:
            out.append(i)
    return out


class SincosExplorer(Explorer):
    """The learner's ``sinusoidal_pe`` as a heatmap, one row, and clock hands.

    Controls: model dimension ``d``, table length ``max_len``, ``base`` and the highlighted
    position ``pos`` (clamped to the table).
    """

    def __init__(
        self,
        sinusoidal_pe: Callable,
        wavelengths: Callable,
        d: int = 64,
        max_len: int = 100,
        base: float = 10000.0,
        pos: int = 20,
    ):
        self.sinusoidal_pe = learner("sinusoidal_pe", sinusoidal_pe)
        self.wavelengths = learner("wavelengths", wavelengths)
        self.last = {}
        controls = {
            "d": int_slider("d", d, 2, MAX_D, step=2),
            "max_len": int_slider("max_len", max_len, 2, MAX_LEN),
            "base": log_slider("base", base, 0.5, 6.0),
            "pos": int_slider("pos", pos, 0, MAX_LEN - 1),
        }
        super().__init__(
            controls,
            figsize=(11, 4.6),
            title=tr("The sin/cos table: move d, base and the highlighted pos"),
        )

    def draw(self, fig: Figure) -> None:
        from matplotlib.ticker import MaxNLocator

        fig.set_layout_engine("none")
        self.ax_map = fig.add_axes((0.06, 0.13, 0.27, 0.75))
        cax = fig.add_axes((0.34, 0.13, 0.012, 0.75))
        self.ax_row = fig.add_axes((0.485, 0.13, 0.255, 0.75))
        self.ax_clock = fig.add_axes((0.76, 0.34, 0.22, 0.54))

        self.heat = self.ax_map.imshow(
            np.zeros((2, 2)),
            cmap="RdBu_r",
            vmin=-1,
            vmax=1,
            aspect="auto",
            interpolation="nearest",
            interpolation_stage="data",
        )
        self.marker = self.ax_map.axhline(0, color="black", lw=1.2)
        self.ax_map.set_xlabel(tr("dimension j"))
        for ax in (self.ax_map, self.ax_row):
            ax.xaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
        self.ax_map.yaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
        self.ax_map.set_ylabel(tr("position pos"))
        self.map_title = self.ax_map.set_title("", fontsize=FONT, y=1.0)
        fig.colorbar(self.heat, cax=cax, ticks=[-1, -0.5, 0, 0.5, 1])

        (self.sin_line,) = self.ax_row.plot(
            [], [], "o-", ms=3, lw=1, color=SERIES_COLOURS[4], label=tr("sin (even j)")
        )
        (self.cos_line,) = self.ax_row.plot(
            [], [], "s--", ms=3, lw=1, color=SERIES_COLOURS[0], label=tr("cos (odd j)")
        )
        self.ax_row.set_ylim(-1.95, 1.15)  # room under -1 for the legend: it stays static
        self.ax_row.set_yticks([-1, -0.5, 0, 0.5, 1])
        self.ax_row.axhline(0, color="0.8", lw=0.8)
        self.ax_row.set_xlabel(tr("dimension j"))
        self.ax_row.set_ylabel(tr("PE[pos, j]"))
        self.row_legend = self.ax_row.legend(
            loc="lower center", ncol=1, fontsize=FONT, framealpha=0.9, borderaxespad=0.2
        )
        self.row_title = self.ax_row.set_title("", fontsize=FONT, y=1.0)

        angles = np.linspace(0, 2 * np.pi, 200)
        self.ax_clock.plot(np.sin(angles), np.cos(angles), color="0.6", lw=1)
        for k in range(12):
            a = 2 * np.pi * k / 12
            self.ax_clock.plot(
                [0.9 * np.sin(a), np.sin(a)], [0.9 * np.cos(a), np.cos(a)], color="0.6", lw=1
            )
        self.ax_clock.set_xlim(-1.1, 1.1)
        self.ax_clock.set_ylim(-1.1, 1.1)
        self.ax_clock.set_aspect("equal")
        self.ax_clock.axis("off")
        self.hands = []
        self.hand_labels = []
        for k, colour in enumerate(HAND_COLOURS):
            (hand,) = self.ax_clock.plot(
                [0, 0], [0, 0], color=colour, lw=3.5 - 0.5 * k, solid_capstyle="round"
            )
            self.hands.append(hand)
            label = fig.text(0.76, 0.25 - 0.06 * k, "", color=colour, fontsize=FONT)
            self.hand_labels.append(label)
        self.clock_title = self.ax_clock.set_title("", fontsize=FONT, y=1.0)
        # The table, its title and the wavelengths change with d, max_len and base only: a
        # cached layer (see slow_key); a move of pos redraws the rest.
        self.animate(
            [
                self.marker,
                self.sin_line,
                self.cos_line,
                *self.hands,
                self.row_title,
                self.clock_title,
            ],
            slow=[self.heat, self.map_title, *self.hand_labels],
            moving=[self.ax_map, self.ax_row.xaxis],  # d and max_len set these limits
        )

    def slow_key(self) -> tuple:
        """The table, its title and the wavelengths follow d, max_len and base."""
        return (self.last.get("base"), self.last.get("d"), self.last.get("max_len"))

    def update(self, d, max_len, base, pos) -> None:
        d = validate.dim(d)
        max_len = validate.count(max_len, "max_len")
        base = validate.base(base)
        pos = min(int(validate.positions(pos, "pos")), max_len - 1)
        if (self.last.get("d"), self.last.get("max_len")) != (d, max_len):
            self.ax_map.set_xlim(-0.5, d - 0.5)
            self.ax_map.set_ylim(max_len - 0.5, -0.5)
            self.ax_row.set_xlim(-0.5, d - 0.5)
        pairs = hand_pairs(d)
        self.last = {"d": d, "max_len": max_len, "base": base, "pos": pos, "pairs": pairs}
        pe = None
        table = [self.heat, self.map_title, self.marker, self.sin_line, self.cos_line]
        with self.panel(*table, *self.hands, self.row_title, self.clock_title):
            pe = np.asarray(self.sinusoidal_pe(max_len, d, base), dtype=np.float64)
            if pe.shape != (max_len, d):
                raise ValueError(
                    f"sinusoidal_pe({max_len}, {d}) must have shape {(max_len, d)}, got {pe.shape}"
                )
            self.last["pe"] = pe
            self.heat.set_data(pe)
            self.heat.set_extent((-0.5, d - 0.5, max_len - 0.5, -0.5))
            self.marker.set_ydata([pos, pos])
            row = pe[pos]
            self.sin_line.set_data(np.arange(0, d, 2), row[0::2])
            self.cos_line.set_data(np.arange(1, d, 2), row[1::2])
            for line in (self.sin_line, self.cos_line):
                line.set_markersize(3 if d <= 64 else 0)
            for k, hand in enumerate(self.hands):
                hand.set_visible(k < len(pairs))
                if k < len(pairs):
                    i, length = pairs[k], HAND_LENGTHS[k]
                    hand.set_data([0, length * row[2 * i]], [0, length * row[2 * i + 1]])
            self.map_title.set_text(f"PE: {max_len} x {d}, base {base:,.0f}")
            self.row_title.set_text(tr("row pos = {pos}", pos=pos))
            self.clock_title.set_text(tr("clock at pos = {pos}", pos=pos))
        with self.panel(*self.hand_labels):
            lam = np.asarray(self.wavelengths(d, base), dtype=np.float64)
            if lam.shape != (d // 2,):
                raise ValueError(f"wavelengths({d}) must have shape {(d // 2,)}, got {lam.shape}")
            for k, label in enumerate(self.hand_labels):
                label.set_visible(k < len(pairs))
                if k < len(pairs):
                    label.set_text(
                        tr(
                            "pair {i}: \u03bb = {wavelength:,.1f}",
                            i=pairs[k],
                            wavelength=lam[pairs[k]],
                        )
                    )


def sincos_explorer(
    *, sinusoidal_pe: Callable, wavelengths: Callable, **start
) -> SincosExplorer | None:
    """The sin/cos table explorer; ``None`` while nbgrader runs the notebook.

    Pass the notebook's own functions:
    ``sincos_explorer(sinusoidal_pe=sinusoidal_pe, wavelengths=wavelengths)``; ``start``
    sets the first slider values (``d``, ``max_len``, ``base``, ``pos``).
    """
    if not interactive():
        return None
    return SincosExplorer(sinusoidal_pe, wavelengths, **start)

"""Explorer of notebook 04_decay: the dot product of two positions against their distance.

``decay_explorer(sinusoidal_pe=..., dot_profile=..., closed_form_dot=..., first_rebound=...,
rope_decay_bound=...)`` overlays, for the learner's own functions, the measured profile
``PE[pos] . PE[pos + k]`` on the closed form ``sum_i cos(k theta_i)`` (the same curve
whatever ``pos``), marks the first rebound, and shows RoFormer's decay bound for RoPE.
Sliders: ``d``, ``base``, ``pos`` and ``max_offset`` (offsets 0 .. max_offset).
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
    nice_ceil,
    subtitle,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["DecayExplorer", "decay_explorer"]

# About this many markers on the measured profile, whatever the number of offsets.
MARKERS = 60


class DecayExplorer(Explorer):
    """Measured profile on the closed form (left) and RoFormer's relative bound (right)."""

    def __init__(
        self,
        sinusoidal_pe: Callable,
        dot_profile: Callable,
        closed_form_dot: Callable,
        first_rebound: Callable,
        rope_decay_bound: Callable,
        d: int = 32,
        base: float = 10000.0,
        pos: int = 25,
        max_offset: int = 100,
    ):
        self.fns = {
            name: learner(name, fn)
            for name, fn in (
                ("sinusoidal_pe", sinusoidal_pe),
                ("dot_profile", dot_profile),
                ("closed_form_dot", closed_form_dot),
                ("first_rebound", first_rebound),
                ("rope_decay_bound", rope_decay_bound),
            )
        }
        controls = {
            "d": int_slider("d", d, 2, 512, 2),
            "base": log_slider("base", base, 1.0, 6.0),
            "pos": int_slider("pos", pos, 0, 4096),
            "max_offset": int_slider("max k", max_offset, 2, 512),
        }
        super().__init__(controls, figsize=(10.5, 4.3), title=tr("Dot product against distance"))

    def draw(self, fig: Figure) -> None:
        # Fixed axes and few tick labels: text is most of the drawing time of an update.
        from matplotlib.ticker import MaxNLocator

        fig.set_layout_engine(None)
        self.ax_dot = fig.add_axes((0.07, 0.25, 0.515, 0.61))
        self.ax_bound = fig.add_axes((0.67, 0.25, 0.31, 0.61))
        ax = self.ax_dot
        (self.closed_line,) = ax.plot(
            [], [], color=SERIES_COLOURS[1], lw=4, alpha=0.55, label=tr("closed form")
        )
        (self.measured_line,) = ax.plot(
            [],
            [],
            ls="none",
            marker="o",
            ms=4,
            color=SERIES_COLOURS[0],
            label=tr("measured"),
        )
        self.rebound_line = ax.axvline(
            0.0, color=SERIES_COLOURS[2], ls="--", lw=1.5, label=tr("first rebound")
        )
        ax.axhline(0.0, color="gray", lw=0.8)
        ax.set_xlabel(tr("distance k"))
        ax.set_ylabel(tr("dot product"))
        # under the axes: the profile may reach any height
        ax.legend(
            loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3, fontsize=FONT, frameon=False
        )
        (self.bound_line,) = self.ax_bound.plot([], [], color=SERIES_COLOURS[3], lw=2)
        self.ax_bound.set_xlabel(tr("relative distance r"))
        self.ax_bound.set_ylabel(tr("(1/(d/2)) sum_j |S_j|"))
        for axis in (ax.xaxis, ax.yaxis, self.ax_bound.xaxis, self.ax_bound.yaxis):
            axis.set_major_locator(MaxNLocator(5 if axis is ax.xaxis else 4))
        ax.set_title(tr("PE[pos] . PE[pos+k]: measured on sum_i cos(k theta_i)"), y=1.0)
        self.ax_bound.set_title(tr("RoPE preview: RoFormer's decay bound"), y=1.0)
        self.dot_text, self.bound_text = subtitle(ax), subtitle(self.ax_bound)
        self.animate(
            [
                self.closed_line,
                self.measured_line,
                self.rebound_line,
                self.dot_text,
                self.bound_line,
                self.bound_text,
            ],
            moving=[ax, self.ax_bound],  # the sliders set their limits: the cached layer
        )

    def update(self, d: int, base: float, pos: int, max_offset: int) -> None:
        f = self.fns
        ks = np.arange(max_offset + 1)
        ax = self.ax_dot
        ax.set_xlim(0, max_offset)
        self.ax_bound.set_xlim(0, max_offset)
        measured = closed = rebound = None
        with self.panel(self.measured_line, self.rebound_line, self.dot_text):
            pe = f["sinusoidal_pe"](pos + max_offset + 1, d, base)
            measured = np.asarray(f["dot_profile"](pe, pos, ks), dtype=np.float64)
            self.measured_line.set_data(ks, measured)
            self.measured_line.set_markevery(max(1, len(ks) // MARKERS))
        with self.panel(self.closed_line, self.dot_text):
            # neither curve depends on pos: a move of pos keeps them (see kept)
            closed = self.kept(
                "closed",
                (max_offset, d, base),
                lambda: np.asarray(f["closed_form_dot"](ks, d, base), dtype=np.float64),
            )
            self.closed_line.set_data(ks, closed)
        with self.panel(self.rebound_line, self.dot_text):
            self.need(measured)
            rebound = f["first_rebound"](list(ks), measured)
            self.rebound_line.set_visible(rebound is not None)
            if rebound is not None:
                self.rebound_line.set_xdata([rebound, rebound])
        curves = [c for c in (closed, measured) if c is not None and c.size]
        # Rounded-out limits: most slider moves keep them.
        top = nice_ceil(1.1 * max([float(c.max()) for c in curves] + [1e-12]))
        low = -min([float(c.min()) for c in curves] + [0.0])
        ax.set_ylim(-(nice_ceil(1.1 * low) if low > 0 else 0.05 * top), top)
        with self.panel(self.dot_text):
            self.need(measured, closed)
            gap = float(np.max(np.abs(measured - closed)))
            self.dot_text.set_text(
                tr("first rebound at k={rebound}, largest gap {gap:.1e}", rebound=rebound, gap=gap)
            )

        with self.panel(self.bound_line, self.bound_text):
            bound = self.kept(
                "bound",
                (max_offset, d, base),
                lambda: np.asarray(f["rope_decay_bound"](d, max_offset, base), dtype=np.float64),
            )
            self.bound_line.set_data(ks, bound)
            self.ax_bound.set_ylim(0.0, nice_ceil(1.05 * max(float(bound.max()), 1e-12)))
            self.bound_text.set_text(f"r=0: {bound[0]:.2f}, r={max_offset}: {bound[-1]:.2f}")


def decay_explorer(
    *,
    sinusoidal_pe: Callable,
    dot_profile: Callable,
    closed_form_dot: Callable,
    first_rebound: Callable,
    rope_decay_bound: Callable,
    d: int = 32,
    base: float = 10000.0,
    pos: int = 25,
    max_offset: int = 100,
) -> DecayExplorer | None:
    """The explorer of 04_decay built on the learner's functions; ``None`` under nbgrader."""
    if not interactive():
        return None
    return DecayExplorer(
        sinusoidal_pe,
        dot_profile,
        closed_form_dot,
        first_rebound,
        rope_decay_bound,
        d=d,
        base=base,
        pos=pos,
        max_offset=max_offset,
    )

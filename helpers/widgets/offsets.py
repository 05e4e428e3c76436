"""Explorer of notebook 08_offsets: one offset measured at many starts, three methods.

``offsets_explorer(offset_scan=..., spread=..., alibi_score=..., demo_vectors=...)`` places
the query at
``start + offset`` and the key at ``start`` and draws, with the learner's own functions:

1. the score against the start for RoPE (flat), additive sin/cos positions (it wobbles:
   the cross terms ``q . P[n]`` and ``P[m] . k`` depend on the absolute positions) and
   ALiBi (flat), with markers at the listed starts,
   one panel per method, side by side;
2. the spread (max - min) of each method over the listed starts, in the panel titles.

Sliders: ``offset``, ``base``, ``d`` and a text box with the list of starts. The query and
key are the learner's ``demo_vectors()``, cut to the first ``d`` entries (or repeated from
the start when ``d`` is longer); ``alibi_score(q, k, m, n, slope)`` is the notebook's.
"""

from __future__ import annotations

import math
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
    resized,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "OffsetsExplorer",
    "offsets_explorer",
    "parse_starts",
]

METHODS = ("RoPE", "additive", "ALiBi")
COLOURS = dict(zip(METHODS, SERIES_COLOURS))
DENSE = 160  # starts on the background curves
XTICKS = (0, 10, 100, 1000, 10000, 100000)


def parse_starts(text: str) -> list[int]:
    """``"3, 10, 100, 4000"`` -> ``[3, 10, 100, 4000]``; anything else raises ValueError."""
    parts = [p for p in str(text).replace(";", ",").replace(" ", ",").split(",") if p]
    try:
        starts = [int(p) for p in parts]
    except ValueError:
        raise ValueError(f"starts must be integers separated by commas, got {text!r}") from None
    if not starts or min(starts) < 0:
        raise ValueError(f"starts must be one or more integers >= 0, got {text!r}")
    return starts


def y_limits(values) -> tuple[float, float]:
    """Limits around ``values`` that stay the same over small changes (at least +-1).

    The half-height is rounded up by ``nice_ceil`` and the middle snapped to a quarter of
    it, so that most slider moves keep the axes (and the cached background).
    """
    lo, hi = float(np.min(values)), float(np.max(values))
    half = nice_ceil(max((hi - lo) / 2 * 1.15, 1.0))
    step = half / 4
    mid = round((lo + hi) / 2 / step) * step
    return mid - half, mid + half


class OffsetsExplorer(Explorer):
    """The score of one offset at many starts, for RoPE, additive positions and ALiBi."""

    def __init__(
        self,
        offset_scan: Callable,
        spread: Callable,
        alibi_score: Callable,
        demo_vectors: Callable,
        offset: int = 2,
        base: float = 10000.0,
        d: int = 64,
        starts: str = "3, 10, 100, 4000",
        slope: float = 0.5,
    ):
        import ipywidgets as widgets

        self.offset_scan = learner("offset_scan", offset_scan)
        self.spread = learner("spread", spread)
        self.alibi_score = learner("alibi_score", alibi_score)
        self.demo_vectors = learner("demo_vectors", demo_vectors)
        self.slope = float(slope)
        self.scan = self.dense = None
        self.spreads: dict[str, float] = {}
        controls = {
            "offset": int_slider("offset", offset, 0, 64),
            "base": log_slider("base", base, 2.0, 6.0),
            "d": int_slider("d", d, 2, 512, 2),
            "starts": widgets.Text(
                value=starts,
                description=tr("starts"),
                continuous_update=False,
                layout=widgets.Layout(width="380px", flex="0 0 auto"),
                style={"description_width": "80px"},
            ),
        }
        super().__init__(controls, figsize=(12.0, 4.3), title=tr("One offset, many starts"))

    def draw(self, fig: Figure) -> None:
        # Fixed axes (no layout engine): the layout is not recomputed at every move.
        from matplotlib.ticker import MaxNLocator

        fig.set_layout_engine(None)
        self.axes, self.curves, self.markers, self.titles = {}, {}, {}, {}
        for col, name in enumerate(METHODS):
            ax = self.axes[name] = fig.add_axes((0.075 + col * 0.32, 0.24, 0.26, 0.62))
            colour = COLOURS[name]
            (self.curves[name],) = ax.plot(
                [], [], color=colour, lw=1.2, alpha=0.7, label=tr("every start")
            )
            (self.markers[name],) = ax.plot(
                [],
                [],
                ls="none",
                marker="o",
                ms=6,
                color=colour,
                markeredgecolor="black",
                markeredgewidth=0.6,
                label=tr("listed starts"),
            )
            ax.set_xscale("symlog", linthresh=1.0, linscale=0.5)
            ax.set_xticks(XTICKS, [f"{t:g}" for t in XTICKS])
            ax.minorticks_off()
            ax.yaxis.set_major_locator(MaxNLocator(nbins=4))  # few labels: fast to redraw
            ax.set_xlabel(tr("start s (symlog)"))
            ax.grid(alpha=0.3)
            self.titles[name] = ax.set_title("", fontsize=FONT, y=1.0)
        self.axes["RoPE"].set_ylabel(tr("score of query at s + offset, key at s"))
        fig.text(
            0.01, 0.025, tr("spread = max - min over the listed starts"), fontsize=FONT, color="0.3"
        )
        fig.legend(
            handles=[self.curves["RoPE"], self.markers["RoPE"]],
            loc="lower center",
            ncol=2,
            fontsize=FONT,
            frameon=False,
        )
        self.suptitle = fig.suptitle("", fontsize=FONT, y=0.985)
        self.animate(
            [
                *self.curves.values(),
                *self.markers.values(),
                *self.titles.values(),
                self.suptitle,
            ],
            moving=[ax.yaxis for ax in self.axes.values()],  # the scores set the y-limits
        )

    def update(self, offset: int, base: float, d: int, starts: str) -> None:
        listed = parse_starts(starts)
        top = max(max(listed), 10)
        dense = np.unique(np.concatenate([[0], np.geomspace(1, top * 1.5, DENSE).round(), listed]))
        dense = [int(s) for s in dense]
        right = 10.0 ** math.ceil(math.log10(top * 1.6))  # a new background per decade only
        for ax in self.axes.values():
            ax.set_xlim(-0.5, right)
        self.suptitle.set_text(
            tr(
                "offset {offset}, base {base:.4g}, d {d}, ALiBi slope {slope:g}",
                offset=offset,
                base=base,
                d=d,
                slope=self.slope,
            )
        )
        values = {}
        scan = full = q = k = None
        with self.panel(*self.curves.values(), *self.markers.values(), *self.titles.values()):
            q0, k0 = self.demo_vectors()
            q, k = resized(q0, d, "demo_vectors()[0]"), resized(k0, d, "demo_vectors()[1]")
        rope_add = [self.curves[n] for n in METHODS[:2]] + [self.markers[n] for n in METHODS[:2]]
        rope_add += [self.titles[n] for n in METHODS[:2]]
        with self.panel(*rope_add):
            self.need(q, k)
            scan = list(self.offset_scan(q, k, offset, listed, base))
            full = list(self.offset_scan(q, k, offset, dense, base))
            values["RoPE"] = ([r for _, r, _ in scan], [r for _, r, _ in full])
            values["additive"] = ([a for _, _, a in scan], [a for _, _, a in full])
        self.scan, self.dense = scan, full
        with self.panel(self.curves["ALiBi"], self.markers["ALiBi"], self.titles["ALiBi"]):
            self.need(q, k)
            alibi = [self.alibi_score(q, k, s + offset, s, self.slope) for s in listed]
            alibi_full = [self.alibi_score(q, k, s + offset, s, self.slope) for s in dense]
            values["ALiBi"] = (alibi, alibi_full)
        for name, (at_starts, along) in values.items():
            self.curves[name].set_data(dense, along)
            self.markers[name].set_data(listed, at_starts)
            # flat curves stay flat on screen: at least +-1 around the middle
            self.axes[name].set_ylim(*y_limits(along))
            with self.panel(self.titles[name]):
                value = self.spreads[name] = float(self.spread(at_starts))
                shown = tr("0 (exact)") if value == 0 else f"{value:.3g}"
                self.titles[name].set_text(tr("{name}: spread {shown}", name=name, shown=shown))


def offsets_explorer(
    *,
    offset_scan: Callable,
    spread: Callable,
    alibi_score: Callable,
    demo_vectors: Callable,
    offset: int = 2,
    base: float = 10000.0,
    d: int = 64,
    starts: str = "3, 10, 100, 4000",
    slope: float = 0.5,
) -> OffsetsExplorer | None:
    """The offsets explorer built on the learner's functions, or None while nbgrader runs."""
    if not interactive():
        return None
    return OffsetsExplorer(
        offset_scan, spread, alibi_score, demo_vectors, offset, base, d, starts, slope
    )

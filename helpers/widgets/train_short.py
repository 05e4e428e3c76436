"""Explorer of notebook 13_train_short: the trained models' excess loss past their length.

``train_short_explorer(results=..., breaking_point=...)`` draws the curves the notebook's
experiment measured (``helpers.train.run_experiment``): each model's excess over the best loss
at every position up to the evaluation length, smoothed over 8 positions, with the learner's
``breaking_point`` marked on each. Sliders and boxes: the evaluation length (32 to 256), the
schemes shown, T5's ``max_distance`` (32 or 128). Nothing trains in a move: the curves are
the trained models' own, computed once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from helpers.i18n import tr
from helpers.widgets.base import Explorer, checkbox, int_slider, interactive, learner, subtitle

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["TrainShortExplorer", "train_short_explorer"]

SCHEMES = ("nope", "sinusoidal", "learned", "rope", "alibi", "t5")
COLORS = dict(
    zip(SCHEMES, ("tab:gray", "tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"))
)
TRAIN_LEN, LONGEST, SMOOTH = 32, 256, 8


class TrainShortExplorer(Explorer):
    """Excess over the best loss per position, one line per scheme shown."""

    def __init__(self, results: dict, breaking_point: Callable, length: int = LONGEST):
        best = np.asarray(results["best"], dtype=np.float64)
        kernel = np.ones(SMOOTH) / SMOOTH
        self.excess = {
            name: np.asarray(curve, dtype=np.float64) - best[: len(curve)]
            for name, curve in results["curves"].items()
        }
        self.smooth = {
            name: np.convolve(ex, kernel, mode="same") for name, ex in self.excess.items()
        }
        self.breaking_point = learner("breaking_point", breaking_point)
        controls = {
            "length": int_slider(tr("evaluation length"), length, TRAIN_LEN, LONGEST, TRAIN_LEN),
            "t5_md128": checkbox(tr("T5 max_distance 128"), False),
        }
        for name in SCHEMES:
            controls[name] = checkbox(name, True)
        super().__init__(controls, figsize=(9, 4.2), title=tr("Train short, test long"))

    def draw(self, fig: Figure) -> None:
        fig.set_layout_engine(None)
        self.ax = fig.add_axes((0.08, 0.14, 0.7, 0.74))
        self.lines, self.marks = {}, {}
        for name in SCHEMES:
            (self.lines[name],) = self.ax.plot([], [], color=COLORS[name], lw=1.8, label=name)
            (self.marks[name],) = self.ax.plot([], [], "v", color=COLORS[name], ms=8)
        self.ax.axvline(TRAIN_LEN, color="grey", ls=":", lw=1)
        self.ax.axhline(0.1, color="grey", ls="--", lw=0.8)
        self.ax.set_xlim(0, LONGEST)
        top = max(float(np.nanmax(s)) for s in self.smooth.values())
        self.ax.set_ylim(-0.1, max(0.5, 1.1 * top))
        self.ax.set_xlabel(tr("position"))
        self.ax.set_ylabel(tr("excess over the best loss (nats)"))
        self.ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=10, frameon=False)
        self.text = subtitle(self.ax)
        self.animate([*self.lines.values(), *self.marks.values(), self.text])

    def update(self, length: int, t5_md128: bool, **shown: bool) -> None:
        length = int(length)
        parts = []
        for name in SCHEMES:
            key = "t5_md128" if name == "t5" and t5_md128 else name
            line, mark = self.lines[name], self.marks[name]
            if not shown.get(name, True) or key not in self.smooth:
                line.set_data([], [])
                mark.set_data([], [])
                continue
            line.set_data(np.arange(length), self.smooth[key][:length])
            with self.panel(mark):
                p = self.breaking_point(self.excess[key][:length], TRAIN_LEN)
                mark.set_data([] if p is None else [p], [] if p is None else [0.1])
            parts.append(f"{key} {float(self.excess[key][:length].mean()):+.2f}")
        self.text.set_text(tr("mean excess to {length}: ", length=length) + ", ".join(parts))


def train_short_explorer(
    *, results: dict, breaking_point: Callable, length: int = LONGEST
) -> TrainShortExplorer | None:
    """The explorer of 13_train_short on the experiment's curves; ``None`` under nbgrader."""
    if not interactive():
        return None
    return TrainShortExplorer(results, breaking_point, length=length)

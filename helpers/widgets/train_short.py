"""Explorer of notebook 13_train_short: the trained models' excess loss past their length.

``train_short_explorer(results=..., breaking_point=...)`` draws the curves the notebook's
experiment measured (``helpers.train.run_experiment``): each model's excess at every position
up to the evaluation length, over the optimum's loss on the same sequences (the exact best
predictor, ``results["optimum"]``; over the best expected loss where there is none),
smoothed over 8 positions (``helpers.train.smooth``), with the learner's ``breaking_point``
(window ``helpers.train.BREAK_WINDOW``, 8: the optimum itself never trips it) marked on each,
past the training length only: at length 32 nothing is past it, and ``breaking_point`` is
not called. Sliders and boxes: the evaluation length (32 to 256), the schemes shown, T5's
``max_distance`` (32 or 128) and, given the RoPE model's YaRN reads (``yarn``, from
``helpers.train.longer_rope``), YaRN's ``beta_fast`` (0.25 to 64, powers of 2; beta_slow 1):
the line ``rope+YaRN`` is the RoPE model read with YaRN (transformers' ramp) at the smallest of
2x, 4x, 8x that covers the length. Each model keeps its look of the notebook's figures
(``helpers.plots.train_short_style``) and is named at the end of its line. Nothing trains in
a move: the curves are the trained models' own, computed once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from helpers.i18n import tr
from helpers.widgets.base import (
    FONT,
    Explorer,
    checkbox,
    int_slider,
    interactive,
    learner,
    subtitle,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["TrainShortExplorer", "train_short_explorer"]

SCHEMES = ("nope", "sinusoidal", "learned", "rope", "alibi", "t5")
TRAIN_LEN, LONGEST, SMOOTH = 32, 256, 8
YARN = "rope+YaRN"
YARN_FACTORS = (2, 4, 8)


def yarn_factor(length: int) -> int:
    """The smallest YaRN factor whose reads cover ``length`` positions."""
    return next(k for k in YARN_FACTORS if k * TRAIN_LEN >= length)


def beta_slider(value: float):
    """beta_fast on a log scale of base 2, 2**-2 .. 2**6, in steps of one power of 2."""
    import ipywidgets as widgets

    from helpers.widgets.base import slider_widths

    width, label = slider_widths("beta_fast")

    return widgets.FloatLogSlider(
        value=value,
        base=2,
        min=-2,
        max=6,
        step=1,
        readout=False,
        description="beta_fast",
        continuous_update=True,
        layout=widgets.Layout(width=width, flex="0 0 auto"),
        style={"description_width": label},
    )


class TrainShortExplorer(Explorer):
    """Excess over the best loss per position, one line per scheme shown."""

    def __init__(
        self,
        results: dict,
        breaking_point: Callable,
        length: int = LONGEST,
        yarn: dict | None = None,
        beta_fast: float = 32.0,
    ):
        from helpers.smoothing import smooth

        best = np.asarray(results["best"], dtype=np.float64)
        floor = np.asarray(results.get("optimum", best), dtype=np.float64)
        # the excess over the optimum's loss on the same sequences: what a break is read on
        self.excess = {
            name: np.asarray(curve, dtype=np.float64) - floor[: len(curve)]
            for name, curve in results["curves"].items()
        }
        self.smooth = {name: smooth(ex, SMOOTH) for name, ex in self.excess.items()}
        self.breaking_point = learner("breaking_point", breaking_point)
        # YaRN reads by (beta_fast, factor): the excess at each position, raw and smoothed
        self.yarn = {
            key: np.asarray(read["curve"], dtype=np.float64)
            - np.asarray(read.get("optimum", best), dtype=np.float64)[: len(read["curve"])]
            for key, read in (yarn or {}).items()
        }
        self.yarn_smooth = {key: smooth(ex, SMOOTH) for key, ex in self.yarn.items()}
        self.betas = sorted({b for b, _ in self.yarn})
        controls = {
            "length": int_slider(tr("evaluation length"), length, TRAIN_LEN, LONGEST, TRAIN_LEN),
            "t5_md128": checkbox(tr("T5 max_distance 128"), False),
        }
        if self.betas:
            controls["beta_fast"] = beta_slider(beta_fast)
        for name in SCHEMES:
            controls[name] = checkbox(name, True)
        if self.betas:
            controls["yarn"] = checkbox(YARN, True)
        super().__init__(controls, figsize=(12, 4.6), title=tr("Train short, test long"))

    def draw(self, fig: Figure) -> None:
        from helpers.plots import train_short_style
        from helpers.smoothing import BREAK_WINDOW

        self.window = BREAK_WINDOW
        fig.set_layout_engine(None)
        self.ax = fig.add_axes((0.07, 0.13, 0.63, 0.71))
        self.lines, self.marks, self.labels = {}, {}, {}
        names = [*SCHEMES, "t5_md128"] + ([YARN] if self.betas else [])
        for name in names:
            look = train_short_style(name)
            (self.lines[name],) = self.ax.plot([], [], lw=1.8, label=name, **look)
            (self.marks[name],) = self.ax.plot(
                [], [], "v", color=look["color"], ms=9, markeredgecolor="black"
            )
            self.labels[name] = self.ax.annotate(
                "",
                (0, 0),
                xytext=(4, 0),
                textcoords="offset points",
                color=look["color"],
                fontsize=FONT,
                va="center",
                annotation_clip=False,
            )
        self.ax.axvline(TRAIN_LEN, color="grey", ls=":", lw=1)
        self.ax.axhline(0.1, color="grey", ls="--", lw=0.8)
        self.ax.set_xlim(0, LONGEST)
        top = max(float(np.nanmax(s)) for s in [*self.smooth.values(), *self.yarn_smooth.values()])
        self.ax.set_ylim(-0.1, max(0.5, 1.1 * top))
        self.ax.set_xlabel(tr("position"))
        self.ax.set_ylabel(tr("excess over the optimum (nats)"))
        self.text = subtitle(self.ax)
        self.text.set_wrap(True)  # two lines when it is wider than the figure
        # the YaRN read's summary, right of the axes (the subtitle has no room for it)
        self.yarn_text = fig.text(0.8, 0.13, "", fontsize=FONT, va="bottom", ha="left")
        self.animate(
            [
                *self.lines.values(),
                *self.marks.values(),
                *self.labels.values(),
                self.text,
                self.yarn_text,
            ],
            moving=[self.ax.xaxis],
        )

    def nearest_beta(self, value: float) -> float:
        """The precomputed beta_fast nearest to ``value`` on a log scale."""
        return min(self.betas, key=lambda b: abs(np.log2(b) - np.log2(float(value))))

    def _show(self, name: str, excess: np.ndarray, smoothed: np.ndarray, length: int) -> None:
        """One line to ``length``, its name at its end, and its break past the training
        length (``breaking_point`` is called only where a position past it is shown)."""
        line, mark, label = self.lines[name], self.marks[name], self.labels[name]
        line.set_data(np.arange(length), smoothed[:length])
        label.xy = (length - 1, float(smoothed[length - 1]))
        label.set_text(name)
        mark.set_data([], [])
        if length > TRAIN_LEN:
            with self.panel(mark):
                p = self.breaking_point(excess[:length], TRAIN_LEN, window=self.window)
                mark.set_data([] if p is None else [p], [] if p is None else [0.1])

    def _hide(self, name: str) -> None:
        self.lines[name].set_data([], [])
        self.marks[name].set_data([], [])
        self.labels[name].set_text("")

    def update(
        self, length: int, t5_md128: bool, beta_fast: float = 32.0, yarn: bool = False, **shown
    ) -> None:
        length = int(length)
        self.ax.set_xlim(0, max(length, TRAIN_LEN))
        parts = []
        for name in [*SCHEMES, "t5_md128"]:
            if name == "t5_md128":
                continue
            key = "t5_md128" if name == "t5" and t5_md128 else name
            other = "t5" if key == "t5_md128" else "t5_md128"
            if name == "t5":
                self._hide(other)
            if not shown.get(name, True) or key not in self.smooth:
                self._hide(key)
                continue
            self._show(key, self.excess[key], self.smooth[key], length)
            parts.append(f"{key} {float(self.excess[key][:length].mean()):+.2f}")
        if self.betas:
            self.yarn_text.set_text(self._yarn(length, beta_fast, yarn))
        self.text.set_text(tr("mean excess to {length}: ", length=length) + ", ".join(parts))
        self._spread_labels()

    def _spread_labels(self) -> None:
        """The names at the lines' ends pushed apart upwards where they would overlap (at
        the training length every model's excess is near 0)."""
        lo, hi = self.ax.get_ylim()
        gap = 0.05 * (hi - lo)
        labels = sorted(
            (label for label in self.labels.values() if label.get_text()),
            key=lambda label: label.xy[1],
        )
        ys = [label.xy[1] for label in labels]
        for k in range(1, len(ys)):  # upwards, each at least a gap above the one below
            ys[k] = max(ys[k], ys[k - 1] + gap)
        top = hi - gap / 2  # then down from inside the axes (the summary sits above them)
        for k in reversed(range(len(ys))):
            top = ys[k] = min(ys[k], top)
            top -= gap
        for label, y in zip(labels, ys, strict=True):
            label.xy = (label.xy[0], y)

    def _yarn(self, length: int, beta_fast: float, shown: bool) -> str:
        """Draw the RoPE model's YaRN read for this length and beta_fast; its summary."""
        k, b = yarn_factor(length), self.nearest_beta(beta_fast)
        if not shown or (b, k) not in self.yarn:
            self._hide(YARN)
            return ""
        ex = self.yarn[(b, k)][:length]
        self._show(YARN, ex, self.yarn_smooth[(b, k)], length)
        said = tr("{name} at {k}x,\nbeta_fast {beta}:", name=YARN, k=k, beta=f"{b:g}")
        return said + f"\n{float(ex.mean()):+.2f}"


def train_short_explorer(
    *,
    results: dict,
    breaking_point: Callable,
    length: int = LONGEST,
    yarn: dict | None = None,
    beta_fast: float = 32.0,
) -> TrainShortExplorer | None:
    """The explorer of 13_train_short on the experiment's curves (and, given ``yarn``, the
    RoPE model's YaRN reads by (beta_fast, factor)); ``None`` under nbgrader."""
    if not interactive():
        return None
    return TrainShortExplorer(
        results, breaking_point, length=length, yarn=yarn, beta_fast=beta_fast
    )

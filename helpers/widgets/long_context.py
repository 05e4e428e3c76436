"""Explorer of notebook 10_long_context: each method's rates and the angles each pair meets.

``long_context_explorer(thetas=..., pi_thetas=..., ntk_thetas=..., dynamic_ntk_thetas=...,
yarn_thetas=..., llama3_thetas=..., unseen_angle_pairs=...)`` draws, with the learner's own
functions, in one figure:

1. the rate of every pair for plain RoPE and the five methods (log scale);
2. the largest angle each pair meets at ``factor`` x the training length divided by the
   angle of the first position it never saw, ``(factor L - 1) theta'_i / (L theta_i)``:
   above 1 a pair has left its training arc. The slow pairs (``(L - 1) theta_i < 2 pi``)
   are shaded, and the text lists each method's count of ``unseen_angle_pairs``.

Sliders: ``d``, ``base``, ``factor`` and the training length ``train_len``. A method whose
function fails (a stub) is left out and named in the message; the others are drawn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from helpers.i18n import tr
from helpers.palette import series_style
from helpers.widgets.base import FONT, Explorer, int_slider, interactive, log_slider

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["METHODS", "LongContextExplorer", "long_context_explorer"]

# (label, style) of each method, in the notebook's order: the course's palette, each with a
# line style and a marker of its own (helpers.plots.series_style)
METHODS = tuple(
    (label, series_style(k))
    for k, label in enumerate(
        ("plain RoPE", "position interpolation", "NTK-aware", "dynamic NTK", "YaRN", "Llama 3")
    )
)
RATE_LIMITS = (1e-9, 3.0)


def shown(label: str) -> str:
    """A method's name as the legend shows it, in the notebook's language."""
    words = {
        "plain RoPE": tr("plain RoPE"),
        "position interpolation": tr("position interpolation"),
        "dynamic NTK": tr("dynamic NTK"),
    }
    return words.get(label, label)  # NTK-aware, YaRN, Llama 3: names


RATIO_LIMITS = (1e-3, 100.0)


class LongContextExplorer(Explorer):
    """Rates per pair and the largest angle per pair against the training edge, per method.

    Artists the tests read: ``rate_lines`` and ``ratio_lines`` (one per method of
    ``METHODS``), ``slow_band`` (a rectangle over the slow pairs) and ``counts`` (the text
    of unseen pairs). ``rates`` holds the last rates drawn, by method label.
    """

    def __init__(
        self,
        thetas: Callable,
        pi_thetas: Callable,
        ntk_thetas: Callable,
        dynamic_ntk_thetas: Callable,
        yarn_thetas: Callable,
        llama3_thetas: Callable,
        unseen_angle_pairs: Callable,
        d: int = 128,
        base: float = 10000.0,
        factor: int = 8,
        train_len: int = 4096,
    ):
        self.thetas = thetas
        self.unseen_angle_pairs = unseen_angle_pairs
        self._methods = {
            "plain RoPE": ("thetas", lambda d, b, f, L: thetas(d, b)),
            "position interpolation": ("pi_thetas", lambda d, b, f, L: pi_thetas(d, b, f)),
            "NTK-aware": ("ntk_thetas", lambda d, b, f, L: ntk_thetas(d, b, f)),
            "dynamic NTK": (
                "dynamic_ntk_thetas",
                lambda d, b, f, L: dynamic_ntk_thetas(d, b, f, f * L, L),
            ),
            "YaRN": ("yarn_thetas", lambda d, b, f, L: yarn_thetas(d, b, f, L)[0]),
            "Llama 3": ("llama3_thetas", lambda d, b, f, L: llama3_thetas(d, b, f, L)),
        }
        self.rates: dict[str, np.ndarray] = {}
        self.unseen: dict[str, int] = {}
        self._layout = None
        controls = {
            "d": int_slider("d", d, 4, 256, step=2),
            "base": log_slider("base", base, 3, 6),
            "factor": int_slider("factor", factor, 1, 32),
            "train_len": int_slider("train_len", train_len, 512, 16384, step=512),
        }
        super().__init__(
            controls, figsize=(12.5, 4.4), title=tr("Stretching RoPE: rates and angles per pair")
        )

    def draw(self, fig: Figure) -> None:
        from matplotlib.patches import Rectangle
        from matplotlib.ticker import MaxNLocator

        fig.set_layout_engine("none")  # fixed axes: no layout pass per frame
        ax_rate = fig.add_axes((0.075, 0.13, 0.30, 0.74))
        ax_ratio = fig.add_axes((0.455, 0.13, 0.28, 0.74))
        self.ax_rate, self.ax_ratio = ax_rate, ax_ratio
        self.slow_band = Rectangle(
            (0, RATIO_LIMITS[0]), 0, RATIO_LIMITS[1], color="0.88", zorder=0, lw=0
        )
        ax_ratio.add_patch(self.slow_band)
        self.rate_lines, self.ratio_lines = [], []
        for label, style in METHODS:
            width = 2.4 if label == "plain RoPE" else 1.4
            style = style | {"lw": width, "ms": 5, "markevery": 0.1}
            self.rate_lines.append(ax_rate.plot([], [], label=shown(label), **style)[0])
            self.ratio_lines.append(ax_ratio.plot([], [], **style)[0])
        ax_ratio.axhline(1.0, color="k", ls=":", lw=1)
        for ax in (ax_rate, ax_ratio):
            ax.set_yscale("log")
            ax.set_xlabel(tr("pair i"))
            ax.xaxis.set_major_locator(MaxNLocator(6, integer=True, steps=[1, 2, 5, 10]))
            ax.grid(True, which="major", alpha=0.3)
        ax_rate.set_ylim(*RATE_LIMITS)
        ax_ratio.set_ylim(*RATIO_LIMITS)
        ax_rate.set_ylabel(tr("rate θ'ᵢ (radians per position)"))
        ax_ratio.set_ylabel(tr("largest angle / first unseen angle"))
        ax_rate.set_title(tr("the rates of each method"), fontsize=FONT, y=1.0)
        ax_ratio.set_title(tr("at factor × train_len (grey: slow pairs)"), fontsize=FONT, y=1.0)
        fig.legend(
            handles=self.rate_lines,
            loc="upper left",
            bbox_to_anchor=(0.745, 0.87),
            fontsize=FONT,
            handlelength=1.6,
        )
        self.counts = fig.text(0.75, 0.13, "", fontsize=FONT, va="bottom")
        # the counts change less often than the lines: a cached layer, drawn when they change;
        # d sets the x-limits of both axes: those axes move (a layer, not the background)
        self.animate(
            [self.slow_band, *self.rate_lines, *self.ratio_lines],
            slow=[self.counts],
            moving=[ax_rate.xaxis, ax_ratio.xaxis],
        )

    def slow_key(self) -> str:
        return self.counts.get_text()

    def update(self, d: int, base: float, factor: int, train_len: int) -> None:
        L, f = int(train_len), int(factor)
        try:
            plain = np.asarray(self.thetas(d, base), dtype=np.float64)
        except Exception as exc:  # a learner's recap may be a stub
            raise ValueError(
                tr(
                    "not drawn: thetas ({type}); every method starts from its rates",
                    type=type(exc).__name__,
                )
            ) from exc
        i = np.arange(plain.shape[0])
        slow = np.flatnonzero((L - 1) * plain < 2 * np.pi)
        first = slow[0] if slow.size else plain.shape[0]
        self.slow_band.set_bounds(first - 0.5, RATIO_LIMITS[0], plain.shape[0] - first, 1e6)
        failed, lines = [], []
        self.rates, self.unseen = {}, {}
        for (label, _), rate_line, ratio_line in zip(METHODS, self.rate_lines, self.ratio_lines):
            name, rates_of = self._methods[label]
            try:
                rates = np.asarray(rates_of(d, base, f, L), dtype=np.float64)
                if rates.shape != plain.shape:
                    raise ValueError(f"returned shape {rates.shape}, expected {plain.shape}")
                unseen = int(self.unseen_angle_pairs(plain, rates, L, f * L))
            except Exception as exc:  # noqa: BLE001 - a learner's function may be a stub
                failed.append(f"{name} ({type(exc).__name__})")
                rate_line.set_data([], [])
                ratio_line.set_data([], [])
                continue
            self.rates[label], self.unseen[label] = rates, unseen
            rate_line.set_data(i, rates)
            ratio_line.set_data(i, np.clip((f * L - 1) * rates / (L * plain), *RATIO_LIMITS))
            lines.append(f"{shown(label)}: {unseen}")
        self.counts.set_text(
            tr("unseen_angle_pairs\n(of {n} slow pairs):\n", n=slow.size) + "\n".join(lines)
        )
        if d != self._layout:
            for ax in (self.ax_rate, self.ax_ratio):
                ax.set_xlim(-0.5, max(d // 2 - 0.5, 0.5))
            self._layout = d
        if failed:
            raise ValueError("not drawn: " + ", ".join(failed))


def long_context_explorer(
    thetas: Callable,
    pi_thetas: Callable,
    ntk_thetas: Callable,
    dynamic_ntk_thetas: Callable,
    yarn_thetas: Callable,
    llama3_thetas: Callable,
    unseen_angle_pairs: Callable,
    **defaults,
) -> LongContextExplorer | None:
    """Sliders d, base, factor and train_len over the learner's rate functions.

    ``defaults`` sets the starting values (``d``, ``base``, ``factor``, ``train_len``).
    Returns ``None`` while nbgrader runs the notebook.
    """
    if not interactive():
        return None
    return LongContextExplorer(
        thetas=thetas,
        pi_thetas=pi_thetas,
        ntk_thetas=ntk_thetas,
        dynamic_ntk_thetas=dynamic_ntk_thetas,
        yarn_thetas=yarn_thetas,
        llama3_thetas=llama3_thetas,
        unseen_angle_pairs=unseen_angle_pairs,
        **defaults,
    )

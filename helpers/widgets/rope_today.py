"""Explorer of notebook 12_rope_today: a model's layer plan and a sink cache that re-rotates.

``rope_today_explorer(layer_rope_bases=..., partial_thetas=..., proportional_thetas=...,
sink_cache_update=..., apply_rope=..., qwen35_rope_angles=..., sink_softmax=...)`` draws, with
the learner's own functions (the last two are optional):

1. the layer plan: one cell per layer, coloured by the log of its RoPE base (grey: no RoPE),
   from ``layer_rope_bases(n_layers, every, 1e4, every_base)`` with ``every_base`` 1e6
   (Gemma 3's global layers) or 0.0 (Llama 4's layers without RoPE);
2. the rates of one head (d = 256, base 1e6) rotating ``pairs`` of its 128 pairs (the
   fraction pairs / 128): partial rotary and proportional RoPE side by side (log scale;
   pairs at rate 0 are not drawn), and on the rotated pairs the axis Qwen3.5's interleave gives
   each of them (``qwen35_rope_angles`` with the sections [rot/2 - s_h - s_w, s_h, s_w],
   s_h = (rot/2 + 1) // 3, s_w = rot/2 // 3, read from ids 1 on one axis at a time);
3. a sink cache of ``window`` slots with ``num_sink`` sinks after ``steps`` new tokens, one at
   a time: which token sits in each slot, and how far each slot is from its raw key rotated
   afresh at that slot (log scale, float64 rounding near 1e-16), and what gpt-oss's learned
   sink of logit 0 takes from a row of ``window`` keys of score 0 (``sink_softmax``).

Sliders: ``n_layers``, ``every``, a "no RoPE" checkbox, ``pairs``, ``window``,
``num_sink`` and ``steps``. A panel whose function fails (a stub) is left out and named.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from helpers.i18n import tr
from helpers.palette import SERIES_COLOURS
from helpers.widgets.base import FONT, Explorer, checkbox, int_slider, interactive, learner

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["RopeTodayExplorer", "rope_today_explorer"]

HEAD_D, HEAD_BASE = 256, 1e6
MAX_LAYERS, MAX_WINDOW, MAX_STEPS = 80, 32, 200
KEY_D = 8
ERROR_LIMITS = (1e-18, 1e-12)


class RopeTodayExplorer(Explorer):
    """The layer plan, the rates of a partly rotated head, and a streaming sink cache.

    Artists the tests read: ``plan_image`` (1 x MAX_LAYERS cells), ``partial_line`` and
    ``proportional_line`` (the rates), ``axis_lines`` (Qwen3.5's temporal, height and width
    pairs), ``slot_image`` (1 x MAX_WINDOW token ids), ``error_line`` (per slot) and the notes.
    ``plan``, ``kept_tokens``, ``errors_per_slot``, ``qwen35_axes`` and ``sink_share`` hold the
    last values drawn.
    """

    def __init__(
        self,
        layer_rope_bases: Callable,
        partial_thetas: Callable,
        proportional_thetas: Callable,
        sink_cache_update: Callable,
        apply_rope: Callable,
        qwen35_rope_angles: Callable | None = None,
        sink_softmax: Callable | None = None,
        n_layers: int = 62,
        every: int = 6,
        no_rope: bool = False,
        pairs: int = 32,
        window: int = 16,
        num_sink: int = 4,
        steps: int = 20,
    ):
        self.layer_rope_bases = learner("layer_rope_bases", layer_rope_bases)
        self.partial_thetas = learner("partial_thetas", partial_thetas)
        self.proportional_thetas = learner("proportional_thetas", proportional_thetas)
        self.sink_cache_update = learner("sink_cache_update", sink_cache_update)
        self.apply_rope = learner("apply_rope", apply_rope)
        self.qwen35_rope_angles = (
            None
            if qwen35_rope_angles is None
            else learner("qwen35_rope_angles", qwen35_rope_angles)
        )
        self.sink_softmax = None if sink_softmax is None else learner("sink_softmax", sink_softmax)
        self.qwen35_axes: np.ndarray | None = None
        self.sink_share: float | None = None
        self.raw = np.random.default_rng(0).normal(size=(MAX_WINDOW + MAX_STEPS, KEY_D))
        self.plan: np.ndarray | None = None
        self.kept_tokens: list[int] = []
        self.errors_per_slot: np.ndarray | None = None
        self._history: list[tuple[np.ndarray, list[int]]] = []
        self._history_key: tuple[int, int] | None = None
        controls = {
            "n_layers": int_slider("n_layers", n_layers, 1, MAX_LAYERS),
            "every": int_slider("every", every, 1, 8),
            "no_rope": checkbox(tr("no RoPE on every n-th layer"), no_rope),
            "pairs": int_slider("pairs", pairs, 1, HEAD_D // 2),
            "window": int_slider("window", window, 4, MAX_WINDOW),
            "num_sink": int_slider("num_sink", num_sink, 0, 4),
            "steps": int_slider("steps", steps, 0, MAX_STEPS),
        }
        super().__init__(
            controls,
            figsize=(12.5, 6.4),
            title=tr("RoPE today: a layer plan, a partly rotated head, a sink cache"),
        )

    def draw(self, fig: Figure) -> None:
        fig.set_layout_engine("none")
        # two columns: the layer plan over the rates (left), the sink cache over its errors
        # (right); each column's caption sits under its top panel, above its lower one
        ax_plan = fig.add_axes((0.05, 0.8, 0.42, 0.1))
        ax_rate = fig.add_axes((0.07, 0.09, 0.4, 0.42))
        ax_slot = fig.add_axes((0.56, 0.8, 0.4, 0.1))
        ax_err = fig.add_axes((0.58, 0.09, 0.38, 0.42))
        self.ax_plan, self.ax_rate, self.ax_slot, self.ax_err = ax_plan, ax_rate, ax_slot, ax_err
        blank = np.full((1, MAX_LAYERS), np.nan)
        self.plan_image = ax_plan.imshow(
            blank, aspect="auto", cmap="viridis", vmin=4.0, vmax=6.0, interpolation="nearest"
        )
        ax_plan.set_facecolor("0.8")
        ax_plan.set_xlim(-0.5, MAX_LAYERS - 0.5)  # fixed: layers past n_layers stay empty
        ax_plan.set_yticks([])
        ax_plan.set_xlabel(tr("layer"), labelpad=1)
        ax_plan.set_title(
            tr("layer plan: log10(base), yellow 1e6, purple 1e4, grey none"), fontsize=FONT
        )
        pairs = np.arange(HEAD_D // 2)
        # markers as well as lines: one rotated pair is one point, not an empty panel
        (self.partial_line,) = ax_rate.plot(
            pairs,
            np.full(pairs.size, np.nan),
            "o-",
            lw=1.8,
            ms=3,
            clip_on=False,
            color=SERIES_COLOURS[0],
        )
        (self.proportional_line,) = ax_rate.plot(
            pairs,
            np.full(pairs.size, np.nan),
            "s--",
            lw=1.8,
            ms=3,
            clip_on=False,
            color=SERIES_COLOURS[1],
        )
        # Qwen3.5's interleave on the rotated pairs: one marker series per axis
        self.axis_lines = [
            ax_rate.plot(
                pairs, np.full(pairs.size, np.nan), marker, ms=6, mfc="none", mew=1.2, color=colour
            )[0]
            for marker, colour in zip(("v", "^", "D"), SERIES_COLOURS[2:5], strict=True)
        ]
        for line, name in zip(
            self.axis_lines, (tr("Qwen3.5: temporal"), tr("height"), tr("width")), strict=True
        ):
            line.set_label(name)
        self.partial_line.set_label(tr("partial rotary (2i/rot)"))
        self.proportional_line.set_label(tr("proportional (2i/d)"))
        ax_rate.set_yscale("log")
        ax_rate.set_ylim(1e-7, 2.0)
        ax_rate.set_xlim(-3, HEAD_D // 2 - 0.5)  # pair 0 clear of the left spine
        ax_rate.set_xlabel(tr("pair i (d = 256, base 1e6)"))
        ax_rate.set_ylabel(tr("rate θᵢ (0: not rotated)"))
        ax_rate.grid(True, alpha=0.3)
        ax_rate.legend(loc="upper right", fontsize=FONT)  # the rates fall from the upper left
        self.rate_note = ax_rate.text(  # over the panel: it is wider than the panel
            0.0, 1.03, "", transform=ax_rate.transAxes, ha="left", va="bottom", fontsize=FONT
        )
        self.slot_image = ax_slot.imshow(
            np.full((1, MAX_WINDOW), np.nan),
            aspect="auto",
            cmap="plasma",
            vmin=0,
            vmax=MAX_WINDOW + MAX_STEPS,
            interpolation="nearest",
        )
        ax_slot.set_facecolor("0.8")
        ax_slot.set_xlim(-0.5, MAX_WINDOW - 0.5)
        ax_slot.set_yticks([])
        ax_slot.set_xlabel(tr("slot"), labelpad=1)
        ax_slot.set_title(tr("sink cache: the token in each slot (dark: old)"), fontsize=FONT)
        slots = np.arange(MAX_WINDOW)
        (self.error_line,) = ax_err.plot(slots, np.full(MAX_WINDOW, np.nan), "o-", ms=3, lw=1)
        ax_err.set_yscale("log")
        ax_err.set_ylim(*ERROR_LIMITS)
        ax_err.set_xlim(-0.5, MAX_WINDOW - 0.5)
        ax_err.set_xlabel(tr("slot"))
        ax_err.set_ylabel(tr("|cache - apply_rope(raw key, slot)|"))
        ax_err.grid(True, alpha=0.3)
        self.plan_note = fig.text(0.05, 0.7, "", fontsize=FONT, va="top")
        # wrapped at the figure's edge: its lines are wider than the column
        self.cache_note = fig.text(0.56, 0.7, "", fontsize=FONT, va="top", wrap=True)
        self.animate(
            [
                self.plan_image,
                self.partial_line,
                self.proportional_line,
                self.rate_note,
                *self.axis_lines,
                self.slot_image,
                self.error_line,
            ],
            slow=[self.plan_note, self.cache_note],
        )

    def slow_key(self) -> tuple[str, str]:
        return self.plan_note.get_text(), self.cache_note.get_text()

    def stream(self, window: int, num_sink: int, steps: int):
        """The kept token ids after ``steps`` one-token updates, and each slot's error.

        The caches of one (window, num_sink) are kept step by step: a move of ``steps``
        computes only the steps not seen yet.
        """
        raw, slots = self.raw, np.arange(window)
        if self._history_key != (window, num_sink):
            first = np.asarray(self.apply_rope(raw[:window], slots), dtype=np.float64)
            self._history, self._history_key = [(first, list(range(window)))], (window, num_sink)
        while len(self._history) <= steps:
            cache, kept = self._history[-1]
            t = window + len(self._history) - 1
            cache = np.asarray(
                self.sink_cache_update(cache, raw[t : t + 1], num_sink), dtype=np.float64
            )
            if cache.shape != (window, KEY_D):
                raise ValueError(f"sink_cache_update returned shape {cache.shape}")
            self._history.append((cache, kept[:num_sink] + kept[num_sink + 1 :] + [t]))
        cache, kept = self._history[steps]
        fresh = np.asarray(self.apply_rope(raw[kept], slots), dtype=np.float64)
        return kept, np.max(np.abs(cache - fresh), axis=1)

    def update(
        self,
        n_layers: int,
        every: int,
        no_rope: bool,
        pairs: int,
        window: int,
        num_sink: int,
        steps: int,
    ) -> None:
        every_base = 0.0 if no_rope else 1e6
        plan_note = cache_note = ""
        with self.panel(self.plan_image):
            plan = np.asarray(
                self.layer_rope_bases(int(n_layers), int(every), 1e4, every_base), dtype=float
            )
            cells = np.full((1, MAX_LAYERS), np.nan)
            with np.errstate(divide="ignore"):
                cells[0, : plan.size] = np.where(plan > 0, np.log10(np.maximum(plan, 1.0)), np.nan)
            self.plan_image.set_data(cells)
            self.plan = plan
            special = int(np.count_nonzero(plan == every_base))
            what = tr("without RoPE") if no_rope else tr("global (1e6)")
            plan_note = tr("{k} of {n} layers {what}", k=special, n=plan.size, what=what)
        p = int(pairs) / (HEAD_D // 2)  # exact in binary: int(d * p) = 2 * pairs
        for line, fn in (
            (self.partial_line, self.partial_thetas),
            (self.proportional_line, self.proportional_thetas),
        ):
            with self.panel(line):
                rates = np.asarray(fn(HEAD_D, HEAD_BASE, p), dtype=float)
                line.set_ydata(np.where(rates > 0, rates, np.nan))
        half = int(pairs)  # rot = int(d * p) = 2 * pairs: rot / 2 = pairs
        s_h, s_w = (half + 1) // 3, half // 3
        for line in self.axis_lines:
            line.set_ydata(np.full(HEAD_D // 2, np.nan))
        if self.qwen35_rope_angles is not None:
            with self.panel(*self.axis_lines):
                unit = np.asarray(
                    self.qwen35_rope_angles(
                        np.eye(3, dtype=np.int64),
                        HEAD_D,
                        p,
                        HEAD_BASE,
                        [half - s_h - s_w, s_h, s_w],
                    ),
                    dtype=float,
                )
                if unit.shape != (3, half):
                    raise ValueError(f"qwen35_rope_angles returned shape {unit.shape}")
                axes = unit.argmax(axis=0)
                for a, line in enumerate(self.axis_lines):
                    ydata = np.full(HEAD_D // 2, np.nan)
                    ydata[:half] = np.where(axes == a, unit.max(axis=0), np.nan)
                    line.set_ydata(ydata)
                self.qwen35_axes = axes
        self.rate_note.set_text(
            tr(
                "{pairs} of {total} pairs rotated; the others keep rate 0 (not drawn)",
                pairs=int(pairs),
                total=HEAD_D // 2,
            )
        )
        with self.panel(self.slot_image, self.error_line):
            num_sink = min(int(num_sink), int(window) - 1)
            kept, err = self.stream(int(window), num_sink, int(steps))
            ids = np.full((1, MAX_WINDOW), np.nan)
            ids[0, : len(kept)] = kept
            self.slot_image.set_data(ids)
            shown = np.full(MAX_WINDOW, np.nan)
            shown[: err.size] = np.clip(err, ERROR_LIMITS[0] * 1.5, None)
            self.error_line.set_ydata(shown)
            self.kept_tokens, self.errors_per_slot = kept, err
            cache_note = tr(
                "after {steps} tokens: sinks {sinks}, then tokens {first}..{last}\n"
                "largest error {err:.1e}",
                steps=int(steps),
                sinks=kept[:num_sink],
                first=kept[num_sink] if len(kept) > num_sink else "-",
                last=kept[-1],
                err=float(err.max()),
            )
        if self.sink_softmax is not None:
            with self.panel():  # a failing sink_softmax is named; the cache stays drawn
                w = np.asarray(self.sink_softmax(np.zeros((1, 1, int(window))), [0.0]), float)
                self.sink_share = float(1.0 - w.sum())
                cache_note += "\n" + tr(
                    "gpt-oss's learned sink (logit 0) over {n} keys of score 0 takes {share:.3f}",
                    n=int(window),
                    share=self.sink_share,
                )
        self.plan_note.set_text(plan_note)
        self.cache_note.set_text(cache_note)


def rope_today_explorer(
    layer_rope_bases: Callable,
    partial_thetas: Callable,
    proportional_thetas: Callable,
    sink_cache_update: Callable,
    apply_rope: Callable,
    qwen35_rope_angles: Callable | None = None,
    sink_softmax: Callable | None = None,
    **defaults,
) -> RopeTodayExplorer | None:
    """The layer plan, the rates of a partly rotated head and a sink cache, with sliders.

    ``defaults`` sets the starting values (``n_layers``, ``every``, ``no_rope``,
    ``pairs``, ``window``, ``num_sink``, ``steps``). Returns ``None`` while nbgrader runs
    the notebook.
    """
    if not interactive():
        return None
    return RopeTodayExplorer(
        layer_rope_bases=layer_rope_bases,
        partial_thetas=partial_thetas,
        proportional_thetas=proportional_thetas,
        sink_cache_update=sink_cache_update,
        apply_rope=apply_rope,
        qwen35_rope_angles=qwen35_rope_angles,
        sink_softmax=sink_softmax,
        **defaults,
    )

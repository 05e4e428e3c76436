"""Explorer of notebook 06_rope: the RoPE score depends on n - m only.

The query sits at ``m + s`` and the key at ``n + s``: sliding ``s`` over the whole range
keeps the offset and changes both absolute positions. With both vectors rotated by the
learner's ``apply_rope`` the score is one flat line; with only the query rotated (a known
mistake) it wanders. The right panel shows how many turns each pair makes over ``|m - n|``
(the learner's ``turns``) and how many pairs have not finished one (``slow_pairs``).

The query and key are the learner's ``demo_vectors()``, cut to the first ``d`` entries
(or repeated from the start when ``d`` is longer); the flat line is the learner's
``rope_score`` at every shift.
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
    resized,
    subtitle,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAX_LEN = 512  # the shift s runs over 0 .. MAX_LEN - 1
_TURNS_FLOOR = 1e-8  # zero turns (m == n) are drawn at this height on the log axis


def _rotate_all(apply_rope: Callable, vec: np.ndarray, pos: np.ndarray, base: float) -> np.ndarray:
    """``apply_rope`` of one vector at many positions; a learner's 1-d only version works too."""
    batch = np.broadcast_to(vec, pos.shape + vec.shape)
    try:
        out = np.asarray(apply_rope(batch, pos, base), dtype=np.float64)
    except Exception:  # noqa: BLE001 - a learner's apply_rope may take one vector only
        out = None
    if out is not None and out.shape == batch.shape:
        return out
    return np.stack([np.asarray(apply_rope(vec, int(p), base), dtype=np.float64) for p in pos])


def _scores_all(rope_score: Callable, q, k, m: np.ndarray, n: np.ndarray, base: float):
    """``rope_score`` at many position pairs; a learner's scalar-only version works too."""
    qs = np.broadcast_to(q, m.shape + q.shape)
    ks = np.broadcast_to(k, n.shape + k.shape)
    try:
        out = np.asarray(rope_score(qs, ks, m, n, base), dtype=np.float64)
    except Exception:  # noqa: BLE001 - a learner's rope_score may take one pair only
        out = None
    if out is not None and out.shape == m.shape:
        return out
    return np.array([float(rope_score(q, k, int(a), int(b), base)) for a, b in zip(m, n)])


class RopeExplorer(Explorer):
    """Score against absolute position at a fixed offset, and the turns of each pair.

    Artists the tests read: ``both_line`` (both rotated), ``q_only_line`` (only the query),
    ``now`` (the score at ``s = 0``), ``slow_dots`` and ``fast_dots`` (turns per pair).
    """

    def __init__(
        self,
        apply_rope: Callable,
        rope_score: Callable,
        turns: Callable,
        slow_pairs: Callable,
        demo_vectors: Callable,
        d: int = 64,
        m: int = 5,
        n: int = 3,
        base: float = 10000.0,
        max_len: int = MAX_LEN,
    ):
        self.apply_rope = learner("apply_rope", apply_rope)
        self.rope_score = learner("rope_score", rope_score)
        self.turns = learner("turns", turns)
        self.slow_pairs = learner("slow_pairs", slow_pairs)
        self.demo_vectors = learner("demo_vectors", demo_vectors)
        self.max_len = int(max_len)
        self._layout = None
        controls = {
            "m": int_slider(tr("m (query)"), m, 0, 4096),
            "n": int_slider(tr("n (key)"), n, 0, 4096),
            "d": int_slider("d", d, 2, 512, step=2),
            "base": log_slider("base", base, 1, 6),
        }
        super().__init__(controls, figsize=(11, 4.6), title=tr("RoPE: the score sees n - m only"))

    def draw(self, fig: Figure) -> None:
        fig.set_layout_engine("none")  # fixed axes: a layout pass per frame costs ~100 ms
        ax = fig.add_axes((0.075, 0.27, 0.45, 0.58))
        turns_ax = fig.add_axes((0.62, 0.27, 0.36, 0.58))
        self.ax, self.turns_ax = ax, turns_ax
        (self.q_only_line,) = ax.plot(
            [], [], color=SERIES_COLOURS[1], lw=1.2, ls="--", label=tr("only q rotated (a mistake)")
        )
        (self.both_line,) = ax.plot(
            [], [], color=SERIES_COLOURS[0], lw=2.2, label=tr("q and k rotated (RoPE)")
        )
        (self.now,) = ax.plot(
            [], [], "o", color=SERIES_COLOURS[0], ms=7, label=tr("rope_score(q, k, m, n)")
        )
        ax.set_xlim(0, self.max_len - 1)
        ax.set_xlabel(tr("shift s: query at m + s, key at n + s"))
        ax.set_ylabel(tr("score"))
        ax.grid(True, alpha=0.3)
        # legends under the axes: the curves may reach any height
        ax.legend(
            loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2, fontsize=FONT, frameon=False
        )
        ax.set_title(tr("the same offset at every shift s"), fontsize=FONT, y=1.0)
        self.score_title = subtitle(ax)  # short: every glyph is drawn at every update

        (self.fast_dots,) = turns_ax.plot(
            [], [], "x", color="0.45", ms=4, label=tr("≥ 1 turn: scrambled")
        )
        (self.slow_dots,) = turns_ax.plot(
            [], [], "o", color=SERIES_COLOURS[2], ms=4, label=tr("< 1 turn: still ordered")
        )
        turns_ax.axhline(1.0, color="k", lw=0.8, ls=":")
        turns_ax.set_yscale("log")
        turns_ax.set_ylim(_TURNS_FLOOR / 3, 3e3)
        turns_ax.set_xlabel(tr("pair i"))
        turns_ax.set_ylabel(tr("turns over |m − n|"))
        turns_ax.grid(True, which="major", alpha=0.3)
        turns_ax.legend(
            loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=1, fontsize=FONT, frameon=False
        )
        turns_ax.set_title(tr("turns per pair over the distance |n − m|"), fontsize=FONT, y=1.0)
        self.turns_title = subtitle(turns_ax)
        # the score range follows d, m, n and base; the pairs follow d: both axes move
        self.animate(
            [
                self.q_only_line,
                self.both_line,
                self.now,
                self.score_title,
                self.fast_dots,
                self.slow_dots,
                self.turns_title,
            ],
            moving=[ax.yaxis, turns_ax.xaxis],
        )

    def update(self, m: int, n: int, d: int, base: float) -> None:
        s = np.arange(self.max_len)
        both = q_only = None
        with self.panel(self.both_line, self.now, self.score_title):
            q, k = self.vectors(d)
            both = _scores_all(self.rope_score, q, k, m + s, n + s, base)  # shape: (max_len,)
            score = float(self.rope_score(q, k, m, n, base))
            self.both_line.set_data(s, both)
            self.now.set_data([0], [score])
            self.score_title.set_text(
                tr(
                    "n − m = {offset}: score {score:.8g}, spread {spread:.0e}",
                    offset=n - m,
                    score=score,
                    spread=np.ptp(both),
                )
            )
        with self.panel(self.q_only_line):
            q_only = self.kept("q_only", (m, d, base), lambda: self.query_only(m, d, base))
            self.q_only_line.set_data(s, q_only)

        with self.panel(self.fast_dots, self.slow_dots, self.turns_title):
            delta = abs(n - m)
            t = np.asarray(self.turns(d, delta, base), dtype=np.float64)  # shape: (d // 2,)
            slow = int(self.slow_pairs(d, delta, base))
            i = np.arange(t.shape[0])
            below = i >= t.shape[0] - slow  # the learner's count of slow pairs: the last ones
            shown = np.maximum(t, _TURNS_FLOOR)
            self.slow_dots.set_data(i[below], shown[below])
            self.fast_dots.set_data(i[~below], shown[~below])
            self.turns_title.set_text(tr("slow_pairs = {slow} of {pairs}", slow=slow, pairs=d // 2))

        drawn = [x for x in (both, q_only) if x is not None and x.size]
        top = float(np.max(np.abs(np.concatenate(drawn)))) if drawn else 1.0
        top = top if np.isfinite(top) else 1.0
        _, high = self.ax.get_ylim()
        if not (0.4 * high <= top <= high) or d != self._layout:
            # new limits only when the curves leave them or shrink a lot
            bound = 1.15 * top if top > 0 else 1.0
            self.ax.set_ylim(-bound, bound)
        if d != self._layout:
            self.turns_ax.set_xlim(-0.5, max(d // 2 - 0.5, 0.5))
            self._layout = d

    def query_only(self, m: int, d: int, base: float) -> np.ndarray:
        """The known mistake at every shift: the query rotated, the key left where it was.

        It does not depend on ``n``: a move of ``n`` keeps it (see ``kept``).
        # shape: (max_len,)
        """
        s = np.arange(self.max_len)
        q, k = self.vectors(d)
        rq = _rotate_all(self.apply_rope, q, m + s, base)  # shape: (max_len, d)
        return np.sum(rq * k, axis=1)

    def vectors(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        """The learner's ``demo_vectors()`` cut or repeated to length ``d``."""
        q0, k0 = self.demo_vectors()
        return resized(q0, d, "demo_vectors()[0]"), resized(k0, d, "demo_vectors()[1]")


def rope_explorer(
    apply_rope: Callable,
    rope_score: Callable,
    turns: Callable,
    slow_pairs: Callable,
    demo_vectors: Callable,
    **defaults,
) -> RopeExplorer | None:
    """Sliders m, n, d and base over the learner's RoPE functions and ``demo_vectors``.

    ``defaults`` sets the starting slider values (``d``, ``m``, ``n``, ``base``).
    Returns ``None`` while nbgrader runs the notebook.
    """
    if not interactive():
        return None
    return RopeExplorer(
        apply_rope=apply_rope,
        rope_score=rope_score,
        turns=turns,
        slow_pairs=slow_pairs,
        demo_vectors=demo_vectors,
        **defaults,
    )

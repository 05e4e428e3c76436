"""Explorer of notebook 01_order: shuffle the tokens and compare the two attention maps.

Three panels share one colour scale: the attention weights of the sentence in its own
order, the weights of the shuffled sentence with rows and columns put back into the
original token order, and their absolute difference. Without positions the difference is
zero (self-attention only shuffles its output); with positions added *after* shuffling it
is not.

The weights and outputs come from the learner's ``attention``; the position table from the
notebook's own function (``preview_pe`` in 01_order), passed in as ``position_table``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from helpers import validate
from helpers.i18n import tr
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
    from matplotlib.figure import Figure

MAX_TOKENS = 512
MAX_D = 512
HEAD_DIM = 64
MAX_PIXELS = 256
WORDS = (
    "I",
    "ate",
    "rice",
    "with",
    "a",
    "spoon",
    "at",
    "noon",
    "and",
    "then",
    "the",
    "dog",
    "bit",
    "the",
    "boy",
    "too",
)


def shuffle_order(n: int, shuffle: int) -> np.ndarray:
    """The permutation of shuffle number ``shuffle`` (0 keeps the order). # shape: (n,)"""
    n = validate.count(n, "n")
    shuffle = validate.count(shuffle, "shuffle", minimum=0)
    if shuffle == 0:
        return np.arange(n)
    return np.random.default_rng(shuffle).permutation(n)


class OrderExplorer(Explorer):
    """Attention maps of a sentence and of its shuffled copy, from the learner's ``attention``.

    One attention head of width ``min(d, 64)``. Controls: ``n`` tokens, model dimension
    ``d``, ``base`` of the position table, ``pos`` (the position of the first token),
    ``shuffle`` (0 = no shuffle) and ``positions`` (add the table's rows after shuffling).
    ``position_table(max_len, d, base)`` is a function of the notebook returning a
    ``(max_len, d)`` table.
    """

    def __init__(
        self,
        attention: Callable,
        position_table: Callable,
        n: int = 6,
        d: int = 16,
        base: float = 10000.0,
        pos: int = 0,
        shuffle: int = 1,
        positions: bool = False,
    ):
        self.attention = learner("attention", attention)
        self.position_table = learner("position_table", position_table)
        rng = np.random.default_rng(2024)
        # word vectors and projections for the largest sizes; each update slices them
        self.words_full = rng.standard_normal((MAX_TOKENS, MAX_D))
        self.w_full = rng.standard_normal((3, MAX_D, HEAD_DIM))
        self.last = {}
        controls = {
            "n": int_slider(tr("tokens"), n, 2, MAX_TOKENS),
            "d": int_slider("d", d, 2, MAX_D, step=2),
            "base": log_slider("base", base, 0.5, 6.0),
            "pos": int_slider(tr("first pos"), pos, 0, 512),
            "shuffle": int_slider(tr("shuffle"), shuffle, 0, 50),
            "positions": checkbox(tr("add positions"), positions),
        }
        super().__init__(
            controls, figsize=(10.5, 4.4), title=tr("Shuffle the tokens: does attention notice?")
        )

    # -- the data -------------------------------------------------------------------
    def table(self, n: int, d: int, base: float, pos: int) -> np.ndarray:
        """Rows pos .. pos + n - 1 of the notebook's position table. # shape: (n, d)"""
        pos = int(validate.positions(pos, "pos"))
        d, base = validate.dim(d), validate.base(base)
        P = np.asarray(self.position_table(pos + n, d, base), dtype=np.float64)
        if P.shape != (pos + n, d):
            raise ValueError(
                f"position_table({pos + n}, {d}) must have shape {(pos + n, d)}, got {P.shape}"
            )
        return P[pos:]

    def inputs(self, n: int, d: int, base: float, pos: int, shuffle: int, positions: bool):
        """Word vectors X (n, d), projections (Wq, Wk, Wv) (d, d_k), permutation, positions P.

        The projections are scaled by 1/sqrt(d); P is all zero when positions are off.
        """
        X = self.words_full[:n, :d]
        W = self.w_full[:, :d, : min(d, HEAD_DIM)] / math.sqrt(d)
        perm = shuffle_order(n, shuffle)
        P = self.table(n, d, base, pos) if positions else np.zeros((n, d))
        return X, W, perm, P

    def head(self, ZW: np.ndarray, cols: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The weights and the output of the learner's ``attention`` on one set of projections.

        ``ZW`` holds the three projections of the tokens, Z Wq, Z Wk, Z Wv: shape (3, n, d_k).
        One call with the values ``[E | V]``, E the columns ``cols`` of the identity
        (all by default), returns both: ``A E`` (those columns of the weights A) and
        ``A V``. # shapes: (n, len(cols)) and (n, d_k)
        """
        Q, K, V = ZW
        n = Q.shape[0]
        cols = np.arange(n) if cols is None else np.asarray(cols)
        values = np.zeros((n, cols.size + V.shape[1]))
        values[cols, np.arange(cols.size)] = 1.0
        values[:, cols.size :] = V
        both = np.asarray(self.attention(Q, K, values), dtype=np.float64)
        if both.shape != values.shape:
            raise ValueError(
                f"attention(Q, K, V) must have shape (n, d_v) = {values.shape}, got {both.shape}"
            )
        return both[:, : cols.size], both[:, cols.size :]

    def projections(self, n, d, base, pos, positions) -> tuple[np.ndarray, np.ndarray]:
        """(X W, P W) for the three projections, each recomputed only when its inputs change.

        Since (X + P) W = X W + P W, the shuffled tokens need no new product:
        (X[perm] + P) W = (X W)[perm] + P W.  # shapes: (3, n, d_k) each
        """

        def words() -> np.ndarray:
            X, W, _, _ = self.inputs(n, d, base, pos, 0, False)
            return X @ W

        def places() -> np.ndarray:
            _, W, _, P = self.inputs(n, d, base, pos, 0, positions)
            return P @ W

        XW = self.kept("XW", (n, d), words)
        PW = self.kept("PW", (n, d, float(base), int(pos), bool(positions)), places)
        return XW, PW

    # -- drawing --------------------------------------------------------------------
    def draw(self, fig: Figure) -> None:
        from matplotlib.colors import PowerNorm

        fig.set_layout_engine("none")
        self.axes = fig.subplots(
            1,
            3,
            gridspec_kw={"left": 0.1, "right": 0.86, "bottom": 0.26, "top": 0.83, "wspace": 0.3},
        )
        norm = PowerNorm(gamma=0.4, vmin=0.0, vmax=1.0)
        self.images = []
        self.titles = []
        labels = (tr("original order"), tr("shuffled, put back in order"), tr("|difference|"))
        for ax, label in zip(self.axes, labels):
            im = ax.imshow(
                np.zeros((2, 2)),
                cmap="magma",
                norm=norm,
                interpolation="nearest",
                interpolation_stage="data",
            )
            self.titles.append(ax.set_title(label, fontsize=FONT, y=1.0))
            ax.set_xlabel(tr("key token"))
            self.images.append(im)
        self.axes[0].set_ylabel(tr("query token"))
        cax = fig.add_axes((0.88, 0.26, 0.015, 0.57))
        fig.colorbar(
            self.images[0],
            cax=cax,
            label=tr("attention weight"),
            ticks=[0, 0.01, 0.05, 0.2, 0.5, 1],
        )
        self.suptitle = fig.suptitle("", fontsize=FONT)
        # n sets the limits and tick labels of the three maps: their axes move (the layer)
        self.animate([*self.images, self.titles[2], self.suptitle], moving=list(self.axes))

    def update(self, n, d, base, pos, shuffle, positions) -> None:
        n = validate.count(n, "n", minimum=2)
        d = validate.dim(d)
        perm = shuffle_order(n, shuffle)
        inv = np.argsort(perm)
        XW, PW = self.projections(n, d, base, pos, positions)
        # At most MAX_PIXELS rows and columns are drawn (a panel is about 330 pixels wide):
        # only those columns of the weights are asked for, the outputs of every token.
        shown = np.arange(0, n, -(-n // MAX_PIXELS))
        key = (n, d, float(base), int(pos), bool(positions))
        # the sentence in its own order (no shuffle): kept while only shuffle moves
        original, out = self.kept("head", key, lambda: self.head(XW + PW, shown))
        original = original[shown]
        # token c of the sentence sits at place inv[c] of the shuffled one
        shuffled, out_shuffled = self.head(XW[:, perm] + PW, inv[shown])
        put_back = shuffled[inv[shown]]
        diff = np.abs(put_back - original)  # over the shown rows and columns
        gap = float(np.max(np.abs(out_shuffled - out[perm])))  # every token's output
        for im, data in zip(self.images, (original, put_back, diff)):
            im.set_data(data)
            im.set_extent((-0.5, n - 0.5, n - 0.5, -0.5))
        if self.last.get("n") != n:
            labels = [WORDS[i] if i < len(WORDS) else str(i) for i in range(n)]
            for ax in self.axes:
                ax.set_xlim(-0.5, n - 0.5)
                ax.set_ylim(n - 0.5, -0.5)
                # the words on the first map only: every map has the original order
                if n <= len(WORDS) and ax is self.axes[0]:
                    ax.set_xticks(range(n), labels, rotation=90, fontsize=FONT)
                    ax.set_yticks(range(n), labels, fontsize=FONT)
                else:  # the first and last token's numbers (a map without words: none)
                    ends = [0, n - 1] if n > len(WORDS) else []
                    ax.set_xticks(ends, [str(i) for i in ends], rotation=0, fontsize=FONT)
                    ax.set_yticks(ends, [str(i) for i in ends], fontsize=FONT)
        self.titles[2].set_text(tr("|difference|: max {value:.1e}", value=diff.max()))
        if positions:
            said = tr(
                "positions {first}..{last} after shuffling: output gap {gap:.1e}",
                first=pos,
                last=pos + n - 1,
                gap=gap,
            )
        else:
            said = tr("no positions: output gap {gap:.1e}", gap=gap)
        self.suptitle.set_text(said)
        self.last = {
            "n": n,
            "original": original,
            "put_back": put_back,
            "diff": diff,
            "gap": gap,
            "perm": perm,
        }


def order_explorer(
    *, attention: Callable, position_table: Callable, **start
) -> OrderExplorer | None:
    """Shuffle tokens and compare attention maps; ``None`` while nbgrader runs the notebook.

    Pass the notebook's own functions:
    ``order_explorer(attention=attention, position_table=preview_pe)``; ``start`` sets the
    first slider values (``n``, ``d``, ``base``, ``pos``, ``shuffle``, ``positions``).
    """
    if not interactive():
        return None
    return OrderExplorer(attention, position_table, **start)

"""Curves read over a window of positions (notebook 13_train_short): the moving mean its
figures, its explorer and its experiment share, and the window breaks are read with."""

from __future__ import annotations

import numpy as np

__all__ = ["BREAK_WINDOW", "smooth"]

# breaking_point's window on the excess over the optimum: the optimum itself, scored on the
# notebook's 64 sequences, "breaks at 116" with a window of 3 (per-position SD about 0.12
# nats) and never with 8
BREAK_WINDOW = 8


def smooth(x, window: int = 8) -> np.ndarray:
    """A centred moving mean over ``window`` positions; near the ends, the mean of the
    positions there are (``np.convolve(mode="same")`` alone counts the missing ones as
    zeros, and every curve would plunge at its last positions).
    # shape: that of x
    """
    x = np.asarray(x, dtype=np.float64)
    kernel = np.ones(int(window))
    return np.convolve(x, kernel, mode="same") / np.convolve(np.ones_like(x), kernel, mode="same")

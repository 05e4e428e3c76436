"""The reference maths of 02_sincos: sin/cos by hand.

Conventions of the whole reference: ``helpers.teacher.reference``.
"""

from __future__ import annotations

import math

import numpy as np

from helpers import validate

__all__ = [  # noqa: RUF022  (in the order the notebook teaches them)
    "angle_rates",
    "sinusoidal_pe",
    "wavelengths",
    "embed_with_positions",
    "text_heatmap",
]

ASSIGNMENT = "02_sincos"

DEFAULT_BASE = 10000.0


def angle_rates(d, base=DEFAULT_BASE) -> np.ndarray:
    """Angle rate of each pair (notebook 02_sincos).

    theta_i = base ** (-2 i / d) = exp(-(2 i / d) * ln(base)),  i = 0 .. d/2 - 1
    computed in log space so that large d and base stay exact to the last digit.
    # shape: (d // 2,)
    """
    d = validate.dim(d)
    base = validate.base(base)
    i = np.arange(d // 2, dtype=np.float64)
    return np.exp(-(2.0 * i / d) * math.log(base))


def _pe_rows(pos: np.ndarray, d: int, base: float) -> np.ndarray:
    angles = pos[..., None] * angle_rates(d, base)  # shape: pos.shape + (d/2,)
    out = np.empty(pos.shape + (d,), dtype=np.float64)
    out[..., 0::2] = np.sin(angles)
    out[..., 1::2] = np.cos(angles)
    return out


def sinusoidal_pe(max_len, d, base=DEFAULT_BASE) -> np.ndarray:
    """The sinusoidal position table of "Attention Is All You Need" (notebook 02_sincos).

    PE[pos, 2i] = sin(pos * theta_i),  PE[pos, 2i+1] = cos(pos * theta_i)
    # shape: (max_len, d)
    """
    max_len = validate.count(max_len, "max_len")
    d = validate.dim(d)
    base = validate.base(base)
    return _pe_rows(np.arange(max_len, dtype=np.float64), d, base)


def wavelengths(d, base=DEFAULT_BASE) -> np.ndarray:
    """Wavelength of each pair in tokens (notebook 02_sincos).

    lambda_i = 2 pi / theta_i   (d=4: 6.28 and 628.32)
    # shape: (d // 2,)
    """
    return 2.0 * np.pi / angle_rates(d, base)


def embed_with_positions(token_emb, base=DEFAULT_BASE) -> np.ndarray:
    """Token embeddings scaled by sqrt(d), plus positions (notebook 02_sincos).

    z = token_emb * sqrt(d) + PE[:n]
    # shapes: token_emb (n, d) -> (n, d)
    """
    emb = validate.matrix(token_emb, "token_emb", ndim=2)
    n, d = emb.shape
    validate.dim(d, "token_emb's last dimension")
    if n == 0:
        raise ValueError("token_emb must have at least one row, got shape (0, d)")
    return emb * np.sqrt(d) + sinusoidal_pe(n, d, base)


def text_heatmap(pe, ramp: str = " .:-=+*#%@") -> str:
    """A position table drawn with characters (notebook 02_sincos).

    level(v) = min(len(ramp) - 1, floor((v + 1) / 2 * len(ramp))); one line per row.
    """
    pe = validate.matrix(pe, "pe", ndim=2)
    if not isinstance(ramp, str) or len(ramp) == 0:
        raise ValueError(f"ramp must be a non-empty string, got {ramp!r}")
    n = len(ramp)
    levels = np.clip(np.floor((pe + 1.0) / 2.0 * n), 0, n - 1).astype(int)
    chars = np.array(list(ramp))[levels]
    return "\n".join("".join(row) for row in chars)

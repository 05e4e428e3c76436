"""The reference maths of 05_rotation: a shift is a rotation.

Conventions of the whole reference: ``helpers.teacher.reference``.
"""

from __future__ import annotations

import math

import numpy as np

from helpers import validate
from helpers.teacher.reference.sincos import DEFAULT_BASE, angle_rates, sinusoidal_pe

__all__ = [  # noqa: RUF022  (in the order the notebook teaches them)
    "rotation_2d",
    "rotate_pair",
    "shift_matrix",
    "shift_error",
]

ASSIGNMENT = "05_rotation"


def rotation_2d(angle) -> np.ndarray:
    """Counter-clockwise rotation by ``angle`` radians (notebook 05_rotation).

    R(a) = [[cos a, -sin a], [sin a, cos a]]
    # shape: (2, 2), or angle.shape + (2, 2) for an array of angles
    """
    a = validate.matrix(angle, "angle")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"angle must be finite, got {angle!r}")
    c, s = np.cos(a), np.sin(a)
    return np.stack([np.stack([c, -s], axis=-1), np.stack([s, c], axis=-1)], axis=-2)


def rotate_pair(x0, x1, angle) -> tuple[float, float]:
    """Rotate the point (x0, x1) counter-clockwise (notebook 05_rotation).

    (x0, x1) -> (x0 cos a - x1 sin a, x0 sin a + x1 cos a);  rotate_pair(1, 0, pi/2) = (0, 1)
    """
    vals = [validate.matrix(v, name) for v, name in ((x0, "x0"), (x1, "x1"), (angle, "angle"))]
    for v, name in zip(vals, ("x0", "x1", "angle")):
        if v.ndim != 0 or not np.isfinite(v):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    x0, x1, a = (float(v) for v in vals)
    c, s = math.cos(a), math.sin(a)
    return (x0 * c - x1 * s, x0 * s + x1 * c)


def shift_matrix(k, d, base=DEFAULT_BASE) -> np.ndarray:
    """The fixed linear map that moves a position table k steps (notebook 05_rotation).

    Block i acts on the [sin, cos] pair (2i, 2i+1):
        [[cos(k theta_i),  sin(k theta_i)],
         [-sin(k theta_i), cos(k theta_i)]]
    so that PE[pos + k] = M @ PE[pos] for every pos.
    # shape: (d, d)
    """
    k = validate.positions(k, "k", allow_negative=True)
    if k.ndim != 0:
        raise ValueError(f"k must be a single integer, got {k!r}")
    d = validate.dim(d)
    a = float(k) * angle_rates(d, base)
    c, s = np.cos(a), np.sin(a)
    M = np.zeros((d, d))
    i = np.arange(0, d, 2)
    M[i, i] = c
    M[i, i + 1] = s
    M[i + 1, i] = -s
    M[i + 1, i + 1] = c
    return M


def shift_error(k, d, max_len, base=DEFAULT_BASE) -> float:
    """How exactly the shift matrix moves the table (notebook 05_rotation).

    max_{pos + k < max_len} |M(k) PE[pos] - PE[pos + k]|
    """
    kk = validate.positions(k, "k")
    if kk.ndim != 0:
        raise ValueError(f"k must be a single integer, got {k!r}")
    kk = int(kk)
    max_len = validate.count(max_len, "max_len")
    if kk >= max_len:
        raise ValueError(f"k must be smaller than max_len={max_len}, got {kk}")
    pe = sinusoidal_pe(max_len, d, base)
    M = shift_matrix(kk, d, base)
    return float(np.max(np.abs(pe[: max_len - kk] @ M.T - pe[kk:])))

"""The reference maths of 06_rope: rotary position embedding.

Conventions of the whole reference: ``helpers.teacher.reference``.
"""

from __future__ import annotations

import numpy as np

from helpers import validate
from helpers.teacher.reference.sincos import angle_rates

__all__ = [  # noqa: RUF022  (in the order the notebook teaches them)
    "DIM",
    "THETA_BASE",
    "demo_vectors",
    "dot",
    "thetas",
    "apply_rope",
    "rope_score",
    "turns",
    "slow_pairs",
    "rope_half",
    "interleaved_to_half",
]

ASSIGNMENT = "06_rope"

DIM = 64
THETA_BASE = 10000.0


def demo_vectors() -> tuple[np.ndarray, np.ndarray]:
    """The fixed query and key of the RoPE exercise (notebook 06_rope).

    q[j] = cos(0.7 j + 0.3),  k[j] = sin(0.4 j + 1.1),  j = 0 .. DIM - 1
    """
    j = np.arange(DIM, dtype=np.float64)
    return np.cos(0.7 * j + 0.3), np.sin(0.4 * j + 1.1)


def dot(a, b):
    """Dot product along the last axis (notebook 06_rope): sum_j a_j b_j.

    Returns a float for two vectors, an array for batches.
    """
    a = validate.matrix(a, "a")
    b = validate.matrix(b, "b")
    if a.ndim == 0 or b.ndim == 0 or a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"a and b must be vectors of the same length, got shapes {a.shape} and {b.shape}"
        )
    out = np.sum(a * b, axis=-1)
    return float(out) if out.ndim == 0 else out


def thetas(d, base=THETA_BASE) -> np.ndarray:
    """Rotation speed of each pair (notebook 06_rope): theta_i = base ** (-2 i / d); first value 1.0.

    # shape: (d // 2,)
    """
    return angle_rates(d, base)


def _rotate_pairs(x: np.ndarray, even, odd, angles: np.ndarray) -> np.ndarray:
    c, s = np.cos(angles), np.sin(angles)
    out = np.empty_like(x)
    x0, x1 = x[..., even], x[..., odd]
    out[..., even] = x0 * c - x1 * s
    out[..., odd] = x0 * s + x1 * c
    return out


def _rope_angles(vec, pos, base):
    x, d = validate.vector_dim(vec, "vec")
    p = validate.positions(pos, "pos")
    if p.ndim and p.shape != x.shape[:-1]:
        raise ValueError(
            f"pos must be a scalar or have shape vec.shape[:-1] = {x.shape[:-1]}, got shape {p.shape}"
        )
    return x, d, p[..., None] * thetas(d, base)


def _same_width(q, k) -> tuple[np.ndarray, np.ndarray, int]:
    q, d = validate.vector_dim(q, "q")
    k, dk = validate.vector_dim(k, "k")
    if d != dk:
        raise ValueError(f"q and k must have the same length d, got {d} and {dk}")
    return q, k, d


def apply_rope(vec, pos, base=THETA_BASE) -> np.ndarray:
    """Rotary position embedding, interleaved pairs (notebook 06_rope).

    pair i = (vec[2i], vec[2i+1]) is rotated counter-clockwise by pos * theta_i:
        out[2i]   = vec[2i] cos(pos theta_i) - vec[2i+1] sin(pos theta_i)
        out[2i+1] = vec[2i] sin(pos theta_i) + vec[2i+1] cos(pos theta_i)
    # shapes: vec (..., d), pos scalar or vec.shape[:-1] -> (..., d); a new array
    """
    x, _, angles = _rope_angles(vec, pos, base)
    return _rotate_pairs(x, slice(0, None, 2), slice(1, None, 2), angles)


def rope_score(q, k, m, n, base=THETA_BASE):
    """Attention score of a query at m and a key at n under RoPE (notebook 06_rope).

    score = dot(R(m) q, R(n) k) = dot(q, R(n - m) k); no 1/sqrt(d).
    """
    _same_width(q, k)
    validate.positions(m, "m")
    validate.positions(n, "n")
    return dot(apply_rope(q, m, base), apply_rope(k, n, base))


def turns(d, delta, base=THETA_BASE) -> np.ndarray:
    """How many full turns each pair makes over a distance delta (notebook 06_rope).

    turns_i = delta * theta_i / (2 pi)
    # shape: (d // 2,)
    """
    dl = validate.positions(delta, "delta")
    if dl.ndim != 0:
        raise ValueError(f"delta must be a single integer, got {delta!r}")
    return float(dl) * thetas(d, base) / (2.0 * np.pi)


def slow_pairs(d, delta, base=THETA_BASE) -> int:
    """Number of pairs that make less than one turn over delta (notebook 06_rope).

    (d=64, deltas 1, 16, 256, 4096: 32, 28, 19, 9)
    """
    return int(np.count_nonzero(turns(d, delta, base) < 1.0))


def rope_half(vec, pos, base=THETA_BASE) -> np.ndarray:
    """RoPE in the half-split layout of GPT-NeoX and the Llama ports (notebook 06_rope).

    pair i = (vec[i], vec[i + d/2]), rotated counter-clockwise by pos * theta_i.
    # shapes: vec (..., d) -> (..., d)
    """
    x, d, angles = _rope_angles(vec, pos, base)
    return _rotate_pairs(x, slice(0, d // 2), slice(d // 2, d), angles)


def interleaved_to_half(vec) -> np.ndarray:
    """The permutation P from the interleaved to the half-split layout (notebook 06_rope).

    (P x)[i] = x[2i],  (P x)[i + d/2] = x[2i + 1];  rope_half(P x, pos) = P apply_rope(x, pos)
    # shapes: (..., d) -> (..., d)
    """
    x, _ = validate.vector_dim(vec, "vec")
    return np.concatenate([x[..., 0::2], x[..., 1::2]], axis=-1)

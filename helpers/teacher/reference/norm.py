"""The reference maths of 03_norm: the norm property.

Conventions of the whole reference: ``helpers.teacher.reference``.
"""

from __future__ import annotations

import math

import numpy as np

from helpers import validate

__all__ = [  # noqa: RUF022  (in the order the notebook teaches them)
    "pe_norms",
    "expected_norm",
    "min_pairwise_distance",
    "embedding_to_position_ratio",
]

ASSIGNMENT = "03_norm"


def pe_norms(pe) -> np.ndarray:
    """Euclidean norm of each row (notebook 03_norm).

    ||PE[pos]|| = sqrt(sum_j PE[pos, j]^2) = sqrt(d / 2) for every pos
    # shape: (max_len,)
    """
    pe = validate.matrix(pe, "pe", ndim=2)
    return np.sqrt(np.sum(pe * pe, axis=1))


def expected_norm(d) -> float:
    """The norm every position has: d/2 pairs of sin^2 + cos^2 = 1 (notebook 03_norm).

    expected_norm(d) = sqrt(d / 2)   (d=32: 4.0)
    """
    d = validate.dim(d)
    return math.sqrt(d / 2)


def min_pairwise_distance(pe) -> float:
    """Smallest distance between two different rows (notebook 03_norm).

    min_{a != b} ||PE[a] - PE[b]||   (d=32, 100 rows: 1.1716)
    Squared distances come from the Gram matrix; the closest candidates are then
    measured again directly so that the answer is exact to the last digits.
    """
    pe = validate.matrix(pe, "pe", ndim=2)
    n = pe.shape[0]
    if n < 2:
        raise ValueError(f"pe must have at least two rows, got shape {pe.shape}")
    sq = np.sum(pe * pe, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (pe @ pe.T)
    a, b = np.triu_indices(n, k=1)
    cand = d2[a, b]
    k = min(cand.size, 32)
    best = np.argpartition(cand, k - 1)[:k]
    exact = np.linalg.norm(pe[a[best]] - pe[b[best]], axis=1)
    return float(np.min(exact))


def embedding_to_position_ratio(token_emb, scale: bool = True) -> float:
    """How loud the words are against the positions (notebook 03_norm).

    ratio = mean_rows ||token_emb[row]|| * (sqrt(d) if scale else 1) / sqrt(d / 2)
    """
    emb = validate.matrix(token_emb, "token_emb", ndim=2)
    d = validate.dim(emb.shape[1], "token_emb's last dimension")
    if emb.shape[0] == 0:
        raise ValueError("token_emb must have at least one row, got shape (0, d)")
    mean_norm = float(np.mean(np.linalg.norm(emb, axis=1)))
    if scale:
        mean_norm *= math.sqrt(d)
    return mean_norm / expected_norm(d)

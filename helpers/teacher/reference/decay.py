"""The reference maths of 04_decay: dot product against distance.

Conventions of the whole reference: ``helpers.teacher.reference``.
"""

from __future__ import annotations

import numpy as np

from helpers import validate
from helpers.teacher.reference.sincos import DEFAULT_BASE, angle_rates

__all__ = [  # noqa: RUF022  (in the order the notebook teaches them)
    "dot_profile",
    "closed_form_dot",
    "first_rebound",
    "rope_decay_bound",
]

ASSIGNMENT = "04_decay"


def dot_profile(pe, pos, offsets) -> np.ndarray:
    """Dot product of one position with the positions after it (notebook 04_decay).

    profile[k] = PE[pos] . PE[pos + k]   for k in offsets
    (d=32, pos=25, offsets 0,1,2,3,5,8,10,15,20: 16.00 15.31 13.73 ... 8.41 10.47)
    # shape: (len(offsets),)
    """
    pe = validate.matrix(pe, "pe", ndim=2)
    p = validate.positions(pos, "pos")
    if p.ndim != 0:
        raise ValueError(f"pos must be a single integer, got {pos!r}")
    p = int(p)
    ks = validate.positions(offsets, "offsets", allow_negative=True)
    if ks.ndim != 1:
        raise ValueError(f"offsets must be a list of integers, got {offsets!r}")
    rows = p + ks.astype(np.int64)
    if p >= pe.shape[0] or np.any(rows < 0) or np.any(rows >= pe.shape[0]):
        raise ValueError(
            f"offsets must keep pos + k inside the table of {pe.shape[0]} rows, "
            f"got pos={p} and offsets={list(ks.astype(int))}"
        )
    return pe[rows] @ pe[p]


def closed_form_dot(offsets, d, base=DEFAULT_BASE) -> np.ndarray:
    """The dot product as a function of the offset alone (notebook 04_decay).

    PE[p] . PE[p + k] = sum_i (sin a sin b + cos a cos b) = sum_i cos(k theta_i)
    # shape: (len(offsets),)
    """
    ks = validate.positions(offsets, "offsets", allow_negative=True)
    if ks.ndim != 1:
        raise ValueError(f"offsets must be a list of integers, got {offsets!r}")
    return np.sum(np.cos(ks[:, None] * angle_rates(d, base)), axis=1)


def first_rebound(offsets, profile):
    """The first offset whose value is larger than the previous one's (notebook 04_decay).

    Returns offsets[t] for the smallest t with profile[t] > profile[t-1], else None.
    (the table of the positional-encoding article rises again at 20)
    """
    ks = list(offsets)
    vals = validate.matrix(profile, "profile", ndim=1)
    if len(ks) != vals.shape[0]:
        raise ValueError(
            f"offsets and profile must have the same length, got {len(ks)} and {vals.shape[0]}"
        )
    up = np.nonzero(vals[1:] > vals[:-1])[0]
    if up.size == 0:
        return None
    return ks[int(up[0]) + 1]


def rope_decay_bound(d, max_dist, base=DEFAULT_BASE) -> np.ndarray:
    """RoFormer's long-term decay bound (section 3.4.3) for distances 0..max_dist (notebook 04_decay).

    bound(r) = (1 / (d/2)) * sum_{j=1}^{d/2} |S_j|,  S_j = sum_{i=0}^{j-1} exp(1j * r * theta_i)
    # shape: (max_dist + 1,)
    """
    d = validate.dim(d)
    max_dist = validate.count(max_dist, "max_dist", minimum=0)
    r = np.arange(max_dist + 1, dtype=np.float64)
    S = np.cumsum(np.exp(1j * r[:, None] * angle_rates(d, base)), axis=1)  # (R, d/2)
    return np.mean(np.abs(S), axis=1)

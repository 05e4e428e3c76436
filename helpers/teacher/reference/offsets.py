"""The reference maths of 08_offsets: offset scans.

Conventions of the whole reference: ``helpers.teacher.reference``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from helpers import validate
from helpers.teacher.reference.rope import (
    DIM,
    THETA_BASE,
    _same_width,
    apply_rope,
    demo_vectors,
    dot,
    rope_score,
    slow_pairs,
    turns,
)
from helpers.teacher.reference.sincos import _pe_rows

__all__ = [  # noqa: RUF022  (in the order the notebook teaches them)
    "sin_pos",
    "add_score",
    "offset_scan",
    "spread",
    "rope_report",
    "write_report",
]

ASSIGNMENT = "08_offsets"


def sin_pos(pos, d, base=THETA_BASE) -> np.ndarray:
    """The additive position vector of the RoPE exercise (notebook 08_offsets).

    angle_j = pos / base ** (2 (j // 2) / d);  sin(angle_j) at even j, cos(angle_j) at odd j
    # shape: (d,), or pos.shape + (d,)
    """
    p = validate.positions(pos, "pos")
    d = validate.dim(d)
    base = validate.base(base)
    return _pe_rows(p, d, base)


def add_score(q, k, m, n, base=THETA_BASE):
    """Attention score with additive positions on both sides (notebook 08_offsets).

    score = dot(q + sin_pos(m), k + sin_pos(n))
    """
    q, k, d = _same_width(q, k)
    validate.positions(m, "m")
    validate.positions(n, "n")
    return dot(q + sin_pos(m, d, base), k + sin_pos(n, d, base))


def offset_scan(q, k, offset, starts, base=THETA_BASE) -> list[tuple[int, float, float]]:
    """One offset measured at several starts (notebook 08_offsets).

    For each s in starts: (s, rope_score(q, k, s + offset, s), add_score(q, k, s + offset, s))
    """
    st = validate.positions(starts, "starts")
    if st.ndim != 1:
        raise ValueError(f"starts must be a list of integers, got {starts!r}")
    off = validate.positions(offset, "offset", allow_negative=True)
    if off.ndim != 0 or np.any(st + off < 0):
        raise ValueError(f"offset must keep every query position >= 0, got {offset!r}")
    q_pos, k_pos = st + off, st
    q = validate.matrix(q, "q")
    k = validate.matrix(k, "k")
    rope = rope_score(
        np.broadcast_to(q, st.shape + q.shape),
        np.broadcast_to(k, st.shape + k.shape),
        q_pos,
        k_pos,
        base,
    )
    add = add_score(q, k, q_pos, k_pos, base)
    return [
        (int(s), float(r), float(a)) for s, r, a in zip(st, np.atleast_1d(rope), np.atleast_1d(add))
    ]


def spread(values) -> float:
    """max - min of a list of numbers (notebook 08_offsets)."""
    v = validate.matrix(values, "values")
    if v.size == 0:
        raise ValueError("values must not be empty")
    return float(np.max(v) - np.min(v))


REPORT_OFFSET = 2
REPORT_STARTS = (3, 10, 100, 4000)
REPORT_NORM_POSITIONS = (0, 1, 7, 100, 4096)
REPORT_DELTAS = (1, 16, 256, 4096)


def rope_report() -> dict:
    """The measured report of the RoPE exercise (notebook 08_offsets).

    On demo_vectors() with offset 2, starts 3, 10, 100, 4000, norm positions
    0, 1, 7, 100, 4096 and deltas 1, 16, 256, 4096 at DIM = 64, THETA_BASE = 1e4.
    """
    q, k = demo_vectors()
    scan = offset_scan(q, k, REPORT_OFFSET, list(REPORT_STARTS))
    rope_scores = [r for _, r, _ in scan]
    add_scores = [a for _, _, a in scan]
    norm_before = float(np.linalg.norm(q))
    rotated = apply_rope(
        np.broadcast_to(q, (len(REPORT_NORM_POSITIONS), DIM)), np.array(REPORT_NORM_POSITIONS)
    )
    norm_max_gap = float(np.max(np.abs(np.linalg.norm(rotated, axis=1) - norm_before)))
    all_turns = [turns(DIM, delta) for delta in REPORT_DELTAS]
    return {
        "dim": DIM,
        "base": THETA_BASE,
        "offset": REPORT_OFFSET,
        "starts": list(REPORT_STARTS),
        "rope_scores": rope_scores,
        "rope_spread": spread(rope_scores),
        "add_scores": add_scores,
        "add_spread": spread(add_scores),
        "norm_before": norm_before,
        "norm_max_gap": norm_max_gap,
        "deltas": list(REPORT_DELTAS),
        "slow_pairs": [slow_pairs(DIM, delta) for delta in REPORT_DELTAS],
        "turns_first": [float(t[0]) for t in all_turns],
        "turns_last": [float(t[-1]) for t in all_turns],
    }


def write_report(json_path, md_path) -> dict:
    """Write rope_report() as JSON and as a Markdown table (notebook 08_offsets); returns it."""
    report = rope_report()
    Path(json_path).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    lines = ["| key | value |", "| --- | --- |"]
    for key, value in report.items():
        lines.append(f"| {key} | {json.dumps(value)} |")
    Path(md_path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return report

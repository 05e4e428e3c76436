"""How 08_offsets (offset scans) is graded.

For each graded function of the notebook, in notebook order: its fixed cases (the
numbers the notebook shows, the edges), its random cases, its known mistakes (the
message and, beside it, the wrong implementation that recognises it) and its declaration.
"""

from __future__ import annotations

import json
import re

import numpy as np

from helpers.i18n import tr
from helpers.teacher import reference as ref
from helpers.teacher.checks.base import (
    Case,
    FunctionCheck,
    Mistake,
    even_d,
    fmt,
    log_base,
    maybe_list,
    no_cases,
    normal,
    position,
    single_call,
    words,
)
from helpers.teacher.checks.compare import agree
from helpers.teacher.reference.rope import THETA_BASE


def _vector_pair_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(6):
        d, base, m, n = even_d(rng), log_base(rng), position(rng), position(rng)
        q, k = rng.normal(size=d), rng.normal(size=d)
        cases.append(
            Case(
                (maybe_list(rng, q), k, m, n),
                {"base": base},
                f"d={d}, m={m}, n={n}, base={fmt(base)}",
            )
        )
    return cases


REPORT_KEYS = (
    "dim",
    "base",
    "offset",
    "starts",
    "rope_scores",
    "rope_spread",
    "add_scores",
    "add_spread",
    "norm_before",
    "norm_max_gap",
    "deltas",
    "slow_pairs",
    "turns_first",
    "turns_last",
)


# --------------------------------------------------------------------------- sin_pos


def _sin_pos_fixed() -> list[Case]:
    return [
        Case((0, 64), {}, "pos=0, d=64", part="edge"),
        Case((4096, 64), {}, "pos=4096, d=64"),
        Case((3, 2), {"base": 100.0}, "pos=3, d=2, base=100", part="edge"),
        Case((-1, 64), {}, tr("bad input: pos=-1")),
    ]


def _sin_pos_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        pos, d, base = position(rng), even_d(rng), log_base(rng)
        cases.append(Case((pos, d), {"base": base}, f"pos={pos}, d={d}, base={fmt(base)}"))
    return cases


SIN_POS = FunctionCheck(
    name="sin_pos",
    kind="array",
    fixed=_sin_pos_fixed,
    random=_sin_pos_random,
)


# --------------------------------------------------------------------------- add_score


def _add_score_fixed() -> list[Case]:
    q, k = ref.demo_vectors()
    return [
        Case((q, k, 5, 3), {}, tr("the demo q at m=5, k at n=3")),
        Case(
            (q.tolist(), k.tolist(), 4002, 4000),
            {},
            tr("the demo vectors as lists, m=4002, n=4000"),
        ),
        Case(
            ([0.5, 0.5], [1.0, -1.0], 0, 0), {"base": 100.0}, "d=2, m=0, n=0, base=100", part="edge"
        ),
    ]


def add_score_query_side_only(q, k, m, n, base=THETA_BASE):
    """sin_pos(m) added to q, nothing added to k."""
    q = np.asarray(q, dtype=np.float64)
    return ref.dot(q + ref.sin_pos(m, q.shape[-1], base), k)


def add_score_key_side_only(q, k, m, n, base=THETA_BASE):
    """sin_pos(n) added to k, nothing added to q."""
    k = np.asarray(k, dtype=np.float64)
    return ref.dot(q, k + ref.sin_pos(n, k.shape[-1], base))


M_ADD_ONE_SIDE = Mistake(
    "the position added to one side only",
    "your score adds a position vector to one side only. Add sin_pos(m) to q and sin_pos(n) to "
    "k, then take the dot product: dot(q + sin_pos(m), k + sin_pos(n)).",
    add_score_query_side_only,
    variants=(add_score_key_side_only,),
)


ADD_SCORE = FunctionCheck(
    name="add_score",
    kind="float",
    fixed=_add_score_fixed,
    random=_vector_pair_random,
    mistakes=(M_ADD_ONE_SIDE,),
    check_mutation=True,
)


# --------------------------------------------------------------------------- offset_scan


def _offset_scan_fixed() -> list[Case]:
    q, k = ref.demo_vectors()
    return [
        Case(
            (q, k, 2, [3, 10, 100, 4000]),
            {},
            tr("the demo vectors, offset 2, starts 3, 10, 100, 4000"),
        ),
        Case(
            (q.tolist(), k.tolist(), 5, [0]),
            {"base": 500.0},
            tr("the demo vectors as lists, offset 5, start 0, base=500"),
        ),
        Case(
            ([1.0, 0.0], [0.0, 1.0], 3, [4, 0, 2]),
            {},
            tr("d=2, offset 3, starts 4, 0, 2 (not sorted)"),
            part="edge",
        ),
        Case((q, k, 2, [-1]), {}, tr("bad input: a start of -1")),
    ]


def _offset_scan_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(4):
        d, base, offset = even_d(rng), log_base(rng), int(rng.integers(0, 65))
        q, k = rng.normal(size=d), rng.normal(size=d)
        starts = [int(s) for s in rng.integers(0, 4097 - offset, size=int(rng.integers(1, 6)))]
        label = tr(
            "d={d}, offset {offset}, starts {starts}, base={base}",
            d=d,
            offset=offset,
            starts=starts,
            base=fmt(base),
        )
        cases.append(
            Case((maybe_list(rng, q), maybe_list(rng, k), offset, starts), {"base": base}, label)
        )
    return cases


def offset_scan_swapped(q, k, offset, starts, base=THETA_BASE) -> list[tuple[int, float, float]]:
    """The query at start and the key at start + offset (the positions swapped)."""
    return [
        (
            int(s),
            ref.rope_score(q, k, s, s + offset, base),
            ref.add_score(q, k, s, s + offset, base),
        )
        for s in starts
    ]


M_SCAN_SWAPPED = Mistake(
    "query and key positions swapped",
    "your scan puts the query at start and the key at start + offset. The query goes to "
    "start + offset and the key to start: (start, rope_score(q, k, start + offset, start), "
    "add_score(q, k, start + offset, start)).",
    offset_scan_swapped,
)


OFFSET_SCAN = FunctionCheck(
    name="offset_scan",
    kind="scan",
    fixed=_offset_scan_fixed,
    random=_offset_scan_random,
    mistakes=(M_SCAN_SWAPPED,),
    check_mutation=True,
)


# --------------------------------------------------------------------------- spread


def _spread_fixed() -> list[Case]:
    return [
        Case(([3.0, -1.0, 2.5],), {}, "[3, -1, 2.5]"),
        Case(([7.0],), {}, tr("a single value"), part="edge"),
        Case((np.array([1e-14, -2e-14, 0.0]),), {}, tr("tiny values as an array")),
        Case(([],), {}, tr("bad input: an empty list")),
    ]


def _spread_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(4):
        v = normal(rng, int(rng.integers(1, 20)), scale=float(rng.choice([1.0, 100.0])))
        cases.append(Case((maybe_list(rng, v),), {}, tr("values {shape}", shape=words(v))))
    return cases


SPREAD = FunctionCheck(
    name="spread",
    kind="float",
    fixed=_spread_fixed,
    random=_spread_random,
    check_mutation=True,
)


# --------------------------------------------------------------------------- rope_report


ROPE_REPORT = FunctionCheck(
    name="rope_report",
    kind="dict",
    fixed=single_call,
    random=no_cases,
)


# --------------------------------------------------------------------------- write_report


_SEPARATOR = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def check_report_files(json_text: str, md_text: str) -> tuple[bool, str]:
    """Judge the two files of write_report: the JSON report and its Markdown table.

    The JSON must parse to a dict that agrees with ``rope_report()`` (as ``agree("dict")``);
    the Markdown must hold a table (a separator line such as ``| --- | --- |``) with a row
    whose first cell is each key of the report.
    """
    try:
        data = json.loads(json_text)
    except (TypeError, ValueError) as exc:
        return False, tr("the JSON file is not valid JSON: {error}", error=exc)
    ok, detail = agree("dict", data, ref.rope_report())
    if not ok:
        return False, tr("the JSON file: {detail}", detail=detail)
    if not isinstance(md_text, str):
        return False, tr("the Markdown file could not be read as text")
    lines = md_text.splitlines()
    if not any("|" in line and _SEPARATOR.match(line) for line in lines):
        return False, tr("the Markdown file has no table (no separator line like | --- | --- |)")
    first_cells = set()
    for line in lines:
        if "|" not in line:
            continue
        cells = [c.strip().strip("`*").strip() for c in line.strip().strip("|").split("|")]
        if cells:
            first_cells.add(cells[0])
    missing = [k for k in REPORT_KEYS if k not in first_cells]
    if missing:
        return False, tr("the Markdown table has no row for {keys}", keys=", ".join(missing))
    return True, tr("the JSON report agrees and the Markdown table has a row for every key")


WRITE_REPORT = FunctionCheck(
    name="write_report",
    kind="files",
    fixed=single_call,
    random=no_cases,
    judge_files=check_report_files,
    reference=ref.rope_report,
)

ASSIGNMENT = "08_offsets"
# The graded functions in notebook order.
CHECKS = (SIN_POS, ADD_SCORE, OFFSET_SCAN, SPREAD, ROPE_REPORT, WRITE_REPORT)

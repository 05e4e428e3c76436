"""The self-check's table, as every self-check of the course prints it.

``render(header, rows)`` gives a header line, a table of one row per graded function
(function, verdict, message) and, under it, one block of details per failing function:

- the message column wraps under its own column (never back to column 0), at ``WIDTH``
  columns in all, Hangul counted two columns wide;
- a failing row says which exercise to revisit (``Row.where``);
- each line of a message is shown once: its first line in the row, the rest in the
  function's block; functions with the same details share one block.

Rows are plain data (``Row``), so any grader can fill them: the teacher's grader builds
them from its verdicts (``helpers.teacher.verdict.Report.rows``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from helpers.i18n import tr

__all__ = ["WIDTH", "Row", "count_line", "render", "table", "wrap"]

WIDTH = 100  # columns of the table and the details: fits a notebook's output area


@dataclass(frozen=True)
class Row:
    """One graded name of a self-check."""

    name: str
    verdict: str  # as shown, in the current language
    passed: bool
    summary: str  # the message's first line
    where: str = ""  # "See Exercise 4: `apply_rope`." (failing rows)
    details: tuple[str, ...] = ()  # the message's other lines
    replay: str = ""  # how to draw the same random cases again: printed whole, never wrapped
    constant: bool = False  # a graded constant (DIM), not a function


def width(text: str) -> int:
    """The columns ``text`` takes in a monospaced font (Hangul and other wide letters: 2)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, columns: int) -> str:
    return text + " " * (columns - width(text))


def wrap(text: str, columns: int) -> list[str]:
    """``text`` in lines of at most ``columns`` columns, broken at spaces (a longer word
    keeps a line of its own)."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if line and width(candidate) > columns:
            lines.append(line)
            line = word
        else:
            line = candidate
    lines.append(line)
    return lines


def count_line(rows: Sequence[Row]) -> tuple[int, int]:
    """(passed, total) over the graded functions, constants left out."""
    functions = [r for r in rows if not r.constant]
    return sum(r.passed for r in functions), len(functions)


def table(rows: Sequence[Row], columns: int = WIDTH) -> str:
    """Function, verdict, message: the message wrapped under its own column."""
    head = (tr("function"), tr("verdict"), tr("message"))
    w0 = max([width(head[0])] + [width(r.name) for r in rows])
    w1 = max([width(head[1])] + [width(r.verdict) for r in rows])
    w2 = max(40, columns - w0 - w1 - 4)
    indent = " " * (w0 + w1 + 4)
    lines = [
        f"{_pad(head[0], w0)}  {_pad(head[1], w1)}  {head[2]}",
        f"{'-' * w0}  {'-' * w1}  {'-' * min(w2, 60)}",
    ]
    for row in rows:
        text = f"{row.summary} {row.where}" if row.where else row.summary
        first, *rest = wrap(text, w2)
        lines.append(f"{_pad(row.name, w0)}  {_pad(row.verdict, w1)}  {first}".rstrip())
        lines += [indent + more for more in rest]
    return "\n".join(lines)


def details(rows: Sequence[Row], columns: int = WIDTH) -> str:
    """One block per failing function's details (functions with the same details share one)."""
    blocks: dict[tuple[str, ...], list[str]] = {}
    for row in rows:
        if not row.passed and (row.details or row.replay):
            blocks.setdefault((*row.details, row.replay), []).append(row.name)
    out = []
    for (*lines, replay), names in blocks.items():
        text = [", ".join(names) + ":"]
        for line in lines:
            first, *rest = wrap(line, columns - 2)
            text.append("  " + first)
            text += ["    " + more for more in wrap(" ".join(rest), columns - 4)] if rest else []
        if replay:
            text.append("  " + replay)
        out.append("\n".join(text))
    return "\n\n".join(out)


def render(header: str, rows: Sequence[Row], columns: int = WIDTH) -> str:
    """The header line, the table and the failing functions' details."""
    parts = [header, table(rows, columns)]
    more = details(rows, columns)
    if more:
        parts.append("\n" + more)
    return "\n".join(parts)

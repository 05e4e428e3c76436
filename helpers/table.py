"""The self-check's table: one row per graded function (function, verdict, message).

Plain text for a notebook's output, in a monospaced font: Hangul and other wide letters
take two columns. The teacher's self-check (``helpers.teacher.verdict.Report.table``) and
the classroom self-check of the learner build (``helpers.classcheck``) print it.
"""

from __future__ import annotations

import unicodedata

from helpers.i18n import tr

__all__ = ["table"]


def _width(text: str) -> int:
    """The columns ``text`` takes in a monospaced font (Hangul and other wide letters: 2)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))


def _table(rows: list[tuple[str, str, str]]) -> str:
    head = (tr("function"), tr("verdict"), tr("message"))
    w0 = max([_width(head[0])] + [_width(r[0]) for r in rows])
    w1 = max([_width(head[1])] + [_width(r[1]) for r in rows])
    w2 = max(7, _width(head[2]))
    lines = [
        f"{_pad(head[0], w0)}  {_pad(head[1], w1)}  {head[2]}",
        f"{'-' * w0}  {'-' * w1}  {'-' * w2}",
    ]
    for name, verdict, message in rows:
        first = message.splitlines()[0] if message else ""
        lines.append(f"{_pad(name, w0)}  {_pad(verdict, w1)}  {first}")
    return "\n".join(lines)


def table(rows: list[tuple[str, str, str]]) -> str:
    """The table of ``(function, verdict, message)`` rows; a message shows its first line."""
    return _table(rows)

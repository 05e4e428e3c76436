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

import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from helpers.i18n import tr

__all__ = [
    "WIDTH",
    "Row",
    "count_line",
    "html",
    "learner_warnings",
    "render",
    "sentence",
    "show",
    "table",
    "wrap",
]

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
    warnings: tuple[str, ...] = ()  # what the learner's own code warned while it was checked
    state: str = ""  # "passed", "partly", "failed" or "unchecked": the colour of the HTML row


def mistake_first(first: str, rest: list[str]) -> tuple[str, list[str]]:
    """A message's lines with the named mistake ("This looks like a known mistake (...)")
    first: it is what the learner should read before the case it was found on."""
    prefix = tr("This looks like a known mistake ({mistake}): {message}", mistake="\0", message="")
    prefix = prefix.split("\0")[0]
    named = next((line for line in rest if line.startswith(prefix)), None)
    if named is None:
        return first, rest
    return named, [first, *(line for line in rest if line is not named)]


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


def sentence(text: str) -> str:
    """``text`` ending with a full stop (or its own ``?``, ``!``, ``:``)."""
    text = text.rstrip()
    return text if not text or text[-1] in ".?!:。" else text + "."


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
        text = f"{sentence(row.summary)} {row.where}" if row.where else row.summary
        first, *rest = wrap(text, w2)
        lines.append(f"{_pad(row.name, w0)}  {_pad(row.verdict, w1)}  {first}".rstrip())
        lines += [indent + more for more in rest]
    return "\n".join(lines)


def details(rows: Sequence[Row], columns: int = WIDTH) -> str:
    """One block per failing function's details (functions with the same details share one)."""
    blocks: dict[tuple[str, ...], list[str]] = {}
    for row in rows:
        said = (*row.details, *row.warnings) if not row.passed else row.warnings
        if said or (not row.passed and row.replay):
            replay = row.replay if not row.passed else ""
            blocks.setdefault((*said, replay), []).append(row.name)
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


def _constants(rows: Sequence[Row]) -> list[str]:
    """A graded constant is no row of the table: a line under it when it is wrong."""
    return [
        f"{row.name}: {sentence(row.summary)} {row.where}".rstrip()
        for row in rows
        if row.constant and not row.passed
    ]


def render(header: str, rows: Sequence[Row], columns: int = WIDTH) -> str:
    """The header line, the table of the graded functions (constants are no rows: a wrong
    one is said under the table) and the failing functions' details."""
    functions = [r for r in rows if not r.constant]
    parts = [header, table(functions, columns)]
    constants = _constants(rows)
    if constants:
        parts.append("\n" + "\n".join(constants))
    more = details(functions, columns)
    if more:
        parts.append("\n" + more)
    return "\n".join(parts)


# The verdict colours of the HTML table: passed, partly right, failed (and not checked).
COLOURS = {"passed": "#1a7f37", "partly": "#9a6700", "failed": "#cf222e"}


# Every cell left-aligned on its own: JupyterLab's stylesheet right-aligns a table's cells,
# whatever the table says.
TD = "text-align: left; vertical-align: top; padding: 2px 8px"
_OPERATOR = re.compile(r" [-+*/^=<>]+ ")


def unbroken(text: str) -> str:
    """``text`` with the spaces inside each parenthesized formula (a group with an operator
    between spaces: ``exp(z - max(z))``) made non-breaking, so that a line never breaks in
    the middle of an expression."""
    out, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "(":
            if depth == 0:
                out.append(text[start:i])
                start = i
            depth += 1
        elif char == ")" and depth:
            depth -= 1
            if depth == 0:
                group = text[start : i + 1]
                out.append(group.replace(" ", "&nbsp;") if _OPERATOR.search(group) else group)
                start = i + 1
    out.append(text[start:])
    return "".join(out)


def html(header: str, rows: Sequence[Row], notes: Sequence[str] = ()) -> str:
    """The self-check as JupyterLab shows it: a table with a verdict colour per row and the
    details of a row in a ``<details>`` to open. Every text is escaped (a learner's message
    may hold anything)."""
    from html import escape

    functions = [r for r in rows if not r.constant]
    out = [
        '<div class="pe-self-check">',
        f"<p><strong>{escape(header)}</strong></p>",
        '<table style="border-collapse: collapse; text-align: left">',
        "<thead><tr>"
        + "".join(
            f'<th style="text-align: left; padding: 2px 8px">{escape(h)}</th>'
            for h in (tr("function"), tr("verdict"), tr("message"))
        )
        + "</tr></thead><tbody>",
    ]
    for row in functions:
        state = row.state or ("passed" if row.passed else "failed")
        colour = COLOURS.get(state, "inherit")
        text = f"{sentence(row.summary)} {row.where}".strip() if row.where else row.summary
        said = (*row.details, *row.warnings) if not row.passed else row.warnings
        more = [*said, row.replay] if (not row.passed and row.replay) else list(said)
        cell = unbroken(escape(text))
        if more:
            body = "<br>".join(unbroken(escape(line)) for line in more if line)
            cell += f"<details><summary>{escape(tr('details'))}</summary>{body}</details>"
        out.append(
            f'<tr data-verdict="{escape(state)}">'
            f'<td style="{TD}"><code>{escape(row.name)}</code></td>'
            f'<td style="{TD}; color: {colour}; font-weight: bold">'
            f"{escape(row.verdict)}</td>"
            f'<td style="{TD}">{cell}</td></tr>'
        )
    out.append("</tbody></table>")
    for line in [*_constants(rows), *notes]:
        out.append(f"<p>{escape(line)}</p>")
    out.append("</div>")
    return "\n".join(out)


def show(text: str, html_text: str) -> None:
    """Print ``text`` in a terminal; in a notebook's kernel, display the HTML table with
    ``text`` as its plain-text form (nbgrader and the terminal read that one)."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:  # pragma: no cover - the course installs IPython
        shell = None
    if shell is None or getattr(shell, "kernel", None) is None:
        print(text)
        return
    from IPython.display import display

    display({"text/plain": text, "text/html": html_text}, raw=True)


def learner_warnings(warned) -> tuple[str, ...]:
    """The warnings the learner's own code raised (its cells, not numpy's or ours), once
    each: ``RuntimeWarning: overflow encountered in exp (line 5)``."""
    seen: dict[str, None] = {}
    for w in warned:
        filename = str(getattr(w, "filename", ""))
        if "site-packages" in filename or os.sep + "helpers" + os.sep in filename:
            continue
        text = f"{w.category.__name__}: {w.message}"
        if getattr(w, "lineno", None):
            text = tr("{warning} (line {line})", warning=text, line=w.lineno)
        seen.setdefault(text, None)
    return tuple(seen)[:5]

"""Text a learner chose (a file or folder name, an error that quotes one), as the teacher's
terminal, records and spreadsheets take it.

A Unix name may hold any byte but ``/`` and NUL: bytes that are not UTF-8 (Python holds them
as lone surrogates, ``\\udcff``, which no UTF-8 writer accepts), line breaks, ESC and the
other control characters (a forged line, an erased one), and a leading ``=``, ``+``, ``-``,
``@``, tab or carriage return (a formula when a spreadsheet opens the CSV).

``shown``     a name on one line, every byte that is not printable ASCII escaped as Python
              writes it (``\\n``, ``\\x1b``, ``\\udcff``): what collect and ``inbound list``
              show, and what ``inbound remove`` takes.
``printable`` any text on one line, written as it is but for control, format and
              surrogate characters (escaped the same way): Korean stays Korean.
``csv_cell``  a value for a CSV cell: ``printable``, and a text that a spreadsheet would read
              as a formula starts with ``'`` (OWASP's advice); numbers stay numbers.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["csv_cell", "printable", "shown"]

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def shown(text: str) -> str:
    """``text`` in printable ASCII on one line (``\\n``, ``\\x1b``, ``\\udcff``, ``\\uc548``)."""
    return text.encode("unicode_escape", "backslashreplace").decode("ascii")


def _escaped(char: str) -> str:
    if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
        return shown(char)
    return char


def printable(text: str) -> str:
    """``text`` on one line, its control, format (bidi overrides) and surrogate characters
    escaped; everything else kept as it is."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(_escaped(c) for c in text)


def csv_cell(value):
    """``value`` for a CSV cell the teacher may open in a spreadsheet: a number as it is,
    a text ``printable`` and never a formula (``'=1+1``)."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = printable(str(value))
    if text.startswith(FORMULA_START) and not NUMBER.fullmatch(text):
        return "'" + text
    return text

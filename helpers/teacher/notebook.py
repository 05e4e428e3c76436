"""The notebook side of grading: reading a notebook, its answer cells and its grade cells.

``answer_source`` is the module the isolated grader imports (the answer cells, magics
commented out); ``function_for_grade_id`` maps a grade cell ``test_<name>...`` to the
graded function it tests.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers import ASSIGNMENTS
from helpers.i18n import LANGUAGES, split_assignment
from helpers.teacher.exercises import defined_names


class NotebookError(ValueError):
    """A notebook that cannot be read or graded (the message is one plain line)."""


def read_notebook(path_or_nb) -> tuple[Any, str]:
    """(notebook node, label for messages) from a path or an already loaded notebook."""
    import nbformat

    if isinstance(path_or_nb, (str, os.PathLike)):
        path = Path(path_or_nb)
        try:
            nb = nbformat.read(str(path), as_version=4)
        except FileNotFoundError as exc:
            raise NotebookError(f"{path}: no such notebook") from exc
        except Exception as exc:  # json, validation and encoding errors
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise NotebookError(f"{path}: not a readable notebook ({first})") from exc
        return nb, str(path)
    if isinstance(path_or_nb, Mapping) and "cells" in path_or_nb:
        return nbformat.from_dict(path_or_nb), "<notebook>"
    raise NotebookError(f"path_or_nb must be a notebook path or node, got {type(path_or_nb)!r}")


def notebook_language(nb, label: str = "") -> str:
    """The language a notebook speaks: its ``pe_course.language`` metadata (a generated
    translation carries it), else the one its file name says (``01_order_ko``), else English."""
    meta = nb.get("metadata", {}).get("pe_course", {})
    lang = meta.get("language") if isinstance(meta, Mapping) else None
    if lang in LANGUAGES:
        return lang
    return split_assignment(Path(label).stem)[1] if label else split_assignment("")[1]


def nbgrader_meta(cell) -> Mapping:
    """The cell's nbgrader metadata (empty when it has none or it is not a mapping)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, Mapping) else {}


def answer_cells(nb) -> list:
    return [
        c
        for c in nb.get("cells", [])
        if c.get("cell_type") == "code" and nbgrader_meta(c).get("solution")
    ]


_KEEP_CELL_MAGICS = ("%%time", "%%timeit", "%%capture")


def _strip_magics(source: str) -> str:
    """IPython magics and shell lines (% !) commented out; other cell magics drop the cell."""
    lines = source.splitlines()
    first = lines[0].lstrip() if lines else ""
    if first.startswith("%%") and not first.startswith(_KEEP_CELL_MAGICS):
        return "\n".join("# " + line for line in lines)
    out = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            out.append(line[: len(line) - len(stripped)] + "# " + stripped)
        else:
            out.append(line)
    return "\n".join(out)


@dataclass(frozen=True)
class AnswerCell:
    """One answer cell as the grader runs it.

    ``source`` is its source with magics commented out; ``line`` its first line in
    ``answer_source``; ``names`` the top-level names it defines.
    """

    grade_id: str
    source: str
    line: int
    names: tuple[str, ...]

    @property
    def code(self) -> str:
        """The source preceded by blank lines: its line numbers are those of ``answer_source``."""
        return "\n" * (self.line - 1) + self.source


# What answer_source puts before the answer cells.
_PRELUDE = ("import math", "import numpy as np", "")


def answer_cell_list(nb) -> list[AnswerCell]:
    """The answer cells in notebook order, numbered like ``answer_source``."""
    out = []
    line = len(_PRELUDE) + 1
    for cell in answer_cells(nb):
        grade_id = str(nbgrader_meta(cell).get("grade_id", "?"))
        src = cell.get("source", "")
        body = _strip_magics("".join(src) if isinstance(src, list) else str(src))
        out.append(AnswerCell(grade_id, body, line + 1, tuple(defined_names(body))))
        line += 2 + body.count("\n") + 1  # its comment line, its source, a blank line
    return out


def answer_source(nb) -> tuple[str, list[tuple[int, str]]]:
    """The module the grader imports: ``import math``, ``import numpy as np``, the answer cells.

    Returns the source and, for each cell, (first line number, grade id) so that an
    error at a line can be traced back to its cell.
    """
    cells = answer_cell_list(nb)
    parts = list(_PRELUDE)
    for cell in cells:
        parts += [f"# --- answer cell {cell.grade_id}", cell.source, ""]
    starts = [(cell.line, cell.grade_id) for cell in cells]
    return "\n".join(parts) + "\n", starts


def function_for_grade_id(grade_id: str, names: Iterable[str]) -> str | None:
    """The graded function a grade cell tests: the longest name with ``test_<name>`` a prefix."""
    best = None
    for name in names:
        if str(grade_id).startswith(f"test_{name}") and (best is None or len(name) > len(best)):
            best = name
    return best


def grade_cells(nb) -> list:
    return [
        c
        for c in nb.get("cells", [])
        if nbgrader_meta(c).get("grade") and c.get("cell_type") == "code"
    ]


def functions_of(nb, label: str, checks) -> list[str]:
    """The graded functions of a notebook: those its grade cells test, then its assignment's."""
    names: list[str] = []
    for cell in grade_cells(nb):
        fn = function_for_grade_id(str(nbgrader_meta(cell).get("grade_id", "")), checks.CHECKS)
        if fn is not None and fn not in names:
            names.append(fn)
    stem = split_assignment(Path(label).stem)[0]  # 06_rope_ko is graded as 06_rope
    if stem in ASSIGNMENTS:
        for check in checks.checks_for(stem):
            if check.name not in names:
                names.append(check.name)
    return names

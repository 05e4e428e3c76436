"""Where each graded function is taught, read from the source notebooks.

For every public name that an answer cell defines, the exercise whose heading (``### Exercise 4: `apply_rope` (3 points)``) stands above that
answer cell, and the points of its grade cells ``test_<name>...`` (0 for a name
graded only in the self-check, such as 06's ``DIM``). ``python -m helpers generate`` writes the
table to ``exercises.json`` beside this module, and a test keeps it in step with
``source/``, so the grader's "See Exercise 4: `apply_rope`" always names the notebook's
real heading. The grader reads the table with ``load()``.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

TABLE = Path(__file__).resolve().parent / "exercises.json"
_HEADING = re.compile(r"^#+\s*Exercise\s+(\d+)\s*:\s*`([^`]+)`", re.MULTILINE)


def defined_names(source: str) -> list[str]:
    """Top-level names that a cell defines (``def``, ``class``, assignments and imports)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names += [(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"]
    return names


def scan_notebook(path: Path) -> dict[str, dict]:
    """``name -> {assignment, exercise, section, points}`` for one source notebook."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    assignment = path.stem
    heading: tuple[int, str] | None = None
    defined: dict[str, int] = {}
    subjects: dict[str, int] = {}
    points: dict[str, float] = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "markdown":
            found = _HEADING.findall(cell.source)
            if found:
                number, subject = found[-1]
                heading = (int(number), subject)
                subjects.setdefault(subject, int(number))
        elif meta.get("solution") and str(meta.get("grade_id", "")).startswith("answer_"):
            for name in defined_names(cell.source):
                if heading is not None:
                    defined.setdefault(name, heading[0])
        elif meta.get("grade"):
            grade_id = str(meta.get("grade_id", ""))
            points[grade_id] = float(meta.get("points", 0) or 0)
    table = {}
    for name, number in defined.items():
        if name.startswith("_"):
            continue
        tested = [g for g in points if g == f"test_{name}" or g.startswith(f"test_{name}_")]
        if subjects.get(name) == number:
            section = f"Exercise {number}: `{name}`"
        else:
            section = f"the answer cell of Exercise {number}, which defines {name}"
        table[name] = {
            "assignment": assignment,
            "exercise": number,
            "section": section,
            "points": sum(points[g] for g in tested),
        }
    return table


def scan(root: Path) -> dict[str, dict]:
    """The table for every notebook of ``root/source``, in assignment order."""
    table: dict[str, dict] = {}
    from helpers.i18n import split_assignment

    for path in sorted(Path(root, "source").glob("*/*.ipynb")):
        # a translated notebook (06_rope_ko) is generated from its English one: same table
        if path.stem == path.parent.name and split_assignment(path.stem)[1] == "en":
            table.update(scan_notebook(path))
    return table


def write(root: Path, out: Path = TABLE) -> Path:
    """Write the table of ``root``'s source notebooks to ``out`` (JSON, stable order)."""
    from helpers.teacher.files import write_text

    return write_text(out, json.dumps(scan(root), indent=1) + "\n")


def load(path: Path = TABLE) -> dict[str, dict]:
    """The table written by ``write`` (empty when there is none yet)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}

"""The one builder of nbgrader cells for the tests' own notebooks."""

from __future__ import annotations

import nbformat


def cell(kind: str, source: str, **nbgrader) -> nbformat.NotebookNode:
    """A code or Markdown cell; nbgrader metadata (schema 3) when any role is given.

    ``cell("code", src, grade_id="test_x", grade=True, locked=True, points=2)``: the
    roles not given (``solution``, ``grade``, ``locked``, ``task``) are False.
    """
    if kind not in ("code", "markdown"):
        raise ValueError(f"kind must be 'code' or 'markdown', got {kind!r}")
    new = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    out = new(source)
    if nbgrader:
        meta = {"schema_version": 3, "locked": False, "solution": False, "grade": False}
        meta.update(nbgrader)
        meta.setdefault("task", False)
        out.metadata["nbgrader"] = meta
    return out

"""A kernel that has not run the notebook's first cell yet: it says so instead of a bare NameError.

After a kernel restart every name of the notebook is gone, ``helpers.start`` included, so a
visible test run on its own fails with ``NameError: name 'np' is not defined`` (or
``self_check``, or the function it tests), which reads as if the notebook were broken.
This module is an IPython extension that every kernel of the course's environment loads
(``{sys.prefix}/etc/ipython/ipython_kernel_config.py``, a data file of the package's wheel,
from ``etc/ipython/`` of the repository), before any cell runs. Until ``helpers.start`` has run in the kernel, a
``NameError`` on one of the course's names keeps its traceback and adds, in the notebook's
language, "run the first cell (helpers.start) again".

The course's names are those the notebook's own cells bind (the cells nbgrader tracks: the
first cell's imports, the answer cells' functions, the test cells' names), read with
``ast`` from the notebook file the kernel was started for (Jupyter's ``JPY_SESSION_NAME``;
else the notebook of the kernel's folder, ``<folder>/<folder>.ipynb``). A learner's own
name (a typo, a variable of a cell they added) keeps its bare NameError. Once
``helpers.start`` has run, or while nbgrader validates or grades (``NBGRADER_EXECUTION``),
nothing is added.

This module imports nothing of the course until a NameError needs it: it is loaded by every
kernel of the environment, whatever notebook it runs.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path

__all__ = ["course_names", "load_ipython_extension", "note", "notebook_path", "started"]

# The names of every notebook's first cell, when the notebook is not known.
FIRST_CELL = frozenset({"helpers", "grade", "self_check", "np", "math"})


def started() -> bool:
    """Whether ``helpers.start()`` ran in this kernel."""
    session = sys.modules.get("helpers.session")
    return bool(session is not None and session._STATE.get("started"))


def notebook_path() -> Path | None:
    """The notebook this kernel runs: Jupyter's ``JPY_SESSION_NAME``, else
    ``<folder>/<folder>.ipynb`` of the kernel's working folder (the course's layout)."""
    named = os.environ.get("JPY_SESSION_NAME", "")
    if named.endswith(".ipynb") and Path(named).is_file():
        return Path(named)
    here = Path.cwd()
    guess = here / f"{here.name}.ipynb"
    return guess if guess.is_file() else None


def _bound(tree: ast.Module) -> set[str]:
    """The names a module's top-level statements bind."""
    names: set[str] = set()

    def targets(node) -> None:
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, (ast.Tuple, ast.List)):
            for elt in node.elts:
                targets(elt)
        elif isinstance(node, ast.Starred):
            targets(node.value)

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                targets(target)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For)):
            targets(node.target)
    return names


def course_names(path: Path | None) -> set[str]:
    """The names the course's cells of the notebook at ``path`` bind (its cells with
    nbgrader metadata); without a notebook, the names of every notebook's first cell."""
    if path is None:
        return set(FIRST_CELL)
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError, AttributeError):
        return set(FIRST_CELL)
    names: set[str] = set()
    for cell in cells:
        if cell.get("cell_type") != "code" or "nbgrader" not in cell.get("metadata", {}):
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        try:
            names |= _bound(ast.parse(source))
        except SyntaxError:
            continue
    return names or set(FIRST_CELL)


def _language(path: Path | None) -> str:
    from helpers.i18n import split_assignment

    stem = path.stem if path is not None else Path.cwd().name
    return split_assignment(stem)[1]


def note(name: str, path: Path | None = None) -> str:
    """What a NameError on the course's ``name`` says in a kernel that has not run the
    first cell, in the notebook's language."""
    from helpers.i18n import tr

    return tr(
        "{name} is not defined: this kernel has not run the notebook's first cell "
        "(helpers.start), so it has none of the notebook's names (a restarted kernel forgets "
        "every cell it ran). Run the first cell (helpers.start) again, then the cells above "
        "this one (Run > Run All Above Selected Cell).",
        lang=_language(path),
        name=name,
    )


def _handler(shell, etype, value, tb, tb_offset=None):
    """IPython's custom handler of NameError (``set_custom_exc``): the traceback, and the
    note when the name is the course's and the first cell has not run."""
    name = getattr(value, "name", None)
    path = None
    ours = False
    if name and not started() and not os.environ.get("NBGRADER_EXECUTION"):
        path = notebook_path()
        ours = name in course_names(path)
    if not ours:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset, running_compiled_code=True)
        return None
    stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
    stb = [*stb, "", note(name, path)]
    shell._showtraceback(etype, value, stb)
    return stb


def stand_down(shell) -> None:
    """``helpers.start`` ran: NameErrors are the session's again (``helpers.session``)."""
    if getattr(shell, "custom_exceptions", ()) == (NameError,):
        shell.set_custom_exc((), None)


def load_ipython_extension(shell) -> None:
    """Loaded by every kernel of the environment (``etc/ipython/ipython_kernel_config.py``)."""
    if os.environ.get("NBGRADER_EXECUTION") or shell.custom_exceptions:
        return
    shell.set_custom_exc((NameError,), _handler)

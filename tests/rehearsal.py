"""Rehearsing a class: learner notebooks filled with the source's solutions, some broken.

``make_submission`` writes what a learner would submit: the released notebook with the
solutions of the instructor notebook typed into its answer cells, and chosen functions
left as stubs or made wrong. The classroom tests, the sandbox tests, the browser test and
the class benchmark rehearse a class with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path


def _solution_lines(source: str) -> str:
    keep = [
        ln
        for ln in source.splitlines()
        if ln.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION")
    ]
    return "\n".join(keep)


def solution_cells(source_nb) -> dict[str, str]:
    """``grade_id -> source`` of every answer cell of an instructor notebook, markers removed."""
    out = {}
    for cell in source_nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            out[meta["grade_id"]] = _solution_lines(cell.source)
    return out


def _break(code: str, how: str) -> str:
    """An answer cell made wrong: the stub, or every function's result changed."""
    if how == "stub":
        return _stub(code)
    names = [ln.split("(")[0][4:].strip() for ln in code.splitlines() if ln.startswith("def ")]
    wraps = []
    for name in names:
        wraps.append(
            f"\n_{name}_right = {name}\n"
            f"def {name}(*args, **kwargs):\n"
            f"    out = _{name}_right(*args, **kwargs)\n"
            f"    try:\n"
            f"        return np.asarray(out, dtype=float) + 0.5\n"
            f"    except (TypeError, ValueError):\n"
            f"        return None\n"
        )
    return code + "\n" + "".join(wraps)


def _stub(code: str) -> str:
    lines, out, in_def = code.splitlines(), [], False
    for ln in lines:
        if ln.startswith("def "):
            out.append(ln)
            out.append("    raise NotImplementedError()")
            in_def = True
        elif in_def and (ln.startswith((" ", "\t")) or not ln.strip()):
            continue
        else:
            in_def = False
            out.append(ln)
    return "\n".join(out)


def make_submission(
    release_nb: Path,
    source_nb: Path,
    out: Path,
    broken: Iterable[str] = (),
    how: str = "stub",
) -> None:
    """Write ``out``: the learner notebook with the source's solutions filled in.

    Answer cells whose grade id (``answer_<function>``) is in ``broken`` are made wrong:
    ``how="stub"`` leaves the stub, ``how="wrong"`` shifts every returned value by 0.5.
    """
    import nbformat

    if how not in ("stub", "wrong"):
        raise ValueError(f"how must be 'stub' or 'wrong', got {how!r}")
    broken = set(broken)
    answers = solution_cells(nbformat.read(source_nb, as_version=4))
    nb = nbformat.read(release_nb, as_version=4)
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        gid = meta.get("grade_id")
        if meta.get("solution") and gid in answers:
            cell.source = answers[gid] if gid not in broken else _break(answers[gid], how)
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)


# How a learner's function goes wrong inside its body (``break_function``): the line put
# first in its body, with the error it raises where it is called.
BODY_BREAKS = {
    "name": ("{indent}print(slope)  # a typo of a name\n", "NameError"),
    "index": ("{indent}print([][0])  # past the end of a list\n", "IndexError"),
    "none": ("{indent}return  # the result is never returned\n", None),
    "loop": ("{indent}while True:\n{indent}    pass\n", "KeyboardInterrupt"),
}


def break_function(code: str, name: str, how: str) -> str:
    """``code`` (an answer cell) with the function ``name`` broken inside its body
    (``BODY_BREAKS``: a NameError, an IndexError, no return value, an endless loop), or
    ``how="delete"``: the function left out of the cell."""
    import ast

    tree = ast.parse(code)
    found = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if found is None:
        raise ValueError(f"the cell defines no function {name!r}")
    lines = code.splitlines(keepends=True)
    start = (found.decorator_list[0] if found.decorator_list else found).lineno - 1
    if how == "delete":
        return "".join(lines[:start] + lines[found.end_lineno :])
    first = found.body[0]
    indent = lines[first.lineno - 1][: first.col_offset]
    line = BODY_BREAKS[how][0].format(indent=indent)
    return "".join(lines[: first.lineno - 1] + [line] + lines[first.lineno - 1 :])


def most_used_function(source_nb) -> tuple[str, str]:
    """``(grade id, function)``: of a source notebook's graded answer functions, the one
    its teaching cells (plots, measurements, explorers) call most."""
    import ast

    defined: dict[str, str] = {}
    for gid, code in solution_cells(source_nb).items():
        if gid.startswith("answer_"):
            for node in ast.parse(code).body:
                if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                    defined[node.name] = gid
    uses = dict.fromkeys(defined, 0)
    for cell in source_nb.cells:
        cell_id = cell.get("id", "")
        if cell.cell_type != "code" or cell_id.startswith(("answer_", "test_", "recap_")):
            continue
        if cell_id in ("imports", "self_check"):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # a cell with a magic
            continue
        called = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        for name in called & uses.keys():
            uses[name] += 1
    name = max(uses, key=lambda n: uses[n])
    if not uses[name]:
        raise ValueError("no teaching cell calls an answer function")
    return defined[name], name


def answer_ids(source_nb: Path) -> list[str]:
    """The grade ids of the graded answer cells (``answer_*``) of an instructor notebook."""
    import nbformat

    return [
        g for g in solution_cells(nbformat.read(source_nb, as_version=4)) if g.startswith("answer_")
    ]


def clockwise_rope_learner(release_nb: Path, source_nb: Path, out: Path) -> None:
    """Write ``out``: 06_rope as a learner might answer it, one function of each kind.

    Every answer is the source's solution, except ``apply_rope``, which turns the pairs
    clockwise (a named mistake: wrong), and ``turns``, left as its stub (unfinished);
    ``rope_score`` (right) calls the wrong ``apply_rope``.
    """
    import nbformat

    make_submission(release_nb, source_nb, out, broken=["answer_turns"])
    nb = nbformat.read(out, as_version=4)
    answer = next(c for c in nb.cells if c.get("id") == "answer_apply_rope")
    clockwise = answer.source.replace(
        "out[..., 0::2] = x0 * c - x1 * s", "out[..., 0::2] = x0 * c + x1 * s"
    ).replace("out[..., 1::2] = x0 * s + x1 * c", "out[..., 1::2] = -x0 * s + x1 * c")
    if clockwise == answer.source:
        raise ValueError("the solution of apply_rope changed: update clockwise_rope_learner")
    answer.source = clockwise
    nbformat.write(nb, out)


def cell_text(cell) -> str:
    """What an executed cell shows as text: its streams, tracebacks and plain outputs,
    without terminal colours."""
    out = []
    for o in cell.outputs:
        if o.output_type == "stream":
            out.append(o.text)
        elif o.output_type == "error":
            out.append("\n".join(o.traceback))
        elif "text/plain" in o.get("data", {}):
            out.append(o.data["text/plain"])
    return re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(out))

"""A learner's notebook session: Run All goes on past an exercise that is not written yet.

``helpers.start()``, in each notebook's first cell, prints the versions and, in a learner's
IPython kernel, lets every later cell carry on when it meets an unwritten exercise:

- a cell that calls a function whose body still raises ``NotImplementedError`` stops
  there, says which function is missing, and the notebook goes on with the next cell;
- what the stopped cell assigned is removed (it is half done at best), and a later cell
  that needs it (``NameError``) says so too, instead of stopping Run All.

Every other error stops the notebook as usual (a wrong answer's failed assert is news the
learner needs). While nbgrader validates or autogrades (``NBGRADER_EXECUTION`` is set)
nothing changes: a missing function fails its tests as before.
"""

from __future__ import annotations

import ast
import os

import helpers
from helpers.i18n import tr

__all__ = ["CarryOn", "not_written", "start"]

# The names a stopped cell did not get to assign (they are explained, not reported as typos).
_UNSET: dict[str, str] = {}
_GUARD = "__pe_carry_on__"


def start() -> None:
    """The first cell of every notebook: print the versions; in a learner's kernel, carry on.

    Calling it again does not add a second hook.
    """
    helpers.print_versions()
    if os.environ.get("NBGRADER_EXECUTION"):
        return
    try:
        shell = get_ipython()
    except NameError:
        return
    if not any(isinstance(t, CarryOn) for t in shell.ast_transformers):
        shell.ast_transformers.append(CarryOn())
        shell.user_ns[_GUARD] = __import__(__name__, fromlist=["not_written"])


def _stopped_at(exc: BaseException) -> str | None:
    """The learner's function that raised: the innermost frame's function name."""
    tb, name = exc.__traceback__, None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name != "<module>":
            name = code.co_name
        tb = tb.tb_next
    return name


def not_written(exc: BaseException, assigned: list[str]) -> None:
    """Say what stopped a cell, remember what it did not compute, and let Run All go on."""
    if isinstance(exc, NameError) and getattr(exc, "name", None) in _UNSET:
        name = exc.name
        print(
            tr(
                "[not run to the end: `{name}` was not computed, because an earlier cell stopped "
                "at {culprit}, which is not written yet. The notebook goes on.]",
                name=name,
                culprit=_UNSET[name],
            )
        )
        culprit = _UNSET[name]
    elif _stopped_at(exc) is None:
        culprit = tr("this cell")
        print(
            tr(
                "[not run to the end: this cell is not written yet (it raises "
                "NotImplementedError). Write it, then run it again; the notebook goes on.]"
            )
        )
    else:
        culprit = f"`{_stopped_at(exc)}`"
        print(
            tr(
                "[not run to the end: {culprit} is not written yet (it raises "
                "NotImplementedError). Write it in its exercise, then run this cell again; "
                "the notebook goes on.]",
                culprit=culprit,
            )
        )
    # What the stopped cell assigned is half done at best: later cells that need it are
    # told so (NameError, explained) instead of computing on with partial values.
    try:
        namespace = get_ipython().user_ns
    except NameError:
        namespace = {}
    for name in assigned:
        _UNSET.setdefault(name, culprit)
        if not name.startswith("__pe_"):
            namespace.pop(name, None)


def _assigned_names(body: list[ast.stmt]) -> list[str]:
    """The names a cell assigns at its top level (not inside its functions or classes)."""
    names: list[str] = []
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    comprehensions = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, scopes):
            if not isinstance(node, ast.Lambda):
                names.append(node.name)
            continue
        if isinstance(node, comprehensions):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
        elif isinstance(node, ast.alias):
            names.append((node.asname or node.name).split(".")[0])
        todo.extend(ast.iter_child_nodes(node))
    return sorted(set(names))


class CarryOn(ast.NodeTransformer):
    """An IPython AST transformer: a cell body becomes ``try: body except ...: note``.

    The cell's last expression is still shown as its result; a cell that completes assigns
    its names as before (and they are no longer "not computed").
    """

    def visit_Module(self, node: ast.Module) -> ast.Module:
        body = list(node.body)
        if not body:
            return node
        assigned = _assigned_names(body)
        last = None
        if isinstance(body[-1], ast.Expr):
            last = body.pop().value
        result = "__pe_result__"
        guarded = [*body]
        if last is not None:
            guarded.append(
                ast.Assign(targets=[ast.Name(result, ast.Store())], value=last, lineno=0)
            )
        handler = ast.parse(f"{_GUARD}.not_written(__pe_error__, {assigned!r})\n", mode="exec").body
        done = ast.parse(f"{_GUARD}._done({assigned!r})\n", mode="exec").body
        wrapped = ast.Try(
            body=guarded or [ast.Pass()],
            handlers=[
                ast.ExceptHandler(
                    type=ast.Tuple(
                        [
                            ast.Name("NotImplementedError", ast.Load()),
                            ast.Name("NameError", ast.Load()),
                        ],
                        ast.Load(),
                    ),
                    name="__pe_error__",
                    body=[
                        ast.If(
                            test=ast.parse(f"{_GUARD}._carries(__pe_error__)", mode="eval").body,
                            body=handler,
                            orelse=[ast.Raise()],
                        )
                    ],
                )
            ],
            orelse=done,
            finalbody=[],
        )
        new_body: list[ast.stmt] = []
        if last is not None:
            new_body.append(ast.parse(f"{result} = None").body[0])
        new_body.append(wrapped)
        if last is not None:
            new_body.append(ast.Expr(ast.Name(result, ast.Load())))
        node.body = new_body
        return ast.fix_missing_locations(node)


def _carries(exc: BaseException) -> bool:
    """Whether a cell may carry on past ``exc``: an unwritten exercise, or its aftermath."""
    if isinstance(exc, NotImplementedError):
        return True
    return isinstance(exc, NameError) and getattr(exc, "name", None) in _UNSET


def _done(assigned: list[str]) -> None:
    """A cell ran to its end: the names it assigned are computed now."""
    for name in assigned:
        _UNSET.pop(name, None)

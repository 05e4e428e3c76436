"""What a failed assert of a visible test saw: the values next to what was expected.

Every visible test's assert says what was expected (its message). When one fails in a
learner's kernel (``helpers.session``), ``came_back(exc, source)`` adds what came back:
the assert's failing part is taken apart (the first false term of an ``and``, the two
sides of a comparison, the arguments of ``np.allclose`` and its kin, the two sides of
``abs(a - b)``) and each part that is not a plain literal is shown with its value::

    What came back:
      r = [0.540302, -0.841471, 0.995004, -0.0998334]
      [math.cos(1), math.sin(1), math.cos(0.1), math.sin(0.1)] = [0.540302, 0.841471, ...]
      largest difference 1.68 at index 1

The parts are evaluated again in the notebook's namespace, after the assert failed (a
part that raises, or that draws random numbers, is left out). ``callee_first(name,
recorded, judge)`` says, for a test of ``name`` that failed, which of the functions it
calls are wrong now on the values the test gave them (their own checks, run on those
values when the note is shown).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from helpers.i18n import tr

__all__ = ["callee_first", "came_back", "show"]

# Calls whose arguments are the values compared (np.allclose(got, want), ...).
_COMPARING = {"allclose", "array_equal", "isclose", "array_equiv", "all", "any", "isinstance"}
# Calls around a difference: abs(a - b), np.max(np.abs(a - b)), np.linalg.norm(a - b).
_AROUND = {"abs", "max", "norm", "sqrt", "fabs"}
_LIMIT = 240  # characters of one value shown


def show(value) -> str:
    """A value as a learner reads it: numbers to 6 significant digits, long arrays cut."""
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.10g}"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (np.ndarray, list, tuple)) and not isinstance(value, str):
        try:
            arr = np.asarray(value)
        except (ValueError, TypeError):
            arr = None
        if arr is not None and arr.dtype.kind in "biuf" and arr.ndim >= 1:
            text = np.array2string(
                arr, precision=6, threshold=12, edgeitems=3, separator=", ", max_line_width=10**6
            )
            text = " ".join(text.split()).replace("[ ", "[")
            if isinstance(value, tuple) and arr.ndim == 1:
                text = "(" + text[1:-1] + ")"
            if isinstance(value, np.ndarray) and (arr.ndim > 1 or arr.size > 12):
                text = tr("array of shape {shape}: {values}", shape=arr.shape, values=text)
            return _cut(text)
    return _cut(repr(value))


def _cut(text: str) -> str:
    return text if len(text) <= _LIMIT else text[: _LIMIT - 1] + "…"


def _literal(node: ast.AST) -> bool:
    """A plain literal: a number, a string, or a list or tuple of them (-1 too)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _literal(node.operand)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_literal(e) for e in node.elts)
    return False


def _name_of(func: ast.AST) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _parts(node: ast.AST, value_of) -> list[ast.AST]:
    """The parts of a failing condition worth showing, in reading order."""
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        for term in node.values:
            try:
                ok = bool(value_of(term))
            except Exception:  # noqa: BLE001 - a term that raises is where it failed
                return _parts(term, value_of)
            if not ok:
                return _parts(term, value_of)
        return []
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _parts(node.operand, value_of)
    if isinstance(node, ast.Compare):
        return _sides([node.left, *node.comparators])
    if isinstance(node, ast.Call):
        name = _name_of(node.func)
        if name in ("all", "any") and len(node.args) == 1:
            inner = node.args[0]
            if isinstance(inner, (ast.Compare, ast.BoolOp, ast.Call)):
                return _parts(inner, value_of)
            if isinstance(inner, ast.GeneratorExp):
                return []
        if name in _COMPARING:
            args = node.args[:1] if name == "isinstance" else node.args[:2]
            return _sides(list(args))
        return [node]
    return [node]


def _sides(nodes: list[ast.AST]) -> list[ast.AST]:
    """The sides of a comparison; ``abs(a - b)`` and its kin give ``a`` and ``b`` too."""
    out: list[ast.AST] = []
    for node in nodes:
        inner = node
        while (
            isinstance(inner, ast.Call) and _name_of(inner.func) in _AROUND and len(inner.args) == 1
        ):
            inner = inner.args[0]
        if inner is not node and isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Sub):
            out += [inner.left, inner.right]  # abs(s - 1.3679447): s, more use than abs(...)
        else:
            out.append(node)
    return out


def _assert_at(source: str, line: int) -> ast.Assert | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Assert) and n.lineno <= line <= (n.end_lineno or n.lineno)
    ]
    return found[-1] if found else None


def _cell_line(exc: BaseException) -> tuple[int | None, dict | None]:
    """The line of the cell that raised ``exc`` and the cell's namespace (its frame's)."""
    tb = exc.__traceback__
    line, namespace = None, None
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "<module>":
            line, namespace = tb.tb_lineno, tb.tb_frame.f_globals
        tb = tb.tb_next
    return line, namespace


def came_back(exc: BaseException, source: str) -> list[str]:
    """Lines that show what the failed assert of ``source`` saw (none when unknown)."""
    line, namespace = _cell_line(exc)
    if line is None or namespace is None:
        return []
    node = _assert_at(source, line)
    if node is None:
        return []

    def value_of(expr: ast.AST):
        code = compile(ast.Expression(body=expr), "<assert>", "eval")
        return eval(code, namespace)

    shown, values = [], []  # literals are not shown (they are in the code) but compared
    for part in _parts(node.test, value_of):
        if _draws(part, namespace):
            continue  # computed again, it would show other random numbers
        text = ast.get_source_segment(source, part) or ast.unparse(part)
        text = " ".join(text.split())
        if text in (t for t, _ in shown):
            continue
        try:
            value = value_of(part)
        except Exception:  # noqa: BLE001, S112 - leave out what cannot be computed again
            continue
        values.append(value)
        if not _literal(part):
            shown.append((text, show(value)))
    if not shown:
        return []
    lines = [tr("What came back:")] + [f"  {text} = {value}" for text, value in shown]
    gap = _difference(values[:2]) if len(values) >= 2 else None
    if gap:
        lines.append("  " + gap)
    return lines


def _draws(expr: ast.AST, namespace: Mapping) -> bool:
    """Whether ``expr`` uses a random generator (``rng.normal(...)``, ``np.random...``)."""
    import random

    for node in ast.walk(expr):
        if isinstance(node, ast.Attribute) and node.attr == "random":
            return True
        if isinstance(node, ast.Name):
            value = namespace.get(node.id)
            if isinstance(value, (np.random.Generator, np.random.RandomState)) or (value is random):
                return True
    return False


def _number(x: float) -> str:
    """``nan``, ``inf``, ``-inf`` or the number, as a learner reads it."""
    return f"{x:.6g}" if np.isfinite(x) else str(float(x))


def _difference(pair: list) -> str | None:
    """Where two arrays of the same shape differ most, when they are numbers."""
    try:
        a, b = (np.asarray(v, dtype=np.float64) for v in pair)
    except (TypeError, ValueError):
        return None
    if a.shape != b.shape or a.ndim == 0 or a.size < 2:
        return None
    # a nan or an inf where the other side has something else comes first: the largest
    # finite difference would hide it
    odd = ~(np.isfinite(a) & np.isfinite(b)) & ~(a == b)
    if np.any(odd):
        index = np.unravel_index(np.argmax(odd), odd.shape)
        where = index[0] if len(index) == 1 else tuple(int(i) for i in index)
        return tr(
            "{value} at index {index}, where the other side has {other}",
            value=_number(a[index]),
            index=where,
            other=_number(b[index]),
        )
    with np.errstate(invalid="ignore"):
        diff = np.abs(a - b)
    if not np.any(np.isfinite(diff)) or np.nanmax(diff) == 0:
        return None
    index = np.unravel_index(np.nanargmax(diff), diff.shape)
    where = index[0] if len(index) == 1 else tuple(int(i) for i in index)
    return tr(
        "largest difference {gap} at index {index}", gap=f"{np.nanmax(diff):.3g}", index=where
    )


def callees(name: str, namespace: Mapping) -> list[str]:
    """The functions of ``namespace`` that ``name`` calls, and the ones those call."""
    target = namespace.get(name)
    if not callable(target):
        return []
    seen, todo, calls = {name}, [target], []
    while todo:
        code = getattr(todo.pop(), "__code__", None)
        for used in getattr(code, "co_names", ()):
            if used in seen:
                continue
            seen.add(used)
            fn = namespace.get(used)
            if callable(fn) and hasattr(fn, "__code__"):
                calls.append(used)
                todo.append(fn)
    return calls


def callee_first(
    name: str, recorded: Mapping[str, Sequence[tuple]], judge: Callable | None
) -> list[str]:
    """For a failed test of ``name``: the functions it calls that are wrong now on the
    values this test gave them.

    ``recorded`` holds, for each function ``name`` calls (``callees``), the calls this
    test made to it: ``(function, args, kwargs)``. ``judge(callee, function, calls)``
    runs the callee's own checks on those calls now and returns what it got wrong, or
    None (then nothing is said: the callee is right on them, whatever its own test said
    before). No judge (no checks installed): nothing is said.
    """
    if judge is None:
        return []
    lines = []
    for callee, calls in recorded.items():
        if not calls or callee == name:
            continue
        try:
            wrong = judge(callee, calls)
        except Exception:  # noqa: BLE001  (a note that cannot be decided is not shown)
            wrong = None
        if wrong:
            lines.append(
                tr(
                    "{name} calls your {callee}, which is wrong now: {wrong}. Fix {callee}, "
                    "then run this test again; {name} itself may well be right.",
                    name=name,
                    callee=callee,
                    wrong=wrong.rstrip("."),
                )
            )
    return lines

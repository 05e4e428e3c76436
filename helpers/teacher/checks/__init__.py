"""Where each graded function is checked: one module per notebook, found by this package.

Every module here with an ``ASSIGNMENT`` (``order`` for 01_order, ``rope`` for 06_rope ...)
declares, in notebook order, a ``FunctionCheck`` per graded function: its fixed cases
(the numbers the notebook shows, the edges), its random cases, and its known mistakes,
each with the wrong implementation that recognises it. ``CHECKS`` gathers them under
their spec names; where the notebook teaches each one (its exercise) comes from the
notebook itself, through ``helpers.teacher.exercises``.

How the grading engine uses a check, per case: ``want = expected(check, case)`` before
any learner code runs; ``got = normalize(check.kind, value)``; ``ok, detail =
agree(check.kind, got, want)``; when not ok, ``diagnose(check, case, got)`` gives the
``Mistake`` to name, or None. When ``check.check_mutation`` and an argument changed
during the call, the engine reports ``mutation_mistake(check)``.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pkgutil

import numpy as np

from helpers.teacher import exercises
from helpers.teacher import reference as ref
from helpers.teacher.checks.base import KINDS, MUTATION, PARTS, Case, FunctionCheck, Mistake
from helpers.teacher.checks.compare import agree, normalize

__all__ = [
    "CHECKS",
    "KINDS",
    "MUTATION",
    "PARTS",
    "Case",
    "FunctionCheck",
    "Mistake",
    "agree",
    "cases",
    "checks_for",
    "diagnose",
    "expected",
    "mutation_mistake",
    "normalize",
]


def _notebook_modules() -> list:
    """The modules of this package that grade a notebook, in assignment order."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "ASSIGNMENT"):
            found.append(module)
    return sorted(found, key=lambda m: m.ASSIGNMENT)


def _build() -> dict[str, FunctionCheck]:
    where = exercises.load()
    checks: dict[str, FunctionCheck] = {}
    for module in _notebook_modules():
        for check in module.CHECKS:
            found = where.get(check.name, {})
            checks[check.name] = dataclasses.replace(
                check,
                assignment=module.ASSIGNMENT,
                section=found.get("section", ""),
                points=float(found.get("points", 0.0)),
            )
    return checks


CHECKS: dict[str, FunctionCheck] = _build()


def checks_for(assignment: str) -> list[FunctionCheck]:
    """The checks of one notebook, in notebook order; an unknown id raises ValueError.

    A translated notebook is checked as its English one: ``06_rope_ko`` as ``06_rope``.
    """
    from helpers.i18n import split_assignment

    base = split_assignment(assignment)[0]
    found = [c for c in CHECKS.values() if c.assignment == base]
    if not found:
        known = sorted({c.assignment for c in CHECKS.values()})
        raise ValueError(f"assignment must be one of {known}, got {assignment!r}")
    return found


def stand_ins(name: str) -> tuple[list[str], list[str]]:
    """The graded names the reference stands in for while ``name`` is checked: every other
    graded function and every graded constant of the course, as (functions, constants)."""
    functions = [n for n, c in CHECKS.items() if n != name and c.kind != "constant"]
    constants = [n for n, c in CHECKS.items() if n != name and c.kind == "constant"]
    return functions, constants


def mutation_mistake(check: FunctionCheck) -> Mistake:
    """The mistake to name when ``check``'s function changed one of its arguments."""
    for m in check.mistakes:
        if m.detect == "mutation":
            return m
    return MUTATION


def cases(check: FunctionCheck, rng: np.random.Generator | None = None) -> list[Case]:
    """The fixed cases of ``check``, then its random ones when ``rng`` is given."""
    out = list(check.fixed())
    if rng is not None:
        out.extend(check.random(rng))
    return out


def expected(check: FunctionCheck, case: Case):
    """The reference output of ``check`` on ``case`` (``helpers.reference``).

    Kind "constant": the constant's value; otherwise the reference function (or the
    check's own ``reference``, e.g. the report that write_report's files must hold) called
    on copies of the case's arguments, so the case itself never changes.
    """
    if check.kind == "constant":
        return getattr(ref, check.name)
    fn = check.reference or getattr(ref, check.name)
    return fn(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))


def diagnose(check: FunctionCheck, case: Case, got) -> Mistake | None:
    """The catalogued mistake whose wrong output agrees with ``got`` on ``case``, or None.

    Only mistakes that show in the output are considered, only when the reference
    disagrees with ``got``, and only when the wrong output differs from the reference on
    this case. A mistake is named when ``got`` agrees with one of its wrong implementations,
    or when it has the mistake's property (``Mistake.shows``), however it was written; a
    mistake's ``alike`` that gives the same output on the case makes it name none.
    NaN matches NaN here (a softmax without max subtraction returns nan).
    Where the reference refuses the case (bad input: it raises ValueError), a value that
    agrees with a mistake's output names that mistake (a table lookup that wraps around
    instead of refusing a position past its end).
    """
    if not any(m.detect == "output" for m in check.mistakes):
        return None
    try:
        got = normalize(check.kind, got)
    except ValueError:
        return None
    refused = False
    try:
        want = expected(check, case)
    except ValueError:
        want, refused = None, True  # the reference refuses this case: any answer is wrong
    # (an "optional" or "position" answer may be None without being refused: breaking_point
    # finds no break)
    if not refused and agree(check.kind, got, want)[0]:
        return None
    outputs = [m for m in check.mistakes if m.detect == "output"]
    for found in (
        next((m for m in outputs if _made_by(check, m, case, got, want, refused)), None),
        next((m for m in outputs if m.shows is not None and _shows(m, case, got, want)), None),
    ):
        if found is None:
            continue
        # a mistake that can give the very output of another it is ``alike`` (chain_entropy's
        # uniform pi and marginal h1 on a symmetric chain): a case that cannot tell them
        # apart names neither, as either name could send the learner to a line that is right
        for other in outputs:
            if other.name in found.alike and _made_by(check, other, case, got, want, refused):
                return None
        return found
    return None


def _made_by(check: FunctionCheck, mistake: Mistake, case: Case, got, want, refused) -> bool:
    """Whether one of ``mistake``'s wrong implementations gives ``got`` on ``case`` (and
    differs from the reference there)."""
    for impl in (mistake.impl, *mistake.variants):
        if impl is None:
            continue
        try:
            with np.errstate(all="ignore"):
                wrong = impl(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
            normalize(check.kind, wrong)
        except (ValueError, TypeError, ArithmeticError, IndexError):
            continue
        if not refused and agree(check.kind, wrong, want)[0]:
            continue
        if agree(check.kind, got, wrong, nan_equal=True, atol=mistake.atol)[0]:
            return True
    return False


def _shows(mistake: Mistake, case: Case, got, want) -> bool:
    """Whether ``got`` has the property of ``mistake`` (an output it cannot be read on has not)."""
    try:
        with np.errstate(all="ignore"):
            return bool(mistake.shows(case, got, want))
    except (ValueError, TypeError, ArithmeticError, IndexError, KeyError):
        return False

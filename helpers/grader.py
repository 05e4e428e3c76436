"""The grader as the notebooks call it: ``grade`` in a hidden test, ``self_check`` last.

``grade("apply_rope")`` checks the learner's function of that name (from the calling
notebook's namespace) on fixed and fresh random cases and raises ``WrongAnswer``, printed
as its message alone, on the first failure; ``self_check("06_rope")`` prints a table of
every graded function of the notebook and never raises. Both run in the learner's kernel
(``helpers.teacher.kernel``). While nbgrader autogrades, they only print one line: the
verdicts then come from the isolated grader (``helpers.teacher.isolated``).

In the learner build, which has no ``helpers.teacher``, ``self_check`` runs the classroom
self-check (``helpers.classcheck``: the public checks, from expected values) and ``grade``
says that grading happens on the teacher's side.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping

import helpers
from helpers import session
from helpers.i18n import tr

__all__ = ["TEACHER_SIDE", "grade", "self_check"]

TEACHER_SIDE = (
    "The checks and the reference are not part of this installation: "
    "grading happens on the teacher's side."
)


def _autograding() -> bool:
    return os.environ.get("NBGRADER_EXECUTION") == "autograde"


def _caller_globals(depth: int = 2) -> dict:
    frame = inspect.currentframe()
    try:
        for _ in range(depth):
            frame = frame.f_back if frame is not None else None
        return frame.f_globals if frame is not None else {}
    finally:
        del frame


def grade(name: str, seed: int | None = None, namespace: Mapping | None = None) -> None:
    """Check the learner's ``name`` against the reference; raise ``WrongAnswer`` if wrong.

    Runs the fixed and the random cases of the function's check in this process.
    ``seed`` replays the random cases of an earlier run; ``namespace`` defaults to the
    calling notebook's globals.
    """
    if _autograding():
        print(tr("{name}: graded outside the kernel", name=name))
        return
    if not helpers.has_teacher():
        print(tr(TEACHER_SIDE))
        return
    from helpers.teacher import kernel

    kernel.grade(name, namespace if namespace is not None else _caller_globals(), seed)


def self_check(assignment: str, seed: int | None = None, namespace: Mapping | None = None):
    """Run the checks of every graded function of ``assignment`` here and print a table.

    Never raises: a failing or unwritten function is a row of the table. Returns the
    report (None when the checks are not installed or while nbgrader autogrades).
    """
    if _autograding():
        print(tr("self-check of {assignment}: graded outside the kernel", assignment=assignment))
        return None
    if not helpers.has_teacher():
        from helpers import classcheck

        ns = namespace if namespace is not None else _caller_globals()
        if classcheck.available():
            return classcheck.self_check(
                assignment, ns, broken_cells=session.broken(), notes=session.broken_lines()
            )
        print(
            tr(
                "self-check of {assignment}: {problem}",
                assignment=assignment,
                problem=tr(TEACHER_SIDE),
            )
        )
        return None
    from helpers.teacher import kernel

    ns = namespace if namespace is not None else _caller_globals()
    return kernel.self_check(assignment, ns, seed)


def _judge_callee(callee: str, calls) -> str | None:
    """What ``callee`` gets wrong now on the calls a failed visible test made to it
    (``helpers.session``): its checks on those very values where the checks are installed;
    in the learner build, its public checks (the values are unknown to them)."""
    if helpers.has_teacher():
        from helpers.teacher import kernel

        return kernel.wrong_on(callee, calls)
    from helpers import classcheck

    if not calls or not classcheck.available():
        return None
    return classcheck.wrong_now(callee, calls[0][0])


def _type_note(name: str, value) -> str | None:
    """What the grader says of ``value`` returned by ``name`` when its type is wrong (a list,
    a tuple or a plain number where an array is asked for): the grader's own words."""
    if helpers.has_teacher():
        from helpers.teacher import checks
        from helpers.teacher.checks.compare import not_an_array

        check = checks.CHECKS.get(name)
        kind = getattr(check, "kind", None)
    else:
        from helpers import classcheck

        if not classcheck.available():
            return None
        kind = classcheck.kind_of(name)
        not_an_array = classcheck.shipped_tools()[3]
    if kind != "array":
        return None
    try:
        not_an_array(value)
    except ValueError as exc:
        return f"{name} {exc}."
    return None


def _section(name: str) -> str | None:
    """The exercise that teaches ``name`` ("Exercise 3: `alibi_attention`"), in the current
    language: ``exercises.json`` where the checks are installed, else the classroom checks."""
    if helpers.has_teacher():
        from helpers.teacher import exercises
        from helpers.teacher.verdict import section_text

        section = exercises.load().get(name, {}).get("section")
        return section_text(section) if section else None
    from helpers import classcheck

    return classcheck.section_of(name) if classcheck.available() else None


def _place(name: str) -> str | None:
    """The notebook and exercise that teach ``name`` ("10_long_context, Exercise 5:
    `yarn_thetas`"), from the same tables as ``_section``."""
    section = _section(name)
    if not section:
        return None
    if helpers.has_teacher():
        from helpers.teacher import exercises

        notebook = exercises.load().get(name, {}).get("assignment")
    else:
        from helpers import classcheck

        notebook = classcheck.notebook_of(name)
    return f"{notebook}, {section}" if notebook else section


session.judge_callees_with(_judge_callee)
session.sections_with(_section)
session.note_types_with(_type_note)
session.places_with(_place)

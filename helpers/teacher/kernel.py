"""Grading in the learner's kernel: ``grade`` in a test cell, ``self_check`` in the last cell.

The notebooks call them through ``helpers.grader``. They run the checks of
``helpers.teacher.checks`` against the functions of the notebook's namespace, in this
process, with a time limit per function: the self-study path. Autograding never relies on
them: its verdicts come from the isolated grader (``helpers.teacher.isolated``).
"""

from __future__ import annotations

import contextlib
import copy
import os
import signal
import tempfile
import threading
import warnings
from collections.abc import Mapping, MutableMapping

from helpers import session
from helpers.i18n import DEFAULT, speaking, split_assignment, tr
from helpers.report import count_line, learner_warnings, show
from helpers.teacher import checks, standins
from helpers.teacher import reference as ref
from helpers.teacher.calling import call, read_small, report_names
from helpers.teacher.checks.base import Case
from helpers.teacher.codec import describe
from helpers.teacher.verdict import (
    FunctionResult,
    Outcome,
    Report,
    cases_of,
    expectations,
    judge,
    judge_case,
    message,
    named,
    new_seed,
    note_stand_ins,
    outcome_of,
    replay_line,
)

__all__ = ["WrongAnswer", "grade", "self_check", "wrong_on"]


class WrongAnswer(AssertionError):
    """A graded function gave a wrong answer.

    IPython prints it as its message alone (``_render_traceback_``): no traceback
    through the grading code, no test source.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def _render_traceback_(self) -> list[str]:
        return [
            f"WrongAnswer: {line}" if i == 0 else line
            for i, line in enumerate(self.message.splitlines())
        ]


class _Timeout(BaseException):
    """Raised in the kernel when a learner's function runs past its time limit."""


class _Alarm:
    """A time limit for code run in the main thread (SIGALRM); does nothing elsewhere."""

    def __init__(self, seconds: float) -> None:
        self.seconds = float(seconds)
        self.active = threading.current_thread() is threading.main_thread() and hasattr(
            signal, "setitimer"
        )
        self.previous = None

    def __enter__(self) -> _Alarm:  # noqa: PYI034
        if self.active:

            def on_alarm(signum, frame):
                raise _Timeout()

            self.previous = signal.signal(signal.SIGALRM, on_alarm)
            # Fires again every second in case the learner's code swallows the first one.
            signal.setitimer(signal.ITIMER_REAL, self.seconds, 1.0)
        return self

    def __exit__(self, *exc) -> None:
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous or signal.SIG_DFL)


def _call_here(target, check, case) -> Outcome:
    """Run one case in this process, on copies of its arguments."""
    args = copy.deepcopy(tuple(case.args))
    kwargs = copy.deepcopy(dict(case.kwargs))
    reraise = (_Timeout, KeyboardInterrupt)
    if check.kind != "files":
        return outcome_of(call(target, check.kind, args, kwargs, check.check_mutation, reraise))
    with tempfile.TemporaryDirectory(prefix="pe-check-") as tmp:
        paths = tuple(os.path.join(tmp, n) for n in report_names(case))
        outcome = outcome_of(call(target, "files", paths, {}, check.check_mutation, reraise))
        texts = tuple(read_small(p) for p in paths)
    outcome.files = None if None in texts else texts
    return outcome


def grade_in_namespace(check, namespace: Mapping, seed: int, replay: str) -> FunctionResult:
    """Run one function's checks against ``namespace[check.name]`` in this process."""
    name = check.name
    cases = cases_of(check, seed)
    wants = expectations(check, cases)  # before any learner code runs
    if name not in namespace:
        stop = session.last_stop()
        broken = session.broken().get(name)
        if broken is not None:
            text = tr(
                "{name} is not defined: the answer cell that defines it, {where}, stopped "
                "with {error}. Fix that cell and run it again.",
                name=name,
                where=broken.where(),
                error=broken.error.rstrip("."),
            )
        elif stop is not None:
            text = tr(
                "{name} is not defined: its cell has not run since the run stopped at {where}.",
                name=name,
                where=stop.short(),
            )
            text += "\n" + tr(
                "{where} stopped with {error}. Fix it, then run it and the cells below it "
                "(Run > Run Selected Cell and All Below).",
                where=stop.where(),
                error=stop.error,
            )
        elif check.kind == "constant":
            text = tr(
                "{name} is not defined: run the cell that defines this constant first.", name=name
            )
        else:
            text = tr(
                "{name} is not defined: run the cell that defines this function first.", name=name
            )
        return FunctionResult(name, False, message(check, text, None, ""), None, len(cases))
    target = namespace[name]
    if check.kind != "constant" and not callable(target):
        text = tr("{name} is not a function (it is {what}).", name=name, what=describe(target))
        return FunctionResult(name, False, message(check, text, None, ""), None, len(cases))
    outcomes: list[Outcome] = []
    used: set[str] = set()
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        try:
            with _Alarm(check.timeout), _stand_ins(check, namespace, used):
                for case in cases:
                    outcome = _call_here(target, check, case)
                    outcomes.append(outcome)
                    if (outcome.error or {}).get("not_implemented"):
                        break  # a stub: the other cases would say the same
        except _Timeout:
            outcomes.append(
                Outcome(error={"type": "Timeout", "timeout": True, "seconds": check.timeout})
            )
    result = judge(check, cases, wants, outcomes, replay)
    result.used = tuple(sorted(used))
    result.warnings = learner_warnings(warned)
    return result


@contextlib.contextmanager
def _stand_ins(check, namespace, used: set):
    """While ``check``'s function runs, the graded names it may lean on are the reference's.

    A mistake in one exercise does not cost another: the graded functions the namespace
    defines and the reference of ``check``'s function calls (never one that calls it
    back), and the graded constants it defines, are the reference's meanwhile
    (``standins.plan``, as in autograde), and ``used`` collects the functions it called.
    The namespace is restored afterwards.
    """
    if not isinstance(namespace, MutableMapping):
        yield
        return
    functions, constants = checks.stand_ins(check.name)
    functions, constants = standins.plan(
        check.name, namespace, standins.namespace_calls(namespace), functions, constants
    )
    swap = {other: getattr(ref, other) for other in constants}
    swap.update({other: _recorded(other, getattr(ref, other), used) for other in functions})
    saved = {n: namespace[n] for n in swap if n in namespace}
    namespace.update(swap)
    try:
        yield
    finally:
        for n in swap:
            if n in saved:
                namespace[n] = saved[n]
            else:
                namespace.pop(n, None)


def _recorded(name: str, function, used: set):
    def stand_in(*args, **kwargs):
        used.add(name)
        return function(*args, **kwargs)

    stand_in.__name__ = stand_in.__qualname__ = name
    return stand_in


def wrong_on(name: str, calls) -> str | None:
    """What the graded function ``name`` gets wrong now on ``calls`` (``(function, args,
    kwargs)`` as a visible test called it), checked as its own test checks it: against the
    reference, with the reference standing in for the functions it calls. None when it is
    right on every call (or is no graded function, or a call's input is bad input)."""
    check = checks.CHECKS.get(name)
    if check is None or check.kind in ("constant", "files"):
        return None
    for function, args, kwargs in calls:
        case = Case(tuple(args), dict(kwargs), tr("the values this test gave it"), "random")
        try:
            want = checks.expected(check, case)
        except Exception:  # noqa: BLE001, S112 - bad input there: not this function's fault
            continue
        namespace = getattr(function, "__globals__", {})
        try:
            with _Alarm(check.timeout), _stand_ins(check, namespace, set()):
                outcome = _call_here(function, check, case)
        except _Timeout:
            outcome = Outcome(error={"type": "Timeout", "timeout": True, "seconds": check.timeout})
        failure = judge_case(check, case, want, outcome)
        if failure is not None:
            text, mistake = failure
            if mistake is not None:
                text = text.rstrip(".") + " " + tr("({mistake})", mistake=tr(mistake.name))
            return text
    return None


def _seed(seed) -> int:
    if seed is None:
        return new_seed()
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    return seed


def grade(name: str, namespace: Mapping, seed: int | None = None) -> None:
    """Check ``namespace[name]`` on the fixed and random cases; raise ``WrongAnswer`` on failure."""
    if name not in checks.CHECKS:
        raise ValueError(f"name must be a graded function of the course, got {name!r}")
    seed = _seed(seed)
    replay = replay_line(seed, f"grade({name!r}, seed={seed})")
    result = grade_in_namespace(checks.CHECKS[name], namespace, seed, replay)
    if not result.passed:
        raise WrongAnswer(result.message)
    print(named(name, result.message))


def self_check(assignment: str, namespace: Mapping, seed: int | None = None) -> Report | None:
    """Check every graded function of ``assignment`` and print a table; never raises.

    The table speaks the notebook's language (``helpers.start(lang=...)``), or the
    language of a translated assignment's id (``"06_rope_ko"``: Korean).
    """
    base, lang = split_assignment(str(assignment))
    with speaking(lang if lang != DEFAULT else None):
        return _self_check(assignment, base, namespace, seed)


def _self_check(assignment: str, base: str, namespace: Mapping, seed: int | None) -> Report | None:
    if seed is None:
        seed = new_seed()
    report = Report(notebook=str(assignment), seed=int(seed))
    try:
        todo = checks.checks_for(base)
    except Exception as exc:  # noqa: BLE001  (the self-check never raises)
        print(
            tr(
                "self-check of {assignment}: cannot list its checks ({error})",
                assignment=assignment,
                error=exc,
            )
        )
        return None
    replay = replay_line(seed, f"self_check({assignment!r}, seed={seed})")
    for check in todo:
        try:
            result = grade_in_namespace(check, namespace, seed, replay)
        except Exception as exc:  # noqa: BLE001
            result = FunctionResult(
                check.name, False, tr("could not be checked: {error}", error=exc)
            )
        report.results.append(result)
    note_stand_ins(report.results)
    passed, total = count_line(report.rows())
    header = tr(
        "self-check of {assignment} (seed {seed}): {passed} of {total} graded functions passed",
        assignment=assignment,
        seed=seed,
        passed=passed,
        total=total,
    )
    notes = session.broken_lines()
    text = report.render(header) + "".join("\n\n" + line for line in notes)
    show(text, report.html(header, notes))
    return report

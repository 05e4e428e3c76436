"""Grading a notebook in isolation: the answer cells in a worker process, the verdicts here.

``check_notebook`` takes the answer cells of a notebook as submitted, computes every
expected value before any learner code runs, starts an isolated worker
(``helpers.teacher.channel``) that imports the answer cells as a module, sends it the
cases and judges its replies (``helpers.teacher.verdict``). Nothing the learner's code
does inside its own process changes a verdict. ``check_command`` is
``python -m helpers check NB``.
"""

from __future__ import annotations

import ast
import os
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from helpers.teacher import checks
from helpers.teacher.calling import ANSWERS, read_small, report_names
from helpers.teacher.channel import Worker, WorkerDied, WorkerTimeout
from helpers.teacher.codec import encode
from helpers.teacher.notebook import (
    NotebookError,
    answer_source,
    functions_of,
    read_notebook,
    where,
)
from helpers.teacher.verdict import (
    FunctionResult,
    Outcome,
    Report,
    cases_of,
    expectations,
    judge,
    message,
    new_seed,
    outcome_of,
)

__all__ = ["IMPORT_TIMEOUT", "check_command", "check_notebook"]

# Seconds the answer cells may take to import in the worker.
IMPORT_TIMEOUT = 20.0


@dataclass
class _Plan:
    """One function to grade: its check, cases and expected values."""

    check: Any
    cases: list
    wants: list


def _load_failure(error: dict, attempts: list, starts: list) -> str:
    blocked = _attempt_text(attempts)
    if blocked:
        return f"the answer cells could not be imported: {blocked}"
    if error.get("died"):
        return f"the answer cells could not be imported: {error['message']}"
    if error.get("timeout"):
        return (
            f"the answer cells could not be imported: they did not finish within "
            f"{IMPORT_TIMEOUT:.0f} s (an endless loop at the top level of a cell?)"
        )
    etype, msg = error.get("type", "an error"), error.get("message", "")
    cell = where(error.get("line"), starts)
    if etype == "SystemExit":
        return f"the answer cells could not be imported: {cell} calls sys.exit()"
    return f"the answer cells could not be imported: {etype} in {cell}: {msg}"


def _is_helpers_attempt(attempt) -> bool:
    return str(attempt).startswith(("import helpers", "open "))


def _attempt_text(attempts: list) -> str:
    if not attempts:
        return ""
    first = str(attempts[0])
    if _is_helpers_attempt(first):
        return (
            f"they tried to use the course's own code ({first}); answers must be written "
            f"in the answer cells, not imported from helpers"
        )
    return f"they tried something grading does not allow ({first})"


def check_notebook(
    path_or_nb,
    seed: int | None = None,
    names: Iterable[str] | None = None,
    replay_path: str | None = None,
) -> Report:
    """Grade the answer cells of a notebook in an isolated worker process.

    ``names`` are the graded functions to check (default: those with a grade cell
    ``test_<name>...`` and those of the assignment named like the notebook). ``seed``
    replays the random cases of an earlier run. Raises ``NotebookError`` when the
    notebook cannot be read, ``RuntimeError`` when the checks are not installed.
    """
    nb, label = read_notebook(path_or_nb)
    if seed is None:
        seed = new_seed()
    elif isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if names is None:
        names = functions_of(nb, label, checks)
    names = list(names)
    unknown = [n for n in names if n not in checks.CHECKS]
    if unknown:
        raise ValueError(f"names must be graded functions of the course, got {unknown!r}")
    shown = replay_path or (label if label != "<notebook>" else "NOTEBOOK")
    replay = (
        f"Random cases from seed {seed}; replay with: python -m helpers check {shown} --seed {seed}"
    )
    report = Report(notebook=label, seed=int(seed))

    # Everything expected is computed here, before any learner code runs.
    plans = []
    for name in names:
        check = checks.CHECKS[name]
        cases = cases_of(check, seed)
        plans.append(_Plan(check, cases, expectations(check, cases)))
    if not plans:
        return report

    source, starts = answer_source(nb)
    try:
        ast.parse(source, filename=ANSWERS)
    except SyntaxError as exc:
        report.problem = (
            f"the answer cells could not be imported: SyntaxError in "
            f"{where(exc.lineno, starts)}: {exc.msg}"
        )
    except (ValueError, RecursionError, MemoryError) as exc:
        report.problem = f"the answer cells could not be imported: {type(exc).__name__}"
    if report.problem is not None:
        for plan in plans:
            report.results.append(_failed(plan, report.problem, replay))
        return report

    with tempfile.TemporaryDirectory(prefix="pe-grade-") as workdir:
        workdir = os.path.realpath(workdir)
        _run_plans(plans, source, starts, workdir, replay, report)
    return report


def _failed(plan: _Plan, problem: str, replay: str) -> FunctionResult:
    text = f"{plan.check.name} could not be graded: {problem}."
    return FunctionResult(
        plan.check.name, False, message(plan.check, text, None, replay), None, len(plan.cases)
    )


def _run_plans(
    plans: list[_Plan], source: str, starts: list, workdir: str, replay: str, report: Report
) -> None:
    worker: Worker | None = None
    try:
        for index, plan in enumerate(plans):
            if report.problem is not None:
                report.results.append(_failed(plan, report.problem, replay))
                continue
            if worker is None:
                cpu = IMPORT_TIMEOUT + sum(p.check.timeout for p in plans[index:]) + 10
                worker, problem = _start_worker(workdir, cpu, source, starts)
                if problem is not None:
                    report.problem = problem
                    report.results.append(_failed(plan, problem, replay))
                    continue
            outcomes, attempts, alive = _call_worker(worker, plan, workdir)
            if not alive:
                worker.stop()
                worker = None
            result = judge(
                plan.check,
                plan.cases[: len(outcomes)],
                plan.wants[: len(outcomes)],
                outcomes,
                replay,
            )
            blocked = _attempt_text([a for a in attempts if _is_helpers_attempt(a)])
            if blocked:  # the course's own code was reached for: whatever it returned
                result = FunctionResult(
                    plan.check.name,
                    False,
                    message(plan.check, f"{plan.check.name}: {blocked}.", None, replay),
                    None,
                    len(plan.cases),
                )
            report.results.append(result)
    finally:
        if worker is not None:
            worker.stop()


def _start_worker(
    workdir: str, cpu: float, source: str, starts: list
) -> tuple[Worker | None, str | None]:
    try:
        worker = Worker(workdir, cpu)
    except (WorkerDied, WorkerTimeout, OSError) as exc:
        return None, f"the grading process could not start ({exc or type(exc).__name__})"
    deadline = time.monotonic() + IMPORT_TIMEOUT
    try:
        worker.send({"op": "load", "source": source}, deadline)
        reply = worker.receive(deadline)
    except WorkerDied as exc:
        worker.stop()
        return None, _load_failure({"died": True, "message": str(exc)}, [], starts)
    except WorkerTimeout:
        worker.stop()
        return None, _load_failure({"timeout": True}, [], starts)
    if not reply.get("loaded"):
        worker.stop()
        error = reply.get("error") if isinstance(reply.get("error"), dict) else {}
        return None, _load_failure(error, list(reply.get("attempts") or []), starts)
    return worker, None


def _call_worker(worker: Worker, plan: _Plan, workdir: str) -> tuple[list, list, bool]:
    """Outcomes of the cases run so far, blocked attempts, and whether the worker lives on."""
    check = plan.check
    file_names = [report_names(c) for c in plan.cases] if check.kind == "files" else []
    cases = []
    for i, case in enumerate(plan.cases):
        args = tuple(case.args)
        if check.kind == "files":
            args = tuple(os.path.join(workdir, n) for n in file_names[i])
        cases.append({"args": encode(list(args)), "kwargs": encode(dict(case.kwargs))})
    deadline = time.monotonic() + float(check.timeout)
    outcomes: list[Outcome] = []
    if check.kind == "files":
        _remove_files(workdir, file_names)
    try:
        worker.send(
            {
                "op": "call",
                "name": check.name,
                "kind": check.kind,
                "cases": cases,
                "mutation": bool(check.check_mutation),
            },
            deadline,
        )
        while True:
            reply = worker.receive(deadline)
            if reply.get("done"):
                return outcomes, list(reply.get("attempts") or []), True
            outcome = outcome_of(reply)
            if check.kind == "files" and outcome.error is None:
                i = len(outcomes)
                texts = tuple(read_small(os.path.join(workdir, n)) for n in file_names[i])
                outcome.files = None if None in texts else texts
                _remove_files(workdir, file_names)
            outcomes.append(outcome)
            if len(outcomes) > len(plan.cases):
                worker.stop()
                return outcomes[: len(plan.cases)], [], False
    except WorkerTimeout:
        outcomes.append(
            Outcome(error={"type": "Timeout", "timeout": True, "seconds": check.timeout})
        )
        return outcomes[: len(plan.cases)], [], False
    except WorkerDied as exc:
        outcomes.append(Outcome(error={"type": "Died", "died": True, "message": str(exc)}))
        return outcomes[: len(plan.cases)], [], False


def _remove_files(workdir: str, file_names: list) -> None:
    for pair in file_names:
        for name in pair:
            try:
                os.unlink(os.path.join(workdir, name))
            except OSError:
                pass


# --------------------------------------------------------------------------- command line


def check_command(path: str | os.PathLike, seed: int | None = None) -> int:
    """``python -m helpers check NB``: grade a saved notebook like autograde, print a table.

    Exit status: 0 when everything passed, 1 when something failed, 2 when the notebook
    cannot be read or graded.
    """
    try:
        report = check_notebook(path, seed=seed)
    except (NotebookError, RuntimeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not report.results:
        print(
            f"error: {path}: no graded functions found (no grade cell test_<function>)",
            file=sys.stderr,
        )
        return 2
    passed = sum(r.passed for r in report.results)
    print(f"{path} (seed {report.seed}): {passed} of {len(report.results)} graded functions passed")
    print(report.table())
    for result in report.results:
        if not result.passed:
            print(f"\n{result.name}:\n{result.message}")
    return 0 if report.passed else 1

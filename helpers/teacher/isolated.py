"""Grading a notebook in isolation: the answer cells in a worker process, the verdicts here.

``check_notebook`` takes the answer cells of a notebook as submitted, computes every
expected value before any learner code runs, starts an isolated worker
(``helpers.teacher.channel``) that runs the answer cells one by one, sends it the cases
and judges its replies (``helpers.teacher.verdict``). While one function runs, the other
graded functions the answer cells define and its reference calls answer as the reference
does (``helpers.teacher.standins``: the worker asks this process, which asks a process of
the reference's own, under limits), so a mistake in one exercise does not cost another.
Nothing the learner's code does inside its own process changes a verdict. One notebook's
learner code has ``NOTEBOOK_BUDGET`` seconds of wall-clock time in all, kept here: the
worker is ended when it is spent, whatever it does with its signals. ``check_command`` is
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

import numpy as np

from helpers.i18n import speaking, tr
from helpers.report import count_line
from helpers.teacher import checks, standins
from helpers.teacher import reference as ref
from helpers.teacher.calling import ANSWERS, MAX_REPORT_FILE, report_names
from helpers.teacher.channel import SPARES, Worker, WorkerDied, WorkerTimeout
from helpers.teacher.codec import contains_opaque, decode, encode
from helpers.teacher.notebook import (
    AnswerCell,
    NotebookError,
    answer_cell_list,
    functions_of,
    notebook_language,
    read_notebook,
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
    note_stand_ins,
    outcome_of,
    replay_line,
)

__all__ = ["CELL_TIMEOUT", "check_command", "check_notebook"]

# Seconds one answer cell may take to run in the worker.
CELL_TIMEOUT = 10.0
# Seconds of wall-clock time one notebook's learner code may take in all (loading the
# answer cells and every call; starting workers is not counted). An honest notebook takes
# a few seconds.
NOTEBOOK_BUDGET = 60.0
# Seconds the grading process waits past a limit the worker keeps itself (its alarm).
GRACE = 2.0


@dataclass
class _Plan:
    """One function to grade: its check, cases and expected values."""

    check: Any
    cases: list
    wants: list


def _attempt_text(attempts: list) -> str:
    if not attempts:
        return ""
    first = str(attempts[0])
    if first.startswith(("import helpers", "open ")):
        return tr(
            "it tried to use the course's own code ({attempt}); answers must be written "
            "in the answer cells (the course's plots, widgets and validate may be imported)",
            attempt=first,
        )
    return tr("it tried something grading does not allow ({attempt})", attempt=first)


def _cell_problem(reply: dict, cell: AnswerCell) -> str | None:
    """What went wrong when the worker ran one answer cell, in plain words, or None."""
    attempts = [str(a) for a in reply.get("attempts") or []]
    changed = [str(c) for c in reply.get("changed") or []]
    if reply.get("ok") and not attempts and not changed:
        return None
    if attempts:
        return _attempt_text(attempts)
    if changed:
        return tr(
            "it replaces {names}, which grading does not allow "
            "(the change was undone for the other answer cells)",
            names=", ".join(changed[:3]),
        )
    if reply.get("timeout"):
        return _cell_timeout()
    error = reply.get("error") if isinstance(reply.get("error"), dict) else {}
    etype, msg = str(error.get("type", "an error"))[:80], str(error.get("message", ""))[:300]
    line = error.get("line")
    at = tr(" at line {line}", line=int(line) - cell.line + 1) if isinstance(line, int) else ""
    if etype == "SystemExit":
        return tr("it calls sys.exit(){at}", at=at)
    if msg:
        return tr("it raised {type}{at}: {message}", type=etype, at=at, message=msg)
    return tr("it raised {type}{at}", type=etype, at=at)


def _cell_timeout() -> str:
    return tr(
        "it did not finish within {seconds:.0f} s (an endless loop at the top level of the cell?)",
        seconds=CELL_TIMEOUT,
    )


class _Session:
    """A worker with the answer cells loaded, one by one.

    A cell that raises, refuses to finish, ends the worker or reaches for what grading
    does not allow costs only the names it defines: a worker that died or hung is started
    again without that cell.
    """

    def __init__(self, workdir: str, cells: list[AnswerCell], cpu: float) -> None:
        self.workdir, self.cells, self.cpu = workdir, cells, cpu
        # Wall-clock end of the notebook's budget (moved on by each worker's start).
        self.end = time.monotonic() + NOTEBOOK_BUDGET
        self.reference = standins.ReferenceProcess(workdir, cpu)
        self.defined = {n for c in cells for n in c.names}
        self.learner = standins.learner_calls(c.code for c in cells)
        self.failed: dict[str, str] = {}  # grade id -> what went wrong
        self.stopped: dict[str, str] = {}  # grade id -> "timed out" or "crashed" (of failed)
        self.timeouts: list[str] = []  # what was stopped for running past its time limit
        self.worker: Worker | None = None
        self.problem: str | None = None  # grading cannot go on at all
        for cell in cells:
            try:
                ast.parse(cell.code, filename=ANSWERS)
            except SyntaxError as exc:
                line = (exc.lineno or cell.line) - cell.line + 1
                self.failed[cell.grade_id] = tr(
                    "it has a SyntaxError at line {line}: {message}", line=line, message=exc.msg
                )
            except (ValueError, RecursionError, MemoryError) as exc:
                self.failed[cell.grade_id] = tr(
                    "it cannot be read ({type})", type=type(exc).__name__
                )

    def cell_problem_of(self, name: str) -> str | None:
        """Why ``name`` cannot be graded: a failed answer cell defines it or is its own."""
        for cell in self.cells:
            mine = name in cell.names or cell.grade_id == f"answer_{name}"
            if mine and cell.grade_id in self.failed:
                return tr(
                    "the answer cell {cell} could not be run: {problem}",
                    cell=cell.grade_id,
                    problem=self.failed[cell.grade_id],
                )
        return None

    def deadline(self, seconds: float) -> float:
        """``seconds`` from now, or the end of the notebook's budget when sooner."""
        return min(time.monotonic() + seconds, self.end)

    def spent(self) -> bool:
        """Whether the notebook's budget is spent."""
        return time.monotonic() >= self.end

    def stopped_of(self, name: str) -> str:
        """ "timed out" or "crashed" when the answer cell that defines ``name`` was stopped
        for time or ended the grading process while it loaded; else ""."""
        for cell in self.cells:
            mine = name in cell.names or cell.grade_id == f"answer_{name}"
            if mine and cell.grade_id in self.stopped:
                return self.stopped[cell.grade_id]
        return ""

    def ready(self) -> Worker | None:
        """The loaded worker (started when needed), or None with ``problem`` set."""
        for _attempt in range(len(self.cells) + 2):
            if self.worker is not None or self.problem is not None:
                return self.worker
            if self.spent():
                self.problem = _out_of_time()
                return None
            self._start()
        self.problem = self.problem or tr("the answer cells could not be loaded")
        return None

    def _start(self) -> None:
        good = [c for c in self.cells if c.grade_id not in self.failed]
        started = time.monotonic()
        try:
            worker = SPARES.take(self.workdir, self.cpu)  # a new one when none waits
        except (WorkerDied, WorkerTimeout, OSError) as exc:
            self.problem = tr(
                "the grading process could not start ({error})", error=exc or type(exc).__name__
            )
            return
        self.end += time.monotonic() - started  # starting is not the learner's time
        pending = list(good)
        load = {
            "op": "load",
            "cells": [{"id": c.grade_id, "code": c.code} for c in good],
            "seconds": CELL_TIMEOUT,
        }
        try:
            worker.send(load, self.deadline(CELL_TIMEOUT))
            while True:
                reply = worker.receive(self.deadline(CELL_TIMEOUT + GRACE))
                if reply.get("loaded"):
                    self.worker = worker
                    return
                if not pending or reply.get("cell") != pending[0].grade_id:
                    raise WorkerDied("it answered out of turn")
                cell = pending.pop(0)
                problem = _cell_problem(reply, cell)
                if problem is not None:
                    self.failed[cell.grade_id] = problem
                if reply.get("timeout"):
                    self.stopped[cell.grade_id] = "timed out"
                    self.timeouts.append(
                        f"the answer cell {cell.grade_id} did not finish within "
                        f"{CELL_TIMEOUT:.0f} s"
                    )
        except WorkerTimeout:
            worker.stop()
            if not pending:
                self.problem = tr("the grading process stopped answering")
                return
            if self.spent():
                for cell in pending:
                    self.failed[cell.grade_id] = _out_of_time()
                    self.stopped[cell.grade_id] = "timed out"
                self.timeouts.append(
                    f"the answer cells did not finish within the notebook's {NOTEBOOK_BUDGET:.0f} s"
                )
                return
            self.failed[pending[0].grade_id] = _cell_timeout()
            self.stopped[pending[0].grade_id] = "timed out"
            self.timeouts.append(
                f"the answer cell {pending[0].grade_id} did not finish within {CELL_TIMEOUT:.0f} s"
            )
        except WorkerDied as exc:
            worker.stop()
            if not pending:
                self.problem = tr("the grading process ended: {error}", error=exc)
                return
            self.failed[pending[0].grade_id] = tr(
                "it ended the grading process ({error})", error=exc
            )
            self.stopped[pending[0].grade_id] = "crashed"

    def lost(self) -> None:
        """The worker died or hung in a call: the next function gets a new one."""
        if self.worker is not None:
            self.worker.stop()
            self.worker = None

    def stop(self) -> None:
        self.lost()
        self.reference.stop()


def _out_of_time() -> str:
    return tr(
        "the notebook's answer cells and functions used up the {seconds:.0f} s grading "
        "gives one notebook",
        seconds=NOTEBOOK_BUDGET,
    )


def check_notebook(
    path_or_nb,
    seed: int | None = None,
    names: Iterable[str] | None = None,
    replay_path: str | None = None,
    label: str | None = None,
) -> Report:
    """Grade the answer cells of a notebook in an isolated worker process.

    ``names`` are the graded functions to check (default: those with a grade cell
    ``test_<name>...`` and those of the assignment named like the notebook). ``seed``
    replays the random cases of an earlier run. Each function is graded on its own: while
    it runs, the other graded functions it calls are the reference's, and an answer cell
    that fails costs only the functions it defines. Raises ``NotebookError`` when the
    notebook cannot be read. ``label`` names a notebook given as a node (its path).
    """
    nb, read_as = read_notebook(path_or_nb)
    label = label or read_as
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
    replay = replay_line(seed, f"python -m helpers check {shown} --seed {seed}")
    report = Report(notebook=label, seed=int(seed))

    # Everything expected is computed here, before any learner code runs.
    plans = []
    for name in names:
        check = checks.CHECKS[name]
        cases = cases_of(check, seed)
        plans.append(_Plan(check, cases, expectations(check, cases)))
    if not plans:
        return report

    cells = answer_cell_list(nb)
    cpu = CELL_TIMEOUT * len(cells) + sum(p.check.timeout for p in plans) + 10
    with tempfile.TemporaryDirectory(prefix="pe-grade-") as workdir:
        session = _Session(os.path.realpath(workdir), cells, cpu)
        if any(_stand_ins(p.check.name, session)[0] for p in plans):
            session.reference.start_soon()
        try:
            for plan in plans:
                report.results.append(_grade(session, plan, replay))
        finally:
            session.stop()
    report.timeouts = list(dict.fromkeys(session.timeouts))
    note_stand_ins(report.results)
    return report


def _failed(plan: _Plan, problem: str, replay: str, stopped: str = "") -> FunctionResult:
    text = tr("{name} could not be graded: {problem}.", name=plan.check.name, problem=problem)
    return FunctionResult(
        plan.check.name,
        False,
        message(plan.check, text, None, replay),
        None,
        len(plan.cases),
        stopped=stopped,
    )


def _grade(session: _Session, plan: _Plan, replay: str) -> FunctionResult:
    # the cells are loaded first: a cell that hangs or crashes while loading is known then
    worker = session.ready()
    problem = session.cell_problem_of(plan.check.name)
    if problem is not None:
        return _failed(plan, problem, "", session.stopped_of(plan.check.name))
    if worker is None:
        problem = session.problem or tr("the answer cells could not be loaded")
        return _failed(plan, problem, replay)
    costly: list[str] = []
    outcomes, done, alive = _call_worker(worker, plan, session, costly)
    if not alive:
        session.lost()
    name = plan.check.name
    if costly:
        return _failed(
            plan,
            tr(
                "it calls {other} with arguments too costly for grading's limits",
                other=costly[0],
            ),
            replay,
        )
    if any(o.error and o.error.get("timeout") for o in outcomes):
        if session.spent():
            session.timeouts.append(
                f"{name} did not finish within the notebook's {NOTEBOOK_BUDGET:.0f} s"
            )
            return _failed(plan, _out_of_time(), replay)
        session.timeouts.append(f"{name} did not finish within {plan.check.timeout:g} s")
    attempts = [str(a) for a in done.get("attempts") or []]
    changed = [str(c) for c in done.get("changed") or []]
    if attempts:  # the course's answers were reached for: whatever it returned
        return _failed(plan, _attempt_text(attempts), replay)
    if changed:
        text = tr(
            "it replaces {names} while it runs, which grading does not allow",
            names=", ".join(changed[:3]),
        )
        return _failed(plan, text, replay)
    result = judge(plan.check, plan.cases, plan.wants, outcomes, replay)
    result.used = tuple(str(u) for u in done.get("used") or [] if str(u) != name)
    return result


def _stand_ins(name: str, session: _Session) -> tuple[list[str], dict]:
    """The graded functions the reference stands in for while ``name`` runs, and the graded
    constants it gives (``standins.plan``: only what the answer cells define and the
    reference of ``name`` calls)."""
    functions, constants = checks.stand_ins(name)
    functions, constants = standins.plan(
        name, session.defined, session.learner, functions, constants
    )
    return functions, {other: encode(getattr(ref, other)) for other in constants}


# A stand-in refuses arguments this large: no case of the course comes near.
STAND_IN_MAX_INT = 100_000
STAND_IN_MAX_VALUES = 4_000_000


def _too_large(value, depth: int = 0) -> bool:
    if depth > 40:
        return True
    if isinstance(value, bool):
        return False
    if isinstance(value, int | np.integer):
        return abs(int(value)) > STAND_IN_MAX_INT
    if isinstance(value, np.ndarray):
        return value.size > STAND_IN_MAX_VALUES
    if isinstance(value, list | tuple):
        return len(value) > STAND_IN_MAX_VALUES or any(_too_large(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(_too_large(v, depth + 1) for v in value.values())
    return False


def _serve_stand_in(
    request: dict, allowed: list[str], session: _Session, deadline: float, costly: list
) -> dict:
    """The reference's answer to a stand-in's call from the worker (plain data only),
    computed by the reference's own process before ``deadline``; a call too costly for it
    is noted in ``costly``."""
    name = str(request.get("reference"))
    if name not in allowed:
        message = tr("no stand-in for {name}", name=name[:80])
        return {"error": {"type": "NameError", "message": message}}
    try:
        args, kwargs = decode(request.get("args")), decode(request.get("kwargs"))
    except RecursionError:
        args, kwargs = None, None
    plain = isinstance(args, list) and isinstance(kwargs, dict)
    if not plain or contains_opaque(args) or contains_opaque(kwargs):
        message = tr("the reference {name} takes numbers, lists and arrays only", name=name)
        return {"error": {"type": "TypeError", "message": message}}
    if _too_large(args) or _too_large(kwargs):
        message = tr(
            "the reference {name} was called with arguments far larger than any case", name=name
        )
        return {"error": {"type": "ValueError", "message": message, "value_error": True}}
    reply = session.reference.answer(
        name, request.get("args"), request.get("kwargs"), min(deadline, session.end)
    )
    error = reply.get("error")
    if isinstance(error, dict) and error.get("costly"):
        costly.append(name)
        message = tr("the reference {name} was called with arguments too costly", name=name)
        return {"error": {"type": "RuntimeError", "message": message}}
    return reply


def _call_worker(
    worker: Worker, plan: _Plan, session: _Session, costly: list
) -> tuple[list, dict, bool]:
    """Outcomes of the cases run so far, the worker's closing report, and whether it lives on."""
    check, workdir = plan.check, session.workdir
    file_names = [report_names(c) for c in plan.cases] if check.kind == "files" else []
    cases = []
    for i, case in enumerate(plan.cases):
        args = tuple(case.args)
        if check.kind == "files":
            args = tuple(os.path.join(workdir, n) for n in file_names[i])
        cases.append({"args": encode(list(args)), "kwargs": encode(dict(case.kwargs))})
    standins, constants = _stand_ins(check.name, session)
    deadline = session.deadline(float(check.timeout))
    outcomes: list[Outcome] = []
    try:
        worker.send(
            {
                "op": "call",
                "name": check.name,
                "kind": check.kind,
                "cases": cases,
                "mutation": bool(check.check_mutation),
                "standins": standins,
                "constants": constants,
                "files": [[os.path.join(workdir, n) for n in pair] for pair in file_names],
            },
            deadline,
        )
        while True:
            reply = worker.receive(deadline)
            if reply.get("done"):
                return outcomes, reply, True
            if "reference" in reply:
                late = session.reference.start()  # its start is not the learner's time
                deadline += late
                session.end += late
                answer = _serve_stand_in(reply, standins, session, deadline, costly)
                if costly:
                    worker.stop()
                    return outcomes[: len(plan.cases)], {}, False
                worker.send(answer, deadline)
                continue
            outcome = outcome_of(reply)
            if check.kind == "files" and outcome.error is None:
                outcome.files = _files_of(reply)
            outcomes.append(outcome)
            if len(outcomes) > len(plan.cases):
                worker.stop()
                return outcomes[: len(plan.cases)], {}, False
    except WorkerTimeout:
        outcomes.append(
            Outcome(error={"type": "Timeout", "timeout": True, "seconds": check.timeout})
        )
        return outcomes[: len(plan.cases)], {}, False
    except WorkerDied as exc:
        outcomes.append(Outcome(error={"type": "Died", "died": True, "message": str(exc)}))
        return outcomes[: len(plan.cases)], {}, False


def _files_of(reply: dict) -> tuple[str, ...] | None:
    """The texts of a "files" case's files as the worker read them, checked; None if any
    is missing or too large."""
    texts = reply.get("files")
    if not isinstance(texts, list) or len(texts) != 2:
        return None
    if not all(isinstance(t, str) and len(t) <= MAX_REPORT_FILE for t in texts):
        return None
    return tuple(texts)


# --------------------------------------------------------------------------- command line


def check_command(path: str | os.PathLike, seed: int | None = None) -> int:
    """``python -m helpers check NB``: grade a saved notebook like autograde, print a table.

    Exit status: 0 when everything passed, 1 when something failed, 2 when the notebook
    cannot be read or graded.
    """
    try:
        nb, label = read_notebook(path)
        with speaking(notebook_language(nb, label)):  # the notebook's language, not the shell's
            report = check_notebook(nb, seed=seed, label=label)
            if not report.results:
                print(
                    f"error: {path}: no graded functions found (no grade cell test_<function>)",
                    file=sys.stderr,
                )
                return 2
            passed, total = count_line(report.rows())
            heading = tr(
                "{path} (seed {seed}): {passed} of {total} graded functions passed",
                path=path,
                seed=report.seed,
                passed=passed,
                total=total,
            )
            print(report.render(heading))
    except (NotebookError, RuntimeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0 if report.passed else 1

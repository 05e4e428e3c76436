"""Verdicts: what a learner's function did on each case, judged against the reference.

``cases_of(check, seed)`` and ``expectations(check, cases)`` are computed before any
learner code runs; ``outcome_of`` reads what a call did (``helpers.teacher.calling``);
``judge`` turns the outcomes into a ``FunctionResult`` whose message names the function,
the case, the known mistake when the output matches one, and the exercise to revisit.
A ``Report`` holds the results of one notebook.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import secrets
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from helpers import report
from helpers.i18n import LANGUAGES, tr
from helpers.report import Row
from helpers.teacher import checks
from helpers.teacher.calling import call
from helpers.teacher.checks.base import PARTS, WEIGHTS
from helpers.teacher.checks.compare import not_an_array
from helpers.teacher.codec import Opaque, contains_opaque, decode, describe


@dataclass
class FunctionResult:
    """The verdict for one graded function."""

    name: str
    passed: bool
    message: str
    mistake: str | None = None
    cases: int = 0
    score: float = 0.0  # the share of the points earned, 0..1 (partial credit)
    points: float = 0.0  # the function's points in its notebook
    used: tuple[str, ...] = ()  # the other graded functions it called (reference stand-ins)
    unfinished: bool = False  # not written yet (NotImplementedError) or not defined
    warnings: tuple[str, ...] = ()  # what the learner's code warned while it was checked
    # "timed out" (stopped for time) or "crashed" (it ended the grading process): the
    # learner's code ran, so it is not "not written"; "" otherwise
    stopped: str = ""

    @property
    def verdict(self) -> str:
        """ "passed", "partly" or "FAILED": the stored form, in English (reports parse it)."""
        if self.passed:
            return "passed"
        return "partly" if self.score > 0 else "FAILED"

    @property
    def verdict_shown(self) -> str:
        """The verdict in the current language, as the self-check table shows it."""
        if self.passed:
            return tr("passed")
        return tr("partly") if self.score > 0 else tr("FAILED")


@dataclass
class Report:
    """The verdicts for one notebook, in notebook order."""

    notebook: str
    seed: int
    results: list[FunctionResult] = field(default_factory=list)
    problem: str | None = None
    timeouts: list[str] = field(default_factory=list)  # learner code stopped for time

    @property
    def passed(self) -> bool:
        """True when every graded function passed."""
        return all(r.passed for r in self.results)

    def _ipython_display_(self) -> None:
        """Nothing: as a notebook cell's result, the table the self-check printed says it all."""

    def __repr__(self) -> str:
        passed = sum(r.passed for r in self.results)
        return f"<Report {self.notebook}: {passed}/{len(self.results)} passed, seed {self.seed}>"

    def __getitem__(self, name: str) -> FunctionResult:
        for result in self.results:
            if result.name == name:
                return result
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return any(r.name == name for r in self.results)

    def rows(self) -> list[Row]:
        """The rows of the self-check's table (``helpers.report``), in notebook order."""
        return [row_of(r) for r in self.results]

    def table(self) -> str:
        """A plain-text table: function, verdict, message (its first line, wrapped)."""
        return report.table(self.rows())

    def render(self, header: str) -> str:
        """``header``, the table and the details of every failing function."""
        return report.render(header, self.rows())

    def html(self, header: str, notes=()) -> str:
        """The same as an HTML table (``helpers.report.html``)."""
        return report.html(header, self.rows(), notes)


def row_of(result: FunctionResult) -> Row:
    """One row of the table: the message's first line, the exercise to revisit, the rest.

    "See Exercise N" moves from the message into the row of a failing function; an
    unfinished one gets a line that says what to do.
    """
    check = checks.CHECKS.get(result.name)
    section = getattr(check, "section", "") or ""
    see = tr("See {section}.", section=section_text(section)) if section else ""
    first, *rest = result.message.splitlines() or [""]
    rest = [line for line in rest if line != see]
    replay = next((line for line in rest if is_replay_line(line)), "")
    rest = [line for line in rest if line != replay]
    where = see if not result.passed else ""
    unfinished = tr("{name} is not written yet (it raises NotImplementedError).", name=result.name)
    if not result.passed and first == unfinished and not rest:
        rest = [
            tr(
                "Write the body of {name} in its answer cell, in place of "
                "`raise NotImplementedError()`, and run that cell; then check again.",
                name=result.name,
            )
        ]
    first, rest = report.mistake_first(first, rest)
    return Row(
        name=result.name,
        verdict=result.verdict_shown,
        passed=result.passed,
        summary=first,
        where=where,
        details=tuple(rest),
        replay=replay,
        constant=getattr(check, "kind", "") == "constant",
        warnings=tuple(
            tr("Your {name} warned: {warning}", name=result.name, warning=w)
            for w in result.warnings
        ),
        state=result.verdict.lower(),
    )


@dataclass
class Raises:
    """The expected outcome of a case on bad input: a ValueError."""

    message: str


@dataclass
class Outcome:
    """What a learner's function did on one case."""

    value: Any = None
    error: dict | None = None  # {"type", "message", "value_error", "not_implemented"}
    mutated: bool = False
    files: tuple[str, str] | None = None


def case_rng(seed: int, name: str) -> np.random.Generator:
    """The random generator of one function's cases: depends on the seed and the name only."""
    return np.random.default_rng([int(seed), zlib.crc32(name.encode("utf-8"))])


def cases_of(check, seed: int) -> list:
    """The fixed cases of ``check``, then its random cases of ``seed``, each with its part.

    The random cases always include, for every wrong implementation of the check's
    catalogued mistakes (``impl`` and ``variants``), a case on which it goes wrong
    (``witnesses``): the same mistake then fails the same kinds of checks, and costs the
    same points, whatever the seed.
    """
    fixed = [c if c.part else dataclasses.replace(c, part="shown") for c in check.fixed()]
    rng = case_rng(seed, check.name)
    drawn = [dataclasses.replace(c, part="random") for c in check.random(rng)]
    return fixed + drawn + witnesses(check, seed, drawn)


# How many batches of random cases are drawn, at most, to find one a mistake goes wrong on.
WITNESS_BATCHES = 40


def witnesses(check, seed: int, drawn: list) -> list:
    """Random cases to add to ``drawn`` so that every wrong implementation of ``check``'s
    mistakes goes wrong on one of them (none for one that is never wrong on a random case).

    They are drawn from generators of their own (the seed, the function, the mistake), so
    the first random cases stay those of the seed.
    """
    if check.kind in ("constant", "files") or check.random is None:
        return []
    impls = [
        (mistake, k, impl)
        for mistake in check.mistakes
        if mistake.on_random
        for k, impl in enumerate((mistake.impl, *mistake.variants))
        if impl is not None
    ]
    if not impls:
        return []
    known: list[tuple] = []  # (case, want) of the random cases so far
    for case in drawn:
        known.append((case, _want(check, case)))
    added = []
    for mistake, k, impl in impls:
        if any(_goes_wrong(check, impl, case, want) for case, want in known):
            continue
        rng = np.random.default_rng(
            [int(seed), zlib.crc32(check.name.encode()), zlib.crc32(mistake.name.encode()), k]
        )
        found = None
        for _ in range(WITNESS_BATCHES):
            for case in check.random(rng):
                want = _want(check, case)
                if _goes_wrong(check, impl, case, want):
                    found = (dataclasses.replace(case, part="random"), want)
                    break
            if found is not None:
                break
        if found is not None:
            known.append(found)
            added.append(found[0])
    return added


def _want(check, case):
    try:
        with np.errstate(all="ignore"):
            return checks.expected(check, case)
    except ValueError as exc:
        return Raises(str(exc))


def _goes_wrong(check, impl, case, want) -> bool:
    """Whether the wrong implementation ``impl`` fails ``case`` (a random case the reference
    accepts) as the grader judges it, a changed argument included."""
    if isinstance(want, Raises):
        return False
    args, kwargs = copy.deepcopy(tuple(case.args)), copy.deepcopy(dict(case.kwargs))
    with np.errstate(all="ignore"):
        reply = call(impl, check.kind, args, kwargs, check.check_mutation)
    outcome = outcome_of(reply)
    try:
        with np.errstate(all="ignore"):
            return judge_case(check, case, want, outcome) is not None
    except Exception:  # noqa: BLE001  (an output the judge cannot read is wrong)
        return True


def expectations(check, cases: list) -> list:
    """The reference output of every case, or ``Raises`` where the input is bad."""
    wants = []
    for case in cases:
        try:
            wants.append(checks.expected(check, case))
        except ValueError as exc:  # bad input: the learner's function must raise too
            wants.append(Raises(str(exc)))
    return wants


# The line that tells how to draw the same random cases again (the teacher's, in nbgrader).
REPLAY = "Random cases from seed {seed}; replay with: {command}"


def replay_line(seed: int, command: str) -> str:
    """The replay line in the current language."""
    return tr(REPLAY, seed=seed, command=command)


def is_replay_line(line: str) -> bool:
    """Whether ``line`` of a message is the replay line, in any language of the course."""
    for lang in LANGUAGES:
        start = tr(REPLAY, lang=lang).split("{seed}")[0]
        if start and line.startswith(start):
            return True
    return False


def new_seed() -> int:
    """A fresh seed for the random cases."""
    return secrets.randbelow(10**9)


def _label(case) -> str:
    return getattr(case, "label", "") or tr("a case")


_EXERCISE = re.compile(r"Exercise (?P<number>\d+): `(?P<name>[^`]*)`")
_DEFINED_IN = re.compile(
    r"the answer cell of Exercise (?P<number>\d+), which defines (?P<name>\S+)"
)


def section_text(section: str) -> str:
    """Where the notebook teaches a function (``exercises.json``, in English), in the
    current language."""
    found = _EXERCISE.fullmatch(section)
    if found is not None:
        return tr("Exercise {number}: `{name}`", **found.groupdict())
    found = _DEFINED_IN.fullmatch(section)
    if found is not None:
        return tr("the answer cell of Exercise {number}, which defines {name}", **found.groupdict())
    return section


def part_of(case, want) -> str:
    """The kind of check a case belongs to: "bad input" wherever the input is refused."""
    return "bad input" if isinstance(want, Raises) else (case.part or "shown")


def _fmt(points: float) -> str:
    return f"{points:.2f}".rstrip("0").rstrip(".")


def judge(check, cases: list, wants: list, outcomes: list, replay: str) -> FunctionResult:
    """The verdict for one function from its outcomes (one per case, in order).

    Every case counts: a case without an outcome (the run stopped before it) failed. The
    function's points are split over its kinds of checks (``check.weights``); a kind
    scores when every case of it passed. The message tells the first failure, the known
    mistake it matches, the exercise to revisit and, for partial credit, what was right.
    """
    name = check.name
    n = len(cases)
    weights = check.weights or WEIGHTS
    parts: dict[str, bool] = {}
    first = named_first = None
    for index, (case, want) in enumerate(zip(cases, wants)):
        part = part_of(case, want)
        if index < len(outcomes):
            failure = judge_case(check, case, want, outcomes[index])
        else:
            failure = ("", None)  # never run: the run stopped at an earlier case
        parts[part] = parts.get(part, True) and failure is None
        if failure is not None and first is None:
            first = (failure, outcomes[index] if index < len(outcomes) else Outcome())
        if failure is not None and failure[1] is not None and named_first is None:
            named_first = (failure, outcomes[index])
    # the first failure told, unless it names no mistake (a case that cannot tell two apart)
    # and a later one does: that one is told, with its mistake
    if first is not None and first[0][1] is None and named_first is not None:
        first = named_first
    if first is None:
        text = tr("all {n} checks passed", n=n) if n != 1 else tr("1 check passed")
        return FunctionResult(name, True, text, None, n, score=1.0, points=check.points)
    (text, mistake), outcome = first
    err = outcome.error or {}
    if err.get("not_implemented") or err.get("missing"):
        replay = ""  # the cases do not matter: no need to replay them
    total = sum(weights.get(p, 0.0) for p in parts)
    score = sum(weights.get(p, 0.0) for p, ok in parts.items() if ok) / total if total else 0.0
    lines = [text]
    if 0.0 < score < 1.0:
        right = [tr(PARTS[p]) for p, ok in parts.items() if ok]
        wrong = [tr(PARTS[p]) for p, ok in parts.items() if not ok]
        summary = tr("{right} right; {wrong} wrong", right=", ".join(right), wrong=", ".join(wrong))
        if check.points:
            summary = tr(
                "{earned} of {points} points: {summary}",
                earned=_fmt(check.points * score),
                points=_fmt(check.points),
                summary=summary,
            )
        lines.insert(0, tr("{name}: partly right ({summary}).", name=name, summary=summary))
    return FunctionResult(
        name,
        False,
        message(check, "\n".join(lines), mistake, replay),
        mistake.name if mistake is not None else None,
        n,
        score=score,
        points=check.points,
        unfinished=bool(err.get("not_implemented") or err.get("missing")),
        stopped="timed out" if err.get("timeout") else "crashed" if err.get("died") else "",
    )


def named(name: str, text: str) -> str:
    """``name: text``, unless the text already starts with the name (a message of
    ``note_stand_ins`` does, in Korean as ``name: 맞습니다``): said once, not twice."""
    if re.match(rf"{re.escape(name)}\b", text):
        return text
    return f"{name}: {text}"


def note_stand_ins(results: list[FunctionResult]) -> None:
    """Say so where a function is right but calls one of the learner's that is wrong.

    Each function is graded with the reference standing in for the other graded functions
    it calls; when one of those failed its own checks, the message of the right function
    points to it ("rope_score is right ... your apply_rope failed: see Exercise 4").
    """
    by_name = {r.name: r for r in results}
    for result in results:
        wrong = [n for n in result.used if n in by_name and not by_name[n].passed]
        if not result.passed or not wrong:
            continue
        names = tr(" and ").join(wrong)
        where = "; ".join(
            tr("see {section}", section=section_text(checks.CHECKS[n].section))
            for n in wrong
            if checks.CHECKS[n].section
        )
        if where:
            result.message = tr(
                "{name} is right, checked with the reference {names} in place of yours; "
                "your {names} failed: {where}. ({message})",
                name=result.name,
                names=names,
                where=where,
                message=result.message,
            )
        else:
            result.message = tr(
                "{name} is right, checked with the reference {names} in place of yours; "
                "your {names} failed. ({message})",
                name=result.name,
                names=names,
                message=result.message,
            )


def message(check, text: str, mistake, replay: str) -> str:
    lines = [text]
    if mistake is not None:
        lines.append(
            tr(
                "This looks like a known mistake ({mistake}): {message}",
                mistake=tr(mistake.name),
                message=tr(mistake.message),
            )
        )
    if getattr(check, "section", ""):
        lines.append(tr("See {section}.", section=section_text(check.section)))
    if replay:
        lines.append(replay)
    return "\n".join(lines)


def judge_case(check, case, want, outcome: Outcome):
    """None when the case passed, else (what went wrong, the named mistake or None)."""
    name = check.name
    label = _label(case)
    err = outcome.error
    if err is not None:
        etype = err.get("type") or tr("an error")
        if err.get("not_implemented"):
            return tr("{name} is not written yet (it raises NotImplementedError).", name=name), None
        if err.get("timeout"):
            text = tr(
                "{name} did not finish within {seconds} s on {label} (an endless loop?).",
                name=name,
                seconds=err.get("seconds"),
                label=label,
            )
            return text, None
        if err.get("died"):
            text = tr(
                "{name} ended the grading process on {label}: {message}.",
                name=name,
                label=label,
                message=err.get("message"),
            )
            return text, None
        if err.get("missing"):
            return _missing_text(name, str(err.get("message"))), None
        if isinstance(want, Raises) and err.get("value_error"):
            return None
        if etype == "SystemExit":
            return tr("{name} called sys.exit() on {label}.", name=name, label=label), None
        msg = str(err.get("message", ""))
        detail = f"{etype}: {msg}" if msg else etype
        if isinstance(want, Raises):
            text = tr(
                "{name} should raise ValueError on {label}, but it raised {detail}.",
                name=name,
                label=label,
                detail=detail,
            )
            return text, None
        return tr("{name} raised {detail} on {label}.", name=name, detail=detail, label=label), None
    if isinstance(want, Raises):
        text = tr(
            "{name} should raise ValueError on {label} (bad input needs a clear error: "
            "{error}), but it returned {value}.",
            name=name,
            label=label,
            error=want.message,
            value=describe(outcome.value),
        )
        # a value where an error belongs can still be a known mistake (a wrapped lookup)
        return text, checks.diagnose(check, case, outcome.value)
    if check.kind == "files":
        if outcome.files is None:
            return tr("{name} did not write both files on {label}.", name=name, label=label), None
        ok, detail = check.judge_files(*outcome.files)
        if not ok:
            text = tr(
                "{name} wrote wrong files on {label}: {detail}",
                name=name,
                label=label,
                detail=detail,
            )
            return text, None
        return _mutation_failure(check, label, outcome)
    opaque = contains_opaque(outcome.value)
    if opaque is not None:
        text = tr(
            "{name} returned {value} on {label}, not plain numbers.",
            name=name,
            value=describe(opaque),
            label=label,
        )
        return text, None
    try:
        got = checks.normalize(check.kind, outcome.value)
    except (ValueError, TypeError) as exc:
        return tr("{name} on {label}: {detail}", name=name, label=label, detail=exc), None
    try:
        if check.kind == "array":
            not_an_array(outcome.value, want)
    except (
        ValueError
    ) as exc:  # a list where an array is asked for: a catalogued mistake still named
        text = tr("{name} on {label}: {detail}", name=name, label=label, detail=exc)
        ok = checks.agree(check.kind, got, want)[0]
        return text, None if ok else checks.diagnose(check, case, got)
    ok, detail = checks.agree(check.kind, got, want)
    if not ok:
        mistake = checks.diagnose(check, case, got)
        if mistake is None and outcome.mutated and check.check_mutation:
            mistake = checks.mutation_mistake(check)
        text = tr("{name} is wrong on {label}: {detail}", name=name, label=label, detail=detail)
        return text, mistake
    return _mutation_failure(check, label, outcome)


# The worker (which speaks English) says so when the graded name is missing: shown translated.
def _missing_text(name: str, message: str) -> str:
    if message == f"{name} is not defined in the answer cells.":
        return tr("{name} is not defined in the answer cells.", name=name)
    if message == f"{name} is not a function.":
        return tr("{name} is not a function.", name=name)
    return message


def _mutation_failure(check, label: str, outcome: Outcome):
    if check.check_mutation and outcome.mutated:
        text = tr("{name} changed its input on {label}.", name=check.name, label=label)
        return text, checks.mutation_mistake(check)
    return None


def outcome_of(reply: dict) -> Outcome:
    """The ``Outcome`` of one call as ``helpers.teacher.calling.call`` described it.

    The description may come from the learner's process: every field is checked and cut
    to size, and the value is decoded as plain data only.
    """
    error = reply.get("error")
    if error is not None:
        if not isinstance(error, dict):
            error = {"type": "Error", "message": str(error)[:200]}
        clean = {
            "type": str(error.get("type", "Error"))[:80],
            "message": str(error.get("message", ""))[:500],
            "value_error": error.get("value_error") is True,
            "not_implemented": error.get("not_implemented") is True,
        }
        if error.get("missing") is True:
            clean["missing"] = True
        return Outcome(error=clean)
    try:
        value = decode(reply.get("value"))
    except RecursionError:
        value = Opaque("value", "nested too deep")
    return Outcome(value=value, mutated=reply.get("mutated") is True)

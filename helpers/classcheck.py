"""The classroom self-check: the public checks of a notebook, run from expected values.

The learner build of ``helpers`` leaves out the reference and the checks. Its
``self_check`` (``helpers.grader``) runs instead the public checks of every graded
function of the notebook: the numbers the notebook shows, the edge cases and bad input,
read from ``classcheck.json`` beside this module. That file is written when the learner
build is made (``helpers.teacher.classcheck_data``): the cases, the reference's output on
each (or the ``ValueError`` it asks for), and, where a catalogued mistake gives another
output on a case, that output with the mistake's name. It holds values only: no
reference, no wrong implementation, no random case (the random cases are graded by the
teacher, who also sees the hidden tests).

The outputs are compared as the grader compares them (``compare.normalize``/``agree``,
the course tolerance) and values travel in the grader's JSON form (``codec``): in the
learner build both are the grader's modules, copied under ``helpers/_shipped``.
"""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from helpers.i18n import DEFAULT, language, speaking, split_assignment, tr
from helpers.report import learner_warnings

DATA = Path(__file__).resolve().parent / "classcheck.json"
RANDOM_BY_TEACHER = (
    "The random cases (fresh inputs of every size) are graded by your teacher, with the "
    "hidden tests; this self-check runs the public checks only."
)


def shipped_tools() -> tuple:
    """``(agree, normalize, decode, not_an_array)``: the grader's comparison and JSON decoding, as the
    learner build ships them (``helpers/_shipped``, copied there by the build)."""
    from helpers._shipped.codec import decode
    from helpers._shipped.compare import agree, normalize, not_an_array

    return agree, normalize, decode, not_an_array


def available(path: Path = DATA) -> bool:
    """Whether this installation has the classroom checks (the learner build has)."""
    return path.is_file()


def load(path: Path = DATA) -> dict:
    """The classroom checks of every notebook: ``{"notebooks": {id: [function, ...]}}``."""
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass
class Result:
    """The classroom verdict of one function: passed, partly right or failed."""

    name: str
    verdict: str  # "passed", "partly", "FAILED" or "not checked here"
    message: str
    mistake: str | None = None
    where: str = ""  # "See Exercise 1: `softmax`." when it did not pass
    kind: str = ""  # the kind of output: "constant" is no row of the table
    warnings: tuple[str, ...] = ()  # what the learner's code warned while it was checked

    @property
    def passed(self) -> bool:
        return self.verdict == "passed"


@dataclass
class ClassReport:
    """The classroom self-check of one notebook."""

    notebook: str
    results: list[Result] = field(default_factory=list)
    mistakes: dict[str, list[str]] = field(default_factory=dict)  # function -> names

    @property
    def passed(self) -> bool:
        return all(r.passed or r.verdict == "not checked here" for r in self.results)

    def __getitem__(self, name: str) -> Result:
        for result in self.results:
            if result.name == name:
                return result
        raise KeyError(name)

    def _ipython_display_(self) -> None:
        """Nothing: the printed table says it all."""


def _text(entry: dict, key: str) -> str:
    """A text the build wrote in every language, in the current one."""
    texts = entry.get(key) or {}
    return texts.get(language()) or texts.get(DEFAULT, "")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _changed(before, after) -> bool:
    """Whether the arguments differ after the call (compared as plain text)."""
    return _plain(before) != _plain(after)


def _plain(value):
    import numpy as np

    if isinstance(value, np.ndarray):
        return [value.dtype.str, value.shape, json.dumps(value.tolist())]
    if isinstance(value, list | tuple):
        return [type(value).__name__, [_plain(v) for v in value]]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return repr(value)


def _judge_case(function: dict, case: dict, target, tools) -> tuple[str | None, str | None]:
    """``(None, None)`` when the case passed, else ``(what went wrong, mistake name)``."""
    agree, normalize, decode = tools[:3]
    name, kind, label = function["name"], function["kind"], _text(case, "label")
    args = tuple(decode(case["args"]))
    kwargs = decode(case["kwargs"])
    given = copy.deepcopy((args, kwargs))
    try:
        value = target if kind == "constant" else target(*args, **kwargs)
    except NotImplementedError:
        return tr("{name} is not written yet (it raises NotImplementedError).", name=name), None
    except ValueError as exc:
        if "raises" in case:
            return None, None
        detail = f"ValueError: {exc}"
        return tr("{name} raised {detail} on {label}.", name=name, detail=detail, label=label), None
    except Exception as exc:  # noqa: BLE001  (the learner's error is the answer)
        detail = f"{type(exc).__name__}: {exc}"
        if "raises" in case:
            text = tr(
                "{name} should raise ValueError on {label}, but it raised {detail}.",
                name=name,
                label=label,
                detail=detail,
            )
            return text, None
        return tr("{name} raised {detail} on {label}.", name=name, detail=detail, label=label), None
    if "raises" in case:
        text = tr(
            "{name} should raise ValueError on {label} (bad input needs a clear error: "
            "{error}), but it returned {value}.",
            name=name,
            label=label,
            error=case["raises"],
            value=_short(value),
        )
        return text, _mistake(function, case, value, tools)
    try:
        got = normalize(kind, value)
    except (ValueError, TypeError) as exc:
        return tr("{name} on {label}: {detail}", name=name, label=label, detail=exc), None
    ok, detail = agree(kind, got, decode(case["want"]))
    try:
        if kind == "array" and len(tools) > 3:
            tools[3](value, decode(case["want"]))
    except (
        ValueError
    ) as exc:  # a list where an array is asked for: a catalogued mistake still named
        text = tr("{name} on {label}: {detail}", name=name, label=label, detail=exc)
        return text, None if ok else _mistake(function, case, got, tools)
    if not ok:
        text = tr("{name} is wrong on {label}: {detail}", name=name, label=label, detail=detail)
        return text, _mistake(function, case, got, tools)
    if function.get("check_mutation") and _changed(given, (args, kwargs)):
        mutation = function.get("mutation") or {}
        return tr("{name} changed its input on {label}.", name=name, label=label), mutation.get(
            "name"
        )
    return None, None


def _mistake(function: dict, case: dict, got, tools) -> str | None:
    """The catalogued mistake whose output on this case ``got`` agrees with, or None."""
    agree, normalize, decode = tools[:3]
    kind = function["kind"]
    try:
        got = normalize(kind, got)
    except (ValueError, TypeError):
        return None
    for known in case.get("mistakes", []):
        wrong = decode(known["value"])
        if agree(kind, got, wrong, nan_equal=True, atol=known.get("atol", 0.0))[0]:
            return known["name"]
    return None


def _message(function: dict, text: str, mistake: str | None) -> str:
    lines = [text]
    if mistake is not None:
        said = next((m for m in function["mistakes"] if m["name"] == mistake), None)
        if said is None and (function.get("mutation") or {}).get("name") == mistake:
            said = function["mutation"]
        if said is not None:
            lines.append(
                tr(
                    "This looks like a known mistake ({mistake}): {message}",
                    mistake=tr(said["name"]),
                    message=tr(said["message"]),
                )
            )
    return "\n".join(lines)


def _where(function: dict) -> str:
    section = _text(function, "section")
    return tr("See {section}.", section=section) if section else ""


PARTS = {
    "shown": "the numbers the notebook shows",
    "edge": "edge cases",
    "bad input": "bad input",
}


def check_function(
    function: dict, namespace, tools: tuple | None = None, broken_cells: dict | None = None
) -> Result:
    """The classroom verdict of one function of the data file against ``namespace``
    (``tools``: ``shipped_tools()`` unless given; ``broken_cells``: the names whose answer
    cell failed, with that cell, ``helpers.session.broken()``)."""
    name, kind = function["name"], function["kind"]
    if kind == "files" or not function["cases"]:
        return Result(name, "not checked here", tr(RANDOM_BY_TEACHER))
    if name not in namespace:
        broken = (broken_cells or {}).get(name)
        if broken is not None:
            text = tr(
                "{name} is not defined: the answer cell that defines it, {where}, stopped "
                "with {error}. Fix that cell and run it again.",
                name=name,
                where=broken.where(),
                error=broken.error.rstrip("."),
            )
            return Result(name, "FAILED", text, where=_where(function))
        if kind == "constant":
            text = tr(
                "{name} is not defined: run the cell that defines this constant first.", name=name
            )
        else:
            text = tr(
                "{name} is not defined: run the cell that defines this function first.", name=name
            )
        return Result(name, "FAILED", _message(function, text, None), where=_where(function))
    target = namespace[name]
    tools = tools or shipped_tools()
    parts: dict[str, bool] = {}
    first = None
    for case in function["cases"]:
        text, mistake = _judge_case(function, case, target, tools)
        part = "bad input" if "raises" in case else case.get("part", "shown")
        parts[part] = parts.get(part, True) and text is None
        if text is not None and first is None:
            first = (text, mistake)
            if "NotImplementedError" in text:
                parts = dict.fromkeys(parts, False)
                break
    n = len(function["cases"])
    if first is None:
        text = tr("all {n} checks passed", n=n) if n != 1 else tr("1 check passed")
        return Result(name, "passed", text)
    text, mistake = first
    right = [tr(PARTS[p]) for p, ok in parts.items() if ok]
    if right:
        wrong = [tr(PARTS[p]) for p, ok in parts.items() if not ok]
        summary = tr("{right} right; {wrong} wrong", right=", ".join(right), wrong=", ".join(wrong))
        text = tr("{name}: partly right ({summary}).", name=name, summary=summary) + "\n" + text
    verdict = "partly" if right else "FAILED"
    return Result(name, verdict, _message(function, text, mistake), mistake, _where(function))


def recognised(function: dict) -> list[str]:
    """The catalogued mistakes the shipped values of ``function`` recognise, in catalogue
    order (a changed argument too, when the function must leave its input alone)."""
    found = {m["name"] for case in function["cases"] for m in case.get("mistakes", [])}
    names = [m["name"] for m in function["mistakes"] if m["name"] in found]
    mutation = function.get("mutation") or {}
    if function.get("check_mutation") and function["cases"] and mutation.get("catalogued"):
        names.append(mutation["name"])
    return names


def self_check(
    assignment: str,
    namespace,
    path: Path = DATA,
    tools: tuple | None = None,
    broken_cells: dict | None = None,
    notes: Sequence[str] = (),
) -> ClassReport | None:
    """Run the classroom checks of ``assignment`` against ``namespace`` and print a table:
    every function's verdict, the failures in full, the mistakes the checks recognise, and
    that the random cases are graded by the teacher. Never raises. ``broken_cells`` and
    ``notes``: the answer cells that failed (``helpers.session``), said under the table."""
    base, lang = split_assignment(str(assignment))
    with speaking(lang if lang != DEFAULT else None):
        try:
            functions = load(path)["notebooks"][base]
        except (OSError, ValueError, KeyError) as exc:
            print(
                tr(
                    "self-check of {assignment}: cannot list its checks ({error})",
                    assignment=assignment,
                    error=exc,
                )
            )
            return None
        report = ClassReport(str(assignment))
        for function in functions:
            with warnings.catch_warnings(record=True) as warned:
                warnings.simplefilter("always")
                try:
                    result = check_function(function, namespace, tools, broken_cells)
                except Exception as exc:  # noqa: BLE001  (the self-check never raises)
                    result = Result(
                        function["name"], "FAILED", tr("could not be checked: {error}", error=exc)
                    )
            result.warnings = learner_warnings(warned)
            result.kind = function.get("kind", "")
            report.results.append(result)
            names = recognised(function)
            if names:
                report.mistakes[function["name"]] = names
        _name_failed_callees(report, namespace)
        _print(report, notes)
        return report


def kind_of(name: str, path: Path = DATA) -> str | None:
    """The kind of output of the graded function ``name`` ("array", "float" ...), or None."""
    try:
        notebooks = load(path)["notebooks"].values()
    except (OSError, ValueError, KeyError):
        return None
    return next((f["kind"] for fs in notebooks for f in fs if f["name"] == name), None)


def notebook_of(name: str, path: Path = DATA) -> str | None:
    """The id of the notebook whose exercise is the graded function ``name``, or None."""
    try:
        notebooks = load(path)["notebooks"].items()
    except (OSError, ValueError, KeyError):
        return None
    return next((base for base, fs in notebooks if any(f["name"] == name for f in fs)), None)


def section_of(name: str, path: Path = DATA) -> str | None:
    """Where the notebook teaches the graded function ``name`` ("Exercise 3: `alibi_attention`"),
    in the current language, or None."""
    try:
        notebooks = load(path)["notebooks"].values()
    except (OSError, ValueError, KeyError):
        return None
    found = next((f for fs in notebooks for f in fs if f["name"] == name), None)
    return (_text(found, "section") or None) if found is not None else None


def wrong_now(name: str, calls, path: Path = DATA, tools: tuple | None = None) -> str | None:
    """What ``name`` gets wrong now on the calls a visible test made to it (``(function,
    args, kwargs)``), where a public case of ``name`` has those very arguments: the learner
    build has expected values for its public cases only. None otherwise."""
    try:
        found = [f for fs in load(path)["notebooks"].values() for f in fs if f["name"] == name]
    except (OSError, ValueError, KeyError):
        return None
    if not found or found[0]["kind"] in ("constant", "files"):
        return None
    function = found[0]
    tools = tools or shipped_tools()
    decode = tools[2]
    for target, args, kwargs in calls:
        given = _plain((tuple(args), dict(kwargs)))
        for case in function["cases"]:
            if "raises" in case:
                continue
            if _plain((tuple(decode(case["args"])), decode(case["kwargs"]))) != given:
                continue
            text, mistake = _judge_case(function, case, target, tools)
            if text is not None:
                return text + (f" ({tr(mistake)})" if mistake else "")
    return None


def _name_failed_callees(report: ClassReport, namespace) -> None:
    """A function that did not pass and calls another graded function that did not pass
    either says so: here each function runs with the learner's own callees."""
    from helpers.came_back import callees

    failed = {r.name for r in report.results if r.verdict in ("partly", "FAILED")}
    for result in report.results:
        if result.name not in failed:
            continue
        for callee in callees(result.name, namespace):
            if callee in failed:
                result.message += "\n" + tr(
                    "{name} calls your {callee}, which failed its own checks: fix {callee} "
                    "first, then check again. {name} itself may well be right.",
                    name=result.name,
                    callee=callee,
                )


def _shown(verdict: str) -> str:
    """A verdict in the current language, as the table shows it."""
    if verdict == "passed":
        return tr("passed")
    if verdict == "partly":
        return tr("partly")
    if verdict == "FAILED":
        return tr("FAILED")
    return tr("not checked here")


def rows(report: ClassReport) -> list:
    """The rows of the self-check's table (``helpers.report``), in notebook order."""
    from helpers.report import Row, mistake_first

    out = []
    for r in report.results:
        first, *rest = r.message.splitlines() or [""]
        first, rest = mistake_first(first, rest)
        out.append(
            Row(
                name=r.name,
                verdict=_shown(r.verdict),
                passed=r.passed or r.verdict == "not checked here",
                summary=first,
                where=r.where,
                details=tuple(rest),
                constant=r.kind == "constant",
                warnings=tuple(
                    tr("Your {name} warned: {warning}", name=r.name, warning=w) for w in r.warnings
                ),
                state={"FAILED": "failed", "not checked here": "unchecked"}.get(
                    r.verdict, r.verdict
                ),
            )
        )
    return out


def _print(report: ClassReport, notes: Sequence[str] = ()) -> None:
    from helpers.report import render

    checked = [
        r for r in report.results if r.verdict != "not checked here" and r.kind != "constant"
    ]
    header = tr(
        "classroom self-check of {assignment} (the numbers the notebook shows, edge cases "
        "and bad input): {passed} of {total} passed",
        assignment=report.notebook,
        passed=sum(r.passed for r in checked),
        total=len(checked),
    )
    from helpers.report import html, show

    table = render(header, rows(report)) + "".join("\n\n" + line for line in notes)
    show(table, html(header, rows(report), notes))
    if report.mistakes:
        print("\n" + tr("Known mistakes these checks recognise by name:"))
        for name, mistakes in report.mistakes.items():
            print(f"  {name}: " + "; ".join(tr(mistake) for mistake in mistakes))
    print("\n" + tr(RANDOM_BY_TEACHER))

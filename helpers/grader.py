"""The grading engine: where every graded function is graded.

Two ways in, one verdict logic:

- In the learner's kernel: ``grade("apply_rope")`` in a hidden test cell and
  ``self_check("06_rope")`` in the last cell run the checks of ``helpers.checks``
  against the functions of the notebook's namespace. ``grade`` raises ``WrongAnswer``,
  printed as its message alone; ``self_check`` prints a table and never raises.
- Isolated, for autograding and ``python -m helpers check NB``: ``check_notebook``
  takes the answer cells of the notebook as submitted, imports them as a module in a
  separate worker process (time and memory limits, an audit hook that refuses
  ``helpers``, and the bubblewrap sandbox of ``helpers.sandbox`` when it works), sends
  it the inputs as JSON and reads the outputs back as JSON. Expected values are
  computed here before any learner code runs, and the verdict is made here, so
  nothing the learner's code does inside its own process changes it.

Random cases come from a fresh seed each run, printed in every failure message;
``seed=`` replays them exactly (the cases of one function depend only on the seed and
the function's name, so the kernel and the isolated grader replay the same cases).

Importing this module has no side effects; ``helpers.checks`` and ``helpers.reference``
are imported only when something is graded (the learner build leaves them out).
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import json
import math
import os
import secrets
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "FunctionResult",
    "NotebookError",
    "Report",
    "WrongAnswer",
    "answer_source",
    "check_command",
    "check_notebook",
    "function_for_grade_id",
    "grade",
    "self_check",
    "worker_command",
]

PACKAGE_DIR = Path(__file__).resolve().parent
# Seconds a worker may take to start (Python, numpy, the sandbox) on a busy machine.
START_TIMEOUT = 60.0
# Seconds the answer cells may take to import in the worker.
IMPORT_TIMEOUT = 20.0
# Limits of the worker process.
MEMORY_LIMIT = 3 * 1024**3
FILE_SIZE_LIMIT = 64 * 1024**2
# The largest reply line the grading process accepts from a worker.
MAX_REPLY = 64 * 1024**2
# The largest file of a "files" check the grading process reads.
MAX_REPORT_FILE = 1024**2

_TEACHER_SIDE = (
    "The checks and the reference are not part of this installation: "
    "grading happens on the teacher's side."
)


# --------------------------------------------------------------------------- errors


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


class NotebookError(ValueError):
    """A notebook that cannot be read or graded (the message is one plain line)."""


class _Timeout(BaseException):
    """Raised in the kernel when a learner's function runs past its time limit."""


# --------------------------------------------------------------------------- results


@dataclass
class FunctionResult:
    """The verdict for one graded function."""

    name: str
    passed: bool
    message: str
    mistake: str | None = None
    cases: int = 0

    @property
    def verdict(self) -> str:
        return "passed" if self.passed else "FAILED"


@dataclass
class Report:
    """The verdicts for one notebook, in notebook order."""

    notebook: str
    seed: int
    results: list[FunctionResult] = field(default_factory=list)
    problem: str | None = None

    @property
    def passed(self) -> bool:
        """True when every graded function passed."""
        return all(r.passed for r in self.results)

    def __repr__(self) -> str:
        # short, because a notebook's last cell shows it right under the printed table
        passed = sum(r.passed for r in self.results)
        return f"<Report {self.notebook}: {passed}/{len(self.results)} passed, seed {self.seed}>"

    def __getitem__(self, name: str) -> FunctionResult:
        for result in self.results:
            if result.name == name:
                return result
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return any(r.name == name for r in self.results)

    def table(self) -> str:
        """A plain-text table: function, verdict, message (its first line)."""
        return _table([(r.name, r.verdict, r.message) for r in self.results])


def _table(rows: list[tuple[str, str, str]]) -> str:
    head = ("function", "verdict", "message")
    w0 = max([len(head[0])] + [len(r[0]) for r in rows])
    w1 = max([len(head[1])] + [len(r[1]) for r in rows])
    lines = [f"{head[0]:<{w0}}  {head[1]:<{w1}}  {head[2]}", f"{'-' * w0}  {'-' * w1}  {'-' * 7}"]
    for name, verdict, message in rows:
        first = message.splitlines()[0] if message else ""
        lines.append(f"{name:<{w0}}  {verdict:<{w1}}  {first}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- JSON codec
# These two functions are also the worker's codec: their source is sent to the worker
# (see _worker_source), so they import what they need themselves and use nothing else
# of this module. Decoding builds plain data only (lists, numbers, numpy arrays of
# numeric dtypes); anything else becomes an _Opaque description.


def _encode(value, _depth=0):
    """A JSON-able description of ``value``: arrays, numpy scalars and tuples are tagged."""
    import numbers

    import numpy as np

    if _depth > 40:
        return {"__obj__": "nested structure", "repr": "nested more than 40 levels deep"}
    t = type(value)
    if value is None or t is bool or t is str or t is int or t is float:
        return value
    if isinstance(value, np.ndarray):
        arr = np.asarray(value)
        if arr.size > 4_000_000:
            return {"__obj__": "ndarray", "repr": f"an array of shape {arr.shape} (too large)"}
        if arr.dtype.kind in "biuf":
            return {"__nd__": arr.tolist(), "dtype": arr.dtype.name, "shape": list(arr.shape)}
        if arr.dtype.kind == "c":
            return {
                "__nd__": arr.real.tolist(),
                "imag": arr.imag.tolist(),
                "dtype": arr.dtype.name,
                "shape": list(arr.shape),
            }
        return {
            "__obj__": "ndarray",
            "repr": f"an array of dtype {arr.dtype} and shape {arr.shape}",
        }
    if isinstance(value, np.generic):
        if value.dtype.kind in "biuf":
            return {"__np__": value.dtype.name, "v": value.item()}
        if value.dtype.kind == "c":
            return {"__np__": value.dtype.name, "v": [float(value.real), float(value.imag)]}
        return {"__obj__": type(value).__name__, "repr": repr(value)[:200]}
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, complex):
        return {"__complex__": [value.real, value.imag]}
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, _depth + 1) for v in value]}
    if isinstance(value, list):
        return [_encode(v, _depth + 1) for v in value]
    if isinstance(value, dict):
        return {
            "__dict__": [[_encode(k, _depth + 1), _encode(v, _depth + 1)] for k, v in value.items()]
        }
    try:
        text = repr(value)[:200]
    except Exception:  # noqa: BLE001  (a learner's object whose repr fails)
        text = "?"
    return {"__obj__": type(value).__name__, "repr": text}


_DTYPES = frozenset(
    [
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "longdouble",
        "complex64",
        "complex128",
    ]
)


class _Opaque:
    """Something that was not plain data (a custom object, a ragged array, ...)."""

    def __init__(self, type_name: str, text: str) -> None:
        self.type_name = str(type_name)[:80]
        self.text = str(text)[:200]

    def __repr__(self) -> str:
        return f"<{self.type_name}: {self.text}>"


def _decode(obj, _depth=0):
    """The value described by ``_encode``'s output (plain data only)."""
    import numpy as np

    if _depth > 45:
        return _Opaque("nested structure", "too deep")
    if isinstance(obj, list):
        return [_decode(v, _depth + 1) for v in obj]
    if not isinstance(obj, dict):
        return (
            obj
            if obj is None or isinstance(obj, (bool, int, float, str))
            else _Opaque(type(obj).__name__, "unexpected")
        )
    try:
        if "__nd__" in obj:
            dtype = str(obj.get("dtype"))
            if dtype not in _DTYPES:
                return _Opaque("ndarray", f"dtype {dtype}")
            shape = tuple(int(s) for s in obj.get("shape", []))
            if "imag" in obj:
                arr = np.array(obj["__nd__"], dtype=np.float64) + 1j * np.array(
                    obj["imag"], dtype=np.float64
                )
                arr = arr.astype(dtype)
            else:
                arr = np.array(obj["__nd__"], dtype=dtype)
            return arr.reshape(shape)
        if "__np__" in obj:
            dtype = str(obj["__np__"])
            if dtype not in _DTYPES:
                return _Opaque("numpy scalar", f"dtype {dtype}")
            v = obj["v"]
            if isinstance(v, list):
                v = complex(float(v[0]), float(v[1]))
            return np.dtype(dtype).type(v)
        if "__tuple__" in obj:
            return tuple(_decode(v, _depth + 1) for v in obj["__tuple__"])
        if "__dict__" in obj:
            out = {}
            for k, v in obj["__dict__"]:
                key = _decode(k, _depth + 1)
                if isinstance(key, (list, dict, np.ndarray, _Opaque)):
                    return _Opaque("dict", "a dict with keys that are not names or numbers")
                out[key] = _decode(v, _depth + 1)
            return out
        if "__complex__" in obj:
            re_, im_ = obj["__complex__"]
            return complex(float(re_), float(im_))
        if "__obj__" in obj:
            return _Opaque(str(obj["__obj__"]), str(obj.get("repr", "")))
    except (TypeError, ValueError, KeyError, OverflowError, MemoryError, RecursionError) as exc:
        return _Opaque("value", f"unreadable ({type(exc).__name__})")
    return _Opaque("dict", "unexpected")


def _contains_opaque(value, _depth=0) -> _Opaque | None:
    if isinstance(value, _Opaque):
        return value
    if _depth > 45:
        return None
    if isinstance(value, (list, tuple)):
        items: Iterable = value
    elif isinstance(value, dict):
        items = list(value.keys()) + list(value.values())
    else:
        return None
    for item in items:
        found = _contains_opaque(item, _depth + 1)
        if found is not None:
            return found
    return None


def _describe(value) -> str:
    """A short plain-words description of a returned value."""
    if value is None:
        return "None"
    if isinstance(value, _Opaque):
        return f"an object of class {value.type_name} ({value.text})"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of length {len(value)}"
    if isinstance(value, dict):
        return f"a dict with {len(value)} keys"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --------------------------------------------------------------------------- verdicts


@dataclass
class _Raises:
    """The expected outcome of a case on bad input: a ValueError."""

    message: str


@dataclass
class _Outcome:
    """What a learner's function did on one case."""

    value: Any = None
    error: dict | None = None  # {"type", "message", "value_error", "not_implemented"}
    mutated: bool = False
    files: tuple[str, str] | None = None


def _checks():
    """``helpers.checks`` or None when this installation does not ship it (learner build)."""
    try:
        import helpers.reference  # noqa: F401  (the checks need it)
        from helpers import checks
    except ImportError:
        return None
    return checks


def _case_rng(seed: int, name: str) -> np.random.Generator:
    """The random generator of one function's cases: depends on the seed and the name only."""
    return np.random.default_rng([int(seed), zlib.crc32(name.encode("utf-8"))])


def _cases(check, seed: int) -> list:
    return list(check.fixed()) + list(check.random(_case_rng(seed, check.name)))


def _expectations(checks, check, cases: list) -> list:
    wants = []
    for case in cases:
        try:
            wants.append(checks.expected(check, case))
        except ValueError as exc:  # bad input: the learner's function must raise too
            wants.append(_Raises(str(exc)))
    return wants


def _new_seed() -> int:
    return secrets.randbelow(10**9)


def _label(case) -> str:
    return getattr(case, "label", "") or "a case"


def _judge(checks, check, cases: list, wants: list, outcomes: list, replay: str) -> FunctionResult:
    """The verdict for one function from its outcomes (one per case, in order)."""
    name = check.name
    n = len(cases)
    for case, want, outcome in zip(cases, wants, outcomes):
        failure = _judge_case(checks, check, case, want, outcome)
        if failure is not None:
            text, mistake = failure
            err = outcome.error or {}
            if err.get("not_implemented") or err.get("missing"):
                replay = ""  # the cases do not matter: no need to replay them
            return FunctionResult(
                name,
                False,
                _message(check, text, mistake, replay),
                mistake.name if mistake is not None else None,
                n,
            )
    return FunctionResult(
        name, True, f"all {n} checks passed" if n != 1 else "1 check passed", None, n
    )


def _message(check, text: str, mistake, replay: str) -> str:
    lines = [text]
    if mistake is not None:
        lines.append(f"This looks like a known mistake ({mistake.name}): {mistake.message}")
    if getattr(check, "section", ""):
        lines.append(f"See {check.section}.")
    if replay:
        lines.append(replay)
    return "\n".join(lines)


def _judge_case(checks, check, case, want, outcome: _Outcome):
    """None when the case passed, else (what went wrong, the named mistake or None)."""
    name = check.name
    label = _label(case)
    err = outcome.error
    if err is not None:
        etype = err.get("type", "an error")
        if err.get("not_implemented"):
            return f"{name} is not written yet (it raises NotImplementedError).", None
        if err.get("timeout"):
            text = f"{name} did not finish within {err.get('seconds')} s on {label}"
            return f"{text} (an endless loop?).", None
        if err.get("died"):
            return f"{name} ended the grading process on {label}: {err.get('message')}.", None
        if err.get("missing"):
            return str(err.get("message")), None
        if isinstance(want, _Raises) and err.get("value_error"):
            return None
        if etype == "SystemExit":
            return f"{name} called sys.exit() on {label}.", None
        msg = str(err.get("message", ""))
        detail = f"{etype}: {msg}" if msg else etype
        if isinstance(want, _Raises):
            return f"{name} should raise ValueError on {label}, but it raised {detail}.", None
        return f"{name} raised {detail} on {label}.", None
    if isinstance(want, _Raises):
        text = (
            f"{name} should raise ValueError on {label} (bad input needs a clear error: "
            f"{want.message}), but it returned {_describe(outcome.value)}."
        )
        return text, None
    if check.kind == "files":
        if outcome.files is None:
            return f"{name} did not write both files on {label}.", None
        ok, detail = checks.check_report_files(*outcome.files)
        if not ok:
            return f"{name} wrote wrong files on {label}: {detail}", None
        return _mutation_failure(checks, check, label, outcome)
    opaque = _contains_opaque(outcome.value)
    if opaque is not None:
        return f"{name} returned {_describe(opaque)} on {label}, not plain numbers.", None
    try:
        got = checks.normalize(check.kind, outcome.value)
    except (ValueError, TypeError) as exc:
        return f"{name} on {label}: {exc}", None
    ok, detail = checks.agree(check.kind, got, want)
    if not ok:
        mistake = checks.diagnose(check, case, got)
        if mistake is None and outcome.mutated and check.check_mutation:
            mistake = _mutation_mistake(checks, check)
        return f"{name} is wrong on {label}: {detail}", mistake
    return _mutation_failure(checks, check, label, outcome)


def _mutation_failure(checks, check, label: str, outcome: _Outcome):
    if check.check_mutation and outcome.mutated:
        return f"{check.name} changed its input on {label}.", _mutation_mistake(checks, check)
    return None


def _mutation_mistake(checks, check):
    finder = getattr(checks, "mutation_mistake", None)
    return finder(check) if finder is not None else checks.MUTATION


# --------------------------------------------------------------------------- in the kernel


def _same(a, b) -> bool:
    """Exact equality of plain data and arrays (NaN equals NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001  (a learner's object may refuse to compare)
        return False


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


def _report_names(case) -> tuple[str, str]:
    """The two file names of a "files" case (basenames of its first two string args)."""
    names = [os.path.basename(str(a)) for a in case.args if isinstance(a, (str, os.PathLike))]
    if len(names) >= 2 and names[0] and names[1] and names[0] != names[1]:
        return names[0], names[1]
    return "rope_report.json", "rope_report.md"


def _call_in_kernel(func, check, case) -> _Outcome:
    """Run one case in this process (the learner's kernel)."""
    args = copy.deepcopy(tuple(case.args))
    kwargs = copy.deepcopy(dict(case.kwargs))
    before = copy.deepcopy((args, kwargs)) if check.check_mutation else None
    files = None
    try:
        if check.kind == "files":
            with tempfile.TemporaryDirectory(prefix="pe-check-") as tmp:
                json_name, md_name = _report_names(case)
                paths = (os.path.join(tmp, json_name), os.path.join(tmp, md_name))
                value = func(*paths)
                files = tuple(_read_small(p) for p in paths)
                files = None if None in files else files
        else:
            value = func(*args, **kwargs)
        value = _decode(_encode(value))
    except _Timeout:
        raise
    except BaseException as exc:  # SystemExit too: it is the learner's answer
        if isinstance(exc, KeyboardInterrupt):
            raise
        return _Outcome(error=_error_dict(exc))
    mutated = before is not None and not _same((args, kwargs), before)
    return _Outcome(value=value, mutated=mutated, files=files)


def _error_dict(exc: BaseException) -> dict:
    try:
        message = str(exc)[:500]
    except Exception:  # noqa: BLE001  (a learner's exception whose str fails)
        message = ""
    return {
        "type": type(exc).__name__,
        "message": message,
        "value_error": isinstance(exc, ValueError),
        "not_implemented": isinstance(exc, NotImplementedError),
    }


def _read_small(path: str) -> str | None:
    """The text of a regular file of at most MAX_REPORT_FILE bytes, else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (st.st_mode & 0o170000) != 0o100000 or st.st_size > MAX_REPORT_FILE:
            return None
        data = os.read(fd, MAX_REPORT_FILE + 1)
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")


def _grade_in_namespace(
    checks, check, namespace: Mapping, seed: int, replay: str
) -> FunctionResult:
    """Run one function's checks against ``namespace[check.name]`` in this process."""
    name = check.name
    cases = _cases(check, seed)
    wants = _expectations(checks, check, cases)  # before any learner code runs
    if name not in namespace:
        what = "constant" if check.kind == "constant" else "function"
        return FunctionResult(
            name,
            False,
            _message(
                check,
                f"{name} is not defined: run the cell that defines this {what} first.",
                None,
                "",
            ),
            None,
            len(cases),
        )
    target = namespace[name]
    if check.kind == "constant":
        outcomes = [_Outcome(value=_decode(_encode(target))) for _ in cases]
        return _judge(checks, check, cases, wants, outcomes, replay)
    if not callable(target):
        return FunctionResult(
            name,
            False,
            _message(check, f"{name} is not a function (it is {_describe(target)}).", None, ""),
            None,
            len(cases),
        )
    outcomes: list[_Outcome] = []
    try:
        with _Alarm(check.timeout):
            for case in cases:
                outcome = _call_in_kernel(target, check, case)
                outcomes.append(outcome)
                if _judge_case(checks, check, case, wants[len(outcomes) - 1], outcome):
                    break
    except _Timeout:
        outcomes.append(
            _Outcome(error={"type": "Timeout", "timeout": True, "seconds": check.timeout})
        )
    return _judge(checks, check, cases[: len(outcomes)], wants[: len(outcomes)], outcomes, replay)


def _caller_globals(depth: int = 2) -> dict:
    frame = inspect.currentframe()
    try:
        for _ in range(depth):
            frame = frame.f_back if frame is not None else None
        return frame.f_globals if frame is not None else {}
    finally:
        del frame


def grade(name: str, seed: int | None = None, namespace: Mapping | None = None) -> None:
    """Check the learner's ``name`` (from the calling notebook's namespace) against the reference.

    Runs the fixed and the random cases of ``helpers.checks.CHECKS[name]`` in this
    process and raises ``WrongAnswer`` with one plain message on the first failure.
    While nbgrader autogrades, the isolated grader replaces the cell's output, so this
    only prints one line.
    """
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        print(f"{name}: graded outside the kernel")
        return
    checks = _checks()
    if checks is None:
        print(_TEACHER_SIDE)
        return
    if name not in checks.CHECKS:
        raise ValueError(f"name must be a graded function of the course, got {name!r}")
    if seed is None:
        seed = _new_seed()
    elif isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    ns = namespace if namespace is not None else _caller_globals()
    replay = f"Random cases from seed {seed}; replay with: grade({name!r}, seed={seed})"
    result = _grade_in_namespace(checks, checks.CHECKS[name], ns, seed, replay)
    if not result.passed:
        raise WrongAnswer(result.message)
    print(f"{name}: {result.message}")


def self_check(
    assignment: str, seed: int | None = None, namespace: Mapping | None = None
) -> Report | None:
    """Run the checks of every graded function of ``assignment`` here and print a table.

    Never raises: a failing or unwritten function is a row of the table. Returns the
    report (None when the checks are not installed or while nbgrader autogrades).
    """
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        print(f"self-check of {assignment}: graded outside the kernel")
        return None
    checks = _checks()
    if checks is None:
        print(f"self-check of {assignment}: {_TEACHER_SIDE}")
        return None
    ns = namespace if namespace is not None else _caller_globals()
    if seed is None:
        seed = _new_seed()
    report = Report(notebook=str(assignment), seed=int(seed))
    try:
        todo = checks.checks_for(assignment)
    except Exception as exc:  # noqa: BLE001  (the self-check never raises)
        print(f"self-check of {assignment}: cannot list its checks ({exc})")
        return None
    if not todo:
        print(f"self-check of {assignment}: no graded functions are known for this notebook")
        return report
    for check in todo:
        replay = (
            f"Random cases from seed {seed}; replay with: self_check({assignment!r}, seed={seed})"
        )
        try:
            result = _grade_in_namespace(checks, check, ns, seed, replay)
        except Exception as exc:  # noqa: BLE001
            result = FunctionResult(check.name, False, f"could not be checked: {exc}")
        report.results.append(result)
    passed = sum(r.passed for r in report.results)
    print(f"self-check of {assignment} (seed {seed}): {passed} of {len(report.results)} passed")
    print(report.table())
    for result in report.results:
        if not result.passed and "replay with" in result.message:
            print(f"\n{result.name}:\n{result.message}")
    return report


# --------------------------------------------------------------------------- notebooks


def _read_notebook(path_or_nb) -> tuple[Any, str]:
    """(notebook node, label for messages) from a path or an already loaded notebook."""
    import nbformat

    if isinstance(path_or_nb, (str, os.PathLike)):
        path = Path(path_or_nb)
        try:
            nb = nbformat.read(str(path), as_version=4)
        except FileNotFoundError as exc:
            raise NotebookError(f"{path}: no such notebook") from exc
        except Exception as exc:  # json, validation and encoding errors
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise NotebookError(f"{path}: not a readable notebook ({first})") from exc
        return nb, str(path)
    if isinstance(path_or_nb, Mapping) and "cells" in path_or_nb:
        return nbformat.from_dict(path_or_nb), "<notebook>"
    raise NotebookError(f"path_or_nb must be a notebook path or node, got {type(path_or_nb)!r}")


def nbgrader_meta(cell) -> Mapping:
    """The cell's nbgrader metadata (empty when it has none or it is not a mapping)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, Mapping) else {}


def _answer_cells(nb) -> list:
    return [
        c
        for c in nb.get("cells", [])
        if c.get("cell_type") == "code" and nbgrader_meta(c).get("solution")
    ]


_KEEP_CELL_MAGICS = ("%%time", "%%timeit", "%%capture")


def _strip_magics(source: str) -> str:
    """IPython magics and shell lines (% !) commented out; other cell magics drop the cell."""
    lines = source.splitlines()
    first = lines[0].lstrip() if lines else ""
    if first.startswith("%%") and not first.startswith(_KEEP_CELL_MAGICS):
        return "\n".join("# " + line for line in lines)
    out = []
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            out.append(line[: len(line) - len(stripped)] + "# " + stripped)
        else:
            out.append(line)
    return "\n".join(out)


def answer_source(nb) -> tuple[str, list[tuple[int, str]]]:
    """The module the grader imports: ``import math``, ``import numpy as np``, the answer cells.

    Returns the source and, for each cell, (first line number, grade id) so that an
    error at a line can be traced back to its cell.
    """
    parts = ["import math", "import numpy as np", ""]
    starts: list[tuple[int, str]] = []
    line = len(parts) + 1
    for cell in _answer_cells(nb):
        grade_id = str(nbgrader_meta(cell).get("grade_id", "?"))
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else str(src)
        body = _strip_magics(src)
        parts.append(f"# --- answer cell {grade_id}")
        starts.append((line + 1, grade_id))
        parts.append(body)
        parts.append("")
        line += 2 + body.count("\n") + 1
    return "\n".join(parts) + "\n", starts


def _where(lineno: int | None, starts: list[tuple[int, str]]) -> str:
    if not lineno:
        return "the answer cells"
    cell, first = "the answer cells", 1
    for start, grade_id in starts:
        if lineno >= start:
            cell, first = f"answer cell {grade_id}", start
    return f"{cell}, line {lineno - first + 1}"


def function_for_grade_id(grade_id: str, names: Iterable[str]) -> str | None:
    """The graded function a grade cell tests: the longest name with ``test_<name>`` a prefix."""
    best = None
    for name in names:
        if str(grade_id).startswith(f"test_{name}") and (best is None or len(name) > len(best)):
            best = name
    return best


def _grade_cells(nb) -> list:
    return [
        c
        for c in nb.get("cells", [])
        if nbgrader_meta(c).get("grade") and c.get("cell_type") == "code"
    ]


def _functions_of(nb, label: str, checks) -> list[str]:
    names: list[str] = []
    for cell in _grade_cells(nb):
        fn = function_for_grade_id(str(nbgrader_meta(cell).get("grade_id", "")), checks.CHECKS)
        if fn is not None and fn not in names:
            names.append(fn)
    stem = Path(label).stem
    from helpers import ASSIGNMENTS

    if stem in ASSIGNMENTS:
        for check in checks.checks_for(stem):
            if check.name not in names:
                names.append(check.name)
    return names


# --------------------------------------------------------------------------- the worker
# _worker_main runs in the separate process, from source (see _worker_source). It uses
# nothing of this module but _encode and _decode, which are sent along with it.


def _worker_main():
    """The worker: import the answers, then call functions on cases sent as JSON lines."""
    import builtins
    import json
    import os
    import resource
    import sys
    import types

    rin = os.fdopen(os.dup(0), "rb")
    wout = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)  # the learner's prints go to stderr, never into the replies
    dumps, loads = json.dumps, json.loads
    encode, decode = _encode, _decode
    realpath, fsdecode, sep = os.path.realpath, os.fsdecode, os.sep

    def send(obj):
        wout.write(dumps(obj).encode("utf-8") + b"\n")
        wout.flush()

    def receive():
        line = rin.readline()
        if not line:
            os._exit(0)
        return loads(line)

    import math  # noqa: F401

    import numpy  # noqa: F401  (imported once, before any learner code)

    send({"ready": True})
    cfg = receive()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for limit, value in (
        (resource.RLIMIT_AS, cfg["memory"]),
        (resource.RLIMIT_CPU, cfg["cpu"]),
        (resource.RLIMIT_FSIZE, cfg["fsize"]),
    ):
        _soft, hard = resource.getrlimit(limit)
        value = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
        resource.setrlimit(limit, (value, hard))

    package = realpath(cfg["package_dir"])
    blocked_modules = ("helpers", "ctypes", "_ctypes", "cffi")
    blocked_events = (
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "pty.spawn",
        "ctypes.dlopen",
        "ctypes.dlsym",
        "ctypes.dlsym/handle",
        "ctypes.cdata",
        "ctypes.call_function",
        "os.startfile",
    )
    attempts = []
    busy = [False]

    def hook(event, args):
        if busy[0]:
            return
        busy[0] = True
        try:
            if event == "import":
                name = str(args[0] or "")
                if name.split(".")[0] in blocked_modules:
                    attempts.append(f"import {name}")
                    raise ImportError(f"grading does not allow importing {name}")
            elif event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
                path = realpath(fsdecode(args[0]))
                # os.open (mode None) may be relative to any folder (dir_fd): refuse those.
                relative = args[1] is None and not os.path.isabs(fsdecode(args[0]))
                if relative or path == package or path.startswith(package + sep):
                    attempts.append(f"open {path}")
                    raise PermissionError(f"grading does not allow reading {path}")
            elif event in blocked_events:
                attempts.append(event)
                raise PermissionError(f"grading does not allow {event}")
        finally:
            busy[0] = False

    def inert(*args, **kwargs):
        return Inert()

    class Inert:
        def __getattr__(self, name):
            return inert

        def __setattr__(self, name, value):
            pass

        def __call__(self, *args, **kwargs):
            return self

    def error_of(exc):
        try:
            message = str(exc)[:500]
        except BaseException:  # noqa: BLE001
            message = ""
        tb, line = exc.__traceback__, None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == "<answers>":
                line = tb.tb_lineno
            tb = tb.tb_next
        if line is None and isinstance(exc, SyntaxError) and exc.filename == "<answers>":
            line = exc.lineno
        return {
            "type": type(exc).__name__,
            "message": message,
            "line": line,
            "value_error": isinstance(exc, ValueError),
            "not_implemented": isinstance(exc, NotImplementedError),
        }

    module = types.ModuleType("answers")
    module.__dict__["get_ipython"] = inert
    module.__dict__["__builtins__"] = builtins
    sys.addaudithook(hook)
    loaded = False
    while True:
        msg = receive()
        op = msg.get("op")
        if op == "load":
            del attempts[:]
            try:
                code = compile(msg["source"], "<answers>", "exec", dont_inherit=True)
                sys.modules["answers"] = module
                exec(code, module.__dict__)  # noqa: S102  (the worker's one job)
                loaded = True
                send({"loaded": True, "attempts": list(attempts)})
            except BaseException as exc:  # noqa: BLE001
                send({"loaded": False, "error": error_of(exc), "attempts": list(attempts)})
        elif op == "call" and loaded:
            del attempts[:]
            name, kind = msg["name"], msg["kind"]
            for i, raw in enumerate(msg["cases"]):
                args, kwargs = decode(raw["args"]), decode(raw["kwargs"])
                before = dumps(encode([args, kwargs])) if msg.get("mutation") else None
                out = {"i": i}
                try:
                    if name not in module.__dict__:
                        out["error"] = {
                            "type": "NameError",
                            "missing": True,
                            "message": f"{name} is not defined in the answer cells.",
                        }
                    elif kind == "constant":
                        out["value"] = encode(module.__dict__[name])
                    elif not callable(module.__dict__[name]):
                        out["error"] = {
                            "type": "TypeError",
                            "missing": True,
                            "message": f"{name} is not a function.",
                        }
                    else:
                        value = module.__dict__[name](*args, **kwargs)
                        out["value"] = encode(value)
                except BaseException as exc:  # noqa: BLE001
                    out["error"] = error_of(exc)
                if before is not None:
                    try:
                        out["mutated"] = dumps(encode([args, kwargs])) != before
                    except BaseException:  # noqa: BLE001
                        out["mutated"] = True
                try:
                    send(out)
                except (TypeError, ValueError):
                    send({"i": i, "value": {"__obj__": "value", "repr": "not readable"}})
            send({"done": True, "attempts": list(attempts)})
        else:
            send({"error": "unknown request"})


@functools.lru_cache(maxsize=1)
def _worker_source() -> str:
    parts = [
        "_DTYPES = " + repr(set(_DTYPES)),
        inspect.getsource(_Opaque),
        inspect.getsource(_encode),
        inspect.getsource(_decode),
        inspect.getsource(_worker_main),
        "_worker_main()",
    ]
    return "\n\n".join(parts) + "\n"


def worker_command(workdir: str | os.PathLike) -> list[str]:
    """The worker's command line, inside the grading sandbox when ``helpers.sandbox`` exists.

    ``python -I`` ignores the environment's Python variables and the user site; the
    worker may write only in ``workdir``.
    """
    argv = [sys.executable, "-I", "-c", _worker_source()]
    try:
        from helpers import sandbox
    except ImportError:
        return argv
    return sandbox.wrap(argv, writable=[str(workdir)], cwd=str(workdir))


class _WorkerDied(Exception):
    pass


class _WorkerTimeout(Exception):
    pass


def _clean_env(workdir: str) -> dict[str, str]:
    env = {
        "PATH": os.defpath,
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
        "NBGRADER_EXECUTION": "autograde",
    }
    # OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are set on machines whose processor older
    # OpenBLAS builds misdetect: numpy in the worker must see them too.
    for key in ("PE_COURSE_SANDBOX", "PE_COURSE_BWRAP", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


class _Worker:
    """One worker process and its JSON-lines channel."""

    def __init__(self, workdir: str, cpu_seconds: float) -> None:
        self.errfile = tempfile.TemporaryFile()  # noqa: SIM115  (closed in stop())
        self.proc = subprocess.Popen(
            worker_command(workdir),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errfile,
            cwd=workdir,
            env=_clean_env(workdir),
            start_new_session=True,
            close_fds=True,
        )
        self.buffer = b""
        self.reply = self.proc.stdout.fileno()
        os.set_blocking(self.reply, False)
        os.set_blocking(self.proc.stdin.fileno(), False)
        deadline = time.monotonic() + START_TIMEOUT
        self.receive(deadline)  # ready
        self.send(
            {
                "memory": MEMORY_LIMIT,
                "cpu": int(cpu_seconds) + 1,
                "fsize": FILE_SIZE_LIMIT,
                "package_dir": str(PACKAGE_DIR),
            },
            deadline,
        )

    def send(self, obj: dict, deadline: float) -> None:
        data = (json.dumps(obj) + "\n").encode("utf-8")
        fd = self.proc.stdin.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_WRITE)
            while data:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _WorkerTimeout()
                if not sel.select(left):
                    continue
                try:
                    n = os.write(fd, data)
                except BlockingIOError:
                    continue
                except (BrokenPipeError, OSError) as exc:
                    raise _WorkerDied(self.death()) from exc
                data = data[n:]

    def receive(self, deadline: float) -> dict:
        with selectors.DefaultSelector() as sel:
            sel.register(self.reply, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _WorkerTimeout()
                if not sel.select(left):
                    continue
                try:
                    chunk = os.read(self.reply, 1 << 20)
                except BlockingIOError:
                    continue
                if not chunk:
                    raise _WorkerDied(self.death())
                self.buffer += chunk
                if len(self.buffer) > MAX_REPLY:
                    self.stop()
                    raise _WorkerDied("its output was too large")
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError) as exc:
            self.stop()
            raise _WorkerDied("it sent something unreadable") from exc
        if not isinstance(reply, dict):
            self.stop()
            raise _WorkerDied("it sent something unreadable")
        return reply

    def death(self) -> str:
        """How the worker ended, in plain words."""
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.stop()
            return "the process stopped answering"
        if code < 0:
            try:
                sig = signal.Signals(-code).name
            except ValueError:
                sig = str(-code)
            why = {
                "SIGXCPU": " (CPU time limit)",
                "SIGSEGV": " (a crash)",
                "SIGKILL": " (killed, maybe out of memory)",
            }.get(sig, "")
            return f"the process was ended by {sig}{why}"
        return f"the process exited with code {code} (os._exit or a crash)"

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self.errfile.close()


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
    where = _where(error.get("line"), starts)
    if etype == "SystemExit":
        return f"the answer cells could not be imported: {where} calls sys.exit()"
    return f"the answer cells could not be imported: {etype} in {where}: {msg}"


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
    checks = _checks()
    if checks is None:
        raise RuntimeError(_TEACHER_SIDE)
    nb, label = _read_notebook(path_or_nb)
    if seed is None:
        seed = _new_seed()
    elif isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if names is None:
        names = _functions_of(nb, label, checks)
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
        cases = _cases(check, seed)
        plans.append(_Plan(check, cases, _expectations(checks, check, cases)))
    if not plans:
        return report

    source, starts = answer_source(nb)
    try:
        ast.parse(source, filename="<answers>")
    except SyntaxError as exc:
        report.problem = (
            f"the answer cells could not be imported: SyntaxError in "
            f"{_where(exc.lineno, starts)}: {exc.msg}"
        )
    except (ValueError, RecursionError, MemoryError) as exc:
        report.problem = f"the answer cells could not be imported: {type(exc).__name__}"
    if report.problem is not None:
        for plan in plans:
            report.results.append(_failed(plan, report.problem, replay))
        return report

    with tempfile.TemporaryDirectory(prefix="pe-grade-") as workdir:
        workdir = os.path.realpath(workdir)
        _run_plans(checks, plans, source, starts, workdir, replay, report)
    return report


def _failed(plan: _Plan, problem: str, replay: str) -> FunctionResult:
    text = f"{plan.check.name} could not be graded: {problem}."
    return FunctionResult(
        plan.check.name, False, _message(plan.check, text, None, replay), None, len(plan.cases)
    )


def _run_plans(
    checks, plans: list[_Plan], source: str, starts: list, workdir: str, replay: str, report: Report
) -> None:
    worker: _Worker | None = None
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
            result = _judge(
                checks,
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
                    _message(plan.check, f"{plan.check.name}: {blocked}.", None, replay),
                    None,
                    len(plan.cases),
                )
            report.results.append(result)
    finally:
        if worker is not None:
            worker.stop()


def _start_worker(
    workdir: str, cpu: float, source: str, starts: list
) -> tuple[_Worker | None, str | None]:
    try:
        worker = _Worker(workdir, cpu)
    except (_WorkerDied, _WorkerTimeout, OSError) as exc:
        return None, f"the grading process could not start ({exc or type(exc).__name__})"
    deadline = time.monotonic() + IMPORT_TIMEOUT
    try:
        worker.send({"op": "load", "source": source}, deadline)
        reply = worker.receive(deadline)
    except _WorkerDied as exc:
        worker.stop()
        return None, _load_failure({"died": True, "message": str(exc)}, [], starts)
    except _WorkerTimeout:
        worker.stop()
        return None, _load_failure({"timeout": True}, [], starts)
    if not reply.get("loaded"):
        worker.stop()
        error = reply.get("error") if isinstance(reply.get("error"), dict) else {}
        return None, _load_failure(error, list(reply.get("attempts") or []), starts)
    return worker, None


def _call_worker(worker: _Worker, plan: _Plan, workdir: str) -> tuple[list, list, bool]:
    """Outcomes of the cases run so far, blocked attempts, and whether the worker lives on."""
    check = plan.check
    file_names = [_report_names(c) for c in plan.cases] if check.kind == "files" else []
    cases = []
    for i, case in enumerate(plan.cases):
        args = tuple(case.args)
        if check.kind == "files":
            args = tuple(os.path.join(workdir, n) for n in file_names[i])
        cases.append({"args": _encode(list(args)), "kwargs": _encode(dict(case.kwargs))})
    deadline = time.monotonic() + float(check.timeout)
    outcomes: list[_Outcome] = []
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
            outcome = _outcome_of(reply)
            if check.kind == "files" and outcome.error is None:
                i = len(outcomes)
                texts = tuple(_read_small(os.path.join(workdir, n)) for n in file_names[i])
                outcome.files = None if None in texts else texts
                _remove_files(workdir, file_names)
            outcomes.append(outcome)
            if len(outcomes) > len(plan.cases):
                worker.stop()
                return outcomes[: len(plan.cases)], [], False
    except _WorkerTimeout:
        outcomes.append(
            _Outcome(error={"type": "Timeout", "timeout": True, "seconds": check.timeout})
        )
        return outcomes[: len(plan.cases)], [], False
    except _WorkerDied as exc:
        outcomes.append(_Outcome(error={"type": "Died", "died": True, "message": str(exc)}))
        return outcomes[: len(plan.cases)], [], False


def _remove_files(workdir: str, file_names: list) -> None:
    for pair in file_names:
        for name in pair:
            try:
                os.unlink(os.path.join(workdir, name))
            except OSError:
                pass


def _outcome_of(reply: dict) -> _Outcome:
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
        return _Outcome(error=clean)
    try:
        value = _decode(reply.get("value"))
    except RecursionError:
        value = _Opaque("value", "nested too deep")
    return _Outcome(value=value, mutated=reply.get("mutated") is True)


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

"""A learner's notebook session: Run All goes on past an unwritten exercise and a failed test.

``helpers.start()``, in each notebook's first cell, prints the versions and, in a learner's
IPython kernel, lets every later cell carry on when it meets an unwritten exercise or a
visible test that fails:

- a cell that calls a function whose body still raises ``NotImplementedError`` stops
  there, says which function is missing, and the notebook goes on with the next cell;
- what the stopped cell assigned is removed (it is half done at best), and a later cell
  that needs it (``NameError``) says so too, instead of stopping Run All;
- a visible test that fails (a failed ``assert`` in any cell, or any error in a test cell,
  ``test_...``) shows its traceback as usual, says that the notebook goes on, and the
  next cell runs: "Run All" reaches the self-check in the last cell.

Tracebacks point at the line that raised, in the cell and in the learner's functions, and
show no frame of this module (the wrappers that watch the learner's functions while a cell
runs): ``start()`` has the shell's traceback formatter read each frame's line from the
traceback (IPython reads a kernel cell's line from its frame, which is still at the guard
of a statement of many lines) and leave this module's frames out. Every other error stops the
notebook as usual; the cell that stopped it is remembered (``last_stop``), so that the
self-check can say which cell a run stopped at. While nbgrader validates or autogrades
(``NBGRADER_EXECUTION`` is set) nothing changes: a missing function or a failed assert
fails its test as before.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import inspect
import os
import re
import sys
from dataclasses import dataclass

import helpers
from helpers import came_back
from helpers.i18n import tr

__all__ = [
    "CarryOn",
    "Stop",
    "broken",
    "broken_lines",
    "failed_tests",
    "last_stop",
    "not_written",
    "start",
]

# The names a stopped cell did not get to assign (they are explained, not reported as typos),
# with the error that stopped it when the learner's function raised one.
_UNSET: dict[str, str] = {}
_UNSET_ERROR: dict[str, str] = {}
# The learner's functions: the name each answer cell defined -> the file its code is in.
_LEARNER: dict[str, str] = {}
# The learner's functions that returned while the running cell ran, each with the last
# value it returned (``_returned_to``).
_CALLED: dict[str, object] = {}
_GUARD = "__pe_carry_on__"
_GO = "__pe_go__"  # False once a statement of the running cell was carried past
_RESULT = "__pe_result__"


@dataclass(frozen=True)
class Stop:
    """A cell that stopped with an error, or a visible test that failed."""

    count: int | None  # its execution count, ``[12]``
    cell: str  # its first line, cut to fit
    error: str  # "AssertionError: expected ..."
    cell_id: str | None = None

    def where(self) -> str:
        """``cell [12] (its first line)``, or without the count when it is unknown."""
        if self.count is None:
            return tr("the cell {cell}", cell=self.cell)
        return tr("cell [{count}] ({cell})", count=self.count, cell=self.cell)

    def short(self) -> str:
        """``cell [12]``, or ``where()`` when the count is unknown."""
        if self.count is None:
            return self.where()
        return tr("cell [{count}]", count=self.count)


# The running cell (its id, when the front end sends one, its count and source), the last
# cell that stopped with an error, and the visible tests that failed, by tested function.
_STATE: dict = {
    "cell_id": None,
    "count": None,
    "source": "",
    "carried": False,
    "stop": None,
    "failed": {},
    "recording": ({}, {}),  # while a test runs: calls made to its function's callees
    "started": False,  # start() ran in this kernel
}
# The answer cells that failed (a syntax error, an error, too long a run): the names each
# would have defined -> the cell (a Stop). A later run of the cell to its end clears them.
_BROKEN: dict[str, Stop] = {}
# How long an answer cell may run, and how much it may print, before it is stopped: an
# answer cell defines functions; one that runs on (an endless loop, endless output) would
# keep Run All from the self-check.
ANSWER_CELL_SECONDS = 60.0
ANSWER_CELL_OUTPUT = 200_000  # characters
_ANSWER_PREFIXES = ("answer_", "recap_")

# What a callee gets wrong now on the calls a test made to it (``judge(callee, calls)``),
# given by ``helpers.grader`` (it has the checks); None: no callee is ever named.
_JUDGE: list = [None]
MAX_RECORDED = 8  # calls kept per callee while a test runs


def _wrong_types(name: str) -> list[str]:
    """What the grader says of a value of the wrong type the tested function returned in
    this test (a list where an array is asked for), in the same words."""
    note = _JUDGE[1] if len(_JUDGE) > 1 else None
    if note is None:
        return []
    for value in _STATE.get("returned", []):
        try:
            said = note(name, value)
        except Exception:  # noqa: BLE001, S112 - a note that cannot be decided is not shown
            continue
        if said:
            return [said]
    return []


def note_types_with(note) -> None:
    """``note(name, value)``: what the grader says of ``value`` returned by ``name`` when its
    type is wrong (a list where an array is asked for), or None."""
    while len(_JUDGE) < 2:
        _JUDGE.append(None)
    _JUDGE[1] = note


def judged(callee: str, calls) -> str | None:
    """What the judge ``helpers.grader`` gave says ``callee`` gets wrong on ``calls``
    (``[(fn, args, kwargs), ...]``), or None where no judge is set."""
    judge = _JUDGE[0]
    return None if judge is None else judge(callee, calls)


def judge_callees_with(judge) -> None:
    """The function that decides, when a visible test fails, whether a function its tested
    function calls is wrong now on the values the test gave it: ``judge(callee, calls)``
    with ``calls`` a list of ``(function, args, kwargs)``; it returns what is wrong, or None."""
    _JUDGE[0] = judge


def start() -> None:
    """The first cell of every notebook: print the versions; in a learner's kernel, carry on.

    While nbgrader validates (the Validate button), a failed assert still fails its cell,
    and its traceback says what came back too. While nbgrader autogrades, nothing is added.
    Calling it again does not add a second hook.
    """
    helpers.print_versions()
    _STATE["started"] = True  # a NameError is no longer a restarted kernel's (fresh_kernel)
    mode = os.environ.get("NBGRADER_EXECUTION")
    if mode and mode != "validate":
        return
    try:
        shell = get_ipython()
    except NameError:
        return
    from helpers import fresh_kernel

    fresh_kernel.stand_down(shell)
    _at_raising_lines(shell.InteractiveTB)
    if mode == "validate":
        if AssertionError not in shell.custom_exceptions:
            shell.set_custom_exc((AssertionError,), _explained)
            _watch(shell)
        return
    if not any(isinstance(t, CarryOn) for t in shell.ast_transformers):
        _STATE["carrying"] = True
        shell.ast_transformers.append(CarryOn())
        shell.user_ns[_GUARD] = sys.modules[__name__]
        shell.input_transformers_post.append(_syntax_checked)
        _watch(shell)


def _at_raising_lines(formatter) -> None:
    """IPython's traceback formatter (the shell's ``InteractiveTB``), made to show each frame
    at the line that raised, and no frame of this module, in every traceback it draws (a
    failed test, an error carried past or not, the exceptions it was raised while handling).

    IPython draws a frame whose file it cannot open (a kernel's cell) at the frame's current
    line: a cell whose guard is still running is at the first line of the statement that
    failed (``try:``), not at the line that raised in it. Calling it again changes nothing.
    """
    records = getattr(formatter, "get_records", None)
    if records is None or getattr(records, "_pe_at_raising_lines", False):
        return

    @functools.wraps(records)
    def get_records(etb, *args, **kwargs):
        return _shown_records(records(etb, *args, **kwargs), etb)

    get_records._pe_at_raising_lines = True
    formatter.get_records = get_records


def _shown_records(records: list, etb) -> list:
    """IPython's frames of the traceback ``etb``: this module's left out, each at the line
    that raised (``tb_lineno``, as Python's own traceback has it)."""
    try:
        lines, tb = {}, etb
        while tb is not None:
            lines[id(tb.tb_frame)] = tb.tb_lineno
            tb = tb.tb_next
        shown = []
        for record in records:
            frame = getattr(record, "frame", None)
            if frame is not None and frame.f_code.co_filename == __file__:
                continue
            line = lines.get(id(frame)) if frame is not None else None
            if getattr(record, "_sd", True) is None and isinstance(line, int) and line > 0:
                record.lineno = line  # a frame IPython drew from its current line
            shown.append(record)
    except Exception:  # noqa: BLE001 - another IPython: its frames as it draws them
        return records
    return shown or records


def _watch(shell) -> None:
    shell.events.register("pre_run_cell", _pre_run_cell)
    shell.events.register("post_run_cell", _post_run_cell)


def _explained(shell, etype, value, tb, tb_offset=None) -> list[str]:
    """While nbgrader validates: a failed assert's traceback, then what came back.

    IPython's handler of ``set_custom_exc`` shows what it is given: the traceback as
    IPython draws it, with the lines of ``_failed`` under it (the cell still failed).
    """
    stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
    stb = [*stb, *_failed(value, shell.user_ns)]
    shell._showtraceback(etype, value, stb)
    return stb


def last_stop() -> Stop | None:
    """The last cell that stopped with an error in this kernel (Run All stops there)."""
    return _STATE["stop"]


def failed_tests() -> dict[str, Stop]:
    """The visible tests that failed (and have not passed since), by the function they test."""
    return dict(_STATE["failed"])


def _pre_run_cell(info) -> None:
    _STATE.update(
        cell_id=getattr(info, "cell_id", None),
        count=None,  # known once it ran (``_post_run_cell``)
        source=info.raw_cell or "",
        carried=False,
    )
    _CALLED.clear()
    name = _tested_name(_STATE["source"])
    if name:
        _record_callees(name, _user_ns())
    if _is_answer_cell():
        _limit_answer_cell()
    elif not _is_test_cell():
        _watch_returns(_user_ns())


def _user_ns() -> dict:
    """The notebook's namespace (IPython's ``get_ipython``: between cells, the builtin one
    is not there)."""
    try:
        from IPython import get_ipython as running
    except ImportError:  # pragma: no cover - the kernel has IPython
        return {}
    shell = running()
    return shell.user_ns if shell is not None else {}


def _record_callees(name: str, namespace) -> None:
    """While the test of ``name`` runs, the functions ``name`` calls record their calls."""
    calls: dict[str, list] = {}
    wrappers: dict[str, tuple] = {}
    for callee in came_back.callees(name, namespace):
        function = namespace.get(callee)
        if inspect.isfunction(function):
            calls[callee] = []
            wrappers[callee] = (_recorder(function, calls[callee]), function)
    tested = namespace.get(name)
    returned: list = []
    if inspect.isfunction(tested):
        wrappers[name] = (_returns(tested, returned), tested)
    for callee, (wrapper, _) in wrappers.items():
        namespace[callee] = wrapper
    _STATE["recording"] = (calls, wrappers)
    _STATE["returned"] = returned


def _returns(function, returned: list):
    """``function``, keeping what it returned (a test's values, to say what came back)."""

    @functools.wraps(function)
    def keeping(*args, **kwargs):
        value = function(*args, **kwargs)
        if len(returned) < MAX_RECORDED:
            returned.append(value)
        return value

    return keeping


def _recorder(function, calls: list):
    @functools.wraps(function)
    def recorded(*args, **kwargs):
        if len(calls) < MAX_RECORDED:
            try:
                calls.append((function, copy.deepcopy(args), copy.deepcopy(kwargs)))
            except Exception:  # noqa: BLE001, S110 - an argument that cannot be copied
                pass
        return function(*args, **kwargs)

    return recorded


def _watch_returns(namespace) -> None:
    """While a teaching cell runs (a plot, a measurement, an explorer), the learner's functions
    say when they returned: an error after that may come from what they returned."""
    if not _STATE.get("carrying"):
        return
    watched = {}
    for name, filename in _LEARNER.items():
        function = namespace.get(name)
        if inspect.isfunction(function) and function.__code__.co_filename == filename:
            watched[name] = (_returned_to(name, function), function)
    for name, (wrapper, _) in watched.items():
        namespace[name] = wrapper
    _STATE["watched"] = watched


def _returned_to(name: str, function):
    """``function``, noting in ``_CALLED`` that it returned (``_watch_returns``)."""

    @functools.wraps(function)
    def watched(*args, **kwargs):
        __tracebackhide__ = True  # IPython leaves this frame out
        value = function(*args, **kwargs)
        _CALLED[name] = value
        return value

    return watched


def _stop_watching() -> None:
    namespace = _user_ns()
    for name, (wrapper, function) in _STATE.pop("watched", {}).items():
        if namespace.get(name) is wrapper:
            namespace[name] = function


def _stop_recording() -> None:
    """The test ran: its callees are the learner's own functions again."""
    _, wrappers = _STATE["recording"]
    namespace = _user_ns()
    for callee, (wrapper, function) in wrappers.items():
        if namespace.get(callee) is wrapper:
            namespace[callee] = function
    _STATE["recording"] = ({}, {})
    _STATE["returned"] = []


def _post_run_cell(result) -> None:
    _stop_recording()
    _stop_watching()
    _unlimit_answer_cell()
    error = result.error_in_exec or result.error_before_exec
    name = _tested_name(_STATE["source"]) or ""
    failed = _STATE["failed"].get(name)
    if failed is not None and failed.count is None:  # failed now: the count shown, In [11]
        _STATE["failed"][name] = dataclasses.replace(failed, count=result.execution_count)
    elif error is None and not _STATE.get("carried"):  # a test that passes now
        _STATE["failed"].pop(name, None)
        if name and _STATE.get("carrying") and _is_test_cell():
            print(tr("[this test of {name} passed.]", name=name))  # not "not run"
    if error is None:
        return
    _STATE["stop"] = Stop(
        result.execution_count, _first_line(_STATE["source"]), _said(error), _STATE["cell_id"]
    )


def _first_line(source: str, limit: int = 60) -> str:
    line = next((ln.strip() for ln in source.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _said(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    if len(text) > 160:
        text = text[:159] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _tested_name(source: str) -> str | None:
    """The function a test cell tests, as its docstring names it: ``\"\"\"apply_rope: ...``."""
    first = _first_line(source, limit=200).strip("\"'")
    name = first.split(":", 1)[0].strip() if ":" in first else ""
    if name.isidentifier():
        return name
    return None


def _stopped_at(exc: BaseException) -> str | None:
    """The learner's function that raised: the innermost frame's function name."""
    tb, name = exc.__traceback__, None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name != "<module>":
            name = code.co_name
        tb = tb.tb_next
    return name


def _is_test_cell() -> bool:
    """A visible test (``test_...``); without a cell id (a front end that sends none), a cell
    whose docstring names the function it tests (``\"\"\"apply_rope: ...``)."""
    if _STATE["cell_id"]:
        return str(_STATE["cell_id"]).startswith("test_")
    return _tested_name(_STATE["source"]) is not None


def _is_answer_cell(cell_id: str | None = None, source: str | None = None) -> bool:
    """An answer cell (``answer_...``, a recap ``recap_...``); without a cell id (a front end
    that sends none), a cell that defines a function at its top level and is no test."""
    cell_id = _STATE["cell_id"] if cell_id is None else cell_id
    source = _STATE["source"] if source is None else source
    if cell_id:
        return str(cell_id).startswith(_ANSWER_PREFIXES)
    if _tested_name(source):
        return False
    return any(line.startswith("def ") for line in source.splitlines())


class Overran(Exception):
    """An answer cell ran too long, or printed too much, and was stopped."""


class _Capped:
    """``sys.stdout`` while an answer cell runs: stops the cell past ``ANSWER_CELL_OUTPUT``."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.written = 0

    def write(self, text):
        self.written += len(text)
        if self.written > ANSWER_CELL_OUTPUT:
            _unlimit_answer_cell()
            raise Overran(
                tr(
                    "this answer cell printed more than {n} characters and was stopped "
                    "(a print in an endless loop?)",
                    n=ANSWER_CELL_OUTPUT,
                )
            )
        return self.stream.write(text)

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _on_alarm(signum, frame):
    _unlimit_answer_cell()  # once: what follows (the error shown) is not cut short
    raise Overran(
        tr(
            "this answer cell ran for more than {seconds} s and was stopped (an endless loop?)",
            seconds=f"{ANSWER_CELL_SECONDS:g}",
        )
    )


def _limit_answer_cell() -> None:
    import signal
    import threading

    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        _STATE["alarm"] = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, ANSWER_CELL_SECONDS, 1.0)
    if not isinstance(sys.stdout, _Capped):
        _STATE["stdout"] = sys.stdout
        sys.stdout = _Capped(sys.stdout)


def _unlimit_answer_cell() -> None:
    import signal

    if "alarm" in _STATE:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, _STATE.pop("alarm") or signal.SIG_DFL)
    if "stdout" in _STATE:
        if isinstance(sys.stdout, _Capped):
            sys.stdout = _STATE["stdout"]
        _STATE.pop("stdout")


def broken() -> dict[str, Stop]:
    """The names whose answer cell failed, with that cell (cleared when it runs to its end)."""
    return dict(_BROKEN)


def broken_lines() -> list[str]:
    """What the self-check says under its table about answer cells that failed."""
    cells: dict[tuple, list[str]] = {}
    for name, stop in _BROKEN.items():
        cells.setdefault((stop.count, stop.cell, stop.error, stop.cell_id), []).append(name)
    lines = []
    for (count, cell, error, cell_id), names in cells.items():
        stop = Stop(count, cell, error, cell_id)
        lines.append(
            tr(
                "{where} did not run to its end: {error}. Fix that cell and run it again; it "
                "defines {names}.",
                where=stop.where(),
                error=error.rstrip("."),
                names=", ".join(names),
            )
        )
    return lines


def broken_cell(exc: BaseException, assigned: list[str]) -> None:
    """An answer cell failed: show the error as usual, say the notebook goes on, and
    remember the names it did not define (they are removed: half done at best)."""
    _show(exc)
    _broke(_said(exc), assigned)


def _broke(error: str, names: list[str]) -> None:
    stop = Stop(_count_now(), _first_line(_STATE["source"]), error, _STATE["cell_id"])
    namespace = _user_ns()
    defined = [n for n in names if not n.startswith("__pe_")]
    for name in defined:
        _BROKEN[name] = stop
        _UNSET[name] = f"{stop.short()}"
        namespace.pop(name, None)
    print(
        tr(
            "[this answer cell stopped with an error (see above), so it defines nothing: "
            "{names}. The notebook goes on, so that the self-check at the end runs; fix this "
            "cell and run it again. nbgrader's validation (the Validate button) still fails "
            "until it runs.]",
            names=", ".join(defined) or "-",
        )
    )
    _STATE["carried"] = True


def _count_now() -> int | None:
    """The execution count of the running cell (IPython counts it before running it)."""
    try:
        from IPython import get_ipython as running

        shell = running()
    except ImportError:  # pragma: no cover
        return None
    return getattr(shell, "execution_count", None)


def _cell_id_now() -> str | None:
    """The id of the cell being transformed (before ``pre_run_cell``), as the front end sent it."""
    try:
        from IPython import get_ipython as running

        kernel = getattr(running(), "kernel", None)
        parent = kernel.get_parent() if kernel is not None else {}
    except Exception:  # noqa: BLE001 - an older kernel: no id
        return None
    return ((parent or {}).get("metadata") or {}).get("cellId")


def _syntax_checked(lines: list[str]) -> list[str]:
    """An IPython input transformer: an answer cell that does not compile becomes a call that
    shows its syntax error and lets Run All go on (a cell that compiles is left as it is)."""
    source = "".join(lines)
    flags = ast.PyCF_ONLY_AST | getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
    try:
        compile(source, "<cell>", "exec", flags=flags, dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError):
        if not _is_answer_cell(_cell_id_now() or "", source):
            return lines
        names = sorted(set(re.findall(r"^(?:def|class)\s+(\w+)", source, flags=re.MULTILINE)))
        return [f"{_GUARD}.syntax_error({source!r}, {names!r})\n"]
    return lines


def syntax_error(source: str, names: list[str]) -> None:
    """Show an answer cell's syntax error as IPython does, and carry on (``_syntax_checked``)."""
    try:
        from IPython import get_ipython as running

        shell = running()
    except ImportError:  # pragma: no cover
        shell = None
    filename = "<cell>"
    if shell is not None:
        filename = shell.compile.cache(source, shell.execution_count, raw_code=source)
    try:
        compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError) as exc:
        if shell is not None:
            shell.showsyntaxerror(filename=filename)
        error = _said(exc)
        if isinstance(exc, SyntaxError) and exc.lineno:
            said = f"{type(exc).__name__}: {exc.msg}"
            error = tr("{error} (line {line})", error=said, line=exc.lineno)
        _broke(error, names)


def _carries(exc: BaseException) -> bool:
    """Whether a cell may carry on past ``exc``: an unwritten exercise or its aftermath, a
    failed assert, any error of a visible test, or, in any other cell, an error of the
    learner's function (raised inside it, interrupted there, or met after it returned)."""
    if not isinstance(exc, Exception):
        return isinstance(exc, KeyboardInterrupt) and bool(_learner_frames(exc))
    if isinstance(exc, NotImplementedError):
        return True
    if isinstance(exc, NameError) and getattr(exc, "name", None) in _UNSET:
        return True
    if _is_answer_cell():
        return True
    if isinstance(exc, AssertionError) or _is_test_cell():
        return True
    return _learner_s(exc) is not None


def _learner_frames(exc: BaseException) -> list[str]:
    """The learner's functions the traceback of ``exc`` goes through, outermost first."""
    files = set(_LEARNER.values())
    names, tb = [], exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename in files and code.co_name != "<module>":
            names.append(code.co_name)
        tb = tb.tb_next
    known = [name for name in names if name in _LEARNER]
    return known or names


def _learner_s(exc: BaseException) -> tuple[str, list[str]] | None:
    """How a cell that is neither an answer nor a test met the learner's function:
    ``("raised", [callee, ..., function that raised])``, ``("returned", [functions that
    returned before the error])`` or ``("missing", [name])``; None for any other error."""
    frames = _learner_frames(exc)
    if frames:
        return "raised", list(dict.fromkeys(frames))
    if isinstance(exc, Exception) and _CALLED:
        odd = [n for n, value in _CALLED.items() if value is None or _type_said(n, value)]
        if odd:
            return "returned odd", odd
        return "returned", list(_CALLED)
    name = getattr(exc, "name", None) if isinstance(exc, NameError) else None
    if name and (name in _LEARNER or _section(name)):
        return "missing", [name]
    return None


def _type_said(name: str, value) -> str | None:
    """What the grader says of ``value``, returned by ``name``, when its type is wrong."""
    note = _JUDGE[1] if len(_JUDGE) > 1 else None
    if note is None:
        return None
    try:
        return note(name, value)
    except Exception:  # noqa: BLE001 - a note that cannot be decided is not shown
        return None


def _section(name: str) -> str | None:
    """Where the notebook teaches ``name`` ("Exercise 3: `alibi_attention`"), or None."""
    find = _JUDGE[2] if len(_JUDGE) > 2 else None
    if find is None:
        return None
    try:
        return find(name) or None
    except Exception:  # noqa: BLE001 - no table: the exercise is not named
        return None


def sections_with(find) -> None:
    """``find(name)``: the exercise that teaches ``name`` ("Exercise 3: `alibi_attention`"),
    in the current language, or None (given by ``helpers.grader``)."""
    while len(_JUDGE) < 3:
        _JUDGE.append(None)
    _JUDGE[2] = find


def places_with(find) -> None:
    """``find(name)``: the notebook and exercise that teach ``name`` ("10_long_context,
    Exercise 5: `yarn_thetas`"), or None (given by ``helpers.grader``)."""
    while len(_JUDGE) < 4:
        _JUDGE.append(None)
    _JUDGE[3] = find


def taught_in(name: str) -> str:
    """Where the course teaches ``name``: its notebook and exercise, or "" where that is
    not known (no grader loaded, no table in this build)."""
    find = _JUDGE[3] if len(_JUDGE) > 3 else None
    if find is None:
        return ""
    try:
        return find(name) or ""
    except Exception:  # noqa: BLE001 - no table: the place is not named
        return ""


def _exercise(name: str) -> str:
    """``alibi_attention`` named with its exercise, for a learner's message."""
    section = _section(name)
    if section:
        return tr("`{name}` ({section})", name=name, section=section)
    return f"`{name}`"


def carry_on(exc: BaseException, assigned: list[str]) -> None:
    """The guard of a statement met ``exc`` and carries on (``_carries``): say what happened."""
    unset = isinstance(exc, NameError) and getattr(exc, "name", None) in _UNSET
    if (
        _is_answer_cell()
        and not isinstance(exc, NotImplementedError | AssertionError)
        and not unset
    ):
        broken_cell(exc, assigned)
        return
    if isinstance(exc, NotImplementedError) or unset:
        not_written(exc, assigned)
        _STATE["carried"] = True
    elif isinstance(exc, AssertionError) or _is_test_cell():
        failed_test(exc)
    else:
        learner_failed(exc, assigned)


def _show(exc: BaseException) -> None:
    """``exc``'s traceback as IPython shows it, without the course's own frames."""
    try:
        shell = get_ipython()
    except NameError:
        shell = None
    if shell is None:  # pragma: no cover - only IPython installs the guard
        print(_said(exc), file=sys.stderr)
        return
    shell.showtraceback((type(exc), exc, exc.__traceback__))  # without them: start()


def learner_failed(exc: BaseException, assigned: list[str]) -> None:
    """A teaching cell (a plot, a measurement, an explorer) met an error of the learner's
    function: show it, say which function and what to do, and let Run All go on."""
    _show(exc)
    how, names = _learner_s(exc) or ("returned", [])
    said = _said(exc)
    if how == "raised" and isinstance(exc, KeyboardInterrupt):
        text = tr(
            "[not run to the end: your {function} was interrupted while it ran (an endless "
            "loop?). Fix it in its answer cell and run that cell again, then this one; the "
            "notebook goes on, and the self-check at the end reports it.]",
            function=_exercise(names[-1]),
        )
    elif how == "raised":
        text = tr(
            "[not run to the end: your {function} raised {error} (the traceback above shows "
            "the line). Fix it in its answer cell and run that cell again, then this one; the "
            "notebook goes on, and the self-check at the end reports it.]",
            function=_exercise(names[-1]),
            error=said,
        )
        if len(names) > 1:
            text += "\n" + tr(
                "[{function} was called by your {callers}.]",
                function=f"`{names[-1]}`",
                callers=", ".join(f"`{n}`" for n in names[:-1]),
            )
    elif how == "missing":
        text = tr(
            "[not run to the end: {function} is not defined: its answer cell has not run, or "
            "the function was deleted or renamed. Write it again in its answer cell and run "
            "that cell; the notebook goes on, and the self-check at the end reports it.]",
            function=_exercise(names[0]),
        )
    elif how == "returned odd" and _CALLED[names[0]] is None:
        text = tr(
            "[not run to the end: this cell stopped with {error}, because your {function} "
            "returned None (is its return statement missing?). Fix it in its answer cell and "
            "run that cell again, then this one; the notebook goes on, and the self-check at "
            "the end reports it.]",
            error=said,
            function=_exercise(names[0]),
        )
    elif how == "returned odd":
        text = tr(
            "[not run to the end: this cell stopped with {error}, because of what your "
            "{function} returned: {note} Fix it in its answer cell and run that cell again, "
            "then this one; the notebook goes on, and the self-check at the end reports it.]",
            error=said,
            function=_exercise(names[0]),
            note=_type_said(names[0], _CALLED[names[0]]),
        )
    else:
        text = tr(
            "[not run to the end: this cell stopped with {error} after it used your {functions}: "
            "check what they return (the type and the shape their exercise asks for). The "
            "notebook goes on, and the self-check at the end says what is wrong.]",
            error=said,
            functions=", ".join(_exercise(n) for n in names),
        )
    print(text)
    culprit = (
        f"`{names[-1]}`" if how == "raised" and names else tr("cell [{count}]", count=_count_now())
    )
    namespace = _user_ns()
    for name in assigned:
        if name.startswith("__pe_"):
            continue
        _UNSET.setdefault(name, culprit)
        _UNSET_ERROR.setdefault(name, said)
        namespace.pop(name, None)
    _STATE["carried"] = True


def failed_test(exc: BaseException) -> None:
    """A visible test failed: show its traceback, say the notebook goes on, remember it."""
    _show(exc)
    for line in _failed(exc, _user_ns()):
        print(line)
    print(
        tr(
            "[this test failed (see above). The notebook goes on, so that the self-check at "
            "the end runs; nbgrader's validation (the Validate button) still fails this test "
            "until it passes.]"
        )
    )
    _STATE["carried"] = True


def _failed(exc: BaseException, namespace) -> list[str]:
    """A visible test failed: remember it; what came back, and which callee failed first."""
    source = _STATE["source"]
    name = _tested_name(source)
    extra = came_back.came_back(exc, source)
    if name:
        extra += _wrong_types(name)
        calls, _ = _STATE["recording"]
        extra += came_back.callee_first(name, calls, _JUDGE[0])
        _STATE["failed"][name] = Stop(None, _first_line(source), _said(exc), _STATE["cell_id"])
    return extra


def not_written(exc: BaseException, assigned: list[str]) -> None:
    """Say what stopped a cell, remember what it did not compute, and let Run All go on."""
    if isinstance(exc, NameError) and getattr(exc, "name", None) in _BROKEN:
        name = exc.name
        stop = _BROKEN[name]
        print(
            tr(
                "[not run to the end: `{name}` is not defined, because the cell that defines "
                "it, {where}, stopped with {error}. Fix that cell and run it again; the notebook "
                "goes on.]",
                name=name,
                where=stop.where(),
                error=stop.error,
            )
        )
        culprit = _UNSET[name]
    elif isinstance(exc, NameError) and getattr(exc, "name", None) in _UNSET_ERROR:
        name = exc.name
        print(
            tr(
                "[not run to the end: `{name}` was not computed, because an earlier cell stopped "
                "at {culprit} with {error}. The notebook goes on.]",
                name=name,
                culprit=_UNSET[name],
                error=_UNSET_ERROR[name],
            )
        )
        culprit = _UNSET[name]
    elif isinstance(exc, NameError) and getattr(exc, "name", None) in _UNSET:
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
        if isinstance(exc, NameError) and exc.name in _UNSET_ERROR:
            _UNSET_ERROR.setdefault(name, _UNSET_ERROR[exc.name])
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


def _at(code: str, where: ast.AST) -> list[ast.stmt]:
    """``code`` parsed, every node of it placed at the first line of ``where``.

    The guard's own instructions then carry the line of the statement they guard: a
    traceback that reads the frame's current line (IPython does, for a kernel's cells)
    points at the statement that failed, not at line 1.
    """
    body = ast.parse(code, mode="exec").body
    for stmt in body:
        for node in ast.walk(stmt):
            if "lineno" in node._attributes:
                node.lineno = node.end_lineno = where.lineno
                node.col_offset, node.end_col_offset = where.col_offset, where.col_offset
    return body


class CarryOn(ast.NodeTransformer):
    """An IPython AST transformer: each top-level statement ``s`` of a cell becomes

    ``if __pe_go__: try: s / except Exception as e: carry on past e, or raise``,

    every guard at the line of its statement. The cell's last expression is still shown
    as its result; a cell that completes assigns its names as before (and they are no
    longer "not computed").
    """

    def visit_Module(self, node: ast.Module) -> ast.Module:
        body = list(node.body)
        if not body:
            return node
        assigned = _assigned_names(body)
        last = body[-1] if isinstance(body[-1], ast.Expr) else None
        if last is not None:
            body[-1] = ast.copy_location(
                ast.Assign(targets=[ast.Name(_RESULT, ast.Store())], value=last.value), last
            )
            ast.fix_missing_locations(body[-1])
        new_body = _at(f"{_GO} = True" + (f"\n{_RESULT} = None" if last else ""), body[0])
        for index, stmt in enumerate(body):
            (guard,) = _at(
                f"try:\n    pass\n"
                f"except BaseException as __pe_error__:\n"
                f"    if {_GUARD}._carries(__pe_error__):\n"
                f"        {_GUARD}.carry_on(__pe_error__, {assigned!r})\n"
                f"        {_GO} = False\n"
                f"    else:\n"
                f"        raise\n",
                stmt,
            )
            guard.body = [stmt]
            if index:
                (gate,) = _at(f"if {_GO}:\n    pass\n", stmt)
                gate.body = [guard]
                guard = gate
            new_body.append(guard)
        new_body += _at(f"if {_GO}:\n    {_GUARD}._done({assigned!r})", body[-1])
        if last is not None:
            new_body += _at(_RESULT, last)
        node.body = new_body
        return node


def _done(assigned: list[str]) -> None:
    """A cell ran to its end: the names it assigned are computed now (and the functions an
    answer cell defined are the learner's)."""
    answer = _is_answer_cell()
    namespace = _user_ns() if answer else {}
    for name in assigned:
        _UNSET.pop(name, None)
        _UNSET_ERROR.pop(name, None)
        _BROKEN.pop(name, None)
        if answer:
            function = namespace.get(name)
            if inspect.isfunction(function):
                _LEARNER[name] = function.__code__.co_filename
            else:
                _LEARNER.pop(name, None)

"""Grading a class: every submission autograded, several learners at once, with a progress bar.

``autograde`` runs ``jobs`` worker processes (default: the number of cores). Each worker
loads nbgrader once and grades one (learner, assignment) at a time through nbgrader's own
``Autograde`` converter, as ``NbGraderAPI.autograde`` runs it, in which the learner's code
runs in the grading sandbox (``helpers.teacher.sandbox``). All workers write to the one sqlite ``gradebook.db``: its writes
are short transactions, sqlite's busy timeout is raised to two minutes through the database
URL, and a grading that still meets ``database is locked`` is retried. A learner's failure (a
corrupt notebook, a renamed file, a dead worker) is isolated: that notebook scores zero, the
problem is one line of the summary, and everything else is graded. Each notebook's status
and the reason go to ``autograde_report.csv`` (``helpers.teacher.classroom.summary``).

With ``scheduler``, the same ``grade_one`` runs on a Dask cluster instead of the local
process pool (``helpers.teacher.classroom.cluster``). ``Progress`` draws the progress bar;
``Tally`` counts what finished for it.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import random
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

from helpers.teacher import sandbox
from helpers.teacher.classroom import warm, written
from helpers.teacher.classroom.course import (
    assignment_ids,
    backup_folder,
    backup_gradebook,
    course_id,
    course_root,
    db_url,
    load_config,
    source_notebooks,
    venv_on_path,
)
from helpers.teacher.classroom.grades import by_assignment, notebook_scores
from helpers.teacher.classroom.steps import register, wal
from helpers.teacher.classroom.submissions import (
    NOT_SUBMITTED,
    Task,
    check_submission,
    inspect_submission,
)
from helpers.teacher.classroom.summary import REPORT_NAME, ClassReport

RETRIES = 4  # attempts of one grading that meets a transient database error
LOCKED = "database is locked"

# The nbgrader API of this worker process, and the (course, database URL) it was made for.
_API = None
_API_KEY: tuple[str, str] | None = None


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    """Per connection: commits of a write-ahead-logged gradebook sync at checkpoints only."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _lighter_nbgrader() -> None:
    """Two costs of nbgrader's bookkeeping, cut in this grading process only.

    - nbgrader opens a ``Gradebook`` (a new SQLAlchemy engine) about nine times per notebook,
      and each new engine compiles every query again: one engine per database URL keeps the
      compiled queries (``Gradebook.close`` still returns the connections);
    - ``CheckCellMetadata`` validates each cell's metadata with ``jsonschema.validate``, which
      checks the schema itself every time: a validator made once per schema checks the same.

    What nbgrader reads, writes and decides is unchanged.
    """
    import jsonschema
    import nbgrader.api
    import nbgrader.nbgraderformat.common as nbformat_common
    from sqlalchemy import create_engine, event

    if getattr(nbgrader.api.create_engine, "shared", False):
        return
    engines: dict = {}

    def shared_engine(url, *args, **kw):
        key = (str(url), args, tuple(sorted(kw.items())))
        if key not in engines:
            engine = create_engine(url, *args, **kw)
            if engine.dialect.name == "sqlite":
                event.listen(engine, "connect", _sqlite_pragmas)
            engines[key] = engine
        return engines[key]

    shared_engine.shared = True
    nbgrader.api.create_engine = shared_engine

    validators: dict = {}

    class _Schemas:
        """``jsonschema`` as ``nbgrader.nbgraderformat.common`` uses it, schema checked once."""

        ValidationError = jsonschema.ValidationError

        @staticmethod
        def validate(instance, schema):
            key = id(schema)
            if key not in validators:
                cls = jsonschema.validators.validator_for(schema)
                cls.check_schema(schema)
                validators[key] = (schema, cls(schema))  # keep schema alive: id stays unique
            error = jsonschema.exceptions.best_match(validators[key][1].iter_errors(instance))
            if error is not None:
                raise error

    nbformat_common.jsonschema = _Schemas


def _worker_init(
    course: str,
    url: str,
    log: str | None = None,
    env: dict[str, str] | None = None,
    probe: tuple[str, str] | None = None,
    scratch: str | None = None,
) -> None:
    """Each worker loads nbgrader and the course configuration once; with ``log``, what it
    prints (nbgrader's log, warnings) goes to that file instead of the progress bar's stream.
    ``env``: the grading process's environment (a worker forked from the warm server
    starts with the server's, ``helpers.teacher.classroom.warm``); ``probe``: the grading
    process's probe of bubblewrap (``sandbox.probed``), which the worker takes as its own;
    ``scratch``: the folder the worker makes its temporary folders in (its processes'
    started ahead, its kernels' sockets), which the grading process removes at its end,
    so that a worker killed mid-run leaves nothing behind."""
    global _API, _API_KEY
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    if scratch is not None:
        tempfile.tempdir = scratch  # this process's own: its children get their own folders
    if probe is not None:
        sandbox.remember(*probe)
    if log is not None:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)

    from sqlalchemy.exc import SAWarning

    warnings.filterwarnings("ignore", category=SAWarning)  # nbgrader's own session warnings
    venv_on_path()
    _lighter_nbgrader()
    os.chdir(course)
    _prepare_spares()  # they start while nbgrader is set up and reads the first notebook
    from nbgrader.coursedir import CourseDirectory

    cfg = load_config(Path(course))
    cfg.CourseDirectory.db_url = url
    _API = _Autograder(CourseDirectory(config=cfg), cfg)
    _API_KEY = (course, url)


class _Autograder:
    """``NbGraderAPI.autograde``, without the rest of ``NbGraderAPI``: the same ``Autograde``
    converter, configured and logged alike (its log at INFO, captured by nbgrader's
    ``capture_log``), without importing nbgrader's applications, exchange and authenticator,
    which grading never uses (a third of a grading process's start)."""

    def __init__(self, coursedir, config) -> None:
        import logging

        from traitlets.config import LoggingConfigurable

        self.coursedir = coursedir
        self.parent = LoggingConfigurable(config=config)
        self.parent.log.setLevel(logging.INFO)  # NbGraderAPI.log_level's default

    def autograde(self, assignment_id, student_id, force=True, create=True) -> dict:
        from nbgrader.converters import Autograde
        from nbgrader.utils import capture_log, temp_attrs

        with temp_attrs(self.coursedir, assignment_id=assignment_id, student_id=student_id):
            app = Autograde(coursedir=self.coursedir, parent=self.parent)
            app.force = force
            app.create_student = create
            return capture_log(app)


def _prepare_spares() -> None:
    """From now on this process keeps a sandboxed worker and a reference's process started
    ahead of the next notebook (``channel.Spares``): each notebook still gets fresh ones,
    without waiting for their start. They end with this process."""
    from multiprocessing import util

    from helpers.teacher.channel import SPARES
    from helpers.teacher.standins import REFERENCE_ARGV

    SPARES.fork_from_zygote(REFERENCE_ARGV, "helpers.teacher.standins")
    SPARES.prepare()
    SPARES.prepare(REFERENCE_ARGV)
    util.Finalize(SPARES, SPARES.stop, exitpriority=10)  # a pool's worker skips atexit


def _last_error(text: str) -> str:
    """The most telling line of nbgrader's log: an exception line, else the first error."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    generic = ("error processing assignment", "There was an error", "Please see", "Traceback")
    for ln in lines:
        exc_line = "Error:" in ln or "Exception:" in ln
        if not ln.startswith("[") and exc_line and "NbGraderException" not in ln:
            return ln[:300]
    for ln in lines:
        if ln.startswith("[ERROR]") and not any(g in ln for g in generic):
            return ln.removeprefix("[ERROR]").strip()[:300]
    return "see nbgrader's log"


# Transient database errors that a new attempt of the same grading gets past.
TRANSIENT = (
    LOCKED,
    "could not serialize access",
    "deadlock detected",
    "UniqueViolation",
    "UNIQUE constraint failed",
)


def _worker_grade(student: str, assignment: str, last: bool = False) -> dict:
    """Autograde one learner's assignment in this worker; retry when the database is busy.
    ``last``: no task comes after this one (no process is started ahead for another)."""
    start = time.perf_counter()
    if last:
        from helpers.teacher.channel import SPARES

        SPARES.last()
    result: dict = {}
    attempt = 0
    for attempt in range(1, RETRIES + 1):
        result = _API.autograde(assignment, student, force=True, create=True)
        text = (result.get("log") or "") + "\n" + (result.get("error") or "")
        if result.get("success") or not any(t in text for t in TRANSIENT):
            break
        time.sleep(0.2 * attempt + random.random())
    text = (result.get("log") or "") + "\n" + (result.get("error") or "")
    return {
        "ok": bool(result.get("success")),
        "error": "" if result.get("success") else _last_error(text),
        "attempts": attempt,
        "seconds": time.perf_counter() - start,
        "timeouts": _timeouts(text),
        "crashes": _timeouts(text, crashed=True),
    }


def _timeouts(log: str, crashed: bool = False) -> dict[str, str]:
    """``notebook -> what was stopped`` from the lines of nbgrader's log that say learner
    code ran past its time limit (``nbgrader_plugin.TIMED_OUT_LOG``), or with ``crashed``
    ended the grading process (``CRASHED_LOG``)."""
    from helpers.teacher.nbgrader_plugin import CRASHED_LOG, TIMED_OUT_LOG

    marker = CRASHED_LOG if crashed else TIMED_OUT_LOG
    found: dict[str, list[str]] = {}
    for line in log.splitlines():
        at = line.find(marker)
        if at < 0:
            continue
        notebook, _, why = line[at + len(marker) :].partition(": ")
        found.setdefault(notebook.strip(), []).append(why.strip())
    return {nb: "; ".join(whys) + "; stopped, the rest was graded" for nb, whys in found.items()}


def grade_one(course: str, url: str, student: str, assignment: str) -> dict:
    """Autograde one (learner, assignment) in this process, loading nbgrader on first use.

    What a Dask worker runs (``helpers.teacher.classroom.cluster``): the course folder must be at the
    same path as on the client (a shared file system) and ``url`` reachable from here.
    """
    with _GRADE_LOCK:  # one grading at a time per process: nbgrader works in the cwd
        if _API is None or _API_KEY != (course, url):
            _worker_init(course, url)
        return _worker_grade(student, assignment)


_GRADE_LOCK = threading.Lock()


class Progress:
    """``autograde [#####.....] 37/100 learners  296/800 notebooks  1m40s  ~2m50s left``.

    The time left comes from how long the finished notebooks took, and from how long those
    being graded have run: a notebook still being graded never leaves ``0s``, and one that
    runs far longer than the others is shown running instead of a guess.
    """

    SLOW = 3.0  # a notebook running this many times the mean is shown instead of a guess
    QUIET_TICK_S = 10.0  # without a terminal, a line at most this often while nothing ends

    def __init__(self, learners: int, tasks: int, stream=None, enabled: bool = True, jobs: int = 1):
        self.learners, self.tasks, self.jobs = learners, tasks, max(1, jobs)
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.perf_counter()
        self.durations: list[float] = []
        self._last = -1.0

    @staticmethod
    def _clock(seconds: float) -> str:
        seconds = max(0, round(seconds))
        return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"

    def _left(self, tasks_done: int, running: Sequence[float], now: float) -> str:
        if tasks_done >= self.tasks:
            return "~0s left"
        if not tasks_done:
            return "time left: measuring"
        if self.durations and running:
            mean = sum(self.durations) / len(self.durations)
            ages = [now - t0 for t0 in running]
            oldest = max(ages)
            if oldest > max(self.SLOW * mean, 10.0):
                slow = sum(a > max(self.SLOW * mean, 10.0) for a in ages)
                return (
                    f"time left unknown: {slow} notebook(s) running for {self._clock(oldest)} "
                    f"(others take {mean:.1f} s)"
                )
            queued = self.tasks - tasks_done - len(running)
            left = queued * mean / self.jobs + max(max(mean - a, 0.0) for a in ages)
        else:  # no start times (a cluster): the pace so far
            elapsed = now - self.start
            left = elapsed / tasks_done * (self.tasks - tasks_done)
        return f"~{self._clock(max(left, 1.0))} left"

    def line(self, learners_done: int, tasks_done: int, running: Sequence[float] = ()) -> str:
        """The progress line for these counts; ``running``: start times of the notebooks
        being graded (``time.perf_counter()``)."""
        now = time.perf_counter()
        frac = tasks_done / self.tasks if self.tasks else 1.0
        bar = "#" * round(20 * frac)
        return (
            f"autograde [{bar:<20}] {learners_done}/{self.learners} learners  "
            f"{tasks_done}/{self.tasks} notebooks  {self._clock(now - self.start)}  "
            f"{self._left(tasks_done, running, now)}"
        )

    def update(
        self, learners_done: int, tasks_done: int, running: Sequence[float] = (), tick: bool = False
    ) -> None:
        """Redraw in place on a terminal; elsewhere print a line at most every 2 s (every
        ``QUIET_TICK_S`` for a ``tick``: nothing finished)."""
        if not self.enabled:
            return
        now = time.perf_counter()
        final = tasks_done == self.tasks
        if self.tty:
            line = self.line(learners_done, tasks_done, running)
            self.stream.write("\r\x1b[K" + line + ("\n" if final else ""))
        elif final or now - self._last >= (self.QUIET_TICK_S if tick else 2.0):
            self.stream.write(self.line(learners_done, tasks_done, running) + "\n")
            self._last = now
        self.stream.flush()


class Tally:
    """Counts finished tasks for the progress bar (a learner is done with their last task)."""

    def __init__(self, tasks: list[Task], bar: Progress):
        self.bar = bar
        self.remaining: dict[str, int] = {}
        for t in tasks:
            self.remaining[t.student] = self.remaining.get(t.student, 0) + 1
        self.done = 0
        self.learners_done = 0
        self.running: dict[int, float] = {}  # id(task) -> when its grading started
        bar.update(0, 0)

    def start(self, task: Task) -> None:
        """``task`` is being graded from now on."""
        self.running[id(task)] = time.perf_counter()

    def stop(self, task: Task) -> None:
        """``task`` is no longer being graded (its worker died: it is graded again later)."""
        self.running.pop(id(task), None)

    def tick(self) -> None:
        """Redraw while nothing finishes (the clock and the time left move on)."""
        self.bar.update(self.learners_done, self.done, list(self.running.values()), tick=True)

    def finish(self, task: Task, out: dict) -> None:
        """Record what grading ``task`` gave (``ok``, ``error``, ``attempts``, ``seconds``,
        ``timeouts``)."""
        task.ok, task.error = bool(out["ok"]), str(out["error"])
        task.attempts, task.seconds = int(out["attempts"]), float(out["seconds"])
        task.timeouts = dict(out.get("timeouts") or {})
        task.crashes = dict(out.get("crashes") or {})
        self.stop(task)
        if task.seconds > 0:
            self.bar.durations.append(task.seconds)
        self.done += 1
        self.remaining[task.student] -= 1
        self.learners_done += self.remaining[task.student] == 0
        self.bar.update(self.learners_done, self.done, list(self.running.values()))


def failed(error: str, attempts: int = 1) -> dict:
    """What a grading that raised instead of returning counts as."""
    return {"ok": False, "error": error, "attempts": attempts, "seconds": 0.0}


def _submissions(course: Path, ids: list[str], students: Iterable[str] | None) -> list[Task]:
    folder = course / "submitted"
    found = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    chosen = list(students or found)
    unknown = [s for s in chosen if s not in found]
    if unknown:
        raise ValueError(f"students must have a folder in {folder}, got {unknown!r}")
    return [Task(s, a) for s in chosen for a in ids if not _took_other_language(folder / s, a)]


def _took_other_language(learner: Path, assignment: str) -> bool:
    """True when the learner did not submit ``assignment`` but the same notebook in another
    language (``06_rope_ko`` for ``06_rope``): that one is graded, this one is not missing."""
    from helpers.i18n import split_assignment

    if (learner / assignment).is_dir() or not learner.is_dir():
        return False
    base = split_assignment(assignment)[0]
    return any(
        p.is_dir() and p.name != assignment and split_assignment(p.name)[0] == base
        for p in learner.iterdir()
    )


LOG_NAME = "autograde.log"  # what nbgrader and the grading workers print during a run


def autograde(
    course: str | os.PathLike | None = None,
    ids: Iterable[str] | None = None,
    students: Iterable[str] | None = None,
    jobs: int | None = None,
    progress: bool = True,
    stream=None,
    db: str | None = None,
    scheduler: str | None = None,
    unreleased: bool = True,
    started: float | None = None,
) -> ClassReport:
    """Autograde every learner's submissions, ``jobs`` at a time; never stops on one learner.

    ``ids`` default to every assignment somebody submitted, ``students`` to everyone in
    ``submitted/``, ``jobs`` to the number of cores. ``db`` is the gradebook's SQLAlchemy
    URL (default: ``gradebook.db`` in the course). ``scheduler`` fans the grading out over a
    Dask cluster (``tcp://host:8786``, or ``local:N`` for a LocalCluster of N workers)
    instead of the local process pool (``helpers.teacher.classroom.cluster``).

    Returns a ``ClassReport`` (``.summary()`` is what the command prints); the score, seed
    and replay command of every notebook go to ``autograde_report.csv`` in the course.
    A submission that is missing, renamed, corrupt or whose grading fails scores 0 with one
    line saying why.

    Before anything is graded: an id is resolved to the editions the class submitted
    (``02_sincos`` grades ``02_sincos_ko`` when that is what was taken); an id nobody
    submitted is an error, and so is one never released (not in the gradebook) when
    ``unreleased`` is False (the command line's default: ``--unreleased`` allows it; this
    function's default allows it, for scratch courses graded straight from ``submitted/``);
    without ids, those never released are then skipped (the summary says so).
    The extensions file and the due dates of the configuration are read, and a mistake in
    them is an error. The gradebook and the autograded notebooks a regrade replaces are
    copied to ``backups/<time> autograde/`` first.

    The report's time runs from ``started`` (a ``time.perf_counter()``: the command line
    passes its own start, so the summary's time is the command's), else from this call.
    """
    start = time.perf_counter() if started is None else started
    from helpers.teacher import seeds

    sandbox.probe_soon()  # bubblewrap is probed while this process imports and checks
    course = course_root(course)
    ids = None if ids is None else list(ids)
    students = None if students is None else list(students)
    small = warm.small_run(course, ids, students)
    if not scheduler and not small:
        warm.start()  # the workers' server loads nbgrader while this process checks, registers
    url = db_url(course, db)
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    ids, skipped = choose(course, ids, db, unreleased)
    check_late_config(course, db)
    stream = stream if stream is not None else sys.stderr
    note = sandbox.reason_unavailable()
    if note:
        if sandbox.policy() == "require":
            raise sandbox.SandboxUnavailable(
                f"{sandbox.ENV_POLICY}=require but the grading sandbox cannot run: {note}"
            )
        print(sandbox.warning_text(note), file=stream, flush=True)
    tasks = _submissions(course, ids, students)
    backup = backup_before_regrade(course, db, tasks)
    register(course, ids, db)
    wal(course, db)
    key, cid = seeds.secret(course), course_id(course)  # the secret exists before any worker
    runnable = []
    for task in tasks:
        task.seed = seeds.derive(key, cid, task.student, task.assignment)
        task.notebooks = source_notebooks(course, task.assignment)
        task.findings = check_submission(course, task.student, task.assignment)
        task.problems = inspect_submission(course, task.student, task.assignment)
        if task.problems == [NOT_SUBMITTED]:
            task.error = "no submission"
        else:
            runnable.append(task)
    _add_students(course, url, {t.student for t in runnable})
    log = course / LOG_NAME
    log.unlink(missing_ok=True)
    phases = {"registering": time.perf_counter() - start}
    bar = Progress(len({t.student for t in runnable}), len(runnable), stream, progress, jobs)
    if scheduler:
        from helpers.teacher.classroom import cluster

        tally = Tally(runnable, bar)

        def finish(index: int, result) -> None:
            if isinstance(result, BaseException):
                error = f"{type(result).__name__}: {result}"
                result = failed(error, cluster.ALLOWED_FAILURES)
            tally.finish(runnable[index], result)

        calls = [(str(course), url, t.student, t.assignment) for t in runnable]
        engine, jobs = cluster.run(scheduler, grade_one, calls, finish)
    else:
        engine = "local process pool"
        context = warm.fork_here() if small else None
        if context is None:
            warm.start()  # nothing when it runs
            context = warm.context()
        _run_pool(course, url, runnable, jobs, Tally(runnable, bar), log, context)
    phases["grading"] = time.perf_counter() - start - phases["registering"]
    list_unreadable(course, url, runnable)
    written.settle(url, course_id(course), ids, [t.student for t in runnable])
    per_notebook, nb_max = notebook_scores(course, ids, [t.student for t in tasks], db)
    scores, maxima = by_assignment(per_notebook, nb_max, ids, [t.student for t in tasks])
    for task in tasks:
        if not task.ok:
            scores.setdefault(task.student, {})[task.assignment] = 0.0
    report = ClassReport(
        tasks, scores, maxima, jobs, time.perf_counter() - start, not note, note, engine
    )
    report.notebook_scores, report.notebook_max, report.log_path = per_notebook, nb_max, log
    report.waiting = written.waiting(url, course_id(course), ids, [t.student for t in runnable])
    report.skipped, report.backup = skipped, backup
    report.write_csv(course / REPORT_NAME)
    phases["bookkeeping"] = time.perf_counter() - start - sum(phases.values())
    report.phases = phases
    report.seconds = time.perf_counter() - start
    return report


def choose(
    course: Path, ids: Iterable[str] | None, db: str | None, unreleased: bool = False
) -> tuple[list[str], list[str]]:
    """The assignments to grade and what was left out and why (one phrase each).

    An id asked for stands for each of its editions somebody submitted (``submitted/*/<id>``);
    one that nobody submitted in any edition is an error, and so is one never released (its
    cells are not in the gradebook) unless ``unreleased``. Without ids: every assignment
    somebody submitted, less those never released (skipped, unless ``unreleased``)."""
    from helpers.i18n import split_assignment
    from helpers.teacher.classroom.steps import editions, registered

    asked = list(ids or [])
    submitted = [a for a in assignment_ids(course) if any(course.glob(f"submitted/*/{a}"))]
    if asked:
        chosen = [a for a in editions(course, asked) if a in submitted]
        for wanted in asked:
            base = split_assignment(wanted)[0]
            if not any(split_assignment(a)[0] == base for a in chosen):
                raise ValueError(
                    f"nobody submitted {wanted} (no submitted/*/<id> of "
                    f"{', '.join(editions(course, [base]))}): nothing to grade"
                )
    else:
        chosen = submitted
        if not chosen:
            raise ValueError(f"nothing submitted in {course / 'submitted'}: collect first")
    released = registered(course, db)
    never = [a for a in chosen if a not in released]
    if never and not unreleased:
        if asked:
            raise ValueError(
                f"{', '.join(never)} was never released (not in the gradebook): a typo? "
                "release it first, or pass --unreleased to grade what is in submitted/"
            )
        chosen = [a for a in chosen if a not in never]
        skipped = [f"{a} (never released; --unreleased grades it)" for a in never]
        if not chosen:
            raise ValueError(
                f"nothing released was submitted: {', '.join(never)} never released "
                "(--unreleased grades them)"
            )
        return chosen, skipped
    return chosen, []


def check_late_config(course: Path, db: str | None = None) -> None:
    """Read the extensions file and the due dates as grading will, before anything is
    graded: a mistake in them is an error now, not a class scored 0. An extension must name
    an assignment of the course and a learner of the class (one who submitted, is in the
    gradebook or in ``roster.csv``): a mistyped id would leave the late learner's penalty
    standing without a word."""
    import difflib

    from helpers.teacher.classroom.late import parse_due, read_extensions

    cfg = load_config(course)
    name = str(cfg.ApplyDueDates.get("extensions_file", "extensions.csv"))
    path = Path(name) if Path(name).is_absolute() else course / name
    found = read_extensions(path)
    for assignment, text in dict(cfg.ApplyDueDates.get("duedates", {})).items():
        try:
            parse_due(text)
        except ValueError as exc:
            raise ValueError(f"c.ApplyDueDates.duedates[{assignment!r}]: {exc}") from None
    known = set(assignment_ids(course))
    strangers = sorted({a for _s, a in found if a not in known})
    if strangers:
        raise ValueError(
            f"extensions file {path} names assignment(s) the course does not have: "
            f"{', '.join(strangers)} (the course's are {', '.join(sorted(known))})"
        )
    if not found:
        return
    learners = class_ids(course, db)
    unknown = sorted({s for s, _a in found if s not in learners})
    if unknown:
        said = []
        for sid in unknown:
            close = difflib.get_close_matches(sid, sorted(learners), n=1)
            said.append(f"{sid}" + (f" (did you mean {close[0]}?)" if close else ""))
        raise ValueError(
            f"extensions file {path} names learner(s) not in the class: {', '.join(said)}; "
            "fix the id (the class: those in submitted/, the gradebook or roster.csv); "
            "nothing graded"
        )


def class_ids(course: Path, db: str | None = None) -> set[str]:
    """The learners of the class: ``submitted/<id>``, the gradebook's students and the
    ``student_id`` column of the course's ``roster.csv`` (when there is one)."""
    import csv

    ids = {p.name for p in (course / "submitted").glob("*") if p.is_dir()}
    if db or (course / "gradebook.db").exists():
        from nbgrader.api import Gradebook

        with Gradebook(db_url(course, db), course_id(course)) as gb:
            ids |= {s.id for s in gb.students}
    roster = course / "roster.csv"
    if roster.is_file():
        with open(roster, newline="", encoding="utf-8-sig") as fh:
            ids |= {(r.get("student_id") or "").strip() for r in csv.DictReader(fh)} - {""}
    return ids


def backup_before_regrade(course: Path, db: str | None, tasks: list[Task]) -> Path | None:
    """Before a regrade replaces them: the gradebook and every ``autograded/<learner>/<id>``
    of ``tasks`` that exists, copied to a dated folder of ``backups/``; None when nothing
    would be replaced (a first grading)."""
    import shutil

    old = [
        course / "autograded" / t.student / t.assignment
        for t in tasks
        if (course / "autograded" / t.student / t.assignment).is_dir()
    ]
    if not old:
        return None
    folder = backup_folder(course, "autograde")
    backup_gradebook(course, db, folder)
    for path in old:
        shutil.copytree(path, folder / path.relative_to(course))
    return folder


def list_unreadable(course: Path, url: str, tasks: Iterable[Task]) -> int:
    """Register every submitted notebook that could not be read where the teacher acts on it.

    nbgrader's autograde stops at such a file: the submission may be missing from the
    gradebook, and without an autograded file the Formgrader does not list it. Each gets its
    submission in the gradebook (its automatic checks scored 0, its written answers waiting
    for the teacher, as every count says) and a stand-in autograded notebook
    (``submissions.stand_in``). A manual score the teacher gave is kept. Returns how many."""
    todo = [(t, f) for t in tasks for f in t.findings if f.status == "unreadable"]
    if not todo:
        return 0
    from nbgrader.api import Grade, Gradebook, MissingEntry
    from sqlalchemy import and_, false, update

    from helpers.teacher.classroom.submissions import stand_in

    with Gradebook(url, course_id(course)) as gb:
        for task, found in todo:
            try:
                submission = gb.find_submission(task.assignment, task.student)
            except MissingEntry:
                submission = gb.add_submission(task.assignment, task.student)
            notebooks = [nb.id for nb in submission.notebooks if nb.name == found.notebook]
            gb.db.execute(
                update(Grade)
                .where(
                    and_(
                        Grade.notebook_id.in_(notebooks),
                        Grade.manual_score.is_(None),
                        Grade.cell_type != "markdown",
                    )
                )
                .values(auto_score=0.0, needs_manual_grade=false())
                .execution_options(synchronize_session=False)
            )
            stand_in(course, task.student, task.assignment, found)
        gb.db.commit()
    return len(todo)


def _add_students(course: Path, url: str, students: Iterable[str]) -> None:
    """Put the learners in the gradebook before the workers start: two workers grading one
    learner's assignments at once would both create the learner (a UNIQUE violation). Their
    names come from the course's ``roster.csv`` (the Formgrader shows them)."""
    from nbgrader.api import Gradebook

    from helpers.teacher.classroom.lms import roster_names

    venv_on_path()
    names = roster_names(course)
    with Gradebook(url, course_id(course)) as gb:
        for student in sorted(students):
            gb.update_or_create_student(student, **names.get(student, {}))


def _run_pool(
    course: Path,
    url: str,
    tasks: list[Task],
    jobs: int,
    tally: Tally,
    log: Path | None = None,
    context=None,
) -> None:
    """Grade ``tasks`` in ``jobs`` worker processes, no more tasks handed out than there are
    workers (so each task's start is known to the progress bar); ``context``: the
    ``multiprocessing`` context they start from (default: the warm server's). The workers
    make their temporary folders in one of the run's, removed at its end: a worker killed
    mid-run cannot remove its own."""
    context = context if context is not None else warm.context()
    with tempfile.TemporaryDirectory(prefix="pe-run-", ignore_cleanup_errors=True) as scratch:
        pending = list(tasks)
        for _round in range(2):  # a second round only for tasks whose worker died
            if not pending:
                break
            lost: list[Task] = []
            slots = min(jobs, len(pending))
            with cf.ProcessPoolExecutor(
                max_workers=slots,
                mp_context=context,
                initializer=_worker_init,
                initargs=(
                    str(course),
                    url,
                    None if log is None else str(log),
                    dict(os.environ),
                    sandbox.probed(),
                    scratch,
                ),
            ) as pool:
                queue, running, broken = list(pending), {}, False
                while running or (queue and not broken):
                    while queue and not broken and len(running) < slots:
                        task = queue.pop(0)
                        try:
                            future = pool.submit(
                                _worker_grade, task.student, task.assignment, not queue
                            )
                            running[future] = task
                        except cf.process.BrokenProcessPool:
                            broken = True
                            queue.insert(0, task)
                            break
                        tally.start(task)
                    done, _ = cf.wait(list(running), timeout=1.0, return_when=cf.FIRST_COMPLETED)
                    if not done:
                        tally.tick()
                    for fut in done:
                        task = running.pop(fut)
                        try:
                            out = fut.result()
                        except cf.process.BrokenProcessPool:
                            tally.stop(task)
                            lost.append(task)
                            broken = True
                            continue
                        except Exception as exc:  # noqa: BLE001  (report it, never stop the class)
                            out = failed(f"{type(exc).__name__}: {exc}")
                        tally.finish(task, out)
                lost += queue if broken else []
            pending = lost
            if pending and _round == 0:
                jobs = 1  # whatever killed a worker, grade the rest one at a time
        for task in pending:
            tally.finish(task, failed("the grading worker died", 2))

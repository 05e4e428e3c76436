"""The teacher's workflow around nbgrader: release, collect, autograde a class, feedback, grades.

Every step works on a course directory (the repository, or any folder with the same
``nbgrader_config.py``, ``source/`` and ``notebooks/``) and, for the steps that move files
between teacher and learners, an exchange folder (``--exchange`` or ``PE_COURSE_EXCHANGE``):

==================  ===============================================================
``release``         register the assignments in ``gradebook.db`` and copy
                    ``notebooks/<id>`` to the exchange (``nbgrader release_assignment``)
``collect``         copy the learners' submissions to ``submitted/`` (``nbgrader collect``)
``autograde``       grade every submission, several learners at once, with a progress bar
``feedback``        ``nbgrader generate_feedback``, a page for each notebook that scored 0
                    ungraded (``feedback_page``), then ``release_feedback``
``grades``          one CSV row per learner: the score of each assignment, the total and
                    the status of each assignment (from ``autograde_report.csv``)
==================  ===============================================================

``autograde`` runs ``jobs`` worker processes (default: the number of cores). Each worker
loads nbgrader once and grades one (learner, assignment) at a time through nbgrader's own
``NbGraderAPI.autograde``, in which the learner's kernel runs in the grading sandbox
(``helpers.teacher.sandbox``). All workers write to the one sqlite ``gradebook.db``: its writes are
short transactions, sqlite's busy timeout is raised to two minutes through the database URL,
and a grading that still meets ``database is locked`` is retried. A learner's failure (a
corrupt notebook, a renamed file, a dead worker) is isolated: that notebook scores zero, the
problem is one line of the summary, and everything else is graded. Each notebook's status
(``STATUSES``: graded, repaired, timed out, unreadable, missing, failed) and the reason go
to ``autograde_report.csv``.
"""

from __future__ import annotations

import concurrent.futures as cf
import csv
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from helpers.teacher import sandbox

DB_TIMEOUT_S = 120
RETRIES = 4
LOCKED = "database is locked"


# --------------------------------------------------------------------------- the course


def course_root(course: str | os.PathLike | None = None) -> Path:
    """The course directory: the argument, else the current one if it holds the config."""
    if course is None:
        here = Path.cwd()
        course = (
            here if (here / "nbgrader_config.py").exists() else Path(__file__).resolve().parents[2]
        )
    root = Path(course).resolve()
    if not (root / "nbgrader_config.py").is_file():
        raise ValueError(f"course must be a folder with an nbgrader_config.py, got {str(course)!r}")
    return root


def exchange_root(exchange: str | os.PathLike | None = None) -> Path:
    """The exchange folder: the argument, else ``PE_COURSE_EXCHANGE``."""
    value = exchange if exchange is not None else os.environ.get("PE_COURSE_EXCHANGE")
    if not value:
        raise ValueError(
            "exchange must be given (--exchange DIR or PE_COURSE_EXCHANGE), got nothing"
        )
    return Path(value).resolve()


def db_url(course: Path, db: str | None = None) -> str:
    """The gradebook's SQLAlchemy URL: ``db`` when given (``postgresql://user@host/name``),
    else ``gradebook.db`` in the course with a long sqlite busy timeout (several writers)."""
    if db:
        if "://" not in db:
            raise ValueError(f"db must be an SQLAlchemy URL such as postgresql://..., got {db!r}")
        return db
    return f"sqlite:///{course / 'gradebook.db'}?timeout={DB_TIMEOUT_S}"


def _is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def course_id(course: Path) -> str:
    """The ``CourseDirectory.course_id`` of the course's ``nbgrader_config.py``."""
    return str(_load_config(course).CourseDirectory.course_id)


def assignment_ids(course: Path, ids: Iterable[str] | None = None) -> list[str]:
    """The assignments of ``source/`` (all of them when ``ids`` is empty)."""
    found = sorted(p.name for p in (course / "source").iterdir() if p.is_dir())
    ids = list(ids or [])
    unknown = [i for i in ids if i not in found]
    if unknown:
        raise ValueError(
            f"unknown assignment {', '.join(unknown)}: the assignments of this course are "
            f"{', '.join(found)}"
        )
    return ids or found


def _load_config(course: Path):
    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    cfg.CourseDirectory.root = str(course)
    return cfg


def _venv_on_path() -> None:
    """nbgrader runs ``alembic`` from PATH when it creates a gradebook: this venv's first."""
    bin_dir = str(Path(sys.executable).parent)
    if os.environ.get("PATH", "").split(os.pathsep)[0] != bin_dir:
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")


def _env(exchange: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    if exchange is not None:
        env["PE_COURSE_EXCHANGE"] = str(exchange)
    return env


def nbgrader(
    args: Sequence[str], cwd: Path, exchange: Path | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    """Run ``nbgrader <args>`` of this environment in ``cwd``; raise with its log on failure."""
    cmd = [str(Path(sys.executable).parent / "nbgrader"), *args]
    if exchange is not None:
        cmd.append(f"--Exchange.root={exchange}")
    proc = subprocess.run(
        cmd, check=False, cwd=cwd, env=_env(exchange), capture_output=True, text=True
    )
    if check and proc.returncode != 0:
        raise RuntimeError(
            f"`nbgrader {' '.join(args)}` failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}"
        )
    return proc


def registered(course: Path, db: str | None = None) -> set[str]:
    """Assignments whose cells are in the course gradebook."""
    if not db and not (course / "gradebook.db").exists():
        return set()
    from nbgrader.api import Gradebook

    _venv_on_path()
    with Gradebook(db_url(course, db), course_id(course)) as gb:
        return {a.name for a in gb.assignments if a.notebooks}


def _wal(course: Path, db: str | None) -> None:
    """Put the sqlite gradebook in write-ahead-log mode (kept in the file): readers no longer
    block the writer, and a commit costs one sync instead of several."""
    url = db_url(course, db)
    if not _is_sqlite(url) or not (course / "gradebook.db").exists():
        return
    import sqlite3

    with sqlite3.connect(course / "gradebook.db", timeout=DB_TIMEOUT_S) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.close()


def register(course: Path, ids: Iterable[str], db: str | None = None) -> list[str]:
    """Put the assignments' cells in the gradebook (generate_assignment into a scratch
    folder: ``notebooks/`` is left alone). Returns the ids that were added."""
    todo = [i for i in ids if i not in registered(course, db)]
    if not todo:
        return []
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    _venv_on_path()
    cfg = _load_config(course)
    cfg.CourseDirectory.db_url = db_url(course, db)
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        cfg.CourseDirectory.release_directory = scratch
        api = NbGraderAPI(coursedir=CourseDirectory(config=cfg), config=cfg)
        try:
            os.chdir(course)
            for assignment in todo:
                result = api.generate_assignment(assignment, force=True, create=True)
                if not result.get("success"):
                    raise RuntimeError(
                        f"registering {assignment} in the gradebook failed:\n"
                        f"{result.get('log', '')}{result.get('error', '')}"
                    )
        finally:
            os.chdir(here)
    return todo


# --------------------------------------------------------------------------- steps


def _db_args(db: str | None) -> list[str]:
    return [f"--db={db}"] if db else []


def release(course: Path, ids: Iterable[str], exchange: Path, db: str | None = None) -> None:
    """Register the assignments and release ``notebooks/<id>`` to the exchange."""
    ids = assignment_ids(course, ids)
    register(course, ids, db)
    exchange.mkdir(parents=True, exist_ok=True)
    for assignment in ids:
        nbgrader(
            ["release_assignment", assignment, "--force", *_db_args(db)],
            cwd=course,
            exchange=exchange,
        )
        print(f"released {assignment} to {exchange}")


def collect(course: Path, ids: Iterable[str], exchange: Path, db: str | None = None) -> None:
    """Copy the newest submission of every learner from the exchange to ``submitted/``."""
    for assignment in assignment_ids(course, ids):
        nbgrader(["collect", assignment, "--update", *_db_args(db)], cwd=course, exchange=exchange)
        print(f"collected {assignment}")


def feedback(
    course: Path, ids: Iterable[str], exchange: Path | None, db: str | None = None
) -> None:
    """Generate the feedback of every submitted notebook and release it to the exchange.

    nbgrader writes the pages of the autograded notebooks; a notebook that scored 0 without
    being graded (unreadable, saved under another name, a grading that failed) gets a page
    saying why (``feedback_page``), in the same place, released the same way."""
    for assignment in assignment_ids(course, ids):
        graded = any((course / "autograded").glob(f"*/{assignment}/*.ipynb"))
        if graded:
            nbgrader(["generate_feedback", assignment, "--force", *_db_args(db)], cwd=course)
        pages = zero_pages(course, assignment)
        if not graded and not pages:
            print(f"nothing autograded for {assignment}: no feedback")
            continue
        if exchange is not None:
            nbgrader(["release_feedback", assignment, *_db_args(db)], cwd=course, exchange=exchange)
        extra = f" ({len(pages)} page(s) for notebooks that scored 0 ungraded)" if pages else ""
        print(f"feedback of {assignment} generated{extra}{' and released' if exchange else ''}")


def zero_pages(course: Path, assignment: str) -> list[Path]:
    """Write the feedback page of every submitted notebook of ``assignment`` that scored 0
    without being graded; returns the pages written."""
    from helpers.teacher import feedback_page

    status = {
        (r["student_id"], r["notebook"]): r.get("status", "")
        for r in read_report(course / REPORT_NAME)
        if r["assignment"] == assignment
    }
    written = []
    for folder in sorted((course / "submitted").glob(f"*/{assignment}")):
        student = folder.parent.name
        pages: dict[str, str] = {}
        for found in check_submission(course, student, assignment):
            file = f"{found.notebook}.ipynb"
            if found.status == "unreadable":
                pages[found.notebook] = feedback_page.page(
                    "unreadable", assignment, file, detail=found.detail
                )
            elif found.status == "missing":
                for other in found.found:  # the learner's file, under the name they gave it
                    pages[Path(other).stem] = feedback_page.page(
                        "missing", assignment, file, found=other
                    )
        for notebook in _source_notebooks(course, assignment):
            graded = course / "autograded" / student / assignment / f"{notebook}.ipynb"
            if status.get((student, notebook)) == "failed" and not graded.exists():
                pages.setdefault(
                    notebook, feedback_page.page("failed", assignment, f"{notebook}.ipynb")
                )
        if not pages:
            continue
        out = course / "feedback" / student / assignment
        out.mkdir(parents=True, exist_ok=True)
        for name in ("timestamp.txt", "submission_secret.txt"):  # what release_feedback reads
            if (folder / name).is_file():
                shutil.copy2(folder / name, out / name)
        for notebook, text in pages.items():
            (out / f"{notebook}.html").write_text(text, encoding="utf-8")
            written.append(out / f"{notebook}.html")
    return written


# --------------------------------------------------------------------------- checks


def _graded_cells(nb) -> list[str]:
    return [
        c.metadata["nbgrader"]["grade_id"]
        for c in nb.cells
        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        and (c.metadata["nbgrader"].get("grade") or c.metadata["nbgrader"].get("solution"))
    ]


# How a submitted notebook came through autograde, from the least to the most serious.
STATUSES = ("graded", "repaired", "timed out", "unreadable", "missing", "failed")
NOT_SUBMITTED = "not submitted"


@dataclass
class Finding:
    """One submitted notebook's status (one of ``STATUSES``) and why, in plain words."""

    notebook: str  # its name without .ipynb, as in source/
    status: str
    reason: str = ""
    found: list[str] = field(default_factory=list)  # other notebooks where it is missing
    detail: str = ""  # the parse error of an unreadable file


def _source_notebooks(course: Path, assignment: str) -> list[str]:
    return [p.stem for p in sorted((course / "source" / assignment).glob("*.ipynb"))]


def check_submission(course: Path, student: str, assignment: str) -> list[Finding]:
    """What is wrong with each notebook of a learner's submitted folder, before grading:
    ``missing``, ``unreadable`` or ``repaired`` (deleted cells nbgrader puts back)."""
    import nbformat

    folder = course / "submitted" / student / assignment
    if not folder.is_dir():
        return [
            Finding(nb, "missing", NOT_SUBMITTED) for nb in _source_notebooks(course, assignment)
        ]
    findings = []
    for source in sorted((course / "source" / assignment).glob("*.ipynb")):
        path = folder / source.name
        if not path.exists():
            names = set(_source_notebooks(course, assignment))
            others = sorted(p.name for p in folder.glob("*.ipynb") if p.stem not in names)
            found = f" (found: {', '.join(others)})" if others else ""
            reason = f"{source.name} is missing: renamed or deleted{found}"
            findings.append(Finding(source.stem, "missing", reason, others))
            continue
        try:
            with warnings.catch_warnings():  # nbformat's warnings: not while the bar runs
                warnings.simplefilter("ignore")
                nb = nbformat.read(path, as_version=4)
        except Exception as exc:  # noqa: BLE001  (any parse error of a learner's file)
            first = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else ""
            detail = f"{type(exc).__name__}: {first}"
            reason = f"{source.name} is not a readable notebook ({detail})"
            findings.append(Finding(source.stem, "unreadable", reason, detail=detail))
            continue
        expected = _graded_cells(nbformat.read(source, as_version=4))
        missing = [g for g in expected if g not in set(_graded_cells(nb))]
        if missing:
            reason = (
                f"{source.name}: cells deleted ({', '.join(missing)}); restored from the "
                f"release version (a restored answer cell is a stub)"
            )
            findings.append(Finding(source.stem, "repaired", reason))
    return findings


def inspect_submission(course: Path, student: str, assignment: str) -> list[str]:
    """What is wrong with a learner's submitted folder, in plain words (empty: nothing)."""
    if not (course / "submitted" / student / assignment).is_dir():
        return [NOT_SUBMITTED]
    return [f.reason for f in check_submission(course, student, assignment)]


# --------------------------------------------------------------------------- autograde


@dataclass
class Task:
    """One learner's assignment to grade, and what came of it."""

    student: str
    assignment: str
    ok: bool = False
    seconds: float = 0.0
    attempts: int = 0
    problems: list[str] = field(default_factory=list)
    error: str = ""
    seed: int | None = None
    notebooks: list[str] = field(default_factory=list)  # the assignment's, from source/
    findings: list[Finding] = field(default_factory=list)  # before grading
    timeouts: dict[str, str] = field(default_factory=dict)  # notebook -> what was stopped

    def outcome(self) -> list[Finding]:
        """The status of each notebook after grading, and why."""
        before = {f.notebook: f for f in self.findings}
        out = []
        for nb in self.notebooks or [self.assignment]:
            seen = before.get(nb)
            if seen is not None and seen.status in ("missing", "unreadable"):
                out.append(seen)
                continue
            reasons = [seen.reason] if seen is not None else []
            if not self.ok:
                why = f"grading failed (nbgrader: {self.error or 'no reason given'})"
                out.append(Finding(nb, "failed", "; ".join([*reasons, why])))
            elif nb in self.timeouts:
                out.append(Finding(nb, "timed out", "; ".join([self.timeouts[nb], *reasons])))
            else:
                out.append(seen or Finding(nb, "graded"))
        return out

    def status(self) -> str:
        """The most serious status of the assignment's notebooks."""
        return max((f.status for f in self.outcome()), key=STATUSES.index)

    def replay(self, notebook: str | None = None) -> str:
        """The command that replays this grading's random cases (from the course folder)."""
        name = notebook or self.assignment
        path = f"submitted/{self.student}/{self.assignment}/{name}.ipynb"
        return f"python -m helpers check {path} --seed {self.seed}"


@dataclass
class ClassReport:
    """The outcome of ``autograde``: per-learner scores, statuses, timings, seeds."""

    tasks: list[Task]
    scores: dict[str, dict[str, float]]
    max_scores: dict[str, float]
    jobs: int
    seconds: float
    sandboxed: bool
    sandbox_note: str
    engine: str = "local process pool"
    report_path: Path | None = None
    notebook_scores: dict[tuple[str, str, str], float] = field(default_factory=dict)
    notebook_max: dict[tuple[str, str], float] = field(default_factory=dict)
    log_path: Path | None = None

    def failures(self) -> list[str]:
        """One line per problem: learner, assignment, what happened, what it scored."""
        lines = []
        for t in self.tasks:
            where = f"{t.student} {t.assignment}"
            if t.problems == [NOT_SUBMITTED]:
                lines.append(f"{where}: not submitted; scored 0")
            elif not t.ok:
                said = "; ".join(t.problems) if t.problems else "grading failed"
                lines.append(f"{where}: {said} (nbgrader: {t.error}); scored 0")
            else:
                lines += [f"{where}: {p}" for p in t.problems]
                lines += [f"{where}: {nb}: timed out: {why}" for nb, why in t.timeouts.items()]
        return lines

    def submitted(self) -> list[Task]:
        """The tasks with a submitted folder: what the progress bar counts."""
        return [t for t in self.tasks if t.problems != [NOT_SUBMITTED]]

    def summary(self) -> str:
        """The class summary printed at the end of ``autograde``.

        Its counts are the progress bar's: the submitted (learner, assignment) pairs, called
        notebooks; those with nothing submitted are counted apart."""
        submitted = self.submitted()
        n_learners = len({t.student for t in submitted})
        ok = sum(t.ok for t in submitted)
        lines = []
        if not self.sandboxed:
            lines.append(sandbox.warning_text(self.sandbox_note))
        else:
            lines.append(
                "sandbox: every learner's answer cells ran in bubblewrap (helpers.teacher.sandbox)"
            )
        lines.append(
            f"graded {ok}/{len(submitted)} notebooks of {n_learners} learners in "
            f"{self.seconds:.1f} s with {self.jobs} parallel job(s) ({self.engine})"
        )
        counts = {s: 0 for s in STATUSES}
        for t in submitted:
            counts[t.status()] += 1
        said = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "none"
        status = f"status of the {len(submitted)} submitted: {said}"
        absent = len(self.tasks) - len(submitted)
        if absent:
            status += f"; {absent} not submitted (missing, scored 0)"
        lines.append(status)
        if self.report_path is not None:
            lines.append(
                f"status, scores, seeds and replay commands of every notebook: {self.report_path}"
            )
        if self.log_path is not None and self.log_path.exists() and self.log_path.stat().st_size:
            lines.append(f"messages of nbgrader and the grading workers: {self.log_path}")
        failures = self.failures()
        if failures:
            lines.append(f"{len(failures)} problem(s):")
            lines += [f"  {line}" for line in failures]
        else:
            lines.append("no problems")
        return "\n".join(lines)

    def rows(self) -> list[dict]:
        """One row per (learner, assignment, notebook) of ``REPORT_COLUMNS``."""
        rows = []
        for t in self.tasks:
            for found in t.outcome():
                key = (t.student, t.assignment, found.notebook)
                readable = found.status not in ("missing", "unreadable")
                replay = t.replay(found.notebook)
                score = self.notebook_scores.get(key, 0.0) if t.ok else 0.0
                rows.append(
                    {
                        "student_id": t.student,
                        "assignment": t.assignment,
                        "notebook": found.notebook,
                        "status": found.status,
                        "reason": found.reason,
                        "score": round(score, 6),
                        "max_score": round(
                            self.notebook_max.get((t.assignment, found.notebook), 0.0), 6
                        ),
                        "graded": int(t.ok),
                        "seed": "" if t.seed is None else t.seed,
                        "replay": "" if t.seed is None or not readable else replay,
                    }
                )
        return rows

    def write_csv(self, path: Path) -> Path:
        """Write ``rows()`` to ``path``, keeping the rows of the (learner, assignment) pairs
        this run did not grade (an earlier run's, for another assignment or learner)."""
        done = {(t.student, t.assignment) for t in self.tasks}
        kept = [r for r in read_report(path) if (r["student_id"], r["assignment"]) not in done]
        rows = sorted(
            kept + self.rows(), key=lambda r: (r["student_id"], r["assignment"], r["notebook"])
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(
                fh, fieldnames=REPORT_COLUMNS, restval="", extrasaction="ignore"
            )
            writer.writeheader()
            writer.writerows(rows)
        self.report_path = path
        return path


REPORT_COLUMNS = [
    "student_id",
    "assignment",
    "notebook",
    "status",
    "reason",
    "score",
    "max_score",
    "graded",
    "seed",
    "replay",
]


def read_report(path: Path) -> list[dict]:
    """The rows of an ``autograde_report.csv`` (none when there is no such file)."""
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:  # a report written before notebooks had rows of their own
        row.setdefault("notebook", row.get("assignment", ""))
    return rows


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


def _worker_init(course: str, url: str, log: str | None = None) -> None:
    """Each worker loads nbgrader and the course configuration once; with ``log``, what it
    prints (nbgrader's log, warnings) goes to that file instead of the progress bar's stream."""
    global _API, _API_KEY
    if log is not None:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)

    from sqlalchemy.exc import SAWarning

    warnings.filterwarnings("ignore", category=SAWarning)  # nbgrader's own session warnings
    _venv_on_path()
    _lighter_nbgrader()
    os.chdir(course)
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    cfg = _load_config(Path(course))
    cfg.CourseDirectory.db_url = url
    _API = NbGraderAPI(coursedir=CourseDirectory(config=cfg), config=cfg)
    _API_KEY = (course, url)


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


def _worker_grade(student: str, assignment: str) -> dict:
    """Autograde one learner's assignment in this worker; retry when the database is busy."""
    start = time.perf_counter()
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
    }


def _timeouts(log: str) -> dict[str, str]:
    """``notebook -> what was stopped`` from the lines of nbgrader's log that say learner
    code ran past its time limit (``nbgrader_plugin.TIMED_OUT_LOG``)."""
    from helpers.teacher.nbgrader_plugin import TIMED_OUT_LOG

    found: dict[str, list[str]] = {}
    for line in log.splitlines():
        at = line.find(TIMED_OUT_LOG)
        if at < 0:
            continue
        notebook, _, why = line[at + len(TIMED_OUT_LOG) :].partition(": ")
        found.setdefault(notebook.strip(), []).append(why.strip())
    return {nb: "; ".join(whys) + "; stopped, the rest was graded" for nb, whys in found.items()}


def grade_one(course: str, url: str, student: str, assignment: str) -> dict:
    """Autograde one (learner, assignment) in this process, loading nbgrader on first use.

    What a Dask worker runs (``helpers.teacher.cluster``): the course folder must be at the
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


REPORT_NAME = "autograde_report.csv"
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
) -> ClassReport:
    """Autograde every learner's submissions, ``jobs`` at a time; never stops on one learner.

    ``ids`` default to every assignment somebody submitted, ``students`` to everyone in
    ``submitted/``, ``jobs`` to the number of cores. ``db`` is the gradebook's SQLAlchemy
    URL (default: ``gradebook.db`` in the course). ``scheduler`` fans the grading out over a
    Dask cluster (``tcp://host:8786``, or ``local:N`` for a LocalCluster of N workers)
    instead of the local process pool (``helpers.teacher.cluster``).

    Returns a ``ClassReport`` (``.summary()`` is what the command prints); the score, seed
    and replay command of every notebook go to ``autograde_report.csv`` in the course.
    A submission that is missing, renamed, corrupt or whose grading fails scores 0 with one
    line saying why.
    """
    from helpers.teacher import seeds

    course = course_root(course)
    url = db_url(course, db)
    ids = list(ids or [])
    if not ids:  # every assignment somebody submitted
        ids = [a for a in assignment_ids(course) if any(course.glob(f"submitted/*/{a}"))]
    ids = assignment_ids(course, ids)
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1, got {jobs!r}")
    stream = stream if stream is not None else sys.stderr
    note = sandbox.reason_unavailable()
    if note:
        if sandbox.policy() == "require":
            raise sandbox.SandboxUnavailable(
                f"{sandbox.ENV_POLICY}=require but the grading sandbox cannot run: {note}"
            )
        print(sandbox.warning_text(note), file=stream, flush=True)
    start = time.perf_counter()
    register(course, ids, db)
    _wal(course, db)
    tasks = _submissions(course, ids, students)
    key, cid = seeds.secret(course), course_id(course)  # the secret exists before any worker
    runnable = []
    for task in tasks:
        task.seed = seeds.derive(key, cid, task.student, task.assignment)
        task.notebooks = _source_notebooks(course, task.assignment)
        task.findings = check_submission(course, task.student, task.assignment)
        task.problems = inspect_submission(course, task.student, task.assignment)
        if task.problems == [NOT_SUBMITTED]:
            task.error = "no submission"
        else:
            runnable.append(task)
    _add_students(course, url, {t.student for t in runnable})
    log = course / LOG_NAME
    log.unlink(missing_ok=True)
    bar = Progress(len({t.student for t in runnable}), len(runnable), stream, progress, jobs)
    if scheduler:
        from helpers.teacher import cluster

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
        _run_pool(course, url, runnable, jobs, Tally(runnable, bar), log)
    per_notebook, nb_max = notebook_scores(course, ids, [t.student for t in tasks], db)
    scores, maxima = _by_assignment(per_notebook, nb_max, ids, [t.student for t in tasks])
    for task in tasks:
        if not task.ok:
            scores.setdefault(task.student, {})[task.assignment] = 0.0
    report = ClassReport(
        tasks, scores, maxima, jobs, time.perf_counter() - start, not note, note, engine
    )
    report.notebook_scores, report.notebook_max, report.log_path = per_notebook, nb_max, log
    report.write_csv(course / REPORT_NAME)
    return report


def _add_students(course: Path, url: str, students: Iterable[str]) -> None:
    """Put the learners in the gradebook before the workers start: two workers grading one
    learner's assignments at once would both create the learner (a UNIQUE violation)."""
    from nbgrader.api import Gradebook

    _venv_on_path()
    with Gradebook(url, course_id(course)) as gb:
        for student in sorted(students):
            gb.update_or_create_student(student)


def _run_pool(
    course: Path, url: str, tasks: list[Task], jobs: int, tally: Tally, log: Path | None = None
) -> None:
    """Grade ``tasks`` in ``jobs`` worker processes, no more tasks handed out than there are
    workers (so each task's start is known to the progress bar)."""
    pending = list(tasks)
    for _round in range(2):  # a second round only for tasks whose worker died
        if not pending:
            break
        lost: list[Task] = []
        ctx = multiprocessing.get_context("spawn")
        slots = min(jobs, len(pending))
        with cf.ProcessPoolExecutor(
            max_workers=slots,
            mp_context=ctx,
            initializer=_worker_init,
            initargs=(str(course), url, None if log is None else str(log)),
        ) as pool:
            queue, running, broken = list(pending), {}, False
            while running or (queue and not broken):
                while queue and not broken and len(running) < slots:
                    task = queue.pop(0)
                    try:
                        running[pool.submit(_worker_grade, task.student, task.assignment)] = task
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


def notebook_scores(
    course: Path, ids: Iterable[str], students: Iterable[str], db: str | None = None
) -> tuple[dict[tuple[str, str, str], float], dict[tuple[str, str], float]]:
    """``(learner, assignment, notebook) -> score`` from the gradebook (0 for a notebook
    without an autograded file) and ``(assignment, notebook) -> max score``."""
    from nbgrader.api import Gradebook, MissingEntry

    ids = list(ids)
    scores: dict[tuple[str, str, str], float] = {}
    maxima: dict[tuple[str, str], float] = {}
    with Gradebook(db_url(course, db), course_id(course)) as gb:
        for assignment in ids:
            for nb in gb.find_assignment(assignment).notebooks:
                maxima[(assignment, nb.name)] = float(nb.max_score)
        for student in students:
            for assignment in ids:
                try:
                    sub = gb.find_submission(assignment, student)
                except MissingEntry:
                    continue
                for nb in sub.notebooks:
                    path = course / "autograded" / student / assignment / f"{nb.name}.ipynb"
                    late = float(nb.late_submission_penalty or 0.0)  # helpers.teacher.late
                    scores[(student, assignment, nb.name)] = (
                        float(nb.score) - late if path.exists() else 0.0
                    )
    return scores, maxima


def _by_assignment(
    scores: dict[tuple[str, str, str], float],
    maxima: dict[tuple[str, str], float],
    ids: list[str],
    students: Iterable[str],
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    per: dict[str, dict[str, float]] = {s: dict.fromkeys(ids, 0.0) for s in students}
    for (student, assignment, _nb), score in scores.items():
        if student in per and assignment in per[student]:
            per[student][assignment] += score
    totals = dict.fromkeys(ids, 0.0)
    for (assignment, _nb), top in maxima.items():
        if assignment in totals:
            totals[assignment] += top
    return per, totals


def read_scores(
    course: Path, ids: Iterable[str], students: Iterable[str], db: str | None = None
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Scores from the gradebook; a notebook without an autograded file scores 0."""
    ids, students = list(ids), list(students)
    scores, maxima = notebook_scores(course, ids, students, db)
    return _by_assignment(scores, maxima, ids, students)


def statuses(course: Path, students: Iterable[str], ids: Iterable[str]) -> dict[tuple, str]:
    """``(learner, assignment) -> status`` from ``autograde_report.csv``: the most serious of
    its notebooks; ``missing`` when nothing was submitted, ``not autograded`` when a
    submission has no row yet."""
    found: dict[tuple, str] = {}
    for row in read_report(course / REPORT_NAME):
        key = (row["student_id"], row["assignment"])
        if row.get("status") in STATUSES:
            found[key] = max(found.get(key, "graded"), row["status"], key=STATUSES.index)
    out = {}
    for student in students:
        for assignment in ids:
            if (student, assignment) in found:
                out[(student, assignment)] = found[(student, assignment)]
            elif not (course / "submitted" / student / assignment).is_dir():
                out[(student, assignment)] = "missing"
            else:
                out[(student, assignment)] = "not autograded"
    return out


def export_grades(
    course: Path, out: Path, ids: Iterable[str] | None = None, db: str | None = None
) -> list[dict]:
    """Write one CSV row per learner: each notebook's score and language, ``total``,
    ``max_total`` and ``status`` (``<id>: <status>`` of each notebook, from
    ``autograde_report.csv``).

    A notebook is one column whatever the language it was taken in (``06_rope`` and
    ``06_rope_ko`` are graded alike and score alike); ``<id> language`` says which one the
    learner submitted (``en``, ``ko``; empty when none). A learner who submitted both
    gets the better score, and the language and status of that one.
    """
    from nbgrader.api import Gradebook

    from helpers.i18n import split_assignment

    if not db and not (course / "gradebook.db").exists():
        raise ValueError(f"course has no gradebook.db yet (run autograde first): {course}")
    ids = assignment_ids(course, ids)
    ids = [i for i in ids if i in registered(course, db)]
    bases = list(dict.fromkeys(split_assignment(i)[0] for i in ids))
    with Gradebook(db_url(course, db), course_id(course)) as gb:
        students = sorted(s.id for s in gb.students)
    by_notebook, notebook_maxima = notebook_scores(course, ids, students, db)
    taken = {(student, assignment) for student, assignment, _nb in by_notebook}  # submitted
    scores, maxima = _by_assignment(by_notebook, notebook_maxima, ids, students)
    status = statuses(course, students, ids)
    base_max = {}
    for assignment in ids:
        base_max.setdefault(split_assignment(assignment)[0], maxima[assignment])
    rows = []
    for student in students:
        row: dict = {"student_id": student}
        said = []
        for base in bases:
            best = None
            for assignment in ids:
                if split_assignment(assignment)[0] != base or (student, assignment) not in taken:
                    continue
                if best is None or scores[student][assignment] > scores[student][best]:
                    best = assignment
            row[base] = round(scores[student][best], 6) if best else 0.0
            row[f"{base} language"] = split_assignment(best)[1] if best else ""
            variants = [a for a in ids if split_assignment(a)[0] == base]
            shown = best or next(
                (a for a in variants if status[(student, a)] != "missing"), variants[0]
            )
            said.append(f"{base}: {status[(student, shown)]}")
        row["total"] = round(sum(row[b] for b in bases), 6)
        row["max_total"] = round(sum(base_max.values()), 6)
        row["status"] = "; ".join(said)
        rows.append(row)
    fields = ["student_id", *[f for b in bases for f in (b, f"{b} language")], "total"]
    fields += ["max_total", "status"]
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return rows


# --------------------------------------------------------------------------- course copies


def copy_course(src: Path, dest: Path, ids: Iterable[str] | None = None) -> Path:
    """A fresh course folder with the config, ``source/`` and ``notebooks/`` of ``src``."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src / "nbgrader_config.py", dest / "nbgrader_config.py")
    for top in ("source", "notebooks"):
        for assignment in assignment_ids(src, ids):
            if (src / top / assignment).is_dir():
                shutil.copytree(
                    src / top / assignment,
                    dest / top / assignment,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
                )
    return dest


# --------------------------------------------------------------------------- commands

COMMANDS = ("release", "collect", "autograde", "feedback", "grades", "report", "learner-build")


def add_commands(sub) -> None:
    """Add the teacher's subcommands to ``python -m helpers``'s argument parser."""

    def common(p, exchange: bool) -> None:
        p.add_argument("ids", nargs="*", help="assignment ids (default: all of source/)")
        p.add_argument("--course", type=Path, default=None, help="course folder (default: repo)")
        p.add_argument(
            "--db",
            default=None,
            help="gradebook as an SQLAlchemy URL, e.g. postgresql://user@host/db "
            "(default: gradebook.db in the course)",
        )
        if exchange:
            p.add_argument(
                "--exchange", type=Path, default=None, help="exchange folder (PE_COURSE_EXCHANGE)"
            )

    common(sub.add_parser("release", help="release notebooks/ to the exchange"), True)
    common(sub.add_parser("collect", help="collect submissions from the exchange"), True)
    auto = sub.add_parser("autograde", help="autograde every learner, in parallel")
    common(auto, False)
    auto.add_argument("--students", default="", help="comma-separated ids (default: all)")
    auto.add_argument("--jobs", type=int, default=None, help="parallel learners (default: cores)")
    auto.add_argument("--no-progress", action="store_true", help="no progress bar")
    auto.add_argument(
        "--scheduler",
        default=None,
        help="grade on a Dask cluster: its scheduler's address (tcp://host:8786), or local:N "
        "for a LocalCluster of N workers (default: a local process pool of --jobs)",
    )
    common(sub.add_parser("feedback", help="generate feedback and release it"), True)
    grades = sub.add_parser("grades", help="export the grades as CSV")
    common(grades, False)
    grades.add_argument("--out", type=Path, default=None, help="CSV file")
    from helpers.teacher import lms

    lms.add_arguments(grades)
    from helpers.teacher import class_report

    class_report.add_command(sub)
    build = sub.add_parser("learner-build", help="a wheel of helpers without the solutions")
    build.add_argument("--out", type=Path, default=Path("dist"), help="output folder")


def run_command(args) -> int:
    """Run one of ``COMMANDS`` from parsed arguments; errors become one line and exit code 2."""
    try:
        if args.command == "learner-build":
            from helpers.teacher import learner_build

            print(learner_build.build(args.out))
            return 0
        course = course_root(args.course)
        if args.command in ("release", "collect"):
            step = release if args.command == "release" else collect
            step(course, args.ids, exchange_root(args.exchange), args.db)
        elif args.command == "feedback":
            has_exchange = args.exchange or os.environ.get("PE_COURSE_EXCHANGE")
            exchange = exchange_root(args.exchange) if has_exchange else None
            feedback(course, args.ids, exchange, args.db)
        elif args.command == "autograde":
            students = [s for s in args.students.split(",") if s] or None
            report = autograde(
                course,
                args.ids,
                students,
                args.jobs,
                not args.no_progress,
                db=args.db,
                scheduler=args.scheduler,
            )
            print(report.summary())
        elif args.command == "report":
            from helpers.teacher import class_report

            class_report.run(course, args)
        elif args.command == "grades" and args.format:
            from helpers.teacher import lms

            print("\n".join(lms.run(course, args).lines()))
        elif args.command == "grades":
            out = Path.cwd() / (args.out or "grades.csv")
            rows = export_grades(course, out, args.ids, args.db)
            print(f"wrote {len(rows)} learner(s) to {out}")
    except (ValueError, RuntimeError) as exc:
        print(f"{args.command}: {exc}", file=sys.stderr)
        return 2
    return 0

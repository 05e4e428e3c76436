"""The nbgrader steps of the teacher's cycle: register, release, collect, feedback.

==================  ===============================================================
``register``        put the assignments' cells in the gradebook (``gradebook.db``)
``release``         register them and copy ``notebooks/<id>`` to the exchange
                    (``nbgrader release_assignment``)
``collect``         copy the learners' submissions to ``submitted/`` (``nbgrader collect``)
``feedback``        ``nbgrader generate_feedback``, a page for each notebook that scored 0
                    ungraded (``zero_pages``, ``feedback_page``), then ``release_feedback``
==================  ===============================================================

Grading (``autograde``) is ``helpers.teacher.classroom.grading``.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from helpers.teacher.classroom.course import (
    DB_TIMEOUT_S,
    assignment_ids,
    backup_folder,
    course_id,
    db_url,
    is_sqlite,
    load_config,
    nbgrader,
    source_notebooks,
    venv_on_path,
)
from helpers.teacher.classroom.submissions import check_submission
from helpers.teacher.classroom.summary import REPORT_NAME, read_report


def registered(course: Path, db: str | None = None) -> set[str]:
    """Assignments whose cells are in the course gradebook."""
    if not db and not (course / "gradebook.db").exists():
        return set()
    from nbgrader.api import Assignment, Gradebook, Notebook
    from sqlalchemy import select

    venv_on_path()
    cid = course_id(course)
    with Gradebook(db_url(course, db), cid) as gb:
        query = (
            select(Assignment.name)
            .join(Notebook, Notebook.assignment_id == Assignment.id)
            .where(Assignment.course_id == cid)
            .distinct()
        )
        return {name for (name,) in gb.db.execute(query)}


def editions(course: Path, ids: Iterable[str]) -> list[str]:
    """Every language edition in ``source/`` of each id (``02_sincos`` -> ``02_sincos``,
    ``02_sincos_ko``), in ``source/`` order; an unknown id is an error."""
    from helpers.i18n import split_assignment

    wanted = {split_assignment(i)[0] for i in assignment_ids(course, ids)}
    return [a for a in assignment_ids(course) if split_assignment(a)[0] in wanted]


def submissions_in_gradebook(course: Path, db: str | None = None) -> dict[str, int]:
    """``assignment -> number of submissions`` of the gradebook (registered ones only)."""
    if not db and not (course / "gradebook.db").exists():
        return {}
    from nbgrader.api import Gradebook

    venv_on_path()
    with Gradebook(db_url(course, db), course_id(course)) as gb:
        return {a.name: len(a.submissions) for a in gb.assignments if a.notebooks}


def graded_ids(course: Path, ids: Iterable[str] | None = None, db: str | None = None) -> list[str]:
    """The assignments to read grades of: each id asked for resolved to the editions the
    class took (``02_sincos`` when the class took ``02_sincos_ko``), or every assignment of
    the gradebook. An unknown id, an id that nobody submitted in any edition, or a course
    with nothing graded is an error (a column of zeros would say otherwise)."""
    from helpers.i18n import split_assignment

    asked = list(ids or [])
    taken = submissions_in_gradebook(course, db)
    if not asked:
        chosen = [a for a in assignment_ids(course) if a in taken]
        if not any(taken.get(a) for a in chosen):
            raise ValueError(
                f"nothing graded yet in {course}: no submission is in the gradebook "
                "(collect and autograde first)"
            )
        return chosen
    chosen = [a for a in editions(course, asked) if taken.get(a)]
    for wanted in asked:
        base = split_assignment(wanted)[0]
        if not any(split_assignment(a)[0] == base for a in chosen):
            raise ValueError(
                f"{wanted}: no submission of any edition ({', '.join(editions(course, [base]))}) "
                "is in the gradebook: collect and autograde it first"
            )
    return chosen


def wal(course: Path, db: str | None) -> None:
    """Put the sqlite gradebook in write-ahead-log mode (kept in the file): readers no longer
    block the writer, and a commit costs one sync instead of several."""
    url = db_url(course, db)
    if not is_sqlite(url) or not (course / "gradebook.db").exists():
        return
    import sqlite3

    with sqlite3.connect(course / "gradebook.db", timeout=DB_TIMEOUT_S) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.close()


def register(course: Path, ids: Iterable[str], db: str | None = None) -> list[str]:
    """Put the assignments' cells in the gradebook (generate_assignment into a scratch
    folder: ``notebooks/`` is left alone). Returns the ids that were added."""
    known = registered(course, db)  # once: each call opens the gradebook
    todo = [i for i in ids if i not in known]
    if not todo:
        return []
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    venv_on_path()
    cfg = load_config(course)
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


def _db_args(db: str | None) -> list[str]:
    return [f"--db={db}"] if db else []


def check_code(course: Path, ids: Iterable[str]) -> None:
    """Every code cell of ``source/<id>`` and ``notebooks/<id>`` compiles; else a
    ``ValueError`` names each notebook, cell and line that does not."""
    from helpers.teacher.notebook import syntax_errors

    errors = [
        line
        for assignment in ids
        for top in ("source", "notebooks")
        for path in sorted((course / top / assignment).glob("*.ipynb"))
        for line in syntax_errors(path)
    ]
    if errors:
        raise ValueError(
            "cells that do not compile (fix source/, then `make notebooks`); nothing "
            "released:\n  " + "\n  ".join(errors)
        )


def outbound(exchange: Path, course: Path, assignment: str) -> Path:
    """Where nbgrader's exchange keeps the released ``assignment`` of this course."""
    return exchange / course_id(course) / "outbound" / assignment


def release(course: Path, ids: Iterable[str], exchange: Path, db: str | None = None) -> None:
    """Register the assignments and release ``notebooks/<id>`` to the exchange.

    Every notebook is checked first (its code cells compile, ``check_code``): a broken one
    releases nothing. A re-release first copies what the exchange held to
    ``backups/<time> release/``. Ends with one line of counts."""
    ids = assignment_ids(course, ids)
    check_code(course, ids)
    missing = [a for a in ids if not any((course / "notebooks" / a).glob("*.ipynb"))]
    if missing:
        raise ValueError(
            f"no notebooks/<id> for {', '.join(missing)}: `make notebooks` first; nothing released"
        )
    register(course, ids, db)
    exchange.mkdir(parents=True, exist_ok=True)
    again = [a for a in ids if outbound(exchange, course, a).is_dir()]
    if again:
        folder = backup_folder(course, "release")
        for assignment in again:
            shutil.copytree(outbound(exchange, course, assignment), folder / assignment)
        print(f"released before: {', '.join(again)}; what the exchange held is in {folder}")
    for assignment in ids:
        nbgrader(
            ["release_assignment", assignment, "--force", *_db_args(db)],
            cwd=course,
            exchange=exchange,
        )
        print(f"released {assignment} to {exchange}")
    print(f"release: {len(ids)} released ({len(again)} of them again), 0 skipped")


def _stamps(course: Path, assignment: str) -> dict[str, str]:
    """``learner -> timestamp.txt`` of each submission of ``assignment`` in ``submitted/``."""
    out = {}
    for folder in (course / "submitted").glob(f"*/{assignment}"):
        stamp = folder / "timestamp.txt"
        out[folder.parent.name] = stamp.read_text(errors="replace") if stamp.is_file() else ""
    return out


def late_lines(
    course: Path, assignment: str, stamps: dict[str, str], before: set[str]
) -> list[str]:
    """One line per learner of ``stamps`` (``learner -> timestamp.txt``) whose submission came
    after the due date (with their extension), saying by how much and whether it is a
    resubmission (the learner was collected before): its late penalty replaces any earlier."""
    from helpers.teacher.classroom.late import ApplyDueDates, parse_due

    dates = ApplyDueDates(config=load_config(course))
    due = dates.due(assignment)
    if due is None:
        return []
    lines = []
    for student, text in sorted(stamps.items()):
        try:
            when = parse_due(text.strip())
        except ValueError:
            continue
        limit = due + dt.timedelta(days=dates.extension_days(student, assignment))
        late = (when - limit).total_seconds()
        if late > 0:
            again = "resubmitted" if student in before else "submitted"
            lines.append(
                f"late: {student} {again} {_duration(late)} after the due date "
                f"({limit:%Y-%m-%d %H:%M:%S} UTC{' with the extension' if limit != due else ''})"
                + ("; the late penalty follows this submission" if student in before else "")
            )
    return lines


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def collect(course: Path, ids: Iterable[str], exchange: Path, db: str | None = None) -> None:
    """Copy the newest submission of every learner from the exchange to ``submitted/``
    (``helpers.teacher.classroom.exchange.SafeCollect``); ends with the counts, and fails
    naming every refused entry once the rest is collected.

    Only what was released (``outbound/<id>`` in the exchange) is collected: an id asked for
    that never was is an error (a typo), and without ids those never released are skipped
    (nothing released at all is an error). Each line also counts the learners collected
    before whose submission did not change."""
    from helpers.teacher.classroom import exchange as plugins

    asked = list(ids or [])
    chosen = assignment_ids(course, asked)
    if not (exchange / course_id(course)).is_dir():
        raise ValueError(
            f"no course {course_id(course)} in the exchange {exchange}: a wrong --exchange "
            "(or PE_COURSE_EXCHANGE)? or release first; nothing collected"
        )
    never = [a for a in chosen if not outbound(exchange, course, a).is_dir()]
    if asked and never:
        raise ValueError(
            f"{', '.join(never)} was never released to {exchange} (no outbound/<id>): a typo? "
            "release it first; nothing collected"
        )
    chosen = [a for a in chosen if a not in never]
    if not chosen:
        raise ValueError(f"nothing released to {exchange} yet: release first; nothing collected")
    total, refused = 0, []
    for assignment in chosen:
        before = _stamps(course, assignment)
        n, bad = plugins.collect(course, assignment, exchange, _db_args(db))
        after = _stamps(course, assignment)
        same = sum(1 for s, stamp in before.items() if after.get(s) == stamp)
        total += n
        refused += bad
        print(
            f"collected {assignment}: {n} submission(s)"
            + (f", {same} collected before and unchanged" if same else "")
            + (f", refused {len(bad)}" if bad else "")
        )
        new = {s: t for s, t in after.items() if before.get(s) != t}
        for line in late_lines(course, assignment, new, set(before)):
            print(f"  {line}")
    for line in refused:
        print(f"  refused {line}")
    skipped = f", {len(never)} never released skipped" if never else ""
    print(
        f"collected {total}, refused {len(refused)}"
        + (" (listed above)" if refused else "")
        + skipped
    )
    if refused:
        raise RuntimeError(
            f"{len(refused)} inbound entr{'y was' if len(refused) == 1 else 'ies were'} refused "
            f"(listed above, and in {course / plugins.REFUSED_LOG}): `python -m helpers inbound "
            "list` shows them, `python -m helpers inbound remove ENTRY` removes one"
        )


def feedback(
    course: Path, ids: Iterable[str], exchange: Path | None, db: str | None = None
) -> None:
    """Generate the feedback of every submitted notebook and release it to the exchange.

    nbgrader writes the pages of the autograded notebooks; a notebook that scored 0 without
    being graded (unreadable, saved under another name, a grading that failed) gets a page
    saying why (``feedback_page``), in the same place, released the same way.

    Pages that exist already are copied to ``backups/<time> feedback/`` before they are
    made again. Without an exchange the pages are generated and not released, and the last
    line says how to release them. Ends with one line of counts."""
    from helpers.teacher.classroom.late import recompute_penalties

    asked = list(ids or [])
    chosen = editions(course, asked) if asked else assignment_ids(course)
    if exchange is not None and not exchange.is_dir():
        raise ValueError(
            f"there is no exchange at {exchange}: a wrong --exchange or PE_COURSE_EXCHANGE? "
            "(release creates it); nothing generated"
        )
    recompute_penalties(course, db)  # the pages say the penalty of the score now
    made, released, skipped, learners = [], [], [], set()
    old = [p for a in chosen for p in sorted((course / "feedback").glob(f"*/{a}")) if p.is_dir()]
    if old:
        folder = backup_folder(course, "feedback")
        for path in old:
            shutil.copytree(path, folder / path.relative_to(course))
        print(f"feedback made before is in {folder}")
    for assignment in chosen:
        graded = any((course / "autograded").glob(f"*/{assignment}/*.ipynb"))
        if graded:
            # one notebook nbconvert cannot render costs that learner's page only: nbgrader
            # renders the others and fails at the end; the missing pages are named
            proc = nbgrader(
                ["generate_feedback", assignment, "--force", *_db_args(db)],
                cwd=course,
                check=False,
            )
            if proc.returncode != 0:
                for line in _feedback_not_made(course, assignment):
                    print(line)
        pages = zero_pages(course, assignment)
        if not graded and not pages:
            skipped.append(assignment)
            continue
        made.append(assignment)
        learners |= {p.parent.name for p in (course / "feedback").glob(f"*/{assignment}")}
        if exchange is not None:
            proc = nbgrader(
                ["release_feedback", assignment, *_db_args(db)], cwd=course, exchange=exchange
            )
            for line in (proc.stdout + proc.stderr).splitlines():  # SafeReleaseFeedback's
                if " not released: " in line:
                    print(line.split("] ", 1)[-1])
            released.append(assignment)
        extra = f" ({len(pages)} page(s) for notebooks that scored 0 ungraded)" if pages else ""
        done = " and released" if exchange else ", not released"
        print(f"feedback of {assignment} generated{extra}{done}")
    if asked and not made:
        raise ValueError(
            f"nothing autograded for {', '.join(asked)} (any edition): autograde first; "
            "no feedback generated"
        )
    line = (
        f"feedback: {len(made)} assignment(s) generated for {len(learners)} learner(s), "
        f"{len(released)} released, {len(skipped)} skipped"
    )
    if skipped:
        line += f" (nothing autograded: {', '.join(skipped)})"
    if exchange is None and made:
        line += (
            "; generated, not released: no exchange. Release with "
            f"`python -m helpers feedback {' '.join(made)} --exchange DIR` "
            "(or PE_COURSE_EXCHANGE=DIR make feedback)"
        )
    print(line)


def _feedback_not_made(course: Path, assignment: str) -> list[str]:
    """A line for every autograded notebook of ``assignment`` with no feedback page."""
    from helpers.teacher.untrusted import shown

    lines = []
    for nb in sorted((course / "autograded").glob(f"*/{assignment}/*.ipynb")):
        student = nb.parent.parent.name
        if not (course / "feedback" / student / assignment / f"{nb.stem}.html").is_file():
            lines.append(
                f"feedback of {shown(student)} for {assignment} not generated: {shown(nb.name)} "
                "could not be rendered (nbgrader generate_feedback's log); the others were"
            )
    return lines


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
        for notebook in source_notebooks(course, assignment):
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

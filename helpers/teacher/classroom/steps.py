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

import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from helpers.teacher.classroom.course import (
    DB_TIMEOUT_S,
    assignment_ids,
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

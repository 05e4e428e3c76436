"""The bookkeeping after grading: scores read back, written answers settled and counted.

One class of five learners through real nbgrader, graded twice (the second time after the
teacher scored a written answer and gave extra credit, as the Formgrader does):

- alice answered her written answer: it waits for the teacher;
- bob left it as released: nbgrader scored it 0, nothing waits;
- carol answered it, the teacher scored it and gave 0.5 extra credit on a code cell;
- dave answered it and submitted two started days late (a 20 % penalty);
- eve's notebook is not JSON: it scores 0, its written answer waits like any other, and
  the Formgrader lists it (a stand-in autograded notebook) so the teacher can grade it.

Every place that shows these numbers (the autograde summary and ``autograde_report.csv``,
``grades.csv``, the LMS files' details, the class report) is read and must agree with the
numbers worked out here from the source notebook's points and the late rule of the
configuration. The same gradebook copied to PostgreSQL gives the same numbers.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from pathlib import Path

import nbformat
import pytest

from helpers.teacher.classroom import lms, report, written
from helpers.teacher.classroom.course import course_id, db_url
from helpers.teacher.classroom.grades import export_grades, notebook_scores
from helpers.teacher.classroom.grading import autograde
from helpers.teacher.classroom.summary import REPORT_NAME
from tests import classroom_kit as kit

A = "01_order"
LEARNERS = ("alice", "bob", "carol", "dave", "eve")
ANSWER = "Every output is a weighted sum over all tokens; the weights ignore where they sit."
PER_DAY = 0.10  # nbgrader_config.py: c.DailyPenalty.per_day


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _points(source: Path) -> tuple[float, float, str, str]:
    """(code points, written points, the written grade id, a code grade id)."""
    nb = nbformat.read(source, as_version=4)
    graded = [c for c in nb.cells if _meta(c).get("grade")]
    code = [c for c in graded if c.cell_type == "code"]
    text = [c for c in graded if c.cell_type == "markdown"]
    assert len(text) == 1, "01_order has one written answer"
    return (
        sum(float(_meta(c)["points"]) for c in code),
        float(_meta(text[0])["points"]),
        _meta(text[0])["grade_id"],
        _meta(code[0])["grade_id"],
    )


def _write_answer(path: Path, text: str) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown" and _meta(cell).get("grade"):
            cell.source = text
    nbformat.write(nb, path)


def _class(tmp_path: Path) -> Path:
    course = kit.course_with(tmp_path, [A])
    for student in ("alice", "carol", "dave"):
        _write_answer(kit.fill(course, student, A), ANSWER)
    kit.fill(course, "bob", A)  # the written answer left as released
    (kit.submit_dir(course, "eve", A) / f"{A}.ipynb").write_text('{"cells": [ not JSON')
    # dave submitted 1.5 days after the due date: two started days, 20 %
    stamp = dt.datetime(2026, 11, 20, 12, 0, 0)
    due = stamp - dt.timedelta(days=1.5)
    (kit.submit_dir(course, "dave", A) / "timestamp.txt").write_text(
        stamp.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    )
    config = course / "nbgrader_config.py"
    config.write_text(
        config.read_text(encoding="utf-8")
        + f"\nc.ApplyDueDates.duedates = {{{A!r}: {due.strftime('%Y-%m-%d %H:%M:%S UTC')!r}}}\n"
    )
    return course


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {r["student_id"]: r for r in csv.DictReader(fh)}


def _summary_waiting(summary: str) -> tuple[int, int]:
    line = next(ln for ln in summary.splitlines() if "written answer" in ln)
    found = re.match(r"(\d+) written answer\(s\) wait for manual grading(; (\d+) left)?", line)
    assert found, line
    return int(found[1]), int(found[3] or 0)


def _everywhere(course: Path, tmp_path: Path, url: str | None = None) -> dict:
    """The numbers of every place that shows them, read back from the files and objects."""
    db = url
    url = url or db_url(course)
    cid = course_id(course)
    waits = written.waiting(url, cid, [A], LEARNERS)
    grades = {r["student_id"]: r for r in export_grades(course, tmp_path / "grades.csv", [A], db)}
    book = lms.gradebook_entries(course, [A], db)
    [rep] = report.build(course, [A], db)
    per_nb, maxima = notebook_scores(course, [A], LEARNERS, db)
    return {
        "notebook_scores": {s: round(per_nb[(s, A, A)], 6) for s in LEARNERS},
        "max": maxima[(A, A)],
        "waiting": {s: (waits[(s, A, A)].answers, waits[(s, A, A)].blank) for s in LEARNERS},
        "grades.csv": {s: (grades[s][A], grades[s]["written_waiting"]) for s in LEARNERS},
        "lms": {
            s: (round(book.entries[s].scores[A], 6), round(book.entries[s].penalties[A], 6))
            for s in LEARNERS
        },
        "lms waiting": {s: book.entries[s].waiting[A] for s in LEARNERS},
        "report waiting": {s: sum(1 for w in rep.waiting if w[0] == s) for s in LEARNERS},
    }


@pytest.mark.slow
@pytest.mark.skipif(not kit.real_ids([A]), reason=f"{A} is needed")
def test_scores_and_written_answers_agree_everywhere(tmp_path, postgres):
    from nbgrader.api import Gradebook

    course = _class(tmp_path)
    code, text, written_id, code_id = _points(course / "source" / A / f"{A}.ipynb")
    late = round(2 * PER_DAY * code, 6)  # of dave's score: his written answer has none yet

    first = autograde(course, jobs=2, progress=False)
    assert [t.student for t in first.tasks if not t.ok] == ["eve"], first.summary()
    assert {s: first.scores[s][A] for s in LEARNERS} == pytest.approx(
        {"alice": code, "bob": code, "carol": code, "dave": code - late, "eve": 0.0}
    )
    # alice, carol, dave and eve wait; bob's is blank
    assert _summary_waiting(first.summary()) == (4, 1), first.summary()

    url, cid = db_url(course), course_id(course)
    with Gradebook(url, cid) as gb:  # the teacher, as the Formgrader does
        grade = gb.find_grade(written_id, A, A, "carol")
        grade.manual_score, grade.needs_manual_grade = text, False
        gb.find_grade(code_id, A, A, "carol").extra_credit = 0.5
        gb.db.commit()

    again = autograde(course, jobs=2, progress=False)  # nbgrader's --force regrade
    with Gradebook(url, cid) as gb:
        grade = gb.find_grade(written_id, A, A, "carol")
        assert grade.manual_score == text and not grade.needs_manual_grade  # settled
    carol = code + text + 0.5
    want_scores = {"alice": code, "bob": code, "carol": carol, "dave": code - late, "eve": 0.0}
    assert {s: again.scores[s][A] for s in LEARNERS} == pytest.approx(want_scores)
    assert _summary_waiting(again.summary()) == (3, 1), again.summary()
    rows = _rows(course / REPORT_NAME)
    assert {s: rows[s]["written_waiting"] for s in LEARNERS} == {
        "alice": "1",
        "bob": "0",
        "carol": "0",
        "dave": "1",
        "eve": "1",
    }
    assert {s: float(rows[s]["score"]) for s in LEARNERS} == pytest.approx(want_scores)

    found = _everywhere(course, tmp_path)
    assert found["notebook_scores"] == pytest.approx(
        {"alice": code, "bob": code, "carol": carol, "dave": code - late, "eve": 0.0}
    )
    assert found["max"] == code + text
    assert found["waiting"] == {
        "alice": (1, 0),
        "bob": (0, 1),
        "carol": (0, 0),
        "dave": (1, 0),
        "eve": (1, 0),
    }
    assert found["grades.csv"] == {
        "alice": (round(code, 2), 1),
        "bob": (round(code, 2), 0),
        "carol": (round(carol, 2), 0),
        "dave": (round(code - late, 2), 1),
        "eve": (0.0, 1),
    }
    assert found["lms"] == {
        "alice": (round(code, 6), 0.0),
        "bob": (round(code, 6), 0.0),
        "carol": (round(carol, 6), 0.0),
        "dave": (round(code - late, 6), late),
        "eve": (0.0, 0.0),
    }
    # every place counts written answers only (not eve's five test cells)
    assert found["lms waiting"] == {"alice": 1, "bob": 0, "carol": 0, "dave": 1, "eve": 1}
    assert found["report waiting"] == {"alice": 1, "bob": 0, "carol": 0, "dave": 1, "eve": 1}
    # the Formgrader lists eve's notebook (nbgrader's own list), so the teacher can grade it
    assert _formgrader_list(course) == sorted(LEARNERS)

    # the same gradebook in PostgreSQL: the same numbers
    pg = postgres.new_database("bookkeeping")
    _copy_gradebook(url, pg)
    assert _everywhere(course, tmp_path, pg) == found


def _formgrader_list(course: Path) -> list[str]:
    """The learners the Formgrader lists for the notebook (nbgrader's ``NbGraderAPI``)."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    from helpers.teacher.classroom.course import load_config

    cfg = load_config(course)
    cfg.CourseDirectory.root = str(course)
    api = NbGraderAPI(coursedir=CourseDirectory(config=cfg), config=cfg)
    return sorted(s["student"] for s in api.get_notebook_submissions(A, A))


def _copy_gradebook(source: str, dest: str) -> None:
    """Every row of nbgrader's tables from one database to another (made by nbgrader)."""
    from nbgrader.api import Base, Gradebook
    from sqlalchemy import create_engine

    with Gradebook(dest):
        pass  # nbgrader creates its tables
    src, dst = create_engine(source), create_engine(dest)
    try:
        with src.connect() as read, dst.begin() as write:
            for table in Base.metadata.sorted_tables:
                key = [c.name for c in table.primary_key.columns]
                there = {
                    tuple(r)
                    for r in write.execute(
                        table.select().with_only_columns(*table.primary_key.columns)
                    )
                }  # fmt: skip  (nbgrader's default course)
                rows = [dict(r._mapping) for r in read.execute(table.select())]
                rows = [r for r in rows if tuple(r[k] for k in key) not in there]
                if rows:
                    write.execute(table.insert(), rows)
    finally:
        src.dispose()
        dst.dispose()

"""The grades: scores read from the gradebook, and the CSV of one row per learner.

``notebook_scores`` and ``read_scores`` read the gradebook (a notebook without an
autograded file scores 0); ``statuses`` reads each (learner, assignment)'s status from
``autograde_report.csv``; ``export_grades`` writes the grades CSV (``python -m helpers grades``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from helpers.teacher.classroom import written
from helpers.teacher.classroom.course import course_id, db_url
from helpers.teacher.classroom.steps import graded_ids
from helpers.teacher.classroom.submissions import STATUSES
from helpers.teacher.classroom.summary import REPORT_NAME, read_report
from helpers.teacher.files import write_csv


def notebook_rows(
    course: Path, ids: Iterable[str], students: Iterable[str], db: str | None = None
) -> tuple[dict[tuple[str, str, str], tuple[float, float]], dict[tuple[str, str], float]]:
    """``(learner, assignment, notebook) -> (score, late penalty)`` of every submitted notebook
    as the gradebook has them (the penalty not subtracted), and ``(assignment, notebook) -> max
    score``: two queries (one per 500 learners), the sums made by the database."""
    from nbgrader.api import Assignment, Grade, Gradebook, Notebook, SubmittedNotebook
    from sqlalchemy import and_, func, select

    ids = list(ids)
    rows: dict[tuple[str, str, str], tuple[float, float]] = {}
    maxima: dict[tuple[str, str], float] = {}
    cid = course_id(course)
    with Gradebook(db_url(course, db), cid) as gb:
        tops = (
            select(Assignment.name, Notebook.name, Notebook.max_score)
            .join(Notebook, Notebook.assignment_id == Assignment.id)
            .where(and_(Assignment.course_id == cid, Assignment.name.in_(ids)))
        )
        for assignment, notebook, top in gb.db.execute(tops):
            maxima[(assignment, notebook)] = float(top or 0.0)
        score = func.coalesce(func.sum(Grade.score), 0.0)
        penalty = func.coalesce(func.max(SubmittedNotebook.late_submission_penalty), 0.0)
        for chunk in written._chunks(students):
            query = (
                written._submitted(cid, ids, chunk)(score, penalty)
                .outerjoin(Grade, Grade.notebook_id == SubmittedNotebook.id)
                .group_by(*written._by_notebook())
            )
            for student, assignment, notebook, got, late in gb.db.execute(query):
                rows[(student, assignment, notebook)] = (float(got), float(late))
    return rows, maxima


def notebook_scores(
    course: Path, ids: Iterable[str], students: Iterable[str], db: str | None = None
) -> tuple[dict[tuple[str, str, str], float], dict[tuple[str, str], float]]:
    """``(learner, assignment, notebook) -> score`` from the gradebook, less its late penalty
    (0 for a notebook without an autograded file) and ``(assignment, notebook) -> max score``."""
    rows, maxima = notebook_rows(course, ids, students, db)
    scores = {}
    for (student, assignment, notebook), (score, late) in rows.items():
        path = course / "autograded" / student / assignment / f"{notebook}.ipynb"
        scores[(student, assignment, notebook)] = score - late if path.exists() else 0.0
    return scores, maxima


def by_assignment(
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
    return by_assignment(scores, maxima, ids, students)


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
    ``max_total`` (two decimals, each rounded once; the total from the unrounded scores),
    ``status`` (``<id>: <status>`` of each notebook, from ``autograde_report.csv``) and
    ``written_waiting`` (the learner's written answers that wait for manual grading, read
    from the gradebook).

    A notebook is one column whatever the language it was taken in (``06_rope`` and
    ``06_rope_ko`` are graded alike and score alike); ``<id> language`` says which one the
    learner submitted (``en``, ``ko``; empty when none). A learner who submitted both
    gets the better score, and the language and status of that one.
    """
    from nbgrader.api import Gradebook

    from helpers.i18n import split_assignment
    from helpers.teacher.classroom.late import recompute_penalties

    if not db and not (course / "gradebook.db").exists():
        raise ValueError(f"course has no gradebook.db yet (run autograde first): {course}")
    ids = graded_ids(course, ids, db)  # the editions the class took; none is an error
    recompute_penalties(course, db)  # for the scores as they are now (late)
    bases = list(dict.fromkeys(split_assignment(i)[0] for i in ids))
    with Gradebook(db_url(course, db), course_id(course)) as gb:
        students = sorted(s.id for s in gb.students)
    by_notebook, notebook_maxima = notebook_scores(course, ids, students, db)
    taken = {(student, assignment) for student, assignment, _nb in by_notebook}  # submitted
    scores, maxima = by_assignment(by_notebook, notebook_maxima, ids, students)
    status = statuses(course, students, ids)
    waits = written.waiting(db_url(course, db), course_id(course), ids, students)
    base_max = {}
    for assignment in ids:
        base_max.setdefault(split_assignment(assignment)[0], maxima[assignment])
    rows = []
    for student in students:
        row: dict = {"student_id": student}
        said, total, chosen = [], 0.0, set()
        for base in bases:
            best = None
            for assignment in ids:
                if split_assignment(assignment)[0] != base or (student, assignment) not in taken:
                    continue
                if best is None or scores[student][assignment] > scores[student][best]:
                    best = assignment
            total += scores[student][best] if best else 0.0
            row[base] = round(scores[student][best], 2) if best else 0.0  # rounded once
            chosen.add(best)
            row[f"{base} language"] = split_assignment(best)[1] if best else ""
            variants = [a for a in ids if split_assignment(a)[0] == base]
            shown = best or next(
                (a for a in variants if status[(student, a)] != "missing"), variants[0]
            )
            said.append(f"{base}: {status[(student, shown)]}")
        row["total"] = round(total, 2)  # from the unrounded scores
        row["max_total"] = round(sum(base_max.values()), 2)
        row["status"] = "; ".join(said)
        # the written answers of the notebooks counted above (the better language's)
        row["written_waiting"] = sum(
            w.answers for (s, a, _nb), w in waits.items() if s == student and a in chosen
        )
        rows.append(row)
    fields = ["student_id", *[f for b in bases for f in (b, f"{b} language")], "total"]
    fields += ["max_total", "status", "written_waiting"]
    write_csv(out, fields, rows)  # whole or not at all, no formula cell
    return rows

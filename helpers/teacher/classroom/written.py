"""Written answers: the cells a teacher grades by hand, and how many still wait.

Every notebook has one or two written answers: Markdown cells that are nbgrader answer
cells and grade cells at once (``solution: true, grade: true``), with their points. No
automatic check grades them: nbgrader's autograde gives them no score (``auto_score`` is
None) and marks them for manual grading, and the teacher scores them in the Formgrader
(or through nbgrader's ``Gradebook``). An answer left as it was released is the
exception: nbgrader scores it 0 by itself (its checksum is the release's) and comments
"No response.". ``waiting`` counts, per submitted notebook, the written answers that have
no score yet and those left unanswered; ``settle`` keeps a regrade from flagging written
answers the teacher has already scored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass
class Waiting:
    """The written answers of one submitted notebook that wait for the teacher."""

    answers: int = 0  # answered, no score yet: the teacher grades them
    blank: int = 0  # left as released: nbgrader scored them 0 (nothing to read)

    def __add__(self, other: Waiting) -> Waiting:
        return Waiting(self.answers + other.answers, self.blank + other.blank)


def is_written(grade) -> bool:
    """Whether a gradebook ``Grade`` belongs to a written answer (a Markdown grade cell)."""
    return getattr(grade.cell, "cell_type", None) == "markdown"


# The students of one IN (...) list: sqlite's limit of bound values is far above it.
CHUNK = 500


def _chunks(students: Iterable[str]) -> list[list[str]]:
    students = sorted(set(students))
    return [students[i : i + CHUNK] for i in range(0, len(students), CHUNK)]


def _submitted(course_id: str, ids: list[str], students: list[str]):
    """The query's FROM and WHERE: every submitted notebook of ``ids`` by ``students`` in the
    course, with its learner, assignment and notebook names (nbgrader's models)."""
    from nbgrader.api import Assignment, Notebook, SubmittedAssignment, SubmittedNotebook
    from sqlalchemy import and_, select

    return lambda *columns: (
        select(
            SubmittedAssignment.student_id,
            Assignment.name,
            Notebook.name.label("notebook"),
            *columns,
        )
        .select_from(SubmittedNotebook)
        .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
        .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
        .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
        .where(
            and_(
                Assignment.course_id == course_id,
                Assignment.name.in_(ids),
                SubmittedAssignment.student_id.in_(students),
            )
        )
    )


def _by_notebook() -> tuple:
    """What a query counting per submitted notebook groups by (PostgreSQL wants every
    column it shows)."""
    from nbgrader.api import Assignment, Notebook, SubmittedAssignment, SubmittedNotebook

    return SubmittedNotebook.id, SubmittedAssignment.student_id, Assignment.name, Notebook.name


def _written_grade():
    """``Grade`` is a written answer's: its cell (a grade or task cell) is Markdown."""
    from nbgrader.api import Grade

    return Grade.cell_type == "markdown"


def waiting(
    url: str, course_id: str, ids: Iterable[str], students: Iterable[str]
) -> dict[tuple[str, str, str], Waiting]:
    """``(learner, assignment, notebook) -> Waiting`` for every submitted notebook of the
    gradebook at ``url`` (a notebook whose written answers are all scored: ``Waiting()``).

    One query per 500 learners: written answers without a manual score, those without an
    automatic score (answered: the teacher grades them) and those nbgrader scored 0 (left as
    released), counted per submitted notebook by the database."""
    from nbgrader.api import Grade, Gradebook, SubmittedNotebook
    from sqlalchemy import and_, case, func

    ids = list(ids)
    open_ = and_(_written_grade(), Grade.manual_score.is_(None))
    answers = func.coalesce(
        func.sum(case((and_(open_, Grade.auto_score.is_(None)), 1), else_=0)), 0
    )
    blank = func.coalesce(
        func.sum(case((and_(open_, Grade.auto_score.isnot(None)), 1), else_=0)), 0
    )
    out: dict[tuple[str, str, str], Waiting] = {}
    with Gradebook(url, course_id) as gb:
        for chunk in _chunks(students):
            query = (
                _submitted(course_id, ids, chunk)(answers, blank)
                .outerjoin(Grade, Grade.notebook_id == SubmittedNotebook.id)
                .group_by(*_by_notebook())
            )
            for student, assignment, notebook, n_answers, n_blank in gb.db.execute(query):
                out[(student, assignment, notebook)] = Waiting(int(n_answers), int(n_blank))
    return out


def waiting_cells(
    url: str, course_id: str, ids: Iterable[str], students: Iterable[str]
) -> list[tuple[str, str, str, str]]:
    """``(learner, assignment, notebook, grade id)`` of every answered written answer that
    waits for the teacher: what ``waiting`` counts as ``answers``, one row each."""
    from nbgrader.api import BaseCell, Grade, Gradebook, SubmittedNotebook
    from sqlalchemy import and_

    ids = list(ids)
    found = []
    with Gradebook(url, course_id) as gb:
        for chunk in _chunks(students):
            query = (
                _submitted(course_id, ids, chunk)(BaseCell.name)
                .join(Grade, Grade.notebook_id == SubmittedNotebook.id)
                .join(BaseCell, Grade.cell_id == BaseCell.id)
                .where(
                    and_(_written_grade(), Grade.manual_score.is_(None), Grade.auto_score.is_(None))
                )
            )
            found += [tuple(row) for row in gb.db.execute(query)]
    return sorted(found)


def settle(url: str, course_id: str, ids: Iterable[str], students: Iterable[str]) -> int:
    """After a regrade: a written answer the teacher has scored no longer needs grading.

    nbgrader's autograde flags every grade that has a manual score for review (right for
    a code cell, whose automatic score may have changed); a written answer has no
    automatic score, so its manual score stands and the flag is cleared. One UPDATE per 500
    learners; returns how many flags were cleared.
    """
    from nbgrader.api import Grade, Gradebook, SubmittedNotebook
    from sqlalchemy import and_, false, true, update

    ids = list(ids)
    cleared = 0
    with Gradebook(url, course_id) as gb:
        for chunk in _chunks(students):
            notebooks = _submitted(course_id, ids, chunk)().with_only_columns(SubmittedNotebook.id)
            statement = (
                update(Grade)
                .where(
                    and_(
                        Grade.notebook_id.in_(notebooks.scalar_subquery()),
                        Grade.manual_score.isnot(None),
                        Grade.needs_manual_grade == true(),
                        _written_grade(),
                    )
                )
                .values(needs_manual_grade=false())
                .execution_options(synchronize_session=False)
            )
            cleared += gb.db.execute(statement).rowcount or 0
        gb.db.commit()
    return cleared


def phrase(total: Waiting) -> str:
    """The summary's words: "3 written answer(s) wait for manual grading; 1 left
    unanswered (scored 0)"."""
    text = f"{total.answers} written answer(s) wait for manual grading"
    if total.blank:
        text += f"; {total.blank} left unanswered (scored 0)"
    return text

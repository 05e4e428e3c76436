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


def waiting(
    url: str, course_id: str, ids: Iterable[str], students: Iterable[str]
) -> dict[tuple[str, str, str], Waiting]:
    """``(learner, assignment, notebook) -> Waiting`` for every submitted notebook of the
    gradebook at ``url`` (a notebook whose written answers are all scored: ``Waiting()``)."""
    from nbgrader.api import Gradebook

    out: dict[tuple[str, str, str], Waiting] = {}
    with Gradebook(url, course_id) as gb:
        for student, assignment, notebook in _submitted_notebooks(gb, ids, students):
            found = Waiting()
            for grade in notebook.grades:
                if not is_written(grade) or grade.manual_score is not None:
                    continue
                if grade.auto_score is None:
                    found = found + Waiting(answers=1)
                else:  # unchanged since the release: nbgrader's 0
                    found = found + Waiting(blank=1)
            out[(student, assignment, notebook.name)] = found
    return out


def _submitted_notebooks(gb, ids: Iterable[str], students: Iterable[str]):
    """(learner, assignment, submitted notebook) of every submission in the gradebook."""
    from nbgrader.api import MissingEntry

    ids = list(ids)
    for student in students:
        for assignment in ids:
            try:
                submission = gb.find_submission(assignment, student)
            except MissingEntry:
                continue
            for notebook in submission.notebooks:
                yield student, assignment, notebook


def settle(url: str, course_id: str, ids: Iterable[str], students: Iterable[str]) -> int:
    """After a regrade: a written answer the teacher has scored no longer needs grading.

    nbgrader's autograde flags every grade that has a manual score for review (right for
    a code cell, whose automatic score may have changed); a written answer has no
    automatic score, so its manual score stands and the flag is cleared. Returns how many
    flags were cleared.
    """
    from nbgrader.api import Gradebook

    cleared = 0
    with Gradebook(url, course_id) as gb:
        for _student, _assignment, notebook in _submitted_notebooks(gb, ids, students):
            for grade in notebook.grades:
                if (
                    is_written(grade)
                    and grade.manual_score is not None
                    and grade.needs_manual_grade
                ):
                    grade.needs_manual_grade = False
                    cleared += 1
        if cleared:
            gb.db.commit()
    return cleared


def phrase(total: Waiting) -> str:
    """The summary's words: "3 written answer(s) wait for manual grading; 1 left
    unanswered (scored 0)"."""
    text = f"{total.answers} written answer(s) wait for manual grading"
    if total.blank:
        text += f"; {total.blank} left unanswered (scored 0)"
    return text

"""Late work: due dates, per-learner extensions and a penalty rule, through nbgrader.

Configured in ``nbgrader_config.py``:

.. code-block:: python

    c.ApplyDueDates.duedates = {"06_rope": "2026-12-08 23:59:00 +0900"}   # per assignment
    c.ApplyDueDates.extensions_file = "extensions.csv"   # in the course folder
    c.DailyPenalty.per_day = 0.10   # 10 % of the notebook's score per day or part of a day late
    c.DailyPenalty.cap = 0.50       # never more than 50 %
    c.AssignLatePenalties.plugin_class = "helpers.teacher.classroom.late.DailyPenalty"

``ApplyDueDates`` runs in autograde just before nbgrader's ``AssignLatePenalties``: it writes
the assignment's due date (both language editions share it: ``06_rope`` covers ``06_rope_ko``)
and the learner's extension into nbgrader's gradebook (``Assignment.duedate``,
``SubmittedAssignment.extension``) every time a notebook is graded, so a regrade recomputes
the penalty from the configuration and the file as they are now: an extension granted or
withdrawn, a due date moved or removed, all count (nbgrader resets the penalty on each grading;
nothing of an earlier grading is kept). nbgrader then computes how late the submission is
(its ``timestamp.txt`` against the due date plus the extension) and asks ``DailyPenalty``.

The extensions file is a CSV with the columns ``student_id, assignment, days`` (``days`` may
be fractional: 0.5 is twelve hours). The penalty is nbgrader's ``late_submission_penalty`` of
each notebook: ``helpers.teacher.classroom.lms`` subtracts it in the exports and the class report.

The penalty follows the score. nbgrader computes it once, at autograde, from the score the
notebook had then, so a written answer scored by hand afterwards (or extra credit) left the
penalty of the smaller score standing until the next regrade, which changed the grade.
``keep_penalties_current`` (called by ``nbgrader_config.py``) makes every process that loads the
course's configuration (the Formgrader, ``nbgrader``, the course's commands) recompute a
notebook's penalty in the same transaction as any change of its grades; ``recompute_penalties``
recomputes every penalty of a gradebook from the configuration as it is now (``feedback``,
``grades`` and ``report`` run it first). A grade is then a function of the files, the
configuration and the teacher's scores, whatever the order they came in.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
import os
from pathlib import Path

from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Dict, Float, Unicode

EXTENSION_COLUMNS = ("student_id", "assignment", "days")
DAY_S = 86400.0


def parse_due(text: str) -> dt.datetime:
    """A due date as nbgrader stores it (naive UTC) from ``2026-12-08 23:59:00 +0900``
    (without a time zone: UTC)."""
    from dateutil import parser

    try:
        when = parser.parse(str(text))
    except (ValueError, OverflowError, TypeError) as exc:
        raise ValueError(
            f"due date must be a date and time such as '2026-12-08 23:59:00 +0900', got {text!r}"
        ) from exc
    if when.tzinfo is not None:
        when = when.astimezone(dt.UTC).replace(tzinfo=None)
    return when


def read_extensions(path: Path) -> dict[tuple[str, str], float]:
    """``(learner, assignment) -> days`` from the extensions CSV (none when there is no file)."""
    path = Path(path)
    if not path.is_file():
        return {}
    out: dict[tuple[str, str], float] = {}
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        header = [h.strip() for h in reader.fieldnames or []]
        if any(c not in header for c in EXTENSION_COLUMNS):
            raise ValueError(
                f"extensions file {path} must have the columns {', '.join(EXTENSION_COLUMNS)}, "
                f"got {', '.join(header) or 'nothing'}"
            )
        for line, row in enumerate(reader, start=2):
            row = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
            try:
                days = float(row["days"])
            except ValueError:
                days = math.nan
            if not math.isfinite(days) or days < 0:
                raise ValueError(
                    f"extensions file {path} line {line}: days must be a number >= 0, "
                    f"got {row['days']!r}"
                )
            out[(row["student_id"], row["assignment"])] = days
    return out


def _base(assignment: str) -> str:
    from helpers.i18n import split_assignment

    return split_assignment(assignment)[0]


class ApplyDueDates(NbGraderPreprocessor):
    """Write the configured due date and the learner's extension into the gradebook."""

    duedates = Dict(
        {},
        help="assignment id (its English id covers every language edition) -> due date, "
        "e.g. {'06_rope': '2026-12-08 23:59:00 +0900'}; an assignment not named has none",
    ).tag(config=True)
    extensions_file = Unicode(
        "extensions.csv",
        help="CSV of per-learner extensions (student_id, assignment, days), relative to the "
        "course folder",
    ).tag(config=True)

    def _course(self) -> Path:
        root = self.config.get("CourseDirectory", {}).get("root") or os.getcwd()
        return Path(str(root))

    def due(self, assignment: str) -> dt.datetime | None:
        """The configured due date of an assignment (naive UTC), or None."""
        text = self.duedates.get(assignment, self.duedates.get(_base(assignment)))
        return None if text in (None, "") else parse_due(text)

    def extension_days(self, student: str, assignment: str) -> float:
        """The learner's extension of the assignment in days (0: none)."""
        path = Path(self.extensions_file)
        found = read_extensions(path if path.is_absolute() else self._course() / path)
        return found.get((student, assignment), found.get((student, _base(assignment)), 0.0))

    def apply(self, submission) -> None:
        """Write the configured due date and extension into a ``SubmittedAssignment``."""
        assignment, student = submission.assignment.name, submission.student.id
        due = self.due(assignment)
        if submission.assignment.duedate != due:
            submission.assignment.duedate = due
        days = self.extension_days(student, assignment)
        extension = dt.timedelta(days=days) if days else None
        if submission.extension != extension:
            submission.extension = extension

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        info = resources["nbgrader"]
        assignment, student = info["assignment"], info["student"]
        with Gradebook(info["db_url"]) as gb:
            submission = gb.find_submission(assignment, student)
            self.apply(submission)
            gb.db.commit()
            late = submission.total_seconds_late
        if late > 0:
            self.log.info("%s %s: %.0f s late", student, assignment, late)
        return nb, resources

    def preprocess_cell(self, cell, resources, index):
        return cell, resources


class DailyPenalty(LateSubmissionPlugin):
    """``per_day`` of the notebook's score for each day or part of a day late, at most ``cap``."""

    per_day = Float(0.10, help="share of the score taken per day (or part of a day) late").tag(
        config=True
    )
    cap = Float(0.50, help="the largest share of the score taken").tag(config=True)
    grace_minutes = Float(0.0, help="minutes late that cost nothing").tag(config=True)

    def share(self, seconds_late: float) -> float:
        """The share of the score taken for a submission ``seconds_late`` past its due date."""
        if not (0 <= self.per_day <= 1 and 0 <= self.cap <= 1):
            raise ValueError(
                f"per_day and cap must lie in [0, 1], got {self.per_day} and {self.cap}"
            )
        seconds = float(seconds_late) - 60.0 * self.grace_minutes
        if seconds <= 0:
            return 0.0
        return min(self.cap, self.per_day * math.ceil(seconds / DAY_S))

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float):
        share = self.share(total_seconds_late)
        self.log.info(
            "%s: %.0f s late, penalty %.0f %% of %s",
            student_id,
            total_seconds_late,
            100 * share,
            score,
        )
        return float(score) * share


# --------------------------------------------------------------------------- the penalty follows
_SCORED = ("manual_score", "extra_credit", "auto_score")
_current: dict = {}  # the configuration keep_penalties_current was given


def penalty_of(config, submission, notebook) -> float | None:
    """The late penalty of a ``SubmittedNotebook`` for its score now: the configured plugin
    (``AssignLatePenalties.plugin_class``) asked as nbgrader asks it, bounded the same way
    (at least 0, at most the score); None when the submission is not late."""
    from nbgrader.preprocessors import AssignLatePenalties

    late = submission.total_seconds_late
    if late <= 0:
        return None
    assign = AssignLatePenalties(config=config)
    assign.init_plugin()
    score = float(notebook.score or 0.0)
    penalty = assign.plugin_inst.late_submission_penalty(submission.student.id, score, late)
    if penalty is None:
        return None
    return min(max(float(penalty), 0.0), score)


def settle(session, notebooks, config, dates: bool = True) -> int:
    """Set each notebook's penalty for its score now (first, with ``dates``, the configured due
    dates and extensions written to the notebooks' submissions); returns how many penalties
    changed."""
    changed = 0
    if dates:
        apply = ApplyDueDates(config=config)
        for submission in {nb.assignment.id: nb.assignment for nb in notebooks}.values():
            apply.apply(submission)
    session.flush()
    for notebook in notebooks:
        session.expire(notebook, ["score"])
        penalty = penalty_of(config, notebook.assignment, notebook)
        if (notebook.late_submission_penalty or None) != penalty:
            notebook.late_submission_penalty = penalty
            changed += 1
    return changed


def _before_commit(session) -> None:
    """A transaction that changes a grade recomputes its notebook's penalty before it ends."""
    config = _current.get("config")
    if config is None:
        return
    from nbgrader.api import Grade
    from sqlalchemy import inspect

    changed = [
        obj
        for obj in (*session.new, *session.dirty)
        if isinstance(obj, Grade)
        and (
            obj in session.new or any(inspect(obj).attrs[a].history.has_changes() for a in _SCORED)
        )
    ]
    if not changed:
        return
    session.flush()  # each grade's notebook as it is now
    touched = {g.notebook.id: g.notebook for g in changed if g.notebook is not None}
    if touched:  # the due dates as the last grading wrote them (ApplyDueDates)
        settle(session, list(touched.values()), config, dates=False)


def keep_penalties_current(config) -> None:
    """From now on, in this process, a change of any grade (autograde, a score given by hand,
    extra credit: the Formgrader's API commits each) recomputes its notebook's late penalty in
    the same commit, from ``config`` (the course's ``nbgrader_config.py``)."""
    from sqlalchemy import event
    from sqlalchemy.orm import Session

    _current["config"] = config
    if not event.contains(Session, "before_commit", _before_commit):
        event.listen(Session, "before_commit", _before_commit)


def recompute_penalties(course: Path, db: str | None = None) -> int:
    """Every late penalty of the course's gradebook recomputed from the configuration now and
    the scores now (due dates, extensions, per_day and cap as configured); returns how many
    changed. Nothing to do without a gradebook."""
    from nbgrader.api import Gradebook, SubmittedAssignment, SubmittedNotebook

    from helpers.teacher.classroom.course import course_id, db_url, load_config, venv_on_path

    if not db and not (Path(course) / "gradebook.db").exists():
        return 0
    venv_on_path()
    config = load_config(Path(course))
    with Gradebook(db_url(Path(course), db), course_id(Path(course))) as gb:
        notebooks = (
            gb.db.query(SubmittedNotebook)
            .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
            .all()
        )
        changed = settle(gb.db, notebooks, config)
        gb.db.commit()
    return changed

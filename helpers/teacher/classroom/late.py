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

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        info = resources["nbgrader"]
        assignment, student = info["assignment"], info["student"]
        with Gradebook(info["db_url"]) as gb:
            record = gb.find_assignment(assignment)
            record.duedate = self.due(assignment)
            submission = gb.find_submission(assignment, student)
            days = self.extension_days(student, assignment)
            submission.extension = dt.timedelta(days=days) if days else None
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

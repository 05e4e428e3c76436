"""The class report of an autograde run: the summary it prints and ``autograde_report.csv``.

``ClassReport.summary`` is what ``python -m helpers autograde`` prints at the end (its counts
are the progress bar's); ``ClassReport.write_csv`` writes one row per (learner, assignment,
notebook) with its status, reason, score, the written answers that wait for the teacher,
seed and replay command (``REPORT_COLUMNS``);
``read_report`` reads such a file back.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from pathlib import Path

from helpers.teacher import sandbox
from helpers.teacher.classroom import written
from helpers.teacher.classroom.submissions import NOT_SUBMITTED, STATUSES, Task
from helpers.teacher.files import write_csv
from helpers.teacher.untrusted import printable

REPORT_NAME = "autograde_report.csv"  # in the course folder


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
    # (learner, assignment, notebook) -> its written answers that wait for the teacher
    waiting: dict[tuple[str, str, str], written.Waiting] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # assignments left out, and why
    backup: Path | None = None  # where what the regrade replaced was copied
    # seconds of each step: registering, grading, bookkeeping (settle, scores, counts, CSV)
    phases: dict[str, float] = field(default_factory=dict)

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
                lines += [f"{where}: {nb}: crashed: {why}" for nb, why in t.crashes.items()]
        return lines

    def counted(self) -> set[tuple[str, str, str]]:
        """The (learner, assignment, notebook) whose written answers are counted: those
        graded, and those unreadable (listed for the teacher: ``grading.list_unreadable``)."""
        return {
            (t.student, t.assignment, found.notebook)
            for t in self.tasks
            for found in t.outcome()
            if found.status == "unreadable" or (t.ok and found.status not in ("missing",))
        }

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
        counted = self.counted()
        total = sum((w for key, w in self.waiting.items() if key in counted), written.Waiting())
        lines.append(f"{written.phrase(total)} (the Formgrader: {formgrader_place()})")
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
        if self.backup is not None:
            lines.append(f"the gradebook and the graded notebooks replaced: {self.backup}")
        lines.append(self.counts())
        # a learner's file name or nbgrader's error quoting one: never a line of its own,
        # a terminal escape or a byte the terminal's encoding refuses
        return "\n".join(printable(line) for line in lines)

    def counts(self) -> str:
        """The last line: how many graded, scored 0 ungraded, not submitted, and skipped."""
        submitted = self.submitted()
        ok = sum(t.ok for t in submitted)
        said = [
            f"{ok} graded",
            f"{len(submitted) - ok} scored 0 ungraded",
            f"{len(self.tasks) - len(submitted)} not submitted",
        ]
        skipped = f"{len(self.skipped)} assignment(s) skipped"
        if self.skipped:
            skipped += f": {'; '.join(self.skipped)}"
        return printable(f"autograde: {', '.join(said)}; {skipped}")

    def rows(self) -> list[dict]:
        """One row per (learner, assignment, notebook) of ``REPORT_COLUMNS``."""
        rows, counted = [], self.counted()
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
                        "written_waiting": self.waiting.get(key, written.Waiting()).answers
                        if key in counted
                        else "",
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
        write_csv(path, REPORT_COLUMNS, rows)  # whole or not at all, no formula cell
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
    "written_waiting",
    "seed",
    "replay",
]


def read_report(path: Path) -> list[dict]:
    """The rows of an ``autograde_report.csv`` (none when there is no such file)."""
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8", errors="backslashreplace") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:  # a report written before notebooks had rows of their own
        row.setdefault("notebook", row.get("assignment", ""))
    return rows


def formgrader_place() -> str:
    """Where the teacher opens the Formgrader: on a hub, the page of their own server
    (JupyterHub gives each server and its terminals ``JUPYTERHUB_SERVICE_PREFIX``, and
    ``JUPYTERHUB_PUBLIC_URL`` or ``JUPYTERHUB_HOST`` when the hub knows its address);
    elsewhere ``make grade-ui``."""
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX")
    if not prefix:
        return "make grade-ui"
    host = os.environ.get("JUPYTERHUB_PUBLIC_URL") or os.environ.get("JUPYTERHUB_HOST", "")
    return f"{host.rstrip('/')}{prefix.rstrip('/')}/formgrader"

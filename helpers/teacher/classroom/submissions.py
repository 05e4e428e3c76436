"""What came in: each submitted notebook's status before and after grading.

``check_submission`` says, before grading, what is wrong with a learner's submitted folder
(a notebook missing, unreadable, or with cells deleted). A ``Task`` is one learner's
assignment to grade and what came of it; ``Task.outcome`` gives each notebook's status
(``STATUSES``: graded, repaired, timed out, crashed, unreadable, missing, failed) and why.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

from helpers.teacher.classroom.course import source_notebooks
from helpers.teacher.untrusted import printable, shown


def _graded_cells(nb) -> list[str]:
    return [
        c.metadata["nbgrader"]["grade_id"]
        for c in nb.cells
        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        and (c.metadata["nbgrader"].get("grade") or c.metadata["nbgrader"].get("solution"))
    ]


# How a submitted notebook came through autograde, from the least to the most serious.
STATUSES = ("graded", "repaired", "timed out", "crashed", "unreadable", "missing", "failed")
NOT_SUBMITTED = "not submitted"


@dataclass
class Finding:
    """One submitted notebook's status (one of ``STATUSES``) and why, in plain words."""

    notebook: str  # its name without .ipynb, as in source/
    status: str
    reason: str = ""
    found: list[str] = field(default_factory=list)  # other notebooks where it is missing
    detail: str = ""  # the parse error of an unreadable file


def check_submission(course: Path, student: str, assignment: str) -> list[Finding]:
    """What is wrong with each notebook of a learner's submitted folder, before grading:
    ``missing``, ``unreadable`` or ``repaired`` (deleted cells nbgrader puts back)."""
    import nbformat

    folder = course / "submitted" / student / assignment
    if not folder.is_dir():
        return [
            Finding(nb, "missing", NOT_SUBMITTED) for nb in source_notebooks(course, assignment)
        ]
    findings = []
    for source in sorted((course / "source" / assignment).glob("*.ipynb")):
        path = folder / source.name
        if not path.exists():
            names = set(source_notebooks(course, assignment))
            # a learner's names, shown escaped: any byte, none of them UTF-8 or printable
            others = sorted(shown(p.name) for p in folder.glob("*.ipynb") if p.stem not in names)
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
            detail = printable(f"{type(exc).__name__}: {first}")
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
    crashes: dict[str, str] = field(default_factory=dict)  # notebook -> what ended grading

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
            elif nb in self.crashes:
                out.append(Finding(nb, "crashed", "; ".join([self.crashes[nb], *reasons])))
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


# The metadata key of an autograded notebook that stands in for an unreadable submission.
STAND_IN_KEY = "pe_unreadable_submission"


def stand_in(course: Path, student: str, assignment: str, found: Finding) -> Path:
    """Write ``autograded/<learner>/<assignment>/<notebook>.ipynb`` for a submitted notebook
    that could not be read: the release notebook, headed by a cell that says so, so that the
    Formgrader lists the submission (it lists notebooks with an autograded file) and the
    teacher can grade its written answers or give points by hand. Returns its path."""
    import shutil

    import nbformat

    release = course / "notebooks" / assignment / f"{found.notebook}.ipynb"
    out = course / "autograded" / student / assignment / f"{found.notebook}.ipynb"
    nb = nbformat.read(release, as_version=4)
    note = nbformat.v4.new_markdown_cell(
        f"**The submitted file could not be read as a notebook** ({found.detail}). It scored "
        "0 for every automatic check. The cells below are the release version, not the "
        "learner's work: grade a written answer here only from what the learner sent another "
        "way, or ask them to submit again."
    )
    nb.cells.insert(0, note)
    nb.metadata[STAND_IN_KEY] = found.detail
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    stamp = course / "submitted" / student / assignment / "timestamp.txt"
    if stamp.is_file():
        shutil.copy2(stamp, out.parent / "timestamp.txt")
    return out


def is_stand_in(path: Path) -> bool:
    """Whether an autograded notebook is ``stand_in``'s, not a graded submission."""
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            return STAND_IN_KEY in json.load(fh).get("metadata", {})
    except (OSError, ValueError, AttributeError):
        return False

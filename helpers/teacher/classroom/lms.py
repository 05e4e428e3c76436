"""Grades where schools keep them: Canvas's and Moodle's gradebook imports, and a plain CSV.

``python -m helpers grades --format canvas|moodle|csv --roster roster.csv`` reads the scores
from nbgrader's gradebook (``gradebook_entries``) and the learners' names, emails, LMS ids and
sections from the roster (``read_roster``), then writes one of:

``canvas``  Canvas's gradebook import: ``Student, ID, SIS User ID, SIS Login ID, Section``,
            one column per assignment and a ``Points Possible`` row (``grades-canvas.csv``);
``moodle``  Moodle's grade import: ``Email address`` (or ``ID number``), then one column per
            grade item (``grades-moodle.csv``);
``csv``     every learner of the gradebook with name and email where the roster has them,
            the score, language, status and written answers waiting of each assignment, the
            total and its maximum (``grades-plain.csv``).

The LMS files hold scores only (an importer would take any other column for an assignment);
the language, status and answers waiting of each learner go to a second file beside them
(``grades-canvas-details.csv``). A score is the learner's better language edition of the
assignment less its late penalty, summed unrounded over the notebooks and rounded once, to
two decimals, when written; totals come from the unrounded scores. A learner who did not
submit is blank in the LMS files (the LMS keeps whatever it has) unless ``missing_as_zero``.

An assignment's column is named by its id; ``c.LmsExport.columns = {"06_rope": "RoPE (1234)"}``
in ``nbgrader_config.py`` renames it (Canvas matches ``Name (assignment id)`` to an existing
assignment, Moodle lets the teacher map any column to a grade item).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from helpers.teacher.classroom import written
from helpers.teacher.classroom.course import course_id, db_url, load_config
from helpers.teacher.classroom.grades import notebook_rows, statuses
from helpers.teacher.classroom.steps import graded_ids
from helpers.teacher.files import write_csv

FORMATS = ("canvas", "moodle", "csv")
DEFAULT_NAMES = {
    "canvas": "grades-canvas.csv",
    "moodle": "grades-moodle.csv",
    "csv": "grades-plain.csv",
}
ROSTER_COLUMNS = ("student_id", "name", "email", "lms_id", "section")
CANVAS_HEAD = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "Points Possible"
MOODLE_IDS = {"email": "Email address", "idnumber": "ID number"}


@dataclass
class Learner:
    """One roster row: the nbgrader id and how the school's systems know the learner."""

    student_id: str
    name: str = ""
    email: str = ""
    lms_id: str = ""
    section: str = ""
    sis_id: str = ""  # Canvas's SIS User ID (optional roster column; default: student_id)
    login: str = ""  # Canvas's SIS Login ID (optional roster column; default: email)


@dataclass
class Entry:
    """One learner's grades as the gradebook has them, per assignment (base id, any language).

    ``scores[base]`` is None when nothing was submitted; scores are unrounded and already less
    the late penalty (``penalties[base]``)."""

    student_id: str
    scores: dict[str, float | None] = field(default_factory=dict)
    penalties: dict[str, float] = field(default_factory=dict)
    languages: dict[str, str] = field(default_factory=dict)
    statuses: dict[str, str] = field(default_factory=dict)
    waiting: dict[str, int] = field(default_factory=dict)  # answers waiting for manual grading

    def total(self) -> float:
        """The sum of the unrounded scores (not submitted: 0)."""
        return sum(s for s in self.scores.values() if s is not None)


@dataclass
class Gradebook:
    """What every format is written from: the assignments, their maxima and every learner."""

    bases: list[str]
    maxima: dict[str, float]
    entries: dict[str, Entry]


@dataclass
class Written:
    """What ``export`` wrote and which learners did not match between roster and gradebook."""

    paths: list[Path]
    rows: int
    roster_only: list[str]  # in the roster, not in the gradebook
    gradebook_only: list[str]  # in the gradebook, not in the roster
    left_out: list[str]  # learners an LMS file could not name (no LMS id / email)

    def lines(self) -> list[str]:
        """What the command prints."""
        out = [f"wrote {self.rows} learner(s) to {self.paths[0]}"]
        out += [f"language, status and answers waiting: {p}" for p in self.paths[1:]]
        if self.roster_only:
            out.append(
                f"{len(self.roster_only)} roster learner(s) without a gradebook entry "
                f"(nothing submitted or graded): {', '.join(self.roster_only)}"
            )
        if self.gradebook_only:
            out.append(
                f"{len(self.gradebook_only)} gradebook learner(s) without a roster row: "
                f"{', '.join(self.gradebook_only)}"
            )
        if self.left_out:
            out.append(
                f"{len(self.left_out)} learner(s) left out of the LMS file (no id the LMS "
                f"knows in the roster): {', '.join(self.left_out)}"
            )
        return out


ROSTER_NAME = "roster.csv"


# Korean surnames of two syllables (the rest are one syllable)
KOREAN_SURNAMES_2 = ("남궁", "독고", "동방", "사공", "서문", "선우", "제갈", "황보")


def _hangul(text: str) -> bool:
    return bool(text) and all("\uac00" <= ch <= "\ud7a3" or ch == " " for ch in text)


def split_name(name: str) -> tuple[str, str]:
    """``(first, last)`` of a roster name, as nbgrader's gradebook keeps them (the Formgrader
    shows "last, first"):

    - "Lovelace, Ada" (last name first, with a comma): Ada, Lovelace;
    - "Ada Lovelace": the last word is the last name (Ada, Lovelace);
    - a Korean name, family name first: "김민준" is 민준, 김 (a two-syllable surname such as
      남궁 is kept whole), "김 민준" the same;
    - a name of one other word is the last name alone."""
    name = " ".join(name.split())
    if "," in name:
        last, first = (part.strip() for part in name.split(",", 1))
        return first, last
    words = name.split()
    if _hangul(name):
        if len(words) > 1:
            return " ".join(words[1:]), words[0]
        cut = 2 if len(name) >= 3 and name[:2] in KOREAN_SURNAMES_2 else 1
        return (name[cut:], name[:cut]) if len(name) > cut else ("", name)
    if len(words) < 2:
        return "", name
    return " ".join(words[:-1]), words[-1]


def roster_names(course: Path) -> dict[str, dict[str, str]]:
    """``student_id -> {first_name, last_name, email}`` (the gradebook's fields) from the
    course's ``roster.csv`` (empty without one: a roster that cannot be read names nobody;
    ``grades --roster`` says why)."""
    path = Path(course) / ROSTER_NAME
    if not path.is_file():
        return {}
    try:
        roster = read_roster(path)
    except (ValueError, OSError):
        return {}
    out = {}
    for sid, who in roster.items():
        if who.name.strip():
            first, last = split_name(who.name)
            out[sid] = {"first_name": first, "last_name": last}
            if who.email.strip():
                out[sid]["email"] = who.email.strip()
    return out


def read_roster(path: Path) -> dict[str, Learner]:
    """The roster CSV: a header with ``student_id, name, email, lms_id, section`` (and
    optionally ``sis_id``, ``login``), one row per learner."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"roster must be a CSV file, got {str(path)!r} (no such file)")
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        header = [h.strip() for h in reader.fieldnames or []]
        missing = [c for c in ROSTER_COLUMNS if c not in header]
        if missing:
            raise ValueError(
                f"roster {path} lacks the column(s) {', '.join(missing)}: its header must have "
                f"{', '.join(ROSTER_COLUMNS)} (and optionally sis_id, login), got "
                f"{', '.join(header) or 'nothing'}"
            )
        roster: dict[str, Learner] = {}
        for line, row in enumerate(reader, start=2):
            row = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
            sid = row["student_id"]
            if not sid:
                raise ValueError(f"roster {path} line {line}: student_id is empty")
            if sid in roster:
                raise ValueError(f"roster {path} line {line}: student_id {sid!r} twice")
            roster[sid] = Learner(**{k: row.get(k, "") for k in Learner.__dataclass_fields__})
    return roster


def column_names(course: Path, bases: list[str]) -> dict[str, str]:
    """Each assignment's column name: ``c.LmsExport.columns`` of the config, else its id."""
    cfg = load_config(course)
    named = dict(cfg.LmsExport.columns) if "columns" in cfg.LmsExport else {}
    return {b: str(named.get(b, b)) for b in bases}


def gradebook_entries(course: Path, ids=None, db: str | None = None) -> Gradebook:
    """Every learner of the gradebook with their unrounded scores, late penalties, languages,
    statuses and answers waiting, per assignment (its language editions as one)."""
    from nbgrader.api import Gradebook as NbGradebook

    from helpers.i18n import split_assignment

    if not db and not (course / "gradebook.db").exists():
        raise ValueError(f"course has no gradebook.db yet (run autograde first): {course}")
    from helpers.teacher.classroom.late import recompute_penalties

    ids = graded_ids(course, ids, db)  # the editions the class took; none is an error
    recompute_penalties(course, db)  # for the scores as they are now
    bases = list(dict.fromkeys(split_assignment(i)[0] for i in ids))
    raw: dict[tuple[str, str], tuple[float, float, int]] = {}  # score, penalty, waiting
    maxima: dict[str, float] = {}
    url = db_url(course, db)
    with NbGradebook(url, course_id(course)) as gb:
        students = sorted(s.id for s in gb.students)
    rows, notebook_maxima = notebook_rows(course, ids, students, db)
    waits = written.waiting(url, course_id(course), ids, students)
    for assignment in ids:
        top = sum(v for (a, _nb), v in notebook_maxima.items() if a == assignment)
        maxima.setdefault(split_assignment(assignment)[0], float(top))
    for (student, assignment, notebook), (got, late) in rows.items():
        score, penalty, waiting = raw.get((student, assignment), (0.0, 0.0, 0))
        graded = course / "autograded" / student / assignment / f"{notebook}.ipynb"
        if graded.exists():
            score, penalty = score + got, penalty + late
        waiting += waits.get((student, assignment, notebook), written.Waiting()).answers
        raw[(student, assignment)] = (score, penalty, waiting)
    status = statuses(course, students, ids)
    entries = {}
    for student in students:
        entry = Entry(student)
        for base in bases:
            variants = [a for a in ids if split_assignment(a)[0] == base]
            taken = [a for a in variants if (student, a) in raw]
            best = max(
                taken, key=lambda a: raw[(student, a)][0] - raw[(student, a)][1], default=None
            )
            if best is None:
                entry.scores[base], entry.penalties[base], entry.waiting[base] = None, 0.0, 0
                entry.languages[base] = ""
                shown = next(
                    (a for a in variants if status[(student, a)] != "missing"), variants[0]
                )
            else:
                score, penalty, waiting = raw[(student, best)]
                entry.scores[base] = max(score - penalty, 0.0)
                entry.penalties[base], entry.waiting[base] = penalty, waiting
                entry.languages[base] = split_assignment(best)[1]
                shown = best
            entry.statuses[base] = status[(student, shown)]
        entries[student] = entry
    return Gradebook(bases, maxima, entries)


def points(value: float | None, missing_as_zero: bool = False) -> str:
    """A score as written: two decimals, rounded once; blank when not submitted."""
    if value is None:
        return "0.00" if missing_as_zero else ""
    return f"{round(value + 0.0, 2):.2f}"


def _write(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    return write_csv(path, header, rows)  # whole or not at all, no formula cell


def details_path(out: Path) -> Path:
    """Where the language, status and answers waiting of an LMS file go (beside it)."""
    return out.with_name(f"{out.stem}-details{out.suffix or '.csv'}")


def _detail_rows(book: Gradebook, students: list[str], roster: dict[str, Learner]) -> tuple:
    header = ["student_id", "name", "email"]
    for base in book.bases:
        header += [f"{base} language", f"{base} status", f"{base} late penalty"]
        header += [f"{base} waiting for manual grading"]
    rows = []
    for sid in students:
        entry, who = book.entries.get(sid) or Entry(sid), roster.get(sid) or Learner(sid)
        row = [sid, who.name, who.email]
        for base in book.bases:
            row += [entry.languages.get(base, ""), entry.statuses.get(base, "not in gradebook")]
            row += [points(entry.penalties.get(base, 0.0)), str(entry.waiting.get(base, 0))]
        rows.append(row)
    return header, rows


def export(
    course: Path,
    fmt: str,
    out: Path | None = None,
    roster_path: Path | None = None,
    ids=None,
    db: str | None = None,
    missing_as_zero: bool = False,
    moodle_id: str = "email",
) -> Written:
    """Write the grades in ``fmt`` (one of ``FORMATS``) to ``out`` (default
    ``DEFAULT_NAMES[fmt]`` in the course); the LMS formats also write ``details_path(out)``."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if moodle_id not in MOODLE_IDS:
        raise ValueError(f"moodle id must be one of {', '.join(MOODLE_IDS)}, got {moodle_id!r}")
    if fmt != "csv" and roster_path is None:
        raise ValueError(
            f"--format {fmt} needs --roster roster.csv (columns {', '.join(ROSTER_COLUMNS)}): "
            f"the LMS knows learners by its own ids"
        )
    out = Path(out) if out is not None else course / DEFAULT_NAMES[fmt]
    roster = read_roster(roster_path) if roster_path is not None else {}
    book = gradebook_entries(course, ids, db)
    names = column_names(course, book.bases)
    in_book = sorted(book.entries)
    roster_only = [s for s in roster if s not in book.entries]
    gradebook_only = [s for s in in_book if roster and s not in roster]
    left_out: list[str] = []
    if fmt == "csv":
        students = in_book + [s for s in roster if s not in book.entries]
        header = ["student_id", "name", "email", "section"]
        for base in book.bases:
            header += [names[base], f"{base} language", f"{base} status"]
            header += [f"{base} late penalty", f"{base} waiting for manual grading"]
        header += ["total", "max_total"]
        rows = []
        for sid in students:
            entry, who = book.entries.get(sid) or Entry(sid), roster.get(sid) or Learner(sid)
            row = [sid, who.name, who.email, who.section]
            for base in book.bases:
                row += [points(entry.scores.get(base), missing_as_zero)]
                row += [entry.languages.get(base, ""), entry.statuses.get(base, "not in gradebook")]
                row += [points(entry.penalties.get(base, 0.0)), str(entry.waiting.get(base, 0))]
            row += [points(entry.total()), points(sum(book.maxima.values()))]
            rows.append(row)
        return Written([_write(out, header, rows)], len(rows), roster_only, gradebook_only, [])
    rows = []
    kept = []
    for sid, who in roster.items():
        entry = book.entries.get(sid) or Entry(sid)
        scores = [points(entry.scores.get(b), missing_as_zero) for b in book.bases]
        if fmt == "canvas":
            if not who.lms_id:
                left_out.append(sid)
                continue
            head = [who.name, who.lms_id, who.sis_id or sid, who.login or who.email, who.section]
        else:
            key = who.email if moodle_id == "email" else who.lms_id
            if not key:
                left_out.append(sid)
                continue
            head = [key]
        rows.append(head + scores)
        kept.append(sid)
    if fmt == "canvas":
        header = [*CANVAS_HEAD, *(names[b] for b in book.bases)]
        possible = [POINTS_POSSIBLE, "", "", "", "", *(points(book.maxima[b]) for b in book.bases)]
        rows.insert(0, possible)
    else:
        header = [MOODLE_IDS[moodle_id], *(names[b] for b in book.bases)]
    written = [_write(out, header, rows)]
    detail_header, detail_rows = _detail_rows(book, kept, roster)
    written.append(_write(details_path(out), detail_header, detail_rows))
    return Written(written, len(kept), roster_only, gradebook_only, left_out)


def add_arguments(parser) -> None:
    """The options of ``python -m helpers grades`` for the LMS formats."""
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="canvas or moodle: the LMS's grade import; csv: names, emails, status and "
        f"totals (default files: {', '.join(DEFAULT_NAMES.values())}; without --format: "
        "the course's grades.csv)",
    )
    parser.add_argument(
        "--roster",
        type=Path,
        default=None,
        help=f"CSV with the columns {', '.join(ROSTER_COLUMNS)} (optional: sis_id, login)",
    )
    parser.add_argument(
        "--missing-as-zero",
        action="store_true",
        help="a learner who did not submit scores 0 (default: blank, the LMS keeps its value)",
    )
    parser.add_argument(
        "--moodle-id",
        choices=tuple(MOODLE_IDS),
        default="email",
        help="how Moodle knows the learner: email, or idnumber (the roster's lms_id)",
    )


def run(course: Path, args) -> Written:
    """``grades --format ...`` from parsed arguments (relative paths: from the current folder)."""
    out = None if args.out is None else Path.cwd() / args.out
    roster = None if args.roster is None else Path.cwd() / args.roster
    return export(
        course, args.format, out, roster, args.ids, args.db, args.missing_as_zero, args.moodle_id
    )

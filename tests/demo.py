"""A first look for teachers: a sample class through the whole cycle, left on disk to open.

``make demo`` (``python -m tests.demo [--out demo]``) builds a scratch course folder with two
assignments, the course's ``06_rope`` and the grader's small ``fx_grading``
(tests/fixtures/grading_course.py), then runs the teacher's cycle on it with the same
commands as a real class: ``release``, each learner's ``fetch`` and ``submit`` (nbgrader's
own exchange, in this process), ``collect``, ``autograde``, ``feedback`` and ``grades``.

The class (built from the rehearsal's known answers, tests/rehearsal.py):

- ``correct``: every answer right;
- ``blank``: the released notebooks submitted as they are;
- ``mistake01`` ...: each known mistake of fx_grading, one learner each (its message names
  it), and in 06_rope one function left as a stub or returning wrong values;
- ``cheater``: fx_grading answers that patch numpy, ``abs`` and ``math.isclose`` and return
  zeros, or an object equal to anything (tests/fixtures/grading_course.py's tamper notebooks).

It is built from the test suite's rehearsal kit, so it lives beside it in ``tests/``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import nbformat

from helpers.teacher.classroom import lms
from helpers.teacher.classroom import report as class_report
from helpers.teacher.classroom.course import copy_course, course_id
from helpers.teacher.classroom.grades import export_grades
from helpers.teacher.classroom.grading import autograde
from helpers.teacher.classroom.steps import collect, feedback, release
from helpers.teacher.classroom.summary import REPORT_NAME
from tests import classroom_kit as kit
from tests import rehearsal
from tests.fixtures import grading_course as gc

REPO = Path(__file__).resolve().parents[1]
REAL = "06_rope"
REAL_KO = "06_rope_ko"  # the Korean edition, taken by one learner
KOREAN = "korean"
FX = gc.ASSIGNMENT
CHEATS = ("patch_numpy_builtins_math_in_answers", "always_equal_object")


def _learners() -> dict[str, dict]:
    """learner -> what they submit: fx_grading's answers (or a tamper) and 06_rope's plan."""
    plan: dict[str, dict] = {
        "correct": {"fx": ("answers", dict(gc.SOLUTIONS)), "rope": ([], "stub")},
        "blank": {"fx": ("blank", None), "rope": ("blank", "stub")},
    }
    for i, (fn, _name, body) in enumerate(gc.MISTAKES, start=1):
        how = "stub" if i % 2 else "wrong"
        plan[f"mistake{i:02d}"] = {
            "fx": ("answers", {**gc.SOLUTIONS, fn: body}),
            "rope": (i, how),
        }
    # the Korean edition, one function wrong and one not written yet
    plan[KOREAN] = {"fx": ("answers", dict(gc.SOLUTIONS)), "rope": ((3, 5), "ko")}
    plan["cheater"] = {"fx": ("tamper", CHEATS[0]), "rope": ([], "stub")}
    plan["cheater2"] = {"fx": ("tamper", CHEATS[1]), "rope": ([], "stub")}
    return plan


def build_course(out: Path) -> Path:
    """The scratch course: the repository's config, 06_rope and fx_grading."""
    if out.exists():
        shutil.rmtree(out)
    course = copy_course(REPO, out / "course", [REAL, REAL_KO])
    kit.one_account_plays_every_learner(course)  # the demo's learners are no accounts
    src = course / "source" / FX
    src.mkdir(parents=True)
    nbformat.write(gc.source_notebook(), src / f"{FX}.ipynb")
    gc.nbgrader(course, "generate_assignment", FX, "--force", "--log-level=WARN")
    return course


def _exchange_app(kind: str, course_id: str, assignment: str, student: str, home: Path, ex: Path):
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default import ExchangeFetchAssignment, ExchangeSubmit
    from traitlets.config import Config

    cfg = Config()
    cfg.CourseDirectory.course_id = course_id
    cfg.CourseDirectory.assignment_id = assignment
    cfg.CourseDirectory.student_id = student
    cfg.Exchange.root = str(ex)
    cfg.Exchange.cache = str(home / ".cache")
    cfg.Exchange.assignment_dir = str(home)
    cls = ExchangeFetchAssignment if kind == "fetch" else ExchangeSubmit
    return cls(
        coursedir=CourseDirectory(config=cfg), authenticator=Authenticator(config=cfg), config=cfg
    )


def _fill(path: Path, course: Path, assignment: str, what, index: int) -> None:
    """Write the learner's answers into the fetched notebook ``path``."""
    if assignment == FX:
        kind, value = what
        nb = nbformat.read(path, as_version=4)
        if kind == "answers":
            nb = gc.edit(nb, answers=value)
        elif kind == "tamper":
            nb = gc.tamper_notebook(nb, value)
        nbformat.write(nb, path)
        return
    broken, how = what
    if broken == "blank":
        return
    source = course / "source" / assignment / f"{assignment}.ipynb"
    answers = rehearsal.answer_ids(source)
    if isinstance(broken, int):
        broken = [answers[broken % len(answers)]]
    if how == "ko":  # the first one wrong, the second left as the stub
        ways = dict(zip((answers[i % len(answers)] for i in broken), ("wrong", "stub")))
        solutions = rehearsal.solution_cells(nbformat.read(source, as_version=4))
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            gid = meta.get("grade_id")
            if meta.get("solution") and gid in solutions:
                answer = solutions[gid]
                cell.source = rehearsal._break(answer, ways[gid]) if gid in ways else answer
        nbformat.write(nb, path)
        return
    rehearsal.make_submission(path, source, path, broken=broken, how=how)


def learners_submit(course: Path, exchange: Path, homes: Path) -> list[str]:
    """Each learner fetches both assignments, answers and submits (nbgrader's exchange)."""
    cid = course_id(course)
    plan = _learners()
    for index, (student, what) in enumerate(plan.items()):
        home = homes / student
        home.mkdir(parents=True, exist_ok=True)
        real = REAL_KO if student == KOREAN else REAL
        for assignment, key in ((real, "rope"), (FX, "fx")):
            _exchange_app("fetch", cid, assignment, student, home, exchange).start()
            path = home / assignment / f"{assignment}.ipynb"
            _fill(path, course, assignment, what[key], index)
            _exchange_app("submit", cid, assignment, student, home, exchange).start()
    return list(plan)


# The school's roster of the class: the names, emails, LMS ids and sections the Canvas and
# Moodle files carry (one name with a comma, one in Hangul, one with quotes).
NAMES = {
    "correct": "Lovelace, Ada",
    "blank": "김민준",
    "mistake01": 'Grace "Amazing" Hopper',
}


def write_roster(course: Path, students: list[str]) -> Path:
    """``roster.csv`` of the class (``helpers.teacher.lms.ROSTER_COLUMNS``)."""
    import csv

    path = course / "roster.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["student_id", "name", "email", "lms_id", "section"])
        for index, student in enumerate(students, start=1):
            name = NAMES.get(student, f"Learner {student.capitalize()}")
            section = "Section A" if index % 2 else "Section B"
            writer.writerow([student, name, f"{student}@school.example", 40000 + index, section])
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("demo"), help="scratch folder")
    parser.add_argument("--jobs", type=int, default=None, help="parallel learners")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    start = time.perf_counter()

    def step(text: str) -> None:
        print(f"[{time.perf_counter() - start:5.1f} s] {text}", flush=True)

    course = build_course(out)
    exchange, homes = out / "exchange", out / "learners"
    step(f"course folder {course} (06_rope and fx_grading)")
    release(course, [REAL, REAL_KO, FX], exchange)
    step("released")
    students = learners_submit(course, exchange, homes)
    step(f"{len(students)} learners fetched, answered and submitted: {', '.join(students)}")
    collect(course, [REAL, REAL_KO, FX], exchange)
    step("collected")
    report = autograde(course, [REAL, REAL_KO, FX], jobs=args.jobs, progress=False)
    step("autograded")
    print(report.summary())
    feedback(course, [REAL, REAL_KO, FX], exchange)
    step("feedback generated and released")
    rows = export_grades(course, course / "grades.csv")
    step(f"grades of {len(rows)} learners written")
    roster = write_roster(course, students)
    lms_files = {fmt: lms.export(course, fmt, roster_path=roster) for fmt in lms.FORMATS}
    step("Canvas, Moodle and plain grade files written from the roster")
    index = class_report.write(course)
    step("class report written")
    seconds = time.perf_counter() - start
    print()
    print(f"demo class ready in {seconds:.0f} s. Open:")
    print(f"  {course / 'grades.csv'}                 one row per learner")
    print(f"  {course / REPORT_NAME}      status, score, seed and replay command per notebook")
    print(f"  {roster}                 the school's roster: names, emails, LMS ids")
    print(f"  {lms_files['canvas'].paths[0]}         Canvas's gradebook import")
    print(f"  {lms_files['moodle'].paths[0]}         Moodle's grade import")
    print(f"  {lms_files['csv'].paths[0]}          names, emails, status, totals")
    print(f"  {index}        what the class got wrong")
    print(f"  {course / 'autograded'}/<learner>/<id>/<id>.ipynb   the graded notebooks")
    print(f"  {course / 'feedback'}/<learner>/<id>/<id>.html     what each learner reads")
    print(f"    e.g. {course / 'feedback' / 'mistake02' / FX / (FX + '.html')}")
    print(f"    and  {course / 'feedback' / 'cheater' / FX / (FX + '.html')}")
    print(f"  replay one grading: cd {course} && python -m helpers check \\")
    mistake = next(t for t in report.tasks if t.student == "mistake02" and t.assignment == FX)
    print(f"      {mistake.replay().removeprefix('python -m helpers check ')}")
    return 0 if all(t.ok for t in report.tasks) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Every command checks before it acts and says what it did; learners read what happened.

One class of ``01_order`` through the course's commands (``python -m helpers ...``, as a
teacher types them): ``ada`` right, ``stub`` leaves ``softmax`` unwritten, ``hang``'s answer
cell for ``softmax`` never finishes, ``crash``'s ends the grading process, and ``kim`` takes
the Korean edition with the same endless loop. Then: three verdicts that differ in the
feedback, the class report and the grades files; ids resolved to the edition taken; unknown
and never-submitted ids refused; a never-released assignment refused by ``autograde``; a bad
extensions file refused before any grading; feedback without an exchange says it was not
released; a regrade and a new feedback keep a dated backup; each command's counts line.

Expected verdicts come from what each learner's notebook does (a loop, ``os._exit``, the
stub), not from the grader's code.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import nbformat
import pytest

from helpers.i18n import tr
from helpers.teacher.classroom import report as class_report
from helpers.teacher.classroom.course import course_id, db_url
from helpers.teacher.classroom.summary import REPORT_NAME
from tests import classroom_kit as kit

pytestmark = pytest.mark.slow

EN, KO, OTHER = "01_order", "01_order_ko", "02_sincos"
PY = sys.executable
HANG = "while True:\n    pass\n"
CRASH = "import os\nos._exit(3)\n"


def _cli(*args: str, cwd: Path, ok: bool = True):
    import subprocess

    cmd = [PY, "-m", "helpers", *args]
    proc = subprocess.run(cmd, check=False, cwd=cwd, env=kit.env(), capture_output=True, text=True)
    if ok:
        assert proc.returncode == 0, f"{args}:\n{proc.stdout}\n{proc.stderr}"
    return proc


def _prepend(path: Path, grade_id: str, code: str) -> None:
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    cell.source = code + cell.source
    nbformat.write(nb, path)


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class, released, autograded and given feedback (without an exchange)."""
    tmp = tmp_path_factory.mktemp("checks")
    course = kit.course_with(tmp, [EN, KO, OTHER])
    exchange = tmp / "exchange"
    out = {}
    out["release"] = _cli("release", EN, KO, "--exchange", str(exchange), cwd=course)
    kit.fill(course, "ada", EN)
    kit.fill(course, "stub", EN, broken=["answer_softmax"], how="stub")
    _prepend(kit.fill(course, "hang", EN), "answer_softmax", HANG)
    _prepend(kit.fill(course, "crash", EN), "answer_softmax", CRASH)
    _prepend(kit.fill(course, "kim", KO), "answer_softmax", HANG)
    out["autograde"] = _cli("autograde", "--jobs", "2", "--no-progress", cwd=course)
    out["feedback"] = _cli("feedback", EN, cwd=course)
    out["grades"] = _cli("grades", "--out", "grades.csv", cwd=course)
    out["report"] = _cli("report", cwd=course)
    return course, exchange, out


def _page(course: Path, student: str, assignment: str) -> str:
    path = course / "feedback" / student / assignment / f"{assignment}.html"
    return path.read_text(encoding="utf-8")


def test_a_timeout_a_crash_and_an_unwritten_function_are_three_verdicts(graded):
    course, _, _ = graded
    stopped, crashed = (
        tr("did not finish in time (stopped)"),
        tr("ended the grading process (crashed)"),
    )
    unwritten = tr("not written yet")
    pages = {s: _page(course, s, EN) for s in ("hang", "crash", "stub")}
    assert stopped in pages["hang"] and unwritten not in pages["hang"], pages["hang"]
    assert "softmax is not defined" not in pages["hang"]
    assert "did not finish within 10 s" in pages["hang"]
    assert crashed in pages["crash"] and unwritten not in pages["crash"]
    assert "ended the grading process" in pages["crash"]
    assert unwritten in pages["stub"] and stopped not in pages["stub"]
    korean = tr("did not finish in time (stopped)", lang="ko")
    assert korean != stopped and korean in _page(course, "kim", KO)
    assert tr("not written yet", lang="ko") not in _page(course, "kim", KO)

    # the grades files: the notebook's status
    rows = {r["student_id"]: r for r in _csv(course / REPORT_NAME)}
    assert rows["hang"]["status"] == "timed out" and "answer_softmax" in rows["hang"]["reason"]
    assert rows["crash"]["status"] == "crashed", rows["crash"]
    assert rows["stub"]["status"] == "graded" and rows["kim"]["status"] == "timed out"
    grades = {r["student_id"]: r for r in _csv(course / "grades.csv")}
    assert grades["hang"]["status"] == f"{EN}: timed out"
    assert grades["crash"]["status"] == f"{EN}: crashed"
    assert grades["stub"]["status"] == f"{EN}: graded"

    # the class report: left unfinished is the stub only; the others were stopped
    [rep] = class_report.build(course)
    softmax = rep.functions["softmax"]
    assert softmax.unfinished == ["stub"]
    assert softmax.stopped == {"hang": "timed out", "crash": "crashed", "kim": "timed out"}
    page = (course / "reports" / f"{EN}.html").read_text(encoding="utf-8")
    assert tr("Stopped while grading (timed out or crashed)") in page


def test_each_command_ends_with_a_line_of_counts(graded):
    _, _, out = graded
    last = {k: p.stdout.strip().splitlines()[-1] for k, p in out.items()}
    assert last["release"] == "release: 2 released (0 of them again), 0 skipped"
    # five learners, each one edition of 01_order: 5 graded, none skipped
    assert last["autograde"].startswith("autograde: 5 graded, 0 scored 0 ungraded"), last
    assert last["autograde"].endswith("0 assignment(s) skipped"), last
    assert last["feedback"].startswith("feedback: 2 assignment(s) generated for 5 learner(s)")
    assert "0 released" in last["feedback"] and "generated, not released" in last["feedback"]
    assert f"python -m helpers feedback {EN} {KO} --exchange DIR" in last["feedback"]
    assert last["grades"] == f"grades: 5 learner(s), 1 assignment(s) ({EN})"
    assert last["report"].startswith(f"report: 1 assignment page(s) written ({EN})")


def test_an_id_is_the_edition_the_class_took(graded, tmp_path):
    """`grades 01_order_ko` and `grades 01_order` give kim's score either way, and `report`
    resolves the same; the Canvas file keeps the column."""
    course, _, _ = graded
    both = {}
    for asked in (EN, KO):
        _cli("grades", asked, "--out", str(tmp_path / f"{asked}.csv"), cwd=course)
        both[asked] = {r["student_id"]: r for r in _csv(tmp_path / f"{asked}.csv")}
    assert both[EN] == both[KO]
    assert both[EN]["kim"][f"{EN} language"] == "ko"
    full = {r["student_id"]: r for r in _csv(course / "grades.csv")}
    assert both[KO]["kim"][EN] == full["kim"][EN] and float(full["kim"]["max_total"]) > 0


@pytest.mark.parametrize("command", ["grades", "report", "feedback"])
def test_an_unknown_id_or_one_nobody_submitted_is_an_error(graded, command):
    course, _, _ = graded
    index = (course / "reports" / "index.html").read_bytes()
    grades = (course / "grades.csv").read_bytes()
    for asked, said in (("02_sincoss", "unknown assignment 02_sincoss"), (OTHER, OTHER)):
        proc = _cli(command, asked, cwd=course, ok=False)
        assert proc.returncode == 2, proc.stdout
        assert said in proc.stderr, proc.stderr
    assert (course / "reports" / "index.html").read_bytes() == index
    assert (course / "grades.csv").read_bytes() == grades


def test_autograde_refuses_an_assignment_never_released(graded):
    """A submission of 02_sincos that was never released (a typo, files copied by hand):
    refused, nothing graded; `--unreleased` is how to ask for it."""
    course, _, _ = graded
    kit.fill(course, "ada", OTHER)
    try:
        proc = _cli("autograde", OTHER, "--no-progress", cwd=course, ok=False)
        assert proc.returncode == 2
        assert f"{OTHER} was never released" in proc.stderr and "--unreleased" in proc.stderr
        assert not (course / "autograded" / "ada" / OTHER).exists()
        proc = _cli("autograde", "03_norm", "--no-progress", cwd=course, ok=False)
        assert proc.returncode == 2 and "unknown assignment 03_norm" in proc.stderr
        from nbgrader.api import Gradebook

        with Gradebook(db_url(course), course_id(course)) as gb:
            assert OTHER not in {a.name for a in gb.assignments}
    finally:
        import shutil

        shutil.rmtree(course / "submitted" / "ada" / OTHER)


def test_a_bad_extensions_file_fails_before_any_grading(graded):
    course, _, _ = graded
    report_before = (course / REPORT_NAME).read_bytes()
    graded_nb = course / "autograded" / "ada" / EN / f"{EN}.ipynb"
    mtime = graded_nb.stat().st_mtime_ns
    for text, said in (
        ("student_id,assignment,days\nada,01_order,2d\n", "days must be a number"),
        ("student_id,assignment,days\nada,01_ordr,2\n", "01_ordr"),
        ("student,assignment,days\nada,01_order,2\n", "must have the columns"),
    ):
        (course / "extensions.csv").write_text(text, encoding="utf-8")
        try:
            proc = _cli("autograde", EN, "--no-progress", cwd=course, ok=False)
        finally:
            (course / "extensions.csv").unlink()
        assert proc.returncode == 2 and said in proc.stderr, proc.stderr
        assert "autograde [" not in proc.stderr  # no grading began
    assert graded_nb.stat().st_mtime_ns == mtime
    assert (course / REPORT_NAME).read_bytes() == report_before


def test_a_regrade_and_a_new_feedback_keep_what_they_replace(graded):
    course, _, _ = graded
    before = sorted((course / "backups").glob("*")) if (course / "backups").exists() else []
    graded_nb = (course / "autograded" / "ada" / EN / f"{EN}.ipynb").read_bytes()
    page = _page(course, "ada", EN)
    out = _cli("autograde", EN, "--students", "ada", "--no-progress", cwd=course).stdout
    _cli("feedback", EN, cwd=course)
    new = [p for p in sorted((course / "backups").glob("*")) if p not in before]
    [regrade] = [p for p in new if p.name.endswith(" autograde")]
    [fb] = [p for p in new if p.name.endswith(" feedback")]
    assert str(regrade) in out
    assert (regrade / "autograded" / "ada" / EN / f"{EN}.ipynb").read_bytes() == graded_nb
    assert (fb / "feedback" / "ada" / EN / f"{EN}.html").read_text(encoding="utf-8") == page
    import sqlite3

    with sqlite3.connect(regrade / "gradebook.db") as conn:
        students = {r[0] for r in conn.execute("select id from student")}
    conn.close()
    assert {"ada", "stub", "hang", "crash", "kim"} <= students


def test_the_histogram_keeps_scores_above_the_maximum():
    """Extra credit: 11.5 of 11 is counted (before, the bins stopped at 11 and dropped it)."""
    rep = class_report.AssignmentReport(
        "02_sincos", "en", 11.0, {"a": 11.5, "b": 11.0, "c": 5.0, "d": 0.0, "e": None}, {}
    )
    edges, counts = class_report.distribution_bins(rep)
    assert sum(counts) == 4
    assert edges[0] == 0 and edges[-1] >= 11.5
    above = [n for lo, n in zip(edges, counts, strict=False) if lo >= 11.0 - 1e-9]
    assert sum(above) == 1  # 11.5 in a bin of its own past the maximum; 11 in the last one
    assert class_report.distribution_png(rep)

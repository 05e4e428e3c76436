"""Written answers: one or two per notebook, graded by hand, never by the autograder.

The structure is read from the notebooks themselves (source, release, Korean edition) and
the README's course map; the grading through real nbgrader: autograde leaves the written
answers for the teacher and every report counts them, and a regrade keeps the teacher's
manual score, extra credit and comment, set and read back with nbgrader's ``Gradebook``.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import nbformat
import pytest

from helpers import ASSIGNMENTS
from helpers.teacher.classroom.course import course_id, db_url
from helpers.teacher.classroom.grades import export_grades
from helpers.teacher.classroom.grading import autograde
from helpers.teacher.classroom.steps import feedback
from helpers.teacher.classroom.summary import REPORT_NAME
from tests import classroom_kit as kit

HANGUL = re.compile("[\uac00-\ud7a3]")
STUB = "YOUR ANSWER HERE"
IDS = kit.real_ids(list(ASSIGNMENTS))


def _nb(top: str, assignment: str) -> nbformat.NotebookNode:
    return nbformat.read(kit.REPO / top / assignment / f"{assignment}.ipynb", as_version=4)


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _written(nb) -> list[tuple[int, nbformat.NotebookNode]]:
    return [
        (i, c)
        for i, c in enumerate(nb.cells)
        if c.cell_type == "markdown" and _meta(c).get("grade") and _meta(c).get("solution")
    ]


def _points(nb, cell_type: str | None = None) -> float:
    return sum(
        float(_meta(c).get("points", 0))
        for c in nb.cells
        if _meta(c).get("grade") and (cell_type is None or c.cell_type == cell_type)
    )


def _guide(source: str) -> str:
    lines = source.splitlines()
    assert lines[0] == "### BEGIN SOLUTION" and lines[-1] == "### END SOLUTION", source
    return "\n".join(lines[1:-1])


@pytest.mark.skipif(not IDS, reason="no course notebooks yet")
@pytest.mark.parametrize("assignment", IDS)
def test_every_notebook_has_written_answers_with_a_guide_for_the_teacher_only(assignment):
    """One or two written answers of 1-2 points (about a tenth of the notebook), each after
    its question, with a full / partial / none guide that the release replaces by the stub;
    the Korean edition has the same cells, points and a Korean guide."""
    source, release = _nb("source", assignment), _nb("notebooks", assignment)
    written = _written(source)
    assert 1 <= len(written) <= 2, f"{assignment}: {len(written)} written answers"
    total = _points(source)
    share = sum(float(_meta(c)["points"]) for _, c in written) / total
    assert 0.05 <= share <= 0.2, f"{assignment}: written answers are {share:.0%} of the points"
    by_id = {c.get("id"): c for c in release.cells}
    for index, cell in written:
        points = float(_meta(cell)["points"])
        assert points in (1.0, 2.0), (assignment, points)
        question = source.cells[index - 1]
        assert question.cell_type == "markdown" and not _meta(question).get("grade")
        heading = question.source.splitlines()[0]
        unit = "point" if points == 1 else "points"
        assert heading.startswith("#") and f"({points:g} {unit})" in heading, heading
        assert "Explain in two or three sentences" in question.source
        guide = _guide(cell.source)
        for level in ("*Full (", "*Partial (", "*None (0):*"):
            assert level in guide, f"{assignment}: the guide has no {level!r}"
        released = by_id[cell.get("id")]
        assert released.source == STUB and _meta(released)["points"] == points
        assert by_id[question.get("id")].source == question.source
        shown = "\n".join(c.source for c in release.cells)
        for line in guide.splitlines():
            if len(line.strip()) > 20:
                assert line.strip() not in shown, f"{assignment} shows its grading guide"
    ko_source, ko_release = _nb("source", f"{assignment}_ko"), _nb("notebooks", f"{assignment}_ko")
    ko_written = _written(ko_source)
    assert [(c.get("id"), _meta(c)["grade_id"], _meta(c)["points"]) for _, c in ko_written] == [
        (c.get("id"), _meta(c)["grade_id"], _meta(c)["points"]) for _, c in written
    ]
    for index, cell in ko_written:
        assert HANGUL.search(_guide(cell.source)) and HANGUL.search(
            ko_source.cells[index - 1].source
        )
    ko_by_id = {c.get("id"): c for c in ko_release.cells}
    assert all(ko_by_id[c.get("id")].source == STUB for _, c in ko_written)


@pytest.mark.skipif(not IDS, reason="no course notebooks yet")
def test_readme_course_map_counts_the_written_answers():
    """The points of the course map are every grade cell's: the code and the written ones."""
    text = (kit.REPO / "README.md").read_text(encoding="utf-8")
    for assignment in IDS:
        found = re.search(rf"^\| `{assignment}` \|.*\| (\d+) \|$", text, re.MULTILINE)
        assert found, f"README's course map has no row for {assignment}"
        assert float(found.group(1)) == _points(_nb("source", assignment)), assignment


def _write_answer(path: Path, text: str) -> None:
    nb = nbformat.read(path, as_version=4)
    for _, cell in _written(nb):
        cell.source = text
    nbformat.write(nb, path)


def _summary_line(summary: str) -> str:
    return next(ln for ln in summary.splitlines() if "written answer" in ln)


def _csv(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {r["student_id"]: r for r in csv.DictReader(fh)}


@pytest.mark.slow
@pytest.mark.skipif(not kit.real_ids(["01_order"]), reason="01_order is needed")
def test_autograde_leaves_written_answers_and_a_regrade_keeps_the_teachers_grades(tmp_path):
    from nbgrader.api import Gradebook

    assignment = "01_order"
    course = kit.course_with(tmp_path, [assignment])
    source = course / "source" / assignment / f"{assignment}.ipynb"
    code_points = _points(nbformat.read(source, as_version=4), "code")
    [(_, cell)] = _written(nbformat.read(source, as_version=4))
    written_id, written_points = _meta(cell)["grade_id"], float(_meta(cell)["points"])
    code_id = next(  # a code grade cell, to give extra credit on
        _meta(c)["grade_id"]
        for c in nbformat.read(source, as_version=4).cells
        if c.cell_type == "code" and _meta(c).get("grade")
    )
    answer = "Every output is a weighted sum over all tokens; the weights ignore where they sit."
    _write_answer(kit.fill(course, "alice", assignment), answer)
    kit.fill(course, "bob", assignment)  # the written answer left as released

    report = autograde(course, jobs=2, progress=False)
    assert not report.failures(), report.summary()
    assert report.scores["alice"][assignment] == pytest.approx(code_points)
    assert report.max_scores[assignment] == pytest.approx(code_points + written_points)
    assert _summary_line(report.summary()).startswith(
        "1 written answer(s) wait for manual grading; 1 left unanswered (scored 0)"
    ), report.summary()
    rows = _csv(course / REPORT_NAME)
    assert {s: rows[s]["written_waiting"] for s in rows} == {"alice": "1", "bob": "0"}
    grades = {r["student_id"]: r for r in export_grades(course, tmp_path / "g.csv")}
    assert {s: grades[s]["written_waiting"] for s in grades} == {"alice": 1, "bob": 0}
    graded = nbformat.read(
        course / "autograded" / "alice" / assignment / f"{assignment}.ipynb", as_version=4
    )
    assert [c.source for _, c in _written(graded)] == [answer]  # there for the teacher to read

    url, cid = db_url(course), course_id(course)
    with Gradebook(url, cid) as gb:
        grade = gb.find_grade(written_id, assignment, assignment, "alice")
        assert grade.auto_score is None and grade.needs_manual_grade
        # left as released: nbgrader's own 0 ("No response."), nothing to grade
        blank = gb.find_grade(written_id, assignment, assignment, "bob")
        assert blank.auto_score == 0 and not blank.needs_manual_grade
        assert gb.find_comment(written_id, assignment, assignment, "bob").auto_comment == (
            "No response."
        )
        # the teacher grades by hand, as the Formgrader does
        grade = gb.find_grade(written_id, assignment, assignment, "alice")
        grade.manual_score = written_points
        grade.needs_manual_grade = False
        gb.find_grade(code_id, assignment, assignment, "alice").extra_credit = 0.5
        gb.find_comment(written_id, assignment, assignment, "alice").manual_comment = "Clear."
        gb.db.commit()

    again = autograde(course, jobs=2, progress=False)  # nbgrader's --force regrade
    assert not again.failures(), again.summary()
    with Gradebook(url, cid) as gb:
        grade = gb.find_grade(written_id, assignment, assignment, "alice")
        assert grade.manual_score == written_points and grade.auto_score is None
        assert not grade.needs_manual_grade  # scored: not flagged again by the regrade
        assert gb.find_grade(code_id, assignment, assignment, "alice").extra_credit == 0.5
        comment = gb.find_comment(written_id, assignment, assignment, "alice")
        assert comment.manual_comment == "Clear."
    want = code_points + written_points + 0.5
    assert again.scores["alice"][assignment] == pytest.approx(want)
    assert _summary_line(again.summary()).startswith(
        "0 written answer(s) wait for manual grading; 1 left unanswered (scored 0)"
    ), again.summary()
    rows = _csv(course / REPORT_NAME)
    assert {s: rows[s]["written_waiting"] for s in rows} == {"alice": "0", "bob": "0"}
    export_grades(course, tmp_path / "grades.csv")
    grades = _csv(tmp_path / "grades.csv")
    assert float(grades["alice"][assignment]) == pytest.approx(want)
    assert grades["alice"]["written_waiting"] == "0" and grades["bob"]["written_waiting"] == "0"

    # the feedback shows the teacher's score and comment on the written answer
    feedback(course, [assignment], exchange=None)
    page = (course / "feedback" / "alice" / assignment / f"{assignment}.html").read_text("utf-8")
    assert answer in page and "Clear." in page
    assert "Grading guide" not in page

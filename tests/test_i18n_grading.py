"""The same answers get the same grades in English and in Korean, through real nbgrader.

Learners submit the same answers to ``06_rope`` and to ``06_rope_ko`` (all right, one
function wrong, one unwritten); ``nbgrader autograde`` grades both; the scores must agree
function by function, the Korean feedback must speak Korean, and the grades CSV must say
which language each learner took. Expected scores come from the points in the source
notebook's metadata, not from the grader.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import nbformat
import pytest

from helpers.teacher.classroom.course import course_id, db_url
from helpers.teacher.classroom.grades import export_grades
from helpers.teacher.classroom.grading import autograde
from helpers.teacher.classroom.steps import feedback
from tests import classroom_kit as kit

pytestmark = pytest.mark.slow

EN, KO = "06_rope", "06_rope_ko"
HANGUL = re.compile("[\uac00-\ud7a3]")
PLANS = {  # learner -> (broken answer cells, how)
    "ann": ((), "stub"),
    "ben": (("answer_apply_rope",), "wrong"),
    "cho": (("answer_thetas",), "stub"),
}


def _cell_scores(course: Path, student: str, assignment: str) -> dict[str, float]:
    """grade id -> score of one autograded notebook, read from the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url(course), course_id(course)) as gb:
        sub = gb.find_submission_notebook(assignment, assignment, student)
        return {g.name: float(g.score) for g in sub.grades}


def _points(assignment: str) -> float:
    nb = nbformat.read(kit.REPO / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    return sum(
        float(c.metadata["nbgrader"].get("points", 0))
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade")
    )


@pytest.mark.skipif(not kit.real_ids([EN, KO]), reason="06_rope and 06_rope_ko are needed")
def test_same_answers_same_grades_in_both_languages(tmp_path):
    course = kit.course_with(tmp_path, [EN, KO])
    for student, (broken, how) in PLANS.items():
        for assignment in (EN, KO):
            kit.fill(course, student, assignment, broken=broken, how=how)
    kit.fill(course, "kim", KO)  # takes the course in Korean only
    report = autograde(course, ids=[EN, KO], jobs=2, progress=False)
    assert not report.failures(), report.summary()
    total = _points(EN)
    assert _points(KO) == total
    for student in PLANS:
        en, ko = _cell_scores(course, student, EN), _cell_scores(course, student, KO)
        assert en == ko, f"{student}: English {en} and Korean {ko} differ"
    assert sum(_cell_scores(course, "ann", KO).values()) == pytest.approx(total)
    for student in ("ben", "cho"):
        assert 0 < sum(_cell_scores(course, student, KO).values()) < total

    # the Korean feedback speaks Korean where the English one speaks English
    feedback(course, [EN, KO], exchange=None)
    ko_page = (course / "feedback" / "ben" / KO / f"{KO}.html").read_text(encoding="utf-8")
    en_page = (course / "feedback" / "ben" / EN / f"{EN}.html").read_text(encoding="utf-8")
    wrong_ko = re.findall(r"apply_rope[^<\n]*", ko_page)
    assert any(HANGUL.search(line) for line in wrong_ko), wrong_ko[:5]
    wrong_en = re.findall(r"apply_rope[^<\n]*", en_page)
    assert any(("raised" in ln or "wrong" in ln) and not HANGUL.search(ln) for ln in wrong_en)
    assert not any("raised" in ln or "is wrong on" in ln for ln in wrong_ko)

    # one column per notebook, whichever language; the language beside it
    rows = export_grades(course, tmp_path / "grades.csv")
    by = {r["student_id"]: r for r in rows}
    assert by["kim"][EN] == pytest.approx(total) and by["kim"][f"{EN} language"] == "ko"
    assert by["ann"][EN] == pytest.approx(total)
    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as fh:
        header = next(csv.reader(fh))
    assert header == ["student_id", EN, f"{EN} language", "total", "max_total", "status"]
    assert by["kim"]["status"] == f"{EN}: graded"

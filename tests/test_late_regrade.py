"""A late grade is a function of the files and the teacher's scores, whatever the order.

tw5c submits 12 seconds late (one started day: 10 % of the notebook's score, the rule of
``nbgrader_config.py``), ontime on time; both answer everything. The course's cycle, as a
teacher runs it:

1. ``autograde``: the code cells score; the written answer waits for the teacher;
2. the written answer scored by hand in the Formgrader (its HTTP API, as its page saves a
   field), on the course's ``grade-ui`` server;
3. ``feedback``, ``grades``, ``grades --format csv|canvas|moodle``;
4. ``autograde`` again with nothing changed, and the same exports.

At every step the feedback page, ``grades.csv``, the three LMS files, the Formgrader's
answer and the gradebook say the same score and penalty, the numbers worked out here from
the source notebook's points and the configured rule: the penalty follows the score.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import secrets
import subprocess
import sys
import urllib.request
from pathlib import Path

import nbformat
import pytest

from helpers import cli
from helpers.teacher.classroom.course import course_id, db_url
from helpers.teacher.classroom.grading import autograde
from tests import classroom_kit as kit
from tests.test_browser import _free_port

pytestmark = pytest.mark.slow
A = "01_order"
LATE, ONTIME = "tw5c", "ontime"
PER_DAY = 0.10  # nbgrader_config.py: c.DailyPenalty.per_day
ANSWER = "Every output is a weighted sum over all tokens; the weights ignore where they sit."


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _points(source: Path) -> tuple[float, float, str]:
    """(code points, written points, the written answer's grade id) of the source notebook."""
    nb = nbformat.read(source, as_version=4)
    graded = [c for c in nb.cells if _meta(c).get("grade")]
    text = [c for c in graded if c.cell_type == "markdown"]
    assert len(text) == 1, f"{A} has one written answer"
    code = sum(float(_meta(c)["points"]) for c in graded if c.cell_type == "code")
    return code, float(_meta(text[0])["points"]), _meta(text[0])["grade_id"]


def _answer(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown" and _meta(cell).get("grade"):
            cell.source = ANSWER
    nbformat.write(nb, path)


def _class(tmp_path: Path) -> Path:
    course = kit.course_with(tmp_path, [A])
    for student in (LATE, ONTIME):
        _answer(kit.fill(course, student, A))
    stamp = dt.datetime(2026, 11, 20, 12, 0, 0)
    due = stamp - dt.timedelta(seconds=12)
    for student, when in ((LATE, stamp), (ONTIME, due - dt.timedelta(hours=1))):
        (kit.submit_dir(course, student, A) / "timestamp.txt").write_text(
            when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
        )
    config = course / "nbgrader_config.py"
    config.write_text(
        config.read_text(encoding="utf-8")
        + f"\nc.ApplyDueDates.duedates = {{{A!r}: {due.strftime('%Y-%m-%d %H:%M:%S UTC')!r}}}\n"
    )
    (tmp_path / "roster.csv").write_text(
        "student_id,name,email,lms_id,section\n"
        f"{LATE},Ada Lovelace,ada@example.org,101,A\n"
        f"{ONTIME},Alan Turing,alan@example.org,102,A\n",
        encoding="utf-8",
    )
    return course


def _cli(course: Path, *args: str) -> str:
    env = {k: v for k, v in kit.env().items() if k != "PE_COURSE_EXCHANGE"}
    proc = subprocess.run(
        [sys.executable, "-m", "helpers", *args, "--course", str(course)],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, f"{args}: {proc.stdout}{proc.stderr}"
    return proc.stdout


def _rows(path: Path, key: str) -> dict[str, dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {r[key]: r for r in csv.DictReader(fh)}


def _column(row: dict[str, str]) -> str:
    extra = ("language", "status", "late penalty", "waiting")
    [name] = [k for k in row if k.startswith(A) and not any(e in k for e in extra)]
    return row[name]


def _formgrader(url: str, token: str, path: str, data: dict | None = None):
    request = urllib.request.Request(
        f"{url}/formgrader/api/{path}",
        data=None if data is None else json.dumps(data).encode(),
        method="GET" if data is None else "PUT",
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def _everywhere(course: Path, tmp_path: Path, url: str, token: str) -> dict:
    """(score after the penalty, penalty) of each learner, as each place shows them."""
    from nbgrader.api import Gradebook

    out: dict = {}
    _cli(course, "feedback", A)
    for student in (LATE, ONTIME):
        page = (course / "feedback" / student / A / f"{A}.html").read_text(encoding="utf-8")
        found = re.search(r"\((?:Score|점수): ([\d.]+) / ([\d.]+)\)", page)
        assert found, page[:2000]
        assert "@font-face" not in page  # no font its own policy would block
        out.setdefault("feedback", {})[student] = float(found[1])
    _cli(course, "grades")
    grades = _rows(course / "grades.csv", "student_id")
    out["grades.csv"] = {s: float(grades[s][A]) for s in (LATE, ONTIME)}
    roster = str(tmp_path / "roster.csv")
    _cli(course, "grades", "--format", "csv", "--roster", roster)
    plain = _rows(course / "grades-plain.csv", "student_id")
    out["plain"] = {
        s: (float(_column(plain[s])), float(plain[s][f"{A} late penalty"])) for s in (LATE, ONTIME)
    }
    _cli(course, "grades", "--format", "canvas", "--roster", roster)
    canvas = _rows(course / "grades-canvas.csv", "SIS User ID")
    out["canvas"] = {s: float(_column(canvas[s])) for s in (LATE, ONTIME)}
    details = _rows(course / "grades-canvas-details.csv", "student_id")
    out["canvas details"] = {s: float(details[s][f"{A} late penalty"]) for s in (LATE, ONTIME)}
    _cli(course, "grades", "--format", "moodle", "--roster", roster)
    moodle = _rows(course / "grades-moodle.csv", "Email address")
    emails = {LATE: "ada@example.org", ONTIME: "alan@example.org"}
    out["moodle"] = {s: float(_column(moodle[emails[s]])) for s in (LATE, ONTIME)}
    rows = _formgrader(url, token, f"submissions/{A}")
    out["formgrader"] = {
        r["student"]: (round(r["score"], 6), round(r.get("pe_late_penalty") or 0.0, 6))
        for r in rows
    }
    with Gradebook(db_url(course), course_id(course)) as gb:
        out["gradebook"] = {}
        for student in (LATE, ONTIME):
            nb = gb.find_submission_notebook(A, A, student)
            penalty = float(nb.late_submission_penalty or 0.0)
            out["gradebook"][student] = (round(nb.score - penalty, 6), round(penalty, 6))
    return out


def _want(score_late: float, score_ontime: float) -> dict:
    pen = PER_DAY * score_late  # 12 s late: one started day
    after, other = score_late - pen, score_ontime
    two = {LATE: round(after, 2), ONTIME: round(other, 2)}
    return {
        "feedback": two,
        "grades.csv": two,
        "plain": {LATE: (round(after, 2), round(pen, 2)), ONTIME: (round(other, 2), 0.0)},
        "canvas": two,
        "canvas details": {LATE: round(pen, 2), ONTIME: 0.0},
        "moodle": two,
        "formgrader": {LATE: (round(after, 6), round(pen, 6)), ONTIME: (round(other, 6), 0.0)},
        "gradebook": {LATE: (round(after, 6), round(pen, 6)), ONTIME: (round(other, 6), 0.0)},
    }


@pytest.mark.skipif(not kit.real_ids([A]), reason=f"{A} is needed")
def test_a_score_given_by_hand_moves_the_penalty_and_a_regrade_changes_nothing(tmp_path):
    from nbgrader.api import Gradebook

    course = _class(tmp_path)
    code, text, written_id = _points(course / "source" / A / f"{A}.ipynb")
    first = autograde(course, jobs=2, progress=False)
    assert not first.failures(), first.summary()

    port, token = _free_port(), secrets.token_hex(16)
    cmd = [c for c in cli.grade_ui_command(course) if c != "--allow-root"]
    cmd += ["--allow-root", "--no-browser", f"--port={port}", "--ip=127.0.0.1"]
    cmd += [f"--IdentityProvider.token={token}", "--LabApp.news_url="]
    cmd += ["--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    env = kit.env() | {"HOME": str(tmp_path), "JUPYTER_CONFIG_DIR": str(tmp_path / ".jupyter")}
    env.pop("PE_COURSE_EXCHANGE", None)
    with kit.lab_server(cmd, course, env, tmp_path / "lab.log", port, token) as url:
        graded = _everywhere(course, tmp_path, url, token)
        assert graded == _want(code, code), graded  # the written answers wait

        with Gradebook(db_url(course), course_id(course)) as gb:
            ids = {s: gb.find_grade(written_id, A, A, s).id for s in (LATE, ONTIME)}
        for student in (LATE, ONTIME):  # as the Formgrader's page saves the field
            saved = _formgrader(
                url, token, f"grade/{ids[student]}", {"manual_score": text, "extra_credit": None}
            )
            assert saved["manual_score"] == text, saved
        by_hand = _everywhere(course, tmp_path, url, token)
        assert by_hand == _want(code + text, code + text), by_hand

        again = autograde(course, jobs=2, progress=False)  # nothing changed
        assert not again.failures(), again.summary()
        regraded = _everywhere(course, tmp_path, url, token)
        assert regraded == by_hand
    print(json.dumps({"autograded": graded, "by hand and regraded": regraded}))

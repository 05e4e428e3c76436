"""The teacher's steps say what they did and refuse what cannot be meant.

- ``collect`` of an id never released is an error (a typo), without ids the assignments
  never released are skipped (not asked of nbgrader one by one), a second collect counts
  the learners collected before, and a late (re)submission is said with by how much;
- a missing exchange gets the teacher's message, not the learner's "please contact your
  instructor";
- an extension for an id that is not in the class is refused before anything is graded;
- ``backups/`` keeps the newest folders of each step.

A real exchange: the course releases, this account fetches and submits with plain
``nbgrader`` (learner-setup's configuration) and the course collects.
"""

from __future__ import annotations

import getpass
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers.teacher.classroom import course as coursemod
from helpers.teacher.classroom.course import course_id
from helpers.teacher.classroom.exchange import FACTORY
from helpers.teacher.classroom.grading import autograde
from tests import classroom_kit as kit

pytestmark = pytest.mark.slow
ME = getpass.getuser()


def _helpers(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in kit.env().items() if k != "PE_COURSE_EXCHANGE"}
    return subprocess.run(
        [sys.executable, "-m", "helpers", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


class Learner:
    def __init__(self, tmp: Path, exchange: Path, cid: str) -> None:
        self.home = tmp / "home"
        self.work = self.home / "work"
        self.work.mkdir(parents=True)
        self.env = {k: v for k, v in kit.env().items() if not k.startswith(("JUPYTER", "PE_"))}
        self.env["HOME"] = str(self.home)
        proc = self.run(sys.executable, "-m", "helpers", "learner-setup", "--exchange",
                        str(exchange), "--course-id", cid)  # fmt: skip
        assert proc.returncode == 0, proc.stderr

    def run(self, *cmd: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            list(cmd),
            cwd=self.work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def submit(self, assignment: str) -> None:
        if not (self.work / assignment).is_dir():
            proc = self.run(str(kit.BIN / "nbgrader"), "fetch_assignment", assignment)
            assert proc.returncode == 0, proc.stdout + proc.stderr
        proc = self.run(str(kit.BIN / "nbgrader"), "submit", assignment)
        assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture
def released(tmp_path):
    course = kit.fixture_course(tmp_path)
    for top in ("source", "notebooks"):  # ex2: in the course, never released
        shutil.copytree(course / top / "ex1", course / top / "ex2")
        (course / top / "ex2" / "ex1.ipynb").rename(course / top / "ex2" / "ex2.ipynb")
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as fh:
        fh.write(
            "c.ApplyDueDates.duedates = {'ex1': '2020-01-01 00:00:00 UTC'}\n"
            + "".join(f"c.ExchangeFactory.{k} = {v!r}\n" for k, v in FACTORY.items())
            + kit.ONE_ACCOUNT
        )  # the course's exchange plug-ins, one account playing the learner
    exchange = tmp_path / "exchange"
    proc = _helpers(
        tmp_path, "release", "ex1", "--course", str(course), "--exchange", str(exchange)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return course, exchange, Learner(tmp_path, exchange, course_id(course))


def test_collect_refuses_the_unreleased_skips_it_and_counts_what_it_had(released):
    course, exchange, learner = released
    args = ("--course", str(course), "--exchange", str(exchange))

    never = _helpers(course, "collect", "ex2", *args)
    assert never.returncode == 2, never.stdout + never.stderr
    assert "collect: ex2 was never released" in never.stderr and "a typo?" in never.stderr

    learner.submit("ex1")
    first = _helpers(course, "collect", *args)  # no ids: ex1 only, ex2 skipped
    assert first.returncode == 0, first.stdout + first.stderr
    assert "collected ex1: 1 submission(s)" in first.stdout, first.stdout
    assert "collected ex2" not in first.stdout and "1 never released skipped" in first.stdout
    assert f"late: {ME} submitted " in first.stdout and "after the due date" in first.stdout

    again = _helpers(course, "collect", *args)  # nothing new: said so, not "0 submission(s)"
    assert again.returncode == 0, again.stdout + again.stderr
    assert "collected ex1: 0 submission(s), 1 collected before and unchanged" in again.stdout
    assert "late:" not in again.stdout

    time.sleep(1.1)
    learner.submit("ex1")  # a resubmission, late again
    third = _helpers(course, "collect", *args)
    assert third.returncode == 0, third.stdout + third.stderr
    assert f"late: {ME} resubmitted " in third.stdout, third.stdout
    assert "the late penalty follows this submission" in third.stdout


def test_a_missing_exchange_gets_the_teachers_message(released, tmp_path):
    course, _exchange, _learner = released
    gone = tmp_path / "no-such-exchange"
    for step in ("collect", "feedback"):
        proc = _helpers(course, step, "ex1", "--course", str(course), "--exchange", str(gone))
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "contact your instructor" not in proc.stdout + proc.stderr
        assert str(gone) in proc.stderr and "--exchange" in proc.stderr, proc.stderr
        assert not gone.exists()
    # nbgrader collect itself (the Formgrader's Collect button goes the same way)
    proc = subprocess.run(
        [str(kit.BIN / "nbgrader"), "collect", "ex1", f"--Exchange.root={gone}"],
        cwd=course, env=kit.env(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode != 0 and "contact your instructor" not in proc.stdout + proc.stderr
    assert f"there is no exchange at {gone}" in proc.stdout + proc.stderr


def test_an_extension_for_a_learner_not_in_the_class_is_refused(tmp_path):
    course = kit.fixture_course(tmp_path)
    folder = kit.submit_dir(course, "tw5c", "ex1")
    (folder / "ex1.ipynb").write_bytes((course / "notebooks" / "ex1" / "ex1.ipynb").read_bytes())
    (course / "extensions.csv").write_text(
        "student_id,assignment,days\ntw5z,ex1,2\n", encoding="utf-8"
    )
    with pytest.raises(ValueError, match=r"not in the class: tw5z \(did you mean tw5c\?\)"):
        autograde(course, ["ex1"], jobs=1, progress=False)
    assert not (course / "autograded").exists()  # nothing graded
    (course / "extensions.csv").write_text(
        "student_id,assignment,days\ntw5c,ex1,2\n", encoding="utf-8"
    )
    from helpers.teacher.classroom.grading import check_late_config

    check_late_config(course)  # the learner's own id: taken


def test_backups_keep_the_newest_of_each_step(tmp_path):
    made = [coursemod.backup_folder(tmp_path, "autograde", keep=3) for _ in range(5)]
    feedback = coursemod.backup_folder(tmp_path, "feedback", keep=3)
    # the three newest autograde backups and the feedback one; the two oldest are gone
    assert set(made[-3:]) | {feedback} == set((tmp_path / "backups").iterdir())
    assert not made[0].exists() and not made[1].exists()

"""The learner's side of a class, as the README gives it, by a second Unix user.

A temporary account (``pe-t21-...``) makes a fresh virtual environment with Debian's
``python3 -m venv``, installs the learner wheel with pip (its dependencies come from a
wheelhouse this test fills first, so the account needs neither the network nor the
teacher's pip cache), runs ``learner-setup``, then nbgrader's own ``fetch_assignment``,
``submit`` and, after the teacher (this process, root) has collected, autograded and
released feedback, ``fetch_feedback``. The account and every file are removed at the end,
also when the test fails. Without root (no ``useradd``) the test is skipped.
"""

from __future__ import annotations

import csv
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from helpers.teacher import learner_build
from helpers.teacher.classroom.course import course_id
from tests import classroom_kit as kit
from tests import rehearsal

pytestmark = pytest.mark.slow

ASSIGNMENT = "01_order"
PREFIX = "pe-t21-"
PYTHON = "/usr/bin/python3"  # the system's Python, as on a learner's fresh Debian machine


def _why_not() -> str:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "a second Unix user needs root (useradd, userdel)"
    missing = [t for t in ("useradd", "userdel") if shutil.which(t) is None]
    if missing:
        return f"not installed: {', '.join(missing)}"
    if not Path(PYTHON).exists():
        return f"no system Python at {PYTHON}"
    if not kit.real_ids([ASSIGNMENT]):
        return f"no {ASSIGNMENT} in the repository"
    return ""


class Account:
    """A Unix account that runs commands with its own HOME, USER and umask."""

    def __init__(self, name: str, home: Path) -> None:
        self.name, self.home = name, home
        self.venv = home / "pe-course"
        self.log: list[str] = []

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "USER": self.name,
            "LOGNAME": self.name,
            "PATH": f"{self.venv / 'bin'}:/usr/bin:/bin",  # as `source ~/pe-course/bin/activate`
            "LANG": "C.UTF-8",
        }

    def run(self, *cmd: str, cwd: Path | None = None, timeout: int = 600):
        proc = subprocess.run(
            list(cmd),
            cwd=cwd or self.home,
            env=self.env(),
            user=self.name,
            group=self.name,
            extra_groups=[],
            umask=0o022,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
        shown = " ".join(c.replace(str(self.home), "~") for c in cmd)
        self.log.append(f"{self.name}$ {shown}\n{proc.stdout}{proc.stderr}".rstrip())
        assert proc.returncode == 0, self.log[-1]
        return proc


@pytest.fixture(scope="session")
def learner(tmp_path_factory):
    """A second Unix user with the learner wheel installed in ``~/pe-course``, made once."""
    why = _why_not()
    if why:
        pytest.skip(why)
    # /tmp/pytest-of-root is private to root: the account's files live in a folder of their own
    base = Path(tempfile.mkdtemp(prefix=PREFIX))
    base.chmod(0o755)
    name = PREFIX + secrets.token_hex(3)
    home = base / "home"
    try:
        subprocess.run(
            [
                "useradd",
                "--create-home",
                "--home-dir",
                str(home),
                "--shell",
                "/bin/sh",
                "--user-group",
                name,
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        account = Account(name, home)
        # the wheel, and every wheel it depends on, where the account can read them
        dist = base / "dist"
        wheel = learner_build.build(dist)
        # collected by the teacher's pip for the learner's Python (from the pip cache)
        house, builder = base / "wheelhouse", base / "builder"
        kit.run([PYTHON, "-m", "venv", str(builder)], cwd=base)
        kit.run(
            [str(builder / "bin" / "pip"), "wheel", "--quiet", "-w", str(house), str(wheel)],
            cwd=base,
            timeout=900,
        )
        for folder in (dist, house):
            folder.chmod(0o755)
            for path in folder.iterdir():
                path.chmod(0o644)
        # the README's commands (with pip told where the wheels are: no network)
        account.run(PYTHON, "-m", "venv", str(account.venv))
        account.run(
            str(account.venv / "bin" / "pip"),
            "install",
            "--quiet",
            "--no-index",
            "--find-links",
            str(house),
            str(wheel),
            timeout=900,
        )
        account.wheel = wheel
        yield account
    finally:
        subprocess.run(["userdel", "--remove", name], capture_output=True, check=False)
        shutil.rmtree(base, ignore_errors=True)


def _cli(*args: str, cwd: Path) -> str:
    proc = kit.run([sys.executable, "-m", "helpers", *args], cwd=cwd)
    return proc.stdout + proc.stderr


def test_learner_wheel_fetch_submit_fetch_feedback_as_a_second_user(learner):
    """The learner's account installs the wheel (nbgrader comes with it), fetches, submits
    and reads the feedback with nbgrader's own commands; the teacher's gradebook knows the
    learner by the account's name."""
    venv_bin = learner.venv / "bin"
    assert (venv_bin / "nbgrader").exists(), "the learner wheel did not bring nbgrader"
    learner.run(str(venv_bin / "python"), "-c", "import helpers; assert not helpers.has_teacher()")

    work_root = Path(tempfile.mkdtemp(prefix=PREFIX))  # the exchange: the account must reach it
    try:
        work_root.chmod(0o755)
        course = kit.course_with(work_root, [ASSIGNMENT])
        exchange = work_root / "exchange"
        _cli(
            "release", ASSIGNMENT, "--course", str(course), "--exchange", str(exchange), cwd=course
        )
        cid = course_id(course)

        learner.run(
            "python",
            "-m",
            "helpers",
            "learner-setup",
            "--exchange",
            str(exchange),
            "--course-id",
            cid,
        )
        work = learner.home / "work"
        learner.run("mkdir", "-p", str(work))
        learner.run("nbgrader", "fetch_assignment", ASSIGNMENT, cwd=work)
        fetched = work / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        assert fetched.stat().st_uid == _uid(learner.name)

        # the learner's answers: the solutions, with attention left unwritten
        answers = work_root / "answers.ipynb"
        rehearsal.make_submission(
            fetched,
            course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
            answers,
            broken=["answer_attention"],
        )
        answers.chmod(0o644)
        learner.run("cp", str(answers), str(fetched))
        learner.run("nbgrader", "submit", ASSIGNMENT, cwd=work)

        _cli(
            "collect", ASSIGNMENT, "--course", str(course), "--exchange", str(exchange), cwd=course
        )
        assert (course / "submitted" / learner.name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").exists()
        _cli("autograde", ASSIGNMENT, "--course", str(course), "--no-progress", cwd=course)
        _cli(
            "feedback", ASSIGNMENT, "--course", str(course), "--exchange", str(exchange), cwd=course
        )
        _cli("grades", "--course", str(course), "--out", str(work_root / "grades.csv"), cwd=course)

        learner.run("nbgrader", "fetch_feedback", ASSIGNMENT, cwd=work)
        pages = sorted((work / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}.html"))
        assert len(pages) == 1, learner.log[-1]
        page = pages[0].read_text(encoding="utf-8")
        assert pages[0].stat().st_uid == _uid(learner.name)
        assert "attention is not written yet" in page
        assert "### BEGIN SOLUTION" not in page and "BEGIN HIDDEN TESTS" not in page

        with open(work_root / "grades.csv", newline="", encoding="utf-8") as fh:
            rows = {r["student_id"]: r for r in csv.DictReader(fh)}
        assert set(rows) == {learner.name}
        row = rows[learner.name]
        assert 0 < float(row[ASSIGNMENT]) < float(row["max_total"])
        print("\n\n".join(learner.log))
    finally:
        shutil.rmtree(work_root, ignore_errors=True)


def _uid(name: str) -> int:
    import pwd

    return pwd.getpwnam(name).pw_uid

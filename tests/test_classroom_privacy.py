"""A class private off the hub: another account of the machine reads none of it.

The course is a clone as git leaves it (umask 022: folders 0755, files 0644) in a folder
every account may pass through. The teacher runs the documented commands; a second, real
Unix account (``useradd``) then tries to read the gradebook, the grades, a learner's
submission, graded notebook and feedback: every read is refused. While ``source/`` is open
to other accounts every command warns, with the command that closes it; once the teacher
runs that command the learner cannot read the solutions either, and the warning is gone.
With nbgrader's ``groupshared`` the same data is the group's (0770/0660), never others'.
Root only (``useradd``, ``runuser``); the account is removed at the end.
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests import classroom_kit as kit

pytestmark = pytest.mark.slow
RUNUSER = shutil.which("runuser") or "runuser"
READER = "pepriv" + secrets.token_hex(2)


def _why_not() -> str:
    if os.geteuid() != 0:
        return "a second Unix account needs root (useradd, runuser)"
    missing = [t for t in ("useradd", "userdel", "runuser") if shutil.which(t) is None]
    return f"not installed: {', '.join(missing)}" if missing else ""


def _helpers(course: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in kit.env().items() if k != "PE_COURSE_EXCHANGE"}
    return subprocess.run(
        [sys.executable, "-m", "helpers", *args, "--course", str(course)],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def _as_reader(script: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [RUNUSER, "-u", READER, "--", "sh", "-c", script],
        cwd="/",
        env={"PATH": "/usr/bin:/bin", "HOME": "/", "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        check=False,
    )


def _like_a_clone(root: Path) -> None:
    for folder, dirs, files in os.walk(root):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def clone():
    why = _why_not()
    if why:
        pytest.skip(why)
    base = Path(tempfile.mkdtemp(prefix="pe-privacy-"))
    base.chmod(0o755)  # every account may pass, as /home/<teacher> often is
    proc = subprocess.run(
        ["useradd", "--no-create-home", "--shell", "/bin/sh", READER],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    try:
        course = kit.fixture_course(base)
        with open(course / "nbgrader_config.py", "a", encoding="utf-8") as fh:
            fh.write("c.ApplyDueDates.duedates = {}\n")
        for student in ("ann", "tw5b"):
            folder = kit.submit_dir(course, student, "ex1")
            shutil.copy(course / "notebooks" / "ex1" / "ex1.ipynb", folder / "ex1.ipynb")
        _like_a_clone(course)
        yield course
    finally:
        subprocess.run(["userdel", READER], capture_output=True, check=False)
        shutil.rmtree(base, ignore_errors=True)


def test_a_learner_account_reads_nothing_of_the_class_off_the_hub(clone):
    course = clone
    said = []
    for args in (
        ("autograde", "ex1", "--jobs", "1", "--no-progress", "--unreleased"),
        ("feedback", "ex1"),
    ):
        proc = _helpers(course, *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        said.append(proc.stderr)
    proc = _helpers(course, "grades")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said.append(proc.stderr)
    fix = f"chmod go-rwx {course}"
    for err in said:  # every command said it, with the command that closes the course
        assert "WARNING" in err and f"{course / 'source'} (the solutions)" in err, err
        assert f"`{fix}`" in err, err

    learner_data = {
        "the gradebook": course / "gradebook.db",
        "the grades": course / "grades.csv",
        "the autograde report": course / "autograde_report.csv",
        "a submission": course / "submitted" / "tw5b" / "ex1" / "ex1.ipynb",
        "a graded notebook": course / "autograded" / "tw5b" / "ex1" / "ex1.ipynb",
        "a feedback page": course / "feedback" / "tw5b" / "ex1" / "ex1.html",
    }
    for what, path in learner_data.items():
        assert path.is_file(), what
        read = _as_reader(f"cat {shlex.quote(str(path))} > /dev/null")
        assert read.returncode != 0 and "Permission denied" in read.stderr, (what, read)
    listed = _as_reader(f"ls {shlex.quote(str(course / 'submitted'))}")
    assert listed.returncode != 0 and "Permission denied" in listed.stderr, listed
    for name in ("submitted", "autograded", "feedback"):
        assert _mode(course / name) == 0o700, name
    for name in ("gradebook.db", "grades.csv", "autograde_report.csv"):
        assert _mode(course / name) == 0o600, name

    # the solutions: open until the teacher runs the command the warning gave
    solution = shlex.quote(str(course / "source" / "ex1" / "ex1.ipynb"))
    assert _as_reader(f"cat {solution} > /dev/null").returncode == 0
    [command] = re.findall(r"`(chmod go-rwx [^`]+)`", said[0])
    subprocess.run(shlex.split(command), check=True)
    read = _as_reader(f"cat {solution} > /dev/null")
    assert read.returncode != 0 and "Permission denied" in read.stderr, read
    proc = _helpers(course, "grades")
    assert proc.returncode == 0 and "WARNING" not in proc.stderr, proc.stderr


def test_groupshared_learner_data_is_the_groups_never_others(tmp_path):
    from helpers.teacher.classroom import privacy

    course = kit.fixture_course(tmp_path)
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as fh:
        fh.write("c.CourseDirectory.groupshared = True\n")
    (course / "submitted" / "ann" / "ex1").mkdir(parents=True)
    (course / "gradebook.db").write_bytes(b"")
    (course / "submitted").chmod(0o2777)
    (course / "gradebook.db").chmod(0o666)
    changed = privacy.secure(course)
    assert set(changed) == {course / "submitted", course / "gradebook.db"}
    assert _mode(course / "submitted") == 0o2770  # set-group-ID kept: new files the group's
    assert _mode(course / "gradebook.db") == 0o660
    (course / "nbgrader_config.py").write_text(
        (course / "nbgrader_config.py")
        .read_text()
        .replace("groupshared = True", "groupshared = False")
    )
    privacy.secure(course)
    assert _mode(course / "submitted") == 0o700 and _mode(course / "gradebook.db") == 0o600


# What a class writes into the course folder that names its learners or grades them.
CLASS_FILES = (
    "roster.csv",
    "roster-2026.csv",
    "extensions.csv",
    "collect_refused.csv",
    "grades.csv",
    "grades-canvas.csv",
    "autograde_report.csv",
    "gradebook.db",
    ".grading_secret",
    "submitted/ana/01_order/01_order.ipynb",
    "autograded/ana/01_order/01_order.ipynb",
    "feedback/ana/01_order/01_order.html",
    "backups/2026-12-03T062707Z autograde/gradebook.db",
    "reports/01_order.html",
)


def test_git_never_takes_a_class_s_names_or_grades(tmp_path):
    """A teacher's `git add -A` in the course folder takes none of the class's files
    (rosters, extensions, refusals, grades, the gradebook, submissions, backups): git itself
    is asked (`git check-ignore`), in a clone, with the files there; the course's own files
    are still taken."""
    repo = Path(__file__).resolve().parents[1]
    clone = tmp_path / "course"
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(repo), str(clone)], check=True)
    (clone / ".gitignore").write_text((repo / ".gitignore").read_text())  # this tree's
    for name in (*CLASS_FILES, "source/01_order/01_order.ipynb", "notebooks/x/x.ipynb"):
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        (clone / name).write_text("x")
    proc = subprocess.run(
        ["git", "-C", str(clone), "check-ignore", "--no-index", *CLASS_FILES],
        capture_output=True,
        text=True,
        check=False,
    )
    assert sorted(proc.stdout.splitlines()) == sorted(CLASS_FILES), proc.stdout
    taken = subprocess.run(
        ["git", "-C", str(clone), "add", "-A", "--dry-run"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "source/01_order/01_order.ipynb" in taken and "notebooks/x/x.ipynb" in taken, taken
    assert not [f for f in CLASS_FILES if f in taken], taken

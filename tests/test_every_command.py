"""No command loses a class: every Makefile target and every ``python -m helpers`` command,
run on a copy of a graded class, leaves its gradebook (manual scores, extra credit and
comments), ``submitted/`` and the teacher's files in place.

The targets are read from the Makefile and the commands from ``python -m helpers``'s own
argument parser, so a new one is run here without a change to this test; only the
long-running ones (servers, the test suite, the benchmarks) and the one that installs system
packages are left out, each with its reason in ``NOT_RUN``. A command of the parser that a
Makefile recipe runs (``$(BIN)/python -m helpers <command>``) is run through that target.

The class: ``01_order`` released, submitted by two learners in English and one in Korean
(``01_order_ko``), autograded, a written answer scored by hand with a comment and extra
credit on a code cell (as the Formgrader saves them), feedback generated, grades and the
report written.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from helpers.cli import build_parser
from helpers.teacher.classroom.course import course_id, db_url
from helpers.teacher.classroom.grades import export_grades
from helpers.teacher.classroom.grading import autograde
from helpers.teacher.classroom.steps import feedback, release
from tests import classroom_kit as kit

pytestmark = pytest.mark.slow

EN, KO = "01_order", "01_order_ko"
VENV = Path(sys.executable).parent.parent

# What is not run, and why (a target or a command missing here is run).
NOT_RUN = {
    "lab": "a JupyterLab server: it runs until stopped (tests/test_make_lab.py starts it)",
    "grade-ui": "a JupyterLab server: it runs until stopped (tests/test_formgrader.py)",
    "hub": "a JupyterHub server with Unix accounts (tests/test_hub.py runs a class on it)",
    "test": "the whole test suite, this test included",
    "test-fast": "the fast half of the test suite",
    "bench": "the benchmarks: minutes of grading on scratch courses of their own",
    "system-deps": "installs Debian and npm packages (root, network)",
}


def makefile_targets() -> list[str]:
    """Every target a rule of the Makefile names (not its variables or the venv stamp)."""
    text = (kit.REPO / "Makefile").read_text(encoding="utf-8")
    found = re.findall(r"^([A-Za-z][\w-]*)\s*:(?![=:])", text, flags=re.MULTILINE)
    return list(dict.fromkeys(found))


def helpers_commands() -> list[str]:
    """Every subcommand of ``python -m helpers``, from its argument parser."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return list(sub.choices)


def commands_of_targets() -> set[str]:
    """The ``python -m helpers`` commands that a Makefile recipe runs."""
    text = (kit.REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"-m helpers ([\w-]+)", text))


def test_the_lists_are_read_from_the_makefile_and_the_parser():
    """What is run below is found, not listed by hand: every teacher's step is there."""
    targets, commands = makefile_targets(), helpers_commands()
    for step in ("clean", "demo", "release", "collect", "autograde", "feedback", "grades"):
        assert step in targets
    for step in ("release", "collect", "autograde", "feedback", "grades", "report", "check"):
        assert step in commands
    assert not [n for n in NOT_RUN if n not in targets and n not in commands]


# --------------------------------------------------------------------------- the class


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """A graded class in a course folder of its own (see the module's docstring)."""
    tmp = tmp_path_factory.mktemp("every")
    course = kit.course_with(tmp, [EN, KO])
    exchange = tmp / "exchange"
    release(course, [EN, KO], exchange)
    kit.fill(course, "ada", EN)
    kit.fill(course, "bo", EN, broken=["answer_softmax"])
    kit.fill(course, "kim", KO)
    report = autograde(course, [EN, KO], jobs=2, progress=False)
    assert "graded" in report.summary()
    source = nbformat.read(course / "source" / EN / f"{EN}.ipynb", as_version=4)
    written = next(
        _meta(c)["grade_id"]
        for c in source.cells
        if c.cell_type == "markdown" and _meta(c).get("grade")
    )
    code = next(
        _meta(c)["grade_id"]
        for c in source.cells
        if c.cell_type == "code" and _meta(c).get("grade")
    )
    from nbgrader.api import Gradebook

    with Gradebook(db_url(course), course_id(course)) as gb:
        grade = gb.find_grade(written, EN, EN, "ada")
        grade.manual_score = 1.0
        grade.needs_manual_grade = False
        gb.find_grade(code, EN, EN, "ada").extra_credit = 0.5
        gb.find_comment(written, EN, EN, "ada").manual_comment = "Clear, and in your own words."
        gb.find_comment(
            "answer_softmax", EN, EN, "bo"
        ).manual_comment = "Look at the softmax's axis."
        gb.db.commit()
    feedback(course, [EN, KO], exchange=None)
    export_grades(course, course / "grades.csv")
    from helpers.teacher.classroom import report as class_report

    class_report.write(course, None)
    return course, exchange


def _state(course: Path) -> dict:
    """What must survive every command: the gradebook's submissions with their manual
    scores, extra credit and comments, and every file of ``submitted/``."""
    from nbgrader.api import Gradebook

    book = {}
    with Gradebook(db_url(course), course_id(course)) as gb:
        for assignment in gb.assignments:
            for sub in assignment.submissions:
                for nb in sub.notebooks:
                    for grade in nb.grades:
                        key = (sub.student.id, assignment.name, nb.name, grade.name)
                        book[key] = (grade.manual_score, grade.extra_credit)
                    for comment in nb.comments:
                        key = (sub.student.id, assignment.name, nb.name, comment.name, "comment")
                        book[key] = comment.manual_comment
    files = {
        str(p.relative_to(course)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((course / "submitted").rglob("*"))
        if p.is_file()
    }
    return {"gradebook": book, "submitted": files}


def _class_files(course: Path) -> list[str]:
    """The teacher's files of the class that must still exist."""
    wanted = [
        "gradebook.db",
        "grades.csv",
        "reports/index.html",
        f"autograded/ada/{EN}/{EN}.ipynb",
        f"autograded/kim/{KO}/{KO}.ipynb",
        f"feedback/ada/{EN}/{EN}.html",
        f"feedback/kim/{KO}/{KO}.html",
    ]
    return [w for w in wanted if not (course / w).exists()]


@pytest.fixture()
def copy_of_class(graded_class, tmp_path):
    """A copy of the graded class, with the Makefile and the project file beside it (the
    venv is this one: make's setup has nothing to do)."""
    course, _ = graded_class
    copy = Path(shutil.copytree(course, tmp_path / "course", symlinks=True))
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(kit.REPO / name, copy / name)
    return copy


def _run(cmd: list[str], cwd: Path, exchange: Path, tmp: Path) -> subprocess.CompletedProcess:
    env = kit.env()
    env.update(
        PE_COURSE_EXCHANGE=str(exchange),
        PYTHONPATH=str(kit.REPO),  # tests.demo for `make demo`
        HOME=str(tmp / "home"),  # learner-setup's default config, jupyter's runtime files
    )
    (tmp / "home").mkdir(exist_ok=True)
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=1500, check=False
    )


def _make(target: str, copy: Path, exchange: Path, tmp: Path) -> subprocess.CompletedProcess:
    stamp = VENV / ".installed"
    return _run(
        ["make", "-o", str(stamp), f"VENV={VENV}", target, "JOBS=2", f"HUB_STATE={tmp / 'hub'}"],
        copy,
        exchange,
        tmp,
    )


@pytest.mark.parametrize("target", [t for t in makefile_targets() if t not in NOT_RUN])
def test_a_makefile_target_keeps_the_class(target, copy_of_class, graded_class, tmp_path):
    _, exchange = graded_class
    before = _state(copy_of_class)
    proc = _make(target, copy_of_class, exchange, tmp_path)
    said = f"make {target} ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    after = _state(copy_of_class)
    assert after["gradebook"] == before["gradebook"], said
    assert after["submitted"] == before["submitted"], said
    assert not _class_files(copy_of_class), said
    manual = [v for k, v in after["gradebook"].items() if len(k) == 4 and v[0] is not None]
    assert manual and any(v[1] for k, v in after["gradebook"].items() if len(k) == 4), said


def _command_args(command: str, copy: Path, exchange: Path, tmp: Path) -> list[str]:
    """How a command no Makefile target runs is run here."""
    if command == "learner-setup":
        return ["--exchange", str(exchange), "--config", str(tmp / "learner_config.py")]
    if command == "check":
        return [str(copy / "submitted" / "bo" / EN / f"{EN}.ipynb")]
    return []


@pytest.mark.parametrize(
    "command",
    [c for c in helpers_commands() if c not in NOT_RUN and c not in commands_of_targets()],
)
def test_a_command_no_target_runs_keeps_the_class(command, copy_of_class, graded_class, tmp_path):
    _, exchange = graded_class
    before = _state(copy_of_class)
    args = _command_args(command, copy_of_class, exchange, tmp_path)
    proc = _run(
        [sys.executable, "-m", "helpers", command, *args], copy_of_class, exchange, tmp_path
    )
    said = f"{command} ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    after = _state(copy_of_class)
    assert after == before, said
    assert not _class_files(copy_of_class), said


def test_the_state_compared_sees_a_lost_comment_and_a_lost_file(graded_class, tmp_path):
    """The comparison above can fail: a comment cleared and a submitted file removed are seen."""
    course, _ = graded_class
    copy = Path(shutil.copytree(course, tmp_path / "course"))
    before = _state(copy)
    from nbgrader.api import Gradebook

    with Gradebook(db_url(copy), course_id(copy)) as gb:
        for comment in gb.find_submission_notebook(EN, EN, "ada").comments:
            comment.manual_comment = None
        gb.db.commit()
    assert _state(copy)["gradebook"] != before["gradebook"]
    (copy / "submitted" / "kim" / KO / f"{KO}.ipynb").unlink()
    assert _state(copy)["submitted"] != before["submitted"]
    shutil.rmtree(copy / "feedback")
    assert _class_files(copy)


def test_clean_removes_the_demo_and_the_build_only(copy_of_class, graded_class, tmp_path):
    """`make clean`: demo/ (its gradebook's -wal and -shm with it), dist/ and artifacts/ go;
    the class stays."""
    _, exchange = graded_class
    for made in ("demo/course/gradebook.db-wal", "demo/course/gradebook.db-shm", "dist/x.whl"):
        (copy_of_class / made).parent.mkdir(parents=True, exist_ok=True)
        (copy_of_class / made).write_text("x")
    (copy_of_class / "artifacts").mkdir()
    before = _state(copy_of_class)
    proc = _make("clean", copy_of_class, exchange, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not any((copy_of_class / p).exists() for p in ("demo", "dist", "artifacts"))
    assert _state(copy_of_class) == before and not _class_files(copy_of_class)
    assert (copy_of_class / "autograde_report.csv").is_file()
    assert os.path.getsize(copy_of_class / "gradebook.db") > 0

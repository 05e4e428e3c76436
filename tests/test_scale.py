"""Grading at scale: reproducible seeds, no kernel, a Dask cluster, a PostgreSQL gradebook.

The class is the grader's small course (tests/fixtures/grading_course.py): learners with
correct answers, stubs and each catalogued mistake. Expected scores come from the
fixture's points and known answers (``gc.full_marks``, ``gc.points_of``), never from the
code under test. The PostgreSQL server comes from tests/conftest.py (Debian's packages, a
temporary folder, a free port on 127.0.0.1); Dask runs as a LocalCluster of two worker
processes.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

from helpers.teacher import kernel, seeds
from helpers.teacher.classroom.course import course_id, db_url
from helpers.teacher.classroom.grades import read_scores
from helpers.teacher.classroom.grading import autograde
from helpers.teacher.classroom.summary import REPORT_NAME
from tests.fixtures import grading_course as gc

REPO = Path(__file__).resolve().parents[1]
A = gc.ASSIGNMENT
# Learners of the class and the functions each one loses (known answers).
MISTAKES = {f"mistake{i:02d}": (fn, name, body) for i, (fn, name, body) in enumerate(gc.MISTAKES)}
LOST = {"correct1": set(), "correct2": set(), "stubs": set(gc.FUNCTIONS)}
LOST.update({student: {fn} for student, (fn, _, _) in MISTAKES.items()})


def expected_total(lost: set[str]) -> float:
    return float(sum(p for gid, p in gc.full_marks().items() if _function(gid) not in lost))


def _function(grade_id: str) -> str:
    return grade_id.removeprefix("test_").split("_part")[0]


# --------------------------------------------------------------------------- seeds (fast)


def test_seed_is_the_hmac_of_course_learner_and_assignment(tmp_path):
    """The documented formula, computed here independently; the secret file is made once."""
    key = seeds.secret(tmp_path)
    path = tmp_path / seeds.SECRET_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(key) == 32 and seeds.secret(tmp_path) == key  # created once, then read
    digest = hmac.new(key, b"course\x1fann\x1f06_rope", hashlib.sha256).digest()
    want = int.from_bytes(digest[:8], "big") >> 1
    assert seeds.seed_for(tmp_path, "course", "ann", "06_rope") == want
    assert 0 <= want < 2**63


def test_seeds_differ_by_learner_assignment_course_and_secret(tmp_path):
    key = seeds.secret(tmp_path)
    base = seeds.derive(key, "c", "ann", "a1")
    assert base == seeds.derive(key, "c", "ann", "a1")
    others = {
        seeds.derive(key, "c", "bob", "a1"),
        seeds.derive(key, "c", "ann", "a2"),
        seeds.derive(key, "d", "ann", "a1"),
        seeds.derive(b"another secret of 32 bytes......", "c", "ann", "a1"),
        seeds.derive(key, "c", "an", "na1"),  # no ambiguity from joining the fields
    }
    assert base not in others and len(others) == 5
    with pytest.raises(ValueError, match="student"):
        seeds.derive(key, "c", "a\x1fb", "a1")


def test_a_short_or_broken_secret_is_refused(tmp_path):
    (tmp_path / seeds.SECRET_FILE).write_text("abcd\n")
    with pytest.raises(ValueError, match="at least 16 random bytes"):
        seeds.secret(tmp_path)


def test_the_secret_is_teacher_only():
    """Ignored by git, outside notebooks/ (nothing of it is released)."""
    ignored = (REPO / ".gitignore").read_text().split()
    assert seeds.SECRET_FILE in ignored and REPORT_NAME in ignored
    assert not list((REPO / "notebooks").rglob(seeds.SECRET_FILE))


def test_self_study_draws_fresh_cases_every_time(capsys):
    """In the learner's kernel, each self-check has a new seed."""
    first = kernel.self_check("06_rope", {})
    second = kernel.self_check("06_rope", {})
    assert first is not None and second is not None
    assert first.seed != second.seed
    out = capsys.readouterr().out
    assert f"seed {first.seed}" in out and f"seed {second.seed}" in out


# --------------------------------------------------------------------------- the class


def _make_class(root: Path) -> Path:
    course = gc.make_course(root)
    for student in ("correct1", "correct2"):
        gc.submit(course, student, gc.correct_submission(course))
    gc.submit(course, "stubs", gc.released(course))
    for student, (fn, _, body) in MISTAKES.items():
        gc.submit(course, student, gc.submission(course, answers={**gc.SOLUTIONS, fn: body}))
    return course


def _copy_class(src: Path, dest: Path) -> Path:
    """The same course and submissions (and secret) in another folder, not yet graded."""
    course = gc.make_course(dest)
    shutil.copytree(src / "submitted", course / "submitted")
    shutil.copy2(src / seeds.SECRET_FILE, course / seeds.SECRET_FILE)
    return course


def _grade_outputs(course: Path, student: str) -> dict[str, list]:
    nb = nbformat.read(course / "autograded" / student / A / f"{A}.ipynb", as_version=4)
    return {
        c.metadata["nbgrader"]["grade_id"]: [dict(o) for o in c.outputs]
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade")
    }


def _all_outputs(course: Path) -> dict:
    return {s: _grade_outputs(course, s) for s in LOST}


def _report_rows(course: Path) -> dict[str, dict[str, str]]:
    with open(course / REPORT_NAME, newline="", encoding="utf-8") as fh:
        return {row["student_id"]: row for row in csv.DictReader(fh)}


def _check_scores(report) -> None:
    """Full marks for correct answers, none for stubs; a catalogued mistake loses points of
    its own function only (partial credit may keep the checks it passes)."""
    full = expected_total(set())
    for student, lost in LOST.items():
        got = report.scores[student][A]
        if not lost or student == "stubs":
            assert got == expected_total(lost), (student, report.summary())
        else:
            assert expected_total(lost) <= got < full, (student, got, report.summary())
    assert all(t.ok for t in report.tasks), report.summary()


@pytest.fixture(scope="module")
def local_class(tmp_path_factory):
    """The class graded twice by the local process pool (sqlite): the reference run."""
    course = _make_class(tmp_path_factory.mktemp("local") / "course")
    first = autograde(course, [A], jobs=2, progress=False)
    outputs = _all_outputs(course)
    rows = _report_rows(course)
    second = autograde(course, [A], jobs=2, progress=False)
    return course, first, second, outputs, rows


@pytest.mark.slow
def test_no_kernel_and_every_grade_cell_has_the_graders_verdict(local_class):
    from helpers.teacher.nbgrader_plugin import GRADER_NOTE, NOT_RUN_NOTE

    course, first, _, outputs, _ = local_class
    _check_scores(first)
    nb = nbformat.read(course / "autograded" / "correct1" / A / f"{A}.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        texts = [o.get("text", "").strip() for o in cell.outputs]
        if meta.get("grade"):
            assert len(texts) == 1 and texts[0].startswith(f"{_function(meta['grade_id'])}: ")
            assert "passed" in texts[0]
        else:
            assert texts in ([GRADER_NOTE], [NOT_RUN_NOTE]), texts
    for student, lost in LOST.items():
        for gid, outs in outputs[student].items():
            # an error (no points) or a number as the cell's result (partial credit)
            short = [o for o in outs if o.get("output_type") in ("error", "execute_result")]
            assert bool(short) == (_function(gid) in lost), (student, gid, outs)


@pytest.mark.slow
def test_regrade_is_identical_and_learners_get_different_cases(local_class):
    """A second autograde writes the same verdicts, seeds and scores; each learner has their
    own seed; the replay command in the teacher's report reproduces the message."""
    course, first, second, outputs, rows = local_class
    assert second.scores == first.scores
    assert _all_outputs(course) == outputs  # every verdict, message and seed identical
    assert _report_rows(course) == rows
    seeds_seen = {s: int(rows[s]["seed"]) for s in LOST}
    assert len(set(seeds_seen.values())) == len(LOST)
    key = seeds.secret(course)
    for student, seed in seeds_seen.items():
        assert seed == seeds.derive(key, course_id(course), student, A)
        assert rows[student]["replay"] == (
            f"python -m helpers check submitted/{student}/{A}/{A}.ipynb --seed {seed}"
        )
    # The learner's verdict shows the failing case, not the teacher's replay line (issue 11);
    # the replay command in the report prints the same verdict for the teacher.
    student = "mistake01"
    fn = MISTAKES[student][0]
    text = "\n".join(
        str(o.get("evalue", o.get("text", ""))) for o in outputs[student][f"test_{fn}"]
    )
    assert "replay with" not in text and f"--seed {seeds_seen[student]}" not in text
    replay = rows[student]["replay"].split()
    proc = subprocess.run(
        [sys.executable, *replay[1:]], cwd=course, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 1, proc.stderr
    # the command's table wraps long messages under their column: compare the words
    printed = " ".join(proc.stdout.split())
    for line in text.strip().splitlines():
        assert " ".join(line.split()) in printed, line
    assert f"seed {seeds_seen[student]}" in proc.stdout


@pytest.mark.slow
def test_the_summary_names_the_report(local_class):
    _, first, _, _, _ = local_class
    assert f"seeds and replay commands of every notebook: {first.report_path}" in first.summary()


# --------------------------------------------------------------------------- Dask, PostgreSQL


def _cli(course: Path, *args: str) -> str:
    env = gc.nbgrader_env()
    proc = subprocess.run(
        [sys.executable, "-m", "helpers", *args, "--course", str(course)],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def _feedback(course: Path, student: str) -> str:
    return (course / "feedback" / student / A / f"{A}.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_dask_cluster_with_a_postgresql_gradebook_equals_a_local_run(
    local_class, postgres, tmp_path
):
    """`autograde --scheduler local:2 --db postgresql://...`, then feedback and grades from
    that gradebook: the same autograded verdicts, feedback pages and grades as the local
    process pool with sqlite."""
    pytest.importorskip("distributed", reason="Dask is the cluster extra: make setup")
    local, first, _, outputs, _ = local_class
    course = _copy_class(local, tmp_path / "course")
    url = postgres.new_database("scale_dask")
    out = _cli(course, "autograde", A, "--scheduler", "local:2", "--db", url, "--unreleased")
    assert "Dask cluster local:2" in out and "no problems" in out, out
    assert f"graded {len(LOST)}/{len(LOST)} notebooks" in out
    assert _all_outputs(course) == outputs
    # everything went to PostgreSQL: the course's own sqlite gradebook has no submission
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert gb.students == []
    _cli(local, "feedback", A)
    _cli(course, "feedback", A, "--db", url)
    for student in LOST:
        assert _feedback(course, student) == _feedback(local, student)
    _cli(local, "grades", A, "--out", str(tmp_path / "local.csv"))
    _cli(course, "grades", A, "--db", url, "--out", str(tmp_path / "dask.csv"))
    local_rows = (tmp_path / "local.csv").read_text()
    assert (tmp_path / "dask.csv").read_text() == local_rows
    rows = {r["student_id"]: r for r in csv.DictReader(io.StringIO(local_rows))}
    # grades.csv holds each score rounded once, to two decimals
    assert {s: float(rows[s][A]) for s in LOST} == {
        s: pytest.approx(round(first.scores[s][A], 2), abs=1e-9) for s in LOST
    }
    dask_scores = read_scores(course, [A], list(LOST), url)[0]
    assert {s: pytest.approx(v[A]) for s, v in first.scores.items() if s in LOST} == {
        s: dask_scores[s][A] for s in LOST
    }


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_nothing(local_class, tmp_path):
    """One of two Dask workers is killed while grading: its tasks go to the other (or to the
    worker the nanny restarts), every grade is right and the bar counts every notebook."""
    pytest.importorskip("distributed", reason="Dask is the cluster extra: make setup")
    from distributed import Client, LocalCluster

    local, _, _, outputs, _ = local_class
    course = _copy_class(local, tmp_path / "course")
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=50,
    )
    client = Client(cluster)
    killed: list[int] = []

    def kill_one_mid_run() -> None:
        graded = course / "autograded"
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            done = list(graded.glob(f"*/{A}/{A}.ipynb")) if graded.exists() else []
            if len(done) >= 3:
                pid = next(iter(client.run(os.getpid).values()))
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.05)

    watcher = threading.Thread(target=kill_one_mid_run, daemon=True)
    err = io.StringIO()
    try:
        watcher.start()
        report = autograde(course, [A], stream=err, scheduler=cluster.scheduler_address)
        watcher.join(timeout=5)
    finally:
        client.close()
        cluster.close()
    assert killed, "no worker was killed: the run ended before three notebooks were graded"
    _check_scores(report)
    assert _all_outputs(course) == outputs
    n = len(LOST)
    assert f"{n}/{n} learners  {n}/{n} notebooks" in err.getvalue()


def test_bad_scheduler_and_db_are_refused(tmp_path):
    from helpers.teacher.classroom import cluster

    with pytest.raises(ValueError, match="local:N with N >= 1"):
        cluster.client_for("local:0")
    with pytest.raises(ValueError, match="scheduler must be a Dask scheduler address"):
        cluster.client_for("nowhere")
    with pytest.raises(ValueError, match="SQLAlchemy URL"):
        db_url(tmp_path, "gradebook.db")
    assert db_url(tmp_path, "postgresql://u@h/db") == "postgresql://u@h/db"

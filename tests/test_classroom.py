"""The teacher's workflow through real nbgrader: release, fetch, submit, collect, autograde,
feedback, fetch_feedback and the grades CSV, in temporary course and exchange folders.

Expected scores come from the points in the source notebook's metadata (an independent
count), never from the code under test.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

from helpers.teacher import sandbox
from helpers.teacher.classroom.course import course_id, course_root, exchange_root
from helpers.teacher.classroom.grades import export_grades, read_scores
from helpers.teacher.classroom.grading import LOG_NAME, Progress, autograde
from helpers.teacher.classroom.summary import REPORT_NAME
from tests import classroom_kit as kit
from tests import rehearsal

pytestmark = pytest.mark.slow

PY = sys.executable
REAL_ID = "01_order"


def _cli(*args: str, cwd: Path) -> str:
    proc = kit.run([PY, "-m", "helpers", *args], cwd=cwd)
    return proc.stdout + proc.stderr


def _points(source_nb: Path) -> dict[str, float]:
    """``test grade_id -> points`` read from the source notebook's nbgrader metadata (the
    code grade cells: the written answers are graded by hand, see ``kit.written_points``)."""
    nb = nbformat.read(source_nb, as_version=4)
    out = {}
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            out[meta["grade_id"]] = float(meta.get("points", 0))
    return out


def _lose(points: dict[str, float], functions: list[str]) -> float:
    """Points of the test cells of these functions (``test_<function>...``)."""
    return sum(p for g, p in points.items() if any(g.startswith(f"test_{f}") for f in functions))


def _read_csv(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {row["student_id"]: row for row in csv.DictReader(fh)}


def _fetch_submit(home: Path, assignment: str, cid: str, exchange: Path, student: str, fill):
    """A learner's side: fetch, answer (``fill(path)``), submit, all as real nbgrader commands."""
    home.mkdir(parents=True)
    ex = [f"--Exchange.root={exchange}", f"--Exchange.cache={home / 'cache'}", f"--course={cid}"]
    kit.run(["nbgrader", "fetch_assignment", assignment, *ex], cwd=home)
    fill(home / assignment / f"{assignment}.ipynb")
    kit.run(["nbgrader", "submit", assignment, f"--student={student}", *ex], cwd=home)


def _cycle(tmp_path: Path, course: Path, assignment: str, broken_partly: list[str]):
    kit.one_account_plays_every_learner(course)  # alice, bob and carol are no accounts
    exchange = tmp_path / "exchange"
    cid = course_id(course)
    _cli("release", assignment, "--course", str(course), "--exchange", str(exchange), cwd=tmp_path)
    source = course / "source" / assignment / f"{assignment}.ipynb"
    answers = rehearsal.answer_ids(source)
    plans = {"alice": [], "bob": broken_partly, "carol": answers}
    for student, broken in plans.items():

        def fill(path: Path, broken=broken) -> None:
            rehearsal.make_submission(path, source, path, broken=broken, how="stub")

        _fetch_submit(tmp_path / student, assignment, cid, exchange, student, fill)
    _cli("collect", assignment, "--course", str(course), "--exchange", str(exchange), cwd=course)
    out = _cli("autograde", assignment, "--course", str(course), "--jobs", "2", cwd=course)
    assert "no problems" in out, out
    _cli("feedback", assignment, "--course", str(course), "--exchange", str(exchange), cwd=course)
    _cli("grades", "--course", str(course), "--out", str(tmp_path / "grades.csv"), cwd=course)
    feedback = {}
    for student in plans:
        kit.run(
            [
                "nbgrader",
                "fetch_feedback",
                assignment,
                f"--course={cid}",
                f"--student={student}",
                f"--Exchange.root={exchange}",
                f"--Exchange.cache={tmp_path / student / 'cache'}",
            ],
            cwd=tmp_path / student,
        )
        pages = list((tmp_path / student / assignment / "feedback").glob("*/*.html"))
        assert len(pages) == 1, f"{student}: feedback pages {pages}"
        feedback[student] = pages[0].read_text(encoding="utf-8")
    points = _points(source)
    total = sum(points.values())
    broken_fns = [b.removeprefix("answer_") for b in broken_partly]
    expected = {
        "alice": total,
        "bob": total - _lose(points, broken_fns),
        "carol": 0.0,
    }
    rows = _read_csv(tmp_path / "grades.csv")
    assert set(rows) == set(plans)
    for student, want in expected.items():
        assert float(rows[student][assignment]) == pytest.approx(want), (student, rows[student])
        assert float(rows[student]["max_total"]) == pytest.approx(
            total + kit.written_points(source)
        )
    assert 0 < expected["bob"] < total
    return feedback, source


def test_full_cycle_fixture(tmp_path):
    """nbgrader's plumbing end to end on a two-function assignment."""
    course = kit.fixture_course(tmp_path)
    feedback, _ = _cycle(tmp_path, course, "ex1", ["answer_half"])
    assert "NotImplementedError" in feedback["bob"] and "NotImplementedError" in feedback["carol"]
    assert "NotImplementedError" not in feedback["alice"]
    assert kit.SOLUTION_MARK in feedback["alice"]  # her own answer, shown back to her
    assert kit.SOLUTION_MARK not in feedback["carol"]  # stubs: nothing of the solution


def _real_course_ready() -> str:
    if not kit.real_ids([REAL_ID]):
        return f"source/{REAL_ID} and notebooks/{REAL_ID} do not exist yet"
    return ""


@pytest.mark.skipif(bool(_real_course_ready()), reason=_real_course_ready() or "ready")
def test_full_cycle_real_notebook(tmp_path):
    """The course's first notebook through the whole cycle: scores, messages, nothing hidden."""
    course = kit.course_with(tmp_path, [REAL_ID])
    source = course / "source" / REAL_ID / f"{REAL_ID}.ipynb"
    last = rehearsal.answer_ids(source)[-1]  # no other function depends on the last one
    feedback, source = _cycle(tmp_path, course, REAL_ID, [last])
    hidden = kit.hidden_test_lines(source)
    assert hidden, "the source notebook has hidden tests"
    fn = last.removeprefix("answer_")
    assert fn in feedback["bob"] and "NotImplementedError" in feedback["bob"]
    assert "checks passed" in feedback["alice"] and "checks passed" in feedback["bob"]
    assert "NotImplementedError" in feedback["carol"]
    for student, page in feedback.items():
        for line in hidden:
            assert line not in page, f"{student}'s feedback shows hidden test code: {line}"
    # carol submitted stubs: no solution may reach her through the feedback.
    import html

    carol = kit.code_lines(html.unescape(re.sub(r"<[^>]+>", "", feedback["carol"])))
    for block in kit.solution_blocks(source):
        assert kit.leaked_solution(block, carol) is None, block


def test_failures_isolated_and_parallel_equals_serial(tmp_path):
    """A corrupt notebook, a renamed file and a deleted cell: one line each, zero for that
    notebook, everyone else graded; 2 jobs give the same scores as 1."""
    course = kit.fixture_course(tmp_path)
    for s in ("ann", "ben"):
        kit.fill(course, s, "ex1", broken=["answer_half"] if s == "ben" else [])
    (kit.submit_dir(course, "eve", "ex1") / "ex1.ipynb").write_text("{ not a notebook")
    renamed = kit.fill(course, "fay", "ex1")
    renamed.rename(renamed.with_name("ex1 (1).ipynb"))
    _delete_cells(kit.fill(course, "gus", "ex1"), ["test_half"])  # nbgrader restores it
    _delete_cells(kit.fill(course, "hal", "ex1"), ["answer_half", "test_half"])

    err = io.StringIO()
    parallel = autograde(course, jobs=2, stream=err)
    serial = autograde(course, jobs=1, progress=False)
    want = {"ann": 5, "ben": 2, "eve": 0, "fay": 0, "gus": 5, "hal": 0}
    assert {s: parallel.scores[s]["ex1"] for s in want} == want
    assert {s: serial.scores[s]["ex1"] for s in want} == want
    lines = parallel.failures()
    assert any(ln.startswith("eve ex1: ex1.ipynb is not a readable notebook") for ln in lines)
    assert any(
        ln.startswith("fay ex1: ex1.ipynb is missing") and "ex1 (1).ipynb" in ln for ln in lines
    )
    assert any(ln.startswith("gus ex1: ex1.ipynb: cells deleted (test_half)") for ln in lines)
    # Two adjacent deleted cells trip nbgrader's add_missing_cells: a clear line and a zero.
    assert any(
        ln.startswith("hal ex1: ex1.ipynb: cells deleted (answer_half, test_half)")
        and ln.endswith("scored 0")
        for ln in lines
    )
    assert not any(ln.startswith(("ann", "ben")) for ln in lines)
    progress = err.getvalue()
    assert "6/6 learners" in progress and "6/6 notebooks" in progress and "left" in progress
    rows = export_grades(course, tmp_path / "g.csv")
    assert {r["student_id"]: r["ex1"] for r in rows} == want


def _delete_cells(path: Path, grade_ids: list[str]) -> None:
    nb = nbformat.read(path, as_version=4)
    nb.cells = [
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") not in grade_ids
    ]
    nbformat.write(nb, path)


def test_progress_line_counts_and_time_left():
    """The bar shows learners done / total and a time left that shrinks to zero."""
    out = io.StringIO()
    bar = Progress(learners=4, tasks=8, stream=out)
    assert "0/4 learners" in bar.line(0, 0) and "measuring" in bar.line(0, 0)
    assert "2/4 learners" in bar.line(2, 4) and "4/8 notebooks" in bar.line(2, 4)
    assert bar.line(4, 8).endswith("~0s left")
    bar.update(4, 8)
    assert out.getvalue().endswith("\n")


def test_time_left_stays_honest_while_a_notebook_hangs():
    """Never 0 s left while a notebook is being graded; one that runs far longer than the
    others is shown running, with its time, instead of a guess."""
    import time

    bar = Progress(learners=3, tasks=3, stream=io.StringIO(), jobs=2)
    bar.durations = [0.5, 0.5]
    now = time.perf_counter()
    just_started = bar.line(2, 2, running=[now])
    assert re.search(r"~[1-9]\d*s left$", just_started), just_started
    hung = bar.line(2, 2, running=[now - 75])
    assert "1 notebook(s) running for 1m15s" in hung and "0s left" not in hung, hung
    cluster = Progress(learners=3, tasks=3, stream=io.StringIO())  # no start times
    assert re.search(r"~[1-9]\d*s left$", cluster.line(2, 2)), cluster.line(2, 2)


def test_commands_reject_bad_input(tmp_path, monkeypatch):
    """Bad course, exchange, jobs or student ids: a ValueError naming the argument."""
    with pytest.raises(ValueError, match="course"):
        course_root(tmp_path)
    course = kit.fixture_course(tmp_path)
    with pytest.raises(ValueError, match="gradebook"):
        export_grades(course, tmp_path / "g.csv")
    with pytest.raises(ValueError, match="jobs"):
        autograde(course, jobs=0)
    with pytest.raises(ValueError, match="unknown assignment nope: .* are ex1"):
        autograde(course, ids=["nope"])  # says which ids the course has
    kit.fill(course, "ann", "ex1")
    with pytest.raises(ValueError, match="students"):
        autograde(course, students=["zed"])
    monkeypatch.delenv("PE_COURSE_EXCHANGE", raising=False)
    with pytest.raises(ValueError, match="exchange"):
        exchange_root(None)


def test_make_submission_fills_and_breaks(tmp_path):
    """The rehearsal helper: solutions filled in without markers; broken cells are stubs."""
    course = kit.fixture_course(tmp_path)
    path = kit.fill(course, "ann", "ex1", broken=["answer_half"])
    cells = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in nbformat.read(path, as_version=4).cells
        if "nbgrader" in c.metadata
    }
    assert "return 2 * np.asarray" in cells["answer_double"]
    assert "BEGIN SOLUTION" not in cells["answer_double"]
    assert "raise NotImplementedError" in cells["answer_half"]
    wrong = kit.fill(course, "bob", "ex1", broken=["answer_double"], how="wrong")
    assert "+ 0.5" in nbformat.read(wrong, as_version=4).cells[2].source


def test_concurrent_gradebook_writers(tmp_path):
    """Four workers writing one sqlite gradebook at once: every learner graded, none lost."""
    course = kit.fixture_course(tmp_path)
    want = {}
    for i in range(8):
        student = f"s{i}"
        kit.fill(course, student, "ex1", broken=["answer_half"] if i % 2 else [])
        want[student] = 2.0 if i % 2 else 5.0
    report = autograde(course, jobs=4, progress=False)
    assert all(t.ok for t in report.tasks), report.summary()
    assert {s: report.scores[s]["ex1"] for s in want} == want
    scores, _ = read_scores(course, ["ex1"], list(want))
    assert {s: scores[s]["ex1"] for s in want} == want


def test_a_learner_sets_up_once_then_fetches_and_submits_with_plain_nbgrader(tmp_path):
    """The learner's side as the README tells it: `python -m helpers learner-setup` writes
    ~/.jupyter/nbgrader_config.py; plain `nbgrader fetch_assignment` and `submit` then work
    from any folder, and nbgrader knows the learner by their account name."""
    import getpass
    import os
    import subprocess

    course = kit.fixture_course(tmp_path)
    exchange = tmp_path / "exchange"
    cid = course_id(course)
    _cli("release", "ex1", "--course", str(course), "--exchange", str(exchange), cwd=tmp_path)
    home, work = tmp_path / "home", tmp_path / "home" / "work"
    work.mkdir(parents=True)
    env = {k: v for k, v in kit.env().items() if not k.startswith(("JUPYTER", "PE_COURSE"))}
    env["HOME"] = str(home)

    def learner(*cmd: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            list(cmd), cwd=work, env=env, capture_output=True, text=True, check=False, timeout=300
        )

    setup = learner(PY, "-m", "helpers", "learner-setup", "--exchange", str(exchange),
                    "--course-id", cid)  # fmt: skip
    assert setup.returncode == 0, setup.stderr
    config = home / ".jupyter" / "nbgrader_config.py"
    assert str(exchange.resolve()) in config.read_text()
    again = learner(PY, "-m", "helpers", "learner-setup", "--exchange", "/elsewhere")
    assert again.returncode == 2 and "already exists" in again.stderr
    assert "/elsewhere" not in config.read_text()  # nothing lost

    fetched = learner(str(kit.BIN / "nbgrader"), "fetch_assignment", "ex1")
    assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    assert (work / "ex1" / "ex1.ipynb").exists()
    submitted = learner(str(kit.BIN / "nbgrader"), "submit", "ex1")
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    inbound = sorted(p.name for p in (exchange / cid / "inbound").iterdir())
    assert len(inbound) == 1 and inbound[0].startswith(f"{getpass.getuser()}+ex1+")

    _cli("collect", "ex1", "--course", str(course), "--exchange", str(exchange), cwd=tmp_path)
    assert (course / "submitted" / getpass.getuser() / "ex1" / "ex1.ipynb").exists()
    assert os.environ.get("HOME") != str(home)  # the test's own HOME was left alone


def _statuses(course: Path) -> dict[str, dict[str, str]]:
    with open(course / REPORT_NAME, newline="", encoding="utf-8") as fh:
        return {row["student_id"]: row for row in csv.DictReader(fh)}


def test_unreadable_submission_reported_and_given_feedback(tmp_path):
    """A notebook that is not JSON, submitted through the exchange: `nbgrader submit` takes
    it, and then the report, the grades CSV and a feedback page all say why it scored 0."""
    course = kit.fixture_course(tmp_path)
    exchange = tmp_path / "exchange"
    cid = course_id(course)
    _cli("release", "ex1", "--course", str(course), "--exchange", str(exchange), cwd=tmp_path)
    source = course / "source" / "ex1" / "ex1.ipynb"

    def answer(path: Path) -> None:
        rehearsal.make_submission(path, source, path)

    def garble(path: Path) -> None:
        path.write_text('{"cells": [ this is not JSON', encoding="utf-8")

    _fetch_submit(tmp_path / "alice", "ex1", cid, exchange, "alice", answer)
    _fetch_submit(tmp_path / "eve", "ex1", cid, exchange, "eve", garble)
    kit.run(
        ["nbgrader", "db", "student", "add", "dan", f"--db=sqlite:///{course}/gradebook.db"],
        cwd=course,
    )  # fmt: skip  (in the class, nothing submitted)
    _cli("collect", "ex1", "--course", str(course), "--exchange", str(exchange), cwd=course)
    out = _cli("autograde", "ex1", "--course", str(course), "--jobs", "2", cwd=course)
    assert "status of the 2 submitted: 1 graded, 1 unreadable" in out, out

    rows = _statuses(course)
    assert rows["eve"]["status"] == "unreadable", rows["eve"]
    assert "not a readable notebook" in rows["eve"]["reason"], rows["eve"]
    assert float(rows["eve"]["score"]) == 0.0 and rows["eve"]["replay"] == ""
    assert rows["alice"]["status"] == "graded" and rows["alice"]["reason"] == ""

    _cli("feedback", "ex1", "--course", str(course), "--exchange", str(exchange), cwd=course)
    _cli("grades", "--course", str(course), "--out", str(tmp_path / "grades.csv"), cwd=course)
    grades = _read_csv(tmp_path / "grades.csv")
    assert {s: grades[s]["status"] for s in grades} == {
        "alice": "ex1: graded",
        "dan": "ex1: missing",
        "eve": "ex1: unreadable",
    }
    assert float(grades["eve"]["ex1"]) == 0.0 and float(grades["alice"]["ex1"]) == 5.0

    pages = {}
    for student in ("alice", "eve"):
        kit.run(
            ["nbgrader", "fetch_feedback", "ex1", f"--course={cid}", f"--student={student}",
             f"--Exchange.root={exchange}", f"--Exchange.cache={tmp_path / student / 'cache'}"],
            cwd=tmp_path / student,
        )  # fmt: skip
        found = list((tmp_path / student / "ex1" / "feedback").glob("*/ex1.html"))
        assert len(found) == 1, f"{student}: feedback pages {found}"
        pages[student] = found[0].read_text(encoding="utf-8")
    assert "could not be read as a notebook" in pages["eve"], pages["eve"]
    assert "download the assignment again" in pages["eve"] and "submit again" in pages["eve"]
    assert "could not be read" not in pages["alice"]


@pytest.mark.skipif(bool(_real_course_ready()), reason=_real_course_ready() or "ready")
def test_hanging_notebook_timed_out_and_counts_agree(tmp_path):
    """A notebook whose answer cell never ends is stopped and reported as timed out; the
    progress bar's last counts are the summary's; no worker message lands in the bar."""
    course = kit.course_with(tmp_path, [REAL_ID])
    plain = kit.fill(course, "ann", REAL_ID)  # saved without cell ids: nbformat warns
    saved = json.loads(plain.read_text(encoding="utf-8"))
    for c in saved["cells"]:
        c.pop("id", None)
    plain.write_text(json.dumps(saved), encoding="utf-8")
    hang = kit.fill(course, "hal", REAL_ID)
    nb = nbformat.read(hang, as_version=4)
    last = rehearsal.answer_ids(course / "source" / REAL_ID / f"{REAL_ID}.ipynb")[-1]
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == last)
    cell.source = "while True:\n    pass\n" + cell.source
    nbformat.write(nb, hang)
    (kit.submit_dir(course, "eve", REAL_ID) / f"{REAL_ID}.ipynb").write_text("{ not JSON")
    (course / "submitted" / "zed").mkdir()  # a learner who submitted nothing of it

    proc = kit.run([PY, "-m", "helpers", "autograde", REAL_ID, "--course", str(course),
                    "--jobs", "2", "--unreleased"], cwd=course)  # fmt: skip
    bar = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    if sandbox.available():
        stray = [ln for ln in bar if not ln.startswith("autograde [")]
        assert not stray, f"lines inside the progress bar: {stray}"
    done, total = map(int, re.search(r"(\d+)/(\d+) notebooks", bar[-1]).groups())
    summary = proc.stdout
    graded, submitted = map(int, re.search(r"graded (\d+)/(\d+) notebooks", summary).groups())
    counts = re.search(r"status of the (\d+) submitted: ([^;\n]+)", summary)
    assert (done, total) == (3, 3) and submitted == total == int(counts.group(1)), summary
    by_status = {k: int(n) for n, k in re.findall(r"(\d+) ([a-z ]+?)(?:,|$)", counts.group(2))}
    assert by_status == {"graded": 1, "timed out": 1, "unreadable": 1}, summary
    assert graded == 2 and "1 not submitted (missing, scored 0)" in summary, summary
    log = course / LOG_NAME
    assert f"messages of nbgrader and the grading workers: {log}" in summary, summary
    assert "MissingIDFieldWarning" in log.read_text(encoding="utf-8")  # kept, not shown

    rows = _statuses(course)
    assert rows["hal"]["status"] == "timed out", rows["hal"]
    assert f"the answer cell {last} did not finish" in rows["hal"]["reason"], rows["hal"]
    assert 0 < float(rows["hal"]["score"]) < float(rows["hal"]["max_score"]), rows["hal"]
    assert rows["zed"]["status"] == "missing" and rows["zed"]["reason"] == "not submitted"
    assert rows["ann"]["status"] == "graded" and rows["eve"]["status"] == "unreadable"


def test_unknown_assignment_lists_the_valid_ones(tmp_path):
    """`autograde`, `feedback` and `collect` name the course's assignments for an unknown id."""
    import subprocess

    course = kit.fixture_course(tmp_path)
    kit.fill(course, "ann", "ex1")
    for command in ("autograde", "feedback", "collect"):
        extra = ["--exchange", str(tmp_path / "ex")] if command == "collect" else []
        proc = subprocess.run(
            [PY, "-m", "helpers", command, "nope", "--course", str(course), *extra],
            capture_output=True, text=True, env=kit.env(), cwd=tmp_path, check=False,
        )  # fmt: skip
        assert proc.returncode == 2, (command, proc.stdout, proc.stderr)
        want = f"{command}: unknown assignment nope: the assignments of this course are ex1"
        assert want in proc.stderr, (command, proc.stderr)


def test_a_pool_worker_killed_mid_run_loses_nothing(tmp_path):
    """A grading worker of the local pool is killed mid-run: the notebooks it held are graded
    again, every learner gets the right score and the bar counts every notebook; the
    folders of the processes it had started ahead are gone when the run ends."""
    import multiprocessing
    import os
    import signal
    import threading
    import time

    course = kit.fixture_course(tmp_path)
    want = {}
    for i in range(6):
        kit.fill(course, f"s{i}", "ex1", broken=["answer_half"] if i % 2 else [])
        want[f"s{i}"] = 2.0 if i % 2 else 5.0
    killed: list[int] = []
    folders: set[str] = set()  # the killed worker's processes' working folders

    def kill_one_mid_run() -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if list(course.glob("autograded/*/ex1/ex1.ipynb")):
                workers = multiprocessing.active_children()
                if workers:
                    folders.update(_temporary_folders(workers[0].pid))
                    os.kill(workers[0].pid, signal.SIGKILL)
                    killed.append(workers[0].pid)
                    return
            time.sleep(0.05)

    watcher = threading.Thread(target=kill_one_mid_run, daemon=True)
    err = io.StringIO()
    watcher.start()
    report = autograde(course, jobs=2, stream=err)
    watcher.join(timeout=5)
    assert killed, "no worker was killed: the run ended before a notebook was graded"
    assert all(t.ok for t in report.tasks), report.summary()
    assert {s: report.scores[s]["ex1"] for s in want} == want
    assert "6/6 learners  6/6 notebooks" in err.getvalue(), err.getvalue()
    assert folders, "the killed worker had no process started ahead in a folder of its own"
    left = sorted(f for f in folders if os.path.exists(f))
    assert not left, f"the killed worker's folders stayed after the run: {left}"


def _temporary_folders(pid: int) -> set[str]:
    """The course's temporary folders (``pe-...`` in the temporary folder) the processes
    ``pid`` started work in (its children and theirs): a spare's, a zygote's."""
    import os
    import tempfile

    from helpers.teacher.task_cgroup import process_tree

    top = os.path.realpath(tempfile.gettempdir()) + os.sep
    found = set()
    for child in process_tree(pid)[1:]:
        try:
            cwd = os.readlink(f"/proc/{child}/cwd")
        except OSError:
            continue
        if cwd.startswith(top + "pe-"):
            found.add(cwd)
    return found


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def test_a_small_run_forks_its_workers_from_the_command_and_survives_one_killed(tmp_path):
    """Six notebooks through the command line (a small run, ``warm.SMALL_RUN``): no
    forkserver starts, the pool's workers are forks of the command itself (same command
    line); one killed mid-run, its notebooks are graded again and every learner gets the
    score of their answers."""
    import os
    import signal
    import subprocess
    import time

    course = kit.fixture_course(tmp_path)
    want = {}
    for i in range(6):
        kit.fill(course, f"s{i}", "ex1", broken=["answer_half"] if i % 2 else [])
        want[f"s{i}"] = 2.0 if i % 2 else 5.0
    proc = subprocess.Popen(
        [PY, "-m", "helpers", "autograde", "--course", str(course), "--jobs", "2", "--unreleased"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=kit.env(), cwd=tmp_path,
    )  # fmt: skip
    killed, lines = [], []
    deadline = time.monotonic() + 300
    while proc.poll() is None and not killed and time.monotonic() < deadline:
        if list(course.glob("autograded/*/ex1/ex1.ipynb")):
            mine = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
            for child in _children(proc.pid):
                try:
                    line = Path(f"/proc/{child}/cmdline").read_bytes()
                except OSError:
                    continue
                lines.append(line)
                if line == mine and not killed:
                    os.kill(child, signal.SIGKILL)
                    killed.append(child)
        time.sleep(0.05)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, out + err
    assert killed, f"no forked worker found among the command's children: {lines}"
    assert not any(b"forkserver" in line for line in lines), lines
    scores, _maxima = read_scores(course, ["ex1"], list(want))
    assert {s: scores[s]["ex1"] for s in want} == want, out + err

"""Grading processes started ahead of need (``channel.SPARES``), as the grading pool uses them.

A spare is a sandboxed worker (or a reference's process) started before the notebook it
serves is known; each notebook still gets one that no other code ran in. The attacks run
as a learner's answer cell through the real isolated grader, in real bubblewrap.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers.teacher import channel, isolated, sandbox, standins
from tests.fixtures import grading_course as gc

needs_bwrap = pytest.mark.skipif(
    not sandbox.available(),
    reason=f"the sandbox cannot run here ({sandbox.reason_unavailable()}): make system-deps",
)

# An answer cell that leaves marks wherever a process that served two notebooks would keep
# them: a module, the environment, a file in its working folder and one in /tmp.
LEAVE = (
    "import os, sys, types\n"
    "sys.modules['left_behind'] = types.ModuleType('left_behind')\n"
    "os.environ['LEFT_BEHIND'] = '1'\n"
    "open('left_behind.txt', 'w').write('x')\n"
    "open('/tmp/left_behind.txt', 'w').write('x')\n"
)
# ... and one that answers wrong when it finds any of them.
LOOK = (
    "\nimport os as _os, sys as _sys\n"
    "if ('left_behind' in _sys.modules or 'LEFT_BEHIND' in _os.environ\n"
    "        or _os.path.exists('left_behind.txt') or _os.path.exists('/tmp/left_behind.txt')):\n"
    "    def turns(*args, **kwargs):\n"
    "        return None\n"
)


@pytest.fixture
def spares():
    """The grading process's spares, as a pool's worker prepares them; ended afterwards."""
    channel.SPARES.prepare()
    channel.SPARES.prepare(standins.REFERENCE_ARGV)
    yield channel.SPARES
    channel.SPARES.stop()


def _turns(source: str):
    nb = gc.edit(gc.source_notebook(), sources={"turns": source})
    return isolated.check_notebook(nb, seed=5)


@needs_bwrap
def test_what_a_learner_leaves_never_reaches_the_next_notebook(spares):
    """The marks, looked for in the same process, turn ``turns`` wrong (the look works);
    left by one notebook and looked for by the next, graded from the spares, they are
    not there."""
    both = _turns(LEAVE + gc.answer_cell_source("turns", gc.SOLUTIONS["turns"]) + LOOK)
    assert not both["turns"].passed, both.table()
    left = _turns(LEAVE + gc.answer_cell_source("turns", gc.SOLUTIONS["turns"]))
    assert left["turns"].passed, left.table()
    after = _turns(gc.answer_cell_source("turns", gc.SOLUTIONS["turns"]) + LOOK)
    assert after.passed, after.table()


@needs_bwrap
def test_each_take_is_a_fresh_process_in_a_folder_of_its_own(spares, tmp_path):
    """Two takes: two processes, two folders; the first one's folder goes with it."""
    first = spares.take(str(tmp_path), 30)
    second = spares.take(str(tmp_path), 30)
    try:
        assert first.proc.pid != second.proc.pid
        assert first.folder is not None and second.folder is not None
        assert first.folder.name != second.folder.name
        folder = Path(first.folder.name)
        assert folder.is_dir() and not any(folder.iterdir())  # the host's side stays empty
        first.stop()
        assert first.proc.poll() is not None and not folder.exists()
    finally:
        first.stop()
        second.stop()


@needs_bwrap
def test_a_spare_that_died_is_replaced_and_the_notebook_graded(spares):
    """The waiting worker is killed before its notebook comes: the notebook gets a new one."""
    waiting = spares._waiting[None]
    waiting.proc.kill()
    waiting.proc.wait(timeout=10)
    report = isolated.check_notebook(gc.source_notebook(), seed=3)
    assert report.passed, report.table()
    assert None in spares._waiting and spares._waiting[None] is not waiting  # the next one


@needs_bwrap
def test_a_spare_keeps_the_time_limits(spares):
    """An endless loop in an answer cell, graded by a spare, is stopped at the cell's limit
    and costs only its function."""
    loop = "while True:\n    pass\n" + gc.answer_cell_source("turns", gc.SOLUTIONS["turns"])
    nb = gc.edit(gc.source_notebook(), sources={"turns": loop})
    report = isolated.check_notebook(nb)
    assert {r.name for r in report.results if not r.passed} == {"turns"}
    assert "did not finish within" in report["turns"].message


@needs_bwrap
def test_stopping_ends_the_spares_and_removes_their_folders():
    channel.SPARES.prepare()
    channel.SPARES.prepare(standins.REFERENCE_ARGV)
    waiting = list(channel.SPARES._waiting.values())
    assert len(waiting) == 2
    folders = [Path(w.folder.name) for w in waiting]
    channel.SPARES.stop()
    assert all(w.proc.poll() is not None for w in waiting)
    assert not any(f.exists() for f in folders)
    assert not channel.SPARES._waiting


@needs_bwrap
def test_the_last_notebook_starts_no_spare_after_it(spares, tmp_path):
    """Told the notebook is the last, ``take`` hands out the spare and starts none."""
    waiting = spares._waiting[None]
    spares.last()
    worker = spares.take(str(tmp_path), 30)
    try:
        assert worker is waiting
        assert None not in spares._waiting
    finally:
        worker.stop()


@needs_bwrap
def test_a_function_that_writes_files_is_graded_in_the_spare_s_own_folder(spares):
    """08's ``write_report`` writes into the folder of the worker that runs it. A spare was
    started in a folder of its own, before the notebook's session made one: graded from a
    spare, the solution still gets every point (it raised FileNotFoundError when the cases
    named the session's folder, which the spare's sandbox does not have)."""
    source = Path(__file__).resolve().parent.parent / "source" / "08_offsets" / "08_offsets.ipynb"
    for _ in range(2):  # the second notebook is graded from a spare started after the first
        report = isolated.check_notebook(source, names=["write_report"], seed=3)
        [result] = report.results
        assert result.passed, result.message


# --------------------------------------------------------------------------- the reference's zygote


@pytest.fixture
def zygote_spares():
    """The spares as a pool's worker prepares them: the reference's processes are forks of
    a zygote that loaded numpy and the reference once."""
    channel.SPARES.fork_from_zygote(standins.REFERENCE_ARGV, "helpers.teacher.standins")
    channel.SPARES.prepare(standins.REFERENCE_ARGV)
    yield channel.SPARES
    channel.SPARES.stop()


def _ask(worker, name: str, *args) -> dict:
    from helpers.teacher.codec import encode

    deadline = __import__("time").monotonic() + 30
    worker.send({"name": name, "args": encode(list(args)), "kwargs": encode({})}, deadline)
    return worker.receive(deadline)


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_each_reference_process_is_a_new_fork_of_the_zygote_holding_only_its_pipes(
    zygote_spares, tmp_path
):
    """Two takes: two processes, both children of the zygote (not cold starts), each with
    its stdin, stdout and stderr and no other descriptor (not the zygote's socket), with its
    own limits; killed, one ends and the zygote forks the next."""
    [zygote] = zygote_spares._zygotes.values()
    first = zygote_spares.take(str(tmp_path), 30, standins.REFERENCE_ARGV, standins.MEMORY_LIMIT)
    second = zygote_spares.take(str(tmp_path), 30, standins.REFERENCE_ARGV, standins.MEMORY_LIMIT)
    try:
        assert isinstance(first.proc, channel.Forked) and isinstance(second.proc, channel.Forked)
        assert first.proc.pid != second.proc.pid
        for worker in (first, second):
            assert "value" in _ask(worker, "angle_rates", 8, 10000.0)  # its limits are set
            assert _parent(worker.proc.pid) == zygote.proc.pid
            assert sorted(os.listdir(f"/proc/{worker.proc.pid}/fd")) == ["0", "1", "2"]
            limits = Path(f"/proc/{worker.proc.pid}/limits").read_text()
            assert f"{standins.MEMORY_LIMIT}" in limits  # RLIMIT_AS, set by the child itself
        first.stop()
        assert first.proc.poll() == -9  # SIGKILL, as the zygote saw it
        assert zygote.proc.poll() is None
        assert "value" in _ask(second, "angle_rates", 8, 10000.0)
    finally:
        first.stop()
        second.stop()


def test_a_reference_process_out_of_memory_costs_neither_the_zygote_nor_the_next(
    zygote_spares, tmp_path
):
    """A request far past the memory limit: that process answers MemoryError (its own
    RLIMIT_AS, counted from the fork); the next take is a fresh fork that answers."""
    costly = zygote_spares.take(str(tmp_path), 30, standins.REFERENCE_ARGV, standins.MEMORY_LIMIT)
    try:
        assert _ask(costly, "angle_rates", 2 * 10**9, 10000.0)["error"]["type"] == "MemoryError"
    finally:
        costly.stop()
    [zygote] = zygote_spares._zygotes.values()
    assert zygote.proc.poll() is None
    fresh = zygote_spares.take(str(tmp_path), 30, standins.REFERENCE_ARGV, standins.MEMORY_LIMIT)
    try:
        assert isinstance(fresh.proc, channel.Forked)
        assert "value" in _ask(fresh, "angle_rates", 8, 10000.0)
    finally:
        fresh.stop()


def test_without_its_zygote_the_reference_process_starts_cold(zygote_spares, tmp_path):
    """The zygote killed: the next reference's process is started as before, and answers."""
    [zygote] = zygote_spares._zygotes.values()
    for worker in zygote_spares._waiting.values():
        worker.stop()
    zygote_spares._waiting.clear()
    zygote.proc.kill()
    zygote.proc.wait(timeout=10)
    worker = zygote_spares.take(str(tmp_path), 30, standins.REFERENCE_ARGV, standins.MEMORY_LIMIT)
    try:
        assert not isinstance(worker.proc, channel.Forked)
        assert "value" in _ask(worker, "angle_rates", 8, 10000.0)
    finally:
        worker.stop()


@needs_bwrap
def test_a_stand_in_asked_for_gigabytes_through_the_zygote_fails_that_function_only(
    zygote_spares,
):
    """The red team's stand-in of about 2 GB, its reference's process forked from the
    zygote: that function fails, the rest of 01 is graded."""
    from tests.test_grader_redteam import STAND_IN_MEMORY, _failed, _notebook

    nb = _notebook("01_order", answer_self_attention=STAND_IN_MEMORY)
    report = isolated.check_notebook(nb, seed=2, names=["self_attention", "softmax"])
    assert _failed(report) == {"self_attention"}, report.table()
    assert "too costly" in report["self_attention"].message

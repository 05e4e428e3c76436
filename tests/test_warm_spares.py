"""Grading processes started ahead of need (``channel.SPARES``), as the grading pool uses them.

A spare is a sandboxed worker (or a reference's process) started before the notebook it
serves is known; each notebook still gets one that no other code ran in. The attacks run
as a learner's answer cell through the real isolated grader, in real bubblewrap.
"""

from __future__ import annotations

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

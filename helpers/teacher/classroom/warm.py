"""Grading workers that start warm: forked from a process that loaded everything once.

``context()`` is the ``multiprocessing`` context of the local grading pool: a forkserver
whose process imports this module first, so nbgrader (its autograde converter,
preprocessors and gradebook models), the course's nbgrader plugins, the checks and the
reference are loaded once, in the server; every worker is a fork of it and starts with all
of that already done. The server lives as long as the process that grades (every pool of
the run, a pool that replaces one whose worker died, every later ``autograde`` of the same
process use it) and ends with it.

``start()`` starts the server early, so that its loading overlaps the grading process's
own work before the pool starts. A worker is a fork of the server, not of the grading
process: ``grading._worker_init`` gives it the grading process's environment, folder and
probe of the sandbox.

A small run (``small_run``: at most ``SMALL_RUN`` notebooks) starts no server:
``fork_here()`` loads the same modules in the grading process itself and its pool's
workers are forks of it (a second Python loading nbgrader costs such a run more than the
overlap saves), unless another thread runs in the process.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from pathlib import Path

# At most this many notebooks to grade: no server; the workers are forks of the grading
# process itself, which loads what the server would (``fork_here``). A second Python loading
# nbgrader beside the grading process costs a small run more than it saves.
SMALL_RUN = 8


def _load() -> None:
    """What every grading worker needs, imported and prepared once (in the server)."""
    from helpers.teacher.classroom.course import venv_on_path

    venv_on_path()
    import jsonschema  # noqa: F401
    import nbgrader.converters
    import nbgrader.coursedir
    import nbgrader.preprocessors  # noqa: F401
    import sqlalchemy.dialects.sqlite  # noqa: F401

    import helpers.teacher.classroom.late
    import helpers.teacher.nbgrader_plugin  # noqa: F401
    from helpers.teacher import checks, isolated, reference  # noqa: F401


if os.environ.get("PE_WARM_SERVER") == "1":  # imported by the forkserver: load now
    try:
        _load()
    except Exception:  # noqa: BLE001, S110  (then each worker loads what it needs itself)
        pass

_CONTEXT = None
_LOADED_HERE = False


def small_run(course: Path, ids, students) -> bool:
    """Whether at most ``SMALL_RUN`` notebooks can be graded: the submitted folders of the
    ``students`` (all when None) for the ``ids`` (all when empty); counted from the folders
    alone, before anything is imported."""
    folder = Path(course) / "submitted"
    if not folder.is_dir():
        return True
    wanted = {str(i) for i in ids or ()}
    learners = [folder / s for s in students] if students else list(folder.iterdir())
    count = 0
    for learner in learners:
        if learner.is_dir():
            count += sum(
                1
                for a in learner.iterdir()
                if a.is_dir() and (not wanted or _asked(a.name, wanted))
            )
        if count > SMALL_RUN:
            return False
    return True


def _asked(assignment: str, wanted: set[str]) -> bool:
    """``assignment`` is one of ``wanted`` or an edition of one (``02_sincos_ko``)."""
    return assignment in wanted or any(assignment.startswith(w + "_") for w in wanted)


def fork_here():
    """The ``fork`` context for a pool whose workers are forks of this process, after loading
    here, once, what the server loads; None where that is not safe (another thread runs in
    this process, as in a Jupyter server) or fork does not exist: then use ``context()``."""
    global _LOADED_HERE
    if "fork" not in multiprocessing.get_all_start_methods() or threading.active_count() > 1:
        return None
    if not _LOADED_HERE:
        try:
            _load()
        except Exception:  # noqa: BLE001, S110  (then each worker loads what it needs itself)
            pass
        _LOADED_HERE = True
    return multiprocessing.get_context("fork")


def context():
    """The forkserver context of the grading pool (``spawn`` where fork is not available)."""
    global _CONTEXT
    if _CONTEXT is None:
        if "forkserver" not in multiprocessing.get_all_start_methods():
            return multiprocessing.get_context("spawn")
        _CONTEXT = multiprocessing.get_context("forkserver")
        _CONTEXT.set_forkserver_preload([__name__])
    return _CONTEXT


def start() -> None:
    """Start the forkserver now (it loads in the background); nothing when it runs."""
    ctx = context()
    if ctx.get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    before = os.environ.get("PE_WARM_SERVER")
    os.environ["PE_WARM_SERVER"] = "1"  # the server's environment: it loads on import
    try:
        forkserver.ensure_running()
    finally:
        if before is None:
            os.environ.pop("PE_WARM_SERVER", None)
        else:
            os.environ["PE_WARM_SERVER"] = before

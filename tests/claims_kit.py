"""One executed source notebook per test run, read by every test that needs its outputs.

``executed_notebook(nb_id, tmp_path_factory)`` runs ``source/<nb_id>/<nb_id>.ipynb`` top to
bottom with nbclient, in a copy of its folder, the first time a test of the run asks for it
(``tests/test_notebooks.py``'s execution test, or a claims test); later tests, in this
worker or another xdist worker, read the notebook it saved. ``executed(nb_id,
tmp_path_factory)`` gives the claims tests (Markdown source by cell id, printed output by
code cell id) of it. ``holds`` is the test of one pattern.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent

_DONE: dict[str, nbformat.NotebookNode] = {}  # in this process

# Notebooks whose one execution here trains the full experiment: the suite sets
# COURSE_TRAIN_QUICK (tests/conftest.py) for every other execution of them.
FULL_RUNS = {"13_train_short"}


def without_quick() -> dict[str, str]:
    """This process's environment without the quick-run variable (helpers.train.QUICK_ENV)."""
    from helpers.train import QUICK_ENV

    return {k: v for k, v in os.environ.items() if k != QUICK_ENV}


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of this test run that every xdist worker shares (each worker's own temporary
    folder is a subfolder of the run's); the run's temporary folder without xdist."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if "PYTEST_XDIST_WORKER" in os.environ else base


def run_source(
    nb_id: str,
    folder: Path,
    *,
    env: dict[str, str] | None = None,
    through: tuple[str, ...] = (),
    then: tuple[str, ...] = (),
    timeout: int | None = 600,
) -> nbformat.NotebookNode:
    """``source/<nb_id>/<nb_id>.ipynb`` executed in a fresh copy of its folder at ``folder``
    (its kernel started with ``env`` when given), up to the last of the cells ``through`` when
    given, and then the code cells ``then``; the executed notebook."""
    shutil.rmtree(folder, ignore_errors=True)  # a run that failed before
    shutil.copytree(ROOT / "source" / nb_id, folder)
    nb = nbformat.read(folder / f"{nb_id}.ipynb", as_version=4)
    if through:
        ids = [c.id for c in nb.cells]
        nb.cells = nb.cells[: max(ids.index(c) for c in through) + 1]
    nb.cells += [nbformat.v4.new_code_cell(code) for code in then]
    NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    ).execute(**({"env": env} if env is not None else {}))
    return nb


def executed_notebook(nb_id: str, tmp_path_factory: pytest.TempPathFactory):
    """The source notebook ``nb_id`` executed top to bottom (once per test run).

    Raises ``CellExecutionError`` on the first cell that fails; nothing is saved then, so
    the next test that asks runs it again and fails the same way. A lock file keeps two
    workers from running the same notebook at once: the second waits and reads.
    """
    if nb_id in _DONE:
        return _DONE[nb_id]
    store = run_folder(tmp_path_factory) / "executed-sources"
    store.mkdir(exist_ok=True)
    saved = store / f"{nb_id}.ipynb"
    with open(store / f"{nb_id}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not saved.exists():
            full = nb_id in FULL_RUNS
            nb = run_source(
                nb_id,
                store / nb_id,
                env=without_quick() if full else None,
                timeout=None if full else 600,  # the full training's time is the benchmark's
            )
            nbformat.write(nb, saved.with_suffix(".part"))
            saved.with_suffix(".part").rename(saved)
        _DONE[nb_id] = nbformat.read(saved, as_version=4)
    return _DONE[nb_id]


def executed(nb_id: str, tmp_path_factory) -> tuple[dict[str, str], dict[str, str]]:
    """(Markdown source by cell id, printed output by code cell id) of the executed notebook."""
    nb = executed_notebook(nb_id, tmp_path_factory)
    text = {c.id: c.source for c in nb.cells if c.cell_type == "markdown"}
    printed = {
        c.id: "".join(o.get("text", "") for o in c.get("outputs", []))
        for c in nb.cells
        if c.cell_type == "code"
    }
    return text, printed


def holds(haystack: str, pattern: str) -> bool:
    return re.search(pattern, haystack) is not None

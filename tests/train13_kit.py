"""Notebook 13_train_short's one full run, shared by the tests that need its outputs.

Run All of 13 trains seven models. The suite sets ``COURSE_TRAIN_QUICK`` (tests/conftest.py),
so every execution of 13 trains the quick experiment: the same code (training, evaluation,
curves, self-check) on a few steps. One execution, this one, removes the variable from its
kernel's environment and runs the full experiment; its executed notebook is kept in pytest's
temporary folder of the session, shared by the xdist workers (a file lock: the first worker
to ask runs it, the others wait and read it). tests/test_notebooks.py's execution test of 13
and tests/test_notebook_claims_13.py read it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import traceback
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from helpers.train import QUICK_ENV

ROOT = Path(__file__).resolve().parent.parent
NB_ID = "13_train_short"


def shared_folder(tmp_path_factory) -> Path:
    """pytest's temporary folder of the whole session (the parent of a worker's own)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def full_environment() -> dict[str, str]:
    """This process's environment without the quick-run variable."""
    return {k: v for k, v in os.environ.items() if k != QUICK_ENV}


def run_full(folder: Path) -> nbformat.NotebookNode:
    """Run All on a copy of source/13_train_short in ``folder``, the full experiment."""
    work = folder / NB_ID
    shutil.copytree(ROOT / "source" / NB_ID, work, dirs_exist_ok=True)
    nb = nbformat.read(work / f"{NB_ID}.ipynb", as_version=4)
    # no per-cell limit: the training cell's time is the benchmark's to measure, not a test's
    NotebookClient(
        nb, timeout=None, kernel_name="python3", resources={"metadata": {"path": str(work)}}
    ).execute(env=full_environment())
    return nb


def full_run(tmp_path_factory) -> nbformat.NotebookNode:
    """The executed notebook of the session's one full run (run here if no worker has).

    Raises ``RuntimeError`` with the run's error if it failed (for every test that asks).
    """
    folder = shared_folder(tmp_path_factory) / "train13_full"
    folder.mkdir(exist_ok=True)
    done, failed = folder / "executed.ipynb", folder / "error.txt"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not done.exists() and not failed.exists():
                try:
                    nbformat.write(run_full(folder), done)
                except Exception:  # noqa: BLE001 - kept for every test that asks
                    failed.write_text(traceback.format_exc())
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    if failed.exists():
        raise RuntimeError(f"Run All of {NB_ID} (full) failed:\n{failed.read_text()}")
    return nbformat.read(done, as_version=4)

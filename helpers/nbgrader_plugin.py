"""The nbgrader preprocessors of the course (named in ``nbgrader_config.py``).

- ``SafeExecute``: nbgrader's ``Execute``, except that a kernel that dies (``os._exit``
  in a cell, a crash) or stops answering does not abort the grading of the notebook:
  the cells after it are marked as not run and grading goes on. It runs the notebook as
  the grader sees it: the course's read-only cells, the answer cells and the test cells;
  teaching cells (no nbgrader role) are not run, since no grade depends on them
  (``run_teaching_cells = True`` runs every cell).
- ``IsolatedGrades``: after execution, grades the notebook's answer cells in an
  isolated process (``helpers.grader.check_notebook``) and replaces the outputs of every
  grade cell ``test_<function>...`` with the verdict: one stdout line when it passed,
  one ``error`` output with the grader's message when it failed. Nothing the kernel
  printed (warnings on stderr, a silenced traceback, a patched ``helpers``) counts.
- ``HideHiddenTests``: for ``generate_feedback``: removes the hidden test blocks from
  the cell sources, so feedback shows the grader's messages but never hidden test code.
"""

from __future__ import annotations

from typing import Any

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import ClearHiddenTests, Execute, NbGraderPreprocessor
from traitlets import Bool, Enum

from helpers.grader import nbgrader_meta

__all__ = ["NOT_RUN_NOTE", "HideHiddenTests", "IsolatedGrades", "SafeExecute", "is_teaching_cell"]


def _error_output(ename: str, message: str) -> NotebookNode:
    lines = message.splitlines() or [message]
    return NotebookNode(
        output_type="error",
        ename=ename,
        evalue=message,
        traceback=[f"{ename}: {lines[0]}", *lines[1:]],
    )


NOT_RUN_NOTE = "[not run while grading: this cell does not count towards the grade]"


def _stream(text: str) -> NotebookNode:
    return NotebookNode(output_type="stream", name="stdout", text=text.rstrip("\n") + "\n")


def is_teaching_cell(cell: NotebookNode) -> bool:
    """A code cell that is neither read-only, nor an answer, nor a test."""
    meta = nbgrader_meta(cell)
    role = meta.get("locked") or meta.get("solution") or meta.get("grade")
    return cell.get("cell_type") == "code" and not role


class SafeExecute(Execute):
    """``Execute`` that survives a dead, hanging or unresponsive kernel.

    When the kernel dies or a cell runs past the time limit, that cell gets an error
    output saying so, the cells after it are not run (each code cell gets a note as an
    error output, so an unrun test cell earns nothing by itself; ``IsolatedGrades``
    then grades the known functions anyway), and the preprocessor returns normally so
    that the rest of the autograde pipeline runs.

    Teaching cells, the code cells without an nbgrader role (not read-only, not an answer,
    not a test), are not run unless ``run_teaching_cells`` is set: the verdicts come from
    the isolated grader, which imports only the answer cells, so no grade depends on them,
    and their explorers, figures and measurements are the heaviest part of a notebook in
    the kernel. Each skipped cell gets ``NOT_RUN_NOTE`` as its output.

    The kernel is stopped at once after the last cell (``shutdown_kernel = "immediate"``):
    every output has arrived by then, and a graceful shutdown only waits.
    """

    run_teaching_cells = Bool(
        False,
        help="Also run the code cells that have no nbgrader role (explanations, figures).",
    ).tag(config=True)
    shutdown_kernel = Enum(
        ["graceful", "immediate"],
        default_value="immediate",
        help="How the kernel is stopped after the last cell.",
    ).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: Any = None, km: Any = None):
        self._stopped: str | None = None
        try:
            return super().preprocess(nb, resources, km=km)
        except (DeadKernelError, CellTimeoutError, RuntimeError) as exc:
            # Starting or stopping the kernel failed after a cell killed it.
            if self._stopped is None:
                raise
            self.log.warning("kernel shut down after it stopped: %s", exc)
            return nb, resources

    def preprocess_cell(self, cell: NotebookNode, resources: Any, index: int):
        if self._stopped is not None:
            if cell.cell_type == "code":
                cell.outputs = [_error_output("CellNotRun", f"not run: {self._stopped}")]
                cell.execution_count = None
            return cell, resources
        if not self.run_teaching_cells and is_teaching_cell(cell):
            cell.outputs = [_stream(NOT_RUN_NOTE)]
            cell.execution_count = None
            return cell, resources
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            why = "the kernel died while running this cell (os._exit, a crash or out of memory)"
            self._stop(cell, index, why)
        except CellTimeoutError:
            why = f"this cell did not finish within {self.timeout} s and could not be interrupted"
            self._stop(cell, index, why)
        else:
            # The kernel was interrupted after the time limit: it may be stuck for good,
            # and every later call of the same code would wait as long again.
            if any(o.get("ename") == "CellTimeoutError" for o in cell.get("outputs", [])):
                why = f"this cell did not finish within {self.timeout} s and was interrupted"
                self.log.warning("cell %d: %s; the cells after it are not run", index, why)
                self._stopped = f"an earlier cell (cell {index}) timed out: {why}"
        return cell, resources

    def _stop(self, cell: NotebookNode, index: int, why: str) -> None:
        self.log.warning("cell %d: %s; the cells after it are not run", index, why)
        cell.outputs = list(cell.get("outputs", [])) + [_error_output("KernelStopped", why)]
        self._stopped = f"an earlier cell (cell {index}) stopped the kernel: {why}"


class IsolatedGrades(NbGraderPreprocessor):
    """Replace the outputs of grade cells with the verdicts of the isolated grader."""

    enabled = Bool(True, help="Whether to grade in isolation.").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: Any):
        from helpers import grader

        checks = grader._checks()
        if checks is None:
            self.log.error("helpers.checks is not installed: grade cells are left as executed")
            return nb, resources
        targets: dict[int, str] = {}
        for index, cell in enumerate(nb.cells):
            meta = nbgrader_meta(cell)
            if cell.cell_type != "code" or not meta.get("grade"):
                continue
            name = grader.function_for_grade_id(str(meta.get("grade_id", "")), checks.CHECKS)
            if name is not None:
                targets[index] = name
        if not targets:
            return nb, resources
        names = list(dict.fromkeys(targets.values()))
        replay = self._replay_path(resources)
        try:
            report = grader.check_notebook(nb, names=names, replay_path=replay)
        except Exception as exc:  # a grading failure must not pass a cell
            if type(exc).__name__ == "SandboxUnavailable":
                raise  # PE_COURSE_SANDBOX=require: refuse to grade unsandboxed
            self.log.error("isolated grading failed: %s", exc)
            message = f"grading failed ({type(exc).__name__}: {exc}); ask your teacher"
            for index in targets:
                nb.cells[index].outputs = [_error_output("GradingError", message)]
            return nb, resources
        for index, name in targets.items():
            result = report[name]
            cell = nb.cells[index]
            if result.passed:
                cell.outputs = [_stream(f"{name}: {result.message}")]
            else:
                cell.outputs = [_error_output("WrongAnswer", result.message)]
        failed = [r.name for r in report.results if not r.passed]
        self.log.info(
            "isolated grades (seed %s): %d passed, failed: %s",
            report.seed,
            len(report.results) - len(failed),
            ", ".join(failed) or "none",
        )
        return nb, resources

    @staticmethod
    def _replay_path(resources: Any) -> str | None:
        info = (resources or {}).get("nbgrader", {})
        try:
            return f"submitted/{info['student']}/{info['assignment']}/{info['notebook']}.ipynb"
        except (KeyError, TypeError):
            return None


class HideHiddenTests(ClearHiddenTests):
    """Remove ``BEGIN/END HIDDEN TESTS`` blocks from cell sources (for feedback)."""

    enforce_metadata = Bool(False, help="Do not require grade metadata.").tag(config=True)

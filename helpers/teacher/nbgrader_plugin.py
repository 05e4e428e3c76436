"""The nbgrader preprocessors of the course (named in ``nbgrader_config.py``).

- ``SandboxedKernelManager``: a Jupyter kernel manager whose kernel runs in the grading
  sandbox (``helpers.teacher.sandbox``); ``SandboxedExecute`` is nbgrader's ``Execute``
  and ``SandboxedSafeExecute`` the course's ``SafeExecute`` with that kernel manager.
- ``SafeExecute``: nbgrader's ``Execute``, except that a kernel that dies (``os._exit``
  in a cell, a crash) or stops answering does not abort the grading of the notebook:
  the cells after it are marked as not run and grading goes on. It runs the notebook as
  the grader sees it: the course's read-only cells, the answer cells and the test cells;
  teaching cells (no nbgrader role) are not run, since no grade depends on them
  (``run_teaching_cells = True`` runs every cell). With ``run_kernel = False`` (the
  course's configuration) it starts no kernel at all: no grade comes from the kernel, so
  every code cell is only marked (``NOT_RUN_NOTE`` on teaching cells, ``GRADER_NOTE`` on
  the others) and ``IsolatedGrades`` writes the verdict of every grade cell.
- ``IsolatedGrades``: after execution, grades the notebook's answer cells in an
  isolated process (``helpers.teacher.isolated.check_notebook``) and replaces the outputs of every
  grade cell ``test_<function>...`` with the verdict: one stdout line when it passed,
  one ``error`` output with the grader's message when it failed. Nothing the kernel
  printed (warnings on stderr, a silenced traceback, a patched ``helpers``) counts.
- ``RestoreCells``: nbgrader's ``OverwriteCells`` that puts back a deleted grade cell even
  when its answer cell was deleted too.
- ``HideHiddenTests``: for ``generate_feedback``: removes the hidden test blocks from
  the cell sources, so feedback shows the grader's messages but never hidden test code.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from typing import Any

from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import (
    ClearHiddenTests,
    Execute,
    NbGraderPreprocessor,
    OverwriteCells,
)
from traitlets import Bool, Enum

from helpers.i18n import speaking, split_assignment, tr
from helpers.teacher import checks, isolated, sandbox, seeds
from helpers.teacher.notebook import function_for_grade_id, nbgrader_meta
from helpers.teacher.verdict import is_replay_line, named

__all__ = [
    "GRADER_NOTE",
    "NOT_RUN_NOTE",
    "TIMED_OUT_LOG",
    "VERDICT_KEY",
    "HideHiddenTests",
    "IsolatedGrades",
    "RestoreCells",
    "SafeExecute",
    "SandboxedExecute",
    "SandboxedKernelManager",
    "SandboxedSafeExecute",
    "is_teaching_cell",
]


def _error_output(ename: str, message: str) -> NotebookNode:
    lines = message.splitlines() or [message]
    return NotebookNode(
        output_type="error",
        ename=ename,
        evalue=message,
        traceback=[f"{ename}: {lines[0]}", *lines[1:]],
    )


NOT_RUN_NOTE = "[not run while grading: this cell does not count towards the grade]"
# How the log line begins that names the learner code stopped for running past its time
# limit: ``autograde`` reads it from nbgrader's log to give the notebook the status "timed out".
TIMED_OUT_LOG = "learner code timed out in "
# The grader's replay line (``verdict.is_replay_line``, in any language) names the teacher's
# files, so learners do not see it (their message shows the failing case itself); the
# teacher's log has it.


def _for_the_learner(message: str) -> str:
    return "\n".join(ln for ln in message.splitlines() if not is_replay_line(ln))


def _result(value: float) -> NotebookNode:
    return NotebookNode(
        output_type="execute_result",
        execution_count=None,
        metadata={},
        data={"text/plain": repr(float(value))},
    )


GRADER_NOTE = (
    "[not run while grading: the grader imports the answer cells in an isolated process "
    "and writes each test cell's verdict]"
)


def _stream(text: str) -> NotebookNode:
    return NotebookNode(output_type="stream", name="stdout", text=text.rstrip("\n") + "\n")


def is_teaching_cell(cell: NotebookNode) -> bool:
    """A code cell that is neither read-only, nor an answer, nor a test."""
    meta = nbgrader_meta(cell)
    role = meta.get("locked") or meta.get("solution") or meta.get("grade")
    return cell.get("cell_type") == "code" and not role


class SandboxedKernelManager(AsyncKernelManager):
    """A Jupyter kernel manager whose kernel runs inside the sandbox.

    The kernel may write only in its working directory (nbgrader's
    ``autograded/<student>/<assignment>``) and a private ``/tmp``. It talks to the client
    over Unix sockets (``transport="ipc"``) in a private folder that holds its connection
    file, so it runs without any network. Without bubblewrap it behaves like
    ``AsyncKernelManager`` after the warning (or refuses under ``PE_COURSE_SANDBOX=require``).
    """

    _sandbox_dir: str | None = None

    async def _async_pre_start_kernel(self, **kw):
        if sandbox.available():
            if self._sandbox_dir is None:
                # A short path: Unix socket names are limited to about 100 characters.
                self._sandbox_dir = tempfile.mkdtemp(prefix="pe-k-")
                # Removed on shutdown; also when the manager is dropped or Python exits.
                weakref.finalize(self, shutil.rmtree, self._sandbox_dir, True)
            self.transport = "ipc"
            self.connection_file = os.path.join(self._sandbox_dir, "kernel.json")
            self.ip = os.path.join(self._sandbox_dir, "s")
        kernel_cmd, kw = await super()._async_pre_start_kernel(**kw)
        if self._sandbox_dir is not None:
            # A signal to the process group would end bubblewrap, and the kernel with it:
            # interrupt with a control message instead (the kernel signals itself).
            self.kernel_spec.interrupt_mode = "message"
        return kernel_cmd, kw

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
        if self._sandbox_dir is not None:
            cwd = kw.get("cwd") or os.getcwd()
            kernel_cmd = sandbox.wrap(kernel_cmd, writable=[cwd, self._sandbox_dir], cwd=cwd)
        else:
            kernel_cmd = sandbox.wrap(kernel_cmd)  # raises under "require", else warns
        await super()._async_launch_kernel(kernel_cmd, **kw)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart and self._sandbox_dir is not None:
            shutil.rmtree(self._sandbox_dir, ignore_errors=True)
            self._sandbox_dir = None


class SandboxedExecute(Execute):
    """nbgrader's ``Execute`` with its kernel in the sandbox.

    nbgrader's ``Execute.__init__`` passes ``kernel_manager_class`` as a keyword, which
    wins over the configuration: subclasses take the sandbox from here instead of
    ``c.Execute.kernel_manager_class``.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)


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

    With ``run_kernel = False`` no kernel starts: every grade comes from ``IsolatedGrades``,
    so running the cells would decide nothing. Each code cell is marked instead: teaching
    cells with ``NOT_RUN_NOTE``, the others (read-only, answer and test cells) with
    ``GRADER_NOTE``, which ``IsolatedGrades`` then replaces on the test cells by the verdict.
    """

    run_kernel = Bool(
        True,
        help="Run the cells in a kernel; False marks them and starts no kernel (the grades "
        "come from IsolatedGrades either way).",
    ).tag(config=True)

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
        if not self.run_kernel:
            for cell in nb.cells:
                if cell.cell_type == "code":
                    note = NOT_RUN_NOTE if is_teaching_cell(cell) else GRADER_NOTE
                    cell.outputs = [_stream(note)]
                    cell.execution_count = None
            return nb, resources
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
            self._timed_out(resources, index)
        else:
            # The kernel was interrupted after the time limit: it may be stuck for good,
            # and every later call of the same code would wait as long again.
            if any(o.get("ename") == "CellTimeoutError" for o in cell.get("outputs", [])):
                why = f"this cell did not finish within {self.timeout} s and was interrupted"
                self.log.warning("cell %d: %s; the cells after it are not run", index, why)
                self._stopped = f"an earlier cell (cell {index}) timed out: {why}"
                self._timed_out(resources, index)
        return cell, resources

    def _timed_out(self, resources: Any, index: int) -> None:
        notebook = (resources or {}).get("nbgrader", {}).get("notebook", "the notebook")
        self.log.warning(
            "%s%s: cell %d did not finish within %s s in the kernel",
            TIMED_OUT_LOG,
            notebook,
            index,
            self.timeout,
        )

    def _stop(self, cell: NotebookNode, index: int, why: str) -> None:
        self.log.warning("cell %d: %s; the cells after it are not run", index, why)
        cell.outputs = list(cell.get("outputs", [])) + [_error_output("KernelStopped", why)]
        self._stopped = f"an earlier cell (cell {index}) stopped the kernel: {why}"


class SandboxedSafeExecute(SafeExecute):
    """The course's ``SafeExecute`` (survives a dead kernel) with its kernel in the sandbox.

    ``nbgrader_config.py`` names this class in ``Autograde.autograde_preprocessors``.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)


class IsolatedGrades(NbGraderPreprocessor):
    """Write the verdict of the isolated grader into every grade cell.

    Each code grade cell ``test_<function>...`` gets its function's verdict; a grade cell
    that names no graded function gets an error saying so (it scores nothing: no grade
    comes from the kernel). The random cases come from the seed of the (learner,
    assignment) (``helpers.teacher.seeds``: the course id, the learner, the assignment and
    the course's secret), so a regrade gives the same verdicts; ``fixed_seeds = False``
    draws fresh cases instead.
    """

    enabled = Bool(True, help="Whether to grade in isolation.").tag(config=True)
    fixed_seeds = Bool(
        True, help="Random cases from the seed of the (learner, assignment), else fresh ones."
    ).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: Any):
        """Grade in the assignment's language: ``06_rope_ko`` is graded in Korean."""
        with speaking(self._language(resources)):
            return self._preprocess(nb, resources)

    @staticmethod
    def _language(resources: Any) -> str | None:
        """The language of the assignment being graded (its id's suffix), or None (unchanged)."""
        info = (resources or {}).get("nbgrader", {})
        assignment = info.get("assignment") if isinstance(info, dict) else None
        if not assignment:
            return None
        return split_assignment(str(assignment))[1]

    def _preprocess(self, nb: NotebookNode, resources: Any):
        targets: dict[int, str | None] = {}
        for index, cell in enumerate(nb.cells):
            meta = nbgrader_meta(cell)
            if cell.cell_type != "code" or not meta.get("grade"):
                continue
            targets[index] = function_for_grade_id(str(meta.get("grade_id", "")), checks.CHECKS)
        if not targets:
            return nb, resources
        names = list(dict.fromkeys(n for n in targets.values() if n is not None))
        replay = self._replay_path(resources)
        try:
            seed = self._seed(resources)
            report = isolated.check_notebook(nb, seed=seed, names=names, replay_path=replay)
        except Exception as exc:  # a grading failure must not pass a cell
            if isinstance(exc, sandbox.SandboxUnavailable):
                raise  # PE_COURSE_SANDBOX=require: refuse to grade unsandboxed
            self.log.error("isolated grading failed: %s", exc)
            message = tr(
                "grading failed ({type}: {error}); ask your teacher",
                type=type(exc).__name__,
                error=exc,
            )
            for index in targets:
                nb.cells[index].outputs = [_error_output("GradingError", message)]
            return nb, resources
        for index, name in targets.items():
            cell = nb.cells[index]
            if name is None:
                gid = nbgrader_meta(cell).get("grade_id", "")
                cell.outputs = [
                    _error_output(
                        "GradingError",
                        tr(
                            "{grade_id}: no automatic check grades this cell (a test cell must be "
                            "named test_<function> of a graded function); ask your teacher",
                            grade_id=gid,
                        ),
                    )
                ]
                continue
            result = report[name]
            text = _for_the_learner(result.message)
            cell.metadata[VERDICT_KEY] = verdict_record(result)
            if result.passed:
                cell.outputs = [_stream(named(name, text))]
            elif result.score > 0:
                # nbgrader's partial credit: a number as the cell's result, no error output
                points = float(nbgrader_meta(cell).get("points", 0) or 0)
                # unrounded: the gradebook sums it, totals are rounded once when exported
                cell.outputs = [_stream(text), _result(points * result.score)]
            else:
                cell.outputs = [_error_output("WrongAnswer", text)]
        if report.timeouts:
            notebook = (resources or {}).get("nbgrader", {}).get("notebook", "the notebook")
            self.log.warning("%s%s: %s", TIMED_OUT_LOG, notebook, "; ".join(report.timeouts))
        failed = [r.name for r in report.results if not r.passed]
        self.log.info(
            "isolated grades (seed %s): %d passed, failed: %s",
            report.seed,
            len(report.results) - len(failed),
            ", ".join(failed) or "none",
        )
        for result in report.results:
            replay = [ln for ln in result.message.splitlines() if is_replay_line(ln)]
            if not result.passed and replay:
                self.log.info("%s: %s", result.name, replay[0])
        return nb, resources

    def _seed(self, resources: Any) -> int | None:
        """The seed of this (learner, assignment), or None (fresh cases) outside autograde."""
        info = (resources or {}).get("nbgrader", {})
        if not self.fixed_seeds or "student" not in info or "assignment" not in info:
            return None
        coursedir = self.config.get("CourseDirectory", {})
        root = coursedir.get("root") or os.getcwd()
        course_id = coursedir.get("course_id") or ""
        # a translated notebook draws the same cases as its English one (06_rope_ko: 06_rope)
        base = split_assignment(str(info["assignment"]))[0]
        return seeds.seed_for(root, str(course_id), str(info["student"]), base)

    @staticmethod
    def _replay_path(resources: Any) -> str | None:
        info = (resources or {}).get("nbgrader", {})
        try:
            return f"submitted/{info['student']}/{info['assignment']}/{info['notebook']}.ipynb"
        except (KeyError, TypeError):
            return None


# The cell metadata key of each grade cell's verdict in the autograded notebook, read by the
# class report (``helpers.teacher.classroom.report``): the function, its verdict, its share of
# the points, the catalogue name of the mistake it matched and whether it was left unwritten.
VERDICT_KEY = "pe_verdict"


def verdict_record(result) -> dict:
    """What ``VERDICT_KEY`` holds for a ``verdict.FunctionResult``."""
    return {
        "function": result.name,
        "verdict": result.verdict,
        "score": float(result.score),
        "mistake": result.mistake,
        "unfinished": bool(getattr(result, "unfinished", False)),
        "section": str(getattr(checks.CHECKS.get(result.name), "section", "") or ""),
    }


class RestoreCells(OverwriteCells):
    """nbgrader's ``OverwriteCells``, whose missing grade cells come back in any case.

    nbgrader puts a missing grade cell back after the cell before it in the source; when
    the learner deleted that cell too (an answer cell with its test cell), nbgrader fails
    the whole notebook (``KeyError: 'answer_attention'``). Here it goes after the nearest
    earlier source cell that is still there (or first): the function of the deleted answer
    cell is then graded as not defined, and every other function as usual.
    """

    def add_missing_grade_cells(self, nb: NotebookNode, resources: Any):
        source_nb = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        source_cells = source_nb.source_cells
        source_ids = [cell.name for cell in source_cells]
        solution_ids = {cell.name for cell in source_nb.solution_cells}
        for grade_cell in source_nb.grade_cells:
            present = {nbgrader_meta(c).get("grade_id"): i for i, c in enumerate(nb.cells)}
            if grade_cell.name in present:
                continue
            self.log.warning(
                "Missing grade cell %s encountered, adding to notebook", grade_cell.name
            )
            index = source_ids.index(grade_cell.name)
            cell = self.missing_cell_transform(
                source_cells[index],
                grade_cell.max_score,
                is_solution=grade_cell.name in solution_ids,
            )
            earlier = [present[i] for i in source_ids[:index] if i in present]
            nb.cells.insert(earlier[-1] + 1 if earlier else 0, cell)
        return nb, resources


class HideHiddenTests(ClearHiddenTests):
    """Remove ``BEGIN/END HIDDEN TESTS`` blocks from cell sources (for feedback)."""

    enforce_metadata = Bool(False, help="Do not require grade metadata.").tag(config=True)

"""Run All reaches the self-check when a learner's function breaks inside its body.

A learner notebook answered with the source's solutions, one function broken in its body
(a typo of a name, an index past the end, no return value, an endless loop the learner
interrupts) or deleted, is run top to bottom in a real kernel, as Restart & Run All runs it:
no cell stops the run, the teaching cells that call the function (plots, measurements,
explorers) say which function failed and in which exercise, and the self-check in the last
cell reports that function.
"""

from __future__ import annotations

import threading

import nbformat
import pytest
from nbclient import NotebookClient

from helpers.i18n import split_assignment
from helpers.teacher import exercises
from tests import rehearsal
from tests.conftest import REPO
from tests.learner_kernel import LearnerKernel

ENGLISH_IDS = sorted(
    p.parent.name for p in (REPO / "source").glob("*/*.ipynb") if "_ko" not in p.parent.name
)


def _learner(nb_id: str, tmp_path, how: str, function: str | None = None):
    """``nb_id`` answered with the solutions, ``function`` (default: the one its teaching cells
    call most) broken ``how``; returns the notebook, the function and its answer cell's id."""
    base = split_assignment(nb_id)[0]
    source = REPO / "source" / base / f"{base}.ipynb"
    source_nb = nbformat.read(source, as_version=4)
    gid, name = rehearsal.most_used_function(source_nb)
    if function is not None:
        name = function
        gid = next(
            g for g, code in rehearsal.solution_cells(source_nb).items() if f"def {name}(" in code
        )
    path = tmp_path / f"{nb_id}.ipynb"
    rehearsal.make_submission(REPO / "notebooks" / nb_id / f"{nb_id}.ipynb", source, path)
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.get("id") == gid)
    cell.source = rehearsal.break_function(cell.source, name, how)
    return nb, name, gid


def _run(nb, tmp_path):
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()  # raises CellExecutionError on the first cell that stops Run All


def _exercise(name: str) -> str:
    return f"Exercise {exercises.load()[name]['exercise']}: `{name}`"


@pytest.mark.slow
@pytest.mark.parametrize("nb_id", ENGLISH_IDS)
def test_a_typo_inside_a_learner_s_function_does_not_stop_run_all(nb_id, tmp_path):
    """The function the teaching cells call most, with a NameError in its body."""
    nb, name, _ = _learner(nb_id, tmp_path, "name")
    _run(nb, tmp_path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code)
    teaching = [
        rehearsal.cell_text(c)
        for c in code
        if not c.get("id", "").startswith(("answer_", "test_", "recap_"))
        and "NameError" in rehearsal.cell_text(c)
    ]
    assert teaching, "no teaching cell met the broken function"
    said = " ".join(" ".join(teaching).split())
    assert (
        f"[not run to the end: your `{name}` ({_exercise(name)}) raised NameError: name " in said
    ), said
    assert "helpers/session.py" not in said  # no frame of the course's own
    table = " ".join(rehearsal.cell_text(code[-1]).split())
    assert f"self-check of {nb_id}" in table, table
    row = next(
        line for line in rehearsal.cell_text(code[-1]).splitlines() if line.split()[:1] == [name]
    )
    assert "FAILED" in row, rehearsal.cell_text(code[-1])
    assert f"See {_exercise(name)}." in table, table


@pytest.mark.slow
@pytest.mark.parametrize("how", ["name", "index", "none", "delete"])
def test_07_reaches_the_self_check_whatever_alibi_attention_does(how, tmp_path):
    """The issue's case: ``slope`` for ``slopes`` in alibi_attention, which teaching cell
    ``identity-trick-code`` calls, and the other breaks of a function's body."""
    nb, name, _ = _learner("07_alibi", tmp_path, how, "alibi_attention")
    _run(nb, tmp_path)
    cells = {c.get("id"): c for c in nb.cells}
    said = " ".join(rehearsal.cell_text(cells["identity-trick-code"]).split())
    exercise = _exercise(name)
    expected = {
        "name": f"your `alibi_attention` ({exercise}) raised NameError: name 'slope' is not defined",
        "index": f"your `alibi_attention` ({exercise}) raised IndexError: list index out of range",
        "none": f"because your `alibi_attention` ({exercise}) returned None (is its return "
        "statement missing?)",
        "delete": f"`alibi_attention` ({exercise}) is not defined: its answer cell has not run, or the function was deleted",
    }[how]
    assert expected in said, said
    # the next cell that needs what this one computed says why it is missing
    later = " ".join(rehearsal.cell_text(cells["local-heads-code"]).split())
    assert "was not computed, because an earlier cell stopped at" in later, later
    assert "Traceback" not in later and "Error" not in later.split("stopped at")[0], later
    table = rehearsal.cell_text(cells["self_check"])
    row = next(line for line in table.splitlines() if line.split()[:1] == [name])
    assert "FAILED" in row, table
    assert f"See {exercise}." in " ".join(table.split())


@pytest.mark.slow
def test_an_endless_loop_the_learner_interrupts_does_not_stop_run_all(tmp_path):
    """alibi_attention loops forever; the learner interrupts the kernel (Kernel > Interrupt)
    while teaching cell ``identity-trick-code`` waits for it: Run All goes on."""
    nb, name, _ = _learner("07_alibi", tmp_path, "loop", "alibi_attention")
    # the self-check's own call of the endless function is stopped by the check's time limit
    with LearnerKernel(tmp_path) as kernel:
        ran = []
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            timer = None
            if cell.get("id") in ("identity-trick-code", "test_alibi_attention_no_content"):
                timer = threading.Timer(3.0, kernel.manager.interrupt_kernel)
                timer.start()
            ran.append(kernel.run(cell.source, cell.get("id", "")))
            if timer is not None:
                timer.cancel()
            if ran[-1].status != "ok":
                break
    assert [r.status for r in ran] == ["ok"] * len(ran), ran[-1]
    assert ran[-1].cell_id == "self_check"
    by_id = {r.cell_id: r.text for r in ran}
    said = " ".join(by_id["identity-trick-code"].split())
    assert f"your `alibi_attention` ({_exercise(name)}) was interrupted while it ran" in said, said
    row = next(line for line in by_id["self_check"].splitlines() if line.split()[:1] == [name])
    assert "FAILED" in row, by_id["self_check"]


@pytest.mark.slow
def test_the_korean_notebook_says_it_in_korean(tmp_path):
    """07_alibi_ko with the same typo: the teaching cells and the self-check speak Korean."""
    nb, name, _ = _learner("07_alibi_ko", tmp_path, "name")
    _run(nb, tmp_path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    said = " ".join(" ".join(rehearsal.cell_text(c) for c in code[:-1]).split())
    number = exercises.load()[name]["exercise"]
    assert f"여러분의 `{name}`(연습 문제 {number}: `{name}`) 함수에서 NameError" in said, said
    table = " ".join(rehearsal.cell_text(code[-1]).split())
    assert "자가 점검" in table and f"연습 문제 {number}: `{name}`" in table, table

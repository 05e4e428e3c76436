"""Run All goes on past an unwritten exercise (helpers.session), in a real IPython shell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import nbformat
import pytest
from nbclient import NotebookClient

from helpers.i18n import split_assignment
from tests.conftest import REPO

SHELL = textwrap.dedent(
    """
    import json, sys
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    out = []
    for cell in json.loads(sys.stdin.read()):
        result = shell.run_cell(cell)
        error = result.error_in_exec or result.error_before_exec
        out.append({"ok": result.success, "error": type(error).__name__ if error else None,
                    "result": repr(result.result)})
    print("RESULTS " + json.dumps(out))
    """
)

CELLS = [
    "import helpers\nhelpers.start()\nhelpers.start()",
    "def sinusoidal_pe(n, d):\n    raise NotImplementedError()\n",
    "rows = []\npe = sinusoidal_pe(3, 4)\nrows.append(pe)",
    "print(len(rows))",
    "x = 41\nx + 1",
    "1 / 0",
    "print('still here')",
    "raise NotImplementedError()",
    "def sinusoidal_pe(n, d):\n    return [[0.0] * d] * n\n",
    "pe = sinusoidal_pe(3, 4)\nlen(pe)",
    "len(pe) * 2",
    "get_ipython().ast_transformers",
]


def run_shell(env_extra: dict[str, str]) -> tuple[list[dict], str]:
    env = {k: v for k, v in os.environ.items() if k != "NBGRADER_EXECUTION"}
    env.update(env_extra)
    proc = subprocess.run(
        [sys.executable, "-c", SHELL],
        input=json.dumps(CELLS),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULTS "))
    return json.loads(line.removeprefix("RESULTS ")), proc.stdout


def test_a_learner_s_run_all_carries_on_past_an_unwritten_function():
    results, text = run_shell({})
    ok = [r["ok"] for r in results]
    assert ok == [True, True, True, True, True, False, True, True, True, True, True, True]
    assert "`sinusoidal_pe` is not written yet" in text
    # what the stopped cell assigned is gone, and the cell that needs it says why
    assert "`rows` was not computed, because an earlier cell stopped at `sinusoidal_pe`" in text
    assert results[4]["result"] == "42"  # a cell's last expression is still its result
    assert results[5]["error"] == "ZeroDivisionError"  # other errors stop as before
    assert "this cell is not written yet" in text
    assert results[9]["result"] == "3" and results[10]["result"] == "6"  # written: computed
    assert results[11]["result"].count("CarryOn") == 1  # start() twice: one hook


def test_nothing_changes_while_nbgrader_runs_the_notebook():
    results, text = run_shell({"NBGRADER_EXECUTION": "validate"})
    assert results[2]["error"] == "NotImplementedError"
    assert "not written yet" not in text
    assert "CarryOn" not in results[11]["result"]


LEARNER_IDS = sorted(p.parent.name for p in (REPO / "notebooks").glob("*/*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("nb_id", LEARNER_IDS)
def test_every_learner_notebook_runs_to_the_end_with_nothing_written(nb_id, tmp_path):
    """Run All on the notebook as released: every exercise unwritten, no cell stops it."""
    nb = nbformat.read(REPO / "notebooks" / nb_id / f"{nb_id}.ipynb", as_version=4)
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()  # raises CellExecutionError on the first cell that stops
    # what the notebook says, in its own language (06_rope_ko: Korean)
    note, heading = {
        "en": ("[not run to the end", "self-check of"),
        "ko": ("[끝까지 실행하지", "자가 점검"),
    }[split_assignment(nb_id)[1]]
    notes = [
        o.get("text", "")
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if note in o.get("text", "")
    ]
    assert notes, "no cell met an unwritten exercise: is helpers.start() in the first cell?"
    assert heading in "".join(o.get("text", "") for o in nb.cells[-1].outputs)

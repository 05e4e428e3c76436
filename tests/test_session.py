"""Run All goes on past an unwritten exercise (helpers.session), in a real IPython shell."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import nbformat
import pytest
from nbclient import NotebookClient

from helpers.i18n import split_assignment
from tests import rehearsal
from tests.conftest import REPO
from tests.learner_kernel import LearnerKernel

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
    # the self-check is a display (an HTML table, its text table as text/plain)
    last = nb.cells[-1].outputs
    shown = "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in last)
    assert heading in shown, shown


# --------------------------------------------------------------------------- a real kernel

START = "import helpers\nhelpers.start()"
FAILING = 'x = 1\nassert x == 2, "boom"'


def _arrow(text: str) -> str:
    """The line of a traceback that the arrow points at."""
    return next(line for line in text.splitlines() if re.match(r"-+> +\d+ ", line))


@pytest.mark.parametrize("nbgrader", [False, True])
def test_a_kernel_s_traceback_points_at_the_failing_line(nbgrader, tmp_path):
    env = {"NBGRADER_EXECUTION": "validate"} if nbgrader else {}
    with LearnerKernel(tmp_path, env) as kernel:
        assert kernel.run(START, "imports").status == "ok"
        ran = kernel.run(FAILING, "teaching")
        inside = kernel.run("def f():\n    return 1 / 0\n\n\ny = 2\nf()", "teaching-2")
    assert "Cell In[2], line 2" in ran.text, ran.text
    assert _arrow(ran.text).split() == ["---->", "2", "assert", "x", "==", "2,", '"boom"']
    assert "AssertionError: boom" in ran.text
    assert "Cell In[3], line 6" in inside.text, inside.text  # the call, then the function
    assert _arrow(inside.text).split() == ["---->", "6", "f()"]
    assert "line 2, in f" in inside.text and "ZeroDivisionError" in inside.text
    assert inside.status == "error"  # not a test: an error stops the notebook
    # a learner's failed assert goes on, loudly; nbgrader's validation still fails it
    assert ran.status == ("error" if nbgrader else "ok")
    assert ("[this test failed (see above)." in ran.text) is not nbgrader
    assert "What came back:\n  x = 1\n" in ran.text  # while validating too


PICK = (
    "def pick(xs, i):\n"
    "    if i < 0:\n"
    "        return xs[i]\n"
    "    return xs[i + 10]  # off by ten: an IndexError\n"
    "\n"
    "\n"
    "def first(xs):\n"
    "    return pick(xs, 0)\n"
)
REFUSES = (
    '"""pick: a negative index is refused."""\n'
    "try:\n"
    "    pick([1, 2], -1)\n"
    "except ValueError:\n"
    "    pass\n"
    "else:\n"
    '    raise AssertionError("pick([1, 2], -1) should raise ValueError")\n'
)


@pytest.mark.parametrize("nbgrader", [False, True])
def test_a_traceback_points_at_the_line_that_raised_in_a_statement_of_many_lines(
    nbgrader, tmp_path
):
    """A test written as try / except / else: the arrow is at the raise in its else, shown;
    a loop of a teaching cell: the arrow is at the line of its body that raised."""
    env = {"NBGRADER_EXECUTION": "validate"} if nbgrader else {}
    with LearnerKernel(tmp_path, env) as kernel:
        kernel.run(START, "imports")
        kernel.run(PICK, "answer_pick")
        test = kernel.run(REFUSES, "test_pick_refuses")
        loop = kernel.run("total = 0\nfor i in range(2):\n    total += 1 / 0\n", "teaching")
    raised = 'raise AssertionError("pick([1, 2], -1) should raise ValueError")'
    assert "Cell In[3], line 7" in test.text, test.text
    assert _arrow(test.text).split() == ["---->", "7", *raised.split()], test.text
    assert "AssertionError: pick([1, 2], -1) should raise ValueError" in test.text
    assert ("[this test failed (see above)." in test.text) is not nbgrader
    assert "Cell In[4], line 3" in loop.text, loop.text
    assert _arrow(loop.text).split() == ["---->", "3", "total", "+=", "1", "/", "0"], loop.text


@pytest.mark.parametrize("nbgrader", [False, True])
def test_an_error_inside_the_learner_s_function_shows_no_frame_of_the_course(nbgrader, tmp_path):
    """pick raises IndexError, called by a visible test (itself and through first), by a
    test that asserts while it handles pick's error, and by a teaching cell: each traceback
    goes from the cell to the line of pick that raised, through no frame of helpers."""
    env = {"NBGRADER_EXECUTION": "validate"} if nbgrader else {}
    with LearnerKernel(tmp_path, env) as kernel:
        kernel.run(START, "imports")
        kernel.run(PICK, "answer_pick")
        tests = [
            kernel.run(
                '"""pick: the first item."""\nassert pick([1, 2], 0) == 1, "1"', "test_pick"
            ),
            kernel.run(
                '"""first: the first item."""\nassert first([1, 2]) == 1, "1"', "test_first"
            ),
            kernel.run(
                '"""pick: its error names the index."""\n'
                "try:\n"
                "    pick([1, 2], 0)\n"
                "except IndexError as error:\n"
                '    assert "10" in str(error), "the message should say index 10"\n',
                "test_pick_message",
            ),
        ]
        teaching = kernel.run("xs = [1, 2, 3]\nprint(pick(xs, 1))", "teaching")
    shown = [*tests, teaching] if not nbgrader else tests  # validating: no carrying on
    for ran in shown:
        assert "IndexError: list index out of range" in ran.text, ran.text
        assert "Cell In[2], line 4, in pick(xs, i)" in ran.text, ran.text
        arrows = [ln for ln in ran.text.splitlines() if re.match(r"-+> +\d+ ", ln)]
        assert "----> 4     return xs[i + 10]  # off by ten: an IndexError" in arrows, ran.text
        assert "helpers" not in ran.text.replace("import helpers", ""), ran.text
        assert "session.py" not in ran.text and "keeping" not in ran.text, ran.text
        assert "skipping hidden" not in ran.text, ran.text
    assert "Cell In[2], line 8, in first(xs)" in tests[1].text, tests[1].text
    assert "During handling of the above exception" in tests[2].text, tests[2].text
    arrows = [ln for ln in tests[2].text.splitlines() if re.match(r"-+> +\d+ ", ln)]
    assert "----> 3     pick([1, 2], 0)" in arrows, tests[2].text  # the call, then the assert
    assert arrows[-1].split()[:3] == ["---->", "5", "assert"], tests[2].text
    if not nbgrader:
        assert "[this test failed (see above)." in tests[0].text
        assert "your `pick` raised IndexError" in teaching.text, teaching.text


def test_a_passing_test_of_many_lines_says_so_in_one_line(tmp_path):
    """The try / except / else test of a pick that refuses a negative index: one line."""
    right = PICK.replace(
        "    if i < 0:\n        return xs[i]\n", "    if i < 0:\n        raise ValueError(i)\n"
    )
    with LearnerKernel(tmp_path) as kernel:
        kernel.run(START, "imports")
        kernel.run(right, "answer_pick")
        test = kernel.run(REFUSES, "test_pick_refuses")
    assert test.status == "ok" and test.text == "[this test of pick passed.]\n", test.text


def test_a_failed_visible_test_lets_run_all_go_on_and_the_self_check_says_where_it_stopped(
    tmp_path,
):
    cells = [
        (START, "imports"),
        ("def double(x):\n    return x + x\n", "answer_double"),
        ('"""double: 2 gives 4."""\nassert double(2) == 5, "double(2) should be 5"', "test_d"),
        ('"""double: a list."""\ndouble(None)', "test_double_none"),  # any error of a test
        ("print('went on')", "after"),
        ("1 / 0", "teaching"),  # an error outside a test: Run All stops here
        ("from helpers import session\nprint(session.last_stop().where())", "by-hand"),
        ("print(sorted(session.failed_tests()))", "by-hand-2"),
    ]
    with LearnerKernel(tmp_path) as kernel:
        ran = [kernel.run(source, cell_id) for source, cell_id in cells]
    assert [r.status for r in ran] == ["ok", "ok", "ok", "ok", "ok", "error", "ok", "ok"]
    assert "----> 2 assert double(2) == 5" in ran[2].text and "[this test failed" in ran[2].text
    assert "TypeError" in ran[3].text and "[this test failed" in ran[3].text
    assert ran[4].text == "went on\n"
    assert ran[6].text.strip() == "cell [6] (1 / 0)"
    assert ran[7].text.strip() == "['double']"


def _rope_learner(tmp_path) -> nbformat.NotebookNode:
    """06_rope answered with the solutions, but a clockwise apply_rope and turns unwritten."""

    path = tmp_path / "06_rope.ipynb"
    rehearsal.clockwise_rope_learner(
        REPO / "notebooks" / "06_rope" / "06_rope.ipynb",
        REPO / "source" / "06_rope" / "06_rope.ipynb",
        path,
    )
    return nbformat.read(path, as_version=4)


@pytest.mark.slow
def test_run_all_of_06_rope_with_a_wrong_and_an_unfinished_function_reaches_the_self_check(
    tmp_path,
):
    nb = _rope_learner(tmp_path)
    with LearnerKernel(tmp_path) as kernel:
        ran = kernel.run_all(nb)
    by_id = {r.cell_id: r for r in ran}
    assert [r.status for r in ran] == ["ok"] * len(ran)
    assert ran[-1].cell_id == "self_check", [r.cell_id for r in ran]
    test = by_id["test_apply_rope_pairs_counterclockwise"].text
    assert "AssertionError" in test and "[this test failed (see above)." in test
    # what came back, next to what was expected: (cos 1, -sin 1), not (cos 1, sin 1)
    assert "What came back:\n  r = [0.540302, -0.841471, 0.995004, -0.099833]\n" in test, test
    assert "= [0.540302, 0.841471, 0.995004, 0.099833]\n" in test
    assert "largest difference 1.68 at index 1" in test
    count = test.split("Cell In[")[1].split("]")[0]
    # rope_score is right, but calls the wrong apply_rope: its test says which comes first
    score = by_id["test_rope_score_offset_only"].text
    assert "What came back:\n  s = -0.7127716817\n" in score, score
    assert count
    assert (
        "rope_score calls your apply_rope, which is wrong now: apply_rope is wrong on the "
        "values this test gave it" in " ".join(score.split())
    ), score
    assert "(clockwise rotation). Fix apply_rope" in " ".join(score.split()), score
    table = by_id["self_check"].text
    flat = " ".join(table.split())
    assert "7 of 9 graded functions passed" in table.splitlines()[0], table
    assert "clockwise rotation" in flat
    rows = {line.split()[0]: line for line in table.splitlines()[3:] if line[:1].strip()}
    assert rows["turns"].split()[1] == "FAILED" and rows["rope_score"].split()[1] == "passed"
    # every failing row points to its exercise; each line is shown once
    assert "See Exercise 4: `apply_rope`." in flat and "See Exercise 6: `turns`." in flat
    assert flat.count("partly right") == 1, table
    assert "\nturns:\n  Write the body of turns in its answer cell" in table, table
    assert all(len(line) <= 100 for line in table.splitlines() if "replay with" not in line)


@pytest.mark.slow
def test_a_stopped_run_all_says_in_the_self_check_which_cell_stopped_it(tmp_path):
    nb = _rope_learner(tmp_path)
    recap = next(c for c in nb.cells if c.get("id") == "recap-check")
    recap.source = "print(rotate_pair(1.0, 0.0))  # a typo: the angle is missing"
    with LearnerKernel(tmp_path) as kernel:
        ran = kernel.run_all(nb)
        assert ran[-1].cell_id == "recap-check" and ran[-1].status == "error"
        count = ran[-1].text.split("Cell In[")[1].split("]")[0]
        table = kernel.run(nb.cells[-1].source, "self_check").text
    flat = " ".join(table.split())
    assert (
        "rope_score is not defined: its cell has not run since the run stopped at "
        f"cell [{count}]. See Exercise 5: `rope_score`." in flat
    ), table
    assert (
        f"cell [{count}] (print(rotate_pair(1.0, 0.0)) # a typo: the angle is missing) stopped "
        "with TypeError: rotate_pair() missing 1 required positional argument: 'angle'." in flat
    ), table
    # the five functions after the stop share one block of details
    assert "rope_score, turns, slow_pairs, rope_half, interleaved_to_half:" in table, table


@pytest.mark.slow
def test_nbgrader_validate_still_fails_a_wrong_visible_test(tmp_path):
    from tests.test_notebooks import (
        course_copy,
        nb_path,
        nbgrader_validate,
        validation_failures,
        written_answer_cells,
    )

    course = course_copy(REPO, tmp_path, ["06_rope"], learner=True)
    nbformat.write(_rope_learner(tmp_path), nb_path(course, "notebooks", "06_rope"))
    status, output = nbgrader_validate(nb_path(course, "notebooks", "06_rope"), course)
    assert status == 0, output
    # apply_rope's and rope_score's visible tests, turns' and slow_pairs' (turns unwritten),
    # and the written answers, left as released
    written = written_answer_cells(nb_path(course, "notebooks", "06_rope"))
    assert written >= 1
    assert validation_failures(output) == 4 + written, output
    assert "at d = 4, base 100, pos 1" in output
    # the Validate button's report says what came back, and which function to fix first
    flat = " ".join(output.split())
    assert "What came back: r = [0.540302, -0.841471, 0.995004, -0.099833]" in flat, output
    assert "rope_score calls your apply_rope, which is wrong now" in flat, output


def _visible_tests(nb_id: str):
    nb = nbformat.read(REPO / "source" / nb_id / f"{nb_id}.ipynb", as_version=4)
    for c in nb.cells:
        meta = c.metadata.get("nbgrader", {})
        if c.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            yield c.id, c.source.split("### BEGIN HIDDEN TESTS")[0]


SOURCE_IDS = sorted(p.parent.name for p in (REPO / "source").glob("*/*.ipynb"))


@pytest.mark.parametrize("nb_id", SOURCE_IDS)
def test_every_visible_assert_says_what_was_expected(nb_id):
    import ast

    silent = []
    for cell_id, visible in _visible_tests(nb_id):
        for node in ast.walk(ast.parse(visible)):
            if isinstance(node, ast.Assert) and node.msg is None:
                silent.append(f"{cell_id}, line {node.lineno}: {ast.unparse(node)}")
            raised = node.exc if isinstance(node, ast.Raise) else None
            is_assertion = getattr(getattr(raised, "func", None), "id", "") == "AssertionError"
            if is_assertion and not raised.args:
                silent.append(f"{cell_id}, line {node.lineno}: {ast.unparse(node)}")
    assert not silent, "asserts without a message:\n" + "\n".join(silent)


@pytest.mark.slow
@pytest.mark.parametrize(
    "nb_id", [*(i for i in LEARNER_IDS if split_assignment(i)[1] == "en"), "06_rope_ko"]
)
def test_a_wrong_answer_s_visible_tests_show_what_came_back(nb_id, tmp_path):
    """Every answer wrong (each result shifted by 0.5): every visible test whose assert
    fails shows the values it compared, in the notebook's language."""

    source = REPO / "source" / nb_id / f"{nb_id}.ipynb"
    path = tmp_path / f"{nb_id}.ipynb"
    rehearsal.make_submission(
        REPO / "notebooks" / nb_id / f"{nb_id}.ipynb",
        source,
        path,
        broken=rehearsal.answer_ids(source),
        how="wrong",
    )
    label = {"en": "What came back:", "ko": "돌아온 값:"}[split_assignment(nb_id)[1]]
    with LearnerKernel(tmp_path) as kernel:
        ran = kernel.run_all(nbformat.read(path, as_version=4))
    failed = [
        r
        for r in ran
        if r.cell_id.startswith("test_")
        and "AssertionError" in r.text
        and _arrow(r.text).split()[2] == "assert"
    ]
    assert failed, f"no visible test of {nb_id} failed: {[r.cell_id for r in ran]}"
    quiet = [r.cell_id for r in failed if f"\n{label}\n  " not in r.text]
    assert not quiet, f"failed without showing what came back: {quiet}"


# --------------------------------------------------------------------------- the callee note


def _cells_of(nb_id: str) -> dict[str, str]:
    """The code cells of a source notebook by id, solutions in, hidden tests left out."""
    nb = nbformat.read(REPO / "source" / nb_id / f"{nb_id}.ipynb", as_version=4)
    return {
        c.id: c.source.split("### BEGIN HIDDEN TESTS")[0] for c in nb.cells if c.cell_type == "code"
    }


DIVIDING_BY_D_K = ("/ math.sqrt(Q.shape[-1])", "/ Q.shape[-1]")
NO_MAX = ("    m = np.where(np.isfinite(m), m, 0.0)", "    m = 0.0 * m")
POSITIONS_FIRST = (
    "self_attention(X[p] + P, Wq, Wk, Wv)",
    "self_attention((X + P)[p], Wq, Wk, Wv)",
)


def _wrong(source: str, change: tuple[str, str]) -> str:
    assert change[0] in source
    return source.replace(*change)


@pytest.mark.parametrize("nb_id", ["01_order", "01_order_ko"])
def test_the_callee_note_goes_by_what_is_wrong_now(nb_id, tmp_path):
    """01: attention fixed and run again (its test not): the failing order_gap_with_pe is
    its own fault, no callee is named; while attention is still wrong, attention is named and
    self_attention (right, with the reference's attention) is not. 01_order_ko: attention
    divides by d_k and softmax has no max subtraction: softmax is right on every value
    attention gives it, so attention's failing test does not name softmax."""
    cells = _cells_of(nb_id)
    note = {"01_order": "calls your", "01_order_ko": "함수를 부르는데"}[nb_id]
    wrong_attention = _wrong(cells["answer_attention"], DIVIDING_BY_D_K)
    wrong_gap = _wrong(cells["answer_order_gap_with_pe"], POSITIONS_FIRST)
    with LearnerKernel(tmp_path) as kernel:
        run = kernel.run
        assert run(cells["imports"], "imports").status == "ok"
        run(_wrong(cells["answer_softmax"], NO_MAX), "answer_softmax")
        softmax_test = run(cells["test_softmax_stable"], "test_softmax_stable")
        run(wrong_attention, "answer_attention")
        attention_test = run(cells["test_attention_scaled"], "test_attention_scaled")
        run(cells["answer_self_attention"], "answer_self_attention")
        self_test = run(cells["test_self_attention"], "test_self_attention")
        run(cells["preview_pe"], "preview_pe")
        run(wrong_gap, "answer_order_gap_with_pe")
        gap_test = run(cells["test_order_gap_with_pe_after_shuffle"], "test_gap")
        run(cells["answer_attention"], "answer_attention")  # fixed; its test not run again
        again = run(cells["test_order_gap_with_pe_after_shuffle"], "test_gap")
    assert "AssertionError" in softmax_test.text
    assert "AssertionError" in attention_test.text, attention_test.text
    assert note not in attention_test.text, attention_test.text  # softmax is not blamed
    assert "AssertionError" in self_test.text
    named = [ln for ln in self_test.text.splitlines() if note in ln]
    assert len(named) == 1 and named[0].startswith("self_attention "), self_test.text
    assert "attention" in named[0].replace("self_attention", ""), named[0]
    # attention still wrong: named, with what it got wrong now; self_attention is right
    lines = [ln for ln in gap_test.text.splitlines() if note in ln]
    assert len(lines) == 1 and "attention" in lines[0] and "self_attention," not in lines[0], (
        gap_test.text
    )
    assert "dividing by d_k" in lines[0] or "d_k" in lines[0], lines[0]
    # attention fixed: the test still fails (order_gap_with_pe's own bug); no callee named
    assert "AssertionError" in again.text and note not in again.text, again.text


# --------------------------------------------------------------------------- answer cells that fail


def _source_nb(nb_id: str) -> nbformat.NotebookNode:
    return nbformat.read(REPO / "source" / nb_id / f"{nb_id}.ipynb", as_version=4)


def _cell(nb, cell_id: str):
    return next(c for c in nb.cells if c.get("id") == cell_id)


def _run(nb, tmp_path) -> nbformat.NotebookNode:
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()  # raises CellExecutionError on the first cell that stops Run All
    return nb


def _errors(cell) -> list[str]:
    return [o.ename for o in cell.outputs if o.output_type == "error"]


@pytest.mark.slow
def test_run_all_reaches_the_self_check_whatever_an_answer_cell_does(tmp_path):
    """01_order run by nbclient: a syntax error, an endless loop, endless output and an
    exception in four answer cells. Each cell shows its error; Run All goes on; the self-check
    names each cell and what to fix."""
    nb = _source_nb("01_order")
    nb.cells.insert(
        1,
        nbformat.v4.new_code_cell(
            "import helpers.session\n"
            "helpers.session.ANSWER_CELL_SECONDS = 3\n"
            "helpers.session.ANSWER_CELL_OUTPUT = 20_000"
        ),
    )
    softmax = _cell(nb, "answer_softmax")
    softmax.source = "def softmax(x, axis=-1):\n    return np.exp(x) / np.sum(np.exp(x)\n"
    _cell(nb, "answer_self_attention").source += "\nwhile True:\n    pass\n"
    _cell(nb, "answer_permutation_gap").source += "\nwhile True:\n    print('gap')\n"
    _cell(nb, "answer_order_gap_with_pe").source += "\nraise RuntimeError('a stray line')\n"
    _run(nb, tmp_path)
    softmax = _cell(nb, "answer_softmax")
    assert _errors(softmax) == ["SyntaxError"], rehearsal.cell_text(softmax)
    assert (
        "[this answer cell stopped with an error (see above), so it defines nothing: softmax."
        in (rehearsal.cell_text(softmax))
    )
    assert _errors(_cell(nb, "answer_self_attention")) == ["Overran"]
    assert "ran for more than 3 s" in rehearsal.cell_text(_cell(nb, "answer_self_attention"))
    gap = _cell(nb, "answer_permutation_gap")
    assert _errors(gap) == [
        "Overran"
    ] and "printed more than 20000 characters" in rehearsal.cell_text(gap)
    assert sum(len(o.get("text", "")) for o in gap.outputs) < 30_000
    assert _errors(_cell(nb, "answer_order_gap_with_pe")) == ["RuntimeError"]
    # a later cell that needs softmax says which cell to fix, and Run All goes on
    assert (
        "`softmax` is not defined, because the cell that defines it, cell ["
        in rehearsal.cell_text(_cell(nb, "test_softmax_stable"))
    )
    table = " ".join(rehearsal.cell_text(nb.cells[-1]).split())
    assert "self-check of 01_order" in table, table
    for name, error in (
        ("softmax", "SyntaxError: '(' was never closed (line 2)"),
        ("self_attention", "Overran: this answer cell ran for more than 3 s"),
        ("permutation_gap", "Overran: this answer cell printed more than 20000 characters"),
        ("order_gap_with_pe", "RuntimeError: a stray line"),
    ):
        assert f"{name} is not defined: the answer cell that defines it, cell [" in table
        assert f"did not run to its end: {error}" in table, (name, table)
    assert "Fix that cell and run it again; it defines softmax." in table


@pytest.mark.slow
@pytest.mark.parametrize("nb_id", ["12_rope_today", "12_rope_today_ko"])
def test_a_recap_pasted_with_a_missing_constant_does_not_stop_run_all(nb_id, tmp_path):
    """12's recap pasted from 06 as ``def thetas(d, base=THETA_BASE)``: NameError, shown; Run
    All reaches the self-check, which names the recap cell."""
    nb = _source_nb(nb_id)
    recap = _cell(nb, "recap_rope")
    assert "def thetas(d, base=10000.0)" in recap.source
    recap.source = recap.source.replace(
        "def thetas(d, base=10000.0)", "def thetas(d, base=THETA_BASE)"
    )
    _run(nb, tmp_path)
    assert _errors(recap) == ["NameError"], rehearsal.cell_text(recap)
    last = " ".join(rehearsal.cell_text(nb.cells[-1]).split())
    heading = {"12_rope_today": "self-check of", "12_rope_today_ko": "자가 점검"}[nb_id]
    assert heading in last, last
    assert "NameError: name 'THETA_BASE' is not defined" in last, last
    assert "apply_rope, thetas." in last, last


@pytest.mark.slow
def test_nbgrader_validate_still_fails_an_answer_cell_with_a_syntax_error(tmp_path):
    from tests.test_notebooks import course_copy, nb_path, nbgrader_validate

    course = course_copy(REPO, tmp_path, ["01_order"], learner=True)
    path = nb_path(course, "notebooks", "01_order")
    nb = nbformat.read(path, as_version=4)
    _cell(nb, "answer_softmax").source = "def softmax(x, axis=-1):\n    return np.exp(x\n"
    nbformat.write(nb, path)
    status, output = nbgrader_validate(path, course)
    assert status == 0, output
    # softmax's test fails: softmax is not defined (its cell did not compile)
    assert "VALIDATION FAILED" in output.upper(), output
    assert "NameError: name 'softmax' is not defined" in output, output
    assert "[this answer cell stopped" not in output  # nothing is carried while validating


# --------------------------------------------------------------------------- a wrong type


LIST_SOFTMAX = (
    "def softmax(x, axis=-1):\n"
    "    x = np.asarray(x, dtype=np.float64)\n"
    "    if x.ndim == 0:\n"
    "        raise ValueError('x must have at least one dimension')\n"
    "    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
    "    return (e / e.sum(axis=axis, keepdims=True)).tolist()  # a list, not an array\n"
)
WRONG_TYPE = "softmax returned a list of 2 numbers where a numpy array is asked for"


def test_a_list_where_an_array_is_asked_for_gets_one_verdict_everywhere(tmp_path):
    """softmax returning a list: the visible test, the self-check and the isolated grader
    say the same words (before: AttributeError in the test, "passed" in the self-check)."""
    from helpers.teacher import isolated

    cells = _cells_of("01_order")
    with LearnerKernel(tmp_path) as kernel:
        kernel.run(cells["imports"], "imports")
        kernel.run(LIST_SOFTMAX, "answer_softmax")
        test = kernel.run(cells["test_softmax_stable"], "test_softmax_stable")
        table = kernel.run('self_check("01_order")', "self_check").text
    flat = " ".join(test.text.split())
    assert "AttributeError: 'list' object has no attribute 'sum'" in flat  # still shown
    assert WRONG_TYPE in flat, test.text
    row = next(line for line in table.splitlines() if line.startswith("softmax "))
    assert row.split()[1] == "partly" or row.split()[1] == "FAILED", table
    assert "returned a list of" in " ".join(table.split()), table
    nb = _source_nb("01_order")
    _cell(nb, "answer_softmax").source = LIST_SOFTMAX
    report = isolated.check_notebook(nb, seed=3, names=["softmax"])
    assert not report["softmax"].passed
    assert "where a numpy array is asked for" in report["softmax"].message, report[
        "softmax"
    ].message


# --------------------------------------------------------------------------- the self-check's table


def _display(cell) -> dict:
    return next(o.data for o in cell.outputs if o.output_type == "display_data")


@pytest.mark.slow
def test_the_self_check_is_an_html_table_of_functions_with_the_learner_s_warnings(tmp_path):
    """06_rope run by nbclient, turns wrong and warning, slow_pairs raising a message with
    markup: the self-check is a display with text/html (a coloured verdict per row, details to
    open, every text escaped) and text/plain; DIM and THETA_BASE are no rows; a row's sentence
    ends with a full stop before "See Exercise"; the warning is under turns, not on stderr."""
    nb = _source_nb("06_rope")
    turns = _cell(nb, "answer_turns")
    turns.source = (
        "def turns(d, delta, base=THETA_BASE):\n"
        "    big = np.exp(np.float64(1000.0))  # overflows: a RuntimeWarning\n"
        "    return delta * thetas(d, base) + 0.0 * big\n"
    )
    _cell(nb, "answer_slow_pairs").source = (
        "def slow_pairs(d, delta, base=THETA_BASE):\n"
        "    if d != 64:  # the notebook's cells use d = 64; the grader's cases others too\n"
        "        raise ValueError('<script>alert(1)</script> & more')\n"
        "    return int(np.count_nonzero(delta * thetas(d, base) / (2 * np.pi) < 1.0))\n"
    )
    _run(nb, tmp_path)
    last = nb.cells[-1]
    assert not [o for o in last.outputs if o.get("name") == "stderr"], last.outputs
    data = _display(last)
    text, page = data["text/plain"], data["text/html"]
    assert "7 of 9 graded functions passed" in text.splitlines()[0], text
    rows = [line.split()[0] for line in text.splitlines()[3:] if line[:1].strip()]
    assert "DIM" not in rows and "THETA_BASE" not in rows, text
    assert "DIM" not in page and "THETA_BASE" not in page
    flat = " ".join(text.split())
    assert re.search(r"\. See Exercise 6: `turns`\.", flat), flat
    assert "Your turns warned: RuntimeWarning: overflow encountered in exp (line 2)" in flat
    assert page.count("<tr data-verdict=") == 9
    assert '<tr data-verdict="failed">' in page and '<tr data-verdict="passed">' in page
    assert "color: #cf222e" in page and "color: #1a7f37" in page
    assert "<details><summary>details</summary>" in page
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in page


def test_the_self_check_prints_its_text_table_in_a_terminal(capsys):
    """Outside a kernel (the check command, a terminal) the text table is printed."""
    from helpers.report import Row, html, show

    rows = [Row("softmax", "FAILED", False, "expected -0.667823", "See Exercise 1: `softmax`.")]
    show("the text", html("header", rows))
    assert capsys.readouterr().out == "the text\n"
    assert "expected -0.667823. See Exercise 1" in html("header", rows)


def test_a_passing_visible_test_says_so_in_one_line():
    """A test that prints nothing could be one that never ran: a passing one says it passed."""
    cells = [
        "import helpers\nhelpers.start()",
        "def double(x):\n    return 2 * x\n",
        '"""double: twice its input."""\nassert double(2) == 4',
        '"""double: twice its input."""\nassert double(2) == 5, "double(2) should be 5"',
    ]
    script = (
        "import json, sys\nfrom IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "for cell in json.loads(sys.stdin.read()):\n"
        "    print('CELL')\n    shell.run_cell(cell)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "NBGRADER_EXECUTION"}
    out = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(cells),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    ).stdout.split("CELL\n")
    assert out[3] == "[this test of double passed.]\n", out[3]
    assert "passed" not in out[4] and "[this test failed" in out[4], out[4]

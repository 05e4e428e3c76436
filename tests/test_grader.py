"""The grading engine without nbgrader: in-kernel grade/self_check, the isolated worker, the CLI.

The notebook is the fixture of tests/fixtures/grading_course.py (five functions of the
catalogue, correct answers and one wrong answer per catalogued mistake written
independently of helpers.mistakes). Expected numbers come from the spec's seeds
(e.g. 5.69443, slow pairs 32, 28, 19, 9), never from the code under test.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest

from helpers import grader
from helpers.teacher import codec, isolated, kernel, notebook
from helpers.teacher.checks import CHECKS
from tests.fixtures import grading_course as gc

REPO = Path(__file__).resolve().parents[1]


def _answers_namespace(answers: dict[str, str]) -> dict:
    """The namespace a kernel would have after running the answer cells of these bodies."""
    nb = gc.edit(gc.source_notebook(), answers=answers)
    source, _ = notebook.answer_source(nb)
    ns: dict = {}
    exec(compile(source, "<answers>", "exec"), ns)  # noqa: S102  (our own fixture answers)
    return ns


# --------------------------------------------------------------------------- in the kernel


def test_grade_passes_a_correct_answer_and_prints_one_line(capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    ns = _answers_namespace(gc.SOLUTIONS)
    grader.grade("apply_rope", namespace=ns)
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("apply_rope: all ") and "passed" in out[0]


def test_grade_finds_the_function_in_the_callers_globals(capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    ns = _answers_namespace(gc.SOLUTIONS)
    ns["grade"] = grader.grade
    exec("grade('turns')", ns)  # noqa: S102  (a cell calling grade in the notebook namespace)
    assert "turns: all" in capsys.readouterr().out


def test_grade_on_a_stub_says_not_written_yet(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    ns = _answers_namespace({"turns": "raise NotImplementedError()"})
    with pytest.raises(kernel.WrongAnswer) as info:
        grader.grade("turns", namespace=ns)
    assert str(info.value).splitlines()[0] == (
        "turns is not written yet (it raises NotImplementedError)."
    )


@pytest.mark.parametrize(
    ("function", "mistake", "body"), gc.MISTAKES, ids=[f"{f}-{m}" for f, m, _ in gc.MISTAKES]
)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the learner's overflowing softmax
def test_grade_names_each_catalogued_mistake(monkeypatch, function, mistake, body):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    ns = _answers_namespace({**gc.SOLUTIONS, function: body})
    with pytest.raises(kernel.WrongAnswer) as info:
        grader.grade(function, seed=7, namespace=ns)
    message = str(info.value)
    assert mistake in message
    assert "seed 7" in message and "grade(" in message
    # The traceback IPython shows is the message alone, nothing of the grading code.
    rendered = info.value._render_traceback_()
    assert rendered[0].startswith("WrongAnswer: ")
    assert not any(
        "grader.py" in line or "kernel.py" in line or "Traceback" in line for line in rendered
    )


def test_grade_under_autograde_only_prints(capsys, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    ns = _answers_namespace({"turns": "raise NotImplementedError()"})
    grader.grade("turns", namespace=ns)
    assert capsys.readouterr().out.strip() == "turns: graded outside the kernel"


def test_grade_in_the_kernel_times_out_an_endless_loop(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    check = CHECKS["turns"]
    monkeypatch.setitem(CHECKS, "turns", type(check)(**{**check.__dict__, "timeout": 0.5}))
    ns = _answers_namespace({"turns": "while True:\n    pass"})
    start = time.monotonic()
    with pytest.raises(kernel.WrongAnswer, match="did not finish within 0.5 s"):
        grader.grade("turns", namespace=ns)
    assert time.monotonic() - start < 5


def test_grade_rejects_an_unknown_name():
    with pytest.raises(ValueError, match="name must be a graded function"):
        grader.grade("no_such_function", namespace={})


def test_self_check_prints_a_table_and_never_raises(capsys, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    from helpers import reference

    ns = {name: getattr(reference, name) for name in reference.__all__}
    ns["turns"] = lambda d, delta, base=10000.0: delta * reference.thetas(d, base)  # no 2 pi
    ns["rope_half"] = lambda vec, pos, base=10000.0: (_ for _ in ()).throw(NotImplementedError)
    del ns["slow_pairs"]
    report = grader.self_check("06_rope", seed=3, namespace=ns)
    out = capsys.readouterr().out
    verdicts = {r.name: r.passed for r in report.results}
    assert verdicts["apply_rope"] and verdicts["DIM"] and verdicts["rope_score"]
    assert not verdicts["turns"] and not verdicts["rope_half"] and not verdicts["slow_pairs"]
    assert "not divided by 2*pi" in report["turns"].message
    assert "not written yet" in report["rope_half"].message
    assert "not defined" in report["slow_pairs"].message
    assert "function" in out.splitlines()[1] and "verdict" in out.splitlines()[1]
    assert "FAILED" in out and "passed" in out


def test_self_check_without_the_teacher_modules_says_so():
    code = (
        "import sys\nsys.modules['helpers.teacher'] = None\n"
        "from helpers.grader import grade, self_check\n"
        "print(repr(self_check('06_rope')))\ngrade('apply_rope')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "NBGRADER_EXECUTION"}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert "grading happens on the teacher's side" in lines[0]
    assert lines[1] == "None"
    assert "grading happens on the teacher's side" in lines[2]


def test_importing_the_grader_has_no_side_effects():
    code = (
        "import sys, signal\nbefore = signal.getsignal(signal.SIGALRM)\n"
        "import helpers.grader\n"
        "assert not [m for m in sys.modules if m.startswith('helpers.teacher')]\n"
        "import helpers.teacher.nbgrader_plugin\n"
        "assert signal.getsignal(signal.SIGALRM) == before\nprint('ok')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.stdout.strip() == "ok", proc.stderr


# --------------------------------------------------------------------------- isolated


def test_check_notebook_passes_the_correct_answers_20_times():
    nb = gc.source_notebook()
    seeds = set()
    for _ in range(20):
        report = isolated.check_notebook(nb)
        assert report.passed, report.table() + "\n" + "\n".join(r.message for r in report.results)
        assert [r.name for r in report.results] == list(gc.FUNCTIONS)
        seeds.add(report.seed)
    assert len(seeds) > 1  # a fresh seed each run


def test_check_notebook_stubs_fail_every_function():
    nb = gc.edit(
        gc.source_notebook(), answers={f: "raise NotImplementedError()" for f in gc.FUNCTIONS}
    )
    report = isolated.check_notebook(nb)
    assert not any(r.passed for r in report.results)
    assert all("not written yet" in r.message for r in report.results)


@pytest.mark.parametrize(
    ("function", "mistake", "body"), gc.MISTAKES, ids=[f"{f}-{m}" for f, m, _ in gc.MISTAKES]
)
def test_check_notebook_names_each_mistake_and_fails_only_that_function(function, mistake, body):
    nb = gc.edit(gc.source_notebook(), answers={function: body})
    report = isolated.check_notebook(nb, seed=11)
    failed = {r.name for r in report.results if not r.passed}
    assert failed == {function}
    result = report[function]
    assert result.mistake == mistake
    assert f"known mistake ({mistake})" in result.message
    assert "--seed 11" in result.message and "See " in result.message


@pytest.mark.parametrize("name", sorted(gc.TAMPERS))
def test_tamper_attempts_gain_nothing(name):
    nb = gc.tamper_notebook(gc.source_notebook(), name)
    _, lost, words = gc.TAMPERS[name]
    report = isolated.check_notebook(nb)
    failed = {r.name for r in report.results if not r.passed}
    expected = set(gc.FUNCTIONS) if lost == "all" else lost
    assert failed == expected, report.table()
    for fn in failed:
        assert words in report[fn].message, report[fn].message


def test_the_kernel_and_the_worker_replay_the_same_cases(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    body = next(b for f, m, b in gc.MISTAKES if f == "turns")
    # Wrong only on the random cases (d != 64): the first failing case is a random one.
    right = textwrap.indent(textwrap.dedent(gc.SOLUTIONS["turns"]).strip(), "    ")
    wrong = f"if d == 64 or delta == 0:\n{right}\n{textwrap.dedent(body).strip()}"
    nb = gc.edit(gc.source_notebook(), answers={"turns": wrong})
    first = isolated.check_notebook(nb, seed=424242)["turns"].message
    again = isolated.check_notebook(nb, seed=424242)["turns"].message
    assert first == again
    ns = _answers_namespace({"turns": wrong})
    with pytest.raises(kernel.WrongAnswer) as info:
        grader.grade("turns", seed=424242, namespace=ns)
    assert str(info.value).splitlines()[0] == first.splitlines()[0]
    assert "d=64" not in first.splitlines()[0]


def test_worker_blocks_helpers_even_without_the_sandbox(monkeypatch, capfd):
    monkeypatch.setenv("PE_COURSE_SANDBOX", "off")
    for name in ("import_reference_inside", "read_reference_source"):
        nb = gc.tamper_notebook(gc.source_notebook(), name)
        report = isolated.check_notebook(nb)
        failed = {r.name for r in report.results if not r.passed}
        assert failed == gc.TAMPERS[name][1]
        assert "the course's own code" in report[next(iter(failed))].message


def test_worker_refuses_a_relative_os_open_through_a_folder_descriptor():
    parent = str(REPO)
    body = (
        f"import os\nfd = os.open({parent!r}, os.O_RDONLY)\n"
        "os.read(os.open('helpers/teacher/reference/rope.py', os.O_RDONLY, dir_fd=fd), 100)\n"
        "return delta * base ** (-2.0 * np.arange(d // 2) / d) / (2 * np.pi)"
    )
    nb = gc.edit(gc.source_notebook(), answers={**gc.SOLUTIONS, "turns": body})
    report = isolated.check_notebook(nb)
    assert {r.name for r in report.results if not r.passed} == {"turns"}
    assert "the course's own code" in report["turns"].message


def test_answer_source_comments_out_magics_and_shell_lines():
    extra = "%matplotlib inline\n!echo hello\n    %time x = 1\n"
    nb = gc.edit(
        gc.source_notebook(),
        sources={
            "turns": extra + f"{gc.FUNCTIONS['turns'][1]}\n{gc._body(gc.SOLUTIONS['turns'])}\n"
        },
    )
    source, starts = notebook.answer_source(nb)
    assert source.startswith("import math\nimport numpy as np\n")
    assert "# %matplotlib inline" in source and "# !echo hello" in source
    assert [gid for _, gid in starts] == [f"answer_{f}" for f in gc.FUNCTIONS]
    report = isolated.check_notebook(nb)
    assert report.passed, report.table()


def test_an_answer_cell_that_fails_costs_only_its_functions_and_says_where():
    """A SyntaxError, an exception at the top level or os._exit in the turns cell: turns
    fails with what went wrong and where; every other function keeps its points."""
    for source, words in (
        ("def turns(d, delta:\n    pass\n", "SyntaxError at line 1"),
        ("x = 1\nraise RuntimeError('boom')\n", "RuntimeError at line 2: boom"),
        ("import os\nos._exit(3)\n", "exited with code 3"),
    ):
        nb = gc.edit(gc.source_notebook(), sources={"turns": source})
        report = isolated.check_notebook(nb)
        assert {r.name for r in report.results if not r.passed} == {"turns"}, report.table()
        assert "the answer cell answer_turns could not be run" in report["turns"].message
        assert words in report["turns"].message


def test_a_hanging_or_patching_cell_costs_only_its_functions():
    """An endless loop at the top level of one cell and a cell that replaces a built-in."""
    loop = "while True:\n    pass\n" + gc.answer_cell_source("turns", gc.SOLUTIONS["turns"])
    patch = "import builtins\nbuiltins.isinstance = lambda *a: True\n" + gc.answer_cell_source(
        "alibi_bias", gc.SOLUTIONS["alibi_bias"]
    )
    nb = gc.edit(gc.source_notebook(), sources={"turns": loop, "alibi_bias": patch})
    report = isolated.check_notebook(nb)
    assert {r.name for r in report.results if not r.passed} == {"turns", "alibi_bias"}
    assert "did not finish within" in report["turns"].message
    assert "builtins.isinstance" in report["alibi_bias"].message
    assert report["softmax"].passed and report["apply_rope"].passed


def test_a_memory_bomb_hits_the_memory_limit_and_loses_only_its_function():
    # 8 GiB at once: more than the worker's address space limit (3 GiB), less than the host.
    nb = gc.edit(gc.source_notebook(), answers={**gc.SOLUTIONS, "turns": "return np.ones(1 << 30)"})
    start = time.monotonic()
    report = isolated.check_notebook(nb)
    assert {r.name for r in report.results if not r.passed} == {"turns"}
    assert "MemoryError" in report["turns"].message
    assert time.monotonic() - start < 8


def test_function_for_grade_id_takes_the_longest_name():
    names = ["dot", "dot_profile", "rope_score", "apply_rope"]
    assert notebook.function_for_grade_id("test_dot_profile_seed", names) == "dot_profile"
    assert notebook.function_for_grade_id("test_dot", names) == "dot"
    assert notebook.function_for_grade_id("test_apply_rope_batch", names) == "apply_rope"
    assert notebook.function_for_grade_id("imports", names) is None


def test_codec_round_trips_plain_data_and_refuses_objects():
    value = {
        "a": (np.arange(6.0).reshape(2, 3), [1, 2.5, None]),
        "n": np.int64(3),
        "e": np.zeros((0, 4)),
        "s": "x",
        "nan": math.nan,
        2: np.float32(1.5),
    }
    back = codec.decode(json.loads(json.dumps(codec.encode(value))))
    assert back["a"][0].shape == (2, 3) and back["a"][0].dtype == np.float64
    assert isinstance(back["a"], tuple) and back["a"][1] == [1, 2.5, None]
    assert type(back["n"]) is np.int64 and back["e"].shape == (0, 4)
    assert math.isnan(back["nan"]) and back[2].dtype == np.float32
    evil = {"__nd__": [1], "dtype": "object", "shape": [1]}
    assert isinstance(codec.decode(evil), codec.Opaque)
    assert isinstance(codec.decode({"__obj__": "X", "repr": "<X>"}), codec.Opaque)


# --------------------------------------------------------------------------- command line


def _check_cli(path: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "helpers", "check", str(path), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=REPO,
    )


def test_check_command_exit_codes_and_output(tmp_path):
    good = tmp_path / "good.ipynb"
    nbformat.write(gc.source_notebook(), str(good))
    proc = _check_cli(good)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 of 5 graded functions passed" in proc.stdout
    for name in gc.FUNCTIONS:
        assert any(line.startswith(name) and "passed" in line for line in proc.stdout.splitlines())

    wrong = tmp_path / "wrong.ipynb"
    body = next(b for f, m, b in gc.MISTAKES if m == "clockwise rotation")
    nbformat.write(gc.edit(gc.source_notebook(), answers={"apply_rope": body}), str(wrong))
    first = _check_cli(wrong, "--seed", "99")
    assert first.returncode == 1
    assert "clockwise rotation" in first.stdout
    assert f"python -m helpers check {wrong} --seed 99" in first.stdout
    again = _check_cli(wrong, "--seed", "99")
    assert again.stdout == first.stdout

    corrupt = tmp_path / "corrupt.ipynb"
    corrupt.write_text('{"cells": [', encoding="utf-8")
    bad = _check_cli(corrupt)
    assert bad.returncode == 2
    assert bad.stdout == "" and len(bad.stderr.strip().splitlines()) == 1
    assert "not a readable notebook" in bad.stderr
    missing = _check_cli(tmp_path / "missing.ipynb")
    assert missing.returncode == 2 and "no such notebook" in missing.stderr


def test_check_command_speaks_the_notebook_s_language_whatever_the_shell_s():
    """The Korean notebook is checked in Korean, with an English (or Korean) locale alike."""
    import re

    notebook = REPO / "notebooks" / "01_order_ko" / "01_order_ko.ipynb"
    if not notebook.exists():
        pytest.skip("notebooks/01_order_ko does not exist")
    for lang in ("C.UTF-8", "ko_KR.UTF-8"):
        proc = subprocess.run(
            [sys.executable, "-m", "helpers", "check", str(notebook)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            cwd=REPO,
            env=os.environ | {"LANG": lang, "LC_ALL": lang},
        )
        assert proc.returncode == 1, proc.stdout + proc.stderr  # nothing is written yet
        heading = proc.stdout.splitlines()[0]
        assert "채점 함수" in heading and "graded functions" not in heading, heading
        softmax = next(line for line in proc.stdout.splitlines() if line.startswith("softmax"))
        assert re.search("[\uac00-\ud7a3]", softmax), softmax


# --------------------------------------------------------------------------- in a real kernel


@pytest.mark.slow
def test_wrong_answer_in_a_real_kernel_shows_only_the_message():
    from nbclient import NotebookClient

    # The visible assert of alibi_bias (a shape) passes; the hidden grade() fails.
    body = next(b for f, m, b in gc.MISTAKES if m == "positive instead of negative bias")
    nb = gc.edit(gc.source_notebook(), answers={"alibi_bias": body})
    env_before = os.environ.pop("NBGRADER_EXECUTION", None)
    try:
        NotebookClient(nb, timeout=120, allow_errors=True, kernel_name="python3").execute()
    finally:
        if env_before is not None:
            os.environ["NBGRADER_EXECUTION"] = env_before
    outputs = {
        c.metadata.get("nbgrader", {}).get("grade_id"): c.outputs
        for c in nb.cells
        if c.cell_type == "code"
    }
    errors = [o for o in outputs["test_alibi_bias"] if o.output_type == "error"]
    assert len(errors) == 1 and errors[0].ename == "WrongAnswer"
    assert "positive instead of negative bias" in errors[0].evalue
    tb = "\n".join(errors[0].traceback)
    assert (
        "grader.py" not in tb
        and "kernel.py" not in tb
        and "Traceback" not in tb
        and "grade(" not in tb.split("replay with")[0]
    )
    passed = "".join(o.get("text", "") for o in outputs["test_turns"])
    assert "turns: all" in passed


# --------------------------------------------------------------------------- fair grades


def _real_notebook(nb_id: str, **sources: str) -> nbformat.NotebookNode:
    """A source notebook of the course with some answer cells replaced (grade id -> source)."""
    nb = nbformat.read(REPO / "source" / nb_id / f"{nb_id}.ipynb", as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in sources:
            cell.source = sources.pop(grade_id)
    assert not sources, f"no such answer cells: {sorted(sources)}"
    return nb


def _clockwise_rope() -> str:
    """06's answer_apply_rope with its rotation turned clockwise (its helpers kept)."""
    nb = nbformat.read(REPO / "source" / "06_rope" / "06_rope.ipynb", as_version=4)
    cell = next(
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "answer_apply_rope"
    )
    wrong = cell.source.replace("x0 * s + x1 * c", "-x0 * s + x1 * c")
    wrong = wrong.replace("x0 * c - x1 * s", "x0 * c + x1 * s")
    assert wrong != cell.source
    return wrong


def test_a_wrong_function_costs_only_itself_and_its_right_caller_says_so():
    """A clockwise apply_rope loses apply_rope only; rope_score, which calls it, is graded with
    the reference in its place, passes, and its message points to Exercise 4."""
    report = isolated.check_notebook(_real_notebook("06_rope", answer_apply_rope=_clockwise_rope()))
    assert {r.name for r in report.results if not r.passed} == {"apply_rope"}, report.table()
    assert report["apply_rope"].mistake == "clockwise rotation"
    message = report["rope_score"].message
    assert "rope_score is right" in message and "your apply_rope failed" in message
    assert "Exercise 4: `apply_rope`" in message
    assert "apply_rope" in report["rope_score"].used


def test_the_kernel_grades_each_function_alone_too():
    nb = _real_notebook("06_rope", answer_apply_rope=_clockwise_rope())
    source, _ = notebook.answer_source(nb)
    namespace: dict = {}
    exec(compile(source, "<answers>", "exec"), namespace)  # noqa: S102
    report = grader.self_check("06_rope", seed=3, namespace=namespace)
    assert {r.name for r in report.results if not r.passed} == {"apply_rope"}
    assert "your apply_rope failed" in report["rope_score"].message
    assert namespace["apply_rope"].__name__ == "apply_rope"  # the learner's, put back
    learners = namespace["apply_rope"]
    assert learners.__code__.co_filename == "<answers>"  # the learner's own, put back


def test_an_empty_recap_costs_nothing():
    """03_norm recaps 02's functions; left as stubs, every graded function of 03 still passes."""
    recap = (
        "def angle_rates(d, base=10000.0):\n    raise NotImplementedError()\n\n\n"
        "def sinusoidal_pe(max_len, d, base=10000.0):\n    raise NotImplementedError()\n"
    )
    report = isolated.check_notebook(_real_notebook("03_norm", recap_sincos=recap))
    assert report.passed, report.table()


def test_the_course_s_public_modules_may_be_imported_in_answer_cells():
    nb = nbformat.read(REPO / "source" / "06_rope" / "06_rope.ipynb", as_version=4)
    cell = next(
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "answer_dot"
    )
    innocent = "from helpers.plots import layout_figure\nfrom helpers import validate\n"
    report = isolated.check_notebook(
        _real_notebook("06_rope", answer_dot=innocent + cell.source), seed=2
    )
    assert report.passed, report.table()
    cheat = "from helpers.reference import thetas\n"
    report = isolated.check_notebook(_real_notebook("06_rope", answer_thetas=cheat), seed=2)
    assert {r.name for r in report.results if not r.passed} == {"thetas"}, report.table()
    assert "import helpers.reference" in report["thetas"].message


def test_a_missing_bad_input_check_earns_partial_credit():
    """expected_norm with the right values but no ValueError for d=7 or d=True: the points
    of the bad-input checks are lost, the others kept (1 of 6 weight units)."""
    plain = "def expected_norm(d):\n    return math.sqrt(d / 2)\n"
    report = isolated.check_notebook(_real_notebook("03_norm", answer_expected_norm=plain))
    result = report["expected_norm"]
    assert not result.passed and result.verdict == "partly"
    assert result.score == pytest.approx(5 / 6)
    first = result.message.splitlines()[0]
    assert "partly right" in first and "bad input wrong" in first and "0.83 of 1 points" in first
    assert "should raise ValueError" in result.message


def test_an_answer_may_call_the_course_s_input_checks():
    """helpers.validate in an answer cell (as 02_sincos offers): right values, and the bad
    input it refuses counts as refused."""
    answer = (
        "from helpers import validate\n\n\n"
        "def expected_norm(d):\n"
        '    """sqrt(d / 2)."""\n'
        "    return math.sqrt(validate.dim(d) / 2)\n"
    )
    report = isolated.check_notebook(_real_notebook("03_norm", answer_expected_norm=answer))
    assert report["expected_norm"].passed, report["expected_norm"].message


def test_an_honest_cell_that_loads_a_numpy_submodule_is_no_tamper():
    """numpy loads some submodules on first use (numpy.testing, np.char): that adds them to
    numpy's namespace, which must not count as replacing numpy's attributes."""
    nb = nbformat.read(REPO / "source" / "06_rope" / "06_rope.ipynb", as_version=4)
    cell = next(
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "answer_dot"
    )
    uses = "import numpy.testing\n_ = np.char.upper(['a'])\n"
    report = isolated.check_notebook(
        _real_notebook("06_rope", answer_dot=uses + cell.source), seed=4
    )
    assert report.passed, report.table()

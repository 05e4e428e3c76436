"""The learner build: a wheel without the reference and the checks, enough for every notebook.

The wheel is installed with pip into a fresh virtual environment that borrows only the
third-party packages of this one (a path line, not its ``helpers``); every learner notebook,
answered with the source's solutions, runs top to bottom there, and its self-check is the
classroom self-check: the public checks pass, and it says that the random cases are graded
by the teacher. A right, a wrong and an unfinished answer get their verdicts from the
shipped expected values. Solutions, hidden tests, random cases (and their expected values)
and the mistakes' wrong implementations appear neither in ``notebooks/`` nor in the wheel.
"""

from __future__ import annotations

import json
import re
import shutil
import site
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import nbformat
import pytest

from helpers import ASSIGNMENTS
from helpers.i18n import split_assignment
from helpers.teacher import learner_build
from tests import classroom_kit as kit
from tests import rehearsal

# every English notebook, and one Korean one (its self-check answers in Korean)
IDS = kit.real_ids([*ASSIGNMENTS, "01_order_ko"])
TEACHER_SIDE = "grading happens on the teacher's side"
DATA = "helpers/classcheck.json"
GRADE_CALL = re.compile(r'grade\("\w+"\)')


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return learner_build.build(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def learner_python(tmp_path_factory, wheel) -> Path:
    """A fresh venv with the learner wheel installed by pip (third-party packages borrowed)."""
    venv = tmp_path_factory.mktemp("learner") / "venv"
    kit.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=venv.parent)
    python = venv / "bin" / "python"
    out = kit.run(
        [str(python), "-c", "import site; print(site.getsitepackages()[0])"], cwd=venv.parent
    )
    target = Path(out.stdout.strip())
    # numpy, matplotlib, ipykernel, ... of this environment; its editable ``helpers`` is a
    # .pth hook of that folder, which a plain path line does not run.
    (target / "course_deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    kit.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            str(wheel),
        ],
        cwd=venv.parent,
    )
    return python


def test_wheel_leaves_out_the_teacher_modules(wheel):
    """No reference, checks, nbgrader plugin, sandbox or classroom in the wheel: no teacher/."""
    names = zipfile.ZipFile(wheel).namelist()
    assert "helpers/grader.py" in names and "helpers/widgets/base.py" in names
    assert "helpers/messages/grader.yaml" in names  # the Korean messages travel with it
    assert learner_build.TEACHER_ONLY == "teacher"
    teacher = [n for n in names if n.startswith("helpers/teacher/")]
    assert not teacher, teacher
    for module in (
        "reference/rope.py",
        "checks/rope.py",
        "nbgrader_plugin.py",
        "classroom/grading.py",
    ):
        assert (kit.REPO / "helpers" / "teacher" / module).exists(), module  # what is left out
    meta = (
        zipfile.ZipFile(wheel)
        .read(next(n for n in names if n.endswith(".dist-info/METADATA")))
        .decode()
    )
    assert "+learner" in meta
    assert "Requires-Dist: numpy" in meta and "Requires-Dist: nbgrader" in meta
    assert "Requires-Dist: pytest" not in meta


def test_installed_build_has_no_reference(learner_python):
    """In the learner venv ``helpers`` is the wheel, and the reference cannot be imported."""
    code = textwrap.dedent(
        """
        import importlib.util, json, helpers
        from helpers.grader import self_check
        try:
            import helpers.reference
            said = "imported"
        except ImportError as exc:
            said = str(exc)
        print(json.dumps({
            "file": helpers.__file__,
            "reference": said,
            "teacher": importlib.util.find_spec("helpers.teacher") is not None,
            "has_teacher": helpers.has_teacher(),
        }))
        """
    )
    out = json.loads(
        kit.run([str(learner_python), "-c", code], cwd=learner_python.parent)
        .stdout.strip()
        .splitlines()[-1]
    )
    assert out["file"].startswith(str(learner_python.parent.parent))
    assert "teacher's solutions" in out["reference"]  # says plainly what is missing
    assert out["teacher"] is False and out["has_teacher"] is False


RUNNER = textwrap.dedent(
    """
    import json, sys, nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(sys.argv[1], as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": sys.argv[2]}}).execute()
    last = nb.cells[-1]
    text = "".join(o.get("text", "") + json.dumps(o.get("data", {}), ensure_ascii=False) for o in last.outputs)
    print(json.dumps({"last_source": last.source, "last_output": text}))
    """
)


@pytest.mark.slow
@pytest.mark.skipif(not IDS, reason="no course notebooks yet")
@pytest.mark.parametrize("assignment", IDS)
def test_notebook_runs_with_learner_build(assignment, learner_python, tmp_path):
    """The answered notebook runs top to bottom on the learner build; its classroom
    self-check passes every public check and says the random cases are the teacher's."""
    folder = tmp_path / assignment
    path = folder / f"{assignment}.ipynb"
    rehearsal.make_submission(
        kit.REPO / "notebooks" / assignment / f"{assignment}.ipynb",
        kit.REPO / "source" / assignment / f"{assignment}.ipynb",
        path,
    )
    runner = tmp_path / "run.py"
    runner.write_text(RUNNER)
    proc = subprocess.run(
        [str(learner_python), str(runner), str(path), str(folder)],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
        env=kit.env(),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "self_check" in out["last_source"]
    from helpers.classcheck import RANDOM_BY_TEACHER
    from helpers.i18n import split_assignment, tr

    lang = split_assignment(assignment)[1]
    said = out["last_output"]
    assert tr(RANDOM_BY_TEACHER, lang=lang) in said, said
    counts = re.search(r"(\d+) of (\d+) passed" if lang == "en" else r"(\d+)개 중 (\d+)개", said)
    assert counts and counts.group(1) == counts.group(2) and int(counts.group(1)) > 0, said


def _texts_of_wheel(wheel: Path) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as zf:
        return {n: zf.read(n).decode("utf-8", "replace") for n in zf.namelist()}


@pytest.mark.skipif(not IDS, reason="no course notebooks yet")
def test_no_solution_or_hidden_test_in_notebooks_or_wheel(wheel):
    """No solution body (3 consecutive lines of one) and no hidden-test line of source/ in
    notebooks/ or in any file of the learner wheel. In the wheel, a hidden test that is only
    a ``grade("<function>")`` call is the grader's public API, not a secret: the secret
    part (``helpers.checks``) is what the wheel leaves out."""
    wheel_lines = {name: kit.code_lines(text) for name, text in _texts_of_wheel(wheel).items()}
    wheel_texts = _texts_of_wheel(wheel)
    leaks = []
    blocks = 0
    for assignment in IDS:
        source = kit.REPO / "source" / assignment / f"{assignment}.ipynb"
        learner = nbformat.read(kit.REPO / "notebooks" / assignment / f"{assignment}.ipynb", 4)
        learner_text = "\n".join(c.source for c in learner.cells)
        learner_lines = kit.code_lines(learner_text)
        for block in kit.solution_blocks(source):
            blocks += 1
            found = kit.leaked_solution(block, learner_lines)
            if found:
                leaks.append(f"notebooks/{assignment} shows a solution:\n{found}")
            for name, lines in wheel_lines.items():
                found = kit.leaked_solution(block, lines)
                if found:
                    leaks.append(f"wheel {name} shows a solution of {assignment}:\n{found}")
        for line in kit.hidden_test_lines(source):
            if line in learner_text:
                leaks.append(f"notebooks/{assignment} shows hidden test: {line}")
            if GRADE_CALL.fullmatch(line):
                continue
            leaks += [
                f"wheel {n} shows hidden test: {line}" for n, t in wheel_texts.items() if line in t
            ]
    assert blocks >= len(IDS)
    assert not leaks, "\n".join(leaks)


# --------------------------------------------------------------------------- classroom self-check


CLASSROOM = textwrap.dedent(
    """
    import json, sys
    import helpers
    from helpers.grader import self_check
    assert not helpers.has_teacher()
    namespace = {}
    exec(sys.stdin.read(), namespace)
    report = self_check(sys.argv[1], namespace=namespace)
    print(json.dumps({r.name: [r.verdict, r.mistake] for r in report.results}))
    """
)


def _answers(assignment: str, wrong: dict[str, str]) -> str:
    """The source's answer cells as one module, some functions replaced (``wrong``)."""
    source = nbformat.read(kit.REPO / "source" / assignment / f"{assignment}.ipynb", 4)
    code = "import math\nimport numpy as np\n" + "\n\n".join(
        rehearsal.solution_cells(source).values()
    )
    return code + "\n\n" + "\n\n".join(wrong.values())


def _classroom(learner_python, assignment: str, wrong: dict[str, str], tmp_path) -> tuple:
    """The learner build's self-check of ``assignment`` on the source's answers with
    ``wrong`` in place: (the printed table, {function: [verdict, mistake]})."""
    runner = tmp_path / "classroom.py"
    runner.write_text(CLASSROOM)
    proc = subprocess.run(
        [str(learner_python), "-W", "ignore", str(runner), assignment],
        input=_answers(split_assignment(assignment)[0], wrong),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env=kit.env(),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    *printed, verdicts = proc.stdout.strip().splitlines()
    return "\n".join(printed), json.loads(verdicts)


@pytest.mark.slow
@pytest.mark.skipif(not kit.real_ids(["01_order"]), reason="01_order is needed")
@pytest.mark.parametrize("assignment", ["01_order", "01_order_ko"])
def test_classroom_self_check_right_wrong_and_unfinished(assignment, learner_python, tmp_path):
    """In the learner build, a right function passes, a wrong one that makes a catalogued
    mistake is named, an unfinished one is "not written yet"; the mistakes the values
    recognise are listed and the random cases are the teacher's."""
    wrong = {
        "softmax": "def softmax(x, axis=-1):\n    x = np.asarray(x, dtype=float)\n"
        "    e = np.exp(x)\n    return e / e.sum(axis=axis, keepdims=True)",
        "order_gap_with_pe": "def order_gap_with_pe(*args, **kwargs):\n"
        "    raise NotImplementedError()",
    }
    shown, verdicts = _classroom(learner_python, assignment, wrong, tmp_path)
    printed = " ".join(shown.split())  # the table wraps long messages under their column

    def said(text: str) -> bool:
        return " ".join(text.split()) in printed

    assert verdicts["attention"] == ["passed", None]
    assert verdicts["softmax"] == ["FAILED", "no max subtraction"]
    assert verdicts["order_gap_with_pe"][0] == "FAILED"
    from helpers.classcheck import RANDOM_BY_TEACHER
    from helpers.i18n import split_assignment, tr

    lang = split_assignment(assignment)[1]
    with_lang = {"lang": lang}
    assert said(tr("no max subtraction", **with_lang))
    unfinished = "{name} is not written yet (it raises NotImplementedError)."
    assert said(tr(unfinished, name="order_gap_with_pe", **with_lang))
    assert said(tr("Known mistakes these checks recognise by name:", **with_lang))
    assert said(tr(RANDOM_BY_TEACHER, **with_lang))
    print(shown)


@pytest.mark.slow
@pytest.mark.skipif(not kit.real_ids(["01_order"]), reason="01_order is needed")
def test_classroom_self_check_names_the_wrong_callee(learner_python, tmp_path):
    """In the learner build each function runs with the learner's own callees: a function
    that fails beside a failing callee says which callee to fix first; one whose callees
    pass says nothing of them."""
    wrong = {
        "attention": "def attention(Q, K, V, bias=None):\n"
        "    s = np.asarray(Q, float) @ np.asarray(K, float).T\n"
        "    if bias is not None:\n        s = s + bias\n"
        "    return softmax(s, axis=-1) @ np.asarray(V, float)",
    }
    shown, verdicts = _classroom(learner_python, "01_order", wrong, tmp_path)
    printed = " ".join(shown.split())
    assert verdicts["attention"] == ["partly", "missing 1/sqrt(d_k)"], verdicts
    assert verdicts["softmax"][0] == "passed" and verdicts["self_attention"][0] != "passed"
    note = "{name} calls your {callee}, which failed its own checks: fix {callee} first"
    assert note.format(name="self_attention", callee="attention") in printed, printed
    assert note.format(name="attention", callee="softmax") not in printed, printed


def test_wheel_ships_public_checks_only(wheel):
    """The classroom data holds exactly the fixed cases of every check (no random case, no
    expected value of one), and no wrong implementation of a mistake ships."""
    import inspect

    from helpers.teacher import checks
    from helpers.teacher.codec import encode
    from helpers.teacher.verdict import cases_of

    texts = _texts_of_wheel(wheel)
    assert DATA in texts and "helpers/_shipped/compare.py" in texts
    data = json.loads(texts[DATA])
    wheel_text = "\n".join(texts.values())
    wheel_lines = kit.code_lines(wheel_text)
    for assignment, functions in data["notebooks"].items():
        by_name = {f["name"]: f for f in functions}
        assert list(by_name) == [c.name for c in checks.checks_for(assignment)]
        for check in checks.checks_for(assignment):
            shipped = by_name[check.name]["cases"]
            if check.kind == "files":
                assert shipped == []
                continue
            fixed = check.fixed()
            assert [json.dumps(c["args"]) for c in shipped] == [
                json.dumps(encode(list(c.args))) for c in fixed
            ]
            assert all(c["part"] in ("shown", "edge") for c in shipped)
            for seed in (1, 2):
                for case in cases_of(check, seed)[len(fixed) :]:
                    args = json.dumps(encode(list(case.args)), ensure_ascii=False)
                    if len(args) > 12:
                        assert args not in texts[DATA], (check.name, case.label)
                    try:
                        want = json.dumps(encode(checks.expected(check, case)))
                    except ValueError:
                        continue
                    # a table of numbers, not a scalar that any case may share (2.2e-16)
                    if want[:1] in "[{" and len(want) > 40:
                        assert want not in texts[DATA], (check.name, case.label)
            for mistake in check.mistakes:
                for impl in (mistake.impl, *mistake.variants):
                    if impl is None:
                        continue
                    assert f"def {impl.__name__}(" not in wheel_text, impl.__name__
                    body = [
                        ln.strip()
                        for ln in inspect.getsource(impl).splitlines()[1:]
                        if ln.strip() and not ln.strip().startswith(("#", '"""'))
                    ]
                    found = kit.leaked_solution(body, wheel_lines)
                    assert found is None, f"{impl.__name__} ships:\n{found}"


@pytest.mark.slow
def test_learner_kernels_say_to_run_the_first_cell_after_a_restart(wheel, learner_python, tmp_path):
    """The wheel installs the kernels' configuration into the learner's environment: a
    kernel of it that has not run the first cell says to run it again."""
    from tests.test_fresh_kernel import NOTE, run_in_kernel

    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith(".data/data/etc/ipython/ipython_kernel_config.py") for n in names)
    venv = learner_python.parent.parent
    assert "helpers.fresh_kernel" in (venv / "etc/ipython/ipython_kernel_config.py").read_text()
    folder = tmp_path / "01_order"
    folder.mkdir()
    shutil.copy(kit.REPO / "notebooks/01_order/01_order.ipynb", folder)
    said = run_in_kernel(str(learner_python), folder, ['self_check("01_order")'])
    from helpers.i18n import tr

    assert tr(NOTE, name="self_check") in " ".join(said[0].split()), said[0]

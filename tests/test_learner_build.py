"""The learner build: a wheel without the reference and the checks, enough for every notebook.

The wheel is installed with pip into a fresh virtual environment that borrows only the
third-party packages of this one (a path line, not its ``helpers``); every learner notebook,
answered with the source's solutions, runs top to bottom there, and its self-check says
that grading happens on the teacher's side. Solutions and hidden tests appear neither in
``notebooks/`` nor in the wheel.
"""

from __future__ import annotations

import json
import re
import site
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import nbformat
import pytest

from helpers import ASSIGNMENTS
from helpers.teacher import learner_build
from tests import classroom_kit as kit
from tests import rehearsal

# every English notebook, and one Korean one (its self-check answers in Korean)
IDS = kit.real_ids([*ASSIGNMENTS, "01_order_ko"])
TEACHER_SIDE = "grading happens on the teacher's side"
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
    assert "Requires-Dist: numpy" in meta and "Requires-Dist: nbgrader" not in meta


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
    text = "".join(o.get("text", "") + json.dumps(o.get("data", {})) for o in last.outputs)
    print(json.dumps({"last_source": last.source, "last_output": text}))
    """
)


@pytest.mark.slow
@pytest.mark.skipif(not IDS, reason="no course notebooks yet")
@pytest.mark.parametrize("assignment", IDS)
def test_notebook_runs_with_learner_build(assignment, learner_python, tmp_path):
    """The answered notebook runs top to bottom on the learner build; the self-check says
    that grading happens on the teacher's side."""
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
    from helpers.grader import TEACHER_SIDE as said
    from helpers.i18n import split_assignment, tr

    assert TEACHER_SIDE in said
    lang = split_assignment(assignment)[1]
    assert tr(said, lang=lang) in out["last_output"], out["last_output"]


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

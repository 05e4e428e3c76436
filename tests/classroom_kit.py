"""Temporary courses for the classroom, sandbox and learner-build tests.

``course_with(tmp, ids)`` copies the real course (config, ``source/``, ``notebooks/``) when the
assignments exist in the repository; ``fixture_course(tmp)`` writes a two-function assignment
``ex1`` with the same cell conventions and nbgrader's own ``Execute`` in the sandbox, for the
tests that exercise nbgrader's plumbing rather than the course's grader.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import nbformat

from helpers.teacher.classroom.course import copy_course, nbgrader
from tests import rehearsal
from tests.cells import cell as nbcell

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
HIDDEN_MARK = "HIDDEN-7f3a-never-shown"
SOLUTION_MARK = "SOLUTION-51c2-never-shown"

FIXTURE_CONFIG = """\
import os
c = get_config()  # noqa: F821
ROOT = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.root = ROOT
c.CourseDirectory.course_id = "fixture-course"
c.CourseDirectory.release_directory = "notebooks"
c.Execute.timeout = 60
c.OverwriteCells.add_missing_cells = True
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}
c.Autograde.autograde_preprocessors = [
    "helpers.teacher.nbgrader_plugin.SandboxedExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
if os.environ.get("PE_COURSE_EXCHANGE"):
    c.Exchange.root = os.environ["PE_COURSE_EXCHANGE"]
"""


def fixture_notebook() -> nbformat.NotebookNode:
    """``ex1``: ``double`` (2 points) and ``half`` (3 points), with hidden tests."""
    cells = [
        nbcell("markdown", "# ex1: two functions (5 points)"),
        nbcell("code", "import numpy as np", grade_id="imports", locked=True),
        nbcell(
            "code",
            'def double(x):\n    """2 x."""\n    ### BEGIN SOLUTION\n'
            f"    # {SOLUTION_MARK}\n    return 2 * np.asarray(x, dtype=float)\n"
            "    ### END SOLUTION",
            grade_id="answer_double",
            solution=True,
        ),
        nbcell(
            "code",
            '"""double: doubles."""\nassert double(1) == 2\n### BEGIN HIDDEN TESTS\n'
            f"assert double(3) == 6, '{HIDDEN_MARK}'\n### END HIDDEN TESTS",
            grade_id="test_double",
            grade=True,
            locked=True,
            points=2,
        ),
        nbcell(
            "code",
            'def half(x):\n    """x / 2."""\n    ### BEGIN SOLUTION\n'
            "    return np.asarray(x, dtype=float) / 2\n    ### END SOLUTION",
            grade_id="answer_half",
            solution=True,
        ),
        nbcell(
            "code",
            '"""half: halves."""\nassert half(2) == 1\n### BEGIN HIDDEN TESTS\n'
            f"assert half(5) == 2.5, '{HIDDEN_MARK}'\n### END HIDDEN TESTS",
            grade_id="test_half",
            grade=True,
            locked=True,
            points=3,
        ),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    return nb


def env() -> dict[str, str]:
    """The environment for nbgrader subprocesses: this venv's tools first on PATH."""
    out = dict(os.environ)
    out["PATH"] = str(BIN) + os.pathsep + out.get("PATH", "")
    return out


ONE_ACCOUNT = """
# One account of this machine submits for every learner of this test's class: collect
# takes a folder named for any id (helpers.teacher.classroom.exchange; never on a class).
c.ExchangeCollect.check_owner = False
"""


def one_account_plays_every_learner(course: Path) -> Path:
    """The course's collect takes entries named for ids that are no account here."""
    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as fh:
        fh.write(ONE_ACCOUNT)
    return course


def fixture_course(tmp: Path) -> Path:
    """A course with the assignment ``ex1`` (source, generated release, config) in
    ``tmp/course``: a copy of the one ``nbgrader generate_assignment`` makes once per test
    process (its config finds the course where it is; its scratch gradebook stays outside)."""
    return Path(shutil.copytree(_fixture_release(), tmp / "course"))


@functools.cache
def _fixture_release() -> Path:
    scratch = Path(tempfile.mkdtemp(prefix="pe-fixture-course-"))
    atexit.register(shutil.rmtree, scratch, True)
    course = scratch / "course"
    (course / "source" / "ex1").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(FIXTURE_CONFIG)
    nbformat.write(fixture_notebook(), course / "source" / "ex1" / "ex1.ipynb")
    nbgrader(
        ["generate_assignment", "ex1", "--force", f"--db=sqlite:///{scratch}/scratch.db"],
        cwd=course,
    )
    return course


def real_ids(wanted: list[str]) -> list[str]:
    """The assignments of ``wanted`` that exist in the repository (source and release)."""
    return [
        i
        for i in wanted
        if (REPO / "source" / i / f"{i}.ipynb").exists()
        and (REPO / "notebooks" / i / f"{i}.ipynb").exists()
    ]


def written_points(source_nb: Path) -> float:
    """The points of an instructor notebook's written answers: its manually graded Markdown
    cells (``grade`` and ``solution``), which autograding leaves to the teacher."""
    nb = nbformat.read(source_nb, as_version=4)
    return sum(
        float(c.metadata["nbgrader"].get("points", 0))
        for c in nb.cells
        if c.cell_type == "markdown" and c.get("metadata", {}).get("nbgrader", {}).get("grade")
    )


def course_with(tmp: Path, ids: list[str]) -> Path:
    """A copy of the real course restricted to ``ids``."""
    return copy_course(REPO, tmp / "course", ids)


def submit_dir(course: Path, student: str, assignment: str) -> Path:
    """``submitted/<student>/<assignment>`` (created)."""
    folder = course / "submitted" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def fill(course: Path, student: str, assignment: str, broken=(), how: str = "stub") -> Path:
    """Submit the release notebook filled with the solutions (``broken`` answer ids wrong)."""
    out = submit_dir(course, student, assignment) / f"{assignment}.ipynb"
    rehearsal.make_submission(
        course / "notebooks" / assignment / f"{assignment}.ipynb",
        course / "source" / assignment / f"{assignment}.ipynb",
        out,
        broken=broken,
        how=how,
    )
    return out


def run(cmd: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    """Run a command with this venv on PATH; fail with its output."""
    proc = subprocess.run(
        cmd, check=False, cwd=cwd, env=env(), capture_output=True, text=True, **kw
    )
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def _regions(source_nb: Path, begin: str, end: str) -> list[list[str]]:
    """The blocks between ``begin`` and ``end`` markers: stripped code lines, no comments."""
    nb = nbformat.read(source_nb, as_version=4)
    blocks = []
    for cell in nb.cells:
        block = None
        for line in cell.source.splitlines():
            text = line.strip()
            if text == begin:
                block = []
            elif text == end and block is not None:
                blocks.append(block)
                block = None
            elif block is not None and text and not text.startswith("#"):
                block.append(text)
    return [b for b in blocks if b]


def hidden_test_lines(source_nb: Path) -> list[str]:
    """Every line of the hidden tests of an instructor notebook."""
    blocks = _regions(source_nb, "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
    return [line for block in blocks for line in block]


def solution_blocks(source_nb: Path) -> list[list[str]]:
    """The solution bodies of an instructor notebook, as lists of stripped code lines."""
    return _regions(source_nb, "### BEGIN SOLUTION", "### END SOLUTION")


# Argument checks and control flow: shared by any code that validates its input.
_BOILERPLATE = ("raise ", "if ", "elif ", "else", "try:", "except", "assert ", '"""')


def _telling(lines: list[str]) -> list[str]:
    return [ln for ln in lines if not ln.startswith(_BOILERPLATE) and "asarray(" not in ln]


def code_lines(text: str) -> list[str]:
    """Stripped, non-blank lines of a text (the form ``leaked_solution`` compares)."""
    return [ln.strip() for ln in text.splitlines() if ln.strip()]


def leaked_solution(block: list[str], lines: list[str], run: int = 3) -> str | None:
    """A run of ``run`` consecutive solution lines found consecutively in ``lines`` (a short
    solution counts when all of it appears and is 40 characters or more), else None.
    Argument checks and control-flow lines are left out on both sides first."""
    block, lines = _telling(block), _telling(lines)
    if not block:
        return None
    grams = {tuple(lines[i : i + run]) for i in range(len(lines) - run + 1)}
    if len(block) < run:
        joined = "\n".join(block)
        whole = {tuple(lines[i : i + len(block)]) for i in range(len(lines) - len(block) + 1)}
        return joined if len(joined) >= 40 and tuple(block) in whole else None
    for i in range(len(block) - run + 1):
        if tuple(block[i : i + run]) in grams:
            return "\n".join(block[i : i + run])
    return None


@contextmanager
def lab_server(
    cmd: list[str], cwd: Path, env: dict[str, str], log_path: Path, port: int, token: str
) -> Iterator[str]:
    """A JupyterLab server of ``cmd`` (its output in ``log_path``), its URL once
    ``/api/status`` answers; stopped afterwards (terminate, then kill)."""
    import pytest

    log = open(log_path, "w")  # noqa: SIM115  (closed below)
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail("JupyterLab did not start:\n" + log_path.read_text())
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()

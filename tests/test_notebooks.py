"""The course notebooks: they run, they are stored clean, notebooks/ is source/ regenerated,
nbgrader validates source and rejects the untouched learner build, and nothing leaks.

The real notebooks are found when the tests are collected (every ``source/<id>/<id>.ipynb``).
Each check is a function used twice: on the real notebooks, and on a tiny course built in a
temporary folder, where good and deliberately broken notebooks show that the check passes
and fails when it should.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from helpers import ASSIGNMENTS, cli, kernel_info
from helpers.i18n import split_assignment
from tests.cells import cell as nbcell
from tests.claims_kit import executed_notebook

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
SOLUTION_MARKERS = ("BEGIN SOLUTION", "END SOLUTION")
HIDDEN_MARKERS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
MIN_SOLUTION_LINE = 25  # shorter solution lines (`return out`) may appear anywhere by chance
VALIDATE_OK = "Success! Your notebook passes all the tests."
VALIDATE_FAILED = re.compile(r"VALIDATION FAILED ON (\d+) CELL\(S\)")


# --------------------------------------------------------------------------- finding notebooks


def notebook_ids(root: Path, folder: str) -> list[str]:
    """Ids with a ``<folder>/<id>/<id>.ipynb`` under ``root``."""
    return sorted(
        p.parent.name for p in root.glob(f"{folder}/*/*.ipynb") if p.stem == p.parent.name
    )


def nb_path(root: Path, folder: str, nb_id: str) -> Path:
    return root / folder / nb_id / f"{nb_id}.ipynb"


SOURCE_IDS = notebook_ids(ROOT, "source")
LEARNER_IDS = notebook_ids(ROOT, "notebooks")
STORED = [("source", i) for i in SOURCE_IDS] + [("notebooks", i) for i in LEARNER_IDS]


# --------------------------------------------------------------------------- the checks


def storage_problems(path: Path) -> list[str]:
    """What is wrong with how a notebook is stored: outputs, execution counts, kernelspec."""
    nb = nbformat.read(path, as_version=4)
    problems = []
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        problems.append(f"not a valid notebook: {exc.message}")
    kernelspec = dict(nb.metadata.get("kernelspec", {}))
    if kernelspec != KERNELSPEC:
        problems.append(f"kernelspec is {kernelspec}, expected {KERNELSPEC}")
    # what a kernel of the course reports (tests/test_kernel_info.py): opening the notebook in
    # JupyterLab then leaves it unmodified
    language_info = nb.metadata.get("language_info", {})
    if language_info != kernel_info.LANGUAGE_INFO:
        problems.append(
            f"language_info is {language_info}, expected {kernel_info.LANGUAGE_INFO} "
            "(helpers/kernel_info.py)"
        )
    if "widgets" in nb.metadata:
        problems.append("saved widget state in the notebook metadata")
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("outputs"):
            problems.append(f"cell {index} has outputs")
        if cell.get("execution_count") is not None:
            problems.append(f"cell {index} has execution_count {cell.execution_count}")
    return problems


def execute_copy(path: Path, workdir: Path, timeout: int = 600) -> None:
    """Run a notebook top to bottom (kernel python3) in a copy of its folder under workdir.

    Raises ``CellExecutionError`` on the first cell that fails.
    """
    folder = workdir / path.parent.name
    shutil.copytree(path.parent, folder, dirs_exist_ok=True)
    nb = nbformat.read(folder / path.name, as_version=4)
    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute()


def course_copy(root: Path, dest: Path, ids: list[str], learner: bool = False) -> Path:
    """A course root at ``dest``: nbgrader_config.py and source/<id> (and notebooks/<id>)."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(root / "nbgrader_config.py", dest / "nbgrader_config.py")
    folders = ("source", "notebooks") if learner else ("source",)
    for folder in folders:
        for nb_id in ids:
            shutil.copytree(root / folder / nb_id, dest / folder / nb_id, dirs_exist_ok=True)
    return dest


def regenerate(root: Path, ids: list[str], dest: Path) -> Path:
    """Generate the learner notebooks of ``ids`` from a copy of root's source/ into ``dest``."""
    course_copy(root, dest, ids)
    status = cli.generate(ids, root=dest)
    assert status == 0, f"nbgrader generate_assignment failed for {ids} (status {status})"
    return dest


def folder_differences(generated: Path, committed: Path) -> list[str]:
    """Every generated file must be committed, equal (notebooks compared as JSON)."""
    if not committed.is_dir():
        return [f"{committed} is missing: run `make notebooks`"]
    diffs = []
    for new in sorted(p for p in generated.rglob("*") if p.is_file()):
        rel = new.relative_to(generated)
        old = committed / rel
        if not old.exists():
            diffs.append(f"{rel}: generated but not committed")
        elif new.suffix == ".ipynb":
            diffs.extend(
                f"{rel}: {d}"
                for d in notebook_json_differences(
                    json.loads(new.read_text(encoding="utf-8")),
                    json.loads(old.read_text(encoding="utf-8")),
                )
            )
        elif new.read_bytes() != old.read_bytes():
            diffs.append(f"{rel}: differs")
    return diffs


def notebook_json_differences(generated: dict, committed: dict) -> list[str]:
    """Where two notebooks' JSON differ (nothing ignored); empty when equal."""
    if generated == committed:
        return []
    diffs = [
        f"top-level key {key!r} differs"
        for key in sorted(set(generated) | set(committed))
        if key != "cells" and generated.get(key) != committed.get(key)
    ]
    new_cells, old_cells = generated.get("cells", []), committed.get("cells", [])
    if len(new_cells) != len(old_cells):
        diffs.append(f"{len(new_cells)} cells generated, {len(old_cells)} committed")
    for index, (a, b) in enumerate(zip(new_cells, old_cells)):
        if a != b:
            keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            diffs.append(f"cell {index} differs in {keys}")
    return diffs


def nbgrader_validate(path: Path, course_root: Path, *more: Path):
    """``nbgrader validate <path>`` run in ``course_root`` (its nbgrader_config.py applies):
    (status, its stdout and stderr); with ``more`` notebooks, (status, (stdout, stderr))."""
    env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run(
        [str(VENV_BIN / "nbgrader"), "validate", str(path), *map(str, more)],
        cwd=course_root,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if more:
        return proc.returncode, (proc.stdout, proc.stderr)
    return proc.returncode, proc.stdout + proc.stderr


def nbgrader_validate_source_and_learner(
    source: Path, learner: Path, course_root: Path
) -> tuple[int, str, str]:
    """``nbgrader validate <source> <learner>``: one nbgrader start-up for both notebooks.

    nbgrader prints its verdict of each notebook in turn on stdout; a source notebook that
    passes prints the one line VALIDATE_OK, and what follows is the learner notebook's.
    (status, what it said of the source, what it said of the learner); when the source's
    verdict is anything else, all of it counts as the source's (its stderr goes with both).
    """
    status, output = nbgrader_validate(source, course_root, learner)
    stdout, stderr = output
    first = VALIDATE_OK + "\n"
    if not stdout.startswith(first):
        return status, stdout + stderr, stderr
    return status, first + stderr, stdout.removeprefix(first) + stderr


def validation_failures(output: str) -> int:
    """Number of failed cells nbgrader validate reports (0 when it reports success)."""
    m = VALIDATE_FAILED.search(" ".join(output.split()))
    if m:
        return int(m.group(1))
    assert VALIDATE_OK in output, (
        f"nbgrader validate reported neither success nor failure:\n{output}"
    )
    return 0


def graded_test_cells(path: Path) -> int:
    """The graded test cells of a notebook: nbgrader validate fails each of them while the
    learner notebook is unanswered."""
    nb = nbformat.read(path, as_version=4)
    return sum(
        1
        for c in nb.cells
        if c.cell_type == "code"
        and c.metadata.get("nbgrader", {}).get("grade")
        and not c.metadata["nbgrader"].get("solution")
    )


def written_answer_cells(path: Path) -> int:
    """The written answers (Markdown grade cells), which nbgrader validate counts as failed
    while they read as released."""
    nb = nbformat.read(path, as_version=4)
    return sum(
        1
        for c in nb.cells
        if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("grade")
    )


def _blocks(nb: nbformat.NotebookNode, markers: tuple[str, str]) -> tuple[list[str], list[str]]:
    """(lines inside the marked blocks, lines outside them), stripped, over all cells."""
    begin, end = markers
    inside, outside = [], []
    for cell in nb.cells:
        within = False
        for line in cell.source.splitlines():
            if begin in line:
                within = True
            elif end in line:
                within = False
            elif line.strip():
                (inside if within else outside).append(line.strip())
    return inside, outside


def leaks(source: Path, learner: Path) -> list[str]:
    """What of the source's solutions and hidden tests shows in the learner notebook.

    Markers and hidden ``grade(...)`` calls never may. A line of a solution block (of at
    least MIN_SOLUTION_LINE characters) or of a hidden-test block is a leak when it shows in
    the learner notebook although the source shows it nowhere outside such blocks: a line
    the author also wrote in a teaching cell (a measurement the exercise then collects) is
    visible by design, not left behind by the generator.
    """
    src = nbformat.read(source, as_version=4)
    out = nbformat.read(learner, as_version=4)
    raw = learner.read_text(encoding="utf-8")
    text = "\n".join(cell.source for cell in out.cells)
    lines = {line.strip() for line in text.splitlines()}
    found = [f"marker {m!r}" for m in SOLUTION_MARKERS + HIDDEN_MARKERS if m in raw]
    code = "\n".join(c.source for c in out.cells if c.cell_type == "code")
    found += [f"hidden-test call {m.group(0)!r}" for m in re.finditer(r"(?<!def )\bgrade\(", code)]
    hidden, visible = _blocks(src, HIDDEN_MARKERS)
    found += [
        f"hidden-test line {line!r}"
        for line in hidden
        if line in lines and line not in visible and not line.startswith("#")
    ]
    solution, shown = _blocks(src, SOLUTION_MARKERS)
    found += [
        f"solution line {line!r}"
        for line in solution
        if len(line) >= MIN_SOLUTION_LINE and line in text and line not in shown
    ]
    return found


# --------------------------------------------------------------------------- real notebooks


def test_every_learner_notebook_has_its_source():
    orphans = sorted(set(LEARNER_IDS) - set(SOURCE_IDS))
    assert not orphans, f"notebooks/ without a source/ notebook: {orphans}"


@pytest.mark.parametrize("nb_id", SOURCE_IDS)
def test_source_id_is_a_course_assignment(nb_id):
    base = split_assignment(nb_id)[0]  # 06_rope_ko: the Korean 06_rope
    assert base in ASSIGNMENTS, f"{nb_id} is not one of {ASSIGNMENTS} (or a translation of one)"


@pytest.mark.parametrize(("folder", "nb_id"), STORED, ids=[f"{f}/{i}" for f, i in STORED])
def test_stored_without_outputs_and_with_python3(folder, nb_id):
    problems = storage_problems(nb_path(ROOT, folder, nb_id))
    assert not problems, f"{folder}/{nb_id}: " + "; ".join(problems)


@pytest.mark.parametrize("nb_id", SOURCE_IDS)
def test_nothing_leaks_into_the_learner_notebook(nb_id):
    learner = nb_path(ROOT, "notebooks", nb_id)
    if not learner.exists():
        pytest.fail(f"notebooks/{nb_id} is missing: run `make notebooks`")
    found = leaks(nb_path(ROOT, "source", nb_id), learner)
    assert not found, f"notebooks/{nb_id} shows: " + "; ".join(found)


@pytest.mark.slow
@pytest.mark.parametrize("nb_id", SOURCE_IDS)
def test_source_notebook_executes(nb_id, tmp_path_factory):
    """Top to bottom without an error (once for the test run: the claims tests read the
    outputs of this same execution), and no cell writes to stderr: a warning there is shown
    to the learner under the cell (a library's deprecation, a figure's clashing keywords)."""
    nb = executed_notebook(nb_id, tmp_path_factory)  # raises CellExecutionError where one fails
    warned = [
        f"{cell.get('id')}: {out.text.strip()[:300]}"
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream" and out.get("name") == "stderr"
    ]
    assert not warned, f"{nb_id} writes to stderr under its cells:\n" + "\n".join(warned)


@pytest.mark.slow
@pytest.mark.parametrize("nb_id", SOURCE_IDS)
def test_source_notebook_executes_as_graded(nb_id, tmp_path):
    """While grading, the kernel runs only the cells with an nbgrader role (teaching cells
    are skipped): the solutions and every visible and hidden test must pass without them."""
    from helpers.teacher.nbgrader_plugin import is_teaching_cell

    source = nb_path(ROOT, "source", nb_id)
    nb = nbformat.read(source, as_version=4)
    teaching = [c for c in nb.cells if is_teaching_cell(c)]
    assert teaching, f"{nb_id} has no teaching cell to leave out"
    nb.cells = [c for c in nb.cells if not is_teaching_cell(c)]
    graded = tmp_path / "graded" / nb_id / f"{nb_id}.ipynb"
    graded.parent.mkdir(parents=True)
    nbformat.write(nb, graded)
    execute_copy(graded, tmp_path / "run")


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory) -> Path:
    """notebooks/ regenerated from a copy of source/ (all ids at once, one course root)."""
    return regenerate(ROOT, SOURCE_IDS, tmp_path_factory.mktemp("regenerated"))


@pytest.mark.slow
@pytest.mark.parametrize("nb_id", SOURCE_IDS)
def test_notebooks_are_source_regenerated(nb_id, regenerated):
    diffs = folder_differences(regenerated / "notebooks" / nb_id, ROOT / "notebooks" / nb_id)
    assert not diffs, (
        f"notebooks/{nb_id} is not what source/{nb_id} generates "
        "(run `make notebooks`): " + "; ".join(diffs)
    )


@pytest.mark.slow
@pytest.mark.parametrize("nb_id", SOURCE_IDS)
def test_nbgrader_validate_passes_source_and_fails_learner(nb_id, tmp_path):
    if not nb_path(ROOT, "notebooks", nb_id).exists():
        pytest.fail(f"notebooks/{nb_id} is missing: run `make notebooks`")
    course = course_copy(ROOT, tmp_path, [nb_id], learner=True)
    learner = nb_path(course, "notebooks", nb_id)
    status, said, output = nbgrader_validate_source_and_learner(
        nb_path(course, "source", nb_id), learner, course
    )
    assert status == 0 and validation_failures(said) == 0, f"source/{nb_id}:\n{said}"
    expected = graded_test_cells(learner) + written_answer_cells(learner)
    assert validation_failures(output) == expected, (
        f"notebooks/{nb_id}: every one of its {expected} graded test cells and written "
        f"answers should fail before it is answered:\n{output}"
    )


# --------------------------------------------------------------------------- a tiny course
# The checks above, proven on a course of one notebook that is built here.

TINY = "00_tiny"
TINY_SOLUTION = "result_of_the_square = x * x"


def tiny_notebook(
    solution_body: str = f"    {TINY_SOLUTION}\n    return result_of_the_square",
) -> nbformat.NotebookNode:
    """An instructor notebook: imports, one answer cell, one test cell with hidden tests."""
    v4 = nbformat.v4
    nb = v4.new_notebook()
    nb.metadata = {
        "kernelspec": dict(KERNELSPEC),
        "language_info": dict(kernel_info.LANGUAGE_INFO),
    }
    nb.cells = [
        v4.new_markdown_cell("# A tiny notebook\n\nExercise 1: `square` (1 point)"),
        nbcell(
            "code",
            "import math\n\n\ndef grade(name):\n    assert square(4) == 16, name",
            grade_id="imports",
            locked=True,
        ),
        nbcell(
            "code",
            (
                'def square(x):\n    """x times x."""\n    ### BEGIN SOLUTION\n'
                f"{solution_body}\n    ### END SOLUTION"
            ),
            grade_id="answer_square",
            solution=True,
        ),
        nbcell(
            "code",
            (
                '"""square: squares small numbers."""\nassert square(3) == 9\n'
                '### BEGIN HIDDEN TESTS\ngrade("square")\nassert square(-2) == 4\n'
                "### END HIDDEN TESTS"
            ),
            grade_id="test_square",
            grade=True,
            locked=True,
            points=1,
        ),
        v4.new_code_cell("print(math.sqrt(square(5)))"),
    ]
    for index, each in enumerate(nb.cells):
        each["id"] = f"cell-{index}"
    return nb


@pytest.fixture(scope="module")
def tiny_course(tmp_path_factory) -> Path:
    """A course root with source/00_tiny and its generated notebooks/00_tiny."""
    root = tmp_path_factory.mktemp("tiny_course")
    shutil.copy2(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    (root / "source" / TINY).mkdir(parents=True)
    nbformat.write(tiny_notebook(), nb_path(root, "source", TINY))
    (root / "source" / TINY / "data.txt").write_text("a file the notebook ships\n")
    assert cli.generate([TINY], root=root) == 0
    return root


def test_ids_are_found_at_collection(tmp_path):
    (tmp_path / "source" / "01_a").mkdir(parents=True)
    nbformat.write(tiny_notebook(), nb_path(tmp_path, "source", "01_a"))
    (tmp_path / "source" / "02_b").mkdir()
    (tmp_path / "source" / "02_b" / "other.ipynb").write_text("{}")
    assert notebook_ids(tmp_path, "source") == ["01_a"]
    assert notebook_ids(tmp_path, "notebooks") == []


def test_storage_check_passes_clean_and_flags_dirty(tmp_path):
    path = tmp_path / "nb.ipynb"
    nbformat.write(tiny_notebook(), path)
    assert storage_problems(path) == []
    dirty = tiny_notebook()
    dirty.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="hi\n")]
    dirty.cells[2].execution_count = 3
    dirty.metadata["kernelspec"] = {"name": "myenv", "display_name": "My env", "language": "python"}
    dirty.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {}}
    nbformat.write(dirty, path)
    problems = " | ".join(storage_problems(path))
    for expected in (
        "cell 1 has outputs",
        "cell 2 has execution_count 3",
        "kernelspec is",
        "widget state",
    ):
        assert expected in problems


def test_leak_check_flags_solutions_and_hidden_tests(tmp_path):
    source = tmp_path / "source.ipynb"
    nbformat.write(tiny_notebook(), source)
    assert leaks(source, source)  # the instructor notebook leaks everything, of course
    learner = tiny_notebook("    # YOUR CODE HERE\n    raise NotImplementedError()")
    learner.cells[2].source = (
        learner.cells[2]
        .source.replace("### BEGIN SOLUTION\n", "")
        .replace("\n    ### END SOLUTION", "")
    )
    learner.cells[3].source = '"""square: squares small numbers."""\nassert square(3) == 9\n'
    path = tmp_path / "learner.ipynb"
    nbformat.write(learner, path)
    assert leaks(source, path) == []
    leaky = copy.deepcopy(learner)
    leaky.cells[4].source = f"# hint: {TINY_SOLUTION}"
    nbformat.write(leaky, path)
    assert leaks(source, path) == [f"solution line {TINY_SOLUTION!r}"]
    # the same line written by the author in a teaching cell of the source is by design
    shown = tiny_notebook()
    shown.cells[4].source = TINY_SOLUTION
    nbformat.write(shown, source)
    leaky.cells[4].source = TINY_SOLUTION
    nbformat.write(leaky, path)
    assert leaks(source, path) == []
    nbformat.write(tiny_notebook(), source)
    leaky = copy.deepcopy(learner)
    leaky.cells[3].source += "assert square(-2) == 4\n"
    nbformat.write(leaky, path)
    assert leaks(source, path) == ["hidden-test line 'assert square(-2) == 4'"]
    leaky.cells[3].source += 'grade("square")\n'
    nbformat.write(leaky, path)
    assert "hidden-test call 'grade('" in leaks(source, path)


def test_json_comparison_names_what_differs():
    a = json.loads(nbformat.writes(tiny_notebook()))
    assert notebook_json_differences(a, copy.deepcopy(a)) == []
    b = copy.deepcopy(a)
    b["cells"][2]["source"] += "\n"
    b["metadata"]["kernelspec"]["display_name"] = "Python 3"
    assert notebook_json_differences(a, b) == [
        "top-level key 'metadata' differs",
        "cell 2 differs in ['source']",
    ]
    del b["cells"][4]
    assert "5 cells generated, 4 committed" in notebook_json_differences(a, b)


@pytest.mark.slow
def test_tiny_course_passes_every_check(tiny_course, tmp_path):
    source = nb_path(tiny_course, "source", TINY)
    learner = nb_path(tiny_course, "notebooks", TINY)
    assert (tiny_course / "notebooks" / TINY / "data.txt").exists()
    assert storage_problems(source) == [] and storage_problems(learner) == []
    assert leaks(source, learner) == []
    execute_copy(source, tmp_path / "run")
    again = regenerate(tiny_course, [TINY], tmp_path / "again")
    assert folder_differences(again / "notebooks" / TINY, tiny_course / "notebooks" / TINY) == []
    status, said, output = nbgrader_validate_source_and_learner(source, learner, tiny_course)
    assert status == 0 and validation_failures(said) == 0, said
    assert "NotImplementedError" not in said
    assert validation_failures(output) == graded_test_cells(learner) == 1, output
    assert "NotImplementedError" in output


@pytest.mark.slow
def test_tiny_course_checks_catch_broken_notebooks(tiny_course, tmp_path):
    # a notebook that raises does not execute
    broken = tiny_notebook()
    broken.cells[4].source = "print(1 / 0)"
    (tmp_path / "broken").mkdir()
    nbformat.write(broken, tmp_path / "broken" / "broken.ipynb")
    with pytest.raises(CellExecutionError, match="ZeroDivisionError"):
        execute_copy(tmp_path / "broken" / "broken.ipynb", tmp_path / "run")
    # a learner notebook edited by hand (or a stale one) differs from the regenerated one
    committed = tmp_path / "committed"
    shutil.copytree(tiny_course / "notebooks" / TINY, committed)
    edited = nbformat.read(committed / f"{TINY}.ipynb", as_version=4)
    edited.cells[0].source += "\nEdited by hand."
    nbformat.write(edited, committed / f"{TINY}.ipynb")
    (committed / "data.txt").write_text("changed\n")
    diffs = folder_differences(tiny_course / "notebooks" / TINY, committed)
    assert diffs == [f"{TINY}.ipynb: cell 0 differs in ['source']", "data.txt: differs"]
    assert "missing" in folder_differences(tiny_course / "notebooks" / TINY, tmp_path / "none")[0]
    # a wrong solution fails nbgrader validate, on the hidden tests too
    wrong = course_copy(tiny_course, tmp_path / "wrong", [TINY])
    nbformat.write(
        tiny_notebook("    return abs(x) * 3 if x > 0 else x * x"), nb_path(wrong, "source", TINY)
    )
    status, output = nbgrader_validate(nb_path(wrong, "source", TINY), wrong)
    assert status == 0 and validation_failures(output) == 1, output
    # validated with its learner notebook, the failing source is not taken for a pass
    learner = nb_path(tiny_course, "notebooks", TINY)
    status, said, _ = nbgrader_validate_source_and_learner(
        nb_path(wrong, "source", TINY), learner, wrong
    )
    assert status == 0 and validation_failures(said) == 1, said

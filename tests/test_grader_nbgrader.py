"""The grading engine through the real ``nbgrader autograde`` and ``generate_feedback``.

One temporary course (tests/fixtures/grading_course.py) serves every test: the fixture
notebook is released with ``generate_assignment``, one submission per scenario is
placed in ``submitted/<student>/``, then ``autograde`` and ``generate_feedback`` run
once for the whole batch. Scores are read from nbgrader's gradebook.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat
import pytest

from tests.fixtures import grading_course as gc

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

MISTAKE_STUDENTS = {f"mistake{i:02d}": (fn, name) for i, (fn, name, _) in enumerate(gc.MISTAKES)}
TAMPERS = {**gc.TAMPERS, **gc.SLOW_TAMPERS}
# A teaching cell of the learner's own: leaves a file and prints when it runs.
TEACHING_CELL = "open('teaching_ran.txt', 'w').write('ran')\nprint('the teaching cell ran')"


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    root = gc.make_course(tmp_path_factory.mktemp("course"))
    gc.submit(root, "correct1", gc.correct_submission(root))
    gc.submit(root, "correct2", gc.correct_submission(root))
    gc.submit(root, "stubs", gc.released(root))
    for student, (fn, name) in MISTAKE_STUDENTS.items():
        body = next(b for f, m, b in gc.MISTAKES if (f, m) == (fn, name))
        gc.submit(root, student, gc.submission(root, answers={**gc.SOLUTIONS, fn: body}))
    for name in TAMPERS:
        gc.submit(root, f"tamper_{name}", gc.tamper_notebook(gc.released(root), name))
    no_position_check = gc.SOLUTIONS["apply_rope"].replace("np.any(np.asarray(pos) < 0)", "False")
    gc.submit(
        root,
        "partial",
        gc.submission(root, answers={**gc.SOLUTIONS, "apply_rope": no_position_check}),
    )
    plots = "from helpers.plots import layout_figure\n" + gc.answer_cell_source(
        "softmax", gc.SOLUTIONS["softmax"]
    )
    gc.submit(
        root,
        "plots_import",
        gc.submission(root, answers=gc.SOLUTIONS, sources={"softmax": plots}),
    )
    deleted = gc.correct_submission(root)
    gone = ("answer_turns", "test_turns")
    deleted.cells = [
        c for c in deleted.cells if c.metadata.get("nbgrader", {}).get("grade_id") not in gone
    ]
    gc.submit(root, "deleted_cells", deleted)
    teaching = gc.edit(gc.correct_submission(root), extra_cells=[("answer_softmax", TEACHING_CELL)])
    gc.submit(root, "teaching", teaching)
    gc.submit(root, "teaching_run", teaching)
    gc.nbgrader(root, "autograde", gc.ASSIGNMENT, "--force", "--log-level=WARN")
    gc.nbgrader(root, "generate_feedback", gc.ASSIGNMENT, "--force", "--log-level=WARN")
    return root


def _total(root: Path, student: str) -> float:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root}/gradebook.db") as gb:
        return gb.find_submission(gc.ASSIGNMENT, student).score


def _outputs(root: Path, student: str) -> dict[str, list]:
    nb = nbformat.read(
        str(root / "autograded" / student / gc.ASSIGNMENT / f"{gc.ASSIGNMENT}.ipynb"), as_version=4
    )
    return {
        c.metadata.get("nbgrader", {}).get("grade_id", f"cell{i}"): c.get("outputs", [])
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
    }


def _feedback_text(root: Path, student: str) -> str:
    page = (root / "feedback" / student / gc.ASSIGNMENT / f"{gc.ASSIGNMENT}.html").read_text(
        encoding="utf-8"
    )
    page = re.sub(r"<style.*?</style>|<script.*?</script>", " ", page, flags=re.DOTALL)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _expected_scores(lost: set[str]) -> dict[str, float]:
    return {
        gid: (0 if gid.removeprefix("test_").split("_part")[0] in lost else pts)
        for gid, pts in gc.full_marks().items()
    }


def _assert_scores(root: Path, student: str, lost: set[str]) -> None:
    assert gc.scores(root, student) == _expected_scores(lost)
    assert _total(root, student) == sum(_expected_scores(lost).values())


def test_correct_submissions_get_full_marks(course):
    for student in ("correct1", "correct2"):
        _assert_scores(course, student, set())
        assert _total(course, student) == gc.TOTAL_POINTS
        for gid in gc.full_marks():
            (out,) = _outputs(course, student)[gid]
            assert out.output_type == "stream" and out.name == "stdout"
            assert "passed" in out.text


def test_stubs_get_zero(course):
    _assert_scores(course, "stubs", set(gc.FUNCTIONS))
    assert _total(course, "stubs") == 0
    (out,) = _outputs(course, "stubs")["test_apply_rope"]
    assert out.ename == "WrongAnswer" and "not written yet" in out.evalue


@pytest.mark.parametrize("student", sorted(MISTAKE_STUDENTS))
def test_each_mistake_loses_its_function_and_is_named(course, student):
    """A catalogued mistake loses the points of the checks it fails (partial credit keeps
    those it passes), costs no other function anything, and is named in the feedback."""
    function, mistake = MISTAKE_STUDENTS[student]
    _assert_lost(course, student, {function})
    for gid in gc.points_of(function):
        text = _output_text(_outputs(course, student)[gid])
        assert mistake in text
        assert "replay with" not in text  # the teacher's line, kept out of the learner's
    text = _feedback_text(course, student)
    assert mistake in text
    assert "BEGIN HIDDEN TESTS" not in text and f'grade("{function}")' not in text


def _output_text(outputs: list) -> str:
    return "\n".join(str(o.get("text", "")) + str(o.get("evalue", "")) for o in outputs)


def _assert_lost(root: Path, student: str, lost: set[str], nothing_left: bool = False) -> None:
    """The functions in ``lost`` lose points (all of them when ``nothing_left``); the
    others keep every point."""
    got = gc.scores(root, student)
    for gid, pts in gc.full_marks().items():
        function = gid.removeprefix("test_").split("_part")[0]
        if function not in lost:
            assert got[gid] == pts, (gid, got[gid])
        elif nothing_left:
            assert got[gid] == 0, (gid, got[gid])
        else:
            assert 0 <= got[gid] < pts, (gid, got[gid])


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_tamper_attempts_gain_nothing(course, name):
    _, lost, words = TAMPERS[name]
    lost = set(gc.FUNCTIONS) if lost == "all" else lost
    student = f"tamper_{name}"
    reached_for_answers = words == "helpers"
    _assert_lost(course, student, lost, nothing_left=reached_for_answers)
    for fn in lost:
        assert words in _output_text(_outputs(course, student)[f"test_{fn}"])


def _with_kernel(root: Path, student: str, *flags: str) -> None:
    """Autograde one learner again with the kernel on (``SafeExecute.run_kernel``)."""
    gc.nbgrader(
        root,
        "autograde",
        gc.ASSIGNMENT,
        f"--student={student}",
        "--force",
        "--log-level=WARN",
        "--SafeExecute.run_kernel=True",
        *flags,
    )


def test_no_kernel_runs_and_the_cells_say_so(course):
    """The course starts no kernel: answer cells carry the grader's note, not a kernel's
    output; the os._exit and endless-loop answers lose only their own functions."""
    from helpers.teacher.nbgrader_plugin import GRADER_NOTE

    for student in ("tamper_os_exit", "tamper_endless_loop", "correct1"):
        outputs = _outputs(course, student)
        for gid in ("imports", "answer_softmax", "answer_apply_rope", "answer_rope_score"):
            assert [o.get("text", "").strip() for o in outputs[gid]] == [GRADER_NOTE], gid
        assert not any(o.get("ename") == "CellNotRun" for outs in outputs.values() for o in outs)


def test_a_dead_kernel_leaves_the_rest_unrun_but_graded(course):
    """With the kernel on (run_kernel = True), a kernel that dies stops the cells after it;
    the grades are those of the run without a kernel."""
    before = gc.scores(course, "tamper_os_exit")
    _with_kernel(course, "tamper_os_exit")
    outputs = _outputs(course, "tamper_os_exit")
    notes = [o for o in outputs["answer_rope_score"] if o.get("ename") == "CellNotRun"]
    assert notes and "stopped the kernel" in notes[0].evalue
    assert outputs["test_alibi_bias"][0].output_type == "stream"
    assert gc.scores(course, "tamper_os_exit") == before


def test_a_hanging_kernel_is_interrupted_and_grading_goes_on(course):
    before = gc.scores(course, "tamper_endless_loop")
    _with_kernel(course, "tamper_endless_loop")
    outputs = _outputs(course, "tamper_endless_loop")
    hung = [o for cell in outputs.values() for o in cell if o.get("ename") == "CellTimeoutError"]
    assert len(hung) == 1
    notes = [o for o in outputs["answer_apply_rope"] if o.get("ename") == "CellNotRun"]
    assert notes and "timed out" in notes[0].evalue
    assert outputs["test_apply_rope"][0].output_type == "stream"
    assert gc.scores(course, "tamper_endless_loop") == before


def test_feedback_never_shows_hidden_tests(course):
    for student in ("correct1", "stubs", "mistake00", "tamper_silence_tracebacks"):
        text = _feedback_text(course, student)
        assert "HIDDEN TESTS" not in text
        for fn in gc.FUNCTIONS:
            assert f'grade("{fn}")' not in text
        # The visible asserts stay: they are part of the learner's notebook.
        assert "softmax([1000.0, 1000.0])" in text


def _teaching_cell(root: Path, student: str):
    path = root / "autograded" / student / gc.ASSIGNMENT / f"{gc.ASSIGNMENT}.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    (cell,) = [c for c in nb.cells if "teaching_ran.txt" in c.source]
    return cell, path.parent / "teaching_ran.txt"


def test_teaching_cells_are_not_run_while_grading(course):
    """A cell without an nbgrader role gets a note instead of running (no kernel runs at
    all by default). The grades do not change."""
    from helpers.teacher.nbgrader_plugin import NOT_RUN_NOTE

    _assert_scores(course, "teaching", set())
    cell, marker = _teaching_cell(course, "teaching")
    assert [o.get("text", "").strip() for o in cell.outputs] == [NOT_RUN_NOTE]
    assert not marker.exists()
    assert _outputs(course, "teaching")["test_softmax"][0].output_type == "stream"

    # with the kernel on, run_teaching_cells = True runs it (the same submission, renamed)
    _with_kernel(course, "teaching_run", "--SafeExecute.run_teaching_cells=True")
    _assert_scores(course, "teaching_run", set())
    cell, marker = _teaching_cell(course, "teaching_run")
    assert [o.get("text", "") for o in cell.outputs] == ["the teaching cell ran\n"]
    assert marker.read_text() == "ran"


def test_partial_credit_through_nbgrader(course):
    """apply_rope right but without a ValueError for pos=-1: the bad-input share (1 of 6
    weight units) of each of its grade cells is lost, nothing else; the feedback says what
    was right and what was not."""
    got = gc.scores(course, "partial")
    want = dict(gc.full_marks())
    for gid, pts in gc.points_of("apply_rope").items():
        want[gid] = pytest.approx(pts * 5 / 6, abs=1e-3)
    assert got == want
    assert _total(course, "partial") == pytest.approx(gc.TOTAL_POINTS - 3 / 6, abs=1e-3)
    outputs = _outputs(course, "partial")["test_apply_rope"]
    assert [o.output_type for o in outputs] == ["stream", "execute_result"]
    assert "partly right" in outputs[0].text and "bad input wrong" in outputs[0].text
    assert "pos=-1" in outputs[0].text
    assert "replay with" not in _feedback_text(course, "partial")  # the teacher's line only


def test_an_innocent_import_of_the_course_s_plots_costs_nothing(course):
    _assert_scores(course, "plots_import", set())


def test_an_answer_cell_deleted_with_its_test_cell_costs_only_its_function(course):
    """nbgrader alone fails the whole notebook here (KeyError: 'answer_turns'); the test cell
    comes back, turns is graded as not defined, and every other function keeps its points."""
    assert gc.scores(course, "deleted_cells") == _expected_scores({"turns"})
    (out,) = _outputs(course, "deleted_cells")["test_turns"]
    assert out.ename == "WrongAnswer" and "turns is not defined" in out.evalue

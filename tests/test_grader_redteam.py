"""The grader attacked as a learner would: points without code, and the sandbox's bounds.

Each test is an attack written as a learner's answer cells, graded through the isolated
check that autograde uses (``isolated.check_notebook``: the real worker in the real
bubblewrap sandbox), and fails while the attack works:

- stand-ins: a name the notebook never defines, a graded function written as a call to
  another graded one, a cycle of two, a stand-in asked for far more memory than a case;
- the sandbox: /tmp and the working folder filled, new processes through
  ``subprocess`` and ``_posixsubprocess.fork_exec``, cells and calls that block or ignore
  SIGALRM and sleep.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import pytest

from helpers.teacher import isolated, sandbox, standins

REPO = Path(__file__).resolve().parents[1]

needs_bwrap = pytest.mark.skipif(
    not sandbox.available(),
    reason=f"the sandbox cannot run here ({sandbox.reason_unavailable()}): make system-deps",
)


def _notebook(nb_id: str, **sources: str) -> nbformat.NotebookNode:
    """A source notebook of the course (its answers right) with some answer cells replaced."""
    nb = nbformat.read(REPO / "source" / nb_id / f"{nb_id}.ipynb", as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in sources:
            cell.source = textwrap.dedent(sources.pop(grade_id))
    assert not sources, f"no such answer cells: {sorted(sources)}"
    return nb


def _failed(report) -> set[str]:
    return {r.name for r in report.results if not r.passed}


# --------------------------------------------------------------------------- stand-ins

THETAS_BY_ALIAS = """
def thetas(d, base=THETA_BASE):
    return angle_rates(d, base)
"""

# The interleaved layout through the half-split one and back: no rotation of its own.
APPLY_VIA_HALF = """
def _to_half(x):
    x = np.asarray(x, dtype=np.float64)
    return np.concatenate([x[..., 0::2], x[..., 1::2]], axis=-1)


def _from_half(h):
    d = h.shape[-1]
    out = np.empty_like(h)
    out[..., 0::2], out[..., 1::2] = h[..., : d // 2], h[..., d // 2 :]
    return out


def apply_rope(vec, pos, base=THETA_BASE):
    return _from_half(rope_half(_to_half(vec), pos, base))
"""

HALF_VIA_APPLY = """
def rope_half(vec, pos, base=THETA_BASE):
    h = np.asarray(vec, dtype=np.float64)
    d = h.shape[-1]
    x = np.empty_like(h)
    x[..., 0::2], x[..., 1::2] = h[..., : d // 2], h[..., d // 2 :]
    out = apply_rope(x, pos, base)
    return np.concatenate([out[..., 0::2], out[..., 1::2]], axis=-1)
"""

NOT_WRITTEN = """
def apply_rope(vec, pos, base=THETA_BASE):
    raise NotImplementedError
"""


@needs_bwrap
def test_a_name_the_notebook_never_defines_fails_as_in_the_kernel():
    """06's thetas as a call to 02's angle_rates, which 06 never defines: NameError, as in
    the learner's own kernel (it passed when the reference stood in for any graded name)."""
    report = isolated.check_notebook(_notebook("06_rope", answer_thetas=THETAS_BY_ALIAS), seed=5)
    assert "thetas" in _failed(report), report.table()
    assert "NameError" in report["thetas"].message or "angle_rates" in report["thetas"].message
    # everything else of the notebook is graded as before
    assert _failed(report) <= {"thetas", "turns", "slow_pairs"}, report.table()


@needs_bwrap
def test_a_graded_function_written_as_another_is_graded_by_the_learners_other():
    """rope_half through apply_rope, apply_rope left unwritten: the reference of rope_half
    does not call apply_rope, so the learner's own apply_rope runs, and rope_half fails."""
    nb = _notebook("06_rope", answer_rope_half=HALF_VIA_APPLY, answer_apply_rope=NOT_WRITTEN)
    report = isolated.check_notebook(nb, seed=5)
    assert {"rope_half", "apply_rope"} <= _failed(report), report.table()
    assert "demo_vectors" not in _failed(report)


@needs_bwrap
def test_a_cycle_of_two_graded_functions_earns_nothing():
    """apply_rope through rope_half and rope_half through apply_rope: no rotation anywhere,
    and neither passes (each passed with the reference standing in for the other)."""
    nb = _notebook("06_rope", answer_apply_rope=APPLY_VIA_HALF, answer_rope_half=HALF_VIA_APPLY)
    report = isolated.check_notebook(nb, seed=5)
    assert {"apply_rope", "rope_half"} <= _failed(report), report.table()
    assert {"dot", "thetas", "turns", "slow_pairs", "interleaved_to_half"}.isdisjoint(
        _failed(report)
    ), report.table()


def test_a_definition_that_reaches_back_gets_no_stand_in():
    """The policy itself: rope_score's reference calls apply_rope, but a learner's
    apply_rope that calls rope_score back is never replaced by the reference's."""
    learner = standins.learner_calls(
        [
            "def apply_rope(v, p, base=1.0):\n    return helper(v)\n",
            "def helper(v):\n    return rope_score(v, v, 0, 0)\n",
            "def rope_score(q, k, m, n, base=1.0):\n    return dot(apply_rope(q, m), q)\n",
            "def dot(a, b):\n    return 0.0\n",
        ]
    )
    defined = {"apply_rope", "helper", "rope_score", "dot"}
    chosen, _ = standins.plan("rope_score", defined, learner, ["apply_rope", "dot", "thetas"], [])
    assert chosen == ["dot"]  # apply_rope reaches back; thetas is not defined
    chosen, _ = standins.plan("dot", defined, learner, ["apply_rope", "rope_score"], [])
    assert chosen == []  # dot's reference calls no graded function


def test_the_reference_call_graph_is_read_from_the_reference():
    """Spot checks against the formulas of COURSE_SPEC.md: rope_score = dot(apply_rope(q, m),
    apply_rope(k, n)); self_attention = attention(X Wq, X Wk, X Wv); thetas calls no
    graded function of 06 but 02's angle_rates; dot calls none."""
    graph = standins.reference_calls()
    assert {"apply_rope", "dot"} <= graph["rope_score"]
    assert {"attention", "softmax"} <= graph["self_attention"]
    assert "apply_rope" not in graph["rope_half"] and "rope_half" not in graph["apply_rope"]
    assert not {n for n in graph["dot"] if n.islower()}
    for name, reach in graph.items():  # the reference's graph has no cycle
        assert name not in reach, name


STAND_IN_MEMORY = """
def self_attention(X, Wq, Wk, Wv):
    big = np.ones((9000, 2))
    attention(big, big, big)  # 9000 x 9000 scores, three times over: about 2 GB
    X = np.asarray(X, dtype=np.float64)
    return attention(X @ np.asarray(Wq), X @ np.asarray(Wk), X @ np.asarray(Wv))
"""


@needs_bwrap
def test_a_stand_in_asked_for_gigabytes_fails_that_function_only():
    """self_attention calls the stand-in attention on 9000 x 2 arrays: the grading process
    does not grow (it grew by over 1 GB when it computed the reference itself), that
    function fails, and the rest of 01 is graded as before."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    nb = _notebook("01_order", answer_self_attention=STAND_IN_MEMORY)
    report = isolated.check_notebook(nb, seed=2, names=["self_attention", "softmax"])
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
    assert grown < 300 * 1024**2, f"the grading process grew by {grown / 1024**2:.0f} MB"
    assert _failed(report) == {"self_attention"}, report.table()
    assert "too costly" in report["self_attention"].message


# --------------------------------------------------------------------------- the sandbox

FILL = """
import os
_written = 0
for _i in range(12):  # 192 MB in files of 16 MB (each under the file size limit)
    with open(os.path.join({folder}, f"fill-{{_i}}"), "wb") as _fh:
        _fh.write(b"x" * (16 * 1024**2))
    _written += 16 * 1024**2
"""


def _softmax_after(prefix: str) -> dict:
    nb = nbformat.read(REPO / "source" / "01_order" / "01_order.ipynb", as_version=4)
    cell = next(
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "answer_softmax"
    )
    return {"answer_softmax": textwrap.dedent(prefix) + "\n" + cell.source}


@needs_bwrap
@pytest.mark.parametrize(
    ("where", "folder", "refusal"),
    [
        ("tmp", '"/tmp"', "No space left on device"),
        ("workdir", "os.getcwd()", "No space left on device"),
        ("dev_shm", '"/dev/shm"', "No space left on device"),
        ("dev", '"/dev"', "Read-only file system"),
    ],
)
def test_filling_a_writable_folder_stops_at_its_size(where, folder, refusal):
    """192 MB written to /tmp, /dev/shm or /dev (memory on the host) or to the working
    folder (the host's disk, before): the sandbox's folders are of a fixed size and /dev is
    read-only, so the cell fails and costs softmax only."""
    nb = _notebook("01_order", **_softmax_after(FILL.format(folder=folder)))
    report = isolated.check_notebook(nb, seed=1, names=["softmax", "attention"])
    assert _failed(report) == {"softmax"}, (where, report.table())
    assert refusal in report["softmax"].message, report["softmax"].message


# softmax's cell lifts its own memory limit, then asks for 3.2 GB, before the right softmax
LIFT_LIMIT = """
import resource
import numpy as _np
resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
_big = _np.empty(400_000_000)  # 3.2 GB of address space: what RLIMIT_AS counts
"""


@needs_bwrap
def test_a_cell_cannot_lift_its_own_limits():
    """The worker's limits are hard ones: a cell that raises its memory limit to unlimited
    and then asks for 3.2 GB of address space (which the machine has) fails, and costs softmax
    only."""
    nb = _notebook("01_order", **_softmax_after(LIFT_LIMIT))
    report = isolated.check_notebook(nb, seed=1, names=["softmax", "attention"])
    assert _failed(report) == {"softmax"}, report.table()


# A child process started at the top of softmax's cell, before the right softmax.
POPEN = """
import subprocess, sys
subprocess.run([sys.executable, "-c", "pass"], check=True)
"""

FORK_EXEC = """
import os, _posixsubprocess
_r, _w = os.pipe()
_pid = _posixsubprocess.fork_exec(
    [b"/bin/true"], [b"/bin/true"], True, (_w,), None, None,
    -1, -1, -1, -1, -1, -1, _r, _w, True, False, -1, None, None, None, -1, None, False,
)
os.waitpid(_pid, 0)
"""


@needs_bwrap
@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="fork_exec's arguments of 3.11")
@pytest.mark.parametrize("attack", [POPEN, FORK_EXEC], ids=["subprocess", "_posixsubprocess"])
def test_a_new_process_is_refused(attack):
    """softmax's cell starts a process before the right softmax: through subprocess or
    straight through _posixsubprocess.fork_exec, it is refused, and softmax fails."""
    report = isolated.check_notebook(
        _notebook("01_order", **_softmax_after(attack)), seed=1, names=["softmax"]
    )
    assert _failed(report) == {"softmax"}, report.table()
    assert "does not allow" in report["softmax"].message, report["softmax"].message


@needs_bwrap
def test_the_sandbox_refuses_processes_below_python(tmp_path):
    """The seccomp filter itself: os.fork, without the worker's audit hook, fails in the
    sandbox (EPERM); a thread still starts."""
    probe = textwrap.dedent(
        """
        import os, threading
        t = threading.Thread(target=lambda: None); t.start(); t.join()
        try:
            pid = os.fork()
        except PermissionError:
            print("refused")
        else:
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
            print("forked")
        """
    )
    program = sandbox.no_fork_filter()
    if program is None:
        pytest.skip("no seccomp program for this processor")
    read, write = os.pipe()
    os.write(write, program)
    os.close(write)
    try:
        argv = sandbox.wrap([sys.executable, "-c", probe], seccomp_fd=read)
        out = subprocess.run(
            argv, pass_fds=(read,), check=False, capture_output=True, text=True, timeout=60
        )
    finally:
        os.close(read)
    assert out.stdout.strip() == "refused", out.stdout + out.stderr
    plain = subprocess.run(
        sandbox.wrap([sys.executable, "-c", probe]),
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert plain.stdout.strip() == "forked", plain.stdout + plain.stderr  # the test can fail


SIGNAL_TRICKS = {
    "mask": "import signal, time\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n",
    "ignore": "import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n",
    "swallow": "import signal, time\nsignal.signal(signal.SIGALRM, lambda *a: None)\n",
}


def _signal_notebook(at_top: bool) -> nbformat.NotebookNode:
    """06 with every answer cell playing a signal trick, then sleeping: at the top of the
    cell, or in each function it defines."""
    nb = nbformat.read(REPO / "source" / "06_rope" / "06_rope.ipynb", as_version=4)
    tricks = list(SIGNAL_TRICKS.values())
    n = 0
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if not (meta.get("solution") and cell.cell_type == "code"):
            continue
        trick = tricks[n % len(tricks)]
        n += 1
        if at_top:
            cell.source = trick + "while True:\n    time.sleep(1)\n\n" + cell.source
        else:
            body = []
            for line in cell.source.splitlines():
                body.append(line)
                if line.startswith("def ") and line.rstrip().endswith(":"):
                    body.append("    " + trick.replace("\n", "\n    ").rstrip())
                    body.append("    while True:\n        time.sleep(1)")
            assert len(body) > len(cell.source.splitlines()), cell.source
            cell.source = "\n".join(body)
    return nb


@needs_bwrap
@pytest.mark.parametrize("at_top", [True, False], ids=["cells", "calls"])
def test_signal_tricks_do_not_extend_a_notebooks_budget(monkeypatch, at_top):
    """Every answer cell (or every graded function) blocks, ignores or swallows SIGALRM and
    sleeps: the notebook's grading ends within its budget (it took 2 min 34 s), and
    nothing passes."""
    monkeypatch.setattr(isolated, "NOTEBOOK_BUDGET", 12.0)
    started = time.monotonic()
    report = isolated.check_notebook(_signal_notebook(at_top), seed=1)
    took = time.monotonic() - started
    assert not any(r.passed for r in report.results), report.table()
    # the budget, and the workers' starts (not counted in it) on a busy machine
    assert took < 12.0 + 30.0, f"grading took {took:.0f} s"


# --------------------------------------------------------------------------- autograde


@needs_bwrap
@pytest.mark.slow
def test_points_without_code_through_autograde(tmp_path):
    """Through the course's nbgrader autograde: zed's thetas calls the undefined angle_rates
    and its apply_rope and rope_half call each other; none of them earns a point, while
    alice's honest notebook keeps every autograded point."""
    from helpers.teacher.checks import CHECKS
    from helpers.teacher.classroom.grading import autograde
    from tests import classroom_kit as kit

    assignment = "06_rope"
    if not kit.real_ids([assignment]):
        pytest.skip("06_rope is not in this repository")
    course = kit.course_with(tmp_path, [assignment])
    kit.fill(course, "alice", assignment)
    path = kit.fill(course, "zed", assignment)
    nb = nbformat.read(path, as_version=4)
    attack = {
        "answer_thetas": THETAS_BY_ALIAS,
        "answer_apply_rope": APPLY_VIA_HALF,
        "answer_rope_half": HALF_VIA_APPLY,
    }
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in attack:
            cell.source = textwrap.dedent(attack.pop(grade_id))
    assert not attack
    nbformat.write(nb, path)
    report = autograde(course, jobs=1, progress=False)
    assert report.sandboxed, report.summary()
    source = course / "source" / assignment / f"{assignment}.ipynb"
    full = report.max_scores[assignment] - kit.written_points(source)
    assert report.scores["alice"][assignment] == full
    lost = sum(CHECKS[n].points for n in ("thetas", "apply_rope", "rope_half"))
    assert lost > 0
    assert report.scores["zed"][assignment] <= full - lost, report.summary()


# softmax's cell starts 3,000 threads (small stacks: the memory limit alone would let about
# 38,000 start), then counts what it got, before the right softmax
THREADS = """
import threading as _t, time as _time
_t.stack_size(1 << 16)
_started = 0
try:
    for _ in range(3000):
        _t.Thread(target=_time.sleep, args=(5,), daemon=True).start()
        _started += 1
finally:
    print(f"threads started: {_started}")
"""


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="the grader runs as root here only")
def test_threads_are_bounded_when_the_grader_runs_as_root(monkeypatch):
    """As root, RLIMIT_NPROC binds nothing (the kernel exempts root, and the sandbox's uid
    is root's outside): 3,000 threads started. The sandbox's own pids cgroup holds the task
    limit: the cell fails with "can't start new thread" well below it, softmax alone fails,
    and no cgroup of this grading is left behind (another test's grading may hold its own
    meanwhile: only those this one made are looked at)."""
    from helpers.teacher import channel, task_cgroup

    if task_cgroup.parent() is None:
        pytest.skip("no pids cgroup can be made on this machine")
    made = []
    bound = task_cgroup.bound

    def recorded(pids, limit):
        group = bound(pids, limit)
        made.append(group)
        return group

    monkeypatch.setattr(task_cgroup, "bound", recorded)
    report = isolated.check_notebook(
        _notebook("01_order", **_softmax_after(THREADS)), seed=1, names=["softmax", "attention"]
    )
    assert _failed(report) == {"softmax"}, report.table()
    message = report["softmax"].message
    assert "can't start new thread" in message, message
    assert channel.TASK_LIMIT < 3000
    assert made and None not in made, made  # every sandbox of this grading had its cgroup
    assert not [g for g in made if g.exists()], made

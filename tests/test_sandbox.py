"""The grading sandbox: what learner code can see and change, directly and through autograde.

The attacks run as a learner's answer cell, through the real ``nbgrader autograde`` of the
course (its kernel and the grader's worker both run the cell), next to honest learners.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import nbformat
import pytest

from helpers.teacher import nbgrader_plugin, sandbox
from helpers.teacher.classroom.grades import read_scores
from helpers.teacher.classroom.grading import autograde
from tests import classroom_kit as kit
from tests import rehearsal

needs_bwrap = pytest.mark.skipif(
    not sandbox.available(),
    reason=f"the sandbox cannot run here ({sandbox.reason_unavailable()}): make system-deps",
)

PROBE = textwrap.dedent(
    """
    import glob, json, os, socket, sys
    course = sys.argv[1]
    out = {"relative": sorted(glob.glob("../../*/*/*.ipynb")),
           "absolute": sorted(glob.glob(course + "/**", recursive=True)),
           "cwd": os.getcwd()}
    def attempt(fn):
        try:
            fn()
            return "ok"
        except Exception as exc:
            return type(exc).__name__
    out["read_db"] = attempt(lambda: open(course + "/gradebook.db", "rb").read())
    out["write_own"] = attempt(lambda: open("mine.txt", "w").write("x"))
    out["write_other"] = attempt(lambda: open(course + "/submitted/bob/x.txt", "w").write("x"))
    out["write_tmp"] = attempt(lambda: open("/tmp/t.txt", "w").write("x"))
    out["host_tmp"] = os.path.exists(sys.argv[2])
    out["import_numpy"] = attempt(lambda: __import__("numpy"))
    out["import_helpers"] = attempt(lambda: __import__("helpers"))
    out["import_reference"] = attempt(lambda: __import__("helpers.reference"))
    out["import_checks"] = attempt(lambda: __import__("helpers.teacher.checks.rope"))
    out["import_maths"] = attempt(lambda: __import__("helpers.teacher.reference.rope"))
    out["maths_names"] = attempt(lambda: __import__("helpers.teacher.reference").teacher.reference.apply_rope)
    out["checks_catalogue"] = attempt(lambda: __import__("helpers.teacher.checks").teacher.checks.CHECKS)
    s = socket.socket()
    s.settimeout(2)
    out["network"] = attempt(lambda: s.connect(("1.1.1.1", 53)))
    print(json.dumps(out))
    """
)


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    course = tmp_path / "course"
    for student in ("alice", "bob"):
        for top in ("submitted", "autograded"):
            folder = course / top / student / "ex1"
            folder.mkdir(parents=True)
            (folder / "ex1.ipynb").write_text("{}")
    (course / "gradebook.db").write_bytes(b"SQLite format 3\x00")
    return course, course / "autograded" / "alice" / "ex1"


@needs_bwrap
def test_wrapped_process_sees_only_its_folder(tmp_path):
    """Own folder readable and writable; other learners, the gradebook, /tmp: invisible."""
    course, own = _tree(tmp_path)
    marker = tmp_path / "host-only.txt"
    marker.write_text("host")
    script = own / "probe.py"
    script.write_text(PROBE)
    argv = sandbox.wrap(
        [sys.executable, str(script), str(course), str(marker)], writable=[own], cwd=own
    )
    assert argv[0].endswith("bwrap")
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen["relative"] == ["../../alice/ex1/ex1.ipynb"]
    for p in seen["absolute"]:  # only own folder, and the folders on the way to it
        q = p.rstrip("/")
        assert q.startswith(str(own)) or str(own).startswith(q + "/"), p
    assert not any("bob" in p or "gradebook" in p or "submitted" in p for p in seen["absolute"])
    assert seen["read_db"] == "FileNotFoundError"
    assert seen["write_other"] == "FileNotFoundError"
    assert seen["write_own"] == "ok" and (own / "mine.txt").read_text() == "x"
    assert seen["write_tmp"] == "ok" and not Path("/tmp/t.txt").exists()
    assert seen["host_tmp"] is False
    assert seen["import_numpy"] == "ok" and seen["import_helpers"] == "ok"
    assert seen["import_reference"] == "ModuleNotFoundError"  # the answers stay outside
    assert seen["import_checks"] == "ModuleNotFoundError"
    assert seen["import_maths"] == "ModuleNotFoundError"
    assert seen["maths_names"] == "AttributeError"  # an empty folder inside
    assert seen["checks_catalogue"] == "AttributeError"  # an empty folder inside
    assert seen["network"] != "ok"
    assert seen["cwd"] == str(own)


def test_without_bwrap_warns_and_require_refuses(tmp_path):
    """No bubblewrap: a loud warning and the command unchanged; under require: an error."""
    code = "from helpers.teacher import sandbox; print(sandbox.wrap(['echo', 'hi']))"
    env = dict(os.environ, PE_COURSE_BWRAP=str(tmp_path / "no-bwrap"))
    env.pop("PE_COURSE_SANDBOX", None)
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['echo', 'hi']"
    assert "WARNING: GRADING RUNS UNSANDBOXED" in proc.stderr
    assert "not installed" in proc.stderr and "PE_COURSE_SANDBOX=require" in proc.stderr
    env["PE_COURSE_SANDBOX"] = "require"
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode != 0
    assert "SandboxUnavailable" in proc.stderr and "PE_COURSE_SANDBOX=require" in proc.stderr


def test_bad_arguments_are_named(monkeypatch, tmp_path):
    """A string argv, a single path, a missing folder, an unknown policy: ValueError."""
    with pytest.raises(ValueError, match="argv"):
        sandbox.wrap("python -c 1")
    with pytest.raises(ValueError, match="argv"):
        sandbox.wrap([])
    if sandbox.available():
        with pytest.raises(ValueError, match="writable"):
            sandbox.wrap(["true"], writable=str(tmp_path))
        with pytest.raises(ValueError, match="readable"):
            sandbox.wrap(["true"], readable=[tmp_path / "missing"])
    monkeypatch.setenv("PE_COURSE_SANDBOX", "sometimes")
    with pytest.raises(ValueError, match="PE_COURSE_SANDBOX"):
        sandbox.policy()


@needs_bwrap
def test_sandboxed_kernel_runs_and_interrupts(tmp_path):
    """A notebook runs in the sandboxed kernel; a cell past its timeout is interrupted and
    the kernel goes on with the next cell."""
    from nbclient import NotebookClient

    own = tmp_path / "own"
    own.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_code_cell("import os; print(os.getcwd(), '/'.join(os.listdir('/tmp')))"),
        nbformat.v4.new_code_cell("import time\nwhile True: time.sleep(0.1)"),
        nbformat.v4.new_code_cell("print('after', 6 * 7)"),
    ]
    client = NotebookClient(
        nb,
        kernel_manager_class=nbgrader_plugin.SandboxedKernelManager,
        timeout=5,
        allow_errors=True,
        interrupt_on_timeout=True,
        resources={"metadata": {"path": str(own)}},
    )
    with tempfile.NamedTemporaryFile(dir="/tmp", prefix="pe-host-only-") as marker:
        client.execute()
    cwd, inside_tmp = nb.cells[0].outputs[0]["text"].split()
    assert cwd == str(own)
    assert Path(marker.name).name not in inside_tmp.split("/")
    assert nb.cells[1].outputs[-1]["ename"] == "KeyboardInterrupt"
    assert nb.cells[2].outputs[0]["text"].strip() == "after 42"


# --------------------------------------------------------------------------- attacks

ATTACK = textwrap.dedent(
    """
    import glob as _glob, os as _os
    _COURSE = {course!r}
    _seen = sorted(_glob.glob("../../*/*/*.ipynb"))
    _seen += sorted(_glob.glob(_COURSE + "/**/*.ipynb", recursive=True))
    _seen += sorted(_glob.glob(_COURSE + "/*"))
    try:
        from helpers.reference import softmax as _ref
        _seen.append("REFERENCE-IMPORTED")
    except ImportError:
        pass
    try:
        with open("seen-" + str(_os.getpid()) + ".txt", "w") as _fh:
            _fh.write("\\n".join(_seen))
    except OSError:
        pass
    for _db in (_COURSE + "/gradebook.db", "../../../gradebook.db"):
        try:
            open(_db, "w").close()
        except OSError:
            pass
    for _f in _glob.glob(_COURSE + "/*/*/*/*.ipynb") + _glob.glob("../../../*/*/*/*"):
        if "zed" not in _f:
            try:
                _os.remove(_f)
            except OSError:
                pass
    """
)


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _attacker(course: Path, assignment: str) -> Path:
    """zed: correct answers, plus the attack at the top of the first answer cell."""
    path = kit.fill(course, "zed", assignment)
    nb = nbformat.read(path, as_version=4)
    first = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
    first.source = ATTACK.format(course=str(course)) + "\n" + first.source
    nbformat.write(nb, path)
    return path


def _attack_course(tmp_path: Path) -> tuple[Path, str]:
    ids = kit.real_ids(["01_order"])
    if ids and (kit.REPO / "helpers" / "teacher" / "nbgrader_plugin.py").exists():
        course = kit.course_with(tmp_path, ids)
        # The course starts no kernel while grading; the attack must meet the kernel's
        # sandbox as well as the worker's, so this course runs it.
        with open(course / "nbgrader_config.py", "a", encoding="utf-8") as fh:
            fh.write("\nc.SafeExecute.run_kernel = True\n")
        return course, ids[0]
    return kit.fixture_course(tmp_path), "ex1"


@needs_bwrap
@pytest.mark.slow
def test_attacks_through_autograde_take_nothing(tmp_path):
    """zed lists the course, truncates gradebook.db and deletes every notebook it can find,
    in its kernel and in the grader's worker; alice and bob keep their grades and files."""
    course, assignment = _attack_course(tmp_path)
    kit.fill(course, "alice", assignment)
    kit.fill(
        course,
        "bob",
        assignment,
        broken=rehearsal.answer_ids(course / "source" / assignment / f"{assignment}.ipynb")[-1:],
    )
    _attacker(course, assignment)
    before = _digest(course / "submitted" / "alice") | _digest(course / "submitted" / "bob")
    report = autograde(course, jobs=2, progress=False)
    assert report.sandboxed, report.summary()
    # every autograded point: the written answers wait for the teacher
    written = kit.written_points(course / "source" / assignment / f"{assignment}.ipynb")
    full = report.max_scores[assignment] - written
    assert report.scores["alice"][assignment] == full
    assert 0 < report.scores["bob"][assignment] < full
    # the gradebook still holds everyone, read afresh
    scores, _ = read_scores(course, [assignment], ["alice", "bob", "zed"])
    assert scores["alice"][assignment] == full
    assert scores["bob"][assignment] == report.scores["bob"][assignment]
    after = _digest(course / "submitted" / "alice") | _digest(course / "submitted" / "bob")
    assert after == before
    for student in ("alice", "bob"):
        assert (course / "autograded" / student / assignment / f"{assignment}.ipynb").exists()
    seen_files = list((course / "autograded" / "zed" / assignment).glob("seen-*.txt"))
    assert seen_files, "the attack ran in zed's kernel and wrote what it saw"
    for seen in seen_files:
        for line in seen.read_text().splitlines():
            assert "alice" not in line and "bob" not in line and "gradebook" not in line, line
            assert "submitted" not in line and "source" not in line, line
            assert line != "REFERENCE-IMPORTED"
    assert (course / "gradebook.db").stat().st_size > 0


@pytest.mark.slow
def test_attack_detected_without_sandbox(tmp_path, monkeypatch):
    """The same listing unsandboxed does see the others (so the test above can fail), and
    autograde says loudly that it ran unsandboxed."""
    course, assignment = _attack_course(tmp_path)
    kit.fill(course, "alice", assignment)
    path = kit.fill(course, "zed", assignment)
    nb = nbformat.read(path, as_version=4)
    first = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution"))
    listing = ATTACK.format(course=str(course)).split("for _db")[0]  # look, do not touch
    first.source = listing + "\n" + first.source
    nbformat.write(nb, path)
    monkeypatch.setenv("PE_COURSE_SANDBOX", "off")
    import io

    err = io.StringIO()
    report = autograde(course, jobs=1, progress=False, stream=err)
    assert not report.sandboxed
    assert "WARNING: GRADING RUNS UNSANDBOXED" in err.getvalue()
    assert "WARNING: GRADING RUNS UNSANDBOXED" in report.summary()
    seen = "\n".join(
        p.read_text() for p in (course / "autograded" / "zed" / assignment).glob("seen-*.txt")
    )
    assert "alice" in seen and "gradebook.db" in seen and "REFERENCE-IMPORTED" in seen


def _fake_bwrap(tmp_path: Path) -> tuple[Path, Path]:
    """A "bubblewrap" that notes each start in a log and fails."""
    log = tmp_path / "started.log"
    fake = tmp_path / "fake-bwrap"
    fake.write_text(f"#!/bin/sh\necho started >> {log}\necho 'no sandbox here' >&2\nexit 1\n")
    fake.chmod(0o755)
    return fake, log


def test_a_probe_started_ahead_gives_the_same_answer(tmp_path):
    """``probe_soon`` starts the probe; ``reason_unavailable`` collects the same answer a
    probe made then would give: a broken bubblewrap is named broken, once started."""
    fake, log = _fake_bwrap(tmp_path)
    code = (
        "from helpers.teacher import sandbox; sandbox.probe_soon(); import time; "
        "time.sleep(0.5); print(repr(sandbox.reason_unavailable()))"
    )
    env = dict(os.environ, PE_COURSE_BWRAP=str(fake), PE_COURSE_SANDBOX="auto")
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "does not work here: no sandbox here" in proc.stdout
    assert log.read_text().count("started") == 1  # collected, not started again


def test_a_worker_takes_the_grading_process_s_probe_instead_of_probing(tmp_path):
    """Given the grading process's answer (``remember``), a worker starts no probe of its
    own; without it, it probes (the same broken bubblewrap is then seen broken)."""
    fake, log = _fake_bwrap(tmp_path)
    env = dict(os.environ, PE_COURSE_BWRAP=str(fake), PE_COURSE_SANDBOX="auto")
    told = (
        "from helpers.teacher import sandbox; import os; "
        "sandbox.remember(os.environ['PE_COURSE_BWRAP'], 'told: broken'); "
        "print(repr(sandbox.reason_unavailable()))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", told], env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "told: broken" in proc.stdout and not log.exists()
    alone = "from helpers.teacher import sandbox; print(repr(sandbox.reason_unavailable()))"
    proc = subprocess.run(
        [sys.executable, "-c", alone], env=env, capture_output=True, text=True, check=False
    )
    assert "does not work here" in proc.stdout and log.read_text().count("started") == 1


def test_the_package_bytecode_is_written_ahead_for_the_sandbox():
    """The sandbox reads the package read-only: a module only the sandboxed worker imports
    (helpers.teacher.worker) had no bytecode where no process outside wrote it, and was
    compiled again for every notebook. compile_soon writes it, whatever
    PYTHONDONTWRITEBYTECODE says."""
    import importlib.util

    import helpers

    source = Path(helpers.__file__).parent / "teacher" / "worker.py"
    cached = Path(importlib.util.cache_from_source(str(source)))
    cached.unlink(missing_ok=True)
    proc = sandbox.compile_soon()
    assert proc is not None and proc.wait(timeout=120) == 0
    assert cached.is_file() and cached.stat().st_mtime >= source.stat().st_mtime

"""The command line, run as a learner or a teacher runs it: ``python -m helpers ...``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from helpers import cli

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent


def run_helpers(
    *args: str, env: dict | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "helpers", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def doctor() -> subprocess.CompletedProcess:
    return run_helpers("doctor")


@pytest.mark.parametrize(
    "package",
    [
        "numpy",
        "matplotlib",
        "ipywidgets",
        "jupyterlab",
        "nbgrader",
        "nbformat",
        "nbclient",
        "pytest",
        "hypothesis",
    ],
)
def test_doctor_reports_each_package_with_its_version(doctor, package):
    assert f"[OK] {package} {metadata.version(package)}\n" in doctor.stdout, doctor.stdout


def test_doctor_python_line(doctor):
    version = ".".join(map(str, sys.version_info[:3]))
    assert doctor.stdout.startswith(f"[OK] python {version} ")


def test_doctor_verdict_matches_its_lines(doctor):
    lines = doctor.stdout.strip().splitlines()
    failures = sum(line.startswith("[FAIL]") for line in lines)
    assert all(re.match(r"\[(OK|FAIL)\] ", line) for line in lines[:-1]), lines
    if failures:
        assert lines[-1] == f"{failures} problem(s)" and doctor.returncode == 1
    else:
        assert lines[-1] == "all good" and doctor.returncode == 0


def test_doctor_fails_when_a_tool_is_missing():
    """With only the venv on PATH, chromium and bwrap are not found: [FAIL] lines, exit 1."""
    env = dict(os.environ, PATH=str(VENV_BIN))
    proc = run_helpers("doctor", env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "[FAIL] chromium" in proc.stdout and "[FAIL] bwrap" in proc.stdout
    assert "[OK] numpy" in proc.stdout
    assert re.search(r"^\d+ problem\(s\)$", proc.stdout, flags=re.MULTILINE)


def test_generate_unknown_id_exits_2_with_a_message(tmp_path):
    proc = run_helpers("generate", "99_no_such_notebook")
    assert proc.returncode == 2
    assert "no source notebook for: 99_no_such_notebook" in proc.stderr
    assert not (ROOT / "notebooks" / "99_no_such_notebook").exists()


def test_generate_function_on_a_root_without_sources(tmp_path, capsys):
    assert cli.generate(["01_order"], root=tmp_path) == 2
    assert "no source notebook for: 01_order" in capsys.readouterr().err
    assert cli.generate([], root=tmp_path) == 2  # no source/ at all: a message, not a traceback
    assert "source" in capsys.readouterr().err
    assert not (tmp_path / "notebooks").exists()


def test_no_command_is_a_usage_error():
    proc = run_helpers()
    assert proc.returncode == 2
    assert "usage: python -m helpers" in proc.stderr


def test_unknown_command_is_a_usage_error():
    proc = run_helpers("frobnicate")
    assert proc.returncode == 2
    assert "invalid choice: 'frobnicate'" in proc.stderr


def test_help_lists_the_commands():
    proc = run_helpers("--help")
    assert proc.returncode == 0
    for command in ("doctor", "generate", "check", "system-deps"):
        assert command in proc.stdout


def test_doctor_checks_the_kernels_configuration(doctor):
    config = Path(sys.prefix) / "etc" / "ipython" / "ipython_kernel_config.py"
    assert f"[OK] kernels' configuration {config}\n" in doctor.stdout, doctor.stdout


@pytest.mark.parametrize("thread", [False, True])
def test_a_command_ends_with_its_code_its_output_and_its_exit_handlers(thread):
    """``exit_now`` (the end of ``python -m helpers``) skips Python's finalization but keeps
    the exit code, output still in the buffers and every exit handler; with another thread
    running it exits the usual way, and the thread is waited for."""
    code = (
        "import atexit, threading, time\n"
        "import nbgrader.api\n"
        "from helpers.cli import exit_now\n"
        "atexit.register(lambda: print('handler ran', end=''))\n"
        + ("threading.Thread(target=lambda: (time.sleep(0.3), print('thread done'))).start()\n"
           if thread else "")
        + "print('unflushed output', end=' ')\n"
        "exit_now(3)\n"
    )  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert proc.returncode == 3, proc.stderr
    assert "unflushed output" in proc.stdout and "handler ran" in proc.stdout
    assert ("thread done" in proc.stdout) == thread


def test_make_system_deps_says_what_it_found_and_did():
    """`make system-deps` once printed nothing: it names each package this machine has and
    what it installed or could not, in lines of its own, whatever the machine holds."""
    import shutil

    proc = subprocess.run(
        ["make", "-s", "system-deps"],
        cwd=cli.ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    out = proc.stdout + proc.stderr
    found = re.search(r"^system-deps: installed: (.*)$", out, re.MULTILINE)
    assert found, out
    listed = {p.strip() for p in found.group(1).split(",")}
    for package, tool in (("chromium", "chromium"), ("bubblewrap", "bwrap"), ("npm", "npm")):
        # what it says it found is what the machine has; what is missing is named as missing
        if shutil.which(tool):
            assert package in listed, out
        else:
            assert package not in listed and re.search(rf"missing: .*\b{package}\b", out), out
    assert "axe-core" in out, out

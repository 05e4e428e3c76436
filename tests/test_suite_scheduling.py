"""How `make test` shares the suite between its xdist workers (tests/conftest.py).

A module-scoped build (a graded class, a server, a set of accounts) is made once per worker
that runs a test of the module: the module must be one group of ``XDIST_GROUPS``, or both
workers build it. Read from the test files with ``ast``, so a new module-scoped fixture is
seen without a change here.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import XDIST_GROUPS, heavy_first, xdist_group

TESTS = Path(__file__).resolve().parent

# Modules whose module-scoped fixtures build nothing worth sharing, and why.
CHEAP = {
    "test_environment.py": "reads pyproject.toml and environment.yml",
    "test_widgets_bench.py": "imports bench.widget_update",
}


def module_scoped_fixtures(path: Path) -> list[str]:
    """The fixtures of a test file declared with ``scope="module"`` or ``"session"``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.FunctionDef):
            continue
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and any(
                k.arg == "scope" and getattr(k.value, "value", None) in ("module", "session")
                for k in deco.keywords
            ):
                found.append(node.name)
    return found


def test_the_fixture_reader_sees_a_module_scoped_fixture(tmp_path):
    path = tmp_path / "test_x.py"
    path.write_text(
        "import pytest\n\n@pytest.fixture(scope='module')\ndef built():\n    return 1\n\n"
        "@pytest.fixture\ndef each():\n    return 2\n"
    )
    assert module_scoped_fixtures(path) == ["built"]


def test_a_module_scoped_build_runs_in_one_worker():
    grouped = {module for module, _ in XDIST_GROUPS}
    loose = [
        f"{path.name}: {', '.join(names)}"
        for path in sorted(TESTS.glob("test_*.py"))
        if (names := module_scoped_fixtures(path)) and path.name not in grouped | set(CHEAP)
    ]
    assert not loose, (
        f"module-scoped builds outside XDIST_GROUPS (each worker builds them): {loose}"
    )


def test_a_test_is_in_its_module_group_or_its_function_group():
    assert xdist_group("tests/test_scale.py::test_x[a]") == "scale"
    regenerated = "tests/test_notebooks.py::test_notebooks_are_source_regenerated[01_order]"
    assert xdist_group(regenerated) == "regenerated"
    assert xdist_group("tests/test_notebooks.py::test_stored_without_outputs[x]") is None
    full = "tests/test_notebooks.py::test_source_notebook_executes[13_train_short]"
    assert xdist_group(full) == xdist_group("tests/test_notebook_claims_13.py::test_x[a]")
    assert xdist_group("tests/test_notebooks.py::test_source_notebook_executes[01_order]") is None


def _item(nodeid: str, slow: bool) -> SimpleNamespace:
    marker = pytest.mark.slow.mark if slow else None
    return SimpleNamespace(nodeid=nodeid, get_closest_marker=lambda name: marker)


def test_workers_take_the_groups_then_the_slow_tests_then_the_rest():
    items = [
        _item("tests/test_a.py::test_quick", slow=False),
        _item("tests/test_classroom.py::test_cycle", slow=True),
        _item("tests/test_scale.py::test_dask", slow=True),
        _item("tests/test_b.py::test_quick", slow=False),
        _item("tests/test_classroom.py::test_other", slow=True),
        _item("tests/test_cli.py::test_doctor", slow=False),
    ]
    assert [i.nodeid for i in heavy_first(items)] == [
        "tests/test_scale.py::test_dask",
        "tests/test_cli.py::test_doctor",
        "tests/test_classroom.py::test_cycle",
        "tests/test_classroom.py::test_other",
        "tests/test_a.py::test_quick",
        "tests/test_b.py::test_quick",
    ]


# --------------------------------------------------------------------------- the CPU table

SPIN = """
import subprocess, sys, time

def test_a_child_spins():
    subprocess.run([sys.executable, "-c",
        "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.8: pass"],
        check=True)
"""
SLEEP = """
import time

def test_it_waits():
    time.sleep(0.8)

def test_it_waits_again():
    time.sleep(0.2)
"""


def _cpu_table(tmp_path: Path, *args: str) -> dict[str, tuple[float, float, int]]:
    """Runs a suite of two modules with ``--durations`` the way ``make test`` does (this
    suite's conftest, so its table) and reads the table it printed."""
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "__init__.py").write_text("")
    shutil.copy2(TESTS / "suite_cpu.py", tests / "suite_cpu.py")
    (tests / "conftest.py").write_text(
        "from tests import suite_cpu\n\n\ndef pytest_configure(config):\n"
        "    suite_cpu.register(config)\n"
    )
    (tests / "test_spin.py").write_text(SPIN)
    (tests / "test_sleep.py").write_text(SLEEP)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=1", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    head = proc.stdout.index("CPU and wall seconds per test module")
    assert proc.stdout.index("slowest 1 durations") < head, "the table comes after pytest's"
    rows = re.findall(
        r"^\s*([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\S.*)$", proc.stdout[head:], re.MULTILINE
    )
    return {name: (float(c), float(w), int(n)) for c, w, n, name in rows}


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["one process", "two xdist workers"])
def test_the_cpu_table_counts_a_childs_cpu_and_not_a_wait(tmp_path, args):
    """A child process that spins 0.8 s of CPU is counted in its test's module; a test that
    sleeps costs wall time and next to no CPU; the two modules add up to the total."""
    rows = _cpu_table(tmp_path, *args)
    spin, sleep, total = rows["tests/test_spin.py"], rows["tests/test_sleep.py"], rows["in all"]
    assert spin[0] >= 0.75 and spin[2] == 1, rows
    assert sleep[0] < 0.3 and sleep[1] >= 0.95 and sleep[2] == 2, rows
    assert total[2] == 3 and total[0] == pytest.approx(spin[0] + sleep[0], abs=0.11), rows

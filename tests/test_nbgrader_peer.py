"""nbgrader's own exchange tests, run against the course's exchange plug-ins.

nbgrader ships its test suite in its package (``nbgrader/tests/apps``, the same files as its
sdist). Its seven exchange test files and the exchange tests of ``test_api.py`` run here in
a process of their own, with the course's three ``ExchangeFactory`` classes read from an
``nbgrader_config.py`` as any nbgrader command reads it (``JUPYTER_CONFIG_PATH``;
``tests.nbgrader_peer_plugin`` gives ``NbGraderAPI`` the same file). Every test passes but
those that check what the course refuses on purpose (``REFUSED``, each named with why in
docs/security.md): a refusal that starts passing, or any other test that fails, fails here.
"""

from __future__ import annotations

import getpass
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers.teacher.classroom.exchange import FACTORY

pytestmark = pytest.mark.slow

FILES = (
    "test_nbgrader_collect.py",
    "test_nbgrader_fetch_assignment.py",
    "test_nbgrader_fetchfeedback.py",
    "test_nbgrader_list.py",
    "test_nbgrader_releaseassignment.py",
    "test_nbgrader_releasefeedback.py",
    "test_nbgrader_submit.py",
)
API = (  # test_api.py's tests that go through the exchange
    "test_get_released_assignments",
    "test_get_released_assignments_windows",
    "test_get_assignment",
    "test_get_assignment_custom_timezone",
    "test_release_deprecated",
    "test_release_and_unrelease",
    "test_collect",
    "test_release_feedback",
)
# what the course refuses on purpose (docs/security.md, "nbgrader's own tests")
REFUSED = {
    "test_nbgrader_collect.py::TestNbGraderCollect::test_owner_check": (
        "a folder named for another account than its owner is refused, not collected with a warning"
    ),
    "test_nbgrader_collect.py::TestNbGraderCollect::test_permissions[False]": (
        "inbound/ has the sticky bit (3733, not 2733); submitted/ keeps no mode a learner set"
    ),
    "test_nbgrader_collect.py::TestNbGraderCollect::test_permissions[True]": (
        "groupshared: inbound/ 3773, not 2773; submitted/ is the group's (2770/0660), "
        "others get nothing (nbgrader: 2777/0664)"
    ),
}


def _config(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["c = get_config()  # noqa: F821"]
    lines += [f"c.ExchangeFactory.{k} = {v!r}" for k, v in FACTORY.items()]
    (folder / "nbgrader_config.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _results(xml: Path) -> dict[str, str]:
    """``file::Class::test -> passed | failed | skipped`` from pytest's JUnit XML."""
    out = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        file = case.get("classname", "").split(".")
        name = f"{file[-2]}.py::{file[-1]}::{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            out[name] = "failed"
        elif case.find("skipped") is not None:
            out[name] = "skipped"
        else:
            out[name] = "passed"
    return out


def run_peer(tmp: Path, files=FILES, api=API) -> dict[str, str]:
    """nbgrader's tests of ``files`` and ``test_api.py``'s ``api`` with the course's
    plug-ins; the result of each."""
    import nbgrader

    apps = Path(nbgrader.__file__).resolve().parent / "tests" / "apps"
    args = [str(apps / f) for f in files]
    args += [f"{apps / 'test_api.py'}::TestNbGraderAPI::{t}" for t in api]
    repo = Path(__file__).resolve().parent.parent
    env = dict(os.environ)
    env["JUPYTER_CONFIG_PATH"] = str(_config(tmp / "config"))
    env["PYTHONPATH"] = str(repo) + os.pathsep + env.get("PYTHONPATH", "")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop("PE_COURSE_EXCHANGE", None)
    env.setdefault("USER", getpass.getuser())  # nbgrader's tests read it
    xml = tmp / "peer.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
         "tests.nbgrader_peer_plugin", "-o", "addopts=", f"--junitxml={xml}",
         "--rootdir", str(apps), *args],
        cwd=tmp, env=env, capture_output=True, text=True, check=False, timeout=1800,
    )  # fmt: skip
    return _results(xml)


def test_nbgrader_own_exchange_tests_pass_with_the_course_plugins(tmp_path):
    found = run_peer(tmp_path)
    counts = {k: sum(1 for v in found.values() if v == k) for k in ("passed", "failed", "skipped")}
    failed = {t for t, v in found.items() if v == "failed"}
    print("nbgrader's exchange tests with the course's plug-ins:", counts, sorted(failed))
    apps = {t: v for t, v in found.items() if not t.startswith("test_api.py")}
    assert len(apps) == 67, sorted(apps)  # nbgrader 0.9.6's seven exchange files
    assert failed == set(REFUSED), sorted(failed ^ set(REFUSED))

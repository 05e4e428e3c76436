"""A wrong gradebook URL or a mistyped sqlite path: one line, exit 2, nothing created.

Every teacher command that takes ``--db`` (``release``, ``collect``, ``autograde``,
``feedback``, ``grades``, ``report``) is run as a teacher types it, once with a PostgreSQL
URL no server answers (the real driver's error: connection refused) and once with an sqlite
path with a typo in it. Each must print one line on stderr that names the URL and says what
to do, exit 2, and leave the course folder, the exchange and the mistyped path as they were
(a typo once created an empty gradebook, into which ``release`` then went).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import classroom_kit as kit

COMMANDS = ("release", "collect", "autograde", "feedback", "grades", "report")
WRONG_SERVER = "postgresql://nobody@127.0.0.1:1/x"


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for folder, _dirs, files in os.walk(root):
        for name in [*files, *_dirs]:
            path = Path(folder, name)
            st = path.lstat()
            out[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("db")
    course = kit.fixture_course(tmp)
    folder = kit.submit_dir(course, "ann", "ex1")
    (folder / "ex1.ipynb").write_bytes((course / "notebooks" / "ex1" / "ex1.ipynb").read_bytes())
    (tmp / "exchange").mkdir()
    return course


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("which", ("postgresql", "sqlite typo"))
def test_a_wrong_gradebook_is_one_line_exit_2_and_nothing_created(course, command, which):
    exchange = course.parent / "exchange"
    typo = course.parent / "gradbook" / "gradebook.db"  # a folder name mistyped
    url = WRONG_SERVER if which == "postgresql" else f"sqlite:///{typo}"
    if which == "postgresql":
        pytest.importorskip("psycopg")
    args = [command, "ex1", "--course", str(course), "--db", url]
    if command in ("release", "collect", "feedback"):
        args += ["--exchange", str(exchange)]
    before, before_x = _tree(course), _tree(exchange)
    env = {k: v for k, v in kit.env().items() if k != "PE_COURSE_EXCHANGE"}
    proc = subprocess.run(
        [sys.executable, "-m", "helpers", *args],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(lines) == 1, proc.stderr
    [line] = lines
    assert line.startswith(f"{command}: db {url}"), line
    if which == "postgresql":
        assert "Connection refused" in line and "that the server runs" in line, line
    else:
        assert f"there is no gradebook at {typo}" in line and "check the path" in line, line
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not typo.exists() and not typo.parent.exists()
    assert _tree(course) == before and _tree(exchange) == before_x

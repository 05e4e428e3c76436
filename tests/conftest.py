"""Fixtures shared by the whole suite.

The suite is the package ``tests``: test modules import its kit as ``from tests import
classroom_kit``, ``from tests import rehearsal`` (a class rehearsed from the course's own
solutions), ``from tests.cells import cell`` (the one builder of nbgrader cells) and
``from tests.fixtures import grading_course`` (the grader's own small course).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- parallel runs

# `make test` runs the suite on every core (pytest-xdist, ``-n auto``). The tests of one
# group run in one worker, one after the other: those that share a module-scoped build
# (built once, as in a serial run) and those that must not run at once. Every other test
# goes to whichever worker is free. (test module, test function or None for all) -> group.
XDIST_GROUPS = {
    ("test_learner_build.py", None): "learner-build",  # the learner wheel and its venv
    ("test_grader_nbgrader.py", None): "grader-course",  # the class nbgrader grades once
    ("test_scale.py", None): "scale",  # the class graded twice, PostgreSQL, Dask
    ("test_browser.py", None): "browser",  # one JupyterLab server, one Chromium
    ("test_browser_boxes.py", None): "browser-boxes",  # its JupyterLab server
    ("test_browser_unmodified.py", None): "browser-unmodified",  # its JupyterLab, autosaving
    ("test_class_outputs.py", None): "class-outputs",  # make demo's class, built once
    ("test_notebook_claims.py", None): "claims",  # each notebook executed once, for both
    ("test_notebook_statements.py", None): "claims",  # (test_notebook_claims.cells)
    ("test_notebook_claims_0910.py", None): "claims-0910",  # 09 and 10 executed once
    ("test_notebook_claims_11.py", None): "claims-11",  # 11 executed once
    ("test_notebook_claims_12.py", None): "claims-12",  # 12 executed once
    ("test_notebook_claims_13.py", None): "claims-13",  # 13 executed once
    # the same full Run All of 13 (claims_kit.FULL_RUNS): in another worker it would wait
    # minutes on the lock of that one execution, doing nothing
    ("test_notebooks.py", "test_source_notebook_executes[13_train_short]"): "claims-13",
    ("test_hub.py", None): "hub",  # one hub: its accounts, ports and environments
    ("test_learner_account.py", None): "learner-account",  # the account, its wheelhouse
    ("test_formgrader.py", None): "formgrader",  # one course, one JupyterLab
    ("test_notebooks.py", "test_notebooks_are_source_regenerated"): "regenerated",
    ("test_notebooks.py", "test_tiny_course_passes_every_check"): "tiny-course",  # built once
    ("test_notebooks.py", "test_tiny_course_checks_catch_broken_notebooks"): "tiny-course",
    ("test_make_lab.py", None): "make-lab",  # `make lab` in the repository
    ("test_classroom_checks.py", None): "classroom-checks",  # one class of 01_order, graded
    ("test_every_command.py", None): "every-command",  # one graded class, copied per command
    ("test_exchange_attacks.py", None): "exchange-attacks",  # its accounts and environment
    ("test_pages_security.py", None): "pages-security",  # one graded course, one Formgrader
    ("test_cli.py", None): "cli",  # one `python -m helpers doctor`
    ("test_train_longer.py", None): "train-longer",  # one tiny RoPE model, trained once
    ("test_train_far.py", None): "train-far",  # one small needle model, trained once
    ("test_accessibility.py", None): "accessibility",  # one JupyterLab, each page opened once
    ("test_classroom_db.py", None): "classroom-db",  # one course, its gradebook
    ("test_notebook_claims_13_seeds.py", None): "claims-13-seeds",  # seeds 1 and 2, trained once
}


def xdist_group(nodeid: str) -> str | None:
    """The group of a test (``tests/test_scale.py::test_x[param]``), None when it has none."""
    module = nodeid.split("::")[0].rpartition("/")[2]
    test = nodeid.split("::")[-1]  # with its parameters: one case may have a group of its own
    function = test.split("[")[0]
    return (
        XDIST_GROUPS.get((module, test))
        or XDIST_GROUPS.get((module, function))
        or XDIST_GROUPS.get((module, None))
    )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's load scheduling, a group of ``XDIST_GROUPS`` sent to one worker as one unit,
    the units handed out in the order the workers collected them (``heavy_first``).

    (xdist's own ``--dist loadgroup`` marks a group in each test's node id, which pytest 9.2
    no longer lets a plugin change: its groups are silently ignored there.)"""
    if config.getvalue("dist") != "load":
        return None  # another --dist asked for: xdist's own
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            group = xdist_group(nodeid)
            return f"group {group}" if group else nodeid

    config.option.loadscopereorder = False  # by test count: a 3-test group may take minutes
    return GroupScheduling(config, log)


def heavy_first(items: list) -> list:
    """The tests in the order a worker of ``make test`` starts them: the groups first (each
    is a long build and the tests that read it), then the other tests marked ``slow``, then
    the rest, each in collection order. The two workers then end on quick tests and finish
    together instead of one waiting for the other's last group."""

    def rank(item) -> int:
        if xdist_group(item.nodeid):
            return 0
        return 1 if item.get_closest_marker("slow") else 2

    return sorted(items, key=rank)  # stable: the collection order within a rank


def pytest_collection_modifyitems(config, items):
    if hasattr(config, "workerinput"):  # an xdist worker; a run in one process keeps its order
        items[:] = heavy_first(items)


def pytest_configure(config):
    """Notebook 13 trains seven models in Run All: every execution of it in the suite (its
    kernels, nbgrader's, the browser's server, the learner build's) trains the quick version
    (``helpers.train.QUICK_ENV``), but the one full run of ``claims_kit.executed_notebook``
    that its execution test and its claims test share. Set the variable to 0 to train the
    full experiment everywhere."""
    from helpers.train import QUICK_ENV

    os.environ.setdefault(QUICK_ENV, "1")
    from tests import suite_cpu

    suite_cpu.register(config)  # with --durations: CPU and wall seconds per module, at the end


@pytest.fixture(autouse=True)
def learner_session(monkeypatch):
    """Every test starts as a learner's session would: outside nbgrader.

    nbgrader sets ``NBGRADER_EXECUTION`` while it validates or autogrades, and then the
    explorers draw nothing and ``grade`` defers to the isolated grader; a test that wants
    that sets it itself.
    """
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository: the course root."""
    return REPO


# --------------------------------------------------------------------------- PostgreSQL

PG_HINT = (
    "PostgreSQL is not installed: `make system-deps` (as root on Debian) installs the "
    "postgresql package"
)


def postgres_bin() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: Debian's newest, else the ones on PATH."""
    import glob
    import shutil

    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    found = shutil.which("initdb")
    return Path(found).resolve().parent if found else None


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Postgres:
    """A PostgreSQL server of this test session, on 127.0.0.1, in a temporary folder."""

    def __init__(self, bindir: Path):
        import os
        import pwd
        import tempfile

        self.bindir = bindir
        self.data = Path(tempfile.mkdtemp(prefix="pe-pg-"))
        self.port = _free_port()
        self.user = None
        if os.geteuid() == 0:  # initdb refuses root: run the server as Debian's postgres user
            try:
                entry = pwd.getpwnam("postgres")
            except KeyError:
                pytest.skip("running as root and there is no 'postgres' user to run the server")
            os.chown(self.data, entry.pw_uid, entry.pw_gid)
            self.user = "postgres"
        self.run(
            [
                "initdb",
                "-D",
                str(self.data / "db"),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ]
        )
        opts = f"-h 127.0.0.1 -p {self.port} -k {self.data} -c fsync=off -c max_connections=200"
        self.run(
            [
                "pg_ctl",
                "-D",
                str(self.data / "db"),
                "-l",
                str(self.data / "log"),
                "-w",
                "-o",
                opts,
                "start",
            ]
        )

    def run(self, cmd: list[str]) -> None:
        import subprocess

        proc = subprocess.run(
            [str(self.bindir / cmd[0]), *cmd[1:]],
            user=self.user,
            cwd=self.data,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")

    def url(self, name: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def new_database(self, name: str) -> str:
        """An empty database ``name`` (dropped first if it exists); its SQLAlchemy URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        import shutil

        try:
            self.run(["pg_ctl", "-D", str(self.data / "db"), "-m", "immediate", "-w", "stop"])
        finally:
            shutil.rmtree(self.data, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server from Debian's packages (initdb, pg_ctl, a free port on 127.0.0.1),
    started for the session and stopped afterwards; skipped where it is not installed."""
    bindir = postgres_bin()
    if bindir is None:
        pytest.skip(PG_HINT)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed: `make setup` installs the cluster extra")
    server = Postgres(bindir)
    try:
        yield server
    finally:
        server.stop()

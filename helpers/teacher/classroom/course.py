"""Where the course is, and its configuration: the folders, the gradebook's URL, nbgrader.

A course is the repository, or any folder with the same ``nbgrader_config.py``, ``source/``
and ``notebooks/``; the steps that move files between teacher and learners also need an
exchange folder (``--exchange`` or ``PE_COURSE_EXCHANGE``). ``nbgrader`` runs one
``nbgrader`` command of this environment; ``copy_course`` makes a fresh course folder.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

DB_TIMEOUT_S = 120  # sqlite's busy timeout: several workers write to one gradebook


def course_root(course: str | os.PathLike | None = None) -> Path:
    """The course directory: the argument, else the current folder or the nearest folder
    above it that holds the config, else ``PE_COURSE_ROOT`` (a hub's teacher: their
    ``~/positional-encodings``), else the repository this package is in."""
    if course is None:
        here = Path.cwd()
        found = [p for p in (here, *here.parents) if (p / "nbgrader_config.py").is_file()]
        course = (
            found[0]
            if found
            else os.environ.get("PE_COURSE_ROOT") or Path(__file__).resolve().parents[3]
        )
    root = Path(course).resolve()
    if not (root / "nbgrader_config.py").is_file():
        raise ValueError(f"course must be a folder with an nbgrader_config.py, got {str(course)!r}")
    return root


def exchange_root(exchange: str | os.PathLike | None = None) -> Path:
    """The exchange folder: the argument, else ``PE_COURSE_EXCHANGE``."""
    value = exchange if exchange is not None else os.environ.get("PE_COURSE_EXCHANGE")
    if not value:
        raise ValueError(
            "exchange must be given (--exchange DIR or PE_COURSE_EXCHANGE), got nothing"
        )
    return Path(value).resolve()


def db_url(course: Path, db: str | None = None) -> str:
    """The gradebook's SQLAlchemy URL: ``db`` when given (``postgresql://user@host/name``),
    else ``gradebook.db`` in the course with a long sqlite busy timeout (several writers)."""
    if db:
        if "://" not in db:
            raise ValueError(f"db must be an SQLAlchemy URL such as postgresql://..., got {db!r}")
        return db
    return f"sqlite:///{course / 'gradebook.db'}?timeout={DB_TIMEOUT_S}"


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def course_id(course: Path) -> str:
    """The ``CourseDirectory.course_id`` of the course's ``nbgrader_config.py`` (read again
    when the file changes)."""
    config = Path(course) / "nbgrader_config.py"
    try:
        stamp = config.stat().st_mtime_ns
    except OSError:
        stamp = None
    return _course_id(str(course), stamp)


@functools.lru_cache(maxsize=64)
def _course_id(course: str, _stamp: int | None) -> str:
    return str(load_config(Path(course)).CourseDirectory.course_id)


def assignment_ids(course: Path, ids: Iterable[str] | None = None) -> list[str]:
    """The assignments of ``source/`` (all of them when ``ids`` is empty)."""
    found = sorted(p.name for p in (course / "source").iterdir() if p.is_dir())
    ids = list(ids or [])
    unknown = [i for i in ids if i not in found]
    if unknown:
        raise ValueError(
            f"unknown assignment {', '.join(unknown)}: the assignments of this course are "
            f"{', '.join(found)}"
        )
    return ids or found


def load_config(course: Path):
    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    cfg.CourseDirectory.root = str(course)
    return cfg


def venv_on_path() -> None:
    """nbgrader runs ``alembic`` from PATH when it creates a gradebook: this venv's first."""
    bin_dir = str(Path(sys.executable).parent)
    if os.environ.get("PATH", "").split(os.pathsep)[0] != bin_dir:
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")


def env(exchange: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    if exchange is not None:
        env["PE_COURSE_EXCHANGE"] = str(exchange)
    return env


def nbgrader(
    args: Sequence[str], cwd: Path, exchange: Path | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    """Run ``nbgrader <args>`` of this environment in ``cwd``; raise with its log on failure."""
    cmd = [str(Path(sys.executable).parent / "nbgrader"), *args]
    if exchange is not None:
        cmd.append(f"--Exchange.root={exchange}")
    proc = subprocess.run(
        cmd, check=False, cwd=cwd, env=env(exchange), capture_output=True, text=True
    )
    if check and proc.returncode != 0:
        raise RuntimeError(
            f"`nbgrader {' '.join(args)}` failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}"
        )
    return proc


def source_notebooks(course: Path, assignment: str) -> list[str]:
    return [p.stem for p in sorted((course / "source" / assignment).glob("*.ipynb"))]


def copy_course(src: Path, dest: Path, ids: Iterable[str] | None = None) -> Path:
    """A fresh course folder with the config, ``source/`` and ``notebooks/`` of ``src``."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src / "nbgrader_config.py", dest / "nbgrader_config.py")
    for top in ("source", "notebooks"):
        for assignment in assignment_ids(src, ids):
            if (src / top / assignment).is_dir():
                shutil.copytree(
                    src / top / assignment,
                    dest / top / assignment,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
                )
    return dest


BACKUPS = "backups"  # in the course folder: what a regrade or a new feedback replaced
KEEP_BACKUPS = 10  # of each step: the older ones are removed when a new one is made


def backup_folder(course: Path, what: str, keep: int = KEEP_BACKUPS) -> Path:
    """A new dated folder ``backups/<UTC time> <what>/`` of the course; of the folders of the
    same step, only the ``keep`` newest stay (this one included): about 400 KB per
    autograde of four learners would otherwise grow without end."""
    import re
    import time

    stamp = time.strftime("%Y-%m-%dT%H%M%SZ", time.gmtime())
    # numbered past the highest of this second, not into a gap that pruning left: a gap
    # would sort as the oldest and be pruned at once
    base = f"{stamp} {what}"
    same = re.compile(rf"^{re.escape(base)}(?: (\d+))?$")
    taken = [
        int(m[1] or 1) for p in (course / BACKUPS).glob(f"{base}*") if (m := same.match(p.name))
    ]
    n = max(taken, default=0) + 1
    folder = course / BACKUPS / (base if n == 1 else f"{base} {n}")
    folder.mkdir(parents=True)
    prune_backups(course, what, keep)
    return folder


def prune_backups(course: Path, what: str, keep: int = KEEP_BACKUPS) -> list[Path]:
    """Remove all but the ``keep`` newest ``backups/<time> <what>[ n]/`` folders (by their
    names' time, then number); returns what was removed."""
    import re

    pattern = re.compile(rf"^(\d{{4}}-\d\d-\d\dT\d{{6}}Z) {re.escape(what)}(?: (\d+))?$")
    found = []
    for path in (course / BACKUPS).iterdir() if (course / BACKUPS).is_dir() else []:
        m = pattern.match(path.name)
        if m and path.is_dir() and not path.is_symlink():
            found.append(((m[1], int(m[2] or 1)), path))
    found.sort()
    old = [path for _key, path in found[: max(len(found) - keep, 0)]]
    for path in old:
        shutil.rmtree(path)
    return old


def backup_gradebook(course: Path, db: str | None, folder: Path) -> Path | None:
    """A consistent copy of the sqlite gradebook in ``folder`` (sqlite's online backup, the
    write-ahead log included); None for another database (its own backups apply)."""
    import sqlite3

    src = course / "gradebook.db"
    if db or not src.exists():
        return None
    dest = folder / "gradebook.db"
    with sqlite3.connect(src, timeout=120) as conn, sqlite3.connect(dest) as out:
        conn.backup(out)
    conn.close()
    out.close()
    return dest


def check_gradebook(course: Path, db: str | None = None, create: bool = False) -> None:
    """The gradebook the command is to use can be opened, before anything is done: a wrong
    URL (no such server, user or database), or an sqlite path that holds no gradebook (a typo
    would create an empty one), is a ``ValueError`` of one line that names it and says what
    to do; nothing is created. ``create``: the course's own ``gradebook.db`` may be made
    (``release`` makes it); an explicit ``db`` never is, it must exist (an empty sqlite file
    or an empty PostgreSQL database is a new gradebook: release, or autograde --unreleased,
    fills it)."""
    if not db:
        return
    from sqlalchemy import create_engine, inspect
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, SQLAlchemyError

    try:
        url = make_url(db)
    except ArgumentError as exc:
        raise ValueError(
            f"db {db!r} is not an SQLAlchemy URL ({exc}): write it as "
            "postgresql://user@host:port/database or sqlite:////absolute/path/gradebook.db"
        ) from None
    shown = url.render_as_string(hide_password=True)
    if url.get_backend_name() == "sqlite":
        where = url.database or ""
        if where in ("", ":memory:") or where.startswith("file:"):
            raise ValueError(
                f"db {shown}: an sqlite gradebook must be a file: "
                "sqlite:////absolute/path/gradebook.db"
            )
        path = Path(where)
        if not path.is_file():
            raise ValueError(
                f"db {shown}: there is no gradebook at {path.resolve()} (a typo?): check "
                f"the path; to start a new gradebook there on purpose, `touch {path.resolve()}` "
                "first; nothing done"
            )
    engine = None
    try:
        kwargs = (
            {"connect_args": {"connect_timeout": 10}}
            if url.get_backend_name()
            in (
                "postgresql",
                "mysql",
            )
            else {}
        )
        engine = create_engine(url, **kwargs)
        with engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
    except ModuleNotFoundError as exc:
        raise ValueError(
            f"db {shown}: its driver is not installed ({exc.name}): install it in this "
            "environment, or use another URL"
        ) from None
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        raise ValueError(
            f"db {shown}: cannot open the gradebook ({reason[0] if reason else type(exc).__name__}): "
            "check the URL (user, host, port, database), that the server runs and the database "
            "exists; nothing done"
        ) from None
    finally:
        if engine is not None:
            engine.dispose()
    if tables and "alembic_version" not in tables:
        raise ValueError(
            f"db {shown}: the database holds tables but no nbgrader gradebook "
            f"({', '.join(sorted(tables)[:5])}): a wrong database? nothing done"
        )
    if not tables and not create:
        raise ValueError(
            f"db {shown}: the gradebook is empty: release first (it registers the "
            "assignments there), or check the URL; nothing done"
        )

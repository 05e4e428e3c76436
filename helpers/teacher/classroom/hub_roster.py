"""The class of a hub: the roster's members and the hub's folders (``hub``)."""

from __future__ import annotations

import csv
import os
import pwd
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from helpers.teacher.classroom.course import course_id, course_root
from helpers.teacher.classroom.lms import ROSTER_COLUMNS

# The roster of the grades' export (``lms``): student_id, name, email, lms_id, section; the
# learner's id (``student_id``, or ``id``) is their Linux account and nbgrader student id.
ROSTER_FIELDS = ROSTER_COLUMNS
ID_COLUMNS = ("student_id", "id")
ROLES = ("learner", "teacher")
# A Linux account name that useradd takes everywhere (Debian's NAME_REGEX, no dots).
ACCOUNT = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")


# --------------------------------------------------------------------------- roster


@dataclass(frozen=True)
class Member:
    """One row of the roster."""

    id: str
    name: str
    email: str
    lms_id: str
    section: str
    role: str = "learner"


def read_roster(path: str | os.PathLike) -> list[Member]:
    """The members of a roster CSV (header ``student_id,name,email,lms_id,section[,role]``,
    the roster of ``grades --format``; ``id`` may stand for ``student_id``)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(
            f"roster {path} does not exist: give the class's roster CSV "
            f"(make hub ROSTER=roster.csv; header {','.join(ROSTER_FIELDS)},role)"
        )
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        header = [h.strip() for h in (reader.fieldnames or [])]
        key = next((c for c in ID_COLUMNS if c in header), ID_COLUMNS[0])
        missing = [f for f in ROSTER_FIELDS if f not in header and f != ID_COLUMNS[0]]
        missing = ([] if key in header else [key]) + missing
        if missing:
            raise ValueError(
                f"roster {path} lacks the column(s) {', '.join(missing)}: its header must be "
                f"{','.join(ROSTER_FIELDS)} and optionally role, got {','.join(header)}"
            )
        members, seen = [], set()
        for lineno, row in enumerate(reader, start=2):
            row = {k.strip(): (v or "").strip() for k, v in row.items() if k}
            row["id"] = row[key]
            role = row.get("role") or "learner"
            if not ACCOUNT.match(row["id"]):
                raise ValueError(
                    f"roster {path} line {lineno}: id {row['id']!r} cannot be a Linux account "
                    "name: lower-case letters, digits, _ and -, starting with a letter or _, "
                    "at most 32 characters"
                )
            if role not in ROLES:
                raise ValueError(
                    f"roster {path} line {lineno}: role must be one of {', '.join(ROLES)}, "
                    f"got {role!r}"
                )
            if row["id"] in seen:
                raise ValueError(f"roster {path} line {lineno}: id {row['id']!r} appears twice")
            seen.add(row["id"])
            members.append(
                Member(row["id"], row["name"], row["email"], row["lms_id"], row["section"], role)
            )
    if not any(m.role == "teacher" for m in members):
        raise ValueError(f"roster {path} names no teacher: give one row the role teacher")
    if not any(m.role == "learner" for m in members):
        raise ValueError(f"roster {path} names no learner")
    return members


def teachers(members: Iterable[Member]) -> list[str]:
    return [m.id for m in members if m.role == "teacher"]


def learners(members: Iterable[Member]) -> list[str]:
    return [m.id for m in members if m.role == "learner"]


# --------------------------------------------------------------------------- places


@dataclass(frozen=True)
class Hub:
    """Where a course's hub keeps everything (``state``) and the course it serves."""

    state: Path
    course: Path  # the course the teacher's copy is made from (the repository)
    course_id: str

    @property
    def hub_dir(self) -> Path:  # root only: database, cookie secret, config, log, pids
        return self.state / "hub"

    @property
    def exchange(self) -> Path:
        return self.state / "exchange"

    @property
    def learner_env(self) -> Path:
        return self.state / "learner-env"

    @property
    def teacher_env(self) -> Path:
        return self.state / "teacher-env"

    @property
    def passwords(self) -> Path:
        return self.state / "passwords.csv"

    @property
    def config(self) -> Path:
        return self.hub_dir / "jupyterhub_config.py"

    @property
    def pid_file(self) -> Path:
        return self.hub_dir / "jupyterhub.pid"

    @property
    def log(self) -> Path:
        return self.hub_dir / "jupyterhub.log"

    @property
    def address(self) -> Path:
        return self.hub_dir / "address"

    def course_dir(self, teacher: str) -> Path:
        """The teacher's course folder: ``~teacher/<course id>``."""
        return Path(pwd.getpwnam(teacher).pw_dir) / self.course_id

    def url(self) -> str:
        """The hub's address for browsers, once started (``http://localhost:<port>``; each user's
        server at ``<user>.localhost``)."""
        return self.address.read_text(encoding="utf-8").strip()


def default_state(course_id: str) -> Path:
    return Path("/srv") / course_id


def hub_for(state: str | os.PathLike | None = None, course: str | os.PathLike | None = None) -> Hub:
    root = course_root(course)
    cid = course_id(root)
    return Hub(Path(state).resolve() if state else default_state(cid), root, cid)


def require_root(what: str) -> None:
    if os.geteuid() != 0:
        raise RuntimeError(
            f"{what} needs root (it creates Linux accounts and runs JupyterHub's PAM "
            "authenticator and spawner): run it with sudo"
        )

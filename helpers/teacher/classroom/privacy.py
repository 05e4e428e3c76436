"""A class private off the hub too: what holds learner data is the teacher's alone.

A course folder is often a clone (git's umask 022: every folder 0755, every file 0644), and
nbgrader creates the gradebook, ``submitted/``, ``autograded/`` and ``feedback/`` with the
same umask: any account of the machine, a learner's included, could read every learner's
work, scores and comments. Each teacher command (``release``, ``collect``, ``autograde``,
``feedback``, ``grades``, ``report``) therefore, before and after its step:

- ``secure``: makes what holds learner data (``LEARNER_DATA``) the owner's only: folders
  0700, files 0600; with nbgrader's ``CourseDirectory.groupshared`` (co-graders in one Unix
  group) group-only instead, 0770 and 0660;
- ``exposed``: says, loudly and with the command that fixes it, what of the teacher's side
  (``TEACHER_ONLY``: the solutions, the reference and the checks) other accounts can read.
  That is the teacher's checkout, so it is not changed behind their back.

Only modes that let in more than allowed are changed (a teacher's stricter mode stays).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# in the course folder: what holds learner data (globs)
LEARNER_DATA = (
    "gradebook.db",
    "gradebook.db-wal",
    "gradebook.db-shm",
    "gradebook.db-journal",
    "grades*.csv",
    "autograde_report.csv",
    "collect_refused.csv",
    "roster*.csv",
    "extensions.csv",
    "submitted",
    "autograded",
    "feedback",
    "reports",
    "backups",
)
# what only the teacher may read; the teacher's checkout, so only named
TEACHER_ONLY = {
    "source": "the solutions",
    "helpers/teacher": "the reference and the checks",
}


def groupshared(course: Path) -> bool:
    """nbgrader's ``CourseDirectory.groupshared`` of the course's configuration."""
    from helpers.teacher.classroom.course import load_config

    try:
        return bool(load_config(course).CourseDirectory.get("groupshared", False))
    except Exception:  # noqa: BLE001  (a broken config: the step itself reports it)
        return False


def modes(shared: bool) -> tuple[int, int]:
    """(folder mode, file mode) of learner data."""
    return (0o770, 0o660) if shared else (0o700, 0o600)


def secure(course: Path, shared: bool | None = None) -> list[Path]:
    """Close what holds learner data in ``course`` to other accounts (to the group too unless
    ``shared``, default: the config's ``groupshared``); returns what was changed."""
    course = Path(course)
    shared = groupshared(course) if shared is None else shared
    folder_mode, file_mode = modes(shared)
    changed = []
    for pattern in LEARNER_DATA:
        for path in sorted(course.glob(pattern)):
            try:
                st = path.lstat()
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                continue
            allowed = folder_mode if stat.S_ISDIR(st.st_mode) else file_mode
            mode = stat.S_IMODE(st.st_mode)
            if mode & ~allowed & 0o777:
                os.chmod(path, mode & allowed | (mode & 0o7000 if shared else 0))
                changed.append(path)
    return changed


def open_to_others(path: Path) -> bool:
    """An account that is neither the owner nor in the group may read ``path``: every folder
    above lets others through and ``path`` lets them read (r, and x for a folder)."""
    path = Path(path).resolve()
    if not path.exists():
        return False
    through = all(os.stat(p).st_mode & 0o001 for p in path.parents)
    need = 0o005 if path.is_dir() else 0o004
    return through and os.stat(path).st_mode & need == need


def exposed(course: Path) -> list[str]:
    """What of ``TEACHER_ONLY`` or of the learner data other accounts can read, one line each."""
    course = Path(course)
    found = [
        f"{course / rel} ({what})"
        for rel, what in TEACHER_ONLY.items()
        if open_to_others(course / rel)
    ]
    found += [
        f"{path} (learner data)"
        for pattern in LEARNER_DATA
        for path in sorted(course.glob(pattern))
        if open_to_others(path)
    ]
    return found


def warning(course: Path) -> str | None:
    """The loud warning while other accounts can read the teacher's side, with the command
    that closes it; None when nothing is open."""
    found = exposed(course)
    if not found:
        return None
    return (
        "WARNING: other accounts of this machine (a learner's too) can read "
        + "; ".join(found)
        + f". Close the course folder: `chmod go-rwx {course}` (learners fetch and submit "
        "through the exchange and read nothing there)."
    )

"""The seed of a learner's random cases: the same on every regrade, unknown to other learners.

While autograding, the random cases of a (learner, assignment) come from

    seed = HMAC-SHA256(secret, course_id + US + learner + US + assignment), first 8 bytes, >> 1

(US is the unit separator ``\\x1f``; the seed is a 63-bit integer, which ``python -m helpers
check NB --seed N`` takes). ``secret`` is 32 random bytes kept in the course folder in
``.grading_secret`` (hex, mode 0600), created on first use. It is teacher-only: it is not
under ``notebooks/`` (nothing of it is released), ``.gitignore`` lists it, and the grading
sandbox does not show the course folder. Without it a learner who knows every id still
cannot compute another learner's cases; with it the teacher replays any of them.

Self-study (``grade``, ``self_check`` in the learner's kernel) keeps a fresh seed per run.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import tempfile
from pathlib import Path

__all__ = ["SECRET_FILE", "derive", "secret", "seed_for"]

SECRET_FILE = ".grading_secret"


def secret(course: str | os.PathLike) -> bytes:
    """The course's grading secret, created (atomically, mode 0600) when it does not exist."""
    path = Path(course) / SECRET_FILE
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=".grading_secret-", dir=str(path.parent))
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_hex(32) + "\n")
        try:
            os.link(tmp, path)  # fails if another process made it first: theirs wins
        except FileExistsError:
            pass
    finally:
        os.unlink(tmp)
    return _read(path)


def _read(path: Path) -> bytes:
    text = path.read_text(encoding="ascii").strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) < 16:
        raise ValueError(f"{path} must hold at least 16 random bytes in hex, got {len(key)} bytes")
    return key


def derive(key: bytes, course_id: str, student: str, assignment: str) -> int:
    """The seed of ``student``'s random cases in ``assignment`` (an integer in [0, 2**63))."""
    for name, value in (("course_id", course_id), ("student", student), ("assignment", assignment)):
        if not isinstance(value, str) or "\x1f" in value:
            raise ValueError(f"{name} must be a string without \\x1f, got {value!r}")
    message = f"{course_id}\x1f{student}\x1f{assignment}".encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def seed_for(course: str | os.PathLike, course_id: str, student: str, assignment: str) -> int:
    """``derive`` with the secret of the course folder ``course`` (created if needed)."""
    return derive(secret(course), course_id, student, assignment)

"""The course's exchange: nbgrader's exchange plug-ins, made to trust only what the kernel says.

nbgrader's own collect follows symbolic links, takes a folder named for one learner and owned
by another (it only warns "cheating attempt?"), and dates a submission by ``timestamp.txt``
and the folder's name, both written by the learner. These plug-ins replace it for the
command line (``python -m helpers collect``, ``nbgrader collect``) and the Formgrader's
Collect button alike (``c.ExchangeFactory`` in the course's ``nbgrader_config.py``):

``SafeCollect``         takes an inbound entry ``<id>+<assignment>+<time>+<random>`` only
                        when ``<id>`` is the Unix account that owns it and everything in it,
                        every item is a folder or a regular file with one link (never a
                        symbolic link, hard link, device, FIFO or socket, files opened with
                        ``O_NOFOLLOW``), and its ``submission_secret.txt`` is one nbgrader
                        wrote and no other account's entry holds. The submission's time is
                        the latest status-change time (ctime) of the entry and its files,
                        which the kernel sets and a learner can only move forward; it is
                        written into ``submitted/<id>/<assignment>/timestamp.txt`` in place
                        of the learner's. Every refused entry is named with its reason in
                        the log, in ``collect_refused.csv`` of the course, and the run fails
                        after collecting the rest (the Formgrader shows the error, not
                        "Success").
``SafeReleaseFeedback`` releases every page it can: a folder without a valid
                        ``submission_secret.txt`` is skipped and named, never fatal.
``SafeReleaseAssignment`` creates the exchange with the sticky bit (``1777``: no account
                        can remove another's entries) instead of nbgrader's ``0777``, and
                        gives ``inbound`` the sticky bit (``3733``).

``inbound_entries`` / ``remove_entry`` / ``purge`` are ``python -m helpers inbound list |
remove ENTRY | purge``: the teacher sees each entry with its owner and verdict, and removes
one. The teacher owns ``inbound``, so an entry the teacher cannot empty (a folder a learner
made by hand, mode 0755) is renamed to ``.removed-...`` where no collect looks; root
(``purge``) deletes those for good.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import glob
import os
import pwd
import re
import shlex
import shutil
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.exchange import ExchangeError
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import parse_utc

from helpers.teacher.files import write_csv
from helpers.teacher.untrusted import shown  # a learner's name on one line, printable ASCII

HERE = "helpers.teacher.classroom.exchange"
# What the course's nbgrader_config.py sets (and the hub's teachers' configuration with it).
FACTORY = {
    "collect": f"{HERE}.SafeCollect",
    "release_feedback": f"{HERE}.SafeReleaseFeedback",
    "release_assignment": f"{HERE}.SafeReleaseAssignment",
}
SECRET = re.compile(r"^[0-9a-f]{128}$")  # what nbgrader submit writes: secrets.token_hex(64)
SECRET_FILE = "submission_secret.txt"
TIMESTAMP_FILE = "timestamp.txt"
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f %Z"  # nbgrader's
REFUSED_LOG = "collect_refused.csv"
REMOVED_PREFIX = ".removed-"
SUMMARY = "collect {assignment}: collected {collected}, refused {refused}"
MAX_ITEMS = 10_000  # an entry with more files than this is refused (a flood, not work)
# nbgrader's defaults (CourseDirectory.max_file_size, .max_dir_size: 100,000 kB each)
FILE_LIMIT = DIR_LIMIT = 100_000 * 1000
SECRET_LIMIT = 4096  # submission_secret.txt: 128 hex digits
# a file of more than SPARSE_FROM bytes with less than 1/SPARSE_RATIO of them on disk is
# refused: it costs no disk, but its length in memory if it were read
SPARSE_FROM, SPARSE_RATIO = 1 << 20, 4
EXCHANGE_MODE = stat.S_ISVTX | 0o777
INBOUND_MODE = stat.S_ISVTX | stat.S_ISGID | 0o733


class Refused(Exception):
    """An inbound entry collect does not take; the message says why."""


@dataclass
class Entry:
    """One folder of ``inbound``: whose it claims to be, whose it is, and the verdict."""

    name: str
    student: str
    assignment: str
    owner: str = ""
    uid: int = -1
    time: dt.datetime | None = None
    secret: str = ""
    files: list[str] = field(default_factory=list)
    refused: str = ""
    # each file's (device, inode, size, mtime_ns, ctime_ns) as inspected: what the copy
    # must find again once the file is open
    seen: dict[str, tuple[int, int, int, int, int]] = field(default_factory=dict)

    @property
    def row(self) -> dict[str, str]:
        return {
            "entry": shown(self.name),
            "named_for": shown(self.student),
            "owner": self.owner,
            "time": self.time.strftime(TIMESTAMP_FORMAT) if self.time else "",
            "verdict": f"refused: {shown(self.refused)}" if self.refused else "ok",
        }


def _owner_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _split(name: str) -> tuple[str, str]:
    parts = name.split("+")
    if len(parts) < 3 or not parts[0] or not parts[1]:
        raise Refused("not named <id>+<assignment>+<time>")
    return parts[0], parts[1]


def _identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read_nofollow(
    path: Path, uid: int, limit: int, rel: str = "", seen: tuple | None = None
) -> tuple[bytes, os.stat_result]:
    """A regular file's bytes and its status once read: opened without following a link,
    its size taken from ``fstat`` before anything is read (above ``limit``: refused), at
    most that many bytes read, and refused when it changed while it was read (its size,
    modification or status-change time) or is not the file ``seen`` by ``inspect`` (another
    inode)."""
    rel = rel or path.name
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        before = os.fstat(fd)
        _check_file(before, rel, uid, limit)
        if seen is not None and _identity(before)[:2] != seen[:2]:
            raise Refused(f"{rel} was replaced while the entry was collected")
        size = before.st_size
        chunks, got = [], 0
        while got <= size:  # one byte more than fstat said: a file that grows is seen
            chunk = os.read(fd, min(1 << 20, size + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        after = os.fstat(fd)
        if got != size or _identity(after) != _identity(before):
            raise Refused(f"{rel} changed while it was collected")
        return b"".join(chunks), after
    finally:
        os.close(fd)


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n} bytes"


def _check_file(st: os.stat_result, rel: str, uid: int, limit: int | None = None) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise Refused(f"{rel} is a symbolic link")
    if not stat.S_ISREG(st.st_mode):
        raise Refused(f"{rel} is a device, FIFO or socket, not a file")
    if st.st_uid != uid:
        raise Refused(f"{rel} is owned by {_owner_name(st.st_uid)}, not by the submitter")
    if st.st_nlink > 1:
        raise Refused(f"{rel} is a hard link ({st.st_nlink} names)")
    if limit is not None and st.st_size > limit:
        raise Refused(
            f"{rel} is {_size(st.st_size)}, above the {_size(limit)} a file may be "
            "(c.CourseDirectory.max_file_size)"
        )
    allocated = st.st_blocks * 512
    if st.st_size > SPARSE_FROM and allocated * SPARSE_RATIO < st.st_size:
        raise Refused(
            f"{rel} is a sparse file ({_size(st.st_size)} long, {_size(allocated)} on disk)"
        )


def inspect(
    inbound: Path,
    name: str,
    check_owner: bool = True,
    file_limit: int | None = FILE_LIMIT,
    dir_limit: int | None = DIR_LIMIT,
) -> Entry:
    """The verdict on ``inbound/name`` (nothing followed, nothing opened but the secret).
    Every size is the file system's (``lstat``), before anything is read: a file above
    ``file_limit`` bytes, a sparse one, or an entry above ``dir_limit`` in all is refused,
    named. ``check_owner=False`` (nbgrader's ``ExchangeCollect.check_owner``) takes a folder
    named for any id, for a demo where one account plays every learner: never on a class."""
    try:
        student, assignment = _split(name)
    except Refused as exc:
        return Entry(name, "", "", refused=str(exc))
    entry = Entry(name, student, assignment)
    try:
        top = inbound / name
        st = os.lstat(top)
        entry.uid, entry.owner = st.st_uid, _owner_name(st.st_uid)
        if stat.S_ISLNK(st.st_mode):
            raise Refused("the entry is a symbolic link")
        if not stat.S_ISDIR(st.st_mode):
            raise Refused("the entry is not a folder")
        if check_owner:
            try:
                account = pwd.getpwnam(student)
            except KeyError:
                raise Refused(f"{student} is no account of this machine") from None
            if st.st_uid != account.pw_uid:
                raise Refused(f"named for {student} but owned by {entry.owner}")
        latest, total = st.st_ctime, 0
        stack = [(top, "")]
        while stack:
            folder, prefix = stack.pop()
            with os.scandir(folder) as items:
                for item in items:
                    rel = f"{prefix}{item.name}"
                    ist = item.stat(follow_symlinks=False)
                    latest = max(latest, ist.st_ctime)
                    if stat.S_ISDIR(ist.st_mode):
                        if ist.st_uid != st.st_uid:
                            raise Refused(f"{rel}/ is owned by {_owner_name(ist.st_uid)}")
                        stack.append((Path(item.path), rel + "/"))
                    else:
                        _check_file(ist, rel, st.st_uid, file_limit)
                        entry.files.append(rel)
                        entry.seen[rel] = _identity(ist)
                        total += ist.st_size
                        if dir_limit is not None and total > dir_limit:
                            raise Refused(
                                f"larger than the {_size(dir_limit)} an entry may be in all "
                                "(c.CourseDirectory.max_dir_size)"
                            )
                    if len(entry.files) > MAX_ITEMS:
                        raise Refused(f"more than {MAX_ITEMS} files")
        if SECRET_FILE not in entry.files:
            raise Refused(f"no {SECRET_FILE}")
        data, _ = _read_nofollow(top / SECRET_FILE, st.st_uid, SECRET_LIMIT)
        secret = data.decode("ascii", "replace").strip()
        if not SECRET.match(secret):
            raise Refused(f"{SECRET_FILE} is not one nbgrader submit wrote")
        entry.secret = secret
        entry.time = dt.datetime.fromtimestamp(latest, dt.UTC)
    except Refused as exc:
        entry.refused = str(exc)
    except OSError as exc:
        entry.refused = f"unreadable ({exc.strerror})"
    return entry


def entries(
    inbound: Path,
    student: str = "*",
    assignment: str = "*",
    check_owner: bool = True,
    file_limit: int | None = FILE_LIMIT,
    dir_limit: int | None = DIR_LIMIT,
) -> list[Entry]:
    """Every entry of ``inbound`` for ``student`` and ``assignment`` (globs), judged. A
    secret held by entries of several accounts stays with the account that submitted it
    first; the later ones are refused (a copied secret names another learner's feedback)."""
    pattern = f"{student}+{assignment}+*"
    names = [n for n in sorted(os.listdir(inbound)) if not n.startswith(".")]
    if student != "*":  # a copied secret is found among every account's entries
        names = [n for n in names if fnmatch.fnmatchcase(n, f"*+{assignment}+*")]
    judged = [inspect(inbound, name, check_owner, file_limit, dir_limit) for name in names]
    first: dict[str, Entry] = {}
    for e in sorted((e for e in judged if e.secret), key=lambda e: e.time):
        holder = first.setdefault(e.secret, e)
        if holder.student != e.student and not e.refused:
            e.refused = f"{SECRET_FILE} is a copy of the one {holder.student} submitted first"
    return [e for e in judged if fnmatch.fnmatchcase(e.name, pattern)]


def _stamp(when: dt.datetime) -> str:
    return when.strftime(TIMESTAMP_FORMAT)


LEARNER_CLOCK_S = 2.0  # how far before the server's time the learner's may be kept


def recorded_stamp(entry: Entry) -> str:
    """The ``timestamp.txt`` collect writes: the learner's own time (the one in the entry's
    name, which ``nbgrader submit`` took on this machine's clock as it began) when it lies at
    most ``LEARNER_CLOCK_S`` before the server's and not after it: then the feedback folder
    ``nbgrader fetch_feedback`` makes (named by the learner's time) is the one the teacher's
    records name. Any other time (backdated, in the future, unreadable) gives way to the
    server's: a learner gains at most those seconds."""
    from dateutil import parser

    server = entry.time
    parts = entry.name.split("+")
    if len(parts) >= 3 and server is not None:
        try:
            own = parser.parse(parts[2])
        except (ValueError, OverflowError):
            own = None
        if own is not None:
            if own.tzinfo is None:
                own = own.replace(tzinfo=dt.UTC)
            ahead = (server - own).total_seconds()
            if -0.5 <= ahead <= LEARNER_CLOCK_S:
                return parts[2]
    return _stamp(server)


class TeacherRoot:
    """The teacher's steps say what is wrong with a missing exchange, and what to do
    (nbgrader's message is the learner's: "please contact your instructor")."""

    def ensure_root(self):
        root = Path(self.root)
        if not root.is_dir():
            self.fail(
                f"there is no exchange at {root}: a wrong --exchange, PE_COURSE_EXCHANGE or "
                "c.Exchange.root? (release creates it)"
            )
        if not os.access(root, os.W_OK | os.X_OK):
            self.fail(f"the exchange {root} is not writable by you: check its owner and mode")


class SafeCollect(TeacherRoot, ExchangeCollect):
    """nbgrader's collect, taking only what a learner submitted as themself (module doc)."""

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not os.access(self.inbound_path, os.R_OK | os.X_OK):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        found = entries(
            Path(self.inbound_path),
            self.coursedir.student_id or "*",
            self.coursedir.assignment_id,
            self.check_owner,
            *self._limits,
        )
        # fnmatch's * also matches "+": keep the entries of exactly this assignment
        found = [e for e in found if not e.assignment or e.assignment == self._aid]
        self.refused = [e for e in found if e.refused]
        good: dict[str, list[Entry]] = {}
        for e in found:
            if not e.refused:
                good.setdefault(e.student, []).append(e)
        from nbgrader.api import Gradebook, MissingEntry

        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                self.duedate = gb.find_assignment(self._aid).duedate
            except MissingEntry:
                self.duedate = None
        self.src_records = []
        for student, mine in sorted(good.items()):
            mine.sort(key=lambda e: e.time, reverse=True)
            chosen = mine[0]
            if self.duedate is not None and self.before_duedate:
                due = self.duedate.replace(tzinfo=None)
                early = [e for e in mine if e.time.replace(tzinfo=None) <= due]
                chosen = early[0] if early else mine[0]
            self.src_records.append(
                {
                    "username": student,
                    "filename": chosen.name,
                    "timestamp": chosen.time.replace(tzinfo=None),
                    "entry": chosen,
                }
            )
        if not self.src_records:  # nbgrader's words: the Formgrader's Collect dialog shows them
            self.log.warning(
                "No submissions of '%s' for course '%s' to collect",
                self._aid,
                self.coursedir.course_id,
            )

    @property
    def _aid(self) -> str:
        return self.coursedir.assignment_id

    @property
    def _limits(self) -> tuple[int | None, int | None]:
        """Bytes a file and an entry may have (nbgrader's kB; 0: no limit)."""
        file_kb, dir_kb = self.coursedir.max_file_size, self.coursedir.max_dir_size
        return (file_kb * 1000 if file_kb else None, dir_kb * 1000 if dir_kb else None)

    def copy_files(self):
        collected = 0
        for rec in self.src_records:
            entry: Entry = rec["entry"]
            dest = Path(
                self.coursedir.format_path(
                    self.coursedir.submitted_directory, entry.student, self._aid
                )
            )
            if dest.is_dir():
                existing = self.coursedir.get_existing_timestamp(str(dest))  # naive UTC
                # as recorded (the learner's time when kept): the same entry is never newer
                newer = existing is None or parse_utc(recorded_stamp(entry)) > existing
                if not (self.update and newer):
                    self.log.info("No newer submission to collect: %s %s", entry.student, self._aid)
                    continue
            # nbgrader's words (the Formgrader's Collect dialog shows them)
            verb = "Updating" if dest.is_dir() else "Collecting"
            self.log.info("%s submission: %s %s", verb, entry.student, self._aid)
            try:
                self._copy(entry, dest)
            except Refused as exc:  # changed between the look and the copy
                entry.refused = str(exc)
                self.refused.append(entry)
                continue
            except OSError as exc:
                entry.refused = f"unreadable ({exc.strerror})"
                self.refused.append(entry)
                continue
            collected += 1
            self.log.info("Collected %s %s (%s)", entry.student, self._aid, _stamp(entry.time))
        for e in self.refused:
            self.log.error(
                "refused %s (named for %s, owned by %s): %s",
                shown(e.name),
                shown(e.student) or "?",
                e.owner or "?",
                shown(e.refused),
            )
        self._log_refused()
        summary = SUMMARY.format(
            assignment=self._aid, collected=collected, refused=len(self.refused)
        )
        if self.refused:  # the Formgrader then shows the log, not "Success"
            self.log.error(summary)
            raise ExchangeError(summary)
        self.log.info(summary)

    def _copy(self, entry: Entry, dest: Path) -> None:
        """Copy the entry's files as the submission, opened without following links and
        checked again once open, each read within the size ``fstat`` gives and refused when
        it changes meanwhile. The timestamp is the server's: the latest status change of
        the entry and of each file as it was read, so content rewritten after ``inspect``
        is dated by that rewrite, never by the earlier time."""
        src = Path(self.inbound_path) / entry.name
        st = os.lstat(src)
        if stat.S_ISLNK(st.st_mode) or st.st_uid != entry.uid:
            raise Refused("the entry changed while it was collected")
        tmp = dest.parent / f".{dest.name}.collecting"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        ignore = list(self.coursedir.ignore)
        file_limit, dir_limit = self._limits
        total, latest = 0, entry.time.timestamp()
        try:
            for rel in entry.files:
                if rel in (TIMESTAMP_FILE,) or any(
                    fnmatch.fnmatch(part, pat) for part in rel.split("/") for pat in ignore
                ):
                    continue
                data, st = _read_nofollow(
                    src / rel, entry.uid, file_limit, rel, entry.seen.get(rel)
                )
                latest = max(latest, st.st_ctime)
                total += len(data)
                if dir_limit is not None and total > dir_limit:
                    raise Refused(f"larger than the {_size(dir_limit)} an entry may be in all")
                out = tmp / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(data)
            latest = max(latest, os.lstat(src).st_ctime)  # a file added or renamed meanwhile
            entry.time = dt.datetime.fromtimestamp(latest, dt.UTC)
            (tmp / TIMESTAMP_FILE).write_text(recorded_stamp(entry), encoding="utf-8")
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self._share(tmp)
        if dest.exists():
            shutil.rmtree(dest)
        tmp.rename(dest)

    def _share(self, tmp: Path) -> None:
        """With ``CourseDirectory.groupshared`` (co-graders in one Unix group), what collect
        writes is the group's as nbgrader makes it (folders ``g+rwxs``, files ``g+rw``), and
        so are the folders above it collect made, so that any co-grader can collect again;
        others get nothing (nbgrader keeps the learner's bits for them)."""
        if not self.coursedir.groupshared:
            return
        for folder, _dirs, files in os.walk(tmp):
            os.chmod(folder, 0o2770)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o660)
        submitted = Path(self.coursedir.root) / self.coursedir.submitted_directory
        for above in (tmp.parent, submitted):
            try:
                if above.stat().st_uid == os.geteuid():
                    os.chmod(above, 0o2770)
            except OSError:
                pass

    def _log_refused(self) -> None:
        if not self.refused:
            return
        now = _stamp(dt.datetime.now(dt.UTC))
        write_csv(  # whole or not at all; a name starting "=" or "@" is no formula
            Path(self.coursedir.root) / REFUSED_LOG,
            ["seen", "assignment", "entry", "named_for", "owner", "reason"],
            [
                [now, self._aid, shown(e.name), shown(e.student), e.owner, shown(e.refused)]
                for e in self.refused
            ],
            append=True,
        )


FEEDBACK_MODE = 0o711  # nbgrader's


def squatted(path: str | os.PathLike) -> str:
    """Why a folder of the course's exchange that another account made cannot be used, and
    the command that frees it (the exchange is sticky: only its owner or root removes it)."""
    owner = _owner_name(os.lstat(path).st_uid)
    me = _owner_name(os.geteuid())
    return (
        f"{path} belongs to {owner}, not to {me}: it was made before the course's release "
        f"made it, so no release can use it. As root: `rm -rf {shlex.quote(str(path))}`, "
        "then release again"
    )


class _OwnedFolders:
    """nbgrader's ``ensure_directory``, naming the owner of a folder someone else made
    and the command that frees it ("You don't own the directory" named neither)."""

    def ensure_directory(self, path, mode):
        if os.path.lexists(path) and not self.coursedir.groupshared:
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode) or st.st_uid != os.geteuid():
                self.fail(squatted(path))
        super().ensure_directory(path, mode)


class SafeReleaseFeedback(TeacherRoot, _OwnedFolders, ExchangeReleaseFeedback):
    """nbgrader's release_feedback, releasing every page it can: a feedback folder without
    a valid ``submission_secret.txt`` or ``timestamp.txt`` is skipped and named."""

    def copy_files(self):
        skipped: dict[str, str] = {}
        pattern = self.coursedir.format_path(
            self.coursedir.feedback_directory, "*", self.coursedir.assignment_id
        )
        for found in sorted(glob.glob(pattern)):
            folder, why = Path(found), ""
            secret_file = folder / SECRET_FILE
            if not secret_file.is_file():
                why = f"no {SECRET_FILE}"
            elif not SECRET.match(
                secret_file.read_text(encoding="utf-8", errors="replace").strip()
            ):
                why = f"{SECRET_FILE} is not one nbgrader submit wrote"
            elif not (folder / TIMESTAMP_FILE).is_file():
                why = f"no {TIMESTAMP_FILE}"
            if why:
                skipped[folder.parent.name] = why
        if skipped:
            exclude = set(filter(None, (self.coursedir.student_id_exclude or "").split(",")))
            self.coursedir.student_id_exclude = ",".join(sorted(exclude | set(skipped)))
        super().copy_files()
        for student, why in skipped.items():
            self.log.error(
                "feedback of %s for %s not released: %s", student, self.coursedir.assignment_id, why
            )


class SafeReleaseAssignment(_OwnedFolders, ExchangeReleaseAssignment):
    """nbgrader's release_assignment, with a sticky exchange root and a sticky inbound; it
    makes the course's ``feedback`` too, so that every folder of the course is the
    teacher's before a learner could make one, and names the owner of one made first."""

    def ensure_root(self):
        root = Path(self.root)
        if not root.exists():
            try:
                root.mkdir(parents=True)
                os.chmod(root, EXCHANGE_MODE)
            except PermissionError:
                self.fail(f"Could not create {root}, permission denied.")
            return
        mode = os.stat(root).st_mode
        if mode & 0o777 != 0o777 or not mode & stat.S_ISVTX:
            if os.stat(root).st_uid == os.geteuid():
                os.chmod(root, EXCHANGE_MODE)
            elif not os.access(root / self.coursedir.course_id, os.W_OK | os.X_OK):
                self.fail(f"The exchange {root} is not open to learners (mode 1777) nor yours.")

    def init_dest(self):
        super().init_dest()
        self.ensure_directory(os.path.join(self.course_path, "feedback"), FEEDBACK_MODE)
        inbound = Path(self.inbound_path)
        if os.stat(inbound).st_uid == os.geteuid():  # groupshared: the group lists it, as nbgrader
            os.chmod(inbound, INBOUND_MODE | (0o040 if self.coursedir.groupshared else 0))


# --------------------------------------------------------------------------- inbound


def inbound_dir(exchange: Path, course_id: str) -> Path:
    return exchange / course_id / "inbound"


def remove_entry(inbound: Path, name: str) -> str:
    """Remove ``inbound/name``; a folder its owner keeps closed to the teacher is renamed
    to ``.removed-...`` (no collect sees it) until root purges it. What was done."""
    if "/" in name or name in ("", ".", ".."):
        raise ValueError(f"not an entry of {inbound}: {name!r}")
    if not os.path.lexists(inbound / name):  # named as shown (escaped)
        name = next((n for n in os.listdir(inbound) if shown(n) == name), name)
    path = inbound / name
    if not os.path.lexists(path):
        raise ValueError(f"no entry {shown(name)} in {inbound}")
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        path.unlink()
        return f"removed {shown(name)}"
    try:
        shutil.rmtree(path)
        return f"removed {shown(name)}"
    except PermissionError:
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
        aside = inbound / f"{REMOVED_PREFIX}{stamp}-{name.replace('+', '_')}"
        path.rename(aside)
        return (
            f"moved {shown(name)} aside to {shown(aside.name)} (its files belong to "
            f"{_owner_name(st.st_uid)}: "
            "no collect sees it; root deletes it with `python -m helpers inbound purge`)"
        )


def purge(inbound: Path) -> list[str]:
    """Delete every entry moved aside (root)."""
    gone = []
    for path in sorted(inbound.glob(f"{REMOVED_PREFIX}*")):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
        gone.append(shown(path.name))
    return gone


SUMMARY_LINE = re.compile(r"collect (?P<assignment>\S+): collected (?P<n>\d+), refused (?P<m>\d+)")
REFUSAL_LINE = re.compile(
    r"refused (?P<entry>.+?) \(named for (?P<who>.*?), owned by (?P<owner>.*?)\): (?P<why>.*)"
)


def collect(
    course: Path, assignment: str, exchange: Path, extra: list[str]
) -> tuple[int, list[str]]:
    """``nbgrader collect --update`` of one assignment through ``SafeCollect``: how many
    submissions it collected, and one line per refused entry (its name, whose, why)."""
    from helpers.teacher.classroom.course import nbgrader

    proc = nbgrader(
        ["collect", assignment, "--update", *extra], cwd=course, exchange=exchange, check=False
    )
    text = proc.stdout + proc.stderr
    # the last summary: the one the run ends with (names are shown escaped, on one line)
    summary = ([None] + list(SUMMARY_LINE.finditer(text)))[-1]
    if summary is None:  # nbgrader failed before collecting (no inbound, a bad config...)
        if proc.returncode != 0:
            raise RuntimeError(
                f"`nbgrader collect {assignment}` failed ({proc.returncode}):\n{text}"
            )
        # a course configured with nbgrader's own collect: its lines
        return len(re.findall(r"(Collecting|Updating) submission: ", text)), []
    refused = [
        f"{m['entry']} (named for {m['who']}, owned by {m['owner']}): {m['why'].strip()}"
        for m in REFUSAL_LINE.finditer(text)
    ]
    if len(refused) != int(summary["m"]):  # a line this did not read: never fewer
        refused += [f"(see nbgrader's log) {text}"]
    return int(summary["n"]), refused


def run_command(args) -> int:
    from helpers.teacher.classroom.course import course_id, course_root, exchange_root

    try:
        inbound = inbound_dir(exchange_root(args.exchange), course_id(course_root(args.course)))
        if not inbound.is_dir():
            raise ValueError(f"no inbound folder {inbound}: nothing released yet")
        if args.action == "list":
            rows = [e.row for e in entries(inbound)]
            for r in rows:
                print(f"{r['entry']}\t{r['owner']}\t{r['time']}\t{r['verdict']}")
            refused = sum(r["verdict"] != "ok" for r in rows)
            print(f"inbound: {len(rows)} entries, {refused} refused by collect")
        elif args.action == "remove":
            if not args.entries:
                raise ValueError("name the entries to remove (python -m helpers inbound list)")
            for name in args.entries:
                print(remove_entry(inbound, name))
        else:
            print(f"purged {len(purge(inbound))} entries moved aside")
    except (ValueError, OSError) as exc:
        print(f"inbound: {exc}", file=sys.stderr)
        return 2
    return 0

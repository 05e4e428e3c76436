"""The exchange attacked as a learner would, with real Unix accounts and a real exchange.

A teacher account owns a private copy of the course (mode 0700, as on the hub) and releases
``01_order`` to an exchange as the hub makes it; two learner accounts fetch and submit with
nbgrader's own commands from this environment, then one of them forges inbound entries by
hand: a symbolic link to the teacher's source notebook, a hard link, a FIFO, a folder named
for the other learner with a later time, one named for the teacher, a missing or copied
``submission_secret.txt``, a backdated ``timestamp.txt``. The teacher collects with
``python -m helpers collect`` (and through nbgrader's API, as the Formgrader's Collect button
does). Each attack is refused and named, or timed by the server; the rest of the class is
collected and gets feedback; the teacher removes any entry. Root only (``useradd``): the
accounts and files are removed at the end, also when a test fails.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import pwd
import secrets
import shlex
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from helpers.teacher.classroom import hub_accounts as accounts
from helpers.teacher.classroom import hub_roster as hubroster
from tests import classroom_kit as kit

pytestmark = pytest.mark.slow

ASSIGNMENT = "01_order"
CID = "positional-encodings"
PREFIX = "pex" + secrets.token_hex(2)
TEACHER, ANA, BEN = f"{PREFIX}-t", f"{PREFIX}-a", f"{PREFIX}-b"
RUNUSER = shutil.which("runuser") or "runuser"
T0 = dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)


def _why_not() -> str:
    if os.geteuid() != 0:
        return "the exchange's attacks need real Unix accounts: root (useradd, runuser)"
    missing = [t for t in ("useradd", "userdel", "runuser", "mkfifo") if shutil.which(t) is None]
    if missing:
        return f"not installed: {', '.join(missing)}"
    if not kit.real_ids([ASSIGNMENT]):
        return f"no source/{ASSIGNMENT}"
    return ""


def _useradd(name: str, home: Path) -> None:
    for _ in range(50):  # another test may hold /etc/passwd's lock for a moment
        proc = subprocess.run(
            ["useradd", "--create-home", "--home-dir", str(home), "--shell", "/bin/sh",
             "--user-group", name],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if proc.returncode == 0:
            return
        time.sleep(0.2)
    raise RuntimeError(f"useradd {name}: {proc.stderr}")


def _userdel(name: str) -> None:
    subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True, check=False)
    for _ in range(50):
        proc = subprocess.run(["userdel", "--remove", name], capture_output=True, check=False)
        if proc.returncode in (0, 6, 12):
            return
        time.sleep(0.2)


class Class:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.course = base / "teacher" / "course"
        self.exchange = base / "exchange"
        self.inbound = self.exchange / CID / "inbound"
        self.env = base / "env"

    def home(self, user: str) -> Path:
        return Path(pwd.getpwnam(user).pw_dir)

    def as_user(self, user: str, script: str, check: bool = True, timeout: int = 300):
        """``sh -c script`` as ``user`` with this environment's bin on PATH, in its home."""
        env = {
            "HOME": str(self.home(user)),
            "USER": user,
            "LOGNAME": user,
            "PATH": f"{self.env / 'bin'}:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "PE_COURSE_EXCHANGE": str(self.exchange),
        }
        proc = subprocess.run(
            [RUNUSER, "-u", user, "--", "sh", "-c", script],
            cwd=self.home(user),
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
        if check:
            assert proc.returncode == 0, f"{user}$ {script}\n{proc.stdout}{proc.stderr}"
        return proc

    def helpers(self, *args: str, user: str = TEACHER, check: bool = False):
        """``python -m helpers <args>`` as the teacher, in the course."""
        words = " ".join(shlex.quote(a) for a in args)
        cmd = f"cd {self.course} && python -m helpers {words} --course {self.course}"
        return self.as_user(user, cmd, check=check)

    def collect(self):
        proc = self.helpers("collect", ASSIGNMENT, "--exchange", str(self.exchange))
        return proc.returncode, proc.stdout + proc.stderr

    def submit(self, learner: str, marker: str) -> Path:
        """Fetch, write ``marker`` into the notebook, submit: the new inbound entry."""
        before = set(os.listdir(self.inbound))
        work = self.home(learner) / "work"
        self.as_user(
            learner,
            f"mkdir -p {work} && cd {work} && rm -rf {ASSIGNMENT} && nbgrader fetch_assignment "
            f"{ASSIGNMENT} --course {CID} --Exchange.root={self.exchange}",
        )
        nb = work / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        self.as_user(
            learner,
            'python -c "import nbformat as f,sys; nb=f.read(sys.argv[1],4); '
            'nb.cells.append(f.v4.new_markdown_cell(sys.argv[2])); f.write(nb,sys.argv[1])" '
            f"{nb} {shlex.quote(marker)}",
        )
        self.as_user(
            learner,
            f"cd {work} && nbgrader submit {ASSIGNMENT} --course {CID} "
            f"--Exchange.root={self.exchange}",
        )
        (new,) = set(os.listdir(self.inbound)) - before
        return self.inbound / new

    def submitted(self, learner: str) -> Path:
        return self.course / "submitted" / learner / ASSIGNMENT

    def reset(self) -> None:
        for entry in self.inbound.iterdir():
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        for name in ("submitted", "feedback", "collect_refused.csv"):
            path = self.course / name
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        shutil.rmtree(self.exchange / CID / "feedback", ignore_errors=True)


@pytest.fixture(scope="module")
def cls():
    why = _why_not()
    if why:
        pytest.skip(why)
    base = Path(tempfile.mkdtemp(prefix="pe-exchange-"))
    base.chmod(0o755)
    made = []
    try:
        for name in (TEACHER, ANA, BEN):
            _useradd(name, base / "home" / name)
            made.append(name)
        c = Class(base)
        # an environment every account may run (this one's interpreter may be in a folder
        # closed to them, such as root's pyenv): the hub's teachers' environment
        hub = hubroster.Hub(base / "state", kit.REPO, CID)
        hub.state.mkdir(mode=0o755)
        accounts.clone_environment(hub, c.env, keep_course=True)
        t = pwd.getpwnam(TEACHER)
        c.course.parent.mkdir()
        kit.course_with(c.course.parent, [ASSIGNMENT])
        for folder, dirs, files in os.walk(c.course.parent):
            for n in [folder, *(os.path.join(folder, x) for x in dirs + files)]:
                os.chown(n, t.pw_uid, t.pw_gid, follow_symlinks=False)
        c.course.parent.chmod(0o700)  # a private checkout, as a careful teacher keeps it
        c.exchange.mkdir()
        c.exchange.chmod(0o1777)  # as the hub makes it
        proc = c.helpers("release", ASSIGNMENT, "--exchange", str(c.exchange))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        yield c
    finally:
        for name in made:
            _userdel(name)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def fresh(cls):
    cls.reset()
    return cls


def _forge(c: Class, learner: str, name: str, body: str, secret: str | None = None) -> Path:
    """An inbound entry made by hand as ``learner``: ``body`` runs inside it (sh)."""
    entry = c.inbound / name
    secret = secrets.token_hex(64) if secret is None else secret
    write_secret = f"printf %s {secret} > submission_secret.txt && " if secret else ""
    c.as_user(
        learner,
        f"mkdir '{entry}' && cd '{entry}' && {write_secret}"
        "printf %s '2020-01-01 00:00:00.000000 UTC' > timestamp.txt && " + body,
    )
    return entry


def _later(days: int = 3650) -> str:
    """A time in the folder name's format (nbgrader submit's), ``days`` from now."""
    return (dt.datetime.now(dt.UTC) + dt.timedelta(days=days)).strftime("%Y-%m-%d %H%M%S.%f %Z")


def _refused(out: str, entry: Path, why: str) -> None:
    assert f"refused {entry.name}" in out and why in out, out
    assert "refused 0" not in out, out


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_symlink_to_the_teachers_source_is_refused(fresh):
    c = fresh
    c.submit(ANA, "work of ana")
    source = c.course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    entry = _forge(c, ANA, f"{ANA}+{ASSIGNMENT}+{_later()}+x", f"ln -s {source} {ASSIGNMENT}.ipynb")
    rc, out = c.collect()
    assert rc != 0, out
    _refused(out, entry, "symbolic link")
    taken = _text(c.submitted(ANA) / f"{ASSIGNMENT}.ipynb")
    assert "work of ana" in taken and "BEGIN SOLUTION" not in taken
    assert "collected 1, refused 1" in out, out


def test_an_entry_that_is_a_symlink_is_refused(fresh):
    c = fresh
    own = c.home(ANA) / "copy"
    c.as_user(
        ANA, f"mkdir {own} && printf %s {secrets.token_hex(64)} > {own}/submission_secret.txt"
    )
    entry = c.inbound / f"{ANA}+{ASSIGNMENT}+{_later()}+x"
    c.as_user(ANA, f"ln -s {c.course / 'source' / ASSIGNMENT} '{entry}'")
    rc, out = c.collect()
    assert rc != 0
    _refused(out, entry, "symbolic link")
    assert not c.submitted(ANA).exists()


def test_hard_link_is_refused(fresh):
    c = fresh
    legit = c.submit(ANA, "work of ana")
    mine = c.home(ANA) / "work" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    entry = _forge(c, ANA, f"{ANA}+{ASSIGNMENT}+{_later()}+x", f"ln {mine} {ASSIGNMENT}.ipynb")
    assert os.stat(entry / f"{ASSIGNMENT}.ipynb").st_nlink == 2
    rc, out = c.collect()
    assert rc != 0
    _refused(out, entry, "hard link")
    assert legit.exists() and c.submitted(ANA).is_dir()  # the real submission is taken


def test_fifo_is_refused_and_does_not_hang(fresh):
    c = fresh
    entry = _forge(c, ANA, f"{ANA}+{ASSIGNMENT}+{_later()}+x", f"mkfifo {ASSIGNMENT}.ipynb")
    start = time.monotonic()
    rc, out = c.collect()
    assert time.monotonic() - start < 120
    assert rc != 0
    _refused(out, entry, "FIFO")


def test_folder_forged_for_another_learner_is_refused(fresh):
    c = fresh
    c.submit(BEN, "work of ben")
    entry = _forge(c, ANA, f"{BEN}+{ASSIGNMENT}+{_later()}+x", f"echo '{{}}' > {ASSIGNMENT}.ipynb")
    rc, out = c.collect()
    assert rc != 0
    _refused(out, entry, f"named for {BEN} but owned by {ANA}")
    assert "work of ben" in _text(c.submitted(BEN) / f"{ASSIGNMENT}.ipynb")
    refused_log = _text(c.course / "collect_refused.csv")
    assert entry.name in refused_log and ANA in refused_log


def test_folder_named_for_the_teacher_is_refused(fresh):
    c = fresh
    c.submit(ANA, "work of ana")
    entry = _forge(
        c, ANA, f"{TEACHER}+{ASSIGNMENT}+{_later()}+x", f"echo '{{}}' > {ASSIGNMENT}.ipynb"
    )
    rc, out = c.collect()
    assert rc != 0
    _refused(out, entry, f"named for {TEACHER} but owned by {ANA}")
    assert not c.submitted(TEACHER).exists()
    assert c.submitted(ANA).is_dir()


def test_missing_and_copied_secrets_are_refused(fresh):
    c = fresh
    ben = c.submit(BEN, "work of ben")
    ben_secret = _text(ben / "submission_secret.txt")
    none = _forge(
        c, ANA, f"{ANA}+{ASSIGNMENT}+{_later()}+a", f"echo '{{}}' > {ASSIGNMENT}.ipynb", ""
    )
    rc, out = c.collect()
    assert rc != 0
    _refused(out, none, "no submission_secret.txt")
    shutil.rmtree(none)
    odd = _forge(c, ANA, f"{ANA}+{ASSIGNMENT}+{_later()}+b", "true", "../../feedback/x")
    rc, out = c.collect()
    _refused(out, odd, "not one nbgrader submit wrote")
    shutil.rmtree(odd)
    copied = _forge(c, ANA, f"{ANA}+{ASSIGNMENT}+{_later()}+c", "true", ben_secret)
    rc, out = c.collect()
    assert rc != 0
    _refused(out, copied, f"a copy of the one {BEN} submitted first")
    assert c.submitted(BEN).is_dir() and not c.submitted(ANA).exists()


def test_backdated_timestamp_is_not_the_submission_time(fresh):
    c = fresh
    entry = c.submit(ANA, "work of ana")
    old = "2020-01-01 00:00:00.000000 UTC"
    backdated = c.inbound / f"{ANA}+{ASSIGNMENT}+2020-01-01 000000.000000 UTC+x"
    c.as_user(ANA, f"printf %s '{old}' > '{entry}/timestamp.txt' && mv '{entry}' '{backdated}'")
    rc, out = c.collect()
    assert rc == 0, out
    assert "collected 1, refused 0" in out, out
    from nbgrader.utils import parse_utc

    taken = parse_utc(_text(c.submitted(ANA) / "timestamp.txt"))
    assert taken >= T0 - dt.timedelta(seconds=5), taken  # the server's time, not 2020


def test_the_formgraders_collect_refuses_too(fresh):
    """The Formgrader's Collect button calls nbgrader's API: the same plug-in, and no
    "Success" while an entry is refused."""
    c = fresh
    c.submit(BEN, "work of ben")
    entry = _forge(c, ANA, f"{BEN}+{ASSIGNMENT}+{_later()}+x", f"echo '{{}}' > {ASSIGNMENT}.ipynb")
    script = (
        "import json; from nbgrader.apps.baseapp import NbGrader; "
        "from nbgrader.apps import NbGraderAPI; from nbgrader.coursedir import CourseDirectory; "
        "app = NbGrader(); app.load_config_file(); "
        "api = NbGraderAPI(CourseDirectory(config=app.config), config=app.config); "
        f"print(json.dumps(api.collect({ASSIGNMENT!r})))"
    )
    proc = c.as_user(TEACHER, f"cd {c.course} && python -c {shlex.quote(script)}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["success"] is False, result
    assert f"refused {entry.name}" in result["log"] and f"owned by {ANA}" in result["log"]
    assert "work of ben" in _text(c.submitted(BEN) / f"{ASSIGNMENT}.ipynb")


def test_feedback_is_released_to_everyone_it_can_be(fresh):
    """A submission without a secret (collected before, or by hand) blocks no one else's
    feedback: ``helpers feedback`` names it and releases the others'."""
    c = fresh
    t = pwd.getpwnam(TEACHER)
    for learner, secret in ((ANA, None), (BEN, secrets.token_hex(64))):
        folder = c.submitted(learner)
        folder.mkdir(parents=True)
        (folder / f"{ASSIGNMENT}.ipynb").write_text("not a notebook")  # a page that says so
        (folder / "timestamp.txt").write_text("2026-01-01 00:00:00.000000 UTC")
        if secret:
            (folder / "submission_secret.txt").write_text(secret)
        for path in (folder.parent.parent, folder.parent, folder, *folder.iterdir()):
            os.chown(path, t.pw_uid, t.pw_gid)
    proc = c.helpers("feedback", ASSIGNMENT, "--exchange", str(c.exchange))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert f"feedback of {ANA} for {ASSIGNMENT} not released: no submission_secret.txt" in out
    from nbgrader.utils import notebook_hash

    page = notebook_hash(secret=secret, notebook_id=ASSIGNMENT) + ".html"
    released = os.listdir(c.exchange / CID / "feedback")
    assert released == [page], released


def test_the_teacher_removes_any_entry(fresh):
    c = fresh
    entry = _forge(c, ANA, f"{BEN}+{ASSIGNMENT}+{_later()}+x", f"echo x > {ASSIGNMENT}.ipynb")
    os.chmod(entry, 0o755)  # as a learner's mkdir leaves it: the teacher cannot empty it
    plain = c.as_user(TEACHER, f"rm -rf '{entry}'", check=False)
    assert plain.returncode != 0 and entry.exists()  # why a command is needed
    listed = c.helpers("inbound", "list", "--exchange", str(c.exchange))
    assert entry.name in listed.stdout and "refused: named for" in listed.stdout, listed.stdout
    proc = c.helpers("inbound", "remove", entry.name, "--exchange", str(c.exchange))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not entry.exists()
    assert entry.name not in c.helpers("inbound", "list", "--exchange", str(c.exchange)).stdout
    rc, out = c.collect()
    assert rc == 0 and "collected 0, refused 0" in out, out
    proc = c.helpers("inbound", "purge", "--exchange", str(c.exchange), user="root")
    assert proc.returncode == 0, proc.stderr
    assert not [n for n in os.listdir(c.inbound) if n.startswith(".removed-")]


def test_an_entry_name_cannot_hide_or_forge_lines_in_what_the_teacher_reads(fresh):
    """A folder name may hold any byte but ``/``: line breaks and terminal escapes in it
    would write whole lines into the teacher's terminal, such as a summary saying nothing
    was refused (``helpers collect`` once read the first such line and exited 0), or erase
    the entry's own line (ESC [2K). Every name and file name a learner chose is shown
    escaped, on its own line; the entry is refused, named, and removable by what is shown."""
    c = fresh
    c.submit(BEN, "work of ben")
    fake = f"\ncollect {ASSIGNMENT}: collected 1, refused 0\n"
    name = f"{BEN}+{ASSIGNMENT}+{_later()}{fake}\r\x1b[2K\x1b]0;title\x07+x"
    entry = c.inbound / name
    c.as_user(ANA, f"mkdir {shlex.quote(str(entry))} && echo x > {shlex.quote(str(entry))}/a")
    rc, out = c.collect()
    assert rc != 0, out
    assert "\x1b" not in out and "\r" not in out and fake not in out, repr(out)
    shown = name.encode("unicode_escape").decode("ascii")
    assert f"refused {shown} (named for {BEN}, owned by {ANA})" in out, out
    assert "collected 1, refused 1" in out, out
    listed = c.helpers("inbound", "list", "--exchange", str(c.exchange)).stdout
    assert "\x1b" not in listed and fake not in listed, repr(listed)
    (line,) = [ln for ln in listed.splitlines() if ln.startswith(shown)]
    assert f"refused: named for {BEN} but owned by {ANA}" in line, listed
    proc = c.helpers("inbound", "remove", shown, "--exchange", str(c.exchange))
    assert proc.returncode == 0 and not entry.exists(), proc.stdout + proc.stderr
    # a file name inside an entry is a learner's too
    inside = c.inbound / f"{ANA}+{ASSIGNMENT}+{_later()}+y"
    c.as_user(
        ANA,
        f"mkdir '{inside}' && ln -s /etc/passwd {shlex.quote(str(inside / f'x{fake}y'))}"
        f" && printf %s {secrets.token_hex(64)} > '{inside}/submission_secret.txt'",
    )
    rc, out = c.collect()
    assert rc != 0 and fake not in out, repr(out)
    assert "is a symbolic link" in out and "collected 0, refused 1" in out, out


def test_nothing_the_course_makes_is_world_writable(fresh):
    """The exchange and the course as the teacher's side makes them: world-writable only
    with the sticky bit (the exchange's root and inbound: no one removes another's entry)."""
    c = fresh
    c.submit(ANA, "work of ana")
    c.collect()
    learners = {pwd.getpwnam(n).pw_uid for n in (ANA, BEN)}
    open_ = []
    for top in (c.exchange, c.course):
        for folder, dirs, files in os.walk(top):
            for path in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
                st = os.lstat(path)
                if st.st_uid in learners or stat.S_ISLNK(st.st_mode):
                    continue  # what learners' own nbgrader submit made
                if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
                    open_.append(f"{path} {stat.filemode(st.st_mode)}")
    assert not open_, open_
    assert stat.S_IMODE(os.stat(c.inbound).st_mode) & stat.S_ISVTX


def _report(c: Class) -> list[dict]:
    import csv

    with open(c.course / "autograde_report.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_a_file_name_that_is_not_utf8_costs_no_one_else_their_records(fresh):
    """A learner renames the notebook in their entry to bytes that are no UTF-8
    (``b"\\xff\\xfe-x.ipynb"``) and collect takes it. autograde once graded everyone, then
    died printing the name (no summary, exit 2) after ``autograde_report.csv`` had been
    rewritten up to that row: the other learners' rows were gone, ``grades`` said "not
    autograded" and ``feedback`` failed for all. Now the name is shown escaped everywhere,
    the report is written whole, and only this learner's notebook is missing."""
    c = fresh
    ana = c.submit(ANA, "work of ana")
    c.submit(BEN, "work of ben")
    c.as_user(
        ANA,
        'python -c "import os,sys; d=sys.argv[1].encode(); '
        f"os.rename(d+b'/{ASSIGNMENT}.ipynb', d+b'/\\xff\\xfe-x.ipynb')\" '{ana}'",
    )
    rc, out = c.collect()
    assert rc == 0 and "collected 2, refused 0" in out, out
    proc = c.helpers("autograde", ASSIGNMENT)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "\udcff" not in out, out
    assert "autograde: 1 graded" in out, out
    assert "\\udcff\\udcfe-x.ipynb" in out, out  # named, escaped
    rows = {r["student_id"]: r for r in _report(c)}
    assert set(rows) == {ANA, BEN}, rows
    assert rows[BEN]["status"] == "graded", rows
    assert rows[ANA]["status"] == "missing" and "\\udcff\\udcfe-x.ipynb" in rows[ANA]["reason"]
    proc = c.helpers("grades")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    grades = _text(c.course / "grades.csv")
    (ben_line,) = [ln for ln in grades.splitlines() if ln.startswith(BEN)]
    assert "not autograded" not in ben_line and "graded" in ben_line, grades
    proc = c.helpers("feedback", ASSIGNMENT, "--exchange", str(c.exchange))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Traceback" not in out, out
    assert (c.course / "feedback" / BEN / ASSIGNMENT / f"{ASSIGNMENT}.html").is_file(), out
    assert len(os.listdir(c.exchange / CID / "feedback")) >= 1, out


def test_no_name_is_a_formula_in_collect_refused_csv(fresh):
    """An entry whose name starts with ``=`` or ``@`` was written as it is into
    ``collect_refused.csv``: a formula cell (``=HYPERLINK(...)``) when the teacher opens
    it in a spreadsheet. Every cell the course writes starts as text."""
    import csv

    c = fresh
    for start in ('=HYPERLINK("x","ok")', "@SUM(1)", "+1", "-x"):
        name = f"{start}+{ASSIGNMENT}+{_later()}+x"
        c.as_user(ANA, f"mkdir {shlex.quote(str(c.inbound / name))}")
    rc, out = c.collect()
    assert rc != 0 and "refused 4" in out, out
    with open(c.course / "collect_refused.csv", newline="", encoding="utf-8") as fh:
        cells = [cell for row in csv.reader(fh) for cell in row]
    assert cells and not [x for x in cells if x[:1] in ("=", "+", "-", "@", "\t", "\r")], cells


def _big(c: Class, learner: str, entry: Path, how: str) -> None:
    c.as_user(learner, f"cd '{entry}' && {how}")


def test_a_sparse_file_is_refused_by_name_before_it_is_read(fresh):
    """A sparse file costs no disk but its length in memory: collect read all of it before
    the size limit applied (2 GiB took 4.4 GB), then left it out without a word. Its size
    comes from ``fstat`` now and the entry is refused, named with the reason."""
    c = fresh
    entry = c.submit(ANA, "work of ana")
    _big(c, ANA, entry, f"rm {ASSIGNMENT}.ipynb && truncate -s 300000000 {ASSIGNMENT}.ipynb")
    assert os.stat(entry / f"{ASSIGNMENT}.ipynb").st_blocks < 100
    rc, out = c.collect()
    assert rc != 0, out
    _refused(out, entry, f"{ASSIGNMENT}.ipynb is 300.0 MB, above the 100.0 MB a file may be")
    assert "collected 0, refused 1" in out, out
    # below the size limit, a sparse file is refused for what it is
    _big(c, ANA, entry, f"rm {ASSIGNMENT}.ipynb && truncate -s 50000000 {ASSIGNMENT}.ipynb")
    rc, out = c.collect()
    _refused(out, entry, f"{ASSIGNMENT}.ipynb is a sparse file (50.0 MB long")


def test_a_200_mb_notebook_is_named_not_renamed_or_deleted(fresh):
    """A notebook above nbgrader's 100 MB was dropped in silence by collect, and autograde
    then called it "renamed or deleted". collect refuses the entry and names the file."""
    c = fresh
    entry = c.submit(ANA, "work of ana")
    _big(c, ANA, entry, f"head -c 200000000 /dev/zero > {ASSIGNMENT}.ipynb")
    rc, out = c.collect()
    assert rc != 0, out
    _refused(out, entry, f"{ASSIGNMENT}.ipynb is 200.0 MB, above the 100.0 MB a file may be")
    assert not c.submitted(ANA).exists()


WATCH_AND_REWRITE = r"""
import ctypes, os, struct, sys, time
entry, late, ready = sys.argv[1], sys.argv[2], sys.argv[3]
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init()
libc.inotify_add_watch(fd, os.path.join(entry, "submission_secret.txt").encode(), 0x20)
open(ready, "w").close()  # IN_OPEN armed
os.read(fd, 4096)  # collect opened the secret: it is judging this entry
with open(os.path.join(entry, "01_order.ipynb"), "r+b") as fh:  # the same inode, rewritten
    fh.write(open(late, "rb").read())
    fh.truncate()
print(f"{time.time():.6f}")
"""


def test_content_rewritten_during_collect_is_dated_by_the_rewrite(fresh):
    """The learner watches its entry with inotify and, once collect has judged it (opened
    its secret), rewrites the notebook in place: the same inode, the same owner, one link.
    collect used to copy the new content dated at the original submission, so a
    placeholder on time could be replaced after the deadline. Now a file's status is read
    again once open and after the read: the rewrite is refused or dates the submission."""
    c = fresh
    entry = c.submit(ANA, "on time placeholder")
    late = c.home(ANA) / "late.ipynb"
    c.as_user(
        ANA,
        f"cp '{entry}/{ASSIGNMENT}.ipynb' {late} && sed -i 's/on time placeholder/late work/' {late}",
    )
    time.sleep(2)  # the rewrite's ctime is clearly after the submission's
    script, ready = c.home(ANA) / "watch.py", c.home(ANA) / "ready"
    script.write_text(WATCH_AND_REWRITE, encoding="utf-8")
    env = {"PATH": f"{c.env / 'bin'}:/usr/bin:/bin", "HOME": str(c.home(ANA)), "LANG": "C.UTF-8"}
    watcher = subprocess.Popen(
        [RUNUSER, "-u", ANA, "--", "python", str(script), str(entry), str(late), str(ready)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        for _ in range(200):
            if ready.exists():
                break
            time.sleep(0.05)
        rc, out = c.collect()
        said, err = watcher.communicate(timeout=60)
    finally:
        watcher.kill()
    rewritten = float(said.strip() or 0)
    assert rewritten, err
    if rc != 0:  # refused: changed while it was collected
        _refused(out, entry, "changed while it was collected")
        return
    from nbgrader.utils import parse_utc

    taken = _text(c.submitted(ANA) / f"{ASSIGNMENT}.ipynb")
    stamp = parse_utc(_text(c.submitted(ANA) / "timestamp.txt")).replace(tzinfo=dt.UTC)
    if "late work" in taken:
        assert stamp.timestamp() >= rewritten - 0.5, (stamp, rewritten, out)
    else:
        assert "on time placeholder" in taken


THREAD_BOMB = """import threading as _t, time as _time
_t.stack_size(1 << 16)  # 64 KiB a thread: the memory limit alone lets about 38,000 start
for _ in range(3000):
    _t.Thread(target=_time.sleep, args=(20,), daemon=True).start()
"""


def test_an_answer_cell_that_starts_3000_threads_fails_cleanly(fresh):
    """Threads were not limited in the sandbox: an answer cell started 3,000 (3,001 seen
    from the host), and about 38,000 fit in the worker's memory, above the machine's
    ``pid_max``. The sandbox's own tasks are bounded now (RLIMIT_NPROC in its user
    namespace): the cell fails with its error, the rest of the class is graded. Autograde
    runs as the teacher's ordinary account, from the command line."""
    c = fresh
    ana = c.submit(ANA, "work of ana")
    c.submit(BEN, "work of ben")
    c.as_user(
        ANA,
        'python -c "import nbformat as f,sys; p=sys.argv[1]; nb=f.read(p,4); '
        "cell=next(x for x in nb.cells if x.cell_type=='code' and "
        "x.metadata.get('nbgrader',{}).get('solution')); "
        'cell.source=sys.argv[2]+cell.source; f.write(nb,p)" '
        f"'{ana}/{ASSIGNMENT}.ipynb' {shlex.quote(THREAD_BOMB)}",
    )
    rc, out = c.collect()
    assert rc == 0, out
    start = time.monotonic()
    proc = c.helpers("autograde", ASSIGNMENT)
    out = proc.stdout + proc.stderr
    assert time.monotonic() - start < 300, out
    assert "sandbox: every learner's answer cells ran in bubblewrap" in out, out
    assert "autograde: 2 graded" in out, out
    graded = _text(c.course / "autograded" / ANA / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    assert "can't start new thread" in graded, graded[-3000:]


def test_an_empty_inbound_is_no_failure(fresh):
    """Nothing submitted yet: collect says so and succeeds (it exited 2 once)."""
    c = fresh
    assert not os.listdir(c.inbound)
    rc, out = c.collect()
    assert rc == 0 and "collected 0, refused 0" in out, out


def test_an_exchange_squatted_before_the_release_is_named_with_its_fix(cls):
    """The exchange is 1777: a learner who makes ``<course>/{inbound,outbound,feedback}``
    before the first release blocked every release ("You don't own the directory", naming
    no one and no way out; only root can remove them). The release names the owner and
    the command; once root ran it, the release makes every folder of the course the
    teacher's, ``feedback`` included."""
    import re

    c = cls
    other = c.base / "exchange-squatted"
    other.mkdir()
    other.chmod(0o1777)
    try:
        c.as_user(
            ANA, f"mkdir -p {other}/{CID}/inbound {other}/{CID}/outbound {other}/{CID}/feedback"
        )
        proc = c.helpers("release", ASSIGNMENT, "--exchange", str(other))
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0, out
        assert f"belongs to {ANA}, not to {TEACHER}" in out, out
        (command,) = set(re.findall(r"As root: `([^`]+)`", out))
        subprocess.run(["sh", "-c", command], check=True)
        proc = c.helpers("release", ASSIGNMENT, "--exchange", str(other))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        t = pwd.getpwnam(TEACHER).pw_uid
        for name in ("", "inbound", "outbound", "feedback"):
            assert os.stat(other / CID / name).st_uid == t, name
    finally:
        shutil.rmtree(other, ignore_errors=True)

"""The course on a JupyterHub of this machine: one Linux account per member of a roster.

``python -m helpers hub --roster roster.csv`` (``make hub``), as root:

- **accounts**: one Linux account per row of the roster (``student_id,name,email,lms_id,section``
  and an optional ``role``: ``learner``, the default, or ``teacher``), with a home only its
  owner can open and a generated password (``passwords.csv`` of the hub's folder, readable
  by the teachers' first account alone). Accounts that exist already keep their password.
- **the hub**: JupyterHub with its PAM authenticator (the accounts' own passwords),
  configurable-http-proxy from npm (``python -m helpers system-deps`` installs it into
  ``.proxy/`` of the course), the local process spawner, on 127.0.0.1. Its groups and roles
  are those of nbgrader's documentation for one course: ``formgrade-<course>`` (the
  teachers) and ``nbgrader-<course>`` (the learners), and a server role that may read its
  own user's groups (nbgrader's Assignments tab lists the courses from them).
- **the teacher** grades in their own server, in the teachers' environment (this one, with
  the course package, in ``teacher-env/``, which the first teacher's group alone may open):
  the course folder is a copy in the teacher's home (``~/<course id>``, mode 0700) with its
  gradebook and ``.grading_secret``; the Formgrader opens in a browser tab of its own,
  ``/user/<teacher>/formgrader`` (JupyterHub forbids frames of a single-user server).
- **the learners** work in the learner environment (``learner-env/``): the learner build of
  ``helpers`` (``learner_build``: no reference, no checks, no secret), nbgrader's
  Assignments tab and validation, and neither the Formgrader nor the assignment creator.
- **both environments** are virtual environments with this environment's third-party
  packages (symbolic or hard links: no download), built anew at each start, on this same
  interpreter where every account may run it (a copy in ``python/`` when it lives in a
  folder closed to others, such as root's pyenv).

Everything of the hub lives in its folder (``--state``, default ``/srv/<course id>``): the
hub's database (users, groups, servers), its cookie secret, the proxy's pid, the learner
environment, the exchange, the log. ``hub-stop`` stops the hub, its proxy and every
single-user server; the next ``hub`` starts from the same database and folders.
"""

from __future__ import annotations

import csv
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from helpers.teacher.classroom.course import copy_course, course_id, course_root
from helpers.teacher.classroom.lms import ROSTER_COLUMNS

ROOT = Path(__file__).resolve().parents[3]
# The roster of the grades' export (``lms``): student_id, name, email, lms_id, section; the
# learner's id (``student_id``, or ``id``) is their Linux account and nbgrader student id.
ROSTER_FIELDS = ROSTER_COLUMNS
ID_COLUMNS = ("student_id", "id")
ROLES = ("learner", "teacher")
# A Linux account name that useradd takes everywhere (Debian's NAME_REGEX, no dots).
ACCOUNT = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
PROXY_DIR = ".proxy"  # npm's prefix, in the course: .proxy/node_modules/.bin/...
PROXY_PACKAGE = "configurable-http-proxy"
DEFAULT_PORT = 8000
START_TIMEOUT_S = 120
# Files of the teacher's environment that are not the learners' (the full course package).
TEACHER_FILES = re.compile(r"^(__editable__.*pe_course_helpers.*|pe_course_helpers-.*)$")
LEARNER_LAB_DISABLED = (
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
)
LEARNER_SERVER_DISABLED = (
    "nbgrader.server_extensions.formgrader",
    "nbgrader.server_extensions.course_list",
)


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
        """The hub's address, once started (``http://127.0.0.1:<port>``)."""
        return self.address.read_text(encoding="utf-8").strip()


def default_state(course_id: str) -> Path:
    return Path("/srv") / course_id


def hub_for(state: str | os.PathLike | None = None, course: str | os.PathLike | None = None) -> Hub:
    root = course_root(course)
    cid = course_id(root)
    return Hub(Path(state).resolve() if state else default_state(cid), root, cid)


def proxy_command(course: Path = ROOT) -> Path:
    """configurable-http-proxy as npm installed it into the course (``system-deps``)."""
    return course / PROXY_DIR / "node_modules" / ".bin" / PROXY_PACKAGE


def install_proxy(course: Path = ROOT) -> Path:
    """``npm install --prefix <course>/.proxy configurable-http-proxy`` unless it is there."""
    found = proxy_command(course)
    if found.exists():
        return found
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(
            "npm is not installed: install Node.js and npm (Debian: apt-get install npm), "
            f"then run `npm install --prefix {course / PROXY_DIR} {PROXY_PACKAGE}`"
        )
    proc = subprocess.run(
        [
            npm,
            "install",
            "--prefix",
            str(course / PROXY_DIR),
            "--no-audit",
            "--no-fund",
            PROXY_PACKAGE,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0 or not found.exists():
        raise RuntimeError(f"npm install {PROXY_PACKAGE} failed:\n{proc.stdout}{proc.stderr}")
    return found


def _require_root(what: str) -> None:
    if os.geteuid() != 0:
        raise RuntimeError(
            f"{what} needs root (it creates Linux accounts and runs JupyterHub's PAM "
            "authenticator and spawner): run it with sudo"
        )


# --------------------------------------------------------------------------- accounts


def account_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _run(cmd: list[str], stdin: str | None = None) -> None:
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed ({proc.returncode}): {proc.stderr.strip()}")


def _read_passwords(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    with open(path, newline="", encoding="utf-8") as fh:
        return {row["id"]: row["password"] for row in csv.DictReader(fh)}


def create_accounts(hub: Hub, members: list[Member]) -> dict[str, str]:
    """One Linux account per member (home mode 0700), with a generated password for each
    account this creates; ``passwords.csv`` (id, name, role, password) is written for the
    first teacher alone (mode 0600). Returns ``id -> password`` of the accounts it knows."""
    _require_root("creating the class's accounts")
    known = _read_passwords(hub.passwords)
    for m in members:
        if not account_exists(m.id):
            _run(
                [
                    "useradd",
                    "--create-home",
                    "--shell",
                    "/bin/bash",
                    "--comment",
                    f"{m.name},{m.section},,,{m.email}".replace(":", " "),
                    m.id,
                ]
            )
            known[m.id] = secrets.token_urlsafe(12)
            _run(["chpasswd"], stdin=f"{m.id}:{known[m.id]}\n")
        os.chmod(pwd.getpwnam(m.id).pw_dir, 0o700)
    owner = pwd.getpwnam(teachers(members)[0])
    hub.state.mkdir(parents=True, exist_ok=True)
    os.chmod(hub.state, 0o755)
    tmp = hub.passwords.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "name", "role", "password"])
        for m in members:
            writer.writerow([m.id, m.name, m.role, known.get(m.id, "(its own password)")])
    os.chown(tmp, owner.pw_uid, owner.pw_gid)
    os.chmod(tmp, 0o600)
    os.replace(tmp, hub.passwords)
    return {m.id: known[m.id] for m in members if m.id in known}


def remove_accounts(names: Iterable[str]) -> list[str]:
    """Remove the accounts (their processes, homes and mail spools); returns those removed."""
    _require_root("removing accounts")
    gone = []
    for name in names:
        if not account_exists(name):
            continue
        subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True, check=False)
        for _ in range(50):  # userdel refuses while a process of the user is alive
            proc = subprocess.run(
                ["userdel", "--remove", name], capture_output=True, text=True, check=False
            )
            if proc.returncode in (0, 12):  # 12: the home could not be removed entirely
                break
            time.sleep(0.1)
        if account_exists(name):
            raise RuntimeError(f"userdel {name} failed: {proc.stderr.strip()}")
        gone.append(name)
    return gone


# --------------------------------------------------------------------------- the teacher's course


def teacher_course(hub: Hub, teacher: str, ids: Iterable[str] | None = None) -> Path:
    """The teacher's copy of the course (made once; kept across restarts), the teacher's own
    mode 0700, with its ``.grading_secret``; ``~/.jupyter/nbgrader_config.py`` points
    nbgrader (the Formgrader, the command line) at it."""
    account = pwd.getpwnam(teacher)
    dest = hub.course_dir(teacher)
    if not (dest / "nbgrader_config.py").exists():
        copy_course(hub.course, dest, ids)
    from helpers.teacher import seeds

    seeds.secret(dest)
    config = Path(account.pw_dir) / ".jupyter" / "nbgrader_config.py"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        "# The course this account grades (written by `python -m helpers hub`).\n"
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(dest)!r}\n"
        f"c.Exchange.root = {str(hub.exchange)!r}\n",
        encoding="utf-8",
    )
    for path in (dest, config.parent):
        _chown_tree(path, account.pw_uid, account.pw_gid)
    os.chmod(dest, 0o700)
    return dest


def _chown_tree(top: Path, uid: int, gid: int) -> None:
    os.chown(top, uid, gid)
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            os.chown(os.path.join(folder, name), uid, gid, follow_symlinks=False)


# ------------------------------------------------------------------ the learners' environment


def _open_to_all(path: Path) -> bool:
    """Every account may reach ``path``: it and each folder above it are open to others."""
    return path.exists() and all(os.stat(p).st_mode & 0o001 for p in [path, *path.parents])


def shared_python(hub: Hub) -> Path:
    """This Python (the same build: the packages are this environment's) where every
    account may run it: in place when its folders are open to all, else a copy in the hub's
    folder (hard links; the interpreter's library path made relative with patchelf)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    base = Path(sys.base_prefix) / "bin" / version
    if _open_to_all(base.resolve()):
        return base
    copy = hub.state / "python"
    target = copy / "bin" / version
    if target.exists():
        return target
    patchelf = shutil.which("patchelf")
    if patchelf is None:
        raise RuntimeError(
            f"the course's interpreter {base.resolve()} is in a folder other accounts cannot "
            "open, and copying it needs patchelf: `make system-deps` (Debian: apt-get install "
            "patchelf), or install the course with a Python that every account may run"
        )
    site = Path(sys.base_prefix) / "lib" / version / "site-packages"
    shutil.copytree(
        sys.base_prefix,
        copy,
        copy_function=os.link,
        symlinks=True,
        # neither the installed packages (the environments bring them) nor Python's own tests
        ignore=lambda folder, names: (
            names
            if Path(folder) == site
            else [n for n in names if Path(folder) == site.parent and n == "test"]
        ),
    )
    real = base.resolve()
    inside = copy / real.relative_to(Path(sys.base_prefix).resolve())
    inside.unlink()
    shutil.copy2(real, inside)
    _run([patchelf, "--set-rpath", "$ORIGIN/../lib", str(inside)])
    return target


def clone_environment(hub: Hub, dest: Path, keep_course: bool) -> Path:
    """A virtual environment at ``dest`` on ``shared_python(hub)`` with this environment's
    packages (links into its ``site-packages``: no download), its Jupyter data and
    configuration and its scripts (their interpreter line rewritten). ``keep_course``
    keeps this environment's course package (the teacher's); else it is left out."""
    prefix = Path(sys.prefix)
    if dest.exists():
        shutil.rmtree(dest)
    subprocess.run([str(shared_python(hub)), "-m", "venv", "--without-pip", str(dest)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    src = prefix / "lib" / version / "site-packages"
    site = dest / "lib" / version / "site-packages"
    # symbolic links where every account may follow them (a few hundred entries), else hard
    # links of every file: the teachers' environment always, since the grading sandbox
    # shows a process its own environment and not what links outside it point to
    linked = not keep_course and _open_to_all(src)
    for entry in src.iterdir():
        if not keep_course and TEACHER_FILES.match(entry.name):
            continue
        if linked and entry.name != "__pycache__":
            (site / entry.name).symlink_to(entry)
        elif entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, site / entry.name, copy_function=os.link, symlinks=True)
        else:
            os.link(entry, site / entry.name, follow_symlinks=False)
    for sub in ("share/jupyter", "etc/jupyter"):
        if (prefix / sub).is_dir():
            shutil.copytree(prefix / sub, dest / sub, dirs_exist_ok=True)
    _lab_overrides(dest)
    shebang = f"#!{prefix / 'bin' / 'python'}"
    for script in (prefix / "bin").iterdir():
        target = dest / "bin" / script.name
        if target.exists() or script.is_dir() or script.name.startswith("activate"):
            continue
        try:
            text = script.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if text.startswith(shebang):
            target.write_text(f"#!{dest / 'bin' / 'python'}" + text[len(shebang) :], "utf-8")
            target.chmod(0o755)
    return dest


# JupyterLab's defaults on the hub: every cell of a notebook in the page (the notebooks are
# short; a learner's search finds every cell), no news from the internet.
LAB_OVERRIDES = {
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false"},
}


def _lab_overrides(env: Path) -> None:
    path = env / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    found = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    path.write_text(json.dumps(found | LAB_OVERRIDES, indent=2), encoding="utf-8")


def teacher_environment(hub: Hub, teacher: str) -> Path:
    """The teachers' environment: this one (with the course package), on an interpreter
    they may run, readable by the first teacher's group alone."""
    env = clone_environment(hub, hub.teacher_env, keep_course=True)
    gid = pwd.getpwnam(teacher).pw_gid
    os.chown(env, 0, gid)
    os.chmod(env, 0o750)
    return env


def learner_environment(hub: Hub) -> Path:
    """The learners' environment: this one's third-party packages, the learner build of
    ``helpers`` (``learner_build``) and a configuration for nbgrader on the hub."""
    from helpers.teacher import learner_build

    env = clone_environment(hub, hub.learner_env, keep_course=False)
    wheel = learner_build.build(hub.state / "dist", hub.course)
    proc = subprocess.run(
        [
            str(env / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--quiet",
            "--no-warn-script-location",
            "--disable-pip-version-check",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"installing the learner build failed:\n{proc.stdout}{proc.stderr}")
    _learner_config(hub, env)
    return env


def _learner_config(hub: Hub, env: Path) -> None:
    etc = env / "etc" / "jupyter"
    (etc / "jupyter_server_config.d").mkdir(parents=True, exist_ok=True)
    (etc / "nbgrader_config.py").write_text(
        "# nbgrader of the learners on the course's hub (written by `python -m helpers hub`).\n"
        "c = get_config()  # noqa: F821\n"
        f"c.Exchange.root = {str(hub.exchange)!r}\n"
        "c.Exchange.path_includes_course = True\n"
        "# The courses of a learner are their hub groups nbgrader-<course> (and formgrade-).\n"
        'c.Authenticator.plugin_class = "nbgrader.auth.JupyterHubAuthPlugin"\n',
        encoding="utf-8",
    )
    (etc / "jupyter_server_config.d" / "zz-pe-course-learner.json").write_text(
        json.dumps(
            {"ServerApp": {"jpserver_extensions": dict.fromkeys(LEARNER_SERVER_DISABLED, False)}},
            indent=2,
        ),
        encoding="utf-8",
    )
    (etc / "labconfig").mkdir(exist_ok=True)
    (etc / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": dict.fromkeys(LEARNER_LAB_DISABLED, True)}, indent=2),
        encoding="utf-8",
    )


# ------------------------------------------------------------------ the hub's configuration


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def settings(hub: Hub, members: list[Member], port: int) -> dict:
    """What the hub's ``jupyterhub_config.py`` is made from (JSON-able)."""
    cid = hub.course_id
    graders = teachers(members)
    return {
        "port": port,
        "hub_port": _free_port(),
        "proxy_api_port": _free_port(),
        "proxy": str(proxy_command(hub.course)),
        "hub_dir": str(hub.hub_dir),
        "course_id": cid,
        "teachers": graders,
        "learners": learners(members),
        "teacher_prefix": str(hub.teacher_env),
        "learner_prefix": str(hub.learner_env),
        "exchange": str(hub.exchange),
        "course_dirs": {t: str(hub.course_dir(t)) for t in graders},
    }


CONFIG_TEMPLATE = '''\
"""JupyterHub of the course {course_id} (written by `python -m helpers hub`; rewritten at
each start from the roster)."""

import json
import os

S = json.loads({settings!r})
c = get_config()  # noqa: F821

c.JupyterHub.bind_url = f"http://127.0.0.1:{{S['port']}}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{{S['hub_port']}}"
c.JupyterHub.db_url = "sqlite:///" + os.path.join(S["hub_dir"], "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(S["hub_dir"], "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = os.path.join(S["hub_dir"], "jupyterhub.pid")
c.ConfigurableHTTPProxy.command = [S["proxy"]]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{{S['proxy_api_port']}}"
c.ConfigurableHTTPProxy.pid_file = os.path.join(S["hub_dir"], "proxy.pid")

# The accounts' own passwords (PAM); only the roster may log in.
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False
c.Authenticator.allowed_users = set(S["teachers"] + S["learners"])
c.Authenticator.admin_users = set()

# nbgrader's groups of one course: its graders and its learners.
c.JupyterHub.load_groups = {{
    "formgrade-" + S["course_id"]: {{"users": S["teachers"]}},
    "nbgrader-" + S["course_id"]: {{"users": S["learners"]}},
}}
c.JupyterHub.load_roles = [
    # a single-user server may act as its user: nbgrader's Assignments tab reads the
    # user's groups through the hub's API to list the user's courses
    {{"name": "server", "scopes": ["inherit"]}},
    # the other graders of the course may open the first teacher's server (its Formgrader)
    {{
        "name": "formgrade-" + S["course_id"],
        "groups": ["formgrade-" + S["course_id"]],
        "scopes": ["access:servers!user=" + S["teachers"][0]],
    }},
]

# One local process per user, as that user, on 127.0.0.1.
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.ip = "127.0.0.1"
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# a server stops at the hub's first signal (not after its 5 s "Shut down? (y/[n])" prompt)
c.Spawner.args = ["--ServerApp.answer_yes=True"]


def pre_spawn_hook(spawner):
    """The teacher's server runs in the course's environment, next to the course folder;
    a learner's in the learner environment."""
    name = spawner.user.name
    prefix = S["teacher_prefix"] if name in S["teachers"] else S["learner_prefix"]
    spawner.cmd = [os.path.join(prefix, "bin", "python"), "-m", "jupyterhub.singleuser"]
    env = {{
        "PATH": os.path.join(prefix, "bin") + ":/usr/local/bin:/usr/bin:/bin",
        "VIRTUAL_ENV": prefix,
    }}
    if name in S["teachers"]:
        env["PE_COURSE_EXCHANGE"] = S["exchange"]
    spawner.environment.update(env)


c.Spawner.pre_spawn_hook = pre_spawn_hook
'''


def write_config(hub: Hub, members: list[Member], port: int) -> Path:
    hub.hub_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(hub.hub_dir, 0o700)
    values = settings(hub, members, port)
    hub.config.write_text(
        CONFIG_TEMPLATE.format(course_id=hub.course_id, settings=json.dumps(values)),
        encoding="utf-8",
    )
    return hub.config


def exchange(hub: Hub) -> Path:
    """The exchange folder, writable by everyone as nbgrader requires (``ugo+rwx``)."""
    hub.exchange.mkdir(parents=True, exist_ok=True)
    os.chmod(hub.exchange, 0o777)
    return hub.exchange


# --------------------------------------------------------------------------- start, stop


def _gone(pid: int) -> bool:
    """The process has ended (reaped here when it is a child of this process)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return True
    except ChildProcessError:
        pass  # not a child of this process
    try:
        os.kill(pid, 0)
    except OSError:
        return True
    return False


def running_pid(hub: Hub) -> int | None:
    """The pid of the hub's JupyterHub when it runs."""
    try:
        pid = int(hub.pid_file.read_text().strip())
    except (OSError, ValueError):
        return None
    return None if _gone(pid) else pid


def start(
    hub: Hub,
    members: list[Member],
    port: int = DEFAULT_PORT,
    ids: Iterable[str] | None = None,
    timeout: float = START_TIMEOUT_S,
) -> str:
    """Set up everything (idempotent) and start JupyterHub in the background; its URL."""
    _require_root("the course's hub")
    if running_pid(hub):
        raise RuntimeError(f"the hub of {hub.state} runs already at {hub.url()}: hub-stop first")
    if not proxy_command(hub.course).exists():
        install_proxy(hub.course)
    if _open_to_all(hub.course / "source"):
        print(
            f"warning: {hub.course / 'source'} (the solutions) and the course package are "
            "readable by every account of this machine, learners included: keep the course "
            "in a folder only the teachers may open (chgrp <teacher> and chmod o-rwx on a "
            "folder above it; the teachers' server reads the course package there)",
            file=sys.stderr,
        )
    create_accounts(hub, members)
    exchange(hub)
    for teacher in teachers(members):
        teacher_course(hub, teacher, ids)
    teacher_environment(hub, teachers(members)[0])
    learner_environment(hub)
    write_config(hub, members, port)
    log = open(hub.log, "a", encoding="utf-8")  # noqa: SIM115  (the hub's, kept open by it)
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "jupyterhub"), "-f", str(hub.config)],
        cwd=hub.hub_dir,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log.close()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}/hub/health", timeout=2):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                if proc.poll() is None:
                    proc.terminate()
                tail = hub.log.read_text(encoding="utf-8", errors="replace")[-4000:]
                raise RuntimeError(f"JupyterHub did not start (log {hub.log}):\n{tail}") from None
            time.sleep(0.2)
    hub.address.write_text(url + "\n", encoding="utf-8")
    return url


def stop(hub: Hub, timeout: float = 60) -> bool:
    """Stop the hub (it stops its proxy and the single-user servers); False if none ran."""
    pid = running_pid(hub)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _gone(pid):
            break
        time.sleep(0.1)
    else:  # the hub did not stop: kill it, and its proxy (the servers die with their users')
        os.kill(pid, signal.SIGKILL)
        try:
            os.kill(int((hub.hub_dir / "proxy.pid").read_text().strip()), signal.SIGKILL)
        except (OSError, ValueError):
            pass
    hub.pid_file.unlink(missing_ok=True)
    return True


# --------------------------------------------------------------------------- commands

COMMANDS = ("hub", "hub-stop")


def add_commands(sub) -> None:
    """``hub`` and ``hub-stop`` of ``python -m helpers``."""
    start_p = sub.add_parser("hub", help="a JupyterHub for the class of a roster (root)")
    start_p.add_argument("--roster", type=Path, required=True, help="roster CSV")
    start_p.add_argument("--port", type=int, default=DEFAULT_PORT, help="on 127.0.0.1")
    stop_p = sub.add_parser("hub-stop", help="stop the course's JupyterHub")
    for p in (start_p, stop_p):
        p.add_argument("--state", type=Path, default=None, help="the hub's folder (/srv/<course>)")
        p.add_argument("--course", type=Path, default=None, help="course folder (default: repo)")


def run_command(args) -> int:
    try:
        hub = hub_for(args.state, args.course)
        if args.command == "hub-stop":
            print("hub stopped" if stop(hub) else f"no hub runs for {hub.state}")
            return 0
        members = read_roster(args.roster)
        url = start(hub, members, args.port)
    except (ValueError, RuntimeError) as exc:
        print(f"{args.command}: {exc}", file=sys.stderr)
        return 2
    print(
        f"JupyterHub of {hub.course_id} at {url}: {len(learners(members))} learner(s), "
        f"teacher(s) {', '.join(teachers(members))}; passwords in {hub.passwords} "
        f"(readable by {teachers(members)[0]} alone); the Formgrader at "
        f"{url}/user/{teachers(members)[0]}/formgrader; stop with `make hub-stop`"
    )
    return 0

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

import json
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterable
from pathlib import Path

from helpers.teacher.classroom.exchange import INBOUND_MODE
from helpers.teacher.classroom.hub_accounts import (
    account_ids,
    create_accounts,
    learner_environment,
    readable_by,
    teacher_course,
    teacher_environment,
)
from helpers.teacher.classroom.hub_roster import (
    Hub,
    Member,
    hub_for,
    learners,
    read_roster,
    require_root,
    teachers,
)

ROOT = Path(__file__).resolve().parents[3]
PROXY_DIR = ".proxy"  # npm's prefix, in the course: .proxy/node_modules/.bin/...
PROXY_PACKAGE = "configurable-http-proxy"
DEFAULT_PORT = 8000
# Each learner's account on the hub, its server and everything it starts (kernels,
# terminals, their children): at most this many tasks (processes and threads, RLIMIT_NPROC,
# counted for the account as a whole), each process at most this much address space
# (RLIMIT_AS). A fork bomb in a learner's terminal stops at the first; the course's
# notebooks need a few dozen tasks and well under 1 GiB.
LEARNER_TASKS = 512
LEARNER_MEMORY = 8 << 30
# ... and all the processes of the account's server together at most this much memory (a
# memory cgroup of the account's own, ``task_cgroup.account_memory``; where none can be
# made, RLIMIT_AS alone): two notebooks of the course with their explorers take about 1 GiB.
LEARNER_ACCOUNT_MEMORY = 4 << 30
START_TIMEOUT_S = 120


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


# ------------------------------------------------------------------ the hub's configuration


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def public_url(port: int, url: str | None = None) -> str:
    """The hub's address as browsers reach it: ``url`` (a school's ``https://hub.school.org``,
    with a wildcard DNS record and certificate for ``*.hub.school.org``), else
    ``http://localhost:<port>`` (every ``<user>.localhost`` is this machine's loopback for
    Chromium and Firefox)."""
    found = (url or f"http://localhost:{port}").rstrip("/")
    parts = urllib.parse.urlsplit(found)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path:
        raise ValueError(
            f"--public-url {url!r}: give the hub's address as scheme://host[:port] with no "
            "path (https://hub.school.org); each user's server is then at "
            "https://<user>.hub.school.org"
        )
    return found


def settings(hub: Hub, members: list[Member], port: int, url: str | None = None) -> dict:
    """What the hub's ``jupyterhub_config.py`` is made from (JSON-able)."""
    cid = hub.course_id
    graders = teachers(members)
    return {
        "port": port,
        "public_url": public_url(port, url),
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
        "environments": {m.id: terminal_env(hub, m) for m in members},
        "limits": {
            "tasks": LEARNER_TASKS,
            "memory": LEARNER_MEMORY,
            "account_memory": LEARNER_ACCOUNT_MEMORY,
        },
    }


def terminal_env(hub: Hub, member: Member) -> dict[str, str]:
    """What a member's server (and each terminal of it) has in its environment beyond
    JupyterHub's own variables: its environment's ``bin`` first, and for a teacher the
    course (``PE_COURSE_ROOT``) and the exchange (``PE_COURSE_EXCHANGE``), so that the
    documented commands run as written (``python -m helpers autograde 01_order``)."""
    prefix = hub.teacher_env if member.role == "teacher" else hub.learner_env
    env = {
        "PATH": f"{prefix / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "VIRTUAL_ENV": str(prefix),
    }
    if member.role == "teacher":
        env["PE_COURSE_ROOT"] = str(hub.course_dir(member.id))
        env["PE_COURSE_EXCHANGE"] = str(hub.exchange)
    return env


CONFIG_TEMPLATE = '''\
"""JupyterHub of the course {course_id} (written by `python -m helpers hub`; rewritten at
each start from the roster)."""

import json
import os

from jupyterhub.utils import subdomain_hook_idna

S = json.loads({settings!r})
c = get_config()  # noqa: F821

c.JupyterHub.bind_url = f"http://127.0.0.1:{{S['port']}}"
# One origin per user: each server at <user>.<host> (subdomains of the hub's address), so a
# page a learner's server sends can never read the teacher's server with the teacher's
# cookies (frames, popups, fetch: the browser keeps origins apart).
c.JupyterHub.subdomain_host = S["public_url"]
# (the function: the "idna" shortcut fails in JupyterHub 6.1, "str object is not callable")
c.JupyterHub.subdomain_hook = subdomain_hook_idna
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

# One local process per user, as that user, on 127.0.0.1; a learner's with limits on tasks
# and memory that the account cannot raise (set as root before the server becomes the
# user; its kernels and terminals inherit them).
import resource  # noqa: E402

from jupyterhub.spawner import LocalProcessSpawner  # noqa: E402


from helpers.teacher import task_cgroup  # noqa: E402


class CourseSpawner(LocalProcessSpawner):
    def make_preexec_fn(self, name):
        become_user = super().make_preexec_fn(name)
        if name not in S["learners"]:
            return become_user
        tasks, memory = S["limits"]["tasks"], S["limits"]["memory"]
        # the account's memory cgroup, made here in the hub; the child only joins it
        group = task_cgroup.account_memory(name, S["limits"]["account_memory"])
        procs = None if group is None else os.path.join(group, "cgroup.procs")

        def preexec():
            if procs is not None:
                try:
                    with open(procs, "w") as fh:
                        fh.write(str(os.getpid()))
                except OSError:  # the rlimits still hold; the hub's log has the spawn
                    pass
            resource.setrlimit(resource.RLIMIT_NPROC, (tasks, tasks))
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
            become_user()

        return preexec


c.JupyterHub.spawner_class = CourseSpawner
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
    spawner.environment.update(S["environments"][name])


c.Spawner.pre_spawn_hook = pre_spawn_hook
'''


def write_config(hub: Hub, members: list[Member], port: int, url: str | None = None) -> Path:
    hub.hub_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(hub.hub_dir, 0o700)
    values = settings(hub, members, port, url)
    hub.config.write_text(
        CONFIG_TEMPLATE.format(course_id=hub.course_id, settings=json.dumps(values)),
        encoding="utf-8",
    )
    return hub.config


# The course's folders of the exchange as nbgrader's release and release_feedback make
# them (the course's release: a sticky inbound), owned by the first teacher.
COURSE_FOLDERS = {
    "": 0o755,
    "outbound": 0o755,
    "inbound": INBOUND_MODE,
    "feedback": 0o711,
}


def exchange(hub: Hub, teacher: str) -> Path:
    """The exchange folder, writable by everyone as nbgrader's learner side requires, with
    the sticky bit (``1777``, as ``/tmp``): no account removes or renames another's. The
    course's own folders in it are made here, the teacher's, before any learner can make
    them (a learner's ``inbound`` would block every release: "You don't own the
    directory"); one that another account made is refused by name, with its owner."""
    hub.exchange.mkdir(parents=True, exist_ok=True)
    os.chmod(hub.exchange, 0o1777)
    account = pwd.getpwnam(teacher)
    for sub, mode in COURSE_FOLDERS.items():
        folder = hub.exchange / hub.course_id / sub
        try:
            os.mkdir(folder)
        except FileExistsError:
            st = os.lstat(folder)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != account.pw_uid:
                owner = _account_name(st.st_uid)
                raise RuntimeError(
                    f"{folder} was made by {owner}, not by the teacher {teacher}: a learner's "
                    f"folder there blocks every release; look at what it holds, then remove "
                    f"it (`rm -r '{folder}'`) and run `make hub` again"
                ) from None
            os.chmod(folder, mode)
            continue
        os.chown(folder, account.pw_uid, account.pw_gid)
        os.chmod(folder, mode)
    return hub.exchange


def _account_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


# What a learner must never read, in the course the hub is started from.
GUARDED = {
    "source": "the solutions",
    "gradebook.db": "the gradebook",
    ".grading_secret": "the grading secret",
    "helpers/teacher": "the reference and the checks",
}


def exposed(hub: Hub, members: list[Member]) -> list[str]:
    """What of ``GUARDED`` a learner account of the roster could read (folder modes of
    every parent included), one line each."""
    found = []
    for name in learners(members):
        uid, gids = account_ids(name)
        for rel, what in GUARDED.items():
            if readable_by(hub.course / rel, uid, gids):
                found.append(f"{hub.course / rel} ({what}) is readable by the learner {name}")
    return found


def refuse_exposed(hub: Hub, members: list[Member]) -> None:
    found = exposed(hub, members)
    if found:
        raise RuntimeError(
            "\n".join(found[:8] + ([f"... and {len(found) - 8} more"] if len(found) > 8 else []))
            + f"\nclose the course folder first: `chmod go-rwx {hub.course}` (the hub and the "
            "environments it builds read nothing there as another account: closing it breaks "
            "nothing), then `make hub` again"
        )


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
    url: str | None = None,
) -> str:
    """Set up everything (idempotent) and start JupyterHub in the background; its public
    URL (``public_url``)."""
    require_root("the course's hub")
    public = public_url(port, url)
    if running_pid(hub):
        raise RuntimeError(f"the hub of {hub.state} runs already at {hub.url()}: hub-stop first")
    refuse_exposed(hub, members)
    if not proxy_command(hub.course).exists():
        install_proxy(hub.course)
    create_accounts(hub, members)
    refuse_exposed(hub, members)  # the accounts as they now are (their groups)
    exchange(hub, teachers(members)[0])
    for teacher in teachers(members):
        teacher_course(hub, teacher, ids)
    teacher_environment(hub, teachers(members)[0])
    learner_environment(hub)
    write_config(hub, members, port, public)
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
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/hub/health", timeout=2):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                if proc.poll() is None:
                    proc.terminate()
                tail = hub.log.read_text(encoding="utf-8", errors="replace")[-4000:]
                raise RuntimeError(f"JupyterHub did not start (log {hub.log}):\n{tail}") from None
            time.sleep(0.2)
    hub.address.write_text(public + "\n", encoding="utf-8")
    return public


def running_states() -> list[Path]:
    """The folders of the hubs of this machine that run (their JupyterHub processes'
    ``-f <state>/hub/jupyterhub_config.py``)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if not any(a.endswith(b"/jupyterhub") for a in argv[:2]) or b"-f" not in argv[:-1]:
            continue
        config = Path(os.fsdecode(argv[argv.index(b"-f") + 1]))
        if config.name == "jupyterhub_config.py" and config.parent.name == "hub":
            found.append(config.parent.parent)
    return sorted(set(found))


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
    start_p.add_argument(
        "--public-url",
        default=None,
        help="the hub's address for browsers (default http://localhost:PORT); each user's "
        "server is at <user>.<its host>",
    )
    stop_p = sub.add_parser("hub-stop", help="stop the course's JupyterHub")
    for p in (start_p, stop_p):
        p.add_argument("--state", type=Path, default=None, help="the hub's folder (/srv/<course>)")
        p.add_argument("--course", type=Path, default=None, help="course folder (default: repo)")


def run_command(args) -> int:
    try:
        hub = hub_for(args.state, args.course)
        if args.command == "hub-stop":
            if stop(hub):
                print(f"hub of {hub.state} stopped")
                return 0
            others = [state for state in running_states() if state != hub.state]
            where = (
                f"no hub folder at {hub.state}"
                if not hub.hub_dir.is_dir()
                else f"no hub runs for {hub.state}"
            )
            hint = (
                "; a hub of this machine runs for "
                + ", ".join(str(o) for o in others)
                + f": make hub-stop HUB_STATE={others[0]}"
                if others
                else "; give the folder `make hub` was started with: make hub-stop HUB_STATE=..."
            )
            print(f"hub-stop: {where}{hint}", file=sys.stderr)
            return 1
        members = read_roster(args.roster)
        url = start(hub, members, args.port, url=args.public_url)
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

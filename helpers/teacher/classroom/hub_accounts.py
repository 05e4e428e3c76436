"""The accounts and environments of a hub's class (``hub``): one Linux account per member
with a generated password, the teacher's copy of the course, and the teachers' and the
learners' environments."""

from __future__ import annotations

import csv
import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from helpers.teacher.classroom.course import copy_course
from helpers.teacher.classroom.hub_roster import Hub, Member, require_root, teachers

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
    require_root("creating the class's accounts")
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
    require_root("removing accounts")
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
        "# The course this account grades (written by `python -m helpers hub`): its own\n"
        "# configuration (grading, feedback, the exchange's plug-ins), its folder, the exchange.\n"
        "c = get_config()  # noqa: F821\n"
        f"load_subconfig('nbgrader_config.py', path={str(dest)!r})  # noqa: F821\n"
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


def readable_by(path: Path, uid: int, gids: set[int]) -> bool:
    """The account ``uid`` (in the groups ``gids``) may read ``path``: every folder above
    it lets it through (x) and ``path`` lets it read (r, and x for a folder), by the mode
    bits of owner, group or others that apply to it (ACLs are not read)."""

    def lets(p: Path, bits: int) -> bool:
        st = os.stat(p)
        shift = 6 if st.st_uid == uid else 3 if st.st_gid in gids else 0
        return (st.st_mode >> shift) & bits == bits

    path = path.resolve()
    if not path.exists():
        return False
    return all(lets(p, 1) for p in path.parents) and lets(path, 5 if path.is_dir() else 4)


def account_ids(name: str) -> tuple[int, set[int]]:
    """The uid and groups of an account (-1 and none when it does not exist yet)."""
    try:
        account = pwd.getpwnam(name)
    except KeyError:
        return -1, set()
    return account.pw_uid, set(os.getgrouplist(name, account.pw_gid))


def open_to_all(path: Path) -> bool:
    """Every account may reach ``path``: it and each folder above it are open to others."""
    return path.exists() and all(os.stat(p).st_mode & 0o001 for p in [path, *path.parents])


def shared_python(hub: Hub) -> Path:
    """This Python (the same build: the packages are this environment's) where every
    account may run it: in place when its folders are open to all, else a copy in the hub's
    folder (hard links; the interpreter's library path made relative with patchelf)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    base = Path(sys.base_prefix) / "bin" / version
    if open_to_all(base.resolve()):
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
    packages (hard links of its ``site-packages``: no download), its Jupyter data and
    configuration and its scripts (their interpreter line rewritten). ``keep_course``
    adds a copy of the course package (the teachers'); else it is left out."""
    prefix = Path(sys.prefix)
    if dest.exists():
        shutil.rmtree(dest)
    subprocess.run([str(shared_python(hub)), "-m", "venv", "--without-pip", str(dest)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    src = prefix / "lib" / version / "site-packages"
    site = dest / "lib" / version / "site-packages"
    # hard links of every file (copies across file systems), never symbolic links: the
    # environment then does not depend on the course's path (closing the course's folder
    # breaks nothing), and the grading sandbox shows a process its own environment. The
    # course package is never linked (its editable install points into the course): the
    # teachers' environment gets a copy of it.
    for entry in src.iterdir():
        if TEACHER_FILES.match(entry.name):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, site / entry.name, copy_function=_link_or_copy, symlinks=True)
        else:
            _link_or_copy(entry, site / entry.name)
    if keep_course:
        shutil.copytree(
            hub.course / "helpers",
            site / "helpers",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
    for sub in ("share/jupyter", "etc/jupyter", "etc/ipython"):
        if (prefix / sub).is_dir():
            shutil.copytree(prefix / sub, dest / sub, dirs_exist_ok=True)
    _lab_overrides(dest)
    _terminal_config(dest)
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


def _link_or_copy(src, dst) -> None:
    """A hard link of ``src`` (a symbolic link is copied as a link), a copy across file
    systems."""
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)


# JupyterLab's defaults on the hub: every cell of a notebook in the page (the notebooks are
# short; a learner's search finds every cell), no news from the internet.
LAB_OVERRIDES = {
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false"},
}


# A terminal of a server the hub spawned is a login shell by default (`bash -l`), which
# reads /etc/profile and so loses the environment's PATH: `python -m helpers ...` and
# `nbgrader fetch_assignment ...` as the docs write them would not find the environment.
# An interactive shell keeps the server's environment (its PATH, the course, the exchange).
# The setting is the server's own configuration file (``etc/jupyter/jupyter_server_config
# .json`` of the environment, on every server's config path): a ``jupyter_server_config.d/``
# file is read for its ``jpserver_extensions`` alone.
TERMINAL_SHELL = ["/bin/bash"]
SERVER_CONFIG = "jupyter_server_config.json"


def _terminal_config(env: Path) -> None:
    path = env / "etc" / "jupyter" / SERVER_CONFIG
    path.parent.mkdir(parents=True, exist_ok=True)
    found = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    server = found.setdefault("ServerApp", {})
    server.setdefault("terminado_settings", {})["shell_command"] = TERMINAL_SHELL
    path.write_text(json.dumps(found, indent=2), encoding="utf-8")


def _lab_overrides(env: Path) -> None:
    path = env / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    found = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    path.write_text(json.dumps(found | LAB_OVERRIDES, indent=2), encoding="utf-8")


def teacher_environment(hub: Hub, teacher: str) -> Path:
    """The teachers' environment: this one (with the course package), on an interpreter
    they may run, readable by the first teacher's group alone."""
    env = clone_environment(hub, hub.teacher_env, keep_course=True)
    from helpers.teacher import pages

    pages.enable_in(env)  # the Formgrader's pages with their Content-Security-Policy
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
        "import os\n\n"
        "c = get_config()  # noqa: F821\n"
        f"c.Exchange.root = {str(hub.exchange)!r}\n"
        "# From the home (the server's folder, the Assignments tab) an assignment is\n"
        "# <course>/<id>; inside ~/<course>, where a learner's terminal often is, it is <id>:\n"
        "# `nbgrader fetch_assignment`, `submit` and `fetch_feedback` work from both.\n"
        "c.Exchange.path_includes_course = os.path.realpath(os.getcwd()) != os.path.realpath(\n"
        f"    os.path.join(os.path.expanduser('~'), {hub.course_id!r})\n"
        ")\n"
        "# the course of `nbgrader fetch_assignment 06_rope` typed in a terminal\n"
        f"c.CourseDirectory.course_id = {hub.course_id!r}\n"
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

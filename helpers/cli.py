"""Command line of the course: ``python -m helpers <command>``.

Commands: ``lab`` (JupyterLab on notebook 01; ``--lang ko`` for the Korean notebooks),
``doctor`` (environment check), ``system-deps`` (Debian packages for the browser,
sandbox and PostgreSQL tests), and, in the teacher's installation, ``generate`` (learner notebooks
from source), ``check`` (grade one saved notebook like autograde would) and the classroom's
``release``, ``collect``, ``autograde``, ``feedback``, ``grades`` and ``learner-build``
(``helpers.teacher.classroom``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import helpers
from helpers import ASSIGNMENTS
from helpers.i18n import LANGUAGES

STARTED = time.perf_counter()  # the command's start (after Python's own, a few ms)

ROOT = Path(__file__).resolve().parent.parent


def _bin(name: str) -> str:
    """A tool of the running interpreter's environment (nbgrader, jupyter, alembic)."""
    return str(Path(sys.executable).parent / name)


def _env_with_venv() -> dict:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


# --------------------------------------------------------------------------- doctor


def doctor() -> int:
    """Print [OK]/[FAIL] with the version of each dependency and the nbgrader extension."""
    from importlib import metadata

    failures = 0
    ok = sys.version_info >= (3, 11)
    failures += not ok
    print(f"[{'OK' if ok else 'FAIL'}] python {sys.version.split()[0]} (needs >= 3.11)")
    for name in (
        "numpy",
        "matplotlib",
        "ipywidgets",
        "jupyterlab",
        "nbgrader",
        "nbformat",
        "nbclient",
        "pytest",
        "hypothesis",
        "playwright",
    ):
        try:
            print(f"[OK] {name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            failures += 1
            print(f"[FAIL] {name} is not installed: run `make setup`")
    try:
        out = subprocess.run(
            [_bin("jupyter"), "labextension", "list"],
            capture_output=True,
            text=True,
            env=_env_with_venv(),
            timeout=120,
            check=False,
        )
        text = out.stdout + out.stderr
        enabled = any("nbgrader" in line and "enabled" in line for line in text.splitlines())
    except (OSError, subprocess.TimeoutExpired) as exc:
        enabled, text = False, str(exc)
    failures += not enabled
    print(
        f"[{'OK' if enabled else 'FAIL'}] nbgrader JupyterLab extension "
        f"{'enabled' if enabled else 'not enabled: run `jupyter labextension list`'}"
    )
    kernels = Path(sys.prefix) / "etc" / "ipython" / "ipython_kernel_config.py"
    loaded = kernels.is_file() and all(
        f"helpers.{name}" in kernels.read_text(encoding="utf-8")
        for name in ("fresh_kernel", "kernel_info")
    )
    failures += not loaded
    print(
        f"[{'OK' if loaded else 'FAIL'}] kernels' configuration {kernels}"
        + (
            ""
            if loaded
            else ": missing (an editable install leaves it out: `make setup`, or copy "
            "etc/ipython/ipython_kernel_config.py of the repository there)"
        )
    )
    for tool, why in (("chromium", "the real-browser test"), ("bwrap", "the grading sandbox")):
        where = shutil.which(tool)
        print(
            f"[{'OK' if where else 'FAIL'}] {tool} for {why}: {where or 'missing (make system-deps)'}"
        )
        failures += where is None
    from helpers import fonts

    hangul = fonts.renders_hangul()
    failures += not hangul
    print(
        f"[{'OK' if hangul else 'FAIL'}] a font with Hangul for the Korean figures: "
        + (fonts.hangul_family() if hangul else "missing (pip install koreanize-matplotlib)")
    )
    print("all good" if failures == 0 else f"{failures} problem(s)")
    return 1 if failures else 0


# --------------------------------------------------------------------------- generate


def generate(ids: list[str], root: Path = ROOT) -> int:
    """Regenerate ``notebooks/<id>`` from ``source/<id>`` with nbgrader generate_assignment.

    A throw-away gradebook keeps the course's own gradebook untouched, so the output
    depends on the source alone. The table of where each graded function is taught
    (``helpers/teacher/exercises.json``) is written anew from ``source/`` as well.

    nbgrader builds every notebook into a scratch folder first; only when all of them are
    built do they replace those of ``notebooks/``, file by file (``teacher.files``): a
    build that fails leaves ``notebooks/`` as it was. Without ``ids``, a translation that
    cannot be built (an English cell added or changed since it was translated) does not
    stop the English notebooks: the translated notebook stays as it was, and the message
    names the cells that need a translation; the exit code is then 1 (not everything was
    rebuilt).
    """
    if not ids and not (root / "source").is_dir():
        print(f"no source/ folder in {root}", file=sys.stderr)
        return 2
    from helpers.i18n import assignment_id, split_assignment
    from helpers.teacher import files, translate

    # every code cell of source/ compiles, before anything is written (exercises.json is
    # read from all of them)
    every = [p.name for p in sorted((root / "source").glob("*")) if p.is_dir()]
    if not _sources_compile(root, every):
        return 2
    # the translated instructor notebooks first: source/<id>_<lang>/ from source/<id>/
    if ids:
        builds = [split_assignment(a) for a in ids if split_assignment(a)[1] != "en"]
    else:  # everything: every translation file of every English notebook
        builds = [
            (p.parent.name, p.suffixes[-2][1:])
            for p in sorted((root / "source").glob("*/*.*.yaml"))
            if p.name.startswith(p.parent.name + ".")
        ]
    lagging: dict[tuple[str, str], list[str]] = {}  # (base, lang) -> what is untranslated
    for base, code in builds:
        try:
            written = translate.write(base, code, root)
        except (ValueError, OSError) as exc:
            if ids:  # asked for by name: nothing else to build
                print(f"cannot build {base} in {code}: {exc}", file=sys.stderr)
                return 2
            lagging[(base, code)] = translate.problems(base, code, root) or [str(exc)]
            continue
        print(f"built {written.relative_to(root)}")
    stale = {assignment_id(base, code) for base, code in lagging}
    ids = ids or [
        p.name for p in sorted((root / "source").iterdir()) if p.is_dir() and p.name not in stale
    ]
    unknown = [i for i in ids if not (root / "source" / i / f"{i}.ipynb").exists()]
    if unknown:
        print(f"no source notebook for: {', '.join(unknown)}", file=sys.stderr)
        return 2
    if not _sources_compile(root, ids):  # the translations just built
        return 2
    scratch = Path(tempfile.mkdtemp(prefix=".generate-", dir=root))  # beside notebooks/
    try:
        with tempfile.TemporaryDirectory() as tmp:
            failed = _generate_assignments(root, ids, scratch.name, f"sqlite:///{tmp}/gradebook.db")
            if failed:
                print(
                    f"nbgrader generate_assignment {failed} failed: notebooks/ is left as it was",
                    file=sys.stderr,
                )
                return 1
        for assignment in ids:
            files.replace_folder(scratch / assignment, root / "notebooks" / assignment)
            print(f"generated notebooks/{assignment}/{assignment}.ipynb")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    table = root / "helpers" / "teacher" / "exercises.json"  # the course's own package
    if root == ROOT or table.is_file():
        from helpers.teacher import exercises

        print(f"wrote {exercises.write(root, table).relative_to(root)}")
    for (base, code), issues in lagging.items():
        aid = assignment_id(base, code)
        print(
            f"\n{aid} was not rebuilt: {len(issues)} cell(s) of "
            f"source/{base}/{base}.{code}.yaml need a translation first:\n"
            + "\n".join(f"  {issue}" for issue in issues)
            + f"\nnotebooks/{aid} stays as it was. Add the new and changed cells to the "
            f"translation file (marked TODO, the translated entries kept) with\n"
            f"  python -m helpers.teacher.translate skeleton {base} --lang {code} --write\n"
            "translate them, then generate again (docs/translating.md).",
            file=sys.stderr,
        )
    if lagging:
        stale_ids = ", ".join(sorted(assignment_id(b, c) for b, c in lagging))
        print(f"generate: not rebuilt: {stale_ids} (exit 1)", file=sys.stderr)
        return 1
    return 0


def _generate_assignments(root: Path, ids: list[str], release: str, db: str) -> str | None:
    """``nbgrader generate_assignment <id> --force`` for each id, in this process (nbgrader's
    own converter, the course's config; one start-up for them all instead of one process
    each): ``release`` is the folder of ``root`` it writes to, ``db`` a scratch gradebook.
    The first id that fails (its log printed), else None."""
    import logging

    from nbgrader.converters import GenerateAssignment, NbGraderException
    from nbgrader.coursedir import CourseDirectory

    from helpers.teacher.classroom.course import load_config, venv_on_path

    venv_on_path()  # nbgrader creates the gradebook with `alembic`
    config = load_config(root)
    config.CourseDirectory.release_directory = release
    config.CourseDirectory.db_url = db
    config.BaseConverter.force = True
    for assignment in ids:
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id = assignment
        converter = GenerateAssignment(coursedir=coursedir, config=config)
        converter.log.setLevel(logging.WARNING)
        try:
            converter.start()
        except NbGraderException:
            return assignment
    return None


def _sources_compile(root: Path, ids: list[str]) -> bool:
    """True when every code cell of ``source/<id>/*.ipynb`` compiles; else each cell that
    does not is printed (notebook, cell, line) and nothing is generated."""
    from helpers.teacher.notebook import syntax_errors

    errors = [
        line.replace(str(root) + os.sep, "")
        for assignment in ids
        for path in sorted((root / "source" / assignment).glob("*.ipynb"))
        for line in syntax_errors(path)
    ]
    if errors:
        print(
            "\n".join(errors) + "\nnothing generated: notebooks/ and exercises.json are left as "
            "they were; fix the source and generate again",
            file=sys.stderr,
        )
    return not errors


# --------------------------------------------------------------------------- system-deps


def _postgres_installed() -> bool:
    """PostgreSQL's server programs (Debian keeps them in /usr/lib/postgresql/<version>/bin)."""
    import glob

    return bool(glob.glob("/usr/lib/postgresql/*/bin/initdb")) or shutil.which("initdb") is not None


def _browser_has_hangul() -> bool:
    """A system font with Hangul (fontconfig), for the Korean notebooks in the browser test."""
    if shutil.which("fc-list") is None:
        return False
    out = subprocess.run(
        ["fc-list", ":lang=ko", "family"], capture_output=True, text=True, check=False
    )
    return bool(out.stdout.strip())


def system_deps() -> int:
    """Install Chromium, bubblewrap, PostgreSQL, a Korean font, npm and patchelf from Debian
    when missing, and configurable-http-proxy from npm (root only; else explain). PostgreSQL
    serves the tests of a PostgreSQL gradebook (``--db``); the font, the Korean notebooks in
    the browser test; npm and patchelf, the course's hub (``helpers.teacher.classroom.hub``)."""
    missing = [
        pkg
        for pkg, tool in (
            ("chromium", "chromium"),
            ("bubblewrap", "bwrap"),
            ("npm", "npm"),  # configurable-http-proxy of the course's hub
            ("patchelf", "patchelf"),  # the hub's copy of an interpreter others cannot run
        )
        if shutil.which(tool) is None
    ]
    if not _postgres_installed():
        missing.append("postgresql")
    if not _browser_has_hangul():
        missing.append("fonts-nanum")  # the browser's Hangul (the figures have their own)
    wanted = ["chromium", "bubblewrap", "npm", "patchelf", "postgresql", "fonts-nanum"]
    found = [p for p in wanted if p not in missing]
    print(f"system-deps: installed: {', '.join(found) or 'none'}")
    if not missing:
        code = _hub_proxy() or _axe()
        if code == 0:
            print(
                "system-deps: the hub's proxy (configurable-http-proxy) and axe-core are installed"
            )
        return code
    print(f"system-deps: missing: {' '.join(missing)}")
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        print(
            f"not installed: {' '.join(missing)}; as root on Debian run "
            f"`apt-get install -y {' '.join(missing)}` (the tests that need them are skipped)"
        )
        return 1
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], env=env, check=False)
    proc = subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
        env=env,
        check=False,
    )
    return proc.returncode or _hub_proxy() or _axe()


def _hub_proxy() -> int:
    """configurable-http-proxy from npm into ``.proxy/`` of the course (the hub's; as root,
    like the Debian packages)."""
    if not helpers.has_teacher():
        return 0
    from helpers.teacher.classroom import hub

    if hub.proxy_command().exists():
        return 0
    if os.geteuid() != 0:
        print(f"not installed: {hub.PROXY_PACKAGE} (npm, as root; the hub test is skipped)")
        return 1
    try:
        hub.install_proxy()
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


# axe-core, the accessibility engine tests/test_accessibility.py runs in the browser: from
# npm into build/axe/ of the course (its own copy, never a CDN), at the version the
# course's numbers were measured with.
AXE_PACKAGE = "axe-core@4.14.1"
AXE_DIR = ROOT / "build" / "axe"


def _axe() -> int:
    """``npm install --prefix build/axe axe-core`` unless it is there (no root needed)."""
    if (AXE_DIR / "node_modules" / "axe-core" / "axe.min.js").exists():
        return 0
    npm = shutil.which("npm")
    if npm is None:
        print(f"not installed: {AXE_PACKAGE} (needs npm; the accessibility test is skipped)")
        return 1
    proc = subprocess.run(
        [npm, "install", "--prefix", str(AXE_DIR), "--no-audit", "--no-fund", AXE_PACKAGE],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        print(f"npm install {AXE_PACKAGE} failed:\n{proc.stdout}{proc.stderr}", file=sys.stderr)
    return proc.returncode


# --------------------------------------------------------------------------- lab


def lab_command(lang: str = "en", root: Path = ROOT) -> list[str]:
    """The JupyterLab command that opens the course on notebook 01 in ``lang``."""
    from helpers.i18n import assignment_id

    first = assignment_id(ASSIGNMENTS[0], lang)
    cmd = [_bin("jupyter"), "lab", f"--notebook-dir={root / 'notebooks'}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    return [*cmd, str(root / "notebooks" / first / f"{first}.ipynb")]


def _port(text: str) -> int:
    """A TCP port number (argparse type)."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a number from 1 to 65535, got {text!r}")
    return port


def grade_ui_command(root: Path = ROOT, port: int | None = None) -> list[str]:
    """JupyterLab on the course folder, opening nbgrader's Formgrader: its links to
    ``source/``, ``autograded/`` and ``feedback/`` resolve there (``lab``'s root is
    ``notebooks/``). Run it in the course folder, where nbgrader finds
    ``nbgrader_config.py`` and ``gradebook.db``. The server sends the Formgrader's pages
    with a Content-Security-Policy (``helpers.teacher.pages``); ``port``: that port or
    none (no other port tried)."""
    from helpers.teacher import pages

    cmd = [_bin("jupyter"), "lab", f"--notebook-dir={root}", "--LabApp.default_url=/formgrader"]
    cmd += pages.server_args()
    if port is not None:
        cmd += [f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    return cmd


# --------------------------------------------------------------------------- learner-setup

COURSE_ID = "positional-encodings"
LEARNER_CONFIG = Path.home() / ".jupyter" / "nbgrader_config.py"


def learner_setup(
    exchange: Path, course_id: str = COURSE_ID, config: Path | None = None, force: bool = False
) -> Path:
    """Write a learner's nbgrader configuration: the course id and the exchange folder.

    With it, ``nbgrader fetch_assignment 01_order`` and ``nbgrader submit 01_order`` work
    from any folder; nbgrader knows the learner by their account name on this machine. An
    existing file is kept unless ``force``.
    """
    config = Path(config) if config is not None else LEARNER_CONFIG
    if not str(course_id).strip() or any(c in str(course_id) for c in '"\\\n'):
        raise ValueError(f"course_id must be a plain name, got {course_id!r}")
    if config.exists() and not force:
        raise ValueError(f"config already exists: {config} (keep it, or pass --force)")
    exchange = Path(exchange).resolve()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        "# nbgrader configuration of a learner of the positional-encodings course,\n"
        "# written by `python -m helpers learner-setup`.\n"
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.course_id = {str(course_id)!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n",
        encoding="utf-8",
    )
    return config


# --------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m helpers`` (every subcommand of this installation)."""
    parser = argparse.ArgumentParser(
        prog="python -m helpers",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("doctor", help="check the environment")
    lab = sub.add_parser("lab", help="open the course in JupyterLab (notebook 01)")
    lab.add_argument(
        "--lang", default="en", choices=sorted(LANGUAGES), help="en (default) or ko (한국어)"
    )
    sub.add_parser("system-deps", help="install chromium, bubblewrap and postgresql (Debian, root)")
    setup = sub.add_parser(
        "learner-setup", help="a learner's nbgrader config: the course id and the exchange"
    )
    setup.add_argument("--exchange", type=Path, required=True, help="the exchange folder")
    setup.add_argument("--course-id", default=COURSE_ID, help=f"default: {COURSE_ID}")
    setup.add_argument("--config", type=Path, default=None, help=f"default: {LEARNER_CONFIG}")
    setup.add_argument("--force", action="store_true", help="replace an existing config")
    if helpers.has_teacher():
        gen = sub.add_parser("generate", help="regenerate learner notebooks from source/")
        gen.add_argument(
            "ids", nargs="*", help=f"assignment ids (default: all of {', '.join(ASSIGNMENTS)})"
        )
        ui = sub.add_parser("grade-ui", help="the Formgrader: JupyterLab on the course folder")
        ui.add_argument("--port", type=_port, default=None, help="its port (default: 8888 or next)")
        chk = sub.add_parser("check", help="grade a saved notebook as autograde would")
        chk.add_argument("notebook", type=Path)
        chk.add_argument("--seed", type=int, default=None, help="replay the random cases of a seed")
        from helpers.teacher.classroom.commands import add_commands

        add_commands(sub)
    return parser


def exit_now(code: int | None) -> None:
    """End ``python -m helpers`` with ``code``. Python's own finalization of the 1,200 modules
    a teacher's command loads (nbgrader, nbconvert, SQLAlchemy, numpy) takes about 0.3 s:
    when no other thread runs, the exit handlers run (the pool's, logging's, the spares'),
    the output is flushed, and the process ends without it."""
    import threading

    if threading.active_count() > 1 or "nbgrader" not in sys.modules:
        raise SystemExit(code)
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code if isinstance(code, int) else (0 if code is None else 1))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.started = STARTED  # a command's time (autograde's summary) counts from here

    if args.command == "doctor":
        return doctor()
    if args.command == "lab":
        cmd = lab_command(args.lang)
        print(" ".join(cmd), flush=True)
        return subprocess.call(cmd, env=_env_with_venv())
    if args.command == "system-deps":
        return system_deps()
    if args.command == "learner-setup":
        try:
            written = learner_setup(args.exchange, args.course_id, args.config, args.force)
        except (ValueError, OSError) as exc:
            print(f"learner-setup: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {written}: now `nbgrader fetch_assignment 01_order` in any folder")
        return 0
    if args.command == "generate":
        here = Path.cwd()  # a course folder of its own (a copy of the course), else this one
        course = (
            here if (here / "nbgrader_config.py").is_file() and (here / "source").is_dir() else ROOT
        )
        return generate(args.ids, course)
    if args.command == "grade-ui":
        from helpers.teacher.classroom.course import course_root

        try:  # the course the teacher is in, as every teacher's command finds it
            course = course_root(None)
        except ValueError as exc:
            print(f"grade-ui: {exc}", file=sys.stderr)
            return 2
        cmd = grade_ui_command(course, port=args.port)
        print(" ".join(cmd), flush=True)
        return subprocess.call(cmd, cwd=course, env=_env_with_venv())
    if args.command == "check":
        from helpers.teacher.isolated import check_command

        return check_command(args.notebook, seed=args.seed)
    from helpers.teacher.classroom.commands import run_command

    return run_command(args)

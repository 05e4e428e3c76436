"""The teacher's subcommands of ``python -m helpers``: parse the arguments, call the step.

``release``, ``collect``, ``autograde``, ``feedback``, ``grades`` (with ``--format``: ``lms``),
``report``, ``learner-build``, ``hub`` and ``hub-stop``; what each does lives in the module
that owns it (``steps``, ``grading``, ``grades``, ``lms``, ``report``, ``hub``,
``helpers.teacher.learner_build``). An error becomes one line and exit code 2.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from helpers.teacher.classroom import hub, lms, privacy
from helpers.teacher.classroom import report as class_report
from helpers.teacher.classroom.course import check_gradebook, course_root, exchange_root
from helpers.teacher.classroom.grades import export_grades
from helpers.teacher.classroom.grading import autograde
from helpers.teacher.classroom.steps import collect, feedback, release

COMMANDS = ("release", "collect", "autograde", "feedback", "grades", "report", "learner-build")


def add_commands(sub) -> None:
    """Add the teacher's subcommands to ``python -m helpers``'s argument parser."""

    def common(p, exchange: bool) -> None:
        p.add_argument("ids", nargs="*", help="assignment ids (default: all of source/)")
        p.add_argument("--course", type=Path, default=None, help="course folder (default: repo)")
        p.add_argument(
            "--db",
            default=None,
            help="gradebook as an SQLAlchemy URL, e.g. postgresql://user@host/db "
            "(default: gradebook.db in the course)",
        )
        if exchange:
            p.add_argument(
                "--exchange", type=Path, default=None, help="exchange folder (PE_COURSE_EXCHANGE)"
            )

    common(sub.add_parser("release", help="release notebooks/ to the exchange"), True)
    common(sub.add_parser("collect", help="collect submissions from the exchange"), True)
    auto = sub.add_parser("autograde", help="autograde every learner, in parallel")
    common(auto, False)
    auto.add_argument("--students", default="", help="comma-separated ids (default: all)")
    auto.add_argument("--jobs", type=int, default=None, help="parallel learners (default: cores)")
    auto.add_argument("--no-progress", action="store_true", help="no progress bar")
    auto.add_argument(
        "--unreleased",
        action="store_true",
        help="also grade an assignment never released (not in the gradebook): by default "
        "that is refused, as a typo would add a column of zeros",
    )
    auto.add_argument(
        "--scheduler",
        default=None,
        help="grade on a Dask cluster: its scheduler's address (tcp://host:8786), or local:N "
        "for a LocalCluster of N workers (default: a local process pool of --jobs)",
    )
    common(sub.add_parser("feedback", help="generate feedback and release it"), True)
    grades = sub.add_parser("grades", help="export the grades as CSV")
    common(grades, False)
    grades.add_argument(
        "--out", type=Path, default=None, help="CSV file (default: grades.csv of the course)"
    )
    lms.add_arguments(grades)
    class_report.add_command(sub)
    hub.add_commands(sub)
    inbound = sub.add_parser("inbound", help="the exchange's inbound entries: list, remove, purge")
    inbound.add_argument("action", choices=("list", "remove", "purge"))
    inbound.add_argument("entries", nargs="*", help="entry names (remove)")
    inbound.add_argument("--course", type=Path, default=None, help="course folder")
    inbound.add_argument("--exchange", type=Path, default=None, help="exchange folder")
    build = sub.add_parser("learner-build", help="a wheel of helpers without the solutions")
    build.add_argument("--out", type=Path, default=Path("dist"), help="output folder")


def run_command(args) -> int:
    """Run one of ``COMMANDS`` from parsed arguments; errors become one line and exit code 2."""
    if args.command in hub.COMMANDS:
        return hub.run_command(args)
    if args.command == "inbound":  # the exchange plug-ins' module loads nbgrader: only here
        from helpers.teacher.classroom import exchange

        return exchange.run_command(args)
    try:
        if args.command == "learner-build":
            from helpers.teacher import learner_build

            print(learner_build.build(args.out))
            return 0
        course = course_root(args.course)
        # nothing made yet; release fills a new gradebook, and so does autograde --unreleased
        fills = args.command == "release" or getattr(args, "unreleased", False)
        check_gradebook(course, args.db, create=fills)
        private(course)
        try:
            _step(course, args)
        finally:
            privacy.secure(course)
    except (ValueError, RuntimeError) as exc:
        print(f"{args.command}: {exc}", file=sys.stderr)
        return 2
    return 0


def private(course: Path) -> None:
    """Close the learner data of the course to other accounts, and warn loudly (with the
    command that fixes it) while they can read the teacher's side (``privacy``)."""
    privacy.secure(course)
    said = privacy.warning(course)
    if said:
        print(said, file=sys.stderr)


def _step(course: Path, args) -> None:
    """Run the teacher's step the parsed arguments name."""
    if args.command in ("release", "collect"):
        step = release if args.command == "release" else collect
        step(course, args.ids, exchange_root(args.exchange), args.db)
    elif args.command == "feedback":
        has_exchange = args.exchange or os.environ.get("PE_COURSE_EXCHANGE")
        exchange = exchange_root(args.exchange) if has_exchange else None
        feedback(course, args.ids, exchange, args.db)
    elif args.command == "autograde":
        students = [s for s in args.students.split(",") if s] or None
        report = autograde(
            course,
            args.ids,
            students,
            args.jobs,
            not args.no_progress,
            db=args.db,
            scheduler=args.scheduler,
            unreleased=args.unreleased,
            started=getattr(args, "started", None),
        )
        print(report.summary())
    elif args.command == "report":
        class_report.run(course, args)
    elif args.command == "grades" and args.format:
        print("\n".join(lms.run(course, args).lines()))
    elif args.command == "grades":
        out = Path.cwd() / args.out if args.out else course / "grades.csv"
        rows = export_grades(course, out, args.ids, args.db)
        print(f"wrote {len(rows)} learner(s) to {out}")
        columns = [k for k in (rows[0] if rows else {}) if f"{k} language" in rows[0]]
        print(
            f"grades: {len(rows)} learner(s), {len(columns)} assignment(s) "
            f"({', '.join(columns) or 'none'})"
        )

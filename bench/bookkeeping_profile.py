"""The bookkeeping after grading, profiled: settling the written answers, counting what
waits, reading the scores back, and the exports that read the same gradebook.

A class is generated as ``bench.class_autograde`` does (``--learners`` x every notebook, the
same broken-on-purpose pattern) and autograded once; then each step of the bookkeeping runs
under ``cProfile`` on that gradebook and its time is printed (cProfile inflates every figure
alike), with the load average. ``--keep DIR`` keeps the graded class there and ``--course DIR``
profiles a class kept before instead of grading one (so that two versions of the code can be
profiled on the same gradebook).

    .venv/bin/python -m bench.bookkeeping_profile --learners 10 --keep /tmp/graded-class
    .venv/bin/python -m bench.bookkeeping_profile --course /tmp/graded-class
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

from helpers.teacher.classroom import lms, written
from helpers.teacher.classroom.course import assignment_ids, copy_course, course_id, db_url
from helpers.teacher.classroom.grades import export_grades, notebook_scores
from helpers.teacher.classroom.grading import autograde
from helpers.teacher.classroom.steps import register

ROOT = Path(__file__).resolve().parent.parent


def profiled(label: str, call, top: int) -> float:
    """Run ``call`` under cProfile; print its time and its ``top`` functions by total time."""
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    call()
    prof.disable()
    seconds = time.perf_counter() - t0
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    calls = sum(v[1] for v in stats.stats.values())
    print(f"{label:<28} {seconds:8.2f} s  ({calls} function calls)")
    if top:
        lines = [ln for ln in out.getvalue().splitlines() if ln.strip()][-top:]
        print("\n".join(f"    {ln}" for ln in lines))
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--course", type=Path, default=None, help="a graded class to profile")
    parser.add_argument("--keep", type=Path, default=None, help="keep the graded class here")
    parser.add_argument("--top", type=int, default=0, help="functions shown per step")
    parser.add_argument("--seed", type=int, default=20261129)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pe-bookkeeping-") as tmp:
        if args.course is None:
            from bench.class_autograde import build_class

            ids = assignment_ids(ROOT)
            learners = [f"learner{i:03d}" for i in range(args.learners)]
            course = copy_course(ROOT, Path(tmp) / "class", ids)
            build_class(course, learners, ids, args.seed)
            register(course, ids)
            report = autograde(course, ids, jobs=args.jobs, progress=False)
            print(report.summary().splitlines()[1])
            if args.keep is not None:
                shutil.rmtree(args.keep, ignore_errors=True)
                shutil.copytree(course, args.keep)
        else:
            course = Path(tmp) / "class"
            shutil.copytree(args.course, course)
            course.joinpath("nbgrader_config.py").write_text(
                course.joinpath("nbgrader_config.py")
                .read_text(encoding="utf-8")
                .replace(str(args.course), str(course)),
                encoding="utf-8",
            )
        ids = [p.name for p in sorted((course / "source").iterdir()) if p.is_dir()]
        ids = [a for a in ids if any(course.glob(f"submitted/*/{a}"))]
        learners = sorted(p.name for p in (course / "submitted").iterdir() if p.is_dir())
        url, cid = db_url(course), course_id(course)
        print(
            f"bookkeeping of {len(learners)} learners x {len(ids)} notebooks, cProfile on; "
            f"load average {os.getloadavg()[0]:.2f}"
        )
        total = 0.0
        total += profiled(
            "written.settle", lambda: written.settle(url, cid, ids, learners), args.top
        )
        total += profiled(
            "written.waiting", lambda: written.waiting(url, cid, ids, learners), args.top
        )
        total += profiled(
            "grades.notebook_scores", lambda: notebook_scores(course, ids, learners), args.top
        )
        print(f"{'autograde bookkeeping':<28} {total:8.2f} s")
        profiled(
            "grades (export_grades)",
            lambda: export_grades(course, Path(tmp) / "grades.csv", ids),
            args.top,
        )
        profiled("lms.gradebook_entries", lambda: lms.gradebook_entries(course, ids), args.top)
        print(f"load average after {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

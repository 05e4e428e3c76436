"""A small class autograded as a teacher does it: ``python -m helpers autograde`` from a shell.

One learner's one notebook (a teacher regrading after a fix), then one learner's first six
notebooks, each through the command line as a new process (Python's start, nbgrader's
import, the workers' start all count), in a course whose assignments are already
registered (as after a first autograde). For each run it prints the wall-clock time of the
command, the time the summary says, the progress bar's first estimate of the time left and
how long the grading really took after it (the bar's own clock), and the load average (the machine may be shared).

    .venv/bin/python -m bench.small_autograde [--repeat 3] [--jobs 2]

It also prints the CPU time (user and system) of every process the command started, the
sandboxes and the workers' server included (this process adopts the orphans): on a shared
machine the wall-clock time follows the load, the CPU time much less. A process the
command leaves running is reported.

Targets (measured, not asserted): one notebook at most 2 s, six at most 4 s, on a quiet
2-core machine.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from helpers.i18n import split_assignment
from helpers.teacher.classroom.course import assignment_ids, copy_course
from helpers.teacher.classroom.steps import register, wal
from tests import rehearsal

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {1: 2.0, 6: 4.0}  # notebooks -> seconds
STUDENT = "learner000"


def _clock(text: str) -> float:
    """Seconds of the progress bar's ``1m05s`` or ``7s``."""
    found = re.fullmatch(r"(?:(\d+)m)?(\d+)s", text)
    return 0.0 if not found else 60 * int(found[1] or 0) + int(found[2])


def _adopt_orphans() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux), so that the CPU
    time of every process a run starts (the workers' server, the sandboxes) is counted."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _reap(limit_s: float = 30.0) -> int:
    """Wait for the descendants still running after the command ended; how many were left
    after ``limit_s`` (a process the command left behind)."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 0
        if pid == 0:
            time.sleep(0.05)
    return len([p for p in Path("/proc").iterdir() if p.name.isdigit() and _child_of_me(p)])


def _child_of_me(proc: Path) -> bool:
    try:
        return proc.joinpath("stat").read_text().rsplit(")", 1)[1].split()[1] == str(os.getpid())
    except (OSError, IndexError):
        return False


def _cpu() -> float:
    """User and system CPU seconds of the waited-for descendants so far."""
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def wrong_scores(course: Path, ids: list[str]) -> list[str]:
    """Where the scores of ``autograde_report.csv`` differ from the gradebook's (read through
    nbgrader's own ``Gradebook``, one notebook at a time), or from the answers (the learner's
    are the source's solutions: every code point). Empty: they agree."""
    from nbgrader.api import Gradebook

    from bench.class_autograde import code_points
    from helpers.teacher.classroom.course import course_id, db_url
    from helpers.teacher.classroom.summary import REPORT_NAME, read_report

    rows = {r["assignment"]: r for r in read_report(course / REPORT_NAME)}
    problems = []
    with Gradebook(db_url(course), course_id(course)) as gb:
        for a in ids:
            said = float(rows[a]["score"]) if a in rows and rows[a]["score"] else None
            got = float(gb.find_submission_notebook(a, a, STUDENT).score)
            want = code_points(course, a)
            if said is None or abs(said - got) > 1e-6 or abs(got - want) > 1e-6:
                problems.append(f"{a}: report {said}, gradebook {got}, answers {want}")
    return problems


def run_once(course: Path, ids: list[str], jobs: int) -> dict:
    """One ``autograde`` of ``ids`` for the one learner, timed from outside."""
    cmd = [sys.executable, "-m", "helpers", "autograde", *ids, "--course", str(course)]
    cmd += ["--jobs", str(jobs)]
    load = os.getloadavg()[0]
    cpu0 = _cpu()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=course, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    left = _reap()
    cpu = _cpu() - cpu0
    if proc.returncode != 0:
        raise SystemExit(f"autograde failed:\n{proc.stdout}\n{proc.stderr}")
    said = re.search(r"graded (\d+)/(\d+) notebooks .* in ([\d.]+) s", proc.stdout)
    graded, total, seconds = int(said[1]), int(said[2]), float(said[3])
    estimate, last = None, None
    for line in proc.stderr.splitlines():  # the first line with an estimate, and its clock
        found = re.search(r"(\d+)/(\d+) notebooks\s+(\S+)\s+~(\S+) left", line)
        if found and int(found[1]) < int(found[2]) and estimate is None:
            estimate = (_clock(found[3]), _clock(found[4]))
        if found and int(found[1]) == int(found[2]):
            last = _clock(found[3])  # the bar's clock when the last notebook was graded
    if estimate is not None and last is not None:  # (estimate's clock, left, really left)
        estimate = (*estimate, last - estimate[0])
    return {
        "wall_s": wall,
        "summary_s": seconds,
        "graded": f"{graded}/{total}",
        "estimate": estimate,
        "load": load,
        "cpu_s": cpu,
        "left_running": left,
        "wrong": wrong_scores(course, ids),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    if not _adopt_orphans():
        print("(the CPU time of processes that outlive the command is not counted here)")
    # one edition each (a learner takes one language): six notebooks are six assignments
    ids = [a for a in assignment_ids(ROOT) if split_assignment(a)[1] == "en"][:6]
    with tempfile.TemporaryDirectory(prefix="pe-small-") as tmp:
        course = copy_course(ROOT, Path(tmp) / "class", ids)
        for assignment in ids:
            rehearsal.make_submission(
                course / "notebooks" / assignment / f"{assignment}.ipynb",
                course / "source" / assignment / f"{assignment}.ipynb",
                course / "submitted" / STUDENT / assignment / f"{assignment}.ipynb",
            )
        register(course, ids)
        wal(course, None)
        run_once(course, ids[:1], args.jobs)  # the first grading makes the gradebook's rows
        wrong = 0
        for n in (1, 6):
            runs = [run_once(course, ids[:n], args.jobs) for _ in range(args.repeat)]
            walls = [r["wall_s"] for r in runs]
            print(
                f"{n} notebook(s): wall {statistics.median(walls):.2f} s median of "
                f"{len(runs)} ({', '.join(f'{w:.2f}' for w in walls)}; target <= "
                f"{TARGETS[n]:.0f} s: {'met' if statistics.median(walls) <= TARGETS[n] else 'MISSED'})"
            )
            for r in runs:
                est = r["estimate"]
                said = (
                    f"first estimate at {est[0]:.0f} s of the bar: ~{est[1]:.0f} s left, "
                    f"really {est[2]:.0f} s (the bar's clock counts whole seconds)"
                    if est
                    else "no estimate shown"
                )
                print(
                    f"  wall {r['wall_s']:.2f} s, summary says {r['summary_s']:.2f} s "
                    f"(start-up and exit outside it: {r['wall_s'] - r['summary_s']:.2f} s), "
                    f"graded {r['graded']}; {said}; load average {r['load']:.2f}"
                )
                print(
                    f"    CPU time of every process of the run: {r['cpu_s']:.2f} s"
                    + (
                        f"; {r['left_running']} PROCESS(ES) LEFT RUNNING"
                        if r["left_running"]
                        else ""
                    )
                )
                print(
                    f"    GRADES WRONG: {'; '.join(r['wrong'])}"
                    if r["wrong"]
                    else "    scores: the report's are the gradebook's, every code point"
                )
                wrong += bool(r["wrong"])
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

"""A small class autograded as a teacher does it: ``python -m helpers autograde`` from a shell.

One learner's one notebook (a teacher regrading after a fix), then one learner's first six
notebooks, each through the command line as a new process (Python's start, nbgrader's
import, the workers' start all count), in a course whose assignments are already
registered (as after a first autograde). For each run it prints the wall-clock time of the
command, the time the summary says, the progress bar's first estimate of the time left and
how long the rest really took, and the load average (the machine may be shared).

    .venv/bin/python -m bench.small_autograde [--repeat 3] [--jobs 2]

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

from helpers.teacher.classroom.course import assignment_ids, copy_course
from helpers.teacher.classroom.steps import register, wal
from tests import rehearsal

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {1: 2.0, 6: 4.0}  # notebooks -> seconds


def _clock(text: str) -> float:
    """Seconds of the progress bar's ``1m05s`` or ``7s``."""
    found = re.fullmatch(r"(?:(\d+)m)?(\d+)s", text)
    return 0.0 if not found else 60 * int(found[1] or 0) + int(found[2])


def run_once(course: Path, ids: list[str], jobs: int) -> dict:
    """One ``autograde`` of ``ids`` for the one learner, timed from outside."""
    cmd = [sys.executable, "-m", "helpers", "autograde", *ids, "--course", str(course)]
    cmd += ["--jobs", str(jobs)]
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=course, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"autograde failed:\n{proc.stdout}\n{proc.stderr}")
    said = re.search(r"graded (\d+)/(\d+) notebooks .* in ([\d.]+) s", proc.stdout)
    graded, total, seconds = int(said[1]), int(said[2]), float(said[3])
    estimate = None
    for line in proc.stderr.splitlines():  # the first line with an estimate, and its clock
        found = re.search(r"(\d+)/(\d+) notebooks\s+(\S+)\s+~(\S+) left", line)
        if found and int(found[1]) < int(found[2]):
            estimate = (_clock(found[3]), _clock(found[4]))
            break
    return {
        "wall_s": wall,
        "summary_s": seconds,
        "graded": f"{graded}/{total}",
        "estimate": estimate,
        "load": load,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    ids = assignment_ids(ROOT)[:6]
    with tempfile.TemporaryDirectory(prefix="pe-small-") as tmp:
        course = copy_course(ROOT, Path(tmp) / "class", ids)
        for assignment in ids:
            rehearsal.make_submission(
                course / "notebooks" / assignment / f"{assignment}.ipynb",
                course / "source" / assignment / f"{assignment}.ipynb",
                course / "submitted" / "learner000" / assignment / f"{assignment}.ipynb",
            )
        register(course, ids)
        wal(course, None)
        run_once(course, ids[:1], args.jobs)  # the first grading makes the gradebook's rows
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
                    f"first estimate at {est[0]:.0f} s: ~{est[1]:.0f} s left, really "
                    f"{r['summary_s'] - est[0]:.1f} s"
                    if est
                    else "no estimate shown"
                )
                print(
                    f"  wall {r['wall_s']:.2f} s, summary says {r['summary_s']:.2f} s, "
                    f"graded {r['graded']}; {said}; load average {r['load']:.2f}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())

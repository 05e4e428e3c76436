"""A class autograded in parallel: N learners x every notebook of the course (source/).

Submissions are generated from the course itself: each learner's notebooks are the release
notebooks filled with the source solutions, then broken on purpose in a fixed pattern
(learner i: all correct when i % 4 == 0; one function left as a stub when 1; one function
returning wrong values when 2; half of the functions stubs when 3). The whole class is
autograded with ``helpers.teacher.classroom.autograde`` (``--jobs`` learners at once, default: the
number of cores), through real nbgrader and the sandboxed kernel.

Serial grading of the full class would take as long again as the benchmark itself, so the
serial time is measured on a sample (``--serial-sample`` learners, one job) and extrapolated
per notebook; the output says so. The sample's grades must equal the parallel run's.

    .venv/bin/python -m bench.class_autograde [--learners 100] [--jobs 2] [--serial-sample 4]

Target: the class of 100 learners in at most 10 minutes (set when the course had 8
notebooks). ``--ids`` narrows the class to some assignments.
Results also go to artifacts/class_autograde.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from helpers.teacher import classroom
from tests import rehearsal

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 600.0


def plan(i: int, answers: list[str], rng: random.Random) -> tuple[list[str], str]:
    """Which answer cells learner ``i`` gets wrong, and how."""
    kind = i % 4
    if kind == 0 or not answers:
        return [], "stub"
    if kind == 1:
        return [rng.choice(answers)], "stub"
    if kind == 2:
        return [rng.choice(answers)], "wrong"
    return rng.sample(answers, max(1, len(answers) // 2)), "stub"


def build_class(course: Path, learners: list[str], ids: list[str], seed: int) -> None:
    """Write ``submitted/<learner>/<id>/<id>.ipynb`` for every learner and notebook."""
    rng = random.Random(seed)
    for i, student in enumerate(learners):
        for assignment in ids:
            source = course / "source" / assignment / f"{assignment}.ipynb"
            broken, how = plan(i, rehearsal.answer_ids(source), rng)
            rehearsal.make_submission(
                course / "notebooks" / assignment / f"{assignment}.ipynb",
                source,
                course / "submitted" / student / assignment / f"{assignment}.ipynb",
                broken=broken,
                how=how,
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--serial-sample", type=int, default=4, help="learners graded serially")
    parser.add_argument("--ids", default="", help="comma-separated assignments (default: all)")
    parser.add_argument("--seed", type=int, default=20261129)
    args = parser.parse_args(argv)
    if args.learners < 1:
        raise SystemExit(f"--learners must be >= 1, got {args.learners}")
    ids = classroom.assignment_ids(ROOT, [i for i in args.ids.split(",") if i])
    learners = [f"learner{i:03d}" for i in range(args.learners)]
    sample = learners[: max(0, min(args.serial_sample, args.learners))]

    with tempfile.TemporaryDirectory(prefix="pe-bench-") as tmp:
        course = classroom.copy_course(ROOT, Path(tmp) / "class", ids)
        t0 = time.perf_counter()
        build_class(course, learners, ids, args.seed)
        classroom.register(course, ids)
        print(
            f"{len(learners)} learners x {len(ids)} notebooks generated and registered in "
            f"{time.perf_counter() - t0:.1f} s",
            flush=True,
        )

        report = classroom.autograde(course, ids, jobs=args.jobs)
        total = report.seconds
        per_nb = {a: [t.seconds for t in report.tasks if t.assignment == a and t.ok] for a in ids}

        serial_per_nb = None
        same = None
        if sample:
            scourse = classroom.copy_course(ROOT, Path(tmp) / "serial", ids)
            for student in sample:
                shutil.copytree(course / "submitted" / student, scourse / "submitted" / student)
            classroom.register(scourse, ids)
            t1 = time.perf_counter()
            sreport = classroom.autograde(scourse, ids, jobs=1, progress=False)
            serial_time = time.perf_counter() - t1
            serial_per_nb = serial_time / (len(sample) * len(ids))
            same = all(sreport.scores[s] == report.scores[s] for s in sample)

    print()
    print(report.summary().splitlines()[0])
    print(
        f"class: {len(learners)} learners x {len(ids)} notebooks = {len(report.tasks)} "
        f"submissions, {args.jobs} parallel jobs on {os.cpu_count()} cores"
    )
    print(
        f"total time (parallel, including registering the assignments): {total:.1f} s "
        f"({total / 60:.1f} min; target <= {TARGET_S / 60:.0f} min: "
        f"{'met' if total <= TARGET_S else 'MISSED'})"
    )
    print("per-notebook median grading time inside a worker:")
    for a in ids:
        if per_nb[a]:
            print(f"  {a:<12} {statistics.median(per_nb[a]):6.2f} s  ({len(per_nb[a])} graded)")
    graded = sum(t.ok for t in report.tasks)
    print(
        f"graded {graded}/{len(report.tasks)}; mean score "
        f"{statistics.mean(sum(r.values()) for r in report.scores.values()):.2f} of "
        f"{sum(report.max_scores.values()):.0f}"
    )
    result = {
        "learners": len(learners),
        "notebooks": len(ids),
        "jobs": args.jobs,
        "cores": os.cpu_count(),
        "total_s": round(total, 2),
        "median_s": {a: round(statistics.median(v), 3) for a, v in per_nb.items() if v},
        "graded": graded,
        "sandboxed": report.sandboxed,
        "load_average_after": os.getloadavg(),
    }
    if serial_per_nb is not None:
        serial_total = serial_per_nb * len(report.tasks)
        print(
            f"serial: {serial_per_nb:.2f} s per notebook measured on {len(sample)} learners "
            f"(1 job), extrapolated to the class: {serial_total:.0f} s; "
            f"speed-up {serial_total / total:.2f}x with {args.jobs} jobs"
        )
        print(f"same grades serial and parallel on the sample: {same}")
        result.update(
            serial_sample=len(sample),
            serial_per_notebook_s=round(serial_per_nb, 3),
            serial_extrapolated_s=round(serial_total, 1),
            speedup=round(serial_total / total, 3),
            same_grades=same,
        )
    out = ROOT / "artifacts" / "class_autograde.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0 if same in (None, True) and graded == len(report.tasks) else 1


if __name__ == "__main__":
    sys.exit(main())

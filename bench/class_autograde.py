"""A class autograded in parallel: N learners x every notebook of the course (source/).

Submissions are generated from the course itself: each learner's notebooks are the release
notebooks filled with the source solutions, then broken on purpose in a fixed pattern
(learner i: all correct when i % 4 == 0; one function left as a stub when 1; one function
returning wrong values when 2; half of the functions stubs when 3). The whole class is
autograded with ``helpers.teacher.classroom.autograde`` (``--jobs`` learners at once, default: the
number of cores), through real nbgrader and the course's isolated grader (no kernel).

In the same run, a sample of the class (``--plain-sample`` learners) is graded by plain
nbgrader: its own ``Execute`` runs every cell in a kernel, and the hidden tests are the same
checks asserted inside that kernel (``grade("f")`` becomes
``helpers.teacher.kernel.grade("f", globals())``, which raises on a wrong answer), the way
bench/grading_overhead.py builds its plain variant. The output gives the time per notebook
of both, their ratio, and whether the sample's grades agree.

Serial grading is measured on a sample too (``--serial-sample`` learners, one job,
extrapolated per notebook; the output says so); its grades must equal the parallel run's.

    .venv/bin/python -m bench.class_autograde [--learners 100] [--jobs 2] [--plain-sample 8]

Target: at most 0.3 s per submission, i.e. 240 s for 100 learners x 8 notebooks (30 s per
notebook of the course). Results also go to artifacts/class_autograde.json, with the load
average before and after (the machine may be shared: the figures are wall-clock).
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

from helpers.teacher.classroom.course import assignment_ids, copy_course
from helpers.teacher.classroom.grading import autograde
from helpers.teacher.classroom.steps import register
from tests import rehearsal

ROOT = Path(__file__).resolve().parent.parent
TARGET_PER_SUBMISSION_S = 0.3  # 240 s for 100 x 8

PLAIN_CONFIG = '''"""Plain nbgrader: its default autograde preprocessors, hidden tests asserted in the kernel."""
c = get_config()  # noqa: F821
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "positional-encodings-plain"
c.CourseDirectory.release_directory = "notebooks"
c.Execute.timeout = 120
c.OverwriteCells.add_missing_cells = True
'''
PLAIN_HIDDEN = "from helpers.teacher.kernel import grade as _grade\n_grade({name}, globals())"


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


def plain_course(dest: Path, ids: list[str]) -> Path:
    """The course for plain nbgrader: hidden ``grade("f")`` become in-kernel asserts."""
    import re

    import nbformat

    course = copy_course(ROOT, dest, ids)
    (course / "nbgrader_config.py").write_text(PLAIN_CONFIG.format(root=str(course)))
    pattern = re.compile(r"^grade\((\"[A-Za-z_0-9]+\")\)$", re.MULTILINE)
    for assignment in ids:
        path = course / "source" / assignment / f"{assignment}.ipynb"
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code" and "BEGIN HIDDEN TESTS" in cell.source:
                cell.source = pattern.sub(lambda m: PLAIN_HIDDEN.format(name=m[1]), cell.source)
        nbformat.write(nb, path)
    return course


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--serial-sample", type=int, default=2, help="learners graded serially")
    parser.add_argument(
        "--plain-sample", type=int, default=8, help="learners graded by plain nbgrader too"
    )
    parser.add_argument("--ids", default="", help="comma-separated assignments (default: all)")
    parser.add_argument("--seed", type=int, default=20261129)
    args = parser.parse_args(argv)
    if args.learners < 1:
        raise SystemExit(f"--learners must be >= 1, got {args.learners}")
    ids = assignment_ids(ROOT, [i for i in args.ids.split(",") if i])
    learners = [f"learner{i:03d}" for i in range(args.learners)]
    sample = learners[: max(0, min(args.serial_sample, args.learners))]
    plain_sample = learners[: max(0, min(args.plain_sample, args.learners))]
    load_before = os.getloadavg()

    with tempfile.TemporaryDirectory(prefix="pe-bench-") as tmp:
        course = copy_course(ROOT, Path(tmp) / "class", ids)
        t0 = time.perf_counter()
        build_class(course, learners, ids, args.seed)
        register(course, ids)
        print(
            f"{len(learners)} learners x {len(ids)} notebooks generated and registered in "
            f"{time.perf_counter() - t0:.1f} s",
            flush=True,
        )

        report = autograde(course, ids, jobs=args.jobs)
        total = report.seconds
        per_nb = {a: [t.seconds for t in report.tasks if t.assignment == a and t.ok] for a in ids}

        serial_per_nb = None
        same = None
        if sample:
            scourse = copy_course(ROOT, Path(tmp) / "serial", ids)
            for student in sample:
                shutil.copytree(course / "submitted" / student, scourse / "submitted" / student)
            register(scourse, ids)
            t1 = time.perf_counter()
            sreport = autograde(scourse, ids, jobs=1, progress=False)
            serial_time = time.perf_counter() - t1
            serial_per_nb = serial_time / (len(sample) * len(ids))
            same = all(sreport.scores[s] == report.scores[s] for s in sample)

        plain = None
        if plain_sample:
            pcourse = plain_course(Path(tmp) / "plain", ids)
            for student in plain_sample:
                shutil.copytree(course / "submitted" / student, pcourse / "submitted" / student)
            register(pcourse, ids)
            preport = autograde(pcourse, ids, jobs=args.jobs, progress=False)
            ours = statistics.mean(
                t.seconds for t in report.tasks if t.student in plain_sample and t.ok
            )
            theirs = statistics.mean(t.seconds for t in preport.tasks if t.ok)
            plain = {
                "sample": len(plain_sample),
                "graded": sum(t.ok for t in preport.tasks),
                "total_s": round(preport.seconds, 2),
                "per_notebook_s": round(preport.seconds / len(preport.tasks), 3),
                "median_in_worker_s": round(
                    statistics.median(t.seconds for t in preport.tasks if t.ok), 3
                ),
                "ours_mean_in_worker_s": round(ours, 3),
                "plain_mean_in_worker_s": round(theirs, 3),
                "ratio_per_notebook": round(
                    (total / len(report.tasks)) / (preport.seconds / len(preport.tasks)), 3
                ),
                "same_grades": {s: preport.scores[s] == report.scores[s] for s in plain_sample},
                "scores": preport.scores,
            }

    print()
    print(report.summary().splitlines()[0])
    print(
        f"class: {len(learners)} learners x {len(ids)} notebooks = {len(report.tasks)} "
        f"submissions, {args.jobs} parallel jobs on {os.cpu_count()} cores"
    )
    target = TARGET_PER_SUBMISSION_S * len(report.tasks)
    load_after = os.getloadavg()
    print(
        f"total time (parallel, including registering the assignments): {total:.1f} s "
        f"({total / 60:.1f} min; target <= {target:.0f} s: "
        f"{'met' if total <= target else 'MISSED'}); load average before "
        f"{load_before[0]:.2f}, after {load_after[0]:.2f} (1 min; the machine may be shared)"
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
        "target_s": round(target, 1),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "scores": report.scores,
    }
    if plain is not None:
        agree = sum(plain["same_grades"].values())
        print(
            f"plain nbgrader (Execute, every cell in a kernel, the same checks asserted there) "
            f"on {plain['sample']} learners x {len(ids)} notebooks: "
            f"{plain['per_notebook_s']:.2f} s per notebook ({plain['total_s']:.1f} s, "
            f"{args.jobs} jobs); this course: {total / len(report.tasks):.2f} s per notebook; "
            f"ratio course / plain {plain['ratio_per_notebook']:.2f}x; "
            f"same grades on {agree}/{plain['sample']} learners"
        )
        result["plain_nbgrader"] = plain
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

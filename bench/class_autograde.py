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

from helpers.teacher.classroom.course import assignment_ids, copy_course, course_id, db_url
from helpers.teacher.classroom.grades import export_grades
from helpers.teacher.classroom.grading import autograde
from helpers.teacher.classroom.steps import register
from tests import rehearsal

ROOT = Path(__file__).resolve().parent.parent
TARGET_PER_SUBMISSION_S = 0.3  # 240 s for 100 x 8
TARGET_PER_NOTEBOOK_S = 0.085  # the whole class, per notebook
TARGET_PLAIN_RATIO = 0.1  # against plain nbgrader in the same run
TARGET_BOOKKEEPING_SHARE = 0.05

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


def code_points(course: Path, assignment: str) -> float:
    """The points of the code grade cells of ``assignment``'s source notebook: what a learner
    whose answers are all the source's solutions gets without the written answers."""
    import nbformat

    nb = nbformat.read(course / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    return sum(
        float(c.metadata["nbgrader"].get("points", 0))
        for c in nb.cells
        if c.cell_type == "code" and c.get("metadata", {}).get("nbgrader", {}).get("grade")
    )


def check_grades(course: Path, ids: list[str], learners: list[str], report, rows) -> list[str]:
    """What disagrees between the grades reported and the gradebook, read one submission at
    a time through nbgrader's own ``Gradebook`` (score less late penalty), the grades CSV
    (``rows``), and what the learners answered: a learner answering every function with the
    solutions (learner i, i % 4 == 0) gets every code point. Empty: all agree."""
    from nbgrader.api import Gradebook, MissingEntry

    problems = []
    with Gradebook(db_url(course), course_id(course)) as gb:
        for student in learners:
            for a in ids:
                try:
                    sub = gb.find_submission(a, student)
                    got = float(sub.score) - float(sub.late_submission_penalty or 0.0)
                except MissingEntry:
                    got = None
                said = report.scores.get(student, {}).get(a)
                if got is None or said is None or abs(got - said) > 1e-6:
                    problems.append(f"{student} {a}: reported {said}, gradebook {got}")
    from helpers.i18n import split_assignment

    by_csv = {r["student_id"]: r for r in rows}
    bases = {split_assignment(a)[0] for a in ids}
    for student in learners:  # the CSV has one column per notebook: its better edition
        mine = report.scores.get(student, {})
        total = sum(max(v for a, v in mine.items() if split_assignment(a)[0] == b) for b in bases)
        if abs(float(by_csv.get(student, {}).get("total", -1)) - round(total, 2)) > 0.006:
            problems.append(f"{student}: grades CSV total {by_csv.get(student, {}).get('total')}")
    for i, student in enumerate(learners):
        for a in ids if i % 4 == 0 else []:
            want, said = code_points(course, a), report.scores.get(student, {}).get(a, 0.0)
            if abs(said - want) > 1e-6:
                problems.append(f"{student} {a}: all answers right, scored {said} of {want}")
    return problems


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
        t1 = time.perf_counter()
        register(course, ids)
        registering = time.perf_counter() - t1
        print(
            f"{len(learners)} learners x {len(ids)} notebooks generated in {t1 - t0:.1f} s, "
            f"registered in {registering:.1f} s",
            flush=True,
        )

        report = autograde(course, ids, jobs=args.jobs)
        t2 = time.perf_counter()
        rows = export_grades(course, course / "grades.csv", ids)
        export = time.perf_counter() - t2
        phases = {"registering": registering, **report.phases, "export": export}
        phases["registering"] = registering + report.phases.get("registering", 0.0)
        total = sum(phases.values())
        problems = check_grades(course, ids, learners, report, rows)
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
                # both without registering (the plain course is registered before its run)
                "ratio_per_notebook": round(
                    ((total - phases["registering"]) / len(report.tasks))
                    / (preport.seconds / len(preport.tasks)),
                    3,
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
        f"total time (parallel; registering, grading, bookkeeping and export): {total:.1f} s "
        f"({total / 60:.1f} min; target <= {target:.0f} s: "
        f"{'met' if total <= target else 'MISSED'}); load average before "
        f"{load_before[0]:.2f}, after {load_after[0]:.2f} (1 min; the machine may be shared)"
    )
    n = len(report.tasks)
    print(
        f"whole class: {total / n:.3f} s per notebook (target <= {TARGET_PER_NOTEBOOK_S} s: "
        f"{'met' if total / n <= TARGET_PER_NOTEBOOK_S else 'MISSED'})"
    )
    for name, seconds in phases.items():
        print(
            f"  {name:<12} {seconds:8.2f} s  {seconds / n:.4f} s per notebook  "
            f"{100 * seconds / total:5.1f} %"
        )
    print(
        f"bookkeeping: {100 * phases['bookkeeping'] / total:.1f} % of the total (target <= "
        f"{100 * TARGET_BOOKKEEPING_SHARE:.0f} %)"
    )
    print("per-notebook median grading time inside a worker:")
    width = max(len(a) for a in ids)  # 13_train_short_ko is the longest id
    for a in ids:
        if per_nb[a]:
            print(
                f"  {a:<{width}} {statistics.median(per_nb[a]):6.2f} s  ({len(per_nb[a])} graded)"
            )
    graded = sum(t.ok for t in report.tasks)
    print(
        f"graded {graded}/{len(report.tasks)}; mean score "
        f"{statistics.mean(sum(r.values()) for r in report.scores.values()):.2f} of "
        f"{sum(report.max_scores.values()):.0f}"
    )
    if problems:
        print(f"GRADES WRONG: {len(problems)} disagree with the gradebook or the answers:")
        for line in problems[:20]:
            print(f"  {line}")
    else:
        print(
            "grades checked: the reported scores are the gradebook's (nbgrader's Gradebook, "
            "less late penalties) and the grades CSV's; every all-correct learner has every "
            "code point"
        )
    result = {
        "learners": len(learners),
        "notebooks": len(ids),
        "jobs": args.jobs,
        "cores": os.cpu_count(),
        "total_s": round(total, 2),
        "per_notebook_s": round(total / len(report.tasks), 4),
        "phases_s": {k: round(v, 3) for k, v in phases.items()},
        "grades_wrong": problems,
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
            f"{args.jobs} jobs); this course: "
            f"{(total - phases['registering']) / len(report.tasks):.2f} s per notebook "
            f"(registering left out of both); "
            f"ratio course / plain {plain['ratio_per_notebook']:.3f}x (target <= "
            f"{TARGET_PLAIN_RATIO}x); "
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
    return 0 if same in (None, True) and graded == len(report.tasks) and not problems else 1


if __name__ == "__main__":
    sys.exit(main())

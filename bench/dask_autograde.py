"""Autograde through Dask: 1,000 learners x 1 notebook on a LocalCluster, against the local pool.

The class is generated as in bench/class_autograde.py (learner i: all correct when
i % 4 == 0, one stub, one wrong function, half stubs), for one notebook (``--id``,
default 01_order). It is graded by ``helpers.teacher.classroom.autograde(scheduler=...)``
(``--scheduler``, default ``local:2``: two worker processes with one thread each), then a
sample of the same class (``--local-sample`` learners) by the local process pool with as
many jobs as the cluster has workers, in a copy of the course with the same secret.
Throughput is notebooks per second of wall time; the overhead is Dask's time per notebook
over the pool's. The grades of the sample must agree.

    .venv/bin/python -m bench.dask_autograde [--learners 1000] [--local-sample 200]
    .venv/bin/python -m bench.dask_autograde --db postgresql://user@127.0.0.1/gradebook

Results also go to artifacts/dask_autograde.json, with the load average (the machine may
be shared: the figures are wall-clock).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.class_autograde import build_class
from helpers.teacher import seeds
from helpers.teacher.classroom.course import assignment_ids, copy_course
from helpers.teacher.classroom.grading import autograde
from helpers.teacher.classroom.steps import register

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=1000)
    parser.add_argument("--id", default="01_order", help="the notebook every learner submits")
    parser.add_argument("--scheduler", default="local:2", help="Dask scheduler or local:N")
    parser.add_argument("--db", default=None, help="gradebook URL (default: sqlite)")
    parser.add_argument(
        "--local-sample", type=int, default=200, help="learners graded by the local pool too"
    )
    parser.add_argument("--seed", type=int, default=20261130)
    args = parser.parse_args(argv)
    if args.learners < 1:
        raise SystemExit(f"--learners must be >= 1, got {args.learners}")
    ids = assignment_ids(ROOT, [args.id])
    learners = [f"learner{i:04d}" for i in range(args.learners)]
    sample = learners[: max(0, min(args.local_sample, args.learners))]
    load_before = os.getloadavg()

    with tempfile.TemporaryDirectory(prefix="pe-bench-dask-") as tmp:
        course = copy_course(ROOT, Path(tmp) / "dask", ids)
        t0 = time.perf_counter()
        build_class(course, learners, ids, args.seed)
        register(course, ids, args.db)
        print(
            f"{len(learners)} learners x {ids[0]} generated and registered in "
            f"{time.perf_counter() - t0:.1f} s",
            flush=True,
        )
        report = autograde(course, ids, db=args.db, scheduler=args.scheduler)
        workers = report.jobs
        dask_s = report.seconds
        dask_tput = len(report.tasks) / dask_s

        local = None
        if sample:
            lcourse = copy_course(ROOT, Path(tmp) / "local", ids)
            shutil.copy2(course / seeds.SECRET_FILE, lcourse / seeds.SECRET_FILE)
            for student in sample:
                shutil.copytree(course / "submitted" / student, lcourse / "submitted" / student)
            register(lcourse, ids)
            lreport = autograde(lcourse, ids, jobs=workers, progress=False)
            same = all(lreport.scores[s] == report.scores[s] for s in sample)
            local = {
                "learners": len(sample),
                "jobs": workers,
                "total_s": round(lreport.seconds, 2),
                "per_notebook_s": round(lreport.seconds / len(lreport.tasks), 4),
                "same_grades": same,
            }
    load_after = os.getloadavg()

    graded = sum(t.ok for t in report.tasks)
    per_nb = dask_s / len(report.tasks)
    print()
    print(report.summary().splitlines()[1])
    print(
        f"Dask ({args.scheduler}, {workers} workers): {len(report.tasks)} notebooks in "
        f"{dask_s:.1f} s = {dask_tput:.2f} notebooks/s ({per_nb:.3f} s per notebook, "
        f"{per_nb * workers:.3f} worker-seconds per notebook); graded {graded}"
    )
    result = {
        "learners": len(learners),
        "notebook": ids[0],
        "scheduler": args.scheduler,
        "db": "postgresql" if args.db else "sqlite",
        "workers": workers,
        "total_s": round(dask_s, 2),
        "throughput_per_s": round(dask_tput, 3),
        "per_notebook_s": round(per_nb, 4),
        "worker_seconds_per_notebook": round(per_nb * workers, 4),
        "graded": graded,
        "cores": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": load_after,
    }
    if local is not None:
        overhead = per_nb / local["per_notebook_s"]
        print(
            f"local process pool ({workers} jobs) on {local['learners']} of them: "
            f"{local['per_notebook_s']:.3f} s per notebook; Dask / pool: {overhead:.2f}x; "
            f"same grades: {local['same_grades']}"
        )
        result["local_pool"] = local
        result["overhead_over_pool"] = round(overhead, 3)
    print(
        f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
        f"(1 min; the machine may be shared)"
    )
    out = ROOT / "artifacts" / "dask_autograde.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(ROOT)}")
    ok = graded == len(report.tasks) and (local is None or local["same_grades"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

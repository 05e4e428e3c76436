"""What the isolated grader costs: ``nbgrader autograde`` with the course's configuration
against plain nbgrader, on the same notebook and the same submissions.

Temporary courses hold the fixture notebook of tests/fixtures/grading_course.py:

- ``course``: the repository's nbgrader_config.py (no kernel, IsolatedGrades, ...),
  hidden tests ``grade("<function>")``;
- ``unsandboxed``: the same with SafeExecute outside the sandbox (it starts no kernel
  either since the course's run_kernel = False: the two should agree);
- ``plain``: nbgrader's default autograde preprocessors, hidden tests written as plain
  asserts against ``helpers.reference`` inside the learner's kernel.

All get the same learners' answer cells (all correct, stubs, two with a mistake).
Each round times ``nbgrader autograde`` of the whole batch in every course, back to
back (the order rotates); the median batch time divided by the number of submissions is
the cost per submission, and the median of the rounds' course/plain ratios is the
overhead (pairs of one round ran under the same machine load). Target: at most 1.3x.

    .venv/bin/python -m bench.grading_overhead [--learners 4] [--rounds 3] [--strict]

``--strict`` exits with status 1 when the target is missed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET = 1.3


def _learners(gc, count: int) -> list[tuple[str, dict[str, str]]]:
    """(student id, answer bodies): all correct, stubs, then one mistake each."""
    out = [("correct", dict(gc.SOLUTIONS)), ("stubs", {})]
    for i, (fn, _, body) in enumerate(gc.MISTAKES):
        out.append((f"mistake{i}", {**gc.SOLUTIONS, fn: body}))
    return out[:count]


def _autograde_seconds(gc, root: Path) -> float:
    start = time.perf_counter()
    gc.nbgrader(root, "autograde", gc.ASSIGNMENT, "--force", "--log-level=ERROR")
    return time.perf_counter() - start


VARIANTS = {
    "plain": "plain nbgrader (asserts in the kernel)",
    "course": "course (isolated grades, no kernel)",
    "unsandboxed": "course without the kernel sandbox",
}
# The course's configuration with nbgrader's kernel outside the sandbox: the cost of the
# isolated grader alone, apart from the classroom's kernel sandbox.
UNSANDBOXED = """
c.Autograde.autograde_preprocessors = [
    "helpers.teacher.nbgrader_plugin.SafeExecute" if p.endswith("SafeExecute") else p
    for p in c.Autograde.autograde_preprocessors
]
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=4, help="submissions per batch")
    parser.add_argument("--rounds", type=int, default=3, help="timed autograde runs per course")
    parser.add_argument("--strict", action="store_true", help="exit 1 when the target is missed")
    args = parser.parse_args(argv)
    if args.learners < 1 or args.rounds < 1:
        parser.error(f"--learners and --rounds must be >= 1, got {args.learners}, {args.rounds}")

    from tests.fixtures import grading_course as gc

    learners = _learners(gc, args.learners)
    with tempfile.TemporaryDirectory(prefix="pe-bench-") as tmp:
        roots = {}
        for variant in VARIANTS:
            root = gc.make_course(
                Path(tmp) / variant, "plain" if variant == "plain" else "isolated"
            )
            if variant == "unsandboxed":
                with (root / "nbgrader_config.py").open("a", encoding="utf-8") as config:
                    config.write(UNSANDBOXED)
            for student, answers in learners:
                gc.submit(root, student, gc.submission(root, answers=answers))
            roots[variant] = root
        # One untimed run each: warm the file cache and create the gradebooks' students.
        for root in roots.values():
            _autograde_seconds(gc, root)
        times: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
        names = list(VARIANTS)
        for r in range(args.rounds):
            for variant in names[r % len(names) :] + names[: r % len(names)]:
                times[variant].append(_autograde_seconds(gc, roots[variant]))
        check_seconds = _isolated_check_seconds(gc, roots["course"], learners)

    n = len(learners)
    print(f"nbgrader autograde, {n} submissions a batch, {args.rounds} rounds")
    for variant, label in VARIANTS.items():
        per = statistics.median(times[variant]) / n
        rounds = ", ".join(f"{t:.1f}" for t in times[variant])
        print(f"  {label + ':':<46} {per:.2f} s per submission (batches: {rounds} s)")
    print(f"  {'isolated check_notebook alone:':<46} {check_seconds:.2f} s per submission")
    # Both courses of a round ran back to back, under the same load: compare them pairwise.
    ratios = {
        variant: statistics.median(c / p for c, p in zip(times[variant], times["plain"]))
        for variant in ("course", "unsandboxed")
    }
    met = ratios["course"] <= TARGET
    print(
        f"  ratio course / plain: {ratios['course']:.2f}x (target <= {TARGET}x: "
        f"{'met' if met else 'NOT met'}); without the kernel sandbox: "
        f"{ratios['unsandboxed']:.2f}x (median of the rounds' ratios)"
    )
    return 1 if args.strict and not met else 0


def _isolated_check_seconds(gc, root: Path, learners) -> float:
    """Median seconds of check_notebook (the isolated grade alone) per submission."""
    from helpers.teacher.isolated import check_notebook

    samples = []
    for student, _ in learners:
        path = root / "submitted" / student / gc.ASSIGNMENT / f"{gc.ASSIGNMENT}.ipynb"
        start = time.perf_counter()
        check_notebook(path)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


if __name__ == "__main__":
    sys.exit(main())

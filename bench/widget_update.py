"""Median time of one explorer update (recompute + redraw) for every explorer of the course.

Each ``helpers.widgets.<module>`` offers ``bench_explorers(ref)``: explorers built on the
reference maths at d = 512 and max_len = 512 (where those apply) with new slider values.
One update = setting those values (the explorer recomputes and re-renders its figure).
Each module has entries of two or three kinds: a move that keeps every axis (``blit``:
the cached background is restored and only the changing artists are drawn), a move that
also redraws the cached layer of slow artists (``layer``: a heatmap that follows ``base``,
say) and a move that changes the axes (``full``: the whole figure is drawn again). The
kind is measured, not assumed, from the explorer's ``static_key()`` and ``slow_key()``.

    .venv/bin/python -m bench.widget_update [--repeat 20]

Target: at most 50 ms per blitted update (the exit status is 1 when one is over); layer
and full redraws are printed as measured. BLAS runs on one thread (as in a learner's kernel on a
busy machine, and so that the timings do not depend on the number of idle cores); the
machine's load average is printed with the results.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import importlib
import pkgutil
import statistics
import time

import helpers.reference as ref
import helpers.widgets

TARGET_MS = 50.0


def time_updates(explorer, new_values: dict, repeat: int) -> list[float]:
    """Alternate between the explorer's start values and ``new_values``; time each refresh."""
    start = explorer.values()
    times = []
    for i in range(repeat):
        values = new_values if i % 2 == 0 else start
        for name, value in values.items():
            # set without firing the observer, then time one refresh: recompute + render
            explorer.controls[name].unobserve(explorer._on_change, names="value")
            explorer.controls[name].value = value
            explorer.controls[name].observe(explorer._on_change, names="value")
        t0 = time.perf_counter()
        explorer.refresh()
        times.append((time.perf_counter() - t0) * 1000.0)
    return times


def move_kind(explorer, new_values: dict) -> str:
    """How setting ``new_values`` redraws: ``full``, ``layer`` or ``blit``.

    ``full``: the background changed (``static_key``); ``layer``: the cached layer of slow
    artists changed (``slow_key``); ``blit``: only the per-update artists were drawn.
    """
    start = explorer.values()
    key, slow = explorer.static_key(), explorer.slow_key()
    for name, value in new_values.items():
        explorer.controls[name].value = value
    if explorer.static_key() != key:
        kind = "full"
    elif explorer.slow and explorer.slow_key() != slow:
        kind = "layer"
    else:
        kind = "blit"
    for name, value in start.items():
        explorer.controls[name].value = value
    return kind


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    rows = []
    for info in pkgutil.iter_modules(helpers.widgets.__path__):
        module = importlib.import_module(f"helpers.widgets.{info.name}")
        if not hasattr(module, "bench_explorers"):
            continue
        for label, explorer, new_values in module.bench_explorers(ref):
            kind = move_kind(explorer, new_values)
            times = time_updates(explorer, new_values, args.repeat)
            if explorer.message.value:
                raise SystemExit(
                    f"{label}: the explorer reported an error: {explorer.message.value}"
                )
            rows.append((f"{info.name}.{label}", kind, statistics.median(times), max(times)))
    load = os.getloadavg()
    width = max(len(r[0]) for r in rows)
    print(
        f"machine load (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
        f"on {os.cpu_count()} cores; OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}"
    )
    print(
        f"{'explorer':<{width}}  kind   median ms  max ms  "
        f"(target {TARGET_MS:.0f} ms, {args.repeat} updates)"
    )
    for name, kind, med, worst in rows:
        flag = "" if med <= TARGET_MS else "  over target"
        print(f"{name:<{width}}  {kind:<5}  {med:9.1f}  {worst:6.1f}{flag}")
    for kind in ("blit", "layer", "full"):
        of_kind = [r for r in rows if r[1] == kind]
        over = [r for r in of_kind if r[2] > TARGET_MS]
        if of_kind:
            print(f"{kind:<5}: {len(of_kind)} entries, {len(over)} over the target")
    # the exit status checks the target on the blitted updates (a slider move that keeps
    # the axes); layer and full redraws are reported as measured
    return 1 if any(r[2] > TARGET_MS for r in rows if r[1] == "blit") else 0


if __name__ == "__main__":
    raise SystemExit(main())

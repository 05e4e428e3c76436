"""The time from a key press to the explorer's new picture, in a real browser.

    python -m bench.browser_latency [--ids 01_order,06_rope] [--repeat 3]

JupyterLab serves a temporary copy of the course (``tests.test_browser.serve_course``: the
learner notebooks answered with the source's solutions), headless Chromium opens each
notebook in a 1400 x 1000 window at 2 device pixels per CSS pixel and runs it from the Run
menu; then one or two sliders of its explorer (``MOVES``) are set by typing into the number
box beside each and pressing Enter, ``--repeat`` times, alternating between two values, and
set back. Printed for each slider: the milliseconds from the key press to the first new
picture decoded in the page and to the last one (a large ALiBi move sends two), each move
and their medians, with the load average. The machine's other work is in these figures:
run it on a quiet machine to compare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

# The sliders whose latency is measured in each explorer: (label, two values to set).
MOVES = {
    "01_order": [("tokens", ("300", "6"))],
    "02_sincos": [("d", ("512", "64"))],
    "03_norm": [("d", ("512", "32"))],
    "04_decay": [("d", ("512", "32"))],
    "05_rotation": [("d", ("512", "16"))],
    "06_rope": [("m (query)", ("994", "5")), ("d", ("512", "64"))],
    "07_alibi": [("seq_len", ("994", "64"))],
    "08_offsets": [("d", ("512", "64"))],
    "09_families": [("num_buckets", ("64", "8")), ("max_distance", ("1000", "100"))],
    "10_long_context": [("d", ("256", "16")), ("factor", ("32", "4"))],
    "11_rope_nd": [("grid", ("32", "8")), ("d", ("256", "16"))],
    "12_rope_today": [("steps", ("200", "10")), ("window", ("32", "8"))],
    "13_train_short": [("evaluation length", ("64", "256")), ("beta_fast", ("1", "32"))],
}


def measure(page, explorer, image, label: str, values: tuple[str, str], repeat: int):
    """``repeat`` moves of the slider ``label`` between ``values``, then back to where it was:
    [(ms to the first new picture, ms to the last), ...] of the moves."""
    from tests.test_browser import _box, _set

    start = _box(page, explorer, label).input_value().strip().replace(",", "")
    times = [_set(page, explorer, image, label, values[i % 2]) for i in range(repeat)]
    if values[(repeat - 1) % 2] != start:  # a value set again draws nothing: no frame comes
        _set(page, explorer, image, label, start)
    return times


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", default=",".join(MOVES), help="comma-separated notebooks")
    parser.add_argument("--repeat", type=int, default=3, help="moves of each slider")
    args = parser.parse_args(argv)
    ids = [i for i in args.ids.split(",") if i]
    unknown = [i for i in ids if i not in MOVES]
    if unknown:
        parser.error(f"no sliders to move in {unknown}: one of {', '.join(MOVES)}")
    from playwright.sync_api import sync_playwright

    from helpers.train import QUICK_ENV
    from tests.test_browser import (
        ALL_RUN_JS,
        CHROMIUM,
        LAUNCH_ARGS,
        _open_and_run,
        _stop_kernels,
        serve_course,
    )

    os.environ.setdefault(QUICK_ENV, "1")  # 13's Run All trains the quick version
    results: dict[str, dict[str, list]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="pe-latency-") as tmp,
        serve_course(Path(tmp), ids) as (url, token),
        sync_playwright() as pw,
    ):
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
        try:
            for nb_id in ids:
                page = chromium.new_page(
                    viewport={"width": 1400, "height": 1000}, device_scale_factor=2
                )
                page.set_default_timeout(120_000)
                try:
                    explorer, image = _open_and_run(page, url, token, nb_id)
                    page.wait_for_function(ALL_RUN_JS, timeout=600_000)
                    time.sleep(1.0)  # the last outputs laid out
                    results[nb_id] = {
                        label: measure(page, explorer, image, label, values, args.repeat)
                        for label, values in MOVES[nb_id]
                    }
                finally:
                    page.close()
                    _stop_kernels(url, token)
                load = os.getloadavg()[0]
                for label, times in results[nb_id].items():
                    first = [round(t) for t, _ in times]
                    last = [round(t) for _, t in times]
                    print(
                        f"{nb_id}: {label}: key press to new image {first} ms, median "
                        f"{statistics.median(first):.0f} ms; to the last frame {last} ms, "
                        f"median {statistics.median(last):.0f} ms (load {load:.2f})",
                        flush=True,
                    )
        finally:
            chromium.close()
    return results


if __name__ == "__main__":
    main(sys.argv[1:])

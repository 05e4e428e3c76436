"""A command run beside CPU-bound processes: the suite on a busy machine.

``--busy`` processes (default 2, one per core of the course's machine) each spin a float loop
for the whole time the command runs, as another user's work would; the command's elapsed
time, its exit status and the load average sampled every 10 s (lowest, median, highest) are
printed. The spinners end with the command.

    .venv/bin/python -m bench.cpu_load [--busy 2] -- make test
    .venv/bin/python -m bench.cpu_load -- .venv/bin/python -m pytest -n auto --durations=40 -q

The exit status is the command's.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import threading
import time


def spin() -> None:  # a CPU-bound loop, until terminated
    x = 0.0
    while True:
        for i in range(1_000_000):
            x = (x + i * 1e-9) % 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=2, help="CPU-bound processes beside it")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- and the command")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("a command to run: -- make test")
    ctx = multiprocessing.get_context("fork")
    spinners = [ctx.Process(target=spin, daemon=True) for _ in range(args.busy)]
    for p in spinners:
        p.start()
    loads: list[float] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(10.0):
            loads.append(os.getloadavg()[0])

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.monotonic()
    try:
        status = subprocess.call(command)
    finally:
        done.set()
        for p in spinners:
            p.terminate()
        for p in spinners:
            p.join()
    elapsed = time.monotonic() - started
    loads = loads or [os.getloadavg()[0]]
    print(
        f"cpu_load: {' '.join(command)} beside {args.busy} CPU-bound processes: "
        f"{elapsed / 60:.0f} min {elapsed % 60:.0f} s, exit status {status}; load average "
        f"(1 min, every 10 s) lowest {min(loads):.2f}, median {statistics.median(loads):.2f}, "
        f"highest {max(loads):.2f}"
    )
    return status


if __name__ == "__main__":
    sys.exit(main())

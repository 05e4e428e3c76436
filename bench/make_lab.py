"""`make lab` from a fresh clone: seconds until JupyterLab answers, and where they go.

The repository's committed tree (``git clone`` of HEAD, or ``--rev``) is cloned into a
temporary folder and ``make lab PORT=<free port>`` runs there with no browser
(``BROWSER=true``), its steps timed apart: the venv (``python3 -m venv``), the install
(the stamp ``make lab`` makes first: ``.venv/.installed-learner``, or ``.venv/.installed``
in a Makefile before it), then JupyterLab's start until ``/api/contents`` of notebook 01
answers with the token JupyterLab printed. pip's cache is the user's (warm after a first
run: the figure the target speaks of); the load average is printed before and after.

    .venv/bin/python -m bench.make_lab [--rev HEAD] [--runs 1] [--keep]

Target: 60 s or less on the quiet 2-core machine with a warm cache (the exit status is 1
when a run is over); with the dev, cluster and hub extras installed for a learner, a fresh
clone took 194 s.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 60.0
BEFORE_S = 194.0  # a fresh clone's `make lab` before the learner's install was cut
URL = re.compile(r"(http://127\.0\.0\.1:\d+)(/\S*)\?token=([0-9a-f]+)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(base: str, token: str) -> bool:
    request = urllib.request.Request(
        f"{base}/api/contents/01_order/01_order.ipynb?content=0",
        headers={"Authorization": f"token {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.load(response).get("type") == "notebook"
    except OSError:
        return False


def one_run(rev: str, keep: bool) -> dict[str, float]:
    """One fresh clone's `make lab`: the seconds of each phase and the total."""
    tmp = Path(tempfile.mkdtemp(prefix="pe-make-lab-"))
    clone = tmp / "course"
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", rev], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH"))}
    env.update(
        BROWSER="true",
        PATH=os.pathsep.join(
            p for p in env.get("PATH", "").split(os.pathsep) if "/.venv/" not in p
        ),
    )
    phases: dict[str, float] = {}

    def timed(name: str, cmd: list[str]) -> None:
        start = time.monotonic()
        subprocess.run(cmd, cwd=clone, env=env, check=True, stdout=subprocess.DEVNULL)
        phases[name] = time.monotonic() - start

    # make lab's steps one by one, as its recipe runs them (the same commands, timed apart)
    timed("venv", ["python3", "-m", "venv", ".venv"])
    makefile = (clone / "Makefile").read_text(encoding="utf-8")
    stamp = ".venv/.installed-learner" if ".installed-learner" in makefile else ".venv/.installed"
    timed("pip install", ["make", "--no-print-directory", stamp])
    start = time.monotonic()
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "lab", f"PORT={_free_port()}"],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    seen = []
    try:
        url = None
        while url is None:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit(
                    "make lab ended before JupyterLab printed its URL:\n" + "".join(seen)
                )
            seen.append(line)
            url = URL.search(line)
        base, path, token = url.groups()
        while not _answers(base, token):
            if proc.poll() is not None:
                raise SystemExit("JupyterLab ended:\n" + "".join(seen))
            time.sleep(0.2)
        phases["lab start"] = time.monotonic() - start
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    total = sum(phases.values())
    phases["total"] = total
    phases["opens"] = path  # type: ignore[assignment]
    return phases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="HEAD", help="the commit to clone (default HEAD)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the clone (its .venv)")
    args = parser.parse_args(argv)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    status = 0
    for run in range(1, args.runs + 1):
        phases = one_run(args.rev, args.keep)
        opens = phases.pop("opens")
        total = phases.pop("total")
        parts = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in phases.items())
        verdict = "ok" if total <= TARGET_S else "OVER"
        print(
            f"run {run}: make lab from a fresh clone of {args.rev}: {total:.1f} s until "
            f"JupyterLab answered ({parts}); target {TARGET_S:.0f} s [{verdict}]; "
            f"before: {BEFORE_S:.0f} s; the printed URL opens {opens}"
        )
        status |= total > TARGET_S
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    sys.stdout.flush()
    return int(status)


if __name__ == "__main__":
    raise SystemExit(main())

"""`make lab`, the README's first command, serves JupyterLab on the learner notebooks."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_make_lab_serves_notebook_01():
    import socket

    env = dict(os.environ, BROWSER="true")  # a headless machine: open no browser
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "lab", f"PORT={port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    try:
        url = None
        deadline = time.monotonic() + 180
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            # the URL printed opens notebook 01, on the port asked for
            match = re.search(
                rf"(http://127\.0\.0\.1:{port})/lab/tree/01_order/01_order\.ipynb\?token=([0-9a-f]+)",
                line,
            )
            if match:
                url = match.groups()
        assert url is not None, "".join(lines)
        base, token = url
        opened = "".join(lines)
        assert "notebooks/01_order/01_order.ipynb" in opened  # the notebook it opens on
        request = urllib.request.Request(
            f"{base}/api/contents/01_order/01_order.ipynb?content=0",
            headers={"Authorization": f"token {token}"},
        )
        for _ in range(30):
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    model = json.load(response)
                break
            except OSError:
                time.sleep(1)
        else:
            pytest.fail("JupyterLab did not answer:\n" + "".join(lines))
        assert model["type"] == "notebook"
        assert model["path"] == "01_order/01_order.ipynb"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)

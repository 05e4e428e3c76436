"""A real browser: JupyterLab on localhost driven by headless Chromium through Playwright.

The learner notebook of 02_sincos, answered with the source's solutions, is opened in a
temporary copy of the course, all cells are run from JupyterLab's Run menu, the explorer's
widget renders, and setting its ``d`` slider changes the figure: the screenshots of the plot
before and after differ. Screenshots go to ``artifacts/browser/`` (git-ignored).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from helpers.teacher import classroom
from tests import classroom_kit as kit
from tests import rehearsal

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMIUM = os.environ.get("PE_COURSE_CHROMIUM", "/usr/bin/chromium")
ASSIGNMENT = "02_sincos"
ARTIFACTS = kit.REPO / "artifacts" / "browser"
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _skip_reason() -> str:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        return f"Chromium not found at {CHROMIUM}: install it with `make system-deps` (Debian)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing: `make setup`"
    if not kit.real_ids([ASSIGNMENT]):
        return f"source/{ASSIGNMENT} does not exist yet"
    return ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """JupyterLab serving a temporary copy of the course; yields (url, notebook path)."""
    root = tmp_path / "course"
    classroom.copy_course(kit.REPO, root, [ASSIGNMENT])
    notebook = root / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    rehearsal.make_submission(
        notebook, root / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", notebook
    )
    port, token = _free_port(), secrets.token_hex(16)
    home = tmp_path / "home"
    home.mkdir()
    # Render every cell (JupyterLab 4 leaves cells outside the viewport out of the page).
    settings = home / ".jupyter" / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    env = kit.env() | {"HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter")}
    env.pop("NBGRADER_EXECUTION", None)
    log = open(tmp_path / "lab.log", "w")  # noqa: SIM115  (closed below)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            f"--port={port}",
            "--ip=127.0.0.1",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            "--allow-root",
            "--ServerApp.open_browser=False",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        cwd=root,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail("JupyterLab did not start:\n" + (tmp_path / "lab.log").read_text())
                time.sleep(0.5)
        yield f"{url}/lab/tree/notebooks/{ASSIGNMENT}/{ASSIGNMENT}.ipynb?token={token}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _png(path: Path) -> np.ndarray:
    import matplotlib.image

    return np.asarray(matplotlib.image.imread(path), dtype=float)


@pytest.mark.skipif(bool(_skip_reason()), reason=_skip_reason() or "ready")
def test_widget_slider_changes_figure(lab):
    """Run all cells in JupyterLab; the explorer renders; moving ``d`` redraws its figure."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(120_000)
            page.goto(lab)
            page.locator(".jp-NotebookPanel").first.wait_for()
            page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for(
                timeout=180_000
            )
            page.screenshot(path=str(ARTIFACTS / f"{ASSIGNMENT}-opened.png"))
            page.get_by_role("menuitem", name="Run").first.click()
            page.get_by_text("Run All Cells", exact=True).first.click()
            # The explorer: the first widget box holding an image and sliders.
            slider = page.locator(".widget-slider").first
            try:
                slider.wait_for(timeout=300_000)
            finally:
                page.screenshot(path=str(ARTIFACTS / f"{ASSIGNMENT}-run.png"), full_page=True)
            explorer = page.locator(".widget-vbox").filter(has=page.locator("img")).first
            image = explorer.locator("img").first
            image.scroll_into_view_if_needed()
            page.wait_for_function(
                "el => el.naturalWidth > 0", arg=image.element_handle(), timeout=120_000
            )
            before_src = image.get_attribute("src")
            image.screenshot(path=str(ARTIFACTS / f"{ASSIGNMENT}-before.png"))
            d_slider = (
                explorer.locator(".widget-slider")
                .filter(has=page.locator(".widget-label", has_text="d"))
                .first
            )
            readout = d_slider.locator(".widget-readout").first
            readout.click()
            page.keyboard.press("Control+A")
            page.keyboard.type("8")
            page.keyboard.press("Enter")
            page.wait_for_function(
                "([el, src]) => el.getAttribute('src') !== src",
                arg=[image.element_handle(), before_src],
                timeout=120_000,
            )
            time.sleep(0.5)
            image.screenshot(path=str(ARTIFACTS / f"{ASSIGNMENT}-after.png"))
            page.screenshot(path=str(ARTIFACTS / f"{ASSIGNMENT}-page.png"), full_page=False)
        finally:
            browser.close()
    before = _png(ARTIFACTS / f"{ASSIGNMENT}-before.png")
    after = _png(ARTIFACTS / f"{ASSIGNMENT}-after.png")
    assert before.shape[0] > 100 and before.shape[1] > 100, "the plot area is rendered"
    assert before.std() > 0.01, "the figure is not blank"
    h, w = min(before.shape[0], after.shape[0]), min(before.shape[1], after.shape[1])
    changed = np.abs(before[:h, :w] - after[:h, :w]).max(axis=-1) > 0.05
    assert changed.mean() > 0.01, f"only {changed.mean():.2%} of the plot changed"

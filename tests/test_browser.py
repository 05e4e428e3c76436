"""A real browser: JupyterLab on localhost driven by headless Chromium through Playwright.

Learner notebooks, answered with the source's solutions (or as a learner left them), are
opened in a temporary copy of the course in a 1400 x 1000 window with the file browser open,
and run from JupyterLab's Run menu: a move redraws the figure (02_sincos's screenshots before
and after a move of ``d`` differ), a drag redraws before the release, the Korean notebook
answers in Korean, Run All goes past a failing visible test to the self-check, and a restart
is met with "run the first cell". Screenshots go to ``artifacts/browser/`` (git-ignored).

Every notebook's page, run to its end, is measured in ``tests/test_accessibility.py``: its
layout and figures' text, axe-core, the keyboard, 200 % zoom (the same page for all four).
The time from a key press to the new picture is ``python -m bench.browser_latency``'s.
This module's server, browser and steps are the kit of both.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import json
import os
import secrets
import shutil
import socket
import statistics
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from helpers.teacher.classroom.course import copy_course
from tests import classroom_kit as kit
from tests import rehearsal

bench = importlib.import_module("bench.widget_update")

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMIUM = os.environ.get("PE_COURSE_CHROMIUM", "/usr/bin/chromium")
ASSIGNMENTS = [
    "01_order",
    "02_sincos",
    "03_norm",
    "04_decay",
    "05_rotation",
    "06_rope",
    "07_alibi",
    "08_offsets",
    "09_families",
    "10_long_context",
    "11_rope_nd",
    "12_rope_today",
    "13_train_short",
]
# The Korean notebook opened, run and read: its self-check must answer in Korean.
KOREAN, UNWRITTEN = "06_rope_ko", "rope_score"
LEARNER = "06_rope_learner"  # 06_rope with a clockwise apply_rope and turns unwritten
MIN_TRACK = 200  # px
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

# Records, in the page, the key press (Enter in a readout) and the moments the explorer's
# image got each new picture decoded: window.__latency = {t0, frames: [decoded, ...]}.
WATCH_JS = """([readout, img]) => {
  const lat = {t0: null, frames: []};
  window.__latency = lat;
  readout.addEventListener('keydown', e => {
    if (e.key === 'Enter' && lat.t0 === null) lat.t0 = e.timeStamp;
  }, {capture: true});
  new MutationObserver(() => {
    const done = () => { lat.frames.push(performance.now()); };
    img.decode().then(done, done);
  }).observe(img, {attributes: true, attributeFilter: ['src']});
}"""
SETTLE = 1.5  # s without a new frame after the first: the move is drawn completely

# Layout facts of one explorer: slider tracks, controls inside the output, scrollbars.
LAYOUT_JS = """(box) => {
  const out = box.closest('.jp-OutputArea-output') || box.parentElement;
  const outRect = out.getBoundingClientRect();
  const scroller = box.closest('.jp-WindowedPanel-outer') || box.closest('.jp-Notebook');
  const sliders = [...box.querySelectorAll('.widget-slider')].map(s => {
    const track = s.querySelector('.noUi-target') || s.querySelector('.slider-container');
    const label = s.querySelector('.widget-label');
    return {label: label ? label.textContent : '', track: track.getBoundingClientRect().width};
  });
  const controls = [...box.querySelectorAll('.widget-slider, .widget-checkbox, .widget-text')]
    .map(c => {
      const r = c.getBoundingClientRect();
      const label = c.querySelector('.widget-label, label');
      return {label: label ? label.textContent : c.className, left: r.left, right: r.right,
              width: r.width};
    });
  // a label whose text is wider than its box is shown cut ("evaluatio...")
  const cut = [...box.querySelectorAll('.widget-label')]
    .filter(l => l.scrollWidth > l.clientWidth + 1).map(l => l.textContent);
  const img = box.querySelector('img');
  const ir = img.getBoundingClientRect();
  const side = document.querySelector('#filebrowser');
  return {
    sliders, controls, cut,
    output: {left: outRect.left, right: outRect.right, width: outRect.width,
             scroll: out.scrollWidth, client: out.clientWidth},
    notebook: {scroll: scroller.scrollWidth, client: scroller.clientWidth},
    image: {width: ir.width, height: ir.height, natural: img.naturalWidth},
    fileBrowser: side ? side.getBoundingClientRect().width : 0,
    window: window.innerWidth,
  };
}"""


# The notebook ``path`` is the current tab and its kernel is connected and idle. The toolbar's
# execution indicator is no such sign: it reads "idle" before the notebook has a kernel at all
# (its first state), and Run All clicked then runs nothing, which under load (a kernel that
# takes long to start) left a test waiting for an explorer that no cell was drawing.
KERNEL_READY_JS = """(path) => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const session = panel && panel.sessionContext && panel.sessionContext.session;
  const kernel = session && session.kernel;
  return !!kernel && panel.context.path === path && kernel.connectionStatus === 'connected'
    && kernel.status === 'idle';
}"""
# Every cell has run: no prompt shows [*] and the last code cell has its number.
ALL_RUN_JS = """() => { const p = [...document.querySelectorAll('.jp-InputPrompt')];
  return p.length && !p.some(e => e.textContent.includes('*'))
         && /\\d/.test(p[p.length - 1].textContent); }"""
# After Run All: the explorer is on the page, or the run is over without it (the kernel idle,
# no cell waiting "[*]", and one cell numbered: the last one, or the one Run All stopped at).
RUN_DONE_JS = r"""() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const boxes = [...panel.node.querySelectorAll('.widget-vbox')];
  if (boxes.some(b => b.querySelector('img') && b.querySelector('.widget-slider'))) return true;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const prompts = [...panel.node.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
    .map(p => p.textContent);
  return !!kernel && kernel.status === 'idle' && !prompts.some(t => t.includes('*'))
    && prompts.some(t => /\d/.test(t));
}"""
# The page has stopped moving: no widget output still "Loading widget...", every picture
# loaded, and the boxes of the outputs, explorers and pictures the same over ``frames``
# animation frames in a row (a redraw, a re-layout after a resize, a view still arriving
# each move one); then the fonts are loaded. What it still waited for, after ``ms``.
SETTLED_JS = r"""async ([frames, ms]) => {
  const frame = () => new Promise(r => requestAnimationFrame(() => r()));
  const outputs = () => [...document.querySelectorAll('.jp-OutputArea-output')];
  const loading = () => outputs().filter(o => o.childNodes.length === 1
    && o.firstChild.nodeType === Node.TEXT_NODE && o.firstChild.data.startsWith('Loading widget'));
  const pending = () => [...document.images].filter(i => i.src && !i.complete);
  const boxes = () => JSON.stringify([...document.querySelectorAll(
      '.jp-OutputArea-output, .widget-vbox, .jp-OutputArea-output img')].map(e => {
    const b = e.getBoundingClientRect(); return [b.x, b.y, b.width, b.height]; }));
  const start = performance.now();
  let last = null, still = 0;
  while (still < frames) {
    if (performance.now() - start > ms) {
      return `${loading().length} widget outputs loading, ${pending().length} pictures ` +
             `loading, ${still} of ${frames} frames without a move`;
    }
    await frame();
    const now = boxes();
    still = (now === last && !loading().length && !pending().length) ? still + 1 : 0;
    last = now;
  }
  await document.fonts.ready;
  return '';
}"""
SETTLED_FRAMES, SETTLED_MS = 10, 120_000


def _settled(page, ms: int = SETTLED_MS) -> None:
    """Wait until the page has stopped moving (SETTLED_JS): fails if it still moves after
    ``ms``."""
    still = page.evaluate(SETTLED_JS, [SETTLED_FRAMES, ms])
    assert not still, f"the page still moved after {ms / 1000:.1f} s: {still}"


KERNEL_START_MS = 180_000  # a kernel's start on a busy machine
RUN_ALL_MS = 300_000  # a notebook's Run All on a busy machine, to its explorer


def _kernel_ready(page, path: str) -> None:
    page.wait_for_function(KERNEL_READY_JS, arg=path, polling=250, timeout=KERNEL_START_MS)


def _skip_reason() -> str:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        return f"Chromium not found at {CHROMIUM}: install it with `make system-deps` (Debian)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing: `make setup`"
    if not kit.real_ids(ASSIGNMENTS):
        return "no assignment of the course exists yet"
    return ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_course(tmp_path: Path, ids: list[str], extras=None):
    """JupyterLab serving a copy of the course's ``ids`` in ``tmp_path``, every learner
    notebook answered with the source's solutions; ``extras(root)`` adds more notebooks.
    A context manager of (url, token)."""
    root = tmp_path / "course"
    copy_course(kit.REPO, root, ids)
    for assignment in ids:
        notebook = root / "notebooks" / assignment / f"{assignment}.ipynb"
        rehearsal.make_submission(
            notebook, root / "source" / assignment / f"{assignment}.ipynb", notebook
        )
    if extras is not None:
        extras(root)
    port, token = _free_port(), secrets.token_hex(16)
    home = tmp_path / "home"
    home.mkdir()
    # Render every cell (JupyterLab 4 leaves cells outside the viewport out of the page).
    settings = home / ".jupyter" / "lab" / "user-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    env = kit.env() | {"HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter")}
    env.pop("NBGRADER_EXECUTION", None)
    return _serving(lab_command(root, port, token), root, env, tmp_path / "lab.log", port, token)


def lab_command(root, port: int, token: str) -> list[str]:
    """JupyterLab on ``root``, headless, on ``port`` with ``token``: the browser tests' server."""
    return [
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
        # window.jupyterapp: the tests wait on the notebook's kernel itself (KERNEL_READY_JS)
        "--LabApp.expose_app_in_browser=True",
    ]


@contextlib.contextmanager
def _serving(cmd, root, env, log, port, token):
    with kit.lab_server(cmd, root, env, log, port, token) as url:
        yield url, token


def _learners(root: Path) -> None:
    """06_rope_ko with one exercise unwritten; 06_rope with a wrong, a right and an
    unfinished function."""
    if kit.real_ids([KOREAN]):  # answered, but for one exercise left unwritten
        copy_course(kit.REPO, root, [KOREAN])
        notebook = root / "notebooks" / KOREAN / f"{KOREAN}.ipynb"
        source = root / "source" / KOREAN / f"{KOREAN}.ipynb"
        rehearsal.make_submission(notebook, source, notebook, broken=[f"answer_{UNWRITTEN}"])
    if kit.real_ids(["06_rope"]):  # a wrong, a right and an unfinished function
        rehearsal.clockwise_rope_learner(
            root / "notebooks" / "06_rope" / "06_rope.ipynb",
            root / "source" / "06_rope" / "06_rope.ipynb",
            root / "notebooks" / "06_rope" / f"{LEARNER}.ipynb",
        )


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving a temporary copy of the course; yields (url, token)."""
    tmp_path = tmp_path_factory.mktemp("lab")
    with serve_course(tmp_path, kit.real_ids(ASSIGNMENTS), _learners) as served:
        yield served


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


def _stop_kernels(url: str, token: str) -> None:
    """Shut every session down, so that one notebook's kernel at a time uses the machine."""
    with urllib.request.urlopen(f"{url}/api/sessions?token={token}", timeout=10) as r:
        sessions = json.load(r)
    for session in sessions:
        request = urllib.request.Request(
            f"{url}/api/sessions/{session['id']}?token={token}", method="DELETE"
        )
        urllib.request.urlopen(request, timeout=30).close()


def _open_and_run(page, url: str, token: str, assignment: str, name: str = ""):
    """Open the notebook with the file browser shown, run all cells; the explorer's box.

    ``name``: another notebook of the assignment's folder (``06_rope_learner``)."""
    # ?reset: a fresh workspace, without the tabs of the notebooks opened before
    path = f"notebooks/{assignment}/{name or assignment}.ipynb"
    page.goto(f"{url}/lab/tree/{path}?reset&token={token}")
    page.locator(".jp-NotebookPanel").first.wait_for()
    _kernel_ready(page, path)
    if not page.locator("#filebrowser").is_visible():
        page.locator("li[data-id='filebrowser']").first.click()
        page.locator("#filebrowser").wait_for()
    page.screenshot(path=str(ARTIFACTS / f"{assignment}-opened.png"))
    page.get_by_role("menuitem", name="Run").first.click()
    page.get_by_text("Run All Cells", exact=True).first.click()
    explorer = (
        page.locator(".widget-vbox")
        .filter(has=page.locator("img"))
        .filter(has=page.locator(".widget-slider"))
        .first
    )
    try:
        page.wait_for_function(RUN_DONE_JS, polling=500, timeout=RUN_ALL_MS)
        if not explorer.count():  # the run is over: its view is drawn now, or never
            from playwright.sync_api import TimeoutError as PlaywrightTimeout

            try:
                explorer.wait_for(timeout=30_000)
            except PlaywrightTimeout:
                errors = page.locator(".jp-OutputArea-output").all_inner_texts()
                shown = "\n".join(t for t in errors if "Error" in t)
                pytest.fail(f"{path}: Run All ended without an explorer:\n{shown[-3000:]}")
    finally:
        page.screenshot(path=str(ARTIFACTS / f"{assignment}-run.png"))
    image = explorer.locator("img").first
    image.scroll_into_view_if_needed()
    page.wait_for_function("el => el.naturalWidth > 0", arg=image.element_handle())
    return explorer, image


def _slider(page, explorer, label: str):
    return (
        explorer.locator(".widget-slider")
        .filter(has=page.locator(".widget-label", has_text=label))
        .filter(has=page.get_by_text(label, exact=True))
        .first
    )


def _box(page, explorer, label: str):
    """The number box beside the slider ``label``."""
    return (
        explorer.locator(".pe-control")
        .filter(has=page.get_by_text(label, exact=True))
        .first.locator(".pe-value input")
        .first
    )


def _set(page, explorer, image, label: str, value: str) -> tuple[float, float]:
    """Type ``value`` into the box beside the slider ``label``; ms from Enter to the first
    new picture decoded in the page, and to the last one (a large ALiBi move sends two)."""
    readout = _box(page, explorer, label)
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(value)
    page.evaluate(WATCH_JS, [readout.element_handle(), image.element_handle()])
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.__latency.frames.length > 0", timeout=120_000)
    seen = 0
    while True:  # until no new frame arrives for SETTLE seconds
        time.sleep(SETTLE)
        lat = page.evaluate("() => window.__latency")
        if len(lat["frames"]) == seen:
            break
        seen = len(lat["frames"])
    return lat["frames"][0] - lat["t0"], lat["frames"][-1] - lat["t0"]


def _png(path: Path) -> np.ndarray:
    import matplotlib.image

    return np.asarray(matplotlib.image.imread(path), dtype=float)


def _explorer_classes(assignment: str) -> list[type]:
    """The explorers the notebook imports (``from helpers.widgets.<module> import ...``)."""
    import re

    notebook = kit.REPO / "notebooks" / assignment / f"{assignment}.ipynb"
    modules = set(re.findall(r"from helpers\.widgets\.(\w+) import", notebook.read_text()))
    return [cls for module, cls in bench.explorer_classes() if module in modules]


# Pages that have not stopped moving, and one that has, for the wait the tests use
# (_settled): an output that grows every frame, a widget output still loading, a picture
# that never arrives (a server that answers nothing), and a still page drawn late.
MOVING = (
    '<div class="jp-OutputArea-output" id="o" style="width:10px">x</div><script>'
    "let w = 10; (function grow() { w += 1; o.style.width = w + 'px'; "
    "requestAnimationFrame(grow); })();</script>"
)
LOADING = '<div class="jp-OutputArea-output">Loading widget...</div>'
STILL = (
    '<div class="jp-OutputArea-output" id="o"></div><script>setTimeout(() => '
    "{ o.innerHTML = '<div class=\"widget-vbox\">drawn</div>'; }, 300);</script>"
)


@pytest.mark.skipif(bool(_skip_reason()), reason=_skip_reason() or "ready")
def test_the_wait_for_a_still_page_waits_for_what_moves(browser):
    """_settled fails on a page that keeps moving or still loads, and returns on a still one
    (after what it drew late: a wait for a condition, not a time)."""
    import http.server
    import threading

    class Silent(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            time.sleep(3)  # a picture that does not come in the wait's time
            self.send_error(404)

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Silent)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    page = browser.new_page()
    try:
        never = f'<div class="jp-OutputArea-output"><img src="http://127.0.0.1:{port}/a.png"></div>'
        for html, said in (
            (MOVING, "0 widget outputs loading, 0 pictures loading"),
            (LOADING, "1 widget outputs loading"),
            (never, "1 pictures loading"),
        ):
            page.set_content(html, wait_until="commit")
            with pytest.raises(AssertionError, match=said):
                _settled(page, ms=1500)
        page.set_content(STILL)
        start = time.monotonic()
        _settled(page, ms=10_000)
        assert page.locator(".widget-vbox").count() == 1, "returned before the late drawing"
        assert time.monotonic() - start < 5, "a still page took seconds"
    finally:
        page.close()
        server.shutdown()
        server.server_close()


@pytest.mark.skipif(bool(_skip_reason()), reason=_skip_reason() or "ready")
def test_widget_slider_changes_figure(lab, browser):
    """Run all cells of 02_sincos; the explorer renders; moving ``d`` redraws its figure."""
    assignment = "02_sincos"
    if not kit.real_ids([assignment]):
        pytest.skip(f"source/{assignment} does not exist yet")
    url, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(120_000)
    try:
        explorer, image = _open_and_run(page, url, token, assignment)
        image.screenshot(path=str(ARTIFACTS / f"{assignment}-before.png"))
        _set(page, explorer, image, "d", "8")
        _settled(page)
        image.screenshot(path=str(ARTIFACTS / f"{assignment}-after.png"))
    finally:
        page.close()
        _stop_kernels(url, token)
    before = _png(ARTIFACTS / f"{assignment}-before.png")
    after = _png(ARTIFACTS / f"{assignment}-after.png")
    assert before.shape[0] > 100 and before.shape[1] > 100, "the plot area is rendered"
    assert before.std() > 0.01, "the figure is not blank"
    h, w = min(before.shape[0], after.shape[0]), min(before.shape[1], after.shape[1])
    changed = np.abs(before[:h, :w] - after[:h, :w]).max(axis=-1) > 0.05
    assert changed.mean() > 0.01, f"only {changed.mean():.2%} of the plot changed"


@pytest.mark.skipif(bool(_skip_reason()), reason=_skip_reason() or "ready")
def test_korean_notebook_answers_in_korean(lab, browser):
    """Run all cells of 06_rope_ko with one exercise unwritten: the notebook goes on to the
    end, and the self-check names that function in a Korean verdict."""
    import re

    if not kit.real_ids([KOREAN]):
        pytest.skip(f"{KOREAN} does not exist yet")
    url, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000}, device_scale_factor=2)
    page.set_default_timeout(120_000)
    try:
        explorer, _ = _open_and_run(page, url, token, KOREAN)
        _settled(page)
        explorer.screenshot(path=str(ARTIFACTS / f"{KOREAN}-explorer.png"))
        last = page.locator(".jp-Cell").last
        last.locator(".jp-OutputArea-output").first.wait_for(timeout=300_000)
        last.scroll_into_view_if_needed()
        page.wait_for_function(  # the self-check's table is printed
            "el => el.innerText.includes('apply_rope')",
            arg=last.element_handle(),
            timeout=300_000,
        )
        verdict = last.locator(".jp-OutputArea").inner_text()
        last.screenshot(path=str(ARTIFACTS / f"{KOREAN}-self-check.png"))
        title = page.locator(".jp-MarkdownCell").first.inner_text()
    finally:
        page.close()
        _stop_kernels(url, token)
    hangul = re.compile("[\uac00-\ud7a3]")
    print(f"\n{KOREAN} self-check:\n{verdict}")
    assert hangul.search(title), f"the first cell is not in Korean: {title[:200]!r}"
    line = next((ln for ln in verdict.splitlines() if ln.startswith(UNWRITTEN)), "")
    assert line, f"the self-check does not list {UNWRITTEN}:\n{verdict}"
    assert hangul.search(line) and "NotImplementedError" not in line.split()[0], (
        f"the verdict on {UNWRITTEN} is not in Korean: {line!r}"
    )
    passed = [ln for ln in verdict.splitlines() if ln.startswith("apply_rope")]
    assert passed and hangul.search(passed[0]), f"apply_rope's verdict: {passed}"


# Records, in the page, a drag of a slider's handle: the moments of the press and the
# release, and those of every new picture decoded in the explorer's image.
DRAG_JS = """(img) => {
  const drag = {down: null, up: null, frames: []};
  window.__drag = drag;
  document.addEventListener('pointerdown', e => { drag.down = e.timeStamp; }, {capture: true});
  document.addEventListener('pointerup', e => { drag.up = e.timeStamp; }, {capture: true});
  new MutationObserver(() => {
    const done = () => { drag.frames.push(performance.now()); };
    img.decode().then(done, done);
  }).observe(img, {attributes: true, attributeFilter: ['src']});
}"""
DRAG_STEPS, DRAG_PX, STEP_S = 40, 4, 0.025  # 160 px in about 1 s, as a hand would drag


def _drag(page, explorer, image, label: str, name: str) -> dict:
    """Drag the handle of slider ``label`` 160 px to the right; screenshots before, during
    (before the release) and after. Returns the page's record and the readouts."""
    slider = _slider(page, explorer, label)
    handle = slider.locator(".noUi-handle").first
    readout = _box(page, explorer, label)
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    image.screenshot(path=str(ARTIFACTS / f"{name}-drag-before.png"))
    start = readout.input_value().strip()
    page.evaluate(DRAG_JS, image.element_handle())
    page.mouse.move(x, y)
    page.mouse.down()
    seen = []
    for i in range(1, DRAG_STEPS + 1):
        page.mouse.move(x + i * DRAG_PX, y)
        time.sleep(STEP_S)
        if i % 10 == 0:
            seen.append(readout.input_value().strip())
    time.sleep(0.3)  # still held: the picture of the newest value arrives meanwhile
    during = page.evaluate("() => window.__drag.frames.length")
    image.screenshot(path=str(ARTIFACTS / f"{name}-drag-held.png"))
    page.mouse.up()
    count = -1
    while True:  # until no new frame arrives for SETTLE seconds
        time.sleep(SETTLE)
        record = page.evaluate("() => window.__drag")
        if len(record["frames"]) == count:
            break
        count = len(record["frames"])
    image.screenshot(path=str(ARTIFACTS / f"{name}-drag-after.png"))
    return record | {
        "during": during,
        "start": start,
        "seen": seen,
        "end": readout.input_value().strip(),
    }


@pytest.mark.skipif(bool(_skip_reason()), reason=_skip_reason() or "ready")
def test_a_drag_redraws_the_explorer_before_the_release(lab, browser):
    """06_rope: a mouse drag of ``m`` and of ``base`` redraws the figure while the button is
    held (continuous updates); the last frame comes soon after the release (stale values
    are dropped, not queued); the arrow keys step ``m`` by one; ``base`` keeps one readout
    format. The timings of the drags are printed."""
    import re

    assignment = "06_rope"
    url, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(120_000)
    drags = {}
    try:
        explorer, image = _open_and_run(page, url, token, assignment)
        _settled(page)
        for label, name in (("m (query)", "m"), ("base", "base")):
            drags[name] = _drag(page, explorer, image, label, f"{assignment}-{name}")
        m = _slider(page, explorer, "m (query)")
        box = _box(page, explorer, "m (query)")
        before = int(box.input_value())
        m.locator(".noUi-handle").first.focus()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowLeft")
        time.sleep(SETTLE)
        after = int(box.input_value())
        # a value typed out of range: set to the end of the range, and said, with the range
        _set(page, explorer, image, "m (query)", "100000")
        clamped = box.input_value()
        note = explorer.locator(".pe-note").inner_text()
    finally:
        page.close()
        _stop_kernels(url, token)
    load = os.getloadavg()
    for name, d in drags.items():
        frames = d["frames"]
        gaps = [b - a for a, b in itertools.pairwise(frames) if a < d["up"]]
        print(
            f"\n{assignment}: drag of {name} ({DRAG_STEPS} moves of {DRAG_PX} px in about "
            f"{DRAG_STEPS * STEP_S:.1f} s, readout {d['start']} -> {', '.join(d['seen'])} -> "
            f"{d['end']}): {len(frames)} frames, {d['during']} before the release; press to "
            f"first frame {frames[0] - d['down']:.0f} ms; between frames while dragging: median "
            f"{statistics.median(gaps) if gaps else float('nan'):.0f} ms, max "
            f"{max(gaps) if gaps else float('nan'):.0f} ms; release to last frame "
            f"{frames[-1] - d['up']:.0f} ms (load {load[0]:.2f})"
        )
    for name, d in drags.items():
        assert d["during"] >= 2, f"{name}: the figure did not change while dragging: {d}"
        assert d["end"] != d["start"], f"{name}: the drag did not move the slider: {d}"
        before_png = _png(ARTIFACTS / f"{assignment}-{name}-drag-before.png")
        held = _png(ARTIFACTS / f"{assignment}-{name}-drag-held.png")
        h, w = min(before_png.shape[0], held.shape[0]), min(before_png.shape[1], held.shape[1])
        changed = np.abs(before_png[:h, :w] - held[:h, :w]).max(axis=-1) > 0.05
        assert changed.mean() > 0.002, f"{name}: the picture held mid-drag did not change"
        assert len(d["frames"]) < DRAG_STEPS, f"{name}: a frame per mouse move was queued"
    assert after == before + 1, f"arrow keys: {before} -> {after}, expected {before + 1}"
    assert clamped == "4096", f"100000 typed for m: the box shows {clamped}"
    assert "m (query): 100000 is outside 0 to 4096; set to 4096." in note, note
    assert "press ← →" in note, f"the explorer does not say how to aim: {note}"
    # one readout format for base over the drag: plain decimals, never an exponent
    plain = re.compile(r"^\d[\d,]*(\.\d+)?$")
    for shown in [drags["base"]["start"], *drags["base"]["seen"], drags["base"]["end"]]:
        assert plain.match(shown), f"base readout {shown!r} is not in plain decimals"


@pytest.mark.skipif(bool(_skip_reason()), reason=_skip_reason() or "ready")
def test_run_all_goes_past_a_failing_visible_test_to_the_self_check(lab, browser):
    """06_rope with a clockwise apply_rope and turns unwritten, run from the Run menu: the
    failing visible tests show what came back, and Run All reaches the self-check."""
    if not kit.real_ids(["06_rope"]):
        pytest.skip("source/06_rope does not exist yet")
    url, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000}, device_scale_factor=2)
    page.set_default_timeout(120_000)
    try:
        _open_and_run(page, url, token, "06_rope", LEARNER)
        last = page.locator(".jp-Cell").last
        last.scroll_into_view_if_needed()
        page.wait_for_function(
            "el => el.innerText.includes('graded functions passed')",
            arg=last.element_handle(),
            timeout=300_000,
        )
        # all of it, the details of each row included (closed <details> are not inner text)
        table = last.locator(".jp-OutputArea").text_content()
        last.screenshot(path=str(ARTIFACTS / f"{LEARNER}-self-check.png"))
        test = page.locator(".jp-CodeCell").filter(
            has=page.get_by_text("apply_rope: pairs turn counter-clockwise")
        )
        test.first.scroll_into_view_if_needed()
        shown = test.first.locator(".jp-OutputArea").inner_text()
        test.first.screenshot(path=str(ARTIFACTS / f"{LEARNER}-apply-rope-test.png"))
    finally:
        page.close()
        _stop_kernels(url, token)
    print(f"\n{LEARNER}: apply_rope's visible test:\n{shown}\n{LEARNER} self-check:\n{table}")
    assert "7 of 9 graded functions passed" in table, table
    assert "clockwise rotation" in " ".join(table.split())
    assert "What came back:" in shown and "-0.841471" in shown, shown
    assert "[this test failed (see above)." in shown


def _restart_kernel(page, path: str) -> None:
    """Kernel > Restart Kernel…, and the dialog's Restart; returns once the kernel has
    restarted and is connected and idle again."""
    page.evaluate(
        """() => {
          const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
          window.__restarted = false;
          kernel.statusChanged.connect((_, status) => {
            if (status === 'restarting' || status === 'autorestarting') window.__restarted = true;
          });
        }"""
    )
    page.get_by_role("menuitem", name="Kernel").first.click()
    page.get_by_text("Restart Kernel…", exact=True).first.click()
    page.locator(".jp-Dialog button.jp-mod-accept").click()
    page.locator(".jp-Dialog").wait_for(state="detached")
    page.wait_for_function("() => window.__restarted", timeout=KERNEL_START_MS)
    _kernel_ready(page, path)


@pytest.mark.skipif(bool(_skip_reason()), reason=_skip_reason() or "ready")
def test_after_a_restart_a_test_and_the_explorer_say_run_the_first_cell(lab, browser):
    """02_sincos run, then its kernel restarted: a visible test run alone says to run the
    first cell (helpers.start) again, and so does the explorer (its sliders still move)."""
    assignment = "02_sincos"
    url, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(120_000)
    try:
        explorer, _image = _open_and_run(page, url, token, assignment)
        note = explorer.locator(".pe-stale-text")
        assert note.count() == 1 and not note.is_visible()  # its kernel is there
        _restart_kernel(page, f"notebooks/{assignment}/{assignment}.ipynb")
        test = (
            page.locator(".jp-CodeCell")
            .filter(has=page.get_by_text("angle_rates: d=4 gives 1 and 0.01"))
            .first
        )
        test.locator(".jp-InputArea-editor").click()
        page.keyboard.press("Control+Enter")
        output = test.locator(".jp-OutputArea")
        output.get_by_text("Run the first cell (helpers.start) again").wait_for()
        said_test = " ".join(output.inner_text().split())
        test.screenshot(path=str(ARTIFACTS / f"{assignment}-restarted-test.png"))
        box = _box(page, explorer, "d")
        box.click()
        page.keyboard.press("Control+A")
        page.keyboard.type("8")
        page.keyboard.press("Enter")
        note.wait_for(state="visible", timeout=30_000)
        said_explorer = note.inner_text()
        explorer.screenshot(path=str(ARTIFACTS / f"{assignment}-restarted-explorer.png"))
    finally:
        page.close()
        _stop_kernels(url, token)
    print(f"\nthe test after the restart: {said_test}\nthe explorer: {said_explorer}")
    assert "NameError" in said_test and "np is not defined" in said_test, said_test
    assert "The kernel that drew this figure has restarted" in said_explorer
    assert "Run the first cell (helpers.start) again, then this cell." in said_explorer

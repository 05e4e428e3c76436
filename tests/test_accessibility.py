"""Accessibility of every notebook page, measured in a real browser.

Each learner notebook, in English and in Korean, answered with the source's solutions, is
opened in JupyterLab (headless Chromium through Playwright, a 1400 x 1000 window at 2 device
pixels per CSS pixel, with the file browser open) and run from the Run menu to its last cell.
On that page:

- layout: every slider track of every explorer is at least 200 px wide, the
  controls wrap onto rows inside the output, neither the notebook nor an output scrolls
  sideways, and each picture has 2 pixels per CSS pixel; on the English pages the page's
  scale of the figure times the size of each of its texts is at least 12 CSS pixels
  (``figure_text.MIN_PX``) and no two texts overlap (the Korean figures' texts are measured
  in ``tests/test_widgets_text.py``). Screenshots of each explorer and of the page.

- axe-core (from its npm package in ``build/axe/``, installed by ``make system-deps``; no
  CDN) checks the rules of WCAG 2.0, 2.1 and 2.2, levels A and AA. A violation whose element
  sits in a cell's output or rendered Markdown is the course's (explorers, figures, printed
  tables, prose) and must not be there; the others are JupyterLab's or nbgrader's (menus,
  toolbars, CodeMirror editors): they are counted and printed by rule, not asserted
  (``docs/accessibility.md`` lists them).
- keyboard alone: from an explorer's first control, Tab reaches each of its controls in
  turn before it leaves the explorer; each slider handle has a name and announces the
  value its number box shows (32, not a log position); the arrow keys move it and the
  figure follows; Space toggles each checkbox.
- 200 % zoom: the same page in a 1280-pixel window zoomed to 200 % (a 640 x 400 CSS-pixel
  viewport at 2 device pixels per CSS pixel): every control of each explorer stays inside
  its output and the window, no label is cut, and the figures shrink to the output instead
  of scrolling sideways. Screenshots go to ``artifacts/browser/a11y/``.
"""

from __future__ import annotations

import functools
import importlib
import json
import time
from dataclasses import dataclass

import pytest

from helpers.widgets.base import Explorer
from tests import classroom_kit as kit
from tests import figure_text
from tests.test_browser import (
    ALL_RUN_JS,
    ARTIFACTS,
    ASSIGNMENTS,
    LAYOUT_JS,
    MIN_TRACK,
    _explorer_classes,
    _open_and_run,
    _settled,
    _skip_reason,
    _stop_kernels,
    browser,  # noqa: F401  (a fixture)
    serve_course,
)

bench = importlib.import_module("bench.widget_update")

pytestmark = [pytest.mark.slow, pytest.mark.browser]

AXE = kit.REPO / "build" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]
PAGES = kit.real_ids([*ASSIGNMENTS, *(f"{a}_ko" for a in ASSIGNMENTS)])
SHOTS = ARTIFACTS / "a11y"
WINDOW = {"width": 1400, "height": 1000}
ZOOMED = {"width": 640, "height": 400}  # a 1280 x 800 window at 200 %
TALL = 1600  # the height of the window the zoomed explorers are photographed in


def _reason() -> str:
    if not AXE.exists():
        return f"axe-core is not installed in {AXE.parent}: run `make system-deps`"
    return _skip_reason()


pytestmark.append(pytest.mark.skipif(bool(_reason()), reason=_reason() or "ready"))

# axe.run on the whole page; each node of a violation is the course's when its element is
# inside a cell's output or rendered Markdown, else the application's.
AXE_JS = """async (tags) => {
  const results = await axe.run(document, {
    runOnly: {type: 'tag', values: tags}, resultTypes: ['violations'], elementRef: true,
  });
  const course = [], upstream = [];
  for (const v of results.violations) {
    for (const n of v.nodes) {
      const el = n.element;
      const ours = el && el.closest && el.closest('.jp-OutputArea-output, .jp-MarkdownOutput');
      (ours ? course : upstream).push({
        rule: v.id, impact: n.impact, target: n.target.join(' '),
        html: n.html.slice(0, 300), why: n.failureSummary,
      });
    }
  }
  return {course, upstream, version: axe.version};
}"""

# Every control of an explorer a keyboard can reach, in the page's order.
CONTROLS_JS = """(box) => [...box.querySelectorAll(
    'input, button, select, textarea, summary, a[href], [tabindex]:not([tabindex="-1"])')]
  .filter(e => !e.disabled && e.getClientRects().length > 0)"""

# Name and value of every slider handle with the number box beside it.
SLIDERS_JS = """(box) => [...box.querySelectorAll('.widget-slider')].map(s => {
  const handle = s.querySelector('.noUi-handle');
  const pair = s.closest('.pe-control');
  const input = pair ? pair.querySelector('.pe-value input') : null;
  return {label: s.querySelector('.widget-label').textContent,
          name: handle.getAttribute('aria-label') || '',
          valuetext: handle.getAttribute('aria-valuetext') || '',
          box: input ? input.value : null};
})"""

# Layout of an explorer at 200 %: its controls against its output and the window.
ZOOM_JS = """(box) => {
  const out = box.closest('.jp-OutputArea-output') || box.parentElement;
  const o = out.getBoundingClientRect();
  // what a reader uses of each control: its label, its track, its box, its checkbox
  const controls = [...box.querySelectorAll(
      '.widget-label, .noUi-target, .widget-text input, .widget-checkbox input')]
    .filter(c => c.getClientRects().length > 0)
    .map(c => {
      const r = c.getBoundingClientRect();
      const w = c.closest('.widget-slider, .widget-text, .widget-checkbox');
      const l = w && w.querySelector('.widget-label, label');
      return {label: `${l ? l.textContent : ''} ${c.className || c.tagName}`, left: r.left,
              right: r.right, width: r.width};
    });
  const cut = [...box.querySelectorAll('.widget-label')]
    .filter(l => l.scrollWidth > l.clientWidth + 1).map(l => l.textContent);
  const images = [...box.querySelectorAll('img')].map(i => i.getBoundingClientRect().width);
  return {controls, cut, images, output: {left: o.left, right: o.right, width: o.width,
          scroll: out.scrollWidth, client: out.clientWidth},
          window: window.innerWidth, page: document.documentElement.scrollWidth};
}"""


@dataclass
class Opened:
    name: str
    page: object
    explorers: list


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with serve_course(tmp_path_factory.mktemp("a11y"), PAGES) as served:
        yield served


@pytest.fixture(scope="module", params=PAGES)
def opened(request, lab, browser):  # noqa: F811
    """The notebook's page, run to its last cell: (page, its explorers' boxes)."""
    url, token = lab
    SHOTS.mkdir(parents=True, exist_ok=True)
    # a high-density screen: the screenshots show whether the figures' text is sharp, and
    # 200 % zoom is the 2 device pixels per CSS pixel of a zoomed page; the CSS layout is 1x's
    page = browser.new_page(viewport=WINDOW, device_scale_factor=2)
    page.set_default_timeout(120_000)
    try:
        from playwright.sync_api import TimeoutError as Late

        try:
            _open_and_run(page, url, token, request.param)
        except Late:  # the first page of a busy machine: Run All came before its kernel
            _open_and_run(page, url, token, request.param)
        page.wait_for_function(ALL_RUN_JS, timeout=600_000)
        news = page.get_by_role("button", name="No", exact=True)  # JupyterLab's news prompt
        if news.count():
            news.first.click()
        _settled(page)
        explorers = (
            page.locator(".widget-vbox")
            .filter(has=page.locator("img"))
            .filter(has=page.locator(".widget-slider"))
        )
        yield Opened(request.param, page, [explorers.nth(i) for i in range(explorers.count())])
    finally:
        page.close()
        _stop_kernels(url, token)


@functools.cache
def _figure_texts(cls: type) -> list:
    """The texts of the explorer ``cls`` built on the reference at the course's largest
    sizes (``bench.widget_update.build``), in the figure's own CSS pixels."""
    return figure_text.texts(bench.build(cls).fig, Explorer.dpi)


def test_explorer_layout_and_figure_text(opened):
    """Sliders >= 200 px, controls wrapped inside the output, no horizontal scrollbar, the
    picture at 2 pixels per CSS pixel; the figures' texts large enough as the page shows
    them, and apart (English pages)."""
    page = opened.page
    assert opened.explorers, f"{opened.name}: Run All drew no explorer"
    problems, scale = [], None
    for k, explorer in enumerate(opened.explorers):
        explorer.scroll_into_view_if_needed()
        layout = page.evaluate(LAYOUT_JS, explorer.element_handle())
        explorer.screenshot(path=str(SHOTS / f"{opened.name}-explorer-{k}.png"))
        tracks = ", ".join(f"{s['label']} {s['track']:.0f}" for s in layout["sliders"])
        print(
            f"\n{opened.name}: explorer {k}: window {layout['window']} px, file browser "
            f"{layout['fileBrowser']:.0f} px, output {layout['output']['width']:.0f} px, image "
            f"{layout['image']['width']:.0f} x {layout['image']['height']:.0f} CSS px from "
            f"{layout['image']['natural']} px; slider tracks (px): {tracks}"
        )
        if layout["fileBrowser"] <= 100:
            problems.append(f"explorer {k}: the file browser is closed ({layout['fileBrowser']})")
        if not layout["sliders"]:
            problems.append(f"explorer {k}: shows no slider")
        narrow = [s for s in layout["sliders"] if s["track"] < MIN_TRACK]
        if narrow:
            problems.append(f"explorer {k}: slider tracks narrower than {MIN_TRACK} px: {narrow}")
        if layout["cut"]:
            problems.append(f"explorer {k}: labels cut off: {layout['cut']}")
        out = layout["output"]
        outside = [
            c for c in layout["controls"] if c["width"] <= 0 or c["right"] > out["right"] + 1
        ]
        if outside:
            problems.append(f"explorer {k}: controls cut off or outside the output: {outside}")
        if out["scroll"] > out["client"] + 1:
            problems.append(f"explorer {k}: its output scrolls sideways: {out}")
        notebook = layout["notebook"]
        if notebook["scroll"] > notebook["client"] + 1:
            problems.append(f"the notebook scrolls sideways: {notebook}")
        if layout["image"]["natural"] < 1.9 * layout["image"]["width"]:
            problems.append(f"explorer {k}: the picture is not at 2 pixels a CSS pixel: {layout}")
        if scale is None and layout["image"]["natural"]:
            # the page's scale of the figure: its CSS width over the figure's own
            scale = layout["image"]["width"] / (layout["image"]["natural"] / Explorer.scale)
    page.screenshot(path=str(SHOTS / f"{opened.name}-page.png"))
    if not opened.name.endswith("_ko") and scale is not None:
        print(f"{opened.name}: the page shows the figure at {scale:.3f} of its own size")
        for cls in _explorer_classes(opened.name):
            shown = figure_text.scaled(_figure_texts(cls), scale)
            small = [t for t in shown if t.size < figure_text.MIN_PX]
            problems += [f"{cls.__name__}: {t} is under {figure_text.MIN_PX} px" for t in small]
            problems += [
                f"{cls.__name__}: {a} overlaps {b}" for a, b in figure_text.overlaps(shown)
            ]
    assert not problems, f"{opened.name}:\n" + "\n".join(problems)


def test_axe_finds_no_violation_in_what_the_course_renders(opened):
    """axe-core on the run page: no WCAG 2.2 A/AA violation in the course's outputs and
    prose; JupyterLab's own are printed by rule."""
    page = opened.page
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(AXE_JS, TAGS)
    (SHOTS / f"{opened.name}-axe.json").write_text(json.dumps(found, indent=1))
    for side in ("course", "upstream"):
        rules: dict[str, int] = {}
        for node in found[side]:
            rules[node["rule"]] = rules.get(node["rule"], 0) + 1
        shown = ", ".join(f"{r} {n}" for r, n in sorted(rules.items())) or "none"
        print(
            f"\n{opened.name}: axe {found['version']}: {side}: {len(found[side])} nodes ({shown})"
        )
    details = "\n".join(f"{n['rule']}: {n['target']}: {n['html'][:160]}" for n in found["course"])
    assert not found["course"], f"violations in what the course renders:\n{details}"


def test_explorers_by_keyboard_alone(opened):
    """Tab runs through each explorer's controls in turn; every slider handle is named and
    announces its number box's value; the arrows move it; Space toggles each checkbox."""
    page = opened.page
    problems = []
    for k, explorer in enumerate(opened.explorers):
        box = explorer.element_handle()
        controls = page.evaluate_handle(CONTROLS_JS, box)
        n = page.evaluate("c => c.length", controls)
        assert n >= 2, f"{opened.name}: explorer {k} has {n} controls a keyboard reaches"
        page.evaluate("c => c[0].focus()", controls)
        order = [0]
        for _ in range(n):
            page.keyboard.press("Tab")
            order.append(page.evaluate("c => c.indexOf(document.activeElement)", controls))
        if order != [*range(n), -1]:
            problems.append(f"explorer {k}: Tab visits {order}, expected 0..{n - 1} then out")
        for s in page.evaluate(SLIDERS_JS, box):
            if not s["name"].strip():
                problems.append(f"explorer {k}: the handle of {s['label']} has no name")
            if s["box"] is not None and not _same(s["valuetext"], s["box"]):
                problems.append(
                    f"explorer {k}: {s['label']} announces {s['valuetext']!r}, "
                    f"its box shows {s['box']!r}"
                )
        problems += _arrows_and_space(page, explorer, k)
    explorer_shot = SHOTS / f"{opened.name}-keyboard.png"
    if opened.explorers:
        opened.explorers[0].screenshot(path=str(explorer_shot))
    assert not problems, f"{opened.name}:\n" + "\n".join(problems)


def _same(said: str, shown: str) -> bool:
    """The value a handle announces is the box's (to four significant digits)."""
    try:
        a, b = float(said.split()[0].replace(",", "")), float(shown.replace(",", ""))
    except (ValueError, IndexError):
        return False
    return abs(a - b) <= 1e-3 * max(abs(a), abs(b), 1e-12)


def _wait_change(read, before: str, seconds: float = 20.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        now = read()
        if now != before:
            return now
        time.sleep(0.1)
    return read()


def _arrows_and_space(page, explorer, k: int) -> list[str]:
    """Each slider moved one step by an arrow key and back (its number box, set by the
    kernel, follows; the figure is redrawn by at least one of the moves); each checkbox
    toggled by Space and back."""
    problems = []
    image = explorer.locator("img").first
    pairs = explorer.locator(".pe-control")
    redraws = 0
    for i in range(pairs.count()):
        pair = pairs.nth(i)
        label = pair.locator(".widget-label").first.inner_text()
        handle = pair.locator(".noUi-handle").first
        value = pair.locator(".pe-value input").first
        before, src = value.input_value(), image.get_attribute("src")
        at_max = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemax")
        forth, back = ("ArrowLeft", "ArrowRight") if at_max else ("ArrowRight", "ArrowLeft")
        handle.focus()
        page.keyboard.press(forth)
        moved = _wait_change(value.input_value, before)
        # the box is set by the kernel: its new value is the move's round trip
        if moved == before:
            problems.append(f"explorer {k}: {forth} on {label} left its value at {before}")
        if not redraws:  # one redraw is asked of the explorer; a step may leave every pixel
            # as it was (then this waits its whole time), so once one is seen none is awaited
            redrawn = _wait_change(lambda: image.get_attribute("src"), src, 10.0)
            redraws += redrawn != src
        page.keyboard.press(back)
        _wait_change(value.input_value, moved)
    if pairs.count() and not redraws:
        problems.append(f"explorer {k}: no arrow key move redrew the figure")
    boxes = explorer.locator(".widget-checkbox input[type=checkbox]")
    for i in range(boxes.count()):
        box = boxes.nth(i)
        before = box.is_checked()
        box.focus()
        page.keyboard.press("Space")
        if _wait_change(lambda b=box: str(b.is_checked()), str(before), 5.0) == str(before):
            problems.append(f"explorer {k}: Space did not toggle checkbox {i}")
        page.keyboard.press("Space")
    return problems


def test_controls_and_figures_at_200_percent_zoom(opened):
    """At 200 % in a 1280-pixel window every explorer control stays inside its output and
    the window, no label is cut, the figures shrink to fit: screenshots to look at."""
    page = opened.page
    page.set_viewport_size(ZOOMED)
    try:
        _settled(page)
        problems = []
        shots = []
        for k, explorer in enumerate(opened.explorers):
            explorer.scroll_into_view_if_needed()
            layout = page.evaluate(ZOOM_JS, explorer.element_handle())
            shots.append(explorer)
            out = layout["output"]
            edge = min(out["right"], layout["window"]) + 1
            outside = [
                f"{c['label']} ({c['left']:.0f}..{c['right']:.0f} px)"
                for c in layout["controls"]
                if c["width"] <= 0 or c["right"] > edge or c["left"] < out["left"] - 1
            ]
            if outside:
                problems.append(f"explorer {k}: controls cut off at 200 %: {outside} ({out})")
            if layout["cut"]:
                problems.append(f"explorer {k}: labels cut at 200 %: {layout['cut']}")
            if out["scroll"] > out["client"] + 1:
                problems.append(f"explorer {k}: its output scrolls sideways at 200 %: {out}")
            wide = [w for w in layout["images"] if w > out["width"] + 1]
            if wide:
                problems.append(f"explorer {k}: figures wider than the output: {wide}")
        page.screenshot(path=str(SHOTS / f"{opened.name}-200-page.png"))
        # each explorer whole, to look at: the same width, a window tall enough to hold it
        page.set_viewport_size({"width": ZOOMED["width"], "height": TALL})
        _settled(page)
        for k, explorer in enumerate(shots):
            explorer.scroll_into_view_if_needed()
            explorer.screenshot(path=str(SHOTS / f"{opened.name}-200-explorer-{k}.png"))
        wide = page.evaluate(
            """() => [...document.querySelectorAll('.jp-OutputArea-output img')]
                 .filter(i => i.getBoundingClientRect().right > window.innerWidth + 1)
                 .map(i => i.getBoundingClientRect().width)"""
        )
        if wide:
            problems.append(f"figures run past the window at 200 %: {wide}")
    finally:
        page.set_viewport_size(WINDOW)
    assert not problems, f"{opened.name}:\n" + "\n".join(problems)


def test_every_page_is_measured():
    """The pages measured are every notebook of the course, in both languages."""
    ids = sorted(p.name for p in (kit.REPO / "notebooks").iterdir() if p.is_dir())
    assert sorted(PAGES) == ids, f"measured {sorted(PAGES)}, the course has {ids}"

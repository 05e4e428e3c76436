"""The number box beside an explorer's slider, typed into in a real page.

JupyterLab serves a notebook that draws 07's explorer with the course's reference functions;
headless Chromium runs it and types into the box beside ``heads`` as a learner does (click,
select all, type, Enter). A decimal is read as typed: "2.5" sets heads to 3 and the note under
the controls says that heads takes whole numbers (the page's integer box dropped the point:
"2.5" arrived as 25 and was clamped to 16).
"""

from __future__ import annotations

import json
import secrets

import nbformat
import pytest

from helpers import kernel_info
from tests import classroom_kit as kit
from tests.test_browser import (
    ARTIFACTS,
    CHROMIUM,
    LAUNCH_ARGS,
    _box,
    _free_port,
    _open_and_run,
    _skip_reason,
    _stop_kernels,
    lab_command,
)

pytestmark = [pytest.mark.slow, pytest.mark.browser]

NAME = "boxes"
EXPLORER = """\
import helpers
from helpers.teacher import reference as ref
from helpers.widgets.alibi import alibi_explorer

helpers.start()
alibi_explorer(alibi_slopes=ref.alibi_slopes, alibi_bias=ref.alibi_bias,
               mean_attention_distance=ref.mean_attention_distance, softmax=ref.softmax,
               heads=8, seq_len=16)
"""
# the note under the controls, once it says something
NOTE_JS = """(text) => [...document.querySelectorAll('.widget-html')]
  .some(n => n.textContent.includes(text))"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("boxes")
    root = tmp_path / "course"
    folder = root / "notebooks" / NAME
    folder.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": dict(kernel_info.KERNELSPEC)}  # no kernel dialog
    nb.cells = [nbformat.v4.new_code_cell(EXPLORER)]
    nbformat.write(nb, folder / f"{NAME}.ipynb")
    port, token = _free_port(), secrets.token_hex(16)
    home = tmp_path / "home"
    home.mkdir()
    env = kit.env() | {"HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter")}
    env.pop("NBGRADER_EXECUTION", None)
    cmd = lab_command(root, port, token)
    with kit.lab_server(cmd, root, env, tmp_path / "lab.log", port, token) as url:
        yield url, token


@pytest.mark.skipif(bool(_skip_reason()), reason=_skip_reason() or "ready")
def test_a_decimal_typed_into_heads_is_read_as_typed(lab):
    from playwright.sync_api import sync_playwright

    url, token = lab
    ARTIFACTS.mkdir(parents=True, exist_ok=True)  # the run's screenshots
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
        page = chromium.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(120_000)
        try:
            explorer, _ = _open_and_run(page, url, token, NAME)
            box = _box(page, explorer, "heads")
            box.click()
            page.keyboard.press("Control+A")
            page.keyboard.type("2.5")
            page.keyboard.press("Enter")
            # the note says something of heads: what the box sent
            page.wait_for_function(NOTE_JS, arg="heads", polling=250, timeout=60_000)
            notes = page.locator(".widget-html").all_inner_texts()
            said = "heads takes whole numbers: 2.5 is set to 3."
            assert any(said in n for n in notes), json.dumps(notes, ensure_ascii=False)
            page.wait_for_function("el => el.value === '3'", arg=box.element_handle())
        finally:
            page.close()
            chromium.close()
            _stop_kernels(url, token)

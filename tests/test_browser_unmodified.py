"""A notebook opened in JupyterLab and not edited stays unmodified, in both languages.

A copy of the course's learner notebooks is served by JupyterLab (autosave every second) and
opened in headless Chromium. Once the kernel has started and JupyterLab has written the
kernel's ``language_info`` into the notebook's model, the document must not be dirty, and
after several autosave intervals the file on disk must be byte for byte the committed one.

A control proves the test can see the failure: the same notebook with the metadata it
committed before (``language_info: {name: python}``) becomes dirty when its kernel starts,
and autosave rewrites it.
"""

from __future__ import annotations

import json
import secrets
import time

import pytest

from helpers.teacher.classroom.course import copy_course
from tests import classroom_kit as kit
from tests.test_browser import (  # noqa: F401  (browser: a fixture)
    CHROMIUM,
    LAUNCH_ARGS,
    _free_port,
    _kernel_ready,
    _skip_reason,
    _stop_kernels,
    browser,
    lab_command,
)

pytestmark = [pytest.mark.slow, pytest.mark.browser]

OPENED = ["01_order", "01_order_ko", "13_train_short", "13_train_short_ko"]
CONTROL = "01_order/01_order_before.ipynb"  # 01_order with the metadata committed before
AUTOSAVE_S = 1
WAIT_S = 6  # several autosave intervals after the kernel's language_info is in the model

# The current notebook's model: dirty or not, and the language_info it holds now.
MODEL_JS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const model = panel.context.model;
  return {dirty: model.dirty, language_info: model.getMetadata('language_info') || null,
          kernelspec: model.getMetadata('kernelspec') || null};
}"""
# The kernel's kernel_info reply, once it has come (JupyterLab writes its language_info into
# the model as it comes: after this the model holds the kernel's metadata)
KERNEL_INFO_JS = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  const info = await panel.sessionContext.session.kernel.info;
  return info.language_info;
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab over an unanswered copy of the learner notebooks, autosave every second."""
    tmp_path = tmp_path_factory.mktemp("unmodified")
    root = tmp_path / "course"
    copy_course(kit.REPO, root, kit.real_ids(OPENED))
    control = root / "notebooks" / CONTROL
    nb = json.loads((root / "notebooks/01_order/01_order.ipynb").read_text(encoding="utf-8"))
    nb["metadata"]["language_info"] = {"name": "python"}
    control.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    port, token = _free_port(), secrets.token_hex(16)
    home = tmp_path / "home"
    docmanager = home / ".jupyter/lab/user-settings/@jupyterlab/docmanager-extension"
    docmanager.mkdir(parents=True)
    (docmanager / "plugin.jupyterlab-settings").write_text(
        json.dumps({"autosave": True, "autosaveInterval": AUTOSAVE_S})
    )
    env = kit.env() | {"HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter")}
    env.pop("NBGRADER_EXECUTION", None)
    cmd = lab_command(root, port, token)
    with kit.lab_server(cmd, root, env, tmp_path / "lab.log", port, token) as url:
        yield url, token, root


def _open(browser, url: str, token: str, path: str) -> dict:  # noqa: F811
    """Open ``path``, wait for its kernel and its kernel_info reply, then WAIT_S seconds of
    autosave; the model's state then, and the language_info the kernel reported."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(120_000)
    try:
        page.goto(f"{url}/lab/tree/{path}?reset&token={token}")
        page.locator(".jp-NotebookPanel").first.wait_for()
        _kernel_ready(page, path)
        reported = page.evaluate(KERNEL_INFO_JS)
        time.sleep(WAIT_S)
        return page.evaluate(MODEL_JS) | {"reported": reported}
    finally:
        page.close()
        _stop_kernels(url, token)


@pytest.mark.skipif(bool(_skip_reason()), reason=_skip_reason() or "ready")
@pytest.mark.parametrize("assignment", kit.real_ids(OPENED) or ["none"])
def test_an_opened_notebook_stays_unmodified(lab, browser, assignment):  # noqa: F811
    url, token, root = lab
    path = f"notebooks/{assignment}/{assignment}.ipynb"
    before = (root / path).read_bytes()
    committed = (kit.REPO / path).read_bytes()
    assert before == committed
    state = _open(browser, url, token, path)
    assert state["dirty"] is False, f"{path}: opening it marked it modified: {state}"
    assert (root / path).read_bytes() == committed, (
        f"{path}: autosave rewrote the file; the kernel reported {state['reported']}"
    )


@pytest.mark.skipif(bool(_skip_reason()), reason=_skip_reason() or "ready")
def test_the_metadata_committed_before_was_marked_modified_and_rewritten(lab, browser):  # noqa: F811
    """The control: language_info {name: python} differs from the kernel's, so JupyterLab marks
    the notebook modified and autosave writes the kernel's language_info into the file."""
    url, token, root = lab
    path = f"notebooks/{CONTROL}"
    before = (root / path).read_bytes()
    state = _open(browser, url, token, path)
    after = (root / path).read_bytes()
    assert after != before, "the control notebook was not rewritten"
    saved = json.loads(after)["metadata"]["language_info"]
    assert saved == state["language_info"] and saved["mimetype"] == "text/x-python", saved

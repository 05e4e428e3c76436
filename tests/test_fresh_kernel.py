"""A kernel that has not run the notebook's first cell (after a restart) says to run it again.

Real kernels of this environment, started as Jupyter starts them (``jupyter_client``, in the
notebook's folder): a visible test, the self-check and an explorer cell run before the
first cell fail with their NameError and the note "run the first cell (helpers.start)
again", in the notebook's language; a learner's own NameError stays bare; once the first
cell ran, the note is gone. The kernels load the note from the environment's IPython
configuration (``{sys.prefix}/etc/ipython/ipython_kernel_config.py``), nothing else.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from helpers.i18n import tr
from tests import classroom_kit as kit

pytestmark = pytest.mark.slow

NOTE = (
    "{name} is not defined: this kernel has not run the notebook's first cell "
    "(helpers.start), so it has none of the notebook's names (a restarted kernel forgets "
    "every cell it ran). Run the first cell (helpers.start) again, then the cells above "
    "this one (Run > Run All Above Selected Cell)."
)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run_in_kernel(python: str, folder: Path, cells: list[str], env: dict | None = None):
    """Each cell's error (its traceback as text) or None, in one kernel of ``python``
    started in ``folder``, as Jupyter starts a notebook's kernel."""
    import jupyter_client

    spec = jupyter_client.kernelspec.KernelSpec(
        argv=[python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        display_name="course",
        language="python",
    )
    km = jupyter_client.KernelManager()
    km._kernel_spec = spec
    environment = kit.env()
    environment.pop("NBGRADER_EXECUTION", None)
    environment.update(env or {})
    km.start_kernel(cwd=str(folder), env=environment)
    kc = km.client()
    kc.start_channels()
    said = []
    try:
        kc.wait_for_ready(timeout=120)
        for code in cells:
            msg_id = kc.execute(code)
            error = None
            while True:
                msg = kc.get_iopub_msg(timeout=300)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                if msg["msg_type"] == "error":
                    error = ANSI.sub("", "\n".join(msg["content"]["traceback"]))
                if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                    break
            said.append(error)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return said


def _cells(notebook: Path) -> dict[str, str]:
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return {c.get("id"): "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"}


def _folder(tmp_path: Path, assignment: str) -> Path:
    folder = tmp_path / assignment
    folder.mkdir()
    src = kit.REPO / "notebooks" / assignment / f"{assignment}.ipynb"
    shutil.copy(src, folder / src.name)
    return folder


def test_the_environment_loads_the_note_in_every_kernel():
    config = Path(sys.prefix) / "etc" / "ipython" / "ipython_kernel_config.py"
    assert config.is_file(), f"{config} is missing: run `make setup`"
    assert "helpers.fresh_kernel" in config.read_text(encoding="utf-8")
    assert config.read_text() == (kit.REPO / "etc/ipython/ipython_kernel_config.py").read_text()


def test_a_kernel_before_the_first_cell_says_to_run_it_again(tmp_path):
    assignment = "02_sincos"
    folder = _folder(tmp_path, assignment)
    cells = _cells(folder / f"{assignment}.ipynb")
    test = cells["test_angle_rates_log_space"]
    said = run_in_kernel(
        sys.executable,
        folder,
        [
            test,  # a visible test, as after a restart
            cells["self_check"],
            "sincos_explorer(sinusoidal_pe=sinusoidal_pe)",  # an explorer's cell
            "my_own_variable + 1",  # the learner's own name: bare
            cells["imports"],  # the first cell
            "np.zeros(1) + my_own_variable",
        ],
    )
    first = tr(NOTE, name="np")
    assert "NameError" in said[0] and first in " ".join(said[0].split()), said[0]
    assert tr(NOTE, name="self_check") in " ".join(said[1].split()), said[1]
    explorer = " ".join(said[2].split())
    assert tr(NOTE, name="sincos_explorer") in explorer, explorer
    assert "my_own_variable" in said[3] and "first cell" not in said[3], said[3]
    assert said[4] is None, said[4]
    assert said[5] is not None and "first cell (helpers.start)" not in said[5], said[5]


def test_the_note_speaks_the_notebooks_language(tmp_path):
    assignment = "02_sincos_ko"
    if not kit.real_ids([assignment]):
        pytest.skip(f"{assignment} does not exist")
    folder = _folder(tmp_path, assignment)
    cells = _cells(folder / f"{assignment}.ipynb")
    said = run_in_kernel(sys.executable, folder, [cells["self_check"]])
    want = tr(NOTE, lang="ko", name="self_check")
    assert "첫 셀(helpers.start)을 다시 실행한 뒤" in want
    assert want in " ".join(said[0].split()), said[0]


def test_jupyters_session_name_picks_the_notebook(tmp_path):
    """A kernel started in another folder finds its notebook by JPY_SESSION_NAME (what
    jupyter_server sets): its names get the note, the first-cell names too."""
    folder = _folder(tmp_path, "02_sincos")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"JPY_SESSION_NAME": str(folder / "02_sincos.ipynb")}
    said = run_in_kernel(sys.executable, elsewhere, ["angle_rates(8)", "foo"], env=env)
    assert tr(NOTE, name="angle_rates") in " ".join(said[0].split()), said[0]
    assert "first cell" not in said[1]


def test_while_nbgrader_runs_nothing_is_added(tmp_path):
    folder = _folder(tmp_path, "02_sincos")
    env = {"NBGRADER_EXECUTION": "validate"}
    said = run_in_kernel(sys.executable, folder, ["self_check('02_sincos')"], env=env)
    assert "NameError" in said[0] and "first cell" not in said[0], said[0]


def test_the_hubs_environments_carry_the_kernels_configuration(tmp_path):
    """The hub's teachers' and learners' environments are clones of this one: the kernels'
    configuration goes with them (the learners' comes again with the learner wheel)."""
    from helpers.teacher.classroom import hub_accounts, hub_roster

    hub = hub_roster.Hub(tmp_path / "state", kit.REPO, "course")
    hub.state.mkdir()
    env = hub_accounts.clone_environment(hub, tmp_path / "env", keep_course=False)
    config = env / "etc" / "ipython" / "ipython_kernel_config.py"
    assert 'extensions.append("helpers.fresh_kernel")' in config.read_text(encoding="utf-8")

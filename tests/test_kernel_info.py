"""The metadata a kernel of the course reports is the metadata every notebook commits.

JupyterLab writes the kernel's ``language_info`` and ``kernelspec`` into a notebook when its
kernel starts, and marks the notebook modified only where they differ from the file
(``helpers/kernel_info.py``). A real kernel of this environment, started as Jupyter starts
one (the ``python3`` kernelspec, ``jupyter_client``), answers ``kernel_info`` here; the
notebooks' storage check (``tests/test_notebooks.py``) holds every committed notebook to
``kernel_info.LANGUAGE_INFO``. The browser's side is ``tests/test_browser_unmodified.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers import kernel_info

ROOT = Path(__file__).resolve().parent.parent


def test_the_version_reported_is_the_languages():
    reported = {"name": "python", "version": "3.11.7", "mimetype": "text/x-python"}
    assert kernel_info.language_info(reported) == {
        "name": "python",
        "version": f"{sys.version_info.major}.{sys.version_info.minor}",
        "mimetype": "text/x-python",
    }


def test_the_courses_python_is_environment_ymls():
    text = (ROOT / "environment.yml").read_text(encoding="utf-8")
    assert f"- python={kernel_info.COURSE_PYTHON}\n" in text


def test_every_kernel_of_the_environment_loads_the_extension():
    for config in (
        ROOT / "etc" / "ipython" / "ipython_kernel_config.py",
        Path(sys.prefix) / "etc" / "ipython" / "ipython_kernel_config.py",
    ):
        assert 'extensions.append("helpers.kernel_info")' in config.read_text(encoding="utf-8"), (
            f"{config}: run `make setup` (it installs the repository's copy)"
        )


@pytest.mark.skipif(
    f"{sys.version_info.major}.{sys.version_info.minor}" != kernel_info.COURSE_PYTHON,
    reason=f"the notebooks commit the metadata of Python {kernel_info.COURSE_PYTHON}",
)
def test_a_kernel_of_the_course_reports_what_the_notebooks_commit(tmp_path):
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        msg_id = client.kernel_info()
        while True:
            reply = client.get_shell_msg(timeout=60)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert reply["content"]["language_info"] == kernel_info.LANGUAGE_INFO
    spec = KernelSpecManager().get_kernel_spec("python3")
    # JupyterLab writes {name, display_name, language} of the kernel's spec
    assert {
        "name": "python3",
        "display_name": spec.display_name,
        "language": spec.language,
    } == kernel_info.KERNELSPEC

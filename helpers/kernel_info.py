"""The notebook metadata a kernel of the course reports, and the copy every notebook commits.

When JupyterLab 4 opens a notebook and its kernel starts, it writes the kernel's
``language_info`` (its ``kernel_info`` reply) and ``kernelspec`` into the notebook's
metadata. The shared notebook model compares each key with what the file holds
(``JSONExt.deepEqual`` in ``YNotebook.setMetadata``) and marks the notebook modified only
when they differ; a modified notebook is then written by autosave. So a notebook whose
committed metadata is exactly what its kernel reports stays unmodified until the learner
edits it, and ``git status`` stays clean.

ipykernel reports ``version`` as the interpreter's full version (``3.11.7``), which no
committed file can match for every learner's patch release. This module is an IPython
extension every kernel of the course's environment loads
(``{sys.prefix}/etc/ipython/ipython_kernel_config.py``): it reports the language's version,
``major.minor`` (``3.11``), the same for every 3.11.x. ``LANGUAGE_INFO`` is what the kernels
of the course's Python (``COURSE_PYTHON``, environment.yml's ``python=3.11``) report, and
what every notebook of ``source/`` commits (``notebooks/`` and the Korean sources are
generated from them and keep it); on another Python the version differs and opening a
notebook marks it modified.
"""

from __future__ import annotations

import sys

__all__ = [
    "COURSE_PYTHON",
    "KERNELSPEC",
    "LANGUAGE_INFO",
    "language_info",
    "load_ipython_extension",
]

COURSE_PYTHON = "3.11"
# ipykernel's IPythonKernel.language_info, with the language's version
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
    "version": COURSE_PYTHON,
}
# what JupyterLab writes for ipykernel's own kernelspec, python3
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def language_info(reported: dict) -> dict:
    """``reported`` (ipykernel's ``language_info``) with the language's version, major.minor."""
    return {**reported, "version": f"{sys.version_info.major}.{sys.version_info.minor}"}


def load_ipython_extension(shell) -> None:
    """Loaded by every kernel of the environment: its kernel_info reports ``language_info``."""
    kernel = getattr(shell, "kernel", None)
    if kernel is not None and isinstance(getattr(kernel, "language_info", None), dict):
        kernel.language_info = language_info(kernel.language_info)

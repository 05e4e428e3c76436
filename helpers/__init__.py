"""Shared code of the positional-encodings course: reference, grader, widgets, plots, CLI.

Importing this package has no side effects. Modules, one job each:

- ``helpers.reference``: the reference maths of every graded function (teacher build only)
- ``helpers.checks``: what each graded function is checked on; ``helpers.mistakes``: the
  known mistakes, as wrong implementations the checks recognise by name
- ``helpers.grader``: the grading engine (isolated import, verdicts, self-check)
- ``helpers.nbgrader_plugin``: the nbgrader preprocessors that call the grader
- ``helpers.sandbox``: the bubblewrap sandbox of the grading kernel and worker
- ``helpers.classroom``: the teacher's commands (release, collect, autograde, feedback, grades)
- ``helpers.learner_build``: the wheel for learners, without the teacher's modules
- ``helpers.widgets``: the interactive explorers of each notebook
- ``helpers.plots``: static figures
- ``helpers.validate``: argument checks with clear errors
- ``helpers.cli``: ``python -m helpers ...``
"""

from __future__ import annotations

__version__ = "1.0.0"

ASSIGNMENTS = (
    "01_order",
    "02_sincos",
    "03_norm",
    "04_decay",
    "05_rotation",
    "06_rope",
    "07_alibi",
    "08_offsets",
)


def versions() -> dict[str, str]:
    """Versions of Python and of the libraries the notebooks use."""
    import platform
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in ("numpy", "matplotlib", "ipywidgets", "nbgrader"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    out["helpers"] = __version__
    return out


def print_versions() -> None:
    """Print one line with the versions (the first cell of every notebook calls it)."""
    print("  ".join(f"{k} {v}" for k, v in versions().items()))

"""Shared code of the positional-encodings course: explorers, figures, grader, command line.

Importing this package has no side effects. Modules, one job each:

- ``helpers.i18n``: the languages (English, Korean) and the message catalogue, ``tr``
- ``helpers.validate``: argument checks with clear errors
- ``helpers.plots``: static figures; ``helpers.widgets``: one explorer per notebook
- ``helpers.grader``: ``grade`` and ``self_check``, as the notebooks call them
- ``helpers.session``: ``start()``, the first cell: Run All goes on past an unwritten exercise
  and a failed visible test, tracebacks at the failing line
- ``helpers.came_back``: what a failed visible assert compared, next to what was expected
- ``helpers.report``: the self-check's table (rows as plain data, wrapped messages)
- ``helpers.reference``: the reference maths of every graded function, by spec name
  (``from helpers.reference import apply_rope``; the teacher's installation only)
- ``helpers.cli``: ``python -m helpers ...``
- ``helpers.teacher``: everything only the teacher needs (the reference, the checks, the
  isolated grader, the nbgrader plugin, the classroom commands). The learner build is
  this package without that folder; ``has_teacher()`` says whether it is here.
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
    "09_families",
    "10_long_context",
)


def has_teacher() -> bool:
    """True in the teacher's installation (``helpers.teacher`` is here), False in the learner build."""
    from importlib.util import find_spec

    try:
        return find_spec("helpers.teacher") is not None
    except ValueError:  # sys.modules["helpers.teacher"] is None: its import is blocked
        return False


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


def start(lang: str = "en") -> None:
    """The first cell of every notebook: speak ``lang`` (``"ko"`` in the Korean notebooks),
    print the versions, and let Run All go on past an exercise that is not written yet
    (``helpers.session``; not while nbgrader runs)."""
    from helpers import i18n, session

    i18n.set_language(lang)
    session.start()


def print_versions() -> None:
    """Print one line with the versions (the first cell of every notebook calls it)."""
    print("  ".join(f"{k} {v}" for k, v in versions().items()))

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


def _assignments() -> tuple[str, ...]:
    """The notebooks of the course, in order: every ``source/<id>/<id>.ipynb`` of the course
    folder around this package (``notebooks/`` where there is no ``source/``), without the
    translations (``<id>_ko`` is built from ``<id>``); empty outside a course folder."""
    from pathlib import Path

    from helpers.i18n import split_assignment

    course = Path(__file__).resolve().parent.parent
    folder = course / "source" if (course / "source").is_dir() else course / "notebooks"
    found = (p.parent.name for p in folder.glob("*/*.ipynb") if p.stem == p.parent.name)
    return tuple(sorted(i for i in found if split_assignment(i)[1] == "en"))


def __getattr__(name: str):
    if name == "ASSIGNMENTS":  # read from the course folder on first use, then kept
        globals()["ASSIGNMENTS"] = value = _assignments()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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

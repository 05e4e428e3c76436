"""The learner build of ``helpers``: a wheel without the reference, the checks and the grading.

Learners install it on their own machines (``pip install pe_course_helpers-...whl``) to run
the notebooks, the explorers and the figures. What stays on the teacher's side:

- ``helpers/reference.py`` (the reference maths: the solutions),
- ``helpers/checks.py`` and ``helpers/mistakes.py`` (the hidden checks and the catalogue),
- ``helpers/nbgrader_plugin.py``, ``helpers/sandbox.py``, ``helpers/classroom.py`` and this
  module (grading and the teacher's workflow).

``helpers.grader`` stays: its ``self_check`` finds no checks and says that grading happens on
the teacher's side. The wheel has the same distribution name as the full package, so it
replaces it, and a local version label ``+learner``.

    python -m helpers learner-build --out dist/
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Modules of ``helpers`` that never leave the teacher's machine.
TEACHER_ONLY = (
    "reference.py",
    "checks.py",
    "mistakes.py",
    "nbgrader_plugin.py",
    "sandbox.py",
    "classroom.py",
    "learner_build.py",
)
# Dependencies a learner does not need (grading, tests, lint).
TEACHER_DEPENDENCIES = ("nbgrader", "pytest", "hypothesis", "playwright", "ruff")


def _requirement_name(req: str) -> str:
    return re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0].lower()


def learner_dependencies(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The project's dependencies minus the teacher's (kept with their lower bounds)."""
    with open(pyproject, "rb") as fh:
        deps = tomllib.load(fh)["project"]["dependencies"]
    return [d for d in deps if _requirement_name(d) not in TEACHER_DEPENDENCIES]


def stage(dest: Path, root: Path = ROOT) -> Path:
    """Write the filtered project (``pyproject.toml`` and ``helpers/``) into ``dest``."""
    with open(root / "pyproject.toml", "rb") as fh:
        project = tomllib.load(fh)["project"]
    package = dest / "helpers"
    shutil.copytree(
        root / "helpers",
        package,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", *TEACHER_ONLY),
    )
    deps = ",\n".join(f'    "{d}"' for d in learner_dependencies(root / "pyproject.toml"))
    (dest / "pyproject.toml").write_text(
        "[build-system]\n"
        'requires = ["setuptools>=68", "wheel"]\n'
        'build-backend = "setuptools.build_meta"\n\n'
        "[project]\n"
        f'name = "{project["name"]}"\n'
        f'version = "{project["version"]}+learner"\n'
        f'description = "{project["description"]} (learner build: no reference, no checks)"\n'
        f'requires-python = "{project["requires-python"]}"\n'
        f"dependencies = [\n{deps},\n]\n\n"
        "[tool.setuptools.packages.find]\n"
        'include = ["helpers*"]\n',
        encoding="utf-8",
    )
    return dest


def build(out: str | os.PathLike, root: Path = ROOT) -> Path:
    """Build the learner wheel into ``out``; returns its path."""
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pe-learner-") as tmp:
        staged = stage(Path(tmp) / "project", root)
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--quiet",
                "-w",
                str(out),
                str(staged),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"pip wheel failed:\n{proc.stdout}{proc.stderr}")
    wheels = sorted(out.glob("*+learner-*.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        raise RuntimeError(f"pip wheel wrote no learner wheel into {out}")
    return wheels[-1]

"""The learner build of ``helpers``: the package without ``helpers/teacher``.

Learners install it on their own machines (``pip install pe_course_helpers-...whl``) to run
the notebooks, the explorers and the figures. Everything only the teacher needs (the
reference maths, the checks and their wrong implementations, the isolated grader, the
nbgrader plugin, the classroom commands and this module) lives in ``helpers/teacher`` and
stays on the teacher's side.

``helpers.grader`` stays: without ``helpers.teacher`` its ``self_check`` says that grading
happens on the teacher's side, and ``helpers.reference`` says the solutions are not here. The wheel has the same distribution name as the full package, so it
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

ROOT = Path(__file__).resolve().parents[2]

# The folder of ``helpers`` that never leaves the teacher's machine.
TEACHER_ONLY = "teacher"
# Runtime dependencies a learner does not need (the test runner); the ``dev`` extra is left out.
# nbgrader stays: a learner's ``nbgrader fetch_assignment``, ``submit`` and ``fetch_feedback``.
TEACHER_DEPENDENCIES = ("pytest",)


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
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", TEACHER_ONLY),
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
        'include = ["helpers*"]\n\n'
        "[tool.setuptools.package-data]\n"
        'helpers = ["messages/*.yaml"]\n',
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

"""The learner build of ``helpers``: the package without ``helpers/teacher``.

Learners install it on their own machines (``pip install pe_course_helpers-...whl``) to run
the notebooks, the explorers and the figures. Everything only the teacher needs (the
reference maths, the checks and their wrong implementations, the isolated grader, the
nbgrader plugin, the classroom commands and this module) lives in ``helpers/teacher`` and
stays on the teacher's side.

``helpers.grader`` stays: without ``helpers.teacher`` its ``self_check`` runs the classroom
self-check (``helpers.classcheck``): the public checks of every function, from the expected
values this build writes into ``helpers/classcheck.json`` (``helpers.teacher.classcheck_data``),
compared by copies of the grader's ``compare`` and ``codec`` modules (``helpers/_shipped``,
which hold no case and no answer). ``helpers.reference`` says the solutions are not here. The wheel has the same distribution name as the full package, so it
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


# The grader's modules the classroom self-check uses, copied into ``helpers/_shipped``: how
# outputs compare (the course tolerance) and how values are written as JSON. Each import
# line of the teacher's package is replaced by what it gives.
SHIPPED = {
    "checks/compare.py": {
        "from helpers.teacher.checks.base import KINDS\n": "KINDS = {kinds!r}\n",
    },
    "codec.py": {},
}


def ship(package: Path, root: Path = ROOT) -> None:
    """Add the classroom self-check's data and the grader's modules it needs to ``package``."""
    from helpers.teacher import classcheck_data
    from helpers.teacher.checks.base import KINDS

    shipped = package / "_shipped"
    shipped.mkdir()
    (shipped / "__init__.py").write_text(
        '"""Copies of the grader\'s compare and codec modules, for the classroom self-check."""\n',
        encoding="utf-8",
    )
    for name, replace in SHIPPED.items():
        text = (root / "helpers" / TEACHER_ONLY / name).read_text(encoding="utf-8")
        for old, new in replace.items():
            if old not in text:
                raise RuntimeError(f"helpers/teacher/{name} no longer has the line {old!r}")
            text = text.replace(old, new.format(kinds=KINDS))
        if any(
            ln.startswith(("from helpers.teacher", "import helpers.teacher"))
            for ln in text.splitlines()
        ):
            raise RuntimeError(f"helpers/teacher/{name} imports the teacher's package")
        (shipped / Path(name).name).write_text(text, encoding="utf-8")
    classcheck_data.write(package / "classcheck.json")


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
    ship(package, root)
    # the kernels' configuration that loads helpers.fresh_kernel: a data file of the wheel
    kernel_config = Path("etc") / "ipython" / "ipython_kernel_config.py"
    (dest / kernel_config).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(root / kernel_config, dest / kernel_config)
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
        'helpers = ["messages/*.yaml", "classcheck.json", "widgets/*.js"]\n\n'
        "[tool.setuptools.data-files]\n"
        f'"etc/ipython" = ["{kernel_config.as_posix()}"]\n',
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

"""environment.yml (conda) and pyproject.toml (pip) declare the same dependency set.

environment.yml is parsed by hand (its structure is a flat list plus one ``pip:`` list),
so that the check needs no YAML library.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent

# conda match spec: name, then an optional version spec such as ">=1.26", "=3.11", " >=1.26"
_CONDA_SPEC = re.compile(r"^(?P<name>[A-Za-z0-9_.\-]+)\s*(?P<spec>[<>=!~].*)?$")


def normalise(name: str) -> str:
    """PEP 503 normalisation: case-insensitive, runs of -, _ and . are the same."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_environment_yml(text: str) -> dict:
    """The keys of a simple environment.yml: name, channels, dependencies, pip.

    Returns ``{"name": str, "channels": [...], "dependencies": [...], "pip": [...]}``; the
    ``pip:`` sub-list of ``dependencies`` is returned under ``"pip"``. Raises ValueError
    on structure this parser does not understand.
    """
    out: dict = {"name": None, "channels": [], "dependencies": [], "pip": []}
    section = None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        body = line.strip()
        if indent == 0:
            key, _, value = body.partition(":")
            if key not in ("name", "channels", "dependencies", "prefix", "variables"):
                raise ValueError(f"environment.yml line {lineno}: unexpected key {key!r}")
            if key == "name":
                out["name"] = value.strip()
            section = key
            continue
        if not body.startswith("- "):
            raise ValueError(f"environment.yml line {lineno}: expected a list item, got {body!r}")
        item = body[2:].strip()
        if section == "channels":
            out["channels"].append(item)
        elif section == "dependencies" and item == "pip:":
            section = "pip"
        elif section == "pip" and indent > 2:
            out["pip"].append(item)
        elif section in ("dependencies", "pip"):
            section = "dependencies"
            out["dependencies"].append(item)
        else:
            raise ValueError(f"environment.yml line {lineno}: item outside a known list: {body!r}")
    return out


def conda_specs(deps: list[str]) -> dict[str, str]:
    """``{normalised name: version spec}`` of conda dependencies ("" when unbounded)."""
    specs = {}
    for dep in deps:
        m = _CONDA_SPEC.match(dep)
        if m is None:
            raise ValueError(f"not a conda match spec: {dep!r}")
        specs[normalise(m["name"])] = (m["spec"] or "").replace(" ", "")
    return specs


@pytest.fixture(scope="module")
def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def env() -> dict:
    return parse_environment_yml((ROOT / "environment.yml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def pip_specs(pyproject) -> dict[str, str]:
    """The runtime dependencies and every extra (environment.yml has them all)."""
    project = pyproject["project"]
    extras = [r for reqs in project["optional-dependencies"].values() for r in reqs]
    reqs = [Requirement(r) for r in project["dependencies"] + extras]
    return {normalise(r.name): str(r.specifier) for r in reqs}


def test_course_packages_are_runtime_and_test_tools_are_dev(pyproject):
    """The six packages of the course are installed with it; test-only tools come with [dev]."""
    runtime = {normalise(Requirement(r).name) for r in pyproject["project"]["dependencies"]}
    dev = {
        normalise(Requirement(r).name) for r in pyproject["project"]["optional-dependencies"]["dev"]
    }
    course = {"jupyterlab", "numpy", "matplotlib", "ipywidgets", "nbgrader", "pytest"}
    assert course <= runtime, f"missing runtime dependencies: {sorted(course - runtime)}"
    assert {"hypothesis", "playwright", "ruff"} <= dev
    assert not dev & runtime, f"test tools among the runtime dependencies: {sorted(dev & runtime)}"


def test_parser_reads_a_known_file():
    """The hand parser understands the structure it claims to (and rejects others)."""
    text = (
        "name: x\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.11\n"
        "  - Numpy >=1.26  # comment\n  - pip:\n      - -e .\n  - ruff>=0.5\n"
    )
    parsed = parse_environment_yml(text)
    assert parsed["name"] == "x"
    assert parsed["channels"] == ["conda-forge"]
    assert parsed["dependencies"] == ["python=3.11", "Numpy >=1.26", "ruff>=0.5"]
    assert parsed["pip"] == ["-e ."]
    assert conda_specs(parsed["dependencies"]) == {
        "python": "=3.11",
        "numpy": ">=1.26",
        "ruff": ">=0.5",
    }
    with pytest.raises(ValueError, match="unexpected key"):
        parse_environment_yml("packages:\n  - numpy\n")


def test_channel_is_conda_forge(env):
    assert env["channels"] == ["conda-forge"]


# Packages conda-forge does not carry come from PyPI, in the pip: list before the repo.
PYPI_ONLY = {"koreanize-matplotlib"}


# conda-forge names of packages that PyPI names otherwise -> their PyPI name.
CONDA_NAMES = {"python-zlib-ng": "zlib-ng"}


def environment_specs(env: dict) -> dict[str, str]:
    """The conda dependencies (by PyPI name) and the PyPI-only packages of the pip: list."""
    pypi = [p for p in env["pip"] if p != "-e ."]
    conda = {CONDA_NAMES.get(n, n): spec for n, spec in conda_specs(env["dependencies"]).items()}
    return {**conda, **conda_specs(pypi)}


def test_pip_section_installs_this_repo(env):
    assert env["pip"][-1] == "-e ."
    extra = {normalise(p.split(">")[0].split("=")[0]) for p in env["pip"][:-1]}
    assert extra <= PYPI_ONLY, f"only PyPI-only packages belong in pip:, got {sorted(extra)}"


def test_same_package_set(env, pip_specs):
    conda = environment_specs(env)
    conda_only = {"python", "pip"}  # the interpreter itself, and the tool for the pip: list
    assert set(conda) - conda_only == set(pip_specs), (
        f"only in environment.yml: {sorted(set(conda) - conda_only - set(pip_specs))}; "
        f"only in pyproject.toml: {sorted(set(pip_specs) - set(conda))}"
    )


def test_same_lower_bounds(env, pip_specs):
    conda = environment_specs(env)
    for name, spec in pip_specs.items():
        assert SpecifierSet(conda[name]) == SpecifierSet(spec), (
            f"{name}: environment.yml has {conda[name]!r}, pyproject.toml has {spec!r}"
        )


def test_every_dependency_has_a_lower_bound_and_no_pin(pip_specs):
    for name, spec in pip_specs.items():
        ops = {s.operator for s in SpecifierSet(spec)}
        assert ">=" in ops, f"{name} needs a lower bound, got {spec!r}"
        assert not ops & {"==", "==="}, f"{name} is pinned exactly: {spec!r}"


def test_python_versions_consistent(env, pyproject):
    conda = conda_specs(env["dependencies"])
    assert "python" in conda, "environment.yml must name a python version"
    m = re.fullmatch(r"==?(\d+\.\d+)(\.\*)?", conda["python"])
    assert m, f"environment.yml should fix a python minor version, got {conda['python']!r}"
    conda_python = Version(m[1])
    requires = SpecifierSet(pyproject["project"]["requires-python"])
    assert conda_python in requires, f"python {conda_python} does not satisfy {requires}"
    ruff_target = pyproject["tool"]["ruff"]["target-version"]
    assert ruff_target == f"py{conda_python.major}{conda_python.minor}", ruff_target


def test_installed_versions_satisfy_the_bounds(pip_specs):
    """The environment the tests run in is one that the declared bounds allow."""
    for name, spec in pip_specs.items():
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            pytest.fail(f"{name} is declared but not installed: run `make setup`")
        assert SpecifierSet(spec).contains(installed, prereleases=True), (
            f"{name} {installed} does not satisfy {spec}"
        )

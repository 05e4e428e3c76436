"""The package's shape: imports point one way, one home per graded function, one worker.

Read from the source files with ``ast`` (imports inside functions count too), so that a
lazy import cannot hide a cycle.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from helpers.teacher import checks, exercises, reference
from helpers.teacher.channel import worker_command

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "helpers"

# Maths at the bottom, grading above it, nbgrader and the classroom on top, the command line
# last. A module may import only modules of its own layer or below.
LAYERS = [
    [
        "helpers",
        "helpers.validate",
        "helpers.i18n",
        "helpers.fonts",
        "helpers.figure_words",
        "helpers.palette",
        "helpers.smoothing",
    ],
    ["helpers.teacher", "helpers.teacher.reference", "helpers.plots", "helpers.widgets"],
    ["helpers.session"],
    ["helpers.reference", "helpers.teacher.codec", "helpers.teacher.exercises", "helpers.train"],
    ["helpers.teacher.seeds"],
    ["helpers.teacher.calling", "helpers.teacher.checks"],
    ["helpers.teacher.verdict", "helpers.teacher.notebook", "helpers.teacher.sandbox"],
    [
        "helpers.teacher.kernel",
        "helpers.teacher.worker",
        "helpers.teacher.channel",
        "helpers.teacher.standins",
        "helpers.teacher.zygote",
    ],
    ["helpers.teacher.isolated", "helpers.grader"],
    [
        "helpers.teacher.nbgrader_plugin",
        "helpers.teacher.learner_build",
        "helpers.teacher.classcheck_data",
        "helpers.teacher.translate",
    ],
    [
        "helpers.teacher.classroom",
        "helpers.teacher.feedback_page",
        "helpers.teacher.feedback_render",
        "helpers.teacher.pages",
    ],
    ["helpers.cli", "helpers.__main__"],
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path, name: str) -> set[str]:
    """Every ``helpers`` module that ``path`` imports, anywhere in the file."""
    known = modules()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            if target in known:
                found.add(target)
            elif target.startswith("helpers.") and target.rpartition(".")[0] in known:
                found.add(target.rpartition(".")[0])
    found.discard(name)
    return found


def layer_of(name: str) -> int:
    """The layer of the longest entry of LAYERS that is ``name`` or a package above it."""
    found = [
        (len(top), index)
        for index, layer in enumerate(LAYERS)
        for top in layer
        if name == top or name.startswith(top + ".")
    ]
    if not found:
        raise AssertionError(f"{name} has no layer in tests/test_architecture.py: add it to LAYERS")
    return max(found)[1]


def test_a_module_is_in_the_layer_of_its_nearest_package():
    assert layer_of("helpers.cli") == len(LAYERS) - 1
    assert layer_of("helpers.teacher.classroom.grading") == layer_of("helpers.teacher.classroom")
    assert layer_of("helpers.teacher.reference.rope") == layer_of("helpers.teacher") == 1
    assert layer_of("helpers.teacher.checks.rope") > layer_of("helpers.teacher.reference")


def graph() -> dict[str, set[str]]:
    return {name: imports_of(path, name) for name, path in modules().items()}


def test_the_import_reader_sees_what_a_file_imports(tmp_path):
    edges = graph()
    assert "helpers.teacher.calling" in edges["helpers.teacher.worker"]
    assert "helpers.teacher.kernel" in edges["helpers.grader"]  # a lazy import counts
    assert "helpers.teacher.checks.base" in edges["helpers.teacher.checks.rope"]


def test_every_module_imports_only_its_layer_or_below():
    wrong = []
    for name, targets in graph().items():
        for target in targets:
            if target.startswith(name + "."):
                continue  # a package and its own submodules
            if layer_of(target) > layer_of(name):
                wrong.append(
                    f"{name} (layer {layer_of(name)}) imports {target} ({layer_of(target)})"
                )
    assert not wrong, "\n".join(wrong)


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of the graph, as a path that comes back to its start, or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if state.get(nxt) is None:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if state.get(node) is None:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_cycle():
    edges = {
        name: {t for t in targets if not t.startswith(name + ".")}
        for name, targets in graph().items()
    }
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_a_cycle_is_found_when_there_is_one():
    """The cycle test can fail: the three modules of issue's old cycle are reported."""
    old = {
        "helpers.grader": {"helpers.sandbox"},
        "helpers.sandbox": {"helpers.nbgrader_plugin"},
        "helpers.nbgrader_plugin": {"helpers.grader"},
        "helpers.plots": set(),
    }
    assert find_cycle(old) == [
        "helpers.grader",
        "helpers.sandbox",
        "helpers.nbgrader_plugin",
        "helpers.grader",
    ]
    assert find_cycle({"helpers.a": {"helpers.b"}, "helpers.b": set()}) is None


def test_only_the_teacher_folder_and_two_entry_points_reach_the_teacher():
    """The learner build is the package without helpers/teacher: outside it, only the
    notebook's entry points (grader), the reference's name and the command line know it."""
    reaching = {
        name
        for name, targets in graph().items()
        if not name.startswith("helpers.teacher")
        and any(t.startswith("helpers.teacher") for t in targets)
    }
    assert reaching == {"helpers.grader", "helpers.cli"}
    assert "has_teacher" in (PACKAGE / "reference.py").read_text()


def test_the_worker_is_a_module_started_as_a_process(tmp_path):
    argv = worker_command(tmp_path)
    assert argv[argv.index("-m") + 1] == "helpers.teacher.worker"
    assert "-I" in argv
    source = (PACKAGE / "teacher" / "worker.py").read_text()
    assert (
        "getsource" not in source
        and "getsource" not in (PACKAGE / "teacher" / "channel.py").read_text()
    )


def test_kernel_and_worker_call_learner_code_through_one_function():
    for module in ("kernel", "worker"):
        tree = ast.parse((PACKAGE / "teacher" / f"{module}.py").read_text())
        called = {
            node.func.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        }
        assert "call" in called, f"helpers.teacher.{module} does not use calling.call"
        assert "helpers.teacher.calling" in imports_of(
            PACKAGE / "teacher" / f"{module}.py", f"helpers.teacher.{module}"
        )


def test_one_checks_module_per_notebook():
    from helpers.i18n import split_assignment

    sources = sorted(  # a translated notebook (06_rope_ko) is graded by its English one's
        p.parent.name
        for p in REPO.glob("source/*/*.ipynb")
        if p.stem == p.parent.name and split_assignment(p.parent.name)[1] == "en"
    )
    found = checks._notebook_modules()
    assert [m.ASSIGNMENT for m in found] == sources
    for module in found:
        names = [c.name for c in module.CHECKS]
        assert names == [c.name for c in checks.checks_for(module.ASSIGNMENT)]
        for mistake in (m for c in module.CHECKS for m in c.mistakes if m.impl is not None):
            # the wrong implementation sits beside its message, in the same module
            assert mistake.impl.__module__ == module.__name__, mistake.name


def test_one_reference_module_per_notebook_named_like_its_checks_and_explorer():
    """The reference finds its notebook modules itself; each notebook's reference, checks
    and explorer modules have one name (rope.py in reference/, checks/ and widgets/)."""
    maths = reference.notebook_modules()
    graded = checks._notebook_modules()
    assert [m.ASSIGNMENT for m in maths] == [m.ASSIGNMENT for m in graded]
    short = [m.__name__.rpartition(".")[2] for m in maths]
    assert short == [m.__name__.rpartition(".")[2] for m in graded]
    explorers = {p.stem for p in (PACKAGE / "widgets").glob("*.py")} - {
        "__init__",
        "base",
        "canvas",
    }
    assert sorted(short) == sorted(explorers)
    homes: dict[str, str] = {}
    for module in maths:
        for name in module.__all__:
            assert name not in homes, f"{name} is in {homes.get(name)} and {module.__name__}"
            homes[name] = module.__name__
            assert getattr(reference, name) is getattr(module, name)
    assert list(homes) == reference.__all__  # in notebook order
    for name, check in checks.CHECKS.items():  # each graded name lives in its notebook's module
        assert homes[name].rpartition(".")[2] == next(
            m.__name__.rpartition(".")[2] for m in graded if m.ASSIGNMENT == check.assignment
        ), name


def source_notebooks() -> list[str]:
    """The notebooks of the course: every English ``source/<id>/<id>.ipynb``."""
    from helpers.i18n import split_assignment

    return sorted(
        p.parent.name
        for p in REPO.glob("source/*/*.ipynb")
        if p.stem == p.parent.name and split_assignment(p.parent.name)[1] == "en"
    )


def test_adding_a_notebook_touches_only_its_own_files():
    """Every list of the notebooks is read from the files present: a new notebook is its
    source, its translation, its reference, checks and explorer modules (and their
    messages), and nothing else names it."""
    import ast
    import re
    import subprocess

    import helpers

    sources = source_notebooks()
    assert sources, "no source notebook found"
    assert list(helpers.ASSIGNMENTS) == sources
    make = subprocess.run(
        ["make", "--no-print-directory", "-s", "ids"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert make.stdout.split() == sources
    assert [m.ASSIGNMENT for m in reference.notebook_modules()] == sources
    assert [m.ASSIGNMENT for m in checks._notebook_modules()] == sources
    assert sorted({row["assignment"] for row in exercises.load().values()}) == sources
    own: dict[str, str] = {}  # file of a notebook's own module -> its notebook
    for module in checks._notebook_modules():
        name = module.__name__.rpartition(".")[2]
        for path in (
            PACKAGE / "teacher" / "checks" / f"{name}.py",
            PACKAGE / "teacher" / "reference" / f"{name}.py",
            PACKAGE / "widgets" / f"{name}.py",
        ):
            assert path.is_file(), f"{module.ASSIGNMENT} has no {path.relative_to(REPO)}"
            own[str(path)] = module.ASSIGNMENT
        assert (PACKAGE / "messages" / f"checks_{name}.yaml").is_file()
    for base in sources:
        assert (REPO / "source" / base / f"{base}.ko.yaml").is_file(), base
    ids = set(sources) | {f"{i}_ko" for i in sources}
    named = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        found = {
            node.value
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Constant) and node.value in ids
        }
        allowed = {own[str(path)]} if str(path) in own else set()
        if found - allowed:
            named[str(path.relative_to(REPO))] = sorted(found - allowed)
    for path in (REPO / "Makefile", REPO / "nbgrader_config.py", REPO / "pyproject.toml"):
        text = "\n".join(  # an example in a comment is no list
            line.split("#", 1)[0] for line in path.read_text(encoding="utf-8").splitlines()
        )
        found = set(re.findall(r"\b\d\d_[a-z_]+\b", text)) & ids
        if found:
            named[path.name] = sorted(found)
    assert not named, f"notebook ids kept by hand (read them from source/ instead): {named}"


def test_exercise_table_is_generated_from_the_source_notebooks():
    """helpers/teacher/exercises.json is what `python -m helpers generate` writes from source/."""
    assert exercises.load() == json.loads(json.dumps(exercises.scan(REPO))), (
        "helpers/teacher/exercises.json is stale: run `make notebooks`"
    )


def test_every_graded_function_has_its_exercise_and_points_from_the_notebook():
    table = exercises.load()
    for name, check in checks.CHECKS.items():
        assert name in table, f"{name}: no answer cell under an exercise heading defines it"
        assert table[name]["assignment"] == check.assignment
        assert check.section == table[name]["section"]
        if check.kind != "constant":
            assert check.section.startswith(f"Exercise {table[name]['exercise']}: `{name}`")
            assert table[name]["points"] > 0, f"{name} has no grade cell test_{name}..."

"""Everything only the teacher needs: the answers and how they are graded.

The learner build of ``helpers`` is the package without this folder.

- ``reference``: the reference maths of every graded function (the solutions), one
  module per notebook
- ``checks``: one module per notebook: each graded function's cases, its named
  mistakes with the wrong implementations that recognise them, its declaration;
  ``exercises``: where each graded function is taught (read from the notebooks)
- grading, from the bottom up: ``codec`` (values as JSON), ``calling`` (call a learner
  function on a case and capture what it did), ``verdict`` (results and messages),
  ``notebook`` (answer and grade cells), ``kernel`` (grading in the learner's kernel),
  ``worker`` (the isolated process that imports the answer cells), ``channel`` (the pipe
  to it), ``isolated`` (grade a notebook through a worker)
- ``sandbox``: the bubblewrap command line of the grading kernel and worker
- ``nbgrader_plugin``: the nbgrader preprocessors and the sandboxed kernel manager
- ``classroom``: the teacher's commands (release, collect, autograde, feedback, grades),
  one module per job
- ``learner_build``: the wheel for learners, without this folder
"""


def _stand_in(name: str, functions: tuple[str, ...]) -> None:
    """Put a stand-in for module ``name`` in ``sys.modules``: each of ``functions`` (and any
    other attribute asked of it) imports the real module on first use and is the real one's.
    Nothing when ``name`` is imported already or cannot be found."""
    import importlib
    import sys
    import types
    from importlib.util import find_spec
    from pathlib import Path

    if name in sys.modules:
        return
    top, _, rest = name.partition(".")
    try:
        spec = find_spec(top)  # not of ``name``: that would import the parent package
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return
    if rest:  # a module of a package: its file must be there
        places = [Path(p, *rest.split(".")) for p in spec.submodule_search_locations or ()]
        if not any(p.with_suffix(".py").is_file() or (p / "__init__.py").is_file() for p in places):
            return
    stand_in = types.ModuleType(name, f"{name}, imported on first use")

    def real():
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]
        return importlib.import_module(name)

    def forward(function: str):
        def call(*args, **kwargs):
            return getattr(real(), function)(*args, **kwargs)

        call.__name__ = function
        return call

    def __getattr__(attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(real(), attr)

    for function in functions:
        setattr(stand_in, function, forward(function))
    stand_in.__getattr__ = __getattr__
    sys.modules[name] = stand_in


def quicker_imports() -> None:
    """Two costs of every teacher process's start (the command, the grading workers' server,
    a Dask worker), cut without changing what runs. Call it before nbgrader is imported.
    (A third, jsonschema's ``rfc3987_syntax`` import, is avoided by the version pyproject.toml
    asks for.)

    - ``nbgrader.utils`` imports ``setuptools`` (with ``pkg_resources``, about 0.5 s) for
      three archive functions: it becomes a stand-in that imports the real module on first
      use;
    - the ``nbgrader`` package's ``__init__`` imports its Jupyter server extensions
      (Jupyter Server, Tornado's handlers, every exchange): see
      ``defer_nbgrader_extensions``.
    """
    import sys

    if "nbgrader.utils" not in sys.modules:
        _stand_in("setuptools.archive_util", ("unpack_archive", "unpack_tarfile", "unpack_zipfile"))
    defer_nbgrader_extensions()


def defer_nbgrader_extensions() -> None:
    """``import nbgrader`` (before any of its modules: ``nbgrader.api``, ``nbgrader.apps``)
    runs its package's ``__init__``, which imports its Jupyter server extensions (Jupyter
    Server, Tornado, every exchange): a second or more of a grading process's start, for
    handlers it never serves. Make the package without them: ``__version__`` at once, the
    rest of its ``__init__`` run on the first other name asked of it (the server's
    ``_jupyter_server_extension_points``, say), so the package reads as it always does.
    Nothing when nbgrader is already imported or absent."""
    import sys
    from importlib.util import find_spec
    from pathlib import Path

    if "nbgrader" in sys.modules:
        return
    try:
        spec = find_spec("nbgrader")
    except (ImportError, ValueError):
        return
    if spec is None or not spec.origin or not spec.submodule_search_locations:
        return
    import types

    package = types.ModuleType("nbgrader", None)
    package.__spec__, package.__file__ = spec, spec.origin
    package.__path__ = list(spec.submodule_search_locations)
    package.__package__ = "nbgrader"
    package.__loader__ = spec.loader
    done: list[bool] = []

    folder = Path(spec.origin).parent

    def submodule(name: str) -> bool:  # ``from nbgrader import api`` asks before importing
        return (folder / f"{name}.py").is_file() or (folder / name / "__init__.py").is_file()

    def __getattr__(name: str):
        if not done and not name.startswith("__") and not submodule(name):
            done.append(True)
            code = compile(spec.loader.get_source("nbgrader"), spec.origin, "exec")
            exec(code, package.__dict__)  # noqa: S102  (nbgrader's own __init__, as import runs it)
            if name in package.__dict__:
                return package.__dict__[name]
        raise AttributeError(f"module 'nbgrader' has no attribute {name!r}")

    package.__getattr__ = __getattr__
    sys.modules["nbgrader"] = package
    try:
        from nbgrader._version import __version__
    except Exception:  # noqa: BLE001  (then import it the usual way)
        del sys.modules["nbgrader"]
        return
    package.__version__ = __version__

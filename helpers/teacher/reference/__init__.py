"""The reference maths of the course: every graded function, under its spec name.

One module per notebook, named like its checks (``helpers.teacher.checks``) and its
explorer (``helpers.widgets``): ``order`` for 01_order ... ``long_context`` for
10_long_context. Each declares its ``ASSIGNMENT`` and, in ``__all__``, the graded
functions and constants it holds; this package finds those modules by itself and offers
every name of their ``__all__`` here (``helpers.teacher.reference.apply_rope``), in
notebook order. A new notebook's maths is a new module here and nothing else.

One function per graded function of COURSE_SPEC.md, vectorised numpy in float64.
Each docstring carries the formula, the shapes and the notebook that builds it.
Bad input raises ``ValueError`` naming the argument and the value.

Conventions: pair ``i`` is dimensions ``(2i, 2i+1)``; its angle rate is
``theta_i = base ** (-2 i / d)``; rotations are counter-clockwise.

This package is the teacher's: the learner build of ``helpers`` leaves it out.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def notebook_modules() -> list[ModuleType]:
    """The modules of this package that hold a notebook's maths, in assignment order."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "ASSIGNMENT"):
            found.append(module)
    return sorted(found, key=lambda m: m.ASSIGNMENT)


def _gather() -> list[str]:
    names: list[str] = []
    owners: dict[str, str] = {}
    for module in notebook_modules():
        for name in module.__all__:
            if name in owners:
                raise ImportError(
                    f"{name} is in the __all__ of both {owners[name]} and {module.__name__}: "
                    "a graded name must have one home"
                )
            owners[name] = module.__name__
            globals()[name] = getattr(module, name)
            names.append(name)
    return names


__all__ = _gather()  # noqa: PLE0605  (a list: every notebook module's __all__, in order)

"""The reference maths of every graded function, under its spec name.

``from helpers.reference import apply_rope`` gives the teacher's solution of any graded
function: this name is the module ``helpers.teacher.reference`` itself. The learner build
has no solutions; there, importing this module says so.
"""

import importlib
import sys

import helpers

if not helpers.has_teacher():
    raise ImportError(
        "helpers.reference holds the teacher's solutions, which this installation (the "
        "learner build) does not include: ask your teacher, or install the full course"
    )

_maths = importlib.import_module("helpers.teacher.reference")
if not hasattr(_maths, "__all__"):  # its folder reads as empty: the grading sandbox hides it
    raise ModuleNotFoundError(
        "helpers.reference holds the teacher's solutions, which cannot be read here (grading)",
        name=__name__,
    )
sys.modules[__name__] = _maths

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

sys.modules[__name__] = importlib.import_module("helpers.teacher.reference")

"""How 05_rotation (a shift is a rotation) is graded.

For each graded function of the notebook, in notebook order: its fixed cases (the
numbers the notebook shows, the edges), its random cases, its known mistakes (the
message and, beside it, the wrong implementation that recognises it) and its declaration.
"""

from __future__ import annotations

import math

import numpy as np

from helpers.i18n import tr
from helpers.teacher import reference as ref
from helpers.teacher.checks.base import (
    Case,
    FunctionCheck,
    Mistake,
    even_d,
    fmt,
    log_base,
    position,
)
from helpers.teacher.reference.sincos import DEFAULT_BASE

CLOCKWISE_TEXT = (
    "your rotation is clockwise: (x0, x1) -> (x0 cos a + x1 sin a, -x0 sin a + x1 cos a). "
    "Counter-clockwise is (x0 cos a - x1 sin a, x0 sin a + x1 cos a)."
)


# --------------------------------------------------------------------------- rotation_2d


def _rotation_fixed() -> list[Case]:
    return [
        Case((math.pi / 2,), {}, "angle = pi/2"),
        Case((0.0,), {}, "angle = 0", part="edge"),
        Case((0.3,), {}, "angle = 0.3"),
        Case((float("nan"),), {}, tr("bad input: angle = nan")),
    ]


def _rotation_random(rng: np.random.Generator) -> list[Case]:
    return [
        Case((a,), {}, f"angle = {a:.6g}") for a in (float(rng.uniform(-10, 10)) for _ in range(5))
    ]


def rotation_2d_clockwise(angle) -> np.ndarray:
    """[[cos, sin], [-sin, cos]]: a clockwise rotation."""
    return np.swapaxes(ref.rotation_2d(angle), -1, -2)


M_ROTATION_CW = Mistake(
    "clockwise rotation",
    "your matrix rotates clockwise: [[cos a, sin a], [-sin a, cos a]]. Counter-clockwise is "
    "[[cos a, -sin a], [sin a, cos a]].",
    rotation_2d_clockwise,
)


ROTATION_2D = FunctionCheck(
    name="rotation_2d",
    kind="array",
    fixed=_rotation_fixed,
    random=_rotation_random,
    mistakes=(M_ROTATION_CW,),
)


# --------------------------------------------------------------------------- rotate_pair


def _rotate_pair_fixed() -> list[Case]:
    return [
        Case((1.0, 0.0, math.pi / 2), {}, tr("(1, 0) by pi/2")),
        Case((0.5, -2.0, 0.0), {}, tr("(0.5, -2) by 0"), part="edge"),
        Case((2.0, 1.0, 1.25), {}, tr("(2, 1) by 1.25")),
        Case((1.0, 0.0, float("inf")), {}, tr("bad input: angle = inf")),
    ]


def _rotate_pair_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        x0, x1, a = (float(v) for v in (rng.normal(), rng.normal(), rng.uniform(-10, 10)))
        cases.append(
            Case((x0, x1, a), {}, tr("({x0:.4g}, {x1:.4g}) by {a:.4g}", x0=x0, x1=x1, a=a))
        )
    return cases


def rotate_pair_clockwise(x0, x1, angle) -> tuple[float, float]:
    """(x0 cos a + x1 sin a, -x0 sin a + x1 cos a): a clockwise rotation."""
    c, s = math.cos(angle), math.sin(angle)
    return (x0 * c + x1 * s, -x0 * s + x1 * c)


M_ROTATE_PAIR_CW = Mistake("clockwise rotation", CLOCKWISE_TEXT, rotate_pair_clockwise)


ROTATE_PAIR = FunctionCheck(
    name="rotate_pair",
    kind="tuple",
    fixed=_rotate_pair_fixed,
    random=_rotate_pair_random,
    mistakes=(M_ROTATE_PAIR_CW,),
)


# --------------------------------------------------------------------------- shift_matrix


def _shift_matrix_fixed() -> list[Case]:
    return [
        Case((3, 8), {}, tr("k=3, d=8 (the article's check)")),
        Case((0, 4), {}, "k=0, d=4", part="edge"),
        Case((1, 2), {"base": 100.0}, "k=1, d=2, base=100"),
        Case((1, 5), {}, tr("bad input: an odd d=5")),
    ]


def _shift_matrix_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        k, d, base = position(rng), even_d(rng, 64), log_base(rng)
        cases.append(Case((k, d), {"base": base}, f"k={k}, d={d}, base={fmt(base)}"))
    return cases


def shift_matrix_clockwise(k, d, base=DEFAULT_BASE) -> np.ndarray:
    """Blocks [[cos, -sin], [sin, cos]] on the [sin, cos] pairs: the table moves k steps back."""
    return ref.shift_matrix(k, d, base).T


M_SHIFT_CW = Mistake(
    "clockwise rotation",
    "your blocks turn the wrong way: they move the table k steps back. On a [sin, cos] pair the "
    "block that moves k steps forward is [[cos(k theta), sin(k theta)], [-sin(k theta), "
    "cos(k theta)]] (from sin(a+b) = sin a cos b + cos a sin b and cos(a+b) = cos a cos b - "
    "sin a sin b).",
    shift_matrix_clockwise,
)


SHIFT_MATRIX = FunctionCheck(
    name="shift_matrix",
    kind="array",
    fixed=_shift_matrix_fixed,
    random=_shift_matrix_random,
    mistakes=(M_SHIFT_CW,),
)


# --------------------------------------------------------------------------- shift_error


def _shift_error_fixed() -> list[Case]:
    return [
        Case((3, 8, 20), {}, "k=3, d=8, max_len=20"),
        Case((0, 2, 1), {}, "k=0, d=2, max_len=1", part="edge"),
        # the true error is float noise, so the bad inputs are what tells an answer from
        # a constant 0.0
        Case((5, 8, 5), {}, tr("bad input: k=5 with max_len=5 (no position to shift)")),
        Case((3, 7, 20), {}, tr("bad input: an odd d=7")),
    ]


def _shift_error_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(4):
        L, d, base = int(rng.integers(1, 300)), even_d(rng, 64), log_base(rng)
        k = int(rng.integers(0, L))
        cases.append(
            Case((k, d, L), {"base": base}, f"k={k}, d={d}, max_len={L}, base={fmt(base)}")
        )
    return cases


SHIFT_ERROR = FunctionCheck(
    name="shift_error",
    kind="float",
    fixed=_shift_error_fixed,
    random=_shift_error_random,
)

ASSIGNMENT = "05_rotation"
# The graded functions in notebook order.
CHECKS = (ROTATION_2D, ROTATE_PAIR, SHIFT_MATRIX, SHIFT_ERROR)

"""Argument checks with clear errors: the course's own, and yours from 02_sincos on.

Every check returns the value in the form the maths needs, or raises ``ValueError`` that
names the argument, the value it got and what is allowed, e.g.
``ValueError("d must be a positive even integer, got 7")``. Once you have written these
checks by hand (02_sincos, Exercise 1), your answers may call them instead, in the learner
build too, and the grader still checks that bad input is refused::

    from helpers import validate

    def thetas(d, base=10000.0):
        d, base = validate.dim(d), validate.base(base)
        ...

- ``dim(d)``: a positive even integer (not ``True``, not ``4.0``);
- ``count(n, "max_len")``: an integer >= 1 (``minimum=`` another bound);
- ``base(b)``: a finite number > 1;
- ``positions(pos)``: integers >= 0, a scalar or an array (as float64 for the maths);
- ``matrix(x, "Q", ndim=2)``: a real array as float64 of that many dimensions;
- ``vector_dim(x, "vec")``: an array whose last axis is a model dimension, and that axis.
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def dim(d, name: str = "d") -> int:
    """A model dimension: a positive even integer."""
    if not _is_int(d) or d <= 0 or d % 2:
        raise ValueError(f"{name} must be a positive even integer, got {d!r}")
    return int(d)


def count(n, name: str, minimum: int = 1) -> int:
    """An integer count such as ``max_len`` or ``n_heads``."""
    if not _is_int(n) or n < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {n!r}")
    return int(n)


def base(b, name: str = "base") -> float:
    """The angle base: a finite real number greater than 1."""
    if isinstance(b, bool) or not isinstance(b, numbers.Real):
        raise ValueError(f"{name} must be a finite number > 1, got {b!r}")  # noqa: TRY004
    try:
        value = float(b)
    except OverflowError:
        raise ValueError(f"{name} must be a finite number > 1, got {b!r}") from None
    if not math.isfinite(value) or value <= 1:
        raise ValueError(f"{name} must be a finite number > 1, got {b!r}")
    return value


def positions(pos, name: str = "pos", allow_negative: bool = False) -> np.ndarray:
    """Integer positions (a scalar or an array), returned as float64 for the maths."""
    arr = np.asarray(pos)
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold integers, got {pos!r}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must hold integers, got {pos!r}")
    if not allow_negative and np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0, got {pos!r}")
    return arr


def matrix(x, name: str, ndim: int | None = None) -> np.ndarray:
    """A real array as float64 (a copy is never needed: callers do not write into it)."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of real numbers, got {x!r}") from exc
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    return arr


def vector_dim(x, name: str) -> tuple[np.ndarray, int]:
    """An array whose last axis is a model dimension."""
    arr = matrix(x, name)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be a vector or a batch of vectors, got a scalar {x!r}")
    d = arr.shape[-1]
    if d == 0 or d % 2:
        raise ValueError(
            f"{name} must have an even, positive last dimension, got shape {arr.shape}"
        )
    return arr, d

"""How a learner's output is compared with the reference: normalize, then agree.

``normalize(kind, value)`` turns what a learner returned (numpy objects, or the plain
JSON data the isolated grader sends back) into a comparable form, or raises
``ValueError`` in plain words; ``agree(kind, got, want)`` applies the tolerance of the
spec, ``abs(a - b) <= 1e-9 + 1e-6 * abs(b)`` elementwise, and says why not.
"""

from __future__ import annotations

import numbers

import numpy as np

from helpers.teacher.checks.base import KINDS

RTOL = 1e-6
ATOL = 1e-9
# Keys of rope_report whose true value is 0: only float noise is left, judged by |value| < 1e-9.
NOISE_KEYS = ("rope_spread", "norm_max_gap")
NOISE_LIMIT = 1e-9


# --------------------------------------------------------------------------- normalize


def _unmark(value):
    """Plain JSON data back to Python: {"__tuple__": [...]} -> tuple, recursively."""
    if isinstance(value, dict):
        if set(value) == {"__tuple__"}:
            return tuple(_unmark(v) for v in value["__tuple__"])
        return {k: _unmark(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        out = [_unmark(v) for v in value]
        return tuple(out) if isinstance(value, tuple) else out
    return value


def _type_words(value) -> str:
    """What a value is, in plain words, for error messages."""
    if value is None:
        return "None"
    if isinstance(value, bool | np.bool_):
        return f"a boolean ({value})"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a dict"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    if isinstance(value, list | tuple):
        what = "a list" if isinstance(value, list) else "a tuple"
        try:
            shape = np.shape(value)
        except ValueError:
            return f"{what} of {len(value)} items"
        if len(shape) == 1:
            return f"{what} of {shape[0]} numbers" if shape[0] != 1 else f"{what} of 1 number"
        return f"{what} of shape {shape}"
    if isinstance(value, numbers.Number):
        return f"the number {value!r}"
    if type(value).__module__ in ("builtins", "numpy"):
        return f"a {type(value).__name__}"
    return f"an object {str(value)[:80]}"


def to_array(value, what: str = "returned") -> np.ndarray:
    if value is None or isinstance(value, str | dict | bytes) or callable(value):
        raise ValueError(f"{what} {_type_words(value)}, expected an array of numbers")
    if isinstance(value, bool | np.bool_):
        msg = f"{what} {_type_words(value)}, expected an array of numbers"
        raise ValueError(msg)  # noqa: TRY004
    try:
        raw = np.asarray(value)
    except ValueError as exc:
        raise ValueError(
            f"{what} nested lists of different lengths, expected an array of numbers"
        ) from exc
    if raw.dtype == object:
        try:
            raw = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{what} {_type_words(value)} that does not hold only numbers, "
                "expected an array of numbers"
            ) from exc
    if np.iscomplexobj(raw):
        raise ValueError(f"{what} complex numbers, expected real numbers")
    if raw.dtype.kind not in "biuf":
        raise ValueError(f"{what} {_type_words(value)} of {raw.dtype} values, expected numbers")
    if raw.dtype.kind == "b":
        raise ValueError(f"{what} true/false values, expected numbers")
    return raw.astype(np.float64)


def to_number(value, what: str = "returned") -> float:
    if (
        isinstance(value, bool | np.bool_)
        or value is None
        or isinstance(value, str | dict | list | tuple)
    ):
        raise ValueError(f"{what} {_type_words(value)}, expected a single number")
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise ValueError(f"{what} {_type_words(value)}, expected a single number")
        value = value[()]
    if isinstance(value, complex | np.complexfloating):
        raise ValueError(f"{what} a complex number, expected a real number")  # noqa: TRY004
    if not isinstance(value, numbers.Real):
        raise ValueError(f"{what} {_type_words(value)}, expected a single number")  # noqa: TRY004
    return float(value)


def normalize(kind: str, value) -> object:
    """A learner's output in a comparable plain form, or ValueError in plain words.

    Accepts numpy objects as well as the JSON data of the isolated grader (nested lists,
    numbers, None, strings, dicts, tuples marked ``{"__tuple__": [...]}``).
    "array" -> float64 ndarray; "float"/"constant" -> float; "int" -> int (a float stays a float
    and then disagrees: counts are ints); "tuple" -> tuple of float64 arrays; "optional" ->
    None or float; "scan" -> (n, 3) float64 array; "dict" -> dict of plain values;
    "str" -> str; "files" -> unchanged.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    value = _unmark(value)
    if kind == "array":
        return to_array(value)
    if kind in ("float", "constant"):
        return to_number(value)
    if kind == "int":
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        if isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_):
            return int(value)
        return to_number(value)  # a float: a count must be an int, so it disagrees
    if kind == "optional":
        return None if value is None else to_number(value, "returned")
    if kind == "tuple":
        if isinstance(value, np.ndarray) and value.ndim >= 1:
            value = list(value)
        if not isinstance(value, list | tuple):
            raise ValueError(f"returned {_type_words(value)}, expected a tuple")
        return tuple(to_array(v, f"item {i} of the tuple is") for i, v in enumerate(value))
    if kind == "scan":
        if isinstance(value, np.ndarray):
            value = value.tolist()
        if not isinstance(value, list | tuple):
            raise ValueError(
                f"returned {_type_words(value)}, expected a list of (start, rope, add) triples"
            )
        rows = []
        for i, item in enumerate(value):
            if isinstance(item, np.ndarray):
                item = item.tolist()
            if not isinstance(item, list | tuple) or len(item) != 3:
                raise ValueError(
                    f"item {i} of the list is {_type_words(item)}, "
                    "expected a (start, rope score, add score) triple"
                )
            rows.append([to_number(v, f"item {i} of the list holds") for v in item])
        return np.array(rows, dtype=np.float64).reshape(len(rows), 3)
    if kind == "dict":
        if not isinstance(value, dict):
            raise ValueError(f"returned {_type_words(value)}, expected a dict")
        return {str(k): _plain(v) for k, v in value.items()}
    if kind == "str":
        if not isinstance(value, str):
            raise ValueError(f"returned {_type_words(value)}, expected a string")
        return value
    return value  # "files": judged by check_report_files


def _plain(value):
    """A dict value in comparable form: numbers -> float, sequences -> float64 arrays."""
    if isinstance(value, bool | np.bool_) or value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Real) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return to_number(value)
    try:
        return to_array(value, "holds")
    except ValueError:
        return value


# --------------------------------------------------------------------------- agree


def _index_words(idx: tuple) -> str:
    if len(idx) == 0:
        return ""
    if len(idx) == 1:
        return f" at index {idx[0]}"
    return f" at index {tuple(int(i) for i in idx)}"


def compare(
    got: np.ndarray, want: np.ndarray, nan_equal: bool = False, atol: float = 0.0
) -> tuple[bool, str]:
    """Elementwise agreement of two float arrays: |got - want| <= 1e-9 + atol + 1e-6 |want|."""
    if got.shape != want.shape:
        return False, f"returned shape {got.shape}, expected shape {want.shape}"
    if got.size == 0:
        return True, "no values to compare"
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(got - want)
        close = np.isfinite(got) & np.isfinite(want) & (diff <= ATOL + atol + RTOL * np.abs(want))
    close |= np.isinf(got) & np.isinf(want) & (np.sign(got) == np.sign(want))
    if nan_equal:
        close |= np.isnan(got) & np.isnan(want)
    finite = np.where(np.isfinite(diff), diff, 0.0)
    if np.all(close):
        return True, f"largest difference {float(np.max(finite)):.3g}"
    bad = ~close
    nan_bad = bad & np.isnan(got)
    if np.any(nan_bad):
        idx = np.unravel_index(int(np.argmax(nan_bad)), got.shape)
        return False, f"returned nan{_index_words(idx)} where {want[idx]:.6g} was expected"
    score = np.where(bad, np.where(np.isnan(diff), np.inf, diff), -1.0)
    idx = np.unravel_index(int(np.argmax(score)), got.shape)
    return False, (
        f"largest difference {float(diff[idx]):.3g}{_index_words(idx)}: "
        f"got {got[idx]:.6g}, expected {want[idx]:.6g}"
    )


def agree(kind: str, got, want, nan_equal: bool = False, atol: float = 0.0) -> tuple[bool, str]:
    """Whether ``got`` agrees with ``want`` under the spec's tolerance, and why (plain words).

    Elementwise ``abs(a - b) <= 1e-9 + atol + 1e-6 * abs(b)``; shapes must match; NaN
    agrees with NaN only when ``nan_equal`` (diagnosing a mistake); equal infinities agree.
    "int" and "str" are exact; "dict" compares every key of the report, with ``rope_spread``
    and ``norm_max_gap`` accepted when ``|value| < 1e-9``. ``got`` may be raw or already
    normalized; a wrong type gives ``(False, reason)``.
    """
    try:
        got = normalize(kind, got)
    except ValueError as exc:
        return False, str(exc)
    want = normalize(kind, want)
    if kind == "array":
        return compare(got, want, nan_equal, atol)
    if kind in ("float", "constant"):
        ok, detail = compare(np.asarray(got), np.asarray(want), nan_equal, atol)
        return ok, detail if ok else f"returned {got:.6g}, expected {want:.6g}"
    if kind == "int":
        if isinstance(got, float):
            return False, f"returned the float {got!r}; a count is an int, expected {want!r}"
        ok = got == want
        return ok, "equal" if ok else f"returned {got!r}, expected {want!r}"
    if kind == "optional":
        if got is None or want is None:
            ok = got is None and want is None
            return ok, "both None" if ok else f"returned {got!r}, expected {want!r}"
        ok, _ = compare(np.asarray(got), np.asarray(want), nan_equal, atol)
        return ok, "equal" if ok else f"returned {got:g}, expected {want:g}"
    if kind == "tuple":
        if len(got) != len(want):
            return False, f"returned a tuple of {len(got)} items, expected {len(want)}"
        details = []
        for i, (g, w) in enumerate(zip(got, want)):
            ok, detail = compare(g, w, nan_equal, atol)
            if not ok:
                return False, f"item {i} of the tuple: {detail}"
            details.append(detail)
        return True, "; ".join(details)
    if kind == "scan":
        return _agree_scan(got, want, nan_equal, atol)
    if kind == "dict":
        return _agree_report(got, want)
    if kind == "str":
        return _agree_text(got, want)
    raise ValueError(f"kind {kind!r} is judged by check_report_files, not agree")


def _agree_scan(
    got: np.ndarray, want: np.ndarray, nan_equal: bool, atol: float
) -> tuple[bool, str]:
    if got.shape != want.shape:
        return False, f"returned {got.shape[0]} triples, expected {want.shape[0]} (one per start)"
    if not np.array_equal(got[:, 0], want[:, 0]):
        starts_got, starts_want = got[:, 0].astype(int).tolist(), want[:, 0].astype(int).tolist()
        return False, f"returned the starts {starts_got}, expected {starts_want}"
    for col, what in ((1, "rope score"), (2, "add score")):
        ok, _ = compare(got[:, col], want[:, col], nan_equal, atol)
        if not ok:
            with np.errstate(invalid="ignore"):
                diff = np.abs(got[:, col] - want[:, col])
            row = int(np.argmax(np.where(np.isnan(diff), np.inf, diff)))
            return False, (
                f"the {what} at start {int(want[row, 0])} is {got[row, col]:.6g}, "
                f"expected {want[row, col]:.6g}"
            )
    return True, "every triple agrees"


def _agree_report(got: dict, want: dict) -> tuple[bool, str]:
    missing = [k for k in want if k not in got]
    if missing:
        return False, f"the report has no key {', '.join(missing)}"
    for key, w in want.items():
        g = got[key]
        if key in NOISE_KEYS:
            try:
                number = to_number(g, f"{key} is")
            except ValueError as exc:
                return False, str(exc)
            if not abs(number) < NOISE_LIMIT:
                return (
                    False,
                    f"{key} is {number:.3g}; it should be float noise, |{key}| < {NOISE_LIMIT:g}",
                )
            continue
        if isinstance(w, float):
            try:
                number = to_number(g, f"{key} is")
            except ValueError as exc:
                return False, str(exc)
            ok, _ = compare(np.asarray(number), np.asarray(w))
            if not ok:
                return False, f"{key} is {number:.6g}, expected {w:.6g}"
            continue
        if not isinstance(g, np.ndarray):
            try:
                g = to_array(g, f"{key} is")
            except ValueError as exc:
                return False, str(exc)
        ok, detail = compare(g, np.asarray(w, dtype=np.float64))
        if not ok:
            return False, f"{key}: {detail}"
    return True, "every key agrees"


def _agree_text(got: str, want: str) -> tuple[bool, str]:
    if got == want:
        return True, "identical"
    g_lines, w_lines = got.split("\n"), want.split("\n")
    for row, (g, w) in enumerate(zip(g_lines, w_lines)):
        if g != w:
            for col, (a, b) in enumerate(zip(g, w)):
                if a != b:
                    return False, f"line {row + 1}, character {col + 1}: got {a!r}, expected {b!r}"
            return False, f"line {row + 1} has {len(g)} characters, expected {len(w)}"
    return False, f"returned {len(g_lines)} lines, expected {len(w_lines)}"

"""How a learner's output is compared with the reference: normalize, then agree.

``normalize(kind, value)`` turns what a learner returned (numpy objects, or the plain
JSON data the isolated grader sends back) into a comparable form, or raises
``ValueError`` in plain words; ``agree(kind, got, want)`` applies the tolerance of the
spec, ``abs(a - b) <= 1e-9 + 1e-6 * abs(b)`` elementwise, and says why not.
"""

from __future__ import annotations

import numbers

import numpy as np

from helpers.i18n import tr
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
        return tr("a boolean ({value})", value=value)
    if isinstance(value, str):
        return tr("a string")
    if isinstance(value, dict):
        return tr("a dict")
    if isinstance(value, np.ndarray):
        return tr("an array of shape {shape}", shape=value.shape)
    if isinstance(value, list | tuple):
        is_list = isinstance(value, list)
        try:
            shape = np.shape(value)
        except ValueError:
            if is_list:
                return tr("a list of {n} items", n=len(value))
            return tr("a tuple of {n} items", n=len(value))
        if len(shape) == 1:
            if shape[0] == 1:
                return tr("a list of 1 number") if is_list else tr("a tuple of 1 number")
            if is_list:
                return tr("a list of {n} numbers", n=shape[0])
            return tr("a tuple of {n} numbers", n=shape[0])
        if is_list:
            return tr("a list of shape {shape}", shape=shape)
        return tr("a tuple of shape {shape}", shape=shape)
    if isinstance(value, numbers.Number):
        return tr("the number {value!r}", value=value)
    if type(value).__module__ in ("builtins", "numpy"):
        return tr("a {type}", type=type(value).__name__)
    return tr("an object {text}", text=str(value)[:80])


def _returned(what: str | None) -> str:
    """The subject of a message about a value: "returned" unless told."""
    return tr("returned") if what is None else what


def to_array(value, what: str | None = None) -> np.ndarray:
    what = _returned(what)
    if value is None or isinstance(value, str | dict | bytes) or callable(value):
        raise ValueError(
            tr("{what} {value}, expected an array of numbers", what=what, value=_type_words(value))
        )
    if isinstance(value, bool | np.bool_):
        msg = tr(
            "{what} {value}, expected an array of numbers", what=what, value=_type_words(value)
        )
        raise ValueError(msg)  # noqa: TRY004
    try:
        raw = np.asarray(value)
    except ValueError as exc:
        raise ValueError(
            tr("{what} nested lists of different lengths, expected an array of numbers", what=what)
        ) from exc
    if raw.dtype == object:
        try:
            raw = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                tr(
                    "{what} {value} that does not hold only numbers, expected an array of numbers",
                    what=what,
                    value=_type_words(value),
                )
            ) from exc
    if np.iscomplexobj(raw):
        raise ValueError(tr("{what} complex numbers, expected real numbers", what=what))
    if raw.dtype.kind not in "biuf":
        raise ValueError(
            tr(
                "{what} {value} of {dtype} values, expected numbers",
                what=what,
                value=_type_words(value),
                dtype=raw.dtype,
            )
        )
    if raw.dtype.kind == "b":
        raise ValueError(tr("{what} true/false values, expected numbers", what=what))
    return raw.astype(np.float64)


def to_number(value, what: str | None = None) -> float:
    what = _returned(what)
    if (
        isinstance(value, bool | np.bool_)
        or value is None
        or isinstance(value, str | dict | list | tuple)
    ):
        raise ValueError(
            tr("{what} {value}, expected a single number", what=what, value=_type_words(value))
        )
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise ValueError(
                tr("{what} {value}, expected a single number", what=what, value=_type_words(value))
            )
        value = value[()]
    if isinstance(value, complex | np.complexfloating):
        raise ValueError(tr("{what} a complex number, expected a real number", what=what))  # noqa: TRY004
    if not isinstance(value, numbers.Real):
        raise ValueError(  # noqa: TRY004
            tr("{what} {value}, expected a single number", what=what, value=_type_words(value))
        )
    return float(value)


def not_an_array(value, want=None):
    """``value`` when it is a numpy array (or cannot be one: ``to_array`` says why); a list, a
    tuple or a plain number where an array is asked for is refused in plain words, the same
    in the visible test, the self-check and the grader. Where the expected value ``want`` is
    known and is a plain number (``dot`` of two vectors), a plain number is right."""
    if want is not None and not (isinstance(want, np.ndarray) and want.ndim >= 1):
        return value
    plain = isinstance(value, list | tuple | int | float | np.number) and not isinstance(
        value, bool | np.bool_
    )
    if want is None:  # unknown: only a list or a tuple is surely not the array asked for
        plain = isinstance(value, list | tuple)
    if plain and not isinstance(value, np.ndarray):
        try:
            numbers_only = np.asarray(value, dtype=np.float64) is not None
        except (TypeError, ValueError):
            numbers_only = False
        if numbers_only:
            raise ValueError(
                tr(
                    "returned {value} where a numpy array is asked for: return "
                    "np.asarray(...) of it (a list has no .shape or .sum(axis=...))",
                    value=_type_words(value),
                )
            )
    return value


def normalize(kind: str, value) -> object:
    """A learner's output in a comparable plain form, or ValueError in plain words.

    Accepts numpy objects as well as the JSON data of the isolated grader (nested lists,
    numbers, None, strings, dicts, tuples marked ``{"__tuple__": [...]}``).
    "array" -> float64 ndarray; "float"/"constant" -> float; "int" -> int (a float stays a float
    and then disagrees: counts are ints); "tuple" -> tuple of float64 arrays; "optional" ->
    None or float; "position" -> None or int (a float stays a float and then disagrees: an
    index is an int); "scan" -> (n, 3) float64 array; "dict" -> dict of plain values;
    "str" -> str; "files" -> unchanged.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    value = _unmark(value)
    if kind == "array":
        return to_array(value)
    if kind in ("float", "constant"):
        return to_number(value)
    if kind in ("int", "position"):
        if kind == "position" and value is None:
            return None
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        if isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_):
            return int(value)
        return to_number(value)  # a float: a count or an index is an int, so it disagrees
    if kind == "optional":
        return None if value is None else to_number(value)
    if kind == "tuple":
        if isinstance(value, np.ndarray) and value.ndim >= 1:
            value = list(value)
        if not isinstance(value, list | tuple):
            raise ValueError(tr("returned {value}, expected a tuple", value=_type_words(value)))
        return tuple(to_array(v, tr("item {i} of the tuple is", i=i)) for i, v in enumerate(value))
    if kind == "scan":
        if isinstance(value, np.ndarray):
            value = value.tolist()
        if not isinstance(value, list | tuple):
            raise ValueError(
                tr(
                    "returned {value}, expected a list of (start, rope, add) triples",
                    value=_type_words(value),
                )
            )
        rows = []
        for i, item in enumerate(value):
            if isinstance(item, np.ndarray):
                item = item.tolist()
            if not isinstance(item, list | tuple) or len(item) != 3:
                raise ValueError(
                    tr(
                        "item {i} of the list is {value}, "
                        "expected a (start, rope score, add score) triple",
                        i=i,
                        value=_type_words(item),
                    )
                )
            holds = tr("item {i} of the list holds", i=i)
            rows.append([to_number(v, holds) for v in item])
        return np.array(rows, dtype=np.float64).reshape(len(rows), 3)
    if kind == "dict":
        if not isinstance(value, dict):
            raise ValueError(tr("returned {value}, expected a dict", value=_type_words(value)))
        return {str(k): _plain(v) for k, v in value.items()}
    if kind == "str":
        if not isinstance(value, str):
            raise ValueError(tr("returned {value}, expected a string", value=_type_words(value)))
        return value
    return value  # "files": judged by check_report_files


def _plain(value):
    """A dict value in comparable form: numbers -> float, sequences -> float64 arrays."""
    if isinstance(value, bool | np.bool_) or value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Real) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return to_number(value)
    try:
        return to_array(value, tr("holds"))
    except ValueError:
        return value


# --------------------------------------------------------------------------- agree


def _index_words(idx: tuple) -> str:
    if len(idx) == 0:
        return ""
    if len(idx) == 1:
        return tr(" at index {index}", index=idx[0])
    return tr(" at index {index}", index=tuple(int(i) for i in idx))


def compare(
    got: np.ndarray, want: np.ndarray, nan_equal: bool = False, atol: float = 0.0
) -> tuple[bool, str]:
    """Elementwise agreement of two float arrays: |got - want| <= 1e-9 + atol + 1e-6 |want|."""
    if got.shape != want.shape:
        return False, tr(
            "returned shape {got}, expected shape {want}", got=got.shape, want=want.shape
        )
    if got.size == 0:
        return True, tr("no values to compare")
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(got - want)
        close = np.isfinite(got) & np.isfinite(want) & (diff <= ATOL + atol + RTOL * np.abs(want))
    close |= np.isinf(got) & np.isinf(want) & (np.sign(got) == np.sign(want))
    if nan_equal:
        close |= np.isnan(got) & np.isnan(want)
    finite = np.where(np.isfinite(diff), diff, 0.0)
    if np.all(close):
        return True, tr("largest difference {diff:.3g}", diff=float(np.max(finite)))
    bad = ~close
    nan_bad = bad & np.isnan(got)
    if np.any(nan_bad):
        idx = np.unravel_index(int(np.argmax(nan_bad)), got.shape)
        return False, tr(
            "returned nan{at} where {want:.6g} was expected", at=_index_words(idx), want=want[idx]
        )
    score = np.where(bad, np.where(np.isnan(diff), np.inf, diff), -1.0)
    idx = np.unravel_index(int(np.argmax(score)), got.shape)
    return False, tr(
        "largest difference {diff:.3g}{at}: got {got:.6g}, expected {want:.6g}",
        diff=float(diff[idx]),
        at=_index_words(idx),
        got=got[idx],
        want=want[idx],
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
        return ok, detail if ok else tr(
            "returned {got:.6g}, expected {want:.6g}", got=got, want=want
        )
    if kind == "int":
        if isinstance(got, float):
            return False, tr(
                "returned the float {got!r}; a count is an int, expected {want!r}",
                got=got,
                want=want,
            )
        ok = got == want
        return ok, tr("equal") if ok else tr(
            "returned {got!r}, expected {want!r}", got=got, want=want
        )
    if kind == "position":
        if isinstance(got, float):
            return False, tr(
                "returned the float {got!r}; a position is an int (an index into the "
                "input), expected {want!r}",
                got=got,
                want=want,
            )
        ok = got == want
        return ok, tr("equal") if ok else tr(
            "returned {got!r}, expected {want!r}", got=got, want=want
        )
    if kind == "optional":
        if got is None or want is None:
            ok = got is None and want is None
            if ok:
                return ok, tr("both None")
            return ok, tr("returned {got!r}, expected {want!r}", got=got, want=want)
        ok, _ = compare(np.asarray(got), np.asarray(want), nan_equal, atol)
        return ok, tr("equal") if ok else tr(
            "returned {got:g}, expected {want:g}", got=got, want=want
        )
    if kind == "tuple":
        if len(got) != len(want):
            return False, tr(
                "returned a tuple of {got} items, expected {want}", got=len(got), want=len(want)
            )
        details = []
        for i, (g, w) in enumerate(zip(got, want)):
            ok, detail = compare(g, w, nan_equal, atol)
            if not ok:
                return False, tr("item {i} of the tuple: {detail}", i=i, detail=detail)
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
        return False, tr(
            "returned {got} triples, expected {want} (one per start)",
            got=got.shape[0],
            want=want.shape[0],
        )
    if not np.array_equal(got[:, 0], want[:, 0]):
        starts_got, starts_want = got[:, 0].astype(int).tolist(), want[:, 0].astype(int).tolist()
        return False, tr(
            "returned the starts {got}, expected {want}", got=starts_got, want=starts_want
        )
    for col, what in ((1, tr("rope score")), (2, tr("add score"))):
        ok, _ = compare(got[:, col], want[:, col], nan_equal, atol)
        if not ok:
            with np.errstate(invalid="ignore"):
                diff = np.abs(got[:, col] - want[:, col])
            row = int(np.argmax(np.where(np.isnan(diff), np.inf, diff)))
            return False, tr(
                "the {what} at start {start} is {got:.6g}, expected {want:.6g}",
                what=what,
                start=int(want[row, 0]),
                got=got[row, col],
                want=want[row, col],
            )
    return True, tr("every triple agrees")


def _agree_report(got: dict, want: dict) -> tuple[bool, str]:
    missing = [k for k in want if k not in got]
    if missing:
        return False, tr("the report has no key {keys}", keys=", ".join(missing))
    for key, w in want.items():
        g = got[key]
        if key in NOISE_KEYS:
            try:
                number = to_number(g, tr("{key} is", key=key))
            except ValueError as exc:
                return False, str(exc)
            if not abs(number) < NOISE_LIMIT:
                return (
                    False,
                    tr(
                        "{key} is {number:.3g}; it should be float noise, |{key}| < {limit:g}",
                        key=key,
                        number=number,
                        limit=NOISE_LIMIT,
                    ),
                )
            continue
        if isinstance(w, float):
            try:
                number = to_number(g, tr("{key} is", key=key))
            except ValueError as exc:
                return False, str(exc)
            ok, _ = compare(np.asarray(number), np.asarray(w))
            if not ok:
                return False, tr(
                    "{key} is {number:.6g}, expected {want:.6g}", key=key, number=number, want=w
                )
            continue
        if not isinstance(g, np.ndarray):
            try:
                g = to_array(g, tr("{key} is", key=key))
            except ValueError as exc:
                return False, str(exc)
        ok, detail = compare(g, np.asarray(w, dtype=np.float64))
        if not ok:
            return False, tr("{key}: {detail}", key=key, detail=detail)
    return True, tr("every key agrees")


def _agree_text(got: str, want: str) -> tuple[bool, str]:
    if got == want:
        return True, tr("identical")
    g_lines, w_lines = got.split("\n"), want.split("\n")
    for row, (g, w) in enumerate(zip(g_lines, w_lines)):
        if g != w:
            for col, (a, b) in enumerate(zip(g, w)):
                if a != b:
                    return False, tr(
                        "line {row}, character {col}: got {got!r}, expected {want!r}",
                        row=row + 1,
                        col=col + 1,
                        got=a,
                        want=b,
                    )
            return False, tr(
                "line {row} has {got} characters, expected {want}",
                row=row + 1,
                got=len(g),
                want=len(w),
            )
    return False, tr("returned {got} lines, expected {want}", got=len(g_lines), want=len(w_lines))

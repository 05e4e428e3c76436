"""Values as JSON: what crosses the pipe between the grader and the isolated worker.

``encode`` describes a value as JSON-able data (arrays, numpy scalars, tuples and dicts
are tagged); ``decode`` builds it back as plain data only (lists, numbers, numpy arrays
of numeric dtypes); anything else becomes an ``Opaque`` description, never an object of
the learner's. The worker imports this module before any learner code runs.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable

import numpy as np

__all__ = ["DTYPES", "Opaque", "contains_opaque", "decode", "describe", "encode"]


def encode(value, _depth=0):
    """A JSON-able description of ``value``: arrays, numpy scalars and tuples are tagged."""
    if _depth > 40:
        return {"__obj__": "nested structure", "repr": "nested more than 40 levels deep"}
    t = type(value)
    if value is None or t is bool or t is str or t is int or t is float:
        return value
    if isinstance(value, np.ndarray):
        arr = np.asarray(value)
        if arr.size > 4_000_000:
            return {"__obj__": "ndarray", "repr": f"an array of shape {arr.shape} (too large)"}
        if arr.dtype.kind in "biuf":
            return {"__nd__": arr.tolist(), "dtype": arr.dtype.name, "shape": list(arr.shape)}
        if arr.dtype.kind == "c":
            return {
                "__nd__": arr.real.tolist(),
                "imag": arr.imag.tolist(),
                "dtype": arr.dtype.name,
                "shape": list(arr.shape),
            }
        return {
            "__obj__": "ndarray",
            "repr": f"an array of dtype {arr.dtype} and shape {arr.shape}",
        }
    if isinstance(value, np.generic):
        if value.dtype.kind in "biuf":
            return {"__np__": value.dtype.name, "v": value.item()}
        if value.dtype.kind == "c":
            return {"__np__": value.dtype.name, "v": [float(value.real), float(value.imag)]}
        return {"__obj__": type(value).__name__, "repr": repr(value)[:200]}
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, complex):
        return {"__complex__": [value.real, value.imag]}
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, _depth + 1) for v in value]}
    if isinstance(value, list):
        return [encode(v, _depth + 1) for v in value]
    if isinstance(value, dict):
        return {
            "__dict__": [[encode(k, _depth + 1), encode(v, _depth + 1)] for k, v in value.items()]
        }
    try:
        text = repr(value)[:200]
    except Exception:  # noqa: BLE001  (a learner's object whose repr fails)
        text = "?"
    return {"__obj__": type(value).__name__, "repr": text}


DTYPES = frozenset(
    [
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "longdouble",
        "complex64",
        "complex128",
    ]
)


class Opaque:
    """Something that was not plain data (a custom object, a ragged array, ...)."""

    def __init__(self, type_name: str, text: str) -> None:
        self.type_name = str(type_name)[:80]
        self.text = str(text)[:200]

    def __repr__(self) -> str:
        return f"<{self.type_name}: {self.text}>"


def decode(obj, _depth=0):
    """The value described by ``encode``'s output (plain data only)."""
    if _depth > 45:
        return Opaque("nested structure", "too deep")
    if isinstance(obj, list):
        return [decode(v, _depth + 1) for v in obj]
    if not isinstance(obj, dict):
        return (
            obj
            if obj is None or isinstance(obj, (bool, int, float, str))
            else Opaque(type(obj).__name__, "unexpected")
        )
    try:
        if "__nd__" in obj:
            dtype = str(obj.get("dtype"))
            if dtype not in DTYPES:
                return Opaque("ndarray", f"dtype {dtype}")
            shape = tuple(int(s) for s in obj.get("shape", []))
            if "imag" in obj:
                arr = np.array(obj["__nd__"], dtype=np.float64) + 1j * np.array(
                    obj["imag"], dtype=np.float64
                )
                arr = arr.astype(dtype)
            else:
                arr = np.array(obj["__nd__"], dtype=dtype)
            return arr.reshape(shape)
        if "__np__" in obj:
            dtype = str(obj["__np__"])
            if dtype not in DTYPES:
                return Opaque("numpy scalar", f"dtype {dtype}")
            v = obj["v"]
            if isinstance(v, list):
                v = complex(float(v[0]), float(v[1]))
            return np.dtype(dtype).type(v)
        if "__tuple__" in obj:
            return tuple(decode(v, _depth + 1) for v in obj["__tuple__"])
        if "__dict__" in obj:
            out = {}
            for k, v in obj["__dict__"]:
                key = decode(k, _depth + 1)
                if isinstance(key, (list, dict, np.ndarray, Opaque)):
                    return Opaque("dict", "a dict with keys that are not names or numbers")
                out[key] = decode(v, _depth + 1)
            return out
        if "__complex__" in obj:
            re_, im_ = obj["__complex__"]
            return complex(float(re_), float(im_))
        if "__obj__" in obj:
            return Opaque(str(obj["__obj__"]), str(obj.get("repr", "")))
    except (TypeError, ValueError, KeyError, OverflowError, MemoryError, RecursionError) as exc:
        return Opaque("value", f"unreadable ({type(exc).__name__})")
    return Opaque("dict", "unexpected")


def contains_opaque(value, _depth=0) -> Opaque | None:
    if isinstance(value, Opaque):
        return value
    if _depth > 45:
        return None
    if isinstance(value, (list, tuple)):
        items: Iterable = value
    elif isinstance(value, dict):
        items = list(value.keys()) + list(value.values())
    else:
        return None
    for item in items:
        found = contains_opaque(item, _depth + 1)
        if found is not None:
            return found
    return None


def describe(value) -> str:
    """A short plain-words description of a returned value."""
    if value is None:
        return "None"
    if isinstance(value, Opaque):
        return f"an object of class {value.type_name} ({value.text})"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of length {len(value)}"
    if isinstance(value, dict):
        return f"a dict with {len(value)} keys"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."

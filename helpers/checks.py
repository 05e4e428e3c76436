"""Where each graded function is checked: its cases, its known mistakes, how outputs compare.

One ``FunctionCheck`` per graded function of COURSE_SPEC.md (all eight notebooks), in
``CHECKS`` under its spec name. Each check has fixed cases (the seed numbers and the
edges: pos 0, d = 2, one row, one head ...) and a generator of fresh random cases
(d even in 2..256, positions 0..4096, bases 1e2..1e6 log-uniform, lists as well as
arrays). ``expected`` runs ``helpers.reference``; ``normalize`` turns what a learner
returned (numpy objects, or the plain JSON data the isolated grader sends back) into
a comparable form; ``agree`` applies the tolerance of the spec,
``abs(a - b) <= 1e-9 + 1e-6 * abs(b)``; ``diagnose`` names a known mistake.

How the grading engine uses it, per case: ``want = expected(check, case)`` before any
learner code runs; ``got = normalize(check.kind, value)`` (a ``ValueError`` is a wrong
type or form, its message in plain words); ``ok, detail = agree(check.kind, got, want)``;
when not ok, ``diagnose(check, case, got)`` gives the ``Mistake`` to name, or None.
When ``check.check_mutation`` and an argument changed during the call, the engine
reports ``mutation_mistake(check)``. Kind ``"files"`` (write_report) is judged by
``check_report_files`` on the two files' text; kind ``"constant"`` is a module
attribute compared with ``expected``.

This module is the teacher's: the learner build of ``helpers`` leaves it out.
"""

from __future__ import annotations

import copy
import json
import math
import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from helpers import mistakes as mk
from helpers import reference as ref

RTOL = 1e-6
ATOL = 1e-9
KINDS = ("array", "float", "int", "tuple", "str", "optional", "scan", "dict", "constant", "files")
# Keys of rope_report whose true value is 0: only float noise is left, judged by |value| < 1e-9.
NOISE_KEYS = ("rope_spread", "norm_max_gap")
NOISE_LIMIT = 1e-9
REPORT_KEYS = (
    "dim",
    "base",
    "offset",
    "starts",
    "rope_scores",
    "rope_spread",
    "add_scores",
    "add_spread",
    "norm_before",
    "norm_max_gap",
    "deltas",
    "slow_pairs",
    "turns_first",
    "turns_last",
)


@dataclass(frozen=True)
class Case:
    """One call of a graded function.

    ``args`` holds numpy float64 arrays, (nested) lists, ints, floats and strings;
    ``kwargs`` the keyword arguments; ``label`` the case in plain words.
    """

    args: tuple
    kwargs: dict = field(default_factory=dict)
    label: str = ""


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer, named in plain words.

    ``impl`` (and any ``variants``) are wrong implementations with the graded
    function's signature. ``detect`` is ``"output"`` when the mistake shows in the
    returned value (``diagnose`` finds it) and ``"mutation"`` when it shows as a changed
    argument (the engine finds it; ``impl`` then mutates its input). ``atol`` widens the
    comparison with ``impl`` for outputs that are float noise around a value (e.g. 0).
    """

    name: str
    message: str
    impl: Callable | None = None
    variants: tuple[Callable, ...] = ()
    detect: str = "output"
    atol: float = 0.0


@dataclass(frozen=True)
class FunctionCheck:
    """How one graded function is checked (see the module docstring for the kinds)."""

    name: str
    assignment: str
    section: str
    kind: str
    fixed: Callable[[], list[Case]]
    random: Callable[[np.random.Generator], list[Case]]
    mistakes: tuple[Mistake, ...] = ()
    check_mutation: bool = False
    timeout: float = 10.0


MUTATION = Mistake(
    name="input changed in place",
    message=(
        "your function changed its argument in place: the array or list it was given is "
        "different after the call. Build a new array for the result (np.empty_like(x), "
        "x.copy() or a new list) and leave the input as it was."
    ),
    detect="mutation",
)


# --------------------------------------------------------------------------- case helpers


def _d(rng: np.random.Generator, hi: int = 256) -> int:
    """An even model dimension in 2..hi."""
    return int(2 * rng.integers(1, hi // 2 + 1))


def _base(rng: np.random.Generator) -> float:
    """A base in 1e2..1e6, log-uniform."""
    return float(10.0 ** rng.uniform(2.0, 6.0))


def _pos(rng: np.random.Generator, hi: int = 4096) -> int:
    return int(rng.integers(0, hi + 1))


def _maybe_list(rng: np.random.Generator, x: np.ndarray):
    """The array itself or the same numbers as a (nested) list, at random."""
    return x.tolist() if rng.random() < 0.5 else x


def _words(x) -> str:
    """A plain-words description of an input: 'a list of 64 numbers', 'an array of shape (3, 4)'."""
    if isinstance(x, np.ndarray):
        if x.ndim == 1:
            return f"an array of {x.shape[0]} numbers"
        return f"an array of shape {tuple(x.shape)}"
    if isinstance(x, list):
        shape = np.shape(x)
        if len(shape) == 1:
            return f"a list of {shape[0]} numbers"
        return f"a nested list of shape {tuple(shape)}"
    return repr(x)


def _g(x: float) -> str:
    return f"{x:g}"


def _normal(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    return rng.normal(scale=scale, size=shape)


def _spread_positions(rng: np.random.Generator, n: int) -> np.ndarray:
    """n positions in 0..4096 (integers as float64 are not allowed: int64 array)."""
    return rng.integers(0, 4097, size=n)


# --------------------------------------------------------------------------- 01_order


def _softmax_fixed() -> list[Case]:
    return [
        Case(([1000.0, 1000.0],), {}, "x = [1000, 1000] (large equal values)"),
        Case(
            ([[1.0, 2.0, 3.0], [1000.0, 1001.0, 1002.0]],),
            {},
            "a 2 x 3 list whose second row has values near 1000",
        ),
        Case(
            ([[-np.inf, 0.0, -np.inf], [-np.inf, -np.inf, 5.0]],),
            {},
            "rows of -inf except one entry",
        ),
        Case((np.array([0.0, 1.0, 2.0]),), {}, "x = [0, 1, 2] as an array"),
        Case(
            (np.array([[0.5, -1.0], [2.0, 3.0], [0.0, 0.0]]),), {"axis": 0}, "a 3 x 2 array, axis=0"
        ),
        Case((np.array([[710.0, 0.0], [-3.0, 720.0]]),), {}, "a 2 x 2 array with values above 709"),
    ]


def _softmax_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(6):
        n, m = int(rng.integers(1, 8)), int(rng.integers(1, 12))
        x = _normal(rng, n, m, scale=float(rng.choice([1.0, 10.0, 400.0])))
        axis = int(rng.choice([-1, 0, 1]))
        cases.append(Case((_maybe_list(rng, x),), {"axis": axis}, f"x {_words(x)}, axis={axis}"))
    x = _normal(rng, int(rng.integers(2, 10))) + 1000.0
    cases.append(Case((x,), {}, f"x {_words(x)} around 1000"))
    return cases


def _attention_fixed() -> list[Case]:
    j = np.arange(24.0)
    Q = np.cos(0.7 * j[:8] + 0.3).reshape(2, 4)
    K = np.sin(0.4 * j[:12] + 1.1).reshape(3, 4) * 2.0
    V = np.cos(0.5 * j[:6]).reshape(3, 2)
    causal = np.array([[0.0, -np.inf, -np.inf], [0.0, 0.0, -np.inf]])
    return [
        Case((Q, K, V), {}, "Q 2x4, K 3x4, V 3x2 (d_k = 4), no bias"),
        Case(
            (Q.tolist(), K.tolist(), V.tolist()),
            {"bias": [0.5, -1.0, 0.0]},
            "the same as lists, bias a row of 3",
        ),
        Case((Q, K, V), {"bias": causal}, "Q 2x4, K 3x4, V 3x2 with a -inf mask as bias"),
        Case((Q[:1], K[:1], V[:1]), {}, "one query and one key (d_k = 4)"),
    ]


def _attention_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for t in range(6):
        n, m = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        dk, dv = int(rng.integers(1, 17)), int(rng.integers(1, 9))
        Q, K, V = _normal(rng, n, dk), _normal(rng, m, dk, scale=2.0), _normal(rng, m, dv)
        kwargs = {}
        label = f"Q {n}x{dk}, K {m}x{dk}, V {m}x{dv}"
        if t % 2:
            kwargs["bias"] = _maybe_list(rng, _normal(rng, n, m))
            label += f", bias {n}x{m}"
        as_list = bool(t % 3 == 0)
        args = (Q.tolist(), K.tolist(), V.tolist()) if as_list else (Q, K, V)
        cases.append(Case(args, kwargs, label + (" as lists" if as_list else "")))
    return cases


def _weights(rng: np.random.Generator, d: int, dk: int, dv: int) -> tuple:
    return (
        _normal(rng, d, dk, scale=0.6),
        _normal(rng, d, dk, scale=0.6),
        _normal(rng, d, dv, scale=0.6),
    )


def _order_inputs(seed: int, n: int, d: int) -> tuple:
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, d))
    Wq, Wk, Wv = _weights(r, d, d, d)
    perm = [int(p) for p in r.permutation(n)]
    return X, Wq, Wk, Wv, perm


def _self_attention_fixed() -> list[Case]:
    X, Wq, Wk, Wv, _ = _order_inputs(0, 5, 4)
    return [
        Case((X, Wq, Wk, Wv), {}, "X 5x4, square weights 4x4"),
        Case(
            (X[:1].tolist(), Wq.tolist(), Wk.tolist(), Wv[:, :2].tolist()),
            {},
            "one token as lists, Wv 4x2",
        ),
    ]


def _self_attention_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        n, d, dk, dv = (int(v) for v in rng.integers(1, 9, size=4))
        X = _normal(rng, n, d)
        Wq, Wk, Wv = _weights(rng, d, dk, dv)
        cases.append(
            Case((_maybe_list(rng, X), Wq, Wk, Wv), {}, f"X {n}x{d}, Wq/Wk {d}x{dk}, Wv {d}x{dv}")
        )
    return cases


def _permutation_gap_fixed() -> list[Case]:
    X, Wq, Wk, Wv, perm = _order_inputs(1, 6, 8)
    return [
        Case((X, Wq, Wk, Wv, perm), {}, f"X 6x8, perm {perm}"),
        Case((X[:1], Wq, Wk, Wv, [0]), {}, "one token, perm [0]"),
        # the true gap is float noise: a perm that is not a permutation must be refused
        Case(
            (X, Wq, Wk, Wv, [0, 0, 1, 2, 3, 4]),
            {},
            "bad input: perm [0, 0, 1, 2, 3, 4], not a permutation",
        ),
    ]


def _permutation_gap_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        n, d = int(rng.integers(2, 10)), int(rng.integers(1, 12))
        X = _normal(rng, n, d)
        perm = [int(p) for p in rng.permutation(n)]
        cases.append(
            Case(
                (_maybe_list(rng, X), *_weights(rng, d, d, d), perm), {}, f"X {n}x{d}, perm {perm}"
            )
        )
    return cases


def _order_gap_fixed() -> list[Case]:
    X, Wq, Wk, Wv, _ = _order_inputs(2, 6, 8)
    P = ref.sinusoidal_pe(6, 8)
    return [
        Case(
            (X, P, Wq, Wk, Wv, [5, 4, 3, 2, 1, 0]),
            {},
            "X 6x8, P = sinusoidal_pe(6, 8), reversed order",
        ),
        Case(
            (X.tolist(), ref.sinusoidal_pe(10, 8).tolist(), Wq, Wk, Wv, [1, 0, 2, 3, 4, 5]),
            {},
            "X 6x8 as a list, P with 10 rows, first two tokens swapped",
        ),
    ]


def _order_gap_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        n, d = int(rng.integers(2, 10)), _d(rng, 16)
        X = _normal(rng, n, d, scale=0.5)
        P = ref.sinusoidal_pe(n + int(rng.integers(0, 3)), d, _base(rng))
        perm = [int(p) for p in rng.permutation(n)]
        if perm == sorted(perm):
            perm = perm[::-1]
        label = f"X {n}x{d}, P {P.shape[0]}x{d}, perm {perm}"
        cases.append(Case((_maybe_list(rng, X), P, *_weights(rng, d, d, d), perm), {}, label))
    return cases


# --------------------------------------------------------------------------- 02_sincos


def _angle_rates_fixed() -> list[Case]:
    return [
        Case((4,), {}, "d=4 (rates 1 and 0.01)"),
        Case((2,), {}, "d=2"),
        Case((64,), {"base": 500.0}, "d=64, base=500"),
        Case((256,), {"base": 1e6}, "d=256, base=1e6"),
    ]


def _d_base_random(rng: np.random.Generator, n: int = 6) -> list[Case]:
    cases = []
    for _ in range(n):
        d, base = _d(rng), _base(rng)
        cases.append(Case((d,), {"base": base}, f"d={d}, base={_g(base)}"))
    return cases


def _sinusoidal_fixed() -> list[Case]:
    return [
        Case((4, 4), {}, "max_len=4, d=4 (the seed table)"),
        Case((1, 2), {}, "max_len=1, d=2"),
        Case((24, 16), {}, "max_len=24, d=16"),
        Case((3, 8), {"base": 100.0}, "max_len=3, d=8, base=100"),
    ]


def _sinusoidal_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(6):
        n, d, base = int(rng.integers(1, 65)), _d(rng, 64), _base(rng)
        cases.append(Case((n, d), {"base": base}, f"max_len={n}, d={d}, base={_g(base)}"))
    return cases


def _embed_fixed() -> list[Case]:
    r = np.random.default_rng(3)
    emb = r.normal(scale=0.02, size=(5, 8))
    return [
        Case((emb,), {}, "token_emb 5x8, small values"),
        Case((emb[:1].tolist(),), {"base": 100.0}, "one token (1x8) as a list, base=100"),
        Case(([[0.1, -0.2]],), {}, "token_emb 1x2"),
    ]


def _embed_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        n, d, base = int(rng.integers(1, 33)), _d(rng, 64), _base(rng)
        emb = _normal(rng, n, d, scale=0.1)
        cases.append(
            Case(
                (_maybe_list(rng, emb),),
                {"base": base},
                f"token_emb {_words(emb)}, base={_g(base)}",
            )
        )
    return cases


def _heatmap_fixed() -> list[Case]:
    return [
        Case((ref.sinusoidal_pe(24, 16),), {}, "pe = sinusoidal_pe(24, 16) (the seed picture)"),
        Case(
            (ref.sinusoidal_pe(4, 4).tolist(),),
            {"ramp": "01"},
            "pe = sinusoidal_pe(4, 4) as a list, ramp '01'",
        ),
        Case(([[-1.0, 1.0, 0.0, -0.99, 0.99]],), {}, "one row with -1, 1, 0, -0.99, 0.99"),
    ]


def _heatmap_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    ramps = [" .:-=+*#%@", "ab", "0123456789", " #"]
    for _ in range(5):
        n, m = int(rng.integers(1, 30)), int(rng.integers(1, 30))
        pe = rng.uniform(-1.0, 1.0, size=(n, m))
        ramp = str(rng.choice(ramps))
        cases.append(
            Case((_maybe_list(rng, pe),), {"ramp": ramp}, f"pe {_words(pe)}, ramp {ramp!r}")
        )
    return cases


# --------------------------------------------------------------------------- 03_norm


def _table_random(rng: np.random.Generator, n: int = 5, rows: tuple = (1, 65)) -> list[Case]:
    cases = []
    for t in range(n):
        L, d = int(rng.integers(*rows)), _d(rng, 64)
        pe = ref.sinusoidal_pe(L, d, _base(rng)) if t % 2 else _normal(rng, L, d)
        what = "a sinusoidal table" if t % 2 else "random values"
        cases.append(Case((_maybe_list(rng, pe),), {}, f"pe {_words(pe)} ({what})"))
    return cases


def _pe_norms_fixed() -> list[Case]:
    return [
        Case((ref.sinusoidal_pe(5, 32),), {}, "pe = sinusoidal_pe(5, 32) (norm 4.0 each)"),
        Case(([[3.0, 4.0], [0.0, 0.0], [1.0, -1.0]],), {}, "a 3x2 list"),
    ]


def _expected_norm_fixed() -> list[Case]:
    return [Case((32,), {}, "d=32"), Case((2,), {}, "d=2"), Case((512,), {}, "d=512")]


def _expected_norm_random(rng: np.random.Generator) -> list[Case]:
    return [Case((d,), {}, f"d={d}") for d in (_d(rng) for _ in range(5))]


def _min_distance_fixed() -> list[Case]:
    return [
        Case((ref.sinusoidal_pe(100, 32),), {}, "pe = sinusoidal_pe(100, 32) (the seed: 1.1716)"),
        Case(([[0.0, 0.0], [3.0, 4.0]],), {}, "two rows [0, 0] and [3, 4]"),
        Case(
            ([[1.0, 1.0], [1.0, 1.0], [2.0, 1.0]],), {}, "two equal rows among three (distance 0)"
        ),
    ]


def _min_distance_random(rng: np.random.Generator) -> list[Case]:
    return _table_random(rng, 5, rows=(2, 41))


def _ratio_fixed() -> list[Case]:
    r = np.random.default_rng(4)
    emb = r.normal(scale=0.02, size=(6, 32))
    return [
        Case((emb,), {}, "token_emb 6x32 with std 0.02, scale=True"),
        Case((emb.tolist(),), {"scale": False}, "token_emb 6x32 as a list, scale=False"),
        Case(([[3.0, 4.0]],), {}, "one row [3, 4]"),
    ]


def _ratio_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        n, d = int(rng.integers(1, 20)), _d(rng, 64)
        emb = _normal(rng, n, d, scale=float(rng.choice([0.02, 1.0])))
        scale = bool(rng.random() < 0.5)
        cases.append(
            Case(
                (_maybe_list(rng, emb),),
                {"scale": scale},
                f"token_emb {_words(emb)}, scale={scale}",
            )
        )
    return cases


# --------------------------------------------------------------------------- 04_decay

SEED_OFFSETS = [0, 1, 2, 3, 5, 8, 10, 15, 20]


def _dot_profile_fixed() -> list[Case]:
    return [
        Case(
            (ref.sinusoidal_pe(46, 32), 25, SEED_OFFSETS),
            {},
            "pe = sinusoidal_pe(46, 32), pos=25, the seed offsets",
        ),
        Case(
            (ref.sinusoidal_pe(3, 2).tolist(), 0, [0, 2]),
            {},
            "pe = sinusoidal_pe(3, 2) as a list, pos=0",
        ),
        Case((ref.sinusoidal_pe(8, 4), 7, [0]), {}, "the last row, offset 0"),
        Case(
            (ref.sinusoidal_pe(8, 4), 5, [0, 3]),
            {},
            "pos=5 in a table of 8 rows, offset 3 past the end",
        ),
    ]


def _dot_profile_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        L, d = int(rng.integers(2, 65)), _d(rng, 64)
        pe = ref.sinusoidal_pe(L, d, _base(rng))
        pos = int(rng.integers(0, L))
        offsets = sorted({int(k) for k in rng.integers(0, L - pos, size=int(rng.integers(1, 8)))})
        cases.append(
            Case(
                (_maybe_list(rng, pe), pos, offsets),
                {},
                f"pe {_words(pe)}, pos={pos}, offsets {offsets}",
            )
        )
    return cases


def _closed_form_fixed() -> list[Case]:
    return [
        Case((SEED_OFFSETS, 32), {}, "the seed offsets, d=32"),
        Case(([0, 4096], 2), {"base": 100.0}, "offsets [0, 4096], d=2, base=100"),
    ]


def _closed_form_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        d, base = _d(rng), _base(rng)
        offsets = [int(k) for k in _spread_positions(rng, int(rng.integers(1, 10)))]
        cases.append(
            Case((offsets, d), {"base": base}, f"offsets {offsets}, d={d}, base={_g(base)}")
        )
    return cases


def _rebound_fixed() -> list[Case]:
    seed_profile = [16.00, 15.31, 13.73, 12.27, 11.78, 10.52, 10.06, 8.41, 10.47]
    return [
        Case((SEED_OFFSETS, seed_profile), {}, "the seed table (rebounds at 20)"),
        Case(([0, 1, 2, 3], [4.0, 3.0, 2.0, 1.0]), {}, "a decreasing profile (no rebound)"),
        Case(([0, 1, 2], [3.0, 3.0, 2.0]), {}, "an equal step then a drop (no rebound)"),
        Case(([0, 5], np.array([1.0, 2.0])), {}, "two values, the second larger"),
        Case(([7], [1.0]), {}, "a single value"),
    ]


def _rebound_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for t in range(5):
        n = int(rng.integers(2, 12))
        offsets = sorted({int(k) for k in rng.integers(0, 200, size=n)})
        prof = np.sort(_normal(rng, len(offsets)))[::-1] if t == 0 else _normal(rng, len(offsets))
        cases.append(
            Case(
                (offsets, _maybe_list(rng, prof)),
                {},
                f"offsets {offsets}, a profile {_words(prof)}",
            )
        )
    return cases


def _decay_bound_fixed() -> list[Case]:
    return [Case((32, 20), {}, "d=32, max_dist=20"), Case((2, 0), {}, "d=2, max_dist=0")]


def _decay_bound_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(4):
        d, r, base = _d(rng, 128), int(rng.integers(0, 200)), _base(rng)
        cases.append(Case((d, r), {"base": base}, f"d={d}, max_dist={r}, base={_g(base)}"))
    return cases


# --------------------------------------------------------------------------- 05_rotation


def _rotation_fixed() -> list[Case]:
    return [
        Case((math.pi / 2,), {}, "angle = pi/2"),
        Case((0.0,), {}, "angle = 0"),
        Case((0.3,), {}, "angle = 0.3"),
    ]


def _rotation_random(rng: np.random.Generator) -> list[Case]:
    return [
        Case((a,), {}, f"angle = {a:.6g}") for a in (float(rng.uniform(-10, 10)) for _ in range(5))
    ]


def _rotate_pair_fixed() -> list[Case]:
    return [
        Case((1.0, 0.0, math.pi / 2), {}, "(1, 0) by pi/2"),
        Case((0.5, -2.0, 0.0), {}, "(0.5, -2) by 0"),
        Case((2.0, 1.0, 1.25), {}, "(2, 1) by 1.25"),
    ]


def _rotate_pair_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        x0, x1, a = (float(v) for v in (rng.normal(), rng.normal(), rng.uniform(-10, 10)))
        cases.append(Case((x0, x1, a), {}, f"({x0:.4g}, {x1:.4g}) by {a:.4g}"))
    return cases


def _shift_matrix_fixed() -> list[Case]:
    return [
        Case((3, 8), {}, "k=3, d=8 (the seed check)"),
        Case((0, 4), {}, "k=0, d=4"),
        Case((1, 2), {"base": 100.0}, "k=1, d=2, base=100"),
    ]


def _shift_matrix_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        k, d, base = _pos(rng), _d(rng, 64), _base(rng)
        cases.append(Case((k, d), {"base": base}, f"k={k}, d={d}, base={_g(base)}"))
    return cases


def _shift_error_fixed() -> list[Case]:
    return [
        Case((3, 8, 20), {}, "k=3, d=8, max_len=20"),
        Case((0, 2, 1), {}, "k=0, d=2, max_len=1"),
        # the true error is float noise, so the bad inputs are what tells an answer from
        # a constant 0.0
        Case((5, 8, 5), {}, "bad input: k=5 with max_len=5 (no position to shift)"),
        Case((3, 7, 20), {}, "bad input: an odd d=7"),
    ]


def _shift_error_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(4):
        L, d, base = int(rng.integers(1, 300)), _d(rng, 64), _base(rng)
        k = int(rng.integers(0, L))
        cases.append(Case((k, d, L), {"base": base}, f"k={k}, d={d}, max_len={L}, base={_g(base)}"))
    return cases


# --------------------------------------------------------------------------- 06_rope


def _constant_fixed() -> list[Case]:
    return [Case((), {}, "the module constant")]


def _no_cases(rng: np.random.Generator) -> list[Case]:
    return []


def _demo_fixed() -> list[Case]:
    return [Case((), {}, "demo_vectors()")]


def _dot_fixed() -> list[Case]:
    q, k = ref.demo_vectors()
    return [
        Case((q, k), {}, "the demo vectors q and k"),
        Case(([1.0, 2.0], [3.0, -4.0]), {}, "[1, 2] . [3, -4] as lists"),
        Case((np.stack([q, k]), np.stack([k, k])), {}, "a batch of 2 vectors of 64 numbers"),
    ]


def _dot_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for t in range(5):
        d = _d(rng)
        shape = (d,) if t % 2 == 0 else (int(rng.integers(1, 5)), d)
        a, b = rng.normal(size=shape), rng.normal(size=shape)
        cases.append(Case((_maybe_list(rng, a), _maybe_list(rng, b)), {}, f"a and b {_words(a)}"))
    return cases


def _thetas_fixed() -> list[Case]:
    return [
        Case((64,), {}, "d=64"),
        Case((2,), {}, "d=2"),
        Case((8,), {"base": 100.0}, "d=8, base=100"),
    ]


def _rope_fixed() -> list[Case]:
    q, _ = ref.demo_vectors()
    batch = np.stack([q, q[::-1], np.cos(np.arange(64.0))])
    return [
        Case((q, 0), {}, "d=64, pos=0 (the demo q)"),
        Case((q, 4096), {}, "d=64, pos=4096 (the demo q)"),
        Case((q.tolist(), 7), {"base": 500.0}, "d=64, pos=7, base=500, the demo q as a list"),
        Case(([0.6, -0.8], 3), {}, "d=2, pos=3, a list of 2 numbers"),
        Case(
            (batch, np.array([0, 5, 4096])),
            {},
            "d=64, a batch of 3 vectors, positions [0, 5, 4096]",
        ),
        Case((batch[:2].tolist(), 11), {}, "d=64, a batch of 2 vectors as a list, one pos=11"),
    ]


def _rope_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for t in range(7):
        d, base = _d(rng), _base(rng)
        if t % 3 == 2:
            n = int(rng.integers(1, 5))
            vec = rng.normal(size=(n, d))
            pos = _spread_positions(rng, n)
            label = f"d={d}, a batch of {n} vectors, positions {pos.tolist()}, base={_g(base)}"
        else:
            vec, pos = rng.normal(size=d), _pos(rng)
            label = f"d={d}, pos={pos}, base={_g(base)}"
        as_list = rng.random() < 0.5
        args = (vec.tolist() if as_list else vec, pos.tolist() if as_list and t % 3 == 2 else pos)
        cases.append(Case(args, {"base": base}, label + (" as lists" if as_list else "")))
    return cases


def _rope_score_fixed() -> list[Case]:
    q, k = ref.demo_vectors()
    return [
        Case((q, k, 5, 3), {}, "the demo q at m=5, k at n=3"),
        Case((q.tolist(), k.tolist(), 4096, 0), {}, "the demo vectors as lists, m=4096, n=0"),
        Case(([1.0, 0.0], [0.0, 1.0], 0, 2), {"base": 100.0}, "d=2, m=0, n=2, base=100"),
    ]


def _rope_score_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(6):
        d, base, m, n = _d(rng), _base(rng), _pos(rng), _pos(rng)
        q, k = rng.normal(size=d), rng.normal(size=d)
        cases.append(
            Case(
                (_maybe_list(rng, q), k, m, n),
                {"base": base},
                f"d={d}, m={m}, n={n}, base={_g(base)}",
            )
        )
    return cases


SEED_DELTAS = (1, 16, 256, 4096)


def _turns_fixed() -> list[Case]:
    return [Case((64, delta), {}, f"d=64, delta={delta}") for delta in SEED_DELTAS] + [
        Case((2, 0), {"base": 100.0}, "d=2, delta=0, base=100")
    ]


def _turns_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        d, delta, base = _d(rng), _pos(rng), _base(rng)
        cases.append(Case((d, delta), {"base": base}, f"d={d}, delta={delta}, base={_g(base)}"))
    return cases


def _rope_half_fixed() -> list[Case]:
    q, _ = ref.demo_vectors()
    return [
        Case((q, 4096), {}, "d=64, pos=4096 (the demo q)"),
        Case((q.tolist(), 0), {}, "d=64, pos=0, as a list"),
        Case(
            (np.stack([q, q[::-1]]), np.array([1, 100])),
            {"base": 500.0},
            "a batch of 2, positions [1, 100], base=500",
        ),
    ]


def _interleave_fixed() -> list[Case]:
    return [
        Case(([0.0, 1.0, 2.0, 3.0, 4.0, 5.0],), {}, "[0, 1, 2, 3, 4, 5] as a list"),
        Case((np.arange(8.0).reshape(2, 4),), {}, "a batch of 2 vectors of 4 numbers"),
        Case((np.array([1.0, 2.0]),), {}, "d=2"),
    ]


def _interleave_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for t in range(4):
        d = _d(rng)
        shape = (d,) if t % 2 == 0 else (int(rng.integers(1, 4)), d)
        vec = rng.normal(size=shape)
        cases.append(Case((_maybe_list(rng, vec),), {}, f"vec {_words(vec)}"))
    return cases


# --------------------------------------------------------------------------- 07_alibi


def _slopes_fixed() -> list[Case]:
    return [Case((n,), {}, f"n_heads={n}") for n in (8, 1, 2, 6, 12)]


def _slopes_random(rng: np.random.Generator) -> list[Case]:
    return [Case((n,), {}, f"n_heads={n}") for n in (int(v) for v in rng.integers(1, 65, size=5))]


def _bias_fixed() -> list[Case]:
    return [
        Case((8, 4), {}, "n_heads=8, seq_len=4, causal"),
        Case((6, 5), {"causal": False}, "n_heads=6, seq_len=5, not causal"),
        Case((1, 1), {}, "one head, seq_len=1"),
    ]


def _bias_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        h, L, causal = int(rng.integers(1, 9)), int(rng.integers(1, 17)), bool(rng.random() < 0.5)
        cases.append(Case((h, L), {"causal": causal}, f"n_heads={h}, seq_len={L}, causal={causal}"))
    return cases


def _alibi_attention_fixed() -> list[Case]:
    r = np.random.default_rng(5)
    Q, K, V = (r.normal(size=(2, 4, 8)) for _ in range(3))
    slopes = ref.alibi_slopes(2)
    return [
        Case((Q, K, V, slopes), {}, "2 heads, L=4, d=8, causal"),
        Case(
            (Q.tolist(), K.tolist(), V.tolist(), slopes.tolist()),
            {"causal": False},
            "the same as lists, not causal",
        ),
        Case((Q[:1, :1], K[:1, :1], V[:1, :1], [0.5]), {}, "one head, one token"),
    ]


def _alibi_attention_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(4):
        h, L, d = int(rng.integers(1, 5)), int(rng.integers(1, 9)), int(rng.integers(1, 9))
        Q, K, V = (rng.normal(size=(h, L, d)) for _ in range(3))
        slopes = ref.alibi_slopes(h)
        causal = bool(rng.random() < 0.5)
        label = f"{h} heads, L={L}, d={d}, causal={causal}"
        cases.append(Case((_maybe_list(rng, Q), K, V, slopes), {"causal": causal}, label))
    return cases


def _weights_tensor(rng: np.random.Generator, h: int, L: int) -> np.ndarray:
    return ref.softmax(rng.normal(scale=2.0, size=(h, L, L)))


def _mad_fixed() -> list[Case]:
    eye = np.eye(3)[None]
    uniform = np.full((1, 4, 4), 0.25)
    return [
        Case((eye,), {}, "one head that looks only at itself (L=3)"),
        Case((uniform.tolist(),), {}, "one uniform head (L=4) as a list"),
        Case((_weights_tensor(np.random.default_rng(6), 3, 5),), {}, "3 heads, L=5"),
    ]


def _mad_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(4):
        h, L = int(rng.integers(1, 6)), int(rng.integers(1, 13))
        w = _weights_tensor(rng, h, L)
        cases.append(Case((_maybe_list(rng, w),), {}, f"weights {_words(w)}"))
    return cases


# --------------------------------------------------------------------------- 08_offsets


def _sin_pos_fixed() -> list[Case]:
    return [
        Case((0, 64), {}, "pos=0, d=64"),
        Case((4096, 64), {}, "pos=4096, d=64"),
        Case((3, 2), {"base": 100.0}, "pos=3, d=2, base=100"),
    ]


def _sin_pos_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(5):
        pos, d, base = _pos(rng), _d(rng), _base(rng)
        cases.append(Case((pos, d), {"base": base}, f"pos={pos}, d={d}, base={_g(base)}"))
    return cases


def _add_score_fixed() -> list[Case]:
    q, k = ref.demo_vectors()
    return [
        Case((q, k, 5, 3), {}, "the demo q at m=5, k at n=3"),
        Case((q.tolist(), k.tolist(), 4002, 4000), {}, "the demo vectors as lists, m=4002, n=4000"),
        Case(([0.5, 0.5], [1.0, -1.0], 0, 0), {"base": 100.0}, "d=2, m=0, n=0, base=100"),
    ]


def _offset_scan_fixed() -> list[Case]:
    q, k = ref.demo_vectors()
    return [
        Case(
            (q, k, 2, [3, 10, 100, 4000]), {}, "the demo vectors, offset 2, starts 3, 10, 100, 4000"
        ),
        Case(
            (q.tolist(), k.tolist(), 5, [0]),
            {"base": 500.0},
            "the demo vectors as lists, offset 5, start 0, base=500",
        ),
        Case(
            ([1.0, 0.0], [0.0, 1.0], 3, [4, 0, 2]), {}, "d=2, offset 3, starts 4, 0, 2 (not sorted)"
        ),
    ]


def _offset_scan_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(4):
        d, base, offset = _d(rng), _base(rng), int(rng.integers(0, 65))
        q, k = rng.normal(size=d), rng.normal(size=d)
        starts = [int(s) for s in rng.integers(0, 4097 - offset, size=int(rng.integers(1, 6)))]
        label = f"d={d}, offset {offset}, starts {starts}, base={_g(base)}"
        cases.append(
            Case((_maybe_list(rng, q), _maybe_list(rng, k), offset, starts), {"base": base}, label)
        )
    return cases


def _spread_fixed() -> list[Case]:
    return [
        Case(([3.0, -1.0, 2.5],), {}, "[3, -1, 2.5]"),
        Case(([7.0],), {}, "a single value"),
        Case((np.array([1e-14, -2e-14, 0.0]),), {}, "tiny values as an array"),
    ]


def _spread_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(4):
        v = _normal(rng, int(rng.integers(1, 20)), scale=float(rng.choice([1.0, 100.0])))
        cases.append(Case((_maybe_list(rng, v),), {}, f"values {_words(v)}"))
    return cases


def _vector_pair_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for _ in range(6):
        d, base, m, n = _d(rng), _base(rng), _pos(rng), _pos(rng)
        q, k = rng.normal(size=d), rng.normal(size=d)
        cases.append(
            Case(
                (_maybe_list(rng, q), k, m, n),
                {"base": base},
                f"d={d}, m={m}, n={n}, base={_g(base)}",
            )
        )
    return cases


# --------------------------------------------------------------------------- the mistakes

_CLOCKWISE = (
    "your rotation is clockwise: (x0, x1) -> (x0 cos a + x1 sin a, -x0 sin a + x1 cos a). "
    "Counter-clockwise is (x0 cos a - x1 sin a, x0 sin a + x1 cos a)."
)

M_SOFTMAX_NO_MAX = Mistake(
    "no max subtraction",
    "your softmax returns nan for large inputs such as [1000, 1000]: exp(1000) overflows to inf "
    "and inf / inf is nan. Subtract the largest value of each row (along axis) before exp; "
    "the result does not change, and exp never sees a number above 0.",
    mk.softmax_no_max,
)
M_ATTENTION_UNSCALED = Mistake(
    "missing 1/sqrt(d_k)",
    "your scores are Q K^T without the scale: divide them by sqrt(d_k) (d_k = the number of "
    "columns of Q and K) before the softmax.",
    mk.attention_unscaled,
)
M_ATTENTION_DK = Mistake(
    "dividing by d_k",
    "your scores are divided by d_k; the scale is 1/sqrt(d_k): Q K^T / sqrt(d_k).",
    mk.attention_divided_by_dk,
)
M_ORDER_GAP = Mistake(
    "adding positions before shuffling",
    "your gap is about 0 because the positions were added before the tokens were shuffled, so "
    "they moved with the tokens. Shuffle first and add P to the shuffled tokens: "
    "self_attention(X[perm] + P) against self_attention(X + P)[perm].",
    mk.order_gap_positions_first,
)
M_PE_SWAPPED = Mistake(
    "sin and cos swapped",
    "your table has cos in the even dimensions and sin in the odd ones. Even dimensions 2i hold "
    "sin(pos * theta_i), odd dimensions 2i+1 hold cos(pos * theta_i): row 0 is [0, 1, 0, 1, ...].",
    mk.sinusoidal_pe_swapped,
)
M_RATES_EXPONENT = Mistake(
    "exponent i/d instead of 2i/d",
    "your angle rates use the exponent i/d (an angle per dimension). Pair i (dimensions 2i and "
    "2i+1) has one rate, theta_i = base ** (-2i/d): for d=4 the rates are 1 and 1/base**0.5 "
    "(0.01 for base 10000).",
    mk.angle_rates_half_exponent,
    variants=(mk.angle_rates_per_dimension,),
)
M_PE_EXPONENT = Mistake(
    "exponent i/d instead of 2i/d",
    "your table uses the exponent i/d (an angle per dimension). Pair i (dimensions 2i and 2i+1) "
    "shares one angle, pos * theta_i with theta_i = base ** (-2i/d): sin in dimension 2i, cos "
    "in dimension 2i+1.",
    mk.sinusoidal_pe_half_exponent,
    variants=(mk.sinusoidal_pe_per_dimension,),
)
M_PE_FROM_ONE = Mistake(
    "positions starting at 1",
    "your first row is position 1. Positions start at 0: row 0 is [0, 1, 0, 1, ...] "
    "(sin 0 = 0, cos 0 = 1), row pos is position pos.",
    mk.sinusoidal_pe_from_one,
)
M_EMBED_UNSCALED = Mistake(
    "missing the sqrt(d) scale",
    "your result is token_emb + PE: multiply the token embeddings by sqrt(d) first, "
    "token_emb * sqrt(d) + PE[:n], so that small embeddings are not drowned by the positions.",
    mk.embed_unscaled,
)
M_NORM_SQRT_D = Mistake(
    "sqrt(d) instead of sqrt(d/2)",
    "your norm is sqrt(d). A row has d/2 pairs and each pair contributes sin^2 + cos^2 = 1, so "
    "the squared norm is d/2 and the norm sqrt(d/2) (d=32: 4.0).",
    mk.expected_norm_sqrt_d,
)
M_MIN_DISTANCE_SELF = Mistake(
    "a row compared with itself",
    "your smallest distance is 0 because each row was also compared with itself. Only compare "
    "two different rows (a != b), e.g. skip the diagonal of the distance matrix.",
    mk.min_pairwise_with_self,
    atol=1e-6,
)
M_ROTATION_CW = Mistake(
    "clockwise rotation",
    "your matrix rotates clockwise: [[cos a, sin a], [-sin a, cos a]]. Counter-clockwise is "
    "[[cos a, -sin a], [sin a, cos a]].",
    mk.rotation_2d_clockwise,
)
M_ROTATE_PAIR_CW = Mistake("clockwise rotation", _CLOCKWISE, mk.rotate_pair_clockwise)
M_SHIFT_CW = Mistake(
    "clockwise rotation",
    "your blocks turn the wrong way: they move the table k steps back. On a [sin, cos] pair the "
    "block that moves k steps forward is [[cos(k theta), sin(k theta)], [-sin(k theta), "
    "cos(k theta)]] (from sin(a+b) = sin a cos b + cos a sin b and cos(a+b) = cos a cos b - "
    "sin a sin b).",
    mk.shift_matrix_clockwise,
)
M_ROPE_CW = Mistake("clockwise rotation", _CLOCKWISE, mk.apply_rope_clockwise)
M_ROPE_PER_DIM = Mistake(
    "an angle per dimension instead of per pair",
    "your angles were counted per dimension (an index or exponent of dimension j where the "
    "pair number i belongs). There is one rate per pair, theta_i = base ** (-2i/d) for "
    "i = 0 .. d/2 - 1, and both numbers of pair i are rotated by the same pos * theta_i.",
    mk.apply_rope_per_dimension,
    variants=(mk.apply_rope_half_exponent, mk.apply_rope_angle_per_element),
)
M_ROPE_PAIR0 = Mistake(
    "pair 0's angle for every pair",
    "every pair of your vector is rotated by the same angle pos * theta_0 = pos. Each pair has "
    "its own speed: pair i is rotated by pos * theta_i with theta_i = base ** (-2i/d).",
    mk.apply_rope_pair0_angle,
)
M_ROPE_MUTATION = Mistake(
    "input changed in place",
    "your apply_rope wrote the rotated values into the vector it was given, so the caller's "
    "vector changed. Return a new array (out = np.empty_like(x) with x = np.array(vec, "
    "dtype=float)) and leave vec as it was.",
    mk.apply_rope_in_place,
    detect="mutation",
)
M_ROPE_HALF = Mistake(
    "half-split pairs instead of interleaved",
    "your pairs are (i, i + d/2), the half-split layout of GPT-NeoX. This course pairs "
    "neighbours: pair i is (vec[2i], vec[2i+1]).",
    mk.apply_rope_half_split,
)
M_SCORE_QUERY_ONLY = Mistake(
    "only the query rotated",
    "your score rotates the query but not the key. Rotate both, each by its own position: "
    "dot(apply_rope(q, m), apply_rope(k, n)).",
    mk.rope_score_query_only,
)
M_TURNS_NO_2PI = Mistake(
    "not divided by 2*pi",
    "your values are the angles delta * theta_i in radians. One turn is 2*pi radians: "
    "turns = delta * theta_i / (2*pi).",
    mk.turns_without_2pi,
)
M_SLOPES_POW2 = Mistake(
    "the power-of-two formula for any head count",
    "your slopes use 2 ** (-8h/n) for every n. That rule is for a power of two only; otherwise "
    "take the slopes of the closest smaller power of two p, then every other slope of 2p "
    "(the first n - p of them).",
    mk.alibi_slopes_power_of_two_rule,
)
M_BIAS_POSITIVE = Mistake(
    "positive instead of negative bias",
    "your bias is +slope * distance, which rewards far tokens. ALiBi penalises distance: "
    "bias[h, i, j] = -slope_h * (i - j) for j <= i.",
    mk.alibi_bias_positive,
)
M_BIAS_ROW_CONSTANT = Mistake(
    "the per-row constant shortcut",
    "your bias is +slope * j: it differs from -slope * (i - j) by a constant in each row, which "
    "softmax ignores, but the bias itself is asked for. Use bias[h, i, j] = -slope_h * (i - j) "
    "(0 on the diagonal, more negative further left).",
    mk.alibi_bias_row_constant,
)
M_ADD_ONE_SIDE = Mistake(
    "the position added to one side only",
    "your score adds a position vector to one side only. Add sin_pos(m) to q and sin_pos(n) to "
    "k, then take the dot product: dot(q + sin_pos(m), k + sin_pos(n)).",
    mk.add_score_query_side_only,
    variants=(mk.add_score_key_side_only,),
)
M_SCAN_SWAPPED = Mistake(
    "query and key positions swapped",
    "your scan puts the query at start and the key at start + offset. The query goes to "
    "start + offset and the key to start: (start, rope_score(q, k, start + offset, start), "
    "add_score(q, k, start + offset, start)).",
    mk.offset_scan_swapped,
)


# --------------------------------------------------------------------------- the catalogue

_SPECS: list[tuple] = [
    # (name, assignment, kind, fixed, random, mistakes, check_mutation)
    ("softmax", "01_order", "array", _softmax_fixed, _softmax_random, (M_SOFTMAX_NO_MAX,), True),
    (
        "attention",
        "01_order",
        "array",
        _attention_fixed,
        _attention_random,
        (M_ATTENTION_UNSCALED, M_ATTENTION_DK),
        True,
    ),
    (
        "self_attention",
        "01_order",
        "array",
        _self_attention_fixed,
        _self_attention_random,
        (),
        True,
    ),
    (
        "permutation_gap",
        "01_order",
        "float",
        _permutation_gap_fixed,
        _permutation_gap_random,
        (),
        True,
    ),
    (
        "order_gap_with_pe",
        "01_order",
        "float",
        _order_gap_fixed,
        _order_gap_random,
        (M_ORDER_GAP,),
        True,
    ),
    (
        "angle_rates",
        "02_sincos",
        "array",
        _angle_rates_fixed,
        _d_base_random,
        (M_RATES_EXPONENT,),
        False,
    ),
    (
        "sinusoidal_pe",
        "02_sincos",
        "array",
        _sinusoidal_fixed,
        _sinusoidal_random,
        (M_PE_SWAPPED, M_PE_EXPONENT, M_PE_FROM_ONE),
        False,
    ),
    ("wavelengths", "02_sincos", "array", _angle_rates_fixed, _d_base_random, (), False),
    (
        "embed_with_positions",
        "02_sincos",
        "array",
        _embed_fixed,
        _embed_random,
        (M_EMBED_UNSCALED,),
        True,
    ),
    ("text_heatmap", "02_sincos", "str", _heatmap_fixed, _heatmap_random, (), True),
    ("pe_norms", "03_norm", "array", _pe_norms_fixed, _table_random, (), True),
    (
        "expected_norm",
        "03_norm",
        "float",
        _expected_norm_fixed,
        _expected_norm_random,
        (M_NORM_SQRT_D,),
        False,
    ),
    (
        "min_pairwise_distance",
        "03_norm",
        "float",
        _min_distance_fixed,
        _min_distance_random,
        (M_MIN_DISTANCE_SELF,),
        True,
    ),
    ("embedding_to_position_ratio", "03_norm", "float", _ratio_fixed, _ratio_random, (), True),
    ("dot_profile", "04_decay", "array", _dot_profile_fixed, _dot_profile_random, (), True),
    ("closed_form_dot", "04_decay", "array", _closed_form_fixed, _closed_form_random, (), True),
    ("first_rebound", "04_decay", "optional", _rebound_fixed, _rebound_random, (), True),
    ("rope_decay_bound", "04_decay", "array", _decay_bound_fixed, _decay_bound_random, (), False),
    (
        "rotation_2d",
        "05_rotation",
        "array",
        _rotation_fixed,
        _rotation_random,
        (M_ROTATION_CW,),
        False,
    ),
    (
        "rotate_pair",
        "05_rotation",
        "tuple",
        _rotate_pair_fixed,
        _rotate_pair_random,
        (M_ROTATE_PAIR_CW,),
        False,
    ),
    (
        "shift_matrix",
        "05_rotation",
        "array",
        _shift_matrix_fixed,
        _shift_matrix_random,
        (M_SHIFT_CW,),
        False,
    ),
    ("shift_error", "05_rotation", "float", _shift_error_fixed, _shift_error_random, (), False),
    ("DIM", "06_rope", "constant", _constant_fixed, _no_cases, (), False),
    ("THETA_BASE", "06_rope", "constant", _constant_fixed, _no_cases, (), False),
    ("demo_vectors", "06_rope", "tuple", _demo_fixed, _no_cases, (), False),
    ("dot", "06_rope", "array", _dot_fixed, _dot_random, (), True),
    ("thetas", "06_rope", "array", _thetas_fixed, _d_base_random, (), False),
    (
        "apply_rope",
        "06_rope",
        "array",
        _rope_fixed,
        _rope_random,
        (M_ROPE_CW, M_ROPE_PER_DIM, M_ROPE_PAIR0, M_ROPE_MUTATION, M_ROPE_HALF),
        True,
    ),
    (
        "rope_score",
        "06_rope",
        "float",
        _rope_score_fixed,
        _rope_score_random,
        (M_SCORE_QUERY_ONLY,),
        True,
    ),
    ("turns", "06_rope", "array", _turns_fixed, _turns_random, (M_TURNS_NO_2PI,), False),
    ("slow_pairs", "06_rope", "int", _turns_fixed, _turns_random, (), False),
    ("rope_half", "06_rope", "array", _rope_half_fixed, _rope_random, (), True),
    ("interleaved_to_half", "06_rope", "array", _interleave_fixed, _interleave_random, (), True),
    ("alibi_slopes", "07_alibi", "array", _slopes_fixed, _slopes_random, (M_SLOPES_POW2,), False),
    (
        "alibi_bias",
        "07_alibi",
        "array",
        _bias_fixed,
        _bias_random,
        (M_BIAS_POSITIVE, M_BIAS_ROW_CONSTANT),
        False,
    ),
    (
        "alibi_attention",
        "07_alibi",
        "array",
        _alibi_attention_fixed,
        _alibi_attention_random,
        (),
        True,
    ),
    ("mean_attention_distance", "07_alibi", "array", _mad_fixed, _mad_random, (), True),
    ("sin_pos", "08_offsets", "array", _sin_pos_fixed, _sin_pos_random, (), False),
    (
        "add_score",
        "08_offsets",
        "float",
        _add_score_fixed,
        _vector_pair_random,
        (M_ADD_ONE_SIDE,),
        True,
    ),
    (
        "offset_scan",
        "08_offsets",
        "scan",
        _offset_scan_fixed,
        _offset_scan_random,
        (M_SCAN_SWAPPED,),
        True,
    ),
    ("spread", "08_offsets", "float", _spread_fixed, _spread_random, (), True),
    ("rope_report", "08_offsets", "dict", _constant_fixed, _no_cases, (), False),
    ("write_report", "08_offsets", "files", _constant_fixed, _no_cases, (), False),
]


def _build() -> dict[str, FunctionCheck]:
    checks: dict[str, FunctionCheck] = {}
    exercise: dict[str, int] = {}
    for name, assignment, kind, fixed, random, mistakes, mutation in _SPECS:
        if kind == "constant":  # given with the answer cell of the first exercise, not one itself
            section = f"the answer cell of Exercise 1, which defines {name}"
        else:
            exercise[assignment] = exercise.get(assignment, 0) + 1
            section = f"Exercise {exercise[assignment]}: `{name}`"
        checks[name] = FunctionCheck(
            name=name,
            assignment=assignment,
            section=section,
            kind=kind,
            fixed=fixed,
            random=random,
            mistakes=tuple(mistakes),
            check_mutation=mutation,
        )
    return checks


CHECKS: dict[str, FunctionCheck] = _build()


def checks_for(assignment: str) -> list[FunctionCheck]:
    """The checks of one notebook, in notebook order; an unknown id raises ValueError."""
    found = [c for c in CHECKS.values() if c.assignment == assignment]
    if not found:
        known = sorted({c.assignment for c in CHECKS.values()})
        raise ValueError(f"assignment must be one of {known}, got {assignment!r}")
    return found


def mutation_mistake(check: FunctionCheck) -> Mistake:
    """The mistake to name when ``check``'s function changed one of its arguments."""
    for m in check.mistakes:
        if m.detect == "mutation":
            return m
    return MUTATION


def cases(check: FunctionCheck, rng: np.random.Generator | None = None) -> list[Case]:
    """The fixed cases of ``check``, then its random ones when ``rng`` is given."""
    out = list(check.fixed())
    if rng is not None:
        out.extend(check.random(rng))
    return out


# --------------------------------------------------------------------------- expected values


def expected(check: FunctionCheck, case: Case):
    """The reference output of ``check`` on ``case`` (``helpers.reference``).

    Kind "constant": the constant's value; kind "files": the report dict the two files
    must hold. Arguments are copied, so the case itself never changes.
    """
    if check.kind == "constant":
        return getattr(ref, check.name)
    if check.kind == "files":
        return ref.rope_report()
    fn = getattr(ref, check.name)
    return fn(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))


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


def _to_array(value, what: str = "returned") -> np.ndarray:
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


def _to_number(value, what: str = "returned") -> float:
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
        return _to_array(value)
    if kind in ("float", "constant"):
        return _to_number(value)
    if kind == "int":
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        if isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_):
            return int(value)
        return _to_number(value)  # a float: a count must be an int, so it disagrees
    if kind == "optional":
        return None if value is None else _to_number(value, "returned")
    if kind == "tuple":
        if isinstance(value, np.ndarray) and value.ndim >= 1:
            value = list(value)
        if not isinstance(value, list | tuple):
            raise ValueError(f"returned {_type_words(value)}, expected a tuple")
        return tuple(_to_array(v, f"item {i} of the tuple is") for i, v in enumerate(value))
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
            rows.append([_to_number(v, f"item {i} of the list holds") for v in item])
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
        return _to_number(value)
    try:
        return _to_array(value, "holds")
    except ValueError:
        return value


# --------------------------------------------------------------------------- agree


def _index_words(idx: tuple) -> str:
    if len(idx) == 0:
        return ""
    if len(idx) == 1:
        return f" at index {idx[0]}"
    return f" at index {tuple(int(i) for i in idx)}"


def _compare(
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


def _agree(kind: str, got, want, nan_equal: bool = False, atol: float = 0.0) -> tuple[bool, str]:
    try:
        got = normalize(kind, got)
    except ValueError as exc:
        return False, str(exc)
    want = normalize(kind, want)
    if kind == "array":
        return _compare(got, want, nan_equal, atol)
    if kind in ("float", "constant"):
        ok, detail = _compare(np.asarray(got), np.asarray(want), nan_equal, atol)
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
        ok, _ = _compare(np.asarray(got), np.asarray(want), nan_equal, atol)
        return ok, "equal" if ok else f"returned {got:g}, expected {want:g}"
    if kind == "tuple":
        if len(got) != len(want):
            return False, f"returned a tuple of {len(got)} items, expected {len(want)}"
        details = []
        for i, (g, w) in enumerate(zip(got, want)):
            ok, detail = _compare(g, w, nan_equal, atol)
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
        ok, _ = _compare(got[:, col], want[:, col], nan_equal, atol)
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
                number = _to_number(g, f"{key} is")
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
                number = _to_number(g, f"{key} is")
            except ValueError as exc:
                return False, str(exc)
            ok, _ = _compare(np.asarray(number), np.asarray(w))
            if not ok:
                return False, f"{key} is {number:.6g}, expected {w:.6g}"
            continue
        if not isinstance(g, np.ndarray):
            try:
                g = _to_array(g, f"{key} is")
            except ValueError as exc:
                return False, str(exc)
        ok, detail = _compare(g, np.asarray(w, dtype=np.float64))
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


def agree(kind: str, got, want) -> tuple[bool, str]:
    """Whether ``got`` agrees with ``want`` under the spec's tolerance, and why (plain words).

    Elementwise ``abs(a - b) <= 1e-9 + 1e-6 * abs(b)``; shapes must match; NaN never agrees;
    equal infinities agree. "int" and "str" are exact; "dict" compares every key of the
    report, with ``rope_spread`` and ``norm_max_gap`` accepted when ``|value| < 1e-9``.
    ``got`` may be raw or already normalized; a wrong type gives ``(False, reason)``.
    """
    return _agree(kind, got, want)


# --------------------------------------------------------------------------- diagnose


def diagnose(check: FunctionCheck, case: Case, got) -> Mistake | None:
    """The catalogued mistake whose wrong output agrees with ``got`` on ``case``, or None.

    Only mistakes that show in the output are considered, only when the reference
    disagrees with ``got``, and only when the wrong output differs from the reference on
    this case. NaN matches NaN here (a softmax without max subtraction returns nan).
    """
    if not any(m.detect == "output" for m in check.mistakes):
        return None
    try:
        got = normalize(check.kind, got)
    except ValueError:
        return None
    want = expected(check, case)
    if _agree(check.kind, got, want)[0]:
        return None
    for mistake in check.mistakes:
        if mistake.detect != "output":
            continue
        for impl in (mistake.impl, *mistake.variants):
            if impl is None:
                continue
            try:
                with np.errstate(all="ignore"):
                    wrong = impl(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
                normalize(check.kind, wrong)
            except (ValueError, TypeError, ArithmeticError, IndexError):
                continue
            if _agree(check.kind, wrong, want)[0]:
                continue
            if _agree(check.kind, got, wrong, nan_equal=True, atol=mistake.atol)[0]:
                return mistake
    return None


# --------------------------------------------------------------------------- write_report

_SEPARATOR = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def check_report_files(json_text: str, md_text: str) -> tuple[bool, str]:
    """Judge the two files of write_report: the JSON report and its Markdown table.

    The JSON must parse to a dict that agrees with ``rope_report()`` (as ``agree("dict")``);
    the Markdown must hold a table (a separator line such as ``| --- | --- |``) with a row
    whose first cell is each key of the report.
    """
    try:
        data = json.loads(json_text)
    except (TypeError, ValueError) as exc:
        return False, f"the JSON file is not valid JSON: {exc}"
    ok, detail = agree("dict", data, ref.rope_report())
    if not ok:
        return False, f"the JSON file: {detail}"
    if not isinstance(md_text, str):
        return False, "the Markdown file could not be read as text"
    lines = md_text.splitlines()
    if not any("|" in line and _SEPARATOR.match(line) for line in lines):
        return False, "the Markdown file has no table (no separator line like | --- | --- |)"
    first_cells = set()
    for line in lines:
        if "|" not in line:
            continue
        cells = [c.strip().strip("`*").strip() for c in line.strip().strip("|").split("|")]
        if cells:
            first_cells.add(cells[0])
    missing = [k for k in REPORT_KEYS if k not in first_cells]
    if missing:
        return False, f"the Markdown table has no row for {', '.join(missing)}"
    return True, "the JSON report agrees and the Markdown table has a row for every key"

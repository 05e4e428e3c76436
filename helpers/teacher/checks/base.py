"""What a check is: the cases of a graded function, its known mistakes, its declaration.

``Case`` is one call; ``Mistake`` a known wrong answer with the wrong implementation
that recognises it; ``FunctionCheck`` how one graded function is checked, declared with
keywords in its notebook's module (``helpers.teacher.checks.rope`` ...). The helpers
below make random cases: even ``d`` in 2..256, bases 1e2..1e6 log-uniform, positions
0..4096, lists as well as arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from helpers.i18n import tr

# "optional": a number or None; "position": an index (an int) or None.
KINDS = (
    "array",
    "float",
    "int",
    "tuple",
    "str",
    "optional",
    "position",
    "scan",
    "dict",
    "constant",
    "files",
)
# The kinds of checks a function's points are split over, and what each is in plain words.
PARTS = {
    "shown": "the numbers the notebook shows",
    "random": "random cases",
    "edge": "edge cases",
    "bad input": "bad input",
}
# How a function's points are split over the kinds of checks it has (normalised over them).
WEIGHTS = {"shown": 2.0, "random": 2.0, "edge": 1.0, "bad input": 1.0}


@dataclass(frozen=True)
class Case:
    """One call of a graded function.

    ``args`` holds numpy float64 arrays, (nested) lists, ints, floats and strings;
    ``kwargs`` the keyword arguments; ``label`` the case in plain words; ``part`` the kind
    of check it belongs to (``PARTS``): a fixed case is one of the numbers the notebook
    shows unless marked ``"edge"``; random cases are ``"random"``; a case whose input the
    reference refuses is ``"bad input"``.
    """

    args: tuple
    kwargs: dict = field(default_factory=dict)
    label: str = ""
    part: str = ""


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer, named in plain words.

    ``impl`` (and any ``variants``) are wrong implementations with the graded
    function's signature. ``detect`` is ``"output"`` when the mistake shows in the
    returned value (``diagnose`` finds it) and ``"mutation"`` when it shows as a changed
    argument (the engine finds it; ``impl`` then mutates its input). ``atol`` widens the
    comparison with ``impl`` for outputs that are float noise around a value (e.g. 0).

    ``shows(case, got, want)`` recognises the mistake by what it does to the output, however
    it was written (a mask of ``-inf`` or of a large negative number, ``np.where`` or a loop,
    one band or every band): it is called with the case, the learner's normalized output and
    the reference's output (None where the reference refuses the case), only when ``got`` is
    wrong, and returns True when ``got`` has the mistake's property.

    ``alike`` names the mistakes of the same function that give this one's output on some
    cases (a case that cannot tell them apart then names neither).

    ``on_random`` is False for a mistake that shows on bad input only (a position past a
    table), never on a random case: no random case is searched for on which it goes wrong
    (``helpers.teacher.verdict.witnesses``).
    """

    name: str
    message: str
    impl: Callable | None = None
    variants: tuple[Callable, ...] = ()
    detect: str = "output"
    atol: float = 0.0
    shows: Callable[[Case, object, object], bool] | None = None
    on_random: bool = True
    # the names of mistakes that can give this one's very output on some cases: there,
    # neither is named (``diagnose``)
    alike: tuple[str, ...] = ()


@dataclass(frozen=True)
class FunctionCheck:
    """How one graded function is checked.

    ``kind`` says how its output compares (see ``helpers.teacher.checks.compare``):
    ``"constant"`` is a module attribute, ``"files"`` (write_report) is judged by
    ``judge_files`` on the text of the two files it writes. ``reference`` computes the
    expected value (default: the function of ``helpers.reference`` with the same name). ``fixed`` gives the cases the
    notebook shows and the edges; ``random(rng)`` fresh ones. ``assignment`` and
    ``section`` (where the notebook teaches it) are filled in by the registry.
    ``weights`` split the function's points over its kinds of checks (default
    ``WEIGHTS``); ``points`` (from the notebook's grade cells) are filled in by the registry.
    """

    name: str
    kind: str
    fixed: Callable[[], list[Case]]
    random: Callable[[np.random.Generator], list[Case]]
    mistakes: tuple[Mistake, ...] = ()
    check_mutation: bool = False
    timeout: float = 10.0
    judge_files: Callable[[str, str], tuple[bool, str]] | None = None
    reference: Callable | None = None
    weights: Mapping[str, float] | None = None
    assignment: str = ""
    section: str = ""
    points: float = 0.0


MUTATION = Mistake(
    name="input changed in place",
    message=(
        "your function changed its argument in place: the array or list it was given is "
        "different after the call. Build a new array for the result (np.empty_like(x), "
        "x.copy() or a new list) and leave the input as it was."
    ),
    detect="mutation",
)


# --------------------------------------------------------------------------- random cases


def even_d(rng: np.random.Generator, hi: int = 256) -> int:
    """An even model dimension in 2..hi."""
    return int(2 * rng.integers(1, hi // 2 + 1))


def log_base(rng: np.random.Generator) -> float:
    """A base in 1e2..1e6, log-uniform."""
    return float(10.0 ** rng.uniform(2.0, 6.0))


def position(rng: np.random.Generator, hi: int = 4096) -> int:
    return int(rng.integers(0, hi + 1))


def maybe_list(rng: np.random.Generator, x: np.ndarray):
    """The array itself or the same numbers as a (nested) list, at random."""
    return x.tolist() if rng.random() < 0.5 else x


def words(x) -> str:
    """A plain-words description of an input: 'a list of 64 numbers', 'an array of shape (3, 4)'."""
    if isinstance(x, np.ndarray):
        if x.ndim == 1:
            return tr("an array of {n} numbers", n=x.shape[0])
        return tr("an array of shape {shape}", shape=tuple(x.shape))
    if isinstance(x, list):
        shape = np.shape(x)
        if len(shape) == 1:
            return tr("a list of {n} numbers", n=shape[0])
        return tr("a nested list of shape {shape}", shape=tuple(shape))
    return repr(x)


def fmt(x: float) -> str:
    return f"{x:g}"


def normal(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    return rng.normal(scale=scale, size=shape)


def spread_positions(rng: np.random.Generator, n: int) -> np.ndarray:
    """n positions in 0..4096 (integers as float64 are not allowed: int64 array)."""
    return rng.integers(0, 4097, size=n)


def single_call() -> list[Case]:
    """The one case of a constant or of a function without arguments."""
    return [Case((), {}, tr("the module constant"))]


def edge(case: Case) -> Case:
    """The same case, counted with the edge cases."""
    return Case(case.args, case.kwargs, case.label, "edge")


def no_cases(rng: np.random.Generator) -> list[Case]:
    return []


def d_base_random(rng: np.random.Generator, n: int = 6) -> list[Case]:
    """Calls ``f(d, base=...)`` with random even d and bases."""
    cases = []
    for _ in range(n):
        d, base = even_d(rng), log_base(rng)
        cases.append(Case((d,), {"base": base}, f"d={d}, base={fmt(base)}"))
    return cases

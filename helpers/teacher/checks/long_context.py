"""How 10_long_context (stretching RoPE past its training length) is graded.

For each graded function of the notebook, in notebook order: its fixed cases (the
numbers the notebook shows, the edges), its random cases, its known mistakes (the
message and, beside it, the wrong implementation that recognises it) and its declaration.
The rate functions take the spec's ranges: even d up to 256, bases 1e4 .. 1e6,
factors 1 .. 32, original_max 512 .. 8192.
"""

from __future__ import annotations

import numpy as np

from helpers.i18n import tr
from helpers.teacher import reference as ref
from helpers.teacher.checks.base import Case, FunctionCheck, Mistake, even_d, fmt, maybe_list

# The notebook's setting: d = 128, base 1e4, trained on 4096 positions, factor 8.
D, BASE, TRAIN_LEN, FACTOR = 128, 1e4, 4096, 8


def rate_base(rng: np.random.Generator) -> float:
    """A base in 1e4 .. 1e6, log-uniform."""
    return float(10.0 ** rng.uniform(4.0, 6.0))


def factor(rng: np.random.Generator) -> float | int:
    """A factor in 1 .. 32: half of the time a whole number, else any real."""
    if rng.random() < 0.5:
        return int(rng.integers(1, 33))
    return float(rng.uniform(1.0, 32.0))


def original_max(rng: np.random.Generator) -> int:
    return int(rng.integers(512, 8193))


def _rates_random(rng: np.random.Generator, n: int = 6, lo: int = 2) -> list[tuple]:
    """(d, base, factor) triples; d even in lo .. 256."""
    out = []
    for _ in range(n):
        d = even_d(rng)
        while d < lo:
            d = even_d(rng)
        out.append((d, rate_base(rng), factor(rng)))
    return out


def _label(d, base, f, **more) -> str:
    extra = "".join(f", {k}={v}" for k, v in more.items())
    return f"d={d}, base={fmt(base)}, factor={fmt(f)}{extra}"


# --------------------------------------------------------------------------- pi_thetas


def _pi_fixed() -> list[Case]:
    return [
        Case((D, BASE, FACTOR), {}, _label(D, BASE, FACTOR)),
        Case((64, BASE, 1), {}, tr("{case} (nothing stretched)", case=_label(64, BASE, 1))),
        Case((4, 1e6, 1.5), {}, _label(4, 1e6, 1.5)),
        Case((D, BASE, 0.5), {}, tr("bad input: factor=0.5 (below 1)")),
    ]


def _pi_random(rng: np.random.Generator) -> list[Case]:
    return [Case((d, b, f), {}, _label(d, b, f)) for d, b, f in _rates_random(rng)]


def pi_thetas_times_factor(d, base, factor) -> np.ndarray:
    """theta_i * factor: the rates sped up instead of slowed down."""
    return ref.thetas(d, base) * factor


M_PI_TIMES = Mistake(
    "multiplied by factor instead of divided",
    "your rates are theta_i * factor: every pair turns faster, so a longer text meets even "
    "larger angles. Position interpolation squeezes factor times more positions into the "
    "trained angles: theta_i / factor.",
    pi_thetas_times_factor,
)


PI_THETAS = FunctionCheck(
    name="pi_thetas",
    kind="array",
    fixed=_pi_fixed,
    random=_pi_random,
    mistakes=(M_PI_TIMES,),
)


# --------------------------------------------------------------------------- ntk_base


def _ntk_base_fixed() -> list[Case]:
    return [
        Case((BASE, FACTOR, D), {}, f"base=1e4, factor=8, d={D}"),
        Case((BASE, 1, 64), {}, "base=1e4, factor=1, d=64"),
        Case((5e5, 2, 4), {}, "base=5e5, factor=2, d=4"),
        Case((BASE, FACTOR, 2), {}, tr("bad input: d=2 (d - 2 = 0)")),
    ]


def _ntk_base_random(rng: np.random.Generator) -> list[Case]:
    return [
        Case((b, f, d), {}, f"base={fmt(b)}, factor={fmt(f)}, d={d}")
        for d, b, f in _rates_random(rng, lo=4)
    ]


def ntk_base_plus_two(base, factor, d) -> float:
    """base * factor ** (d / (d + 2)) instead of d / (d - 2)."""
    return base * factor ** (d / (d + 2))


def ntk_base_factor_only(base, factor, d) -> float:
    """base * factor, without the exponent d / (d - 2)."""
    return base * factor


M_NTK_PLUS_TWO = Mistake(
    "exponent d / (d + 2) instead of d / (d - 2)",
    "your exponent is d / (d + 2). The slowest pair i = d/2 - 1 has the rate "
    "base ** (-(d - 2) / d); for it to slow down by exactly factor the base must grow by "
    "factor ** (d / (d - 2)).",
    ntk_base_plus_two,
)

M_NTK_FACTOR_ONLY = Mistake(
    "base times factor, without the exponent",
    "your new base is base * factor. Then the slowest pair slows down by factor ** ((d - 2) / d), "
    "a little less than factor. NTK-aware scaling raises factor to d / (d - 2): "
    "base * factor ** (d / (d - 2)).",
    ntk_base_factor_only,
)


NTK_BASE = FunctionCheck(
    name="ntk_base",
    kind="float",
    fixed=_ntk_base_fixed,
    random=_ntk_base_random,
    mistakes=(M_NTK_PLUS_TWO, M_NTK_FACTOR_ONLY),
)


# --------------------------------------------------------------------------- ntk_thetas


def _ntk_fixed() -> list[Case]:
    return [
        Case((D, BASE, FACTOR), {}, _label(D, BASE, FACTOR)),
        Case((64, 5e5, 1), {}, _label(64, 5e5, 1)),
        Case((4, BASE, 2.5), {}, _label(4, BASE, 2.5)),
    ]


def _ntk_random(rng: np.random.Generator) -> list[Case]:
    return [Case((d, b, f), {}, _label(d, b, f)) for d, b, f in _rates_random(rng, lo=4)]


NTK_THETAS = FunctionCheck(
    name="ntk_thetas",
    kind="array",
    fixed=_ntk_fixed,
    random=_ntk_random,
)


# --------------------------------------------------------------------------- dynamic_ntk_thetas


def _dynamic_fixed() -> list[Case]:
    return [
        Case(
            (D, BASE, FACTOR, 32768, TRAIN_LEN),
            {},
            _label(D, BASE, 8) + ", seq_len=32768, original_max=4096",
        ),
        Case(
            (D, BASE, FACTOR, 2048, TRAIN_LEN),
            {},
            tr("{case}, seq_len=2048 (shorter than training)", case=_label(D, BASE, 8)),
        ),
        Case((64, 5e5, 2, 4096, 4096), {}, _label(64, 5e5, 2) + ", seq_len=original_max=4096"),
        Case((D, BASE, FACTOR, 0, TRAIN_LEN), {}, tr("bad input: seq_len=0")),
    ]


def _dynamic_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for d, b, f in _rates_random(rng, lo=4):
        om = original_max(rng)
        seq_len = int(rng.integers(1, int(om * 40)))
        cases.append(
            Case(
                (d, b, f, seq_len, om),
                {},
                _label(d, b, f) + f", seq_len={seq_len}, original_max={om}",
            )
        )
    return cases


DYNAMIC_NTK_THETAS = FunctionCheck(
    name="dynamic_ntk_thetas",
    kind="array",
    fixed=_dynamic_fixed,
    random=_dynamic_random,
)


def _rates_and_plain(case: Case, got: np.ndarray, want: np.ndarray):
    """(got, want, plain, factor): the learner's and the reference's rates and the plain
    thetas of the case, all of one length, and the factor (> 1, else nothing can show)."""
    d, base, factor = case.args[:3]
    plain = ref.thetas(d, base)
    if float(factor) <= 1 or np.shape(got) != plain.shape or np.shape(want) != plain.shape:
        raise ValueError("no factor to divide by, or not one rate per pair")
    return np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64), plain, factor


def _kept(rates: np.ndarray, plain: np.ndarray) -> np.ndarray:
    return np.isclose(rates, plain, rtol=1e-6, atol=0.0)


def _divided(rates: np.ndarray, plain: np.ndarray, factor: float) -> np.ndarray:
    return np.isclose(rates, plain / factor, rtol=1e-6, atol=0.0)


def fast_pairs_divided(case: Case, got, want) -> bool:
    """The fast pairs are divided by the factor: some pair that the reference keeps is divided
    by the full factor in ``got``, and no rate is outside [plain / factor, plain] (a rate that
    was only blended or moved the wrong way is another mistake). Whether one band or every band
    was turned round, and however the bands were chosen, the fast end shows it."""
    got, want, plain, factor = _rates_and_plain(case, got, want)
    inside = np.all((got <= plain * (1 + 1e-6)) & (got >= plain / factor * (1 - 1e-6)))
    return bool(inside and np.any(_kept(want, plain) & _divided(got, plain, factor)))


def fast_divided_slow_kept(case: Case, got, want) -> bool:
    """A ramp run backwards: fast pairs divided by the factor as above, and every pair that the
    reference divides by the full factor kept (or blended) instead of divided."""
    if not fast_pairs_divided(case, got, want):
        return False
    got, want, plain, factor = _rates_and_plain(case, got, want)
    slow = _divided(want, plain, factor) & ~_kept(want, plain)
    return bool(np.any(slow)) and not bool(np.any(slow & _divided(got, plain, factor)))


# --------------------------------------------------------------------------- yarn_thetas


def _yarn_fixed() -> list[Case]:
    return [
        Case((D, BASE, FACTOR, TRAIN_LEN), {}, _label(D, BASE, 8) + ", original_max=4096"),
        Case((D, BASE, 1, TRAIN_LEN), {}, _label(D, BASE, 1) + ", original_max=4096"),
        Case((64, 5e5, 1.5, 2048), {}, _label(64, 5e5, 1.5) + ", original_max=2048"),
        Case(
            (D, BASE, 16, 8192),
            {"beta_fast": 16, "beta_slow": 2},
            _label(D, BASE, 16) + ", original_max=8192, beta_fast=16, beta_slow=2",
        ),
        Case(
            (D, BASE, FACTOR, 4096.5),
            {},
            tr("bad input: original_max=4096.5 (not an integer)"),
        ),
    ]


def _yarn_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for d, b, f in _rates_random(rng):
        om = original_max(rng)
        cases.append(Case((d, b, f, om), {}, _label(d, b, f) + f", original_max={om}"))
    return cases


def yarn_thetas_no_attention_factor(
    d, base, factor, original_max, beta_fast=32, beta_slow=1
) -> tuple[np.ndarray, float]:
    """The right rates, but the attention factor left out (1.0 instead of 0.1 ln(factor) + 1)."""
    th, _ = ref.yarn_thetas(d, base, factor, original_max, beta_fast, beta_slow)
    return th, 1.0


M_YARN_NO_ATTENTION = Mistake(
    "no attention factor",
    "your rates are right but the second item is 1.0. YaRN also sharpens the softmax of a "
    "stretched model: it returns attention_factor = 0.1 * ln(factor) + 1 (1.0 only when "
    "factor <= 1).",
    yarn_thetas_no_attention_factor,
    shows=lambda case, got, want: (
        bool(np.allclose(got[0], want[0], rtol=1e-6, atol=1e-12))
        and float(got[1]) == 1.0
        and float(want[1]) != 1.0
    ),
)


def yarn_thetas_betas_swapped(
    d, base, factor, original_max, beta_fast=32, beta_slow=1
) -> tuple[np.ndarray, float]:
    """beta_fast and beta_slow swapped: the ramp runs backwards, fast pairs get interpolated."""
    return ref.yarn_thetas(d, base, factor, original_max, beta_slow, beta_fast)


M_YARN_SWAPPED = Mistake(
    "beta_fast and beta_slow swapped",
    "your ramp runs the wrong way: the fast pairs were divided by factor and the slow ones "
    "kept. The low end of the ramp is the correction dim of beta_fast (32 rotations over "
    "original_max: fast pairs, kept), the high end that of beta_slow (1 rotation: slower "
    "pairs are interpolated).",
    yarn_thetas_betas_swapped,
    shows=lambda case, got, want: fast_divided_slow_kept(case, got[0], want[0]),
)


YARN_THETAS = FunctionCheck(
    name="yarn_thetas",
    kind="tuple",
    fixed=_yarn_fixed,
    random=_yarn_random,
    mistakes=(M_YARN_NO_ATTENTION, M_YARN_SWAPPED),
)


# --------------------------------------------------------------------------- llama3_thetas


def _llama3_fixed() -> list[Case]:
    return [
        Case((D, 5e5, 8, 8192), {}, _label(D, 5e5, 8) + ", original_max=8192 (Llama 3.1)"),
        Case((D, BASE, FACTOR, TRAIN_LEN), {}, _label(D, BASE, 8) + ", original_max=4096"),
        Case(
            (D, BASE, 4, 2048),
            {"low_freq_factor": 2.0, "high_freq_factor": 8.0},
            _label(D, BASE, 4) + ", original_max=2048, low_freq_factor=2, high_freq_factor=8",
        ),
        Case((64, BASE, 1, 4096), {}, _label(64, BASE, 1) + ", original_max=4096"),
    ]


def _llama3_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for d, b, f in _rates_random(rng):
        om = original_max(rng)
        cases.append(Case((d, b, f, om), {}, _label(d, b, f) + f", original_max={om}"))
    return cases


def llama3_thetas_high_scaled(
    d, base, factor, original_max, low_freq_factor=1.0, high_freq_factor=4.0
) -> np.ndarray:
    """The high-frequency pairs (short wavelengths) divided by factor, the low ones kept."""
    th = ref.thetas(d, base)
    w = 2 * np.pi / th
    s = (original_max / w - low_freq_factor) / (high_freq_factor - low_freq_factor)
    medium = th * (s / factor + (1.0 - s))
    low_wl, high_wl = original_max / low_freq_factor, original_max / high_freq_factor
    return np.where(w < high_wl, th / factor, np.where(w > low_wl, th, medium))


M_LLAMA3_HIGH = Mistake(
    "the high-frequency pairs scaled instead of the low ones",
    "your fast pairs (short wavelengths) were divided by factor. Llama 3 keeps the pairs "
    "whose wavelength is below original_max / high_freq_factor and divides those above "
    "original_max / low_freq_factor by factor: the slow pairs are the ones that never "
    "finished a turn in training.",
    llama3_thetas_high_scaled,
    shows=fast_pairs_divided,
)


LLAMA3_THETAS = FunctionCheck(
    name="llama3_thetas",
    kind="array",
    fixed=_llama3_fixed,
    random=_llama3_random,
    mistakes=(M_LLAMA3_HIGH,),
)


# --------------------------------------------------------------------------- unseen_angle_pairs


def _unseen_fixed() -> list[Case]:
    th = ref.thetas(D, BASE)
    new = TRAIN_LEN * FACTOR
    return [
        Case(
            (th, th, TRAIN_LEN, new),
            {},
            tr("plain RoPE, d=128, trained on 4096, used at 32768"),
        ),
        Case(
            (th, ref.ntk_thetas(D, BASE, FACTOR).tolist(), TRAIN_LEN, new),
            {},
            tr("NTK-aware factor 8 (as a list), trained on 4096, used at 32768"),
        ),
        Case(
            (th.tolist(), ref.pi_thetas(D, BASE, FACTOR), TRAIN_LEN, new),
            {},
            tr("position interpolation factor 8, trained on 4096, used at 32768"),
        ),
        Case((th, th, TRAIN_LEN, 2048), {}, tr("plain RoPE used at 2048, shorter than training")),
        Case((th[:4], th[:4], 10, 11), {}, tr("4 pairs, trained on 10, used at 11")),
    ]


METHODS = ("plain", "pi", "ntk", "dynamic", "yarn", "llama3")


def method_thetas(method: str, d: int, base: float, f, train_len: int, new_len: int) -> np.ndarray:
    """The rates of one method of the notebook at factor ``f`` (dynamic NTK at ``new_len``)."""
    if method == "plain":
        return ref.thetas(d, base)
    if method == "pi":
        return ref.pi_thetas(d, base, f)
    if method == "ntk":
        return ref.ntk_thetas(d, base, f)
    if method == "dynamic":
        return ref.dynamic_ntk_thetas(d, base, f, new_len, train_len)
    if method == "yarn":
        return ref.yarn_thetas(d, base, f, train_len)[0]
    return ref.llama3_thetas(d, base, f, train_len)


def _unseen_random(rng: np.random.Generator) -> list[Case]:
    cases = []
    for d, b, f in _rates_random(rng, lo=4):
        L = original_max(rng)
        new_len = round(f * L)
        method = str(rng.choice(METHODS))
        new = method_thetas(method, d, b, f, L, new_len)
        cases.append(
            Case(
                (maybe_list(rng, ref.thetas(d, b)), new, L, new_len),
                {},
                tr(
                    "{method} rates, {case}, train_len={L}, new_len={new_len}",
                    method=method,
                    case=_label(d, b, f),
                    L=L,
                    new_len=new_len,
                ),
            )
        )
    return cases


UNSEEN_ANGLE_PAIRS = FunctionCheck(
    name="unseen_angle_pairs",
    kind="int",
    fixed=_unseen_fixed,
    random=_unseen_random,
    check_mutation=True,
)

ASSIGNMENT = "10_long_context"
# The graded functions in notebook order.
CHECKS = (
    PI_THETAS,
    NTK_BASE,
    NTK_THETAS,
    DYNAMIC_NTK_THETAS,
    YARN_THETAS,
    LLAMA3_THETAS,
    UNSEEN_ANGLE_PAIRS,
)

"""The reference of 10_long_context against transformers' RoPE rates and the spec's numbers.

``tests/data/transformers_rope_t5.json`` holds the ``inv_freq`` and attention factor that
Hugging Face transformers' ``ROPE_INIT_FUNCTIONS`` ("linear", "dynamic", "yarn", "llama3")
and its default RoPE return on a sample of d, base, factor, original_max and seq_len
(recorded once by bench/record_transformers.py; no torch needed here). transformers
computes them in float32, so they agree with the float64 reference to 1e-6 relative;
llama3's smoothed band is the one place where float32 rounding grows (see
``test_rates_equal_transformers``). The spec's unseen-angle counts, the formulas written
here in plain Python and the known mistakes (helpers.teacher.checks.long_context) complete the checks.
"""

from __future__ import annotations

import inspect
import json
import math
import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from helpers import reference as ref
from helpers.teacher.checks import long_context as wrong

DATA = Path(__file__).parent / "data" / "transformers_rope_t5.json"
RTOL = 1e-6
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "llama3")


@cache
def recorded() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


def theta_py(d: int, base: float) -> list[float]:
    return [base ** (-2 * i / d) for i in range(d // 2)]


def raises_naming(fn, arg: str, value=None) -> str:
    """``fn()`` raises ValueError whose message names ``arg`` (and shows ``value``)."""
    with pytest.raises(ValueError) as info:
        fn()
    msg = str(info.value)
    assert re.search(rf"(^|\W){re.escape(arg)}(\W|$)", msg), f"{msg!r} does not name {arg!r}"
    if value is not None:
        assert repr(value) in msg or str(value) in msg, f"{msg!r} does not show {value!r}"
    return msg


# --------------------------------------------------------------------------- transformers


def reference_rates(case: dict) -> tuple[np.ndarray, float]:
    """The reference's rates and attention factor for one recorded case."""
    t, d, base = case["rope_type"], case["d"], case["base"]
    if t == "default":
        return ref.thetas(d, base), 1.0
    if t == "linear":
        return ref.pi_thetas(d, base, case["factor"]), 1.0
    if t == "dynamic":
        args = (case["factor"], case["seq_len"], case["original_max"])
        return ref.dynamic_ntk_thetas(d, base, *args), 1.0
    if t == "yarn":
        betas = (case.get("beta_fast", 32), case.get("beta_slow", 1))
        return ref.yarn_thetas(d, base, case["factor"], case["original_max"], *betas)
    freq = (case["low_freq_factor"], case["high_freq_factor"])
    return ref.llama3_thetas(d, base, case["factor"], case["original_max"], *freq), 1.0


def tolerance_scale(case: dict, hf: np.ndarray) -> np.ndarray:
    """What RTOL is relative to: the rate itself, except in llama3's smoothed band.

    There transformers computes s = (original_max / wavelength - low) / (high - low) from a
    float32 wavelength, and an error e in s moves the rate by theta_i (1 - 1/factor) e:
    bounded against the unscaled theta_i, not against the rate (which may be theta_i /
    factor). The band is taken from the wavelengths computed here in plain Python.
    """
    scale = np.abs(hf)
    if case["rope_type"] == "llama3":
        om, d, base = case["original_max"], case["d"], case["base"]
        th = np.array(theta_py(d, base))
        wavelength = 2 * math.pi / th
        band = (wavelength >= om / case["high_freq_factor"]) & (
            wavelength <= om / case["low_freq_factor"]
        )
        scale = np.where(band, th, scale)
    return scale


def case_id(case: dict) -> str:
    keys = ("d", "base", "factor", "original_max", "seq_len")
    return case["rope_type"] + "-" + "-".join(f"{case[k]:g}" for k in keys if k in case)


def test_recorded_rates_cover_the_spec_grid():
    data = recorded()
    assert data["transformers"] and data["torch"]
    cases = data["rope"]
    for t in ROPE_TYPES:
        of_type = [c for c in cases if c["rope_type"] == t]
        assert {4, 256} <= {c["d"] for c in of_type}, t
        assert all(c["d"] % 2 == 0 and 4 <= c["d"] <= 256 for c in of_type), t
        assert {1e4, 1e6} <= {c["base"] for c in of_type}, t
        assert all(1e4 <= c["base"] <= 1e6 for c in of_type), t
        if t != "default":
            assert {1.0, 32.0} <= {c["factor"] for c in of_type}, t
            assert all(1 <= c["factor"] <= 32 for c in of_type), t
        if t in ("dynamic", "yarn", "llama3"):
            assert {512, 8192} <= {c["original_max"] for c in of_type}, t
    dynamic = [c for c in cases if c["rope_type"] == "dynamic"]
    assert any(c["seq_len"] < c["original_max"] for c in dynamic)
    assert any(c["seq_len"] > c["original_max"] for c in dynamic)


@pytest.mark.parametrize("case", recorded()["rope"], ids=case_id)
def test_rates_equal_transformers(case):
    got, attention_factor = reference_rates(case)
    hf = np.array(case["inv_freq"])
    assert got.dtype == np.float64 and got.shape == hf.shape == (case["d"] // 2,)
    err = np.abs(got - hf) / tolerance_scale(case, hf)
    assert np.max(err) <= RTOL, (
        f"{case_id(case)}: pair {int(np.argmax(err))} off by {np.max(err):.3g} relative"
    )
    assert attention_factor == pytest.approx(case["attention_factor"], rel=RTOL, abs=0)


def test_llama3_band_tolerance_is_needed_only_in_the_band():
    """Outside the smoothed band, llama3 agrees to RTOL relative to the rate itself."""
    for case in recorded()["rope"]:
        if case["rope_type"] != "llama3":
            continue
        got, _ = reference_rates(case)
        hf = np.array(case["inv_freq"])
        band = tolerance_scale(case, hf) != np.abs(hf)
        assert np.all(np.abs(got - hf)[~band] <= RTOL * np.abs(hf)[~band]), case_id(case)
        # in the band the error stays within float32's reach, amplified by at most factor
        assert np.all(np.abs(got - hf)[band] <= RTOL * case["factor"] * np.abs(hf)[band])


# --------------------------------------------------------------------------- the spec's numbers

D, BASE, L = 128, 1e4, 4096


@pytest.mark.parametrize("factor", range(2, 33))
def test_unseen_angle_pairs_of_the_spec(factor):
    """d = 128, base 1e4, trained on 4096 positions, run at factor * 4096:
    plain RoPE 18 (every slow pair), NTK-aware 17, PI, YaRN and Llama 3 0."""
    train = ref.thetas(D, BASE)
    n = factor * L
    counts = {
        "plain": ref.unseen_angle_pairs(train, train, L, n),
        "ntk": ref.unseen_angle_pairs(train, ref.ntk_thetas(D, BASE, factor), L, n),
        "pi": ref.unseen_angle_pairs(train, ref.pi_thetas(D, BASE, factor), L, n),
        "yarn": ref.unseen_angle_pairs(train, ref.yarn_thetas(D, BASE, factor, L)[0], L, n),
        "llama3": ref.unseen_angle_pairs(train, ref.llama3_thetas(D, BASE, factor, L), L, n),
    }
    assert counts == {"plain": 18, "ntk": 17, "pi": 0, "yarn": 0, "llama3": 0}
    assert all(type(v) is int for v in counts.values())


def test_unseen_angle_pairs_by_hand():
    # pair 0 turns 9 radians in training (a full turn); pair 1 only 0.009
    assert ref.unseen_angle_pairs([1.0, 0.001], [1.0, 0.001], 10, 100) == 1
    assert ref.unseen_angle_pairs([1.0, 0.001], [1.0, 0.001], 10, 10) == 0  # nothing new
    assert ref.unseen_angle_pairs([1.0, 0.001], [1.0, 0.0001], 10, 100) == 0  # 0.0099 < 0.01
    assert ref.unseen_angle_pairs([1.0, 0.001], [1.0, 0.000102], 10, 100) == 1  # 0.0101
    slow = sum((L - 1) * t < 2 * math.pi for t in theta_py(D, BASE))
    assert slow == 18  # the spec's "every slow pair"


def test_ntk_base_formula():
    assert ref.ntk_base(10000.0, 2, 4) == pytest.approx(40000.0, rel=1e-15)  # d / (d - 2) = 2
    assert ref.ntk_base(10000.0, 1, 64) == 10000.0
    for base, factor, d in [(1e4, 8, 128), (5e5, 2.5, 6), (1e6, 32, 256)]:
        expected = base * factor ** (d / (d - 2))
        assert ref.ntk_base(base, factor, d) == pytest.approx(expected, rel=1e-14)
        np.testing.assert_allclose(ref.ntk_thetas(d, base, factor), theta_py(d, expected), 1e-13)


@pytest.mark.parametrize(("d", "base", "factor"), [(4, 1e4, 2), (64, 1e4, 8), (256, 1e6, 32.0)])
def test_position_interpolation_divides_the_rates(d, base, factor):
    expected = [t / factor for t in theta_py(d, base)]
    np.testing.assert_allclose(ref.pi_thetas(d, base, factor), expected, rtol=1e-13)
    np.testing.assert_allclose(ref.pi_thetas(d, base, 1), theta_py(d, base), rtol=1e-13)


def test_dynamic_ntk_changes_nothing_within_the_training_length():
    for seq_len in (1, 100, 4096):
        got = ref.dynamic_ntk_thetas(64, 1e4, 8, seq_len, 4096)
        np.testing.assert_allclose(got, theta_py(64, 1e4), rtol=1e-13)
    # at factor * original_max: base (factor^2 - factor + 1) ** (d / (d - 2))
    new_base = 1e4 * (8 * 8 - 7) ** (64 / 62)
    got = ref.dynamic_ntk_thetas(64, 1e4, 8, 8 * 4096, 4096)
    np.testing.assert_allclose(got, theta_py(64, new_base), rtol=1e-13)


@pytest.mark.parametrize("factor", [1, 1.5, 4, 32])
def test_yarn_keeps_fast_pairs_and_interpolates_slow_ones(factor):
    d, base, om = 128, 1e4, 4096
    th = theta_py(d, base)
    got, attention_factor = ref.yarn_thetas(d, base, factor, om)
    assert attention_factor == pytest.approx(0.1 * math.log(factor) + 1 if factor > 1 else 1.0)
    for i, t in enumerate(th):
        rotations = om * t / (2 * math.pi)  # turns of pair i over the training length
        if rotations >= 32:  # beta_fast
            assert got[i] == pytest.approx(t, rel=1e-13), i
        elif rotations <= 1:  # beta_slow
            assert got[i] == pytest.approx(t / factor, rel=1e-13), i
        else:
            assert t / factor * (1 - 1e-13) <= got[i] <= t * (1 + 1e-13), i


@pytest.mark.parametrize("factor", [1, 8, 32])
def test_llama3_divides_only_the_long_wavelengths(factor):
    d, base, om = 128, 5e5, 8192
    got = ref.llama3_thetas(d, base, factor, om)
    for i, t in enumerate(theta_py(d, base)):
        wavelength = 2 * math.pi / t
        if wavelength < om / 4.0:
            assert got[i] == pytest.approx(t, rel=1e-13), i
        elif wavelength > om / 1.0:
            assert got[i] == pytest.approx(t / factor, rel=1e-13), i
        else:
            s = (om / wavelength - 1.0) / (4.0 - 1.0)
            assert got[i] == pytest.approx((1 - s) * t / factor + s * t, rel=1e-13), i


# --------------------------------------------------------------------------- bad input

RATE_FUNCS = {
    "pi_thetas": lambda d=64, base=1e4, factor=2: ref.pi_thetas(d, base, factor),
    "ntk_thetas": lambda d=64, base=1e4, factor=2: ref.ntk_thetas(d, base, factor),
    "ntk_base": lambda d=64, base=1e4, factor=2: ref.ntk_base(base, factor, d),
    "dynamic_ntk_thetas": lambda d=64, base=1e4, factor=2, seq_len=8192, original_max=4096: (
        ref.dynamic_ntk_thetas(d, base, factor, seq_len, original_max)
    ),
    "yarn_thetas": lambda d=64, base=1e4, factor=2, original_max=4096: ref.yarn_thetas(
        d, base, factor, original_max
    ),
    "llama3_thetas": lambda d=64, base=1e4, factor=2, original_max=4096: ref.llama3_thetas(
        d, base, factor, original_max
    ),
}
WITH_ORIGINAL_MAX = ["dynamic_ntk_thetas", "yarn_thetas", "llama3_thetas"]


@pytest.mark.parametrize("func", list(RATE_FUNCS))
def test_good_defaults_run(func):
    RATE_FUNCS[func]()


@pytest.mark.parametrize("func", list(RATE_FUNCS))
@pytest.mark.parametrize("factor", [0.5, 0, -2, 0.999, math.nan, math.inf, True, "2", None])
def test_factor_below_one(func, factor):
    raises_naming(lambda: RATE_FUNCS[func](factor=factor), "factor", factor)


@pytest.mark.parametrize("func", list(RATE_FUNCS))
@pytest.mark.parametrize("d", [7, 0, -2, 4.0, True, "64"])
def test_bad_d(func, d):
    raises_naming(lambda: RATE_FUNCS[func](d=d), "d", d)


@pytest.mark.parametrize("func", ["ntk_base", "ntk_thetas", "dynamic_ntk_thetas"])
def test_d_two_has_no_ntk_exponent(func):
    raises_naming(lambda: RATE_FUNCS[func](d=2), "d", 2)


@pytest.mark.parametrize("func", list(RATE_FUNCS))
@pytest.mark.parametrize("base", [1, 1.0, 0.5, 0, -10.0, math.nan, math.inf, True])
def test_base_not_above_one(func, base):
    raises_naming(lambda: RATE_FUNCS[func](base=base), "base", base)


@pytest.mark.parametrize("seq_len", [0, -5, 2.5, 4096.0, True, None])
def test_bad_seq_len(seq_len):
    raises_naming(lambda: RATE_FUNCS["dynamic_ntk_thetas"](seq_len=seq_len), "seq_len", seq_len)


@pytest.mark.parametrize("func", WITH_ORIGINAL_MAX)
@pytest.mark.parametrize("original_max", [0, -512, 4096.5, 4096.0, True, "4096", None])
def test_original_max_not_a_positive_integer(func, original_max):
    raises_naming(lambda: RATE_FUNCS[func](original_max=original_max), "original_max", original_max)


OTHER_ERRORS = {
    "yarn beta_fast 0": (lambda: ref.yarn_thetas(64, 1e4, 2, 4096, beta_fast=0), "beta_fast"),
    "yarn beta_slow -1": (lambda: ref.yarn_thetas(64, 1e4, 2, 4096, beta_slow=-1), "beta_slow"),
    "llama3 high <= low": (
        lambda: ref.llama3_thetas(64, 1e4, 2, 4096, low_freq_factor=4, high_freq_factor=4),
        "high_freq_factor",
    ),
    "llama3 low 0": (
        lambda: ref.llama3_thetas(64, 1e4, 2, 4096, low_freq_factor=0),
        "low_freq_factor",
    ),
    "unseen lengths differ": (
        lambda: ref.unseen_angle_pairs([1.0, 0.1], [1.0], 10, 20),
        "new_thetas",
    ),
    "unseen 2-d thetas": (
        lambda: ref.unseen_angle_pairs(np.ones((2, 2)), np.ones((2, 2)), 10, 20),
        "train_thetas",
    ),
    "unseen train_len": (lambda: ref.unseen_angle_pairs([1.0], [1.0], 0, 20), "train_len"),
    "unseen new_len": (lambda: ref.unseen_angle_pairs([1.0], [1.0], 10, 2.5), "new_len"),
}


@pytest.mark.parametrize("case", list(OTHER_ERRORS))
def test_other_bad_input(case):
    fn, arg = OTHER_ERRORS[case]
    raises_naming(fn, arg)


# --------------------------------------------------------------------------- no mutation


def test_arguments_are_not_modified():
    train = ref.thetas(64, 1e4)
    new = ref.pi_thetas(64, 1e4, 4)
    for a in (train, new):
        a.setflags(write=False)  # an in-place write would raise here
    before = (train.copy(), new.copy())
    ref.unseen_angle_pairs(train, new, 4096, 16384)
    np.testing.assert_array_equal(train, before[0])
    np.testing.assert_array_equal(new, before[1])
    as_lists = (train.tolist(), new.tolist())
    ref.unseen_angle_pairs(*as_lists, 4096, 16384)
    assert as_lists == (before[0].tolist(), before[1].tolist())


@pytest.mark.parametrize("func", [f for f in RATE_FUNCS if f != "ntk_base"])
def test_each_call_returns_a_new_array(func):
    first = RATE_FUNCS[func]()
    first = first[0] if isinstance(first, tuple) else first
    kept = first.copy()
    first[...] = -1.0
    again = RATE_FUNCS[func]()
    np.testing.assert_array_equal(again[0] if isinstance(again, tuple) else again, kept)


# --------------------------------------------------------------------------- known mistakes

LONG_FUNCTIONS = (
    "pi_thetas",
    "ntk_base",
    "ntk_thetas",
    "dynamic_ntk_thetas",
    "yarn_thetas",
    "llama3_thetas",
    "unseen_angle_pairs",
)
MISTAKE_INPUTS = {
    "pi_thetas_times_factor": [(128, 1e4, 8), (4, 1e6, 1.5)],
    "ntk_base_plus_two": [(1e4, 8, 128), (5e5, 2, 4)],
    "ntk_base_factor_only": [(1e4, 8, 128), (5e5, 2, 4)],
    "yarn_thetas_no_attention_factor": [(128, 1e4, 8, 4096), (64, 5e5, 1.5, 2048)],
    "yarn_thetas_betas_swapped": [(128, 1e4, 8, 4096), (64, 5e5, 1.5, 2048)],
    "llama3_thetas_high_scaled": [(128, 1e4, 8, 4096), (128, 5e5, 32, 8192)],
}


def _imitated(name: str) -> str:
    return max((f for f in LONG_FUNCTIONS if name.startswith(f + "_")), key=len)


def test_every_mistake_of_the_notebook_is_tested_here():
    names = {n for n, f in vars(wrong).items() if inspect.isfunction(f) and not n.startswith("_")}
    assert {n for n in names if any(n.startswith(f + "_") for f in LONG_FUNCTIONS)} == set(
        MISTAKE_INPUTS
    )


@pytest.mark.parametrize("name", list(MISTAKE_INPUTS))
def test_mistake_has_the_graded_signature(name):
    want = list(inspect.signature(getattr(ref, _imitated(name))).parameters)
    assert list(inspect.signature(getattr(wrong, name)).parameters) == want


def _flat(value) -> np.ndarray:
    if isinstance(value, tuple):
        return np.concatenate([np.ravel(value[0]), [value[1]]])
    return np.ravel(np.asarray(value, dtype=np.float64))


@pytest.mark.parametrize("name", list(MISTAKE_INPUTS))
def test_mistake_differs_from_the_reference_on_ordinary_input(name):
    graded = _imitated(name)
    for args in MISTAKE_INPUTS[name]:
        got, expected = _flat(getattr(wrong, name)(*args)), _flat(getattr(ref, graded)(*args))
        assert got.shape == expected.shape, name
        assert not np.allclose(got, expected, rtol=1e-6, atol=0), f"{name} agrees on {args}"


def test_yarn_mistakes_show_where_they_differ():
    th, factor = ref.yarn_thetas(128, 1e4, 8, 4096)
    assert wrong.yarn_thetas_no_attention_factor(128, 1e4, 8, 4096) == (
        pytest.approx(th),
        1.0,
    )
    assert factor == pytest.approx(0.1 * math.log(8) + 1)
    swapped, _ = wrong.yarn_thetas_betas_swapped(128, 1e4, 8, 4096)
    assert swapped[0] == pytest.approx(th[0] / 8)  # the fastest pair interpolated
    assert swapped[-1] == pytest.approx(th[-1] * 8)  # the slowest one kept (th = theta / 8)

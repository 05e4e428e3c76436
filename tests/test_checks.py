"""The check catalogue of the grader (helpers.checks): cases, mistakes, normalize, agree.

Ground truth comes from COURSE_SPEC.md and the seed texts (the numbers are written out
here), never from the code under test.
"""

from __future__ import annotations

import copy
import json
import math
import time

import numpy as np
import pytest

from helpers import reference as ref
from helpers.teacher import checks as C
from helpers.teacher.checks import offsets

SEEDS = (0, 1, 2, 3)

# The graded functions of COURSE_SPEC.md, notebook by notebook, in teaching order.
SPEC_FUNCTIONS = {
    "01_order": ["softmax", "attention", "self_attention", "permutation_gap", "order_gap_with_pe"],
    "02_sincos": [
        "angle_rates",
        "sinusoidal_pe",
        "wavelengths",
        "embed_with_positions",
        "text_heatmap",
    ],
    "03_norm": [
        "pe_norms",
        "expected_norm",
        "min_pairwise_distance",
        "embedding_to_position_ratio",
    ],
    "04_decay": ["dot_profile", "closed_form_dot", "first_rebound", "rope_decay_bound"],
    "05_rotation": ["rotation_2d", "rotate_pair", "shift_matrix", "shift_error"],
    "06_rope": [
        "DIM",
        "THETA_BASE",
        "demo_vectors",
        "dot",
        "thetas",
        "apply_rope",
        "rope_score",
        "turns",
        "slow_pairs",
        "rope_half",
        "interleaved_to_half",
    ],
    "07_alibi": ["alibi_slopes", "alibi_bias", "alibi_attention", "mean_attention_distance"],
    "08_offsets": ["sin_pos", "add_score", "offset_scan", "spread", "rope_report", "write_report"],
    "09_families": [
        "learned_lookup",
        "relative_positions",
        "t5_bucket",
        "t5_bias",
        "shaw_scores",
        "causal_attention",
        "causal_order_gap",
    ],
    "10_long_context": [
        "pi_thetas",
        "ntk_base",
        "ntk_thetas",
        "dynamic_ntk_thetas",
        "yarn_thetas",
        "llama3_thetas",
        "unseen_angle_pairs",
    ],
    "11_rope_nd": [
        "axial_freqs",
        "mixed_freqs",
        "patch_positions",
        "rope_2d_angles",
        "apply_rope_2d",
        "interaction_term",
        "mrope_position_ids",
        "mrope_angles",
        "mrope_interleaved_angles",
    ],
    "12_rope_today": [
        "partial_thetas",
        "qwen35_rope_angles",
        "proportional_thetas",
        "longrope_thetas",
        "layer_rope_bases",
        "llama4_attn_scales",
        "rerotate_keys",
        "sink_cache_update",
        "sink_softmax",
        "mla_cache_values",
    ],
    "13_train_short": [
        "next_token_loss",
        "chain_entropy",
        "attention_entropy",
        "breaking_point",
    ],
}

# The "Known mistakes" table of COURSE_SPEC.md, one entry per (function, mistake):
# 15 rows, 22 distinct mistakes; a row naming several functions counts for each of them
# where the mistake can happen (angle_rates has no sin/cos and no positions). Then the
# "Known mistakes" lines of the 09_families and 10_long_context sections: 14 more; of
# 11_rope_nd: 7 more.
SPEC_MISTAKES = {
    "softmax": 1,  # no max subtraction
    "attention": 2,  # missing 1/sqrt(d_k); dividing by d_k
    "order_gap_with_pe": 1,  # positions before shuffling
    "sinusoidal_pe": 3,  # swapped; exponent i/d; positions from 1
    "angle_rates": 1,  # exponent i/d
    "embed_with_positions": 1,  # missing sqrt(d)
    "expected_norm": 1,  # sqrt(d)
    "min_pairwise_distance": 1,  # a row with itself
    "rotation_2d": 1,  # clockwise
    "rotate_pair": 1,  # clockwise
    "shift_matrix": 1,  # clockwise
    "apply_rope": 5,  # clockwise; per dimension; pair 0's angle; in place; half-split
    "rope_half": 5,  # apply_rope's four in the half-split layout; adjacent pairs (the mirror)
    "rope_score": 1,  # only the query rotated
    "turns": 1,  # not divided by 2 pi
    "alibi_slopes": 1,  # power-of-two formula for any n
    "alibi_bias": 2,  # positive; per-row constant shortcut
    "add_score": 1,  # one side only
    "offset_scan": 1,  # swapped positions
    # 09_families and 10_long_context list their known mistakes under each notebook
    "learned_lookup": 2,  # wraps; clips past the table
    "t5_bucket": 3,  # i - j; no num_buckets // 2 offset; every bucket log-spaced
    "shaw_scores": 2,  # no clip; no + max_rel offset
    "causal_attention": 1,  # the diagonal masked too
    "pi_thetas": 1,  # times factor
    "ntk_base": 2,  # d / (d + 2); factor alone
    "yarn_thetas": 2,  # no attention factor; betas swapped
    "llama3_thetas": 1,  # high-frequency pairs scaled
    # 11_rope_nd
    "axial_freqs": 1,  # height the first half of the rates, width the second
    "patch_positions": 1,  # column-major
    "rope_2d_angles": 1,  # row and column swapped
    "mrope_position_ids": 1,  # start moved on by h * w
    "mrope_angles": 1,  # the rates restarted in each section
    "mrope_interleaved_angles": 2,  # the sections left in blocks; the interleave at the wrong axis
    # 12_rope_today
    "partial_thetas": 1,  # over 2i/d (the fractions swapped)
    "proportional_thetas": 1,  # over 2i/rot (the fractions swapped)
    "longrope_thetas": 1,  # long factors from seq_len >= original_max
    "layer_rope_bases": 2,  # i % every == 0; no_rope_layers read as 1 = no RoPE
    "llama4_attn_scales": 1,  # without the + 1
    "rerotate_keys": 1,  # turned forward
    "sink_cache_update": 1,  # built on the forward turn
    # 12's 2026 additions: the full head's rates (Gemma 4's rule, or the interleave run over
    # head_dim/2 pairs and cut after: the same output); the sections in blocks
    "qwen35_rope_angles": 2,
    # the sink without effect (kept as a key and renormalised, or added to the scores: the same
    # output, rows summing to 1); no maximum that includes the sink; one sink for all heads
    "sink_softmax": 3,
    # 13_train_short
    "next_token_loss": 3,  # no maximum subtracted; the mean over positions; log base 2
    "chain_entropy": 4,  # pairs weighted equally; h1 unconditional; uniform pi; log base 2
    "attention_entropy": 3,  # nan at zero weights; columns instead of rows; log base 2
    "breaking_point": 3,  # before train_len; counted from train_len; window ignored
}

# The picture of seed 000 (section 8): sinusoidal_pe(24, 16) drawn with " .:-=+*#%@".
SEED_HEATMAP = [
    "  p 0 +@+@+@+@+@+@+@+@",
    "  p 1 @#*@+@+@+@+@+@+@",
    "  p 2 @:#@+@+@+@+@+@+@",
    "  p 3 + @#*@+@+@+@+@+@",
    "  p 4 ..@**@+@+@+@+@+@",
    "  p 5  *@=#@+@+@+@+@+@",
    "  p 6 -@@-#@+@+@+@+@+@",
    "  p 7 %%@:%%*@+@+@+@+@",
    "  p 8 @=# %%*@+@+@+@+@",
    "  p 9 # * %%*@+@+@+@+@",
    "  p10 : = @#*@+@+@+@+@",
    "  p11  +- @#*@+@+@+@+@",
    "  p12 :@..@**@+@+@+@+@",
    "  p13 #@ :@**@+@+@+@+@",
    "  p14 @+ -@+#@+@+@+@+@",
    "  p15 %. +@+#@+@+@+@+@",
    "  p16 -  *@=#@+@+@+@+@",
    "  p17  -.%@=#@+@+@+@+@",
    "  p18 .%:@@-#@+@+@+@+@",
    "  p19 +@-@@-#@+@+@+@+@",
    "  p20 @#+@@:#@+@+@+@+@",
    "  p21 @:*@@:%%*@+@+@+@",
    "  p22 = %%@:%%*@+@+@+@",
    "  p23  :@#%.%%*@+@+@+@",
]


def as_json(value):
    """A value the way the isolated grader sends it: plain JSON, tuples marked."""

    def plain(v):
        if isinstance(v, np.ndarray):
            return plain(v.tolist())
        if isinstance(v, np.generic):
            return v.item()
        if isinstance(v, tuple):
            return {"__tuple__": [plain(x) for x in v]}
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        return v

    return json.loads(json.dumps(plain(value)))


def call_reference(check: C.FunctionCheck, case: C.Case):
    if check.kind == "constant":
        return getattr(ref, check.name)
    return getattr(ref, check.name)(*case.args, **case.kwargs)


def raises_by_design(case: C.Case) -> bool:
    return "past the end" in case.label or case.label.startswith("bad input:")


def all_cases(check: C.FunctionCheck, seed: int) -> list[C.Case]:
    return C.cases(check, np.random.default_rng(seed))


def fixed_case(name: str, label_part: str) -> C.Case:
    found = [c for c in C.CHECKS[name].fixed() if label_part in c.label]
    assert found, f"{name} has no fixed case whose label holds {label_part!r}"
    return found[0]


OUTPUT_MISTAKES = [
    (name, m) for name, check in C.CHECKS.items() for m in check.mistakes if m.detect == "output"
]


# --------------------------------------------------------------------------- the registry


def test_catalogue_covers_every_graded_function_in_notebook_order():
    spec_names = [n for names in SPEC_FUNCTIONS.values() for n in names]
    assert list(C.CHECKS) == spec_names
    assert sorted(C.CHECKS) == sorted(ref.__all__)
    for assignment, names in SPEC_FUNCTIONS.items():
        assert [c.name for c in C.checks_for(assignment)] == names
        assert all(c.assignment == assignment for c in C.checks_for(assignment))
    for check in C.CHECKS.values():
        assert check.kind in C.KINDS
        assert check.section and check.name in check.section
        assert check.timeout > 0
        assert len(check.fixed()) >= 1


def test_checks_for_unknown_assignment_names_it():
    with pytest.raises(ValueError, match="09_nothing"):
        C.checks_for("09_nothing")


def test_kinds_follow_the_spec():
    kinds = {name: c.kind for name, c in C.CHECKS.items()}
    assert kinds["DIM"] == kinds["THETA_BASE"] == "constant"
    assert kinds["demo_vectors"] == kinds["rotate_pair"] == "tuple"
    assert kinds["text_heatmap"] == "str"
    assert kinds["slow_pairs"] == "int"
    assert kinds["first_rebound"] == "optional"
    assert kinds["offset_scan"] == "scan"
    assert kinds["rope_report"] == "dict"
    assert kinds["write_report"] == "files"
    assert kinds["apply_rope"] == kinds["sinusoidal_pe"] == "array"
    # 09_families and 10_long_context: yarn_thetas returns (rates, attention_factor)
    assert kinds["yarn_thetas"] == "tuple"
    assert kinds["unseen_angle_pairs"] == "int"
    assert kinds["ntk_base"] == kinds["causal_order_gap"] == "float"
    assert kinds["t5_bucket"] == kinds["pi_thetas"] == kinds["llama3_thetas"] == "array"


def test_every_function_that_takes_arrays_is_checked_for_mutation():
    for check in C.CHECKS.values():
        takes_arrays = any(
            isinstance(a, np.ndarray | list)
            for case in check.fixed()
            for a in (*case.args, *case.kwargs.values())
        )
        assert check.check_mutation == takes_arrays, check.name


def test_mistake_count_per_function_matches_the_spec_table():
    counted = {n: len(c.mistakes) for n, c in C.CHECKS.items() if c.mistakes}
    assert counted == SPEC_MISTAKES
    for check in C.CHECKS.values():
        names = [m.name for m in check.mistakes]
        assert len(set(names)) == len(names), check.name
        for m in check.mistakes:
            assert m.detect in ("output", "mutation")
            assert m.impl is not None
            assert len(m.message) > 40 and "def " not in m.message and "return " not in m.message


# --------------------------------------------------------------------------- the cases


@pytest.mark.parametrize("name", list(C.CHECKS))
def test_reference_passes_every_fixed_and_random_case(name):
    check = C.CHECKS[name]
    for seed in SEEDS:
        for case in all_cases(check, seed):
            if raises_by_design(case):
                with pytest.raises(ValueError):
                    C.expected(check, case)
                continue
            want = C.expected(check, case)
            if check.kind == "files":
                continue
            before = copy.deepcopy(case.args)
            got = call_reference(check, case)
            for form in (got, as_json(got)):
                ok, detail = C.agree(check.kind, C.normalize(check.kind, form), want)
                assert ok, f"{name} on {case.label} (seed {seed}): {detail}"
                assert C.diagnose(check, case, form) is None
            for a, b in zip(before, case.args):
                np.testing.assert_array_equal(
                    np.asarray(a, dtype=object), np.asarray(b, dtype=object)
                )


def test_only_the_designated_case_raises():
    """The reference refuses exactly the cases labelled as bad input, with a ValueError."""
    refused = set()
    for check in C.CHECKS.values():
        for case in check.fixed():
            if raises_by_design(case):
                with pytest.raises(ValueError):
                    C.expected(check, case)
                refused.add(check.name)
            else:
                C.expected(check, case)
    assert {"dot_profile", "permutation_gap", "shift_error", "apply_rope", "angle_rates"} <= refused
    assert {"learned_lookup", "t5_bucket", "pi_thetas", "ntk_base", "yarn_thetas"} <= refused


def test_random_cases_are_fresh_and_in_range():
    a = [c.label for c in C.CHECKS["apply_rope"].random(np.random.default_rng(10))]
    b = [c.label for c in C.CHECKS["apply_rope"].random(np.random.default_rng(11))]
    assert a != b
    ds, bases, positions, as_list = set(), [], [], 0
    for seed in range(40):
        for case in C.CHECKS["apply_rope"].random(np.random.default_rng(seed)):
            vec, pos = case.args
            as_list += isinstance(vec, list)
            d = np.shape(vec)[-1]
            ds.add(d)
            bases.append(case.kwargs["base"])
            positions.extend(np.ravel(pos).tolist())
    assert all(d % 2 == 0 and 2 <= d <= 256 for d in ds) and len(ds) > 50
    assert 100 <= min(bases) and max(bases) <= 1e6
    assert np.median(np.log10(bases)) == pytest.approx(4.0, abs=0.5)  # log-uniform
    assert min(positions) >= 0 and max(positions) <= 4096 and max(positions) > 3000
    assert 0 < as_list < 40 * 7


RATE_FUNCTIONS = ("pi_thetas", "ntk_thetas", "dynamic_ntk_thetas", "yarn_thetas", "llama3_thetas")


def test_long_context_random_cases_cover_the_spec_ranges():
    """COURSE_SPEC.md, 10_long_context: any even d from 4 to 256, base 1e4 .. 1e6, factor
    1 .. 32, original_max 512 .. 8192."""
    ds, bases, factors, maxes = set(), [], [], []
    for seed in range(40):
        for name in RATE_FUNCTIONS:
            for case in C.CHECKS[name].random(np.random.default_rng(seed)):
                d, base, factor = case.args[:3]
                ds.add(d)
                bases.append(base)
                factors.append(factor)
                if name != "pi_thetas" and name != "ntk_thetas":
                    maxes.append(case.args[-1])
    assert all(d % 2 == 0 and 2 <= d <= 256 for d in ds) and len(ds) > 60
    assert 1e4 <= min(bases) and max(bases) <= 1e6
    assert 1 <= min(factors) and max(factors) <= 32 and max(factors) > 25
    assert any(isinstance(f, int) for f in factors) and any(isinstance(f, float) for f in factors)
    assert 512 <= min(maxes) and max(maxes) <= 8192 and max(maxes) > 7000


def test_t5_bucket_random_cases_cover_the_spec_ranges():
    """COURSE_SPEC.md, 09_families: every rel in [-5000, 5000], any even num_buckets >= 4 and
    max_distance > num_buckets // 2."""
    rels, settings = [], set()
    for seed in range(40):
        for case in C.CHECKS["t5_bucket"].random(np.random.default_rng(seed)):
            rels.extend(np.ravel(case.args[0]).tolist())
            nb, md = case.kwargs["num_buckets"], case.kwargs["max_distance"]
            assert nb >= 4 and nb % 2 == 0 and md > nb // 2
            settings.add((nb, md, case.kwargs["bidirectional"]))
    assert min(rels) >= -5000 and max(rels) <= 5000
    assert min(rels) < -4000 and max(rels) > 4000 and len(settings) > 100


def test_batches_and_edges_are_in_the_fixed_cases():
    labels = " | ".join(c.label for c in C.CHECKS["apply_rope"].fixed())
    assert "pos=0" in labels and "d=2" in labels and "batch" in labels and "list" in labels
    assert any(c.args == (1, 2) for c in C.CHECKS["sinusoidal_pe"].fixed())  # max_len 1, d 2
    assert any(c.args[0] == 1 for c in C.CHECKS["alibi_bias"].fixed())  # one head


def test_each_notebook_is_cheap_in_time_and_bytes():
    for assignment in SPEC_FUNCTIONS:
        start = time.perf_counter()
        for check in C.checks_for(assignment):
            for case in all_cases(check, 0):
                size = len(json.dumps(as_json([list(case.args), case.kwargs])))
                assert size < 150_000, (check.name, case.label, size)
                if not raises_by_design(case):
                    C.expected(check, case)
            assert len(all_cases(check, 0)) <= 16, check.name
        assert time.perf_counter() - start < 1.0, assignment


# --------------------------------------------------------------------------- seed numbers


def test_fixed_cases_hold_the_seed_numbers():
    pe4 = C.expected(C.CHECKS["sinusoidal_pe"], fixed_case("sinusoidal_pe", "article's table"))
    seed_rows = [
        [0, 1, 0, 1],
        [0.8415, 0.5403, 0.0100, 0.9999],
        [0.9093, -0.4161, 0.0200, 0.9998],
        [0.1411, -0.9900, 0.0300, 0.9996],
    ]
    np.testing.assert_allclose(pe4, seed_rows, atol=5e-5)

    waves = C.expected(C.CHECKS["wavelengths"], fixed_case("wavelengths", "d=4"))
    np.testing.assert_allclose(waves, [6.28, 628.32], atol=5e-3)

    profile = C.expected(C.CHECKS["dot_profile"], fixed_case("dot_profile", "pos=25"))
    seed_profile = [16.00, 15.31, 13.73, 12.27, 11.78, 10.52, 10.06, 8.41, 10.47]
    np.testing.assert_allclose(profile, seed_profile, atol=5e-3)
    assert C.expected(C.CHECKS["first_rebound"], fixed_case("first_rebound", "article")) == 20

    assert C.expected(C.CHECKS["expected_norm"], fixed_case("expected_norm", "d=32")) == 4.0
    dist = C.expected(
        C.CHECKS["min_pairwise_distance"], fixed_case("min_pairwise_distance", "1.1716")
    )
    assert dist == pytest.approx(1.1716, abs=5e-5)

    M = C.expected(C.CHECKS["shift_matrix"], fixed_case("shift_matrix", "k=3, d=8"))
    angles = [5 * 10000 ** (-2 * i / 8) for i in range(4)]
    row5 = np.ravel([[math.sin(a), math.cos(a)] for a in angles])  # PE(5), d=8
    np.testing.assert_allclose((M @ row5)[:4], [0.98936, -0.14550, 0.71736, 0.69671], atol=5e-6)

    counts = [C.expected(C.CHECKS["slow_pairs"], c) for c in C.CHECKS["slow_pairs"].fixed()[:4]]
    assert counts == [32, 28, 19, 9]

    slopes = C.expected(C.CHECKS["alibi_slopes"], fixed_case("alibi_slopes", "n_heads=8"))
    np.testing.assert_allclose(slopes, [2.0**-k for k in range(1, 9)])

    report = C.expected(C.CHECKS["rope_report"], C.CHECKS["rope_report"].fixed()[0])
    assert report["add_spread"] == pytest.approx(13.8416, abs=5e-5)
    assert report["norm_before"] == pytest.approx(5.69443, abs=5e-6)
    assert report["slow_pairs"] == [32, 28, 19, 9]
    assert abs(report["rope_spread"]) < 1e-9
    scan = C.expected(C.CHECKS["offset_scan"], fixed_case("offset_scan", "4000"))
    assert [s for s, _, _ in scan] == [3, 10, 100, 4000]

    q, k = C.expected(C.CHECKS["demo_vectors"], C.CHECKS["demo_vectors"].fixed()[0])
    j = np.arange(64)
    np.testing.assert_allclose(q, np.cos(0.7 * j + 0.3))
    np.testing.assert_allclose(k, np.sin(0.4 * j + 1.1))

    softmax_big = C.expected(C.CHECKS["softmax"], fixed_case("softmax", "[1000, 1000]"))
    np.testing.assert_array_equal(softmax_big, [0.5, 0.5])


def test_text_heatmap_fixed_case_is_the_seed_picture():
    case = fixed_case("text_heatmap", "article's picture")
    picture = "\n".join(line[6:] for line in SEED_HEATMAP)
    ok, detail = C.agree("str", picture, C.expected(C.CHECKS["text_heatmap"], case))
    assert ok, detail


# --------------------------------------------------------------------------- the mistakes


@pytest.mark.parametrize(("name", "mistake"), OUTPUT_MISTAKES, ids=lambda v: getattr(v, "name", v))
def test_every_mistake_fails_a_fixed_case_and_is_named(name, mistake):
    check = C.CHECKS[name]
    for impl in (mistake.impl, *mistake.variants):
        named_on = []
        for case in check.fixed():
            with np.errstate(all="ignore"):
                try:
                    wrong = impl(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
                except ValueError:
                    continue  # refused like the reference: nothing to name
            if raises_by_design(case):
                with pytest.raises(ValueError):
                    C.expected(check, case)  # any answer is wrong: a lookup past the table
                if np.size(wrong) == 0:
                    continue  # an empty answer to bad input (seq_len=0) names no mistake
            elif C.agree(check.kind, wrong, C.expected(check, case))[0]:
                continue
            alike = [
                m
                for m in check.mistakes
                if m.name in mistake.alike
                and C.agree(check.kind, wrong, m.impl(*copy.deepcopy(case.args)), nan_equal=True)[0]
            ]
            for form in (wrong, as_json(wrong)):
                found = C.diagnose(check, case, C.normalize(check.kind, form))
                if alike:  # the case cannot tell this mistake from one alike: none is named
                    assert found is None, f"{impl.__name__} on {case.label}: {found}"
                else:
                    assert found is mistake, f"{impl.__name__} on {case.label}: {found}"
            if not alike:
                named_on.append(case.label)
        assert named_on, f"{impl.__name__} agrees with the reference on every fixed case"


@pytest.mark.parametrize(("name", "mistake"), OUTPUT_MISTAKES, ids=lambda v: getattr(v, "name", v))
def test_other_wrong_answers_are_not_given_a_mistake_name(name, mistake):
    check = C.CHECKS[name]
    for case in check.fixed():
        if raises_by_design(case):
            continue
        want = C.expected(check, case)
        if check.kind == "array":
            other = np.asarray(want) * 1.5 + 0.25
        elif check.kind == "float":
            other = want * 1.5 + 0.25
        elif check.kind == "tuple":
            other = tuple(v * 1.5 + 0.25 for v in want)
        elif check.kind == "scan":
            other = [(s, r + 1.0, a) for s, r, a in want]
        else:
            continue
        assert C.diagnose(check, case, other) is None


def test_softmax_nan_pattern_is_named_but_never_agrees():
    check = C.CHECKS["softmax"]
    case = fixed_case("softmax", "[1000, 1000]")
    ok, detail = C.agree("array", [float("nan"), float("nan")], C.expected(check, case))
    assert not ok and "nan" in detail
    assert C.diagnose(check, case, [float("nan"), float("nan")]).name == "no max subtraction"
    # a nan in another place is not the same mistake
    assert C.diagnose(check, case, [0.5, float("nan")]) is None
    rows = fixed_case("softmax", "near 1000")
    wrong = [[0.09003057, 0.24472847, 0.66524096], [float("nan")] * 3]
    assert C.diagnose(check, rows, wrong).name == "no max subtraction"


def test_mutation_mistake_changes_the_input_and_nothing_else():
    check = C.CHECKS["apply_rope"]
    mistake = C.mutation_mistake(check)
    assert mistake.detect == "mutation" and mistake in check.mistakes
    assert "place" in mistake.name
    changed = 0
    for case in (c for c in check.fixed() if not raises_by_design(c)):
        args = copy.deepcopy(case.args)
        out = mistake.impl(*args, **case.kwargs)
        ok, detail = C.agree("array", out, C.expected(check, case))
        assert ok, detail  # the numbers are right: only the mutation check catches it
        changed += not np.array_equal(np.asarray(args[0]), np.asarray(case.args[0]))
    assert changed >= 4
    assert C.mutation_mistake(C.CHECKS["softmax"]) is C.MUTATION
    assert C.MUTATION.detect == "mutation" and "in place" in C.MUTATION.message


def test_min_pairwise_distance_noise_near_zero_is_the_self_comparison():
    check = C.CHECKS["min_pairwise_distance"]
    case = fixed_case("min_pairwise_distance", "1.1716")
    assert C.diagnose(check, case, 2.1e-8).name == "a row compared with itself"
    assert C.diagnose(check, case, 0.5) is None


# --------------------------------------------------------------------------- normalize


def test_normalize_accepts_what_a_learner_returns():
    want = np.array([[1.0, 2.0], [3.0, 4.0]])
    for form in (want, want.tolist(), [(1, 2), (3, 4)], want.astype(np.float32), as_json(want)):
        got = C.normalize("array", form)
        assert got.dtype == np.float64 and got.shape == (2, 2)
        assert C.agree("array", got, want)[0]
    assert C.normalize("float", np.float64(2.5)) == 2.5
    assert C.normalize("float", np.array(2.5)) == 2.5
    assert C.normalize("float", 3) == 3.0
    assert C.normalize("int", np.int64(32)) == 32
    assert C.normalize("int", np.array(32)) == 32
    assert C.normalize("int", as_json(np.int64(9))) == 9
    assert C.normalize("optional", None) is None
    assert C.normalize("optional", np.int64(20)) == 20.0
    pair = C.normalize("tuple", {"__tuple__": [0.0, 1.0]})
    assert isinstance(pair, tuple) and len(pair) == 2
    assert C.agree("tuple", pair, (0.0, 1.0))[0]
    assert C.agree("tuple", [6.1e-17, 1.0], (0.0, 1.0))[0]
    scan = C.normalize("scan", as_json([(3, 1.5, 2.5), (10, 1.25, -2.0)]))
    assert scan.shape == (2, 3)
    assert C.normalize("str", "ab\ncd") == "ab\ncd"
    report = C.normalize("dict", as_json(ref.rope_report()))
    assert isinstance(report["starts"], np.ndarray) and report["dim"] == 64.0


@pytest.mark.parametrize(
    ("kind", "value", "words"),
    [
        ("array", None, "None"),
        ("array", "0.5", "string"),
        ("array", [[1.0, 2.0], [3.0]], "different lengths"),
        ("array", [1j, 2.0], "complex"),
        ("array", {"a": 1}, "dict"),
        ("float", [1.0, 2.0, 3.0], "a list of 3 numbers"),
        ("float", np.zeros(4), "shape (4,)"),
        ("float", None, "None"),
        ("float", True, "boolean"),
        ("int", "32", "string"),
        ("tuple", 1.0, "expected a tuple"),
        ("scan", [(3, 1.0)], "triple"),
        ("str", ["a"], "expected a string"),
        ("dict", [1, 2], "expected a dict"),
    ],
)
def test_normalize_refuses_wrong_types_in_plain_words(kind, value, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        C.normalize(kind, value)


def test_normalize_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match="kind"):
        C.normalize("matrix", [1.0])


# --------------------------------------------------------------------------- agree


def test_agree_applies_the_spec_tolerance():
    assert C.agree("float", 1.0 + 0.9e-6, 1.0)[0]
    assert not C.agree("float", 1.0 + 1.2e-6, 1.0)[0]
    assert C.agree("float", 5e-10, 0.0)[0]
    assert not C.agree("float", 2e-9, 0.0)[0]
    assert C.agree("array", [1e6 + 0.9], [1e6])[0]
    assert not C.agree("array", [1e6 + 1.1], [1e6])[0]
    assert C.agree("array", [-np.inf, 0.5], [-np.inf, 0.5])[0]
    assert not C.agree("array", [np.inf, 0.5], [-np.inf, 0.5])[0]


def test_agree_never_accepts_nan():
    assert not C.agree("float", float("nan"), float("nan"))[0]
    ok, detail = C.agree("array", [[0.0, np.nan]], [[0.0, np.nan]])
    assert not ok and "nan" in detail and "(0, 1)" in detail


def test_agree_names_the_largest_difference_and_where():
    want = np.zeros((4, 20))
    got = want.copy()
    got[3, 17] = 0.41
    got[1, 2] = 0.1
    ok, detail = C.agree("array", got, want)
    assert not ok
    assert "0.41" in detail and "(3, 17)" in detail
    ok, detail = C.agree("array", [1.0, 2.0, 3.0], np.zeros(4))
    assert not ok and "(3,)" in detail and "(4,)" in detail


def test_agree_exact_kinds():
    assert C.agree("int", 32, 32)[0]
    assert not C.agree("int", 31, 32)[0]
    assert not C.agree("int", 32.5, 32)[0]
    ok, detail = C.agree("int", 32.0, 32)
    assert not ok and "int" in detail
    assert C.agree("optional", None, None)[0]
    assert not C.agree("optional", None, 20)[0]
    assert not C.agree("optional", 20, None)[0]
    assert C.agree("optional", 20.0, 20)[0]
    ok, detail = C.agree("str", "ab\ncx", "ab\ncd")
    assert not ok and "line 2" in detail and "character 2" in detail
    assert not C.agree("str", "ab", "ab\ncd")[0]
    ok, detail = C.agree("array", None, [1.0])
    assert not ok and "None" in detail


def test_agree_on_scans_names_the_start():
    want = ref.offset_scan(*ref.demo_vectors(), 2, [3, 10, 100, 4000])
    assert C.agree("scan", as_json(want), want)[0]
    bad = [(s, r, a + (1.0 if s == 100 else 0.0)) for s, r, a in want]
    ok, detail = C.agree("scan", bad, want)
    assert not ok and "add score" in detail and "100" in detail
    ok, detail = C.agree("scan", want[::-1], want)
    assert not ok and "starts" in detail
    assert not C.agree("scan", want[:3], want)[0]


def test_agree_on_the_report():
    want = ref.rope_report()
    assert C.agree("dict", as_json(want), want)[0]
    noisy = dict(want, rope_spread=3e-12, norm_max_gap=-4e-15)
    assert C.agree("dict", noisy, want)[0]
    too_big = dict(want, norm_max_gap=1e-8)
    ok, detail = C.agree("dict", too_big, want)
    assert not ok and "norm_max_gap" in detail
    wrong = dict(want, add_spread=want["add_spread"] + 0.01)
    ok, detail = C.agree("dict", wrong, want)
    assert not ok and "add_spread" in detail
    missing = {k: v for k, v in want.items() if k != "turns_last"}
    ok, detail = C.agree("dict", missing, want)
    assert not ok and "turns_last" in detail
    short = dict(want, slow_pairs=[32, 28, 19])
    assert not C.agree("dict", short, want)[0]


# --------------------------------------------------------------------------- write_report


def test_check_report_files_on_the_reference_files(tmp_path):
    json_path, md_path = tmp_path / "rope_report.json", tmp_path / "rope_report.md"
    ref.write_report(json_path, md_path)
    json_text, md_text = json_path.read_text(), md_path.read_text()
    ok, detail = offsets.check_report_files(json_text, md_text)
    assert ok, detail

    data = json.loads(json_text)
    data["add_spread"] = 1.0
    ok, detail = offsets.check_report_files(json.dumps(data), md_text)
    assert not ok and "add_spread" in detail

    lines = [line for line in md_text.splitlines() if "turns_first" not in line]
    ok, detail = offsets.check_report_files(json_text, "\n".join(lines))
    assert not ok and "turns_first" in detail

    no_table = "\n".join(line for line in md_text.splitlines() if "---" not in line)
    assert not offsets.check_report_files(json_text, no_table)[0]

    ok, detail = offsets.check_report_files("{not json", md_text)
    assert not ok and "JSON" in detail
    ok, detail = offsets.check_report_files("[1, 2]", md_text)
    assert not ok


def test_check_report_files_accepts_another_table_style():
    report = ref.rope_report()
    md = "## Report\n\n|key|value|\n|:--|--:|\n" + "\n".join(
        f"| `{k}` | {v} |" for k, v in report.items()
    )
    ok, detail = offsets.check_report_files(json.dumps(report), md)
    assert ok, detail


# --------------------------------------------------------------------------- expected


def test_expected_never_changes_the_case():
    for check in C.CHECKS.values():
        for case in check.fixed():
            before = copy.deepcopy(case)
            if not raises_by_design(case):
                C.expected(check, case)
            for a, b in zip(before.args, case.args):
                np.testing.assert_equal(a, b)  # NaN equals NaN here


def test_expected_of_constants_and_files():
    assert C.expected(C.CHECKS["DIM"], C.Case((), {}, "")) == 64
    assert C.expected(C.CHECKS["THETA_BASE"], C.Case((), {}, "")) == 10000.0
    assert set(C.expected(C.CHECKS["write_report"], C.Case((), {}, ""))) == set(offsets.REPORT_KEYS)


def test_every_section_names_a_heading_of_its_notebook():
    """The 'see <section>' pointer of every message names a real heading of the notebook."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for check in C.CHECKS.values():
        if check.kind == "constant":
            continue
        nb = json.loads(
            (root / "source" / check.assignment / f"{check.assignment}.ipynb").read_text()
        )
        headings = [
            line
            for cell in nb["cells"]
            if cell["cell_type"] == "markdown"
            for line in "".join(cell["source"]).splitlines()
            if line.startswith("#")
        ]
        assert any(check.section in h for h in headings), (check.name, check.section)

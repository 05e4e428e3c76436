"""The reference reproduces every number the seed texts print (../shared/seeds/).

Expected values are typed in from the seeds (and COURSE_SPEC.md, which quotes them), never
computed by the code under test. A value "agrees at the printed precision" when it is within
half a unit of the last printed digit; a value that sits exactly on a rounding boundary
(cos(0.01) = 0.999950000..., printed 0.9999 by a float32 script) gets 1e-9 of slack.

Seed 000 (`000_f9d079004b443132.txt`) ran in float32 (torch); its floating-point noise
figures (1.34e-07, 1.19e-07, the RoPE table's last digits) are upper bounds here: float64
does better, and the tests say so where they use them.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from helpers import reference as ref


def assert_printed(value: float, printed: str, what: str = "") -> None:
    """``value`` agrees with the number ``printed`` to the digits it shows."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    expected = float(printed)
    tol = 0.5 * 10.0**-decimals + 1e-9
    assert abs(value - expected) <= tol, f"{what}: got {value!r}, the seed prints {printed}"


def assert_row(values, printed: list[str], what: str = "") -> None:
    values = np.asarray(values, dtype=float)
    assert values.shape == (len(printed),), f"{what}: shape {values.shape}"
    for j, (v, p) in enumerate(zip(values, printed)):
        assert_printed(float(v), p, f"{what}[{j}]")


# --------------------------------------------------------------------------- seed 000


# Section 2, "손계산 (d_model = 4)": PE vectors [sin0, cos0, sin1, cos1] of positions 0..3.
D4_TABLE = [
    ["0.0000", "1.0000", "0.0000", "1.0000"],
    ["0.8415", "0.5403", "0.0100", "0.9999"],
    ["0.9093", "-0.4161", "0.0200", "0.9998"],
    ["0.1411", "-0.9900", "0.0300", "0.9996"],
]
# The same table's angle columns: i=0 (pos/1) and i=1 (pos/100).
D4_ANGLES = [["0.0000", "0.0000"], ["1.0000", "0.0100"], ["2.0000", "0.0200"], ["3.0000", "0.0300"]]


def test_d4_table():
    pe = ref.sinusoidal_pe(4, 4)
    assert pe.shape == (4, 4)
    for pos, printed in enumerate(D4_TABLE):
        assert_row(pe[pos], printed, f"PE({pos}) at d=4")


def test_d4_angles_and_rates():
    rates = ref.angle_rates(4)
    assert_row(rates, ["1.000000", "0.010000"], "angle rates at d=4")
    for pos, printed in enumerate(D4_ANGLES):
        assert_row(pos * rates, printed, f"angles of position {pos}")


def test_d4_wavelengths():
    assert_row(ref.wavelengths(4), ["6.28", "628.32"], "wavelengths at d=4")


def test_sinusoidal_pe_matches_the_seed_code():
    """Seed 000's own `sinusoidal_pe` (log-space `div`), ported line by line to numpy."""
    for max_len, d in ((24, 16), (100, 32), (50, 512)):
        pos = np.arange(max_len, dtype=float)[:, None]
        div = np.exp(np.arange(0, d, 2, dtype=float) * (-math.log(10000.0) / d))
        pe = np.zeros((max_len, d))
        pe[:, 0::2] = np.sin(pos * div)
        pe[:, 1::2] = np.cos(pos * div)
        np.testing.assert_allclose(ref.sinusoidal_pe(max_len, d), pe, rtol=0, atol=1e-12)


def test_values_lie_in_minus_one_one_and_reach_one():
    """Section 3: values stay in [-1, 1] (the seed prints the table's max as 1.0).

    The printed minimum (-0.99999) depends on a table length the seed does not state and on
    float32 rounding, so only the bound is checked.
    """
    pe = ref.sinusoidal_pe(100, 32)
    assert pe.max() == 1.0
    assert -1.0 <= pe.min() < -0.99999


def test_norms_at_d32():
    """Section 3: "각 위치 벡터의 norm (d=32) : 4.0, 4.0, 4.0, 4.0, 4.0", theory sqrt(16) = 4.0."""
    assert_row(ref.pe_norms(ref.sinusoidal_pe(5, 32)), ["4.0"] * 5, "norms at d=32")
    assert ref.expected_norm(32) == 4.0
    # and at every one of 100 positions, far below the printed precision
    np.testing.assert_allclose(ref.pe_norms(ref.sinusoidal_pe(100, 32)), 4.0, rtol=0, atol=1e-12)


def test_min_distance_d32():
    """Section 3: smallest distance between two different positions, d=32, 100 rows: 1.1716."""
    assert_printed(ref.min_pairwise_distance(ref.sinusoidal_pe(100, 32)), "1.1716", "min distance")


# Section 4: pos=25, d=32, dot product by distance k (max = d/2 = 16).
PROFILE_OFFSETS = [0, 1, 2, 3, 5, 8, 10, 15, 20]
PROFILE_PRINTED = ["16.00", "15.31", "13.73", "12.27", "11.78", "10.52", "10.06", "8.41", "10.47"]


def test_dot_profile_pos25():
    pe = ref.sinusoidal_pe(100, 32)
    profile = ref.dot_profile(pe, 25, PROFILE_OFFSETS)
    assert_row(profile, PROFILE_PRINTED, "dot profile at pos 25")
    assert abs(profile[0] - 16.0) < 1e-12  # the maximum d/2, exactly
    assert_row(ref.closed_form_dot(PROFILE_OFFSETS, 32), PROFILE_PRINTED, "closed form")


def test_first_rebound_is_20():
    """Section 4: "거리 15 -> 8.41 이후 거리 20 -> 10.47 로 되오름"."""
    printed = [float(p) for p in PROFILE_PRINTED]
    assert ref.first_rebound(PROFILE_OFFSETS, printed) == 20
    profile = ref.dot_profile(ref.sinusoidal_pe(100, 32), 25, PROFILE_OFFSETS)
    assert ref.first_rebound(PROFILE_OFFSETS, profile) == 20


def test_shift_check_d8_k3():
    """Section 5: M @ PE(5) = PE(8) = [0.98936, -0.14550, 0.71736, 0.69671] (first four)."""
    printed = ["0.98936", "-0.14550", "0.71736", "0.69671"]
    pe = ref.sinusoidal_pe(9, 8)
    moved = ref.shift_matrix(3, 8) @ pe[5]
    assert_row(moved[:4], printed, "M(3) @ PE(5)")
    assert_row(pe[8][:4], printed, "PE(8)")


def test_shift_error_pos_0_to_19():
    """Section 5: max error over pos 0..19 was 1.19e-07 in float32; float64 is far below."""
    err = ref.shift_error(3, 8, 23)  # pos + 3 < 23  <=>  pos = 0 .. 19
    assert err <= 1.19e-07
    assert err < 1e-12


def test_same_token_at_positions_0_and_3():
    """Section 6: the same token at positions 0 and 3, "차이" before 0.0, after 1.9900.

    The seed's "difference" is the largest absolute entry of z(3) - z(0) (the same measure
    as its 1.34e-07 permutation check). With equal token rows it is max|PE(3) - PE(0)|,
    whose largest entry is the cos of pair 0: 1 - cos(3) = 1.98999..., at every d.
    (The Euclidean norm would be 1.9952 at d=4 and more at larger d: not what it printed.)
    """
    rng = np.random.default_rng(5)
    for d in (2, 4, 8, 32, 64, 512):
        token = rng.normal(size=d)
        emb = np.tile(token, (4, 1))  # token id 5 at positions 0..3
        before = np.max(np.abs(emb[3] * math.sqrt(d) - emb[0] * math.sqrt(d)))
        assert_printed(before, "0.0", f"before, d={d}")
        z = ref.embed_with_positions(emb)
        assert_printed(float(np.max(np.abs(z[3] - z[0]))), "1.9900", f"after, d={d}")


def test_permutation_check_without_and_with_positions():
    """Sections 1 and 6: shuffling tokens without PE changes nothing (1.34e-07 in float32,
    printed 0.000000), with PE added after the shuffle it does (0.190533 for the seed's own
    random weights, which it does not give: only "clearly > 0" is checked)."""
    rng = np.random.default_rng(0)
    n, d = 6, 8
    X = rng.normal(size=(n, d))
    Wq, Wk, Wv = (rng.normal(size=(d, d)) / math.sqrt(d) for _ in range(3))
    perm = rng.permutation(n)
    gap = ref.permutation_gap(X, Wq, Wk, Wv, perm)
    assert f"{gap:.6f}" == "0.000000"
    assert gap < 1.34e-07 and gap < 1e-12
    with_pe = ref.order_gap_with_pe(X, ref.sinusoidal_pe(n, d), Wq, Wk, Wv, perm)
    assert with_pe > 1e-3


# Section 8: "가로 = 차원 0..15, 세로 = 위치 0..23 (값 -1 -> ' ', +1 -> '@')", copied verbatim.
SEED_HEATMAP = [
    "+@+@+@+@+@+@+@+@",
    "@#*@+@+@+@+@+@+@",
    "@:#@+@+@+@+@+@+@",
    "+ @#*@+@+@+@+@+@",
    "..@**@+@+@+@+@+@",
    " *@=#@+@+@+@+@+@",
    "-@@-#@+@+@+@+@+@",
    "%%@:%%*@+@+@+@+@",
    "@=# %%*@+@+@+@+@",
    "# * %%*@+@+@+@+@",
    ": = @#*@+@+@+@+@",
    " +- @#*@+@+@+@+@",
    ":@..@**@+@+@+@+@",
    "#@ :@**@+@+@+@+@",
    "@+ -@+#@+@+@+@+@",
    "%. +@+#@+@+@+@+@",
    "-  *@=#@+@+@+@+@",
    " -.%@=#@+@+@+@+@",
    ".%:@@-#@+@+@+@+@",
    "+@-@@-#@+@+@+@+@",
    "@#+@@:#@+@+@+@+@",
    "@:*@@:%%*@+@+@+@",
    "= %%@:%%*@+@+@+@",
    " :@#%.%%*@+@+@+@",
]


def test_text_heatmap_reproduces_seed_000():
    assert len(SEED_HEATMAP) == 24 and all(len(row) == 16 for row in SEED_HEATMAP)
    got = ref.text_heatmap(ref.sinusoidal_pe(24, 16))
    assert got.split("\n") == SEED_HEATMAP
    assert got == "\n".join(SEED_HEATMAP)


def test_rope_function_of_seed_000():
    """Section 7's `rope(x, pos)` (theta = pos / base ** (i / d), i = 0, 2, 4, ...), ported."""
    rng = np.random.default_rng(7)
    for d in (2, 8, 64):
        x = rng.normal(size=d)
        for pos in (0, 1, 5, 100, 4096):
            i = np.arange(0, d, 2, dtype=float)
            theta = pos / (10000.0 ** (i / d))
            x1, x2 = x[0::2], x[1::2]
            out = np.empty_like(x)
            out[0::2] = x1 * np.cos(theta) - x2 * np.sin(theta)
            out[1::2] = x1 * np.sin(theta) + x2 * np.cos(theta)
            np.testing.assert_allclose(ref.apply_rope(x, pos), out, rtol=0, atol=1e-12)


# Section 7's RoPE table: the (m, n) pairs it measured, grouped by distance n - m.
ROPE_TABLE_PAIRS = {
    0: [(0, 0), (5, 5), (100, 100)],
    3: [(0, 3), (5, 8), (100, 103)],
    10: [(0, 10), (50, 60)],
}


def test_rope_table_same_distance_same_score():
    """Section 7: equal distance -> equal score (the seed's q, k are random, so its values
    -9.243921 etc. are not reproducible; its float32 spread was 1e-5, float64 is ~1e-13)."""
    rng = np.random.default_rng(11)
    for d in (8, 32, 64):
        q, k = rng.normal(size=d), rng.normal(size=d)
        scores = {}
        for dist, pairs in ROPE_TABLE_PAIRS.items():
            vals = [ref.rope_score(q, k, m, n) for m, n in pairs]
            assert max(vals) - min(vals) < 1e-12, (d, dist, vals)
            scores[dist] = vals[0]
        # different distances give different scores (the table's three rows differ)
        assert len({round(v, 6) for v in scores.values()}) == 3


# --------------------------------------------------------------------------- seed 004


def test_seed_004_contract_basics():
    """Seed 004's fixed points: DIM 64, base 1e4, demo vectors by formula, thetas[0] = 1.0,
    rotate_pair(1, 0, pi/2) = (0, 1), pos 0 returns the vector unchanged."""
    assert ref.DIM == 64 and ref.THETA_BASE == 10000.0
    q, k = ref.demo_vectors()
    assert [q[j] for j in (0, 1, 63)] == [math.cos(0.7 * j + 0.3) for j in (0, 1, 63)]
    assert [k[j] for j in (0, 1, 63)] == [math.sin(0.4 * j + 1.1) for j in (0, 1, 63)]
    th = ref.thetas(64)
    assert th.shape == (32,) and th[0] == 1.0 and np.all(np.diff(th) < 0)
    x0, x1 = ref.rotate_pair(1.0, 0.0, math.pi / 2)
    assert abs(x0) < 1e-15 and x1 == 1.0
    np.testing.assert_array_equal(ref.apply_rope(q, 0), q)


def test_seed_004_report():
    r = ref.rope_report()
    assert list(r) == [
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
    ]
    assert r["dim"] == 64 and r["base"] == 10000.0 and r["offset"] == 2
    assert r["starts"] == [3, 10, 100, 4000]
    assert r["deltas"] == [1, 16, 256, 4096]
    assert len(r["rope_scores"]) == 4
    for s in r["rope_scores"]:
        assert_printed(s, "1.3679447", "rope score")
    assert 0 <= r["rope_spread"] < 1e-12  # the seed: ~7e-14
    assert len(r["add_scores"]) == 4
    assert_printed(r["add_spread"], "13.8416", "add spread")
    assert_printed(r["norm_before"], "5.69443", "norm_before")
    assert 0 <= r["norm_max_gap"] < 1e-12  # rotation keeps the length
    assert r["slow_pairs"] == [32, 28, 19, 9]
    assert all(type(n) is int for n in r["slow_pairs"])
    # turns of pair 0 (theta_0 = 1): delta / (2 pi); of the last pair: delta * 1e4**(-62/64) / 2pi
    for delta, first, last in zip(r["deltas"], r["turns_first"], r["turns_last"]):
        assert abs(first - delta / (2 * math.pi)) <= 1e-12 * delta
        assert abs(last - delta * 10000.0 ** (-62 / 64) / (2 * math.pi)) <= 1e-15 * delta


def test_seed_004_written_report(tmp_path):
    """Step 8: the report as JSON (same dict) and as a Markdown table (one row per key)."""
    json_path, md_path = tmp_path / "rope_report.json", tmp_path / "rope_report.md"
    returned = ref.write_report(json_path, md_path)
    loaded = json.loads(json_path.read_text(encoding="utf-8"))
    assert loaded == returned == ref.rope_report()
    md = md_path.read_text(encoding="utf-8").splitlines()
    assert md[0].startswith("|") and set(md[1]) <= set("|- ")
    assert [line.split("|")[1].strip() for line in md[2:]] == list(loaded)


# --------------------------------------------------------------------------- spec numbers


def test_softmax_large_equal_logits():
    np.testing.assert_array_equal(ref.softmax([1000.0, 1000.0]), [0.5, 0.5])


def test_alibi_8_heads():
    """The ALiBi paper's 8-head slopes: 1/2, 1/4, ..., 1/256 (exact powers of two)."""
    np.testing.assert_array_equal(ref.alibi_slopes(8), [1 / 2**h for h in range(1, 9)])


@pytest.mark.parametrize(("delta", "count"), [(1, 32), (16, 28), (256, 19), (4096, 9)])
def test_slow_pairs_d64(delta, count):
    assert ref.slow_pairs(64, delta) == count

"""The reference against formulations written independently of it.

RoPE as complex multiplication and as a block-diagonal rotation matrix; the closed-form
dot product; the shift matrix's group laws; the ALiBi paper's own ``get_slopes``; the
half-split layout; RoFormer's decay bound as a double loop; and a pure-python (``math``
only) grader of seed 004's contract, compared on many random cases under its tolerance.
"""

from __future__ import annotations

import cmath
import math
import random

import numpy as np
import pytest

from helpers import reference as ref

RNG_SEED = 20240601


def close(a: float, b: float) -> bool:
    """Seed 004's agreement rule, ``b`` being the independent value."""
    return abs(a - b) <= 1e-9 + 1e-6 * abs(b)


def theta_py(d: int, base: float) -> list[float]:
    return [base ** (-2 * i / d) for i in range(d // 2)]


# --------------------------------------------------------------------------- RoPE


@pytest.mark.parametrize("d", [2, 4, 16, 64, 256])
def test_rope_equals_complex_multiplication(d):
    """Pair i as the complex number x[2i] + 1j x[2i+1], multiplied by exp(1j pos theta_i)."""
    rng = np.random.default_rng(d)
    for base in (100.0, 10000.0, 1e6):
        th = np.array(theta_py(d, base))
        for pos in (0, 1, 7, 1000, 4096):
            x = rng.normal(size=d)
            z = (x[0::2] + 1j * x[1::2]) * np.exp(1j * pos * th)
            expected = np.empty(d)
            expected[0::2], expected[1::2] = z.real, z.imag
            np.testing.assert_allclose(ref.apply_rope(x, pos, base), expected, rtol=0, atol=1e-11)


@pytest.mark.parametrize("d", [2, 6, 32])
def test_rope_equals_block_diagonal_rotation(d):
    """R(pos) = blockdiag([[cos, -sin], [sin, cos]](pos theta_i)); apply_rope(x) = R x,
    also on a batch of vectors with one position each."""
    rng = np.random.default_rng(100 + d)
    base = 10000.0
    positions = [0, 3, 50, 4096]
    X = rng.normal(size=(len(positions), d))
    expected = []
    for x, pos in zip(X, positions):
        R = np.zeros((d, d))
        for i, t in enumerate(theta_py(d, base)):
            a = pos * t
            R[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [
                [math.cos(a), -math.sin(a)],
                [math.sin(a), math.cos(a)],
            ]
        np.testing.assert_allclose(R @ R.T, np.eye(d), atol=1e-12)
        expected.append(R @ x)
        np.testing.assert_allclose(ref.apply_rope(x, pos, base), R @ x, rtol=0, atol=1e-11)
    batch = ref.apply_rope(X, np.array(positions), base)
    np.testing.assert_allclose(batch, np.array(expected), rtol=0, atol=1e-11)


def test_half_split_equals_permuted_interleaved():
    """rope_half(P x) = P apply_rope(x) with P the index list [0, 2, 4, ..., 1, 3, 5, ...]."""
    rng = np.random.default_rng(3)
    for d in (2, 8, 64, 128):
        perm = list(range(0, d, 2)) + list(range(1, d, 2))
        for pos in (0, 1, 77, 4096):
            x = rng.normal(size=d)
            np.testing.assert_array_equal(ref.interleaved_to_half(x), x[perm])
            np.testing.assert_allclose(
                ref.rope_half(x[perm], pos), ref.apply_rope(x, pos)[perm], rtol=0, atol=1e-12
            )
        X = rng.normal(size=(3, 5, d))
        np.testing.assert_array_equal(ref.interleaved_to_half(X), X[..., perm])


def test_half_split_pairs_are_i_and_i_plus_half():
    """rope_half on its own: pair i = (x[i], x[i + d/2]), counter-clockwise."""
    d, pos = 8, 3
    x = np.arange(1.0, d + 1)
    out = ref.rope_half(x, pos)
    for i, t in enumerate(theta_py(d, 10000.0)):
        c, s = math.cos(pos * t), math.sin(pos * t)
        assert abs(out[i] - (x[i] * c - x[i + 4] * s)) < 1e-12
        assert abs(out[i + 4] - (x[i] * s + x[i + 4] * c)) < 1e-12


# --------------------------------------------------------------------------- sin/cos table


def test_pe_dot_equals_closed_form_at_random_positions():
    rng = random.Random(RNG_SEED)
    for _ in range(40):
        d = 2 * rng.randint(1, 128)
        base = 10 ** rng.uniform(2, 6)
        max_len = rng.randint(2, 600)
        pe = ref.sinusoidal_pe(max_len, d, base)
        p, q = rng.randrange(max_len), rng.randrange(max_len)
        k = q - p
        closed = sum(math.cos(k * t) for t in theta_py(d, base))
        assert abs(float(pe[p] @ pe[q]) - closed) <= 1e-9 * d, (d, base, p, q)
        assert abs(float(ref.closed_form_dot([k], d, base)[0]) - closed) <= 1e-9 * d, (d, base, k)


def test_sinusoidal_pe_entries_from_the_formula():
    """PE[pos, 2i] = sin(pos / base ** (2i / d)), PE[pos, 2i+1] = cos(...), in plain math."""
    d, base = 10, 500.0
    pe = ref.sinusoidal_pe(30, d, base)
    for pos in range(30):
        for j in range(d):
            angle = pos / base ** (2 * (j // 2) / d)
            expected = math.sin(angle) if j % 2 == 0 else math.cos(angle)
            assert abs(pe[pos, j] - expected) < 1e-13


# --------------------------------------------------------------------------- shift matrix


@pytest.mark.parametrize(("d", "base"), [(2, 10000.0), (8, 10000.0), (64, 100.0), (128, 1e6)])
def test_shift_matrix_group_laws(d, base):
    rng = random.Random(d)
    pe = ref.sinusoidal_pe(300, d, base)
    for _ in range(5):
        a, b = rng.randint(-50, 50), rng.randint(-50, 50)
        Ma, Mb = ref.shift_matrix(a, d, base), ref.shift_matrix(b, d, base)
        np.testing.assert_allclose(Ma @ Ma.T, np.eye(d), atol=1e-12)  # orthogonal
        np.testing.assert_allclose(Ma @ Mb, ref.shift_matrix(a + b, d, base), atol=1e-11)
        np.testing.assert_allclose(ref.shift_matrix(-a, d, base), Ma.T, atol=1e-12)
        if a >= 0:  # the same M moves every position: independent of pos
            moved = pe[: 300 - a] @ Ma.T
            np.testing.assert_allclose(moved, pe[a:], atol=1e-11)
    np.testing.assert_allclose(ref.shift_matrix(0, d, base), np.eye(d), atol=0)


def test_shift_matrix_blocks_from_the_addition_theorem():
    """Block i = [[cos k t, sin k t], [-sin k t, cos k t]] on the [sin, cos] pair."""
    d, k = 6, 5
    M = ref.shift_matrix(k, d)
    expected = np.zeros((d, d))
    for i, t in enumerate(theta_py(d, 10000.0)):
        c, s = math.cos(k * t), math.sin(k * t)
        expected[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, s], [-s, c]]
    np.testing.assert_allclose(M, expected, rtol=0, atol=1e-15)


# --------------------------------------------------------------------------- ALiBi


def get_slopes(n: int) -> list[float]:
    """The ALiBi paper's code (Press et al., attention_with_linear_biases), verbatim maths."""

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


@pytest.mark.parametrize("n_heads", range(1, 65))
def test_alibi_slopes_equal_the_paper_code(n_heads):
    got = ref.alibi_slopes(n_heads)
    expected = get_slopes(n_heads)
    assert got.shape == (n_heads,)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


def test_alibi_bias_entries():
    slopes = ref.alibi_slopes(3)
    for causal in (True, False):
        bias = ref.alibi_bias(3, 5, causal=causal)
        for h in range(3):
            for i in range(5):
                for j in range(5):
                    if j <= i:
                        expected = -slopes[h] * (i - j)
                    else:
                        expected = -math.inf if causal else -slopes[h] * (j - i)
                    assert bias[h, i, j] == expected


# --------------------------------------------------------------------------- decay bound


def decay_bound_loops(d: int, max_dist: int, base: float) -> list[float]:
    """RoFormer 3.4.3: (1/(d/2)) sum_{j=1}^{d/2} |sum_{i=0}^{j-1} exp(1j r theta_i)|."""
    th = theta_py(d, base)
    out = []
    for r in range(max_dist + 1):
        total = 0.0
        for j in range(1, d // 2 + 1):
            total += abs(sum(cmath.exp(1j * r * th[i]) for i in range(j)))
        out.append(total / (d / 2))
    return out


@pytest.mark.parametrize(
    ("d", "max_dist", "base"), [(2, 5, 10000.0), (8, 40, 10000.0), (16, 30, 100.0), (24, 10, 1e6)]
)
def test_rope_decay_bound_against_double_loop(d, max_dist, base):
    got = ref.rope_decay_bound(d, max_dist, base)
    expected = decay_bound_loops(d, max_dist, base)
    assert got.shape == (max_dist + 1,)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert got[0] == pytest.approx((d / 2 + 1) / 2)  # r = 0: mean of 1..d/2


# --------------------------------------------------------------------------- seed 004 grader
# Seed 004's rope.py contract, written from the seed text with `math` and lists only.


class Seed004:
    DIM = 64
    THETA_BASE = 10000.0

    @staticmethod
    def demo_vectors():
        q = [math.cos(0.7 * j + 0.3) for j in range(Seed004.DIM)]
        k = [math.sin(0.4 * j + 1.1) for j in range(Seed004.DIM)]
        return q, k

    @staticmethod
    def dot(a, b):
        return sum(x * y for x, y in zip(a, b))

    @staticmethod
    def thetas(d, base=THETA_BASE):
        return [base ** (-2 * i / d) for i in range(d // 2)]

    @staticmethod
    def rotate_pair(x0, x1, angle):
        c, s = math.cos(angle), math.sin(angle)
        return (x0 * c - x1 * s, x0 * s + x1 * c)

    @staticmethod
    def apply_rope(vec, pos, base=THETA_BASE):
        th = Seed004.thetas(len(vec), base)
        out = []
        for i in range(len(vec) // 2):
            out.extend(Seed004.rotate_pair(vec[2 * i], vec[2 * i + 1], pos * th[i]))
        return out

    @staticmethod
    def rope_score(q, k, m, n, base=THETA_BASE):
        return Seed004.dot(Seed004.apply_rope(q, m, base), Seed004.apply_rope(k, n, base))

    @staticmethod
    def sin_pos(pos, d, base=THETA_BASE):
        out = []
        for j in range(d):
            angle = pos / (base ** ((2 * (j // 2)) / d))
            out.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
        return out

    @staticmethod
    def add_score(q, k, m, n, base=THETA_BASE):
        qm = [a + b for a, b in zip(q, Seed004.sin_pos(m, len(q), base))]
        kn = [a + b for a, b in zip(k, Seed004.sin_pos(n, len(k), base))]
        return Seed004.dot(qm, kn)

    @staticmethod
    def offset_scan(q, k, offset, starts, base=THETA_BASE):
        return [
            (
                s,
                Seed004.rope_score(q, k, s + offset, s, base),
                Seed004.add_score(q, k, s + offset, s, base),
            )
            for s in starts
        ]

    @staticmethod
    def turns(d, delta, base=THETA_BASE):
        return [delta * t / (2 * math.pi) for t in Seed004.thetas(d, base)]

    @staticmethod
    def slow_pairs(d, delta, base=THETA_BASE):
        return sum(1 for t in Seed004.turns(d, delta, base) if t < 1.0)

    @staticmethod
    def report():
        q, k = Seed004.demo_vectors()
        scan = Seed004.offset_scan(q, k, 2, [3, 10, 100, 4000])
        rope_scores = [r for _, r, _ in scan]
        add_scores = [a for _, _, a in scan]
        norm_before = math.sqrt(Seed004.dot(q, q))
        gaps = []
        for pos in (0, 1, 7, 100, 4096):
            v = Seed004.apply_rope(q, pos)
            gaps.append(abs(math.sqrt(Seed004.dot(v, v)) - norm_before))
        deltas = [1, 16, 256, 4096]
        return {
            "dim": Seed004.DIM,
            "base": Seed004.THETA_BASE,
            "offset": 2,
            "starts": [3, 10, 100, 4000],
            "rope_scores": rope_scores,
            "rope_spread": max(rope_scores) - min(rope_scores),
            "add_scores": add_scores,
            "add_spread": max(add_scores) - min(add_scores),
            "norm_before": norm_before,
            "norm_max_gap": max(gaps),
            "deltas": deltas,
            "slow_pairs": [Seed004.slow_pairs(Seed004.DIM, t) for t in deltas],
            "turns_first": [Seed004.turns(Seed004.DIM, t)[0] for t in deltas],
            "turns_last": [Seed004.turns(Seed004.DIM, t)[-1] for t in deltas],
        }


def random_case(rng: random.Random) -> dict:
    d = 2 * rng.randint(1, 128)
    return {
        "d": d,
        "base": 10 ** rng.uniform(2, 6),
        "q": [rng.uniform(-2, 2) for _ in range(d)],
        "k": [rng.uniform(-2, 2) for _ in range(d)],
        "m": rng.randint(0, 4096),
        "n": rng.randint(0, 4096),
        "delta": rng.randint(0, 4096),
        "angle": rng.uniform(-10, 10),
    }


def grade_case(impl, case: dict) -> list[str]:
    """Every contract function of ``impl`` on one case against Seed004; the failures."""
    d, base, q, k, m, n = (case[x] for x in ("d", "base", "q", "k", "m", "n"))
    bad = []

    def check(name, got, expected):
        got = [got] if np.ndim(got) == 0 else list(np.asarray(got, dtype=float).ravel())
        expected = [expected] if np.ndim(expected) == 0 else list(expected)
        if len(got) != len(expected) or not all(close(a, b) for a, b in zip(got, expected)):
            bad.append(name)

    check("thetas", impl.thetas(d, base), Seed004.thetas(d, base))
    check(
        "rotate_pair",
        impl.rotate_pair(q[0], q[1], case["angle"]),
        Seed004.rotate_pair(q[0], q[1], case["angle"]),
    )
    check("apply_rope", impl.apply_rope(q, m, base), Seed004.apply_rope(q, m, base))
    check("dot", impl.dot(q, k), Seed004.dot(q, k))
    check("rope_score", impl.rope_score(q, k, m, n, base), Seed004.rope_score(q, k, m, n, base))
    check("sin_pos", impl.sin_pos(m, d, base), Seed004.sin_pos(m, d, base))
    check("add_score", impl.add_score(q, k, m, n, base), Seed004.add_score(q, k, m, n, base))
    check("turns", impl.turns(d, case["delta"], base), Seed004.turns(d, case["delta"], base))
    if impl.slow_pairs(d, case["delta"], base) != Seed004.slow_pairs(d, case["delta"], base):
        bad.append("slow_pairs")
    offset = n - m if n >= m else m - n
    starts = sorted({min(m, n), 0, case["delta"]})
    scan, expected = (
        impl.offset_scan(q, k, offset, starts, base),
        Seed004.offset_scan(q, k, offset, starts, base),
    )
    if [s for s, _, _ in scan] != starts:
        bad.append("offset_scan starts")
    check(
        "offset_scan",
        [v for row in scan for v in row[1:]],
        [v for row in expected for v in row[1:]],
    )
    return bad


def test_contract_grader_agrees_with_the_reference_on_random_cases():
    """The reference agrees with an independent randomized grader of seed 004's contract."""
    rng = random.Random(RNG_SEED)
    for case_no in range(150):
        case = random_case(rng)
        bad = grade_case(ref, case)
        assert not bad, (
            f"seed {RNG_SEED}, case {case_no}: {bad} differ; d={case['d']}, "
            f"base={case['base']}, m={case['m']}, n={case['n']}"
        )


def test_contract_grader_agrees_on_the_report():
    got, expected = ref.rope_report(), Seed004.report()
    assert list(got) == list(expected)
    for key, value in expected.items():
        if isinstance(value, list):
            assert len(got[key]) == len(value), key
            for a, b in zip(got[key], value):
                assert a == b if isinstance(b, int) else close(a, b), (key, a, b)
        elif isinstance(value, int):
            assert got[key] == value, key
        else:
            assert close(got[key], value), (key, got[key], value)
    np.testing.assert_array_equal(ref.demo_vectors()[0], Seed004.demo_vectors()[0])
    np.testing.assert_array_equal(ref.demo_vectors()[1], Seed004.demo_vectors()[1])


class _Mistaken:
    """The reference with one of seed 004's "common mistakes" put in."""

    def __init__(self, **overrides):
        self._overrides = overrides

    def __getattr__(self, name):
        return self._overrides.get(name, getattr(ref, name))


def _rotated(vec, angles: np.ndarray, clockwise: bool = False) -> np.ndarray:
    """Pairs (2i, 2i+1) rotated by ``angles`` (counter-clockwise unless ``clockwise``)."""
    x = np.array(vec, dtype=float)
    c, s = np.cos(angles), np.sin(angles) * (-1 if clockwise else 1)
    out = np.empty_like(x)
    out[0::2] = x[0::2] * c - x[1::2] * s
    out[1::2] = x[0::2] * s + x[1::2] * c
    return out


MISTAKES = {
    "clockwise rotation": _Mistaken(
        apply_rope=lambda v, p, b=10000.0: _rotated(v, p * ref.thetas(len(v), b), clockwise=True)
    ),
    "pair 0's angle for every pair": _Mistaken(
        apply_rope=lambda v, p, b=10000.0: _rotated(v, p * np.ones(len(v) // 2))
    ),
    "exponent i/d instead of 2i/d": _Mistaken(
        apply_rope=lambda v, p, b=10000.0: _rotated(v, p * b ** (-np.arange(len(v) // 2) / len(v)))
    ),
    "only the query rotated": _Mistaken(
        rope_score=lambda q, k, m, n, b=10000.0: ref.dot(ref.apply_rope(q, m, b), k)
    ),
    "turns not divided by 2 pi": _Mistaken(
        turns=lambda d, t, b=10000.0: ref.turns(d, t, b) * 2 * math.pi
    ),
    "position added to one side only": _Mistaken(
        add_score=lambda q, k, m, n, b=10000.0: ref.dot(np.add(q, ref.sin_pos(m, len(q), b)), k)
    ),
    "query and key swapped in the scan": _Mistaken(
        offset_scan=lambda q, k, o, st, b=10000.0: [
            (s, ref.rope_score(q, k, s, s + o, b), ref.add_score(q, k, s, s + o, b)) for s in st
        ]
    ),
}


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_contract_grader_rejects_known_mistakes(mistake):
    """The same grader, given a known mistake, finds it on the first few random cases."""
    rng = random.Random(RNG_SEED + 1)
    impl = MISTAKES[mistake]
    found = set()
    for _ in range(10):
        found.update(grade_case(impl, random_case(rng)))
    assert set(impl._overrides) <= found, f"the grader did not notice: {mistake} ({found})"

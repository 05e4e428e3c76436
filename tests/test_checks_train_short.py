"""13_train_short: the reference against the spec's numbers and an independent formulation, and
its named mistakes, each written two different ways, named by what they do to the output.

Expected values are the spec's (ln 2, 1000, 0.325083, [0, ln 2, ln 3, ln 4], 33) or come from
another way of computing the same thing (the stationary pairs by simulating the chain's
distribution forward; a loop over rows), not from the code under test.
"""

from __future__ import annotations

import copy
import math
import re

import numpy as np
import pytest

from helpers.reference import attention_entropy, breaking_point, chain_entropy, next_token_loss
from helpers.teacher import checks as C

LN2, LN3, LN4 = math.log(2), math.log(3), math.log(4)


# --------------------------------------------------------------------------- the spec's numbers


def test_next_token_loss_spec_numbers():
    assert next_token_loss([[0, 0]], [0]) == pytest.approx([0.693147], abs=1e-6)
    assert next_token_loss([[1000, 0]], [1]) == pytest.approx([1000.0])
    assert next_token_loss([[1000, 1000]], [0]) == pytest.approx([0.693147], abs=1e-6)
    z = np.random.default_rng(0).normal(size=(3, 4, 7)) * 400
    y = np.random.default_rng(1).integers(0, 7, (3, 4))
    got = next_token_loss(z, y)
    # a loop with math.fsum over exp of differences: another formulation
    for idx in np.ndindex(3, 4):
        row = z[idx]
        want = -row[y[idx]] + row.max() + math.log(math.fsum(math.exp(v - row.max()) for v in row))
        assert got[idx] == pytest.approx(want, rel=1e-12, abs=1e-9)
    for bad in (([[0, 0]], [2]), ([[0, 0]], [-1]), ([[0.0]], [0]), ([[0, 0]], [0.5])):
        with pytest.raises(ValueError):
            next_token_loss(*bad)


def test_chain_entropy_spec_numbers_and_a_simulated_chain():
    sticky = np.array([[[0.9 if c == b else 0.1 for c in range(2)] for b in range(2)]] * 2)
    assert chain_entropy(sticky) == pytest.approx((0.693147, 0.325083, 0.325083), abs=1e-6)
    assert chain_entropy(np.full((2, 2, 2), 0.5)) == pytest.approx((LN2, LN2, LN2))
    # pi by pushing the pair distribution forward 2000 times (the chain mixes)
    rng = np.random.default_rng(3)
    t = rng.dirichlet(np.ones(5), size=(5, 5))
    pi = np.full((5, 5), 1 / 25)
    for _ in range(2000):
        pi = np.einsum("ab,abc->bc", pi, t)
    pa = pi.sum(1)
    h = lambda p: -sum(x * math.log(x) for x in p if x > 0)
    want = (
        h(pa),
        sum(pa[a] * h(pi[a] / pa[a]) for a in range(5)),
        sum(pi[a, b] * h(t[a, b]) for a in range(5) for b in range(5)),
    )
    assert chain_entropy(t) == pytest.approx(want, rel=1e-9)
    bad_rows = np.full((2, 2, 2), 0.5)
    bad_rows[0, 0, 0] = 0.6
    for bad in (np.full((2, 2, 3), 1 / 3), bad_rows, -np.full((2, 2, 2), 0.5), np.ones((1, 1, 1))):
        with pytest.raises(ValueError):
            chain_entropy(bad)


def test_attention_entropy_and_breaking_point_spec_numbers():
    assert attention_entropy([[1, 0], [0.5, 0.5]]).tolist() == pytest.approx(
        [0, 0.693147], abs=1e-6
    )
    uniform = np.tril(np.ones((4, 4))) / np.arange(1, 5)[:, None]
    assert attention_entropy(uniform) == pytest.approx([0, LN2, LN3, LN4])
    shown = np.concatenate([np.zeros(32), [0.05, 0.2, 0.3, 0.3, 0.3]])
    assert breaking_point(shown, 32) == 33
    assert breaking_point(np.zeros(40), 32) is None
    assert isinstance(breaking_point(shown, 32), int)
    assert breaking_point(shown, 32, window=1) == 33
    assert breaking_point(shown, 32, threshold=0.25) == 34
    for args, kwargs in (
        ((shown, 37), {}),
        ((shown, 3), {"window": 0}),
        ((shown, 3), {"threshold": -1}),
    ):
        with pytest.raises(ValueError):
            breaking_point(*args, **kwargs)
    for bad in ([[1.5, -0.5]], [[0.5, 0.4]]):
        with pytest.raises(ValueError):
            attention_entropy(bad)


# --------------------------------------------------------------------------- wrong answers


def ntl_no_max_loop(logits, targets):
    z = np.asarray(logits, dtype=float)
    y = np.asarray(targets)
    out = np.empty(z.shape[:-1])
    for idx in np.ndindex(out.shape):
        with np.errstate(all="ignore"):
            out[idx] = -np.log(np.exp(z[idx][y[idx]]) / np.exp(z[idx]).sum())
    return out


def ntl_no_max_softmax(logits, targets):
    z = np.asarray(logits, dtype=float)
    with np.errstate(all="ignore"):
        p = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    return -np.log(np.take_along_axis(p, np.asarray(targets)[..., None], -1))[..., 0]


def ntl_mean_numpy(logits, targets):
    z = np.asarray(logits, dtype=float)
    m = z.max(-1, keepdims=True)
    lse = m[..., 0] + np.log(np.exp(z - m).sum(-1))
    return (lse - np.take_along_axis(z, np.asarray(targets)[..., None], -1)[..., 0]).mean(-1)


def ntl_mean_sum_over_t(logits, targets):
    z = np.asarray(logits, dtype=float)
    T = z.shape[-2]
    m = z.max(-1, keepdims=True)
    logp = z - m - np.log(np.exp(z - m).sum(-1, keepdims=True))
    picked = np.take_along_axis(logp, np.asarray(targets)[..., None], -1)[..., 0]
    return -picked.sum(-1) / T


def ntl_log2_numpy(logits, targets):
    z = np.asarray(logits, dtype=float)
    m = z.max(-1, keepdims=True)
    lse = m[..., 0] + np.log2(np.exp(z - m).sum(-1)) * LN2
    return (lse - np.take_along_axis(z, np.asarray(targets)[..., None], -1)[..., 0]) / LN2


def ntl_log2_probs(logits, targets):
    z = np.asarray(logits, dtype=float)
    m = z.max(-1, keepdims=True)
    log2_sum = np.log2(np.exp(z - m).sum(-1))
    picked = np.take_along_axis(z - m, np.asarray(targets)[..., None], -1)[..., 0]
    return log2_sum - picked / LN2


def _pi_power(t):
    V = t.shape[0]
    pi = np.full((V, V), 1 / V**2)
    for _ in range(3000):
        pi = np.einsum("ab,abc->bc", pi, t)
    return pi


def _h(p, log=np.log):
    return -np.sum(np.where(p > 0, p * log(np.where(p > 0, p, 1)), 0), axis=-1)


def ce_equal_pairs_mean(table):
    t = np.asarray(table, dtype=float)
    pa = _pi_power(t).sum(1)
    pi = _pi_power(t)
    return float(_h(pa)), float((pa * _h(pi / pa[:, None])).sum()), float(_h(t).mean())


def ce_equal_pairs_loop(table):
    t = np.asarray(table, dtype=float)
    V = t.shape[0]
    pi = _pi_power(t)
    pa = pi.sum(1)
    rest = sum(_h(t[a, b]) for a in range(V) for b in range(V)) / V**2
    return float(_h(pa)), float((pa * _h(pi / pa[:, None])).sum()), float(rest)


def ce_marginal_loop(table):
    t = np.asarray(table, dtype=float)
    pi = _pi_power(t)
    pb = pi.sum(0)  # the second token's marginal
    return float(_h(pi.sum(1))), float(_h(pb)), float((pi * _h(t)).sum())


def ce_marginal_numpy(table):
    t = np.asarray(table, dtype=float)
    pi = _pi_power(t)
    return float(_h(pi.sum(1))), float(_h(pi.sum(1))), float(np.sum(pi * _h(t)))


def ce_uniform_pi_eigh(table):
    """pi from the eigenvector of P for eigenvalue 1, P's right one (P v = v): all ones."""
    t = np.asarray(table, dtype=float)
    V = t.shape[0]
    P = np.zeros((V, V, V, V))
    for b in range(V):
        P[:, b, b, :] = t[:, b, :]
    w, vecs = np.linalg.eig(P.reshape(V * V, V * V))
    v = np.real(vecs[:, np.argmin(np.abs(w - 1))])
    pi = (v / v.sum()).reshape(V, V)
    pa = pi.sum(1)
    return float(_h(pa)), float((pa * _h(pi / pa[:, None])).sum()), float((pi * _h(t)).sum())


def ce_uniform_pi_ones(table):
    """pi solved as (P - I) x = 0 with sum 1, P not transposed: the uniform vector."""
    t = np.asarray(table, dtype=float)
    V = t.shape[0]
    P = np.zeros((V, V, V, V))
    for b in range(V):
        P[:, b, b, :] = t[:, b, :]
    A = P.reshape(V * V, V * V) - np.eye(V * V)
    A[-1] = 1.0
    rhs = np.zeros(V * V)
    rhs[-1] = 1.0
    pi = np.linalg.lstsq(A, rhs, rcond=None)[0].reshape(V, V)
    pa = pi.sum(1)
    return (
        float(_h(pa)),
        float(sum(pa[a] * _h(pi[a] / pa[a]) for a in range(V))),
        float(np.sum(pi * _h(t))),
    )


def ce_log2_numpy(table):
    t = np.asarray(table, dtype=float)
    pi = _pi_power(t)
    pa = pi.sum(1)
    return (
        float(_h(pa, np.log2)),
        float((pa * _h(pi / pa[:, None], np.log2)).sum()),
        float((pi * _h(t, np.log2)).sum()),
    )


def ce_log2_divided(table):
    return tuple(h / LN2 for h in ce_marginal_loop(table)[:1] + ce_log2_helper(table))


def ce_log2_helper(table):
    t = np.asarray(table, dtype=float)
    pi = _pi_power(t)
    pa = pi.sum(1)
    return (float((pa * _h(pi / pa[:, None])).sum()), float((pi * _h(t)).sum()))


def ae_nan_numpy(weights):
    w = np.asarray(weights, dtype=float)
    with np.errstate(all="ignore"):
        return -(w * np.log(w)).sum(-1)


def ae_nan_loop(weights):
    w = np.asarray(weights, dtype=float)
    out = np.empty(w.shape[:-1])
    with np.errstate(all="ignore"):
        for idx in np.ndindex(out.shape):
            out[idx] = -sum(x * np.log(x) for x in w[idx])
    return out


def ae_columns_numpy(weights):
    w = np.asarray(weights, dtype=float)
    return -np.sum(np.where(w > 0, w * np.log(np.where(w > 0, w, 1)), 0), axis=-2)


def ae_columns_transpose(weights):
    w = np.swapaxes(np.asarray(weights, dtype=float), -1, -2)
    safe = np.where(w > 0, w, 1.0)
    return -(w * np.log(safe)).sum(-1)


def ae_log2_numpy(weights):
    w = np.asarray(weights, dtype=float)
    return -np.sum(np.where(w > 0, w * np.log2(np.where(w > 0, w, 1)), 0), axis=-1)


def ae_log2_loop(weights):
    w = np.asarray(weights, dtype=float)
    out = np.zeros(w.shape[:-1])
    for idx in np.ndindex(out.shape):
        out[idx] = -sum(x * math.log2(x) for x in w[idx] if x > 0)
    return out


def _bp_valid(e, train_len, threshold, window):
    e = np.asarray(e, dtype=float)
    if not 0 <= train_len < len(e) or window < 1 or threshold < 0:
        raise ValueError("bad input")
    return e


def bp_anywhere_loop(excess, train_len, threshold=0.1, window=3):
    e = _bp_valid(excess, train_len, threshold, window)
    for p in range(len(e) - window + 1):
        if all(e[p + k] > threshold for k in range(window)):
            return p
    return None


def bp_anywhere_convolve(excess, train_len, threshold=0.1, window=3):
    e = _bp_valid(excess, train_len, threshold, window)
    runs = np.convolve((e > threshold).astype(int), np.ones(window, int), "valid")
    hits = np.flatnonzero(runs == window)
    return int(hits[0]) if hits.size else None


def bp_offset_loop(excess, train_len, threshold=0.1, window=3):
    e = _bp_valid(excess, train_len, threshold, window)
    for k, p in enumerate(range(train_len, len(e) - window + 1)):
        if np.all(e[p : p + window] > threshold):
            return k
    return None


def bp_offset_slice(excess, train_len, threshold=0.1, window=3):
    e = _bp_valid(excess, train_len, threshold, window)[train_len:]
    runs = np.convolve((e > threshold).astype(int), np.ones(window, int), "valid")
    hits = np.flatnonzero(runs == window)
    return int(hits[0]) if hits.size else None


def bp_no_window_loop(excess, train_len, threshold=0.1, window=3):
    e = _bp_valid(excess, train_len, threshold, window)
    for p in range(train_len, len(e)):
        if e[p] > threshold:
            return p
    return None


def bp_no_window_argmax(excess, train_len, threshold=0.1, window=3):
    e = _bp_valid(excess, train_len, threshold, window)
    above = e[train_len:] > threshold
    return int(train_len + np.argmax(above)) if above.any() else None


WRONG = {
    ("next_token_loss", "no maximum subtracted"): (ntl_no_max_loop, ntl_no_max_softmax),
    ("next_token_loss", "the mean over positions instead of one loss per position"): (
        ntl_mean_numpy,
        ntl_mean_sum_over_t,
    ),
    ("next_token_loss", "log base 2"): (ntl_log2_numpy, ntl_log2_probs),
    ("chain_entropy", "pairs weighted equally instead of by pi"): (
        ce_equal_pairs_mean,
        ce_equal_pairs_loop,
    ),
    ("chain_entropy", "h1 as the entropy of the marginal (unconditional)"): (
        ce_marginal_loop,
        ce_marginal_numpy,
    ),
    ("chain_entropy", "pi as the right eigenvector (uniform) instead of the left"): (
        ce_uniform_pi_eigh,
        ce_uniform_pi_ones,
    ),
    ("chain_entropy", "log base 2"): (ce_log2_numpy, ce_log2_divided),
    ("attention_entropy", "nan at zero weights"): (ae_nan_numpy, ae_nan_loop),
    ("attention_entropy", "entropy over keys' columns instead of each query's row"): (
        ae_columns_numpy,
        ae_columns_transpose,
    ),
    ("attention_entropy", "log base 2"): (ae_log2_numpy, ae_log2_loop),
    ("breaking_point", "the first position anywhere (before train_len)"): (
        bp_anywhere_loop,
        bp_anywhere_convolve,
    ),
    ("breaking_point", "the position counted from train_len"): (bp_offset_loop, bp_offset_slice),
    ("breaking_point", "one position above the threshold taken as the break (window ignored)"): (
        bp_no_window_loop,
        bp_no_window_argmax,
    ),
}


def _call(fn, case):
    with np.errstate(all="ignore"):
        return fn(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))


def test_every_catalogued_mistake_of_the_notebook_has_two_wrong_implementations_here():
    catalogued = {(c.name, m.name) for c in C.checks_for("13_train_short") for m in c.mistakes}
    assert catalogued == set(WRONG)


@pytest.mark.parametrize(("key", "impl"), [(k, f) for k, fs in WRONG.items() for f in fs])
def test_each_wrong_implementation_is_named_on_every_case_it_gets_wrong(key, impl):
    name, mistake_name = key
    check = C.CHECKS[name]
    named = 0
    for seed in (7, 8):
        for case in C.cases(check, np.random.default_rng(seed)):
            if case.label.startswith("bad input"):
                continue
            wrong = _call(impl, case)
            if C.agree(check.kind, wrong, C.expected(check, case))[0]:
                continue  # the mistake does not show on this case
            found = C.diagnose(check, case, wrong)
            alike = [
                other
                for (fn, other), impls in WRONG.items()
                if fn == name and other != mistake_name
                for f in impls
                if C.agree(check.kind, wrong, _call(f, case), nan_equal=True)[0]
            ]
            if alike:  # the case cannot tell this mistake from another: none is named
                assert found is None, (impl.__name__, case.label, found, alike)
                continue
            assert found is not None and found.name == mistake_name, (
                impl.__name__,
                case.label,
                found,
            )
            named += 1
    assert named >= 1, f"{impl.__name__} is never wrong on the notebook's cases"


def test_the_spec_numbers_of_the_mistakes():
    """What each mistake does to the numbers the notebook shows (COURSE_SPEC.md)."""
    assert np.isnan(ntl_no_max_softmax([[1000.0, 1000.0]], [0])[0])
    assert ntl_log2_probs([[0.0, 0.0]], [0])[0] == pytest.approx(1.0)
    assert ntl_log2_probs([[1000.0, 0.0]], [1])[0] == pytest.approx(1000 / LN2)
    assert np.isnan(ae_nan_numpy([[1.0, 0.0]])[0])
    shown = np.concatenate([np.zeros(32), [0.05, 0.2, 0.3, 0.3, 0.3]])
    assert bp_offset_loop(shown, 32) == 1
    spike = np.concatenate([np.zeros(32), [0.2, 0.0, 0.3, 0.3, 0.3]])
    assert bp_no_window_loop(spike, 32) == 32 and breaking_point(spike, 32) == 34


def test_right_answers_written_differently_are_never_named():
    """A loop over rows with math.log, written another way, agrees with every case."""

    def ae_loop(weights):
        w = np.asarray(weights, dtype=float)
        if np.any(w < 0) or np.any(np.abs(w.sum(-1) - 1) > 1e-6):
            raise ValueError("bad")
        out = np.zeros(w.shape[:-1])
        for idx in np.ndindex(out.shape):
            out[idx] = -math.fsum(x * math.log(x) for x in w[idx] if x > 0)
        return out

    check = C.CHECKS["attention_entropy"]
    for case in C.cases(check, np.random.default_rng(5)):
        if case.label.startswith("bad input"):
            continue
        assert C.agree(check.kind, _call(ae_loop, case), C.expected(check, case))[0], case.label


def test_a_case_that_cannot_tell_two_mistakes_apart_names_neither():
    """On the sticky V = 2 chain a uniform pi and a marginal h1 give the same three numbers
    (ln 2, ln 2, 0.325083): neither is named there. A sparse V = 3 chain tells them apart."""
    check = C.CHECKS["chain_entropy"]
    sticky, sparse = check.fixed()[0], check.fixed()[2]
    wrong = ce_uniform_pi_eigh(*sticky.args)
    assert np.allclose(wrong, (LN2, LN2, 0.325083), atol=1e-6)
    assert np.allclose(wrong, ce_marginal_loop(*sticky.args))
    assert C.diagnose(check, sticky, wrong) is None
    assert C.diagnose(check, sticky, ce_marginal_numpy(*sticky.args)) is None
    named = C.diagnose(check, sparse, ce_uniform_pi_eigh(*sparse.args))
    assert named is not None and named.name.startswith("pi as the right eigenvector")
    named = C.diagnose(check, sparse, ce_marginal_loop(*sparse.args))
    assert named is not None and named.name.startswith("h1 as the entropy of the marginal")


# --------------------------------------------------------------------------- what a learner reads


def _self_check_text(breaking_point_impl, lang: str | None = None) -> str:
    """The self-check of 13_train_short as the notebook prints it, the other three functions
    right (the course's reference), ``breaking_point`` the learner's."""
    import contextlib
    import io

    from helpers.i18n import speaking
    from helpers.teacher import kernel

    namespace = {
        "next_token_loss": next_token_loss,
        "chain_entropy": chain_entropy,
        "attention_entropy": attention_entropy,
        "breaking_point": breaking_point_impl,
    }
    out = io.StringIO()
    with speaking(lang), contextlib.redirect_stdout(out):
        kernel.self_check("13_train_short", namespace, seed=12345)
    return " ".join(out.getvalue().split())  # long messages wrap under their column


def _runs_from(excess, train_len, threshold) -> list[str]:
    """The runs of positions p >= train_len with excess[p] > threshold, by a plain loop."""
    runs, start = [], None
    values = [float(v) for v in excess] + [-math.inf]
    for p in range(train_len, len(values)):
        if values[p] > threshold and start is None:
            start = p
        elif not values[p] > threshold and start is not None:
            runs.append(str(start) if p - 1 == start else f"{start}-{p - 1}")
            start = None
    return runs


def test_a_random_case_of_breaking_point_names_its_inputs_as_passed():
    """train_len, threshold, window as the call gets them (39, 0.05, 2), T, whether excess is
    a list or an array, and where the excess is above the threshold from train_len on."""
    check = C.CHECKS["breaking_point"]
    kinds = set()
    for case in check.random(np.random.default_rng(3)):
        excess, train_len = case.args
        threshold, window = case.kwargs["threshold"], case.kwargs["window"]
        label = case.label
        for shown in (
            f"train_len = {train_len!r}",
            f"threshold = {threshold!r}",
            f"window = {window!r}",
            f"T = {len(excess)}",
        ):
            assert shown in label, (shown, label)
        kind = "a list of" if isinstance(excess, list) else "an array of"
        kinds.add(kind)
        assert f"excess = {kind} {len(excess)} numbers" in label, label
        runs = _runs_from(excess, train_len, threshold)
        assert runs, "a random case without a run above the threshold"
        assert f"from train_len on: {', '.join(runs[:3])}" in label, (runs[:3], label)
    assert kinds == {"a list of", "an array of"}


def test_a_wrong_breaking_point_reads_its_failing_case_and_integers():
    """A break found one position late, and one that always reads the default threshold: the
    message shows the failing case's inputs and the positions as integers (33, not 33.0)."""

    def late(excess, train_len, threshold=0.1, window=3):
        p = breaking_point(excess, train_len, threshold, window)
        return None if p is None else p + 1

    text = _self_check_text(late)
    want = "breaking_point is wrong on 32 zeros then [0.05, 0.2, 0.3, 0.3, 0.3]: returned 34, "
    assert want + "expected 33 " in text, text

    def default_threshold(excess, train_len, threshold=0.1, window=3):
        if threshold < 0:
            raise ValueError("threshold must be >= 0")
        return breaking_point(excess, train_len, 0.1, window)

    text = _self_check_text(default_threshold)
    found = re.search(
        r"breaking_point is wrong on excess = an? (list|array) of (\d+) numbers \(T = (\d+)\), "
        r"train_len = (\d+), threshold = (0\.\d+), window = (\d+) \(excess > threshold from "
        r"train_len on: ([-\d, ]+)(?: and \d+ more runs)?\): returned (\d+|None), "
        r"expected (\d+|None) Random cases",
        text,
    )
    assert found, text
    n, T, L, threshold, window = (found[i] for i in range(2, 7))
    assert n == T and float(threshold) != 0.1 and int(L) < int(T) and int(window) >= 1
    assert found[8] != found[9]


def test_a_found_break_that_is_a_float_is_said_to_be_one():
    """The right position as a float (33.0): wrong, and the message says a position is an int."""

    def as_float(excess, train_len, threshold=0.1, window=3):
        p = breaking_point(excess, train_len, threshold, window)
        return None if p is None else float(p)

    text = _self_check_text(as_float)
    assert "breaking_point passed" not in text
    assert (
        "returned the float 33.0; a position is an int (an index into the input), expected 33"
        in text
    )
    korean = _self_check_text(as_float, "ko")
    assert "반환값이 실수 33.0입니다. 위치는 int(입력의 인덱스)여야 합니다(기대값 33)" in korean


def test_no_break_where_one_is_shows_the_expected_position_as_an_integer():
    ok, detail = C.agree("position", None, 9)
    assert not ok and detail == "returned None, expected 9", detail
    ok, detail = C.agree("position", np.int64(34), 33)
    assert not ok and detail == "returned 34, expected 33", detail
    assert C.agree("position", np.int64(33), 33)[0]
    assert C.agree("position", None, None)[0]

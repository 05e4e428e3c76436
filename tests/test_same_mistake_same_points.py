"""The same mistake costs the same points for every learner, whatever the course secret.

A learner's random cases come from a seed made with the course's secret (``seeds.derive``).
Each catalogued mistake, in every form written in tests/test_checks_mistake_forms.py (two
forms each, the mirror forms of the layout mistakes included) and in the forms below (the
mistake written in one branch of an ``if`` only), is graded here under several secrets and
learners: the score, and the mistake named, must be the same every time.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.teacher import checks as C
from helpers.teacher import kernel
from helpers.teacher import reference as ref
from helpers.teacher.seeds import derive
from helpers.teacher.verdict import cases_of, witnesses
from tests.test_checks_mistake_forms import FORMS, MUTATION_FORMS

# Four courses' secrets and two learners each: eight seeds per function.
SECRETS = [bytes([k]) * 32 for k in (1, 7, 42, 200)]
LEARNERS = ("ada", "grace")


def _alibi_distance(L):
    i = np.arange(L)
    return i[:, None] - i[None, :]


def bias_row_constant_when_causal(n_heads, seq_len, causal=True):
    """The per-row shortcut (slope * j) written in the causal branch only."""
    if not causal:
        return ref.alibi_bias(n_heads, seq_len, causal=False)
    slopes = ref.alibi_slopes(n_heads)
    dist = _alibi_distance(seq_len)
    j = np.broadcast_to(np.arange(seq_len)[None, :], (seq_len, seq_len))
    return np.where(dist[None] < 0, -np.inf, slopes[:, None, None] * j[None])


def bias_row_constant_when_not_causal(n_heads, seq_len, causal=True):
    """The per-row shortcut (slope * (j - L + 1)) written in the not-causal branch only."""
    if causal:
        return ref.alibi_bias(n_heads, seq_len, causal=True)
    slopes = ref.alibi_slopes(n_heads)
    j = np.arange(seq_len) - (seq_len - 1)
    return np.broadcast_to(slopes[:, None, None] * j[None, None, :], (n_heads, seq_len, seq_len))


def bias_positive_when_causal(n_heads, seq_len, causal=True):
    """+slope * distance in the causal branch only."""
    if not causal:
        return ref.alibi_bias(n_heads, seq_len, causal=False)
    dist = _alibi_distance(seq_len)
    out = ref.alibi_slopes(n_heads)[:, None, None] * np.abs(dist)[None]
    return np.where(dist[None] < 0, -1e9, out)


ONE_BRANCH = {
    ("alibi_bias", "the per-row constant shortcut"): (
        bias_row_constant_when_causal,
        bias_row_constant_when_not_causal,
    ),
    ("alibi_bias", "positive instead of negative bias"): (bias_positive_when_causal,),
}

ALL_FORMS = [
    (function, name, impl)
    for table in (FORMS, MUTATION_FORMS, ONE_BRANCH)
    for (function, name), impls in table.items()
    for impl in impls
]


def _seeds(assignment: str) -> list[int]:
    return [derive(key, "course", who, assignment) for key in SECRETS for who in LEARNERS]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("function", "name", "impl"),
    ALL_FORMS,
    ids=[f"{f}-{n}-{i.__name__}" for f, n, i in ALL_FORMS],
)
def test_a_mistake_scores_the_same_under_every_course_secret(function, name, impl):
    check = C.CHECKS[function]
    seen = {}
    for seed in _seeds(check.assignment):
        with np.errstate(all="ignore"):
            result = kernel.grade_in_namespace(check, {function: impl}, seed, "")
        assert not result.passed, f"{impl.__name__} passed under seed {seed}"
        seen[seed] = (round(result.score * check.points, 6), result.mistake)
    assert len(set(seen.values())) == 1, f"{impl.__name__}: {seen}"
    (_, named), *_ = seen.values()
    assert named == name, f"{impl.__name__} was named {named!r}, not {name!r}"


def test_the_alibi_shortcut_in_one_branch_once_scored_by_luck():
    """The case of the issue: before the witnesses, a seed whose random alibi_bias cases were
    all not causal let the causal-only shortcut pass the random part. Such seeds exist, and
    the witnesses add a causal case there."""
    check = C.CHECKS["alibi_bias"]
    lucky = []
    for seed in range(400):
        cases = cases_of(check, seed)
        drawn = [c for c in cases if c.part == "random"]
        if not any(c.kwargs["causal"] and c.args[1] > 1 for c in drawn[:5]):
            lucky.append(seed)
            assert any(c.kwargs["causal"] and c.args[1] > 1 for c in drawn[5:]), seed
    assert lucky, "no seed of 400 draws only not-causal cases: the test shows nothing"
    result = kernel.grade_in_namespace(
        check, {"alibi_bias": bias_row_constant_when_causal}, lucky[0], ""
    )
    assert result.score * check.points == pytest.approx(0.5)


def test_a_mistake_that_shows_on_bad_input_only_is_never_wrong_on_a_random_case():
    """on_random=False spares the search; it must be true: 30 batches of random cases, all
    right for the wrong implementation."""
    for check in C.CHECKS.values():
        for mistake in check.mistakes:
            if mistake.on_random:
                continue
            rng = np.random.default_rng(0)
            drawn = [c for _ in range(30) for c in check.random(rng)]
            from helpers.teacher.verdict import _goes_wrong, _want

            assert not any(_goes_wrong(check, mistake.impl, c, _want(check, c)) for c in drawn)


def test_witnesses_keep_the_first_random_cases_of_the_seed():
    check = C.CHECKS["alibi_bias"]
    from helpers.teacher.verdict import case_rng

    first = check.random(case_rng(5, "alibi_bias"))
    drawn = [c for c in cases_of(check, 5) if c.part == "random"]
    assert [c.label for c in drawn[: len(first)]] == [c.label for c in first]
    assert witnesses(check, 5, []) != []  # with no case drawn, each mistake gets one

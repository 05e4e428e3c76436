"""The self-check's table (helpers.report) and what a failed assert came back with
(helpers.came_back), on hand-made rows and asserts."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import came_back, report
from helpers.i18n import speaking


def test_a_long_message_wraps_under_its_own_column():
    rows = [
        report.Row("dot", "passed", True, "all 9 checks passed"),
        report.Row(
            "apply_rope",
            "partly",
            False,
            "apply_rope: partly right (" + "word " * 30 + ").",
            where="See Exercise 4: `apply_rope`.",
            details=("apply_rope is wrong on d=64.", "This looks like a known mistake."),
            replay="Random cases from seed 7; replay with: " + "x" * 120,
        ),
        report.Row("DIM", "passed", True, "1 check passed", constant=True),
    ]
    text = report.table(rows)
    lines = text.splitlines()
    column = lines[0].index("message")
    row = next(i for i, line in enumerate(lines) if line.startswith("apply_rope"))
    assert lines[row].index("apply_rope: partly") == column
    more = lines[row + 1 : row + 3]  # two lines more, each starting under the column
    assert all(line[:column].strip() == "" and line[column] != " " for line in more), text
    assert lines[row + 3].startswith("DIM"), text
    assert all(len(line) <= report.WIDTH for line in lines), text
    assert "See Exercise 4: `apply_rope`." in " ".join(text.split())
    assert report.count_line(rows) == (1, 2)  # DIM is not counted among the functions
    details = report.details(rows)
    assert details.splitlines()[0] == "apply_rope:"
    assert "  Random cases from seed 7; replay with: " + "x" * 120 in details  # whole


def test_hangul_counts_two_columns():
    assert report.width("통과") == 4 and report.width("ok") == 2
    assert report.wrap("가나 다라 마바", 5) == ["가나", "다라", "마바"]


def test_functions_with_the_same_details_share_one_block():
    rows = [
        report.Row(n, "FAILED", False, f"{n} is not defined.", details=("cell [3] stopped.",))
        for n in ("a", "b")
    ]
    assert report.details(rows) == "a, b:\n  cell [3] stopped."


def _failed(source: str) -> tuple[AssertionError, dict]:
    namespace = {"np": np}
    with pytest.raises(AssertionError) as info:
        exec(compile(source, "<cell>", "exec"), namespace)  # noqa: S102 - a notebook cell
    return info.value, namespace


def test_what_came_back_shows_the_values_an_assert_compared():
    source = 'r = np.array([1.0, -2.0, 3.0])\nassert np.allclose(r, [1.0, 2.0, 3.0]), "r is off"'
    exc, _ = _failed(source)
    assert came_back.came_back(exc, source) == [
        "What came back:",
        "  r = [1., -2., 3.]",
        "  largest difference 4 at index 1",
    ]


def test_a_nan_or_an_inf_is_reported_as_such_at_its_index():
    """[nan, 0.693147] against [0.5, 0.6931472]: the nan, not the 1e-7 of index 1."""
    source = 'r = np.array([np.nan, 0.693147])\nassert np.allclose(r, [0.5, 0.6931472]), "r is off"'
    exc, _ = _failed(source)
    said = came_back.came_back(exc, source)
    assert said[-1] == "  nan at index 0, where the other side has 0.5", said
    source = 'r = np.array([1.0, -np.inf])\nassert np.allclose(r, [1.0, 3.0]), "r is off"'
    exc, _ = _failed(source)
    assert came_back.came_back(exc, source)[-1] == "  -inf at index 1, where the other side has 3"


def test_what_came_back_takes_the_false_term_and_the_sides_of_a_difference():
    source = 's = 2.5\nassert s > 0 and abs(s - 1.5) < 1e-9, "s should be 1.5"'
    exc, _ = _failed(source)
    assert came_back.came_back(exc, source) == ["What came back:", "  s = 2.5"]
    with speaking("ko"):
        assert came_back.came_back(exc, source)[0] == "돌아온 값:"


def test_what_came_back_leaves_out_random_draws():
    source = 'rng = np.random.default_rng(0)\nassert rng.normal() > 10, "a large draw"'
    exc, _ = _failed(source)
    assert came_back.came_back(exc, source) == []


def test_a_callee_is_named_only_when_it_is_wrong_now_on_the_test_s_values():
    """The note is decided when it is shown: the judge runs the callee on the calls the test
    made; a callee right on them (whatever its own test said before) is not named."""
    asked = []

    def judge(callee, calls):
        asked.append((callee, [args for _, args, _ in calls]))
        return (
            "apply_rope is wrong on the values this test gave it: off"
            if callee == "apply_rope"
            else None
        )

    recorded = {"_helper": [(None, (1,), {})], "apply_rope": [(None, (2,), {})], "unused": []}
    lines = came_back.callee_first("rope_score", recorded, judge)
    assert lines == [
        (
            "rope_score calls your apply_rope, which is wrong now: apply_rope is wrong on the values "
            "this test gave it: off. Fix apply_rope, then run this test again; rope_score itself "
            "may well be right."
        )
    ]
    assert asked == [("_helper", [(1,)]), ("apply_rope", [(2,)])]  # a callee never called: not
    assert came_back.callee_first("rope_score", recorded, None) == []
    assert came_back.callee_first("rope_score", {"_helper": [(None, (1,), {})]}, judge) == []


def test_the_html_table_is_left_aligned_and_keeps_a_formula_on_one_line():
    """JupyterLab right-aligns table cells unless each cell says otherwise; a formula in a
    message (``exp(z - max(z))``) is not broken at its spaces."""
    import re

    row = report.Row(
        "softmax",
        "FAILED",
        False,
        "wrong on x: no maximum subtracted (compute exp(z - max(z)) / sum(exp(z - max(z))))",
        details=("the stable form (exp(z - max(z))) keeps every term at most 1",),
    )
    page = report.html("self-check", [row])
    cells = re.findall(r"<td style=\"([^\"]*)\"", page)
    assert cells and all("text-align: left" in style for style in cells), cells
    assert "exp(z&nbsp;-&nbsp;max(z))&nbsp;/&nbsp;sum(exp(z&nbsp;-&nbsp;max(z)))" in page, page
    assert "(exp(z&nbsp;-&nbsp;max(z)))" in page
    assert "no maximum subtracted (compute" in page  # prose still breaks at its spaces


def test_the_named_mistake_is_the_first_line_the_learner_reads():
    """ "wrong on [1000, 0]: got inf" says less than the mistake it matches: the mistake comes
    first, the case after it, in both languages."""
    from helpers.i18n import tr
    from helpers.teacher.verdict import FunctionResult, row_of

    for lang in ("en", "ko"):
        with speaking(lang):
            named = tr(
                "This looks like a known mistake ({mistake}): {message}",
                mistake=tr("no maximum subtracted"),
                message="exp(z) overflows",
            )
            message = f"wrong on x = [1000, 0]: got inf, expected 1\n{named}"
            row = row_of(FunctionResult("softmax", False, message))
            assert row.summary == named, (lang, row)
            assert row.details[0] == "wrong on x = [1000, 0]: got inf, expected 1"
    assert report.mistake_first("wrong", ["a detail"]) == ("wrong", ["a detail"])

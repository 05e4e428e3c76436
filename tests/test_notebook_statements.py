"""Statements of the teaching text that compare, bound or count are the ones their cells measure.

Where a sentence says "ten times worse", "one step short of the edge", "no larger than the slow
pairs" or "six families", the test reads the number or the rows it rests on from the executed
source notebook (the cache of ``tests/test_notebook_claims.py``: each notebook runs once per
session) and checks the statement against them. Expected values are written out from the
mathematics they state (a float64 unit in the last place, 1/(i + 1), (sL - 1)/(sL)), from
Hugging Face's recorded rope types, or from the sentences themselves, never from the code
under test.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from tests.test_notebook_claims import cells, says_what_it_printed

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow

NUMBER = r"(-?\d*\.?\d+(?:\s*\\cdot\s*10\^\{-?\d+\}|e[-+]?\d+)?)"

# (notebook, Markdown cell, pattern in it, code cell, pattern in its output): one group each.
STATEMENTS = [
    # 02: the log form is ten times worse in float16 at base 1e4
    (
        "02_sincos",
        "logspace-outro",
        r"worse than the power form \(\$" + NUMBER,
        "logspace-measure",
        r"float16     1e\+04\s+\S+\s+" + NUMBER,
    ),
    (
        "02_sincos",
        "logspace-outro",
        r"against\s+\$" + NUMBER + r"\$\), because",
        "logspace-measure",
        r"float16     1e\+04\s+" + NUMBER,
    ),
    # 06: which pairs swing over 64 neighbouring distances
    (
        "06_rope",
        "survive-md",
        r"from pairs 0 to 15 \(" + NUMBER + " at 4096",
        "survive-table",
        r"\n  4096(?:\s+\S+){5}\s+" + NUMBER,
    ),
    (
        "06_rope",
        "survive-md",
        r"together they vary by " + NUMBER,
        "survive-table",
        r"\n  4096(?:\s+\S+){6}\s+" + NUMBER,
    ),
    (
        "06_rope",
        "survive-md",
        r"vary by " + NUMBER + r", \S+ and \S+ the size",
        "survive-table",
        r"20: " + NUMBER,
    ),
    (
        "06_rope",
        "survive-md",
        r"vary by \S+ " + NUMBER + r" and \S+ the size",
        "survive-table",
        r"21: " + NUMBER,
    ),
    (
        "06_rope",
        "survive-md",
        r"vary by \S+ \S+ and " + NUMBER + ", the size",
        "survive-table",
        r"22: " + NUMBER,
    ),
    ("06_rope", "survive-md", r"31 \(" + NUMBER + ",", "survive-table", r"23: " + NUMBER),
    ("06_rope", "survive-md", r"31 \(\S+ " + NUMBER + ",", "survive-table", r"24: " + NUMBER),
    ("06_rope", "survive-md", r"31 \(\S+ \S+ " + NUMBER + r"\)", "survive-table", r"31: " + NUMBER),
    # 07: what is new at a longer length
    (
        "07_alibi",
        "extrapolation",
        r"down to\s+\$" + NUMBER + r"\$ at 1024",
        "extrapolation-code",
        r"\(training\), " + NUMBER,
    ),
    (
        "07_alibi",
        "extrapolation",
        r"never took it below \$" + NUMBER,
        "extrapolation-code",
        r"most negative bias " + NUMBER,
    ),
    (
        "07_alibi",
        "recap",
        r"to \$" + NUMBER + r"\$ at 1024",
        "extrapolation-code",
        r"\(training\), " + NUMBER,
    ),
    (
        "07_alibi",
        "recap",
        r"against \$" + NUMBER,
        "extrapolation-code",
        r"most negative bias " + NUMBER,
    ),
    # 09: NoPE's position signal past the training length
    (
        "09_families",
        "families-read-md",
        r"1/512 \\approx " + NUMBER,
        "count",
        r"smallest output seen is " + NUMBER,
    ),
    (
        "09_families",
        "families-read-md",
        r"position 1000 gives \$" + NUMBER,
        "count",
        r"position 1000 outputs " + NUMBER,
    ),
    # 10: the margin of unseen_angle_pairs, and dynamic NTK inside a long text
    (
        "10_long_context",
        "unseen-md",
        r"edge is " + NUMBER + " at factor 2",
        "table",
        r"L theta_i from " + NUMBER,
    ),
    (
        "10_long_context",
        "unseen-md",
        r"and " + NUMBER + " at factor 32",
        "table",
        r"L theta_i from \S+ to " + NUMBER,
    ),
    (
        "10_long_context",
        "score-read-md",
        r"Dynamic NTK's " + NUMBER,
        "score",
        r"\ndynamic NTK +" + NUMBER,
    ),
    (
        "10_long_context",
        "score-read-md",
        r"changes nothing \(" + NUMBER,
        "score",
        r"tokens: \|change\| at 0\.\.63 = " + NUMBER,
    ),
]


@pytest.mark.parametrize(
    ("nb_id", "md_id", "md_pattern", "code_id", "out_pattern"),
    STATEMENTS,
    ids=[f"{s[0]}:{s[1]}:{i}" for i, s in enumerate(STATEMENTS)],
)
def test_statement_number_is_the_printed_number(
    nb_id, md_id, md_pattern, code_id, out_pattern, tmp_path_factory
):
    says_what_it_printed(nb_id, md_id, md_pattern, code_id, out_pattern, tmp_path_factory)


# ----------------------------------------------------------------------------- 01_order


def _tokens(sentence: str) -> list[str]:
    return sorted(sentence.lower().split())


def test_01_order_pair_has_the_same_tokens_and_the_articles_pair_does_not(tmp_path_factory):
    """The demo pair holds the same tokens; the Korean pair, named as not showing it, does not."""
    found = cells("01_order", tmp_path_factory)
    text = found["rice-intro"]
    assert "*the dog bit the boy* and *the boy bit the dog*" in text, text
    assert _tokens("the dog bit the boy") == _tokens("the boy bit the dog")
    assert _tokens("나는 밥을 먹었다") != _tokens("밥은 나를 먹었다"), "the particles differ"
    assert "does not show it" in text and "나를 밥은 먹었다" in text
    diffs = re.findall(r"max \|difference\| = (\S+)", found["rice-measure"])
    assert len(diffs) == 4, found["rice-measure"]  # their size: tests/round_off.py


# ----------------------------------------------------------------------------- 02_sincos


def test_02_log_form_is_about_ten_times_worse_in_float16(tmp_path_factory):
    out = cells("02_sincos", tmp_path_factory)["logspace-measure"]
    power, log = (float(v) for v in re.search(r"float16     1e\+04\s+(\S+)\s+(\S+)", out).groups())
    assert 5 < log / power < 20, (power, log)
    assert "about ten times worse" in cells("02_sincos", tmp_path_factory)["logspace-outro"]


def test_02_concat_count_agrees_with_the_sentence(tmp_path_factory):
    """The sentence: with a 2d stream every matrix grows, 4 (2d)^2 and four times the FFN."""
    found = cells("02_sincos", tmp_path_factory)
    text, out = found["concat"], found["concat-measure"]
    assert "$W_o$ and the feed-forward layers too" in text and r"$4\,(2d)^2$" in text
    for d in (64, 512):
        row = re.search(
            rf"d = {d:3d}: attention weights per layer\s+([\d,]+) \(add\) vs\s+([\d,]+) "
            r"\(concat, 2d input\) vs\s+([\d,]+) \(concat, 2d stream\)\n"
            r"\s+feed-forward weights per layer\s+([\d,]+) \(add\) vs\s+([\d,]+)",
            out,
        )
        assert row, out
        add, concat_input, stream, ffn, ffn_stream = (int(v.replace(",", "")) for v in row.groups())
        assert add == 4 * d * d and concat_input == 3 * 2 * d * d + d * d
        assert stream == 4 * (2 * d) ** 2 == 4 * add
        assert ffn == 8 * d * d and ffn_stream == 4 * ffn


# ----------------------------------------------------------------------------- 06_rope


def test_06_norm_gap_is_a_few_units_in_the_last_place(tmp_path_factory):
    """One vector at a time the gap is a few units in the last place of 5.69 at most (an ulp is
    2**-50); the batch's rows add in another order, and its gap may differ, at pos 0 too. Which
    units depend on the BLAS kernel, so only the order is checked (here and tests/round_off.py)."""
    found = cells("06_rope", tmp_path_factory)
    out = found["norm-check"]
    for label in (r"norm_max_gap = ", r"one batch: largest change ", r"at pos 0 "):
        gap = float(re.search(label + r"(\S+)", out).group(1).rstrip(","))
        assert 0 <= gap <= 8 * math.ulp(5.69), (label, gap)
    assert "gap can change, at pos 0 too" in found["norm-md"]


def test_06_cache_scores_agree_to_rounding_not_exactly(tmp_path_factory):
    found = cells("06_rope", tmp_path_factory)  # the difference's order: tests/round_off.py
    assert "to rounding\n(below $10^{-14}$" in found["cache-md"]
    assert "exactly" not in found["cache-md"]


def test_10_fast_pair_angles_are_within_half_a_step(tmp_path_factory):
    found = cells("10_long_context", tmp_path_factory)
    gap = float(
        re.search(r"fast pairs: largest gap (\S+) of their own step", found["why-slow"]).group(1)
    )
    assert gap <= 0.5, gap
    assert "lies within half a step of one it met in training" in found["why-slow-md"]


def test_06_report_table_comes_after_the_section_it_cites(tmp_path_factory):
    found = cells("06_rope", tmp_path_factory)
    order = list(found)
    assert "section 5" in found["summary"]
    assert order.index("summary") > order.index("model-md"), "the table cites section 5"
    assert order.index("summary") > order.index("cache-code")


def test_06_wrapped_pairs_vary_no_more_than_the_slow_part(tmp_path_factory):
    out = cells("06_rope", tmp_path_factory)["survive-table"]
    row = re.search(r"\n  4096((?:\s+\S+){7})", out).group(1).split()
    slow_std, fast_std, first16_std, wrapped_std = (float(row[i]) for i in (2, 4, 5, 6))
    assert wrapped_std <= slow_std < first16_std, row
    assert first16_std > 0.9 * fast_std, "the fast part's swing is that of pairs 0..15"
    per_pair = {
        int(i): float(v) for i, v in re.findall(r"(\d+): (\d\.\d+)", out.split("delta 4096:")[1])
    }
    assert max(per_pair[i] for i in (20, 21, 22)) <= max(per_pair[i] for i in (23, 24, 31)) * 2.5


# ----------------------------------------------------------------------------- 07_alibi


def _slopes_inverse(out: str, n: int) -> list[float]:
    block = re.search(rf"{n:2d} heads, 1/slope: \[([^\]]*)\]", out).group(1)
    return [float(v) for v in block.split()]


def test_07_first_filler_slope_is_steeper_than_all(tmp_path_factory):
    """6 heads: 1/2 before 1/4..1/256; 12 heads: 2**-0.5 before 1/2..1/256; the rest between."""
    found = cells("07_alibi", tmp_path_factory)
    text, out = found["slopes-rule"], found["slopes-table-code"]
    assert "steeper than every slope already taken" in text
    for n, p, first in ((6, 4, 2.0), (12, 8, 2**0.5)):
        inverse = _slopes_inverse(out, n)
        taken, fillers = inverse[:p], inverse[p:]
        assert math.isclose(fillers[0], first, abs_tol=0.005) and fillers[0] < min(taken), inverse
        assert all(min(taken) < f < max(taken) for f in fillers[1:]), inverse


def test_07_longer_length_brings_new_biases(tmp_path_factory):
    """Training at 256 stops at -255/256; at 1024 head 8 reaches -1023/256; its far share > 0.3."""
    found = cells("07_alibi", tmp_path_factory)
    out = found["extrapolation-code"]
    low_train, low_test = (
        float(v) for v in re.search(r"bias (\S+) at L = 256 \(training\), (\S+)", out).groups()
    )
    assert math.isclose(low_train, -255 / 256, abs_tol=5e-4)
    assert math.isclose(low_test, -1023 / 256, abs_tol=5e-4)
    shares = [float(v) for v in re.search(r"per head:\n \[([^\]]*)\]", out).group(1).split()]
    assert shares[7] > 0.3, shares
    for md in ("intro-title", "extrapolation", "recap"):
        assert "nothing unseen" not in found[md] and "nothing new" not in found[md], md


# ----------------------------------------------------------------------------- 08 and 09


def _table_rows(markdown: str) -> int:
    lines = [ln for ln in markdown.splitlines() if ln.startswith("| ")]
    return len(lines) - 2  # the header and the | --- | line


def test_08_and_09_count_their_families(tmp_path_factory):
    course_map = cells("08_offsets", tmp_path_factory)["course-map"]
    assert course_map.startswith("## The course in one table\n\nSix families")
    assert _table_rows(course_map) == 6
    found = cells("09_families", tmp_path_factory)
    assert "seven families" in found["families-md"]
    rows = found["families"].strip().splitlines()[1:]
    assert len(rows) == 7, rows


def test_08_and_09_shaw_clip_is_not_the_key(tmp_path_factory):
    for nb_id, md in (("08_offsets", "course-map"), ("09_families", "shaw-md")):
        text = cells(nb_id, tmp_path_factory)[md]
        assert "-k, k" not in text and r"-k,\, k" not in text, (nb_id, md)
        assert "r_{\\max}" in text, (nb_id, md)


def test_08_norm_measured_as_in_06(tmp_path_factory):
    out = cells("08_offsets", tmp_path_factory)["norms-code"]
    gap = float(re.search(r"after RoPE: .* largest change (\S+)", out).group(1))
    assert 0 <= gap <= 8 * math.ulp(5.69), out  # a few units in the last place of 5.69
    assert "as notebook 06 does" in cells("08_offsets", tmp_path_factory)["norms"]


def test_09_last_bucket_starts_from_the_floor_not_the_cap(tmp_path_factory):
    """T5's formula before the cap: 8 + floor(ln(r/8) / ln(16) * 8); 15 from 91 to 127, 16 at 128."""
    found = cells("09_families", tmp_path_factory)
    printed = re.search(
        r"before the cap \(bucket within the half\): (\{.*\})", found["bucket-picture"]
    )
    uncapped = {int(k): int(v) for k, v in re.findall(r"(\d+): (\d+)", printed.group(1))}
    for r in (90, 91, 127, 128, 5000):
        assert uncapped[r] == 8 + math.floor(math.log(r / 8) / math.log(16) * 8), r
    assert uncapped[90] == 14 and uncapped[91] == uncapped[127] == 15 and uncapped[128] == 16
    text = found["bucket-picture-md"]
    assert "from 91 to 127" in text and "comes\nbefore `max_distance`" not in text


def test_09_nope_signal_runs_below_anything_seen(tmp_path_factory):
    out = cells("09_families", tmp_path_factory)["count"]
    seen, past = (
        float(v) for v in re.search(r"seen is (\S+); position 1000 outputs (\S+)", out).groups()
    )
    assert math.isclose(seen, 1 / 512, abs_tol=5e-6) and math.isclose(past, 1 / 1001, abs_tol=5e-6)
    assert past < seen
    text = cells("09_families", tmp_path_factory)["families-read-md"]
    assert "nothing position-specific" not in text


# ----------------------------------------------------------------------------- 10_long_context


def test_10_interpolation_stays_one_step_short_of_the_edge(tmp_path_factory):
    """(sL - 1) / (sL) at L = 4096: 0.999878 at s = 2, 0.999992 at s = 32; margin changes nothing."""
    out = cells("10_long_context", tmp_path_factory)["table"]
    low, high = (float(v) for v in re.search(r"L theta_i from (\S+) to (\S+)", out).groups())
    assert low == round((2 * 4096 - 1) / (2 * 4096), 6) and high == round(1 - 1 / (32 * 4096), 6)
    assert "the same counts without the 1e-12 margin: True" in out


def test_10_title_names_the_rope_types_transformers_has():
    """The four rope types the title names are the stretching ones recorded from Hugging Face
    (transformers 5.24, bench/record_transformers.py); static NTK-aware is not among them."""
    recorded = json.loads((ROOT / "tests" / "data" / "transformers_rope_t5.json").read_text())
    types = {c["rope_type"] for c in recorded["rope"]} - {"default"}
    assert types == {"linear", "dynamic", "yarn", "llama3"}, types
    nb = json.loads((ROOT / "source" / "10_long_context" / "10_long_context.ipynb").read_text())
    title = "".join(next(c for c in nb["cells"] if c["id"] == "title")["source"])
    for t in types:
        assert f"`{t}`" in title, t
    assert "static NTK-aware scaling has no rope\ntype there" in title


def test_10_citations_name_their_sources():
    nb = json.loads((ROOT / "source" / "10_long_context" / "10_long_context.ipynb").read_text())
    text = {c["id"]: "".join(c["source"]) for c in nb["cells"]}
    assert "`apply_scaling`" in text["llama3-md"] and "`llama-models`" in text["llama3-md"]
    assert "*The Llama 3 Herd of Models*; Hugging Face" not in text["llama3-md"]
    assert "meta-llama/llama-models" in text["sources"]
    assert "without any fine-tuning" in text["sources"]
    assert '"without any\nfine-tuning" (the title of bloc97\'s post)' in text["score-read-md"]
    assert "The methods need fine-tuning" not in text["score-read-md"]


def test_07_only_the_flattest_head_puts_a_third_far_back(tmp_path_factory):
    """The text names head 8 (0.35) and head 7 (0.13), the shares the cell prints."""
    found = cells("07_alibi", tmp_path_factory)
    shares = [
        float(v)
        for v in re.search(r"per head:\n \[([^\]]*)\]", found["extrapolation-code"])
        .group(1)
        .split()
    ]
    assert "the flat heads put a third" not in found["extrapolation"]
    assert "head 8, the flattest, puts a third of its weight (0.35; head 7 puts 0.13)" in " ".join(
        found["extrapolation"].split()
    )
    assert round(shares[7], 2) == 0.35 and round(shares[6], 2) == 0.13, shares
    assert 0.3 < shares[7] < 0.37 and shares[6] < 0.2  # a third for head 8 only


def test_06_points_to_the_section_of_08_it_means():
    """06 sends the reader to 08's section "What survives at long distances", which exists;
    08 never says "aliasing", so 06 does not call it that."""
    import nbformat

    def text(nb_id):
        nb = nbformat.read(ROOT / "source" / nb_id / f"{nb_id}.ipynb", as_version=4)
        return {c.get("id"): c.source for c in nb.cells}

    six, eight = text("06_rope"), text("08_offsets")
    assert '(notebook 08, "What survives at long distances")' in " ".join(six["survive-md"].split())
    assert any(s.startswith("## What survives at long distances") for s in eight.values())
    assert not any("aliasing" in s.lower() for s in eight.values())

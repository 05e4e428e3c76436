"""The numbers the prose of 09_families and 10_long_context quotes are the ones their cells print.

Each notebook is executed once for the test run (``tests.claims_kit.executed_notebook``, as
tests/test_notebooks.py runs it). A claim names a Markdown cell and the text it must hold, and the code
cell whose printed output must hold the measurement. The expected numbers are written out
here from COURSE_SPEC.md and the positional-encoding article (16,384 parameters; unseen
pairs 18, 17 and 0), not taken from the code under test.
"""

from __future__ import annotations

import re

import pytest

from tests.claims_kit import executed, holds

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def families(tmp_path_factory):
    return executed("09_families", tmp_path_factory)


@pytest.fixture(scope="module")
def long_context(tmp_path_factory):
    return executed("10_long_context", tmp_path_factory)


# (Markdown cell, pattern in it, code cell, pattern in its output)
FAMILIES_CLAIMS = [
    ("learned-md", r"16\{,\}384", "learned-table", r"16,384 learned numbers"),
    ("hard-end-md", r"stops at row 511", "hard-end", r"ValueError: .*max_len=512"),
    ("bucket-picture-md", r"from 91 tokens on", "bucket-picture", r"31: 91\.\.300"),
    ("bucket-picture-md", r"Bucket 16 stays empty", "bucket-picture", r"16: none"),
    ("bucket-picture-md", r"starts 113 tokens back", "bucket-picture", r"31: -300\.\.-113"),
    ("bias-measure-md", r"113 tokens back", "bias-measure", r"113 and 299 .*: True"),
    (
        "bias-measure-md",
        r"112 and 113 tokens back still differ",
        "bias-measure",
        r"some head: False",
    ),
    ("t5-bias-md", r"= 256 numbers", "bias-measure", r"from 256 learned numbers"),
    ("shaw-clip-md", r"9 \\times 32 = 288", "shaw-clip", r"288 = \(2 \* 4 \+ 1\) \* 32"),
    # nope-md's gap is round-off, checked against a bound: tests/round_off.py
    ("count-md", r"i = 1/\\text\{out\} - 1", "count", r"read back: \[0 1 2 3 4 5 6 7 8 9\]"),
]


@pytest.mark.parametrize(("md", "said", "cell", "printed"), FAMILIES_CLAIMS)
def test_families_prose_matches_its_cells(families, md, said, cell, printed):
    text, out = families
    assert holds(text[md], said), f"{md} no longer says {said!r}"
    assert holds(out[cell], printed), f"{cell} printed:\n{out[cell]}"


def test_families_table_has_every_family_measured(families):
    _, out = families
    table = out["families"]
    for row in (
        r"learned absolute .*16,384 .*ValueError",
        r"Shaw et al\. relative .*288 .*True",
        r"T5 bias .*256 .*share bucket 31: True",
        r"NoPE, causal mask .*gap 0\.\d+",
    ):
        assert holds(table, row), f"missing {row!r} in:\n{table}"
    gap = float(re.search(r"smallest gap (\d\.\d+)", out["leak"]).group(1))
    assert gap > 0.1, "causal attention must not be permutation-equivariant"


LONG_CLAIMS = [
    ("seen-md", r"L = 4096", "seen", r"18 slow pairs \(pairs 46\.\.63\)"),
    ("why-slow-md", r"Pair 0 turns 652 times", "seen", r"\n    0 .* 651\.739"),
    ("why-slow-md", r"Pair 63 saw only 0\.075 of a turn", "seen", r"\n   63 .* 0\.075"),
    ("why-slow-md", r"reaches 2\.4 turns", "seen", r"\n   63 .* 2\.409\n"),
    ("why-slow-md", r"at\s+most half a step", "why-slow", r"fast pairs: largest gap 0\.50 "),
    ("pi-cost-md", r"0\.03 radian", "pi-cost", r"\n     32 +0\.0312"),
    ("dynamic-md", r"8 - 7 = 57", "dynamic-measure", r"32768 +57 +57\.00"),
    ("dynamic-measure-md", r"9 at twice", "dynamic-measure", r"8192 +9 +9\.00"),
    ("yarn-measure-md", r"pairs up to 20 keep", "yarn-measure", r"kept: pairs 0\.\.20"),
    ("yarn-measure-md", r"exactly the 18 slow pairs", "yarn-measure", r"are the slow pairs: True"),
    ("score-md", r"9 slow pairs", "score", r"d = 64: 9 slow pairs"),
    ("score-read-md", r"about \$-4\.3\$", "score", r"plain RoPE .* -4\.3\d"),
    ("score-read-md", r"below \$0\.20\$", "score", r"training \(0 \.\. 4095\): 0\.20"),
    ("score-read-md", r"69 %", "score", r"plain RoPE .* 69\.\d%"),
    ("score-read-md", r"a tenth", "score", r"NTK-aware .* 10\.\d%"),
    ("score-read-md", r"by up to 10", "score", r"position interpolation +10\.\d+"),
    ("score-read-md", r"YaRN by 0\.8", "score", r"YaRN +0\.8\d+"),
    ("score-read-md", r"Llama 3 by 0\.1", "score", r"Llama 3 +0\.1\d+"),
]


@pytest.mark.parametrize(("md", "said", "cell", "printed"), LONG_CLAIMS)
def test_long_context_prose_matches_its_cells(long_context, md, said, cell, printed):
    text, out = long_context
    assert holds(text[md], said), f"{md} no longer says {said!r}"
    assert holds(out[cell], printed), f"{cell} printed:\n{out[cell]}"


def test_unseen_table_is_the_specs(long_context):
    """COURSE_SPEC.md: plain 18, NTK-aware 17, PI / dynamic / YaRN / Llama 3 0, factors 2..32."""
    _, out = long_context
    want = {
        "plain RoPE": 18,
        "position interpolation": 0,
        "NTK-aware": 17,
        "dynamic NTK": 0,
        "YaRN": 0,
        "Llama 3": 0,
    }
    for method, count in want.items():
        row = re.search(re.escape(method) + r" +((?:\d+ +){4}\d+)\n", out["table"])
        assert row, f"no row for {method} in:\n{out['table']}"
        assert [int(v) for v in row.group(1).split()] == [count] * 5, method

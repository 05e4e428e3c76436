"""The numbers the notebooks' prose quotes are the numbers their cells print.

Each source notebook is executed once for the test run (``tests.claims_kit.executed_notebook``,
shared with tests/test_notebooks.py's execution test). A claim names a Markdown cell, a
pattern that finds a number in it, the code cell that measures it and a pattern that finds
the printed number (round-off is not among them: its order is checked against a bound,
``tests.round_off``).
The two agree when they differ by no more than their printed precision: "1.79" in the text
and "1.793312" printed agree, "1.8" and "1.66" do not. A few claims are ranges or sums and
are checked by a function instead.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from tests.claims_kit import executed, executed_notebook
from tests.round_off import ROUND_OFF, check_bound

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow

# (notebook, Markdown cell id, pattern in the Markdown, code cell id, pattern in its output);
# each pattern has one group: the number, as written.
NUMBER = r"(-?[\d,{}]*\.?\d+(?:\s*\\cdot\s*10\^\{-?\d+\}|e[-+]?\d+)?)"
CLAIMS = [
    ("01_order", "softmax-intro", r"\\approx " + NUMBER, "softmax-overflow", r"its log: " + NUMBER),
    (
        "01_order",
        "positions-intro",
        r"\*\*" + NUMBER + r"\*\*",
        "same-word",
        r"after positions:  max \|x\(0\) - x\(3\)\| = " + NUMBER,
    ),
    (
        "01_order",
        "summary",
        r"clearly positive \(" + NUMBER,
        "trap-measure",
        r"\(right\):  gap = " + NUMBER,
    ),
    (
        "02_sincos",
        "wavelengths-intro",
        r"lists " + NUMBER + " tokens",
        "wavelengths-measure",
        r"wavelength\s+" + NUMBER,
    ),
    (
        "02_sincos",
        "wavelengths-intro",
        r"and " + NUMBER + " tokens",
        "wavelengths-measure",
        r"i=1: rate \S+  ->  wavelength\s+" + NUMBER,
    ),
    (
        "02_sincos",
        "summary",
        r"instead of " + NUMBER + "%",
        "scale-measure",
        r"\n  64 .*?" + NUMBER + r"% /",
    ),
    (
        "02_sincos",
        "clock",
        r"\(\$" + NUMBER + r"\$ at \$d = 512\$",
        "wavelengths-measure",
        r"the last pair turns " + NUMBER,
    ),
    (
        "03_norm",
        "distinct-seed-intro",
        r"measured \$" + NUMBER,
        "distinct-table",
        r"1e\+04\s+" + NUMBER,
    ),
    (
        "03_norm",
        "ratio-measure-intro",
        r"between " + NUMBER,
        "ratio-measure",
        r"d=  16: .*with sqrt\(d\) " + NUMBER,
    ),
    (
        "03_norm",
        "ratio-std1-intro",
        r"about " + NUMBER + r" at \$d = 512\$",
        "ratio-std1",
        r"with sqrt\(d\) " + NUMBER,
    ),
    (
        "04_decay",
        "distance-link",
        r"= " + NUMBER + r"\$ apart",
        "distance-link-measure",
        r"sqrt\(32 - 2 \* \S+\) = " + NUMBER,
    ),
    (
        "04_decay",
        "rebound-full-intro",
        r"from " + NUMBER + " to",
        "rebound-full",
        r"dot :(?:\s+\S+){4}\s+" + NUMBER,
    ),
    (
        "04_decay",
        "rebound-full-intro",
        r"to " + NUMBER + r"\)",
        "rebound-full",
        r"dot :(?:\s+\S+){5}\s+" + NUMBER,
    ),
    (
        "04_decay",
        "profile-far-intro",
        r"up to \$k = " + NUMBER + r"\$ and",
        "profile-far",
        r"d=128: above zero up to k=" + NUMBER,
    ),
    (
        "04_decay",
        "profile-far-intro",
        r"one up to \$k = " + NUMBER,
        "profile-far",
        r"d=512: above zero up to k=" + NUMBER,
    ),
    (
        "04_decay",
        "profile-far-intro",
        r"to \$" + NUMBER + r"\$ \(\$d = 128",
        "profile-far",
        r"d=128: .*smallest " + NUMBER,
    ),
    (
        "04_decay",
        "profile-far-intro",
        r"d = 128\$, at \$k = " + NUMBER,
        "profile-far",
        r"d=128: .*smallest \S+ at k=" + NUMBER,
    ),
    (
        "04_decay",
        "profile-far-intro",
        r"and \$" + NUMBER + r"\$ \(\$d = 512",
        "profile-far",
        r"d=512: .*smallest " + NUMBER,
    ),
    (
        "04_decay",
        "profile-far-intro",
        r"d = 512\$, at\s+\$k = " + NUMBER,
        "profile-far",
        r"d=512: .*smallest \S+ at k=" + NUMBER,
    ),
    (
        "04_decay",
        "rope-measure-intro",
        r"to " + NUMBER + r" at\s+\$r = 250",
        "rope-measure",
        r"bound :(?:\s+\S+){4}\s+" + NUMBER,
    ),
    (
        "04_decay",
        "rope-measure-intro",
        r"first rise at \$r = " + NUMBER,
        "rope-measure",
        r"first rebound: " + NUMBER,
    ),
    (
        "04_decay",
        "bound-vs-scores-intro",
        r"from " + NUMBER + r" at \$r = 0",
        "bound-vs-scores",
        r"k close to q       mean :\s+" + NUMBER,
    ),
    (
        "04_decay",
        "bound-vs-scores-intro",
        r"to " + NUMBER + r" at \$r = 250",
        "bound-vs-scores",
        r"k close to q       mean :(?:\s+\S+){4}\s+" + NUMBER,
    ),
    (
        "06_rope",
        "score-md",
        r"scores " + NUMBER + " at every start",
        "score-table",
        r"start 4000: " + NUMBER,
    ),
    (
        "06_rope",
        "survive-md",
        r"slow pairs vary by " + NUMBER,
        "survive-table",
        r"\n  4096(?:\s+\S+){2}\s+" + NUMBER,
    ),
    (
        "06_rope",
        "survive-md",
        r"swing by " + NUMBER,
        "survive-table",
        r"\n  4096(?:\s+\S+){4}\s+" + NUMBER,
    ),
    (
        "06_rope",
        "survive-md",
        r"varies by " + NUMBER + " and",
        "survive-table",
        r"\n   256(?:\s+\S+){2}\s+" + NUMBER,
    ),
    (
        "06_rope",
        "survive-md",
        r"varies by \S+ and " + NUMBER,
        "survive-table",
        r"\n  1024(?:\s+\S+){2}\s+" + NUMBER,
    ),
    (
        "06_rope",
        "survive-md",
        r"against\s+" + NUMBER + " and",
        "survive-table",
        r"\n   256(?:\s+\S+){4}\s+" + NUMBER,
    ),
    (
        "06_rope",
        "survive-md",
        r"against\s+\S+ and " + NUMBER,
        "survive-table",
        r"\n  1024(?:\s+\S+){4}\s+" + NUMBER,
    ),
    (
        "07_alibi",
        "paper-code-read",
        r"by " + NUMBER + ": it is",
        "paper-code-measure",
        r"symmetric case, largest difference of the weights: " + NUMBER,
    ),
    (
        "07_alibi",
        "local-heads",
        r"head 1 looks " + NUMBER,
        "local-heads-code",
        r"\n   1  1/2\s+" + NUMBER,
    ),
    (
        "07_alibi",
        "local-heads",
        r"head 8 looks " + NUMBER,
        "local-heads-code",
        r"\n   8  1/256\s+" + NUMBER,
    ),
    (
        "07_alibi",
        "local-heads",
        r"\(" + NUMBER + " and",
        "local-heads-code",
        r"\n   1  1/2\s+\S+\s+" + NUMBER,
    ),
    (
        "07_alibi",
        "local-heads",
        r"and " + NUMBER + r"\) and keeps",
        "local-heads-code",
        r"\n   8  1/256\s+\S+\s+" + NUMBER,
    ),
    (
        "07_alibi",
        "extrapolation",
        r"\(" + NUMBER + " and",
        "extrapolation-code",
        r"\[\s*(?:\S+\s+){6}" + NUMBER,
    ),
    (
        "07_alibi",
        "extrapolation",
        r"\(\S+ and " + NUMBER + " for heads",
        "extrapolation-code",
        r"\[\s*(?:\S+\s+){7}" + NUMBER,
    ),
    (
        "07_alibi",
        "length-figure",
        r"head 1 is at " + NUMBER,
        "length-figure-code",
        r"at L = 1024, mean distance per head: \[\s*(?:\S+\s+){0}" + NUMBER,
    ),
    (
        "07_alibi",
        "length-figure",
        r"head 7 is at " + NUMBER,
        "length-figure-code",
        r"at L = 1024, mean distance per head: \[\s*(?:\S+\s+){6}" + NUMBER,
    ),
    (
        "07_alibi",
        "length-figure",
        r"head 8 at " + NUMBER,
        "length-figure-code",
        r"at L = 1024, mean distance per head: \[\s*(?:\S+\s+){7}" + NUMBER,
    ),
    (
        "08_offsets",
        "seed-table",
        r"\(" + NUMBER + ",",
        "seed-table-code",
        r"\n    3 .* " + NUMBER + r"\n",
    ),
    (
        "08_offsets",
        "seed-table",
        r", " + NUMBER + r"\), a spread",
        "seed-table-code",
        r"\n 4000 .* " + NUMBER + r"\n",
    ),
    (
        "08_offsets",
        "seed-table",
        r"a spread of " + NUMBER,
        "seed-table-code",
        r"additive " + NUMBER,
    ),
    (
        "08_offsets",
        "cross-terms",
        r"is\s+" + NUMBER + " at every",
        "cross-terms-code",
        r"\n    3\s+" + NUMBER,
    ),
    (
        "08_offsets",
        "cross-terms",
        r"is " + NUMBER + " at every\nstart",
        "cross-terms-code",
        r"\n    3(?:\s+\S+){3}\s+" + NUMBER,
    ),
    ("08_offsets", "turns", r"Pair 0 turns " + NUMBER, "turns-code", r"\n 4096\s+\S+\s+" + NUMBER),
    (
        "08_offsets",
        "turns",
        r"the last pair " + NUMBER,
        "turns-code",
        r"\n 4096(?:\s+\S+){2}\s+" + NUMBER,
    ),
]


def parse(text: str) -> tuple[float, float]:
    """A number as written in prose or printed, and half a unit of its last digit."""
    t = text.replace("{,}", "").replace(",", "").replace(" ", "")
    m = re.fullmatch(r"(-?\d*\.?\d+)(?:\\cdot10\^\{(-?\d+)\}|e([-+]?\d+))?", t)
    assert m, f"not a number: {text!r}"
    mantissa, exp = m.group(1), int(m.group(2) or m.group(3) or 0)
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return float(mantissa) * 10.0**exp, 0.5 * 10.0 ** (exp - decimals)


def cells(nb_id: str, tmp_path_factory) -> dict[str, str]:
    """Cell id -> Markdown source or printed output of the executed source notebook, in the
    notebook's order."""
    text, printed = executed(nb_id, tmp_path_factory)
    nb = executed_notebook(nb_id, tmp_path_factory)
    return {
        c.id: text[c.id] if c.id in text else printed[c.id]
        for c in nb.cells
        if c.id in text or c.id in printed
    }


def number(text: str, pattern: str, where: str) -> str:
    m = re.search(pattern, text)
    assert m, f"{where}: no match for {pattern!r} in:\n{text}"
    return m.group(1)


def says_what_it_printed(nb_id, md_id, md_pattern, code_id, out_pattern, tmp_path_factory):
    """The number the Markdown cell says equals the one the code cell printed, each to the
    digits it shows."""
    found = cells(nb_id, tmp_path_factory)
    said, said_tol = parse(number(found[md_id], md_pattern, f"{nb_id} {md_id}"))
    printed, printed_tol = parse(number(found[code_id], out_pattern, f"{nb_id} {code_id}"))
    assert abs(said - printed) <= said_tol + printed_tol + 1e-12 * abs(printed), (
        f"{nb_id}: the text of {md_id!r} says {said}, the cell {code_id!r} printed {printed}"
    )


@pytest.mark.parametrize(
    ("nb_id", "md_id", "md_pattern", "code_id", "out_pattern"),
    CLAIMS,
    ids=[f"{c[0]}:{c[1]}:{i}" for i, c in enumerate(CLAIMS)],
)
def test_prose_number_is_the_printed_number(
    nb_id, md_id, md_pattern, code_id, out_pattern, tmp_path_factory
):
    says_what_it_printed(nb_id, md_id, md_pattern, code_id, out_pattern, tmp_path_factory)


def test_02_the_power_form_is_within_two_rounding_units_and_closer(tmp_path_factory):
    """02's text: the power form's error is below two rounding units in float64 and float32
    (its exact figure depends on the processor's pow), and below the log form's."""
    out = cells("02_sincos", tmp_path_factory)["logspace-measure"]
    for dtype, eps in (
        ("float64", np.finfo(np.float64).eps),
        ("float32", np.finfo(np.float32).eps),
    ):
        power, log = (
            float(x) for x in re.search(dtype + r"\s+1e\+04\s+(\S+)\s+(\S+)", out).groups()
        )
        assert power < 2 * eps and power < log, f"02 {dtype}: power form {power}, log form {log}"


@pytest.mark.parametrize(
    ("nb_id", "md", "said", "cell", "printed", "bound"),
    ROUND_OFF,
    ids=[f"{r[0]}:{r[1]}:{i}" for i, r in enumerate(ROUND_OFF)],
)
def test_round_off_is_below_the_order_the_prose_names(
    nb_id, md, said, cell, printed, bound, tmp_path_factory
):
    """Round-off is stated by its order, and every value the cell prints is under it
    (tests/round_off.py; 12's in tests/test_notebook_claims_12.py)."""
    check_bound(nb_id, md, said, cell, printed, bound, *executed(nb_id, tmp_path_factory))


def test_02_heatmap_wavelengths_are_about_2000_to_20000(tmp_path_factory):
    """02's text: pairs 5 to 7 of d = 16 have wavelengths of about 2,000 to 20,000 tokens."""
    out = cells("02_sincos", tmp_path_factory)["heatmap-print"]
    waves = [int(w) for w in re.search(r"\(d = 16\): \[([^\]]*)\]", out).group(1).split()]
    assert round(waves[5], -3) == 2000 and round(waves[7], -4) == 20000, waves


def test_03_ratio_range_with_scale(tmp_path_factory):
    """03's text: with the scale the ratio is between 1.39 and 1.42 at every d."""
    out = cells("03_norm", tmp_path_factory)["ratio-measure"]
    scaled = [float(v) for v in re.findall(r"with sqrt\(d\) (\S+)", out)]
    assert round(min(scaled), 2) == 1.39 and round(max(scaled), 2) == 1.42, scaled


def test_04_first_negative_offset_at_d32(tmp_path_factory):
    """04's text: at d = 32 the profile first dips below zero at k = 474."""
    found = cells("04_decay", tmp_path_factory)
    said = int(re.search(r"first at\s+\$k = (\d+)\$", found["profile-figure-intro"]).group(1))
    last_above = int(re.search(r"d= 32: above zero up to k=(\d+)", found["profile-far"]).group(1))
    assert said == last_above + 1, (said, last_above)


def test_04_independent_scores_do_not_decay(tmp_path_factory):
    """04's text: independent q, k: |mean| below 0.5 and a spread of about 11 at every r."""
    out = cells("04_decay", tmp_path_factory)["bound-vs-scores"]
    means = [float(v) for v in re.search(r"independent q, k   mean :(.*)", out).group(1).split()]
    stds = [float(v) for v in re.search(r"independent q, k.*\n\s+std  :(.*)", out).group(1).split()]
    assert max(abs(m) for m in means) < 0.5, means
    assert all(round(s) == 11 for s in stds), stds
    assert math.isclose(round(math.sqrt(128)), 11)


def test_08_cross_terms_range(tmp_path_factory):
    """08's text: the cross terms move from -9.41 (start 4000) to +4.44 (start 100)."""
    found = cells("08_offsets", tmp_path_factory)
    rows = {
        int(r.split()[0]): [float(v) for v in r.split()[1:]]
        for r in found["cross-terms-code"].splitlines()[1:]
        if r.strip()
    }
    cross = {s: v[1] + v[2] for s, v in rows.items()}
    text = found["cross-terms"]
    low = float(re.search(r"move from \$(-?[\d.]+)\$", text).group(1))
    high = float(re.search(r"to\s+\$\+([\d.]+)\$", text).group(1))
    assert min(cross, key=cross.get) == 4000 and round(cross[4000], 2) == low, cross
    assert max(cross, key=cross.get) == 100 and round(cross[100], 2) == high, cross

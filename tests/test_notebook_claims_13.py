"""The claims the prose of 13_train_short makes are the ones its models measure.

The notebook is executed once for the test run with the full experiment
(tests/claims_kit.py's executed_notebook; every other execution of 13 in the suite trains the
quick one), and every claim below reads its printed output. The margins are the spec's (COURSE_SPEC.md, section 13): ALiBi's excess below
0.1 at every length; sinusoidal, learned and RoPE above ln 16 = 2.773 at 8x; every model within
0.1 of the best loss below the training length; NoPE between (better than sinusoidal, learned
and RoPE, worse than ALiBi and T5 at 8x), which is where the text parts from Kazemnejad et al.
"""

from __future__ import annotations

import re

import pytest

from tests.claims_kit import executed, holds

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def train_short(tmp_path_factory):
    """(Markdown by cell id, printed output by code cell id): the test run's one full Run All
    of 13 (claims_kit.executed_notebook), shared with test_notebooks.py's execution test."""
    return executed("13_train_short", tmp_path_factory)


CLAIMS = [
    ("claims-md", r"excess stays below 0\.1 at every length", "claims", r"\(< 0\.1: True \)"),
    ("claims-md", r"above \$\\ln 16 = 2\.77\$", "claims", r"sinusoidal at 8x: .*: True"),
    ("claims-md", r"learned and RoPE models", "claims", r"learned at 8x: .*: True"),
    ("claims-md", r"learned and RoPE models", "claims", r"rope at 8x: .*: True"),
    (
        "claims-md",
        r"positions 0–31 every model is within 0\.1",
        "claims",
        r"0-31.*\(< 0\.1: True\)",
    ),
    ("recap-md", r"the next cell says so", "whose", r"sinusoidal_pe: yours"),
    # the settings the text gives are the ones the experiment ran with
    (
        "experiment-md",
        r"d_model 64, 4\s+heads, 2 pre-LayerNorm layers, 1500 steps of 16 sequences of 32 tokens",
        "experiment",
        r"d_model 64, 4 heads, 2 layers, 1500 steps of 16 sequences of 32 tokens",
    ),
    (
        "experiment-md",
        r"reads 64 fresh sequences of 256 tokens",
        "experiment",
        r"read on 64 sequences of 256 tokens",
    ),
    ("claims-md", r"a 1500-step model", "experiment", r", 1500 steps of"),
    # RoPE made longer, on the trained RoPE model
    ("longer-md", r"the next cell says whose it read", "longer", r"yarn_thetas: yours\n"),
    ("longer-md", r"60 steps of 8 sequences of 64 tokens", "longer", r"fine-tune \(60 steps at 64"),
    ("longer-md", r"\$32 / 2\\pi \\approx 5\.1\$", "longer", r"32 positions: \[5\.09 1\.61 0\.51 "),
    (
        "longer-claims-md",
        r"its excess at 2× is above 0\.2",
        "longer-claims",
        r"plain RoPE at 2x: [+-]\S+ \(> 0\.2: True\)",
    ),
    (
        "longer-claims-md",
        r"PI alone does not help\*\*: at 2× its excess is above 0\.2",
        "longer-claims",
        r"\nPI at 2x: [+-]\S+ \(> 0\.2: True\)",
    ),
    ("longer-claims-md", r"\(5 turns in 32 positions\)", "longer", r"32 positions: \[5\.09 "),
    (
        "longer-claims-md",
        r"better than plain RoPE at 2×, still above 0\.1",
        "longer-claims",
        r"NTK-aware at 2x: [+-]\S+ \(< plain RoPE: True, > 0\.1: True\)",
    ),
    (
        "longer-claims-md",
        r"divides the third \(half a turn in 32 positions\) by only\s+\$2\^\{2/7\} = 1\.22\$",
        "longer",
        r"NTK-aware\s+\[1\.\s+0\.91 0\.82 ",
    ),
    (
        "longer-claims-md",
        r"YaRN fixes 2×\*\*: within 0\.1 of the best loss",
        "longer-claims",
        r"YaRN at 2x: [+-]\S+ \(< 0\.1: True\)",
    ),
    (
        "longer-claims-md",
        r"keeps the fastest pair, moves the second\s+half-way to \$\\theta_i / s\$ and divides the others by \$s\$",
        "longer",
        r"the paper's ramp\s+\[1\.\s+0\.75 0\.5\s+0\.5\s+0\.5\s+0\.5\s+0\.5\s+0\.5 \]",
    ),
    (
        "longer-claims-md",
        r"The rescaled ramp is the same ramp here",
        "longer",
        r"\(the same rates: True \)",
    ),
    (
        "longer-claims-md",
        r"every \$\\beta_\\text\{fast\}\$\s+above 1\.6 \(the second pair's turns\)",
        "longer",
        r"32 positions: \[5\.09 1\.61 ",
    ),
    (
        "longer-claims-md",
        r"A short PI fine-tune fixes 2× too\*\*: within 0\.1 of the best, after 60 steps",
        "longer-claims",
        r"PI fine-tuned at 2x: [+-]\S+ \(< 0\.1: True\)",
    ),
    (
        "longer-claims-md",
        r"It gives up\s+a little at 1×",
        "longer-claims",
        r"at 1x [+-]\S+ \(worse than before: True\)",
    ),
    (
        "longer-claims-md",
        r"every way is more than 0\.5 nats above the best there",
        "longer-claims",
        r"smallest excess at 8x, over every way: [+-]\S+ \(> 0\.5: True\)",
    ),
]


@pytest.mark.parametrize(("md", "says", "cell", "printed"), CLAIMS)
def test_each_claim_is_what_its_cell_printed(train_short, md, says, cell, printed):
    text, out = train_short
    assert holds(text[md], says), (md, says)
    assert holds(out[cell], printed), (cell, printed, out[cell])


def test_nope_sits_between_as_the_text_says(train_short):
    """NoPE better than sinusoidal, learned and RoPE at 8x, worse than ALiBi and T5."""
    text, out = train_short
    assert holds(text["claims-md"], r"better than sinusoidal, learned and RoPE at 8×")
    line = re.search(r"ordering at 8x, best first: (.*)", out["claims"]).group(1)
    order = [n.strip() for n in line.split("<")]
    for worse in ("sinusoidal", "learned", "rope"):
        assert order.index("nope") < order.index(worse), order
    for better in ("alibi", "t5"):
        assert order.index(better) < order.index("nope"), order


def test_every_model_is_trained_and_read(train_short):
    """The experiment's table has the seven names, each with four excesses."""
    _, out = train_short
    for name in ("nope", "sinusoidal", "learned", "rope", "alibi", "t5", "t5_md128"):
        assert re.search(
            rf"^\s*{name}\s+[\d.]+\s+[\d.]+\s+([+-]\d\.\d{{3}}\s*){{4}}$",
            out["experiment"],
            re.MULTILINE,
        ), name
    assert "seven models trained and read in" in out["experiment"]


def test_a_beta_fast_of_1_keeps_two_pairs_and_8x_gets_worse(train_short):
    """The text: a beta_fast of 1 or less keeps the second pair too, and 8x gets worse."""
    text, out = train_short
    assert holds(
        text["longer-claims-md"], r"of 1 or\s+less keeps the second pair too, and 8× gets worse"
    )
    read = {
        float(b): (float(e), kept)
        for b, e, kept in re.findall(
            r"YaRN at 8x, beta_fast (\S+): ([+-][\d.]+), pairs kept: (\[.*\])", out["longer-claims"]
        )
    }
    assert read[1.0][1] == "[0, 1]" and read[32.0][1] == "[0]", read
    assert read[1.0][0] > read[32.0][0], read


def test_the_longer_table_has_every_way_at_every_length(train_short):
    _, out = train_short
    for name in ("rope", "pi", "ntk", "yarn", "yarn_rescaled", "pi_finetune"):
        assert re.search(
            rf"^\s*{name}\s+([+-]\d\.\d{{3}}\s*){{4}}$", out["longer"], re.MULTILINE
        ), name
    rows = dict(re.findall(r"^\s*(yarn(?:_rescaled)?)\s+(.*)$", out["longer"], re.MULTILINE))
    assert rows["yarn"] == rows["yarn_rescaled"], rows  # the same rates: the same reads

"""The claims the prose of 13_train_short makes are the ones its models measure.

The notebook is executed once for the test run with the full experiment
(tests/claims_kit.py's executed_notebook; every other execution of 13 in the suite trains the
quick one), and every claim below reads its printed output: the verdicts of
``helpers.train.claims`` (the same function the benchmark checks on three seeds,
tests/test_notebook_claims_13_seeds.py) and the numbers the text quotes. The margins are the
spec's (COURSE_SPEC.md, section 13, and its second edition).
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


def verdict(text: str) -> str:
    """The line show_claims prints for a claim that holds."""
    return r"claim holds · " + re.escape(text)


CLAIMS = [
    # the experiment's table
    (
        "claims-md",
        r"excess stays below 0\.1 at every length",
        "claims",
        verdict("ALiBi's excess is below 0.1"),
    ),
    (
        "claims-md",
        r"above \$\\ln 16 = 2\.77\$",
        "claims",
        verdict("sinusoidal at 8x: mean loss above ln 16"),
    ),
    (
        "claims-md",
        r"learned and RoPE models",
        "claims",
        verdict("learned at 8x: mean loss above ln 16"),
    ),
    (
        "claims-md",
        r"learned and RoPE models",
        "claims",
        verdict("rope at 8x: mean loss above ln 16"),
    ),
    (
        "claims-md",
        r"on positions 0–31 every model's mean excess is\s+within 0\.1 of the best loss \(a mean",
        "claims",
        verdict("every model's mean excess on positions 0-31 is within 0.1"),
    ),
    (
        "claims-md",
        r"holds to 2×, not to 4×",
        "claims",
        verdict("T5 (max_distance 32): excess below 0.1 at 2x"),
    ),
    (
        "claims-md",
        r"better than sinusoidal, learned and RoPE at 8×, worse than ALiBi\s+and T5, in this model",
        "claims",
        verdict("NoPE at 8x: better than sinusoidal, learned and RoPE, worse than ALiBi and T5"),
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
        r"reads 64 fresh sequences of\s+256 tokens",
        "experiment",
        r"read on 64 sequences of 256 tokens",
    ),
    (
        "experiment-md",
        r"about \$10\^5\$ parameters",
        "experiment",
        r"parameters: 10\d,\d{3} \(NoPE\) to 10\d,\d{3}",
    ),
    ("claims-md", r"a 1500-step model", "experiment", r", 1500 steps of"),
    # the noise floor
    (
        "noise-md",
        r"standard deviation of about 0\.12 nats",
        "noise",
        r"per-position SD 0\.1[1-3] nats",
    ),
    (
        "noise-md",
        r"default window of 3, the exact optimum would\s+\"break\" on this noise alone",
        "noise",
        r"window 3 breaks at \d+, window 8 at None",
    ),
    ("noise-md", r"with a window of 8", "curves", verdict("the optimum breaks with window 3")),
    ("curves-md", r"window 8", "curves", verdict("over the optimum, window 8: ALiBi never breaks")),
    (
        "curves-md",
        r"where it breaks",
        "curves",
        verdict("over the optimum, window 8: NoPE, sinusoidal"),
    ),
    # heads
    (
        "heads-md",
        r"Its steep head keeps its weight\s+where it was",
        "heads",
        verdict("ALiBi's steepest head keeps"),
    ),
    (
        "heads-md",
        r"its flat heads spread just as NoPE's do",
        "heads",
        verdict("ALiBi's flattest head spreads"),
    ),
    (
        "heads-md",
        r"its head-averaged entropy rises too",
        "heads",
        verdict("ALiBi's head-averaged entropy rises too"),
    ),
    (
        "heads-md",
        r"all lose the two nearest keys at 8× \(weight below 0\.1\)",
        "heads",
        verdict("NoPE's and RoPE's heads all lose the two nearest keys"),
    ),
    ("heads-md", r"slopes run from \$1/4\$ \(head 0\) to \$1/256\$", "heads", r"alibi layer 1 "),
    (
        "nope-md",
        r"its entropy is \$\\log\(t \+ 1\)\$",
        "heads",
        verdict("NoPE's first layer spreads evenly"),
    ),
    (
        "nope-md",
        r"In this model they hardly\s+help",
        "nope",
        verdict("no temperature tried lowers NoPE's 2x excess"),
    ),
    # the far probe
    (
        "far-claims-md",
        r"at 1× every probe model\s+answers above 0\.95",
        "far-figure",
        verdict("every probe model answers at 1x"),
    ),
    (
        "far-claims-md",
        r"NoPE, learned, ALiBi, T5 and T5-128 find it at every length to 8×\*\* \(above 0\.95\)",
        "far-figure",
        verdict("NoPE, learned, ALiBi, T5 and T5-128 answer the probe at every length to 8x"),
    ),
    (
        "far-claims-md",
        r"ALiBi's head most on the key keeps\s+more than 0\.8 of its weight there at 8×",
        "far-figure",
        verdict("ALiBi's head most on the key at 1x (layer 0) keeps more than 0.8"),
    ),
    (
        "far-claims-md",
        r"its two steepest heads \(slopes 1/4 and 1/16\)\s+put less than 0\.05 on the key even at 1×",
        "far-figure",
        verdict(
            "ALiBi's two steep heads (slopes 1/4, 1/16) put less than 0.05 on the key at 1x, in both layers"
        ),
    ),
    (
        "far-claims-md",
        r"\*\*RoPE does not:\*\* below 0\.95 at 8×",
        "far-figure",
        verdict("RoPE's probe at 8x: right answers below 0.95"),
    ),
    (
        "far-claims-md",
        r"head most on the key in layer 0 loses more than 0\.25 of that weight by 8×",
        "far-figure",
        verdict("RoPE's head most on the key at 1x (layer 0) loses more than 0.25"),
    ),
    (
        "far-md",
        r"for 200 steps",
        "far",
        r"each probe model: 200 steps of 16 sequences of 32 tokens",
    ),
    (
        "far-md",
        r"on 64 fresh sequences at\s+each length",
        "far",
        r"read on 64 sequences at each length",
    ),
    ("far-md", r"one right answer in 16", "far", r"chance: 0\.062 \(one token in 16\)"),
    # T5 with max_distance 128
    ("t5-md", r"31, falls in\s+bucket 21", "t5", r"distance 31 falls in bucket 21;"),
    (
        "t5-md",
        r"buckets 22–31 are never trained and stay at their initial 0",
        "t5",
        verdict("T5-128's buckets 22-31 are exactly 0"),
    ),
    (
        "t5-md",
        r"the trained far\s+buckets sit below 0",
        "t5",
        verdict("T5-128's buckets 16-21 are below 0"),
    ),
    ("t5-md", r"every key 35 or more back", "t5", r"the first distance in bucket 22: 35\n"),
    # RoPE made longer, on the trained RoPE model
    ("longer-md", r"the next cell says whose it read", "longer", r"yarn_thetas: yours\n"),
    ("longer-md", r"60 steps of 8 sequences of 64 tokens", "longer", r"fine-tune \(60 steps at 64"),
    ("longer-md", r"5\.1 for pair 0", "longer", r"32 positions: \[5\.09 1\.61 0\.51 "),
    (
        "longer-md",
        r"Pair 0's 5\.1 turns give \$\\gamma = 0\.13\$",
        "longer",
        r"yarn_paper \[0\.57 0\.51 0\.5 ",
    ),
    (
        "longer-md",
        r"Here that start is pair 0, which is then\s+kept",
        "longer",
        r"\s+yarn \[1\.\s+0\.75 ",
    ),
    (
        "longer-claims-md",
        r"its excess at 2× is above 0\.2",
        "longer-claims",
        verdict("plain RoPE at 2x: excess above 0.2"),
    ),
    (
        "longer-claims-md",
        r"PI alone does not fix 2×\*\*: its excess at 2× stays above 0\.2",
        "longer-claims",
        verdict("PI alone at 2x: excess above 0.2"),
    ),
    ("longer-claims-md", r"\(5 turns in 32 positions\)", "longer", r"32 positions: \[5\.09 "),
    (
        "longer-claims-md",
        r"better than plain RoPE at 2×, still above 0\.1",
        "longer-claims",
        verdict("NTK-aware at 2x: below plain RoPE, above 0.1"),
    ),
    (
        "longer-claims-md",
        r"YaRN with transformers' ramp fixes 2×\*\*: within 0\.1",
        "longer-claims",
        verdict("YaRN, transformers' ramp, at 2x: excess below 0.1"),
    ),
    (
        "longer-claims-md",
        r"keeps the fastest\s+pair, moves the second half-way to \$\\theta_i / s\$ and divides the others by \$s\$",
        "longer",
        r"\s+yarn \[1\.\s+0\.75 0\.5\s+0\.5\s+0\.5\s+0\.5\s+0\.5\s+0\.5 \]",
    ),
    (
        "longer-claims-md",
        r"YaRN with the paper's ramp does not\*\*: above 0\.2 at 2×",
        "longer-claims",
        verdict("YaRN, the paper's ramp, at 2x: excess above 0.2"),
    ),
    (
        "longer-claims-md",
        r"A short PI fine-tune fixes 2× too\*\*: within 0\.1 of the best, after 60 steps",
        "longer-claims",
        verdict("PI fine-tuned at 2x: excess below 0.1"),
    ),
    (
        "longer-claims-md",
        r"It gives up\s+a little at 1×",
        "longer-claims",
        verdict("PI fine-tuned at 1x: worse than before"),
    ),
    (
        "longer-claims-md",
        r"every way is more than 0\.5 nats above the best there",
        "longer-claims",
        verdict("every way at 8x: excess above 0.5"),
    ),
]


@pytest.mark.parametrize(("md", "says", "cell", "printed"), CLAIMS)
def test_each_claim_is_what_its_cell_printed(train_short, md, says, cell, printed):
    text, out = train_short
    assert holds(text[md], says), (md, says)
    assert holds(out[cell], printed), (cell, printed, out[cell])


def test_no_claim_the_notebook_checks_fails(train_short):
    """Every verdict the notebook prints says the claim holds."""
    _, out = train_short
    printed = "\n".join(out.values())
    assert "claim DOES NOT HOLD" not in printed
    assert len(re.findall(r"^claim holds · ", printed, re.MULTILINE)) >= 27


def test_every_model_is_trained_and_read(train_short):
    """The experiment's table has the seven names and the optimum, each with four excesses."""
    _, out = train_short
    for name in ("nope", "sinusoidal", "learned", "rope", "alibi", "t5", "t5_md128"):
        assert re.search(
            rf"^\s*{name}\s+[\d.]+\s+[\d.]+\s+([+-]\d\.\d{{3}}\s*){{4}}$",
            out["experiment"],
            re.MULTILINE,
        ), name
    assert re.search(r"^\s*optimum\s+([+-]\d\.\d{3}\s*){4}$", out["experiment"], re.MULTILINE)
    assert "seven models and seven probes trained and read in" in out["experiment"]


def test_the_probe_table_has_every_family_at_every_length(train_short):
    """The far probe's table: each family's right answers at 1x to 8x beside its chain
    excess, and each layer's heads with their weight on the key and their entropy."""
    _, out = train_short
    for name in ("nope", "sinusoidal", "learned", "rope", "alibi", "t5", "t5_md128"):
        assert re.search(
            rf"^\s*{name}\s+(\d\.\d\d\s+){{4}}([+-]\d\.\d\d\s*){{4}}$", out["far"], re.MULTILINE
        ), name
        for layer in (0, 1):
            assert re.search(
                rf"^\s*{name} layer {layer}(\s+\d\.\d\d>\d\.\d\d \(\d\.\d>\d\.\d\)){{4}}$",
                out["far"],
                re.MULTILINE,
            ), (name, layer)


def test_the_longer_table_has_every_way_at_every_length(train_short):
    _, out = train_short
    for name in ("rope", "pi", "ntk", "yarn_paper", "yarn", "pi_finetune"):
        assert re.search(
            rf"^\s*{name}\s+([+-]\d\.\d{{3}}\s*){{4}}$", out["longer"], re.MULTILINE
        ), name

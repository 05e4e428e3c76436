"""The claims the prose of 13_train_short makes are the ones its models measure.

The notebook is executed once for the session with the full experiment (tests/train13_kit.py:
every other execution of 13 in the suite trains the quick one), and every claim below reads its
printed output. The margins are the spec's (COURSE_SPEC.md, section 13): ALiBi's excess below
0.1 at every length; sinusoidal, learned and RoPE above ln 16 = 2.773 at 8x; every model within
0.1 of the best loss below the training length; NoPE between (better than sinusoidal, learned
and RoPE, worse than ALiBi and T5 at 8x), which is where the text parts from Kazemnejad et al.
"""

from __future__ import annotations

import re

import pytest

from tests import train13_kit
from tests.claims_kit import holds

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def train_short(tmp_path_factory):
    """(Markdown by cell id, printed output by code cell id): the session's one full Run All
    (tests/train13_kit.py), shared with test_notebooks.py's execution test of 13."""
    nb = train13_kit.full_run(tmp_path_factory)
    text = {c.id: c.source for c in nb.cells if c.cell_type == "markdown"}
    printed = {
        c.id: "".join(o.get("text", "") for o in c.get("outputs", []))
        for c in nb.cells
        if c.cell_type == "code"
    }
    return text, printed


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

"""The numbers the prose of 11_rope_nd quotes are the ones its cells print.

The notebook is executed once for the test run (``tests.claims_kit.executed_notebook``, as
tests/test_notebooks.py runs it). A claim names a Markdown cell and the text it must hold, and the code
cell whose printed output must hold the measurement. The expected numbers are written out
here from COURSE_SPEC.md (section 11_rope_nd: Pixtral-12B's rates, the interaction term 0
and 1.5418, the text after an image at s + max(h, w), Qwen2-VL's section rates) and from the
Hugging Face outputs recorded in tests/data/transformers_rope_nd.json, not taken from the
code under test.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.claims_kit import executed, holds

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "transformers_rope_nd.json"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def rope_nd(tmp_path_factory):
    """(Markdown source by cell id, printed output by code cell id) of the executed notebook."""
    return executed("11_rope_nd", tmp_path_factory)


# (Markdown cell, pattern in it, code cell, pattern in its output)
CLAIMS = [
    ("pixtral-md", r"16 pairs", "pixtral", r"height 16, width 16"),
    ("pixtral-md", r"1\.0, 0\.562341, 0\.316228", "pixtral", r"\[1\. +0\.562341 0\.316228"),
    (
        "pixtral-md",
        r"0\.749894, 0\.421697, 0\.237137",
        "pixtral",
        r"\[0\.749894 0\.421697 0\.237137",
    ),
    ("pixtral-md", r"No pair turns with both axes", "pixtral", r"follows one axis: True"),
    (
        "directions-md",
        r"row \(90°\) or the column \(0°\)",
        "directions",
        r"\[90\. 90\.  0\.  0\.\]",
    ),
    ("directions-md", r"45° and 135°", "directions", r"\[ 45\.  45\. 135\. 135\.\]"),
    (
        "relative-md",
        r"0\.144218 at all four",
        "relative",
        r"\[0\.144218 0\.144218 0\.144218 0\.144218\]",
    ),
    # its spread and the axial terms are round-off, checked against a bound: tests/round_off.py
    ("relative-md", r"norm 5\.69443", "relative", r"norm of q 5\.69443, rotated 5\.69443"),
    ("axial-zero-md", r"score 0\.144218", "axial-zero", r"s\(3, 2\) = 0\.144218; .* = 0\.144218"),
    ("mixed-measure-md", r"1\.541847", "mixed-measure", r"summed over the pairs 1\.541847"),
    ("mixed-measure-md", r"1\.974560", "mixed-measure", r"largest \|term\| 1\.974560"),
    ("mixed-measure-md", r"none of the 32 pairs gives 0", "mixed-measure", r"32 of 32 pairs not 0"),
    ("mixed-read-md", r"adds 1\.5418", "mixed-measure", r"1\.5418"),
    ("mrope-ids-md", r"from 5\s+to 20", "mrope-ids", r"h = 5\.\.20, w = 5\.\.20"),
    # video ids and the vision towers' positions
    ("vision-md", r"the ids 3, 5, 7, 9", "vision-positions", r"1 s per patch: \[3 5 7 9\]"),
    ("vision-md", r"the ids 3, 4, 5, 6", "vision-positions", r"0\.5 s per patch: \[3 4 5 6\]"),
    ("vision-md", r"the same 20 rates", "vision-positions", r"20 rates per axis"),
    ("vision-md", r"RoPE-Axial", "vision-positions", r"RoPE-Axial's: True"),
    ("vision-md", r"48 \\times 48", "vision-positions", r"table: 48 x 48"),
    ("vision-md", r"row 1 sits at 1\.516", "vision-positions", r"row 1 of 32 at 1\.516"),
    ("vision-md", r"0\.484 and 0\.516", "vision-positions", r"weights 0\.484, 0\.516"),
    ("mrope-ids-md", r"5 \+ \\max\(16, 16\) = 21", "mrope-ids", r"starts at 21 = 5 \+ max"),
    ("mrope-ids-md", r"264 tokens use ids up to 23", "mrope-ids", r"largest id 23 for 264 tokens"),
    ("mrope-ids-md", r"-240", "mrope-ids", r"mrope_position_deltas = -240"),
    ("text-only-md", r"pairs 0, 16 and 40", "text-only", r"\[0, 16, 40\]"),
    (
        "text-only-md",
        r"1,\s+0\.0316228 and 0\.000177828",
        "text-only",
        r"\['1', '0\.0316228', '0\.000177828'\]",
    ),
    ("text-only-md", r"bit for bit", "text-only", r"bit for bit: True"),
    # M-RoPE's frequency budget, Qwen2-VL's blocks
    ("budget-md", r"0\.0027 rad \(0\.15°\)", "budget", r"w: 24 pairs .* fastest turns 0\.0027 rad"),
    (
        "budget-md",
        r"0\.47 rad for the fastest height",
        "budget",
        r"h: 24 pairs .* fastest turns 0\.47 rad",
    ),
    (
        "budget-md",
        r"7 rad for the fastest temporal",
        "budget",
        r"t: 16 pairs .* fastest turns 7 rad",
    ),
    ("budget-md", r"time takes the 16 fastest pairs", "budget", r"t: 16 pairs \(from pair 0\)"),
    ("budget-md", r"width the 24 slowest", "budget", r"w: 24 pairs \(from pair 40\)"),
    # Qwen3-VL's interleaved layout
    (
        "interleaved-budget-md",
        r"9\.7 rad across the 16 columns",
        "interleaved-budget",
        r"w: 20 pairs .* fastest turns 9\.7 rad",
    ),
    ("interleaved-budget-md", r"3652 times as far", "interleaved-budget", r"3652 times as far"),
    (
        "interleaved-budget-md",
        r"height pair\s+12 rad",
        "interleaved-budget",
        r"h: 20 pairs .* fastest turns 12 rad",
    ),
    (
        "interleaved-budget-md",
        r"less than \$10\^\{-4\}\$ rad",
        "interleaved-budget",
        r"t: .*slowest \d\.\de-06 rad\nh: .*slowest \d\.\de-05 rad\nw: .*slowest \d\.\de-05 rad",
    ),
    (
        "interleaved-md",
        r"pairs 0 to 59 cycle",
        "interleaved-budget",
        r"t: 24 pairs .*\nh: 20 pairs \(from pair 1\).*\nw: 20 pairs \(from pair 2\)",
    ),
    (
        "course-map",
        r"1\.5418 at \$\\phi = \\pi/4\$",
        "course-map-code",
        r"interaction 1\.5418 at phi = pi/4",
    ),
    (
        "course-map",
        r"continues at \$s \+ 16\$",
        "course-map-code",
        r"text after the image at 21 \(5 \+ 16\)",
    ),
    (
        "course-map",
        r"turns 0\.0027 rad across 16 columns",
        "course-map-code",
        r"16 columns 0\.0027 rad",
    ),
    (
        "course-map",
        r"turns 9\.7 rad across 16 columns",
        "course-map-code",
        r"interleaved M-RoPE: .* 9\.7 rad",
    ),
]


@pytest.mark.parametrize(("md", "said", "cell", "printed"), CLAIMS)
def test_prose_matches_its_cells(rope_nd, md, said, cell, printed):
    text, out = rope_nd
    assert holds(text[md], said), f"{md} no longer says {said!r}"
    assert holds(out[cell], printed), f"{cell} printed:\n{out[cell]}"


def test_printed_numbers_are_hugging_faces(rope_nd):
    """The Pixtral-12B rates and the RoPE-Mixed interaction the notebook prints are the ones
    transformers and the authors' formula gave (recorded in float32 and float64)."""
    _, out = rope_nd
    data = json.loads(DATA.read_text(encoding="utf-8"))
    pix = next(c for c in data["axial"] if c["d"] == 64 and c["base"] == 1e4)
    shown_height = [
        float(v) for v in re.search(r"height rates: \[([^\]]+)\]", out["pixtral"]).group(1).split()
    ]
    shown_width = [
        float(v) for v in re.search(r"width rates: +\[([^\]]+)\]", out["pixtral"]).group(1).split()
    ]
    assert shown_height == [round(v, 6) for v in pix["freqs_y"][:4]]
    assert shown_width == [round(v, 6) for v in pix["freqs_x"][16:20]]
    mixed = next(c for c in data["demo_interaction"] if c["family"] == "mixed")
    shown = float(re.search(r"summed over the pairs (\d\.\d+)", out["mixed-measure"]).group(1))
    assert shown == round(mixed["score_term"], 6)
    ids = data["mrope_ids"]["cases"][0]  # the spec's example, through get_rope_index
    assert ids["position_ids"][0][-2:] == [5, 6] and ids["delta"] == -3


def test_interleaved_rates_quoted_are_qwen3_vls(rope_nd):
    """The fastest rate of each axis that the interleaved measurement prints is the one
    transformers' Qwen3VLTextRotaryEmbedding gave (recorded: token a with id 1 on axis a)."""
    _, out = rope_nd
    data = json.loads((ROOT / "tests" / "data" / "transformers_rope_recent.json").read_text())
    unit = next(
        c
        for c in data["mrope_interleaved"]["cases"]
        if c["d"] == 128 and c["position_ids"] == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    )
    for axis, row in zip("thw", unit["angles"]):
        shown = re.search(
            rf"^{axis}: .*rates ([0-9.e-]+) down to", out["interleaved-budget"], re.MULTILINE
        )
        assert float(shown.group(1)) == float(f"{max(row):.3g}"), (axis, shown.group(1), max(row))


def test_video_and_vision_tower_numbers_are_transformers_own(rope_nd):
    """Section 9's video ids, vision-encoder rates and table reads are the ones transformers
    5.24.0 gave (get_rope_index of Qwen2-VL and Qwen2.5-VL, the vision rotary embeddings of
    Qwen2-VL and Qwen3-VL, and Qwen3-VL's bilinear taps into its 48 x 48 table, recorded)."""
    text, out = rope_nd
    vision = json.loads((ROOT / "tests" / "data" / "transformers_rope_recent.json").read_text())[
        "vision"
    ]
    video = vision["video_ids"]
    temporal = {k: video[k]["position_ids"][0][3:19:4] for k in video if k != "layout"}
    assert temporal == {
        "qwen2_vl": [3, 4, 5, 6],
        "qwen2_5_vl_1s": [3, 5, 7, 9],
        "qwen2_5_vl_half_s": [3, 4, 5, 6],
    }
    assert video["qwen2_5_vl_1s"]["tokens_per_second"] == 2
    assert holds(
        out["vision-positions"], r"Qwen2-VL, 4 temporal patches after 3 text tokens: \[3 4 5 6\]"
    )
    v2, v3 = vision["qwen2_vl_vit"], vision["qwen3_vl_vit"]
    assert (v2["embed_dim"], v2["num_heads"], len(v2["inv_freq"])) == (1280, 16, 20)
    assert (v3["hidden_size"], v3["num_heads"], len(v3["inv_freq"])) == (1152, 16, 18)
    assert v3["num_position_embeddings"] == 2304
    shown = re.search(r"20 rates per axis, \[([^\]]+)\]", out["vision-positions"]).group(1).split()
    assert [float(v) for v in shown] == [round(v, 4) for v in v2["inv_freq"][:3]]
    assert holds(text["vision-md"], r"18 rates")
    row1 = vision["qwen3_vl_interpolation"]["rows_of_column_0"][1]
    assert row1["indices"][0] == 48 and row1["indices"][2] == 96  # table rows 1 and 2, column 0
    weights = sorted(w for w in row1["weights"] if w)
    assert [round(w, 3) for w in weights] == [0.484, 0.516]

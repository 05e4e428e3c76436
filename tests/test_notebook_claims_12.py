"""The numbers the prose of 12_rope_today quotes are the ones its cells print.

The notebook is executed once for the test run (``tests.claims_kit.executed_notebook``, as
tests/test_notebooks.py runs it). A claim names a Markdown cell and the text it must hold, and the code
cell whose printed output must hold the measurement. The expected numbers are written out
here from COURSE_SPEC.md (Gemma 4's 64 pairs, 0.0334 against 1.24e-6, sqrt(17/12), 10 global
layers of 62, 12 NoPE layers of 48, round-off below 1e-15 and 1e-14, 576 against 32,768), not taken from
the code under test; the sink cache's float32 error in transformers 4.52.4 from the recorded
data (tests/data/transformers_rope_today.json).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

from tests.claims_kit import executed, holds

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def rope_today(tmp_path_factory):
    """(Markdown source by cell id, printed output by code cell id) of the executed notebook."""
    return executed("12_rope_today", tmp_path_factory)


# (Markdown cell, pattern in it, code cell, pattern in its output)
CLAIMS = [
    ("partial-measure-md", r"12 of its 48 pairs", "partial-measure", r"rotating pairs: 12 of 48"),
    ("partial-measure-md", r"0\.464159", "partial-measure", r"\[1\.\s+0\.464159 0\.215443\]"),
    ("partial-measure-md", r"2\.15443e-4", "partial-measure", r"\.\.\. 0\.000215443"),
    ("partial-measure-md", r"last 72 dims", "partial-measure", r"dims 24\.\.95 unchanged: True"),
    (
        "proportional-measure-md",
        r"both rotate 64",
        "proportional-measure",
        r"proportional 64, partial 64",
    ),
    (
        "proportional-measure-md",
        r"\$1\.24\\cdot10\^\{-6\}\$",
        "proportional-measure",
        r"partial 1\.24e-06",
    ),
    ("proportional-measure-md", r"\$0\.0334\$", "proportional-measure", r"proportional 0\.0334 "),
    ("proportional-measure-md", r"188 tokens", "proportional-measure", r"wavelength 188 tokens"),
    ("proportional-measure-md", r"5 million", "proportional-measure", r"wavelength 5\.06e\+06"),
    (
        "proportional-measure-md",
        r"1\.06\\cdot10\^\{-6\}",
        "proportional-measure",
        r"slowest rate 1\.06e-06",
    ),
    (
        "longrope-measure-md",
        r"1\.1902380714238083",
        "longrope-measure",
        r"sqrt\(17/12\) = 1\.1902380714238083",
    ),
    ("longrope-measure-md", r"0\.0005 to 3\.33e-5", "longrope-measure", r"4097: .*3\.333333e-05"),
    # the last read: pair 0 keeps 1.0 (both its factors are 1); HF scales cos and sin, so q and k
    (
        "longrope-measure-md",
        r"pair 0 keeps 1\.0",
        "longrope-measure",
        r"changes at 4097: \[1, 2, 3\]",
    ),
    (
        "longrope-measure-md",
        r"pairs 1 to 3 change",
        "longrope-measure",
        r"changes at 4097: \[1, 2, 3\]",
    ),
    (
        "longrope-measure-md",
        r"15 times slower",
        "longrope-measure",
        r"pair 3 turns 15 times slower",
    ),
    ("longrope-measure-md", r"\$17/12 = 1\.4167\$", "longrope-measure", r"scores times 1\.4167"),
    (
        "proportional-measure-md",
        r"198\.7 tokens to 5\.95 million",
        "proportional-measure",
        r"wavelengths 198\.7 to 5\.95e\+06 tokens",
    ),
    ("proportional-measure-md", r"121 of\s+them", "proportional-measure", r"131072 tokens: 121,"),
    (
        "proportional-measure-md",
        r"31B's config declares 134",
        "proportional-measure",
        r"262144: 134,",
    ),
    # Qwen3.5's partial interleaved M-RoPE
    ("qwen35-measure-md", r"temporal id 11 pairs", "qwen35-measure", r"temporal: 11 pairs"),
    ("qwen35-measure-md", r"2\.74\\cdot10\^\{-7\}", "qwen35-measure", r"temporal: .* to 2\.74e-07"),
    (
        "qwen35-measure-md",
        r"height 11 from 0\.604",
        "qwen35-measure",
        r"height: 11 pairs .* 0\.604 to",
    ),
    ("qwen35-measure-md", r"1\.65\\cdot10\^\{-7\}", "qwen35-measure", r"height: .* to 1\.65e-07"),
    (
        "qwen35-measure-md",
        r"width 10 from 0\.365",
        "qwen35-measure",
        r"width: 10 pairs .* 0\.365 to",
    ),
    ("qwen35-measure-md", r"4\.53\\cdot10\^\{-7\}", "qwen35-measure", r"width: .* to 4\.53e-07"),
    ("qwen35-measure-md", r"exercise 1's partial rotary", "qwen35-measure", r"exercise 1: True"),
    (
        "qwen35-measure-md",
        r"8 layers rotate \(3, 7, \.\.\., 31\)",
        "qwen35-measure",
        r"8 of 32 \(3, 7, \.\.\., 31\)",
    ),
    ("qwen35-measure-md", r"only 64 of each head's 256", "qwen35-measure", r"64 of 256"),
    # NoPE/RoPE hybrids
    (
        "hybrids-md",
        r"36 layers have 9 without RoPE \(3, 7, \.\.\., 35\)",
        "hybrids",
        r"9 without RoPE at \[3, 7, .*, 35\]",
    ),
    ("hybrids-md", r"the 10\s+global layers", "hybrids", r"10 global without RoPE"),
    ("hybrids-md", r"91 %", "hybrids", r"hold 91% of the cached keys"),
    # gpt-oss's learned sinks
    (
        "sinks-measure-md",
        r"half of a row with one\s+key",
        "sinks-measure",
        r"1 keys .* takes 0\.5 ",
    ),
    ("sinks-measure-md", r"0\.00775 of 128 keys", "sinks-measure", r"128 keys .* takes 0\.00775"),
    ("sinks-measure-md", r"0\.000244 of 4096", "sinks-measure", r"4096 keys .* takes 0\.000244"),
    (
        "sinks-measure-md",
        r"takes 0\.30 of a row",
        "sinks-measure",
        r"score -4: the sink takes 0\.30",
    ),
    ("sinks-measure-md", r"4\.5\\cdot10\^\{-5\}", "sinks-measure", r"one of them at 10: 4\.5e-05"),
    ("sinks-measure-md", r"stays finite", "sinks-measure", r"\[0\. 0\. 0\. 0\.\] \(no nan\)"),
    ("proportional-measure-md", r"within\s+4,096, 57", "proportional-measure", r"within 4096: 57"),
    # caches whose rates change
    ("rate-switch-md", r"1\.36 on average", "rate-switch", r"LongRoPE, .*error mean 1\.36,"),
    ("rate-switch-md", r"deviation 1\.50\)", "rate-switch", r"vary by 1\.50 \(std\); attention"),
    ("rate-switch-md", r"up to 6\.72", "rate-switch", r"largest 6\.72"),
    ("rate-switch-md", r"total variation of 0\.60", "rate-switch", r"weights differ by 0\.60"),
    ("rate-switch-md", r"0\.90 away", "rate-switch", r"dynamic NTK x4, .*error mean 0\.90,"),
    ("rate-switch-md", r"deviation 1\.03\)", "rate-switch", r"x4, .* vary by 1\.03 \(std\)"),
    # the recent models' table: the rows computed with thetas and the two factors
    (
        "recent-md",
        r"1, 0\.00141421, 2\.45514e-6",
        "recent",
        r"\['1', '0\.00141421', '2\.45514e-06'\]",
    ),
    (
        "recent-md",
        r"0\.125, 0\.000125, 1\.55117e-7",
        "recent",
        r"\['0\.125', '0\.000125', '1\.55117e-07'\]",
    ),
    ("recent-md", r"1\.87385", "recent", r"\^2 = 1\.87385"),
    ("recent-md", r"1\.13863", "recent", r"0\.1 ln 4 \+ 1 = 1\.13863"),
    (
        "layers-measure-md",
        r"10 of them global \(5, 11, \.\.\., 59\)",
        "layers-measure",
        r"10 global at \[5, 11, .*, 59\]",
    ),
    (
        "layers-measure-md",
        r"12 without RoPE \(3, 7, \.\.\., 47\)",
        "layers-measure",
        r"12 without RoPE at \[3, 7, .*, 47\]",
    ),
    ("scales-measure-md", r"1\.0693147", "scales-measure", r"8191: scale 1\.0693147"),
    ("scales-measure-md", r"1\.2197225", "scales-measure", r"65535: scale 1\.2197225"),
    ("scales-measure-md", r"1\.4812184", "scales-measure", r"999999: scale 1\.4812184"),
    (
        "scales-measure-md",
        r"0\.21 at\s+\$n = 1024\$",
        "scales-measure",
        r"n =    1024: weight of the key 0\.21",
    ),
    (
        "scales-measure-md",
        r"0\.00024 at a million",
        "scales-measure",
        r"n = 1000000: weight of the key 0\.00024,",
    ),
    ("scales-measure-md", r"0\.040, 0\.011 and 0\.0024", "scales-measure", r"1\.4812: 0\.0024"),
    (
        "sink-measure-md",
        r"tokens 0, 1, 5, 6,\s+7, 8",
        "sink-measure",
        r"kept tokens \[0, 1, 5, 6, 7, 8\]",
    ),
    ("mla-measure-md", r"576 values", "mla-measure", r"576 values per token and layer"),
    ("mla-measure-md", r"32,768: 56\.9 times", "mla-measure", r"32768: 56\.9x fewer"),
    ("mla-measure-md", r"up to 3\.98", "mla-measure", r"differ by up to 3\.98"),
]


# Round-off: the prose names its order, the cell prints a value under it. The digits depend on
# the processor and the BLAS kernel (1.8e-15 on one machine, 3.6e-15 on another), so only the
# bound is a claim. (Markdown cell, the bound as the prose says it, code cell, the printed
# value's pattern with one group, the bound.)
BOUNDS = [
    (
        "rerotate-measure-md",
        r"less than \$10\^\{-15\}\$",
        "rerotate-measure",
        r"difference: (\S+)",
        1e-15,
    ),
    ("sink-measure-md", r"5 by less than \$10\^\{-15\}\$", "sink-measure", r"afresh (\S+)", 1e-15),
    (
        "sink-measure-md",
        r"less than \$10\^\{-14\}\$",
        "sink-measure",
        r"200 steps: .* difference (\S+)",
        1e-14,
    ),
    (
        "mla-measure-md",
        r"round-off \(below \$10\^\{-14\}\$\)",
        "mla-measure",
        r"\. c\| = (\S+)",
        1e-14,
    ),
]


@pytest.mark.parametrize(("md", "said", "cell", "printed", "bound"), BOUNDS)
def test_rope_today_round_off_is_below_the_bound_the_prose_names(
    rope_today, md, said, cell, printed, bound
):
    text, out = rope_today
    assert holds(text[md], said), f"{md} no longer says {said!r}"
    found = re.search(printed, out[cell])
    assert found, f"{cell} printed no {printed!r}:\n{out[cell]}"
    value = float(found.group(1).rstrip(",;"))
    assert 0 <= value < bound, f"{cell} printed {value:g}, the prose says below {bound:g}"


@pytest.mark.parametrize(("md", "said", "cell", "printed"), CLAIMS)
def test_rope_today_prose_matches_its_cells(rope_today, md, said, cell, printed):
    text, out = rope_today
    assert holds(text[md], said), f"{md} no longer says {said!r}"
    assert holds(out[cell], printed), f"{cell} printed:\n{out[cell]}"


def test_the_course_map_is_measured_again(rope_today):
    _, out = rope_today
    table = out["course-map-code"]
    for row in (
        r"GPT-NeoX-20B: 12 of 48 pairs rotate",
        r"Gemma 4: 64 pairs, slowest 0\.0334 \(partial rotary: 1\.24e-06\)",
        r"Phi-3 128k attention factor: 1\.1902",
        r"Gemma 3 global layers of 62: 10 \| Llama 4 NoPE layers of 48: 12",
        r"DeepSeek-V3 cache: 576 vs 32768 = 56\.9x",
    ):
        assert holds(table, row), f"missing {row!r} in:\n{table}"


def test_the_sink_cache_error_quoted_for_transformers_is_the_recorded_one():
    """The prose quotes 4.52.4's distance from a fresh rotation on the notebook's two streams."""
    data = json.loads((ROOT / "tests" / "data" / "transformers_rope_today.json").read_text())
    short, long = data["sink"]["sink_demo"]
    assert (short["W"], short["num_sink"], short["tokens"]) == (6, 2, 9)
    assert (long["W"], long["num_sink"], long["tokens"]) == (16, 4, 216)
    text = nbformat.read(ROOT / "source/12_rope_today/12_rope_today.ipynb", as_version=4)
    md = next(c.source for c in text.cells if c.get("id") == "sink-measure-md")
    for value in (short["hf_max_abs_diff"], long["hf_max_abs_diff"]):
        mantissa, exponent = f"{value:.1e}".split("e")
        assert f"{mantissa}\\cdot10^{{{int(exponent)}}}" in md, (value, md)


def test_the_recent_table_quotes_transformers_own_rates(rope_today):
    """Every rate of 12's table of recent models is the one transformers' initialisers gave
    (recorded in tests/data/transformers_rope_recent.json), printed to six digits."""
    text, _ = rope_today
    recent = json.loads((ROOT / "tests" / "data" / "transformers_rope_recent.json").read_text())
    rows = {
        "Llama 2 Long (ABF)": "abf_llama3",
        "Llama 3 ": "abf_llama3",
        "Llama 3.1": "llama3_1",
        "Qwen2.5, Qwen3": "qwen_yarn",
        "DeepSeek-V3": "deepseek_v3",
        "Gemma 3 27B (global layers)": "gemma3_global",
        "Qwen3.5 |": "qwen3_5_released",
        "Qwen3.5 past 262,144": "qwen3_5_yarn4",
        "gpt-oss": "gpt_oss_class",
        "Kimi K2": "kimi_k2",
    }
    lines = text["recent-md"].splitlines()
    for label, key in rows.items():
        line = next(x for x in lines if x.startswith(f"| {label}"))
        rates = (recent["recent"].get(key) or recent["configs"][key])["inv_freq"]
        for value in (rates[0], rates[len(rates) // 2], rates[-1]):
            shown = f"{value:.6g}".replace("e-0", "e-")
            if "e" in shown:  # six digits in the mantissa, as the table writes them
                mantissa, exponent = f"{value:.5e}".split("e")
                shown = f"{mantissa}e{int(exponent)}"
            assert shown in line, (label, shown, line)


def test_the_2026_rows_are_transformers_own(rope_today):
    """The attention factors, layer plans and config values the 2025-26 rows and sections quote
    are the ones transformers 5.24.0 gave (its config classes and initialisers, recorded)."""
    text, out = rope_today
    configs = json.loads((ROOT / "tests" / "data" / "transformers_rope_recent.json").read_text())[
        "configs"
    ]
    lines = text["recent-md"].splitlines()
    for label, key in (("Qwen3.5 past 262,144", "qwen3_5_yarn4"), ("gpt-oss", "gpt_oss_class")):
        line = next(x for x in lines if x.startswith(f"| {label}"))
        assert f"{configs[key]['attention_factor']:.6g} on cos and sin" in line, (label, line)
    # Kimi K2 (DeepSeek-V3's classes, its released config): the step of its YaRN, its scale
    kimi = json.loads((ROOT / "tests" / "data" / "transformers_rope_recent.json").read_text())[
        "recent"
    ]["kimi_k2"]
    rates = np.array(kimi["inv_freq"])
    plain = 5e4 ** (-np.arange(0, 64, 2) / 64)
    kept, divided = np.isclose(rates, plain, rtol=1e-6), np.isclose(rates, plain / 32, rtol=1e-6)
    assert (kept.sum(), divided.sum(), (kept | divided).all()) == (20, 12, True)
    assert bool(np.all(plain[kept] * 4096 / (2 * np.pi) >= 1))
    line = next(x for x in lines if x.startswith("| Kimi K2"))
    scale = kimi["softmax_scale"] * math.sqrt(kimi["qk_head_dim"])
    assert f"softmax scale $\\times {scale:.6g}$" in line, (scale, line)
    md = " ".join(text["recent-md"].split())
    assert "the 20 pairs that turn at least once in 4096 positions keep their rate" in md
    assert "the 12 slower ones are divided by 32" in md
    gpt = configs["gpt_oss_class"]
    assert gpt["rope_parameters"]["rope_theta"] == 150000 and gpt["sliding_window"] == 128
    assert gpt["rope_parameters"]["factor"] == 32 and gpt["head_dim"] == 64
    assert gpt["layer_types"][:2] == ["sliding_attention", "full_attention"]
    q = configs["qwen3_5_class"]
    assert q["head_dim"] == 256 and q["rope_parameters"]["partial_rotary_factor"] == 0.25
    assert q["mrope_section_default"] == [11, 11, 10] and q["rope_parameters"]["rope_theta"] == 1e4
    full = [i for i, t in enumerate(q["layer_types"]) if t == "full_attention"]
    assert (len(full), len(q["layer_types"]), full[:2], full[-1]) == (8, 32, [3, 7], 31)
    smol = configs["smollm3_class"]
    assert [i for i, u in enumerate(smol["no_rope_layers"]) if not u] == list(range(3, 36, 4))
    assert smol["rope_parameters"]["rope_theta"] == 2e6 and smol["num_hidden_layers"] == 36
    cohere = configs["cohere2_class"]
    glob = [i for i, t in enumerate(cohere["layer_types"]) if t == "full_attention"]
    assert glob == list(range(3, 40, 4)) and cohere["sliding_window"] == 4096
    assert configs["gemma4_class"]["max_position_embeddings"] == 131072
    v32 = configs["deepseek_v3_2_class"]
    assert (v32["kv_lora_rank"], v32["qk_rope_head_dim"], v32["qk_nope_head_dim"]) == (512, 64, 128)
    assert v32["index_topk"] == 2048
    v4 = configs["deepseek_v4_class"]
    assert v4["head_dim"] == 512 and v4["rope_parameters"]["main"]["partial_rotary_factor"] == 0.125
    assert v4["rope_parameters"]["compress"]["rope_theta"] == 160000
    assert v4["num_key_value_heads"] == 1 and v4["max_position_embeddings"] == 1048576
    printed = out["recent"]
    qwen = configs["qwen3_5_released"]["inv_freq"]
    for value in (qwen[0], qwen[16], qwen[31]):
        assert f"'{value:.6g}'" in printed, (value, printed)
    assert holds(printed, r"0\.1 ln 32 \+ 1 = 1\.34657")


def test_the_2026_course_map_rows_are_measured_again(rope_today):
    text, out = rope_today
    table = out["course-map-code"]
    for row in (
        r"Qwen3\.5: pairs per axis \(t, h, w\): \[11, 11, 10\]",
        r"SmolLM3 NoPE layers of 36: 9 \| Command A of 40: 10",
        r"gpt-oss, \[\[0, 0\]\] with a sink of 0: \[0\.3333, 0\.3333\]",
    ):
        assert holds(table, row), f"missing {row!r} in:\n{table}"
    for said in (
        r"11 temporal, 11 height, 10 width",
        r"9 NoPE layers of 36; 10 of 40",
        r"1/3 each",
    ):
        assert holds(text["course-map"], said), said

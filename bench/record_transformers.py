"""Record what Hugging Face transformers computes for T5's buckets and the RoPE rates.

Run once, where torch and transformers are installed (not in the course's .venv):

    python3 -m venv /tmp/hfvenv && /tmp/hfvenv/bin/pip install torch transformers
    /tmp/hfvenv/bin/python bench/record_transformers.py

It writes ``tests/data/transformers_rope_t5.json`` (about 0.6 MB), which the tests of
notebooks 09_families and 10_long_context read (they need neither torch nor transformers):

- ``t5_buckets``: ``T5Attention._relative_position_bucket`` for every rel in [-5000, 5000],
  for several (bidirectional, num_buckets, max_distance), run-length encoded: each run is
  ``[first_rel, bucket, count]`` and the runs cover the whole range in order;
- ``rope``: the ``inv_freq`` (float32, written with 9 significant digits, enough to read
  back the same float32) and the attention factor of ``ROPE_INIT_FUNCTIONS`` for
  ``rope_type`` "linear", "dynamic", "yarn" and "llama3", and of the default RoPE
  (``LlamaRotaryEmbedding.compute_default_rope_parameters``), on a fixed sample of even d
  in 4..256, base 1e4..1e6, factor 1..32, original_max 512..8192 and, for "dynamic",
  seq_len; with the versions of transformers and torch that computed them.

Where torch or transformers is missing (as in the course's .venv, so that ``make bench``
goes on) it says so and leaves the recorded file as it is.
"""

from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "transformers_rope_t5.json"
REL_RANGE = (-5000, 5000)
SEED = 20260910
PER_TYPE = 110  # sampled configurations per rope_type, besides the corners


def t5_settings() -> list[tuple[bool, int, int]]:
    """(bidirectional, num_buckets, max_distance): T5's default, both directions, small and
    large bucket counts, max_distance just above num_buckets // 2 and large."""
    out = []
    for bidirectional in (True, False):
        for nb in (4, 8, 16, 32, 64):
            for md in sorted({nb // 2 + 1, nb // 2 + 3, 2 * nb, 128, 1000, 5000}):
                out.append((bidirectional, nb, md))
    return out


def record_t5(torch, T5Attention) -> list[dict]:
    lo, hi = REL_RANGE
    rel = torch.arange(lo, hi + 1, dtype=torch.long)
    out = []
    for bidirectional, nb, md in t5_settings():
        buckets = T5Attention._relative_position_bucket(
            rel, bidirectional=bidirectional, num_buckets=nb, max_distance=md
        ).tolist()
        runs: list[list[int]] = []
        for r, b in zip(range(lo, hi + 1), buckets):
            if runs and runs[-1][1] == b:
                runs[-1][2] += 1
            else:
                runs.append([r, int(b), 1])
        out.append(
            {"bidirectional": bidirectional, "num_buckets": nb, "max_distance": md, "runs": runs}
        )
    return out


def rope_cases() -> list[dict]:
    """A fixed sample of the grid the spec names, with its corners."""
    rng = random.Random(SEED)
    factors = [1.0, 1.5, 2.0, 3.0, 4.0, 6.5, 8.0, 10.0, 16.0, 24.0, 32.0]
    corners = [
        {"d": d, "base": base, "factor": factor, "original_max": om}
        for d in (4, 128, 256)
        for base in (1e4, 1e6)
        for factor in (1.0, 32.0)
        for om in (512, 8192)
    ]

    def sample() -> dict:
        return {
            "d": rng.randrange(4, 258, 2),
            "base": rng.choice([1e4, 5e5, 1e6, round(10 ** rng.uniform(4, 6), 3)]),
            "factor": rng.choice(factors + [round(rng.uniform(1, 32), 4)]),
            "original_max": rng.choice([512, 1024, 2048, 4096, 8192, rng.randrange(512, 8193)]),
        }

    cases = []
    for d, base in [(d, b) for d in (4, 6, 64, 128, 256) for b in (1e4, 5e5, 1e6)]:
        cases.append({"rope_type": "default", "d": d, "base": base})
    for rope_type in ("linear", "dynamic", "yarn", "llama3"):
        for params in corners + [sample() for _ in range(PER_TYPE)]:
            case = {"rope_type": rope_type, **params}
            if rope_type == "linear":
                del case["original_max"]
            if rope_type == "dynamic":
                om = case["original_max"]
                case["seq_len"] = rng.choice(
                    [1, om - 1, om, om + 1, 2 * om, int(case["factor"] * om), 5 * om + 3]
                )
            if rope_type == "yarn" and rng.random() < 0.2:
                case["beta_fast"], case["beta_slow"] = rng.choice([(16, 2), (64, 1), (8, 0.5)])
            if rope_type == "llama3":
                low, high = rng.choice([(1.0, 4.0)] * 3 + [(2.0, 8.0), (1.0, 2.0), (0.5, 3.0)])
                case["low_freq_factor"], case["high_freq_factor"] = low, high
            cases.append(case)
    return cases


def hf_config(LlamaConfig, case: dict):
    """A LlamaConfig whose single head has dimension d, built as transformers expects."""
    d, om = case["d"], case.get("original_max", 2048)
    params: dict = {"rope_type": case["rope_type"], "rope_theta": case["base"]}
    max_pos = om
    if case["rope_type"] != "default":
        params["factor"] = case["factor"]
    if case["rope_type"] == "yarn":
        # max_position_embeddings = original_max: no implicit factor, `factor` is used as given
        params["original_max_position_embeddings"] = om
        for key in ("beta_fast", "beta_slow"):
            if key in case:
                params[key] = case[key]
    if case["rope_type"] == "llama3":
        params["original_max_position_embeddings"] = om
        params["low_freq_factor"] = case["low_freq_factor"]
        params["high_freq_factor"] = case["high_freq_factor"]
        max_pos = max(om + 1, math.ceil(case["factor"] * om))
    return LlamaConfig(
        hidden_size=d,
        num_attention_heads=1,
        num_key_value_heads=1,
        head_dim=d,
        intermediate_size=4,
        num_hidden_layers=1,
        vocab_size=8,
        max_position_embeddings=max_pos,
        rope_parameters=params,
    )


def record_rope(ROPE_INIT_FUNCTIONS, LlamaConfig, LlamaRotaryEmbedding) -> list[dict]:
    out = []
    for case in rope_cases():
        config = hf_config(LlamaConfig, case)
        if case["rope_type"] == "default":
            inv_freq, attention_factor = LlamaRotaryEmbedding.compute_default_rope_parameters(
                config
            )
        else:
            fn = ROPE_INIT_FUNCTIONS[case["rope_type"]]
            inv_freq, attention_factor = fn(config, device=None, seq_len=case.get("seq_len"))
        assert inv_freq.shape == (case["d"] // 2,), (case, inv_freq.shape)
        case["inv_freq"] = [float(format(v, ".9g")) for v in inv_freq.tolist()]
        case["attention_factor"] = float(attention_factor)
        out.append(case)
    return out


def main() -> int:
    try:
        import torch
        import transformers
        from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
        from transformers.models.llama.configuration_llama import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
        from transformers.models.t5.modeling_t5 import T5Attention
    except ImportError as exc:
        print(
            f"record_transformers: torch and transformers are needed ({exc}); "
            f"{OUT.relative_to(OUT.parents[2])} is left as recorded"
        )
        return 0
    transformers.logging.set_verbosity_error()
    data = {
        "about": "recorded by bench/record_transformers.py; see its docstring",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "rel_range": list(REL_RANGE),
        "t5_buckets": record_t5(torch, T5Attention),
        "rope": record_rope(ROPE_INIT_FUNCTIONS, LlamaConfig, LlamaRotaryEmbedding),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    types = ("default", "linear", "dynamic", "yarn", "llama3")
    counts = {t: sum(r["rope_type"] == t for r in data["rope"]) for t in types}
    print(
        f"wrote {OUT} ({OUT.stat().st_size / 1e6:.2f} MB): transformers {transformers.__version__}, "
        f"torch {torch.__version__}, {len(data['t5_buckets'])} bucket settings, "
        f"{len(data['rope'])} rope cases ({counts})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

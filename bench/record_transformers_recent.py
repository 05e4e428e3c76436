"""Record what transformers computes for Qwen3-VL's interleaved M-RoPE (notebook 11_rope_nd) and
for the long-context settings of recent models (notebook 12_rope_today, section 7).

Run once, where torch and transformers are installed (not in the course's .venv):

    python3 -m venv /tmp/hfrecent && /tmp/hfrecent/bin/pip install torch==2.13.0 transformers==5.24.0
    /tmp/hfrecent/bin/python bench/record_transformers_recent.py

It writes ``tests/data/transformers_rope_recent.json``, which tests/test_reference_rope_nd.py,
tests/test_reference_rope_today.py and the claims tests of 11 and 12 read (they need neither
torch nor transformers). Every case is drawn from a fixed seed; floats are written with 17
significant digits (float32 values read back exactly):

- ``mrope_interleaved``: ``Qwen3VLTextRotaryEmbedding`` (``transformers.models.qwen3_vl``) with
  ``Qwen3VLTextConfig(head_dim=d, rope_parameters={"rope_type": "default", "rope_theta": base,
  "mrope_section": [...], "mrope_interleaved": True})``: its angles
  ``recomposition_frequencies(position_ids[..., None] * inv_freq)``, first d/2 columns (float32),
  for the spec's example, Qwen3-VL's layout and random even d from 6 to 256, bases 100 .. 1e6,
  sections that interleave and ids up to 4096; the recorder checks that forward's cos and sin are
  the cos and sin of these angles, and records whether three equal rows give 1D RoPE bitwise;
- ``recent``: ``ROPE_INIT_FUNCTIONS[rope_type](config)`` (``inv_freq`` and the attention factor;
  for ``rope_type="default"``, which that table leaves out, ``LlamaRotaryEmbedding``'s
  ``compute_default_rope_parameters``)
  for the settings of 12's table: ABF / Llama 3 (default, base 5e5), Llama 3.1 (``llama3``),
  Qwen2.5 / Qwen3 (static YaRN x 4), DeepSeek-V3 (YaRN x 40 with mscale, and
  ``DeepseekV3Attention.scaling``), Gemma 3's global layers (``linear`` x 8).

Where torch or transformers is missing (as in the course's .venv, so that ``make bench`` goes
on) it says so and leaves the recorded file as it is.
"""

from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "transformers_rope_recent.json"
SEED = 20261231
EXAMPLE_IDS = [
    [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
    [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
    [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
]


def f17(values) -> list[float]:
    return [float(format(v, ".17g")) for v in values]


def interleaved_case(torch, Qwen3VLTextConfig, Qwen3VLTextRotaryEmbedding, d, base, section, ids):
    config = Qwen3VLTextConfig(
        hidden_size=d,
        num_attention_heads=1,
        num_key_value_heads=1,
        head_dim=d,
        rope_parameters={
            "rope_type": "default",
            "rope_theta": base,
            "mrope_section": section,
            "mrope_interleaved": True,
        },
    )
    emb = Qwen3VLTextRotaryEmbedding(config)
    pos = torch.tensor(ids)[:, None, :]  # (3, batch 1, N)
    angles = emb.recomposition_frequencies(pos[..., None].float() * emb.inv_freq)[0]
    cos, sin = emb(torch.zeros(1, dtype=torch.float32), pos)
    assert torch.equal(cos[0], angles.cos()) and torch.equal(sin[0], angles.sin()), "forward"
    p = torch.tensor(ids[0])
    text = emb.recomposition_frequencies(p.expand(3, 1, -1)[..., None].float() * emb.inv_freq)[0]
    bitwise = bool(torch.equal(text[:, : d // 2], p[:, None].float() * emb.inv_freq))
    return {
        "d": d,
        "base": base,
        "mrope_section": section,
        "position_ids": ids,
        "inv_freq": f17(emb.inv_freq.tolist()),
        "angles": [f17(r) for r in angles[:, : d // 2].tolist()],
    }, bitwise


def record_interleaved(torch, rng) -> dict:
    from transformers.models.qwen3_vl.configuration_qwen3_vl import Qwen3VLTextConfig
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding

    unit = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]  # token a: id 1 on axis a only
    settings = [
        (8, 1e4, [2, 1, 1], EXAMPLE_IDS),
        (128, 1e6, [24, 20, 20], unit),
        (128, 1e6, [24, 20, 20], [[0, 7, 0, 0], [0, 0, 15, 0], [0, 0, 0, 15]]),
        (128, 5e5, [24, 20, 20], None),
        (128, 1e6, [16, 24, 24], None),
    ]
    for _ in range(24):
        d = 2 * rng.randint(3, 128)
        half = d // 2
        s_h = rng.randint(0, half // 3)
        s_w = rng.randint(0, min(half // 3, half - s_h))
        settings.append((d, 10 ** rng.uniform(2, 6), [half - s_h - s_w, s_h, s_w], None))
    cases, bitwise = [], []
    for d, base, section, ids in settings:
        if ids is None:
            ids = [[rng.randint(0, 4096) for _ in range(6)] for _ in range(3)]
        case, same = interleaved_case(
            torch, Qwen3VLTextConfig, Qwen3VLTextRotaryEmbedding, d, base, section, ids
        )
        cases.append(case)
        bitwise.append(same)
    return {"cases": cases, "text_only_is_1d_bitwise": all(bitwise)}


def init(config, rope_type, layer_type=None) -> dict:
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    kwargs = {"layer_type": layer_type} if layer_type else {}
    if rope_type == "default":  # not in ROPE_INIT_FUNCTIONS: each model's own initialiser
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

        inv_freq, attention = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    else:
        inv_freq, attention = ROPE_INIT_FUNCTIONS[rope_type](config, "cpu", **kwargs)
    return {"inv_freq": f17(inv_freq.tolist()), "attention_factor": float(attention)}


def record_recent(torch) -> dict:
    from transformers import DeepseekV3Config, Gemma3TextConfig, LlamaConfig, Qwen3Config
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention

    out = {}
    llama = {"hidden_size": 4096, "num_attention_heads": 32, "head_dim": 128}
    out["abf_llama3"] = {
        "setting": {"d": 128, "base": 5e5},
        **init(
            LlamaConfig(**llama, rope_parameters={"rope_type": "default", "rope_theta": 5e5}),
            "default",
        ),
    }
    params = {
        "rope_type": "llama3",
        "rope_theta": 5e5,
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }
    out["llama3_1"] = {
        "setting": {"d": 128, "base": 5e5, "factor": 8.0, "original_max": 8192},
        **init(
            LlamaConfig(**llama, max_position_embeddings=131072, rope_parameters=params), "llama3"
        ),
    }
    params = {
        "rope_type": "yarn",
        "rope_theta": 1e6,
        "factor": 4.0,
        "original_max_position_embeddings": 32768,
    }
    qwen = Qwen3Config(
        hidden_size=4096,
        num_attention_heads=32,
        head_dim=128,
        max_position_embeddings=131072,
        rope_parameters=params,
    )
    out["qwen_yarn"] = {
        "setting": {"d": 128, "base": 1e6, "factor": 4.0, "original_max": 32768},
        **init(qwen, "yarn"),
    }
    params = {
        "rope_type": "yarn",
        "rope_theta": 1e4,
        "factor": 40.0,
        "original_max_position_embeddings": 4096,
        "beta_fast": 32,
        "beta_slow": 1,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
    }
    deepseek = DeepseekV3Config(
        hidden_size=1024,
        num_attention_heads=8,
        num_key_value_heads=8,
        q_lora_rank=64,
        kv_lora_rank=512,
        qk_nope_head_dim=128,
        qk_rope_head_dim=64,
        v_head_dim=128,
        max_position_embeddings=163840,
        rope_parameters=params,
    )
    attention = DeepseekV3Attention(deepseek, layer_idx=0)
    out["deepseek_v3"] = {
        "setting": {"d": 64, "base": 1e4, "factor": 40.0, "original_max": 4096},
        "head_dim": int(deepseek.head_dim) if getattr(deepseek, "head_dim", None) else None,
        "qk_head_dim": int(attention.qk_head_dim),
        "softmax_scale": float(attention.scaling),
        **init(deepseek, "yarn"),
    }
    gemma = Gemma3TextConfig(
        hidden_size=5376,
        num_attention_heads=32,
        head_dim=128,
        rope_parameters={
            "full_attention": {"rope_type": "linear", "rope_theta": 1e6, "factor": 8.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
        },
    )
    out["gemma3_global"] = {
        "setting": {"d": 128, "base": 1e6, "factor": 8.0},
        **init(gemma, "linear", "full_attention"),
    }
    return out


def main() -> int:
    try:
        import torch
        import transformers
    except ImportError as exc:
        print(
            f"record_transformers_recent: torch and transformers are needed ({exc}); "
            f"{OUT.relative_to(OUT.parents[2])} is left as recorded"
        )
        return 0
    transformers.logging.set_verbosity_error()
    rng = random.Random(SEED)
    data = {
        "about": "recorded by bench/record_transformers_recent.py; see its docstring",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "mrope_interleaved": record_interleaved(torch, rng),
        "recent": record_recent(torch),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    n = len(data["mrope_interleaved"]["cases"])
    print(
        f"wrote {OUT} ({OUT.stat().st_size / 1e3:.0f} kB): transformers {transformers.__version__}, "
        f"torch {torch.__version__}, {n} interleaved M-RoPE cases, "
        f"{len(data['recent'])} recent settings; text-only bitwise: "
        f"{data['mrope_interleaved']['text_only_is_1d_bitwise']}; "
        f"DeepSeek-V3 softmax scale x {data['recent']['deepseek_v3']['softmax_scale'] * math.sqrt(192):.5f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

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
  ``DeepseekV3Attention.scaling``), Kimi K2 (DeepSeek-V3's classes with its released config's
  base 5e4 and YaRN x 32, ``beta_fast`` = ``beta_slow`` = 1), Gemma 3's global layers
  (``linear`` x 8);
- ``mrope_interleaved_edge``: the same embedding at the bound of the interleave (a height section
  with ``3 * s_h = d/2 + 1``, which transformers' ``slice(1, 3 * s_h, 3)`` still takes whole, and a
  width section with ``3 * s_w = d/2 + 1``, which it cuts to ``s_w - 1`` pairs): how many pairs each
  axis got;
- ``qwen35``: ``Qwen3_5TextRotaryEmbedding`` (``transformers.models.qwen3_5``) with
  ``Qwen3_5TextConfig(head_dim=..., rope_parameters={"rope_type": "default", "rope_theta": base,
  "partial_rotary_factor": p, "mrope_section": [...]})``: its rates and the angles
  ``recomposition_frequencies(position_ids[..., None] * inv_freq)``, first rot/2 columns (float32), on
  48 cases: Qwen3.5's setting (head_dim 256, p 0.25, ``[11, 11, 10]``, base 1e7), three equal id rows,
  random head_dim and fractions with sections that interleave; the recorder checks that forward's
  cos and sin are the cos and sin of these angles; one setting past the bound shows what HF does then;
- ``sinks``: ``eager_attention_forward`` of ``transformers.models.gpt_oss.modeling_gpt_oss`` (the
  learned sinks of ``GptOssAttention``, float64) on 48 cases of scores ``(B, H, T, S)``, hidden keys,
  sinks and large scores: the query is the scores, the keys the identity, ``scaling`` 1, a hidden key
  an additive ``-inf`` in ``attention_mask``; it returns the weights with the sink column dropped;
- ``vision``: positions inside the vision towers and of video: the rates of
  ``Qwen2VLVisionRotaryEmbedding`` and ``Qwen3VLVisionRotaryEmbedding`` (their configs' defaults),
  the bilinear taps by which Qwen3-VL's 48 x 48 learned table (``num_position_embeddings`` 2304)
  is read for a 32 x 32 grid (``get_vision_interpolation_indices_and_weights``), and the
  temporal ids ``get_rope_index`` gives a video in Qwen2-VL and Qwen2.5-VL (called on a config
  alone: the method reads nothing else);
- ``configs``: what transformers' config classes say of 2025-26 models (``Qwen3_5TextConfig``,
  ``GptOssConfig``, ``SmolLM3Config``, ``Cohere2Config``, ``DeepseekV32Config``, ``DeepseekV4Config``,
  ``Gemma4TextConfig``'s length)
  and the rates of the released settings of Qwen3.5 and gpt-oss through ``ROPE_INIT_FUNCTIONS``.

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

    def mla(base: float, factor: float, beta_fast: float, positions: int) -> dict:
        """DeepSeek-V3's attention (64 rotated dims of a 192-dim score) with YaRN: its rates,
        attention factor and softmax scale (``DeepseekV3Attention.scaling``)."""
        params = {
            "rope_type": "yarn",
            "rope_theta": base,
            "factor": factor,
            "original_max_position_embeddings": 4096,
            "beta_fast": beta_fast,
            "beta_slow": 1,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
        }
        config = DeepseekV3Config(
            hidden_size=1024,
            num_attention_heads=8,
            num_key_value_heads=8,
            q_lora_rank=64,
            kv_lora_rank=512,
            qk_nope_head_dim=128,
            qk_rope_head_dim=64,
            v_head_dim=128,
            max_position_embeddings=positions,
            rope_parameters=params,
        )
        attention = DeepseekV3Attention(config, layer_idx=0)
        return {
            "setting": {"d": 64, "base": base, "factor": factor, "original_max": 4096},
            "head_dim": int(config.head_dim) if getattr(config, "head_dim", None) else None,
            "qk_head_dim": int(attention.qk_head_dim),
            "softmax_scale": float(attention.scaling),
            **init(config, "yarn"),
        }

    out["deepseek_v3"] = mla(1e4, 40.0, 32, 163840)
    # Kimi K2: DeepSeek-V3's architecture (its released config.json: model_type "kimi_k2",
    # architectures DeepseekV3ForCausalLM) with its own base and YaRN: beta_fast = beta_slow = 1
    out["kimi_k2"] = mla(5e4, 32.0, 1.0, 131072)
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


def record_interleaved_edge(torch) -> list[dict]:
    """Qwen3-VL's interleave at its bound: how many pairs each axis gets."""
    from transformers.models.qwen3_vl.configuration_qwen3_vl import Qwen3VLTextConfig
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding

    out = []
    for d, section in [(64, [11, 11, 10]), (64, [10, 11, 11]), (16, [2, 3, 3]), (16, [3, 3, 2])]:
        ids = [[0], [1], [2]]  # height 1, width 2: each pair's angle / rate names its axis
        case, _ = interleaved_case(
            torch, Qwen3VLTextConfig, Qwen3VLTextRotaryEmbedding, d, 1e4, section, ids
        )
        axes = [round(a / r) for a, r in zip(case["angles"][0], case["inv_freq"])]
        out.append(
            {**case, "axis_of_pair": axes, "pairs_per_axis": [axes.count(a) for a in range(3)]}
        )
    return out


def qwen35_case(torch, head_dim, p, base, section, ids) -> tuple[dict, bool]:
    from transformers import Qwen3_5TextConfig
    from transformers.models.qwen3_5.modeling_qwen3_5 import Qwen3_5TextRotaryEmbedding

    config = Qwen3_5TextConfig(
        hidden_size=head_dim,
        num_attention_heads=1,
        num_key_value_heads=1,
        head_dim=head_dim,
        rope_parameters={
            "rope_type": "default",
            "rope_theta": base,
            "partial_rotary_factor": p,
            "mrope_section": section,
            "mrope_interleaved": True,
        },
    )
    emb = Qwen3_5TextRotaryEmbedding(config)
    pos = torch.tensor(ids)[:, None, :]  # (3, batch 1, N)
    angles = emb.recomposition_frequencies(pos[..., None].float() * emb.inv_freq)[0]
    cos, sin = emb(torch.zeros(1, dtype=torch.float32), pos)
    assert torch.equal(cos[0], angles.cos()) and torch.equal(sin[0], angles.sin()), "forward"
    half = emb.inv_freq.numel()  # rot / 2
    p0 = torch.tensor(ids[0])
    text = emb.recomposition_frequencies(p0.expand(3, 1, -1)[..., None].float() * emb.inv_freq)[0]
    bitwise = bool(torch.equal(text[:, :half], p0[:, None].float() * emb.inv_freq))
    return {
        "head_dim": head_dim,
        "partial_rotary_factor": p,
        "base": base,
        "mrope_section": section,
        "position_ids": ids,
        "inv_freq": f17(emb.inv_freq.tolist()),
        "angles": [f17(r) for r in angles[:, :half].tolist()],
        "cos_width": int(cos.shape[-1]),
    }, bitwise


def record_qwen35(torch, rng) -> dict:
    """Qwen3.5's partial interleaved M-RoPE: 48 cases within the course's bounds, and one past."""
    p = [rng.randint(0, 4096) for _ in range(5)]
    settings = [
        (256, 0.25, 1e7, [11, 11, 10], [[0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]),
        (256, 0.25, 1e7, [11, 11, 10], [p, p, p]),
        (256, 0.25, 1e7, [11, 11, 10], None),
        (256, 0.25, 1e7, [11, 11, 10], EXAMPLE_IDS),
        (8, 1.0, 1e4, [2, 1, 1], EXAMPLE_IDS),
        (16, 0.5, 1e4, [2, 1, 1], EXAMPLE_IDS),
        (128, 1.0, 1e6, [24, 20, 20], None),
    ]
    while len(settings) < 48:
        head_dim = 2 * rng.randint(2, 256)
        frac = rng.choice([0.25, 0.5, 1.0, round(rng.uniform(0.05, 1.0), 4)])
        rot = int(head_dim * frac)
        half = rot // 2
        if rot % 2 or half < 2:
            continue
        s_h = rng.randint(0, min((half + 1) // 3, half))
        s_w = rng.randint(0, min(half // 3, half - s_h))
        settings.append(
            (head_dim, frac, 10 ** rng.uniform(2, 7), [half - s_h - s_w, s_h, s_w], None)
        )
    cases, bitwise = [], []
    for head_dim, frac, base, section, ids in settings:
        if ids is None:
            ids = [[rng.randint(0, 4096) for _ in range(6)] for _ in range(3)]
        case, same = qwen35_case(torch, head_dim, frac, base, section, ids)
        cases.append(case)
        bitwise.append(same)
    # Past the bound: 32 pairs, a height section of 12 (3 * 12 = 36 > 33): HF cuts it silently.
    past, _ = qwen35_case(torch, 256, 0.25, 1e7, [10, 12, 10], [[0], [1], [2]])
    axes = [round(a / r) for a, r in zip(past["angles"][0], past["inv_freq"])]
    past["pairs_per_axis"] = [axes.count(a) for a in range(3)]
    return {"cases": cases, "text_only_is_1d_bitwise": all(bitwise), "past_the_bound": past}


def sink_case(torch, scores, hidden, sinks) -> list:
    """gpt-oss's eager attention weights for the given scores (B, H, T, S), float64."""
    from transformers import GptOssConfig
    from transformers.models.gpt_oss.modeling_gpt_oss import (
        GptOssAttention,
        eager_attention_forward,
    )

    B, H, _T, S = scores.shape
    config = GptOssConfig(
        hidden_size=8,
        num_attention_heads=H,
        num_key_value_heads=H,
        head_dim=8,  # the projections are not used: only the sinks and the head count
        num_hidden_layers=1,
        layer_types=["full_attention"],
    )
    module = GptOssAttention(config, layer_idx=0).double().eval()
    with torch.no_grad():
        module.sinks.copy_(torch.tensor(sinks, dtype=torch.float64))
        key = torch.eye(S, dtype=torch.float64).expand(B, H, S, S)  # q . k_j = scores[..., j]
        value = torch.zeros(B, H, S, 1, dtype=torch.float64)
        mask = torch.where(torch.tensor(hidden), -math.inf, 0.0).to(torch.float64)
        _, weights = eager_attention_forward(module, scores, key, value, mask, scaling=1.0)
    return weights


def record_sinks(torch, rng) -> dict:
    """gpt-oss's learned sinks: 48 cases of scores, hidden keys and one sink logit per head."""
    fixed = [
        ([[[[0.0, 0.0]]]], [0.0]),
        ([[[[1000.0, 1000.0]]]], [0.0]),
        ([[[[1.0, 2.0, 3.0]]]], [-1000.0]),
        ([[[[0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0]]]], [0.0, 2.0]),
    ]
    cases = []
    for scores, sinks in fixed:
        hidden = [[[[False] * len(scores[0][0][0])] * len(scores[0][0])] * len(scores[0])]
        cases.append((scores, hidden, sinks))
    # a causal block with a fully hidden first row (every key hidden: the sink takes it all)
    cases.append(
        (
            [[[[0.5, -1.0, 2.0], [0.1, 0.2, 0.3]]]],
            [[[[True, True, True], [False, False, True]]]],
            [0.7],
        )
    )
    while len(cases) < 48:
        B, H, T, S = rng.choice([1, 2]), rng.randint(1, 8), rng.randint(1, 6), rng.randint(1, 8)
        scale = rng.choice([1.0, 3.0, 30.0, 1000.0])
        scores = [
            [
                [[round(rng.gauss(0, scale), 6) for _ in range(S)] for _ in range(T)]
                for _ in range(H)
            ]
            for _ in range(B)
        ]
        kind = rng.choice(["none", "causal", "random"])
        if kind == "none":
            hidden = [[[[False] * S for _ in range(T)] for _ in range(H)] for _ in range(B)]
        elif kind == "causal":  # query t sees keys up to S - T + t
            row = [[j > S - T + t for j in range(S)] for t in range(T)]
            hidden = [[row for _ in range(H)] for _ in range(B)]
        else:
            hidden = [
                [[[rng.random() < 0.3 for _ in range(S)] for _ in range(T)] for _ in range(H)]
                for _ in range(B)
            ]
        sinks = [round(rng.gauss(0, rng.choice([1.0, 5.0, 50.0])), 6) for _ in range(H)]
        cases.append((scores, hidden, sinks))
    out = []
    for scores, hidden, sinks in cases:
        weights = sink_case(torch, torch.tensor(scores, dtype=torch.float64), hidden, sinks)
        out.append(
            {
                "scores": scores,
                "hidden": hidden,
                "sink_logits": sinks,
                "weights": [[[f17(r) for r in t] for t in h] for h in weights.tolist()],
            }
        )
    return {"cases": out}


def record_vision(torch) -> dict:
    """The vision towers' positions and the temporal ids of a video."""
    from transformers import Qwen2_5_VLConfig, Qwen2VLConfig
    from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLModel
    from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLVisionConfig
    from transformers.models.qwen2_vl.modeling_qwen2_vl import (
        Qwen2VLModel,
        Qwen2VLVisionRotaryEmbedding,
    )
    from transformers.models.qwen3_vl.configuration_qwen3_vl import Qwen3VLVisionConfig
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLVisionRotaryEmbedding
    from transformers.vision_utils import get_vision_interpolation_indices_and_weights

    out = {}
    v2 = Qwen2VLVisionConfig()
    out["qwen2_vl_vit"] = {
        "embed_dim": v2.embed_dim,
        "num_heads": v2.num_heads,
        "rope_parameters": v2.rope_parameters,
        "inv_freq": f17(Qwen2VLVisionRotaryEmbedding(v2).inv_freq.tolist()),
    }
    v3 = Qwen3VLVisionConfig()
    out["qwen3_vl_vit"] = {
        "hidden_size": v3.hidden_size,
        "num_heads": v3.num_heads,
        "num_position_embeddings": v3.num_position_embeddings,
        "rope_parameters": v3.rope_parameters,
        "inv_freq": f17(Qwen3VLVisionRotaryEmbedding(v3).inv_freq.tolist()),
    }
    side = int(v3.num_position_embeddings**0.5)
    idx, w = get_vision_interpolation_indices_and_weights(
        torch.tensor([[1, 32, 32]]), side, mode="bilinear", align_corners=True, spatial_merge_size=1
    )
    first_col = [r * 32 for r in range(32)]  # patch (r, 0), raster order
    out["qwen3_vl_interpolation"] = {
        "grid": [32, 32],
        "side": side,
        "rows_of_column_0": [
            {"indices": idx[i].tolist(), "weights": f17(w[i].tolist())} for i in first_col
        ],
    }
    # a video of 4 temporal patches of 4 x 4 patches (2 x 2 tokens each) between text
    video_tokens = 4 * 4
    types_ = [0] * 3 + [2] * video_tokens + [0] * 2
    ids = torch.tensor([[1] * len(types_)])
    mm = torch.tensor([types_])
    grid = torch.tensor([[4, 4, 4]])
    videos = {}
    for name, Config, Model, extra in [
        ("qwen2_vl", Qwen2VLConfig, Qwen2VLModel, {}),
        (
            "qwen2_5_vl_1s",
            Qwen2_5_VLConfig,
            Qwen2_5_VLModel,
            {"second_per_grid_ts": torch.tensor([1.0])},
        ),
        (
            "qwen2_5_vl_half_s",
            Qwen2_5_VLConfig,
            Qwen2_5_VLModel,
            {"second_per_grid_ts": torch.tensor([0.5])},
        ),
    ]:
        vision = {"depth": 1, "num_heads": 2, "spatial_merge_size": 2, "out_hidden_size": 16}
        vision |= {"embed_dim": 16} if name == "qwen2_vl" else {"hidden_size": 16}
        if "2_5" in name:
            vision |= {
                "tokens_per_second": 2,
                "intermediate_size": 16,
                "fullatt_block_indexes": [0],
            }
        text = {
            "hidden_size": 16,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "intermediate_size": 16,
            "vocab_size": 8,
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 1e6,
                "mrope_section": [1, 1, 2],
            },
        }
        config = Config(text_config=text, vision_config=vision)
        with torch.no_grad():
            model = Model(config).eval()  # a tiny model: only its get_rope_index is called
        pos, _delta = model.get_rope_index(ids, mm_token_type_ids=mm, video_grid_thw=grid, **extra)
        videos[name] = {
            "position_ids": pos[:, 0].tolist(),
            "tokens_per_second": getattr(config.vision_config, "tokens_per_second", None),
            "temporal_patch_size": config.vision_config.temporal_patch_size,
        }
    out["video_ids"] = {"layout": "text 3, video 4 x (2 x 2 tokens), text 2", **videos}
    return out


def record_configs(torch) -> dict:
    """What transformers' config classes say of 2025-26 models, and the rates of the released
    settings of Qwen3.5 (base 1e7, partial 0.25, YaRN x 4 from 262,144) and gpt-oss."""
    from transformers import (
        Cohere2Config,
        DeepseekV4Config,
        DeepseekV32Config,
        Gemma4TextConfig,
        GptOssConfig,
        Qwen3_5TextConfig,
        SmolLM3Config,
    )
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    from transformers.models.qwen3_5.modeling_qwen3_5 import Qwen3_5TextRotaryEmbedding

    out = {}
    q = Qwen3_5TextConfig()
    out["qwen3_5_class"] = {
        "rope_parameters": q.rope_parameters,
        "head_dim": q.head_dim,
        "max_position_embeddings": q.max_position_embeddings,
        "layer_types": q.layer_types,
        "mrope_section_default": Qwen3_5TextRotaryEmbedding(q).mrope_section,
    }
    released = {"rope_theta": 1e7, "partial_rotary_factor": 0.25, "mrope_section": [11, 11, 10]}
    q = Qwen3_5TextConfig(
        max_position_embeddings=262144, rope_parameters={"rope_type": "default", **released}
    )
    emb = Qwen3_5TextRotaryEmbedding(q)
    out["qwen3_5_released"] = {
        "setting": released,
        "inv_freq": f17(emb.inv_freq.tolist()),
        "attention_factor": float(emb.attention_scaling),
    }
    q = Qwen3_5TextConfig(
        max_position_embeddings=1048576,
        rope_parameters={
            "rope_type": "yarn",
            "factor": 4.0,
            "original_max_position_embeddings": 262144,
            **released,
        },
    )
    emb = Qwen3_5TextRotaryEmbedding(q)
    out["qwen3_5_yarn4"] = {
        "inv_freq": f17(emb.inv_freq.tolist()),
        "attention_factor": float(emb.attention_scaling),
    }
    g = GptOssConfig()
    inv_freq, attention = ROPE_INIT_FUNCTIONS["yarn"](g, "cpu")
    out["gpt_oss_class"] = {
        "rope_parameters": g.rope_parameters,
        "head_dim": g.head_dim,
        "max_position_embeddings": g.max_position_embeddings,
        "sliding_window": g.sliding_window,
        "layer_types": g.layer_types,
        "num_attention_heads": g.num_attention_heads,
        "inv_freq": f17(inv_freq.tolist()),
        "attention_factor": float(attention),
    }
    s = SmolLM3Config()
    out["smollm3_class"] = {
        "rope_parameters": s.rope_parameters,
        "no_rope_layers": list(s.no_rope_layers),
        "num_hidden_layers": s.num_hidden_layers,
        "head_dim": s.hidden_size // s.num_attention_heads,
    }
    c = Cohere2Config()
    out["cohere2_class"] = {
        "rope_parameters": c.rope_parameters,
        "layer_types": c.layer_types,
        "sliding_window": c.sliding_window,
        "head_dim": c.hidden_size // c.num_attention_heads,
    }
    v = DeepseekV32Config()
    out["deepseek_v3_2_class"] = {
        "rope_parameters": v.rope_parameters,
        "kv_lora_rank": v.kv_lora_rank,
        "qk_rope_head_dim": v.qk_rope_head_dim,
        "qk_nope_head_dim": v.qk_nope_head_dim,
        "num_attention_heads": v.num_attention_heads,
        "index_topk": v.index_topk,
        "max_position_embeddings": v.max_position_embeddings,
    }
    out["gemma4_class"] = {"max_position_embeddings": Gemma4TextConfig().max_position_embeddings}
    v4 = DeepseekV4Config()
    out["deepseek_v4_class"] = {
        "rope_parameters": v4.rope_parameters,
        "head_dim": v4.head_dim,
        "qk_rope_head_dim": v4.qk_rope_head_dim,
        "num_key_value_heads": v4.num_key_value_heads,
        "max_position_embeddings": v4.max_position_embeddings,
        "sliding_window": v4.sliding_window,
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
        # each part below draws from its own seed, so the parts above stay as recorded
        "mrope_interleaved_edge": record_interleaved_edge(torch),
        "qwen35": record_qwen35(torch, random.Random(SEED + 1)),
        "sinks": record_sinks(torch, random.Random(SEED + 2)),
        "vision": record_vision(torch),
        "configs": record_configs(torch),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    n = len(data["mrope_interleaved"]["cases"])
    print(
        f"wrote {OUT} ({OUT.stat().st_size / 1e3:.0f} kB): transformers {transformers.__version__}, "
        f"torch {torch.__version__}, {n} interleaved M-RoPE cases, "
        f"{len(data['recent'])} recent settings; text-only bitwise: "
        f"{data['mrope_interleaved']['text_only_is_1d_bitwise']}; "
        f"DeepSeek-V3 softmax scale x {data['recent']['deepseek_v3']['softmax_scale'] * math.sqrt(192):.5f}; "
        f"{len(data['qwen35']['cases'])} Qwen3.5 cases, {len(data['sinks']['cases'])} sink cases"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

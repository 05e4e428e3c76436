"""Record what Hugging Face transformers computes for the functions of 12_rope_today.

Two parts, each run in its own environment (not in the course's .venv), because the sink
cache has left transformers (4.57 keeps a class that raises, 5.x has none). torch is the
CPU build of 2.13.0 (a local wheel here, ``TORCH=/opt/wheels/torch-2.13.0+cpu-*.whl``; a CUDA
build is neither needed nor wanted); transformers 4.52.4 installs beside it as it is:

    python3 -m venv /tmp/today && /tmp/today/bin/pip install $TORCH transformers==5.24.0 numpy
    /tmp/today/bin/python bench/record_transformers_today.py      # the "today" part
    python3 -m venv /tmp/sink && /tmp/sink/bin/pip install $TORCH transformers==4.52.4 numpy
    /tmp/sink/bin/python bench/record_transformers_today.py       # the "sink" part

Each run writes its part into ``tests/data/transformers_rope_today.json`` (about 0.56 MB)
and keeps the other part as recorded; the tests of 12_rope_today read it and need
neither torch nor transformers. Small configurations only, weights random and made
here (nothing is downloaded). What is recorded, on a fixed sample of the spec's ranges
(d 4 .. 512, bases 100 .. 1e6, fractions 0.02 .. 1, original lengths 512 .. 8192 ...):

today (transformers 5.x):
- ``partial``: ``GPTNeoXRotaryEmbedding.compute_default_rope_parameters`` of
  ``GPTNeoXConfig(rotary_pct=p, rotary_emb_base=base)``, and for a few cases GPT-NeoX's
  ``apply_rotary_pos_emb`` (float64) on random queries, with whether the unrotated dims
  come back bitwise unchanged;
- ``proportional``: ``ROPE_INIT_FUNCTIONS["proportional"]``, and Gemma 4's
  (``Gemma4TextConfig()``) rates and rope parameters per layer type;
- ``longrope``: ``ROPE_INIT_FUNCTIONS["longrope"]`` of ``Phi3Config`` (rates and attention factor);
- ``gemma3`` and ``llama4``: the RoPE base of each layer read from ``Gemma3TextConfig`` and
  ``Llama4TextConfig``;
- ``llama4_scales``: the factor by which ``Llama4TextAttention.forward`` multiplies the
  queries of a layer without RoPE, read from the queries it hands to attention (tuned over
  untuned), after a cache of a given length;
- ``mla``: the per-token shapes of the ``DynamicCache`` layer of ``DeepseekV3Model`` and of
  ``LlamaModel`` (num_key_value_heads = num_attention_heads) after 3 tokens.

sink (transformers 4.52.4):
- ``rerotate``: ``SinkCache._apply_key_rotary_pos_emb(keys, *_get_rerotation_cos_sin(...))``;
- ``sink_steps``: ``SinkCache.update`` step after step on a full window, the model's cos and
  sin (``LlamaRotaryEmbedding``) of slots 0 .. W - 1 in ``cache_kwargs``, new keys rotated at
  slots W - n .. W - 1; every cache in the interleaved layout;
- ``sink_demo``: the notebook's two streams and how far HF's cache is from rotating the kept
  raw keys afresh.

Where torch or transformers is missing (as in the course's .venv) it says so and leaves
the recorded file as it is.
"""

from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "transformers_rope_today.json"
SEED = 20261201
KEEP_ROWS = 4  # rows of each re-rotated block kept in the file


def g9(values) -> list[float]:
    """float32 values with 9 significant digits (enough to read back the same float32)."""
    return [float(format(v, ".9g")) for v in values]


def to_half(x: np.ndarray) -> np.ndarray:
    """Interleaved -> half-split layout (the course's interleaved_to_half)."""
    return np.concatenate([x[..., 0::2], x[..., 1::2]], axis=-1)


def to_interleaved(x: np.ndarray) -> np.ndarray:
    """Half-split -> interleaved layout (the inverse permutation)."""
    d = x.shape[-1]
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = x[..., : d // 2], x[..., d // 2 :]
    return out


def rounded(x: np.ndarray, digits: int = 10) -> list:
    """Outputs with 10 significant digits: far below the float32 rounding HF's caches carry
    (about 1e-7), and a tenth of the size of float64's 17."""
    return np.vectorize(lambda v: float(format(v, f".{digits}g")))(x).tolist()


def short_normal(nrng: np.random.Generator, *shape: int) -> np.ndarray:
    """Standard normal inputs rounded to 6 decimals: exact float64 inputs, short in JSON."""
    return np.round(nrng.normal(size=shape), 6)


def log_uniform(rng: random.Random, lo: float, hi: float) -> float:
    return float(format(10 ** rng.uniform(math.log10(lo), math.log10(hi)), ".6g"))


# --------------------------------------------------------------------------- today: 5.x


def record_partial(torch, rng: random.Random) -> dict:
    from transformers import GPTNeoXConfig
    from transformers.models.gpt_neox import modeling_gpt_neox as neox

    cases = []
    fixed = [(96, 1e4, 0.25), (64, 1e4, 1.0), (4, 100.0, 0.5), (512, 1e6, 0.02), (128, 1e4, 0.5)]
    while len(cases) < 60:
        if fixed:
            d, base, p = fixed.pop(0)
        else:
            d = rng.randrange(4, 514, 2)
            base = log_uniform(rng, 100, 1e6)
            p = rng.choice([0.25, 0.5, 1.0, round(rng.uniform(0.02, 1.0), 4)])
        rot = int(d * p)
        if rot < 2 or rot % 2:
            continue
        h = rng.choice([1, 2])
        cfg = GPTNeoXConfig(
            hidden_size=h * d, num_attention_heads=h, rotary_pct=p, rotary_emb_base=base
        )
        inv_freq, _ = neox.GPTNeoXRotaryEmbedding.compute_default_rope_parameters(cfg)
        cases.append({"d": d, "base": base, "p": p, "heads": h, "inv_freq": g9(inv_freq.tolist())})
    # HF takes an odd number of rotated dims (the course refuses it): d = 64, p = 0.3.
    cfg = GPTNeoXConfig(hidden_size=64, num_attention_heads=1, rotary_pct=0.3)
    odd, _ = neox.GPTNeoXRotaryEmbedding.compute_default_rope_parameters(cfg)

    # The rotation itself: float64 queries, HF's cos and sin of those rates.
    rotations = []
    nrng = np.random.default_rng(SEED)
    for d, base, p in [(96, 1e4, 0.25), (16, 100.0, 0.5), (40, 5e5, 0.3), (8, 1e4, 1.0)]:
        cfg = GPTNeoXConfig(
            hidden_size=d, num_attention_heads=1, rotary_pct=p, rotary_emb_base=base
        )
        emb = neox.GPTNeoXRotaryEmbedding(cfg)
        pos = nrng.integers(0, 4097, size=5)
        q = short_normal(nrng, 5, d)
        x = torch.tensor(q, dtype=torch.float64)[None, None]  # (1, 1, 5, d)
        cos, sin = emb(x, torch.tensor(pos)[None])
        rot = cos.shape[-1]
        half = q.copy()
        half[:, :rot] = to_half(q[:, :rot])  # the half-split layout within the rotated dims
        xh = torch.tensor(half, dtype=torch.float64)[None, None]
        out, _ = neox.apply_rotary_pos_emb(xh, xh, cos, sin)
        out = out[0, 0].numpy().copy()
        unchanged = bool(torch.equal(torch.tensor(out[:, rot:]), xh[0, 0, :, rot:]))
        out[:, :rot] = to_interleaved(out[:, :rot])
        rotations.append(
            {
                "d": d,
                "base": base,
                "p": p,
                "rot": rot,
                "pos": pos.tolist(),
                "q": q.tolist(),
                "out": rounded(out, 17),
                "pass_through_bitwise": unchanged,
            }
        )
    return {
        "cases": cases,
        "odd_rot": {"d": 64, "p": 0.3, "inv_freq": g9(odd.tolist())},
        "rotations": rotations,
    }


def record_proportional(torch, rng: random.Random) -> dict:
    from transformers import Gemma4TextConfig, LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding

    fn = ROPE_INIT_FUNCTIONS["proportional"]
    cases = []
    fixed = [(512, 1e6, 0.25, 1.0), (8, 1e4, 0.5, 1.0), (64, 1e4, 1.0, 2.0), (4, 100.0, 0.5, 1.0)]
    while len(cases) < 60:
        if fixed:
            d, base, p, factor = fixed.pop(0)
        else:
            d = rng.randrange(4, 514, 2)
            base = log_uniform(rng, 100, 1e6)
            p = rng.choice([0.25, 0.5, 1.0, round(rng.uniform(0.02, 1.0), 4)])
            factor = rng.choice([1.0, 1.0, 2.0, round(rng.uniform(1.0, 32.0), 3)])
        if int(p * d // 2) < 1:
            continue
        params = {
            "rope_type": "proportional",
            "rope_theta": base,
            "partial_rotary_factor": p,
            "factor": factor,
        }
        cfg = LlamaConfig(
            hidden_size=d,
            num_attention_heads=1,
            num_key_value_heads=1,
            head_dim=d,
            intermediate_size=4,
            num_hidden_layers=1,
            vocab_size=8,
            rope_parameters=params,
        )
        inv_freq, attention_factor = fn(cfg, "cpu")
        assert inv_freq.shape == (d // 2,), (d, inv_freq.shape)
        cases.append(
            {
                "d": d,
                "base": base,
                "p": p,
                "factor": factor,
                "inv_freq": g9(inv_freq.tolist()),
                "attention_factor": float(attention_factor),
            }
        )
    gemma4 = Gemma4TextConfig()
    emb = Gemma4TextRotaryEmbedding(gemma4)
    return {
        "cases": cases,
        "gemma4": {
            "rope_parameters": gemma4.rope_parameters,
            "global_head_dim": int(gemma4.per_layer_config["full_attention"].head_dim),
            "sliding_head_dim": int(gemma4.per_layer_config["sliding_attention"].head_dim),
            "full_attention_inv_freq": g9(emb.full_attention_inv_freq.tolist()),
            "sliding_attention_inv_freq": g9(emb.sliding_attention_inv_freq.tolist()),
        },
    }


def longrope_case(Phi3Config, fn, d, base, short, long, om, max_pos, seq_len, h) -> dict:
    cfg = Phi3Config(
        hidden_size=h * d,
        num_attention_heads=h,
        num_key_value_heads=h,
        intermediate_size=4,
        num_hidden_layers=1,
        vocab_size=8,
        max_position_embeddings=max_pos,
        original_max_position_embeddings=om,
        rope_parameters={
            "rope_type": "longrope",
            "rope_theta": base,
            "short_factor": short,
            "long_factor": long,
        },
    )
    inv_freq, attention_factor = fn(cfg, "cpu", seq_len)
    return {
        "d": d,
        "base": base,
        "short_factor": short,
        "long_factor": long,
        "original_max": om,
        "max_position": max_pos,
        "seq_len": seq_len,
        "inv_freq": g9(inv_freq.tolist()),
        "attention_factor": float(attention_factor),
    }


def record_longrope(torch, rng: random.Random) -> dict:
    from transformers import Phi3Config
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    fn = ROPE_INIT_FUNCTIONS["longrope"]
    short, long = [1.0, 1.1, 1.5, 2.0], [1.0, 2.0, 8.0, 30.0]
    cases = [
        longrope_case(Phi3Config, fn, 8, 1e4, short, long, 4096, 131072, s, 1)
        for s in (4096, 4097, None)
    ]
    while len(cases) < 60:
        d = rng.randrange(4, 258, 2)
        base = log_uniform(rng, 100, 1e6)
        om = rng.choice([512, 2048, 4096, 8192, rng.randrange(512, 8193)])
        max_pos = max(1, int(om * rng.choice([0.5, 1.0, 2.0, 8.0, 32.0, rng.uniform(0.5, 32)])))
        seq_len = rng.choice([None, om, om + 1, rng.randrange(1, 40 * om)])
        sf = [round(rng.uniform(1.0, 3.0), 3) for _ in range(d // 2)]
        lf = [round(rng.uniform(1.0, 60.0), 3) for _ in range(d // 2)]
        cases.append(longrope_case(Phi3Config, fn, d, base, sf, lf, om, max_pos, seq_len, 1))
    # Phi-3 at 128k: original 4096, max 131072, d = 96 (3072 / 32), factors of ones.
    phi3 = longrope_case(Phi3Config, fn, 96, 1e4, [1.0] * 48, [1.0] * 48, 4096, 131072, None, 32)
    return {"cases": cases, "phi3_128k_attention_factor": phi3["attention_factor"]}


def record_layer_plans(rng: random.Random) -> dict:
    from transformers import Gemma3TextConfig, Llama4TextConfig

    gemma, llama = [], []
    settings = [(12, 6), (62, 6), (48, 4), (1, 1), (80, 8), (7, 3)]
    settings += [(rng.randrange(1, 81), rng.randrange(1, 9)) for _ in range(40)]
    for n, every in settings:
        base, every_base = log_uniform(rng, 100, 1e5), log_uniform(rng, 1e5, 1e6)
        if (n, every) in ((12, 6), (62, 6)):
            base, every_base = 1e4, 1e6
        cfg = Gemma3TextConfig(
            num_hidden_layers=n,
            sliding_window_pattern=every,
            rope_local_base_freq=base,
            rope_theta=every_base,
        )
        bases = [float(cfg.rope_parameters[t]["rope_theta"]) for t in cfg.layer_types]
        gemma.append(
            {"n": n, "every": every, "base": base, "every_base": every_base, "bases": bases}
        )
        lbase = 5e5 if (n, every) == (48, 4) else log_uniform(rng, 100, 1e6)
        lcfg = Llama4TextConfig(num_hidden_layers=n, no_rope_layer_interval=every, rope_theta=lbase)
        lbases = [
            float(lcfg.rope_parameters["rope_theta"]) if u else 0.0 for u in lcfg.no_rope_layers
        ]
        llama.append(
            {
                "n": n,
                "every": every,
                "base": lbase,
                "no_rope_layers": list(lcfg.no_rope_layers),
                "bases": lbases,
            }
        )
    return {"gemma3": gemma, "llama4": llama}


def record_llama4_scales(torch, rng: random.Random) -> list[dict]:
    from transformers import DynamicCache, Llama4TextConfig
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS  # noqa: F401
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
    from transformers.models.llama4.modeling_llama4 import Llama4TextAttention

    seen: dict = {}

    def capture(module, query, key, value, attention_mask, **kwargs):
        seen["query"] = query.detach().clone()
        return torch.zeros_like(query).transpose(1, 2), None

    ALL_ATTENTION_FUNCTIONS.register("course_capture", capture)
    out = []
    settings = [(8192, 0.1, [0, 8190, 8191, 16383, 65535, 999999])]
    for _ in range(30):
        fs = rng.randrange(1024, 16385)
        a = rng.choice([0.1, round(rng.uniform(0.01, 1.0), 4)])
        pos = sorted({rng.randrange(0, 500001) for _ in range(3)} | {fs - 2, fs - 1})
        settings.append((fs, a, pos))
    torch.manual_seed(SEED)
    for fs, a, positions in settings:
        scales = []
        for tuning in (True, False):
            cfg = Llama4TextConfig(
                hidden_size=8,
                num_attention_heads=1,
                num_key_value_heads=1,
                head_dim=8,
                num_hidden_layers=1,
                no_rope_layers=[0],
                attn_temperature_tuning=tuning,
                floor_scale=fs,
                attn_scale=a,
                intermediate_size=8,
                intermediate_size_mlp=8,
                vocab_size=8,
            )
            cfg._attn_implementation = "course_capture"
            layer = Llama4TextAttention(cfg, 0).double()
            with torch.no_grad():
                for p in layer.parameters():
                    p.copy_(torch.randn_like(p, generator=torch.Generator().manual_seed(1)))
            got = []
            for pos in positions:
                cache = DynamicCache(config=cfg)
                if pos:
                    zeros = torch.zeros(1, 1, pos, 8, dtype=torch.float64)
                    cache.update(zeros, zeros, 0)
                hidden = torch.ones(1, 1, 8, dtype=torch.float64)
                layer(hidden, position_embeddings=None, attention_mask=None, cache=cache)
                got.append(seen["query"][0, 0, 0].numpy().copy())
            scales.append(got)
        ratio = [float(np.mean(t / u)) for t, u in zip(*scales)]
        out.append({"floor_scale": fs, "attn_scale": a, "positions": positions, "scales": ratio})
    return out


def record_mla(torch, rng: random.Random) -> list[dict]:
    from transformers import DeepseekV3Config, DeepseekV3Model, LlamaConfig, LlamaModel

    out = []
    settings = [(512, 64, 128, 128)]
    settings += [
        (
            rng.randrange(4, 65),
            2 * rng.randrange(1, 9),
            rng.randrange(1, 5),
            2 * rng.randrange(1, 9),
        )
        for _ in range(5)
    ]
    ids = torch.tensor([[1, 2, 3]])
    for rank, rope_dim, heads, head_dim in settings:
        # hidden_size 2 * heads: the projections stay small while heads and head_dim are the model's
        cfg = DeepseekV3Config(
            vocab_size=8,
            hidden_size=2 * heads,
            intermediate_size=8,
            moe_intermediate_size=8,
            num_hidden_layers=1,
            first_k_dense_replace=1,
            num_attention_heads=heads,
            num_key_value_heads=heads,
            n_routed_experts=2,
            num_experts_per_tok=1,
            n_group=1,
            topk_group=1,
            kv_lora_rank=rank,
            q_lora_rank=8,
            qk_rope_head_dim=rope_dim,
            qk_nope_head_dim=4,
            v_head_dim=4,
        )
        with torch.no_grad():
            layer = DeepseekV3Model(cfg)(ids, use_cache=True).past_key_values.layers[0]
        lcfg = LlamaConfig(
            vocab_size=8,
            hidden_size=2 * heads,
            intermediate_size=8,
            num_hidden_layers=1,
            num_attention_heads=heads,
            num_key_value_heads=heads,
            head_dim=head_dim,
        )
        with torch.no_grad():
            llayer = LlamaModel(lcfg)(ids, use_cache=True).past_key_values.layers[0]
        out.append(
            {
                "kv_lora_rank": rank,
                "qk_rope_head_dim": rope_dim,
                "n_heads": heads,
                "head_dim": head_dim,
                "tokens": int(ids.shape[1]),
                "mla_shapes": [list(layer.keys.shape), list(layer.values.shape)],
                "mha_shapes": [list(llayer.keys.shape), list(llayer.values.shape)],
            }
        )
    return out


def record_today(torch, transformers) -> dict:
    rng = random.Random(SEED)
    return {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "partial": record_partial(torch, rng),
        "proportional": record_proportional(torch, rng),
        "longrope": record_longrope(torch, rng),
        "layer_plans": record_layer_plans(rng),
        "llama4_scales": record_llama4_scales(torch, rng),
        "mla": record_mla(torch, rng),
    }


# --------------------------------------------------------------------------- sink: 4.52.4


def model_cos_sin(torch, d: int, base: float, slots: int):
    """cos and sin of slots 0 .. slots-1 as a Llama model makes them (float32), as float64."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    cfg = LlamaConfig(
        hidden_size=d,
        num_attention_heads=1,
        head_dim=d,
        rope_theta=base,
        max_position_embeddings=64,
    )
    emb = LlamaRotaryEmbedding(cfg)
    x = torch.zeros(1, slots, d, dtype=torch.float64)
    cos, sin = emb(x, torch.arange(slots)[None])
    return cos[0], sin[0]  # (slots, d), float64 holding float32 values


def hf_rotate(torch, keys: np.ndarray, cos, sin) -> np.ndarray:
    """HF's Llama rotation of interleaved keys (n, d) at the rows of cos/sin, interleaved back."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    k = torch.tensor(to_half(keys))[None, None]
    out, _ = apply_rotary_pos_emb(k, k, cos[None], sin[None])
    return to_interleaved(out[0, 0].numpy())


def stream(torch, SinkCache, raw: np.ndarray, W: int, sinks: int, steps: list[int], base: float):
    """A full window of raw[:W] rotated at slots 0..W-1, then steps of n new keys each.

    Returns the first cache and the cache after each step (interleaved, float64), and the
    kept raw indices after the last step.
    """
    d = raw.shape[1]
    cos, sin = model_cos_sin(torch, d, base, W)
    cache = SinkCache(window_length=W, num_sink_tokens=sinks)
    first = hf_rotate(torch, raw[:W], cos, sin)
    kw = {"cos": cos, "sin": sin}
    k = torch.tensor(to_half(first))[None, None]
    cache.update(k, k.clone(), 0, kw)
    states, kept, nxt = [], list(range(W)), W
    for n in steps:
        new = hf_rotate(torch, raw[nxt : nxt + n], cos[W - n :], sin[W - n :])
        k = torch.tensor(to_half(new))[None, None]
        keys, _ = cache.update(k, k.clone(), 0, kw)
        states.append(to_interleaved(keys[0, 0].numpy()))
        kept = kept[:sinks] + kept[sinks + n :] + list(range(nxt, nxt + n))
        nxt += n
    return first, states, kept


def record_sink(torch, transformers) -> dict:
    import warnings

    from transformers.cache_utils import SinkCache

    warnings.simplefilter("ignore")
    rng = random.Random(SEED + 1)
    nrng = np.random.default_rng(SEED + 1)

    rerotate = []
    for _ in range(20):
        W = rng.randrange(4, 41)
        sinks = rng.randrange(0, min(4, W - 2) + 1)
        n = rng.randrange(1, W - sinks)
        d = 2 * rng.randrange(1, 33)
        base = log_uniform(rng, 100, 1e6)
        cos, sin = model_cos_sin(torch, d, base, W)
        cache = SinkCache(window_length=W, num_sink_tokens=sinks)
        keys = short_normal(nrng, W - sinks - n, d)
        k = torch.tensor(to_half(keys))[None, None]
        new = torch.zeros(1, 1, n, d, dtype=torch.float64)  # only its length n is read
        rc, rs = cache._get_rerotation_cos_sin(new, cos, sin)
        out = cache._apply_key_rotary_pos_emb(k, rc, rs)
        rerotate.append(
            {
                "W": W,
                "num_sink": sinks,
                "shift": n,
                "d": d,
                "base": base,
                "keys": keys[:KEEP_ROWS].tolist(),
                "out": rounded(to_interleaved(out[0, 0].numpy())[:KEEP_ROWS]),
            }
        )

    steps_cases = []
    for _ in range(12):
        W = rng.randrange(4, 41)
        sinks = rng.randrange(0, min(4, W - 2) + 1)
        d = 2 * rng.randrange(1, 9)
        base = log_uniform(rng, 100, 1e6)
        steps = [rng.randrange(1, W - sinks) for _ in range(rng.randrange(1, 5))]
        raw = short_normal(nrng, W + sum(steps), d)
        first, states, kept = stream(torch, SinkCache, raw, W, sinks, steps, base)
        steps_cases.append(
            {
                "W": W,
                "num_sink": sinks,
                "d": d,
                "base": base,
                "steps": steps,
                "raw": raw.tolist(),
                "first": rounded(first),
                "states": [rounded(s) for s in states],
                "kept": kept,
            }
        )

    def demo(W: int, sinks: int, n_tokens: int, d: int, seed: int) -> dict:
        raw = np.random.default_rng(seed).normal(size=(n_tokens, d))
        steps = [1] * (n_tokens - W)
        _, states, kept = stream(torch, SinkCache, raw, W, sinks, steps, 1e4)
        cos, sin = model_cos_sin(torch, d, 1e4, W)
        hf_fresh = hf_rotate(torch, raw[kept], cos, sin)
        # afresh: the kept raw keys rotated at slots 0..W-1 in float64 (the course's apply_rope)
        th = 1e4 ** (-np.arange(0, d, 2) / d)
        ang = np.arange(W)[:, None] * th
        x = raw[kept]
        fresh = np.empty_like(x)
        fresh[:, 0::2] = x[:, 0::2] * np.cos(ang) - x[:, 1::2] * np.sin(ang)
        fresh[:, 1::2] = x[:, 0::2] * np.sin(ang) + x[:, 1::2] * np.cos(ang)
        return {
            "W": W,
            "num_sink": sinks,
            "tokens": n_tokens,
            "d": d,
            "seed": seed,
            "kept": kept,
            "hf_max_abs_diff": float(np.max(np.abs(states[-1] - fresh))),
            "hf_max_abs_diff_vs_hf_fresh": float(np.max(np.abs(states[-1] - hf_fresh))),
        }

    return {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "rerotate": rerotate,
        "sink_steps": steps_cases,
        "sink_demo": [demo(6, 2, 9, 8, 0), demo(16, 4, 216, 8, 0)],
    }


def main() -> int:
    try:
        import torch
        import transformers
    except ImportError as exc:
        print(
            f"record_transformers_today: torch and transformers are needed ({exc}); "
            f"{OUT.relative_to(OUT.parents[2])} is left as recorded"
        )
        return 0
    transformers.logging.set_verbosity_error()
    data = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    data["about"] = "recorded by bench/record_transformers_today.py; see its docstring"
    major = int(transformers.__version__.split(".")[0])
    if major >= 5:
        part = "today"
        data[part] = record_today(torch, transformers)
    elif transformers.__version__.startswith("4.52."):
        part = "sink"
        data[part] = record_sink(torch, transformers)
    else:
        print(
            f"record_transformers_today: transformers {transformers.__version__} is neither 5.x "
            f"(the rates, layers and caches) nor 4.52 (the sink cache); nothing recorded"
        )
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, separators=(",", ":"), sort_keys=True) + "\n", encoding="utf-8")
    print(
        f"wrote the {part} part of {OUT} ({OUT.stat().st_size / 1e6:.2f} MB): transformers "
        f"{transformers.__version__}, torch {torch.__version__}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

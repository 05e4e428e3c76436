"""Record torch autograd's loss and gradients for the tiny decoder of helpers.train.

The model is written again here in torch, from its description (pre-LayerNorm decoder,
causal attention, a tanh-GELU MLP, an untied output; the schemes' positions from their
papers' formulas: RoPE as complex multiplication, ALiBi's geometric slopes, T5's buckets as
Hugging Face computes them), with none of helpers.train's forward or backward. The same
weights and the same batch as helpers.train makes go in; torch's loss and every gradient
(float64) come out, into ``tests/data/torch_train.json`` (tests/test_train_engine.py).

Run it beside the project, never in the course's .venv (torch is no dependency of the course):

    python3 -m venv /work/wt/torch-venv && /work/wt/torch-venv/bin/pip install torch==2.13.0 numpy
    PYTHONPATH=. /work/wt/torch-venv/bin/python bench/record_torch_train.py
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from helpers import train as tr

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "torch_train.json"
CASES = [
    {"scheme": "none"},
    {"scheme": "sinusoidal"},
    {"scheme": "learned"},
    {"scheme": "rope"},
    {"scheme": "alibi"},
    {"scheme": "t5"},
    {"scheme": "t5", "t5_max_distance": 32},
]
SMALL = {"d_model": 8, "n_heads": 2, "train_len": 8, "t5_buckets": 8}


def t5_bucket_hf(rel: torch.Tensor, num_buckets: int, max_distance: int) -> torch.Tensor:
    """T5Attention._relative_position_bucket, unidirectional (transformers' code, re-typed)."""
    rel = -torch.min(rel, torch.zeros_like(rel))
    max_exact = num_buckets // 2
    is_small = rel < max_exact
    large = max_exact + (
        torch.log(rel.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return torch.where(is_small, rel, large)


def loss_of(p: dict, cfg: tr.Config, inputs: torch.Tensor, targets: torch.Tensor):
    B, T = inputs.shape
    d, H = cfg.d_model, cfg.n_heads
    dh = d // H
    pos = torch.arange(T)
    x = p["tok_emb"][inputs]
    if cfg.scheme == "sinusoidal":
        i = torch.arange(d // 2, dtype=torch.float64)
        ang = pos[:, None].double() * cfg.sinusoidal_base ** (-2 * i / d)
        pe = torch.stack([torch.sin(ang), torch.cos(ang)], dim=-1).reshape(T, d)
        x = x + pe
    elif cfg.scheme == "learned":
        x = x + p["pos_emb"][torch.clamp(pos, max=cfg.train_len - 1)]
    bias = torch.zeros(H, T, T, dtype=torch.float64)
    if cfg.scheme == "alibi":
        slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / H) for h in range(H)], dtype=torch.float64)
        dist = (pos[:, None] - pos[None, :]).double()  # i - j
        bias = -slopes[:, None, None] * dist
    elif cfg.scheme == "t5":
        buckets = t5_bucket_hf(pos[None, :] - pos[:, None], cfg.t5_buckets, cfg.max_distance)
        bias = p["t5_table"][buckets].permute(2, 0, 1)
    mask = pos[None, :] > pos[:, None]
    for l in range(cfg.n_layers):
        a = F.layer_norm(x, (d,), p[f"{l}.ln1_g"], p[f"{l}.ln1_b"], eps=tr.LN_EPS)
        q, k, v = (a @ p[f"{l}.Wqkv"]).split(d, dim=-1)
        q, k, v = (t.reshape(B, T, H, dh).transpose(1, 2) for t in (q, k, v))
        if cfg.scheme == "rope":
            theta = cfg.rope_base ** (-torch.arange(0, dh, 2, dtype=torch.float64) / dh)
            turn = torch.polar(torch.ones(T, dh // 2, dtype=torch.float64), pos[:, None] * theta)
            q = torch.view_as_real(torch.view_as_complex(q.reshape(B, H, T, dh // 2, 2)) * turn)
            k = torch.view_as_real(torch.view_as_complex(k.reshape(B, H, T, dh // 2, 2)) * turn)
            q, k = q.reshape(B, H, T, dh), k.reshape(B, H, T, dh)
        s = q @ k.transpose(-1, -2) / math.sqrt(dh) + bias
        s = s.masked_fill(mask, float("-inf"))
        o = torch.softmax(s, dim=-1) @ v
        x = x + o.transpose(1, 2).reshape(B, T, d) @ p[f"{l}.Wo"]
        m = F.layer_norm(x, (d,), p[f"{l}.ln2_g"], p[f"{l}.ln2_b"], eps=tr.LN_EPS)
        h = F.gelu(m @ p[f"{l}.W1"] + p[f"{l}.b1"], approximate="tanh")
        x = x + h @ p[f"{l}.W2"] + p[f"{l}.b2"]
    f = F.layer_norm(x, (d,), p["lnf_g"], p["lnf_b"], eps=tr.LN_EPS)
    logits = f @ p["W_out"] + p["b_out"]
    return F.cross_entropy(logits.reshape(-1, cfg.vocab), targets.reshape(-1))


def record_case(number: int, changes: dict) -> dict:
    cfg = tr.Config(**SMALL, **changes)
    rng = np.random.default_rng([7, number])
    params = tr.init_params(cfg, rng, dtype=np.float64)
    params = {k: v + rng.normal(0, 0.3, v.shape) for k, v in params.items()}
    seqs = tr.sample_sequences(tr.markov_table(cfg.vocab, 0), 3, cfg.train_len, rng)
    inputs, targets = tr.inputs_targets(seqs, cfg.vocab)
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    loss = loss_of(tp, cfg, torch.tensor(inputs), torch.tensor(targets))
    loss.backward()
    return {
        "config": {**SMALL, **changes},
        "params": {k: v.tolist() for k, v in params.items()},
        "inputs": inputs.tolist(),
        "targets": targets.tolist(),
        "loss": loss.item(),
        "grads": {k: t.grad.numpy().tolist() for k, t in tp.items()},
    }


def main() -> None:
    torch.set_default_dtype(torch.float64)
    cases = [record_case(n, changes) for n, changes in enumerate(CASES)]
    OUT.write_text(
        json.dumps({"torch": torch.__version__, "dtype": "float64", "cases": cases}) + "\n"
    )
    print(
        f"wrote {OUT} ({OUT.stat().st_size} bytes): {len(cases)} cases, torch {torch.__version__}"
    )


if __name__ == "__main__":
    main()

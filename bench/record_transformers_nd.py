"""Record what the model code computes for 2D RoPE and M-RoPE (notebook 11_rope_nd).

Run once, where torch and transformers are installed (not in the course's .venv), with a
checkout of the RoPE-Mixed authors' code (github.com/naver-ai/rope-vit) beside it:

    python3 -m venv /tmp/hfnd && /tmp/hfnd/bin/pip install torch==2.13.0 transformers==5.24.0
    ROPE_VIT=/path/to/rope-vit /tmp/hfnd/bin/python bench/record_transformers_nd.py

From rope-vit only the two functions ``init_random_2d_freqs`` and ``compute_mixed_cis`` of
``deit/models_v2_rope.py`` are taken (read out of the file by name and run with torch; the
rest of that file needs timm). It writes ``tests/data/transformers_rope_nd.json`` (about
0.6 MB), which tests/test_reference_rope_nd.py reads (it needs neither torch nor
transformers). Every case is drawn from a fixed seed; floats are written with 17
significant digits (float32 values read back exactly):

- ``axial``: Hugging Face's ``PixtralVisionRotaryEmbedding`` (``rope_type="axial"``) angles
  at the positions (row, col) = (1, 0) and (0, 1), i.e. its per-pair rates of the height
  and the width, for d every multiple of 4 from 4 to 256 and bases 100 .. 1e6;
- ``angles_2d``: its angles (``recomposition_frequencies(position_ids[..., None] * inv_freq)``,
  the first d/2 columns, float32) at random positions of grids up to 32 x 32 and up to 4096
  (and ``axial_d6``: what it does with d = 6, which the course refuses);
  the recorder checks that forward's cos and sin are the cos and sin of these angles;
- ``mixed``: ``init_random_2d_freqs(dim=d, num_heads=1, theta=base)`` under a torch seed, with
  the random angle phi it drew, and the angles of ``compute_mixed_cis`` (float64 in, mod 2 pi)
  at random positions;
- ``rotate``: ``apply_rotary_pos_emb`` (Pixtral's) in float64 on the half-split view of random
  vectors, with cos and sin of Pixtral's angle layout (float64, from its float32 rates) or
  of the paper's ``compute_mixed_cis`` (float64); the vectors are stored interleaved;
- ``interaction``: per pair, ``s(dx,dy) - s(dx,0) - s(0,dy) + s(0,0)`` with each ``s`` the
  pair's term of the score of a query and a key both rotated by ``apply_rotary_pos_emb``
  (float64), for Pixtral's and for RoPE-Mixed's frequencies;
- ``patches``: the ``position_ids`` that ``PixtralVisionModel.forward`` builds for one image
  (caught on their way into its rotary embedding), for several grids;
- ``mrope_ids``: ``Qwen2VLModel.get_rope_index`` of random text-and-image layouts (images
  separated by text), merge sizes 1 to 3, with ``mrope_position_deltas``; and what it does
  when two images touch;
- ``mrope_angles``: ``Qwen2VLRotaryEmbedding``'s angles (float32, first d/2 columns) for
  random ids and sections, and whether three equal rows give 1D RoPE's angles bitwise.

Where torch, transformers or the rope-vit checkout is missing (as in the course's .venv, so
that ``make bench`` goes on) it says so and leaves the recorded file as it is.
"""

from __future__ import annotations

import ast
import json
import math
import os
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "transformers_rope_nd.json"
SEED = 20261201
ROPE_VIT_FUNCTIONS = ("init_random_2d_freqs", "compute_mixed_cis")


def f17(values) -> list[float]:
    return [float(format(v, ".17g")) for v in values]


def rope_vit(path: Path, torch) -> dict:
    """The authors' two functions, read out of deit/models_v2_rope.py by name."""
    source = (path / "deit" / "models_v2_rope.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    keep = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in ROPE_VIT_FUNCTIONS]
    found = {n.name for n in keep}
    if found != set(ROPE_VIT_FUNCTIONS):
        raise SystemExit(f"rope-vit: {sorted(set(ROPE_VIT_FUNCTIONS) - found)} not found")
    namespace: dict = {"torch": torch, "Tuple": tuple}
    exec(compile(ast.Module(keep, type_ignores=[]), str(path), "exec"), namespace)  # noqa: S102
    return {name: namespace[name] for name in ROPE_VIT_FUNCTIONS}


def pixtral_rotary(PixtralVisionConfig, PixtralVisionRotaryEmbedding, d: int, base: float):
    heads = 2
    config = PixtralVisionConfig(
        hidden_size=heads * d,
        num_attention_heads=heads,
        rope_parameters={"rope_type": "axial", "rope_theta": base},
    )
    return PixtralVisionRotaryEmbedding(config)


def pixtral_angles(torch, emb, positions):
    """Pixtral's angles (float32) at (N, 2) positions: the first d/2 columns of its layout."""
    pos = torch.as_tensor(positions, dtype=torch.long)
    full = emb.recomposition_frequencies(pos[..., None].float() * emb.inv_freq)
    cos, sin = emb(torch.zeros(1, dtype=torch.float32), pos)
    assert torch.equal(cos, full.cos()) and torch.equal(sin, full.sin()), "forward's layout"
    return full[..., : full.shape[-1] // 2]


def rand_positions(rng: random.Random, n: int) -> list[list[int]]:
    """n (row, col) positions: on a grid up to 32 x 32, or anywhere up to 4096."""
    if rng.random() < 0.5:
        h, w = rng.randint(1, 32), rng.randint(1, 32)
        return [[rng.randrange(h), rng.randrange(w)] for _ in range(n)]
    return [[rng.randint(0, 4096), rng.randint(0, 4096)] for _ in range(n)]


def d4(rng: random.Random) -> int:
    return 4 * rng.randint(1, 64)


def log_uniform(rng: random.Random, lo: float, hi: float) -> float:
    return float(format(10 ** rng.uniform(math.log10(lo), math.log10(hi)), ".6g"))


def record_axial(torch, cfg, emb_cls, rng) -> list[dict]:
    out = []
    for d in range(4, 257, 4):
        base = rng.choice([100.0, 1e4, 1e6, log_uniform(rng, 100, 1e6)])
        emb = pixtral_rotary(cfg, emb_cls, d, base)
        ang = pixtral_angles(torch, emb, [[1, 0], [0, 1]])
        out.append(
            {"d": d, "base": base, "freqs_y": f17(ang[0].tolist()), "freqs_x": f17(ang[1].tolist())}
        )
    return out


def record_axial_d6(torch, cfg, emb_cls) -> dict:
    """What Pixtral does with d = 6, which the course refuses: its rates of the height and
    the width at (1, 0) and (0, 1), and how many pairs each axis gets."""
    ang = pixtral_angles(torch, pixtral_rotary(cfg, emb_cls, 6, 1e4), [[1, 0], [0, 1]])
    fy, fx = f17(ang[0].tolist()), f17(ang[1].tolist())
    return {
        "d": 6,
        "freqs_y": fy,
        "freqs_x": fx,
        "height_pairs": sum(v != 0 for v in fy),
        "width_pairs": sum(v != 0 for v in fx),
    }


def record_angles_2d(torch, cfg, emb_cls, rng) -> list[dict]:
    out = []
    for d in [4, 8, 64, 256] + [d4(rng) for _ in range(6)]:
        base = log_uniform(rng, 100, 1e6)
        emb = pixtral_rotary(cfg, emb_cls, d, base)
        positions = rand_positions(rng, 5)
        ang = pixtral_angles(torch, emb, positions)
        out.append(
            {"d": d, "base": base, "positions": positions, "angles": [f17(r) for r in ang.tolist()]}
        )
    return out


def mixed_case(torch, fns, rng, d: int, base: float) -> dict:
    """init_random_2d_freqs under a seed, and the phi it drew (the same seed, the same draw)."""
    seed = rng.randrange(2**31)
    torch.manual_seed(seed)
    freqs = fns["init_random_2d_freqs"](dim=d, num_heads=1, theta=base)
    torch.manual_seed(seed)
    phi = (torch.rand(1) * 2 * torch.pi).item()
    assert freqs.shape == (2, 1, d // 2), freqs.shape
    return {"torch_seed": seed, "phi": float(phi), "freqs_x": freqs[0, 0], "freqs_y": freqs[1, 0]}


def mixed_cis64(torch, fns, fx, fy, positions):
    """compute_mixed_cis (float64 in) at (row, col) positions: complex (N, d/2)."""
    pos = torch.as_tensor(positions, dtype=torch.float64)
    freqs = torch.stack([fx.double(), fy.double()])[:, None, :]  # (2, depth=1, d/2)
    cis = fns["compute_mixed_cis"](freqs, pos[:, 1], pos[:, 0], num_heads=1)
    return cis[0, 0]  # depth 0, head 0


def record_mixed(torch, fns, rng) -> list[dict]:
    out = []
    for d in [4, 8, 64, 256] + [d4(rng) for _ in range(8)]:
        base = rng.choice([2.0, 10.0, 100.0, 1e4, log_uniform(rng, 2, 1e4)])
        case = mixed_case(torch, fns, rng, d, base)
        positions = rand_positions(rng, 4)
        cis = mixed_cis64(torch, fns, case["freqs_x"], case["freqs_y"], positions)
        out.append(
            {
                "d": d,
                "base": base,
                "torch_seed": case["torch_seed"],
                "phi": case["phi"],
                "freqs_x": f17(case["freqs_x"].tolist()),
                "freqs_y": f17(case["freqs_y"].tolist()),
                "positions": positions,
                "angles_mod_2pi": [
                    f17(r) for r in torch.remainder(cis.angle(), 2 * math.pi).tolist()
                ],
            }
        )
    return out


def frequencies(torch, cfg, emb_cls, fns, rng, d: int, family: str):
    """(freqs_x, freqs_y) float32 widened to float64, and what to record about them."""
    if family == "axial":
        base = log_uniform(rng, 100, 1e6)
        ang = pixtral_angles(torch, pixtral_rotary(cfg, emb_cls, d, base), [[1, 0], [0, 1]])
        return ang[1].double(), ang[0].double(), {"base": base}
    base = rng.choice([10.0, 100.0, log_uniform(rng, 2, 1e4)])
    case = mixed_case(torch, fns, rng, d, base)
    meta = {"base": base, "torch_seed": case["torch_seed"], "phi": case["phi"]}
    return case["freqs_x"].double(), case["freqs_y"].double(), meta


def cos_sin(torch, fns, family: str, fx, fy, positions):
    """float64 cos and sin (N, d) in Hugging Face's half-split layout."""
    if family == "axial":  # Pixtral's layout of its rates: angle_j = fx_j col + fy_j row
        pos = torch.as_tensor(positions, dtype=torch.float64)
        half = pos[:, 1:2] * fx + pos[:, 0:1] * fy
        cos, sin = half.cos(), half.sin()
    else:
        cis = mixed_cis64(torch, fns, fx, fy, positions)
        cos, sin = cis.real, cis.imag
    return torch.cat([cos, cos], dim=-1), torch.cat([sin, sin], dim=-1)


def to_half(torch, x):
    return torch.cat([x[..., 0::2], x[..., 1::2]], dim=-1)


def rotate_hf(torch, apply_rotary_pos_emb, x_half, cos, sin):
    """apply_rotary_pos_emb on (N, d) vectors: one head, batch 1."""
    q = x_half[None, None]
    out, _ = apply_rotary_pos_emb(q, q, cos[None], sin[None], unsqueeze_dim=1)
    return out[0, 0]


def record_rotate(torch, cfg, emb_cls, fns, apply_rotary_pos_emb, rng) -> list[dict]:
    out = []
    for t in range(12):
        family = "axial" if t % 2 == 0 else "mixed"
        d = [8, 64, 256][t] if t < 3 else d4(rng)
        fx, fy, meta = frequencies(torch, cfg, emb_cls, fns, rng, d, family)
        positions = rand_positions(rng, 2)
        x = torch.randn(2, d, dtype=torch.float64, generator=torch.Generator().manual_seed(t))
        cos, sin = cos_sin(torch, fns, family, fx, fy, positions)
        rotated = rotate_hf(torch, apply_rotary_pos_emb, to_half(torch, x), cos, sin)
        out.append(
            {
                "family": family,
                "d": d,
                **meta,
                "freqs_x": f17(fx.tolist()),
                "freqs_y": f17(fy.tolist()),
                "positions": positions,
                "vec": [f17(r) for r in x.tolist()],
                "rotated_half": [f17(r) for r in rotated.tolist()],
            }
        )
    return out


def pair_terms(torch, fns, apply_rotary_pos_emb, family, fx, fy, q, k, query_at, key_at):
    """Per pair, its term of dot(R(query_at) q, R(key_at) k), both rotated by Hugging Face's
    apply_rotary_pos_emb (float64, half-split: pair j is dims j and j + d/2)."""
    cos, sin = cos_sin(torch, fns, family, fx, fy, [query_at, key_at])
    rq = rotate_hf(torch, apply_rotary_pos_emb, to_half(torch, q)[None], cos[:1], sin[:1])[0]
    rk = rotate_hf(torch, apply_rotary_pos_emb, to_half(torch, k)[None], cos[1:], sin[1:])[0]
    prod = rq * rk
    half = prod.shape[-1] // 2
    return prod[:half] + prod[half:]


def interaction_hf(torch, fns, apply_rotary_pos_emb, family, fx, fy, q, k, dx, dy, origin):
    """(per-pair s(dx,dy) - s(dx,0) - s(0,dy) + s(0,0), the same of the whole score)."""
    y0, x0 = origin
    s = {
        (a, b): pair_terms(
            torch, fns, apply_rotary_pos_emb, family, fx, fy, q, k, [y0 + b, x0 + a], [y0, x0]
        )
        for a, b in ((dx, dy), (dx, 0), (0, dy), (0, 0))
    }
    term = s[dx, dy] - s[dx, 0] - s[0, dy] + s[0, 0]
    whole = float(s[dx, dy].sum() - s[dx, 0].sum() - s[0, dy].sum() + s[0, 0].sum())
    return term, whole


def record_interaction(torch, cfg, emb_cls, fns, apply_rotary_pos_emb, rng) -> list[dict]:
    out = []
    for t in range(16):
        family = "axial" if t % 2 == 0 else "mixed"
        d = [64, 64, 4, 8][t] if t < 4 else d4(rng)
        fx, fy, meta = frequencies(torch, cfg, emb_cls, fns, rng, d, family)
        gen = torch.Generator().manual_seed(1000 + t)
        q = torch.randn(d, dtype=torch.float64, generator=gen)
        k = torch.randn(d, dtype=torch.float64, generator=gen)
        dx, dy = rng.randint(-31, 31), rng.randint(-31, 31)
        origin = [rng.randint(max(0, -dy), 32), rng.randint(max(0, -dx), 32)]
        term, whole = interaction_hf(
            torch, fns, apply_rotary_pos_emb, family, fx, fy, q, k, dx, dy, origin
        )
        out.append(
            {
                "family": family,
                "d": d,
                **meta,
                "freqs_x": f17(fx.tolist()),
                "freqs_y": f17(fy.tolist()),
                "q": f17(q.tolist()),
                "k": f17(k.tolist()),
                "dx": dx,
                "dy": dy,
                "origin": origin,
                "term": f17(term.tolist()),
                "score_term": whole,
            }
        )
    return out


def record_demo_interaction(torch, cfg, emb_cls, fns, apply_rotary_pos_emb) -> list[dict]:
    """The notebook's measurement through Hugging Face: 06's demo vectors, d = 64, dx = 3, dy = 2:
    the whole score's interaction term for Pixtral's layout at base 100 and for RoPE-Mixed's
    starting frequencies at phi = pi/4 (base 10), both in float64."""
    j = torch.arange(64, dtype=torch.float64)
    q, k = torch.cos(0.7 * j + 0.3), torch.sin(0.4 * j + 1.1)
    ang = pixtral_angles(torch, pixtral_rotary(cfg, emb_cls, 64, 100.0), [[1, 0], [0, 1]])
    # the authors' formula at phi = pi/4, in float64
    mag = 1 / (10.0 ** (torch.arange(0, 64, 4)[:16].double() / 64))
    phi = torch.tensor([math.pi / 4], dtype=torch.float64)
    mixed = (
        torch.cat([mag * torch.cos(phi), mag * torch.cos(torch.pi / 2 + phi)]),
        torch.cat([mag * torch.sin(phi), mag * torch.sin(torch.pi / 2 + phi)]),
    )
    out = []
    for family, (fx, fy) in (("axial", (ang[1].double(), ang[0].double())), ("mixed", mixed)):
        term, whole = interaction_hf(
            torch, fns, apply_rotary_pos_emb, family, fx, fy, q, k, 3, 2, (0, 0)
        )
        out.append(
            {
                "family": family,
                "dx": 3,
                "dy": 2,
                "score_term": whole,
                "term_sum": float(term.sum()),
                "term_max_abs": float(term.abs().max()),
            }
        )
    return out


def record_patches(torch, PixtralVisionConfig, PixtralVisionModel) -> list[dict]:
    patch = 2
    config = PixtralVisionConfig(
        hidden_size=8,
        num_attention_heads=2,
        intermediate_size=8,
        num_hidden_layers=1,
        patch_size=patch,
        image_size=64 * patch,
        num_channels=1,
    )
    model = PixtralVisionModel(config).eval()
    caught: dict = {}
    model.patch_positional_embedding.register_forward_pre_hook(
        lambda module, args: caught.__setitem__("ids", args[1].clone())
    )
    out = []
    for h, w in [(1, 1), (1, 5), (5, 1), (2, 3), (3, 2), (4, 7), (13, 29), (32, 32)]:
        with torch.no_grad():
            model(torch.zeros(1, 1, h * patch, w * patch))
        out.append({"grid": [h, w], "position_ids": caught["ids"].tolist()})
    return out


IMAGE, START, END = 60, 61, 62


def qwen_model(Qwen2VLConfig, Qwen2VLModel, m: int):
    config = Qwen2VLConfig(
        text_config={
            "hidden_size": 16,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "intermediate_size": 16,
            "num_hidden_layers": 1,
            "vocab_size": 64,
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 1e4,
                "mrope_section": [2, 1, 1],
            },
        },
        vision_config={
            "depth": 1,
            "embed_dim": 16,
            "hidden_size": 16,
            "num_heads": 2,
            "spatial_merge_size": m,
            "in_channels": 1,
            "patch_size": 2,
            "mlp_ratio": 1,
        },
        image_token_id=IMAGE,
        vision_start_token_id=START,
        vision_end_token_id=END,
    )
    return Qwen2VLModel(config).eval()


def tokens(segments, m: int):
    """input_ids, mm_token_type_ids and image_grid_thw of a layout."""
    ids, types, grids = [], [], []
    for kind, value in segments:
        if kind == "text":
            ids += [1 + (i % 50) for i in range(value)]
            types += [0] * value
        else:
            n = (value[0] // m) * (value[1] // m)
            ids += [IMAGE] * n
            types += [1] * n
            grids.append([1, value[0], value[1]])
    return ids, types, grids


def random_layout(rng: random.Random, m: int) -> list:
    """Up to 6 segments; an image always between texts (vision start / end are text)."""
    n_images = rng.randint(0, 2)
    segments: list = [("text", rng.randint(1, 6))]
    for _ in range(n_images):
        segments.append(("image", (m * rng.randint(1, 5), m * rng.randint(1, 5))))
        segments.append(("text", rng.randint(1, 6)))
    return segments


def record_mrope_ids(torch, Qwen2VLConfig, Qwen2VLModel, rng) -> dict:
    models = {m: qwen_model(Qwen2VLConfig, Qwen2VLModel, m) for m in (1, 2, 3)}
    layouts = [(2, [("text", 2), ("image", (4, 6)), ("text", 2)])]
    layouts += [(m, random_layout(rng, m)) for m in (1, 2, 3) for _ in range(6)]
    cases = []
    for m, segments in layouts:
        ids, types, grids = tokens(segments, m)
        with torch.no_grad():
            pos, delta = models[m].get_rope_index(
                torch.tensor([ids]),
                torch.tensor([types]),
                torch.tensor(grids) if grids else None,
            )
        cases.append(
            {
                "segments": [[k, list(v) if isinstance(v, tuple) else v] for k, v in segments],
                "spatial_merge_size": m,
                "position_ids": pos[:, 0].tolist(),
                "delta": int(delta.item()),
            }
        )
    touching = [("text", 2), ("image", (4, 4)), ("image", (2, 2)), ("text", 1)]
    ids, types, grids = tokens(touching, 2)
    try:
        models[2].get_rope_index(torch.tensor([ids]), torch.tensor([types]), torch.tensor(grids))
        said = "no error"
    except Exception as exc:  # noqa: BLE001 - what it does is the record
        said = f"{type(exc).__name__}: {exc}"
    return {
        "cases": cases,
        "touching_images": {
            "segments": [[k, list(v) if isinstance(v, tuple) else v] for k, v in touching],
            "raised": said,
        },
    }


def record_mrope_angles(torch, Qwen2VLTextConfig, Qwen2VLRotaryEmbedding, rng) -> dict:
    out = []
    bitwise = []
    settings = [(128, 1e6, [16, 24, 24]), (8, 1e4, [2, 1, 1])]
    for _ in range(8):
        d = 2 * rng.randint(2, 128)
        a = rng.randint(0, d // 2)
        b = rng.randint(0, d // 2 - a)
        settings.append((d, log_uniform(rng, 100, 1e6), [a, b, d // 2 - a - b]))
    for d, base, section in settings:
        config = Qwen2VLTextConfig(
            hidden_size=d,
            num_attention_heads=1,
            head_dim=d,
            rope_parameters={"rope_type": "default", "rope_theta": base, "mrope_section": section},
        )
        emb = Qwen2VLRotaryEmbedding(config)
        n = 4
        ids = [[rng.randint(0, 4096) for _ in range(n)] for _ in range(3)]
        pos = torch.tensor(ids)[:, None, :]  # (3, batch 1, N)
        full = emb.recomposition_frequencies(pos[..., None].float() * emb.inv_freq)[0]
        cos, _ = emb(torch.zeros(1, dtype=torch.float32), pos)
        assert torch.equal(cos[0], full.cos()), "forward's layout"
        p = torch.tensor(ids[0])
        text = emb.recomposition_frequencies(p.expand(3, 1, -1)[..., None].float() * emb.inv_freq)[
            0
        ]
        one_d = p[:, None].float() * emb.inv_freq
        bitwise.append(bool(torch.equal(text[:, : d // 2], one_d)))
        out.append(
            {
                "d": d,
                "base": base,
                "mrope_section": section,
                "position_ids": ids,
                "inv_freq": f17(emb.inv_freq.tolist()),
                "angles": [f17(r) for r in full[:, : d // 2].tolist()],
            }
        )
    return {"cases": out, "text_only_is_1d_bitwise": all(bitwise)}


def main() -> int:
    where = os.environ.get("ROPE_VIT", "")
    try:
        import torch
        import transformers
        from transformers import PixtralVisionConfig, Qwen2VLConfig
        from transformers.models.pixtral.modeling_pixtral import (
            PixtralVisionModel,
            PixtralVisionRotaryEmbedding,
            apply_rotary_pos_emb,
        )
        from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLTextConfig
        from transformers.models.qwen2_vl.modeling_qwen2_vl import (
            Qwen2VLModel,
            Qwen2VLRotaryEmbedding,
        )
    except ImportError as exc:
        print(
            f"record_transformers_nd: torch and transformers are needed ({exc}); "
            f"{OUT.relative_to(OUT.parents[2])} is left as recorded"
        )
        return 0
    if not where or not (Path(where) / "deit" / "models_v2_rope.py").is_file():
        print(
            "record_transformers_nd: set ROPE_VIT to a checkout of naver-ai/rope-vit "
            f"(deit/models_v2_rope.py); {OUT.relative_to(OUT.parents[2])} is left as recorded"
        )
        return 0
    import warnings

    warnings.filterwarnings("ignore")  # torch.cuda.amp.autocast in the authors' code, on CPU
    transformers.logging.set_verbosity_error()
    fns = rope_vit(Path(where), torch)
    rng = random.Random(SEED)
    pix = (torch, PixtralVisionConfig, PixtralVisionRotaryEmbedding)
    data = {
        "about": "recorded by bench/record_transformers_nd.py; see its docstring",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "rope_vit": "deit/models_v2_rope.py: " + ", ".join(ROPE_VIT_FUNCTIONS),
        "axial": record_axial(*pix, rng),
        "axial_d6": record_axial_d6(*pix),
        "angles_2d": record_angles_2d(*pix, rng),
        "mixed": record_mixed(torch, fns, rng),
        "rotate": record_rotate(*pix, fns, apply_rotary_pos_emb, rng),
        "interaction": record_interaction(*pix, fns, apply_rotary_pos_emb, rng),
        "demo_interaction": record_demo_interaction(*pix, fns, apply_rotary_pos_emb),
        "patches": record_patches(torch, PixtralVisionConfig, PixtralVisionModel),
        "mrope_ids": record_mrope_ids(torch, Qwen2VLConfig, Qwen2VLModel, rng),
        "mrope_angles": record_mrope_angles(torch, Qwen2VLTextConfig, Qwen2VLRotaryEmbedding, rng),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    sizes = {k: len(v) for k, v in data.items() if isinstance(v, list)}
    print(
        f"wrote {OUT} ({OUT.stat().st_size / 1e6:.2f} MB): transformers {transformers.__version__}, "
        f"torch {torch.__version__}, {sizes}, {len(data['mrope_ids']['cases'])} M-RoPE layouts; "
        f"touching images: {data['mrope_ids']['touching_images']['raised'][:80]}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

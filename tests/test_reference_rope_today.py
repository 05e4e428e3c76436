"""The reference of 12_rope_today against Hugging Face transformers, the spec's numbers and
independent properties.

The recorded vectors (tests/data/transformers_rope_today.json, written by
bench/record_transformers_today.py) come from transformers 5.24.0 (GPT-NeoX's partial
rotary, ROPE_INIT_FUNCTIONS "proportional" and "longrope", Gemma 3's and Llama 4's layer
plans, Llama 4's query scale, DeepSeek-V3's and Llama's cache layers) and 4.52.4 (SinkCache,
which later versions no longer have). Tolerances, as the spec says: the course's
``1e-9 + 1e-6 |b|`` for HF's float32 rates and scales, 1e-12 for the Python-float attention
factor, ``1e-6 * max(1, max |b|)`` per step for the re-rotations (4.52.4 rounds its
re-rotation cos and sin to float32), exact for layer plans and cache sizes. Section 7's table of
recent models is checked against transformers' own initialisers, recorded by
bench/record_transformers_recent.py in tests/data/transformers_rope_recent.json, which also holds
Qwen3.5's partial interleaved M-RoPE (``Qwen3_5TextRotaryEmbedding``) and gpt-oss's learned sinks
(``eager_attention_forward``) from transformers 5.24.0, 48 cases each.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from helpers.reference import (
    apply_rope,
    interleaved_to_half,
    layer_rope_bases,
    llama4_attn_scales,
    longrope_thetas,
    mla_cache_values,
    partial_thetas,
    proportional_thetas,
    qwen35_rope_angles,
    rerotate_keys,
    sink_cache_update,
    sink_softmax,
    thetas,
)

DATA = json.loads(
    (Path(__file__).parent / "data" / "transformers_rope_today.json").read_text(encoding="utf-8")
)
TODAY, SINK = DATA["today"], DATA["sink"]


def course_agree(got, want) -> tuple[bool, float]:
    """The course tolerance, and the largest relative error (for the message)."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, (got.shape, want.shape)
    ok = bool(np.all(np.abs(got - want) <= 1e-9 + 1e-6 * np.abs(want)))
    rel = np.abs(got - want) / np.maximum(np.abs(want), 1e-300)
    return ok, float(np.max(np.where(want == 0, np.abs(got), rel)))


def cache_agree(got, want) -> tuple[bool, float]:
    """Re-rotated keys: |a - b| <= 1e-6 * max(1, max |b|)."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, (got.shape, want.shape)
    err = float(np.max(np.abs(got - want))) if got.size else 0.0
    return err <= 1e-6 * max(1.0, float(np.max(np.abs(want))) if want.size else 1.0), err


def test_the_data_says_which_versions_computed_it():
    assert TODAY["transformers"] == "5.24.0"
    assert SINK["transformers"] == "4.52.4"
    assert TODAY["torch"].startswith("2.13.0") and SINK["torch"].startswith("2.13.0")


# --------------------------------------------------------------------------- partial_thetas


def test_partial_thetas_matches_gpt_neox_compute_default_rope_parameters():
    cases = TODAY["partial"]["cases"]
    assert len(cases) >= 50
    for c in cases:
        rot = int(c["d"] * c["p"])
        want = np.zeros(c["d"] // 2)
        want[: len(c["inv_freq"])] = c["inv_freq"]  # HF's rot/2 rates, padded with zeros
        ok, err = course_agree(partial_thetas(c["d"], c["base"], c["p"]), want)
        assert ok, (c["d"], c["base"], c["p"], err)
        assert len(c["inv_freq"]) == rot // 2


def test_gpt_neox_rotates_the_first_rot_dims_and_passes_the_rest_bitwise():
    """With partial_thetas' rates, the interleaved rotation is HF's GPT-NeoX rotation, up to
    HF's float32 angles (pos * inv_freq rounded in float32); the other dims are untouched."""
    for r in TODAY["partial"]["rotations"]:
        q, out, rot = np.array(r["q"]), np.array(r["out"]), r["rot"]
        assert r["pass_through_bitwise"]
        np.testing.assert_array_equal(out[:, rot:], q[:, rot:])
        th = partial_thetas(r["d"], r["base"], r["p"])
        pos = np.array(r["pos"], dtype=float)
        ang = pos[:, None] * th
        mine = q.copy()
        c, s = np.cos(ang), np.sin(ang)
        mine[:, 0::2] = q[:, 0::2] * c - q[:, 1::2] * s
        mine[:, 1::2] = q[:, 0::2] * s + q[:, 1::2] * c
        # float32 angles: an error of about 6e-8 * angle, so 1e-7 * (1 + pos) * |q|
        bound = 1e-7 * (1 + pos[:, None]) * np.max(np.abs(q))
        assert np.all(np.abs(mine - out) <= bound), np.max(np.abs(mine - out))


def test_partial_thetas_gpt_neox_20b():
    """GPT-NeoX-20B (d = 6144/64 = 96, rotary_pct 0.25): 12 of 48 pairs rotate (HF)."""
    th = partial_thetas(96, 1e4, 0.25)
    assert th.shape == (48,)
    np.testing.assert_allclose(th[:3], [1.0, 0.464159, 0.215443], rtol=5e-6)
    assert abs(th[11] - 2.15443e-4) < 1e-9
    assert np.all(th[12:] == 0.0) and np.all(th[:12] > 0)


def test_hf_takes_an_odd_rot_the_course_refuses_it():
    odd = TODAY["partial"]["odd_rot"]
    assert len(odd["inv_freq"]) == 10  # rot = int(64 * 0.3) = 19: 10 rates over 19
    np.testing.assert_allclose(odd["inv_freq"], 1e4 ** (-np.arange(0, 19, 2) / 19), rtol=1e-6)
    with pytest.raises(ValueError, match="19"):
        partial_thetas(64, 1e4, 0.3)


# --------------------------------------------------------------------------- proportional_thetas


def test_proportional_thetas_matches_rope_init_functions():
    cases = TODAY["proportional"]["cases"]
    assert len(cases) >= 50
    for c in cases:
        ok, err = course_agree(
            proportional_thetas(c["d"], c["base"], c["p"], c["factor"]), c["inv_freq"]
        )
        assert ok, (c, err)
        assert c["attention_factor"] == 1.0


def test_gemma4_global_layers():
    """Gemma4TextConfig(): 64 of 256 pairs at the full head's rates, the slowest 0.0334;
    partial rotary would end at 1.24e-6."""
    g = TODAY["proportional"]["gemma4"]
    assert g["rope_parameters"]["full_attention"] == {
        "rope_type": "proportional",
        "partial_rotary_factor": 0.25,
        "rope_theta": 1e6,
    }
    assert g["rope_parameters"]["sliding_attention"] == {"rope_type": "default", "rope_theta": 1e4}
    assert g["global_head_dim"] == 512
    mine = proportional_thetas(512, 1e6, 0.25)
    assert course_agree(mine, g["full_attention_inv_freq"])[0]
    assert np.count_nonzero(mine) == 64
    np.testing.assert_array_equal(mine[:64], thetas(512, 1e6)[:64])
    assert abs(mine[63] - 0.0333762) < 1e-7 and abs(mine[1] - 0.947464) < 1e-6
    assert abs(partial_thetas(512, 1e6, 0.25)[63] - 1.24094e-6) < 1e-11


# --------------------------------------------------------------------------- longrope_thetas


def test_longrope_thetas_matches_phi3():
    cases = TODAY["longrope"]["cases"]
    assert len(cases) >= 50
    assert {c["seq_len"] is None for c in cases} == {True, False}
    assert any(c["seq_len"] == c["original_max"] for c in cases)
    assert any(c["seq_len"] == c["original_max"] + 1 for c in cases)
    for c in cases:
        th, af = longrope_thetas(
            c["d"],
            c["base"],
            c["short_factor"],
            c["long_factor"],
            c["original_max"],
            c["max_position"],
            c["seq_len"],
        )
        ok, err = course_agree(th, c["inv_freq"])
        assert ok, (c["d"], c["seq_len"], err)
        assert abs(af - c["attention_factor"]) <= 1e-12, (af, c["attention_factor"])


def test_longrope_phi3_numbers():
    assert TODAY["longrope"]["phi3_128k_attention_factor"] == pytest.approx(
        math.sqrt(17 / 12), abs=1e-15
    )
    short, long = [1, 1.1, 1.5, 2], [1, 2, 8, 30]
    th, af = longrope_thetas(8, 1e4, short, long, 4096, 131072, 4096)
    np.testing.assert_allclose(th, [1, 0.0909091, 0.00666667, 0.0005], rtol=5e-6)
    assert af == pytest.approx(1.1902380714238083, abs=1e-15)
    th, _ = longrope_thetas(8, 1e4, short, long, 4096, 131072, 4097)
    np.testing.assert_allclose(th, [1, 0.05, 0.00125, 3.33333e-5], rtol=5e-6)
    assert longrope_thetas(8, 1e4, short, long, 4096, 2048)[1] == 1.0


# --------------------------------------------------------------------------- layer_rope_bases


def test_layer_rope_bases_matches_gemma3_and_llama4_configs():
    plans = TODAY["layer_plans"]
    assert len(plans["gemma3"]) >= 40
    for c in plans["gemma3"]:
        got = layer_rope_bases(c["n"], c["every"], c["base"], c["every_base"])
        assert got.dtype == np.float64
        assert got.tolist() == c["bases"], c
    for c in plans["llama4"]:
        assert layer_rope_bases(c["n"], c["every"], c["base"], 0.0).tolist() == c["bases"], c


def test_layer_plans_of_the_models():
    plan = layer_rope_bases(12, 6, 1e4, 1e6)
    assert plan.tolist() == [1e4] * 5 + [1e6] + [1e4] * 5 + [1e6]
    gemma = layer_rope_bases(62, 6, 1e4, 1e6)
    assert np.flatnonzero(gemma == 1e6).tolist() == list(range(5, 62, 6))
    assert np.count_nonzero(gemma == 1e6) == 10
    llama = layer_rope_bases(48, 4, 5e5, 0.0)
    assert np.flatnonzero(llama == 0.0).tolist() == list(range(3, 48, 4))
    hf = next(c for c in TODAY["layer_plans"]["llama4"] if (c["n"], c["every"]) == (48, 4))
    assert hf["no_rope_layers"].count(0) == 12 and hf["no_rope_layers"][3] == 0  # 1 = uses RoPE


# --------------------------------------------------------------------------- llama4_attn_scales


def test_llama4_attn_scales_matches_the_queries_llama4_text_attention_hands_on():
    cases = TODAY["llama4_scales"]
    assert len(cases) >= 30
    assert max(max(c["positions"]) for c in cases) >= 4e5
    for c in cases:
        got = llama4_attn_scales(c["positions"], c["floor_scale"], c["attn_scale"])
        ok, err = course_agree(got, c["scales"])
        assert ok, (c, err)


def test_llama4_visible_scales():
    got = llama4_attn_scales([0, 8190, 8191, 16383, 65535, 999999])
    np.testing.assert_allclose(
        got, [1.0, 1.0, 1.0693147, 1.1098612, 1.2197225, 1.4812184], atol=5e-8
    )
    assert llama4_attn_scales(7).shape == ()


# --------------------------------------------------------------------------- rerotate_keys


def test_rerotate_keys_matches_sink_cache_rerotation():
    cases = SINK["rerotate"]
    assert len(cases) >= 20
    worst = 0.0
    for c in cases:
        keys = np.array(c["keys"])
        got = rerotate_keys(keys, c["shift"], c["base"])
        ok, err = cache_agree(got, np.array(c["out"]))
        assert ok, (c["W"], c["shift"], c["d"], err)
        worst = max(worst, err)
    assert worst > 1e-9  # HF's float32 re-rotation is visibly not exact


def test_rerotate_keys_turns_back():
    np.testing.assert_allclose(rerotate_keys([1, 0], 1), [0.540302, -0.841471], atol=1e-6)
    rng = np.random.default_rng(7)
    for d in (2, 8, 64):
        k = rng.normal(size=(5, d))
        p = rng.integers(0, 4097, size=5)
        s = rng.integers(0, 4097, size=5) % (p + 1)
        np.testing.assert_allclose(
            rerotate_keys(apply_rope(k, p), s), apply_rope(k, p - s), atol=1e-12
        )
        # one shift for all rows, and a shift of 0 is a copy
        np.testing.assert_allclose(
            rerotate_keys(apply_rope(k, p + 3), 3), apply_rope(k, p), atol=1e-12
        )
        assert np.array_equal(rerotate_keys(k, 0), k)


# --------------------------------------------------------------------------- sink_cache_update


def test_sink_cache_update_matches_sink_cache_step_after_step():
    cases = SINK["sink_steps"]
    assert len(cases) >= 10
    worst = 0.0
    for c in cases:
        raw, W, S = np.array(c["raw"]), c["W"], c["num_sink"]
        before, nxt, mine = np.array(c["first"]), W, np.array(c["first"])
        for n, after in zip(c["steps"], c["states"]):
            after = np.array(after)
            new = raw[nxt : nxt + n]
            ok, err = cache_agree(sink_cache_update(before, new, S, c["base"]), after)
            assert ok, (W, S, n, err)
            mine = sink_cache_update(mine, new, S, c["base"])  # the course's own stream
            worst = max(worst, err)
            before, nxt = after, nxt + n
        assert cache_agree(mine, before)[0]
        # after the stream the cache is apply_rope of the kept raw keys at slots 0 .. W - 1
        fresh = apply_rope(raw[c["kept"]], np.arange(W), c["base"])
        first_fresh = apply_rope(raw[:W], np.arange(W), c["base"])
        assert cache_agree(np.array(c["first"]), first_fresh)[0]
        np.testing.assert_allclose(
            sink_cache_update_stream(first_fresh, raw, W, S, c["steps"], c["base"]),
            fresh,
            atol=1e-12,
        )
    assert worst > 1e-9  # HF's float32 re-rotation is visibly not exact


def sink_cache_update_stream(cache, raw, W, S, steps, base):
    nxt = W
    for n in steps:
        cache = sink_cache_update(cache, raw[nxt : nxt + n], S, base)
        nxt += n
    return cache


def test_sink_cache_visible_stream():
    """W = 6, 2 sinks, d = 8, 9 tokens one at a time: tokens 0, 1, 5, 6, 7, 8 kept, within
    float64 rounding of rotating them afresh; 4.52.4's float32 re-rotation is ~1e-7 off."""
    demo = SINK["sink_demo"][0]
    assert (demo["W"], demo["num_sink"], demo["tokens"], demo["d"]) == (6, 2, 9, 8)
    assert demo["kept"] == [0, 1, 5, 6, 7, 8]
    raw = np.random.default_rng(demo["seed"]).normal(size=(9, 8))
    cache = apply_rope(raw[:6], np.arange(6))
    for t in range(6, 9):
        cache = sink_cache_update(cache, raw[t : t + 1], 2)
    err = np.max(np.abs(cache - apply_rope(raw[demo["kept"]], np.arange(6))))
    assert err < 1e-15
    assert 1e-8 < demo["hf_max_abs_diff"] < 1e-6
    long = SINK["sink_demo"][1]
    raw = np.random.default_rng(long["seed"]).normal(size=(long["tokens"], 8))
    cache = apply_rope(raw[:16], np.arange(16))
    for t in range(16, long["tokens"]):
        cache = sink_cache_update(cache, raw[t : t + 1], 4)
    err = np.max(np.abs(cache - apply_rope(raw[long["kept"]], np.arange(16))))
    assert err < 1e-14
    assert 1e-8 < long["hf_max_abs_diff"] < 1e-6


# --------------------------------------------------------------------------- mla_cache_values


def test_mla_cache_values_matches_the_cache_layers():
    for c in TODAY["mla"]:
        (kb, kh, kt, kr), (vb, vh, vt, vr) = c["mla_shapes"]
        assert (kb, kh, kt, vb, vh, vt) == (1, 1, c["tokens"], 1, 1, c["tokens"])
        mla = kr + vr  # one latent and one rotated key per token, shared by the heads
        (_, h, _, hd), (_, h2, _, hd2) = c["mha_shapes"]
        mha = h * hd + h2 * hd2
        got = mla_cache_values(
            c["kv_lora_rank"], c["qk_rope_head_dim"], c["n_heads"], c["head_dim"]
        )
        assert got == (mla, mha), (c, got)
        assert all(isinstance(v, int) for v in got)


def test_deepseek_v3_numbers():
    mla, mha = mla_cache_values(512, 64, 128, 128)
    assert (mla, mha) == (576, 32768)
    assert round(mha / mla, 1) == 56.9
    ds = next(c for c in TODAY["mla"] if c["kv_lora_rank"] == 512)
    assert ds["mla_shapes"] == [[1, 1, 3, 512], [1, 1, 3, 64]]


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("fn", "args", "words"),
    [
        (partial_thetas, (7, 1e4, 0.5), "d must be"),
        (partial_thetas, (64, 1.0, 0.5), "base"),
        (partial_thetas, (64, 1e4, 0.0), "partial_rotary_factor"),
        (partial_thetas, (64, 1e4, 1.5), "partial_rotary_factor"),
        (partial_thetas, (64, 1e4, 0.01), "= 0"),
        (proportional_thetas, (64, 1e4, 0.01), "= 0"),
        (proportional_thetas, (64, 1e4, 0.5, 0.5), "factor"),
        (proportional_thetas, (9, 1e4, 0.5), "d must be"),
        (longrope_thetas, (8, 1e4, [1, 1, 1], [1, 1, 1, 1], 4096, 8192), "short_factor"),
        (longrope_thetas, (8, 1e4, [1, 1, 1, 1], [1, 1, 1, -1], 4096, 8192), "long_factor"),
        (longrope_thetas, (8, 1e4, [1] * 4, [1] * 4, 1, 8192), "original_max"),
        (longrope_thetas, (8, 1e4, [1] * 4, [1] * 4, 4096.0, 8192), "original_max"),
        (longrope_thetas, (8, 1e4, [1] * 4, [1] * 4, 4096, 0), "max_position"),
        (longrope_thetas, (8, 1e4, [1] * 4, [1] * 4, 4096, 8192, 0), "seq_len"),
        (layer_rope_bases, (0, 6, 1e4, 1e6), "n_layers"),
        (layer_rope_bases, (12, 0, 1e4, 1e6), "every"),
        (layer_rope_bases, (12, 6, 1.0, 1e6), "base"),
        (layer_rope_bases, (12, 6, 1e4, 0.5), "every_base"),
        (llama4_attn_scales, ([-1],), "positions"),
        (llama4_attn_scales, ([1.5],), "positions"),
        (llama4_attn_scales, ([1], 0), "floor_scale"),
        (llama4_attn_scales, ([1], 8192, math.inf), "attn_scale"),
        (rerotate_keys, ([1, 0, 1], 1), "keys"),
        (rerotate_keys, ([1, 0], -1), "shift"),
        (rerotate_keys, (np.ones((3, 4)), [1, 2]), "shift"),
        (sink_cache_update, (np.ones(8), np.ones((1, 8)), 2), "cache"),
        (sink_cache_update, (np.ones((6, 8)), np.ones(8), 2), "new_keys"),
        (sink_cache_update, (np.ones((6, 7)), np.ones((1, 7)), 2), "even"),
        (sink_cache_update, (np.ones((6, 8)), np.ones((1, 6)), 2), "new_keys"),
        (sink_cache_update, (np.ones((6, 8)), np.ones((1, 8)), 6), "num_sink"),
        (sink_cache_update, (np.ones((6, 8)), np.ones((1, 8)), -1), "num_sink"),
        (sink_cache_update, (np.ones((6, 8)), np.ones((5, 8)), 2), "new_keys"),
        (mla_cache_values, (512, 64, 128, 0), "head_dim"),
        (mla_cache_values, (512.0, 64, 128, 128), "kv_lora_rank"),
    ],
)
def test_bad_input_is_refused_by_name(fn, args, words):
    with pytest.raises(ValueError, match=words):
        fn(*args)


def test_no_argument_is_changed():
    cache = np.random.default_rng(1).normal(size=(6, 8))
    new = np.random.default_rng(2).normal(size=(2, 8))
    c0, n0 = cache.copy(), new.copy()
    sink_cache_update(cache, new, 2)
    rerotate_keys(cache, 3)
    assert np.array_equal(cache, c0) and np.array_equal(new, n0)
    short = [1.0, 1.1, 1.5, 2.0]
    longrope_thetas(8, 1e4, short, short, 4096, 8192)
    assert short == [1.0, 1.1, 1.5, 2.0]


def test_half_split_view_of_rerotation():
    """The interleaved re-rotation is HF's half-split one through interleaved_to_half."""
    c = SINK["rerotate"][0]
    keys = np.array(c["keys"])
    got = interleaved_to_half(rerotate_keys(keys, c["shift"], c["base"]))
    want = interleaved_to_half(np.array(c["out"]))
    assert cache_agree(got, want)[0]


# --------------------------------------------------------------------------- section 7's table

RECENT = json.loads(
    (Path(__file__).parent / "data" / "transformers_rope_recent.json").read_text(encoding="utf-8")
)["recent"]


def test_recent_settings_match_transformers_rope_initialisers():
    """Each row of 12's table of recent models: the course's methods of notebook 10 give the
    rates transformers' own initialisers gave (ROPE_INIT_FUNCTIONS "llama3", "yarn", "linear";
    the models' default initialiser for ABF / Llama 3), within the course tolerance."""
    from helpers.reference import llama3_thetas, pi_thetas, yarn_thetas

    rows = {
        "abf_llama3": (thetas(128, 5e5), 1.0),
        "llama3_1": (llama3_thetas(128, 5e5, 8.0, 8192), 1.0),
        "qwen_yarn": yarn_thetas(128, 1e6, 4.0, 32768),
        "gemma3_global": (pi_thetas(128, 1e6, 8.0), 1.0),
    }
    for name, (rates, attention) in rows.items():
        ok, rel = course_agree(rates, RECENT[name]["inv_freq"])
        assert ok, (name, rel)
        assert abs(attention - RECENT[name]["attention_factor"]) < 1e-12, name
    ds = RECENT["deepseek_v3"]
    rates, yarn_factor = yarn_thetas(64, 1e4, 40.0, 4096)
    assert course_agree(rates, ds["inv_freq"])[0]
    # mscale == mscale_all_dim: no factor on cos and sin; the square goes to the softmax scale
    assert ds["attention_factor"] == 1.0
    assert abs(ds["softmax_scale"] - ds["qk_head_dim"] ** -0.5 * yarn_factor**2) < 1e-12
    assert abs(yarn_factor**2 - 1.87385) < 1e-5


def test_recent_table_rates_of_pairs_0_quarter_and_last():
    """The three rates the table prints for each row, rounded as printed, are HF's."""
    shown = {
        "abf_llama3": (1, 0.00141421, 2.45514e-6),
        "llama3_1": (1, 0.000524846, 3.06893e-7),
        "qwen_yarn": (1, 0.000602941, 3.10234e-7),
        "deepseek_v3": (1, 0.0055, 3.33380e-6),
        "gemma3_global": (0.125, 0.000125, 1.55117e-7),
    }
    for name, values in shown.items():
        rates = RECENT[name]["inv_freq"]
        picked = (rates[0], rates[len(rates) // 2], rates[-1])
        assert np.allclose(picked, values, rtol=6e-6, atol=0), (name, picked)


# --------------------------------------------------------------------------- 2026's models

RECORDED = json.loads(
    (Path(__file__).parent / "data" / "transformers_rope_recent.json").read_text(encoding="utf-8")
)


def test_qwen35_rope_angles_match_qwen3_5_text_rotary_embedding():
    """Every recorded case of Qwen3_5TextRotaryEmbedding (transformers 5.24.0, float32 angles)
    within the course tolerance; the largest relative difference is float32's rounding."""
    data = RECORDED["qwen35"]
    assert RECORDED["transformers"] == "5.24.0" and len(data["cases"]) >= 40
    worst = 0.0
    for c in data["cases"]:
        got = qwen35_rope_angles(
            c["position_ids"],
            c["head_dim"],
            c["partial_rotary_factor"],
            c["base"],
            c["mrope_section"],
        )
        rot = int(c["head_dim"] * c["partial_rotary_factor"])
        assert got.shape == (len(c["position_ids"][0]), rot // 2) and c["cos_width"] == rot
        ok, err = course_agree(got, c["angles"])
        assert ok, (c["head_dim"], c["partial_rotary_factor"], c["mrope_section"], err)
        worst = max(worst, err)
    assert worst < 1e-6  # float32: about 6e-8 per operation


def test_qwen35_released_setting():
    """head_dim 256, factor 0.25, [11, 11, 10], base 1e7: 32 pairs at a 64-dim RoPE's rates;
    height on pairs 1, 4, ..., 31 (11), width on 2, 5, ..., 29 (10), temporal the other 11."""
    unit = qwen35_rope_angles(np.eye(3, dtype=int), 256, 0.25, 1e7, [11, 11, 10])
    assert unit.shape == (3, 32)
    axes = unit.argmax(axis=0)
    assert list(np.flatnonzero(axes == 1)) == list(range(1, 32, 3))
    assert list(np.flatnonzero(axes == 2)) == list(range(2, 30, 3))
    assert np.count_nonzero(axes == 0) == 11
    rates = unit.max(axis=0)
    assert np.array_equal(rates, thetas(64, 1e7))
    # each axis's fastest rate: 1, 1e7 ** (-2/64), 1e7 ** (-4/64)
    np.testing.assert_allclose(unit.max(axis=1), [1.0, 0.604296, 0.365174], rtol=1e-6)
    released = RECORDED["configs"]["qwen3_5_released"]
    ok, _ = course_agree(rates, released["inv_freq"])
    assert ok and released["attention_factor"] == 1.0


def test_qwen35_text_only_is_1d_rope_of_the_rotated_part_bitwise():
    assert RECORDED["qwen35"]["text_only_is_1d_bitwise"]
    p = np.arange(500)
    got = qwen35_rope_angles(np.stack([p, p, p]), 256, 0.25, 1e7, [11, 11, 10])
    assert np.array_equal(got, np.outer(p, thetas(64, 1e7)))


def test_qwen35_refuses_the_section_hf_cuts_silently():
    """[10, 12, 10] on 32 pairs: HF's slice(1, 36, 3) gives the height 11 pairs, not 12."""
    past = RECORDED["qwen35"]["past_the_bound"]
    assert past["mrope_section"] == [10, 12, 10] and past["pairs_per_axis"] == [11, 11, 10]
    with pytest.raises(ValueError, match="3 \\* s_h <= 33"):
        qwen35_rope_angles([[0], [1], [2]], 256, 0.25, 1e7, [10, 12, 10])


def test_sink_softmax_matches_gpt_oss_eager_attention():
    """Every recorded case of gpt-oss's eager attention weights (float64) within 1e-15."""
    cases = RECORDED["sinks"]["cases"]
    assert len(cases) >= 40
    worst = 0.0
    for c in cases:
        scores = np.where(np.array(c["hidden"]), -np.inf, np.array(c["scores"]))
        got = sink_softmax(scores, c["sink_logits"])
        want = np.array(c["weights"])
        assert got.shape == want.shape
        worst = max(worst, float(np.max(np.abs(got - want))))
    assert worst < 1e-14  # float64 round-off


def test_sink_softmax_visible_numbers():
    np.testing.assert_allclose(sink_softmax([[[0.0, 0.0]]], [0.0]), [[[1 / 3, 1 / 3]]])
    hf = RECORDED["sinks"]["cases"]
    assert hf[0]["weights"] == [[[[1 / 3, 1 / 3]]]] and hf[1]["weights"] == [[[[0.5, 0.5]]]]
    got = sink_softmax([[[1000.0, 1000.0]]], [0.0])
    assert np.array_equal(got, [[[0.5, 0.5]]])
    s = np.array([[[1.0, 2.0, 3.0]]])
    plain = np.exp(s - 3) / np.exp(s - 3).sum()
    np.testing.assert_allclose(sink_softmax(s, [-np.inf]), plain, rtol=1e-15)
    hidden = sink_softmax([[[-np.inf, -np.inf]]], [0.7])
    assert np.array_equal(hidden, [[[0.0, 0.0]]])


def test_sink_softmax_rows_leave_the_sink_its_share():
    """Independent: the weights and the sink's exp(sink - lse) add up to 1 per row."""
    rng = np.random.default_rng(4)
    s, sink = rng.normal(size=(2, 3, 4, 5)), rng.normal(size=3)
    w = sink_softmax(s, sink)
    full = np.concatenate([s, np.broadcast_to(sink[:, None, None], (2, 3, 4, 1))], axis=-1)
    lse = np.log(np.exp(full).sum(axis=-1))
    np.testing.assert_allclose(w.sum(axis=-1) + np.exp(sink[:, None] - lse), 1.0, rtol=1e-14)


@pytest.mark.parametrize(
    ("fn", "args", "words"),
    [
        (qwen35_rope_angles, ([[0], [1]], 256, 0.25, 1e7, [11, 11, 10]), "position_ids"),
        (qwen35_rope_angles, ([[0], [1], [-1]], 256, 0.25, 1e7, [11, 11, 10]), "position_ids"),
        (qwen35_rope_angles, ([[0], [1], [2]], 256, 0.0, 1e7, [11, 11, 10]), "partial_rotary"),
        (qwen35_rope_angles, ([[0], [1], [2]], 64, 0.3, 1e7, [3, 3, 3]), "= 19"),
        (qwen35_rope_angles, ([[0], [1], [2]], 256, 0.25, 1e7, [44, 44, 40]), "rot/2 = 32"),
        (qwen35_rope_angles, ([[0], [1], [2]], 64, 0.25, 1e4, [2, 3, 3]), "3 \\* s_w <= 8"),
        (qwen35_rope_angles, ([[0], [1], [2]], 255, 0.25, 1e7, [11, 11, 10]), "head_dim"),
        (qwen35_rope_angles, ([[0], [1], [2]], 256, 0.25, 1.0, [11, 11, 10]), "base"),
        (sink_softmax, ([[0.0, 1.0]], [0.0]), "scores"),
        (sink_softmax, ([[[0.0, 1.0]]], [0.0, 1.0]), "one logit per head"),
        (sink_softmax, ([[[0.0, np.nan]]], [0.0]), "nan"),
        (sink_softmax, ([[[0.0, np.inf]]], [0.0]), "nan or \\+inf"),
        (sink_softmax, ([[[0.0, 1.0]]], [np.nan]), "sink_logits"),
        (sink_softmax, ([[[-np.inf, -np.inf]]], [-np.inf]), "no weights"),
    ],
)
def test_bad_input_of_2026s_functions_is_refused_by_name(fn, args, words):
    with pytest.raises(ValueError, match=words):
        fn(*args)


def test_2026s_functions_change_no_argument():
    ids, section = np.array([[0, 5], [1, 6], [2, 7]]), [11, 11, 10]
    scores, sinks = np.array([[[0.0, -np.inf, 2.0]]]), [0.5]
    qwen35_rope_angles(ids, 256, 0.25, 1e7, section)
    sink_softmax(scores, sinks)
    assert ids.tolist() == [[0, 5], [1, 6], [2, 7]] and section == [11, 11, 10]
    assert scores.tolist() == [[[0.0, -np.inf, 2.0]]] and sinks == [0.5]

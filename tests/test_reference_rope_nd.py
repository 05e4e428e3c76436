"""The reference of 11_rope_nd against the model code, the spec's numbers and other formulations.

``tests/data/transformers_rope_nd.json`` holds what Hugging Face transformers (Pixtral's axial
RoPE, its ``apply_rotary_pos_emb`` and patch position ids, Qwen2-VL's ``get_rope_index`` and
M-RoPE angles) and the RoPE-Mixed authors' code (``init_random_2d_freqs``,
``compute_mixed_cis``) computed on seeded random cases (recorded once by
bench/record_transformers_nd.py; no torch needed here). Rates and angles there are float32
and agree with the float64 reference to the course tolerance ``1e-9 + 1e-6 |b|``; rotations
and interaction terms were computed in float64 and agree far closer; ids and patch
positions are equal. ``tests/data/transformers_rope_recent.json`` (bench/record_transformers_recent.py)
holds Qwen3-VL's interleaved M-RoPE angles (``Qwen3VLTextRotaryEmbedding``, float32), compared
the same way. The numbers of COURSE_SPEC.md (section 11_rope_nd) and formulations
written here another way (complex multiplication, explicit rotations at several origins,
06's 1D RoPE) complete the checks.
"""

from __future__ import annotations

import json
import math
import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from helpers import reference as ref

DATA = Path(__file__).parent / "data" / "transformers_rope_nd.json"
RTOL, ATOL = 1e-6, 1e-9


@cache
def recorded() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


def within(got, want, rtol: float = RTOL, atol: float = ATOL) -> float:
    """Assert |got - want| <= atol + rtol |want| elementwise; return the largest |got - want|."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    err = np.abs(got - want)
    bad = err > atol + rtol * np.abs(want)
    assert not bad.any(), f"largest error {err.max():.3g} at {np.argwhere(bad)[0].tolist()}"
    return float(err.max()) if err.size else 0.0


def circle(a, b) -> np.ndarray:
    """The distance of two angles on the circle."""
    return np.abs((np.asarray(a) - np.asarray(b) + np.pi) % (2 * np.pi) - np.pi)


def raises_naming(fn, arg: str) -> str:
    with pytest.raises(ValueError) as info:
        fn()
    msg = str(info.value)
    assert re.search(rf"(^|\W){re.escape(arg)}(\W|$)", msg), f"{msg!r} does not name {arg!r}"
    return msg


# --------------------------------------------------------------------------- the model code


def test_recorded_versions():
    data = recorded()
    assert data["transformers"] == "5.24.0" and data["torch"].startswith("2.13.0")
    assert "init_random_2d_freqs" in data["rope_vit"]
    assert [c["d"] for c in data["axial"]] == list(range(4, 257, 4))


def test_axial_freqs_equal_pixtral():
    """Pixtral's angles at (row, col) = (1, 0) and (0, 1) are its height and width rates."""
    worst = 0.0
    for case in recorded()["axial"]:
        fx, fy = ref.axial_freqs(case["d"], case["base"])
        worst = max(worst, within(fx, case["freqs_x"]), within(fy, case["freqs_y"]))
        zeros_x, zeros_y = np.array(case["freqs_x"]) == 0, np.array(case["freqs_y"]) == 0
        assert np.array_equal(fx == 0, zeros_x) and np.array_equal(fy == 0, zeros_y)
    assert worst < 1e-6


def test_d6_which_pixtral_splits_unevenly_is_refused():
    """Pixtral takes d = 6 and gives the height 2 pairs and the width 1 (recorded); the course
    asks for a multiple of 4 so that both axes get d/4 pairs."""
    hf = recorded()["axial_d6"]
    assert (hf["height_pairs"], hf["width_pairs"]) == (2, 1)
    assert hf["freqs_y"][0] == 1.0 and hf["freqs_x"][:2] == [0.0, 0.0]
    msg = raises_naming(lambda: ref.axial_freqs(6, 1e4), "d")
    assert "multiple of 4" in msg


def test_rope_2d_angles_equal_pixtral():
    for case in recorded()["angles_2d"]:
        got = ref.rope_2d_angles(case["positions"], *ref.axial_freqs(case["d"], case["base"]))
        within(got, case["angles"])


def test_mixed_freqs_equal_rope_vit():
    """init_random_2d_freqs with its random phi: equal to 1e-9 + 1e-6 * mag_j."""
    for case in recorded()["mixed"]:
        d = case["d"]
        fx, fy = ref.mixed_freqs(d, case["base"], case["phi"])
        mag = np.tile(case["base"] ** (-4.0 * np.arange(d // 4) / d), 2)
        for got, want in ((fx, case["freqs_x"]), (fy, case["freqs_y"])):
            err = np.abs(got - np.array(want))
            assert np.all(err <= 1e-9 + 1e-6 * mag), (case["d"], case["base"], err.max())


def test_rope_2d_angles_equal_compute_mixed_cis():
    """compute_mixed_cis(freqs, t_x=col, t_y=row) in float64: the same angle mod 2 pi."""
    for case in recorded()["mixed"]:
        got = ref.rope_2d_angles(case["positions"], case["freqs_x"], case["freqs_y"])
        assert got.shape == (len(case["positions"]), case["d"] // 2)
        assert circle(got, case["angles_mod_2pi"]).max() < 1e-9


def test_apply_rope_2d_equals_apply_rotary_pos_emb():
    """P apply_rope_2d(x) == apply_rotary_pos_emb(P x) (P: interleaved_to_half), in float64."""
    worst = 0.0
    families = set()
    for case in recorded()["rotate"]:
        got = ref.apply_rope_2d(case["vec"], case["positions"], case["freqs_x"], case["freqs_y"])
        worst = max(worst, within(ref.interleaved_to_half(got), case["rotated_half"], 0, 1e-14))
        families.add(case["family"])
    assert families == {"axial", "mixed"} and worst < 1e-14


def test_interaction_term_equals_hf_rotations():
    worst = 0.0
    for case in recorded()["interaction"]:
        args = (case["q"], case["k"], case["dx"], case["dy"], case["freqs_x"], case["freqs_y"])
        got = ref.interaction_term(*args)
        worst = max(worst, within(got, case["term"], 0, 1e-12))
        assert abs(got.sum() - case["score_term"]) < 1e-11
        if case["family"] == "axial":
            assert np.abs(got).max() < 1e-12
    assert worst < 1e-12


def test_interaction_of_the_demo_vectors_as_hf():
    """The notebook's numbers: 0 for Pixtral's layout, 1.541847 for RoPE-Mixed at phi = pi/4."""
    q, k = ref.demo_vectors()
    demo = {c["family"]: c for c in recorded()["demo_interaction"]}
    axial = ref.interaction_term(q, k, 3, 2, *ref.axial_freqs(64, 100.0))
    mixed = ref.interaction_term(q, k, 3, 2, *ref.mixed_freqs(64, 10.0, math.pi / 4))
    assert np.abs(axial).max() <= 1e-15 and abs(demo["axial"]["score_term"]) < 1e-15
    assert abs(mixed.sum() - demo["mixed"]["score_term"]) < 1e-13
    assert abs(np.abs(mixed).max() - demo["mixed"]["term_max_abs"]) < 1e-13
    assert (
        round(float(mixed.sum()), 6) == 1.541847 and round(float(np.abs(mixed).max()), 6) == 1.97456
    )


def test_patch_positions_equal_pixtral_model():
    for case in recorded()["patches"]:
        got = ref.patch_positions(*case["grid"])
        assert got.dtype == np.int64
        assert np.array_equal(got, np.array(case["position_ids"])), case["grid"]


def segments_of(case: dict) -> list:
    return [(k, tuple(v) if isinstance(v, list) else v) for k, v in case["segments"]]


def test_mrope_position_ids_equal_get_rope_index():
    cases = recorded()["mrope_ids"]["cases"]
    assert {c["spatial_merge_size"] for c in cases} == {1, 2, 3}
    for case in cases:
        got = ref.mrope_position_ids(segments_of(case), case["spatial_merge_size"])
        want = np.array(case["position_ids"])
        assert got.dtype == np.int64 and np.array_equal(got, want), case["segments"]
        assert got.max() + 1 - got.shape[1] == case["delta"]


def test_touching_images_are_refused_by_hf_and_kept_apart_here():
    """HF groups touching image tokens into one image and fails; the course keeps two images."""
    touching = recorded()["mrope_ids"]["touching_images"]
    assert touching["raised"].startswith("RuntimeError")
    got = ref.mrope_position_ids(segments_of(touching), 2)
    assert got.shape == (3, 2 + 4 + 1 + 1)
    assert got[:, 6].tolist() == [4, 4, 4]  # the second image starts at 2 + max(2, 2)


def test_mrope_angles_equal_qwen2_vl():
    data = recorded()["mrope_angles"]
    assert data["text_only_is_1d_bitwise"]
    for case in data["cases"]:
        d, base = case["d"], case["base"]
        within(ref.thetas(d, base), case["inv_freq"])
        got = ref.mrope_angles(case["position_ids"], d, base, case["mrope_section"])
        within(got, case["angles"])


# --------------------------------------------------------------------------- the spec's numbers


def test_spec_axial_freqs():
    fx, fy = ref.axial_freqs(8, 1e4)
    assert np.allclose(fx, [0, 0, 0.1, 0.001], rtol=1e-12, atol=0)
    assert np.allclose(fy, [1, 0.01, 0, 0], rtol=1e-12, atol=0)
    fx, fy = ref.axial_freqs(64, 1e4)  # Pixtral-12B's encoder: 1024 / 16 heads
    assert np.count_nonzero(fy) == 16 and np.count_nonzero(fx) == 16
    assert np.allclose(fy[:3], [1.0, 0.562341, 0.316228], rtol=2e-6)
    assert np.allclose(fx[16:19], [0.749894, 0.421697, 0.237137], rtol=2e-6)


def test_spec_mixed_freqs():
    fx, fy = ref.mixed_freqs(8, 10.0)
    assert np.allclose(fx, [1, 0.316228, 0, 0], atol=1e-6) and np.allclose(
        fy, [0, 0, 1, 0.316228], atol=1e-6
    )
    fx, fy = ref.mixed_freqs(8, 10.0, math.pi / 4)
    assert np.allclose(fx, [0.707107, 0.223607, -0.707107, -0.223607], atol=1e-6)
    assert np.allclose(fy, [0.707107, 0.223607, 0.707107, 0.223607], atol=1e-6)


def test_spec_patches_and_angles():
    assert ref.patch_positions(2, 3).tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    ang = ref.rope_2d_angles(ref.patch_positions(2, 3), *ref.axial_freqs(8, 1e4))
    assert ang.shape == (6, 4)
    assert np.allclose(ang[4], [1, 0.01, 0.1, 0.001], rtol=1e-12)
    assert np.allclose(ang[5], [1, 0.01, 0.2, 0.002], rtol=1e-12)


def test_spec_apply_rope_2d():
    x = [[1, 0, 1, 0, 1, 0, 1, 0]]
    got = ref.apply_rope_2d(x, [[1, 2]], *ref.axial_freqs(8, 1e4))
    want = [0.540302, 0.841471, 0.99995, 0.0099998, 0.980067, 0.198669, 0.999998, 0.002]
    assert np.allclose(got[0], want, atol=1e-6)
    assert abs(np.linalg.norm(got) - 2.0) < 1e-15


def test_spec_mrope():
    ids = ref.mrope_position_ids([("text", 2), ("image", (4, 6)), ("text", 2)])
    assert ids.tolist() == [
        [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
        [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
        [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
    ]
    assert np.allclose(
        ref.mrope_angles(ids, 8, 1e4, [2, 1, 1])[3], [2, 0.2, 0.02, 0.003], rtol=1e-12
    )
    th = ref.thetas(128, 1e6)
    starts = th[[0, 16, 40]]
    assert np.allclose(starts, [1.0, 0.0316228, 1.77828e-4], rtol=2e-6)


# --------------------------------------------------------------------------- other formulations


def test_apply_rope_2d_is_complex_multiplication():
    rng = np.random.default_rng(11)
    for d in (4, 8, 64, 256):
        x = rng.normal(size=(5, d))
        pos = rng.integers(0, 4097, size=(5, 2))
        fx, fy = ref.mixed_freqs(d, 10.0, float(rng.uniform(0, 2 * np.pi)))
        got = ref.apply_rope_2d(x, pos, fx, fy)
        z = (x[:, 0::2] + 1j * x[:, 1::2]) * np.exp(
            1j * (np.outer(pos[:, 1], fx) + np.outer(pos[:, 0], fy))
        )
        assert np.allclose(got[:, 0::2], z.real, atol=1e-12) and np.allclose(
            got[:, 1::2], z.imag, atol=1e-12
        )
        assert np.allclose(np.linalg.norm(got, axis=1), np.linalg.norm(x, axis=1), rtol=1e-13)


def test_height_block_is_1d_rope_of_the_row():
    """Pixtral's height block rotates by theta_{2i} = thetas(d/2)_i: 06's RoPE of the row."""
    rng = np.random.default_rng(12)
    for d in (8, 64, 128):
        x = rng.normal(size=d)
        r, c = int(rng.integers(0, 4097)), int(rng.integers(0, 4097))
        got = ref.apply_rope_2d(x, [r, c], *ref.axial_freqs(d, 1e4))
        assert np.allclose(got[: d // 2], ref.apply_rope(x[: d // 2], r, 1e4), atol=1e-12)


def test_interaction_term_from_explicit_rotations_at_any_origin():
    rng = np.random.default_rng(13)
    for freqs in (ref.axial_freqs(32, 100.0), ref.mixed_freqs(32, 10.0, 0.9)):
        q, k = rng.normal(size=32), rng.normal(size=32)
        dx, dy = -4, 7
        want = ref.interaction_term(q, k, dx, dy, *freqs)
        for y0, x0 in ((0, 4), (10, 20), (300, 900)):

            def s(a, b, y0=y0, x0=x0, q=q, k=k, freqs=freqs):
                rq = ref.apply_rope_2d(q, [y0 + b, x0 + a], *freqs)
                rk = ref.apply_rope_2d(k, [y0, x0], *freqs)
                return rq[0::2] * rk[0::2] + rq[1::2] * rk[1::2]

            explicit = s(dx, dy) - s(dx, 0) - s(0, dy) + s(0, 0)
            assert np.allclose(explicit, want, atol=1e-11)


def test_text_only_mrope_is_1d_rope_bitwise():
    rng = np.random.default_rng(14)
    p = rng.integers(0, 4097, size=50)
    ids = ref.mrope_position_ids([("text", 50)])
    assert np.array_equal(ids, np.tile(np.arange(50), (3, 1)))
    for d, base, section in ((128, 1e6, [16, 24, 24]), (8, 1e4, [2, 1, 1]), (16, 500.0, [0, 8, 0])):
        got = ref.mrope_angles(np.stack([p, p, p]), d, base, section)
        assert np.array_equal(got, np.outer(p.astype(np.float64), ref.thetas(d, base)))


def test_mrope_ids_by_hand():
    """An image of 2 x 5 merged tokens at start 3, then text at 3 + 5 (not 3 + 10)."""
    ids = ref.mrope_position_ids([("text", 3), ("image", (6, 15)), ("text", 1)], 3)
    assert ids.shape == (3, 3 + 10 + 1)
    assert ids[:, 3:13].tolist() == [[3] * 10, [3] * 5 + [4] * 5, [3, 4, 5, 6, 7] * 2]
    assert ids[:, 13].tolist() == [8, 8, 8]


def test_inputs_not_changed():
    x = np.ones((2, 8))
    pos = np.array([[1, 2], [3, 4]])
    fx, fy = ref.axial_freqs(8)
    copies = [a.copy() for a in (x, pos, fx, fy)]
    ref.apply_rope_2d(x, pos, fx, fy)
    ref.rope_2d_angles(pos, fx, fy)
    for a, b in zip((x, pos, fx, fy), copies):
        assert np.array_equal(a, b)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("call", "arg"),
    [
        (lambda: ref.axial_freqs(6), "d"),
        (lambda: ref.axial_freqs(0), "d"),
        (lambda: ref.axial_freqs(8.0), "d"),
        (lambda: ref.axial_freqs(8, 1.0), "base"),
        (lambda: ref.mixed_freqs(10), "d"),
        (lambda: ref.mixed_freqs(8, 0.5), "base"),
        (lambda: ref.mixed_freqs(8, 10.0, math.inf), "phi"),
        (lambda: ref.patch_positions(0, 3), "grid_h"),
        (lambda: ref.patch_positions(2, 2.5), "grid_w"),
        (lambda: ref.rope_2d_angles([[1, 2, 3]], [1.0], [1.0]), "positions"),
        (lambda: ref.rope_2d_angles([[-1, 2]], [1.0], [1.0]), "positions"),
        (lambda: ref.rope_2d_angles([[1.5, 2]], [1.0], [1.0]), "positions"),
        (lambda: ref.rope_2d_angles([[1, 2]], [1.0, 2.0], [1.0]), "freqs_x"),
        (lambda: ref.rope_2d_angles([[1, 2]], [[1.0]], [[1.0]]), "freqs_x"),
        (lambda: ref.apply_rope_2d(np.ones(6), [1, 2], *ref.axial_freqs(8)), "vec"),
        (lambda: ref.apply_rope_2d(np.ones(7), [1, 2], [1.0] * 3, [1.0] * 3), "vec"),
        (lambda: ref.apply_rope_2d(np.ones((2, 8)), [1, 2], *ref.axial_freqs(8)), "positions"),
        (lambda: ref.apply_rope_2d(np.ones(8), [1, -2], *ref.axial_freqs(8)), "positions"),
        (lambda: ref.interaction_term(np.ones(8), np.ones(6), 1, 1, *ref.axial_freqs(8)), "q"),
        (lambda: ref.interaction_term(np.ones(4), np.ones(4), 1, 1, *ref.axial_freqs(8)), "q"),
        (lambda: ref.interaction_term(np.ones(8), np.ones(8), 4.5, 1, *ref.axial_freqs(8)), "dx"),
        (lambda: ref.interaction_term(np.ones(8), np.ones(8), 1, "2", *ref.axial_freqs(8)), "dy"),
        (lambda: ref.mrope_position_ids([]), "segments"),
        (lambda: ref.mrope_position_ids([("video", 3)]), "kind"),
        (lambda: ref.mrope_position_ids([("text", 0)]), "length"),
        (lambda: ref.mrope_position_ids([("image", (3, 4))]), "spatial_merge_size"),
        (lambda: ref.mrope_position_ids([("text", 1)], 0), "spatial_merge_size"),
        (lambda: ref.mrope_angles(np.zeros((2, 4), int), 8, 1e4, [2, 1, 1]), "position_ids"),
        (lambda: ref.mrope_angles(-np.ones((3, 4), int), 8, 1e4, [2, 1, 1]), "position_ids"),
        (lambda: ref.mrope_angles(np.zeros((3, 4), int), 8, 1e4, [2, 1, 2]), "mrope_section"),
        (lambda: ref.mrope_angles(np.zeros((3, 4), int), 8, 1e4, [2, 2]), "mrope_section"),
        (lambda: ref.mrope_angles(np.zeros((3, 4), int), 8, 1e4, [3, -1, 2]), "mrope_section"),
        (lambda: ref.mrope_angles(np.zeros((3, 4), int), 7, 1e4, [2, 1, 1]), "d"),
        (lambda: ref.mrope_angles(np.zeros((3, 4), int), 8, 1.0, [2, 1, 1]), "base"),
        (
            lambda: ref.mrope_interleaved_angles(np.zeros((2, 4), int), 8, 1e4, [2, 1, 1]),
            "position_ids",
        ),
        (
            lambda: ref.mrope_interleaved_angles(-np.ones((3, 4), int), 8, 1e4, [2, 1, 1]),
            "position_ids",
        ),
        (
            lambda: ref.mrope_interleaved_angles(np.zeros((3, 4), int), 8, 1e4, [2, 2, 0]),
            "mrope_section",
        ),
        (
            lambda: ref.mrope_interleaved_angles(np.zeros((3, 4), int), 8, 1e4, [1, 1, 2]),
            "mrope_section",
        ),
        (
            lambda: ref.mrope_interleaved_angles(np.zeros((3, 4), int), 8, 1e4, [2, 1]),
            "mrope_section",
        ),
        (lambda: ref.mrope_interleaved_angles(np.zeros((3, 4), int), 7, 1e4, [2, 1, 1]), "d"),
        (lambda: ref.mrope_interleaved_angles(np.zeros((3, 4), int), 8, 1.0, [2, 1, 1]), "base"),
    ],
)
def test_bad_input_is_refused(call, arg):
    raises_naming(call, arg)


def test_whole_offsets_accepted():
    q, k = ref.demo_vectors()
    freqs = ref.mixed_freqs(64, 10.0, 0.3)
    assert np.array_equal(
        ref.interaction_term(q, k, 4.0, -2, *freqs), ref.interaction_term(q, k, 4, -2.0, *freqs)
    )


# --------------------------------------------------------------------------- Qwen3-VL

RECENT = Path(__file__).parent / "data" / "transformers_rope_recent.json"


@cache
def recent() -> dict:
    return json.loads(RECENT.read_text(encoding="utf-8"))


def test_mrope_interleaved_angles_equal_qwen3_vl():
    """Every recorded case of Qwen3VLTextRotaryEmbedding (transformers 5.24.0, float32) within
    the course tolerance; the one layout the course refuses ([16, 24, 24] at d = 128: a height
    or width section too large to interleave, which HF takes) is refused."""
    data = recent()["mrope_interleaved"]
    assert recent()["transformers"] == "5.24.0" and data["text_only_is_1d_bitwise"]
    compared = 0
    for case in data["cases"]:
        d, base, section = case["d"], case["base"], case["mrope_section"]
        if 3 * section[1] > d // 2 + 1 or 3 * section[2] > d // 2:
            with pytest.raises(ValueError, match="mrope_section"):
                ref.mrope_interleaved_angles(case["position_ids"], d, base, section)
            continue
        within(ref.thetas(d, base), case["inv_freq"])
        within(ref.mrope_interleaved_angles(case["position_ids"], d, base, section), case["angles"])
        compared += 1
    assert compared >= 25


def test_spec_mrope_interleaved():
    ids = ref.mrope_position_ids([("text", 2), ("image", (4, 6)), ("text", 2)])
    got = ref.mrope_interleaved_angles(ids, 8, 1e4, [2, 1, 1])
    assert np.allclose(got[3], [2, 0.2, 0.03, 0.002], rtol=1e-12)
    unit = ref.mrope_interleaved_angles(np.eye(3, dtype=int), 128, 1e6, [24, 20, 20])
    assert np.allclose(unit.max(axis=1), [1, 0.806, 0.649], atol=5e-4)  # the spec's rates
    blocks = ref.mrope_angles(np.eye(3, dtype=int), 128, 1e6, [16, 24, 24])
    assert np.allclose(blocks.max(axis=1), [1, 0.0316, 1.78e-4], rtol=2e-3)
    assert abs(15 * blocks[2].max() - 0.0027) < 5e-5  # across 16 columns, Qwen2-VL's width


def test_mrope_interleaved_text_only_is_1d_rope_bitwise():
    p = np.arange(300)
    for d, base, section in [(128, 1e6, [24, 20, 20]), (8, 1e4, [2, 1, 1]), (12, 1e4, [2, 2, 2])]:
        got = ref.mrope_interleaved_angles(np.stack([p, p, p]), d, base, section)
        assert np.array_equal(got, np.outer(p, ref.thetas(d, base)))


def test_mrope_interleaved_by_hand():
    """An independent formulation: the axis of pair j from the pattern t, h, w written out."""
    d, section = 12, [2, 2, 2]
    pattern = ["t", "h", "w", "t", "h", "w"]  # 3 * 2 = 6 = d/2: every pair in the pattern
    ids = np.array([[3], [5], [7]])
    got = ref.mrope_interleaved_angles(ids, d, 1e4, section)[0]
    th = ref.thetas(d, 1e4)
    want = [{"t": 3, "h": 5, "w": 7}[a] * th[j] for j, a in enumerate(pattern)]
    assert np.allclose(got, want, rtol=1e-15)


def test_mrope_interleaved_bound_is_where_qwen3_vl_stops_cutting():
    """At 3 * s_h = d/2 + 1 HF's slice(1, 3 * s_h, 3) still gives the height its s_h pairs, and
    the course takes the section (Qwen3.5's [11, 11, 10] on 32 pairs); at 3 * s_w = d/2 + 1 HF
    gives the width s_w - 1 pairs (recorded), and the course refuses it."""
    for case in recent()["mrope_interleaved_edge"]:
        d, section = case["d"], case["mrope_section"]
        if case["pairs_per_axis"] == section:
            assert 3 * section[1] <= d // 2 + 1 and 3 * section[2] <= d // 2
            within(
                ref.mrope_interleaved_angles(case["position_ids"], d, case["base"], section),
                case["angles"],
            )
        else:
            assert case["pairs_per_axis"][2] == section[2] - 1  # HF cut the width short
            with pytest.raises(ValueError, match="mrope_section"):
                ref.mrope_interleaved_angles(case["position_ids"], d, case["base"], section)
    taken = [c["mrope_section"] for c in recent()["mrope_interleaved_edge"]]
    assert [11, 11, 10] in taken and [10, 11, 11] in taken

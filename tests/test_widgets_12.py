"""The explorer of 12_rope_today, driven headless.

Built on the reference functions; its sliders are moved and the data of its artists is
compared with values computed here independently (the layer plan by its rule, the rates as
plain powers, the tokens a sink cache keeps by counting, the cache against a fresh rotation
written out). A learner's stub must be reported in its panel only, and the factory must
return None while nbgrader runs.
"""

from __future__ import annotations

import numpy as np
import pytest

import helpers.reference as ref
from helpers.widgets import rope_today

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def interactive_session(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


def make(**defaults) -> rope_today.RopeTodayExplorer:
    ex = rope_today.rope_today_explorer(
        layer_rope_bases=ref.layer_rope_bases,
        partial_thetas=ref.partial_thetas,
        proportional_thetas=ref.proportional_thetas,
        sink_cache_update=ref.sink_cache_update,
        apply_rope=ref.apply_rope,
        **defaults,
    )
    assert isinstance(ex, rope_today.RopeTodayExplorer)
    return ex


def stub(*args, **kwargs):
    raise NotImplementedError


def test_the_layer_plan_follows_the_rule():
    ex = make(n_layers=62, every=6)
    cells = np.asarray(ex.plan_image.get_array(), dtype=float)[0]
    globals_ = [i for i in range(62) if (i + 1) % 6 == 0]  # 5, 11, ..., 59
    assert np.flatnonzero(np.isclose(cells[:62], 6.0)).tolist() == globals_
    assert np.allclose(np.delete(cells[:62], globals_), 4.0)
    assert np.all(np.isnan(cells[62:]))
    ex.controls["no_rope"].value = True
    ex.controls["every"].value = 4
    cells = np.asarray(ex.plan_image.get_array(), dtype=float)[0]
    assert np.flatnonzero(np.isnan(cells[:62])).tolist() == list(range(3, 62, 4))
    assert "15 of 62 layers" in ex.plan_note.get_text()


def test_the_rates_of_a_partly_rotated_head():
    ex = make(pairs=32)
    i = np.arange(128)
    partial = np.asarray(ex.partial_line.get_ydata(), dtype=float)
    proportional = np.asarray(ex.proportional_line.get_ydata(), dtype=float)
    np.testing.assert_allclose(partial[:32], 1e6 ** (-2.0 * i[:32] / 64), rtol=1e-12)
    np.testing.assert_allclose(proportional[:32], 1e6 ** (-2.0 * i[:32] / 256), rtol=1e-12)
    assert np.all(np.isnan(partial[32:])) and np.all(np.isnan(proportional[32:]))
    ex.controls["pairs"].value = 128
    np.testing.assert_allclose(ex.partial_line.get_ydata(), ex.proportional_line.get_ydata())


def test_the_sink_cache_keeps_the_sinks_and_the_latest_tokens_exactly():
    ex = make(window=6, num_sink=2, steps=3)
    assert ex.kept_tokens == [0, 1, 5, 6, 7, 8]
    ids = np.asarray(ex.slot_image.get_array(), dtype=float)[0]
    assert ids[:6].tolist() == [0, 1, 5, 6, 7, 8] and np.all(np.isnan(ids[6:]))
    assert np.max(ex.errors_per_slot) < 1e-14
    ex.controls["steps"].value = 200
    ex.controls["window"].value = 16
    ex.controls["num_sink"].value = 4
    assert ex.kept_tokens == [0, 1, 2, 3, *range(204, 216)]
    # independent: the kept raw keys rotated at their slots, written out
    raw = ex.raw[ex.kept_tokens]
    ang = np.arange(16)[:, None] * 1e4 ** (-np.arange(4) / 4.0)
    fresh = np.empty_like(raw)
    fresh[:, 0::2] = raw[:, 0::2] * np.cos(ang) - raw[:, 1::2] * np.sin(ang)
    fresh[:, 1::2] = raw[:, 0::2] * np.sin(ang) + raw[:, 1::2] * np.cos(ang)
    cache = ref.apply_rope(ex.raw[:16], np.arange(16))
    for t in range(16, 216):
        cache = ref.sink_cache_update(cache, ex.raw[t : t + 1], 4)
    assert np.max(np.abs(cache - fresh)) < 1e-13
    assert np.max(ex.errors_per_slot) < 1e-13


def test_a_forward_turn_shows_in_the_error_panel():
    def forward(cache, new_keys, num_sink, base=10000.0):
        c, n = np.asarray(cache), len(new_keys)
        moved = ref.apply_rope(c[num_sink + n :], n, base)
        fresh = ref.apply_rope(np.asarray(new_keys), np.arange(len(c) - n, len(c)), base)
        return np.concatenate([c[:num_sink], moved, fresh])

    ex = rope_today.RopeTodayExplorer(
        ref.layer_rope_bases,
        ref.partial_thetas,
        ref.proportional_thetas,
        forward,
        ref.apply_rope,
        window=6,
        num_sink=2,
        steps=3,
    )
    assert np.max(ex.errors_per_slot) > 0.1


def test_a_stub_is_named_and_the_other_panels_are_drawn():
    ex = rope_today.RopeTodayExplorer(
        ref.layer_rope_bases, stub, ref.proportional_thetas, stub, ref.apply_rope
    )
    assert "partial_thetas" in ex.message.value and "sink_cache_update" in ex.message.value
    assert ex.plan is not None
    assert np.isfinite(np.asarray(ex.proportional_line.get_ydata(), dtype=float)[0])
    assert bytes(ex.image.value).startswith(PNG)


def test_every_move_changes_the_image():
    ex = make()
    before = bytes(ex.image.value)
    for name, value in (("every", 4), ("pairs", 64), ("num_sink", 1), ("steps", 50)):
        ex.controls[name].value = value
        now = bytes(ex.image.value)
        assert now.startswith(PNG) and now != before, name
        before = now


def test_the_factory_draws_nothing_while_nbgrader_runs(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert (
        rope_today.rope_today_explorer(
            layer_rope_bases=ref.layer_rope_bases,
            partial_thetas=ref.partial_thetas,
            proportional_thetas=ref.proportional_thetas,
            sink_cache_update=ref.sink_cache_update,
            apply_rope=ref.apply_rope,
        )
        is None
    )


def test_qwen35s_axes_and_the_learned_sink_are_shown():
    """With qwen35_rope_angles, the rotated pairs carry the axis of Qwen3.5's interleave (at 32
    pairs the released sections [11, 11, 10]: height on 1, 4, ..., 31, width on 2, 5, ...,
    29); with sink_softmax, the note says the sink of logit 0 takes 1 / (window + 1)."""
    ex = make(
        pairs=32,
        window=16,
        qwen35_rope_angles=ref.qwen35_rope_angles,
        sink_softmax=ref.sink_softmax,
    )
    t, h, w = (np.asarray(line.get_ydata(), dtype=float) for line in ex.axis_lines)
    assert np.flatnonzero(np.isfinite(h)).tolist() == list(range(1, 32, 3))
    assert np.flatnonzero(np.isfinite(w)).tolist() == list(range(2, 30, 3))
    assert np.flatnonzero(np.isfinite(t)).tolist() == list(range(0, 31, 3))
    rates = np.fmin(
        np.fmin(np.nan_to_num(t, nan=np.inf), np.nan_to_num(h, nan=np.inf)),
        np.nan_to_num(w, nan=np.inf),
    )[:32]
    np.testing.assert_allclose(rates, 1e6 ** (-2.0 * np.arange(32) / 64), rtol=1e-12)
    assert abs(ex.sink_share - 1 / 17) < 1e-12
    assert "takes 0.059" in ex.cache_note.get_text()
    ex.controls["window"].value = 4
    assert abs(ex.sink_share - 1 / 5) < 1e-12


def test_a_stub_sink_or_qwen35_is_named_and_the_cache_stays_drawn():
    ex = make(qwen35_rope_angles=stub, sink_softmax=stub, window=6, num_sink=2, steps=3)
    assert "qwen35_rope_angles" in ex.message.value and "sink_softmax" in ex.message.value
    assert ex.kept_tokens == [0, 1, 5, 6, 7, 8] and np.max(ex.errors_per_slot) < 1e-14
    assert np.isfinite(np.asarray(ex.partial_line.get_ydata(), dtype=float)[0])

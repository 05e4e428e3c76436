"""The benchmark's scaffolding (bench/widget_update.py): it finds every explorer itself.

No widget module carries a hook for the benchmark: the benchmark discovers the ``Explorer``
subclasses of ``helpers.widgets``, builds each on ``helpers.reference`` at d = 512 (and
the other largest sizes) and moves every control. These tests replace the per-module
``bench_explorers`` tests: every explorer is found and built at full size, every move
changes the picture without an error, and no move draws the whole figure again.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

from helpers import widgets
from helpers.widgets import (
    alibi,
    decay,
    families,
    long_context,
    norm,
    offsets,
    order,
    rope,
    rope_nd,
    rope_today,
    rotation,
    sincos,
    train_short,
)
from helpers.widgets.base import Explorer

MODULES = (
    alibi,
    decay,
    families,
    long_context,
    norm,
    offsets,
    order,
    rope,
    rope_nd,
    rope_today,
    rotation,
    sincos,
    train_short,
)
# Explorers whose every move keeps the background cached (no full redraw) at the largest
# sizes: all of them.
LAYERED = (
    "alibi",
    "decay",
    "families",
    "long_context",
    "norm",
    "offsets",
    "order",
    "rope",
    "rope_nd",
    "rope_today",
    "rotation",
    "sincos",
)


@pytest.fixture(scope="module")
def bench():
    return importlib.import_module("bench.widget_update")


def test_no_widget_module_carries_bench_scaffolding():
    for module in MODULES:
        assert not hasattr(module, "bench_explorers"), f"{module.__name__} has bench_explorers"
    assert "bench" not in Path(widgets.__file__).read_text()


def test_every_explorer_class_is_found(bench):
    found = {cls for _, cls in bench.explorer_classes()}
    expected = {
        cls
        for module in MODULES
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, Explorer) and cls is not Explorer and cls.__module__ == module.__name__
    }
    assert found == expected, sorted(c.__name__ for c in found)
    # every widget module has an explorer (11_rope_nd's has two: the score map, M-RoPE)
    assert {cls.__module__ for cls in found} == {m.__name__ for m in MODULES}


@pytest.mark.parametrize("module", [m.__name__.rsplit(".", 1)[1] for m in MODULES])
def test_explorers_build_at_full_size_and_every_move_redraws_without_a_full_draw(bench, module):
    """Built on the reference at d = 512 (rows 512 where the explorer has them); each
    control's new value changes the picture, reports no error and keeps the background."""
    for cls in [cls for name, cls in bench.explorer_classes() if name == module]:
        check_full_size_moves(bench, module, cls)


def check_full_size_moves(bench, module: str, cls) -> None:
    explorer = bench.build(cls)
    assert explorer.message.value == ""
    values = explorer.values()
    layered = module in LAYERED
    if "d" in values:  # 10 takes d up to 256, the range its rates are checked on
        assert values["d"] == min(512, explorer.controls["d"].max)
    for name in ("max_len", "n", "seq_len"):
        if name in values:
            assert values[name] == 512
    for name, control in explorer.controls.items():
        start = control.value
        new = bench.new_value(control)
        assert new != start, name
        timed = bench.time_move(explorer, name, new, repeat=2)
        kind = timed["kind"]
        assert kind in ("blit", "layer", "full")
        if layered:
            assert kind in ("blit", "layer"), f"moving {name} draws the whole figure again"
        assert len(timed["last"]) == len(timed["cpu"]) == 2
        # every refresh sends a frame; the first comes no later than the last
        assert all(n >= 1 for n in timed["frames"]), (name, timed["frames"])
        assert all(0 < f <= t for f, t in zip(timed["first"], timed["last"]))
        before = bytes(explorer.image.value)
        control.value = new
        assert explorer.message.value == "", (name, explorer.message.value)
        assert bytes(explorer.image.value) != before, f"moving {name} left the picture as it was"
        control.value = start


def test_a_move_shown_in_two_frames_is_timed_to_its_first_frame(bench):
    """07's explorer answers a large move with the biases first, then the distances: the
    benchmark times the first frame apart from the last and counts both frames."""
    explorer = bench.build(alibi.AlibiExplorer)
    start = explorer.controls["heads"].value
    assert start * 512**2 > alibi.PROGRESSIVE
    timed = bench.time_move(explorer, "heads", bench.new_value(explorer.controls["heads"]), 2)
    assert timed["frames"] == [2, 2]
    assert all(f < t for f, t in zip(timed["first"], timed["last"]))
    timed = bench.time_move(explorer, "pos", bench.new_value(explorer.controls["pos"]), 2)
    assert timed["frames"] == [1, 1]

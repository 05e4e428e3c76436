"""The explorer of 13_train_short, driven headless, on curves made here.

The curves are built by hand (a flat model, one that jumps at 40, one with a single spike);
the sliders are moved and the lines, the breaking points marked and the summary are compared
with what those curves are by construction. Nothing trains in a move. A stub breaking_point
costs only its marks; under nbgrader the factory returns None.
"""

from __future__ import annotations

import numpy as np
import pytest

import helpers.reference as ref
from helpers.widgets import train_short as ts


@pytest.fixture(autouse=True)
def interactive_session(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


def results() -> dict:
    best = np.full(256, 0.9)
    jump = best + np.where(np.arange(256) >= 44, 1.0, 0.0)
    spike = best.copy()
    spike[50] += 2.0
    curves = {n: best.copy() for n in ("nope", "sinusoidal", "learned", "alibi", "t5")}
    curves.update(rope=jump, t5_md128=spike)
    return {"best": best, "curves": curves}


def test_lines_follow_the_length_and_the_breaking_points_are_marked():
    ex = ts.train_short_explorer(results=results(), breaking_point=ref.breaking_point)
    assert isinstance(ex, ts.TrainShortExplorer)
    ex.controls["length"].value = 64
    assert len(ex.lines["rope"].get_xdata()) == 64
    assert list(ex.marks["rope"].get_xdata()) == [44]  # the jump, 3 in a row above 0.1
    assert list(ex.marks["alibi"].get_xdata()) == []  # flat: no break
    assert "rope +0.31" in ex.text.get_text()  # 20 of 64 positions 1.0 above the best
    ex.controls["t5_md128"].value = True  # one spike is no break
    assert list(ex.marks["t5"].get_xdata()) == []
    assert "t5_md128 +0.03" in ex.text.get_text()  # 2.0 / 64
    ex.controls["rope"].value = False
    assert len(ex.lines["rope"].get_xdata()) == 0 and "rope" not in ex.text.get_text()


def test_a_stub_breaking_point_costs_only_its_marks():
    def stub(*args, **kwargs):
        raise NotImplementedError

    ex = ts.train_short_explorer(results=results(), breaking_point=stub)
    ex.controls["length"].value = 128
    assert len(ex.lines["rope"].get_xdata()) == 128
    assert list(ex.marks["rope"].get_xdata()) == []
    assert ex.errors


def test_none_under_nbgrader(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert ts.train_short_explorer(results=results(), breaking_point=ref.breaking_point) is None


def yarn_reads(best: np.ndarray) -> dict:
    """YaRN reads by (beta_fast, factor): beta_fast 1 breaks at 40 (+1.0), beta_fast 32 never;
    the factor-2 reads are 0.5 above the best everywhere, so the factor used shows."""
    reads = {}
    for b in (1.0, 32.0):
        for k in (2, 4, 8):
            n = 32 * k
            curve = best[:n] + (0.5 if k == 2 else 0.0)
            if b == 1.0 and k > 2:
                curve = curve + np.where(np.arange(n) >= 40, 1.0, 0.0)
            reads[(b, k)] = {"rates": np.ones(8), "curve": curve}
    return reads


def test_beta_fast_picks_the_precomputed_yarn_read():
    res = results()
    ex = ts.train_short_explorer(
        results=res, breaking_point=ref.breaking_point, yarn=yarn_reads(res["best"])
    )
    assert "beta_fast" in ex.controls and "yarn" in ex.controls
    ex.controls["length"].value = 128  # 4x covers 128
    line, mark = ex.lines[ts.YARN], ex.marks[ts.YARN]
    assert len(line.get_xdata()) == 128 and list(mark.get_xdata()) == []
    assert ex.yarn_text.get_text() == "rope+YaRN at 4x,\nbeta_fast 32:\n+0.00"
    ex.controls["beta_fast"].value = 1.0
    assert list(mark.get_xdata()) == [40]
    assert ex.yarn_text.get_text().endswith(
        "at 4x,\nbeta_fast 1:\n+0.69"
    )  # 88 of 128 positions 1.0 above
    ex.controls["length"].value = 64  # 2x covers 64: its read, 0.5 above
    assert ex.yarn_text.get_text().endswith("at 2x,\nbeta_fast 1:\n+0.50")
    ex.controls["beta_fast"].value = 12.0  # typed: the nearest precomputed, on a log scale
    assert (
        ex.nearest_beta(12.0) == 32.0
        and ex.nearest_beta(3.0) == 1.0
        and "beta_fast 32:" in ex.yarn_text.get_text()
    )
    ex.controls["yarn"].value = False
    assert len(line.get_xdata()) == 0 and ex.yarn_text.get_text() == ""


def test_without_yarn_reads_there_is_no_beta_fast():
    ex = ts.train_short_explorer(results=results(), breaking_point=ref.breaking_point)
    assert "beta_fast" not in ex.controls and ts.YARN not in ex.lines


def test_at_the_training_length_breaking_point_is_never_called():
    """At length 32 no position is past the training length: breaking_point's contract
    (train_len in [0, T)) would make it raise, so the explorer does not call it; past 32 it
    is called with the break window of the notebook (8)."""
    calls = []

    def strict(excess, train_len, threshold=0.1, window=3):
        calls.append((len(excess), train_len, window))
        return ref.breaking_point(excess, train_len, threshold, window)

    ex = ts.train_short_explorer(results=results(), breaking_point=strict)
    ex.controls["length"].value = 32
    assert not ex.errors
    assert all(T > train_len for T, train_len, _ in calls)
    ex.controls["length"].value = 64
    assert calls and calls[-1][0] == 64 and {w for *_, w in calls} == {8}


def test_each_model_keeps_its_look_and_is_named_at_its_end():
    """One colour and line style per model (the course's palette), the same as the notebook's
    figures, and a direct label at the end of each line; the x-axis follows the length."""
    from helpers.plots import train_short_style

    res = results()
    ex = ts.train_short_explorer(results=res, breaking_point=ref.breaking_point)
    ex.controls["length"].value = 64
    looks = {(ex.lines[n].get_color(), str(ex.lines[n].get_linestyle())) for n in ts.SCHEMES}
    assert len(looks) == len(ts.SCHEMES)
    for name in ts.SCHEMES:
        assert ex.lines[name].get_color() == train_short_style(name)["color"]
        assert ex.labels[name].get_text() == name
    assert ex.ax.get_xlim()[1] == 64


def test_breaks_are_read_over_the_optimum_when_there_is_one():
    """A model exactly as noisy as the optimum on the same sequences has no break."""
    res = results()
    noise = np.where(np.arange(256) % 20 < 10, 0.3, -0.3)
    res["optimum"] = res["best"] + noise
    res["curves"]["alibi"] = res["optimum"].copy()
    ex = ts.train_short_explorer(results=res, breaking_point=ref.breaking_point)
    ex.controls["length"].value = 256
    assert list(ex.marks["alibi"].get_xdata()) == []
    assert ref.breaking_point(res["curves"]["alibi"] - res["best"], 32) is not None

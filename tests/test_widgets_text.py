"""Every explorer's figure can be read: its text is at least 12 CSS pixels tall at 100 %
zoom, no two texts overlap and none is cut off at the figure's edge, at its start values, at the largest sizes of the course, and
with each slider at either end of its range, in English and in Korean (whose labels are
often wider). The static figures of ``helpers.plots`` are held to the same size.

The explorers are found, not listed (``bench.widget_update.explorer_classes``), and built
on the reference functions. The browser test (tests/test_browser.py) measures how large
the page shows each figure; here a figure is at its own CSS size (``figsize * 72``).
"""

from __future__ import annotations

import importlib

import pytest

from helpers import i18n
from helpers.widgets.base import Explorer
from tests.figure_text import MIN_PX, outside, overlaps, texts

bench = importlib.import_module("bench.widget_update")
CLASSES = bench.explorer_classes()


def _small(explorer: Explorer) -> Explorer:
    """An explorer of the same class on the reference functions at its own start values."""
    cls = type(explorer)
    return cls(**bench.reference_kwargs(cls))


def _ends(control) -> list:
    """The two ends of a control's range (a checkbox: both states; a text box: none)."""
    if isinstance(control.value, bool):
        return [not control.value, control.value]
    if isinstance(control.value, str):
        return []
    if hasattr(control, "base"):  # a log slider
        return [control.base**control.min, control.base**control.max]
    return [control.min, control.max]


def _problems(explorer: Explorer, state: str) -> list[str]:
    found = texts(explorer.fig, Explorer.dpi)
    said = [f"{state}: {t} is smaller than {MIN_PX} px" for t in found if t.size < MIN_PX]
    said += [f"{state}: {a} overlaps {b}" for a, b in overlaps(found)]
    said += [f"{state}: {t} is cut off" for t in outside(found, explorer.fig, Explorer.dpi)]
    return said


LANGUAGES = ("en", "ko")


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("cls", [c for _, c in CLASSES], ids=[n for n, _ in CLASSES])
def test_explorer_text_is_large_enough_and_never_overlaps(cls, lang):
    with i18n.speaking(lang):
        large = bench.build(cls)
        problems = _problems(large, "largest sizes")
        explorer = _small(large)
        problems += _problems(explorer, "start values")
        for name, control in explorer.controls.items():
            start = control.value
            for value in _ends(control):
                control.value = value
                problems += _problems(explorer, f"{name} = {value!r}")
            control.value = start
    assert not problems, "\n".join(dict.fromkeys(problems))


# --------------------------------------------------------------------------- static figures
def _pictures():
    """Every figure of ``helpers.plots``, with the arguments the notebooks give it."""
    import math

    import numpy as np

    import helpers.reference as ref
    from helpers import plots

    lengths = [16, 32, 64, 128, 256, 512, 1024]
    by_length = np.array(
        [ref.mean_attention_distance(ref.softmax(ref.alibi_bias(8, n))) for n in lengths]
    )
    ks = np.arange(0, 1001)
    offsets = [0, 1, 2, 3, 5, 8, 10, 15, 20]
    ds = [16, 64, 256, 512]
    return {
        "pe_heatmaps": plots.pe_heatmaps(
            [
                ("d = 16, positions 0..23 (the text picture)", ref.sinusoidal_pe(24, 16)),
                ("d = 128, positions 0..199", ref.sinusoidal_pe(200, 128)),
            ]
        ),
        "wavelength_figure": plots.wavelength_figure(ref.wavelengths, ds=(8, 64, 512)),
        "norm_bars": plots.norm_bars(
            [("d = 64", 1.0, 8.0, math.sqrt(32)), ("d = 512", 1.0, 22.6, 16.0)]
        ),
        "pair_energy_figure": plots.pair_energy_figure(ref.sinusoidal_pe(100, 32), [0, 25, 80]),
        "ratio_figure": plots.ratio_figure(
            ds, [1 / ref.expected_norm(d) for d in ds], [math.sqrt(2)] * len(ds)
        ),
        "profile_figure": plots.profile_figure(
            {f"d = {d}": (ks, ref.closed_form_dot(ks, d) / (d / 2)) for d in (32, 128, 512)},
            (offsets, ref.dot_profile(ref.sinusoidal_pe(100, 32), 25, offsets) / 16),
            title="PE[pos] . PE[pos + k] / (d/2), base 10000",
            log_k=True,
        ),
        "layout_figure": plots.layout_figure(ref.interleaved_to_half, d=8),
        "distance_by_length_figure": plots.distance_by_length_figure(
            lengths, by_length, ref.alibi_slopes(8)
        ),
        "turns_figure": plots.turns_figure(ref.turns, ref.slow_pairs, 64, [1, 16, 256, 4096]),
    }


@pytest.mark.parametrize("lang", LANGUAGES)
def test_static_figures_fit_the_output_and_their_text_is_large_enough(lang):
    """A static figure is shown at 90 CSS pixels per inch, no wider than ``MAX_WIDTH`` (the
    output of a notebook in a 1400-pixel window with the file browser open is wider: the
    browser test measures it), so its text is what these sizes say."""
    from helpers.plots import MAX_WIDTH, Picture

    problems = []
    with i18n.speaking(lang):
        for name, picture in _pictures().items():
            picture.png()  # lay the figure out as the notebook shows it
            width = picture.fig.get_size_inches()[0] * Picture.dpi
            if width > MAX_WIDTH + 0.5:
                problems.append(f"{name}: {width:.0f} CSS px wide, over {MAX_WIDTH}")
            found = texts(picture.fig, Picture.dpi)
            problems += [
                f"{name}: {t} is smaller than {MIN_PX} px" for t in found if t.size < MIN_PX
            ]
            problems += [f"{name}: {a} overlaps {b}" for a, b in overlaps(found)]
            problems += [
                f"{name}: {t} is cut off" for t in outside(found, picture.fig, Picture.dpi)
            ]
    assert not problems, "\n".join(problems)

"""Every figure has a text alternative that says what it shows, in words and numbers.

Static figures (``helpers.plots``): the notebook's output carries the PNG with its alt text
(the figure's name) and, one click away, the figure in words; the plain-text output is those
words. Explorers: their words (``Explorer.words``) name every series of the legend and follow
the figure when a slider moves it. The numbers are checked against values known without the
code under test (2 pi, the shortest wavelength of every sinusoidal table; the bars' inputs).
"""

from __future__ import annotations

import html
import importlib
import math
import re

import pytest

from helpers import figure_words
from helpers.widgets.base import interactive
from tests.test_widgets_text import CLASSES, _pictures

bench = importlib.import_module("bench.widget_update")
PICTURES = _pictures()


def _legend_labels(fig) -> list[str]:
    labels = []
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is not None:
            labels += [t.get_text() for t in legend.get_texts()]
    return [" ".join(label.split()) for label in labels if label.strip()]


@pytest.mark.skipif(not interactive(), reason="nbgrader's run: figures render nothing")
@pytest.mark.parametrize("name", list(PICTURES))
def test_a_static_figure_carries_its_alt_text_and_its_words(name):
    picture = PICTURES[name]
    data, _meta = picture._repr_mimebundle_()
    page = data["text/html"]
    alt = re.search(r'<img [^>]*alt="([^"]*)"', page)
    assert alt and alt.group(1).strip(), f"{name}: the image has no alt text: {page[:300]}"
    assert "<details>" in page and html.escape(data["text/plain"]) in page, (
        f"{name}: the figure in words is not one click away under the image"
    )
    assert data["image/png"].startswith(b"\x89PNG"), f"{name}: the PNG is still there"
    words = data["text/plain"]
    assert re.search(r"\d", words), f"{name}: its words hold no number: {words}"
    missing = [label for label in _legend_labels(picture.fig) if label not in words]
    assert not missing, f"{name}: the words do not name {missing}: {words}"


def test_the_words_hold_the_figures_numbers():
    """The shortest wavelength of every sinusoidal table is 2 pi (pair 0 turns by one radian
    a token); the bars say the values they were given."""
    words = PICTURES["wavelength_figure"].words()
    assert words.count(f"{2 * math.pi:.3g}") >= 3, words  # one per d
    bars = PICTURES["norm_bars"].words()
    for value in ("22.6", "16", f"{math.sqrt(32):.3g}"):
        assert value in bars, f"{value} is not said: {bars}"


@pytest.mark.parametrize("cls", [c for _, c in CLASSES], ids=[n for n, _ in CLASSES])
def test_an_explorers_words_name_its_series_and_follow_a_move(cls):
    explorer = bench.build(cls)
    before = explorer.words.summary
    assert explorer.words.alt.strip(), f"{cls.__name__}: its image has no alt text"
    missing = [label for label in _legend_labels(explorer.fig) if label not in before]
    assert not missing, f"{cls.__name__}: the words do not name {missing}: {before}"
    assert re.search(r"\d", before), f"{cls.__name__}: no number in its words: {before}"
    sliders = [c for c in explorer.controls.values() if hasattr(c, "min")]
    moved = sliders[0]
    moved.value = bench.new_value(moved)
    after = explorer.words.summary
    assert after != before, f"{cls.__name__}: the words did not follow a move of {moved}"
    assert after == figure_words.describe(explorer.fig)

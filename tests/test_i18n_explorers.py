"""Every explorer speaks Korean in a Korean notebook: controls, titles, axes, legends.

Each explorer is built on the reference functions while the notebook's language is Korean
and every control is moved once. No message may be missing from the catalogue (that
raises), no English text of the catalogue may be left on the figure or the controls, and
Hangul must be drawn with a font that has it (matplotlib warns of a missing glyph). The
rope explorer's picture is written to ``artifacts/ko-rope-explorer.png`` to look at.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from bench import widget_update as wu
from helpers import i18n

HANGUL = re.compile("[\uac00-\ud7a3]")
ENGLISH = re.compile(r"[A-Za-z]{3,}\s+[A-Za-z]{2,}")
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
CLASSES = wu.explorer_classes()


def shown_texts(explorer) -> list[str]:
    """Every text of the explorer's figure and the descriptions of its controls."""
    texts = [t.get_text() for t in explorer.fig.findobj(lambda a: hasattr(a, "get_text"))]
    texts += [c.description for c in explorer.controls.values()]
    texts.append(explorer.title)
    return [t for t in texts if t]


def english_only() -> set[str]:
    """Catalogue texts whose Korean differs: none of them may show in a Korean explorer."""
    return {en for en, entry in i18n.catalogue().items() if entry.get("ko") != en and len(en) > 3}


@pytest.mark.parametrize("module, cls", CLASSES, ids=[name for name, _ in CLASSES])
def test_explorer_in_korean(module, cls):
    leftovers = english_only()
    with i18n.speaking("ko"), warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*[Gg]lyph.*missing.*")
        explorer = wu.build(cls)
        for control in explorer.controls.values():
            control.value = wu.new_value(control)
        assert explorer.image.value, f"{module}: no picture"
        texts = shown_texts(explorer)
    assert any(HANGUL.search(t) for t in texts), f"{module}: nothing in Korean: {texts}"
    left = sorted(t for t in texts if t in leftovers)
    assert not left, f"{module}: English left in the Korean explorer: {left}"
    # words, not formulas or names: two English words in a row with no Hangul beside them
    words = sorted({t for t in texts if not HANGUL.search(t) and ENGLISH.search(t)})
    assert not words, f"{module}: English words in the Korean explorer: {words}"
    if module == "rope":
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "ko-rope-explorer.png").write_bytes(explorer.image.value)


def test_english_explorer_is_unchanged_by_the_catalogue():
    """In English the explorer shows the catalogue's keys themselves, no Hangul."""
    cls = dict(CLASSES)["rope"]
    explorer = wu.build(cls)
    texts = shown_texts(explorer)
    assert "RoPE: the score sees n - m only" in texts
    assert not any(HANGUL.search(t) for t in texts), texts

"""A font with Hangul for the figures, so that Korean titles and labels render.

Matplotlib's default font (DejaVu Sans) has no Hangul. ``ensure()`` registers NanumGothic
(from the ``koreanize-matplotlib`` package, a dependency of the course, so every set-up
installs it) or, failing that, a system font that has Hangul, as a fallback after DejaVu
Sans: Latin text looks as before and each Hangul character comes from the fallback.
``make doctor`` reports when no such font is found.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

SAMPLE = "위치 인코딩"
SYSTEM_FAMILIES = (
    "NanumGothic",
    "Noto Sans CJK KR",
    "Noto Sans KR",
    "Malgun Gothic",
    "AppleGothic",
)


def bundled_font() -> Path | None:
    """NanumGothic.ttf of the koreanize-matplotlib package (not imported: it restyles plots)."""
    spec = find_spec("koreanize_matplotlib")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "fonts" / "NanumGothic.ttf"
        if path.exists():
            return path
    return None


@lru_cache(maxsize=1)
def hangul_family() -> str | None:
    """The family name of a font with Hangul that matplotlib can use, or None."""
    from matplotlib import font_manager

    path = bundled_font()
    if path is not None:
        for face in sorted(path.parent.glob("NanumGothic*.ttf")):  # regular, bold, ...
            font_manager.fontManager.addfont(str(face))
        return font_manager.FontProperties(fname=str(path)).get_name()
    names = {f.name for f in font_manager.fontManager.ttflist}
    return next((family for family in SYSTEM_FAMILIES if family in names), None)


def ensure() -> str | None:
    """Put the Hangul font after the default one in matplotlib's font list (once); its name."""
    import matplotlib

    family = hangul_family()
    if family is None:
        return None
    current = list(matplotlib.rcParams["font.family"])
    if family not in current:
        if current == ["sans-serif"]:
            current = list(matplotlib.rcParams["font.sans-serif"][:1])
        matplotlib.rcParams["font.family"] = [*current, family]
    return family


def renders_hangul() -> bool:
    """True when a figure can draw Hangul: the fallback font has the sample's glyphs."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    family = hangul_family()
    if family is None:
        return False
    path = font_manager.findfont(
        font_manager.FontProperties(family=family), fallback_to_default=False
    )
    font = FT2Font(path)
    return all(font.get_char_index(ord(ch)) for ch in SAMPLE if not ch.isspace())

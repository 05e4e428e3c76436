"""No figure tells its series apart by colour alone, and its colours stay apart for every eye.

For every figure of ``helpers.plots`` and every explorer (built on the reference functions),
the series a reader must tell apart are read from the figure: the labelled lines, bars and
scatters of each panel (what its legend names).

- Colour alone: two series of one panel differ in their line style, their marker or their
  hatch, as well as in colour (a figure printed in grey still says which is which).
- Colour vision: the series' colours are simulated for full deuteranopia, protanopia and
  tritanopia (colorspacious: Machado, Oliveira and Fernandes 2009, severity 100) and every two
  series of a panel are at least ``MIN_DELTA_E00`` apart in CIEDE2000 (CIE 2001; Sharma, Wu and
  Dalal 2005, whose published test pairs check the library here), computed by colour-science.
  On the CIEDE2000 scale 1 is about a just-noticeable difference and 2 to 10 is "perceptible at
  a glance" (Z. Schuessler, *Delta E 101*, the table colour tools quote): the course asks for
  the top of that band, 10, since two neighbouring series must be told apart at a glance, not
  found by comparing. CAM02-UCS (Luo, Cui and Li 2006) is printed beside it and holds the
  same margin. The distances are printed, per figure and simulation.

A panel whose series are shades of one colour map ordered by lightness (07's heads, dark for
the steepest slope) is measured on its lightness order instead: it must survive every
simulation (J' of CAM02-UCS strictly monotonic).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

colorspacious = pytest.importorskip("colorspacious")
colour = pytest.importorskip("colour")

MIN_DELTA_E = 10.0  # CAM02-UCS
MIN_DELTA_E00 = 10.0  # CIEDE2000
DEFICIENCIES = ("deuteranomaly", "protanomaly", "tritanomaly")


def _series(fig) -> list[list[dict]]:
    """Per panel, the series its legend names: colour (RGB), line style, marker, hatch."""
    from matplotlib.collections import PathCollection
    from matplotlib.colors import to_rgb
    from matplotlib.container import BarContainer

    panels = []
    for ax in fig.axes:
        found = []
        for line in ax.lines:
            label = line.get_label()
            if label and not label.startswith("_") and line.get_visible():
                ls = line.get_linestyle()
                drawn = ls not in ("None", "", " ", "none")
                marker = line.get_marker()
                found.append(
                    {
                        "label": label,
                        "rgb": to_rgb(line.get_color()),
                        # dash pattern (scaled by the width: a thicker line differs too)
                        "look": (
                            str(line._dash_pattern) if drawn else "no line",
                            marker if marker not in ("", " ", "None", None) else "no marker",
                        ),
                    }
                )
        for container in ax.containers:
            if isinstance(container, BarContainer) and not container.get_label().startswith("_"):
                patch = container.patches[0]
                found.append(
                    {
                        "label": container.get_label(),
                        "rgb": to_rgb(patch.get_facecolor()),
                        "look": ("bar", patch.get_hatch() or ""),
                    }
                )
        for coll in ax.collections:
            label = coll.get_label()
            if isinstance(coll, PathCollection) and label and not label.startswith("_"):
                colours = coll.get_facecolor()
                if len(colours) == 1:
                    found.append({"label": label, "rgb": tuple(colours[0][:3]), "look": ("dot",)})
        if len(found) >= 2:
            panels.append(found)
    return panels


def _lab(rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of sRGB colours in [0, 1]."""
    return colour.XYZ_to_Lab(colour.sRGB_to_XYZ(rgb))


def _delta_e00(a: np.ndarray, b: np.ndarray) -> float:
    return float(colour.delta_E(a, b, method="CIE 2000"))


# Sharma, Wu and Dalal 2005, "The CIEDE2000 color-difference formula: implementation notes,
# supplementary test data, and mathematical observations", Table 1, pairs 1-3
SHARMA_PAIRS = [
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, 3.1571, -77.2803), (50.0, 0.0, -82.7485), 2.8615),
    ((50.0, 2.8361, -74.0200), (50.0, 0.0, -82.7485), 3.4412),
]


@pytest.mark.parametrize(("lab1", "lab2", "published"), SHARMA_PAIRS)
def test_the_distance_is_ciede2000_as_its_authors_published_it(lab1, lab2, published):
    assert _delta_e00(np.array(lab1), np.array(lab2)) == pytest.approx(published, abs=5e-5)


def _simulated(rgb: np.ndarray, deficiency: str) -> np.ndarray:
    cvd = {"name": "sRGB1+CVD", "cvd_type": deficiency, "severity": 100}
    return np.clip(colorspacious.cspace_convert(rgb, cvd, "sRGB1"), 0.0, 1.0)


def _figures() -> dict[str, object]:
    import importlib

    from tests.test_widgets_text import CLASSES, _pictures

    bench = importlib.import_module("bench.widget_update")
    figures = {name: picture.fig for name, picture in _pictures().items()}
    figures |= {cls.__name__: bench.build(cls).fig for _, cls in CLASSES}
    return figures


FIGURES = _figures()


@pytest.mark.parametrize("name", list(FIGURES))
def test_no_two_series_differ_by_colour_alone(name):
    """Two series of a panel differ in line style, marker or hatch, not in colour only."""
    problems = []
    for panel in _series(FIGURES[name]):
        for a, b in itertools.combinations(panel, 2):
            if a["look"] == b["look"]:
                problems.append(f"{a['label']!r} and {b['label']!r} differ in colour only")
    assert not problems, f"{name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("name", list(FIGURES))
def test_series_colours_stay_apart_under_colour_vision_deficiency(name):
    """Every two series of a panel stay MIN_DELTA_E00 apart (CIEDE2000), and MIN_DELTA_E in
    CAM02-UCS, under each simulation."""
    problems, table = [], []
    for k, panel in enumerate(_series(FIGURES[name])):
        rgb = np.array([s["rgb"] for s in panel], dtype=float)
        on_ramp = np.array([_on_ramp(c) for c in rgb]) if len(panel) > 2 else np.zeros(len(panel))
        on_ramp = on_ramp.astype(bool)
        if on_ramp.sum() > 2:  # shades of one map, ordered by lightness
            for deficiency in DEFICIENCIES:
                seen = colorspacious.cspace_convert(
                    _simulated(rgb[on_ramp], deficiency), "sRGB1", "CAM02-UCS"
                )
                steps = np.diff(seen[np.argsort(_ramp_place(rgb[on_ramp])), 0])
                table.append(f"panel {k} {deficiency}: lightness steps from {steps.min():.1f}")
                if not np.all(steps > 0):
                    problems.append(f"panel {k}: {deficiency} breaks the lightness order")
        else:
            on_ramp[:] = False
        for deficiency in ("normal", *DEFICIENCIES):
            seen = rgb if deficiency == "normal" else _simulated(rgb, deficiency)
            lab = _lab(seen)
            pairs = [
                (
                    _delta_e00(lab[i], lab[j]),
                    colorspacious.deltaE(seen[i], seen[j], input_space="sRGB1"),
                    i,
                    j,
                )
                for i, j in itertools.combinations(range(len(rgb)), 2)
                if not (on_ramp[i] and on_ramp[j])  # the ramp is measured by its order
                and not np.allclose(rgb[i], rgb[j])  # one colour on purpose: the same thing
            ]
            if not pairs:
                continue
            worst, _cam, i, j = min(pairs)
            cam = min(p[1] for p in pairs)
            table.append(
                f"panel {k} {deficiency}: closest {panel[i]['label']!r} / {panel[j]['label']!r} "
                f"{worst:.1f} (CIEDE2000; CAM02-UCS closest {cam:.1f})"
            )
            if worst < MIN_DELTA_E00:
                problems.append(
                    f"panel {k}: {deficiency}: {panel[i]['label']!r} and {panel[j]['label']!r} "
                    f"are {worst:.1f} apart (CIEDE2000), under {MIN_DELTA_E00}"
                )
            if cam < MIN_DELTA_E:
                problems.append(f"panel {k}: {deficiency}: {cam:.1f} apart in CAM02-UCS")
    print(f"\n{name}: " + "; ".join(table))
    assert not problems, f"{name}:\n" + "\n".join(problems)


VIRIDIS_STEPS = 1024


def _viridis() -> np.ndarray:
    from matplotlib import colormaps

    return colormaps["viridis"](np.linspace(0, 1, VIRIDIS_STEPS))[:, :3]


def _on_ramp(colour: np.ndarray) -> bool:
    """A shade of viridis (within rounding)."""
    return bool(((_viridis() - colour) ** 2).sum(axis=1).min() < 1e-4)


def _ramp_place(rgb: np.ndarray) -> np.ndarray:
    """Where each colour sits on viridis (0 dark .. 1 light)."""
    ramp = _viridis()
    return np.array([np.argmin(((ramp - c) ** 2).sum(axis=1)) for c in rgb])


def test_the_check_fails_on_matplotlib_default_colours():
    """The old colours of 13's explorer (tab:gray, blue, orange, green, red, purple, olive)
    fail the distance check under deuteranopia: the test can fail."""
    from matplotlib.colors import to_rgb

    old = ["tab:gray", "tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:olive"]
    seen = _simulated(np.array([to_rgb(c) for c in old]), "deuteranomaly")
    lab = _lab(seen)
    worst = min(_delta_e00(lab[i], lab[j]) for i, j in itertools.combinations(range(len(old)), 2))
    print(f"\nmatplotlib's tab colours under deuteranopia: closest pair {worst:.1f} (CIEDE2000)")
    assert worst < MIN_DELTA_E00

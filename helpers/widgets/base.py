"""The explorer every notebook's widgets are built on.

An explorer is a matplotlib ``Figure`` drawn once, sliders, and an ``Image`` widget.
Moving a slider calls ``update(**values)``, which changes the data of the existing
artists (``set_data``, ``set_ydata``, ...) and re-renders the same figure into the same
image: nothing is re-created, so nothing flickers, and no JupyterLab extension is needed.

While nbgrader validates or autogrades (``NBGRADER_EXECUTION`` is set) the factories
return ``None`` and draw nothing.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping

import ipywidgets as widgets
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def interactive() -> bool:
    """False while nbgrader runs the notebook: explorers then draw nothing."""
    return "NBGRADER_EXECUTION" not in os.environ


class Explorer:
    """Sliders that update one figure in place.

    Subclasses build their artists in ``draw(fig)`` once and change their data in
    ``update(**values)``. ``controls`` maps a parameter name to its widget; tests set
    ``explorer.controls["d"].value = 32`` and read the artists' data afterwards.
    """

    dpi = 72

    def __init__(self, controls: Mapping[str, widgets.ValueWidget], figsize=(9, 4), title: str = ""):
        self.controls = dict(controls)
        self.fig = Figure(figsize=figsize, layout="constrained")
        FigureCanvasAgg(self.fig)
        self.image = widgets.Image(format="png")
        self.message = widgets.HTML()
        self.title = title
        self.draw(self.fig)
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.refresh()

    # -- to implement ---------------------------------------------------------------
    def draw(self, fig: Figure) -> None:
        raise NotImplementedError

    def update(self, **values) -> None:
        raise NotImplementedError

    # -- machinery ------------------------------------------------------------------
    def values(self) -> dict:
        return {name: control.value for name, control in self.controls.items()}

    def refresh(self) -> None:
        """Recompute from the current slider values and redraw into the same image."""
        try:
            self.update(**self.values())
            self.message.value = ""
        except Exception as exc:  # a learner's function may still be a stub
            self.message.value = f"<b>cannot draw:</b> {type(exc).__name__}: {exc}"
        self.render()

    def render(self) -> None:
        buf = io.BytesIO()
        self.fig.savefig(buf, format="png", dpi=self.dpi)
        self.image.value = buf.getvalue()

    def _on_change(self, _change) -> None:
        self.refresh()

    def widget(self) -> widgets.Widget:
        rows = [widgets.HTML(f"<b>{self.title}</b>")] if self.title else []
        return widgets.VBox(rows + [widgets.HBox(list(self.controls.values())), self.image, self.message])

    def _repr_mimebundle_(self, **kwargs):
        return self.widget()._repr_mimebundle_(**kwargs)


def int_slider(description: str, value: int, lo: int, hi: int, step: int = 1) -> widgets.IntSlider:
    return widgets.IntSlider(value=value, min=lo, max=hi, step=step, description=description,
                             continuous_update=False)


def log_slider(description: str, value: float, lo: float, hi: float) -> widgets.FloatLogSlider:
    """A slider for ``base``: 10**lo .. 10**hi on a log scale."""
    import math

    return widgets.FloatLogSlider(value=value, base=10, min=lo, max=hi, step=0.05,
                                  description=description, continuous_update=False)

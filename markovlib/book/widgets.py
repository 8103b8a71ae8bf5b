"""Interactive explorers for the chapters (ipywidgets), built on drawing functions that also run headless.

Pattern: each explorer is a plain function ``draw_*(..., ax=None) -> dict`` (in its part's ``drawings`` module,
e.g. :mod:`markovlib.markov.drawings`) that draws one static figure for given slider values and returns the outcome
it displays. ``explorer(draw, **sliders)`` wraps it in ipywidgets sliders when the notebook runs live in Jupyter.
Batch runs (CI's nbval, the committed executions, sweeps) set ``MARKOVLIB_BATCH=1`` and get only the static figure,
which the rendered book shows.
"""
from __future__ import annotations

from .session import interactive_session


def explorer(draw, **sliders):
    """Build an ipywidgets ``interactive`` around ``draw`` with one control per keyword.

    ``sliders`` maps a parameter name to (min, max, step, value) (a FloatSlider) or to a list of strings (a
    Dropdown over them, starting at the first; e.g. an optimizer's name). Returns the widget (display it), or None
    outside an interactive session.
    """
    if not interactive_session():
        return None
    import ipywidgets as W
    import matplotlib.pyplot as plt

    controls = {}
    for name, spec in sliders.items():
        if isinstance(spec, list) and spec and all(isinstance(v, str) for v in spec):
            controls[name] = W.Dropdown(options=spec, value=spec[0], description=name)
        else:
            lo, hi, step, value = spec
            controls[name] = W.FloatSlider(min=lo, max=hi, step=step, value=value, description=name,
                                           continuous_update=False)

    def _update(**values):
        draw(**values)
        plt.show()

    return W.interactive(_update, **controls)

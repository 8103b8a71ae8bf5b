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
    """Build an ipywidgets ``interactive`` around ``draw`` with one FloatSlider per keyword.

    ``sliders`` maps a parameter name to (min, max, step, value). Returns the widget (display it), or None outside
    an interactive session.
    """
    if not interactive_session():
        return None
    import ipywidgets as W
    import matplotlib.pyplot as plt

    controls = {name: W.FloatSlider(min=lo, max=hi, step=step, value=value, description=name, continuous_update=False)
                for name, (lo, hi, step, value) in sliders.items()}

    def _update(**values):
        draw(**values)
        plt.show()

    return W.interactive(_update, **controls)

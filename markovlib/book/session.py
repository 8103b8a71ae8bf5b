"""Where the code runs: a live Jupyter kernel or a batch execution.

Light on purpose (no matplotlib, no ipywidgets): the progress bars of training and integration ask it which bar
to draw. Batch runs (CI's nbval, the committed executions, sweeps) set ``MARKOVLIB_BATCH=1``.
"""
from __future__ import annotations

import os

BATCH_ENV = "MARKOVLIB_BATCH"


def interactive_session() -> bool:
    """True inside a live Jupyter kernel that is not a batch execution (MARKOVLIB_BATCH=1 marks those)."""
    if os.environ.get(BATCH_ENV) == "1":
        return False
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None

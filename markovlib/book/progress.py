"""Progress bars that suit where the code runs.

Live in Jupyter: tqdm's widget bar. Batch runs (CI's nbval, committed executions, sweeps: ``MARKOVLIB_BATCH=1``)
and terminals: tqdm's text bar, drawn only when it starts and when it ends (``mininterval=inf``, and kept), so the
output a notebook records does not depend on timing (its elapsed-time fields are masked by nbval's sanitizer),
and the static book needs no widget JavaScript.
"""
from __future__ import annotations

import math

from .session import interactive_session


def progress_bar(*args, **kwargs):
    """``tqdm(*args, **kwargs)``: the widget bar in an interactive session, else a start/end-only text bar."""
    if interactive_session():
        from tqdm.auto import tqdm

        return tqdm(*args, **kwargs)
    from tqdm.std import tqdm

    kwargs.setdefault("mininterval", math.inf)
    kwargs.setdefault("ascii", True)
    kwargs["leave"] = True  # keep the final line (with leave=False the record would end in an erased, empty line)
    return tqdm(*args, **kwargs)

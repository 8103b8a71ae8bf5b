"""The chapters' declared parameters: one module per chapter, named after it, holding ``SPEC``
(:func:`markovlib.book.params.declare`: each parameter's kind, accepted range and the reason for the range, and the
conditions between parameters).

A chapter's validation cell, right after its ``parameters`` cell, reads

    from markovlib.book import specs
    SPEC = specs.load("low_rank")
    globals().update(SPEC.check(globals()))
    SPEC.table()

so that the chapter declares its parameters once, in the package, and one call checks them (issue 34, item 3). The
rendered table shows every range and its reason beside the chapter's parameters; an out-of-range value stops in that
cell with a ValueError naming the parameter, its range and the reason.
"""
from __future__ import annotations

import importlib
import re

from markovlib.book.params import Declared


def load(chapter: str) -> Declared:
    """The declared parameters of ``chapter`` (a chapter's file name without ``.ipynb``)."""
    if not isinstance(chapter, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", chapter):
        raise ValueError(f"chapter must be a chapter's file name such as 'low_rank', got {chapter!r}")
    try:
        module = importlib.import_module(f"{__name__}.{chapter}")
    except ModuleNotFoundError:
        raise ValueError(f"chapter {chapter!r} has no declared parameters (no module {__name__}.{chapter})") from None
    spec = getattr(module, "SPEC", None)
    if not isinstance(spec, Declared):
        raise ValueError(f"{__name__}.{chapter} must define SPEC = params.declare(...)")
    return spec

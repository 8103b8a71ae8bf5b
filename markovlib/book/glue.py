"""Prose statistics computed by the chapters: :func:`glue` hands a value to a markdown cell's ``{glue:text}``
role (myst-nb), so that no sentence can disagree with the run.
"""
from __future__ import annotations

import re


def glue(name: str, value) -> str:
    """Glue ``value`` (printed text, or a number printed with ``str``) under ``name`` for the prose: a markdown cell
    writes ``{glue:text}`name``` and the book shows the computed value, so no sentence can disagree with the run.
    Returns the text. Needs myst-nb (the book's notebook reader); outside a kernel it only returns the text."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"name must be an identifier, got {name!r}")
    text = str(value)
    from myst_nb import glue as _glue

    _glue(name, text, display=False)
    return text

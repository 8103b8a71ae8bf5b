"""Prose statistics computed by the chapters: :func:`glue` hands a value to a markdown cell's ``{glue:text}``
role (myst-nb), so that no sentence can disagree with the run.

The rendered book substitutes the values where the prose cites them. A reader who runs a chapter in Jupyter sees
the roles instead (JupyterLab with jupyterlab-myst renders MyST, but not values glued by a kernel), so the chapter
ends with :func:`summary`: its own "What this chapter shows", with every ``{glue:text}`` role replaced by the value
this kernel glued and the book's cross-references written as plain text. ``GLUED`` is that record: the values
glued in this kernel, by name (one kernel runs one chapter).
"""
from __future__ import annotations

import re
from pathlib import Path

GLUED: dict[str, str] = {}
_ROLE = re.compile(r"\{glue:text\}`([A-Za-z_][A-Za-z0-9_]*)`")
_REF = re.compile(r"\{(?:prf:ref|doc|ref|numref|eq)\}`(?:([^`<]*?)\s*<)?([^`>]+)>?`")
_CITE = re.compile(r"\{cite:[tp]\}`([^`]+)`")
_ANCHOR = re.compile(r"\[([^\]]+)\]\(#[\w-]+\)")


def glue(name: str, value) -> str:
    """Glue ``value`` (printed text, or a number printed with ``str``) under ``name`` for the prose: a markdown cell
    writes ``{glue:text}`name``` and the book shows the computed value, so no sentence can disagree with the run.
    Returns the text, and keeps it in :data:`GLUED` for :func:`summary`. Needs myst-nb (the book's notebook
    reader)."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"name must be an identifier, got {name!r}")
    text = str(value)
    from myst_nb import glue as _glue

    _glue(name, text, display=False)
    GLUED[name] = text
    return text


def chapter_path(chapter: str) -> Path:
    """The notebook ``book/<chapter>.ipynb``, from ``book/`` (Jupyter, nbval), the repository root (papermill) or
    the checkout the package was installed from. ValueError when no such chapter exists."""
    if not isinstance(chapter, str) or not re.fullmatch(r"[A-Za-z0-9_]+", chapter):
        raise ValueError(f"chapter must be a chapter's file name without .ipynb, got {chapter!r}")
    for folder in (Path("."), Path("book"), Path(__file__).resolve().parents[2] / "book"):
        if (folder / f"{chapter}.ipynb").is_file():
            return folder / f"{chapter}.ipynb"
    raise ValueError(f"chapter must name a notebook of book/, got {chapter!r}")


def summary_markdown(text: str, values: dict) -> str:
    """``text`` with each ``{glue:text}`name``` replaced by ``values[name]`` (or ``[name: not computed in this
    run]``), cross-references (``{prf:ref}``, ``{doc}``, ``{ref}``, ``{eq}``) and citations (``{cite:t}``) written
    as plain text, and links to sections of the page as their text: what a Jupyter front end shows as it is."""
    out = _ROLE.sub(lambda m: values.get(m.group(1), f"[{m.group(1)}: not computed in this run]"), text)
    out = _REF.sub(lambda m: m.group(1) or m.group(2), out)
    out = _CITE.sub(lambda m: m.group(1), out)
    return _ANCHOR.sub(lambda m: m.group(1), out)


def summary(chapter: str, values: dict | None = None):
    """The chapter's "What this chapter shows", with this run's numbers (:func:`summary_markdown` over
    :data:`GLUED`, or ``values``): an IPython Markdown object, shown as the chapter's last cell but one in Jupyter
    (the rendered book removes that cell: its own summary already shows the values)."""
    import nbformat
    from IPython.display import Markdown

    nb = nbformat.read(chapter_path(chapter), as_version=4)
    lines, inside = [], False
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            if inside:
                break
            continue
        for line in cell.source.splitlines():
            if line.startswith("## "):
                if inside:
                    break
                inside = line[3:].strip().lower().startswith("what this chapter shows")
                if inside:
                    lines.append("**What this chapter shows, with this run's numbers**")
                continue
            if inside:
                lines.append(line)
        else:
            continue
        if inside and lines:
            break
    if not lines:
        raise ValueError(f"chapter {chapter!r} has no section '## What this chapter shows'")
    return Markdown(summary_markdown("\n".join(lines), GLUED if values is None else values))

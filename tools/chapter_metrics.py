"""The reading figures of the chapters (issue 34): code lines (all, and in visible cells, i.e. not tagged
``hide-input``), the median and largest code cell, function and class definitions, ``raise ValueError`` written by
hand, and the words of the opening paragraph and of "What this chapter shows" (an inline formula counts as one
word).

Code lines are counted as the issue counts them: lines that are neither blank nor only a comment (the cell sizes
count every line). The summary's words are counted in the rendered book when ``_build/html`` holds a page newer
than the notebook (a reference renders as its target's title, which can be several words: that is what a reader
reads); otherwise in the markdown source (each role one word), marked ``*``.

    python tools/chapter_metrics.py                 # one line per chapter, then the totals
    python tools/chapter_metrics.py book/low_rank.ipynb
"""
from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
DEF = re.compile(r"^\s*(def|class)\s+\w+", re.M)
RAISE = re.compile(r"raise\s+ValueError")


def words(markdown: str) -> int:
    """Words of a markdown text, an inline formula ($...$) or a role (``{glue:text}`x` ``) counted as one."""
    text = re.sub(r"\$\$.*?\$\$", " F ", markdown, flags=re.S)
    text = re.sub(r"\$[^$]+\$", " F ", text)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", " R ", text)
    text = re.sub(r"[#*_>|`()\[\]]", " ", text)
    return len([w for w in text.split() if re.search(r"\w", w)])


def rendered_words(html_path) -> int:
    """Words of "What this chapter shows" in a rendered page: the section's text up to its first code cell or
    subsection, every formula one word."""
    import bs4

    soup = bs4.BeautifulSoup(Path(html_path).read_text(), "html.parser")
    sec = soup.find("section", id=re.compile("what-this-chapter-shows"))
    if sec is None:
        return 0
    for m in sec.select("span.math, div.math"):
        m.replace_with(" F ")
    parts = []
    for child in sec.children:
        name = getattr(child, "name", None)
        if name == "section" or (name == "div" and "cell" in (child.get("class") or [])):
            break
        if name and re.fullmatch(r"h[1-6]", name):
            continue
        parts.append(child.get_text(" ") if hasattr(child, "get_text") else str(child))
    return len([w for w in " ".join(parts).split() if re.search(r"\w", w)])


def section(cells, title: str) -> str:
    """The markdown from the heading ``## title`` to the next level-2 heading."""
    out, inside = [], False
    for c in cells:
        if c.cell_type != "markdown":
            if inside:
                break
            continue
        for line in c.source.splitlines():
            if line.startswith("## "):
                if inside:
                    return "\n".join(out)
                inside = line[3:].strip().lower().startswith(title.lower())
                continue
            if inside:
                out.append(line)
    return "\n".join(out)


def metrics(path) -> dict:
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    sizes = [len(c.source.splitlines()) for c in code]
    counted = [sum(1 for line in c.source.splitlines() if line.strip() and not line.strip().startswith("#"))
               for c in code]
    hidden = [("hide-input" in c.metadata.get("tags", [])) for c in code]
    html = ROOT / "_build" / "html" / "book" / f"{Path(path).stem}.html"
    if html.is_file() and html.stat().st_mtime >= Path(path).stat().st_mtime:
        shows = rendered_words(html)
    else:
        shows = f"{words(section(nb.cells, 'What this chapter shows'))}*"
    first_md = next((c.source for c in nb.cells if c.cell_type == "markdown"), "")
    intro = "\n".join(line for line in first_md.split("\n## ")[0].splitlines() if not line.startswith("# "))
    return {"chapter": Path(path).stem, "code_lines": sum(counted),
            "visible_lines": sum(n for n, h in zip(counted, hidden) if not h), "cells": len(sizes),
            "median_cell": statistics.median(sizes) if sizes else 0, "largest_cell": max(sizes, default=0),
            "definitions": sum(len(DEF.findall(c.source)) for c in code),
            "raise_valueerror": sum(len(RAISE.findall(c.source)) for c in code),
            "intro_words": words(intro), "shows_words": shows}


def main(argv=None) -> int:
    paths = (argv if argv is not None else sys.argv[1:]) or sorted((ROOT / "book").glob("*.ipynb"))
    rows = [metrics(p) for p in paths]
    cols = list(rows[0])
    print("  ".join(f"{c:>15}" if i else f"{c:<26}" for i, c in enumerate(cols)))
    for r in rows:
        print("  ".join(f"{r[c]:>15}" if i else f"{r[c]:<26}" for i, c in enumerate(cols)))
    shows = [int(str(r["shows_words"]).rstrip("*")) for r in rows]
    all_sizes = [len(c.source.splitlines()) for p in paths for c in nbformat.read(p, as_version=4).cells
                 if c.cell_type == "code"]
    print(f"total: {sum(r['code_lines'] for r in rows)} code lines ({sum(r['visible_lines'] for r in rows)} visible) "
          f"in {len(all_sizes)} cells; median cell {statistics.median(all_sizes)}, largest {max(all_sizes)}; "
          f"{sum(r['definitions'] for r in rows)} definitions; {sum(r['raise_valueerror'] for r in rows)} raise "
          f"ValueError; summaries: median {statistics.median(shows)} words, largest {max(shows)}"
          + ("" if all(isinstance(r["shows_words"], int) for r in rows) else " (* from the source: build the book "
             "to count the rendered words)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

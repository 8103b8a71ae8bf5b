"""Numbers in the chapters' prose that come from nowhere (issue 35): every number in a chapter's markdown, outside
math, roles, labels, code and references to the papers' numbered items (Thm 2, Fig. 4, Sec. 5.2, Eq. (3), App. A.4,
Lemma 15, ...), must be one of

- glued (then it is not in the markdown at all: the prose writes ``{glue:text}`name```);
- a parameter's default, named as the parameter: the number appears next to the parameter's name in backticks
  (``steps`` = 1000, or 1000 steps (`steps`));
- in the chapter's short list of typed values, each with its source (the paper with its section, a derivation in
  the chapter, or a review's figure marked as the review's): the notebook metadata ``markovlib.typed_numbers``, a
  mapping from the number as written to its source.

``stray_numbers(path)`` lists them for one chapter (``tools/prose_numbers.py`` prints them for every chapter;
``tests/test_prose_numbers.py`` requires none).
"""
from __future__ import annotations

import re

import nbformat

ITEM = (r"(?:Thms?|Theorems?|Lemmas?|Lem\.|Props?\.?|Propositions?|Cor\.?|Corollary|Corollaries|Figs?\.|Figures?|"
        r"Secs?\.|Sections?|Eqs?\.|Equations?|Apps?\.|Appendix|Appendices|Defs?\.|Definitions?|Tables?|Algorithms?|"
        r"Remarks?|Assumptions?|Examples?|Part|Parts|Step|Steps|Claim|Claims|Item|Items|Issue|issue|stop)")
_ITEM_REF = re.compile(ITEM + r"\s*\(?[A-Z]?[\d.]+[a-z]?\)?(?:\s*(?:,|and|to|–|-|—)\s*\(?[A-Z]?[\d.]+[a-z]?\)?)*")
_STRIP = [re.compile(p, re.S) for p in (
    r"\$\$.*?\$\$", r"\$[^$]+\$", r"\{[\w:-]+\}`[^`]*`", r"`[^`]*`", r"^\(.*\)=\s*$", r"^:[\w-]+:.*$",
    r"^```.*$", r"\]\([^)]*\)", r"<[^>]+>", r"https?://\S+", r"^#{1,6} .*$")]
NUMBER = re.compile(r"(?<![\w.])[-+−]?\d+(?:[.,]\d+)*(?:\s*[·x×]\s*10\^?\S*|e[-+]?\d+)?%?(?![\w])")


def prose(md: str) -> str:
    """The markdown with math, roles, code, labels, link targets, headings and numbered paper items removed."""
    text = md
    for pattern in _STRIP:
        text = pattern.sub(" ", text) if pattern.flags & re.M else re.sub(pattern.pattern, " ", text,
                                                                          flags=re.S | re.M)
    return _ITEM_REF.sub(" ", text)


def named_defaults(md: str) -> set[str]:
    """Numbers written next to a parameter's name in backticks: `name` = 1000, `name` 1000, 1000 (`name`)."""
    out = set(re.findall(r"`\w+`\s*(?:=|of|is)?\s*([-+]?\d[\d.,e-]*)", md))
    out |= set(re.findall(r"([-+]?\d[\d.,e-]*)\s*[\w ]{0,20}\(`\w+`", md))
    return {x.rstrip(".,") for x in out}


def stray_numbers(path) -> list[tuple[int, str, str]]:
    """(cell index, number, the sentence around it) for every number of the chapter's prose that is neither glued,
    nor a named parameter default, nor in its list of typed values."""
    nb = nbformat.read(path, as_version=4)
    typed = {str(k) for k in nb.metadata.get("markovlib", {}).get("typed_numbers", {})}
    out = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        allowed = typed | named_defaults(cell.source)
        text = prose(cell.source)
        for m in NUMBER.finditer(text):
            num = m.group(0).strip().rstrip(".,")
            if num in allowed or num.lstrip("-+−") in allowed:
                continue
            context = " ".join(text[max(0, m.start() - 60):m.end() + 40].split())
            out.append((i, num, context))
    return out

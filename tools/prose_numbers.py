"""Numbers in the chapters' prose that come from nowhere (issue 35): every number in a chapter's markdown, outside
math, roles, labels, code and references to the papers' numbered items (Thm 2, Fig. 4, Sec. 5.2, Eq. (3), App. A.4,
Lemma 15, ...), must be one of

- glued (then it is not in the markdown at all: the prose writes ``{glue:text}`name```);
- a parameter's default, named as the parameter: the number appears next to the parameter's name in backticks
  (``steps`` = 1000, or 1000 steps (`steps`));
- in the chapter's short list of typed values, each with its source (the paper with its section, a derivation in
  the chapter, or a review's figure marked as the review's): the notebook metadata ``markovlib.typed_numbers``, a
  mapping from the number as written to its source.

    python tools/prose_numbers.py                    # every chapter: the numbers that are none of these
    python tools/prose_numbers.py book/low_rank.ipynb
"""
from __future__ import annotations

import sys
from pathlib import Path

from markovlib.book.prose_numbers import stray_numbers

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    paths = (argv if argv is not None else sys.argv[1:]) or sorted((ROOT / "book").glob("*.ipynb"))
    total = 0
    for path in paths:
        found = stray_numbers(path)
        total += len(found)
        for i, num, context in found:
            print(f"{Path(path).stem}: cell {i}: {num!r} in ... {context} ...")
    print(f"{total} numbers in the prose are neither glued, nor a named parameter default, nor a typed value with "
          f"its source")
    return 1 if total else 0


if __name__ == "__main__":
    raise SystemExit(main())

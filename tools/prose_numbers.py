"""Numbers in the chapters' prose that come from nowhere (issue 35): prints, per chapter, every number that is neither
glued, nor a parameter's default named as the parameter, nor a typed value with its source (the rules:
markovlib.book.prose_numbers).

    python tools/prose_numbers.py                    # every chapter
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

"""Numbers in prose come from somewhere (issue 35, item 2): in every chapter's markdown, each number outside math,
roles, labels and references to the papers' numbered items is glued, a parameter's default named as the parameter,
or in the chapter's short list of typed values (notebook metadata ``markovlib.typed_numbers``), each with its
source. The failure prints every number that is none of these."""
from pathlib import Path

import nbformat
import pytest

from markovlib.book.prose_numbers import stray_numbers

BOOK = Path(__file__).resolve().parents[1] / "book"
CHAPTERS = sorted(BOOK.glob("*.ipynb"))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_number_in_the_prose_comes_from_somewhere(path):
    found = stray_numbers(path)
    assert not found, f"{path.stem}: {len(found)} numbers from nowhere:\n" + "\n".join(
        f"  cell {i}: {num!r} in ... {context} ..." for i, num, context in found)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_typed_number_names_its_source(path):
    typed = nbformat.read(path, as_version=4).metadata.get("markovlib", {}).get("typed_numbers", {})
    short = {k: v for k, v in typed.items() if not isinstance(v, str) or len(v.split()) < 3}
    assert not short, f"{path.stem}: typed numbers without a source: {short}"

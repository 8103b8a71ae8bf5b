"""The maps of the papers (book/intro.md, part2.md, part3.md) cite only what exists, and mark every row's status.

Each map row names the paper's item, the chapter that treats it and a status: "derived and checked", "measured
only" or "not covered" with its reason. A label cited with {prf:ref} must be defined (``:label:``) in a chapter, and
a chapter cited with {doc} must exist.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
MAPS = ["intro.md", "part1.md", "part2.md", "part3.md"]
STATUSES = ("derived and checked", "measured only", "not covered")


def _labels() -> set[str]:
    labels = set()
    for path in BOOK.glob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "markdown":
                labels.update(re.findall(r"^:label: ([\w-]+)\s*$", "".join(cell["source"]), re.M))
    for path in BOOK.glob("*.md"):
        labels.update(re.findall(r"^:label: ([\w-]+)\s*$", path.read_text(), re.M))
    return labels


def _map_rows(text: str) -> list[list[str]]:
    """The body rows of every table whose header has a Status column, split into cells."""
    rows, in_map = [], False
    for line in text.splitlines():
        if not line.startswith("|"):
            in_map = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[-1] == "Status":
            in_map = True
        elif in_map and not set(cells[0]) <= set("-"):
            rows.append(cells)
    return rows


@pytest.mark.parametrize("name", MAPS)
def test_every_cited_label_and_chapter_exists(name):
    text = (BOOK / name).read_text()
    missing = sorted(set(re.findall(r"\{prf:ref\}`([\w-]+)`", text)) - _labels())
    assert not missing, f"{name} cites labels no chapter defines: {missing}"
    docs = set(re.findall(r"\{doc\}`([\w/.-]+)`", text))
    absent = sorted(d for d in docs if not any((BOOK / f"{d}{ext}").exists() for ext in (".ipynb", ".md")))
    assert not absent, f"{name} cites chapters that do not exist: {absent}"


@pytest.mark.parametrize("name", MAPS)
def test_every_map_row_has_a_status(name):
    rows = _map_rows((BOOK / name).read_text())
    assert rows, f"{name} has no map table with a Status column"
    for cells in rows:
        assert cells[-1].startswith(STATUSES), f"{name}: row {cells[0]!r} has status {cells[-1]!r}"
        if cells[-1].startswith("not covered"):
            assert ":" in cells[-1], f"{name}: row {cells[0]!r} is not covered but gives no reason"
        else:
            assert "{doc}" in cells[-2], f"{name}: row {cells[0]!r} names no chapter"


def test_the_map_parser_sees_a_missing_label(tmp_path):
    # the check could fail: a made-up label is not among the defined ones, a row without a status is seen
    assert "no-such-label-xyz" not in _labels()
    rows = _map_rows("| a | b | Status |\n|---|---|---|\n| x | {doc}`y` | maybe |\n")
    assert rows == [["x", "{doc}`y`", "maybe"]] and not rows[0][-1].startswith(STATUSES)

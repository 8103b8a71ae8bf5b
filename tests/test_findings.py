"""The page "What this book found" (book/findings.md) and the Part I landing page cite only chapters and labels that
exist, and every finding says whether it goes beyond or against the papers."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"


def _labels() -> set[str]:
    """Every sphinx-proof label defined in a chapter or a page of the book."""
    labels = set()
    for path in list(BOOK.glob("*.py")) + list(BOOK.glob("*.md")):
        labels.update(re.findall(r"^(?:# )?:label: ([\w-]+)\s*$", path.read_text(), re.M))
    return labels


def test_every_finding_names_its_kind_and_an_existing_chapter_and_label():
    text = (BOOK / "findings.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| Finding")]
    assert len(rows) >= 8
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1] in ("beyond", "against"), row
        docs = re.findall(r"\{doc\}`([\w-]+)`", cells[2])
        assert docs, f"no chapter cited: {row}"
        for d in docs:
            assert (BOOK / f"{d}.ipynb").exists() or (BOOK / f"{d}.md").exists(), d
    missing = set(re.findall(r"\{prf:ref\}`([\w-]+)`", text)) - _labels()
    assert not missing, f"labels cited but defined nowhere: {sorted(missing)}"


def test_the_landing_pages_and_the_findings_page_are_in_the_table_of_contents():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    for page in ("book/part1", "book/part2", "book/part3", "book/findings"):
        assert page in files, page
    assert files.index("book/part1") < files.index("book/markov_data")

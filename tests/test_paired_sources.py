"""Every chapter has a jupytext-paired percent script beside it (book/<chapter>.py), so that diffs, duplicate
detection and reviews work on the chapters' text; the two must hold the same cells (`jupytext --sync` after an
edit)."""
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("*.ipynb"))


def test_every_paired_script_has_its_chapter():
    scripts = {p.stem for p in (ROOT / "book").glob("*.py")}
    assert scripts == {p.stem for p in CHAPTERS}, scripts ^ {p.stem for p in CHAPTERS}


@pytest.mark.parametrize("nb_path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_the_percent_script_holds_the_chapters_cells(nb_path):
    nb = nbformat.read(nb_path, as_version=4)
    assert nb.metadata.get("jupytext", {}).get("formats") == "ipynb,py:percent", "pair it: jupytext --set-formats"
    script = jupytext.read(nb_path.with_suffix(".py"))
    cells = [(c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", []))) for c in nb.cells]
    paired = [(c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", []))) for c in script.cells]
    assert len(cells) == len(paired), f"{nb_path.name}: {len(cells)} cells, the script {len(paired)}: jupytext --sync"
    for i, (a, b) in enumerate(zip(cells, paired)):
        assert a == b, f"{nb_path.name}: cell {i} differs from its percent script: run jupytext --sync"

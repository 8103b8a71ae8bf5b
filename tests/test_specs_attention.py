"""The declared parameters of the chapter attention (markovlib.book.specs.attention): the defaults of the chapter's
parameters cell pass, and one out-of-range value per cross-parameter condition stops with a ValueError naming it."""
import re
from pathlib import Path

import nbformat
import pytest

from markovlib.book import specs

ROOT = Path(__file__).resolve().parents[1]


def defaults(chapter):
    nb = nbformat.read(ROOT / "book" / f"{chapter}.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", []))
    values = {}
    exec(cell.source, {}, values)
    return values


def test_defaults_pass():
    values = specs.load("attention").check(defaults("attention"))
    assert values["grid_n"] == 30 and values["pq_pairs"][0] == (0.9, 0.9)


@pytest.mark.parametrize("change, named", [
    ({"margin": 0.45}, "|p + q - 1| >= margin for every chain"),
    ({"p_hi": 0.3, "q_hi": 0.3}, "p_hi + q_hi > 1 > p_lo + q_lo"),
    ({"pq_pairs": [[0.9, 0.9], [0.5, 0.8]]}, "pq_pairs on both sides"),
    ({"example_theta": [0.1, 0.2]}, "len(example_theta) == len(squeeze_theta) == 3"),
    ({"mc_sigmas": [0.1, 0.5, 0.25]}, "mc_sigmas increase"),
    ({"mc_sigmas": [0.2, 0.5]}, "mc_sigmas increase"),
    ({"grid_n": 31}, "grid_n must be a multiple of 2"),
    ({"margin": 0.05}, "margin"),
])
def test_each_condition_stops_with_its_name(change, named):
    values = defaults("attention") | change
    with pytest.raises(ValueError, match=re.escape(named)):
        specs.load("attention").check(values)

"""The declared parameters of gradient_flow_energy, loss_landscape and markov_data (markovlib.book.specs): the
defaults of each chapter's parameters cell pass, and one out-of-range value per ``require`` condition stops with a
ValueError naming the condition."""
import ast
import json
from pathlib import Path

import pytest

from markovlib.book import specs

BOOK = Path(__file__).resolve().parents[1] / "book"


def defaults(chapter):
    """The values assigned in the chapter's parameters cell (literals only)."""
    nb = json.loads((BOOK / f"{chapter}.ipynb").read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    tree = ast.parse("".join(cell["source"]))
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            out[target.id] = ast.literal_eval(node.value)
    return out


def refused(chapter, match, **changes):
    values = {**defaults(chapter), **changes}
    with pytest.raises(ValueError, match=match):
        specs.load(chapter).check(values)


@pytest.mark.parametrize("chapter", ["gradient_flow_energy", "loss_landscape", "markov_data"])
def test_the_defaults_pass(chapter):
    values = specs.load(chapter).check(defaults(chapter))
    assert set(values) == set(defaults(chapter))


def test_gradient_flow_energy_refuses_each_condition():
    c = "gradient_flow_energy"
    refused(c, r"\|p \+ q - 1\| >= margin for pq_main", margin=0.35)
    refused(c, r"margin_good for pq_good", margin_good=0.2)
    refused(c, r"pq_main: two chains", pq_main=[[0.1, 0.1], [0.9, 0.9]])
    refused(c, r"n_grid must be a multiple of 2", n_grid=81)
    refused(c, r"n_free must be a multiple of 2", n_free=25)
    refused(c, r"free_gd_n must be a multiple of 2", free_gd_n=13)
    refused(c, r"sigmas increase", sigmas=[0.2, 0.5, 1.0])
    refused(c, r"sigmas increase", sigmas=[0.05, 1.0, 0.5])
    refused(c, r"n_mc >= 1.25 z\^2", n_mc=50)
    refused(c, r"gd_lrs: >= 3, decreasing", gd_lrs=[0.1, 0.2, 0.05])
    refused(c, r"iid_pq: p \+ q = 1", iid_pq=[0.4, 0.5])
    refused(c, r"free_gd_lrs: >= 2, decreasing", free_gd_lrs=[0.01])
    refused(c, r"t_eff", t_eff=100.0)


def test_loss_landscape_refuses_each_condition():
    c = "loss_landscape"
    refused(c, r"\|p \+ q - 1\| >= margin for every chain", margin=0.35)
    refused(c, r"pq_main: two chains", pq_main=[[0.1, 0.1], [0.9, 0.9]])
    refused(c, r"len\(pq_extra\) >= 2", pq_extra=[[0.5, 0.8]])
    refused(c, r"radius\^2 M_W <= \|c\*\|", pq_extra=[[0.5, 0.53], [0.2, 0.3]], radius=0.15)
    refused(c, r"n_starts", n_starts=100)


def test_markov_data_refuses_each_condition():
    c = "markov_data"
    refused(c, r"kmax <= length // 4", kmax=20, length=64)
    refused(c, r"n_sigma >= n_sigma_min", n_sigma=3.5)
    refused(c, r"\bp\b", p=0.99)


def test_markov_data_planned_tests_and_level_agree_with_the_package():
    from markovlib.book.specs import markov_data
    from markovlib.markov import checks

    assert markov_data.planned_tests(12) == 2 + 10 + 26 + 9
    assert markov_data.n_sigma_min(47, 0.01) == pytest.approx(checks.n_sigma_min(47, 0.01), rel=1e-14)

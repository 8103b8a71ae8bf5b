"""markovlib.book.specs for Part III's chapters topo_beyond_remarks, topo_homology, topo_breast_cancer and
topo_obstruction: the defaults of each chapter's parameters cell pass, and each requirement stops a bad value."""

import pytest
from notebooks import chapter_defaults

from markovlib.book import specs

CHAPTERS = ["topo_beyond_remarks", "topo_homology", "topo_breast_cancer", "topo_obstruction"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_defaults_pass(chapter):
    defaults = chapter_defaults(chapter)
    values = specs.load(chapter).check(defaults)
    assert set(values) <= set(defaults) and values["seed"] == defaults["seed"]


@pytest.mark.parametrize("chapter, change, names", [
    ("topo_beyond_remarks", dict(persist_min=1.5, max_edge=1.2), "persist_min < max_edge"),
    ("topo_beyond_remarks", dict(count_rate=1.0), "count_rate < 1"),
    ("topo_beyond_remarks", dict(bias_cases=[[3, 1, "+"]]), "bias_cases"),
    ("topo_beyond_remarks", dict(mc_cells=[["kaiming", 1, 1]]), "two widths"),
    ("topo_homology", dict(c_abs=0.0), "c_abs > 0"),
    ("topo_homology", dict(torus_c=[1.0, 3.0]), "max\\(torus_c\\) <= 2 min\\(torus_c\\)"),
    ("topo_homology", dict(n_seeds=4), "n_seeds \\* len\\(train_dims\\) >= 10"),
    ("topo_homology", dict(lr=0.0), "lr > 0"),
    ("topo_breast_cancer", dict(widths=[2, 3]), "the largest >= 8"),
    ("topo_breast_cancer", dict(lr=0.0), "lr > 0"),
    ("topo_breast_cancer", dict(steps=100), "lr \\* steps >= 30"),
    ("topo_breast_cancer", dict(slice_width=16), "slice_width in the stored widths"),
    ("topo_breast_cancer", dict(slice_inits=10**6), "slice_inits <= the stored n_inits"),
    ("topo_obstruction", dict(toy_lr=0.0), "toy_lr > 0"),
    ("topo_obstruction", dict(toy_steps=500), "10 <= toy_lr \\* toy_steps <= 100"),
    ("topo_obstruction", dict(n_recheck=30), "n_recheck"),
])
def test_a_bad_value_names_its_condition(chapter, change, names):
    values = dict(chapter_defaults(chapter), **change)
    with pytest.raises(ValueError, match=names):
        specs.load(chapter).check(values)

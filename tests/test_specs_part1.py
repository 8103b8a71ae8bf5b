"""markovlib.book.specs for init_guideline, canonical_model and authors_fig4: each chapter's defaults pass, and one
bad value per requirement stops with a ValueError naming it."""

import pytest
from notebooks import chapter_defaults

from markovlib.book import specs


@pytest.mark.parametrize("chapter", ["init_guideline", "canonical_model", "authors_fig4"])
def test_defaults_pass(chapter):
    defaults = chapter_defaults(chapter)
    values = specs.load(chapter).check(defaults)
    assert set(values) <= set(defaults) and values


def test_init_guideline_accepts_chains_with_p_greater_than_q():
    # issue 35, item 3: a chain with p > q is measured (claims 1 and 5 reported, not claimed), not refused
    values = specs.load("init_guideline").check({**chapter_defaults("init_guideline"), "p": 0.8, "q": 0.5})
    assert (values["p"], values["q"]) == (0.8, 0.5)


BAD = [
    ("init_guideline", dict(p=0.3, q=0.6), r"p \+ q >= 1 \+ margin"),
    ("init_guideline", dict(guideline_e=0.1, guideline_w=-0.1), r"E\(guideline_e, guideline_w\) > E_sad"),
    ("init_guideline", dict(plateau_window=[150, 400]), "plateau_window"),
    ("init_guideline", dict(rate=1.0), "rate < 1"),
    ("init_guideline", dict(sigmas=[0.05, 0.4]), "0.02 and 0.4 in sigmas"),
    ("init_guideline", dict(steps=1000), "steps"),
    ("init_guideline", dict(slice_steps=101), "slice_steps"),
    ("canonical_model", dict(p_low=0.5, q_low=0.49), r"p_low \+ q_low <= 1 - margin"),
    ("canonical_model", dict(chains_g=[[0.5, 0.5]]), r"\|p \+ q - 1\| >= margin for chains_g"),
    ("canonical_model", dict(e_values=[1.0, 2.0]), "e_values nonzero, both signs"),
    ("canonical_model", dict(w_values=[0.05, -0.05]), r"some \|w\| >= 0.1 in w_values"),
    ("canonical_model", dict(c_large=100.0), "c_large"),
    ("authors_fig4", dict(p_high=0.8, q_high=0.8), r"1 \+ margin <= p_high \+ q_high <= 1.3"),
    ("authors_fig4", dict(p_low=0.4, q_low=0.5), "p_low \\+ q_low <= 1 - margin"),
    ("authors_fig4", dict(p_low=0.1, q_low=0.1), r"c\*\(p_low, q_low\) <= 2.25"),
    ("authors_fig4", dict(bigram_ratio=1.0), "rate < 1 and bigram_ratio < 1"),
    ("authors_fig4", dict(slice_steps=10_000), "slice_steps <= slice_cap"),
    ("authors_fig4", dict(live_steps=1000), "live_steps"),
    ("authors_fig4", dict(at_tol=0.0), "slice_tol, at_tol, c_pin, pin_z > 0"),
]


@pytest.mark.parametrize("chapter, change, names", BAD)
def test_a_bad_value_names_its_condition(chapter, change, names):
    values = dict(chapter_defaults(chapter), **change)
    with pytest.raises(ValueError, match=names):
        specs.load(chapter).check(values)


def test_the_fig4_spec_computes_the_slice_cap_from_the_stored_prefix():
    from markovlib.book.specs import authors_fig4

    assert authors_fig4.slice_cap == int(authors_fig4.prefix_of.min()) // 2 >= 40

"""The declared parameters of the chapter transformer_yardsticks (markovlib.book.specs.transformer_yardsticks): the
defaults of the chapter's parameters cell pass, and one out-of-range value per cross-parameter condition stops with a
ValueError naming it."""
import re

import pytest
from test_specs_attention import defaults

from markovlib.book import specs

CHAPTER = "transformer_yardsticks"


def test_defaults_pass():
    values = specs.load(CHAPTER).check(defaults(CHAPTER))
    assert values["d"] == 8 and values["chains_thm4"][0] == (0.5, 0.8)


@pytest.mark.parametrize("change, named", [
    ({"p": 0.5, "q": 0.51}, "p + q >= 1 + margin"),
    ({"p_low": 0.5, "q_low": 0.49}, "p_low + q_low <= 1 - margin"),
    ({"chains_thm4": [[0.5, 0.55]], "margin": 0.1}, "|p + q - 1| >= margin for chains_thm4"),
    ({"radii": [0.1], "w_local": -0.45}, "0 < radii <= min(0.1, kappa(w_local) / 2)"),
    ({"d": 17}, "d must"),
])
def test_each_condition_stops_with_its_name(change, named):
    with pytest.raises(ValueError, match=re.escape(named)):
        specs.load(CHAPTER).check(defaults(CHAPTER) | change)


def test_the_specs_kappa_is_the_packages():
    from markovlib.book.specs import transformer_yardsticks as spec
    from markovlib.transformer import yardsticks

    for w in (-0.49, -0.2, 0.0, 0.7):
        assert spec.kappa(w) == yardsticks.kappa(w)

"""The declared parameters of beyond_two_states, closing and topo_balances (markovlib.book.specs): the defaults of
each chapter's parameters cell pass, and one value per cross-parameter requirement stops with a ValueError naming
that requirement."""
import re
from pathlib import Path

import pytest

from markovlib.book import specs

BOOK = Path(__file__).resolve().parents[1] / "book"


def defaults(chapter):
    """The values of the chapter's ``parameters`` cell, executed from its paired percent script."""
    text = (BOOK / f"{chapter}.py").read_text()
    cell = re.search(r'# %% tags=\["parameters"\]\n(.*?)\n# %%', text, re.S).group(1)
    namespace = {}
    exec(cell, namespace)
    return {k: v for k, v in namespace.items() if not k.startswith("__")}


def refused(chapter, requirement, **changes):
    spec = specs.load(chapter)
    values = {**defaults(chapter), **changes}
    with pytest.raises(ValueError, match=re.escape(requirement)):
        spec.check(values)


@pytest.mark.parametrize("chapter", ["beyond_two_states"])
def test_defaults_pass(chapter):
    spec = specs.load(chapter)
    clean = spec.check(defaults(chapter))
    assert set(clean) == set(spec.rules)


@pytest.mark.parametrize("changes, requirement", [
    ({"p_sides": [0.2, 0.6]}, "p_sides = [p below p*, p above p*]"),
    ({"flip_rate": 1.0}, "std_small > 0, flip_rate < 1"),
    ({"mc_batch": 100}, "mc_batch * (mc_length - 1) >= 20000"),
    ({"mc_z": 3.0}, "mc_z >= kstate_checks.mc_z_min"),
    ({"slice_seed": 7}, "(slice_K, slice_p, slice_seed) stored"),
    ({"phase_falling_back": 1100}, "phase_falling_back and phase_slice_steps multiples"),
    ({"phase_slice_seeds": [9]}, "phase_slice_seeds among the measured seeds"),
])
def test_beyond_two_states_requirements(changes, requirement):
    refused("beyond_two_states", requirement, **changes)


def test_beyond_two_states_slice_prefix_multiple_of_50():
    with pytest.raises(ValueError, match="slice_prefix must be a multiple of 50"):
        specs.load("beyond_two_states").check({**defaults("beyond_two_states"), "slice_prefix": 120})


def test_closing_defaults_pass():
    spec = specs.load("closing")
    assert set(spec.check(defaults("closing"))) == set(spec.rules)


@pytest.mark.parametrize("changes, requirement", [
    ({"pq": [0.5, 0.55]}, "|p + q - 1| >= margin of pq"),
    ({"n2": 3}, "n2 < d2"),
    ({"lrs": [0.1, 0.02, 0.01, 0.005]}, "max(lrs) < 0.1"),
    ({"lrs": [0.04, 0.02, 0.015]}, "3 different lrs, max(lrs) >= 4 min(lrs)"),
    ({"t_drift": 0.5}, "t_drift >= 20 max(lrs)"),
    ({"weight_decay": 0.9, "t_drift": 6.0}, "weight_decay * t_drift <= 5"),
    ({"weight_decay": 0.9, "t_drift": 5.0}, "weight_decay^2 * max(lrs) * t_drift <= 0.15"),
    ({"flow_tol": 0.0}, "flow_tol > 0 and flow_tol3 > 0"),
    ({"pred_lrs": [0.2, 0.4]}, "min(pred_lrs) <= 0.1"),
    ({"agree_rate": 1.0}, "agree_rate < 1"),
    ({"n_pred": 50}, "n_pred >= drift_study.fewest_inits"),
])
def test_closing_requirements(changes, requirement):
    refused("closing", requirement, **changes)


def test_topo_balances_defaults_pass():
    spec = specs.load("topo_balances")
    assert set(spec.check(defaults("topo_balances"))) == set(spec.rules)


@pytest.mark.parametrize("changes, requirement", [
    ({"n_seeds": 4}, "n_seeds * len(dims) >= 10"),
    ({"t_flow": 0.0}, "t_flow > 0"),
    ({"flow_steps": [500, 250]}, "flow_steps increasing, at least two"),
    ({"lrs": [0.04, 0.02, 0.0]}, "min(lrs) > 0"),
    ({"lrs": [0.04, 0.02]}, "lrs: at least 3 distinct"),
    ({"t_flow": 0.2}, "t_flow / max(lrs) >= 10"),
])
def test_topo_balances_requirements(changes, requirement):
    refused("topo_balances", requirement, **changes)

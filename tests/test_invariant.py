"""Tests of markovlib.markov.invariant: the second invariant's checks along flows of the attention scalar."""
import numpy as np
import pytest

from markovlib.markov import invariant
from markovlib.markov.flow import horizon, integrate


def test_line_check_passes_on_a_flow_and_fails_off_its_line():
    tr = integrate(0.6, -0.4, 0.9, 0.9, a0=0.3, t_max=horizon(0.9, 0.9, 400.0))
    ck = invariant.line_check(tr, 1e-8)
    assert ck["ratio"] < 1.0 and ck["bracketed"] and ck["n_points"] >= 20
    moved = type("Flow", (), {"e": tr.e * np.linspace(1.0, 1.05, tr.e.size), "a": tr.a})
    assert invariant.line_check(moved, 1e-8)["ratio"] > 1.0
    with pytest.raises(ValueError, match="line_tol"):
        invariant.line_check(tr, 0.0)


def test_order_below_and_labels_at():
    assert invariant.order_below(3e-9) == "< 1e-06"
    with pytest.raises(ValueError, match="x"):
        invariant.order_below(-1.0)
    lab = invariant.labels_at(0.25, 0.0, 1e-12)
    assert bool(lab.reaches_axis)

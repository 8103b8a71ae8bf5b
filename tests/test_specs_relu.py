"""The declared parameters of the ReLU and regimes chapters (markovlib.book.specs): the defaults of each chapter's
parameters cell pass SPEC.check, and one out-of-range value per `require` condition raises a ValueError naming it."""
from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import pytest

from markovlib.book import specs

BOOK = Path(__file__).resolve().parents[1] / "book"


def defaults(chapter: str) -> dict:
    """The values of the chapter's parameters cell (executed on its own)."""
    nb = nbformat.read(BOOK / f"{chapter}.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", []))
    values: dict = {}
    exec(cell.source, {}, values)
    return values


def check(chapter: str, **changes):
    values = copy.deepcopy(defaults(chapter))
    values.update(changes)
    return specs.load(chapter).check(values)


# (chapter, the condition's text as declared, a change that breaks it)
BROKEN = [
    ("grq_relu_rich", "9.375 d <= n <= 10 d", dict(n=150)),
    ("grq_relu_rich", "h even", dict(h=49)),
    ("grq_relu_rich", "log10_tau_max > log10_tau_min", dict(log10_tau_max=-1.0, log10_tau_min=0.3)),
    ("grq_relu_rich", "n_delta odd", dict(n_delta=4)),
    ("grq_relu_rich", "t_fast a power of ten in [10, steps]", dict(t_fast=50)),
    ("grq_relu_rich", "stored_cross_tol > 0", dict(stored_cross_tol=0.0)),
    ("grq_relu_rich", "cons_h even", dict(cons_h=7)),
    ("grq_relu_rich", "cons_lrs: at least two, each half the previous", dict(cons_lrs=[0.02, 0.015])),
    ("grq_relu_rich", "1 to 6 surf_widths", dict(surf_widths=[5] * 7)),
    ("grq_relu_rich", "surf_grid even", dict(surf_grid=201)),
    ("grq_regimes", "abs_deltas: at least 3 distinct values, 3 and 30 among them", dict(abs_deltas=[3.0, 30.0])),
    ("grq_regimes", "0 not in ric_general", dict(ric_general=[0.0, 0.8])),
    ("grq_regimes", "ric_time > 0", dict(ric_time=0.0)),
    ("grq_regimes", "bern_control > 100 * bern_tol", dict(bern_control=1e-6)),
    ("grq_relu_dynamics", "xor_h even", dict(xor_h=17)),
]


@pytest.mark.parametrize("chapter", sorted({c for c, _, _ in BROKEN}))
def test_defaults_pass(chapter):
    values = check(chapter)
    assert set(values) == set(specs.load(chapter).rules)


@pytest.mark.parametrize("chapter,text,change", BROKEN)
def test_each_condition_stops_a_bad_value(chapter, text, change):
    """The condition refuses the value; the check raises a ValueError naming the condition, or, where the
    condition's parameters are pinned by their own ranges (log10_tau_*, t_fast), naming the parameter."""
    spec = specs.load(chapter)
    values = copy.deepcopy(defaults(chapter))
    values.update(change)
    test = next(t for name, t, _ in spec.require if name == text)
    assert not test(values)
    with pytest.raises(ValueError) as err:
        check(chapter, **change)
    assert text in str(err.value) or any(str(err.value).startswith(k) for k in change)

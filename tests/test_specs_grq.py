"""The declared parameters of Part II's chapters grq_minimal_model, grq_exact_dynamics and grq_wide_deep
(markovlib.book.specs): the defaults of each chapter's parameters cell pass, and one out-of-range value per
requirement stops with a ValueError naming it."""

import pytest
from notebooks import chapter_defaults as defaults

from markovlib.book import specs

BAD = {
    "grq_minimal_model": [
        (dict(lazy_window=25.0), "lazy_window < T"),
        (dict(deltas=[1.0, -1.0, 0.0]), "deltas sorted"),
        (dict(sheet_deltas=[2.0, 1.0, -2.0]), "sheet_deltas"),
        (dict(beta0=[-2.0, 0.0]), r"\|beta0\| and \|beta_star\|"),
        (dict(beta0=[-0.8, -0.8]), r"cos\(beta0, beta_star\)"),
        (dict(deltas=[-4.0, -2.0, -1.0, 0.0, 1.0, 2.0]), r"max\(deltas\)"),
        (dict(y_lowrank=-1.1), "y_lowrank X_lowrank"),
        (dict(extreme_delta=1e3, beta0_lowrank=[1.0, -0.45]), r"max\(C\+"),
        (dict(n_grid=31), "n_grid even"),
        (dict(T=50.0), "T must"),
    ],
    "grq_exact_dynamics": [
        (dict(families=[[1, 4]]), "families hold integer pairs"),
        (dict(count_rate=0.95), r"n_draws \* len\(families\)"),
        (dict(delta_min=-0.6, delta_max=-1.0), "delta_min <= delta_max"),
        (dict(fig4_beta0=[0.4, 0.05]), "fig4_y fig4_x"),
        (dict(fig8_deltas=[-2.0, -1.0, 1.0, 2.0]), "fig8_deltas hold"),
        (dict(fig8_beta_star=[0.0, 0.0]), "fig8_beta_star nonzero"),
        (dict(fig8_beta_star=[1.0, 1.0], fig8_T=20.0), r"\|fig8_beta_star\| \* fig8_T"),
        (dict(kernel_delta=4.0), "kernel_delta must"),
    ],
    "grq_wide_deep": [
        (dict(shapes=[[6, 2, 2]]), r"max\(shapes\)"),
        (dict(iso_cases=[[5, 5, 5, -1.0]]), "iso_cases: d, h, c"),
        (dict(iso_cases=[[4, 2, 3, -1.0]]), "iso_cases within Thm 4.2"),
        (dict(iso_violating=[4, 4, 3, -1.0]), "iso_violating: delta < 0"),
        (dict(sv_target=[1.0, 1.0]), "sv_target distinct"),
        (dict(lazy_dims=[5, 8, 3]), "lazy_dims in"),
        (dict(deltas=[1000.0, 0.0, -1000.0]), "deltas sorted"),
        (dict(deltas=[-1000.0, -300.0, -10.0, 0.0, 10.0, 300.0, 500.0]), "deltas reach"),
        (dict(deep_samples=[3]), r"max\(deep_samples\)"),
        (dict(deep_delta=-2.0), "deep_delta must"),
    ],
}


@pytest.mark.parametrize("chapter", sorted(BAD))
def test_defaults_pass(chapter):
    spec = specs.load(chapter)
    values = spec.check(defaults(chapter))
    assert set(values) == set(spec.rules)


@pytest.mark.parametrize("chapter, change, message", [(c, ch, m) for c, rows in BAD.items() for ch, m in rows])
def test_each_requirement_refuses(chapter, change, message):
    spec = specs.load(chapter)
    with pytest.raises(ValueError, match=message):
        spec.check({**defaults(chapter), **change})

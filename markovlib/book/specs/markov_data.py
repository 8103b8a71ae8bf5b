"""The declared parameters of the chapter markov_data (Markov data and its two yardsticks)."""
from __future__ import annotations

from scipy import stats

from markovlib.book import params

FAMILY_ALPHA_MAX = 0.01  # largest accepted family-wise false-alarm bound of the frequency tests


def planned_tests(kmax: int) -> int:
    """The chapter's frequency tests: 2 loss tests, 2 x 5 transition/marginal tests, 2 x (kmax + 1) run-length
    tests and 9 three-state tests; n_sigma must keep their family-wise false-alarm bound (Bonferroni) at or below
    FAMILY_ALPHA_MAX."""
    return 2 + 10 + 2 * (kmax + 1) + 9


def n_sigma_min(n_tests: int, family_alpha: float) -> float:
    """The smallest n_sigma with n_tests * 2 Phi(-n_sigma) <= family_alpha (as ``markov.checks.n_sigma_min``)."""
    return float(stats.norm.isf(family_alpha / n_tests / 2))


SPEC = params.declare(
    p=params.Real(*params.THEORY_RANGE, why="Part I's theory range; on the line p + q = 1 too (claims 1-4 hold there)"),
    q=params.Real(*params.THEORY_RANGE, why="Part I's theory range"),
    batch=params.Int(256, why="enough sequences for the exact tests at the edges of the range"),
    length=params.Int(64, why="long enough for the run-length bins"),
    seed=params.Int(0, why="any seed"),
    n_sigma=params.Real(3.0, 8.0, why="a level fixed before the data; the lower end is raised by the family bound"),
    kmax=params.Int(2, why="at least two run-length bins"),
    gap_margin=params.Real(0.0, 1.0, closed=False, why="a distance from the line p + q = 1"),
    require=[
        ("kmax <= length // 4", lambda v: v["kmax"] <= v["length"] // 4,
         "every selected run is followed for kmax steps inside the window"),
        ("n_sigma >= n_sigma_min(n_tests, 0.01)",
         lambda v: v["n_sigma"] >= n_sigma_min(planned_tests(v["kmax"]), FAMILY_ALPHA_MAX),
         "the family-wise false-alarm bound of all the run's tests stays at or below 0.01 (Bonferroni)"),
    ],
)

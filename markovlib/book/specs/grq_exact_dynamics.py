"""The declared parameters of the chapter grq_exact_dynamics (zero crossings, the kernel's dynamics, Fig. 8)."""
import math

import numpy as np

from markovlib.book import params
from markovlib.richlazy import minimal_crossing

tol, ranged = "a positive tolerance", "the stated range of the random draws"
SPEC = params.declare(
    seed=params.Int(0, why="any seed; 0 to 9 were run while the chapter was written"),
    families=params.PairList(
        1, 6, why="the stated data families: n in [1, 3] samples, null spaces d - n in {1, 2}"),
    n_draws=params.Int(10, why="counts need 10 draws per family"),
    n_control=params.Int(1, why="at least one control draw per family for the energy claim"),
    n_white=params.Int(1, why="at least one whitened draw per family with n >= 2"),
    delta_min=params.Real(-4.0, -0.5, why=ranged + ": downstream, where a can cross zero"),
    delta_max=params.Real(-4.0, -0.5, why=ranged),
    sv_min=params.Real(0.5, 1.5, why=ranged + " (nonzero eigenvalues of X^T X / n)"),
    sv_max=params.Real(0.5, 1.5, why=ranged),
    beta_norm_min=params.Real(0.5, 1.5, why=ranged + " (|beta_ls| and |beta0|)"),
    beta_norm_max=params.Real(0.5, 1.5, why=ranged),
    T_limit=params.Real(1500.0, 1e5, why="the slowest flows of the stated range settle by 1500"),
    settle_tol=params.Real(0.0, math.inf, closed=False, why=tol),
    limit_tol=params.Real(0.0, math.inf, closed=False, why=tol),
    miss_min=params.Real(0.0, math.inf, closed=False, why="a positive distance"),
    count_rate=params.Real(0.5, 1.0, closed=False, why="a count claims a majority at least"),
    count_family=params.Int(1, why="Bonferroni over at least one claim"),
    fig4_x=params.Pair(-10.0, 10.0, why="a sample of moderate size"),
    fig4_y=params.Real(-10.0, 10.0, why="a label of moderate size"),
    fig4_beta0=params.Pair(-10.0, 10.0, why="a start of moderate size"),
    fig4_deltas=params.RealList(-8.0, 0.0, why="downstream deltas, where a can cross zero"),
    kernel_delta=params.Real(8.0, 16.0, why="the stated range of the kernel claims"),
    kernel_T=params.Real(10.0, 40.0, why="long enough for the regimes to show, short enough for dense output"),
    fd_step=params.Real(2e-4, 5e-4, why="truncation (h rate)^4 and rounding 1e-13 / h both small"),
    mdot_tol=params.Real(0.0, math.inf, closed=False, why=tol),
    lazy_change_max=params.Real(0.0, 1.0, closed=False, why="a change below the size of M(0)"),
    order_ratio=params.Real(2.0, 100.0, why="'same order' and 'dominates' need a factor of 2 to 100"),
    azulay_deltas=params.RealList(0.0, 20.0, why="Azulay et al.'s Thm 2 needs delta >= 0"),
    fig8_deltas=params.RealList(-4.0, 4.0, why="Fig. 8 is checked for |delta| <= 4"),
    fig8_beta_star=params.Pair(-10.0, 10.0, why="a target of moderate size (its product with fig8_T is bounded)"),
    fig8_beta0_angles=params.RealList(-2.0, 2.0, why="angles in units of pi"),
    fig8_T=params.Real(1.0, 20.0, why="Fig. 8 is checked for T <= 20"),
    fig8_tol=params.Real(1e-9, 1e-5, why="resolvable by the integration and the closed form"),
    require=[
        ("families hold integer pairs (n, d) with n in [1, 3] and d - n in {1, 2}", lambda v: all(
            n == int(n) and d == int(d) and 1 <= n <= 3 and d - n in (1, 2) for n, d in v["families"]), ranged),
        ("n_draws * len(families) >= minimal_crossing.crossings_needed(count_rate, count_family)",
         lambda v: v["n_draws"] * len(v["families"]) >= minimal_crossing.crossings_needed(v["count_rate"],
                                                                                          v["count_family"]),
         "a count over fewer crossing draws could not pass even if every draw agreed"),
        ("delta_min <= delta_max, sv_min <= sv_max and beta_norm_min <= beta_norm_max", lambda v: all(
            v[k + "_min"] <= v[k + "_max"] for k in ("delta", "sv", "beta_norm")), "ranges"),
        ("fig4_y fig4_x^T fig4_beta0 < 0 (so all three nonzero)", lambda v: v["fig4_y"] * np.dot(
            v["fig4_x"], v["fig4_beta0"]) < 0, "a crossing needs L(beta0) > L(0)"),
        ("fig8_deltas hold a negative value, 0 and a positive value", lambda v: min(v["fig8_deltas"]) < 0
         < max(v["fig8_deltas"]) and 0.0 in v["fig8_deltas"], "downstream, balanced and upstream"),
        ("fig8_beta_star nonzero", lambda v: v["fig8_beta_star"] != (0.0, 0.0), "a target"),
        ("|fig8_beta_star| * fig8_T <= log(fig8_tol / (100 eps))", lambda v: math.hypot(*v["fig8_beta_star"])
         * v["fig8_T"] <= math.log(v["fig8_tol"] / (100 * np.finfo(float).eps)),
         "rounding grows like eps exp(|beta*| t) near the antipode of beta*"),
    ],
)

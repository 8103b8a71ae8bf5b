"""The declared parameters of the chapter ``book/beyond_two_states`` (K-state and lag-k chains)."""
from __future__ import annotations

from markovlib.beyond import kstate_checks, kstate_stored, multistate
from markovlib.book import params, stored

facts = kstate_stored.stored_facts(stored.data_dir("beyond_two_states"))  # what the stored sets hold

SPEC = params.declare(
    K_list=params.IntList(3, 12, why="K > 2 (K = 2 is Part I), at most 12"),
    p_list=params.RealList(0.05, 0.99, why="the Monte Carlo checks need the chain to mix within mc_length symbols"),
    K_exact=params.Choice([3, 4], why="exact enumeration of K^N sequences"),
    N_exact=params.Int(3, 6, why="exact enumeration of K^N sequences"),
    p_sides=params.RealList(0.0, 1.0, closed=False, why="one p on each side of p*, |lambda| >= lam_margin (below)"),
    lam_margin=params.Real(0.0, 1.0, closed=False, why="side-dependent statements keep |lambda| at least this"),
    d=params.Int(2, why="embedding dimension"),
    std_random=params.Real(0.05, 2.0, why="random weights of the exact checks"),
    std_small=params.Real(0.0, 0.05, why="the corollary's small weights, > 0 (below)"),
    ratio_tol=params.Real(0.0, 0.5, closed=False, why="threshold fixed before the data"),
    n_dirs=params.Int(1, why="directions per Hessian check"),
    n_flip=params.Int(20, why="a count per side of p*, Bonferroni over the two"),
    flip_rate=params.Real(0.5, 1.0, why="a rate of at least 1/2, below 1 (below)"),
    d_flip=params.Int(8, why="at d 2 to 4 a side reverses in only 0.6 to 0.9 of the draws, too close to flip_rate"),
    mc_batch=params.Int(20, why="10 groups for the standard errors; 20000 transitions at least (below)"),
    mc_length=params.Int(20, why="symbols per sequence"),
    mc_z=params.Real(3.0, 10.0, why="at least the Bonferroni quantile of all Monte Carlo tests (below)"),
    mc_alpha=params.Real(1e-6, 0.05, why="family-wise false-alarm bound of the Monte Carlo checks"),
    resolution=params.Real(0.005, 1.0, why="plateaus closer than this are not told apart"),
    falling_tol=params.Real(0.0, 0.1, closed=False, why="threshold of a still-falling curve"),
    slice_K=params.Choice([3], why="the read-out claim of the slice is stated for K = 3 (Sec. 3)"),
    slice_p=params.Probability(why="a stored p of slice_K (below)"),
    slice_seed=params.Int(0, why="a stored seed (below)"),
    slice_prefix=params.Int(50, facts["steps"], multiple_of=50, why="the curves are evaluated every 50 steps"),
    tv_tol=params.Real(0.0, 0.5, closed=False, why="threshold fixed before the data"),
    lag1_tol=params.Real(0.0, 0.1, closed=False, why="threshold fixed before the data"),
    lag_gap=params.Real(0.0, 1.0, closed=False, why="threshold fixed before the data"),
    slice_tol=params.Real(0.0, 0.1, closed=False, why="4x the largest prefix difference measured in CI"),
    phase_count=params.Int(6, 10, why="more than half of the 10 stored seeds, at most all of them"),
    phase_falling_back=params.Int(1, facts["phase_steps"], below=True, why="a multiple of the evaluation step (below)"),
    batch_spread_ratio=params.Real(0.0, 1.0, closed=False, why="a wrong batch gives about 1.4"),
    phase_slice_seeds=params.IntList(0, why="among the seeds whose prefix was measured (below)"),
    phase_slice_steps=params.Int(1, facts["prefix_steps"],
                                 why="within the measured prefix; a multiple of the evaluation step"),
    phase_slice_tol=params.Real(0.0, 0.1, closed=False, why="4x the largest measured prefix difference"),
    seed=params.Int(0, why="any seed"),
    require=[
        ("p_sides = [p below p*, p above p*], |lambda| >= lam_margin at K_exact (slack 1e-12: lambda's rounding)",
         lambda v: len(v["p_sides"]) == 2 and min(multistate.symmetric_eigenvalue(v["K_exact"], v["p_sides"][0]),
         -multistate.symmetric_eigenvalue(v["K_exact"], v["p_sides"][1])) >= v["lam_margin"] - 1e-12, "the sides"),
        ("std_small > 0, flip_rate < 1", lambda v: v["std_small"] > 0 and v["flip_rate"] < 1, "a scale; a rate < 1"),
        ("mc_batch * (mc_length - 1) >= 20000", lambda v: v["mc_batch"] * (v["mc_length"] - 1) >= 20000, "transitions"),
        ("mc_z >= kstate_checks.mc_z_min(mc_alpha, 2 len(K_list) len(p_list) + 2 lags)", lambda v: v["mc_z"]
         >= kstate_checks.mc_z_min(v["mc_alpha"], 2 * len(v["K_list"]) * len(v["p_list"]) + 2 * len(facts["lags"])),
         "Student t, 9 degrees of freedom: longer K_list and p_list need a larger mc_z (mc_z 3 failed at 100 chains)"),
        ("(slice_K, slice_p, slice_seed) stored", lambda v: kstate_stored.is_stored_cell(
            facts, v["slice_K"], v["slice_p"], v["slice_seed"]),
         f"the stored grid {facts['grid']}, seeds {facts['seeds']}"),
        ("phase_falling_back and phase_slice_steps multiples of the phase evaluation step",
         lambda v: (v["phase_falling_back"] % facts["phase_eval_every"])
         + (v["phase_slice_steps"] % facts["phase_eval_every"]) == 0, "stored evaluations"),
        ("phase_slice_seeds among the measured seeds",
         lambda v: set(v["phase_slice_seeds"]) <= set(facts["prefix_seeds"]),
         f"tools/run_slice_prefix.py measured seeds {facts['prefix_seeds']}"),
    ],
)

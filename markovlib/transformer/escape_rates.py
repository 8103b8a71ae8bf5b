"""How fast each optimizer moves Part I's conserved energy in the stored runs of the chapter trap_or_plateau
(reference Lemma 1: gradient flow conserves E(e, w) = e^2 - w^2 - sign(w) log|w|; a discrete step does not), and the
stored runs re-executed.

- :func:`sgd_energy_move`: SGD and momentum from w_0 < 0, the largest |E(t) - E(0)| against the climb to E_sad.
- :func:`drift_exponents`: the two-point exponents k = log(drift_2 / drift_1) / log(lr_2 / lr_1) of the median drift
  of E, early (|E(t) - E(0)|) and late (|E(T) - E(t_late)|), for SGD and momentum.
- :func:`adam_moves`: sign changes of w, the growth of |w| and the displacement |w(t) - w(0)| against SGD's.
- :func:`extrapolate`: SGD's late rise of E extrapolated linearly to E_sad (an assumption, stated as one).
- :func:`prefix_reach`: each stored run's measured deterministic prefix (``slice_prefix.csv``);
  :func:`replay`: the first steps of the 16 runs of one seed re-executed against the stored curves.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..book import stored
from ..book.formatting import fraction
from ..markov.energy import SADDLE_ENERGY
from ..numerics import checks
from .escape import escape_config, train_with_energy
from .escape_stored import ADAM_LIKE, KEY, SGD_LIKE, EscapeSet

SLICE_LEVEL = 1e-5  # a stored run re-executes to this level up to its measured deterministic prefix
PREFIX_COLUMNS = ["ratio_diff", "loss_diff", "projection_diff", "energy_diff"]


def _at(S, step):
    return S.curves[S.curves.step == step].set_index(KEY)


def sgd_energy_move(S: EscapeSet) -> tuple[pd.Series, pd.Series]:
    """SGD and momentum runs with w_0 < 0: (the largest |E(t) - E(0)| over the horizon, the climb E_sad - E(0))."""
    e0, w0 = _at(S, 0).energy, _at(S, 0).w
    sgd = S.curves[S.curves.optimizer.isin(SGD_LIKE)]
    neg = sgd[(w0[pd.MultiIndex.from_frame(sgd[KEY])] < 0).to_numpy()]
    move = neg.groupby(KEY).energy.apply(lambda s: float(np.max(np.abs(s - s.iloc[0]))))
    return move, SADDLE_ENERGY - e0[move.index]


def drift_exponents(S: EscapeSet, esc, drift_steps, late_start) -> tuple[dict, dict, list]:
    """Per (chain, optimizer) of SGD and momentum: the early exponent (median |E(drift_steps) - E(0)| over the seeds)
    and the late one (median |E(horizon) - E(late_start)|), each from the two learning rates; and the printed lines.
    AssertionError when a run leaves the plateau inside the early window."""
    drift_steps, late_start = checks.positive_int("drift_steps", drift_steps), checks.positive_int("late_start",
                                                                                                   late_start)
    assert esc.dropna().min() > drift_steps, "a run left the plateau inside the drift window"
    window, late_e, end_e = _at(S, drift_steps), _at(S, late_start).energy, _at(S, S.horizon).energy
    drift = (window.energy - _at(S, 0).energy[window.index]).abs()
    late = (end_e[late_e.index] - late_e).abs()
    early_exp, late_exp, lines = {}, {}, []
    for pq, opt in ((pq, opt) for pq in S.chains for opt in SGD_LIKE):
        lo, hi = S.lrs[opt]
        d_lo, d_hi = (float(np.median(drift.loc[(pq[0], pq[1], opt, lr)])) for lr in (lo, hi))
        l_lo, l_hi = (float(np.median(late.loc[(pq[0], pq[1], opt, lr)])) for lr in (lo, hi))
        early_exp[pq, opt] = np.log(d_hi / d_lo) / np.log(hi / lo)
        late_exp[pq, opt] = np.log(l_hi / l_lo) / np.log(hi / lo)
        lines.append(f"p={pq[0]:g}, q={pq[1]:g}, {opt:>8}: early median |E({drift_steps}) - E(0)| {d_lo:.1e} at lr "
                     f"{lo:g}, {d_hi:.1e} at lr {hi:g}, exponent {early_exp[pq, opt]:.2f}; late {l_lo:.1e}, "
                     f"{l_hi:.1e}, exponent {late_exp[pq, opt]:.2f}")
    return early_exp, late_exp, lines


def adam_moves(S: EscapeSet, drift_steps) -> dict:
    """In the early window: "n_cross" per family ("sgd", "adam": runs whose w changed sign, runs), "growth" (|w(t)| /
    |w(0)| per run), "ratios" (per chain, Adam's median |w(t) - w(0)| at its smaller lr over SGD's at its larger),
    "keeps" (per SGD or momentum run: w keeps its sign to the horizon) and the printed "lines"."""
    drift_steps = checks.positive_int("drift_steps", drift_steps)
    early, window, w0 = S.curves[S.curves.step <= drift_steps], _at(S, drift_steps), _at(S, 0).w
    sign_change = lambda w: bool((np.sign(w.to_numpy()) != np.sign(w.iloc[0])).any())  # noqa: E731
    crossed = early.groupby(KEY).w.apply(sign_change)
    moved, growth = (window.w - w0[window.index]).abs(), window.w.abs() / w0[window.index].abs()
    fam = crossed.index.get_level_values("optimizer")
    n_cross = {f: (int(crossed[fam.isin(opts)].sum()), int(fam.isin(opts).sum()))
               for f, opts in (("sgd", SGD_LIKE), ("adam", ADAM_LIKE))}
    lines = [f"p={k[0]:g}, q={k[1]:g}, {k[2]:>5} lr {k[3]:g}: by step {drift_steps} w changed sign in "
             f"{fraction(int(crossed.loc[k].sum()), len(crossed.loc[k]))} runs; median |w(t)| / |w(0)| "
             f"{float(np.median(growth.loc[k])):.3g}"
             for k in ((pq[0], pq[1], opt, lr) for pq in S.chains for opt in ADAM_LIKE for lr in S.lrs[opt])]
    ratios = [float(np.median(moved.loc[(pq[0], pq[1], "adam", S.lrs["adam"][0])]))
              / float(np.median(moved.loc[(pq[0], pq[1], "sgd", S.lrs["sgd"][1])])) for pq in S.chains]
    keeps = S.curves[S.curves.optimizer.isin(SGD_LIKE)].groupby(KEY).w.apply(lambda w: not sign_change(w))
    return {"n_cross": n_cross, "growth": growth, "ratios": ratios, "keeps": keeps, "lines": lines}


def extrapolate(S: EscapeSet, late_start) -> tuple[int, int, float]:
    """SGD and momentum runs with w_0 < 0: (runs whose E rises from ``late_start`` to the horizon, runs, the fewest
    further steps at which the late rate, held constant, would bring E to E_sad)."""
    late_start = checks.positive_int("late_start", late_start)
    late_e, end_e, w0 = _at(S, late_start).energy, _at(S, S.horizon).energy, _at(S, 0).w
    neg = [k for k in late_e.index if k[2] in SGD_LIKE and w0[k] < 0]
    rate = (end_e[neg] - late_e[neg]) / (S.horizon - late_start)
    need = (SADDLE_ENERGY - end_e[neg]) / rate.where(rate > 0)
    return int((rate > 0).sum()), len(neg), float(need.min())


def prefix_reach(folder=None) -> tuple[pd.DataFrame, pd.Series]:
    """(the rows of ``slice_prefix.csv``, per stored run the last step up to which every difference stayed within
    :data:`SLICE_LEVEL` in both numeric configurations of CI; ``tools/run_slice_prefix.py escape``)."""
    folder = stored.data_dir("escape") if folder is None else folder
    prefix = pd.read_csv(folder / "slice_prefix.csv")
    return prefix, stored.deterministic_prefix(prefix, KEY, PREFIX_COLUMNS, SLICE_LEVEL)


def replay(S: EscapeSet, seed, steps) -> tuple[int, float]:
    """Re-execute the first ``steps`` steps of every arm's stored run of ``seed`` (:func:`escape.train_with_energy`
    on :func:`escape.escape_config`) and return (evaluations compared, largest |live - stored| of c-hat/c*, loss, e,
    w, E)."""
    import torch

    steps = checks.positive_int("steps", steps)
    cols, rows, worst = ["coefficient_ratio", "eval_loss", "e", "w", "energy"], 0, 0.0
    threads = torch.get_num_threads()
    try:
        for pq, opt, lr in S.arms:
            live = pd.DataFrame(train_with_energy(escape_config(pq[0], pq[1], opt, lr, seed, steps)))
            c = S.curves
            ref = c[(c.p == pq[0]) & (c.q == pq[1]) & (c.optimizer == opt) & (c.lr == lr) & (c.seed == seed)
                    & (c.step <= steps)]
            worst = max(worst, float(np.abs(live[cols].to_numpy() - ref[cols].to_numpy()).max()))
            rows += len(live)
    finally:
        torch.set_num_threads(threads)
    return rows, worst

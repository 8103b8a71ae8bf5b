"""The stored 500-step grid and the lag runs of ``book/beyond_two_states`` (Secs. 3 and 4), one call per step:
loading and classifying the grid on the ladder of lumped predictors (Prop. beyond-prop-ladder), its per-cell table and
the counts the text glues, the re-executed slice (a deterministic prefix of every stored seed and one run trained live
and read out against its lumped predictor), and the lag-k runs against their closed forms (Prop. beyond-prop-lag).
Counts are per cell, never pooled; the chapter records the claims.
"""
from __future__ import annotations

import contextlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..book.formatting import bound, fixed, fraction
from ..book.inference import wilson_interval, wilson_lower_z
from ..numerics import checks
from . import kstate_checks, kstate_stored, kstate_training, multistate


@contextlib.contextmanager
def one_thread():
    """Run torch on one thread inside the block (the stored runs used one), restoring the count afterwards."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def _folder(folder):
    folder = Path(folder)
    if not (folder / "manifest.json").is_file():
        raise ValueError(f"folder must hold the stored set of beyond_two_states (manifest.json), got {folder}")
    return folder


def load_grid(folder, resolution) -> dict:
    """The stored grid of ``folder``: ``manifest``, ``settings``, ``curves``, ``runs`` classified on the ladder at
    ``resolution`` (:func:`kstate_stored.classify_runs`), ``col_err`` (largest difference of the stored columns
    entropy_rate, marginal_entropy and lam to the closed forms) and the printed ``text``."""
    folder = _folder(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    curves = pd.read_csv(folder / "curves.csv")
    runs = kstate_stored.classify_runs(pd.read_csv(folder / "runs.csv"), curves, resolution)
    s = manifest["settings"]
    col_err = float(max(
        np.abs(runs.entropy_rate - [multistate.symmetric_entropy_rate(k, p) for k, p in zip(runs.K, runs.p)]).max(),
        np.abs(runs.marginal_entropy - np.log(runs.K)).max(),
        np.abs(runs.lam - [multistate.symmetric_eigenvalue(k, p) for k, p in zip(runs.K, runs.p)]).max()))
    text = (f"stored: {len(runs)} runs of {manifest['runs_planned']} planned, K {sorted(set(runs.K))}, seeds "
            f"{sorted(set(runs.seed))}, inits {manifest['inits']}, N = {s['length']}, {s['steps']} steps, batch "
            f"{s['batch']}, lr {s['lr']}, optimizer {manifest['optimizer']}, torch {manifest['versions']['torch']}")
    return dict(manifest=manifest, settings=s, curves=curves, runs=runs, col_err=col_err, text=text)


def grid_table(runs, falling_tol) -> pd.DataFrame:
    """Per cell and init: the counts that reach the entropy rate and that end at H(pi) with their 95 % Wilson
    intervals, the nearest level of each seed and the curves still falling at ``falling_tol`` (and at half, twice)."""
    falling_tol = checks.positive_real("falling_tol", falling_tol)
    table = []
    for (K, p, init), g in runs.groupby(["K", "p", "init"], sort=True):
        res = bool(g.resolvable.iloc[0])
        falls = [int((g.fell > f * falling_tol).sum()) for f in (0.5, 1, 2)]
        table.append((K, p, fixed(g.lam.iloc[0], 3), init,
                      kstate_stored.count_text(g.at_bigram) if res else "(unresolved)",
                      kstate_stored.count_text(g.at_unigram) if res else "(unresolved)",
                      " ".join(str(v) for v in sorted(g.level)) if res else "",
                      f"{falls[1]}/{len(g)} ({falls[0]}, {falls[2]})"))
    return pd.DataFrame(table, columns=["K", "p", "lambda", "init", "reaches entropy rate [95% Wilson]",
                                        "ends at H(pi) [95% Wilson]", "nearest level m (per seed)",
                                        "still falling (at half, twice falling_tol)"])


def unresolved_near_unigram(runs) -> float:
    """The largest |H(pi) - final loss| / H(pi) over the standard-init runs of the unresolved switching cells."""
    sw = runs[(runs.side == "p > p*") & (runs.init == "standard")]
    unres = sw[~sw.resolvable]
    if unres.empty:
        return 0.0
    return float(((unres.marginal_entropy - unres.final_loss) / unres.marginal_entropy).abs().max())


def grid_note(runs, manifest) -> str:
    """The printed line: the script's first threshold on the switching side, and how near H(pi) the unresolved
    cells end."""
    sw = runs[(runs.side == "p > p*") & (runs.init == "standard")]
    return (f"p > p*, standard init: {fraction(sw.trapped.sum(), len(sw))} runs over all cells have normalized gap > "
            f"{manifest['trap_threshold']} (the script's first threshold, column trapped); in the unresolved cells "
            f"every final loss is within {fixed(100 * unresolved_near_unigram(runs), 1)} % of H(pi)")


def grid_glues(runs, falling_tol) -> dict:
    """The grid's counts as the text glues them (name -> text), per cell over the resolved cells."""
    falling_tol = checks.positive_real("falling_tol", falling_tol)
    sw = runs[(runs.side == "p > p*") & (runs.init == "standard")]
    rel = unresolved_near_unigram(runs)
    cells = sorted({(int(K), float(p)) for K, p in zip(runs.K[~runs.resolvable], runs.p[~runs.resolvable])})
    short = runs[(runs.side == "p < p*") & runs.resolvable & ~runs.at_bigram]
    rungs = sorted(set(int(v) for v in short.K - 1 - short.level))
    n_cell = int(runs.groupby(["K", "p", "init"]).size().max())
    sw_res = sw[sw.resolvable]
    return {
        "unresolved_cells": "; ".join(f"K = {K}, p = {p:g}" for K, p in cells) if cells else "none",
        "std_persistent": kstate_stored.cells_text(runs, "p < p*", "standard"),
        "gl_persistent": kstate_stored.cells_text(runs, "p < p*", "guideline_like"),
        "persistent_short": "none short" if short.empty else (
            f"{rungs[0]} rung below the entropy rate, at L_(K-{rungs[0] + 1})" if rungs == [1] else
            "between " + " and ".join(str(r_) for r_ in rungs) + " rungs below the entropy rate"),
        "std_switching": "; ".join(f"{fraction((~g.at_bigram).sum(), len(g))} at K = {K}, p = {p:g} "
                                   f"({fraction((g.fell > falling_tol).sum(), len(g))} still falling)"
                                   for (K, p), g in sw_res.groupby(["K", "p"])),
        "gl_switching": kstate_stored.cells_text(runs, "p > p*", "guideline_like"),
        "std_at_unigram": kstate_stored.cells_text(runs, "p > p*", "standard", "at_unigram"),
        "unresolved_near_unigram": f"{fixed(100 * rel, 1)} %",
        "wilson_5of5": f"{n_cell}/{n_cell} is {fixed(wilson_interval(n_cell, n_cell, wilson_lower_z(0.05))[0], 2)}",
    }


def replay_slice(grid, *, n_states, p, seed, prefix, falling_tol, tv_tol, readout_seed) -> dict:
    """The re-executed slice of the grid (:func:`load_grid`) at the cell (``n_states``, ``p``): every stored seed and
    init re-executed on one thread for ``prefix`` steps (``seed``: all the steps), the largest |held-out loss - stored|
    over the prefix (``prefix_dev``); each settled live run (its loss moved by at most ``falling_tol`` over its last
    100 steps) read out by the current symbol (seed ``readout_seed``) against the lumped predictor of its nearest level
    (``tv_worst``, :func:`kstate_checks.best_lumped_tv`; ``read`` names them). ``lines``: one printed line per live
    run and the prefix's line."""
    runs, curves, settings = grid["runs"], grid["curves"], grid["settings"]
    cell = kstate_stored.stored_cell(runs, n_states, p, seed)
    prefix = checks.positive_int("prefix", prefix)
    rate, marg = multistate.symmetric_entropy_rate(n_states, p), multistate.symmetric_marginal_entropy(n_states)
    L = kstate_stored.ladder(n_states, p)
    sampler = multistate.symmetric_sampler(n_states, p)
    out = dict(prefix_dev=0.0, tv_worst=0.0, read=[], lines=[], cell=cell)
    with one_thread():
        for init in kstate_training.KSTATE_INITS:
            for s_ in sorted(set(cell.seed)):
                full = s_ == seed
                r = kstate_training.train_kstate(sampler, n_states, rate, marg, init=init, seed=s_,
                                                 **{**settings, "steps": settings["steps"] if full else prefix})
                st = curves[(curves.K == n_states) & np.isclose(curves.p, p) & (curves.init == init)
                            & (curves.seed == s_)].set_index("step").loss
                out["prefix_dev"] = max(out["prefix_dev"], *(abs(v - st[step]) for step, v in r["history"]
                                                             if step <= prefix))
                if not full:
                    continue
                level = int(np.argmin(np.abs(L - r["final_loss"])))
                if dict(r["history"])[settings["steps"] - 100] - r["final_loss"] > falling_tol:
                    out["lines"].append(f"{init:15s} seed {s_}: still falling at step {settings['steps']} (nearest "
                                        f"level m = {level}), in transit: not read out")
                    continue
                q_hat = kstate_checks.readout(r["model"], n_states, p, settings["length"], readout_seed)
                tv = kstate_checks.best_lumped_tv(q_hat, n_states, p, level)
                out["tv_worst"] = max(out["tv_worst"], tv)
                out["read"].append(f"{init.replace('_', '-')} on L_{level}")
                out["lines"].append(f"{init:15s} seed {s_}: settled on level m = {level} of {n_states - 1} at step "
                                    f"{settings['steps']}; read-out vs lumped predictor L_{level}: total variation "
                                    f"{kstate_checks.tv_text(tv, tv_tol)}")
    out["lines"].append(f"first {prefix} steps of {2 * len(set(cell.seed))} stored runs re-executed: largest "
                        f"|held-out loss - stored| {bound(out['prefix_dev'], 1e-6)}")
    return out


def lag_table(folder, lag1_tol) -> dict:
    """The stored lag runs of ``folder`` against Prop. beyond-prop-lag: per lag the closed forms, the best stored loss
    and how many runs end within ``lag1_tol`` of the entropy rate (``table``); ``best`` and ``near`` per lag, ``rate``,
    ``K``, ``p``, ``lags``, ``runs``, and over the lags k >= 2 the smallest excess ``short`` over ``n_higher`` runs."""
    folder = _folder(folder)
    lag1_tol = checks.positive_real("lag1_tol", lag1_tol)
    runs = pd.read_csv(folder / "lag_runs.csv")
    manifest = json.loads((folder / "manifest_lag.json").read_text())
    K, p = int(manifest["n_states"]), float(manifest["p"])
    rate = multistate.symmetric_entropy_rate(K, p)
    rows, best, near = [], {}, {}
    for lag, g in runs.groupby("lag"):
        y = multistate.lag_switching_yardsticks(K, p, int(lag))
        best[int(lag)] = float(g.final_loss.min())
        near[int(lag)] = (int((g.final_loss - rate < lag1_tol).sum()), len(g))
        rows.append((int(lag), fixed(y["entropy_rate"], 4), fixed(y["bigram"], 4), fixed(y["unigram"], 4),
                     fixed(best[int(lag)], 4), fraction(*near[int(lag)])))
    higher = [k for k in best if k >= 2]
    return dict(table=pd.DataFrame(rows, columns=["lag k", "entropy rate", "bigram", "unigram", "best stored loss",
                                                  f"runs within {lag1_tol:g} of the entropy rate"]),
                best=best, near=near, rate=rate, K=K, p=p, lags=[int(k) for k in manifest["lags"]], runs=runs,
                higher=higher, short=min(best[k] - rate for k in higher),
                n_higher=int(sum(near[k][1] for k in higher)))

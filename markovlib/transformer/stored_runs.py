"""Reading the stored paper-scale training runs (``book/data/<set>``; reference Sec. 5.2, Fig. 4) and replaying them.

The stored curves are the rows of ``metrics.csv`` of every run (columns ``p, q, init, seed, step, eval_loss,
train_loss, context_coefficient, ...``; :func:`markovlib.book.stored.read_parts` reads and checks them).

- :func:`runs_per_seed`, :func:`final_value`: one frame per seed of a chain and initialization; a run's last value.
- :func:`outcome_rows`: per initialization, the final held-out losses, the step at which each seed first leaves
  H(pi) (below it by ``at_tol``) and first reaches the entropy rate (within ``at_tol``).
- :func:`count_text`: "k/n [lo, hi]" with the Wilson interval.
- :func:`slice_cap`: the deterministic prefix of every stored run (``slice_prefix.csv``) and half the shortest.
- :func:`replay_error`: re-execute the first steps of stored runs with the package's Trainer, largest train-loss
  difference to the stored curve.
"""
from __future__ import annotations

import math

import numpy as np

from ..book.formatting import fixed
from ..book.inference import wilson_interval
from ..book.stored import deterministic_prefix
from ..markov.chain import MarkovChain
from ..numerics import checks
from .config import recipe
from .training import Trainer


def runs_per_seed(stored, p, q, init) -> list:
    """The stored rows of chain (p, q) and initialization ``init``, one frame per seed (in seed order)."""
    runs = stored[(stored.p == p) & (stored.q == q) & (stored.init == init)]
    return [g for _, g in runs.groupby("seed")]


def final_value(run, column) -> float:
    """The value of ``column`` at the last step of ``run`` (one seed's rows) where it is recorded."""
    if column not in run:
        raise ValueError(f"column must be one of the run's columns {sorted(run.columns)}, got {column!r}")
    ev = run.dropna(subset=[column]).sort_values("step")
    if ev.empty:
        raise ValueError(f"column {column!r} has no recorded value in this run")
    return float(ev[column].iloc[-1])


def outcome_rows(stored, p, q, inits, at_tol):
    """(chain, rows) for chain (p, q): ``rows[init]`` holds per seed the final held-out loss (``finals``), the first
    evaluation step below H(pi) - at_tol (``leaves``, NaN if never), the first step within at_tol of the entropy
    rate (``bigram``, NaN if never), and the mean starting loss (``start``)."""
    at_tol = checks.positive_real("at_tol", at_tol)
    ch = MarkovChain(p, q)
    rows = {}
    for init in inits:
        runs = stored[(stored.p == p) & (stored.q == q) & (stored.init == init)]
        ev = runs.dropna(subset=["eval_loss"])
        finals, leaves, bigram = [], [], []
        for _, g in ev.groupby("seed"):
            g = g.sort_values("step")
            finals.append(float(g.eval_loss.iloc[-1]))
            below = g[g.eval_loss < ch.marginal_entropy - at_tol]
            leaves.append(float(below.step.iloc[0]) if len(below) else math.nan)
            at_b = g[np.abs(g.eval_loss - ch.entropy_rate) < at_tol]
            bigram.append(float(at_b.step.iloc[0]) if len(at_b) else math.nan)
        rows[init] = dict(finals=np.array(finals), leaves=np.array(leaves), bigram=np.array(bigram),
                          start=float(ev[ev.step == 0].eval_loss.mean()))
    return ch, rows


def count_text(flags, z=1.96) -> str:
    """k/n seeds with the Wilson interval at normal quantile z (default 95 %), as printed text."""
    flags = list(flags)
    if not flags:
        raise ValueError("flags must hold at least one seed")
    k, n = int(sum(bool(f) for f in flags)), len(flags)
    lo, hi = wilson_interval(k, n, z)
    return f"{k}/{n} [{fixed(lo, 2)}, {fixed(hi, 2)}]"


def slice_cap(prefix, stored, level, keys=("p", "q", "init", "seed")):
    """The deterministic prefix of every stored run in every numeric configuration (``prefix``: the rows of
    ``slice_prefix.csv`` with columns config, step, abs_diff and ``keys``; within ``level`` of the stored train
    loss) and half the shortest one, the most steps a replay may take. ValueError when ``prefix`` does not cover
    every stored run of ``stored`` in some configuration (re-run tools/run_slice_prefix.py)."""
    level = checks.positive_real("level", level)
    prefix_of = deterministic_prefix(prefix, ["config", *keys], "abs_diff", level)
    seeds = sorted(stored.seed.unique())
    n_runs = stored.groupby(list(keys)).ngroups
    for cfg, g in prefix.groupby("config"):
        if sorted(g.seed.unique()) != seeds or len(prefix_of[cfg]) != n_runs:
            raise ValueError(f"prefix ({cfg}) does not cover every stored run; re-run tools/run_slice_prefix.py")
    return prefix_of, int(prefix_of.min()) // 2


def replay_error(stored, specs, chains, seed, steps, *, recipe_name="authors_fig4", overrides=None, lr_factor=1.0,
                 only=None):
    """Re-execute the first ``steps`` steps of the stored run of seed ``seed`` for every chain of ``chains`` and every
    initialization of ``specs`` (init name -> {"model", "init"}, as in the set's manifest) with the recipe's knobs
    (``overrides`` on top; the learning rate scaled by ``lr_factor``; ``only=((p, q), init)`` restricts to one
    run); returns the largest |train loss - stored| over every step and run, and the number of runs replayed."""
    steps = checks.positive_int("steps", steps)
    lr_factor = checks.positive_real("lr_factor", lr_factor)
    worst, n = 0.0, 0
    for p, q in chains:
        for init, spec in specs.items():
            if only is not None and only != ((p, q), init):
                continue
            run = stored[(stored.p == p) & (stored.q == q) & (stored.init == init) & (stored.seed == seed)]
            if run.empty:
                continue
            knobs = recipe(recipe_name, **(overrides or {}))
            knobs["lr"] = knobs["lr"] * lr_factor
            tr = Trainer(p=p, q=q, model=spec["model"], init=spec["init"], seed=seed, eval_every=0, device="cpu",
                         progress=False, **knobs)
            for _ in range(steps):
                tr.train_step()
            mine = np.array([r["train_loss"] for r in tr.history])
            ref = run.dropna(subset=["train_loss"]).sort_values("step").train_loss.to_numpy()[:steps]
            worst = max(worst, float(np.abs(mine - ref).max()))
            n += 1
    return worst, n

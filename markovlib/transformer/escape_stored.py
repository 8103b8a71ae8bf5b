"""The stored runs of the chapter trap_or_plateau (``book/data/escape``, :mod:`markovlib.transformer.escape`): the
standard initialization on chains with p + q > 1 under SGD, momentum, Adam and AdamW, read against Part I's conserved
energy E(e, w) = e^2 - w^2 - sign(w) log|w| (reference Lemma 1) and the flow's verdict (reference Thm 2).

- :func:`load`: the stored set (sha256 against its manifest) with the flow's verdict at every evaluation
  (:func:`markovlib.markov.energy.predict_limit` on the projection (e, w)); :func:`completeness`.
- :func:`escapes`: each run's first evaluation with c-hat / c* at a threshold (NaN: censored at the horizon), and
  :func:`stored_escapes_agree` against ``runs.csv``.
- :func:`init_verdict`: Thm 2 at the initialization, with the |e_0| an escape from w_0 < 0 would need.
- :func:`survival`: Kaplan-Meier curves per arm and their table; :func:`arm_claims`: the per-arm counts as claims.
- :func:`seed_pairs`: Adam against AdamW and the two learning rates, seed by seed.
- :func:`basin`: whether a projection enters the flow's global basin; :func:`lags`: escape step minus the first step
  in the basin; :func:`escape_places`: where the projection is at the escape's evaluation against E_sad.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..book import stored
from ..book.formatting import fixed, fraction
from ..markov.energy import SADDLE_ENERGY, predict_limit
from ..numerics import checks
from ..numerics.survival import kaplan_meier, median_time
from .escape import escape_step

KEY = ["p", "q", "optimizer", "lr", "seed"]
SGD_LIKE, ADAM_LIKE = ("sgd", "momentum"), ("adam", "adamw")
EVAL_EVERY = 50  # the stored set's evaluation spacing (manifest's eval_every)


@dataclass
class EscapeSet:
    """The stored set: ``manifest``, ``runs`` (runs.csv), ``curves`` (every evaluation, with the flow's verdict
    "flow" and "global_basin"), ``chains``, ``lrs`` (per optimizer), ``horizon``, ``seeds`` and ``arms`` ((p, q),
    optimizer, lr)."""
    manifest: dict
    runs: pd.DataFrame
    curves: pd.DataFrame
    chains: list
    lrs: dict
    horizon: int
    seeds: list
    arms: list

    def arm(self, a):
        """The index key (p, q, optimizer, lr) of arm ``a`` = ((p, q), optimizer, lr)."""
        return (a[0][0], a[0][1], a[1], a[2])


def load(folder=None) -> EscapeSet:
    """Read the stored set (``stored.data_dir("escape")`` by default), its files checked against the manifest's
    sha256, and label every evaluation with the flow's limit from its projection (Thm 2 by the energy contour)."""
    folder = stored.data_dir("escape") if folder is None else folder
    manifest = stored.verify_checksums(folder)
    curves = pd.read_csv(folder / "curves.csv.gz")
    curves["flow"] = ""
    for (pp, qq), g in curves.groupby(["p", "q"]):
        curves.loc[g.index, "flow"] = predict_limit(g.e.to_numpy(), g.w.to_numpy(), pp, qq).outcome
    curves["global_basin"] = curves.flow == "global_min"
    chains = [tuple(c) for c in manifest["chains"]]
    lrs = dict(manifest["lrs"])
    arms = [(pq, opt, lr) for pq in chains for opt in lrs for lr in lrs[opt]]
    return EscapeSet(manifest, pd.read_csv(folder / "runs.csv"), curves, chains, lrs, manifest["steps"],
                     manifest["seeds"], arms)


def completeness(S: EscapeSet) -> tuple[bool, str]:
    """(every planned run stored, at least 20 seeds, every curve to the horizon and no failed run; the measurement)."""
    m = S.manifest
    planned = len(S.chains) * sum(len(v) for v in S.lrs.values()) * len(S.seeds)
    ok = (m["eval_every"] == EVAL_EVERY and m["failed_runs"] == [] and m["provenance"]["complete"]
          and len(S.runs) == planned == m["runs_planned"] and len(S.seeds) >= 20
          and bool(S.curves.groupby(KEY).step.max().eq(S.horizon).all()))
    return ok, f"{len(S.runs)} of {planned} runs, {len(S.seeds)} seeds, horizon {S.horizon}"


def escapes(S: EscapeSet, escape_ratio) -> pd.Series:
    """Per run (index :data:`KEY`), the first evaluation step with c-hat / c* >= ``escape_ratio``; NaN when censored."""
    escape_ratio = checks.positive_real("escape_ratio", escape_ratio)
    esc = S.curves.groupby(KEY, sort=True).apply(
        lambda g: escape_step(g.step.to_numpy(), g.coefficient_ratio.to_numpy(), escape_ratio), include_groups=False)
    return esc.astype(float).rename("escape")


def stored_escapes_agree(S: EscapeSet, esc) -> bool:
    """Whether ``runs.csv``'s escape steps (made at the manifest's threshold) equal ``esc`` run by run."""
    stored_esc = S.runs.set_index(KEY).escape_step.sort_index()
    return bool(np.array_equal(stored_esc.isna().to_numpy(), esc.isna().to_numpy())
                and np.allclose(stored_esc.dropna().to_numpy(), esc.dropna().to_numpy()))


def init_verdict(S: EscapeSet) -> dict:
    """Thm 2 at the initialization: "init" (one row per (chain, seed) at step 0), "same_init" (every arm of a seed
    starts from one (e, w)), "e0_needed" (the smallest |e_0| with E_0 > E_sad over the seeds with w_0 < 0:
    e_0^2 > E_sad + w_0^2 - log|w_0|), "counts" (per chain: seeds whose flow ends on the unigram line, seeds) and
    "lines" (printed)."""
    start = S.curves[S.curves.step == 0]
    init = start.drop_duplicates(["p", "q", "seed"])
    neg0 = init[init.w < 0]
    out = {"init": init, "same_init": bool(start.groupby(["p", "q", "seed"])[["e", "w"]].nunique().eq(1).all().all()),
           "e0_needed": float(np.sqrt(SADDLE_ENERGY + neg0.w ** 2 - np.log(neg0.w.abs())).min()), "counts": {},
           "lines": []}
    for pq, g in init.groupby(["p", "q"]):
        k = int((g.flow == "local_min").sum())
        out["counts"][pq] = (k, len(g))
        out["lines"].append(f"p={pq[0]:g}, q={pq[1]:g}: w0 < 0 in {fraction(int((g.w < 0).sum()), len(g))} seeds; "
                            f"E0 in [{fixed(g.energy.min(), 2)}, {fixed(g.energy.max(), 2)}]; |w0| <= "
                            f"{fixed(g.w.abs().max(), 4)}; flow to the unigram line from {fraction(k, len(g))}")
    out["lines"].append(f"largest |e0| {fixed(init.e.abs().max(), 3)}; an escape from w0 < 0 would need |e0| >= "
                        f"{fixed(out['e0_needed'], 2)}")
    return out


def survival(S: EscapeSet, esc) -> tuple[dict, pd.DataFrame]:
    """Per arm, the Kaplan-Meier estimate of the fraction still on the plateau (censored at the horizon), and the
    table: runs that left, the median escape step and its 95 % interval ("> horizon" when not reached)."""
    km = {}
    for a in S.arms:
        t = esc.loc[S.arm(a)]
        km[a] = kaplan_meier(np.where(t.isna(), S.horizon, t), t.notna())
    show = lambda x: f"{x:.0f}" if np.isfinite(x) else f"> {S.horizon}"  # noqa: E731
    table = [{"chain": f"({pq[0]:g}, {pq[1]:g})", "optimizer": opt, "lr": f"{lr:g}",
              "left the plateau": fraction(int(esc.loc[S.arm(a)].notna().sum()), len(esc.loc[S.arm(a)])),
              "median escape step": show(median_time(km[a])),
              "95 % interval": "[" + ", ".join(show(median_time(km[a], c)) for c in ("lower", "upper")) + "]"}
             for a in S.arms for pq, opt, lr in [a]]
    return km, pd.DataFrame(table)


def arm_claims(S: EscapeSet, esc, escape_ratio) -> dict:
    """The per-arm claims over runs (keywords of ``record_count`` but rate and kind): "sgd" (SGD and momentum stay on
    the plateau to the horizon), "adam" (Adam and AdamW leave it), with the pooled counts "k_sgd", "n_sgd", "k_adam",
    "n_adam" and the arm lists "sgd_arms", "adam_arms"."""
    sgd_arms = [a for a in S.arms if a[1] in SGD_LIKE]
    adam_arms = [a for a in S.arms if a[1] in ADAM_LIKE]
    never = {a: int(esc.loc[S.arm(a)].isna().sum()) for a in S.arms}
    size = {a: len(esc.loc[S.arm(a)]) for a in S.arms}
    row = lambda a, text, k, fam, check: dict(  # noqa: E731
        claim=f"{a[1]} lr {a[2]:g}, p={a[0][0]:g}, q={a[0][1]:g}: {text}", k=k, n=size[a], family=fam, unit="runs",
        check=check)
    return {"sgd": [row(a, f"stays on the plateau to step {S.horizon}", never[a], len(sgd_arms),
                        f"c-hat/c* < {escape_ratio:g} at every evaluation") for a in sgd_arms],
            "adam": [row(a, f"leaves the plateau before step {S.horizon}", size[a] - never[a], len(adam_arms),
                         f"c-hat/c* reaches {escape_ratio:g} at some evaluation") for a in adam_arms],
            "k_sgd": sum(never[a] for a in sgd_arms), "n_sgd": sum(size[a] for a in sgd_arms),
            "k_adam": sum(size[a] - never[a] for a in adam_arms), "n_adam": sum(size[a] for a in adam_arms),
            "sgd_arms": sgd_arms, "adam_arms": adam_arms}


def seed_pairs(S: EscapeSet, esc) -> dict:
    """Seed by seed: "decay" (per chain and Adam lr: (pq, lr, seeds whose Adam and AdamW escape steps agree within one
    evaluation or are both censored, seeds)) and "lr" (per chain and optimizer: (pq, opt, seeds whose larger lr leaves
    first, seeds, median ratio of escape steps smaller lr / larger)); censored counts as never."""
    decay, by_lr = [], []
    for pq in S.chains:
        for lr in S.lrs["adam"]:
            a, w = (esc.loc[(pq[0], pq[1], o, lr)].fillna(np.inf).to_numpy() for o in ("adam", "adamw"))
            same = (np.isinf(a) & np.isinf(w)) | (np.abs(a - w) <= EVAL_EVERY)
            decay.append((pq, lr, int(same.sum()), len(a)))
        for opt in ADAM_LIKE:
            lo, hi = (esc.loc[(pq[0], pq[1], opt, lr)].fillna(np.inf).to_numpy() for lr in S.lrs[opt])
            by_lr.append((pq, opt, int((hi < lo).sum()), len(lo), float(np.median(lo / hi))))
    return {"decay": decay, "lr": by_lr}


def basin(S: EscapeSet) -> pd.Series:
    """Per SGD or momentum run: True when its projection stays outside the flow's global basin at every evaluation."""
    return ~S.curves[S.curves.optimizer.isin(SGD_LIKE)].groupby(KEY).global_basin.any()


def lags(S: EscapeSet, esc) -> tuple[list, pd.Series, pd.DataFrame]:
    """The escaping Adam and AdamW runs: (their keys, the lag escape step - first step in the global basin (> 0: the
    basin first; NaN: never entered), the table per arm)."""
    first = S.curves[S.curves.global_basin].groupby(KEY).step.min().reindex(esc.index)
    idx = [k for k in esc.index if k[2] in ADAM_LIKE and np.isfinite(esc[k])]
    lag = esc[idx] - first[idx]
    rows = []
    for a in (a for a in S.arms if a[1] in ADAM_LIKE):
        sel = [k for k in idx if k[:4] == S.arm(a)]
        d = lag[sel].dropna()
        rows.append({"chain": f"({a[0][0]:g}, {a[0][1]:g})", "optimizer": a[1], "lr": f"{a[2]:g}",
                     "entered": fraction(int(lag[sel].notna().sum()), len(sel)), "median lag": f"{d.median():.0f}",
                     "lag range": f"[{d.min():.0f}, {d.max():.0f}]", "median escape step": f"{esc[sel].median():.0f}"})
    return idx, lag, pd.DataFrame(rows)


def escape_places(S: EscapeSet, esc, idx) -> list[str]:
    """Per chain, where the escaping runs' projections are at the escape's evaluation: above E_sad, below it beyond
    the saddle (w < -1/sqrt 2), or below it on the trap's side."""
    at_step = S.curves.set_index(KEY + ["step"])
    out = []
    for pq in S.chains:
        row = at_step.loc[[(*k, int(esc[k])) for k in idx if k[:2] == pq]]
        above = row.energy > SADDLE_ENERGY
        far = ~above & (row.w < -1 / np.sqrt(2))
        where = {"above $E_{sad}$": above, "below it beyond the saddle": far,
                 "below it on the trap's side": ~above & ~far}
        out.append((pq, ", ".join(f"{name} in {fraction(int(m.sum()), len(row))}" for name, m in where.items())))
    return out


def escape_above(S: EscapeSet, esc, idx) -> list[tuple[int, int]]:
    """Per chain, (escaping runs whose projection is above E_sad at the escape's evaluation, escaping runs)."""
    at_step = S.curves.set_index(KEY + ["step"])
    out = []
    for pq in S.chains:
        row = at_step.loc[[(*k, int(esc[k])) for k in idx if k[:2] == pq]]
        out.append((int((row.energy > SADDLE_ENERGY).sum()), len(row)))
    return out

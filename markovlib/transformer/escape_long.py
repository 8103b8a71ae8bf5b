"""The SGD drift law's predictions tested within reach (book/trap_or_plateau.ipynb, section sec-tp-test): the sets of
``book/data/escape_long`` (tools/run_escape.py ``--seed-batch``, plain SGD on the paper's chain (0.5, 0.8), N = 64)
against the law of :mod:`markovlib.transformer.plateau_drift` as stored in ``book/data/sgd_drift``.

- :func:`load`: one tagged set (runs, curves, manifest; files checked against the manifest's sha256).
- :func:`escape_test`: the escape sets at batch 1 (:data:`ESCAPE_SETS`; the first sets, ``b1_lr5/6/7``, diverged and
  were stopped, section 12 of the draft). The prediction of a seed
  is its frozen-drift E_sad step at its initialization, t_sad (``check_sgd_drift.py --batch 1 --scan``), times the
  integrated factor f of the stored integrations (the escape comes at f t_sad with f in about [0.6, 0.9]); the
  measured escape is the first evaluation with c-hat / c* >= 0.5. Kaplan-Meier median with its interval, the number
  escaped, and the rank correlation between t_sad and the escape step (checks E1-E3 of
  book/_drafts/sgd_drift_law.md, section 11, fixed before the runs finished).
- :func:`plateau_end`: where a run's loss leaves the plateau, downwards (escape) or upwards (divergence);
  :func:`saddle_crossing`: where w first passes -1/sqrt 2, the event the law's t_sad predicts;
  :func:`growth`: the geometric growth of |w| before it (checks of section 12 of the draft).
- :func:`initial_drift`: the measured drift of w over the first steps, beside the law's at the initialization;
  :func:`batch1_study`: every batch-1 set read at once; :func:`growth_scaling`: how the growth of |w| scales
  (exploratory).
- :func:`rate_test`: the rate set (tag ``rate``, batch 16, lr 2, 6, 8): the law's drift of w against the measured
  one per seed (checks R1-R3, section 10 of the draft).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..book import stored
from ..book.inference import wilson_interval
from ..numerics import checks
from ..numerics.survival import kaplan_meier, median_time
from .drift_check import DIVERGENCE_NATS

ESCAPE_SETS = {"b1s_lr7": 7.0, "b1s_lr6": 6.0, "b1s_lr5": 5.0, "b1s_lr4": 4.0}  # section 12 of the draft
__all__ = ["ESCAPE_SETS", "LongSet", "load", "available", "plateau_end", "saddle_crossing", "growth", "initial_drift",
           "escape_test", "rate_runs", "rate_test", "replay", "batch1_study", "growth_scaling"]


@dataclass
class LongSet:
    """One tagged set: ``manifest``, ``runs`` (one row per run: key, steps, escape_step (NaN: censored)),
    ``curves`` (every evaluation), ``horizon`` (steps), ``batch``, ``lrs``."""
    manifest: dict
    runs: pd.DataFrame
    curves: pd.DataFrame
    horizon: int
    batch: int
    lrs: list


def kilo(x) -> str:
    """A step count in thousands at one decimal ("not reached" for inf or NaN)."""
    return "not reached" if not np.isfinite(x) else f"{x / 1e3:.1f}k"


def available(tag, folder=None) -> bool:
    """Whether the set ``tag`` is stored (its manifest exists)."""
    folder = stored.data_dir("escape_long") if folder is None else folder
    return (folder / f"manifest_{tag}.json").is_file()


def load(tag, folder=None) -> LongSet:
    """The set ``tag`` of ``book/data/escape_long`` (or ``folder``), its files checked against the manifest."""
    folder = stored.data_dir("escape_long") if folder is None else folder
    manifest = stored.verify_checksums(folder, f"manifest_{tag}.json")
    runs = pd.read_csv(folder / f"runs_{tag}.csv")
    curves = pd.read_csv(folder / f"curves_{tag}.csv.gz")
    return LongSet(manifest, runs, curves, int(manifest["steps"]), int(manifest["batch"]),
                   [float(x) for x in manifest["lrs"]["sgd"]])


def plateau_end(S: LongSet, margin=DIVERGENCE_NATS, persist=3, escape_ratio=0.5) -> pd.DataFrame:
    """Per seed, the end of the plateau: the first evaluation whose held-out loss is above H(pi) + ``margin`` nats or
    not finite (``"divergence"``), or that starts ``persist`` consecutive evaluations with the loss below
    (H(pi) + H_rate) / 2 and c-hat / c* >= ``escape_ratio`` (``"escape"``: the bigram side); T_end NaN and kind ""
    if neither happens by the horizon.

    Section 12 of the draft fixed one evaluation below the midpoint as an escape; at batch 1 the held-out loss (4
    sequences of 64 symbols) has a standard deviation near the half-band's 0.024 nats, so single evaluations dip
    below it on the plateau (in the lr 7 set every such dip was followed by divergence). ``persist`` and the c-hat
    condition were added after that set: a dip on the plateau keeps c-hat / c* near 0."""
    from ..markov.chain import MarkovChain

    margin = checks.positive_real("margin", margin)
    persist = checks.positive_int("persist", persist)
    p, q = S.manifest["chains"][0]
    chain = MarkovChain(p, q)
    low, high = (chain.marginal_entropy + chain.entropy_rate) / 2, chain.marginal_entropy + margin
    rows = []
    for seed, g in S.curves.sort_values("step").groupby("seed"):
        loss = g.eval_loss.to_numpy(dtype=float)
        ratio = g.coefficient_ratio.to_numpy(dtype=float)
        down = np.isfinite(loss) & (loss < low) & (ratio >= escape_ratio)
        run = np.convolve(down.astype(int), np.ones(persist, dtype=int), "valid") == persist  # starts of runs
        up = ~np.isfinite(loss) | (loss > high)
        first = {"escape": np.flatnonzero(run), "divergence": np.flatnonzero(up)}
        hits = {k: int(v[0]) for k, v in first.items() if v.size}
        if hits:
            kind = min(hits, key=hits.get)
            rows.append({"seed": int(seed), "T_end": float(g.step.iloc[hits[kind]]), "kind": kind})
        else:
            rows.append({"seed": int(seed), "T_end": np.nan, "kind": ""})
    return pd.DataFrame(rows).set_index("seed")


def saddle_crossing(S: LongSet, ends=None) -> pd.Series:
    """Per seed, the first evaluation strictly before the plateau's end (whose weights may have diverged) at which
    w <= -1/sqrt 2: where E(0, w) reaches E_sad on the unigram line (Lemma 12), the event whose step t_sad the law
    predicts; NaN if none. ``ends``: :func:`plateau_end`'s frame, if already computed."""
    ends, out = (plateau_end(S) if ends is None else ends), {}
    for seed, g in S.curves.sort_values("step").groupby("seed"):
        t_end = ends.loc[seed, "T_end"]
        g = g[g.step < t_end] if np.isfinite(t_end) else g
        hit = g.step[g.w <= -1 / np.sqrt(2)]
        out[int(seed)] = float(hit.iloc[0]) if len(hit) else np.nan
    return pd.Series(out, name="t_cross")


def growth(S: LongSet, lo=0.02, hi=0.3, min_points=4, ends=None) -> pd.DataFrame:
    """Per seed, the least-squares slope of log|w| against the step over the evaluations before the plateau's end
    with ``lo`` <= |w| <= ``hi`` (check G1 of the draft, section 12), and the doubling time log 2 / slope; NaN for a
    run with fewer than ``min_points`` such evaluations. ``ends``: :func:`plateau_end`'s frame, if already
    computed."""
    lo, hi = checks.positive_real("lo", lo), checks.positive_real("hi", hi)
    if not lo < hi:
        raise ValueError(f"lo must be below hi, got {lo} and {hi}")
    ends = plateau_end(S) if ends is None else ends
    rows = []
    for seed, g in S.curves.sort_values("step").groupby("seed"):
        t_end = ends.loc[seed, "T_end"]
        g = g[g.step < t_end] if np.isfinite(t_end) else g
        a = g.w.abs().to_numpy(dtype=float)
        sel = (a >= lo) & (a <= hi)
        slope = np.polyfit(g.step.to_numpy(dtype=float)[sel], np.log(a[sel]), 1)[0] if sel.sum() >= min_points \
            else np.nan
        rows.append({"seed": int(seed), "points": int(sel.sum()), "slope": slope,
                     "doubling": np.log(2) / slope if slope > 0 else np.nan})
    return pd.DataFrame(rows).set_index("seed")


def initial_drift(S: LongSet, window=1000) -> pd.Series:
    """Per seed, the drift of w per step over the first ``window`` steps, or two evaluation spacings if that is longer
    (least-squares slope of w against the step over the evaluations up to there), to set beside the law's dw at the
    initialization."""
    window = max(checks.positive_int("window", window), 2 * int(S.manifest.get("eval_every", 1)))
    out = {}
    for seed, g in S.curves.sort_values("step").groupby("seed"):
        g = g[g.step <= window]
        if len(g) < 3:
            raise ValueError(f"window {window} holds {len(g)} evaluations of seed {seed}; at least 3 are needed")
        out[int(seed)] = float(np.polyfit(g.step.to_numpy(dtype=float), g.w.to_numpy(dtype=float), 1)[0])
    return pd.Series(out, name="dw_initial")


def escape_test(S: LongSet, t_sad_per_seed: dict, band=(0.6, 0.9), alpha=0.05, family=3, times=None) -> dict:
    """Checks E1-E3 for one escape set (one step size). ``t_sad_per_seed``: {seed (str or int): frozen E_sad step at
    the initialization, at this set's step size and batch}; ``band``: the integrated factor's range; the Kaplan-Meier
    intervals are two-sided at level ``alpha`` / ``family`` (Bonferroni over the step sizes tested). ``times``: the
    event per seed (a Series indexed by seed, NaN: censored), by default the stored escape step (c-hat / c* >= 0.5);
    :func:`plateau_end`'s ``T_end`` for the end of the plateau.

    Returns the seeds, escape steps (NaN: censored at the horizon), t_sad, the Kaplan-Meier estimate and its median
    with interval, the predicted band [band[0] m, band[1] m] with m the median of t_sad, E1 (the median's interval
    meets the band), the count escaped with its Wilson interval, the ratio of the measured median to m with the
    interval's ends, and the Spearman correlation between t_sad and the escape step (censored ranked last)."""
    from scipy.stats import spearmanr

    lo_f, hi_f = checks.positive_real("band[0]", band[0]), checks.positive_real("band[1]", band[1])
    if not lo_f < hi_f:
        raise ValueError(f"band must be (low, high) with low < high, got {band!r}")
    from scipy.stats import norm

    alpha = checks.probability("alpha", alpha)
    family = checks.positive_int("family", family)
    z = float(norm.ppf(1 - alpha / (2 * family)))
    if len(S.lrs) != 1:
        raise ValueError(f"an escape set has one step size, this one has {S.lrs}")
    runs = S.runs.sort_values("seed")
    seeds = runs.seed.to_numpy()
    t_sad = np.array([float(t_sad_per_seed[str(s)] if str(s) in t_sad_per_seed else t_sad_per_seed[s])
                      for s in seeds])
    esc = runs.escape_step.to_numpy(dtype=float) if times is None else \
        np.array([float(times.loc[s]) for s in seeds])
    observed = np.isfinite(esc)
    times = np.where(observed, esc, S.horizon)
    km = kaplan_meier(times, observed, z=z)
    med, med_lo, med_hi = median_time(km), median_time(km, "lower"), median_time(km, "upper")
    m = float(np.median(t_sad))
    lo_band, hi_band = lo_f * m, hi_f * m
    rank_time = np.where(observed, esc, S.horizon + 1.0)
    rho = float(spearmanr(t_sad, rank_time)[0]) if np.ptp(rank_time) > 0 and np.ptp(t_sad) > 0 else float("nan")
    k, n = int(observed.sum()), int(len(seeds))
    return {"lr": S.lrs[0], "horizon": S.horizon, "z": z, "seeds": seeds, "escape": esc, "t_sad": t_sad, "km": km,
            "median": med, "median_interval": (med_lo, med_hi), "m": m, "band": (lo_band, hi_band),
            "E1": bool(med_lo <= hi_band and med_hi >= lo_band), "escaped": k, "n": n,
            "escaped_wilson": wilson_interval(k, n), "ratio": med / m,
            "ratio_interval": (med_lo / m, med_hi / m), "spearman": rho,
            "per_seed_ratio": np.where(observed, esc / t_sad, np.nan)}


def rate_runs(folder=None) -> pd.DataFrame:
    """The law's comparison with the rate set, one row per run (``book/data/sgd_drift/runs_rate.csv``, written by
    ``check_sgd_drift.py --data book/data/escape_long --tag rate``)."""
    folder = stored.data_dir("sgd_drift") if folder is None else folder
    return pd.read_csv(folder / "runs_rate.csv")


def rate_test(law_runs: pd.DataFrame, lr, band=1.25) -> dict:
    """Checks R1-R2 (R3 at the stability edge) for the rate set at step size ``lr``: ``law_runs`` is
    ``book/data/sgd_drift/runs_rate.csv`` (one row per run: dw_law, dw_meas, dE_meas, w_late, regen_w_diff). R1: the
    median ratio dw_law / dw_meas lies in [1/band, band]; R2: the signs agree in every seed, and E rises in every
    seed whose w falls while w < 0; the count of sign agreements (R3 asks for 15 of 20 at lr 8)."""
    band = checks.positive_real("band", band)
    r = law_runs[np.isclose(law_runs.lr, float(lr))]
    if r.empty:
        raise ValueError(f"no runs at lr {lr} in the rate set")
    ratio = (r.dw_law / r.dw_meas).to_numpy()
    med = float(np.median(ratio))
    same_sign = np.sign(r.dw_law.to_numpy()) == np.sign(r.dw_meas.to_numpy())
    falling = (r.dw_meas.to_numpy() < 0) & (r.w_late.to_numpy() < 0)
    rises = r.dE_meas.to_numpy()[falling] > 0
    return {"lr": float(lr), "n": int(len(r)), "ratio_median": med, "ratio_range": (float(ratio.min()),
                                                                                   float(ratio.max())),
            "R1": bool(1 / band <= med <= band), "signs_agree": int(same_sign.sum()),
            "falling": int(falling.sum()), "rises_when_falling": int(rises.sum()),
            "R2": bool(same_sign.all() and rises.all()), "regen_w_diff_max": float(r.regen_w_diff.max())}


def replay(S: LongSet, steps=1000, seeds=None) -> tuple[pd.DataFrame, float]:
    """Re-run the first ``steps`` steps of the set's runs (``seeds``: all by default) with the runner that made them
    (:class:`~markovlib.transformer.seed_batch.SeedBatchSGD`, evaluations at the stored spacing) and compare every
    stored evaluation up to ``steps``: one row per (seed, step) with the live and stored c-hat / c*, w and E, and the
    largest difference scaled by the stored value's size (max(|stored|, 1))."""
    from .seed_batch import SeedBatchSGD

    every = int(S.manifest["eval_every"])
    steps = checks.positive_int("steps", steps)
    if steps % every or steps > S.horizon:
        raise ValueError(f"steps must be a multiple of the set's evaluation spacing {every} up to its horizon "
                         f"{S.horizon}, got {steps}")
    seeds = sorted(S.runs.seed.unique().tolist()) if seeds is None else [int(s) for s in seeds]
    p, q = S.manifest["chains"][0]
    run = SeedBatchSGD(p, q, seeds, S.lrs[0], S.horizon, eval_every=every, batch=S.batch,
                       clip=float(S.manifest.get("grad_clip", 1.0)))
    live = run.train(stop_at=steps)
    rows, worst = [], 0.0
    for s in seeds:
        ref = S.curves[S.curves.seed == s].set_index("step")
        for r in live[s]:
            if r["step"] > steps:
                continue
            row = {"seed": s, "step": r["step"]}
            for col in ("coefficient_ratio", "w", "energy"):
                stored_v = float(ref.loc[r["step"], col])
                row[f"{col}_live"], row[f"{col}_stored"] = r[col], stored_v
                worst = max(worst, abs(r[col] - stored_v) / max(abs(stored_v), 1.0))
            rows.append(row)
    return pd.DataFrame(rows), worst


def batch1_study(law_results: dict, band=(0.6, 0.9), alpha=0.05, folder=None) -> dict:
    """The escape sets of :data:`ESCAPE_SETS` read against the law (``law_results``: book/data/sgd_drift's results,
    whose batch-1 scan holds each seed's t_sad, dw and w_0): per set its plateau ends, the growth of |w|, the initial
    drift, the law's dw per seed, the Kaplan-Meier test of the plateau's end (family: the number of sets), and one
    table row per step size."""
    sets = {tag: load(tag, folder) for tag in ESCAPE_SETS}
    scan = law_results["scan"]["batch1"]
    out = {"sets": sets, "ends": {}, "growth": {}, "drift0": {}, "law_dw": {}, "tests": {}}
    rows, why = [], []
    for tag, S in sets.items():
        law = scan[str(S.lrs[0])]
        ends = plateau_end(S)
        grow, d0 = growth(S, ends=ends), initial_drift(S)
        dw = {int(k): float(v) for k, v in law["dw_per_seed"].items()}
        t = escape_test(S, law["t_sad_per_seed"], band=band, alpha=alpha, family=len(sets), times=ends.T_end)
        meas = grow.doubling.to_numpy()
        ok = np.isfinite(meas)
        cross = saddle_crossing(S, ends=ends)
        last = [g[g.step < ends.loc[sd, "T_end"]].w.iloc[-1] for sd, g in S.curves.sort_values("step").groupby("seed")
                if np.isfinite(ends.loc[sd, "T_end"]) and (g.step < ends.loc[sd, "T_end"]).any()]
        single = plateau_end(S, persist=1)
        t.update(crossed=int(cross.notna().sum()), cross_median=float(cross.median()) if cross.notna().any()
                 else float("nan"), t_sad_median=float(np.median(t["t_sad"])),
                 single_escapes=int((single.kind == "escape").sum()),
                 w_end_median=float(np.median(last)) if last else float("nan"))
        t.update(escapes=int((ends.kind == "escape").sum()), divergences=int((ends.kind == "divergence").sum()),
                 drift0_ratio=float(np.median(d0.to_numpy() / np.array([dw[s] for s in d0.index]))),
                 doubling_median=float(np.median(meas[ok])) if ok.any() else float("nan"), doubling_runs=int(ok.sum()),
                 law_doubling_median=float(np.median([0.1 / abs(dw[s]) for s in grow.index])))  # |w|/|dw| at 0.1
        for key, value in (("ends", ends), ("growth", grow), ("drift0", d0), ("law_dw", dw), ("tests", t)):
            out[key][tag] = value
        lo, hi = t["median_interval"]
        rows.append({"lr": f"{S.lrs[0]:g}", "horizon": kilo(S.horizon), "plateau ended": f"{t['escaped']}/{t['n']}",
                     "escape / divergence": f"{t['escapes']} / {t['divergences']}",
                     "end: Kaplan-Meier median [interval]": f"{kilo(t['median'])} [{kilo(lo)}, {kilo(hi)}]",
                     "the law's band": f"[{kilo(t['band'][0])}, {kilo(t['band'][1])}]"})
        why.append({"lr": f"{S.lrs[0]:g}", "w before the end (median)": f"{t['w_end_median']:.2f}",
                    "w <= -1/sqrt2: runs, median step": f"{t['crossed']}/{t['n']}, {kilo(t['cross_median'])}",
                    "the law's t_sad (median)": kilo(t["t_sad_median"]),
                    "first drift, measured / law": f"{t['drift0_ratio']:.1f}",
                    "|w| doubles in (median, runs)": (f"{t['doubling_median']:.0f} ({t['doubling_runs']})"
                                                      if ok.any() else "-"),
                    "the law's |w|/|dw| at 0.1": f"{t['law_doubling_median']:.2g}"})
    out["table"], out["why"] = pd.DataFrame(rows), pd.DataFrame(why)
    return out


def growth_scaling(study: dict, law_results: dict) -> dict:
    """Exploratory (read after the sets): how the median growth rate of |w| (log 2 / doubling time) scales across the
    step sizes of ``study`` (:func:`batch1_study`): its least-squares exponent in lr, and in lr * C_bb, the step size
    times the variance of the bias's floor from the law's Lyapunov solution (the scan's median)."""
    scan = law_results["scan"]["batch1"]
    lrs = np.array([t["lr"] for t in study["tests"].values()])
    rate = np.array([np.log(2) / t["doubling_median"] for t in study["tests"].values()])
    noise = np.array([lr * scan[str(lr)]["bias_floor_sd"] ** 2 for lr in lrs])
    if len(lrs) < 2 or not np.all(np.isfinite(rate)):
        raise ValueError("growth_scaling needs two or more step sizes with a measured doubling time")
    return {"lrs": lrs, "rate": rate, "lr_Cbb": noise,
            "exponent_lr": float(np.polyfit(np.log(lrs), np.log(rate), 1)[0]),
            "exponent_lr_Cbb": float(np.polyfit(np.log(noise), np.log(rate), 1)[0])}

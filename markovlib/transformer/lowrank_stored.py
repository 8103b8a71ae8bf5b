"""The stored paper-scale runs of the chapter low_rank (reference Sec. 5.1 at N = 1024, ``book/data/lowrank/``):
counts over the stored seeds, the canonical start's invariance, W_V and W_O under AdamW, the perturbed start.

- :func:`load`: every part of the stored set (checksums, disjoint seeds, same settings; :func:`stored.read_parts`).
- :func:`count_table`: per (init, optimizer), the seeds in which each matrix ends rank one, e on the hypercube and
  the top singular vectors aligned with e.
- :func:`stored_claims`: the counts that the chapter states as claims, with their Wilson intervals and their counts
  on the seeds stored after the claims were chosen; :func:`invariance`: the canonical start's largest 1 - f.
- :func:`adamw_vo`: W_V, W_O under AdamW from the stored top fractions f only: the stable rank 1/f, the bound
  s_2/s_1 <= sqrt((1 - f)/f) (informative for f > 1/2) and a threshold sweep.
- :func:`perturbed`: the rank-one start plus noise (stored part ``perturbed``): which matrices come back (their 1 - f
  falls by a factor), as claims, tables and the texts of the chapter's prose.
- :func:`prefix_facts`: the deterministic prefix of the stored runs (``slice_prefix.csv``) as the chapter states it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..book import stored
from ..book.formatting import fixed, fraction
from ..numerics import checks
from . import lowrank

MATRICES = ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2", "positional")
RANK_ONE_SGD = ("W_V", "W_O", "W_1", "W_2", "positional")
SAME = ["chain", "optimizers", "inits"]
LATER = 10  # the seeds from this one on were stored after the claims had been chosen


def load(folder) -> dict:
    """Every part of the stored set in ``folder``: "final" and "curves" (frames), "parts" (the manifests), "seeds"
    (sorted) and "line" (a printed summary: runs, parts, chain, seeds, torch version)."""
    final, parts = stored.read_parts(folder, stored.PARTS["lowrank"], same=SAME, file="final")
    curves, _ = stored.read_parts(folder, stored.PARTS["lowrank"], same=SAME, file="curves")
    seeds = sorted(int(s) for s in final.seed.unique())
    line = (f"stored: {sum(len(m['runs']) for m in parts)} runs in {len(parts)} parts, chain {parts[0]['chain']}, "
            f"seeds {seeds[0]} to {seeds[-1]}, torch {parts[0]['versions']['torch']}, one thread")
    return {"final": final, "curves": curves, "parts": parts, "seeds": seeds, "line": line}


def count_table(final, threshold, flat_threshold, align_threshold) -> pd.DataFrame:
    """Rows "init, optimizer"; columns: per matrix the seeds with top fraction > ``threshold``, "hypercube"
    (flatness > ``flat_threshold``), "aligned with e" (|cos| of W_V, W_O, W_1, W_2 with e > ``align_threshold``)."""
    table = {}
    for (init, opt), _ in final.groupby(["init", "optimizer"], sort=False):
        tests = {m: (lambda r, m=m: r[f"fraction_{m}"] > threshold) for m in MATRICES}
        tests["hypercube"] = lambda r: r["flatness"] > flat_threshold
        tests["aligned with e"] = lambda r: min(r[f"alignment_{m}"] for m in ("W_V", "W_O", "W_1", "W_2")) \
            > align_threshold
        table[f"{init}, {opt}"] = {c: "{}/{}".format(*lowrank.seeds_where(final, init, opt, f))
                                   for c, f in tests.items()}
    return pd.DataFrame(table).T


def stored_claims(final, z, *, threshold, flat_threshold, sgd_flat_max) -> dict:
    """The stored counts stated as claims, by glue name: {"text", "claim", "k", "n", "check", "count" (k/n with the
    Wilson interval at quantile ``z``), "later" (the count on the seeds from :data:`LATER` on)}."""
    tests = {
        "lr_stored_sgd5": ("Gaussian start, SGD step 5: W_V, W_O, W_1, W_2, positional fractions > threshold",
                           "standard", "sgd_5", lambda r: all(r[f"fraction_{m}"] > threshold for m in RANK_ONE_SGD)),
        "lr_stored_hyper_adam": (f"Gaussian start, AdamW: flatness > {flat_threshold:g} (hypercube)",
                                 "standard", "adamw", lambda r: r["flatness"] > flat_threshold),
        "lr_stored_hyper_sgd": (f"Gaussian start, SGD step 5: flatness < {sgd_flat_max:g} (not the hypercube)",
                                "standard", "sgd_5", lambda r: r["flatness"] < sgd_flat_max),
    }
    out = {}
    for name, (text, init, opt, flags) in tests.items():
        k, n = lowrank.seeds_where(final, init, opt, flags)
        out[name] = {"text": text, "claim": f"paper scale, {text}", "k": k, "n": n,
                     "check": f"stored final.csv, every stored seed of ({init}, {opt})",
                     "count": lowrank.count_text(k, n, z), "later": lowrank.later_count(final, init, opt, flags, LATER)}
    return out


def invariance(final) -> dict:
    """The canonical rank-one start: the largest 1 - f over its stored seeds and matrices, per optimizer ("sgd_5",
    "adamw") and over all, with "n_adamw" the number of its AdamW runs."""
    inv = final[final["init"] == "rank_one"]
    dev = lambda rows: float(max(1 - rows[f"fraction_{m}"].min() for m in MATRICES))  # noqa: E731
    adam = inv[inv["optimizer"] == "adamw"]
    return {"all": dev(inv), "sgd_5": dev(inv[inv["optimizer"] == "sgd_5"]),
            "adamw": dev(adam) if len(adam) else float("nan"), "n_adamw": len(adam)}


def adamw_vo(final, sweep_thresholds) -> dict:
    """W_V and W_O of the Gaussian start under AdamW: "sweep" (seeds above each threshold, per matrix), "srank" (the
    largest stable rank 1/f), "bound" (the largest sqrt((1 - f)/f)), "n_below_half", "n", "line" and "glue" (the
    chapter's glued texts)."""
    adam = final[(final["init"] == "standard") & (final["optimizer"] == "adamw")]
    n = len(adam)
    checks.positive_int("the AdamW runs of the Gaussian start", n)
    f = adam[["fraction_W_V", "fraction_W_O"]].to_numpy()
    sweep = pd.DataFrame({m: [fraction(int(np.sum(adam[f"fraction_{m}"] > t)), n) for t in sweep_thresholds]
                          for m in ("W_V", "W_O", "W_1", "W_2")}, index=[f"> {t:g}" for t in sweep_thresholds])
    bound, srank = float(np.max(np.sqrt((1 - f) / f))), float(np.max(1 / f))
    n_below_half = int((f.min(axis=1) < 0.5).sum())
    # s2/s1 <= sqrt((1 - f)/f) says something only while it is below 1, i.e. for f > 1/2 in every seed
    s2s1_text = (f"so s_2/s_1 <= {fixed(bound, 2)} in every seed" if bound < 1 else
                 f"in {fraction(n_below_half, n)} seeds W_V or W_O ends with top fraction below 1/2, "
                 "where the bound on s_2/s_1 says nothing: there the matrix is far from rank one")
    wv = adam.fraction_W_V
    return {"sweep": sweep, "srank": srank, "bound": bound, "n_below_half": n_below_half, "n": n,
            "line": f"final stable rank 1/f of W_V, W_O, largest over the stored seeds: {fixed(srank, 3)}; {s2s1_text}",
            "glue": {"lr_stored_wv_fracs": f"from {fixed(wv.min(), 3)} to {fixed(wv.max(), 3)}, median "
                                           f"{fixed(wv.median(), 3)}",
                     "lr_stored_srank": fixed(srank, 3), "lr_stored_s2s1_bound": s2s1_text,
                     "lr_stored_vo_far": f"W_V has top fraction above 0.9 in {fraction(int((wv > 0.9).sum()), n)} "
                                         f"stored seeds, above 0.99 in {fraction(int((wv > 0.99).sum()), n)}, and W_V "
                                         f"or W_O is below 1/2 in {fraction(n_below_half, n)}"}}


def perturbed(folder, noise_back, z) -> dict:
    """The stored perturbed rank-one start: "pert" (its curves), "noise", "n" (seeds per optimizer), "back" (per
    optimizer and matrix, the seeds whose final 1 - f is ``noise_back`` times below its start's), "claims" (by glue
    name: AdamW every matrix back, SGD step 5 W_V, W_O and positional back; the keywords of ``record_count`` with
    "count" at quantile ``z`` and "later"), "table", "sweep" (the counts at other factors) and "glue" (texts)."""
    noise_back = checks.positive_real("noise_back", noise_back)
    pert, parts = stored.read_parts(folder, stored.PARTS["lowrank_perturbed"], same=SAME + ["init_noise"],
                                    file="curves")
    end = int(pert.step.max())
    at = lambda opt, s: pert[(pert.optimizer == opt) & (pert.step == s)].set_index("seed")  # noqa: E731
    gap = {(opt, s): {m: 1 - at(opt, s)[f"top_fraction_{m}"].to_numpy() for m in MATRICES}
           for opt in ("sgd_5", "adamw") for s in (0, end)}
    seeds = {opt: at(opt, end).index.to_numpy() for opt in ("sgd_5", "adamw")}
    came = lambda opt, m, fac: gap[opt, end][m] < gap[opt, 0][m] / fac  # noqa: E731
    back = {opt: {m: int(np.sum(came(opt, m, noise_back))) for m in MATRICES} for opt in ("sgd_5", "adamw")}
    n = len(gap["adamw", end]["W_1"])
    out = {"pert": pert, "noise": parts[0]["init_noise"], "n": n, "back": back, "claims": {}, "glue": {}}
    for opt, ms, name, text in (("adamw", MATRICES, "lr_pert_all_adamw", "AdamW: every matrix"),
                                ("sgd_5", ("W_V", "W_O", "positional"), "lr_pert_vo_sgd_5",
                                 "SGD step 5: W_V, W_O and positional")):
        flags = np.all([came(opt, m, noise_back) for m in ms], axis=0)
        k, later = int(flags.sum()), seeds[opt] >= LATER
        out["claims"][name] = {"claim": f"paper scale, perturbed rank-one start, {text} return toward stable rank 1 "
                                        f"(1 - f at least {noise_back:g}x below the start)",
                               "k": k, "n": len(flags), "count": lowrank.count_text(k, len(flags), z),
                               "check": "stored perturbed curves, step 0 against the last step, every seed",
                               "later": fraction(int(flags[later].sum()), int(later.sum()))}
    table = pd.DataFrame({f"{o}: 1 - f, start (median)": {m: f"{np.median(gap[o, 0][m]):.0e}" for m in MATRICES}
                          for o in ("sgd_5", "adamw")})
    for o in ("sgd_5", "adamw"):
        table[f"{o}: 1 - f, end (median)"] = [f"{np.median(gap[o, end][m]):.0e}" for m in MATRICES]
        table[f"{o}: back by {noise_back:g}x"] = [f"{back[o][m]}/{n}" for m in MATRICES]
    out["table"] = table
    out["sweep"] = pd.DataFrame({f"{o}, by {fac:g}x": {m: fraction(int(np.sum(came(o, m, fac))), n) for m in MATRICES}
                                 for o in ("sgd_5", "adamw") for fac in (3, 10, 30, 100)})
    away = []  # AdamW: matrices that end farther from rank one than they started
    for m in MATRICES:
        grew = gap["adamw", end][m] > gap["adamw", 0][m]
        if grew.any():
            factor = float(np.max(gap["adamw", end][m][grew] / gap["adamw", 0][m][grew]))
            away.append(f"{m} in seed(s) {', '.join(str(int(s)) for s in seeds['adamw'][grew])} "
                        f"(1 - f up to {factor:.0f} times its start)")
    mid_a, mid_s = at("adamw", 100), at("sgd_5", end // 2)
    ratio = {m: (1 - at("sgd_5", end)[f"top_fraction_{m}"]) / (1 - mid_s[f"top_fraction_{m}"]) for m in ("W_Q", "W_K")}
    out["glue"] = {
        "lr_noise": f"{out['noise']:g}", "lr_n_pert": str(n), "lr_pert_away_adamw": "; ".join(away) or "none",
        "lr_pert_drift_adamw": "median over the seeds " + ", ".join(
            f"{m} {np.median(1 - mid_a[f'top_fraction_{m}']):.0e} at step 100, "
            f"{np.median(gap['adamw', end][m]):.0e} at the end" for m in ("W_V", "W_O")),
        "lr_pert_plateau_sgd": "; ".join(
            f"{m}: 1 - f at the end over 1 - f at step {end // 2}, median {fixed(np.median(r), 2)}, "
            f"from {fixed(r.min(), 2)} to {fixed(r.max(), 2)} over the seeds" for m, r in ratio.items()),
        "lr_pert_start": ", ".join(f"{m} {np.median(np.r_[gap['sgd_5', 0][m], gap['adamw', 0][m]]):.0e}"
                                   for m in MATRICES),
        **{f"lr_pert_back_{o}": ", ".join(f"{m} {back[o][m]}/{n}" for m in MATRICES) for o in ("adamw", "sgd_5")},
        **{f"lr_pert_end_{o}": ", ".join(f"{m} {np.median(gap[o, end][m]):.0e}" for m in MATRICES)
           for o in ("adamw", "sgd_5")}}
    return out


def prefix_facts(folder, seeds, slice_steps, level) -> dict:
    """The deterministic prefix of every run of the first stored part (:func:`lowrank.slice_prefix`): "agree" (the
    largest difference of the SGD-step-5 runs within ``slice_steps``), "line" (printed) and "glue" (the configurations,
    the SGD-step-5 prefix, the others', the agreement, the steps compared)."""
    slice_steps = checks.positive_int("slice_steps", slice_steps)
    prefix_of, prefix = lowrank.slice_prefix(pd.read_csv(folder / "slice_prefix.csv"), seeds, level)
    sgd5 = prefix_of.xs("sgd_5", level="optimizer")
    other = prefix_of[prefix_of.index.get_level_values("optimizer") != "sgd_5"]
    agree = float(prefix[(prefix.optimizer == "sgd_5") & (prefix.step <= slice_steps)]["diff"].max())
    return {"agree": agree,
            "line": f"deterministic prefix over {len(prefix_of)} stored runs and configurations: SGD step 5 at least "
                    f"{sgd5.min()} steps, the others at least {other.min()}; largest difference within the slice's "
                    f"{slice_steps} steps {agree:.1e}",
            "glue": {"lr_prefix_configs": ", ".join(sorted(prefix.config.unique())),
                     "lr_prefix_sgd5": str(int(sgd5.min())),
                     "lr_prefix_other": f"all {int(other.min())}" if other.min() == prefix.step.max()
                     else f"at least {int(other.min())}",
                     "lr_prefix_agree": f"{agree:.1e}", "lr_prefix_steps": str(int(prefix.step.max()))}}


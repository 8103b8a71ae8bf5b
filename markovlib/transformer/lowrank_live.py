"""The live runs of the chapter low_rank (reference Sec. 5.1, Figs. 3, 6, 7): train, measure, count over seeds.

- :func:`snapshot_plan`: the steps at which the weights are kept (every ``track_every`` steps and the heatmaps').
- :func:`train`: every run of the chapter side by side (SGD at two steps and AdamW from the tiny Gaussian start, the
  canonical rank-one start under SGD, the perturbed rank-one start under AdamW), through :func:`runs.train_many`.
- :func:`measure`: per run, the top fraction and s_2 / s_1 of every matrix along training and at the end, and the
  held-out excess loss over the bigram predictor (:mod:`lowrank_reference`, numpy's SVD and torch).
- :func:`groups`: per optimizer group, those measurements as arrays over the seeds (with |e|^2, the flatness
  min_i |e_i| / max_i |e_i| and the alignment of the top singular vectors with e).
- :func:`claims`: the chapter's claims over seeds (text, k, n, check), :func:`rank_one_drift` (Fig. 7's invariance),
  :func:`dilution` (the perturbed start: the part off rank one against the growth of s_1), :func:`threshold_sweep`.
"""
from __future__ import annotations

import numpy as np
import torch

from ..numerics import checks
from . import lowrank, lowrank_reference
from .model import MarkovTransformer
from .runs import train_many

MATRICES = ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2", "positional")
RANK_ONE_SGD = ("W_V", "W_O", "W_1", "W_2", "positional")
RANK_ONE_ADAM = ("W_Q", "W_K", "W_1", "W_2", "positional")
SIX = ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2")
GROUPS = ("sgd", "sgd_small", "adamw")
HELDOUT_SEED = 1_000_003  # the held-out sequences of seed s are drawn with this + s (apart from every training seed)
CLAIM_KNOBS = ("steps", "threshold", "excess_tol", "align_threshold", "random_threshold", "e2_rtol", "qk_ratio",
               "flat_threshold", "sgd_flat_max", "vo_factor", "dilution_band", "pert_noise", "lr_sgd", "lr_sgd_small")


def snapshot_plan(steps, track_every, heatmap_steps):
    """(snap_at, snapshot_steps): the heatmap steps clipped to the run with 0 and ``steps`` added, and every step at
    which the weights are kept (every ``track_every`` steps, and snap_at)."""
    steps, track_every = checks.positive_int("steps", steps), checks.positive_int("track_every", track_every)
    snap_at = sorted({min(int(s), steps) for s in heatmap_steps} | {0, steps})
    return snap_at, sorted(set(range(0, steps + 1, track_every)) | set(snap_at))


def train(seeds, *, p, q, d, length, batch, steps, init_std, lr_sgd, lr_sgd_small, lr_adamw, pert_noise,
          snapshot_steps, workers=1, progress=True) -> dict:
    """Every run of the chapter, keyed (kind, seed): kinds "sgd" (step ``lr_sgd``), "sgd_small" and "adamw" for every
    seed from the Gaussian start N(0, init_std^2), "rank_one" (the canonical rank-one start, SGD) for the first seed,
    and "pert_adamw" (that start plus N(0, pert_noise^2) on every weight but the bias, AdamW) for every seed. Each
    value is :func:`runs.train_many`'s result with the weights at ``snapshot_steps``."""
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds must be a non-empty list")
    pert_noise = checks.positive_real("pert_noise", pert_noise)
    shape = dict(p=p, q=q, d=d, length=length, batch=batch, steps=steps, init_std=init_std)
    cfg = {("sgd", s): lowrank.run_config(s, "standard", "sgd", lr_sgd, **shape) for s in seeds}
    cfg |= {("sgd_small", s): lowrank.run_config(s, "standard", "sgd", lr_sgd_small, **shape) for s in seeds}
    cfg |= {("adamw", s): lowrank.run_config(s, "standard", "adamw", lr_adamw, **shape) for s in seeds}
    cfg |= {("rank_one", seeds[0]): lowrank.run_config(seeds[0], "rank_one", "sgd", lr_sgd, **shape)}
    cfg |= {("pert_adamw", s): dict(lowrank.run_config(s, "rank_one", "adamw", lr_adamw, **shape),
                                    init_noise=pert_noise) for s in seeds}
    return dict(zip(cfg, train_many(list(cfg.values()), workers=workers, progress=progress,
                                    snapshot_steps=snapshot_steps)))


def diverged(done) -> int:
    """The number of runs of :func:`train`'s result whose final weights are not all finite."""
    return sum(not all(np.all(np.isfinite(w)) for w in res["weights"].values()) for res in done.values())


def measure(done, *, p, q, d, length, batch, steps, track_every, heldout_batches) -> dict:
    """Per run of :func:`train`'s result: "weights", "snaps", "track" (the step, and per matrix m its top fraction
    and, as m + "/s2s1", its s_2 / s_1 at every ``track_every`` steps and at the end), the final "fractions" and
    "s2s1" per matrix, and "excess" (the held-out loss over the bigram predictor on ``heldout_batches`` x ``batch``
    sequences, drawn with seed HELDOUT_SEED + seed), the model rebuilt from the final weights."""
    track_every = checks.positive_int("track_every", track_every)
    heldout_batches = checks.positive_int("heldout_batches", heldout_batches)
    runs = {}
    for (kind, seed), res in done.items():
        W = res["weights"]
        model = MarkovTransformer(d, length)
        with torch.no_grad():
            for k, prm in model.named_parameters():
                prm.copy_(torch.as_tensor(W[k]))
        at = sorted(s for s in res["snapshots"] if s % track_every == 0 or s == steps)
        track = {"step": np.array(at)}
        for m in MATRICES:
            sv = [lowrank_reference.spectrum(res["snapshots"][s][m]) for s in at]
            track[m] = np.array([float(v[0] ** 2 / np.sum(v ** 2)) for v in sv])
            track[m + "/s2s1"] = np.array([float(v[1] / v[0]) for v in sv])
        runs[kind, seed] = {"weights": W, "snaps": res["snapshots"], "track": track,
                            "fractions": {m: lowrank_reference.top_fraction(W[m]) for m in MATRICES},
                            "s2s1": {m: lowrank_reference.s2_over_s1(W[m]) for m in MATRICES},
                            "excess": lowrank_reference.excess_loss(model, p, q, sequences=heldout_batches * batch,
                                                                    length=length, seed=HELDOUT_SEED + seed)}
    return runs


def groups(runs, seeds) -> dict:
    """Per group of :data:`GROUPS`, arrays over ``seeds``: "fractions" and "s2s1" (per matrix), "excess", "e2"
    (|e|^2), "flat" (:func:`lowrank.flatness`) and "align" (:func:`lowrank.min_alignment`)."""
    out = {}
    for g in GROUPS:
        rs = [runs[g, s] for s in seeds]
        out[g] = {"runs": rs, "excess": np.array([r["excess"] for r in rs]),
                  "fractions": {m: np.array([r["fractions"][m] for r in rs]) for m in MATRICES},
                  "s2s1": {m: np.array([r["s2s1"][m] for r in rs]) for m in MATRICES},
                  "e2": np.array([float(r["weights"]["embedding"] @ r["weights"]["embedding"]) for r in rs]),
                  "flat": np.array([lowrank.flatness(r["weights"]["embedding"]) for r in rs]),
                  "align": np.array([lowrank.min_alignment(r["weights"]) for r in rs])}
    return out


def rank_one_drift(run) -> tuple[float, float]:
    """(deviation, drift) of the canonical rank-one run (Fig. 7): the largest 1 - top fraction over its tracked
    steps and matrices, and 1 - |cos(e_0, e_end)|, the drift of the direction alpha."""
    dev = max(float(np.max(1 - run["track"][m])) for m in MATRICES)
    e0, e1 = run["snaps"][0]["embedding"], run["weights"]["embedding"]
    return dev, float(1 - abs(e0 @ e1) / (np.linalg.norm(e0) * np.linalg.norm(e1)))


def dilution(runs, seeds, steps) -> tuple[np.ndarray, np.ndarray]:
    """The perturbed rank-one start ("pert_adamw" runs): per seed (rows) and matrix of :data:`SIX` (columns), the
    ratio end/start of the part off rank one (:func:`lowrank_reference.off_rank_one`) and of s_1."""
    off, s1 = [], []
    for s in seeds:
        snaps = runs["pert_adamw", s]["snaps"]
        off.append([lowrank_reference.off_rank_one(snaps[steps][m]) / lowrank_reference.off_rank_one(snaps[0][m])
                    for m in SIX])
        s1.append([float(lowrank_reference.spectrum(snaps[steps][m])[0] / lowrank_reference.spectrum(snaps[0][m])[0])
                   for m in SIX])
    return np.array(off), np.array(s1)


def threshold_sweep(fractions, thresholds, matrices=("W_V", "W_O", "W_1", "W_2")) -> dict:
    """Per matrix, the number of seeds whose final top fraction exceeds each threshold (an array per matrix)."""
    return {m: np.array([int(np.sum(np.asarray(fractions[m]) > t)) for t in thresholds]) for m in matrices}


def claims(G, off_ratio, values, cstar) -> dict:
    """The chapter's claims over seeds, by glue name: {"claim", "k", "n", "check"} (the keywords of
    ``Verification.record_count``). ``G`` is :func:`groups`' result, ``off_ratio`` :func:`dilution`'s first array,
    ``values`` holds the knobs of :data:`CLAIM_KNOBS`, ``cstar`` the e-axis minimum c* of Thm 8."""
    missing = set(CLAIM_KNOBS) - set(values)
    if missing:
        raise ValueError(f"values must hold {sorted(missing)}")
    v, sgd, small, adam = values, G["sgd"], G["sgd_small"], G["adamw"]
    fr, ex = (lambda g, ms: np.all([g["fractions"][m] > v["threshold"] for m in ms], axis=0)), v["excess_tol"]
    rows = {
        "lr_sgd_rank1": ("Gaussian init + SGD: W_V, W_O, W_1, W_2, positional end rank one (Fig. 3)",
                         fr(sgd, RANK_ONE_SGD), f"numpy SVD after {v['steps']} steps: s_1^2/sum s_i^2 > "
                         f"{v['threshold']:g} for all five, per seed"),
        "lr_sgd_loss": ("Gaussian init + SGD: loss reaches the entropy rate", sgd["excess"] < ex,
                        f"held-out loss minus the bigram predictor's on the same sequences < {ex:g} nats"),
        "lr_align": ("one shared direction alpha = e/|e| (Fig. 6)", sgd["align"] > v["align_threshold"],
                     "min over W_V, W_O, W_1, W_2, positional of |cos(e, top singular vector)| > "
                     f"{v['align_threshold']:g}"),
        "lr_small_random": ("smaller step: entropy rate reached with W_1, W_2 still random",
                            (small["excess"] < ex) & (small["fractions"]["W_1"] < v["random_threshold"])
                            & (small["fractions"]["W_2"] < v["random_threshold"]),
                            f"lr {v['lr_sgd_small']:g}: excess loss < {ex:g} nats and W_1, W_2 fractions < "
                            f"{v['random_threshold']:g}"),
        "lr_small_e2": ("smaller step: |e|^2 = c* (global minimum on the e-axis, Thm 8)",
                        np.abs(small["e2"] / cstar - 1) < v["e2_rtol"],
                        f"lr {v['lr_sgd_small']:g}: | |e|^2 / c* - 1 | < {v['e2_rtol']:g}, c* in closed form"),
        "lr_qk_far": (f"SGD (lr {v['lr_sgd']:g}): W_Q, W_K stay far from rank one",
                      (sgd["s2s1"]["W_Q"] > v["qk_ratio"]) & (sgd["s2s1"]["W_K"] > v["qk_ratio"]),
                      f"s2/s1 of both > {v['qk_ratio']:g} after {v['steps']} steps (the softmax scores barely change "
                      "the loss on a first-order chain)"),
        "lr_hyper_adam": ("AdamW: embedding on the hypercube {+-1}^d", adam["flat"] > v["flat_threshold"],
                          f"min_i |e_i| / max_i |e_i| > {v['flat_threshold']:g}"),
        "lr_hyper_sgd": ("SGD: embedding not on the hypercube", sgd["flat"] < v["sgd_flat_max"],
                         f"min_i |e_i| / max_i |e_i| < {v['sgd_flat_max']:g}"),
        "lr_adam_rank1": ("AdamW: W_Q, W_K, W_1, W_2, positional rank one, loss at the entropy rate",
                          fr(adam, RANK_ONE_ADAM) & (adam["excess"] < ex),
                          f"fractions > {v['threshold']:g}; excess loss < {ex:g} nats"),
        "lr_vo_farther": (f"AdamW: W_V, W_O end farther from rank one than W_1, W_2 (s2/s1 at least "
                          f"{v['vo_factor']:g} times)",
                          np.minimum(adam["s2s1"]["W_V"], adam["s2s1"]["W_O"])
                          > v["vo_factor"] * np.maximum(adam["s2s1"]["W_1"], adam["s2s1"]["W_2"]),
                          f"numpy SVD of the final weights: s2/s1 of W_V and of W_O > {v['vo_factor']:g} x "
                          "max(s2/s1 of W_1, W_2), per seed (no rank-one threshold)"),
        "lr_live_kept": ("AdamW, perturbed rank-one start: the part of W_Q, W_K, W_V, W_O, W_1, W_2 off rank one keeps "
                         f"its size (end/start within a factor {v['dilution_band']:g})",
                         np.all((off_ratio > 1 / v["dilution_band"]) & (off_ratio < v["dilution_band"]), axis=1),
                         f"numpy SVD of the weights at step 0 and {v['steps']}: sqrt(sum_(i>=2) s_i^2), per matrix, "
                         f"every seed (noise {v['pert_noise']:g})"),
    }
    out = {}
    for name, (text, flags, check) in rows.items():
        flags = np.asarray(flags, dtype=bool).ravel()
        out[name] = {"claim": text, "k": int(flags.sum()), "n": int(flags.size), "check": check}
    return out

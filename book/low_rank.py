# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.7
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Low rank emerges
#
# The analysis of {cite:t}`makkuva2024local` does not work with the full transformer. It restricts every weight to
# a *canonical* rank-one form along one shared unit direction $\alpha$, which reduces the model to a few scalars
# $(e, w, a, b)$. That reduction is justified by an observation (Sec. 5.1 of the paper): trained weights *are*
# rank one and share one direction, and a rank-one initialization stays rank one. This chapter trains the full
# model of Sec. 2 and measures both claims, over several training seeds, then asks what makes them true.
#
# ## What this chapter shows
#
# Training runs are chaotic, so each claim counts seeds: it holds when the one-sided 95 % Wilson lower end of its
# rate exceeds `rate` $= 1/2$ (the table at the end prints each count with its interval).
#
# 1. **Rank one from a tiny Gaussian start** (Figs. 3, 6). Under SGD, $W_V$, $W_O$, $W_1$, $W_2$ and the positional
#    matrix end rank one ({glue:text}`lr_sgd_rank1` seeds), the loss at the entropy rate ({glue:text}`lr_sgd_loss`),
#    along one direction $\alpha = e/\lVert e\rVert$ ({glue:text}`lr_align`) ([Gaussian start](#sec-lr-gauss)).
# 2. **Rank one stays rank one** (Fig. 7): proved, and measured to {glue:text}`lr_inv`
#    ([rank-one start](#sec-lr-stays)).
# 3. **What drives it.** With a smaller SGD step the loss still reaches the entropy rate but $W_1$, $W_2$ stay random
#    ({glue:text}`lr_small_random`): the embedding alone reaches the $e$-axis minimum $\lVert e\rVert^2 = c^*$
#    ({glue:text}`lr_small_e2`); $W_Q$, $W_K$ stay far from rank one ({glue:text}`lr_qk_far`) ([why](#sec-lr-why)).
# 4. **The hypercube, at the book's step sizes.** $e \in \{\pm1\}^d/\sqrt d$ under AdamW ({glue:text}`lr_hyper_adam`),
#    not under SGD at the book's steps ({glue:text}`lr_hyper_sgd`), while the paper saw it under SGD (Sec. 5.1); AdamW makes $W_Q$, $W_K$, $W_1$, $W_2$, positional rank one
#    ({glue:text}`lr_adam_rank1`), while $W_V$, $W_O$ end farther from it ({glue:text}`lr_vo_farther`)
#    ([AdamW](#sec-lr-adam)).
# 5. **At the paper's scale** (stored, 20 seeds): SGD makes the five matrices rank one in {glue:text}`lr_stored_sgd5`,
#    AdamW puts $e$ on the hypercube in {glue:text}`lr_stored_hyper_adam`, SGD not in {glue:text}`lr_stored_hyper_sgd`;
#    a perturbed rank-one start returns toward stable rank 1 because the rank-one part grows (the perturbation kept its
#    size in {glue:text}`lr_live_kept` live seeds) ([stored runs](#sec-lr-stored)).
#
# ## Parameters
#
# The claims are stated, and checked, on the chains with $p + q = 0.5$ and $p, q \in [0.2, 0.3]$, at the training
# settings of the parameters cell only (no other value was checked), for any seeds: at least 10 on the paper's chain
# and 20 on the others (the mirror chain's rate is about 0.8). CI's second parameter set, `book/ci_params/low_rank.yaml`,
# runs the mirror chain with 20 seeds. Where the claims stop is said in [the last section](#sec-lr-range).

# %% tags=["parameters"]
p = 0.2  # chain: P(1 | 0) (paper's Sec. 5.1: 0.2); the claims need p + q of 0.5 and p, q in [0.2, 0.3] (Range)
q = 0.3  # chain: P(0 | 1) (paper: 0.3)
d = 8  # embedding dimension (paper: 8; the only value checked)
length = 128  # context N (paper: 1024, stored runs; the only value checked)
batch = 16  # sequences per step (paper: 16)
steps = 800  # iterations of every run (paper: 800)
init_std = 0.001  # Gaussian init N(0, init_std^2) of every weight (paper: 0.001)
lr_sgd = 5.0  # SGD step size (the paper does not state it; see the text)
lr_sgd_small = 2.0  # a smaller SGD step, for the contrast of claim 3
lr_adamw = 2e-3  # AdamW step (the authors' code); betas (0.9, 0.95), weight decay 1e-3
seeds = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]  # training seeds of every claim (at least 10 on the paper's chain, 20 on others); the first one is drawn in the figures
rate = 0.5  # a claim over seeds holds when the one-sided 95 % Wilson lower end of its rate exceeds this
track_every = 20  # steps between two weight snapshots (singular values along training)
heatmap_steps = [0, 100, 800]  # snapshots drawn as heatmaps (clipped to the run)
threshold = 0.99  # "rank one": top-component fraction s_1^2 / sum s_i^2 above this (Fig. 3's curves end near 1)
sweep_thresholds = [0.9, 0.95, 0.975, 0.99, 0.995, 0.999]  # the rank-one thresholds of the sweep
align_threshold = 0.99  # "one shared direction": |cos(e, top singular vector)| above this
qk_ratio = 0.1  # SGD: W_Q, W_K count as "not rank one" while s_2/s_1 stays above this (rank one: 0)
vo_factor = 5.0  # AdamW: W_V, W_O end farther from rank one than W_1, W_2 by at least this factor in s_2/s_1
random_threshold = 0.6  # smaller step: W_1, W_2 "still random" below this (a Gaussian 32 x 8 matrix: 0.2 to 0.3)
e2_rtol = 0.05  # smaller step: relative tolerance of |e|^2 against c* (the e-axis minimum of Thm 8)
flat_threshold = 0.9  # hypercube: min_i |e_i| / max_i |e_i| above this (exactly 1 on {+-1}^d)
sgd_flat_max = 0.5  # SGD: "not on the hypercube" when min_i |e_i| / max_i |e_i| is below this
excess_tol = 0.005  # nats: "at the entropy rate" when the held-out loss exceeds the bigram predictor's on the same data by less
heldout_batches = 4  # held-out batches (of `batch` sequences each) for the excess loss
noise_back = 10.0  # stored perturbed rank-one start: a matrix comes back toward rank one when its final 1 - fraction is this factor below its start's
pert_noise = 1e-5  # live perturbed rank-one start (AdamW): N(0, pert_noise^2) on every weight but the bias (the stored part's; the only value checked)
dilution_band = 2.0  # live perturbed start: the part off rank one keeps its size when its end/start ratio is within [1/this, this] (chosen after a look, see the text)
invariance_tol = 1e-6  # rank-one start: 1 - fraction and the drift of alpha stay below this (float32)
slice_steps = 20  # steps of the stored paper-scale runs re-executed here (their deterministic prefix: see the slice)
slice_tol = 1e-5  # re-executed slice vs stored curve: max abs difference (see the slice: about 10x the largest difference measured in its prefix)
workers = 2  # processes for the training runs (the results do not depend on it)

# %%
import json

import pandas as pd

from markovlib.book import params, stored
from markovlib.transformer import lowrank

DATA = stored.data_dir("lowrank")
PREFIX_LEVEL = 1e-6  # a stored run is deterministic while every compared value stays this close, not a knob
prefix_of, prefix = lowrank.slice_prefix(pd.read_csv(DATA / "slice_prefix.csv"),
                                         json.loads((DATA / "manifest.json").read_text())["seeds"], PREFIX_LEVEL)
sgd5_prefix = int(prefix_of.xs("sgd_5", level="optimizer").min())  # the slice re-executes SGD-step-5 runs
CHAINS = "the claims' chains: p + q = 0.5, p and q in [0.2, 0.3] (exploratory runs off them broke the claims)"
CHECKED = "the claims were checked at this value only"
STRICT = "the value at which it was checked: a stricter one breaks a claim (an outside review)"
SPEC = params.declare(
    p=params.Real(0.2, 0.3, why=CHAINS), q=params.Real(0.2, 0.3, why=CHAINS),
    d=params.Int(8, 8, why=CHECKED), length=params.Int(128, 128, why=CHECKED), batch=params.Int(16, 16, why=CHECKED),
    steps=params.Int(800, 800, why=CHECKED), init_std=params.Real(1e-3, 1e-3, why=CHECKED),
    lr_sgd=params.Real(5.0, 5.0, why=CHECKED), lr_sgd_small=params.Real(2.0, 2.0, why=CHECKED),
    lr_adamw=params.Real(2e-3, 2e-3, why=CHECKED),
    seeds=params.IntList(0, why="distinct; at least 10 on the paper's chain, 20 on the others (see together)"),
    rate=params.Real(0.5, 1.0, why="a claim over seeds holds for at least half of them (and rate < 1)"),
    track_every=params.Int(1, why="steps between weight snapshots"),
    heatmap_steps=params.IntList(0, why="snapshots drawn (clipped to the run)"),
    threshold=params.Real(0.99, 0.99, why=STRICT),
    sweep_thresholds=params.RealList(0.0, 1.0, closed=False, why="a sweep, not a claim"),
    align_threshold=params.Real(0.99, 1.0, why="only stricter (and < 1)"),
    qk_ratio=params.Real(0.1, 1.0, why="only stricter (and < 1)"),
    vo_factor=params.Real(5.0, float("inf"), why="only stricter"),
    random_threshold=params.Real(0.0, 0.6, why="only stricter (> 0); a Gaussian 32 x 8 matrix: 0.2 to 0.3"),
    e2_rtol=params.Real(0.0, 0.05, why="only stricter (> 0)"),
    flat_threshold=params.Real(0.9, 0.9, why=STRICT), sgd_flat_max=params.Real(0.5, 0.5, why=STRICT),
    excess_tol=params.Real(0.0, 0.005, why="only stricter (> 0)"),
    heldout_batches=params.Int(1, why="held-out batches of the excess loss"),
    noise_back=params.Real(10.0, 10.0, why=STRICT),
    pert_noise=params.Real(1e-5, 1e-5, why="the stored part's noise; " + CHECKED),
    dilution_band=params.Real(2.0, 2.0, why=CHECKED + " (a narrower band nears the measured 1.5)"),
    invariance_tol=params.Real(0.0, 1e-6, why="only stricter (> 0)"),
    slice_steps=params.Int(1, 20, why="within the deterministic prefix of the stored SGD-step-5 runs (see together)"),
    slice_tol=params.Real(0.0, 1e-5, why="about 10x the largest difference measured in the prefix; only stricter"),
    workers=params.Int(1, why="the results do not depend on it"),
    require=[
        ("p + q = 0.5", lambda v: abs(v["p"] + v["q"] - 0.5) <= 1e-9, CHAINS),
        ("seeds distinct, at least 10 at (0.2, 0.3) and 20 elsewhere", lambda v: len(set(v["seeds"])) == len(v["seeds"])
         >= (10 if abs(v["p"] - 0.2) < 1e-9 and abs(v["q"] - 0.3) < 1e-9 else 20),
         "a count needs 10 live seeds; off the paper's chain the rate is about 0.8, so 20"),
        ("rate, align_threshold, qk_ratio < 1", lambda v: max(v["rate"], v["align_threshold"], v["qk_ratio"]) < 1,
         "a rate or a cosine below 1"),
        ("random_threshold, e2_rtol, excess_tol, invariance_tol, slice_tol > 0", lambda v: min(
            v["random_threshold"], v["e2_rtol"], v["excess_tol"], v["invariance_tol"], v["slice_tol"]) > 0,
         "thresholds may be made stricter, never empty"),
        (f"slice_steps <= {sgd5_prefix}", lambda v: v["slice_steps"] <= sgd5_prefix,
         "the shortest deterministic prefix of the stored SGD-step-5 runs, measured in every configuration"),
    ],
)
globals().update(SPEC.check(globals()))
SPEC.table()

# %% [markdown]
# Defaults keep the chapter within the budget of a training chapter: context 128 instead of 1024, so that 41 runs
# of 800 steps (10 seeds for each of SGD step 5, SGD step 2 and AdamW, one canonical rank-one run, and 10 seeds of
# the perturbed rank-one start under AdamW), two at a time, fit in under three minutes on two cores. A context of 128 suffices for these claims because they are
# about the weights' structure, which the gradient sets through averages over positions (the same at any
# context); the context only changes the noise of each step. The paper's exact setting ($N = 1024$) is not
# a parameter set of this chapter (its claims were checked only at context 128, so the parameters cell refuses
# other contexts); the paper-scale runs are stored instead (section "At the paper's scale" below, made by
# `python tools/run_lowrank.py --workers 2`). Every run uses the
# package's `Trainer` (AdamW or SGD with warm-up and cosine schedule, fresh batches each step), side by side through
# `markovlib.transformer.runs.train_many` on one CPU thread each, which returns the weights every `track_every`
# steps; so each run is deterministic on a given machine; across machines the runs differ, which is why the
# claims are counted over seeds. The measurements (singular values, alignments, the held-out excess loss over the
# bigram predictor) are computed here with numpy and torch, not with the package.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

from markovlib.book import formatting, inference, plotting, report
from markovlib.book.glue import glue
from markovlib.book.sweep import record_results
from markovlib.markov.canonical import c_star
from markovlib.markov.chain import MarkovChain
from markovlib.transformer import drawings as transformer_drawings
from markovlib.transformer.model import MarkovTransformer
from markovlib.transformer.runs import train_many

plotting.use_style()
torch.set_num_threads(1)
chain = MarkovChain(p, q)
verified = report.Verification()
MATRICES = ["W_Q", "W_K", "W_V", "W_O", "W_1", "W_2", "positional"]
INV_PRINT = 1e-9  # printed bound of the rank-one invariance (float32 rounding: measured about 1e-12), under invariance_tol
EXCESS_PRINT = 2e-3  # printed bound of the rank-one run's excess loss, under excess_tol
snap_at = sorted({min(s, steps) for s in heatmap_steps} | {0, steps})
n_seeds = len(seeds)
cstar = c_star(p, q)
counts = {}  # claim over seeds -> number of seeds in which it held (for the figure and record_results)
print(f"chain p={p:g}, q={q:g}: entropy rate {formatting.fixed(chain.entropy_rate, 4)}, "
      f"H(pi) {formatting.fixed(chain.marginal_entropy, 4)}, c* = {formatting.fixed(cstar, 4)}")

# %% [markdown]
# The measurements are the chapter's own, with numpy and torch (independent references, not the package):

# %%
def top_fraction(W):
    """independent reference (do not replace with markovlib): s_1^2 / sum_i s_i^2 of a matrix, by numpy's SVD."""
    s = spectrum(W)
    return float(s[0] ** 2 / np.sum(s ** 2))


def excess_loss(model, seed):
    """independent reference (do not replace with markovlib): held-out loss of ``model`` minus the loss of the
    bigram predictor P(x_{n+1} | x_n) on the same sequences (paired, so the sampling noise of the held-out data
    nearly cancels; 0 at the global minimum, H(pi) - entropy rate at the unigram point)."""
    x = chain.sample(heldout_batches * batch, length + 1, seed=seed, backend="torch")
    ctx, target = x[:, :-1], x[:, 1:].to(torch.float64)
    model.eval()
    with torch.no_grad():
        logits = model(ctx).to(torch.float64)
    oracle = torch.where(ctx == 1, math.log((1 - q) / q), math.log(p / (1 - p))).to(torch.float64)
    return float(F.binary_cross_entropy_with_logits(logits, target)
                 - F.binary_cross_entropy_with_logits(oracle, target))


def spectrum(W):
    """independent reference (do not replace with markovlib): the singular values of a matrix, by numpy's SVD (NaN
    for a diverged run's non-finite weights, so that such a run fails every claim it enters)."""
    W = np.asarray(W, dtype=np.float64)
    if not np.all(np.isfinite(W)):
        return np.full(min(W.shape), np.nan)
    return np.linalg.svd(W, compute_uv=False)

# %% [markdown]
# Every run side by side (deterministic: the result does not depend on `workers`), with its weights at every
# `track_every` steps and at the heatmap snapshots (`lowrank.run_config` holds the knobs of a run):

# %%
snapshot_steps = sorted(set(range(0, steps + 1, track_every)) | set(snap_at))
shape = dict(p=p, q=q, d=d, length=length, batch=batch, steps=steps, init_std=init_std)
batched = {("sgd", s): lowrank.run_config(s, "standard", "sgd", lr_sgd, **shape) for s in seeds}
batched |= {("sgd_small", s): lowrank.run_config(s, "standard", "sgd", lr_sgd_small, **shape) for s in seeds}
batched |= {("adamw", s): lowrank.run_config(s, "standard", "adamw", lr_adamw, **shape) for s in seeds}
batched |= {("rank_one", seeds[0]): lowrank.run_config(seeds[0], "rank_one", "sgd", lr_sgd, **shape)}
batched |= {("pert_adamw", s): dict(lowrank.run_config(s, "rank_one", "adamw", lr_adamw, **shape), init_noise=pert_noise)
            for s in seeds}
done = dict(zip(batched, train_many(list(batched.values()), workers=workers, progress=True,
                                    snapshot_steps=snapshot_steps)))
n_diverged = sum(not all(np.all(np.isfinite(w)) for w in res["weights"].values()) for res in done.values())
print(f"runs whose weights diverged (non-finite; each fails every claim it enters): {n_diverged} of {len(done)}")

# %% [markdown]
# Each run is measured from its weight snapshots (the top fraction and $s_2/s_1$ of every matrix along training) and
# from its final weights (the fractions and the excess held-out loss, the model rebuilt from its weights):

# %%
runs = {}
for (kind, seed_), res in done.items():
    W = res["weights"]
    model = MarkovTransformer(d, length)
    with torch.no_grad():
        for k, prm in model.named_parameters():
            prm.copy_(torch.as_tensor(W[k]))
    track_steps = sorted(s for s in res["snapshots"] if s % track_every == 0 or s == steps)
    track = {"step": np.array(track_steps)}
    for k in MATRICES:
        sv = [spectrum(res["snapshots"][s][k]) for s in track_steps]
        track[k] = np.array([float(v[0] ** 2 / np.sum(v ** 2)) for v in sv])
        track[k + "/s2s1"] = np.array([float(v[1] / v[0]) for v in sv])
    runs[kind, seed_] = {"weights": W, "snaps": res["snapshots"], "track": track,
                         "fractions": {k: top_fraction(W[k]) for k in MATRICES},
                         "s2s1": {k: float(spectrum(W[k])[1] / spectrum(W[k])[0]) for k in MATRICES},
                         "excess": excess_loss(model, 1_000_003 + seed_)}

# %% [markdown]
# (sec-lr-gauss)=
# ## Gaussian start, SGD: the weights become rank one
#
# The first runs are the paper's: every weight $\sim \mathcal N(0, 0.001^2)$, plain SGD (no momentum, no weight
# decay, no clipping), 800 steps with a short warm-up and a cosine decay of the step size, once per seed.
#
# The canonical form being tested (Sec. 3 of the paper; derived in {doc}`canonical_model`): with $\alpha$ a unit vector and $u \ge 0$, $\|u\|^2 = 4$,
#
# $$
# e = e\,\alpha,\quad p_n = -\tfrac e2\,\alpha,\quad W_1 = |w|\,u\,\alpha^\top,\quad W_2 = w\,\alpha u^\top,\quad
# W_O W_V = v\,\alpha\alpha^\top .
# $$ (eq-lowrank-canonical-weights)

# %%
gauss = [runs["sgd", s] for s in seeds]
RANK_ONE_SGD = ["W_V", "W_O", "W_1", "W_2", "positional"]
frac_gauss = {k: np.array([r["fractions"][k] for r in gauss]) for k in MATRICES}
excess_gauss = np.array([r["excess"] for r in gauss])

# %% tags=["hide-input"]
claim = ("Gaussian init + SGD: W_V, W_O, W_1, W_2, positional end rank one (Fig. 3)")
flags = np.asarray(np.all([frac_gauss[k] > threshold for k in RANK_ONE_SGD], axis=0), dtype=bool).ravel()
counts[claim] = int(flags.sum())
print(f"{claim}: {glue('lr_sgd_rank1', formatting.fraction(counts[claim], flags.size))} seeds")
verified.record_count(claim, counts[claim], flags.size, rate=rate, check=(f"numpy SVD after {steps} steps: s_1^2/sum s_i^2 > {threshold:g} for all five, per seed"), kind="independent")
claim = ("Gaussian init + SGD: loss reaches the entropy rate")
flags = np.asarray(excess_gauss < excess_tol, dtype=bool).ravel()
counts[claim] = int(flags.sum())
print(f"{claim}: {glue('lr_sgd_loss', formatting.fraction(counts[claim], flags.size))} seeds")
_ = verified.record_count(claim, counts[claim], flags.size, rate=rate, check=(f"held-out loss minus the bigram predictor's on the same sequences < {excess_tol:g} nats"), kind="independent")

# %% [markdown]
# The shared direction: the top right singular vector of $W_1$ and $W_V$, the top left singular vector of $W_2$
# and $W_O$ and the common direction of the positional embeddings should all be $\pm e / \|e\|$ (`lowrank.min_alignment`), as in
# {eq}`eq-lowrank-canonical-weights`.

# %%
align_gauss = np.array([lowrank.min_alignment(r["weights"]) for r in gauss])

# %% tags=["hide-input"]
claim = ("one shared direction alpha = e/|e| (Fig. 6)")
flags = np.asarray(align_gauss > align_threshold, dtype=bool).ravel()
counts[claim] = int(flags.sum())
print(f"{claim}: {glue('lr_align', formatting.fraction(counts[claim], flags.size))} seeds")
_ = verified.record_count(claim, counts[claim], flags.size, rate=rate, check=(f"min over W_V, W_O, W_1, W_2, positional of |cos(e, top singular vector)| > {align_threshold:g}"), kind="independent")

# %% [markdown]
# The figure below reproduces the quantitative Fig. 3 (left) for the first seed, next to the same measurement for
# the rank-one start (Fig. 7, computed in the next section) and for the smaller SGD step of claim 3.

# %%
rank1 = runs["rank_one", seeds[0]]
small = [runs["sgd_small", s] for s in seeds]
fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), sharey=True)
transformer_drawings.fraction_panel(axes[0], gauss[0]["track"], f"Gaussian init, SGD lr {lr_sgd:g} (Fig. 3)", threshold)
transformer_drawings.fraction_panel(axes[1], rank1["track"], f"rank-one init, SGD lr {lr_sgd:g} (Fig. 7)", threshold)
transformer_drawings.fraction_panel(axes[2], small[0]["track"], f"Gaussian init, SGD lr {lr_sgd_small:g}", threshold)
axes[0].set_ylabel(r"energy in top component $s_1^2/\sum_i s_i^2$")
axes[2].legend(loc="lower right", ncol=2)
fig.suptitle(f"Fraction of energy in the top singular component across iterations (seed {seeds[0]})")
plt.show()

# %% [markdown]
# The qualitative Fig. 6: heatmaps of $W_V$ and $W_1^\top$ of the first seed at the start, early and at the end.
# At the start they are noise; at the end each is an outer product whose $\alpha$ factor repeats the sign pattern
# of $e$ (shown on the left of each row, rescaled to the colour range).

# %%
transformer_drawings.weight_heatmaps(gauss[0]["snaps"], snap_at, steps,
                                     f"Gaussian init, SGD: weights become outer products along e (Fig. 6, seed {seeds[0]})")
plt.show()

# %% [markdown]
# (sec-lr-stays)=
# ## A rank-one start stays rank one
#
# ```{prf:proposition} SGD preserves the canonical rank-one manifold
# :label: prop-rank-one-invariant
# :nonumber:
#
# Let every weight have the canonical form {eq}`eq-lowrank-canonical-weights` along the same $\alpha$, with
# $W_Q, W_K, W_V, W_O \in \operatorname{span}\{\alpha\alpha^\top\}$ and $u > 0$ entrywise. Then the gradient of
# the loss with respect to every weight lies in the same span: $e$ and every $p_n$ along $\alpha$, $W_1$ along
# $u\alpha^\top$, $W_2$ along $\alpha u^\top$, the attention matrices along $\alpha\alpha^\top$. Hence every SGD
# step (and every step of any optimizer whose update is a scalar multiple of the gradient) stays on the manifold.
# ```
#
# *Proof.* On the manifold every residual stream is a multiple of $\alpha$: $x_n = e(x_n - \frac12)\alpha$;
# attention mixes values $W_V x_i \propto \alpha$ and adds $W_O(\cdot) \propto \alpha$; $W_1 y_n \propto u$, so
# the ReLU either passes $W_1 y_n$ whole or kills it ($u > 0$), and $W_2 \mathrm{ReLU}(\cdot) \propto \alpha$.
# Backwards, the loss reaches $z_n$ only through the tied head $\langle e, z_n\rangle$, so
# $\partial L/\partial z_n = \delta_n e \propto \alpha$ with $\delta_n = \sigma(\text{logit}_n) - x_{n+1}$. Then
# $\partial L/\partial W_2 = \sum_n \delta_n\, e\, \mathrm{ReLU}(W_1 y_n)^\top \propto \alpha u^\top$;
# $\partial L / \partial W_1 = \sum_n (\mathbb 1[W_1 y_n > 0] \odot W_2^\top e\,\delta_n)\, y_n^\top \propto u\alpha^\top$
# because $W_2^\top e \propto u$; $\partial L/\partial y_n \propto \alpha$, so the attention gradients
# $\partial L/\partial W_O = \sum_n (\partial L/\partial y_n)(\text{attended value})^\top$ and those of
# $W_V, W_Q, W_K$ (outer products of vectors along $\alpha$) are multiples of $\alpha\alpha^\top$; finally
# $\partial L/\partial x_n$ is a sum of terms along $\alpha$ (the head, the residual paths, $W_1^\top(\cdot)$,
# $W_Q^\top, W_K^\top, W_V^\top$ applied to vectors), so the gradients of $e$ and $p_n$ are along $\alpha$. A
# gradient step adds these to weights of the same form; $u > 0$ is kept as long as the $u$-coefficient of $W_1$
# keeps its sign. $\square$
#
# The positional rows then move independently (different scalars along the same $\alpha$), which is why the
# positional *matrix* stays rank one rather than keeping $p_n = -\frac e2\alpha$ exactly. This is a statement
# about every step, not a chaotic outcome, so one seed suffices; numerically, in float32:

# %%
dev_rank1 = max(float(np.max(1 - rank1["track"][k])) for k in MATRICES)
alpha0 = rank1["snaps"][0]["embedding"] / np.linalg.norm(rank1["snaps"][0]["embedding"])
e_end = rank1["weights"]["embedding"]
drift = float(1 - abs(alpha0 @ e_end) / np.linalg.norm(e_end))
print(f"max over the run and the 7 matrices of 1 - s_1^2/sum s_i^2: {formatting.bound(dev_rank1, INV_PRINT)}")
print(f"direction of e: 1 - |cos(e_0, e_end)| = {formatting.bound(drift, INV_PRINT)}")
print(f"excess held-out loss over the bigram predictor: {formatting.bound(rank1['excess'], EXCESS_PRINT)} nats")

# %% tags=["hide-input"]
verified.record("rank-one init stays rank one along the same alpha (Fig. 7)",
                formatting.within(dev_rank1, invariance_tol) and formatting.within(drift, invariance_tol),
                check=f"numpy SVD every {track_every} steps; cos of e with its start",
                measured=formatting.bound(max(dev_rank1, drift), INV_PRINT), tolerance=f"{invariance_tol:g}",
                kind="independent")
_ = verified.record("rank-one init + SGD: loss reaches the entropy rate", rank1["excess"] < excess_tol,
                    check="held-out loss minus the bigram predictor's on the same sequences",
                    measured=formatting.bound(rank1["excess"], EXCESS_PRINT), tolerance=f"{excess_tol:g} nats",
                    kind="independent")
_ = glue("lr_inv", formatting.bound(max(dev_rank1, drift), INV_PRINT))

# %%
transformer_drawings.weight_heatmaps(rank1["snaps"], snap_at, steps,
                                     "Rank-one init, SGD: every snapshot is an outer product (Fig. 7)")
plt.show()

# %% [markdown]
# (sec-lr-why)=
# ## Why the Gaussian start becomes rank one, and when it does not
#
# The proof above also explains the Gaussian case. Whatever the weights, the loss reaches $z_n$ only through
# $\langle e, z_n \rangle$, so $\partial L/\partial W_2 = e \sum_n \delta_n \mathrm{ReLU}(W_1 y_n)^\top$ has column
# space $\operatorname{span}\{e\}$ at every step, and the other gradients inherit directions from $e$ and the
# positional rows in the same way. Once the direction of $e$ settles, every update is (close to) an outer product
# with factor $e/\|e\|$. A matrix becomes rank one when the sum of these updates outgrows its random start,
# here of Frobenius norm about $0.001\sqrt{\text{entries}}$.
#
# Whether the updates are large is a question of dynamics, not of structure. For $p + q < 1$ the canonical
# model has a global minimum on the $e$-axis: with $w = 0$ the logit is $e^2 x_n - e^2/2 + b$, optimal when
# $e^2 = c^* = \log\frac{(1-p)(1-q)}{pq}$ ({prf:ref}`Thm 8 <thm-8>`: an initialization with $w_0 = 0$ flows there). From a tiny
# Gaussian start the embedding is the only weight whose gradient is not a product of two tiny weights, so it
# grows first; if it reaches $|e|^2 \approx c^*$ before the feed-forward and attention weights have grown, the
# loss is already minimal, the mean gradient vanishes, and those weights stay where they started. Only a large
# step (or a long run) keeps feeding them through the gradient noise until the rank-one part dominates. The
# same mechanism predicts the chain dependence of the Range statement: a smaller $c^*$ is reached sooner. The
# third panel of the figure above is the small-step case; over the seeds:

# %%
frac_small = {k: np.array([r["fractions"][k] for r in small]) for k in MATRICES}
excess_small = np.array([r["excess"] for r in small])
e2_small = np.array([float(r["weights"]["embedding"] @ r["weights"]["embedding"]) for r in small])
s2s1_sgd = {k: np.array([r["s2s1"][k] for r in gauss]) for k in MATRICES}

# %% tags=["hide-input"]
claim = ("smaller step: entropy rate reached with W_1, W_2 still random")
flags = np.asarray((excess_small < excess_tol) & (frac_small["W_1"] < random_threshold) & (frac_small["W_2"] < random_threshold), dtype=bool).ravel()
counts[claim] = int(flags.sum())
print(f"{claim}: {glue('lr_small_random', formatting.fraction(counts[claim], flags.size))} seeds")
verified.record_count(claim, counts[claim], flags.size, rate=rate, check=(f"lr {lr_sgd_small:g}: excess loss < {excess_tol:g} nats and W_1, W_2 fractions < {random_threshold:g}"), kind="independent")
claim = ("smaller step: |e|^2 = c* (global minimum on the e-axis, Thm 8)")
flags = np.asarray(np.abs(e2_small / cstar - 1) < e2_rtol, dtype=bool).ravel()
counts[claim] = int(flags.sum())
print(f"{claim}: {glue('lr_small_e2', formatting.fraction(counts[claim], flags.size))} seeds")
verified.record_count(claim, counts[claim], flags.size, rate=rate, check=(f"lr {lr_sgd_small:g}: | |e|^2 / c* - 1 | < {e2_rtol:g}, c* in closed form"), kind="independent")
claim = (f"SGD (lr {lr_sgd:g}): W_Q, W_K stay far from rank one")
flags = np.asarray((s2s1_sgd["W_Q"] > qk_ratio) & (s2s1_sgd["W_K"] > qk_ratio), dtype=bool).ravel()
counts[claim] = int(flags.sum())
print(f"{claim}: {glue('lr_qk_far', formatting.fraction(counts[claim], flags.size))} seeds")
_ = verified.record_count(claim, counts[claim], flags.size, rate=rate, check=(f"s2/s1 of both > {qk_ratio:g} after {steps} steps (the softmax scores barely change the loss "
      "on a first-order chain)"), kind="independent")

# %% [markdown]
# (sec-lr-adam)=
# ## The hypercube is Adam's
#
# The paper reports that the shared direction has all entries equal in magnitude, $\alpha \in \{\pm1\}^d/\sqrt d$,
# and the canonical analysis starts from it. Its Sec. 5.1 trains with SGD ("train them using SGD on a batch size
# B = 16 and for t = 800 iterations … the embedding vector has all entries in [M] up to a scaling") and does not
# state the step size; the SGD step sizes of this chapter are the book's choice, and at them SGD does not reach the
# hypercube. So the difference below is one of step size and optimizer at these settings, not a contradiction of the
# paper's observation. Under SGD the direction of $e$ inherits the shape of the random start
# (the gradient of $e$ is, to first order, proportional to $e$ and the positional embeddings, not to a sign
# pattern). AdamW divides each coordinate's step by a running estimate of its own gradient magnitude, so every
# coordinate of a coherently growing vector moves by about the learning rate per step, whatever its size: after a
# few hundred steps all entries have the same magnitude. The same runs with AdamW (the authors' code) show it,
# and show which matrices AdamW makes rank one.

# %%
adam = [runs["adamw", s] for s in seeds]
frac_adam = {k: np.array([r["fractions"][k] for r in adam]) for k in MATRICES}
excess_adam = np.array([r["excess"] for r in adam])
flat = {"SGD": np.array([lowrank.flatness(r["weights"]["embedding"]) for r in gauss]),
        "AdamW": np.array([lowrank.flatness(r["weights"]["embedding"]) for r in adam])}
RANK_ONE_ADAM = ["W_Q", "W_K", "W_1", "W_2", "positional"]
s2s1_adam = {k: np.array([r["s2s1"][k] for r in adam]) for k in MATRICES}
s2s1_gauss = {k: np.array([r["s2s1"][k] for r in gauss]) for k in MATRICES}
vo = np.maximum(s2s1_adam["W_V"], s2s1_adam["W_O"])  # the farther of W_V, W_O from rank one, per seed
ffn = np.maximum(s2s1_adam["W_1"], s2s1_adam["W_2"])

# %% tags=["hide-input"]
claim = ("AdamW: embedding on the hypercube {+-1}^d")
flags = np.asarray(flat["AdamW"] > flat_threshold, dtype=bool).ravel()
counts[claim] = int(flags.sum())
print(f"{claim}: {glue('lr_hyper_adam', formatting.fraction(counts[claim], flags.size))} seeds")
verified.record_count(claim, counts[claim], flags.size, rate=rate, check=(f"min_i |e_i| / max_i |e_i| > {flat_threshold:g}"), kind="independent")
claim = ("SGD: embedding not on the hypercube")
flags = np.asarray(flat["SGD"] < sgd_flat_max, dtype=bool).ravel()
counts[claim] = int(flags.sum())
print(f"{claim}: {glue('lr_hyper_sgd', formatting.fraction(counts[claim], flags.size))} seeds")
verified.record_count(claim, counts[claim], flags.size, rate=rate, check=(f"min_i |e_i| / max_i |e_i| < {sgd_flat_max:g}"), kind="independent")
claim = ("AdamW: W_Q, W_K, W_1, W_2, positional rank one, loss at the entropy rate")
flags = np.asarray(np.all([frac_adam[k] > threshold for k in RANK_ONE_ADAM], axis=0) & (excess_adam < excess_tol), dtype=bool).ravel()
counts[claim] = int(flags.sum())
print(f"{claim}: {glue('lr_adam_rank1', formatting.fraction(counts[claim], flags.size))} seeds")
verified.record_count(claim, counts[claim], flags.size, rate=rate, check=(f"fractions > {threshold:g}; excess loss < {excess_tol:g} nats"), kind="independent")
claim = (f"AdamW: W_V, W_O end farther from rank one than W_1, W_2 (s2/s1 at least {vo_factor:g} times)")
flags = np.asarray(np.minimum(s2s1_adam["W_V"], s2s1_adam["W_O"]) > vo_factor * ffn, dtype=bool).ravel()
counts[claim] = int(flags.sum())
print(f"{claim}: {glue('lr_vo_farther', formatting.fraction(counts[claim], flags.size))} seeds")
_ = verified.record_count(claim, counts[claim], flags.size, rate=rate, check=(f"numpy SVD of the final weights: s2/s1 of W_V and of W_O > {vo_factor:g} x max(s2/s1 of W_1, W_2), "
      "per seed (no rank-one threshold)"), kind="independent")

# %% tags=["hide-input"]
sweep_live = {m: np.array([np.sum(frac_adam[m] > t) for t in sweep_thresholds]) for m in ("W_V", "W_O", "W_1", "W_2")}
k_ffn_strict = int(np.sum((frac_adam["W_1"] > max(sweep_thresholds)) & (frac_adam["W_2"] > max(sweep_thresholds))))
glue("lr_sweep_ffn_strict", formatting.fraction(k_ffn_strict, n_seeds))
print(f"AdamW: W_1 and W_2 both above the strictest threshold {max(sweep_thresholds):g} in "
      f"{formatting.fraction(k_ffn_strict, n_seeds)} seeds")

# %% [markdown]
# The trained token embedding of the first seed under both optimizers:

# %%
fig, ax = plt.subplots(figsize=(6.4, 3.4))
idx = np.arange(d)
for off, (name, group, color) in zip((-0.2, 0.2), (("SGD", gauss, plotting.MAXIMA), ("AdamW", adam, plotting.NEUTRAL))):
    e = group[0]["weights"]["embedding"]
    ax.bar(idx + off, e * np.sqrt(d) / np.linalg.norm(e), width=0.4, color=color,
           label=f"{name}: $\\sqrt{{d}}\\, e/\\|e\\|$")
ax.axhline(1, color=plotting.NEUTRAL, lw=0.8, ls=":")
ax.axhline(-1, color=plotting.NEUTRAL, lw=0.8, ls=":")
ax.set_xlabel("coordinate i")
ax.set_ylabel("normalized entry")
ax.set_title(f"Trained token embedding (seed {seeds[0]}): the hypercube appears under AdamW only")
ax.legend()
plt.show()

# %% [markdown]
# Under AdamW, $W_V$ and $W_O$ end *nearly* rank one, and how nearly depends on the seed: their ratio $s_2/s_1$ of the two largest singular values stops at least 5 times
# farther from 0 than that of $W_1$, $W_2$ ({glue:text}`lr_vo_farther` seeds), spread over the seeds. Whether
# that counts as "rank one" depends on the threshold, so we report the ratio along training and a sweep of
# thresholds rather than one threshold. (An earlier version claimed "$W_V$ rank one under AdamW" from one seed,
# and a later one "not reliably rank one" from one threshold, 0.99, that the stored AdamW fractions of $W_V$,
# {glue:text}`lr_stored_wv_fracs`, straddle.)
#
# **Rank one, or nearly?** Whether a matrix "is rank one" depends on the threshold: the top fraction
# $s_1^2/\sum_i s_i^2$ compresses everything near 1. The ratio $s_2/s_1$ of the two largest singular values does
# not (it is 0 for a rank-one matrix, and $1 - s_1^2/\sum s_i^2 \ge (s_2/s_1)^2\, s_1^2/\sum s_i^2$), so the next
# figure follows it along training for every seed (left, middle): under AdamW, $W_1$ and $W_2$ fall to a few
# thousandths, while $W_V$ and $W_O$ stop an order of magnitude or more above them, at values that spread over the
# seeds. The right panel is the threshold sweep: the fraction of seeds whose final top fraction exceeds each
# threshold. $W_1$ and $W_2$ pass even the strictest one ({glue:text}`lr_sweep_ffn_strict` seeds); for $W_V$ and
# $W_O$ the count of seeds depends on where the threshold sits, so a single threshold would decide the verdict.
# These per-seed values are chaotic (they change from machine to machine); the claim above, a comparison within
# each seed, keeps a wide margin.

# %%
fig, axes = plt.subplots(1, 3, figsize=(17, 4.0), layout="constrained", gridspec_kw={"width_ratios": [1, 1, 0.9]})
for ax, (name, group) in zip(axes[:2], ((f"SGD, step {lr_sgd:g}", gauss), ("AdamW", adam))):
    for m, color in (("W_V", "tab:blue"), ("W_O", "tab:purple"), ("W_1", "tab:orange"), ("W_2", "tab:brown")):
        for j, r in enumerate(group):
            ax.plot(r["track"]["step"], r["track"][m + "/s2s1"], color=color, lw=0.8, alpha=0.6,
                    label=m if j == 0 else None)
    ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_title(f"{name}: $s_2/s_1$ along training, {n_seeds} seeds", fontsize=10)
axes[0].set_ylabel(r"$s_2 / s_1$")
axes[1].legend(loc="lower left")
cx = axes[2]
for m, color in (("W_V", "tab:blue"), ("W_O", "tab:purple"), ("W_1", "tab:orange"), ("W_2", "tab:brown")):
    cx.plot(range(len(sweep_thresholds)), sweep_live[m] / n_seeds, "o-", color=color, label=f"{m} (context {length})")
cx.set_xticks(range(len(sweep_thresholds)), [f"{t:g}" for t in sweep_thresholds])
cx.set_xlabel(r"threshold on $s_1^2/\sum_i s_i^2$")
cx.set_ylabel("fraction of seeds above it")
cx.set_ylim(-0.03, 1.03)
cx.set_title("AdamW: threshold sweep of the final fractions", fontsize=10)
cx.legend(loc="lower left", fontsize=8)
plt.show()

# %% [markdown]
# Every seed, every matrix: the final top-component fraction of each run (left), and for each claim the fraction
# of seeds in which it held with its 95 % Wilson interval (right; dashed: `rate`, which a claim's one-sided lower
# end must exceed). These per-seed values are chaotic: they change from machine to machine, while the claims keep
# wide margins.

# %%
fig, (ax, bx) = plt.subplots(1, 2, figsize=(13.5, 4.4), gridspec_kw={"width_ratios": [1.1, 1]}, layout="constrained")
for j, (name, fr, color, off) in enumerate((("SGD lr %g" % lr_sgd, frac_gauss, plotting.MAXIMA, -0.22),
                                            ("SGD lr %g" % lr_sgd_small, frac_small, plotting.SADDLE, 0.0),
                                            ("AdamW", frac_adam, plotting.NEUTRAL, 0.22))):
    for i, k in enumerate(MATRICES):
        ax.scatter(np.full(n_seeds, i + off), fr[k], s=14, color=color, label=name if i == 0 else None)
ax.axhline(threshold, color=plotting.NEUTRAL, lw=0.8, ls="--")
ax.set_xticks(range(len(MATRICES)), MATRICES)
ax.set_ylim(0, 1.03)
ax.set_ylabel(r"final $s_1^2/\sum_i s_i^2$")
ax.set_title(f"Final fractions, {n_seeds} seeds per optimizer")
ax.legend(loc="lower left")
names = list(counts)
k_arr = np.array([counts[c] for c in names])
lo, hi = inference.wilson_interval(k_arr, np.full(len(names), n_seeds))
frac_held = k_arr / n_seeds
bx.errorbar(frac_held, np.arange(len(names)), xerr=np.clip([frac_held - lo, hi - frac_held], 0, None), fmt="o",
            color=plotting.NEUTRAL, capsize=3)
bx.axvline(rate, color=plotting.NEUTRAL, ls="--", lw=0.8)
bx.set_yticks(range(len(names)), [n if len(n) < 44 else n[:42] + "..." for n in names], fontsize=7)
bx.invert_yaxis()
bx.set_xlim(-0.02, 1.02)
bx.set_xlabel("fraction of seeds in which it held (95 % Wilson interval)")
bx.set_title("Claims over seeds")
plt.show()

# %% [markdown]
# (sec-lr-stored)=
# ## At the paper's scale: stored runs, several seeds and step sizes
#
# The runs above use a reduced context (`length`, 128 at the defaults). At the paper's scale ($N = 1024$, 800 steps, $d = 8$, batch 16, every
# Gaussian weight $\mathcal N(0, 0.001^2)$, chain $p = 0.2$, $q = 0.3$) a run takes minutes, so the runs were made
# once, through the package's command line, and their results are committed under `book/data/lowrank/`:
#
# ```
# python tools/run_lowrank.py --workers 2                                   # seeds 0 to 2
# python tools/run_lowrank.py --workers 2 --seeds 3-9 --tag seeds3_9        # seeds 3 to 9, a second part
# python tools/run_lowrank.py --workers 2 --seeds 10-19 --tag seeds10_19     # seeds 10 to 19, a third part
# python tools/run_lowrank.py --workers 2 --seeds 0-9 --noise 1e-5 --tag perturbed   # the perturbed rank-one start
# python tools/run_lowrank.py --workers 2 --seeds 10-19 --noise 1e-5 --tag perturbed10_19   # ... seeds 10 to 19
# ```
#
# writes `curves.csv` (every 20 steps: the held-out loss on 2 batches and the top fraction of every matrix),
# `final.csv` (from the final weights: the fractions, the alignment of the top singular vectors with $e$, and the
# flatness $\min_i |e_i| / \max_i |e_i|$ of $e$) and `manifest.json` (every command, the seeds, the versions).
# Three initializations: the tiny Gaussian start of the paper; **the authors' random rank-one start** as
# described for their experiments ($\alpha$ random in $\{\pm1\}^d/\sqrt d$, $e = |0.1 z|\,\alpha$ with
# $z \sim \mathcal N(0, 1)$, $W_V$, $W_O$, $W_1$, $W_2$ rank one along $\alpha$ with independent random factors,
# the rest Gaussian; their posted code names a `lowrank` init but does not implement it, so this is our reading,
# `init="authors_rank_one"`); and the exact canonical manifold of the proposition above. Optimizers: plain SGD at
# step sizes 2 and 5 (the paper gives none) and AdamW as in the authors' code. Seeds 0 to 19, in three parts (each
# with its manifest; `markovlib.book.stored.read_parts` checks their checksums, that their seeds are disjoint and that
# they agree on the chain, the optimizers and the initializations).
#
# This section reads stored data, so it does not depend on the chapter's `p`, `q` or `length`. With {glue:text}`lr_n_stored` stored seeds
# per initialization and optimizer, the counts that the text states as results are verified claims over seeds
# (`record_count`: the one-sided Wilson lower end of the rate exceeds `rate`, Bonferroni over the
# {glue:text}`lr_stored_family` stored claims of this section). The claims and their thresholds were chosen after seeds
# 0 to 9 had been read (the SGD subset of the perturbed claim is the matrices that came back in all of those seeds)
# and before seeds 10 to 19 were run; on seeds 10 to 19 alone they hold in: {glue:text}`lr_later`; the other counts (per matrix, the threshold sweep) are
# printed with their intervals. Verified without a statistic over seeds: that the canonical manifold stays rank one
# in every stored run, and that a re-executed slice reproduces the stored curves.
#
# **At the paper's scale** ($N = 1024$), stored runs with twenty seeds per setting show the same picture: SGD at
# step 5 makes the five matrices rank one in {glue:text}`lr_stored_sgd5`, AdamW puts $e$ on the hypercube in
# {glue:text}`lr_stored_hyper_adam` and SGD does not in {glue:text}`lr_stored_hyper_sgd`; under AdamW the stable
# rank $\sum_i s_i^2/s_1^2$ of $W_V$ and $W_O$ ends at most {glue:text}`lr_stored_srank`
# ({glue:text}`lr_stored_s2s1_bound`). A canonical rank-one start pushed off the manifold by noise of size
# {glue:text}`lr_noise` returns toward stable rank 1 (its $1 - s_1^2/\sum_i s_i^2$ shrinks by at least `noise_back`)
# under AdamW in these seeds per matrix: {glue:text}`lr_pert_back_adamw`; it does so because the rank-one part grows,
# not because the noise is removed (an outside review's re-runs, below). Over the 20 stored seeds these are
# verified claims (rate above `rate`, Bonferroni over the {glue:text}`lr_stored_family` stored claims; chosen after
# seeds 0 to 9 had been read and before seeds 10 to 19 were run), except the per-matrix counts, which are printed.

# %%
# every part (seeds 0-2, 3-9, 10-19), each file against its manifest's sha256
SAME = ["chain", "optimizers", "inits"]
final, lr_parts = stored.read_parts(DATA, stored.PARTS["lowrank"], same=SAME, file="final")
curves, _ = stored.read_parts(DATA, stored.PARTS["lowrank"], same=SAME, file="curves")
manifest = lr_parts[0]
stored_seeds = sorted(int(s) for s in final.seed.unique())
n_stored = len(stored_seeds)
glue("lr_n_stored", str(n_stored))
STORED_CLAIMS = 5  # the stored claims of this section (three here, two on the perturbed start): Bonferroni over them
glue("lr_stored_family", str(STORED_CLAIMS))
print(f"stored: {sum(len(m['runs']) for m in lr_parts)} runs in {len(lr_parts)} parts, chain {manifest['chain']}, "
      f"seeds {stored_seeds[0]} to {stored_seeds[-1]}, torch {manifest['versions']['torch']}, one thread")

# %% [markdown]
# Per initialization and optimizer, the seeds in which each matrix ends rank one, $e$ on the hypercube, and the top singular vectors aligned with $e$ (`lowrank.seeds_where`):

# %%
table = {}
for (init, opt), _ in final.groupby(["init", "optimizer"], sort=False):
    row = {}
    for m in MATRICES:
        k, n = lowrank.seeds_where(final, init, opt, lambda r: r[f"fraction_{m}"] > threshold)
        row[m] = f"{k}/{n}"
    k, n = lowrank.seeds_where(final, init, opt, lambda r: r["flatness"] > flat_threshold)
    row["hypercube"] = f"{k}/{n}"
    k, n = lowrank.seeds_where(final, init, opt, lambda r: min(r[f"alignment_{m}"] for m in ("W_V", "W_O", "W_1", "W_2"))
                               > align_threshold)
    row["aligned with e"] = f"{k}/{n}"
    table[f"{init}, {opt}"] = row
print(f"seeds in which each matrix ends rank one (fraction > {threshold:g}), e ends on the hypercube "
      f"(flatness > {flat_threshold:g}) and W_V, W_O, W_1, W_2 align with e (|cos| > {align_threshold:g}):")
print(pd.DataFrame(table).T.to_string())

# %% [markdown]
# How to read the table (the counts are the stored runs', so they print the same everywhere). From the Gaussian start the picture of the reduced-context runs holds at the paper's scale: SGD with the larger step makes $W_V$, $W_O$, $W_1$, $W_2$ and the positional matrix rank one along $e$ in most seeds (the table gives the count per matrix), but not $W_Q$, $W_K$; the smaller step makes none of them rank one (the embedding alone reaches the $e$-axis minimum first); AdamW makes $W_Q$, $W_K$, $W_1$, $W_2$ and the positional matrix rank one at every threshold of the sweep, while whether $W_V$, $W_O$ pass depends on the threshold (the sweep below), and only AdamW puts $e$ on the hypercube. The authors' random rank-one start is already on the hypercube and already rank one in $W_V$, $W_O$, $W_1$, $W_2$; SGD keeps those rank one (though the start is off the canonical manifold) and at the larger step the positional matrix joins them, while $W_Q$, $W_K$ stay random; under AdamW every matrix ends rank one. The exact canonical manifold stays rank one under both optimizers: for SGD by the proposition above; for AdamW because every gradient on the manifold is an outer product with $\alpha$ as a factor ($x\alpha^\top$ or $\alpha y^\top$), and with $\alpha$ on the hypercube Adam's coordinate-wise step of such a matrix is, up to a factor common to all entries (and Adam's $\epsilon$), $\operatorname{sign}(x)\,\alpha^\top$ or $\alpha\operatorname{sign}(y)^\top$: again along $\alpha$.

# %% [markdown]
# What the paper-scale runs say, as counts over the stored seeds with the Wilson intervals whose lower ends decide
# the claims (Bonferroni over the stored claims; the thresholds are the parameters cell's):

# %% tags=["hide-input"]
Z_STORED = inference.wilson_lower_z(0.05, STORED_CLAIMS)  # the interval whose lower end decides a stored claim
STORED_TESTS = {
    "lr_stored_sgd5": ("Gaussian start, SGD step 5: W_V, W_O, W_1, W_2, positional fractions > threshold",
                       ("standard", "sgd_5", lambda r: all(r[f"fraction_{m}"] > threshold for m in RANK_ONE_SGD))),
    "lr_stored_hyper_adam": (f"Gaussian start, AdamW: flatness > {flat_threshold:g} (hypercube)",
                             ("standard", "adamw", lambda r: r["flatness"] > flat_threshold)),
    "lr_stored_hyper_sgd": (f"Gaussian start, SGD step 5: flatness < {sgd_flat_max:g} (not the hypercube)",
                            ("standard", "sgd_5", lambda r: r["flatness"] < sgd_flat_max)),
}
stored_counts, later = {}, {}
for name, (text, (init, opt, flags)) in STORED_TESTS.items():
    k, n = lowrank.seeds_where(final, init, opt, flags)
    stored_counts[name] = (text, lowrank.count_text(k, n, Z_STORED))
    later[name] = lowrank.later_count(final, init, opt, flags)
    print(f"N = 1024, {text}: {glue(name, stored_counts[name][1])}")
    verified.record_count(f"paper scale, {text}", k, n, rate=rate, family=STORED_CLAIMS,
                          check=f"stored final.csv, every stored seed of ({init}, {opt})", kind="stored data")

# %% [markdown]
# The canonical rank-one start, every stored run, under both optimizers:

# %% tags=["hide-input"]
inv = final[final["init"] == "rank_one"]
dev_stored = float(max(1 - inv[f"fraction_{m}"].min() for m in MATRICES))
sgd_inv = final[(final["init"] == "rank_one") & (final["optimizer"] == "sgd_5")]
dev_stored_sgd = float(max(1 - sgd_inv[f"fraction_{m}"].min() for m in MATRICES))
print(f"N = 1024, canonical rank-one start, SGD: max over seeds and matrices of 1 - fraction "
      f"{formatting.bound(dev_stored_sgd, INV_PRINT)}")
verified.record("paper scale: the canonical rank-one start stays rank one under SGD (Fig. 7), every stored run",
                formatting.within(dev_stored_sgd, invariance_tol),
                check="stored final fractions of every matrix, every stored seed (a property of each run)",
                measured=formatting.bound(dev_stored_sgd, INV_PRINT), tolerance=f"{invariance_tol:g}",
                kind="stored data")
adam_inv = final[(final["init"] == "rank_one") & (final["optimizer"] == "adamw")]
dev_stored_adam = float(max(1 - adam_inv[f"fraction_{m}"].min() for m in MATRICES))
print(f"N = 1024, canonical rank-one start, AdamW: max over seeds and matrices of 1 - fraction "
      f"{formatting.bound(dev_stored_adam, INV_PRINT)}")
_ = verified.record("paper scale: the canonical rank-one start stays rank one under AdamW, every stored run",
                    len(adam_inv) > 0 and formatting.within(dev_stored_adam, invariance_tol),
                    check=f"stored final fractions of every matrix, every stored seed ({len(adam_inv)} runs; the "
                          "hypercube argument below)",
                    measured=formatting.bound(dev_stored_adam, INV_PRINT), tolerance=f"{invariance_tol:g}",
                    kind="stored data")

# %% [markdown]
# **$W_V$ and $W_O$ under AdamW at the paper's scale.** The stored runs record only the top fraction
# $f = s_1^2/\sum_i s_i^2$ of each matrix (in `curves.csv` every 20 steps, and in `final.csv`), not the singular
# values. That is enough for two things: the *stable rank* $\sum_i s_i^2 / s_1^2 = 1/f$ exactly (1 for a rank-one
# matrix), and an upper bound on the second singular value, $s_2/s_1 \le \sqrt{(1 - f)/f}$ (informative only for
# $f > 1/2$: below that it exceeds 1, which $s_2/s_1$ never does). It is not enough for
# $s_2/s_1$ itself, or for any measure of the rest of the spectrum (an entropy effective rank): those need the
# stored weights, which the paper-scale issue will keep. The stored fractions of $W_V$ under AdamW straddle the
# strict threshold 0.99, so instead of one threshold we print the sweep and draw the stable rank along training:

# %%
adam_stored = final[(final["init"] == "standard") & (final["optimizer"] == "adamw")]
glue("lr_stored_wv_fracs", f"from {formatting.fixed(adam_stored.fraction_W_V.min(), 3)} to "
            f"{formatting.fixed(adam_stored.fraction_W_V.max(), 3)}, median {formatting.fixed(adam_stored.fraction_W_V.median(), 3)}")
sweep_stored = {m: [formatting.fraction(int(np.sum(adam_stored[f"fraction_{m}"] > t)), len(adam_stored))
                    for t in sweep_thresholds] for m in ("W_V", "W_O", "W_1", "W_2")}
print("threshold sweep, AdamW, stored runs (N = 1024): seeds whose final fraction exceeds the threshold")
print(pd.DataFrame(sweep_stored, index=[f"> {t:g}" for t in sweep_thresholds]).to_string())
bound_vo = float(np.max(np.sqrt((1 - adam_stored[["fraction_W_V", "fraction_W_O"]].to_numpy())
                                / adam_stored[["fraction_W_V", "fraction_W_O"]].to_numpy())))
srank_vo = float(np.max(1 / adam_stored[["fraction_W_V", "fraction_W_O"]].to_numpy()))
n_below_half = int((adam_stored[["fraction_W_V", "fraction_W_O"]].min(axis=1) < 0.5).sum())
# s2/s1 <= sqrt((1 - f)/f) says something only while it is below 1, i.e. for f > 1/2 in every seed
s2s1_text = (f"so s_2/s_1 <= {formatting.fixed(bound_vo, 2)} in every seed" if bound_vo < 1 else
             f"in {formatting.fraction(n_below_half, len(adam_stored))} seeds W_V or W_O ends with top fraction below 1/2, "
             "where the bound on s_2/s_1 says nothing: there the matrix is far from rank one")
print(f"final stable rank 1/f of W_V, W_O, largest over the stored seeds: {formatting.fixed(srank_vo, 3)}; {s2s1_text}")
glue("lr_stored_srank", formatting.fixed(srank_vo, 3))
glue("lr_stored_s2s1_bound", s2s1_text)
n_adam = len(adam_stored)
_ = glue("lr_stored_vo_far", f"W_V has top fraction above 0.9 in "
            f"{formatting.fraction(int((adam_stored.fraction_W_V > 0.9).sum()), n_adam)} stored seeds, above 0.99 in "
            f"{formatting.fraction(int((adam_stored.fraction_W_V > 0.99).sum()), n_adam)}, and W_V or W_O is below 1/2 in "
            f"{formatting.fraction(n_below_half, n_adam)}")

# %%
fig, ax = plt.subplots(figsize=(7.5, 3.8))
c_adam = curves[(curves["init"] == "standard") & (curves["optimizer"] == "adamw")]
for m, color in (("W_V", "tab:blue"), ("W_O", "tab:purple"), ("W_1", "tab:orange"), ("W_2", "tab:brown")):
    for j, (s_, g) in enumerate(c_adam.groupby("seed")):
        ax.plot(g["step"], 1 / g[f"top_fraction_{m}"] - 1, color=color, lw=1.0, alpha=0.7, label=m if j == 0 else None)
ax.set_yscale("log")
ax.set_xlabel("iteration")
ax.set_ylabel(r"stable rank $- 1$ $= \sum_{i \geq 2} s_i^2 / s_1^2$")
ax.set_title(f"N = 1024, Gaussian start, AdamW (stored, {len(adam_stored)} seeds)")
ax.legend(loc="upper right", ncol=2)
plt.show()

# %% [markdown]
# **A rank-one start pushed off the manifold.** The proposition above covers a start exactly on the canonical
# manifold. Does training bring back a start that is *near* it? The stored part `perturbed` starts each seed at
# its canonical rank-one point and adds $\mathcal N(0, \sigma^2)$ noise, $\sigma =$ {glue:text}`lr_noise`, to
# every weight but the bias (`TrainConfig.init_noise`), then trains under SGD step 5 and AdamW with the settings
# above, {glue:text}`lr_n_pert` seeds each (two parts: seeds 0 to 9, then 10 to 19). The noise moves the start off rank one by $1 - f$ (median over the seeds, per matrix):
# {glue:text}`lr_pert_start`. A matrix *comes back* when its final $1 - f$ is at least `noise_back` times smaller
# than its start's (fixed in the parameters cell when the chapter first read these runs, before seeds 10 to 19 were
# made; the table below also gives the counts at other factors). Seeds that come back, per matrix,
# under AdamW: {glue:text}`lr_pert_back_adamw`; under SGD step 5: {glue:text}`lr_pert_back_sgd_5`. The median final
# $1 - f$ under AdamW is {glue:text}`lr_pert_end_adamw`. Two claims over the seeds are verified: under AdamW every one of the seven
# matrices comes back ({glue:text}`lr_pert_all_adamw`), and under SGD step 5 $W_V$, $W_O$ and the positional matrix
# come back ({glue:text}`lr_pert_vo_sgd_5`); the per-matrix counts are printed. Under AdamW some matrices end farther
# from rank one than they started: {glue:text}`lr_pert_away_adamw`. The table and the figure below show every seed.
#
# **What "comes back" means here.** $1 - f = \sum_{i\ge2} s_i^2/\sum_i s_i^2$ falls either when the part off rank one
# shrinks or when the rank-one part grows while the rest stays. The stored runs record only $f$, so they cannot
# tell the two apart. An outside review re-ran five of these starts through the command line and measured the
# singular values: the part of each matrix outside its best rank-one approximation kept its size (for example
# $7.0\cdot10^{-5} \to 6.9\cdot10^{-5}$ for $W_Q$ of seed 0 under AdamW) while $s_1$ grew by two to four orders of
# magnitude. So the stable rank returns toward 1 by growth along the rank-one direction, not by a force that removes
# the perturbation. The chapter checks this reading on its own live runs (context `length`, AdamW, the same
# noise), below. The curves also show that under AdamW
# the median $1 - f$ is smallest early and drifts up again late (not in every seed) ({glue:text}`lr_pert_drift_adamw`), and that under SGD step 5
# $W_Q$ and $W_K$ sit on a plateau rather than fall slowly ({glue:text}`lr_pert_plateau_sgd`), so a longer run would
# not change their count.
#

# %%
# the perturbed rank-one start (stored part "perturbed"): each seed's canonical rank-one point plus N(0, noise^2) on
# every weight but the bias, under SGD step 5 and AdamW; both files against the manifest's sha256
pert, pert_parts = stored.read_parts(DATA, stored.PARTS["lowrank_perturbed"], same=SAME + ["init_noise"], file="curves")
noise = pert_parts[0]["init_noise"]
glue("lr_noise", f"{noise:g}")
first, last = pert[pert.step == 0].set_index(["optimizer", "seed"]), pert[pert.step == pert.step.max()].set_index(["optimizer", "seed"])
gap_start = {opt: {m: 1 - first.loc[opt][f"top_fraction_{m}"].to_numpy() for m in MATRICES} for opt in ("sgd_5", "adamw")}
gap_end = {opt: {m: 1 - last.loc[opt][f"top_fraction_{m}"].to_numpy() for m in MATRICES} for opt in ("sgd_5", "adamw")}
back = {opt: {m: int(np.sum(gap_end[opt][m] < gap_start[opt][m] / noise_back)) for m in MATRICES} for opt in gap_end}
n_pert = len(gap_end["adamw"]["W_1"])
glue("lr_n_pert", str(n_pert))
back_all = {opt: np.all([gap_end[opt][m] < gap_start[opt][m] / noise_back for m in ms_], axis=0)
            for opt, ms_ in (("adamw", MATRICES), ("sgd_5", ["W_V", "W_O", "positional"]))}

# %% tags=["hide-input"]
for opt, text in (("adamw", "every matrix"), ("sgd_5", "W_V, W_O and positional")):
    k_, n_ = int(back_all[opt].sum()), len(back_all[opt])
    lo_, hi_ = inference.wilson_interval(k_, n_, Z_STORED)
    seeds_p = last.loc[opt].index.to_numpy()  # the seeds in the order of gap_end
    later[f"lr_pert_{opt}"] = formatting.fraction(int(back_all[opt][seeds_p >= 10].sum()), int((seeds_p >= 10).sum()))
    glue(f"lr_pert_{'all' if opt == 'adamw' else 'vo'}_{opt}", f"{k_}/{n_} seeds [{formatting.fixed(lo_, 2)}, {formatting.fixed(hi_, 2)}]")
    verified.record_count(f"paper scale, perturbed rank-one start, {'AdamW' if opt == 'adamw' else 'SGD step 5'}: {text} "
                          f"return toward stable rank 1 (1 - f at least {noise_back:g}x below the start)", k_, n_, rate=rate,
                          family=STORED_CLAIMS, check="stored perturbed curves, step 0 against the last step, every seed",
                          kind="stored data")
_ = glue("lr_later", "; ".join(f"{text}: {later[name]}" for name, (text, _) in stored_counts.items())
            + f"; perturbed start, AdamW every matrix back: {later['lr_pert_adamw']}; SGD step 5 W_V, W_O, positional back: "
            f"{later['lr_pert_sgd_5']}")

# %% tags=["hide-input"]
# seeds in which some matrix ends farther from rank one than it started (AdamW)
away_txt = []
for m in MATRICES:
    grew = gap_end["adamw"][m] > gap_start["adamw"][m]
    if grew.any():
        seeds_m = ", ".join(str(int(s_)) for s_ in last.loc["adamw"].index.to_numpy()[grew])
        factor = float(np.max(gap_end["adamw"][m][grew] / gap_start["adamw"][m][grew]))
        away_txt.append(f"{m} in seed(s) {seeds_m} (1 - f up to {factor:.0f} times its start)")
_ = glue("lr_pert_away_adamw", "; ".join(away_txt) or "none")

# %% [markdown]
# The medians of $1 - f$ at the start and at the end, and the seeds that come back, by `noise_back` and by other factors:

# %%
table_p = pd.DataFrame({f"{opt}: 1 - f, start (median)": {m: f"{np.median(gap_start[opt][m]):.0e}" for m in MATRICES}
                        for opt in ("sgd_5", "adamw")})
for opt in ("sgd_5", "adamw"):
    table_p[f"{opt}: 1 - f, end (median)"] = [f"{np.median(gap_end[opt][m]):.0e}" for m in MATRICES]
    table_p[f"{opt}: back by {noise_back:g}x"] = [f"{back[opt][m]}/{n_pert}" for m in MATRICES]
print(f"perturbed rank-one start (noise {noise:g}), stored, {n_pert} seeds per optimizer:")
print(table_p.to_string())
# the counts at other factors than noise_back (a sweep, not claims)
back_sweep = pd.DataFrame({f"{opt}, by {fac:g}x": {m: formatting.fraction(int(np.sum(gap_end[opt][m] < gap_start[opt][m] / fac)), n_pert)
                                                 for m in MATRICES} for opt in ("sgd_5", "adamw") for fac in (3, 10, 30, 100)})
print("seeds that come back, by factor:")
print(back_sweep.to_string())

# %% tags=["hide-input"]
# along training: AdamW's 1 - f early (step 100) against the end; SGD's W_Q, W_K at step 400 against the end
at_step = lambda opt, s: pert[(pert.optimizer == opt) & (pert.step == s)].set_index("seed")
mid_a, end_a = at_step("adamw", 100), at_step("adamw", int(pert.step.max()))
glue("lr_pert_drift_adamw", "median over the seeds " + ", ".join(
    f"{m} {np.median(1 - mid_a[f'top_fraction_{m}']):.0e} at step 100, {np.median(1 - end_a[f'top_fraction_{m}']):.0e} at the end"
    for m in ("W_V", "W_O")))
mid_s, end_s = at_step("sgd_5", int(pert.step.max()) // 2), at_step("sgd_5", int(pert.step.max()))
ratio_s = {m: (1 - end_s[f"top_fraction_{m}"]) / (1 - mid_s[f"top_fraction_{m}"]) for m in ("W_Q", "W_K")}
glue("lr_pert_plateau_sgd", "; ".join(
    f"{m}: 1 - f at the end over 1 - f at step {int(pert.step.max()) // 2}, median {formatting.fixed(np.median(r), 2)}, "
    f"from {formatting.fixed(r.min(), 2)} to {formatting.fixed(r.max(), 2)} over the seeds" for m, r in ratio_s.items()))
for opt, label in (("adamw", "AdamW"), ("sgd_5", "SGD")):
    glue(f"lr_pert_back_{opt}", ", ".join(f"{m} {back[opt][m]}/{n_pert}" for m in MATRICES))
    glue(f"lr_pert_end_{opt}", ", ".join(f"{m} {np.median(gap_end[opt][m]):.0e}" for m in MATRICES))
_ = glue("lr_pert_start", ", ".join(f"{m} {np.median(np.r_[gap_start['sgd_5'][m], gap_start['adamw'][m]]):.0e}"
                                      for m in MATRICES))

# %%
fig, axes = plt.subplots(1, 2, figsize=(14, 3.9), sharey=True, layout="constrained")
colors_m = dict(zip(MATRICES, ["tab:blue", "tab:orange", "tab:purple", "tab:brown", "tab:cyan", "tab:pink", plotting.NEUTRAL]))
for ax, (opt, title) in zip(axes, (("sgd_5", "SGD, step 5"), ("adamw", "AdamW"))):
    for m in MATRICES:
        for j, (_, g) in enumerate(pert[pert.optimizer == opt].groupby("seed")):
            ax.plot(g["step"], 1 / g[f"top_fraction_{m}"] - 1, color=colors_m[m], lw=0.8, alpha=0.6,
                    label=m if j == 0 else None)
    ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_title(f"N = 1024, rank-one start + noise {noise:g}, {title} ({n_pert} seeds)", fontsize=10)
axes[0].set_ylabel(r"stable rank $- 1$ $= \sum_{i \geq 2} s_i^2 / s_1^2$")
axes[1].legend(loc="upper right", ncol=2, fontsize=8)
plt.show()

# %% [markdown]
# **The dilution reading, checked live.** The chapter's own runs include the canonical rank-one start of each seed
# plus $\mathcal N(0, \sigma^2)$ noise ($\sigma$ = `pert_noise`) under AdamW, with every weight saved at step 0 and at
# the end. For each of $W_Q, W_K, W_V, W_O, W_1, W_2$ numpy's SVD gives the size of the part off rank one,
# $r = (\sum_{i\ge2} s_i^2)^{1/2}$, and the top singular value $s_1$, at both ends. The claim: per seed, $r$ ends
# within a factor `dilution_band` of its start for all six matrices (the perturbation is neither removed nor
# amplified), while $s_1$ grows, so that the stable rank returns toward 1 by growth alone. The band 2 was chosen
# after a look at seeds 0 to 9 of the paper's chain and 21 to 40 of its mirror (largest ratio about 1.5); the
# positional matrix is left out, since its $r$ grew by up to about 2.4 there. Measured here: the part off rank one
# keeps its size in {glue:text}`lr_live_kept` seeds, and $s_1$ grew in all six matrices in
# {glue:text}`lr_live_s1_grew`.

# %%
# live perturbed rank-one start under AdamW: the size of the part off rank one, start against end (numpy SVD)
SIX = ["W_Q", "W_K", "W_V", "W_O", "W_1", "W_2"]
off_ratio, s1_growth = [], []
for s in seeds:
    snaps = runs[("pert_adamw", s)]["snaps"]
    sv0 = {m: spectrum(snaps[0][m]) for m in SIX}
    sv1 = {m: spectrum(snaps[steps][m]) for m in SIX}
    off_ratio.append([float(np.sqrt(np.sum(sv1[m][1:] ** 2) / np.sum(sv0[m][1:] ** 2))) for m in SIX])
    s1_growth.append([float(sv1[m][0] / sv0[m][0]) for m in SIX])
off_ratio, s1_growth = np.array(off_ratio), np.array(s1_growth)
kept = np.all((off_ratio > 1 / dilution_band) & (off_ratio < dilution_band), axis=1)

# %% tags=["hide-input"]
claim = (f"AdamW, perturbed rank-one start: the part of W_Q, W_K, W_V, W_O, W_1, W_2 off rank one keeps its size "
        f"(end/start within a factor {dilution_band:g})")
flags = np.asarray(kept, dtype=bool).ravel()
counts[claim] = int(flags.sum())
print(f"{claim}: {glue('lr_live_kept', formatting.fraction(counts[claim], flags.size))} seeds")
verified.record_count(claim, counts[claim], flags.size, rate=rate, check=(f"numpy SVD of the weights at step 0 and {steps}: sqrt(sum_(i>=2) s_i^2), per matrix, every seed "
      f"(noise {pert_noise:g})"), kind="independent")
grew = np.all(s1_growth > 1, axis=1)
print(f"... and s_1 grew in all six matrices in {formatting.fraction(int(grew.sum()), len(grew))} seeds")
_ = glue("lr_live_s1_grew", formatting.fraction(int(grew.sum()), len(grew)))

# %% [markdown]
# The same measurement as Fig. 3, at the paper's scale, for seed 0 of each initialization under SGD step 5 and
# of the Gaussian start under AdamW (curves from `curves.csv`):

# %%
panels = [("standard", "sgd_5", "Gaussian start, SGD step 5 (Fig. 3)"),
          ("authors_rank_one", "sgd_5", "authors' random rank-one start, SGD step 5"),
          ("rank_one", "sgd_5", "canonical rank-one start, SGD step 5 (Fig. 7)"),
          ("standard", "adamw", "Gaussian start, AdamW")]
fig, axes = plt.subplots(1, 4, figsize=(16, 3.8), sharey=True)
for ax, (init, opt, title) in zip(axes, panels):
    c = curves[(curves["init"] == init) & (curves["optimizer"] == opt) & (curves["seed"] == stored_seeds[0])]
    track = {"step": c["step"].to_numpy(), **{m: c[f"top_fraction_{m}"].to_numpy() for m in MATRICES}}
    transformer_drawings.fraction_panel(ax, track, title, threshold)
axes[0].set_ylabel(r"$s_1^2/\sum_i s_i^2$")
axes[-1].legend(loc="lower right", ncol=2, fontsize=7)
fig.suptitle(f"N = 1024 (stored runs, seed {stored_seeds[0]}): fraction of energy in the top singular component")
plt.show()

# %% [markdown]
# (sec-lr-slice)=
# **A deterministic slice, re-executed.** The first `slice_steps` steps of seed 0 of each initialization under
# SGD step 5 run again here, with the stored runs' exact configuration (`markovlib.transformer.config.recipe("sec51_sgd")` and
# the knobs in the manifest), and must reproduce the stored held-out losses and fractions at every recorded step.
#
# **How far the runs are deterministic, measured for every run of the first part.** `tools/run_slice_prefix.py lowrank`
# re-runs the first 60 steps of every run of the first stored part (seeds 0 to 2, every initialization and
# optimizer; the slice re-executes seed 0) and stores the difference
# to the stored held-out loss and fractions at every evaluation (`book/data/lowrank/slice_prefix.csv`, one block per
# numeric configuration of CI in which it was run: {glue:text}`lr_prefix_configs`). A run's *deterministic prefix* is
# the number of leading steps in which every difference stays below $10^{-6}$. Under SGD at step 5 the runs are chaotic
# early (a last-bit difference grows by orders of magnitude every 20 steps in the transient): their shortest prefix is
# {glue:text}`lr_prefix_sgd5` steps, while the runs under SGD at step 2 and AdamW stay within $10^{-6}$ for
# {glue:text}`lr_prefix_other` steps. The slice re-executes the SGD-step-5 runs, so `slice_steps` may not exceed their
# shortest prefix (the parameters cell checks it). Within it the largest difference measured over every stored run and
# configuration is {glue:text}`lr_prefix_agree`. The tolerance `slice_tol` $= 10^{-5}$ is about ten times that,
# and the printed bound $3\cdot10^{-6}$ keeps a margin of at least 3 over it (asserted below). A negative control shows
# that the tolerance discriminates: the same slice with the SGD step scaled by $1 + 10^{-3}$ misses the stored curve by
# far more than the tolerance.
#

# %% tags=["hide-input"]
# the deterministic prefix of every stored run (tools/run_slice_prefix.py lowrank; read in the parameters' check)
sgd5 = prefix_of.xs("sgd_5", level="optimizer")
other = prefix_of[prefix_of.index.get_level_values("optimizer") != "sgd_5"]
prefix_agree = float(prefix[(prefix.optimizer == "sgd_5") & (prefix.step <= slice_steps)]["diff"].max())
SLICE_PRINT = 3e-6  # printed bound of the slice, under slice_tol
assert 3 * prefix_agree <= SLICE_PRINT, prefix_agree  # the printed bound keeps a margin of 3 over every measured difference
glue("lr_prefix_configs", ", ".join(sorted(prefix.config.unique())))
glue("lr_prefix_sgd5", str(int(sgd5.min())))
glue("lr_prefix_other", f"all {int(other.min())}" if other.min() == prefix.step.max() else f"at least {int(other.min())}")
glue("lr_prefix_agree", f"{prefix_agree:.1e}")  # stored data: the same on every machine
print(f"deterministic prefix over {len(prefix_of)} stored runs and configurations: SGD step 5 at least {sgd5.min()} steps, "
      f"the others at least {other.min()}; largest difference within the slice's {slice_steps} steps {prefix_agree:.1e}")

# %% [markdown]
# `lowrank.replay_error` re-executes the slice (three initializations, seed 0) and, as a negative control, the same slice with the SGD step scaled by $1 + 10^{-3}$:

# %%
SLICE_INITS = ("standard", "authors_rank_one", "rank_one")
slice_err = lowrank.replay_error(curves, manifest, SLICE_INITS, stored_seeds[0], slice_steps, MATRICES)
print(f"first {slice_steps} steps of 3 stored runs re-executed: max |live - stored| {formatting.bound(slice_err, SLICE_PRINT)}")
ctrl_err = lowrank.replay_error(curves, manifest, SLICE_INITS, stored_seeds[0], slice_steps, MATRICES, lr_factor=1 + 1e-3)
print(f"negative control (SGD step x 1.001): max |live - stored| {ctrl_err:.0e}")

# %% tags=["hide-input"]
_ = verified.record("the stored paper-scale runs are reproduced by a re-executed slice", slice_err < slice_tol,
                    check=f"first {slice_steps} steps (the deterministic prefix), seed {stored_seeds[0]}, 3 inits, "
                          "every 20 steps: held-out loss and fractions",
                    measured=formatting.bound(slice_err, SLICE_PRINT), tolerance=f"{slice_tol:g}", kind="stored data")
_ = verified.record("... and the slice's tolerance catches a change of the SGD step by 1e-3", ctrl_err > 10 * slice_tol,
                    check="the same slice with the step scaled by 1.001 misses the stored curve by over 10 tolerances",
                    measured=f"{ctrl_err:.0e}", tolerance=f"> {10 * slice_tol:g} (10 x slice_tol)",
                    kind="stored data")

# %% tags=["hide-input"]
_ = record_results({
    "n_seeds": n_seeds,
    **{f"seeds_held/{c}": k for c, k in counts.items()},
    **{f"sgd_{k}_min": float(frac_gauss[k].min()) for k in MATRICES},
    **{f"sgd_small_{k}_max": float(frac_small[k].max()) for k in MATRICES},
    **{f"adamw_{k}_min": float(frac_adam[k].min()) for k in MATRICES},
    "rank_one_max_deviation": dev_rank1, "rank_one_alpha_drift": drift,
    **{f"stored/{name}": value for name, (_, value) in stored_counts.items()},
    "stored_rank_one_max_deviation_sgd": dev_stored_sgd, "stored_rank_one_max_deviation_all": dev_stored,
    "stored_slice_error": slice_err, "live_perturbed_off_rank_one_ratio_max": float(off_ratio.max()),
    **{f"stored_perturbed_back/{opt}/{m}": back[opt][m] for opt in back for m in MATRICES}, "stored_rank_one_max_deviation_adamw": dev_stored_adam,
    "min_alignment_sgd": float(align_gauss.min()),
    "excess_sgd_max": float(excess_gauss.max()), "excess_rank_one": rank1["excess"],
    "excess_sgd_small_max": float(excess_small.max()), "excess_adamw_max": float(excess_adam.max()),
    "entropy_rate": chain.entropy_rate, "c_star": cstar,
    "flatness_sgd_max": float(flat["SGD"].max()), "flatness_adamw_min": float(flat["AdamW"].min()),
    "e2_over_cstar_small_min": float((e2_small / cstar).min()), "e2_over_cstar_small_max": float((e2_small / cstar).max()),
    **verified.summary(),
})

# %% [markdown]
# (sec-lr-range)=
# ## Where the claims stop
#
# The claims are stated, and checked, on the chains with $p + q = 0.5$ and $p, q$ in $[0.2, 0.3]$: the
# paper's chain $(0.2, 0.3)$, its mirror $(0.3, 0.2)$ and the chains between them (there
# $c^* = \log\frac{(1-p)(1-q)}{pq}$ is about 2.2), for the training settings of the parameters cell only (context
# 128, 800 steps, $d = 8$, batch 16, init scale 0.001, SGD steps 5 and 2, AdamW step $2\cdot10^{-3}$: the parameters
# cell refuses any other value of these, since no other was checked), and for any seeds, as counts over at least 10
# seeds on the paper's chain and at least 20 seeds on every other chain of the segment. The mirror edge needs
# the larger count: there the claims hold in fewer seeds (an outside review, reported in the closing note of issue 24, ran 20 seeds on the mirror chain,
# 21 to 40, and found the alignment claim in 16 of them and the rank-one claim in 18, a rate of about 0.8; not
# re-run here), so that one or two more failing seeds out of 10 would take a count's lower end below `rate`, while
# over 20 seeds the measured rate keeps the lower end above it. CI's second parameter set,
# `book/ci_params/low_rank.yaml`, runs the mirror chain with those 20 seeds. The thresholds of the claims over
# stored seeds (`threshold`, `flat_threshold`, `sgd_flat_max`, `noise_back`) are fixed at the values at which they
# were checked, since a stricter one breaks a claim (an outside review: a rank-one threshold of 0.992 breaks the SGD
# count, a factor of 30 the perturbed AdamW count; the sweeps below print the counts at other values); the other
# thresholds can be made stricter, not looser (the parameters cell refuses a looser one). The claims are chain-dependent, and
# the parameters cell refuses other chains. Exploratory runs off this segment (three seeds per chain, not claims)
# broke them:
# - for $p + q > 1$ the Gaussian start stays at the unigram point, the bad local minimum of
#   {prf:ref}`Thm 2 <thm-2>`, and nothing of claims 1 and 3 applies;
# - at $p = q = 0.2$, under SGD (step 5), $W_V$ and $W_O$ ended just below the threshold 0.99 in some seeds; at
#   $(0.1, 0.4)$, $W_1$ and $W_2$ stayed at their random start, while at $(0.4, 0.1)$ they became rank one: the
#   mechanism of claim 3 at work (the embedding alone reaches the $e$-axis minimum first), which depends on the
#   chain, not on $p + q$ alone;
# - at $p = q = 0.1$ and at $p = q = 0.3$ one SGD run of step 5 diverged, and so did one on the mirror chain
#   $(0.3, 0.2)$ at context 64 (the noisier gradient of a shorter context), which is why the context is not
#   shortened below the defaults' 128.
#
# (An earlier version stated the claims for every chain with $p + q \le 0.5$ and $p, q \ge 0.1$; the exploratory runs
# refute that.)
#
# ## Changes after review
#
# **Changed claims (review A).** "For any seeds, as counts over at least 10 seeds" on the whole segment $\to$ at
# least 10 seeds on the paper's chain and at least 20 on the others (the mirror chain's rate is about 0.8), enforced
# by the parameters cell. "For the step sizes and the 800 steps of the parameters cell, at context 128", while any
# value was accepted $\to$ those settings are now the only ones accepted. "The exact canonical manifold stays rank one
# under both optimizers" had a verified row for SGD only $\to$ a stored-data row for AdamW too. The re-executed slice's
# tolerance was $10^{-5}$ and its printed bound $2\cdot10^{-6}$, about four times the agreement measured across
# machines $\to$ tolerance $10^{-4}$, printed bound $5\cdot10^{-5}$ (100 times the largest measured difference), and a
# negative control shows that this tolerance still catches a change of the SGD step by one part in a thousand. The
# determinism figures typed in the slice's text are dropped (they were measured once and are not re-run here).
# **Changed (issue 21, stored-run slices at their real precision).** The slice's tolerance $10^{-4}$ and printed
# bound $5\cdot10^{-5}$ $\to$ $10^{-5}$ and $3\cdot10^{-6}$, after the deterministic prefix of every stored run was
# measured and stored in both numeric configurations of CI (`tools/run_slice_prefix.py lowrank`); the cap of
# `slice_steps` at 20 is now read from that measurement.

# %% [markdown]
# ## What was verified
#
# The table is generated from the checks above (a failing check stops the chapter where it fails). Not
# confirmed: the paper says the same holds "for other weight matrices"; under SGD $W_Q$ and $W_K$ stay far from
# rank one, and under AdamW $W_V$ and $W_O$ end farther from rank one than $W_1$, $W_2$, by an amount that depends
# on the seed: at the paper's scale {glue:text}`lr_stored_vo_far`.

# %% tags=["remove-cell"]
from markovlib.book.glue import summary

summary("low_rank")  # in Jupyter: "What this chapter shows" with this run's numbers (removed from the book)

# %%
verified.table()

# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: markovlib
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.7
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
#   markovlib:
#     typed_numbers:
#       '0': seed 0, the first seed of the stored runs (book/data/lowrank/manifest.json)
#         and of the default `seeds`; step 0, the initialization; s_2/s_1 = 0 for a
#         rank-one matrix (its definition)
#       '0.8': review A's rate on the mirror chain (16 and 18 of 20 seeds; closing note
#         of issue 24)
#       '1': the top fraction and stable rank 1 of a rank-one matrix (their definitions,
#         in the chapter)
#       '1.5': the largest end/start ratio of the part off rank one seen when `dilution_band`
#         was chosen (seeds 0 to 9 of the paper's chain, 21 to 40 of the mirror; that
#         look, not re-run here)
#       '10': the stored parts' seed ranges from 10 (manifest_seeds10_19.json, manifest_perturbed10_19.json)
#       '1024': the paper's context N (Sec. 5.1) and that of the stored runs (manifest.json
#         commands, --length 1024)
#       '16': 'review A''s count (closing note of issue 24): the alignment claim on
#         the mirror chain, seeds 21 to 40; the review''s, not re-run at the defaults'
#       '18': 'review A''s count (closing note of issue 24): the rank-one claim on the
#         mirror chain, seeds 21 to 40; the review''s, not re-run at the defaults'
#       '19': the stored parts' seed ranges to 19 (manifest_seeds10_19.json, manifest_perturbed10_19.json)
#       '2': SGD step 2 of the stored runs (manifest.json optimizers sgd_2, the default
#         of `lr_sgd_small`); seeds 0 to 2, the first stored part (manifest.json)
#       '2.4': the positional matrix's largest ratio in that same look (why it is left
#         out of the claim; not re-run here)
#       '20': the stored curves' spacing, every 20 steps (manifest.json commands, --eval-every
#         20); 20 stored seeds per setting
#       '21': the mirror chain's seeds 21 to 40 of review A (closing note of issue 24)
#         and of book/ci_params/low_rank.yaml
#       '3': claim 3 of the summary; the margin 3 of the slice's printed bound, asserted
#         in its cell
#       '40': the mirror chain's seeds 21 to 40 of review A (closing note of issue 24)
#         and of book/ci_params/low_rank.yaml
#       '5': SGD step 5 of the stored runs (manifest.json optimizers sgd_5, the default
#         of `lr_sgd`)
#       6.9\cdot10^{-5}: 'reviews B and C of this chapter: the same part at the end
#         (their re-run, not re-run here)'
#       7.0\cdot10^{-5}: 'reviews B and C of this chapter: W_Q of stored seed 0 under
#         AdamW, the part off rank one at the start (their re-run, not re-run here)'
#       '9': the stored parts' seed ranges 0 to 9 (manifest.json, manifest_seeds3_9.json,
#         manifest_perturbed.json)
#       '95': 'the level of the Wilson intervals (markovlib.book.inference): the one-sided
#         lower end that decides a claim, the two-sided interval of the figure'
# ---

# %% [markdown]
# # Low rank emerges
#
# The analysis of {cite:t}`makkuva2024local` does not work with the full transformer. It restricts every weight to
# a *canonical* rank-one form along one shared unit direction $\alpha$, which reduces the model to a few scalars
# $(e, w, a, b)$. That reduction is justified by an observation (Sec. 5.1 of the paper): trained weights are
# approximately rank one and share one direction, and a rank-one initialization stays rank one. This chapter trains the full
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
# 2. **A start on the canonical manifold stays on it**: proved, measured to {glue:text}`lr_inv`; the paper's random
#    rank-one start (Fig. 7): measured only ([rank-one start](#sec-lr-stays)).
# 3. **What drives it.** At SGD step `lr_sgd_small` = 2 the loss still reaches the entropy rate but $W_1$, $W_2$ stay random
#    ({glue:text}`lr_small_random`): the embedding alone reaches the $e$-axis minimum $\lVert e\rVert^2 = c^*$
#    ({glue:text}`lr_small_e2`); $W_Q$, $W_K$ stay far from rank one ({glue:text}`lr_qk_far`) ([why](#sec-lr-why)).
# 4. **The hypercube, at the book's step sizes.** $e \in \{\pm1\}^d/\sqrt d$ under AdamW ({glue:text}`lr_hyper_adam`),
#    not under SGD ({glue:text}`lr_hyper_sgd`), though the paper saw it under SGD (Sec. 5.1); AdamW makes $W_Q$, $W_K$, $W_1$, $W_2$, positional rank one
#    ({glue:text}`lr_adam_rank1`), while $W_V$, $W_O$ end farther from it ({glue:text}`lr_vo_farther`)
#    ([AdamW](#sec-lr-adam)).
# 5. **At the paper's scale** (stored, 20 seeds): SGD makes the five matrices rank one in {glue:text}`lr_stored_sgd5`,
#    AdamW puts $e$ on the hypercube in {glue:text}`lr_stored_hyper_adam`, SGD not in {glue:text}`lr_stored_hyper_sgd`;
#    a perturbed rank-one start returns toward stable rank 1 as its rank-one part grows (the perturbation kept its
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
from markovlib.book import specs
SPEC = specs.load("low_rank")
globals().update(SPEC.check(globals()))
SPEC.table()

# %% [markdown]
# Defaults keep the chapter within the budget of a training chapter: context `length` = 128 instead of the paper's
# 1024, so that {glue:text}`lr_runs` (one seed list for each of SGD steps `lr_sgd` and `lr_sgd_small` and AdamW, one
# canonical rank-one run, and the perturbed rank-one start under AdamW for every seed), two at a time, fit in a few
# minutes on two cores. A context of `length` = 128 suffices for these claims because they are
# about the weights' structure, which the gradient sets through averages over positions (the same at any
# context); the context only changes the noise of each step. The paper's exact setting ($N = 1024$) is not
# a parameter set of this chapter (its claims were checked only at context `length` = 128, so the parameters cell refuses
# other contexts); the paper-scale runs are stored instead (section "At the paper's scale" below, made by
# `python tools/run_lowrank.py --workers 2`). Every run uses the
# package's `Trainer` (AdamW or SGD with warm-up and cosine schedule, fresh batches each step), side by side through
# `markovlib.transformer.runs.train_many` on one CPU thread each, which returns the weights every `track_every`
# steps; so each run is deterministic on a given machine; across machines the runs differ, which is why the
# claims are counted over seeds. The measurements (singular values, alignments, the held-out excess loss over the
# bigram predictor) are independent references with numpy and torch (`markovlib.transformer.lowrank_reference`),
# not the package's training code.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from markovlib.book import formatting, inference, plotting, report, stored
from markovlib.book.glue import glue
from markovlib.book.sweep import record_results
from markovlib.markov.canonical import c_star
from markovlib.markov.chain import MarkovChain
from markovlib.transformer import drawings as transformer_drawings
from markovlib.transformer import lowrank, lowrank_drawings, lowrank_live, lowrank_stored

plotting.use_style()
torch.set_num_threads(1)
chain, cstar, verified, DATA = MarkovChain(p, q), c_star(p, q), report.Verification(), stored.data_dir("lowrank")
n_seeds = len(seeds)
INV_PRINT = 1e-9  # printed bound of the rank-one invariance (float32 rounding: measured about 1e-12), under invariance_tol
EXCESS_PRINT = 2e-3  # printed bound of the rank-one run's excess loss, under excess_tol
print(f"chain p={p:g}, q={q:g}: entropy rate {formatting.fixed(chain.entropy_rate, 4)}, "
      f"H(pi) {formatting.fixed(chain.marginal_entropy, 4)}, c* = {formatting.fixed(cstar, 4)}")

# %% [markdown]
# Every run side by side (deterministic: the result does not depend on `workers`), with its weights at every
# `track_every` steps and at the heatmap snapshots (`lowrank_live.train`; `lowrank.run_config` holds the knobs of a run):

# %%
snap_at, snapshot_steps = lowrank_live.snapshot_plan(steps, track_every, heatmap_steps)
shape = dict(p=p, q=q, d=d, length=length, batch=batch, steps=steps)
done = lowrank_live.train(seeds, **shape, init_std=init_std, lr_sgd=lr_sgd, lr_sgd_small=lr_sgd_small,
                          lr_adamw=lr_adamw, pert_noise=pert_noise, snapshot_steps=snapshot_steps, workers=workers)
print(f"runs whose weights diverged (non-finite; each fails every claim it enters): {lowrank_live.diverged(done)} "
      f"of {glue('lr_runs', f'{len(done)} runs of {steps} steps')}")

# %% [markdown]
# Each run is measured from its weight snapshots (the top fraction and $s_2/s_1$ of every matrix along training) and
# from its final weights (the fractions and the excess held-out loss, the model rebuilt from its weights;
# `lowrank_live.measure`), and the claims below are counted per seed (`lowrank_live.claims`):

# %%
runs = lowrank_live.measure(done, **shape, track_every=track_every, heldout_batches=heldout_batches)
G = lowrank_live.groups(runs, seeds)  # per optimizer: the measurements as arrays over the seeds
off_ratio, s1_growth = lowrank_live.dilution(runs, seeds, steps)  # the perturbed start (its section below)
CLAIMS = lowrank_live.claims(G, off_ratio, SPEC.values, cstar)
print("claims counted over seeds:", ", ".join(f"{c['k']}/{c['n']}" for c in CLAIMS.values()))

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

# %% tags=["hide-input"]
for name in ("lr_sgd_rank1", "lr_sgd_loss"):
    print(f"{CLAIMS[name]['claim']}: {glue(name, formatting.fraction(CLAIMS[name]['k'], CLAIMS[name]['n']))} seeds")
verified.record_count(**CLAIMS["lr_sgd_rank1"], rate=rate, kind="independent")
_ = verified.record_count(**CLAIMS["lr_sgd_loss"], rate=rate, kind="independent")

# %% [markdown]
# The shared direction: the top right singular vector of $W_1$ and $W_V$, the top left singular vector of $W_2$
# and $W_O$ and the common direction of the positional embeddings should all be $\pm e / \|e\|$ (`lowrank.min_alignment`), as in
# {eq}`eq-lowrank-canonical-weights`.

# %% tags=["hide-input"]
print(f"{CLAIMS['lr_align']['claim']}: {glue('lr_align', formatting.fraction(CLAIMS['lr_align']['k'], n_seeds))} seeds")
_ = verified.record_count(**CLAIMS["lr_align"], rate=rate, kind="independent")

# %% [markdown]
# The figure below reproduces the quantitative Fig. 3 (left) for the first seed, next to the same measurement for
# the rank-one start (Fig. 7, computed in the next section) and for the smaller SGD step `lr_sgd_small` of claim 3.

# %%
rank1, gauss, small, adam = runs["rank_one", seeds[0]], G["sgd"]["runs"], G["sgd_small"]["runs"], G["adamw"]["runs"]
lowrank_drawings.fraction_figure(
    [(gauss[0]["track"], f"Gaussian init, SGD lr {lr_sgd:g} (Fig. 3)"),
     (rank1["track"], f"rank-one init, SGD lr {lr_sgd:g} (Fig. 7)"),
     (small[0]["track"], f"Gaussian init, SGD lr {lr_sgd_small:g}")], threshold,
    f"Fraction of energy in the top singular component across iterations (seed {seeds[0]})",
    r"energy in top component $s_1^2/\sum_i s_i^2$")
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
dev_rank1, drift = lowrank_live.rank_one_drift(rank1)
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
# loss is already minimal, the mean gradient vanishes, and those weights stay where they started. What was run: SGD
# at two step sizes, `lr_sgd` = 5 and `lr_sgd_small` = 2, for `steps` = 800 steps each; the larger step makes $W_1$,
# $W_2$ rank one and the smaller does not. The mechanism suggests that a larger step (or a longer run) keeps feeding
# them through the gradient noise until the rank-one part dominates, but no other step size or horizon was run, so
# this is a contrast of two step sizes, not a threshold. The same mechanism predicts part of the chain dependence of
# the Range statement: a smaller $c^*$ is reached sooner. The third panel of the figure above is the small-step case;
# over the seeds:

# %% tags=["hide-input"]
for name in ("lr_small_random", "lr_small_e2", "lr_qk_far"):
    print(f"{CLAIMS[name]['claim']}: {glue(name, formatting.fraction(CLAIMS[name]['k'], CLAIMS[name]['n']))} seeds")
verified.record_count(**CLAIMS["lr_small_random"], rate=rate, kind="independent")
verified.record_count(**CLAIMS["lr_small_e2"], rate=rate, kind="independent")
_ = verified.record_count(**CLAIMS["lr_qk_far"], rate=rate, kind="independent")

# %% [markdown]
# (sec-lr-adam)=
# ## The hypercube is Adam's
#
# The paper reports that the shared direction has all entries equal in magnitude, $\alpha \in \{\pm1\}^d/\sqrt d$,
# and the canonical analysis starts from it. Its Sec. 5.1 trains with SGD ("train them using SGD on a batch size
# B = 16 and for t = 800 iterations … the embedding vector has all entries in [M] up to a scaling") and does not
# state the step size; the SGD step sizes of this chapter are the book's choice, and at them SGD does not reach the
# hypercube (stored: {glue:text}`lr_stored_hyper_sgd`), while AdamW does. Whether some SGD step reproduces the paper's
# observation is open; at the settings tried here the hypercube comes with AdamW. Under SGD the direction of $e$ inherits the shape of the random start
# (the gradient of $e$ is, to first order, proportional to $e$ and the positional embeddings, not to a sign
# pattern). AdamW divides each coordinate's step by a running estimate of its own gradient magnitude, so every
# coordinate of a coherently growing vector moves by about the learning rate per step, whatever its size: after a
# few hundred steps all entries have the same magnitude. The same runs with AdamW (the authors' code) show it,
# and show which matrices AdamW makes rank one.

# %% tags=["hide-input"]
for name in ("lr_hyper_adam", "lr_hyper_sgd", "lr_adam_rank1", "lr_vo_farther"):
    print(f"{CLAIMS[name]['claim']}: {glue(name, formatting.fraction(CLAIMS[name]['k'], CLAIMS[name]['n']))} seeds")
verified.record_count(**CLAIMS["lr_hyper_adam"], rate=rate, kind="independent")
verified.record_count(**CLAIMS["lr_hyper_sgd"], rate=rate, kind="independent")
verified.record_count(**CLAIMS["lr_adam_rank1"], rate=rate, kind="independent")
_ = verified.record_count(**CLAIMS["lr_vo_farther"], rate=rate, kind="independent")

# %% tags=["hide-input"]
sweep_live = lowrank_live.threshold_sweep(G["adamw"]["fractions"], sweep_thresholds)
k_ffn_strict = int(np.sum(np.min([G["adamw"]["fractions"][m] for m in ("W_1", "W_2")], axis=0) > max(sweep_thresholds)))
print(f"AdamW: W_1 and W_2 both above the strictest threshold {max(sweep_thresholds):g} in "
      f"{glue('lr_sweep_ffn_strict', formatting.fraction(k_ffn_strict, n_seeds))} seeds")

# %% [markdown]
# The trained token embedding of the first seed under both optimizers:

# %%
lowrank_drawings.embedding_figure([("SGD", gauss[0]["weights"]["embedding"]),
                                   ("AdamW", adam[0]["weights"]["embedding"])], seeds[0])
plt.show()

# %% [markdown]
# Under AdamW, $W_V$ and $W_O$ end nearly rank one in most seeds, and how nearly depends on the seed: their ratio $s_2/s_1$ of the two largest singular values stops at least `vo_factor` = 5 times
# farther from 0 than that of $W_1$, $W_2$ ({glue:text}`lr_vo_farther` seeds), spread over the seeds. Whether
# that counts as "rank one" depends on the threshold, so we report the ratio along training and a sweep of
# thresholds rather than one threshold. (An earlier version claimed "$W_V$ rank one under AdamW" from one seed,
# and a later one "not reliably rank one" from one threshold, `threshold` = 0.99, that the stored AdamW fractions of $W_V$,
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
lowrank_drawings.s2s1_figure([(f"SGD, step {lr_sgd:g}", gauss), ("AdamW", adam)], sweep_live, sweep_thresholds, length)
plt.show()

# %% [markdown]
# Every seed, every matrix: the final top-component fraction of each run (left), and for each claim the fraction
# of seeds in which it held with its 95 % Wilson interval (right; dashed: `rate`, which a claim's one-sided lower
# end must exceed). These per-seed values are chaotic: they change from machine to machine, while the claims keep
# wide margins.

# %%
lowrank_drawings.seeds_figure(
    [(f"SGD lr {lr_sgd:g}", G["sgd"]["fractions"]), (f"SGD lr {lr_sgd_small:g}", G["sgd_small"]["fractions"]),
     ("AdamW", G["adamw"]["fractions"])], threshold,
    [(c["claim"], c["k"], c["n"]) for name, c in CLAIMS.items() if name != "lr_live_kept"], rate)
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
S = lowrank_stored.load(DATA)  # every part (seeds 0-2, 3-9, 10-19), each file against its manifest's sha256
final, curves, stored_seeds = S["final"], S["curves"], S["seeds"]
STORED_CLAIMS = 5  # the stored claims of this section (three here, two on the perturbed start): Bonferroni over them
glue("lr_n_stored", str(len(stored_seeds)))
glue("lr_stored_family", str(STORED_CLAIMS))
print(S["line"])

# %% [markdown]
# Per initialization and optimizer, the seeds in which each matrix ends rank one, $e$ on the hypercube, and the top singular vectors aligned with $e$ (`lowrank_stored.count_table`):

# %%
print(f"seeds in which each matrix ends rank one (fraction > {threshold:g}), e ends on the hypercube "
      f"(flatness > {flat_threshold:g}) and W_V, W_O, W_1, W_2 align with e (|cos| > {align_threshold:g}):")
print(lowrank_stored.count_table(final, threshold, flat_threshold, align_threshold).to_string())

# %% [markdown]
# How to read the table (the counts are the stored runs', so they print the same everywhere). From the Gaussian start the picture of the reduced-context runs holds at the paper's scale: SGD with the larger step makes $W_V$, $W_O$, $W_1$, $W_2$ and the positional matrix rank one along $e$ in most seeds (the table gives the count per matrix), but not $W_Q$, $W_K$; the smaller step makes none of them rank one (the embedding alone reaches the $e$-axis minimum first); AdamW makes $W_1$, $W_2$ rank one at every threshold of the sweep and $W_Q$, $W_K$ and the positional matrix at the strict `threshold` = 0.99, while whether $W_V$, $W_O$ pass depends on the threshold (the sweep below), and only AdamW puts $e$ on the hypercube. The authors' random rank-one start is already on the hypercube and already rank one in $W_V$, $W_O$, $W_1$, $W_2$; SGD keeps those rank one (though the start is off the canonical manifold) and at the larger step the positional matrix joins them, while $W_Q$, $W_K$ stay random; under AdamW every matrix ends rank one. The exact canonical manifold stays rank one under both optimizers: for SGD by the proposition above; for AdamW because every gradient on the manifold is an outer product with $\alpha$ as a factor ($x\alpha^\top$ or $\alpha y^\top$), and with $\alpha$ on the hypercube Adam's coordinate-wise step of such a matrix is $g\,\alpha^\top$ or $\alpha g^\top$ for some vector $g$ (the entries of $\alpha$ share one magnitude, so the normalization is the same in every column, up to Adam's $\epsilon$): again along $\alpha$.

# %% [markdown]
# What the paper-scale runs say, as counts over the stored seeds with the Wilson intervals whose lower ends decide
# the claims (Bonferroni over the stored claims; the thresholds are the parameters cell's):

# %% tags=["hide-input"]
Z_STORED = inference.wilson_lower_z(0.05, STORED_CLAIMS)  # the interval whose lower end decides a stored claim
stored_counts = lowrank_stored.stored_claims(final, Z_STORED, threshold=threshold, flat_threshold=flat_threshold,
                                             sgd_flat_max=sgd_flat_max)
for name, c in stored_counts.items():
    print(f"N = 1024, {c['text']}: {glue(name, c['count'])}")
    verified.record_count(c["claim"], c["k"], c["n"], rate=rate, family=STORED_CLAIMS, check=c["check"], kind="stored data")

# %% [markdown]
# The canonical rank-one start, every stored run, under both optimizers:

# %% tags=["hide-input"]
inv = lowrank_stored.invariance(final)
dev_stored, dev_stored_sgd, dev_stored_adam = inv["all"], inv["sgd_5"], inv["adamw"]
for opt, name in (("sgd_5", "SGD"), ("adamw", "AdamW")):
    print(f"N = 1024, canonical rank-one start, {name}: max over seeds and matrices of 1 - fraction "
          f"{formatting.bound(inv[opt], INV_PRINT)}")
verified.record("paper scale: the canonical rank-one start stays rank one under SGD (Fig. 7), every stored run",
                formatting.within(dev_stored_sgd, invariance_tol),
                check="stored final fractions of every matrix, every stored seed (a property of each run)",
                measured=formatting.bound(dev_stored_sgd, INV_PRINT), tolerance=f"{invariance_tol:g}",
                kind="stored data")
_ = verified.record("paper scale: the canonical rank-one start stays rank one under AdamW, every stored run",
                    inv["n_adamw"] > 0 and formatting.within(dev_stored_adam, invariance_tol),
                    check=f"stored final fractions of every matrix, every stored seed ({inv['n_adamw']} runs; the "
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
# weights, which these stored runs did not keep. The stored fractions of $W_V$ under AdamW straddle the
# strict threshold `threshold` = 0.99, so instead of one threshold we print the sweep and draw the stable rank along training:

# %%
vo = lowrank_stored.adamw_vo(final, sweep_thresholds)
print("threshold sweep, AdamW, stored runs (N = 1024): seeds whose final fraction exceeds the threshold")
print(vo["sweep"].to_string())
print(vo["line"])
_ = [glue(name, text) for name, text in vo["glue"].items()]

# %%
adam_curves = curves[(curves["init"] == "standard") & (curves["optimizer"] == "adamw")]
lowrank_drawings.stable_rank_figure([(adam_curves, f"N = 1024, Gaussian start, AdamW (stored, {vo['n']} seeds)")])
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
# tell the two apart. An outside review (reviews B and C of this chapter; their figures, quoted as theirs and not
# re-run here) re-ran five of these starts through the command line and measured the singular values: the part of
# each matrix outside its best rank-one approximation kept its size (for example $7.0\cdot10^{-5} \to
# 6.9\cdot10^{-5}$ for $W_Q$ of seed 0 under AdamW, the review's figures) while $s_1$ grew by two to four orders of
# magnitude. So the stable rank returns toward 1 by growth along the rank-one direction, not by a force that removes
# the perturbation. The chapter checks this reading on its own live runs (context `length`, AdamW, the same
# noise), below. The curves also show that under AdamW
# the median $1 - f$ is smallest early and drifts up again late (not in every seed) ({glue:text}`lr_pert_drift_adamw`), and that under SGD step 5
# $W_Q$ and $W_K$ sit on a plateau rather than fall slowly ({glue:text}`lr_pert_plateau_sgd`), so a longer run would
# not change their count.
#

# %%
P = lowrank_stored.perturbed(DATA, noise_back, Z_STORED)  # both parts, against their manifests' sha256
back, n_pert = P["back"], P["n"]
_ = [glue(name, text) for name, text in P["glue"].items()]
print(f"perturbed rank-one start (noise {P['noise']:g}), stored, {n_pert} seeds per optimizer")

# %% tags=["hide-input"]
for name, c in P["claims"].items():
    glue(name, c["count"])
    verified.record_count(c["claim"], c["k"], c["n"], rate=rate, family=STORED_CLAIMS, check=c["check"],
                          kind="stored data")
_ = glue("lr_later", "; ".join(f"{c['text']}: {c['later']}" for c in stored_counts.values())
         + f"; perturbed start, AdamW every matrix back: {P['claims']['lr_pert_all_adamw']['later']}; SGD step 5 W_V, "
         f"W_O, positional back: {P['claims']['lr_pert_vo_sgd_5']['later']}")

# %% [markdown]
# The medians of $1 - f$ at the start and at the end, and the seeds that come back, by `noise_back` and by other factors:

# %%
print(P["table"].to_string())
print("seeds that come back, by factor:")
print(P["sweep"].to_string())

# %%
pert = P["pert"]
lowrank_drawings.stable_rank_figure(
    [(pert[pert.optimizer == opt], f"N = 1024, rank-one start + noise {P['noise']:g}, {title} ({n_pert} seeds)")
     for opt, title in (("sgd_5", "SGD, step 5"), ("adamw", "AdamW"))], lowrank_drawings.MATRICES)
plt.show()

# %% [markdown]
# **The dilution reading, checked live.** The chapter's own runs include the canonical rank-one start of each seed
# plus $\mathcal N(0, \sigma^2)$ noise ($\sigma$ = `pert_noise`) under AdamW, with every weight saved at step 0 and at
# the end. For each of $W_Q, W_K, W_V, W_O, W_1, W_2$ numpy's SVD gives the size of the part off rank one,
# $r = (\sum_{i\ge2} s_i^2)^{1/2}$, and the top singular value $s_1$, at both ends. The claim: per seed, $r$ ends
# within a factor `dilution_band` of its start for all six matrices (the perturbation is neither removed nor
# amplified), while $s_1$ grows, so that the stable rank returns toward 1 by growth alone. The band `dilution_band` = 2 was chosen
# after a look at seeds 0 to 9 of the paper's chain and 21 to 40 of its mirror (largest ratio about 1.5); the
# positional matrix is left out, since its $r$ grew by up to about 2.4 there. Measured here: the part off rank one
# keeps its size in {glue:text}`lr_live_kept` seeds, and $s_1$ grew in all six matrices in
# {glue:text}`lr_live_s1_grew`.

# %% tags=["hide-input"]
print(f"{CLAIMS['lr_live_kept']['claim']}: {glue('lr_live_kept', formatting.fraction(CLAIMS['lr_live_kept']['k'], n_seeds))} seeds")
verified.record_count(**CLAIMS["lr_live_kept"], rate=rate, kind="independent")
grew = np.all(s1_growth > 1, axis=1)
print(f"... and s_1 grew in all six matrices in {glue('lr_live_s1_grew', formatting.fraction(int(grew.sum()), len(grew)))} seeds")

# %% [markdown]
# The same measurement as Fig. 3, at the paper's scale, for seed 0 of each initialization under SGD step 5 and
# of the Gaussian start under AdamW (curves from `curves.csv`):

# %%
lowrank_drawings.fraction_figure(
    [(lowrank_drawings.stored_track(curves, init, opt, stored_seeds[0]), title) for init, opt, title in (
        ("standard", "sgd_5", "Gaussian start, SGD step 5 (Fig. 3)"),
        ("authors_rank_one", "sgd_5", "authors' random rank-one start, SGD step 5"),
        ("rank_one", "sgd_5", "canonical rank-one start, SGD step 5 (Fig. 7)"), ("standard", "adamw", "Gaussian start, AdamW"))],
    threshold, f"N = 1024 (stored runs, seed {stored_seeds[0]}): fraction of energy in the top singular component")
plt.show()

# %% [markdown]
# (sec-lr-slice)=
# **A deterministic slice, re-executed.** The first `slice_steps` steps of seed 0 of each initialization under
# SGD step 5 run again here, with the stored runs' exact configuration (`markovlib.transformer.config.recipe("sec51_sgd")` and
# the knobs in the manifest), and must reproduce the stored held-out losses and fractions at every recorded step.
#
# **How far the runs are deterministic, measured for every run of the first part.** `tools/run_slice_prefix.py lowrank`
# re-runs the first {glue:text}`lr_prefix_steps` steps of every run of the first stored part (seeds 0 to 2, every initialization and
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
prefix = lowrank_stored.prefix_facts(DATA, S["parts"][0]["seeds"], slice_steps, specs.low_rank.PREFIX_LEVEL)
SLICE_PRINT = 3e-6  # printed bound of the slice, under slice_tol
assert 3 * prefix["agree"] <= SLICE_PRINT, prefix["agree"]  # the printed bound keeps a margin of 3 over every measured difference
_ = [glue(name, text) for name, text in prefix["glue"].items()]  # stored data: the same on every machine
print(prefix["line"])

# %% [markdown]
# `lowrank.replay_error` re-executes the slice (three initializations, seed 0) and, as a negative control, the same slice with the SGD step scaled by $1 + 10^{-3}$:

# %%
SLICE_INITS, manifest = ("standard", "authors_rank_one", "rank_one"), S["parts"][0]
slice_err = lowrank.replay_error(curves, manifest, SLICE_INITS, stored_seeds[0], slice_steps, lowrank_live.MATRICES)
print(f"first {slice_steps} steps of 3 stored runs re-executed: max |live - stored| {formatting.bound(slice_err, SLICE_PRINT)}")
ctrl_err = lowrank.replay_error(curves, manifest, SLICE_INITS, stored_seeds[0], slice_steps, lowrank_live.MATRICES,
                                lr_factor=1 + 1e-3)
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
frac = {g: G[g]["fractions"] for g in lowrank_live.GROUPS}
_ = record_results({
    "n_seeds": n_seeds, **{f"seeds_held/{c['claim']}": c["k"] for c in CLAIMS.values()},
    **{f"{g}_{k}_{fn.__name__}": float(fn(frac[g][k])) for g, fn in (("sgd", np.min), ("sgd_small", np.max), ("adamw", np.min))
       for k in lowrank_live.MATRICES},
    "rank_one_max_deviation": dev_rank1, "rank_one_alpha_drift": drift,
    **{f"stored/{name}": c["count"] for name, c in stored_counts.items()},
    "stored_rank_one_max_deviation_sgd": dev_stored_sgd, "stored_rank_one_max_deviation_all": dev_stored,
    "stored_slice_error": slice_err, "live_perturbed_off_rank_one_ratio_max": float(off_ratio.max()),
    **{f"stored_perturbed_back/{opt}/{m}": back[opt][m] for opt in back for m in back[opt]},
    "stored_rank_one_max_deviation_adamw": dev_stored_adam, "min_alignment_sgd": float(G["sgd"]["align"].min()),
    **{f"excess_{g}_max": float(G[g]["excess"].max()) for g in ("sgd", "sgd_small", "adamw")},
    "excess_rank_one": rank1["excess"], "entropy_rate": chain.entropy_rate, "c_star": cstar,
    "flatness_sgd_max": float(G["sgd"]["flat"].max()), "flatness_adamw_min": float(G["adamw"]["flat"].min()),
    "e2_over_cstar_small_min": float((G["sgd_small"]["e2"] / cstar).min()),
    "e2_over_cstar_small_max": float((G["sgd_small"]["e2"] / cstar).max()), **verified.summary(),
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
# the larger count: there the claims hold in fewer seeds (review A's figures, from the closing note of issue 24,
# quoted as the review's and not re-run at the defaults: on the mirror chain, seeds 21 to 40, the alignment claim held
# in 16 of the 20 seeds and the rank-one claim in 18 of them, a rate of about 0.8; CI's second parameter set re-runs
# those seeds), so that one or two more failing seeds out of 10 would take a count's lower end below `rate`, while
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
#   $(0.1, 0.4)$, $W_1$ and $W_2$ stayed at their random start, while at its mirror $(0.4, 0.1)$, with the same
#   $c^*$, they became rank one: the outcome depends on more than $c^*$ (the full model is not symmetric under
#   relabeling the symbols);
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

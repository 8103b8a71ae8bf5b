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
# # Fig. 4 as the authors ran it: the 2-token model and its initializations
#
# Sec. 5.2 of {cite:t}`makkuva2024local` carries the initialization guideline over to the full transformer
# (Fig. 4). The authors' code does not train the paper's binary model, where the symbol $x_n \in \{0, 1\}$ scales one
# embedding vector $e$: it trains a model with a **2-token vocabulary** (a $2 \times d$ token embedding with rows
# $E_0, E_1$, tied to a 2-logit head with biases $(b_0, b_1)$), and its two guideline initializations are constants
# in *that* parameterization. This chapter derives what the 2-token model is in the paper's terms, reads the
# authors' two initializations canonically, and settles Fig. 4 at the paper's scale (stored runs) and reduced (live).
#
# ## What this chapter shows
#
# 1. **The same function, other dynamics.** The 2-token model is the binary model under $e = E_1 - E_0$,
#    $p_n = P_n + E_0$, $b = b_1 - b_0$ (logits agree to {glue:text}`af4_map_err`), but gradient flow moves $(e, p)$
#    with the metric $JJ^\top$ of the map ({glue:text}`af4_vel_err`) ([the map](#sec-af4-map)).
# 2. **The authors' initializations.** The submitted code reads as $w = -d$ with a small random $e$; the public code
#    as $w = -2d$ with $e = 0$ and every ReLU dead; neither is $(e, w) = (-2\sqrt2, -16)$
#    ([the inits](#sec-af4-inits)).
# 3. **Fig. 4 at the paper's scale** (stored, 20 seeds per initialization and chain; each count a claim,
#    Bonferroni over {glue:text}`af4_family`): the public code's init ends at $H(\pi)$ where $p + q > 1$ in
#    {glue:text}`af4_pub_stay` seeds; the submitted code's reaches the entropy rate there in
#    {glue:text}`af4_sub_reach`, the guideline point on both chains in {glue:text}`af4_guide_reach`; the standard init
#    sits on the $H(\pi)$ plateau in {glue:text}`af4_std_plateau` and leaves it in {glue:text}`af4_std_left`
#    (median {glue:text}`af4_std_median`) ([stored runs](#sec-af4-stored)).
# 4. **Why.** A dead feed-forward layer pins $c \approx \lVert e \rVert^2 \ge 0$ ([why](#sec-af4-why)). Live runs:
#    the public code's init stays pinned at $H(\pi)$ for $p + q > 1$ in {glue:text}`af4_live_pub` seeds and reaches the
#    bigram side for $p + q < 1$ in {glue:text}`af4_live_pub_low`; the guideline point in {glue:text}`af4_live_guide`
#    ([live runs](#sec-af4-live)).
#
# ## Parameters
#
# Claims 1 and 2 hold for every $d$, $N$ and attention (1 by the derivation, checked at the sizes below; 2 by
# construction and by the canonical reading); claim 3 is about the stored runs at exactly their settings; the live
# claims hold on the range of the table (checked at the defaults and at its edges, `book/ci_params/authors_fig4.yaml`,
# with another block of training seeds). Where the range stops, and why, is said in [the live runs](#sec-af4-live).

# %% tags=["parameters"]
p_high = 0.5  # P(1|0) of the live chain with p + q > 1 (the paper's Fig. 4 chain)
q_high = 0.8  # P(0|1) of that chain
p_low = 0.2  # P(1|0) of the live chain with p + q < 1
q_low = 0.3  # P(0|1) of that chain
margin = 0.2  # both live chains at least this far from the line p + q of 1
check_dims = [2, 4, 8]  # embedding dimensions of the equivalence checks
check_lengths = [4, 32, 256]  # context lengths N of the equivalence checks
live_length = 128  # context N of the live reduced run (stored runs: 1024; the only value checked)
live_steps = 400  # AdamW steps of the live run (stored runs: 1000; the only value checked)
live_seeds = 10  # seeds per chain and initialization of the live run (at least 10)
live_seed0 = 100  # first training seed of the live runs (they use live_seed0 to live_seed0 + live_seeds - 1)
rate = 0.5  # a live claim over seeds holds when the one-sided 95 % Wilson lower end of its rate exceeds this
slice_steps = 40  # first steps of one stored run per initialization re-executed (at least 40, at most half the shortest measured deterministic prefix: see the slice)
slice_seed = 0  # which stored seed the slice re-executes (any of the stored seeds 0 to 19)
slice_tol = 2e-6  # max train-loss difference to the stored curve (twice the level that defines the deterministic prefix, about 10 times the largest difference measured in the cap; see the slice)
at_tol = 0.02  # nats: a run is at a yardstick when its held-out loss is this close (under half of either chain's gap; at most 0.02)
c_pin = 0.05  # stored runs only (they store no noise estimate of c-hat): pinned when the final c-hat is at least -c_pin |c*| (at most 0.05)
pin_z = 3.0  # live runs: c-hat pinned at zero or above when at least -pin_z standard errors of its measured held-out noise (at most 3)
noise_batches = 8  # live runs: fresh held-out batches on which c-hat and its standard error are measured (at least 4)
bigram_ratio = 0.5  # live runs: on the bigram side when the final c-hat / c* exceeds this (at least 0.5)
plateau_from = 100  # standard init at p + q > 1: the plateau count starts here (after the bias transient)
plateau_steps = 200  # ... and ends here
reach_by = 300  # submitted-code init at p + q > 1: counted as reaching the entropy rate by this step
submitted_steps = 400  # steps of the code submitted with the paper (reference notes): where its runs would end
workers = 2  # processes for the live runs (1: in this kernel)
seed = 0  # seed of the random weights of the equivalence checks


# %%
from markovlib.book import specs
SPEC = specs.load("authors_fig4")
globals().update(SPEC.check(globals()))
SPEC.table()

# %%
# %matplotlib inline
import json
import math

import matplotlib.pyplot as plt
import numpy as np
import torch

from markovlib.book import plotting
from markovlib.book.formatting import bound, fixed, fraction
from markovlib.book.glue import glue
from markovlib.book.inference import wilson_lower_z
from markovlib.book.report import Verification
from markovlib.book.specs.authors_fig4 import DATA, FIG4_PARTS, PREFIX, PREFIX_LEVEL, STORED, prefix_of, slice_cap
from markovlib.book.sweep import record_results
from markovlib.numerics.survival import kaplan_meier, median_time
from markovlib.transformer import fig4_checks, fig4_drawings, fig4_stored, stored_runs
from markovlib.transformer.config import recipe
from markovlib.transformer.runs import train_many

torch.set_num_threads(1)
plotting.use_style()
verified = Verification()  # one record per claim; the "What was verified" table is generated from it
high, low = (p_high, q_high), (p_low, q_low)
INIT_LABELS = {"standard": "standard N(0, 0.02^2) (2-token)", "authors_submission": "authors, submitted code",
               "authors_public": "authors, public code", "guideline": "guideline (1, -1) (binary model)"}

# %% [markdown]
# (sec-af4-map)=
# ## The 2-token model is the binary model, reparameterized
#
# In the 2-token model the embedded input at position $n$ is $E_{x_n} + P_n$, and the head's two logits are
# $\langle E_k, z_n\rangle + b_k$, $k \in \{0, 1\}$. Since $x_n \in \{0, 1\}$,
#
# $$
# E_{x_n} + P_n = x_n (E_1 - E_0) + (P_n + E_0),
# $$
#
# which is the binary model's $x_n e + p_n$ with
#
# $$
# e = E_1 - E_0, \qquad p_n = P_n + E_0, \qquad b = b_1 - b_0 .
# $$ (eq-two-token-map)
#
# The attention and feed-forward layers are shared, so $z_n$ is the same in both models. A 2-class softmax
# cross-entropy depends on its logits only through their difference, $\langle E_1 - E_0, z_n\rangle + b_1 - b_0
# = \langle e, z_n \rangle + b$, which is the binary model's logit: the two losses are equal, for every weight.
#
# The check below builds the binary model *by hand* from random 2-token weights (the independent reference
# `markovlib.transformer.fig4_reference.binary_by_hand`, not through `markovlib.transformer.two_token`) and compares the logits and the losses, for several $d$ and $N$ and all three
# attentions. The logits are compared relative to their size (float64 rounding grows with it); the weights are
# $\mathcal N(0, 0.5^2)$, so the logits reach a few tens.

# %% [markdown]
# For every attention, $d$ and $N$ of the parameters: random 2-token weights, the binary model built by hand, and the largest differences of logits and losses.

# %%
gen = torch.Generator().manual_seed(seed)
MAP = fig4_checks.map_check(check_dims, check_lengths, high, seed, gen)
print(MAP["table"])

# %% tags=["hide-input"]
verified.record("the 2-token model = the binary model under (eq-two-token-map): logits", MAP['logit'] < 1e-12,
                check=f"random weights N(0, 0.25), {MAP['n']} cases (3 attentions, several d and N), relative to max(1, |logit|); "
                      "the binary model built by hand",
                measured=bound(MAP['logit'], 1e-14), tolerance="1e-12", kind="independent")
verified.record("... and losses (softmax cross-entropy = binary cross-entropy of the logit difference)",
                MAP['loss'] < 1e-12, check="same cases", measured=bound(MAP['loss'], 1e-14), tolerance="1e-12",
                kind="independent")
_ = verified.record("markovlib.transformer.two_token.binary_equivalent implements the map", MAP['pkg'] < 1e-12,
                    check="against the map written out", measured=bound(MAP['pkg'], 1e-14), tolerance="1e-12",
                    kind="same code")
_ = glue("af4_map_err", bound(MAP['logit'], 1e-14))

# %% [markdown]
# ### The gradient dynamics differ
#
# The map $J: (E_0, E_1, P) \mapsto (e, p)$ is linear and onto, with a one-dimensional freedom per coordinate
# ($E_0$ can be anything). By the chain rule,
# $\partial L/\partial E_1 = \partial L/\partial e$,
# $\partial L/\partial E_0 = -\partial L/\partial e + \sum_n \partial L/\partial p_n$ and
# $\partial L/\partial P_n = \partial L/\partial p_n$, so gradient flow in the 2-token parameters moves
#
# $$
# \dot e = -\Big(2\,\frac{\partial L}{\partial e} - \sum_n \frac{\partial L}{\partial p_n}\Big), \qquad
# \dot p_n = -\Big(\frac{\partial L}{\partial p_n} - \frac{\partial L}{\partial e}
#            + \sum_m \frac{\partial L}{\partial p_m}\Big),
# $$ (eq-two-token-velocity)
#
# the binary gradient multiplied by $JJ^\top$, where the binary model's own flow is
# $(\dot e, \dot p) = -(\partial_e L, \partial_p L)$. The embedding moves twice as fast, and it is coupled to
# the sum of all positional gradients. Under Adam, which normalizes each coordinate separately, the two
# parameterizations differ further. Below, autograd on the 2-token model gives the left side and autograd on
# the binary model, through (eq-two-token-velocity), the right side.

# %%
VEL = fig4_checks.velocity_check(high, seed, gen)
print(VEL["table"])

# %% tags=["hide-input"]
verified.record("2-token gradient flow moves (e, p) by (eq-two-token-velocity)", VEL['err'] < 1e-12,
                check="autograd on both models at random weights (the right side through "
                      "markovlib.transformer.two_token.induced_binary_gradient, which writes out the derived formula)",
                measured=bound(VEL['err'], 1e-14), tolerance="1e-12", kind="independent")
_ = verified.record("... which is not the binary model's flow", abs(VEL['ratio'] - 1) > 0.1,
                    check="|de/dt| ratio of the two parameterizations, autograd", measured=fixed(VEL['ratio'], 1),
                    tolerance="differs from 1 by > 0.1", kind="independent")
_ = glue("af4_vel_err", bound(VEL['err'], 1e-14))

# %% [markdown]
# (sec-af4-inits)=
# ## The authors' two initializations, read canonically
#
# In the canonical parameterization (Sec. 3 of the paper; chapter {doc}`canonical_model`) the feed-forward
# weights are $W_1 = |w|\, u \alpha^\top$ and $W_2 = w\, \alpha u^\top$ with $\lVert \alpha \rVert = 1$, $u \ge 0$,
# $\lVert u \rVert = 2$. A constant matrix $W_1 = k\,\mathbf 1 \mathbf 1^\top$ ($r \times d$, $r = 4d$) is of this
# form with $\alpha = \mathbf 1/\sqrt d$, $u = 2\,\mathbf 1/\sqrt r$ and
# $|w| \cdot 2/\sqrt{rd} = k$, that is $|w| = k\sqrt{rd}/2 = k d$; $W_2 = -k\,\mathbf 1 \mathbf 1^\top$ gives
# $w = -kd$.
#
# * **The code submitted with the paper:** $W_1$ all 1, $W_2$ all $-1$: $w = -d$ ($-8$ at $d = 8$). The
#   embeddings are $\mathcal N(0, 0.02^2)$, so $e = E_1 - E_0$ is small and random.
# * **The later public code:** $W_1$ all 2, $W_2$ all $-2$: $w = -2d$ ($-16$). Both token rows are $-\mathbf 1$,
#   so $e = E_1 - E_0 = 0$ *exactly*, and $p_n = P_n + E_0 = 0.5 - 1 = -1/2$ in every entry. Then
#   $y_n \approx -\tfrac12 \mathbf 1$ (the attention is $\mathcal N(0, 0.02^2)$), $W_1 y_n \approx -d\,\mathbf 1 < 0$:
#   every ReLU is dead. The logits are the biases, both 0, so the starting loss is $\log 2$ exactly.
#
# The point $(e, w) = (-2\sqrt 2, -16)$ is what the public constants give in the *binary* model, where the
# embedding vector itself is $-\mathbf 1$ (package init `public_constants_scalar`); it is not the authors' model.

# %%
d_ = 8
INITS = fig4_checks.authors_inits(d_, high, seed)
print(INITS["table"])
s_sub, s_pub, e_pub, relu_margin, start_pub = (INITS[k] for k in ("sub", "pub", "e_pub", "relu_margin", "start_pub"))

# %% tags=["hide-input"]
verified.record("submitted code reads canonically as w = -d", abs(s_sub.w + d_) < 1e-9,
                check="markovlib canonical_scalars of the mapped model against the derivation",
                measured=bound(s_sub.w + d_, 1e-11), tolerance="1e-9", kind="same code")
verified.record("public code reads canonically as w = -2d", abs(s_pub.w + 2 * d_) < 1e-9,
                check="markovlib canonical_scalars of the mapped model against the derivation",
                measured=bound(s_pub.w + 2 * d_, 1e-11), tolerance="1e-9", kind="same code")
verified.record("public code: e = E_1 - E_0 = 0 exactly", e_pub == 0,
                check="both token rows are set to -1 (by construction)", measured=f"max |E_1 - E_0| = {fixed(e_pub, 1)}",
                tolerance="0", kind="identity")
verified.record("public code: every ReLU is dead at the start", relu_margin < 0,
                check="largest W_1 y_n over 16 x 1024 sampled positions, through the package model",
                measured=f"max W_1 y_n = {fixed(relu_margin, 1)}", tolerance="< 0", kind="same code")
_ = verified.record("public code: the starting loss is log 2", abs(start_pub - math.log(2)) < 1e-12,
                    check="e = 0 and biases 0 make every logit 0 (by construction)",
                    measured=bound(start_pub - math.log(2), 1e-14), tolerance="1e-12", kind="identity")

# %% [markdown]
# (sec-af4-why)=
# ## Why a dead feed-forward layer pins $c \ge 0$
#
# Where every ReLU is dead, $z_n = y_n$, and $W_1$, $W_2$ get no gradient (the ReLU's derivative is 0): with
# the authors' decay groups only weight decay acts on them, shrinking them by a factor $1 - \eta\lambda$ per
# step, which keeps $W_1 y_n < 0$ as long as $y_n$ stays near $-\tfrac12 \mathbf 1$. The model is then embedding
# plus attention. Its context coefficient, the logit after a 1 minus after a 0
# ({prf:ref}`Lemma 2 <lem-2>`), is $\langle e, y(1) - y(0)\rangle = \lVert e \rVert^2 + \langle e, \Delta_{\rm att}
# \rangle$, where the attention's share is small while its weights are small: $c \approx \lVert e \rVert^2 \ge 0$.
# The loss after optimizing the bias ({prf:ref}`Lemma 5 <lem-5>`) is the convex reduced loss $g(c)$, minimal at
# $c^* = \log\frac{(1-p)(1-q)}{pq}$. For $p + q > 1$, $c^* < 0$, and over $c \ge 0$ the best is $c = 0$: the unigram
# predictor, loss $H(\pi)$. For $p + q < 1$, $c^* > 0$ is reachable by growing $\lVert e \rVert$ alone.
#
# **AdamW on the flat line.** At $e = 0$ the loss is flat in $e$ to first order once $b$ is optimal
# ($\partial L/\partial e = (\sigma(b) - \pi_1)\,\mathbb E[z]$), so plain gradient descent hardly moves. AdamW
# divides each coordinate's step by the root of its running squared gradient, so a small gradient of consistent
# sign moves a coordinate by up to about the learning rate per step (a gradient that is noise around zero moves it
# much less): the model can drift along directions that gradient flow would hardly take. Whether that drift leaves the unigram line decides the run.

# %% [markdown]
# (sec-af4-stored)=
# ## Fig. 4 at the paper's scale (stored runs)
#
# Run it again, or at other settings, with `python tools/run_fig4.py --workers 2` (the second part below took
# {glue:text}`af4_part_wall`), then `python tools/execute_notebook.py book/authors_fig4.ipynb`.
#
# The runs below were made in two parts: seeds 0 to 4 with `python tools/run_fig4.py --workers 2`
# (`book/data/fig4/manifest.json`), and seeds 5 to 19 with
# `python tools/run_fig4.py --workers 2 --seeds 5-19 --tag seeds5_19` (`manifest_seeds5_19.json`). The tool calls
# `python -m markovlib train` for each initialization, seed and chain; each part's manifest records the exact
# commands, the versions, the seeds, the git commit and the checksums, and `markovlib.book.stored.read_parts` checks
# the checksums, that the parts hold disjoint seeds, and that they agree on the chains and initializations: $N = 1024$, batch 16, $d = 8$, 1000 AdamW steps, lr
# $2\cdot10^{-3}$, betas $(0.9, 0.95)$, weight decay $10^{-3}$ on the layer's weight matrices only, OneCycleLR
# (2 % warm-up from lr/100, cosine down to lr/5), no gradient clipping
# (`markovlib.transformer.config.recipe("authors_fig4")`, the one recipe that the stored runs, the slice and the live run
# below share), in float32 on one CPU thread, where the authors' code trains under float16 autocast on a GPU (see
# "Not the authors' numerics" below). Twenty seeds, 0 to 19, per initialization and chain.
# A run is *at* a yardstick when its held-out loss is within `at_tol` of it; it *leaves* $H(\pi)$ at the first
# evaluation below $H(\pi) - $ `at_tol`.
#
# **Not the authors' numerics.** The stored and live runs use the authors' optimizer settings (AdamW, betas,
# weight decay groups, OneCycleLR, batch, context, steps), but train in float32 on a CPU, one thread; the authors'
# code trains on a GPU under float16 autocast. The outcomes are claimed for float32 training only: whether half
# precision changes the plateau (its gradients are tiny on the unigram line) is not tested here.

# %%
tables = fig4_stored.outcome_tables(STORED, INIT_LABELS, at_tol)
print(fig4_stored.outcome_table(tables, INIT_LABELS, at_tol))

# %%
fig4_drawings.stored_curves(STORED, tables, INIT_LABELS)
plt.show()

# %% [markdown]
# **Reading the outcomes with the canonical picture.**
#
# * *Public code* ($e = 0$, $w = -2d$, dead ReLUs): the model starts on the unigram critical line at $\log 2$,
#   learns the bias down to $H(\pi)$, and stays there where $p + q > 1$, because a dead feed-forward layer pins
#   $c \approx \lVert e \rVert^2 \ge 0$ while $c^* < 0$. Where $p + q < 1$, $c^* > 0$ is reachable by the embedding
#   alone, and it reaches the entropy rate.
# * *Submitted code* ($w = -d < -1/\sqrt 2$, $e$ small): for $p + q > 1$ the canonical flow from it is global
#   ({prf:ref}`Thm 2 <thm-2>`), and the full model leaves $H(\pi)$ within its first evaluations and reaches the
#   entropy rate ({glue:text}`af4_sub_reach`). For $p + q < 1$ its
#   energy is far below $E_{\rm sad}$, so the canonical *flow* would end on the $w$-axis
#   ({prf:ref}`Thm 8 <thm-8>`); the full model under AdamW reaches the entropy rate all the same. The canonical
#   picture does not decide this case for the full model and its optimizer.
# * *Standard* $\mathcal N(0, 0.02^2)$: a small initialization, so $E_0 < E_{\rm sad}$. The run first sits on the
#   $H(\pi)$ plateau, as the paper's Fig. 4 shows, and then, under AdamW and within the authors' 1000 steps, leaves
#   it. The paper states the opposite outcome: "Starting from the standard initialization, the model converges to a
#   local minimum corresponding to the unigram model" (Fig. 4 caption). Whether the paper's run was shorter, or its
#   numerics kept it on the plateau, is not tested here; in the stored runs {glue:text}`af4_std_left` seeds leave it within the 1000 steps, between steps
#   {glue:text}`af4_std_leave_first` and {glue:text}`af4_std_leave_last` (the Kaplan-Meier curves below). The seed not counted was leaving at the end: {glue:text}`af4_std_censored`;
#   with `at_tol` halved, {glue:text}`af4_std_left_half` seeds leave within the 1000 steps, so the one missing seed
#   marks where the line is drawn, not a run that stays. At step `submitted_steps` = 400 of these 1000-step runs,
#   {glue:text}`af4_std_at_400` seeds were still at $H(\pi)$; the code submitted with the paper stops at step 400
#   with its own learning-rate schedule (cosine to $\mathrm{lr}/5$ by step 400), which these runs do not follow, so this
#   is not a measurement of that code. (An earlier version said that "the paper's figure ends
#   while the runs are still on the plateau"; the paper's text gives neither the length of the run behind Fig. 4
#   nor its numerics, so that sentence is dropped.) In this recipe the plateau is long but not a wall (the chapter
#   {doc}`init_guideline` studies how long it is).
# * *Guideline* $(1, -1)$ in the binary model: inside the data-agnostic region, at the entropy rate on both chains.

# %% [markdown]
# The thresholds of the counts below (`at_tol`, `c_pin`, `plateau_steps`, `reach_by`) were fixed in the
# parameters cell after the first seeds of the Fig. 4 chain had run and before the rest were made; the start of the
# plateau window was moved from ten to 100 (`plateau_from`) after those first runs showed the bias transient (from $\log 2$ down to $H(\pi)$,
# which in the stored runs at $p + q > 1$ first comes within `at_tol` of $H(\pi)$
# {glue:text}`af4_bias_steps`, right after the 20-step warm-up). None of them was changed after seeds 5 to
# 19 were run: those seeds were made for these counts, with the thresholds as they stood. With 20 stored seeds per
# initialization and chain each count is a claim, a row of the table at the end: it holds when the one-sided
# Wilson lower end of its rate, at level $1 - 0.05/m$ with $m =$ {glue:text}`af4_family` (Bonferroni over the
# counts), exceeds `rate`. The last count (the standard init leaves $H(\pi)$ within the 1000 steps) was added
# when the 20 seeds were planned, after the first five seeds had all left it; it is tested on the fifteen new
# seeds as much as on the old ones.

# %%
hi_pq = max(tables, key=sum)
ch_hi = tables[hi_pq][0]
seeds_hi = {init: stored_runs.runs_per_seed(STORED, *hi_pq, init) for init in INIT_LABELS}  # per seed, p + q > 1
final = stored_runs.final_value
stored_counts = fig4_stored.stored_claims(STORED, tables, at_tol=at_tol, c_pin=c_pin, reach_by=reach_by,
                                          plateau_from=plateau_from, plateau_steps=plateau_steps)

# %% [markdown]
# Each count with its Bonferroni Wilson interval, and its claim:

# %% tags=["hide-input"]
glue("af4_family", str(len(stored_counts)))
z_claims = wilson_lower_z(0.05, len(stored_counts))  # the interval whose lower end decides each claim
print(f"stored runs ({STORED.seed.nunique()} seeds per initialization and chain): counts with their two-sided "
      f"{100 * (1 - 2 * 0.05 / len(stored_counts)):.4g} % Wilson intervals; each is a claim (one-sided Wilson lower end "
      f"> rate = {rate:g}, Bonferroni over {len(stored_counts)})")
for text, (name, flags) in stored_counts.items():
    print(f"  {text}: {glue(name, stored_runs.count_text(flags, z_claims))}")
    verified.record_count(text, sum(flags), len(flags), rate=rate, family=len(stored_counts), kind="stored data",
                          check="counted from the stored curves (book/data/fig4, both parts)")

# %% [markdown]
# The bias transient (the first evaluation within `at_tol` of $H(\pi)$, standard init, $p + q > 1$), which `plateau_from` must follow in every seed:

# %% tags=["hide-input"]
leave_std = tables[hi_pq][1]["standard"]["leaves"]
ev_std = [g.dropna(subset=["eval_loss"]).sort_values("step") for g in seeds_hi["standard"]]
bias_steps = [int(ev.step[(ev.eval_loss - ch_hi.marginal_entropy).abs() < at_tol].min()) for ev in ev_std]
assert max(bias_steps) < plateau_from, bias_steps  # plateau_from must lie after the bias transient in every seed
glue("af4_bias_steps", f"at step {bias_steps[0]} in every seed" if min(bias_steps) == max(bias_steps)
     else f"between steps {min(bias_steps)} and {max(bias_steps)}")
print(f"bias transient (standard init, p + q > 1): within at_tol of H(pi) from step {min(bias_steps)} to {max(bias_steps)}")

# %% [markdown]
# The seeds not counted as leaving $H(\pi)$, and the count at half `at_tol` (how much "leaves" depends on the line):

# %% tags=["hide-input"]
plateau_sd = float(np.mean([g.query("@plateau_from <= step <= @plateau_steps").eval_loss.std() for g in ev_std]))
stays = [(int(g.seed.iloc[0]), ch_hi.marginal_entropy - float(g.eval_loss.iloc[-1]),
          ch_hi.marginal_entropy - float(g.eval_loss.iloc[-2])) for g, t in zip(ev_std, leave_std) if not np.isfinite(t)]
censored_text = glue("af4_std_censored", "none" if not stays else "; ".join(
    f"seed {s_}, {fixed(d_prev, 3)} and then {fixed(d_end, 3)} nats below H(pi) at its last two evaluations, "
    f"{d_end / plateau_sd:.0f} times the spread of its plateau (SD {fixed(plateau_sd, 4)} nats)" for s_, d_end, d_prev in stays))
leave_half = np.array([float(g.step[g.eval_loss < ch_hi.marginal_entropy - at_tol / 2].min())
                       if (g.eval_loss < ch_hi.marginal_entropy - at_tol / 2).any() else math.nan for g in ev_std])
glue("af4_std_left_half", fraction(int(np.isfinite(leave_half).sum()), len(leave_half)))
print(f"standard init, p + q > 1: not counted as leaving: {censored_text}; leaving at at_tol / 2: "
      f"{fraction(int(np.isfinite(leave_half).sum()), len(leave_half))}")
glue("af4_std_leave_first", f"{np.nanmin(leave_std):.0f}")
glue("af4_std_leave_last", f"{np.nanmax(leave_std):.0f}")
at_end_of_submitted = int(np.sum(~(leave_std <= submitted_steps)))  # NaN (never left) counts as still there
print(f"standard init at p + q > 1 leaves H(pi) between steps {np.nanmin(leave_std):.0f} and {np.nanmax(leave_std):.0f}; "
      f"still at H(pi) at step {submitted_steps}: {glue('af4_std_at_400', fraction(at_end_of_submitted, len(leave_std)))}")

# %% [markdown]
# **How long the standard init stays on the plateau.** The time to leave $H(\pi)$ (the first evaluation below
# $H(\pi) -$ `at_tol`) at $p + q > 1$, per initialization over the stored seeds, as Kaplan-Meier curves of the
# fraction still at $H(\pi)$, censored at the last step (a run that never leaves counts as censored there), with
# 95 % log-log pointwise intervals, drawn from the same per-seed steps as the table above. The standard init's
# median time to leave is {glue:text}`af4_std_median` (with `at_tol` halved:
# {glue:text}`af4_std_median_half`). The submitted-code and guideline inits are below $H(\pi) -$ `at_tol` from
# their first evaluation: they never sit on $H(\pi)$, and their curves drop at the first evaluation.
#

# %%
horizon = int(STORED.step.max())
leaves = {init: tables[hi_pq][1][init]["leaves"] for init in INIT_LABELS}
_, kms = fig4_drawings.leave_survival(leaves, INIT_LABELS, horizon, f"p = {hi_pq[0]}, q = {hi_pq[1]}: time to leave "
                                      f"H(pi), {STORED.seed.nunique()} stored seeds (Kaplan-Meier, 95 % band)")
plt.show()
med, med_lo, med_hi = (median_time(kms["standard"], curve) for curve in ("survival", "lower", "upper"))

# %% tags=["hide-input"]
assert np.isfinite(med), "the standard init's median time to leave H(pi) is not reached within the stored steps"
km_half = kaplan_meier(np.where(np.isfinite(leave_half), leave_half, horizon), np.isfinite(leave_half))
glue("af4_std_median_half", f"step {median_time(km_half):.0f}")
glue("af4_std_median", f"step {med:.0f} (95 % interval {med_lo:.0f} to "
     + (f"{med_hi:.0f})" if np.isfinite(med_hi) else "beyond the last step)"))
_part = FIG4_PARTS[-1]["provenance"]
glue("af4_part_wall", f"{_part['wall_seconds'] / 60:.0f} minutes for its {len(FIG4_PARTS[-1]['runs'])} runs on "
     f"{_part['cpu'].get('logical_cores', '?')} cores")
print(f"standard init, p + q > 1: median time to leave H(pi) step {med:.0f} "
      f"(95 % interval {med_lo:.0f} to {med_hi:.0f}); second part: {_part['wall_seconds'] / 60:.0f} min")

# %% [markdown]
# (sec-af4-slice)=
# ## A deterministic slice of the stored runs, re-executed
#
# The stored curves were made by the package's own `Trainer` through the CLI. Here the first `slice_steps`
# steps of seed `slice_seed` are re-run for each initialization and chain with the same configuration (the
# learning-rate schedule is built for the full 1000 steps, so the slice sees exactly the stored run's first
# learning rates) and compared with the stored training losses at every step.
#
# **How far the runs are deterministic, measured for every stored run.** `tools/run_slice_prefix.py fig4` re-runs
# the first 200 steps of *every* stored run (every seed, chain and initialization) and stores the difference to
# the stored training loss at every step (`book/data/fig4/slice_prefix.csv`, one block per numeric configuration
# in which it was run: {glue:text}`af4_prefix_configs`). A run's *deterministic prefix* is the number of leading
# steps in which that difference stays below $10^{-6}$ (about 16 units in the last place of a float32 loss near
# 0.6). AdamW's normalized steps do not amplify a last-bit difference at once, but some runs drift: the shortest
# prefix over the {glue:text}`af4_prefix_runs` measured runs is {glue:text}`af4_prefix_min` steps
# ({glue:text}`af4_prefix_which`), and {glue:text}`af4_prefix_full` of them stay within $10^{-6}$ for all 200
# steps. The slice is therefore capped at half the shortest prefix ({glue:text}`af4_slice_cap` steps; the parameters
# cell refuses more, for any stored seed), and at 40 steps at least. Within that cap the largest difference measured
# over every stored run is {glue:text}`af4_prefix_agree`. The tolerance `slice_tol` $= 2\cdot10^{-6}$ is twice the
# level that defines the prefix, and the printed bound, $10^{-6}$, is the prefix level itself: within the cap every
# measured run of every configuration stays below it by definition of the cap, and the largest difference measured
# there is {glue:text}`af4_prefix_agree_ratio` times smaller (the check below asserts a margin of at least 3). A negative control shows that the tolerance still
# discriminates: the same slice of the standard init on Fig. 4's chain, with the learning rate scaled by 1.01, misses
# the stored curve by more than the tolerance.

# %% tags=["hide-input"]
manifest = json.loads(open(DATA / "manifest.json").read())
cfg_of = {name: spec for name, spec in manifest["inits"].items()}
in_cap = PREFIX[PREFIX.step <= slice_cap]
glue("af4_prefix_configs", ", ".join(sorted(PREFIX.config.unique())))
glue("af4_prefix_runs", str(len(prefix_of)))
glue("af4_prefix_min", str(int(prefix_of.min())))
_worst = prefix_of.idxmin()
glue("af4_prefix_which", f"configuration {_worst[0]}, seed {_worst[4]}, chain ({_worst[1]:g}, {_worst[2]:g}), init {_worst[3]}")
glue("af4_prefix_full", fraction(int(np.sum(prefix_of >= 200)), len(prefix_of)))
glue("af4_slice_cap", str(slice_cap))
_agree = float(in_cap.abs_diff.max())  # stored data: the same on every machine
glue("af4_prefix_agree", f"{_agree:.1e}")
assert _agree * 3 <= PREFIX_LEVEL, _agree  # the printed bound (the prefix level) keeps a margin of 3 over every measured difference in the cap
glue("af4_prefix_agree_ratio", "more than 3" if _agree == 0 else f"{PREFIX_LEVEL / _agree:.0f}")
print(f"deterministic prefix (train loss within {PREFIX_LEVEL:g} of the stored one), over {len(prefix_of)} stored runs "
      f"and configurations: shortest {int(prefix_of.min())} steps; slice capped at {slice_cap} steps")
SLICE_PRINT = slice_tol / 2  # printed bound: the prefix level; >= 3x the largest difference measured within the cap

# %% [markdown]
# `stored_runs.replay_error` re-executes the slice with the package's `Trainer` and the recipe `authors_fig4`:

# %%
worst_slice, n_slice = stored_runs.replay_error(STORED, cfg_of, tables, slice_seed, slice_steps)
print(f"{n_slice} stored runs (seed {slice_seed}), first {slice_steps} steps re-executed: max |train loss - stored| "
      f"{bound(worst_slice, SLICE_PRINT)}")

# %% tags=["hide-input"]
_ = verified.record("the stored paper-scale runs are reproduced by the package (first steps, one seed per init)",
                n_slice == len(tables) * len(cfg_of) and worst_slice < slice_tol,
                check=f"{n_slice} runs x {slice_steps} steps re-executed with the stored configuration, every step "
                      f"(steps capped at half the shortest deterministic prefix over every stored seed)",
                measured=bound(worst_slice, SLICE_PRINT), tolerance=f"{slice_tol:.0e}", kind="stored data")

# %% [markdown]
# The negative control: one run, the standard init on Fig. 4's chain, with the learning rate scaled by 1.01.

# %%
ctrl_slice, _ = stored_runs.replay_error(STORED, cfg_of, tables, slice_seed, slice_steps, lr_factor=1.01,
                                         only=(hi_pq, "standard"))
print(f"negative control (learning rate x 1.01, standard init, p = {hi_pq[0]}, q = {hi_pq[1]}): "
      f"max |train loss - stored| {ctrl_slice:.0e}")

# %% tags=["hide-input"]
_ = verified.record("... and the slice's tolerance catches a 1 % change of the learning rate", ctrl_slice > slice_tol,
                    check="the same slice with the learning rate scaled by 1.01 (standard init, Fig. 4's chain) misses "
                          "the stored curve by more than the tolerance",
                    measured=f"{ctrl_slice:.0e}", tolerance=f"> {slice_tol:.0e}", kind="stored data")

# %% [markdown]
# (sec-af4-live)=
# ## The same experiment, live and reduced
#
# The chapter's own runs repeat the comparison at a context of `live_length` and `live_steps` steps for the
# two chains of the parameters cell, with `live_seeds` seeds per chain (training seeds `live_seed0` onwards), for
# the two initializations whose outcome the canonical picture decides: the public code's init (dead ReLUs pin
# $c \ge 0$, so it ends at $H(\pi)$ where $p + q > 1$, and reaches $c^* > 0$ where $p + q < 1$) and the guideline
# point (the entropy rate on both sides). Each claim counts seeds per chain and holds when the one-sided 95 % Wilson
# lower end of its rate exceeds `rate` (fixed in the parameters cell); the guideline claim, tested on both chains,
# is Bonferroni-corrected over the two. Its count and interval are in the table at the end.
#
# **When is $\hat c$ pinned at zero?** $\hat c$ is measured from held-out sequences, so it carries sampling noise.
# For each live run we measure $\hat c$ on `noise_batches` fresh held-out batches, with its standard error from
# their spread, and count the run as pinned when $\hat c \ge -$ `pin_z` standard errors: a drift below zero that
# is larger than the noise is counted as leaving the pin, not as pinned. (The stored runs store $\hat c$ from two
# held-out batches and no noise estimate, so their claim above uses the looser `c_pin` instead.)
#
# **The range of the live claims.** They are stated for chains with $p, q$ in [0.1, 0.8], one on each
# side of the line $p + q = 1$ and at least `margin` $= 0.2$ from it: the chain with $p + q > 1$ with
# $p + q \le 1.3$ (so $|c^*| \le 1.39$, the default chain $(0.5, 0.8)$ and its mirror being the corners), and the chain with $p + q < 1$ with $c^* \le 2.25$ (the default chain $(0.2, 0.3)$,
# $c^* = 2.23$, at that edge: there the public code's init must grow $\lVert e \rVert^2$ to $c^*/2$ within the run,
# and a larger $c^*$ was not checked);
# at the context and step count of the parameters cell (`live_length` 128, `live_steps` 400, the only values the
# parameters cell accepts), for any training seeds with at least 10 per chain. It is checked at the defaults and at
# the edges of that range (`book/ci_params/authors_fig4.yaml`, another block of training seeds). Beyond it the
# reduced runs stop being decisive: on the chain with $p + q > 1$, AdamW's drift along the flat unigram line grows
# with $|c^*|$. At the old corner $p = q = 0.8$ an outside review's runs (not stored, not re-run here) left the pin in
# several seeds under the noise-based pin criterion; further out, exploratory runs (not stored) did so more often, and
# their guideline runs were on the bigram side but still above the entropy rate at the end, which is why the live
# claims read $\hat c$ rather than the loss. The range stops where these claims were checked.

# %%
LIVE_INITS = ("authors_public", "guideline")
live_cfgs = [dict(p=pq[0], q=pq[1], model=cfg_of[init]["model"], init=cfg_of[init]["init"], seed=live_seed0 + s_,
                  eval_every=max(1, live_steps // 20), device="cpu",
                  **recipe("authors_fig4", steps=live_steps, length=live_length))
             for pq in (high, low) for init in LIVE_INITS for s_ in range(live_seeds)]
live = train_many(live_cfgs, workers=workers)

# %% [markdown]
# Per run: at $H(\pi)$, pinned ($\hat c \ge -$ `pin_z` standard errors), $\hat c / c^*$ and the noise of $\hat c$:

# %%
outcome = fig4_checks.live_outcomes(live_cfgs, live, {cfg_of[k]["init"]: k for k in LIVE_INITS}, at_tol=at_tol,
                                    pin_z=pin_z, noise_batches=noise_batches, length=live_length)
pub_hi = [at_h and pin for at_h, pin, _, _ in outcome[high, "authors_public"]]
pub_lo = [ratio > bigram_ratio for _, _, ratio, _ in outcome[low, "authors_public"]]
noise_hi = max(se for _, _, _, se in outcome[high, "authors_public"])
print(f"public-code init at p + q > 1: largest held-out standard error of c-hat {bound(noise_hi, 0.01)} |c*|")

# %% tags=["hide-input"]
verified.record_count(f"live, p + q > 1 {high}: public-code init keeps c-hat >= 0 (within its noise) and ends at H(pi)",
                      sum(pub_hi), len(pub_hi), rate=rate, kind="independent",
                      check=f"live runs, context {live_length}, {live_steps} AdamW steps, seeds {live_seed0}+: final "
                            f"c-hat >= -{pin_z:g} standard errors (c-hat and its error on {noise_batches} fresh held-out "
                            f"batches) and held-out loss within at_tol = {at_tol} of H(pi)")
verified.record_count(f"live, p + q < 1 {low}: public-code init reaches the bigram side",
                      sum(pub_lo), len(pub_lo), rate=rate, kind="independent",
                      check=f"live runs: final c-hat / c* > {bigram_ratio:g} (c* > 0 is reachable by the embedding "
                            "alone; 0 at the unigram predictor)")
live_guide = []
for pq in (high, low):
    flags = [ratio > bigram_ratio for _, _, ratio, _ in outcome[pq, "guideline"]]
    live_guide += flags
    verified.record_count(f"live, p + q {'>' if sum(pq) > 1 else '<'} 1 {pq}: guideline (1, -1) ends at the bigram predictor",
                          sum(flags), len(flags), rate=rate, kind="independent", family=2,
                          check=f"live runs: final c-hat / c* > {bigram_ratio:g} (c-hat = c* at the bigram predictor, 0 at "
                                "the unigram one); one claim over the two chains")
glue("af4_live_pub", fraction(sum(pub_hi), len(pub_hi)))
glue("af4_live_pub_low", fraction(sum(pub_lo), len(pub_lo)))
glue("af4_live_guide", fraction(sum(live_guide), len(live_guide)))
print(f"public-code init at p + q > 1, pinned and at H(pi): {fraction(sum(pub_hi), len(pub_hi))} seeds; "
      f"at p + q < 1, on the bigram side: {fraction(sum(pub_lo), len(pub_lo))} seeds; "
      f"guideline at the bigram predictor, both chains: {fraction(sum(live_guide), len(live_guide))} seeds")

# %% tags=["hide-input"]
_ = record_results({
    "inits": ",".join(INIT_LABELS),
    **{f"start_loss/{init}": float(np.mean([final(g.iloc[:1], "eval_loss") for g in seeds_hi[init]]))
       for init in INIT_LABELS},
    **{f"final_loss/{init}": float(np.mean([final(g, "eval_loss") for g in seeds_hi[init]]))
       for init in INIT_LABELS},
    # the slowest seed's first step at the entropy rate; NaN if some seed never got there
    **{f"steps_to_bigram/{init}": float(np.max(tables[hi_pq][1][init]["bigram"])) for init in INIT_LABELS},
    **{f"stored_count/{name}": stored_runs.count_text(flags) for name, flags in stored_counts.values()},
    "slice_max_error": worst_slice,
    **verified.summary(),
})


# %% [markdown]
# ## Changes after review
#
# **Changed claims (review A).** (i) "The public code's init keeps $\hat c \ge 0$" was checked as
# $\hat c \ge -0.05\,|c^*|$, with the 0.05 justified as held-out noise; the noise measured here is far smaller, so
# drifts off the pin counted as pinned $\to$ pinned now means $\hat c \ge -$ `pin_z` standard errors of its
# measured held-out noise. (ii) The range of the chain with $p + q > 1$, $p, q \in [0.1, 0.8]$ $\to$ additionally
# $p + q \le 1.3$ (the corner $(0.8, 0.8)$ fails the stricter pin criterion), and the chain with $p + q < 1$ to
# $c^* \le 2.25$ (where the new row (iii) was checked). (iii) At $p + q < 1$ the row "keeps
# $\hat c \ge 0$" could not fail for a run that reached the bigram predictor $\to$ "reaches the bigram side,
# $\hat c/c^* > 1/2$". (iv) The guideline claim, tested on two chains, is Bonferroni-corrected over them. (v) "The
# whole measured prefix of 200 steps is deterministic" was measured on seed 0 only and fails for seed 2 $\to$ the
# prefix is measured for every stored run and the slice is capped at half the shortest one, with its tolerance set
# from that measurement and a negative control. (vi) `live_length`, `live_steps` accepted any value $\to$ only the
# checked ones; thresholds only stricter than the defaults; the live seeds can be chosen (`live_seed0`). (vii) The
# stored table printed the step of the last seed leaving $H(\pi)$ rounded up to a hundred $\to$ the step itself.
# (viii) The slice's tolerance was $2\cdot10^{-5}$ $\to$ $2\cdot10^{-6}$, after the deterministic prefix of every stored run
# was measured in both numeric configurations of CI (largest difference in the cap over both:
# {glue:text}`af4_prefix_agree`, read from the stored measurement above). (ix) The typed "about 80 steps" of the bias transient and the typed Wilson
# end 0.57 $\to$ both computed and glued. (x) The stored counts were over five seeds, measurements only $\to$ 20
# seeds per initialization and chain (seeds 5 to 19 stored as a second part), each count a claim. (xi) Review B:
# the stored pin count over both chains could not fail on the chain with $p + q < 1$, where $\hat c$ reaches $c^*$
# $\to$ the claim counts the chain with $p + q > 1$ only; "a run of the 400 steps of the submitted code would end
# with ... still at $H(\pi)$" read step 400 of a 1000-step schedule $\to$ said as that; the one seed not counted
# as leaving $H(\pi)$ was leaving at the last step $\to$ said, with the counts at half `at_tol`; the glued
# intervals of the stored claims are now the Bonferroni ones that decide them.

# %% [markdown]
# ## What was verified
#
# Every claim above was checked as it was made; the table is generated from those records. The counts over the
# 20 stored seeds per initialization and chain are rows of it (kind *stored data*).

# %% tags=["remove-cell"]
from markovlib.book.glue import summary

summary("authors_fig4")  # in Jupyter: "What this chapter shows" with this run's numbers (removed from the book)

# %%
verified.table()

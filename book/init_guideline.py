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
# # The initialization guideline
#
# For the canonical model, where training ends is decided at initialization: gradient flow conserves the energy
# $E(e, w) = e^2 - w^2 - \operatorname{sign}(w)\log|w|$, and the basins of {prf:ref}`Thm 2 <thm-2>` ($p + q > 1$) and
# {prf:ref}`Thm 8 <thm-8>` ($p + q < 1$) are read off $(w_0, E_0)$. So a small Gaussian initialization ($E_0 < E_{\rm
# sad}$) ends, for $p + q > 1$, in the bad local minimum (loss $H(\pi)$) with high probability, and the *data-agnostic
# region* $\{w < 0,\ E > E_{\rm sad}\}$ leads to a global minimum for every chain: the practical message of
# {cite:t}`makkuva2024local`, carried to the full transformer in their Fig. 4. This chapter repeats that experiment in
# the scalar-input model and tests the guideline, and its limits, across chains, seeds and initialization scales.
#
# ## What this chapter shows
#
# Counts hold when the one-sided 95 % Wilson lower end exceeds `rate` $= 1/2$.
#
# 1. **Fig. 4, in the scalar-input model.** For $p + q > 1$, 400 AdamW steps from the standard initialization stay at
#    the unigram predictor after step 100 ({glue:text}`ig_fig4_std` seeds); from the guideline point
#    {glue:text}`ig_guide_point` they end at the bigram predictor ({glue:text}`ig_fig4_guide`) ([Fig. 4](#sec-ig-fig4)).
# 2. **The guideline points.** {glue:text}`ig_guide_point` has energy {glue:text}`ig_guide_energy` $> E_{\rm sad}$,
#    and its canonical flow reaches a global minimum on every chain; the authors' constants give
#    $(-2\sqrt2, -16)$, far below $E_{\rm sad}$ ([the points](#sec-ig-points)).
# 3. **The trap is a plateau for Adam** (chain {glue:text}`ig_plateau_chain`, {glue:text}`ig_long_runs` stored runs
#    of {glue:text}`ig_long_steps` steps per optimizer): AdamW is at the unigram point at step 200
#    ({glue:text}`ig_plateau_200`), then leaves it ({glue:text}`ig_escape`); SGD stays within those steps
#    ({glue:text}`ig_sgd_stays`) ([plateau](#sec-ig-plateau)).
# 4. **A phase diagram** (stored): the standard init is at the bigram predictor by step 200 for
#    $p + q < 1$ ({glue:text}`ig_grid_std_below`), not for $p + q > 1$ ({glue:text}`ig_grid_std_above`); the
#    guideline init gets there on both sides ({glue:text}`ig_grid_guide_below`; $p \le q$:
#    {glue:text}`ig_grid_guide_above`), first ({glue:text}`ig_grid_before`) ([phase diagram](#sec-ig-grid)); not
#    on every chain with $p > q$ ([$p > q$](#sec-ig-reversed)).
# 5. **Trap against scale.** The canonical trap probability stays above $1/2$ (smallest
#    {glue:text}`ig_canon_min`); the full model under SGD is trapped at $\sigma = 0.02$ ({glue:text}`ig_sigma_small`)
#    but escapes at $\sigma = 0.4$ ({glue:text}`ig_sigma_large`) ([scale](#sec-ig-sigma)).
#
# ## Parameters
#
# Claims 1 and 5 hold for chains with $p + q \ge 1 +$ `margin`, $p \le q$ (a chain with $p > q$ is measured, not
# claimed), $p, q \in [0.1, 0.9]$, at the training
# settings of the parameters cell (no other value is accepted), with at least 10 live seeds per count; claims 3 and 4
# on the stored chains at the same settings. Checked at the defaults and at the edges
# (`book/ci_params/init_guideline.yaml`); where they stop is said in [the last section](#sec-ig-range).

# %% tags=["parameters"]
p = 0.5  # chain of Fig. 4 and of the trap experiment: P(1 | 0) (paper: 0.5); p + q at least 1 + margin (p > q: measured only)
q = 0.8  # chain: P(0 | 1) (paper: 0.8)
margin = 0.2  # distance of the chain from the i.i.d. line p + q of 1 (at least 0.2, the Range)
seeds = 10  # Fig. 4: seeds per initialization (at least 10; paper: 5)
steps = 400  # Fig. 4: AdamW steps (the Range: 400; authors' code: 1000)
length = 64  # context N of every live run (the Range: 64; paper: 1024)
batch = 16  # sequences per step (the Range: 16, the paper's)
lr = 2e-3  # AdamW, betas (0.9, 0.95), weight decay 1e-3, 2 % warm-up + cosine (the authors' optimizer settings; the Range)
init_std = 0.02  # the standard initialization N(0, init_std^2) (the Range: 0.02)
guideline_e = 1.0  # the guideline point: e (the point must lie in the data-agnostic region w below 0, E above E_sad)
guideline_w = -1.0  # the guideline point: w
eval_every = 10  # Fig. 4: steps between held-out evaluations
plateau_window = [100, 400]  # Fig. 4: steps over which the standard run must stay at the unigram point (covers 100..400)
bigram_ratio = 0.5  # "at the bigram predictor" from the evaluation after which c-hat / c* stays above this (0.4 to 0.6)
rate = 0.5  # a claim over runs holds when the one-sided 95 % Wilson lower end of its rate exceeds this
plateau_min_steps = 200  # plateau: the AdamW run is not yet at the bigram predictor at this step (at least 200)
fast_steps = 200  # phase diagram: "fast" means at the bigram predictor by this step (the Range: 200)
slice_seed = 0  # which stored seed the live slice re-executes (any stored seed, 0..19: each was measured)
slice_steps = 100  # first steps of each slice run re-executed live (at most the measured prefix, 100)
slice_tol = 1e-6  # max difference of c-hat/c* and of the held-out loss to the stored curve (about 10x the largest difference measured in the prefix; see the slice)
sgd_lr = 1.0  # plain SGD (no momentum, no weight decay): the optimizer closest to gradient flow (the Range: 1)
sigmas = [0.02, 0.05, 0.1, 0.2, 0.4]  # initialization scales of the trap-probability experiment (SGD; 0.02 to 0.4)
sigma_seeds = 10  # trap experiment: seeds per sigma (at least 10)
sigma_steps = 300  # trap experiment: SGD steps (the Range: 300)
sigma_length = 64  # trap experiment: context (the Range: 64)
n_canonical = 2000  # canonical prediction: draws per scale, each integrated to its end state (at least 1000)
workers = 2  # processes for the independent training runs (1: run them in this kernel)
seed = 0  # first seed of the live runs (they use seed, seed + 1, ...)

# %%
from markovlib.book import specs
SPEC = specs.load("init_guideline")
globals().update(SPEC.check(globals()))
SPEC.table()

# %% [markdown]
# The defaults keep the chapter within a few minutes on two cores. The live runs (Fig. 4, the trap against the
# initialization scale and the slice of the stored runs) use a context of `length` = 64 instead of the paper's 1024 and
# `seeds` = 10 seeds per count; the two large experiments, the plateau and the phase diagram, are read from stored runs with
# {glue:text}`ig_grid_runs` seeds per count (`book/data/guideline`, made once by `python tools/run_guideline.py --workers 2` with the
# settings of this parameters cell; a slice of them is re-executed below). The claims are about *where* a run goes
# (the unigram or the bigram predictor, read off $\hat c$), which the gradient sets through averages over
# positions; a shorter context makes each step noisier and cheaper (the attention costs $N^2$), and $\hat c$ on
# four held-out batches separates the two predictors with a wide margin at this context. The plateau of Claim 3
# may grow with the context ({doc}`authors_fig4` sees a longer one at the paper's context, with another model and
# recipe), so its step counts belong to the stated context. The training settings (context,
# batch, step counts, learning rates, initialization scale) are part of the Range, so the validation accepts only
# the values at which the claims are stated; Fig. 4 at the paper's context and step count, in the authors' own
# two-token model, is in {doc}`authors_fig4`. All live runs use the package's `Trainer`; each is deterministic on a
# given machine (one thread, seeded batches), so the results do not depend on `workers`. Across machines the runs
# differ, which is why every claim about them counts runs.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from markovlib.book import formatting, inference, plotting, report, stored
from markovlib.book.glue import glue
from markovlib.book.specs.init_guideline import SLICE_PREFIX, TRAIN_RANGE
from markovlib.book.sweep import record_results
from markovlib.markov.canonical import c_star
from markovlib.markov.chain import MarkovChain
from markovlib.markov.energy import SADDLE_ENERGY
from markovlib.transformer import guideline, guideline_canonical, guideline_claims, guideline_drawings
from markovlib.transformer import guideline_reference
from markovlib.transformer.runs import train_many

plotting.use_style()
chain = MarkovChain(p, q)
verified = report.Verification()
counts = {}  # claim -> (runs in which it held, runs, family): for the figures and record_results
glue("ig_range_lo", f"{TRAIN_RANGE[0]:g}")
glue("ig_range_hi", f"{TRAIN_RANGE[1]:g}")
print(f"chain p={p:g}, q={q:g}: entropy rate {formatting.fixed(chain.entropy_rate, 4)}, "
      f"H(pi) {formatting.fixed(chain.marginal_entropy, 4)}, c* = {formatting.fixed(c_star(p, q), 4)}")
print(f"E_sad = {formatting.fixed(SADDLE_ENERGY, 4)}")

# %% [markdown]
# The stored runs of Claims 3 and 4 (`tools/run_guideline.py`, `book/data/guideline`); `guideline.load_stored` checks
# that their chains lie in the chapter's ranges and that they were made with the chapter's training settings:

# %%
DATA = stored.data_dir("guideline")
GS = guideline.load_stored(DATA, length=length, batch=batch, init_std=init_std, lr=lr, sgd_lr=sgd_lr,
                           within=TRAIN_RANGE)
manifest, STORED, stored_seeds, cells = GS["manifest"], GS["curves"], GS["seeds"], GS["cells"]
(plateau_p, plateau_q), cfg_long, stored_guide = GS["plateau"], GS["long"], GS["guide"]
grid_steps, long_steps = GS["grid_steps"], GS["long_steps"]
print(f"stored runs (book/data/guideline): {len(STORED)} runs, seeds {min(stored_seeds)}..{max(stored_seeds)}; "
      f"phase diagram {len(cells)} chains x 2 inits, {grid_steps} AdamW steps; plateau chain "
      f"({plateau_p:g}, {plateau_q:g}), AdamW and SGD, {long_steps} steps")

# %% [markdown]
# ## The canonical flow, integrated
#
# The basin rules of {prf:ref}`Thm 2 <thm-2>` and {prf:ref}`Thm 8 <thm-8>` are what this chapter tests, so the
# canonical predictions below do not come from them (`markovlib.markov.energy.predict_limit` reads the limit off the
# conserved energy, which *is* the rule). They come from integrating the gradient flow of the reduced loss
# $L(e, w) = g(c)$, $c = e^2(1 + 2w|w|)$, from each initial point and reading the end state. By the envelope
# theorem $g'(c) = \pi_1\,(\sigma(c + \beta^*(c)) - (1 - q))$, where $e^{\beta^*}$ solves the quadratic
# $q\,e^c u^2 + (q - p) u - p = 0$ of the optimal bias ({prf:ref}`Lemma 5 <lem-5>`); the flow is
# $(\dot e, \dot w) = -g'(c)\,(2e(1 + 2w|w|),\ 4|w|e^2)$. Both components vanish with their variable (the flow
# never changes the sign of $e$ or of $w$), so we integrate it in $(\log|e|, \log|w|)$, where decay towards an axis
# is a plain drift, with classical RK4, after the time change $dt \to dt\,(1 + |c|)/(1 + |\nabla c|^2)$: a positive
# factor, so the same trajectories and the same limits, without the stiffness of large $|\nabla c|$ or the slowness of
# large $|c|$. The end state is *global* when $c$ is within 5 % of $c^*$, *trapped* when $|e| < e^{-12}$ and still
# shrinking (the $w$-axis, loss $H(\pi)$), and *unresolved* otherwise
# (within the integration time; counted against every claim). The integrator is the independent reference
# `markovlib.transformer.guideline_reference.flow_end`, which calls neither the energy nor the basin rules. Before
# use, $g'$ is checked (`guideline_reference.envelope_error`) against a central difference of $g$ computed by
# minimizing the logistic loss of {prf:ref}`Lemma 2 <lem-2>` over $\beta$ numerically, on every chain of the chapter:

# %% tags=["hide-input"]
check_chains = sorted(set(cells) | {(p, q), (plateau_p, plateau_q)})
gp_err = guideline_reference.envelope_error(check_chains)
assert gp_err < 1e-5, gp_err
print(f"g'(c) by the envelope theorem = central difference of the numerically minimized loss: "
      f"{formatting.bound(gp_err, 1e-5)} ({len(check_chains)} chains, 5 values of c each)")

# %% [markdown]
# (sec-ig-points)=
# ## Where the guideline points sit
#
# The guideline initialization writes the canonical weights of {doc}`canonical_model` with $(e, w)$ into the full
# model: $e = e\,\alpha$, $p_n = -\frac e2\alpha$, $W_1 = |w|\,u\,\alpha^\top$, $W_2 = w\,\alpha u^\top$ with
# $\alpha \in \{\pm1\}^d/\sqrt d$ and $u \ge 0$, $\|u\|^2 = 4$; the attention weights are drawn small,
# $\mathcal N(0, 0.02^2)$, and the bias is $0$.
#
# The authors' public code sets the token embedding to all $-1$, the positional embeddings to all $0.5$, $W_1$ to
# all $2$ and $W_2$ to all $-2$. *Written into the scalar-input model of this book* (one embedding vector $e$;
# the package's init `"public_constants_scalar"`), that is canonical: with $\alpha = \mathbf 1/\sqrt d$ and
# $u = (2/\sqrt r)\mathbf 1$, $e\alpha = -\mathbf 1$ gives $e = -\sqrt d$, $p_n = -\frac e2 \alpha = \frac12\mathbf 1$
# matches, and $|w|\,u_i\alpha_j = |w|\cdot\frac{2}{\sqrt r}\cdot\frac1{\sqrt d} = 2$ gives $|w| = \sqrt{rd} = 2d$ at
# $r = 4d$. For $d = 8$: $(e, w) = (-2\sqrt 2, -16)$, with coefficient $c = e^2(1 + 2w|w|) = -4088$ and energy
# $E = 8 - 256 + \log 16 \approx -245.2$, far *below* $E_{\rm sad}$. This is a point of the scalar-input model,
# not the authors' initialization: their model has a 2-token vocabulary, a $2 \times d$ embedding with rows
# $E_0, E_1$ tied to a 2-logit head, equivalent to the scalar-input model through $e = E_1 - E_0$,
# $p_n \mapsto p_n + E_0$. Both of its rows are all $-1$, so there $e = E_1 - E_0 = 0$: the authors' model starts
# *on* the unigram critical line $\{e = 0\}$, at loss $\log 2$, with every ReLU of the feed-forward layer dead
# (reference notes, Sec. 7). That model is not built in this chapter, so nothing here is a claim about it.
#
# The energies are arithmetic (identities); the limits come from the integrated flow above, over the chains of the
# phase-diagram grid and the chapter's two chains, and are compared with the energy rule of `predict_limit`:

# %%
d_model = 8
e_auth, w_auth = -np.sqrt(d_model), -2.0 * d_model
guide_pt = f"({guideline_e:g}, {guideline_w:g})"  # the labels follow the parameters
guide_name, auth_name = f"guideline {guide_pt}", "scalar point (-2 sqrt 2, -16)"
points = {guide_name: (guideline_e, guideline_w), auth_name: (e_auth, w_auth)}
where = {name: guideline_canonical.point_limits(e0, w0, check_chains) for name, (e0, w0) in points.items()}
for name, limits in where.items():
    print(guideline_canonical.point_line(name, limits))

# %% tags=["hide-input"]
E_g, hi_g, lo_g = (where[guide_name][k] for k in ("energy", "above", "below"))
E_a, hi_a, lo_a = (where[auth_name][k] for k in ("energy", "above", "below"))
n_agree, n_limits = (sum(w[k] for w in where.values()) for k in ("agree", "n"))
glue("ig_guide_point", guide_pt)
glue("ig_guide_energy", formatting.fixed(E_g, 3))
verified.record(f"guideline point {guide_pt}: E > E_sad", E_g > SADDLE_ENERGY, check="the energy formula, by arithmetic",
                measured=f"E = {formatting.fixed(E_g, 3)}", tolerance="E > E_sad = -0.8466", kind="identity")
verified.record(f"guideline point {guide_pt}: the canonical flow ends at a global minimum on every "
                "chain, both sides",
                all(o == "global" for o in hi_g + lo_g),
                check=f"RK4 integration of the gradient flow to its end state, {len(check_chains)} chains",
                measured=f"{formatting.fraction((hi_g + lo_g).count('global'), len(hi_g + lo_g))} chains global",
                tolerance="every chain", kind="independent")
verified.record("scalar point (-2 sqrt 2, -16): E < E_sad", E_a < SADDLE_ENERGY, check="the energy formula, by arithmetic",
                measured=f"E = {formatting.fixed(E_a, 3)}", tolerance="E < E_sad", kind="identity")
verified.record("scalar point (-2 sqrt 2, -16): global for p+q>1, trapped (local) for p+q<1 (canonical flow)",
                all(o == "global" for o in hi_a) and all(o == "trapped" for o in lo_a),
                check=f"RK4 integration of the gradient flow to its end state, {len(check_chains)} chains",
                measured=f"p+q>1 {formatting.fraction(hi_a.count('global'), len(hi_a))} global, "
                         f"p+q<1 {formatting.fraction(lo_a.count('trapped'), len(lo_a))} trapped",
                tolerance="every chain", kind="independent")
_ = verified.record("the energy rule (predict_limit) gives the integrated end state of both points on every chain",
                    n_agree == n_limits, check="markovlib.markov.energy.predict_limit against the integration",
                    measured=f"{formatting.fraction(n_agree, n_limits)} limits agree", tolerance="all agree",
                    kind="same code")

# %% [markdown]
# So the scalar-model point $(-2\sqrt2, -16)$ works for the paper's chain ($p + q = 1.3$) for a different reason
# than the guideline gives, and would not work for $p + q < 1$. The guideline point {glue:text}`ig_guide_point` (energy {glue:text}`ig_guide_energy`) is inside the region.
#
# (sec-ig-fig4)=
# ## Fig. 4: standard against guideline initialization
#
# `seeds` runs each; the held-out loss (fresh batches) every `eval_every` steps, mean and standard deviation across
# seeds, and every seed as a thin line; on the right, $\hat c / c^*$ of the same runs, which the claims read.
#
# Training runs are chaotic (a run differs between two machines), so every claim about training is a claim about
# a set of runs, at least 10 of them live or 20 stored: it holds when the one-sided 95 % Wilson lower end of the rate at which it
# holds exceeds `rate` $= 1/2$, fixed in the parameters cell with every other threshold before the runs. The table
# at the end prints each count with its interval; the figures show the per-run values. Where a run is, is read
# from its context coefficient $\hat c$ (mean logit after a 1 minus after a 0, on held-out data): $\hat c = c^* =
# \log\frac{(1-p)(1-q)}{pq}$ at the bigram predictor and $0$ at the unigram predictor; a run is *at the bigram
# predictor* from the first evaluation after which $\hat c / c^*$ stays above $1/2$. (The loss gap between the two
# predictors is only about 0.02 nats on chains 0.2 from the line, too small to classify runs at this scale; $\hat c$
# separates them on every chain.)
#
# Far from the line, where $|c^*|$ is large, 400 steps bring the guideline run onto the bigram side but not all the
# way to $c^*$.

# %%
fig4_configs = [dict(device="cpu", p=p, q=q, steps=steps, length=length, batch=batch, lr=lr, init=init,
                     init_std=init_std, init_kwargs=kw, seed=seed + s, eval_every=eval_every)
                for init, kw in (("standard", {}), ("guideline", {"e": guideline_e, "w": guideline_w}))
                for s in range(seeds)]
fig4 = train_many(fig4_configs, workers=workers)
F4 = guideline_claims.fig4_curves(fig4)
final_ratio = F4["final"]
x_std = F4["loss"]["standard"][0]
window = (x_std >= plateau_window[0]) & (x_std <= plateau_window[1])

# %% tags=["hide-input"]
guideline_claims.record_flags(
    verified, counts, "Fig. 4: standard init stays at the unigram point through the window",
    np.all(F4["ratio"]["standard"][:, window] < bigram_ratio, axis=1), glue_name="ig_fig4_std", rate=rate,
    check=f"c-hat/c* < {bigram_ratio:g} at every evaluation of steps {plateau_window[0]}..{plateau_window[1]}, "
          "per seed", kind="same code")
claimed = p <= q  # for p > q the guideline is measured, not claimed: the stored chains with p > q (below) show it failing on some
_ = guideline_claims.record_flags(
    verified, counts, "Fig. 4: guideline init ends at the bigram predictor",
    [np.isfinite(guideline.steps_to_bigram(run, bigram_ratio)) for run in fig4[seeds:]], glue_name="ig_fig4_guide",
    rate=rate, check=f"c-hat/c* > {bigram_ratio:g} from some evaluation to the end of the run, per seed",
    kind="same code", claimed=claimed)

# %%
labels = {"standard": "standard init N(0, %g²)" % init_std,
          "guideline": f"guideline init (e, w) = ({guideline_e:g}, {guideline_w:g})"}
guideline_drawings.fig4(F4, chain, window=plateau_window, level=bigram_ratio, labels=labels,
                        title=f"Full model, p = {p:g}, q = {q:g}: mean ± std over {seeds} seeds (Fig. 4)")
plt.show()

# %% [markdown]
# (sec-ig-plateau)=
# ## A plateau, not a wall
#
# The canonical theory is about gradient flow. Along the critical line $\{e = 0\}$ the Hessian is
# $\operatorname{diag}(2g'(0)(1 + 2w|w|), 0)$: curved across the line, flat along it. For $p + q > 1$ the points
# with $w > -1/\sqrt2$ are local minima and those with $w < -1/\sqrt2$ local maxima, joined along the flat direction
# through the saddle. Gradient flow does not move along the line (the gradient vanishes on it), and neither does
# plain SGD, whose noise also vanishes there (every gradient of $w$ carries a factor $e^2$). AdamW divides each
# coordinate's step by the root of its running squared gradient, so small gradients of consistent sign still
# produce steps of up to about the learning rate (a gradient that is noise around zero gives much smaller ones): the
# iterate can drift along flat directions and reach a point that is no longer a minimum. How fast it then leaves is
# set by the curvature across the line, $2|g'(0)|\,|1 + 2w|w||$ with $|g'(0)| = pq|p + q - 1|/(p + q)^2$ (which
# is not monotone in $|c^*|$); near $p + q = 1$ we would expect the escape to be slow (the stored runs test one chain, so this
# chapter does not measure that dependence). (Connecting the drift to
# the canonical $w$ inside the full model would need more than this chapter measures; the flat direction is the
# canonical picture's explanation, and the measurement below is what we assert. The chapter {doc}`trap_or_plateau`
# makes that connection with stored runs of four optimizers on two chains, reading the canonical projection
# $(e, w)$ and its energy at every evaluation.)
#
# The experiment, from stored runs (`tools/run_guideline.py`): the standard initialization on the plateau chain
# ({glue:text}`ig_plateau_chain`, $|c^*| =$ {glue:text}`ig_plateau_cstar`), {glue:text}`ig_long_runs` seeds with
# AdamW and as many with plain SGD, {glue:text}`ig_long_steps` steps each at the chapter's context and learning
# rates (why 20 stored runs and not 10 live ones: see the changes after review at the end). The escape step varies
# from seed to seed by hundreds of steps; that is why the claim counts runs.

# %%
adam_curves = [STORED[("plateau", plateau_p, plateau_q, "standard", "adamw", s)] for s in stored_seeds]
sgd_curves = [STORED[("plateau", plateau_p, plateau_q, "standard", "sgd", s)] for s in stored_seeds]
escape = np.array([guideline.first_above(x, r, bigram_ratio) for x, r, _ in adam_curves])
n_long = len(stored_seeds)
cstar_plateau = c_star(plateau_p, plateau_q)
print(f"plateau chain p={plateau_p:g}, q={plateau_q:g}: c* = {formatting.fixed(cstar_plateau, 4)}; "
      f"{n_long} stored runs per optimizer, {long_steps} steps")

# %% tags=["hide-input"]
glue("ig_plateau_chain", f"p = {plateau_p:g}, q = {plateau_q:g}")
glue("ig_plateau_cstar", formatting.fixed(abs(cstar_plateau), 2))
glue("ig_long_steps", f"{long_steps}")
glue("ig_long_runs", f"{n_long}")
stored_runs = dict(rate=rate, kind="stored data", unit="runs")
guideline_claims.record_flags(
    verified, counts, f"AdamW: standard init still on the plateau at step {plateau_min_steps}",
    [np.all(r[x <= plateau_min_steps] < bigram_ratio) for x, r, _ in adam_curves], glue_name="ig_plateau_200",
    check=f"stored runs: c-hat/c* < {bigram_ratio:g} at every evaluation up to step {plateau_min_steps}", **stored_runs)
guideline_claims.record_flags(
    verified, counts, f"AdamW: standard init leaves the plateau within {long_steps} steps", np.isfinite(escape),
    glue_name="ig_escape", check=f"stored runs: c-hat/c* above {bigram_ratio:g} from some evaluation to the end",
    **stored_runs)
guideline_claims.record_flags(
    verified, counts, "plain SGD: standard init stays at the unigram point",
    [np.all(r < bigram_ratio) for x, r, _ in sgd_curves], glue_name="ig_sgd_stays",
    check=f"stored runs: c-hat/c* < {bigram_ratio:g} at every evaluation of {long_steps} SGD steps (lr {sgd_lr:g})",
    **stored_runs)
left = escape[np.isfinite(escape)]
half_step = 1200  # an informative count (not a claim): how many runs left by this step of the stored runs
glue("ig_escape_by_1200", formatting.fraction(int(np.sum(escape <= half_step)), n_long))
glue("ig_escape_first", f"{left.min():.0f}" if left.size else "none")
glue("ig_escape_last", f"{left.max():.0f}" if left.size else "none")
glue("ig_escape_median", f"{np.median(escape):.0f}" if np.isfinite(np.median(escape)) else "never")
print(f"AdamW escape steps (evaluations every {cfg_long['adamw']['eval_every']} steps): first {left.min():.0f}, "
      f"last {left.max():.0f}; by step {half_step}: {formatting.fraction(int(np.sum(escape <= half_step)), n_long)} runs")

# %%
guideline_drawings.plateau(
    {"AdamW": ("tab:blue", adam_curves), f"SGD lr {sgd_lr:g}": (plotting.NEUTRAL, sgd_curves)}, escape, long_steps,
    cfg_long["adamw"]["eval_every"], level=bigram_ratio,
    title=f"Standard init, p = {plateau_p:g}, q = {plateau_q:g}, context {length}: a plateau for AdamW")
plt.show()

# %% [markdown]
# So "where training ends" depends on the optimizer as well as on the initialization: under SGD the runs end at
# the unigram point within their horizon ({glue:text}`ig_long_runs` stored runs of {glue:text}`ig_long_steps` steps;
# whether a longer run would leave it is the question of {doc}`trap_or_plateau`), under AdamW a plateau whose length varies from seed to seed (the first stored run left it at step
# {glue:text}`ig_escape_first`, the last at step {glue:text}`ig_escape_last`; by step 1200 of these runs
# {glue:text}`ig_escape_by_1200` had left) is paid by every run that starts small. Under AdamW the guideline avoids
# the plateau (Claims 1 and 4); under SGD it was not run here.
#
# (sec-ig-grid)=
# ## A phase diagram over chains
#
# The loss gap $H(\pi) - H(x_{n+1}\mid x_n)$ vanishes to second order at $p + q = 1$, so near that line the loss
# cannot tell the two minima apart. The coefficient of $x_n$ in the logit can: for the canonical model the logit
# is $c\,x_n + \beta$ ({prf:ref}`Lemma 2 <lem-2>`), and for any binary model we measure
# $\hat c = \overline{\text{logit}}_{x_n = 1} - \overline{\text{logit}}_{x_n = 0}$ on held-out data
# (`markovlib.transformer.readout.context_coefficient`). At the bigram predictor the logits are $\log\frac{p}{1-p}$ after a
# 0 and $\log\frac{1-q}{q}$ after a 1, so $\hat c = c^*$; at the unigram predictor $\hat c = 0$. Because of the
# plateau, the informative quantity is *how long* a run takes to reach the bigram predictor: the number of AdamW
# steps after which $\hat c / c^*$ stays above `bigram_ratio`. The runs are stored (`tools/run_guideline.py`):
# every chain of the grid $p, q \in \{0.2, 0.5, 0.8\}$ at least 0.2 from the line, {glue:text}`ig_grid_runs` seeds
# per chain and initialization (the standard one and the guideline point {glue:text}`ig_grid_point`). Each claim is
# one count *per chain*, never pooled over the chains of a side (pooling hid a bad chain in an earlier version),
# with Bonferroni's correction over the chains of the claim; the right panel shows every count.
#
# The grid's chain with $p > q$ and $p + q > 1$ is read with four more such chains in
# [the next subsection](#sec-ig-reversed).

# %%
T = guideline_claims.grid_times(STORED, cells, stored_seeds, bigram_ratio)
below, above = [c for c in cells if sum(c) < 1], [c for c in cells if sum(c) > 1]
print(f"steps to the bigram predictor, median over {len(stored_seeds)} stored runs per chain (standard, guideline): "
      + "; ".join(f"({pp:g}, {qq:g}) {np.median(T['standard'][c]):.0f}, {np.median(T['guideline'][c]):.0f}"
                  for c, (pp, qq) in enumerate(cells)))

# %% tags=["hide-input"]
glue("ig_grid_point", f"({stored_guide['e']:g}, {stored_guide['w']:g})")
glue("ig_grid_runs", f"{len(stored_seeds)}")
cell_counts = guideline_claims.record_grid(verified, counts, T, cells, fast_steps=fast_steps, grid_steps=grid_steps,
                                           rate=rate)

# %%
short = {"ig_grid_std_below": f"std by {fast_steps}", "ig_grid_std_above": f"std not by {fast_steps}",
         "ig_grid_guide_below": "guide reaches", "ig_grid_guide_above": "guide reaches", "ig_grid_before": "guide first"}
guideline_drawings.phase_diagram(T, cells, manifest["grid_values"], cell_counts, grid_steps=grid_steps,
                                 fast_steps=fast_steps, level=bigram_ratio, rate=rate, short=short)
plt.show()

# %% [markdown]
# (sec-ig-reversed)=
# ### Chains with $p > q$: does the guideline hold there?
#
# The full model is not symmetric under relabeling the two symbols (the input $x_n e$ puts the embedding on the symbol
# 1 only, and the ReLU is not odd), while the canonical model, on which Sec. 5.2 derives the guideline, is. The stored
# set `runs_pgq` (`tools/run_guideline.py --tag pgq`) ran the grid's experiment (both initializations, AdamW, the same
# settings and horizon, 20 seeds) on four more chains with $p > q$ and $p + q > 1$, beside the grid's chain
# $(0.8, 0.5)$. Per chain, the rate at which a run reaches the bigram predictor within the horizon, with its Wilson
# interval (Bonferroni over the chains). The directions were read after the runs, so the recorded check is only that
# each chain's rate is decided, in whichever direction (its interval excludes 1/2).

# %%
REV = guideline_claims.reversed_chains(DATA)
print(REV.assign(interval=[f"[{lo:.2f}, {hi:.2f}]" for lo, hi in zip(REV.lo, REV.hi)],
                 final=[f"{a:.2f} / {m:.2f} / {b:.2f}" for a, m, b in zip(REV.final_min, REV.final_median, REV.final_max)])[
    ["p", "q", "init", "reached", "runs", "steps", "median_step", "interval", "final"]].to_string(index=False))

# %% tags=["hide-input"]
rev_guide = REV[REV.init == "guideline"]
rev_text = "; ".join(f"({a:g}, {b:g}) {k}/{n}" for a, b, k, n in zip(rev_guide.p, rev_guide.q, rev_guide.reached,
                                                                       rev_guide.runs))
verified.record("p > q: the guideline's rate within the horizon is decided on every stored chain",
                bool(REV[REV.init == "guideline"].decided.all()),
                check=f"runs reaching the bigram predictor within {int(REV.steps.max())} AdamW steps, per chain "
                      f"({len(rev_guide)} chains with p > q, p + q > 1)", measured=rev_text,
                tolerance="Wilson interval (Bonferroni over the chains) excludes 1/2", kind="stored data")
verified.record("p > q: the standard init is not at the bigram predictor within the horizon on any stored chain",
                bool((REV[REV.init == "standard"].hi < 0.5).all()),
                check="the same runs from the standard initialization, per chain",
                measured="; ".join(f"({a:g}, {b:g}) {k}/{n}" for a, b, k, n in REV[REV.init == "standard"][
                    ["p", "q", "reached", "runs"]].itertuples(index=False)),
                tolerance="upper end of the Wilson interval < 1/2", kind="stored data")
glue("ig_rev_holds", ", ".join(f"({a:g}, {b:g})" for a, b in zip(rev_guide.p[rev_guide.lo > 0.5],
                                                                 rev_guide.q[rev_guide.lo > 0.5])))
glue("ig_rev_fails", ", ".join(f"({a:g}, {b:g}): {k}/{n}" for a, b, k, n in rev_guide[rev_guide.hi < 0.5][
    ["p", "q", "reached", "runs"]].itertuples(index=False)))
_ = glue("ig_rev_chains", f"{len(rev_guide)}")
_ = glue("ig_rev_final", "; ".join(f"({a:g}, {b:g}) {lo:.2f} to {hi:.2f}" for a, b, lo, hi in rev_guide[
    rev_guide.hi < 0.5][["p", "q", "final_min", "final_max"]].itertuples(index=False)))

# %% [markdown]
# From the guideline point the runs reach the bigram predictor within the horizon on {glue:text}`ig_rev_holds`, and
# they do not on {glue:text}`ig_rev_fails`; from the standard initialization no run does on any of these chains. The
# last column (final $\hat c / c^*$: least, median, largest) tells the two failures apart: where they fail, the runs
# end at {glue:text}`ig_rev_final`, so on the chain with $q = 0.7$ they are on the bigram side but slower (a lower
# `bigram_ratio` would count them), while on the chain with $q = 0.3$ they stay near the unigram point. So from the
# guideline point {glue:text}`ig_grid_point`, in this full model, within `grid_steps` AdamW steps, the guideline does not reach the
# bigram predictor on every chain with $p > q$. The paper writes that its insights "apply more broadly to the general
# full model"; these runs test one point of its region, one model and one horizon, and both failing chains have
# $p = 0.9$ (their mirrors with $p < q$ are not stored). The chapter accepts such chains: there it reports Claim 1's
# guideline count and Claim 5's full-model counts as measurements, not claims.

# %% [markdown]
# (sec-ig-slice)=
# ## A deterministic slice of the stored runs, re-executed
#
# The stored runs of the last two sections were made by the package's `Trainer` with the configurations in
# `book/data/guideline/manifest.json` (`python tools/run_guideline.py --workers 2`, one thread per run). Here the
# first `slice_steps` steps of four of them, the seed `slice_seed` of the phase diagram's chain (0.5, 0.8) under
# both initializations and of the plateau chain under AdamW and SGD, are re-run live with the same configuration
# (the learning-rate schedule is built for the full run, so the slice sees exactly the stored run's first steps),
# and $\hat c / c^*$ and the held-out loss at each evaluation are compared with the stored curves. Training diverges
# slowly between numeric configurations, so only a prefix is deterministic to a stated tolerance. The prefix and the
# tolerance come from a measurement stored with the runs (`tools/run_slice_prefix.py guideline`,
# `book/data/guideline/slice_prefix.csv`) over the stored seeds {glue:text}`ig_slice_seeds` of these four runs (the
# seeds `slice_seed` may take), in both of CI's configurations ({glue:text}`ig_slice_configs`: the default, and one
# thread with numpy's SIMD kernels above x86-64-v2 and torch's vector kernels switched off): over the first
# {glue:text}`ig_slice_prefix` steps the largest difference is {glue:text}`ig_slice_measured`. The tolerance
# `slice_tol` $= 10^{-6}$ is about ten times that, the printed bound $5\cdot10^{-7}$ keeps a margin of at least 3
# over it (asserted), and `slice_steps` may not exceed the measured prefix.

# %% tags=["hide-input"]
# the measured prefix (tools/run_slice_prefix.py guideline, every stored seed, in each configuration): stored data
prefix = pd.read_csv(DATA / "slice_prefix.csv")
SLICE_SEEDS = list(range(len(stored_seeds)))  # the stored seeds whose prefix was measured
SLICE_MEASURED = guideline.check_slice_prefix(prefix, SLICE_SEEDS, SLICE_PREFIX)
SLICE_PRINT = 5e-7  # printed bound, under slice_tol
assert 3 * SLICE_MEASURED <= SLICE_PRINT, SLICE_MEASURED  # the printed bound keeps a margin of 3 over every measured difference
glue("ig_slice_prefix", f"{SLICE_PREFIX}")
glue("ig_slice_measured", f"{SLICE_MEASURED:.1e}")  # stored data: the same on every machine
glue("ig_slice_configs", ", ".join(sorted(prefix.config.unique())))
_ = glue("ig_slice_seeds", f"{SLICE_SEEDS[0]} to {SLICE_SEEDS[-1]}")

# %% [markdown]
# `guideline.replay_error` re-runs the four slices, and the negative control (learning rate $\times 1.01$, the phase diagram's standard run on $(0.5, 0.8)$):

# %%
slice_keys = [("grid", 0.5, 0.8, "standard", "adamw"), ("grid", 0.5, 0.8, "guideline", "adamw"),
              ("plateau", plateau_p, plateau_q, "standard", "adamw"), ("plateau", plateau_p, plateau_q, "standard", "sgd")]
worst_slice, n_evals = guideline.replay_error(GS, slice_keys, slice_seed, slice_steps)
print(f"{len(slice_keys)} stored runs (seed {slice_seed}), first {slice_steps} steps re-executed: max difference of "
      f"c-hat/c* and held-out loss to the stored curve {formatting.bound(worst_slice, SLICE_PRINT)} ({n_evals} evaluations)")
ctrl_slice, _ = guideline.replay_error(GS, slice_keys[:1], slice_seed, slice_steps, lr_factor=1.01)
print(f"negative control (learning rate x 1.01, standard init, (0.5, 0.8)): max difference {ctrl_slice:.0e}")

# %% tags=["hide-input"]
_ = verified.record("the stored runs are reproduced by the package (a prefix of four runs, re-executed)",
                    n_evals >= 2 * len(slice_keys) and worst_slice < slice_tol,
                    check=f"{len(slice_keys)} runs x {slice_steps} steps re-executed with the stored configuration; "
                          "c-hat/c* and held-out loss at every evaluation",
                    measured=formatting.bound(worst_slice, SLICE_PRINT), tolerance=f"{slice_tol:.0e}", kind="stored data")
_ = verified.record("... and the slice's tolerance catches a 1 % change of the learning rate", ctrl_slice > slice_tol,
                    check="the same slice with the learning rate scaled by 1.01 (standard init, chain (0.5, 0.8)) misses "
                          "the stored curve by more than the tolerance",
                    measured=f"{ctrl_slice:.0e}", tolerance=f"> {slice_tol:.0e}", kind="stored data")

# %% [markdown]
# (sec-ig-sigma)=
# ## The trap probability against the initialization scale
#
# **Canonical prediction.** Draw $(e_0, w_0) \sim \mathcal N(0, \sigma^2 I)$ and follow the flow. For $p + q > 1$
# every $w_0 > 0$ flows to the positive $w$-axis ({prf:ref}`Thm 2 <thm-2>`), so $\Pr(\text{trap}) \ge \Pr(w_0 > 0) =
# 1/2$ at every $\sigma$; for small $\sigma$, $w_0 < 0$ has $E_0 < E_{\rm sad}$ and $w_0 > -1/\sqrt2$, also trapped,
# so $\Pr(\text{trap}) \to 1$ as $\sigma \to 0$. The claims read each draw's limit from the *integrated* flow (the
# reference integrator above, `n_canonical` draws per scale, the same draws at every scale, each integrated to
# $t = 5000$ like the guideline points: draws that start near the saddle move slowly); the energy rule
# (`predict_limit`) draws the fine curves of the figure and is compared with the integration draw by draw. The full
# model's scalars are not $\mathcal N(0, \sigma^2)$: its weights are, and norms grow with the dimension
# ($\|e\| \approx \sqrt d\,\sigma$; the canonical $\|W_1\|_F = \|W_2\|_F = 2|w|$ against $\sigma\sqrt{rd}$ for the
# Gaussian matrices). We therefore draw the canonical prediction twice: with $(e_0, w_0) \sim \mathcal N(0,
# \sigma^2)$, and norm-matched, $e_0 \sim \mathcal N(0, d\sigma^2)$, $w_0 \sim \mathcal N(0, (\sigma\sqrt{rd}/2)^2)$.
# Unresolved draws (still moving at the end of the integration) count as *not* trapped for the lower bounds.
#
# **Full model.** `sigma_seeds` runs per $\sigma$ from $\mathcal N(0, \sigma^2)$ weights, with plain SGD, the
# optimizer closest to the gradient flow the prediction is about (under AdamW the previous section's drift
# would blur the comparison); a run counts as trapped when $\hat c / c^* < $ `bigram_ratio` after `sigma_steps`
# steps, read from its final weights on held-out data. The claim at the largest $\sigma$ counts the runs that
# *escaped*; a second row compares the two trap rates there by intervals: the upper end of the full model's
# trapped fraction ({glue:text}`ig_sigma_full_hi`) against the lower end of the canonical one over both scalings
# ({glue:text}`ig_sigma_canon_lo`). The canonical bound $\Pr(\text{trap}) \ge 1/2$ is checked as what it is, a
# derived bound: no integrated draw with $w_0 > 0$ reaches the global minimum, and $\Pr(w_0 > 0) = 1/2$ exactly.

# %%
sigma_configs = [dict(device="cpu", p=p, q=q, steps=sigma_steps, length=sigma_length, batch=batch, optimizer="sgd", lr=sgd_lr,
                      weight_decay=0.0, init="standard", init_std=s, seed=seed + k, eval_every=0)
                 for s in sigmas for k in range(sigma_seeds)]
sigma_runs = train_many(sigma_configs, workers=workers)
ratio_s = np.array([r["summary"]["coefficient_ratio"] for r in sigma_runs]).reshape(len(sigmas), sigma_seeds)
trapped = ratio_s < bigram_ratio
i_small, i_large = int(np.argmin(sigmas)), int(np.argmax(sigmas))

# %% tags=["hide-input"]
guideline_claims.record_flags(
    verified, counts, f"full model, smallest sigma ({sigmas[i_small]:g}): trapped (SGD)", trapped[i_small],
    glue_name="ig_sigma_small", rate=rate, check=f"SGD, c-hat/c* < {bigram_ratio:g} after {sigma_steps} steps",
    kind="same code", claimed=claimed)
_ = guideline_claims.record_flags(
    verified, counts, f"full model, largest sigma ({sigmas[i_large]:g}): escapes (SGD)", ~trapped[i_large],
    glue_name="ig_sigma_large", rate=rate, check=f"SGD, c-hat/c* >= {bigram_ratio:g} after {sigma_steps} steps",
    kind="same code", claimed=claimed)

# %% [markdown]
# The canonical prediction: the same draws at every scale, each integrated to its end state, beside the energy rule:

# %%
FLOW_T_END = 5000.0  # integration time of each draw, as for the guideline points (draws near the saddle are slow)
sigma_fine = np.geomspace(min(sigmas) / 2, max(sigmas) * 2, 25)  # the energy rule's fine curves, for the figure
canon = guideline_canonical.canonical_trap(p, q, sigmas, n_canonical, d_model, seed=seed, t_end=FLOW_T_END,
                                           fine=sigma_fine)
ends, trap_int, unresolved = canon["ends"], canon["trap"], canon["unresolved"]
# printed bound of the unresolved fraction, under the 1 % tolerance: the largest fraction measured over the Range
# (8 chains at its edges, 8 scales from 0.02 to 0.4, both scalings, 4 seeds, 2000 draws) was 1.5e-3 for one scale and
# scaling, 0 at the defaults
UNRESOLVED_PRINT = 0.005
print(f"canonical flow, trapped fraction over {len(sigmas)} scales x 2 scalings (integrated; unresolved draws "
      f"{formatting.bound(unresolved, UNRESOLVED_PRINT)}): smallest {formatting.fixed(float(trap_int.min()), 2)}")

# %% tags=["hide-input"]
k_small = int(np.sum(ends[0, i_small] == "trapped"))
verified.record_count(f"canonical flow, smallest sigma ({sigmas[i_small]:g}): trapped", k_small, n_canonical, rate=rate,
                      check="RK4 integration of the gradient flow from N(0, sigma^2) draws to the end state",
                      kind="independent", unit="draws")
glue("ig_canon_min", formatting.fixed(float(trap_int.min()), 2))
# P(trap) >= 1/2 at every sigma is a derived bound, not a fraction near 1/2: every draw with w0 > 0 is trapped
# (Thm 2), and P(w0 > 0) = 1/2 exactly for a centred Gaussian. The integration checks the first half draw by draw.
n_pos, k_pos, n_pos_global = canon["n_pos"], canon["k_pos"], canon["n_pos_global"]
verified.record("canonical P(trap) >= P(w0 > 0) = 1/2 at every sigma: no draw with w0 > 0 reaches the global minimum "
                "(Thm 2)", n_pos_global == 0 and k_pos >= 0.99 * n_pos,
                check=f"RK4 integration to the end state of the draws with w0 > 0, {len(sigmas)} scales x 2 scalings; "
                      "P(w0 > 0) = 1/2 by the symmetry of the Gaussian",
                measured=f"{n_pos_global} global; {k_pos}/{n_pos} trapped"
                         + (f", {n_pos - k_pos - n_pos_global} unresolved" if k_pos + n_pos_global < n_pos else ""),
                tolerance="none global, at least 99 % trapped", kind="independent")
# C6: the full model's trap rate at the largest sigma against the canonical one, by intervals: the full model's
# upper end (its trapped count) below the canonical lower end (integrated draws, both scalings), Bonferroni over
# the 1 + 2 intervals
z3 = inference.wilson_lower_z(0.05, 3)
_, full_hi = inference.wilson_interval(int(trapped[i_large].sum()), sigma_seeds, z3)
canon_lo = min(float(inference.wilson_interval(int(np.sum(ends[j, i_large] == "trapped")), n_canonical, z3)[0])
               for j in range(len(guideline_canonical.SCALINGS)))
glue("ig_sigma_full_hi", formatting.fixed(float(full_hi), 2))
glue("ig_sigma_canon_lo", formatting.fixed(canon_lo, 2))
print(f"full model at the largest sigma: trapped fraction at most {formatting.fixed(float(full_hi), 2)}; canonical at "
      f"least {formatting.fixed(canon_lo, 2)}" + ("" if claimed else " (measured only, p > q)"))
if claimed:
    verified.record(f"full model, largest sigma ({sigmas[i_large]:g}): trap rate below the canonical trap rate",
                    bool(full_hi < canon_lo),
                    check="upper end of the full model's trapped fraction (SGD runs of markovlib's Trainer) below the lower "
                          "end of the canonical "
                          "trapped fraction (integrated draws, both scalings); one-sided Wilson ends, Bonferroni over 3",
                    measured=f"full model at most {formatting.fixed(float(full_hi), 2)}, canonical at least "
                             f"{formatting.fixed(canon_lo, 2)}",
                    tolerance="full-model upper end < canonical lower end", kind="same code")
_ = verified.record("the energy rule (predict_limit) gives the integrated end state of every resolved draw",
                    canon["disagree"] == 0 and unresolved < 0.01,
                    check=f"markovlib.markov.energy.predict_limit on the same {ends.size} draws",
                    measured=f"{canon['disagree']} resolved draws disagree; unresolved {formatting.bound(unresolved, UNRESOLVED_PRINT)}",
                    tolerance="none disagree; unresolved under 1 %", kind="same code")

# %%
guideline_drawings.trap_probability(sigmas, trapped, canon, sigma_fine,
                                    title=f"Trap probability under SGD, p = {p:g}, q = {q:g} (beyond the paper)")
plt.show()

# %% [markdown]
# The canonical model cannot produce the full model's curve: in two scalars, the sign of $w$ is a wall (the flow
# never crosses $w = 0$, {prf:ref}`Lemma 1 <lem-1>`) and the whole half-plane $w > 0$ is a basin of the bad minimum. A
# plausible reason, not measured here: a Gaussian feed-forward layer is not one scalar (its $r = 4d$ neurons have rows
# of both signs), so at larger $\sigma$ the full model is not confined to the canonical manifold. The guideline of the paper, "initialize in
# $\{w < 0, E > E_{\rm sad}\}$", remains the reliable choice: in the stored grid it reached the bigram predictor in every chain
# below the line ({glue:text}`ig_grid_guide_below`) and in every chain above it with $p \le q$
# ({glue:text}`ig_grid_guide_above`), though not on every chain with $p > q$ ({glue:text}`ig_rev_fails`),
# without a plateau, while escaping by scale or by Adam's drift depends on the seed, the optimizer and the run
# length (measured here), and presumably on the chain and the width (not measured here).

# %% tags=["hide-input"]
_ = record_results({
    "fig4_standard_final_ratio_max": float(final_ratio["standard"].max()),
    "fig4_guideline_final_ratio_min": float(final_ratio["guideline"].min()),
    "entropy_rate": chain.entropy_rate, "marginal_entropy": chain.marginal_entropy,
    "plateau_c_star": c_star(plateau_p, plateau_q),
    "adamw_escape_fraction": float(np.isfinite(escape).mean()),
    "adamw_escape_step_min": float(escape.min()), "adamw_escape_step_median": float(np.median(escape)),
    "sgd_max_ratio": max(float(np.max(r)) for _, r, _ in sgd_curves),
    "grid_standard_below_max_steps": float(np.max([T["standard"][cells.index(c)] for c in below])),
    "grid_standard_above_min_steps": float(np.min([T["standard"][cells.index(c)] for c in above])),
    "grid_guideline_max_steps": float(np.max(T["guideline"])),
    "slice_max_difference": worst_slice,
    **{f"runs_held/{c}": k / n for c, (k, n, _) in counts.items()},
    **{f"trap_sgd_sigma_{s:g}": float(t) for s, t in zip(sigmas, trapped.mean(axis=1))},
    **{f"trap_canonical_sigma_{s:g}": float(t) for s, t in zip(sigmas, trap_int[0])},
    "canonical_unresolved_fraction": unresolved,
    **verified.summary(),
})

# %% [markdown]
#
# (sec-ig-range)=
# ## Where the claims stop
#
# Claims 1 and 5 are stated for chains with $p + q \ge 1 + $ `margin` (at least 0.2), $p \le q$ and
# $p, q$ in [{glue:text}`ig_range_lo`, {glue:text}`ig_range_hi`], at the context, batch, step counts, learning
# rates and initialization scale of the parameters cell (the validation accepts no other values), with at least 10
# live seeds per count, and claim 5 for scales from 0.02 to 0.4. Chains with $p > q$ are accepted: there claim 1's
# guideline count and claim 5's full-model counts are printed as measurements, not claimed, because the stored chains
# with $p > q$ show the guideline failing on some of them ([chains with p > q](#sec-ig-reversed)): the full model is
# not symmetric under relabeling the two symbols, while the canonical model is. Claims 3 and 4 are stated on the stored chains
# (the plateau chain; the grid's chains, each within [{glue:text}`ig_range_lo`, {glue:text}`ig_range_hi`] and at
# least 0.2 from the line) at the stored settings, which are the parameters cell's. The claims are checked at the
# defaults, and claims 1, 2 and 5 at the edges of these ranges with other seeds
# (`book/ci_params/init_guideline.yaml`).
#
# ## Changes after review
#
# **Changed claims** (review revA). Claim 3 read "AdamW leaves the plateau within 1200 steps in 10/10 seeds, for
# $|c^*| \ge 2$; for $|c^*| < 2$ the plateau can outlast the run": 10 live seeds at 1200 steps gave 10/10 at seeds
# 0 to 9 and 7/10 at seeds 30 to 39, and no run measured $|c^*| < 2$; it now reads as above, on one chain, from
# {glue:text}`ig_long_runs` stored runs of {glue:text}`ig_long_steps` steps, and the $|c^*| < 2$ sentence is gone.
# Claim 4 counted the runs of all chains of a side together (5 seeds per chain), which can hide a bad chain; it is
# now one count per chain over {glue:text}`ig_grid_runs` stored runs, with Bonferroni's correction. Claim 5's
# "canonical $\Pr(\text{trap}) \ge 1/2$ at every $\sigma$" was a fraction with a 3-standard-error tolerance that
# passed 0.466; it is now the derived bound (no draw with $w_0 > 0$ reaches the global minimum, $\Pr(w_0 > 0) =
# 1/2$), and "below the canonical trap rate" is now computed, not implied. The margin from the line is now at least
# 0.2 (it accepted any), and every count has at least 10 live seeds or 20 stored runs. (Earlier still, the chapter
# stated claims 1 and 5 at the paper's chain only, and its prose counted "3 of 6" and "at least 5 of 6" seeds while
# it ran 5.)
#
# **Changed claims** (review revC). The guideline point's rows, printed lines and prose read "(1, -1)" and "energy
# 0" while the point is the parameters `guideline_e`, `guideline_w` (any point of the data-agnostic region): at
# (3, -0.02) a row read "guideline point (1, -1): E = 0 > E_sad" beside the measured E = 5.088. The labels are now
# built from the parameters and the energy is glued. The unresolved fraction of the canonical draws printed the
# bound 0.002 ("measured about 1.5e-4"), and the chain (0.3, 0.9) with seed 20 printed 2.25e-3 in a passing row;
# the unresolved draws start near the saddle and move slowly, so the draws are now integrated to $t = 5000$ like
# the guideline points, which leaves at most 1.5e-3 of the draws of one scale unresolved at the Range's edges
# (8 chains, 8 scales from 0.02 to 0.4, 4 seeds), and the bound prints 0.005, under the 1 % tolerance; the
# $\Pr(\text{trap})$ row no longer says "the rest unresolved" when none is. The Fig. 4 and $\sigma$ rows and
# the comparison of the trap rates train the package's model with its `Trainer`; they were labelled
# "independent" and are now "same code" (the book's definition: independent evidence has no markovlib function
# under test on its path).

# %% [markdown]
# ## What was verified
#
# The table is generated from the checks above (a failing check stops the chapter where it fails); the per-run
# values behind each count are in the figures and in the chapter's recorded results.

# %% tags=["remove-cell"]
from markovlib.book.glue import summary

summary("init_guideline")  # in Jupyter: "What this chapter shows" with this run's numbers (removed from the book)

# %%
verified.table()

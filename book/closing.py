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
# # Where training ends: three conservation laws
#
# The three papers of this book share one idea that none of them draws out: a symmetry of the parameterization
# gives a quantity that gradient flow conserves, the initialization fixes its value, and that value decides where
# training ends. This closing chapter puts the three laws side by side, draws each on its invariant set from the
# package, and then runs one experiment on the same axes for all three: how gradient descent with finite steps,
# SGD, Adam and weight decay break each law, and up to which step size (or weight decay) the outcome that the
# initialization predicts is still the outcome that training reaches.
#
# ## What this chapter shows
#
# 1. **Three laws, one mechanism** ({prf:ref}`closing-prop-common`). Part I: the loss depends on $(e, w)$ only
#    through $c(e, w)$, so $E(e, w) = e^2 - w^2 - \mathrm{sign}(w)\log|w|$ is conserved
#    ({prf:ref}`Lemma 1 <lem-1>`); Part II: the rescaling $(a, w)\mapsto(a/s, s w)$ conserves
#    $\delta = a^2 - \lVert w\rVert^2$ ({prf:ref}`grq-prop-a1`); Part III: the per-neuron rescaling conserves
#    $c_k = \lVert w_k\rVert^2 - a_k^2$ ({prf:ref}`topo-prop-balance`). Each figure draws the invariant sets from the
#    package and a flow integrated independently on them (scipy's DOP853 on the chapter's own gradients; a fixed-step
#    RK4 for the ReLU network); the drift of the conserved quantity along it is below `flow_tol` (`flow_tol3` for
#    $c_k$).
# 2. **Finite steps** ({prf:ref}`closing-prop-gd`): one gradient-descent step changes a conserved $Q$ by
#    $\tfrac{h^2}{2}\,g^\top\nabla^2 Q\,g + O(h^3)$ (exactly $h^2 g^\top S g$ for the quadratic laws), checked step by
#    step; so over a fixed time $T$ the drift is $O(h)$: the fitted log–log slope of drift against $h$ lies in
#    $1 \pm$ `slope_margin` for each law under GD (measured {glue:text}`gd_slopes` for $E$, $\delta$, $c_k$). SGD's
#    minibatch losses keep the symmetry, so each SGD step obeys the same identity (checked); the fitted slope of its
#    drift over a fixed time is only measured ({glue:text}`sgd_slopes`): with few steps and noisy minibatches it
#    scatters far outside $1 \pm$ `slope_margin` at some seeds near the edge of the range ($p = 0.02$, $q = 0.88$),
#    so it carries no claim.
# 3. **Adam** rescales each coordinate of the gradient, the step is no longer orthogonal to $\nabla Q$, and the
#    change in one step is first order in $h$ (halving $h$ halves it, where GD's is quartered); over a fixed time its
#    drift at the smallest $h$ is at least `adam_factor` times that of GD (measured ratios
#    {glue:text}`adam_ratios`).
# 4. **Weight decay** ({prf:ref}`closing-prop-decay`): under the flow with decay $\lambda$, the quadratic laws decay
#    exactly, $\delta(t) = \delta(0)e^{-2\lambda t}$ and $c_k(t) = c_k(0)e^{-2\lambda t}$, while the energy obeys
#    $\dot E = -\lambda(2e^2 - 2w^2 - \mathrm{sign}\,w)$, which is not a function of $E$: there is no decay law for
#    $E$. Both checked against independent integrations; GD with decay approaches the decayed flow at $O(h)$.
# 5. **When the predictions still hold.** Part I: the basin (bigram or unigram) read off the energy
#    (`energy.predict_limit`, {prf:ref}`Thm 2 <thm-2>`); Part II: the interpolant that $\delta$ selects
#    (`richlazy_exact.implicit_bias_limit`, {prf:ref}`grq-thm-3-1`); Part III: the sign of every pathological
#    neuron's output weight (the two sides of $H(c)$). For each optimizer and step size, the count of
#    initializations that end where the theorem says, with its Wilson interval. Checked: GD at the smallest step
#    ends where each theorem predicts for more than a fraction `agree_rate` of the initializations (counts
#    {glue:text}`gd_small_counts`), and weight decay keeps Part III's pathological signs (counts
#    {glue:text}`decay_sign_counts`). Measured only: how often Adam at the smallest step changes the outcome
#    (discordant pairs with GD: {glue:text}`adam_discordant`), and the largest step size and weight decay at which
#    the prediction still demonstrably holds ({glue:text}`largest_steps`).
# 6. **Explorer: step size $h$ and the optimizer.** For the chapter's three problems at their default sizes (seed 0,
#    {glue:text}`drift_explorer_inits` initializations per law), the drift of each law over time and where training
#    ends, for GD, SGD and Adam at any $h$. Checked over the rendered book's frames: GD's drift at $t = 2$ is first
#    order in $h$ for every law (log-log slopes {glue:text}`drift_explorer_slopes` over $h \in \{0.01, 0.03, 0.1\}$,
#    within $1 \pm$ `slope_margin`), Adam's at $h = 0.01$ is at least `adam_factor` times GD's (smallest ratio
#    {glue:text}`drift_explorer_ratio`).
#
# **Range.** Part I: the chain `pq` with $p, q \in [0.02, 0.98]$ and $|p + q - 1| \ge$ `margin`, initializations
# uniform in $[-1.5, 1.5]^2$ (with $|w_0| \ge 0.2$ for the drift study). Part II: one neuron, $d$ = `d2`, $n$ = `n2` < $d$ (so $\delta$ selects
# the interpolant), $|\delta| \le 2$, initial products $\beta_0$ with $y_i x_i^\top\beta_0 > 0$ (the theorem's
# setting; outside it the limit for $\delta < 0$ can differ, see below). Part III: $d$ = `d3`, $l$ = `width`
# neurons, $e = 1$, a ReLU teacher with a positive output weight, weights $\mathcal U(-1, 1)$. Step sizes `lrs` in
# $[10^{-3}, 0.1)$ (spanning a factor of at least 4; below $10^{-3}$ the one-step check's cubic remainder sinks towards
# rounding) for the drift study over time `t_drift` $\ge 20\max$ `lrs` (at least 20 steps per run, so that every run
# reaches about the same time $T_h = h\,\mathrm{round}(T/h)$); `pred_lrs` (the smallest at most $0.1$) and `decays` for the
# predictions, `n_pred` initializations per law, at least as many as let an all-agreeing count clear `agree_rate`
# at the Bonferroni level of the whole grid (100 at the defaults); weight decay and time of the drift study with
# $\lambda T \le 5$ (beyond it $\delta(T) = \delta(0)e^{-2\lambda T}$ falls towards rounding and GD and the
# decayed flow differ only by rounding) and $\lambda^2 h_{\max} T \le 0.15$ (GD with decay multiplies $\delta$ by
# $(1 - h\lambda)^2$ per step, so it lags the flow by the factor $e^{-x}$, $x = \lambda^2 hT$, whose log-log slope
# in $h$ is $1 - x/2 + O(x^2)$: the $O(h)$ regime needs $x$ small); any seed. The parameters cell refuses values outside these ranges.
# *Changed claims (review B):* the decay claims were stated for any $\lambda \le 1$, $T \le 20$ and failed at
# $\lambda T \approx 19$ (E-rate error $7.5 \cdot 10^{-8}$, slopes 0.5 to 1.04); they are now stated for
# $\lambda T \le 5$ and $\lambda^2 h_{\max} T \le 0.15$ (at $\lambda = 0.99$, $T = 5.05$, $h_{\max} = 0.1$ the slopes of
# $\delta$ and $c_k$ were 0.77 to 0.87, failing at three of six seeds). `n_pred` $\ge 60$ left the largest-step measurement unresolvable ("none" for every law); the
# minimum now follows from the grid. The left-out initializations were said to start near a separatrix, which
# was not checked; they are now called slow to converge. The RK4 drifts of $c_k$ print as a bound 100 times below
# the tolerance (at least 3 times the measured value, else a one-digit bound that is) instead of 10 times below. Claims over initializations are counts with
# one-sided Wilson bounds against `agree_rate`, with Bonferroni control over the cells where one claim is tested
# (`alpha` family-wise). *Changed claims (review C):* the GD drift slope was stated for any
# `t_drift` in $(0, 20]$ and failed at `t_drift` $= 0.05$, `lrs` $= (0.099, 0.05, 0.0245)$ (runs of 1, 1 and 2
# steps; slopes 1.56, 1.50, 1.54); it is now stated, and enforced, for `t_drift` $\ge 20\max$ `lrs`, where it holds
# (slopes {glue:text}`gd_slopes` at the defaults, and at the CI set with `t_drift` raised to $20 \times 0.09$). `lrs` had no
# lower bound and the one-step check failed at $h \approx 4 \cdot 10^{-6}$ (cubic-remainder ratio 0.73, its remainder
# below rounding); `lrs` is now stated and enforced in $[10^{-3}, 0.1)$ (ratio {glue:text}`third_ratio` at the
# defaults). `flow_tol`, `flow_tol3` and `adam_factor` accepted any positive value (`adam_factor` $10^{-9}$,
# `flow_tol` $1$ emptied the claims); each may now only be made stricter than its default ($(0, 10^{-8}]$,
# $(0, 10^{-4}]$, $\ge 5$). CI re-runs the chapter at the edges (`book/ci_params/closing.yaml`: a chain at the corner
# of the range on the other side of $p + q = 1$, other sizes, seeds and step sizes).

# %% tags=["parameters"]
seed = 0  # seed of every random draw
pq = [0.9, 0.9]  # Part I chain (p, q)
margin = 0.1  # Part I chains keep this distance from the line p + q of one
d2 = 3  # Part II input dimension
n2 = 2  # Part II training points (fewer than d2, so delta selects the interpolant)
d3 = 2  # Part III input dimension
width = 4  # Part III hidden neurons
n3 = 20  # Part III training points
n_pool = 4096  # Part I pool of sampled transitions for SGD
batch1 = 64  # Part I SGD minibatch (transitions)
batch2 = 1  # Part II SGD minibatch (points)
batch3 = 5  # Part III SGD minibatch (points)
n_drift = 8  # initializations per law in the drift study
t_drift = 2.0  # fixed training time T of the drift study
n_sgd = 4  # minibatch sequences per initialization for SGD in the drift study (its median is over inits and sequences)
lrs = [0.04, 0.02, 0.01, 0.005]  # step sizes of the drift study
weight_decay = 0.1  # weight decay lambda of the drift study
flow_tol = 1e-8  # fixed before the data: drift of E and delta along the independent flows (DOP853, rtol 1e-12)
rk4_dt = 0.002  # step of the fixed-step RK4 flows of Part III (adaptive solvers stall at the ReLU kinks)
flow_tol3 = 1e-4  # fixed before the data: drift of c_k along the RK4 flows (first order in rk4_dt at the kinks)
t_fig3 = 5.0  # Part III time of the drawn flow
slope_margin = 0.2  # fixed before the data: the GD log-log slopes (and GD with decay against the decayed flow) within one plus or minus this
adam_factor = 5.0  # fixed before the data: Adam drift over GD drift at the smallest step, at least this
n_pred = 100  # initializations per law in the prediction study (enough for an all-agreeing count to clear agree_rate over the grid)
pred_lrs = [0.05, 0.1, 0.2, 0.4, 0.8, 1.6]  # step sizes of the prediction study
decays = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3]  # weight decays of the prediction study (GD at the smallest pred step)
t_pred1 = 50.0  # Part I training time of the prediction study (doubled, at most 5 times, until GD at the smallest step has converged for half of the inits)
t_pred2 = 200.0  # Part II training time (doubled likewise)
t_pred3 = 20.0  # Part III training time
beta_tol = 0.05  # fixed before the data: Part II end is the predicted interpolant if |beta - beta_pred| < beta_tol
conv_tol = 1e-6  # fixed before the data: a GD run at the smallest step has converged by its time if its gradient norm is below this
agree_rate = 0.9  # fixed before the data: a prediction holds at a setting if the one-sided Wilson lower end of its agreeing fraction exceeds this
alpha = 0.05  # family-wise error of each claim over initializations (Bonferroni over the cells where it is tested)

# %%
from markovlib.book import params
from markovlib.book.inference import wilson_interval, wilson_lower_z

seed = params.nonnegative_int("seed", seed)
margin = params.real("margin", margin, 0.0, 0.5)
pq = params.chain("pq", pq, margin=margin, within=params.THEORY_RANGE)
d2 = params.positive_int("d2", d2)
n2 = params.positive_int("n2", n2)
if not n2 < d2:
    raise ValueError(f"n2 must be smaller than d2 = {d2} (an underdetermined problem), got {n2}")
d3 = params.positive_int("d3", d3)
width = params.positive_int("width", width)
n3 = params.positive_int("n3", n3)
n_pool = params.positive_int("n_pool", n_pool)
batch1 = params.positive_int("batch1", batch1)
batch2 = params.positive_int("batch2", batch2)
batch3 = params.positive_int("batch3", batch3)
for _name, _b, _n in (("batch1", batch1, n_pool), ("batch2", batch2, n2), ("batch3", batch3, n3)):
    if _b > _n:
        raise ValueError(f"{_name} must be at most the number of samples {_n}, got {_b}")
n_drift = params.positive_int("n_drift", n_drift)
t_drift = params.real("t_drift", t_drift, 0.0, 20.0, closed=False)
n_sgd = params.positive_int("n_sgd", n_sgd)
# the drift claims are asymptotic in h, but below 1e-3 the one-step check's cubic remainder (order h^3) sinks towards
# the rounding of Q itself (at h near 4e-6 its halving ratio was 0.73, not 8) and the drift study runs T/h steps
lr_min = 1e-3  # smallest accepted step size of the drift study
lrs = sorted(params.real_list("lrs", lrs, lr_min, 0.1), reverse=True)
if lrs[0] >= 0.1:
    raise ValueError(f"lrs must lie in [{lr_min:g}, 0.1), got {lrs!r}")
if len(set(lrs)) < 3 or lrs[0] < 4 * lrs[-1]:
    raise ValueError(f"lrs must hold at least 3 different step sizes spanning a factor of at least 4 (for a slope), "
                     f"got {lrs!r}")
# a run reaches T_h = h round(T/h): the drift of a run is about (h/2) times an integral over [0, T_h], so a slope
# in h needs T_h close to T at every step size; with at least 20 steps per run T_h/T lies in [0.975, 1.025], which
# moves the fitted slope by less than 0.04 over a span of 4 (with 1 or 2 steps the slopes were 1.5)
steps_min = 20  # fewest steps per run in the drift study: t_drift at least this times max(lrs)
if t_drift < steps_min * lrs[0]:
    raise ValueError(f"t_drift must be at least {steps_min} * max(lrs) = {steps_min * lrs[0]:g} (at least {steps_min} "
                     f"steps per run, so that every run reaches about the same time), got {t_drift:g}")
weight_decay = params.real("weight_decay", weight_decay, 0.0, 1.0, closed=False)
# Under the decay, delta and c_k shrink as exp(-2 lambda T) and w as exp(-lambda T): beyond lambda T = 5 delta(T) is
# below 5e-5 of its start, GD and the decayed flow differ by O(h) times that, and at lambda T near 19 only by
# rounding (1e-17), where no slope is resolvable; E's log|w| term then also grows as w -> 0.
decay_time_max = 5.0  # largest accepted weight_decay * t_drift
if weight_decay * t_drift > decay_time_max:
    raise ValueError(f"weight_decay * t_drift must be in (0, {decay_time_max:g}] (delta(T) = delta(0) exp(-2 lambda T) "
                     f"must stay far above rounding), got {weight_decay * t_drift:g}")
# GD with decay multiplies delta by (1 - h lambda)^2 per step: delta_GD(T) = delta_flow(T) exp(-x), x = lambda^2 h T
# to leading order, and the log-log slope of 1 - exp(-x) in h is 1 - x/2 + O(x^2): the O(h) regime the slope
# claim measures needs x small at the largest step (0.15 keeps this term's slope above 0.92)
decay_step_max = 0.15  # largest accepted weight_decay^2 * max(lrs) * t_drift
if weight_decay**2 * lrs[0] * t_drift > decay_step_max:
    raise ValueError(f"weight_decay^2 * max(lrs) * t_drift must be at most {decay_step_max:g} (GD with decay in its O(h) "
                     f"regime), got {weight_decay**2 * lrs[0] * t_drift:.3g}")
# thresholds fixed before the data may only be made stricter than the defaults (a looser one empties the claims)
flow_tol_max = 1e-8  # loosest accepted flow_tol (the default)
flow_tol = params.positive_real("flow_tol", flow_tol)
if flow_tol > flow_tol_max:
    raise ValueError(f"flow_tol must be in (0, {flow_tol_max:g}] (only stricter than the default), got {flow_tol!r}")
rk4_dt = params.real("rk4_dt", rk4_dt, 0.0, 0.01, closed=False)
flow_tol3_max = 1e-4  # loosest accepted flow_tol3 (the default)
flow_tol3 = params.positive_real("flow_tol3", flow_tol3)
if flow_tol3 > flow_tol3_max:
    raise ValueError(f"flow_tol3 must be in (0, {flow_tol3_max:g}] (only stricter than the default), got {flow_tol3!r}")
t_fig3 = params.real("t_fig3", t_fig3, 0.0, 50.0, closed=False)
slope_margin = params.real("slope_margin", slope_margin, 0.0, 0.5, closed=False)
adam_factor = params.real("adam_factor", adam_factor, 5.0)  # at least the default 5 (only stricter)
n_pred = params.positive_int("n_pred", n_pred)
pred_lrs = sorted(params.real_list("pred_lrs", pred_lrs, 0.0, 4.0, closed=False))
if pred_lrs[0] > 0.1:
    raise ValueError(f"the smallest of pred_lrs must be at most 0.1 (the claims at the smallest step are stated there), "
                     f"got {pred_lrs!r}")
decays = sorted(params.real_list("decays", decays, 0.0, 2.0, closed=False))
t_pred1 = params.real("t_pred1", t_pred1, 0.0, 1000.0, closed=False)
t_pred2 = params.real("t_pred2", t_pred2, 0.0, 2000.0, closed=False)
t_pred3 = params.real("t_pred3", t_pred3, 0.0, 1000.0, closed=False)
beta_tol = params.real("beta_tol", beta_tol, 0.0, 1.0, closed=False)
conv_tol = params.real("conv_tol", conv_tol, 0.0, 1e-3, closed=False)
agree_rate = params.real("agree_rate", agree_rate, 0.5, 1.0)
if agree_rate == 1.0:
    raise ValueError("agree_rate must be in [0.5, 1), got 1.0")
alpha = params.real("alpha", alpha, 0.0, 0.5, closed=False)
# n_pred must let an all-agreeing count clear agree_rate at the Bonferroni level of the measured grid (3 laws x
# (3 optimizers x len(pred_lrs) + len(decays)) cells), so that "the largest step at which the prediction holds" is
# resolvable; the claims at the smallest step need less
_z_grid = wilson_lower_z(alpha, 3 * (3 * len(pred_lrs) + len(decays)))
n_pred_min = next(n for n in range(1, 100000) if wilson_interval(n, n, _z_grid)[0] > agree_rate)
if n_pred < n_pred_min:
    raise ValueError(f"n_pred must be an integer >= {n_pred_min} (an all-agreeing count must clear agree_rate "
                     f"{agree_rate:g} at the grid's Bonferroni level), got {n_pred!r}")

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import display
from scipy.integrate import quad, solve_ivp

from markovlib.beyond import conservation as C
from markovlib.beyond import drift_drawings as DD
from markovlib.book import explorers, plotting, widgets
from markovlib.book.progress import progress_bar
from markovlib.book.formatting import bound, fixed, fraction, ladder_limit
from markovlib.book.glue import glue
from markovlib.book.report import Verification
from markovlib.book.sweep import record_results
from markovlib.markov import canonical as K
from markovlib.markov import drawings
from markovlib.markov.drawings import energy_contours
from markovlib.markov.energy import energy, predict_limit
from markovlib.numerics.numdiff import fd_gradient
from markovlib.richlazy import minimal_model as R
from markovlib.richlazy.minimal_exact import implicit_bias_limit
from markovlib.topology import invariant_set as T
from markovlib.topology import shallow_relu

plotting.use_style()
verified = Verification()  # one record per claim; the final cell prints the generated table
p, q = pq
c_star = K.c_star(p, q)
print(f"Part I chain p = {p}, q = {q}: c* = {fixed(c_star, 6)}")

# %% [markdown]
# ## Three laws side by side
#
# | | symmetry | conserved quantity | invariant set | what initialization decides |
# |---|---|---|---|---|
# | Part I (Markov transformer) | $L$ depends on $(e, w)$ only through $c(e, w) = e^2(1 + 2w\lvert w\rvert)$: every move along a level set of $c$ | $E(e, w) = e^2 - w^2 - \mathrm{sign}(w)\log\lvert w\rvert$ | a level curve of $E$ in one half plane $\mathrm{sign}(w) = \mathrm{sign}(w_0)$ | the global minimum (bigram) or the unigram trap $e = 0$: $(w_0, E_0)$ against $E_{sad}$ ({prf:ref}`Thm 2 <thm-2>`, {prf:ref}`Thm 8 <thm-8>`) |
# | Part II (rich and lazy) | rescaling $(a, w)\mapsto(a/s, s w)$, $s > 0$ | $\delta = \eta_w a^2 - \eta_a\lVert w\rVert^2$ | a hyperboloid: two sheets ($\delta > 0$), a cone ($\delta = 0$), one sheet ($\delta < 0$) | lazy, rich or delayed-rich learning and, for $n < d$, which interpolant: the minimizer of $\Psi_\delta$ ({prf:ref}`grq-thm-3-1`) |
# | Part III (ReLU topology) | per-neuron rescaling $(w_k, a_k)\mapsto(s w_k, a_k/s)$ | $c_k = \lVert w_k\rVert^2 - \lVert a_k\rVert^2$, one per neuron | a product of quadrics $H(c)$; $e = 1$ and $c_k < 0$ split it by the sign of $a_k$ | which connected component of $H(c)$, hence which signs of the output weights, training can reach ({prf:ref}`topo-prop-balance`) |
#
# In Parts II and III the conserved quantity is a quadratic form $Q = \theta^\top S\theta$ whose level sets are
# the orbits' transversals; with $\eta_a = \eta_w = 1$ the balance of one neuron is minus Part II's $\delta$. Part I's
# symmetry is not a group acting on the parameters but a fibration: $L = g(c)$, and any $Q$ with
# $\nabla Q\perp\nabla c$ is conserved.
#
# ```{prf:proposition} One mechanism
# :label: closing-prop-common
#
# Let $L = \ell\circ\phi$ with $\phi$ smooth and $Q$ a smooth function with $\nabla Q\cdot\nabla\phi_j = 0$ for every
# component $\phi_j$ (Part I: $\phi = c$; Parts II, III: $\phi$ = the network function, invariant under the
# rescaling whose generator is $S\theta$). Then $\nabla Q\cdot\nabla L = \sum_j \partial_j\ell\,\nabla Q\cdot\nabla\phi_j
# = 0$, and $Q$ is constant along $\dot\theta = -\nabla L$. The flow stays in $\{Q = Q(\theta_0)\}$, and where that set
# meets the critical set of $L$ is where training can end.
# ```
#
# The three laws' models, written out here with their gradients (the chapter's own code; the package's are used
# for the drawings and the predictions):

# %%
# Part I: the canonical model's reduced loss L = g(c(e, w)) (Lemma 5); theta = (e, w), rows are initializations
rng_pool = np.random.default_rng([seed, 1])
pi1 = p / (p + q)
x_now = (rng_pool.random(n_pool) < pi1).astype(int)
flip = rng_pool.random(n_pool) < np.where(x_now == 0, p, q)  # 0 -> 1 with prob. p, 1 -> 0 with prob. q
x_next = np.where(flip, 1 - x_now, x_now)


def grad1(th, idx=None):
    """grad L of the reduced loss; for a minibatch (idx) the reduced loss of the batch's empirical chain."""
    if idx is None:
        pb, qb = p, q
    else:
        x0, x1 = x_now[idx], x_next[idx]
        pb = ((x0 == 0) & (x1 == 1)).sum() + 0.5
        pb /= (x0 == 0).sum() + 1.0
        qb = ((x0 == 1) & (x1 == 0)).sum() + 0.5
        qb /= (x0 == 1).sum() + 1.0
    return np.stack(K.grad(th[:, 0], th[:, 1], pb, qb), axis=1)


def Q1(th):
    """independent reference (do not replace with markovlib): E(e, w) of Lemma 1, written out."""
    e, w = th[:, 0], th[:, 1]
    return e**2 - w**2 - np.sign(w) * np.log(np.abs(w))


def hessQ1(th):
    """Hessian of E: diag(2, -2 + sign(w)/w^2)."""
    H = np.zeros((len(th), 2, 2))
    H[:, 0, 0] = 2.0
    H[:, 1, 1] = -2.0 + np.sign(th[:, 1]) / th[:, 1] ** 2
    return H


# Part II: one neuron f(x) = a w.x on L = |X a w - y|^2 / (2n); theta = (a, w)
rng2 = np.random.default_rng([seed, 2])
X2 = rng2.normal(size=(n2, d2))
y2 = rng2.normal(size=n2)


def grad2(th, idx=None):
    Xb, yb = (X2, y2) if idx is None else (X2[idx], y2[idx])
    a, w = th[:, :1], th[:, 1:]
    gb = ((a * w) @ Xb.T - yb) @ Xb / len(yb)
    return np.concatenate([(gb * w).sum(1, keepdims=True), a * gb], axis=1)


def Q2(th):
    return th[:, 0] ** 2 - (th[:, 1:] ** 2).sum(1)


S2 = np.diag([1.0] + [-1.0] * d2)  # delta = theta^T S2 theta

# Part III: f(x) = sum_k a_k relu(w_k.x) on MSE/2; theta = (W flattened, a); a ReLU teacher with positive output
rng3 = np.random.default_rng([seed, 3])
X3 = rng3.normal(size=(n3, d3))
u3 = rng3.normal(size=d3)
y3 = 1.5 * np.maximum(X3 @ u3, 0.0)


def unpack3(th):
    return th[:, : width * d3].reshape(-1, width, d3), th[:, width * d3:]


def grad3(th, idx=None):
    """The package's batched ReLU-network gradient (markovlib.topology.shallow_relu), one network per row."""
    Xb, yb = (X3, y3) if idx is None else (X3[idx], y3[idx])
    W, a = unpack3(th)
    _, gW, ga = shallow_relu.loss_grad(W, a, Xb, yb)
    return np.concatenate([gW.reshape(len(th), -1), ga], axis=1)


def Q3(th):
    W, a = unpack3(th)
    return (W**2).sum(2) - a**2


S3 = np.diag([1.0] * (width * d3) + [-1.0] * width)  # sum_k c_k = theta^T S3 theta (each c_k: its own block)

# independent reference (do not replace with markovlib): the models' gradients against the package's
rng_c = np.random.default_rng([seed, 4])
th1 = rng_c.uniform(-1.5, 1.5, size=(5, 2))
th3 = rng_c.uniform(-1, 1, size=(3, width * d3 + width))


def loss3(t):
    W, a = unpack3(t[None, :])
    return 0.5 * np.mean((np.maximum(X3 @ W[0].T, 0) @ a[0] - y3) ** 2)


def loss2(t):
    return 0.5 * np.mean((X2 @ (t[0] * t[1:]) - y2) ** 2)


def loss1(t):
    return float(K.loss(t[0], t[1], p, q))


th2 = rng_c.normal(size=(3, d2 + 1))
grad_err = max(
    max(np.abs(fd_gradient(loss1, t) - grad1(t[None])[0]).max() for t in th1),
    max(np.abs(fd_gradient(loss2, t) - grad2(t[None])[0]).max() for t in th2),
    max(np.abs(fd_gradient(loss3, t) - grad3(t[None])[0]).max() for t in th3))
noether = max(np.abs((fd_gradient(lambda t: float(Q1(t[None])[0]), t) * grad1(t[None])[0]).sum()) for t in th1)
noether = max(noether, max(abs((2 * S2 @ t) @ grad2(t[None])[0]) for t in th2))
noether = max(noether, max(np.abs(Q3(t[None] + 1e-7 * grad3(t[None])) - Q3(t[None] - 1e-7 * grad3(t[None]))).max() / 2e-7
                           for t in th3))
def E_torch(t):
    """independent reference (do not replace with markovlib): E(e, w) of Lemma 1 in torch, for autograd."""
    return t[0] ** 2 - t[1] ** 2 - torch.sign(t[1]) * torch.log(torch.abs(t[1]))


H_err = max(np.abs(torch.autograd.functional.hessian(E_torch, torch.as_tensor(t)).numpy() - hessQ1(t[None])[0]).max()
            / np.abs(hessQ1(t[None])[0]).max() for t in th1)  # relative: the 1/w^2 term is large near w = 0
# printed bounds: at least 100 times the values measured at the defaults (in both numeric configurations), so the
# printed text is stable across machines; the tolerances are the claims' thresholds (finite differences with step
# 1e-6 have an error near 1e-10 here)
print("gradients of the three losses vs central finite differences:", bound(grad_err, 1e-7))
print("grad Q . grad L at random points (finite differences of Q):", bound(noether, 3e-7))
print("Hessian of E, closed form vs torch autograd (relative):", bound(H_err, 1e-13))
_ = verified.record("the chapter's gradients of the three losses", grad_err < 1e-6,
                    check="central finite differences (markovlib.numerics.numdiff) at random points",
                    measured=bound(grad_err, 1e-7), tolerance="1e-6", kind="independent")
_ = verified.record("Prop. closing-prop-common: grad Q . grad L = 0 for E, delta and c_k", noether < 1e-6,
                    check="finite-difference gradient of Q (Part I), S theta (Part II), central difference of c_k along grad L (Part III)",
                    measured=bound(noether, 3e-7), tolerance="1e-6", kind="independent")
_ = verified.record("Hessian of E = diag(2, -2 + sign(w)/w^2)", H_err < 1e-10, check="torch autograd Hessian of E, float64",
                    measured=bound(H_err, 1e-13), tolerance="1e-10 relative", kind="independent")

# %% [markdown]
# ## The invariant sets, drawn from the package
#
# Left: Part I's energy contours ({prf:ref}`Lemma 1 <lem-1>`, `drawings.energy_contours`) with the critical loci of
# {prf:ref}`Thm 1 <thm-1>` (`plotting.critical_points`): the global minima $\Gamma^*$ in green, the unigram line
# $e = 0$. Middle: Part II's hyperboloids $a^2 - \lVert w\rVert^2 = \delta$ in the plane $(\lVert w\rVert, a)$
# (`richlazy.conserved_delta` on a grid): the rotations of $w$ about the origin leave the picture unchanged. Right:
# Part III's quadrics $\lVert w_k\rVert^2 - a_k^2 = c_k$ of one neuron in the plane $(\lVert w_k\rVert, a_k)$
# (`topology.neuron_balances` on a grid): for $c_k < 0$ the two branches $a_k > 0$ and $a_k < 0$ never meet. On each,
# dashed: the level sets of the drawn flows' initializations; black: flows integrated by scipy's DOP853 (rtol $10^{-12}$) on the chapter's own gradients, which stay on their
# level set.

# %%
def integrate(gradf, th0, t_end, n_eval=400):
    """independent reference (do not replace with markovlib): DOP853 on -grad L of the chapter's own code."""
    sol = solve_ivp(lambda t, y: -gradf(y[None, :])[0], (0.0, t_end), th0, method="DOP853", rtol=1e-12, atol=1e-14,
                    t_eval=np.linspace(0.0, t_end, n_eval))
    return sol.y.T


def rk4(field, th0, t_end, dt=rk4_dt):
    """independent reference (do not replace with markovlib): classical RK4 at a fixed step, rows = inits."""
    n = max(1, int(round(t_end / dt)))
    dt = t_end / n
    y = np.atleast_2d(np.asarray(th0, dtype=float)).copy()
    out = [y.copy()]
    for _ in range(n):
        k1 = field(y)
        k2 = field(y + dt / 2 * k1)
        k3 = field(y + dt / 2 * k2)
        k4 = field(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(y.copy())
    return np.stack(out)


box = 2.0
inits1 = [np.array([0.3, -1.5]), np.array([0.5, -0.3]), np.array([-0.6, 0.8])]
paths1 = [integrate(grad1, th, 100.0) for th in inits1]
pred_fig = [predict_limit(th[0], th[1], p, q).outcome for th in inits1]
inits2 = []
for delta_, sgn in ((1.0, 1.0), (0.0, -1.0), (-1.0, 1.0)):
    b0 = 0.3 * rng2.normal(size=d2)
    b0 *= np.sign(((X2 @ b0) * y2).sum())  # on the theorem's side for the drawing
    a0 = sgn * np.sqrt((delta_ + np.hypot(delta_, 2 * np.linalg.norm(b0))) / 2)
    inits2.append(np.concatenate([[a0], b0 / a0]))
paths2 = [integrate(grad2, th, 60.0) for th in inits2]
th_net = np.concatenate([rng3.uniform(-1, 1, size=width * d3), rng3.uniform(-1, 1, size=width)])
path3 = rk4(lambda y: -grad3(y), th_net, t_fig3)[:, 0]
drift_fig = max(max(np.abs(Q1(P) - Q1(P[:1])).max() for P in paths1), max(np.abs(Q2(P) - Q2(P[:1])).max() for P in paths2))
drift_fig3 = np.abs(Q3(path3) - Q3(path3[:1])).max()
print("max |Q(t) - Q(0)| along the drawn flows, E and delta:", bound(drift_fig, flow_tol / 100))
# first order in rk4_dt at the kinks: the bound is flow_tol3 / 100 while the measured value stays 3 times below it,
# else it follows the measured value upward on a one-digit ladder (at least 3 times it)
drift_fig3_lim = ladder_limit(drift_fig3, margin=3.0, floor=flow_tol3 / 100)
print(f"max |c_k(t) - c_k(0)| along the drawn RK4 flow (step {rk4_dt}):", bound(drift_fig3, drift_fig3_lim))
_ = verified.record("E and delta conserved along the drawn flows", drift_fig < flow_tol,
                    check="scipy DOP853 (rtol 1e-12) on the chapter's gradients, the figures' trajectories",
                    measured=bound(drift_fig, flow_tol / 100), tolerance=f"{flow_tol:g}", kind="independent")
_ = verified.record("c_k conserved along the drawn flow", drift_fig3 < flow_tol3,
                    check=f"fixed-step RK4 (step {rk4_dt}) on the chapter's gradient",
                    measured=bound(drift_fig3, drift_fig3_lim), tolerance=f"{flow_tol3:g}", kind="independent")

fig, axes = plt.subplots(1, 3, figsize=(15, 4.8), layout="constrained")
ax = axes[0]
energy_contours(ax, p, q, e_lim=box, w_lim=(-box, box), arrows=False)
drawings.critical_points(ax, p, q, e_lim=box, w_lim=(-box, box), legend=False)
for P, outc in zip(paths1, pred_fig):
    ax.plot(P[:, 0], P[:, 1], color="k", lw=1.6)
    ax.plot(P[0, 0], P[0, 1], "o", color="k", ms=5)
    ax.plot(P[-1, 0], P[-1, 1], "*", ms=12, color=plotting.GLOBAL if outc == "global_min" else plotting.LOCAL)
ax.set_xlabel("e")
ax.set_ylabel("w")
ax.set_title(f"Part I: contours of E(e, w), p = {p}, q = {q}")
ax = axes[1]
r_g, a_g = np.meshgrid(np.linspace(0, 2, 201), np.linspace(-2, 2, 201))
D = R.conserved_delta(a_g.ravel(), r_g.ravel()[:, None] * np.eye(1, d2), 1.0, 1.0).reshape(r_g.shape)
levels = [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0]
level_colours = ["tab:brown" if v < 0 else ("k" if v == 0 else "tab:blue") for v in levels]
cs_ = ax.contour(r_g, a_g, D, levels=levels, colors=level_colours, linewidths=0.9)
ax.clabel(cs_, fontsize=8)
ax.contour(r_g, a_g, D, levels=sorted(set(np.round(Q2(np.array(inits2)), 12))), colors="0.4", linestyles="--",
           linewidths=0.8)
for P in paths2:
    ax.plot(np.linalg.norm(P[:, 1:], axis=1), P[:, 0], color="k", lw=1.6)
    ax.plot(np.linalg.norm(P[0, 1:]), P[0, 0], "o", color="k", ms=5)
ax.set_xlabel("|w|")
ax.set_ylabel("a")
ax.set_title("Part II: hyperboloids a^2 - |w|^2 = delta")
ax = axes[2]
Cg = T.neuron_balances(r_g.ravel()[:, None] * np.eye(1, d3), a_g.ravel()).reshape(r_g.shape)
cs_ = ax.contour(r_g, a_g, Cg, levels=levels, colors=level_colours, linewidths=0.9)
ax.clabel(cs_, fontsize=8)
ax.contour(r_g, a_g, Cg, levels=sorted(set(Q3(th_net[None, :])[0])), colors="0.4", linestyles="--", linewidths=0.8)
W_p, a_p = unpack3(path3)
c_net = Q3(path3[:1])[0]
for k in range(width):
    col = plotting.LOCAL if c_net[k] < 0 else "k"
    ax.plot(np.linalg.norm(W_p[:, k], axis=1), a_p[:, k], color=col, lw=1.6,
            label="pathological neuron (c_k < 0)" if c_net[k] < 0 and k == int(np.argmin(c_net)) else None)
    ax.plot(np.linalg.norm(W_p[0, k]), a_p[0, k], "o", color=col, ms=5)
ax.set_xlabel("|w_k|")
ax.set_ylabel("a_k")
ax.set_title("Part III: quadrics |w_k|^2 - a_k^2 = c_k")
if np.any(c_net < 0):
    ax.legend(loc="lower right")
plt.show()

# %% [markdown]
# ## How discrete optimizers break the laws
#
# ```{prf:proposition} Gradient descent breaks a conservation law at second order
# :label: closing-prop-gd
#
# Let $\nabla Q\cdot\nabla L = 0$ everywhere and $\theta' = \theta - h g$ with $g = \nabla L(\theta)$. Taylor's
# theorem gives $Q(\theta') - Q(\theta) = -h\nabla Q\cdot g + \tfrac{h^2}{2}g^\top\nabla^2Q(\theta)g + O(h^3)
# = \tfrac{h^2}{2}g^\top\nabla^2Q\,g + O(h^3)$, and for a quadratic form $Q = \theta^\top S\theta$ exactly
# $Q(\theta') - Q(\theta) = h^2 g^\top S g$. Over a fixed time $T$ ($T/h$ steps along a path within $O(h)$ of the
# flow) the drift is $\tfrac{h}{2}\int_0^T \nabla L^\top\nabla^2 Q\,\nabla L\,dt + O(h^2) = O(h)$. The same holds for
# SGD step by step when every minibatch loss has the symmetry (then $\nabla Q\cdot g_B = 0$): true for all three
# models here (Part I's minibatch loss is the reduced loss of the batch's empirical chain, a function of $c$ only).
# ```
#
# For Adam the step is $h\,\hat m/(\sqrt{\hat v} + \epsilon)$: a per-coordinate rescaling of (averaged) gradients,
# with $\nabla Q\cdot\hat m/\sqrt{\hat v}\neq 0$ in general, so $Q$ changes at first order per step and by $O(1)$ over a
# fixed time. Adam's step has length about $h$ per coordinate whatever the gradient's size, so its "time" $T/h$ steps
# move the parameters by $O(T)$ too: the comparison at equal $h$ and $T$ is fair.
#
# ```{prf:proposition} Weight decay
# :label: closing-prop-decay
#
# Under $\dot\theta = -\nabla L - \lambda\theta$: for a quadratic $Q = \theta^\top S\theta$ with
# $\theta^\top S\nabla L = 0$ (Parts II, III), $\dot Q = 2\theta^\top S\dot\theta = -2\lambda Q$, so
# $Q(t) = Q(0)e^{-2\lambda t}$: every $\delta$ and every $c_k$ decays to 0 (the hyperbola's branches close in on the
# cone), but keeps its sign. For Part I, $\dot E = -\lambda\,\theta\cdot\nabla E = -\lambda(2e^2 - 2w^2 - \mathrm{sign}\,w)$
# (with $\partial_w E = -2w - 1/|w|$), which is not a function of $E$ alone: $E$ has no decay law.
# ```
#
# The experiment: `n_drift` initializations per law, each trained for the same time $T$ = `t_drift` at every step
# size in `lrs` with GD, SGD, Adam ($\beta = (0.9, 0.999)$, $\epsilon = 10^{-8}$) and GD with weight decay
# `weight_decay`, through `conservation.run_optimizer`; the drift is $\max_k|Q(T) - Q(0)|$, its median over the
# initializations is plotted (for SGD over the initializations and `n_sgd` minibatch sequences).
# $T$ is rounded to whole steps, $T_h = h\,\mathrm{round}(T/h)$, and every comparison with a flow is made at $T_h$
# (comparing at $T$ itself adds an error of order $T_h - T$ that does not shrink with $h$). The drift claims are asymptotic ($h \to 0$): they are stated for `lrs` in $[10^{-3}, 0.1)$ spanning a factor of at
# least 4, with `t_drift` at least 20 times the largest step (a run of one or two steps reaches $T_h$ far from $T$,
# and the drift, about $\tfrac{h}{2}$ times an integral over $[0, T_h]$, then scales like $T_h h$, not like $h$).

# %%
def inits1(n, rng, w_min=0.0):
    """Part I: uniform in [-1.5, 1.5]^2 with |w| >= w_min."""
    out = np.empty((0, 2))
    while len(out) < n:
        th = rng.uniform(-1.5, 1.5, size=(4 * n, 2))
        out = np.concatenate([out, th[np.abs(th[:, 1]) >= max(w_min, 1e-3)]])
    return out[:n]


def inits2(n, rng):
    """Part II: delta uniform in [-2, 2], beta0 = a0 w0 Gaussian (scale 0.3) with y_i x_i.beta0 > 0 for all i."""
    deltas, betas = [], []
    while len(betas) < n:
        b0 = 0.3 * rng.normal(size=d2)
        if np.all((X2 @ b0) * y2 > 0):
            betas.append(b0)
            deltas.append(rng.uniform(-2, 2))
    deltas, betas = np.array(deltas), np.array(betas)
    a0 = np.sqrt((deltas + np.hypot(deltas, 2 * np.linalg.norm(betas, axis=1))) / 2) * rng.choice([-1.0, 1.0], n)
    return np.concatenate([a0[:, None], betas / a0[:, None]], axis=1), deltas, betas


def inits3(n, rng):
    """Part III: every weight uniform in (-1, 1)."""
    return rng.uniform(-1, 1, size=(n, width * d3 + width))


rng_d = np.random.default_rng([seed, 5])
laws = {"E (Part I)": (grad1, Q1, inits1(n_drift, rng_d, w_min=0.2), n_pool, batch1),
        "delta (Part II)": (grad2, Q2, inits2(n_drift, rng_d)[0], n2, batch2),
        "c_k (Part III)": (grad3, Q3, inits3(n_drift, rng_d), n3, batch3)}
kinds = ("gd", "sgd", "adam", "gd+wd")


def flow_wd(gradf, th0, t_end):
    """independent reference (do not replace with markovlib): DOP853 on -grad L - lambda theta, dense output."""
    return solve_ivp(lambda t, y: -gradf(y[None, :])[0] - weight_decay * y, (0.0, t_end), th0, method="DOP853",
                     rtol=1e-12, atol=1e-14, dense_output=True)


drift = {law: {k: np.zeros(len(lrs)) for k in kinds + ("wd_vs_flow",)} for law in laws}
wd_law_err, wd_law_err3, E_rate_err = 0.0, 0.0, 0.0
for law, (gradf, Qf, th0, n_data, batch) in progress_bar(laws.items(), desc="drift study", total=len(laws)):
    if law == "c_k (Part III)":  # RK4: the adaptive solvers stall at the kinks
        Q_flow_T = Qf(rk4(lambda y: -grad3(y) - weight_decay * y, th0, t_drift)[-1])
        wd_law_err3 = np.abs(Q_flow_T - C.decay_law(Qf(th0), weight_decay, t_drift)).max()
    else:
        sols = [flow_wd(gradf, th, t_drift) for th in th0]
        Q_flow_T = np.array([Qf(s.y[:, -1][None, :])[0] for s in sols])
    if law == "delta (Part II)":  # Prop. closing-prop-decay: the exact decay law
        wd_law_err = np.abs(Q_flow_T - C.decay_law(Qf(th0), weight_decay, t_drift)).max()
    elif law == "E (Part I)":  # dE/dt = -lambda (2e^2 - 2w^2 - sign w) along the flow with decay, integrated independently (quad)
        for s, th in zip(sols, th0):
            rate = lambda t, s=s: -weight_decay * (2 * s.sol(t)[0] ** 2 - 2 * s.sol(t)[1] ** 2 - np.sign(s.sol(t)[1]))  # noqa: E731
            dE = quad(rate, 0.0, t_drift, epsabs=1e-12, epsrel=1e-12, limit=200)[0]
            E_rate_err = max(E_rate_err, abs(Q1(s.y[:, -1][None, :])[0] - Q1(th[None, :])[0] - dE))
    for i, h in enumerate(lrs):
        steps = int(round(t_drift / h))
        t_h = steps * h  # the time the run reaches (t_drift up to rounding to whole steps): the flow is taken there
        if law == "c_k (Part III)":
            Q_flow_h = Qf(rk4(lambda y: -grad3(y) - weight_decay * y, th0, t_h)[-1])
        else:
            Q_flow_h = np.array([Qf(flow_wd(gradf, th, t_h).y[:, -1][None, :])[0] for th in th0])
        for k in kinds:
            runs_k = [C.run_optimizer(gradf, th0, h, steps, quantity=Qf, optimizer="gd" if k == "gd+wd" else k,
                                      weight_decay=weight_decay if k == "gd+wd" else 0.0, n_data=n_data, batch=batch,
                                      seed=seed + j) for j in range(n_sgd if k == "sgd" else 1)]
            run = runs_k[0]
            drift[law][k][i] = np.median(np.concatenate([r_.final_drift() for r_ in runs_k]))
            if k == "gd+wd":
                dev = np.abs(run.quantity[-1] - Q_flow_h).reshape(len(th0), -1).max(axis=1)
                drift[law]["wd_vs_flow"][i] = np.median(dev)

slopes = {law: {k: C.loglog_slope(lrs, drift[law][k]) for k in ("gd", "sgd", "adam", "wd_vs_flow")} for law in laws}
short = {"E (Part I)": "E", "delta (Part II)": "delta", "c_k (Part III)": "c_k"}


def slope_text(key):
    """The measured slopes of one optimizer, one per law (2 decimals: they vary across machines near 1e-10)."""
    return ", ".join(f"{fixed(slopes[law][key], 2)} ({short[law]})" for law in laws)


adam_ratios = {law: drift[law]["adam"][-1] / drift[law]["gd"][-1] for law in laws}
adam_ratio = min(adam_ratios.values())
adam_text = ", ".join(f"{adam_ratios[law]:.1e} ({short[law]})" for law in laws)  # two digits: runs of 1/h steps
print(f"log-log slopes of the median drift against h, h in {lrs}, T = {t_drift} (claim: within 1 +- {slope_margin}):")
print("  GD:", glue("gd_slopes", slope_text("gd")))
print("  SGD (measured, not claimed; see below):", glue("sgd_slopes", slope_text("sgd")))
print("  GD + decay vs the decayed flow:", slope_text("wd_vs_flow"))
print("  Adam (not claimed):", slope_text("adam"))
print(f"Adam drift / GD drift at h = {lrs[-1]} (claim: at least {adam_factor}):", glue("adam_ratios", adam_text))
print("flow with decay: |delta(T) - delta(0) exp(-2 lambda T)|", bound(wd_law_err, 1e-11))
wd_law_err3_lim = ladder_limit(wd_law_err3, margin=3.0, floor=flow_tol3 / 100)  # as drift_fig3
print("flow with decay (RK4): |c_k(T) - c_k(0) exp(-2 lambda T)|", bound(wd_law_err3, wd_law_err3_lim))
print("flow with decay: |E(T) - E(0) - int -lambda(2e^2 - 2w^2 - sign w) dt|", bound(E_rate_err, 1e-10))
ok_gd = all(abs(slopes[law]["gd"] - 1) < slope_margin for law in laws)
ok_wd = all(abs(slopes[law]["wd_vs_flow"] - 1) < slope_margin for law in laws)
ok_adam = adam_ratio >= adam_factor
_ = verified.record("Prop. closing-prop-gd: GD drift over a fixed time is O(h), all three laws", ok_gd,
                    check=f"conservation.run_optimizer; log-log slope of the median drift over {n_drift} inits, h in {lrs}",
                    measured="slopes " + slope_text("gd"), tolerance=f"slope in 1 +- {slope_margin}", kind="same code")
_ = verified.record("Adam's drift over a fixed time is far above GD's, every law", ok_adam,
                    check=f"conservation.run_optimizer; median Adam drift / median GD drift at h = {lrs[-1]}",
                    measured="ratios " + adam_text, tolerance=f"ratio at least {adam_factor:g}", kind="same code")
_ = verified.record("Prop. closing-prop-decay: delta(t) = delta(0) exp(-2 lambda t) under the flow with decay",
                    wd_law_err < 1e-9, check="scipy DOP853 on the chapter's gradient with decay vs the closed form",
                    measured=bound(wd_law_err, 1e-11), tolerance="1e-9", kind="independent")
_ = verified.record("Prop. closing-prop-decay: c_k(t) = c_k(0) exp(-2 lambda t) under the flow with decay",
                    wd_law_err3 < flow_tol3, check=f"fixed-step RK4 (step {rk4_dt}) with decay vs the closed form",
                    measured=bound(wd_law_err3, wd_law_err3_lim), tolerance=f"{flow_tol3:g}", kind="independent")
_ = verified.record("Prop. closing-prop-decay: dE/dt = -lambda(2e^2 - 2w^2 - sign w) under the flow with decay",
                    E_rate_err < 1e-8, check="scipy DOP853 with decay, the rate integrated by scipy quad",
                    measured=bound(E_rate_err, 1e-10), tolerance="1e-8", kind="independent")
_ = verified.record("GD with decay approaches the decayed flow at O(h)", ok_wd,
                    check="conservation.run_optimizer vs scipy DOP853 (RK4 for c_k); log-log slope of the median |Q_GD(T) - Q_flow(T)|",
                    measured="slopes " + slope_text("wd_vs_flow"), tolerance=f"slope in 1 +- {slope_margin}",
                    kind="same code")

# %% [markdown]
# The one-step identity of {prf:ref}`closing-prop-gd`, checked directly: for the quadratic laws the change of $Q$ in
# one GD step equals $h^2 g^\top S g$ to rounding; for $E$ the remainder after $\tfrac{h^2}{2}g^\top\nabla^2E\,g$ is
# third order (halving $h$ divides it by about 8). Adam's first step, $u = g/(|g| + \epsilon)$ coordinatewise, changes
# $Q$ by $-h\nabla Q\cdot u + O(h^2)$: halving $h$ halves the change.

# %%
rng_s = np.random.default_rng([seed, 6])
step_err = 0.0
for gradf, Qf, th0, n_data, batch in ((grad2, Q2, inits2(n_drift, rng_s)[0], n2, batch2),
                                      (grad3, Q3, inits3(n_drift, rng_s), n3, batch3)):
    for idx in [None] + [rng_s.choice(n_data, batch, replace=False) for _ in range(n_drift)]:  # GD, then SGD steps
        g = gradf(th0, idx)
        for h in lrs:
            change = Qf(th0 - h * g) - Qf(th0)
            if Qf is Q2:
                pred = h**2 * np.einsum("ni,ij,nj->n", g, S2, g)
            else:  # per neuron: its own block of S
                gW, ga = unpack3(g)
                pred = h**2 * ((gW**2).sum(2) - ga**2)
            step_err = max(step_err, np.abs(change - pred).max())
th0 = inits1(n_drift, rng_s, w_min=0.2)
rem = [np.zeros(0), np.zeros(0)]
for idx in [None] + [rng_s.choice(n_pool, batch1, replace=False) for _ in range(n_drift)]:  # GD, then SGD steps
    g = grad1(th0, idx)
    for j, h in enumerate((lrs[-1], lrs[-1] / 2)):
        rem[j] = np.concatenate([rem[j], np.abs(Q1(th0 - h * g) - Q1(th0)
                                                - 0.5 * h**2 * np.einsum("ni,nij,nj->n", g, hessQ1(th0), g))])
third_ratio = float(np.median(rem[0] / rem[1]))
adam_step_ratio = []
for gradf, Qf, th0 in ((grad1, Q1, th0), (grad2, Q2, inits2(n_drift, rng_s)[0]), (grad3, Q3, inits3(n_drift, rng_s))):
    g = gradf(th0)
    u = g / (np.abs(g) + 1e-8)  # Adam's first step: m_hat = g, v_hat = g^2 after the bias corrections
    ch = [np.abs(Qf(th0 - h * u) - Qf(th0)).reshape(len(th0), -1).max(axis=1) for h in (lrs[-1], lrs[-1] / 2)]
    adam_step_ratio.append(float(np.median(ch[0] / ch[1])))
adam_first = all(1.6 < r_ < 2.4 for r_ in adam_step_ratio)
adam_step_text = ", ".join(f"{fixed(r_, 2)} ({short[law]})" for r_, law in zip(adam_step_ratio, laws))
print("delta, c_k: one GD or SGD step changes Q by h^2 g^T S g, max deviation", bound(step_err, 1e-13))
print("Adam's first step: change of Q at h over the change at h/2 (2 at first order, 4 at second):", adam_step_text)
print("E: remainder after (h^2/2) g^T Hess(E) g at h over that at h/2 (8 for a cubic remainder):",
      glue("third_ratio", fixed(third_ratio, 2)))
_ = verified.record("one GD or SGD step: Q' - Q = h^2 g^T S g (delta, c_k)", step_err < 1e-12,
                    check=f"single steps from random points with the full and {n_drift} minibatch gradients, every h",
                    measured=bound(step_err, 1e-13), tolerance="1e-12", kind="independent")
_ = verified.record("one GD or SGD step: E' - E = (h^2/2) g^T Hess(E) g + O(h^3)", 6 < third_ratio < 10,
                    check="median remainder at h over that at h/2, full and minibatch gradients",
                    measured=f"ratio {fixed(third_ratio, 2)}",
                    tolerance="ratio in (6, 10) (8 for a cubic remainder)", kind="independent")
_ = verified.record("one Adam step changes Q at first order in h, every law", adam_first,
                    check="change of Q in Adam's first step (u = g/(|g| + eps), by hand) at h and h/2, median ratio",
                    measured="ratios " + adam_step_text, tolerance="ratio in (1.6, 2.4) (2 at first order, 4 at second)",
                    kind="independent")

fig, axes = plt.subplots(1, 3, figsize=(15, 4.4), layout="constrained", sharey=True)
colours = {"gd": plotting.GLOBAL, "sgd": plotting.SADDLE, "adam": plotting.LOCAL, "gd+wd": plotting.NEUTRAL}
for ax, law in zip(axes, laws):
    for k in kinds:
        ax.loglog(lrs, drift[law][k], "o-", color=colours[k], label=k.upper() if k != "gd+wd" else f"GD, decay {weight_decay}")
    ax.loglog(lrs, drift[law]["wd_vs_flow"], "s--", color=colours["gd+wd"], label="GD + decay vs decayed flow")
    ax.loglog(lrs, drift[law]["gd"][-1] * np.array(lrs) / lrs[-1], ":", color="0.5", label="slope 1")
    ax.set_xlabel("step size h")
    ax.set_title(law)
axes[0].set_ylabel(f"median max |Q(T) - Q(0)|, T = {t_drift}")
axes[0].legend(fontsize=8)
plt.show()

# %% [markdown]
# ## When do the theorems' predictions still hold?
#
# The drift is $O(h)$ for GD, but what matters is whether training still ends where the initialization says. For
# each law, `n_pred` initializations, each optimizer and each step size in `pred_lrs` (and GD at the smallest step
# with each weight decay in `decays`), training for a fixed time; an initialization *agrees* when the run did not
# diverge and its end is the theorem's prediction:
#
# * **Part I** (time `t_pred1`): the basin read off $(w_0, E_0)$ by `energy.predict_limit` ({prf:ref}`Thm 2 <thm-2>`);
#   the end is global if its $c$ is nearer to $c^*$ than to 0 (the unigram value), unigram otherwise (SGD's end
#   fluctuates about $c^*$, each minibatch having its own $c^*$, by more than any tighter tolerance).
# * **Part II** (time `t_pred2`): the interpolant $\arg\min\Psi_\delta$ of {prf:ref}`grq-thm-3-1`
#   (`richlazy_exact.implicit_bias_limit`), reached if $\lVert\beta(T) - \beta_{pred}\rVert <$ `beta_tol`.
# * **Part III** (time `t_pred3`): the networks with at least one pathological neuron ($c_k < 0$); agreement means
#   that every pathological neuron's output weight keeps its sign (the component of $H(c)$,
#   {prf:ref}`topo-prop-balance`).
#
# The theorems predict the *limit* $t \to \infty$, so an initialization is only judged once the run has one. The
# training time of Parts I and II is `t_pred1` (`t_pred2`) doubled until GD at the smallest step has converged
# (gradient norm below `conv_tol`) for at least half of the initializations: near the edges of the range the
# dynamics are slow (at $p = 0.02$, $q = 0.85$ most runs need many times the default `t_pred1`); here it is
# {glue:text}`train_times`. The initializations of Parts I and II are then those whose GD run at the
# smallest step has converged by that time, drawn until there are `n_pred` of them. The ones left out,
# {glue:text}`left_out` drawn, are slow to converge (GD at the smallest step has not converged by that time; the
# chapter does not check why); Part I also leaves out the initializations whose predicted limit is a saddle or a maximum (a set of
# measure zero). Part III draws networks until `n_pred` have a pathological neuron. So the claims
# read: *every run that has converged* ends where the theorem says (a claim about where runs end, not about how fast).
# The thresholds `beta_tol`, `conv_tol`, `agree_rate` and `alpha` are fixed in the parameters cell.

# %%
rng_p = np.random.default_rng([seed, 7])
h0 = pred_lrs[0]


def gd_converged(gradf, th, t_end):
    """Whether GD at the smallest step h0 has converged by t_end: not diverged, gradient norm below conv_tol."""
    run = C.run_optimizer(gradf, th, h0, int(round(t_end / h0)), quantity=lambda t: t[:, :1], optimizer="gd")
    with np.errstate(over="ignore", invalid="ignore"):
        return ~run.diverged & (np.linalg.norm(gradf(run.theta[-1]), axis=1) < conv_tol)


def draw_until(n, draw, keep, what):
    """The first n initializations from draw(m) (in rounds of n) that keep(theta) accepts, and how many were drawn
    up to the n-th accepted one (so that every claim counts over n initializations)."""
    out, drawn = [], 0
    for _ in range(20):
        th = draw(n)
        ok = keep(th)
        need = n - len(out)
        if ok.sum() >= need:
            last = int(np.flatnonzero(ok)[need - 1])
            out.extend(th[:last + 1][ok[:last + 1]])
            return np.array(out), drawn + last + 1
        out.extend(th[ok])
        drawn += len(th)
    raise ValueError(f"fewer than {n} of {drawn} drawn initializations are {what}: lengthen the training time")


def training_time(gradf, th, t0):
    """The smallest t0 * 2^k (k <= 5) by which GD at h0 has converged for at least half of the initializations th
    (slow chains near the edge of the range need up to 16 times longer than the chain of the defaults)."""
    cur, t = th, 0.0
    for k in range(6):
        run = C.run_optimizer(gradf, cur, h0, int(round((t0 * 2**k - t) / h0)), quantity=lambda x: x[:, :1],
                              optimizer="gd")
        cur, t = run.theta[-1], t0 * 2**k
        with np.errstate(over="ignore", invalid="ignore"):
            if np.mean(~run.diverged & (np.linalg.norm(gradf(cur), axis=1) < conv_tol)) >= 0.5:
                return t
    raise ValueError(f"GD at h = {h0} has not converged for half of the initializations by t = {t}")


def predicted_minimum(th):  # Part I: leave out predicted saddles and maxima (a set of measure zero)
    return np.isin(predict_limit(th[:, 0], th[:, 1], p, q).outcome, ["global_min", "local_min"])


th_try = inits1(n_pred, rng_p)
t1 = training_time(grad1, th_try[predicted_minimum(th_try)], t_pred1)
t2 = training_time(grad2, inits2(n_pred, rng_p)[0], t_pred2)
th_p1, drawn1 = draw_until(n_pred, lambda m: inits1(m, rng_p),
                           lambda th: predicted_minimum(th) & gd_converged(grad1, th, t1), "converged predicted minima")
pred1 = predict_limit(th_p1[:, 0], th_p1[:, 1], p, q).outcome
th_p2, drawn2 = draw_until(n_pred, lambda m: inits2(m, rng_p)[0], lambda th: gd_converged(grad2, th, t2),
                           "converged")
pred2 = np.array([implicit_bias_limit(X2, y2, t[0] * t[1:], dl) for t, dl in zip(th_p2, Q2(th_p2))])
th_p3, drawn3 = draw_until(n_pred, lambda m: inits3(m, rng_p), lambda th: (Q3(th) < 0).any(axis=1),
                           "networks with a pathological neuron")
path_p3 = Q3(th_p3) < 0
sign_p3 = np.sign(unpack3(th_p3)[1])
print(f"training times: Part I {t1:g}, Part II {t2:g}, Part III {t_pred3:g}")
print(f"initializations per law: {n_pred}; drawn to get them: Part I {drawn1} (left out: predicted saddles or maxima, "
      f"and GD at h = {h0} not converged by t = {t1:g}), Part II {drawn2} (not converged by t = {t2:g}), "
      f"Part III {drawn3} (no pathological neuron)")
_ = glue("train_times", f"{t1:g} (Part I) and {t2:g} (Part II)")
_ = glue("left_out", f"{drawn1 - n_pred} of {drawn1} (Part I) and {drawn2 - n_pred} of {drawn2} (Part II)")


def agree1(th):
    with np.errstate(over="ignore", invalid="ignore"):  # a diverged run's frozen iterate may be huge
        c = K.coefficient(th[:, 0], th[:, 1])
    end = np.where(np.abs(c - c_star) < np.abs(c), "global_min", "local_min")
    return end == pred1


def agree2(th):
    with np.errstate(over="ignore", invalid="ignore"):  # a diverged run's frozen iterate may be huge
        return np.linalg.norm(th[:, :1] * th[:, 1:] - pred2, axis=1) < beta_tol


def agree3(th):
    return np.all(~path_p3 | (np.sign(unpack3(th)[1]) == sign_p3), axis=1)


pred_laws = {"Part I: basin": (grad1, Q1, th_p1, agree1, t1, n_pool, batch1),
             "Part II: interpolant": (grad2, Q2, th_p2, agree2, t2, n2, batch2),
             "Part III: signs": (grad3, Q3, th_p3, agree3, t_pred3, n3, batch3)}
settings = [(k, h, 0.0) for k in ("gd", "sgd", "adam") for h in pred_lrs] + [("gd", h0, lam) for lam in decays]
agree = {law: {} for law in pred_laws}  # law -> setting -> boolean per initialization
for law, (gradf, Qf, th0, agf, t_end, n_data, batch) in progress_bar(pred_laws.items(), desc="predictions",
                                                                       total=len(pred_laws)):
    for k, h, lam in settings:
        run = C.run_optimizer(gradf, th0, h, int(round(t_end / h)), quantity=Qf, optimizer=k, weight_decay=lam,
                              n_data=n_data, batch=batch, seed=seed)
        agree[law][(k, h, lam)] = agf(run.theta[-1]) & ~run.diverged
count = {law: {key: int(v.sum()) for key, v in agree[law].items()} for law in pred_laws}
law_short = {"Part I: basin": "I", "Part II: interpolant": "II", "Part III: signs": "III"}

# Claims over initializations: one-sided Wilson lower end above agree_rate, Bonferroni over the cells of the claim.
predicted_by = {"Part I: basin": "energy.predict_limit (Thm 2)", "Part II: interpolant":
                "minimal_exact.implicit_bias_limit (Thm 3.1)", "Part III: signs": "the sign of each a_k with c_k < 0"}
gd_ok = [verified.record_count(f"at the smallest step h = {h0}, GD ends where the theorem predicts ({law})",
                               count[law][("gd", h0, 0.0)], n_pred, rate=agree_rate, alpha=alpha, family=len(pred_laws),
                               unit="inits", kind="same code",
                               check="conservation.run_optimizer against " + predicted_by[law])
         for law in pred_laws]
_ = glue("gd_small_counts", "; ".join(f"{count[law][('gd', h0, 0.0)]}/{n_pred} ({law_short[law]})" for law in pred_laws))
for lam in decays:
    verified.record_count(f"Part III: GD with weight decay {lam:g} keeps the pathological signs",
                          count["Part III: signs"][("gd", h0, lam)], n_pred, rate=agree_rate, alpha=alpha,
                          family=len(decays), unit="inits", kind="same code",
                          check=f"conservation.run_optimizer, GD at h = {h0} with decay, time {t_pred3}")
_ = glue("decay_sign_counts", ", ".join(f"{count['Part III: signs'][('gd', h0, lam)]}/{n_pred}" for lam in decays))

# measured only: Adam against GD on the same initializations, the discordant pairs (one agrees, the other does not).
# Not a claim: for a chain with p + q < 1 every run that converges ends at a global minimum whatever the optimizer
# (there is no other minimum), and at p = 0.02, q = 0.85 almost no Part I pair was discordant.
disc = {}
for law in pred_laws:
    g_, a_ = agree[law][("gd", h0, 0.0)], agree[law][("adam", h0, 0.0)]
    disc[law] = (int(np.sum(g_ & ~a_)), int(np.sum(a_ & ~g_)))
print(f"Adam against GD at h = {h0}, same initializations: " + glue(
    "adam_discordant", "; ".join(f"Adam misses where GD hits {b_}, the reverse {c_} ({law_short[law]})"
                                 for law, (b_, c_) in disc.items())))

# measured only: the largest step (and decay) at which the prediction demonstrably holds, Bonferroni over the grid
z_grid = wilson_lower_z(alpha, len(pred_laws) * len(settings))
assert z_grid == _z_grid  # the grid the validation of n_pred assumed


def holds(law, key):
    return float(wilson_interval(count[law][key], n_pred, z_grid)[0]) > agree_rate


summary = {}  # the largest grid value at which the prediction demonstrably holds (record_results); None if none
for law in pred_laws:
    for k in ("gd", "sgd", "adam"):
        ok = [h for h in pred_lrs if holds(law, (k, h, 0.0))]
        summary[(law, k)] = max(ok) if ok else None
    ok = [lam for lam in decays if holds(law, ("gd", h0, lam))]
    summary[(law, "wd")] = max(ok) if ok else None


def largest_text(k):
    return ", ".join(f"{summary[(law, k)] if summary[(law, k)] is not None else 'no grid value'} ({law_short[law]})"
                     for law in pred_laws)


print(f"largest value at which the prediction holds (one-sided Wilson lower end > {agree_rate}, Bonferroni over the "
      f"{len(pred_laws) * len(settings)} cells): GD steps {largest_text('gd')}; SGD steps {largest_text('sgd')}; "
      f"Adam steps {largest_text('adam')}; decays {largest_text('wd')}")
_ = glue("largest_steps", f"GD steps {largest_text('gd')}; SGD steps {largest_text('sgd')}; Adam steps "
                          f"{largest_text('adam')}; weight decays with GD at h = {h0}: {largest_text('wd')}")
resolved = [law for law in pred_laws if summary[(law, "gd")] is not None]
unresolved = [law for law in pred_laws if summary[(law, "gd")] is None]
if unresolved:  # a law whose prediction holds demonstrably at no GD step of the grid is the most fragile
    fragile_text = " and ".join(unresolved) + " (its prediction holds demonstrably at no GD step of the grid)"
else:
    h_min = min(summary[(law, "gd")] for law in resolved)
    fragile = [law for law in resolved if summary[(law, "gd")] == h_min]
    fragile_text = " and ".join(fragile) + (f" (tied, largest GD step {h_min:g})" if len(fragile) > 1
                                            else f" (largest GD step {h_min:g})")
_ = glue("most_fragile", fragile_text)

# outside the theorem's side: random beta_0 with delta < 0, converged GD runs at the smallest step


def inits2_free(m):
    b0 = 0.3 * rng_p.normal(size=(m, d2))
    dl = rng_p.uniform(-2, 0, m)
    a0 = np.sqrt((dl + np.hypot(dl, 2 * np.linalg.norm(b0, axis=1))) / 2) * rng_p.choice([-1.0, 1.0], m)
    return np.concatenate([a0[:, None], b0 / a0[:, None]], axis=1)


th_f, _ = draw_until(n_pred, inits2_free, lambda th: gd_converged(grad2, th, t2), "converged")
run_f = C.run_optimizer(grad2, th_f, h0, int(round(t2 / h0)), quantity=Q2, optimizer="gd")
pred_f = np.array([implicit_bias_limit(X2, y2, t[0] * t[1:], dl) for t, dl in zip(th_f, Q2(th_f))])
miss_f = np.linalg.norm(run_f.theta[-1][:, :1] * run_f.theta[-1][:, 1:] - pred_f, axis=1) >= beta_tol
side_f = np.all((X2 @ (th_f[:, :1] * th_f[:, 1:]).T).T * y2 > 0, axis=1)
print(f"Part II from random beta_0 with delta < 0: {fraction(miss_f.sum(), n_pred)} converged GD runs miss the "
      f"interpolant, all of them started off the side y_i x_i.beta_0 > 0: {bool(np.all(~side_f[miss_f]))}")
_ = glue("free_miss", f"{fraction(miss_f.sum(), n_pred)} (every miss started off that side)" if np.all(~side_f[miss_f])
         else f"{fraction(miss_f.sum(), n_pred)} ({fraction((miss_f & side_f).sum(), miss_f.sum())} of the misses on that side)")

fig, axes = plt.subplots(1, 4, figsize=(18, 4.2), layout="constrained")
for ax, law in zip(axes, pred_laws):
    n = n_pred
    for k in ("gd", "sgd", "adam"):
        ks = np.array([count[law][(k, h, 0.0)] for h in pred_lrs])
        lo, hi = wilson_interval(ks, np.full(len(ks), n))
        ax.semilogx(pred_lrs, ks / n, "o-", color=colours[k], label=k.upper())
        ax.fill_between(pred_lrs, lo, hi, color=colours[k], alpha=0.15)
    ax.axhline(agree_rate, color="0.5", ls=":", label=f"agree_rate {agree_rate:g}")
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("step size h")
    ax.set_title(law)
axes[0].set_ylabel("fraction ending where predicted (95% Wilson band)")
axes[0].legend(fontsize=8)
ax = axes[3]
for law, col in zip(pred_laws, (plotting.GLOBAL, plotting.SADDLE, plotting.LOCAL)):
    ks = np.array([count[law][("gd", h0, lam)] for lam in decays])
    ax.semilogx(decays, ks / n_pred, "o-", color=col, label=law)
ax.axhline(agree_rate, color="0.5", ls=":")
ax.set_ylim(-0.03, 1.03)
ax.set_xlabel("weight decay lambda")
ax.set_title(f"GD at h = {h0} with weight decay")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## Explorer: step size and optimizer
#
# Choose the step size $h$ and the optimizer (GD, SGD or Adam, `conservation.run_optimizer`). The figure runs it on the
# chapter's three problems at their default sizes and seed (`drift_drawings.laws`: Part I's chain $p = q = 0.9$, Part II's
# neuron with $d = 3$, $n = 2$, Part III's ReLU network of width 4 on $d = 2$; 8 initializations per law, drawn as in the
# prediction study: predicted minima, the theorem's side $y_i x_i^\top\beta_0 > 0$, at least one pathological neuron),
# for the chapter's training times (50, 200 and 20). Left: the median over the initializations of the drift
# $\lvert Q(t) - Q(0)\rvert$ of each law over time (log axes; the dotted line is the drift study's fixed time $t = 2$,
# rounded to whole steps). Right: how many runs end where the theorem predicts (the basin of
# {prf:ref}`Thm 2 <thm-2>`, the interpolant of {prf:ref}`grq-thm-3-1` within `beta_tol`, the signs of the pathological
# output weights), and how many diverged. Under GD and SGD the drift shrinks with $h$ and training ends where predicted
# until the steps get large; under Adam the drift stays of order one at every $h$ and the outcome changes.
#
# The rendered book's explorer precomputes 5 step sizes $h \in \{0.01, 0.03, 0.1, 0.3, 1\}$ (about evenly spaced in
# $\log h$, from the drift study's range, where GD's drift is first order, to steps where GD and SGD stop ending where
# predicted) times the three optimizers: {glue:text}`drift_explorer_frames` frames, each a full run of the three problems
# (under a second), about {glue:text}`drift_explorer_kb` kB in the executed notebook (the sprite as base64 and the control block). The readout under the sliders prints each drift
# at $t = 2$ to one significant digit and the counts of runs that end where predicted.

# %%
ui = widgets.explorer(lambda h, optimizer: DD.draw_drift(h, optimizer), h=(0.005, 1.0, 0.005, 0.1),
                      optimizer=list(C.OPTIMIZERS))
if ui is not None:
    display(ui)
# The rendered book's explorer: the same drawing function on 5 x 3 = 15 frames (h log-spaced from the drift study's
# range to unstable steps, the three optimizers), 640 x 330 pixels with a 48-colour palette.
drift_grid = {"h": [0.01, 0.03, 0.1, 0.3, 1.0], "optimizer": list(C.OPTIMIZERS)}
drift_static = explorers.static_explorer(
    lambda h, optimizer, fig: DD.draw_drift(h, optimizer, fig=fig), drift_grid, name="closing_drift",
    title="the three laws under an optimizer: step size h and the optimizer", initial={"h": 0.1, "optimizer": "gd"},
    size=(640, 330), colors=48, progress=False, value=lambda out: out["text"])
drift_static.show()

res_d = {(o_["h"], o_["optimizer"]): o_ for o_ in drift_static.results}
h_small = [0.01, 0.03, 0.1]
x_slopes = {law: C.loglog_slope(h_small, [res_d[(h_, "gd")]["drift"][law] for h_ in h_small]) for law in DD.NAMES}
x_ratio = min(res_d[(0.01, "adam")]["drift"][law] / res_d[(0.01, "gd")]["drift"][law] for law in DD.NAMES)
glue("drift_explorer_frames", str(drift_static.n_frames))
glue("drift_explorer_inits", str(DD.N_INITS))
glue("drift_explorer_kb", f"{round((len(drift_static.sprite) * 4 / 3 + len(drift_static.html())) / 1e3, -1):.0f}")
glue("drift_explorer_slopes", ", ".join(fixed(x_slopes[law], 2) for law in DD.NAMES))
glue("drift_explorer_ratio", fixed(x_ratio, 0))
print(f"{drift_static.n_frames} frames; GD drift at t = 2, log-log slope over h in {h_small}: "
      + ", ".join(f"{DD.NAMES[law]} {fixed(x_slopes[law], 2)}" for law in DD.NAMES)
      + f"; Adam over GD at h = 0.01: at least {fixed(x_ratio, 0)}")
_ = verified.record("explorer: GD's drift of each law over the fixed time t = 2 is first order in h (the frames)",
                    all(abs(s_ - 1) < slope_margin for s_ in x_slopes.values()),
                    check=f"drift_drawings.draw_drift (conservation.run_optimizer) at h = {h_small}, fitted log-log "
                          f"slope (E, delta, c_k)", measured=", ".join(fixed(s_, 2) for s_ in x_slopes.values()),
                    tolerance=f"1 +- {slope_margin:g}", kind="same code")
_ = verified.record(f"explorer: Adam's drift at h = 0.01 is at least {adam_factor:g} times GD's, for each law (the frames)",
                    x_ratio >= adam_factor, check="drift at t = 2, Adam over GD, the smallest of the three laws",
                    measured=f"smallest ratio {fixed(x_ratio, 0)}", tolerance=f"{adam_factor:g}", kind="same code")

# %% [markdown]
# Run this notebook in Jupyter to interact with the explorer: its slider and menu rerun the three problems live
# for any $h \in [0.005, 1]$ and each optimizer. In the rendered book the sliders under the figure move over the frames
# precomputed by the same drawing function, and the line under them gives each law's drift at $t = 2$ and how many
# runs end where the theorems predict.

# %%
_ = record_results({**{f"gd_slope_{i + 1}": slopes[law]["gd"] for i, law in enumerate(laws)},
                    **{f"adam_slope_{i + 1}": slopes[law]["adam"] for i, law in enumerate(laws)},
                    "adam_over_gd_min": adam_ratio,
                    **{f"gd_h_max_{i + 1}": summary[(law, "gd")] for i, law in enumerate(pred_laws)},
                    **{f"decay_max_{i + 1}": summary[(law, "wd")] for i, law in enumerate(pred_laws)},
                    **verified.summary()})

# %% [markdown]
# ## What was derived and what was only measured
#
# *Derived* (and checked): the common mechanism ({prf:ref}`closing-prop-common`); the exact one-step change of the
# quadratic laws under GD and SGD, $h^2 g^\top S g$, and the $O(h^3)$ remainder for $E$, hence a drift $O(h)$ over a
# fixed time ({prf:ref}`closing-prop-gd`); the exact decay $Q(0)e^{-2\lambda t}$ of $\delta$ and $c_k$ under the flow
# with weight decay, and the absence of such a law for $E$ ({prf:ref}`closing-prop-decay`); that decay keeps the
# sign of every $c_k$, so the obstruction of Part III survives it under the flow.
#
# *Only measured*: how much Adam breaks the laws over a fixed time (its one-step change is first order, which is
# derived and checked, but the accumulated drift, far above GD's, is measured, and no closed form is derived), and
# how often that changes the outcome (discordant pairs at the smallest step: {glue:text}`adam_discordant`); the
# step sizes and weight decays up to which the theorems' predicted outcomes still hold, which depend on the problem
# and the training time (here: {glue:text}`largest_steps`; the most fragile law under GD is
# {glue:text}`most_fragile`; Part II's interpolant depends continuously on $\delta$, so a drift of $\delta$ of order
# $h$ moves it by order $h$, and weight decay erases $\delta$ at rate $2\lambda$); and the effect of SGD's noise on
# the outcome, which the $O(h)$ drift bound does not control. In the full transformer of Part I the chapter
# {doc}`trap_or_plateau` measures the same contrast on real training: the drift of the projected energy under SGD
# grows with the square of the step, while Adam moves it by order one within its first steps and leaves the
# unigram plateau that SGD does not leave; on $K$-state chains {doc}`beyond_two_states` finds the same split
# (plain SGD stays at $H(\pi)$ on the switching side, Adam leaves it). One measurement narrows a reading of the
# reference:
# from random $\beta_0$ with $\delta < 0$ (not restricted to the side $y_i x_i^\top\beta_0 > 0$),
# {glue:text}`free_miss` of the converged GD runs at the smallest step do not end at the interpolant of
# {prf:ref}`grq-thm-3-1`, while on that side the count above holds. This fits the theorem's hypothesis
# $\beta(t) \ne 0$ for all $t$: for $\delta < 0$ the output weight $a$ can cross zero (Lemma A.1 and the two basins
# of {prf:ref}`grq-prop-a-2-5`), and then $\beta = a w$ passes through $0$ and the flow can end outside the theorem.
# That is why the initializations of the prediction study are drawn on that side.
#
# Heavier runs: more initializations, longer times and finer grids, e.g.
# `papermill book/closing.ipynb out.ipynb -p n_pred 200 -p n_drift 32 -p lrs '[0.04, 0.02, 0.01, 0.005, 0.0025]'`.
#
# ## What was verified
#
# The table is generated from one record per claim, made where the claim was checked. The kind says what evidence
# each row is: *independent* (finite differences, torch autograd, scipy integrations of the chapter's own gradients,
# the closed forms derived above, Adam's first step written out), *same code* (runs of
# `conservation.run_optimizer` judged against the package's predictions). Counts over initializations carry their
# Wilson interval and the rate `agree_rate` they must clear (Bonferroni over the cells of each claim).

# %%
verified.table()

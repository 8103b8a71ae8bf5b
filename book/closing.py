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
#       '0': the log-log slope of a drift that does not vanish with h (derived, Prop.
#         closing-prop-gd)
#       '1': the log-log slope of a drift O(h) (derived, Prop. closing-prop-gd)
#       '10': the spread of the sprite's compressed size across machines, measured while
#         writing the chapter (not re-run)
#       '8': 2^3, the halving ratio of a cubic remainder (derived, Prop. closing-prop-gd)
#       95%: the confidence level of the Wilson bands (markovlib.book.inference)
# ---

# %% [markdown]
# # Where training ends: three conservation laws
#
# The three papers of this book share one idea that none of them draws out: a symmetry of the parameterization
# gives a quantity that gradient flow conserves, the initialization fixes its value, and that value decides where
# training ends. This closing chapter puts the three laws side by side, draws each on its invariant set, and runs
# one experiment on the same axes for all three: how finite steps, SGD, Adam and weight decay break each law, and up
# to which step size (or weight decay) training still ends where the initialization predicts.
#
# ## What this chapter shows
#
# 1. One mechanism conserves Part I's energy $E$, Part II's $\delta$ and Part III's balances $c_k$
#    ({prf:ref}`closing-prop-common`): along independently integrated flows they drift by
#    {glue:text}`flow_drift` ([Sec. 2](#closing-sec-flows)).
# 2. Gradient descent breaks each law at second order per step ({prf:ref}`closing-prop-gd`; remainder ratio
#    {glue:text}`third_ratio`, [Sec. 3](#closing-sec-onestep)), so over a fixed time the drift is $O(h)$: log–log
#    slopes {glue:text}`gd_slopes` ([Sec. 3](#closing-sec-drift)).
# 3. Adam breaks them at first order: its drift at the smallest step is {glue:text}`adam_ratios` times GD's
#    ([Sec. 3](#closing-sec-drift)).
# 4. Under weight decay $\delta$ and $c_k$ decay as $e^{-2\lambda t}$, $E$ has no decay law, and GD with decay
#    approaches the decayed flow at $O(h)$ ({prf:ref}`closing-prop-decay`, [Sec. 3](#closing-sec-drift)).
# 5. At the smallest step GD ends where each theorem predicts ({glue:text}`gd_small_counts`), and weight decay keeps
#    Part III's pathological signs ({glue:text}`decay_sign_counts`); Adam's discordant pairs and the largest steps at
#    which the predictions hold are measured only ([Sec. 4](#closing-sec-predictions)).
# 6. The explorer's frames agree: GD's drift is first order in $h$ (slopes {glue:text}`drift_explorer_slopes`), Adam's
#    at least {glue:text}`drift_explorer_ratio` times GD's ([Sec. 5](#closing-sec-explorer)).

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
from markovlib.book import specs
SPEC = specs.load("closing")
globals().update(SPEC.check(globals()))
SPEC.table()

# %% [markdown]
# The chapter's imports and its record of checks. Step sizes are sorted (the drift study's from the largest down,
# the prediction study's from the smallest up).

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import display

from markovlib.beyond import closing_drawings, conservation, drift_checks, drift_drawings, drift_problems
from markovlib.beyond import drift_reference, drift_study
from markovlib.book import explorers, plotting, widgets
from markovlib.book.formatting import bound, fixed, fraction, ladder_limit
from markovlib.book.glue import glue
from markovlib.book.inference import wilson_lower_z
from markovlib.book.progress import progress_bar
from markovlib.book.report import Verification
from markovlib.book.sweep import record_results
from markovlib.markov import canonical

plotting.use_style()
verified = Verification()  # one record per claim; the final cell prints the generated table
lrs, pred_lrs, decays = sorted(lrs, reverse=True), sorted(pred_lrs), sorted(decays)
p, q = pq
c_star = canonical.c_star(p, q)
print(f"Part I chain p = {p}, q = {q}: c* = {fixed(c_star, 6)}")

# %% [markdown]
# (closing-sec-laws)=
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

# %% [markdown]
# The three problems are built once in the package (`drift_problems`): each holds its data, its gradient
# `grad(theta, idx)` (rows are initializations; `idx` a minibatch for SGD), its conserved quantity and its
# initializations. Part I's energy is also written out here, as the chapter's independent reference.

# %%
one = drift_problems.MarkovProblem(p, q, n_pool, np.random.default_rng([seed, 1]))  # Part I, on sampled transitions
rng2 = np.random.default_rng([seed, 2])
two = drift_problems.NeuronProblem(d2, n2, rng2)  # Part II: one neuron a w.x
rng3 = np.random.default_rng([seed, 3])
three = drift_problems.ReluProblem(d3, width, n3, rng3)  # Part III: a ReLU network, teacher with positive output
Q1 = drift_reference.energy  # Independent reference: E(e, w) of Lemma 1, written out
grad1, grad2, grad3 = one.grad, two.grad, three.grad
Q2, Q3 = two.quantity, three.quantity

# %% [markdown]
# Checked against references written here: the three gradients against central finite differences of the losses,
# $\nabla Q\cdot\nabla L = 0$ at random points (the mechanism of {prf:ref}`closing-prop-common`), and the Hessian
# of $E$ against torch's autograd.

# %% tags=["hide-input"]
grad_err, noether, H_err = drift_checks.gradient_checks(one, two, three, np.random.default_rng([seed, 4]))
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
# (closing-sec-flows)=
# ## The invariant sets, drawn from the package
#
# Left: Part I's energy contours ({prf:ref}`Lemma 1 <lem-1>`, `drawings.energy_contours`) with the critical loci of
# {prf:ref}`Thm 1 <thm-1>` (`plotting.critical_points`): the global minima $\Gamma^*$ in green, the unigram line
# $e = 0$. Middle: Part II's hyperboloids $a^2 - \lVert w\rVert^2 = \delta$ in the plane $(\lVert w\rVert, a)$
# (`richlazy.conserved_delta` on a grid): the rotations of $w$ about the origin leave the picture unchanged. Right:
# Part III's quadrics $\lVert w_k\rVert^2 - a_k^2 = c_k$ of one neuron in the plane $(\lVert w_k\rVert, a_k)$
# (`topology.neuron_balances` on a grid): for $c_k < 0$ the two branches $a_k > 0$ and $a_k < 0$ never meet. On each,
# dashed: the level sets of the drawn flows' initializations; black: flows integrated on the package's gradients by
# the chapter's own integrators, which stay on their level set.
#
# The two integrators are the chapter's independent references, in the package: scipy's DOP853 (rtol $10^{-12}$,
# optionally with weight decay; `drift_reference.integrate`) and a classical RK4 at a fixed step for the ReLU network
# (`balance_drift.rk4_path`), where adaptive solvers stall at the kinks (`drift_checks.drawn_flows` runs both).

# %% [markdown]
# Three flows per part from chosen starts: Part I from three points in both half planes, Part II at
# $\delta = 1, 0, -1$ on the theorem's side, Part III one random network. Along each, the drift of its conserved
# quantity.

# %%
flows = drift_checks.drawn_flows(one, two, three, rng2, rng3, t3=t_fig3, rk4_dt=rk4_dt)
drift_fig, drift_fig3 = flows["drift"], flows["drift3"]
# first order in rk4_dt at the kinks: the bound is flow_tol3 / 100 while the measured value stays 3 times below it,
# else it follows the measured value upward on a one-digit ladder (at least 3 times it)
drift_fig3_lim = ladder_limit(drift_fig3, margin=3.0, floor=flow_tol3 / 100)
print("max |Q(t) - Q(0)| along the drawn flows, E and delta:", bound(drift_fig, flow_tol / 100))
print(f"max |c_k(t) - c_k(0)| along the drawn RK4 flow (step {rk4_dt}):", bound(drift_fig3, drift_fig3_lim))

# %% tags=["hide-input"]
_ = glue("flow_drift", f"{bound(drift_fig, flow_tol / 100)} (E and delta) and {bound(drift_fig3, drift_fig3_lim)} "
                       f"(c_k, RK4)")
_ = verified.record("E and delta conserved along the drawn flows", drift_fig < flow_tol,
                    check="scipy DOP853 (rtol 1e-12) on the chapter's gradients, the figures' trajectories",
                    measured=bound(drift_fig, flow_tol / 100), tolerance=f"{flow_tol:g}", kind="independent")
_ = verified.record("c_k conserved along the drawn flow", drift_fig3 < flow_tol3,
                    check=f"fixed-step RK4 (step {rk4_dt}) on the chapter's gradient",
                    measured=bound(drift_fig3, drift_fig3_lim), tolerance=f"{flow_tol3:g}", kind="independent")

# %% [markdown]
# The three invariant sets with the drawn flows (starts as dots; Part I's ends as stars, green for the global basin,
# red for the unigram trap; Part III's pathological neurons in red).

# %%
closing_drawings.invariant_sets(two, three, flows, p, q)
plt.show()

# %% [markdown]
# (closing-sec-drift)=
# ## How discrete optimizers break the laws
#
# ```{prf:proposition} Gradient descent breaks a conservation law at second order
# :label: closing-prop-gd
#
# Let $\nabla Q\cdot\nabla L = 0$ everywhere and $\theta' = \theta - h g$ with $g = \nabla L(\theta)$. Taylor's
# theorem gives $Q(\theta') - Q(\theta) = -h\nabla Q\cdot g + \tfrac{h^2}{2}g^\top\nabla^2Q(\theta)g + O(h^3)
# = \tfrac{h^2}{2}g^\top\nabla^2Q\,g + O(h^3)$, and for a quadratic form $Q = \theta^\top S\theta$ exactly
# $Q(\theta') - Q(\theta) = h^2 g^\top S g$. Over a fixed time $T$ ($T/h$ steps along a path within $O(h)$ of the
# flow) the drift is $\tfrac{h}{2}\int_0^T \nabla L^\top\nabla^2 Q\,\nabla L\,dt + O(h^2) = O(h)$. The one-step
# statement holds for SGD too when every minibatch loss has the symmetry (then $\nabla Q\cdot g_B = 0$): true for all
# three models here (Part I's minibatch loss is the reduced loss of the batch's empirical chain, a function of $c$
# only). The fixed-time statement assumes a path within $O(h)$ of the flow, which an SGD path is not, so SGD's drift
# over a fixed time is only measured below.
# ```
#
# For Adam the step is $h\,\hat m/(\sqrt{\hat v} + \epsilon)$: a per-coordinate rescaling of (averaged) gradients,
# with $\nabla Q\cdot\hat m/\sqrt{\hat v}\neq 0$ in general, so $Q$ changes at first order per step, and its drift
# over a fixed time need not vanish with $h$ (measured below, not derived). Adam's step has length about $h$ per coordinate whatever the gradient's size, so its "time" $T/h$ steps
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
#
# Part I's initializations are uniform in $[-1.5, 1.5]^2$ with $|w_0| \ge 0.2$, Part II's have $|\delta| \le 2$ and
# $\beta_0$ on the theorem's side $y_i x_i^\top\beta_0 > 0$, Part III's weights are $\mathcal U(-1, 1)$
# (`drift_problems`). With weight decay the claims are stated for $\lambda T \le 5$ (beyond it
# $\delta(T) = \delta(0)e^{-2\lambda T}$ falls towards rounding and GD and the decayed flow differ only by rounding)
# and $\lambda^2 h_{\max} T \le 0.15$ (GD with decay multiplies $\delta$ by $(1 - h\lambda)^2$ per step, so it lags
# the flow by the factor $e^{-x}$, $x = \lambda^2 hT$, whose log-log slope in $h$ is $1 - x/2 + O(x^2)$).
#
# *Changed claims (reviews B and C).* The decay claims were stated for any $\lambda \le 1$, $T \le 20$ and failed at
# $\lambda T \approx 19$ (E-rate error $7.5 \cdot 10^{-8}$, slopes 0.5 to 1.04), and at $\lambda = 0.99$,
# $T = 5.05$, $h_{\max} = 0.1$ the slopes of $\delta$ and $c_k$ were 0.77 to 0.87 (three of six seeds failing): hence
# the two bounds above. The GD drift slope was stated for any `t_drift` in $(0, 20]$ and failed at `t_drift` $= 0.05$,
# `lrs` $= (0.099, 0.05, 0.0245)$ (runs of 1, 1 and 2 steps; slopes 1.56, 1.50, 1.54): hence at least 20 steps per
# run. `lrs` had no lower bound and the one-step check failed at $h \approx 4 \cdot 10^{-6}$ (cubic-remainder ratio
# 0.73): hence $10^{-3}$. `flow_tol`, `flow_tol3` and `adam_factor` accepted any positive value (`adam_factor`
# $10^{-9}$, `flow_tol` $1$ emptied the claims); each may now only be made stricter than its default. The RK4 drifts of
# $c_k$ print as a bound 100 times below the tolerance (at least 3 times the measured value, else a one-digit bound
# that is). CI re-runs the chapter at the edges (`book/ci_params/closing.yaml`: a chain at the corner of the range on
# the other side of $p + q = 1$, other sizes, seeds and step sizes).
#
# First, `n_drift` initializations per law, and the flows with weight decay at $T$ (the references for the decay
# laws: DOP853 for $E$ and $\delta$, RK4 for $c_k$), where the exact decay of $\delta$ and $c_k$ and the rate of $E$
# are measured.

# %%
laws = drift_checks.drift_laws(one, two, three, n_drift, np.random.default_rng([seed, 5]), (batch1, batch2, batch3))
wd_law_err, wd_law_err3, E_rate_err = drift_checks.decay_flows(laws, weight_decay, t_drift, rk4_dt)

# %% [markdown]
# Then the runs: at every step size, each optimizer for the same time, and the median drift over the
# initializations; GD with decay is also compared with the decayed flow at the time $T_h$ the run reaches.

# %%
drift = drift_checks.drift_runs(laws, lrs, t_drift, weight_decay, n_sgd, seed, rk4_dt,
                                progress=lambda it: progress_bar(it, desc="drift study", total=len(laws)))

# %% [markdown]
# The fitted log–log slopes of the median drift against $h$ (1 for a drift $O(h)$, 0 for one that does not vanish)
# and Adam's drift over GD's at the smallest step. SGD's slope is only measured: with few steps and noisy minibatches
# it scatters far outside $1 \pm$ `slope_margin` at some seeds near the edge of the range ($p = 0.02$, $q = 0.88$), so
# it carries no claim.

# %%
ds = drift_checks.drift_slopes(drift, lrs)
slopes, slope_text, adam_ratio, adam_text = ds["slopes"], ds["text"], ds["adam_ratio"], ds["adam_text"]
print(f"log-log slopes of the median drift against h, h in {lrs}, T = {t_drift} (claim: within 1 +- {slope_margin}):")
print("  GD:", glue("gd_slopes", slope_text["gd"]))
print("  SGD (measured, not claimed; see below):", glue("sgd_slopes", slope_text["sgd"]))
print("  GD + decay vs the decayed flow:", slope_text["wd_vs_flow"])
print("  Adam (not claimed):", slope_text["adam"])
print(f"Adam drift / GD drift at h = {lrs[-1]} (claim: at least {adam_factor}):", glue("adam_ratios", adam_text))

# %% [markdown]
# The decay laws of {prf:ref}`closing-prop-decay` against the flows integrated above, and the records of this section.

# %% tags=["hide-input"]
print("flow with decay: |delta(T) - delta(0) exp(-2 lambda T)|", bound(wd_law_err, 1e-11))
wd_law_err3_lim = ladder_limit(wd_law_err3, margin=3.0, floor=flow_tol3 / 100)  # as drift_fig3
print("flow with decay (RK4): |c_k(T) - c_k(0) exp(-2 lambda T)|", bound(wd_law_err3, wd_law_err3_lim))
print("flow with decay: |E(T) - E(0) - int -lambda(2e^2 - 2w^2 - sign w) dt|", bound(E_rate_err, 1e-10))
ok_gd = all(abs(slopes[law]["gd"] - 1) < slope_margin for law in laws)
ok_wd = all(abs(slopes[law]["wd_vs_flow"] - 1) < slope_margin for law in laws)
_ = verified.record("Prop. closing-prop-gd: GD drift over a fixed time is O(h), all three laws", ok_gd,
                    check=f"conservation.run_optimizer; log-log slope of the median drift over {n_drift} inits, h in {lrs}",
                    measured="slopes " + slope_text["gd"], tolerance=f"slope in 1 +- {slope_margin}", kind="same code")
_ = verified.record("Adam's drift over a fixed time is far above GD's, every law", adam_ratio >= adam_factor,
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
                    measured="slopes " + slope_text["wd_vs_flow"], tolerance=f"slope in 1 +- {slope_margin}",
                    kind="same code")

# %% [markdown]
# (closing-sec-onestep)=
# ### One step
#
# The one-step identity of {prf:ref}`closing-prop-gd`, checked directly: for the quadratic laws the change of $Q$ in
# one GD or SGD step equals $h^2 g^\top S g$ to rounding (per neuron, its own block of $S$, for $c_k$).

# %%
rng_s = np.random.default_rng([seed, 6])
step_err = drift_checks.one_step_quadratic(two, three, n_drift, lrs, rng_s, (batch2, batch3))
print("delta, c_k: one GD or SGD step changes Q by h^2 g^T S g, max deviation", bound(step_err, 1e-13))

# %% [markdown]
# For $E$ the remainder after $\tfrac{h^2}{2}g^\top\nabla^2E\,g$ is third order: halving $h$ divides it by about 8.

# %%
third_ratio, th0 = drift_checks.third_order_ratio(one, n_drift, lrs[-1], rng_s, batch1)
print("E: remainder after (h^2/2) g^T Hess(E) g at h over that at h/2 (8 for a cubic remainder):",
      glue("third_ratio", fixed(third_ratio, 2)))

# %% [markdown]
# Adam's first step, $u = g/(|g| + \epsilon)$ coordinatewise, changes $Q$ by $-h\nabla Q\cdot u + O(h^2)$: halving
# $h$ halves the change.

# %%
adam_step_ratio = drift_checks.adam_first_step(((grad1, Q1, th0), (grad2, Q2, two.inits(n_drift, rng_s)),
                                                (grad3, Q3, three.inits(n_drift, rng_s))), lrs[-1])
adam_step_text = ", ".join(f"{fixed(r_, 2)} ({drift_checks.SHORT[law]})" for r_, law in zip(adam_step_ratio, laws))
print("Adam's first step: change of Q at h over the change at h/2 (2 at first order, 4 at second):", adam_step_text)

# %% tags=["hide-input"]
_ = verified.record("one GD or SGD step: Q' - Q = h^2 g^T S g (delta, c_k)", step_err < 1e-12,
                    check=f"single steps from random points with the full and {n_drift} minibatch gradients, every h",
                    measured=bound(step_err, 1e-13), tolerance="1e-12", kind="independent")
_ = verified.record("one GD or SGD step: E' - E = (h^2/2) g^T Hess(E) g + O(h^3)", 6 < third_ratio < 10,
                    check="median remainder at h over that at h/2, full and minibatch gradients",
                    measured=f"ratio {fixed(third_ratio, 2)}",
                    tolerance="ratio in (6, 10) (8 for a cubic remainder)", kind="independent")
_ = verified.record("one Adam step changes Q at first order in h, every law", all(1.6 < r_ < 2.4 for r_ in adam_step_ratio),
                    check="change of Q in Adam's first step (u = g/(|g| + eps), by hand) at h and h/2, median ratio",
                    measured="ratios " + adam_step_text, tolerance="ratio in (1.6, 2.4) (2 at first order, 4 at second)",
                    kind="independent")

# %% [markdown]
# The drift study in one figure: the median drift of each law against $h$ for each optimizer (dotted: slope 1), and
# GD with decay against the decayed flow.

# %%
closing_drawings.drift_study_figure(drift, lrs, weight_decay, t_drift)
plt.show()


# %% [markdown]
# (closing-sec-predictions)=
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
#
# Claims over initializations are counts with one-sided Wilson bounds against `agree_rate`, with Bonferroni control
# over the cells where one claim is tested (`alpha` family-wise); `n_pred` is at least the number that lets an
# all-agreeing count clear `agree_rate` over the whole grid (`drift_study.fewest_inits`; 100 at the defaults).
# *Changed claims (review B):* `n_pred` $\ge 60$ left the largest-step measurement unresolvable ("none" for every
# law); the minimum now follows from the grid. The left-out initializations were said to start near a separatrix,
# which was not checked; they are now called slow to converge.
#
# First the training times (`drift_study.training_time`) and the initializations (`drift_study.draw_until`).

# %%
rng_p = np.random.default_rng([seed, 7])
h0 = pred_lrs[0]
ini = drift_checks.prediction_inits(one, two, three, n_pred, rng_p, h0, t_pred1, t_pred2, conv_tol)
t1, t2, drawn1, drawn2, drawn3 = (ini[k] for k in ("t1", "t2", "drawn1", "drawn2", "drawn3"))
print(f"training times: Part I {t1:g}, Part II {t2:g}, Part III {t_pred3:g}")
print(f"initializations per law: {n_pred}; drawn to get them: Part I {drawn1} (left out: predicted saddles or maxima, "
      f"and GD at h = {h0} not converged by t = {t1:g}), Part II {drawn2} (not converged by t = {t2:g}), "
      f"Part III {drawn3} (no pathological neuron)")
_ = glue("train_times", f"{t1:g} (Part I) and {t2:g} (Part II)")
_ = glue("left_out", f"{drawn1 - n_pred} of {drawn1} (Part I) and {drawn2 - n_pred} of {drawn2} (Part II)")

# %% [markdown]
# Then every optimizer at every step of `pred_lrs`, and GD at the smallest step with each weight decay of `decays`,
# from the same initializations; an initialization agrees when its run did not diverge and ends where predicted.

# %%
settings = [(k, h, 0.0) for k in ("gd", "sgd", "adam") for h in pred_lrs] + [("gd", h0, lam) for lam in decays]
agree, count = drift_checks.prediction_runs(
    one, two, three, ini, settings, beta_tol=beta_tol, t3=t_pred3, batches=(batch1, batch2, batch3), seed=seed,
    progress=lambda it: progress_bar(it, desc="predictions", total=3))
pred_laws, law_short = list(count), drift_checks.LAW_SHORT

# %% [markdown]
# The claims: GD at the smallest step ends where each theorem predicts, and weight decay keeps Part III's
# pathological signs (one-sided Wilson lower end above `agree_rate`, Bonferroni over the cells of each claim).

# %% tags=["hide-input"]
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

# %% [markdown]
# Measured only: Adam against GD on the same initializations, the discordant pairs (one agrees, the other does not).
# Not a claim: for a chain with $p + q < 1$ every run that converges ends at a global minimum whatever the optimizer
# (there is no other minimum), and at $p = 0.02$, $q = 0.85$ almost no Part I pair was discordant. Then the largest
# step (and decay) at which the prediction demonstrably holds, Bonferroni over the whole grid
# (`drift_study.largest_holding`).

# %%
disc = {law: (int(np.sum(agree[law][("gd", h0, 0.0)] & ~agree[law][("adam", h0, 0.0)])),
              int(np.sum(agree[law][("adam", h0, 0.0)] & ~agree[law][("gd", h0, 0.0)]))) for law in pred_laws}
print(f"Adam against GD at h = {h0}, same initializations: " + glue(
    "adam_discordant", "; ".join(f"Adam misses where GD hits {b_}, the reverse {c_} ({law_short[law]})"
                                 for law, (b_, c_) in disc.items())))
z_grid = wilson_lower_z(alpha, len(pred_laws) * len(settings))
summary, largest = drift_checks.largest_steps(count, pred_lrs, decays, h0, n_pred, agree_rate, z_grid)
print(f"largest value at which the prediction holds (one-sided Wilson lower end > {agree_rate}, Bonferroni over the "
      f"{len(pred_laws) * len(settings)} cells): GD steps {largest['gd']}; SGD steps {largest['sgd']}; "
      f"Adam steps {largest['adam']}; decays {largest['wd']}")

# %% tags=["hide-input"]
_ = glue("largest_steps", f"GD steps {largest['gd']}; SGD steps {largest['sgd']}; Adam steps "
                          f"{largest['adam']}; weight decays with GD at h = {h0}: {largest['wd']}")
_ = glue("most_fragile", drift_checks.most_fragile(summary, pred_laws))

# %% [markdown]
# Outside the theorem's side: random $\beta_0$ with $\delta < 0$ (`NeuronProblem.inits_free`), converged GD runs at
# the smallest step (discussed at the end of the chapter).

# %%
th_f, _ = drift_study.draw_until(n_pred, lambda m: two.inits_free(m, rng_p),
                                 lambda th: drift_study.gd_converged(grad2, th, h0, t2, conv_tol), "converged")
run_f = conservation.run_optimizer(grad2, th_f, h0, int(round(t2 / h0)), quantity=Q2, optimizer="gd")
miss_f = ~two.agree(run_f.theta[-1], two.predict(th_f), beta_tol)
side_f = two.on_side(th_f)
print(f"Part II from random beta_0 with delta < 0: {fraction(miss_f.sum(), n_pred)} converged GD runs miss the "
      f"interpolant, all of them started off the side y_i x_i.beta_0 > 0: {bool(np.all(~side_f[miss_f]))}")
_ = glue("free_miss", f"{fraction(miss_f.sum(), n_pred)} (every miss started off that side)" if np.all(~side_f[miss_f])
         else f"{fraction(miss_f.sum(), n_pred)} ({fraction((miss_f & side_f).sum(), miss_f.sum())} of the misses on that side)")

# %% [markdown]
# The prediction study in one figure: for each law the fraction of initializations that end where predicted against
# the step size, per optimizer (95% Wilson bands), and on the right GD at the smallest step against the weight decay.

# %%
closing_drawings.prediction_figure(count, pred_lrs, decays, n_pred, agree_rate, h0)
plt.show()

# %% [markdown]
# (closing-sec-explorer)=
# ## Explorer: step size and optimizer
#
# Choose the step size $h$ and the optimizer (GD, SGD or Adam, `conservation.run_optimizer`). The figure runs it on the
# chapter's three problems at their default sizes and seed (`drift_problems.laws`: Part I's chain $p = q = 0.9$, Part II's
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
# (under a second), under {glue:text}`drift_explorer_kb` kB in the executed notebook (the sprite as base64 and the control block). The readout under the sliders prints each drift
# at $t = 2$ to one significant digit and the counts of runs that end where predicted.


# %%
ui = widgets.explorer(lambda h, optimizer: drift_drawings.draw_drift(h, optimizer), h=(0.005, 1.0, 0.005, 0.1),
                      optimizer=list(conservation.OPTIMIZERS))
if ui is not None:
    display(ui)
# The rendered book's explorer: the same drawing function on 5 x 3 = 15 frames (h log-spaced from the drift study's
# range to unstable steps, the three optimizers), 640 x 330 pixels with a 48-colour palette.
drift_grid = {"h": [0.01, 0.03, 0.1, 0.3, 1.0], "optimizer": list(conservation.OPTIMIZERS)}
drift_static = explorers.static_explorer(
    lambda h, optimizer, fig: drift_drawings.draw_drift(h, optimizer, fig=fig), drift_grid, name="closing_drift",
    title="the three laws under an optimizer: step size h and the optimizer", initial={"h": 0.1, "optimizer": "gd"},
    size=(640, 330), colors=48, progress=False, value=lambda out: out["text"])
drift_static.show()

# %% [markdown]
# Run this notebook in Jupyter to interact with the explorer: its slider and menu rerun the three problems live
# for any $h \in [0.005, 1]$ and each optimizer. In the rendered book the sliders under the figure move over the frames
# precomputed by the same drawing function, and the line under them gives each law's drift at $t = 2$ and how many
# runs end where the theorems predict.

# %% [markdown]
# Checked over the frames: GD's drift at $t = 2$ is first order in $h$ for every law, and Adam's at $h = 0.01$ is at
# least `adam_factor` times GD's. The explorer's size is printed as an upper bound in hundreds of kB (the sprite's
# compressed size differs across machines by about 10 kB).

# %% tags=["hide-input"]
res_d = {(o_["h"], o_["optimizer"]): o_ for o_ in drift_static.results}
h_small = [0.01, 0.03, 0.1]
names = drift_problems.NAMES
x_slopes = {law: conservation.loglog_slope(h_small, [res_d[(h_, "gd")]["drift"][law] for h_ in h_small]) for law in names}
x_ratio = min(res_d[(0.01, "adam")]["drift"][law] / res_d[(0.01, "gd")]["drift"][law] for law in names)
kb = (len(drift_static.sprite) * 4 / 3 + len(drift_static.html())) / 1e3
glue("drift_explorer_frames", str(drift_static.n_frames))
glue("drift_explorer_inits", str(drift_problems.N_INITS))
glue("drift_explorer_kb", f"{100 * int(np.ceil(kb / 100)):d}")
glue("drift_explorer_slopes", ", ".join(fixed(x_slopes[law], 2) for law in names))
glue("drift_explorer_ratio", fixed(x_ratio, 0))
print(f"{drift_static.n_frames} frames; GD drift at t = 2, log-log slope over h in {h_small}: "
      + ", ".join(f"{names[law]} {fixed(x_slopes[law], 2)}" for law in names)
      + f"; Adam over GD at h = 0.01: at least {fixed(x_ratio, 0)}")
_ = verified.record("explorer: GD's drift of each law over the fixed time t = 2 is first order in h (the frames)",
                    all(abs(s_ - 1) < slope_margin for s_ in x_slopes.values()),
                    check=f"drift_drawings.draw_drift (conservation.run_optimizer) at h = {h_small}, fitted log-log "
                          f"slope (E, delta, c_k)", measured=", ".join(fixed(s_, 2) for s_ in x_slopes.values()),
                    tolerance=f"1 +- {slope_margin:g}", kind="same code")
_ = verified.record(f"explorer: Adam's drift at h = 0.01 is at least {adam_factor:g} times GD's, for each law (the frames)",
                    x_ratio >= adam_factor, check="drift at t = 2, Adam over GD, the smallest of the three laws",
                    measured=f"smallest ratio {fixed(x_ratio, 0)}", tolerance=f"{adam_factor:g}", kind="same code")

# %% tags=["hide-input"]
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
# {doc}`trap_or_plateau` measures a related contrast on real training, where the projected energy is not conserved
# even by the flow: its two-point exponents of SGD's drift against the learning rate are below 2 over the first
# steps and near 2 only in a late window after them (measured there, not derived here), while Adam moves it by order
# one within its first steps and leaves the unigram plateau that SGD does not leave. What this chapter measures for
# SGD is the drift over a fixed time on the three small models, with log–log slopes {glue:text}`sgd_slopes` (not
# claimed, see Sec. 3). On $K$-state chains {doc}`beyond_two_states` finds the same split (from the standard init
# within 5000 steps, plain SGD stays at $H(\pi)$ on the switching side and Adam leaves it). One measurement narrows a reading of the
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


# %% tags=["remove-cell"]
from markovlib.book.glue import summary

summary("closing")  # in Jupyter: "What this chapter shows" with this run's numbers (removed from the book)

# %% tags=["hide-input"]
verified.table()

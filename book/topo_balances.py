# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,-all
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
# # Symmetries and a conserved balance per neuron
#
# A shallow ReLU network $f(x) = W_2\,\sigma(W_1 x)$ is unchanged when a hidden neuron is rescaled,
# $(w_k, a_k)\mapsto(s w_k, a_k/s)$ with $s > 0$, or when the neurons are permuted.
# {cite:t}`nurisso2024topological` derive from the rescaling one conserved quantity per neuron, the balance
# $c_k = \|w_k\|^2 - \|a_k\|^2$, fixed at initialization; the next chapter computes the topology of the set $H(c)$
# it confines the flow to. This chapter derives the conservation law, checks it on integrated flows, and measures
# how gradient descent, SGD and Adam break it (the paper's Sec. 8 names these three) and what weight decay does to it
# (this book's addition).
#
# ## What this chapter shows
#
# 1. Rescalings and permutations leave $f$ unchanged, to rounding ([the law](#sec-topo-balances-law)).
# 2. $\langle\nabla c_k, \nabla L\rangle = 0$ for every neuron (torch autograd), and a fixed-step RK4 flow drifts
#    by at most {glue:text}`tb_flow_drift` at its finest step ([the flow](#sec-topo-balances-flow)).
# 3. One gradient-descent step changes $c_k$ by exactly $h^2(\|\nabla_{w_k}L\|^2 - \|\nabla_{a_k}L\|^2)$, so the
#    drift over a fixed time is $O(h)$: log–log slopes in {glue:text}`tb_gd_slopes` over
#    {glue:text}`tb_networks` networks ([optimizers](#sec-topo-balances-optimizers)).
# 4. SGD obeys the same identity with the minibatch gradient; its mean slope is {glue:text}`tb_sgd_slope`
#    ([optimizers](#sec-topo-balances-optimizers)).
# 5. Adam breaks the law at first order: its drift is at least {glue:text}`tb_adam_ratio` times GD's, with mean
#    slope {glue:text}`tb_adam_slope` ([optimizers](#sec-topo-balances-optimizers)).
# 6. Weight decay $\lambda$ gives $c_k(t) = c_k(0)\,e^{-2\lambda t}$ under the flow
#    ([weight decay](#sec-topo-balances-decay)).

# %% [markdown]
# (sec-topo-balances-params)=
# ## The networks and their parameters
#
# Every network is drawn by `balance_drift.problem` from its own generator `[seed, d, s]`: `n_data` Gaussian inputs,
# the targets of a fixed ReLU teacher (`balance_drift.teacher`), weights $\mathcal U(-1, 1)$, $e = 1$ output, MSE
# loss; `n_seeds` networks per input dimension $d$ in `dims`. The cell after the parameters checks them and
# prints their accepted ranges.

# %% tags=["parameters"]
seed = 0  # seed of every random draw
dims = [2, 5]  # input dimensions d
width = 5  # hidden neurons l
n_data = 50  # training points
n_seeds = 5  # networks per d
t_flow = 1.0  # time horizon of the flow and of every discrete run (range up to 2)
flow_steps = [250, 500, 1000]  # RK4 steps over t_flow (the finest step is the one asserted)
flow_tol = 1e-5  # fixed before the data: largest |c_k(t) - c_k(0)| of the RK4 flow at its finest step
lrs = [0.04, 0.02, 0.01]  # step sizes of the gradient-descent drift study
batch = 10  # SGD minibatch size
slope_lo = 0.8  # fixed before the data: lower end of the log-log slope that counts as O(h)
adam_factor = 5.0  # fixed before the data: Adam drifts more than this multiple of GD's drift at the same h
weight_decay = 0.05  # weight-decay coefficient lambda

# %% tags=["hide-input"]
from markovlib.book import specs
SPEC = specs.load("topo_balances")
globals().update(SPEC.check(globals()))
SPEC.table()

# %%
# %matplotlib inline
import itertools

import matplotlib.pyplot as plt
import numpy as np

from markovlib.book import plotting, report
from markovlib.book.formatting import bound, fixed
from markovlib.book.glue import glue
from markovlib.book.sweep import record_results
from markovlib.topology import balances_checks, balances_drawings

plotting.use_style()
verified = report.Verification()  # one record per claim; the final cell prints the generated table
networks = list(itertools.product(dims, range(n_seeds)))
print(f"{len(networks)} networks: d in {dims}, l = {width}, e = 1")

# %% [markdown]
# (sec-topo-balances-law)=
# ## Symmetries and the conservation law
#
# With $\sigma(sz) = s\,\sigma(z)$ for $s > 0$,
# $(a_k/s)\,\sigma(s\,w_k\cdot x) = a_k\sigma(w_k\cdot x)$, and a permutation only reorders the sum over
# neurons. Differentiating the rescaling at $s = 1$ gives, for any loss $L(\theta) = \ell(f_\theta)$,
#
# $$
# \frac{d}{ds}\Big|_{s=1} L(s w_k, a_k/s) = w_k\cdot\nabla_{w_k}L - a_k\cdot\nabla_{a_k}L = 0 .
# $$ (topo-eq-noether)
#
# ```{prf:proposition} A conserved balance per neuron (paper's Eq. (10)–(12))
# :label: topo-prop-balance
#
# Along the gradient flow $\dot\theta = -\nabla L(\theta)$ (Clarke subgradients at the kinks),
# $\frac{d}{dt}c_k = -2\,(w_k\cdot\nabla_{w_k}L - a_k\cdot\nabla_{a_k}L) = 0$, so
# $c_k = \|w_k\|^2 - \|a_k\|^2$ is constant for every hidden neuron $k$.
# ```
#
# At a kink ($w_k\cdot x_i = 0$ for some data point) the identity still holds for every choice of
# $\sigma'(0) \in [0, 1]$, since $\sigma'(z)\,z = \sigma(z)$ there too.
#
# The first check rescales every neuron by a random $s \in [e^{-2}, e^2]$, permutes the neurons, and compares the
# forward passes; then it computes both sides of Eq. {eq}`topo-eq-noether` with torch autograd (an independent
# reference) and compares markovlib's gradient with it.

# %%
sym_err, noether, grad_err = balances_checks.symmetry_checks(networks, seed, width, n_data)
print("rescaling + permutation change f by (relative)", bound(sym_err, 1e-12))
print("w_k . grad_w L - a_k . grad_a L (torch autograd):", bound(noether, 1e-13))
print("markovlib.topology.shallow_relu gradient vs autograd:", bound(grad_err, 1e-12))

# %% [markdown]
# All three vanish to rounding; the records:

# %% tags=["hide-input"]
_ = verified.record("rescalings and permutations keep f", sym_err < 1e-12, kind="identity",
                    check="forward passes, random s in [e^-2, e^2] and a random permutation (positive homogeneity)",
                    measured=bound(sym_err, 1e-13), tolerance="1e-12 (relative)")
_ = verified.record("Eq. (topo-eq-noether): <grad c_k, grad L> = 0", noether < 1e-12, kind="independent",
                    check=f"torch autograd, {len(networks)} networks", measured=bound(noether, 1e-13), tolerance="1e-12")
_ = verified.record("shallow_relu gradient = autograd", grad_err < 1e-12, kind="independent",
                    check=f"torch autograd, {len(networks)} networks", measured=bound(grad_err, 1e-13), tolerance="1e-12")

# %% [markdown]
# (sec-topo-balances-flow)=
# ## The integrated flow keeps every balance
#
# The vector field jumps across a kink, and the flow can even *slide* along one (a Filippov solution); an adaptive
# solver then shrinks its step at every crossing (during the writing of this chapter, scipy's RK45 at tolerance
# $10^{-9}$ did not finish on some of these networks). The flows are therefore integrated with the classical
# fixed-step RK4 (`balance_drift.rk4_balances`) at the step counts `flow_steps`: away from kinks its drift of $c_k$
# is $O(\delta^4)$, across a kink only $O(\delta)$, and either way it vanishes with the step $\delta$. The next cell
# records, per step count, the largest $|c_k(t) - c_k(0)|$ over every neuron of every network.

# %%
flow_drift = balances_checks.flow_drifts(networks, seed, width, n_data, t_flow, flow_steps)
drift_text = ", ".join(f"{x:.1e}" for x in flow_drift)  # two significant digits
print(f"RK4 flow over t = {t_flow}, max over networks of max_k |c_k(t) - c_k(0)| at {flow_steps} steps: {drift_text}")

# %% [markdown]
# The largest drifts at the step counts `flow_steps` are {glue:text}`tb_flow_drifts`: below `flow_tol` at the finest
# step and smaller there than at the coarsest; the exact flow conserves $c_k$.

# %% tags=["hide-input"]
glue("tb_networks", str(len(networks)))
glue("tb_flow_drift", f"{flow_drift[-1]:.1e}")
shrinks = bool(flow_drift[-1] < flow_drift[0] or flow_drift[0] < 1e-10)   # smaller at the finest step (above rounding)
glue("tb_flow_drifts", drift_text)
_ = verified.record("c_k conserved by the integrated flow", flow_drift[-1] < flow_tol and shrinks, kind="same code",
                    check=f"fixed-step RK4 with markovlib's gradient (checked above), {len(networks)} networks, "
                          f"{flow_steps} steps over t = {t_flow}; the drift must be smaller at the finest step",
                    measured=drift_text, tolerance=f"{flow_tol:g} at the finest step, below the coarsest")

# %% [markdown]
# (sec-topo-balances-optimizers)=
# ## How discrete optimizers break it
#
# For gradient descent with step $h$, $w_k' = w_k - h g_w$, $a_k' = a_k - h g_a$, expanding the squares gives the
# exact identity $c_k' - c_k = -2h(w_k\cdot g_w - a_k\cdot g_a) + h^2(\|g_w\|^2 - \|g_a\|^2) = h^2(\|g_w\|^2 - \|g_a\|^2)$:
# the first-order term is the one the flow cancels. Over a time $t = nh$ the drift is $O(h)$.
#
# Each run lasts the same time `t_flow` ($n = t/h$ steps). Plain GD and SGD (minibatches of `batch`, the same
# batches for every run) accumulate the second-order identity, checked step by step; Adam (standard
# $\beta = (0.9, 0.999)$, $\epsilon = 10^{-8}$) rescales each coordinate's step and so has no first-order
# cancellation. The next cell runs all three at every step size on every network (`balance_drift.optimizer_drift`).

# %%
drifts, ident_max = balances_checks.optimizer_drifts(networks, seed, width, n_data, lrs, t_flow, batch)
print("one GD/SGD step: c' - c = h^2 (|g_w|^2 - |g_a|^2), max deviation", bound(ident_max, 1e-12))

# %% [markdown]
# The slope of $\log(\text{drift})$ against $\log h$ is computed per network. GD's drift is deterministic and of
# order $h$, so every network's slope must exceed `slope_lo`. SGD's drift also carries the minibatch noise, so its
# per-network slopes scatter; its claim is on their mean, whose 95 % $t$ interval must lie above `slope_lo`. Adam
# on the full batch is deterministic: its drift must exceed `adam_factor` times GD's on every network and at every
# $h$, and its mean slope must stay below `slope_lo` (over a fixed time an $O(h)$ change per step does not cancel).

# %%
st = balances_checks.slope_stats(drifts, lrs)
gd_lo, gd_hi, sgd_mean, sgd_half, adam_ratio, adam_mean = (
    st[k] for k in ("gd_lo", "gd_hi", "sgd_mean", "sgd_half", "adam_ratio", "adam_mean"))
print(st["text"])

# %% tags=["hide-input"]
glue("tb_gd_slopes", f"[{fixed(gd_lo, 2)}, {fixed(gd_hi, 2)}]")
glue("tb_sgd_slope", f"{fixed(sgd_mean, 2)} (95 % interval [{fixed(sgd_mean - sgd_half, 2)}, "
                            f"{fixed(sgd_mean + sgd_half, 2)}])")
glue("tb_adam_ratio", fixed(np.floor(adam_ratio), 0))
glue("tb_adam_slope", fixed(adam_mean, 2))
_ = verified.record("GD/SGD: one step changes c_k by h^2(|g_w|^2 - |g_a|^2)", ident_max < 1e-11, kind="identity",
                    check="every step of every GD and SGD run (algebra: expanding the squares)",
                    measured=bound(ident_max, 1e-12), tolerance="1e-11 (rounding)")
_ = verified.record("GD drift over a fixed time is O(h)", slope_lo < gd_lo, kind="same code",
                    check=f"per-network slope of log drift vs log h, {len(networks)} networks, h in {lrs}",
                    measured=f"slopes {fixed(gd_lo, 2)} to {fixed(gd_hi, 2)}",
                    tolerance=f"every slope > {slope_lo}")
_ = verified.record("SGD drift over a fixed time vanishes at least like h", sgd_mean - sgd_half > slope_lo,
                    kind="same code", check=f"mean over {len(networks)} networks of the per-network slope, 95 % t interval",
                    measured=f"mean slope {fixed(sgd_mean, 2)}, interval [{fixed(sgd_mean - sgd_half, 2)}, "
                             f"{fixed(sgd_mean + sgd_half, 2)}]", tolerance=f"lower end > {slope_lo}")
_ = verified.record("Adam breaks the conservation at first order", adam_ratio > adam_factor and adam_mean < slope_lo,
                    kind="same code", check="Adam drift / GD drift, every network and every h; Adam's mean slope of "
                                            "log drift vs log h over the networks",
                    measured=f"smallest ratio {fixed(np.floor(adam_ratio), 0)}; mean slope {fixed(adam_mean, 2)}",
                    tolerance=f"ratio > {adam_factor:g}; mean slope < {slope_lo}")

# %% [markdown]
# (sec-topo-balances-decay)=
# ## Weight decay
#
# Weight decay adds $-\lambda\theta$ to the flow, and then $\dot c_k = -2\lambda c_k$. The next cell integrates that
# flow on the first network with the finest RK4 step and compares $c_k(t)$ with $c_k(0)\,e^{-2\lambda t}$.

# %%
ts, c_wd, wd_err = balances_checks.decay_check(seed, dims[0], width, n_data, t_flow, flow_steps[-1], weight_decay)
wd_text = bound(wd_err, 1e-8) if wd_err < 1e-10 else f"{wd_err:.0e}"   # rounding level as a bound, else one digit
print(f"weight decay {weight_decay}: |c_k(t) - c_k(0) exp(-2 lambda t)| {wd_text}")

# %% tags=["hide-input"]
_ = verified.record("weight decay: c_k(t) = c_k(0) exp(-2 lambda t)", wd_err < flow_tol, kind="same code",
                    check=f"fixed-step RK4 flow with weight decay, {flow_steps[-1]} steps",
                    measured=wd_text, tolerance=f"{flow_tol:g}")

# %% [markdown]
# The figure draws, left, every network's drift against $h$ for the three optimizers (thin lines) with their
# geometric means (dots): GD and SGD fall like $h$, while Adam's drift barely changes with $h$. Right, the balances under weight decay
# follow the exponential.

# %%
balances_drawings.drift_figure(drifts, lrs, ts, c_wd, weight_decay, t_flow)
plt.show()

# %% tags=["hide-input"]
_ = record_results({"flow_drift": float(flow_drift[-1]), "gd_slope_min": gd_lo, "gd_slope_max": gd_hi,
                    "sgd_slope_mean": sgd_mean, "adam_slope_mean": adam_mean, "adam_gd_ratio_min": adam_ratio,
                    **verified.summary()})

# %% [markdown]
# Heavier runs: more networks and smaller steps, e.g.
# `papermill book/topo_balances.ipynb out.ipynb -p n_seeds 20 -p lrs '[0.02, 0.01, 0.005, 0.0025]'`.
#
# ## What was verified
#
# The table is generated from one record per claim, made where the claim was checked. The kind column says what
# evidence each row is: *independent* (torch autograd, no markovlib function on the route), *same code* (runs
# through markovlib's gradient, itself checked against autograd in the rows above), *identity* (true by algebra:
# positive homogeneity, the expansion of the squares; documents, does not verify).

# %% tags=["remove-cell"]
from markovlib.book.glue import summary

summary("topo_balances")  # in Jupyter: "What this chapter shows" with this run's numbers (removed from the book)

# %% tags=["hide-input"]
verified.table()

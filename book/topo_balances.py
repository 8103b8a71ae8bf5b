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
import math

from markovlib.book import params

SPEC = params.declare(
    seed=params.Int(0, why="seed of every random draw"),
    dims=params.IntList(1, 10, why="the RK4 drift grows with the gradient: at d = 100 it exceeds flow_tol"),
    width=params.Int(1, why="hidden neurons"),
    n_data=params.Int(1, why="training points"),
    n_seeds=params.Int(1, why="networks per d"),
    t_flow=params.Real(0.0, 2.0, why="the stated horizon; must be > 0 (below)"),
    flow_steps=params.IntList(10, why="RK4 step counts, at least 10 steps"),
    flow_tol=params.Real(0.0, math.inf, closed=False, why="a tolerance is positive"),
    lrs=params.RealList(0.0, 0.1, why="step sizes of the drift study; must be > 0 (below)"),
    batch=params.Int(1, "n_data", why="a minibatch of the training points"),
    slope_lo=params.Real(0.0, 1.0, closed=False, why="a slope below 1 that counts as O(h)"),
    adam_factor=params.Real(1.0, 1e3, why="Adam drifts more than GD: a factor above 1"),
    weight_decay=params.Real(0.0, 1.0, closed=False, why="a decay rate lambda in (0, 1)"),
    require=[
        ("n_seeds * len(dims) >= 10", lambda v: v["n_seeds"] * len(v["dims"]) >= 10, "at least 10 networks in all"),
        ("t_flow > 0", lambda v: v["t_flow"] > 0, "a flow over a positive time"),
        ("flow_steps increasing, at least two", lambda v: len(v["flow_steps"]) >= 2
         and v["flow_steps"] == sorted(set(v["flow_steps"])), "the drift must shrink from the coarsest step"),
        ("min(lrs) > 0", lambda v: min(v["lrs"]) > 0, "step sizes in (0, 0.1]"),
        ("lrs: at least 3 distinct", lambda v: len(v["lrs"]) >= 3 and len(set(v["lrs"])) == len(v["lrs"]),
         "a slope needs at least three step sizes"),
        ("t_flow / max(lrs) >= 10", lambda v: v["t_flow"] / max(v["lrs"]) >= 10, "at least 10 steps at the largest h"),
    ],
)
globals().update(SPEC.check(globals()))
SPEC.table()

# %%
# %matplotlib inline
import itertools

import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy import stats

from markovlib.book import plotting
from markovlib.book.formatting import bound, fixed
from markovlib.book.glue import glue
from markovlib.book.report import Verification
from markovlib.book.sweep import record_results
from markovlib.topology import balance_drift, shallow_relu

plotting.use_style()
verified = Verification()  # one record per claim; the final cell prints the generated table
networks = list(itertools.product(dims, range(n_seeds)))
_ = glue("tb_networks", str(len(networks)))
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
sym_err, noether, grad_err = 0.0, 0.0, 0.0
for d, s in networks:
    r_ = np.random.default_rng([seed, d, s])
    X, y, W1, a = balance_drift.problem(r_, d, width, n_data)
    f0 = np.maximum(X @ W1.T, 0) @ a
    sc = np.exp(r_.uniform(-2, 2, size=width))
    perm = r_.permutation(width)
    f1 = np.maximum(X @ (W1 * sc[:, None])[perm].T, 0) @ (a / sc)[perm]
    sym_err = max(sym_err, np.abs(f1 - f0).max() / np.abs(f0).max())
    # Independent reference: torch autograd of the same MSE (do not replace with markovlib)
    t1, ta = torch.tensor(W1, requires_grad=True), torch.tensor(a, requires_grad=True)
    L = 0.5 * ((torch.relu(torch.tensor(X) @ t1.T) @ ta - torch.tensor(y)) ** 2).mean()
    g1, ga = (g.numpy() for g in torch.autograd.grad(L, (t1, ta)))
    noether = max(noether, np.abs((W1 * g1).sum(1) - a * ga).max())
    _, n1, na = shallow_relu.loss_grad(W1, a, X, y)
    grad_err = max(grad_err, np.abs(n1 - g1).max(), np.abs(na - ga).max())
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
flow_drift = np.zeros(len(flow_steps))
for d, s in networks:
    X, y, W1, a = balance_drift.problem(np.random.default_rng([seed, d, s]), d, width, n_data)
    c0 = (W1**2).sum(1) - a**2
    for i, n_steps in enumerate(flow_steps):
        c_path = balance_drift.rk4_balances(W1, a, X, y, t_flow, n_steps)
        flow_drift[i] = max(flow_drift[i], np.abs(c_path - c0).max())
drift_text = ", ".join(f"{x:.1e}" for x in flow_drift)  # two significant digits
shrinks = bool(flow_drift[-1] < flow_drift[0] or flow_drift[0] < 1e-10)   # smaller at the finest step (above rounding)
print(f"RK4 flow over t = {t_flow}, max over networks of max_k |c_k(t) - c_k(0)| at {flow_steps} steps: {drift_text}")

# %% [markdown]
# The largest drifts at the step counts `flow_steps` are {glue:text}`tb_flow_drifts`: below `flow_tol` at the finest
# step and smaller there than at the coarsest; the exact flow conserves $c_k$.

# %% tags=["hide-input"]
glue("tb_flow_drift", f"{flow_drift[-1]:.1e}")
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
drifts = {k: np.zeros((len(lrs), len(networks))) for k in balance_drift.OPTIMIZERS}
ident_max = 0.0
for j, (d, s) in enumerate(networks):
    X, y, W1, a = balance_drift.problem(np.random.default_rng([seed, d, s]), d, width, n_data)
    for i, h in enumerate(lrs):
        for kind in drifts:
            dr, idt = balance_drift.optimizer_drift(W1, a, X, y, h=h, t=t_flow, kind=kind, batch=batch,
                                                    rng=np.random.default_rng([seed, d, s, 7]))
            drifts[kind][i, j] = dr
            ident_max = max(ident_max, idt)
print("one GD/SGD step: c' - c = h^2 (|g_w|^2 - |g_a|^2), max deviation", bound(ident_max, 1e-12))

# %% [markdown]
# The slope of $\log(\text{drift})$ against $\log h$ is computed per network. GD's drift is deterministic and of
# order $h$, so every network's slope must exceed `slope_lo`. SGD's drift also carries the minibatch noise, so its
# per-network slopes scatter; its claim is on their mean, whose 95 % $t$ interval must lie above `slope_lo`. Adam
# on the full batch is deterministic: its drift must exceed `adam_factor` times GD's on every network and at every
# $h$, and its mean slope must stay below `slope_lo` (over a fixed time an $O(h)$ change per step does not cancel).

# %%
slopes = {k: np.polyfit(np.log(lrs), np.log(v), 1)[0] for k, v in drifts.items()}   # one slope per network
gd_lo, gd_hi = float(slopes["gd"].min()), float(slopes["gd"].max())
sgd_mean = float(slopes["sgd"].mean())
sgd_half = float(stats.t.ppf(0.975, len(networks) - 1) * slopes["sgd"].std(ddof=1) / np.sqrt(len(networks)))
adam_ratio = float(np.min(drifts["adam"] / drifts["gd"]))
adam_mean = float(slopes["adam"].mean())
print(f"  GD: per-network slopes of log drift vs log h from {fixed(gd_lo, 2)} to {fixed(gd_hi, 2)}")
print(f" SGD: mean slope {fixed(sgd_mean, 2)}, 95 % t interval [{fixed(sgd_mean - sgd_half, 2)}, "
      f"{fixed(sgd_mean + sgd_half, 2)}] (per network from {fixed(slopes['sgd'].min(), 2)} to {fixed(slopes['sgd'].max(), 2)})")
print(f"Adam: drift / GD drift at least {fixed(np.floor(adam_ratio), 0)} (every network, every h); "
      f"mean slope {fixed(adam_mean, 2)}")

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
X, y, W1, a = balance_drift.problem(np.random.default_rng([seed, dims[0], 0]), dims[0], width, n_data)
c_wd = np.vstack([(W1**2).sum(1) - a**2,
                  balance_drift.rk4_balances(W1, a, X, y, t_flow, flow_steps[-1], weight_decay=weight_decay)])
ts = np.linspace(0, t_flow, flow_steps[-1] + 1)
wd_err = np.abs(c_wd - c_wd[:1] * np.exp(-2 * weight_decay * ts)[:, None]).max()
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
fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), layout="constrained")
for k, col in (("gd", plotting.GLOBAL), ("sgd", plotting.SADDLE), ("adam", plotting.LOCAL)):
    for j in range(len(networks)):
        axes[0].loglog(lrs, drifts[k][:, j], "-", color=col, alpha=0.3, lw=0.8)
    axes[0].loglog(lrs, np.exp(np.mean(np.log(drifts[k]), axis=1)), "o-", color=col, lw=2,
                   label=f"{k.upper()} (geometric mean)")
axes[0].set_xlabel("step size h")
axes[0].set_ylabel(f"max_k |c_k(t) - c_k(0)| at t = {t_flow}")
axes[0].set_title(f"Discrete optimizers break the conservation ({len(networks)} networks)")
axes[0].legend()
for k in range(width):
    axes[1].plot(ts, c_wd[:, k], color=plotting.NEUTRAL)
    axes[1].plot(ts, c_wd[0, k] * np.exp(-2 * weight_decay * ts), ":", color=plotting.LOCAL,
                 label="$c_k(0)e^{-2\\lambda t}$" if k == 0 else None)
axes[1].set_xlabel("time t")
axes[1].set_ylabel("$c_k(t)$")
axes[1].set_title(f"Weight decay lambda = {weight_decay}: balances decay to 0")
axes[1].legend()
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

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
# # The dynamics of a two-layer ReLU network: directions, magnitudes and partitions
#
# Section 5 and App. C.2 of {cite:t}`kunin2024richquick` write the gradient flow of a two-layer piecewise-linear
# network neuron by neuron. Each neuron's contribution $\beta_k = a_k w_k$ moves under a matrix $M_k$ fixed by
# $\beta_k$ and the conserved $\delta_k$, driven by a vector $\xi_k$ that depends on where the neuron is active. In a
# direction $\hat\beta_k$ (where the neuron is active) and a signed magnitude $\mu_k$ (its slope there) three regimes
# separate: a downstream neuron ($\delta_k \ll 0$) keeps its direction and reweights, a balanced one turns and grows,
# an upstream one ($\delta_k \gg 0$) turns fast while its readout hardly changes. The conservation law, the NTK and
# Fig. 1(b)/5(b) are in {doc}`grq_relu_rich`.
#
# ## What this chapter shows
#
# 1. The flow $\dot\beta_k = -M_k\xi_k$ and its form in $(\hat\beta_k, \mu_k)$ ({prf:ref}`grq-prop-c-2-beta`) agree
#    with torch autograd to {glue:text}`ode_err` relative ([Sec. 1](#sec-grq-relu-dynamics-beta)).
# 2. The upstream and downstream approximations stay within their derived bounds ({glue:text}`regime_within`
#    neurons) and the balanced formulas are exact ({glue:text}`regime_bal_err`) ({prf:ref}`grq-prop-sec5-regimes`,
#    [Sec. 2](#sec-grq-relu-dynamics-regimes)).
# 3. An upstream readout stays about constant ({prf:ref}`grq-cor-upstream-readout`): it changes by less than
#    `a_const_max` $= 0.5$ of its size in {glue:text}`a_up_count` seeds (largest {glue:text}`a_up_max`), within the
#    bound derived for the flow, widened by 10 times the GD drift of $\delta_k$, in {glue:text}`a_bound_count` seeds,
#    while balanced and downstream readouts change by more than `a_grow_min` $= 2$ times their size in
#    {glue:text}`a_grow_count` seeds ([Sec. 3](#sec-grq-relu-dynamics-readout)).
# 4. Fig. 5(a) ({prf:ref}`grq-fig-5a`): rich partitions move while the output is still small
#    ({glue:text}`rich_count` seeds); lazy partitions stay while the network fits ({glue:text}`lazy_count` seeds)
#    ([Sec. 4](#sec-grq-relu-dynamics-fig5a)).
# 5. Fig. 1(a), left ({prf:ref}`grq-fig-1a-left`): at $\delta = 0$, $\tau = 0.1$ turns, moves its kernel and aligns
#    with the teacher far more than $\tau = 2$ ({glue:text}`f1_count` seeds) ([Sec. 5](#sec-grq-relu-dynamics-fig1a)).
# 6. The explorer's {glue:text}`relu_explorer_frames` frames equal a second computation, and in every $\alpha$ column
#    the kernel and the partition move over 10 times (the check's threshold) farther at $\tau = 0.1$ than at
#    $\tau = 2$, on the explorer's one task ([Sec. 6](#sec-grq-relu-dynamics-explorer)).
#
# A count over seeds holds when its one-sided 95 % Wilson lower end exceeds `claim_rate`; the ranges are in the
# [parameters table](#sec-grq-relu-dynamics-parameters).

# %% [markdown]
# (sec-grq-relu-dynamics-parameters)=
# ## Parameters
#
# The first cell holds the knobs; the next declares each with its accepted range and the reason, checks them, and
# prints the table. Claims 1 and 2 are identities of the flow, checked on random networks. Claims 3 and 4 are stated
# for the XOR-like task with $|\delta| = 1$ and gradient descent at lr $2\cdot10^{-4}$ for 2500 steps (time 0.5,
# which resolves the upstream turn on its time scale $\tau^2$), then lr $0.01$ for 5000 steps (time 50); claim 5 for
# the paper's Fig. 1(a) setting ($d = 2$, $n = 20$, $h = 50$, three teacher units, $\tau \in \{0.1, 2\}$). The
# defaults sit at one edge of the ranges; the CI set (`book/ci_params/grq_relu_dynamics.yaml`) at the other
# ($n = 16$, $h = 24$, $\tau = 0.05$, seeds 40 to 51; Fig. 1(a) at 1000 steps, seeds 300 to 311; the flow checks at
# $d = 4$, $n = 20$, $h = 8$, $\gamma \in \{0, 0.9\}$, $\eta_a = 3$, $\eta_w = 0.25$, $|\delta_k|/|\mu_k|$ up to
# $10^4$). `papermill book/grq_relu_dynamics.ipynb out.ipynb -p f1_n_seeds 20 -p n_seeds 20` doubles the seeds.

# %% tags=["parameters"]
cons_d = 3  # ODE checks: input dimension
cons_n = 15  # ODE checks: data points
cons_h = 6  # ODE checks: width
cons_seed = 0  # ODE checks: seed of the random networks and data
gammas = [0.0, 0.2]  # ODE checks: leaky slopes (0 is the ReLU)
eta_a = 0.5  # ODE checks: learning rate of the readouts
eta_w = 2.0  # ODE checks: learning rate of the first layer
ode_tol = 1e-10  # relative error allowed between the derived velocities and autograd (rounding)
regime_ratios = [10.0, 100.0, 1000.0]  # regime checks: values of |delta_k| over |mu_k|
xor_n = 20  # Fig. 5a: points of the XOR-like task
xor_jitter = 0.3  # Fig. 5a: angular jitter of the points around the diagonals, in radians
xor_h = 20  # Fig. 5a: width of the student (even: pairs with opposite readouts)
xor_tau = 0.1  # Fig. 5a: overall scale tau of the initialization
xor_lr_fast = 0.0002  # Fig. 5a: GD learning rate of the first phase, which resolves the fast upstream turn (time tau^2)
xor_steps_fast = 2500  # Fig. 5a: GD steps of the first phase (time 0.5)
xor_lr = 0.01  # Fig. 5a: GD learning rate of the second phase
xor_steps = 5000  # Fig. 5a: GD steps of the second phase (time 50)
seed = 0  # Fig. 5a: first seed; the seeds are seed, seed + 1, ...
n_seeds = 10  # Fig. 5a: seeds, each with its own data and student draw; at least 10 for a count
n_circle = 720  # Fig. 5a: points on the unit circle where activation patterns are compared
claim_rate = 0.5  # fixed before the data: a count holds when its one-sided 95 % Wilson lower end exceeds this
a_const_max = 0.5  # fixed before the data: an upstream readout changes by less than this fraction of its size
a_grow_min = 2.0  # fixed before the data: balanced and downstream readouts change by more than this many times their size
ham_rich_min = 0.15  # fixed before the data: final Hamming distance of a rich run at least this
ham_frac = 0.5  # fixed before the data: the early snapshot is the first where Hamming reaches this fraction of its final value
f_small = 0.25  # fixed before the data: at the early snapshot the largest output on the circle is at most this (labels are 1)
ham_lazy_max = 0.1  # fixed before the data: a lazy run's Hamming distance stays below this through the run
loss_fit = 0.05  # fixed before the data: a lazy run ends with training loss below this (it fits by reweighting)
f1_seed = 100  # Fig. 1a: first seed of the teacher-student runs
f1_n_seeds = 10  # Fig. 1a: seeds; at least 10 for a count
f1_steps = 2000  # Fig. 1a: GD steps of both runs
f1_lr_small = 0.05  # Fig. 1a: learning rate at tau 0.1 (time 100 at 2000 steps)
f1_lr_large = 0.0125  # Fig. 1a: learning rate at tau 2 (the kernel is about 400 times larger)
turn_ratio = 10.0  # fixed before the data: median direction turn at tau 0.1 over that at tau 2 exceeds this
kd_ratio = 10.0  # fixed before the data: kernel distance at tau 0.1 over that at tau 2 exceeds this

# %%
from markovlib.book import params

SPEC = params.declare(
    cons_d=params.Int(2, why="in d = 1 the direction bhat_k = sgn(w_k) cannot turn: the direction equations read 0 = 0"),
    cons_n=params.Int(1, why="the flow identities hold for any data"),
    cons_h=params.Int(1, why="the flow identities hold for any width"),
    cons_seed=params.Int(0, why="a seed"),
    gammas=params.RealList(0.0, 1.0, why="leaky slopes: 0 is the ReLU, 1 the linear network"),
    eta_a=params.Real(0.0, float("inf"), closed=False, why="a learning rate is positive"),
    eta_w=params.Real(0.0, float("inf"), closed=False, why="a learning rate is positive"),
    ode_tol=params.Real(0.0, 1e-6, closed=False, why="a rounding tolerance"),
    regime_ratios=params.RealList(10.0, 1e6, why="the approximations need |delta_k| >> |mu_k|"),
    xor_n=params.Int(16, 24, why="the stated range of claims 3 and 4"),
    xor_jitter=params.Real(0.0, 0.5, why="points stay near their diagonal"),
    xor_h=params.Int(16, 24, why="the stated range of claims 3 and 4"),
    xor_tau=params.Real(0.05, 0.1, why="the stated range of small overall scales"),
    xor_lr_fast=params.Real(0.0002, 0.0002, why="the stated learning rate of the first phase"),
    xor_steps_fast=params.Int(2500, 2500, why="time 0.5, the stated horizon of the first phase"),
    xor_lr=params.Real(0.01, 0.01, why="the stated learning rate of the second phase"),
    xor_steps=params.Int(5000, 5000, why="time 50, the stated horizon of the second phase"),
    seed=params.Int(0, why="a seed"),
    n_seeds=params.Int(10, why="claims over seeds are counts with a Wilson interval"),
    n_circle=params.Int(360, why="a resolution of one degree"),
    claim_rate=params.Real(0.5, 0.99, why="a count's Wilson lower end must exceed at least 1/2"),
    a_const_max=params.Real(0.0, 1.0, closed=False, why="a fraction of the readout's size"),
    a_grow_min=params.Real(1.0, 100.0, why="growth beyond the readout's size"),
    ham_rich_min=params.Real(0.0, 0.5, closed=False, why="a Hamming distance on the circle"),
    ham_frac=params.Real(0.0, 1.0, closed=False, why="a fraction of the final distance"),
    f_small=params.Real(0.0, 1.0, closed=False, why="below the labels' size 1"),
    ham_lazy_max=params.Real(0.0, 0.5, closed=False, why="a Hamming distance on the circle"),
    loss_fit=params.Real(0.0, 1.0, closed=False, why="below the loss 1 of the zero map"),
    f1_seed=params.Int(0, why="a seed"),
    f1_n_seeds=params.Int(10, why="claims over seeds are counts with a Wilson interval"),
    f1_steps=params.Int(1000, 2000, why="the stated range of claim 5"),
    f1_lr_small=params.Real(0.05, 0.05, why="the stated learning rate at tau = 0.1 (time 100 at 2000 steps)"),
    f1_lr_large=params.Real(0.0125, 0.0125, why="the stated learning rate at tau = 2"),
    turn_ratio=params.Real(1.0, 1e6, why="a ratio above 1"),
    kd_ratio=params.Real(1.0, 1e6, why="a ratio above 1"),
    require=[("xor_h even", lambda v: v["xor_h"] % 2 == 0, "the student pairs neurons with opposite readouts")],
)
globals().update(SPEC.check(globals()))
SPEC.table()

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import display
from matplotlib.colors import ListedColormap

from markovlib.book import explorers, plotting, widgets
from markovlib.book.formatting import bound, fixed, fraction
from markovlib.book.glue import glue
from markovlib.book.report import Verification
from markovlib.book.sweep import record_results
from markovlib.richlazy import relu_checks, relu_drawings, relu_dynamics, relu_networks
from markovlib.richlazy.minimal_model import conserved_delta, kernel_distance

plotting.use_style()
verified = Verification()  # one record per claim; the final cell prints the generated table
torch.set_default_dtype(torch.float64)
# the bounds printed in the measured column: each at least 100 times above the error observed on the machines tried
PRINT = dict(ode=1e-12, regime=1e-12)

# %% [markdown]
# (sec-grq-relu-dynamics-beta)=
# ## The dynamics of $\beta_k$
#
# The network is $f(x) = \sum_{k=1}^h a_k\sigma(w_k^\top x)$ with $\sigma(z) = \max(z, \gamma z)$, no biases, trained
# on $L = \frac1n\sum_i r_i^2$, $r_i = f(x_i) - y_i$, by the gradient flow $\dot a_k = -\eta_a\partial_{a_k}L$,
# $\dot w_k = -\eta_w\nabla_{w_k}L$ (the set-up of {doc}`grq_relu_rich`). Write $c_{ki} = \sigma'(w_k^\top x_i)$ for the
# activations and
#
# $$
# \xi_k = \frac2n\sum_{i=1}^n c_{ki}\,r_i\,x_i
# $$ (grq-eq-xi)
#
# for the vector that drives neuron $k$ (the paper's loss $\frac12\sum_i r_i^2$ drops the factor $2/n$). Because
# $\sigma(z) = \sigma'(z)z$, $\partial_{a_k}L = \frac2n\sum_i r_i c_{ki}w_k^\top x_i = w_k^\top\xi_k$ and
# $\nabla_{w_k}L = a_k\xi_k$. Unlike the linear network of {doc}`grq_wide_deep`, $\xi_k$ is not shared by the neurons:
# each sees only the residuals of the inputs in its active half-space.
#
# ```{prf:proposition} The $\beta_k$ dynamics in signed spherical coordinates (paper's Sec. 5, App. C.2)
# :label: grq-prop-c-2-beta
#
# Let $\beta_k = a_kw_k$, $\delta_k = \eta_wa_k^2 - \eta_a\|w_k\|^2$ (conserved, {prf:ref}`grq-prop-5-delta`) and
# $S_k = \sqrt{\delta_k^2 + 4\eta_a\eta_w\|\beta_k\|^2}$. Then
#
# $$
# \dot\beta_k = -M_k\xi_k, \qquad M_k = \eta_wa_k^2 I + \eta_a w_kw_k^\top
# = \frac{S_k + \delta_k}{2} I + \frac{S_k - \delta_k}{2}\hat\beta_k\hat\beta_k^\top .
# $$
#
# For $a_k \ne 0 \ne w_k$, the signed spherical coordinates $\hat\beta_k = \operatorname{sgn}(a_k)\beta_k/\|\beta_k\| =
# w_k/\|w_k\|$ and $\mu_k = \operatorname{sgn}(a_k)\|\beta_k\| = a_k\|w_k\|$ (so $\beta_k = \mu_k\hat\beta_k$) obey
#
# $$
# \dot{\hat\beta}_k = -\frac{S_k + \delta_k}{2\mu_k}\left(I - \hat\beta_k\hat\beta_k^\top\right)\xi_k,
# \qquad \dot\mu_k = -S_k\,\hat\beta_k^\top\xi_k .
# $$ (grq-eq-spherical)
# ```
#
# ```{prf:proof}
# $\dot\beta_k = \dot a_kw_k + a_k\dot w_k = -\eta_a(w_k^\top\xi_k)w_k - \eta_wa_k^2\xi_k = -M_k\xi_k$. From
# $\eta_wa_k^2 - \eta_a\|w_k\|^2 = \delta_k$ and $(\eta_wa_k^2)(\eta_a\|w_k\|^2) = \eta_a\eta_w\|\beta_k\|^2$, the two
# numbers $\eta_wa_k^2$ and $\eta_a\|w_k\|^2$ are the roots $(S_k \pm \delta_k)/2$, and
# $w_kw_k^\top = \|w_k\|^2\hat\beta_k\hat\beta_k^\top$. For the coordinates: $\hat\beta_k^\top\dot{\hat\beta}_k = 0$,
# so $\dot\mu_k = \frac{d}{dt}\hat\beta_k^\top\beta_k = \hat\beta_k^\top\dot\beta_k = -\hat\beta_k^\top M_k\xi_k =
# -\left(\frac{S_k+\delta_k}{2} + \frac{S_k-\delta_k}{2}\right)\hat\beta_k^\top\xi_k$, and
# $\dot{\hat\beta}_k = (I - \hat\beta_k\hat\beta_k^\top)\dot\beta_k/\mu_k$, where the projection removes the
# $\hat\beta_k\hat\beta_k^\top$ part of $M_k$. (Equivalently $\dot{\hat\beta}_k = -\eta_w\frac{a_k}{\|w_k\|}(I -
# \hat\beta_k\hat\beta_k^\top)\xi_k$, the motion of $w_k/\|w_k\|$.)
# ```
#
# The direction $\hat\beta_k$ fixes the half-space where neuron $k$ is active, so the activation pattern $C$ changes
# only through $\dot{\hat\beta}_k$; $\mu_k$ is the slope of the neuron's contribution there. For $\delta_k < 0$ the
# factor $(S_k + \delta_k)/2$ cancels; it is evaluated as $2\eta_a\eta_w\mu_k^2/(S_k - \delta_k)$
# (`markovlib.richlazy.relu_dynamics.spherical_velocity`).
#
# **Check (independent).** Random networks with $\eta_a \ne \eta_w$; torch computes the parameter velocity
# $\dot\theta = -\eta\nabla L$ by autograd of its own loss and pushes it through $\theta \mapsto (\hat\beta_k, \mu_k,
# \beta_k)$ with a Jacobian-vector product. The derived right-hand sides (from `driving_vector`, `preconditioner` and
# `spherical_velocity`) must agree to `ode_tol`. The readouts are drawn at several scales so that the neurons span
# $\delta_k$ from strongly negative to strongly positive.

# %%
def torch_velocities(X, y, a, W, gamma, eta_a, eta_w):
    """Independent reference: d/dt of (bhat, mu, beta) along the gradient flow of the loss (1/n) sum_i (f(x_i) - y_i)^2,
    by torch autograd of its own loss and a Jacobian-vector product of the parameter velocity (no markovlib)."""
    Xt, yt = torch.tensor(X), torch.tensor(y)
    at, Wt = torch.tensor(a, requires_grad=True), torch.tensor(W, requires_grad=True)
    Z = Xt @ Wt.T
    f = torch.where(Z > 0, Z, gamma * Z) @ at
    loss = torch.mean((f - yt) ** 2)
    ga, gW = torch.autograd.grad(loss, (at, Wt))
    va, vW = -eta_a * ga, -eta_w * gW

    def coords(a_, W_):
        nw = torch.linalg.norm(W_, dim=1)
        return W_ / nw[:, None], a_ * nw, a_[:, None] * W_

    _, tangents = torch.func.jvp(coords, (at.detach(), Wt.detach()), (va, vW))
    return [t.numpy() for t in tangents]


# %% [markdown]
# Three random networks per leaky slope (`relu_checks.random_network`: readouts and rows of the first layer drawn at
# scales 0.1, 1 and 3, so that $\delta_k$ spans both signs); for each, the derived velocities
# (`relu_dynamics.flow_velocities`) against the reference. The error is taken on joint scales
# (`relu_checks.velocity_error`): $\dot\mu_k$ and $\dot\beta_k$ against $\max_k\|\dot\beta_k\|$, $\dot{\hat\beta}_k$
# against $\max_k\|\dot\beta_k\|/|\mu_k|$, the size of the terms the projection cancels. (A review found that each
# velocity against its own largest entry fails at $d = 1$, where $\dot{\hat\beta}_k \equiv 0$ and the ratio is 0/0;
# hence the joint scales, and $d \ge 2$ in the table.)

# %%
rng = np.random.default_rng(cons_seed)
ode_err, delta_seen = 0.0, []
for gamma in gammas:
    for trial in range(3):
        X, y, a, W = relu_checks.random_network(rng, cons_n, cons_d, cons_h)
        reference = torch_velocities(X, y, a, W, gamma, eta_a, eta_w)
        derived = relu_dynamics.flow_velocities(X, y, a, W, gamma, eta_a, eta_w)
        mu = relu_dynamics.spherical_coordinates(a, W)[1]
        ode_err = max(ode_err, relu_checks.velocity_error(derived, reference, mu))
        delta_seen.extend(conserved_delta(a, W, eta_a, eta_w).tolist())
n_neurons = len(delta_seen)
print(f"{n_neurons} neurons, delta_k from {fixed(min(delta_seen), 1)} to {fixed(max(delta_seen), 1)}, gammas {gammas}: "
      f"largest relative error of (d bhat/dt, d mu/dt, d beta/dt) against autograd {bound(ode_err, PRINT['ode'])}")

# %% tags=["hide-input"]
glue("ode_err", bound(ode_err, PRINT["ode"]))
_ = verified.record("Sec. 5 / App. C.2: d beta_k/dt = -M_k xi_k and the (bhat_k, mu_k) equations", ode_err < ode_tol,
                    check=f"torch autograd JVP of the raw parameter flow, {n_neurons} neurons, eta_a = {eta_a:g}, "
                          f"eta_w = {eta_w:g}, gamma in {gammas}",
                    measured=bound(ode_err, PRINT["ode"]), tolerance=f"{ode_tol:g}", kind="independent")

# %% [markdown]
# (sec-grq-relu-dynamics-regimes)=
# ## The three regimes
#
# The size of $\delta_k$ against $|\mu_k|$ sets the regime. With $S_k - |\delta_k| = 4\eta_a\eta_w\mu_k^2/(S_k +
# |\delta_k|) \le 2\eta_a\eta_w\mu_k^2/|\delta_k|$:
#
# ```{prf:proposition} Upstream, balanced and downstream dynamics (paper's Sec. 5)
# :label: grq-prop-sec5-regimes
#
# - *Upstream*, $\delta_k > 0$: $M_k \approx \delta_kI$, $\dot{\hat\beta}_k \approx -\frac{\delta_k}{\mu_k}(I -
#   \hat\beta_k\hat\beta_k^\top)\xi_k$ and $\dot\mu_k \approx -\delta_k\hat\beta_k^\top\xi_k$, with relative errors at
#   most $\eta_a\eta_w\mu_k^2/\delta_k^2$ and $2\eta_a\eta_w\mu_k^2/\delta_k^2$.
# - *Balanced*, $\delta_k = 0$ (exact): $M_k = \sqrt{\eta_a\eta_w}|\mu_k|(I + \hat\beta_k\hat\beta_k^\top)$,
#   $\dot{\hat\beta}_k = -\sqrt{\eta_a\eta_w}\operatorname{sgn}(\mu_k)(I - \hat\beta_k\hat\beta_k^\top)\xi_k$,
#   $\dot\mu_k = -2\sqrt{\eta_a\eta_w}|\mu_k|\hat\beta_k^\top\xi_k$.
# - *Downstream*, $\delta_k < 0$: $M_k \approx |\delta_k|\hat\beta_k\hat\beta_k^\top$; the direction moves at most at
#   rate $\|\dot{\hat\beta}_k\| \le \eta_a\eta_w\frac{|\mu_k|}{|\delta_k|}\|(I - \hat\beta_k\hat\beta_k^\top)\xi_k\|$, so
#   $\dot{\hat\beta}_k \approx 0$, and $\dot\mu_k \approx -|\delta_k|\hat\beta_k^\top\xi_k$ with relative error at
#   most $2\eta_a\eta_w\mu_k^2/\delta_k^2$.
# ```
#
# ```{prf:proof}
# Upstream: $(S_k + \delta_k)/(2\delta_k) - 1 = (S_k - \delta_k)/(2\delta_k) \le \eta_a\eta_w\mu_k^2/\delta_k^2$ and
# $S_k/\delta_k - 1 \le 2\eta_a\eta_w\mu_k^2/\delta_k^2$. Balanced: $S_k = 2\sqrt{\eta_a\eta_w}|\mu_k|$ in
# {eq}`grq-eq-spherical`. Downstream: $(S_k + \delta_k)/2 = (S_k - |\delta_k|)/2 \le \eta_a\eta_w\mu_k^2/|\delta_k|$,
# divided by $|\mu_k|$; and $S_k/|\delta_k| - 1 \le 2\eta_a\eta_w\mu_k^2/\delta_k^2$.
# ```
#
# So a downstream neuron keeps its half-space and only rescales: the partition, the pattern $C$ and $M_k$ stay, and the
# NTK stays (lazy), unless the neurons cannot fit the data, when a delayed alignment follows. A balanced neuron turns
# at a speed independent of its size while its magnitude grows in proportion to itself: from a small start it aligns
# first and fits later. An upstream neuron turns at speed $\delta_k/|\mu_k|$, very fast at small scale, while its
# magnitude moves at the moderate rate $\delta_k$.
#
# **Check (independent).** Networks with $\eta_a = \eta_w = 1$ whose neurons have $|\delta_k|/|\mu_k|$ in
# `regime_ratios` (random directions, $|a_k|$ and $\|w_k\|$ from `layer_scales`), velocities by torch autograd as
# above, against the approximations (`regime_velocity`) and the derived bounds, with a rounding allowance of
# `ode_tol`.
#
# A neuron inactive on every point ($\xi_k = 0$, possible at $\gamma = 0$) has zero velocity in the flow and in every
# approximation, all linear in $\xi_k$: it counts as within its bound when both are exactly 0, and its relative error
# (0/0) is not formed (`relu_checks.regime_errors`). (A review found such neurons at `cons_n` $= 2$, `cons_h` $= 12$
# counted as misses through that 0/0 ratio; no neuron with a finite ratio was above its bound.)

# %%
worst_ratio, worst_exact_bal, n_within, n_checked, n_idle = 0.0, 0.0, 0, 0, 0
for ratio in regime_ratios:
    for sign, regime in ((1.0, "upstream"), (0.0, "balanced"), (-1.0, "downstream")):
        X, y, a, W = relu_checks.regime_network(rng, cons_n, cons_d, cons_h, ratio, sign)
        exact = torch_velocities(X, y, a, W, 0.0, 1.0, 1.0)[:2]
        bhat, mu = relu_dynamics.spherical_coordinates(a, W)
        delta = conserved_delta(a, W)
        xi = relu_dynamics.driving_vector(X, y, a, W)
        approx = relu_dynamics.regime_velocity(bhat, mu, delta, xi, regime)
        out = relu_checks.regime_errors(bhat, mu, delta, xi, exact, approx, regime, ode_tol)
        if regime == "balanced":
            worst_exact_bal = max(worst_exact_bal, out["balanced_err"])
            continue
        worst_ratio = max(worst_ratio, out["worst"])
        n_within, n_checked, n_idle = n_within + out["within"], n_checked + cons_h, n_idle + out["idle"]
# the downstream rate bound is sharp as |delta|/|mu| grows (the ratio tends to 1), hence the rounding allowance
print(f"|delta|/|mu| in {regime_ratios}: {fraction(n_within, n_checked)} neurons within their derived bounds (allowance "
      f"{ode_tol:g} relative; {n_idle} inactive on every point, xi_k = 0, counted within when both velocities are 0); "
      f"balanced formulas against autograd: {bound(worst_exact_bal, PRINT['regime'])}")

# %% tags=["hide-input"]
glue("regime_within", fraction(n_within, n_checked))
glue("regime_bal_err", bound(worst_exact_bal, PRINT["regime"]))
_ = verified.record("Sec. 5: upstream and downstream approximations within the derived bounds", n_within == n_checked,
                    check=f"torch autograd velocities, |delta|/|mu| in {regime_ratios}, {cons_h} neurons each, bound "
                          f"times (1 + {ode_tol:g}); a neuron with xi_k = 0 (inactive on every point) counts as within "
                          f"when its exact and approximate velocities are both 0",
                    measured=f"{fraction(n_within, n_checked)} neurons", tolerance="all", kind="independent")
_ = verified.record("Sec. 5: the balanced (delta = 0) formulas are exact", worst_exact_bal < ode_tol,
                    check="torch autograd velocities at delta_k = 0", measured=bound(worst_exact_bal, PRINT["regime"]),
                    tolerance=f"{ode_tol:g}", kind="independent")

# %% [markdown]
# (sec-grq-relu-dynamics-readout)=
# ## An upstream readout stays about constant
#
# Since $\eta_wa_k^2 = (S_k + \delta_k)/2$ and $\delta_k$ is conserved, the readout is a function of $\mu_k$:
#
# ```{prf:corollary} The upstream readout (paper's Sec. 5, "$M_k$ stays constant")
# :label: grq-cor-upstream-readout
#
# Along the gradient flow, for $\delta_k > 0$,
# $\left|\frac{a_k(t)^2}{a_k(0)^2} - 1\right| \le \eta_a\eta_w\frac{\max(\mu_k(0)^2, \mu_k(t)^2)}{\delta_k^2}$, hence
# $\frac{\bigl||a_k(t)| - |a_k(0)|\bigr|}{|a_k(0)|} \le \eta_a\eta_w\frac{\max_{s \le t}\mu_k(s)^2}{\delta_k^2}$.
# ```
#
# ```{prf:proof}
# $\eta_w(a_k(t)^2 - a_k(0)^2) = (S_k(t) - S_k(0))/2$ and $0 \le S_k - \delta_k \le 2\eta_a\eta_w\mu_k^2/\delta_k$,
# so $|S_k(t) - S_k(0)| \le 2\eta_a\eta_w\max(\mu_k(0)^2, \mu_k(t)^2)/\delta_k$; divide by $\eta_wa_k(0)^2 =
# (S_k(0) + \delta_k)/2 \ge \delta_k$. Finally $|x - 1| \le |x^2 - 1|$ for $x \ge 0$.
# ```
#
# At the initialization of Fig. 1 ($|a_k| = \tau\alpha$, $\|w_k\| = \tau/\alpha$, $\delta_k = \tau^2(\alpha^2 -
# \alpha^{-2})$) one has $|\mu_k(0)| = \tau^2$, so at small $\tau$ and $\delta = 1$ the readout moves only as far as
# the neuron's slope $\mu_k$ grows towards $\delta_k$; it is $M_k \approx \delta_kI$ that stays constant. At $\delta_k
# \le 0$ nothing holds it: $\eta_wa_k^2 = (S_k + \delta_k)/2$ is $\sqrt{\eta_a\eta_w}|\mu_k|$ (balanced) or about
# $\eta_a\eta_w\mu_k^2/|\delta_k|$ (downstream), and it grows with the neuron from $\tau^2$.
#
# The runs are those of Fig. 5(a) below: the XOR-like task in $d = 2$ (`relu_dynamics.xor_task`: points near the four
# diagonals of the unit circle, labels $\operatorname{sgn}(x_1x_2)$), `n_seeds` seeds, $\delta \in \{1, 0, -1\}$ from one
# base draw per seed, and a small *unpaired* initialization (`relu_dynamics.small_init`: $h$ independent directions and
# signs, $|a_k|\,\|w_k\| = \tau^2$ with $\tau = $ `xor_tau`, so $|f(x)| \le h\tau^2\|x\|$ at the start, a near-zero
# map as in the paper's caption). The symmetric student of Fig. 1 would output exactly 0, but its paired neurons share
# their boundaries, so every region has an even number of active neurons and the parity colouring is uniform at the
# start; the unpaired one has a generic partition. Gradient descent runs in two phases (lr `xor_lr_fast` for
# `xor_steps_fast` steps, then lr `xor_lr` for `xor_steps` steps): the first resolves the upstream turn, whose time
# scale is $|\mu_k|/\delta_k \approx \tau^2$.

# %%
deltas = np.array([1.0, 0.0, -1.0])  # upstream, balanced, downstream
names = ["upstream", "balanced", "downstream"]
seeds = list(range(seed, seed + n_seeds))
tasks = [relu_dynamics.xor_task(xor_n, xor_jitter, s_) for s_ in seeds]
X5 = np.stack([t_[0] for t_ in tasks])[:, None]  # (S, 1, n, 2)
y5 = np.stack([t_[1] for t_ in tasks])[:, None]
inits = [relu_dynamics.small_init(2, xor_h, xor_tau, deltas, s_ + 1000) for s_ in seeds]
a05 = np.stack([i_[0] for i_ in inits])  # (S, 3, h)
W05 = np.stack([i_[1] for i_ in inits])

# %% [markdown]
# Both phases of gradient descent, with snapshots every 5 steps while the fast upstream turn happens, then every 50;
# in the second phase every 10 steps up to time 10.5, then every 50. The time of a snapshot is the sum of the step
# sizes before it.

# %%
snaps_fast = list(range(0, 250, 5)) + list(range(250, xor_steps_fast + 1, 50))
snaps_slow = list(range(10, 1000, 10)) + list(range(1000, xor_steps + 1, 50))
r5a = relu_networks.gradient_descent(X5, y5, a05, W05, xor_lr_fast, snaps_fast)
r5b = relu_networks.gradient_descent(X5, y5, r5a["a"][-1], r5a["W"][-1], xor_lr, snaps_slow)
run5 = {k_: np.concatenate([r5a[k_], r5b[k_]]) for k_ in ("a", "W", "loss")}
times5 = np.concatenate([np.array(snaps_fast) * xor_lr_fast, xor_steps_fast * xor_lr_fast + np.array(snaps_slow) * xor_lr])

# %% [markdown]
# Per seed and regime, the largest relative change of $|a_k|$ over the run and the neurons, and the corollary's bound
# $\max\mu_k^2/\delta_k^2$ for the upstream column ($\eta_a = \eta_w = 1$, $\delta = 1$). Gradient descent conserves
# $\delta_k$ only up to a drift of order the step size; the bound check allows 10 times that drift.

# %%
A = np.abs(run5["a"])  # (T, S, 3, h)
rel_a = np.max(np.abs(A / A[0] - 1), axis=(0, 3))  # (S, 3): largest relative change of |a_k| over run and neurons
MU = run5["a"] * np.linalg.norm(run5["W"], axis=-1)
derived = np.max(MU**2, axis=(0, 3)) / 1.0**2  # eta_a = eta_w = 1, delta = 1 for the upstream column
drift = float(np.max(np.abs(conserved_delta(run5["a"], run5["W"]) - conserved_delta(a05, W05))))
for j, nm in enumerate(names):
    print(f"{nm:10s}: largest relative change of |a_k| over the run from {fixed(rel_a[:, j].min(), 2)} to "
          f"{fixed(rel_a[:, j].max(), 2)} over the seeds")
print(f"derived bound max mu^2 / delta^2 (upstream) from {fixed(derived[:, 0].min(), 2)} to {fixed(derived[:, 0].max(), 2)}")
print(f"GD drift of delta_k over the run: {bound(drift, 1e-2)}")

# %% [markdown]
# The counts. The corollary's bound is derived for gradient flow, where $\delta_k$ is conserved; these runs are
# gradient descent, whose $\delta_k$ drifts (printed above). What is checked is therefore the bound widened by 10 times
# that drift, relatively and absolutely: $\max|a_k/a_k(0) - 1| \le \max\mu_k^2/\delta_k^2\,(1 + 10\,\epsilon) +
# 10\,\epsilon$ with $\epsilon$ the largest drift of $\delta_k$. This widened bound is required in every seed, not
# counted at `claim_rate`, at which a bound broken in some seeds would still pass (a review found so at a rate of
# 1/2).

# %% tags=["hide-input"]
k_up, n_up, t_up = relu_checks.seed_count(rel_a[:, 0] < a_const_max)
k_b, n_b, t_b = relu_checks.seed_count(rel_a[:, 0] <= derived[:, 0] * (1 + 10 * drift) + 10 * drift)
k_g, n_g, t_g = relu_checks.seed_count((rel_a[:, 1] > a_grow_min) & (rel_a[:, 2] > a_grow_min))
print(f"upstream below {a_const_max}: {t_up}; within the derived bound: {fraction(k_b, n_b)} (required in all); balanced and downstream above "
      f"{a_grow_min}: {t_g}")
glue("a_up_count", t_up)
glue("a_up_max", fixed(rel_a[:, 0].max(), 2))
glue("a_bound_count", fraction(k_b, n_b))
glue("a_grow_count", t_g)
_ = verified.record_count(f"Sec. 5: an upstream |a_k| changes by less than {a_const_max:g} of itself at small tau",
                          k_up, n_up, rate=claim_rate, kind="same code",
                          check=f"max over neurons and {len(times5)} snapshots, XOR task, tau = {xor_tau:g}, delta = 1")
_ = verified.record("Sec. 5: the upstream change of |a_k| is within the derived bound max mu^2 / delta^2, every seed",
                    k_b == n_b, kind="same code",
                    check=f"per seed, max over upstream neurons and {len(times5)} snapshots, allowance 10 x the GD drift "
                          f"of delta_k",
                    measured=f"{fraction(k_b, n_b)} seeds", tolerance="all seeds")
_ = verified.record_count(f"Sec. 5: balanced and downstream |a_k| grow by more than {a_grow_min:g} x their size",
                          k_g, n_g, rate=claim_rate, kind="same code",
                          check="the same runs at delta = 0 and -1")

# %% [markdown]
# (sec-grq-relu-dynamics-fig5a)=
# ## The surface of the network during training (Fig. 5a)
#
# ```{prf:observation} Rich partitions move while the output is small; lazy ones stay (paper's Fig. 5a)
# :label: grq-fig-5a
#
# On an XOR-like task, from an initialization with $f(x;\theta_0) \approx 0$, a rich (balanced or upstream)
# initialization first changes its activation partition while the output stays near zero, then fits the data; a
# lazy (downstream) one keeps its partition and reweights the neurons.
# ```
#
# Without biases the network is positively homogeneous, so its regions are cones from the origin
# ({prf:ref}`grq-prop-c-2`) and the activation pattern on the unit circle is the whole partition. The Hamming
# distance between the patterns at time $t$ and at $0$ is taken on `n_circle` points of the circle
# (`relu_dynamics.circle_points`). **Checks** (counts over seeds, thresholds fixed beforehand): for each rich run,
# (i) its final Hamming distance is at least `ham_rich_min`, and (ii) at the first snapshot where it has reached
# `ham_frac` of its final value, the largest $|f|$ on the circle is at most `f_small` (the labels are $\pm1$). For
# each lazy run, the Hamming distance stays below `ham_lazy_max` at every snapshot, while the training loss ends below
# `loss_fit`.

# %%
G = relu_dynamics.circle_points(n_circle)
P0 = relu_networks.activation_pattern(G, run5["W"][0])  # (S, 3, m, h)
ham = np.stack([relu_networks.hamming_distance(relu_networks.activation_pattern(G, W_), P0) for W_ in run5["W"]])
fmax = np.stack([np.max(np.abs(relu_networks.forward(G, a_, W_)), axis=-1) for a_, W_ in zip(run5["a"], run5["W"])])
early = np.argmax(ham >= ham_frac * ham[-1], axis=0)  # (S, 3): first snapshot at ham_frac of the final distance
f_early = np.take_along_axis(fmax, early[None], axis=0)[0]
t_early = times5[early]
for j, nm in enumerate(names):
    print(f"{nm:10s}: final Hamming {fixed(ham[-1, :, j].min(), 2)} to {fixed(ham[-1, :, j].max(), 2)}; early snapshot at "
          f"time {fixed(t_early[:, j].min(), 3)} to {fixed(t_early[:, j].max(), 3)} with max |f| up to "
          f"{fixed(f_early[:, j].max(), 2)}; end loss up to {run5['loss'][-1, :, j].max():.0e}")
print(f"max |f| on the circle at the start: at most {fixed(fmax[0].max(), 2)} (the bound h tau^2 is {xor_h * xor_tau**2:g})")

# %% [markdown]
# The upstream and balanced runs of a seed share its data and base draw, so the rich claim counts seeds whose two
# rich runs both move while the output is small (pooling them as independent runs, as an earlier version did,
# doubled the count without new evidence).

# %% tags=["hide-input"]
rich_ok = (ham[-1, :, :2] >= ham_rich_min) & (f_early[:, :2] <= f_small)  # (S, 2): upstream, balanced
k_r, n_r, t_r = relu_checks.seed_count(rich_ok.all(axis=1))
k_l, n_l, t_l = relu_checks.seed_count((np.max(ham[:, :, 2], axis=0) < ham_lazy_max) & (run5["loss"][-1, :, 2] < loss_fit))
print(f"seeds whose upstream and balanced runs are both rich: {t_r}; lazy runs: {t_l}")
glue("rich_count", t_r)
glue("lazy_count", t_l)
glue("t_early_up", fixed(np.median(t_early[:, 0]), 3))
glue("t_early_bal", fixed(np.median(t_early[:, 1]), 2))
_ = verified.record_count(f"Fig. 5a: rich partitions move (Hamming >= {ham_rich_min:g}) while max |f| <= {f_small:g}",
                          k_r, n_r, rate=claim_rate, kind="same code",
                          check=f"per seed, its upstream and balanced runs both, {n_seeds} seeds, patterns on "
                                f"{n_circle} circle points")
_ = verified.record_count(f"Fig. 5a: the lazy partition stays (Hamming < {ham_lazy_max:g}) while it fits (loss < {loss_fit:g})",
                          k_l, n_l, rate=claim_rate, kind="same code",
                          check=f"downstream runs, {n_seeds} seeds, every snapshot")

# %% [markdown]
# The median time at which the partition has moved half its final distance is {glue:text}`t_early_up` for upstream and
# {glue:text}`t_early_bal` for balanced: the upstream alignment phase is the fast one, as
# {prf:ref}`grq-prop-sec5-regimes` predicts ($\hat\beta_k$ turns at rate $\delta_k/|\mu_k| \approx 1/\tau^2$).
# The figure shows the first seed: the surface $f(x)$ on $[-1, 1]^2$ at five times, coloured by the parity of the
# number of active neurons (two colours suffice, {prf:ref}`grq-prop-c-2`), the data as dots.

# %%
parity_cmap = ListedColormap(["#f0e6d2", "#5b7fa6"])  # even, odd number of active neurons
show_t = [0.0, float(np.median(t_early[:, 0])), float(np.median(t_early[:, 1])), 10.0, float(times5[-1])]
show_i = [int(np.argmin(np.abs(times5 - t_))) for t_ in show_t]
g1 = np.linspace(-1, 1, 41)
GX, GY = np.meshgrid(g1, g1)
grid = np.stack([GX.ravel(), GY.ravel()], axis=1)
fig = plt.figure(figsize=(16, 10))
for j, nm in enumerate(names):
    for c, ti in enumerate(show_i):
        a_, W_ = run5["a"][ti, 0, j], run5["W"][ti, 0, j]
        fz = relu_networks.forward(grid, a_, W_).reshape(GX.shape)
        par = (np.sum(relu_networks.activation_pattern(grid, W_), axis=-1) % 2).reshape(GX.shape)
        ax = fig.add_subplot(3, 5, 5 * j + c + 1, projection="3d", computed_zorder=False)
        ax.plot_surface(GX, GY, fz, facecolors=parity_cmap(par), rstride=1, cstride=1, linewidth=0,
                        antialiased=False, shade=False)
        xs, ys = tasks[0]
        ax.scatter(xs[:, 0], xs[:, 1], ys, c=np.where(ys > 0, plotting.MAXIMA, plotting.LOCAL), s=8)
        ax.set_zlim(-1.5, 1.5)
        ax.view_init(elev=25, azim=-60)
        ax.set_xlabel("$x_1$")
        ax.set_ylabel("$x_2$")
        ax.set_zlabel("$f(x)$")
        ax.set_title(f"{nm}, t = {fixed(times5[ti], 3)}", fontsize=9)
fig.suptitle(f"Paper's Fig. 5(a): XOR-like task, tau = {xor_tau:g}; rich (upstream delta = 1, balanced delta = 0) on top, "
             "lazy (downstream delta = -1) below\n(colour: parity of the active neurons; dots: the data, blue +1, red -1)")
plt.show()

# %% [markdown]
# Over all seeds: the Hamming distance of the partition from its start (left) and the largest output on the circle
# (right). The rich runs' partitions move before their outputs grow; the lazy runs' partitions hardly move.

# %%
fig, ax = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
tt = times5
cols = [plotting.GLOBAL, plotting.SADDLE, plotting.LOCAL]
for j, nm in enumerate(names):
    for s_ in range(n_seeds):
        ax[0].plot(tt[1:], ham[1:, s_, j], color=cols[j], lw=0.8, alpha=0.7, label=nm if s_ == 0 else None)
        ax[1].plot(tt[1:], fmax[1:, s_, j], color=cols[j], lw=0.8, alpha=0.7, label=nm if s_ == 0 else None)
for a_ in ax:
    a_.set_xscale("log")
    a_.set_xlabel("time t (sum of the step sizes)")
    a_.legend()
ax[0].set_ylabel("Hamming distance to t = 0 (circle)")
ax[1].set_ylabel("max |f| on the unit circle")
ax[0].set_title("the partition moves early for rich runs")
ax[1].set_title("the output grows later")
plt.show()

# %% [markdown]
# (sec-grq-relu-dynamics-fig1a)=
# ## Overall scale at $\delta = 0$ (Fig. 1a, left panel)
#
# ```{prf:observation} Small overall scale is rich, large overall scale lazy (paper's Fig. 1a, left)
# :label: grq-fig-1a-left
#
# In the teacher-student task of Fig. 1 at $d = 2$ and $\delta = 0$, the trajectories of $|a_k|w_k$ from $\tau = 0.1$
# turn and gather on the teacher's directions, while those from $\tau = 2$ barely move.
# ```
#
# The set-up is the paper's Fig. 1(a) ($d = 2$, $n = 20$, $h = 50$, three teacher units, one base initialization
# scaled to $\tau = 0.1$ and $\tau = 2$ at $\delta = 0$), trained for `f1_steps` steps; the paper's $10^6$ steps at lr
# $10^{-4}$ are time 100, which the small-$\tau$ run reaches at lr 0.05. The kernel at $\tau = 2$ is about $\tau^4$
# times larger, so that run uses lr 0.0125 (time 25 at 2000 steps, long after it has fit). **Checks** (per seed,
# counted): the median angle between $w_k(0)$ and $w_k(T)$ at $\tau = 0.1$ exceeds `turn_ratio` times that at
# $\tau = 2$; the kernel distance $S(0, T)$ of the NTK on the training inputs is more than `kd_ratio` times larger;
# and the neurons' alignment with the teacher (the $|\mu_k|$-weighted mean over neurons of the cosine between
# $\hat\beta_k$ and its closest teacher direction) is higher at $\tau = 0.1$.

# %%
taus1 = np.array([0.1, 2.0])
f1_seeds = list(range(f1_seed, f1_seed + f1_n_seeds))
ps = [relu_networks.teacher_student(2, 20, 50, 3, taus1, [0.0], s_) for s_ in f1_seeds]
X1 = np.stack([p_["X"] for p_ in ps])[:, None]
y1 = np.stack([p_["y"] for p_ in ps])[:, None]
a01 = np.stack([p_["a0"][:, 0] for p_ in ps])  # (S, 2, h)
W01 = np.stack([p_["W0"][:, 0] for p_ in ps])
snaps1 = list(range(0, f1_steps + 1, max(1, f1_steps // 100)))
run1 = relu_networks.gradient_descent(X1, y1, a01, W01, np.array([f1_lr_small, f1_lr_large]), snaps1)

# %% [markdown]
# The three measures per seed and scale: the median turn of the first-layer directions
# (`relu_checks.direction_turn`), the kernel distance $S(0, T)$ of the NTK on the training inputs, and the alignment
# with the teacher (`relu_checks.teacher_alignment`).

# %%
turn = relu_checks.direction_turn(run1["W"][0], run1["W"][-1])  # (S, 2)
K0 = relu_networks.ntk(X1, run1["a"][0], run1["W"][0])
K1 = relu_networks.ntk(X1, run1["a"][-1], run1["W"][-1])
kd = np.array([[kernel_distance(K0[s_, j], K1[s_, j]) for j in range(2)] for s_ in range(f1_n_seeds)])
align = relu_checks.teacher_alignment(run1["a"][-1], run1["W"][-1], np.stack([p_["W_star"] for p_ in ps]))
print(f"median turn (rad): tau 0.1 from {fixed(turn[:, 0].min(), 2)} to {fixed(turn[:, 0].max(), 2)}; tau 2 at most "
      f"{fixed(turn[:, 1].max(), 3)}")
print(f"kernel distance: tau 0.1 from {fixed(kd[:, 0].min(), 2)} to {fixed(kd[:, 0].max(), 2)}; tau 2 {bound(kd[:, 1].max(), 1e-2)}")
print(f"teacher alignment: tau 0.1 from {fixed(align[:, 0].min(), 2)} to {fixed(align[:, 0].max(), 2)}; tau 2 from "
      f"{fixed(align[:, 1].min(), 2)} to {fixed(align[:, 1].max(), 2)}")
print(f"train loss at the end up to {run1['loss'][-1].max():.0e}")

# %% tags=["hide-input"]
f1_ok = (turn[:, 0] > turn_ratio * turn[:, 1]) & (kd[:, 0] > kd_ratio * kd[:, 1]) & (align[:, 0] > align[:, 1])
k_f1, n_f1, t_f1 = relu_checks.seed_count(f1_ok)
print(f"all three per seed: {t_f1}")
glue("f1_count", t_f1)
_ = verified.record_count(f"Fig. 1a left: at delta = 0, tau = 0.1 is rich and tau = 2 lazy (turn > {turn_ratio:g} x, "
                          f"kernel distance > {kd_ratio:g} x, better teacher alignment)", k_f1, n_f1, rate=claim_rate,
                          kind="same code", check=f"d = 2, n = 20, h = 50, {f1_steps} steps, {f1_n_seeds} seeds")

# %% [markdown]
# The trajectories of $|a_k|w_k$ of the first seed at both scales, with the teacher's directions dotted.

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 5), layout="constrained")
p0 = ps[0]
for ax, j in zip(axes, range(2)):
    B = np.abs(run1["a"][:, 0, j, :, None]) * run1["W"][:, 0, j]  # (T, h, 2)
    for k in range(B.shape[1]):
        ax.plot(B[:, k, 0], B[:, k, 1], color=plotting.NEUTRAL, lw=0.6, alpha=0.6)
        ax.plot(B[-1, k, 0], B[-1, k, 1], "o", ms=3,
                color=plotting.MAXIMA if run1["a"][-1, 0, j, k] > 0 else plotting.LOCAL)
    lim = 1.15 * np.max(np.abs(B))
    for wk, ak in zip(p0["W_star"], p0["a_star"]):
        ax.plot([0, 2 * lim * wk[0]], [0, 2 * lim * wk[1]], ":", color=plotting.MAXIMA if ak > 0 else plotting.LOCAL, lw=1)
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    ax.set_title(f"tau = {taus1[j]:g}, delta = 0: " + ("rich" if j == 0 else "lazy")
                 + "\n(dots: sgn(a_k) > 0 blue, < 0 red; dotted: teacher)")
    ax.set_xlabel(r"$|a_k|\,w_{k,1}$")
    ax.set_ylabel(r"$|a_k|\,w_{k,2}$")
fig.suptitle("Paper's Fig. 1(a), left panel: trajectories of |a_k| w_k, first seed")
plt.show()

# %% [markdown]
# (sec-grq-relu-dynamics-explorer)=
# ## Explorer: overall scale $\tau$ and relative scale $\alpha$
#
# Drag the overall scale $\tau$ and the relative scale $\alpha$ of the paper's initialization ($|a_k| = \tau\alpha$,
# $\lVert w_k\rVert = \tau/\alpha$, so $\delta = \tau^2(\alpha^2 - \alpha^{-2})$ for every neuron: $\alpha < 1$
# downstream, $\alpha = 1$ balanced, $\alpha > 1$ upstream; the grid of {doc}`grq_relu_rich` is over $(\tau, \delta)$, the
# same initializations). The figure trains one network of the Fig. 1(b) teacher-student protocol, reduced to $d = 10$,
# $n = 100$ inputs on the sphere, width $h = 50$, three teacher units, 1000 steps of full-batch gradient descent at the
# authors' lr $5\cdot10^{-3}/\tau^2$ (`relu_batch.train_networks`), and draws over the steps (log axis) the test loss on
# 100 fresh points, the kernel distance $S(0, t)$ of the NTK on the training inputs and the Hamming distance of the
# activation pattern from initialization (Fig. 5b). At small $\tau$ the kernel and the partition move (rich); at large
# $\tau$ they hardly move while the loss falls (lazy); at fixed small $\tau$, $\alpha$ shifts how far the partition moves.
#
# The rendered book's explorer precomputes a grid of 5 x 5 frames: $\tau \in \{0.1, 0.2, 0.5, 1, 2\}$ (about evenly spaced
# in $\log\tau$ over the paper's range $[0.1, 2]$ of Fig. 1b) and $\alpha \in \{1/4, 1/2, 1, 2, 4\}$ (evenly spaced in
# $\log\alpha$, two downstream, balanced, two upstream). Every frame is a full training run, so the grid is sized for
# the chapter's time budget (one run and its drawing take a fraction of a second) and a small page weight (about
# {glue:text}`relu_explorer_kb` kB in the executed notebook: the sprite as base64 and the control block); slider values print exactly (at most four significant digits), so the browser test
# reads the grid point from the slider labels. The readout under the sliders prints the metrics at the last step
# coarsely (three decimals), the same on every machine.

# %%
ui = widgets.explorer(lambda tau, alpha: relu_drawings.draw_relu_training(tau, alpha),
                      tau=(0.05, 4.0, 0.05, 0.1), alpha=(0.125, 8.0, 0.125, 1.0))
if ui is not None:
    display(ui)
# The rendered book's explorer: the same drawing function on 5 x 5 = 25 frames (tau log-spaced over the paper's
# [0.1, 2], alpha from downstream to upstream), 640 x 300 pixels with a 48-colour palette.
relu_grid = {"tau": [0.1, 0.2, 0.5, 1.0, 2.0], "alpha": [0.25, 0.5, 1.0, 2.0, 4.0]}
relu_static = explorers.static_explorer(
    lambda tau, alpha, fig: relu_drawings.draw_relu_training(tau, alpha, fig=fig), relu_grid, name="grq_relu",
    title="a ReLU network: overall scale tau and relative scale alpha", initial={"tau": 0.1, "alpha": 1.0},
    size=(640, 300), colors=48, progress=False, value=lambda out: out["text"])
relu_static.show()

# %% [markdown]
# A second computation of every frame (`relu_drawings.recompute_frames`): plain gradient descent
# (`relu_networks.gradient_descent`, all 25 networks at once) on the same draws, with the NTK, the kernel distance,
# the patterns and the test loss from the final weights. Each frame's metrics and readout must agree with it.

# %%
second = relu_drawings.recompute_frames(relu_grid["tau"], relu_grid["alpha"])
relu_gap = max(abs(out_[m] - second[m][i // 5, i % 5]) for i, out_ in enumerate(relu_static.results) for m in second)
texts_ok = sum(out_["text"] == relu_drawings.outcome_text(out_["delta"], *(second[m][i // 5, i % 5] for m in second))
               for i, out_ in enumerate(relu_static.results))
res = {(o_["tau"], o_["alpha"]): o_ for o_ in relu_static.results}
small_S = min(res[(0.1, al_)]["kernel_distance_end"] for al_ in relu_grid["alpha"])
large_S = max(res[(2.0, al_)]["kernel_distance_end"] for al_ in relu_grid["alpha"])
small_H = min(res[(0.1, al_)]["hamming_end"] for al_ in relu_grid["alpha"])
large_H = max(res[(2.0, al_)]["hamming_end"] for al_ in relu_grid["alpha"])
print(f"{relu_static.n_frames} frames, all finite: {all(o_['finite'] for o_ in relu_static.results)}; frame vs plain GD "
      f"(test loss, S(0, T), Hamming at the last step): max {bound(relu_gap, 1e-9)}; readouts equal: "
      f"{texts_ok}/{relu_static.n_frames}")
print(f"tau 0.1: S(0, T) at least {fixed(small_S, 2)}, Hamming at least {fixed(small_H, 2)}; tau 2: S(0, T) "
      f"{bound(large_S, 1e-2)}, Hamming {bound(large_H, 1e-2)}")

# %% tags=["hide-input"]
glue("relu_explorer_frames", str(relu_static.n_frames))
glue("relu_explorer_kb", f"{round((len(relu_static.sprite) * 4 / 3 + len(relu_static.html())) / 1e3, -1):.0f}")
_ = verified.record("explorer: every frame's test loss, S(0, T) and Hamming distance (and its readout) equal a "
                    "second computation", relu_gap < 1e-7 and texts_ok == relu_static.n_frames,
                    check=f"relu_batch.train_networks (the frames) vs relu_networks.gradient_descent + ntk + "
                          f"kernel_distance + activation_pattern on the same draws, {relu_static.n_frames} frames",
                    measured=f"max {bound(relu_gap, 1e-9)}, {texts_ok}/{relu_static.n_frames} readouts",
                    tolerance="1e-7", kind="same code")
_ = verified.record("explorer: in every alpha column the kernel and the partition move > 10 x farther at tau = 0.1 "
                    "than at tau = 2 (seed 0 of the explorer's task)",
                    small_S > 10 * large_S and small_H > 10 * large_H,
                    check="S(0, T) and Hamming at step 1000 over the 5 alphas of the grid",
                    measured=f"S: min {fixed(small_S, 2)} vs max {bound(large_S, 1e-2)}; Hamming: min "
                             f"{fixed(small_H, 2)} vs max {bound(large_H, 1e-2)}",
                    tolerance="ratio 10", kind="same code")

# %% [markdown]
# Run this notebook in Jupyter to interact with the explorer: its sliders retrain and redraw the network live over
# any $\tau \in [0.05, 4]$ and $\alpha \in [1/8, 8]$. In the rendered book the sliders under the figure move over the
# frames precomputed by the same drawing function, and the line under them gives $\delta$, its regime and the test
# loss, kernel distance and Hamming distance at the last step.

# %% tags=["hide-input"]
_ = record_results({"ode_rel_err": ode_err, "regime_err_over_bound": worst_ratio,
                    "a_rel_change_up_max": float(rel_a[:, 0].max()), "a_rel_change_bal_min": float(rel_a[:, 1].min()),
                    "a_rel_change_down_min": float(rel_a[:, 2].min()), "hamming_up_end": float(ham[-1, :, 0].mean()),
                    "hamming_bal_end": float(ham[-1, :, 1].mean()), "hamming_down_max": float(ham[:, :, 2].max()),
                    "t_early_up": float(np.median(t_early[:, 0])), "t_early_bal": float(np.median(t_early[:, 1])),
                    "fig1a_turn_small": float(np.median(turn[:, 0])), "fig1a_turn_large": float(np.median(turn[:, 1])),
                    "fig1a_kd_small": float(np.median(kd[:, 0])), "fig1a_kd_large": float(np.median(kd[:, 1])),
                    **verified.summary()})

# %% [markdown]
# ## What was verified
#
# The table is generated from one record per claim, made where the claim was checked. "Independent" rows compare the
# derived equations with torch autograd of the raw parameter flow (no markovlib function on that path); "same code"
# rows are measurements through markovlib's gradient descent, counted over seeds with a one-sided Wilson bound against
# `claim_rate`. The paper-scale Fig. 1(a) runs ($10^6$ steps at lr $10^{-4}$) are the same time as the defaults here;
# `papermill book/grq_relu_dynamics.ipynb out.ipynb -p f1_n_seeds 20 -p n_seeds 20` doubles the seeds.

# %% tags=["remove-cell"]
from markovlib.book.glue import summary

summary("grq_relu_dynamics")  # in Jupyter: "What this chapter shows" with this run's numbers (removed from the book)

# %% tags=["hide-input"]
verified.table()

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
# # Beyond Thm 3.1: zero crossings, the kernel's own dynamics, and the exact trajectories
#
# {doc}`grq_minimal_model` solves the single neuron $f(x) = a\,w^\top x$ in closed form and checks the implicit
# bias of {prf:ref}`grq-thm-3-1` on trajectories that never pass through $\beta = a w = 0$. This chapter takes up
# what {cite:t}`kunin2024richquick` leave in their appendix: App. A.4.4's remark that the mirror point
# $\beta^* - \alpha v$ "also works" for trajectories through the origin, where $a$ changes sign; the kernel's own
# dynamics $\dot M$ (App. A.3.1);
# {cite:t}`azulay2021implicit`'s Thm 2 as {prf:ref}`grq-thm-3-1` in another form (App. A.4.3); and the exact
# trajectories of Fig. 8. All four are derived here and checked against independent integrations. The first one
# holds, and extends beyond the paper's one-dimensional null space to any $X$: at a zero crossing of $a$ the flow
# ends at the mirror image of Thm 3.1's point.
#
# ## What this chapter shows
#
# 1. The null-space part of $w$ is frozen ({prf:ref}`grq-lem-null-frozen`), so the limit is known up to the sign
#    of $a_\infty$ ({eq}`grq-eq-limit`), on {glue:text}`n_flows` independent flows ([Sec. 1](#sec-grq-exact-dynamics-crossing)).
# 2. $a$ crosses zero at most once, for any $X$, and only if $L(\beta_0) > L(0)$
#    ({prf:ref}`grq-lem-one-crossing`): at most {glue:text}`max_crossings` per flow, none of the
#    {glue:text}`n_energy_draws` flows with $L(\beta_0) < L(0)$; a sign condition alone does not suffice
#    ({glue:text}`n_prone_nocross` of {glue:text}`n_prone` prone draws do not cross); the basin rule predicts
#    {glue:text}`iso_predicted` ([Sec. 1](#sec-grq-exact-dynamics-draws)).
# 3. Through a crossing, the flow ends at the minimizer of $\Psi_\delta$ with $-\beta_0$, for any $X$
#    ({prf:ref}`grq-rem-crossing`; on a one-dimensional null space this is App. A.4.4's mirror point
#    $\beta^* - \alpha v$): {glue:text}`count_flipped` crossing draws. Thm 3.1's closed form $\beta^* + \alpha v$
#    misses by more than `miss_min` in {glue:text}`count_missed` ({glue:text}`miss_range`), always by
#    $2|a_\infty|\,\lVert P_N w_0\rVert$ (to {glue:text}`miss_law_err`), and by {glue:text}`fig4_miss_range` on
#    the paper's Fig. 4 problem from $-\beta_0$ ([Sec. 2](#sec-grq-exact-dynamics-limits), [Sec. 3](#sec-grq-exact-dynamics-fig4)).
# 4. `flow_limit` returns $\beta(\infty)$ for any $X$ to {glue:text}`flow_limit_err` ({glue:text}`routes`)
#    ([Sec. 2](#sec-grq-exact-dynamics-limits)).
# 5. $\dot M$ ({prf:ref}`grq-prop-a-3-1`) matches finite differences to {glue:text}`mdot_err`. Upstream $M$
#    moves by at most {glue:text}`lazy_change` of $\lVert M(0)\rVert$ (lazy); downstream the direction term is
#    {glue:text}`down_ratio` times the norm term (delayed rich); balanced {glue:text}`bal_ratio` (rich)
#    ([Sec. 4](#sec-grq-exact-dynamics-kernel)).
# 6. Azulay et al.'s potential is $q_\delta$ minus a constant ({prf:ref}`grq-prop-a-4-3`, to
#    {glue:text}`azulay_const_err`), with the same minimizer (to {glue:text}`azulay_argmin_err`)
#    ([Sec. 5](#sec-grq-exact-dynamics-azulay)).
# 7. Fig. 8: the closed forms of {prf:ref}`grq-thm-a2` lie on independent integrations to {glue:text}`fig8_err`,
#    {glue:text}`fig8_crossings` of them through a zero of $a$ ([Sec. 6](#grq-fig-8)).
#
# (sec-grq-exact-dynamics-parameters)=
# ## Parameters and their ranges
#
# $\eta_a = \eta_w = 1$ for Thm 3.1 and its mirror form (`flow_limit` also takes unequal rates; the package tests
# check them). The table below the parameters gives each accepted range and its reason; the claims were checked on
# it at seeds 0 to 6 at the defaults and 7 to 9 at the edges, in runs made while the chapter was written (not stored
# in the book); the lemmas are proved for any draw, the counts hold at their stated rate.
# CI re-runs the chapter at the edges of these ranges:
# `papermill book/grq_exact_dynamics.ipynb out.ipynb -f book/ci_params/grq_exact_dynamics.yaml`.
#
# Fig. 8 takes any directions, $|\delta| \le 4$, $T \le 20$ and $\lVert\beta^*\rVert\,T \le
# \log(\text{tol}/(100\,\varepsilon))$ (15.3 at the tolerance $10^{-7}$): a start antiparallel to $\beta^*$
# with $\delta = 0$ runs on the stable manifold of the saddle at the origin (eigenvalues $\pm\lVert\beta^*\rVert$
# of the linearized flow), where rounding grows like $\varepsilon\, e^{\lVert\beta^*\rVert t}$ in the integration
# and in the closed form alike, so the validation refuses larger products. *Changed claims (review B):* Fig. 8 was
# claimed for any $\beta^* \in [-10, 10]^2$ and $T \le 20$, and failed at the antipode of $\beta^*$ (error
# $2.4 \cdot 10^{-4}$ at $\beta^* = (1, 1)$, $T = 20$); the product $\lVert\beta^*\rVert T$ is now bounded as
# above. The finite-difference error of $dM/dt$ prints as a bound at least 1.5 times the measured value (and at
# least $10^{-8}$, ten times its rounding floor) on a 1-2-3-5-7 ladder, below the tolerance, instead of a fixed
# $10^{-8}$ that it exceeds at `kernel_delta` 16.

# %% tags=["parameters"]
seed = 0  # seed of every random draw
families = [[1, 2], [1, 3], [2, 3], [2, 4]]  # data families as (n samples, d inputs): null spaces of dimension 1 and 2
n_draws = 12  # crossing-prone initializations per family (c^T beta0 < 0 and delta < 0)
n_control = 4  # initializations per family with L(beta0) < L(0), which cannot cross
n_white = 6  # crossing-prone draws on whitened data (X^T X / n a multiple of P_R) per family with n at least 2
delta_min = -4.0  # the crossing-prone draws have delta uniform in [delta_min, delta_max]
delta_max = -1.0  # upper end of that delta range (negative)
sv_min = 0.6  # the nonzero eigenvalues of X^T X / n are uniform in [sv_min, sv_max]
sv_max = 1.4  # upper end of that eigenvalue range
beta_norm_min = 0.5  # |beta_ls| and |beta0| are uniform in [beta_norm_min, beta_norm_max]
beta_norm_max = 1.5  # upper end of that norm range
T_limit = 1500.0  # horizon of the independent flows whose limits are compared
settle_tol = 1e-7  # a flow has settled when |beta(T) - beta(0.9 T)| is below this (the solver drifts by 1e-9)
limit_tol = 1e-6  # max |flow limit - prediction| of a confirmed draw
miss_min = 0.05  # fixed before the data: a closed form misses a flow when it is off by more than this
count_rate = 0.75  # fixed before the data: the one-sided Wilson lower end of each count must exceed this rate
count_family = 1  # claims tested with record_count on the same crossing draws (Bonferroni over them): one
fig4_x = [0.5, 1.0]  # the paper's Fig. 4 sample x
fig4_y = 1.1  # its label
fig4_beta0 = [-0.4, -0.05]  # minus the paper's Fig. 4 beta0, so that y x^T beta0 < 0
fig4_deltas = [-4.0, -2.0, -1.0, -0.5]  # the paper's downstream deltas, and -0.5 where a does not cross
kernel_delta = 8.0  # the kernel flows use delta in (-kernel_delta, 0, kernel_delta)
kernel_T = 20.0  # horizon of the kernel flows
fd_step = 4e-4  # step of the fourth-order central finite differences of M(t)
mdot_tol = 1e-7  # max |dM/dt formula - finite differences| relative to max |dM/dt|
lazy_change_max = 0.1  # fixed before the data: upstream, the change of M relative to |M(0)| stays below this
order_ratio = 10.0  # fixed before the data: same order means a ratio within this factor, dominance a ratio above it
azulay_deltas = [0.0, 0.5, 2.0, 8.0]  # delta values (at least 0) of Azulay et al.'s Thm 2
fig8_deltas = [-2.0, -1.0, 0.0, 1.0, 2.0]  # Fig. 8: downstream, balanced and upstream deltas
fig8_beta_star = [0.5, 0.5]  # Fig. 8: beta* (the authors' code; the caption's unit vector would leave the third row still)
fig8_beta0_angles = [1.5, -0.25, 0.25]  # Fig. 8: beta0 is the unit vector at these angles (units of pi), one row each
fig8_T = 10.0  # Fig. 8 horizon (the authors' code)
fig8_tol = 1e-7  # max |closed form - flow| of a(t) and w(t) in Fig. 8


# %%
import math

import numpy as np
from markovlib.book import params
from markovlib.richlazy import minimal_crossing
tol, ranged = "a positive tolerance", "the stated range of the random draws"
SPEC = params.declare(
    seed=params.Int(0, why="any seed; 0 to 9 were run while the chapter was written"),
    families=params.PairList(1, 6, why="the stated data families: n in [1, 3] samples, null spaces d - n in {1, 2}"),
    n_draws=params.Int(10, why="counts need 10 draws per family"),
    n_control=params.Int(1, why="at least one control draw per family for the energy claim"),
    n_white=params.Int(1, why="at least one whitened draw per family with n >= 2"),
    delta_min=params.Real(-4.0, -0.5, why=ranged + ": downstream, where a can cross zero"),
    delta_max=params.Real(-4.0, -0.5, why=ranged),
    sv_min=params.Real(0.5, 1.5, why=ranged + " (nonzero eigenvalues of X^T X / n)"),
    sv_max=params.Real(0.5, 1.5, why=ranged),
    beta_norm_min=params.Real(0.5, 1.5, why=ranged + " (|beta_ls| and |beta0|)"),
    beta_norm_max=params.Real(0.5, 1.5, why=ranged),
    T_limit=params.Real(1500.0, 1e5, why="the slowest flows of the stated range settle by 1500"),
    settle_tol=params.Real(0.0, math.inf, closed=False, why=tol),
    limit_tol=params.Real(0.0, math.inf, closed=False, why=tol),
    miss_min=params.Real(0.0, math.inf, closed=False, why="a positive distance"),
    count_rate=params.Real(0.5, 1.0, closed=False, why="a count claims a majority at least"),
    count_family=params.Int(1, why="Bonferroni over at least one claim"),
    fig4_x=params.Pair(-10.0, 10.0, why="a sample of moderate size"),
    fig4_y=params.Real(-10.0, 10.0, why="a label of moderate size"),
    fig4_beta0=params.Pair(-10.0, 10.0, why="a start of moderate size"),
    fig4_deltas=params.RealList(-8.0, 0.0, why="downstream deltas, where a can cross zero"),
    kernel_delta=params.Real(8.0, 16.0, why="the stated range of the kernel claims"),
    kernel_T=params.Real(10.0, 40.0, why="long enough for the regimes to show, short enough for dense output"),
    fd_step=params.Real(2e-4, 5e-4, why="truncation (h rate)^4 and rounding 1e-13 / h both small"),
    mdot_tol=params.Real(0.0, math.inf, closed=False, why=tol),
    lazy_change_max=params.Real(0.0, 1.0, closed=False, why="a change below the size of M(0)"),
    order_ratio=params.Real(2.0, 100.0, why="'same order' and 'dominates' need a factor of 2 to 100"),
    azulay_deltas=params.RealList(0.0, 20.0, why="Azulay et al.'s Thm 2 needs delta >= 0"),
    fig8_deltas=params.RealList(-4.0, 4.0, why="Fig. 8 is checked for |delta| <= 4"),
    fig8_beta_star=params.Pair(-10.0, 10.0, why="a target of moderate size (its product with fig8_T is bounded)"),
    fig8_beta0_angles=params.RealList(-2.0, 2.0, why="angles in units of pi"),
    fig8_T=params.Real(1.0, 20.0, why="Fig. 8 is checked for T <= 20"),
    fig8_tol=params.Real(1e-9, 1e-5, why="resolvable by the integration and the closed form"),
    require=[
        ("families hold integer pairs (n, d) with n in [1, 3] and d - n in {1, 2}", lambda v: all(
            n == int(n) and d == int(d) and 1 <= n <= 3 and d - n in (1, 2) for n, d in v["families"]), ranged),
        ("n_draws * len(families) >= minimal_crossing.crossings_needed(count_rate, count_family)", lambda v: v["n_draws"]
         * len(v["families"]) >= minimal_crossing.crossings_needed(v["count_rate"], v["count_family"]),
         "a count over fewer crossing draws could not pass even if every draw agreed"),
        ("delta_min <= delta_max, sv_min <= sv_max and beta_norm_min <= beta_norm_max", lambda v: all(
            v[k + "_min"] <= v[k + "_max"] for k in ("delta", "sv", "beta_norm")), "ranges"),
        ("fig4_y fig4_x^T fig4_beta0 < 0 (so all three nonzero)", lambda v: v["fig4_y"] * np.dot(
            v["fig4_x"], v["fig4_beta0"]) < 0, "a crossing needs L(beta0) > L(0)"),
        ("fig8_deltas hold a negative value, 0 and a positive value", lambda v: min(v["fig8_deltas"]) < 0
         < max(v["fig8_deltas"]) and 0.0 in v["fig8_deltas"], "downstream, balanced and upstream"),
        ("fig8_beta_star nonzero", lambda v: v["fig8_beta_star"] != (0.0, 0.0), "a target"),
        ("|fig8_beta_star| * fig8_T <= log(fig8_tol / (100 eps))", lambda v: math.hypot(*v["fig8_beta_star"])
         * v["fig8_T"] <= math.log(v["fig8_tol"] / (100 * np.finfo(float).eps)),
         "rounding grows like eps exp(|beta*| t) near the antipode of beta*"),
    ],
)
globals().update(SPEC.check(globals()))
SPEC.table()

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
from scipy.integrate import solve_ivp
from scipy.optimize import minimize

from markovlib.book import formatting, plotting
from markovlib.book.formatting import bound, fixed, fraction
from markovlib.book.glue import glue
from markovlib.book.report import Verification
from markovlib.book.sweep import record_results
from markovlib.richlazy import minimal_exact, minimal_model
from markovlib.richlazy.minimal_crossing import max_error
from markovlib.richlazy.minimal_limits import init_from_product

plotting.use_style()
verified = Verification()  # one record per claim; the final cell prints the generated table
families = [(int(n_), int(d_)) for n_, d_ in families]
ranges = dict(delta_range=(delta_min, delta_max), sv_range=(sv_min, sv_max),
              beta_norm_range=(beta_norm_min, beta_norm_max))

# %% [markdown]
# Every check below compares with an independent integration: many single neurons at once, by scipy's DOP853, with
# events at the zeros of each $a$.

# %%

def batch_flow(a0, W0, Cs, cs, T, n_eval=2001, rtol=1e-11, atol=1e-13, dense=False):
    """Independent reference (do not replace with markovlib): the gradient flow of many single neurons at once,
    da/dt = -w^T g, dw/dt = -a g, g = C (a w) - c, by scipy's DOP853; events count the zero crossings of each a."""
    N, d = W0.shape

    def rhs(_, z):
        a, W = z[:N], z[N:].reshape(N, d)
        g = np.einsum("nij,nj->ni", Cs, a[:, None] * W) - cs
        return np.concatenate([-np.sum(W * g, axis=1), (-a[:, None] * g).ravel()])

    events = [lambda _, z, i=i: z[i] for i in range(N)]
    sol = solve_ivp(rhs, (0.0, T), np.concatenate([a0, W0.ravel()]), method="DOP853", rtol=rtol, atol=atol,
                    t_eval=np.linspace(0.0, T, n_eval), events=events, dense_output=dense)
    assert sol.success, sol.message
    return sol, sol.y[:N], sol.y[N:].reshape(N, d, -1), np.array([te.size for te in sol.t_events])

# %% [markdown]
# (sec-grq-exact-dynamics-crossing)=
# ## 1. Thm 3.1 through a zero crossing of $a$
#
# Take $\eta_a = \eta_w = 1$, any data $X \in \mathbb R^{n\times d}$, $y \in \mathbb R^n$ with $X^\top y \ne 0$,
# $C = X^\top X/n$, $c = X^\top y/n$, and the residual gradient $g = \nabla_\beta L = C\beta - c$. Split
# $\mathbb R^d$ into the row space of $X$ (projector $P_R$) and its null space ($P_N = I - P_R$); $\beta_{ls}$ is the
# minimum-norm least-squares solution, $C\beta_{ls} = c$. Unequal rates reduce to this case: with
# $\tilde a = a/\sqrt{\eta_a}$ and $\tilde w = w/\sqrt{\eta_w}$, $(\tilde a, \tilde w)$ follow the flow with unit
# rates on the data $(\sqrt{\eta_a\eta_w}\,X, y)$.
#
# ```{prf:lemma} The null-space part of $w$ is frozen (this book's)
# :label: grq-lem-null-frozen
#
# Along the gradient flow, $P_N w(t) = P_N w_0$ for all $t$. Hence
# $\delta_R = a^2 - \lVert P_R w\rVert^2 = \delta + \lVert P_N w_0\rVert^2$ is conserved as well.
# ```
#
# ```{prf:proof}
# $\dot w = -a\,g$ and $g = X^\top(X\beta - y)/n$ lies in the row space, so $P_N\dot w = 0$. The second statement
# follows from $\lVert w\rVert^2 = \lVert P_R w\rVert^2 + \lVert P_N w\rVert^2$ and the conservation of $\delta$
# ({prf:ref}`grq-prop-a1`).
# ```
#
# ```{prf:proposition} The limit up to one sign (this book's)
# :label: grq-prop-limit-sign
#
# If the flow converges to a least-squares solution, then with $\sigma = \operatorname{sign} a(\infty)$
#
# $$
# \beta(\infty) = \beta_{ls} + \sigma\,|a_\infty|\,P_N w_0, \qquad
# a_\infty^2 = \frac{\delta_R + \sqrt{\delta_R^2 + 4\lVert\beta_{ls}\rVert^2}}{2}.
# $$ (grq-eq-limit)
# ```
#
# ```{prf:proof}
# At a least-squares solution $g = 0$, so $P_R\beta(\infty) = \beta_{ls}$. By {prf:ref}`grq-lem-null-frozen`,
# $P_N\beta = a\,P_N w = a\,P_N w_0$. Then $P_R w_\infty = \beta_{ls}/a_\infty$, and the conserved $\delta_R$ gives
# $a_\infty^2 - \lVert\beta_{ls}\rVert^2/a_\infty^2 = \delta_R$, whose positive root is the one displayed.
# ```
#
# So everything except the sign of $a$ at the end is decided, for any $X$, without Thm 3.1. Now compare with
# {prf:ref}`grq-thm-3-1`. With $Q(\beta) = q_\delta(\lVert\beta\rVert)$ and $q_\delta'(r) = \tfrac32\lVert w\rVert$
# (see {eq}`grq-eq-q`), and with $\hat\beta = \operatorname{sign}(a)\,\hat w$,
#
# $$
# \nabla Q(\beta) = q_\delta'(\lVert\beta\rVert)\,\hat\beta = \tfrac32\,\operatorname{sign}(a)\,w .
# $$
#
# While $a \ne 0$, $\frac{d}{dt}\nabla Q = -\tfrac32|a|\,g$ lies in the row space. This is the time-warped mirror
# flow of App. A.4.2. The optimality condition of $\min \Psi_\delta$ over the least-squares solutions is
# $P_N\big(\nabla Q(\beta_\infty) - \nabla Q(\beta_0)\big) = 0$, that is,
# $\tfrac32\big(\operatorname{sign} a_\infty - \operatorname{sign} a_0\big)P_N w_0 = 0$. It holds if and only if $a$
# keeps its sign (or $P_N w_0 = 0$). If $a$ changes sign, $\nabla Q$ jumps at $\beta = 0$: $\hat\beta$ flips
# while $\lVert w\rVert$ stays at $\sqrt{-\delta} > 0$, so $q_\delta'(0^+) \ne 0$ and $Q$ has a cone point there. The
# condition that holds instead is $P_N\big(\nabla Q(\beta_\infty) + \nabla Q(\beta_0)\big) = 0$. Since $Q$ is even,
# this is the optimality condition of $\Psi_\delta$ with $\beta_0$ replaced by $-\beta_0$, i.e. of
# $q_\delta(\lVert\beta\rVert) + q_\delta'(\lVert\beta_0\rVert)\,\hat\beta_0^\top\beta$. Both problems are strictly
# convex, so the limit is their unique minimizer. On a one-dimensional null space $\{\beta_{ls} + \alpha v\}$, the
# closed form of App. A.4.4 is $\alpha = k\,|a_\infty|$ with $k = \lVert w_0\rVert\,\hat\beta_0^\top v$. A crossing
# flips the sign of $\alpha$, so the flow ends at $\beta_{ls} - \alpha v$ (the point that App. A.4.4 remarks
# "also works" through the origin), at distance $2|\alpha|$ from the closed form.
#
# Which sign does $a$ end with? A zero of $a$ is a zero of $\beta$, so the energy decides a lot:
#
# ```{prf:lemma} At most one zero crossing, for any data (this book's; extends the paper's Lemma A.1)
# :label: grq-lem-one-crossing
#
# This extends {prf:ref}`grq-lem-a1` beyond whitened data. For any $X$ with $X^\top y \ne 0$ and any rates, $a(t)$ changes sign at most once along the flow. It changes sign
# only if $L(\beta_0) > L(0) = \lVert y\rVert^2/(2n)$, i.e. $\beta_0^\top(C\beta_0/2 - c) > 0$ (for one sample,
# $(x^\top\beta_0)(x^\top\beta_0 - 2y) > 0$), and $\delta_R < 0$. Where $C$ is a multiple of $P_R$ (one sample,
# or whitened data), it changes sign exactly when the basin coefficient $c_1$ of {prf:ref}`grq-prop-a-2-5`,
# evaluated for $(a_0, P_R w_0)$ and $\beta^* = \beta_{ls}$, has the sign opposite to $a_0$.
# ```
#
# ```{prf:proof}
# $a(t_1) = 0$ gives $\beta(t_1) = 0$ and $L = L(0)$. The point $(0, w(t_1))$ is not an equilibrium, since an
# equilibrium is not reached in finite time. So $\dot a(t_1) = \eta_a w^\top c \ne 0$, and
# $\dot L = -\eta_a(w^\top c)^2 < 0$ there. Since $L$ never increases, $L(\beta_0) > L(0) > L(t)$ for all
# $t > t_1$. Hence $\beta(t) \ne 0$ after $t_1$, and there is no second zero. If $\delta_R \ge 0$, then
# $a^2 \ge \lVert P_R w\rVert^2$, and $a = 0$ would put the row-space pair $(a, P_R w)$ at its origin, an
# equilibrium of the row-space flow. That flow is closed by {prf:ref}`grq-lem-null-frozen`, since
# $g = C(a P_R w) - c$. For $C = \lambda P_R$, the row-space flow is the whitened flow with $\beta^* = \beta_{ls}$,
# slowed by the factor $\lambda$, and {prf:ref}`grq-prop-a-2-5` applies.
# ```
#
# For an anisotropic $C$ with $\delta_R < 0$ and $L(\beta_0) > L(0)$, nothing here decides whether $a$ crosses
# zero. `flow_limit` then integrates the flow only until $L(\beta) < L(0)$, with a margin of $10^{-6}$ times
# $L(0) - \min L$ for the solver's error. After that the sign cannot change, and {eq}`grq-eq-limit` finishes the job.

# %% [markdown]
# (sec-grq-exact-dynamics-draws)=
# ### The random draws
#
# The checks use random data of four families (one and two samples; null spaces of dimension 1 and 2; the range in
# the parameters cell). On each family, `n_draws` initializations are prone to cross: $c^\top\beta_0 < 0$ (so
# $L(\beta_0) > L(0)$), $\delta \in$ [`delta_min`, `delta_max`] and a random sign of $a_0$. Another `n_control` have
# $L(\beta_0) < L(0)$. Every draw is integrated independently (scipy DOP853, rtol $10^{-11}$, events at the zeros
# of each $a$) to `T_limit`. Each limit is compared with `implicit_bias_limit` at $\pm\beta_0$, with
# {eq}`grq-eq-limit` and with `flow_limit`. The two counts over crossing draws can only pass with enough of them: with
# $k = n$ the one-sided Wilson lower end is $n/(n + z^2)$, so at `count_rate` $0.75$ and $z = 1.645$ (one-sided 95 %,
# one count) a count needs $n \ge 9$ crossing draws. The validation cell requires `n_draws` times the number of
# families to reach that number, and where the $\delta$ range gives fewer crossings (for $\delta$ near $-0.5$ many
# draws have $\delta_R \ge 0$ and cannot cross), the chapter tops up with further crossing-prone draws, the families
# in turn, until it has them. Finally, for the families with $n \ge 2$, `n_white` crossing-prone draws on whitened
# data ($X^\top X/n = \lambda P_R$) test the other exact case of {prf:ref}`grq-lem-one-crossing`.
#
# The next cell draws them (`minimal_crossing.draw_families`, integrated by the independent `batch_flow` above) and
# adds the package's predictions to each draw (`minimal_crossing.predict`: Thm 3.1 at $\pm\beta_0$,
# {eq}`grq-eq-limit`, `flow_limit` and the route by which `limit_sign` decided).

# %%
rows, n_topped = minimal_crossing.draw_families(
    np.random.default_rng(seed), families, n_draws, n_control, batch_flow, T_limit, settle_tol,
    top_up_rng=np.random.default_rng([seed, 2]),  # the top-up draws have their own stream
    crossings=minimal_crossing.crossings_needed(count_rate, count_family), **ranges)
for r in rows:
    minimal_crossing.predict(r)
n_flows = len(rows)
settled = [r for r in rows if r["settled"]]
cross = [r for r in rows if r["crossings"] == 1]
print(f"{n_flows} flows on {len(families)} data families {families} ({n_topped} topped up), {len(settled)} settled "
      f"by T = {T_limit:g} (|beta(T) - beta(0.9 T)| < {settle_tol:.0e})")

# %% [markdown]
# The frozen null part, the number of crossings per flow, the energy condition and the sign condition, counted over
# all draws:

# %%
max_null_drift = max(r["null_drift"] for r in rows)
max_crossings = max(r["crossings"] for r in rows)
energy_rows = [r for r in rows if r["dL0"] < 0]
energy_crossings = sum(r["crossings"] > 0 for r in energy_rows)
prone = [r for r in rows if r["prone"]]
prone_nocross = [r for r in prone if r["crossings"] == 0]
print(f"null-space part of w: max |P_N w(t) - P_N w0| {bound(max_null_drift, 1e-10)}")
print(f"zero crossings of a per flow: max {max_crossings}; flows that cross: {len(cross)}")
print(f"flows with L(beta0) < L(0): {len(energy_rows)}, of which cross: {energy_crossings}")
print(f"crossing-prone draws (c^T beta0 < 0, delta in [{delta_min:g}, {delta_max:g}]): {len(prone) - len(prone_nocross)} "
      f"of {len(prone)} cross; of those that do not, delta_R >= 0 for {sum(r['delta_R'] >= 0 for r in prone_nocross)}")

# %% [markdown]
# Where $X^\top X/n$ is a multiple of $P_R$ the basin rule of {prf:ref}`grq-prop-a-2-5` on the row space decides
# the crossing. One sample is such a case; for the families with $n \ge 2$, `n_white` crossing-prone draws on
# whitened data (their own random stream) test the other.

# %%
iso = [r for r in rows if r["n"] == 1]  # one sample: X^T X / n is a multiple of the projector onto its row space
iso_agree = sum(minimal_crossing.basin_predicts_crossing(r) == (r["crossings"] == 1) for r in iso)
rng_white = np.random.default_rng([seed, 3])  # its own stream: the draws above do not move
white = [r for fam, (n, d) in enumerate(families) if n >= 2
         for r in minimal_crossing.draw_family(rng_white, n, d, n_white, 0, batch_flow, T_limit, settle_tol,
                                               family=fam, whitened=True, **ranges)]
white_agree = sum(minimal_crossing.basin_predicts_crossing(r) == (r["crossings"] == 1) for r in white)
white_C_err = max((max_error(r["C"], np.linalg.eigvalsh(r["C"]).max() * (np.eye(r["d"]) - r["N"] @ r["N"].T))
                   for r in white), default=0.0)
print(f"one-sample families: crossing predicted by the basin rule on the row space = observed for "
      f"{fraction(iso_agree, len(iso))} flows")
print(f"whitened data with n >= 2 (X^T X / n = lambda P_R to {bound(white_C_err, 1e-12)}): predicted = observed for "
      f"{fraction(white_agree, len(white))} crossing-prone flows ({sum(r['crossings'] == 1 for r in white)} cross)")

# %% tags=["hide-input"]
_ = verified.record("Lemma (frozen null part): P_N w(t) = P_N w0 along the flow, any X", max_null_drift < 1e-8,
                    check=f"{n_flows} independent flows (scipy DOP853) on {len(families)} random data families, t in [0, {T_limit:g}]",
                    measured=bound(max_null_drift, 1e-10), tolerance="1e-8", kind="independent")
_ = verified.record("Lemma (one crossing): a crosses zero at most once, never when L(beta0) < L(0)",
                    max_crossings <= 1 and energy_crossings == 0 and len(energy_rows) > 0,
                    check=f"zero events of a along {n_flows} independent flows; {len(energy_rows)} with L(beta0) < L(0)",
                    measured=f"max {max_crossings} per flow; {energy_crossings} of {len(energy_rows)} with L(beta0) < L(0) cross",
                    tolerance="1 per flow; 0", kind="independent")
_ = verified.record("Lemma (one crossing): for one sample the basin rule on the row space predicts each crossing",
                    iso_agree == len(iso) and len(iso) > 0,
                    check=f"sign(c1) a0 < 0 (basin_margin of (a0, P_R w0), beta* = beta_ls) vs zero events, {len(iso)} flows",
                    measured=fraction(iso_agree, len(iso)), tolerance="all", kind="independent")
if white:
    _ = verified.record("Lemma (one crossing): for whitened data (n >= 2) the basin rule on the row space predicts each crossing",
                        white_agree == len(white) and white_C_err < 1e-10,
                        check=f"X^T X / n = lambda P_R, {len(white)} crossing-prone flows of the families with n >= 2; "
                              f"sign(c1) a0 < 0 vs zero events",
                        measured=f"{fraction(white_agree, len(white))} ({sum(r['crossings'] == 1 for r in white)} cross)",
                        tolerance="all", kind="independent")
_ = glue("n_flows", str(n_flows))
_ = glue("max_crossings", str(max_crossings))
_ = glue("n_energy_draws", str(len(energy_rows)))
_ = glue("n_prone", str(len(prone)))
_ = glue("n_prone_nocross", str(len(prone_nocross)))
_ = glue("iso_predicted", f"{fraction(iso_agree, len(iso))} one-sample flows"
                 + (f" and {fraction(white_agree, len(white))} whitened flows with two or three samples" if white else ""))

# %% [markdown]
# (sec-grq-exact-dynamics-limits)=
# ## 2. Where the flows end
#
# For each flow that crosses, the table below compares the independent limit with Thm 3.1 as
# stated (`implicit_bias_limit` at $\beta_0$, the A.4.4 closed form) and with its mirror form (at $-\beta_0$, the
# point App. A.4.4 remarks on). For
# each flow that does not cross, it compares with Thm 3.1 as stated. {eq}`grq-eq-limit` and `flow_limit` are
# compared on every settled flow. A crossing draw counts as confirmed when its flow has settled and ends within
# `limit_tol` of the mirror minimizer. It counts as missed by the A.4.4 closed form when that form is off by
# more than `miss_min`; how far it misses is no matter of chance: by {eq}`grq-eq-limit` it is $2|a_\infty|\,P_N w_0$,
# checked draw by draw (so the share of draws missed by more than `miss_min` describes the draws, not the theorem). The
# count of confirmed draws carries a one-sided Wilson bound against `count_rate` (`count_family` is 1: one count).

# %%
cross_settled = [r for r in cross if r["settled"]]
confirmed = sum(max_error(r["beta_T"], r["psi_flip"]) < limit_tol for r in cross_settled)
misses = np.array([max_error(r["beta_T"], r["psi"]) for r in cross])
missed = int(np.sum(misses > miss_min))
miss_law_err = max((abs(m - r["miss_pred"]) for m, r in zip(misses, cross) if r["settled"]), default=0.0)
nocross_settled = [r for r in settled if r["crossings"] == 0]
thm_err = max((max_error(r["beta_T"], r["psi"]) for r in nocross_settled), default=0.0)
closed_err = max(max_error(r["beta_T"], r["closed"]) for r in settled)
fl_err = max(max_error(r["beta_T"], r["flow_limit"]) for r in settled)
sign_agree = sum(r["route"][0] == r["sign_end"] for r in rows)
routes = {}
for r in rows:
    routes[r["route"][1]] = routes.get(r["route"][1], 0) + 1
print(f"closed form (grq-eq-limit) with the observed sign vs flow, all settled flows: {bound(closed_err, 1e-8)}")
print(f"flow_limit vs flow, all settled flows: {bound(fl_err, 1e-8)}; sign of a(inf) from limit_sign = observed for "
      f"{fraction(sign_agree, n_flows)}; routes: " + ", ".join(f"{k} {v}" for k, v in sorted(routes.items())))

# %% [markdown]
# Family by family: the crossing flows against the mirror minimizer and against the A.4.4 form, the others against
# Thm 3.1 as stated.

# %%
print(f"{'family':>8}{'flows':>7}{'cross':>7}{'max |flow - Psi(-b0)|, cross':>31}{'A.4.4 miss, cross':>20}"
      f"{'max |flow - Psi(b0)|, no cross':>32}")
for fam, (n, d) in enumerate(families):
    fr = [r for r in settled if r["family"] == fam]
    fc = [r for r in fr if r["crossings"] == 1]
    fn = [r for r in fr if r["crossings"] == 0]
    e_flip = bound(max((max_error(r["beta_T"], r["psi_flip"]) for r in fc), default=0.0), 1e-8)
    fm = [max_error(r["beta_T"], r["psi"]) for r in fc]
    miss = f"{fixed(min(fm), 2)} to {fixed(max(fm), 2)}" if fc else "-"
    e_thm = bound(max((max_error(r["beta_T"], r["psi"]) for r in fn), default=0.0), 1e-8)
    print(f"{f'{n} x {d}':>8}{len(fr):>7}{len(fc):>7}{e_flip:>31}{miss:>20}{e_thm:>32}")

# %% tags=["hide-input"]
_ = verified.record_count("Remark (crossing): crossing flows end at argmin Psi_delta with -beta0", confirmed,
                          len(cross), rate=count_rate, unit="crossing draws", family=count_family,
                          check=f"independent flows to T = {T_limit:g} vs implicit_bias_limit(X, y, -beta0, delta), "
                                f"within {limit_tol:.0e} and settled", kind="independent")
_ = verified.record("Remark (crossing): the A.4.4 closed form misses each crossing flow by 2 |a_inf| |P_N w0|",
                    miss_law_err < limit_tol and len(cross_settled) > 0,
                    check=f"|flow limit - implicit_bias_limit(X, y, beta0, delta)| (max norm) vs 2 |a_inf| max|P_N w0| "
                          f"from (grq-eq-limit), {len(cross_settled)} settled crossing draws; {missed} of them missed by "
                          f"more than {miss_min:g}",
                    measured=bound(miss_law_err, 1e-8), tolerance=f"{limit_tol:.0e}", kind="independent")
_ = verified.record("Thm 3.1 as stated: flows that do not cross end at argmin Psi_delta",
                    thm_err < limit_tol and len(nocross_settled) > 0,
                    check=f"{len(nocross_settled)} settled flows without a crossing vs implicit_bias_limit(X, y, beta0, delta)",
                    measured=bound(thm_err, 1e-8), tolerance=f"{limit_tol:.0e}", kind="independent")
_ = verified.record("Prop. (limit up to a sign): beta(inf) = beta_ls + sign(a_inf) |a_inf| P_N w0",
                    closed_err < limit_tol and len(settled) >= 0.9 * n_flows,
                    check=f"{len(settled)} of {n_flows} flows settled; the closed form with the observed sign of a(T)",
                    measured=bound(closed_err, 1e-8), tolerance=f"{limit_tol:.0e}", kind="independent")
_ = verified.record("flow_limit = the independent flow limit, crossing or not, for general X",
                    fl_err < limit_tol and sign_agree == n_flows,
                    check="routes: " + ", ".join(f"{k} {v}" for k, v in sorted(routes.items()))
                          + f"; limit_sign vs sign a(T) on all {n_flows}",
                    measured=f"{bound(fl_err, 1e-8)}; signs {fraction(sign_agree, n_flows)}",
                    tolerance=f"{limit_tol:.0e}; all", kind="independent")
_ = glue("count_flipped", f"{fraction(confirmed, len(cross))}")
_ = glue("count_missed", f"{fraction(missed, len(cross))}")
_ = glue("miss_law_err", bound(miss_law_err, 1e-8))
_missed = misses[misses > miss_min]
_ = glue("miss_range", (f"{fixed(_missed.min(), 2)} to {fixed(_missed.max(), 2)}" if _missed.size else "-")
                + (f"; the other {misses.size - _missed.size} by at most {fixed(misses[misses <= miss_min].max(), 3)}"
                   if _missed.size < misses.size else ""))
_ = glue("flow_limit_err", bound(fl_err, 1e-8))
_ = glue("routes", ", ".join(f"{k}: {v} draws" for k, v in sorted(routes.items())))

# %% [markdown]
# (sec-grq-exact-dynamics-fig4)=
# ## 3. The paper's Fig. 4 problem, started from $-\beta_0$
#
# The one-sample problem of Fig. 4 ($x = (0.5, 1)$, $y = 1.1$) has a one-dimensional null space, spanned by $v$.
# The A.4.4 closed form is written out here: $\beta = \beta^* + \alpha v$ with $\alpha = k\,|a_\infty|$,
# $k = \lVert w_0\rVert\,\hat\beta_0^\top v$, and $a_\infty^2 = \kappa + \sqrt{\kappa^2 + \lVert\beta^*\rVert^2}$,
# $\kappa = (k^2 + \delta)/2$ (the first-order condition of $\Psi_\delta$ along the line, solved for $\alpha$; the
# same expression the authors' public code evaluates). Started from `fig4_beta0` (minus the paper's $\beta_0$, so
# $y\,x^\top\beta_0 < 0$), the flows at the paper's downstream $\delta$ pass through the origin and end at
# $\beta^* - \alpha v$, as App. A.4.4 remarks. At $\delta = -0.5$ the row-space $\delta_R$ is positive, and $a$ keeps its sign.

# %%
x4, b04 = np.array(fig4_x), np.array(fig4_beta0)
X4, y4 = x4[None, :], np.array([fig4_y])
bstar4 = fig4_y * x4 / (x4 @ x4)
v4 = np.sign(fig4_y) * np.array([-x4[1], x4[0]]) / np.linalg.norm(x4)


def a44_closed_form(beta0, delta):
    """Independent reference: App. A.4.4 in closed form (written out here, independent of markovlib): beta* + alpha v."""
    r0 = np.linalg.norm(beta0)
    w0_norm = np.sqrt((np.hypot(delta, 2 * r0) - delta) / 2)
    k = w0_norm * (beta0 @ v4) / r0
    kappa = (k**2 + delta) / 2
    return bstar4 + k * np.sqrt(kappa + np.hypot(kappa, np.linalg.norm(bstar4))) * v4

# %% [markdown]
# The flows from `fig4_beta0` at each $\delta$ of `fig4_deltas`, integrated independently, against the A.4.4 form
# and its mirror image $\beta^* - \alpha v$:

# %%
inits4 = [init_from_product(b04, dl) for dl in fig4_deltas]
sol4, a4, W4, cross4 = batch_flow(np.array([i[0] for i in inits4]), np.array([i[1] for i in inits4]),
                                  np.array([X4.T @ X4] * len(fig4_deltas)), np.array([X4[0] * fig4_y] * len(fig4_deltas)),
                                  T_limit, n_eval=6001)
beta4 = a4[:, None, :] * W4
print(f"{'delta':>6}{'crosses':>9}{'A.4.4 form':>20}{'flip: beta* - alpha v':>24}{'flow limit':>20}{'miss':>7}"
      f"{'|flow - flip|':>15}{'|A.4.4 - Psi|':>15}")
fig4_miss, fig4_flip_err, a44_vs_psi = [], 0.0, 0.0
for j, dl in enumerate(fig4_deltas):
    form = a44_closed_form(b04, dl)
    flip = 2 * bstar4 - form  # beta* - alpha v
    end = beta4[j, :, -1]
    pred = flip if cross4[j] else form
    a44_vs_psi = max(a44_vs_psi, max_error(form, minimal_exact.implicit_bias_limit(X4, y4, b04, dl)))
    fig4_flip_err = max(fig4_flip_err, max_error(end, pred))
    miss = float(np.linalg.norm(end - form))
    if cross4[j]:
        fig4_miss.append(miss)
    print(f"{dl:>6g}{int(cross4[j]):>9}   ({fixed(form[0], 3)}, {fixed(form[1], 3)})   ({fixed(flip[0], 3)}, "
          f"{fixed(flip[1], 3)})   ({fixed(end[0], 3)}, {fixed(end[1], 3)}){fixed(miss, 2):>7}"
          f"{bound(max_error(end, pred), 1e-8):>15}{bound(a44_vs_psi, 1e-12):>15}")

# %% tags=["hide-input"]
_ = verified.record("App. A.4.4 closed form = implicit_bias_limit (the authors' formula is argmin Psi_delta)",
                    a44_vs_psi < 1e-10, check=f"Fig. 4 problem from fig4_beta0 at delta in {fig4_deltas}",
                    measured=bound(a44_vs_psi, 1e-12), tolerance="1e-10", kind="independent")
_ = verified.record("Remark (crossing), Fig. 4 problem: crossing flows end at beta* - alpha v, the others at beta* + alpha v",
                    fig4_flip_err < limit_tol and len(fig4_miss) > 0,
                    check=f"independent flows to T = {T_limit:g} from fig4_beta0; {len(fig4_miss)} of {len(fig4_deltas)} cross",
                    measured=bound(fig4_flip_err, 1e-8), tolerance=f"{limit_tol:.0e}", kind="independent")
_ = glue("fig4_miss_range", f"{fixed(min(fig4_miss), 2)} to {fixed(max(fig4_miss), 2)}")

# %% [markdown]
# The figure shows, left, the Fig. 4 problem in function space. The flows from $-\beta_0$ pass through the
# origin; open circles mark the A.4.4 closed form, filled ones the mirror limit (labelled "corrected" in the
# plot). On the right, every random
# draw is placed by its distance to the two predictions. Crossing flows sit on the mirror one and far from Thm
# 3.1 as stated; the others do the opposite.

# %%
fig, (ax_l, ax_r) = plt.subplots(1, 2, figsize=(14, 6), layout="constrained")
cmap = plt.get_cmap("BrBG")
line = bstar4[None, :] + np.linspace(-3.5, 3.5, 2)[:, None] * v4[None, :]
ax_l.plot(line[:, 0], line[:, 1], color=plotting.GLOBAL, lw=4, alpha=0.5, label="interpolants $x^\\top\\beta = y$")
for j, dl in enumerate(fig4_deltas):
    col = cmap(0.35 - 0.3 * abs(dl) / max(abs(min(fig4_deltas)), 1e-8))
    ax_l.plot(beta4[j, 0], beta4[j, 1], color=col, lw=2.5, label=f"flow, $\\delta = {dl:g}$"
              + (" (a crosses 0)" if cross4[j] else ""))
    form = a44_closed_form(b04, dl)
    ax_l.scatter(*form, s=90, facecolor="none", edgecolor=col, lw=2, zorder=5)
    ax_l.scatter(*(2 * bstar4 - form if cross4[j] else form), s=40, color=col, edgecolor="k", zorder=6)
ax_l.scatter(*b04, color="0.5", s=80, zorder=6, label="$\\beta_0$")
ax_l.scatter([0], [0], marker="+", color="k", s=120, zorder=6, label="origin ($a = 0$)")
ax_l.scatter([], [], s=90, facecolor="none", edgecolor="k", label="A.4.4 closed form (Thm 3.1)")
ax_l.scatter([], [], s=40, color="k", label="corrected: $\\Psi_\\delta$ with $-\\beta_0$")
ax_l.set_xlabel("$\\beta_1$")
ax_l.set_ylabel("$\\beta_2$")
ax_l.set_aspect("equal")
ax_l.set_title("Fig. 4 problem from $-\\beta_0$: flows through the origin")
ax_l.legend(fontsize=8, loc="lower left")
for r in rows:
    e1 = max(max_error(r["beta_T"], r["psi"]), 1e-13)
    e2 = max(max_error(r["beta_T"], r["psi_flip"]), 1e-13)
    ax_r.scatter(e1, e2, color=plotting.LOCAL if r["crossings"] else plotting.MAXIMA, s=25, alpha=0.8)
ax_r.scatter([], [], color=plotting.LOCAL, label="a crosses zero")
ax_r.scatter([], [], color=plotting.MAXIMA, label="a keeps its sign")
ax_r.set_xscale("log")
ax_r.set_yscale("log")
ax_r.set_xlabel("|flow limit - argmin $\\Psi_\\delta(\\cdot\\,; \\beta_0)$| (Thm 3.1 as stated)")
ax_r.set_ylabel("|flow limit - argmin $\\Psi_\\delta(\\cdot\\,; -\\beta_0)$| (corrected)")
ax_r.set_title(f"{n_flows} random draws, {len(families)} data families")
ax_r.legend(fontsize=9)
fig.suptitle("Thm 3.1 through a zero crossing of $a$: the flow ends at the minimizer for $-\\beta_0$")
plt.show()

# %% [markdown]
# ```{prf:remark} Through a zero crossing of $a$: the mirror point (App. A.4.4's remark, here for any $X$)
# :label: grq-rem-crossing
#
# App. A.4.4 solves Thm 3.1 on a one-dimensional null space, $\beta = \beta^* + \alpha v$, and remarks: "it
# appears that $\beta = \beta^* - \alpha v$ also works for initializations not previously considered. This includes
# trajectories that pass through the origin, resulting in a change in the sign of $a$." The derivation above
# proves this mirror point and extends it to any $X$ (any null space, by the frozen null part of
# {prf:ref}`grq-lem-null-frozen`); `flow_limit` finds for any $X$ whether a flow crosses (by theory where it can,
# otherwise by integrating until $L < L(0)$). When
# $a$ crosses zero, $\nabla q_\delta(\lVert\beta\rVert) = \tfrac32\operatorname{sign}(a)\,w$ jumps and the
# mirror-flow condition changes sign. The flow ends at the minimizer of $\Psi_\delta$ with $\beta_0$ replaced by
# $-\beta_0$, i.e. at the paper's $\beta^* - \alpha v$ on a one-dimensional null space. This holds for
# {glue:text}`count_flipped` crossing draws (null spaces of dimension 1 and 2). Thm 3.1's form $\beta^* + \alpha v$
# misses the flow by more than `miss_min` in {glue:text}`count_missed` of them, by {glue:text}`miss_range`; on the paper's Fig. 4
# problem from $-\beta_0$ it misses by {glue:text}`fig4_miss_range`. By {eq}`grq-eq-limit` the two points differ by
# $2|a_\infty|\,P_N w_0$, so the miss is small only when $\beta_0$ lies almost in the row space of $X$. The
# paper's own Thm 3.1 is not contradicted:
# it assumes $\beta(t) \neq 0$ for all $t$. The extension that A.4.3 suggests (defining $M$ at the crossing by its
# limit) would not carry Thm 3.1's own form through the crossing: $M$ has a limit there, but $\nabla Q$ jumps by
# $-3\operatorname{sign}(a_0)\,w$, whose null-space part $-3\operatorname{sign}(a_0)P_N w_0$ the mirror-flow
# identity picks up. Where $a$ crosses zero is decided by
# {prf:ref}`grq-lem-one-crossing`; for general anisotropic data it is found numerically (`flow_limit`).
# ```

# %% [markdown]
# (sec-grq-exact-dynamics-kernel)=
# ## 4. The kernel's own dynamics (App. A.3.1)
#
# The NTK is $K = X M X^\top$ ({eq}`grq-eq-1`), so $\dot K = X\dot M X^\top$. With $\kappa = \sqrt{\delta^2 +
# 4\lVert\beta\rVert^2}$ and $M = \tfrac{\kappa + \delta}{2}I + \tfrac{\kappa - \delta}{2}\hat\beta\hat\beta^\top$
# ({eq}`grq-eq-4`), $\partial_t\kappa = 4\lVert\beta\rVert\,\partial_t\lVert\beta\rVert/\kappa$. The product rule gives:
#
# ```{prf:proposition} Kernel dynamics (paper's App. A.3.1)
# :label: grq-prop-a-3-1
#
# For $\eta_a = \eta_w = 1$ and $\beta \ne 0$,
#
# $$
# \dot M = \frac{2\lVert\beta\rVert}{\kappa}\,\big(I + \hat\beta\hat\beta^\top\big)\,\partial_t\lVert\beta\rVert
#   + \frac{\kappa - \delta}{2}\,\partial_t\big(\hat\beta\hat\beta^\top\big),
# \qquad \partial_t\lVert\beta\rVert = \hat\beta^\top\dot\beta,\quad
# \partial_t(\hat\beta\hat\beta^\top) = \dot{\hat\beta}\hat\beta^\top + \hat\beta\dot{\hat\beta}^\top,\quad
# \dot{\hat\beta} = \frac{(I - \hat\beta\hat\beta^\top)\dot\beta}{\lVert\beta\rVert},
# $$ (grq-eq-mdot)
#
# with $\dot\beta = -M\,\nabla_\beta L$.
# ```
#
# ```{prf:proof}
# $\tfrac{d}{dt}\tfrac{\kappa \pm \delta}{2} = \tfrac12\partial_t\kappa = \tfrac{2\lVert\beta\rVert}{\kappa}
# \partial_t\lVert\beta\rVert$. Collect the terms.
# ```
#
# The coefficients decide the regimes. As $\delta \to +\infty$ both vanish relative to $M \approx \delta I$, like
# $2\lVert\beta\rVert/\delta$ and $\lVert\beta\rVert^2/\delta$, so the kernel stays put (lazy). As
# $\delta \to -\infty$ the first vanishes and the second grows like $|\delta|$: only a turn of $\hat\beta$ moves the
# kernel, and it moves it a lot (delayed rich). At $\delta = 0$ the coefficients are $1$ and $\lVert\beta\rVert$,
# the same order (rich). At a zero crossing of $a$, $\hat\beta\hat\beta^\top$ stays continuous and the first
# coefficient vanishes, so $\dot M$ stays finite.
#
# The check integrates the flow on random general data (6 samples, $d = 3$, the eigenvalue range of the
# parameters cell, $y$ off the range of $X$) from one $\beta_0$ at cosine 0.3 with $c = X^\top y/n$ (so that
# $\hat\beta$ has to turn) and with $L(\beta_0) < L(0)$, so $a$ keeps its sign,
# at $\delta \in \{-\text{kernel\_delta}, 0, \text{kernel\_delta}\}$. It uses scipy DOP853 with rtol $10^{-13}$ and
# dense output. Then it compares {eq}`grq-eq-mdot` with fourth-order central differences of
# $M(t) = a^2 I + w w^\top$ taken on the integrated path. It also integrates the norms of the two terms over
# $[0, T]$: $I_{norm}$ and $I_{dir}$.

# %%
Xk, yk, Ck, ck, b0k = minimal_crossing.kernel_problem(np.random.default_rng([seed, 1]), sv_range=(sv_min, sv_max))
dk = Xk.shape[1]
assert b0k @ (Ck @ b0k / 2 - ck) < 0  # L(beta0) < L(0): a keeps its sign
kernel_deltas = [-kernel_delta, 0.0, kernel_delta]
t_k = np.linspace(0.0, kernel_T, 4001)
t_fd = np.concatenate([np.geomspace(4 * fd_step, 1.0, 15), np.linspace(1.0, kernel_T - 4 * fd_step, 25)])
kernel_sols = {}
for dl in kernel_deltas:
    a0_, w0_ = init_from_product(b0k, dl)
    sol, _, _, ncross = batch_flow(np.array([a0_]), w0_[None, :], Ck[None], ck[None], kernel_T, n_eval=2,
                                   rtol=1e-13, atol=1e-15, dense=True)
    assert ncross[0] == 0
    kernel_sols[dl] = sol

# %% [markdown]
# On each flow: {eq}`grq-eq-mdot` (`minimal_model.mdot_terms`) against fourth-order central differences of
# $M(t) = a^2 I + w w^\top$ at `len(t_fd)` times, and the integrated norms $I_{norm}$, $I_{dir}$ of its two terms.

# %%
mdot_err, shares, ratios, changes, term_curves = 0.0, {}, {}, {}, {}
h = fd_step
for dl, sol in kernel_sols.items():
    Ms = {}
    for k in (-2, -1, 1, 2):  # M(t + k h) at every t of t_fd, as (times, d, d)
        Z = sol.sol(t_fd + k * h)
        Ms[k] = Z[0][:, None, None] ** 2 * np.eye(dk) + np.einsum("it,jt->tij", Z[1:], Z[1:])
    fd = (-Ms[2] + 8 * Ms[1] - 8 * Ms[-1] + Ms[-2]) / (12 * h)
    Zf = sol.sol(t_fd)
    formula = np.array([sum(minimal_model.mdot_terms(Zf[0, i], Zf[1:, i], dl, Ck, ck)) for i in range(t_fd.size)])
    mdot_err = max(mdot_err, float(np.abs(formula - fd).max()) / float(np.abs(fd).max()))
    Z = sol.sol(t_k)
    T1, T2 = np.array([[np.linalg.norm(m) for m in minimal_model.mdot_terms(Z[0, i], Z[1:, i], dl, Ck, ck)]
                       for i in range(t_k.size)]).T
    I1, I2 = np.trapezoid(T1, t_k), np.trapezoid(T2, t_k)
    M0 = np.linalg.norm(Z[0, 0] ** 2 * np.eye(dk) + np.outer(Z[1:, 0], Z[1:, 0]))
    shares[dl], ratios[dl], changes[dl] = I2 / (I1 + I2), I2 / I1, (I1 + I2) / M0
    term_curves[dl] = (T1 / M0, T2 / M0)

# %% [markdown]
# The finite-difference error is the $(h\,\text{rate})^4$ truncation, a deterministic function of `fd_step` and the
# flows: it prints as a bound on a 1-2-3-5-7 ladder at least 1.5 times its value and never below $10^{-8}$, ten
# times the rounding floor of the differences.
#
# The path length $I_{norm} + I_{dir}$ of $M$ on $[0, T]$ (the integral of the norms of the two terms of $\dot M$) is an
# upper bound on $\lVert M(T) - M(0)\rVert$. Upstream ($\delta$ = `kernel_delta`) it must stay below `lazy_change_max`
# of $\lVert M(0)\rVert$ (lazy); downstream ($\delta$ = $-$`kernel_delta`) the direction term must exceed the norm term
# by the factor `order_ratio` (delayed rich); balanced, the two must be of the same order, within that factor (rich).

# %%
mdot_print = formatting.ladder_limit(mdot_err, margin=1.5, floor=1e-8)
assert mdot_print < mdot_tol or not mdot_err < mdot_tol
print(f"dM/dt (grq-eq-mdot) vs fourth-order finite differences of M(t), {len(t_fd)} times per flow: "
      f"max relative error {bound(mdot_err, mdot_print)}")
print(f"{'delta':>7}{'(I_norm + I_dir) / |M(0)|':>28}{'I_dir / (I_norm + I_dir)':>27}{'I_dir / I_norm':>17}")
for dl in kernel_deltas:
    print(f"{dl:>7g}{fixed(changes[dl], 3):>28}{fixed(shares[dl], 3):>27}{fixed(ratios[dl], 2):>17}")
up, down, bal = kernel_delta, -kernel_delta, 0.0

# %% tags=["hide-input"]
_ = verified.record("App. A.3.1: dM/dt formula = finite differences of M along the flow", mdot_err < mdot_tol,
                    check=f"delta in {kernel_deltas}, random 6 x 3 data; scipy DOP853 rtol 1e-13, step {fd_step:g}",
                    measured=bound(mdot_err, mdot_print), tolerance=f"{mdot_tol:.0e} (relative)", kind="independent")
_ = verified.record("App. A.3.1: upstream the kernel barely moves; downstream the direction term drives it; "
                    "balanced both terms", changes[up] < lazy_change_max and ratios[down] > order_ratio
                    and 1 / order_ratio < ratios[bal] < order_ratio,
                    check="integrated norms I_norm, I_dir of the two terms of dM/dt on [0, kernel_T]",
                    measured=f"(I_norm + I_dir) / |M(0)| {fixed(changes[up], 3)} (delta {up:g}); I_dir / I_norm "
                             f"{fixed(ratios[down], 1)} (delta {down:g}), {fixed(ratios[bal], 2)} (0)",
                    tolerance=f"< {lazy_change_max}; > {order_ratio:g}; within a factor {order_ratio:g} of 1",
                    kind="independent")
_ = glue("mdot_err", bound(mdot_err, mdot_print))
_ = glue("lazy_change", fixed(changes[up], 3))
_ = glue("down_ratio", fixed(ratios[down], 1))
_ = glue("bal_ratio", fixed(ratios[bal], 2))

# %% [markdown]
# The two terms along the three flows, relative to $\lVert M(0)\rVert$:

# %%
fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), layout="constrained", sharey=True)
for ax, dl, name in zip(axes, kernel_deltas, ["downstream", "balanced", "upstream"]):
    T1, T2 = term_curves[dl]
    ax.plot(t_k, T1, color=plotting.LOCAL, label="norm term $\\frac{2\\|\\beta\\|}{\\kappa}(I + \\hat\\beta\\hat\\beta^\\top)\\partial_t\\|\\beta\\|$")
    ax.plot(t_k, T2, color=plotting.MAXIMA, label="direction term $\\frac{\\kappa - \\delta}{2}\\partial_t(\\hat\\beta\\hat\\beta^\\top)$")
    ax.set_yscale("log")
    ax.set_ylim(1e-8, 10)
    ax.set_xlabel("$t$")
    ax.set_title(f"$\\delta = {dl:g}$ ({name}): share of the direction term {fixed(shares[dl], 2)}")
axes[0].set_ylabel("$\\|\\mathrm{term}\\|_F / \\|M(0)\\|_F$")
axes[0].legend(fontsize=8, loc="lower left")
fig.suptitle("App. A.3.1: the two terms of $\\dot M$ along the flow")
plt.show()

# %% [markdown]
# (sec-grq-exact-dynamics-azulay)=
# ## 5. Azulay et al.'s Thm 2 (App. A.4.3)
#
# App. A.4.3 restates {cite:t}`azulay2021implicit`'s Thm 2. Our copy of the paper lost its formulas, so they are
# taken from Azulay et al.; the check below would fail if the transcription were wrong.
#
# ```{prf:theorem} Azulay et al.'s Thm 2 (paper's Thm A.2)
# :label: grq-thm-a-2-azulay
#
# For a two-layer linear network with one hidden neuron, any $\delta \ge 0$ and $\beta_0 \ne 0$, if the gradient
# flow converges to an interpolant, then
# $\beta(\infty) = \operatorname{argmin}_{X\beta = y}\; q^A_\delta(\lVert\beta\rVert) + z^\top\beta$ with
#
# $$
# q^A_\delta(x) = \frac{\Big(x^2 - \frac\delta2\big(\frac\delta2 + \sqrt{x^2 + \frac{\delta^2}{4}}\big)\Big)
#   \sqrt{\sqrt{x^2 + \frac{\delta^2}{4}} - \frac\delta2}}{x},
# \qquad z = -\tfrac32\sqrt{\sqrt{\lVert\beta_0\rVert^2 + \tfrac{\delta^2}{4}} - \tfrac\delta2}\;\hat\beta_0 .
# $$
# ```
#
# ```{prf:proposition} The two theorems agree (paper's App. A.4.3)
# :label: grq-prop-a-4-3
#
# $q^A_\delta(x) = q_\delta(x) - \tfrac12\max(\delta, 0)^{3/2}$ for all $x > 0$ and all $\delta$, and
# $z^\top\beta = -q_\delta'(\lVert\beta_0\rVert)\hat\beta_0^\top\beta$. So Azulay et al.'s objective is
# $\Psi_\delta$ minus a constant, and {prf:ref}`grq-thm-3-1` extends their Thm 2 to $\delta < 0$ with the same
# minimizer.
# ```
#
# ```{prf:proof}
# Write $s = \sqrt{x^2 + \delta^2/4}$. On the orbit with $\lVert\beta\rVert = x$,
# $s + \delta/2 = a^2$, $s - \delta/2 = \lVert w\rVert^2$ and $x = |a|\,\lVert w\rVert$. The numerator is
# $a^2\lVert w\rVert^2 - \tfrac\delta2 a^2 = a^2(\lVert w\rVert^2 - \tfrac\delta2)$, so
# $q^A_\delta = a^2(\lVert w\rVert^2 - \tfrac\delta2)\lVert w\rVert/(|a|\lVert w\rVert)
# = |a|(a^2 - \tfrac32\delta) = |a|^3 - \tfrac32\delta|a|$. Compare {eq}`grq-eq-q`. The vector $z$ is
# $-q_\delta'(\lVert\beta_0\rVert)\hat\beta_0$ by the formula for $q_\delta'$ in {prf:ref}`grq-thm-3-1`.
# ```
#
# Checks: $q^A_\delta - q_\delta$ (`q_delta` of the package) on a grid of $x$ and $\delta$. Then the minimizer of
# Azulay et al.'s objective, found by BFGS over the null-space coordinates (written here), is compared with
# `implicit_bias_limit` and with independent flow limits on random one-sample problems with $d = 3$. For the
# evaluation, $\sqrt{s - \delta/2}$ is computed as $x/\sqrt{s + \delta/2}$ (the same number without cancellation).

# %%
def q_azulay(x, delta):
    """Independent reference: Azulay et al.'s q (Thm 2), written out here (independent of markovlib); x > 0."""
    s = np.sqrt(x**2 + delta**2 / 4)
    root = x / np.sqrt(s + delta / 2) if delta >= 0 else np.sqrt(s - delta / 2)  # sqrt(s - delta/2)
    return (x**2 - delta / 2 * (delta / 2 + s)) * root / x


xs = np.geomspace(1e-3, 30.0, 400)
const_err = 0.0
for dl in list(azulay_deltas) + [-0.5, -3.0]:
    q = minimal_exact.q_delta(xs, dl)
    const_err = max(const_err, float(np.abs(q_azulay(xs, dl) - q + 0.5 * max(dl, 0.0) ** 1.5).max()) / (1 + float(np.abs(q).max())))
print(f"q^A - q_delta + max(delta, 0)^(3/2) / 2 on x in [1e-3, 30], delta in {list(azulay_deltas) + [-0.5, -3.0]}: "
      f"{bound(const_err, 1e-12)} (relative)")

# %% [markdown]
# The minimizer of Azulay et al.'s objective, by BFGS over the null-space coordinates of random one-sample problems
# in $d = 3$ (their own random stream), against `implicit_bias_limit` and the independent flow limits:

# %%
rng_a = np.random.default_rng([seed, 2])
az_rows = []
for dl in azulay_deltas:
    X_, y_, bls_, N_ = minimal_crossing.random_problem(rng_a, 1, 3, sv_range=(sv_min, sv_max),
                                                       beta_norm_range=(beta_norm_min, beta_norm_max))
    b0_ = rng_a.normal(size=3)
    b0_ *= rng_a.uniform(beta_norm_min, beta_norm_max) / np.linalg.norm(b0_)
    zvec = -1.5 * np.sqrt((np.hypot(dl, 2 * np.linalg.norm(b0_)) - dl) / 2) * b0_ / np.linalg.norm(b0_)
    obj = lambda u, zv=zvec, bl=bls_, NN=N_, dd=dl: q_azulay(np.linalg.norm(bl + NN @ u), dd) + zv @ (bl + NN @ u)  # noqa: E731
    res = minimize(obj, N_.T @ b0_, method="BFGS", jac="3-point", options={"gtol": 1e-11})
    az_rows.append((X_, y_, b0_, dl, bls_ + N_ @ res.x))
a0s_ = [init_from_product(r[2], r[3]) for r in az_rows]
_, a_az, W_az, cr_az = batch_flow(np.array([p[0] for p in a0s_]), np.array([p[1] for p in a0s_]),
                                  np.array([r[0].T @ r[0] for r in az_rows]), np.array([r[0][0] * r[1][0] for r in az_rows]),
                                  T_limit)
argmin_err = max(max(max_error(r[4], minimal_exact.implicit_bias_limit(r[0], r[1], r[2], r[3])),
                     max_error(r[4], a_az[j, -1] * W_az[j, :, -1])) for j, r in enumerate(az_rows))
print(f"argmin of Azulay et al.'s objective (BFGS) vs implicit_bias_limit and vs the flow limit, delta in "
      f"{list(azulay_deltas)}: {bound(argmin_err, 1e-7)}")

# %% tags=["hide-input"]
_ = verified.record("App. A.4.3: Azulay et al.'s q = q_delta - max(delta, 0)^(3/2) / 2", const_err < 1e-11,
                    check="grid of 400 x in [1e-3, 30] at each delta, Azulay's formula written out vs q_delta",
                    measured=bound(const_err, 1e-12), tolerance="1e-11 (relative)", kind="independent")
_ = verified.record("Thm A.2 (Azulay et al.'s Thm 2): its minimizer = implicit_bias_limit = the flow limit",
                    argmin_err < 1e-5 and not np.any(cr_az),
                    check=f"one-sample problems in d = 3, delta in {list(azulay_deltas)}; BFGS on the null space; "
                          f"independent flows to T = {T_limit:g}",
                    measured=bound(argmin_err, 1e-7), tolerance="1e-5 (BFGS, gtol 1e-11)", kind="independent")
_ = glue("azulay_const_err", bound(const_err, 1e-12))
_ = glue("azulay_argmin_err", bound(argmin_err, 1e-7))

# %% [markdown]
# (grq-fig-8)=
# ## 6. Fig. 8: the exact trajectories
#
# The paper's Fig. 8 draws the parameters $a(t)$, $w_1(t)$, $w_2(t)$ of the whitened problem from the exact
# solution over gradient-flow runs. $\beta^*$ points at angle $\pi/4$; the caption calls it a unit vector, the
# authors' code takes $\beta^* = (0.5, 0.5)$, used here (with the unit vector the third row would not move). The
# three rows start from unit $\beta_0$ at angles $3\pi/2$, $-\pi/4$ and $\pi/4$, with $a_0 > 0$ (the authors'
# convention) and $\delta$ setting $a_0$ and $\lVert w_0\rVert$. Here $a$ and $w = u\,\hat\beta^* + s\,\hat v_0$ come from the closed form of
# {prf:ref}`grq-thm-a2` (`exact_parameters`; the part $v$ of $w$ orthogonal to $\beta^*$ keeps its direction
# $\hat v_0$). The markers are an independent integration, including $\delta = 0$, which the authors' code left
# out. In the first row, the downstream $a$ passes through zero.

# %%
bstar8 = np.array(fig8_beta_star)
e8 = bstar8 / np.linalg.norm(bstar8)
t8 = np.linspace(0.0, fig8_T, 401)
fig8_err, fig8_cross, fig8_runs = 0.0, 0, []  # runs: (row, delta, closed a, closed w, flow a, flow W, crosses)
for row, ang in enumerate(fig8_beta0_angles):
    b0 = np.array([np.cos(np.pi * ang), np.sin(np.pi * ang)])
    inits = [init_from_product(b0, dl) for dl in fig8_deltas]
    _, a_f, W_f, cr = batch_flow(np.array([p[0] for p in inits]), np.array([p[1] for p in inits]),
                                 np.array([np.eye(2)] * len(fig8_deltas)), np.array([bstar8] * len(fig8_deltas)),
                                 fig8_T, n_eval=t8.size, rtol=1e-12, atol=1e-14)
    fig8_cross += int(np.sum(cr))
    for j, dl in enumerate(fig8_deltas):
        a0_, w0_ = inits[j]
        wn0 = np.linalg.norm(w0_)
        a_c, u_c, s_c = minimal_exact.exact_parameters(t8, dl, np.linalg.norm(bstar8), a0_ * wn0, float(w0_ @ e8) / wn0)
        v0 = w0_ - (w0_ @ e8) * e8
        v_hat = v0 / np.linalg.norm(v0) if np.linalg.norm(v0) > 1e-12 else np.zeros(2)
        w_c = u_c[:, None] * e8 + s_c[:, None] * v_hat
        fig8_err = max(fig8_err, max_error(a_c, a_f[j]), max_error(w_c, W_f[j].T))
        fig8_runs.append((row, dl, a_c, w_c, a_f[j], W_f[j], bool(cr[j])))
print(f"closed-form a(t), w(t) vs the integrated flow, {len(fig8_beta0_angles)} x {len(fig8_deltas)} runs: "
      f"{bound(fig8_err, 1e-8)}; {fig8_cross} of them cross zero")

# %% [markdown]
# The closed forms (dashed) over the integrated flows (markers), one row per start:

# %%
fig, axes = plt.subplots(len(fig8_beta0_angles), 3, figsize=(14, 3.4 * len(fig8_beta0_angles)), layout="constrained",
                         sharex=True)
axes = np.atleast_2d(axes)
cmap = plt.get_cmap("BrBG")
dscale = max(abs(dl) for dl in fig8_deltas)
for row, dl, a_c, w_c, a_fl, W_fl, crossed in fig8_runs:
    col = "k" if dl == 0 else cmap(0.5 + np.sign(dl) * (0.2 + 0.3 * abs(dl) / dscale))
    for ax, th, fl in zip(axes[row], (a_c, w_c[:, 0], w_c[:, 1]), (a_fl, W_fl[0], W_fl[1])):
        ax.plot(t8, th, "--", color="k", lw=1)
        ax.plot(t8[::16], fl[::16], "o", color=col, ms=4, label=f"$\\delta = {dl:g}$" + (" (a crosses 0)" if crossed else ""))
for row in range(len(fig8_beta0_angles)):
    axes[row, 0].set_ylabel(f"$\\beta_0$ at ${fig8_beta0_angles[row]:g}\\pi$")
    axes[row, 0].axhline(0, color="0.6", lw=0.8)
    axes[row, 0].legend(fontsize=7, ncol=2)
for ax, name in zip(axes[0], ["$a(t)$", "$w_1(t)$", "$w_2(t)$"]):
    ax.set_title(name)
for ax in axes[-1]:
    ax.set_xlabel("$t$")
fig.suptitle("Paper's Fig. 8: exact solution (dashed) over an independent integration (markers), "
             f"$\\beta^* = ({bstar8[0]:g}, {bstar8[1]:g})$")
plt.show()

# %% tags=["hide-input"]
_ = verified.record("Fig. 8: exact a(t), w(t) (App. A.2) = integrated flow, crossings included",
                    fig8_err < fig8_tol,
                    check=f"beta0 at {list(fig8_beta0_angles)} pi, delta in {list(fig8_deltas)}, t in [0, {fig8_T:g}]; "
                          f"independent DOP853; {fig8_cross} runs cross zero",
                    measured=bound(fig8_err, 1e-8), tolerance=f"{fig8_tol:.0e}", kind="independent")
_ = glue("fig8_err", bound(fig8_err, 1e-8))
_ = glue("fig8_crossings", str(fig8_cross))

# %% tags=["hide-input"]
_ = record_results({"crossing_draws": len(cross), "crossing_confirmed": confirmed, "a44_missed": missed,
                    "a44_miss_max": float(misses.max()), "flow_limit_max_error": fl_err, "mdot_max_rel_error": mdot_err,
                    "upstream_kernel_change": changes[up], "downstream_direction_ratio": ratios[down], "balanced_direction_ratio": ratios[bal],
                    "fig8_max_error": fig8_err, **verified.summary()})

# %% [markdown]
# ## What was verified
#
# The table below is generated from one record per claim, made where the claim was checked (a failed check stops
# the chapter there). "independent" marks checks whose reference calls no markovlib function under test: scipy
# integrations and optimizations, finite differences, and formulas written out in this chapter.

# %% tags=["remove-cell"]
from markovlib.book.glue import summary

summary("grq_exact_dynamics")  # in Jupyter: "What this chapter shows" with this run's numbers (removed from the book)

# %%
verified.table()

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
# what {cite:t}`kunin2024richquick` leave in their appendix. App. A.4.4 remarks that the closed form of the
# implicit bias "appears to also work" for trajectories through the origin, where $a$ changes sign. App. A.3.1
# gives the kernel's own dynamics $\dot M$, and App. A.4.3 says that {prf:ref}`grq-thm-3-1` is
# {cite:t}`azulay2021implicit`'s Thm 2 in another form. Fig. 8 draws the exact trajectories. All four are derived
# here and checked against independent integrations. The first one fails: at a zero crossing of $a$, the flow
# ends at the mirror image of the predicted point ({prf:ref}`grq-rem-crossing`).
#
# ## What this chapter shows
#
# 1. **The null-space part of $w$ is frozen** ({prf:ref}`grq-lem-null-frozen`), for any data $X$. So the limit of
#    the flow is known in closed form up to one sign, the sign of $a$ at the end ({eq}`grq-eq-limit`). Checked along
#    {glue:text}`n_flows` independent flows on random data with null spaces of dimension 1 and 2.
# 2. **At most one zero crossing, for any $X$** ({prf:ref}`grq-lem-one-crossing`, the book's extension of
#    {prf:ref}`grq-lem-a1` beyond whitened data). $a = 0$ forces $\beta = 0$ and the loss $L(0)$, and the loss
#    only decreases, so $a$ crosses zero at most once, and only if $L(\beta_0) > L(0)$. Observed: at most
#    {glue:text}`max_crossings` crossing per flow, and none of the {glue:text}`n_energy_draws` flows with
#    $L(\beta_0) < L(0)$ crosses. A sign condition alone ($c^\top\beta_0 < 0$, for one sample
#    $y\,x^\top\beta_0 < 0$, with $\delta < 0$) is not sufficient: {glue:text}`n_prone_nocross` of the
#    {glue:text}`n_prone` draws that meet it do not cross. For
#    one sample or whitened data the exact condition is the basin rule of {prf:ref}`grq-prop-a-2-5` applied to the
#    row space, and it predicts every crossing ({glue:text}`iso_predicted`).
# 3. **Thm 3.1 through a zero crossing** ({prf:ref}`grq-rem-crossing`, this book's finding): when $a$ crosses
#    zero, the flow ends at the minimizer of $\Psi_\delta$ with $\beta_0$ replaced by $-\beta_0$. This holds for
#    {glue:text}`count_flipped` crossing draws. The closed form of App. A.4.4 misses the flow by more than
#    `miss_min` in {glue:text}`count_missed` of them, by {glue:text}`miss_range`; on every crossing draw it misses by
#    $2|a_\infty|\,\lVert P_N w_0\rVert$ ({eq}`grq-eq-limit`), to {glue:text}`miss_law_err`. On the paper's Fig. 4 problem
#    started from $-\beta_0$ it misses by {glue:text}`fig4_miss_range` at $\delta \in \{-4, -2, -1\}$.
# 4. **`flow_limit`** (`markovlib.richlazy.minimal_limits`) returns $\beta(\infty)$ for any $X$, crossing or not.
#    Theory decides the sign of $a$ where it can (energy, the row-space $\delta$, the basin rule); otherwise the
#    function integrates only until the sign is settled. It matches every independent flow limit to
#    {glue:text}`flow_limit_err` ({glue:text}`routes`).
# 5. **The kernel's own dynamics** ({prf:ref}`grq-prop-a-3-1`, App. A.3.1): $\dot M$ splits into a term driven by
#    the change of $\lVert\beta\rVert$ and one driven by the change of direction $\hat\beta$. The formula matches
#    fourth-order finite differences of $M(t)$ along flows to {glue:text}`mdot_err` (relative). Upstream
#    (at $\delta$ equal to `kernel_delta`) the path length of $M$ on $[0, T]$ (the integral of the norms of the two
#    terms of $\dot M$, $I_{norm} + I_{dir}$, an upper bound on $\lVert M(T) - M(0)\rVert$) is {glue:text}`lazy_change`
#    of $\lVert M(0)\rVert$
#    (lazy). Downstream (at $\delta$ equal to minus `kernel_delta`) the direction term is {glue:text}`down_ratio` times the norm
#    term (delayed rich). Balanced, the ratio is {glue:text}`bal_ratio`, the same order (rich).
# 6. **Azulay et al.'s Thm 2** ({prf:ref}`grq-thm-a-2-azulay`, App. A.4.3): their potential differs from $q_\delta$
#    by the constant $-\tfrac12\max(\delta, 0)^{3/2}$ ({prf:ref}`grq-prop-a-4-3`), to {glue:text}`azulay_const_err`. Its
#    constrained minimizer equals `implicit_bias_limit` and the flow limits to {glue:text}`azulay_argmin_err`.
# 7. **Fig. 8**: $a(t)$ and $w(t)$ from the closed forms of {prf:ref}`grq-thm-a2` lie on the independently
#    integrated flows to {glue:text}`fig8_err`, for upstream, balanced and downstream $\delta$. That includes
#    {glue:text}`fig8_crossings` trajectories through a zero of $a$.
#
# **Range.** $\eta_a = \eta_w = 1$ for Thm 3.1 and its correction (`flow_limit` also takes unequal rates; the
# package tests check them). Random data families $(n, d)$ with $n \in [1, 3]$ samples and null spaces of dimension
# $d - n \in \{1, 2\}$. The nonzero eigenvalues of $X^\top X/n$ lie in [`sv_min`, `sv_max`] $\subseteq [0.5, 1.5]$. The norms
# $\lVert\beta_{ls}\rVert$ and $\lVert\beta_0\rVert$ lie in [`beta_norm_min`, `beta_norm_max`] $\subseteq [0.5, 1.5]$,
# and $\delta \in$ [`delta_min`, `delta_max`] $\subseteq [-4, -0.5]$. At least 10 draws per family
# crossing draws in all, and enough of them for the count to pass (topped up where the $\delta$ range gives fewer), any seed (seeds 0 to
# 6 at the defaults and 7 to 9 at the edges were run while the chapter was written).
# The horizon `T_limit` $\ge 1500$ lets the slowest of these flows settle. The kernel claims hold for
# `kernel_delta` $\in [8, 16]$ on random data of the same kind. Fig. 8 takes any directions, $|\delta| \le 4$,
# $T \le 20$ and $\lVert\beta^*\rVert\,T \le \log(\text{tol}/(100\,\varepsilon))$ (15.3 at the tolerance
# $10^{-7}$): a start antiparallel to $\beta^*$ with $\delta = 0$ runs on the stable manifold of the saddle at the
# origin, where rounding grows like $\varepsilon\, e^{\lVert\beta^*\rVert t}$ in the integration and in the closed
# form alike, so the parameters cell refuses larger products. *Changed claims (review B):* Fig. 8 was claimed for
# any $\beta^* \in [-10, 10]^2$ and $T \le 20$, and failed at the antipode of $\beta^*$ (error $2.4 \cdot 10^{-4}$
# at $\beta^* = (1, 1)$, $T = 20$); the product $\lVert\beta^*\rVert T$ is now bounded as above. The
# finite-difference error of $dM/dt$ prints as a bound at least 1.5 times the measured value (and at least $10^{-8}$, ten times its rounding floor) on a 1-2-3-5-7 ladder,
# below the tolerance, instead of a fixed $10^{-8}$ that it exceeds at `kernel_delta` 16. CI re-runs the chapter at the edges of these ranges (`book/ci_params/grq_exact_dynamics.yaml`):
# `papermill book/grq_exact_dynamics.ipynb out.ipynb -f book/ci_params/grq_exact_dynamics.yaml`.

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
import numpy as np

from markovlib.book import params

seed = params.nonnegative_int("seed", seed)
families = params.pair_list("families", families, 1, 6)
for n_, d_ in families:
    if n_ != int(n_) or d_ != int(d_) or not (1 <= n_ <= 3 and d_ - n_ in (1, 2)):
        raise ValueError(f"families must hold integer pairs (n, d) with n in [1, 3] and d - n in {{1, 2}}, got {families!r}")
families = [(int(n_), int(d_)) for n_, d_ in families]
n_draws = params.positive_int("n_draws", n_draws)
if n_draws < 10:
    raise ValueError(f"n_draws must be at least 10 (counts need 10 draws per family), got {n_draws}")
from markovlib.book.inference import wilson_lower_z  # noqa: E402

# a count k/n holds when its one-sided Wilson lower end exceeds count_rate; with k = n that end is n / (n + z^2), so a
# count over fewer than n_cross_needed crossing draws could not pass even if every draw agreed
_z = wilson_lower_z(0.05, count_family)
n_cross_needed = int(np.floor(count_rate * _z**2 / (1 - count_rate))) + 1
if n_draws * len(families) < n_cross_needed:
    raise ValueError(f"n_draws times the number of families must be at least {n_cross_needed} (the counts over crossing "
                     f"draws need that many to pass at count_rate {count_rate:g}), got {n_draws} x {len(families)}")
n_control = params.positive_int("n_control", n_control)
n_white = params.positive_int("n_white", n_white)
delta_min = params.real("delta_min", delta_min, -4.0, -0.5)  # the stated range
delta_max = params.real("delta_max", delta_max, -4.0, -0.5)
if delta_min > delta_max:
    raise ValueError(f"delta_min must not exceed delta_max, got {delta_min} and {delta_max}")
sv_min = params.real("sv_min", sv_min, 0.5, 1.5)
sv_max = params.real("sv_max", sv_max, 0.5, 1.5)
if sv_min > sv_max:
    raise ValueError(f"sv_min must not exceed sv_max, got {sv_min} and {sv_max}")
beta_norm_min = params.real("beta_norm_min", beta_norm_min, 0.5, 1.5)
beta_norm_max = params.real("beta_norm_max", beta_norm_max, 0.5, 1.5)
if beta_norm_min > beta_norm_max:
    raise ValueError(f"beta_norm_min must not exceed beta_norm_max, got {beta_norm_min} and {beta_norm_max}")
T_limit = params.real("T_limit", T_limit, 1500.0, 1e5)  # the slowest flows of the stated range settle by 1500
settle_tol = params.positive_real("settle_tol", settle_tol)
limit_tol = params.positive_real("limit_tol", limit_tol)
miss_min = params.positive_real("miss_min", miss_min)
count_rate = params.real("count_rate", count_rate, 0.5, 1.0, closed=False)
count_family = params.positive_int("count_family", count_family)
fig4_x = params.pair("fig4_x", fig4_x, -10.0, 10.0)
fig4_y = params.real("fig4_y", fig4_y, -10.0, 10.0)
fig4_beta0 = params.pair("fig4_beta0", fig4_beta0, -10.0, 10.0)
if fig4_x == (0.0, 0.0) or fig4_y == 0 or fig4_beta0 == (0.0, 0.0):
    raise ValueError("fig4_x, fig4_y and fig4_beta0 must be nonzero")
if not fig4_y * (fig4_x[0] * fig4_beta0[0] + fig4_x[1] * fig4_beta0[1]) < 0:
    raise ValueError(f"fig4_beta0 must have fig4_y x^T beta0 < 0 (a crossing needs L(beta0) > L(0)), got {fig4_beta0!r}")
fig4_deltas = params.real_list("fig4_deltas", fig4_deltas, -8.0, 0.0)
kernel_delta = params.real("kernel_delta", kernel_delta, 8.0, 16.0)  # the stated range of the kernel claims
kernel_T = params.real("kernel_T", kernel_T, 10.0, 40.0)
fd_step = params.real("fd_step", fd_step, 2e-4, 5e-4)  # truncation (h rate)^4 and rounding 1e-13 / h both small
mdot_tol = params.positive_real("mdot_tol", mdot_tol)
lazy_change_max = params.real("lazy_change_max", lazy_change_max, 0.0, 1.0, closed=False)
order_ratio = params.real("order_ratio", order_ratio, 2.0, 100.0)
azulay_deltas = params.real_list("azulay_deltas", azulay_deltas, 0.0, 20.0)  # Azulay et al.'s Thm 2 needs delta >= 0
fig8_deltas = params.real_list("fig8_deltas", fig8_deltas, -4.0, 4.0)
if not (min(fig8_deltas) < 0 < max(fig8_deltas) and 0.0 in fig8_deltas):
    raise ValueError(f"fig8_deltas must hold a negative value, 0 and a positive value, got {fig8_deltas!r}")
fig8_beta_star = params.pair("fig8_beta_star", fig8_beta_star, -10.0, 10.0)
if fig8_beta_star == (0.0, 0.0):
    raise ValueError("fig8_beta_star must be nonzero")
fig8_beta0_angles = params.real_list("fig8_beta0_angles", fig8_beta0_angles, -2.0, 2.0)
fig8_T = params.real("fig8_T", fig8_T, 1.0, 20.0)
fig8_tol = params.real("fig8_tol", fig8_tol, 1e-9, 1e-5)
# A start antiparallel to beta* with delta = 0 runs on the stable manifold of the saddle at the origin (eigenvalues
# +-|beta*| of the linearized flow): any rounding of the start (relative eps) grows like eps exp(|beta*| t), in the
# integration and in the closed form alike. The comparison is resolvable over [0, T] for every start only when
# eps exp(|beta*| T) stays 100 times below fig8_tol, i.e. |beta*| T <= log(fig8_tol / (100 eps)).
fig8_growth_max = float(np.log(fig8_tol / (100 * np.finfo(float).eps)))  # 15.3 at fig8_tol 1e-7
if np.hypot(*fig8_beta_star) * fig8_T > fig8_growth_max:
    raise ValueError(f"fig8_beta_star and fig8_T must have |fig8_beta_star| * fig8_T in (0, {fig8_growth_max:.2f}] "
                     f"(log(fig8_tol / (100 eps)): rounding grows like exp(|beta*| t) near the antipode of beta*), "
                     f"got {np.hypot(*fig8_beta_star) * fig8_T:.3g}")

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
from scipy.integrate import solve_ivp
from scipy.optimize import minimize

from markovlib.book import formatting, plotting
from markovlib.book.glue import glue
from markovlib.book.formatting import bound, fixed, fraction
from markovlib.book.report import Verification
from markovlib.book.sweep import record_results
from markovlib.richlazy import minimal_exact as RE
from markovlib.richlazy.minimal_limits import flow_limit, init_from_product, limit_sign

plotting.use_style()
verified = Verification()  # one record per claim; the final cell prints the generated table
rng = np.random.default_rng(seed)


# independent reference (do not replace with markovlib): the gradient flow of many single neurons at once,
# da/dt = -w^T g, dw/dt = -a g, g = C (a w) - c, by scipy's DOP853; events count the zero crossings of each a
def batch_flow(a0, W0, Cs, cs, T, n_eval=2001, rtol=1e-11, atol=1e-13, dense=False):
    N, d = W0.shape

    def rhs(_, z):
        a, W = z[:N], z[N:].reshape(N, d)
        g = np.einsum("nij,nj->ni", Cs, a[:, None] * W) - cs
        return np.concatenate([-np.sum(W * g, axis=1), (-a[:, None] * g).ravel()])

    events = [lambda _, z, i=i: z[i] for i in range(N)]
    t_eval = np.linspace(0.0, T, n_eval)
    sol = solve_ivp(rhs, (0.0, T), np.concatenate([a0, W0.ravel()]), method="DOP853", rtol=rtol, atol=atol,
                    t_eval=t_eval, events=events, dense_output=dense)
    assert sol.success, sol.message
    crossings = np.array([te.size for te in sol.t_events])
    return sol, sol.y[:N], sol.y[N:].reshape(N, d, -1), crossings


def random_problem(rng_, n, d, whitened=False):
    """X (n x d, rank n) whose X^T X / n has eigenvalues uniform in [sv_min, sv_max] on a random row space (with
    whitened=True one such eigenvalue, repeated: X^T X / n = lambda P_R), and y = X beta_ls with |beta_ls| uniform in
    [beta_norm_min, beta_norm_max] (beta_ls in the row space)."""
    U, _ = np.linalg.qr(rng_.normal(size=(n, n)))
    V, _ = np.linalg.qr(rng_.normal(size=(d, d)))
    ev = np.full(n, rng_.uniform(sv_min, sv_max)) if whitened else rng_.uniform(sv_min, sv_max, n)
    X = U @ np.diag(np.sqrt(n * ev)) @ V[:, :n].T
    beta_ls = V[:, :n] @ rng_.normal(size=n)
    beta_ls *= rng_.uniform(beta_norm_min, beta_norm_max) / np.linalg.norm(beta_ls)
    return X, X @ beta_ls, beta_ls, V[:, n:]  # the last: an orthonormal basis of the null space

# %% [markdown]
# ## Thm 3.1 through a zero crossing of $a$
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
# flips the sign of $\alpha$, so the flow ends at $\beta_{ls} - \alpha v$, at distance $2|\alpha|$ from the
# closed form.
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

# %%
rows = []  # one dict per draw


def draw_family(fam, n, d, n_prone, n_ctrl, rng_, whitened=False):
    """n_prone crossing-prone and n_ctrl control draws of one family, integrated independently to T_limit."""
    a0s, W0s, Cs, cs, info = [], [], [], [], []
    for k in range(n_prone + n_ctrl):
        X, y, beta_ls, N_basis = random_problem(rng_, n, d, whitened)
        C, c = X.T @ X / n, X.T @ y / n
        direction = rng_.normal(size=d)
        direction /= np.linalg.norm(direction)
        if k < n_prone:  # crossing-prone: c^T beta0 < 0, delta < 0
            beta0 = -np.sign(c @ direction) * rng_.uniform(beta_norm_min, beta_norm_max) * direction
            delta = rng_.uniform(delta_min, delta_max)
        else:  # control: c^T beta0 > 0 and |beta0| below 2 c^T beta0_hat / beta0_hat^T C beta0_hat, so L(beta0) < L(0)
            direction *= np.sign(c @ direction)
            beta0 = rng_.uniform(0.2, 0.8) * 2 * (c @ direction) / (direction @ C @ direction) * direction
            delta = rng_.uniform(delta_min, delta_max)
        a0, w0 = init_from_product(beta0, delta, rng_.choice([-1.0, 1.0]))
        a0s.append(a0)
        W0s.append(w0)
        Cs.append(C)
        cs.append(c)
        info.append(dict(family=fam, n=n, d=d, X=X, y=y, beta_ls=beta_ls, N=N_basis, beta0=beta0, delta=delta,
                         a0=a0, w0=w0, prone=k < n_prone, dL0=float(beta0 @ (C @ beta0 / 2 - c))))
    _, a_t, W_t, n_cross = batch_flow(np.array(a0s), np.array(W0s), np.array(Cs), np.array(cs), T_limit)
    i90 = int(round(0.9 * (a_t.shape[1] - 1)))
    for j, r in enumerate(info):
        beta_T, beta_90 = a_t[j, -1] * W_t[j, :, -1], a_t[j, i90] * W_t[j, :, i90]
        P_N = r["N"] @ r["N"].T
        r.update(beta_T=beta_T, settled=float(np.abs(beta_T - beta_90).max()) < settle_tol,
                 crossings=int(n_cross[j]), sign_end=float(np.sign(a_t[j, -1])),
                 null_drift=float(np.abs(P_N @ W_t[j] - (P_N @ r["w0"])[:, None]).max()))
    return info


for fam, (n, d) in enumerate(families):
    rows += draw_family(fam, n, d, n_draws, n_control, rng)
# the counts over crossing draws need at least n_cross_needed of them to be able to pass: top up with more
# crossing-prone draws (their own stream, the families in turn) until there are that many crossings
rng_top = np.random.default_rng([seed, 2])
n_topped = 0
while sum(r["crossings"] == 1 for r in rows) < n_cross_needed:
    if n_topped >= 20 * n_draws * len(families):
        raise ValueError(f"delta_min, delta_max = {delta_min:g}, {delta_max:g} give too few zero crossings: "
                         f"{sum(r['crossings'] == 1 for r in rows)} after {n_topped} extra draws, "
                         f"{n_cross_needed} needed for the counts (take delta_max further below 0)")
    for fam, (n, d) in enumerate(families):
        rows += draw_family(fam, n, d, 1, 0, rng_top)
        n_topped += 1

n_flows = len(rows)
for r in rows:
    X, y, beta0, delta, a0, w0 = r["X"], r["y"], r["beta0"], r["delta"], r["a0"], r["w0"]
    r["psi"] = RE.implicit_bias_limit(X, y, beta0, delta)  # Thm 3.1 as stated
    r["psi_flip"] = RE.implicit_bias_limit(X, y, -beta0, delta)  # Thm 3.1 with -beta0
    P_N = r["N"] @ r["N"].T
    delta_R = a0**2 - float(w0 @ (np.eye(r["d"]) - P_N) @ w0)
    a_inf = np.sqrt((delta_R + np.hypot(delta_R, 2 * np.linalg.norm(r["beta_ls"]))) / 2)  # (grq-eq-limit)
    r["delta_R"] = delta_R
    r["miss_pred"] = 2 * a_inf * float(np.abs(P_N @ w0).max())  # |A.4.4 form - flow limit| on a crossing flow
    r["closed"] = r["beta_ls"] + r["sign_end"] * a_inf * (P_N @ w0)
    r["flow_limit"] = flow_limit(X, y, a0, w0)
    r["route"] = limit_sign(X, y, a0, w0)

settled = [r for r in rows if r["settled"]]
cross = [r for r in rows if r["crossings"] == 1]
max_null_drift = max(r["null_drift"] for r in rows)
max_crossings = max(r["crossings"] for r in rows)
energy_rows = [r for r in rows if r["dL0"] < 0]
energy_crossings = sum(r["crossings"] > 0 for r in energy_rows)
prone = [r for r in rows if r["prone"]]
prone_nocross = [r for r in prone if r["crossings"] == 0]
iso = [r for r in rows if r["n"] == 1]  # one sample: X^T X / n is a multiple of the projector onto its row space
iso_pred = [RE.basin_margin(r["a0"], r["w0"] - r["N"] @ (r["N"].T @ r["w0"]), r["beta_ls"]) * r["a0"] < 0 for r in iso]
iso_agree = sum(bool(p) == (r["crossings"] == 1) for p, r in zip(iso_pred, iso))
# whitened data with n >= 2 samples (X^T X / n = lambda P_R): the lemma's other exact case, on crossing-prone draws
rng_white = np.random.default_rng([seed, 3])  # its own stream: the draws above do not move
white = [r for fam, (n, d) in enumerate(families) if n >= 2
         for r in draw_family(fam, n, d, n_white, 0, rng_white, whitened=True)]
white_pred = [RE.basin_margin(r["a0"], r["w0"] - r["N"] @ (r["N"].T @ r["w0"]), r["beta_ls"]) * r["a0"] < 0 for r in white]
white_agree = sum(bool(p) == (r["crossings"] == 1) for p, r in zip(white_pred, white))
white_C_err = max((float(np.abs(r["X"].T @ r["X"] / r["n"] - np.linalg.eigvalsh(r["X"].T @ r["X"] / r["n"]).max()
                                * (np.eye(r["d"]) - r["N"] @ r["N"].T)).max()) for r in white), default=0.0)
print(f"{n_flows} flows on {len(families)} data families {families}, {len(settled)} settled by T = {T_limit:g} "
      f"(|beta(T) - beta(0.9 T)| < {settle_tol:.0e})")
print(f"null-space part of w: max |P_N w(t) - P_N w0| {bound(max_null_drift, 1e-10)}")
print(f"zero crossings of a per flow: max {max_crossings}; flows that cross: {len(cross)}")
print(f"flows with L(beta0) < L(0): {len(energy_rows)}, of which cross: {energy_crossings}")
print(f"crossing-prone draws (c^T beta0 < 0, delta in [{delta_min:g}, {delta_max:g}]): {len(prone) - len(prone_nocross)} "
      f"of {len(prone)} cross; of those that do not, delta_R >= 0 for {sum(r['delta_R'] >= 0 for r in prone_nocross)}")
print(f"one-sample families: crossing predicted by the basin rule on the row space = observed for "
      f"{fraction(iso_agree, len(iso))} flows")
print(f"whitened data with n >= 2 (X^T X / n = lambda P_R to {bound(white_C_err, 1e-12)}): predicted = observed for "
      f"{fraction(white_agree, len(white))} crossing-prone flows ({sum(r['crossings'] == 1 for r in white)} cross)")
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
# Now the limits. For each flow that crosses, the table below compares the independent limit with Thm 3.1 as
# stated (`implicit_bias_limit` at $\beta_0$, the A.4.4 closed form) and with its correction (at $-\beta_0$). For
# each flow that does not cross, it compares with Thm 3.1 as stated. {eq}`grq-eq-limit` and `flow_limit` are
# compared on every settled flow. A crossing draw counts as confirmed when its flow has settled and ends within
# `limit_tol` of the corrected minimizer. It counts as missed by the A.4.4 closed form when that form is off by
# more than `miss_min`; how far it misses is no matter of chance: by {eq}`grq-eq-limit` it is $2|a_\infty|\,P_N w_0$,
# checked draw by draw (so the share of draws missed by more than `miss_min` describes the draws, not the theorem). The
# count of confirmed draws carries a one-sided Wilson bound against `count_rate` (`count_family` is 1: one count).

# %%
def err(u, v):
    return float(np.abs(u - v).max())


cross_settled = [r for r in cross if r["settled"]]
confirmed = sum(err(r["beta_T"], r["psi_flip"]) < limit_tol for r in cross_settled)
misses = np.array([err(r["beta_T"], r["psi"]) for r in cross])
missed = int(np.sum(misses > miss_min))
miss_law_err = max((abs(m - r["miss_pred"]) for m, r in zip(misses, cross) if r["settled"]), default=0.0)
nocross_settled = [r for r in settled if r["crossings"] == 0]
thm_err = max((err(r["beta_T"], r["psi"]) for r in nocross_settled), default=0.0)
closed_err = max(err(r["beta_T"], r["closed"]) for r in settled)
fl_err = max(err(r["beta_T"], r["flow_limit"]) for r in settled)
sign_agree = sum(r["route"][0] == r["sign_end"] for r in rows)
routes = {}
for r in rows:
    routes[r["route"][1]] = routes.get(r["route"][1], 0) + 1
print(f"{'family':>8}{'flows':>7}{'cross':>7}{'max |flow - Psi(-b0)|, cross':>31}{'A.4.4 miss, cross':>20}"
      f"{'max |flow - Psi(b0)|, no cross':>32}")
for fam, (n, d) in enumerate(families):
    fr = [r for r in settled if r["family"] == fam]
    fc = [r for r in fr if r["crossings"] == 1]
    fn = [r for r in fr if r["crossings"] == 0]
    e_flip = bound(max((err(r["beta_T"], r["psi_flip"]) for r in fc), default=0.0), 1e-8)
    miss = f"{fixed(min(err(r['beta_T'], r['psi']) for r in fc), 2)} to {fixed(max(err(r['beta_T'], r['psi']) for r in fc), 2)}" if fc else "-"
    e_thm = bound(max((err(r["beta_T"], r["psi"]) for r in fn), default=0.0), 1e-8)
    print(f"{f'{n} x {d}':>8}{len(fr):>7}{len(fc):>7}{e_flip:>31}{miss:>20}{e_thm:>32}")
print(f"closed form (grq-eq-limit) with the observed sign vs flow, all settled flows: {bound(closed_err, 1e-8)}")
print(f"flow_limit vs flow, all settled flows: {bound(fl_err, 1e-8)}; sign of a(inf) from limit_sign = observed for "
      f"{fraction(sign_agree, n_flows)}; routes: " + ", ".join(f"{k} {v}" for k, v in sorted(routes.items())))
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
# ### The paper's Fig. 4 problem, started from $-\beta_0$
#
# The one-sample problem of Fig. 4 ($x = (0.5, 1)$, $y = 1.1$) has a one-dimensional null space, spanned by $v$.
# The A.4.4 closed form is written out here: $\beta = \beta^* + \alpha v$ with $\alpha = k\,|a_\infty|$,
# $k = \lVert w_0\rVert\,\hat\beta_0^\top v$, and $a_\infty^2 = \kappa + \sqrt{\kappa^2 + \lVert\beta^*\rVert^2}$,
# $\kappa = (k^2 + \delta)/2$ (the first-order condition of $\Psi_\delta$ along the line, solved for $\alpha$; the
# same expression the authors' public code evaluates). Started from `fig4_beta0` (minus the paper's $\beta_0$, so
# $y\,x^\top\beta_0 < 0$), the flows at the paper's downstream $\delta$ pass through the origin and end at
# $\beta^* - \alpha v$. At $\delta = -0.5$ the row-space $\delta_R$ is positive, and $a$ keeps its sign.

# %%
x4, b04 = np.array(fig4_x), np.array(fig4_beta0)
X4, y4 = x4[None, :], np.array([fig4_y])
bstar4 = fig4_y * x4 / (x4 @ x4)
v4 = np.sign(fig4_y) * np.array([-x4[1], x4[0]]) / np.linalg.norm(x4)


def a44_closed_form(beta0, delta):
    """App. A.4.4 in closed form (written out here, independent of markovlib): beta* + alpha v."""
    r0 = np.linalg.norm(beta0)
    w0_norm = np.sqrt((np.hypot(delta, 2 * r0) - delta) / 2)
    k = w0_norm * (beta0 @ v4) / r0
    kappa = (k**2 + delta) / 2
    return bstar4 + k * np.sqrt(kappa + np.hypot(kappa, np.linalg.norm(bstar4))) * v4


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
    a44_vs_psi = max(a44_vs_psi, err(form, RE.implicit_bias_limit(X4, y4, b04, dl)))
    fig4_flip_err = max(fig4_flip_err, err(end, pred))
    miss = float(np.linalg.norm(end - form))
    if cross4[j]:
        fig4_miss.append(miss)
    print(f"{dl:>6g}{int(cross4[j]):>9}   ({fixed(form[0], 3)}, {fixed(form[1], 3)})   ({fixed(flip[0], 3)}, "
          f"{fixed(flip[1], 3)})   ({fixed(end[0], 3)}, {fixed(end[1], 3)}){fixed(miss, 2):>7}"
          f"{bound(err(end, pred), 1e-8):>15}{bound(a44_vs_psi, 1e-12):>15}")
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
# origin; open circles mark the A.4.4 closed form, filled ones the corrected limit. On the right, every random
# draw is placed by its distance to the two predictions. Crossing flows sit on the corrected one and far from Thm
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
    e1 = max(err(r["beta_T"], r["psi"]), 1e-13)
    e2 = max(err(r["beta_T"], r["psi_flip"]), 1e-13)
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
# ```{prf:remark} Thm 3.1 does not extend through a zero crossing of $a$ (this book's finding)
# :label: grq-rem-crossing
#
# App. A.4.4 remarks that the closed form of the implicit bias "appears to also work" for initializations outside
# Thm 3.1, "trajectories that pass through the origin, resulting in a change in the sign of $a$". Read with the
# closed form of A.4.4 (the minimizer of $\Psi_\delta$, $\beta = \beta^* + \alpha v$), the remark is false. When
# $a$ crosses zero, $\nabla q_\delta(\lVert\beta\rVert) = \tfrac32\operatorname{sign}(a)\,w$ jumps and the
# mirror-flow condition changes sign. The flow ends at the minimizer of $\Psi_\delta$ with $\beta_0$ replaced by
# $-\beta_0$, i.e. at $\beta^* - \alpha v$ on a one-dimensional null space. This holds for
# {glue:text}`count_flipped` crossing draws (null spaces of dimension 1 and 2). The A.4.4 form misses the flow by
# more than `miss_min` in {glue:text}`count_missed` of them, by {glue:text}`miss_range`; on the paper's Fig. 4
# problem from $-\beta_0$ it misses by {glue:text}`fig4_miss_range`. By {eq}`grq-eq-limit` the two points differ by
# $2|a_\infty|\,P_N w_0$, so the miss is small only when $\beta_0$ lies almost in the row space of $X$. The
# paper's own Thm 3.1 is not contradicted:
# it assumes $\beta(t) \neq 0$ for all $t$. The extension that A.4.3 suggests (defining $M$ at the crossing by its
# limit) would not rescue the remark: $M$ has a limit there, but $\nabla Q$ jumps by
# $-3\operatorname{sign}(a_0)\,w$, whose null-space part $-3\operatorname{sign}(a_0)P_N w_0$ the mirror-flow
# identity picks up. Where $a$ crosses zero is decided by
# {prf:ref}`grq-lem-one-crossing`; for general anisotropic data it is found numerically (`flow_limit`).
# ```

# %% [markdown]
# ## The kernel's own dynamics (App. A.3.1)
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
rng_k = np.random.default_rng([seed, 1])  # its own stream: the draws above do not move it
nk, dk = 6, 3
Uk, _ = np.linalg.qr(rng_k.normal(size=(nk, nk)))
Vk, _ = np.linalg.qr(rng_k.normal(size=(dk, dk)))
Xk = Uk[:, :dk] @ np.diag(np.sqrt(nk * rng_k.uniform(sv_min, sv_max, dk))) @ Vk.T
bt = rng_k.normal(size=dk)
yk = Xk @ (bt / np.linalg.norm(bt)) + 0.3 * Uk[:, dk]  # a residual off the range of X
Ck, ck = Xk.T @ Xk / nk, Xk.T @ yk / nk
ck_hat = ck / np.linalg.norm(ck)
perp = rng_k.normal(size=dk)
perp -= (perp @ ck_hat) * ck_hat
dir_k = 0.3 * ck_hat + np.sqrt(1 - 0.3**2) * perp / np.linalg.norm(perp)  # cosine 0.3 with c: beta0 has to turn
b0k = min(0.8, (ck @ dir_k) / (dir_k @ Ck @ dir_k)) * dir_k  # |beta0| below 2 c^T dir / dir^T C dir: L(beta0) < L(0)
assert b0k @ (Ck @ b0k / 2 - ck) < 0


def mdot_terms(a, w, delta):
    """The two terms of (grq-eq-mdot) at (a, w), computed from beta = a w and d beta/dt (chapter code)."""
    g = Ck @ (a * w) - ck
    a_dot, w_dot = -(w @ g), -a * g
    beta, beta_dot = a * w, a_dot * w + a * w_dot
    r = np.linalg.norm(beta)
    bh = beta / r
    kap = np.hypot(delta, 2 * r)
    dr = bh @ beta_dot
    dbh = (beta_dot - bh * dr) / r
    return 2 * r / kap * (np.eye(dk) + np.outer(bh, bh)) * dr, (kap - delta) / 2 * (np.outer(dbh, bh) + np.outer(bh, dbh))


kernel_deltas = [-kernel_delta, 0.0, kernel_delta]
mdot_err, shares, ratios, changes, term_curves = 0.0, {}, {}, {}, {}
t_k = np.linspace(0.0, kernel_T, 4001)
t_fd = np.concatenate([np.geomspace(4 * fd_step, 1.0, 15), np.linspace(1.0, kernel_T - 4 * fd_step, 25)])
for dl in kernel_deltas:
    a0_, w0_ = init_from_product(b0k, dl)
    sol, _, _, ncross = batch_flow(np.array([a0_]), w0_[None, :], Ck[None], ck[None], kernel_T, n_eval=2,
                                   rtol=1e-13, atol=1e-15, dense=True)
    assert ncross[0] == 0

    def M_of(t_):
        z = sol.sol(t_)
        return z[0] ** 2 * np.eye(dk) + np.outer(z[1:], z[1:])

    h = fd_step
    fd = [(-M_of(t + 2 * h) + 8 * M_of(t + h) - 8 * M_of(t - h) + M_of(t - 2 * h)) / (12 * h) for t in t_fd]
    formula = [sum(mdot_terms(sol.sol(t)[0], sol.sol(t)[1:], dl)) for t in t_fd]
    scale = max(np.abs(f).max() for f in fd)
    mdot_err = max(mdot_err, max(float(np.abs(f - g).max()) for f, g in zip(formula, fd)) / scale)
    Z = sol.sol(t_k)
    T1, T2 = np.array([[np.linalg.norm(m) for m in mdot_terms(Z[0, i], Z[1:, i], dl)] for i in range(t_k.size)]).T
    I1, I2 = np.trapezoid(T1, t_k), np.trapezoid(T2, t_k)
    M0 = M_of(0.0)
    shares[dl] = I2 / (I1 + I2)
    ratios[dl] = I2 / I1
    changes[dl] = (I1 + I2) / np.linalg.norm(M0)
    term_curves[dl] = (T1 / np.linalg.norm(M0), T2 / np.linalg.norm(M0))
# the error is the (h rate)^4 truncation of the differences, a deterministic function of fd_step and the flows:
# it prints as a bound on a 1-2-3-5-7 ladder at least 1.5 times its value (never the "not <" of a fixed bound)
# and never below 1e-8, 10 times the rounding floor of the differences (rtol 1e-13 of M over a step of 2e-4 or more)
mdot_print = formatting.ladder_limit(mdot_err, margin=1.5, floor=1e-8)
assert mdot_print < mdot_tol or not mdot_err < mdot_tol
print(f"dM/dt (grq-eq-mdot) vs fourth-order finite differences of M(t), {len(t_fd)} times per flow: "
      f"max relative error {bound(mdot_err, mdot_print)}")
print(f"{'delta':>7}{'(I_norm + I_dir) / |M(0)|':>28}{'I_dir / (I_norm + I_dir)':>27}{'I_dir / I_norm':>17}")
for dl in kernel_deltas:
    print(f"{dl:>7g}{fixed(changes[dl], 3):>28}{fixed(shares[dl], 3):>27}{fixed(ratios[dl], 2):>17}")
up, down, bal = kernel_delta, -kernel_delta, 0.0
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
# ## Azulay et al.'s Thm 2 (App. A.4.3)
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
    """Azulay et al.'s q (Thm 2), written out here (independent of markovlib); x > 0."""
    s = np.sqrt(x**2 + delta**2 / 4)
    root = x / np.sqrt(s + delta / 2) if delta >= 0 else np.sqrt(s - delta / 2)  # sqrt(s - delta/2)
    return (x**2 - delta / 2 * (delta / 2 + s)) * root / x


xs = np.geomspace(1e-3, 30.0, 400)
const_err = 0.0
for dl in list(azulay_deltas) + [-0.5, -3.0]:
    diff = q_azulay(xs, dl) - RE.q_delta(xs, dl)
    const_err = max(const_err, float(np.abs(diff + 0.5 * max(dl, 0.0) ** 1.5).max()) / (1 + float(np.abs(RE.q_delta(xs, dl)).max())))
print(f"q^A - q_delta + max(delta, 0)^(3/2) / 2 on x in [1e-3, 30], delta in {list(azulay_deltas) + [-0.5, -3.0]}: "
      f"{bound(const_err, 1e-12)} (relative)")

rng_a = np.random.default_rng([seed, 2])
az_rows = []
for dl in azulay_deltas:
    X_, y_, bls_, N_ = random_problem(rng_a, 1, 3)
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
argmin_err = max(max(err(r[4], RE.implicit_bias_limit(r[0], r[1], r[2], r[3])), err(r[4], a_az[j, -1] * W_az[j, :, -1]))
                 for j, r in enumerate(az_rows))
print(f"argmin of Azulay et al.'s objective (BFGS) vs implicit_bias_limit and vs the flow limit, delta in "
      f"{list(azulay_deltas)}: {bound(argmin_err, 1e-7)}")
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
# ## Fig. 8: the exact trajectories
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
fig, axes = plt.subplots(len(fig8_beta0_angles), 3, figsize=(14, 3.4 * len(fig8_beta0_angles)), layout="constrained",
                         sharex=True)
axes = np.atleast_2d(axes)
fig8_err, fig8_cross = 0.0, 0
dscale = max(abs(dl) for dl in fig8_deltas)
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
        a_c, u_c, s_c = RE.exact_parameters(t8, dl, np.linalg.norm(bstar8), a0_ * wn0, float(w0_ @ e8) / wn0)
        v0 = w0_ - (w0_ @ e8) * e8
        v_hat = v0 / np.linalg.norm(v0) if np.linalg.norm(v0) > 1e-12 else np.zeros(2)
        w_c = u_c[:, None] * e8 + s_c[:, None] * v_hat
        fig8_err = max(fig8_err, err(a_c, a_f[j]), err(w_c, W_f[j].T))
        col = "k" if dl == 0 else cmap(0.5 + np.sign(dl) * (0.2 + 0.3 * abs(dl) / dscale))
        for ax, th, fl in zip(axes[row], (a_c, w_c[:, 0], w_c[:, 1]), (a_f[j], W_f[j, 0], W_f[j, 1])):
            ax.plot(t8, th, "--", color="k", lw=1)
            ax.plot(t8[::16], fl[::16], "o", color=col, ms=4, label=f"$\\delta = {dl:g}$" + (" (a crosses 0)" if cr[j] else ""))
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
print(f"closed-form a(t), w(t) vs the integrated flow, {len(fig8_beta0_angles)} x {len(fig8_deltas)} runs: "
      f"{bound(fig8_err, 1e-8)}; {fig8_cross} of them cross zero")
_ = verified.record("Fig. 8: exact a(t), w(t) (App. A.2) = integrated flow, crossings included",
                    fig8_err < fig8_tol,
                    check=f"beta0 at {list(fig8_beta0_angles)} pi, delta in {list(fig8_deltas)}, t in [0, {fig8_T:g}]; "
                          f"independent DOP853; {fig8_cross} runs cross zero",
                    measured=bound(fig8_err, 1e-8), tolerance=f"{fig8_tol:.0e}", kind="independent")
_ = glue("fig8_err", bound(fig8_err, 1e-8))
_ = glue("fig8_crossings", str(fig8_cross))

# %%
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

# %%
verified.table()

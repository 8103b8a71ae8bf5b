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
# 1. The null-space part of $w$ is frozen ({prf:ref}`grq-lem-null-frozen`): the limit is known up to the sign of
#    $a_\infty$ ({eq}`grq-eq-limit`) on {glue:text}`n_flows` independent flows ([Sec. 1](#sec-grq-exact-dynamics-crossing)).
# 2. $a$ crosses zero at most once, for any $X$, and only if $L(\beta_0) > L(0)$
#    ({prf:ref}`grq-lem-one-crossing`): at most {glue:text}`max_crossings` per flow, none of the
#    {glue:text}`n_energy_draws` flows with $L(\beta_0) < L(0)$; the basin rule predicts
#    {glue:text}`iso_predicted` ([Sec. 1](#sec-grq-exact-dynamics-draws)).
# 3. Through a crossing, the flow ends at the minimizer of $\Psi_\delta$ with $-\beta_0$, for any $X$
#    ({prf:ref}`grq-rem-crossing`; App. A.4.4's mirror point $\beta^* - \alpha v$): {glue:text}`count_flipped`
#    crossing draws. Thm 3.1's $\beta^* + \alpha v$ misses by more than `miss_min` in {glue:text}`count_missed`
#    ({glue:text}`miss_range`), always by $2|a_\infty|\,\lVert P_N w_0\rVert$ (to {glue:text}`miss_law_err`), and by
#    {glue:text}`fig4_miss_range` on Fig. 4's problem from $-\beta_0$ ([Sec. 2](#sec-grq-exact-dynamics-limits),
#    [Sec. 3](#sec-grq-exact-dynamics-fig4)).
# 4. `flow_limit` returns $\beta(\infty)$ for any $X$ to {glue:text}`flow_limit_err`
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
from markovlib.book import specs
SPEC = specs.load("grq_exact_dynamics")
globals().update(SPEC.check(globals()))
SPEC.table()

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np

from markovlib.book import formatting, plotting
from markovlib.book.formatting import bound, fixed, fraction
from markovlib.book.glue import glue
from markovlib.book.report import Verification
from markovlib.book.sweep import record_results
from markovlib.richlazy import minimal_beyond, minimal_beyond_drawings, minimal_crossing, minimal_reference

plotting.use_style()
verified = Verification()  # one record per claim; the final cell prints the generated table
families = [(int(n_), int(d_)) for n_, d_ in families]
ranges = dict(delta_range=(delta_min, delta_max), sv_range=(sv_min, sv_max),
              beta_norm_range=(beta_norm_min, beta_norm_max))

# %% [markdown]
# Every check below compares with an independent integration: many single neurons at once, by scipy's DOP853, with
# events at the zeros of each $a$ (`minimal_reference.crossing_flow`: the flow written out, no markovlib function
# under test).

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
# The next cell draws them (`minimal_crossing.draw_families`, integrated by the independent `minimal_reference.crossing_flow`) and
# adds the package's predictions to each draw (`minimal_crossing.predict`: Thm 3.1 at $\pm\beta_0$,
# {eq}`grq-eq-limit`, `flow_limit` and the route by which `limit_sign` decided).

# %%
rows, n_topped = minimal_crossing.draw_families(
    np.random.default_rng(seed), families, n_draws, n_control, minimal_reference.crossing_flow, T_limit, settle_tol,
    top_up_rng=np.random.default_rng([seed, 2]),  # the top-up draws have their own stream
    crossings=minimal_crossing.crossings_needed(count_rate, count_family), **ranges)
rows = [minimal_crossing.predict(r) for r in rows]
n_flows, n_settled = len(rows), sum(r["settled"] for r in rows)
print(f"{n_flows} flows on {len(families)} data families {families} ({n_topped} topped up), {n_settled} settled "
      f"by T = {T_limit:g} (|beta(T) - beta(0.9 T)| < {settle_tol:.0e})")

# %% [markdown]
# The frozen null part, the number of crossings per flow, the energy condition and the sign condition, counted over
# all draws:

# %%
cc = minimal_beyond.crossing_counts(rows)
print(f"null-space part of w: max |P_N w(t) - P_N w0| {bound(cc['null_drift'], 1e-10)}")
print(f"zero crossings of a per flow: max {cc['max_crossings']}; flows that cross: {cc['cross']}")
print(f"flows with L(beta0) < L(0): {cc['energy']}, of which cross: {cc['energy_crossings']}")
print(f"crossing-prone draws (c^T beta0 < 0, delta in [{delta_min:g}, {delta_max:g}]): {cc['prone'] - cc['prone_nocross']} "
      f"of {cc['prone']} cross; of those that do not, delta_R >= 0 for {cc['nocross_R']}")

# %% [markdown]
# A sign condition alone does not decide a crossing: {glue:text}`n_prone_nocross` of the {glue:text}`n_prone`
# crossing-prone draws do not cross. Where $X^\top X/n$ is a multiple of $P_R$ the basin rule of {prf:ref}`grq-prop-a-2-5` on the row space decides
# the crossing. One sample is such a case; for the families with $n \ge 2$, `n_white` crossing-prone draws on
# whitened data (their own random stream) test the other.

# %%
iso_agree, n_iso, _ = minimal_beyond.basin_rule([r for r in rows if r["n"] == 1])  # X^T X / n a multiple of P_R
rng_white = np.random.default_rng([seed, 3])  # its own stream: the draws above do not move
white = [r for fam, (n, d) in enumerate(families) if n >= 2
         for r in minimal_crossing.draw_family(rng_white, n, d, n_white, 0, minimal_reference.crossing_flow, T_limit,
                                               settle_tol, family=fam, whitened=True, **ranges)]
white_agree, n_white_rows, white_cross = minimal_beyond.basin_rule(white)
white_C_err = minimal_beyond.whitened_error(white)
print(f"one-sample families: crossing predicted by the basin rule on the row space = observed for "
      f"{fraction(iso_agree, n_iso)} flows")
print(f"whitened data with n >= 2 (X^T X / n = lambda P_R to {bound(white_C_err, 1e-12)}): predicted = observed for "
      f"{fraction(white_agree, n_white_rows)} crossing-prone flows ({white_cross} cross)")

# %% tags=["hide-input"]
_ = verified.record("Lemma (frozen null part): P_N w(t) = P_N w0 along the flow, any X", cc["null_drift"] < 1e-8,
                    check=f"{n_flows} independent flows (scipy DOP853) on {len(families)} random data families, t in [0, {T_limit:g}]",
                    measured=bound(cc["null_drift"], 1e-10), tolerance="1e-8", kind="independent")
_ = verified.record("Lemma (one crossing): a crosses zero at most once, never when L(beta0) < L(0)",
                    cc["max_crossings"] <= 1 and cc["energy_crossings"] == 0 and cc["energy"] > 0,
                    check=f"zero events of a along {n_flows} independent flows; {cc['energy']} with L(beta0) < L(0)",
                    measured=f"max {cc['max_crossings']} per flow; {cc['energy_crossings']} of {cc['energy']} with "
                             f"L(beta0) < L(0) cross", tolerance="1 per flow; 0", kind="independent")
_ = verified.record("Lemma (one crossing): for one sample the basin rule on the row space predicts each crossing",
                    iso_agree == n_iso > 0,
                    check=f"sign(c1) a0 < 0 (basin_margin of (a0, P_R w0), beta* = beta_ls) vs zero events, {n_iso} flows",
                    measured=fraction(iso_agree, n_iso), tolerance="all", kind="independent")
if white:
    _ = verified.record("Lemma (one crossing): for whitened data (n >= 2) the basin rule on the row space predicts each crossing",
                        white_agree == n_white_rows and white_C_err < 1e-10,
                        check=f"X^T X / n = lambda P_R, {n_white_rows} crossing-prone flows of the families with n >= 2; "
                              f"sign(c1) a0 < 0 vs zero events",
                        measured=f"{fraction(white_agree, n_white_rows)} ({white_cross} cross)",
                        tolerance="all", kind="independent")
for name, value in dict(n_flows=n_flows, max_crossings=cc["max_crossings"], n_energy_draws=cc["energy"],
                        n_prone=cc["prone"], n_prone_nocross=cc["prone_nocross"]).items():
    _ = glue(name, str(value))
_ = glue("iso_predicted", f"{fraction(iso_agree, n_iso)} one-sample flows"
                 + (f" and {fraction(white_agree, n_white_rows)} whitened flows with two or three samples" if white else ""))

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
lim = minimal_beyond.limit_summary(rows, limit_tol, miss_min)
routes_text = ", ".join(f"{k} {v}" for k, v in lim["routes"].items())
print(f"closed form (grq-eq-limit) with the observed sign vs flow, all settled flows: {bound(lim['closed_err'], 1e-8)}")
print(f"flow_limit vs flow, all settled flows: {bound(lim['fl_err'], 1e-8)}; sign of a(inf) from limit_sign = observed "
      f"for {fraction(lim['sign_agree'], n_flows)}; routes: " + routes_text)

# %% [markdown]
# `limit_sign` decided the sign by these routes: {glue:text}`routes`. Family by family: the crossing flows against the mirror minimizer and against the A.4.4 form, the others against
# Thm 3.1 as stated.

# %%
print(minimal_beyond.family_table(rows, families))

# %% tags=["hide-input"]
_ = verified.record_count("Remark (crossing): crossing flows end at argmin Psi_delta with -beta0", lim["confirmed"],
                          lim["cross"], rate=count_rate, unit="crossing draws", family=count_family,
                          check=f"independent flows to T = {T_limit:g} vs implicit_bias_limit(X, y, -beta0, delta), "
                                f"within {limit_tol:.0e} and settled", kind="independent")
_ = verified.record("Remark (crossing): the A.4.4 closed form misses each crossing flow by 2 |a_inf| |P_N w0|",
                    lim["miss_law_err"] < limit_tol and lim["cross_settled"] > 0,
                    check=f"|flow limit - implicit_bias_limit(X, y, beta0, delta)| (max norm) vs 2 |a_inf| max|P_N w0| "
                          f"from (grq-eq-limit), {lim['cross_settled']} settled crossing draws; {lim['missed']} of them "
                          f"missed by more than {miss_min:g}",
                    measured=bound(lim["miss_law_err"], 1e-8), tolerance=f"{limit_tol:.0e}", kind="independent")
_ = verified.record("Thm 3.1 as stated: flows that do not cross end at argmin Psi_delta",
                    lim["thm_err"] < limit_tol and lim["nocross_settled"] > 0,
                    check=f"{lim['nocross_settled']} settled flows without a crossing vs implicit_bias_limit(X, y, beta0, delta)",
                    measured=bound(lim["thm_err"], 1e-8), tolerance=f"{limit_tol:.0e}", kind="independent")
_ = verified.record("Prop. (limit up to a sign): beta(inf) = beta_ls + sign(a_inf) |a_inf| P_N w0",
                    lim["closed_err"] < limit_tol and lim["settled"] >= 0.9 * n_flows,
                    check=f"{lim['settled']} of {n_flows} flows settled; the closed form with the observed sign of a(T)",
                    measured=bound(lim["closed_err"], 1e-8), tolerance=f"{limit_tol:.0e}", kind="independent")
_ = verified.record("flow_limit = the independent flow limit, crossing or not, for general X",
                    lim["fl_err"] < limit_tol and lim["sign_agree"] == n_flows,
                    check="routes: " + routes_text + f"; limit_sign vs sign a(T) on all {n_flows}",
                    measured=f"{bound(lim['fl_err'], 1e-8)}; signs {fraction(lim['sign_agree'], n_flows)}",
                    tolerance=f"{limit_tol:.0e}; all", kind="independent")
misses = lim["misses"]
_ = glue("count_flipped", f"{fraction(lim['confirmed'], lim['cross'])}")
_ = glue("count_missed", f"{fraction(lim['missed'], lim['cross'])}")
_ = glue("miss_law_err", bound(lim["miss_law_err"], 1e-8))
_missed = misses[misses > miss_min]
_ = glue("miss_range", (f"{fixed(_missed.min(), 2)} to {fixed(_missed.max(), 2)}" if _missed.size else "-")
                + (f"; the other {misses.size - _missed.size} by at most {fixed(misses[misses <= miss_min].max(), 3)}"
                   if _missed.size < misses.size else ""))
_ = glue("flow_limit_err", bound(lim["fl_err"], 1e-8))
_ = glue("routes", ", ".join(f"{k}: {v} draws" for k, v in lim["routes"].items()))

# %% [markdown]
# (sec-grq-exact-dynamics-fig4)=
# ## 3. The paper's Fig. 4 problem, started from $-\beta_0$
#
# The one-sample problem of Fig. 4 ($x = (0.5, 1)$, $y = 1.1$) has a one-dimensional null space, spanned by $v$.
# The A.4.4 closed form is written out in `minimal_reference.a44_closed_form`: $\beta = \beta^* + \alpha v$ with $\alpha = k\,|a_\infty|$,
# $k = \lVert w_0\rVert\,\hat\beta_0^\top v$, and $a_\infty^2 = \kappa + \sqrt{\kappa^2 + \lVert\beta^*\rVert^2}$,
# $\kappa = (k^2 + \delta)/2$ (the first-order condition of $\Psi_\delta$ along the line, solved for $\alpha$; the
# same expression the authors' public code evaluates). Started from `fig4_beta0` (minus the paper's $\beta_0$, so
# $y\,x^\top\beta_0 < 0$), the flows at the paper's downstream $\delta$ pass through the origin and end at
# $\beta^* - \alpha v$, as App. A.4.4 remarks. At $\delta = -0.5$ the row-space $\delta_R$ is positive, and $a$ keeps its sign.

# %% [markdown]
# The flows from `fig4_beta0` at each $\delta$ of `fig4_deltas`, integrated independently, against the A.4.4 form
# and its mirror image $\beta^* - \alpha v$:

# %%
fig4 = minimal_beyond.fig4_mirror(fig4_x, fig4_y, fig4_beta0, fig4_deltas, T_limit)
print(fig4["table"])

# %% tags=["hide-input"]
_ = verified.record("App. A.4.4 closed form = implicit_bias_limit (the authors' formula is argmin Psi_delta)",
                    fig4["a44_vs_psi"] < 1e-10, check=f"Fig. 4 problem from fig4_beta0 at delta in {fig4_deltas}",
                    measured=bound(fig4["a44_vs_psi"], 1e-12), tolerance="1e-10", kind="independent")
_ = verified.record("Remark (crossing), Fig. 4 problem: crossing flows end at beta* - alpha v, the others at beta* + alpha v",
                    fig4["flip_err"] < limit_tol and len(fig4["misses"]) > 0,
                    check=f"independent flows to T = {T_limit:g} from fig4_beta0; {len(fig4['misses'])} of "
                          f"{len(fig4_deltas)} cross", measured=bound(fig4["flip_err"], 1e-8), tolerance=f"{limit_tol:.0e}",
                    kind="independent")
_ = glue("fig4_miss_range", f"{fixed(min(fig4['misses']), 2)} to {fixed(max(fig4['misses']), 2)}")

# %% [markdown]
# The figure shows, left, the Fig. 4 problem in function space. The flows from $-\beta_0$ pass through the
# origin; open circles mark the A.4.4 closed form, filled ones the mirror limit (labelled "corrected" in the
# plot). On the right, every random
# draw is placed by its distance to the two predictions. Crossing flows sit on the mirror one and far from Thm
# 3.1 as stated; the others do the opposite.

# %%
minimal_beyond_drawings.draw_mirror(fig4, fig4_x, fig4_y, fig4_beta0, fig4_deltas, rows)
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
# dense output. Then it compares {eq}`grq-eq-mdot` (`minimal_model.mdot_terms`) with fourth-order central differences
# of $M(t) = a^2 I + w w^\top$ taken on the integrated path (`minimal_reference.fd_M_derivative`). It also integrates
# the norms of the two terms over $[0, T]$: $I_{norm}$ and $I_{dir}$ (all in `minimal_beyond.kernel_dynamics`).

# %%
Xk, yk, Ck, ck, b0k = minimal_crossing.kernel_problem(np.random.default_rng([seed, 1]), sv_range=(sv_min, sv_max))
assert b0k @ (Ck @ b0k / 2 - ck) < 0  # L(beta0) < L(0): a keeps its sign
kernel_deltas = [-kernel_delta, 0.0, kernel_delta]
kern = minimal_beyond.kernel_dynamics(Ck, ck, b0k, kernel_deltas, kernel_T, fd_step)
mdot_err, shares, ratios, changes = kern["err"], kern["shares"], kern["ratios"], kern["changes"]

# %% [markdown]
# The finite-difference error is the $(h\,\text{rate})^4$ truncation, a deterministic function of `fd_step` and the
# flows: it prints as a bound (`formatting.ladder_limit`: a round value at least 1.5 times its value) and never below $10^{-8}$, ten
# times the rounding floor of the differences.
#
# The path length $I_{norm} + I_{dir}$ of $M$ on $[0, T]$ (the integral of the norms of the two terms of $\dot M$) is an
# upper bound on $\lVert M(T) - M(0)\rVert$. Upstream ($\delta$ = `kernel_delta`) it must stay below `lazy_change_max`
# of $\lVert M(0)\rVert$ (lazy); downstream ($\delta$ = $-$`kernel_delta`) the direction term must exceed the norm term
# by the factor `order_ratio` (delayed rich); balanced, the two must be of the same order, within that factor (rich).

# %%
mdot_print = formatting.ladder_limit(mdot_err, margin=1.5, floor=1e-8)
assert mdot_print < mdot_tol or not mdot_err < mdot_tol
print(f"dM/dt (grq-eq-mdot) vs fourth-order finite differences of M(t), {kern['n_fd']} times per flow: "
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
minimal_beyond_drawings.draw_mdot_terms(kern)
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
# Azulay et al.'s objective, found by BFGS over the null-space coordinates (`minimal_reference.azulay_argmin`), is compared with
# `implicit_bias_limit` and with independent flow limits on random one-sample problems with $d = 3$. For the
# evaluation, $\sqrt{s - \delta/2}$ is computed as $x/\sqrt{s + \delta/2}$ (the same number without cancellation).

# %%
const_err = minimal_beyond.azulay_constant_error(list(azulay_deltas) + [-0.5, -3.0])
print(f"q^A - q_delta + max(delta, 0)^(3/2) / 2 on x in [1e-3, 30], delta in {list(azulay_deltas) + [-0.5, -3.0]}: "
      f"{bound(const_err, 1e-12)} (relative)")

# %% [markdown]
# The minimizer of Azulay et al.'s objective, by BFGS over the null-space coordinates of random one-sample problems
# in $d = 3$ (their own random stream), against `implicit_bias_limit` and the independent flow limits:

# %%
argmin_err, az_crossed = minimal_beyond.azulay_argmin_error(
    np.random.default_rng([seed, 2]), azulay_deltas, T_limit, (sv_min, sv_max), (beta_norm_min, beta_norm_max))
print(f"argmin of Azulay et al.'s objective (BFGS) vs implicit_bias_limit and vs the flow limit, delta in "
      f"{list(azulay_deltas)}: {bound(argmin_err, 1e-7)}")

# %% tags=["hide-input"]
_ = verified.record("App. A.4.3: Azulay et al.'s q = q_delta - max(delta, 0)^(3/2) / 2", const_err < 1e-11,
                    check="grid of 400 x in [1e-3, 30] at each delta, Azulay's formula written out vs q_delta",
                    measured=bound(const_err, 1e-12), tolerance="1e-11 (relative)", kind="independent")
_ = verified.record("Thm A.2 (Azulay et al.'s Thm 2): its minimizer = implicit_bias_limit = the flow limit",
                    argmin_err < 1e-5 and not az_crossed,
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
fig8 = minimal_beyond.fig8_runs(fig8_beta_star, fig8_beta0_angles, fig8_deltas, fig8_T)
fig8_err, fig8_cross = fig8["err"], fig8["crossings"]
print(f"closed-form a(t), w(t) vs the integrated flow, {len(fig8_beta0_angles)} x {len(fig8_deltas)} runs: "
      f"{bound(fig8_err, 1e-8)}; {fig8_cross} of them cross zero")

# %% [markdown]
# The closed forms (dashed) over the integrated flows (markers), one row per start:

# %%
minimal_beyond_drawings.draw_fig8(fig8, fig8_beta0_angles, fig8_deltas, fig8_beta_star)
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
_ = record_results({"crossing_draws": lim["cross"], "crossing_confirmed": lim["confirmed"], "a44_missed": lim["missed"],
                    "a44_miss_max": float(misses.max()), "flow_limit_max_error": lim["fl_err"], "mdot_max_rel_error": mdot_err,
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

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
#       '1': the batch of the sets b1s_lr4 to b1s_lr7 (book/data/escape_long/manifest_b1s_lr4.json
#         batch)
#       '1000': the window of markovlib.transformer.escape_long.initial_drift (its default)
#       '16': the batch of the stored set and of the extension (book/data/escape/manifest.json
#         batch)
#       1e-3: AdamW's weight decay in the stored runs (markovlib.transformer.escape.OPTIMIZER_ARMS;
#         the paper's decay, Sec. 7)
#       '2': the escape criterion of markovlib.transformer.plateau_drift.integrate_plateau
#         (smallest curvature at 2 % of its start)
#       '4': the learning rate of the stored plain-SGD arm (book/data/escape/manifest.json)
#         whose law column is quoted
#       '50': the stored set's evaluation spacing (book/data/escape/manifest.json eval_every)
# ---

# %% [markdown]
# # Trap or plateau: the unigram minimum under four optimizers
#
# Part I proves that gradient flow from the standard initialization on a chain with $p + q > 1$ ends at the unigram
# minimum: the initialization fixes the conserved energy $E(e, w)$ ({prf:ref}`Lemma 1 <lem-1>`), and from it the flow
# cannot reach the bigram minimum ({prf:ref}`Thm 2 <thm-2>`). Yet AdamW leaves the unigram loss after a few hundred
# steps ({doc}`init_guideline`, {doc}`authors_fig4`). Is the unigram minimum a *trap* that only some optimizers leave,
# or a *plateau* that every optimizer leaves given time? This chapter reads stored runs of the full model under SGD,
# momentum, Adam and AdamW, and follows the energy of its canonical projection along training.
#
# ## What this chapter shows
#
# 1. **The flow's verdict.** From every stored initialization {prf:ref}`Thm 2 <thm-2>` sends the flow to the
#    unigram minimum ({glue:text}`tp_init_trap`; an escape needs $|e_0| \ge$ {glue:text}`tp_e0_needed`, the largest
#    is {glue:text}`tp_e0_max`) ([verdict](#sec-tp-verdict)).
# 2. **SGD and momentum do not leave it within the horizon** ({glue:text}`tp_sgd_summary`), nor SGD at lr 4 within
#    ten horizons ({glue:text}`tp_ext_ended` ended) ([escape times](#sec-tp-escape), [longer](#sec-tp-extend)).
# 3. **The SGD drift law**, derived and fit-free, says why their energy rises ({glue:text}`tp_sgd_rise` runs with
#    $w_0 < 0$) and matches the stored drift of $w$ (median ratio
#    {glue:text}`tp_law_ratio`, {glue:text}`tp_law_n` runs; at new step sizes {glue:text}`tp_rate_ratios`);
#    integrated, it ends the plateau at lr 4 after
#    {glue:text}`tp_law_escape` steps ([the law](#sec-tp-law)).
# 4. **Tested where it can fail, it fails on time.** At batch 1 and four step sizes the plateau ends in
#    {glue:text}`tp_b1_total` runs, {glue:text}`tp_b1_factor` times before the law's prediction, near its point of
#    instability, each by divergence: $|w|$ grows by orders of magnitude where the law's drift barely moves it
#    ([the test](#sec-tp-test)).
# 5. **Adam and AdamW leave it** in every arm ({glue:text}`tp_adam_summary`; Kaplan-Meier medians there).
# 6. **The escape and the energy.** Every escaping run's projection enters the flow's global basin
#    ({glue:text}`tp_entry_summary`) ([energy](#sec-tp-energy)).
# 7. **How fast $E$ moves.** Under SGD and momentum the late drift grows as $\mathrm{lr}^k$ with
#    {glue:text}`tp_late_exponents`; Adam multiplies $|w|$ by {glue:text}`tp_adam_growth` early
#    ([drift rates](#sec-tp-drift)).
#
# (sec-tp-parameters)=
# ## Parameters
#
# The stored set fixes the runs; these parameters fix how the chapter reads them, before the data are read. A claim
# over runs holds when its one-sided 95 % Wilson lower end, with Bonferroni over the arms, exceeds `rate`.

# %% tags=["parameters"]
escape_ratio = 0.5  # c-hat / c* at which a run has left the unigram plateau (the stored set's threshold; 0.3 to 0.9)
rate = 0.5  # a claim over runs holds when its one-sided 95 % Wilson lower end (Bonferroni over the arms) exceeds this (0.5 to 0.7)
drift_steps = 50  # window of the early drift, in steps (a multiple of 50 in [50, 250]: before the earliest escape)
drift_factor = 10.0  # Adam moves w more than SGD: its median |w(t) - w(0)| at the smaller lr over SGD's at the larger exceeds this
late_start = 1000  # SGD's late drift of E is measured from this step to the horizon (after the first-steps transient; 500 to 5000)
sgd_exponent = [1.5, 2.5]  # the late drift of E under SGD and momentum grows as lr^k with k in this range (second order: 2)
slice_seed = 0  # the stored seed whose 16 runs the chapter re-executes live (0 to 19)
slice_steps = 100  # steps re-executed per run (50 to 300, and inside the seed's measured deterministic prefix)
law_band = 1.1  # the drift law's median ratio law / stored of the drift of w lies in [1/law_band, law_band] (1.01 to 2)
law_run_band = 1.5  # ... and every run's ratio in [1/law_run_band, law_run_band] (1.1 to 10)
clip_share_max = 1e-3  # clipping does not enter the law: Markov's bound on the clipped share stays below this
escape_band = [0.6, 0.9]  # the law's escape step is f t_sad with f in this band (the stored integrations: 0.60 to 0.90)
escape_min = 15  # a plateau, not a trap: at least this many of the 20 seeds escape within each batch-1 horizon
escape_alpha = 0.05  # family-wise level of the Kaplan-Meier medians' intervals (Bonferroni over the step sizes tested)
rate_band = 1.25  # at lr 2 and 6 (batch 16) the median ratio law / measured of the drift of w lies in [1/rate_band, rate_band]
rate_sign_min = 15  # at lr 8, the bias's stability edge, the law gets the drift's sign right in at least this many seeds

# %%
from markovlib.book import specs
SPEC = specs.load("trap_or_plateau")
globals().update(SPEC.check(globals()))
SPEC.table()

# %% [markdown]
# (sec-tp-stored)=
# ## The stored runs
#
# Each run is `markovlib.transformer.escape.train_with_energy` on `escape_config(p, q, optimizer, lr, seed, 10000)`:
# the Trainer of the book with a constant learning rate from the first step (no warm-up and no decay of the rate, so
# the horizon only censors and does not shape the run). At every evaluation it records the held-out loss,
# $\hat c / c^*$ (the context coefficient over its bigram value: 0 at the unigram predictor, 1 at the bigram one), and
# the canonical projection of `canonical_scalars`: $\alpha$ and $u$ from the top singular pair of $W_1$,
# $w = \alpha^\top W_2 u / 4$, $e = \langle e_{vec}, \alpha\rangle$, and $E(e, w)$. The full model is not rank one
# (the top singular fraction of $W_1$ is recorded too), so $(e, w)$ is a projection, not the state: the theorems apply
# to it only approximately, and the chapter tests how far.
#
# *Adam* is AdamW with zero weight decay (the same update: no decay, and no $L_2$ term either); *AdamW* decays the
# weights by $10^{-3}$. SGD with momentum 0.9 at learning rates 0.1 and 0.4 takes the same effective steps
# $\mathrm{lr}/(1 - 0.9)$ as plain SGD at 1 and 4. Every run clips the gradient at norm 1 (the package default), so a
# step moves the weights by at most the learning rate times 1 under SGD; the stored set was made with it, and any law
# of the drift of $E$ read from these runs is a law of the clipped step.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from markovlib.book import formatting, plotting, report
from markovlib.book.glue import glue
from markovlib.book.sweep import record_results
from markovlib.markov.canonical import c_star
from markovlib.markov.energy import SADDLE_ENERGY, energy
from markovlib.numerics.survival import median_time
from markovlib.transformer import (drift_check, escape_drawings, escape_extension, escape_long, escape_rates,
                                   escape_stored)

plotting.use_style()
verified = report.Verification()
S = escape_stored.load()  # book/data/escape, every file against the manifest's sha256; the flow's verdict per row
for pq in S.chains:
    print(f"chain p={pq[0]:g}, q={pq[1]:g}: c* = {formatting.fixed(c_star(*pq), 4)}")
print(f"E_sad = {formatting.fixed(SADDLE_ENERGY, 6)}; {len(S.runs)} runs of {S.horizon} steps, evaluated every "
      f"{escape_stored.EVAL_EVERY}")

# %% tags=["hide-input"]
complete, measured = escape_stored.completeness(S)
verified.record("the stored set is complete: every arm, 20 seeds, every run to the horizon", complete,
                check="manifest's sha256 of each file, planned runs against stored runs, last step of every curve",
                measured=measured, tolerance="all", kind="stored data")
print(f"stored by {S.manifest['provenance']['command']} in {S.manifest['provenance']['wall_seconds'] / 60:.0f} min")
_ = [glue(k, v) for k, v in (("tp_n_runs", f"{len(S.runs)}"), ("tp_horizon", f"{S.horizon}"),
                              ("tp_ratio", f"{escape_ratio:g}"), ("tp_drift_steps", f"{drift_steps}"))]

# %% [markdown]
# A run *leaves the plateau* at the first evaluation at which $\hat c / c^*$ reaches `escape_ratio`; a run that never
# does is censored at the horizon.

# %%
esc = escape_stored.escapes(S, escape_ratio)  # NaN: censored at the horizon
print(f"{int(esc.notna().sum())} runs leave the plateau, {int(esc.isna().sum())} are censored at step {S.horizon}")

# %% tags=["hide-input"]
if np.isclose(escape_ratio, S.manifest["escape_ratio"]):  # runs.csv holds the escape steps at the stored threshold
    verified.record("runs.csv's escape steps are those of the stored curves", escape_stored.stored_escapes_agree(S, esc),
                    check="escape_step (markovlib) on every stored curve against the stored column",
                    measured=f"{int(esc.notna().sum())} escapes, {int(esc.isna().sum())} censored, all equal",
                    tolerance="equal", kind="stored data")

# %% [markdown]
# (sec-tp-verdict)=
# ## The flow's verdict at the initialization
#
# For $p + q > 1$ the bigram minimum has $c^* < 0$ (with this book's sign of $c$), and $c = e^2(1 + 2w|w|)$ is
# negative only where $w < -1/\sqrt 2$. From $w_0 > 0$ the flow keeps $c > 0$ and ends on the unigram line; from
# $w_0 < 0$ it reaches the bigram minimum only from the global basin, which for small $|w_0|$ needs
# $E_0 > E_{sad}$ ({prf:ref}`Thm 2 <thm-2>`). With $E_0 = e_0^2 - w_0^2 + \log|w_0|$ on $w_0 < 0$, that is
# $e_0^2 > E_{sad} + w_0^2 - \log|w_0|$: for the standard initialization's $|w_0| \sim 10^{-3}$, far beyond its
# $|e_0|$. So the verdict below documents the starting point; it is an identity of this initialization, not a test.
# `energy.predict_limit` reads the limit off $(w_0, E_0)$.

# %%
V = escape_stored.init_verdict(S)
print("\n".join(V["lines"]))

# %% tags=["hide-input"]
verified.record("every arm of a seed starts from the same initialization", V["same_init"],
                check="(e, w) at step 0 across the 8 arms of each (chain, seed)", measured="1 distinct (e, w) per seed",
                tolerance="1", kind="identity")
for pq, (k, n) in V["counts"].items():
    verified.record_count(f"Thm 2 at the initialization, p={pq[0]:g}, q={pq[1]:g}: the flow ends on the unigram line",
                          k, n, rate=rate, family=len(S.chains), unit="seeds", kind="identity",
                          check="predict_limit on the stored projection (e0, w0) of every seed "
                          "(cannot fail: |e0| is far below what an escape needs)")
for name, text in (("tp_n_inits", f"{V['init'].seed.nunique()}"), ("tp_e0_needed", formatting.fixed(V["e0_needed"], 2)),
                   ("tp_e0_max", formatting.fixed(V["init"].e.abs().max(), 3)),
                   ("tp_init_trap", ", ".join(f"{formatting.fraction(k, n)} seeds on p = {pq[0]:g}, q = {pq[1]:g}"
                                              for pq, (k, n) in V["counts"].items()))):
    glue(name, text)

# %% [markdown]
# (sec-tp-escape)=
# ## Escape times: Kaplan-Meier curves per optimizer
#
# A run that has not left the plateau by step $10^4$ is *censored* there: its escape time is only known to exceed
# the horizon. The Kaplan-Meier estimate (`markovlib.numerics.survival`) of the fraction still on the plateau,
# $S(t) = \prod_{t_j \le t}(1 - d_j / n_j)$, with the log-log Greenwood 95 % interval, uses every run, censored or
# not. Each arm is one curve; each claim below is tested per arm, with Bonferroni over the arms of its group.

# %%
km, table = escape_stored.survival(S, esc)
print(table.to_string(index=False))

# %% tags=["hide-input"]
A = escape_stored.arm_claims(S, esc, escape_ratio)
for row in A["sgd"]:  # SGD and momentum: stay on the plateau, per arm
    verified.record_count(**row, rate=rate, kind="stored data")
for row in A["adam"]:  # Adam and AdamW: leave it, per arm
    verified.record_count(**row, rate=rate, kind="stored data")
_ = glue("tp_adam_summary", f"{formatting.fraction(A['k_adam'], A['n_adam'])} runs left it")

# %%
escape_drawings.survival_figure(S, km)
plt.show()

# %% [markdown]
# Seed by seed: does AdamW's weight decay change the escape step against Adam's, and does the larger learning rate
# leave first?

# %%
pairs = escape_stored.seed_pairs(S, esc)
for pq, opt, k, n, ratio in pairs["lr"]:
    print(f"{opt}, p={pq[0]:g}, q={pq[1]:g}: larger lr first in {formatting.fraction(k, n)} seeds; median ratio of "
          f"escape steps (smaller lr / larger) {ratio:.3g}")

# %% tags=["hide-input"]
for pq, lr, k, n in pairs["decay"]:
    verified.record_count(f"lr {lr:g}, p={pq[0]:g}, q={pq[1]:g}: AdamW's decay 1e-3 leaves the escape step as Adam's",
                          k, n, rate=rate, family=len(pairs["decay"]), unit="seeds", kind="stored data",
                          check=f"same seed: escape steps within one evaluation ({escape_stored.EVAL_EVERY} steps) or both censored")
for pq, opt, k, n, ratio in pairs["lr"]:
    verified.record_count(f"{opt}, p={pq[0]:g}, q={pq[1]:g}: the larger lr leaves the plateau first", k, n,
                          rate=rate, family=len(pairs["lr"]), unit="seeds", kind="stored data",
                          check="same seed: escape step at the larger lr < at the smaller (censored counts as later)")
glue("tp_decay_summary", "the same escape step within one evaluation in " + formatting.fraction(
    sum(x[2] for x in pairs["decay"]), sum(x[3] for x in pairs["decay"])) + " seed pairs")
_ = glue("tp_lr_summary", f"{formatting.fraction(sum(x[2] for x in pairs['lr']), sum(x[3] for x in pairs['lr']))} seed pairs")

# %% [markdown]
# AdamW's decay of $10^{-3}$ leaves the escape as Adam's ({glue:text}`tp_decay_summary`; a weak test, since the decay
# shrinks the weights by only lr × 1e-3 per step), and the larger learning rate leaves first in
# {glue:text}`tp_lr_summary`.
#
# (sec-tp-energy)=
# ## The conserved energy along real training
#
# A run's projection is in the flow's *global basin* when `predict_limit` at its current $(e, w)$ says that gradient
# flow from there would end at the bigram minimum. Per arm the chapter records whether the projection ever enters
# it (for SGD it must not, if the trap is the flow's), and for every escaping run the signed lag: the escape step
# minus the first step in the basin (positive: the projection enters first). (A first reading, made after a look at
# the first 190 stored runs, counted a "coincidence" within a window of 500 steps; a review showed that such a window
# is longer than the fastest escapes and that the verdict flipped with the window, so the chapter reports the lags.)

# %%
outside = escape_stored.basin(S)
print(f"SGD and momentum: the projection stays outside the global basin in "
      f"{formatting.fraction(int(outside.sum()), A['n_sgd'])} runs")

# %% tags=["hide-input"]
for a in A["sgd_arms"]:
    o = outside.loc[S.arm(a)]
    verified.record_count(f"{a[1]} lr {a[2]:g}, p={a[0][0]:g}, q={a[0][1]:g}: the projection never enters the global "
                          "basin", int(o.sum()), len(o), rate=rate, family=len(A["sgd_arms"]), unit="runs",
                          kind="stored data", check="predict_limit at every evaluation's (e, w)")
_ = glue("tp_sgd_summary", f"{formatting.fraction(A['k_sgd'], A['n_sgd'])} runs stay on the plateau and "
         f"{formatting.fraction(int(outside.sum()), A['n_sgd'])} keep the projection outside the global basin at every "
         "evaluation")

# %% [markdown]
# How far does SGD move $E$? For the runs with $w_0 < 0$ (from $w_0 > 0$ no value of $E$ lets the flow escape), the
# largest move of $E$ over the horizon against the climb from $E(0)$ to $E_{sad}$ that an escape needs:

# %%
sgd_move, gap = escape_rates.sgd_energy_move(S)
print(f"SGD and momentum, the {len(sgd_move)} runs with w0 < 0: largest |E(t) - E(0)| over the horizon "
      f"{formatting.fixed(sgd_move.max(), 3)}; smallest climb from E(0) to E_sad {formatting.fixed(gap.min(), 3)}")
glue("tp_sgd_energy_max", f"over the runs with w0 < 0 the largest |E(t) - E(0)| is "
     f"{formatting.fixed(sgd_move.max(), 2)}, against a climb of at least {formatting.fixed(gap.min(), 2)} to E_sad")

# %% [markdown]
# The escaping runs of Adam and AdamW: does the projection enter the global basin, and when, against the escape?

# %%
esc_idx, lag, lag_table = escape_stored.lags(S, esc)  # lag > 0: the projection enters the basin first
print("escape step minus first step in the flow's global basin (steps; evaluations every 50):")
print(lag_table.to_string(index=False))

# %% tags=["hide-input"]
for a in A["adam_arms"]:
    sel = [k for k in esc_idx if k[:4] == S.arm(a)]
    verified.record_count(f"{a[1]} lr {a[2]:g}, p={a[0][0]:g}, q={a[0][1]:g}: every escaping run's projection enters "
                          "the global basin", int(lag[sel].notna().sum()), len(sel), rate=rate,
                          family=len(A["adam_arms"]), unit="runs", kind="stored data",
                          check="predict_limit at every evaluation's (e, w), up to the horizon")
glue("tp_entry_summary", f"{formatting.fraction(int(lag.notna().sum()), len(esc_idx))} runs")
_ = glue("tp_lag_summary", "; ".join(
    f"from {lag[[k for k in esc_idx if k[:2] == pq and k[3] == lr]].min():.0f} to "
    f"{lag[[k for k in esc_idx if k[:2] == pq and k[3] == lr]].max():.0f} steps at lr {lr:g} on "
    f"p = {pq[0]:g}, q = {pq[1]:g}" for pq in S.chains for lr in S.lrs["adam"]))

# %% [markdown]
# On $w < 0$, $E(e, -1/\sqrt 2) = e^2 + E_{sad} \ge E_{sad}$ for every $e$: the set $\{E < E_{sad}, w < 0\}$ has two
# components, $|w|$ below and above $1/\sqrt 2$, and a path from one to the other passes through $E \ge E_{sad}$.
# This is deduced from continuity; the evaluations, every 50 steps, see the projection at the escape's evaluation
# in one of three places:

# %%
places = escape_stored.escape_places(S, esc, esc_idx)
for pq, text in places:
    print(f"p={pq[0]:g}, q={pq[1]:g}, at the escape: {text}")

# %% tags=["hide-input"]
e_grid = np.linspace(-3, 3, 61)
saddle_gap = float(np.max(np.abs(energy(e_grid, np.full_like(e_grid, -1 / np.sqrt(2))) - (e_grid ** 2 + SADDLE_ENERGY))))
verified.record("E(e, -1/sqrt 2) = e^2 + E_sad: crossing w = -1/sqrt 2 needs E >= E_sad", saddle_gap < 1e-12,
                check="energy() on 61 values of e in [-3, 3] against e^2 + E_sad",
                measured=formatting.bound(saddle_gap, 1e-14), tolerance="1e-12", kind="identity")
glue("tp_escape_places", "; ".join(f"{text} escaping runs on p = {pq[0]:g}, q = {pq[1]:g}" for pq, text in places))
glue("tp_escape_above", " and ".join(formatting.fraction(k, n) for k, n in escape_stored.escape_above(S, esc, esc_idx))
     + " escaping runs on the two chains")

# %%
escape_drawings.energy_figure(S, esc)
plt.show()

# %% [markdown]
# (sec-tp-drift)=
# ## How fast each optimizer moves $E$
#
# The closing chapter derives that one gradient-descent step changes a conserved quantity by
# $\tfrac{h^2}{2} g^\top \nabla^2 E\, g + O(h^3)$, second order in the step $h$, while Adam's normalized step changes
# it at first order ({prf:ref}`closing-prop-gd`). Here $E$ is that of the projection of a full model, which even the
# flow does not conserve exactly, so the exponents are measurements. For SGD and momentum, two windows, each giving
# the exponent $k = \log(\mathrm{drift}_2/\mathrm{drift}_1) / \log(\mathrm{lr}_2/\mathrm{lr}_1)$ of the median
# drift over the seeds at the two learning rates:
#
# * **early**: $|E(t) - E(0)|$ at $t$ = `drift_steps`;
# * **late**: $|E(T) - E(t_{late})|$ from $t_{late}$ = `late_start` to the horizon $T$. The late window was fixed after
#   a look at the first 190 stored runs, which showed that the first steps carry a transient (the fast weights
#   settle) that grows more slowly than $\mathrm{lr}^2$; its range `sgd_exponent` is the second order of
#   {prf:ref}`closing-prop-gd` with a margin.
#
# Each exponent is a two-point fit over two step sizes a factor 4 apart, so it is a measurement at these step sizes,
# not a law; the early window shows exponents well below 2, and whether SGD's drift is second order is not decided
# by these runs. Every step is clipped at gradient norm 1.
#
# For Adam the energy is the wrong yardstick: its first steps carry $w$ across the invariant line $w = 0$, where
# $E = \pm\infty$, in many runs. The chapter counts those crossings (a change of the sign of $w$ between two
# evaluations in the early window), the factor by which $|w|$ grows, and compares the displacement $|w(t) - w(0)|$
# with SGD's.

# %%
early_exp, late_exp, lines = escape_rates.drift_exponents(S, esc, drift_steps, late_start)
print("\n".join(lines))

# %% tags=["hide-input"]
for (pq, opt), k in late_exp.items():
    verified.record(f"{opt}, p={pq[0]:g}, q={pq[1]:g}: the late drift of E is second order in the step",
                    sgd_exponent[0] <= k <= sgd_exponent[1],
                    check=f"median |E({S.horizon}) - E({late_start})| over the seeds at the two learning rates",
                    measured=f"exponent {k:.2f}", tolerance=f"in [{sgd_exponent[0]:g}, {sgd_exponent[1]:g}]",
                    kind="stored data")
span = lambda ex, opt: f"{opt} {min(ex[pq, opt] for pq in S.chains):.2f} to {max(ex[pq, opt] for pq in S.chains):.2f}"  # noqa: E731
glue("tp_late_exponents", ", ".join(span(late_exp, opt) for opt in escape_stored.SGD_LIKE))
_ = glue("tp_exponents", " and ".join(span(early_exp, opt) for opt in escape_stored.SGD_LIKE))

# %% [markdown]
# For Adam the sign of $w$ and the size of its moves tell more than $E$: in the early window, how often $w$ changes
# sign, the factor by which $|w|$ grows, and the displacement $|w(t) - w(0)|$ against SGD's.

# %%
M = escape_rates.adam_moves(S, drift_steps)
print("\n".join(M["lines"]))
print(f"w changed sign by step {drift_steps}: SGD and momentum {formatting.fraction(*M['n_cross']['sgd'])} runs, Adam "
      f"and AdamW {formatting.fraction(*M['n_cross']['adam'])}")

# %% tags=["hide-input"]
ratios, keeps = M["ratios"], M["keeps"]
verified.record("Adam moves w more than SGD: its early displacement at the smaller lr over SGD's at the larger",
                min(ratios) > drift_factor, check=f"median |w({drift_steps}) - w(0)| over the seeds, both chains",
                measured=f"smallest ratio {min(ratios):.3g}", tolerance=f"> {drift_factor:g}", kind="stored data")
verified.record_count("SGD and momentum: w keeps its sign to the horizon (the invariant line w = 0 is not crossed)",
                      int(keeps.sum()), len(keeps), rate=rate, unit="runs", kind="stored data",
                      check="sign of the projection's w at every evaluation, every SGD and momentum run")
adam_growth = M["growth"][M["growth"].index.get_level_values("optimizer").isin(escape_stored.ADAM_LIKE)]
for name, text in (("tp_drift_factor", f"at least {min(ratios):.2g}"), ("tp_adam_cross", f"{formatting.fraction(*M['n_cross']['adam'])}"),
                   ("tp_sgd_cross", f"{formatting.fraction(int(keeps.sum()), len(keeps))} runs keep its sign to the horizon"),
                   ("tp_adam_growth", f"{float(np.median(adam_growth)):.2g}")):
    glue(name, text)

# %% [markdown]
# How long would SGD need? The runs with $w_0 < 0$ climb towards $E_{sad}$ at their late rate; extrapolated linearly,
# which is an assumption the stored horizon cannot test (the next section replaces it with a derived law):

# %%
n_rise, n_neg, need = escape_rates.extrapolate(S, late_start)
print(f"SGD and momentum, w0 < 0: E rises in {formatting.fraction(n_rise, n_neg)} runs; at its late "
      f"rate the nearest would reach E_sad after {need:.1e} more steps ({need / S.horizon:.0f} horizons)")
glue("tp_need", f"{need / S.horizon:.0f}")
glue("tp_sgd_rise", f"in {formatting.fraction(n_rise, n_neg)}")

# %% [markdown]
# (sec-tp-law)=
# ## The SGD drift law: why $E$ rises, and how far it has to go
#
# The extrapolation above assumes that $E$ keeps its late rate. A derivation replaces the assumption. Write
# $\theta$ for all weights, $g = \nabla L(\theta)$ for the population gradient and $\hat g = g + \xi$ for a minibatch
# gradient with $\mathbb E\,\xi = 0$ and $\mathrm{Cov}(\xi) = \Sigma_B$. One SGD step is $\theta' = \theta - \eta\hat g$.
# For any smooth $\Phi$ of the weights (here $E$ read through the projection), Taylor's theorem and
# $\mathbb E[\hat g\hat g^\top] = gg^\top + \Sigma_B$ give
#
# $$
# \mathbb E[\Phi(\theta') - \Phi(\theta)] = -\eta\,\nabla\Phi\cdot g + \tfrac{\eta^2}{2}\,g^\top\nabla^2\Phi\,g
# + \tfrac{\eta^2}{2}\,\mathrm{tr}(\nabla^2\Phi\,\Sigma_B) + O(\eta^3).
# $$ (eq-tp-one-step)
#
# With heavy-ball momentum $\beta$ the noise terms add up to the same form with $\eta_{\rm eff} = \eta/(1-\beta)$
# (the sum over the velocity's memory, $\sum_k \beta^k(1-\beta^k)/(1-\beta)$, plus the step's own square); the
# deterministic part gains the velocity's lag behind the gradient, a term that vanishes with $g$.
# Clipping at norm $c$ changes only steps with $|\hat g| > c$; by Markov's inequality their share is at most
# $(|g|^2 + \mathrm{tr}\,\Sigma_B)/c^2$.
#
# **On the canonical model nothing moves.** With the optimal bias, $\nabla E\cdot\nabla L = -2e^2F_\beta = 0$
# (Lemma 5: $F_\beta = 0$), and $g$, $\xi$ both lie in the span of $\nabla c$ and $\nabla\beta$, so every term of
# {eq}`eq-tp-one-step` carries a factor $e^2$. Near the unigram line the mean step contracts $e$ geometrically,
# so SGD changes $E$ by $O(\eta e_0^2)$ in all: *within the canonical model the unigram line is a trap for SGD.* The
# stored $E$ rises anyway, so the motion comes from directions the canonical model does not have.
#
# **The full model: fast and slow weights.** At $e_{\rm vec} = 0$ (the embedding, tied to the read-out) every logit
# equals the bias $b$ and the gradients of all other weights $\theta_s$ vanish, so $\phi^* = (b^*, 0)$ with
# $b^* = \log(\pi_1/\pi_0)$ is a fixed point of the mean dynamics of $\phi = (b, e_{\rm vec})$ *whatever* $\theta_s$
# is. Its curvature $J = \nabla^2_\phi L(\phi^*)$ is of order one, while the gradients of $\theta_s$ are of order
# $|e_{\rm vec}|^2$: $\phi$ is fast, $\theta_s$ slow. The batch noise along $e_{\rm vec}$ is additive (it comes from
# the positional stream, nonzero at $e_{\rm vec} = 0$), so $\phi$ fluctuates around $\phi^*$ with the stationary
# covariance $C$ of the linearized step, the discrete Lyapunov equation
# $C = (I - \eta J)C(I - \eta J)^\top + \eta^2\Sigma_B$. Averaging the slow gradient over these fluctuations, and
# using $\nabla_\phi g_{\theta_s}(\phi^*) = 0$ and $\partial^2_\phi g_{\theta_s} = \partial_{\theta_s}J$,
#
# $$
# \mathbb E[\Delta\theta_s] = -\eta_{\rm eff}\,\tfrac12\,\partial_{\theta_s}\mathrm{tr}\big(J(\theta_s)\,C\big)\Big|_{C\ \text{fixed}}
# + O(\eta^3) .
# $$ (eq-tp-slow)
#
# SGD performs gradient descent on the curvature that holds $e_{\rm vec}$ at 0, weighted by its own fluctuations: it
# erodes the plateau. With $C = O(\eta/B)$ the drift is second order in the step.
#
# **What the projection sees.** In the standard initialization $W_1$'s top singular value is set by its random
# entries, not by $2|w|$ as on the canonical manifold, so we expect the drift $\Delta w$ of the projection not to
# depend on $w$ (an observation in the stored runs, where $|w| \le 0.02$, not a derivation: the rank correlations
# below); with $e$ at its floor the energy follows $w$, $\Delta E = -(2w + 1/|w|)\,\Delta w$ (fast where $|w|$ is
# small, slower as it grows). For $w < 0$, $E(0, w) \le E_{sad}$ with equality only at $w = -1/\sqrt2$
# ({prf:ref}`Lemma 12 <lem-12>`), so $E$ reaches $E_{sad}$ when $w$ does, after $(w + 1/\sqrt2)/(-\Delta w)$ steps at
# a frozen drift (a run with $w > 0$ first crosses $w = 0$).
#
# ```{prf:proposition} The SGD drift law of the conserved energy
# :label: tp-prop-drift
#
# Let SGD take steps $\eta\hat g$ (heavy ball $\beta$: $\eta_{\rm eff} = \eta/(1-\beta)$) with minibatch covariance
# $\Sigma_B$, clipping acting on a negligible share of steps. (i) For any smooth $\Phi$ the mean change per step is
# {eq}`eq-tp-one-step` with $\eta_{\rm eff}$, plus, with momentum, the velocity's lag
# $-\eta_{\rm eff}^2\tfrac{\beta}{1-\beta}\nabla\Phi^\top\nabla^2L\,g$ (zero where $g = 0$). (ii) On the canonical model with the optimal bias every term is
# $O(\eta^2 e^2)$ and SGD changes $E$ by $O(\eta e_0^2)$ in all. (iii) On the full model near the unigram line the
# slow weights drift by {eq}`eq-tp-slow`; while $W_1$'s top singular value is set by its initialization the
# projection's $w$ drifts at a rate $\Delta w$, $E$ drifts by $-(2w + 1/|w|)\Delta w$, and for $w < 0$ reaches
# $E_{sad}$ after $(w + 1/\sqrt2)/(-\Delta w)$ steps at a frozen drift.
# ```
#
# ```{prf:proof}
# (i) is Taylor's theorem to second order with $\mathbb E[\hat g\hat g^\top] = gg^\top + \Sigma_B$; for heavy ball
# the velocity is $v = \sum_k\beta^k\hat g_{t-k}$ and the noise of step $t-k$ has moved $\theta$ by
# $-\eta\xi_{t-k}(1-\beta^k)/(1-\beta)$ before it enters step $t$. (ii) is the computation above. (iii) follows
# from the fixed point $\phi^*$ for every $\theta_s$, the second-order expansion of $g_{\theta_s}$ in
# $\phi - \phi^*$ averaged over the stationary law of the linearized fast step, and the chain rule through the
# projection's $w$ and $E(0, w)$.
# ```
#
# The law is fit-free: it needs the weights, the chain, $\eta$, $\beta$, $B$ and $N$. `tools/check_sgd_drift.py`
# regenerated each of the stored SGD and momentum runs to step `late_start` (the regenerated $w$ equals the stored one
# to within {glue:text}`tp_law_regen`), evaluated the law there (`markovlib.transformer.drift_check`) and compared it
# with the stored curve to the horizon. The stored comparison (`book/data/sgd_drift`), per arm:

# %%
law_results, law_runs = drift_check.stored()
print(drift_check.arm_table(law_results).to_string(index=False))
wdep = law_results["stored"]["w_dependence"].values()
print("rank correlation over the seeds of an arm with |w|: the stored drift of w "
      f"{min(v['dw_meas_vs_abs_w'] for v in wdep):.2f} to {max(v['dw_meas_vs_abs_w'] for v in wdep):.2f}; the "
      f"canonical flow's ratio to it {min(v['ratio_canonical_w_vs_abs_w'] for v in wdep):.2f} to "
      f"{max(v['ratio_canonical_w_vs_abs_w'] for v in wdep):.2f}")

# %% tags=["hide-input"]
law_overall, law_counts = law_results["stored"]["overall"], law_results["stored"]["counts"]
n_law = law_results["stored"]["runs"]
verified.record("tp-prop-drift (iii): the law's drift of w matches the stored drift (median over the runs)",
                1 / law_band <= law_overall["ratio_dw"]["median"] <= law_band,
                check=f"law at step {late_start} against the stored drift to the horizon, {n_law} SGD and momentum runs",
                measured=f"median ratio {law_overall['ratio_dw']['median']:.3f}",
                tolerance=f"in [1/{law_band:g}, {law_band:g}] (set after the draft's comparison)", kind="stored data")
verified.record("tp-prop-drift (iii): the law's drift of w within a factor law_run_band in every run",
                1 / law_run_band <= law_overall["ratio_dw"]["min"] and law_overall["ratio_dw"]["max"] <= law_run_band,
                check=f"ratio law / stored of the drift of w, {n_law} runs",
                measured=f"[{law_overall['ratio_dw']['min']:.2f}, {law_overall['ratio_dw']['max']:.2f}]",
                tolerance=f"within [1/{law_run_band:g}, {law_run_band:g}]", kind="stored data")
verified.record_count("tp-prop-drift (iii): the law's drift of w is negative where the stored w falls",
                      law_counts["dw_law_negative"], n_law, rate=rate, unit="runs", kind="stored data",
                      check="sign of the law's dw at step late_start, every stored SGD and momentum run")
verified.record("clipping at norm 1 does not enter the law: Markov's bound on the clipped share",
                max(v["max_clip_bound"] for v in law_results["stored"]["arms"].values()) < clip_share_max,
                check="(|g|^2 + tr Sigma_B) / c^2 with g = 0 on the plateau, every stored run",
                measured=f"{max(v['max_clip_bound'] for v in law_results['stored']['arms'].values()):.1e} (the fast "
                         f"variables' noise); largest gradient norm to step {late_start}: "
                         f"{law_results['stored']['counts']['max_grad_norm_to_late']:.2f} against the clip 1",
                tolerance=f"< {clip_share_max:g}", kind="stored data")
glue("tp_law_ratio", f"{law_overall['ratio_dw']['median']:.2f}")
glue("tp_law_range", f"{law_overall['ratio_dw']['min']:.2f} to {law_overall['ratio_dw']['max']:.2f}")
glue("tp_law_n", f"{n_law}")
glue("tp_law_regen", f"{law_counts['max_regen_w_diff']:.1e}")
canon = [v["ratio_canonical"]["median"] for v in law_results["stored"]["arms"].values()]
glue("tp_law_canon_range", f"{min(canon):.2g} to {max(canon):.2g}")
esc = [v for v in law_results["integrate"].values() if v["lr"] == 4.0 and v["batch"] == 16 and v["escaped"]]
glue("tp_law_escape", " and ".join(f"{v['t_escape']:.1e}" for v in esc))
glue("tp_law_escape_w", " and ".join(f"{v['w_end']:.2f}" for v in esc))

# %% [markdown]
# The canonical model's own prediction (its mean dynamics from the stored initialization, column "canonical/stored")
# is a small fraction of the stored change for plain SGD, as (ii) says (read per step along the stored $(e_t, w_t)$
# instead, the canonical law gives {glue:text}`tp_law_canon_range` of the stored change over the arms, the larger
# values under momentum: with $e^2$ stationary that term is an increment, not a drift); and the stored drift does not follow $|w|$,
# while the canonical flow's would (its ratio to the stored drift rises with $|w|$: last line above). The law is checked live on one stored run: its initialization rebuilt from the seed, the law
# evaluated there and compared with the stored comparison's value (the same code on the same weights; the tolerance is
# far above double rounding in the Lyapunov solve and far below the law's spread over seeds).

# %%
live_key = (0.5, 0.8, "sgd", 4.0, slice_seed)
live_law = drift_check.law_at(live_key, None)["init"]
stored_row = law_runs[(law_runs.p == 0.5) & (law_runs.q == 0.8) & (law_runs.optimizer == "sgd")
                      & (law_runs.lr == 4.0) & (law_runs.seed == slice_seed)].iloc[0]
law_live_diff = abs(live_law["dw"] / stored_row.dw_law_init - 1)
print(f"seed {slice_seed}, SGD lr 4 on (0.5, 0.8): the law's dw at the initialization {live_law['dw']:.3e} per step; "
      f"relative difference from the stored comparison {formatting.bound(law_live_diff, 1e-9)}")

# %% tags=["hide-input"]
verified.record("the drift law re-evaluated live at a stored initialization", law_live_diff < 1e-6,
                check=f"drift_check.law_at at the initialization of seed {slice_seed} against book/data/sgd_drift",
                measured=formatting.bound(law_live_diff, 1e-9), tolerance="1e-6", kind="stored data")

# %% [markdown]
# **How far it has to go.** With the drift frozen at its value at `late_start`, $E$ reaches $E_{sad}$ at the steps of
# the table's column "E_sad step, law": about {glue:text}`tp_law_tsad4` steps for plain SGD at lr 4 on the paper's
# chain, and over the arms the medians lie between {glue:text}`tp_law_horizons` times the stored horizon of
# {glue:text}`tp_horizon` steps. The extrapolation of $E$ linearly in time (last column) comes
# {glue:text}`tp_law_linear_factor` times earlier (ratio of the arms' medians), because
# $\Delta E \approx -\Delta w/|w|$ falls as $|w|$ grows: the linear reading above overstates SGD's progress. The law
# thus predicts **a plateau, not a trap**, for SGD and momentum at these settings, but one that lasts thousands of
# horizons or more. That is an extrapolation over three to four and a half decades of time from a law checked over
# the window from `late_start` to the horizon.
#
# Followed instead of frozen (the averaged slow flow integrated by `plateau_drift.integrate_plateau`, two seeds at
# lr 4, stored), the plateau ends earlier and otherwise: the smallest curvature of the fast variables falls to 2 % of
# its start at {glue:text}`tp_law_escape` steps, with $w$ at {glue:text}`tp_law_escape_w`, before $w$ reaches
# $-1/\sqrt2$. The plateau ends by losing its stability, before $E$ reaches $E_{sad}$. The next section tests these
# predictions where they come within reach: there the plateau ends where the law says, but far sooner, and not by an
# escape.

# %% tags=["hide-input"]
arms_law = law_results["stored"]["arms"]
glue("tp_law_tsad4", f"{arms_law['0.5/0.8/sgd/4.0']['t_sad_law']['median']:.1e}")
law_h = [v["t_sad_law"]["median"] / S.horizon for v in arms_law.values()]
glue("tp_law_horizons", f"{min(law_h):.1e} and {max(law_h):.1e}")
lin_f = [v["t_sad_law"]["median"] / v["t_sad_linear_E"]["median"] for v in arms_law.values()]
glue("tp_law_linear_factor", f"{min(lin_f):.0f} to {max(lin_f):.0f}")

# %% [markdown]
# (sec-tp-test)=
# ## The prediction tested where it can fail
#
# At batch 16 every predicted end of the plateau lies beyond $10^6$ steps. The drift grows with the noise,
# $C \propto \eta/B$, so at batch 1 ($BN = 64$ symbols per step) the law puts the end within reach (the law at every
# seed's initialization, `check_sgd_drift.py --batch 1 --scan`, stored; the band in the table below). Four sets test it, 20 seeds each: plain SGD on the paper's chain,
# clipping at norm 1, into `book/data/escape_long` (tags `b1s_lr7` to `b1s_lr4`). A run's plateau *ends* at its first
# evaluation with the held-out loss above $H(\pi) + 0.5$ nats or not finite (a **divergence**), or at the first of
# three evaluations in a row below the midpoint between $H(\pi)$ and the entropy rate with $\hat c/c^* \ge 0.5$ (an
# **escape** to the bigram side). The law's prediction for a seed is $f\,t_{sad}$: its frozen-drift $E_{sad}$ step
# times the factor $f$ in `escape_band` by which the integrated slow flow ends the plateau earlier.
#
# The checks were written down before these runs (`book/_drafts/sgd_drift_law.md`, sections 11 to 14). One amendment
# came after the first set: a single evaluation below the midpoint no longer counts as an escape, because one batch-1
# evaluation (4 sequences of 64 symbols) dips that far on the plateau. The sets first planned, with horizons of
# 3.5 to 9.1 times $10^5$ steps, were stopped when every run of their lr 7 set had diverged by its evaluation at
# step 5000.
#
# The runs were made by `markovlib.transformer.seed_batch`, which steps the 20 seeds of a set together: the Trainer's
# initializations and batches bit for bit, its evaluations, and its step to float32 rounding
# (`tests/test_seed_batch.py`), at a fraction of the CPU time per run, which put these sets within reach on two cores.

# %%
study = escape_long.batch1_study(law_results, band=escape_band, alpha=escape_alpha)
print(study["table"].to_string(index=False))
print()
print(study["why"].to_string(index=False))

# %% [markdown]
# Every set ends its plateau within its horizon in nearly every run ({glue:text}`tp_b1_ended` at lr
# {glue:text}`tp_b1_lrs`), at Kaplan-Meier medians of {glue:text}`tp_b1_median` steps, where the law's band lies at
# {glue:text}`tp_b1_band`: the point medians come {glue:text}`tp_b1_factor` times before the band (E1 fails at every
# step size; E2 holds). No plateau ends in an escape: the loss rises, and {glue:text}`tp_b1_div` runs diverge. With
# the criterion as first written (one evaluation below the midpoint) {glue:text}`tp_b1_single` runs would count as
# escapes: at lr 4 some runs touch the bigram side for one evaluation before they diverge. Whether plain SGD at batch 1
# and these step sizes can hold the bigram minimum at all is not tested here; an escape needs a smaller step or a
# larger batch.
#
# The second table says what the law gets right and what it misses. *Where* the plateau ends it gets about right: the
# last evaluation on the plateau has $w$ at a median of {glue:text}`tp_b1_wend`, near the point where the integrated
# flow loses stability and the saddle's $w = -1/\sqrt2$; at lr 4, where most runs get there first, $w$ passes
# $-1/\sqrt2$ at a median of {glue:text}`tp_b1_cross4` steps against the law's {glue:text}`tp_b1_tsad4`. *When*
# it misses. Over the first 1000 steps (or two evaluations) the measured drift of $w$ is
# {glue:text}`tp_b1_drift0` times the law's (close at the two smaller step sizes; at the two larger the window already holds the growth).
# Then $|w|$ grows by orders of magnitude, doubling every {glue:text}`tp_b1_doubling` steps over
# $0.02 \le |w| \le 0.3$, where a drift that does not grow with $|w|$ (the law's, read in the stored runs at
# $|w| \le 0.02$) would need {glue:text}`tp_b1_law_doubling` steps at $|w| = 0.1$. (The fitted doubling describes
# that window; it does not tell geometric growth from a steep power law of the step. Either is what the law lacks.)

# %%
escape_drawings.growth_figure(study["sets"], study["ends"], study["law_dw"])
plt.show()

# %%
escape_drawings.escape_test_figure(list(study["tests"].values()))
plt.show()

# %% [markdown]
# Read after the data, and so only a lead: the growth rate of $|w|$ (log 2 over the doubling time) rises across the
# four step sizes as $\eta^{k}$ with $k \approx$ {glue:text}`tp_b1_exp_lr`, and as $(\eta\,C_{bb})^{k}$ with
# $k \approx$ {glue:text}`tp_b1_exp_noise`, $C_{bb}$ the variance of the bias's floor from the Lyapunov equation
# (a standard deviation of {glue:text}`tp_b1_floor_sd` in these sets). A rate that follows the fast variables'
# fluctuations is what a term of the slow drift linear in the slow weights, with a coefficient set by those
# fluctuations, would give. Four step sizes do not pin it down ($C_{bb}$ itself grows as $\eta^k$ with
# $k \approx$ {glue:text}`tp_b1_cbb_exp` here, so other combinations fit as well), and whether the term comes from
# beyond second order in the fluctuations is not settled here. Which seeds end first the law does not say either: E3 asked for a positive rank correlation between
# $t_{sad}$ and the end at every step size, and Spearman's $\rho$ is {glue:text}`tp_b1_spearman` (not positive at
# every step size; exploratory, so recorded as measured).

# %% tags=["hide-input"]
for tag, t in study["tests"].items():
    lo, hi = t["median_interval"]
    name = f"lr {t['lr']:g}, batch 1"
    verified.record(f"E2, {name}: the plateau ends within the horizon in at least escape_min of the seeds",
                    t["escaped"] >= escape_min, check=f"first evaluation off the plateau band, horizon {t['horizon']}",
                    measured=f"{t['escaped']}/{t['n']} ({t['escapes']} escapes, {t['divergences']} divergences)",
                    tolerance=f">= {escape_min}/{t['n']}", kind="stored data")
    verified.record(f"E1 refuted, {name}: the plateau ends before the law's band", hi < t["band"][0],
                    check="Kaplan-Meier median of the end, interval at family-wise escape_alpha, against f t_sad",
                    measured=f"median {t['median']:.3g}, interval [{lo:.3g}, {hi:.3g}]",
                    tolerance=f"upper end < {t['band'][0]:.3g} (the band's lower end)", kind="stored data")
    verified.record(f"{name}: no plateau ends in an escape (every end is a divergence)", t["escapes"] == 0,
                    check="three evaluations in a row below the midpoint with c-hat / c* >= 0.5, before any divergence",
                    measured=f"{t['escapes']} escapes, {t['divergences']} divergences", tolerance="0 escapes",
                    kind="stored data")
    verified.record(f"{name}: the plateau ends near the law's point of instability (median w before the end)",
                    -0.75 <= t["w_end_median"] <= -0.5, kind="stored data",
                    check="median over the runs of w at the last evaluation before the end of the plateau",
                    measured=f"{t['w_end_median']:.2f}", tolerance="in [-0.75, -0.5]: the integrated flow's w at its "
                    "escape (-0.55 to -0.61, stored) to the saddle's -0.71, widened by 0.05 (set after the data)")
    g, dw = study["growth"][tag], study["law_dw"][tag]
    fast = [g.loc[s, "doubling"] < 0.1 / abs(dw[s]) for s in g.index if np.isfinite(g.loc[s, "doubling"])]
    verified.record(f"G1, {name}: |w| doubles faster than the law's drift doubles it at |w| = 0.1, every run",
                    len(fast) > 0 and all(fast), kind="stored data",
                    check="least-squares doubling time of |w| over 0.02 <= |w| <= 0.3, against |w| / |dw_law| at 0.1",
                    measured=f"{sum(fast)}/{len(fast)} runs; median {t['doubling_median']:.0f} against "
                             f"{t['law_doubling_median']:.2g}", tolerance="every run with a slope")

# %% tags=["hide-input"]
scaling = escape_long.growth_scaling(study, law_results)
b1 = list(study["tests"].values())
glue("tp_b1_lrs", ", ".join(f"{t['lr']:g}" for t in b1))
glue("tp_b1_ended", ", ".join(f"{t['escaped']}/{t['n']}" for t in b1))
glue("tp_b1_div", ", ".join(f"{t['divergences']}/{t['n']}" for t in b1))
glue("tp_b1_total", f"{sum(t['escaped'] for t in b1)}/{sum(t['n'] for t in b1)}")
glue("tp_b1_median", ", ".join(f"{t['median']:.2g}" for t in b1))
glue("tp_b1_band", ", ".join(f"{t['band'][0]:.2g} to {t['band'][1]:.2g}" for t in b1))
glue("tp_b1_factor", f"{min(t['band'][0] / t['median'] for t in b1):.0f} to "
                     f"{max(t['band'][1] / t['median'] for t in b1):.0f}")
glue("tp_b1_drift0", ", ".join(f"{t['drift0_ratio']:.1f}" for t in b1))
glue("tp_b1_doubling", ", ".join(f"{t['doubling_median']:.2g}" for t in b1))
glue("tp_b1_law_doubling", ", ".join(f"{t['law_doubling_median']:.2g}" for t in b1))
glue("tp_b1_exp_lr", f"{scaling['exponent_lr']:.1f}")
glue("tp_b1_exp_noise", f"{scaling['exponent_lr_Cbb']:.1f}")
glue("tp_b1_spearman", ", ".join(f"{t['spearman']:+.2f}" for t in b1))
glue("tp_b1_single", ", ".join(f"{t['single_escapes']}/{t['n']}" for t in b1))
glue("tp_b1_wend", ", ".join(f"{t['w_end_median']:.2f}" for t in b1))
t4 = study["tests"]["b1s_lr4"]
glue("tp_b1_cross4", f"{t4['cross_median']:.2g} ({t4['crossed']}/{t4['n']} runs)")
glue("tp_b1_tsad4", f"{t4['t_sad_median']:.2g}")
floor_sd = [law_results["scan"]["batch1"][str(t["lr"])]["bias_floor_sd"] for t in b1]
glue("tp_b1_floor_sd", f"{min(floor_sd):.2f} to {max(floor_sd):.2f}")
glue("tp_b1_cbb_exp", f"{np.polyfit(np.log(scaling['lrs']), np.log(np.array(floor_sd) ** 2), 1)[0]:.1f}")

# %% [markdown]
# (sec-tp-extend)=
# **The stored arm, ten times longer.** The ten seeds with $w_0 < 0$ of plain SGD at lr 4, batch 16 (the stored arm
# with the larger step) were run to ten times the stored horizon by the same runner (`escape_long`, tag `extend`;
# the longer extension planned in the draft was out of reach on two shared cores). They are compared with the law
# frozen at the stored runs' `late_start`, over the whole extension (check X1 of the draft):

# %%
ext = escape_long.load("extend")
ext_rows = escape_extension.extension_vs_law(ext, law_runs, late=law_results["stored"]["late_start"])
print(ext_rows[["T", "w", "w_law", "ratio_dw", "E", "E_law", "end"]].to_string(float_format=lambda x: f"{x:.3g}"))
ext_agree = escape_extension.agreement_with_stored(ext, S.curves)
print(f"the extension against the stored runs over their horizon: largest |w difference| {ext_agree:.0e}")

# %% [markdown]
# None of the ten runs has left the plateau at {glue:text}`tp_ext_T` steps ({glue:text}`tp_ext_ended` ended), and
# there $w$ is where the law's frozen drift puts it: the ratio law / measured of the drift of $w$ over the
# extension has median {glue:text}`tp_ext_ratio` (range {glue:text}`tp_ext_range`), the stored comparison's ratio
# over ten times its window and within the same bands. $E$ is at {glue:text}`tp_ext_E`, far below
# $E_{sad} = -(1 + \log 2)/2$. (Over the stored horizon the extension reproduces the stored runs of the other runner
# to {glue:text}`tp_ext_agree` in $w$.)
#
# **Trap or plateau?** For plain SGD the unigram plateau is not a trap: at batch 1 nearly every run left it within
# its set's horizon ({glue:text}`tp_b1_total` runs). But at batch 1 it ended by divergence, not by an escape to the bigram minimum, and
# the drift law, right about *where* the plateau ends, was {glue:text}`tp_b1_factor` times too slow about *when*. For
# the stored arms at batch 16 the longer runs do not decide it: at ten times the horizon the runs are still on the
# plateau, on the law's frozen drift, with $|w|$ still small; the law's own horizon for the end is
# {glue:text}`tp_law_escape` steps at lr 4. If the growth of $|w|$ seen at batch 1 carries over, the end comes sooner
# than that; whether it comes as a divergence or an escape at batch 16 is not measured here.

# %% tags=["hide-input"]
verified.record("X1: the ten extended runs stay on the plateau to ten times the stored horizon",
                (ext_rows.end == "").all(), check="plateau_end on the extension (divergence or three evaluations on "
                "the bigram side)", measured=f"{int((ext_rows.end != '').sum())}/{len(ext_rows)} ended",
                tolerance="0 ended", kind="stored data")
verified.record("X1: the law's frozen drift of w holds over the extension (median ratio law / measured)",
                1 / law_band <= ext_rows.ratio_dw.median() <= law_band, kind="stored data",
                check=f"(w_law - w_late) / (w - w_late) at step {int(ext_rows['T'].max())}, ten runs",
                measured=f"median {ext_rows.ratio_dw.median():.3f}", tolerance=f"in [1/{law_band:g}, {law_band:g}]")
verified.record("X1: ... and in every extended run", ext_rows.ratio_dw.between(1 / law_run_band, law_run_band).all(),
                check="the same ratio per run", measured=f"[{ext_rows.ratio_dw.min():.2f}, {ext_rows.ratio_dw.max():.2f}]",
                tolerance=f"within [1/{law_run_band:g}, {law_run_band:g}]", kind="stored data")
glue("tp_ext_T", f"{int(ext_rows['T'].max()):,}")
glue("tp_ext_ended", f"{int((ext_rows.end != '').sum())}/{len(ext_rows)}")
glue("tp_ext_ratio", f"{ext_rows.ratio_dw.median():.2f}")
glue("tp_ext_range", f"{ext_rows.ratio_dw.min():.2f} to {ext_rows.ratio_dw.max():.2f}")
glue("tp_ext_E", f"{ext_rows.E.min():.1f} to {ext_rows.E.max():.1f}")
glue("tp_ext_agree", f"{ext_agree:.0e}")

# %% [markdown]
# **The law itself at other step sizes (batch 16).** Before the escape sets, a rate set tested the drift law where it
# was checked before, at batch 16, but at three new step sizes (lr {glue:text}`tp_rate_lrs`), each over all the seeds
# and twice the stored horizon (`escape_long`, tag `rate`; `check_sgd_drift.py --data book/data/escape_long --tag
# rate`, stored). Fixed before it ran (the draft's section on the rate set): **R1**, at the two smaller step sizes
# the median ratio law / measured of the drift of $w$ lies within a factor `rate_band` of 1; **R2**, there the signs
# agree in every seed, and $E$ rises in every seed whose $w < 0$ falls; **R3** (exploratory), at the largest, the
# bias's stability edge, the signs agree in at least `rate_sign_min` seeds.

# %%
rate_rows = pd.DataFrame([escape_long.rate_test(escape_long.rate_runs(), lr, band=rate_band) for lr in (2.0, 6.0, 8.0)])
rate_rows["ratio_range"] = [f"{lo:.2f} to {hi:.2f}" for lo, hi in rate_rows.ratio_range]
print(rate_rows[["lr", "n", "ratio_median", "ratio_range", "signs_agree", "falling", "rises_when_falling",
                 "regen_w_diff_max"]].to_string(index=False, float_format=lambda x: f"{x:.3g}"))

# %% [markdown]
# The law holds at the new step sizes: median ratios {glue:text}`tp_rate_ratios` (lr {glue:text}`tp_rate_lrs`),
# every sign right. At batch 16 its drift is the measured one at every step size stored or run, as over ten horizons
# at lr 4 above; what it lacks only shows where $|w|$ grows large, which at batch 16 lies beyond every run here. (The
# Trainer, regenerating each run to `late_start`, reproduces the seed-batched runner's $w$ to within
# {glue:text}`tp_rate_regen`.)

# %% tags=["hide-input"]
rate_by_lr = {float(r.lr): r for r in rate_rows.itertuples()}
for lr in (2.0, 6.0):
    r = rate_by_lr[lr]
    verified.record(f"R1, lr {lr:g}, batch 16: the law's drift of w matches the measured (median ratio)", r.R1,
                    check="law at step 1000 against the measured drift to the horizon, 20 seeds",
                    measured=f"{r.ratio_median:.3f}", tolerance=f"in [1/{rate_band:g}, {rate_band:g}]",
                    kind="stored data")
    verified.record(f"R2, lr {lr:g}, batch 16: the signs agree in every seed, and E rises wherever w < 0 falls",
                    r.R2, check="sign of the law's dw against the measured; E(T) - E(late) where w falls",
                    measured=f"signs {r.signs_agree}/{r.n}; E rose in {r.rises_when_falling}/{r.falling}",
                    tolerance="all", kind="stored data")
r8 = rate_by_lr[8.0]
verified.record("R3, lr 8, batch 16 (the stability edge): the law gets the drift's sign right in most seeds",
                r8.signs_agree >= rate_sign_min, check="sign of the law's dw at step 1000 against the measured",
                measured=f"{r8.signs_agree}/{r8.n}", tolerance=f">= {rate_sign_min}/{r8.n}", kind="stored data")
glue("tp_rate_ratios", ", ".join(f"{r.ratio_median:.2f}" for r in rate_rows.itertuples()))
glue("tp_rate_lrs", ", ".join(f"{r.lr:g}" for r in rate_rows.itertuples()))
glue("tp_rate_regen", f"{rate_rows.regen_w_diff_max.max():.0e}")

# %% [markdown]
# ## The stored runs re-executed
#
# The chapter re-executes the first `slice_steps` steps of the 16 stored runs of seed `slice_seed` (both chains, every
# arm) and compares every evaluation. `tools/run_slice_prefix.py escape` measured, for every stored run and in both
# CI configurations (as on a developer's machine, and with one thread, baseline SIMD and torch's default kernels), how
# far the first 300 steps reproduce the stored curves: within $10^{-5}$ over a prefix of each run, beyond which the
# Adam runs of the second configuration drift apart (rounding differences grow on the plateau's unstable
# directions, and the projection $w \sim 10^{-3}$ amplifies them in $E \approx \log|w|$). The slice stays inside
# that prefix, with a tolerance ten times its level.

# %%
PREFIX, REACH = escape_rates.prefix_reach()
assert PREFIX.config.nunique() == 2 and PREFIX.step.max() >= specs.trap_or_plateau.SLICE_PREFIX and len(
    PREFIX.groupby(escape_stored.KEY)) == len(S.runs), \
    "slice_prefix.csv must cover every stored run in both CI configurations: re-run tools/run_slice_prefix.py escape"
print(f"measured prefix (differences within {escape_rates.SLICE_LEVEL:g}): at least {int(REACH.min())} steps in every "
      f"stored run, {int(REACH.xs(slice_seed, level='seed').min())} for seed {slice_seed}; beyond it the Adam runs of "
      "the second configuration drift apart")

# %%
live_rows, worst = escape_rates.replay(S, slice_seed, slice_steps)
slice_tol = 10 * escape_rates.SLICE_LEVEL  # a margin of 10 over the level that defines the measured prefix
print(f"{live_rows} evaluations re-executed: largest difference {formatting.bound(worst, escape_rates.SLICE_LEVEL)}; "
      f"tolerance {slice_tol:g}")

# %% tags=["hide-input"]
verified.record("the stored runs re-execute: 16 runs, every evaluation up to slice_steps", worst < slice_tol,
                check=f"live train_with_energy against the stored curves (c-hat/c*, loss, e, w, E), seed {slice_seed}",
                measured=formatting.bound(worst, escape_rates.SLICE_LEVEL), tolerance=f"{slice_tol:g}", kind="stored data")

# %% [markdown]
# The batch-1 sets are re-executed the same way: the first `B1_SLICE_STEPS` steps of every run of `b1s_lr7` (the
# largest step, where rounding differences grow fastest) by the runner that made them. Measured once in the second CI
# configuration, the differences stayed within `B1_SLICE_LEVEL` up to that step; the tolerance is ten times that.

# %%
b1_rows, b1_worst = escape_long.replay(study["sets"]["b1s_lr7"], steps=specs.trap_or_plateau.B1_SLICE_STEPS)
b1_tol = 10 * specs.trap_or_plateau.B1_SLICE_LEVEL
print(f"{len(b1_rows)} evaluations re-executed: largest difference "
      f"{formatting.bound(b1_worst, specs.trap_or_plateau.B1_SLICE_LEVEL)}; tolerance {b1_tol:g}")

# %% tags=["hide-input"]
verified.record("the batch-1 set b1s_lr7 re-executes: 20 runs, every evaluation up to B1_SLICE_STEPS",
                b1_worst < b1_tol, check="live SeedBatchSGD against the stored curves (c-hat/c*, w, E)",
                measured=formatting.bound(b1_worst, specs.trap_or_plateau.B1_SLICE_LEVEL), tolerance=f"{b1_tol:g}",
                kind="stored data")

# %% tags=["hide-input"]
_ = record_results({
    "sgd_runs_on_plateau": A["k_sgd"] / A["n_sgd"], "adam_runs_escaped": A["k_adam"] / A["n_adam"],
    **{f"median_escape/{opt}_{lr:g}_{pq[0]:g}_{pq[1]:g}": median_time(km[(pq, opt, lr)]) for pq, opt, lr in A["adam_arms"]},
    "basin_entry_fraction": int(lag.notna().sum()) / max(len(esc_idx), 1),
    **{f"late_drift_exponent/{opt}_{pq[0]:g}_{pq[1]:g}": float(v) for (pq, opt), v in late_exp.items()},
    "adam_sign_crossings": M["n_cross"]["adam"][0] / M["n_cross"]["adam"][1], "slice_max_difference": worst,
    **{f"b1_plateau_end_median/lr{t['lr']:g}": t["median"] for t in study["tests"].values()},
    **{f"b1_doubling_median/lr{t['lr']:g}": t["doubling_median"] for t in study["tests"].values()},
    "b1_slice_max_difference": b1_worst,
    **verified.summary(),
})

# %% [markdown]
# ## What was verified
#
# The table is generated from the checks recorded above (`verified.table()`).

# %% tags=["remove-cell"]
from markovlib.book.glue import summary

summary("trap_or_plateau")  # in Jupyter: "What this chapter shows" with this run's numbers (removed from the book)

# %%
verified.table()

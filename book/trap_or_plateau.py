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
#    unigram minimum ({glue:text}`tp_init_trap`); this cannot fail here, since an escape would need
#    $|e_0| \ge$ {glue:text}`tp_e0_needed` and the largest $|e_0|$ is {glue:text}`tp_e0_max`
#    ([the verdict](#sec-tp-verdict)).
# 2. **SGD and momentum do not leave it within the horizon**: {glue:text}`tp_sgd_summary`. Their energy rises
#    ({glue:text}`tp_sgd_rise` runs with $w_0 < 0$), and at its late rate the nearest run would reach $E_{sad}$ after
#    about {glue:text}`tp_need` more horizons: trap or long plateau is not decided by these runs
#    ([escape times](#sec-tp-escape), [the energy](#sec-tp-energy)).
# 3. **Adam and AdamW leave it** in every arm ({glue:text}`tp_adam_summary`; Kaplan-Meier medians in
#    [escape times](#sec-tp-escape)).
# 4. **The escape and the energy.** Every escaping run's projection enters the flow's global basin
#    ({glue:text}`tp_entry_summary`). By continuity a projection that passes the saddle's $w$ crosses $E_{sad}$; at
#    the escape's evaluation it is {glue:text}`tp_escape_places` ([the energy](#sec-tp-energy)).
# 5. **How fast $E$ moves.** Under SGD and momentum the early drift grows as $\mathrm{lr}^k$ with
#    {glue:text}`tp_exponents`, the late drift with {glue:text}`tp_late_exponents` (two step sizes a factor 4
#    apart). Adam multiplies $|w|$ by {glue:text}`tp_adam_growth` in its first steps and crosses $w = 0$ in
#    {glue:text}`tp_adam_cross` runs ([drift rates](#sec-tp-drift)).
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

# %%
import pandas as pd

from markovlib.book import params, stored

EVAL_EVERY = 50  # the stored set's evaluation spacing (book/data/escape/manifest.json), not a knob
SLICE_PREFIX = 300  # steps whose agreement tools/run_slice_prefix.py measured in both CI configurations, not a knob
SLICE_LEVEL = 1e-5  # a stored run re-executes to this level up to its measured deterministic prefix, not a knob
# per stored run, the last step up to which every difference stayed within SLICE_LEVEL in both CI configurations
PREFIX = pd.read_csv(stored.data_dir("escape") / "slice_prefix.csv")
REACH = stored.deterministic_prefix(PREFIX, ["p", "q", "optimizer", "lr", "seed"],
                                    ["ratio_diff", "loss_diff", "projection_diff", "energy_diff"], SLICE_LEVEL)
multiple = lambda name: (f"{name} % 50 == 0", lambda v: v[name] % EVAL_EVERY == 0, "a stored evaluation step")  # noqa: E731
SPEC = params.declare(
    escape_ratio=params.Real(0.3, 0.9, why="a fraction of c* that only a run off the plateau reaches"),
    rate=params.Real(0.5, 0.7, why="20 seeds per arm cannot carry a higher rate with Bonferroni over 8 arms"),
    drift_steps=params.Int(50, 250, why="the early window ends before the earliest escape"),
    drift_factor=params.Real(1.0, 1e6, why="a factor between two displacements"),
    late_start=params.Int(500, 5000, why="after the first steps' transient, well before the horizon"),
    sgd_exponent=params.Pair(0.0, 4.0, why="an interval of exponents around the second order"),
    slice_seed=params.Int(0, 19, why="a stored seed"),
    slice_steps=params.Int(50, SLICE_PREFIX, why="stored evaluations inside the measured deterministic prefix"),
    require=[multiple("drift_steps"), multiple("late_start"), multiple("slice_steps"),
             ("sgd_exponent[0] < sgd_exponent[1]", lambda v: v["sgd_exponent"][0] < v["sgd_exponent"][1],
              "an interval [lo, hi]"),
             ("slice_steps <= the measured prefix of slice_seed",
              lambda v: v["slice_steps"] <= int(REACH.xs(v["slice_seed"], level="seed").min()),
              "a re-executed step must lie inside the seed's measured deterministic prefix")],
)
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
import torch

from markovlib.book import formatting, plotting, report, stored
from markovlib.book.glue import glue
from markovlib.book.sweep import record_results
from markovlib.markov.canonical import c_star
from markovlib.markov.energy import SADDLE_ENERGY, energy, predict_limit
from markovlib.numerics.survival import kaplan_meier, median_time
from markovlib.transformer.escape import escape_config, escape_step, train_with_energy

plotting.use_style()
verified = report.Verification()
DATA = stored.data_dir("escape")
manifest = stored.verify_checksums(DATA)
runs = pd.read_csv(DATA / "runs.csv")
curves = pd.read_csv(DATA / "curves.csv.gz")
KEY = ["p", "q", "optimizer", "lr", "seed"]
CHAINS = [tuple(c) for c in manifest["chains"]]
OPTIMIZERS = list(manifest["lrs"])
HORIZON, SEEDS = manifest["steps"], manifest["seeds"]
for pq in CHAINS:
    print(f"chain p={pq[0]:g}, q={pq[1]:g}: c* = {formatting.fixed(c_star(*pq), 4)}")
print(f"E_sad = {formatting.fixed(SADDLE_ENERGY, 6)}; {len(runs)} runs of {HORIZON} steps, evaluated every {EVAL_EVERY}")

# %% tags=["hide-input"]
assert manifest["eval_every"] == EVAL_EVERY and manifest["failed_runs"] == [] and manifest["provenance"]["complete"]
planned = len(CHAINS) * sum(len(v) for v in manifest["lrs"].values()) * len(SEEDS)
n_runs = len(runs)
counts_ok = (n_runs == planned == manifest["runs_planned"] and len(SEEDS) >= 20
             and curves.groupby(KEY).step.max().eq(HORIZON).all())
verified.record("the stored set is complete: every arm, 20 seeds, every run to the horizon", counts_ok,
                check="manifest's sha256 of each file, planned runs against stored runs, last step of every curve",
                measured=f"{n_runs} of {planned} runs, {len(SEEDS)} seeds, horizon {HORIZON}", tolerance="all",
                kind="stored data")
print(f"stored by {manifest['provenance']['command']} in {manifest['provenance']['wall_seconds'] / 60:.0f} min")
_ = [glue(k, v) for k, v in (("tp_n_runs", f"{n_runs}"), ("tp_horizon", f"{HORIZON}"), ("tp_ratio", f"{escape_ratio:g}"),
                              ("tp_drift_steps", f"{drift_steps}"))]

# %% [markdown]
# A run *leaves the plateau* at the first evaluation at which $\hat c / c^*$ reaches `escape_ratio`; a run that never
# does is censored at the horizon.

# %%
esc = curves.groupby(KEY, sort=True).apply(
    lambda g: escape_step(g.step.to_numpy(), g.coefficient_ratio.to_numpy(), escape_ratio), include_groups=False)
esc = esc.astype(float).rename("escape")  # NaN: censored at the horizon
print(f"{int(esc.notna().sum())} runs leave the plateau, {int(esc.isna().sum())} are censored at step {HORIZON}")

# %% tags=["hide-input"]
if np.isclose(escape_ratio, manifest["escape_ratio"]):  # runs.csv holds the escape steps at the stored threshold
    stored_esc = runs.set_index(KEY).escape_step.sort_index()
    same = np.array_equal(stored_esc.isna().to_numpy(), esc.isna().to_numpy()) and np.allclose(
        stored_esc.dropna().to_numpy(), esc.dropna().to_numpy())
    verified.record("runs.csv's escape steps are those of the stored curves", same,
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
curves["flow"] = ""
for (pp, qq), g in curves.groupby(["p", "q"]):  # Thm 2 read off each row's (e, w) by the energy contour
    curves.loc[g.index, "flow"] = predict_limit(g.e.to_numpy(), g.w.to_numpy(), pp, qq).outcome
init = curves[curves.step == 0].drop_duplicates(["p", "q", "seed"])  # the initialization depends on the seed only
neg0 = init[init.w < 0]
e0_needed = float(np.sqrt(SADDLE_ENERGY + neg0.w ** 2 - np.log(neg0.w.abs())).min())
for pq, g in init.groupby(["p", "q"]):
    print(f"p={pq[0]:g}, q={pq[1]:g}: w0 < 0 in {formatting.fraction(int((g.w < 0).sum()), len(g))} seeds; "
          f"E0 in [{formatting.fixed(g.energy.min(), 2)}, {formatting.fixed(g.energy.max(), 2)}]; |w0| <= "
          f"{formatting.fixed(g.w.abs().max(), 4)}; flow to the unigram line from "
          f"{formatting.fraction(int((g.flow == 'local_min').sum()), len(g))}")
print(f"largest |e0| {formatting.fixed(init.e.abs().max(), 3)}; an escape from w0 < 0 would need |e0| >= "
      f"{formatting.fixed(e0_needed, 2)}")

# %% tags=["hide-input"]
same_init = curves[curves.step == 0].groupby(["p", "q", "seed"])[["e", "w"]].nunique().eq(1).all().all()
verified.record("every arm of a seed starts from the same initialization", same_init,
                check="(e, w) at step 0 across the 8 arms of each (chain, seed)", measured="1 distinct (e, w) per seed",
                tolerance="1", kind="identity")
for pq, g in init.groupby(["p", "q"]):
    verified.record_count(f"Thm 2 at the initialization, p={pq[0]:g}, q={pq[1]:g}: the flow ends on the unigram line",
                          int((g.flow == "local_min").sum()), len(g), rate=rate, family=len(CHAINS), unit="seeds",
                          kind="identity", check="predict_limit on the stored projection (e0, w0) of every seed "
                          "(cannot fail: |e0| is far below what an escape needs)")
glue("tp_n_inits", f"{init.seed.nunique()}")
glue("tp_e0_needed", formatting.fixed(e0_needed, 2))
glue("tp_e0_max", formatting.fixed(init.e.abs().max(), 3))
glue("tp_init_trap", ", ".join(
    f"{formatting.fraction(int((g.flow == 'local_min').sum()), len(g))} seeds on p = {pq[0]:g}, q = {pq[1]:g}"
    for pq, g in init.groupby(["p", "q"])))

# %% [markdown]
# (sec-tp-escape)=
# ## Escape times: Kaplan-Meier curves per optimizer
#
# A run that has not left the plateau by step $10^4$ is *censored* there: its escape time is only known to exceed
# the horizon. The Kaplan-Meier estimate (`markovlib.numerics.survival`) of the fraction still on the plateau,
# $S(t) = \prod_{t_j \le t}(1 - d_j / n_j)$, with the log-log Greenwood 95 % interval, uses every run, censored or
# not. Each arm is one curve; each claim below is tested per arm, with Bonferroni over the arms of its group.

# %%
SGD_LIKE, ADAM_LIKE = ["sgd", "momentum"], ["adam", "adamw"]
arms = [(pq, opt, lr) for pq in CHAINS for opt in OPTIMIZERS for lr in manifest["lrs"][opt]]
arm_esc = {a: esc.loc[(a[0][0], a[0][1], a[1], a[2])] for a in arms}
km = {a: kaplan_meier(np.where(t.isna(), HORIZON, t), t.notna()) for a, t in arm_esc.items()}
show = lambda x: f"{x:.0f}" if np.isfinite(x) else f"> {HORIZON}"  # noqa: E731
table = [{"chain": f"({pq[0]:g}, {pq[1]:g})", "optimizer": opt, "lr": f"{lr:g}",
          "left the plateau": formatting.fraction(int(arm_esc[(pq, opt, lr)].notna().sum()), len(arm_esc[(pq, opt, lr)])),
          "median escape step": show(median_time(km[(pq, opt, lr)])),
          "95 % interval": "[" + ", ".join(show(median_time(km[(pq, opt, lr)], c)) for c in ("lower", "upper")) + "]"}
         for pq, opt, lr in arms]
print(pd.DataFrame(table).to_string(index=False))

# %% tags=["hide-input"]
never = {a: int(t.isna().sum()) for a, t in arm_esc.items()}
size = {a: len(t) for a, t in arm_esc.items()}
sgd_arms = [a for a in arms if a[1] in SGD_LIKE]
adam_arms = [a for a in arms if a[1] in ADAM_LIKE]
for pq, opt, lr in sgd_arms:
    verified.record_count(f"{opt} lr {lr:g}, p={pq[0]:g}, q={pq[1]:g}: stays on the plateau to step {HORIZON}",
                          never[(pq, opt, lr)], size[(pq, opt, lr)], rate=rate, family=len(sgd_arms), unit="runs",
                          kind="stored data", check=f"c-hat/c* < {escape_ratio:g} at every evaluation")
for pq, opt, lr in adam_arms:
    verified.record_count(f"{opt} lr {lr:g}, p={pq[0]:g}, q={pq[1]:g}: leaves the plateau before step {HORIZON}",
                          size[(pq, opt, lr)] - never[(pq, opt, lr)], size[(pq, opt, lr)], rate=rate,
                          family=len(adam_arms), unit="runs",
                          kind="stored data", check=f"c-hat/c* reaches {escape_ratio:g} at some evaluation")
n_sgd, n_adam = sum(size[a] for a in sgd_arms), sum(size[a] for a in adam_arms)
k_sgd = sum(never[a] for a in sgd_arms)
k_adam = sum(size[a] - never[a] for a in adam_arms)
glue("tp_adam_summary", f"{formatting.fraction(k_adam, n_adam)} runs left it")

# %%
fig, axes = plt.subplots(1, len(CHAINS), figsize=(12, 4), sharey=True)
colours = {"sgd": plotting.LOCAL, "momentum": plotting.SADDLE, "adam": plotting.MAXIMA, "adamw": plotting.GLOBAL}
pad = lambda a: np.concatenate([[1.0], a, [a[-1] if a.size else 1.0]])  # noqa: E731
for ax, pq in zip(axes, CHAINS):
    for opt in OPTIMIZERS:
        for lr, style in zip(manifest["lrs"][opt], ("--", "-")):
            k_m = km[(pq, opt, lr)]
            x = np.concatenate([[0], k_m.times, [HORIZON]])
            wide = opt in ("sgd", "adam")  # drawn wide under their look-alikes (momentum, AdamW), which may coincide
            ax.step(x, pad(k_m.survival), where="post", color=colours[opt], ls=style, lw=4 if wide else 1.3,
                    alpha=0.45 if wide else 1.0, label=f"{opt}, lr {lr:g}")
            ax.fill_between(x, pad(k_m.lower), pad(k_m.upper), step="post", color=colours[opt], alpha=0.12)
    ax.set(title=f"p = {pq[0]:g}, q = {pq[1]:g}: {len(SEEDS)} seeds per arm", xlabel="step",
           xlim=(0, HORIZON), ylim=(-0.02, 1.02))
axes[0].set_ylabel("fraction still on the unigram plateau")
axes[-1].legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
plt.tight_layout()
plt.show()

# %% [markdown]
# Seed by seed: does AdamW's weight decay change the escape step against Adam's, and does the larger learning rate
# leave first?

# %%
pairs_decay, pairs_lr = [], []
for pq in CHAINS:
    for lr in manifest["lrs"]["adam"]:
        a, w = (esc.loc[(pq[0], pq[1], o, lr)].fillna(np.inf).to_numpy() for o in ("adam", "adamw"))
        same = (np.isinf(a) & np.isinf(w)) | (np.abs(a - w) <= EVAL_EVERY)
        pairs_decay.append((pq, lr, int(same.sum()), len(a)))
    for opt in ADAM_LIKE:
        lo, hi = (esc.loc[(pq[0], pq[1], opt, lr)].fillna(np.inf).to_numpy() for lr in manifest["lrs"][opt])
        pairs_lr.append((pq, opt, int((hi < lo).sum()), len(lo), float(np.median(lo / hi))))
for pq, opt, k, n, ratio in pairs_lr:
    print(f"{opt}, p={pq[0]:g}, q={pq[1]:g}: larger lr first in {formatting.fraction(k, n)} seeds; median ratio of "
          f"escape steps (smaller lr / larger) {ratio:.3g}")

# %% tags=["hide-input"]
for pq, lr, k, n in pairs_decay:
    verified.record_count(f"lr {lr:g}, p={pq[0]:g}, q={pq[1]:g}: AdamW's decay 1e-3 leaves the escape step as Adam's",
                          k, n, rate=rate, family=len(pairs_decay), unit="seeds", kind="stored data",
                          check=f"same seed: escape steps within one evaluation ({EVAL_EVERY} steps) or both censored")
for pq, opt, k, n, ratio in pairs_lr:
    verified.record_count(f"{opt}, p={pq[0]:g}, q={pq[1]:g}: the larger lr leaves the plateau first", k, n,
                          rate=rate, family=len(pairs_lr), unit="seeds", kind="stored data",
                          check="same seed: escape step at the larger lr < at the smaller (censored counts as later)")
k_dec, n_dec = sum(x[2] for x in pairs_decay), sum(x[3] for x in pairs_decay)
k_lr, n_lr = sum(x[2] for x in pairs_lr), sum(x[3] for x in pairs_lr)
glue("tp_decay_summary", f"the same escape step within one evaluation in {formatting.fraction(k_dec, n_dec)} "
     "seed pairs")
glue("tp_lr_summary", f"{formatting.fraction(k_lr, n_lr)} seed pairs")

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
curves["global_basin"] = curves.flow == "global_min"
first_basin = curves[curves.global_basin].groupby(KEY).step.min().reindex(esc.index)
sgd_curves = curves[curves.optimizer.isin(SGD_LIKE)]
outside = ~sgd_curves.groupby(KEY).global_basin.any()
k_out = int(outside.sum())
print(f"SGD and momentum: the projection stays outside the global basin in {formatting.fraction(k_out, n_sgd)} runs")

# %% tags=["hide-input"]
for pq, opt, lr in sgd_arms:
    o = outside.loc[(pq[0], pq[1], opt, lr)]
    verified.record_count(f"{opt} lr {lr:g}, p={pq[0]:g}, q={pq[1]:g}: the projection never enters the global basin",
                          int(o.sum()), len(o), rate=rate, family=len(sgd_arms), unit="runs",
                          kind="stored data", check="predict_limit at every evaluation's (e, w)")
glue("tp_sgd_summary", f"{formatting.fraction(k_sgd, n_sgd)} runs stay on the plateau and "
     f"{formatting.fraction(k_out, n_sgd)} keep the projection outside the global basin at every evaluation")

# %% [markdown]
# How far does SGD move $E$? For the runs with $w_0 < 0$ (from $w_0 > 0$ no value of $E$ lets the flow escape), the
# largest move of $E$ over the horizon against the climb from $E(0)$ to $E_{sad}$ that an escape needs:

# %%
e0 = curves[curves.step == 0].set_index(KEY).energy
w0 = curves[curves.step == 0].set_index(KEY).w
neg_sgd = sgd_curves[(w0[pd.MultiIndex.from_frame(sgd_curves[KEY])] < 0).to_numpy()]
sgd_move = neg_sgd.groupby(KEY).energy.apply(lambda s: float(np.max(np.abs(s - s.iloc[0]))))
gap = SADDLE_ENERGY - e0[sgd_move.index]
print(f"SGD and momentum, the {len(sgd_move)} runs with w0 < 0: largest |E(t) - E(0)| over the horizon "
      f"{formatting.fixed(sgd_move.max(), 3)}; smallest climb from E(0) to E_sad {formatting.fixed(gap.min(), 3)}")
glue("tp_sgd_energy_max", f"over the runs with w0 < 0 the largest |E(t) - E(0)| is "
     f"{formatting.fixed(sgd_move.max(), 2)}, against a climb of at least {formatting.fixed(gap.min(), 2)} to E_sad")

# %% [markdown]
# The escaping runs of Adam and AdamW: does the projection enter the global basin, and when, against the escape?

# %%
esc_idx = [k for k in esc.index if k[2] in ADAM_LIKE and np.isfinite(esc[k])]
lag = esc[esc_idx] - first_basin[esc_idx]  # > 0: the projection enters the basin first; NaN: it never enters
lag_rows = []
for pq, opt, lr in adam_arms:
    sel = [k for k in esc_idx if k[:4] == (pq[0], pq[1], opt, lr)]
    d = lag[sel].dropna()
    lag_rows.append({"chain": f"({pq[0]:g}, {pq[1]:g})", "optimizer": opt, "lr": f"{lr:g}",
                     "entered": formatting.fraction(int(lag[sel].notna().sum()), len(sel)),
                     "median lag": f"{d.median():.0f}", "lag range": f"[{d.min():.0f}, {d.max():.0f}]",
                     "median escape step": f"{esc[sel].median():.0f}"})
print("escape step minus first step in the flow's global basin (steps; evaluations every 50):")
print(pd.DataFrame(lag_rows).to_string(index=False))

# %% tags=["hide-input"]
for pq, opt, lr in adam_arms:
    sel = [k for k in esc_idx if k[:4] == (pq[0], pq[1], opt, lr)]
    verified.record_count(f"{opt} lr {lr:g}, p={pq[0]:g}, q={pq[1]:g}: every escaping run's projection enters the "
                          "global basin", int(lag[sel].notna().sum()), len(sel), rate=rate, family=len(adam_arms),
                          unit="runs", kind="stored data",
                          check="predict_limit at every evaluation's (e, w), up to the horizon")
k_entry = int(lag.notna().sum())
glue("tp_entry_summary", f"{formatting.fraction(k_entry, len(esc_idx))} runs")
glue("tp_lag_summary", "; ".join(
    f"from {lag[[k for k in esc_idx if k[:2] == pq and k[3] == lr]].min():.0f} to "
    f"{lag[[k for k in esc_idx if k[:2] == pq and k[3] == lr]].max():.0f} steps at lr {lr:g} on "
    f"p = {pq[0]:g}, q = {pq[1]:g}" for pq in CHAINS for lr in manifest["lrs"]["adam"]))

# %% [markdown]
# On $w < 0$, $E(e, -1/\sqrt 2) = e^2 + E_{sad} \ge E_{sad}$ for every $e$: the set $\{E < E_{sad}, w < 0\}$ has two
# components, $|w|$ below and above $1/\sqrt 2$, and a path from one to the other passes through $E \ge E_{sad}$.
# This is deduced from continuity; the evaluations, every 50 steps, see the projection at the escape's evaluation
# in one of three places:

# %%
at_step = curves.set_index(KEY + ["step"])
places = []
for pq in CHAINS:
    row = at_step.loc[[(*k, int(esc[k])) for k in esc_idx if k[:2] == pq]]
    above = row.energy > SADDLE_ENERGY
    far = ~above & (row.w < -1 / np.sqrt(2))
    where = {"above $E_{sad}$": above, "below it beyond the saddle": far, "below it on the trap's side": ~above & ~far}
    text = ", ".join(f"{name} in {formatting.fraction(int(m.sum()), len(row))}" for name, m in where.items())
    print(f"p={pq[0]:g}, q={pq[1]:g}, at the escape: {text}")
    places.append(f"{text} escaping runs on p = {pq[0]:g}, q = {pq[1]:g}")

# %% tags=["hide-input"]
e_grid = np.linspace(-3, 3, 61)
saddle_gap = float(np.max(np.abs(energy(e_grid, np.full_like(e_grid, -1 / np.sqrt(2))) - (e_grid ** 2 + SADDLE_ENERGY))))
verified.record("E(e, -1/sqrt 2) = e^2 + E_sad: crossing w = -1/sqrt 2 needs E >= E_sad", saddle_gap < 1e-12,
                check="energy() on 61 values of e in [-3, 3] against e^2 + E_sad",
                measured=formatting.bound(saddle_gap, 1e-14), tolerance="1e-12", kind="identity")
glue("tp_escape_places", "; ".join(places))

# %%
fig, axes = plt.subplots(len(CHAINS), len(OPTIMIZERS), figsize=(12, 6), sharex=True, sharey=True)
for (i, pq), (j, opt) in ((a, b) for a in enumerate(CHAINS) for b in enumerate(OPTIMIZERS)):
    ax = axes[i, j]
    for lr, colour in zip(manifest["lrs"][opt], (plotting.NEUTRAL, plotting.MAXIMA)):
        g = curves[(curves.p == pq[0]) & (curves.q == pq[1]) & (curves.optimizer == opt) & (curves.lr == lr)]
        for s, run in g.groupby("seed"):
            ax.plot(run.step, run.energy.clip(-8, 8), color=colour, lw=0.6, alpha=0.5,
                    label=f"lr {lr:g}" if s == SEEDS[0] else None)
            t = esc.get((pq[0], pq[1], opt, lr, s), np.nan)
            if np.isfinite(t):
                ax.plot(t, run.energy[run.step == t].clip(-8, 8).iloc[0], "o", ms=2.5, color=plotting.GLOBAL)
    ax.axhline(SADDLE_ENERGY, color=plotting.SADDLE, lw=1.5)
    ax.set_title(f"{opt}, p = {pq[0]:g}, q = {pq[1]:g}", fontsize=9)
    ax.set(xlabel="step" if i == len(CHAINS) - 1 else "", ylabel="E(e, w) of the projection" if j == 0 else "")
    ax.legend(loc="upper right", fontsize=7)
fig.suptitle("E along training (clipped to [-8, 8]); yellow: E_sad; green dots: the escape from H(pi)")
plt.tight_layout()
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
window = curves[curves.step == drift_steps].set_index(KEY)
assert esc.dropna().min() > drift_steps, "a run left the plateau inside the drift window"
drift = (window.energy - e0[window.index]).abs()
late_e = curves[curves.step == late_start].set_index(KEY).energy
end_e = curves[curves.step == HORIZON].set_index(KEY).energy
late = (end_e[late_e.index] - late_e).abs()
early_exp, late_exp = {}, {}
for pq, opt in ((pq, opt) for pq in CHAINS for opt in SGD_LIKE):
    lo, hi = manifest["lrs"][opt]
    d_lo, d_hi = (float(np.median(drift.loc[(pq[0], pq[1], opt, lr)])) for lr in (lo, hi))
    l_lo, l_hi = (float(np.median(late.loc[(pq[0], pq[1], opt, lr)])) for lr in (lo, hi))
    early_exp[(pq, opt)] = np.log(d_hi / d_lo) / np.log(hi / lo)
    late_exp[(pq, opt)] = np.log(l_hi / l_lo) / np.log(hi / lo)
    print(f"p={pq[0]:g}, q={pq[1]:g}, {opt:>8}: early median |E({drift_steps}) - E(0)| {d_lo:.1e} at lr {lo:g}, "
          f"{d_hi:.1e} at lr {hi:g}, exponent {early_exp[(pq, opt)]:.2f}; late {l_lo:.1e}, {l_hi:.1e}, "
          f"exponent {late_exp[(pq, opt)]:.2f}")

# %% tags=["hide-input"]
for (pq, opt), k in late_exp.items():
    verified.record(f"{opt}, p={pq[0]:g}, q={pq[1]:g}: the late drift of E is second order in the step",
                    sgd_exponent[0] <= k <= sgd_exponent[1],
                    check=f"median |E({HORIZON}) - E({late_start})| over the seeds at the two learning rates",
                    measured=f"exponent {k:.2f}", tolerance=f"in [{sgd_exponent[0]:g}, {sgd_exponent[1]:g}]",
                    kind="stored data")
glue("tp_late_exponents", ", ".join(f"{opt} {min(late_exp[(pq, opt)] for pq in CHAINS):.2f} to "
                                    f"{max(late_exp[(pq, opt)] for pq in CHAINS):.2f}" for opt in SGD_LIKE))
glue("tp_exponents", " and ".join(
    f"{opt} {min(early_exp[(pq, opt)] for pq in CHAINS):.2f} to {max(early_exp[(pq, opt)] for pq in CHAINS):.2f}"
    for opt in SGD_LIKE))

# %% [markdown]
# For Adam the sign of $w$ and the size of its moves tell more than $E$: in the early window, how often $w$ changes
# sign, the factor by which $|w|$ grows, and the displacement $|w(t) - w(0)|$ against SGD's.

# %%
early = curves[curves.step <= drift_steps]
crossed = early.groupby(KEY).w.apply(lambda w: bool((np.sign(w.to_numpy()) != np.sign(w.iloc[0])).any()))
moved = (window.w - w0[window.index]).abs()
growth = (window.w.abs() / w0[window.index].abs())
n_cross = {fam: (int(crossed[crossed.index.get_level_values("optimizer").isin(opts)].sum()),
                 int(crossed.index.get_level_values("optimizer").isin(opts).sum()))
           for fam, opts in (("sgd", SGD_LIKE), ("adam", ADAM_LIKE))}
for key in ((pq[0], pq[1], opt, lr) for pq in CHAINS for opt in ADAM_LIKE for lr in manifest["lrs"][opt]):
    print(f"p={key[0]:g}, q={key[1]:g}, {key[2]:>5} lr {key[3]:g}: by step {drift_steps} w changed sign in "
          f"{formatting.fraction(int(crossed.loc[key].sum()), len(crossed.loc[key]))} runs; median |w(t)| / |w(0)| "
          f"{float(np.median(growth.loc[key])):.3g}")
ratios = [float(np.median(moved.loc[(pq[0], pq[1], "adam", manifest["lrs"]["adam"][0])]))
          / float(np.median(moved.loc[(pq[0], pq[1], "sgd", manifest["lrs"]["sgd"][1])])) for pq in CHAINS]
print(f"w changed sign by step {drift_steps}: SGD and momentum {formatting.fraction(*n_cross['sgd'])} runs, Adam and "
      f"AdamW {formatting.fraction(*n_cross['adam'])}")

# %% tags=["hide-input"]
verified.record("Adam moves w more than SGD: its early displacement at the smaller lr over SGD's at the larger",
                min(ratios) > drift_factor, check=f"median |w({drift_steps}) - w(0)| over the seeds, both chains",
                measured=f"smallest ratio {min(ratios):.3g}", tolerance=f"> {drift_factor:g}", kind="stored data")
sgd_all = curves[curves.optimizer.isin(SGD_LIKE)]
keeps = sgd_all.groupby(KEY).w.apply(lambda w: bool((np.sign(w.to_numpy()) == np.sign(w.iloc[0])).all()))
verified.record_count("SGD and momentum: w keeps its sign to the horizon (the invariant line w = 0 is not crossed)",
                      int(keeps.sum()), len(keeps), rate=rate, unit="runs", kind="stored data",
                      check="sign of the projection's w at every evaluation, every SGD and momentum run")
adam_growth = growth[growth.index.get_level_values("optimizer").isin(ADAM_LIKE)]
glue("tp_drift_factor", f"at least {min(ratios):.2g}")
glue("tp_sgd_cross", f"{formatting.fraction(int(keeps.sum()), len(keeps))} runs keep its sign to the horizon")
glue("tp_adam_cross", f"{formatting.fraction(*n_cross['adam'])}")
glue("tp_adam_growth", f"{float(np.median(adam_growth)):.2g}")

# %% [markdown]
# How long would SGD need? The runs with $w_0 < 0$ climb towards $E_{sad}$ at their late rate; extrapolated linearly,
# which is an assumption the stored horizon cannot test:

# %%
neg = [k for k in late.index if k[2] in SGD_LIKE and w0[k] < 0]
rate_late = (end_e[neg] - late_e[neg]) / (HORIZON - late_start)
need = (SADDLE_ENERGY - end_e[neg]) / rate_late.where(rate_late > 0)
n_rise = int((rate_late > 0).sum())
print(f"SGD and momentum, w0 < 0: E rises in {formatting.fraction(n_rise, len(neg))} runs; at its late "
      f"rate the nearest would reach E_sad after {need.min():.1e} more steps ({need.min() / HORIZON:.0f} horizons)")
glue("tp_need", f"{need.min() / HORIZON:.0f}")
glue("tp_sgd_rise", f"in {formatting.fraction(n_rise, len(neg))}")

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
assert PREFIX.config.nunique() == 2 and PREFIX.step.max() >= SLICE_PREFIX and len(PREFIX.groupby(KEY)) == n_runs, \
    "slice_prefix.csv must cover every stored run in both CI configurations: re-run tools/run_slice_prefix.py escape"
seed_reach = int(REACH.xs(slice_seed, level="seed").min())
print(f"measured prefix (differences within {SLICE_LEVEL:g}): at least {int(REACH.min())} steps in every stored run, "
      f"{seed_reach} for seed {slice_seed}; beyond it the Adam runs of the second configuration drift apart")

# %%
live_rows, worst = 0, 0.0
cols = ["coefficient_ratio", "eval_loss", "e", "w", "energy"]
threads = torch.get_num_threads()
try:
    for pq, opt, lr in arms:
        live = pd.DataFrame(train_with_energy(escape_config(pq[0], pq[1], opt, lr, slice_seed, slice_steps)))
        ref = curves[(curves.p == pq[0]) & (curves.q == pq[1]) & (curves.optimizer == opt) & (curves.lr == lr)
                     & (curves.seed == slice_seed) & (curves.step <= slice_steps)]
        worst = max(worst, float(np.abs(live[cols].to_numpy() - ref[cols].to_numpy()).max()))
        live_rows += len(live)
finally:
    torch.set_num_threads(threads)
slice_tol = 10 * SLICE_LEVEL  # a margin of 10 over the level that defines the measured prefix
print(f"{live_rows} evaluations re-executed: largest difference {formatting.bound(worst, SLICE_LEVEL)}; "
      f"tolerance {slice_tol:g}")

# %% tags=["hide-input"]
verified.record("the stored runs re-execute: 16 runs, every evaluation up to slice_steps", worst < slice_tol,
                check=f"live train_with_energy against the stored curves (c-hat/c*, loss, e, w, E), seed {slice_seed}",
                measured=formatting.bound(worst, SLICE_LEVEL), tolerance=f"{slice_tol:g}", kind="stored data")

# %% tags=["hide-input"]
_ = record_results({
    "sgd_runs_on_plateau": k_sgd / n_sgd,
    "adam_runs_escaped": k_adam / n_adam,
    **{f"median_escape/{opt}_{lr:g}_{pq[0]:g}_{pq[1]:g}": median_time(km[(pq, opt, lr)]) for pq, opt, lr in adam_arms},
    "basin_entry_fraction": k_entry / max(len(esc_idx), 1),
    **{f"late_drift_exponent/{opt}_{pq[0]:g}_{pq[1]:g}": float(v) for (pq, opt), v in late_exp.items()},
    "adam_sign_crossings": n_cross["adam"][0] / n_cross["adam"][1],
    "slice_max_difference": worst,
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
